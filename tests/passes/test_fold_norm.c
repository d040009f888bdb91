/* The decomposed RMS norm folded into one rms_norm node (passes/fold_norm.c, pass_fold_rms_norm),
 * on builder modules with x [B, 6, 16] (B in [1, 4]) and a constant weight w [16]:
 *   form 0 (Llama's ONNX export): mul(w, mul(x, div(1, sqrt(add(mean(pow(x, 2)), eps)))))
 *   form 1 (rsqrt, x * x, no weight, operands swapped): mul(rsqrt(add(eps, mean(mul(x, x)))), x)
 *   form 2 (a division by the root, the weight second): mul(div(x, sqrt(add(mean(pow(x, 2)), eps))), w)
 *   form 3 (reciprocal): mul(w, mul(reciprocal(sqrt(add(mean(pow(x, 2)), eps))), x))
 *   form 4: form 0 in f16
 * and ones left alone: form 5, the mean over axis 1; form 6, the mean also a graph output; form 7,
 * the exponent 3.
 * Checked: after the passes one rms_norm (axis 2, the epsilon, with w where the form has it) and no
 * reduce_mean, sqrt or rsqrt left, or (left alone) no rms_norm; on the reference backend at B = 1
 * and 3 the folded module and the plain one against a double oracle (1e-6 relative, f16 2e-3);
 * SYMC_FOLD_RMS_NORM=0 leaves form 0 alone. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/passes/run_module.h"
#include "tests/test_node.h"

#define D 16
#define EPS 1e-5

static symc_tensor scalar(symc_module *m, const char *name, symc_dtype dt, double v) {
    symc_error err;
    symc_tensor t = SYMC_TENSOR_NONE;
    uint8_t buf[8];
    symc_dtype_store(buf, dt, 0, v);
    CHECK_MSG(symc_add_constant(m, name, dt, 0, NULL, buf, symc_dtype_size(dt), &t, &err) == SYMC_OK, "%s", err.msg);
    return t;
}

static double weight(int j) { return 0.5 + 0.125 * j; }

/* v as dtype dt stores it */
static double rounded(double v, symc_dtype dt) {
    uint8_t buf[8];
    symc_dtype_store(buf, dt, 0, v);
    return symc_dtype_load(buf, dt, 0);
}

static symc_module *build(int form) {
    symc_error err;
    const symc_dtype dt = form == 4 ? SYMC_F16 : SYMC_F32;
    symc_module *m = symc_module_create("rms", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_tensor x, w;
    symc_add_input(m, "x", dt, 3, (symc_dim[]){B, symc_dim_const(m, 6), symc_dim_const(m, D)}, &x, &err);
    uint8_t wb[D * 4];
    for (int j = 0; j < D; j++) symc_dtype_store(wb, dt, (size_t)j, weight(j));
    CHECK_MSG(symc_add_constant(m, "w", dt, 1, (int64_t[]){D}, wb, D * symc_dtype_size(dt), &w, &err) == SYMC_OK, "%s",
              err.msg);
    symc_tensor sq = form == 1
        ? test_node(m, "mul", "sq", (symc_tensor[]){x, x}, 2, NULL, 0)
        : test_node(m, "pow", "sq", (symc_tensor[]){x, scalar(m, "two", dt, form == 7 ? 3 : 2)}, 2, NULL, 0);
    symc_attr ra[2] = {symc_attr_ints("axes", (int64_t[]){form == 5 ? 1 : -1}, 1), symc_attr_int("keepdims", 1)};
    symc_tensor mean = test_node(m, "reduce_mean", "mean", &sq, 1, ra, 2);
    symc_tensor eps = scalar(m, "eps", dt, EPS);
    symc_tensor s = test_node(m, "add", "s", form == 1 ? (symc_tensor[]){eps, mean} : (symc_tensor[]){mean, eps}, 2,
                              NULL, 0);
    symc_tensor y;
    if (form == 1) {
        symc_tensor r = test_node(m, "rsqrt", "r", &s, 1, NULL, 0);
        y = test_node(m, "mul", "y", (symc_tensor[]){r, x}, 2, NULL, 0);
    } else if (form == 2) {
        symc_tensor root = test_node(m, "sqrt", "root", &s, 1, NULL, 0);
        symc_tensor n = test_node(m, "div", "n", (symc_tensor[]){x, root}, 2, NULL, 0);
        y = test_node(m, "mul", "y", (symc_tensor[]){n, w}, 2, NULL, 0);
    } else {
        symc_tensor root = test_node(m, "sqrt", "root", &s, 1, NULL, 0);
        symc_tensor r = form == 3
            ? test_node(m, "reciprocal", "r", &root, 1, NULL, 0)
            : test_node(m, "div", "r", (symc_tensor[]){scalar(m, "one", dt, 1), root}, 2, NULL, 0);
        symc_tensor n = form == 3 ? test_node(m, "mul", "n", (symc_tensor[]){r, x}, 2, NULL, 0)
                                  : test_node(m, "mul", "n", (symc_tensor[]){x, r}, 2, NULL, 0);
        y = test_node(m, "mul", "y", (symc_tensor[]){w, n}, 2, NULL, 0);
    }
    symc_mark_output(m, y, &err);
    if (form == 6) symc_mark_output(m, mean, &err);
    return m;
}

static uint32_t count(const ir_module *m, ir_op op) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) n += m->nodes[i].op == op;
    return n;
}

