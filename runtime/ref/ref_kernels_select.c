/* Selection ops whose output size depends on the data: unique and nms
 * (docs/PLAN-data-dependent.md §2). Like nonzero (ref_kernels_index.c) each
 * is called with its produced dim at capacity, writes its output contiguous
 * at the real count and reports the count through rt_ref_produced_out.
 *
 * Both aim at exactness and readability, not speed, and neither allocates:
 * the work is quadratic and every intermediate lives in the outputs.
 *
 * unique (numpy's np.unique and the ONNX reference): the items are x's
 * elements (no axis) or its slices along `axis`, compared element by element
 * in row-major order of the other dims (lexicographically, for the order).
 * An item is kept when no earlier item equals it; its position among the
 * kept ones is the number of kept items before it in value order (sorted=1)
 * or in index order (sorted=0). indices[p] is the item, counts[p] the number
 * of its equals, and inverse[k] the position of item k's first equal, found
 * by a scan of the indices already written. NaN equals NaN and orders after
 * every number (numpy's equal_nan=True, which the ONNX reference's
 * np.unique uses; onnxruntime's std::map with NaN keys has no defined
 * result), -0.0 equals 0.0, u64 orders unsigned.
 *
 * nms (onnxruntime's CPU NonMaxSuppression, exactly): per batch, then per
 * class, the boxes whose score passes (score > score_threshold when that
 * input is given; a NaN score never passes) are visited in order of score,
 * descending, equal scores by ascending box index (onnxruntime's heap leaves
 * ties unspecified; the ONNX reference keeps index order). A visited box is
 * kept unless its IoU with a box already kept for this class exceeds
 * iou_threshold; at max_output_boxes_per_class kept boxes the class ends
 * (absent, 0 or negative: no output at all). The next box is found by a scan
 * for the first in that order after the previous one, and the boxes kept so
 * far are the output's rows of this class. IoU is computed in float with
 * onnxruntime's arithmetic, step for step (the file is built with
 * -ffp-contract=off, so no step is fused): corners in either order (min and
 * max of each coordinate pair), or [xc, yc, w, h] with center_point_box=1;
 * boxes that do not overlap, or of zero area, never suppress. */
#include <math.h>
#include <stdint.h>

#include "runtime/ref/ref_kernels_internal.h"

/* ---- unique -------------------------------------------------------------------------------- */

/* -1, 0, 1: elements i and j of x (NaN equal to NaN and above every number) */
static int cmp_elem(const rt_ref_tensor *x, int64_t i, int64_t j) {
    if (rt_is_float(x->dtype)) {
        double a = rt_ld_f(x, i), b = rt_ld_f(x, j);
        if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
        return (a > b) - (a < b);
    }
    if (rt_is_u64(x->dtype)) {
        uint64_t a = (uint64_t)rt_ld_i(x, i), b = (uint64_t)rt_ld_i(x, j);
        return (a > b) - (a < b);
    }
    int64_t a = rt_ld_i(x, i), b = rt_ld_i(x, j);
    return (a > b) - (a < b);
}

/* x viewed as [outer, n, inner]: item i is the slice x[:, i, :] */
typedef struct items {
    const rt_ref_tensor *x;
    int64_t outer, n, inner;
} items;

/* lexicographic comparison of items i and j */
static int cmp_item(const items *s, int64_t i, int64_t j) {
    for (int64_t o = 0; o < s->outer; o++)
        for (int64_t r = 0; r < s->inner; r++) {
            int v = cmp_elem(s->x, (o * s->n + i) * s->inner + r, (o * s->n + j) * s->inner + r);
            if (v) return v;
        }
    return 0;
}

/* the first item equal to item i */
static int64_t first_equal(const items *s, int64_t i) {
    for (int64_t j = 0; j < i; j++)
        if (!cmp_item(s, j, i)) return j;
    return i;
}

