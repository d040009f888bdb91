/* ONNX op -> core IR ops: one translation function per ONNX op type, found by
 * name in a table (ops of the default domain, opsets 13 to 21).
 *
 * Most ops map one to one. The work is in the ones whose ONNX form passes
 * sizes as tensors (Reshape, Expand, Slice, Pad, Tile, Range,
 * ConstantOfShape, Split, Unsqueeze, Squeeze, Reduce* axes, Clip bounds):
 * those tensors must be known at build time, either constants or small
 * integer tensors whose elements shape inference expresses over the input
 * symbols (ir_tensor.value), and they become attributes of kind dims or
 * ints. A few ops that shape sub-graphs use but the core shape rules do not
 * evaluate (comparisons, Where, Not, Expand of a known scalar, bool<->int
 * Cast) get their symbolic values here, decided by symshape's proofs, so
 * PyTorch's "Where(Equal(shape, -1), 1, shape)" idiom before Expand stays
 * symbolic. Anything that cannot be translated faithfully is an error naming
 * the node, never a silent approximation. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx_internal.h"

#define MAXV 64 /* symbolic values followed, as in passes/shape.c */

static ir_tensor *T(fe_ctx *c, uint32_t t) { return &c->m->tensors[t]; }

static symc_status need_inputs(fe_ctx *c, uint32_t lo, uint32_t hi) {
    uint32_t n = fe_n_in(c);
    if (n < lo || n > hi) {
        if (lo == hi) return fe_fail(c, SYMC_ERR_FORMAT, "has %u inputs, needs %u", n, lo);
        return fe_fail(c, SYMC_ERR_FORMAT, "has %u inputs, needs %u to %u", n, lo, hi);
    }
    return SYMC_OK;
}

/* Extra outputs an op can produce in training or debugging form (MaxPool's
 * Indices, LayerNormalization's Mean, ...) are refused when requested. */
static symc_status only_first_output(fe_ctx *c, const char *what) {
    for (uint32_t k = 1; k < c->node->n_output; k++)
        if (fe_has_out(c, k))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "output %u '%s' (%s) is not supported", k, c->node->output[k],
                           what);
    return SYMC_OK;
}

static symc_status set_values(fe_ctx *c, uint32_t t, const sym_expr *v, uint32_t n) {
    sym_expr *copy = ir_alloc(c->m, (n ? n : 1) * sizeof *copy);
    if (!copy) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    if (n) memcpy(copy, v, n * sizeof *v);
    T(c, t)->value = copy;
    T(c, t)->n_value = n;
    return SYMC_OK;
}

/* Element count of a tensor with a small static shape, else -1. */
static int64_t small_numel(fe_ctx *c, uint32_t t) {
    const ir_tensor *x = T(c, t);
    int64_t n = 1, v;
    for (int d = 0; d < x->rank; d++) {
        if (!sym_is_const(c->t, x->dims[d], &v)) return -1;
        n *= v;
        if (n > MAXV) return -1;
    }
    return n;
}

/* ---- build-time values the core rules do not compute ------------------------------------- */

static int is_intlike(symc_dtype d) { return d == SYMC_I64 || d == SYMC_I32 || d == SYMC_BOOL; }

/* Comparisons, Where, Not, bool<->int Cast and Expand of known values, with
 * NumPy broadcasting of one-element operands. Leaves `out` without values
 * whenever a result is not decided. */
static symc_status fold(fe_ctx *c, const char *op, const uint32_t *in, uint32_t n_in, uint32_t out) {
    int64_t n = small_numel(c, out);
    if (n < 0 || T(c, out)->value || !is_intlike(T(c, out)->dtype)) return SYMC_OK;
    for (uint32_t i = 0; i < n_in; i++) {
        const ir_tensor *x = T(c, in[i]);
        if (!strcmp(op, "Where") && i > 0 && !is_intlike(x->dtype)) return SYMC_OK;
        if (!x->value || (x->n_value != 1 && (int64_t)x->n_value != n)) return SYMC_OK;
    }
    sym_expr v[MAXV], one = sym_const(c->t, 1), zero = sym_const(c->t, 0);
    for (int64_t i = 0; i < n; i++) {
        sym_expr a[3];
        for (uint32_t k = 0; k < n_in; k++) {
            const ir_tensor *x = T(c, in[k]);
            a[k] = x->value[x->n_value == 1 ? 0 : i];
        }
        sym_tri r;
        if (!strcmp(op, "Equal")) r = sym_prove_eq(c->t, a[0], a[1]);
        else if (!strcmp(op, "Less")) r = sym_prove_lt(c->t, a[0], a[1]);
        else if (!strcmp(op, "Greater")) r = sym_prove_lt(c->t, a[1], a[0]);
        else if (!strcmp(op, "LessOrEqual")) r = sym_prove_le(c->t, a[0], a[1]);
        else if (!strcmp(op, "GreaterOrEqual")) r = sym_prove_le(c->t, a[1], a[0]);
        else if (!strcmp(op, "Not")) r = sym_prove_eq(c->t, a[0], zero);
        else if (!strcmp(op, "Cast")) {
            /* to bool: != 0; to an integer: the value itself */
            if (T(c, out)->dtype != SYMC_BOOL) {
                v[i] = a[0];
                continue;
            }
            r = sym_prove_ne(c->t, a[0], zero);
        } else if (!strcmp(op, "Where")) {
            int64_t cond;
            if (!sym_is_const(c->t, a[0], &cond)) return SYMC_OK;
            v[i] = cond ? a[1] : a[2];
            continue;
        } else if (!strcmp(op, "Expand")) {
            if (T(c, in[0])->n_value != 1) return SYMC_OK; /* only a broadcast scalar */
            v[i] = a[0];
            continue;
        } else {
            return SYMC_OK;
        }
        if (r == SYM_UNKNOWN) return SYMC_OK;
        v[i] = r == SYM_TRUE ? one : zero;
    }
    return set_values(c, out, v, (uint32_t)n);
}

/* ---- generic forms ------------------------------------------------------------------------- */

/* One core op applied to the node's inputs, no attributes. */
static symc_status emit_plain(fe_ctx *c, ir_op op, uint32_t arity) {
    symc_status st = need_inputs(c, arity, arity);
    uint32_t in[3], out;
    for (uint32_t k = 0; k < arity && !st; k++) st = fe_in(c, k, &in[k]);
    if (!st) st = fe_emit1(c, op, in, arity, NULL, 0, 0, &out);
    if (!st) st = fold(c, c->node->op_type, in, arity, out);
    return st;
}

#define PLAIN(fn, op, arity) \
    static symc_status fn(fe_ctx *c) { return emit_plain(c, op, arity); }
PLAIN(h_identity, IR_OP_IDENTITY, 1)
PLAIN(h_neg, IR_OP_NEG, 1)
PLAIN(h_abs, IR_OP_ABS, 1)
PLAIN(h_sign, IR_OP_SIGN, 1)
PLAIN(h_exp, IR_OP_EXP, 1)
PLAIN(h_log, IR_OP_LOG, 1)
PLAIN(h_sqrt, IR_OP_SQRT, 1)
PLAIN(h_reciprocal, IR_OP_RECIPROCAL, 1)
PLAIN(h_floor, IR_OP_FLOOR, 1)
PLAIN(h_ceil, IR_OP_CEIL, 1)
PLAIN(h_erf, IR_OP_ERF, 1)
PLAIN(h_tanh, IR_OP_TANH, 1)
PLAIN(h_sin, IR_OP_SIN, 1)
PLAIN(h_cos, IR_OP_COS, 1)
PLAIN(h_tan, IR_OP_TAN, 1)
PLAIN(h_sigmoid, IR_OP_SIGMOID, 1)
PLAIN(h_relu, IR_OP_RELU, 1)
PLAIN(h_hard_swish, IR_OP_HARD_SWISH, 1)
PLAIN(h_not, IR_OP_NOT, 1)
PLAIN(h_is_nan, IR_OP_IS_NAN, 1)
PLAIN(h_global_avg_pool, IR_OP_GLOBAL_AVG_POOL, 1)
PLAIN(h_add, IR_OP_ADD, 2)
PLAIN(h_sub, IR_OP_SUB, 2)
PLAIN(h_mul, IR_OP_MUL, 2)
PLAIN(h_div, IR_OP_DIV, 2)
PLAIN(h_pow, IR_OP_POW, 2)
PLAIN(h_equal, IR_OP_EQUAL, 2)
PLAIN(h_less, IR_OP_LESS, 2)
PLAIN(h_greater, IR_OP_GREATER, 2)
PLAIN(h_less_equal, IR_OP_LESS_EQUAL, 2)
PLAIN(h_greater_equal, IR_OP_GREATER_EQUAL, 2)
PLAIN(h_and, IR_OP_AND, 2)
PLAIN(h_or, IR_OP_OR, 2)
PLAIN(h_matmul, IR_OP_MATMUL, 2)
PLAIN(h_where, IR_OP_WHERE, 3)

/* Variadic Min/Max/Sum: a left-to-right chain of binary ops. */
static symc_status variadic(fe_ctx *c, ir_op op) {
    uint32_t n = fe_n_in(c), acc, x;
    if (n < 1) return fe_fail(c, SYMC_ERR_FORMAT, "needs at least one input");
    symc_status st = fe_in(c, 0, &acc);
    if (!st && n == 1) return fe_emit1(c, IR_OP_IDENTITY, &acc, 1, NULL, 0, 0, &acc);
    for (uint32_t k = 1; k < n && !st; k++) {
        if ((st = fe_in(c, k, &x))) break;
        uint32_t in[2] = {acc, x};
        st = fe_emit1(c, op, in, 2, NULL, 0, k + 1 == n ? 0 : -1, &acc);
    }
    return st;
}
static symc_status h_min(fe_ctx *c) { return variadic(c, IR_OP_MIN); }
static symc_status h_max(fe_ctx *c) { return variadic(c, IR_OP_MAX); }
static symc_status h_sum(fe_ctx *c) { return variadic(c, IR_OP_ADD); }

/* ---- elementwise with attributes --------------------------------------------------------------- */

static symc_status emit_unary_attrs(fe_ctx *c, ir_op op, const ir_attr *a, uint32_t na) {
    uint32_t x, out;
    symc_status st = need_inputs(c, 1, 1);
    if (!st) st = fe_in(c, 0, &x);
    return st ? st : fe_emit1(c, op, &x, 1, a, na, 0, &out);
}

static symc_status h_leaky_relu(fe_ctx *c) {
    ir_attr a = symc_attr_float("alpha", fe_attr_f(c, "alpha", 0.01));
    return emit_unary_attrs(c, IR_OP_LEAKY_RELU, &a, 1);
}

