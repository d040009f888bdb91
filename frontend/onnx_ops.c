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
 * symbolic; And, Or, Mod (passes/shape.c) and casts of one-element constants
 * fold the same way, which ONNX's function-expanded Attention needs.
 *
 * Ops ONNX defines by a function body (SoftmaxCrossEntropyLoss,
 * NegativeLogLikelihoodLoss, DynamicQuantizeLinear) are translated as that
 * body; the quantized ops decompose into existing ops on exact values (the
 * integer accumulation in int32 or double, round half to even, clip, cast);
 * ops whose inputs are all build-time constants (the window functions,
 * MelWeightMatrix) become constants computed here as the ONNX reference
 * computes them; an If whose condition is known at build time is its chosen
 * branch, imported in place, and Loop (constant trip count) and Scan
 * (constant length) are unrolled, their bodies imported once per iteration.
 * Anything that cannot be translated faithfully is an error
 * naming the node, never a silent approximation. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
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
        if (!sym_is_const(c->t, x->dims[d], &v) || v < 0 || (v && n > MAXV / v)) return -1; /* no overflow */
        n *= v;
        if (n > MAXV) return -1;
    }
    return n;
}

/* ---- build-time values the core rules do not compute ------------------------------------- */

static int is_intlike(symc_dtype d) { return d == SYMC_I64 || d == SYMC_I32 || d == SYMC_BOOL; }

/* Comparisons, Where, Not, And, Or, bool<->int Cast and Expand of known values, with
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
        else if (!strcmp(op, "And") || !strcmp(op, "Or")) {
            /* bool values are the constants 0 and 1 */
            int64_t p, q;
            if (!sym_is_const(c->t, a[0], &p) || !sym_is_const(c->t, a[1], &q)) return SYMC_OK;
            r = (!strcmp(op, "And") ? p && q : p || q) ? SYM_TRUE : SYM_FALSE;
        } else if (!strcmp(op, "Cast")) {
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
/* An op on one-element float constants becomes a constant computed here,
 * so a build-time value (a Loop's trip count from Range's expanded body) can
 * read it. Only ops whose result is the exact one rounded once (what the
 * reference backend and IEEE float arithmetic give): +, -, *, /, neg, abs,
 * ceil, floor, relu. *done = 0 when the inputs are not such constants. */
static symc_status fold_float_const(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n, int *done) {
    *done = 0;
    double v[2] = {0, 0};
    int32_t rank = 0;
    symc_dtype dt = T(c, in[0])->dtype;
    if (n > 2 || !ir_dtype_is_float(dt)) return SYMC_OK;
    for (uint32_t k = 0; k < n; k++) {
        const ir_tensor *x = T(c, in[k]);
        if (x->constant == IR_NONE || x->dtype != dt || small_numel(c, in[k]) != 1) return SYMC_OK;
        v[k] = symc_dtype_load(c->m->constants[x->constant].data, dt, 0);
        if (x->rank > rank) rank = x->rank;
    }
    double r;
    switch (op) {
    case IR_OP_ADD: r = v[0] + v[1]; break;
    case IR_OP_SUB: r = v[0] - v[1]; break;
    case IR_OP_MUL: r = v[0] * v[1]; break;
    case IR_OP_DIV: r = v[0] / v[1]; break;
    case IR_OP_NEG: r = -v[0]; break;
    case IR_OP_ABS: r = fabs(v[0]); break;
    case IR_OP_CEIL: r = ceil(v[0]); break;
    case IR_OP_FLOOR: r = floor(v[0]); break;
    case IR_OP_RELU: r = v[0] > 0 ? v[0] : isnan(v[0]) ? v[0] : 0.0; break;
    default: return SYMC_OK;
    }
    int64_t dims[IR_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) dims[d] = 1;
    uint8_t buf[8];
    uint32_t out;
    symc_dtype_store(buf, dt, 0, r);
    *done = 1;
    return fe_const(c, dt, rank, dims, buf, 0, &out);
}

static symc_status emit_plain(fe_ctx *c, ir_op op, uint32_t arity) {
    symc_status st = need_inputs(c, arity, arity);
    uint32_t in[3], out;
    int done = 0;
    for (uint32_t k = 0; k < arity && !st; k++) st = fe_in(c, k, &in[k]);
    if (!st) st = fold_float_const(c, op, in, arity, &done);
    if (st || done) return st;
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
PLAIN(h_round, IR_OP_ROUND, 1)
PLAIN(h_asin, IR_OP_ASIN, 1)
PLAIN(h_acos, IR_OP_ACOS, 1)
PLAIN(h_atan, IR_OP_ATAN, 1)
PLAIN(h_sinh, IR_OP_SINH, 1)
PLAIN(h_cosh, IR_OP_COSH, 1)
PLAIN(h_asinh, IR_OP_ASINH, 1)
PLAIN(h_acosh, IR_OP_ACOSH, 1)
PLAIN(h_atanh, IR_OP_ATANH, 1)
PLAIN(h_softplus, IR_OP_SOFTPLUS, 1)
PLAIN(h_softsign, IR_OP_SOFTSIGN, 1)
PLAIN(h_mish, IR_OP_MISH, 1)
PLAIN(h_bitwise_and, IR_OP_BITWISE_AND, 2)
PLAIN(h_bitwise_or, IR_OP_BITWISE_OR, 2)
PLAIN(h_bitwise_xor, IR_OP_BITWISE_XOR, 2)

/* Xor of booleans: not(a == b) */
static symc_status h_xor(fe_ctx *c) {
    uint32_t in[2], eq, out;
    symc_status st = need_inputs(c, 2, 2);
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    if (!st && (T(c, in[0])->dtype != SYMC_BOOL || T(c, in[1])->dtype != SYMC_BOOL))
        return fe_fail(c, SYMC_ERR_FORMAT, "inputs are %s and %s; Xor takes bool", symc_dtype_name(T(c, in[0])->dtype),
                       symc_dtype_name(T(c, in[1])->dtype));
    if (!st) st = fe_emit1(c, IR_OP_EQUAL, in, 2, NULL, 0, -1, &eq);
    return st ? st : fe_emit1(c, IR_OP_NOT, &eq, 1, NULL, 0, 0, &out);
}

/* BitwiseNot: all-ones - x, which flips every bit without a borrow */
static symc_status h_bitwise_not(fe_ctx *c) {
    uint32_t in[2], out;
    symc_status st = need_inputs(c, 1, 1);
    if (!st) st = fe_in(c, 0, &in[1]);
    if (st) return st;
    symc_dtype dt = T(c, in[1])->dtype;
    if (ir_dtype_is_float(dt) || dt == SYMC_BOOL)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' is %s; BitwiseNot takes integers", T(c, in[1])->name,
                       symc_dtype_name(dt));
    uint8_t ones[8];
    memset(ones, 0xff, sizeof ones);
    if ((st = fe_const(c, dt, 0, NULL, ones, -1, &in[0]))) return st;
    return fe_emit1(c, IR_OP_SUB, in, 2, NULL, 0, 0, &out);
}

/* PRelu: the slope broadcasts to x's shape, never the other way */
static symc_status h_prelu(fe_ctx *c) {
    uint32_t in[2], out;
    symc_status st = need_inputs(c, 2, 2);
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    if (!st) st = fe_emit1(c, IR_OP_PRELU, in, 2, NULL, 0, 0, &out);
    if (st) return st;
    const ir_tensor *x = T(c, in[0]), *y = T(c, out);
    int same = x->rank == y->rank;
    for (int d = 0; same && d < x->rank; d++) same = x->dims[d] == y->dims[d];
    if (!same)
        return fe_fail(c, SYMC_ERR_FORMAT, "slope '%s' does not broadcast to the shape of x '%s'", T(c, in[1])->name,
                       x->name);
    return SYMC_OK;
}

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

/* Mean: the sum, divided by the number of inputs (floats) */
static symc_status h_mean(fe_ctx *c) {
    uint32_t n = fe_n_in(c), acc, x, in[2], out;
    if (n < 1) return fe_fail(c, SYMC_ERR_FORMAT, "needs at least one input");
    symc_status st = fe_in(c, 0, &acc);
    if (st) return st;
    symc_dtype dt = T(c, acc)->dtype;
    if (!ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' is %s; Mean takes floats", T(c, acc)->name, symc_dtype_name(dt));
    if (n == 1) return fe_emit1(c, IR_OP_IDENTITY, &acc, 1, NULL, 0, 0, &out);
    for (uint32_t k = 1; k < n && !st; k++) {
        if ((st = fe_in(c, k, &x))) break;
        uint32_t ab[2] = {acc, x};
        st = fe_emit1(c, IR_OP_ADD, ab, 2, NULL, 0, -1, &acc);
    }
    uint8_t cnt[8];
    symc_dtype_store(cnt, dt, 0, (double)n);
    if (!st) st = fe_const(c, dt, 0, NULL, cnt, -1, &in[1]);
    in[0] = acc;
    return st ? st : fe_emit1(c, IR_OP_DIV, in, 2, NULL, 0, 0, &out);
}
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

static symc_status h_elu(fe_ctx *c) {
    ir_attr a = symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.0));
    return emit_unary_attrs(c, IR_OP_ELU, &a, 1);
}

static symc_status h_celu(fe_ctx *c) {
    double alpha = fe_attr_f(c, "alpha", 1.0);
    if (alpha == 0) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'alpha' is 0 (Celu divides by it)");
    ir_attr a = symc_attr_float("alpha", alpha);
    return emit_unary_attrs(c, IR_OP_CELU, &a, 1);
}

static symc_status h_selu(fe_ctx *c) {
    ir_attr a[2] = {symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.67326319217681884765625)),
                    symc_attr_float("gamma", fe_attr_f(c, "gamma", 1.05070102214813232421875))};
    return emit_unary_attrs(c, IR_OP_SELU, a, 2);
}

static symc_status h_thresholded_relu(fe_ctx *c) {
    ir_attr a = symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.0));
    return emit_unary_attrs(c, IR_OP_THRESHOLDED_RELU, &a, 1);
}

static symc_status h_shrink(fe_ctx *c) {
    ir_attr a[2] = {symc_attr_float("bias", fe_attr_f(c, "bias", 0.0)),
                    symc_attr_float("lambd", fe_attr_f(c, "lambd", 0.5))};
    return emit_unary_attrs(c, IR_OP_SHRINK, a, 2);
}

static symc_status h_bit_shift(fe_ctx *c) {
    const char *dir = fe_attr_s(c, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return fe_fail(c, SYMC_ERR_FORMAT, "direction = '%s' (expected LEFT or RIGHT)", dir);
    uint32_t in[2], out;
    symc_status st = need_inputs(c, 2, 2);
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    symc_dtype dt = st ? SYMC_U8 : T(c, in[0])->dtype;
    if (!st && dt != SYMC_U8 && dt != SYMC_U16 && dt != SYMC_U32 && dt != SYMC_U64)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' is %s; BitShift takes unsigned integers", T(c, in[0])->name,
                       symc_dtype_name(dt));
    ir_attr a = symc_attr_str("direction", !strcmp(dir, "LEFT") ? "left" : "right");
    return st ? st : fe_emit1(c, IR_OP_BIT_SHIFT, in, 2, &a, 1, 0, &out);
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

/* A cast of a one-element constant (or of an integer value folded from
 * constants) is made a constant
 * (the value rounded once, as the cast rounds it), so an op that needs the
 * value at build time (Pad's constant value after a CastLike) can read it.
 * *done = 0 when x is not such a constant. */
static symc_status cast_const(fe_ctx *c, uint32_t x, symc_dtype dt, int *done) {
    const ir_tensor *xt = T(c, x);
    *done = 0;
    int64_t iv;
    double v;
    if (small_numel(c, x) != 1) return SYMC_OK;
    if (xt->constant != IR_NONE) v = symc_dtype_load(c->m->constants[xt->constant].data, xt->dtype, 0);
    else if (xt->value && xt->n_value == 1 && sym_is_const(c->t, xt->value[0], &iv)) v = (double)iv; /* folded */
    else return SYMC_OK;
    if (dt == SYMC_BOOL) {
        v = v != 0; /* NaN too, as C's and numpy's conversions */
    } else if (ir_dtype_is_float(dt)) {
        if (!ir_dtype_is_float(xt->dtype) && xt->dtype != SYMC_BOOL && fabs(v) > 9007199254740992.0)
            return SYMC_OK; /* an integer a double may not hold: rounding twice could differ from the cast's once */
    } else {
        /* float to integer: only a whole number the integer type holds (no truncation, no overflow) */
        static const struct {
            symc_dtype dt;
            double lo, hi;
        } lim[] = {{SYMC_I8, -128, 127},
                   {SYMC_U8, 0, 255},
                   {SYMC_I16, -32768, 32767},
                   {SYMC_U16, 0, 65535},
                   {SYMC_I32, -2147483648.0, 2147483647.0},
                   {SYMC_U32, 0, 4294967295.0},
                   {SYMC_I64, -9007199254740992.0, 9007199254740992.0}};
        int ok = 0;
        for (size_t i = 0; i < sizeof lim / sizeof lim[0]; i++)
            ok |= lim[i].dt == dt && v >= lim[i].lo && v <= lim[i].hi;
        if (!ir_dtype_is_float(xt->dtype) || !ok || v != floor(v)) return SYMC_OK;
    }
    int64_t dims[IR_MAX_RANK];
    for (int32_t d = 0; d < xt->rank; d++) dims[d] = 1;
    uint8_t buf[8];
    symc_dtype_store(buf, dt, 0, v);
    uint32_t out;
    *done = 1;
    return fe_const(c, dt, xt->rank, dims, buf, 0, &out);
}

static symc_status h_cast(fe_ctx *c) {
    const Onnx__AttributeProto *to = fe_attr_of(c, "to", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    symc_dtype dt;
    if (!to) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'to' is missing");
    if (!fe_dtype((int32_t)to->i, &dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "cast to ONNX type %s is not supported",
                       fe_onnx_type_name((int32_t)to->i));
    ir_attr a = symc_attr_dtype("to", dt);
    uint32_t x, out;
    symc_status st = need_inputs(c, 1, 1);
    int done = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = cast_const(c, x, dt, &done);
    if (st || done) return st;
    if (!st) st = fe_emit1(c, IR_OP_CAST, &x, 1, &a, 1, 0, &out);
    if (!st && (T(c, x)->dtype == SYMC_BOOL || dt == SYMC_BOOL)) st = fold(c, "Cast", &x, 1, out);
    return st;
}

/* CastLike: a cast to the dtype of input 1 */
static symc_status h_cast_like(fe_ctx *c) {
    uint32_t x, like, out;
    symc_status st = need_inputs(c, 2, 2);
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &like);
    if (st) return st;
    symc_dtype dt = T(c, like)->dtype;
    ir_attr a = symc_attr_dtype("to", dt);
    int done = 0;
    if ((st = cast_const(c, x, dt, &done)) || done) return st;
    if ((st = fe_emit1(c, IR_OP_CAST, &x, 1, &a, 1, 0, &out))) return st;
    if (T(c, x)->dtype == SYMC_BOOL || dt == SYMC_BOOL) st = fold(c, "Cast", &x, 1, out);
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

/* Clip's bounds (inputs since opset 11) are scalars. Constant bounds of a
 * float input become the clip op's attributes; otherwise (bounds known only
 * at run time, or an integer input, whose bounds a double may not hold
 * exactly) Clip is max(x, min) then min(., max), which is also what it
 * means when min > max. */
static symc_status h_clip(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 3);
    uint32_t x, b, out;
    ir_attr a[2];
    uint32_t na = 0;
    static const char *const names[3] = {"", "min", "max"};
    if (!st) st = fe_in(c, 0, &x);
    int as_ops = !st && !ir_dtype_is_float(T(c, x)->dtype);
    for (uint32_t k = 1; k < 3 && !st && !as_ops; k++)
        if (fe_has_in(c, k) && !(st = fe_in(c, k, &b))) as_ops = T(c, b)->constant == IR_NONE;
    if (!st && as_ops) {
        int last = fe_has_in(c, 2) ? 2 : fe_has_in(c, 1) ? 1 : 0;
        if (!last) return fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, 0, &out);
        for (uint32_t k = 1; k < 3 && !st; k++) {
            if (!fe_has_in(c, k)) continue;
            if ((st = fe_in(c, k, &b))) break;
            if (small_numel(c, b) != 1)
                return fe_fail(c, SYMC_ERR_FORMAT, "input %u '%s' (%s) must be a scalar", k, c->node->input[k],
                               names[k]);
            uint32_t in[2] = {x, b};
            st = fe_emit1(c, k == 1 ? IR_OP_MAX : IR_OP_MIN, in, 2, NULL, 0, (int)k == last ? 0 : -1, &x);
        }
        return st;
    }
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

/* BatchNormalization. training_mode=1 (deterministic: no random draw)
 * normalizes with the batch's own statistics, the mean and the population
 * variance over every dim but the channels (1), and its outputs 1 and 2 are
 * the updated running statistics mean * momentum + batch * (1 - momentum). */
static symc_status h_batch_norm(fe_ctx *c) {
    symc_status st = need_inputs(c, 5, 5);
    int train = fe_attr_i(c, "training_mode", 0) != 0;
    if (!st && !train) st = only_first_output(c, "the running statistics of training");
    uint32_t in[5], out;
    for (uint32_t k = 0; k < 5 && !st; k++) st = fe_in(c, k, &in[k]);
    ir_attr a = symc_attr_float("epsilon", fe_attr_f(c, "epsilon", 1e-5));
    if (st || !train) return st ? st : fe_emit1(c, IR_OP_BATCH_NORM, in, 5, &a, 1, 0, &out);
    int32_t r = T(c, in[0])->rank;
    symc_dtype dt = T(c, in[0])->dtype;
    if (r < 2) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 2", T(c, in[0])->name, (int)r);
    if (!ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; only floats are supported", T(c, in[0])->name,
                       symc_dtype_name(dt));
    int64_t axes[IR_MAX_RANK];
    uint32_t na = 0;
    for (int32_t d = 0; d < r; d++)
        if (d != 1) axes[na++] = d;
    ir_attr keep0[2] = {symc_attr_int("keepdims", 0), symc_attr_ints("axes", axes, na)};
    uint32_t mk, dev, sq, bm, bv, bn[5];
    if ((st = emit_mean(c, in[0], axes, na, -1, &mk)) || (st = emit_bin(c, IR_OP_SUB, in[0], mk, -1, &dev)) ||
        (st = emit_bin(c, IR_OP_MUL, dev, dev, -1, &sq)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MEAN, &in[0], 1, keep0, 2, -1, &bm)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MEAN, &sq, 1, keep0, 2, -1, &bv)))
        return st;
    bn[0] = in[0], bn[1] = in[1], bn[2] = in[2], bn[3] = bm, bn[4] = bv;
    if ((st = fe_emit1(c, IR_OP_BATCH_NORM, bn, 5, &a, 1, 0, &out))) return st;
    double mom = fe_attr_f(c, "momentum", 0.9);
    for (uint32_t k = 1; k <= 2; k++) {
        if (!fe_has_out(c, k)) continue;
        uint32_t m, one_m, t, u, run;
        if ((st = emit_scalar(c, dt, mom, &m)) || (st = emit_scalar(c, dt, 1.0 - mom, &one_m)) ||
            (st = emit_bin(c, IR_OP_MUL, in[2 + k], m, -1, &t)) ||
            (st = emit_bin(c, IR_OP_MUL, k == 1 ? bm : bv, one_m, -1, &u)) ||
            (st = emit_bin(c, IR_OP_ADD, t, u, (int)k, &run)))
            return st;
    }
    return SYMC_OK;
}

/* ---- reductions -------------------------------------------------------------------------------- */

/* The axes of a Reduce* node: an input since opset 13 (ReduceSum) or 18 (the
 * others), an attribute before. noop: noop_with_empty_axes with no (or empty)
 * axes, where the node reduces nothing. */
typedef struct red_axes {
    int64_t axes[IR_MAX_RANK];
    uint32_t n;
    int noop, keep;
} red_axes;

static symc_status read_reduce_axes(fe_ctx *c, int64_t axes_input_since, red_axes *ra) {
    symc_status st = need_inputs(c, 1, 2);
    uint32_t ax;
    int have = 0;
    ra->n = 0;
    if (!st && c->opset >= axes_input_since) {
        if (fe_has_in(c, 1)) {
            have = 1;
            if (!(st = fe_in(c, 1, &ax))) st = fe_const_ints(c, ax, 1, "the axes", ra->axes, IR_MAX_RANK, &ra->n);
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
        if ((have = fe_attr_ints(c, "axes", &v, &ra->n))) {
            if (ra->n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_FORMAT, "%u axes", ra->n);
            if (ra->n) memcpy(ra->axes, v, ra->n * sizeof *v); /* protobuf-c leaves an empty list NULL */
        }
    }
    ra->noop = (!have || ra->n == 0) && fe_attr_i(c, "noop_with_empty_axes", 0);
    ra->keep = fe_attr_i(c, "keepdims", 1) != 0;
    return st;
}

/* op over the axes (keepdims `keep`), or the identity for a noop */
static symc_status emit_reduce(fe_ctx *c, ir_op op, uint32_t x, const red_axes *ra, int keep, int out_k,
                               uint32_t *out) {
    if (ra->noop) return fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, out_k, out);
    ir_attr a[2] = {symc_attr_int("keepdims", keep), symc_attr_ints("axes", ra->axes, ra->n)};
    return fe_emit1(c, op, &x, 1, a, ra->n ? 2 : 1, out_k, out);
}

static symc_status emit_unary(fe_ctx *c, ir_op op, uint32_t x, int out_k, uint32_t *out) {
    return fe_emit1(c, op, &x, 1, NULL, 0, out_k, out);
}

static symc_status emit_binary(fe_ctx *c, ir_op op, uint32_t a, uint32_t b, int out_k, uint32_t *out) {
    uint32_t in[2] = {a, b};
    return fe_emit1(c, op, in, 2, NULL, 0, out_k, out);
}

