/* ONNX shape and data-movement ops: Reshape, Expand, Slice, Pad, CenterCropPad, Tile, Concat,
 * Split, Squeeze, Unsqueeze, Transpose, Flatten, DepthToSpace, SpaceToDepth, Gather, GatherElements,
 * Range, Trilu, Shape, Size. The sizes these ops take as tensors must be known at build time
 * (constants, or values shape inference expresses over the input symbols) and become attributes
 * of kind dims or ints. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- shapes and data movement ------------------------------------------------------------------------ */

static symc_status h_shape(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    int64_t r = T(c, x)->rank, s = fe_attr_i(c, "start", 0), e = fe_attr_i(c, "end", r);
    /* opset 15: start/end count from the back when negative, then clamp */
    if (s < 0) s += r;
    if (e < 0) e += r;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    if (s == 0 && e == r) return fe_emit1(c, IR_OP_SHAPE_OF, &x, 1, NULL, 0, 0, &out);
    if ((st = fe_emit1(c, IR_OP_SHAPE_OF, &x, 1, NULL, 0, -1, &x))) return st;
    sym_expr se = sym_const(c->t, s), ee = sym_const(c->t, e < s ? s : e);
    ir_attr a[2] = {symc_attr_dims("starts", &se, 1), symc_attr_dims("ends", &ee, 1)};
    return fe_emit1(c, IR_OP_SLICE, &x, 1, a, 2, 0, &out);
}

static symc_status h_reshape(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, s, out, n;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st) st = fe_values(c, s, 1, "the target shape", &v, &n);
    if (st) return st;
    if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "target rank %u exceeds %d", n, IR_MAX_RANK);
    int allowzero = fe_attr_i(c, "allowzero", 0) != 0;
    sym_expr dims[IR_MAX_RANK];
    for (uint32_t i = 0; i < n; i++) {
        int64_t k;
        dims[i] = v[i];
        if (sym_is_const(c->t, v[i], &k) && k == -1) {
            dims[i] = SYM_NONE;
        } else if (sym_is_const(c->t, v[i], &k) && k == 0 && !allowzero) {
            /* ONNX: 0 copies the input's dim at that position */
            if ((int32_t)i >= T(c, x)->rank)
                return fe_fail(c, SYMC_ERR_FORMAT, "shape entry %u is 0 (copy) but the input has rank %d", i,
                               (int)T(c, x)->rank);
            dims[i] = T(c, x)->dims[i];
        } else if (sym_range_of(c->t, v[i]).lo < 0) {
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "shape entry %u = %s may be negative", i, fe_txt(c, v[i]));
        }
    }
    ir_attr a = symc_attr_dims("shape", dims, n);
    return fe_emit1(c, IR_OP_RESHAPE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_expand(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, s, out, n;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st) st = fe_values(c, s, 1, "the target shape", &v, &n);
    if (st) return st;
    if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "target rank %u exceeds %d", n, IR_MAX_RANK);
    for (uint32_t i = 0; i < n; i++)
        if (sym_range_of(c->t, v[i]).lo < 0)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "shape entry %u = %s may be negative", i, fe_txt(c, v[i]));
    ir_attr a = symc_attr_dims("shape", v, n);
    if ((st = fe_emit1(c, IR_OP_EXPAND, &x, 1, &a, 1, 0, &out))) return st;
    return fe_fold(c, "Expand", &x, 1, out);
}

