/* ONNX Resize (scales or sizes, roi, the coordinate modes and nearest roundings) and the grid
 * sampling ops, GridSample and AffineGrid. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- resize ------------------------------------------------------------------------------------------ */

/* The elements of a constant float tensor (roi, scales) as doubles. */
static symc_status const_floats(fe_ctx *c, uint32_t t, uint32_t k, const char *role, double *v, uint32_t cap,
                                uint32_t *n) {
    const ir_tensor *x = T(c, t);
    if (x->constant == IR_NONE)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input %u '%s' (%s) is not known at build time: %s '%s'%s", k,
                       c->node->input[k], role, x->producer == IR_NONE ? "it is the graph input" : "it comes from node",
                       x->producer == IR_NONE ? x->name : c->m->nodes[x->producer].name,
                       x->producer == IR_NONE ? ", whose elements are only known at run time"
                                              : "; symc needs a constant");
    if (!ir_dtype_is_float(x->dtype))
        return fe_fail(c, SYMC_ERR_FORMAT, "input %u '%s' (%s) must be a float tensor", k, c->node->input[k], role);
    const ir_constant *cd = &c->m->constants[x->constant];
    size_t es = symc_dtype_size(x->dtype), cnt = es ? cd->size / es : 0;
    if (cnt > cap)
        return fe_fail(c, SYMC_ERR_FORMAT, "input %u '%s' (%s) has %zu elements, at most %u", k, c->node->input[k],
                       role, cnt, cap);
    for (size_t i = 0; i < cnt; i++) v[i] = symc_dtype_load(cd->data, x->dtype, i);
    *n = (uint32_t)cnt;
    return SYMC_OK;
}

/* Whether input k is present with at least one element (Resize passes an
 * empty tensor for the one of scales and sizes it does not use). */
static int nonempty_in(fe_ctx *c, uint32_t k) {
    uint32_t t;
    if (!fe_has_in(c, k) || fe_in(c, k, &t)) return 0;
    int64_t v;
    const ir_tensor *x = T(c, t);
    return !(x->rank == 1 && sym_is_const(c->t, x->dims[0], &v) && v == 0);
}

/* floor(in * scale) as an expression: a float scale is exactly num / 2^e,
 * so the product's floor is (in * num) // 2^e whatever in is. */
static symc_status scaled_dim(fe_ctx *c, sym_expr in, double scale, sym_expr *out) {
    double num = scale;
    int64_t den = 1, v;
    while (num != floor(num) && den < ((int64_t)1 << 40)) num *= 2, den *= 2;
    if (sym_is_const(c->t, in, &v)) {
        *out = sym_const(c->t, (int64_t)floor((double)v * scale));
        return SYMC_OK;
    }
    if (num != floor(num) || num > (double)((int64_t)1 << 31))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "scale %.17g of the symbolic dim %s is not a binary fraction symc can multiply exactly", scale,
                       fe_txt(c, in));
    *out = sym_floordiv(c->t, sym_scale(c->t, in, (int64_t)num), sym_const(c->t, den));
    return *out == SYM_NONE ? fe_fail(c, SYMC_ERR_INTERNAL, "could not build floor(%s * %g)", fe_txt(c, in), scale)
                            : SYMC_OK;
}

/* Resize (opsets 13-19; older models are converted up to 13). scales and
 * roi must be constants; sizes may be symbolic (a shape computation). Every
 * attribute value of the opsets is implemented; keep_aspect_ratio_policy
 * other than stretch needs constant input dims and sizes, since its output
 * size round(min or max of sizes / dims * dim) is not an integer expression
 * symc can keep symbolic. */
