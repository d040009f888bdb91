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

int main(void) {
    test_unary_math();
    test_unary_int_bool();
    test_unary_half();
    test_binary_arith();
    test_binary_int();
    test_compare_logic_where();
    test_binary_half();
    tfree_all();
    return check_report("runtime.elementwise");
}