static symc_status h_is_inf(fe_ctx *c) {
    ir_attr a[2] = {symc_attr_int("detect_positive", fe_attr_i(c, "detect_positive", 1)),
                    symc_attr_int("detect_negative", fe_attr_i(c, "detect_negative", 1))};
    return emit_unary_attrs(c, IR_OP_IS_INF, a, 2);
}

static symc_status h_hard_sigmoid(fe_ctx *c) {
    ir_attr a[2] = {symc_attr_float("alpha", fe_attr_f(c, "alpha", 0.2)),
                    symc_attr_float("beta", fe_attr_f(c, "beta", 0.5))};
    return emit_unary_attrs(c, IR_OP_HARD_SIGMOID, a, 2);
}

static symc_status h_gelu(fe_ctx *c) {
    const char *ap = fe_attr_s(c, "approximate", "none");
    if (strcmp(ap, "none") && strcmp(ap, "tanh"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "approximate = '%s' (expected none or tanh)", ap);
    ir_attr a = symc_attr_str("approximate", ap);
    return emit_unary_attrs(c, IR_OP_GELU, &a, 1);
}

static symc_status h_cast(fe_ctx *c) {
    const Onnx__AttributeProto *to = fe_attr(c, "to");
    symc_dtype dt;
    if (!to) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'to' is missing");
    if (!fe_dtype((int32_t)to->i, &dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "cast to ONNX type %s is not supported",
                       fe_onnx_type_name((int32_t)to->i));
    ir_attr a = symc_attr_dtype("to", dt);
    uint32_t x, out;
    symc_status st = need_inputs(c, 1, 1);
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_emit1(c, IR_OP_CAST, &x, 1, &a, 1, 0, &out);
    if (!st && (T(c, x)->dtype == SYMC_BOOL || dt == SYMC_BOOL)) st = fold(c, "Cast", &x, 1, out);
    return st;
}

static symc_status h_mod(fe_ctx *c) {
    uint32_t in[2], out;
    symc_status st = need_inputs(c, 2, 2);
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    int64_t fmod_ = fe_attr_i(c, "fmod", 0);
    if (!st && !fmod_ && ir_dtype_is_float(T(c, in[0])->dtype))
        return fe_fail(c, SYMC_ERR_FORMAT, "Mod of floats needs fmod=1");
    ir_attr a = symc_attr_int("fmod", fmod_);
    return st ? st : fe_emit1(c, IR_OP_MOD, in, 2, &a, 1, 0, &out);
}

/* Clip's bounds (inputs since opset 11) must be constant scalars. */
static symc_status h_clip(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 3);
    uint32_t x, b, out;
    ir_attr a[2];
    uint32_t na = 0;
    static const char *const names[3] = {"", "min", "max"};
    if (!st) st = fe_in(c, 0, &x);
    for (uint32_t k = 1; k < 3 && !st; k++) {
        if (!fe_has_in(c, k)) continue;
        double v;
        if ((st = fe_in(c, k, &b)) || (st = fe_const_scalar(c, b, k, names[k], &v))) break;
        a[na++] = symc_attr_float(names[k], v);
    }
    return st ? st : fe_emit1(c, IR_OP_CLIP, &x, 1, a, na, 0, &out);
}

/* ---- normalizations --------------------------------------------------------------------------- */

static symc_status softmax_like(fe_ctx *c, ir_op op) {
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", -1)); /* -1 since opset 13 */
    return emit_unary_attrs(c, op, &a, 1);
}
static symc_status h_softmax(fe_ctx *c) { return softmax_like(c, IR_OP_SOFTMAX); }
static symc_status h_log_softmax(fe_ctx *c) { return softmax_like(c, IR_OP_LOG_SOFTMAX); }

/* Small emitters for the decompositions below: an intermediate tensor
 * (out_k -1) or ONNX output out_k. */
static symc_status emit_bin(fe_ctx *c, ir_op op, uint32_t a, uint32_t b, int out_k, uint32_t *out) {
    uint32_t in[2] = {a, b};
    return fe_emit1(c, op, in, 2, NULL, 0, out_k, out);
}
static symc_status emit_un(fe_ctx *c, ir_op op, uint32_t x, int out_k, uint32_t *out) {
    return fe_emit1(c, op, &x, 1, NULL, 0, out_k, out);
}
static symc_status emit_cast(fe_ctx *c, uint32_t x, symc_dtype dt, int out_k, uint32_t *out) {
    if (T(c, x)->dtype == dt && out_k < 0) {
        *out = x;
        return SYMC_OK;
    }
    ir_attr a = symc_attr_dtype("to", dt);
    return fe_emit1(c, IR_OP_CAST, &x, 1, &a, 1, out_k, out);
}
/* A scalar constant of dtype dt (f32, f64, f16 or bf16 are what the
 * decompositions need: the value is rounded once, as ONNX's own function
 * bodies do with CastLike). */
static symc_status emit_scalar(fe_ctx *c, symc_dtype dt, double v, uint32_t *out) {
    uint8_t buf[8];
    symc_dtype_store(buf, dt, 0, v);
    return fe_const(c, dt, 0, NULL, buf, -1, out);
}
static symc_status emit_reshape(fe_ctx *c, uint32_t x, const sym_expr *dims, uint32_t n, int out_k, uint32_t *out) {
    ir_attr a = symc_attr_dims("shape", dims, n);
    return fe_emit1(c, IR_OP_RESHAPE, &x, 1, &a, 1, out_k, out);
}
static symc_status emit_mean(fe_ctx *c, uint32_t x, const int64_t *axes, uint32_t n, int out_k, uint32_t *out) {
    ir_attr a[2] = {symc_attr_int("keepdims", 1), symc_attr_ints("axes", axes, n)};
    return fe_emit1(c, IR_OP_REDUCE_MEAN, &x, 1, a, 2, out_k, out);
}

/* stash_type (LayerNormalization, GroupNormalization 21): the dtype of the
 * statistics and of their computation. */
static symc_status stash_dtype(fe_ctx *c, symc_dtype *dt) {
    int64_t st = fe_attr_i(c, "stash_type", 1);
    if (!fe_dtype((int32_t)st, dt) || !ir_dtype_is_float(*dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "stash_type = %" PRId64 " (%s) is not a float type symc supports", st,
                       fe_onnx_type_name((int32_t)st));
    return SYMC_OK;
}

/* Y is one layer_norm node. The statistics outputs Mean and InvStdDev, when
 * requested, are computed beside it in the stash type: mean over [axis,
 * rank), 1 / sqrt(mean((x - mean)^2) + epsilon), both keeping the reduced
 * dims as 1 (their ONNX shape). */
static symc_status h_layer_norm(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    int64_t axis = fe_attr_i(c, "axis", -1);
    double eps = fe_attr_f(c, "epsilon", 1e-5);
    int32_t r = T(c, in[0])->rank;
    if (axis < -r || axis >= r)
        return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range for rank %d", axis, (int)r);
    if (axis < 0) axis += r;
    ir_attr a[2] = {symc_attr_int("axis", fe_attr_i(c, "axis", -1)), symc_attr_float("epsilon", eps)};
    if ((st = fe_emit1(c, IR_OP_LAYER_NORM, in, n, a, 2, 0, &out))) return st;
    if (!fe_has_out(c, 1) && !fe_has_out(c, 2)) return SYMC_OK;
    symc_dtype sd;
    if ((st = stash_dtype(c, &sd))) return st;
    int64_t axes[IR_MAX_RANK];
    uint32_t na = 0;
    for (int64_t d = axis; d < r; d++) axes[na++] = d;
    uint32_t x, mean, dev, sq, var, e, ve, sd_, inv;
    if ((st = emit_cast(c, in[0], sd, -1, &x)) || (st = emit_mean(c, x, axes, na, fe_has_out(c, 1) ? 1 : -1, &mean)))
        return st;
    if (!fe_has_out(c, 2)) return SYMC_OK;
    if ((st = emit_bin(c, IR_OP_SUB, x, mean, -1, &dev)) || (st = emit_bin(c, IR_OP_MUL, dev, dev, -1, &sq)) ||
        (st = emit_mean(c, sq, axes, na, -1, &var)) || (st = emit_scalar(c, sd, eps, &e)) ||
        (st = emit_bin(c, IR_OP_ADD, var, e, -1, &ve)) || (st = emit_un(c, IR_OP_SQRT, ve, -1, &sd_)))
        return st;
    return emit_un(c, IR_OP_RECIPROCAL, sd_, 2, &inv);
}

/* Scale or bias of shape [C] viewed as [C, 1, ..., 1] against an input of
 * rank r whose channels are dim 1. */
static symc_status channel_view(fe_ctx *c, uint32_t p, int32_t r, uint32_t *out) {
    sym_expr d[IR_MAX_RANK];
    if (T(c, p)->rank != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has rank %d, needs 1", T(c, p)->name, (int)T(c, p)->rank);
    d[0] = T(c, p)->dims[0];
    for (int32_t i = 1; i < r - 1; i++) d[i] = sym_const(c->t, 1);
    return emit_reshape(c, p, d, (uint32_t)(r - 1), -1, out);
}

/* InstanceNormalization: a layer_norm over the spatial dims [2, rank), then
 * the per-channel scale and bias. */
static symc_status h_instance_norm(fe_ctx *c) {
    symc_status st = need_inputs(c, 3, 3);
    uint32_t in[3], y, s, b, t;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    int32_t r = T(c, in[0])->rank;
    if (r < 3) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 3", T(c, in[0])->name, (int)r);
    ir_attr a[2] = {symc_attr_int("axis", 2), symc_attr_float("epsilon", fe_attr_f(c, "epsilon", 1e-5))};
    if ((st = fe_emit1(c, IR_OP_LAYER_NORM, in, 1, a, 2, -1, &y)) || (st = channel_view(c, in[1], r, &s)) ||
        (st = channel_view(c, in[2], r, &b)) || (st = emit_bin(c, IR_OP_MUL, y, s, -1, &t)))
        return st;
    return emit_bin(c, IR_OP_ADD, t, b, 0, &y);
}

/* GroupNormalization: x [N, C, ...] viewed as [N, G, rest] and normalized
 * over the last dim by layer_norm; scale and bias are per channel [C] since
 * opset 21 (applied in x's shape) and per group [G] before (applied in the
 * grouped view). The statistics are computed in stash_type (opset 21). */
static symc_status h_group_norm(fe_ctx *c) {
    symc_status st = need_inputs(c, 3, 3);
    uint32_t in[3], x, g, y, s, b, t;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const ir_tensor *xt = T(c, in[0]); /* not valid after the first emit (the tensor table grows) */
    int32_t r = xt->rank;
    int64_t groups = fe_attr_i(c, "num_groups", 0);
    if (r < 2) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 2", xt->name, (int)r);
    sym_expr xs[IR_MAX_RANK];
    memcpy(xs, xt->dims, (size_t)r * sizeof xs[0]);
    if (groups < 1) return fe_fail(c, SYMC_ERR_FORMAT, "num_groups = %" PRId64 " must be >= 1", groups);
    symc_dtype sd = SYMC_F32, xd = xt->dtype;
    if (c->opset >= 21 && (st = stash_dtype(c, &sd))) return st;
    sym_expr d[3] = {xt->dims[0], sym_const(c->t, groups), SYM_NONE}; /* SYM_NONE: reshape's -1 */
    ir_attr a[2] = {symc_attr_int("axis", 2), symc_attr_float("epsilon", fe_attr_f(c, "epsilon", 1e-5))};
    if ((st = emit_cast(c, in[0], sd, -1, &x)) || (st = emit_reshape(c, x, d, 3, -1, &g)) ||
        (st = fe_emit1(c, IR_OP_LAYER_NORM, &g, 1, a, 2, -1, &y)) || (st = emit_cast(c, y, xd, -1, &y)))
        return st;
    if (c->opset >= 21) {
        if ((st = emit_reshape(c, y, xs, (uint32_t)r, -1, &y)) || (st = channel_view(c, in[1], r, &s)) ||
            (st = channel_view(c, in[2], r, &b)) || (st = emit_bin(c, IR_OP_MUL, y, s, -1, &t)))
            return st;
        return emit_bin(c, IR_OP_ADD, t, b, 0, &y);
    }
    if ((st = channel_view(c, in[1], 3, &s)) || (st = channel_view(c, in[2], 3, &b)) ||
        (st = emit_bin(c, IR_OP_MUL, y, s, -1, &t)) || (st = emit_bin(c, IR_OP_ADD, t, b, -1, &y)))
        return st;
    return emit_reshape(c, y, xs, (uint32_t)r, 0, &y);
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9)
 * over `axes` (default [0, 2, 3]), the 1e-9 where ONNX's definition has it. */
static symc_status h_mvn(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, mean, dev, sq, var, sd, e, den, y;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    static const int64_t dflt[3] = {0, 2, 3};
    const int64_t *v = dflt;
    uint32_t n = 3;
    if (fe_attr_ints(c, "axes", &v, &n) && n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_FORMAT, "%u axes", n);
    if ((st = emit_mean(c, x, v, n, -1, &mean)) || (st = emit_bin(c, IR_OP_SUB, x, mean, -1, &dev)) ||
        (st = emit_bin(c, IR_OP_MUL, dev, dev, -1, &sq)) || (st = emit_mean(c, sq, v, n, -1, &var)) ||
        (st = emit_un(c, IR_OP_SQRT, var, -1, &sd)) || (st = emit_scalar(c, T(c, x)->dtype, 1e-9, &e)) ||
        (st = emit_bin(c, IR_OP_ADD, sd, e, -1, &den)))
        return st;
    return emit_bin(c, IR_OP_DIV, dev, den, 0, &y);
}

/* LRN: x / (bias + alpha / size * sum of squares over a window of `size`
 * channels)^beta. The window sum is an average pool (count_include_pad, so
 * the divisor is always size) over x^2 viewed as [N, 1, C, rest]: channels
 * floor((size - 1) / 2) before and ceil((size - 1) / 2) after. */
static symc_status h_lrn(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, sq, v, p, k, t, base, be, pw, y;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x); /* not valid after the first emit */
    int32_t r = xt->rank;
    symc_dtype dt = xt->dtype;
    int64_t size = fe_attr_i(c, "size", 0);
    if (size < 1) return fe_fail(c, SYMC_ERR_FORMAT, "size = %" PRId64 " must be >= 1", size);
    if (r < 2) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 2", xt->name, (int)r);
    double alpha = fe_attr_f(c, "alpha", 1e-4), beta = fe_attr_f(c, "beta", 0.75), bias = fe_attr_f(c, "bias", 1.0);
    sym_expr d4[4] = {xt->dims[0], sym_const(c->t, 1), xt->dims[1], SYM_NONE}; /* SYM_NONE: reshape's -1 */
    if (r == 2) d4[3] = sym_const(c->t, 1);
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    int64_t kern[2] = {size, 1}, strides[2] = {1, 1}, pads[4] = {lo, 0, hi, 0};
    ir_attr a[5] = {symc_attr_ints("kernel", kern, 2), symc_attr_ints("strides", strides, 2),
                    symc_attr_ints("pads", pads, 4), symc_attr_int("ceil_mode", 0),
                    symc_attr_int("count_include_pad", 1)};
    sym_expr xs[IR_MAX_RANK];
    memcpy(xs, xt->dims, (size_t)r * sizeof xs[0]);
    if ((st = emit_bin(c, IR_OP_MUL, x, x, -1, &sq)) || (st = emit_reshape(c, sq, d4, 4, -1, &v)) ||
        (st = fe_emit1(c, IR_OP_AVG_POOL2D, &v, 1, a, 5, -1, &p)) ||
        (st = emit_reshape(c, p, xs, (uint32_t)r, -1, &p)) || (st = emit_scalar(c, dt, alpha, &k)) ||
        (st = emit_bin(c, IR_OP_MUL, p, k, -1, &t)) || (st = emit_scalar(c, dt, bias, &k)) ||
        (st = emit_bin(c, IR_OP_ADD, t, k, -1, &base)) || (st = emit_scalar(c, dt, beta, &be)) ||
        (st = emit_bin(c, IR_OP_POW, base, be, -1, &pw)))
        return st;
    return emit_bin(c, IR_OP_DIV, x, pw, 0, &y);
}

static symc_status h_batch_norm(fe_ctx *c) {
    symc_status st = need_inputs(c, 5, 5);
    if (!st && fe_attr_i(c, "training_mode", 0))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "training_mode=1 is not supported (inference only)");
    if (!st) st = only_first_output(c, "the running statistics of training");
    uint32_t in[5], out;
    for (uint32_t k = 0; k < 5 && !st; k++) st = fe_in(c, k, &in[k]);
    ir_attr a = symc_attr_float("epsilon", fe_attr_f(c, "epsilon", 1e-5));
    return st ? st : fe_emit1(c, IR_OP_BATCH_NORM, in, 5, &a, 1, 0, &out);
}

/* ---- reductions -------------------------------------------------------------------------------- */

/* ReduceSum takes axes as an input since opset 13, ReduceMean/ReduceMax since 18. */
static symc_status reduce(fe_ctx *c, ir_op op, int64_t axes_input_since) {
    symc_status st = need_inputs(c, 1, 2);
    uint32_t x, ax, out, n = 0;
    int64_t axes[IR_MAX_RANK];
    int have = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && c->opset >= axes_input_since) {
        if (fe_has_in(c, 1)) {
            have = 1;
            if (!(st = fe_in(c, 1, &ax))) st = fe_const_ints(c, ax, 1, "the axes", axes, IR_MAX_RANK, &n);
        }
        /* not part of the op at this opset: an empty list means what no axes
         * input means, anything else would be silently ignored */
        const int64_t *v;
        uint32_t na;
        if (!st && fe_attr_ints(c, "axes", &v, &na) && na)
            return fe_fail(c, SYMC_ERR_FORMAT,
                           "%s has no 'axes' attribute at opset %" PRId64 " (the axes are its "
                           "input 1 since opset %" PRId64 "), so the given one would be ignored: pass the axes as "
                           "input 1",
                           c->node->op_type, c->opset, axes_input_since);
    } else if (!st) {
        const int64_t *v;
        if (fe_has_in(c, 1))
            return fe_fail(c, SYMC_ERR_FORMAT, "axes come as an attribute before opset %" PRId64, axes_input_since);
        if ((have = fe_attr_ints(c, "axes", &v, &n))) {
            if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_FORMAT, "%u axes", n);
            if (n) memcpy(axes, v, n * sizeof *v); /* protobuf-c leaves an empty list NULL */
        }
    }
    if (st) return st;
    if ((!have || n == 0) && fe_attr_i(c, "noop_with_empty_axes", 0))
        return fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, 0, &out);
    ir_attr a[2] = {symc_attr_int("keepdims", fe_attr_i(c, "keepdims", 1)), symc_attr_ints("axes", axes, n)};
    return fe_emit1(c, op, &x, 1, a, n ? 2 : 1, 0, &out);
}
static symc_status h_reduce_sum(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_SUM, 13); }
static symc_status h_reduce_mean(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MEAN, 18); }
static symc_status h_reduce_max(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MAX, 18); }

