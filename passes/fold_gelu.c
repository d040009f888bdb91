/* The exact GELU, decomposed, folded back into one gelu node (pass_fold_gelu).
 *
 * Exporters without an ONNX Gelu op (torch.onnx's legacy exporter at opset
 * 17: BERT, ViT, ConvNeXt) write gelu(x) = x * 0.5 * (1 + erf(x / sqrt 2))
 * as five elementwise nodes, in one of two shapes:
 *   A (nn.GELU, F.gelu):  y = mul(mul(x, add(erf(div(x, sqrt2)), 1)), 0.5)
 *   B (transformers):     y = mul(mul(x, 0.5), add(erf(div(x, sqrt2)), 1))
 * each in any operand order of the commutative nodes, and with
 * mul(x, 1/sqrt2) in place of div(x, sqrt2). The match starts at each mul
 * and walks up to x; the mul then becomes gelu(x) with approximate "none"
 * in place (it keeps its output, its name and its place in node order, and
 * x is made before the chain), and the rest of the chain, unread, is left to
 * the dce pass. One node is one kernel that computes the whole formula in
 * registers, instead of five tensors written and read back (or a fused
 * group of five that the CUDA target's epilogue and row rules treat as
 * five), and it rounds once instead of five times.
 *
 * It folds only when the result is the same function up to rounding, and
 * leaves the nodes alone otherwise: the constants are one-element (scalar
 * or all-ones shape, possibly behind identities), of the chain's dtype, with
 * 1 and 0.5 exact and sqrt 2 (or 1/sqrt 2) within 1e-6 relative or equal to
 * its rounding to that dtype (f16 and bf16 hold sqrt 2 as 1.4140625, 1e-4
 * off); every intermediate is read by its one successor only and is not a
 * graph output (x itself may have other readers); x, the intermediates and
 * y share one float dtype (f32, f16, bf16, f64) and x's shape, so no
 * constant broadcasts the result up. The folded node is, if anything, more
 * accurate: the unfolded form loses the tail of 1 + erf(d) for negative x
 * to cancellation after erf's rounding, and form A in f16 overflows x * 2
 * above 32752, where gelu(x) = x fits.
 *
 * The tanh approximation too (transformers' NewGELUActivation, GPT-2's
 * gelu_new: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3))))),
 * eight nodes in forms A and B with the arm add(tanh(mul(sqrt(2/pi),
 * add(x, mul(0.044715, pow(x, 3))))), 1), any operand order, the exponent
 * exactly 3 and the two constants as the dtype holds them: it becomes gelu(x)
 * with approximate "tanh", which the CUDA target runs as cuBLASLt's GELU
 * epilogue when a GEMM with a bias makes x (GPT-2's c_fc). */
#include <math.h>
#include <stdlib.h>

#include "passes/passes.h"

/* The value of t when it is a one-element constant (through identities) of dtype dt whose
 * every dim is 1 (or a scalar): 1 with *v set, else 0. */
static int scalar_const(const ir_module *m, uint32_t t, symc_dtype dt, double *v) {
    uint32_t c = ir_constant_source(m, t);
    return c != IR_NONE && m->tensors[c].dtype == dt && ir_scalar_constant(m, c, v);
}

/* v is `want` (irrational) as a constant of dtype dt holds it: within 1e-6 relative, or
 * exactly want's rounding to dt (f16/bf16 cannot come closer than ~1e-4). */
static int near(double v, double want, symc_dtype dt) {
    uint8_t buf[8];
    symc_dtype_store(buf, dt, 0, want);
    return fabs(v - want) <= 1e-6 * want || v == symc_dtype_load(buf, dt, 0);
}

static int is_const(const ir_module *m, uint32_t t, symc_dtype dt, double want) {
    double v;
    return scalar_const(m, t, dt, &v) && v == want;
}

/* t is the chain's intermediate: one reader, not an output, dtype dt, made by a node of op
 * `op` (one output, two inputs for a binary op). Returns that node or IR_NONE. */
static uint32_t private_node(const ir_module *m, const uint32_t *uses, uint32_t t, ir_op op, symc_dtype dt) {
    uint32_t p = m->tensors[t].producer;
    if (p == IR_NONE || uses[t] != 1 || m->tensors[t].dtype != dt || m->nodes[p].op != op || m->nodes[p].n_out != 1)
        return IR_NONE;
    return m->nodes[p].n_in == (op == IR_OP_ERF || op == IR_OP_TANH ? 1u : 2u) ? p : IR_NONE;
}

