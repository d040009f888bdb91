/* For the fold tests (test_fold_scale.c, test_fold_gelu.c): one run of a
 * builder module on the reference backend, to compare a folded module with
 * the unfolded one and a double oracle. The module is built into an engine
 * (no GPU code, no tuning), its input "x" takes the given values stored in
 * the given dtype, and output 0 comes back as doubles. Header-only: its
 * checks count in the including test (tests/check.h's counters are static). */
#ifndef SYMC_TESTS_PASSES_RUN_MODULE_H
#define SYMC_TESTS_PASSES_RUN_MODULE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "tests/check.h"

/* Module m (shapes inferred) on the reference backend with "x" of dims xd (rank of them)
 * holding xv stored as dt; output 0's first values (at most cap) loaded as dt into out.
 * *n_out and *out_dt: output 0's element count and dtype. 1 when every step worked, else 0
 * (a failed check naming the module). */
static int run_module_ref(symc_module *m, const int64_t *xd, int32_t rank, symc_dtype dt, const double *xv, double *out,
                          int64_t cap, int64_t *n_out, symc_dtype *out_dt) {
    symc_error err;
    cg_options o = cg_default_options();
    o.gpu = 0;
    o.tune = 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    symrt_engine *e = NULL;
    symrt_context *c = NULL;
    void *bufs[4] = {NULL, NULL, NULL, NULL};
    int64_t nx = 1, n0 = 0;
    for (int32_t d = 0; d < rank; d++) nx *= xd[d];
    size_t es = symc_dtype_size(dt);
    symc_dtype ot = dt;
    symc_status st = cg_build_engine(m, &o, &bytes, &size, &err);
    if (!st) st = symrt_engine_load(bytes, size, &e, &err);
    free(bytes);
    if (!st) st = symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err);
    if (!st) st = symrt_set_input_shape(c, "x", xd, rank, &err);
    if (!st && !(bufs[0] = malloc((size_t)nx * es))) st = SYMC_ERR_NOMEM;
    for (int64_t i = 0; !st && i < nx; i++) symc_dtype_store(bufs[0], dt, (size_t)i, xv[i]);
    if (!st) st = symrt_set_tensor_address(c, "x", bufs[0], (size_t)nx * es, &err);
    uint32_t no = st ? 0 : symrt_engine_num_outputs(e);
    for (uint32_t i = 0; !st && i < no && i < 3; i++) {
        symrt_io_info info;
        int64_t dims[8];
        int32_t r = 0;
        st = symrt_engine_output(e, i, &info, &err);
        if (!st) st = symrt_get_tensor_shape(c, info.name, dims, &r, &err);
        int64_t n = 1;
        for (int32_t d = 0; d < r; d++) n *= dims[d];
        if (i == 0) n0 = n, ot = info.dtype;
        if (!st && !(bufs[i + 1] = malloc((size_t)n * symc_dtype_size(info.dtype) + 1))) st = SYMC_ERR_NOMEM;
        if (!st)
            st = symrt_set_tensor_address(c, info.name, bufs[i + 1], (size_t)n * symc_dtype_size(info.dtype), &err);
    }
    if (!st) st = symrt_enqueue(c, NULL, &err);
    CHECK_MSG(!st, "%s: %s", m->name, err.msg);
    for (int64_t i = 0; !st && i < n0 && i < cap; i++) out[i] = symc_dtype_load(bufs[1], dt, (size_t)i);
    for (int i = 0; i < 4; i++) free(bufs[i]);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
    *n_out = n0;
    if (out_dt) *out_dt = ot;
    return !st;
}

/* Module m through the passes (up to fuse: cg_build_engine fuses for its target, as the driver's
 * last row), built for sm_90 without tuning and decoded: the engine (rt_engine_free it), or NULL
 * after a failed check naming `what`. The attention tests read its CUDA source. */
static inline rt_engine *build_sm90(symc_module *m, const char *what) {
    symc_error err;
    rt_engine *e = NULL;
    CHECK_MSG(pass_run_passes(m, NULL, NULL, "fuse", &err) == SYMC_OK, "%s: %s", what, err.msg);
    cg_options o = cg_default_options();
    o.arch = "sm_90";
    o.tune = 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, &size, &err) == SYMC_OK, "%s: %s", what, err.msg);
    if (bytes && rt_engine_decode(bytes, size, &e, &err)) e = NULL;
    free(bytes);
    return e;
}

/* A rewritten module mm and the plain one on the reference backend with the same "x" (dims xd,
 * values xv stored as dt): output 0 of each into a and b (at most cap). Checks that both give
 * `want` values and the same bits (a failed check naming xd[0] as B). 1 when both ran, else 0. */
static inline int run_both_ref(symc_module *mm, symc_module *plain, const int64_t *xd, int32_t rank, symc_dtype dt,
                               const double *xv, double *a, double *b, int64_t cap, int64_t want) {
    int64_t na = 0, nb = 0;
    if (!run_module_ref(mm, xd, rank, dt, xv, a, cap, &na, NULL) ||
        !run_module_ref(plain, xd, rank, dt, xv, b, cap, &nb, NULL))
        return 0;
    CHECK_MSG(na == want && nb == na && !memcmp(a, b, (size_t)na * sizeof *a),
              "B=%lld: outputs differ (%lld and %lld values)", (long long)xd[0], (long long)na, (long long)nb);
    return 1;
}

/* The first fused attention's comment line in e's CUDA source (the nodes it covers, by name and
 * op) into line (cap bytes); "" when there is none (or e is NULL) */
static inline void attention_line(const rt_engine *e, char *line, size_t cap) {
    const char *att = e ? strstr(e->cuda_source, "/* fused attention") : NULL;
    const char *eol = att ? strchr(att, '\n') : NULL;
    line[0] = '\0';
    if (att && eol && (size_t)(eol - att) < cap) {
        memcpy(line, att, (size_t)(eol - att));
        line[eol - att] = '\0';
    }
}

#endif
