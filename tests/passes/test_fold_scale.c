/* Folding a per-column scale after a matmul into its constants (passes/fold.c,
 * pass_fold_scale), ConvNeXt's layer scale:
 *   y = x + g * (x @ W + b)      x [B, 2, 3, 8] (or [B, 8]), W [8, 8]
 * built with random constants in f32 and f16 (some in bf16 and f64 too), in
 * every operand order, without the bias, with a scalar g, a [1,1,1,N] bias,
 * and as a gemm (trans_b, C [1, N]).
 * After the pipeline (up to its dead-node pass), a fold leaves the mul an identity, the residual add
 * reading the bias add, and W, b scaled (checked against W * g evaluated here
 * in double, within one rounding of the dtype). The cases it must refuse
 * leave the mul and the constants' bytes as they were: g varying along a
 * non-last axis, W read by another node, g of rank 4 on a rank-2 product (it
 * broadcasts the rank up), an f16 product over 65504, a column of W * g all
 * below f16's smallest normal, i32 tensors.
 * Every case then runs on the reference backend at B = 1, 3 and 8 as built
 * by the pipeline and as built with shape inference only (unfolded), and both
 * are compared with y evaluated here in double from the constants' values
 * (f32, f64, i32: 1e-5 relative, f16: 1e-2, bf16: 2e-2).
 * Last, with the CUDA target's fuse rules (NVRTC, no GPU needed) the folded
 * block plans as one library call: the matmul with its bias and the residual
 * add as C (IR_FUSE_RESIDUAL), the engine's gemm step reading c = x; without
 * the fold (g varying along an axis) the residual add is not the GEMM's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "tests/check.h"
#include "tests/passes/run_module.h"
#include "tests/test_node.h"

#define K 8
#define N 8
#define BMAX 8

typedef enum variant {
    FOLD,          /* add(matmul(x, W), b), mul(., g [1,1,1,N]) */
    FOLD_SWAPPED,  /* add(b, matmul), mul(g [N], .) */
    FOLD_NOBIAS,   /* mul(matmul(x, W), g) */
    FOLD_SCALAR,   /* g of rank 0 */
    FOLD_BIAS4,    /* b [1,1,1,N] */
    FOLD_GEMM,     /* gemm(x [B,K], Wt [N,K], C [1,N], trans_b), mul(., g [N]) */
    FOLD_IDENT,    /* b and g read through identities (an exporter's shared initializers), b also read by
                      neg(b), a second output: the add gets a new scaled constant, b stays */
    KEEP_AXIS,     /* g [1,1,3,N]: varies along axis 2 */
    KEEP_SHARED,   /* W also read by neg(W), a second output */
    KEEP_RANK,     /* x [B,K], g [1,1,1,N]: y [1,1,B,N] */
    KEEP_OVERFLOW, /* f16: W * g over 65504 in one place */
    KEEP_TINY,     /* f16: g[3] 1e-7 puts W's column 3 below the smallest normal */
    KEEP_INT,      /* fold's structure in i32: integer dtypes are left alone */
    VARIANTS
} variant;

static const char *variant_name[VARIANTS] = {
    "fold",      "fold_swapped", "fold_nobias", "fold_scalar",   "fold_bias4", "fold_gemm", "fold_ident",
    "keep_axis", "keep_shared",  "keep_rank",   "keep_overflow", "keep_tiny",  "keep_int"};

static int folds(variant v) { return v < KEEP_AXIS; }
static int rank2(variant v) { return v == FOLD_GEMM || v == KEEP_RANK; }

/* the constants' values as stored (rounded to the dtype), for the oracle */
typedef struct model {
    symc_module *m;
    symc_dtype dt;
    variant v;
    double w[K * N];      /* [k][j] whatever the storage order */
    double b[N], g[3][N]; /* g[h][j]; one row unless KEEP_AXIS */
    int has_bias;
    symc_tensor x, wt, bt, gt, pre, y; /* pre: what the mul scales */
    uint8_t w_bytes[K * N * 8], b_bytes[N * 8];
} model;