static uint32_t erf_arm(const ir_module *m, const uint32_t *uses, uint32_t a, symc_dtype dt);

/* mul(u, v) with a scalar constant near `want` on one side (either order): the other operand, else
 * IR_NONE; n is the mul node */
static uint32_t scaled_by(const ir_module *m, uint32_t n, symc_dtype dt, double want) {
    double c;
    for (int k = 0; k < 2; k++)
        if (scalar_const(m, m->nodes[n].in[1 - k], dt, &c) && near(c, want, dt)) return m->nodes[n].in[k];
    return IR_NONE;
}

/* The tanh form's arm (transformers' NewGELUActivation, GPT-2's gelu_new): a = add(tanh(i), 1) with
 * i = mul(sqrt(2/pi), s), s = add(x, mul(0.044715, pow(x, 3))), either operand order throughout,
 * every intermediate private and of dtype dt: x, else IR_NONE. */
static uint32_t tanh_arm(const ir_module *m, const uint32_t *uses, uint32_t a, symc_dtype dt) {
    uint32_t an = private_node(m, uses, a, IR_OP_ADD, dt);
    if (an == IR_NONE) return IR_NONE;
    for (int s = 0; s < 2; s++) {
        if (!is_const(m, m->nodes[an].in[1 - s], dt, 1.0)) continue;
        uint32_t tn = private_node(m, uses, m->nodes[an].in[s], IR_OP_TANH, dt), in, sn, sum;
        if (tn == IR_NONE || (in = private_node(m, uses, m->nodes[tn].in[0], IR_OP_MUL, dt)) == IR_NONE ||
            (sum = scaled_by(m, in, dt, sqrt(2.0 / 3.14159265358979323846))) == IR_NONE ||
            (sn = private_node(m, uses, sum, IR_OP_ADD, dt)) == IR_NONE)
            continue;
        for (int k = 0; k < 2; k++) { /* add(x, cube term) */
            uint32_t x = m->nodes[sn].in[k], qn = private_node(m, uses, m->nodes[sn].in[1 - k], IR_OP_MUL, dt), cube,
                     pn;
            double e;
            if (qn == IR_NONE || (cube = scaled_by(m, qn, dt, 0.044715)) == IR_NONE ||
                (pn = private_node(m, uses, cube, IR_OP_POW, dt)) == IR_NONE || m->nodes[pn].in[0] != x ||
                !scalar_const(m, m->nodes[pn].in[1], dt, &e) || e != 3.0)
                continue;
            return x;
        }
    }
    return IR_NONE;
}

/* the GELU arm a (erf or tanh form) of x: x and *tanh_form set, else IR_NONE */
static uint32_t gelu_arm(const ir_module *m, const uint32_t *uses, uint32_t a, symc_dtype dt, int *tanh_form) {
    uint32_t x = erf_arm(m, uses, a, dt);
    *tanh_form = 0;
    if (x != IR_NONE) return x;
    x = tanh_arm(m, uses, a, dt);
    *tanh_form = x != IR_NONE;
    return x;
}

/* a = add(erf(d), 1) with d = div(x, sqrt2) or mul(x, 1/sqrt2), every intermediate private
 * and of dtype dt: x, else IR_NONE. */
static uint32_t erf_arm(const ir_module *m, const uint32_t *uses, uint32_t a, symc_dtype dt) {
    uint32_t an = private_node(m, uses, a, IR_OP_ADD, dt);
    if (an == IR_NONE) return IR_NONE;
    for (int s = 0; s < 2; s++) {
        uint32_t e = m->nodes[an].in[s];
        if (!is_const(m, m->nodes[an].in[1 - s], dt, 1.0)) continue;
        uint32_t en = private_node(m, uses, e, IR_OP_ERF, dt);
        if (en == IR_NONE) continue;
        uint32_t d = m->nodes[en].in[0], dn;
        double c;
        if ((dn = private_node(m, uses, d, IR_OP_DIV, dt)) != IR_NONE) {
            const ir_node *n = &m->nodes[dn];
            if (scalar_const(m, n->in[1], dt, &c) && near(c, sqrt(2.0), dt)) return n->in[0];
        } else if ((dn = private_node(m, uses, d, IR_OP_MUL, dt)) != IR_NONE) {
            const ir_node *n = &m->nodes[dn];
            for (int k = 0; k < 2; k++)
                if (scalar_const(m, n->in[1 - k], dt, &c) && near(c, sqrt(0.5), dt)) return n->in[k];
        }
    }
    return IR_NONE;
}

