/* An engine with regions on the CUDA backend (docs/PLAN-regions.md, stage 3
 * and the GPU risks of its section 6), against the reference backend on the
 * same engine: a 2-region engine assembled in memory from two GPU builds
 * (region 0: x [1, S, D], y = softmax(x @ w); region 1: x [B, S, D],
 * y = softmax(x @ w + b); the matmul a GEMM step, its result an
 * intermediate in the workspace), sharing the root's constants.
 *  - device memory taken by a context of both regions exceeds that of a
 *    context of region 1's graph alone by less than half of w: the weights
 *    are on the device once (cuMemGetInfo deltas);
 *  - region 0/1/0/1... under CUDA graphs matches the reference, and after
 *    warm-up the runs replay;
 *  - region 1 at its largest shape grows the shared workspace: region 0's
 *    next run at its captured shape does not replay the stale graph (a plain
 *    run, right results), then replays again.
 * Without a GPU it prints so and passes (label gpu: run with ctest -L gpu). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "symshape/sym.h"
#include "tests/check.h"
#include "tests/runtime/regions_two.h"

enum { D = 1024, MAXB = 4, MAXS = 8, N = MAXB * MAXS * D };

static float W[D * D], BIAS[D];

static rt_engine *compile_graph(int region1) {
    symc_error err;
    symc_module *m = symc_module_create("regions", &err);
    symc_dim B = symc_dim_const(m, 1), S;
    if (region1) symc_declare_symbol(m, "B", 2, 2, MAXB, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 4, region1 ? MAXS : 6, 1, &S, &err);
    symc_tensor x, wt, bt, mm, h, y;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, D)}, &x, &err);
    symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){D, D}, W, sizeof W, &wt, &err);
    symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, wt}, 2, NULL, 0, &mm, 1, &err);
    h = mm;
    if (region1) {
        symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){D}, BIAS, sizeof BIAS, &bt, &err);
        symc_add_node(m, "add", "h", (symc_tensor[]){mm, bt}, 2, NULL, 0, &h, 1, &err);
    }
    symc_attr axis = symc_attr_int("axis", -1);
    symc_add_node(m, "softmax", "y", &h, 1, &axis, 1, &y, 1, &err);
    symc_mark_output(m, y, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.gpu = 1;
    o.precision = SYMC_PRECISION_FP32;
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    rt_engine *e = NULL;
    CHECK_MSG(bytes && rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    free(bytes);
    return e;
}

/* The 2-region engine (regions_two.h), as tests/runtime/test_regions.c's. */
typedef rt_test_two fixture;

static int make_fixture(fixture *f) {
    for (int i = 0; i < D * D; i++) W[i] = (float)((i * 37) % 23 - 11) / 1024.0f;
    for (int i = 0; i < D; i++) BIAS[i] = (float)(i % 3) - 1.0f;
    if (!rt_test_two_assemble(f, compile_graph(0), compile_graph(1), MAXB, MAXS)) return 0;
    CHECK(f->g[0]->n_constants >= 1 && f->g[1]->n_constants >= f->g[0]->n_constants);
    for (uint32_t k = 0; k < f->g[0]->n_constants; k++) /* region 0's constants are region 1's first ones */
        if (f->g[0]->constants[k].size != f->g[1]->constants[k].size ||
            memcmp(f->g[0]->constants[k].data, f->g[1]->constants[k].data, f->g[0]->constants[k].size))
            return 0;
    return 1;
}

static float X[N], Y[N], R[N];

