/* Folding the decomposed tanh GELU into one gelu node {approximate: tanh} (passes/fold_gelu.c,
 * pass_fold_gelu), on builder modules x [B, 3, 5] -> y of transformers' NewGELUActivation (GPT-2's
 * gelu_new), 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))):
 *   b          y = mul(mul(x, 0.5), add(tanh(mul(c1, add(x, mul(c2, pow(x, 3))))), 1))   (the export)
 *   b_swapped  every commutative operand swapped
 *   a          y = mul(mul(x, arm), 0.5)
 *   keep_c2    0.05 for 0.044715: left alone
 *   keep_pow   pow(x, 2): left alone
 *   keep_out   the tanh's result also a graph output: left alone
 * in f32 and f16. After the pipeline up to precision (through dce) a fold leaves gelu(x) {approximate: tanh} making
 * y and no tanh; a refusal leaves the tanh. Each runs on the reference backend at B = 1, 3 and 8
 * on x in [-6, 6): the folded result within 1e-6 (f32) or one f16 rounding (2^-11, f16) of the
 * formula in double, relative to max(|y|, 1e-3); left alone, bit-identical to the module with
 * shapes inferred only. On sm_90 a matmul + bias before the fold's GELU is one cuBLASLt call with
 * the GELU epilogue (tests/passes/test_fuse.c covers the plan; here the folded node's attribute). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "tests/check.h"
#include "tests/passes/run_module.h"

#define C 3
#define W 5
#define BMAX 8

typedef enum variant { FOLD_B, FOLD_B_SWAPPED, FOLD_A, KEEP_C2, KEEP_POW, KEEP_OUT, VARIANTS } variant;
static const char *variant_name[VARIANTS] = {"b", "b_swapped", "a", "keep_c2", "keep_pow", "keep_out"};
static int folds(variant v) { return v <= FOLD_A; }

static uint64_t rng = 0x243f6a8885a308d3ull;
static double urand(void) { /* [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static symc_tensor node(symc_module *m, const char *op, const char *name, symc_tensor a, symc_tensor b, int swap) {
    symc_error err;
    symc_tensor out = SYMC_TENSOR_NONE, in[2] = {swap ? b : a, swap ? a : b};
    CHECK_MSG(symc_add_node(m, op, name, in, b == SYMC_TENSOR_NONE ? 1 : 2, NULL, 0, &out, 1, &err) == SYMC_OK,
              "%s: %s", name, err.msg);
    return out;
}

static symc_tensor scalar(symc_module *m, const char *name, symc_dtype dt, double v) {
    uint8_t data[8];
    symc_dtype_store(data, dt, 0, v);
    symc_tensor t = SYMC_TENSOR_NONE;
    symc_error err;
    CHECK_MSG(symc_add_constant(m, name, dt, 0, NULL, data, symc_dtype_size(dt), &t, &err) == SYMC_OK, "%s", err.msg);
    return t;
}

static symc_module *build(symc_dtype dt, variant v) {
    symc_error err;
    symc_module *m = symc_module_create(variant_name[v], &err);
    symc_dim B;
    symc_tensor x;
    symc_declare_symbol(m, "B", 1, 3, BMAX, 1, &B, &err);
    symc_add_input(m, "x", dt, 3, (symc_dim[]){B, symc_dim_const(m, C), symc_dim_const(m, W)}, &x, &err);
    int sw = v == FOLD_B_SWAPPED;
    symc_tensor three = scalar(m, "three", dt, v == KEEP_POW ? 2.0 : 3.0);
    symc_tensor c2 = scalar(m, "c2", dt, v == KEEP_C2 ? 0.05 : 0.044715);
    symc_tensor c1 = scalar(m, "c1", dt, sqrt(2.0 / 3.14159265358979323846));
    symc_tensor one = scalar(m, "one", dt, 1.0), half = scalar(m, "half", dt, 0.5);
    symc_tensor p = node(m, "pow", "p", x, three, 0);
    symc_tensor q = node(m, "mul", "q", c2, p, sw);
    symc_tensor s = node(m, "add", "s", x, q, sw);
    symc_tensor i = node(m, "mul", "i", c1, s, sw);
    symc_tensor t = node(m, "tanh", "t", i, SYMC_TENSOR_NONE, 0);
    symc_tensor a = node(m, "add", "a", t, one, sw), y;
    if (v == FOLD_A) {
        symc_tensor xa = node(m, "mul", "xa", x, a, 0);
        y = node(m, "mul", "y", xa, half, 0);
    } else {
        symc_tensor h = node(m, "mul", "h", x, half, sw);
        y = node(m, "mul", "y", h, a, sw);
    }
    symc_mark_output(m, y, &err);
    if (v == KEEP_OUT) symc_mark_output(m, t, &err);
    return m;
}

static void check_structure(symc_module *m, symc_dtype dt, variant v) {
    uint32_t gelus = 0, tanhs = 0, y = 0;
    CHECK(ir_find_tensor(m, "y", &y));
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        tanhs += n->op == IR_OP_TANH;
        if (n->op != IR_OP_GELU) continue;
        gelus++;
        const ir_attr *a = ir_node_attr(n, "approximate");
        CHECK_MSG(a && a->kind == IR_ATTR_STR && !strcmp(a->s, "tanh") && n->out[0] == y,
                  "%s %s: the gelu is not the tanh form making y", variant_name[v], symc_dtype_name(dt));
    }
    CHECK_MSG(gelus == (folds(v) ? 1u : 0u) && tanhs == (folds(v) ? 0u : 1u), "%s %s: %u gelus, %u tanhs",
              variant_name[v], symc_dtype_name(dt), gelus, tanhs);
}

static double gelu_tanh(double x) {
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
}

static void check_numbers(symc_module *mm, symc_module *plain, symc_dtype dt, variant v) {
    static const int64_t bs[3] = {1, 3, BMAX};
    static double xv[BMAX * C * W], a[BMAX * C * W], b[BMAX * C * W];
    const double tol = dt == SYMC_F32 ? 1e-6 : 1.0 / 2048;
    for (int p = 0; p < 3; p++) {
        int64_t xd[3] = {bs[p], C, W}, n = bs[p] * C * W, na = 0, nb = 0;
        uint8_t tmp[8];
        for (int64_t i = 0; i < n; i++) {
            symc_dtype_store(tmp, dt, 0, 6.0 * urand());
            xv[i] = symc_dtype_load(tmp, dt, 0);
        }
        if (!run_module_ref(mm, xd, 3, dt, xv, a, n, &na, NULL) ||
            !run_module_ref(plain, xd, 3, dt, xv, b, n, &nb, NULL))
            return;
        CHECK_MSG(na == n && nb == n, "%s: %lld and %lld outputs", variant_name[v], (long long)na, (long long)nb);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; i++) {
            double want = gelu_tanh(xv[i]);
            bad += folds(v) ? fabs(a[i] - want) > tol * fmax(fabs(want), 1e-3) : a[i] != b[i];
        }
        CHECK_MSG(bad == 0, "%s %s B=%lld: %lld of %lld outputs off", variant_name[v], symc_dtype_name(dt),
                  (long long)bs[p], (long long)bad, (long long)n);
    }
}

int main(void) {
    for (int v = 0; v < VARIANTS; v++)
        for (int k = 0; k < 2; k++) {
            symc_dtype dt = k ? SYMC_F16 : SYMC_F32;
            symc_module *mm = build(dt, (variant)v), *plain = build(dt, (variant)v);
            symc_error err;
            CHECK_MSG(pass_run_passes(mm, NULL, NULL, "precision", &err) == SYMC_OK, "%s: %s", variant_name[v],
                      err.msg);
            CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
            check_structure(mm, dt, (variant)v);
            check_numbers(mm, plain, dt, (variant)v);
            symc_module_destroy(mm);
            symc_module_destroy(plain);
        }
    return check_report("test_fold_gelu_tanh");
}