static uint64_t rng = 0x243f6a8885a308d3ull;
static double amp = 1.0;    /* 4 for integers: values that do not all truncate to 0 */
static double urand(void) { /* [-amp, amp) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return amp * ((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static symc_tensor constant(model *md, const char *name, int rank, const int64_t *dims, double *vals, int64_t n,
                            uint8_t *keep) {
    size_t es = symc_dtype_size(md->dt);
    uint8_t *data = malloc((size_t)n * es);
    CHECK(data != NULL);
    if (!data) return SYMC_TENSOR_NONE;
    for (int64_t i = 0; i < n; i++) {
        symc_dtype_store(data, md->dt, (size_t)i, vals[i]);
        vals[i] = symc_dtype_load(data, md->dt, (size_t)i);
    }
    if (keep) memcpy(keep, data, (size_t)n * es);
    symc_tensor t = SYMC_TENSOR_NONE;
    symc_error err;
    CHECK_MSG(symc_add_constant(md->m, name, md->dt, rank, dims, data, (size_t)n * es, &t, &err) == SYMC_OK, "%s",
              err.msg);
    free(data);
    return t;
}

static void build(model *md, symc_dtype dt, variant v) {
    memset(md, 0, sizeof *md);
    md->dt = dt;
    md->v = v;
    symc_error err;
    symc_module *m = md->m = symc_module_create(variant_name[v], &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 3, BMAX, 1, &B, &err);
    if (rank2(v)) symc_add_input(m, "x", dt, 2, (symc_dim[]){B, symc_dim_const(m, K)}, &md->x, &err);
    else
        symc_add_input(m, "x", dt, 4, (symc_dim[]){B, symc_dim_const(m, 2), symc_dim_const(m, 3), symc_dim_const(m, K)},
                       &md->x, &err);
    /* W [k][j] in [-0.5, 0.5); stored transposed for the gemm */
    double wst[K * N];
    for (int i = 0; i < K * N; i++) md->w[i] = 0.5 * urand();
    if (v == KEEP_OVERFLOW) md->w[5] = 300.0;
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) wst[v == FOLD_GEMM ? j * K + k : k * N + j] = md->w[k * N + j];
    int64_t wdims[2] = {v == FOLD_GEMM ? N : K, v == FOLD_GEMM ? K : N};
    md->wt = constant(md, "w", 2, wdims, wst, K * N, md->w_bytes);
    for (int k = 0; k < K; k++) /* the stored values */
        for (int j = 0; j < N; j++) md->w[k * N + j] = wst[v == FOLD_GEMM ? j * K + k : k * N + j];
    /* g: magnitudes in [0.5, 1.5), either sign */
    int grows = v == KEEP_AXIS ? 3 : 1, glen = v == FOLD_SCALAR ? 1 : N;
    double gv[3 * N];
    for (int i = 0; i < grows * glen; i++) gv[i] = (urand() < 0 ? -1 : 1) * (1.0 + 0.5 * urand());
    if (v == KEEP_OVERFLOW) gv[5] = 300.0; /* w[0][5] * 300 = 90000 */
    if (v == KEEP_TINY) gv[3] = 1e-7;
    int64_t gdims[4] = {1, 1, v == KEEP_AXIS ? 3 : 1, N};
    int grank = v == FOLD_SWAPPED || v == FOLD_GEMM ? 1 : v == FOLD_SCALAR ? 0 : 4;
    if (grank == 1) gdims[0] = N;
    md->gt = constant(md, "g", grank, gdims, gv, grows * glen, NULL);
    for (int h = 0; h < 3; h++)
        for (int j = 0; j < N; j++) md->g[h][j] = gv[(v == KEEP_AXIS ? h * N : 0) + (glen == 1 ? 0 : j)];
    md->has_bias = v != FOLD_NOBIAS;
    if (md->has_bias) {
        for (int j = 0; j < N; j++) md->b[j] = 0.5 * urand();
        int brank = v == FOLD_BIAS4 ? 4 : v == FOLD_GEMM ? 2 : 1;
        int64_t bdims[4] = {1, 1, 1, 1};
        bdims[brank - 1] = N;
        md->bt = constant(md, "b", brank, bdims, md->b, N, md->b_bytes);
    }
    if (v == FOLD_GEMM) {
        symc_attr tb = symc_attr_int("trans_b", 1);
        md->pre = test_node(m, "gemm", "mm", (symc_tensor[]){md->x, md->wt, md->bt}, 3, &tb, 1);
    } else {
        md->pre = test_node(m, "matmul", "mm", (symc_tensor[]){md->x, md->wt}, 2, NULL, 0);
        symc_tensor bread = v == FOLD_IDENT ? test_node(m, "identity", "b_alias", &md->bt, 1, NULL, 0) : md->bt;
        if (md->has_bias)
            md->pre = test_node(m, "add", "biased",
                                v == FOLD_SWAPPED ? (symc_tensor[]){md->bt, md->pre} : (symc_tensor[]){md->pre, bread},
                                2, NULL, 0);
    }
    if (v == FOLD_IDENT) {
        md->gt = test_node(m, "identity", "g_alias", &md->gt, 1, NULL, 0);
    }
    symc_tensor sc = test_node(m, "mul", "scale",
                               v == FOLD_SWAPPED ? (symc_tensor[]){md->gt, md->pre} : (symc_tensor[]){md->pre, md->gt},
                               2, NULL, 0);
    md->y = test_node(m, "add", "y", (symc_tensor[]){md->x, sc}, 2, NULL, 0);
    symc_mark_output(m, md->y, &err);
    if (v == KEEP_SHARED) symc_mark_output(m, test_node(m, "neg", "wneg", &md->wt, 1, NULL, 0), &err);
    if (v == FOLD_IDENT) symc_mark_output(m, test_node(m, "neg", "bneg", &md->bt, 1, NULL, 0), &err);
}

