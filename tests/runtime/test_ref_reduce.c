/* Reductions and normalizations with hand-computed values: axes (negative,
 * several, default all), keepdims, integer sums and means, NaN in max/min,
 * min/prod and the identities of empty reductions, argmax/argmin (ties,
 * select_last_index, NaN),
 * softmax/log_softmax on inner and outer axes, layer_norm/rms_norm with
 * broadcast scale and bias, batch_norm. */
#include "ref_test.h"

static rt_ref_tensor reduce(ir_op op, rt_ref_tensor x, const symc_attr *attrs, uint32_t na, int32_t rank,
                            const int64_t *dims) {
    rt_ref_tensor y = tz(x.dtype, rank, dims);
    RUN_OK(op, attrs, na, &x, 1, &y, 1);
    return y;
}

static void test_reduce(void) {
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    symc_attr a1[2] = {symc_attr_ints("axes", I(1), 1), symc_attr_int("keepdims", 0)};
    rt_ref_tensor y = reduce(IR_OP_REDUCE_SUM, x, a1, 1, SH(2, 1));
    EXPECT(y, 0, 6, 15);
    y = reduce(IR_OP_REDUCE_SUM, x, a1, 2, SH(2));
    EXPECT(y, 0, 6, 15);
    symc_attr neg[1] = {symc_attr_ints("axes", I(-2), 1)};
    y = reduce(IR_OP_REDUCE_SUM, x, neg, 1, SH(1, 3));
    EXPECT(y, 0, 5, 7, 9);
    y = reduce(IR_OP_REDUCE_SUM, x, NULL, 0, SH(1, 1)); /* default: all axes, keepdims 1 */
    EXPECT(y, 0, 21);
    symc_attr all0[2] = {symc_attr_ints("axes", NULL, 0), symc_attr_int("keepdims", 0)};
    y = reduce(IR_OP_REDUCE_MEAN, x, all0, 2, 0, NULL); /* empty axes: all; rank-0 result */
    EXPECT(y, 0, 3.5);
    y = reduce(IR_OP_REDUCE_MEAN, x, a1, 2, SH(2));
    EXPECT(y, 0, 2, 5);
    y = reduce(IR_OP_REDUCE_MAX, x, neg, 1, SH(1, 3));
    EXPECT(y, 0, 4, 5, 6);

    /* two axes of three, one negative: [2,2,2] over axes {0, -1} */
    rt_ref_tensor c = tf(SYMC_F64, SH(2, 2, 2), V(1, 2, 3, 4, 5, 6, 7, 8));
    symc_attr two[2] = {symc_attr_ints("axes", I(0, -1), 2), symc_attr_int("keepdims", 0)};
    y = reduce(IR_OP_REDUCE_SUM, c, two, 2, SH(2));
    EXPECT(y, 0, 1 + 2 + 5 + 6, 3 + 4 + 7 + 8);
    symc_attr two_keep[1] = {symc_attr_ints("axes", I(2, 0), 2)};
    y = reduce(IR_OP_REDUCE_MAX, c, two_keep, 1, SH(1, 2, 1));
    EXPECT(y, 0, 6, 8);

    /* integers: exact sums, truncating means, max */
    rt_ref_tensor xi = ti(SYMC_I64, SH(2, 2), I(INT64_MAX - 1, 1, -1, -2));
    y = reduce(IR_OP_REDUCE_SUM, xi, a1, 2, SH(2));
    CHECK(tgeti(&y, 0) == INT64_MAX && tgeti(&y, 1) == -3);
    y = reduce(IR_OP_REDUCE_MEAN, ti(SYMC_I32, SH(2, 2), I(1, 2, -1, -2)), a1, 2, SH(2));
    EXPECT(y, 0, 1, -1);
    y = reduce(IR_OP_REDUCE_MAX, ti(SYMC_I32, SH(2, 2), I(-5, -7, 3, 2)), a1, 2, SH(2));
    EXPECT(y, 0, -5, 3);

    /* NaN wins in max and spreads through sums */
    rt_ref_tensor xn = tf(SYMC_F32, SH(2, 2), V(NAN, 1, 2, 3));
    y = reduce(IR_OP_REDUCE_MAX, xn, a1, 2, SH(2));
    EXPECT(y, 0, NAN, 3);
    y = reduce(IR_OP_REDUCE_SUM, xn, a1, 2, SH(2));
    EXPECT(y, 0, NAN, 5);

    /* f16 sum accumulates in f64: 2048 + 1 + 1 = 2050 (exact), not 2048 + 1 -> 2048 + 1 -> 2048 */
    rt_ref_tensor xh = tf(SYMC_F16, SH(3), V(2048, 1, 1));
    y = reduce(IR_OP_REDUCE_SUM, xh, NULL, 0, SH(1));
    EXPECT(y, 0, 2050);
    /* empty sum is 0, empty float mean NaN */
    rt_ref_tensor xe = tz(SYMC_F32, SH(2, 0));
    y = reduce(IR_OP_REDUCE_SUM, xe, a1, 2, SH(2));
    EXPECT(y, 0, 0, 0);
    y = reduce(IR_OP_REDUCE_MEAN, xe, a1, 2, SH(2));
    EXPECT(y, 0, NAN, NAN);
    rt_ref_tensor xie = tz(SYMC_I32, SH(2, 0));
    y = reduce(IR_OP_REDUCE_SUM, xie, a1, 2, SH(2));
    EXPECT(y, 0, 0, 0);
    rt_ref_tensor yie = tz(SYMC_I32, SH(2));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "reduce_mean of i32 over an empty set", IR_OP_REDUCE_MEAN, a1, 2, &xie, 1, &yie, 1);
    /* empty max/min/prod give the identity (ONNX opset 18): -inf/+inf, the
     * dtype's lowest/highest integer, 1 */
    y = reduce(IR_OP_REDUCE_MAX, xe, a1, 2, SH(2));
    EXPECT(y, 0, -INFINITY, -INFINITY);
    y = reduce(IR_OP_REDUCE_MIN, xe, a1, 2, SH(2));
    EXPECT(y, 0, INFINITY, INFINITY);
    y = reduce(IR_OP_REDUCE_PROD, xe, a1, 2, SH(2));
    EXPECT(y, 0, 1, 1);
    y = reduce(IR_OP_REDUCE_MAX, xie, a1, 2, SH(2));
    CHECK(tgeti(&y, 0) == INT32_MIN && tgeti(&y, 1) == INT32_MIN);
    y = reduce(IR_OP_REDUCE_MIN, xie, a1, 2, SH(2));
    CHECK(tgeti(&y, 0) == INT32_MAX && tgeti(&y, 1) == INT32_MAX);
    y = reduce(IR_OP_REDUCE_MIN, tz(SYMC_I64, SH(2, 0)), a1, 2, SH(2));
    CHECK(tgeti(&y, 0) == INT64_MAX);
}

