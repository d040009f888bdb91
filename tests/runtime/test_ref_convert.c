/* f16/bf16 conversions and the cast op: hand-written bit patterns, the
 * round-to-nearest-even definition checked exhaustively at every midpoint
 * between adjacent f16/bf16 values, cast between every pair of dtypes, and
 * the element types' table and element loads (symc/dtype.h). */
#include "ref_test.h"

#include "common/dtype_traits.h" /* cm_f32_to_half */

static void test_f16_patterns(void) {
    CHECK(symc_f64_to_f16(1.0) == 0x3c00);
    CHECK(symc_f64_to_f16(-2.0) == 0xc000);
    CHECK(symc_f64_to_f16(0.0) == 0x0000);
    CHECK(symc_f64_to_f16(-0.0) == 0x8000);
    CHECK(symc_f64_to_f16(65504.0) == 0x7bff);  /* largest finite */
    CHECK(symc_f64_to_f16(65519.99) == 0x7bff); /* below the midpoint */
    CHECK(symc_f64_to_f16(65520.0) == 0x7c00);  /* midpoint ties to even: inf */
    CHECK(symc_f64_to_f16(-1e9) == 0xfc00);
    CHECK(symc_f64_to_f16(INFINITY) == 0x7c00);
    CHECK(symc_f64_to_f16(ldexp(1, -14)) == 0x0400); /* smallest normal */
    CHECK(symc_f64_to_f16(ldexp(1, -24)) == 0x0001); /* smallest subnormal */
    CHECK(symc_f64_to_f16(ldexp(1, -25)) == 0x0000); /* half of it: tie to even 0 */
    CHECK(symc_f64_to_f16(ldexp(1.5, -25)) == 0x0001);
    CHECK(symc_f64_to_f16(ldexp(3, -25)) == 0x0002);       /* 1.5 ulp: tie to even 2 */
    CHECK(symc_f64_to_f16(1.0 + ldexp(1, -11)) == 0x3c00); /* tie, even stays */
    CHECK(symc_f64_to_f16(1.0 + ldexp(3, -11)) == 0x3c02); /* tie, odd rounds up */
    CHECK(symc_f64_to_f16(ldexp(1023, -24)) == 0x03ff);    /* largest subnormal */
    CHECK(symc_f64_to_f16(ldexp(2047, -25)) == 0x0400);    /* tie carries into the normals */
    uint16_t nan = symc_f64_to_f16(NAN);
    CHECK((nan & 0x7c00) == 0x7c00 && (nan & 0x03ff) != 0);
    /* no double rounding: just above a tie, f64 -> f16 rounds up, while going
     * through f32 would first land exactly on the tie and round to even */
    CHECK(symc_f64_to_f16(1.0 + ldexp(1, -11) + ldexp(1, -40)) == 0x3c01);
    CHECK(symc_f32_to_f16((float)(1.0 + ldexp(1, -11) + ldexp(1, -40))) == 0x3c00);

    CHECK(symc_f16_to_f64(0x3c00) == 1.0);
    CHECK(symc_f16_to_f64(0x7bff) == 65504.0);
    CHECK(symc_f16_to_f64(0x0001) == ldexp(1, -24));
    CHECK(symc_f16_to_f64(0x8000) == 0.0 && signbit(symc_f16_to_f64(0x8000)));
    CHECK(isinf(symc_f16_to_f64(0xfc00)) && symc_f16_to_f64(0xfc00) < 0);
    CHECK(isnan(symc_f16_to_f64(0x7e00)));
    CHECK(symc_f16_to_f32(0x3555) == (float)symc_f16_to_f64(0x3555));
}