static symc_status h_transpose(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    int64_t perm[IR_MAX_RANK];
    const int64_t *p;
    uint32_t n = (uint32_t)T(c, x)->rank;
    if (fe_attr_ints(c, "perm", &p, &n)) {
        if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_FORMAT, "perm has %u entries", n);
        if (n) memcpy(perm, p, n * sizeof *p); /* protobuf-c leaves an empty list NULL */
    } else {
        for (uint32_t i = 0; i < n; i++) perm[i] = n - 1 - i; /* default: reverse */
    }
    ir_attr a = symc_attr_ints("perm", perm, n);
    return fe_emit1(c, IR_OP_TRANSPOSE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_concat(fe_ctx *c) {
    uint32_t n = fe_n_in(c), out;
    if (n < 1) return fe_fail(c, SYMC_ERR_FORMAT, "needs at least one input");
    uint32_t *in = ir_alloc(c->m, n * sizeof *in);
    if (!in) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    symc_status st = SYMC_OK;
    uint32_t m = 0;
    for (uint32_t k = 0; k < n && !st; k++) {
        if (!fe_has_in(c, k)) continue;
        st = fe_in(c, k, &in[m++]);
    }
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 0));
    return st ? st : fe_emit1(c, IR_OP_CONCAT, in, m, &a, 1, 0, &out);
}

static symc_status h_gather(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t in[2], out;
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 0));
    return st ? st : fe_emit1(c, IR_OP_GATHER, in, 2, &a, 1, 0, &out);
}

static symc_status h_gather_elements(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t in[2], out;
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 0));
    return st ? st : fe_emit1(c, IR_OP_GATHER_ELEMENTS, in, 2, &a, 1, 0, &out);
}

/* Unsqueeze/Squeeze: axes are an input since opset 13 (constant). */
static symc_status axes_of(fe_ctx *c, int64_t *axes, uint32_t *n, int *have) {
    uint32_t t;
    *have = fe_has_in(c, 1);
    *n = 0;
    if (!*have) return SYMC_OK;
    symc_status st = fe_in(c, 1, &t);
    return st ? st : fe_const_ints(c, t, 1, "the axes", axes, IR_MAX_RANK, n);
}