static void test_min_prod(void) {
    symc_attr a1[2] = {symc_attr_ints("axes", I(1), 1), symc_attr_int("keepdims", 0)};
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 3), V(3, -1, 2, 0.5, 4, NAN));
    rt_ref_tensor y = reduce(IR_OP_REDUCE_MIN, x, a1, 2, SH(2));
    EXPECT(y, 0, -1, NAN); /* NaN wins */
    y = reduce(IR_OP_REDUCE_PROD, x, a1, 2, SH(2));
    EXPECT(y, 0, -6, NAN);
    symc_attr a0[1] = {symc_attr_ints("axes", I(0), 1)};
    y = reduce(IR_OP_REDUCE_PROD, tf(SYMC_F64, SH(2, 2), V(1.5, -2, 4, 3)), a0, 1, SH(1, 2));
    EXPECT(y, 0, 6, -6);
    /* integers: exact, and a product wraps like the dtype */
    rt_ref_tensor xi = ti(SYMC_I64, SH(2, 2), I(-5, 7, 3, 2));
    y = reduce(IR_OP_REDUCE_MIN, xi, a1, 2, SH(2));
    EXPECT(y, 0, -5, 2);
    y = reduce(IR_OP_REDUCE_PROD, xi, a1, 2, SH(2));
    EXPECT(y, 0, -35, 6);
    y = reduce(IR_OP_REDUCE_PROD, ti(SYMC_I32, SH(1, 2), I(65536, 65537)), a1, 2, SH(1));
    EXPECT(y, 0, 65536); /* 2^32 + 2^16 wraps to 2^16 in i32 */
}

static void test_arg_reduce(void) {
    /* ties: the first index, or the last with select_last_index; NaN is the extreme */
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 4), V(1, 5, 5, 0, 2, NAN, 7, NAN));
    symc_attr a[3] = {symc_attr_int("axis", 1), symc_attr_int("keepdims", 0), symc_attr_int("select_last_index", 0)};
    rt_ref_tensor y = tz(SYMC_I64, SH(2));
    RUN_OK(IR_OP_ARGMAX, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 1);
    a[2] = symc_attr_int("select_last_index", 1);
    RUN_OK(IR_OP_ARGMAX, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 2, 3);
    RUN_OK(IR_OP_ARGMIN, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 3, 3);
    /* axis 0, keepdims, integers */
    rt_ref_tensor xi = ti(SYMC_I32, SH(3, 2), I(4, -1, 9, -1, 9, -3));
    symc_attr b[1] = {symc_attr_int("axis", -2)};
    rt_ref_tensor yk = tz(SYMC_I64, SH(1, 2));
    RUN_OK(IR_OP_ARGMAX, b, 1, &xi, 1, &yk, 1);
    EXPECT(yk, 0, 1, 0);
    RUN_OK(IR_OP_ARGMIN, b, 1, &xi, 1, &yk, 1);
    EXPECT(yk, 0, 0, 2);
    /* an empty axis has no index; the output must be i64 */
    rt_ref_tensor xe = tz(SYMC_F32, SH(2, 0));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "over an empty axis", IR_OP_ARGMAX, a, 3, &xe, 1, &y, 1);
    rt_ref_tensor yf = tz(SYMC_F32, SH(2));
    RUN_FAILS(SYMC_ERR_INTERNAL, "", IR_OP_ARGMAX, a, 3, &x, 1, &yf, 1);
}

