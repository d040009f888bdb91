/* Pooling (NCHW): max_pool2d, avg_pool2d, global_avg_pool, and the sliding
 * window arithmetic shared with conv2d.
 *
 * Output sizes follow PyTorch where ONNX leaves room: with ceil_mode the last
 * window must start inside the input or the left padding, otherwise it is
 * dropped. Defaults follow ONNX: strides 1, pads 0, dilations 1. Padding
 * never contributes to a max; for an average it counts in the divisor only
 * with count_include_pad, and then only the part of the window inside the
 * padded input (a ceil_mode window hanging past the end padding is cut), as
 * in PyTorch. Pads must be smaller than the window (ONNX's rule), so every
 * window sees at least one real element whenever the input is non-empty.
 * Sums are f64. */
#include <math.h>

#include "runtime/ref/ref_kernels_internal.h"

/* attribute values beyond this are refused, so the window arithmetic below
 * cannot overflow int64 */
#define WINDOW_ATTR_MAX ((int64_t)1 << 32)

symc_status rt_window_out(rt_ctx *c, const char *axis, int64_t in, int64_t k, int64_t stride, int64_t dil,
                          int64_t pad_b, int64_t pad_e, int ceil_mode, int64_t *out) {
    if (k < 1 || k > WINDOW_ATTR_MAX)
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "kernel size %lld along %s must be in [1, 2^32]", (long long)k, axis);
    if (stride < 1 || stride > WINDOW_ATTR_MAX || dil < 1 || dil > WINDOW_ATTR_MAX)
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "stride %lld and dilation %lld along %s must be in [1, 2^32]",
                       (long long)stride, (long long)dil, axis);
    if (pad_b < 0 || pad_e < 0 || pad_b > WINDOW_ATTR_MAX || pad_e > WINDOW_ATTR_MAX)
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "pads %lld, %lld along %s must be in [0, 2^32]", (long long)pad_b,
                       (long long)pad_e, axis);
    if (in > INT64_MAX / 4)
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "input size %lld along %s is too large", (long long)in, axis);
    int64_t extent = dil * (k - 1) + 1, padded = in + pad_b + pad_e;
    if (padded < extent)
        return rt_fail(c, SYMC_ERR_INVALID_ARG,
                       "the window (extent %lld) is larger than the padded input (%lld) along %s", (long long)extent,
                       (long long)padded, axis);
    int64_t span = padded - extent;
    int64_t n = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    if (ceil_mode && (n - 1) * stride >= in + pad_b) n--; /* would start in the end padding */
    *out = n;
    return SYMC_OK;
}

typedef struct pool_geom {
    int64_t nb, ch, h, w, kh, kw, sh, sw, pt, pl, pb, pr, dh, dw, ho, wo;
} pool_geom;

static symc_status pool_setup(rt_ctx *c, int with_dilation, int64_t ceil_mode, pool_geom *g) {
    static const int64_t ones[2] = {1, 1}, zeros[4] = {0, 0, 0, 0};
    const rt_ref_tensor *x = &c->in[0];
    int64_t kernel[2], strides[2], pads[4], dil[2] = {1, 1};
    symc_status s;
    if ((s = rt_attr_ints_n(c, "kernel", 2, NULL, kernel))) return s;
    if ((s = rt_attr_ints_n(c, "strides", 2, ones, strides))) return s;
    if ((s = rt_attr_ints_n(c, "pads", 4, zeros, pads))) return s;
    if (with_dilation && (s = rt_attr_ints_n(c, "dilations", 2, ones, dil))) return s;
    if (ceil_mode != 0 && ceil_mode != 1)
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'ceil_mode' = %lld must be 0 or 1", (long long)ceil_mode);
    if (x->rank != 4) {
        char t[160];
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "input 0 has shape %s, must be 4-D (NCHW)",
                       rt_shape_str(t, sizeof t, x->rank, x->dims));
    }
    g->nb = x->dims[0], g->ch = x->dims[1], g->h = x->dims[2], g->w = x->dims[3];
    g->kh = kernel[0], g->kw = kernel[1], g->sh = strides[0], g->sw = strides[1];
    g->pt = pads[0], g->pl = pads[1], g->pb = pads[2], g->pr = pads[3];
    g->dh = dil[0], g->dw = dil[1];
    if ((s = rt_window_out(c, "height", g->h, g->kh, g->sh, g->dh, g->pt, g->pb, (int)ceil_mode, &g->ho))) return s;
    if ((s = rt_window_out(c, "width", g->w, g->kw, g->sw, g->dw, g->pl, g->pr, (int)ceil_mode, &g->wo))) return s;
    int64_t eh = g->dh * (g->kh - 1) + 1, ew = g->dw * (g->kw - 1) + 1;
    if (g->pt >= eh || g->pb >= eh || g->pl >= ew || g->pr >= ew)
        return rt_fail(c, SYMC_ERR_INVALID_ARG,
                       "pads [%lld, %lld, %lld, %lld] must be smaller than the window (%lld x %lld)", (long long)g->pt,
                       (long long)g->pl, (long long)g->pb, (long long)g->pr, (long long)eh, (long long)ew);
    int64_t od[4] = {g->nb, g->ch, g->ho, g->wo};
    return rt_check_out(c, 0, x->dtype, 4, od);
}

