/* resize (ONNX Resize, opsets 13-19) on the CUDA target: the reference
 * kernel (runtime/ref/ref_kernels_resize.c) written out per output element,
 * one thread each.
 *
 * Every mode the reference implements is here: nearest (its four rounding
 * rules), linear and cubic (cubic_coeff_a), antialias for linear and cubic,
 * exclude_outside, and the six coordinate transformations, with
 * tf_crop_and_resize's extrapolation_value. As in the reference, an axis maps
 * output index y to a source coordinate x, a filter gives weights for the
 * input indices around x (clamped to the edge), and each output sums the
 * tensor product of its axes' taps, axis 0 outermost, zero weights skipped.
 * The coordinates, the nearest/linear decisions and the weights are computed
 * in double exactly as the reference writes them (products that feed a sum
 * use __dmul_rn/__dadd_rn, which NVRTC never contracts into an FMA, so a
 * nearest pick cannot flip at a tie); the data is read with the typed loads
 * (half storage works) and summed in float (double for f64 tensors).
 *
 * Axes whose input and output dims are the same expression, with no scale
 * other than 1 and no crop, are read straight through (the reference's
 * identity axes); every other axis decides at run time, like the reference,
 * whether it is an identity (scale 1, same length). The scale is the
 * `scales` attribute when the model gives it, else output / input length at
 * run time. Refused by name: integer and bool tensors (the reference rounds
 * them through f64; not ported), and antialias when a resized axis's scale is
 * known only at run time (its filter width depends on it). An input axis of
 * length 0 resized to a non-empty one (the reference refuses it at run time)
 * is reported after the run (sc_report: the runtime then fails the run).
 *
 * The emitter decodes and checks the attributes (rs_attrs), picks the
 * resized axes with their taps (rs_axes, antialias's filter widths), then
 * writes the kernel: output coordinates, and per resized axis its source
 * coordinate (rs_emit_coord), filter weights (rs_emit_weights) and clamped
 * taps (rs_emit_taps), then the tensor product. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit.h"

#define RS_MAX_TAPS 64 /* the reference's RESIZE_MAX_TAPS */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum { RS_HALF_PIXEL, RS_HALF_PIXEL_SYMMETRIC, RS_PYTORCH_HALF_PIXEL, RS_ALIGN_CORNERS, RS_ASYMMETRIC, RS_TF_CROP };
enum { RS_PREFER_FLOOR, RS_PREFER_CEIL, RS_FLOOR, RS_CEIL };

