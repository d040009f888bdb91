/* Elementwise reference kernels: every unary op, every binary op, where, with
 * hand-computed values, NumPy broadcasting (size-1 dims on both sides,
 * scalars), integer semantics (wrap, truncating division, Python modulo),
 * NaN propagation, and f16/bf16 at representable values. */
#include "ref_test.h"

static void unary(ir_op op, symc_dtype dt, const symc_attr *attrs, uint32_t na, const double *in, int64_t n,
                  rt_ref_tensor *out) {
    rt_ref_tensor x = tf(dt, 1, D(n), in);
    *out = tz(dt, 1, D(n));
    RUN_OK(op, attrs, na, &x, 1, out, 1);
}

static void test_unary_math(void) {
    rt_ref_tensor y;
    unary(IR_OP_IDENTITY, SYMC_F32, NULL, 0, V(1.5, -2, NAN), 3, &y);
    EXPECT(y, 0, 1.5, -2, NAN);
    unary(IR_OP_NEG, SYMC_F32, NULL, 0, V(1.5, -2, 0), 3, &y);
    EXPECT(y, 0, -1.5, 2, 0);
    unary(IR_OP_ABS, SYMC_F64, NULL, 0, V(-1.5, 2, -0.0), 3, &y);
    EXPECT(y, 0, 1.5, 2, 0);
    unary(IR_OP_SIGN, SYMC_F32, NULL, 0, V(-2, 0, 3, NAN), 4, &y);
    EXPECT(y, 0, -1, 0, 1, NAN);
    unary(IR_OP_EXP, SYMC_F64, NULL, 0, V(0, 1, -INFINITY), 3, &y);
    EXPECT(y, 1e-15, 1, 2.718281828459045, 0);
    unary(IR_OP_LOG, SYMC_F32, NULL, 0, V(1, 0, -1, 2.718281828459045), 4, &y);
    EXPECT(y, 1e-7, 0, -INFINITY, NAN, 1);
    unary(IR_OP_SQRT, SYMC_F32, NULL, 0, V(4, 0, 2.25), 3, &y);
    EXPECT(y, 0, 2, 0, 1.5);
    unary(IR_OP_RSQRT, SYMC_F32, NULL, 0, V(4, 0.25), 2, &y);
    EXPECT(y, 0, 0.5, 2);
    unary(IR_OP_RECIPROCAL, SYMC_F32, NULL, 0, V(4, -0.5, 0), 3, &y);
    EXPECT(y, 0, 0.25, -2, INFINITY);
    unary(IR_OP_FLOOR, SYMC_F32, NULL, 0, V(-1.5, 1.5, 2), 3, &y);
    EXPECT(y, 0, -2, 1, 2);
    unary(IR_OP_CEIL, SYMC_F32, NULL, 0, V(-1.5, 1.5, 2), 3, &y);
    EXPECT(y, 0, -1, 2, 2);
    unary(IR_OP_ERF, SYMC_F64, NULL, 0, V(0, 1, -1), 3, &y);
    EXPECT(y, 1e-15, 0, 0.8427007929497149, -0.8427007929497149);
    unary(IR_OP_TANH, SYMC_F32, NULL, 0, V(0, 1), 2, &y);
    EXPECT(y, 1e-7, 0, 0.7615941559557649);
    unary(IR_OP_SIGMOID, SYMC_F64, NULL, 0, V(0, 2, -1000), 3, &y);
    EXPECT(y, 1e-15, 0.5, 0.8807970779778823, 0);
    unary(IR_OP_RELU, SYMC_F32, NULL, 0, V(-1, 0, 2, NAN), 4, &y);
    EXPECT(y, 0, 0, 0, 2, NAN);
    symc_attr alpha = symc_attr_float("alpha", 0.1);
    unary(IR_OP_LEAKY_RELU, SYMC_F64, &alpha, 1, V(-2, 3), 2, &y);
    EXPECT(y, 1e-15, -0.2, 3);
    unary(IR_OP_GELU, SYMC_F64, NULL, 0, V(1, -1, 0), 3, &y);
    EXPECT(y, 1e-15, 0.8413447460685429, -0.15865525393145707, 0);
    symc_attr tanh_mode = symc_attr_str("approximate", "tanh");
    unary(IR_OP_GELU, SYMC_F64, &tanh_mode, 1, V(1, -1), 2, &y);
    EXPECT(y, 1e-15, 0.8411919906082768, -0.15880800939172324);
    symc_attr none_mode = symc_attr_str("approximate", "none");
    unary(IR_OP_GELU, SYMC_F32, &none_mode, 1, V(1), 1, &y);
    EXPECT(y, 1e-7, 0.8413447460685429);
    unary(IR_OP_SILU, SYMC_F64, NULL, 0, V(1, -1), 2, &y);
    EXPECT(y, 1e-15, 0.7310585786300049, -0.2689414213699951);
    symc_attr hs[2] = {symc_attr_float("alpha", 0.2), symc_attr_float("beta", 0.5)};
    unary(IR_OP_HARD_SIGMOID, SYMC_F64, hs, 2, V(-5, 0, 1, 5), 4, &y);
    EXPECT(y, 1e-15, 0, 0.5, 0.7, 1);
    unary(IR_OP_HARD_SWISH, SYMC_F64, NULL, 0, V(-4, -1, 0, 1, 4), 5, &y);
    EXPECT(y, 1e-15, 0, -1.0 / 3, 0, 2.0 / 3, 4);
    symc_attr clip[2] = {symc_attr_float("min", -1), symc_attr_float("max", 2)};
    unary(IR_OP_CLIP, SYMC_F32, clip, 2, V(-3, 0, 5, NAN), 4, &y);
    EXPECT(y, 0, -1, 0, 2, NAN);
    unary(IR_OP_CLIP, SYMC_F32, clip, 1, V(-3, 0, 5), 3, &y); /* min only */
    EXPECT(y, 0, -1, 0, 5);
    unary(IR_OP_CLIP, SYMC_F32, clip + 1, 1, V(-3, 0, 5), 3, &y); /* max only */
    EXPECT(y, 0, -3, 0, 2);
    unary(IR_OP_CLIP, SYMC_F32, NULL, 0, V(-3, 5), 2, &y); /* neither: identity */
    EXPECT(y, 0, -3, 5);
}

