/* The element types' one definition: the table of common/dtype_traits.h
 * (name, size, kind, and each type's element loads and stores) and, over it,
 * the functions of the public include/symc/dtype.h. It lives in the base
 * library, symc_common, which every module links, so the compiler, the
 * runtime (the reference kernels read and write every element through the
 * table), the tools and the tests share it. IEEE binary16 (5 exponent bits,
 * 10 mantissa bits) and bfloat16 (8, 7) go through one pair of routines,
 * narrow and widen, parameterized by the field widths. Widening is exact;
 * narrowing rounds the double's significand once, ties to even, on its IEEE
 * bit fields (integer arithmetic, no libm on the hot path). Conversions to
 * an integer type are written out (truncate, saturate, NaN -> 0; wrap
 * through uint64) instead of C's undefined or implementation-defined casts. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/dtype_traits.h"
#include "symc/dtype.h"

const char *symc_dtype_name(symc_dtype dt) { return cm_dtype_traits_of(dt)->name; }

size_t symc_dtype_size(symc_dtype dt) { return cm_dtype_traits_of(dt)->size; }

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
 * rounding as narrow: once, to nearest, ties to even. Inline, so cm_f32_to_half runs the very
 * same code without a call an element. */
static inline uint16_t f16_of_bits(uint32_t u) {
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
static inline uint16_t bf16_of_bits(uint32_t u) {
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u); /* NaN: quiet */
    u += 0x7fffu + ((u >> 16) & 1u); /* ties to even; the largest finite's upper half carries into inf */
    return (uint16_t)(u >> 16);
}
uint16_t symc_f32_to_f16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return f16_of_bits(u);
}
uint16_t symc_f32_to_bf16(float x) {
    uint32_t u;
    memcpy(&u, &x, 4);
    return bf16_of_bits(u);
}
void cm_f32_to_half(void *dst, const void *src, size_t n, symc_dtype half) {
    /* element i is read before half i is written, and half i lands at byte 2i, within floats
     * 0..i: in place, every float is read before anything overwrites it */
    const unsigned char *s = src;
    unsigned char *d = dst;
    uint32_t u;
    uint16_t h;
    if (half == SYMC_BF16)
        for (size_t i = 0; i < n; i++) memcpy(&u, s + 4 * i, 4), h = bf16_of_bits(u), memcpy(d + 2 * i, &h, 2);
    else
        for (size_t i = 0; i < n; i++) memcpy(&u, s + 4 * i, 4), h = f16_of_bits(u), memcpy(d + 2 * i, &h, 2);
}
/* the midpoint between the largest finite value and 2^(bias+1) rounds to even: up */
double symc_dtype_overflow(symc_dtype dt) {
    if (dt == SYMC_F16) return ldexp(2.0 - ldexp(1.0, -11), 15);
    if (dt == SYMC_BF16) return ldexp(2.0 - ldexp(1.0, -8), 127);
    return INFINITY;
}

/* ---- conversions the rows share ---------------------------------------------- */
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

/* two's-complement wrap of the low `bits` bits (8, 16 or 32), without
 * implementation-defined casts */
static int64_t wrap_signed(int64_t v, int bits) {
    uint64_t m = (1ull << bits) - 1u, u = (uint64_t)v & m;
    return u <= (m >> 1) ? (int64_t)u : (int64_t)u - (int64_t)(m + 1u);
}

/* An integer as an f64 that rounds like the integer: exact below 2^53, else
 * cut to 53 bits with the lowest one set if anything was cut (round to odd),
 * which is enough for a later rounding to <= 51 mantissa bits to be correct. */
