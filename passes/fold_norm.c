/* The RMS norm, decomposed, folded back into one rms_norm node (pass_fold_rms_norm).
 *
 * Exporters without an RMSNormalization op (torch.onnx at opset 17, torch.export's aten graph)
 * write transformers' LlamaRMSNorm and T5LayerNorm, w * (x * rsqrt(mean(x^2, -1) + eps)), as five
 * to seven nodes:
 *   y = mul(w, mul(x, r)),  r = div(1, sqrt(s)) | reciprocal(sqrt(s)) | rsqrt(s),
 *   s = add(reduce_mean(pow(x, 2) | mul(x, x), axes [-1], keepdims), eps)
 * or y = mul(w, div(x, sqrt(s))), each in any operand order of the commutative nodes, and without
 * the weight (y = the normalized x). The CUDA target made three kernels of it: the row reduction,
 * the [.., 1] factor, and the multiply reading x again; one rms_norm is one row kernel that reads x
 * once (codegen/cuda_emit_reduce.c). The last node (the weight's mul, or the normalizing one)
 * becomes rms_norm(x[, w]) with axis rank - 1 and the epsilon in place (it keeps its output, name
 * and place; x is made before the chain), and dce removes the rest.
 *
 * It folds only when the result is the same function up to rounding: x, w, the intermediates and
 * y share one float dtype; the constants are one-element (through identities), 2 and 1 exact and
 * eps finite and >= 0; the mean is over the last axis alone, kept; every intermediate has one
 * reader and is not a graph output (x may have others); w is [D] for x's last dim D; y has x's
 * shape. The folded node rounds once, where the chain rounded at each of its nodes (the reference
 * computes it in double). SYMC_FOLD_RMS_NORM=0 leaves the chains (for comparison). */
#include <math.h>

#include "passes/passes.h"

/* the value of t when it is a one-element constant of dtype dt (through identities) */
static int scalar_of(const ir_module *m, uint32_t t, symc_dtype dt, double *v) {
    uint32_t c = ir_constant_source(m, t);
    return c != IR_NONE && m->tensors[c].dtype == dt && ir_scalar_constant(m, c, v);
}

static int is_scalar(const ir_module *m, uint32_t t, symc_dtype dt, double want) {
    double v;
    return scalar_of(m, t, dt, &v) && v == want;
}

/* t's producer when t is a private intermediate of dtype dt made by op (one output), else IR_NONE */
static uint32_t private_node(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t t, ir_op op,
                             symc_dtype dt) {
    uint32_t p = m->tensors[t].producer;
    if (p == IR_NONE || uses[t] != 1 || is_out[t] || m->tensors[t].dtype != dt || m->nodes[p].op != op ||
        m->nodes[p].n_out != 1)
        return IR_NONE;
    return p;
}

/* s = add(reduce_mean(x^2 over the last axis, kept), eps): x (*eps set), else IR_NONE */
static uint32_t mean_square(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t s, symc_dtype dt,
                            double *eps) {
    uint32_t an = private_node(m, uses, is_out, s, IR_OP_ADD, dt);
    if (an == IR_NONE || m->nodes[an].n_in != 2) return IR_NONE;
    for (int k = 0; k < 2; k++) {
        double e;
        uint32_t rn = private_node(m, uses, is_out, m->nodes[an].in[k], IR_OP_REDUCE_MEAN, dt);
        if (rn == IR_NONE || !scalar_of(m, m->nodes[an].in[1 - k], dt, &e) || !(e >= 0.0) || !isfinite(e)) continue;
        const ir_node *r = &m->nodes[rn];
        const ir_tensor *sq = &m->tensors[r->in[0]];
        const ir_attr *axes = ir_node_attr(r, "axes"), *keep = ir_node_attr(r, "keepdims");
        int64_t axis;
        if (sq->rank < 1 || !axes || axes->kind != IR_ATTR_INTS || axes->n != 1 ||
            !ir_axis_norm(axes->ints[0], sq->rank, &axis) || axis != sq->rank - 1 ||
            (keep && (keep->kind != IR_ATTR_INT || keep->i != 1)))
            continue;
        uint32_t pn = private_node(m, uses, is_out, r->in[0], IR_OP_POW, dt), x = IR_NONE;
        if (pn != IR_NONE && is_scalar(m, m->nodes[pn].in[1], dt, 2.0)) x = m->nodes[pn].in[0];
        else if ((pn = private_node(m, uses, is_out, r->in[0], IR_OP_MUL, dt)) != IR_NONE &&
                 m->nodes[pn].in[0] == m->nodes[pn].in[1])
            x = m->nodes[pn].in[0];
        if (x == IR_NONE) continue;
        *eps = e;
        return x;
    }
    return IR_NONE;
}

/* r = 1 / sqrt(s) as div(1, sqrt(s)), reciprocal(sqrt(s)) or rsqrt(s): s, else IR_NONE */
static uint32_t inv_root(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t r, symc_dtype dt) {
    uint32_t n;
    if ((n = private_node(m, uses, is_out, r, IR_OP_RSQRT, dt)) != IR_NONE) return m->nodes[n].in[0];
    uint32_t root = IR_NONE;
    if ((n = private_node(m, uses, is_out, r, IR_OP_RECIPROCAL, dt)) != IR_NONE) root = m->nodes[n].in[0];
    else if ((n = private_node(m, uses, is_out, r, IR_OP_DIV, dt)) != IR_NONE &&
             is_scalar(m, m->nodes[n].in[0], dt, 1.0))
        root = m->nodes[n].in[1];
    if (root == IR_NONE || (n = private_node(m, uses, is_out, root, IR_OP_SQRT, dt)) == IR_NONE) return IR_NONE;
    return m->nodes[n].in[0];
}