/* ---- contractions and windows -------------------------------------------------------------------- */

static symc_status h_gemm(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    ir_attr a[4] = {
        symc_attr_int("trans_a", fe_attr_i(c, "transA", 0)), symc_attr_int("trans_b", fe_attr_i(c, "transB", 0)),
        symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.0)), symc_attr_float("beta", fe_attr_f(c, "beta", 1.0))};
    return st ? st : fe_emit1(c, IR_OP_GEMM, in, n, a, 4, 0, &out);
}

/* Spatial attributes shared by Conv, MaxPool and AveragePool (2-D only). */
typedef struct window {
    int64_t kernel[2], strides[2], dil[2], pads[4];
    sym_expr lo[2], hi[2]; /* auto_pad SAME: symbolic pads */
    int symbolic;          /* some pad is not a constant: pad explicitly first */
    int one_d;             /* a 1-D op run as 2-D on [N, C, 1, L]: attributes have 1 entry a dim */
} window;

static symc_status ints_attr(fe_ctx *c, const char *name, uint32_t n, const int64_t *dflt, int one_d, int64_t *out) {
    const int64_t *v;
    uint32_t got;
    if (!fe_attr_ints(c, name, &v, &got)) {
        memcpy(out, dflt, n * sizeof *out);
        return SYMC_OK;
    }
    if (one_d) { /* the added dim keeps the default (stride 1, no pads) */
        if (got != n / 2)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries; 1-D ops take %u", name, got, n / 2);
        memcpy(out, dflt, n * sizeof *out);
        out[1] = v[0];
        if (n == 4) out[3] = v[1];
        return SYMC_OK;
    }
    if (got != n)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute '%s' has %u entries; 2-D ops take %u", name, got, n);
    memcpy(out, v, n * sizeof *v);
    return SYMC_OK;
}

