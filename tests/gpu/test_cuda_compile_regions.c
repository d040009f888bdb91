/* symc_compile_regions with GPU code and tuning, run on the CUDA backend
 * against the reference backend on the same engine. Two modules over x
 * [B, S, 256]: region 0 with B the constant 1 (y = softmax(x @ w)), region 1
 * with B in [2, 4] (y = softmax(x @ w + b)), the matmul a GEMM step. With a
 * GPU present the build tunes each region's GEMM inside that region's own
 * ranges: every tuned entry's problem size lies inside what the region can
 * see (region 0 never at a batch above 1 x 8 rows, region 1 never below 2 x
 * 1); the weight w is stored once; results at B = 1 and 3 (each S end) agree
 * with the reference within fp32 rounding, and each ran in its region.
 * Without a GPU it only builds (NVRTC) and checks the engine. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/engine.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"

enum { D = 256, MAXB = 4, MAXS = 8 };

static float W[D * D], BIAS[D];

static symc_module *module(int region1) {
    symc_error err;
    symc_module *m = symc_module_create(region1 ? "batched" : "single", &err);
    symc_dim B = symc_dim_const(m, 1), S;
    if (region1) CHECK(symc_declare_symbol(m, "B", 2, 2, MAXB, 1, &B, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "S", 1, 4, MAXS, 1, &S, &err) == SYMC_OK);
    symc_tensor x, wt, bt, mm, h, y;
    CHECK(symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, D)}, &x, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){D, D}, W, sizeof W, &wt, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, wt}, 2, NULL, 0, &mm, 1, &err) == SYMC_OK);
    h = mm;
    if (region1) {
        CHECK(symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){D}, BIAS, sizeof BIAS, &bt, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "add", "h", (symc_tensor[]){mm, bt}, 2, NULL, 0, &h, 1, &err) == SYMC_OK);
    }
    symc_attr axis = symc_attr_int("axis", -1);
    CHECK(symc_add_node(m, "softmax", "y", &h, 1, &axis, 1, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    return m;
}

static rt_engine *decode(const char *path) {
    uint8_t *bytes = NULL;
    size_t size = 0;
    rt_engine *e = NULL;
    symc_error err;
    CHECK_MSG(rt_read_file(path, &bytes, &size, &err) == SYMC_OK && rt_engine_decode(bytes, size, &e, &err) == SYMC_OK,
              "%s", err.msg);
    free(bytes);
    return e;
}

/* every tuned GEMM entry of region r: its rows (at[0] * at[3], m times the batch) within what the region sees */
static void check_tuned(const rt_engine *e, uint32_t r, int64_t min_rows, int64_t max_rows) {
    const rt_engine *g = &e->regions[r].graph;
    uint32_t entries = 0;
    for (uint32_t s = 0; s < g->n_steps; s++) {
        if (g->steps[s].kind != RT_STEP_GEMM) continue;
        for (uint32_t k = 0; k < g->steps[s].n_tuned; k++) {
            const int64_t *at = g->steps[s].tuned[k].at;
            int64_t rows = at[0] * (at[3] > 0 ? at[3] : 1);
            entries++;
            CHECK_MSG(rows >= min_rows && rows <= max_rows,
                      "region %u: a GEMM tuned at m %lld, n %lld, k %lld, batch %lld: %lld rows outside [%lld, %lld]",
                      r, (long long)at[0], (long long)at[1], (long long)at[2], (long long)at[3], (long long)rows,
                      (long long)min_rows, (long long)max_rows);
        }
    }
    CHECK_MSG(entries >= 1, "region %u: no tuned GEMM entry", r);
}

