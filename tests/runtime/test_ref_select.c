/* Reference kernels whose output size depends on the data: nonzero, unique,
 * nms (runtime/ref/ref_kernels_index.c, ref_kernels_select.c).
 *
 * Each is called as the reference backend calls it: the produced dim of the
 * output at its capacity (the bound), and read back at the real count the
 * kernel sets. Expected values are hand-checked small cases (the ONNX
 * operator documentation's examples among them) and the edge cases (count
 * 0, all distinct, NaN, ties, thresholds, center-point boxes, a capacity too
 * small), then 40 + 40 random cases whose outputs onnxruntime computed
 * (select_cases.h, written by gen_select_cases.py). */
#include "tests/runtime/ref_test.h"
#include "tests/runtime/select_cases.h"

/* i64 tensor t holds exactly these values (and that many) */
static void expect_i(const char *file, int line, const rt_ref_tensor *t, const int64_t *want, int64_t n) {
    check_count++;
    if (tnumel(t) != n) {
        check_failures++;
        fprintf(stderr, "%s:%d: %lld elements, expected %lld\n", file, line, (long long)tnumel(t), (long long)n);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        if (tgeti(t, i) != want[i]) {
            check_failures++;
            fprintf(stderr, "%s:%d: element %lld is %lld, expected %lld\n", file, line, (long long)i,
                    (long long)tgeti(t, i), (long long)want[i]);
            return;
        }
}
#define EXPECT_I(t, ...) expect_i(__FILE__, __LINE__, &(t), I(__VA_ARGS__), (int64_t)(sizeof(I(__VA_ARGS__)) / 8))
#define EXPECT_EMPTY(t) expect_i(__FILE__, __LINE__, &(t), NULL, 0)

/* ---- nonzero ------------------------------------------------------------------------------ */

static void test_nonzero(void) {
    rt_ref_tensor x = tf(SYMC_F32, SH(2, 3), V(1, 0, 2, 0, 0, -3));
    rt_ref_tensor y = tz(SYMC_I64, SH(2, 6)); /* capacity: numel */
    RUN_OK(IR_OP_NONZERO, NULL, 0, &x, 1, &y, 1);
    CHECK(y.rank == 2 && y.dims[0] == 2 && y.dims[1] == 3);
    EXPECT_I(y, 0, 0, 1, 0, 2, 2);
    /* all zero: no columns */
    rt_ref_tensor z = tz(SYMC_I32, SH(4)), yz = tz(SYMC_I64, SH(1, 4));
    RUN_OK(IR_OP_NONZERO, NULL, 0, &z, 1, &yz, 1);
    CHECK(yz.dims[0] == 1 && yz.dims[1] == 0);
    /* NaN is non-zero (numpy), -0.0 is zero */
    rt_ref_tensor xn = tf(SYMC_F32, SH(3), V(NAN, -0.0, 1)), yn = tz(SYMC_I64, SH(1, 3));
    RUN_OK(IR_OP_NONZERO, NULL, 0, &xn, 1, &yn, 1);
    EXPECT_I(yn, 0, 2);
    /* bool input, and a capacity below the count: the bound's error, not a truncation */
    rt_ref_tensor b = ti(SYMC_BOOL, SH(3), I(1, 1, 1)), ys = tz(SYMC_I64, SH(1, 2));
    RUN_FAILS(SYMC_ERR_RANGE, "output 0 has 3 entries along dim 1, more than the 2", IR_OP_NONZERO, NULL, 0, &b, 1, &ys,
              1);
    tfree_all();
}

/* ---- unique ------------------------------------------------------------------------------- */

typedef struct uq_out {
    rt_ref_tensor idx, inv, cnt;
} uq_out;

/* runs unique on x with capacity n for the produced dims */
static symc_status run_unique(const rt_ref_tensor *x, const symc_attr *a, uint32_t na, int64_t n, uq_out *o) {
    o->idx = tz(SYMC_I64, 1, &n);
    o->inv = tz(SYMC_I64, 1, &n);
    o->cnt = tz(SYMC_I64, 1, &n);
    rt_ref_tensor outs[3] = {o->idx, o->inv, o->cnt};
    symc_status st = trun(IR_OP_UNIQUE, a, na, x, 1, outs, 3);
    o->idx = outs[0], o->inv = outs[1], o->cnt = outs[2];
    return st;
}

static void test_unique(void) {
    uq_out o;
    /* the ONNX documentation's examples */
    rt_ref_tensor x = tf(SYMC_F32, SH(6), V(2, 1, 1, 3, 4, 3));
    CHECK_MSG(run_unique(&x, NULL, 0, 6, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 1, 0, 3, 4);
    EXPECT_I(o.inv, 1, 0, 0, 2, 3, 2);
    EXPECT_I(o.cnt, 2, 1, 2, 1);
    symc_attr unsorted = symc_attr_int("sorted", 0);
    CHECK_MSG(run_unique(&x, &unsorted, 1, 6, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 0, 1, 3, 4);
    EXPECT_I(o.inv, 0, 1, 1, 2, 3, 2);
    EXPECT_I(o.cnt, 1, 2, 2, 1);
    rt_ref_tensor rows = tf(SYMC_F32, SH(3, 3), V(1, 0, 0, 1, 0, 0, 2, 3, 4));
    symc_attr ax0 = symc_attr_int("axis", 0);
    CHECK_MSG(run_unique(&rows, &ax0, 1, 3, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 0, 2);
    EXPECT_I(o.inv, 0, 0, 1);
    EXPECT_I(o.cnt, 2, 1);
    /* [2, 4, 2] along axis 1: slices [[1,1],[1,1]], [[0,1],[0,1]], [[2,1],[2,1]], [[0,1],[0,1]] */
    rt_ref_tensor x3 = tf(SYMC_I64, SH(2, 4, 2), V(1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1));
    symc_attr ax1 = symc_attr_int("axis", 1);
    CHECK_MSG(run_unique(&x3, &ax1, 1, 4, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 1, 0, 2);
    EXPECT_I(o.inv, 1, 0, 2, 0);
    EXPECT_I(o.cnt, 2, 1, 1);
    symc_attr axm1[2] = {symc_attr_int("axis", -2), symc_attr_int("sorted", 0)}; /* axis 1 again, first-seen order */
    CHECK_MSG(run_unique(&x3, axm1, 2, 4, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 0, 1, 2);
    EXPECT_I(o.inv, 0, 1, 2, 1);
    /* all distinct, descending */
    rt_ref_tensor d = tf(SYMC_I32, SH(3), V(3, 2, 1));
    CHECK_MSG(run_unique(&d, NULL, 0, 3, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 2, 1, 0);
    EXPECT_I(o.inv, 2, 1, 0);
    EXPECT_I(o.cnt, 1, 1, 1);
    /* NaN equals NaN and sorts last (numpy, the ONNX reference); -0.0 equals 0.0 */
    rt_ref_tensor xn = tf(SYMC_F32, SH(5), V(NAN, 1, NAN, 0, -0.0));
    CHECK_MSG(run_unique(&xn, NULL, 0, 5, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 3, 1, 0);
    EXPECT_I(o.inv, 2, 1, 2, 0, 0);
    EXPECT_I(o.cnt, 2, 1, 2);
    /* empty: count 0 */
    rt_ref_tensor e = tz(SYMC_F32, SH(0));
    CHECK_MSG(run_unique(&e, NULL, 0, 0, &o) == SYMC_OK, "%s", terr.msg);
    CHECK(o.idx.dims[0] == 0 && o.inv.dims[0] == 0 && o.cnt.dims[0] == 0);
    /* one value repeated: count 1 within capacity 4 */
    rt_ref_tensor same = tf(SYMC_F32, SH(2, 2), V(7, 7, 7, 7));
    CHECK_MSG(run_unique(&same, NULL, 0, 4, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 0);
    EXPECT_I(o.inv, 0, 0, 0, 0);
    EXPECT_I(o.cnt, 4);
    /* u64 orders unsigned: 2^63 after 1 */
    rt_ref_tensor u = tz(SYMC_U64, SH(2));
    const uint64_t uv[2] = {(uint64_t)1 << 63, 1};
    memcpy(u.data, uv, sizeof uv);
    CHECK_MSG(run_unique(&u, NULL, 0, 2, &o) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(o.idx, 1, 0);
    /* errors: capacity below the count; sorted not 0/1; axis out of range */
    CHECK(run_unique(&x, NULL, 0, 3, &o) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(terr.msg, "more than the 3 its memory was planned for");
    symc_attr bad = symc_attr_int("sorted", 2);
    CHECK(run_unique(&x, &bad, 1, 6, &o) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(terr.msg, "sorted = 2 must be 0 or 1");
    symc_attr ax5 = symc_attr_int("axis", 5);
    CHECK(run_unique(&x, &ax5, 1, 6, &o) == SYMC_ERR_INVALID_ARG);
    tfree_all();
}

static void test_unique_onnxruntime(void) {
    int bad = 0;
    for (size_t k = 0; k < sizeof unique_cases / sizeof unique_cases[0]; k++) {
        const unique_case *q = &unique_cases[k];
        rt_ref_tensor x = tz(SYMC_F32, q->rank, q->dims);
        for (int64_t i = 0; i < tnumel(&x); i++) tset(&x, i, q->x[i]);
        symc_attr a[2] = {symc_attr_int("sorted", q->sorted), symc_attr_int("axis", q->axis)};
        uq_out o;
        symc_status st = run_unique(&x, a, q->has_axis ? 2 : 1, q->n, &o);
        CHECK_MSG(st == SYMC_OK, "case %zu: %s", k, terr.msg);
        if (st) continue;
        int same = o.idx.dims[0] == q->u && o.cnt.dims[0] == q->u && o.inv.dims[0] == q->n;
        for (int64_t i = 0; same && i < q->u; i++)
            same = tgeti(&o.idx, i) == q->indices[i] && tgeti(&o.cnt, i) == q->counts[i];
        for (int64_t i = 0; same && i < q->n; i++) same = tgeti(&o.inv, i) == q->inverse[i];
        if (!same && bad++ < 5) fprintf(stderr, "unique case %zu differs from onnxruntime\n", k);
    }
    CHECK_MSG(bad == 0, "%d unique cases differ from onnxruntime", bad);
    tfree_all();
}

/* ---- nms ----------------------------------------------------------------------------------- */

/* boxes [1, 6, 4] of the ONNX documentation's cases: three overlapping near 0, two near 10, one at 100 */
static const double doc_boxes[] = {0, 0,  1, 1,  0, 0.1,  1, 1.1,  0, -0.1, 1, 0.9,
                                   0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100,  1, 101};
static const double doc_flipped[] = {1, 1,  0, 0,  0, 0.1,  1, 1.1,  0, 0.9, 1, -0.1,
                                     0, 10, 1, 11, 1, 10.1, 0, 11.1, 1, 101, 0, 100};
static const double doc_center[] = {0.5, 0.5,  1, 1, 0.5, 0.6,  1, 1, 0.5, 0.4,   1, 1,
                                    0.5, 10.5, 1, 1, 0.5, 10.6, 1, 1, 0.5, 100.5, 1, 1};
static const double doc_scores[] = {0.9, 0.75, 0.6, 0.95, 0.5, 0.3};

/* nms with n_in inputs (2..5); the output's capacity is B*C*N */
static symc_status run_nms(rt_ref_tensor *in, uint32_t n_in, int64_t center, int64_t cap, rt_ref_tensor *y) {
    *y = tz(SYMC_I64, SH(cap, 3));
    symc_attr a = symc_attr_int("center_point_box", center);
    return trun(IR_OP_NMS, &a, 1, in, n_in, y, 1);
}

static void nms_inputs(rt_ref_tensor *in, const double *boxes, int64_t B, int64_t C, int64_t N, const double *scores,
                       int64_t max_out, double iou, double thr) {
    in[0] = tf(SYMC_F32, 3, D(B, N, 4), boxes);
    in[1] = tf(SYMC_F32, 3, D(B, C, N), scores);
    in[2] = ti(SYMC_I64, SH(1), I(max_out));
    in[3] = tf(SYMC_F32, SH(1), V(iou));
    in[4] = tf(SYMC_F32, SH(1), V(thr));
}

static void test_nms(void) {
    rt_ref_tensor in[5], y;
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, 3, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 3, 0, 0, 0, 0, 0, 5);
    nms_inputs(in, doc_flipped, 1, 1, 6, doc_scores, 3, 0.5, 0.0); /* corners in either order */
    CHECK_MSG(run_nms(in, 5, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 3, 0, 0, 0, 0, 0, 5);
    nms_inputs(in, doc_center, 1, 1, 6, doc_scores, 3, 0.5, 0.0); /* [xc, yc, w, h] */
    CHECK_MSG(run_nms(in, 5, 1, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 3, 0, 0, 0, 0, 0, 5);
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, 2, 0.5, 0.0); /* limit per class */
    CHECK_MSG(run_nms(in, 5, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 3, 0, 0, 0);
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, 3, 0.5, 0.4); /* score threshold */
    CHECK_MSG(run_nms(in, 5, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 3, 0, 0, 0);
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, 3, 0.5, 0.95); /* strict: a score at the threshold is out */
    CHECK_MSG(run_nms(in, 5, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_EMPTY(y);
    CHECK(y.dims[0] == 0 && y.dims[1] == 3);
    /* two batches and two classes: batch, then class, then score order */
    double b2[48], s2[12];
    memcpy(b2, doc_boxes, sizeof doc_boxes), memcpy(b2 + 24, doc_boxes, sizeof doc_boxes);
    memcpy(s2, doc_scores, sizeof doc_scores), memcpy(s2 + 6, doc_scores, sizeof doc_scores);
    nms_inputs(in, b2, 2, 1, 6, s2, 2, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 12, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 3, 0, 0, 0, 1, 0, 3, 1, 0, 0);
    nms_inputs(in, doc_boxes, 1, 2, 6, s2, 2, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 12, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 3, 0, 0, 0, 0, 1, 3, 0, 1, 0);
    /* identical boxes, equal scores: the lowest index is visited first and suppresses the rest */
    double same[40], same_s[10];
    for (int i = 0; i < 10; i++) same[4 * i] = 0, same[4 * i + 1] = 0, same[4 * i + 2] = 1, same[4 * i + 3] = 1;
    for (int i = 0; i < 10; i++) same_s[i] = 0.9;
    nms_inputs(in, same, 1, 1, 10, same_s, 3, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 10, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 0);
    /* ties among boxes that do not overlap: ascending index; a NaN score is never selected */
    double apart[12] = {0, 0, 1, 1, 0, 5, 1, 6, 0, 9, 1, 10}, tie_s[3] = {0.5, 0.7, 0.7}, nan_s[3] = {NAN, 0.2, 0.1};
    nms_inputs(in, apart, 1, 1, 3, tie_s, 5, 0.0, 0.0);
    CHECK_MSG(run_nms(in, 4, 0, 3, &y) == SYMC_OK, "%s", terr.msg); /* no score threshold */
    EXPECT_I(y, 0, 0, 1, 0, 0, 2, 0, 0, 0);
    nms_inputs(in, apart, 1, 1, 3, nan_s, 5, 0.0, 0.0);
    CHECK_MSG(run_nms(in, 4, 0, 3, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 1, 0, 0, 2);
    /* IoU exactly at the threshold does not suppress (> only): [0,0,2,1] and [0,1,2,2]... overlap 0:
     * use [0,0,1,2] and [0,0,1,1]: IoU 1/2 */
    double half[8] = {0, 0, 1, 2, 0, 0, 1, 1}, hs[2] = {0.9, 0.8};
    nms_inputs(in, half, 1, 1, 2, hs, 5, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 2, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 0, 0, 0, 1);
    nms_inputs(in, half, 1, 1, 2, hs, 5, 0.49, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 2, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 0);
    /* the ONNX test at the boundary: IoU 0.25 / 1.75 against the f32 threshold 1/7, equal, not above */
    double bnd[8] = {0, 0, 1, 1, 0.5, 0.5, 1.5, 1.5};
    nms_inputs(in, bnd, 1, 1, 2, hs, 3, 0.1428571492433548, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 2, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 0, 0, 0, 1);
    /* a zero-area box never suppresses nor is suppressed */
    double flat[8] = {0, 0, 0, 1, 0, 0, 1, 1};
    nms_inputs(in, flat, 1, 1, 2, hs, 5, 0.0, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 2, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_I(y, 0, 0, 0, 0, 0, 1);
    /* max_output_boxes_per_class absent, 0 or negative: no boxes */
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, 0, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 2, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_EMPTY(y);
    CHECK_MSG(run_nms(in, 5, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_EMPTY(y);
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, -4, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 6, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_EMPTY(y);
    /* no boxes at all */
    nms_inputs(in, NULL, 1, 2, 0, NULL, 3, 0.5, 0.0);
    CHECK_MSG(run_nms(in, 5, 0, 0, &y) == SYMC_OK, "%s", terr.msg);
    EXPECT_EMPTY(y);
    /* errors */
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, 3, 1.5, 0.0);
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "iou_threshold = 1.5 must be in [0, 1]", IR_OP_NMS, NULL, 0, in, 5, &y, 1);
    nms_inputs(in, doc_boxes, 1, 1, 6, doc_scores, 3, 0.5, 0.0);
    CHECK(run_nms(in, 5, 0, 2, &y) == SYMC_ERR_RANGE); /* capacity 2, three selected */
    CHECK_CONTAINS(terr.msg, "more than the 2 selected boxes its memory was planned for");
    CHECK(run_nms(in, 5, 2, 6, &y) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(terr.msg, "center_point_box = 2 must be 0 or 1");
    rt_ref_tensor wrong[2] = {in[0], tf(SYMC_F32, SH(1, 1, 5), V(1, 2, 3, 4, 5))};
    y = tz(SYMC_I64, SH(5, 3));
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "must be [B, N, 4] and [B, C, N]", IR_OP_NMS, NULL, 0, wrong, 2, &y, 1);
    rt_ref_tensor two[3] = {in[0], in[1], ti(SYMC_I64, SH(2), I(1, 2))};
    RUN_FAILS(SYMC_ERR_INVALID_ARG, "input 2 (max_output_boxes_per_class) must hold one element", IR_OP_NMS, NULL, 0,
              two, 3, &y, 1);
    tfree_all();
}

static void test_nms_onnxruntime(void) {
    int bad = 0;
    for (size_t k = 0; k < sizeof nms_cases / sizeof nms_cases[0]; k++) {
        const nms_case *q = &nms_cases[k];
        rt_ref_tensor in[5], y;
        in[0] = tz(SYMC_F32, 3, D(q->B, q->N, 4));
        in[1] = tz(SYMC_F32, 3, D(q->B, q->C, q->N));
        for (int64_t i = 0; i < tnumel(&in[0]); i++) tset(&in[0], i, q->boxes[i]);
        for (int64_t i = 0; i < tnumel(&in[1]); i++) tset(&in[1], i, q->scores[i]);
        in[2] = ti(SYMC_I64, SH(1), I(q->max_out));
        in[3] = tf(SYMC_F32, SH(1), V(q->iou));
        in[4] = tf(SYMC_F32, SH(1), V(q->thr));
        symc_status st = run_nms(in, q->have_thr ? 5 : 4, q->center, q->B * q->C * q->N, &y);
        CHECK_MSG(st == SYMC_OK, "case %zu: %s", k, terr.msg);
        if (st) continue;
        int same = y.dims[0] == q->n_sel;
        for (int64_t i = 0; same && i < 3 * q->n_sel; i++) same = tgeti(&y, i) == q->sel[i];
        if (!same && bad++ < 5)
            fprintf(stderr, "nms case %zu differs from onnxruntime (%lld rows, expected %lld)\n", k,
                    (long long)y.dims[0], (long long)q->n_sel);
    }
    CHECK_MSG(bad == 0, "%d nms cases differ from onnxruntime", bad);
    tfree_all();
}

int main(void) {
    test_nonzero();
    test_unique();
    test_unique_onnxruntime();
    test_nms();
    test_nms_onnxruntime();
    return check_report("runtime.ref_select");
}
