/* Elementwise reference kernels: unary math, cast, not, the broadcasting
 * binary ops (arithmetic, comparisons, logic) and where.
 *
 * Each element is computed in one of two domains chosen by the input dtype:
 * floats in f64 (f16/bf16/f32 widen exactly, so +, -, *, / and sqrt followed
 * by the single rounding store give exactly the IEEE result of the narrow
 * type, and transcendental functions are as accurate as libm's f64), integers
 * in int64 with two's-complement wrap-around done through uint64 (C's signed
 * overflow is undefined; narrower results wrap when stored), u64 in uint64
 * where its sign matters (order, division, modulo). Integer division and
 * modulo by zero are reported, naming the element, instead of trapping.
 * Broadcasting follows NumPy: shapes align on the right, size-1 dims stretch
 * (stride 0). Each output element finds its inputs from its coordinate, the
 * obvious formulation, which is what an oracle wants. */
#include <math.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

/* ---- unary ------------------------------------------------------------------------ */
typedef struct unary_params {
    double alpha, beta, lo, hi; /* beta: selu's gamma, shrink's bias; alpha: shrink's lambd */
    int has_lo, has_hi, tanh_gelu;
} unary_params;

static double sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

/* log(1 + e^x) without overflow for large x */
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

static double round_half_even(double x) {
    double r = round(x); /* halves away from zero */
    if (fabs(x - trunc(x)) == 0.5) r = 2.0 * round(x / 2.0);
    return r;
}

static double unary_f(ir_op op, double x, const unary_params *p) {
    switch (op) {
    case IR_OP_NEG: return -x;
    case IR_OP_ABS: return fabs(x);
    case IR_OP_SIGN: return isnan(x) ? x : (x > 0) - (x < 0);
    case IR_OP_EXP: return exp(x);
    case IR_OP_LOG: return log(x);
    case IR_OP_SQRT: return sqrt(x);
    case IR_OP_RSQRT: return 1.0 / sqrt(x);
    case IR_OP_RECIPROCAL: return 1.0 / x;
    case IR_OP_FLOOR: return floor(x);
    case IR_OP_CEIL: return ceil(x);
    case IR_OP_ERF: return erf(x);
    case IR_OP_TANH: return tanh(x);
    case IR_OP_SIN: return sin(x);
    case IR_OP_COS: return cos(x);
    case IR_OP_TAN: return tan(x);
    case IR_OP_SIGMOID: return sigmoid(x);
    case IR_OP_RELU: return x < 0 ? 0.0 : x; /* NaN stays NaN, as in PyTorch */
    case IR_OP_LEAKY_RELU: return x < 0 ? p->alpha * x : x;
    case IR_OP_GELU:
        if (p->tanh_gelu) {
            const double k = 0.79788456080286535588; /* sqrt(2/pi); M_PI is not C11 */
            return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
        }
        return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case IR_OP_SILU: return x * sigmoid(x);
    case IR_OP_HARD_SIGMOID: return fmax(0.0, fmin(1.0, p->alpha * x + p->beta));
    case IR_OP_HARD_SWISH: return x * fmax(0.0, fmin(1.0, x / 6.0 + 0.5)); /* ONNX: alpha 1/6, beta 0.5 */
    case IR_OP_ROUND: return round_half_even(x);
    case IR_OP_ASIN: return asin(x);
    case IR_OP_ACOS: return acos(x);
    case IR_OP_ATAN: return atan(x);
    case IR_OP_SINH: return sinh(x);
    case IR_OP_COSH: return cosh(x);
    case IR_OP_ASINH: return asinh(x);
    case IR_OP_ACOSH: return acosh(x);
    case IR_OP_ATANH: return atanh(x);
    case IR_OP_ELU: return x < 0 ? p->alpha * expm1(x) : x;
    case IR_OP_SELU: return p->beta * (x <= 0 ? p->alpha * expm1(x) : x);
    case IR_OP_CELU: return isnan(x) ? x : fmax(0.0, x) + fmin(0.0, p->alpha * expm1(x / p->alpha));
    case IR_OP_SOFTPLUS: return softplus(x);
    case IR_OP_SOFTSIGN: return x / (1.0 + fabs(x));
    case IR_OP_THRESHOLDED_RELU: return x > p->alpha ? x : 0.0; /* NaN: 0, as ONNX's and PyTorch's */
    case IR_OP_MISH: return x * tanh(softplus(x));
    case IR_OP_EXPM1: return expm1(x);
    case IR_OP_LOG1P: return log1p(x);
    case IR_OP_SHRINK: return x < -p->alpha ? x + p->beta : x > p->alpha ? x - p->beta : 0.0; /* NaN: 0, as ONNX's */
    case IR_OP_CLIP:
        if (isnan(x)) return x;
        if (p->has_lo && x < p->lo) x = p->lo;
        if (p->has_hi && x > p->hi) x = p->hi;
        return x;
    default: return x; /* identity */
    }
}