static void test_unary_int_bool(void) {
    /* integers: neg/abs wrap at the minimum, relu, sign, clip to the integers in [min, max] */
    rt_ref_tensor x = ti(SYMC_I32, SH(4), I(INT32_MIN, -5, 0, 7));
    rt_ref_tensor y = tz(SYMC_I32, SH(4));
    RUN_OK(IR_OP_NEG, NULL, 0, &x, 1, &y, 1);
    CHECK(tgeti(&y, 0) == INT32_MIN && tgeti(&y, 1) == 5 && tgeti(&y, 3) == -7);
    RUN_OK(IR_OP_ABS, NULL, 0, &x, 1, &y, 1);
    CHECK(tgeti(&y, 0) == INT32_MIN && tgeti(&y, 1) == 5 && tgeti(&y, 3) == 7);
    RUN_OK(IR_OP_RELU, NULL, 0, &x, 1, &y, 1);
    EXPECT(y, 0, 0, 0, 0, 7);
    RUN_OK(IR_OP_SIGN, NULL, 0, &x, 1, &y, 1);
    EXPECT(y, 0, -1, -1, 0, 1);
    symc_attr clip[2] = {symc_attr_float("min", -4.5), symc_attr_float("max", 2.5)};
    RUN_OK(IR_OP_CLIP, clip, 2, &x, 1, &y, 1);
    EXPECT(y, 0, -4, -4, 0, 2);

    rt_ref_tensor xl = ti(SYMC_I64, SH(2), I(INT64_MIN, -3));
    rt_ref_tensor yl = tz(SYMC_I64, SH(2));
    RUN_OK(IR_OP_NEG, NULL, 0, &xl, 1, &yl, 1);
    CHECK(tgeti(&yl, 0) == INT64_MIN && tgeti(&yl, 1) == 3);
    RUN_OK(IR_OP_IDENTITY, NULL, 0, &xl, 1, &yl, 1);
    CHECK(tgeti(&yl, 0) == INT64_MIN && tgeti(&yl, 1) == -3);

    rt_ref_tensor b = ti(SYMC_BOOL, SH(3), I(1, 0, 1));
    rt_ref_tensor nb = tz(SYMC_BOOL, SH(3));
    RUN_OK(IR_OP_NOT, NULL, 0, &b, 1, &nb, 1);
    EXPECT(nb, 0, 0, 1, 0);
    RUN_OK(IR_OP_IDENTITY, NULL, 0, &b, 1, &nb, 1);
    EXPECT(nb, 0, 1, 0, 1);
}

static void test_unary_half(void) {
    /* f16/bf16: exact at representable values, one rounding otherwise */
    rt_ref_tensor y;
    unary(IR_OP_SQRT, SYMC_F16, NULL, 0, V(0.25, 6.25, 2), 3, &y);
    CHECK(tbits16(&y, 0) == 0x3800); /* 0.5 */
    CHECK(tbits16(&y, 1) == 0x4100); /* 2.5 */
    CHECK(tbits16(&y, 2) == symc_f64_to_f16(sqrt(2.0)));
    unary(IR_OP_NEG, SYMC_BF16, NULL, 0, V(1.5, -3.140625), 2, &y);
    EXPECT(y, 0, -1.5, 3.140625);
    unary(IR_OP_EXP, SYMC_BF16, NULL, 0, V(0, 1), 2, &y);
    CHECK(tbits16(&y, 0) == 0x3f80 && tbits16(&y, 1) == symc_f64_to_bf16(exp(1.0)));
    unary(IR_OP_RELU, SYMC_F16, NULL, 0, V(-65504, 65504), 2, &y);
    EXPECT(y, 0, 0, 65504);
    /* f32 arithmetic stays f32-exact: 1/3 rounds once to the nearest float */
    unary(IR_OP_RECIPROCAL, SYMC_F32, NULL, 0, V(3), 1, &y);
    float f;
    memcpy(&f, y.data, 4);
    CHECK(f == 1.0f / 3.0f);
}

static rt_ref_tensor bin(ir_op op, rt_ref_tensor a, rt_ref_tensor b, symc_dtype out_dt, int32_t rank,
                         const int64_t *dims, const symc_attr *attrs, uint32_t na) {
    rt_ref_tensor in[2] = {a, b};
    rt_ref_tensor y = tz(out_dt, rank, dims);
    RUN_OK(op, attrs, na, in, 2, &y, 1);
    return y;
}

