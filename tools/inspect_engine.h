/* symc inspect for engines (.symx). */
#ifndef SYMC_TOOLS_INSPECT_ENGINE_H
#define SYMC_TOOLS_INSPECT_ENGINE_H
/* Prints the engine at `path`; returns the process exit code. flags: SYMC_INSPECT_SOURCE (the
 * generated CUDA C), SYMC_INSPECT_TENSORS (every tensor with its storage type and shape),
 * SYMC_INSPECT_ISLANDS (every fp32 island of a half engine, with its reason). */
#define SYMC_INSPECT_SOURCE 1
#define SYMC_INSPECT_TENSORS 2
#define SYMC_INSPECT_ISLANDS 4 /* every fp32 island of a half engine with its reason */
int symc_inspect_engine(const char *path, int show_source);
#endif
