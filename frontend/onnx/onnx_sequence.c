/* ONNX folding, unpooling, sequences and determinants: Col2Im, MaxUnpool, ReverseSequence,
 * RoiAlign, Det. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- folding, unpooling, sequences, determinants -------------------------------------------------------- */

/* Col2Im (opset 18): image_shape and block_shape must be known at build time. */
static symc_status h_col2im(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 3, 3);
    uint32_t x, ti, tb, out, ni, nb;
    int64_t img[3], blk[3];
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &ti);
    if (!st) st = fe_in(c, 2, &tb);
    if (!st) st = fe_const_ints(c, ti, 1, "image_shape", img, 3, &ni);
    if (!st) st = fe_const_ints(c, tb, 2, "block_shape", blk, 3, &nb);
    if (st) return st;
    if (ni < 1 || nb != ni)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "image_shape (%u entries) and block_shape (%u) must have 1 to 3 entries each", ni, nb);
    ir_attr a[5];
    uint32_t na = 0;
    a[na++] = symc_attr_ints("image_shape", img, ni);
    a[na++] = symc_attr_ints("block_shape", blk, nb);
    static const char *const names[3] = {"strides", "dilations", "pads"};
    for (int k = 0; k < 3; k++) {
        const int64_t *v;
        uint32_t n;
        if (!fe_attr_ints(c, names[k], &v, &n)) continue;
        if (n != (k == 2 ? 2 * ni : ni))
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries for %u spatial dims", names[k], n, ni);
        a[na++] = symc_attr_ints(names[k], v, n);
    }
    return fe_emit1(c, IR_OP_COL2IM, &x, 1, a, na, 0, &out);
}

/* MaxUnpool (opsets 11-22) as the ONNX reference computes it: a scatter of
 * X's values at their flat indices I into zeros of the unpooled shape
 * ((in - 1) * stride - pads + kernel), reshaped, then zero-padded at the end
 * up to output_shape (known at build time) when given. */
