/* resize: ONNX Resize (opsets 13-19) on any rank, the definition of the
 * ONNX reference implementation (onnx/reference/ops/op_resize.py) written
 * out per output element.
 *
 * Interpolation is separable: along each axis an output index y maps to a
 * source coordinate x (the coordinate transformation mode), and a small
 * filter (nearest: a one-hot pair, linear: 2 taps, cubic: 4, antialias: a
 * filter stretched by 1 / scale) gives weights for the input indices around
 * x, clamped to the edge. Instead of resizing one axis after the other into
 * temporary tensors (the reference's order), each output element sums the
 * tensor product of its per-axis taps in f64, which is the same sum
 * regrouped and needs no scratch memory. An axis whose scale is 1 with an
 * unchanged length (and no crop) is read straight through, as the reference
 * skips it. tf_crop_and_resize writes extrapolation_value wherever some
 * axis's coordinate falls outside the input. The scale of an axis is the
 * `scales` attribute when given, else output / input length of this run
 * (sizes given in the model). */
#include <math.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

/* taps per axis; an antialias filter at scale s has about 4 / s (cubic) */
#define RESIZE_MAX_TAPS 64

enum { NEAREST, LINEAR, CUBIC };
enum { HALF_PIXEL, HALF_PIXEL_SYMMETRIC, PYTORCH_HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, TF_CROP_AND_RESIZE };
enum { PREFER_FLOOR, PREFER_CEIL, FLOOR, CEIL };

typedef struct resize_p {
    int mode, coord, nearest, exclude, antialias;
    double a, extrapolation;
    const double *roi; /* 2 x rank or NULL */
} resize_p;

typedef struct axis_taps {
    int64_t idx[RESIZE_MAX_TAPS];
    double w[RESIZE_MAX_TAPS];
    int n, outside; /* outside: tf_crop_and_resize extrapolates */
} axis_taps;

static double cubic_w(double x, double a) {
    x = fabs(x);
    if (x <= 1) return (a + 2) * x * x * x - (a + 3) * x * x + 1;
    if (x < 2) return a * x * x * x - 5 * a * x * x + 8 * a * x - 4 * a;
    return 0.0;
}

/* The taps of output index y along an axis of input length `in`, output
 * length `out`, scale `scale`; roi0/roi1 the crop of tf_crop_and_resize. */
static symc_status taps_of(rt_ctx *c, const resize_p *p, int64_t in, int64_t out, double scale, double roi0,
                           double roi1, int64_t y, axis_taps *t) {
    double ow = scale * (double)in, yy = (double)y, x;
    t->outside = 0;
    switch (p->coord) {
    case HALF_PIXEL: x = (yy + 0.5) / scale - 0.5; break;
    case HALF_PIXEL_SYMMETRIC: {
        double adj = (double)out / ow, center = (double)in / 2.0, off = center * (1 - adj);
        x = off + (yy + 0.5) / scale - 0.5;
        break;
    }
    case PYTORCH_HALF_PIXEL: x = ow == 1 ? -0.5 : (yy + 0.5) / scale - 0.5; break;
    case ALIGN_CORNERS: x = ow == 1 ? 0.0 : yy * (double)(in - 1) / (ow - 1); break;
    case ASYMMETRIC: x = yy / scale; break;
    default: /* TF_CROP_AND_RESIZE */
        x = ow == 1 ? (roi1 - roi0) * (double)(in - 1) / 2 : yy * (roi1 - roi0) * (double)(in - 1) / (ow - 1);
        x += roi0 * (double)(in - 1);
        if (x < 0 || x > (double)(in - 1)) {
            t->outside = 1;
            t->n = 0;
            return SYMC_OK;
        }
    }
    double p0 = floor(x);
    double ratio = x == p0 ? 1.0 : x - p0;
    int n = 0;
    double *w = t->w;
    if (p->mode == NEAREST) {
        int second; /* the upper of the pair [p0, p0 + 1] (or [p0 - 1, p0] at an integer) */
        if (ratio == 1.0) second = 1;
        else if (p->nearest == PREFER_FLOOR) second = ratio > 0.5;
        else if (p->nearest == PREFER_CEIL) second = ratio >= 0.5;
        else second = p->nearest == CEIL;
        w[0] = second ? 0.0 : 1.0;
        w[1] = second ? 1.0 : 0.0;
        n = 2;
    } else if (!p->antialias && p->mode == LINEAR) {
        w[0] = 1 - ratio;
        w[1] = ratio;
        n = 2;
    } else if (!p->antialias) {
        double a = p->a, r = ratio, q = 1 - ratio;
        w[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
        w[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
        w[2] = ((a + 2) * q - (a + 3)) * q * q + 1;
        w[3] = ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a;
        n = 4;
    } else {
        double s = scale < 1.0 ? scale : 1.0, sum = 0;
        int64_t start = (int64_t)floor((p->mode == LINEAR ? -1.0 : -2.0) / s) + 1, cnt = 2 - 2 * start;
        if (cnt > RESIZE_MAX_TAPS)
            return rt_ref_fail(c, SYMC_ERR_UNSUPPORTED, "antialias at scale %g needs %lld taps per axis, more than %d",
                               scale, (long long)cnt, RESIZE_MAX_TAPS);
        for (int64_t i = 0; i < cnt; i++) {
            double arg = p->mode == LINEAR ? ((double)(start + i) - ratio) * s : s * ((double)(start + i) - ratio);
            w[i] = p->mode == LINEAR ? fmin(fmax(1 - fabs(arg), 0.0), 1.0) : cubic_w(arg, p->a);
            sum += w[i];
        }
        for (int64_t i = 0; i < cnt; i++) w[i] /= sum;
        n = (int)cnt;
    }
    /* the n indices nearest x, the lower preferred (n is even) */
    int64_t first = (int64_t)p0 + (x == p0 ? -(n / 2) : -(n / 2) + 1);
    if (p->exclude) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
            int64_t j = first + i;
            if (j < 0 || j >= in) w[i] = 0;
            sum += w[i];
        }
        if (sum != 0)
            for (int i = 0; i < n; i++) w[i] /= sum;
    }
    for (int i = 0; i < n; i++) {
        int64_t j = first + i;
        t->idx[i] = j < 0 ? 0 : j >= in ? in - 1 : j;
    }
    t->n = n;
    return SYMC_OK;
}

