/* Symbolic shape inference: one rule an op, looked up by op id in a table.
 *
 * A rule reads its inputs' symbolic dims and attributes and writes its
 * outputs' dims as symshape expressions. When it needs a fact (two dims
 * equal, a dim equal to 1, a size that divides) it asks the prover first; a
 * TRUE answer costs nothing, FALSE is an error at this node, UNKNOWN becomes a
 * guard with the node as provenance. After each node every guard it added is
 * classified: one that would reject sizes the user declared valid (NARROWS)
 * or that never holds (FALSE) fails the build with symshape's explanation
 * and suggested fix; the others are kept for the runtime to check.
 *
 * Shape sub-graphs: small integer tensors also carry their elements as
 * expressions (ir_tensor.value) when the rule can compute them, starting at
 * shape_of and integer constants and flowing through gather, concat, slice
 * and transpose (of any rank, when the tensor is static and small: the legacy
 * exporter's pads go through [-1, 2] pairs), unsqueeze/squeeze/reshape, cast
 * and integer arithmetic. That is what lets
 * an importer turn ONNX's Shape -> Gather -> Concat -> Reshape into a reshape
 * with symbolic dims. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* Integer tensors with at most this many elements carry symbolic values. */
#define MAX_VALUE_ELEMS 64

typedef struct ctx {
    ir_module *m;
    sym_table *t;
    const ir_node *n;
    const char *opn;
    char prov[300];
    symc_error *err;
} ctx;

static const ir_tensor *in(ctx *c, uint32_t i) { return &c->m->tensors[c->n->in[i]]; }
static ir_tensor *out(ctx *c, uint32_t k) { return &c->m->tensors[c->n->out[k]]; }

static symc_status fail(ctx *c, symc_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static symc_status fail(ctx *c, symc_status code, const char *fmt, ...) {
    char msg[SYMC_ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return symc_error_setf(c->err, code, "%s: %s", c->prov, msg);
}

/* Text of an expression for messages (a few rotating buffers). */
static const char *txt(ctx *c, sym_expr e) {
    static _Thread_local char bufs[4][128];
    static _Thread_local int next;
    char *b = bufs[next++ & 3];
    if (e == SYM_NONE) return "-1";
    sym_print(c->t, e, b, sizeof b);
    return b;
}

static symc_status set_out(ctx *c, uint32_t k, int32_t rank, const sym_expr *dims) {
    if (rank > IR_MAX_RANK) return fail(c, SYMC_ERR_UNSUPPORTED, "output rank %d exceeds %d", (int)rank, IR_MAX_RANK);
    ir_tensor *o = out(c, k);
    for (int i = 0; i < rank; i++)
        if (dims[i] == SYM_NONE) {
            const symc_error *why = sym_table_error(c->t);
            return fail(c, why ? why->code : SYMC_ERR_INTERNAL, "output dim %d: %s", i,
                        why ? why->msg : "expression could not be built");
        }
    o->rank = rank;
    for (int i = 0; i < IR_MAX_RANK; i++) o->dims[i] = i < rank ? dims[i] : SYM_NONE;
    return SYMC_OK;
}

static symc_status same_as_input(ctx *c, uint32_t i) { return set_out(c, 0, in(c, i)->rank, in(c, i)->dims); }

/* Records a needed fact unless proven; fails if disproven. */
static symc_status need(ctx *c, sym_rel rel, sym_expr a, sym_expr b, const char *what) {
    sym_tri p;
    switch (rel) {
    case SYM_REL_EQ: p = sym_prove_eq(c->t, a, b); break;
    case SYM_REL_LE: p = sym_prove_le(c->t, a, b); break;
    case SYM_REL_LT: p = sym_prove_lt(c->t, a, b); break;
    case SYM_REL_NE: p = sym_prove_ne(c->t, a, b); break;
    default: p = SYM_UNKNOWN;
    }
    if (p == SYM_TRUE) return SYMC_OK;
    static const char *const rel_txt[] = {"==", "!=", "<=", "<", "divisible by", "broadcasts with"};
    if (p == SYM_FALSE)
        return fail(c, SYMC_ERR_VERIFY, "%s: %s %s %s never holds for the declared ranges", what, txt(c, a),
                    rel_txt[rel], txt(c, b));
    char prov[SYMC_ERROR_MSG_CAP];
    snprintf(prov, sizeof prov, "%s: %s", c->prov, what);
    uint32_t idx;
    return sym_guard_add(c->t, rel, a, b, prov, &idx, c->err);
}

static int64_t attr_int(ctx *c, const char *name, int64_t dflt) {
    const ir_attr *a = ir_node_attr(c->n, name);
    return a ? a->i : dflt;
}

static const ir_attr *attr(ctx *c, const char *name) { return ir_node_attr(c->n, name); }

/* An axis attribute's value in range: pass_infer_node made the node's negative axes
 * non-negative before its rule (ir_normalize_axes), so a negative one here is out of range. */
static symc_status norm_axis(ctx *c, int64_t axis, int32_t rank, const char *what, int32_t *outp) {
    if (axis < 0 || axis >= (int64_t)rank)
        return fail(c, SYMC_ERR_VERIFY, "%s %" PRId64 " is out of range for rank %d", what, axis, (int)rank);
    *outp = (int32_t)axis;
    return SYMC_OK;
}

static int const_of(ctx *c, sym_expr e, int64_t *v) { return e != SYM_NONE && sym_is_const(c->t, e, v); }

/* ---- symbolic element values ----------------------------------------------- */

static int is_int(symc_dtype d) { return d == SYMC_I64 || d == SYMC_I32; }

static symc_status set_value(ctx *c, uint32_t k, const sym_expr *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == SYM_NONE) return SYMC_OK; /* not expressible: leave unknown */
    sym_expr *copy = ir_alloc(c->m, (n ? n : 1) * sizeof *copy);
    if (!copy) return fail(c, SYMC_ERR_NOMEM, "out of memory");
    memcpy(copy, v, n * sizeof *copy);
    out(c, k)->value = copy;
    out(c, k)->n_value = n;
    return SYMC_OK;
}

/* Element count when static and small, else 0 (or -1 when unknown). */
static int64_t static_numel(ctx *c, const ir_tensor *t) {
    if (t->rank < 0) return -1;
    int64_t n = 1, v;
    for (int i = 0; i < t->rank; i++) {
        if (!const_of(c, t->dims[i], &v)) return -1;
        n *= v;
        if (n > MAX_VALUE_ELEMS) return -1;
    }
    return n;
}

/* Row-major strides of t's dims when every dim is a constant and the value
 * holds every element (numel <= MAX_VALUE_ELEMS); 0 otherwise. */
static int value_strides(ctx *c, const ir_tensor *t, int64_t *dims, int64_t *strides) {
    int64_t n = static_numel(c, t);
    if (!t->value || n < 0 || (int64_t)t->n_value != n) return 0;
    int64_t s = 1;
    for (int i = t->rank - 1; i >= 0; i--) {
        const_of(c, t->dims[i], &dims[i]);
        strides[i] = s;
        s *= dims[i];
    }
    return 1;
}

/* ---- rules ------------------------------------------------------------------ */

typedef symc_status (*rule_fn)(ctx *c);

static symc_status r_unary(ctx *c) {
    symc_status st = same_as_input(c, 0);
    const ir_tensor *x = in(c, 0);
    if (st || !x->value) return st;
    ir_op op = c->n->op;
    if (op == IR_OP_IDENTITY || (op == IR_OP_CAST && is_int(out(c, 0)->dtype) && is_int(x->dtype)))
        return set_value(c, 0, x->value, x->n_value);
    if (op == IR_OP_NEG) {
        sym_expr v[MAX_VALUE_ELEMS];
        for (uint32_t i = 0; i < x->n_value; i++) v[i] = sym_neg(c->t, x->value[i]);
        return set_value(c, 0, v, x->n_value);
    }
    return SYMC_OK;
}

static symc_status broadcast2(ctx *c, const sym_expr *a, int32_t na, const sym_expr *b, int32_t nb, sym_expr *o,
                              uint32_t *no) {
    return sym_broadcast(c->t, a, (uint32_t)na, b, (uint32_t)nb, o, no, c->prov, c->err);
}

/* Elementwise integer arithmetic on symbolic values, with NumPy broadcasting
 * of a scalar or 1-element operand (what shape sub-graphs use). */
static symc_status binary_values(ctx *c) {
    const ir_tensor *a = in(c, 0), *b = in(c, 1);
    ir_op op = c->n->op;
    if (!a->value || !b->value || !is_int(a->dtype)) return SYMC_OK;
    if (op != IR_OP_ADD && op != IR_OP_SUB && op != IR_OP_MUL && op != IR_OP_DIV && op != IR_OP_MIN &&
        op != IR_OP_MAX && op != IR_OP_MOD)
        return SYMC_OK;
    uint32_t n = a->n_value > b->n_value ? a->n_value : b->n_value;
    if ((a->n_value != n && a->n_value != 1) || (b->n_value != n && b->n_value != 1)) return SYMC_OK;
    if (static_numel(c, out(c, 0)) != (int64_t)n) return SYMC_OK;
    sym_expr v[MAX_VALUE_ELEMS];
    for (uint32_t i = 0; i < n; i++) {
        sym_expr x = a->value[a->n_value == 1 ? 0 : i], y = b->value[b->n_value == 1 ? 0 : i];
        switch (op) {
        case IR_OP_ADD: v[i] = sym_add(c->t, x, y); break;
        case IR_OP_SUB: v[i] = sym_sub(c->t, x, y); break;
        case IR_OP_MUL: v[i] = sym_mul(c->t, x, y); break;
        case IR_OP_MIN: v[i] = sym_min(c->t, x, y); break;
        case IR_OP_MAX: v[i] = sym_max(c->t, x, y); break;
        default:
            /* integer Div truncates toward zero and Mod (either fmod) takes
             * the sign of one side: both equal floordiv and mod when both
             * sides are provably non-negative, which shapes are */
            if (sym_range_of(c->t, x).lo < 0 || sym_range_of(c->t, y).lo < 1) return SYMC_OK;
            v[i] = op == IR_OP_DIV ? sym_floordiv(c->t, x, y) : sym_mod(c->t, x, y);
        }
    }
    return set_value(c, 0, v, n);
}

static symc_status r_binary(ctx *c) {
    sym_expr o[IR_MAX_RANK], o2[IR_MAX_RANK];
    uint32_t no = 0, no2 = 0;
    const ir_tensor *a = in(c, 0), *b = in(c, 1);
    symc_status st = broadcast2(c, a->dims, a->rank, b->dims, b->rank, o, &no);
    if (st) return st;
    if (c->n->op == IR_OP_WHERE) {
        const ir_tensor *y = in(c, 2);
        if ((st = broadcast2(c, o, (int32_t)no, y->dims, y->rank, o2, &no2))) return st;
        return set_out(c, 0, (int32_t)no2, o2);
    }
    if ((st = set_out(c, 0, (int32_t)no, o))) return st;
    return binary_values(c);
}

static symc_status r_reduce(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *axes = attr(c, "axes");
    int keep = attr_int(c, "keepdims", 1) != 0;
    int reduced[IR_MAX_RANK] = {0};
    if (!axes || axes->n == 0) {
        for (int i = 0; i < x->rank; i++) reduced[i] = 1;
    } else {
        for (uint32_t k = 0; k < axes->n; k++) {
            int32_t ax = 0;
            symc_status st = norm_axis(c, axes->ints[k], x->rank, "axis", &ax);
            if (st) return st;
            if (reduced[ax]) return fail(c, SYMC_ERR_VERIFY, "axis %d is reduced twice", (int)ax);
            reduced[ax] = 1;
        }
    }
    sym_expr o[IR_MAX_RANK];
    int32_t r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (!reduced[i]) o[r++] = x->dims[i];
        else if (keep) o[r++] = sym_const(c->t, 1);
    }
    return set_out(c, 0, r, o);
}

