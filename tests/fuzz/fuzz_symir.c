/* libFuzzer target: the .symir loader on arbitrary bytes. Any input must give
 * either a module that verifies (and re-serializes) or an error with a
 * message; a crash, leak or sanitizer report is a bug. The seed corpus is
 * the example module, so the fuzzer starts from a valid file. */
#include <stdint.h>
#include <stdlib.h>

#include "ir/ir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    symc_error err;
    ir_module *m = NULL;
    if (ir_deserialize(data, size, &m, &err) == SYMC_OK) {
        if (ir_verify(m, &err) != SYMC_OK) abort();
        uint8_t *buf;
        size_t n;
        if (ir_serialize(m, &buf, &n, &err) == SYMC_OK) free(buf);
        free(ir_print_to_string(m));
        ir_module_free(m);
    } else if (m != NULL || err.msg[0] == '\0') {
        abort();
    }
    return 0;
}
