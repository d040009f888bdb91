/* The ops added for the ONNX importer, with hand-computed values: range
 * (positive/negative/empty, float output, delta 0), tile (incl. a zero
 * repeat), trilu (upper/lower, positive/negative k, batched, bool),
 * gather_elements (both axes, negative indices, out-of-range refusal), and
 * for conformance topk (ties, NaN, smallest, exact integers), cumsum
 * (exclusive, reverse, wrapping), gather_nd (batch_dims), scatter_nd and
 * scatter_elements (duplicates under each reduction, refusals). */
#include "ref_test.h"

static void test_range(void) {
    symc_attr a[4] = {symc_attr_ints("start", I(2), 1), symc_attr_ints("limit", I(9), 1),
                      symc_attr_ints("delta", I(3), 1), symc_attr_dtype("to", SYMC_I64)};
    rt_ref_tensor y = tz(SYMC_I64, SH(3));
    RUN_OK(IR_OP_RANGE, a, 4, NULL, 0, &y, 1);
    EXPECT(y, 0, 2, 5, 8);
    /* negative delta: 5, 3, 1 (limit 0 excluded); float output */
    symc_attr b[4] = {symc_attr_ints("start", I(5), 1), symc_attr_ints("limit", I(0), 1),
                      symc_attr_ints("delta", I(-2), 1), symc_attr_dtype("to", SYMC_F32)};
    rt_ref_tensor yf = tz(SYMC_F32, SH(3));
    RUN_OK(IR_OP_RANGE, b, 4, NULL, 0, &yf, 1);
    EXPECT(yf, 0, 5, 3, 1);
    /* empty: limit before start with a positive delta */
    symc_attr e[4] = {symc_attr_ints("start", I(4), 1), symc_attr_ints("limit", I(1), 1),
                      symc_attr_ints("delta", I(1), 1), symc_attr_dtype("to", SYMC_I32)};
    rt_ref_tensor ye = tz(SYMC_I32, SH(0));
    RUN_OK(IR_OP_RANGE, e, 4, NULL, 0, &ye, 1);
    /* the length is cross-checked */
    RUN_FAILS(SYMC_ERR_INTERNAL, "disagrees", IR_OP_RANGE, a, 4, NULL, 0, &ye, 1);
    symc_attr z[4] = {symc_attr_ints("start", I(0), 1), symc_attr_ints("limit", I(1), 1),
                      symc_attr_ints("delta", I(0), 1), symc_attr_dtype("to", SYMC_I64)};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "delta is 0", IR_OP_RANGE, z, 4, NULL, 0, &y, 1);
    rt_ref_tensor yb = tz(SYMC_BOOL, SH(3));
    symc_attr bb[4] = {a[0], a[1], a[2], symc_attr_dtype("to", SYMC_BOOL)};
    RUN_FAILS(SYMC_ERR_UNSUPPORTED, "dtype bool of output 0", IR_OP_RANGE, bb, 4, NULL, 0, &yb, 1);
}

static void test_tile(void) {
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 2), V(1, 2, 3, 4));
    symc_attr r = symc_attr_ints("repeats", I(2, 3), 2);
    rt_ref_tensor y = tz(SYMC_F32, SH(4, 6));
    RUN_OK(IR_OP_TILE, &r, 1, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4, 1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4);
    rt_ref_tensor xi = ti(SYMC_I64, SH(3), I(7, 8, 9));
    symc_attr r0 = symc_attr_ints("repeats", I(0), 1);
    rt_ref_tensor y0 = tz(SYMC_I64, SH(0));
    RUN_OK(IR_OP_TILE, &r0, 1, &xi, 1, &y0, 1);
    symc_attr r2 = symc_attr_ints("repeats", I(2), 1);
    rt_ref_tensor y2 = tz(SYMC_I64, SH(6));
    RUN_OK(IR_OP_TILE, &r2, 1, &xi, 1, &y2, 1);
    EXPECT(y2, 0, 7, 8, 9, 7, 8, 9);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "'repeats' has 2 entries but the input has rank 1", IR_OP_TILE, &r, 1, &xi, 1, &y2,
              1);
    symc_attr rn = symc_attr_ints("repeats", I(-1), 1);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "must be >= 0", IR_OP_TILE, &rn, 1, &xi, 1, &y2, 1);
}

