/* symc inspect for engines (.symx). */
#ifndef SYMC_TOOLS_INSPECT_ENGINE_H
#define SYMC_TOOLS_INSPECT_ENGINE_H
/* Prints the engine at `path`; returns the process exit code. */
int symc_inspect_engine(const char *path, int show_source);
#endif