static symc_status h_unsqueeze(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, out, n = 0;
    int64_t axes[IR_MAX_RANK];
    int have;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = axes_of(c, axes, &n, &have);
    ir_attr a = symc_attr_ints("axes", axes, n);
    return st ? st : fe_emit1(c, IR_OP_UNSQUEEZE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_squeeze(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 2);
    uint32_t x, out, n = 0;
    int64_t axes[IR_MAX_RANK];
    int have;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = axes_of(c, axes, &n, &have);
    ir_attr a = symc_attr_ints("axes", axes, n);
    return st ? st : fe_emit1(c, IR_OP_SQUEEZE, &x, 1, &a, n ? 1 : 0, 0, &out);
}

static symc_status h_flatten(fe_ctx *c) {
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", 1));
    return fe_emit_unary_attrs(c, IR_OP_FLATTEN, &a, 1);
}

/* Size: the element count as an i64 scalar. With symbolic dims it is read
 * from the shape of x flattened to [1, numel], so it carries the product as
 * a symbolic value like any Shape result. */
static symc_status h_size(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, f, s, one, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int64_t n = 1, v;
    int known = 1;
    for (int d = 0; d < xt->rank && known; d++) {
        if (!sym_is_const(c->t, xt->dims[d], &v)) known = 0;
        else if (v < 0 || (v && n > INT64_MAX / v))
            return fe_fail(c, SYMC_ERR_OVERFLOW, "the element count of '%s' does not fit in int64", xt->name);
        else n *= v;
    }
    if (known) return fe_const(c, SYMC_I64, 0, NULL, &n, 0, &out);
    int64_t sq_axis = 0;
    sym_expr b = sym_const(c->t, 1), e = sym_const(c->t, 2);
    ir_attr fa = symc_attr_int("axis", 0), sa[2] = {symc_attr_dims("starts", &b, 1), symc_attr_dims("ends", &e, 1)};
    ir_attr qa = symc_attr_ints("axes", &sq_axis, 1);
    if ((st = fe_emit1(c, IR_OP_FLATTEN, &x, 1, &fa, 1, -1, &f)) ||
        (st = fe_emit1(c, IR_OP_SHAPE_OF, &f, 1, NULL, 0, -1, &s)) ||
        (st = fe_emit1(c, IR_OP_SLICE, &s, 1, sa, 2, -1, &one)))
        return st;
    return fe_emit1(c, IR_OP_SQUEEZE, &one, 1, &qa, 1, 0, &out);
}

/* DepthToSpace and SpaceToDepth: reshape, transpose, reshape (exact data
 * movement). DepthToSpace DCR reads the channels as [b, b, C/b^2], CRD as
 * [C/b^2, b, b]. */
static symc_status depth_space(fe_ctx *c, int to_space) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, t, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    if (xt->rank != 4)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs 4 (NCHW)", xt->name, (int)xt->rank);
    int64_t bs = fe_attr_i(c, "blocksize", 0);
    if (bs < 1) return fe_fail(c, SYMC_ERR_FORMAT, "blocksize = %" PRId64 " must be >= 1", bs);
    sym_expr N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], B = sym_const(c->t, bs);
    sym_expr m1 = SYM_NONE, d6[6], d4[4]; /* SYM_NONE: reshape's -1 */
    int64_t perm[6];
    if (to_space) {
        const char *mode = fe_attr_s(c, "mode", "DCR");
        int crd = !strcmp(mode, "CRD");
        if (!crd && strcmp(mode, "DCR")) return fe_fail(c, SYMC_ERR_FORMAT, "mode = '%s' (expected DCR or CRD)", mode);
        sym_expr a[6] = {N, B, B, m1, H, W}, b[6] = {N, m1, B, B, H, W};
        static const int64_t pd[6] = {0, 3, 4, 1, 5, 2}, pc[6] = {0, 1, 4, 2, 5, 3};
        memcpy(d6, crd ? b : a, sizeof d6);
        memcpy(perm, crd ? pc : pd, sizeof perm);
        sym_expr o[4] = {N, m1, sym_scale(c->t, H, bs), sym_scale(c->t, W, bs)};
        memcpy(d4, o, sizeof d4);
    } else {
        sym_expr a[6] = {N, C, sym_floordiv(c->t, H, B), B, m1, B};
        static const int64_t p[6] = {0, 3, 5, 1, 2, 4};
        memcpy(d6, a, sizeof d6);
        memcpy(perm, p, sizeof perm);
        sym_expr o[4] = {N, sym_scale(c->t, C, bs * bs), sym_floordiv(c->t, H, B), m1};
        memcpy(d4, o, sizeof d4);
    }
    ir_attr pa = symc_attr_ints("perm", perm, 6);
    if ((st = fe_emit_reshape(c, x, d6, 6, -1, &t)) || (st = fe_emit1(c, IR_OP_TRANSPOSE, &t, 1, &pa, 1, -1, &t)))
        return st;
    return fe_emit_reshape(c, t, d4, 4, 0, &out);
}
static symc_status h_depth_to_space(fe_ctx *c) { return depth_space(c, 1); }
static symc_status h_space_to_depth(fe_ctx *c) { return depth_space(c, 0); }

/* A start/end beyond any dim means "to the edge": clamped against the dim
 * here, so the slice attribute reads as the dim instead of 2^63-1. Exact
 * under ONNX clamping for either step sign. */
static sym_expr clamp_end(fe_ctx *c, sym_expr e, sym_expr dim) {
    int64_t v;
    if (!sym_is_const(c->t, e, &v) || (v < ((int64_t)1 << 40) && v > -((int64_t)1 << 40))) return e;
    return v > 0 ? dim : sym_sub(c->t, sym_const(c->t, -1), dim);
}

