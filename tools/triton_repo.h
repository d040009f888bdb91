/* symc triton: a Triton Inference Server model-repository entry for an engine (tools/triton_repo.c). */
#ifndef SYMC_TOOLS_TRITON_REPO_H
#define SYMC_TOOLS_TRITON_REPO_H
/* argv holds the arguments after "triton"; returns the process exit code. */
int symc_cmd_triton(int argc, char **argv);
#endif