/* kernel must be filled in; the input x is NCHW. */
static symc_status read_window(fe_ctx *c, uint32_t x, window *w) {
    static const int64_t ones[2] = {1, 1}, zeros[4] = {0, 0, 0, 0};
    symc_status st;
    if ((st = ints_attr(c, "strides", 2, ones, w->one_d, w->strides)) ||
        (st = ints_attr(c, "dilations", 2, ones, w->one_d, w->dil)) ||
        (st = ints_attr(c, "pads", 4, zeros, w->one_d, w->pads)))
        return st;
    const char *ap = fe_attr_s(c, "auto_pad", "NOTSET");
    w->symbolic = 0;
    if (!strcmp(ap, "NOTSET")) return SYMC_OK;
    if (!strcmp(ap, "VALID")) {
        memset(w->pads, 0, sizeof w->pads);
        return SYMC_OK;
    }
    int upper = !strcmp(ap, "SAME_UPPER");
    if (!upper && strcmp(ap, "SAME_LOWER"))
        return fe_fail(c, SYMC_ERR_FORMAT, "auto_pad = '%s' (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)", ap);
    /* SAME: output ceil(in / stride); total padding
     * max((out - 1) * stride + dilation * (kernel - 1) + 1 - in, 0),
     * the odd one at the end (UPPER) or the beginning (LOWER) */
    for (int i = 0; i < 2; i++) {
        sym_expr in = T(c, x)->dims[2 + i], s = sym_const(c->t, w->strides[i]);
        sym_expr outd = sym_ceildiv(c->t, in, s);
        sym_expr tot = sym_add_const(c->t, sym_sub(c->t, sym_mul(c->t, sym_add_const(c->t, outd, -1), s), in),
                                     w->dil[i] * (w->kernel[i] - 1) + 1);
        tot = sym_max(c->t, tot, sym_const(c->t, 0));
        sym_expr half = sym_floordiv(c->t, tot, sym_const(c->t, 2)), rest = sym_sub(c->t, tot, half);
        w->lo[i] = upper ? half : rest;
        w->hi[i] = upper ? rest : half;
        if (w->lo[i] == SYM_NONE || w->hi[i] == SYM_NONE)
            return fe_fail(c, SYMC_ERR_INTERNAL, "auto_pad: %s",
                           sym_table_error(c->t) ? sym_table_error(c->t)->msg : "?");
        int64_t lo, hi;
        if (sym_is_const(c->t, w->lo[i], &lo) && sym_is_const(c->t, w->hi[i], &hi)) {
            w->pads[i] = lo;
            w->pads[2 + i] = hi;
        } else {
            w->symbolic = 1;
        }
    }
    return SYMC_OK;
}

/* For symbolic SAME padding: an explicit pad node with `value`, after which
 * the window op runs unpadded. */
static symc_status pad_first(fe_ctx *c, uint32_t *x, window *w, double value) {
    if (!w->symbolic) return SYMC_OK;
    sym_expr zero = sym_const(c->t, 0);
    sym_expr pads[8] = {zero, zero, w->lo[0], w->lo[1], zero, zero, w->hi[0], w->hi[1]};
    ir_attr a[3] = {symc_attr_dims("pads", pads, 8), symc_attr_str("mode", "constant"),
                    symc_attr_float("value", value)};
    memset(w->pads, 0, sizeof w->pads);
    return fe_emit1(c, IR_OP_PAD, x, 1, a, 3, -1, x);
}

/* 1-D (rank 3) and 2-D (rank 4) inputs are taken; a 1-D input is viewed as
 * [N, C, 1, L] (one_d), the exact 2-D op with a height of 1. */
static symc_status need_4d(fe_ctx *c, uint32_t *x, const char *what, int *one_d) {
    int32_t r = T(c, *x)->rank;
    *one_d = r == 3;
    if (r != 4 && r != 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "only 1-D and 2-D %s (a 3-D or 4-D input) is supported; input '%s' has rank %d", what,
                       T(c, *x)->name, (int)r);
    int64_t ax = 2;
    ir_attr a = symc_attr_ints("axes", &ax, 1);
    return *one_d ? fe_emit1(c, IR_OP_UNSQUEEZE, x, 1, &a, 1, -1, x) : SYMC_OK;
}

/* The result of a 1-D op run as 2-D: squeeze the added dim into output 0. */
static symc_status emit_1d(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n, const ir_attr *a, uint32_t na,
                           int one_d) {
    uint32_t out;
    int64_t ax = 2;
    ir_attr sq = symc_attr_ints("axes", &ax, 1);
    symc_status st = fe_emit1(c, op, in, n, a, na, one_d ? -1 : 0, &out);
    return st || !one_d ? st : fe_emit1(c, IR_OP_SQUEEZE, &out, 1, &sq, 1, 0, &out);
}

static symc_status h_conv(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    window w;
    if (!st) st = need_4d(c, &in[0], "convolution", &w.one_d);
    if (st) return st;
    if (w.one_d && T(c, in[1])->rank == 3) {
        int64_t ax = 2;
        ir_attr ua = symc_attr_ints("axes", &ax, 1);
        if ((st = fe_emit1(c, IR_OP_UNSQUEEZE, &in[1], 1, &ua, 1, -1, &in[1]))) return st;
    }
    const ir_tensor *wt = T(c, in[1]);
    if (wt->rank != 4)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' has rank %d; the input's convolution needs %d", wt->name,
                       (int)(wt->rank - w.one_d), 4 - w.one_d);
    for (int i = 0; i < 2; i++)
        if (!sym_is_const(c->t, wt->dims[2 + i], &w.kernel[i]))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d is not a constant", wt->name, 2 + i);
    const int64_t *ks;
    uint32_t nk;
    if (fe_attr_ints(c, "kernel_shape", &ks, &nk) &&
        (nk != 2u - w.one_d || (!w.one_d && ks[0] != w.kernel[0]) || ks[nk - 1] != w.kernel[1]))
        return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape does not match weight '%s' (%" PRId64 "x%" PRId64 ")",
                       wt->name, w.kernel[0], w.kernel[1]);
    if ((st = read_window(c, in[0], &w)) || (st = pad_first(c, &in[0], &w, 0.0))) return st;
    ir_attr a[4] = {symc_attr_ints("strides", w.strides, 2), symc_attr_ints("pads", w.pads, 4),
                    symc_attr_ints("dilations", w.dil, 2), symc_attr_int("group", fe_attr_i(c, "group", 1))};
    (void)out;
    return emit_1d(c, IR_OP_CONV2D, in, n, a, 4, w.one_d);
}

/* ConvTranspose on 1 to 3 spatial dims. output_shape and auto_pad SAME
 * become explicit pads (ONNX's total padding stride * (in - 1) +
 * output_padding + dilation * (k - 1) + 1 - out, split with Python's floor
 * division as the reference splits it; a negative total grows the output);
 * the pads must then be constants. */
static symc_status h_conv_transpose(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const ir_tensor *xt = T(c, in[0]), *wt = T(c, in[1]);
    int32_t nsp = xt->rank - 2;
    if (nsp < 1 || nsp > 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' has rank %d; 1-D to 3-D (rank 3 to 5) are supported",
                       xt->name, (int)xt->rank);
    if (wt->rank != xt->rank)
        return fe_fail(c, SYMC_ERR_FORMAT, "weight '%s' has rank %d, input rank %d", wt->name, (int)wt->rank,
                       (int)xt->rank);
    int64_t k[3], s[3], d[3], op[3], p[6];
    for (int i = 0; i < nsp; i++) {
        if (!sym_is_const(c->t, wt->dims[2 + i], &k[i]))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d is not a constant", wt->name, 2 + i);
        s[i] = d[i] = 1, op[i] = 0, p[i] = p[nsp + i] = 0;
    }
    const int64_t *v;
    uint32_t nv;
    static const char *const names[4] = {"strides", "dilations", "output_padding", "pads"};
    int64_t *dst[4] = {s, d, op, p};
    for (int a = 0; a < 4; a++) {
        uint32_t want = (uint32_t)(a == 3 ? 2 * nsp : nsp);
        if (!fe_attr_ints(c, names[a], &v, &nv)) continue;
        if (nv != want)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries, needs %u", names[a], nv, want);
        memcpy(dst[a], v, nv * sizeof *v);
    }
    if (fe_attr_ints(c, "kernel_shape", &v, &nv)) {
        int same = nv == (uint32_t)nsp;
        for (uint32_t i = 0; same && i < nv; i++) same = v[i] == k[i];
        if (!same) return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape does not match weight '%s'", wt->name);
    }
    const char *ap = fe_attr_s(c, "auto_pad", "NOTSET");
    int upper = !strcmp(ap, "SAME_UPPER"), same = upper || !strcmp(ap, "SAME_LOWER");
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return fe_fail(c, SYMC_ERR_FORMAT, "auto_pad = '%s' (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)", ap);
    if (!strcmp(ap, "VALID")) memset(p, 0, sizeof p);
    const int64_t *os = NULL;
    uint32_t nos = 0;
    if (fe_attr_ints(c, "output_shape", &os, &nos)) {
        if (nos != (uint32_t)nsp && nos != (uint32_t)nsp + 2)
            return fe_fail(c, SYMC_ERR_FORMAT, "output_shape has %u entries for %d spatial dims", nos, (int)nsp);
        os += nos - (uint32_t)nsp;
    }
    if (os || same) {
        for (int i = 0; i < nsp; i++) {
            sym_expr in = xt->dims[2 + i];
            sym_expr want = os ? sym_const(c->t, os[i]) : sym_scale(c->t, in, s[i]);
            sym_expr tot = sym_sub(
                c->t,
                sym_add_const(c->t, sym_scale(c->t, sym_add_const(c->t, in, -1), s[i]), op[i] + d[i] * (k[i] - 1) + 1),
                want);
            int64_t t;
            if (!sym_is_const(c->t, tot, &t))
                return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                               "the padding that output_shape needs along spatial dim %d (%s) depends on the input "
                               "size; symc takes constant pads only",
                               i, fe_txt(c, tot));
            int64_t half = t >= 0 ? t / 2 : -((-t + 1) / 2); /* floor */
            p[i] = upper ? half : t - half;
            p[nsp + i] = upper ? t - half : half;
        }
    }
    int64_t group = fe_attr_i(c, "group", 1);
    if (group < 1) return fe_fail(c, SYMC_ERR_FORMAT, "group = %" PRId64 " must be >= 1", group);
    ir_attr a[5] = {symc_attr_ints("strides", s, (uint32_t)nsp), symc_attr_ints("pads", p, 2 * (uint32_t)nsp),
                    symc_attr_ints("dilations", d, (uint32_t)nsp), symc_attr_int("group", group),
                    symc_attr_ints("output_padding", op, (uint32_t)nsp)};
    return fe_emit1(c, IR_OP_CONV_TRANSPOSE, in, n, a, 5, 0, &out);
}

/* MaxPool, AveragePool and LpPool (1-D and 2-D). LpPool is
 * (K * avg_pool(|x|^p))^(1/p) with the K-element window counted whole
 * (count_include_pad), which is the sum of |x|^p over the window: exact as
 * long as no ceil_mode window is cut short, so ceil_mode is refused there. */
