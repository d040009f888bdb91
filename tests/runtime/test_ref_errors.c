/* Bad input never crashes and every failure explains itself: arity, broken
 * tensors, unsupported dtypes, integer division by zero, out-of-range axes,
 * missing or mistyped attributes (including unevaluated symbolic dims), and
 * the cross-check of the caller's output shapes (shape inference) against
 * the kernel's own. Each message names the node and the op. */
#include "ref_test.h"

static void test_arity_and_tensors(void) {
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 3));
    rt_ref_tensor two[2] = {x, x};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "node 'n1' (add): has 1 inputs, needs 2", IR_OP_ADD, NULL, 0, &x, 1, &y, 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "(concat): has 0 inputs, needs at least 1", IR_OP_CONCAT, NULL, 0, NULL, 0, &y, 1);
    rt_ref_tensor four[4] = {x, x, x, x};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "has 4 inputs, needs 1 to 3", IR_OP_LAYER_NORM, NULL, 0, four, 4, &y, 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "(relu): has 2 outputs, needs 1", IR_OP_RELU, NULL, 0, &x, 1, two, 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "has 0 outputs, needs 1 or more", IR_OP_SPLIT, NULL, 0, &x, 1, two, 0);
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "(constant): the reference backend has no kernel", IR_OP_CONSTANT, NULL, 0, NULL, 0,
              &y, 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "op id", IR_OP_COUNT, NULL, 0, &x, 1, &y, 1);

    rt_ref_tensor nodata = x;
    nodata.data = NULL;
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "input 0 has 6 elements but no data", IR_OP_RELU, NULL, 0, &nodata, 1, &y, 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "output 0 has 6 elements but no data", IR_OP_RELU, NULL, 0, &x, 1, &nodata, 1);
    rt_ref_tensor r9 = x;
    r9.rank = 9;
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "input 0 has rank 9, must be 0..8", IR_OP_RELU, NULL, 0, &r9, 1, &y, 1);
    rt_ref_tensor neg = x;
    neg.dims[1] = -3;
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "negative dim -3 at axis 1", IR_OP_RELU, NULL, 0, &neg, 1, &y, 1);
    rt_ref_tensor huge = x;
    huge.dims[0] = (int64_t)1 << 40, huge.dims[1] = (int64_t)1 << 40;
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "too many elements", IR_OP_RELU, NULL, 0, &huge, 1, &y, 1);
    rt_ref_tensor bad_dt = x;
    bad_dt.dtype = (symc_dtype)42;
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "invalid dtype 42", IR_OP_RELU, NULL, 0, &bad_dt, 1, &y, 1);
    /* empty tensors may have no data */
    rt_ref_tensor e = {SYMC_F32, 2, {0, 3}, NULL}, ye = {SYMC_F32, 2, {0, 3}, NULL};
    RUN_OK(IR_OP_EXP, NULL, 0, &e, 1, &ye, 1);

    /* a NULL node name and a NULL error are fine */
    symc_error err;
    CHECK(rt_ref_run(IR_OP_ADD, NULL, NULL, 0, &x, 1, &y, 1, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "node '?' (add)");
    CHECK(rt_ref_run(IR_OP_ADD, "q", NULL, 0, &x, 1, &y, 1, NULL) == SYMC_ERR_INVALID_ARG);
}

static void test_dtypes(void) {
    rt_ref_tensor xi = ti(SYMC_I64, SH(2), I(1, 2));
    rt_ref_tensor yi = tz(SYMC_I64, SH(2));
    RUN_FAILS(SYMC_ERR_UNSUPPORTED,
              "node 'n1' (erf): dtype i64 of input 0 is not supported "
              "(supported: f32 f16 bf16 f64)",
              IR_OP_ERF, NULL, 0, &xi, 1, &yi, 1);
    symc_attr ax = symc_attr_int("axis", 0);
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "(softmax): dtype i64", IR_OP_SOFTMAX, &ax, 1, &xi, 1, &yi, 1);
    rt_ref_tensor xf = tf(SYMC_F32, SH(2), V(1, 0));
    rt_ref_tensor yb = tz(SYMC_BOOL, SH(2));
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "(not): dtype f32", IR_OP_NOT, NULL, 0, &xf, 1, &yb, 1);
    rt_ref_tensor pair_i[2] = {xi, xi};
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "(and): dtype i64", IR_OP_AND, NULL, 0, pair_i, 2, &yb, 1);
    rt_ref_tensor b = ti(SYMC_BOOL, SH(2), I(1, 0));
    rt_ref_tensor pair_b[2] = {b, b};
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "(add): dtype bool", IR_OP_ADD, NULL, 0, pair_b, 2, &yb, 1);
    rt_ref_tensor ci[2] = {ti(SYMC_I32, SH(1, 1, 1, 1), I(1)), ti(SYMC_I32, SH(1, 1, 1, 1), I(1))};
    rt_ref_tensor yc = tz(SYMC_I32, SH(1, 1, 1, 1));
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "(conv2d): dtype i32", IR_OP_CONV2D, NULL, 0, ci, 2, &yc, 1);
    rt_ref_tensor w3[3] = {xf, xi, xi};
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "(where): dtype f32", IR_OP_WHERE, NULL, 0, w3, 3, &yi, 1);
    rt_ref_tensor w3b[3] = {b, xf, xi};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "input 1 is f32 but input 2 is i64", IR_OP_WHERE, NULL, 0, w3b, 3, &yi, 1);
    /* binary operands must agree (pow's exponent excepted) */
    rt_ref_tensor mix[2] = {xf, tf(SYMC_F64, SH(2), V(1, 2))};
    rt_ref_tensor yf = tz(SYMC_F32, SH(2));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "input 1 is f64 but must be f32", IR_OP_ADD, NULL, 0, mix, 2, &yf, 1);
    RUN_OK(IR_OP_POW, NULL, 0, mix, 2, &yf, 1);
    /* layer_norm's scale must be a float */
    rt_ref_tensor ln[2] = {xf, xi};
    symc_attr lna[2] = {symc_attr_int("axis", 0), symc_attr_float("epsilon", 1e-5)};
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "scale (input 1) is i64", IR_OP_LAYER_NORM, lna, 2, ln, 2, &yf, 1);
}

