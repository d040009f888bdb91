/* Data movement ops with hand-computed values: reshape (-1), transpose,
 * expand (both-way broadcast), concat, slice (ONNX clamping, negative steps),
 * gather (negative indices, out-of-range errors), squeeze/unsqueeze/flatten,
 * split, pad (constant/reflect/edge, negative pads), shape_of; several dtypes
 * since these ops copy bits. */
#include "ref_test.h"

static rt_ref_tensor iota(symc_dtype dt, int32_t rank, const int64_t *dims) {
    rt_ref_tensor t = tz(dt, rank, dims);
    for (int64_t i = 0; i < tnumel(&t); i++) tseti(&t, i, i + 1);
    return t;
}

static void test_reshape_transpose_expand(void) {
    rt_ref_tensor x = iota(SYMC_I64, SH(2, 3));
    symc_attr sh = symc_attr_ints("shape", I(3, -1), 2);
    rt_ref_tensor y = tz(SYMC_I64, SH(3, 2));
    RUN_OK(IR_OP_RESHAPE, &sh, 1, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 2, 3, 4, 5, 6);
    symc_attr sh0 = symc_attr_ints("shape", I(0, -1), 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "cannot infer the -1", IR_OP_RESHAPE, &sh0, 1, &x, 1, &y, 1);
    symc_attr sh2 = symc_attr_ints("shape", I(-1, -1), 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "more than one -1", IR_OP_RESHAPE, &sh2, 1, &x, 1, &y, 1);
    symc_attr sh4 = symc_attr_ints("shape", I(4, 2), 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "input [2, 3] (6 elements) cannot be reshaped to [4, 2]", IR_OP_RESHAPE, &sh4, 1,
              &x, 1, &y, 1);
    rt_ref_tensor e = tz(SYMC_F32, SH(0, 4));
    symc_attr she = symc_attr_ints("shape", I(2, 0, 2), 3);
    rt_ref_tensor ye = tz(SYMC_F32, SH(2, 0, 2));
    RUN_OK(IR_OP_RESHAPE, &she, 1, &e, 1, &ye, 1);

    symc_attr perm = symc_attr_ints("perm", I(1, 0), 2);
    RUN_OK(IR_OP_TRANSPOSE, &perm, 1, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 4, 2, 5, 3, 6);
    /* [2,3,2] perm [2,0,1] -> [2,2,3]: y[k,i,j] = x[i,j,k] */
    rt_ref_tensor x3 = iota(SYMC_F16, SH(2, 3, 2));
    symc_attr p3 = symc_attr_ints("perm", I(2, 0, 1), 3);
    rt_ref_tensor y3 = tz(SYMC_F16, SH(2, 2, 3));
    RUN_OK(IR_OP_TRANSPOSE, &p3, 1, &x3, 1, &y3, 1);
    EXPECT(y3, 0, 1, 3, 5, 7, 9, 11, 2, 4, 6, 8, 10, 12);
    symc_attr bad = symc_attr_ints("perm", I(0, 0), 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "'perm' [0, 0] is not a permutation of 0..1", IR_OP_TRANSPOSE, &bad, 1, &x, 1, &y,
              1);

    /* expand [3,1] to [2,1,2] -> [2,3,2] (ONNX: both shapes broadcast) */
    rt_ref_tensor c = iota(SYMC_I32, SH(3, 1));
    symc_attr es = symc_attr_ints("shape", I(2, 1, 2), 3);
    rt_ref_tensor ye2 = tz(SYMC_I32, SH(2, 3, 2));
    RUN_OK(IR_OP_EXPAND, &es, 1, &c, 1, &ye2, 1);
    EXPECT(ye2, 0, 1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3);
    symc_attr es1 = symc_attr_ints("shape", I(1), 1); /* a smaller target keeps the input's shape */
    rt_ref_tensor ye3 = tz(SYMC_I32, SH(3, 1));
    RUN_OK(IR_OP_EXPAND, &es1, 1, &c, 1, &ye3, 1);
    EXPECT(ye3, 0, 1, 2, 3);
    symc_attr es4 = symc_attr_ints("shape", I(4, 2), 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "do not broadcast", IR_OP_EXPAND, &es4, 1, &c, 1, &ye2, 1);
    rt_ref_tensor sc = tf(SYMC_BOOL, 0, NULL, V(1));
    symc_attr ess = symc_attr_ints("shape", I(2, 2), 2);
    rt_ref_tensor ysc = tz(SYMC_BOOL, SH(2, 2));
    RUN_OK(IR_OP_EXPAND, &ess, 1, &sc, 1, &ysc, 1);
    EXPECT(ysc, 0, 1, 1, 1, 1);
}