static symc_status need_float(fe_ctx *c, uint32_t x) {
    symc_dtype dt = T(c, x)->dtype;
    if (!ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; only float inputs are supported", T(c, x)->name,
                       symc_dtype_name(dt));
    return SYMC_OK;
}

/* ReduceSum/Mean/Max/Min/Prod: one core reduction. Bool max/min (any/all)
 * run on i32 0/1 and are cast back. */
static symc_status reduce(fe_ctx *c, ir_op op, int64_t axes_input_since) {
    red_axes ra;
    uint32_t x, out;
    symc_status st = read_reduce_axes(c, axes_input_since, &ra);
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    if (T(c, x)->dtype == SYMC_BOOL && (op == IR_OP_REDUCE_MAX || op == IR_OP_REDUCE_MIN)) {
        ir_attr to_i = symc_attr_dtype("to", SYMC_I32), to_b = symc_attr_dtype("to", SYMC_BOOL);
        if ((st = fe_emit1(c, IR_OP_CAST, &x, 1, &to_i, 1, -1, &x)) ||
            (st = emit_reduce(c, op, x, &ra, ra.keep, -1, &x)))
            return st;
        return fe_emit1(c, IR_OP_CAST, &x, 1, &to_b, 1, 0, &out);
    }
    return emit_reduce(c, op, x, &ra, ra.keep, 0, &out);
}
static symc_status h_reduce_sum(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_SUM, 13); }
static symc_status h_reduce_mean(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MEAN, 18); }
static symc_status h_reduce_max(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MAX, 18); }
static symc_status h_reduce_min(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MIN, 18); }
static symc_status h_reduce_prod(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_PROD, 18); }

/* The composite reductions, as their ONNX function bodies: L1 = sum(|x|),
 * L2 = sqrt(sum(x*x)), SumSquare = sum(x*x), LogSum = log(sum(x)). With
 * noop_with_empty_axes and no axes only the elementwise parts remain (the
 * ONNX reference: L1 gives |x|, SumSquare x*x, LogSum log(x)). */
typedef enum { RC_L1, RC_L2, RC_SUM_SQUARE, RC_LOG_SUM } red_composite;

static symc_status reduce_composite(fe_ctx *c, red_composite kind) {
    red_axes ra;
    uint32_t x, t, out;
    symc_status st = read_reduce_axes(c, 18, &ra);
    if (!st) st = fe_in(c, 0, &x);
    if (!st && (kind == RC_L2 || kind == RC_LOG_SUM)) st = need_float(c, x);
    if (st) return st;
    int last = kind == RC_L1 || kind == RC_SUM_SQUARE; /* the sum makes the output */
    if (kind == RC_L1) st = emit_unary(c, IR_OP_ABS, x, -1, &t);
    else if (kind == RC_LOG_SUM) t = x;
    else st = emit_binary(c, IR_OP_MUL, x, x, -1, &t);
    if (!st) st = emit_reduce(c, IR_OP_REDUCE_SUM, t, &ra, ra.keep, last ? 0 : -1, &t);
    if (st || last) return st;
    return emit_unary(c, kind == RC_L2 ? IR_OP_SQRT : IR_OP_LOG, t, 0, &out);
}
static symc_status h_reduce_l1(fe_ctx *c) { return reduce_composite(c, RC_L1); }
static symc_status h_reduce_l2(fe_ctx *c) { return reduce_composite(c, RC_L2); }
static symc_status h_reduce_sum_square(fe_ctx *c) { return reduce_composite(c, RC_SUM_SQUARE); }
static symc_status h_reduce_log_sum(fe_ctx *c) { return reduce_composite(c, RC_LOG_SUM); }

/* ReduceLogSumExp, max-shifted for range: s = max(x) (0 where the max is
 * infinite: an empty or all -inf set, or a +inf element), then
 * log(sum(exp(x - s))) + s, which gives -inf for an empty set as ONNX asks.
 * The reduced axes are kept until the end and dropped by a squeeze. */
static symc_status h_reduce_log_sum_exp(fe_ctx *c) {
    red_axes ra;
    uint32_t x, m, inf, zero, s, t, out;
    symc_status st = read_reduce_axes(c, 18, &ra);
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = need_float(c, x);
    if (st) return st;
    if (ra.noop) return emit_unary(c, IR_OP_IDENTITY, x, 0, &out);
    uint8_t zbytes[8] = {0}; /* 0.0 in every float dtype */
    ir_attr det[2] = {symc_attr_int("detect_positive", 1), symc_attr_int("detect_negative", 1)};
    if ((st = emit_reduce(c, IR_OP_REDUCE_MAX, x, &ra, 1, -1, &m)) ||
        (st = fe_emit1(c, IR_OP_IS_INF, &m, 1, det, 2, -1, &inf)) ||
        (st = fe_const(c, T(c, x)->dtype, 0, NULL, zbytes, -1, &zero)))
        return st;
    uint32_t w[3] = {inf, zero, m};
    if ((st = fe_emit1(c, IR_OP_WHERE, w, 3, NULL, 0, -1, &s)) || (st = emit_binary(c, IR_OP_SUB, x, s, -1, &t)) ||
        (st = emit_unary(c, IR_OP_EXP, t, -1, &t)) || (st = emit_reduce(c, IR_OP_REDUCE_SUM, t, &ra, 1, -1, &t)) ||
        (st = emit_unary(c, IR_OP_LOG, t, -1, &t)) || (st = emit_binary(c, IR_OP_ADD, t, s, ra.keep ? 0 : -1, &t)))
        return st;
    if (ra.keep) return SYMC_OK;
    int64_t all[IR_MAX_RANK];
    const int64_t *axes = ra.axes;
    uint32_t n = ra.n;
    if (!n) { /* every axis */
        n = (uint32_t)T(c, x)->rank;
        for (uint32_t i = 0; i < n; i++) all[i] = i;
        axes = all;
    }
    if (!n) return emit_unary(c, IR_OP_IDENTITY, t, 0, &out); /* a scalar */
    ir_attr a = symc_attr_ints("axes", axes, n);
    return fe_emit1(c, IR_OP_SQUEEZE, &t, 1, &a, 1, 0, &out);
}

/* ---- indices and positions ---------------------------------------------------------------------- */

static symc_status arg_reduce(fe_ctx *c, ir_op op) {
    ir_attr a[3] = {symc_attr_int("axis", fe_attr_i(c, "axis", 0)),
                    symc_attr_int("keepdims", fe_attr_i(c, "keepdims", 1) != 0),
                    symc_attr_int("select_last_index", fe_attr_i(c, "select_last_index", 0) != 0)};
    return emit_unary_attrs(c, op, a, 3);
}
static symc_status h_argmax(fe_ctx *c) { return arg_reduce(c, IR_OP_ARGMAX); }
static symc_status h_argmin(fe_ctx *c) { return arg_reduce(c, IR_OP_ARGMIN); }

/* A scalar (or one-element) integer input known at build time, as an
 * expression (a constant or symbolic, e.g. read from a shape). */
static symc_status scalar_value(fe_ctx *c, uint32_t k, const char *role, sym_expr *e) {
    uint32_t t, n;
    const sym_expr *v;
    symc_status st = fe_in(c, k, &t);
    if (!st && ir_dtype_is_float(T(c, t)->dtype)) {
        double d;
        if ((st = fe_const_scalar(c, t, k, role, &d))) return st;
        if (d != floor(d) || fabs(d) > 9e15)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s is %g; it must be a whole number", role, d);
        *e = sym_const(c->t, (int64_t)d);
        return SYMC_OK;
    }
    if (!st) st = fe_values(c, t, k, role, &v, &n);
    if (!st && n != 1) return fe_fail(c, SYMC_ERR_FORMAT, "input %u (%s) has %u elements, must be one", k, role, n);
    if (!st) *e = v[0];
    return st;
}

/* TopK: the core op gives the indices; the values are gathered with them.
 * The output is always sorted, which sorted=0 (any order) allows too. */
static symc_status h_topk(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, idx, vals;
    sym_expr k;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = scalar_value(c, 1, "k", &k);
    if (st) return st;
    if (sym_range_of(c->t, k).lo < 0) return fe_fail(c, SYMC_ERR_FORMAT, "k = %s may be negative", fe_txt(c, k));
    int64_t axis = fe_attr_i(c, "axis", -1);
    ir_attr a[3] = {symc_attr_dims("k", &k, 1), symc_attr_int("axis", axis),
                    symc_attr_int("largest", fe_attr_i(c, "largest", 1) != 0)};
    if ((st = fe_emit1(c, IR_OP_TOPK, &x, 1, a, 3, fe_has_out(c, 1) ? 1 : -1, &idx))) return st;
    if (!fe_has_out(c, 0)) return SYMC_OK;
    uint32_t in[2] = {x, idx};
    ir_attr g = symc_attr_int("axis", axis);
    return fe_emit1(c, IR_OP_GATHER_ELEMENTS, in, 2, &g, 1, 0, &vals);
}

/* 0, 1, ..., n-1 as an i64 tensor shaped to broadcast along `axis` of a
 * rank-r tensor: [n, 1, ..., 1] with r - axis - 1 trailing ones. */
static symc_status iota_along(fe_ctx *c, sym_expr start, sym_expr n, int32_t axis, int32_t r, symc_dtype dt,
                              uint32_t *out) {
    sym_expr one = sym_const(c->t, 1), limit = sym_add(c->t, start, n);
    ir_attr a[4] = {symc_attr_dims("start", &start, 1), symc_attr_dims("limit", &limit, 1),
                    symc_attr_dims("delta", &one, 1), symc_attr_dtype("to", dt)};
    symc_status st = fe_emit1(c, IR_OP_RANGE, NULL, 0, a, 4, -1, out);
    if (st || axis == r - 1) return st;
    sym_expr dims[IR_MAX_RANK];
    dims[0] = n;
    for (int32_t i = 1; i < r - axis; i++) dims[i] = one;
    ir_attr sh = symc_attr_dims("shape", dims, (uint32_t)(r - axis));
    return fe_emit1(c, IR_OP_RESHAPE, out, 1, &sh, 1, -1, out);
}

static symc_status norm_axis_of(fe_ctx *c, int64_t axis, int32_t r, int32_t *out) {
    if (axis < -r || axis >= r)
        return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range for rank %d", axis, (int)r);
    *out = (int32_t)(axis < 0 ? axis + r : axis);
    return SYMC_OK;
}

/* Hardmax: 1 at the first max along axis, else 0: argmax compared with the
 * positions along the axis. */
static symc_status h_hardmax(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, am, pos, eq, out;
    int32_t axis = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = norm_axis_of(c, fe_attr_i(c, "axis", -1), T(c, x)->rank, &axis);
    if (st) return st;
    ir_attr a[2] = {symc_attr_int("axis", axis), symc_attr_int("keepdims", 1)};
    ir_attr to = symc_attr_dtype("to", T(c, x)->dtype);
    if ((st = fe_emit1(c, IR_OP_ARGMAX, &x, 1, a, 2, -1, &am)) ||
        (st = iota_along(c, sym_const(c->t, 0), T(c, x)->dims[axis], axis, T(c, x)->rank, SYMC_I64, &pos)) ||
        (st = emit_binary(c, IR_OP_EQUAL, pos, am, -1, &eq)))
        return st;
    return fe_emit1(c, IR_OP_CAST, &eq, 1, &to, 1, 0, &out);
}

static symc_status h_cumsum(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, t, n, out;
    int64_t axis;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_const_ints(c, t, 1, "the axis", &axis, 1, &n);
    if (!st && n != 1) return fe_fail(c, SYMC_ERR_FORMAT, "the axis has %u elements, must be one", n);
    if (st) return st;
    ir_attr a[3] = {symc_attr_int("axis", axis), symc_attr_int("exclusive", fe_attr_i(c, "exclusive", 0) != 0),
                    symc_attr_int("reverse", fe_attr_i(c, "reverse", 0) != 0)};
    return fe_emit1(c, IR_OP_CUMSUM, &x, 1, a, 3, 0, &out);
}

/* OneHot: where(index == position, on, off) with the position along the new
 * axis; an index in [-depth, -1] counts from the end, any other index out of
 * [0, depth) matches nothing (all off), as the spec says. Indices of a float
 * type are compared as they are, so a fractional one matches nothing. */
static symc_status h_one_hot(fe_ctx *c) {
    symc_status st = need_inputs(c, 3, 3);
    uint32_t idx, dep, vals, zero, lt, sum, pos, eq, on, off, out;
    sym_expr depth;
    if (!st) st = fe_in(c, 0, &idx);
    if (!st) st = scalar_value(c, 1, "the depth", &depth);
    if (!st) st = fe_in(c, 1, &dep);
    if (!st) st = fe_in(c, 2, &vals);
    if (st) return st;
    symc_dtype dt = T(c, idx)->dtype;
    if (dt == SYMC_BOOL) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "bool indices are not supported");
    if (sym_range_of(c->t, depth).lo < 1) return fe_fail(c, SYMC_ERR_FORMAT, "depth %s may be < 1", fe_txt(c, depth));
    if (small_numel(c, vals) != 2)
        return fe_fail(c, SYMC_ERR_FORMAT, "input 2 (the values [off, on]) must have two elements");
    int32_t r = T(c, idx)->rank + 1, axis = 0;
    if ((st = norm_axis_of(c, fe_attr_i(c, "axis", -1), r, &axis))) return st;
    uint8_t zbytes[8] = {0};
    ir_attr to = symc_attr_dtype("to", dt), un = symc_attr_ints("axes", (int64_t[]){axis}, 1);
    sym_expr s0 = sym_const(c->t, 0), s1 = sym_const(c->t, 1), s2 = sym_const(c->t, 2);
    /* index + depth where the index is negative */
    if ((st = fe_const(c, dt, 0, NULL, zbytes, -1, &zero)) || (st = emit_binary(c, IR_OP_LESS, idx, zero, -1, &lt)) ||
        (st = fe_emit1(c, IR_OP_CAST, &dep, 1, &to, 1, -1, &dep)) ||
        (st = emit_binary(c, IR_OP_ADD, idx, dep, -1, &sum)))
        return st;
    uint32_t w[3] = {lt, sum, idx};
    if ((st = fe_emit1(c, IR_OP_WHERE, w, 3, NULL, 0, -1, &idx)) ||
        (st = fe_emit1(c, IR_OP_UNSQUEEZE, &idx, 1, &un, 1, -1, &idx)) ||
        (st = iota_along(c, s0, depth, axis, r, dt, &pos)) || (st = emit_binary(c, IR_OP_EQUAL, idx, pos, -1, &eq)))
        return st;
    /* the values as two one-element slices */
    int64_t flat = 2;
    ir_attr fl = symc_attr_dims("shape", (sym_expr[]){sym_const(c->t, flat)}, 1);
    if ((st = fe_emit1(c, IR_OP_RESHAPE, &vals, 1, &fl, 1, -1, &vals))) return st;
    ir_attr soff[2] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &s1, 1)};
    ir_attr son[2] = {symc_attr_dims("starts", &s1, 1), symc_attr_dims("ends", &s2, 1)};
    if ((st = fe_emit1(c, IR_OP_SLICE, &vals, 1, soff, 2, -1, &off)) ||
        (st = fe_emit1(c, IR_OP_SLICE, &vals, 1, son, 2, -1, &on)))
        return st;
    uint32_t w2[3] = {eq, on, off};
    return fe_emit1(c, IR_OP_WHERE, w2, 3, NULL, 0, 0, &out);
}

/* EyeLike: ones where column - row == k, as row + k == column. */
static symc_status h_eye_like(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, rows, cols, eq, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    if (T(c, x)->rank != 2) return fe_fail(c, SYMC_ERR_FORMAT, "input has rank %d, must be 2", (int)T(c, x)->rank);
    symc_dtype dt = T(c, x)->dtype;
    const Onnx__AttributeProto *da = fe_attr_of(c, "dtype", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (da && !fe_dtype((int32_t)da->i, &dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "dtype %s is not supported", fe_onnx_type_name((int32_t)da->i));
    int64_t k = fe_attr_i(c, "k", 0);
    if (k > ((int64_t)1 << 40) || k < -((int64_t)1 << 40))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "k = %" PRId64 " is too large", k);
    ir_attr to = symc_attr_dtype("to", dt);
    if ((st = iota_along(c, sym_const(c->t, k), T(c, x)->dims[0], 0, 2, SYMC_I64, &rows)) ||
        (st = iota_along(c, sym_const(c->t, 0), T(c, x)->dims[1], 1, 2, SYMC_I64, &cols)) ||
        (st = emit_binary(c, IR_OP_EQUAL, rows, cols, -1, &eq)))
        return st;
    return fe_emit1(c, IR_OP_CAST, &eq, 1, &to, 1, 0, &out);
}

/* LpNormalization: x / ||x||_p along axis, p 1 or 2; a zero vector stays
 * zero (the ONNX reference's where(norm == 0, 0, x / norm)). */
static symc_status h_lp_normalization(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, t, out;
    int32_t axis = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = need_float(c, x);
    if (!st) st = norm_axis_of(c, fe_attr_i(c, "axis", -1), T(c, x)->rank, &axis);
    if (st) return st;
    int64_t p = fe_attr_i(c, "p", 2);
    if (p != 1 && p != 2) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "p = %" PRId64 " (1 and 2 are supported)", p);
    red_axes ra = {.axes = {axis}, .n = 1, .noop = 0, .keep = 1};
    if (p == 1) st = emit_unary(c, IR_OP_ABS, x, -1, &t);
    else st = emit_binary(c, IR_OP_MUL, x, x, -1, &t);
    if (!st) st = emit_reduce(c, IR_OP_REDUCE_SUM, t, &ra, 1, -1, &t);
    if (!st && p == 2) st = emit_unary(c, IR_OP_SQRT, t, -1, &t);
    uint8_t zbytes[8] = {0}; /* 0.0 in every float dtype */
    uint32_t zero, isz, q;
    if (st || (st = fe_const(c, T(c, x)->dtype, 0, NULL, zbytes, -1, &zero)) ||
        (st = emit_binary(c, IR_OP_EQUAL, t, zero, -1, &isz)) || (st = emit_binary(c, IR_OP_DIV, x, t, -1, &q)))
        return st;
    uint32_t w[3] = {isz, zero, q};
    return fe_emit1(c, IR_OP_WHERE, w, 3, NULL, 0, 0, &out);
}

static symc_status h_gather_nd(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t in[2], out;
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    ir_attr a = symc_attr_int("batch_dims", fe_attr_i(c, "batch_dims", 0));
    return st ? st : fe_emit1(c, IR_OP_GATHER_ND, in, 2, &a, 1, 0, &out);
}

static symc_status scatter(fe_ctx *c, ir_op op) {
    symc_status st = need_inputs(c, 3, 3);
    uint32_t in[3], out;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const char *red = fe_attr_s(c, "reduction", "none");
    if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "reduction = '%s' (none, add, mul, max and min are supported)", red);
    ir_attr a[2] = {symc_attr_str("reduction", red), symc_attr_int("axis", fe_attr_i(c, "axis", 0))};
    return fe_emit1(c, op, in, 3, a, op == IR_OP_SCATTER_ELEMENTS ? 2 : 1, 0, &out);
}
static symc_status h_scatter_nd(fe_ctx *c) { return scatter(c, IR_OP_SCATTER_ND); }
static symc_status h_scatter_elements(fe_ctx *c) { return scatter(c, IR_OP_SCATTER_ELEMENTS); }

/* ---- Einsum ---------------------------------------------------------------------------------------- */
/* Einsum of one or two operands as core ops. Each dim carries a label (a
 * letter, or one of the dims "..." stands for, aligned from the right). One
 * operand: a reduce_sum over the labels the output drops, then a transpose.
 * Two operands: labels only one operand has and the output drops are summed
 * first; the rest become a batched matmul, A as [batch.., M, K] and B as
 * [batch.., K, N] (M, N, K: the kept labels of each side and the contracted
 * ones, flattened), reshaped back and transposed to the output's order. So
 * batched matmuls, transposes, sums, inner and outer products are all
 * covered. A label repeated within one operand (a diagonal) and three or
 * more operands are refused. A label must have provably the same size
 * wherever it appears (a "..." dim may also be 1 and broadcast). */
#define EIN_ELL 256 /* labels of the "..." dims: EIN_ELL + position */

typedef struct ein_term {
    int lab[IR_MAX_RANK];
    int32_t n;
} ein_term;

static int ein_find(const ein_term *t, int l) {
    for (int32_t i = 0; i < t->n; i++)
        if (t->lab[i] == l) return i;
    return -1;
}

/* One term of the equation (text s of length len) for an operand of rank r
 * (r < 0: the output); n_ell: the widest "..." */
static symc_status ein_term_parse(fe_ctx *c, const char *s, size_t len, int32_t r, int32_t n_ell, ein_term *t,
                                  int *has_ell) {
    int32_t letters = 0;
    *has_ell = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*has_ell || i + 2 >= len + 0 || s[i + 1] != '.' || s[i + 2] != '.')
                return fe_fail(c, SYMC_ERR_FORMAT, "equation term '%.*s' has a malformed '...'", (int)len, s);
            *has_ell = 1;
            i += 2;
        } else if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
            letters++;
        } else {
            return fe_fail(c, SYMC_ERR_FORMAT, "equation term '%.*s' has the character '%c'", (int)len, s, s[i]);
        }
    }
    int32_t ell = r < 0 ? (*has_ell ? n_ell : 0) : r - letters;
    if (r >= 0 && (ell < 0 || (!*has_ell && ell != 0)))
        return fe_fail(c, SYMC_ERR_FORMAT, "equation term '%.*s' does not match an operand of rank %d", (int)len, s,
                       (int)r);
    if (letters + ell > IR_MAX_RANK)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "term '%.*s' has too many dims", (int)len, s);
    t->n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int32_t j = 0; j < ell; j++) t->lab[t->n++] = EIN_ELL + (n_ell - ell) + j;
            i += 2;
        } else {
            if (r < 0 && ein_find(t, s[i]) >= 0)
                return fe_fail(c, SYMC_ERR_FORMAT, "index '%c' appears twice in the output term '%.*s'", s[i], (int)len,
                               s);
            t->lab[t->n++] = s[i]; /* twice in an operand: a diagonal, taken by ein_diagonals */
        }
    }
    return SYMC_OK;
}