static int64_t unary_i(ir_op op, int64_t x, int64_t lo, int64_t hi) {
    switch (op) {
    case IR_OP_NEG: return (int64_t)(0u - (uint64_t)x); /* INT_MIN wraps to itself */
    case IR_OP_ABS: return x < 0 ? (int64_t)(0u - (uint64_t)x) : x;
    case IR_OP_SIGN: return (x > 0) - (x < 0);
    case IR_OP_RELU: return x < 0 ? 0 : x;
    case IR_OP_CLIP: return x < lo ? lo : x > hi ? hi : x;
    default: return x;
    }
}

symc_status rt_ref_k_unary(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    rt_ref_tensor *y = &c->out[0];
    symc_status s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims);
    if (s) return s;
    unary_params p;
    memset(&p, 0, sizeof p);
    switch (c->op) {
    case IR_OP_LEAKY_RELU:
        if ((s = rt_ref_attr_float(c, "alpha", 1, 0, &p.alpha))) return s;
        break;
    case IR_OP_HARD_SIGMOID:
        if ((s = rt_ref_attr_float(c, "alpha", 1, 0, &p.alpha))) return s;
        if ((s = rt_ref_attr_float(c, "beta", 1, 0, &p.beta))) return s;
        break;
    case IR_OP_ELU:
    case IR_OP_CELU:
    case IR_OP_THRESHOLDED_RELU:
        if ((s = rt_ref_attr_float(c, "alpha", 1, 0, &p.alpha))) return s;
        if (c->op == IR_OP_CELU && p.alpha == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'alpha' is 0");
        break;
    case IR_OP_SELU:
        if ((s = rt_ref_attr_float(c, "alpha", 1, 0, &p.alpha))) return s;
        if ((s = rt_ref_attr_float(c, "gamma", 1, 0, &p.beta))) return s;
        break;
    case IR_OP_SHRINK:
        if ((s = rt_ref_attr_float(c, "lambd", 1, 0, &p.alpha))) return s;
        if ((s = rt_ref_attr_float(c, "bias", 1, 0, &p.beta))) return s;
        break;
    case IR_OP_GELU: {
        const char *mode;
        if ((s = rt_ref_attr_str(c, "approximate", 0, "none", &mode))) return s;
        if (!strcmp(mode, "tanh")) p.tanh_gelu = 1;
        else if (strcmp(mode, "none"))
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'approximate' = '%s' must be none or tanh", mode);
        break;
    }
    case IR_OP_CLIP:
        p.has_lo = rt_ref_attr_find(c, "min") != NULL;
        p.has_hi = rt_ref_attr_find(c, "max") != NULL;
        if ((s = rt_ref_attr_float(c, "min", 0, 0, &p.lo))) return s;
        if ((s = rt_ref_attr_float(c, "max", 0, 0, &p.hi))) return s;
        if (isnan(p.lo) || isnan(p.hi)) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "clip bounds must not be NaN");
        break;
    default: break;
    }
    int64_t n = rt_ref_numel_dims(x->rank, x->dims);
    if (c->op == IR_OP_IDENTITY) {
        for (int64_t i = 0; i < n; i++) rt_ref_copy_elem(y, i, x, i); /* bit for bit, NaN payloads too */
        return SYMC_OK;
    }
    if (rt_is_float(x->dtype)) {
        for (int64_t i = 0; i < n; i++) rt_st_f(y, i, unary_f(c->op, rt_ld_f(x, i), &p));
        return SYMC_OK;
    }
    if (rt_is_u64(x->dtype)) {
        /* unsigned: abs and relu are the identity, sign is 0 or 1, clip
         * bounds are the integers of [min, max] in [0, 2^64) */
        uint64_t lo = 0, hi = UINT64_MAX;
        if (p.has_lo) symc_dtype_store(&lo, SYMC_U64, 0, ceil(p.lo));
        if (p.has_hi) symc_dtype_store(&hi, SYMC_U64, 0, floor(p.hi));
        if (lo > hi) lo = hi; /* min > max: every value becomes max (ONNX, NumPy) */
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)rt_ld_i(x, i);
            if (c->op == IR_OP_NEG) v = 0u - v;
            else if (c->op == IR_OP_SIGN) v = v != 0;
            else if (c->op == IR_OP_CLIP) v = v < lo ? lo : v > hi ? hi : v;
            rt_st_u(y, i, v);
        }
        return SYMC_OK;
    }
    /* integers: clip bounds become the integers inside [min, max] */
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (p.has_lo) lo = rt_ref_f64_to_i64_sat(ceil(p.lo));
    if (p.has_hi) hi = rt_ref_f64_to_i64_sat(floor(p.hi));
    if (lo > hi) lo = hi; /* min > max: every value becomes max (ONNX, NumPy) */
    for (int64_t i = 0; i < n; i++) rt_st_i(y, i, unary_i(c->op, rt_ld_i(x, i), lo, hi));
    return SYMC_OK;
}