static void test_bf16_patterns(void) {
    CHECK(symc_f64_to_bf16(1.0) == 0x3f80);
    CHECK(symc_f64_to_bf16(-1.0) == 0xbf80);
    CHECK(symc_f64_to_bf16(1.0 + ldexp(1, -8)) == 0x3f80);     /* tie, even */
    CHECK(symc_f64_to_bf16(1.0 + ldexp(3, -8)) == 0x3f82);     /* tie, up to even */
    CHECK(symc_f64_to_bf16(3.140625) == 0x4049);               /* exactly representable */
    CHECK(symc_f32_to_bf16(3.4028234663852886e38f) == 0x7f80); /* FLT_MAX rounds to inf */
    CHECK(symc_f64_to_bf16(ldexp(255, 120)) == 0x7f7f);        /* largest finite */
    CHECK(symc_f64_to_bf16(ldexp(1, -133)) == 0x0001);         /* smallest subnormal */
    CHECK(symc_bf16_to_f64(0x0001) == ldexp(1, -133));
    CHECK(symc_bf16_to_f64(0x4049) == 3.140625);
    CHECK(symc_bf16_to_f32(0xc2f7) == -123.5f);
    uint16_t nan = symc_f64_to_bf16(-NAN);
    CHECK((nan & 0x7f80) == 0x7f80 && (nan & 0x007f) != 0);
}

/* Every pair of adjacent positive finite values (a, b): a and b round-trip,
 * the midpoint goes to the one with an even mantissa, and points just inside
 * go to the nearer one. The definition, tested exhaustively. */
static void test_exhaustive(int is_bf16) {
    double (*widen)(uint16_t) = is_bf16 ? symc_bf16_to_f64 : symc_f16_to_f64;
    uint16_t (*narrow)(double) = is_bf16 ? symc_f64_to_bf16 : symc_f64_to_f16;
    uint16_t inf = is_bf16 ? 0x7f80 : 0x7c00;
    int bad = 0;
    for (uint32_t h = 0; h + 1 < inf; h++) {
        double a = widen((uint16_t)h), b = widen((uint16_t)(h + 1));
        double mid = a + (b - a) / 2; /* exact in f64 */
        uint16_t even = (h & 1) ? (uint16_t)(h + 1) : (uint16_t)h;
        double q = (b - a) / 1024;
        if (narrow(a) != h || narrow(-a) != (h | 0x8000u) || narrow(mid) != even || narrow(mid - q) != h ||
            narrow(mid + q) != h + 1)
            bad++;
    }
    CHECK_MSG(bad == 0, "%d %s rounding failures", bad, is_bf16 ? "bf16" : "f16");
    /* float -> f16 via f32 entry point agrees where the f32 value is exact */
    CHECK(symc_f32_to_f16(0.1f) == symc_f64_to_f16((double)0.1f));
}

/* An independent oracle for narrowing: the nearest value computed with
 * frexp/ldexp in double precision (exact for 16-bit targets), then the
 * encoding. The library narrows on the IEEE bit fields instead; random
 * doubles over the whole exponent range (and every overflow threshold) must
 * give the same bits. */
static uint16_t oracle_narrow(double x, int ebits, int mbits) {
    const int bias = (1 << (ebits - 1)) - 1;
    const uint32_t inf = ((1u << ebits) - 1u) << mbits;
    const uint16_t sign = signbit(x) ? 0x8000u : 0u;
    if (isnan(x)) return (uint16_t)(sign | inf | (1u << (mbits - 1)));
    double a = fabs(x);
    if (a >= ldexp(2.0 - ldexp(1.0, -(mbits + 1)), bias)) return (uint16_t)(sign | inf);
    if (a == 0.0) return sign;
    int k;
    frexp(a, &k);
    int e = k - 1;
    if (e < 1 - bias) e = 1 - bias;
    double v = ldexp(a, mbits - e), f = floor(v), d = v - f;
    double r = d > 0.5 ? f + 1.0 : d < 0.5 ? f : (fmod(f, 2.0) == 0.0 ? f : f + 1.0);
    return (uint16_t)(sign | (((uint32_t)(e + bias - 1) << mbits) + (uint32_t)r));
}

