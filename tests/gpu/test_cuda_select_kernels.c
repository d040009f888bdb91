/* The CUDA kernels of sizes known only after a run (codegen/cuda_emit_select.c)
 * on the GPU against the reference kernels (runtime/ref), element for
 * element, before the engine format carries produced sizes to the GPU.
 *
 * The harness drives the CUDA target itself (emit and NVRTC compile on a
 * cg_build, as tests/codegen/test_cuda_select.c does), loads the cubin, and
 * plays the backend's part: every tensor allocated at the capacity (the
 * produced symbol at its bound), each step launched as the backend launches
 * it (grid = ceil(work / per_block), slot arguments from the builder's
 * expressions), after the producer's last step the count cell read
 * (cg_count_cell) and the slots evaluated again at the real count, then the
 * outputs read at their real shapes and compared with rt_ref_run's. Outputs
 * are poisoned before each run and the same buffers serve runs with
 * different counts (no stale state). The error word must stay clear.
 *
 * Cases: nonzero at 0, 1, 1023, 1024, 1025 and 2^20 + 3 elements, ranks 0
 * to 4, f32 (with NaN and -0.0), f16, bool and i64, with none, one, some
 * and all elements non-zero; nms on random boxes (separated and
 * overlapping, corner and center formats, ties in the scores, the
 * thresholds, max_output_boxes_per_class 0, 1 and many); unique sorted and
 * not on f32 (NaN, -0.0, duplicates) and i64. Without a GPU it says so and
 * passes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/cuda_emit.h"
#include "runtime/cuda/cuda_api.h"
#include "runtime/ref/ref_kernels.h"
#include "symc/symc.h"
#include "tests/check.h"

static char arch[32] = "sm_90";

/* ---- a module compiled for the GPU, run by hand ---------------------------------------- */
typedef struct gm {
    symc_module *mod;
    ir_module *m;
    cg_build x;
    CUmodule cu;
    CUfunction *fns;
    CUdeviceptr *ptr;
    size_t *bytes; /* allocated per tensor */
    int64_t *values, *slots;
    uint32_t producer;
    sym_id u;
    symc_error err; /* the builder's */
} gm;

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}
static float rndf(void) { return (float)(rnd() % 1000000) / 1000000.0f; }

static int gm_open(gm *g, symc_module *mod, const char *producer) {
    memset(g, 0, sizeof *g);
    g->mod = mod;
    g->m = (ir_module *)mod;
    g->x = (cg_build){.m = g->m, .opt = cg_default_options(), .err = &g->err};
    g->x.opt.arch = arch;
    g->x.opt.tune = 0;
    g->x.opt.nvrtc_modules = 1;
    g->x.b = (cg_builder){.m = g->m, .opt = &g->x.opt, .err = &g->err};
    symc_status st = symc_module_infer_shapes(mod, &g->err);
    if (!st) st = cg_target_cuda.emit(&g->x.b);
    if (!st) st = cg_check_dataflow(&g->x.b);
    if (!st) st = cg_target_cuda.compile(&g->x.b);
    if (!st) st = RT_CU(&g->err, ModuleLoadData, (&g->cu, g->x.b.modules[0].cubin));
    CHECK_MSG(!st, "%s: %s", producer, g->err.msg);
    if (st) return 0;
    g->fns = calloc(g->x.b.n_kernels, sizeof *g->fns);
    for (uint32_t k = 0; k < g->x.b.n_kernels; k++)
        CHECK(!RT_CU(&g->err, ModuleGetFunction, (&g->fns[k], g->cu, g->x.b.kernel_names[k])));
    for (g->producer = 0; g->producer < g->m->n_nodes && strcmp(g->m->nodes[g->producer].name, producer);
         g->producer++) {
    }
    unsigned k = 0;
    int d = 0;
    CHECK(ir_produced_dim(g->m->nodes[g->producer].op, &k, &d));
    sym_view v;
    CHECK(sym_expr_view(g->m->syms, g->m->tensors[g->m->nodes[g->producer].out[k]].dims[d], &v) &&
          v.kind == SYM_SYMBOL);
    g->u = (sym_id)v.value;
    g->ptr = calloc(g->m->n_tensors, sizeof *g->ptr);
    g->bytes = calloc(g->m->n_tensors, sizeof *g->bytes);
    g->values = calloc(sym_symbol_count(g->m->syms) + 1, sizeof *g->values);
    g->slots = calloc(g->x.b.n_slots + 1, sizeof *g->slots);
    return 1;
}