static void test_div_zero(void) {
    rt_ref_tensor a = ti(SYMC_I32, SH(2, 2), I(1, 5, 7, 9));
    rt_ref_tensor b = ti(SYMC_I32, SH(2), I(1, 0));
    rt_ref_tensor in[2] = {a, b};
    rt_ref_tensor y = tz(SYMC_I32, SH(2, 2));
    RUN_FAILS(SYMC_ERR_DIV_ZERO, "(div): integer division by zero at output element [0, 1] (5 / 0)", IR_OP_DIV, NULL, 0,
              in, 2, &y, 1);
    RUN_FAILS(SYMC_ERR_DIV_ZERO, "(mod): integer modulo by zero at output element [0, 1] (5 % 0)", IR_OP_MOD, NULL, 0,
              in, 2, &y, 1);
    /* floats divide by zero the IEEE way */
    rt_ref_tensor fin[2] = {tf(SYMC_F32, SH(1), V(1)), tf(SYMC_F32, SH(1), V(0))};
    rt_ref_tensor fy = tz(SYMC_F32, SH(1));
    RUN_OK(IR_OP_DIV, NULL, 0, fin, 2, &fy, 1);
    EXPECT(fy, 0, INFINITY);
    rt_ref_tensor p[2] = {ti(SYMC_I64, SH(1), I(2)), ti(SYMC_I64, SH(1), I(-1))};
    rt_ref_tensor py = tz(SYMC_I64, SH(1));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "integer 2 to the negative integer power -1", IR_OP_POW, NULL, 0, p, 2, &py, 1);
}

static void test_shape_crosscheck(void) {
    rt_ref_tensor in[2] = {tf(SYMC_F32, SH(2, 1), V(1, 2)), tf(SYMC_F32, SH(3), V(1, 2, 3))};
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 2));
    RUN_FAILS(SYMC_ERR_INTERNAL,
              "node 'n1' (add): output 0: the caller's f32[2, 2] disagrees with f32[2, 3] computed "
              "from the inputs",
              IR_OP_ADD, NULL, 0, in, 2, &y, 1);
    rt_ref_tensor y3 = tz(SYMC_F32, SH(1, 2, 3));
    RUN_FAILS(SYMC_ERR_INTERNAL, "f32[1, 2, 3] disagrees with f32[2, 3]", IR_OP_ADD, NULL, 0, in, 2, &y3, 1);
    rt_ref_tensor yf = tz(SYMC_F32, SH(2, 3));
    RUN_FAILS(SYMC_ERR_INTERNAL, "f32[2, 3] disagrees with bool[2, 3]", IR_OP_LESS, NULL, 0, in, 2, &yf, 1);
    symc_attr axes = symc_attr_ints("axes", I(0), 1);
    rt_ref_tensor yr = tz(SYMC_F32, SH(3));
    RUN_FAILS(SYMC_ERR_INTERNAL, "(reduce_sum): output 0: the caller's f32[3] disagrees with f32[1] computed",
              IR_OP_REDUCE_SUM, &axes, 1, &in[1], 1, &yr, 1);
    /* split checks each output */
    symc_attr sp[2] = {symc_attr_int("axis", 0), symc_attr_ints("sizes", I(1, 2), 2)};
    rt_ref_tensor outs[2] = {tz(SYMC_F32, SH(1)), tz(SYMC_F32, SH(1))};
    RUN_FAILS(SYMC_ERR_INTERNAL, "output 1: the caller's f32[1] disagrees with f32[2]", IR_OP_SPLIT, sp, 2, &in[1], 1,
              outs, 2);
    /* shapes that do not broadcast are the inputs' fault */
    rt_ref_tensor nb[2] = {tf(SYMC_F32, SH(2), V(1, 2)), tf(SYMC_F32, SH(3), V(1, 2, 3))};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "shapes [2] and [3] do not broadcast", IR_OP_ADD, NULL, 0, nb, 2, &yf, 1);
}