static int rs_pick(const char *s, const char *const *names, int n) {
    for (int i = 0; i < n; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

/* "((double)v)" with inf and NaN spelled out */
static const char *rs_lit(char *buf, size_t cap, double v) {
    cg_float_literal(buf, cap, v, SYMC_F64);
    return buf;
}

/* a resize node's decoded attributes and its resized axes (rs_attrs, rs_axes) */
typedef struct rs_plan {
    uint32_t node;
    const ir_tensor *x, *y;
    const char *mode_s, *coord_s;
    int mode, coord, nearest, exclude, antialias, r;
    double a, extrap;        /* cubic_coeff_a, extrapolation_value */
    const ir_attr *sc, *roi; /* the model's scales and roi (NULL: none) */
    /* the resized axes with their taps per output index; antialias: each one's first tap and
     * filter scale */
    int resized[IR_MAX_RANK], nr, taps[IR_MAX_RANK];
    int64_t aa_start[IR_MAX_RANK];
    double aa_s[IR_MAX_RANK];
} rs_plan;

/* the attributes, decoded and checked */
static symc_status rs_attrs(cg_cuda *c, uint32_t node, rs_plan *p) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *y = &c->m->tensors[n->out[0]];
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric",           "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const char *mode_s = cg_attr_str(n, "mode", ""), *coord_s = cg_attr_str(n, "coord_mode", "");
    const char *near_s = cg_attr_str(n, "nearest_mode", "round_prefer_floor");
    int mode = rs_pick(mode_s, modes, 3), coord = rs_pick(coord_s, coords, 6), nearest = rs_pick(near_s, nearests, 4);
    if (mode < 0 || coord < 0 || nearest < 0)
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "mode '%s', coord_mode '%s' or nearest_mode '%s' is not known",
                       mode_s, coord_s, near_s);
    if (!ir_dtype_is_float(x->dtype) || y->dtype != x->dtype)
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED,
                       "input '%s' is %s: the CUDA target resizes float tensors only (f32, f64, f16, bf16); the "
                       "reference backend runs this one",
                       x->name, symc_dtype_name(x->dtype));
    int exclude = cg_attr_int(n, "exclude_outside", 0) != 0, antialias = cg_attr_int(n, "antialias", 0) != 0;
    double a = cg_attr_float(n, "cubic_coeff_a", -0.75), extrap = cg_attr_float(n, "extrapolation_value", 0.0);
    if (antialias && mode == RS_NEAREST)
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "antialias applies to linear and cubic modes, not nearest");
    int r = x->rank;
    if (r < 0 || y->rank != r) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "input and output ranks differ");
    const ir_attr *sc = ir_node_attr(n, "scales"), *roi = ir_node_attr(n, "roi");
    if (sc && (sc->kind != IR_ATTR_FLOATS || sc->n != (uint32_t)r))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "attribute 'scales' must be %d floats", r);
    if (roi && (roi->kind != IR_ATTR_FLOATS || roi->n != 2u * (uint32_t)r))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "attribute 'roi' must be %d floats", 2 * r);
    if (coord == RS_TF_CROP && !roi)
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "tf_crop_and_resize needs the attribute 'roi'");
    *p = (rs_plan){.node = node,
                   .x = x,
                   .y = y,
                   .mode_s = mode_s,
                   .coord_s = coord_s,
                   .mode = mode,
                   .coord = coord,
                   .nearest = nearest,
                   .exclude = exclude,
                   .antialias = antialias,
                   .r = r,
                   .a = a,
                   .extrap = extrap,
                   .sc = sc,
                   .roi = roi};
    return SYMC_OK;
}

/* the axes that are resized, their taps, and antialias's filters */
static symc_status rs_axes(cg_cuda *c, uint32_t node, rs_plan *p) {
    const ir_tensor *x = p->x, *y = p->y;
    const ir_attr *sc = p->sc, *roi = p->roi;
    const int r = p->r, mode = p->mode, coord = p->coord, antialias = p->antialias;
    /* the axes that are read straight through whatever the sizes (same dim, scale 1, no crop), and the
     * resized ones with their taps per output index (the most any index needs) */
    int *resized = p->resized, *taps = p->taps, nr = 0;
    int64_t *aa_start = p->aa_start;
    double *aa_s = p->aa_s;
    for (int d = 0; d < r; d++) {
        double s1 = sc ? sc->floats[d] : 1.0;
        if (sc && (!(s1 > 0) || !isfinite(s1)))
            return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "the scale of axis %d is %g, must be positive", d, s1);
        int cropped = coord == RS_TF_CROP && (fabs(roi->floats[d]) > 1e-9 || fabs(roi->floats[d + r] - 1.0) > 1e-9);
        if (x->dims[d] == y->dims[d] && fabs(s1 - 1.0) <= 1e-9 && !cropped) continue;
        resized[nr] = d;
        taps[nr] = mode == RS_CUBIC ? 4 : 2;
        if (antialias) {
            /* the filter's width follows the scale: known at build time only from the model's scales or
             * constant dims */
            int64_t in = 0, out = 0;
            double scale = s1;
            if (!sc) {
                if (!sym_is_const(c->m->syms, x->dims[d], &in) || !sym_is_const(c->m->syms, y->dims[d], &out) ||
                    in <= 0)
                    return cg_fail(c, node, SYMC_ERR_UNSUPPORTED,
                                   "antialias on axis %d, whose scale is known only at run time (dims %s): the CUDA "
                                   "target needs the scale at build time (constant dims or the model's scales); the "
                                   "reference backend runs it",
                                   d, "in symbols");
                scale = (double)out / (double)in;
            }
            double s = scale < 1.0 ? scale : 1.0;
            int64_t start = (int64_t)floor((mode == RS_LINEAR ? -1.0 : -2.0) / s) + 1, cnt = 2 - 2 * start;
            if (cnt > RS_MAX_TAPS)
                return cg_fail(c, node, SYMC_ERR_UNSUPPORTED,
                               "antialias at scale %g needs %lld taps per axis, more than %d", scale, (long long)cnt,
                               RS_MAX_TAPS);
            aa_start[nr] = start;
            aa_s[nr] = s;
            taps[nr] = (int)cnt;
        }
        nr++;
    }
    p->nr = nr;
    return SYMC_OK;
}