static void gm_close(gm *g) {
    for (uint32_t t = 0; g->ptr && t < g->m->n_tensors; t++)
        if (g->ptr[t]) rt_cuda_cu.MemFree(g->ptr[t]);
    if (g->cu) rt_cuda_cu.ModuleUnload(g->cu);
    free(g->fns), free(g->ptr), free(g->bytes), free(g->values), free(g->slots);
    cg_build_release(&g->x);
    symc_module_destroy(g->mod);
}

static int64_t eval(gm *g, sym_expr e) {
    int64_t v = 0;
    symc_error err;
    CHECK_MSG(!sym_eval(g->m->syms, e, g->values, sym_symbol_count(g->m->syms), &v, &err), "%s", err.msg);
    return v;
}

static void eval_slots(gm *g) {
    for (uint32_t s = 0; s < g->x.b.n_slots; s++) g->slots[s] = eval(g, g->x.b.exprs[s]);
}

static int64_t numel(gm *g, uint32_t t) {
    int64_t n = 1;
    for (int d = 0; d < g->m->tensors[t].rank; d++) n *= eval(g, g->m->tensors[t].dims[d]);
    return n;
}

/* binds input k's dims to shape, the produced symbol to its bound, and (re)allocates every tensor */
static void gm_bind(gm *g, const int64_t *const *shapes) {
    for (uint32_t k = 0; k < g->m->n_inputs; k++) {
        const ir_tensor *t = &g->m->tensors[g->m->inputs[k]];
        for (int d = 0; d < t->rank; d++) {
            sym_view v;
            if (sym_expr_view(g->m->syms, t->dims[d], &v) && v.kind == SYM_SYMBOL) g->values[v.value] = shapes[k][d];
        }
    }
    g->values[g->u] = eval(g, sym_symbol_bound(g->m->syms, g->u));
    eval_slots(g);
    for (uint32_t t = 0; t < g->m->n_tensors; t++) {
        size_t b = (size_t)numel(g, t) * symc_dtype_size(g->m->tensors[t].dtype);
        if (b < 8) b = 8;
        if (g->ptr[t] && g->bytes[t] >= b) continue;
        if (g->ptr[t]) rt_cuda_cu.MemFree(g->ptr[t]);
        symc_error err;
        CHECK_MSG(!RT_CU(&err, MemAlloc, (&g->ptr[t], b)), "%s", err.msg);
        g->bytes[t] = b;
    }
}

static void upload(gm *g, uint32_t input, const void *data, size_t bytes) {
    symc_error err;
    if (bytes) CHECK_MSG(!RT_CU(&err, MemcpyHtoD, (g->ptr[g->m->inputs[input]], data, bytes)), "%s", err.msg);
}