static void test_softmax(void) {
    /* softmax([0, ln2, ln3]) = [1, 2, 3] / 6 */
    rt_ref_tensor x = tf(SYMC_F64, SH(2, 3), V(0, log(2), log(3), 5, 5, 5));
    symc_attr ax[1] = {symc_attr_int("axis", -1)};
    rt_ref_tensor y = tz(SYMC_F64, SH(2, 3));
    RUN_OK(IR_OP_SOFTMAX, ax, 1, &x, 1, &y, 1);
    EXPECT(y, 1e-15, 1.0 / 6, 2.0 / 6, 3.0 / 6, 1.0 / 3, 1.0 / 3, 1.0 / 3);
    RUN_OK(IR_OP_LOG_SOFTMAX, ax, 1, &x, 1, &y, 1);
    EXPECT(y, 1e-15, -1.791759469228055, -1.0986122886681098, -0.6931471805599453, -1.0986122886681098,
           -1.0986122886681098, -1.0986122886681098);
    /* axis 0 of [2,2]: columns */
    rt_ref_tensor x2 = tf(SYMC_F32, SH(2, 2), V(0, 1000, log(3), 1000));
    symc_attr ax0[1] = {symc_attr_int("axis", 0)};
    rt_ref_tensor y2 = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_SOFTMAX, ax0, 1, &x2, 1, &y2, 1);
    EXPECT(y2, 1e-7, 0.25, 0.5, 0.75, 0.5); /* large values do not overflow */
    /* f16 at representable results */
    rt_ref_tensor xh = tf(SYMC_F16, SH(1, 4), V(1, 1, 1, 1));
    rt_ref_tensor yh = tz(SYMC_F16, SH(1, 4));
    RUN_OK(IR_OP_SOFTMAX, ax, 1, &xh, 1, &yh, 1);
    EXPECT(yh, 0, 0.25, 0.25, 0.25, 0.25);
    /* a row of -inf: NaN by default (0/0), zeros with zero_masked_rows (torch's attention); a row with
     * one finite value is unaffected */
    rt_ref_tensor xm = tf(SYMC_F32, SH(2, 3), V(-INFINITY, -INFINITY, -INFINITY, -INFINITY, 2, -INFINITY));
    rt_ref_tensor ym = tz(SYMC_F32, SH(2, 3));
    RUN_OK(IR_OP_SOFTMAX, ax, 1, &xm, 1, &ym, 1);
    for (int i = 0; i < 3; i++) CHECK(isnan(tget(&ym, i)));
    symc_attr axz[2] = {symc_attr_int("axis", -1), symc_attr_int("zero_masked_rows", 1)};
    RUN_OK(IR_OP_SOFTMAX, axz, 2, &xm, 1, &ym, 1);
    EXPECT(ym, 0, 0, 0, 0, 0, 1, 0);
}

