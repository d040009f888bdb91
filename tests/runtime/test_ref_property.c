/* Property tests where hand values are impractical: each kernel against an
 * independent, naive formulation written here (with its own index
 * arithmetic), or against an identity the result must satisfy.
 *   matmul   vs a triple loop with explicitly broadcast batch indices
 *   conv2d   vs the 7-loop definition (over padded coordinates, per group)
 *   gemm     = matmul + C
 *   binary broadcasting = expand both operands, then elementwise
 *   avg_pool = depthwise conv2d with uniform weights (no padding)
 *   softmax  rows sum to 1; exp(log_softmax) likewise
 *   layer_norm rows have mean 0 and variance 1; rms_norm rows mean square 1
 *   transpose by a permutation, then by its inverse, is the identity
 * Inputs are deterministic pseudo-random values in [-1, 1). */
#include "ref_test.h"

static int same(const rt_ref_tensor *a, const rt_ref_tensor *b, double tol) {
    if (tnumel(a) != tnumel(b)) return 0;
    for (int64_t i = 0; i < tnumel(a); i++)
        if (!tclose(tget(a, i), tget(b, i), tol)) {
            fprintf(stderr, "element %lld: %.17g vs %.17g\n", (long long)i, tget(a, i), tget(b, i));
            return 0;
        }
    return 1;
}

/* a [B0, 1, M, K] x b [B1, K, N] -> [B0, B1, M, N] */
static void prop_matmul(int64_t b0, int64_t b1, int64_t m, int64_t k, int64_t n, symc_dtype dt, double tol) {
    rt_ref_tensor in[2] = {trandom(dt, SH(b0, 1, m, k)), trandom(dt, SH(b1, k, n))};
    rt_ref_tensor y = tz(dt, SH(b0, b1, m, n));
    RUN_OK(IR_OP_MATMUL, NULL, 0, in, 2, &y, 1);
    rt_ref_tensor want = tz(SYMC_F64, SH(b0, b1, m, n));
    for (int64_t p = 0; p < b0; p++)
        for (int64_t q = 0; q < b1; q++)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    double s = 0;
                    for (int64_t t = 0; t < k; t++)
                        s += tget(&in[0], ((p * m) + i) * k + t) * tget(&in[1], (q * k + t) * n + j);
                    tset(&want, ((p * b1 + q) * m + i) * n + j, s);
                }
    CHECK_MSG(same(&y, &want, tol), "matmul %lld %lld %lld %lld %lld (%s)", (long long)b0, (long long)b1, (long long)m,
              (long long)k, (long long)n, symc_dtype_name(dt));
}

typedef struct conv_case {
    int64_t n, c, h, w, o, group, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
} conv_case;

static void prop_conv(const conv_case *cc) {
    int64_t cg = cc->c / cc->group;
    int64_t ho = (cc->h + cc->pt + cc->pb - cc->dh * (cc->kh - 1) - 1) / cc->sh + 1;
    int64_t wo = (cc->w + cc->pl + cc->pr - cc->dw * (cc->kw - 1) - 1) / cc->sw + 1;
    rt_ref_tensor in[3] = {trandom(SYMC_F64, SH(cc->n, cc->c, cc->h, cc->w)),
                           trandom(SYMC_F64, SH(cc->o, cg, cc->kh, cc->kw)), trandom(SYMC_F64, SH(cc->o))};
    symc_attr at[4] = {symc_attr_ints("strides", (int64_t[]){cc->sh, cc->sw}, 2),
                       symc_attr_ints("pads", (int64_t[]){cc->pt, cc->pl, cc->pb, cc->pr}, 4),
                       symc_attr_ints("dilations", (int64_t[]){cc->dh, cc->dw}, 2), symc_attr_int("group", cc->group)};
    rt_ref_tensor y = tz(SYMC_F64, SH(cc->n, cc->o, ho, wo));
    RUN_OK(IR_OP_CONV2D, at, 4, in, 3, &y, 1);
    /* the definition: zero-padded input, per group g, output channel o in g */
    int64_t hp = cc->h + cc->pt + cc->pb, wp = cc->w + cc->pl + cc->pr, opg = cc->o / cc->group;
    rt_ref_tensor want = tz(SYMC_F64, SH(cc->n, cc->o, ho, wo));
    for (int64_t n = 0; n < cc->n; n++)
        for (int64_t g = 0; g < cc->group; g++)
            for (int64_t oo = 0; oo < opg; oo++)
                for (int64_t i = 0; i < ho; i++)
                    for (int64_t j = 0; j < wo; j++) {
                        int64_t o = g * opg + oo;
                        double s = tget(&in[2], o);
                        for (int64_t q = 0; q < cg; q++)
                            for (int64_t r = 0; r < cc->kh; r++)
                                for (int64_t t = 0; t < cc->kw; t++) {
                                    int64_t yp = i * cc->sh + r * cc->dh, xp = j * cc->sw + t * cc->dw;
                                    if (yp >= hp || xp >= wp) continue; /* cannot happen */
                                    int64_t yy = yp - cc->pt, xx = xp - cc->pl;
                                    double v = (yy >= 0 && yy < cc->h && xx >= 0 && xx < cc->w)
                                        ? tget(&in[0], ((n * cc->c + g * cg + q) * cc->h + yy) * cc->w + xx)
                                        : 0.0;
                                    s += v * tget(&in[1], ((o * cg + q) * cc->kh + r) * cc->kw + t);
                                }
                        tset(&want, ((n * cc->o + o) * ho + i) * wo + j, s);
                    }
    CHECK_MSG(same(&y, &want, 1e-12), "conv2d case c=%lld o=%lld group=%lld", (long long)cc->c, (long long)cc->o,
              (long long)cc->group);
}

