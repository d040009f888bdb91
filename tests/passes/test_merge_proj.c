/* Sibling projections merged into one GEMM (passes/merge_proj.c, pass_merge_projections), on
 * builder modules of one attention layer: x [B, S, 32] (B in [1, 4], S in [1, 40]) projected by
 * three constant [32, 32] weights into Q, K and V (each with a constant bias [32] unless the
 * variant says otherwise), each reshaped to [B, S, 2, 16] and transposed to heads (K to
 * [B, 2, 16, S]), o = softmax(Q·Kᵀ)·V, y = o transposed back and reshaped to [B, S, 32].
 * Variants:
 *   bias          all three with biases, add(y, b): one matmul by a [32, 96] weight, one add of a
 *                 [96] bias, one split into the three (the old nodes gone after dce)
 *   bias_swapped  add(b, y)
 *   no_bias       no biases: one matmul, one split, no add
 *   mixed_bias    Q with a bias, K and V without: K and V merge (2 matmuls read x)
 *   rotary        Q's heads multiplied by a constant before the transpose (as a rotary embedding
 *                 reads them): Q stays, K and V merge
 *   output        K's projection also a graph output: Q and V merge
 *   one           V read from another input: Q and K merge
 *   off           SYMC_MERGE_PROJECTIONS=0: nothing merges
 *   views         torch.export's form: each projection reads its own view of x as [B * S, 32] and
 *                 its result goes back to [B, S, 32], then to heads: the three views count as one x
 *                 and merge (the split's parts are [B * S, 32])
 * The bias and views variants in f16 are also built for sm_90: the fused attention reads Q, K and
 * V in the merged tensor, covering the split (no split kernel).
 * In f32 and f16. Every module, through the pass (which removes what it leaves unread), runs on the reference backend at (B, S) = (1, 1),
 * (2, 7) and (4, 40) against the same module with shapes inferred only: each column of the
 * merged product is the same dot product over K as before, so the outputs are bit-identical
 * (the oracle is the unmerged module; its correctness is the reference backend's own tests'). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "runtime/engine.h"
#include "tests/check.h"
#include "tests/passes/run_module.h"
#include "tests/test_node.h"

#define E 32
#define H 2
#define D 16
#define BMAX 4
#define SMAX 40

typedef enum variant { BIAS, BIAS_SWAPPED, NO_BIAS, MIXED_BIAS, ROTARY, OUTPUT, ONE, OFF, VIEWS, VARIANTS } variant;
static const char *variant_name[VARIANTS] = {"bias",   "bias_swapped", "no_bias", "mixed_bias", "rotary",
                                             "output", "one",          "off",     "views"};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { /* [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static symc_tensor constant(symc_module *m, const char *name, symc_dtype dt, int32_t rank, const int64_t *dims,
                            double scale) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    uint8_t *data = malloc((size_t)n * symc_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) symc_dtype_store(data, dt, (size_t)i, scale * urand());
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
    symc_dim B, S, dims[4];
    symc_declare_symbol(m, "B", 1, 2, BMAX, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 16, SMAX, 1, &S, &err);
    symc_tensor x, x2 = SYMC_TENSOR_NONE;
    symc_add_input(m, "x", dt, 3, (symc_dim[]){B, S, symc_dim_const(m, E)}, &x, &err);
    if (v == ONE) symc_add_input(m, "x2", dt, 3, (symc_dim[]){B, S, symc_dim_const(m, E)}, &x2, &err);
    dims[0] = B, dims[1] = S, dims[2] = symc_dim_const(m, H), dims[3] = symc_dim_const(m, D);
    symc_attr rs = symc_attr_dims("shape", dims, 4);
    int64_t heads[4] = {0, 2, 1, 3}, keys[4] = {0, 2, 3, 1};
    symc_attr ph = symc_attr_ints("perm", heads, 4), pk = symc_attr_ints("perm", keys, 4);
    static const char *const pn[3] = {"q", "k", "v"};
    symc_tensor h[3];
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "w%s", pn[i]);
        symc_tensor w = constant(m, name, dt, 2, (int64_t[]){E, E}, 0.25);
        symc_tensor xin = i == 2 && v == ONE ? x2 : x;
        if (v == VIEWS) { /* x as [B * S, 32], a view a projection */
            symc_attr flat = symc_attr_dims("shape", (symc_dim[]){symc_dim_mul(m, B, S), symc_dim_const(m, E)}, 2);
            snprintf(name, sizeof name, "%s_view", pn[i]);
            xin = test_node(m, "reshape", name, &x, 1, &flat, 1);
        }
        snprintf(name, sizeof name, "%s_mm", pn[i]);
        symc_tensor y = test_node(m, "matmul", name, (symc_tensor[]){xin, w}, 2, NULL, 0);
        int bias = v == BIAS || v == BIAS_SWAPPED || v == OUTPUT || v == ROTARY || v == ONE || v == VIEWS ||
            (v == MIXED_BIAS && i == 0);
        if (v == OFF) bias = 1;
        if (bias) {
            snprintf(name, sizeof name, "b%s", pn[i]);
            symc_tensor b = constant(m, name, dt, 1, (int64_t[]){E}, 0.5);
            snprintf(name, sizeof name, "%s_add", pn[i]);
            y = test_node(m, "add", name, v == BIAS_SWAPPED ? (symc_tensor[]){b, y} : (symc_tensor[]){y, b}, 2, NULL,
                          0);
        }
        if (v == OUTPUT && i == 1) symc_mark_output(m, y, &err);
        if (v == VIEWS) { /* back to [B, S, 32] */
            symc_attr back3 = symc_attr_dims("shape", (symc_dim[]){B, S, symc_dim_const(m, E)}, 3);
            snprintf(name, sizeof name, "%s_back", pn[i]);
            y = test_node(m, "reshape", name, &y, 1, &back3, 1);
        }
        snprintf(name, sizeof name, "%s_heads", pn[i]);
        symc_tensor r = test_node(m, "reshape", name, &y, 1, &rs, 1);
        if (v == ROTARY && i == 0) {
            symc_tensor c = constant(m, "rot", dt, 4, (int64_t[]){1, 1, H, D}, 1.0);
            r = test_node(m, "mul", "q_rot", (symc_tensor[]){r, c}, 2, NULL, 0);
        }
        snprintf(name, sizeof name, "%s_t", pn[i]);
        h[i] = test_node(m, "transpose", name, &r, 1, i == 1 ? &pk : &ph, 1);
    }
    symc_attr ax = symc_attr_int("axis", -1);
    symc_tensor sc = test_node(m, "matmul", "scores", (symc_tensor[]){h[0], h[1]}, 2, NULL, 0);
    symc_tensor p = test_node(m, "softmax", "probs", &sc, 1, &ax, 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, h[2]}, 2, NULL, 0);
    symc_tensor ot = test_node(m, "transpose", "o_t", &o, 1, &ph, 1);
    symc_attr back = symc_attr_dims("shape", (symc_dim[]){B, S, symc_dim_const(m, E)}, 3);
    symc_tensor y = test_node(m, "reshape", "y", &ot, 1, &back, 1);
    symc_mark_output(m, y, &err);
    return m;
}