symc_status rt_ref_k_not(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    symc_status s = rt_ref_check_out(c, 0, SYMC_BOOL, x->rank, x->dims);
    if (s) return s;
    int64_t n = rt_ref_numel_dims(x->rank, x->dims);
    for (int64_t i = 0; i < n; i++) rt_st_i(&c->out[0], i, !rt_ld_i(x, i));
    return SYMC_OK;
}

/* is_nan, is_inf (detect_positive / detect_negative, default 1): float in, bool out */
symc_status rt_ref_k_is_nan_inf(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    symc_status s = rt_ref_check_out(c, 0, SYMC_BOOL, x->rank, x->dims);
    if (s) return s;
    int nan = c->op == IR_OP_IS_NAN;
    int64_t pos = 1, neg = 1;
    if (!nan &&
        ((s = rt_ref_attr_int(c, "detect_positive", 0, 1, &pos)) ||
         (s = rt_ref_attr_int(c, "detect_negative", 0, 1, &neg))))
        return s;
    int64_t n = rt_ref_numel_dims(x->rank, x->dims);
    for (int64_t i = 0; i < n; i++) {
        double v = rt_ld_f(x, i);
        rt_st_i(&c->out[0], i, nan ? isnan(v) : (isinf(v) && ((v > 0 && pos) || (v < 0 && neg))));
    }
    return SYMC_OK;
}

symc_status rt_ref_k_cast(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    symc_dtype to;
    symc_status s = rt_ref_attr_dtype(c, "to", &to);
    if (s) return s;
    if ((s = rt_ref_check_out(c, 0, to, x->rank, x->dims))) return s;
    int64_t n = rt_ref_numel_dims(x->rank, x->dims);
    for (int64_t i = 0; i < n; i++) {
        if (x->dtype == to) rt_ref_copy_elem(&c->out[0], i, x, i);
        else if (rt_is_float(x->dtype)) rt_st_f(&c->out[0], i, rt_ld_f(x, i));
        else if (rt_is_u64(x->dtype)) rt_st_u(&c->out[0], i, (uint64_t)rt_ld_i(x, i));
        else rt_st_i(&c->out[0], i, rt_ld_i(x, i)); /* exact, then one rounding */
    }
    return SYMC_OK;
}