static void prop_gemm_broadcast_pool(void) {
    /* gemm(A, B, C) == matmul(A, B) + C */
    rt_ref_tensor in[3] = {trandom(SYMC_F64, SH(4, 5)), trandom(SYMC_F64, SH(5, 3)), trandom(SYMC_F64, SH(4, 1))};
    rt_ref_tensor g = tz(SYMC_F64, SH(4, 3)), mm = tz(SYMC_F64, SH(4, 3)), sum = tz(SYMC_F64, SH(4, 3));
    RUN_OK(IR_OP_GEMM, NULL, 0, in, 3, &g, 1);
    RUN_OK(IR_OP_MATMUL, NULL, 0, in, 2, &mm, 1);
    rt_ref_tensor add_in[2] = {mm, in[2]};
    RUN_OK(IR_OP_ADD, NULL, 0, add_in, 2, &sum, 1);
    CHECK(same(&g, &sum, 1e-14));

    /* broadcasting: mul(a [3,1,4], b [2,1]) == mul(expand(a), expand(b)) */
    rt_ref_tensor a = trandom(SYMC_F32, SH(3, 1, 4)), b = trandom(SYMC_F32, SH(2, 1));
    rt_ref_tensor ab[2] = {a, b};
    rt_ref_tensor y = tz(SYMC_F32, SH(3, 2, 4));
    RUN_OK(IR_OP_MUL, NULL, 0, ab, 2, &y, 1);
    symc_attr shape = symc_attr_ints("shape", I(3, 2, 4), 3);
    rt_ref_tensor ea = tz(SYMC_F32, SH(3, 2, 4)), eb = tz(SYMC_F32, SH(3, 2, 4)), y2 = tz(SYMC_F32, SH(3, 2, 4));
    RUN_OK(IR_OP_EXPAND, &shape, 1, &a, 1, &ea, 1);
    RUN_OK(IR_OP_EXPAND, &shape, 1, &b, 1, &eb, 1);
    rt_ref_tensor e2[2] = {ea, eb};
    RUN_OK(IR_OP_MUL, NULL, 0, e2, 2, &y2, 1);
    CHECK(same(&y, &y2, 0));

    /* avg_pool 3x2 stride (2,1) == depthwise conv with weights 1/6 */
    rt_ref_tensor x = trandom(SYMC_F64, SH(2, 3, 7, 5));
    symc_attr pa[2] = {symc_attr_ints("kernel", I(3, 2), 2), symc_attr_ints("strides", I(2, 1), 2)};
    rt_ref_tensor yp = tz(SYMC_F64, SH(2, 3, 3, 4));
    RUN_OK(IR_OP_AVG_POOL2D, pa, 2, &x, 1, &yp, 1);
    rt_ref_tensor w = tz(SYMC_F64, SH(3, 1, 3, 2));
    for (int i = 0; i < 18; i++) tset(&w, i, 1.0 / 6.0);
    symc_attr ca[2] = {symc_attr_ints("strides", I(2, 1), 2), symc_attr_int("group", 3)};
    rt_ref_tensor cin[2] = {x, w};
    rt_ref_tensor yc = tz(SYMC_F64, SH(2, 3, 3, 4));
    RUN_OK(IR_OP_CONV2D, ca, 2, cin, 2, &yc, 1);
    CHECK(same(&yp, &yc, 1e-14));
}