enum { POOL_AVG, POOL_MAX, POOL_LP };
static symc_status pool(fe_ctx *c, int kind) {
    static const char *const what[3] = {"average pooling", "max pooling", "Lp pooling"};
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, out;
    window w;
    int is_max = kind == POOL_MAX;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = need_4d(c, &x, what[kind], &w.one_d);
    if (!st && is_max) st = only_first_output(c, "the Indices of MaxPool");
    if (st) return st;
    const int64_t *ks;
    uint32_t nk;
    if (!fe_attr_ints(c, "kernel_shape", &ks, &nk)) return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape is missing");
    if (nk != 2u - w.one_d)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "kernel_shape has %u entries for a %d-D input", nk, 2 - w.one_d);
    w.kernel[0] = w.one_d ? 1 : ks[0];
    w.kernel[1] = ks[nk - 1];
    if ((st = read_window(c, x, &w))) return st;
    int64_t cip = kind == POOL_LP ? 1 : fe_attr_i(c, "count_include_pad", 0), ceil_mode = fe_attr_i(c, "ceil_mode", 0);
    if (!is_max && (w.dil[0] != 1 || w.dil[1] != 1))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s with dilations is not supported", c->node->op_type);
    if (kind == POOL_LP && ceil_mode)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "LpPool with ceil_mode = 1 is not supported");
    if (!is_max && w.symbolic && !cip)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "auto_pad SAME with stride > 1 needs padding that depends on the input size (%s x %s), which "
                       "average pooling with count_include_pad=0 cannot take as an explicit pad; export with "
                       "explicit pads",
                       fe_txt(c, T(c, x)->dims[2]), fe_txt(c, T(c, x)->dims[3]));
    double p = (double)fe_attr_i(c, "p", 2);
    uint32_t e;
    if (kind == POOL_LP) {
        if (p < 1) return fe_fail(c, SYMC_ERR_FORMAT, "p = %g must be >= 1", p);
        if ((st = emit_un(c, IR_OP_ABS, x, -1, &x)) || (st = emit_scalar(c, T(c, x)->dtype, p, &e)) ||
            (st = emit_bin(c, IR_OP_POW, x, e, -1, &x)))
            return st;
    }
    if ((st = pad_first(c, &x, &w, is_max ? -INFINITY : 0.0))) return st;
    ir_attr a[5];
    uint32_t na = 0;
    a[na++] = symc_attr_ints("kernel", w.kernel, 2);
    a[na++] = symc_attr_ints("strides", w.strides, 2);
    a[na++] = symc_attr_ints("pads", w.pads, 4);
    a[na++] = symc_attr_int("ceil_mode", ceil_mode);
    if (is_max) a[na++] = symc_attr_ints("dilations", w.dil, 2);
    else a[na++] = symc_attr_int("count_include_pad", cip);
    if (kind != POOL_LP) return emit_1d(c, is_max ? IR_OP_MAX_POOL2D : IR_OP_AVG_POOL2D, &x, 1, a, na, w.one_d);
    uint32_t y;
    if ((st = fe_emit1(c, IR_OP_AVG_POOL2D, &x, 1, a, na, -1, &y)) ||
        (st = emit_scalar(c, T(c, x)->dtype, (double)(w.kernel[0] * w.kernel[1]), &e)) ||
        (st = emit_bin(c, IR_OP_MUL, y, e, -1, &y)) || (st = emit_scalar(c, T(c, x)->dtype, 1.0 / p, &e)))
        return st;
    uint32_t in2[2] = {y, e};
    (void)out;
    return emit_1d(c, IR_OP_POW, in2, 2, NULL, 0, w.one_d);
}
static symc_status h_max_pool(fe_ctx *c) { return pool(c, POOL_MAX); }
static symc_status h_avg_pool(fe_ctx *c) { return pool(c, POOL_AVG); }
static symc_status h_lp_pool(fe_ctx *c) { return pool(c, POOL_LP); }

/* ---- shapes and data movement ------------------------------------------------------------------------ */

static symc_status h_shape(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    int64_t r = T(c, x)->rank, s = fe_attr_i(c, "start", 0), e = fe_attr_i(c, "end", r);
    /* opset 15: start/end count from the back when negative, then clamp */
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    if (s == 0 && e == r) return fe_emit1(c, IR_OP_SHAPE_OF, &x, 1, NULL, 0, 0, &out);
    if ((st = fe_emit1(c, IR_OP_SHAPE_OF, &x, 1, NULL, 0, -1, &x))) return st;
    sym_expr se = sym_const(c->t, s), ee = sym_const(c->t, e < s ? s : e);
    ir_attr a[2] = {symc_attr_dims("starts", &se, 1), symc_attr_dims("ends", &ee, 1)};
    return fe_emit1(c, IR_OP_SLICE, &x, 1, a, 2, 0, &out);
}

static symc_status h_reshape(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, s, out, n;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st) st = fe_values(c, s, 1, "the target shape", &v, &n);
    if (st) return st;
    if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "target rank %u exceeds %d", n, IR_MAX_RANK);
    int allowzero = fe_attr_i(c, "allowzero", 0) != 0;
    sym_expr dims[IR_MAX_RANK];
    for (uint32_t i = 0; i < n; i++) {
        int64_t k;
        dims[i] = v[i];
        if (sym_is_const(c->t, v[i], &k) && k == -1) {
            dims[i] = SYM_NONE;
        } else if (sym_is_const(c->t, v[i], &k) && k == 0 && !allowzero) {
            /* ONNX: 0 copies the input's dim at that position */
            if ((int32_t)i >= T(c, x)->rank)
                return fe_fail(c, SYMC_ERR_FORMAT, "shape entry %u is 0 (copy) but the input has rank %d", i,
                               (int)T(c, x)->rank);
            dims[i] = T(c, x)->dims[i];
        } else if (sym_range_of(c->t, v[i]).lo < 0) {
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "shape entry %u = %s may be negative", i, fe_txt(c, v[i]));
        }
    }
    ir_attr a = symc_attr_dims("shape", dims, n);
    return fe_emit1(c, IR_OP_RESHAPE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_expand(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, s, out, n;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st) st = fe_values(c, s, 1, "the target shape", &v, &n);
    if (st) return st;
    if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "target rank %u exceeds %d", n, IR_MAX_RANK);
    for (uint32_t i = 0; i < n; i++)
        if (sym_range_of(c->t, v[i]).lo < 0)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "shape entry %u = %s may be negative", i, fe_txt(c, v[i]));
    ir_attr a = symc_attr_dims("shape", v, n);
    if ((st = fe_emit1(c, IR_OP_EXPAND, &x, 1, &a, 1, 0, &out))) return st;
    return fold(c, "Expand", &x, 1, out);
}

static symc_status h_transpose(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    int64_t perm[IR_MAX_RANK];
    const int64_t *p;
    uint32_t n = (uint32_t)T(c, x)->rank;
    if (fe_attr_ints(c, "perm", &p, &n)) {
        if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_FORMAT, "perm has %u entries", n);
        if (n) memcpy(perm, p, n * sizeof *p); /* protobuf-c leaves an empty list NULL */
    } else {
        for (uint32_t i = 0; i < n; i++) perm[i] = n - 1 - i; /* default: reverse */
    }
    ir_attr a = symc_attr_ints("perm", perm, n);
    return fe_emit1(c, IR_OP_TRANSPOSE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_concat(fe_ctx *c) {
    uint32_t n = fe_n_in(c), out;
    if (n < 1) return fe_fail(c, SYMC_ERR_FORMAT, "needs at least one input");
    uint32_t *in = ir_alloc(c->m, n * sizeof *in);
    if (!in) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    symc_status st = SYMC_OK;
    uint32_t m = 0;
    for (uint32_t k = 0; k < n && !st; k++) {
        if (!fe_has_in(c, k)) continue;
        st = fe_in(c, k, &in[m++]);
    }
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 0));
    return st ? st : fe_emit1(c, IR_OP_CONCAT, in, m, &a, 1, 0, &out);
}

static symc_status h_gather(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t in[2], out;
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 0));
    return st ? st : fe_emit1(c, IR_OP_GATHER, in, 2, &a, 1, 0, &out);
}

static symc_status h_gather_elements(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t in[2], out;
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 0));
    return st ? st : fe_emit1(c, IR_OP_GATHER_ELEMENTS, in, 2, &a, 1, 0, &out);
}

/* Unsqueeze/Squeeze: axes are an input since opset 13 (constant). */
static symc_status axes_of(fe_ctx *c, int64_t *axes, uint32_t *n, int *have) {
    uint32_t t;
    *have = fe_has_in(c, 1);
    *n = 0;
    if (!*have) return SYMC_OK;
    symc_status st = fe_in(c, 1, &t);
    return st ? st : fe_const_ints(c, t, 1, "the axes", axes, IR_MAX_RANK, n);
}

static symc_status h_unsqueeze(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, out, n = 0;
    int64_t axes[IR_MAX_RANK];
    int have;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = axes_of(c, axes, &n, &have);
    ir_attr a = symc_attr_ints("axes", axes, n);
    return st ? st : fe_emit1(c, IR_OP_UNSQUEEZE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_squeeze(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 2);
    uint32_t x, out, n = 0;
    int64_t axes[IR_MAX_RANK];
    int have;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = axes_of(c, axes, &n, &have);
    ir_attr a = symc_attr_ints("axes", axes, n);
    return st ? st : fe_emit1(c, IR_OP_SQUEEZE, &x, 1, &a, n ? 1 : 0, 0, &out);
}

static symc_status h_flatten(fe_ctx *c) {
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 1));
    return emit_unary_attrs(c, IR_OP_FLATTEN, &a, 1);
}

/* Size: the element count as an i64 scalar. With symbolic dims it is read
 * from the shape of x flattened to [1, numel], so it carries the product as
 * a symbolic value like any Shape result. */
static symc_status h_size(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, f, s, one, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int64_t n = 1, v;
    int known = 1;
    for (int d = 0; d < xt->rank && known; d++) {
        if (!sym_is_const(c->t, xt->dims[d], &v)) known = 0;
        else n *= v;
    }
    if (known) return fe_const(c, SYMC_I64, 0, NULL, &n, 0, &out);
    int64_t sq_axis = 0;
    sym_expr b = sym_const(c->t, 1), e = sym_const(c->t, 2);
    ir_attr fa = symc_attr_int("axis", 0), sa[2] = {symc_attr_dims("starts", &b, 1), symc_attr_dims("ends", &e, 1)};
    ir_attr qa = symc_attr_ints("axes", &sq_axis, 1);
    if ((st = fe_emit1(c, IR_OP_FLATTEN, &x, 1, &fa, 1, -1, &f)) ||
        (st = fe_emit1(c, IR_OP_SHAPE_OF, &f, 1, NULL, 0, -1, &s)) ||
        (st = fe_emit1(c, IR_OP_SLICE, &s, 1, sa, 2, -1, &one)))
        return st;
    return fe_emit1(c, IR_OP_SQUEEZE, &one, 1, &qa, 1, 0, &out);
}

/* DepthToSpace and SpaceToDepth: reshape, transpose, reshape (exact data
 * movement). DepthToSpace DCR reads the channels as [b, b, C/b^2], CRD as
 * [C/b^2, b, b]. */