static symc_status r_softmax(ctx *c) {
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", -1), in(c, 0)->rank, "axis", &ax);
    return st ? st : same_as_input(c, 0);
}

/* layer_norm / rms_norm: scale and bias broadcast over dims [axis, rank). */
static symc_status r_norm(ctx *c) {
    const ir_tensor *x = in(c, 0);
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", -1), x->rank, "axis", &ax);
    if (st) return st;
    int32_t nd = x->rank - ax;
    for (uint32_t i = 1; i < c->n->n_in; i++) {
        const ir_tensor *p = in(c, i);
        if (p->rank > nd)
            return fail(c, SYMC_ERR_VERIFY, "%s '%s' has rank %d, more than the %d normalized dims",
                        i == 1 ? "scale" : "bias", p->name, (int)p->rank, (int)nd);
        for (int d = 0; d < p->rank; d++) {
            sym_expr want = x->dims[x->rank - p->rank + d], have = p->dims[d];
            int64_t one;
            if (const_of(c, have, &one) && one == 1) continue;
            char what[160];
            snprintf(what, sizeof what, "'%s' dim %d must match '%s' dim %d", p->name, d, x->name,
                     (int)(x->rank - p->rank + d));
            if ((st = need(c, SYM_REL_EQ, have, want, what))) return st;
        }
    }
    return same_as_input(c, 0);
}

static symc_status r_batch_norm(ctx *c) {
    const ir_tensor *x = in(c, 0);
    if (x->rank < 2) return fail(c, SYMC_ERR_VERIFY, "input '%s' has rank %d, needs >= 2", x->name, (int)x->rank);
    static const char *const names[] = {"", "scale", "bias", "mean", "var"};
    for (uint32_t i = 1; i < 5; i++) {
        const ir_tensor *p = in(c, i);
        if (p->rank != 1)
            return fail(c, SYMC_ERR_VERIFY, "%s '%s' has rank %d, needs 1", names[i], p->name, (int)p->rank);
        char what[160];
        snprintf(what, sizeof what, "%s '%s' length must equal the channels of '%s'", names[i], p->name, x->name);
        symc_status st = need(c, SYM_REL_EQ, p->dims[0], x->dims[1], what);
        if (st) return st;
    }
    return same_as_input(c, 0);
}

static symc_status r_matmul(ctx *c) {
    const ir_tensor *a = in(c, 0), *b = in(c, 1);
    if (a->rank < 1 || b->rank < 1)
        return fail(c, SYMC_ERR_VERIFY, "operands must have rank >= 1 ('%s' %d, '%s' %d)", a->name, (int)a->rank,
                    b->name, (int)b->rank);
    sym_expr one = sym_const(c->t, 1);
    /* NumPy: a 1-D operand is promoted to a matrix, and the added dim removed */
    sym_expr ad[IR_MAX_RANK + 1], bd[IR_MAX_RANK + 1];
    int32_t ar = a->rank, br = b->rank;
    memcpy(ad, a->dims, sizeof a->dims);
    memcpy(bd, b->dims, sizeof b->dims);
    if (ar == 1) {
        ad[1] = ad[0];
        ad[0] = one;
        ar = 2;
    }
    if (br == 1) {
        bd[1] = one;
        br = 2;
    }
    char what[200];
    snprintf(what, sizeof what, "inner dims of '%s' and '%s' must agree", a->name, b->name);
    symc_status st = need(c, SYM_REL_EQ, ad[ar - 1], bd[br - 2], what);
    if (st) return st;
    sym_expr o[IR_MAX_RANK + 2];
    uint32_t no = 0;
    if ((st = broadcast2(c, ad, ar - 2, bd, br - 2, o, &no))) return st;
    if (a->rank != 1) o[no++] = ad[ar - 2];
    if (b->rank != 1) o[no++] = bd[br - 1];
    return set_out(c, 0, (int32_t)no, o);
}

static symc_status r_gemm(ctx *c) {
    const ir_tensor *a = in(c, 0), *b = in(c, 1);
    if (a->rank != 2 || b->rank != 2)
        return fail(c, SYMC_ERR_VERIFY, "operands must be matrices ('%s' rank %d, '%s' rank %d)", a->name, (int)a->rank,
                    b->name, (int)b->rank);
    int ta = attr_int(c, "trans_a", 0) != 0, tb = attr_int(c, "trans_b", 0) != 0;
    sym_expr M = a->dims[ta ? 1 : 0], Ka = a->dims[ta ? 0 : 1];
    sym_expr Kb = b->dims[tb ? 1 : 0], N = b->dims[tb ? 0 : 1];
    char what[200];
    snprintf(what, sizeof what, "inner dims of '%s' and '%s' must agree", a->name, b->name);
    symc_status st = need(c, SYM_REL_EQ, Ka, Kb, what);
    if (st) return st;
    sym_expr o[2] = {M, N};
    if (c->n->n_in == 3) { /* C broadcasts to (M, N), one direction only */
        const ir_tensor *cc = in(c, 2);
        if (cc->rank > 2) return fail(c, SYMC_ERR_VERIFY, "C '%s' has rank %d, at most 2", cc->name, (int)cc->rank);
        for (int d = 0; d < cc->rank; d++) {
            sym_expr have = cc->dims[d], want = o[2 - cc->rank + d];
            int64_t v;
            if (const_of(c, have, &v) && v == 1) continue;
            snprintf(what, sizeof what, "C '%s' dim %d must be 1 or match the output", cc->name, d);
            if ((st = need(c, SYM_REL_EQ, have, want, what))) return st;
        }
    }
    return set_out(c, 0, 2, o);
}

/* Spatial attributes of conv/pool: one entry a spatial dim (pads twice),
 * defaults as in ONNX. */
typedef struct window {
    int64_t kernel[3], stride[3], dil[3], pad_lo[3], pad_hi[3];
} window;

static symc_status read_window(ctx *c, int nsp, window *w) {
    const char *names[] = {"strides", "dilations", "pads"};
    for (int i = 0; i < nsp; i++) w->stride[i] = w->dil[i] = 1, w->pad_lo[i] = w->pad_hi[i] = 0;
    for (int k = 0; k < 3; k++) {
        const ir_attr *a = attr(c, names[k]);
        if (!a) continue;
        uint32_t want = (uint32_t)(k == 2 ? 2 * nsp : nsp);
        if (a->n != want)
            return fail(c, SYMC_ERR_VERIFY, "attribute '%s' has %u entries, needs %u", names[k], a->n, want);
        for (int i = 0; i < nsp; i++) {
            if (k == 0) w->stride[i] = a->ints[i];
            if (k == 1) w->dil[i] = a->ints[i];
            if (k == 2) w->pad_lo[i] = a->ints[i], w->pad_hi[i] = a->ints[i + nsp];
        }
    }
    return SYMC_OK;
}