static void test_layer_rms_norm(void) {
    /* [1,2,3,4]: mean 2.5, var 1.25 */
    rt_ref_tensor x = tf(SYMC_F64, SH(2, 4), V(1, 2, 3, 4, 2, 2, 2, 2));
    symc_attr at[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 0)};
    rt_ref_tensor y = tz(SYMC_F64, SH(2, 4));
    RUN_OK(IR_OP_LAYER_NORM, at, 2, &x, 1, &y, 1);
    EXPECT(y, 1e-15, -1.3416407864998738, -0.4472135954999579, 0.4472135954999579, 1.3416407864998738, NAN, NAN, NAN,
           NAN); /* var 0, eps 0: 0/0 */
    symc_attr at_eps[2] = {symc_attr_int("axis", 1), symc_attr_float("epsilon", 1.0)};
    RUN_OK(IR_OP_LAYER_NORM, at_eps, 2, &x, 1, &y, 1);
    EXPECT(y, 1e-15, -1.5 / 1.5, -0.5 / 1.5, 0.5 / 1.5, 1.5 / 1.5, 0, 0, 0, 0);
    /* scale [4] and bias [1] (broadcast); scale in f32 under an f64 x */
    rt_ref_tensor in[3] = {x, tf(SYMC_F32, SH(4), V(1, 2, 1, 2)), tf(SYMC_F64, SH(1), V(10))};
    RUN_OK(IR_OP_LAYER_NORM, at, 2, in, 3, &y, 1);
    EXPECT(y, 1e-15, 10 - 1.3416407864998738, 10 - 2 * 0.4472135954999579, 10.4472135954999579,
           10 + 2 * 1.3416407864998738, NAN, NAN, NAN, NAN);
    /* normalizing over two dims: [2,2,2] axis 1 = each batch of 4 */
    rt_ref_tensor x3 = tf(SYMC_F32, SH(2, 2, 2), V(1, 2, 3, 4, 4, 3, 2, 1));
    symc_attr at1[2] = {symc_attr_int("axis", 1), symc_attr_float("epsilon", 0)};
    rt_ref_tensor sc = tf(SYMC_F32, SH(2, 1), V(1, -1)); /* broadcast over the last dim */
    rt_ref_tensor in3[2] = {x3, sc};
    rt_ref_tensor y3 = tz(SYMC_F32, SH(2, 2, 2));
    RUN_OK(IR_OP_LAYER_NORM, at1, 2, in3, 2, &y3, 1);
    EXPECT(y3, 1e-6, -1.3416407864998738, -0.4472135954999579, -0.4472135954999579, -1.3416407864998738,
           1.3416407864998738, 0.4472135954999579, 0.4472135954999579, 1.3416407864998738);

    /* rms_norm: [3, 4] -> / sqrt(12.5), scale [2, 0.5] */
    rt_ref_tensor xr = tf(SYMC_F64, SH(1, 2), V(3, 4));
    rt_ref_tensor yr = tz(SYMC_F64, SH(1, 2));
    RUN_OK(IR_OP_RMS_NORM, at, 2, &xr, 1, &yr, 1);
    EXPECT(yr, 1e-15, 0.848528137423857, 1.131370849898476);
    rt_ref_tensor inr[2] = {xr, tf(SYMC_F64, SH(2), V(2, 0.5))};
    RUN_OK(IR_OP_RMS_NORM, at, 2, inr, 2, &yr, 1);
    EXPECT(yr, 1e-15, 2 * 0.848528137423857, 0.5 * 1.131370849898476);
    symc_attr at_e[2] = {symc_attr_int("axis", 0), symc_attr_float("epsilon", 3.5)};
    RUN_OK(IR_OP_RMS_NORM, at_e, 2, &xr, 1, &yr, 1); /* sqrt(12.5 + 3.5) = 4 */
    EXPECT(yr, 1e-15, 0.75, 1);
}

static void test_batch_norm(void) {
    /* x [1,2,1,2]; channel 0 = [1,2], channel 1 = [3,4] */
    rt_ref_tensor in[5] = {tf(SYMC_F32, SH(1, 2, 1, 2), V(1, 2, 3, 4)), tf(SYMC_F32, SH(2), V(1, 2)),
                           tf(SYMC_F32, SH(2), V(0, 1)), tf(SYMC_F32, SH(2), V(1, 3)), tf(SYMC_F32, SH(2), V(4, 1))};
    symc_attr eps = symc_attr_float("epsilon", 0);
    rt_ref_tensor y = tz(SYMC_F32, SH(1, 2, 1, 2));
    RUN_OK(IR_OP_BATCH_NORM, &eps, 1, in, 5, &y, 1);
    EXPECT(y, 0, 0, 0.5, 1, 3);
    /* rank 2 (no spatial dims), bf16 x with f32 statistics */
    rt_ref_tensor in2[5] = {tf(SYMC_BF16, SH(2, 2), V(1, 2, 3, 4)), in[1], in[2], in[3], in[4]};
    rt_ref_tensor y2 = tz(SYMC_BF16, SH(2, 2));
    RUN_OK(IR_OP_BATCH_NORM, &eps, 1, in2, 5, &y2, 1);
    EXPECT(y2, 0, 0, -1, 1, 3);
    /* a statistic of the wrong length */
    in[4] = tf(SYMC_F32, SH(3), V(1, 1, 1));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "var (input 4) has shape [3], must be [2]", IR_OP_BATCH_NORM, &eps, 1, in, 5, &y,
              1);
}

int main(void) {
    test_reduce();
    test_min_prod();
    test_arg_reduce();
    test_softmax();
    test_layer_rms_norm();
    test_batch_norm();
    tfree_all();
    return check_report("runtime.reduce");
}