symc_status rt_k_max_pool2d(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t ceil_mode;
    pool_geom g;
    symc_status s;
    if ((s = rt_attr_int(c, "ceil_mode", 0, 0, &ceil_mode))) return s;
    if ((s = pool_setup(c, 1, ceil_mode, &g))) return s;
    for (int64_t p = 0; p < g.nb * g.ch; p++)
        for (int64_t i = 0; i < g.ho; i++)
            for (int64_t j = 0; j < g.wo; j++) {
                double mx = -INFINITY; /* a window of padding only (dilation) stays -inf */
                for (int64_t r = 0; r < g.kh; r++) {
                    int64_t y = i * g.sh - g.pt + r * g.dh;
                    if (y < 0 || y >= g.h) continue;
                    for (int64_t t = 0; t < g.kw; t++) {
                        int64_t xx = j * g.sw - g.pl + t * g.dw;
                        if (xx < 0 || xx >= g.w) continue;
                        double v = rt_ld_f(x, (p * g.h + y) * g.w + xx);
                        if (isnan(v) || v > mx) mx = isnan(mx) ? mx : v; /* NaN wins */
                    }
                }
                rt_st_f(&c->out[0], (p * g.ho + i) * g.wo + j, mx);
            }
    return SYMC_OK;
}

symc_status rt_k_avg_pool2d(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t ceil_mode, include_pad;
    pool_geom g;
    symc_status s;
    if ((s = rt_attr_int(c, "ceil_mode", 0, 0, &ceil_mode))) return s;
    if ((s = rt_attr_int(c, "count_include_pad", 0, 0, &include_pad))) return s;
    if (include_pad != 0 && include_pad != 1)
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'count_include_pad' = %lld must be 0 or 1",
                       (long long)include_pad);
    if ((s = pool_setup(c, 0, ceil_mode, &g))) return s;
    for (int64_t p = 0; p < g.nb * g.ch; p++)
        for (int64_t i = 0; i < g.ho; i++)
            for (int64_t j = 0; j < g.wo; j++) {
                int64_t y0 = i * g.sh - g.pt, x0 = j * g.sw - g.pl;
                /* the window cut to the padded input, then to the input */
                int64_t y1 = y0 + g.kh < g.h + g.pb ? y0 + g.kh : g.h + g.pb;
                int64_t x1 = x0 + g.kw < g.w + g.pr ? x0 + g.kw : g.w + g.pr;
                int64_t padded_count = (y1 - y0) * (x1 - x0);
                double sum = 0.0;
                int64_t count = 0;
                for (int64_t y = y0 < 0 ? 0 : y0; y < (y1 < g.h ? y1 : g.h); y++)
                    for (int64_t xx = x0 < 0 ? 0 : x0; xx < (x1 < g.w ? x1 : g.w); xx++, count++)
                        sum += rt_ld_f(x, (p * g.h + y) * g.w + xx);
                rt_st_f(&c->out[0], (p * g.ho + i) * g.wo + j, sum / (double)(include_pad ? padded_count : count));
            }
    return SYMC_OK;
}

symc_status rt_k_global_avg_pool(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    symc_status s;
    if (x->rank < 3) {
        char t[160];
        return rt_fail(c, SYMC_ERR_INVALID_ARG, "input 0 has shape %s, needs rank >= 3 (N, C, spatial...)",
                       rt_shape_str(t, sizeof t, x->rank, x->dims));
    }
    int64_t od[RT_REF_MAX_RANK];
    od[0] = x->dims[0], od[1] = x->dims[1];
    for (int32_t d = 2; d < x->rank; d++) od[d] = 1;
    if ((s = rt_check_out(c, 0, x->dtype, x->rank, od))) return s;
    int64_t planes = x->dims[0] * x->dims[1], n = rt_numel_dims(x->rank - 2, x->dims + 2);
    for (int64_t p = 0; p < planes; p++) {
        double sum = 0.0;
        for (int64_t i = 0; i < n; i++) sum += rt_ld_f(x, p * n + i);
        rt_st_f(&c->out[0], p, sum / (double)n);
    }
    return SYMC_OK;
}