static void test_trilu(void) {
    /* 3x3: 1..9 */
    rt_ref_tensor x = tf(SYMC_F32, SH(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
    rt_ref_tensor y = tz(SYMC_F32, SH(3, 3));
    RUN_OK(IR_OP_TRILU, NULL, 0, &x, 1, &y, 1); /* defaults: upper, k = 0 */
    EXPECT(y, 0, 1, 2, 3, 0, 5, 6, 0, 0, 9);
    symc_attr lo[2] = {symc_attr_int("upper", 0), symc_attr_int("k", 0)};
    RUN_OK(IR_OP_TRILU, lo, 2, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 0, 0, 4, 5, 0, 7, 8, 9);
    symc_attr up1[2] = {symc_attr_int("upper", 1), symc_attr_int("k", 1)};
    RUN_OK(IR_OP_TRILU, up1, 2, &x, 1, &y, 1);
    EXPECT(y, 0, 0, 2, 3, 0, 0, 6, 0, 0, 0);
    symc_attr lom1[2] = {symc_attr_int("upper", 0), symc_attr_int("k", -1)};
    RUN_OK(IR_OP_TRILU, lom1, 2, &x, 1, &y, 1);
    EXPECT(y, 0, 0, 0, 0, 4, 0, 0, 7, 8, 0);
    /* batched 2x2x3 bool, lower with k = 1 (a causal mask shifted by one) */
    rt_ref_tensor b = tf(SYMC_BOOL, SH(2, 2, 3), V(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1));
    rt_ref_tensor yb = tz(SYMC_BOOL, SH(2, 2, 3));
    symc_attr lo1[2] = {symc_attr_int("upper", 0), symc_attr_int("k", 1)};
    RUN_OK(IR_OP_TRILU, lo1, 2, &b, 1, &yb, 1);
    EXPECT(yb, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1);
    rt_ref_tensor v = tf(SYMC_F32, SH(3), V(1, 2, 3));
    rt_ref_tensor yv = tz(SYMC_F32, SH(3));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "trilu needs >= 2", IR_OP_TRILU, NULL, 0, &v, 1, &yv, 1);
}

static void test_gather_elements(void) {
    /* ONNX example: data [[1,2],[3,4]], indices [[0,0],[1,0]], axis 1 -> [[1,1],[4,3]] */
    rt_ref_tensor in[2] = {tf(SYMC_F32, SH(2, 2), V(1, 2, 3, 4)), ti(SYMC_I64, SH(2, 2), I(0, 0, 1, 0))};
    symc_attr ax1 = symc_attr_int("axis", 1);
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_GATHER_ELEMENTS, &ax1, 1, in, 2, &y, 1);
    EXPECT(y, 0, 1, 1, 4, 3);
    /* axis 0, negative indices, fewer rows than the data: [[-1, 0, 1]] over 3x3 */
    rt_ref_tensor in0[2] = {tf(SYMC_I32, SH(3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9)),
                            ti(SYMC_I32, SH(2, 3), I(-1, 0, 1, 2, 2, 0))};
    symc_attr ax0 = symc_attr_int("axis", 0);
    rt_ref_tensor y0 = tz(SYMC_I32, SH(2, 3));
    RUN_OK(IR_OP_GATHER_ELEMENTS, &ax0, 1, in0, 2, &y0, 1);
    EXPECT(y0, 0, 7, 2, 6, 7, 8, 3);
    rt_ref_tensor bad[2] = {in[0], ti(SYMC_I64, SH(2, 2), I(0, 2, 0, 0))};
    RUN_FAILS(SYMC_ERR_RANGE, "index 2 at indices[0, 1] is out of range [-2, 1] for axis 1", IR_OP_GATHER_ELEMENTS,
              &ax1, 1, bad, 2, &y, 1);
    rt_ref_tensor big[2] = {in[0], ti(SYMC_I64, SH(3, 1), I(0, 0, 0))};
    rt_ref_tensor yb = tz(SYMC_F32, SH(3, 1));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "exceed data [2, 2] at axis 0", IR_OP_GATHER_ELEMENTS, &ax1, 1, big, 2, &yb, 1);
}