/* An index repeated in an operand's term takes that operand's diagonal:
 * the two dims moved last, merged into one of n * n elements and sliced
 * with step n + 1 (exact data movement), until every index is unique. */
static symc_status ein_diagonals(fe_ctx *c, uint32_t *x, ein_term *t, const char *term, size_t len) {
    for (;;) {
        int32_t p = -1, q = -1;
        for (int32_t i = 0; i < t->n && p < 0; i++)
            for (int32_t j = i + 1; j < t->n; j++)
                if (t->lab[i] == t->lab[j]) {
                    p = i, q = j;
                    break;
                }
        if (p < 0) return SYMC_OK;
        const ir_tensor *xt = T(c, *x);
        int64_t n, n2;
        if (!sym_is_const(c->t, xt->dims[p], &n) || sym_prove_eq(c->t, xt->dims[p], xt->dims[q]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the diagonal of index '%c' in the term '%.*s' needs equal constant sizes, has %s and %s",
                           t->lab[p], (int)len, term, fe_txt(c, xt->dims[p]), fe_txt(c, xt->dims[q]));
        if (n > ((int64_t)1 << 31)) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a diagonal of size %" PRId64, n);
        n2 = n * n;
        int64_t perm[IR_MAX_RANK];
        sym_expr d[IR_MAX_RANK];
        ein_term nt = {.n = 0};
        for (int32_t i = 0; i < t->n; i++)
            if (i != p && i != q) d[nt.n] = xt->dims[i], perm[nt.n] = i, nt.lab[nt.n++] = t->lab[i];
        perm[nt.n] = p, perm[nt.n + 1] = q;
        d[nt.n] = sym_const(c->t, n2);
        int64_t axis = nt.n, step = n + 1;
        sym_expr s0 = sym_const(c->t, 0), e = sym_const(c->t, n2);
        ir_attr pa = symc_attr_ints("perm", perm, (uint32_t)t->n);
        ir_attr sl[4] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &e, 1),
                         symc_attr_ints("axes", &axis, 1), symc_attr_ints("steps", &step, 1)};
        symc_status st;
        if ((st = fe_emit1(c, IR_OP_TRANSPOSE, x, 1, &pa, 1, -1, x)) ||
            (st = emit_reshape(c, *x, d, (uint32_t)nt.n + 1, -1, x)) ||
            (st = fe_emit1(c, IR_OP_SLICE, x, 1, sl, 4, -1, x)))
            return st;
        nt.lab[nt.n++] = t->lab[p];
        *t = nt;
    }
}

static symc_status ein_transpose(fe_ctx *c, uint32_t *x, ein_term *t, const int *order, int out_k) {
    int64_t perm[IR_MAX_RANK];
    int ident = 1;
    ein_term nt = {.n = t->n};
    for (int32_t i = 0; i < t->n; i++) {
        perm[i] = ein_find(t, order[i]);
        nt.lab[i] = order[i];
        ident &= perm[i] == i;
    }
    *t = nt;
    if (ident && out_k < 0) return SYMC_OK;
    if (ident) return fe_emit1(c, IR_OP_IDENTITY, x, 1, NULL, 0, out_k, x);
    ir_attr a = symc_attr_ints("perm", perm, (uint32_t)t->n);
    return fe_emit1(c, IR_OP_TRANSPOSE, x, 1, &a, 1, out_k, x);
}

/* sums the labels of t that `keep` says go */
static symc_status ein_sum(fe_ctx *c, uint32_t *x, ein_term *t, const int *drop) {
    int64_t axes[IR_MAX_RANK];
    uint32_t n = 0;
    ein_term nt = {.n = 0};
    for (int32_t i = 0; i < t->n; i++)
        if (drop[i]) axes[n++] = i;
        else nt.lab[nt.n++] = t->lab[i];
    if (!n) return SYMC_OK;
    *t = nt;
    ir_attr a[2] = {symc_attr_ints("axes", axes, n), symc_attr_int("keepdims", 0)};
    return fe_emit1(c, IR_OP_REDUCE_SUM, x, 1, a, 2, -1, x);
}

static symc_status ein_reshape(fe_ctx *c, uint32_t *x, const sym_expr *dims, uint32_t n) {
    const ir_tensor *t = T(c, *x);
    int same = t->rank == (int32_t)n;
    for (uint32_t i = 0; same && i < n; i++) same = t->dims[i] == dims[i];
    if (same) return SYMC_OK;
    ir_attr a = symc_attr_dims("shape", dims, n);
    return fe_emit1(c, IR_OP_RESHAPE, x, 1, &a, 1, -1, x);
}

static symc_status h_einsum(fe_ctx *c) {
    uint32_t n_in = fe_n_in(c), x[2], out;
    const char *eq = fe_attr_s(c, "equation", NULL);
    if (!eq) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'equation' is missing");
    if (n_in < 1 || n_in > 2)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "Einsum of %u operands (one or two are supported)", n_in);
    symc_status st = SYMC_OK;
    for (uint32_t k = 0; k < n_in && !st; k++) st = fe_in(c, k, &x[k]);
    if (st) return st;
    char e[256];
    size_t len = 0;
    for (const char *p = eq; *p; p++)
        if (*p != ' ') {
            if (len + 1 >= sizeof e) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "equation '%s' is too long", eq);
            e[len++] = *p;
        }
    e[len] = '\0';
    const char *arrow = strstr(e, "->");
    size_t lhs = arrow ? (size_t)(arrow - e) : len;
    /* the operand terms */
    const char *ts[2];
    size_t tl[2];
    uint32_t nt = 0;
    for (size_t i = 0, st0 = 0; i <= lhs; i++)
        if (i == lhs || e[i] == ',') {
            if (nt == 2) return fe_fail(c, SYMC_ERR_FORMAT, "equation '%s' has more terms than operands", eq);
            ts[nt] = e + st0, tl[nt++] = i - st0, st0 = i + 1;
        }
    if (nt != n_in) return fe_fail(c, SYMC_ERR_FORMAT, "equation '%s' has %u terms for %u operands", eq, nt, n_in);
    int32_t n_ell = 0;
    for (uint32_t k = 0; k < n_in; k++) {
        int32_t letters = 0;
        for (size_t i = 0; i < tl[k]; i++) letters += ts[k][i] != '.';
        if (T(c, x[k])->rank - letters > n_ell && memchr(ts[k], '.', tl[k])) n_ell = T(c, x[k])->rank - letters;
    }
    ein_term in[2], o;
    int any_ell = 0, he;
    for (uint32_t k = 0; k < n_in; k++) {
        if ((st = ein_term_parse(c, ts[k], tl[k], T(c, x[k])->rank, n_ell, &in[k], &he)) ||
            (st = ein_diagonals(c, &x[k], &in[k], ts[k], tl[k])))
            return st;
        any_ell |= he;
    }
    /* every label's size, the same wherever it appears ("..." dims may broadcast from 1) */
    sym_expr size[EIN_ELL + IR_MAX_RANK];
    for (int l = 0; l < EIN_ELL + IR_MAX_RANK; l++) size[l] = SYM_NONE;
    for (uint32_t k = 0; k < n_in; k++)
        for (int32_t i = 0; i < in[k].n; i++) {
            int l = in[k].lab[i];
            sym_expr d = T(c, x[k])->dims[i];
            int64_t one;
            if (size[l] == SYM_NONE || (l >= EIN_ELL && sym_is_const(c->t, size[l], &one) && one == 1)) size[l] = d;
            else if (!(l >= EIN_ELL && sym_is_const(c->t, d, &one) && one == 1) &&
                     sym_prove_eq(c->t, size[l], d) != SYM_TRUE)
                return fe_fail(c, SYMC_ERR_UNSUPPORTED, "index '%c' has sizes %s and %s, which are not provably equal",
                               l < EIN_ELL ? l : '.', fe_txt(c, size[l]), fe_txt(c, d));
        }
    /* the output term: given, or implicit ("..." first, then the letters seen once, sorted) */
    if (arrow) {
        if ((st = ein_term_parse(c, arrow + 2, strlen(arrow + 2), -1, n_ell, &o, &he))) return st;
        for (int32_t i = 0; i < o.n; i++)
            if (size[o.lab[i]] == SYM_NONE)
                return fe_fail(c, SYMC_ERR_FORMAT, "output index '%c' is in no operand",
                               o.lab[i] < EIN_ELL ? o.lab[i] : '.');
    } else {
        o.n = 0;
        if (any_ell)
            for (int32_t j = 0; j < n_ell; j++) o.lab[o.n++] = EIN_ELL + j;
        for (int l = 'A'; l <= 'z'; l++) {
            int count = 0; /* in the terms as written: a diagonal's index counts twice (numpy's 'ii' is a trace) */
            for (uint32_t k = 0; k < n_in; k++)
                for (size_t i = 0; i < tl[k]; i++) count += ts[k][i] == l;
            if (count == 1) {
                if (o.n == IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the output has too many dims");
                o.lab[o.n++] = l;
            }
        }
    }
    /* labels an operand alone has and the output drops are summed at once */
    for (uint32_t k = 0; k < n_in; k++) {
        int drop[IR_MAX_RANK] = {0};
        for (int32_t i = 0; i < in[k].n; i++)
            drop[i] = ein_find(&o, in[k].lab[i]) < 0 && (n_in == 1 || ein_find(&in[1 - k], in[k].lab[i]) < 0);
        if ((st = ein_sum(c, &x[k], &in[k], drop))) return st;
    }
    if (n_in == 1) return ein_transpose(c, &x[0], &in[0], o.lab, 0);

    /* batch (both and the output, in the output's order), M (A and the output),
     * K (both, not the output), N (B and the output) */
    int ordA[IR_MAX_RANK], ordB[IR_MAX_RANK], nb = 0, nm = 0, nk = 0, nn = 0;
    int bl[IR_MAX_RANK], ml[IR_MAX_RANK], kl[IR_MAX_RANK], nl[IR_MAX_RANK];
    for (int32_t i = 0; i < o.n; i++) {
        int l = o.lab[i], a = ein_find(&in[0], l) >= 0, b = ein_find(&in[1], l) >= 0;
        if (a && b) bl[nb++] = l;
        else if (a) ml[nm++] = l;
        else nl[nn++] = l;
    }
    for (int32_t i = 0; i < in[0].n; i++)
        if (ein_find(&o, in[0].lab[i]) < 0) kl[nk++] = in[0].lab[i];
    int p = 0;
    for (int i = 0; i < nb; i++) ordA[p++] = bl[i];
    for (int i = 0; i < nm; i++) ordA[p++] = ml[i];
    for (int i = 0; i < nk; i++) ordA[p++] = kl[i];
    p = 0;
    for (int i = 0; i < nb; i++) ordB[p++] = bl[i];
    for (int i = 0; i < nk; i++) ordB[p++] = kl[i];
    for (int i = 0; i < nn; i++) ordB[p++] = nl[i];
    if ((st = ein_transpose(c, &x[0], &in[0], ordA, -1)) || (st = ein_transpose(c, &x[1], &in[1], ordB, -1))) return st;
    sym_expr one = sym_const(c->t, 1), da[IR_MAX_RANK], db[IR_MAX_RANK];
    sym_expr pm = one, pk = one, pkb = one, pn = one;
    for (int i = 0; i < nb; i++) da[i] = T(c, x[0])->dims[i], db[i] = T(c, x[1])->dims[i];
    for (int i = 0; i < nm; i++) pm = sym_mul(c->t, pm, T(c, x[0])->dims[nb + i]);
    for (int i = 0; i < nk; i++) pk = sym_mul(c->t, pk, T(c, x[0])->dims[nb + nm + i]);
    for (int i = 0; i < nk; i++) pkb = sym_mul(c->t, pkb, T(c, x[1])->dims[nb + i]);
    for (int i = 0; i < nn; i++) pn = sym_mul(c->t, pn, T(c, x[1])->dims[nb + nk + i]);
    da[nb] = pm, da[nb + 1] = pk, db[nb] = pkb, db[nb + 1] = pn;
    if ((st = ein_reshape(c, &x[0], da, (uint32_t)nb + 2)) || (st = ein_reshape(c, &x[1], db, (uint32_t)nb + 2)) ||
        (st = emit_binary(c, IR_OP_MATMUL, x[0], x[1], -1, &out)))
        return st;
    /* [batch.., M.., N..] with the matmul's own (broadcast) batch dims, then the output's order */
    sym_expr dr[IR_MAX_RANK];
    ein_term r = {.n = 0};
    for (int i = 0; i < nb; i++) dr[r.n] = T(c, out)->dims[i], r.lab[r.n++] = bl[i];
    for (int i = 0; i < nm; i++) dr[r.n] = size[ml[i]], r.lab[r.n++] = ml[i];
    for (int i = 0; i < nn; i++) dr[r.n] = size[nl[i]], r.lab[r.n++] = nl[i];
    if ((st = ein_reshape(c, &out, dr, (uint32_t)r.n))) return st;
    return ein_transpose(c, &out, &r, o.lab, 0);
}

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
                       "only 1-D to 3-D %s (a 3-D to 5-D input) is supported; input '%s' has rank %d", what,
                       T(c, *x)->name, (int)r);
    int64_t ax = 2;
    ir_attr a = symc_attr_ints("axes", &ax, 1);
    return *one_d ? fe_emit1(c, IR_OP_UNSQUEEZE, x, 1, &a, 1, -1, x) : SYMC_OK;
}

/* The result of a 1-D op run as 2-D: squeeze the added dim into output 0. */
static symc_status emit_1d_to(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n, const ir_attr *a, uint32_t na,
                              int one_d, int out_k, uint32_t *out) {
    int64_t ax = 2;
    ir_attr sq = symc_attr_ints("axes", &ax, 1);
    symc_status st = fe_emit1(c, op, in, n, a, na, one_d ? -1 : out_k, out);
    return st || !one_d ? st : fe_emit1(c, IR_OP_SQUEEZE, out, 1, &sq, 1, out_k, out);
}
static symc_status emit_1d(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n, const ir_attr *a, uint32_t na,
                           int one_d) {
    uint32_t out;
    return emit_1d_to(c, op, in, n, a, na, one_d, 0, &out);
}

static symc_status read_window3(fe_ctx *c, uint32_t x, int kernel_given, int64_t *k, int64_t *s, int64_t *d,
                                int64_t *p);

/* Conv of in[0..n) (x, w, optional bias) with the node's attributes, into
 * ONNX output out_k (or an intermediate for out_k < 0), on 1 to 3 spatial dims: 1-D runs
 * as 2-D; 3-D (a rank-5 input) is the same IR op with 3 entries a spatial attribute. */
static symc_status conv_of(fe_ctx *c, uint32_t *in, uint32_t n, int out_k, uint32_t *out) {
    symc_status st = SYMC_OK;
    window w;
    if (st) return st;
    if (T(c, in[0])->rank == 5) {
        const ir_tensor *wt = T(c, in[1]);
        int64_t k[3], s3[3], d3[3], p3[6];
        if (wt->rank != 5)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' has rank %d; the input's 3-D convolution needs 5",
                           wt->name, (int)wt->rank);
        for (int i = 0; i < 3; i++)
            if (!sym_is_const(c->t, wt->dims[2 + i], &k[i]))
                return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d is not a constant", wt->name, 2 + i);
        if ((st = read_window3(c, in[0], 1, k, s3, d3, p3))) return st;
        ir_attr a[4] = {symc_attr_ints("strides", s3, 3), symc_attr_ints("pads", p3, 6),
                        symc_attr_ints("dilations", d3, 3), symc_attr_int("group", fe_attr_i(c, "group", 1))};
        return fe_emit1(c, IR_OP_CONV2D, in, n, a, 4, out_k, out);
    }
    st = need_4d(c, &in[0], "convolution", &w.one_d);
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
    return emit_1d_to(c, IR_OP_CONV2D, in, n, a, 4, w.one_d, out_k, out);
}

static symc_status h_conv(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    return st ? st : conv_of(c, in, n, 0, &out);
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

/* The spatial attributes of a 3-D pool (rank-5 input): kernel_shape,
 * strides, dilations, pads (6 entries) and auto_pad, whose SAME padding
 * must come out constant. */
static symc_status read_window3(fe_ctx *c, uint32_t x, int kernel_given, int64_t *k, int64_t *s, int64_t *d,
                                int64_t *p) {
    static const char *const names[4] = {"kernel_shape", "strides", "dilations", "pads"};
    int64_t *dst[4] = {k, s, d, p};
    for (int i = 0; i < 3; i++) s[i] = d[i] = 1, p[i] = p[3 + i] = 0;
    for (int a = 0; a < 4; a++) {
        const int64_t *v;
        uint32_t n, want = a == 3 ? 6 : 3;
        if (!fe_attr_ints(c, names[a], &v, &n)) {
            if (a == 0 && !kernel_given) return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape is missing");
            continue;
        }
        if (n != want)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries; 3-D windows take %u", names[a], n, want);
        if (a == 0 && kernel_given) { /* a convolution's kernel comes from its weight */
            if (memcmp(k, v, 3 * sizeof *v))
                return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape does not match the weight's kernel dims");
            continue;
        }
        memcpy(dst[a], v, n * sizeof *v);
    }
    const char *ap = fe_attr_s(c, "auto_pad", "NOTSET");
    if (!strcmp(ap, "NOTSET")) return SYMC_OK;
    if (!strcmp(ap, "VALID")) {
        memset(p, 0, 6 * sizeof *p);
        return SYMC_OK;
    }
    int upper = !strcmp(ap, "SAME_UPPER");
    if (!upper && strcmp(ap, "SAME_LOWER"))
        return fe_fail(c, SYMC_ERR_FORMAT, "auto_pad = '%s' (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)", ap);
    for (int i = 0; i < 3; i++) {
        int64_t in;
        if (!sym_is_const(c->t, T(c, x)->dims[2 + i], &in))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "auto_pad %s on the symbolic spatial dim %d (%s) of a 3-D pool is not supported", ap, i,
                           fe_txt(c, T(c, x)->dims[2 + i]));
        int64_t out = (in + s[i] - 1) / s[i], tot = (out - 1) * s[i] + d[i] * (k[i] - 1) + 1 - in;
        if (tot < 0) tot = 0;
        p[i] = upper ? tot / 2 : tot - tot / 2;
        p[3 + i] = tot - p[i];
    }
    return SYMC_OK;
}

/* MaxPool, AveragePool and LpPool (1-D to 3-D; 1-D runs as 2-D). LpPool is
 * (K * avg_pool(|x|^p))^(1/p) with the K-tap window counted whole
 * (count_include_pad), which is the sum of |x|^p over the window: exact as
 * long as no ceil_mode window is cut short, so ceil_mode is refused there. */