symc_status rt_ref_k_unique(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t sorted, axis_v = 0;
    symc_status st = rt_ref_attr_int(c, "sorted", 0, 1, &sorted);
    if (st) return st;
    if (sorted != 0 && sorted != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "sorted = %lld must be 0 or 1", (long long)sorted);
    items s = {x, 1, rt_ref_numel_dims(x->rank, x->dims), 1};
    if (rt_ref_attr_find(c, "axis")) {
        int32_t a = 0;
        if ((st = rt_ref_attr_int(c, "axis", 1, 0, &axis_v)) || (st = rt_ref_norm_axis(c, axis_v, x->rank, "axis", &a)))
            return st;
        s.outer = rt_ref_numel_dims(a, x->dims);
        s.n = x->dims[a];
        s.inner = rt_ref_numel_dims(x->rank - a - 1, x->dims + a + 1);
    }
    int64_t u = 0;
    for (int64_t i = 0; i < s.n; i++) u += first_equal(&s, i) == i;
    if ((st = rt_ref_produced_out(c, 0, SYMC_I64, 1, &u, 0, u)) || (st = rt_ref_check_out(c, 1, SYMC_I64, 1, &s.n)) ||
        (st = rt_ref_produced_out(c, 2, SYMC_I64, 1, &u, 0, u)))
        return st;
    rt_ref_tensor *indices = &c->out[0], *inverse = &c->out[1], *counts = &c->out[2];
    for (int64_t i = 0; i < s.n; i++) {
        if (first_equal(&s, i) != i) continue;
        int64_t p = 0, count = 0;
        for (int64_t j = 0; j < s.n; j++) {
            int v = cmp_item(&s, j, i);
            count += v == 0;
            if (first_equal(&s, j) == j && j != i) p += sorted ? v < 0 : j < i;
        }
        rt_st_i(indices, p, i);
        rt_st_i(counts, p, count);
    }
    for (int64_t k = 0; k < s.n; k++) {
        int64_t f = first_equal(&s, k), p = 0;
        while (rt_ld_i(indices, p) != f) p++; /* f is kept, so it is there */
        rt_st_i(inverse, k, p);
    }
    return SYMC_OK;
}

/* ---- nms ----------------------------------------------------------------------------------- */

/* onnxruntime's helpers, NaN cases included: std::max(a, b) is a < b ? b : a */
static float max_f(float a, float b) { return a < b ? b : a; }
static float min_f(float a, float b) { return b < a ? b : a; }
static void min_max(float a, float b, float *lo, float *hi) {
    *lo = a >= b ? b : a;
    *hi = a >= b ? a : b;
}

/* box i of batch b as [x_min, x_max, y_min, y_max] */
static void box_at(const rt_ref_tensor *boxes, int64_t b, int64_t i, int center, float *e) {
    int64_t o = (b * boxes->dims[1] + i) * 4;
    float v0 = (float)rt_ld_f(boxes, o), v1 = (float)rt_ld_f(boxes, o + 1), v2 = (float)rt_ld_f(boxes, o + 2),
          v3 = (float)rt_ld_f(boxes, o + 3);
    if (!center) { /* [y1, x1, y2, x2], either corner first */
        min_max(v1, v3, &e[0], &e[1]);
        min_max(v0, v2, &e[2], &e[3]);
        return;
    }
    float hw = v2 / 2, hh = v3 / 2; /* [xc, yc, w, h] */
    e[0] = v0 - hw, e[1] = v0 + hw, e[2] = v1 - hh, e[3] = v1 + hh;
}

static int suppresses(const float *p, const float *q, float iou_threshold) {
    float x_lo = max_f(p[0], q[0]), x_hi = min_f(p[1], q[1]);
    if (x_hi <= x_lo) return 0;
    float y_lo = max_f(p[2], q[2]), y_hi = min_f(p[3], q[3]);
    if (y_hi <= y_lo) return 0;
    float inter = (x_hi - x_lo) * (y_hi - y_lo);
    if (inter <= 0.0f) return 0;
    float area_p = (p[1] - p[0]) * (p[3] - p[2]), area_q = (q[1] - q[0]) * (q[3] - q[2]);
    float uni = area_p + area_q - inter;
    if (area_p <= 0.0f || area_q <= 0.0f || uni <= 0.0f) return 0;
    return inter / uni > iou_threshold;
}

/* the one element of optional input k, after checking it has one */
static symc_status scalar_in(rt_ctx *c, uint32_t k, const char *role, int want_int, double *f, int64_t *i) {
    const rt_ref_tensor *t = &c->in[k];
    if (rt_ref_numel_dims(t->rank, t->dims) != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input %u (%s) must hold one element", k, role);
    if (want_int ? rt_is_float(t->dtype) || t->dtype == SYMC_BOOL : !rt_is_float(t->dtype))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input %u (%s) is %s but must be %s", k, role,
                           symc_dtype_name(t->dtype), want_int ? "an integer" : "a float");
    if (want_int) *i = rt_ld_i(t, 0);
    else *f = rt_ld_f(t, 0);
    return SYMC_OK;
}

