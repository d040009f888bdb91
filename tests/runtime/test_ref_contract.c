/* matmul, gemm, conv2d and pooling with hand-computed values: 1-D promotion,
 * batch broadcasting, transposes and C broadcasting in gemm, padding,
 * strides, dilation and groups in conv2d, ceil_mode (PyTorch's last-window
 * rule) and count_include_pad in pooling. */
#include "ref_test.h"

static void test_matmul(void) {
    rt_ref_tensor a = tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    rt_ref_tensor b = tf(SYMC_F32, SH(3, 2), V(7, 8, 9, 10, 11, 12));
    rt_ref_tensor in[2] = {a, b};
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_MATMUL, NULL, 0, in, 2, &y, 1);
    EXPECT(y, 0, 58, 64, 139, 154);
    /* 1-D left: [3] x [3,2] -> [2] */
    rt_ref_tensor v = tf(SYMC_F32, SH(3), V(1, 2, 3));
    rt_ref_tensor in1[2] = {v, b};
    rt_ref_tensor y1 = tz(SYMC_F32, SH(2));
    RUN_OK(IR_OP_MATMUL, NULL, 0, in1, 2, &y1, 1);
    EXPECT(y1, 0, 58, 64);
    /* 1-D right: [2,3] x [3] -> [2] */
    rt_ref_tensor ones = tf(SYMC_F32, SH(3), V(1, 1, 1));
    rt_ref_tensor in2[2] = {a, ones};
    RUN_OK(IR_OP_MATMUL, NULL, 0, in2, 2, &y1, 1);
    EXPECT(y1, 0, 6, 15);
    /* 1-D x 1-D -> scalar */
    rt_ref_tensor in3[2] = {v, tf(SYMC_F32, SH(3), V(4, 5, 6))};
    rt_ref_tensor y0 = tz(SYMC_F32, 0, NULL);
    RUN_OK(IR_OP_MATMUL, NULL, 0, in3, 2, &y0, 1);
    EXPECT(y0, 0, 32);
    /* batch broadcast: [2,1,1,2] x [3,2,1] -> [2,3,1,1] */
    rt_ref_tensor ba = tf(SYMC_F64, SH(2, 1, 1, 2), V(1, 2, 3, 4));
    rt_ref_tensor bb = tf(SYMC_F64, SH(3, 2, 1), V(1, 0, 0, 1, 1, 1));
    rt_ref_tensor in4[2] = {ba, bb};
    rt_ref_tensor y4 = tz(SYMC_F64, SH(2, 3, 1, 1));
    RUN_OK(IR_OP_MATMUL, NULL, 0, in4, 2, &y4, 1);
    EXPECT(y4, 0, 1, 2, 3, 3, 4, 7);
    /* [3] x [2,3,2]: 1-D left with a batched right operand -> [2,2] */
    rt_ref_tensor bc = tf(SYMC_F32, SH(2, 3, 2), V(7, 8, 9, 10, 11, 12, 1, 0, 0, 1, 0, 0));
    rt_ref_tensor in5[2] = {v, bc};
    rt_ref_tensor y5 = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_MATMUL, NULL, 0, in5, 2, &y5, 1);
    EXPECT(y5, 0, 58, 64, 1, 2);
    /* integers, exact and wrapping; f16 with f64 accumulation */
    rt_ref_tensor in6[2] = {ti(SYMC_I64, SH(1, 2), I((int64_t)1 << 62, 3)), ti(SYMC_I64, SH(2, 1), I(4, 5))};
    rt_ref_tensor y6 = tz(SYMC_I64, SH(1, 1));
    RUN_OK(IR_OP_MATMUL, NULL, 0, in6, 2, &y6, 1);
    CHECK(tgeti(&y6, 0) == 15); /* 2^64 wraps to 0 */
    rt_ref_tensor in7[2] = {tf(SYMC_F16, SH(1, 3), V(2048, 1, 1)), tf(SYMC_F16, SH(3, 1), V(1, 1, 1))};
    rt_ref_tensor y7 = tz(SYMC_F16, SH(1, 1));
    RUN_OK(IR_OP_MATMUL, NULL, 0, in7, 2, &y7, 1);
    EXPECT(y7, 0, 2050);
    /* contracted dims differ */
    rt_ref_tensor in8[2] = {a, a};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "operands [2, 3] and [2, 3]: contracted dims differ (3 vs 2)", IR_OP_MATMUL, NULL,
              0, in8, 2, &y, 1);
}