static void test_binary_arith(void) {
    /* [2,1] + [1,3] -> [2,3]: size-1 dims on both sides */
    rt_ref_tensor a = tf(SYMC_F32, SH(2, 1), V(10, 20));
    rt_ref_tensor b = tf(SYMC_F32, SH(1, 3), V(1, 2, 3));
    rt_ref_tensor y = bin(IR_OP_ADD, a, b, SYMC_F32, SH(2, 3), NULL, 0);
    EXPECT(y, 0, 11, 12, 13, 21, 22, 23);
    y = bin(IR_OP_SUB, a, b, SYMC_F32, SH(2, 3), NULL, 0);
    EXPECT(y, 0, 9, 8, 7, 19, 18, 17);
    y = bin(IR_OP_SUB, b, a, SYMC_F32, SH(2, 3), NULL, 0);
    EXPECT(y, 0, -9, -8, -7, -19, -18, -17);
    /* [3] * [2,3]: rank difference */
    rt_ref_tensor m = tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    y = bin(IR_OP_MUL, b, m, SYMC_F32, SH(2, 3), NULL, 0);
    EXPECT(y, 0, 1, 4, 9, 4, 10, 18);
    /* scalar (rank 0) / [2] */
    rt_ref_tensor s = tf(SYMC_F64, 0, NULL, V(3));
    rt_ref_tensor v = tf(SYMC_F64, SH(3), V(2, 0, -4));
    y = bin(IR_OP_DIV, s, v, SYMC_F64, SH(3), NULL, 0);
    EXPECT(y, 0, 1.5, INFINITY, -0.75);
    /* [2,1,3] + [4,1]: the middle dim broadcasts from the right operand */
    rt_ref_tensor p = tf(SYMC_F32, SH(2, 1, 3), V(0, 1, 2, 3, 4, 5));
    rt_ref_tensor q = tf(SYMC_F32, SH(4, 1), V(0, 10, 20, 30));
    y = bin(IR_OP_ADD, p, q, SYMC_F32, SH(2, 4, 3), NULL, 0);
    EXPECT(y, 0, 0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32, 3, 4, 5, 13, 14, 15, 23, 24, 25, 33, 34, 35);
    /* a zero-size broadcast: [0,3] + [1,3] -> [0,3] */
    rt_ref_tensor e = tz(SYMC_F32, SH(0, 3));
    rt_ref_tensor ye = bin(IR_OP_ADD, e, b, SYMC_F32, SH(0, 3), NULL, 0);
    CHECK(tnumel(&ye) == 0);

    /* pow: float, integer (exact), float base with integer exponent */
    y = bin(IR_OP_POW, tf(SYMC_F32, SH(3), V(2, 4, -8)), tf(SYMC_F32, SH(3), V(3, 0.5, 1.0 / 3)), SYMC_F32, SH(3), NULL,
            0);
    EXPECT(y, 1e-7, 8, 2, NAN);
    y = bin(IR_OP_POW, ti(SYMC_I64, SH(3), I(3, -2, 7)), ti(SYMC_I64, SH(3), I(4, 3, 0)), SYMC_I64, SH(3), NULL, 0);
    EXPECT(y, 0, 81, -8, 1);
    y = bin(IR_OP_POW, tf(SYMC_F32, SH(2), V(1.5, 2)), ti(SYMC_I64, SH(1), I(2)), SYMC_F32, SH(2), NULL, 0);
    EXPECT(y, 0, 2.25, 4);
    y = bin(IR_OP_POW, ti(SYMC_I32, SH(2), I(9, 10)), tf(SYMC_F32, SH(1), V(0.5)), SYMC_I32, SH(2), NULL, 0);
    EXPECT(y, 0, 3, 3); /* sqrt(10) = 3.16 truncated into i32 */

    /* min/max propagate NaN */
    rt_ref_tensor n1 = tf(SYMC_F32, SH(3), V(1, NAN, 5));
    rt_ref_tensor n2 = tf(SYMC_F32, SH(3), V(2, 0, NAN));
    y = bin(IR_OP_MIN, n1, n2, SYMC_F32, SH(3), NULL, 0);
    EXPECT(y, 0, 1, NAN, NAN);
    y = bin(IR_OP_MAX, n1, n2, SYMC_F32, SH(3), NULL, 0);
    EXPECT(y, 0, 2, NAN, NAN);
    y = bin(IR_OP_MAX, ti(SYMC_I64, SH(2), I(-1, 7)), ti(SYMC_I64, SH(1), I(3)), SYMC_I64, SH(2), NULL, 0);
    EXPECT(y, 0, 3, 7);
}