static symc_status h_slice(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 3, 5);
    uint32_t x, t, ns, ne, na = 0, nst = 0;
    const sym_expr *sv, *ev;
    int64_t axes[IR_MAX_RANK], steps[IR_MAX_RANK];
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the starts", &sv, &ns);
    if (!st) st = fe_in(c, 2, &t);
    if (!st) st = fe_values(c, t, 2, "the ends", &ev, &ne);
    if (!st && fe_has_in(c, 3) && !(st = fe_in(c, 3, &t)))
        st = fe_const_ints(c, t, 3, "the axes", axes, IR_MAX_RANK, &na);
    if (!st && fe_has_in(c, 4) && !(st = fe_in(c, 4, &t)))
        st = fe_const_ints(c, t, 4, "the steps", steps, IR_MAX_RANK, &nst);
    if (st) return st;
    int32_t r = T(c, x)->rank;
    if (ns != ne || (fe_has_in(c, 3) && na != ns) || (fe_has_in(c, 4) && nst != ns) || ns > IR_MAX_RANK)
        return fe_fail(c, SYMC_ERR_FORMAT, "starts, ends, axes and steps have %u, %u, %u and %u entries", ns, ne,
                       fe_has_in(c, 3) ? na : ns, fe_has_in(c, 4) ? nst : ns);
    sym_expr s[IR_MAX_RANK], e[IR_MAX_RANK];
    for (uint32_t i = 0; i < ns; i++) {
        int32_t ax;
        if ((st = fe_norm_axis_of(c, fe_has_in(c, 3) ? axes[i] : (int64_t)i, r, &ax))) return st;
        sym_expr dim = T(c, x)->dims[ax];
        s[i] = clamp_end(c, sv[i], dim);
        e[i] = clamp_end(c, ev[i], dim);
    }
    ir_attr a[4] = {symc_attr_dims("starts", s, ns), symc_attr_dims("ends", e, ns)};
    uint32_t n_a = 2;
    if (fe_has_in(c, 3)) a[n_a++] = symc_attr_ints("axes", axes, na);
    if (fe_has_in(c, 4)) a[n_a++] = symc_attr_ints("steps", steps, nst);
    return fe_emit1(c, IR_OP_SLICE, &x, 1, a, n_a, 0, &t);
}

static symc_status h_split(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 2);
    uint32_t x, t, n_out = (uint32_t)c->node->n_output, n;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    if (n_out < 1 || n_out > 64) return fe_fail(c, SYMC_ERR_FORMAT, "has %u outputs", n_out);
    int64_t axis = fe_attr_i(c, "axis", 0);
    int32_t r = T(c, x)->rank, ax;
    if ((st = fe_norm_axis_of(c, axis, r, &ax))) return st;
    sym_expr dim = T(c, x)->dims[ax], sizes[64];
    if (fe_has_in(c, 1)) {
        const sym_expr *v;
        if ((st = fe_in(c, 1, &t)) || (st = fe_values(c, t, 1, "the split sizes", &v, &n))) return st;
        if (n != n_out) return fe_fail(c, SYMC_ERR_FORMAT, "%u split sizes for %u outputs", n, n_out);
        memcpy(sizes, v, n * sizeof *v);
    } else {
        int64_t parts = fe_attr_i(c, "num_outputs", n_out);
        if (parts != (int64_t)n_out)
            return fe_fail(c, SYMC_ERR_FORMAT, "num_outputs = %" PRId64 " but the node has %u outputs", parts, n_out);
        if (c->opset >= 18) {
            /* opset 18: chunks of ceil(dim / n), the last one smaller */
            sym_expr chunk = sym_ceildiv(c->t, dim, sym_const(c->t, n_out));
            for (uint32_t k = 0; k + 1 < n_out; k++) sizes[k] = chunk;
            sizes[n_out - 1] = sym_sub(c->t, dim, sym_scale(c->t, chunk, n_out - 1));
        } else {
            for (uint32_t k = 0; k < n_out; k++) sizes[k] = sym_floordiv(c->t, dim, sym_const(c->t, n_out));
        }
    }
    int out_k[64];
    uint32_t outs[64];
    for (uint32_t k = 0; k < n_out; k++) out_k[k] = fe_has_out(c, k) ? (int)k : -1;
    ir_attr a[2] = {symc_attr_int("axis", axis), symc_attr_dims("sizes", sizes, n_out)};
    return fe_emit(c, IR_OP_SPLIT, &x, 1, a, 2, out_k, n_out, outs);
}