static void test_narrow_oracle(void) {
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int bad = 0;
    for (int i = 0; i < 2000000; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t u = s;
        /* exponents mostly near the 16-bit types' ranges, the rest anywhere (subnormals too) */
        if (i % 4) u = (u & ~(UINT64_C(0x7ff) << 52)) | ((uint64_t)(1023 - 150 + (int)((s >> 33) % 290)) << 52);
        double x;
        memcpy(&x, &u, 8);
        if (symc_f64_to_f16(x) != oracle_narrow(x, 5, 10) || symc_f64_to_bf16(x) != oracle_narrow(x, 8, 7)) bad++;
    }
    CHECK_MSG(bad == 0, "%d narrowings differ from the oracle", bad);
    /* the overflow point: just below stays finite, at it rounds to infinity */
    CHECK(symc_dtype_overflow(SYMC_F16) == 65520.0);
    CHECK(symc_f64_to_f16(nextafter(65520.0, 0)) == 0x7bff && symc_f64_to_f16(-65520.0) == 0xfc00);
    double lb = symc_dtype_overflow(SYMC_BF16);
    CHECK(symc_f64_to_bf16(nextafter(lb, 0)) == 0x7f7f && symc_f64_to_bf16(lb) == 0x7f80);
    CHECK(isinf(symc_dtype_overflow(SYMC_F32)) && isinf(symc_dtype_overflow(SYMC_I8)));
    CHECK(symc_f64_to_f16(ldexp(1, -1074)) == 0 && symc_f64_to_f16(-ldexp(1, -1074)) == 0x8000);
    CHECK(symc_f64_to_bf16(ldexp(1, -134)) == 0 && symc_f64_to_bf16(ldexp(1.0000001, -134)) == 1);
}

/* The f32 entry points work on f32 bits (their own code): every f32 value exactly at, just
 * below and just above each midpoint between adjacent 16-bit values, every 16-bit value itself,
 * and random f32 patterns, against the f64 path (float -> double is exact). */
static void test_f32_entry_points(void) {
    int bad = 0;
    for (int is_bf16 = 0; is_bf16 < 2; is_bf16++) {
        double (*widen)(uint16_t) = is_bf16 ? symc_bf16_to_f64 : symc_f16_to_f64;
        uint16_t (*n64)(double) = is_bf16 ? symc_f64_to_bf16 : symc_f64_to_f16;
        uint16_t (*n32)(float) = is_bf16 ? symc_f32_to_bf16 : symc_f32_to_f16;
        uint32_t inf = is_bf16 ? 0x7f80 : 0x7c00;
        for (uint32_t h = 0; h <= inf; h++) {
            double a = widen((uint16_t)h), b = h < inf ? widen((uint16_t)(h + 1)) : INFINITY;
            float pts[5] = {(float)a, (float)(a + (b - a) / 2), 0, 0, -(float)a};
            if (h == inf) pts[1] = (float)a;
            pts[2] = nextafterf(pts[1], 0.0f);
            pts[3] = nextafterf(pts[1], INFINITY);
            for (int i = 0; i < 5; i++) bad += n32(pts[i]) != n64((double)pts[i]);
        }
        uint64_t s = 0x243f6a8885a308d3ull;
        for (int i = 0; i < 4000000; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t u = (uint32_t)(s >> 32);
            float f;
            memcpy(&f, &u, 4);
            uint16_t x = n32(f), y = n64((double)f);
            bad += isnan(f) ? !isnan(widen(x)) || !isnan(widen(y)) : x != y;
        }
    }
    CHECK_MSG(bad == 0, "%d f32 narrowings differ from the f64 path", bad);
}

/* The bulk conversion the precision pass narrows weights with (cm_f32_to_half): element for
 * element symc_f32_to_f16 / symc_f32_to_bf16, in place and between blocks at odd addresses, on
 * every sign, exponent and top 11 mantissa bits with the low 12 bits 0, 1, around 0x800 and all
 * ones (with the bits above them, every halfway case of both types, just below and just above
 * it), and on random patterns. */