static void test_concat_split(void) {
    rt_ref_tensor in[3] = {iota(SYMC_F32, SH(2, 1)), tf(SYMC_F32, SH(2, 2), V(10, 11, 12, 13)), tz(SYMC_F32, SH(2, 0))};
    symc_attr ax = symc_attr_int("axis", -1);
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 3));
    RUN_OK(IR_OP_CONCAT, &ax, 1, in, 3, &y, 1);
    EXPECT(y, 0, 1, 10, 11, 2, 12, 13);
    rt_ref_tensor in0[2] = {iota(SYMC_BOOL, SH(1, 2)), tf(SYMC_BOOL, SH(2, 2), V(0, 1, 0, 0))};
    symc_attr ax0 = symc_attr_int("axis", 0);
    rt_ref_tensor y0 = tz(SYMC_BOOL, SH(3, 2));
    RUN_OK(IR_OP_CONCAT, &ax0, 1, in0, 2, &y0, 1);
    EXPECT(y0, 0, 1, 1, 0, 1, 0, 0);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "input 1 [2, 2] does not match input 0 [2, 1] outside axis 0", IR_OP_CONCAT, &ax0,
              1, in, 2, &y, 1);

    /* split [2,4] on axis 1 into sizes [1, 3] and [5] into [2, 0, 3] */
    rt_ref_tensor x = iota(SYMC_I64, SH(2, 4));
    symc_attr sp[2] = {symc_attr_int("axis", 1), symc_attr_ints("sizes", I(1, 3), 2)};
    rt_ref_tensor outs[2] = {tz(SYMC_I64, SH(2, 1)), tz(SYMC_I64, SH(2, 3))};
    RUN_OK(IR_OP_SPLIT, sp, 2, &x, 1, outs, 2);
    EXPECT(outs[0], 0, 1, 5);
    EXPECT(outs[1], 0, 2, 3, 4, 6, 7, 8);
    rt_ref_tensor v = iota(SYMC_F64, SH(5));
    symc_attr sp3[2] = {symc_attr_int("axis", -1), symc_attr_ints("sizes", I(2, 0, 3), 3)};
    rt_ref_tensor o3[3] = {tz(SYMC_F64, SH(2)), tz(SYMC_F64, SH(0)), tz(SYMC_F64, SH(3))};
    RUN_OK(IR_OP_SPLIT, sp3, 2, &v, 1, o3, 3);
    EXPECT(o3[0], 0, 1, 2);
    EXPECT(o3[2], 0, 3, 4, 5);
    symc_attr spb[2] = {symc_attr_int("axis", 0), symc_attr_ints("sizes", I(2, 2), 2)};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "sizes add up to 4 but axis 0 has 5", IR_OP_SPLIT, spb, 2, &v, 1, o3, 2);
}

