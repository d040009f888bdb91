/* libFuzzer target: the ONNX importer on arbitrary bytes, with one declared
 * input shape so models with a dynamic dim get past the range check. Any
 * input must give a verified module or an error with a message; a crash,
 * leak or sanitizer report is a bug. Seeds are the generated test models. */
#include <stdint.h>
#include <stdlib.h>

#include "frontend/onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fe_input_shape shapes[1] = {{"x", 3, {1, 196, 768}, {4, 196, 768}, {32, 196, 768}, {0}}};
    symc_error err;
    ir_module *m = NULL;
    if (fe_onnx_import_buffer(data, size, NULL, shapes, 1, &m, &err) == SYMC_OK) {
        if (ir_verify(m, &err) != SYMC_OK) abort();
        ir_module_free(m);
    } else if (m != NULL || err.msg[0] == '\0') {
        abort();
    }
    return 0;
}