static void test_bulk_narrowing(void) {
    static const uint32_t low[] = {0, 1, 0x7fe, 0x7ff, 0x800, 0x801, 0xfff};
    const size_t n = ((size_t)1 << 20) * (sizeof low / sizeof low[0]) + 4099;
    uint32_t *f = malloc(n * 4);
    unsigned char *buf = malloc(n * 4 + 8), *out = malloc(n * 2 + 8);
    if (!f || !buf || !out) {
        CHECK(!"out of memory");
        free(f), free(buf), free(out);
        return;
    }
    size_t k = 0;
    for (uint32_t hi = 0; hi < (1u << 20); hi++)
        for (size_t l = 0; l < sizeof low / sizeof low[0]; l++) f[k++] = hi << 12 | low[l];
    uint64_t s = 0x13198a2e03707344ull;
    for (; k < n; k++) s = s * 6364136223846793005ull + 1442695040888963407ull, f[k] = (uint32_t)(s >> 32);
    int bad = 0;
    for (int is_bf16 = 0; is_bf16 < 2; is_bf16++) {
        uint16_t (*n32)(float) = is_bf16 ? symc_f32_to_bf16 : symc_f32_to_f16;
        symc_dtype dt = is_bf16 ? SYMC_BF16 : SYMC_F16;
        for (int at = 0; at < 2; at++) { /* aligned, then odd addresses */
            unsigned char *src = buf + (at ? 3 : 0), *dst = out + (at ? 1 : 0);
            memcpy(src, f, n * 4);
            cm_f32_to_half(dst, src, n, dt);
            cm_f32_to_half(src, src, n, dt); /* in place */
            for (size_t i = 0; i < n; i++) {
                float v;
                memcpy(&v, &f[i], 4);
                uint16_t want = n32(v), a, b;
                memcpy(&a, dst + 2 * i, 2);
                memcpy(&b, src + 2 * i, 2);
                bad += a != want || b != want;
            }
        }
    }
    CHECK_MSG(bad == 0, "%d bulk narrowings differ from symc_f32_to_f16/bf16", bad);
    free(f), free(buf), free(out);
}