static symc_status h_resize(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 4);
    uint32_t x, t, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    sym_expr xd[IR_MAX_RANK]; /* x's dims: reading the other inputs may add tensors and move the table */
    memcpy(xd, xt->dims, sizeof xd);
    const char *mode = fe_attr_s(c, "mode", "nearest");
    const char *coord = fe_attr_s(c, "coordinate_transformation_mode", "half_pixel");
    const char *nearest = fe_attr_s(c, "nearest_mode", "round_prefer_floor");
    const char *keep = fe_attr_s(c, "keep_aspect_ratio_policy", "stretch");
    int64_t antialias = fe_attr_i(c, "antialias", 0), exclude = fe_attr_i(c, "exclude_outside", 0);
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric",           "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    int ok_mode = 0, ok_coord = 0, ok_near = 0;
    for (int i = 0; i < 3; i++) ok_mode |= !strcmp(mode, modes[i]);
    for (int i = 0; i < 6; i++) ok_coord |= !strcmp(coord, coords[i]);
    for (int i = 0; i < 4; i++) ok_near |= !strcmp(nearest, nearests[i]);
    if (!ok_mode) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "mode = '%s' (expected nearest, linear or cubic)", mode);
    if (!ok_coord)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "coordinate_transformation_mode = '%s' is not supported (half_pixel, half_pixel_symmetric, "
                       "pytorch_half_pixel, align_corners, asymmetric, tf_crop_and_resize are)",
                       coord);
    if (!ok_near) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "nearest_mode = '%s' is not supported", nearest);
    if (strcmp(keep, "stretch") && strcmp(keep, "not_larger") && strcmp(keep, "not_smaller"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "keep_aspect_ratio_policy = '%s' is not supported", keep);
    if (antialias && !strcmp(mode, "nearest"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "antialias = 1 with mode 'nearest' is not defined");
    if (antialias != 0 && antialias != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "antialias = %" PRId64 " must be 0 or 1", antialias);

    /* axes (opset 18): the dims that scales, sizes and roi speak of */
    int64_t axes[IR_MAX_RANK];
    uint32_t na = (uint32_t)r;
    const int64_t *av;
    uint32_t an;
    if (fe_attr_ints(c, "axes", &av, &an)) {
        if (an == 0 || an > (uint32_t)r)
            return fe_fail(c, SYMC_ERR_FORMAT, "axes has %u entries for rank %d", an, (int)r);
        int seen[IR_MAX_RANK] = {0};
        for (uint32_t i = 0; i < an; i++) {
            int64_t a;
            if (!ir_axis_norm(av[i], r, &a) || seen[a])
                return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range or repeated", av[i]);
            seen[a] = 1;
            axes[i] = a;
        }
        na = an;
    } else {
        for (int32_t i = 0; i < r; i++) axes[i] = i;
    }

    int have_scales = nonempty_in(c, 2), have_sizes = nonempty_in(c, 3);
    if (have_scales == have_sizes)
        return fe_fail(c, SYMC_ERR_FORMAT, "exactly one of scales (input 2) and sizes (input 3) must be given");
    sym_expr sizes[IR_MAX_RANK];
    double scales[IR_MAX_RANK], roi[2 * IR_MAX_RANK];
    int with_scales = have_scales;
    memcpy(sizes, xd, (size_t)r * sizeof sizes[0]);
    for (int32_t d = 0; d < r; d++) scales[d] = 1.0, roi[d] = 0.0, roi[d + r] = 1.0;
    uint32_t n;
    if (have_scales) {
        double v[IR_MAX_RANK];
        if ((st = fe_in(c, 2, &t)) || (st = const_floats(c, t, 2, "the scales", v, IR_MAX_RANK, &n))) return st;
        if (n != na) return fe_fail(c, SYMC_ERR_FORMAT, "scales has %u entries for %u axes", n, na);
        for (uint32_t i = 0; i < na; i++) {
            if (!(v[i] > 0) || !isfinite(v[i]))
                return fe_fail(c, SYMC_ERR_FORMAT, "scale %u is %g, must be positive", i, v[i]);
            scales[axes[i]] = v[i];
            if ((st = scaled_dim(c, xd[axes[i]], v[i], &sizes[axes[i]]))) return st;
        }
    } else {
        const sym_expr *v;
        if ((st = fe_in(c, 3, &t)) || (st = fe_values(c, t, 3, "the output sizes", &v, &n))) return st;
        if (n != na) return fe_fail(c, SYMC_ERR_FORMAT, "sizes has %u entries for %u axes", n, na);
        for (uint32_t i = 0; i < na; i++) sizes[axes[i]] = v[i];
        if (strcmp(keep, "stretch")) {
            /* one scale for every axis: the min (not_larger) or max (not_smaller)
             * of sizes / dims, and sizes round-half-up(scale * dim) */
            double s = 0;
            int64_t in[IR_MAX_RANK], want[IR_MAX_RANK];
            for (uint32_t i = 0; i < na; i++) {
                if (!sym_is_const(c->t, xd[axes[i]], &in[i]) || !sym_is_const(c->t, v[i], &want[i]) || in[i] <= 0)
                    return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                                   "keep_aspect_ratio_policy '%s' needs constant input dims and sizes: dim %" PRId64
                                   " is %s, size %s",
                                   keep, axes[i], fe_txt(c, xd[axes[i]]), fe_txt(c, v[i]));
                double q = (double)want[i] / (double)in[i];
                if (i == 0 || (!strcmp(keep, "not_larger") ? q < s : q > s)) s = q;
            }
            for (uint32_t i = 0; i < na; i++) {
                scales[axes[i]] = s;
                sizes[axes[i]] = sym_const(c->t, (int64_t)(s * (double)in[i] + 0.5));
            }
            with_scales = 1;
        }
    }
    if (!strcmp(coord, "tf_crop_and_resize")) {
        double v[2 * IR_MAX_RANK];
        if (!nonempty_in(c, 1)) return fe_fail(c, SYMC_ERR_FORMAT, "tf_crop_and_resize needs roi (input 1)");
        if ((st = fe_in(c, 1, &t)) || (st = const_floats(c, t, 1, "the roi", v, 2 * IR_MAX_RANK, &n))) return st;
        if (n != 2 * na) return fe_fail(c, SYMC_ERR_FORMAT, "roi has %u entries for %u axes", n, na);
        for (uint32_t i = 0; i < na; i++) roi[axes[i]] = v[i], roi[axes[i] + r] = v[i + na];
    }
    ir_attr a[10];
    uint32_t k = 0;
    a[k++] = symc_attr_dims("sizes", sizes, (uint32_t)r);
    if (with_scales) a[k++] = symc_attr_floats("scales", scales, (uint32_t)r);
    a[k++] = symc_attr_str("mode", mode);
    a[k++] = symc_attr_str("coord_mode", coord);
    a[k++] = symc_attr_str("nearest_mode", nearest);
    a[k++] = symc_attr_float("cubic_coeff_a", fe_attr_f(c, "cubic_coeff_a", -0.75));
    a[k++] = symc_attr_int("exclude_outside", exclude != 0);
    a[k++] = symc_attr_float("extrapolation_value", fe_attr_f(c, "extrapolation_value", 0.0));
    if (!strcmp(coord, "tf_crop_and_resize")) a[k++] = symc_attr_floats("roi", roi, 2 * (uint32_t)r);
    a[k++] = symc_attr_int("antialias", antialias);
    return fe_emit1(c, IR_OP_RESIZE, &x, 1, a, k, 0, &out);
}