/* resized axis j's declarations, and its source coordinate x of output index c[d] */
static void rs_emit_coord(cg_kw *k, const rs_plan *p, int j) {
    const ir_tensor *x = p->x, *y = p->y;
    const ir_attr *sc = p->sc, *roi = p->roi;
    const int r = p->r, coord = p->coord, *taps = p->taps;
    const uint32_t node = p->node;
    char lit[96], lit2[96];
    int d = p->resized[j];
    char in[48], out[48];
    snprintf(in, sizeof in, "%s", cg_kw_dim(k, x->dims[d]));
    snprintf(out, sizeof out, "%s", cg_kw_dim(k, y->dims[d]));
    cg_kw_body(k, "        long long ti%d[%d];\n        double tw%d[%d];\n        int tn%d = 0;\n", j, taps[j], j,
               taps[j], j);
    cg_kw_body(k, "        {\n            const long long in = %s, out = %s;\n", in, out);
    if (sc) cg_kw_body(k, "            const double scale = %s;\n", rs_lit(lit, sizeof lit, sc->floats[d]));
    else cg_kw_body(k, "            const double scale = in ? (double)out / (double)in : 1.0;\n");
    double r0 = roi ? roi->floats[d] : 0.0, r1 = roi ? roi->floats[d + r] : 1.0;
    cg_kw_body(k, "            const double roi0 = %s, roi1 = %s;\n", rs_lit(lit, sizeof lit, r0),
               rs_lit(lit2, sizeof lit2, r1));
    int cropped = coord == RS_TF_CROP && (fabs(r0) > 1e-9 || fabs(r1 - 1.0) > 1e-9);
    cg_kw_body(k,
               "            if (in == 0) { sc_report(1u, %uu); outside = true; } /* the reference refuses it */\n"
               "            else if (%s && fabs(scale - 1.0) <= 1e-9 && out == in) {\n"
               "                tn%d = 1; ti%d[0] = c[%d]; tw%d[0] = 1.0;\n"
               "            } else {\n"
               "                const double ow = __dmul_rn(scale, (double)in), yy = (double)c[%d];\n"
               "                double x;\n",
               node, cropped ? "false" : "true", j, j, d, j, d);
    switch (coord) {
    case RS_HALF_PIXEL: cg_kw_body(k, "                x = (yy + 0.5) / scale - 0.5;\n"); break;
    case RS_HALF_PIXEL_SYMMETRIC:
        cg_kw_body(k,
                   "                const double adj = (double)out / ow, center = (double)in / 2.0;\n"
                   "                const double off = __dmul_rn(center, 1 - adj);\n"
                   "                x = __dadd_rn(off, (yy + 0.5) / scale) - 0.5;\n");
        break;
    case RS_PYTORCH_HALF_PIXEL:
        cg_kw_body(k, "                x = ow == 1 ? -0.5 : (yy + 0.5) / scale - 0.5;\n");
        break;
    case RS_ALIGN_CORNERS:
        cg_kw_body(k, "                x = ow == 1 ? 0.0 : __dmul_rn(yy, (double)(in - 1)) / (ow - 1);\n");
        break;
    case RS_ASYMMETRIC: cg_kw_body(k, "                x = yy / scale;\n"); break;
    default:
        cg_kw_body(k,
                   "                x = ow == 1 ? __dmul_rn(roi1 - roi0, (double)(in - 1)) / 2\n"
                   "                            : __dmul_rn(__dmul_rn(yy, roi1 - roi0), (double)(in - 1)) / "
                   "(ow - 1);\n"
                   "                x = __dadd_rn(x, __dmul_rn(roi0, (double)(in - 1)));\n"
                   "                if (x < 0 || x > (double)(in - 1)) outside = true;\n");
    }
}

