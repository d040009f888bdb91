/* Pooling (NCHW or NCDHW): max_pool2d, avg_pool2d (both on 2 or 3 spatial
 * dims, with dilations), global_avg_pool, and the sliding window arithmetic
 * shared with conv2d.
 *
 * Output sizes follow PyTorch where ONNX leaves room: with ceil_mode the last
 * window must start inside the input or the left padding, otherwise it is
 * dropped. Defaults follow ONNX: strides 1, pads 0, dilations 1. Padding
 * never contributes to a max; for an average it counts in the divisor only
 * with count_include_pad, and then only the part of the window inside the
 * padded input (a ceil_mode window hanging past the end padding is cut), as
 * in PyTorch; with dilations, the taps are what is counted. Pads must be smaller than the window (ONNX's rule), so every
 * window sees at least one real element whenever the input is non-empty.
 * Sums are f64. */
#include <math.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

/* attribute values beyond this are refused, so the window arithmetic below
 * cannot overflow int64 */
#define WINDOW_ATTR_MAX ((int64_t)1 << 32)

symc_status rt_ref_window_out(rt_ctx *c, const char *axis, int64_t in, int64_t k, int64_t stride, int64_t dil,
                              int64_t pad_b, int64_t pad_e, int ceil_mode, int64_t *out) {
    if (k < 1 || k > WINDOW_ATTR_MAX)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "kernel size %lld along %s must be in [1, 2^32]", (long long)k,
                           axis);
    if (stride < 1 || stride > WINDOW_ATTR_MAX || dil < 1 || dil > WINDOW_ATTR_MAX)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "stride %lld and dilation %lld along %s must be in [1, 2^32]",
                           (long long)stride, (long long)dil, axis);
    if (pad_b < 0 || pad_e < 0 || pad_b > WINDOW_ATTR_MAX || pad_e > WINDOW_ATTR_MAX)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "pads %lld, %lld along %s must be in [0, 2^32]", (long long)pad_b,
                           (long long)pad_e, axis);
    if (in > INT64_MAX / 4)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input size %lld along %s is too large", (long long)in, axis);
    int64_t extent = dil * (k - 1) + 1, padded = in + pad_b + pad_e;
    if (padded < extent)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "the window (extent %lld) is larger than the padded input (%lld) along %s",
                           (long long)extent, (long long)padded, axis);
    int64_t span = padded - extent;
    int64_t n = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil_mode && (n - 1) * stride >= in + pad_b) n--; /* would start in the end padding */
    *out = n;
    return SYMC_OK;
}

/* The geometry of a pool on 2 (NCHW) or 3 (NCDHW) spatial dims. */
typedef struct pool_geom {
    int nsp;
    int64_t planes, in[3], k[3], s[3], pb[3], pe[3], d[3], out[3], in_n, out_n;
} pool_geom;

static symc_status pool_setup(rt_ctx *c, int with_dilation, int64_t ceil_mode, pool_geom *g) {
    static const int64_t ones[3] = {1, 1, 1}, zeros[6] = {0, 0, 0, 0, 0, 0};
    static const char *const names2[2] = {"height", "width"}, *const names3[3] = {"depth", "height", "width"};
    const rt_ref_tensor *x = &c->in[0];
    const char *const *axis = x->rank == 5 ? names3 : names2;
    int64_t pads[6];
    const int64_t *kv;
    uint32_t kn;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "kernel", 1, &kv, &kn, NULL))) return s; /* required whatever the rank */
    if (ceil_mode != 0 && ceil_mode != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'ceil_mode' = %lld must be 0 or 1",
                           (long long)ceil_mode);
    if (x->rank != 4 && x->rank != 5) {
        char t[160];
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 has shape %s, must be 4-D (NCHW) or 5-D (NCDHW)",
                           rt_ref_shape_str(t, sizeof t, x->rank, x->dims));
    }
    int n = g->nsp = x->rank - 2;
    if ((s = rt_ref_attr_ints_n(c, "kernel", (uint32_t)n, NULL, g->k))) return s;
    if ((s = rt_ref_attr_ints_n(c, "strides", (uint32_t)n, ones, g->s))) return s;
    if ((s = rt_ref_attr_ints_n(c, "pads", 2 * (uint32_t)n, zeros, pads))) return s;
    memcpy(g->d, ones, sizeof g->d);
    if (with_dilation && (s = rt_ref_attr_ints_n(c, "dilations", (uint32_t)n, ones, g->d))) return s;
    g->planes = x->dims[0] * x->dims[1];
    g->in_n = g->out_n = 1;
    int64_t od[5] = {x->dims[0], x->dims[1]};
    for (int i = 0; i < n; i++) {
        g->in[i] = x->dims[2 + i], g->pb[i] = pads[i], g->pe[i] = pads[n + i];
        if ((s = rt_ref_window_out(c, axis[i], g->in[i], g->k[i], g->s[i], g->d[i], g->pb[i], g->pe[i], (int)ceil_mode,
                                   &g->out[i])))
            return s;
        int64_t ext = g->d[i] * (g->k[i] - 1) + 1;
        if (g->pb[i] >= ext || g->pe[i] >= ext)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                               "pads %lld, %lld along %s must be smaller than the window (%lld)", (long long)g->pb[i],
                               (long long)g->pe[i], axis[i], (long long)ext);
        od[2 + i] = g->out[i];
        g->in_n *= g->in[i], g->out_n *= g->out[i];
    }
    return rt_ref_check_out(c, 0, c->op == IR_OP_MAX_POOL_INDICES ? SYMC_I64 : x->dtype, x->rank, od);
}