static void test_binary_int(void) {
    /* i32 wraps on overflow */
    rt_ref_tensor a = ti(SYMC_I32, SH(2), I(INT32_MAX, INT32_MIN));
    rt_ref_tensor one = ti(SYMC_I32, SH(1), I(1));
    rt_ref_tensor y = bin(IR_OP_ADD, a, one, SYMC_I32, SH(2), NULL, 0);
    CHECK(tgeti(&y, 0) == INT32_MIN && tgeti(&y, 1) == INT32_MIN + 1);
    y = bin(IR_OP_SUB, a, one, SYMC_I32, SH(2), NULL, 0);
    CHECK(tgeti(&y, 0) == INT32_MAX - 1 && tgeti(&y, 1) == INT32_MAX);
    y = bin(IR_OP_MUL, ti(SYMC_I64, SH(1), I(INT64_MAX)), ti(SYMC_I64, SH(1), I(2)), SYMC_I64, SH(1), NULL, 0);
    CHECK(tgeti(&y, 0) == -2);
    /* division truncates toward zero; INT_MIN / -1 wraps */
    rt_ref_tensor num = ti(SYMC_I64, SH(5), I(-7, 7, 7, -7, INT64_MIN));
    rt_ref_tensor den = ti(SYMC_I64, SH(5), I(2, -2, 2, -2, -1));
    y = bin(IR_OP_DIV, num, den, SYMC_I64, SH(5), NULL, 0);
    CHECK(tgeti(&y, 0) == -3 && tgeti(&y, 1) == -3 && tgeti(&y, 2) == 3 && tgeti(&y, 3) == 3);
    CHECK(tgeti(&y, 4) == INT64_MIN);
    /* mod: fmod=0 (default) takes the divisor's sign, fmod=1 the dividend's */
    rt_ref_tensor mn = ti(SYMC_I32, SH(4), I(-7, 7, -7, 7));
    rt_ref_tensor md = ti(SYMC_I32, SH(4), I(3, -3, -3, 3));
    y = bin(IR_OP_MOD, mn, md, SYMC_I32, SH(4), NULL, 0);
    EXPECT(y, 0, 2, -2, -1, 1);
    symc_attr fmod1 = symc_attr_int("fmod", 1);
    y = bin(IR_OP_MOD, mn, md, SYMC_I32, SH(4), &fmod1, 1);
    EXPECT(y, 0, -1, 1, -1, 1);
    symc_attr fmod0 = symc_attr_int("fmod", 0);
    y = bin(IR_OP_MOD, ti(SYMC_I64, SH(1), I(INT64_MIN)), ti(SYMC_I64, SH(1), I(-1)), SYMC_I64, SH(1), &fmod0, 1);
    EXPECT(y, 0, 0);
    /* float mod: Python remainder by default, C fmod with fmod=1 */
    rt_ref_tensor fx = tf(SYMC_F32, SH(3), V(-7.5, 7.5, 6));
    rt_ref_tensor fy = tf(SYMC_F32, SH(3), V(2, -2, 0));
    y = bin(IR_OP_MOD, fx, fy, SYMC_F32, SH(3), NULL, 0);
    EXPECT(y, 0, 0.5, -0.5, NAN);
    y = bin(IR_OP_MOD, fx, fy, SYMC_F32, SH(3), &fmod1, 1);
    EXPECT(y, 0, -1.5, 1.5, NAN);
}

static void test_compare_logic_where(void) {
    rt_ref_tensor a = tf(SYMC_F32, SH(2, 1), V(1, NAN));
    rt_ref_tensor b = tf(SYMC_F32, SH(3), V(0, 1, 2));
    static const ir_op ops[5] = {IR_OP_EQUAL, IR_OP_LESS, IR_OP_LESS_EQUAL, IR_OP_GREATER, IR_OP_GREATER_EQUAL};
    static const double want[5][6] = {
        {0, 1, 0, 0, 0, 0}, {0, 0, 1, 0, 0, 0}, {0, 1, 1, 0, 0, 0}, {1, 0, 0, 0, 0, 0}, {1, 1, 0, 0, 0, 0}};
    for (int k = 0; k < 5; k++) {
        rt_ref_tensor y = bin(ops[k], a, b, SYMC_BOOL, SH(2, 3), NULL, 0);
        texpect(__FILE__, __LINE__, &y, 0, want[k], 6);
    }
    rt_ref_tensor ia = ti(SYMC_I64, SH(3), I(INT64_MIN, 5, INT64_MAX));
    rt_ref_tensor ib = ti(SYMC_I64, SH(3), I(INT64_MIN + 1, 5, INT64_MAX - 1));
    rt_ref_tensor y = bin(IR_OP_LESS, ia, ib, SYMC_BOOL, SH(3), NULL, 0);
    EXPECT(y, 0, 1, 0, 0); /* exact beyond 2^53 */
    y = bin(IR_OP_EQUAL, ia, ib, SYMC_BOOL, SH(3), NULL, 0);
    EXPECT(y, 0, 0, 1, 0);
    rt_ref_tensor ba = ti(SYMC_BOOL, SH(2, 1), I(0, 1));
    rt_ref_tensor bb = ti(SYMC_BOOL, SH(1, 2), I(0, 1));
    y = bin(IR_OP_AND, ba, bb, SYMC_BOOL, SH(2, 2), NULL, 0);
    EXPECT(y, 0, 0, 0, 0, 1);
    y = bin(IR_OP_OR, ba, bb, SYMC_BOOL, SH(2, 2), NULL, 0);
    EXPECT(y, 0, 0, 1, 1, 1);
    y = bin(IR_OP_EQUAL, ba, bb, SYMC_BOOL, SH(2, 2), NULL, 0);
    EXPECT(y, 0, 1, 0, 0, 1);

    /* where: cond [2,1], x [3], y scalar -> [2,3] */
    rt_ref_tensor in[3] = {ti(SYMC_BOOL, SH(2, 1), I(1, 0)), tf(SYMC_F16, SH(3), V(1, 2, 3)),
                           tf(SYMC_F16, 0, NULL, V(-1))};
    rt_ref_tensor w = tz(SYMC_F16, SH(2, 3));
    RUN_OK(IR_OP_WHERE, NULL, 0, in, 3, &w, 1);
    EXPECT(w, 0, 1, 2, 3, -1, -1, -1);
    rt_ref_tensor in2[3] = {ti(SYMC_BOOL, SH(3), I(0, 1, 0)), ti(SYMC_I64, SH(2, 1), I(10, 20)),
                            ti(SYMC_I64, SH(1, 3), I(7, 8, 9))};
    rt_ref_tensor w2 = tz(SYMC_I64, SH(2, 3));
    RUN_OK(IR_OP_WHERE, NULL, 0, in2, 3, &w2, 1);
    EXPECT(w2, 0, 7, 10, 9, 7, 20, 9);
}