/* every step, the count read after the producer's last one; returns the count */
static int64_t gm_run(gm *g) {
    symc_error err;
    const cg_builder *b = &g->x.b;
    for (uint32_t t = 0; t < g->m->n_tensors; t++) { /* poison everything but the inputs */
        int input = 0;
        for (uint32_t k = 0; k < g->m->n_inputs; k++) input |= g->m->inputs[k] == t;
        if (!input) CHECK(!RT_CU(&err, MemsetD8, (g->ptr[t], 0xa5, g->bytes[t])));
    }
    uint32_t last = 0, cell = cg_count_cell(g->m, b->steps, b->n_steps, g->producer);
    CHECK(cell != RT_NONE);
    for (uint32_t i = 0; i < b->n_steps; i++)
        if (b->steps[i].node == g->producer) last = i;
    int64_t count = -1;
    uint64_t argv[CG_KW_MAX_ARGS];
    void *params[CG_KW_MAX_ARGS];
    for (uint32_t i = 0; i < b->n_steps; i++) {
        const rt_step *s = &b->steps[i];
        CHECK_MSG(s->kind == RT_STEP_KERNEL, "step %u is no kernel", i);
        int64_t work = g->slots[s->work];
        if (work > 0) {
            int64_t blocks = (work - 1) / s->per_block + 1;
            if (blocks > 2147483647) blocks = 2147483647;
            for (uint32_t a = 0; a < s->n_args; a++) {
                argv[a] = s->args[a].kind == RT_ARG_TENSOR ? (uint64_t)g->ptr[s->args[a].value]
                                                           : (uint64_t)g->slots[s->args[a].value];
                params[a] = &argv[a];
            }
            CHECK_MSG(
                !RT_CU(&err, LaunchKernel,
                       (g->fns[s->kernel], (unsigned)blocks, 1, 1, s->block, 1, 1, s->shared, NULL, params, NULL)),
                "%s", err.msg);
        }
        if (i == last) {
            CHECK_MSG(!RT_CU(&err, MemcpyDtoH, (&count, g->ptr[cell], 8)), "%s", err.msg);
            g->values[g->u] = count;
            eval_slots(g);
        }
    }
    CHECK_MSG(!RT_CU(&err, CtxSynchronize, ()), "%s", err.msg);
    CUdeviceptr word;
    size_t wb;
    uint32_t flag[2] = {0, 0};
    if (!rt_cuda_cu.ModuleGetGlobal(&word, &wb, g->cu, "sc_error")) {
        CHECK(!RT_CU(&err, MemcpyDtoH, (flag, word, 8)));
        CHECK_MSG(flag[0] == 0, "the kernels reported code %u at node %u", flag[0], flag[1]);
        if (flag[0]) CHECK(!RT_CU(&err, MemsetD8, (word, 0, 8)));
    }
    return count;
}

/* output k (an i64 tensor) at its real shape equals the reference's out */
static void expect_out(gm *g, uint32_t k, const rt_ref_tensor *want, const char *what) {
    uint32_t t = g->m->outputs[k];
    int64_t n = numel(g, t), wn = rt_ref_numel(want);
    CHECK_MSG(n == wn, "%s: output %u has %lld elements, the reference %lld", what, k, (long long)n, (long long)wn);
    if (n != wn) return;
    int64_t *got = malloc((size_t)(n ? n : 1) * 8);
    symc_error err;
    if (n) CHECK(!RT_CU(&err, MemcpyDtoH, (got, g->ptr[t], (size_t)n * 8)));
    const int64_t *w = want->data;
    for (int64_t i = 0; i < n; i++)
        if (got[i] != w[i]) {
            CHECK_MSG(0, "%s: output %u element %lld is %lld, the reference %lld", what, k, (long long)i,
                      (long long)got[i], (long long)w[i]);
            break;
        }
    free(got);
}

static rt_ref_tensor ref_tensor(symc_dtype dt, int32_t rank, const int64_t *dims, void *data) {
    rt_ref_tensor r = {.dtype = dt, .rank = rank, .data = data};
    for (int32_t d = 0; d < rank; d++) r.dims[d] = dims[d];
    return r;
}

/* ---- nonzero ------------------------------------------------------------------------------ */
static symc_module *nonzero_module(symc_dtype dt, int32_t rank) {
    symc_error err;
    symc_module *m = symc_module_create("nz", &err);
    symc_dim d[4];
    for (int32_t i = 0; i < rank; i++) {
        char name[16];
        snprintf(name, sizeof name, "D%d", i);
        symc_declare_symbol(m, name, 0, 4, rank == 1 ? (int64_t)1 << 21 : 2048, 1, &d[i], &err);
    }
    symc_tensor x, y;
    symc_add_input(m, "x", dt, rank, d, &x, &err);
    CHECK_MSG(!symc_add_node(m, "nonzero", "nz", &x, 1, NULL, 0, &y, 1, &err), "%s", err.msg);
    symc_mark_output(m, y, &err);
    return m;
}