enum { POOL_AVG, POOL_MAX, POOL_LP };
static symc_status pool(fe_ctx *c, int kind) {
    static const char *const what[3] = {"average pooling", "max pooling", "Lp pooling"};
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, out;
    window w;
    int is_max = kind == POOL_MAX, nsp = 2;
    int64_t kern[3], strides[3], dil[3], pads[6];
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    int indices = is_max && fe_has_out(c, 1);
    if (T(c, x)->rank == 5) {
        nsp = 3;
        w.one_d = 0, w.symbolic = 0;
        if ((st = read_window3(c, x, 0, kern, strides, dil, pads))) return st;
    } else {
        if ((st = need_4d(c, &x, what[kind], &w.one_d))) return st;
        const int64_t *ks;
        uint32_t nk;
        if (!fe_attr_ints(c, "kernel_shape", &ks, &nk)) return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape is missing");
        if (nk != 2u - w.one_d)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "kernel_shape has %u entries for a %d-D input", nk, 2 - w.one_d);
        w.kernel[0] = w.one_d ? 1 : ks[0];
        w.kernel[1] = ks[nk - 1];
        if ((st = read_window(c, x, &w))) return st;
        for (int i = 0; i < 2; i++)
            kern[i] = w.kernel[i], strides[i] = w.strides[i], dil[i] = w.dil[i], pads[i] = w.pads[i],
            pads[2 + i] = w.pads[2 + i];
    }
    int64_t cip = kind == POOL_LP ? 1 : fe_attr_i(c, "count_include_pad", 0), ceil_mode = fe_attr_i(c, "ceil_mode", 0);
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
    if (nsp == 2)
        for (int i = 0; i < 4; i++) pads[i] = w.pads[i];
    ir_attr a[6];
    uint32_t na = 0;
    a[na++] = symc_attr_ints("kernel", kern, (uint32_t)nsp);
    a[na++] = symc_attr_ints("strides", strides, (uint32_t)nsp);
    a[na++] = symc_attr_ints("pads", pads, 2 * (uint32_t)nsp);
    a[na++] = symc_attr_int("ceil_mode", ceil_mode);
    a[na++] = symc_attr_ints("dilations", dil, (uint32_t)nsp);
    if (!is_max) a[na++] = symc_attr_int("count_include_pad", cip);
    if (indices) { /* the Indices output: the flat input index of each maximum */
        int64_t order = fe_attr_i(c, "storage_order", 0);
        if (w.symbolic)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the Indices output with auto_pad SAME over symbolic dims is not supported");
        if ((order != 0 && order != 1) || (order == 1 && nsp == 3))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "attribute 'storage_order' = %" PRId64 " is not supported here (0, or 1 for 1-D and 2-D)",
                           order);
        ir_attr ai[7];
        memcpy(ai, a, na * sizeof *a);
        ai[na] = symc_attr_int("storage_order", order);
        uint32_t ix;
        int64_t ax = 2;
        ir_attr sq = symc_attr_ints("axes", &ax, 1);
        if ((st = fe_emit1(c, IR_OP_MAX_POOL_INDICES, &x, 1, ai, na + 1, w.one_d ? -1 : 1, &ix)) ||
            (w.one_d && (st = fe_emit1(c, IR_OP_SQUEEZE, &ix, 1, &sq, 1, 1, &ix))))
            return st;
    }
    if (kind != POOL_LP) return emit_1d(c, is_max ? IR_OP_MAX_POOL2D : IR_OP_AVG_POOL2D, &x, 1, a, na, w.one_d);
    uint32_t y;
    double taps = 1;
    for (int i = 0; i < nsp; i++) taps *= (double)kern[i];
    if ((st = fe_emit1(c, IR_OP_AVG_POOL2D, &x, 1, a, na, -1, &y)) || (st = emit_scalar(c, T(c, x)->dtype, taps, &e)) ||
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
        else if (v < 0 || (v && n > INT64_MAX / v))
            return fe_fail(c, SYMC_ERR_OVERFLOW, "the element count of '%s' does not fit in int64", xt->name);
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

/* ---- quantization -------------------------------------------------------------------------------------- */

/* Quantized integers are exact in double, so every quantized op is
 * decomposed into existing ops on exact values: the integer parts (zero
 * points subtracted, the matmul or conv accumulation) in int32 or double,
 * the float parts in the dtypes the ONNX reference computes them in, and
 * round-half-to-even, clip and a cast at the end. FLOAT8 and 4-bit types
 * are not symc dtypes and are refused when the model is read. */

static int quant_range(symc_dtype dt, double *lo, double *hi) {
    switch (dt) {
    case SYMC_U8: *lo = 0, *hi = 255; return 1;
    case SYMC_I8: *lo = -128, *hi = 127; return 1;
    case SYMC_U16: *lo = 0, *hi = 65535; return 1;
    case SYMC_I16: *lo = -32768, *hi = 32767; return 1;
    default: return 0;
    }
}

/* A scale or zero point p made to broadcast against x (rank r, dims xd):
 * one element: a scalar; per axis: [C] viewed as [1, .., C, .., 1]; blocked
 * (block > 0): each element repeated `block` times along axis (the last block
 * may be cut short), so p has x's shape. */
static symc_status quant_view(fe_ctx *c, uint32_t p, int32_t r, const sym_expr *xd, int32_t axis, int64_t block,
                              uint32_t *out) {
    const ir_tensor *pt = T(c, p);
    int32_t pr = pt->rank;
    sym_expr pd[IR_MAX_RANK], one = sym_const(c->t, 1);
    memcpy(pd, pt->dims, (size_t)pr * sizeof pd[0]);
    if (small_numel(c, p) == 1 && block == 0) return emit_reshape(c, p, NULL, 0, -1, out);
    if (axis < 0)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'axis' = %" PRId64 " is out of range for the input's rank %d",
                       fe_attr_i(c, "axis", 1), (int)r);
    if (block == 0) {
        if (pr != 1)
            return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has rank %d; a per-axis scale or zero point has rank 1", pt->name,
                           (int)pr);
        if (sym_prove_eq(c->t, pd[0], xd[axis]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has %s elements for axis %d of size %s", pt->name,
                           fe_txt(c, pd[0]), (int)axis, fe_txt(c, xd[axis]));
        sym_expr d[IR_MAX_RANK];
        for (int32_t i = 0; i < r; i++) d[i] = i == axis ? pd[0] : one;
        return emit_reshape(c, p, d, (uint32_t)r, -1, out);
    }
    if (pr != r)
        return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has rank %d; a blocked scale or zero point has the input's rank %d",
                       pt->name, (int)pr, (int)r);
    for (int32_t i = 0; i < r; i++)
        if (i != axis && sym_prove_eq(c->t, pd[i], xd[i]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_FORMAT, "'%s' dim %d is %s, the input's is %s", pt->name, (int)i,
                           fe_txt(c, pd[i]), fe_txt(c, xd[i]));
    sym_expr want = sym_ceildiv(c->t, xd[axis], sym_const(c->t, block));
    if (sym_prove_eq(c->t, pd[axis], want) != SYM_TRUE)
        return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has %s blocks along axis %d; ceil(%s / %" PRId64 ") are needed",
                       pt->name, fe_txt(c, pd[axis]), (int)axis, fe_txt(c, xd[axis]), block);
    if (r + 1 > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "blocked quantization of rank %d", (int)r);
    int64_t ax = axis + 1;
    ir_attr un = symc_attr_ints("axes", &ax, 1);
    sym_expr ed[IR_MAX_RANK], md[IR_MAX_RANK];
    for (int32_t i = 0, k = 0; i < r; i++) {
        ed[k++] = pd[i];
        if (i == axis) ed[k++] = sym_const(c->t, block);
        md[i] = i == axis ? sym_scale(c->t, pd[i], block) : pd[i];
    }
    ir_attr ex = symc_attr_dims("shape", ed, (uint32_t)r + 1);
    symc_status st;
    if ((st = fe_emit1(c, IR_OP_UNSQUEEZE, &p, 1, &un, 1, -1, out)) ||
        (st = fe_emit1(c, IR_OP_EXPAND, out, 1, &ex, 1, -1, out)) ||
        (st = emit_reshape(c, *out, md, (uint32_t)r, -1, out)))
        return st;
    if (sym_prove_eq(c->t, md[axis], xd[axis]) == SYM_TRUE) return SYMC_OK;
    sym_expr s0 = sym_const(c->t, 0);
    int64_t axv = axis;
    ir_attr sl[3] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &xd[axis], 1),
                     symc_attr_ints("axes", &axv, 1)};
    return fe_emit1(c, IR_OP_SLICE, out, 1, sl, 3, -1, out);
}

/* axis and block_size of a (De)QuantizeLinear node against x's rank. */
static symc_status quant_axis(fe_ctx *c, int32_t r, int32_t *axis, int64_t *block) {
    *block = fe_attr_i(c, "block_size", 0);
    if (*block < 0) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'block_size' = %" PRId64 " is negative", *block);
    int64_t a = fe_attr_i(c, "axis", 1);
    /* only a per-axis or blocked scale reads it: checked there */
    *axis = a < -r || a >= r ? -1 : (int32_t)(a < 0 ? a + r : a);
    return SYMC_OK;
}

/* x quantized with scale s (already viewed) and zero point z (viewed, or
 * IR_NONE): saturate(round_half_even(x / s) + z) as dtype qt; the division in
 * x's dtype as the reference does, the rest in double (exact). */
static symc_status quantize(fe_ctx *c, uint32_t x, uint32_t s, uint32_t z, symc_dtype qt, int out_k, uint32_t *out) {
    double lo, hi;
    if (!quant_range(qt, &lo, &hi))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "quantizing to %s is not supported (uint8, int8, uint16, int16 are)",
                       symc_dtype_name(qt));
    uint32_t q;
    symc_status st;
    if ((st = emit_bin(c, IR_OP_DIV, x, s, -1, &q)) || (st = emit_un(c, IR_OP_ROUND, q, -1, &q)) ||
        (st = emit_cast(c, q, SYMC_F64, -1, &q)))
        return st;
    if (z != IR_NONE) {
        uint32_t z64;
        if ((st = emit_cast(c, z, SYMC_F64, -1, &z64)) || (st = emit_bin(c, IR_OP_ADD, q, z64, -1, &q))) return st;
    }
    ir_attr cl[2] = {symc_attr_float("min", lo), symc_attr_float("max", hi)};
    if ((st = fe_emit1(c, IR_OP_CLIP, &q, 1, cl, 2, -1, &q))) return st;
    return emit_cast(c, q, qt, out_k, out);
}

static symc_status need_float_in(fe_ctx *c, uint32_t t, const char *role) {
    if (!ir_dtype_is_float(T(c, t)->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s '%s' is %s; only float types are supported", role, T(c, t)->name,
                       symc_dtype_name(T(c, t)->dtype));
    return SYMC_OK;
}

static symc_status h_quantize_linear(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t x, s, z = IR_NONE, sv, zv = IR_NONE, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &z);
    if (!st) st = need_float_in(c, x, "input");
    if (st) return st;
    if (T(c, s)->dtype != T(c, x)->dtype)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scale '%s' is %s and input '%s' %s; they must have one type",
                       T(c, s)->name, symc_dtype_name(T(c, s)->dtype), T(c, x)->name, symc_dtype_name(T(c, x)->dtype));
    symc_dtype qt = SYMC_U8;
    const Onnx__AttributeProto *od = fe_attr_of(c, "output_dtype", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (od && od->i != 0 && !fe_dtype((int32_t)od->i, &qt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'output_dtype' = %" PRId64 " (%s) is not supported", od->i,
                       fe_onnx_type_name((int32_t)od->i));
    if (z != IR_NONE) {
        if (od && od->i != 0 && T(c, z)->dtype != qt)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'output_dtype' is %s but zero point '%s' is %s",
                           symc_dtype_name(qt), T(c, z)->name, symc_dtype_name(T(c, z)->dtype));
        qt = T(c, z)->dtype;
    }
    int32_t r = T(c, x)->rank, axis = -1;
    int64_t block = 0;
    sym_expr xd[IR_MAX_RANK];
    memcpy(xd, T(c, x)->dims, (size_t)r * sizeof xd[0]);
    if ((st = quant_axis(c, r, &axis, &block)) || (st = quant_view(c, s, r, xd, axis, block, &sv))) return st;
    if (z != IR_NONE && (st = quant_view(c, z, r, xd, axis, block, &zv))) return st;
    return quantize(c, x, sv, zv, qt, 0, &out);
}

/* DequantizeLinear: (x - zero_point) * scale, in float32 as the reference
 * (float64 for int32 inputs, after their conversion to float32), then the
 * scale's dtype. */
static symc_status h_dequantize_linear(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t x, s, z = IR_NONE, sv, zv, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &z);
    if (!st) st = need_float_in(c, s, "scale");
    if (st) return st;
    symc_dtype xt = T(c, x)->dtype, sd = T(c, s)->dtype;
    double lo, hi;
    if (!quant_range(xt, &lo, &hi) && xt != SYMC_I32)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input '%s' is %s; dequantizing uint8, int8, uint16, int16 and int32 is supported",
                       T(c, x)->name, symc_dtype_name(xt));
    if (z != IR_NONE && T(c, z)->dtype != xt)
        return fe_fail(c, SYMC_ERR_FORMAT, "zero point '%s' is %s, input '%s' %s", T(c, z)->name,
                       symc_dtype_name(T(c, z)->dtype), T(c, x)->name, symc_dtype_name(xt));
    int32_t r = T(c, x)->rank, axis = -1;
    int64_t block = 0;
    sym_expr xd[IR_MAX_RANK];
    memcpy(xd, T(c, x)->dims, (size_t)r * sizeof xd[0]);
    if ((st = quant_axis(c, r, &axis, &block)) || (st = quant_view(c, s, r, xd, axis, block, &sv))) return st;
    symc_dtype wd = xt == SYMC_I32 ? SYMC_F64 : SYMC_F32;
    uint32_t d;
    if ((st = emit_cast(c, x, SYMC_F32, -1, &d)) || (st = emit_cast(c, d, wd, -1, &d))) return st;
    if (z != IR_NONE) {
        if ((st = quant_view(c, z, r, xd, axis, block, &zv)) || (st = emit_cast(c, zv, wd, -1, &zv)) ||
            (st = emit_bin(c, IR_OP_SUB, d, zv, -1, &d)))
            return st;
    }
    if ((st = emit_cast(c, sv, wd, -1, &sv)) || (st = emit_bin(c, IR_OP_MUL, d, sv, -1, &d))) return st;
    return emit_cast(c, d, sd, 0, &out);
}

/* DynamicQuantizeLinear as its ONNX function body: scale = (max(x, 0) -
 * min(x, 0)) / 255, zero point = saturate(round(-min / scale)), then
 * QuantizeLinear to uint8. */
static symc_status h_dynamic_quantize_linear(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, mn, mx, zero, q255, rng, sc, t, zp, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && T(c, x)->dtype != SYMC_F32)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' is %s; DynamicQuantizeLinear takes float", T(c, x)->name,
                       symc_dtype_name(T(c, x)->dtype));
    if (st) return st;
    ir_attr keep0 = symc_attr_int("keepdims", 0), cl[2] = {symc_attr_float("min", 0), symc_attr_float("max", 255)};
    if ((st = emit_scalar(c, SYMC_F32, 0, &zero)) || (st = emit_scalar(c, SYMC_F32, 255, &q255)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MIN, &x, 1, &keep0, 1, -1, &mn)) ||
        (st = emit_bin(c, IR_OP_MIN, mn, zero, -1, &mn)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MAX, &x, 1, &keep0, 1, -1, &mx)) ||
        (st = emit_bin(c, IR_OP_MAX, mx, zero, -1, &mx)) || (st = emit_bin(c, IR_OP_SUB, mx, mn, -1, &rng)) ||
        (st = emit_bin(c, IR_OP_DIV, rng, q255, fe_has_out(c, 1) ? 1 : -1, &sc)) ||
        (st = emit_bin(c, IR_OP_DIV, mn, sc, -1, &t)) || (st = emit_bin(c, IR_OP_SUB, zero, t, -1, &t)) ||
        (st = fe_emit1(c, IR_OP_CLIP, &t, 1, cl, 2, -1, &t)) || (st = emit_un(c, IR_OP_ROUND, t, -1, &t)) ||
        (st = emit_cast(c, t, SYMC_U8, fe_has_out(c, 2) ? 2 : -1, &zp)))
        return st;
    return quantize(c, x, sc, zp, SYMC_U8, 0, &out);
}

/* x - zero_point as an exact integer tensor of dtype wd; a per-row (A of
 * MatMulInteger: [M]) or per-output-channel (a conv weight: [M]) zero point
 * is viewed along dim `axis` of x's rank. */
static symc_status minus_zero_point(fe_ctx *c, uint32_t x, uint32_t k, int32_t axis, symc_dtype wd, uint32_t *out) {
    symc_status st = emit_cast(c, x, wd, -1, out);
    if (st || !fe_has_in(c, k)) return st;
    uint32_t z;
    if ((st = fe_in(c, k, &z))) return st;
    if (T(c, z)->dtype != T(c, x)->dtype)
        return fe_fail(c, SYMC_ERR_FORMAT, "zero point '%s' is %s, its input '%s' %s", T(c, z)->name,
                       symc_dtype_name(T(c, z)->dtype), T(c, x)->name, symc_dtype_name(T(c, x)->dtype));
    int64_t n = small_numel(c, z);
    if (n != 1) {
        int32_t r = T(c, x)->rank;
        if (T(c, z)->rank != 1 || axis < 0 || axis >= r ||
            sym_prove_eq(c->t, T(c, z)->dims[0], T(c, x)->dims[axis]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "zero point '%s' must be a scalar or have one element per %s (dim %d of '%s')",
                           T(c, z)->name, axis == 0 ? "output channel" : "row", (int)axis, T(c, x)->name);
        sym_expr d[IR_MAX_RANK], one = sym_const(c->t, 1);
        for (int32_t i = 0; i < r; i++) d[i] = i == axis ? T(c, z)->dims[0] : one;
        if ((st = emit_reshape(c, z, d, (uint32_t)r, -1, &z))) return st;
    } else if ((st = emit_reshape(c, z, NULL, 0, -1, &z))) {
        return st;
    }
    if ((st = emit_cast(c, z, wd, -1, &z))) return st;
    return emit_bin(c, IR_OP_SUB, *out, z, -1, out);
}

static symc_status need_8bit(fe_ctx *c, uint32_t t) {
    symc_dtype d = T(c, t)->dtype;
    if (d != SYMC_U8 && d != SYMC_I8)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' is %s; it must be uint8 or int8", T(c, t)->name,
                       symc_dtype_name(d));
    return SYMC_OK;
}

/* MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32. */
static symc_status h_matmul_integer(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 4);
    uint32_t a, b, out;
    if (!st) st = fe_in(c, 0, &a);
    if (!st) st = fe_in(c, 1, &b);
    if (!st) st = need_8bit(c, a);
    if (!st) st = need_8bit(c, b);
    if (st) return st;
    int32_t ra = T(c, a)->rank, rb = T(c, b)->rank;
    if ((st = minus_zero_point(c, a, 2, ra >= 2 ? ra - 2 : -1, SYMC_I32, &a)) ||
        (st = minus_zero_point(c, b, 3, rb - 1, SYMC_I32, &b)))
        return st;
    return emit_bin(c, IR_OP_MATMUL, a, b, 0, &out);
}

/* (x - x_zero_point) conv (w - w_zero_point) computed exactly in double
 * (products of 8-bit values summed far below 2^53), bias added. */
static symc_status conv_integer_acc(fe_ctx *c, uint32_t x, uint32_t xz_k, uint32_t w, uint32_t wz_k, int have_b,
                                    uint32_t b, uint32_t *acc) {
    symc_status st;
    uint32_t in[3];
    if ((st = need_8bit(c, x)) || (st = need_8bit(c, w)) || (st = minus_zero_point(c, x, xz_k, -1, SYMC_F64, &in[0])) ||
        (st = minus_zero_point(c, w, wz_k, 0, SYMC_F64, &in[1])))
        return st;
    if (have_b) {
        if (T(c, b)->dtype != SYMC_I32)
            return fe_fail(c, SYMC_ERR_FORMAT, "bias '%s' is %s; it must be int32", T(c, b)->name,
                           symc_dtype_name(T(c, b)->dtype));
        if ((st = emit_cast(c, b, SYMC_F64, -1, &in[2]))) return st;
    }
    return conv_of(c, in, have_b ? 3 : 2, -1, acc);
}

static symc_status h_conv_integer(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 4);
    uint32_t x, w, acc, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &w);
    if (!st) st = conv_integer_acc(c, x, 2, w, 3, 0, 0, &acc);
    return st ? st : emit_cast(c, acc, SYMC_I32, 0, &out);
}

/* The requantization of QLinearMatMul and QLinearConv: the integer
 * accumulator times (a_scale * b_scale / y_scale), that factor computed in
 * the scales' dtype, the product in double as the reference's int32 * float
 * promotes; plus y_zero_point, round half to even, saturate. The scale of b
 * may be per output channel (a conv weight's, viewed [1, M, 1, 1]). */
static symc_status requantize(fe_ctx *c, uint32_t acc, uint32_t as, uint32_t bs, int per_channel, uint32_t ys,
                              uint32_t yz, int32_t r) {
    symc_status st;
    symc_dtype sd = T(c, as)->dtype;
    if ((st = need_float_in(c, as, "scale")) || (st = need_float_in(c, bs, "scale")) ||
        (st = need_float_in(c, ys, "scale")))
        return st;
    if (T(c, bs)->dtype != sd || T(c, ys)->dtype != sd)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the scales '%s', '%s', '%s' must have one type", T(c, as)->name,
                       T(c, bs)->name, T(c, ys)->name);
    uint32_t f, y, out;
    if (small_numel(c, as) != 1 || small_numel(c, ys) != 1 || small_numel(c, yz) != 1)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "only per-tensor scales and zero points are supported for '%s', "
                       "'%s' and '%s'",
                       T(c, as)->name, T(c, ys)->name, T(c, yz)->name);
    if ((st = emit_reshape(c, as, NULL, 0, -1, &as)) || (st = emit_reshape(c, ys, NULL, 0, -1, &ys))) return st;
    if (small_numel(c, bs) == 1) {
        if ((st = emit_reshape(c, bs, NULL, 0, -1, &bs))) return st;
    } else if (per_channel && T(c, bs)->rank == 1) {
        sym_expr d[4] = {sym_const(c->t, 1), T(c, bs)->dims[0], sym_const(c->t, 1), sym_const(c->t, 1)};
        if ((st = emit_reshape(c, bs, d, (uint32_t)r, -1, &bs))) return st;
    } else {
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scale '%s' must be per tensor%s", T(c, bs)->name,
                       per_channel ? " or per output channel" : "");
    }
    double lo, hi;
    symc_dtype qt = T(c, yz)->dtype;
    if (!quant_range(qt, &lo, &hi) || (qt != SYMC_U8 && qt != SYMC_I8))
        return fe_fail(c, SYMC_ERR_FORMAT, "output zero point '%s' is %s; it must be uint8 or int8", T(c, yz)->name,
                       symc_dtype_name(qt));
    uint32_t z64;
    ir_attr cl[2] = {symc_attr_float("min", lo), symc_attr_float("max", hi)};
    if ((st = emit_bin(c, IR_OP_MUL, as, bs, -1, &f)) || (st = emit_bin(c, IR_OP_DIV, f, ys, -1, &f)) ||
        (st = emit_cast(c, f, SYMC_F64, -1, &f)) || (st = emit_cast(c, acc, SYMC_F64, -1, &y)) ||
        (st = emit_bin(c, IR_OP_MUL, y, f, -1, &y)) || (st = emit_reshape(c, yz, NULL, 0, -1, &yz)) ||
        (st = emit_cast(c, yz, SYMC_F64, -1, &z64)) || (st = emit_bin(c, IR_OP_ADD, y, z64, -1, &y)) ||
        (st = emit_un(c, IR_OP_ROUND, y, -1, &y)) || (st = fe_emit1(c, IR_OP_CLIP, &y, 1, cl, 2, -1, &y)))
        return st;
    return emit_cast(c, y, qt, 0, &out);
}

/* QLinearMatMul: inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point; the accumulation as MatMulInteger's. */
static symc_status h_qlinear_matmul(fe_ctx *c) {
    symc_status st = need_inputs(c, 8, 8);
    uint32_t a, b, in[8], acc;
    for (uint32_t k = 0; k < 8 && !st; k++) st = fe_in(c, k, &in[k]);
    if (!st) st = need_8bit(c, in[0]);
    if (!st) st = need_8bit(c, in[3]);
    if (st) return st;
    if (small_numel(c, in[2]) != 1 || small_numel(c, in[5]) != 1)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "only per-tensor zero points are supported for a and b");
    if ((st = minus_zero_point(c, in[0], 2, -1, SYMC_I32, &a)) ||
        (st = minus_zero_point(c, in[3], 5, -1, SYMC_I32, &b)) || (st = emit_bin(c, IR_OP_MATMUL, a, b, -1, &acc)))
        return st;
    return requantize(c, acc, in[1], in[4], 0, in[6], in[7], 0);
}

