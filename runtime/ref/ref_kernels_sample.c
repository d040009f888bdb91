/* grid_sample: ONNX GridSample (opset 20, 1 to 3 spatial dims), the
 * definition of the ONNX reference implementation
 * (onnx/reference/ops/op_grid_sample.py) written out per output element.
 *
 * x is [N, C, D_1..D_r], grid [N, O_1..O_r, r] holding normalized
 * coordinates in [-1, 1] with the innermost spatial axis first (x, y, z).
 * Each coordinate is denormalized (align_corners: -1 and 1 are the centers
 * of the corner elements, else their outer edges) in f32 arithmetic, as
 * the reference does, so nearest rounding ties fall the same way; the rest
 * runs in f64. A coordinate outside the borders ([0, D - 1] with
 * align_corners, else [-0.5, D - 0.5]) is clamped to [0, D - 1] (border) or
 * reflected back inside (reflection). Interpolation is separable: nearest
 * takes the element at the coordinate rounded half to even, linear the 2
 * taps floor(x), floor(x) + 1, cubic the 4 taps floor(x) - 1 .. + 2 with
 * Keys' coefficients (a = -0.75); each tap's index is then mapped by the
 * padding mode (zeros: an index outside the input reads 0; border: clamped;
 * reflection: reflected and truncated), and the output is the sum over the
 * tensor product of the per-axis taps. A NaN coordinate gives NaN. */
#include <math.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