static symc_status h_pad(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 4);
    uint32_t x, t, n, na = 0, out;
    const sym_expr *pv;
    int64_t axes[IR_MAX_RANK];
    double value = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the pads", &pv, &n);
    if (!st && fe_has_in(c, 2) && !(st = fe_in(c, 2, &t))) st = fe_const_scalar(c, t, 2, "the constant value", &value);
    if (!st && fe_has_in(c, 3) && !(st = fe_in(c, 3, &t)))
        st = fe_const_ints(c, t, 3, "the axes", axes, IR_MAX_RANK, &na);
    if (st) return st;
    const char *mode = fe_attr_s(c, "mode", "constant");
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "mode '%s' is not supported (constant, reflect, edge, wrap are)", mode);
    int32_t r = T(c, x)->rank;
    if (!fe_has_in(c, 3)) {
        na = (uint32_t)r;
        for (int32_t i = 0; i < r; i++) axes[i] = i;
    }
    if (n != 2 * na) return fe_fail(c, SYMC_ERR_FORMAT, "pads has %u entries for %u axes", n, na);
    sym_expr pads[2 * IR_MAX_RANK];
    for (int32_t i = 0; i < 2 * r; i++) pads[i] = sym_const(c->t, 0);
    for (uint32_t i = 0; i < na; i++) {
        int32_t ax;
        if ((st = fe_norm_axis_of(c, axes[i], r, &ax))) return st;
        pads[ax] = pv[i];
        pads[ax + r] = pv[i + na];
    }
    ir_attr a[3] = {symc_attr_dims("pads", pads, 2 * (uint32_t)r), symc_attr_str("mode", mode),
                    symc_attr_float("value", value)};
    return fe_emit1(c, IR_OP_PAD, &x, 1, a, 3, 0, &out);
}

/* CenterCropPad: one pad node, negative pads cropping. An axis shrinks by d
 * from floor(d / 2) at the start, or grows by d with floor(d / 2) zeros in
 * front (the reference's split); whether it shrinks must be decided at build
 * time. */
static symc_status h_center_crop_pad(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, t, n, out;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the target shape", &v, &n);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    int64_t axes[IR_MAX_RANK];
    const int64_t *av;
    uint32_t na = (uint32_t)r;
    if (fe_attr_ints(c, "axes", &av, &na)) {
        if (na > (uint32_t)r) return fe_fail(c, SYMC_ERR_FORMAT, "axes has %u entries for rank %d", na, (int)r);
        for (uint32_t i = 0; i < na; i++) {
            int32_t ax;
            if ((st = fe_norm_axis_of(c, av[i], r, &ax))) return st;
            axes[i] = ax;
        }
    } else {
        for (int32_t i = 0; i < r; i++) axes[i] = i;
    }
    if (n != na) return fe_fail(c, SYMC_ERR_FORMAT, "the target shape has %u entries for %u axes", n, na);
    sym_expr pads[2 * IR_MAX_RANK], two = sym_const(c->t, 2);
    for (int32_t i = 0; i < 2 * r; i++) pads[i] = sym_const(c->t, 0);
    for (uint32_t i = 0; i < na; i++) {
        sym_expr dim = xt->dims[axes[i]], grow = sym_sub(c->t, v[i], dim);
        sym_tri g = sym_prove_le(c->t, dim, v[i]), s = sym_prove_le(c->t, v[i], dim);
        sym_expr lo;
        if (g == SYM_TRUE) lo = sym_floordiv(c->t, grow, two);
        else if (s == SYM_TRUE) lo = sym_neg(c->t, sym_floordiv(c->t, sym_neg(c->t, grow), two));
        else
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "whether axis %" PRId64 " (%s) is cropped or padded to %s depends on the input size",
                           axes[i], fe_txt(c, dim), fe_txt(c, v[i]));
        pads[axes[i]] = lo;
        pads[axes[i] + r] = sym_sub(c->t, grow, lo);
    }
    ir_attr a[3] = {symc_attr_dims("pads", pads, 2 * (uint32_t)r), symc_attr_str("mode", "constant"),
                    symc_attr_float("value", 0.0)};
    return fe_emit1(c, IR_OP_PAD, &x, 1, a, 3, 0, &out);
}