/* QLinearConv: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 * y_scale, y_zero_point, optional int32 bias; the Conv attributes. */
static symc_status h_qlinear_conv(fe_ctx *c) {
    symc_status st = need_inputs(c, 8, 9);
    uint32_t in[9], acc;
    for (uint32_t k = 0; k < 8 && !st; k++) st = fe_in(c, k, &in[k]);
    if (!st && fe_has_in(c, 8)) st = fe_in(c, 8, &in[8]);
    if (!st) st = conv_integer_acc(c, in[0], 2, in[3], 5, fe_has_in(c, 8), in[8], &acc);
    if (st) return st;
    return requantize(c, acc, in[1], in[4], 1, in[6], in[7], T(c, acc)->rank);
}

/* ---- window functions ------------------------------------------------------------------------------- */

/* HannWindow, HammingWindow, BlackmanWindow: the size must be known at build
 * time, so the window is a constant computed here in double precision (as
 * the ONNX reference computes it) and rounded once to output_datatype:
 * w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size when
 * periodic (the default), size - 1 when symmetric. */
enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN };
static symc_status window_fn(fe_ctx *c, int kind) {
    symc_status st = need_inputs(c, 1, 1);
    sym_expr se;
    int64_t size;
    if (!st) st = scalar_value(c, 0, "the window size", &se);
    if (st) return st;
    if (!sym_is_const(c->t, se, &size))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the window size %s must be a constant", fe_txt(c, se));
    if (size < 0 || size > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "window size %" PRId64 " is outside [0, 2^24]", size);
    int64_t odt = fe_attr_i(c, "output_datatype", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    symc_dtype dt;
    if (!fe_dtype((int32_t)odt, &dt) || !ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'output_datatype' = %" PRId64 " (%s): only float output types are supported", odt,
                       fe_onnx_type_name((int32_t)odt));
    int64_t periodic = fe_attr_i(c, "periodic", 1);
    double n_div = (double)(periodic ? size : size - 1), a0, a1, a2 = 0;
    if (kind == WIN_HANN) a0 = 0.5, a1 = 0.5;
    else if (kind == WIN_HAMMING) a0 = 25.0 / 46.0, a1 = 1.0 - 25.0 / 46.0;
    else a0 = 0.42, a1 = 0.5, a2 = 0.08;
    uint8_t *buf = malloc((size_t)(size ? size : 1) * symc_dtype_size(dt));
    if (!buf) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t n = 0; n < size; n++) {
        double x = 2.0 * 3.14159265358979323846 * (double)n / n_div, w; /* M_PI is not C11 */
        if (kind == WIN_HANN) w = sin(x / 2) * sin(x / 2); /* = 0.5 - 0.5 cos(x), as the reference writes it */
        else w = a0 - a1 * cos(x) + a2 * cos(2 * x);
        symc_dtype_store(buf, dt, (size_t)n, w);
    }
    uint32_t out;
    st = fe_const(c, dt, 1, &size, buf, 0, &out);
    free(buf);
    return st;
}
static symc_status h_hann_window(fe_ctx *c) { return window_fn(c, WIN_HANN); }
static symc_status h_hamming_window(fe_ctx *c) { return window_fn(c, WIN_HAMMING); }
static symc_status h_blackman_window(fe_ctx *c) { return window_fn(c, WIN_BLACKMAN); }

/* Python's float floor division (numpy's npy_divmod), which the ONNX
 * reference of MelWeightMatrix uses on its bin edges. */
static double py_floordiv(double a, double b) {
    double mod = fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double fl = floor(div);
    return div - fl > 0.5 ? fl + 1.0 : fl;
}

/* MelWeightMatrix: every input must be known at build time, so the matrix
 * [dft_length / 2 + 1, num_mel_bins] is a constant computed here step by step
 * as the ONNX reference computes it (float32 inputs: the mel edges through
 * float32 log1p, the rest in double), its triangular filters between the
 * floored bin edges. */
static symc_status h_mel_weight_matrix(fe_ctx *c) {
    symc_status st = need_inputs(c, 5, 5);
    static const char *const role[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                        "upper_edge_hertz"};
    double v[5];
    uint32_t t;
    for (uint32_t k = 0; k < 5 && !st; k++)
        if (!(st = fe_in(c, k, &t))) st = fe_const_scalar(c, t, k, role[k], &v[k]);
    if (st) return st;
    symc_dtype fd = T(c, t)->dtype;
    if (fd != SYMC_F32 && fd != SYMC_F64)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the edge frequencies are %s; float32 and float64 are supported",
                       symc_dtype_name(fd));
    for (int k = 0; k < 3; k++)
        if (v[k] != floor(v[k]) || v[k] < 1 || v[k] > (double)(1 << 20))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s = %g must be a whole number in [1, 2^20]", role[k], v[k]);
    int64_t n_mel = (int64_t)v[0], dft = (int64_t)v[1], n_spec = dft / 2 + 1;
    int64_t odt = fe_attr_i(c, "output_datatype", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    symc_dtype dt;
    if (!fe_dtype((int32_t)odt, &dt) || !ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'output_datatype' = %" PRId64 " (%s): only float output types are supported", odt,
                       fe_onnx_type_name((int32_t)odt));
    double mel[2];
    for (int k = 0; k < 2; k++) {
        if (fd == SYMC_F32) {
            float q = (float)v[3 + k] / 700.0f, l = log1pf(q), m = 2595.0f * l;
            mel[k] = (double)m / log(10.0);
        } else {
            mel[k] = 2595.0 * log1p(v[3 + k] / 700.0) / log(10.0);
        }
    }
    double step = (mel[1] - mel[0]) / (double)(n_mel + 2);
    int64_t *bins = malloc((size_t)(n_mel + 2) * sizeof *bins);
    double *w = calloc((size_t)(n_spec * n_mel), sizeof *w);
    uint8_t *buf = malloc((size_t)(n_spec * n_mel) * symc_dtype_size(dt) + 1);
    if (!bins || !w || !buf) {
        free(bins), free(w), free(buf);
        return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < n_mel + 2 && !st; i++) {
        double f = (double)i * step + mel[0];
        f = 700.0 * expm1(f / 2595.0 * log(10.0));
        double b = py_floordiv((double)(dft + 1) * f, v[2]);
        if (!(b >= 0 && b < (double)n_spec))
            st = fe_fail(c, SYMC_ERR_UNSUPPORTED,
                         "mel band edge %" PRId64 " falls in spectrogram bin %g, outside [0, %" PRId64 ")", i, b,
                         n_spec);
        else bins[i] = (int64_t)b;
    }
    for (int64_t i = 0; i < n_mel && !st; i++) {
        int64_t lo = bins[i], ce = bins[i + 1], hi = bins[i + 2];
        if (ce == lo) w[ce * n_mel + i] = 1;
        else
            for (int64_t j = lo; j <= ce; j++) w[j * n_mel + i] = (double)(j - lo) / (double)(ce - lo);
        for (int64_t j = ce; j < hi; j++) w[j * n_mel + i] = (double)(hi - j) / (double)(hi - ce);
    }
    for (int64_t i = 0; i < n_spec * n_mel && !st; i++) symc_dtype_store(buf, dt, (size_t)i, w[i]);
    uint32_t out;
    int64_t dims[2] = {n_spec, n_mel};
    if (!st) st = fe_const(c, dt, 2, dims, buf, 0, &out);
    free(bins), free(w), free(buf);
    return st;
}

/* ---- losses ------------------------------------------------------------------------------------------ */

/* NegativeLogLikelihoodLoss as its ONNX function body: with the target t
 * [N, d..] viewed as [N, 1, d..], loss = -x[n, t, d..] (GatherElements on
 * axis 1) times weight[t] when a weight is given; a target equal to
 * ignore_index reads class 0 and contributes 0 (and 0 weight). Reduction
 * none keeps [N, d..], sum sums everything, mean divides the sum by the sum
 * of the gathered weights (the count of targets not ignored without a
 * weight, the element count without an ignore_index). x is the log
 * probabilities, the node's input 0 for NegativeLogLikelihoodLoss, the
 * log_softmax of the scores for SoftmaxCrossEntropyLoss. */
static symc_status nll_loss(fe_ctx *c, uint32_t x, uint32_t target, int have_w, uint32_t w) {
    const char *red = fe_attr_s(c, "reduction", "mean");
    int r_none = !strcmp(red, "none"), r_sum = !strcmp(red, "sum"), r_mean = !strcmp(red, "mean");
    if (!r_none && !r_sum && !r_mean)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'reduction' = '%s' (expected none, sum or mean)", red);
    const ir_tensor *xt = T(c, x), *tt = T(c, target);
    symc_dtype xd = xt->dtype, td = tt->dtype;
    if (!ir_dtype_is_float(xd))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; the loss takes floats", xt->name,
                       symc_dtype_name(xd));
    if (td != SYMC_I32 && td != SYMC_I64)
        return fe_fail(c, SYMC_ERR_FORMAT, "target '%s' is %s; it must be int32 or int64", tt->name,
                       symc_dtype_name(td));
    if (xt->rank < 2 || tt->rank != xt->rank - 1)
        return fe_fail(c, SYMC_ERR_FORMAT,
                       "input '%s' has rank %d and target '%s' rank %d; they must be [N, C, d..] "
                       "and [N, d..]",
                       xt->name, (int)xt->rank, tt->name, (int)tt->rank);
    if (have_w && T(c, w)->rank != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "weight '%s' has rank %d, must be 1", T(c, w)->name, (int)T(c, w)->rank);
    const Onnx__AttributeProto *iia = fe_attr_of(c, "ignore_index", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    int has_ii = iia != NULL;
    int64_t ii = has_ii ? iia->i : 0;
    if (has_ii && td == SYMC_I32 && (ii < INT32_MIN || ii > INT32_MAX))
        has_ii = 0; /* no int32 target can equal it: nothing is ignored */
    symc_status st;
    int64_t ax1 = 1;
    ir_attr un = symc_attr_ints("axes", &ax1, 1), g1 = symc_attr_int("axis", 1), g0 = symc_attr_int("axis", 0);
    uint32_t t, mask = 0, zf, g, loss, wg = 0, tmp;
    uint8_t zbytes[8] = {0}, iib[8];
    if ((st = fe_emit1(c, IR_OP_UNSQUEEZE, &target, 1, &un, 1, -1, &t)) || (st = emit_scalar(c, xd, 0.0, &zf)))
        return st;
    if (has_ii) {
        uint32_t iic, zt;
        symc_dtype_store(iib, td, 0, (double)ii);
        if (td == SYMC_I64) memcpy(iib, &ii, 8); /* exact beyond 2^53 */
        if ((st = fe_const(c, td, 0, NULL, iib, -1, &iic)) || (st = fe_const(c, td, 0, NULL, zbytes, -1, &zt)) ||
            (st = emit_bin(c, IR_OP_EQUAL, t, iic, -1, &mask)))
            return st;
        uint32_t w3[3] = {mask, zt, t};
        if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &t))) return st;
    }
    uint32_t gin[2] = {x, t};
    if ((st = fe_emit1(c, IR_OP_GATHER_ELEMENTS, gin, 2, &g1, 1, -1, &g))) return st;
    if (has_ii) {
        uint32_t w3[3] = {mask, zf, g};
        if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &g))) return st;
    }
    if ((st = emit_un(c, IR_OP_NEG, g, -1, &loss)) || (st = fe_emit1(c, IR_OP_SQUEEZE, &loss, 1, &un, 1, -1, &loss)))
        return st;
    int weighted = have_w || (has_ii && r_mean); /* the mean divides by the weights' sum */
    if (have_w) {
        uint32_t win[2] = {w, t};
        if ((st = fe_emit1(c, IR_OP_GATHER, win, 2, &g0, 1, -1, &wg))) return st;
        if (has_ii) {
            uint32_t w3[3] = {mask, zf, wg};
            if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &wg))) return st;
        }
        if ((st = fe_emit1(c, IR_OP_SQUEEZE, &wg, 1, &un, 1, -1, &wg))) return st;
    } else if (weighted) {
        uint32_t one, w3[3];
        if ((st = emit_scalar(c, xd, 1.0, &one))) return st;
        w3[0] = mask, w3[1] = zf, w3[2] = one;
        if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &wg)) ||
            (st = fe_emit1(c, IR_OP_SQUEEZE, &wg, 1, &un, 1, -1, &wg)))
            return st;
    }
    if (have_w && (st = emit_bin(c, IR_OP_MUL, loss, wg, -1, &loss))) return st;
    if (r_none) return emit_un(c, IR_OP_IDENTITY, loss, 0, &tmp);
    ir_attr keep0 = symc_attr_int("keepdims", 0);
    if (r_sum) return fe_emit1(c, IR_OP_REDUCE_SUM, &loss, 1, &keep0, 1, 0, &tmp);
    if (!weighted) return fe_emit1(c, IR_OP_REDUCE_MEAN, &loss, 1, &keep0, 1, 0, &tmp);
    uint32_t ls, ws;
    if ((st = fe_emit1(c, IR_OP_REDUCE_SUM, &loss, 1, &keep0, 1, -1, &ls)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_SUM, &wg, 1, &keep0, 1, -1, &ws)))
        return st;
    return emit_bin(c, IR_OP_DIV, ls, ws, 0, &tmp);
}

static symc_status h_nll_loss(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t x, t, w = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &w);
    return st ? st : nll_loss(c, x, t, fe_has_in(c, 2), w);
}

/* SoftmaxCrossEntropyLoss as its ONNX function body: log_softmax of the
 * scores over the classes (axis 1), the optional output log_prob, then the
 * NegativeLogLikelihoodLoss of it. */
static symc_status h_softmax_cross_entropy_loss(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t x, t, w = 0, lp;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &w);
    if (!st && T(c, x)->rank < 2)
        return fe_fail(c, SYMC_ERR_FORMAT, "scores '%s' have rank %d; they must be [N, C, d..]", T(c, x)->name,
                       (int)T(c, x)->rank);
    if (!st && !ir_dtype_is_float(T(c, x)->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scores '%s' are %s; the loss takes floats", T(c, x)->name,
                       symc_dtype_name(T(c, x)->dtype));
    ir_attr a = symc_attr_int("axis", 1);
    if (!st) st = fe_emit1(c, IR_OP_LOG_SOFTMAX, &x, 1, &a, 1, fe_has_out(c, 1) ? 1 : -1, &lp);
    return st ? st : nll_loss(c, lp, t, fe_has_in(c, 2), w);
}

/* ---- grid sampling ----------------------------------------------------------------------------------- */

/* GridSample (opsets 16-21): the IR op grid_sample on 1 to 3 spatial dims.
 * Opset 16's bilinear and bicubic are linear and cubic. */
static symc_status h_grid_sample(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t in[2], out;
    for (uint32_t k = 0; k < 2 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const char *mode = fe_attr_s(c, "mode", c->opset >= 20 ? "linear" : "bilinear");
    const char *pad = fe_attr_s(c, "padding_mode", "zeros");
    int64_t align = fe_attr_i(c, "align_corners", 0);
    const char *m = !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? "linear"
        : !strcmp(mode, "bicubic") || !strcmp(mode, "cubic")             ? "cubic"
        : !strcmp(mode, "nearest")                                       ? "nearest"
                                                                         : NULL;
    if (!m)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'mode' = '%s' is not supported (linear/bilinear, cubic/bicubic and nearest are)",
                       mode);
    if (strcmp(pad, "zeros") && strcmp(pad, "border") && strcmp(pad, "reflection"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'padding_mode' = '%s' is not supported (zeros, border and reflection are)", pad);
    if (align != 0 && align != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'align_corners' = %" PRId64 " must be 0 or 1", align);
    int32_t r = T(c, in[0])->rank;
    if (r < 3 || r > 5)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input '%s' has rank %d; 1 to 3 spatial dims (rank 3 to 5) are supported", T(c, in[0])->name,
                       (int)r);
    if (!ir_dtype_is_float(T(c, in[0])->dtype) || !ir_dtype_is_float(T(c, in[1])->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' and grid '%s' must be float tensors", T(c, in[0])->name,
                       T(c, in[1])->name);
    ir_attr a[3] = {symc_attr_str("mode", m), symc_attr_str("padding_mode", pad),
                    symc_attr_int("align_corners", align)};
    return fe_emit1(c, IR_OP_GRID_SAMPLE, in, 2, a, 3, 0, &out);
}

/* AffineGrid (opset 20) as theta applied to a constant base grid: the
 * homogeneous coordinates B [P, r + 1] of the P = prod(size) output points
 * (x first, then y, z, then 1; each axis a linspace over [-1, 1]: the corner
 * centers with align_corners, else the element centers), so the grid is
 * matmul(B, transpose(theta)) [N, P, r] reshaped to [N, size.., r]. size
 * must be known at build time. */
static symc_status h_affine_grid(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t th, sz, out;
    int64_t size[5];
    uint32_t ns;
    if (!st) st = fe_in(c, 0, &th);
    if (!st) st = fe_in(c, 1, &sz);
    if (!st) st = fe_const_ints(c, sz, 1, "the output size", size, 5, &ns);
    if (st) return st;
    int64_t align = fe_attr_i(c, "align_corners", 0);
    if (align != 0 && align != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'align_corners' = %" PRId64 " must be 0 or 1", align);
    int32_t r = (int32_t)ns - 2;
    const ir_tensor *tt = T(c, th);
    int64_t d1, d2;
    if (r < 2 || r > 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "size has %u entries; 2-D (4) and 3-D (5) grids are supported", ns);
    if (tt->rank != 3 || !sym_is_const(c->t, tt->dims[1], &d1) || !sym_is_const(c->t, tt->dims[2], &d2) || d1 != r ||
        d2 != r + 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "theta '%s' must be [N, %d, %d] for a %d-D grid", tt->name, (int)r,
                       (int)r + 1, (int)r);
    if (!ir_dtype_is_float(tt->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "theta '%s' must be a float tensor", tt->name);
    int64_t p = 1;
    for (int32_t i = 0; i < r; i++) {
        if (size[2 + i] < 1 || size[2 + i] > ((int64_t)1 << 20))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "size entry %d = %" PRId64 " must be in [1, 2^20]", 2 + (int)i,
                           size[2 + i]);
        p *= size[2 + i];
        if (p > ((int64_t)1 << 24))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the grid has more than 2^24 points, too many for a constant");
    }
    symc_dtype dt = tt->dtype;
    size_t es = symc_dtype_size(dt);
    uint8_t *base = malloc((size_t)p * (size_t)(r + 1) * es);
    if (!base) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t q = 0; q < p; q++) {
        int64_t rest = q;
        for (int32_t i = r - 1; i >= 0; i--) { /* spatial axis i, innermost last; column r - 1 - i */
            int64_t n = size[2 + i], k = rest % n;
            rest /= n;
            double v = align ? (n == 1 ? -1.0 : -1.0 + 2.0 * (double)k / (double)(n - 1))
                             : -1.0 + (2.0 * (double)k + 1.0) / (double)n;
            symc_dtype_store(base, dt, (size_t)(q * (r + 1) + (r - 1 - i)), v);
        }
        symc_dtype_store(base, dt, (size_t)(q * (r + 1) + r), 1.0);
    }
    int64_t bd[2] = {p, r + 1};
    uint32_t b, tr, g;
    st = fe_const(c, dt, 2, bd, base, -1, &b);
    free(base);
    int64_t perm[3] = {0, 2, 1};
    ir_attr pa = symc_attr_ints("perm", perm, 3);
    if (st || (st = fe_emit1(c, IR_OP_TRANSPOSE, &th, 1, &pa, 1, -1, &tr)) ||
        (st = emit_bin(c, IR_OP_MATMUL, b, tr, -1, &g)))
        return st;
    sym_expr od[5];
    od[0] = T(c, th)->dims[0];
    for (int32_t i = 0; i < r; i++) od[1 + i] = sym_const(c->t, size[2 + i]);
    od[r + 1] = sym_const(c->t, r);
    (void)out;
    return emit_reshape(c, g, od, (uint32_t)r + 2, 0, &out);
}

/* ---- spectral ------------------------------------------------------------------------------------------ */

/* A one-element integer input known at build time, or dflt when absent. */
static symc_status opt_int_in(fe_ctx *c, uint32_t k, const char *role, int64_t dflt, int *given, int64_t *v) {
    uint32_t t, n;
    *given = 0;
    *v = dflt;
    if (!fe_has_in(c, k)) return SYMC_OK;
    symc_status st = fe_in(c, k, &t);
    if (!st) st = fe_const_ints(c, t, k, role, v, 1, &n);
    if (!st && n != 1) st = fe_fail(c, SYMC_ERR_FORMAT, "input %u (%s) must hold one element, has %u", k, role, n);
    *given = !st;
    return st;
}

/* The IR op dft on x along axis (normalized, before the last dim) with n
 * points; out_k as fe_emit1. */
static symc_status emit_dft(fe_ctx *c, uint32_t x, int64_t axis, int64_t n, int64_t inverse, int64_t onesided,
                            int out_k, uint32_t *out) {
    ir_attr a[4] = {symc_attr_int("axis", axis), symc_attr_int("length", n), symc_attr_int("inverse", inverse),
                    symc_attr_int("onesided", onesided)};
    return fe_emit1(c, IR_OP_DFT, &x, 1, a, 4, out_k, out);
}

/* DFT (opsets 17-20; axis an attribute before 20, an input from 20):
 * dft_length and axis must be known at build time, and the transformed dim
 * constant when dft_length is absent. */
static symc_status h_dft(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 3);
    uint32_t x, out;
    int given;
    int64_t axis = c->opset >= 20 ? -2 : fe_attr_i(c, "axis", 1), n, last;
    int64_t inverse = fe_attr_i(c, "inverse", 0), onesided = fe_attr_i(c, "onesided", 0);
    if (!st) st = fe_in(c, 0, &x);
    if (!st && c->opset >= 20) st = opt_int_in(c, 2, "the axis", axis, &given, &axis);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    if (r < 2 || !sym_is_const(c->t, xt->dims[r - 1], &last) || (last != 1 && last != 2))
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' must end in a dim of 1 (real) or 2 (complex)", xt->name);
    if (axis < -(int64_t)r || axis >= r) return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range", axis);
    if (axis < 0) axis += r;
    if (axis == r - 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is the last dim of '%s' (real and imaginary parts)", axis,
                       xt->name);
    if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1))
        return fe_fail(c, SYMC_ERR_FORMAT, "inverse = %" PRId64 " and onesided = %" PRId64 " must be 0 or 1", inverse,
                       onesided);
    int64_t len;
    int have_len = sym_is_const(c->t, xt->dims[axis], &len);
    if ((st = opt_int_in(c, 1, "dft_length", 0, &given, &n))) return st;
    if (!given) {
        if (!have_len)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the transformed dim %" PRId64 " of '%s' is %s; without dft_length symc needs it constant",
                           axis, xt->name, fe_txt(c, xt->dims[axis]));
        n = inverse && onesided ? 2 * (len - 1) : len;
    }
    if (n < 1 || n > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "dft_length %" PRId64 " must be in [1, 2^24]", n);
    return emit_dft(c, x, axis, n, inverse, onesided, 0, &out);
}