/* (score, index) of a candidate comes after (ps, pi) in visiting order */
static int after(double s, int64_t i, double ps, int64_t pi) { return s < ps || (s == ps && i > pi); }

symc_status rt_ref_k_nms(rt_ctx *c) {
    const rt_ref_tensor *boxes = &c->in[0], *scores = &c->in[1];
    if (boxes->rank != 3 || boxes->dims[2] != 4 || scores->rank != 3 || scores->dims[0] != boxes->dims[0] ||
        scores->dims[2] != boxes->dims[1]) {
        char bs[96], ss[96];
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "boxes %s and scores %s must be [B, N, 4] and [B, C, N]",
                           rt_ref_shape_str(bs, sizeof bs, boxes->rank, boxes->dims),
                           rt_ref_shape_str(ss, sizeof ss, scores->rank, scores->dims));
    }
    if (!rt_is_float(scores->dtype))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "scores are %s but must be a float type",
                           symc_dtype_name(scores->dtype));
    int64_t center, max_out = 0;
    double iou = 0.0, score_thr = 0.0;
    symc_status st = rt_ref_attr_int(c, "center_point_box", 0, 0, &center);
    if (!st && center != 0 && center != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "center_point_box = %lld must be 0 or 1", (long long)center);
    if (!st && c->n_in > 2) st = scalar_in(c, 2, "max_output_boxes_per_class", 1, NULL, &max_out);
    if (!st && c->n_in > 3) st = scalar_in(c, 3, "iou_threshold", 0, &iou, NULL);
    if (!st && c->n_in > 4) st = scalar_in(c, 4, "score_threshold", 0, &score_thr, NULL);
    if (st) return st;
    float iou_f = (float)iou;
    if (!(iou_f >= 0.0f && iou_f <= 1.0f)) /* onnxruntime refuses it too */
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "iou_threshold = %g must be in [0, 1]", iou);
    int have_thr = c->n_in > 4;
    rt_ref_tensor *o = &c->out[0];
    int64_t cap = o->rank == 2 ? o->dims[0] : 0, want[2] = {cap, 3};
    if ((st = rt_ref_check_out(c, 0, SYMC_I64, 2, want))) return st;
    int64_t B = scores->dims[0], C = scores->dims[1], N = scores->dims[2], count = 0;
    for (int64_t b = 0; b < B && max_out > 0; b++)
        for (int64_t cl = 0; cl < C; cl++) {
            int64_t first = count, kept = 0, pi = -1;
            double ps = INFINITY;
            const int64_t base = (b * C + cl) * N;
            for (;;) {
                int64_t best = -1;
                double bs = 0.0;
                for (int64_t i = 0; i < N; i++) {
                    double s = rt_ld_f(scores, base + i);
                    if (isnan(s) || (have_thr && !(s > score_thr))) continue;
                    if (pi >= 0 && !after(s, i, ps, pi)) continue;
                    if (best < 0 || s > bs) best = i, bs = s; /* ties: the lower index, met first */
                }
                if (best < 0) break;
                ps = bs, pi = best;
                float e[4], k[4];
                box_at(boxes, b, best, (int)center, e);
                int keep = 1;
                for (int64_t r = first; r < count && keep; r++) {
                    box_at(boxes, b, rt_ld_i(o, 3 * r + 2), (int)center, k);
                    keep = !suppresses(k, e, iou_f);
                }
                if (!keep) continue;
                if (kept == max_out) break;
                if (count == cap)
                    return rt_ref_fail(c, SYMC_ERR_RANGE,
                                       "more than the %lld selected boxes its memory was planned for (the size's "
                                       "bound)",
                                       (long long)cap);
                rt_st_i(o, 3 * count, b), rt_st_i(o, 3 * count + 1, cl), rt_st_i(o, 3 * count + 2, best);
                count++, kept++;
            }
        }
    int64_t dims[2] = {count, 3};
    return rt_ref_produced_out(c, 0, SYMC_I64, 2, dims, 0, count);
}