/* One run on the GPU context and on the reference one at (b, s); 1 when they agree. */
static int run_both(const rt_cuda_driver_api *drv, symrt_context *gpu, symrt_context *ref, uint64_t dx, uint64_t dy,
                    int64_t b, int64_t s) {
    symc_error err;
    size_t bytes = (size_t)(b * s * D) * sizeof(float);
    int64_t dims[3] = {b, s, D};
    int ok = 1;
    ok &= symrt_set_input_shape(gpu, "x", dims, 3, &err) == SYMC_OK;
    ok &= symrt_set_tensor_address(gpu, "x", (void *)(uintptr_t)dx, bytes, &err) == SYMC_OK;
    ok &= symrt_set_tensor_address(gpu, "y", (void *)(uintptr_t)dy, bytes, &err) == SYMC_OK;
    CHECK_MSG(ok && symrt_enqueue(gpu, NULL, &err) == SYMC_OK, "B=%lld S=%lld: %s", (long long)b, (long long)s,
              err.msg);
    CHECK(drv->ctx_synchronize() == 0 && drv->memcpy_dtoh(Y, dy, bytes) == 0);
    CHECK_MSG(symrt_context_check(gpu, &err) == SYMC_OK, "%s", err.msg);
    ok &= symrt_set_input_shape(ref, "x", dims, 3, &err) == SYMC_OK;
    ok &= symrt_set_tensor_address(ref, "x", X, bytes, &err) == SYMC_OK;
    ok &= symrt_set_tensor_address(ref, "y", R, bytes, &err) == SYMC_OK;
    CHECK_MSG(ok && symrt_enqueue(ref, NULL, &err) == SYMC_OK, "%s", err.msg);
    float worst = 0;
    for (size_t i = 0; i < bytes / sizeof(float); i++) worst = fmaxf(worst, fabsf(Y[i] - R[i]));
    CHECK_MSG(worst < 1e-4f, "B=%lld S=%lld: GPU and reference differ by %g", (long long)b, (long long)s,
              (double)worst);
    return worst < 1e-4f;
}

static size_t free_bytes(const rt_cuda_driver_api *drv) {
    size_t f = 0, t = 0;
    drv->ctx_synchronize();
    drv->mem_get_info(&f, &t);
    return f;
}

