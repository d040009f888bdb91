/* symc inspect for engines (.symx). */
#ifndef SYMC_TOOLS_INSPECT_ENGINE_H
#define SYMC_TOOLS_INSPECT_ENGINE_H
/* Prints the engine at `path`; returns the process exit code. flags: SYMC_INSPECT_SOURCE (the
 * generated CUDA C), SYMC_INSPECT_TENSORS (every tensor with its storage type and shape). */
#define SYMC_INSPECT_SOURCE 1
#define SYMC_INSPECT_TENSORS 2
int symc_inspect_engine(const char *path, int show_source);
#endif