static void test_form(int form) {
    symc_error err;
    const int folds = form <= 4;
    const symc_dtype dt = form == 4 ? SYMC_F16 : SYMC_F32;
    symc_module *mm = build(form), *plain = build(form);
    CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "form %d: %s", form, err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(count(mm, IR_OP_RMS_NORM) == (uint32_t)folds, "form %d: %u rms_norm nodes", form,
              count(mm, IR_OP_RMS_NORM));
    if (folds) {
        CHECK_MSG(!count(mm, IR_OP_REDUCE_MEAN) && !count(mm, IR_OP_SQRT) && !count(mm, IR_OP_RSQRT), "form %d", form);
        for (uint32_t i = 0; i < mm->n_nodes; i++) {
            const ir_node *n = &mm->nodes[i];
            if (n->op != IR_OP_RMS_NORM) continue;
            const ir_attr *ax = ir_node_attr(n, "axis"), *ep = ir_node_attr(n, "epsilon");
            const double want_eps = rounded(EPS, dt);
            CHECK_MSG(ax && ax->i == 2 && ep && ep->f == want_eps, "form %d: axis / epsilon", form);
            CHECK_MSG(n->n_in == (form == 1 ? 1u : 2u), "form %d: %u inputs", form, n->n_in);
            CHECK(!strcmp(mm->tensors[n->out[0]].name, "y"));
        }
    } else CHECK_MSG(count(mm, IR_OP_REDUCE_MEAN) == 1, "form %d", form);
    static double xv[4 * 6 * D], a[4 * 6 * D], b[4 * 6 * D];
    for (int64_t bs = 1; bs <= 3; bs += 2) {
        const int64_t xd[3] = {bs, 6, D}, n = bs * 6 * D;
        for (int64_t i = 0; i < n; i++) xv[i] = (double)((i * 37) % 101) / 16.0 - 3.0;
        int64_t na = 0, nb = 0;
        if (!run_module_ref(mm, xd, 3, dt, xv, a, n, &na, NULL) ||
            !run_module_ref(plain, xd, 3, dt, xv, b, n, &nb, NULL))
            break;
        CHECK_MSG(na == n && nb == n, "form %d: %lld and %lld values", form, (long long)na, (long long)nb);
        if (form >= 5) continue; /* not RMS norms: left alone, the same module */
        const double tol = dt == SYMC_F16 ? 2e-3 : 1e-6;
        int bad = 0;
        for (int64_t r = 0; r < n / D; r++) {
            double ms = 0;
            for (int j = 0; j < D; j++) ms += rounded(xv[r * D + j], dt) * rounded(xv[r * D + j], dt);
            const double inv = 1.0 / sqrt(ms / D + rounded(EPS, dt));
            for (int j = 0; j < D; j++) {
                const double want = rounded(xv[r * D + j], dt) * inv * (form == 1 ? 1.0 : weight(j));
                const double sc = fabs(want) > 1 ? fabs(want) : 1;
                bad += fabs(a[r * D + j] - want) > tol * sc || fabs(b[r * D + j] - want) > 4 * tol * sc;
            }
        }
        CHECK_MSG(!bad, "form %d, B=%lld: %d values off the oracle", form, (long long)bs, bad);
    }
    symc_module_destroy(mm);
    symc_module_destroy(plain);
}

int main(void) {
    for (int form = 0; form <= 7; form++) test_form(form);
    symc_error err;
    setenv("SYMC_FOLD_RMS_NORM", "0", 1);
    symc_module *m = build(0);
    CHECK_MSG(pass_run_passes(m, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!count(m, IR_OP_RMS_NORM) && count(m, IR_OP_REDUCE_MEAN) == 1, "SYMC_FOLD_RMS_NORM=0 folded");
    symc_module_destroy(m);
    unsetenv("SYMC_FOLD_RMS_NORM");
    return check_report("test_fold_norm");
}
