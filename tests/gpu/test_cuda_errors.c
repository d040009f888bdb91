/* Bad input to the CUDA backend gets a clear error from the API, never a
 * crash or a silent wrong result (issue 5's list), on a real GPU:
 * out-of-range shape, unset address, a host pointer where device memory is
 * needed, a buffer too small (by the size given, and by the allocation the
 * pointer lies in), an engine built for a newer GPU (sm_100 cubin and PTX),
 * an engine built without GPU code, a corrupted engine file. Then the same
 * context still runs correctly after all the refusals. Bad data a kernel
 * finds (a gather index out of range, an integer division by zero, the two
 * kernels in two modules) is reported naming the node.
 * Without a GPU it checks the one-line refusal of the CUDA backend and exits
 * 0, so it also runs in CI. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/cuda/cuda_backend.h"
#include "symc/symrt.h"
#include "tests/check.h"

/* y = relu(x * 2 + 1), x: f32[B, 8], B in [1, 16] opt 4 */
static uint8_t *build(const char *arch, int gpu, size_t *size) {
    symc_error err;
    symc_module *m = symc_module_create("small", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 16, 1, &B, &err);
    symc_tensor x, two, one, a, b, y;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 8)}, &x, &err);
    float v2 = 2, v1 = 1;
    symc_add_constant(m, "two", SYMC_F32, 0, NULL, &v2, sizeof v2, &two, &err);
    symc_add_constant(m, "one", SYMC_F32, 0, NULL, &v1, sizeof v1, &one, &err);
    symc_add_node(m, "mul", "a", (symc_tensor[]){x, two}, 2, NULL, 0, &a, 1, &err);
    symc_add_node(m, "add", "b", (symc_tensor[]){a, one}, 2, NULL, 0, &b, 1, &err);
    symc_add_node(m, "relu", "y", &b, 1, NULL, 0, &y, 1, &err);
    symc_mark_output(m, y, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.arch = arch;
    o.gpu = gpu;
    uint8_t *bytes = NULL;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    return bytes;
}

/* g = gather(table, idx) along axis 0; q = a / b on i64: bad data only shows
 * at run time (an index outside [-4, 4), a zero divisor) */