/* STFT (opset 17) as frames gathered from the signal (constant indices
 * [frames, frame_length]), weighted by the window, then a dft along the
 * frame: frame_step, frame_length and the signal length must be known at
 * build time. */
static symc_status h_stft(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 4);
    uint32_t x, win = 0, out;
    int given;
    int64_t step, fl, len, last, onesided = fe_attr_i(c, "onesided", 1);
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = opt_int_in(c, 1, "frame_step", 0, &given, &step);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &win);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    if (xt->rank != 3 || !sym_is_const(c->t, xt->dims[2], &last) || (last != 1 && last != 2))
        return fe_fail(c, SYMC_ERR_FORMAT, "signal '%s' must be [batch, length, 1 or 2]", xt->name);
    if (!sym_is_const(c->t, xt->dims[1], &len))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the signal length %s is symbolic; symc needs it constant for STFT",
                       fe_txt(c, xt->dims[1]));
    symc_dtype dt = xt->dtype;
    int64_t wl = -1;
    if (fe_has_in(c, 2)) {
        const ir_tensor *wt = T(c, win);
        if (wt->rank != 1 || !sym_is_const(c->t, wt->dims[0], &wl))
            return fe_fail(c, SYMC_ERR_FORMAT, "window '%s' must be 1-D of a constant length", wt->name);
    }
    if ((st = opt_int_in(c, 3, "frame_length", wl >= 0 ? wl : len, &given, &fl))) return st;
    if (wl >= 0 && wl != fl)
        return fe_fail(
            c, SYMC_ERR_UNSUPPORTED,
            "a window of %" PRId64 " entries with frame_length %" PRId64 " is not supported (they must match)", wl, fl);
    if (onesided != 0 && onesided != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "onesided = %" PRId64 " must be 0 or 1", onesided);
    if (step < 1 || fl < 1 || fl > len || fl > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "frame_step %" PRId64 " and frame_length %" PRId64 " must be >= 1, the frame at most the signal "
                       "length %" PRId64,
                       step, fl, len);
    int64_t frames = 1 + (len - fl) / step;
    if (frames * fl > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%" PRId64 " frames of %" PRId64 " are too many", frames, fl);
    int64_t *idx = malloc((size_t)(frames * fl) * sizeof *idx);
    if (!idx) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t f = 0; f < frames; f++)
        for (int64_t j = 0; j < fl; j++) idx[f * fl + j] = f * step + j;
    int64_t idims[2] = {frames, fl};
    uint32_t it, g;
    st = fe_const(c, SYMC_I64, 2, idims, idx, -1, &it);
    free(idx);
    int64_t ax = 1;
    ir_attr ga = symc_attr_int("axis", ax);
    uint32_t gin[2] = {x, it};
    if (st || (st = fe_emit1(c, IR_OP_GATHER, gin, 2, &ga, 1, -1, &g))) return st; /* [batch, frames, fl, c] */
    if (fe_has_in(c, 2)) {
        sym_expr wd[2] = {sym_const(c->t, fl), sym_const(c->t, 1)};
        uint32_t w2;
        if ((st = emit_cast(c, win, dt, -1, &w2)) || (st = emit_reshape(c, w2, wd, 2, -1, &w2)) ||
            (st = emit_bin(c, IR_OP_MUL, g, w2, -1, &g)))
            return st;
    }
    return emit_dft(c, g, 2, fl, 0, onesided, 0, &out);
}

/* ---- recurrent layers ------------------------------------------------------------------------------------ */

/* RNN, GRU and LSTM (opsets 14-22) unrolled over a sequence length that is
 * a constant: for each direction, the input projection of every step is one
 * matmul X W^T; then each step is a matmul by R^T and the gates' elementwise
 * math in the ONNX equations (gate order: GRU z, r, h; LSTM i, o, f, c).
 * Y stacks the steps' hidden states (in time order for the reverse
 * direction too), Y_h / Y_c are the last ones. layout 1 transposes in and
 * out. Refused by name: a symbolic sequence length, sequence_lens shorter
 * than the sequence, activations other than Sigmoid/Tanh/Relu/Softsign/
 * Softplus, input_forget = 1. */
enum { REC_RNN, REC_GRU, REC_LSTM };

typedef struct rec {
    int kind, gates, dirs, lbr;
    int64_t hs, seq;
    double clip;
    ir_op act[6]; /* f, g, h of each direction (RNN: f; GRU: f, g) */
    symc_dtype dt;
    sym_expr batch;
} rec;

static symc_status rec_perm(fe_ctx *c, uint32_t x, const int64_t *perm, uint32_t n, int out_k, uint32_t *out) {
    ir_attr a = symc_attr_ints("perm", perm, n);
    return fe_emit1(c, IR_OP_TRANSPOSE, &x, 1, &a, 1, out_k, out);
}

/* x[i] along axis 0 (the axis dropped) */
static symc_status rec_pick(fe_ctx *c, uint32_t x, int64_t i, uint32_t *out) {
    uint32_t idx, in[2];
    ir_attr a = symc_attr_int("axis", 0);
    symc_status st = fe_const(c, SYMC_I64, 0, NULL, &i, -1, &idx);
    in[0] = x, in[1] = idx;
    return st ? st : fe_emit1(c, IR_OP_GATHER, in, 2, &a, 1, -1, out);
}

/* n equal parts of the last dim (of size n * hs) */
static symc_status rec_split(fe_ctx *c, const rec *r, uint32_t x, uint32_t n, uint32_t *parts) {
    sym_expr sizes[4];
    int out_k[4] = {-1, -1, -1, -1};
    for (uint32_t k = 0; k < n; k++) sizes[k] = sym_const(c->t, r->hs);
    ir_attr a[2] = {symc_attr_int("axis", T(c, x)->rank - 1), symc_attr_dims("sizes", sizes, n)};
    return fe_emit(c, IR_OP_SPLIT, &x, 1, a, 2, out_k, n, parts);
}

static symc_status rec_act(fe_ctx *c, const rec *r, ir_op op, uint32_t x, uint32_t *out) {
    symc_status st;
    if (r->clip > 0) {
        ir_attr a[2] = {symc_attr_float("min", -r->clip), symc_attr_float("max", r->clip)};
        if ((st = fe_emit1(c, IR_OP_CLIP, &x, 1, a, 2, -1, &x))) return st;
    }
    return emit_un(c, op, x, -1, out);
}

static symc_status rec_add3(fe_ctx *c, uint32_t a, uint32_t b, uint32_t d, uint32_t *out) {
    symc_status st = emit_bin(c, IR_OP_ADD, a, b, -1, out);
    return st ? st : emit_bin(c, IR_OP_ADD, *out, d, -1, out);
}

/* One direction (d: its activations; reverse: walks backwards): xw [seq, batch, G*H] (input projection plus Wb), rt
 * [H, G*H] (R^T), rb [G*H] (Rb), h, cc the initial states, p the peepholes
 * [3H] or 0. Writes the step outputs hs_out[t] (time order) and the last c. */
static symc_status rec_dir(fe_ctx *c, const rec *r, int d, int reverse, uint32_t xw, uint32_t rt, uint32_t rb,
                           uint32_t h, uint32_t cc, uint32_t p, uint32_t *hs_out, uint32_t *c_last) {
    symc_status st = SYMC_OK;
    const ir_op *act = r->act + d * (r->kind == REC_LSTM ? 3 : r->kind == REC_GRU ? 2 : 1);
    uint32_t pp[3] = {0, 0, 0}, one = 0, rts[3], rbs[3];
    if (p && (st = rec_split(c, r, p, 3, pp))) return st;
    if (r->kind == REC_GRU) {
        /* R^T's columns and Rb by gate, for the h gate's own product */
        int out_k[3] = {-1, -1, -1};
        sym_expr sizes[3] = {sym_const(c->t, r->hs), sym_const(c->t, r->hs), sym_const(c->t, r->hs)};
        ir_attr a[2] = {symc_attr_int("axis", 1), symc_attr_dims("sizes", sizes, 3)};
        if ((st = fe_emit(c, IR_OP_SPLIT, &rt, 1, a, 2, out_k, 3, rts)) || (st = rec_split(c, r, rb, 3, rbs)) ||
            (st = emit_scalar(c, r->dt, 1.0, &one)))
            return st;
    }
    for (int64_t s = 0; s < r->seq && !st; s++) {
        int64_t t = reverse ? r->seq - 1 - s : s;
        uint32_t xt, hr, g[4], v, u, w;
        if ((st = rec_pick(c, xw, t, &xt)) || (st = emit_bin(c, IR_OP_MATMUL, h, rt, -1, &hr))) return st;
        if (r->kind == REC_RNN) {
            if ((st = rec_add3(c, xt, hr, rb, &v)) || (st = rec_act(c, r, act[0], v, &h))) return st;
        } else if (r->kind == REC_LSTM) {
            if ((st = rec_add3(c, xt, hr, rb, &v)) || (st = rec_split(c, r, v, 4, g))) return st;
            /* i, o, f, c */
            if (p &&
                ((st = emit_bin(c, IR_OP_MUL, pp[0], cc, -1, &u)) ||
                 (st = emit_bin(c, IR_OP_ADD, g[0], u, -1, &g[0])) ||
                 (st = emit_bin(c, IR_OP_MUL, pp[2], cc, -1, &u)) || (st = emit_bin(c, IR_OP_ADD, g[2], u, -1, &g[2]))))
                return st;
            uint32_t i, f, ct, o;
            if ((st = rec_act(c, r, act[0], g[0], &i)) || (st = rec_act(c, r, act[0], g[2], &f)) ||
                (st = rec_act(c, r, act[1], g[3], &ct)) || (st = emit_bin(c, IR_OP_MUL, f, cc, -1, &u)) ||
                (st = emit_bin(c, IR_OP_MUL, i, ct, -1, &w)) || (st = emit_bin(c, IR_OP_ADD, u, w, -1, &cc)))
                return st;
            if (p &&
                ((st = emit_bin(c, IR_OP_MUL, pp[1], cc, -1, &u)) || (st = emit_bin(c, IR_OP_ADD, g[1], u, -1, &g[1]))))
                return st;
            if ((st = rec_act(c, r, act[0], g[1], &o)) || (st = rec_act(c, r, act[2], cc, &u)) ||
                (st = emit_bin(c, IR_OP_MUL, o, u, -1, &h)))
                return st;
        } else {
            uint32_t xg[3], hg[3], z, rr, hh;
            if ((st = rec_split(c, r, xt, 3, xg)) || (st = emit_bin(c, IR_OP_ADD, hr, rb, -1, &v)) ||
                (st = rec_split(c, r, v, 3, hg)) || (st = emit_bin(c, IR_OP_ADD, xg[0], hg[0], -1, &u)) ||
                (st = rec_act(c, r, act[0], u, &z)) || (st = emit_bin(c, IR_OP_ADD, xg[1], hg[1], -1, &u)) ||
                (st = rec_act(c, r, act[0], u, &rr)))
                return st;
            if (r->lbr) { /* r * (h Rh^T + Rbh) */
                if ((st = emit_bin(c, IR_OP_MUL, rr, hg[2], -1, &u))) return st;
            } else { /* (r * h) Rh^T + Rbh */
                if ((st = emit_bin(c, IR_OP_MUL, rr, h, -1, &u)) ||
                    (st = emit_bin(c, IR_OP_MATMUL, u, rts[2], -1, &u)) ||
                    (st = emit_bin(c, IR_OP_ADD, u, rbs[2], -1, &u)))
                    return st;
            }
            /* h' = (1 - z) * hh + z * h */
            if ((st = emit_bin(c, IR_OP_ADD, xg[2], u, -1, &u)) || (st = rec_act(c, r, act[1], u, &hh)) ||
                (st = emit_bin(c, IR_OP_SUB, one, z, -1, &u)) || (st = emit_bin(c, IR_OP_MUL, u, hh, -1, &u)) ||
                (st = emit_bin(c, IR_OP_MUL, z, h, -1, &w)) || (st = emit_bin(c, IR_OP_ADD, u, w, -1, &h)))
                return st;
        }
        hs_out[t] = h;
    }
    *c_last = cc;
    return st;
}

/* Unsqueezes each of xs at axis and concatenates them there (out_k as fe_emit1). */
static symc_status rec_stack(fe_ctx *c, const uint32_t *xs, uint32_t n, int64_t axis, int out_k, uint32_t *out) {
    uint32_t *u = malloc(n * sizeof *u);
    if (!u) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    ir_attr a = symc_attr_ints("axes", &axis, 1);
    symc_status st = SYMC_OK;
    for (uint32_t k = 0; k < n && !st; k++)
        st = fe_emit1(c, IR_OP_UNSQUEEZE, &xs[k], 1, &a, 1, n == 1 ? out_k : -1, &u[k]);
    if (!st && n == 1) *out = u[0];
    if (!st && n > 1) {
        ir_attr ca = symc_attr_int("axis", axis);
        st = fe_emit1(c, IR_OP_CONCAT, u, n, &ca, 1, out_k, out);
    }
    free(u);
    return st;
}

static symc_status recurrent(fe_ctx *c, int kind) {
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    static const int nact[3] = {1, 2, 3}, ngates[3] = {1, 3, 4};
    symc_status st = need_inputs(c, 3, kind == REC_LSTM ? 8 : 6);
    rec r = {.kind = kind, .gates = ngates[kind]};
    uint32_t x, w, rw;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &w);
    if (!st) st = fe_in(c, 2, &rw);
    if (st) return st;
    r.dt = T(c, x)->dtype;
    if (!ir_dtype_is_float(r.dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' must be a float tensor", T(c, x)->name);
    const char *dir = fe_attr_s(c, "direction", "forward");
    int rev_only = !strcmp(dir, "reverse");
    r.dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    if (r.dirs == 1 && !rev_only && strcmp(dir, "forward"))
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'direction' = '%s' (forward, reverse or bidirectional)", dir);
    int64_t layout = fe_attr_i(c, "layout", 0);
    r.hs = fe_attr_i(c, "hidden_size", 0);
    r.lbr = (int)fe_attr_i(c, "linear_before_reset", 0);
    r.clip = fe_attr_f(c, "clip", 0.0);
    if (layout != 0 && layout != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'layout' = %" PRId64 " must be 0 or 1", layout);
    if (fe_attr(c, "clip") && !(r.clip > 0))
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'clip' = %g must be positive", r.clip);
    if (kind == REC_LSTM && fe_attr_i(c, "input_forget", 0))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'input_forget' = 1 is not supported");
    if (fe_attr(c, "activation_alpha") || fe_attr(c, "activation_beta"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attributes 'activation_alpha'/'activation_beta' are not supported");
    const Onnx__AttributeProto *aa = fe_attr_of(c, "activations", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
    int na = nact[kind];
    if (aa && aa->n_strings != (size_t)(na * r.dirs))
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'activations' has %zu entries, needs %d", aa->n_strings,
                       na * r.dirs);
    for (int k = 0; k < na * r.dirs; k++) {
        char name[32] = {0};
        if (aa) {
            size_t len = aa->strings[k].len < sizeof name - 1 ? aa->strings[k].len : sizeof name - 1;
            memcpy(name, aa->strings[k].data, len);
        } else {
            memcpy(name, defaults[kind][k % na], strlen(defaults[kind][k % na]));
        }
        static const struct {
            const char *n;
            ir_op op;
        } acts[] = {{"Sigmoid", IR_OP_SIGMOID},
                    {"Tanh", IR_OP_TANH},
                    {"Relu", IR_OP_RELU},
                    {"Softsign", IR_OP_SOFTSIGN},
                    {"Softplus", IR_OP_SOFTPLUS}};
        int found = 0;
        for (size_t i = 0; i < sizeof acts / sizeof *acts; i++)
            if (!strcmp(acts[i].n, name)) r.act[k] = acts[i].op, found = 1;
        if (!found)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "activation '%s' is not supported (Sigmoid, Tanh, Relu, Softsign and Softplus are)", name);
    }
    const ir_tensor *xt = T(c, x);
    if (xt->rank != 3) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' must be 3-D", xt->name);
    if (layout) { /* [batch, seq, in] -> [seq, batch, in] */
        int64_t perm[3] = {1, 0, 2};
        if ((st = rec_perm(c, x, perm, 3, -1, &x))) return st;
        xt = T(c, x);
    }
    if (!sym_is_const(c->t, xt->dims[0], &r.seq))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "the sequence length of '%s' is the symbol %s; symc unrolls %s over a constant sequence length "
                       "only",
                       c->node->input[0], fe_txt(c, xt->dims[0]), c->node->op_type);
    if (r.seq < 1 || r.seq * r.dirs > 512)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "sequence length %" PRId64 " is outside [1, %d] for unrolling", r.seq,
                       512 / r.dirs);
    r.batch = xt->dims[1];
    int64_t wd[3];
    const ir_tensor *wt = T(c, w);
    if (r.hs < 1 || wt->rank != 3 || !sym_is_const(c->t, wt->dims[0], &wd[0]) || wd[0] != r.dirs ||
        !sym_is_const(c->t, wt->dims[1], &wd[1]) || wd[1] != r.gates * r.hs)
        return fe_fail(c, SYMC_ERR_FORMAT, "W '%s' must be [%d, %" PRId64 ", input size] (hidden_size %" PRId64 ")",
                       wt->name, r.dirs, r.gates * r.hs, r.hs);
    /* sequence_lens: every entry must be the whole sequence */
    if (fe_has_in(c, 4)) {
        uint32_t sl, n;
        int64_t lens[64];
        if ((st = fe_in(c, 4, &sl)) || (st = fe_const_ints(c, sl, 4, "sequence_lens", lens, 64, &n))) return st;
        for (uint32_t k = 0; k < n; k++)
            if (lens[k] != r.seq)
                return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                               "sequence_lens[%u] = %" PRId64 " is shorter than the sequence (%" PRId64
                               "); only full-length sequences are supported",
                               k, lens[k], r.seq);
    }
    uint32_t h0 = 0, c0 = 0, bias = 0, peep = 0, zero;
    if (fe_has_in(c, 3) && (st = fe_in(c, 3, &bias))) return st;
    if (fe_has_in(c, 5) && (st = fe_in(c, 5, &h0))) return st;
    if (kind == REC_LSTM && fe_has_in(c, 6) && (st = fe_in(c, 6, &c0))) return st;
    if (kind == REC_LSTM && fe_has_in(c, 7) && (st = fe_in(c, 7, &peep))) return st;
    int64_t perm3[3] = {1, 0, 2};
    if (layout && h0 && (st = rec_perm(c, h0, perm3, 3, -1, &h0))) return st;
    if (layout && c0 && (st = rec_perm(c, c0, perm3, 3, -1, &c0))) return st;
    sym_expr zd[2] = {r.batch, sym_const(c->t, r.hs)};
    ir_attr za = symc_attr_dims("shape", zd, 2);
    if ((st = emit_scalar(c, r.dt, 0.0, &zero)) || (st = fe_emit1(c, IR_OP_EXPAND, &zero, 1, &za, 1, -1, &zero)))
        return st;
    uint32_t *steps = malloc((size_t)(r.seq * r.dirs) * sizeof *steps);
    if (!steps) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    uint32_t last_h[2], last_c[2];
    int64_t p2[2] = {1, 0};
    for (int d = 0; d < r.dirs && !st; d++) {
        int dd = rev_only ? 1 : d; /* the reverse pass walks backwards */
        uint32_t wdir, rdir, xw, rt, rb, h = zero, cc = zero, p = 0;
        if ((st = rec_pick(c, w, d, &wdir)) || (st = rec_perm(c, wdir, p2, 2, -1, &wdir)) ||
            (st = emit_bin(c, IR_OP_MATMUL, x, wdir, -1, &xw)) || (st = rec_pick(c, rw, d, &rdir)) ||
            (st = rec_perm(c, rdir, p2, 2, -1, &rt)))
            break;
        if (bias) {
            uint32_t bd, halves[2];
            int out_k[2] = {-1, -1};
            sym_expr sz[2] = {sym_const(c->t, r.gates * r.hs), sym_const(c->t, r.gates * r.hs)};
            ir_attr sa[2] = {symc_attr_int("axis", 0), symc_attr_dims("sizes", sz, 2)};
            if ((st = rec_pick(c, bias, d, &bd)) || (st = fe_emit(c, IR_OP_SPLIT, &bd, 1, sa, 2, out_k, 2, halves)) ||
                (st = emit_bin(c, IR_OP_ADD, xw, halves[0], -1, &xw)))
                break;
            rb = halves[1];
        } else {
            int64_t gd = r.gates * r.hs;
            sym_expr bdim = sym_const(c->t, gd);
            ir_attr ba = symc_attr_dims("shape", &bdim, 1);
            uint32_t z1;
            if ((st = emit_scalar(c, r.dt, 0.0, &z1)) || (st = fe_emit1(c, IR_OP_EXPAND, &z1, 1, &ba, 1, -1, &rb)))
                break;
        }
        if (h0 && (st = rec_pick(c, h0, d, &h))) break;
        if (c0 && (st = rec_pick(c, c0, d, &cc))) break;
        if (peep && (st = rec_pick(c, peep, d, &p))) break;
        if ((st = rec_dir(c, &r, d, dd, xw, rt, rb, h, cc, p, steps + d * r.seq, &last_c[d]))) break;
        last_h[d] = steps[d * r.seq + (dd ? 0 : r.seq - 1)];
    }
    if (!st && fe_has_out(c, 0)) { /* Y [seq, dirs, batch, H] (layout 1: [batch, seq, dirs, H]) */
        uint32_t *per = malloc((size_t)r.seq * sizeof *per), y;
        if (!per) st = fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
        for (int64_t t = 0; t < r.seq && !st; t++) {
            uint32_t both[2] = {steps[t], r.dirs == 2 ? steps[r.seq + t] : 0};
            st = rec_stack(c, both, (uint32_t)r.dirs, 0, -1, &per[t]);
        }
        if (!st) st = rec_stack(c, per, (uint32_t)r.seq, 0, layout ? -1 : 0, &y);
        if (!st && layout) {
            int64_t perm4[4] = {2, 0, 1, 3};
            st = rec_perm(c, y, perm4, 4, 0, &y);
        }
        free(per);
    }
    free(steps);
    uint32_t y;
    if (!st && fe_has_out(c, 1)) {
        st = rec_stack(c, last_h, (uint32_t)r.dirs, 0, layout ? -1 : 1, &y);
        if (!st && layout) st = rec_perm(c, y, perm3, 3, 1, &y);
    }
    if (!st && kind == REC_LSTM && fe_has_out(c, 2)) {
        st = rec_stack(c, last_c, (uint32_t)r.dirs, 0, layout ? -1 : 2, &y);
        if (!st && layout) st = rec_perm(c, y, perm3, 3, 2, &y);
    }
    return st;
}
static symc_status h_rnn(fe_ctx *c) { return recurrent(c, REC_RNN); }
static symc_status h_gru(fe_ctx *c) { return recurrent(c, REC_GRU); }
static symc_status h_lstm(fe_ctx *c) { return recurrent(c, REC_LSTM); }