static const uint8_t *const_bytes(symc_module *m, symc_tensor t) {
    return m->tensors[t].constant == IR_NONE ? NULL : m->constants[m->tensors[t].constant].data;
}

/* the pipeline's result: folded (mul an identity, constants scaled) or untouched */
static void check_structure(const model *md) {
    symc_module *m = md->m;
    uint32_t si = 0, yi = 0;
    CHECK(ir_find_node(m, "scale", &si) && ir_find_node(m, "y", &yi));
    const ir_node *s = &m->nodes[si], *y = &m->nodes[yi];
    double u = md->dt == SYMC_F16 ? 0x1p-11 : md->dt == SYMC_BF16 ? 0x1p-8 : md->dt == SYMC_F64 ? 0x1p-53 : 0x1p-24;
    size_t es = symc_dtype_size(md->dt);
    const uint8_t *w = const_bytes(m, md->wt), *b = md->has_bias ? const_bytes(m, md->bt) : NULL;
    CHECK(w && (b || !md->has_bias));
    if (!w || (md->has_bias && !b)) return;
    if (md->v == FOLD_IDENT) { /* b, read by bneg too, is as it was; the add reads a new scaled copy */
        uint32_t ai = 0;
        CHECK(memcmp(b, md->b_bytes, N * es) == 0);
        CHECK(ir_find_node(m, "biased", &ai));
        uint32_t nb = m->nodes[ai].in[1];
        CHECK(nb != md->bt && m->tensors[nb].producer < ai);
        b = const_bytes(m, nb);
        CHECK(b != NULL);
    }
    if (!folds(md->v)) {
        CHECK_MSG(s->op == IR_OP_MUL && s->n_in == 2, "%s %s: the mul was folded", variant_name[md->v],
                  symc_dtype_name(md->dt));
        CHECK(memcmp(w, md->w_bytes, K * N * es) == 0);
        if (b) CHECK(memcmp(b, md->b_bytes, N * es) == 0);
        return;
    }
    CHECK_MSG(s->op == IR_OP_IDENTITY && s->n_in == 1 && s->in[0] == md->pre, "%s %s: the mul is %s",
              variant_name[md->v], symc_dtype_name(md->dt), ir_op_get(s->op)->name);
    CHECK(y->in[1] == md->pre); /* the residual add reads the scaled contraction directly */
    for (int k = 0; k < K; k++)
        for (int j = 0; j < N; j++) {
            double want = md->w[k * N + j] * md->g[0][j];
            double have = symc_dtype_load(w, md->dt, (size_t)(md->v == FOLD_GEMM ? j * K + k : k * N + j));
            CHECK_MSG(fabs(have - want) <= u * fabs(want), "%s %s: W'[%d][%d] %g want %g", variant_name[md->v],
                      symc_dtype_name(md->dt), k, j, have, want);
        }
    for (int j = 0; b && j < N; j++) {
        double want = md->b[j] * md->g[0][j], have = symc_dtype_load(b, md->dt, (size_t)j);
        CHECK_MSG(fabs(have - want) <= u * fabs(want), "%s %s: b'[%d] %g want %g", variant_name[md->v],
                  symc_dtype_name(md->dt), j, have, want);
    }
}

