/* Writes the shared 2-region test engine (tests/runtime/regions_fixture.h: conditions B <= 1 and
 * 2 <= B over the small graph of tests/runtime/test_engine.c) to a file, for the tests that need
 * one on disk: the engine fuzzer's seed corpus (tests/fuzz/engine_corpus.sh) and the tools' tests
 * of engines with regions. Usage: regions_engine OUT.symx */
#include <stdio.h>
#include <stdlib.h>

#include "tests/runtime/regions_fixture.h"

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: regions_engine OUT.symx\n");
        return 2;
    }
    rt_test_regions f;
    symc_error err;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (rt_test_regions_make(&f, &err) || rt_engine_encode(&f.root, &bytes, &size, &err)) {
        fprintf(stderr, "regions_engine: %s\n", err.msg);
        rt_test_regions_free(&f);
        return 1;
    }
    rt_test_regions_free(&f);
    FILE *out = fopen(argv[1], "wb");
    int ok = out && fwrite(bytes, 1, size, out) == size;
    if (out && fclose(out)) ok = 0;
    free(bytes);
    if (!ok) {
        fprintf(stderr, "regions_engine: cannot write %s\n", argv[1]);
        return 1;
    }
    return 0;
}