static void test_cast(void) {
    symc_attr to_i32 = symc_attr_dtype("to", SYMC_I32);
    rt_ref_tensor x = tf(SYMC_F32, SH(6), V(-1.7, 2.9, -0.0, NAN, 1e20, -1e20));
    rt_ref_tensor y = tz(SYMC_I32, SH(6));
    RUN_OK(IR_OP_CAST, &to_i32, 1, &x, 1, &y, 1);
    CHECK(tgeti(&y, 0) == -1 && tgeti(&y, 1) == 2 && tgeti(&y, 2) == 0);
    CHECK(tgeti(&y, 3) == 0 && tgeti(&y, 4) == INT32_MAX && tgeti(&y, 5) == INT32_MIN);

    symc_attr to_bool = symc_attr_dtype("to", SYMC_BOOL);
    rt_ref_tensor xb = tf(SYMC_F64, SH(4), V(0, -0.0, 0.5, NAN));
    rt_ref_tensor yb = tz(SYMC_BOOL, SH(4));
    RUN_OK(IR_OP_CAST, &to_bool, 1, &xb, 1, &yb, 1);
    EXPECT(yb, 0, 0, 0, 1, 1);

    /* i64 -> i32 wraps (two's complement), as NumPy and PyTorch do */
    rt_ref_tensor xi = ti(SYMC_I64, SH(3), I(((int64_t)1 << 32) + 5, (int64_t)1 << 31, -1));
    rt_ref_tensor yi = tz(SYMC_I32, SH(3));
    RUN_OK(IR_OP_CAST, &to_i32, 1, &xi, 1, &yi, 1);
    CHECK(tgeti(&yi, 0) == 5 && tgeti(&yi, 1) == INT32_MIN && tgeti(&yi, 2) == -1);

    /* i64 -> f16 rounds to nearest even from the exact integer */
    symc_attr to_f16 = symc_attr_dtype("to", SYMC_F16);
    rt_ref_tensor xh = ti(SYMC_I64, SH(4), I(2049, 2051, 70000, -3));
    rt_ref_tensor yh = tz(SYMC_F16, SH(4));
    RUN_OK(IR_OP_CAST, &to_f16, 1, &xh, 1, &yh, 1);
    EXPECT(yh, 0, 2048, 2052, INFINITY, -3);

    /* i64 -> bf16 above 2^53: a sticky bit keeps the rounding single. 2^60 +
     * 2^52 + 1 is just above the tie between 2^60 and 2^60 (1 + 2^-7). */
    symc_attr to_bf16 = symc_attr_dtype("to", SYMC_BF16);
    rt_ref_tensor xl = ti(SYMC_I64, SH(2),
                          I(((int64_t)1 << 60) + ((int64_t)1 << 52) + 1, ((int64_t)1 << 60) + ((int64_t)1 << 52)));
    rt_ref_tensor yl = tz(SYMC_BF16, SH(2));
    RUN_OK(IR_OP_CAST, &to_bf16, 1, &xl, 1, &yl, 1);
    CHECK(tbits16(&yl, 0) == 0x5d81);
    CHECK(tbits16(&yl, 1) == 0x5d80);

    /* f16 -> f32 exact, f32 -> bf16 rounds, bool -> f64, f64 -> i64 */
    symc_attr to_f32 = symc_attr_dtype("to", SYMC_F32);
    rt_ref_tensor x16 = tz(SYMC_F16, SH(2));
    memcpy(x16.data, (uint16_t[]){0x3555, 0x0001}, 4);
    rt_ref_tensor y32 = tz(SYMC_F32, SH(2));
    RUN_OK(IR_OP_CAST, &to_f32, 1, &x16, 1, &y32, 1);
    EXPECT(y32, 0, 0.333251953125, ldexp(1, -24));

    symc_attr to_f64 = symc_attr_dtype("to", SYMC_F64);
    rt_ref_tensor xbo = ti(SYMC_BOOL, SH(2), I(1, 0));
    rt_ref_tensor y64 = tz(SYMC_F64, SH(2));
    RUN_OK(IR_OP_CAST, &to_f64, 1, &xbo, 1, &y64, 1);
    EXPECT(y64, 0, 1, 0);

    symc_attr to_i64 = symc_attr_dtype("to", SYMC_I64);
    rt_ref_tensor xd = tf(SYMC_F64, SH(3), V(-3.99, 1e300, 123456789012.5));
    rt_ref_tensor yd = tz(SYMC_I64, SH(3));
    RUN_OK(IR_OP_CAST, &to_i64, 1, &xd, 1, &yd, 1);
    CHECK(tgeti(&yd, 0) == -3 && tgeti(&yd, 1) == INT64_MAX && tgeti(&yd, 2) == 123456789012);

    /* every dtype to every dtype on the values 0, 1, 3 (exact everywhere) */
    for (int a = 0; a < SYMC_DTYPE_COUNT; a++)
        for (int b = 0; b < SYMC_DTYPE_COUNT; b++) {
            symc_attr to = symc_attr_dtype("to", (symc_dtype)b);
            rt_ref_tensor xa = tf((symc_dtype)a, SH(3), V(0, 1, 3));
            rt_ref_tensor ya = tz((symc_dtype)b, SH(3));
            RUN_OK(IR_OP_CAST, &to, 1, &xa, 1, &ya, 1);
            int bool_involved = a == SYMC_BOOL || b == SYMC_BOOL;
            if (bool_involved) EXPECT(ya, 0, 0, 1, 1);
            else EXPECT(ya, 0, 0, 1, 3);
        }
    /* a missing 'to' and an output of another dtype are errors */
    rt_ref_tensor ym = tz(SYMC_I64, SH(6));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "missing required attribute 'to'", IR_OP_CAST, NULL, 0, &x, 1, &ym, 1);
    RUN_FAILS(SYMC_ERR_INTERNAL, "i64[6]", IR_OP_CAST, &to_i32, 1, &x, 1, &ym, 1);
}