static symc_status h_max_unpool(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t x, ix, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &ix);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank, nsp = r - 2;
    const int64_t *ks, *v;
    uint32_t nk, n;
    if (nsp < 1 || nsp > 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' has rank %d; 3 to 5 are supported", xt->name, (int)r);
    if (!fe_attr_ints(c, "kernel_shape", &ks, &nk) || nk != (uint32_t)nsp)
        return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape must have %d entries", (int)nsp);
    int64_t strides[3] = {1, 1, 1}, pads[6] = {0, 0, 0, 0, 0, 0};
    if (fe_attr_ints(c, "strides", &v, &n)) {
        if (n != (uint32_t)nsp) return fe_fail(c, SYMC_ERR_FORMAT, "strides must have %d entries", (int)nsp);
        memcpy(strides, v, n * sizeof *v);
    }
    if (fe_attr_ints(c, "pads", &v, &n)) {
        if (n != 2u * (uint32_t)nsp) return fe_fail(c, SYMC_ERR_FORMAT, "pads must have %d entries", 2 * (int)nsp);
        memcpy(pads, v, n * sizeof *v);
    }
    sym_expr od[5], want[5];
    int64_t os[5];
    od[0] = xt->dims[0], od[1] = xt->dims[1];
    for (int32_t i = 0; i < nsp; i++)
        od[2 + i] = sym_add_const(c->t, sym_scale(c->t, sym_add_const(c->t, T(c, x)->dims[2 + i], -1), strides[i]),
                                  ks[i] - pads[i] - pads[nsp + i]);
    int pad_out = fe_has_in(c, 2);
    if (pad_out) { /* the inferred shape, zero-padded at the end up to output_shape */
        uint32_t ts, ns;
        if ((st = fe_in(c, 2, &ts)) || (st = fe_const_ints(c, ts, 2, "output_shape", os, 5, &ns))) return st;
        if (ns != (uint32_t)r)
            return fe_fail(c, SYMC_ERR_FORMAT, "output_shape has %u entries for rank %d", ns, (int)r);
        for (int32_t i = 0; i < r; i++) {
            int64_t have;
            want[i] = i < 2 ? od[i] : sym_sub(c->t, sym_const(c->t, os[i]), od[i]);
            if (i >= 2 && (!sym_is_const(c->t, want[i], &have) || have < 0))
                return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                               "output_shape dim %d = %" PRId64 " is smaller than the unpooled size %s, or that size "
                               "is symbolic",
                               (int)i, os[i], fe_txt(c, od[i]));
        }
    }
    /* zeros [numel(out)], indices [numel(x), 1], values [numel(x)] */
    sym_expr total = od[0];
    for (int32_t i = 1; i < r; i++) total = sym_mul(c->t, total, od[i]);
    sym_expr xn = xt->dims[0];
    for (int32_t i = 1; i < r; i++) xn = sym_mul(c->t, xn, T(c, x)->dims[i]);
    sym_expr in2[2] = {xn, sym_const(c->t, 1)};
    uint32_t z, xi, xv, sc;
    ir_attr za = symc_attr_dims("shape", &total, 1), ra = symc_attr_str("reduction", "none");
    if ((st = fe_emit_scalar(c, xt->dtype, 0.0, &z)) || (st = fe_emit1(c, IR_OP_EXPAND, &z, 1, &za, 1, -1, &z)) ||
        (st = fe_emit_reshape(c, ix, in2, 2, -1, &xi)) || (st = fe_emit_reshape(c, x, &xn, 1, -1, &xv)))
        return st;
    uint32_t sin[3] = {z, xi, xv};
    if ((st = fe_emit1(c, IR_OP_SCATTER_ND, sin, 3, &ra, 1, -1, &sc))) return st;
    if (!pad_out) return fe_emit_reshape(c, sc, od, (uint32_t)r, 0, &out);
    sym_expr pd[10];
    for (int32_t i = 0; i < r; i++) pd[i] = sym_const(c->t, 0), pd[r + i] = i < 2 ? sym_const(c->t, 0) : want[i];
    ir_attr pa[2] = {symc_attr_dims("pads", pd, 2 * (uint32_t)r), symc_attr_str("mode", "constant")};
    if ((st = fe_emit_reshape(c, sc, od, (uint32_t)r, -1, &sc))) return st;
    return fe_emit1(c, IR_OP_PAD, &sc, 1, pa, 2, 0, &out);
}

/* ReverseSequence (opset 10) as gather_elements along the time axis with
 * constant indices (t < len[b] ? len[b] - 1 - t : t) expanded over the other
 * dims: sequence_lens and the time and batch dims must be known at build
 * time. */