/* The window of output position o (spatial index, row-major): for each
 * spatial dim the first tap's coordinate (may be in the padding). */
static void pool_start(const pool_geom *g, int64_t o, int64_t *start) {
    for (int i = g->nsp - 1; i >= 0; i--) {
        start[i] = (o % g->out[i]) * g->s[i] - g->pb[i];
        o /= g->out[i];
    }
}

/* Calls back every tap of a window: coordinate per dim; `inside` = in the
 * input; `in_padded` = inside the padded input (begin pad .. in + end pad). */
typedef struct pool_acc {
    double mx, sum;
    int64_t count, padded_count;
} pool_acc;

static void pool_window(const pool_geom *g, const rt_ref_tensor *x, int64_t plane, const int64_t *start, pool_acc *a) {
    int64_t tap[3] = {0, 0, 0};
    for (;;) {
        int inside = 1, in_padded = 1;
        int64_t off = 0;
        for (int i = 0; i < g->nsp; i++) {
            int64_t y = start[i] + tap[i] * g->d[i];
            if (y < 0 || y >= g->in[i]) inside = 0;
            if (y >= g->in[i] + g->pe[i]) in_padded = 0;
            off = off * g->in[i] + y;
        }
        if (in_padded) a->padded_count++;
        if (inside) {
            double v = rt_ld_f(x, plane * g->in_n + off);
            if (isnan(v) || v > a->mx) a->mx = isnan(a->mx) ? a->mx : v; /* NaN wins */
            a->sum += v;
            a->count++;
        }
        int i = g->nsp - 1;
        while (i >= 0 && ++tap[i] == g->k[i]) tap[i--] = 0;
        if (i < 0) return;
    }
}

symc_status rt_ref_k_max_pool2d(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t ceil_mode;
    pool_geom g;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "ceil_mode", 0, 0, &ceil_mode))) return s;
    if ((s = pool_setup(c, 1, ceil_mode, &g))) return s;
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t o = 0; o < g.out_n; o++) {
            int64_t start[3];
            pool_start(&g, o, start);
            pool_acc a = {-INFINITY, 0.0, 0, 0}; /* a window of padding only (dilation) stays -inf */
            pool_window(&g, x, p, start, &a);
            rt_st_f(&c->out[0], p * g.out_n + o, a.mx);
        }
    return SYMC_OK;
}

symc_status rt_ref_k_avg_pool2d(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t ceil_mode, include_pad;
    pool_geom g;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "ceil_mode", 0, 0, &ceil_mode))) return s;
    if ((s = rt_ref_attr_int(c, "count_include_pad", 0, 0, &include_pad))) return s;
    if (include_pad != 0 && include_pad != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'count_include_pad' = %lld must be 0 or 1",
                           (long long)include_pad);
    if ((s = pool_setup(c, 1, ceil_mode, &g))) return s;
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t o = 0; o < g.out_n; o++) {
            int64_t start[3];
            pool_start(&g, o, start);
            pool_acc a = {-INFINITY, 0.0, 0, 0};
            pool_window(&g, x, p, start, &a);
            rt_st_f(&c->out[0], p * g.out_n + o, a.sum / (double)(include_pad ? a.padded_count : a.count));
        }
    return SYMC_OK;
}

symc_status rt_ref_k_global_avg_pool(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    symc_status s;
    if (x->rank < 3) {
        char t[160];
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 has shape %s, needs rank >= 3 (N, C, spatial...)",
                           rt_ref_shape_str(t, sizeof t, x->rank, x->dims));
    }
    int64_t od[RT_REF_MAX_RANK];
    od[0] = x->dims[0], od[1] = x->dims[1];
    for (int32_t d = 2; d < x->rank; d++) od[d] = 1;
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;
    int64_t planes = x->dims[0] * x->dims[1], n = rt_ref_numel_dims(x->rank - 2, x->dims + 2);
    for (int64_t p = 0; p < planes; p++) {
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += rt_ld_f(x, p * n + i);
        rt_st_f(&c->out[0], p, sum / (double)n);
    }
    return SYMC_OK;
}