static void test_binary_half(void) {
    /* f16: 1.5 + 0.25 exact; 2048 + 1 is a tie and rounds to even (2048) */
    rt_ref_tensor a = tf(SYMC_F16, SH(2), V(1.5, 2048));
    rt_ref_tensor b = tf(SYMC_F16, SH(2), V(0.25, 1));
    rt_ref_tensor y = bin(IR_OP_ADD, a, b, SYMC_F16, SH(2), NULL, 0);
    CHECK(tbits16(&y, 0) == 0x3f00);
    CHECK(tbits16(&y, 1) == 0x6800);
    /* 65504 * 2 overflows to inf */
    y = bin(IR_OP_MUL, tf(SYMC_F16, SH(1), V(65504)), tf(SYMC_F16, SH(1), V(2)), SYMC_F16, SH(1), NULL, 0);
    CHECK(tbits16(&y, 0) == 0x7c00);
    /* bf16: 1 + 2^-8 ties to 1; 1 + 3*2^-8 rounds to 1 + 2^-6 */
    rt_ref_tensor c = tf(SYMC_BF16, SH(2), V(1, 1));
    rt_ref_tensor d = tf(SYMC_BF16, SH(2), V(ldexp(1, -8), ldexp(3, -8)));
    y = bin(IR_OP_ADD, c, d, SYMC_BF16, SH(2), NULL, 0);
    CHECK(tbits16(&y, 0) == 0x3f80);
    CHECK(tbits16(&y, 1) == 0x3f82);
    y = bin(IR_OP_DIV, tf(SYMC_BF16, SH(1), V(1)), tf(SYMC_BF16, SH(1), V(4)), SYMC_BF16, SH(1), NULL, 0);
    EXPECT(y, 0, 0.25);
}

/* ---- the new ops and dtypes of issue 15 ----------------------------------------------------- */