/* ---- added for ONNX conformance: topk, cumsum, gather_nd, scatter_nd, scatter_elements ---- */
static void test_topk(void) {
    /* ties to the lower index, NaN the largest; largest and smallest, axis 0 and 1 */
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 4), V(3, 1, 3, NAN, 2, 2, 5, -1));
    symc_attr a[3] = {symc_attr_ints("k", I(3), 1), symc_attr_int("axis", 1), symc_attr_int("largest", 1)};
    rt_ref_tensor y = tz(SYMC_I64, SH(2, 3));
    RUN_OK(IR_OP_TOPK, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 3, 0, 2, 2, 0, 1);
    a[2] = symc_attr_int("largest", 0);
    RUN_OK(IR_OP_TOPK, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 0, 2, 3, 0, 1);
    symc_attr b[2] = {symc_attr_ints("k", I(1), 1), symc_attr_int("axis", 0)};
    rt_ref_tensor xi = ti(SYMC_I64, SH(2, 2), I(INT64_MAX - 1, 7, INT64_MAX, 7));
    rt_ref_tensor yb = tz(SYMC_I64, SH(1, 2));
    RUN_OK(IR_OP_TOPK, b, 2, &xi, 1, &yb, 1);
    EXPECT(yb, 0, 1, 0); /* integers compared exactly beyond 2^53 */
    symc_attr big[2] = {symc_attr_ints("k", I(5), 1), symc_attr_int("axis", 1)};
    rt_ref_tensor y5 = tz(SYMC_I64, SH(2, 5));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "k = 5 is outside [0, 4]", IR_OP_TOPK, big, 2, &x, 1, &y5, 1);
}

static void test_cumsum(void) {
    rt_ref_tensor x = tf(SYMC_F64, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    symc_attr a[3] = {symc_attr_int("axis", 1), symc_attr_int("exclusive", 0), symc_attr_int("reverse", 0)};
    rt_ref_tensor y = tz(SYMC_F64, SH(2, 3));
    RUN_OK(IR_OP_CUMSUM, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 1, 3, 6, 4, 9, 15);
    a[1] = symc_attr_int("exclusive", 1);
    a[2] = symc_attr_int("reverse", 1);
    RUN_OK(IR_OP_CUMSUM, a, 3, &x, 1, &y, 1);
    EXPECT(y, 0, 5, 3, 0, 11, 6, 0);
    symc_attr ax0 = symc_attr_int("axis", -2);
    rt_ref_tensor xi = ti(SYMC_I32, SH(2, 2), I(INT32_MAX, 1, 1, 1));
    rt_ref_tensor yi = tz(SYMC_I32, SH(2, 2));
    RUN_OK(IR_OP_CUMSUM, &ax0, 1, &xi, 1, &yi, 1);
    CHECK(tgeti(&yi, 2) == INT32_MIN && tgeti(&yi, 3) == 2); /* wraps like the dtype */
}

static void test_gather_scatter_nd(void) {
    /* ONNX examples: gather_nd of [[0,1],[2,3]] at [[0,0],[1,1]] -> [0,3]; at [[1],[0]] -> rows */
    rt_ref_tensor d = tf(SYMC_F32, SH(2, 2), V(0, 1, 2, 3));
    rt_ref_tensor in[2] = {d, ti(SYMC_I64, SH(2, 2), I(0, 0, 1, -1))};
    rt_ref_tensor y = tz(SYMC_F32, SH(2));
    RUN_OK(IR_OP_GATHER_ND, NULL, 0, in, 2, &y, 1);
    EXPECT(y, 0, 0, 3);
    rt_ref_tensor in1[2] = {d, ti(SYMC_I64, SH(2, 1), I(1, 0))};
    rt_ref_tensor y1 = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_GATHER_ND, NULL, 0, in1, 2, &y1, 1);
    EXPECT(y1, 0, 2, 3, 0, 1);
    /* batch_dims 1: data [2, 2, 2], indices [[1], [0]] -> data[0][1], data[1][0] */
    rt_ref_tensor in2[2] = {tf(SYMC_F32, SH(2, 2, 2), V(0, 1, 2, 3, 4, 5, 6, 7)), ti(SYMC_I64, SH(2, 1), I(1, 0))};
    symc_attr b1 = symc_attr_int("batch_dims", 1);
    RUN_OK(IR_OP_GATHER_ND, &b1, 1, in2, 2, &y1, 1);
    EXPECT(y1, 0, 2, 3, 4, 5);
    rt_ref_tensor bad[2] = {d, ti(SYMC_I64, SH(2, 2), I(0, 0, 2, 0))};
    RUN_FAILS(SYMC_ERR_RANGE, "index 2 (element 2 of indices) is out of range [-2, 1]", IR_OP_GATHER_ND, NULL, 0, bad,
              2, &y, 1);
    /* scatter_nd: rows 0 and 0 again (duplicates) with add; none: later wins */
    rt_ref_tensor s[3] = {d, ti(SYMC_I64, SH(2, 1), I(0, 0)), tf(SYMC_F32, SH(2, 2), V(10, 20, 30, 40))};
    symc_attr add = symc_attr_str("reduction", "add");
    rt_ref_tensor ys = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_SCATTER_ND, &add, 1, s, 3, &ys, 1);
    EXPECT(ys, 0, 40, 61, 2, 3);
    RUN_OK(IR_OP_SCATTER_ND, NULL, 0, s, 3, &ys, 1);
    EXPECT(ys, 0, 30, 40, 2, 3);
    symc_attr mn = symc_attr_str("reduction", "min");
    RUN_OK(IR_OP_SCATTER_ND, &mn, 1, s, 3, &ys, 1);
    EXPECT(ys, 0, 0, 1, 2, 3);
    symc_attr mean = symc_attr_str("reduction", "mean");
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "reduction 'mean'", IR_OP_SCATTER_ND, &mean, 1, s, 3, &ys, 1);
    rt_ref_tensor su[3] = {d, s[1], tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6))};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "updates have shape [2, 3], must be [2, 2]", IR_OP_SCATTER_ND, NULL, 0, su, 3, &ys,
              1);
}