enum { GS_NEAREST, GS_LINEAR, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

static double gs_reflect(double x, double lo, double hi) {
    double rng = hi - lo;
    if (x < lo) {
        double dx = lo - x;
        double n = trunc(dx / rng), r = dx - n * rng;
        return fmod(n, 2.0) == 0 ? lo + r : hi - r;
    }
    if (x > hi) {
        double dx = x - hi;
        double n = trunc(dx / rng), r = dx - n * rng;
        return fmod(n, 2.0) == 0 ? hi - r : lo + r;
    }
    return x;
}

/* The input index a tap at integer i reads along an axis of length d, or -1
 * for a zero (padding mode zeros, outside). */
static int64_t gs_index(int64_t i, int64_t d, int pad, double lo, double hi) {
    if (pad == GS_ZEROS) return i >= 0 && i < d ? i : -1;
    if (pad == GS_BORDER) return i < 0 ? 0 : i >= d ? d - 1 : i;
    int64_t r = (int64_t)gs_reflect((double)i, lo, hi); /* truncated, as int() does */
    return r < 0 ? 0 : r >= d ? d - 1 : r;
}

static void gs_cubic(double t, double *w) {
    const double a = -0.75;
    double x = fabs(t);
    w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
    w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
    w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
    w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

symc_status rt_ref_k_grid_sample(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *g = &c->in[1];
    const char *mode_s, *pad_s;
    int64_t align;
    symc_status s;
    if ((s = rt_ref_attr_str(c, "mode", 1, NULL, &mode_s)) ||
        (s = rt_ref_attr_str(c, "padding_mode", 0, "zeros", &pad_s)) ||
        (s = rt_ref_attr_int(c, "align_corners", 0, 0, &align)) || (s = rt_ref_check_in_float(c, 1, "grid")))
        return s;
    int mode = !strcmp(mode_s, "nearest") ? GS_NEAREST
        : !strcmp(mode_s, "linear")       ? GS_LINEAR
        : !strcmp(mode_s, "cubic")        ? GS_CUBIC
                                          : -1;
    int pad = !strcmp(pad_s, "zeros")  ? GS_ZEROS
        : !strcmp(pad_s, "border")     ? GS_BORDER
        : !strcmp(pad_s, "reflection") ? GS_REFLECTION
                                       : -1;
    if (mode < 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "mode '%s' must be nearest, linear or cubic", mode_s);
    if (pad < 0)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "padding_mode '%s' must be zeros, border or reflection", pad_s);
    int32_t r = x->rank - 2;
    char t1[160], t2[160];
    if (r < 1 || r > 3 || g->rank != x->rank || g->dims[r + 1] != r || g->dims[0] != x->dims[0])
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "input %s and grid %s do not fit (x [N, C, 1 to 3 spatial dims], grid "
                           "[N, spatial.., rank - 2])",
                           rt_ref_shape_str(t1, sizeof t1, x->rank, x->dims),
                           rt_ref_shape_str(t2, sizeof t2, g->rank, g->dims));
    int64_t od[RT_REF_MAX_RANK];
    od[0] = x->dims[0], od[1] = x->dims[1];
    for (int32_t i = 0; i < r; i++) od[2 + i] = g->dims[1 + i];
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;
    const int64_t *dims = x->dims + 2;
    int64_t plane = rt_ref_numel_dims(r, dims), npos = rt_ref_numel_dims(r, od + 2);
    double lo[3], hi[3];
    for (int32_t i = 0; i < r; i++) {
        lo[i] = align ? 0.0 : -0.5;
        hi[i] = align ? (double)dims[i] - 1 : (double)dims[i] - 0.5;
    }
    int ntap = mode == GS_NEAREST ? 1 : mode == GS_LINEAR ? 2 : 4;
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t p = 0; p < npos; p++) {
            int64_t idx[3][4];
            double w[3][4];
            int bad = 0; /* a NaN coordinate (or an infinite one reflected): NaN out */
            for (int32_t i = 0; i < r; i++) {
                /* axis i reads grid entry r - 1 - i; denormalized in f32 */
                float nv = (float)rt_ld_f(g, (n * npos + p) * r + (r - 1 - i)), len = (float)dims[i];
                double v = align ? (double)((nv + 1.0f) / 2.0f * (len - 1.0f))
                                 : (double)(((nv + 1.0f) * len - 1.0f) / 2.0f);
                if (mode == GS_NEAREST) v = nearbyint(v);
                if (v < lo[i] || v > hi[i]) {
                    if (pad == GS_BORDER) v = v < 0 ? 0 : v > (double)dims[i] - 1 ? (double)dims[i] - 1 : v;
                    else if (pad == GS_REFLECTION) v = gs_reflect(v, lo[i], hi[i]);
                }
                if (isnan(v)) {
                    bad = 1;
                    break;
                }
                /* far outside (zeros only): any index past the input reads 0 */
                v = v < -1e15 ? -1e15 : v > 1e15 ? 1e15 : v;
                if (mode == GS_NEAREST) {
                    idx[i][0] = gs_index((int64_t)v, dims[i], pad, lo[i], hi[i]);
                    w[i][0] = 1.0;
                    continue;
                }
                double f = floor(v);
                int64_t i0 = (int64_t)f;
                if (mode == GS_LINEAR) {
                    w[i][0] = 1.0 - (v - f), w[i][1] = v - f;
                    for (int k = 0; k < 2; k++) idx[i][k] = gs_index(i0 + k, dims[i], pad, lo[i], hi[i]);
                } else {
                    gs_cubic(v - f, w[i]);
                    for (int k = 0; k < 4; k++) idx[i][k] = gs_index(i0 - 1 + k, dims[i], pad, lo[i], hi[i]);
                }
            }
            int total = 1;
            for (int32_t i = 0; i < r; i++) total *= ntap;
            for (int64_t ch = 0; ch < x->dims[1]; ch++) {
                int64_t base = (n * x->dims[1] + ch) * plane;
                double sum = bad ? NAN : 0.0;
                for (int t = 0; t < total && !bad; t++) {
                    int64_t off = 0;
                    double wt = 1.0;
                    int rest = t, zero = 0;
                    for (int32_t i = r - 1; i >= 0; i--) {
                        int k = rest % ntap;
                        rest /= ntap;
                        if (idx[i][k] < 0) zero = 1;
                        wt *= w[i][k];
                    }
                    if (zero) continue;
                    rest = t;
                    int64_t stride = 1;
                    for (int32_t i = r - 1; i >= 0; i--) {
                        off += idx[i][rest % ntap] * stride;
                        rest /= ntap;
                        stride *= dims[i];
                    }
                    sum += wt * rt_ld_f(x, base + off);
                }
                rt_st_f(&c->out[0], (n * x->dims[1] + ch) * npos + p, sum);
            }
        }
    return SYMC_OK;
}

/* roi_align: ONNX RoiAlign as its reference computes it: each output bin of
 * a box averages (or takes the max of) a grid of bilinear samples
 * (sampling_ratio a side, or ceil(box size / bins) when 0); a sample more
 * than one element outside the image contributes 0, one inside the last
 * element's reach is clamped to it. Max mode takes the max over samples of
 * the largest weighted corner, as the reference does. */