static double u64_to_f64_sticky(uint64_t m) {
    int shift = 0;
    while ((m >> shift) >= (1ull << 53)) shift++;
    uint64_t kept = m >> shift;
    if (shift && (m & ((1ull << shift) - 1u))) kept |= 1u;
    return ldexp((double)kept, shift);
}
static double i64_to_f64_sticky(int64_t v) {
    double d = u64_to_f64_sticky(v < 0 ? 0u - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -d : d;
}

/* a float type's value from an f64, an int64 and a uint64 (each rounded once) */
static double f64_id(double v) { return v; }
static double f32_widen(float x) { return x; }
static float f32_of_i64(int64_t v) { return (float)v; }
static float f32_of_u64(uint64_t v) { return (float)v; }
static double f64_of_i64(int64_t v) { return (double)v; }
static double f64_of_u64(uint64_t v) { return (double)v; }
static uint16_t f16_of_i64(int64_t v) { return symc_f64_to_f16(i64_to_f64_sticky(v)); }
static uint16_t f16_of_u64(uint64_t v) { return symc_f64_to_f16(u64_to_f64_sticky(v)); }
static uint16_t bf16_of_i64(int64_t v) { return symc_f64_to_bf16(i64_to_f64_sticky(v)); }
static uint16_t bf16_of_u64(uint64_t v) { return symc_f64_to_bf16(u64_to_f64_sticky(v)); }

/* ---- the rows' element functions ------------------------------------------------ */
/* element i of C type T, read into x or written from x */
#define LOAD_X(T) \
    T x;          \
    memcpy(&x, (const char *)data + sizeof x * i, sizeof x)
#define STORE_X memcpy((char *)data + sizeof x * i, &x, sizeof x)

/* A float type stored as T: WIDEN(x) is its f64 value, NARROW(v) rounds an
 * f64 to it, OF_I64 and OF_U64 round an integer to it. */
#define FLOAT_ROW(NAME, T, WIDEN, NARROW, OF_I64, OF_U64)                                                       \
    static double load_f64_##NAME(const void *data, size_t i) {                                                 \
        LOAD_X(T);                                                                                              \
        return WIDEN(x);                                                                                        \
    }                                                                                                           \
    static void store_f64_##NAME(void *data, size_t i, double v) {                                              \
        T x = NARROW(v);                                                                                        \
        STORE_X;                                                                                                \
    }                                                                                                           \
    static int64_t load_i64_##NAME(const void *data, size_t i) { return to_i64_sat(load_f64_##NAME(data, i)); } \
    static void store_i64_##NAME(void *data, size_t i, int64_t v) {                                             \
        T x = OF_I64(v);                                                                                        \
        STORE_X;                                                                                                \
    }                                                                                                           \
    static void store_u64_##NAME(void *data, size_t i, uint64_t v) {                                            \
        T x = OF_U64(v);                                                                                        \
        STORE_X;                                                                                                \
    }

FLOAT_ROW(f32, float, f32_widen, to_f32, f32_of_i64, f32_of_u64)
FLOAT_ROW(f64, double, f64_id, f64_id, f64_of_i64, f64_of_u64)
FLOAT_ROW(f16, uint16_t, symc_f16_to_f64, symc_f64_to_f16, f16_of_i64, f16_of_u64)
FLOAT_ROW(bf16, uint16_t, symc_bf16_to_f64, symc_f64_to_bf16, bf16_of_i64, bf16_of_u64)

/* An integer type T, read as LT (int64_t for u64: its bit pattern); SAT(v)
 * saturates an f64 to its range, WRAP(v) wraps an int64 into it. */
#define INT_ROW(NAME, T, LT, SAT, WRAP)                                                                       \
    static int64_t load_i64_##NAME(const void *data, size_t i) {                                              \
        LOAD_X(LT);                                                                                           \
        return x;                                                                                             \
    }                                                                                                         \
    static double load_f64_##NAME(const void *data, size_t i) { return (double)(T)load_i64_##NAME(data, i); } \
    static void store_f64_##NAME(void *data, size_t i, double v) {                                            \
        T x = (T)(SAT);                                                                                       \
        STORE_X;                                                                                              \
    }                                                                                                         \
    static void store_i64_##NAME(void *data, size_t i, int64_t v) {                                           \
        T x = (T)(WRAP);                                                                                      \
        STORE_X;                                                                                              \
    }                                                                                                         \
    static void store_u64_##NAME(void *data, size_t i, uint64_t v) { store_i64_##NAME(data, i, (int64_t)v); }

INT_ROW(i64, int64_t, int64_t, to_i64_sat(v), v)
INT_ROW(i32, int32_t, int32_t, to_range_sat(v, INT32_MIN, INT32_MAX), wrap_signed(v, 32))
INT_ROW(i16, int16_t, int16_t, to_range_sat(v, INT16_MIN, INT16_MAX), wrap_signed(v, 16))
INT_ROW(i8, int8_t, int8_t, to_range_sat(v, INT8_MIN, INT8_MAX), wrap_signed(v, 8))
INT_ROW(u64, uint64_t, int64_t, to_u64_sat(v), (uint64_t)v)
INT_ROW(u32, uint32_t, uint32_t, to_range_sat(v, 0, UINT32_MAX), (uint64_t)v)
INT_ROW(u16, uint16_t, uint16_t, to_range_sat(v, 0, UINT16_MAX), (uint64_t)v)
INT_ROW(u8, uint8_t, uint8_t, to_range_sat(v, 0, UINT8_MAX), (uint64_t)v)

