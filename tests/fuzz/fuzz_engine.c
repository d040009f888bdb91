/* libFuzzer target: the engine (.symx) loader on arbitrary FlatBuffers.
 * The input is the FlatBuffer part of an engine; the harness seals it with a
 * valid checksum trailer (otherwise the checksum would refuse nearly every
 * mutation and the structural checks behind it would go untested). Any input
 * must load or be refused with a message; a loaded engine must then take a
 * reference context and input shapes at the symbols' minimum (or refuse them
 * with a message). The seed corpus is a small attention-block engine with
 * GPU steps (kernels, cuBLASLt calls, cubin and PTX). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "symc/symrt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf = malloc(size + 12);
    if (!buf) return 0;
    memcpy(buf, data, size);
    memcpy(buf + size, "SXCK", 4);
    uint64_t h = rt_engine_checksum(data, size);
    for (int i = 0; i < 8; i++) buf[size + 4 + i] = (uint8_t)(h >> (8 * i));
    symc_error err;
    err.msg[0] = '\0';
    symrt_engine *e = NULL;
    if (symrt_engine_load(buf, size + 12, &e, &err) != SYMC_OK) {
        if (e != NULL || err.msg[0] == '\0') abort();
        free(buf);
        return 0;
    }
    free(buf);
    symrt_context *c = NULL;
    if (symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK) {
        uint32_t ni = symrt_engine_num_inputs(e), ns = symrt_engine_num_symbols(e);
        for (uint32_t i = 0; i < ni; i++) {
            symrt_io_info info;
            if (symrt_engine_input(e, i, &info, &err) != SYMC_OK) abort();
            int64_t dims[16];
            int32_t rank = info.rank > 16 ? 16 : info.rank;
            for (int32_t d = 0; d < rank; d++) dims[d] = 1; /* symbols mostly start at 1 */
            (void)ns;
            if (symrt_set_input_shape(c, info.name, dims, rank, &err) != SYMC_OK && err.msg[0] == '\0') abort();
        }
        uint32_t no = symrt_engine_num_outputs(e);
        for (uint32_t i = 0; i < no; i++) {
            symrt_io_info info;
            if (symrt_engine_output(e, i, &info, &err) != SYMC_OK) abort();
            int64_t dims[16];
            int32_t rank;
            if (symrt_get_tensor_shape(c, info.name, dims, &rank, &err) != SYMC_OK && err.msg[0] == '\0') abort();
        }
        symrt_context_destroy(c);
    } else if (err.msg[0] == '\0') {
        abort();
    }
    symrt_engine_destroy(e);
    return 0;
}