static symc_status depth_space(fe_ctx *c, int to_space) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, t, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    if (xt->rank != 4)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs 4 (NCHW)", xt->name, (int)xt->rank);
    int64_t bs = fe_attr_i(c, "blocksize", 0);
    if (bs < 1) return fe_fail(c, SYMC_ERR_FORMAT, "blocksize = %" PRId64 " must be >= 1", bs);
    sym_expr N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], B = sym_const(c->t, bs);
    sym_expr m1 = SYM_NONE, d6[6], d4[4]; /* SYM_NONE: reshape's -1 */
    int64_t perm[6];
    if (to_space) {
        const char *mode = fe_attr_s(c, "mode", "DCR");
        int crd = !strcmp(mode, "CRD");
        if (!crd && strcmp(mode, "DCR")) return fe_fail(c, SYMC_ERR_FORMAT, "mode = '%s' (expected DCR or CRD)", mode);
        sym_expr a[6] = {N, B, B, m1, H, W}, b[6] = {N, m1, B, B, H, W};
        static const int64_t pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
        memcpy(d6, crd ? b : a, sizeof d6);
        memcpy(perm, crd ? pc : pd, sizeof perm);
        sym_expr o[4] = {N, m1, sym_scale(c->t, H, bs), sym_scale(c->t, W, bs)};
        memcpy(d4, o, sizeof d4);
    } else {
        sym_expr a[6] = {N, C, sym_floordiv(c->t, H, B), B, m1, B};
        static const int64_t p[6] = {0, 3, 5, 1, 2, 4};
        memcpy(d6, a, sizeof d6);
        memcpy(perm, p, sizeof perm);
        sym_expr o[4] = {N, sym_scale(c->t, C, bs * bs), sym_floordiv(c->t, H, B), m1};
        memcpy(d4, o, sizeof d4);
    }
    ir_attr pa = symc_attr_ints("perm", perm, 6);
    if ((st = emit_reshape(c, x, d6, 6, -1, &t)) || (st = fe_emit1(c, IR_OP_TRANSPOSE, &t, 1, &pa, 1, -1, &t)))
        return st;
    return emit_reshape(c, t, d4, 4, 0, &out);
}
static symc_status h_depth_to_space(fe_ctx *c) { return depth_space(c, 1); }
static symc_status h_space_to_depth(fe_ctx *c) { return depth_space(c, 0); }

/* A start/end beyond any dim means "to the edge": clamped against the dim
 * here, so the slice attribute reads as the dim instead of 2^63-1. Exact
 * under ONNX clamping for either step sign. */
static sym_expr clamp_end(fe_ctx *c, sym_expr e, sym_expr dim) {
    int64_t v;
    if (!sym_is_const(c->t, e, &v) || (v < ((int64_t)1 << 40) && v > -((int64_t)1 << 40))) return e;
    return v > 0 ? dim : sym_sub(c->t, sym_const(c->t, -1), dim);
}

static symc_status h_slice(fe_ctx *c) {
    symc_status st = need_inputs(c, 3, 5);
    uint32_t x, t, ns, ne, na = 0, nst = 0;
    const sym_expr *sv, *ev;
    int64_t axes[IR_MAX_RANK], steps[IR_MAX_RANK];
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the starts", &sv, &ns);
    if (!st) st = fe_in(c, 2, &t);
    if (!st) st = fe_values(c, t, 2, "the ends", &ev, &ne);
    if (!st && fe_has_in(c, 3) && !(st = fe_in(c, 3, &t)))
        st = fe_const_ints(c, t, 3, "the axes", axes, IR_MAX_RANK, &na);
    if (!st && fe_has_in(c, 4) && !(st = fe_in(c, 4, &t)))
        st = fe_const_ints(c, t, 4, "the steps", steps, IR_MAX_RANK, &nst);
    if (st) return st;
    int32_t r = T(c, x)->rank;
    if (ns != ne || (fe_has_in(c, 3) && na != ns) || (fe_has_in(c, 4) && nst != ns) || ns > IR_MAX_RANK)
        return fe_fail(c, SYMC_ERR_FORMAT, "starts, ends, axes and steps have %u, %u, %u and %u entries", ns, ne,
                       fe_has_in(c, 3) ? na : ns, fe_has_in(c, 4) ? nst : ns);
    sym_expr s[IR_MAX_RANK], e[IR_MAX_RANK];
    for (uint32_t i = 0; i < ns; i++) {
        int64_t ax = fe_has_in(c, 3) ? axes[i] : (int64_t)i;
        if (ax < -r || ax >= r)
            return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range for rank %d", ax, (int)r);
        sym_expr dim = T(c, x)->dims[ax < 0 ? ax + r : ax];
        s[i] = clamp_end(c, sv[i], dim);
        e[i] = clamp_end(c, ev[i], dim);
    }
    ir_attr a[4] = {symc_attr_dims("starts", s, ns), symc_attr_dims("ends", e, ns)};
    uint32_t n_a = 2;
    if (fe_has_in(c, 3)) a[n_a++] = symc_attr_ints("axes", axes, na);
    if (fe_has_in(c, 4)) a[n_a++] = symc_attr_ints("steps", steps, nst);
    return fe_emit1(c, IR_OP_SLICE, &x, 1, a, n_a, 0, &t);
}

static symc_status h_split(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 2);
    uint32_t x, t, n_out = (uint32_t)c->node->n_output, n;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    if (n_out < 1 || n_out > 64) return fe_fail(c, SYMC_ERR_FORMAT, "has %u outputs", n_out);
    int64_t axis = fe_attr_i(c, "axis", 0);
    int32_t r = T(c, x)->rank;
    if (axis < -r || axis >= r)
        return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range for rank %d", axis, (int)r);
    sym_expr dim = T(c, x)->dims[axis < 0 ? axis + r : axis], sizes[64];
    if (fe_has_in(c, 1)) {
        const sym_expr *v;
        if ((st = fe_in(c, 1, &t)) || (st = fe_values(c, t, 1, "the split sizes", &v, &n))) return st;
        if (n != n_out) return fe_fail(c, SYMC_ERR_FORMAT, "%u split sizes for %u outputs", n, n_out);
        memcpy(sizes, v, n * sizeof *v);
    } else {
        int64_t parts = fe_attr_i(c, "num_outputs", n_out);
        if (parts != (int64_t)n_out)
            return fe_fail(c, SYMC_ERR_FORMAT, "num_outputs = %" PRId64 " but the node has %u outputs", parts, n_out);
        if (c->opset >= 18) {
            /* opset 18: chunks of ceil(dim / n), the last one smaller */
            sym_expr chunk = sym_ceildiv(c->t, dim, sym_const(c->t, n_out));
            for (uint32_t k = 0; k + 1 < n_out; k++) sizes[k] = chunk;
            sizes[n_out - 1] = sym_sub(c->t, dim, sym_scale(c->t, chunk, n_out - 1));
        } else {
            for (uint32_t k = 0; k < n_out; k++) sizes[k] = sym_floordiv(c->t, dim, sym_const(c->t, n_out));
        }
    }
    int out_k[64];
    uint32_t outs[64];
    for (uint32_t k = 0; k < n_out; k++) out_k[k] = fe_has_out(c, k) ? (int)k : -1;
    ir_attr a[2] = {symc_attr_int("axis", axis), symc_attr_dims("sizes", sizes, n_out)};
    return fe_emit(c, IR_OP_SPLIT, &x, 1, a, 2, out_k, n_out, outs);
}

static symc_status h_pad(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 4);
    uint32_t x, t, n, na = 0, out;
    const sym_expr *pv;
    int64_t axes[IR_MAX_RANK];
    double value = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the pads", &pv, &n);
    if (!st && fe_has_in(c, 2) && !(st = fe_in(c, 2, &t))) st = fe_const_scalar(c, t, 2, "the constant value", &value);
    if (!st && fe_has_in(c, 3) && !(st = fe_in(c, 3, &t)))
        st = fe_const_ints(c, t, 3, "the axes", axes, IR_MAX_RANK, &na);
    if (st) return st;
    const char *mode = fe_attr_s(c, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "mode '%s' is not supported (constant, reflect, edge, wrap are)", mode);
    int32_t r = T(c, x)->rank;
    if (!fe_has_in(c, 3)) {
        na = (uint32_t)r;
        for (int32_t i = 0; i < r; i++) axes[i] = i;
    }
    if (n != 2 * na) return fe_fail(c, SYMC_ERR_FORMAT, "pads has %u entries for %u axes", n, na);
    sym_expr pads[2 * IR_MAX_RANK];
    for (int32_t i = 0; i < 2 * r; i++) pads[i] = sym_const(c->t, 0);
    for (uint32_t i = 0; i < na; i++) {
        int64_t ax = axes[i] < 0 ? axes[i] + r : axes[i];
        if (ax < 0 || ax >= r)
            return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range for rank %d", axes[i], (int)r);
        pads[ax] = pv[i];
        pads[ax + r] = pv[i + na];
    }
    ir_attr a[3] = {symc_attr_dims("pads", pads, 2 * (uint32_t)r), symc_attr_str("mode", mode),
                    symc_attr_float("value", value)};
    return fe_emit1(c, IR_OP_PAD, &x, 1, a, 3, 0, &out);
}

/* CenterCropPad: one pad node, negative pads cropping. An axis shrinks by d
 * from floor(d / 2) at the start, or grows by d with floor(d / 2) zeros in
 * front (the reference's split); whether it shrinks must be decided at build
 * time. */
static symc_status h_center_crop_pad(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, t, n, out;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the target shape", &v, &n);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    int64_t axes[IR_MAX_RANK];
    const int64_t *av;
    uint32_t na = (uint32_t)r;
    if (fe_attr_ints(c, "axes", &av, &na)) {
        if (na > (uint32_t)r) return fe_fail(c, SYMC_ERR_FORMAT, "axes has %u entries for rank %d", na, (int)r);
        for (uint32_t i = 0; i < na; i++) {
            axes[i] = av[i] < 0 ? av[i] + r : av[i];
            if (axes[i] < 0 || axes[i] >= r)
                return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range for rank %d", av[i], (int)r);
        }
    } else {
        for (int32_t i = 0; i < r; i++) axes[i] = i;
    }
    if (n != na) return fe_fail(c, SYMC_ERR_FORMAT, "the target shape has %u entries for %u axes", n, na);
    sym_expr pads[2 * IR_MAX_RANK], two = sym_const(c->t, 2);
    for (int32_t i = 0; i < 2 * r; i++) pads[i] = sym_const(c->t, 0);
    for (uint32_t i = 0; i < na; i++) {
        sym_expr dim = xt->dims[axes[i]], grow = sym_sub(c->t, v[i], dim);
        sym_tri g = sym_prove_le(c->t, dim, v[i]), s = sym_prove_le(c->t, v[i], dim);
        sym_expr lo;
        if (g == SYM_TRUE) lo = sym_floordiv(c->t, grow, two);
        else if (s == SYM_TRUE) lo = sym_neg(c->t, sym_floordiv(c->t, sym_neg(c->t, grow), two));
        else
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "whether axis %" PRId64 " (%s) is cropped or padded to %s depends on the input size",
                           axes[i], fe_txt(c, dim), fe_txt(c, v[i]));
        pads[axes[i]] = lo;
        pads[axes[i] + r] = sym_sub(c->t, grow, lo);
    }
    ir_attr a[3] = {symc_attr_dims("pads", pads, 2 * (uint32_t)r), symc_attr_str("mode", "constant"),
                    symc_attr_float("value", 0.0)};
    return fe_emit1(c, IR_OP_PAD, &x, 1, a, 3, 0, &out);
}