static void test_unary_more(void) {
    rt_ref_tensor y;
    /* halves to even, the rest to nearest */
    unary(IR_OP_ROUND, SYMC_F32, NULL, 0, V(0.5, 1.5, 2.5, -0.5, -2.5, 2.6, -3.2, 7, NAN), 9, &y);
    EXPECT(y, 0, 0, 2, 2, -0.0, -2, 3, -3, 7, NAN);
    CHECK(signbit(tget(&y, 3))); /* -0.5 -> -0 */
    const double *u = V(-0.9, -0.25, 0, 0.5, 0.99);
    unary(IR_OP_ASIN, SYMC_F64, NULL, 0, u, 5, &y);
    EXPECT(y, 1e-15, asin(-0.9), asin(-0.25), 0, asin(0.5), asin(0.99));
    unary(IR_OP_ACOS, SYMC_F64, NULL, 0, V(-1, 0, 0.5, 2), 4, &y);
    EXPECT(y, 1e-15, 3.141592653589793, 1.5707963267948966, 1.0471975511965979, NAN);
    unary(IR_OP_ATAN, SYMC_F64, NULL, 0, V(1, -INFINITY), 2, &y);
    EXPECT(y, 1e-15, 0.7853981633974483, -1.5707963267948966);
    unary(IR_OP_SINH, SYMC_F64, NULL, 0, V(1, 0), 2, &y);
    EXPECT(y, 1e-15, (exp(1) - exp(-1)) / 2, 0);
    unary(IR_OP_COSH, SYMC_F64, NULL, 0, V(1, 0), 2, &y);
    EXPECT(y, 1e-15, (exp(1) + exp(-1)) / 2, 1);
    unary(IR_OP_ASINH, SYMC_F64, NULL, 0, V(1), 1, &y);
    EXPECT(y, 1e-15, log(1 + sqrt(2)));
    unary(IR_OP_ACOSH, SYMC_F64, NULL, 0, V(2, 0.5), 2, &y);
    EXPECT(y, 1e-15, log(2 + sqrt(3)), NAN);
    unary(IR_OP_ATANH, SYMC_F64, NULL, 0, V(0.5, 1), 2, &y);
    EXPECT(y, 1e-15, 0.5 * log(3), INFINITY);
    symc_attr a07 = symc_attr_float("alpha", 0.7);
    unary(IR_OP_ELU, SYMC_F64, &a07, 1, V(-1, 0, 2, NAN), 4, &y);
    EXPECT(y, 1e-15, 0.7 * (exp(-1) - 1), 0, 2, NAN);
    symc_attr selu[2] = {symc_attr_float("alpha", 1.5), symc_attr_float("gamma", 2)};
    unary(IR_OP_SELU, SYMC_F64, selu, 2, V(-1, 0, 3), 3, &y);
    EXPECT(y, 1e-15, 2 * 1.5 * (exp(-1) - 1), 0, 6);
    symc_attr a2 = symc_attr_float("alpha", 2);
    unary(IR_OP_CELU, SYMC_F64, &a2, 1, V(-1, 3, NAN), 3, &y);
    EXPECT(y, 1e-15, 2 * (exp(-0.5) - 1), 3, NAN);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "attribute 'alpha' is 0", IR_OP_CELU, (symc_attr[]){symc_attr_float("alpha", 0)}, 1,
              &y, 1, &y, 1);
    /* no overflow far out: softplus(1000) = 1000, softplus(-1000) = e^-1000 ~ 0 */
    unary(IR_OP_SOFTPLUS, SYMC_F64, NULL, 0, V(0, 1, 1000, -1000), 4, &y);
    EXPECT(y, 1e-15, log(2), log(1 + exp(1)), 1000, 0);
    unary(IR_OP_SOFTSIGN, SYMC_F32, NULL, 0, V(-3, 0, 1), 3, &y);
    EXPECT(y, 0, -0.75, 0, 0.5);
    symc_attr th = symc_attr_float("alpha", 1);
    unary(IR_OP_THRESHOLDED_RELU, SYMC_F32, &th, 1, V(0.5, 1, 1.5, -2, NAN), 5, &y);
    EXPECT(y, 0, 0, 0, 1.5, 0, 0);
    unary(IR_OP_MISH, SYMC_F64, NULL, 0, V(1, -2, 0), 3, &y);
    EXPECT(y, 1e-15, tanh(log1p(exp(1))), -2 * tanh(log1p(exp(-2))), 0);
    /* exact near 0, where exp(x) - 1 and log(1 + x) lose every digit: the series x + x^2/2, x - x^2/2 */
    /* (tolerance 1e-24: relative 1e-14 at 1e-10, where exp(x) - 1 in f64 is off by 8e-18) */
    unary(IR_OP_EXPM1, SYMC_F64, NULL, 0, V(1e-10, -1e-12, 0), 3, &y);
    EXPECT(y, 1e-24, 1e-10 + 5e-21, -1e-12 + 5e-25, 0);
    unary(IR_OP_LOG1P, SYMC_F64, NULL, 0, V(1e-10, -1e-12, 0), 3, &y);
    EXPECT(y, 1e-24, 1e-10 - 5e-21, -1e-12 - 5e-25, 0);
    unary(IR_OP_EXPM1, SYMC_F32, NULL, 0, V(1, -30), 2, &y);
    EXPECT(y, 1e-6, exp(1) - 1, -1);
    unary(IR_OP_LOG1P, SYMC_F32, NULL, 0, V(1, -1), 2, &y);
    EXPECT(y, 1e-6, log(2), -INFINITY);
    symc_attr shr[2] = {symc_attr_float("bias", 0.25), symc_attr_float("lambd", 1)};
    unary(IR_OP_SHRINK, SYMC_F32, shr, 2, V(-2, -1, 0.5, 1, 3), 5, &y);
    EXPECT(y, 0, -1.75, 0, 0, 0, 2.75);
    /* float only */
    rt_ref_tensor xi = ti(SYMC_I32, SH(1), I(2)), yi = tz(SYMC_I32, SH(1));
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "dtype i32 of input 0 is not supported", IR_OP_ROUND, NULL, 0, &xi, 1, &yi, 1);
}

static rt_ref_tensor tu64(int32_t rank, const int64_t *dims, const uint64_t *v) {
    rt_ref_tensor t = tz(SYMC_U64, rank, dims);
    memcpy(t.data, v, (size_t)tnumel(&t) * 8);
    return t;
}
static uint64_t tgetu64(const rt_ref_tensor *t, int64_t i) {
    uint64_t v;
    memcpy(&v, (const char *)t->data + 8 * i, 8);
    return v;
}
#define U(...) ((const uint64_t[]){__VA_ARGS__})