/* resized axis j's filter: the weights tw<j> of its n taps around x */
static void rs_emit_weights(cg_kw *k, const rs_plan *p, int j) {
    const int mode = p->mode, nearest = p->nearest, antialias = p->antialias, *taps = p->taps;
    const double a = p->a;
    const int64_t *aa_start = p->aa_start;
    const double *aa_s = p->aa_s;
    char lit[96], lit2[96];
    cg_kw_body(k,
               "                const double p0 = floor(x), ratio = x == p0 ? 1.0 : x - p0;\n"
               "                int n = 0;\n");
    if (mode == RS_NEAREST) {
        const char *second = nearest == RS_PREFER_FLOOR ? "ratio > 0.5"
            : nearest == RS_PREFER_CEIL                 ? "ratio >= 0.5"
            : nearest == RS_CEIL                        ? "true"
                                                        : "false";
        cg_kw_body(k,
                   "                const bool second = ratio == 1.0 ? true : (%s);\n"
                   "                tw%d[0] = second ? 0.0 : 1.0; tw%d[1] = second ? 1.0 : 0.0; n = 2;\n",
                   second, j, j);
    } else if (!antialias && mode == RS_LINEAR) {
        cg_kw_body(k, "                tw%d[0] = 1 - ratio; tw%d[1] = ratio; n = 2;\n", j, j);
    } else if (!antialias) {
        const char *A = rs_lit(lit, sizeof lit, a);
        cg_kw_body(k,
                   "                const double a = %s, r = ratio, q = 1 - ratio;\n"
                   "                tw%d[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;\n"
                   "                tw%d[1] = ((a + 2) * r - (a + 3)) * r * r + 1;\n"
                   "                tw%d[2] = ((a + 2) * q - (a + 3)) * q * q + 1;\n"
                   "                tw%d[3] = ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a;\n"
                   "                n = 4;\n",
                   A, j, j, j, j);
    } else {
        cg_kw_body(k,
                   "                const double s = %s, a = %s;\n"
                   "                double sum = 0;\n"
                   "                for (int t = 0; t < %d; t++) {\n"
                   "                    const double arg = ((double)(%lldLL + t) - ratio) * s;\n",
                   rs_lit(lit, sizeof lit, aa_s[j]), rs_lit(lit2, sizeof lit2, a), taps[j], (long long)aa_start[j]);
        if (mode == RS_LINEAR)
            cg_kw_body(k, "                    const double w = fmin(fmax(1 - fabs(arg), 0.0), 1.0);\n");
        else
            cg_kw_body(
                k,
                "                    const double ax = fabs(arg);\n"
                "                    const double w = ax <= 1 ? (a + 2) * ax * ax * ax - (a + 3) * ax * ax + 1\n"
                "                        : ax < 2 ? a * ax * ax * ax - 5 * a * ax * ax + 8 * a * ax - 4 * a : 0.0;\n");
        cg_kw_body(k,
                   "                    tw%d[t] = w; sum += w;\n"
                   "                }\n"
                   "                for (int t = 0; t < %d; t++) tw%d[t] /= sum;\n"
                   "                n = %d;\n",
                   j, taps[j], j, taps[j]);
    }
}

/* resized axis j's taps: the first input index, exclude_outside's renormalized weights, the
 * indices ti<j> clamped to the edge */
static void rs_emit_taps(cg_kw *k, const rs_plan *p, int j) {
    const int exclude = p->exclude;
    cg_kw_body(k, "                const long long first = (long long)p0 + (x == p0 ? -(n / 2) : -(n / 2) + 1);\n");
    if (exclude)
        cg_kw_body(k,
                   "                double wsum = 0;\n"
                   "                for (int t = 0; t < n; t++) {\n"
                   "                    const long long jj = first + t;\n"
                   "                    if (jj < 0 || jj >= in) tw%d[t] = 0;\n"
                   "                    wsum += tw%d[t];\n"
                   "                }\n"
                   "                if (wsum != 0)\n"
                   "                    for (int t = 0; t < n; t++) tw%d[t] /= wsum;\n",
                   j, j, j);
    cg_kw_body(k,
               "                for (int t = 0; t < n; t++) {\n"
               "                    const long long jj = first + t;\n"
               "                    ti%d[t] = jj < 0 ? 0 : jj >= in ? in - 1 : jj;\n"
               "                }\n"
               "                tn%d = n;\n"
               "            }\n"
               "        }\n",
               j, j);
}