static void prop_softmax_norms(void) {
    rt_ref_tensor x = trandom(SYMC_F32, SH(3, 4, 5));
    for (int64_t i = 0; i < tnumel(&x); i++) tset(&x, i, 20 * tget(&x, i)); /* spread out */
    symc_attr ax = symc_attr_int("axis", 1);
    rt_ref_tensor y = tz(SYMC_F32, SH(3, 4, 5)), ly = tz(SYMC_F32, SH(3, 4, 5));
    RUN_OK(IR_OP_SOFTMAX, &ax, 1, &x, 1, &y, 1);
    RUN_OK(IR_OP_LOG_SOFTMAX, &ax, 1, &x, 1, &ly, 1);
    int bad = 0;
    for (int64_t o = 0; o < 3; o++)
        for (int64_t i = 0; i < 5; i++) {
            double s = 0, ls = 0;
            for (int64_t j = 0; j < 4; j++) {
                double v = tget(&y, (o * 4 + j) * 5 + i);
                bad += !(v >= 0 && v <= 1);
                s += v;
                ls += exp(tget(&ly, (o * 4 + j) * 5 + i));
            }
            bad += fabs(s - 1) > 1e-6 || fabs(ls - 1) > 1e-6;
        }
    CHECK_MSG(bad == 0, "%d softmax rows off", bad);

    /* layer_norm over the last two dims of [3,5,7]: mean 0, variance 1 */
    rt_ref_tensor z = trandom(SYMC_F64, SH(3, 5, 7));
    symc_attr la[2] = {symc_attr_int("axis", -2), symc_attr_float("epsilon", 0)};
    rt_ref_tensor zy = tz(SYMC_F64, SH(3, 5, 7)), ry = tz(SYMC_F64, SH(3, 5, 7));
    RUN_OK(IR_OP_LAYER_NORM, la, 2, &z, 1, &zy, 1);
    RUN_OK(IR_OP_RMS_NORM, la, 2, &z, 1, &ry, 1);
    bad = 0;
    for (int64_t o = 0; o < 3; o++) {
        double m = 0, v = 0, ms = 0;
        for (int64_t j = 0; j < 35; j++) m += tget(&zy, o * 35 + j);
        m /= 35;
        for (int64_t j = 0; j < 35; j++) {
            double d = tget(&zy, o * 35 + j) - m, r = tget(&ry, o * 35 + j);
            v += d * d;
            ms += r * r;
        }
        bad += fabs(m) > 1e-12 || fabs(v / 35 - 1) > 1e-12 || fabs(ms / 35 - 1) > 1e-12;
    }
    CHECK_MSG(bad == 0, "%d normalized rows off", bad);
}

static void prop_transpose_inverse(void) {
    rt_ref_tensor x = trandom(SYMC_BF16, SH(2, 3, 4, 5));
    symc_attr p = symc_attr_ints("perm", I(2, 0, 3, 1), 4);
    symc_attr inv = symc_attr_ints("perm", I(1, 3, 0, 2), 4); /* inv[perm[d]] = d */
    rt_ref_tensor t = tz(SYMC_BF16, SH(4, 2, 5, 3)), back = tz(SYMC_BF16, SH(2, 3, 4, 5));
    RUN_OK(IR_OP_TRANSPOSE, &p, 1, &x, 1, &t, 1);
    RUN_OK(IR_OP_TRANSPOSE, &inv, 1, &t, 1, &back, 1);
    CHECK(memcmp(x.data, back.data, 2 * 120) == 0);
    /* and the transposed element (a, b, c, d) -> (c, a, d, b) */
    CHECK(tbits16(&t, ((3 * 2 + 1) * 5 + 4) * 3 + 2) == tbits16(&x, ((1 * 3 + 2) * 4 + 3) * 5 + 4));
}

int main(void) {
    prop_matmul(2, 3, 4, 5, 6, SYMC_F64, 1e-14);
    prop_matmul(1, 1, 1, 7, 1, SYMC_F64, 1e-14);
    prop_matmul(3, 2, 5, 1, 4, SYMC_F32, 1e-6);
    prop_matmul(2, 2, 3, 16, 3, SYMC_F16, 2e-3);
    static const conv_case cases[] = {
        {1, 1, 5, 5, 1, 1, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1},
        {2, 4, 7, 6, 6, 2, 3, 2, 2, 1, 1, 0, 2, 1, 1, 2}, /* groups, asymmetric pads, dilation */
        {1, 3, 6, 6, 3, 3, 3, 3, 1, 2, 1, 1, 1, 1, 2, 1}, /* depthwise */
        {2, 2, 4, 9, 4, 1, 1, 4, 3, 2, 0, 3, 0, 0, 1, 1}, /* 1xk kernel, big strides */
        {1, 6, 5, 5, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 3, 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) prop_conv(&cases[i]);
    prop_gemm_broadcast_pool();
    prop_softmax_norms();
    prop_transpose_inverse();
    tfree_all();
    return check_report("runtime.property");
}
