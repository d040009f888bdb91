/* The element types' one definition (include/symc/dtype.h): the size and
 * name table, the 16-bit float conversions and element loads. It lives in the
 * base library (symshape links nothing and every module links it) so the
 * compiler, the runtime, the tools and the tests share it: IEEE binary16
 * (5 exponent bits, 10 mantissa bits) and bfloat16 (8, 7) go through one pair
 * of routines, narrow and widen, parameterized by the field widths. Widening
 * is exact; narrowing rounds the double's significand once, ties to even, on
 * its IEEE bit fields (integer arithmetic, no libm on the hot path). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "symc/dtype.h"

static const struct {
    const char *name;
    size_t size;
} dtypes[SYMC_DTYPE_COUNT] = {
    [SYMC_F32] = {"f32", 4}, [SYMC_F16] = {"f16", 2}, [SYMC_BF16] = {"bf16", 2}, [SYMC_F64] = {"f64", 8},
    [SYMC_I64] = {"i64", 8}, [SYMC_I32] = {"i32", 4}, [SYMC_BOOL] = {"bool", 1}, [SYMC_I8] = {"i8", 1},
    [SYMC_U8] = {"u8", 1},   [SYMC_I16] = {"i16", 2}, [SYMC_U16] = {"u16", 2},   [SYMC_U32] = {"u32", 4},
    [SYMC_U64] = {"u64", 8},
};

const char *symc_dtype_name(symc_dtype dt) { return (unsigned)dt < SYMC_DTYPE_COUNT ? dtypes[dt].name : "?"; }

size_t symc_dtype_size(symc_dtype dt) { return (unsigned)dt < SYMC_DTYPE_COUNT ? dtypes[dt].size : 0; }

/* A 16-bit float with one sign bit, ebits exponent bits and mbits mantissa bits,
 * from the double's bit fields: the significand M (53 bits, implicit bit set)
 * is shifted right to the target's quantum at exponent e and rounded once,
 * ties to even, on the bits shifted out. No libm call: this runs once per
 * weight when a model's constants are narrowed (110M times for BERT-base). */
static uint16_t narrow(double x, int ebits, int mbits) {
    const int bias = (1 << (ebits - 1)) - 1;
    const uint32_t inf = ((1u << ebits) - 1u) << mbits;
    uint64_t u;
    memcpy(&u, &x, 8);
    const uint16_t sign = (u >> 63) ? 0x8000u : 0u;
    const int ex = (int)((u >> 52) & 0x7ffu);
    const uint64_t frac = u & ((UINT64_C(1) << 52) - 1u);
    if (ex == 0x7ff) return (uint16_t)(sign | inf | (frac ? (1u << (mbits - 1)) : 0u)); /* NaN, inf */
    /* a double subnormal (or zero) is below half the smallest 16-bit subnormal: it rounds to 0 */
    if (ex == 0) return sign;
    const int E = ex - 1023;                     /* 2^E <= |x| < 2^(E+1) */
    if (E > bias) return (uint16_t)(sign | inf); /* 2^(bias+1) and up */
    const int e = E < 1 - bias ? 1 - bias : E;   /* subnormal: the quantum of the smallest normal */
    const int s = 52 - mbits + (e - E);          /* bits shifted out, >= 52 - mbits */
    if (s > 53) return sign;                     /* below half the smallest subnormal */
    const uint64_t M = frac | (UINT64_C(1) << 52);
    uint64_t m = M >> s, rest = M & ((UINT64_C(1) << s) - 1u), half = UINT64_C(1) << (s - 1);
    if (rest > half || (rest == half && (m & 1u))) m++; /* m <= 2^(mbits+1) */
    /* m carries the implicit bit (normal) or not (subnormal, e = 1 - bias);
     * adding it onto exponent field e + bias - 1 gives both encodings and lets
     * a rounding carry (m == 2^(mbits+1)) step into the next binade, and from
     * the largest binade into infinity (the largest finite's upper half) */
    return (uint16_t)(sign | (((uint32_t)(e + bias - 1) << mbits) + (uint32_t)m));
}

static double widen(uint16_t h, int ebits, int mbits) {
    const int bias = (1 << (ebits - 1)) - 1;
    uint32_t ef = (h >> mbits) & ((1u << ebits) - 1u), mf = h & ((1u << mbits) - 1u);
    double v;
    if (ef == (1u << ebits) - 1u) v = mf ? NAN : INFINITY;
    else if (ef == 0) v = ldexp((double)mf, 1 - bias - mbits);
    else v = ldexp((double)(mf | (1u << mbits)), (int)ef - bias - mbits);
    return (h & 0x8000u) ? -v : v;
}