/* how many members each variant merges, and whether with a bias */
static uint32_t merged(variant v) {
    return v == BIAS || v == BIAS_SWAPPED || v == NO_BIAS || v == VIEWS ? 3 : v == OFF ? 0 : 2;
}
static int merged_bias(variant v) { return v != NO_BIAS && v != MIXED_BIAS; }

static void check_structure(symc_module *m, symc_dtype dt, variant v) {
    const char *dn = symc_dtype_name(dt);
    uint32_t x = 0, reads = 0, splits = 0, adds = 0, wide = 0;
    CHECK(ir_find_tensor(m, "x", &x));
    uint32_t n = merged(v);
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *nd = &m->nodes[i];
        uint32_t src = nd->n_in ? nd->in[0] : IR_NONE, sp = src == IR_NONE ? IR_NONE : m->tensors[src].producer;
        if (v == VIEWS && sp != IR_NONE && m->nodes[sp].op == IR_OP_RESHAPE) src = m->nodes[sp].in[0];
        if (nd->op == IR_OP_MATMUL && src == x) {
            reads++;
            int64_t cols = 0;
            const ir_tensor *w = &m->tensors[nd->in[1]];
            if (w->rank == 2 && sym_is_const(m->syms, w->dims[1], &cols) && cols == (int64_t)n * E) wide++;
        }
        if (nd->op == IR_OP_SPLIT) {
            splits++;
            const ir_attr *s = ir_node_attr(nd, "sizes");
            CHECK_MSG(nd->n_out == n && s && s->n == n, "%s %s: a split of %u outputs", variant_name[v], dn, nd->n_out);
        }
        if (nd->op == IR_OP_ADD && !strcmp(nd->source, "merge-projections")) adds++;
    }
    uint32_t x_readers = v == ONE ? 2 : 3; /* matmuls of x before */
    CHECK_MSG(reads == (n ? x_readers - n + 1 : x_readers), "%s %s: %u matmuls read x", variant_name[v], dn, reads);
    CHECK_MSG(wide == (n ? 1u : 0u), "%s %s: %u matmuls by a [32, %u] weight", variant_name[v], dn, wide, n * E);
    CHECK_MSG(splits == (n ? 1u : 0u), "%s %s: %u splits", variant_name[v], dn, splits);
    CHECK_MSG(adds == (n && merged_bias(v) ? 1u : 0u), "%s %s: %u merged bias adds", variant_name[v], dn, adds);
    if (n) {
        char *text = ir_print_to_string(m);
        CHECK_CONTAINS(text, "# merge-projections");
        free(text);
    }
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
        if (v == ONE) continue; /* two inputs: run_module_ref feeds "x" only (the structure is checked) */
        if (!run_module_ref(mm, xd, 3, dt, xv, a, n, &na, NULL) ||
            !run_module_ref(plain, xd, 3, dt, xv, b, n, &nb, NULL))
            return;
        CHECK_MSG(na == n && nb == n, "%s: %lld and %lld outputs", variant_name[v], (long long)na, (long long)nb);
        int64_t diff = 0;
        for (int64_t i = 0; i < n; i++) diff += a[i] != b[i];
        CHECK_MSG(diff == 0, "%s %s B=%lld S=%lld: %lld of %lld outputs differ from the unmerged module",
                  variant_name[v], symc_dtype_name(dt), (long long)xd[0], (long long)xd[1], (long long)diff,
                  (long long)n);
    }
}

/* Built for sm_90 (f16): the fused attention covers the split and reads the merged tensor. */
static void check_fused(symc_dtype dt, variant v) {
    symc_module *m = build(dt, v);
    rt_engine *e = build_sm90(m, variant_name[v]);
    char line[4096];
    attention_line(e, line, sizeof line);
    CHECK_MSG(strstr(line, "(split)") && strstr(line, "q_heads (reshape)"),
              "%s: the attention does not cover the merged split: '%s'", variant_name[v], line);
    if (v == VIEWS) CHECK_MSG(strstr(line, "q_back (reshape)"), "views: the reshape back is not covered: '%s'", line);
    rt_engine_free(e);
    symc_module_destroy(m);
}

static void test_variant(symc_dtype dt, variant v) {
    if (v == OFF) setenv("SYMC_MERGE_PROJECTIONS", "0", 1);
    symc_module *mm = build(dt, v), *plain = build(dt, v);
    symc_error err;
    CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "%s: %s", variant_name[v], err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    unsetenv("SYMC_MERGE_PROJECTIONS");
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
    check_fused(SYMC_F16, BIAS);
    check_fused(SYMC_F16, VIEWS);
    return check_report("test_merge_proj");
}
