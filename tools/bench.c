/* symc bench (placeholder until the harness lands). */
#include <stdio.h>

#include "tools/bench.h"

int symc_cmd_bench(int argc, char **argv) {
    (void)argc;
    (void)argv;
    fprintf(stderr, "symc: bench: not built yet\n");
    return 1;
}