static void test_scatter_elements(void) {
    /* ONNX example: data 3x3 zeros, indices [[1,0,2],[0,2,1]], updates [[1.0,1.1,1.2],[2.0,2.1,2.2]], axis 0 */
    rt_ref_tensor in[3] = {tf(SYMC_F32, SH(3, 3), V(0, 0, 0, 0, 0, 0, 0, 0, 0)),
                           ti(SYMC_I64, SH(2, 3), I(1, 0, 2, 0, 2, 1)),
                           tf(SYMC_F32, SH(2, 3), V(1, 1.5, 1.25, 2, 2.5, 2.25))};
    symc_attr ax0 = symc_attr_int("axis", 0);
    rt_ref_tensor y = tz(SYMC_F32, SH(3, 3));
    RUN_OK(IR_OP_SCATTER_ELEMENTS, &ax0, 1, in, 3, &y, 1);
    EXPECT(y, 0, 2, 1.5, 0, 1, 0, 2.25, 0, 2.5, 1.25);
    /* axis 1, negative index, duplicates with mul and max */
    rt_ref_tensor in1[3] = {tf(SYMC_F32, SH(1, 3), V(1, 2, 3)), ti(SYMC_I32, SH(1, 2), I(-1, 2)),
                            tf(SYMC_F32, SH(1, 2), V(4, 5))};
    symc_attr mul[2] = {symc_attr_int("axis", 1), symc_attr_str("reduction", "mul")};
    rt_ref_tensor y1 = tz(SYMC_F32, SH(1, 3));
    RUN_OK(IR_OP_SCATTER_ELEMENTS, mul, 2, in1, 3, &y1, 1);
    EXPECT(y1, 0, 1, 2, 60);
    mul[1] = symc_attr_str("reduction", "max");
    RUN_OK(IR_OP_SCATTER_ELEMENTS, mul, 2, in1, 3, &y1, 1);
    EXPECT(y1, 0, 1, 2, 5);
    rt_ref_tensor bad[3] = {in1[0], ti(SYMC_I32, SH(1, 2), I(3, 0)), in1[2]};
    RUN_FAILS(SYMC_ERR_RANGE, "index 3 at indices[0, 0] is out of range [-3, 2] for axis 1", IR_OP_SCATTER_ELEMENTS,
              mul, 2, bad, 3, &y1, 1);
}

int main(void) {
    test_topk();
    test_cumsum();
    test_gather_scatter_nd();
    test_scatter_elements();
    test_range();
    test_tile();
    test_trilu();
    test_gather_elements();
    tfree_all();
    return check_report("test_ref_importer_ops");
}