/* ---- binary ---------------------------------------------------------------------- */
static int is_compare(ir_op op) {
    return op == IR_OP_EQUAL || op == IR_OP_LESS || op == IR_OP_LESS_EQUAL || op == IR_OP_GREATER ||
        op == IR_OP_GREATER_EQUAL;
}

static double binary_f(ir_op op, double a, double b, int python_mod) {
    switch (op) {
    case IR_OP_ADD: return a + b;
    case IR_OP_SUB: return a - b;
    case IR_OP_MUL: return a * b;
    case IR_OP_DIV: return a / b;
    case IR_OP_POW: return pow(a, b);
    case IR_OP_MOD: {
        double r = fmod(a, b); /* exact */
        /* Python/PyTorch remainder: the result takes the divisor's sign */
        if (python_mod && r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    case IR_OP_MIN: return (isnan(a) || isnan(b)) ? NAN : fmin(a, b); /* NaN propagates */
    case IR_OP_MAX: return (isnan(a) || isnan(b)) ? NAN : fmax(a, b);
    case IR_OP_EQUAL: return a == b;
    case IR_OP_LESS: return a < b;
    case IR_OP_LESS_EQUAL: return a <= b;
    case IR_OP_GREATER: return a > b;
    case IR_OP_GREATER_EQUAL: return a >= b;
    case IR_OP_PRELU: return a < 0 ? b * a : a;
    default: return NAN;
    }
}

static int64_t ipow(int64_t base, int64_t e) {
    uint64_t r = 1, b = (uint64_t)base; /* wraps like repeated int64 multiplication */
    while (e > 0) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

/* a op b on integers; b != 0 for div/mod is checked by the caller */
static int64_t binary_i(ir_op op, int64_t a, int64_t b, int python_mod) {
    switch (op) {
    case IR_OP_ADD: return (int64_t)((uint64_t)a + (uint64_t)b);
    case IR_OP_SUB: return (int64_t)((uint64_t)a - (uint64_t)b);
    case IR_OP_MUL: return (int64_t)((uint64_t)a * (uint64_t)b);
    case IR_OP_DIV: /* truncates toward zero, like C and ONNX Runtime */
        if (a == INT64_MIN && b == -1) return INT64_MIN;
        return a / b;
    case IR_OP_MOD: {
        if (b == -1) return 0; /* also avoids INT64_MIN % -1 */
        int64_t r = a % b;
        if (python_mod && r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
    }
    case IR_OP_POW: return ipow(a, b);
    case IR_OP_MIN: return a < b ? a : b;
    case IR_OP_MAX: return a > b ? a : b;
    case IR_OP_EQUAL: return a == b;
    case IR_OP_LESS: return a < b;
    case IR_OP_LESS_EQUAL: return a <= b;
    case IR_OP_GREATER: return a > b;
    case IR_OP_GREATER_EQUAL: return a >= b;
    case IR_OP_AND: return a && b;
    case IR_OP_OR: return a || b;
    case IR_OP_PRELU: return a < 0 ? (int64_t)((uint64_t)a * (uint64_t)b) : a;
    case IR_OP_BITWISE_AND: return a & b;
    case IR_OP_BITWISE_OR: return a | b;
    case IR_OP_BITWISE_XOR: return a ^ b;
    default: return 0;
    }
}

/* the ops where u64 differs from its int64 bit pattern; b != 0 for div/mod */
static uint64_t binary_u(ir_op op, uint64_t a, uint64_t b) {
    switch (op) {
    case IR_OP_DIV: return a / b;
    case IR_OP_MOD: return a % b; /* both signs agree: fmod and Python's mod are one */
    case IR_OP_MIN: return a < b ? a : b;
    case IR_OP_MAX: return a > b ? a : b;
    case IR_OP_LESS: return a < b;
    case IR_OP_LESS_EQUAL: return a <= b;
    case IR_OP_GREATER: return a > b;
    case IR_OP_GREATER_EQUAL: return a >= b;
    case IR_OP_PRELU: return a;                                        /* never negative */
    default: return (uint64_t)binary_i(op, (int64_t)a, (int64_t)b, 0); /* wrap-around ops, bits, equality */
    }
}

symc_status rt_ref_k_binary(rt_ctx *c) {
    const rt_ref_tensor *a = &c->in[0], *b = &c->in[1];
    rt_ref_tensor *y = &c->out[0];
    symc_status s;
    if (c->op == IR_OP_POW) {
        /* the exponent may have its own dtype (ops.def: KEEP) */
        if (!(RT_DT(b->dtype) & RT_NUMS))
            return rt_ref_fail(c, SYMC_ERR_UNSUPPORTED, "exponent dtype %s is not supported",
                               symc_dtype_name(b->dtype));
    } else if ((s = rt_ref_check_in_dtype(c, 1, a->dtype))) {
        return s;
    }
    int64_t fmod_attr = 0;
    if (c->op == IR_OP_MOD) {
        if ((s = rt_ref_attr_int(c, "fmod", 0, 0, &fmod_attr))) return s;
        if (fmod_attr != 0 && fmod_attr != 1)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'fmod' = %lld must be 0 or 1", (long long)fmod_attr);
    }
    int python_mod = fmod_attr == 0;
    int shift_left = 0;
    if (c->op == IR_OP_BIT_SHIFT) {
        const char *dir;
        if ((s = rt_ref_attr_str(c, "direction", 1, NULL, &dir))) return s;
        if (strcmp(dir, "left") && strcmp(dir, "right"))
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'direction' = '%s' must be left or right", dir);
        shift_left = !strcmp(dir, "left");
    }
    uint64_t width = 8u * (uint64_t)symc_dtype_size(a->dtype);

    const rt_ref_tensor *ts[2] = {a, b};
    int32_t rank;
    int64_t dims[RT_REF_MAX_RANK];
    if ((s = rt_ref_broadcast_shape(c, ts, 2, &rank, dims))) return s;
    int bool_out = is_compare(c->op) || c->op == IR_OP_AND || c->op == IR_OP_OR;
    if ((s = rt_ref_check_out(c, 0, bool_out ? SYMC_BOOL : a->dtype, rank, dims))) return s;

    int64_t sa[RT_REF_MAX_RANK], sb[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    rt_ref_bcast_strides(a, rank, sa);
    rt_ref_bcast_strides(b, rank, sb);
    /* floats compute in f64; an integer base with a float exponent too (then
     * the result is truncated into the base's dtype, as a cast would) */
    int float_domain = rt_is_float(a->dtype) || rt_is_float(b->dtype);
    int64_t n = rt_ref_numel_dims(rank, dims);
    if (a->dtype == SYMC_F32 && b->dtype == SYMC_F32 && rank > 0 &&
        (c->op == IR_OP_ADD || c->op == IR_OP_SUB || c->op == IR_OP_MUL || c->op == IR_OP_DIV)) {
        /* the common case without a load and a coordinate step per element: rows of the last dim
         * (binary_f's f64 result rounded once, as rt_st_f stores it) */
        const float *fa = a->data, *fb = b->data;
        float *fy = y->data;
        int64_t w = dims[rank - 1], la = sa[rank - 1], lb = sb[rank - 1];
        for (int64_t i = 0; i < n; i += w) {
            int64_t ia = rt_offset(rank, coord, sa), ib = rt_offset(rank, coord, sb);
            for (int64_t j = 0; j < w; j++)
                fy[i + j] = (float)binary_f(c->op, fa[ia + j * la], fb[ib + j * lb], python_mod);
            coord[rank - 1] = w - 1;
            rt_next(rank, dims, coord);
        }
        return SYMC_OK;
    }
    for (int64_t i = 0; i < n; i++, rt_next(rank, dims, coord)) {
        int64_t ia = rt_offset(rank, coord, sa), ib = rt_offset(rank, coord, sb);
        if (float_domain) {
            rt_st_f(y, i, binary_f(c->op, rt_ld_f(a, ia), rt_ld_f(b, ib), python_mod));
            continue;
        }
        int64_t va = rt_ld_i(a, ia), vb = rt_ld_i(b, ib);
        if (c->op == IR_OP_BIT_SHIFT) { /* unsigned operands (the kernel table): logical shifts */
            uint64_t ua = (uint64_t)va, ub = (uint64_t)vb;
            rt_st_u(y, i, ub >= width ? 0u : shift_left ? ua << ub : ua >> ub);
            continue;
        }
        int u64 = rt_is_u64(a->dtype) && (c->op != IR_OP_POW || rt_is_u64(b->dtype));
        if ((c->op == IR_OP_DIV || c->op == IR_OP_MOD) && vb == 0) {
            char where[160];
            return rt_ref_fail(c, SYMC_ERR_DIV_ZERO, "integer %s by zero at output element %s (%lld %s 0)",
                               c->op == IR_OP_DIV ? "division" : "modulo",
                               rt_ref_shape_str(where, sizeof where, rank, coord), (long long)va,
                               c->op == IR_OP_DIV ? "/" : "%");
        }
        if (c->op == IR_OP_POW && vb < 0 && rt_is_u64(b->dtype)) {
            char where[160];
            return rt_ref_fail(c, SYMC_ERR_UNSUPPORTED, "u64 exponent %llu at output element %s is 2^63 or more",
                               (unsigned long long)vb, rt_ref_shape_str(where, sizeof where, rank, coord));
        }
        if (c->op == IR_OP_POW && vb < 0) {
            char where[160];
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                               "integer %lld to the negative integer power %lld at output element %s "
                               "(as in NumPy and PyTorch, not allowed)",
                               (long long)va, (long long)vb, rt_ref_shape_str(where, sizeof where, rank, coord));
        }
        if (u64) rt_st_u(y, i, binary_u(c->op, (uint64_t)va, (uint64_t)vb));
        else rt_st_i(y, i, binary_i(c->op, va, vb, python_mod));
    }
    return SYMC_OK;
}

symc_status rt_ref_k_where(rt_ctx *c) {
    const rt_ref_tensor *cond = &c->in[0], *x = &c->in[1], *yv = &c->in[2];
    symc_status s;
    if (yv->dtype != x->dtype)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 1 is %s but input 2 is %s; they must agree",
                           symc_dtype_name(x->dtype), symc_dtype_name(yv->dtype));
    const rt_ref_tensor *ts[3] = {cond, x, yv};
    int32_t rank;
    int64_t dims[RT_REF_MAX_RANK];
    if ((s = rt_ref_broadcast_shape(c, ts, 3, &rank, dims))) return s;
    if ((s = rt_ref_check_out(c, 0, x->dtype, rank, dims))) return s;
    int64_t sc[RT_REF_MAX_RANK], sx[RT_REF_MAX_RANK], sy[RT_REF_MAX_RANK];
    int64_t coord[RT_REF_MAX_RANK] = {0};
    rt_ref_bcast_strides(cond, rank, sc);
    rt_ref_bcast_strides(x, rank, sx);
    rt_ref_bcast_strides(yv, rank, sy);
    int64_t n = rt_ref_numel_dims(rank, dims);
    for (int64_t i = 0; i < n; i++, rt_next(rank, dims, coord)) {
        if (rt_ld_i(cond, rt_offset(rank, coord, sc))) rt_ref_copy_elem(&c->out[0], i, x, rt_offset(rank, coord, sx));
        else rt_ref_copy_elem(&c->out[0], i, yv, rt_offset(rank, coord, sy));
    }
    return SYMC_OK;
}