static symc_status window_out(ctx *c, const ir_tensor *x, const window *w, int nsp, int ceil_mode, sym_expr *o) {
    for (int i = 0; i < nsp; i++) {
        char what[SYMC_ERROR_MSG_CAP];
        snprintf(what, sizeof what, "%s (spatial dim %d of '%s')", c->prov, i, x->name);
        symc_status st = sym_window_out(c->t, x->dims[2 + i], w->kernel[i], w->stride[i], w->pad_lo[i], w->pad_hi[i],
                                        w->dil[i], ceil_mode, what, &o[2 + i], c->err);
        if (st) return st;
    }
    return SYMC_OK;
}

static symc_status r_conv(ctx *c) {
    const ir_tensor *x = in(c, 0), *wt = in(c, 1);
    if ((x->rank != 4 && x->rank != 5) || wt->rank != x->rank)
        return fail(c, SYMC_ERR_VERIFY,
                    "input '%s' and weight '%s' must both be 4-D (NCHW, OIHW) or 5-D (NCDHW, OIDHW), are %d-D and %d-D",
                    x->name, wt->name, (int)x->rank, (int)wt->rank);
    int nsp = x->rank - 2;
    window w;
    symc_status st = read_window(c, nsp, &w);
    if (st) return st;
    for (int i = 0; i < nsp; i++)
        if (!const_of(c, wt->dims[2 + i], &w.kernel[i]))
            return fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d = %s must be a constant", wt->name, 2 + i,
                        txt(c, wt->dims[2 + i]));
    int64_t g = attr_int(c, "group", 1);
    char what[200];
    snprintf(what, sizeof what, "channels of '%s' must equal %" PRId64 " groups x weight dim 1", x->name, g);
    if ((st = need(c, SYM_REL_EQ, x->dims[1], sym_scale(c->t, wt->dims[1], g), what))) return st;
    if (g > 1) {
        if (sym_prove_divisible(c->t, wt->dims[0], g) != SYM_TRUE) {
            snprintf(what, sizeof what, "output channels of '%s' must divide into %" PRId64 " groups", wt->name, g);
            uint32_t idx;
            char prov[SYMC_ERROR_MSG_CAP];
            snprintf(prov, sizeof prov, "%s: %s", c->prov, what);
            if ((st = sym_guard_add(c->t, SYM_REL_DIVISIBLE, wt->dims[0], sym_const(c->t, g), prov, &idx, c->err)))
                return st;
        }
    }
    if (c->n->n_in == 3) {
        const ir_tensor *b = in(c, 2);
        if (b->rank != 1) return fail(c, SYMC_ERR_VERIFY, "bias '%s' must be 1-D, is %d-D", b->name, (int)b->rank);
        snprintf(what, sizeof what, "bias '%s' length must equal the output channels", b->name);
        if ((st = need(c, SYM_REL_EQ, b->dims[0], wt->dims[0], what))) return st;
    }
    sym_expr o[5] = {x->dims[0], wt->dims[0]};
    if ((st = window_out(c, x, &w, nsp, 0, o))) return st;
    return set_out(c, 0, x->rank, o);
}

/* max_pool2d / avg_pool2d: NCHW, or NCDHW with 3 entries a spatial attribute. */
static symc_status r_pool(ctx *c) {
    const ir_tensor *x = in(c, 0);
    if (x->rank != 4 && x->rank != 5)
        return fail(c, SYMC_ERR_VERIFY, "input '%s' must be 4-D (NCHW) or 5-D (NCDHW), is %d-D", x->name, (int)x->rank);
    int nsp = x->rank - 2;
    window w;
    symc_status st = read_window(c, nsp, &w);
    if (st) return st;
    const ir_attr *k = attr(c, "kernel");
    if (k->n != (uint32_t)nsp)
        return fail(c, SYMC_ERR_VERIFY, "attribute 'kernel' has %u entries, needs %d", k->n, nsp);
    for (int i = 0; i < nsp; i++) w.kernel[i] = k->ints[i];
    for (int i = 0; i < nsp; i++)
        if (w.pad_lo[i] >= w.kernel[i] || w.pad_hi[i] >= w.kernel[i])
            return fail(c, SYMC_ERR_VERIFY, "padding of spatial dim %d must be smaller than the kernel %" PRId64, i,
                        w.kernel[i]);
    sym_expr o[5] = {x->dims[0], x->dims[1]};
    if ((st = window_out(c, x, &w, nsp, attr_int(c, "ceil_mode", 0) != 0, o))) return st;
    return set_out(c, 0, x->rank, o);
}

static symc_status r_global_pool(ctx *c) {
    const ir_tensor *x = in(c, 0);
    if (x->rank < 3) return fail(c, SYMC_ERR_VERIFY, "input '%s' must be at least 3-D (N, C, spatial...)", x->name);
    sym_expr o[IR_MAX_RANK] = {x->dims[0], x->dims[1]};
    for (int i = 2; i < x->rank; i++) o[i] = sym_const(c->t, 1);
    return set_out(c, 0, x->rank, o);
}

static symc_status r_reshape(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *s = attr(c, "shape");
    if (s->n > IR_MAX_RANK) return fail(c, SYMC_ERR_UNSUPPORTED, "target rank %u exceeds %d", s->n, IR_MAX_RANK);
    sym_expr o[IR_MAX_RANK];
    symc_status st = sym_reshape(c->t, x->dims, (uint32_t)x->rank, s->dims, s->n, o, c->prov, c->err);
    if (st) return st;
    if ((st = set_out(c, 0, (int32_t)s->n, o))) return st;
    return x->value ? set_value(c, 0, x->value, x->n_value) : SYMC_OK;
}

static symc_status r_transpose(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *p = attr(c, "perm");
    if ((int32_t)p->n != x->rank)
        return fail(c, SYMC_ERR_VERIFY, "perm has %u entries but '%s' has rank %d", p->n, x->name, (int)x->rank);
    sym_expr o[IR_MAX_RANK];
    for (uint32_t i = 0; i < p->n; i++) o[i] = x->dims[p->ints[i]];
    symc_status st = set_out(c, 0, x->rank, o);
    /* values: the permuted elements of a small static tensor (the legacy exporter's pads: [-1, 2] pairs
     * transposed into ONNX's begins-then-ends order) */
    int64_t xd[IR_MAX_RANK], xs[IR_MAX_RANK];
    if (st || !value_strides(c, x, xd, xs)) return st;
    sym_expr v[MAX_VALUE_ELEMS];
    for (uint32_t f = 0; f < x->n_value; f++) {
        int64_t rem = f, src = 0;
        for (int d = x->rank - 1; d >= 0; d--) { /* output dim d runs over input dim perm[d] */
            int64_t od = xd[p->ints[d]];
            src += (rem % od) * xs[p->ints[d]];
            rem /= od;
        }
        v[f] = x->value[src];
    }
    return set_value(c, 0, v, x->n_value);
}

static symc_status r_expand(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *s = attr(c, "shape");
    if (s->n > IR_MAX_RANK) return fail(c, SYMC_ERR_UNSUPPORTED, "target rank %u exceeds %d", s->n, IR_MAX_RANK);
    sym_expr o[IR_MAX_RANK];
    uint32_t no;
    symc_status st = broadcast2(c, x->dims, x->rank, s->dims, (int32_t)s->n, o, &no);
    return st ? st : set_out(c, 0, (int32_t)no, o);
}

static symc_status r_concat(ctx *c) {
    const ir_tensor *x = in(c, 0);
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", 0), x->rank, "axis", &ax);
    if (st) return st;
    sym_expr o[IR_MAX_RANK];
    memcpy(o, x->dims, sizeof o);
    for (uint32_t i = 1; i < c->n->n_in; i++) {
        const ir_tensor *y = in(c, i);
        if (y->rank != x->rank)
            return fail(c, SYMC_ERR_VERIFY, "input %u '%s' has rank %d but '%s' has rank %d", i, y->name, (int)y->rank,
                        x->name, (int)x->rank);
        for (int d = 0; d < x->rank; d++) {
            if (d == ax) continue;
            char what[200];
            snprintf(what, sizeof what, "dim %d of '%s' and '%s' must agree", d, x->name, y->name);
            if ((st = need(c, SYM_REL_EQ, y->dims[d], x->dims[d], what))) return st;
        }
        o[ax] = sym_add(c->t, o[ax], y->dims[ax]);
    }
    if ((st = set_out(c, 0, x->rank, o))) return st;
    /* values: 1-D concatenation of known pieces */
    if (x->rank != 1) return SYMC_OK;
    sym_expr v[MAX_VALUE_ELEMS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->n->n_in; i++) {
        const ir_tensor *y = in(c, i);
        if (!y->value || n + y->n_value > MAX_VALUE_ELEMS) return SYMC_OK;
        memcpy(v + n, y->value, y->n_value * sizeof *v);
        n += y->n_value;
    }
    return set_value(c, 0, v, n);
}