symc_status rt_ref_k_roi_align(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *rois = &c->in[1], *bi = &c->in[2];
    int64_t oh, ow, sr, hp;
    double scale;
    const char *mode_s;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "output_height", 1, 1, &oh)) || (s = rt_ref_attr_int(c, "output_width", 1, 1, &ow)) ||
        (s = rt_ref_attr_int(c, "sampling_ratio", 0, 0, &sr)) || (s = rt_ref_attr_int(c, "half_pixel", 0, 1, &hp)) ||
        (s = rt_ref_attr_float(c, "spatial_scale", 0, 1.0, &scale)) ||
        (s = rt_ref_attr_str(c, "mode", 0, "avg", &mode_s)) || (s = rt_ref_check_in_float(c, 1, "rois")))
        return s;
    int is_max = !strcmp(mode_s, "max");
    if (!is_max && strcmp(mode_s, "avg"))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "mode '%s' must be avg or max", mode_s);
    char t1[160], t2[160];
    if (x->rank != 4 || rois->rank != 2 || rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != rois->dims[0] ||
        (bi->dtype != SYMC_I64 && bi->dtype != SYMC_I32))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "x %s must be 4-D, rois %s [R, 4], batch_indices [R] of i32/i64",
                           rt_ref_shape_str(t1, sizeof t1, x->rank, x->dims),
                           rt_ref_shape_str(t2, sizeof t2, rois->rank, rois->dims));
    if (oh < 1 || ow < 1 || sr < 0 || oh > ((int64_t)1 << 20) || ow > ((int64_t)1 << 20) || sr > 4096)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "output %lld x %lld and sampling_ratio %lld are out of range",
                           (long long)oh, (long long)ow, (long long)sr);
    int64_t nr = rois->dims[0], ch = x->dims[1], h = x->dims[2], w = x->dims[3];
    int64_t od[4] = {nr, ch, oh, ow};
    if ((s = rt_ref_check_out(c, 0, x->dtype, 4, od))) return s;
    for (int64_t r = 0; r < nr; r++) {
        int64_t b = rt_ld_i(bi, r);
        if (b < 0 || b >= x->dims[0])
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "batch index %lld of box %lld is outside [0, %lld)",
                               (long long)b, (long long)r, (long long)x->dims[0]);
        double off = hp ? 0.5 : 0.0;
        double x0 = rt_ld_f(rois, r * 4) * scale - off, y0 = rt_ld_f(rois, r * 4 + 1) * scale - off;
        double x1 = rt_ld_f(rois, r * 4 + 2) * scale - off, y1 = rt_ld_f(rois, r * 4 + 3) * scale - off;
        double rw = x1 - x0, rh = y1 - y0;
        if (!hp) rw = rw > 1.0 ? rw : 1.0, rh = rh > 1.0 ? rh : 1.0;
        double bh = rh / (double)oh, bw = rw / (double)ow;
        double gh_d = sr > 0 ? (double)sr : ceil(rh / (double)oh), gw_d = sr > 0 ? (double)sr : ceil(rw / (double)ow);
        if (!(gh_d >= 0 && gh_d <= 4096 && gw_d >= 0 && gw_d <= 4096)) /* NaN or huge boxes */
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "box %lld needs a %g x %g sampling grid", (long long)r, gh_d,
                               gw_d);
        int64_t gh = (int64_t)gh_d, gw = (int64_t)gw_d, count = gh * gw > 1 ? gh * gw : 1;
        for (int64_t ci = 0; ci < ch; ci++) {
            int64_t base = (b * ch + ci) * h * w;
            for (int64_t ph = 0; ph < oh; ph++)
                for (int64_t pw = 0; pw < ow; pw++) {
                    double acc = 0.0;
                    int first = 1;
                    for (int64_t iy = 0; iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            double yy = y0 + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
                            double xx = x0 + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
                            double wt[4] = {0, 0, 0, 0};
                            int64_t pos[4] = {0, 0, 0, 0};
                            if (!(yy < -1.0 || yy > (double)h || xx < -1.0 || xx > (double)w)) {
                                double y = yy > 0 ? yy : 0, xv = xx > 0 ? xx : 0;
                                int64_t yl = (int64_t)y, xl = (int64_t)xv, yh, xh;
                                if (yl >= h - 1) yh = yl = h - 1, y = (double)yl;
                                else yh = yl + 1;
                                if (xl >= w - 1) xh = xl = w - 1, xv = (double)xl;
                                else xh = xl + 1;
                                double ly = y - (double)yl, lx = xv - (double)xl, hy = 1.0 - ly, hx = 1.0 - lx;
                                wt[0] = hy * hx, wt[1] = hy * lx, wt[2] = ly * hx, wt[3] = ly * lx;
                                pos[0] = yl * w + xl, pos[1] = yl * w + xh, pos[2] = yh * w + xl, pos[3] = yh * w + xh;
                            }
                            if (!is_max) {
                                for (int k = 0; k < 4; k++) acc += wt[k] * rt_ld_f(x, base + pos[k]);
                                continue;
                            }
                            double v = wt[0] * rt_ld_f(x, base + pos[0]);
                            for (int k = 1; k < 4; k++) {
                                double u = wt[k] * rt_ld_f(x, base + pos[k]);
                                v = u > v ? u : v;
                            }
                            acc = first || v > acc ? v : acc;
                            first = 0;
                        }
                    rt_st_f(&c->out[0], ((r * ch + ci) * oh + ph) * ow + pw, is_max ? acc : acc / (double)count);
                }
        }
    }
    return SYMC_OK;
}