static void test_int_dtypes(void) {
    /* narrow results wrap like NumPy's */
    rt_ref_tensor y = bin(IR_OP_ADD, ti(SYMC_I8, SH(3), I(100, -128, 5)), ti(SYMC_I8, SH(3), I(100, -1, -7)), SYMC_I8,
                          SH(3), NULL, 0);
    EXPECT(y, 0, -56, 127, -2);
    y = bin(IR_OP_SUB, ti(SYMC_U8, SH(2), I(1, 200)), ti(SYMC_U8, SH(2), I(2, 100)), SYMC_U8, SH(2), NULL, 0);
    EXPECT(y, 0, 255, 100);
    y = bin(IR_OP_MUL, ti(SYMC_I16, SH(2), I(300, -300)), ti(SYMC_I16, SH(2), I(300, 300)), SYMC_I16, SH(2), NULL, 0);
    EXPECT(y, 0, 90000 - 65536, 65536 - 90000);
    y = bin(IR_OP_DIV, ti(SYMC_U16, SH(2), I(65535, 7)), ti(SYMC_U16, SH(2), I(2, 8)), SYMC_U16, SH(2), NULL, 0);
    EXPECT(y, 0, 32767, 0);
    /* i8: division truncates, Mod takes the divisor's sign (fmod=0) or the dividend's (fmod=1) */
    rt_ref_tensor a = ti(SYMC_I8, SH(4), I(-7, 7, -7, -128)), b = ti(SYMC_I8, SH(4), I(3, -3, -3, -1));
    y = bin(IR_OP_DIV, a, b, SYMC_I8, SH(4), NULL, 0);
    EXPECT(y, 0, -2, -2, 2, -128);
    y = bin(IR_OP_MOD, a, b, SYMC_I8, SH(4), NULL, 0);
    EXPECT(y, 0, 2, -2, -1, 0);
    symc_attr fm = symc_attr_int("fmod", 1);
    y = bin(IR_OP_MOD, a, b, SYMC_I8, SH(4), &fm, 1);
    EXPECT(y, 0, -1, 1, -1, 0);
    /* u32 above 2^31 orders as unsigned */
    y = bin(IR_OP_LESS, ti(SYMC_U32, SH(2), I(4000000000, 5)), ti(SYMC_U32, SH(2), I(5, 4000000000)), SYMC_BOOL, SH(2),
            NULL, 0);
    EXPECT(y, 0, 0, 1);
    /* u64 at and above 2^63: order, division, modulo, min/max, unary ops, casts */
    rt_ref_tensor ua = tu64(SH(3), U(UINT64_MAX, 1ull << 63, 10)), ub = tu64(SH(3), U(2, 3, 1ull << 63));
    y = bin(IR_OP_DIV, ua, ub, SYMC_U64, SH(3), NULL, 0);
    CHECK(tgetu64(&y, 0) == UINT64_MAX / 2 && tgetu64(&y, 1) == (1ull << 63) / 3 && tgetu64(&y, 2) == 0);
    y = bin(IR_OP_MOD, ua, ub, SYMC_U64, SH(3), NULL, 0);
    CHECK(tgetu64(&y, 0) == 1 && tgetu64(&y, 1) == (1ull << 63) % 3 && tgetu64(&y, 2) == 10);
    y = bin(IR_OP_MAX, ua, ub, SYMC_U64, SH(3), NULL, 0);
    CHECK(tgetu64(&y, 0) == UINT64_MAX && tgetu64(&y, 1) == 1ull << 63 && tgetu64(&y, 2) == 1ull << 63);
    y = bin(IR_OP_GREATER_EQUAL, ua, ub, SYMC_BOOL, SH(3), NULL, 0);
    EXPECT(y, 0, 1, 1, 0);
    rt_ref_tensor uy = tz(SYMC_U64, SH(3));
    RUN_OK(IR_OP_ABS, NULL, 0, &ua, 1, &uy, 1);
    CHECK(tgetu64(&uy, 0) == UINT64_MAX && tgetu64(&uy, 1) == 1ull << 63);
    RUN_OK(IR_OP_SIGN, NULL, 0, &ua, 1, &uy, 1);
    CHECK(tgetu64(&uy, 0) == 1 && tgetu64(&uy, 1) == 1 && tgetu64(&uy, 2) == 1);
    symc_attr clip[2] = {symc_attr_float("min", 20), symc_attr_float("max", 1e19)};
    RUN_OK(IR_OP_CLIP, clip, 2, &ua, 1, &uy, 1);
    CHECK(tgetu64(&uy, 0) == 10000000000000000000ull && tgetu64(&uy, 1) == 1ull << 63 && tgetu64(&uy, 2) == 20);
    /* cast: 2^64 - 1 rounds once, to 2^64 in f32 and to +inf in f16 (beyond 65504) */
    rt_ref_tensor f = tz(SYMC_F32, SH(3));
    symc_attr to32 = symc_attr_dtype("to", SYMC_F32);
    RUN_OK(IR_OP_CAST, &to32, 1, &ua, 1, &f, 1);
    EXPECT(f, 0, 18446744073709551616.0, 9223372036854775808.0, 10);
    rt_ref_tensor i8 = tz(SYMC_I8, SH(3));
    symc_attr toi8 = symc_attr_dtype("to", SYMC_I8);
    RUN_OK(IR_OP_CAST, &toi8, 1, &ua, 1, &i8, 1); /* integers wrap */
    EXPECT(i8, 0, -1, 0, 10);
    rt_ref_tensor fin = tf(SYMC_F32, SH(4), V(300, -300, -12.9, NAN)), i8b = tz(SYMC_I8, SH(4));
    RUN_OK(IR_OP_CAST, &toi8, 1, &fin, 1, &i8b, 1); /* floats truncate and saturate, NaN -> 0 */
    EXPECT(i8b, 0, 127, -128, -12, 0);
}