static symc_status r_slice(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *s = attr(c, "starts"), *e = attr(c, "ends"), *axes = attr(c, "axes"), *steps = attr(c, "steps");
    sym_expr o[IR_MAX_RANK];
    memcpy(o, x->dims, sizeof o);
    int seen[IR_MAX_RANK] = {0};
    /* for values: per axis the first element taken and the step, when constant (unsliced axes: 0 and 1) */
    int64_t vstart[IR_MAX_RANK] = {0}, vstep[IR_MAX_RANK], xd[IR_MAX_RANK], xs[IR_MAX_RANK];
    for (int d = 0; d < IR_MAX_RANK; d++) vstep[d] = 1;
    int value_ok = value_strides(c, x, xd, xs);
    for (uint32_t k = 0; k < s->n; k++) {
        int32_t ax = (int32_t)k;
        symc_status st;
        if (axes && (st = norm_axis(c, axes->ints[k], x->rank, "slice axis", &ax))) return st;
        if (!axes && k >= (uint32_t)x->rank)
            return fail(c, SYMC_ERR_VERIFY, "%u starts for rank %d", s->n, (int)x->rank);
        if (seen[ax]) return fail(c, SYMC_ERR_VERIFY, "axis %d is sliced twice", (int)ax);
        seen[ax] = 1;
        int64_t step = steps ? steps->ints[k] : 1;
        char what[SYMC_ERROR_MSG_CAP];
        snprintf(what, sizeof what, "%s (axis %d of '%s')", c->prov, (int)ax, x->name);
        if ((st = sym_slice_len(c->t, x->dims[ax], s->dims[k], e->dims[k], step, &o[ax], what, c->err))) return st;
        if (value_ok) {
            int64_t st0, dimv = xd[ax];
            value_ok = const_of(c, s->dims[k], &st0);
            if (value_ok) {
                if (st0 < 0) st0 += dimv;
                if (step > 0) st0 = st0 < 0 ? 0 : (st0 > dimv ? dimv : st0);
                else st0 = st0 < 0 ? -1 : (st0 > dimv - 1 ? dimv - 1 : st0);
                vstart[ax] = st0;
                vstep[ax] = step;
            }
        }
    }
    symc_status st = set_out(c, 0, x->rank, o);
    if (st || !value_ok) return st;
    /* values: the elements the slice takes, when the output is static too */
    int64_t od[IR_MAX_RANK], n = 1;
    for (int d = 0; d < x->rank; d++)
        if (!const_of(c, o[d], &od[d]) || (n *= od[d]) > MAX_VALUE_ELEMS) return SYMC_OK;
    sym_expr v[MAX_VALUE_ELEMS];
    for (int64_t f = 0; f < n; f++) {
        int64_t rem = f, src = 0;
        for (int d = x->rank - 1; d >= 0; d--) {
            int64_t i = rem % od[d], idx = vstart[d] + i * vstep[d];
            rem /= od[d];
            if (idx < 0 || idx >= xd[d]) return SYMC_OK;
            src += idx * xs[d];
        }
        v[f] = x->value[src];
    }
    return set_value(c, 0, v, (uint32_t)n);
}

static symc_status r_gather(ctx *c) {
    const ir_tensor *x = in(c, 0), *idx = in(c, 1);
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", 0), x->rank, "axis", &ax);
    if (st) return st;
    if (x->rank - 1 + idx->rank > IR_MAX_RANK)
        return fail(c, SYMC_ERR_UNSUPPORTED, "output rank %d exceeds %d", (int)(x->rank - 1 + idx->rank), IR_MAX_RANK);
    sym_expr o[IR_MAX_RANK];
    int32_t r = 0;
    for (int d = 0; d < ax; d++) o[r++] = x->dims[d];
    for (int d = 0; d < idx->rank; d++) o[r++] = idx->dims[d];
    for (int d = ax + 1; d < x->rank; d++) o[r++] = x->dims[d];
    if ((st = set_out(c, 0, r, o))) return st;
    /* values: picking elements of a known 1-D tensor with known constant indices */
    if (!x->value || x->rank != 1 || !idx->value) return SYMC_OK;
    sym_expr v[MAX_VALUE_ELEMS];
    for (uint32_t i = 0; i < idx->n_value; i++) {
        int64_t k;
        if (!const_of(c, idx->value[i], &k)) return SYMC_OK;
        if (k < 0) k += x->n_value;
        if (k < 0 || k >= (int64_t)x->n_value)
            return fail(c, SYMC_ERR_VERIFY, "index %" PRId64 " is out of range for '%s' of %u elements", k, x->name,
                        x->n_value);
        v[i] = x->value[k];
    }
    return set_value(c, 0, v, idx->n_value);
}

static symc_status r_squeeze(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *axes = attr(c, "axes");
    int drop[IR_MAX_RANK] = {0};
    symc_status st;
    if (!axes || axes->n == 0) {
        /* without axes every size-1 dim goes: only decidable when each dim is
         * provably 1 or provably not 1 (no silent specialization) */
        for (int d = 0; d < x->rank; d++) {
            sym_tri one = sym_prove_eq(c->t, x->dims[d], sym_const(c->t, 1));
            if (one == SYM_UNKNOWN)
                return fail(c, SYMC_ERR_UNSUPPORTED,
                            "squeeze without axes on '%s' whose dim %d = %s may or may not be 1; "
                            "give the axes explicitly",
                            x->name, d, txt(c, x->dims[d]));
            drop[d] = one == SYM_TRUE;
        }
    } else {
        for (uint32_t k = 0; k < axes->n; k++) {
            int32_t ax = 0;
            if ((st = norm_axis(c, axes->ints[k], x->rank, "axis", &ax))) return st;
            char what[200];
            snprintf(what, sizeof what, "squeezed dim %d of '%s' must be 1", (int)ax, x->name);
            if ((st = need(c, SYM_REL_EQ, x->dims[ax], sym_const(c->t, 1), what))) return st;
            drop[ax] = 1;
        }
    }
    sym_expr o[IR_MAX_RANK];
    int32_t r = 0;
    for (int d = 0; d < x->rank; d++)
        if (!drop[d]) o[r++] = x->dims[d];
    if ((st = set_out(c, 0, r, o))) return st;
    return x->value ? set_value(c, 0, x->value, x->n_value) : SYMC_OK;
}

static symc_status r_unsqueeze(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *axes = attr(c, "axes");
    int32_t r = x->rank + (int32_t)axes->n;
    if (r > IR_MAX_RANK) return fail(c, SYMC_ERR_UNSUPPORTED, "output rank %d exceeds %d", (int)r, IR_MAX_RANK);
    int ins[IR_MAX_RANK] = {0};
    for (uint32_t k = 0; k < axes->n; k++) {
        int32_t ax = 0;
        symc_status st = norm_axis(c, axes->ints[k], r, "axis", &ax);
        if (st) return st;
        if (ins[ax]) return fail(c, SYMC_ERR_VERIFY, "axis %d is given twice", (int)ax);
        ins[ax] = 1;
    }
    sym_expr o[IR_MAX_RANK];
    for (int d = 0, j = 0; d < r; d++) o[d] = ins[d] ? sym_const(c->t, 1) : x->dims[j++];
    symc_status st = set_out(c, 0, r, o);
    if (st) return st;
    return x->value ? set_value(c, 0, x->value, x->n_value) : SYMC_OK;
}

static symc_status r_flatten(ctx *c) {
    const ir_tensor *x = in(c, 0);
    int64_t axis = attr_int(c, "axis", 1); /* non-negative when in range (ir_normalize_axes) */
    if (axis < 0 || axis > x->rank)
        return fail(c, SYMC_ERR_VERIFY, "axis %" PRId64 " is out of range for rank %d", attr_int(c, "axis", 1),
                    (int)x->rank);
    sym_expr o[2] = {sym_const(c->t, 1), sym_const(c->t, 1)};
    for (int d = 0; d < x->rank; d++) o[d >= axis] = sym_mul(c->t, o[d >= axis], x->dims[d]);
    return set_out(c, 0, 2, o);
}

static symc_status r_split(ctx *c) {
    const ir_tensor *x = in(c, 0);
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", 0), x->rank, "axis", &ax);
    if (st) return st;
    const ir_attr *sizes = attr(c, "sizes");
    sym_expr total = sym_const(c->t, 0);
    for (uint32_t k = 0; k < sizes->n; k++) {
        sym_expr o[IR_MAX_RANK];
        memcpy(o, x->dims, sizeof o);
        o[ax] = sizes->dims[k];
        if (sym_range_of(c->t, o[ax]).lo < 0)
            return fail(c, SYMC_ERR_VERIFY, "split size %u = %s may be negative", k, txt(c, o[ax]));
        total = sym_add(c->t, total, o[ax]);
        if ((st = set_out(c, k, x->rank, o))) return st;
    }
    char what[200];
    snprintf(what, sizeof what, "split sizes must add up to dim %d of '%s'", (int)ax, x->name);
    if ((st = need(c, SYM_REL_EQ, total, x->dims[ax], what)) || !x->value || x->rank != 1) return st;
    /* values: consecutive pieces of a known 1-D tensor (a shape split into its dims) */
    int64_t at = 0, len;
    for (uint32_t k = 0; k < sizes->n; k++) {
        if (!const_of(c, sizes->dims[k], &len) || at + len > (int64_t)x->n_value) return SYMC_OK;
        if ((st = set_value(c, k, x->value + at, (uint32_t)len))) return st;
        at += len;
    }
    return SYMC_OK;
}