/* ---- folding, unpooling, sequences, determinants -------------------------------------------------------- */

/* Col2Im (opset 18): image_shape and block_shape must be known at build time. */
static symc_status h_col2im(fe_ctx *c) {
    symc_status st = need_inputs(c, 3, 3);
    uint32_t x, ti, tb, out, ni, nb;
    int64_t img[3], blk[3];
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &ti);
    if (!st) st = fe_in(c, 2, &tb);
    if (!st) st = fe_const_ints(c, ti, 1, "image_shape", img, 3, &ni);
    if (!st) st = fe_const_ints(c, tb, 2, "block_shape", blk, 3, &nb);
    if (st) return st;
    if (ni < 1 || nb != ni)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "image_shape (%u entries) and block_shape (%u) must have 1 to 3 entries each", ni, nb);
    ir_attr a[5];
    uint32_t na = 0;
    a[na++] = symc_attr_ints("image_shape", img, ni);
    a[na++] = symc_attr_ints("block_shape", blk, nb);
    static const char *const names[3] = {"strides", "dilations", "pads"};
    for (int k = 0; k < 3; k++) {
        const int64_t *v;
        uint32_t n;
        if (!fe_attr_ints(c, names[k], &v, &n)) continue;
        if (n != (k == 2 ? 2 * ni : ni))
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries for %u spatial dims", names[k], n, ni);
        a[na++] = symc_attr_ints(names[k], v, n);
    }
    return fe_emit1(c, IR_OP_COL2IM, &x, 1, a, na, 0, &out);
}

/* MaxUnpool (opsets 11-22) as the ONNX reference computes it: a scatter of
 * X's values at their flat indices I into zeros of the unpooled shape
 * ((in - 1) * stride - pads + kernel), reshaped, then zero-padded at the end
 * up to output_shape (known at build time) when given. */
static symc_status h_max_unpool(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 3);
    uint32_t x, ix, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &ix);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank, nsp = r - 2;
    const int64_t *ks, *v;
    uint32_t nk, n;
    if (nsp < 1 || nsp > 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' has rank %d; 3 to 5 are supported", xt->name, (int)r);
    if (!fe_attr_ints(c, "kernel_shape", &ks, &nk) || nk != (uint32_t)nsp)
        return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape must have %d entries", (int)nsp);
    int64_t strides[3] = {1, 1, 1}, pads[6] = {0, 0, 0, 0, 0, 0};
    if (fe_attr_ints(c, "strides", &v, &n)) {
        if (n != (uint32_t)nsp) return fe_fail(c, SYMC_ERR_FORMAT, "strides must have %d entries", (int)nsp);
        memcpy(strides, v, n * sizeof *v);
    }
    if (fe_attr_ints(c, "pads", &v, &n)) {
        if (n != 2u * (uint32_t)nsp) return fe_fail(c, SYMC_ERR_FORMAT, "pads must have %d entries", 2 * (int)nsp);
        memcpy(pads, v, n * sizeof *v);
    }
    sym_expr od[5], want[5];
    int64_t os[5];
    od[0] = xt->dims[0], od[1] = xt->dims[1];
    for (int32_t i = 0; i < nsp; i++)
        od[2 + i] = sym_add_const(c->t, sym_scale(c->t, sym_add_const(c->t, T(c, x)->dims[2 + i], -1), strides[i]),
                                  ks[i] - pads[i] - pads[nsp + i]);
    int pad_out = fe_has_in(c, 2);
    if (pad_out) { /* the inferred shape, zero-padded at the end up to output_shape */
        uint32_t ts, ns;
        if ((st = fe_in(c, 2, &ts)) || (st = fe_const_ints(c, ts, 2, "output_shape", os, 5, &ns))) return st;
        if (ns != (uint32_t)r)
            return fe_fail(c, SYMC_ERR_FORMAT, "output_shape has %u entries for rank %d", ns, (int)r);
        for (int32_t i = 0; i < r; i++) {
            int64_t have;
            want[i] = i < 2 ? od[i] : sym_sub(c->t, sym_const(c->t, os[i]), od[i]);
            if (i >= 2 && (!sym_is_const(c->t, want[i], &have) || have < 0))
                return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                               "output_shape dim %d = %" PRId64 " is smaller than the unpooled size %s, or that size "
                               "is symbolic",
                               (int)i, os[i], fe_txt(c, od[i]));
        }
    }
    /* zeros [numel(out)], indices [numel(x), 1], values [numel(x)] */
    sym_expr total = od[0];
    for (int32_t i = 1; i < r; i++) total = sym_mul(c->t, total, od[i]);
    sym_expr xn = xt->dims[0];
    for (int32_t i = 1; i < r; i++) xn = sym_mul(c->t, xn, T(c, x)->dims[i]);
    sym_expr in2[2] = {xn, sym_const(c->t, 1)};
    uint32_t z, xi, xv, sc;
    ir_attr za = symc_attr_dims("shape", &total, 1), ra = symc_attr_str("reduction", "none");
    if ((st = emit_scalar(c, xt->dtype, 0.0, &z)) || (st = fe_emit1(c, IR_OP_EXPAND, &z, 1, &za, 1, -1, &z)) ||
        (st = emit_reshape(c, ix, in2, 2, -1, &xi)) || (st = emit_reshape(c, x, &xn, 1, -1, &xv)))
        return st;
    uint32_t sin[3] = {z, xi, xv};
    if ((st = fe_emit1(c, IR_OP_SCATTER_ND, sin, 3, &ra, 1, -1, &sc))) return st;
    if (!pad_out) return emit_reshape(c, sc, od, (uint32_t)r, 0, &out);
    sym_expr pd[10];
    for (int32_t i = 0; i < r; i++) pd[i] = sym_const(c->t, 0), pd[r + i] = i < 2 ? sym_const(c->t, 0) : want[i];
    ir_attr pa[2] = {symc_attr_dims("pads", pd, 2 * (uint32_t)r), symc_attr_str("mode", "constant")};
    if ((st = emit_reshape(c, sc, od, (uint32_t)r, -1, &sc))) return st;
    return fe_emit1(c, IR_OP_PAD, &sc, 1, pa, 2, 0, &out);
}

/* ReverseSequence (opset 10) as gather_elements along the time axis with
 * constant indices (t < len[b] ? len[b] - 1 - t : t) expanded over the other
 * dims: sequence_lens and the time and batch dims must be known at build
 * time. */
static symc_status h_reverse_sequence(fe_ctx *c) {
    symc_status st = need_inputs(c, 2, 2);
    uint32_t x, tl, out, nl;
    int64_t lens[1024];
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &tl);
    if (!st) st = fe_const_ints(c, tl, 1, "sequence_lens", lens, 1024, &nl);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    int64_t ta = fe_attr_i(c, "time_axis", 0), ba = fe_attr_i(c, "batch_axis", 1), tn, bn;
    if (r < 2 || !((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        return fe_fail(c, SYMC_ERR_FORMAT,
                       "time_axis %" PRId64 " and batch_axis %" PRId64 " must be 0 and 1 of a rank >= 2 input", ta, ba);
    if (!sym_is_const(c->t, xt->dims[ta], &tn) || !sym_is_const(c->t, xt->dims[ba], &bn) || bn != (int64_t)nl)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "the time (%s) and batch (%s) dims of '%s' must be constant, the batch equal to the %u "
                       "sequence_lens",
                       fe_txt(c, xt->dims[ta]), fe_txt(c, xt->dims[ba]), xt->name, nl);
    if (tn * bn > ((int64_t)1 << 24)) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the sequences are too long");
    int64_t *idx = malloc((size_t)(tn * bn > 0 ? tn * bn : 1) * sizeof *idx);
    if (!idx) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < bn && !st; b++) {
        if (lens[b] < 0 || lens[b] > tn)
            st = fe_fail(c, SYMC_ERR_FORMAT, "sequence_lens[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64 "]", b,
                         lens[b], tn);
        for (int64_t t = 0; t < tn; t++) {
            int64_t v = t < lens[b] ? lens[b] - 1 - t : t;
            idx[ta == 0 ? t * bn + b : b * tn + t] = v;
        }
    }
    int64_t idims[IR_MAX_RANK];
    for (int32_t i = 0; i < r; i++) idims[i] = 1;
    idims[0] = ta == 0 ? tn : bn, idims[1] = ta == 0 ? bn : tn;
    uint32_t ic;
    if (!st) st = fe_const(c, SYMC_I64, r, idims, idx, -1, &ic);
    free(idx);
    if (st) return st;
    sym_expr full[IR_MAX_RANK];
    memcpy(full, T(c, x)->dims, (size_t)r * sizeof *full);
    ir_attr ea = symc_attr_dims("shape", full, (uint32_t)r), ga = symc_attr_int("axis", ta);
    if ((st = fe_emit1(c, IR_OP_EXPAND, &ic, 1, &ea, 1, -1, &ic))) return st;
    uint32_t gin[2] = {x, ic};
    return fe_emit1(c, IR_OP_GATHER_ELEMENTS, gin, 2, &ga, 1, 0, &out);
}

static symc_status h_det(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && !ir_dtype_is_float(T(c, x)->dtype))
        st = fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' must be a float tensor", T(c, x)->name);
    return st ? st : fe_emit1(c, IR_OP_DET, &x, 1, NULL, 0, 0, &out);
}

/* RoiAlign (opsets 16-22; older models convert up to 16's attributes):
 * the IR op roi_align. */