static uint8_t *build_bad_data(size_t *size) {
    symc_error err;
    symc_module *m = symc_module_create("bad_data", &err);
    symc_dim N;
    symc_declare_symbol(m, "N", 1, 4, 16, 1, &N, &err);
    float table_v[4 * 3];
    for (int i = 0; i < 12; i++) table_v[i] = (float)i;
    symc_tensor table, idx, g, a, b, q;
    symc_add_constant(m, "table", SYMC_F32, 2, (int64_t[]){4, 3}, table_v, sizeof table_v, &table, &err);
    symc_add_input(m, "idx", SYMC_I64, 1, &N, &idx, &err);
    symc_add_input(m, "a", SYMC_I64, 1, &N, &a, &err);
    symc_add_input(m, "b", SYMC_I64, 1, &N, &b, &err);
    symc_attr ax = symc_attr_int("axis", 0);
    symc_add_node(m, "gather", "g", (symc_tensor[]){table, idx}, 2, &ax, 1, &g, 1, &err);
    symc_add_node(m, "div", "q", (symc_tensor[]){a, b}, 2, NULL, 0, &q, 1, &err);
    symc_mark_output(m, g, &err);
    symc_mark_output(m, q, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    /* two modules: the division's kernel reports through module 0's error word (sc_error_at) */
    cg_options o = cg_default_options();
    o.nvrtc_modules = 2;
    cg_build_stats stats = {0};
    o.stats = &stats;
    uint8_t *bytes = NULL;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, size, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(stats.modules == 2 && stats.kernels == 2, "%u modules, %u kernels", stats.modules, stats.kernels);
    symc_module_destroy(m);
    return bytes;
}

/* Runs bad_data with the given indices and divisors; returns the status of
 * symrt_context_check after the run. */
static symc_status run_bad_data(const rt_cuda_driver_api *drv, symrt_context *c, const int64_t *idx, const int64_t *b,
                                int check, symc_error *err) {
    int64_t a[4] = {7, -7, 9, 12};
    uint64_t d_idx, d_a, d_b, d_g, d_q;
    drv->mem_alloc(&d_idx, 32), drv->mem_alloc(&d_a, 32), drv->mem_alloc(&d_b, 32);
    drv->mem_alloc(&d_g, 4 * 3 * 4), drv->mem_alloc(&d_q, 32);
    drv->memcpy_htod(d_idx, idx, 32), drv->memcpy_htod(d_a, a, 32), drv->memcpy_htod(d_b, b, 32);
    symc_status st = SYMC_OK;
    const char *names[5] = {"idx", "a", "b", "g", "q"};
    uint64_t ptrs[5] = {d_idx, d_a, d_b, d_g, d_q};
    size_t sizes[5] = {32, 32, 32, 48, 32};
    for (int i = 0; i < 3 && !st; i++) st = symrt_set_input_shape(c, names[i], (int64_t[]){4}, 1, err);
    for (int i = 0; i < 5 && !st; i++)
        st = symrt_set_tensor_address(c, names[i], (void *)(uintptr_t)ptrs[i], sizes[i], err);
    if (!st) st = symrt_enqueue(c, NULL, err);
    if (!st && check) st = symrt_context_check(c, err);
    drv->ctx_synchronize();
    for (int i = 0; i < 5; i++) drv->mem_free(ptrs[i]);
    return st;
}

int main(void) {
    symc_error err;
    size_t size;
    uint8_t *bytes = build(NULL, 1, &size);
    symrt_engine *e;
    CHECK_MSG(symrt_engine_load(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    uint32_t sm;
    if (rt_cuda_device_sm(&sm, &err) != SYMC_OK) {
        /* no GPU: the CUDA backend refuses in one line */
        symrt_context *c = NULL;
        CHECK(symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &c, &err) != SYMC_OK && c == NULL);
        CHECK(strchr(err.msg, '\n') == NULL && strlen(err.msg) > 10);
        printf("no GPU: CUDA backend refused with: %s\n", err.msg);
        symrt_engine_destroy(e);
        free(bytes);
        return check_report("test_cuda_errors");
    }
    const rt_cuda_driver_api *drv = rt_cuda_driver(&err);
    CHECK_MSG(drv != NULL, "%s", err.msg);
    printf("GPU: %s (sm_%u)\n", drv->device_name, drv->sm);
    symrt_context *c;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &c, &err) == SYMC_OK, "%s", err.msg);

    /* out-of-range shape */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){17, 8}, 2, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "symbol B must be in [1, 16]");
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){5, 9}, 2, &err) != SYMC_OK ||
          symrt_enqueue(c, NULL, &err) != SYMC_OK);
    /* unset addresses */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){5, 8}, 2, &err) == SYMC_OK);
    CHECK(symrt_enqueue(c, NULL, &err) != SYMC_OK);
    CHECK_CONTAINS(err.msg, "has no address");

    size_t n = 5 * 8, bytes_needed = n * sizeof(float);
    uint64_t dx, dy, dsmall;
    CHECK(drv->mem_alloc(&dx, bytes_needed) == 0);
    CHECK(drv->mem_alloc(&dy, bytes_needed) == 0);
    CHECK(drv->mem_alloc(&dsmall, 16) == 0);
    float host_x[40], host_y[40];
    for (size_t i = 0; i < n; i++) host_x[i] = (float)i / 7.0f - 2.0f;
    CHECK(drv->memcpy_htod(dx, host_x, bytes_needed) == 0);

    /* a host pointer where device memory is needed */
    CHECK(symrt_set_tensor_address(c, "x", host_x, bytes_needed, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "y", (void *)(uintptr_t)dy, bytes_needed, &err) == SYMC_OK);
    CHECK(symrt_enqueue(c, NULL, &err) != SYMC_OK);
    printf("host pointer: %s\n", err.msg);
    CHECK_CONTAINS(err.msg, "'x'");
    /* too small by the size given */
    CHECK(symrt_set_tensor_address(c, "x", (void *)(uintptr_t)dx, bytes_needed - 4, &err) == SYMC_OK);
    CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "the tensor needs 160");
    /* too small by the allocation the pointer lies in (the size given lies) */
    CHECK(symrt_set_tensor_address(c, "x", (void *)(uintptr_t)dx, bytes_needed, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "y", (void *)(uintptr_t)dsmall, bytes_needed, &err) == SYMC_OK);
    CHECK(symrt_enqueue(c, NULL, &err) != SYMC_OK);
    printf("small allocation: %s\n", err.msg);
    CHECK_CONTAINS(err.msg, "'y'");

    /* after every refusal the context still runs correctly */
    CHECK(drv->memset_d8(dy, 0xff, bytes_needed) == 0);
    CHECK(symrt_set_tensor_address(c, "y", (void *)(uintptr_t)dy, bytes_needed, &err) == SYMC_OK);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK(drv->ctx_synchronize() == 0);
    CHECK(drv->memcpy_dtoh(host_y, dy, bytes_needed) == 0);
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        float want = host_x[i] * 2 + 1;
        want = want > 0 ? want : 0;
        if (!(fabsf(host_y[i] - want) <= 1e-6f * fabsf(want))) wrong++;
    }
    CHECK_MSG(wrong == 0, "%d wrong elements after the refusals", wrong);
    symrt_context_destroy(c);

    /* bad data found by kernels: reported by symrt_context_check, naming the node */
    size_t bd_size;
    uint8_t *bd_bytes = build_bad_data(&bd_size);
    symrt_engine *bd;
    CHECK_MSG(symrt_engine_load(bd_bytes, bd_size, &bd, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_context_create(bd, SYMRT_BACKEND_CUDA, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    int64_t good_idx[4] = {0, 3, -1, -4}, good_b[4] = {2, 3, -4, 5}, bad_idx[4] = {0, 4, 1, 2},
            zero_b[4] = {2, 0, 1, 1};
    CHECK_MSG(run_bad_data(drv, c, good_idx, good_b, 1, &err) == SYMC_OK, "%s", err.msg);
    CHECK(run_bad_data(drv, c, bad_idx, good_b, 1, &err) == SYMC_ERR_RANGE);
    printf("gather index 4 of 4: %s\n", err.msg);
    CHECK_CONTAINS(err.msg, "node 'g'");
    CHECK_CONTAINS(err.msg, "outside the range");
    CHECK_MSG(run_bad_data(drv, c, good_idx, good_b, 1, &err) == SYMC_OK, "the flag must clear: %s", err.msg);
    CHECK(run_bad_data(drv, c, good_idx, zero_b, 1, &err) == SYMC_ERR_RANGE);
    printf("integer division by zero: %s\n", err.msg);
    CHECK_CONTAINS(err.msg, "node 'q'");
    CHECK_CONTAINS(err.msg, "divided by zero");
    /* without an explicit check, the next enqueue reports it */
    CHECK_MSG(run_bad_data(drv, c, bad_idx, good_b, 0, &err) == SYMC_OK, "%s", err.msg);
    CHECK(run_bad_data(drv, c, good_idx, good_b, 0, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "node 'g'");
    CHECK_MSG(run_bad_data(drv, c, good_idx, good_b, 1, &err) == SYMC_OK, "%s", err.msg);
    symrt_context_destroy(c);
    symrt_engine_destroy(bd);
    free(bd_bytes);

    /* an engine for a newer GPU than this one */
    size_t size100;
    uint8_t *bytes100 = build("sm_100", 1, &size100);
    symrt_engine *e100;
    if (bytes100 && sm < 100) {
        CHECK_MSG(symrt_engine_load(bytes100, size100, &e100, &err) == SYMC_OK, "%s", err.msg);
        CHECK(symrt_context_create(e100, SYMRT_BACKEND_CUDA, NULL, &c, &err) != SYMC_OK);
        printf("sm_100 engine: %s\n", err.msg);
        CHECK_CONTAINS(err.msg, "sm_100");
        symrt_engine_destroy(e100);
    }
    free(bytes100);
    /* an engine without GPU code */
    size_t size_ref;
    uint8_t *bytes_ref = build(NULL, 0, &size_ref);
    symrt_engine *eref;
    CHECK(symrt_engine_load(bytes_ref, size_ref, &eref, &err) == SYMC_OK);
    CHECK(symrt_context_create(eref, SYMRT_BACKEND_CUDA, NULL, &c, &err) != SYMC_OK);
    printf("reference-only engine: %s\n", err.msg);
    symrt_engine_destroy(eref);
    free(bytes_ref);
    /* a corrupted engine */
    bytes[size / 3] ^= 0x40;
    symrt_engine *bad;
    CHECK(symrt_engine_load(bytes, size, &bad, &err) == SYMC_ERR_FORMAT);
    CHECK_CONTAINS(err.msg, "corrupt");

    drv->mem_free(dx);
    drv->mem_free(dy);
    drv->mem_free(dsmall);
    symrt_engine_destroy(e);
    free(bytes);
    return check_report("test_cuda_errors");
}