static symc_status h_reverse_sequence(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, tl, out, nl;
    int64_t lens[1024];
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &tl);
    if (!st) st = fe_const_ints(c, tl, 1, "sequence_lens", lens, 1024, &nl);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    int64_t ta = fe_attr_i(c, "time_axis", 0), ba = fe_attr_i(c, "batch_axis", 1), tn, bn;
    if (r < 2 || !((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        return fe_fail(c, SYMC_ERR_FORMAT,
                       "time_axis %" PRId64 " and batch_axis %" PRId64 " must be 0 and 1 of a rank >= 2 input", ta, ba);
    if (!sym_is_const(c->t, xt->dims[ta], &tn) || !sym_is_const(c->t, xt->dims[ba], &bn) || bn != (int64_t)nl)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "the time (%s) and batch (%s) dims of '%s' must be constant, the batch equal to the %u "
                       "sequence_lens",
                       fe_txt(c, xt->dims[ta]), fe_txt(c, xt->dims[ba]), xt->name, nl);
    if (tn * bn > ((int64_t)1 << 24)) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the sequences are too long");
    int64_t *idx = malloc((size_t)(tn * bn > 0 ? tn * bn : 1) * sizeof *idx);
    if (!idx) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t b = 0; b < bn && !st; b++) {
        if (lens[b] < 0 || lens[b] > tn)
            st = fe_fail(c, SYMC_ERR_FORMAT, "sequence_lens[%" PRId64 "] = %" PRId64 " is outside [0, %" PRId64 "]", b,
                         lens[b], tn);
        for (int64_t t = 0; t < tn; t++) {
            int64_t v = t < lens[b] ? lens[b] - 1 - t : t;
            idx[ta == 0 ? t * bn + b : b * tn + t] = v;
        }
    }
    int64_t idims[IR_MAX_RANK];
    for (int32_t i = 0; i < r; i++) idims[i] = 1;
    idims[0] = ta == 0 ? tn : bn, idims[1] = ta == 0 ? bn : tn;
    uint32_t ic;
    if (!st) st = fe_const(c, SYMC_I64, r, idims, idx, -1, &ic);
    free(idx);
    if (st) return st;
    sym_expr full[IR_MAX_RANK];
    memcpy(full, T(c, x)->dims, (size_t)r * sizeof *full);
    ir_attr ea = symc_attr_dims("shape", full, (uint32_t)r), ga = symc_attr_int("axis", ta);
    if ((st = fe_emit1(c, IR_OP_EXPAND, &ic, 1, &ea, 1, -1, &ic))) return st;
    uint32_t gin[2] = {x, ic};
    return fe_emit1(c, IR_OP_GATHER_ELEMENTS, gin, 2, &ga, 1, 0, &out);
}

static symc_status h_det(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && !ir_dtype_is_float(T(c, x)->dtype))
        st = fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' must be a float tensor", T(c, x)->name);
    return st ? st : fe_emit1(c, IR_OP_DET, &x, 1, NULL, 0, 0, &out);
}

/* RoiAlign (opsets 16-22; older models convert up to 16's attributes):
 * the IR op roi_align. */
static symc_status h_roi_align(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 3, 3);
    uint32_t in[3], out;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const char *mode = fe_attr_s(c, "mode", "avg");
    const char *coord = fe_attr_s(c, "coordinate_transformation_mode",
                                  c->opset >= 16 ? "half_pixel" : "output_half_pixel");
    if (strcmp(mode, "avg") && strcmp(mode, "max"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'mode' = '%s' is not supported (avg and max are)", mode);
    int hp = !strcmp(coord, "half_pixel");
    if (!hp && strcmp(coord, "output_half_pixel"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'coordinate_transformation_mode' = '%s' is not supported (half_pixel and "
                       "output_half_pixel are)",
                       coord);
    int64_t oh = fe_attr_i(c, "output_height", 1), ow = fe_attr_i(c, "output_width", 1),
            sr = fe_attr_i(c, "sampling_ratio", 0);
    if (oh < 1 || ow < 1 || sr < 0)
        return fe_fail(c, SYMC_ERR_FORMAT,
                       "output_height %" PRId64 ", output_width %" PRId64 " must be >= 1 and "
                       "sampling_ratio %" PRId64 " >= 0",
                       oh, ow, sr);
    if (!ir_dtype_is_float(T(c, in[0])->dtype) || !ir_dtype_is_float(T(c, in[1])->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "X and rois must be float tensors");
    ir_attr a[6] = {symc_attr_int("output_height", oh),
                    symc_attr_int("output_width", ow),
                    symc_attr_str("mode", mode),
                    symc_attr_int("sampling_ratio", sr),
                    symc_attr_float("spatial_scale", fe_attr_f(c, "spatial_scale", 1.0)),
                    symc_attr_int("half_pixel", hp)};
    return fe_emit1(c, IR_OP_ROI_ALIGN, in, 3, a, 6, 0, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_sequence[] = {
    {"Col2Im", h_col2im},      {"Det", h_det}, {"MaxUnpool", h_max_unpool}, {"ReverseSequence", h_reverse_sequence},
    {"RoiAlign", h_roi_align},
};
const uint32_t fe_onnx_n_ops_sequence = sizeof fe_onnx_ops_sequence / sizeof fe_onnx_ops_sequence[0];
