/* The unbind of a fused projection into heads rewritten into a split the fused attention reads in
 * place (passes/merge_proj.c, pass_unbind_heads), and a scale of Q or Kᵀ before the score matmul
 * taken into the attention (passes/fuse_attention.c), on builder modules of timm's attention:
 * x [B, S, 32] (B in [1, 4], S in [1, 40]) times a constant [32, 96] weight plus a bias [96],
 * reshaped to [B, S, 3, 2, 16], transposed by (2, 0, 3, 1, 4) to [3, B, 2, S, 16], split along axis 0
 * into three parts of 1, each squeezed (axis 0): Q, K and V [B, 2, S, 16]; o = softmax(Q·Kᵀ · s)·V
 * with the scale on Q (or on Kᵀ), y = o transposed back and reshaped to [B, S, 32].
 * Variants:
 *   timm     q * 0.25 before the score matmul: the pass rewrites the unbind into one split along the
 *            last axis of the projection (no rank-5 transpose left, three reshapes into heads and
 *            three transposes (0, 2, 1, 3))
 *   kdiv     Kᵀ / 4 instead: the same rewrite
 *   views    torch.export's form: the projection of x viewed as [B * S, 32], its [B * S, 96] result
 *            reshaped to [B, S, 3, 2, 16]: the split is of the [B * S, 96] tensor
 *   slices   torch.export's unbind: three slices of axis 0 ([0, 1), [2, 3), [1, 2): in any order),
 *            each squeezed, instead of the split: the same rewrite
 *   gather   torchvision's q, k, v = qkv[0], qkv[1], qkv[2]: three gathers of axis 0 by a scalar
 *            constant index (each part rank 4 already, no squeeze): the same rewrite
 *   output   K's squeezed part also a graph output: still rewritten (the squeeze's result is the
 *            same tensor, now made by a transpose)
 *   shared   the rank-5 transpose also read by another node (a graph output): nothing is rewritten
 *   gap      slices [0, 1) and [1, 2) only (V read from the split of another transpose): not an
 *            unbind of every part, nothing is rewritten
 *   off      SYMC_UNBIND_HEADS=0: nothing is rewritten
 * In f32 and f16, every module through the passes runs on the reference backend at (B, S) = (1, 1),
 * (2, 7) and (4, 40) against the same module with shapes inferred only: the rewrite only moves
 * data, so the outputs are bit-identical. Built for sm_90 (f16), timm, kdiv and views fuse the
 * attention over the new split and the scale (no split, transpose or mul kernel of their own). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "runtime/engine.h"
#include "tests/check.h"
#include "tests/passes/run_module.h"

#define E 32
#define H 2
#define D 16
#define BMAX 4
#define SMAX 40

typedef enum variant { TIMM, KDIV, VIEWS, SLICES, GATHER, OUTPUT, SHARED, GAP, OFF, VARIANTS } variant;
static const char *variant_name[VARIANTS] = {"timm",   "kdiv",   "views", "slices", "gather",
                                             "output", "shared", "gap",   "off"};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { /* [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static symc_tensor node(symc_module *m, const char *op, const char *name, const symc_tensor *in, uint32_t n,
                        const symc_attr *attrs, uint32_t n_attrs, uint32_t n_out, symc_tensor *outs) {
    symc_error err;
    symc_tensor out[3] = {SYMC_TENSOR_NONE, SYMC_TENSOR_NONE, SYMC_TENSOR_NONE};
    CHECK_MSG(symc_add_node(m, op, name, in, n, attrs, n_attrs, out, n_out, &err) == SYMC_OK, "%s: %s", name, err.msg);
    for (uint32_t i = 0; outs && i < n_out; i++) outs[i] = out[i];
    return out[0];
}

static symc_tensor constant(symc_module *m, const char *name, symc_dtype dt, int32_t rank, const int64_t *dims,
                            double scale, double fixed) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    uint8_t *data = malloc((size_t)n * symc_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) symc_dtype_store(data, dt, (size_t)i, scale ? scale * urand() : fixed);
    symc_error err;
    symc_tensor t = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_constant(m, name, dt, rank, dims, data, (size_t)n * symc_dtype_size(dt), &t, &err) == SYMC_OK,
              "%s: %s", name, err.msg);
    free(data);
    return t;
}

/* the same module each call for a variant and dtype (the weights' random stream restarts) */
static symc_module *build(symc_dtype dt, variant v) {
    rng = 0x9e3779b97f4a7c15ull + (uint64_t)v;
    symc_error err;
    symc_module *m = symc_module_create(variant_name[v], &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 2, BMAX, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 16, SMAX, 1, &S, &err);
    symc_tensor x;
    symc_add_input(m, "x", dt, 3, (symc_dim[]){B, S, symc_dim_const(m, E)}, &x, &err);
    symc_tensor xin = x;
    if (v == VIEWS) {
        symc_attr flat = symc_attr_dims("shape", (symc_dim[]){symc_dim_mul(m, B, S), symc_dim_const(m, E)}, 2);
        xin = node(m, "reshape", "x_view", &x, 1, &flat, 1, 1, NULL);
    }
    symc_tensor w = constant(m, "w_qkv", dt, 2, (int64_t[]){E, 3 * E}, 0.25, 0);
    symc_tensor b = constant(m, "b_qkv", dt, 1, (int64_t[]){3 * E}, 0.5, 0);
    symc_tensor y = node(m, "matmul", "qkv_mm", (symc_tensor[]){xin, w}, 2, NULL, 0, 1, NULL);
    y = node(m, "add", "qkv", (symc_tensor[]){b, y}, 2, NULL, 0, 1, NULL);
    symc_dim five[5] = {B, S, symc_dim_const(m, 3), symc_dim_const(m, H), symc_dim_const(m, D)};
    symc_attr rs = symc_attr_dims("shape", five, 5);
    symc_tensor r = node(m, "reshape", "qkv_5d", &y, 1, &rs, 1, 1, NULL);
    int64_t p5[5] = {2, 0, 3, 1, 4};
    symc_attr pp = symc_attr_ints("perm", p5, 5);
    symc_tensor t = node(m, "transpose", "qkv_t", &r, 1, &pp, 1, 1, NULL);
    if (v == SHARED) symc_mark_output(m, t, &err);
    symc_dim ones[3] = {symc_dim_const(m, 1), symc_dim_const(m, 1), symc_dim_const(m, 1)};
    symc_attr sa[2] = {symc_attr_int("axis", 0), symc_attr_dims("sizes", ones, 3)};
    symc_tensor parts[3], h[3];
    if (v == SLICES || v == GAP) { /* torch.export: a slice of axis 0 a part */
        static const int order[3] = {0, 2, 1};
        int64_t zero = 0, one = 1;
        symc_attr axes = symc_attr_ints("axes", &zero, 1), steps = symc_attr_ints("steps", &one, 1);
        for (int j = 0; j < 3; j++) {
            int i = order[j];
            if (v == GAP && i == 2) {
                int64_t p5b[5] = {2, 0, 3, 1, 4};
                symc_attr ppb = symc_attr_ints("perm", p5b, 5);
                symc_tensor t2 = node(m, "transpose", "qkv_t2", &r, 1, &ppb, 1, 1, NULL), all[3];
                node(m, "split", "unbind2", &t2, 1, sa, 2, 3, all);
                parts[i] = all[2];
                continue;
            }
            symc_dim st = symc_dim_const(m, i), en = symc_dim_const(m, i + 1);
            symc_attr sl[4] = {symc_attr_dims("starts", &st, 1), symc_attr_dims("ends", &en, 1), axes, steps};
            char name[16];
            snprintf(name, sizeof name, "slice%d", i);
            parts[i] = node(m, "slice", name, &t, 1, sl, 4, 1, NULL);
        }
    } else if (v != GATHER) node(m, "split", "unbind", &t, 1, sa, 2, 3, parts);
    int64_t zero = 0;
    symc_attr sq = symc_attr_ints("axes", &zero, 1);
    static const char *const pn[3] = {"q", "k", "v"};
    for (int i = 0; i < 3 && v != GATHER; i++) h[i] = node(m, "squeeze", pn[i], &parts[i], 1, &sq, 1, 1, NULL);
    for (int i = 0; i < 3 && v == GATHER; i++) { /* qkv[i] */
        char name[16];
        snprintf(name, sizeof name, "i%d", i);
        int64_t idx = i;
        symc_tensor ix = SYMC_TENSOR_NONE;
        CHECK_MSG(symc_add_constant(m, name, SYMC_I64, 0, NULL, &idx, sizeof idx, &ix, &err) == SYMC_OK, "%s", err.msg);
        symc_attr ga = symc_attr_int("axis", 0);
        h[i] = node(m, "gather", pn[i], (symc_tensor[]){t, ix}, 2, &ga, 1, 1, NULL);
    }
    if (v == OUTPUT) symc_mark_output(m, h[1], &err);
    int64_t keys[4] = {0, 1, 3, 2}, heads[4] = {0, 2, 1, 3};
    symc_attr pk = symc_attr_ints("perm", keys, 4), ph = symc_attr_ints("perm", heads, 4);
    symc_tensor kt = node(m, "transpose", "k_t", &h[1], 1, &pk, 1, 1, NULL);
    symc_tensor q = h[0];
    if (v == KDIV) {
        symc_tensor four = constant(m, "four", dt, 0, NULL, 0, 4.0);
        kt = node(m, "div", "k_scale", (symc_tensor[]){kt, four}, 2, NULL, 0, 1, NULL);
    } else {
        symc_tensor quarter = constant(m, "scale", dt, 0, NULL, 0, 0.25);
        q = node(m, "mul", "q_scale", (symc_tensor[]){q, quarter}, 2, NULL, 0, 1, NULL);
    }
    symc_attr ax = symc_attr_int("axis", -1);
    symc_tensor sc = node(m, "matmul", "scores", (symc_tensor[]){q, kt}, 2, NULL, 0, 1, NULL);
    symc_tensor p = node(m, "softmax", "probs", &sc, 1, &ax, 1, 1, NULL);
    symc_tensor o = node(m, "matmul", "o", (symc_tensor[]){p, h[2]}, 2, NULL, 0, 1, NULL);
    symc_tensor ot = node(m, "transpose", "o_t", &o, 1, &ph, 1, 1, NULL);
    symc_attr back = symc_attr_dims("shape", (symc_dim[]){B, S, symc_dim_const(m, E)}, 3);
    symc_tensor out = node(m, "reshape", "y", &ot, 1, &back, 1, 1, NULL);
    symc_mark_output(m, out, &err);
    return m;
}