/* ---- grid sampling ----------------------------------------------------------------------------------- */

/* GridSample (opsets 16-21): the IR op grid_sample on 1 to 3 spatial dims.
 * Opset 16's bilinear and bicubic are linear and cubic. */
static symc_status h_grid_sample(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t in[2], out;
    for (uint32_t k = 0; k < 2 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const char *mode = fe_attr_s(c, "mode", c->opset >= 20 ? "linear" : "bilinear");
    const char *pad = fe_attr_s(c, "padding_mode", "zeros");
    int64_t align = fe_attr_i(c, "align_corners", 0);
    const char *m = !strcmp(mode, "bilinear") || !strcmp(mode, "linear") ? "linear"
        : !strcmp(mode, "bicubic") || !strcmp(mode, "cubic")             ? "cubic"
        : !strcmp(mode, "nearest")                                       ? "nearest"
                                                                         : NULL;
    if (!m)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'mode' = '%s' is not supported (linear/bilinear, cubic/bicubic and nearest are)",
                       mode);
    if (strcmp(pad, "zeros") && strcmp(pad, "border") && strcmp(pad, "reflection"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'padding_mode' = '%s' is not supported (zeros, border and reflection are)", pad);
    if (align != 0 && align != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'align_corners' = %" PRId64 " must be 0 or 1", align);
    int32_t r = T(c, in[0])->rank;
    if (r < 3 || r > 5)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input '%s' has rank %d; 1 to 3 spatial dims (rank 3 to 5) are supported", T(c, in[0])->name,
                       (int)r);
    if (!ir_dtype_is_float(T(c, in[0])->dtype) || !ir_dtype_is_float(T(c, in[1])->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' and grid '%s' must be float tensors", T(c, in[0])->name,
                       T(c, in[1])->name);
    ir_attr a[3] = {symc_attr_str("mode", m), symc_attr_str("padding_mode", pad),
                    symc_attr_int("align_corners", align)};
    return fe_emit1(c, IR_OP_GRID_SAMPLE, in, 2, a, 3, 0, &out);
}

/* AffineGrid (opset 20) as theta applied to a constant base grid: the
 * homogeneous coordinates B [P, r + 1] of the P = prod(size) output points
 * (x first, then y, z, then 1; each axis a linspace over [-1, 1]: the corner
 * centers with align_corners, else the element centers), so the grid is
 * matmul(B, transpose(theta)) [N, P, r] reshaped to [N, size.., r]. size
 * must be known at build time. */
static symc_status h_affine_grid(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t th, sz, out;
    int64_t size[5];
    uint32_t ns;
    if (!st) st = fe_in(c, 0, &th);
    if (!st) st = fe_in(c, 1, &sz);
    if (!st) st = fe_const_ints(c, sz, 1, "the output size", size, 5, &ns);
    if (st) return st;
    int64_t align = fe_attr_i(c, "align_corners", 0);
    if (align != 0 && align != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'align_corners' = %" PRId64 " must be 0 or 1", align);
    int32_t r = (int32_t)ns - 2;
    const ir_tensor *tt = T(c, th);
    int64_t d1, d2;
    if (r < 2 || r > 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "size has %u entries; 2-D (4) and 3-D (5) grids are supported", ns);
    if (tt->rank != 3 || !sym_is_const(c->t, tt->dims[1], &d1) || !sym_is_const(c->t, tt->dims[2], &d2) || d1 != r ||
        d2 != r + 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "theta '%s' must be [N, %d, %d] for a %d-D grid", tt->name, (int)r,
                       (int)r + 1, (int)r);
    if (!ir_dtype_is_float(tt->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "theta '%s' must be a float tensor", tt->name);
    int64_t p = 1;
    for (int32_t i = 0; i < r; i++) {
        if (size[2 + i] < 1 || size[2 + i] > ((int64_t)1 << 20))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "size entry %d = %" PRId64 " must be in [1, 2^20]", 2 + (int)i,
                           size[2 + i]);
        p *= size[2 + i];
        if (p > ((int64_t)1 << 24))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the grid has more than 2^24 points, too many for a constant");
    }
    symc_dtype dt = tt->dtype;
    size_t es = symc_dtype_size(dt);
    uint8_t *base = malloc((size_t)p * (size_t)(r + 1) * es);
    if (!base) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t q = 0; q < p; q++) {
        int64_t rest = q;
        for (int32_t i = r - 1; i >= 0; i--) { /* spatial axis i, innermost last; column r - 1 - i */
            int64_t n = size[2 + i], k = rest % n;
            rest /= n;
            double v = align ? (n == 1 ? -1.0 : -1.0 + 2.0 * (double)k / (double)(n - 1))
                             : -1.0 + (2.0 * (double)k + 1.0) / (double)n;
            symc_dtype_store(base, dt, (size_t)(q * (r + 1) + (r - 1 - i)), v);
        }
        symc_dtype_store(base, dt, (size_t)(q * (r + 1) + r), 1.0);
    }
    int64_t bd[2] = {p, r + 1};
    uint32_t b, tr, g;
    st = fe_const(c, dt, 2, bd, base, -1, &b);
    free(base);
    int64_t perm[3] = {0, 2, 1};
    ir_attr pa = symc_attr_ints("perm", perm, 3);
    if (st || (st = fe_emit1(c, IR_OP_TRANSPOSE, &th, 1, &pa, 1, -1, &tr)) ||
        (st = fe_emit_bin(c, IR_OP_MATMUL, b, tr, -1, &g)))
        return st;
    sym_expr od[5];
    od[0] = T(c, th)->dims[0];
    for (int32_t i = 0; i < r; i++) od[1 + i] = sym_const(c->t, size[2 + i]);
    od[r + 1] = sym_const(c->t, r);
    (void)out;
    return fe_emit_reshape(c, g, od, (uint32_t)r + 2, 0, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_resize[] = {
    {"AffineGrid", h_affine_grid},
    {"GridSample", h_grid_sample},
    {"Resize", h_resize},
};
const uint32_t fe_onnx_n_ops_resize = sizeof fe_onnx_ops_resize / sizeof fe_onnx_ops_resize[0];