static void test_slice(void) {
    rt_ref_tensor x = iota(SYMC_I32, SH(10));
    symc_attr a[3] = {symc_attr_ints("starts", I(2), 1), symc_attr_ints("ends", I(7), 1),
                      symc_attr_ints("steps", I(2), 1)};
    rt_ref_tensor y = tz(SYMC_I32, SH(3));
    RUN_OK(IR_OP_SLICE, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 3, 5, 7);
    /* reverse everything: start -1, end INT64_MIN, step -1 */
    symc_attr r[3] = {symc_attr_ints("starts", I(-1), 1), symc_attr_ints("ends", I(INT64_MIN), 1),
                      symc_attr_ints("steps", I(-1), 1)};
    rt_ref_tensor yr = tz(SYMC_I32, SH(10));
    RUN_OK(IR_OP_SLICE, r, 3, &x, 1, &yr, 1);
    EXPECT(yr, 0, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
    /* the last three: start -3, end INT64_MAX (clamped) */
    symc_attr l[2] = {symc_attr_ints("starts", I(-3), 1), symc_attr_ints("ends", I(INT64_MAX), 1)};
    RUN_OK(IR_OP_SLICE, l, 2, &x, 1, &y, 1);
    EXPECT(y, 0, 8, 9, 10);
    /* start past the end: empty; step -3 from 100 (clamped to 9) down to 0 exclusive */
    symc_attr e[2] = {symc_attr_ints("starts", I(12), 1), symc_attr_ints("ends", I(20), 1)};
    rt_ref_tensor y0 = tz(SYMC_I32, SH(0));
    RUN_OK(IR_OP_SLICE, e, 2, &x, 1, &y0, 1);
    symc_attr n3[3] = {symc_attr_ints("starts", I(100), 1), symc_attr_ints("ends", I(0), 1),
                       symc_attr_ints("steps", I(-3), 1)};
    RUN_OK(IR_OP_SLICE, n3, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 10, 7, 4);
    /* a huge negative step takes one element */
    symc_attr hs[3] = {symc_attr_ints("starts", I(-1), 1), symc_attr_ints("ends", I(INT64_MIN), 1),
                       symc_attr_ints("steps", I(INT64_MIN), 1)};
    rt_ref_tensor y1 = tz(SYMC_I32, SH(1));
    RUN_OK(IR_OP_SLICE, hs, 3, &x, 1, &y1, 1);
    EXPECT(y1, 0, 10);
    /* 2-D with axes [-1] only: [2,4] columns 1..3 */
    rt_ref_tensor m = iota(SYMC_BF16, SH(2, 4));
    symc_attr ax[3] = {symc_attr_ints("starts", I(1), 1), symc_attr_ints("ends", I(-1), 1),
                       symc_attr_ints("axes", I(-1), 1)};
    rt_ref_tensor ym = tz(SYMC_BF16, SH(2, 2));
    RUN_OK(IR_OP_SLICE, ax, 3, &m, 1, &ym, 1);
    EXPECT(ym, 0, 2, 3, 6, 7);
    /* both axes, listed in reverse order, one reversed */
    symc_attr two[4] = {symc_attr_ints("starts", I(-1, 0), 2), symc_attr_ints("ends", I(INT64_MIN, 1), 2),
                        symc_attr_ints("axes", I(1, 0), 2), symc_attr_ints("steps", I(-2, 1), 2)};
    rt_ref_tensor y2 = tz(SYMC_BF16, SH(1, 2));
    RUN_OK(IR_OP_SLICE, two, 4, &m, 1, &y2, 1);
    EXPECT(y2, 0, 4, 2);
    symc_attr z[3] = {a[0], a[1], symc_attr_ints("steps", I(0), 1)};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "step 0 for axis 0", IR_OP_SLICE, z, 3, &x, 1, &y, 1);
}

static void test_gather(void) {
    rt_ref_tensor x = iota(SYMC_F32, SH(3, 2));
    rt_ref_tensor in[2] = {x, ti(SYMC_I64, SH(2), I(2, -3))};
    symc_attr ax0 = symc_attr_int("axis", 0);
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_GATHER, &ax0, 1, in, 2, &y, 1);
    EXPECT(y, 0, 5, 6, 1, 2);
    /* axis -1 with 2-D i32 indices: [3,2] x idx [2,2] -> [3,2,2] */
    rt_ref_tensor in1[2] = {x, ti(SYMC_I32, SH(2, 2), I(1, 0, -1, 1))};
    symc_attr axm = symc_attr_int("axis", -1);
    rt_ref_tensor y1 = tz(SYMC_F32, SH(3, 2, 2));
    RUN_OK(IR_OP_GATHER, &axm, 1, in1, 2, &y1, 1);
    EXPECT(y1, 0, 2, 1, 2, 2, 4, 3, 4, 4, 6, 5, 6, 6);
    /* scalar index drops the axis */
    rt_ref_tensor in2[2] = {x, ti(SYMC_I64, 0, NULL, I(1))};
    rt_ref_tensor y2 = tz(SYMC_F32, SH(2));
    RUN_OK(IR_OP_GATHER, &ax0, 1, in2, 2, &y2, 1);
    EXPECT(y2, 0, 3, 4);
    /* out of range: named index, position and allowed range; nothing read */
    rt_ref_tensor in3[2] = {x, ti(SYMC_I64, SH(3), I(0, 3, 1))};
    rt_ref_tensor y3 = tz(SYMC_F32, SH(3, 2));
    RUN_FAILS(SYMC_ERR_RANGE, "index 3 at indices[1] is out of range [-3, 2] for axis 0 of size 3", IR_OP_GATHER, &ax0,
              1, in3, 2, &y3, 1);
    rt_ref_tensor in4[2] = {x, ti(SYMC_I32, SH(1, 1), I(-4))};
    rt_ref_tensor y4 = tz(SYMC_F32, SH(1, 1, 2));
    RUN_FAILS(SYMC_ERR_RANGE, "index -4 at indices[0, 0] is out of range [-3, 2]", IR_OP_GATHER, &ax0, 1, in4, 2, &y4,
              1);
    rt_ref_tensor in5[2] = {x, tf(SYMC_F32, SH(1), V(0))};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "indices (input 1) are f32, must be i32 or i64", IR_OP_GATHER, &ax0, 1, in5, 2, &y2,
              1);
}