static int rewritten(variant v) { return v != SHARED && v != GAP && v != OFF; }

static void check_structure(symc_module *m, symc_dtype dt, variant v) {
    const char *dn = symc_dtype_name(dt);
    uint32_t rank5 = 0, splits = 0, last_axis = 0, heads = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *nd = &m->nodes[i];
        if (nd->op == IR_OP_TRANSPOSE && m->tensors[nd->in[0]].rank == 5) rank5++;
        if (nd->op == IR_OP_SPLIT) {
            splits++;
            const ir_attr *a = ir_node_attr(nd, "axis");
            const ir_tensor *in = &m->tensors[nd->in[0]];
            if (a && a->i == in->rank - 1 && in->rank == (v == VIEWS ? 2 : 3) && nd->n_out == 3) last_axis++;
        }
        if (nd->op == IR_OP_TRANSPOSE && !strcmp(nd->source, "unbind-heads")) {
            const ir_attr *a = ir_node_attr(nd, "perm");
            if (a && a->n == 4 && a->ints[0] == 0 && a->ints[1] == 2 && a->ints[2] == 1 && a->ints[3] == 3) heads++;
        }
    }
    int rw = rewritten(v);
    CHECK_MSG(rank5 == (rw ? 0u : v == GAP ? 2u : 1u), "%s %s: %u rank-5 transposes", variant_name[v], dn, rank5);
    CHECK_MSG(splits == 1, "%s %s: %u splits", variant_name[v], dn, splits);
    CHECK_MSG(last_axis == (rw ? 1u : 0u), "%s %s: %u splits along the projection's last axis", variant_name[v], dn,
              last_axis);
    CHECK_MSG(heads == (rw ? 3u : 0u), "%s %s: %u transposes (0, 2, 1, 3) into heads", variant_name[v], dn, heads);
    uint32_t k;
    CHECK_MSG(ir_find_tensor(m, "k", &k) && m->tensors[k].rank == 4, "%s %s: K's tensor gone", variant_name[v], dn);
}

