/* The reference kernels of the spatial and sequence ops added for ONNX
 * conformance, by properties that hold whatever the kernel's loop order and
 * by small hand-computed values: grid_sample (an identity grid reproduces
 * the input in every mode; zeros padding outside; a half-pixel shift
 * averages neighbours), dft (inverse of forward is the identity, a delta's
 * spectrum is flat, irfft of rfft is the identity for odd and even lengths),
 * det (hand values, a row swap, a singular matrix), col2im (1x1 blocks are
 * a reshape; overlapping blocks add), max_pool_indices (both storage
 * orders), 3-D avg pooling (a constant input stays constant without
 * count_include_pad) and max pooling of u8. */
#include "ref_test.h"

static void test_grid_sample(void) {
    /* x [1, 1, 3, 4]; the grid of output [3, 4] at the element centers of x
     * (align_corners 1: -1 and 1 are the corner centers) */
    rt_ref_tensor x = trandom(SYMC_F32, SH(1, 1, 3, 4)), g = tz(SYMC_F32, SH(1, 3, 4, 2));
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 4; j++) {
            tset(&g, (i * 4 + j) * 2, -1.0 + 2.0 * (double)j / 3.0);
            tset(&g, (i * 4 + j) * 2 + 1, -1.0 + 2.0 * (double)i / 2.0);
        }
    static const char *const modes[3] = {"nearest", "linear", "cubic"};
    for (int m = 0; m < 3; m++) {
        symc_attr a[3] = {symc_attr_str("mode", modes[m]), symc_attr_str("padding_mode", "border"),
                          symc_attr_int("align_corners", 1)};
        rt_ref_tensor in[2] = {x, g}, y = tz(SYMC_F32, SH(1, 1, 3, 4));
        RUN_OK(IR_OP_GRID_SAMPLE, a, 3, in, 2, &y, 1);
        for (int64_t i = 0; i < 12; i++)
            CHECK_MSG(tclose(tget(&y, i), tget(&x, i), 1e-6), "%s: element %lld", modes[m], (long long)i);
    }
    /* x [1, 1, 1, 2] = [2, 6]: the midpoint averages (4), a point past the
     * right edge reads 0 with zeros padding, the right edge with border */
    rt_ref_tensor x2 = tf(SYMC_F32, SH(1, 1, 1, 2), V(2, 6)), g2 = tf(SYMC_F32, SH(1, 1, 2, 2), V(0, 0, 3, 0));
    rt_ref_tensor in2[2] = {x2, g2}, y2 = tz(SYMC_F32, SH(1, 1, 1, 2));
    symc_attr z[3] = {symc_attr_str("mode", "linear"), symc_attr_str("padding_mode", "zeros"),
                      symc_attr_int("align_corners", 0)};
    RUN_OK(IR_OP_GRID_SAMPLE, z, 3, in2, 2, &y2, 1);
    EXPECT(y2, 1e-12, 4, 0);
    symc_attr b[3] = {z[0], symc_attr_str("padding_mode", "border"), z[2]};
    RUN_OK(IR_OP_GRID_SAMPLE, b, 3, in2, 2, &y2, 1);
    EXPECT(y2, 1e-12, 4, 6);
    symc_attr bad[2] = {symc_attr_str("mode", "area"), z[1]};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "mode 'area'", IR_OP_GRID_SAMPLE, bad, 2, in2, 2, &y2, 1);
}

static void test_dft(void) {
    for (int64_t n = 5; n <= 8; n += 3) { /* odd and even lengths */
        rt_ref_tensor x = trandom(SYMC_F64, SH(2, n, 2)), f = tz(SYMC_F64, SH(2, n, 2)), b = tz(SYMC_F64, SH(2, n, 2));
        symc_attr fw[2] = {symc_attr_int("axis", 1), symc_attr_int("length", n)};
        symc_attr inv[3] = {fw[0], fw[1], symc_attr_int("inverse", 1)};
        RUN_OK(IR_OP_DFT, fw, 2, &x, 1, &f, 1);
        RUN_OK(IR_OP_DFT, inv, 3, &f, 1, &b, 1);
        for (int64_t i = 0; i < 4 * n; i++) CHECK(tclose(tget(&b, i), tget(&x, i), 1e-12));
        /* a real signal: rfft then irfft */
        rt_ref_tensor r = trandom(SYMC_F64, SH(1, n, 1)), h = tz(SYMC_F64, SH(1, n / 2 + 1, 2)),
                      back = tz(SYMC_F64, SH(1, n, 1));
        symc_attr rf[3] = {fw[0], fw[1], symc_attr_int("onesided", 1)};
        symc_attr irf[4] = {fw[0], fw[1], symc_attr_int("inverse", 1), symc_attr_int("onesided", 1)};
        RUN_OK(IR_OP_DFT, rf, 3, &r, 1, &h, 1);
        RUN_OK(IR_OP_DFT, irf, 4, &h, 1, &back, 1);
        for (int64_t i = 0; i < n; i++) CHECK(tclose(tget(&back, i), tget(&r, i), 1e-12));
    }
    /* a delta's spectrum is flat: 1 + 0i at every bin */
    rt_ref_tensor d = tf(SYMC_F32, SH(4, 1), V(1, 0, 0, 0)), s = tz(SYMC_F32, SH(4, 2));
    symc_attr a[2] = {symc_attr_int("axis", 0), symc_attr_int("length", 4)};
    RUN_OK(IR_OP_DFT, a, 2, &d, 1, &s, 1);
    EXPECT(s, 1e-7, 1, 0, 1, 0, 1, 0, 1, 0);
    symc_attr last[2] = {symc_attr_int("axis", 1), a[1]};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "axis 1", IR_OP_DFT, last, 2, &d, 1, &s, 1);
}