static symc_status r_pad(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *p = attr(c, "pads");
    if ((int32_t)p->n != 2 * x->rank)
        return fail(c, SYMC_ERR_VERIFY, "pads has %u entries, needs 2 x rank = %d", p->n, (int)(2 * x->rank));
    sym_expr o[IR_MAX_RANK];
    const ir_attr *mode = attr(c, "mode");
    int reflect = mode && !strcmp(mode->s, "reflect");
    for (int d = 0; d < x->rank; d++) {
        sym_expr lo = p->dims[d], hi = p->dims[d + x->rank];
        o[d] = sym_add(c->t, x->dims[d], sym_add(c->t, lo, hi));
        char what[200];
        snprintf(what, sizeof what, "padded dim %d of '%s' must not be negative", d, x->name);
        symc_status st = need(c, SYM_REL_LE, sym_const(c->t, 0), o[d], what);
        if (st) return st;
        if (reflect) { /* reflection reads pad elements past the edge: pad < dim */
            snprintf(what, sizeof what, "reflect padding of dim %d of '%s' must be smaller than the dim", d, x->name);
            if ((st = need(c, SYM_REL_LT, lo, x->dims[d], what)) || (st = need(c, SYM_REL_LT, hi, x->dims[d], what)))
                return st;
        }
    }
    return set_out(c, 0, x->rank, o);
}

static symc_status r_shape_of(ctx *c) {
    const ir_tensor *x = in(c, 0);
    sym_expr o[1] = {sym_const(c->t, x->rank)};
    symc_status st = set_out(c, 0, 1, o);
    return st ? st : set_value(c, 0, x->dims, (uint32_t)x->rank);
}

static symc_status r_constant(ctx *c) {
    ir_tensor *t = out(c, 0);
    if (!is_int(t->dtype) || t->constant >= c->m->n_constants) return SYMC_OK;
    int64_t n = static_numel(c, t);
    if (n < 0 || t->rank > 1) return SYMC_OK;
    const uint8_t *d = c->m->constants[t->constant].data;
    sym_expr v[MAX_VALUE_ELEMS];
    for (int64_t i = 0; i < n; i++) {
        int64_t x;
        if (t->dtype == SYMC_I64) memcpy(&x, d + 8 * i, 8);
        else {
            int32_t y;
            memcpy(&y, d + 4 * i, 4);
            x = y;
        }
        v[i] = sym_const(c->t, x);
    }
    return set_value(c, 0, v, (uint32_t)n);
}

/* ---- ops added for the ONNX importer ------------------------------------------ */

/* range: length max(ceil((limit - start) / delta), 0), which needs the sign of
 * delta; elements are known symbolically when the length is a small constant
 * (a Range feeding indices of a shape sub-graph). */
static symc_status r_range(ctx *c) {
    const ir_attr *a[3] = {attr(c, "start"), attr(c, "limit"), attr(c, "delta")};
    static const char *const names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++)
        if (a[i]->n != 1 || a[i]->dims[0] == SYM_NONE)
            return fail(c, SYMC_ERR_VERIFY, "attribute '%s' must hold one expression, has %u", names[i], a[i]->n);
    sym_expr start = a[0]->dims[0], limit = a[1]->dims[0], delta = a[2]->dims[0];
    sym_range dr = sym_range_of(c->t, delta);
    sym_expr len;
    if (dr.lo >= 1) len = sym_ceildiv(c->t, sym_sub(c->t, limit, start), delta);
    else if (dr.hi <= -1) len = sym_ceildiv(c->t, sym_sub(c->t, start, limit), sym_neg(c->t, delta));
    else return fail(c, SYMC_ERR_VERIFY, "delta %s may be zero or change sign for the declared ranges", txt(c, delta));
    if (len != SYM_NONE) len = sym_max(c->t, len, sym_const(c->t, 0));
    symc_status st = set_out(c, 0, 1, &len);
    if (st) return st;
    int64_t n;
    if (!is_int(out(c, 0)->dtype) || !const_of(c, len, &n) || n > MAX_VALUE_ELEMS) return SYMC_OK;
    sym_expr v[MAX_VALUE_ELEMS];
    for (int64_t i = 0; i < n; i++) v[i] = sym_add(c->t, start, sym_scale(c->t, delta, i));
    return set_value(c, 0, v, (uint32_t)n);
}

static symc_status r_tile(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *r = attr(c, "repeats");
    if ((int32_t)r->n != x->rank)
        return fail(c, SYMC_ERR_VERIFY, "repeats has %u entries but '%s' has rank %d", r->n, x->name, (int)x->rank);
    sym_expr o[IR_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        if (r->dims[d] == SYM_NONE) return fail(c, SYMC_ERR_VERIFY, "repeats entry %d is -1", d);
        if (sym_range_of(c->t, r->dims[d]).lo < 0)
            return fail(c, SYMC_ERR_VERIFY, "repeats entry %d = %s may be negative", d, txt(c, r->dims[d]));
        o[d] = sym_mul(c->t, x->dims[d], r->dims[d]);
    }
    return set_out(c, 0, x->rank, o);
}

static symc_status r_trilu(ctx *c) {
    const ir_tensor *x = in(c, 0);
    if (x->rank < 2) return fail(c, SYMC_ERR_VERIFY, "input '%s' has rank %d, needs >= 2", x->name, (int)x->rank);
    return same_as_input(c, 0);
}

/* gather_elements and scatter_elements: data and indices of one rank; along
 * every axis but `axis` an index position must exist in the data too. */
static symc_status elements_indices(ctx *c) {
    const ir_tensor *x = in(c, 0), *idx = in(c, 1);
    if (x->rank != idx->rank)
        return fail(c, SYMC_ERR_VERIFY, "indices '%s' have rank %d but data '%s' has rank %d", idx->name,
                    (int)idx->rank, x->name, (int)x->rank);
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", 0), x->rank, "axis", &ax);
    if (st) return st;
    for (int d = 0; d < x->rank; d++) {
        if (d == ax) continue;
        char what[200];
        snprintf(what, sizeof what, "dim %d of indices '%s' must not exceed that of data '%s'", d, idx->name, x->name);
        if ((st = need(c, SYM_REL_LE, idx->dims[d], x->dims[d], what))) return st;
    }
    return SYMC_OK;
}

/* gather_elements: the output is shaped like the indices. */
static symc_status r_gather_elements(ctx *c) {
    symc_status st = elements_indices(c);
    return st ? st : same_as_input(c, 1);
}

/* ---- ops added for ONNX conformance: reductions and indexing ------------------- */

/* argmax / argmin: the axis dropped, or kept as 1 */
static symc_status r_arg_reduce(ctx *c) {
    const ir_tensor *x = in(c, 0);
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", 0), x->rank, "axis", &ax);
    if (st) return st;
    int keep = attr_int(c, "keepdims", 1) != 0;
    sym_expr o[IR_MAX_RANK];
    int32_t r = 0;
    for (int d = 0; d < x->rank; d++)
        if (d != ax) o[r++] = x->dims[d];
        else if (keep) o[r++] = sym_const(c->t, 1);
    return set_out(c, 0, r, o);
}

/* topk: dim axis becomes k, which must not exceed it */
static symc_status r_topk(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *k = attr(c, "k");
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", -1), x->rank, "axis", &ax);
    if (st) return st;
    if (k->n != 1 || k->dims[0] == SYM_NONE)
        return fail(c, SYMC_ERR_VERIFY, "attribute 'k' must hold one expression, has %u", k->n);
    char what[200];
    snprintf(what, sizeof what, "k must not exceed dim %d of '%s'", (int)ax, x->name);
    if ((st = need(c, SYM_REL_LE, k->dims[0], x->dims[ax], what))) return st;
    if (sym_range_of(c->t, k->dims[0]).lo < 0)
        return fail(c, SYMC_ERR_VERIFY, "k = %s may be negative", txt(c, k->dims[0]));
    sym_expr o[IR_MAX_RANK];
    memcpy(o, x->dims, sizeof o);
    o[ax] = k->dims[0];
    return set_out(c, 0, x->rank, o);
}

/* ---- data-dependent sizes (docs/PLAN-data-dependent.md) ------------------------------- */

/* The unbacked symbol for output k dim d of this node, bounded by `bound`:
 * the one already there when a previous inference declared it with this
 * bound (the pipeline infers shapes again after its passes), else a new one,
 * named u<i> for the first free i, whose provenance says what it counts. */
static symc_status produced_symbol(ctx *c, uint32_t k, int32_t d, sym_expr bound, const char *what, sym_expr *outp) {
    const ir_tensor *o = out(c, k);
    sym_view v;
    if (o->rank > d && o->dims[d] != SYM_NONE && sym_expr_view(c->t, o->dims[d], &v) && v.kind == SYM_SYMBOL &&
        sym_symbol_bound(c->t, (sym_id)v.value) == bound) {
        *outp = o->dims[d];
        return SYMC_OK;
    }
    if (bound == SYM_NONE) return fail(c, SYMC_ERR_INTERNAL, "the bound of %s could not be built", what);
    char name[32], prov[SYMC_ERROR_MSG_CAP];
    sym_id id;
    for (uint32_t i = 0;; i++) {
        snprintf(name, sizeof name, "u%u", i);
        if (!sym_symbol_find(c->t, name, &id)) break;
    }
    snprintf(prov, sizeof prov, "%s of %s, known only at run time", what, c->prov);
    symc_status st = sym_symbol_new_unbacked(c->t, name, bound, prov, &id, c->err);
    if (st) return st;
    *outp = sym_var(c->t, id);
    return SYMC_OK;
}