static void check_numbers(symc_module *mm, symc_module *plain, symc_dtype dt, variant v) {
    static const int64_t pts[3][2] = {{1, 1}, {2, 7}, {BMAX, SMAX}};
    static double xv[BMAX * SMAX * E], a[BMAX * SMAX * E], b[BMAX * SMAX * E];
    for (int p = 0; p < 3; p++) {
        int64_t xd[3] = {pts[p][0], pts[p][1], E}, n = xd[0] * xd[1] * E, na = 0, nb = 0;
        uint8_t tmp[8];
        for (int64_t i = 0; i < n; i++) {
            symc_dtype_store(tmp, dt, 0, 2.0 * urand());
            xv[i] = symc_dtype_load(tmp, dt, 0);
        }
        /* output 0 is y except where an earlier output was marked (then that one: compared as well) */
        if (!run_module_ref(mm, xd, 3, dt, xv, a, n, &na, NULL) ||
            !run_module_ref(plain, xd, 3, dt, xv, b, n, &nb, NULL))
            return;
        CHECK_MSG(na == nb && na > 0, "%s: %lld and %lld outputs", variant_name[v], (long long)na, (long long)nb);
        int64_t diff = 0, cnt = na < n ? na : n;
        for (int64_t i = 0; i < cnt; i++) diff += a[i] != b[i];
        CHECK_MSG(diff == 0, "%s %s B=%lld S=%lld: %lld of %lld outputs differ from the module as written",
                  variant_name[v], symc_dtype_name(dt), (long long)xd[0], (long long)xd[1], (long long)diff,
                  (long long)cnt);
    }
}