symc_status cg_emit_resize(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    rs_plan p = {.node = node};
    symc_status st0 = rs_attrs(c, node, &p);
    if (!st0) st0 = rs_axes(c, node, &p);
    if (st0) return st0;
    const ir_tensor *x = p.x, *y = p.y;
    const int r = p.r, nr = p.nr, *resized = p.resized;
    const char *CT = x->dtype == SYMC_F64 ? "double" : "float";
    char lit[96], ld[160], st[160];
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, y);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    /* output coordinates */
    cg_kw_body(&k, "        long long c[%d];\n        {\n            long long q = i;\n", r > 0 ? r : 1);
    for (int d = r - 1; d > 0; d--) {
        const char *dim = cg_kw_dim(&k, y->dims[d]);
        cg_kw_body(&k, "            c[%d] = q %% %s; q /= %s;\n", d, dim, dim);
    }
    if (r > 0) cg_kw_body(&k, "            c[0] = q;\n");
    cg_kw_body(&k, "        }\n        long long base = 0;\n        bool outside = false;\n");
    for (int d = 0, j = 0; d < r; d++) {
        const char *stride = cg_kw_dim(&k, cg_prod(c, x->dims, d + 1, r));
        if (j < nr && resized[j] == d) {
            cg_kw_body(&k, "        const long long xs%d = %s;\n", j, stride);
            j++;
        } else cg_kw_body(&k, "        base += c[%d] * %s;\n", d, stride);
    }
    for (int j = 0; j < nr; j++) {
        rs_emit_coord(&k, &p, j);
        rs_emit_weights(&k, &p, j);
        rs_emit_taps(&k, &p, j);
    }
    cg_store(st, sizeof st, y->dtype, rs_lit(lit, sizeof lit, p.extrap));
    cg_kw_body(&k, "        if (outside) {\n            %s[i] = %s;\n            continue;\n        }\n", yp, st);
    cg_kw_body(&k, "        %s sum = 0;\n", CT);
    /* the tensor product of the resized axes' taps, axis 0 outermost */
    char wexpr[512] = "1.0", oexpr[512] = "base";
    for (int j = 0; j < nr; j++) {
        cg_kw_body(&k, "%*sfor (int k%d = 0; k%d < tn%d; k%d++) {\n", 8 + 4 * j, "", j, j, j, j);
        size_t wl = strlen(wexpr), ol = strlen(oexpr);
        snprintf(wexpr + wl, sizeof wexpr - wl, " * tw%d[k%d]", j, j);
        snprintf(oexpr + ol, sizeof oexpr - ol, " + ti%d[k%d] * xs%d", j, j, j);
    }
    cg_load(ld, sizeof ld, x->dtype, xp, "off");
    cg_kw_body(&k, "%*sconst double w = %s;\n%*sconst long long off = %s;\n", 8 + 4 * nr, "", wexpr, 8 + 4 * nr, "",
               oexpr);
    cg_kw_body(&k, "%*sif (w != 0.0) sum += (%s)w * (%s)%s;\n", 8 + 4 * nr, "", CT, CT, ld);
    for (int j = nr - 1; j >= 0; j--) cg_kw_body(&k, "%*s}\n", 8 + 4 * j, "");
    cg_store(st, sizeof st, y->dtype, "sum");
    cg_kw_body(&k, "        %s[i] = %s;\n    }\n", yp, st);
    char comment[256];
    snprintf(comment, sizeof comment, "resize: %s, %s %s%s, one thread per output", n->name, p.mode_s, p.coord_s,
             p.antialias ? " antialias" : "");
    symc_status s = cg_kw_finish(&k, comment, numel, 256, 256);
    cg_kw_free(&k);
    return s;
}