symc_status rt_ref_k_max_pool_indices(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t ceil_mode, order;
    pool_geom g;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "ceil_mode", 0, 0, &ceil_mode)) ||
        (s = rt_ref_attr_int(c, "storage_order", 0, 0, &order)))
        return s;
    if (order != 0 && order != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'storage_order' = %lld must be 0 or 1",
                           (long long)order);
    if ((s = pool_setup(c, 1, ceil_mode, &g))) return s;
    if (order == 1 && g.nsp != 2)
        return rt_ref_fail(c, SYMC_ERR_UNSUPPORTED, "storage_order 1 is supported for 2-D pooling only");
    rt_ref_tensor *y = &c->out[0];
    if (y->dtype != SYMC_I64) return rt_ref_fail(c, SYMC_ERR_INTERNAL, "output 0 must be i64");
    for (int64_t p = 0; p < g.planes; p++)
        for (int64_t o = 0; o < g.out_n; o++) {
            int64_t start[3], tap[3] = {0, 0, 0}, best = -1;
            double mx = 0;
            pool_start(&g, o, start);
            for (;;) {
                int inside = 1;
                int64_t off = 0, y0 = 0, y1 = 0;
                for (int i = 0; i < g.nsp; i++) {
                    int64_t yy = start[i] + tap[i] * g.d[i];
                    if (yy < 0 || yy >= g.in[i]) inside = 0;
                    off = off * g.in[i] + yy;
                    if (i == 0) y0 = yy;
                    if (i == 1) y1 = yy;
                }
                if (inside) {
                    double v = rt_ld_f(x, p * g.in_n + off);
                    if (best < 0 || (!isnan(mx) && (isnan(v) || v > mx))) {
                        mx = v;
                        best = order ? y1 * g.in[0] + y0 : off;
                    }
                }
                int i = g.nsp - 1;
                while (i >= 0 && ++tap[i] == g.k[i]) tap[i--] = 0;
                if (i < 0) break;
            }
            /* a window of padding only has no element: index -1 */
            rt_st_i(y, p * g.out_n + o, best < 0 ? -1 : p * g.in_n + best);
        }
    return SYMC_OK;
}

/* col2im: each column l of x[n, c * K + b, l] (b a block offset, K the block
 * size) is added at image position l_i * stride - pad_begin + b_i *
 * dilation per spatial dim, where l_i is l's place on the grid of windows;
 * positions in the padding are dropped. Sums are f64. */
symc_status rt_ref_k_col2im(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *img, *blk;
    uint32_t ni, nb;
    int64_t ones[3] = {1, 1, 1}, zeros[6] = {0, 0, 0, 0, 0, 0}, st[3], dl[3], pd[6], grid[3];
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "image_shape", 1, &img, &ni, NULL)) ||
        (s = rt_ref_attr_ints(c, "block_shape", 1, &blk, &nb, NULL)))
        return s;
    if (ni < 1 || ni > 3 || nb != ni)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "image_shape (%u) and block_shape (%u) must have 1 to 3 entries each", ni, nb);
    int n = (int)ni;
    if ((s = rt_ref_attr_ints_n(c, "strides", ni, ones, st)) ||
        (s = rt_ref_attr_ints_n(c, "dilations", ni, ones, dl)) ||
        (s = rt_ref_attr_ints_n(c, "pads", 2 * ni, zeros, pd)))
        return s;
    int64_t k = 1, l = 1, img_n = 1;
    static const char *const axis[3] = {"spatial dim 0", "spatial dim 1", "spatial dim 2"};
    for (int i = 0; i < n; i++) {
        if (img[i] < 0 || img[i] > ((int64_t)1 << 32))
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "image_shape entry %d = %lld is out of range", i,
                               (long long)img[i]);
        if ((s = rt_ref_window_out(c, axis[i], img[i], blk[i], st[i], dl[i], pd[i], pd[n + i], 0, &grid[i]))) return s;
        k *= blk[i], l *= grid[i], img_n *= img[i];
    }
    char t[160];
    if (x->rank != 3 || x->dims[1] % k != 0 || x->dims[2] != l)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 %s must be [N, C x %lld, %lld]",
                           rt_ref_shape_str(t, sizeof t, x->rank, x->dims), (long long)k, (long long)l);
    int64_t ch = x->dims[1] / k, od[5] = {x->dims[0], ch};
    for (int i = 0; i < n; i++) od[2 + i] = img[i];
    if ((s = rt_ref_check_out(c, 0, x->dtype, 2 + n, od))) return s;
    rt_ref_tensor *y = &c->out[0];
    int64_t total = x->dims[0] * ch * img_n;
    for (int64_t i = 0; i < total; i++) rt_st_f(y, i, 0.0);
    for (int64_t p = 0; p < x->dims[0] * ch; p++)
        for (int64_t b = 0; b < k; b++)
            for (int64_t q = 0; q < l; q++) {
                int64_t bb = b, qq = q, off = 0, inside = 1, pos[3];
                for (int i = n - 1; i >= 0; i--) {
                    pos[i] = (qq % grid[i]) * st[i] - pd[i] + (bb % blk[i]) * dl[i];
                    qq /= grid[i], bb /= blk[i];
                    if (pos[i] < 0 || pos[i] >= img[i]) inside = 0;
                }
                if (!inside) continue;
                for (int i = 0; i < n; i++) off = off * img[i] + pos[i];
                int64_t yi = p * img_n + off;
                rt_st_f(y, yi, rt_ld_f(y, yi) + rt_ld_f(x, (p * k + b) * l + q));
            }
    return SYMC_OK;
}
