/* ONNX elementwise ops and the other one-to-one maps: the PLAIN handlers (one core op each:
 * the unary math, the binary arithmetic, comparisons and logic, MatMul, GlobalAveragePool),
 * variadic Sum / Max / Min / Mean, and the ops with attributes (Clip, LeakyRelu, Elu, Celu, Selu,
 * HardSigmoid, Shrink, Gelu, Cast, CastLike, BitShift, Mod, IsInf, ...). An op whose result is a
 * build-time value folds it (fe_fold), so shape sub-graphs stay symbolic. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

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
        if (x->constant == IR_NONE || x->dtype != dt || fe_small_numel(c, in[k]) != 1) return SYMC_OK;
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
    symc_status st = fe_need_inputs(c, arity, arity);
    uint32_t in[3], out;
    int done = 0;
    for (uint32_t k = 0; k < arity && !st; k++) st = fe_in(c, k, &in[k]);
    if (!st) st = fold_float_const(c, op, in, arity, &done);
    if (st || done) return st;
    if (!st) st = fe_emit1(c, op, in, arity, NULL, 0, 0, &out);
    if (!st) st = fe_fold(c, c->node->op_type, in, arity, out);
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
    symc_status st = fe_need_inputs(c, 2, 2);
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
    symc_status st = fe_need_inputs(c, 1, 1);
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
    symc_status st = fe_need_inputs(c, 2, 2);
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

static symc_status h_leaky_relu(fe_ctx *c) {
    ir_attr a = symc_attr_float("alpha", fe_attr_f(c, "alpha", 0.01));
    return fe_emit_unary_attrs(c, IR_OP_LEAKY_RELU, &a, 1);
}

static symc_status h_elu(fe_ctx *c) {
    ir_attr a = symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.0));
    return fe_emit_unary_attrs(c, IR_OP_ELU, &a, 1);
}

static symc_status h_celu(fe_ctx *c) {
    double alpha = fe_attr_f(c, "alpha", 1.0);
    if (alpha == 0) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'alpha' is 0 (Celu divides by it)");
    ir_attr a = symc_attr_float("alpha", alpha);
    return fe_emit_unary_attrs(c, IR_OP_CELU, &a, 1);
}

static symc_status h_selu(fe_ctx *c) {
    ir_attr a[2] = {symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.67326319217681884765625)),
                    symc_attr_float("gamma", fe_attr_f(c, "gamma", 1.05070102214813232421875))};
    return fe_emit_unary_attrs(c, IR_OP_SELU, a, 2);
}

static symc_status h_thresholded_relu(fe_ctx *c) {
    ir_attr a = symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.0));
    return fe_emit_unary_attrs(c, IR_OP_THRESHOLDED_RELU, &a, 1);
}

static symc_status h_shrink(fe_ctx *c) {
    ir_attr a[2] = {symc_attr_float("bias", fe_attr_f(c, "bias", 0.0)),
                    symc_attr_float("lambd", fe_attr_f(c, "lambd", 0.5))};
    return fe_emit_unary_attrs(c, IR_OP_SHRINK, a, 2);
}

static symc_status h_bit_shift(fe_ctx *c) {
    const char *dir = fe_attr_s(c, "direction", "");
    if (strcmp(dir, "LEFT") && strcmp(dir, "RIGHT"))
        return fe_fail(c, SYMC_ERR_FORMAT, "direction = '%s' (expected LEFT or RIGHT)", dir);
    uint32_t in[2], out;
    symc_status st = fe_need_inputs(c, 2, 2);
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
    return fe_emit_unary_attrs(c, IR_OP_IS_INF, a, 2);
}

static symc_status h_hard_sigmoid(fe_ctx *c) {
    ir_attr a[2] = {symc_attr_float("alpha", fe_attr_f(c, "alpha", 0.2)),
                    symc_attr_float("beta", fe_attr_f(c, "beta", 0.5))};
    return fe_emit_unary_attrs(c, IR_OP_HARD_SIGMOID, a, 2);
}

static symc_status h_gelu(fe_ctx *c) {
    const char *ap = fe_attr_s(c, "approximate", "none");
    if (strcmp(ap, "none") && strcmp(ap, "tanh"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "approximate = '%s' (expected none or tanh)", ap);
    ir_attr a = symc_attr_str("approximate", ap);
    return fe_emit_unary_attrs(c, IR_OP_GELU, &a, 1);
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
    if (fe_small_numel(c, x) != 1) return SYMC_OK;
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
    symc_status st = fe_need_inputs(c, 1, 1);
    int done = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = cast_const(c, x, dt, &done);
    if (st || done) return st;
    if (!st) st = fe_emit1(c, IR_OP_CAST, &x, 1, &a, 1, 0, &out);
    if (!st && (T(c, x)->dtype == SYMC_BOOL || dt == SYMC_BOOL)) st = fe_fold(c, "Cast", &x, 1, out);
    return st;
}

/* CastLike: a cast to the dtype of input 1 */
static symc_status h_cast_like(fe_ctx *c) {
    uint32_t x, like, out;
    symc_status st = fe_need_inputs(c, 2, 2);
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &like);
    if (st) return st;
    symc_dtype dt = T(c, like)->dtype;
    ir_attr a = symc_attr_dtype("to", dt);
    int done = 0;
    if ((st = cast_const(c, x, dt, &done)) || done) return st;
    if ((st = fe_emit1(c, IR_OP_CAST, &x, 1, &a, 1, 0, &out))) return st;
    if (T(c, x)->dtype == SYMC_BOOL || dt == SYMC_BOOL) st = fe_fold(c, "Cast", &x, 1, out);
    return st;
}