/* The same values as widen, through f32's bit layout (every f16 and bf16 value
 * is an f32 value): the reference kernels load each operand this way, so the
 * common cases avoid ldexp. */
double symc_f16_to_f64(uint16_t h) {
    uint32_t ef = (h >> 10) & 31u, mf = h & 1023u;
    if (ef == 0) return (h & 0x8000u) ? -(double)mf * 0x1p-24 : (double)mf * 0x1p-24;
    if (ef == 31) return widen(h, 5, 10);
    uint32_t u = ((uint32_t)(h & 0x8000u) << 16) | ((ef + 112u) << 23) | (mf << 13);
    float f;
    memcpy(&f, &u, 4);
    return f;
}
double symc_bf16_to_f64(uint16_t h) {
    if (((h >> 7) & 255u) == 255u) return widen(h, 8, 7);
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
uint16_t symc_f64_to_f16(double x) { return narrow(x, 5, 10); }
uint16_t symc_f64_to_bf16(double x) { return narrow(x, 8, 7); }
float symc_f16_to_f32(uint16_t h) { return (float)symc_f16_to_f64(h); } /* exact either way */
float symc_bf16_to_f32(uint16_t h) { return (float)symc_bf16_to_f64(h); }
/* From f32 bits directly (the weights' conversion runs these once per weight), with the same
 * rounding as narrow: once, to nearest, ties to even. */
uint16_t symc_f32_to_f16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu, ex = a >> 23;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u);  /* NaN: quiet */
    if (a >= 0x47800000u) return (uint16_t)(sign | 0x7c00u); /* 2^16 and up, inf */
    if (ex >= 113) {                                         /* normal in f16 (2^-14 and up) */
        uint32_t r = a - ((uint32_t)(127 - 15) << 23);       /* rebias */
        r += 0xfffu + ((r >> 13) & 1u);                      /* round the 13 dropped bits, ties to even */
        return (uint16_t)(sign | (r >> 13));                 /* a carry steps into the next binade, or inf */
    }
    if (ex == 0) return (uint16_t)sign;                           /* f32 zero or subnormal: below 2^-126 */
    const uint32_t M = (a & 0x7fffffu) | 0x800000u, s = 126 - ex; /* f16 subnormal: quantum 2^-24 */
    if (s > 24) return (uint16_t)sign;
    uint32_t m = M >> s, rest = M & ((1u << s) - 1u), half = 1u << (s - 1);
    if (rest > half || (rest == half && (m & 1u))) m++; /* up to 0x400: the smallest normal */
    return (uint16_t)(sign | m);
}
uint16_t symc_f32_to_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u); /* NaN: quiet */
    u += 0x7fffu + ((u >> 16) & 1u); /* ties to even; the largest finite's upper half carries into inf */
    return (uint16_t)(u >> 16);
}
/* the midpoint between the largest finite value and 2^(bias+1) rounds to even: up */
double symc_dtype_overflow(symc_dtype dt) {
    if (dt == SYMC_F16) return ldexp(2.0 - ldexp(1.0, -11), 15);
    if (dt == SYMC_BF16) return ldexp(2.0 - ldexp(1.0, -8), 127);
    return INFINITY;
}