/* The tiled matmul (register tiles, row blocks, p in chunks, zero-padded column panels) against
 * the plain loop it replaces, bit for bit: f64 sums over p in ascending order, then one rounding.
 * Sizes cross every tile, block and chunk edge; batched shapes take the per-product path. */
static void test_matmul_tiled(void) {
    static const int64_t ms[] = {1, 3, 4, 5, 63, 64, 65, 130}, ns[] = {1, 3, 4, 5, 17}, ks[] = {1, 7, 256, 257, 600};
    int bad = 0, runs = 0;
    for (int f64 = 0; f64 < 2; f64++)
        for (size_t im = 0; im < sizeof ms / sizeof *ms; im++)
            for (size_t in = 0; in < sizeof ns / sizeof *ns; in++)
                for (size_t ik = 0; ik < sizeof ks / sizeof *ks; ik++) {
                    int64_t m = ms[im], n = ns[in], k = ks[ik], batch = (im + in + ik) % 3 == 0 ? 3 : 1;
                    symc_dtype dt = f64 ? SYMC_F64 : SYMC_F32;
                    rt_ref_tensor a = trandom(dt, SH(batch, m, k)), b = trandom(dt, SH(batch, k, n));
                    rt_ref_tensor in2[2] = {a, b};
                    rt_ref_tensor y = tz(dt, SH(batch, m, n));
                    RUN_OK(IR_OP_MATMUL, NULL, 0, in2, 2, &y, 1);
                    runs++;
                    for (int64_t bi = 0; bi < batch; bi++)
                        for (int64_t i = 0; i < m; i++)
                            for (int64_t j = 0; j < n; j++) {
                                double acc = 0.0;
                                for (int64_t p = 0; p < k; p++)
                                    acc += tget(&a, (bi * m + i) * k + p) * tget(&b, (bi * k + p) * n + j);
                                double want = f64 ? acc : (double)(float)acc, got = tget(&y, (bi * m + i) * n + j);
                                bad += memcmp(&want, &got, sizeof want) != 0;
                            }
                    tfree_all();
                }
    CHECK_MSG(bad == 0, "%d of the tiled matmul's elements differ from the plain loop's (%d products)", bad, runs);
}

static void test_gemm(void) {
    rt_ref_tensor a = tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
    rt_ref_tensor b = tf(SYMC_F32, SH(3, 2), V(7, 8, 9, 10, 11, 12));
    rt_ref_tensor c = tf(SYMC_F32, SH(2), V(1, -1)); /* a row, broadcast over M */
    symc_attr at[2] = {symc_attr_float("alpha", 2), symc_attr_float("beta", 0.5)};
    rt_ref_tensor in[3] = {a, b, c};
    rt_ref_tensor y = tz(SYMC_F32, SH(2, 2));
    RUN_OK(IR_OP_GEMM, at, 2, in, 3, &y, 1);
    EXPECT(y, 0, 116.5, 127.5, 278.5, 307.5);
    RUN_OK(IR_OP_GEMM, NULL, 0, in, 2, &y, 1); /* no C, alpha 1 */
    EXPECT(y, 0, 58, 64, 139, 154);
    /* transposed storage gives the same product */
    rt_ref_tensor at_ = tf(SYMC_F32, SH(3, 2), V(1, 4, 2, 5, 3, 6));
    rt_ref_tensor bt = tf(SYMC_F32, SH(2, 3), V(7, 9, 11, 8, 10, 12));
    symc_attr tr[2] = {symc_attr_int("trans_a", 1), symc_attr_int("trans_b", 1)};
    rt_ref_tensor cc = tf(SYMC_F32, SH(2, 1), V(100, 200)); /* a column */
    rt_ref_tensor in2[3] = {at_, bt, cc};
    RUN_OK(IR_OP_GEMM, tr, 2, in2, 3, &y, 1);
    EXPECT(y, 0, 158, 164, 339, 354);
    rt_ref_tensor in3[3] = {a, bt, tf(SYMC_F32, 0, NULL, V(1))}; /* trans_b only, scalar C */
    RUN_OK(IR_OP_GEMM, tr + 1, 1, in3, 3, &y, 1);
    EXPECT(y, 0, 59, 65, 140, 155);
    rt_ref_tensor in4[3] = {a, b, tf(SYMC_F32, SH(3), V(1, 2, 3))};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "C [3] does not broadcast to the result [2, 2]", IR_OP_GEMM, NULL, 0, in4, 3, &y,
              1);
}