static symc_status h_mod(fe_ctx *c) {
    uint32_t in[2], out;
    symc_status st = fe_need_inputs(c, 2, 2);
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
    symc_status st = fe_need_inputs(c, 1, 3);
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
            if (fe_small_numel(c, b) != 1)
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

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_elementwise[] = {
    {"Abs", h_abs},
    {"Acos", h_acos},
    {"Acosh", h_acosh},
    {"Add", h_add},
    {"And", h_and},
    {"Asin", h_asin},
    {"Asinh", h_asinh},
    {"Atan", h_atan},
    {"Atanh", h_atanh},
    {"BitShift", h_bit_shift},
    {"BitwiseAnd", h_bitwise_and},
    {"BitwiseNot", h_bitwise_not},
    {"BitwiseOr", h_bitwise_or},
    {"BitwiseXor", h_bitwise_xor},
    {"Cast", h_cast},
    {"CastLike", h_cast_like},
    {"Ceil", h_ceil},
    {"Celu", h_celu},
    {"Clip", h_clip},
    {"Cos", h_cos},
    {"Cosh", h_cosh},
    {"Div", h_div},
    {"Elu", h_elu},
    {"Equal", h_equal},
    {"Erf", h_erf},
    {"Exp", h_exp},
    {"Floor", h_floor},
    {"Gelu", h_gelu},
    {"GlobalAveragePool", h_global_avg_pool},
    {"Greater", h_greater},
    {"GreaterOrEqual", h_greater_equal},
    {"HardSigmoid", h_hard_sigmoid},
    {"HardSwish", h_hard_swish},
    {"Identity", h_identity},
    {"IsInf", h_is_inf},
    {"IsNaN", h_is_nan},
    {"LeakyRelu", h_leaky_relu},
    {"Less", h_less},
    {"LessOrEqual", h_less_equal},
    {"Log", h_log},
    {"MatMul", h_matmul},
    {"Max", h_max},
    {"Mean", h_mean},
    {"Min", h_min},
    {"Mish", h_mish},
    {"Mod", h_mod},
    {"Mul", h_mul},
    {"Neg", h_neg},
    {"Not", h_not},
    {"Or", h_or},
    {"PRelu", h_prelu},
    {"Pow", h_pow},
    {"Reciprocal", h_reciprocal},
    {"Relu", h_relu},
    {"Round", h_round},
    {"Selu", h_selu},
    {"Shrink", h_shrink},
    {"Sigmoid", h_sigmoid},
    {"Sign", h_sign},
    {"Sin", h_sin},
    {"Sinh", h_sinh},
    {"Softplus", h_softplus},
    {"Softsign", h_softsign},
    {"Sqrt", h_sqrt},
    {"Sub", h_sub},
    {"Sum", h_sum},
    {"Tan", h_tan},
    {"Tanh", h_tanh},
    {"ThresholdedRelu", h_thresholded_relu},
    {"Where", h_where},
    {"Xor", h_xor},
};
const uint32_t fe_onnx_n_ops_elementwise = sizeof fe_onnx_ops_elementwise / sizeof fe_onnx_ops_elementwise[0];