/* Output 0 of module m (shapes inferred) on the reference backend at batch B, as doubles. */
static int run_ref(symc_module *m, int64_t batch, int rank, symc_dtype dt, const double *xv, double *out) {
    int64_t xd[4] = {batch, K, 0, 0};
    if (rank == 4) xd[1] = 2, xd[2] = 3, xd[3] = K;
    int64_t nx = batch * (rank == 4 ? 6 : 1) * K, n0 = 0;
    int ok = run_module_ref(m, xd, rank, dt, xv, out, nx / K * N, &n0, NULL);
    CHECK(!ok || n0 == nx / K * N);
    return ok;
}

/* folded (pipeline) and unfolded (shape inference only) against y in double */
static void check_numbers(const model *folded, const model *plain) {
    int rank = rank2(folded->v) ? 2 : 4;
    double tol = folded->dt == SYMC_F16 ? 1e-2 : folded->dt == SYMC_BF16 ? 2e-2 : 1e-5;
    static const int64_t batches[] = {1, 3, BMAX};
    for (int bi = 0; bi < 3; bi++) {
        int64_t batch = batches[bi], rows = batch * (rank == 4 ? 6 : 1);
        double xv[BMAX * 6 * K], yf[BMAX * 6 * N], yp[BMAX * 6 * N];
        uint8_t tmp[8];
        for (int64_t i = 0; i < rows * K; i++) { /* x as the dtype stores it */
            /* keep_overflow: x's channel 0, read by W[0][5] = 300, small enough for y to fit f16 */
            symc_dtype_store(tmp, folded->dt, 0, urand() * (folded->v == KEEP_OVERFLOW && i % K == 0 ? 0.01 : 1.0));
            xv[i] = symc_dtype_load(tmp, folded->dt, 0);
        }
        if (!run_ref(folded->m, batch, rank, folded->dt, xv, yf) || !run_ref(plain->m, batch, rank, plain->dt, xv, yp))
            return;
        for (int64_t r = 0; r < rows; r++) {
            int h = (int)(r % 3); /* the position along axis 2 of [B, 2, 3, N] */
            for (int j = 0; j < N; j++) {
                double acc = 0.0, mag = 0.0, gj = folded->g[folded->v == KEEP_AXIS ? h : 0][j];
                for (int k = 0; k < K; k++) {
                    acc += xv[r * K + k] * folded->w[k * N + j];
                    mag += fabs(xv[r * K + k] * folded->w[k * N + j]);
                }
                if (folded->has_bias) acc += folded->b[j], mag += fabs(folded->b[j]);
                double want = xv[r * K + j] + gj * acc;
                /* relative to the magnitudes summed (cancellation leaves the absolute error) */
                double lim = tol * fmax(fabs(xv[r * K + j]) + fabs(gj) * mag, 1.0);
                CHECK_MSG(fabs(yf[r * N + j] - want) <= lim && fabs(yp[r * N + j] - want) <= lim,
                          "%s %s B=%lld y[%lld][%d]: folded %.9g unfolded %.9g want %.9g", variant_name[folded->v],
                          symc_dtype_name(folded->dt), (long long)batch, (long long)r, j, yf[r * N + j], yp[r * N + j],
                          want);
            }
        }
    }
}