static void test_conv2d(void) {
    rt_ref_tensor x = tf(SYMC_F32, SH(1, 1, 3, 3), V(1, 2, 3, 4, 5, 6, 7, 8, 9));
    rt_ref_tensor w = tf(SYMC_F32, SH(1, 1, 2, 2), V(1, 1, 1, 1));
    rt_ref_tensor in[3] = {x, w, tf(SYMC_F32, SH(1), V(10))};
    rt_ref_tensor y = tz(SYMC_F32, SH(1, 1, 2, 2));
    RUN_OK(IR_OP_CONV2D, NULL, 0, in, 2, &y, 1);
    EXPECT(y, 0, 12, 16, 24, 28);
    /* pads 1, stride 2, bias: windows at (-1,-1), (-1,1), (1,-1), (1,1) */
    symc_attr ps[2] = {symc_attr_ints("pads", I(1, 1, 1, 1), 4), symc_attr_ints("strides", I(2, 2), 2)};
    RUN_OK(IR_OP_CONV2D, ps, 2, in, 3, &y, 1);
    EXPECT(y, 0, 11, 15, 21, 38);
    /* asymmetric pads [top 1, left 0, bottom 0, right 1] */
    symc_attr pa[1] = {symc_attr_ints("pads", I(1, 0, 0, 1), 4)};
    rt_ref_tensor ya = tz(SYMC_F32, SH(1, 1, 3, 3));
    RUN_OK(IR_OP_CONV2D, pa, 1, in, 2, &ya, 1);
    EXPECT(ya, 0, 3, 5, 3, 12, 16, 9, 24, 28, 15);
    /* dilation 2: the four corners */
    symc_attr dl[1] = {symc_attr_ints("dilations", I(2, 2), 2)};
    rt_ref_tensor y1 = tz(SYMC_F32, SH(1, 1, 1, 1));
    RUN_OK(IR_OP_CONV2D, dl, 1, in, 2, &y1, 1);
    EXPECT(y1, 0, 20);
    /* group 2 (depthwise): per-channel scale by 2 and -1, 1x1 kernel */
    rt_ref_tensor xg = tf(SYMC_F64, SH(1, 2, 1, 2), V(1, 2, 3, 4));
    rt_ref_tensor wg = tf(SYMC_F64, SH(2, 1, 1, 1), V(2, -1));
    symc_attr g2 = symc_attr_int("group", 2);
    rt_ref_tensor ing[2] = {xg, wg};
    rt_ref_tensor yg = tz(SYMC_F64, SH(1, 2, 1, 2));
    RUN_OK(IR_OP_CONV2D, &g2, 1, ing, 2, &yg, 1);
    EXPECT(yg, 0, 2, 4, -3, -4);
    /* group 1 over the same input mixes the channels: w [1,2,1,1] = [1, 10] */
    rt_ref_tensor in_mix[2] = {xg, tf(SYMC_F64, SH(1, 2, 1, 1), V(1, 10))};
    rt_ref_tensor ym = tz(SYMC_F64, SH(1, 1, 1, 2));
    RUN_OK(IR_OP_CONV2D, NULL, 0, in_mix, 2, &ym, 1);
    EXPECT(ym, 0, 31, 42);
    /* channel mismatch */
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "with group 1", IR_OP_CONV2D, NULL, 0, ing, 2, &yg, 1);
    /* a window larger than the padded input */
    rt_ref_tensor inb[2] = {x, tf(SYMC_F32, SH(1, 1, 4, 1), V(1, 1, 1, 1))};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "larger than the padded input (3) along height", IR_OP_CONV2D, NULL, 0, inb, 2, &y,
              1);
}