static symc_status h_tile(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, t, n, out;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_values(c, t, 1, "the repeats", &v, &n);
    if (st) return st;
    ir_attr a = symc_attr_dims("repeats", v, n);
    return fe_emit1(c, IR_OP_TILE, &x, 1, &a, 1, 0, &out);
}

static symc_status h_trilu(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 2);
    uint32_t x, t, out;
    int64_t k = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && fe_has_in(c, 1)) {
        uint32_t n;
        if (!(st = fe_in(c, 1, &t))) st = fe_const_ints(c, t, 1, "the diagonal k", &k, 1, &n);
        if (!st && n != 1) st = fe_fail(c, SYMC_ERR_FORMAT, "k must be a scalar");
    }
    ir_attr a[2] = {symc_attr_int("upper", fe_attr_i(c, "upper", 1)), symc_attr_int("k", k)};
    return st ? st : fe_emit1(c, IR_OP_TRILU, &x, 1, a, 2, 0, &out);
}

/* Range: start, limit and delta are scalars known at build time (constants
 * or symbolic, e.g. a sequence length read from a shape). */
static symc_status h_range(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 3, 3);
    static const char *const role[3] = {"the start", "the limit", "the delta"};
    static const char *const attr_name[3] = {"start", "limit", "delta"};
    sym_expr e[3];
    symc_dtype dt = SYMC_I64;
    for (uint32_t k = 0; k < 3 && !st; k++) {
        uint32_t t, n;
        if ((st = fe_in(c, k, &t))) break;
        if (k == 0) dt = T(c, t)->dtype; /* the output's dtype */
        if (ir_dtype_is_float(T(c, t)->dtype)) {
            double v;
            if ((st = fe_const_scalar(c, t, k, role[k], &v))) break;
            if (v != floor(v) || fabs(v) > 9e15)
                return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s is %g; a float Range needs whole numbers", role[k], v);
            e[k] = sym_const(c->t, (int64_t)v);
        } else {
            const sym_expr *v;
            if ((st = fe_values(c, t, k, role[k], &v, &n))) break;
            if (n != 1) return fe_fail(c, SYMC_ERR_FORMAT, "%s has %u elements, must be a scalar", role[k], n);
            e[k] = v[0];
        }
    }
    if (st) return st;
    ir_attr a[4] = {symc_attr_dims(attr_name[0], &e[0], 1), symc_attr_dims(attr_name[1], &e[1], 1),
                    symc_attr_dims(attr_name[2], &e[2], 1), symc_attr_dtype("to", dt)};
    uint32_t out;
    return fe_emit1(c, IR_OP_RANGE, NULL, 0, a, 4, 0, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_movement[] = {
    {"CenterCropPad", h_center_crop_pad},
    {"Concat", h_concat},
    {"DepthToSpace", h_depth_to_space},
    {"Expand", h_expand},
    {"Flatten", h_flatten},
    {"Gather", h_gather},
    {"GatherElements", h_gather_elements},
    {"Pad", h_pad},
    {"Range", h_range},
    {"Reshape", h_reshape},
    {"Shape", h_shape},
    {"Size", h_size},
    {"Slice", h_slice},
    {"SpaceToDepth", h_space_to_depth},
    {"Split", h_split},
    {"Squeeze", h_squeeze},
    {"Tile", h_tile},
    {"Transpose", h_transpose},
    {"Trilu", h_trilu},
    {"Unsqueeze", h_unsqueeze},
};
const uint32_t fe_onnx_n_ops_movement = sizeof fe_onnx_ops_movement / sizeof fe_onnx_ops_movement[0];