static symc_status h_tile(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, t, n, out;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the repeats", &v, &n);
    if (st) return st;
    ir_attr a = symc_attr_dims("repeats", v, n);
    return fe_emit1(c, IR_OP_TILE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_trilu(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 2);
    uint32_t x, t, out;
    int64_t k = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && fe_has_in(c, 1)) {
        uint32_t n;
        if (!(st = fe_in(c, 1, &t))) st = fe_const_ints(c, t, 1, "the diagonal k", &k, 1, &n);
        if (!st && n != 1) st = fe_fail(c, SYMC_ERR_FORMAT, "k must be a scalar");
    }
    ir_attr a[2] = {symc_attr_int("upper", fe_attr_i(c, "upper", 1)), symc_attr_int("k", k)};
    return st ? st : fe_emit1(c, IR_OP_TRILU, &x, 1, a, 2, 0, &out);
}

/* Range: start, limit and delta are scalars known at build time (constants
 * or symbolic, e.g. a sequence length read from a shape). */
static symc_status h_range(fe_ctx *c) {
    symc_status st = need_inputs(c, 3, 3);
    static const char *const role[3] = {"the start", "the limit", "the delta"};
    static const char *const attr_name[3] = {"start", "limit", "delta"};
    sym_expr e[3];
    symc_dtype dt = SYMC_I64;
    for (uint32_t k = 0; k < 3 && !st; k++) {
        uint32_t t, n;
        if ((st = fe_in(c, k, &t))) break;
        if (k == 0) dt = T(c, t)->dtype; /* the output's dtype */
        if (ir_dtype_is_float(T(c, t)->dtype)) {
            double v;
            if ((st = fe_const_scalar(c, t, k, role[k], &v))) break;
            if (v != floor(v) || fabs(v) > 9e15)
                return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s is %g; a float Range needs whole numbers", role[k], v);
            e[k] = sym_const(c->t, (int64_t)v);
        } else {
            const sym_expr *v;
            if ((st = fe_values(c, t, k, role[k], &v, &n))) break;
            if (n != 1) return fe_fail(c, SYMC_ERR_FORMAT, "%s has %u elements, must be a scalar", role[k], n);
            e[k] = v[0];
        }
    }
    if (st) return st;
    ir_attr a[4] = {symc_attr_dims(attr_name[0], &e[0], 1), symc_attr_dims(attr_name[1], &e[1], 1),
                    symc_attr_dims(attr_name[2], &e[2], 1), symc_attr_dtype("to", dt)};
    uint32_t out;
    return fe_emit1(c, IR_OP_RANGE, NULL, 0, a, 4, 0, &out);
}

/* ---- resize ------------------------------------------------------------------------------------------ */

/* The elements of a constant float tensor (roi, scales) as doubles. */
static symc_status const_floats(fe_ctx *c, uint32_t t, uint32_t k, const char *role, double *v, uint32_t cap,
                                uint32_t *n) {
    const ir_tensor *x = T(c, t);
    if (x->constant == IR_NONE)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input %u '%s' (%s) is not known at build time: %s '%s'%s", k,
                       c->node->input[k], role, x->producer == IR_NONE ? "it is the graph input" : "it comes from node",
                       x->producer == IR_NONE ? x->name : c->m->nodes[x->producer].name,
                       x->producer == IR_NONE ? ", whose elements are only known at run time"
                                              : "; symc needs a constant");
    if (!ir_dtype_is_float(x->dtype))
        return fe_fail(c, SYMC_ERR_FORMAT, "input %u '%s' (%s) must be a float tensor", k, c->node->input[k], role);
    const ir_constant *cd = &c->m->constants[x->constant];
    size_t es = symc_dtype_size(x->dtype), cnt = es ? cd->size / es : 0;
    if (cnt > cap)
        return fe_fail(c, SYMC_ERR_FORMAT, "input %u '%s' (%s) has %zu elements, at most %u", k, c->node->input[k],
                       role, cnt, cap);
    for (size_t i = 0; i < cnt; i++) v[i] = symc_dtype_load(cd->data, x->dtype, i);
    *n = (uint32_t)cnt;
    return SYMC_OK;
}

/* Whether input k is present with at least one element (Resize passes an
 * empty tensor for the one of scales and sizes it does not use). */
static int nonempty_in(fe_ctx *c, uint32_t k) {
    uint32_t t;
    if (!fe_has_in(c, k) || fe_in(c, k, &t)) return 0;
    int64_t v;
    const ir_tensor *x = T(c, t);
    return !(x->rank == 1 && sym_is_const(c->t, x->dims[0], &v) && v == 0);
}

/* floor(in * scale) as an expression: a float scale is exactly num / 2^e,
 * so the product's floor is (in * num) // 2^e whatever in is. */
static symc_status scaled_dim(fe_ctx *c, sym_expr in, double scale, sym_expr *out) {
    double num = scale;
    int64_t den = 1, v;
    while (num != floor(num) && den < ((int64_t)1 << 40)) num *= 2, den *= 2;
    if (sym_is_const(c->t, in, &v)) {
        *out = sym_const(c->t, (int64_t)floor((double)v * scale));
        return SYMC_OK;
    }
    if (num != floor(num) || num > (double)((int64_t)1 << 31))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "scale %.17g of the symbolic dim %s is not a binary fraction symc can multiply exactly", scale,
                       fe_txt(c, in));
    *out = sym_floordiv(c->t, sym_scale(c->t, in, (int64_t)num), sym_const(c->t, den));
    return *out == SYM_NONE ? fe_fail(c, SYMC_ERR_INTERNAL, "could not build floor(%s * %g)", fe_txt(c, in), scale)
                            : SYMC_OK;
}

/* Resize (opsets 13-19; older models are converted up to 13). scales and
 * roi must be constants; sizes may be symbolic (a shape computation). Every
 * attribute value of the opsets is implemented; keep_aspect_ratio_policy
 * other than stretch needs constant input dims and sizes, since its output
 * size round(min or max of sizes / dims * dim) is not an integer expression
 * symc can keep symbolic. */
static symc_status h_resize(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 4);
    uint32_t x, t, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    sym_expr xd[IR_MAX_RANK]; /* x's dims: reading the other inputs may add tensors and move the table */
    memcpy(xd, xt->dims, sizeof xd);
    const char *mode = fe_attr_s(c, "mode", "nearest");
    const char *coord = fe_attr_s(c, "coordinate_transformation_mode", "half_pixel");
    const char *nearest = fe_attr_s(c, "nearest_mode", "round_prefer_floor");
    const char *keep = fe_attr_s(c, "keep_aspect_ratio_policy", "stretch");
    int64_t antialias = fe_attr_i(c, "antialias", 0), exclude = fe_attr_i(c, "exclude_outside", 0);
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric",           "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int ok_mode = 0, ok_coord = 0, ok_near = 0;
    for (int i = 0; i < 3; i++) ok_mode |= !strcmp(mode, modes[i]);
    for (int i = 0; i < 6; i++) ok_coord |= !strcmp(coord, coords[i]);
    for (int i = 0; i < 4; i++) ok_near |= !strcmp(nearest, nearests[i]);
    if (!ok_mode) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "mode = '%s' (expected nearest, linear or cubic)", mode);
    if (!ok_coord)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "coordinate_transformation_mode = '%s' is not supported (half_pixel, half_pixel_symmetric, "
                       "pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize are)",
                       coord);
    if (!ok_near) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "nearest_mode = '%s' is not supported", nearest);
    if (strcmp(keep, "stretch") && strcmp(keep, "not_larger") && strcmp(keep, "not_smaller"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "keep_aspect_ratio_policy = '%s' is not supported", keep);
    if (antialias && !strcmp(mode, "nearest"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "antialias = 1 with mode 'nearest' is not defined");
    if (antialias != 0 && antialias != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "antialias = %" PRId64 " must be 0 or 1", antialias);

    /* axes (opset 18): the dims that scales, sizes and roi speak of */
    int64_t axes[IR_MAX_RANK];
    uint32_t na = (uint32_t)r;
    const int64_t *av;
    uint32_t an;
    if (fe_attr_ints(c, "axes", &av, &an)) {
        if (an == 0 || an > (uint32_t)r)
            return fe_fail(c, SYMC_ERR_FORMAT, "axes has %u entries for rank %d", an, (int)r);
        int seen[IR_MAX_RANK] = {0};
        for (uint32_t i = 0; i < an; i++) {
            int64_t a = av[i] < 0 ? av[i] + r : av[i];
            if (a < 0 || a >= r || seen[a])
                return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range or repeated", av[i]);
            seen[a] = 1;
            axes[i] = a;
        }
        na = an;
    } else {
        for (int32_t i = 0; i < r; i++) axes[i] = i;
    }

    int have_scales = nonempty_in(c, 2), have_sizes = nonempty_in(c, 3);
    if (have_scales == have_sizes)
        return fe_fail(c, SYMC_ERR_FORMAT, "exactly one of scales (input 2) and sizes (input 3) must be given");
    sym_expr sizes[IR_MAX_RANK];
    double scales[IR_MAX_RANK], roi[2 * IR_MAX_RANK];
    int with_scales = have_scales;
    memcpy(sizes, xd, (size_t)r * sizeof sizes[0]);
    for (int32_t d = 0; d < r; d++) scales[d] = 1.0, roi[d] = 0.0, roi[d + r] = 1.0;
    uint32_t n;
    if (have_scales) {
        double v[IR_MAX_RANK];
        if ((st = fe_in(c, 2, &t)) || (st = const_floats(c, t, 2, "the scales", v, IR_MAX_RANK, &n))) return st;
        if (n != na) return fe_fail(c, SYMC_ERR_FORMAT, "scales has %u entries for %u axes", n, na);
        for (uint32_t i = 0; i < na; i++) {
            if (!(v[i] > 0) || !isfinite(v[i]))
                return fe_fail(c, SYMC_ERR_FORMAT, "scale %u is %g, must be positive", i, v[i]);
            scales[axes[i]] = v[i];
            if ((st = scaled_dim(c, xd[axes[i]], v[i], &sizes[axes[i]]))) return st;
        }
    } else {
        const sym_expr *v;
        if ((st = fe_in(c, 3, &t)) || (st = fe_values(c, t, 3, "the output sizes", &v, &n))) return st;
        if (n != na) return fe_fail(c, SYMC_ERR_FORMAT, "sizes has %u entries for %u axes", n, na);
        for (uint32_t i = 0; i < na; i++) sizes[axes[i]] = v[i];
        if (strcmp(keep, "stretch")) {
            /* one scale for every axis: the min (not_larger) or max (not_smaller)
             * of sizes / dims, and sizes round-half-up(scale * dim) */
            double s = 0;
            int64_t in[IR_MAX_RANK], want[IR_MAX_RANK];
            for (uint32_t i = 0; i < na; i++) {
                if (!sym_is_const(c->t, xd[axes[i]], &in[i]) || !sym_is_const(c->t, v[i], &want[i]) || in[i] <= 0)
                    return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                                   "keep_aspect_ratio_policy '%s' needs constant input dims and sizes: dim %" PRId64
                                   " is %s, size %s",
                                   keep, axes[i], fe_txt(c, xd[axes[i]]), fe_txt(c, v[i]));
                double q = (double)want[i] / (double)in[i];
                if (i == 0 || (!strcmp(keep, "not_larger") ? q < s : q > s)) s = q;
            }
            for (uint32_t i = 0; i < na; i++) {
                scales[axes[i]] = s;
                sizes[axes[i]] = sym_const(c->t, (int64_t)(s * (double)in[i] + 0.5));
            }
            with_scales = 1;
        }
    }
    if (!strcmp(coord, "tf_crop_and_resize")) {
        double v[2 * IR_MAX_RANK];
        if (!nonempty_in(c, 1)) return fe_fail(c, SYMC_ERR_FORMAT, "tf_crop_and_resize needs roi (input 1)");
        if ((st = fe_in(c, 1, &t)) || (st = const_floats(c, t, 1, "the roi", v, 2 * IR_MAX_RANK, &n))) return st;
        if (n != 2 * na) return fe_fail(c, SYMC_ERR_FORMAT, "roi has %u entries for %u axes", n, na);
        for (uint32_t i = 0; i < na; i++) roi[axes[i]] = v[i], roi[axes[i] + r] = v[i + na];
    }
    ir_attr a[10];
    uint32_t k = 0;
    a[k++] = symc_attr_dims("sizes", sizes, (uint32_t)r);
    if (with_scales) a[k++] = symc_attr_floats("scales", scales, (uint32_t)r);
    a[k++] = symc_attr_str("mode", mode);
    a[k++] = symc_attr_str("coord_mode", coord);
    a[k++] = symc_attr_str("nearest_mode", nearest);
    a[k++] = symc_attr_float("cubic_coeff_a", fe_attr_f(c, "cubic_coeff_a", -0.75));
    a[k++] = symc_attr_int("exclude_outside", exclude != 0);
    a[k++] = symc_attr_float("extrapolation_value", fe_attr_f(c, "extrapolation_value", 0.0));
    if (!strcmp(coord, "tf_crop_and_resize")) a[k++] = symc_attr_floats("roi", roi, 2 * (uint32_t)r);
    a[k++] = symc_attr_int("antialias", antialias);
    return fe_emit1(c, IR_OP_RESIZE, &x, 1, a, k, 0, &out);
}