/* The row-at-a-time f32/f64/f16/bf16 convolution against the plain direct loop, bit for bit (bias first,
 * taps in the order channel, kh, kw, out-of-bounds taps skipped, f64 sums): strides, dilations,
 * asymmetric pads (wider than the kernel too), groups, rows longer than one accumulator chunk. */
static void test_conv_rows(void) {
    static const struct {
        int64_t n, c, h, w, o, kh, kw, sh, sw, dh, dw, pt, pl, pbm, pr, g;
    } cs[] = {
        {1, 3, 9, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {2, 4, 8, 8, 6, 3, 2, 2, 2, 1, 1, 0, 1, 2, 0, 2},
        {1, 4, 7, 13, 4, 3, 5, 1, 2, 2, 1, 3, 4, 0, 2, 4}, {1, 2, 3, 600, 2, 1, 7, 1, 1, 1, 3, 0, 9, 0, 9, 1},
        {1, 3, 5, 5, 2, 5, 5, 3, 3, 1, 1, 6, 6, 6, 6, 1},  {2, 6, 6, 9, 3, 1, 1, 1, 3, 1, 1, 0, 0, 0, 0, 3},
    };
    int bad = 0;
    static const symc_dtype dts[4] = {SYMC_F32, SYMC_F64, SYMC_F16, SYMC_BF16};
    for (int di = 0; di < 4; di++)
        for (size_t ci = 0; ci < sizeof cs / sizeof *cs; ci++) {
            symc_dtype dt = dts[di];
            int64_t n = cs[ci].n, c = cs[ci].c, h = cs[ci].h, wd = cs[ci].w, o = cs[ci].o, g = cs[ci].g;
            int64_t kh = cs[ci].kh, kw = cs[ci].kw, sh = cs[ci].sh, sw = cs[ci].sw, dh = cs[ci].dh, dw = cs[ci].dw;
            int64_t pt = cs[ci].pt, pl = cs[ci].pl, pbm = cs[ci].pbm, pr = cs[ci].pr, cg = c / g;
            int64_t oh = (h + pt + pbm - dh * (kh - 1) - 1) / sh + 1, ow = (wd + pl + pr - dw * (kw - 1) - 1) / sw + 1;
            rt_ref_tensor x = trandom(dt, SH(n, c, h, wd)), w = trandom(dt, SH(o, cg, kh, kw)), b = trandom(dt, SH(o));
            rt_ref_tensor in[3] = {x, w, b};
            rt_ref_tensor y = tz(dt, SH(n, o, oh, ow));
            symc_attr at[4] = {symc_attr_ints("pads", I(pt, pl, pbm, pr), 4), symc_attr_ints("strides", I(sh, sw), 2),
                               symc_attr_ints("dilations", I(dh, dw), 2), symc_attr_int("group", g)};
            RUN_OK(IR_OP_CONV2D, at, 4, in, 3, &y, 1);
            for (int64_t bn = 0; bn < n; bn++)
                for (int64_t oc = 0; oc < o; oc++)
                    for (int64_t i = 0; i < oh; i++)
                        for (int64_t j = 0; j < ow; j++) {
                            double acc = tget(&b, oc);
                            int64_t c0 = oc / (o / g) * cg;
                            for (int64_t q = 0; q < cg; q++)
                                for (int64_t r = 0; r < kh; r++)
                                    for (int64_t t = 0; t < kw; t++) {
                                        int64_t yy = i * sh - pt + r * dh, xx = j * sw - pl + t * dw;
                                        if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                                        acc += tget(&x, ((bn * c + c0 + q) * h + yy) * wd + xx) *
                                            tget(&w, ((oc * cg + q) * kh + r) * kw + t);
                                    }
                            double want = dt == SYMC_F64 ? acc
                                : dt == SYMC_F32         ? (double)(float)acc
                                : dt == SYMC_F16         ? symc_f16_to_f64(symc_f64_to_f16(acc))
                                                         : symc_bf16_to_f64(symc_f64_to_bf16(acc));
                            double got = tget(&y, ((bn * o + oc) * oh + i) * ow + j);
                            bad += memcmp(&want, &got, sizeof want) != 0;
                        }
            tfree_all();
        }
    CHECK_MSG(bad == 0, "%d of the convolution's elements differ from the direct loop's", bad);
}

static void test_pool(void) {
    rt_ref_tensor x = tz(SYMC_F32, SH(1, 1, 4, 4));
    for (int i = 0; i < 16; i++) tset(&x, i, i + 1);
    symc_attr k2s2[2] = {symc_attr_ints("kernel", I(2, 2), 2), symc_attr_ints("strides", I(2, 2), 2)};
    rt_ref_tensor y = tz(SYMC_F32, SH(1, 1, 2, 2));
    RUN_OK(IR_OP_MAX_POOL2D, k2s2, 2, &x, 1, &y, 1);
    EXPECT(y, 0, 6, 8, 14, 16);
    RUN_OK(IR_OP_AVG_POOL2D, k2s2, 2, &x, 1, &y, 1);
    EXPECT(y, 0, 3.5, 5.5, 11.5, 13.5);
    /* strides default to 1 (ONNX) */
    rt_ref_tensor y3 = tz(SYMC_F32, SH(1, 1, 3, 3));
    RUN_OK(IR_OP_MAX_POOL2D, k2s2, 1, &x, 1, &y3, 1);
    EXPECT(y3, 0, 6, 7, 8, 10, 11, 12, 14, 15, 16);

    /* ceil_mode on a row of 5, kernel 2, stride 2: floor 2 windows, ceil 3 */
    rt_ref_tensor r = tf(SYMC_F32, SH(1, 1, 1, 5), V(1, 2, 3, 4, 5));
    symc_attr row[3] = {symc_attr_ints("kernel", I(1, 2), 2), symc_attr_ints("strides", I(1, 2), 2),
                        symc_attr_int("ceil_mode", 1)};
    rt_ref_tensor r2 = tz(SYMC_F32, SH(1, 1, 1, 2)), r3 = tz(SYMC_F32, SH(1, 1, 1, 3));
    RUN_OK(IR_OP_MAX_POOL2D, row, 2, &r, 1, &r2, 1);
    EXPECT(r2, 0, 2, 4);
    RUN_OK(IR_OP_MAX_POOL2D, row, 3, &r, 1, &r3, 1);
    EXPECT(r3, 0, 2, 4, 5);
    RUN_OK(IR_OP_AVG_POOL2D, row, 3, &r, 1, &r3, 1); /* last window holds one element */
    EXPECT(r3, 0, 1.5, 3.5, 5);
    /* PyTorch's rule: with pad 1 on both sides, ceil would give 4 windows but
     * the 4th starts in the end padding (6 >= 5 + 1), so it is dropped: 3 */
    symc_attr rowp[4] = {row[0], row[1], row[2], symc_attr_ints("pads", I(0, 1, 0, 1), 4)};
    RUN_OK(IR_OP_MAX_POOL2D, rowp, 4, &r, 1, &r3, 1);
    EXPECT(r3, 0, 1, 3, 5);
    /* ... and the caller's 4 is reported as a shape inference disagreement */
    rt_ref_tensor r4 = tz(SYMC_F32, SH(1, 1, 1, 4));
    RUN_FAILS(SYMC_ERR_INTERNAL, "caller's f32[1, 1, 1, 4] disagrees with f32[1, 1, 1, 3]", IR_OP_MAX_POOL2D, rowp, 4,
              &r, 1, &r4, 1);

    /* count_include_pad on [1,2;3,4], kernel 2, stride 1, pads 1 */
    rt_ref_tensor s = tf(SYMC_F64, SH(1, 1, 2, 2), V(1, 2, 3, 4));
    symc_attr cp[3] = {symc_attr_ints("kernel", I(2, 2), 2), symc_attr_ints("pads", I(1, 1, 1, 1), 4),
                       symc_attr_int("count_include_pad", 1)};
    rt_ref_tensor ys = tz(SYMC_F64, SH(1, 1, 3, 3));
    RUN_OK(IR_OP_AVG_POOL2D, cp, 2, &s, 1, &ys, 1);
    EXPECT(ys, 0, 1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4);
    RUN_OK(IR_OP_AVG_POOL2D, cp, 3, &s, 1, &ys, 1);
    EXPECT(ys, 0, 0.25, 0.75, 0.5, 1, 2.5, 1.5, 0.75, 1.75, 1);
    /* max pooling ignores padding even when everything is negative */
    rt_ref_tensor sn = tf(SYMC_F64, SH(1, 1, 2, 2), V(-1, -2, -3, -4));
    RUN_OK(IR_OP_MAX_POOL2D, cp, 2, &sn, 1, &ys, 1);
    EXPECT(ys, 0, -1, -1, -2, -1, -1, -2, -3, -3, -4);
    /* dilation 2 on the 4x4: window corners (0,0),(0,2),(2,0),(2,2) */
    symc_attr dl[2] = {symc_attr_ints("kernel", I(2, 2), 2), symc_attr_ints("dilations", I(2, 2), 2)};
    rt_ref_tensor yd = tz(SYMC_F32, SH(1, 1, 2, 2));
    RUN_OK(IR_OP_MAX_POOL2D, dl, 2, &x, 1, &yd, 1);
    EXPECT(yd, 0, 11, 12, 15, 16);
    /* pads must be smaller than the window */
    symc_attr big[2] = {symc_attr_ints("kernel", I(2, 2), 2), symc_attr_ints("pads", I(2, 0, 0, 0), 4)};
    rt_ref_tensor yb = tz(SYMC_F32, SH(1, 1, 5, 3));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "must be smaller than the window", IR_OP_MAX_POOL2D, big, 2, &x, 1, &yb, 1);

    /* global average: [1,2,2,2] -> [1,2,1,1]; rank 3 input too */
    rt_ref_tensor g = tf(SYMC_F32, SH(1, 2, 2, 2), V(1, 2, 3, 4, 10, 20, 30, 40));
    rt_ref_tensor yg = tz(SYMC_F32, SH(1, 2, 1, 1));
    RUN_OK(IR_OP_GLOBAL_AVG_POOL, NULL, 0, &g, 1, &yg, 1);
    EXPECT(yg, 0, 2.5, 25);
    rt_ref_tensor g3 = tf(SYMC_BF16, SH(2, 1, 3), V(1, 2, 3, -1, -2, -3));
    rt_ref_tensor yg3 = tz(SYMC_BF16, SH(2, 1, 1));
    RUN_OK(IR_OP_GLOBAL_AVG_POOL, NULL, 0, &g3, 1, &yg3, 1);
    EXPECT(yg3, 0, 2, -2);
}

int main(void) {
    test_matmul();
    test_matmul_tiled();
    test_gemm();
    test_conv2d();
    test_conv_rows();
    test_pool();
    tfree_all();
    return check_report("runtime.contract");
}