static void test_squeeze_unsqueeze_flatten(void) {
    rt_ref_tensor x = iota(SYMC_I64, SH(1, 3, 1));
    rt_ref_tensor y = tz(SYMC_I64, SH(3));
    RUN_OK(IR_OP_SQUEEZE, NULL, 0, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 2, 3);
    symc_attr a = symc_attr_ints("axes", I(-1), 1);
    rt_ref_tensor y2 = tz(SYMC_I64, SH(1, 3));
    RUN_OK(IR_OP_SQUEEZE, &a, 1, &x, 1, &y2, 1);
    EXPECT(y2, 0, 1, 2, 3);
    symc_attr a1 = symc_attr_ints("axes", I(1), 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "cannot squeeze axis 1 of size 3", IR_OP_SQUEEZE, &a1, 1, &x, 1, &y2, 1);

    rt_ref_tensor v = iota(SYMC_F32, SH(3));
    symc_attr ua = symc_attr_ints("axes", I(0, -1), 2);
    rt_ref_tensor yu = tz(SYMC_F32, SH(1, 3, 1));
    RUN_OK(IR_OP_UNSQUEEZE, &ua, 1, &v, 1, &yu, 1);
    EXPECT(yu, 0, 1, 2, 3);
    symc_attr ub = symc_attr_ints("axes", I(1, 1), 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "appears twice", IR_OP_UNSQUEEZE, &ub, 1, &v, 1, &yu, 1);
    rt_ref_tensor s = tf(SYMC_F32, 0, NULL, V(7));
    symc_attr u0 = symc_attr_ints("axes", I(0), 1);
    rt_ref_tensor ys = tz(SYMC_F32, SH(1));
    RUN_OK(IR_OP_UNSQUEEZE, &u0, 1, &s, 1, &ys, 1);
    EXPECT(ys, 0, 7);

    rt_ref_tensor f = iota(SYMC_I32, SH(2, 3, 4));
    rt_ref_tensor yf = tz(SYMC_I32, SH(2, 12));
    RUN_OK(IR_OP_FLATTEN, NULL, 0, &f, 1, &yf, 1); /* default axis 1 */
    CHECK(tgeti(&yf, 23) == 24);
    symc_attr f0 = symc_attr_int("axis", 0), fm = symc_attr_int("axis", -1), f3 = symc_attr_int("axis", 3);
    rt_ref_tensor y0 = tz(SYMC_I32, SH(1, 24)), ym = tz(SYMC_I32, SH(6, 4)), y3 = tz(SYMC_I32, SH(24, 1));
    RUN_OK(IR_OP_FLATTEN, &f0, 1, &f, 1, &y0, 1);
    RUN_OK(IR_OP_FLATTEN, &fm, 1, &f, 1, &ym, 1);
    RUN_OK(IR_OP_FLATTEN, &f3, 1, &f, 1, &y3, 1);
    CHECK(tgeti(&ym, 5) == 6 && tgeti(&y3, 23) == 24);
}