/* element i of x in dtype dt: which 0 none, 1 one (the middle), 2 some, 3 all non-zero */
static void fill_nz(void *x, symc_dtype dt, int64_t n, int which) {
    for (int64_t i = 0; i < n; i++) {
        int nz = which == 0 ? 0 : which == 1 ? i == n / 2 : which == 2 ? rnd() % 3 == 0 : 1;
        double v = nz ? (i % 7 == 3 && which == 2 ? NAN : 1.0 + (double)(i % 5)) : (i % 2 ? -0.0 : 0.0);
        switch (dt) {
        case SYMC_F32: ((float *)x)[i] = (float)v; break;
        case SYMC_F16: ((uint16_t *)x)[i] = nz ? 0x3c00 : (i % 2 ? 0x8000 : 0); break;
        case SYMC_BOOL: ((uint8_t *)x)[i] = (uint8_t)nz; break;
        case SYMC_I64: ((int64_t *)x)[i] = nz ? (int64_t)(i % 9) - 100 : 0; break;
        default: break;
        }
    }
}

static void test_nonzero(symc_dtype dt, int32_t rank, const int64_t (*shapes)[4], int n_shapes) {
    gm g;
    if (!gm_open(&g, nonzero_module(dt, rank), "nz")) return;
    for (int s = 0; s < n_shapes; s++)
        for (int which = 0; which < 4; which++) {
            const int64_t *shape = shapes[s];
            int64_t n = 1;
            for (int32_t d = 0; d < rank; d++) n *= shape[d];
            gm_bind(&g, &shape);
            size_t es = symc_dtype_size(dt);
            void *x = calloc((size_t)(n ? n : 1), es);
            fill_nz(x, dt, n, which);
            upload(&g, 0, x, (size_t)n * es);
            int64_t count = gm_run(&g);
            rt_ref_tensor in = ref_tensor(dt, rank, shape, x);
            int64_t od[2] = {rank, n};
            int64_t *want = malloc((size_t)(rank * n + 1) * 8);
            rt_ref_tensor out = ref_tensor(SYMC_I64, 2, od, want);
            symc_error err;
            CHECK_MSG(!rt_ref_run(IR_OP_NONZERO, "nz", NULL, 0, &in, 1, &out, 1, &err), "%s", err.msg);
            char what[128];
            snprintf(what, sizeof what, "nonzero %s rank %d n %lld case %d", symc_dtype_name(dt), rank, (long long)n,
                     which);
            CHECK_MSG(count == out.dims[1], "%s: count %lld, the reference %lld", what, (long long)count,
                      (long long)out.dims[1]);
            expect_out(&g, 0, &out, what);
            free(want);
            free(x);
        }
    gm_close(&g);
}

/* ---- nms ---------------------------------------------------------------------------------- */
static symc_module *nms_module(int center) {
    symc_error err;
    symc_module *m = symc_module_create("nms", &err);
    symc_dim B, C, N;
    symc_declare_symbol(m, "B", 1, 1, 4, 1, &B, &err);
    symc_declare_symbol(m, "C", 1, 2, 8, 1, &C, &err);
    symc_declare_symbol(m, "N", 0, 50, 400, 1, &N, &err);
    symc_dim bd[3] = {B, N, symc_dim_const(m, 4)}, sd[3] = {B, C, N}, one[1] = {symc_dim_const(m, 1)};
    symc_tensor in[5], y;
    symc_add_input(m, "boxes", SYMC_F32, 3, bd, &in[0], &err);
    symc_add_input(m, "scores", SYMC_F32, 3, sd, &in[1], &err);
    symc_add_input(m, "max_out", SYMC_I64, 1, one, &in[2], &err);
    symc_add_input(m, "iou", SYMC_F32, 1, one, &in[3], &err);
    symc_add_input(m, "thr", SYMC_F32, 1, one, &in[4], &err);
    symc_attr a = symc_attr_int("center_point_box", center);
    CHECK_MSG(!symc_add_node(m, "nms", "sel", in, 5, &a, 1, &y, 1, &err), "%s", err.msg);
    symc_mark_output(m, y, &err);
    return m;
}