static symc_status h_roi_align(fe_ctx *c) {
    symc_status st = need_inputs(c, 3, 3);
    uint32_t in[3], out;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const char *mode = fe_attr_s(c, "mode", "avg");
    const char *coord = fe_attr_s(c, "coordinate_transformation_mode",
                                  c->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'mode' = '%s' is not supported (avg and max are)", mode);
    int hp = !strcmp(coord, "half_pixel");
    if (!hp && strcmp(coord, "output_half_pixel"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'coordinate_transformation_mode' = '%s' is not supported (half_pixel and "
                       "output_half_pixel are)",
                       coord);
    int64_t oh = fe_attr_i(c, "output_height", 1), ow = fe_attr_i(c, "output_width", 1),
            sr = fe_attr_i(c, "sampling_ratio", 0);
    if (oh < 1 || ow < 1 || sr < 0)
        return fe_fail(c, SYMC_ERR_FORMAT,
                       "output_height %" PRId64 ", output_width %" PRId64 " must be >= 1 and "
                       "sampling_ratio %" PRId64 " >= 0",
                       oh, ow, sr);
    if (!ir_dtype_is_float(T(c, in[0])->dtype) || !ir_dtype_is_float(T(c, in[1])->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "X and rois must be float tensors");
    ir_attr a[6] = {symc_attr_int("output_height", oh),
                    symc_attr_int("output_width", ow),
                    symc_attr_str("mode", mode),
                    symc_attr_int("sampling_ratio", sr),
                    symc_attr_float("spatial_scale", fe_attr_f(c, "spatial_scale", 1.0)),
                    symc_attr_int("half_pixel", hp)};
    return fe_emit1(c, IR_OP_ROI_ALIGN, in, 3, a, 6, 0, &out);
}

/* ---- sources -------------------------------------------------------------------------------------------- */

static symc_status h_constant(fe_ctx *c) {
    symc_status st = need_inputs(c, 0, 0);
    if (st) return st;
    if (c->node->n_attribute != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "needs exactly one value attribute, has %zu", c->node->n_attribute);
    const Onnx__AttributeProto *a = c->node->attribute[0];
    uint32_t out;
    if (!strcmp(a->name, "value") && fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR) && a->t) {
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
    if (!strcmp(a->name, "value_float")) { /* an INT converts (exact), as fe_attr_f does */
        float f = (float)fe_attr_f(c, "value_float", 0.0);
        return c->attr_st ? SYMC_OK : fe_const(c, SYMC_F32, 0, NULL, &f, 0, &out);
    }
    if (!strcmp(a->name, "value_int"))
        return fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
            ? fe_const(c, SYMC_I64, 0, NULL, &a->i, 0, &out)
            : SYMC_OK;
    if (!strcmp(a->name, "value_floats")) {
        if (fe_attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) { /* INTS as FLOATS: each converted */
            int64_t d = (int64_t)a->n_ints;
            float *f = malloc((size_t)(d ? d : 1) * sizeof *f);
            if (!f) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory for 'value_floats'");
            for (int64_t i = 0; i < d; i++) f[i] = (float)a->ints[i];
            st = fe_const(c, SYMC_F32, 1, &d, f, 0, &out);
            free(f);
            return st;
        }
        int64_t d = (int64_t)a->n_floats; /* the list read is the one counted */
        return fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
            ? fe_const(c, SYMC_F32, 1, &d, a->floats, 0, &out)
            : SYMC_OK;
    }
    if (!strcmp(a->name, "value_ints")) {
        int64_t d = (int64_t)a->n_ints;
        return fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
            ? fe_const(c, SYMC_I64, 1, &d, a->ints, 0, &out)
            : SYMC_OK;
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
    const Onnx__AttributeProto *va = fe_attr_of(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
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

/* Dropout at inference is the identity with an all-true mask (output 1).
 * training_mode (input 2, default false) must be known at build time; in
 * training mode a ratio of 0 drops nothing and is the identity too, while
 * any other ratio draws random numbers no compiled engine can reproduce, so
 * it is refused. */
static symc_status h_dropout(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 3);
    uint32_t x, out, t;
    double on = 0, ratio = 0.5;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && fe_has_in(c, 2) && !(st = fe_in(c, 2, &t))) st = fe_const_scalar(c, t, 2, "training_mode", &on);
    if (!st && on != 0) {
        if (fe_has_in(c, 1) && !(st = fe_in(c, 1, &t))) st = fe_const_scalar(c, t, 1, "the ratio", &ratio);
        if (!st && ratio != 0)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "training_mode is true with ratio %g: random dropout cannot be reproduced (symc compiles "
                           "for inference; only ratio 0 is supported in training mode)",
                           ratio);
    }
    if (st || (st = fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, 0, &out)) || !fe_has_out(c, 1)) return st;
    uint8_t one = 1;
    uint32_t tr;
    sym_expr dims[IR_MAX_RANK]; /* x's dims: adding the constant may move the tensor table */
    int32_t r = T(c, x)->rank;
    memcpy(dims, T(c, x)->dims, (size_t)r * sizeof dims[0]);
    ir_attr a = symc_attr_dims("shape", dims, (uint32_t)r);
    if ((st = fe_const(c, SYMC_BOOL, 0, NULL, &one, -1, &tr))) return st;
    return fe_emit1(c, IR_OP_EXPAND, &tr, 1, &a, 1, 1, &out);
}

/* ---- control flow ----------------------------------------------------------------------------------- */

/* Imports the nodes of a sub-graph (a branch of If, the body of Loop or
 * Scan) in place: they read outer values and the body's inputs (bound by
 * the caller) by name. A loop body imported once per iteration rebinds its
 * names each time (its tensors get fresh names). */
static symc_status import_body(fe_ctx *c, const Onnx__GraphProto *g, const char *label) {
    if (g->n_initializer || g->n_sparse_initializer)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the %s has initializers, which are not supported (use Constant nodes)",
                       label);
    const Onnx__NodeProto *node = c->node;
    const char *where = c->where, *source = c->source;
    char w2[1200], s2[300];
    symc_status st = SYMC_OK;
    for (size_t i = 0; i < g->n_node && !st; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (!n || !n->op_type || !*n->op_type)
            return fe_fail(c, SYMC_ERR_FORMAT, "node %zu of the %s has no op type", i, label);
        int bad = n->n_output == 0;
        for (size_t k = 0; k < n->n_input; k++) bad |= !n->input[k];
        for (size_t k = 0; k < n->n_output; k++) bad |= !n->output[k];
        for (size_t k = 0; k < n->n_attribute; k++) bad |= !n->attribute[k] || !n->attribute[k]->name;
        if (bad)
            return fe_fail(c, SYMC_ERR_FORMAT, "node %zu (%s) of the %s has a missing input, output or attribute name",
                           i, n->op_type, label);
        if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "op '%s' of domain '%s' in the %s is not supported", n->op_type,
                           n->domain, label);
        if (n->name && *n->name) snprintf(s2, sizeof s2, "%s", n->name);
        else snprintf(s2, sizeof s2, "%.200s/%.60s#%zu", source, n->op_type, i);
        snprintf(w2, sizeof w2, "node '%.299s' (%.100s, opset %" PRId64 ") in the %s of %.600s", s2, n->op_type,
                 c->opset, label, where);
        c->node = n, c->where = w2, c->source = s2;
        st = fe_translate_node(c);
        for (size_t k = 0; k < n->n_output && !st; k++)
            if (n->output[k][0] && !fe_map_get(&c->values, n->output[k], NULL))
                st = fe_fail(c, SYMC_ERR_INTERNAL, "output %zu '%s' was not produced", k, n->output[k]);
        c->node = node, c->where = where, c->source = source;
    }
    return st;
}

/* The tensor of sub-graph output k (after import_body). */
static symc_status body_output(fe_ctx *c, const Onnx__GraphProto *g, size_t k, const char *label, uint32_t *t) {
    if (k >= g->n_output || !g->output[k] || !g->output[k]->name || !fe_map_get(&c->values, g->output[k]->name, t))
        return fe_fail(c, SYMC_ERR_FORMAT, "output %zu of the %s is not produced by it or an outer value", k, label);
    return SYMC_OK;
}

/* ONNX output k as an identity of t, carrying t's build-time values on. */
static symc_status emit_named(fe_ctx *c, uint32_t t, uint32_t k) {
    uint32_t out;
    if (!fe_has_out(c, k)) return SYMC_OK;
    symc_status st = fe_emit1(c, IR_OP_IDENTITY, &t, 1, NULL, 0, (int)k, &out);
    if (!st && T(c, t)->value) st = set_values(c, out, T(c, t)->value, T(c, t)->n_value);
    return st;
}

static symc_status bind_name(fe_ctx *c, const char *name, uint32_t t) {
    if (!name || !*name) return SYMC_OK;
    return fe_map_put(&c->values, name, t) ? SYMC_OK : fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
}

/* If whose condition is known at build time (a constant, or a value folded
 * from shapes, as in ONNX's function-expanded AffineGrid): the chosen
 * branch's nodes are imported in place and the If's outputs are the
 * branch's outputs. A condition known only at run time is refused: symc
 * compiles one graph. */
static symc_status h_if(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t cond;
    if (!st) st = fe_in(c, 0, &cond);
    if (st) return st;
    const ir_tensor *ct = T(c, cond);
    int64_t v;
    double d = 0;
    if (ct->value && ct->n_value == 1 && sym_is_const(c->t, ct->value[0], &v)) d = (double)v;
    else if ((st = fe_const_scalar(c, cond, 0, "the condition", &d))) return st;
    const char *which = d != 0 ? "then_branch" : "else_branch";
    const Onnx__AttributeProto *ba = fe_attr_of(c, which, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (!ba || !ba->g) return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' (a graph) is missing", which);
    const Onnx__GraphProto *g = ba->g;
    if (g->n_output != c->node->n_output)
        return fe_fail(c, SYMC_ERR_FORMAT, "the %s has %zu outputs, the node %zu", which, g->n_output,
                       c->node->n_output);
    if ((st = import_body(c, g, which))) return st;
    for (size_t k = 0; k < g->n_output && !st; k++) {
        uint32_t t;
        if (!(st = body_output(c, g, k, which, &t))) st = emit_named(c, t, (uint32_t)k);
    }
    return st;
}

#define MAX_UNROLL 4096 /* iterations of Loop and Scan unrolled at import, at most */

/* Stacks per-iteration tensors along a new axis `axis` into ONNX output k. */
static symc_status stack_into(fe_ctx *c, const uint32_t *parts, uint32_t n, int64_t axis, int reverse, uint32_t k) {
    uint32_t *u = malloc((n ? n : 1) * sizeof *u), out;
    if (!u) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    ir_attr un = symc_attr_ints("axes", &axis, 1), cat = symc_attr_int("axis", axis);
    symc_status st = SYMC_OK;
    for (uint32_t i = 0; i < n && !st; i++)
        st = fe_emit1(c, IR_OP_UNSQUEEZE, &parts[reverse ? n - 1 - i : i], 1, &un, 1, -1, &u[i]);
    if (!st) st = fe_emit1(c, IR_OP_CONCAT, u, n, &cat, 1, (int)k, &out);
    free(u);
    return st;
}

/* Loop with a trip count known at build time, unrolled: the body imported
 * once per iteration with the iteration number a constant, the loop-carried
 * values threaded through, and the scan outputs stacked along a new axis 0.
 * The body's condition must be decided at build time each iteration (a
 * false one ends the loop); a loop of zero iterations with scan outputs,
 * whose shapes only the body knows, is refused. */
static symc_status h_loop(fe_ctx *c) {
    uint32_t n_in = (uint32_t)c->node->n_input, t;
    if (n_in < 2) return fe_fail(c, SYMC_ERR_FORMAT, "has %u inputs, needs at least 2 (M, cond)", n_in);
    const Onnx__AttributeProto *ba = fe_attr_of(c, "body", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (!ba || !ba->g) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'body' (a graph) is missing");
    const Onnx__GraphProto *g = ba->g;
    uint32_t n_carried = n_in - 2, n_out = (uint32_t)c->node->n_output;
    if (g->n_input != n_carried + 2 || g->n_output < n_carried + 1 || n_out != g->n_output - 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "the body has %zu inputs and %zu outputs for %u loop-carried values",
                       g->n_input, g->n_output, n_carried);
    for (size_t k = 0; k < g->n_input; k++)
        if (!g->input[k] || !g->input[k]->name) return fe_fail(c, SYMC_ERR_FORMAT, "body input %zu has no name", k);
    symc_status st;
    sym_expr me;
    int64_t trip = -1;
    if (!fe_has_in(c, 0))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Loop without a trip count (input 0) is not supported");
    if ((st = scalar_value(c, 0, "the trip count", &me))) return st;
    if (!sym_is_const(c->t, me, &trip))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the trip count %s must be a constant", fe_txt(c, me));
    if (trip < 0 || trip > MAX_UNROLL)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "trip count %" PRId64 " is outside [0, %d] (the loop is unrolled)",
                       trip, MAX_UNROLL);
    if (fe_has_in(c, 1)) {
        double cd;
        uint32_t ct;
        if ((st = fe_in(c, 1, &ct))) return st;
        const ir_tensor *cx = T(c, ct);
        int64_t v;
        if (cx->value && cx->n_value == 1 && sym_is_const(c->t, cx->value[0], &v)) cd = (double)v;
        else if ((st = fe_const_scalar(c, ct, 1, "the condition", &cd))) return st;
        if (cd == 0) trip = 0;
    }
    uint32_t n_scan = n_out - n_carried;
    if (trip == 0 && n_scan)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Loop of zero iterations with scan outputs is not supported");
    uint32_t *state = malloc((n_carried + 1) * sizeof *state);
    uint32_t *scans = malloc(((size_t)n_scan * (size_t)(trip ? trip : 1) + 1) * sizeof *scans);
    if (!state || !scans) {
        free(state), free(scans);
        return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    }
    st = SYMC_OK;
    for (uint32_t k = 0; k < n_carried && !st; k++) st = fe_in(c, 2 + k, &state[k]);
    uint8_t yes = 1;
    uint32_t cond_t = 0;
    if (!st) st = fe_const(c, SYMC_BOOL, 0, NULL, &yes, -1, &cond_t);
    sym_expr one = sym_const(c->t, 1);
    if (!st) st = set_values(c, cond_t, &one, 1); /* a body passing it on (Identity) keeps it known */
    int64_t it = 0;
    for (; it < trip && !st; it++) {
        uint32_t iter;
        if ((st = fe_const(c, SYMC_I64, 0, NULL, &it, -1, &iter)) || (st = bind_name(c, g->input[0]->name, iter)) ||
            (st = bind_name(c, g->input[1]->name, cond_t)))
            break;
        for (uint32_t k = 0; k < n_carried && !st; k++) st = bind_name(c, g->input[2 + k]->name, state[k]);
        if (st || (st = import_body(c, g, "Loop body"))) break;
        for (uint32_t k = 0; k < n_carried && !st; k++) st = body_output(c, g, 1 + k, "Loop body", &state[k]);
        for (uint32_t k = 0; k < n_scan && !st; k++)
            st = body_output(c, g, 1 + n_carried + k, "Loop body", &scans[(size_t)k * (size_t)trip + (size_t)it]);
        if (st || (st = body_output(c, g, 0, "Loop body", &t))) break;
        const ir_tensor *cx = T(c, t);
        int64_t v;
        if (!(cx->value && cx->n_value == 1 && sym_is_const(c->t, cx->value[0], &v))) {
            double cd;
            if (cx->constant == IR_NONE || fe_const_scalar(c, t, 0, "the body's condition", &cd)) {
                st = fe_fail(c, SYMC_ERR_UNSUPPORTED,
                             "the Loop body's condition '%s' is not known at build time in iteration %" PRId64
                             " (the loop is unrolled)",
                             g->output[0]->name, it);
                break;
            }
            v = cd != 0;
        }
        if (!v && it + 1 < trip) {
            if (n_scan) {
                st = fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Loop ending early with scan outputs is not supported");
                break;
            }
            it++;
            break;
        }
    }
    for (uint32_t k = 0; k < n_carried && !st; k++) st = emit_named(c, state[k], k);
    for (uint32_t k = 0; k < n_scan && !st; k++)
        st = stack_into(c, &scans[(size_t)k * (size_t)trip], (uint32_t)trip, 0, 0, n_carried + k);
    free(state), free(scans);
    return st;
}

/* Scan (opset 9+), unrolled over the scan axis, whose length must be a
 * constant: step t slices every scan input at t (or length - 1 - t when
 * reversed) and drops the axis, imports the body with the states and the
 * slices bound, threads the states on, and stacks the scan outputs along
 * their axes. */
static symc_status h_scan(fe_ctx *c) {
    const Onnx__AttributeProto *ba = fe_attr_of(c, "body", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (!ba || !ba->g) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'body' (a graph) is missing");
    const Onnx__GraphProto *g = ba->g;
    int64_t n_scan_in = fe_attr_i(c, "num_scan_inputs", -1);
    uint32_t n_in = (uint32_t)c->node->n_input, n_out = (uint32_t)c->node->n_output;
    if (n_scan_in < 1 || n_scan_in > n_in)
        return fe_fail(c, SYMC_ERR_FORMAT, "num_scan_inputs = %" PRId64 " for %u inputs", n_scan_in, n_in);
    uint32_t n_state = n_in - (uint32_t)n_scan_in, n_scan_out = n_out - n_state;
    if (n_out < n_state || g->n_input != n_in || g->n_output != n_out)
        return fe_fail(c, SYMC_ERR_FORMAT, "the body has %zu inputs and %zu outputs; the node %u and %u", g->n_input,
                       g->n_output, n_in, n_out);
    for (size_t k = 0; k < g->n_input; k++)
        if (!g->input[k] || !g->input[k]->name) return fe_fail(c, SYMC_ERR_FORMAT, "body input %zu has no name", k);
    const int64_t *ia = NULL, *id = NULL, *oa = NULL, *od = NULL;
    uint32_t nia = 0, nid = 0, noa = 0, nod = 0;
    fe_attr_ints(c, "scan_input_axes", &ia, &nia);
    fe_attr_ints(c, "scan_input_directions", &id, &nid);
    fe_attr_ints(c, "scan_output_axes", &oa, &noa);
    fe_attr_ints(c, "scan_output_directions", &od, &nod);
    if ((nia && nia != n_scan_in) || (nid && nid != n_scan_in) || (noa && noa != n_scan_out) ||
        (nod && nod != n_scan_out))
        return fe_fail(c, SYMC_ERR_FORMAT, "the scan axes and directions do not match the scan inputs and outputs");
    symc_status st = SYMC_OK;
    uint32_t xs[64], state[64];
    int32_t axes[64];
    int64_t len = -1;
    if (n_in > 64 || n_out > 64) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "more than 64 inputs or outputs");
    for (uint32_t k = 0; k < n_state && !st; k++) st = fe_in(c, k, &state[k]);
    for (uint32_t j = 0; j < (uint32_t)n_scan_in && !st; j++) {
        if ((st = fe_in(c, n_state + j, &xs[j]))) break;
        int32_t r = T(c, xs[j])->rank;
        if ((st = norm_axis_of(c, nia ? ia[j] : 0, r, &axes[j]))) break;
        int64_t l;
        if (!sym_is_const(c->t, T(c, xs[j])->dims[axes[j]], &l))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the scan length %s of input '%s' must be a constant (the scan is unrolled)",
                           fe_txt(c, T(c, xs[j])->dims[axes[j]]), T(c, xs[j])->name);
        if (len >= 0 && l != len)
            return fe_fail(c, SYMC_ERR_FORMAT, "scan inputs have lengths %" PRId64 " and %" PRId64, len, l);
        len = l;
    }
    if (st) return st;
    if (len > MAX_UNROLL)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scan length %" PRId64 " exceeds %d (the scan is unrolled)", len,
                       MAX_UNROLL);
    if (len == 0 && n_scan_out)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a Scan of length 0 with scan outputs is not supported");
    uint32_t *outs = malloc(((size_t)n_scan_out * (size_t)(len ? len : 1) + 1) * sizeof *outs);
    if (!outs) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t t = 0; t < len && !st; t++) {
        for (uint32_t k = 0; k < n_state && !st; k++) st = bind_name(c, g->input[k]->name, state[k]);
        for (uint32_t j = 0; j < (uint32_t)n_scan_in && !st; j++) {
            int64_t at = nid && id[j] ? len - 1 - t : t, ax = axes[j];
            sym_expr s0 = sym_const(c->t, at), e0 = sym_const(c->t, at + 1);
            ir_attr sl[3] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &e0, 1),
                             symc_attr_ints("axes", &ax, 1)};
            ir_attr sq = symc_attr_ints("axes", &ax, 1);
            uint32_t piece;
            if ((st = fe_emit1(c, IR_OP_SLICE, &xs[j], 1, sl, 3, -1, &piece)) ||
                (st = fe_emit1(c, IR_OP_SQUEEZE, &piece, 1, &sq, 1, -1, &piece)))
                break;
            st = bind_name(c, g->input[n_state + j]->name, piece);
        }
        if (st || (st = import_body(c, g, "Scan body"))) break;
        for (uint32_t k = 0; k < n_state && !st; k++) st = body_output(c, g, k, "Scan body", &state[k]);
        for (uint32_t k = 0; k < n_scan_out && !st; k++)
            st = body_output(c, g, n_state + k, "Scan body", &outs[(size_t)k * (size_t)len + (size_t)t]);
    }
    for (uint32_t k = 0; k < n_state && !st; k++) st = emit_named(c, state[k], k);
    for (uint32_t k = 0; k < n_scan_out && !st; k++) {
        int32_t r = T(c, outs[(size_t)k * (size_t)len])->rank + 1, ax = 0;
        if ((st = norm_axis_of(c, noa ? oa[k] : 0, r, &ax))) break;
        st = stack_into(c, &outs[(size_t)k * (size_t)len], (uint32_t)len, ax, nod && od[k], n_state + k);
    }
    free(outs);
    return st;
}

/* ---- optionals ------------------------------------------------------------------------------------- */

/* symc's values are tensors, never optional or sequence types, so an
 * optional reaching these ops is a tensor when its input is named and
 * "none" when it is absent: OptionalHasElement is a constant, and
 * OptionalGetElement of a tensor is the tensor. */
static symc_status h_optional_has_element(fe_ctx *c) {
    symc_status st = need_inputs(c, 0, 1);
    uint32_t x, out;
    if (!st && fe_has_in(c, 0)) st = fe_in(c, 0, &x);
    uint8_t has = fe_has_in(c, 0);
    return st ? st : fe_const(c, SYMC_BOOL, 0, NULL, &has, 0, &out);
}

static symc_status h_optional_get_element(fe_ctx *c) {
    symc_status st = need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    return st ? st : fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, 0, &out);
}

/* ---- table ------------------------------------------------------------------------------------------------ */

typedef struct op_entry {
    const char *name;
    symc_status (*fn)(fe_ctx *c);
} op_entry;

static const op_entry ops[] = {
    {"Abs", h_abs},
    {"Acos", h_acos},
    {"Acosh", h_acosh},
    {"Add", h_add},
    {"AffineGrid", h_affine_grid},
    {"And", h_and},
    {"ArgMax", h_argmax},
    {"ArgMin", h_argmin},
    {"Asin", h_asin},
    {"Asinh", h_asinh},
    {"Atan", h_atan},
    {"Atanh", h_atanh},
    {"AveragePool", h_avg_pool},
    {"BatchNormalization", h_batch_norm},
    {"BitShift", h_bit_shift},
    {"BlackmanWindow", h_blackman_window},
    {"BitwiseAnd", h_bitwise_and},
    {"BitwiseNot", h_bitwise_not},
    {"BitwiseOr", h_bitwise_or},
    {"BitwiseXor", h_bitwise_xor},
    {"Cast", h_cast},
    {"CastLike", h_cast_like},
    {"Ceil", h_ceil},
    {"Celu", h_celu},
    {"CenterCropPad", h_center_crop_pad},
    {"Clip", h_clip},
    {"Concat", h_concat},
    {"Constant", h_constant},
    {"ConstantOfShape", h_constant_of_shape},
    {"Conv", h_conv},
    {"ConvInteger", h_conv_integer},
    {"ConvTranspose", h_conv_transpose},
    {"Col2Im", h_col2im},
    {"Cos", h_cos},
    {"Cosh", h_cosh},
    {"CumSum", h_cumsum},
    {"DepthToSpace", h_depth_to_space},
    {"DequantizeLinear", h_dequantize_linear},
    {"Div", h_div},
    {"Dropout", h_dropout},
    {"DynamicQuantizeLinear", h_dynamic_quantize_linear},
    {"Einsum", h_einsum},
    {"Elu", h_elu},
    {"Equal", h_equal},
    {"Erf", h_erf},
    {"Exp", h_exp},
    {"Expand", h_expand},
    {"EyeLike", h_eye_like},
    {"Flatten", h_flatten},
    {"Floor", h_floor},
    {"DFT", h_dft},
    {"Det", h_det},
    {"Gather", h_gather},
    {"GatherElements", h_gather_elements},
    {"GatherND", h_gather_nd},
    {"Gelu", h_gelu},
    {"Gemm", h_gemm},
    {"GlobalAveragePool", h_global_avg_pool},
    {"Greater", h_greater},
    {"GreaterOrEqual", h_greater_equal},
    {"HammingWindow", h_hamming_window},
    {"HannWindow", h_hann_window},
    {"GridSample", h_grid_sample},
    {"GRU", h_gru},
    {"Hardmax", h_hardmax},
    {"GroupNormalization", h_group_norm},
    {"HardSigmoid", h_hard_sigmoid},
    {"HardSwish", h_hard_swish},
    {"Identity", h_identity},
    {"If", h_if},
    {"InstanceNormalization", h_instance_norm},
    {"IsInf", h_is_inf},
    {"IsNaN", h_is_nan},
    {"Loop", h_loop},
    {"LRN", h_lrn},
    {"LpPool", h_lp_pool},
    {"LSTM", h_lstm},
    {"LayerNormalization", h_layer_norm},
    {"LeakyRelu", h_leaky_relu},
    {"Less", h_less},
    {"LessOrEqual", h_less_equal},
    {"Log", h_log},
    {"LogSoftmax", h_log_softmax},
    {"LpNormalization", h_lp_normalization},
    {"MatMul", h_matmul},
    {"MatMulInteger", h_matmul_integer},
    {"Max", h_max},
    {"MaxPool", h_max_pool},
    {"MaxUnpool", h_max_unpool},
    {"Mean", h_mean},
    {"MeanVarianceNormalization", h_mvn},
    {"MelWeightMatrix", h_mel_weight_matrix},
    {"Min", h_min},
    {"Mish", h_mish},
    {"Mod", h_mod},
    {"Mul", h_mul},
    {"Neg", h_neg},
    {"NegativeLogLikelihoodLoss", h_nll_loss},
    {"Not", h_not},
    {"OneHot", h_one_hot},
    {"OptionalGetElement", h_optional_get_element},
    {"OptionalHasElement", h_optional_has_element},
    {"Or", h_or},
    {"Pad", h_pad},
    {"Pow", h_pow},
    {"PRelu", h_prelu},
    {"QLinearConv", h_qlinear_conv},
    {"QLinearMatMul", h_qlinear_matmul},
    {"QuantizeLinear", h_quantize_linear},
    {"Range", h_range},
    {"Reciprocal", h_reciprocal},
    {"ReduceL1", h_reduce_l1},
    {"ReduceL2", h_reduce_l2},
    {"ReduceLogSum", h_reduce_log_sum},
    {"ReduceLogSumExp", h_reduce_log_sum_exp},
    {"ReduceMax", h_reduce_max},
    {"ReduceMean", h_reduce_mean},
    {"ReduceMin", h_reduce_min},
    {"ReduceProd", h_reduce_prod},
    {"ReduceSum", h_reduce_sum},
    {"ReduceSumSquare", h_reduce_sum_square},
    {"Relu", h_relu},
    {"Reshape", h_reshape},
    {"ReverseSequence", h_reverse_sequence},
    {"RNN", h_rnn},
    {"RoiAlign", h_roi_align},
    {"Round", h_round},
    {"Scan", h_scan},
    {"ScatterElements", h_scatter_elements},
    {"ScatterND", h_scatter_nd},
    {"Selu", h_selu},
    {"Resize", h_resize},
    {"Shape", h_shape},
    {"Shrink", h_shrink},
    {"Sigmoid", h_sigmoid},
    {"Sign", h_sign},
    {"Sin", h_sin},
    {"Sinh", h_sinh},
    {"Size", h_size},
    {"Slice", h_slice},
    {"Softmax", h_softmax},
    {"SoftmaxCrossEntropyLoss", h_softmax_cross_entropy_loss},
    {"Softplus", h_softplus},
    {"Softsign", h_softsign},
    {"SpaceToDepth", h_space_to_depth},
    {"Split", h_split},
    {"STFT", h_stft},
    {"Sqrt", h_sqrt},
    {"Squeeze", h_squeeze},
    {"Sub", h_sub},
    {"Sum", h_sum},
    {"Tan", h_tan},
    {"Tanh", h_tanh},
    {"ThresholdedRelu", h_thresholded_relu},
    {"Tile", h_tile},
    {"TopK", h_topk},
    {"Transpose", h_transpose},
    {"Trilu", h_trilu},
    {"Unsqueeze", h_unsqueeze},
    {"Where", h_where},
    {"Xor", h_xor},
};

/* Ops refused by design, with the reason: a random draw no compiled engine
 * can reproduce, or an output whose size depends on the input's values
 * (symc compiles every size from the input shapes alone). */
typedef struct refused_op {
    const char *name, *why;
} refused_op;

#define RANDOM_OP "it draws random numbers, which a compiled engine cannot reproduce"
#define DATA_SIZED "the size of its output depends on the input's values, not only its shape"
static const refused_op refused[] = {
    {"Bernoulli", RANDOM_OP},
    {"Compress", DATA_SIZED},
    {"ImageDecoder", "it decodes compressed image bytes, whose decoded size depends on the data"},
    {"Multinomial", RANDOM_OP},
    {"NonMaxSuppression", DATA_SIZED},
    {"NonZero", DATA_SIZED},
    {"RandomNormal", RANDOM_OP},
    {"RandomNormalLike", RANDOM_OP},
    {"RandomUniform", RANDOM_OP},
    {"RandomUniformLike", RANDOM_OP},
    {"TfIdfVectorizer", "it counts n-grams of its input into a table of strings and pools"},
    {"Unique", DATA_SIZED},
};

/* An attribute read as a type it does not have fails the node with that message, whatever the
 * handler made of the default it got (the node's IR is discarded with the import). A body's
 * nodes translate inside their parent's handler: the parent's record is kept across them. */
static symc_status translate_checked(fe_ctx *c, symc_status (*fn)(fe_ctx *)) {
    symc_status outer = c->attr_st;
    char outer_msg[sizeof c->attr_msg];
    memcpy(outer_msg, c->attr_msg, sizeof outer_msg);
    c->attr_st = SYMC_OK;
    symc_status st = fn(c);
    if (c->attr_st) st = fe_fail(c, c->attr_st, "%s", c->attr_msg);
    c->attr_st = outer;
    memcpy(c->attr_msg, outer_msg, sizeof outer_msg);
    return st;
}

symc_status fe_translate_node(fe_ctx *c) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, c->node->op_type)) return translate_checked(c, ops[i].fn);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (!strcmp(refused[i].name, c->node->op_type))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "ONNX op '%s' is not supported by symc's importer: %s",
                           c->node->op_type, refused[i].why);
    return fe_fail(c, SYMC_ERR_UNSUPPORTED, "ONNX op '%s' is not supported by symc's importer", c->node->op_type);
}