/* Built for sm_90 (f16): the fused attention covers the split, the reshapes into heads and the scale. */
static void check_fused(symc_dtype dt, variant v) {
    symc_module *m = build(dt, v);
    rt_engine *e = build_sm90(m, variant_name[v]);
    const char *src = e ? e->cuda_source : "";
    char line[4096];
    attention_line(e, line, sizeof line);
    CHECK_MSG(strstr(line, "(split)") && strstr(line, ".head_view (reshape)"),
              "%s: the attention does not cover the new split: '%s'", variant_name[v], line);
    const char *scale = v == KDIV ? "k_scale (div)" : "q_scale (mul)";
    CHECK_MSG(strstr(line, scale), "%s: the attention does not cover %s: '%s'", variant_name[v], scale, line);
    /* no kernel of its own for the scale, the split or a transpose: the attention is the only kernel
     * between the projection's GEMM and the output's */
    uint32_t kernels = 0;
    for (const char *s = strstr(src, "extern \"C\" __global__"); s; s = strstr(s + 1, "extern \"C\" __global__"))
        kernels++;
    CHECK_MSG(kernels == 1, "%s: %u kernels in the engine's source, the attention alone expected", variant_name[v],
              kernels);
    rt_engine_free(e);
    symc_module_destroy(m);
}

static void test_variant(symc_dtype dt, variant v) {
    if (v == OFF) setenv("SYMC_UNBIND_HEADS", "0", 1);
    symc_module *mm = build(dt, v), *plain = build(dt, v);
    symc_error err;
    CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "%s: %s", variant_name[v], err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    unsetenv("SYMC_UNBIND_HEADS");
    check_structure(mm, dt, v);
    check_numbers(mm, plain, dt, v);
    symc_module_destroy(mm);
    symc_module_destroy(plain);
}

int main(void) {
    for (int v = 0; v < VARIANTS; v++) {
        test_variant(SYMC_F32, (variant)v);
        test_variant(SYMC_F16, (variant)v);
    }
    check_fused(SYMC_F16, TIMM);
    check_fused(SYMC_F16, KDIV);
    check_fused(SYMC_F16, VIEWS);
    check_fused(SYMC_F16, SLICES);
    check_fused(SYMC_F16, GATHER);
    return check_report("test_unbind_heads");
}