/* mul(u, v) is x times the GELU arm (either order): x, else IR_NONE */
static uint32_t times_arm(const ir_module *m, const uint32_t *uses, uint32_t u, uint32_t v, symc_dtype dt,
                          int *tanh_form) {
    uint32_t x = gelu_arm(m, uses, v, dt, tanh_form);
    if (x == u) return x;
    x = gelu_arm(m, uses, u, dt, tanh_form);
    return x == v ? x : IR_NONE;
}

/* x when node i (a mul) computes gelu(x) in form A or B (*tanh_form: the tanh approximation's), else
 * IR_NONE */
static uint32_t match(const ir_module *m, const uint32_t *uses, uint32_t i, int *tanh_form) {
    const ir_node *f = &m->nodes[i];
    if (f->op != IR_OP_MUL || f->n_in != 2 || f->n_out != 1) return IR_NONE;
    symc_dtype dt = m->tensors[f->out[0]].dtype;
    if (dt != SYMC_F32 && dt != SYMC_F16 && dt != SYMC_BF16 && dt != SYMC_F64) return IR_NONE;
    uint32_t x = IR_NONE;
    for (int s = 0; s < 2 && x == IR_NONE; s++) {
        uint32_t p = f->in[s], q = f->in[1 - s], pn;
        if (is_const(m, q, dt, 0.5)) { /* A: mul(mul(x, arm), 0.5) */
            if ((pn = private_node(m, uses, p, IR_OP_MUL, dt)) != IR_NONE)
                x = times_arm(m, uses, m->nodes[pn].in[0], m->nodes[pn].in[1], dt, tanh_form);
        } else if ((pn = private_node(m, uses, p, IR_OP_MUL, dt)) != IR_NONE) { /* B: mul(mul(x, 0.5), arm) */
            for (int k = 0; k < 2 && x == IR_NONE; k++) {
                uint32_t h = m->nodes[pn].in[k];
                if (is_const(m, m->nodes[pn].in[1 - k], dt, 0.5) && gelu_arm(m, uses, q, dt, tanh_form) == h) x = h;
            }
        }
    }
    if (x == IR_NONE || m->tensors[x].dtype != dt || m->tensors[x].rank < 0) return IR_NONE;
    return x;
}

/* every output of the chain from x to node i has x's shape (a constant broadcasting the
 * result up, or x itself broadcast by a constant, would change it) */
static int same_shapes(const ir_module *m, uint32_t x, uint32_t i) {
    const ir_tensor *xt = &m->tensors[x];
    uint32_t stack[8], n = 0, seen = 0;
    stack[n++] = i;
    while (n) {
        const ir_node *k = &m->nodes[stack[--n]];
        if (!ir_same_shape(xt, &m->tensors[k->out[0]])) return 0;
        if (++seen > 8) return 0;
        for (uint32_t j = 0; j < k->n_in; j++) {
            uint32_t t = k->in[j], p = m->tensors[t].producer;
            if (t == x || p == IR_NONE || ir_constant_source(m, t) != IR_NONE) continue;
            if (n == 8) return 0;
            stack[n++] = p;
        }
    }
    return 1;
}

symc_status pass_fold_gelu(ir_module *m, symc_error *err) {
    uint32_t *uses = NULL, folded = 0;
    const char *name = ir_strdup(m, "approximate"), *none = ir_strdup(m, "none"), *tanh_s = ir_strdup(m, "tanh");
    if (!name || !none || !tanh_s) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding GELUs");
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (m->nodes[i].op != IR_OP_MUL) continue;
        if (!uses && !(uses = ir_uses_counts(m)))
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding GELUs");
        int tanh_form = 0;
        uint32_t x = match(m, uses, i, &tanh_form);
        if (x == IR_NONE || !same_shapes(m, x, i)) continue;
        ir_attr *a = ir_alloc(m, sizeof *a);
        if (!a) {
            free(uses);
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding the GELU at '%s'", m->nodes[i].name);
        }
        *a = symc_attr_str(name, tanh_form ? tanh_s : none);
        ir_node *f = &m->nodes[i];
        f->op = IR_OP_GELU;
        f->in[0] = x;
        f->n_in = 1;
        f->attrs = a;
        f->n_attrs = 1;
        folded++;
        free(uses); /* recounted: x lost readers, the chain's nodes are dead */
        uses = NULL;
    }
    free(uses);
    if (folded) ir_fuse_drop(m); /* a plan's entries for the chain no longer describe it */
    return SYMC_OK;
}