static void test_variant(symc_dtype dt, variant v) {
    model folded, plain;
    amp = dt == SYMC_I32 ? 4.0 : 1.0;
    uint64_t seed = rng;
    build(&folded, dt, v);
    rng = seed; /* the same constants */
    build(&plain, dt, v);
    symc_error err;
    /* up to the dead-node pass, which would remove the folded mul (an unread identity) */
    CHECK_MSG(pass_run_passes(folded.m, NULL, NULL, "dce", &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain.m, &err) == SYMC_OK, "%s", err.msg);
    check_structure(&folded);
    check_numbers(&folded, &plain);
    symc_module_destroy(folded.m);
    symc_module_destroy(plain.m);
}

static uint32_t tensor_index(const rt_engine *e, const char *name) {
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (!strcmp(e->tensors[i].name, name)) return i;
    return RT_NONE;
}

/* the CUDA target's plan: the folded block's residual add is the GEMM's C */
static void test_cuda_plan(symc_dtype dt, variant v) {
    model md;
    build(&md, dt, v);
    symc_module *m = md.m;
    symc_error err;
    cg_options o = cg_default_options();
    o.tune = 0;
    o.arch = "sm_90";
    pass_options po = {.fuse = cg_fuse_rules(&o)};
    CHECK_MSG(pass_run_pipeline(m, &po, &err) == SYMC_OK, "%s", err.msg);
    uint32_t mm = 0, bias = 0, sc = 0, y = 0;
    int has_scale = ir_find_node(m, "scale", &sc); /* folded: an unread identity, removed by dce */
    CHECK(m->fuse && ir_find_node(m, "mm", &mm) && ir_find_node(m, "biased", &bias) && has_scale == !folds(v) &&
          ir_find_node(m, "y", &y));
    if (!m->fuse) {
        symc_module_destroy(m);
        return;
    }
    CHECK(m->fuse[mm].role == IR_FUSE_LIBRARY && m->fuse[bias].role == IR_FUSE_BIAS && m->fuse[bias].group == mm);
    if (folds(v)) {
        CHECK_MSG(m->fuse[y].role == IR_FUSE_RESIDUAL && m->fuse[y].group == mm, "%s: y is %s", symc_dtype_name(dt),
                  ir_fuse_role_name((ir_fuse_role)m->fuse[y].role));
    } else {
        CHECK(m->fuse[y].role != IR_FUSE_RESIDUAL && m->fuse[sc].role != IR_FUSE_DEAD);
    }
    uint8_t *bytes = NULL;
    size_t size = 0;
    rt_engine *e = NULL;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    CHECK(bytes && rt_engine_decode(bytes, size, &e, &err) == SYMC_OK);
    free(bytes);
    const rt_step *g = NULL;
    uint32_t gemms = 0;
    for (uint32_t i = 0; e && i < e->n_steps; i++)
        if (e->steps[i].kind == RT_STEP_GEMM) g = &e->steps[i], gemms++;
    CHECK(g && gemms == 1);
    if (g && folds(v)) {
        CHECK_MSG(e->n_steps == 1, "%s: %u steps", symc_dtype_name(dt), e->n_steps);
        CHECK(g->tensors[2] == tensor_index(e, "x") && g->beta == 1.0f && g->tensors[3] == tensor_index(e, "b") &&
              g->tensors[4] == tensor_index(e, "y"));
    } else if (g) {
        CHECK(g->tensors[2] == RT_NONE && g->tensors[4] != tensor_index(e, "y"));
    }
    rt_engine_free(e);
    symc_module_destroy(m);
}

int main(void) {
    for (int v = 0; v < VARIANTS; v++) {
        if (v == KEEP_INT) continue;
        if (v != KEEP_OVERFLOW && v != KEEP_TINY) test_variant(SYMC_F32, (variant)v);
        test_variant(SYMC_F16, (variant)v);
    }
    test_variant(SYMC_BF16, FOLD);
    test_variant(SYMC_BF16, FOLD_GEMM);
    test_variant(SYMC_F64, FOLD);
    test_variant(SYMC_I32, KEEP_INT);
    test_cuda_plan(SYMC_F32, FOLD);
    test_cuda_plan(SYMC_F16, FOLD);
    test_cuda_plan(SYMC_F32, KEEP_AXIS);
    return check_report("test_fold_scale");
}