static sym_expr numel_of(ctx *c, const ir_tensor *x) {
    sym_expr n = sym_const(c->t, 1);
    for (int d = 0; d < x->rank; d++) n = sym_mul(c->t, n, x->dims[d]);
    return n;
}

/* nonzero: [rank, u], u <= numel(x) */
static symc_status r_nonzero(ctx *c) {
    const ir_tensor *x = in(c, 0);
    sym_expr o[2] = {sym_const(c->t, x->rank), SYM_NONE};
    symc_status st = produced_symbol(c, 0, 1, numel_of(c, x), "the count of non-zero elements", &o[1]);
    return st ? st : set_out(c, 0, 2, o);
}

/* unique: indices [u], inverse [n], counts [u], where n is x's dim `axis`
 * (whole slices compared) or, without an axis, numel(x); u <= n. */
static symc_status r_unique(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *ax = attr(c, "axis");
    sym_expr n = numel_of(c, x);
    if (ax) {
        int32_t a = 0;
        symc_status st = norm_axis(c, ax->i, x->rank, "axis", &a);
        if (st) return st;
        n = x->dims[a];
    }
    int64_t sorted = attr_int(c, "sorted", 1);
    if (sorted != 0 && sorted != 1) return fail(c, SYMC_ERR_VERIFY, "sorted = %" PRId64 " must be 0 or 1", sorted);
    sym_expr u;
    symc_status st = produced_symbol(c, 0, 0, n, "the count of distinct values", &u);
    if (!st) st = set_out(c, 0, 1, &u);
    if (!st) st = set_out(c, 1, 1, &n);
    return st ? st : set_out(c, 2, 1, &u);
}

/* nms: selected [u, 3] (batch, class, box) from boxes [B, N, 4] and scores
 * [B, C, N]; u <= B*C*N. The optional inputs (max_output_boxes_per_class,
 * iou_threshold, score_threshold) are data read at run time, one element
 * each. */
static symc_status r_nms(ctx *c) {
    const ir_tensor *b = in(c, 0), *s = in(c, 1);
    int64_t four, cpb = attr_int(c, "center_point_box", 0);
    if (b->rank != 3 || !const_of(c, b->dims[2], &four) || four != 4)
        return fail(c, SYMC_ERR_VERIFY, "boxes '%s' must be [B, N, 4]", b->name);
    if (s->rank != 3) return fail(c, SYMC_ERR_VERIFY, "scores '%s' must be [B, C, N]", s->name);
    if (cpb != 0 && cpb != 1) return fail(c, SYMC_ERR_VERIFY, "center_point_box = %" PRId64 " must be 0 or 1", cpb);
    static const char *const role[] = {"", "", "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
    for (uint32_t k = 0; k < 2; k++)
        if (!(ir_dtype_is_float(in(c, k)->dtype)))
            return fail(c, SYMC_ERR_VERIFY, "%s '%s' must be a float tensor, is %s", k ? "scores" : "boxes",
                        in(c, k)->name, symc_dtype_name(in(c, k)->dtype));
    for (uint32_t k = 2; k < c->n->n_in; k++) {
        const ir_tensor *t = in(c, k);
        if (k == 2 ? !is_int(t->dtype) : !ir_dtype_is_float(t->dtype))
            return fail(c, SYMC_ERR_VERIFY, "%s '%s' must be %s, is %s", role[k], t->name,
                        k == 2 ? "an integer tensor" : "a float tensor", symc_dtype_name(t->dtype));
        char what[200];
        snprintf(what, sizeof what, "%s '%s' must hold one element", role[k], t->name);
        symc_status st = need(c, SYM_REL_EQ, numel_of(c, t), sym_const(c->t, 1), what);
        if (st) return st;
    }
    char what[200];
    snprintf(what, sizeof what, "boxes '%s' and scores '%s' must have the same batch", b->name, s->name);
    symc_status st = need(c, SYM_REL_EQ, s->dims[0], b->dims[0], what);
    if (st) return st;
    snprintf(what, sizeof what, "scores '%s' must have one entry a box of '%s'", s->name, b->name);
    if ((st = need(c, SYM_REL_EQ, s->dims[2], b->dims[1], what))) return st;
    sym_expr o[2] = {SYM_NONE, sym_const(c->t, 3)};
    sym_expr bound = sym_mul(c->t, sym_mul(c->t, s->dims[0], s->dims[1]), s->dims[2]);
    st = produced_symbol(c, 0, 0, bound, "the count of boxes selected", &o[0]);
    return st ? st : set_out(c, 0, 2, o);
}

/* item: i64 [u], u the value of a one-element integer tensor, u <= bound */
static symc_status r_item(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *b = attr(c, "bound");
    if (!is_int(x->dtype))
        return fail(c, SYMC_ERR_VERIFY, "'%s' must be an integer tensor, is %s", x->name, symc_dtype_name(x->dtype));
    if (!b || b->n != 1 || b->dims[0] == SYM_NONE)
        return fail(c, SYMC_ERR_VERIFY, "attribute 'bound' must hold one expression");
    if (sym_range_of(c->t, b->dims[0]).lo < 0)
        return fail(c, SYMC_ERR_VERIFY, "the bound %s may be negative", txt(c, b->dims[0]));
    char what[200];
    snprintf(what, sizeof what, "'%s' must hold one element", x->name);
    symc_status st = need(c, SYM_REL_EQ, numel_of(c, x), sym_const(c->t, 1), what);
    if (st) return st;
    sym_expr u;
    snprintf(what, sizeof what, "the value of '%s'", x->name);
    st = produced_symbol(c, 0, 0, b->dims[0], what, &u);
    return st ? st : set_out(c, 0, 1, &u);
}

static symc_status r_cumsum(ctx *c) {
    int32_t ax = 0;
    symc_status st = norm_axis(c, attr_int(c, "axis", 0), in(c, 0)->rank, "axis", &ax);
    return st ? st : same_as_input(c, 0);
}

/* gather_nd / scatter_nd: data [B.., D..], indices [B.., Q.., m] with m a
 * constant <= rank - b; the batch dims of both must agree. */
static symc_status nd_shapes(ctx *c, int64_t b, int64_t *m) {
    const ir_tensor *x = in(c, 0), *idx = in(c, 1);
    if (idx->rank < 1 || b < 0 || b >= idx->rank || b >= x->rank)
        return fail(c, SYMC_ERR_VERIFY,
                    "indices '%s' (rank %d) and data '%s' (rank %d) do not fit batch_dims = %" PRId64, idx->name,
                    (int)idx->rank, x->name, (int)x->rank, b);
    if (!const_of(c, idx->dims[idx->rank - 1], m))
        return fail(c, SYMC_ERR_UNSUPPORTED, "the last dim of indices '%s' is %s; it must be a constant", idx->name,
                    txt(c, idx->dims[idx->rank - 1]));
    if (*m < 1 || *m > x->rank - b)
        return fail(c, SYMC_ERR_VERIFY, "the last dim of indices '%s' is %" PRId64 "; it must be in [1, %" PRId64 "]",
                    idx->name, *m, (int64_t)x->rank - b);
    for (int64_t d = 0; d < b; d++) {
        char what[200];
        snprintf(what, sizeof what, "batch dim %d of indices '%s' must equal that of data '%s'", (int)d, idx->name,
                 x->name);
        symc_status st = need(c, SYM_REL_EQ, idx->dims[d], x->dims[d], what);
        if (st) return st;
    }
    return SYMC_OK;
}

static symc_status r_gather_nd(ctx *c) {
    const ir_tensor *x = in(c, 0), *idx = in(c, 1);
    int64_t b = attr_int(c, "batch_dims", 0), m;
    symc_status st = nd_shapes(c, b, &m);
    if (st) return st;
    sym_expr o[2 * IR_MAX_RANK];
    int32_t r = 0;
    for (int d = 0; d < idx->rank - 1; d++) o[r++] = idx->dims[d];
    for (int64_t d = b + m; d < x->rank; d++) o[r++] = x->dims[d];
    return set_out(c, 0, r, o);
}

/* updates must have dims want[0..n) */
static symc_status need_updates(ctx *c, const sym_expr *want, int32_t n) {
    const ir_tensor *u = in(c, 2);
    if (u->rank != n)
        return fail(c, SYMC_ERR_VERIFY, "updates '%s' have rank %d, must have %d", u->name, (int)u->rank, (int)n);
    for (int d = 0; d < n; d++) {
        char what[200];
        snprintf(what, sizeof what, "dim %d of updates '%s'", d, u->name);
        symc_status st = need(c, SYM_REL_EQ, u->dims[d], want[d], what);
        if (st) return st;
    }
    return SYMC_OK;
}

static symc_status r_scatter_nd(ctx *c) {
    const ir_tensor *x = in(c, 0), *idx = in(c, 1);
    int64_t m;
    symc_status st = nd_shapes(c, 0, &m);
    if (st) return st;
    sym_expr w[2 * IR_MAX_RANK];
    int32_t r = 0;
    for (int d = 0; d < idx->rank - 1; d++) w[r++] = idx->dims[d];
    for (int64_t d = m; d < x->rank; d++) w[r++] = x->dims[d];
    if ((st = need_updates(c, w, r))) return st;
    return same_as_input(c, 0);
}

static symc_status r_scatter_elements(ctx *c) {
    const ir_tensor *idx = in(c, 1);
    symc_status st = elements_indices(c);
    if (st) return st;
    if ((st = need_updates(c, idx->dims, idx->rank))) return st;
    return same_as_input(c, 0);
}

/* conv_transpose: spatial attributes of nsp entries (pads 2 x nsp). */
static symc_status ct_ints(ctx *c, const char *name, int nsp, int64_t dflt, int64_t *v) {
    const ir_attr *a = attr(c, name);
    int want = !strcmp(name, "pads") ? 2 * nsp : nsp;
    if (a && (int)a->n != want)
        return fail(c, SYMC_ERR_VERIFY, "attribute '%s' has %u entries, needs %d", name, a->n, want);
    for (int i = 0; i < want; i++) v[i] = a ? a->ints[i] : dflt;
    return SYMC_OK;
}

static symc_status r_conv_transpose(ctx *c) {
    const ir_tensor *x = in(c, 0), *wt = in(c, 1);
    int nsp = x->rank - 2;
    if (nsp < 1 || nsp > 3 || wt->rank != x->rank)
        return fail(c, SYMC_ERR_VERIFY, "input '%s' (rank %d) and weight '%s' (rank %d) must both have rank 3 to 5",
                    x->name, (int)x->rank, wt->name, (int)wt->rank);
    int64_t s[3], d[3], p[6], op[3], g = attr_int(c, "group", 1);
    symc_status st;
    if ((st = ct_ints(c, "strides", nsp, 1, s)) || (st = ct_ints(c, "dilations", nsp, 1, d)) ||
        (st = ct_ints(c, "pads", nsp, 0, p)) || (st = ct_ints(c, "output_padding", nsp, 0, op)))
        return st;
    char what[200];
    snprintf(what, sizeof what, "channels of '%s' must equal weight '%s' dim 0", x->name, wt->name);
    if ((st = need(c, SYM_REL_EQ, x->dims[1], wt->dims[0], what))) return st;
    if (g > 1 && sym_prove_divisible(c->t, x->dims[1], g) != SYM_TRUE) {
        snprintf(what, sizeof what, "channels of '%s' must divide into %" PRId64 " groups", x->name, g);
        char prov[SYMC_ERROR_MSG_CAP];
        uint32_t idx;
        snprintf(prov, sizeof prov, "%s: %s", c->prov, what);
        if ((st = sym_guard_add(c->t, SYM_REL_DIVISIBLE, x->dims[1], sym_const(c->t, g), prov, &idx, c->err)))
            return st;
    }
    sym_expr o[IR_MAX_RANK] = {x->dims[0], sym_scale(c->t, wt->dims[1], g)};
    if (c->n->n_in == 3) {
        const ir_tensor *b = in(c, 2);
        if (b->rank != 1) return fail(c, SYMC_ERR_VERIFY, "bias '%s' must be 1-D, is %d-D", b->name, (int)b->rank);
        snprintf(what, sizeof what, "bias '%s' length must equal the output channels", b->name);
        if ((st = need(c, SYM_REL_EQ, b->dims[0], o[1], what))) return st;
    }
    for (int i = 0; i < nsp; i++) {
        int64_t k;
        if (!const_of(c, wt->dims[2 + i], &k))
            return fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d = %s must be a constant", wt->name, 2 + i,
                        txt(c, wt->dims[2 + i]));
        if (s[i] < 1 || d[i] < 1 || op[i] < 0)
            return fail(c, SYMC_ERR_VERIFY, "stride, dilation (>= 1) or output_padding (>= 0) of spatial dim %d", i);
        o[2 + i] = sym_add_const(c->t, sym_scale(c->t, sym_add_const(c->t, x->dims[2 + i], -1), s[i]),
                                 d[i] * (k - 1) + 1 - p[i] - p[nsp + i] + op[i]);
        snprintf(what, sizeof what, "output dim %d of the transposed convolution must be positive", 2 + i);
        if ((st = need(c, SYM_REL_LE, sym_const(c->t, 1), o[2 + i], what))) return st;
    }
    return set_out(c, 0, x->rank, o);
}