static void test_det(void) {
    rt_ref_tensor x = tf(SYMC_F64, SH(3, 2, 2), V(1, 2, 3, 4, 0, 1, 1, 0, 2, 4, 1, 2)), y = tz(SYMC_F64, SH(3));
    RUN_OK(IR_OP_DET, NULL, 0, &x, 1, &y, 1);
    EXPECT(y, 1e-12, -2, -1, 0); /* 1*4 - 2*3; a swap; rows proportional */
    rt_ref_tensor x3 = tf(SYMC_F32, SH(1, 3, 3), V(0, 2, 1, 3, 0, 0, 1, 1, 4)), y3 = tz(SYMC_F32, SH(1));
    RUN_OK(IR_OP_DET, NULL, 0, &x3, 1, &y3, 1);
    EXPECT(y3, 1e-6, -21); /* -2 * (3*4 - 0) + 1 * (3*1 - 0) */
    rt_ref_tensor r = tz(SYMC_F32, SH(1, 2, 3));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "square", IR_OP_DET, NULL, 0, &r, 1, &y3, 1);
}

static void test_col2im(void) {
    /* 1x1 blocks, stride 1: a reshape of [1, 2, 6] to [1, 2, 2, 3] */
    rt_ref_tensor x = trandom(SYMC_F32, SH(1, 2, 6)), y = tz(SYMC_F32, SH(1, 2, 2, 3));
    symc_attr a[2] = {symc_attr_ints("image_shape", I(2, 3), 2), symc_attr_ints("block_shape", I(1, 1), 2)};
    RUN_OK(IR_OP_COL2IM, a, 2, &x, 1, &y, 1);
    for (int64_t i = 0; i < 12; i++) CHECK(tget(&y, i) == tget(&x, i));
    /* 1-D image of 3 with blocks of 2 at stride 1: columns [a b] [c d] give a, b + c, d */
    rt_ref_tensor x1 = tf(SYMC_F32, SH(1, 2, 2), V(1, 3, 2, 4)), y1 = tz(SYMC_F32, SH(1, 1, 3));
    symc_attr b[2] = {symc_attr_ints("image_shape", I(3), 1), symc_attr_ints("block_shape", I(2), 1)};
    RUN_OK(IR_OP_COL2IM, b, 2, &x1, 1, &y1, 1);
    EXPECT(y1, 0, 1, 5, 4);
}

static void test_pool_extras(void) {
    /* [[1, 4], [3, 2]] pooled 2x2: the max 4 sits at (0, 1): flat 1, column-major 2 */
    rt_ref_tensor x = tf(SYMC_F32, SH(1, 1, 2, 2), V(1, 4, 3, 2)), ix = tz(SYMC_I64, SH(1, 1, 1, 1));
    symc_attr a[2] = {symc_attr_ints("kernel", I(2, 2), 2), symc_attr_int("storage_order", 0)};
    RUN_OK(IR_OP_MAX_POOL_INDICES, a, 2, &x, 1, &ix, 1);
    CHECK(tgeti(&ix, 0) == 1);
    a[1] = symc_attr_int("storage_order", 1);
    RUN_OK(IR_OP_MAX_POOL_INDICES, a, 2, &x, 1, &ix, 1);
    CHECK(tgeti(&ix, 0) == 2);
    /* 3-D average pooling of a constant with padding, count_include_pad 0: the constant */
    rt_ref_tensor c = tz(SYMC_F32, SH(1, 1, 3, 3, 3)), y = tz(SYMC_F32, SH(1, 1, 2, 2, 2));
    for (int64_t i = 0; i < 27; i++) tset(&c, i, 2.5);
    symc_attr p[3] = {symc_attr_ints("kernel", I(2, 2, 2), 3), symc_attr_ints("strides", I(2, 2, 2), 3),
                      symc_attr_ints("pads", I(1, 1, 1, 0, 0, 0), 6)};
    RUN_OK(IR_OP_AVG_POOL2D, p, 3, &c, 1, &y, 1);
    for (int64_t i = 0; i < 8; i++) CHECK(tget(&y, i) == 2.5);
    /* with count_include_pad the corner window holds 1 element of 8 */
    symc_attr q[4] = {p[0], p[1], p[2], symc_attr_int("count_include_pad", 1)};
    RUN_OK(IR_OP_AVG_POOL2D, q, 4, &c, 1, &y, 1);
    CHECK(tclose(tget(&y, 0), 2.5 / 8, 1e-7));
    /* u8 max pooling with dilation 2 picks x[0] and x[2] */
    rt_ref_tensor u = tf(SYMC_U8, SH(1, 1, 1, 3), V(7, 200, 9)), uy = tz(SYMC_U8, SH(1, 1, 1, 1));
    symc_attr d[2] = {symc_attr_ints("kernel", I(1, 2), 2), symc_attr_ints("dilations", I(1, 2), 2)};
    RUN_OK(IR_OP_MAX_POOL2D, d, 2, &u, 1, &uy, 1);
    EXPECT(uy, 0, 9);
}

int main(void) {
    test_grid_sample();
    test_dft();
    test_det();
    test_col2im();
    test_pool_extras();
    tfree_all();
    return check_report("test_ref_spatial");
}
