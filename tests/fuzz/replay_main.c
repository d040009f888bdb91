/* Runs a libFuzzer target's LLVMFuzzerTestOneInput on each file named on
 * the command line, without libFuzzer: the found crashers in regressions/
 * replay in every build (normal and ASan+UBSan), not only the fuzz build.
 * Exit 0 when every input ran (a crash or sanitizer report ends the run). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fprintf(stderr, "replay: cannot open %s\n", argv[i]);
            return 1;
        }
        uint8_t *buf = NULL;
        size_t n = 0, cap = 0, r;
        do {
            if (n == cap) {
                uint8_t *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
                if (!nb) {
                    fclose(f);
                    free(buf);
                    return 1;
                }
                buf = nb;
            }
            r = fread(buf + n, 1, cap - n, f);
            n += r;
        } while (r);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n);
        free(buf);
        printf("replay: %s (%zu bytes) ok\n", argv[i], n);
    }
    return 0;
}