double symc_dtype_load(const void *data, symc_dtype dt, size_t i) {
    const char *p = (const char *)data;
    switch (dt) {
    case SYMC_F32: {
        float v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case SYMC_F64: {
        double v;
        memcpy(&v, p + 8 * i, 8);
        return v;
    }
    case SYMC_F16: {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        return symc_f16_to_f64(v);
    }
    case SYMC_BF16: {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        return symc_bf16_to_f64(v);
    }
    case SYMC_I64: {
        int64_t v;
        memcpy(&v, p + 8 * i, 8);
        return (double)v;
    }
    case SYMC_I32: {
        int32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case SYMC_BOOL: return p[i] ? 1.0 : 0.0;
    case SYMC_I8: return (double)(int8_t)p[i];
    case SYMC_U8: return (double)(uint8_t)p[i];
    case SYMC_I16: {
        int16_t v;
        memcpy(&v, p + 2 * i, 2);
        return v;
    }
    case SYMC_U16: {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        return v;
    }
    case SYMC_U32: {
        uint32_t v;
        memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case SYMC_U64: {
        uint64_t v;
        memcpy(&v, p + 8 * i, 8);
        return (double)v;
    }
    default: return NAN;
    }
}

/* f64 -> f32 with IEEE overflow behaviour spelled out (C leaves it undefined) */
static float to_f32(double v) {
    if (fabs(v) > FLT_MAX && !isinf(v)) {
        /* halfway between FLT_MAX and 2^128 and beyond rounds to infinity */
        double halfway = ldexp(2.0 - ldexp(1.0, -24), 127);
        float big = fabs(v) >= halfway ? INFINITY : FLT_MAX;
        return v < 0 ? -big : big;
    }
    return (float)v;
}

/* float -> integer: truncation toward zero, saturated, NaN -> 0 (never C's undefined conversion) */
static int64_t to_i64_sat(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

/* the same for an integer type of range [lo, hi] (within int64) */
static int64_t to_range_sat(double v, int64_t lo, int64_t hi) {
    int64_t w = to_i64_sat(v);
    return w < lo ? lo : w > hi ? hi : w;
}

static uint64_t to_u64_sat(double v) {
    if (isnan(v) || v <= 0) return 0;
    if (v >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)v;
}

void symc_dtype_store(void *data, symc_dtype dt, size_t i, double v) {
    char *p = (char *)data;
    switch (dt) {
    case SYMC_F32: {
        float f = to_f32(v);
        memcpy(p + 4 * i, &f, 4);
        break;
    }
    case SYMC_F64: memcpy(p + 8 * i, &v, 8); break;
    case SYMC_F16: {
        uint16_t h = symc_f64_to_f16(v);
        memcpy(p + 2 * i, &h, 2);
        break;
    }
    case SYMC_BF16: {
        uint16_t h = symc_f64_to_bf16(v);
        memcpy(p + 2 * i, &h, 2);
        break;
    }
    case SYMC_I64: {
        int64_t x = to_i64_sat(v);
        memcpy(p + 8 * i, &x, 8);
        break;
    }
    case SYMC_I32: {
        int64_t w = to_i64_sat(v);
        int32_t x = w > INT32_MAX ? INT32_MAX : w < INT32_MIN ? INT32_MIN : (int32_t)w;
        memcpy(p + 4 * i, &x, 4);
        break;
    }
    case SYMC_BOOL: p[i] = (char)(v != 0.0); break; /* NaN != 0: true, as in NumPy */
    case SYMC_I8: {
        int8_t x = (int8_t)to_range_sat(v, INT8_MIN, INT8_MAX);
        memcpy(p + i, &x, 1);
        break;
    }
    case SYMC_U8: {
        uint8_t x = (uint8_t)to_range_sat(v, 0, UINT8_MAX);
        memcpy(p + i, &x, 1);
        break;
    }
    case SYMC_I16: {
        int16_t x = (int16_t)to_range_sat(v, INT16_MIN, INT16_MAX);
        memcpy(p + 2 * i, &x, 2);
        break;
    }
    case SYMC_U16: {
        uint16_t x = (uint16_t)to_range_sat(v, 0, UINT16_MAX);
        memcpy(p + 2 * i, &x, 2);
        break;
    }
    case SYMC_U32: {
        uint32_t x = (uint32_t)to_range_sat(v, 0, UINT32_MAX);
        memcpy(p + 4 * i, &x, 4);
        break;
    }
    case SYMC_U64: {
        uint64_t x = to_u64_sat(v);
        memcpy(p + 8 * i, &x, 8);
        break;
    }
    default: break;
    }
}

void symc_dtype_fill_random(void *data, symc_dtype dt, size_t n, uint64_t *state) {
    for (size_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(*state >> 33);
        double u = r / 2147483648.0 * 2.0 - 1.0;
        switch (dt) {
        case SYMC_I64:
        case SYMC_I32:
        case SYMC_I8:
        case SYMC_U8:
        case SYMC_I16:
        case SYMC_U16:
        case SYMC_U32:
        case SYMC_U64: symc_dtype_store(data, dt, i, (double)(r % 4)); break;
        case SYMC_BOOL: symc_dtype_store(data, dt, i, (double)(r & 1)); break;
        default: symc_dtype_store(data, dt, i, u); break;
        }
    }
}
