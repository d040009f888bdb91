/* symc bench: latency and throughput of an engine per input shape. */
#ifndef SYMC_TOOLS_BENCH_H
#define SYMC_TOOLS_BENCH_H
/* argv holds the arguments after "bench"; returns the process exit code. */
int symc_cmd_bench(int argc, char **argv);
#endif