/* symc_dtype_size/name/load: every dtype, unaligned buffers, invalid dtypes */
static void test_dtype_table(void) {
    static const size_t sizes[SYMC_DTYPE_COUNT] = {4, 2, 2, 8, 8, 4, 1, 1, 1, 2, 2, 4, 8};
    static const char *const names[SYMC_DTYPE_COUNT] = {"f32", "f16", "bf16", "f64", "i64", "i32", "bool",
                                                        "i8",  "u8",  "i16",  "u16", "u32", "u64"};
    for (int d = 0; d < SYMC_DTYPE_COUNT; d++) {
        CHECK(symc_dtype_size((symc_dtype)d) == sizes[d]);
        CHECK(!strcmp(symc_dtype_name((symc_dtype)d), names[d]));
    }
    CHECK(symc_dtype_size(SYMC_DTYPE_COUNT) == 0 && symc_dtype_size((symc_dtype)-1) == 0);
    CHECK(!strcmp(symc_dtype_name(SYMC_DTYPE_COUNT), "?"));
    /* element 1 of each dtype, stored one byte past an aligned address */
    unsigned char buf[1 + 2 * 8];
    float f[2] = {0, -1.5f};
    double g[2] = {0, 1e300};
    int64_t i64[2] = {0, -(INT64_C(1) << 53)};
    int32_t i32[2] = {0, INT32_MIN};
    uint16_t h[2] = {0, 0xc000}, b[2] = {0, 0x4049}; /* -2 in f16; 3.140625 in bf16 */
    uint8_t z[2] = {0, 7};                           /* any nonzero byte is true */
    int8_t s8[2] = {0, -128};
    uint8_t u8[2] = {0, 255};
    int16_t s16[2] = {0, -32768};
    uint16_t u16[2] = {0, 65535};
    uint32_t u32[2] = {0, UINT32_MAX};
    uint64_t u64[2] = {0, UINT64_MAX}; /* 2^64 - 1 rounds to 2^64 */
    const struct {
        symc_dtype dt;
        const void *src;
        double want;
    } cases[] = {{SYMC_F32, f, -1.5},
                 {SYMC_F64, g, 1e300},
                 {SYMC_I64, i64, -9007199254740992.0},
                 {SYMC_I32, i32, -2147483648.0},
                 {SYMC_F16, h, -2.0},
                 {SYMC_BF16, b, 3.140625},
                 {SYMC_BOOL, z, 1.0},
                 {SYMC_I8, s8, -128.0},
                 {SYMC_U8, u8, 255.0},
                 {SYMC_I16, s16, -32768.0},
                 {SYMC_U16, u16, 65535.0},
                 {SYMC_U32, u32, 4294967295.0},
                 {SYMC_U64, u64, 18446744073709551616.0}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        size_t es = symc_dtype_size(cases[k].dt);
        memcpy(buf + 1, cases[k].src, 2 * es);
        CHECK_MSG(symc_dtype_load(buf + 1, cases[k].dt, 1) == cases[k].want, "dtype %s", symc_dtype_name(cases[k].dt));
        CHECK(symc_dtype_load(buf + 1, cases[k].dt, 0) == 0.0);
    }
    CHECK(isnan(symc_dtype_load(buf, SYMC_DTYPE_COUNT, 0)));
    /* stores truncate toward zero and saturate to the type's range, NaN -> 0 */
    int8_t o8;
    symc_dtype_store(&o8, SYMC_I8, 0, -300.7);
    CHECK(o8 == -128);
    uint8_t ou8;
    symc_dtype_store(&ou8, SYMC_U8, 0, -3.5);
    CHECK(ou8 == 0);
    uint16_t ou16;
    symc_dtype_store(&ou16, SYMC_U16, 0, 70000.0);
    CHECK(ou16 == 65535);
    uint64_t ou64;
    symc_dtype_store(&ou64, SYMC_U64, 0, 1e30);
    CHECK(ou64 == UINT64_MAX);
    symc_dtype_store(&ou64, SYMC_U64, 0, NAN);
    CHECK(ou64 == 0);
    symc_dtype_store(&ou64, SYMC_U64, 0, 12345.9);
    CHECK(ou64 == 12345);
}

int main(void) {
    test_dtype_table();
    test_f16_patterns();
    test_bf16_patterns();
    test_exhaustive(0);
    test_exhaustive(1);
    test_bulk_narrowing();
    test_narrow_oracle();
    test_f32_entry_points();
    test_cast();
    tfree_all();
    return check_report("runtime.convert");
}