/* node i normalizes x: mul(x, r) either order or div(x, sqrt(s)), with s the mean square of
 * that same x: x (*eps set), else IR_NONE */
static uint32_t normalizes(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, symc_dtype dt,
                           double *eps) {
    const ir_node *n = &m->nodes[i];
    if (n->n_in != 2 || n->n_out != 1) return IR_NONE;
    if (n->op == IR_OP_MUL)
        for (int k = 0; k < 2; k++) {
            uint32_t s = inv_root(m, uses, is_out, n->in[1 - k], dt);
            if (s != IR_NONE && mean_square(m, uses, is_out, s, dt, eps) == n->in[k]) return n->in[k];
        }
    if (n->op == IR_OP_DIV) {
        uint32_t sn = private_node(m, uses, is_out, n->in[1], IR_OP_SQRT, dt);
        if (sn != IR_NONE && mean_square(m, uses, is_out, m->nodes[sn].in[0], dt, eps) == n->in[0]) return n->in[0];
    }
    return IR_NONE;
}

static symc_status fold_at(ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, int *rewrote,
                           symc_error *err) {
    ir_node *f = &m->nodes[i];
    if ((f->op != IR_OP_MUL && f->op != IR_OP_DIV) || f->n_in != 2 || f->n_out != 1) return SYMC_OK;
    const symc_dtype dt = m->tensors[f->out[0]].dtype;
    if (dt != SYMC_F32 && dt != SYMC_F16 && dt != SYMC_BF16 && dt != SYMC_F64) return SYMC_OK;
    double eps = 0.0;
    uint32_t x = normalizes(m, uses, is_out, i, dt, &eps), w = IR_NONE;
    /* else the weight's mul: w times the private normalized x */
    for (int k = 0; k < 2 && x == IR_NONE && f->op == IR_OP_MUL; k++) {
        const uint32_t t = f->in[1 - k], p = m->tensors[t].producer;
        if (p == IR_NONE || uses[t] != 1 || is_out[t] || m->tensors[t].dtype != dt) continue;
        if ((x = normalizes(m, uses, is_out, p, dt, &eps)) == IR_NONE) continue;
        const ir_tensor *wt = &m->tensors[f->in[k]], *xt = &m->tensors[x];
        if (wt->dtype != dt || wt->rank != 1 || xt->rank < 1 || wt->dims[0] != xt->dims[xt->rank - 1]) x = IR_NONE;
        else w = f->in[k];
    }
    if (x == IR_NONE || m->tensors[x].dtype != dt || !ir_same_shape(&m->tensors[x], &m->tensors[f->out[0]]))
        return SYMC_OK;
    if (w == IR_NONE) { /* the normalizing node: left to its weight's mul when one reads it (folded there) */
        const uint32_t r = pass_only_reader(m, uses, is_out, f->out[0]);
        if (r != IR_NONE && m->nodes[r].op == IR_OP_MUL && m->nodes[r].n_in == 2 && m->nodes[r].n_out == 1 &&
            m->tensors[m->nodes[r].out[0]].dtype == dt)
            for (int k = 0; k < 2; k++) {
                const ir_tensor *wt = &m->tensors[m->nodes[r].in[k]], *xt = &m->tensors[x];
                if (m->nodes[r].in[1 - k] == f->out[0] && wt->dtype == dt && wt->rank == 1 &&
                    wt->dims[0] == xt->dims[xt->rank - 1] && ir_same_shape(xt, &m->tensors[m->nodes[r].out[0]]))
                    return SYMC_OK;
            }
    }
    ir_attr *a = ir_alloc(m, 2 * sizeof *a);
    const char *axis = ir_strdup(m, "axis"), *epsilon = ir_strdup(m, "epsilon");
    if (!a || !axis || !epsilon)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding the RMS norm at '%s'", f->name);
    a[0] = symc_attr_int(axis, m->tensors[x].rank - 1);
    a[1] = symc_attr_float(epsilon, eps);
    f = &m->nodes[i];
    f->op = IR_OP_RMS_NORM;
    f->in[0] = x;
    f->in[1] = w;
    f->n_in = w == IR_NONE ? 1 : 2;
    f->attrs = a;
    f->n_attrs = 2;
    *rewrote = 1;
    return SYMC_OK;
}

symc_status pass_fold_rms_norm(ir_module *m, uint32_t *folded, symc_error *err) {
    uint32_t n = 0;
    if (folded) *folded = 0;
    if (pass_switched_off("SYMC_FOLD_RMS_NORM")) return SYMC_OK;
    symc_status st = pass_rewrite_walk(m, "fold-rms-norm", fold_at, &n, err);
    if (!st && n) ir_fuse_drop(m); /* a plan's entries for the chains no longer describe them */
    if (folded) *folded = n;
    return st;
}