static void test_nms(int center) {
    gm g;
    if (!gm_open(&g, nms_module(center), "sel")) return;
    static const struct {
        int64_t B, C, N, max_out;
        float iou, thr;
        int spread; /* 1: well separated boxes, 0: overlapping, 2: tied scores */
    } cases[] = {
        {1, 1, 1, 10, 0.5f, 0.0f, 1},   {2, 3, 50, 100, 0.5f, 0.1f, 1}, {2, 3, 50, 100, 0.3f, 0.2f, 0},
        {1, 8, 400, 20, 0.5f, 0.5f, 0}, {4, 2, 100, 1, 0.7f, 0.0f, 0},  {2, 3, 50, 0, 0.5f, 0.0f, 0},
        {2, 3, 50, 100, 0.5f, 2.0f, 0}, {3, 2, 0, 10, 0.5f, 0.0f, 0},   {2, 2, 60, 100, 0.4f, 0.0f, 2},
        {2, 3, 50, 100, 0.0f, 0.0f, 0}, {2, 3, 50, 100, 1.0f, 0.0f, 0}, {2, 5, 200, 1000, 0.5f, 0.05f, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        int64_t B = cases[k].B, C = cases[k].C, N = cases[k].N;
        int64_t bs[3] = {B, N, 4}, ss[3] = {B, C, N}, one[1] = {1};
        const int64_t *shapes[5] = {bs, ss, one, one, one};
        gm_bind(&g, shapes);
        float *boxes = malloc((size_t)(B * N * 4 + 1) * 4), *scores = malloc((size_t)(B * C * N + 1) * 4);
        for (int64_t i = 0; i < B * N; i++) {
            float x0 = cases[k].spread == 1 ? (float)(i % 20) * 10.0f : rndf() * 20.0f;
            float y0 = cases[k].spread == 1 ? (float)(i / 20) * 10.0f : rndf() * 20.0f;
            float w = 1.0f + rndf() * (cases[k].spread == 1 ? 5.0f : 10.0f), h = 1.0f + rndf() * 10.0f;
            float *b = &boxes[i * 4];
            if (center) b[0] = x0 + w / 2, b[1] = y0 + h / 2, b[2] = w, b[3] = h;
            else if (i % 2) b[0] = y0 + h, b[1] = x0 + w, b[2] = y0, b[3] = x0; /* corners either way round */
            else b[0] = y0, b[1] = x0, b[2] = y0 + h, b[3] = x0 + w;
        }
        for (int64_t i = 0; i < B * C * N; i++)
            scores[i] = cases[k].spread == 2 ? (float)(rnd() % 4) / 4.0f : (float)(rnd() % 1000000) / 1e6f;
        upload(&g, 0, boxes, (size_t)(B * N * 4) * 4);
        upload(&g, 1, scores, (size_t)(B * C * N) * 4);
        upload(&g, 2, &cases[k].max_out, 8);
        upload(&g, 3, &cases[k].iou, 4);
        upload(&g, 4, &cases[k].thr, 4);
        int64_t count = gm_run(&g);
        int64_t mo = cases[k].max_out;
        float iou = cases[k].iou, thr = cases[k].thr;
        rt_ref_tensor in[5] = {ref_tensor(SYMC_F32, 3, bs, boxes), ref_tensor(SYMC_F32, 3, ss, scores),
                               ref_tensor(SYMC_I64, 1, one, &mo), ref_tensor(SYMC_F32, 1, one, &iou),
                               ref_tensor(SYMC_F32, 1, one, &thr)};
        int64_t od[2] = {B * C * N, 3};
        int64_t *want = malloc((size_t)(B * C * N * 3 + 1) * 8);
        rt_ref_tensor out = ref_tensor(SYMC_I64, 2, od, want);
        symc_attr a = symc_attr_int("center_point_box", center);
        symc_error err;
        CHECK_MSG(!rt_ref_run(IR_OP_NMS, "sel", &a, 1, in, 5, &out, 1, &err), "%s", err.msg);
        char what[128];
        snprintf(what, sizeof what, "nms center %d case %zu", center, k);
        CHECK_MSG(count == out.dims[0], "%s: count %lld, the reference %lld", what, (long long)count,
                  (long long)out.dims[0]);
        expect_out(&g, 0, &out, what);
        free(want), free(boxes), free(scores);
    }
    gm_close(&g);
}

/* ---- unique ------------------------------------------------------------------------------- */
static void test_unique(symc_dtype dt, int sorted) {
    symc_error err;
    symc_module *m = symc_module_create("uq", &err);
    symc_dim N;
    symc_declare_symbol(m, "N", 0, 100, 5000, 1, &N, &err);
    symc_tensor x, outs[3];
    symc_add_input(m, "x", dt, 1, &N, &x, &err);
    symc_attr a = symc_attr_int("sorted", sorted);
    CHECK_MSG(!symc_add_node(m, "unique", "uq", &x, 1, &a, 1, outs, 3, &err), "%s", err.msg);
    for (int i = 0; i < 3; i++) symc_mark_output(m, outs[i], &err);
    gm g;
    if (!gm_open(&g, m, "uq")) return;
    static const int64_t sizes[] = {0, 1, 7, 100, 3000, 100};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int64_t n = sizes[s], spread = s == 5 ? 1 : s == 3 ? 1000 : 13;
        const int64_t *shape = &n;
        gm_bind(&g, &shape);
        void *xv = calloc((size_t)(n ? n : 1), 8);
        for (int64_t i = 0; i < n; i++) {
            int64_t v = (int64_t)(rnd() % (uint32_t)spread) - spread / 2;
            if (dt == SYMC_F32) ((float *)xv)[i] = i % 11 == 5 ? NAN : v == 0 && i % 2 ? -0.0f : (float)v * 0.5f;
            else ((int64_t *)xv)[i] = v * 1000003;
        }
        upload(&g, 0, xv, (size_t)n * symc_dtype_size(dt));
        int64_t count = gm_run(&g);
        rt_ref_tensor in = ref_tensor(dt, 1, &n, xv);
        int64_t *w[3];
        rt_ref_tensor out[3];
        for (int i = 0; i < 3; i++) {
            w[i] = malloc((size_t)(n + 1) * 8);
            out[i] = ref_tensor(SYMC_I64, 1, &n, w[i]);
        }
        CHECK_MSG(!rt_ref_run(IR_OP_UNIQUE, "uq", &a, 1, &in, 1, out, 3, &err), "%s", err.msg);
        char what[128];
        snprintf(what, sizeof what, "unique %s sorted %d n %lld", symc_dtype_name(dt), sorted, (long long)n);
        CHECK_MSG(count == out[0].dims[0], "%s: count %lld, the reference %lld", what, (long long)count,
                  (long long)out[0].dims[0]);
        for (uint32_t i = 0; i < 3; i++) expect_out(&g, i, &out[i], what);
        for (int i = 0; i < 3; i++) free(w[i]);
        free(xv);
    }
    gm_close(&g);
}