static void test_attributes(void) {
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 3));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "(leaky_relu): missing required attribute 'alpha'", IR_OP_LEAKY_RELU, NULL, 0, &x,
              1, &y, 1);
    symc_attr fax = symc_attr_float("axis", 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "attribute 'axis' is float, must be int", IR_OP_SOFTMAX, &fax, 1, &x, 1, &y, 1);
    symc_attr ax2 = symc_attr_int("axis", 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "axis 2 is out of range [-2, 1] for rank 2", IR_OP_SOFTMAX, &ax2, 1, &x, 1, &y, 1);
    symc_attr gm = symc_attr_str("approximate", "fast");
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "'approximate' = 'fast' must be none or tanh", IR_OP_GELU, &gm, 1, &x, 1, &y, 1);
    symc_attr kd[2] = {symc_attr_ints("axes", I(1, -1), 2), symc_attr_int("keepdims", 2)};
    rt_ref_tensor yr = tz(SYMC_F32, SH(2, 1));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "'keepdims' = 2 must be 0 or 1", IR_OP_REDUCE_SUM, kd, 2, &x, 1, &yr, 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "axis -1 appears twice in 'axes'", IR_OP_REDUCE_SUM, kd, 1, &x, 1, &yr, 1);
    /* dims attributes must arrive evaluated */
    symc_dim dims[2] = {0, 1};
    symc_attr sym = symc_attr_dims("shape", dims, 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "attribute 'shape' is still symbolic dims", IR_OP_RESHAPE, &sym, 1, &x, 1, &y, 1);
    symc_attr nul = {0};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "attribute 0 has no name", IR_OP_RELU, &nul, 1, &x, 1, &y, 1);
    symc_attr nodata = symc_attr_ints("perm", NULL, 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "attribute 'perm' has no data", IR_OP_TRANSPOSE, &nodata, 1, &x, 1, &y, 1);
    symc_attr st0[1] = {symc_attr_ints("strides", I(0, 1), 2)};
    rt_ref_tensor cin[2] = {tz(SYMC_F32, SH(1, 1, 2, 2)), tz(SYMC_F32, SH(1, 1, 1, 1))};
    rt_ref_tensor cy = tz(SYMC_F32, SH(1, 1, 2, 2));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "stride 0 and dilation 1 along height", IR_OP_CONV2D, st0, 1, cin, 2, &cy, 1);
    symc_attr pads3[1] = {symc_attr_ints("pads", I(0, 0, 0), 3)};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "attribute 'pads' has 3 entries, must have 4", IR_OP_CONV2D, pads3, 1, cin, 2, &cy,
              1);
    symc_attr m0 = symc_attr_int("fmod", 3);
    rt_ref_tensor pr[2] = {x, x};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "'fmod' = 3 must be 0 or 1", IR_OP_MOD, &m0, 1, pr, 2, &y, 1);
    /* ranks the op cannot take */
    rt_ref_tensor s = tf(SYMC_F32, 0, NULL, V(1));
    rt_ref_tensor ys = tz(SYMC_F32, 0, NULL);
    rt_ref_tensor mm[2] = {s, x};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "matmul needs rank >= 1", IR_OP_MATMUL, NULL, 0, mm, 2, &ys, 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "missing required attribute 'kernel'", IR_OP_MAX_POOL2D, st0, 0, &x, 1, &y, 1);
    symc_attr k[1] = {symc_attr_ints("kernel", I(1, 1), 2)};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "must be 4-D (NCHW)", IR_OP_MAX_POOL2D, k, 1, &x, 1, &y, 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "batch_norm needs rank >= 2", IR_OP_BATCH_NORM,
              (symc_attr[]){symc_attr_float("epsilon", 0)}, 1, (rt_ref_tensor[]){s, s, s, s, s}, 5, &ys, 1);
    rt_ref_tensor lx[2] = {x, tf(SYMC_F32, SH(2), V(1, 2))};
    symc_attr lna[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 0)};
    RUN_FAILS(SYMC_ERR_INVALID_ARG,
              "scale (input 1) of shape [2] does not broadcast to the "
              "normalized dims [3]",
              IR_OP_LAYER_NORM, lna, 2, lx, 2, &y, 1);
}

int main(void) {
    test_arity_and_tensors();
    test_dtypes();
    test_div_zero();
    test_shape_crosscheck();
    test_attributes();
    tfree_all();
    return check_report("runtime.errors");
}