static void test_pad_shape_of(void) {
    /* constant: [2,2] with one row on top and one column on the right, value 9 */
    rt_ref_tensor x = iota(SYMC_F32, SH(2, 2));
    symc_attr pc[2] = {symc_attr_ints("pads", I(1, 0, 0, 1), 4), symc_attr_float("value", 9)};
    rt_ref_tensor y = tz(SYMC_F32, SH(3, 3));
    RUN_OK(IR_OP_PAD, pc, 2, &x, 1, &y, 1);
    EXPECT(y, 0, 9, 9, 9, 1, 2, 9, 3, 4, 9);
    RUN_OK(IR_OP_PAD, pc, 1, &x, 1, &y, 1); /* default value 0 */
    EXPECT(y, 0, 0, 0, 0, 1, 2, 0, 3, 4, 0);
    /* reflect and edge on [1,2,3] by 2 */
    rt_ref_tensor v = iota(SYMC_I64, SH(3));
    symc_attr pr[2] = {symc_attr_ints("pads", I(2, 2), 2), symc_attr_str("mode", "reflect")};
    rt_ref_tensor y7 = tz(SYMC_I64, SH(7));
    RUN_OK(IR_OP_PAD, pr, 2, &v, 1, &y7, 1);
    EXPECT(y7, 0, 3, 2, 1, 2, 3, 2, 1);
    symc_attr pe[2] = {symc_attr_ints("pads", I(2, 2), 2), symc_attr_str("mode", "edge")};
    RUN_OK(IR_OP_PAD, pe, 2, &v, 1, &y7, 1);
    EXPECT(y7, 0, 1, 1, 1, 2, 3, 3, 3);
    /* reflect further than the dim: periodic, as numpy.pad */
    symc_attr pr5[2] = {symc_attr_ints("pads", I(5, 5), 2), symc_attr_str("mode", "reflect")};
    rt_ref_tensor y13 = tz(SYMC_I64, SH(13));
    RUN_OK(IR_OP_PAD, pr5, 2, &v, 1, &y13, 1);
    EXPECT(y13, 0, 2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2);
    /* negative pads crop: [1,2,3,4] with pads [-1, 1] */
    rt_ref_tensor w = iota(SYMC_I32, SH(4));
    symc_attr pn = symc_attr_ints("pads", I(-1, 1), 2);
    rt_ref_tensor y4 = tz(SYMC_I32, SH(4));
    RUN_OK(IR_OP_PAD, &pn, 1, &w, 1, &y4, 1);
    EXPECT(y4, 0, 2, 3, 4, 0);
    symc_attr pn2 = symc_attr_ints("pads", I(-3, -2), 2);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "crop more than axis 0's 4 elements", IR_OP_PAD, &pn2, 1, &w, 1, &y4, 1);
    symc_attr pw[2] = {symc_attr_ints("pads", I(1, -1), 2), symc_attr_str("mode", "wrap")};
    RUN_OK(IR_OP_PAD, pw, 2, &w, 1, &y4, 1); /* wrap: the axis repeats, [4 | 1 2 3] */
    EXPECT(y4, 0, 4, 1, 2, 3);
    symc_attr pbad[2] = {symc_attr_ints("pads", I(1, 1), 2), symc_attr_str("mode", "circular")};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "mode 'circular' must be constant, reflect, edge or wrap", IR_OP_PAD, pbad, 2, &w,
              1, &y4, 1);
    /* 2-D reflect on both axes */
    rt_ref_tensor m = iota(SYMC_F64, SH(2, 3));
    symc_attr p2[2] = {symc_attr_ints("pads", I(1, 1, 0, 1), 4), symc_attr_str("mode", "reflect")};
    rt_ref_tensor ym = tz(SYMC_F64, SH(3, 5));
    RUN_OK(IR_OP_PAD, p2, 2, &m, 1, &ym, 1);
    EXPECT(ym, 0, 5, 4, 5, 6, 5, 2, 1, 2, 3, 2, 5, 4, 5, 6, 5);

    rt_ref_tensor s = tz(SYMC_BF16, SH(2, 0, 4));
    rt_ref_tensor ys = tz(SYMC_I64, SH(3));
    RUN_OK(IR_OP_SHAPE_OF, NULL, 0, &s, 1, &ys, 1);
    EXPECT(ys, 0, 2, 0, 4);
    rt_ref_tensor sc = tf(SYMC_F32, 0, NULL, V(1));
    rt_ref_tensor y0 = tz(SYMC_I64, SH(0));
    RUN_OK(IR_OP_SHAPE_OF, NULL, 0, &sc, 1, &y0, 1);
    rt_ref_tensor y32 = tz(SYMC_I32, SH(3));
    RUN_FAILS(SYMC_ERR_INTERNAL, "caller's i32[3] disagrees with i64[3]", IR_OP_SHAPE_OF, NULL, 0, &s, 1, &y32, 1);
}

int main(void) {
    test_reshape_transpose_expand();
    test_concat_split();
    test_slice();
    test_gather();
    test_squeeze_unsqueeze_flatten();
    test_pad_shape_of();
    tfree_all();
    return check_report("runtime.move");
}