int main(void) {
    symc_error err;
    const rt_cu_device *dev;
    if (rt_cuda_cu_enter(0, &dev, &err)) {
        printf("no GPU (%s): skipped\n", err.msg);
        return 0;
    }
    snprintf(arch, sizeof arch, "sm_%u", dev->sm);
    static const int64_t r0[][4] = {{0}};
    static const int64_t r1[][4] = {{0}, {1}, {1023}, {1024}, {1025}, {(1 << 20) + 3}, {5}};
    static const int64_t r2[][4] = {{2, 1025}, {0, 7}, {33, 31}, {1, 1}};
    static const int64_t r3[][4] = {{3, 5, 7}, {2, 0, 3}, {64, 64, 65}};
    static const int64_t r4[][4] = {{2, 3, 4, 5}, {1, 1, 1, 1}, {3, 7, 11, 13}};
    test_nonzero(SYMC_F32, 0, r0, 1);
    test_nonzero(SYMC_F32, 1, r1, 7);
    test_nonzero(SYMC_F32, 2, r2, 4);
    test_nonzero(SYMC_F32, 3, r3, 3);
    test_nonzero(SYMC_F32, 4, r4, 3);
    test_nonzero(SYMC_F16, 2, r2, 4);
    test_nonzero(SYMC_BOOL, 3, r3, 3);
    test_nonzero(SYMC_I64, 1, r1, 7);
    test_nms(0);
    test_nms(1);
    for (int sorted = 0; sorted < 2; sorted++) {
        test_unique(SYMC_F32, sorted);
        test_unique(SYMC_I64, sorted);
    }
    return check_report("test_cuda_select_kernels");
}