/* resize: the output dims are the `sizes` attribute (the importer writes
 * them as expressions of the input's symbols: floor(in * scale) is
 * in * num // den for the scale's exact binary fraction num / den). */
static symc_status r_resize(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *s = attr(c, "sizes"), *sc = attr(c, "scales"), *roi = attr(c, "roi");
    if ((int32_t)s->n != x->rank)
        return fail(c, SYMC_ERR_VERIFY, "sizes has %u entries but '%s' has rank %d", s->n, x->name, (int)x->rank);
    if (sc && (int32_t)sc->n != x->rank)
        return fail(c, SYMC_ERR_VERIFY, "scales has %u entries but '%s' has rank %d", sc->n, x->name, (int)x->rank);
    if (roi && (int32_t)roi->n != 2 * x->rank)
        return fail(c, SYMC_ERR_VERIFY, "roi has %u entries, needs 2 x rank = %d", roi->n, (int)(2 * x->rank));
    for (int d = 0; d < x->rank; d++) {
        char what[200];
        snprintf(what, sizeof what, "resized dim %d of '%s' must not be negative", d, x->name);
        symc_status st = need(c, SYM_REL_LE, sym_const(c->t, 0), s->dims[d], what);
        if (st) return st;
    }
    return set_out(c, 0, x->rank, s->dims);
}

/* grid_sample: x [N, C, D..], grid [N, O.., r] with r = rank - 2 spatial
 * dims; output [N, C, O..]. */
static symc_status r_grid_sample(ctx *c) {
    const ir_tensor *x = in(c, 0), *g = in(c, 1);
    int32_t r = x->rank - 2;
    int64_t last;
    if (r < 1 || r > 3 || g->rank != x->rank)
        return fail(c, SYMC_ERR_VERIFY, "input '%s' (rank %d) and grid '%s' (rank %d) must both have rank 3 to 5",
                    x->name, (int)x->rank, g->name, (int)g->rank);
    if (!const_of(c, g->dims[r + 1], &last) || last != r)
        return fail(c, SYMC_ERR_VERIFY, "the last dim of grid '%s' is %s, must be %d (the spatial dims of '%s')",
                    g->name, txt(c, g->dims[r + 1]), (int)r, x->name);
    char what[200];
    snprintf(what, sizeof what, "batch of grid '%s' must equal the batch of '%s'", g->name, x->name);
    symc_status st = need(c, SYM_REL_EQ, g->dims[0], x->dims[0], what);
    if (st) return st;
    sym_expr o[IR_MAX_RANK] = {x->dims[0], x->dims[1]};
    for (int32_t i = 0; i < r; i++) o[2 + i] = g->dims[1 + i];
    return set_out(c, 0, x->rank, o);
}

/* dft: the axis becomes length (length / 2 + 1 forward onesided), the last
 * dim 2 (1 for inverse onesided). */
static symc_status r_dft(ctx *c) {
    const ir_tensor *x = in(c, 0);
    int64_t axis = attr_int(c, "axis", 0), n = attr_int(c, "length", 0), last;
    int inverse = attr_int(c, "inverse", 0) != 0, onesided = attr_int(c, "onesided", 0) != 0;
    if (x->rank < 2 || axis < 0 || axis >= x->rank - 1)
        return fail(c, SYMC_ERR_VERIFY, "axis %" PRId64 " must be a dim of '%s' (rank %d) before the last", axis,
                    x->name, (int)x->rank);
    if (!const_of(c, x->dims[x->rank - 1], &last) || (last != 1 && last != 2))
        return fail(c, SYMC_ERR_VERIFY, "the last dim of '%s' is %s, must be 1 (real) or 2 (complex)", x->name,
                    txt(c, x->dims[x->rank - 1]));
    if (n < 1) return fail(c, SYMC_ERR_VERIFY, "length %" PRId64 " must be >= 1", n);
    sym_expr o[IR_MAX_RANK];
    memcpy(o, x->dims, sizeof o);
    o[axis] = sym_const(c->t, !inverse && onesided ? n / 2 + 1 : n);
    o[x->rank - 1] = sym_const(c->t, inverse && onesided ? 1 : 2);
    return set_out(c, 0, x->rank, o);
}

/* col2im: [N, C * prod(block), L] -> [N, C, image..]; L must be the number
 * of sliding windows over the padded image. */