static void test_binary_more(void) {
    /* prelu: a slope per channel, broadcast; integers too */
    rt_ref_tensor y = bin(IR_OP_PRELU, tf(SYMC_F32, SH(2, 2), V(-2, 3, -4, NAN)), tf(SYMC_F32, SH(2), V(0.5, 2)),
                          SYMC_F32, SH(2, 2), NULL, 0);
    EXPECT(y, 0, -1, 3, -2, NAN);
    y = bin(IR_OP_PRELU, ti(SYMC_I32, SH(2), I(-3, 3)), ti(SYMC_I32, SH(1), I(-2)), SYMC_I32, SH(2), NULL, 0);
    EXPECT(y, 0, 6, 3);
    /* bit ops on two's-complement patterns */
    rt_ref_tensor a = ti(SYMC_I8, SH(3), I(-1, 0x55, -128)), b = ti(SYMC_I8, SH(3), I(0x0f, 0x0f, 1));
    y = bin(IR_OP_BITWISE_AND, a, b, SYMC_I8, SH(3), NULL, 0);
    EXPECT(y, 0, 0x0f, 0x05, 0);
    y = bin(IR_OP_BITWISE_OR, a, b, SYMC_I8, SH(3), NULL, 0);
    EXPECT(y, 0, -1, 0x5f, -127);
    y = bin(IR_OP_BITWISE_XOR, a, b, SYMC_I8, SH(3), NULL, 0);
    EXPECT(y, 0, -16, 0x5a, -127);
    rt_ref_tensor f = tf(SYMC_F32, SH(1), V(1)), fy = tz(SYMC_F32, SH(1));
    rt_ref_tensor ff[2] = {f, f};
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "dtype f32 of input 0 is not supported", IR_OP_BITWISE_AND, NULL, 0, ff, 2, &fy, 1);
    /* shifts: unsigned, logical, by the width or more gives 0 */
    symc_attr left = symc_attr_str("direction", "left"), right = symc_attr_str("direction", "right");
    rt_ref_tensor u = ti(SYMC_U8, SH(4), I(0x81, 0x81, 1, 255)), s = ti(SYMC_U8, SH(4), I(1, 7, 8, 200));
    y = bin(IR_OP_BIT_SHIFT, u, s, SYMC_U8, SH(4), &left, 1);
    EXPECT(y, 0, 0x02, 0x80, 0, 0);
    y = bin(IR_OP_BIT_SHIFT, u, s, SYMC_U8, SH(4), &right, 1);
    EXPECT(y, 0, 0x40, 1, 0, 0);
    rt_ref_tensor big = tu64(SH(2), U(1ull << 63, 3)), sh = tu64(SH(2), U(63, 64));
    y = bin(IR_OP_BIT_SHIFT, big, sh, SYMC_U64, SH(2), &right, 1);
    CHECK(tgetu64(&y, 0) == 1 && tgetu64(&y, 1) == 0);
    rt_ref_tensor si[2] = {ti(SYMC_I32, SH(1), I(-8)), ti(SYMC_I32, SH(1), I(1))}, sy = tz(SYMC_I32, SH(1));
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "dtype i32 of input 0 is not supported", IR_OP_BIT_SHIFT, &left, 1, si, 2, &sy, 1);
}

/* f32 add/sub/mul/div run row by row without per-element loads (their fast path): every
 * broadcast pattern against the f64 operation rounded once, bit for bit */
static void test_binary_f32_rows(void) {
    static const ir_op ops[4] = {IR_OP_ADD, IR_OP_SUB, IR_OP_MUL, IR_OP_DIV};
    static const struct {
        int32_t ra, rb;
        int64_t da[3], db[3], dy[3];
    } cs[] = {
        {3, 2, {3, 1, 5}, {4, 1}, {3, 4, 5}}, {2, 0, {2, 3}, {0}, {2, 3}},    {1, 1, {1}, {6}, {6}},
        {2, 2, {4, 7}, {4, 7}, {4, 7}},       {2, 2, {4, 1}, {1, 9}, {4, 9}}, {1, 2, {5}, {3, 5}, {3, 5}},
    };
    int bad = 0;
    for (size_t k = 0; k < sizeof cs / sizeof *cs; k++)
        for (int o = 0; o < 4; o++) {
            int32_t ry = cs[k].ra > cs[k].rb ? cs[k].ra : cs[k].rb;
            rt_ref_tensor a = trandom(SYMC_F32, cs[k].ra, cs[k].da), b = trandom(SYMC_F32, cs[k].rb, cs[k].db);
            rt_ref_tensor in[2] = {a, b};
            rt_ref_tensor y = tz(SYMC_F32, ry, cs[k].dy);
            RUN_OK(ops[o], NULL, 0, in, 2, &y, 1);
            int64_t n = tnumel(&y);
            for (int64_t i = 0; i < n; i++) {
                int64_t rem = i, ia = 0, ib = 0, sa = 1, sb = 1;
                for (int32_t d = ry - 1; d >= 0; d--) {
                    int64_t c = rem % cs[k].dy[d];
                    rem /= cs[k].dy[d];
                    int32_t dA = d - (ry - cs[k].ra), dB = d - (ry - cs[k].rb);
                    if (dA >= 0) ia += (cs[k].da[dA] == 1 ? 0 : c) * sa, sa *= cs[k].da[dA];
                    if (dB >= 0) ib += (cs[k].db[dB] == 1 ? 0 : c) * sb, sb *= cs[k].db[dB];
                }
                double x = tget(&a, ia), z = tget(&b, ib);
                double r = o == 0 ? x + z : o == 1 ? x - z : o == 2 ? x * z : x / z;
                float want = (float)r, got = (float)tget(&y, i);
                bad += memcmp(&want, &got, sizeof want) != 0;
            }
        }
    CHECK_MSG(bad == 0, "%d f32 elements differ from the f64 operation rounded once", bad);
}

int main(void) {
    test_unary_math();
    test_unary_int_bool();
    test_unary_half();
    test_binary_arith();
    test_binary_int();
    test_compare_logic_where();
    test_binary_half();
    test_unary_more();
    test_int_dtypes();
    test_binary_more();
    test_binary_f32_rows();
    tfree_all();
    return check_report("runtime.elementwise");
}