static int pick(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

symc_status rt_ref_k_resize(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    rt_ref_tensor *y = &c->out[0];
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric",           "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *mode_s, *coord_s, *near_s;
    int64_t sizes[RT_REF_MAX_RANK], exclude, antialias;
    resize_p p;
    symc_status s;
    int32_t r = x->rank;
    if ((s = rt_ref_attr_ints_n(c, "sizes", (uint32_t)r, NULL, sizes))) return s;
    if ((s = rt_ref_attr_str(c, "mode", 1, NULL, &mode_s)) ||
        (s = rt_ref_attr_str(c, "coord_mode", 1, NULL, &coord_s)) ||
        (s = rt_ref_attr_str(c, "nearest_mode", 0, "round_prefer_floor", &near_s)) ||
        (s = rt_ref_attr_float(c, "cubic_coeff_a", 0, -0.75, &p.a)) ||
        (s = rt_ref_attr_float(c, "extrapolation_value", 0, 0.0, &p.extrapolation)) ||
        (s = rt_ref_attr_int(c, "exclude_outside", 0, 0, &exclude)) ||
        (s = rt_ref_attr_int(c, "antialias", 0, 0, &antialias)))
        return s;
    p.mode = pick(mode_s, modes, 3);
    p.coord = pick(coord_s, coords, 6);
    p.nearest = pick(near_s, nearests, 4);
    if (p.mode < 0 || p.coord < 0 || p.nearest < 0)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "mode '%s', coord_mode '%s' or nearest_mode '%s' is not known",
                           mode_s, coord_s, near_s);
    p.exclude = exclude != 0;
    p.antialias = antialias != 0;
    if (p.antialias && p.mode == NEAREST)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "antialias applies to linear and cubic modes, not nearest");
    const symc_attr *sc = rt_ref_attr_find(c, "scales"), *roi = rt_ref_attr_find(c, "roi");
    if (sc && (sc->kind != SYMC_ATTR_FLOATS || sc->n != (uint32_t)r))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'scales' must be %d floats", (int)r);
    if (roi && (roi->kind != SYMC_ATTR_FLOATS || roi->n != 2u * (uint32_t)r))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'roi' must be %d floats", 2 * (int)r);
    if (p.coord == TF_CROP_AND_RESIZE && !roi)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "tf_crop_and_resize needs the attribute 'roi'");
    p.roi = roi ? roi->floats : NULL;
    if ((s = rt_ref_check_out(c, 0, x->dtype, r, sizes))) return s;

    double scale[RT_REF_MAX_RANK];
    int identity[RT_REF_MAX_RANK];
    for (int32_t d = 0; d < r; d++) {
        int64_t in = x->dims[d], out = sizes[d];
        if (in == 0 && out > 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "axis %d is empty but resized to %lld", (int)d, (long long)out);
        scale[d] = sc ? sc->floats[d] : in ? (double)out / (double)in : 1.0;
        if (!(scale[d] > 0) || !isfinite(scale[d]))
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "the scale of axis %d is %g, must be positive", (int)d,
                               scale[d]);
        int cropped = p.coord == TF_CROP_AND_RESIZE && (fabs(p.roi[d]) > 1e-9 || fabs(p.roi[d + r] - 1.0) > 1e-9);
        identity[d] = fabs(scale[d] - 1.0) <= 1e-9 && out == in && !cropped;
    }
    int64_t total = rt_ref_numel_dims(r, sizes), coord[RT_REF_MAX_RANK] = {0}, xs[RT_REF_MAX_RANK];
    rt_ref_strides(r, x->dims, xs);
    axis_taps taps[RT_REF_MAX_RANK];
    for (int64_t i = 0; i < total; i++, rt_next(r, sizes, coord)) {
        int outside = 0;
        for (int32_t d = 0; d < r && !outside; d++) {
            if (identity[d]) {
                taps[d].n = 1, taps[d].idx[0] = coord[d], taps[d].w[0] = 1.0;
                continue;
            }
            double r0 = p.roi ? p.roi[d] : 0.0, r1 = p.roi ? p.roi[d + r] : 1.0;
            if ((s = taps_of(c, &p, x->dims[d], sizes[d], scale[d], r0, r1, coord[d], &taps[d]))) return s;
            outside = taps[d].outside;
        }
        if (outside) {
            rt_st_f(y, i, p.extrapolation);
            continue;
        }
        /* the tensor product of the axes' taps, zero weights skipped */
        int k[RT_REF_MAX_RANK] = {0};
        double sum = 0.0;
        for (;;) {
            double w = 1.0;
            int64_t off = 0;
            for (int32_t d = 0; d < r; d++) {
                w *= taps[d].w[k[d]];
                off += taps[d].idx[k[d]] * xs[d];
            }
            if (w != 0.0) sum += w * rt_ld_f(x, off);
            int32_t d = r - 1;
            for (; d >= 0; d--) {
                if (++k[d] < taps[d].n) break;
                k[d] = 0;
            }
            if (d < 0) break;
        }
        rt_st_f(y, i, sum);
    }
    return SYMC_OK;
}