static symc_status r_col2im(ctx *c) {
    const ir_tensor *x = in(c, 0);
    const ir_attr *img = attr(c, "image_shape"), *blk = attr(c, "block_shape");
    if (x->rank != 3 || img->n < 1 || img->n > 3 || blk->n != img->n)
        return fail(c, SYMC_ERR_VERIFY, "input '%s' must be 3-D and image_shape, block_shape 1 to 3 entries each",
                    x->name);
    int nsp = (int)img->n;
    window w;
    symc_status st = read_window(c, nsp, &w);
    if (st) return st;
    int64_t k = 1, l = 1;
    for (int i = 0; i < nsp; i++) {
        int64_t ext = w.dil[i] * (blk->ints[i] - 1) + 1, padded = img->ints[i] + w.pad_lo[i] + w.pad_hi[i];
        if (blk->ints[i] < 1 || w.stride[i] < 1 || w.dil[i] < 1 || img->ints[i] < 0 || padded < ext)
            return fail(c, SYMC_ERR_VERIFY, "block %" PRId64 " does not fit image dim %d (%" PRId64 " padded)",
                        blk->ints[i], i, padded);
        k *= blk->ints[i];
        l *= (padded - ext) / w.stride[i] + 1;
    }
    char what[200];
    snprintf(what, sizeof what, "dim 2 of '%s' must be the %" PRId64 " block positions", x->name, l);
    if ((st = need(c, SYM_REL_EQ, x->dims[2], sym_const(c->t, l), what))) return st;
    if (sym_prove_divisible(c->t, x->dims[1], k) != SYM_TRUE)
        return fail(c, SYMC_ERR_VERIFY, "dim 1 of '%s' (%s) must be a multiple of the block size %" PRId64, x->name,
                    txt(c, x->dims[1]), k);
    sym_expr o[5] = {x->dims[0], sym_floordiv(c->t, x->dims[1], sym_const(c->t, k))};
    for (int i = 0; i < nsp; i++) o[2 + i] = sym_const(c->t, img->ints[i]);
    return set_out(c, 0, 2 + nsp, o);
}

/* det: the last two dims (square) dropped. */
static symc_status r_det(ctx *c) {
    const ir_tensor *x = in(c, 0);
    if (x->rank < 2) return fail(c, SYMC_ERR_VERIFY, "input '%s' must have rank >= 2", x->name);
    char what[200];
    snprintf(what, sizeof what, "the matrices of '%s' must be square", x->name);
    symc_status st = need(c, SYM_REL_EQ, x->dims[x->rank - 1], x->dims[x->rank - 2], what);
    return st ? st : set_out(c, 0, x->rank - 2, x->dims);
}

/* roi_align: [R, C, output_height, output_width] from x [N, C, H, W], rois
 * [R, 4] and batch indices [R]. */
static symc_status r_roi_align(ctx *c) {
    const ir_tensor *x = in(c, 0), *r = in(c, 1), *b = in(c, 2);
    int64_t four;
    if (x->rank != 4 || r->rank != 2 || b->rank != 1 || !const_of(c, r->dims[1], &four) || four != 4)
        return fail(c, SYMC_ERR_VERIFY, "x '%s' must be 4-D, rois '%s' [R, 4], batch_indices '%s' [R]", x->name,
                    r->name, b->name);
    char what[200];
    snprintf(what, sizeof what, "batch_indices '%s' must have one entry a box of '%s'", b->name, r->name);
    symc_status st = need(c, SYM_REL_EQ, b->dims[0], r->dims[0], what);
    if (st) return st;
    int64_t oh = attr_int(c, "output_height", 1), ow = attr_int(c, "output_width", 1);
    if (oh < 1 || ow < 1)
        return fail(c, SYMC_ERR_VERIFY, "output size %" PRId64 " x %" PRId64 " must be positive", oh, ow);
    sym_expr o[4] = {r->dims[0], x->dims[1], sym_const(c->t, oh), sym_const(c->t, ow)};
    return set_out(c, 0, 4, o);
}

static rule_fn rule_for(ir_op op) {
    switch (ir_op_get(op)->category) {
    case IR_CAT_UNARY: return r_unary;
    case IR_CAT_BINARY: return r_binary;
    case IR_CAT_REDUCE: return op == IR_OP_ARGMAX || op == IR_OP_ARGMIN ? r_arg_reduce : r_reduce;
    default: break;
    }
    switch (op) {
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX: return r_softmax;
    case IR_OP_LAYER_NORM:
    case IR_OP_RMS_NORM: return r_norm;
    case IR_OP_BATCH_NORM: return r_batch_norm;
    case IR_OP_MATMUL: return r_matmul;
    case IR_OP_GEMM: return r_gemm;
    case IR_OP_CONV2D: return r_conv;
    case IR_OP_MAX_POOL2D:
    case IR_OP_AVG_POOL2D: return r_pool;
    case IR_OP_GLOBAL_AVG_POOL: return r_global_pool;
    case IR_OP_RESHAPE: return r_reshape;
    case IR_OP_TRANSPOSE: return r_transpose;
    case IR_OP_EXPAND: return r_expand;
    case IR_OP_CONCAT: return r_concat;
    case IR_OP_SLICE: return r_slice;
    case IR_OP_GATHER: return r_gather;
    case IR_OP_SQUEEZE: return r_squeeze;
    case IR_OP_UNSQUEEZE: return r_unsqueeze;
    case IR_OP_FLATTEN: return r_flatten;
    case IR_OP_SPLIT: return r_split;
    case IR_OP_PAD: return r_pad;
    case IR_OP_SHAPE_OF: return r_shape_of;
    case IR_OP_CONSTANT: return r_constant;
    case IR_OP_RANGE: return r_range;
    case IR_OP_TILE: return r_tile;
    case IR_OP_TRILU: return r_trilu;
    case IR_OP_GATHER_ELEMENTS: return r_gather_elements;
    case IR_OP_TOPK: return r_topk;
    case IR_OP_CUMSUM: return r_cumsum;
    case IR_OP_GATHER_ND: return r_gather_nd;
    case IR_OP_SCATTER_ND: return r_scatter_nd;
    case IR_OP_SCATTER_ELEMENTS: return r_scatter_elements;
    case IR_OP_RESIZE: return r_resize;
    case IR_OP_CONV_TRANSPOSE: return r_conv_transpose;
    case IR_OP_GRID_SAMPLE: return r_grid_sample;
    case IR_OP_DFT: return r_dft;
    case IR_OP_MAX_POOL_INDICES: return r_pool;
    case IR_OP_COL2IM: return r_col2im;
    case IR_OP_DET: return r_det;
    case IR_OP_ROI_ALIGN: return r_roi_align;
    case IR_OP_NONZERO: return r_nonzero;
    case IR_OP_UNIQUE: return r_unique;
    case IR_OP_NMS: return r_nms;
    case IR_OP_ITEM: return r_item;
    default: return NULL;
    }
}

/* ---- driver ---------------------------------------------------------------- */

static symc_status classify_new_guards(ctx *c, uint32_t first) {
    uint32_t n = sym_guard_count(c->t);
    for (uint32_t g = first; g < n; g++) {
        sym_guard_state s = sym_guard_classify(c->t, g);
        if (s == SYM_GUARD_NARROWS || s == SYM_GUARD_FALSE) {
            char why[SYMC_ERROR_MSG_CAP];
            sym_guard_explain(c->t, g, why, sizeof why);
            return symc_error_setf(c->err, SYMC_ERR_RANGE, "%s", why);
        }
    }
    return SYMC_OK;
}

symc_status pass_infer_node(ir_module *m, uint32_t node, symc_error *err) {
    if (node >= m->n_nodes) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "node %u is out of range", node);
    ctx c = {m, m->syms, &m->nodes[node], ir_op_get(m->nodes[node].op)->name, {0}, err};
    snprintf(c.prov, sizeof c.prov, "node '%s' (%s)", c.n->name, c.opn);
    for (uint32_t i = 0; i < c.n->n_in; i++)
        if (in(&c, i)->rank < 0) return fail(&c, SYMC_ERR_VERIFY, "input '%s' has no inferred shape", in(&c, i)->name);
    rule_fn rule = rule_for(c.n->op);
    if (!rule) return fail(&c, SYMC_ERR_UNSUPPORTED, "no shape rule for this op");
    /* the inputs have ranks now: negative axes made non-negative (ir/axes.c), so the rules see
     * them as every later pass does; one out of range stays, for the rule's message */
    symc_status st = ir_normalize_axes(m, node, err);
    if (st) return st;
    c.n = &m->nodes[node];
    for (uint32_t k = 0; k < c.n->n_out; k++) out(&c, k)->value = NULL, out(&c, k)->n_value = 0;
    uint32_t first_guard = sym_guard_count(c.t);
    st = rule(&c);
    if (st) return st;
    /* every output dim is a size: it must be provably non-negative */
    for (uint32_t k = 0; k < c.n->n_out; k++) {
        const ir_tensor *o = out(&c, k);
        for (int d = 0; d < o->rank; d++)
            if (sym_range_of(c.t, o->dims[d]).lo < 0) {
                /* the range before the expression: a long expression is what the message cap cuts */
                sym_range r = sym_range_of(c.t, o->dims[d]);
                return fail(
                    &c, SYMC_ERR_RANGE,
                    "output '%s' dim %d may be negative for declared sizes: the bounds symc proves are [%lld, %lld] "
                    "(dim = %s)",
                    o->name, d, (long long)r.lo, (long long)r.hi, txt(&c, o->dims[d]));
            }
    }
    return classify_new_guards(&c, first_guard);
}

symc_status pass_infer_shapes(ir_module *m, symc_error *err) {
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        symc_status st = pass_infer_node(m, i, err);
        if (st) return st;
    }
    return SYMC_OK;
}