/* y at x of shape [b, s, D] on one backend; *region the region that ran */
static int run(symrt_engine *h, symrt_backend be, int64_t b, int64_t s, float *y, int32_t *region) {
    symc_error err;
    symrt_context *c = NULL;
    size_t n = (size_t)(b * s * D), bytes = n * sizeof(float);
    float *x = malloc(bytes);
    for (size_t i = 0; i < n; i++) x[i] = (float)((int)(i * 13 % 17) - 8) / 8.0f;
    const rt_cuda_driver_api *drv = be == SYMRT_BACKEND_CUDA ? rt_cuda_driver(&err) : NULL;
    uint64_t dx = 0, dy = 0;
    void *px = x, *py = y;
    int ok = symrt_context_create(h, be, NULL, &c, &err) == SYMC_OK && (be != SYMRT_BACKEND_CUDA || drv);
    if (ok && drv) { /* after the context: the driver's allocations need it current */
        ok = drv->mem_alloc(&dx, bytes) == 0 && drv->mem_alloc(&dy, bytes) == 0 && drv->memcpy_htod(dx, x, bytes) == 0;
        px = (void *)(uintptr_t)dx;
        py = (void *)(uintptr_t)dy;
    }
    ok = ok && symrt_set_input_shape(c, "x", (int64_t[]){b, s, D}, 3, &err) == SYMC_OK;
    ok = ok && symrt_set_tensor_address(c, "x", px, bytes, &err) == SYMC_OK;
    ok = ok && symrt_set_tensor_address(c, "y", py, bytes, &err) == SYMC_OK;
    ok = ok && symrt_enqueue(c, NULL, &err) == SYMC_OK && symrt_context_region(c, region, &err) == SYMC_OK;
    if (ok && drv) ok = drv->ctx_synchronize() == 0 && drv->memcpy_dtoh(y, dy, bytes) == 0;
    CHECK_MSG(ok, "B = %lld, S = %lld on %s: %s", (long long)b, (long long)s, be == SYMRT_BACKEND_CUDA ? "CUDA" : "ref",
              err.msg);
    if (drv && dx) drv->mem_free(dx);
    if (drv && dy) drv->mem_free(dy);
    symrt_context_destroy(c);
    free(x);
    return ok;
}

int main(void) {
    for (int i = 0; i < D * D; i++) W[i] = (float)((i * 37) % 23 - 11) / 256.0f;
    for (int i = 0; i < D; i++) BIAS[i] = (float)(i % 3) - 1.0f;
    const char *path = "test_cuda_compile_regions.symx";
    symc_error err;
    symc_compile_options o;
    symc_compile_options_init(&o); /* GPU code, tuning on (it tunes where a GPU is present) */
    symc_module *a = module(0), *b = module(1);
    symc_region r[] = {{a, NULL}, {b, NULL}};
    CHECK_MSG(symc_compile_regions(r, 2, &o, path, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(a);
    symc_module_destroy(b);
    rt_engine *e = decode(path);
    if (!e) return check_report("test_cuda_compile_regions");
    size_t bytes = 0;
    for (uint32_t i = 0; i < e->n_constants; i++) bytes += e->constants[i].size;
    CHECK_MSG(e->n_regions == 2 && bytes < 2 * sizeof W, "%u regions, %zu bytes of constants", e->n_regions, bytes);
    CHECK_MSG(e->n_regions == 2 && !strcmp(e->regions[0].name, "B == 1") && !strcmp(e->regions[1].name, "2 <= B <= 4"),
              "regions '%s', '%s'", e->n_regions ? e->regions[0].name : "", e->n_regions > 1 ? e->regions[1].name : "");
    uint32_t sm = 0;
    if (rt_cuda_device_sm(&sm, &err) != SYMC_OK) {
        printf("no GPU (%s): only the build checked\n", err.msg);
        rt_engine_free(e);
        return check_report("test_cuda_compile_regions");
    }
    if (e->n_regions == 2) {
        check_tuned(e, 0, 1, MAXS);                 /* B == 1: m = S rows */
        check_tuned(e, 1, 2, (int64_t)MAXB * MAXS); /* B in [2, 4]: B * S rows */
    }
    rt_engine_free(e);
    symrt_engine *h = NULL;
    CHECK_MSG(symrt_engine_load_file(path, &h, &err) == SYMC_OK, "%s", err.msg);
    const int64_t pts[][2] = {{1, 1}, {1, MAXS}, {3, 5}, {MAXB, MAXS}, {1, 4}};
    for (size_t k = 0; h && k < sizeof pts / sizeof *pts; k++) {
        size_t n = (size_t)(pts[k][0] * pts[k][1] * D);
        float *g = calloc(n, sizeof *g), *want = calloc(n, sizeof *want);
        int32_t rg = -2, rr = -2;
        if (run(h, SYMRT_BACKEND_CUDA, pts[k][0], pts[k][1], g, &rg) &&
            run(h, SYMRT_BACKEND_REF, pts[k][0], pts[k][1], want, &rr)) {
            double worst = 0;
            for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)g[i] - want[i]));
            CHECK_MSG(worst < 1e-4, "B = %lld, S = %lld: CUDA differs from the reference by %g", (long long)pts[k][0],
                      (long long)pts[k][1], worst);
            CHECK_MSG(rg == rr && rg == (pts[k][0] == 1 ? 0 : 1), "B = %lld ran in region %d (ref %d)",
                      (long long)pts[k][0], (int)rg, (int)rr);
        }
        free(g);
        free(want);
    }
    symrt_engine_destroy(h);
    return check_report("test_cuda_compile_regions");
}