/* bool: one byte, 0 or 1 stored, any nonzero byte read as true (NaN != 0: true, as in NumPy) */
static int64_t load_i64_bool(const void *data, size_t i) { return ((const char *)data)[i] ? 1 : 0; }
static double load_f64_bool(const void *data, size_t i) { return ((const char *)data)[i] ? 1.0 : 0.0; }
static void store_f64_bool(void *data, size_t i, double v) { ((char *)data)[i] = (char)(v != 0.0); }
static void store_i64_bool(void *data, size_t i, int64_t v) { ((char *)data)[i] = (char)(v != 0); }
static void store_u64_bool(void *data, size_t i, uint64_t v) { ((char *)data)[i] = (char)(v != 0); }

/* not a dtype: loads NaN (0 as an integer), stores nothing */
static double load_f64_none(const void *data, size_t i) {
    (void)data, (void)i;
    return NAN;
}
static int64_t load_i64_none(const void *data, size_t i) {
    (void)data, (void)i;
    return 0;
}
static void store_f64_none(void *data, size_t i, double v) { (void)data, (void)i, (void)v; }
static void store_i64_none(void *data, size_t i, int64_t v) { (void)data, (void)i, (void)v; }
static void store_u64_none(void *data, size_t i, uint64_t v) { (void)data, (void)i, (void)v; }

#define ROW(DT, NAME, SIZE, KIND) \
    [DT] = {#NAME, SIZE, KIND, load_f64_##NAME, store_f64_##NAME, load_i64_##NAME, store_i64_##NAME, store_u64_##NAME}
const cm_dtype_traits cm_dtype_table[SYMC_DTYPE_COUNT + 1] = {
    ROW(SYMC_F32, f32, 4, CM_DT_FLOAT),
    ROW(SYMC_F16, f16, 2, CM_DT_FLOAT),
    ROW(SYMC_BF16, bf16, 2, CM_DT_FLOAT),
    ROW(SYMC_F64, f64, 8, CM_DT_FLOAT),
    ROW(SYMC_I64, i64, 8, CM_DT_INT),
    ROW(SYMC_I32, i32, 4, CM_DT_INT),
    ROW(SYMC_BOOL, bool, 1, CM_DT_BOOL),
    ROW(SYMC_I8, i8, 1, CM_DT_INT),
    ROW(SYMC_U8, u8, 1, CM_DT_INT),
    ROW(SYMC_I16, i16, 2, CM_DT_INT),
    ROW(SYMC_U16, u16, 2, CM_DT_INT),
    ROW(SYMC_U32, u32, 4, CM_DT_INT),
    ROW(SYMC_U64, u64, 8, CM_DT_INT),
    [SYMC_DTYPE_COUNT] = {"?", 0, CM_DT_NONE, load_f64_none, store_f64_none, load_i64_none, store_i64_none,
                          store_u64_none},
};

/* ---- the public element functions (symc/dtype.h) --------------------------------- */
double symc_dtype_load(const void *data, symc_dtype dt, size_t i) { return cm_dtype_traits_of(dt)->load_f64(data, i); }

void symc_dtype_store(void *data, symc_dtype dt, size_t i, double v) { cm_dtype_traits_of(dt)->store_f64(data, i, v); }

void symc_dtype_fill_random(void *data, symc_dtype dt, size_t n, uint64_t *state) {
    const cm_dtype_traits *t = cm_dtype_traits_of(dt);
    for (size_t i = 0; i < n; i++) {
        *state = *state * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(*state >> 33);
        double u = r / 2147483648.0 * 2.0 - 1.0;
        if (t->kind == CM_DT_INT) t->store_f64(data, i, (double)(r % 4));
        else if (t->kind == CM_DT_BOOL) t->store_f64(data, i, (double)(r & 1));
        else t->store_f64(data, i, u);
    }
}