int main(void) {
    symc_error err;
    fixture f;
    if (!make_fixture(&f)) {
        CHECK_MSG(0, "the fixture could not be made");
        return check_report("gpu.cuda_regions");
    }
    uint32_t sm;
    if (rt_cuda_device_sm(&sm, &err) != SYMC_OK) { /* the GPU builds still assemble into an engine the reference runs */
        printf("no GPU (%s): only the fixture checked\n", err.msg);
        symrt_engine *h = NULL;
        symrt_context *ref = NULL;
        CHECK(rt_engine_handle(&f.root, &h, &err) == SYMC_OK);
        CHECK_MSG(symrt_context_create(h, SYMRT_BACKEND_REF, NULL, &ref, &err) == SYMC_OK, "%s", err.msg);
        for (int64_t b = 1; ref && b <= 2; b++) {
            CHECK(symrt_set_input_shape(ref, "x", (int64_t[]){b, 3, D}, 3, &err) == SYMC_OK);
            CHECK(symrt_set_tensor_address(ref, "x", X, sizeof X, &err) == SYMC_OK);
            CHECK(symrt_set_tensor_address(ref, "y", R, sizeof R, &err) == SYMC_OK);
            CHECK_MSG(symrt_enqueue(ref, NULL, &err) == SYMC_OK, "%s", err.msg);
        }
        symrt_context_destroy(ref);
        symrt_engine_destroy(h);
        rt_test_two_free(&f);
        return check_report("gpu.cuda_regions");
    }
    const rt_cuda_driver_api *drv = rt_cuda_driver(&err);
    CHECK_MSG(drv != NULL, "%s", err.msg);
    if (!drv) return check_report("gpu.cuda_regions");
    symrt_engine *h = NULL, *h1 = NULL;
    CHECK_MSG(rt_engine_handle(&f.root, &h, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(rt_engine_handle(f.g[1], &h1, &err) == SYMC_OK, "%s", err.msg);

    /* memory: both regions' context vs region 1's graph alone */
    size_t w_bytes = sizeof W;
    symrt_context *one = NULL, *gpu = NULL, *ref = NULL;
    size_t f0 = free_bytes(drv);
    CHECK_MSG(symrt_context_create(h1, SYMRT_BACKEND_CUDA, NULL, &one, &err) == SYMC_OK, "%s", err.msg);
    size_t f1 = free_bytes(drv);
    symrt_context_destroy(one);
    size_t f2 = free_bytes(drv);
    CHECK_MSG(symrt_context_create(h, SYMRT_BACKEND_CUDA, NULL, &gpu, &err) == SYMC_OK, "%s", err.msg);
    size_t f3 = free_bytes(drv);
    long long d_one = (long long)f0 - (long long)f1, d_two = (long long)f2 - (long long)f3;
    printf("device memory at create: one graph %lld bytes, two regions %lld bytes, w %zu bytes\n", d_one, d_two,
           w_bytes);
    CHECK_MSG(d_two - d_one < (long long)w_bytes / 2, "two regions take %lld bytes more than one graph (w: %zu)",
              d_two - d_one, w_bytes);
    CHECK_MSG(symrt_context_create(h, SYMRT_BACKEND_REF, NULL, &ref, &err) == SYMC_OK, "%s", err.msg);
    if (!gpu || !ref) return check_report("gpu.cuda_regions");

    for (size_t i = 0; i < N; i++) X[i] = (float)((i * 7919) % 2001) / 500.0f - 2.0f;
    uint64_t dx = 0, dy = 0;
    CHECK(drv->mem_alloc(&dx, sizeof X) == 0 && drv->mem_alloc(&dy, sizeof Y) == 0);
    CHECK(drv->memcpy_htod(dx, X, sizeof X) == 0);

    /* alternating regions under graphs: right every time, replays after warm-up */
    for (int round = 0; round < 4; round++) {
        run_both(drv, gpu, ref, dx, dy, 1, 3);
        run_both(drv, gpu, ref, dx, dy, 2, 4);
    }
    int32_t region = -1;
    CHECK(symrt_context_region(gpu, &region, &err) == SYMC_OK && region == 1);
    symrt_graph_stats s0, s1, s2;
    CHECK(symrt_context_graph_stats(gpu, &s0, &err) == SYMC_OK);
    run_both(drv, gpu, ref, dx, dy, 1, 3);
    run_both(drv, gpu, ref, dx, dy, 2, 4);
    CHECK(symrt_context_graph_stats(gpu, &s1, &err) == SYMC_OK);
    CHECK_MSG(s1.replays == s0.replays + 2 && s1.plain == s0.plain, "replays %llu -> %llu, plain %llu -> %llu",
              (unsigned long long)s0.replays, (unsigned long long)s1.replays, (unsigned long long)s0.plain,
              (unsigned long long)s1.plain);

    /* region 1 at its largest shape grows the shared workspace: region 0 must not replay on the freed one */
    run_both(drv, gpu, ref, dx, dy, MAXB, MAXS);
    CHECK(symrt_context_graph_stats(gpu, &s1, &err) == SYMC_OK);
    run_both(drv, gpu, ref, dx, dy, 1, 3);
    CHECK(symrt_context_graph_stats(gpu, &s2, &err) == SYMC_OK);
    CHECK_MSG(s2.plain == s1.plain + 1 && s2.replays == s1.replays,
              "after the growth: replays %llu -> %llu, plain "
              "%llu -> %llu",
              (unsigned long long)s1.replays, (unsigned long long)s2.replays, (unsigned long long)s1.plain,
              (unsigned long long)s2.plain);
    for (int round = 0; round < 3; round++) run_both(drv, gpu, ref, dx, dy, 1, 3);
    CHECK(symrt_context_graph_stats(gpu, &s1, &err) == SYMC_OK);
    CHECK_MSG(s1.replays >= s2.replays + 2, "region 0 replays again: %llu -> %llu", (unsigned long long)s2.replays,
              (unsigned long long)s1.replays);

    drv->mem_free(dx);
    drv->mem_free(dy);
    symrt_context_destroy(gpu);
    symrt_context_destroy(ref);
    symrt_engine_destroy(h);
    symrt_engine_destroy(h1);
    rt_test_two_free(&f);
    return check_report("gpu.cuda_regions");
}