/* ---- sources -------------------------------------------------------------------------------------------- */

static symc_status h_constant(fe_ctx *c) {
    symc_status st = need_inputs(c, 0, 0);
    if (st) return st;
    if (c->node->n_attribute != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "needs exactly one value attribute, has %zu", c->node->n_attribute);
    const Onnx__AttributeProto *a = c->node->attribute[0];
    uint32_t out;
    if (!strcmp(a->name, "value") && a->t) {
        symc_dtype dt;
        int32_t rank;
        int64_t dims[IR_MAX_RANK];
        uint8_t *data;
        size_t size;
        if ((st = fe_tensor_data(c, a->t, "attribute 'value'", &dt, &rank, dims, &data, &size))) return st;
        st = fe_const(c, dt, rank, dims, data, 0, &out);
        free(data);
        return st;
    }
    if (!strcmp(a->name, "value_float")) {
        float f = a->f;
        return fe_const(c, SYMC_F32, 0, NULL, &f, 0, &out);
    }
    if (!strcmp(a->name, "value_int")) return fe_const(c, SYMC_I64, 0, NULL, &a->i, 0, &out);
    if (!strcmp(a->name, "value_floats")) {
        int64_t d = (int64_t)a->n_floats;
        return fe_const(c, SYMC_F32, 1, &d, a->floats, 0, &out);
    }
    if (!strcmp(a->name, "value_ints")) {
        int64_t d = (int64_t)a->n_ints;
        return fe_const(c, SYMC_I64, 1, &d, a->ints, 0, &out);
    }
    return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a constant given as '%s' is not supported", a->name);
}

/* ConstantOfShape: a one-element constant expanded to the shape. */
static symc_status h_constant_of_shape(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t s, n, scalar, out;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &s);
    if (!st) st = fe_values(c, s, 0, "the output shape", &v, &n);
    if (st) return st;
    if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "output rank %u exceeds %d", n, IR_MAX_RANK);
    const Onnx__AttributeProto *va = fe_attr(c, "value");
    symc_dtype dt = SYMC_F32;
    uint8_t zero[8] = {0}, *data = zero;
    if (va && va->t) {
        int32_t rank;
        int64_t dims[IR_MAX_RANK];
        size_t size;
        if ((st = fe_tensor_data(c, va->t, "attribute 'value'", &dt, &rank, dims, &data, &size))) return st;
        if (size != symc_dtype_size(dt)) {
            free(data);
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'value' must hold one element");
        }
    }
    st = fe_const(c, dt, 0, NULL, data, -1, &scalar);
    if (data != zero) free(data);
    if (st) return st;
    ir_attr a = symc_attr_dims("shape", v, n);
    if ((st = fe_emit1(c, IR_OP_EXPAND, &scalar, 1, &a, 1, 0, &out))) return st;
    return fold(c, "Expand", &scalar, 1, out);
}

static symc_status h_dropout(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 3);
    if (!st) st = only_first_output(c, "the dropout mask");
    uint32_t x, out, tm;
    if (!st) st = fe_in(c, 0, &x);
    /* training_mode (input 2 since opset 12, default false) switches dropout
     * on: refused like BatchNormalization's, unless a constant false */
    if (!st && fe_has_in(c, 2) && !(st = fe_in(c, 2, &tm))) {
        double on = 0;
        if (T(c, tm)->constant == IR_NONE)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "input 2 '%s' (training_mode) is not a constant: symc compiles "
                           "for inference only, so training_mode must be a constant false",
                           c->node->input[2]);
        if ((st = fe_const_scalar(c, tm, 2, "training_mode", &on))) return st;
        if (on != 0) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "training_mode=1 is not supported (inference only)");
    }
    /* inference: Dropout is the identity whatever the ratio */
    return st ? st : fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, 0, &out);
}

/* ---- table ------------------------------------------------------------------------------------------------ */

typedef struct op_entry {
    const char *name;
    symc_status (*fn)(fe_ctx *c);
} op_entry;

static const op_entry ops[] = {
    {"Abs", h_abs},
    {"Add", h_add},
    {"And", h_and},
    {"AveragePool", h_avg_pool},
    {"BatchNormalization", h_batch_norm},
    {"Cast", h_cast},
    {"Ceil", h_ceil},
    {"CenterCropPad", h_center_crop_pad},
    {"Clip", h_clip},
    {"Concat", h_concat},
    {"Constant", h_constant},
    {"ConstantOfShape", h_constant_of_shape},
    {"Conv", h_conv},
    {"ConvTranspose", h_conv_transpose},
    {"Cos", h_cos},
    {"DepthToSpace", h_depth_to_space},
    {"Div", h_div},
    {"Dropout", h_dropout},
    {"Equal", h_equal},
    {"Erf", h_erf},
    {"Exp", h_exp},
    {"Expand", h_expand},
    {"Flatten", h_flatten},
    {"Floor", h_floor},
    {"Gather", h_gather},
    {"GatherElements", h_gather_elements},
    {"Gelu", h_gelu},
    {"Gemm", h_gemm},
    {"GlobalAveragePool", h_global_avg_pool},
    {"Greater", h_greater},
    {"GreaterOrEqual", h_greater_equal},
    {"GroupNormalization", h_group_norm},
    {"HardSigmoid", h_hard_sigmoid},
    {"HardSwish", h_hard_swish},
    {"Identity", h_identity},
    {"InstanceNormalization", h_instance_norm},
    {"IsInf", h_is_inf},
    {"IsNaN", h_is_nan},
    {"LRN", h_lrn},
    {"LpPool", h_lp_pool},
    {"LayerNormalization", h_layer_norm},
    {"LeakyRelu", h_leaky_relu},
    {"Less", h_less},
    {"LessOrEqual", h_less_equal},
    {"Log", h_log},
    {"LogSoftmax", h_log_softmax},
    {"MatMul", h_matmul},
    {"Max", h_max},
    {"MaxPool", h_max_pool},
    {"MeanVarianceNormalization", h_mvn},
    {"Min", h_min},
    {"Mod", h_mod},
    {"Mul", h_mul},
    {"Neg", h_neg},
    {"Not", h_not},
    {"Or", h_or},
    {"Pad", h_pad},
    {"Pow", h_pow},
    {"Range", h_range},
    {"Reciprocal", h_reciprocal},
    {"ReduceMax", h_reduce_max},
    {"ReduceMean", h_reduce_mean},
    {"ReduceSum", h_reduce_sum},
    {"Relu", h_relu},
    {"Reshape", h_reshape},
    {"Resize", h_resize},
    {"Shape", h_shape},
    {"Sigmoid", h_sigmoid},
    {"Sign", h_sign},
    {"Sin", h_sin},
    {"Size", h_size},
    {"Slice", h_slice},
    {"Softmax", h_softmax},
    {"SpaceToDepth", h_space_to_depth},
    {"Split", h_split},
    {"Sqrt", h_sqrt},
    {"Squeeze", h_squeeze},
    {"Sub", h_sub},
    {"Sum", h_sum},
    {"Tan", h_tan},
    {"Tanh", h_tanh},
    {"Tile", h_tile},
    {"Transpose", h_transpose},
    {"Trilu", h_trilu},
    {"Unsqueeze", h_unsqueeze},
    {"Where", h_where},
};

symc_status fe_translate_node(fe_ctx *c) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, c->node->op_type)) return ops[i].fn(c);
    return fe_fail(c, SYMC_ERR_UNSUPPORTED, "ONNX op '%s' is not supported by symc's importer", c->node->op_type);
}
