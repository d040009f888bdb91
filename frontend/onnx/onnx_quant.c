/* ONNX quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear (its function body),
 * QLinearMatMul, QLinearConv, MatMulInteger, ConvInteger, decomposed into existing ops on exact
 * values (the integer accumulation in int32 or double, round half to even, clip, cast). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- quantization -------------------------------------------------------------------------------------- */

/* Quantized integers are exact in double, so every quantized op is
 * decomposed into existing ops on exact values: the integer parts (zero
 * points subtracted, the matmul or conv accumulation) in int32 or double,
 * the float parts in the dtypes the ONNX reference computes them in, and
 * round-half-to-even, clip and a cast at the end. FLOAT8 and 4-bit types
 * are not symc dtypes and are refused when the model is read. */

static int quant_range(symc_dtype dt, double *lo, double *hi) {
    switch (dt) {
    case SYMC_U8: *lo = 0, *hi = 255; return 1;
    case SYMC_I8: *lo = -128, *hi = 127; return 1;
    case SYMC_U16: *lo = 0, *hi = 65535; return 1;
    case SYMC_I16: *lo = -32768, *hi = 32767; return 1;
    default: return 0;
    }
}

/* A scale or zero point p made to broadcast against x (rank r, dims xd):
 * one element: a scalar; per axis: [C] viewed as [1, .., C, .., 1]; blocked
 * (block > 0): each element repeated `block` times along axis (the last block
 * may be cut short), so p has x's shape. */
static symc_status quant_view(fe_ctx *c, uint32_t p, int32_t r, const sym_expr *xd, int32_t axis, int64_t block,
                              uint32_t *out) {
    const ir_tensor *pt = T(c, p);
    int32_t pr = pt->rank;
    sym_expr pd[IR_MAX_RANK], one = sym_const(c->t, 1);
    memcpy(pd, pt->dims, (size_t)pr * sizeof pd[0]);
    if (fe_small_numel(c, p) == 1 && block == 0) return fe_emit_reshape(c, p, NULL, 0, -1, out);
    if (axis < 0)
        return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'axis' = %" PRId64 " is out of range for the input's rank %d",
                       fe_attr_i(c, "axis", 1), (int)r);
    if (block == 0) {
        if (pr != 1)
            return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has rank %d; a per-axis scale or zero point has rank 1", pt->name,
                           (int)pr);
        if (sym_prove_eq(c->t, pd[0], xd[axis]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has %s elements for axis %d of size %s", pt->name,
                           fe_txt(c, pd[0]), (int)axis, fe_txt(c, xd[axis]));
        sym_expr d[IR_MAX_RANK];
        for (int32_t i = 0; i < r; i++) d[i] = i == axis ? pd[0] : one;
        return fe_emit_reshape(c, p, d, (uint32_t)r, -1, out);
    }
    if (pr != r)
        return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has rank %d; a blocked scale or zero point has the input's rank %d",
                       pt->name, (int)pr, (int)r);
    for (int32_t i = 0; i < r; i++)
        if (i != axis && sym_prove_eq(c->t, pd[i], xd[i]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_FORMAT, "'%s' dim %d is %s, the input's is %s", pt->name, (int)i,
                           fe_txt(c, pd[i]), fe_txt(c, xd[i]));
    sym_expr want = sym_ceildiv(c->t, xd[axis], sym_const(c->t, block));
    if (sym_prove_eq(c->t, pd[axis], want) != SYM_TRUE)
        return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has %s blocks along axis %d; ceil(%s / %" PRId64 ") are needed",
                       pt->name, fe_txt(c, pd[axis]), (int)axis, fe_txt(c, xd[axis]), block);
    if (r + 1 > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "blocked quantization of rank %d", (int)r);
    int64_t ax = axis + 1;
    ir_attr un = symc_attr_ints("axes", &ax, 1);
    sym_expr ed[IR_MAX_RANK], md[IR_MAX_RANK];
    for (int32_t i = 0, k = 0; i < r; i++) {
        ed[k++] = pd[i];
        if (i == axis) ed[k++] = sym_const(c->t, block);
        md[i] = i == axis ? sym_scale(c->t, pd[i], block) : pd[i];
    }
    ir_attr ex = symc_attr_dims("shape", ed, (uint32_t)r + 1);
    symc_status st;
    if ((st = fe_emit1(c, IR_OP_UNSQUEEZE, &p, 1, &un, 1, -1, out)) ||
        (st = fe_emit1(c, IR_OP_EXPAND, out, 1, &ex, 1, -1, out)) ||
        (st = fe_emit_reshape(c, *out, md, (uint32_t)r, -1, out)))
        return st;
    if (sym_prove_eq(c->t, md[axis], xd[axis]) == SYM_TRUE) return SYMC_OK;
    sym_expr s0 = sym_const(c->t, 0);
    int64_t axv = axis;
    ir_attr sl[3] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &xd[axis], 1),
                     symc_attr_ints("axes", &axv, 1)};
    return fe_emit1(c, IR_OP_SLICE, out, 1, sl, 3, -1, out);
}

/* axis and block_size of a (De)QuantizeLinear node against x's rank. */
static symc_status quant_axis(fe_ctx *c, int32_t r, int32_t *axis, int64_t *block) {
    *block = fe_attr_i(c, "block_size", 0);
    if (*block < 0) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'block_size' = %" PRId64 " is negative", *block);
    int64_t a = fe_attr_i(c, "axis", 1);
    /* only a per-axis or blocked scale reads it: checked there */
    int64_t v;
    *axis = ir_axis_norm(a, r, &v) ? (int32_t)v : -1;
    return SYMC_OK;
}

/* x quantized with scale s (already viewed) and zero point z (viewed, or
 * IR_NONE): saturate(round_half_even(x / s) + z) as dtype qt; the division in
 * x's dtype as the reference does, the rest in double (exact). */
static symc_status quantize(fe_ctx *c, uint32_t x, uint32_t s, uint32_t z, symc_dtype qt, int out_k, uint32_t *out) {
    double lo, hi;
    if (!quant_range(qt, &lo, &hi))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "quantizing to %s is not supported (uint8, int8, uint16, int16 are)",
                       symc_dtype_name(qt));
    uint32_t q;
    symc_status st;
    if ((st = fe_emit_bin(c, IR_OP_DIV, x, s, -1, &q)) || (st = fe_emit_un(c, IR_OP_ROUND, q, -1, &q)) ||
        (st = fe_emit_cast(c, q, SYMC_F64, -1, &q)))
        return st;
    if (z != IR_NONE) {
        uint32_t z64;
        if ((st = fe_emit_cast(c, z, SYMC_F64, -1, &z64)) || (st = fe_emit_bin(c, IR_OP_ADD, q, z64, -1, &q)))
            return st;
    }
    ir_attr cl[2] = {symc_attr_float("min", lo), symc_attr_float("max", hi)};
    if ((st = fe_emit1(c, IR_OP_CLIP, &q, 1, cl, 2, -1, &q))) return st;
    return fe_emit_cast(c, q, qt, out_k, out);
}

static symc_status need_float_in(fe_ctx *c, uint32_t t, const char *role) {
    if (!ir_dtype_is_float(T(c, t)->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s '%s' is %s; only float types are supported", role, T(c, t)->name,
                       symc_dtype_name(T(c, t)->dtype));
    return SYMC_OK;
}

static symc_status h_quantize_linear(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t x, s, z = IR_NONE, sv, zv = IR_NONE, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &z);
    if (!st) st = need_float_in(c, x, "input");
    if (st) return st;
    if (T(c, s)->dtype != T(c, x)->dtype)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scale '%s' is %s and input '%s' %s; they must have one type",
                       T(c, s)->name, symc_dtype_name(T(c, s)->dtype), T(c, x)->name, symc_dtype_name(T(c, x)->dtype));
    symc_dtype qt = SYMC_U8;
    const Onnx__AttributeProto *od = fe_attr_of(c, "output_dtype", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (od && od->i != 0 && !fe_dtype((int32_t)od->i, &qt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'output_dtype' = %" PRId64 " (%s) is not supported", od->i,
                       fe_onnx_type_name((int32_t)od->i));
    if (z != IR_NONE) {
        if (od && od->i != 0 && T(c, z)->dtype != qt)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'output_dtype' is %s but zero point '%s' is %s",
                           symc_dtype_name(qt), T(c, z)->name, symc_dtype_name(T(c, z)->dtype));
        qt = T(c, z)->dtype;
    }
    int32_t r = T(c, x)->rank, axis = -1;
    int64_t block = 0;
    sym_expr xd[IR_MAX_RANK];
    memcpy(xd, T(c, x)->dims, (size_t)r * sizeof xd[0]);
    if ((st = quant_axis(c, r, &axis, &block)) || (st = quant_view(c, s, r, xd, axis, block, &sv))) return st;
    if (z != IR_NONE && (st = quant_view(c, z, r, xd, axis, block, &zv))) return st;
    return quantize(c, x, sv, zv, qt, 0, &out);
}

/* DequantizeLinear: (x - zero_point) * scale, in float32 as the reference
 * (float64 for int32 inputs, after their conversion to float32), then the
 * scale's dtype. */
static symc_status h_dequantize_linear(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t x, s, z = IR_NONE, sv, zv, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &s);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &z);
    if (!st) st = need_float_in(c, s, "scale");
    if (st) return st;
    symc_dtype xt = T(c, x)->dtype, sd = T(c, s)->dtype;
    double lo, hi;
    if (!quant_range(xt, &lo, &hi) && xt != SYMC_I32)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input '%s' is %s; dequantizing uint8, int8, uint16, int16 and int32 is supported",
                       T(c, x)->name, symc_dtype_name(xt));
    if (z != IR_NONE && T(c, z)->dtype != xt)
        return fe_fail(c, SYMC_ERR_FORMAT, "zero point '%s' is %s, input '%s' %s", T(c, z)->name,
                       symc_dtype_name(T(c, z)->dtype), T(c, x)->name, symc_dtype_name(xt));
    int32_t r = T(c, x)->rank, axis = -1;
    int64_t block = 0;
    sym_expr xd[IR_MAX_RANK];
    memcpy(xd, T(c, x)->dims, (size_t)r * sizeof xd[0]);
    if ((st = quant_axis(c, r, &axis, &block)) || (st = quant_view(c, s, r, xd, axis, block, &sv))) return st;
    symc_dtype wd = xt == SYMC_I32 ? SYMC_F64 : SYMC_F32;
    uint32_t d;
    if ((st = fe_emit_cast(c, x, SYMC_F32, -1, &d)) || (st = fe_emit_cast(c, d, wd, -1, &d))) return st;
    if (z != IR_NONE) {
        if ((st = quant_view(c, z, r, xd, axis, block, &zv)) || (st = fe_emit_cast(c, zv, wd, -1, &zv)) ||
            (st = fe_emit_bin(c, IR_OP_SUB, d, zv, -1, &d)))
            return st;
    }
    if ((st = fe_emit_cast(c, sv, wd, -1, &sv)) || (st = fe_emit_bin(c, IR_OP_MUL, d, sv, -1, &d))) return st;
    return fe_emit_cast(c, d, sd, 0, &out);
}

/* DynamicQuantizeLinear as its ONNX function body: scale = (max(x, 0) -
 * min(x, 0)) / 255, zero point = saturate(round(-min / scale)), then
 * QuantizeLinear to uint8. */
static symc_status h_dynamic_quantize_linear(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, mn, mx, zero, q255, rng, sc, t, zp, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && T(c, x)->dtype != SYMC_F32)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' is %s; DynamicQuantizeLinear takes float", T(c, x)->name,
                       symc_dtype_name(T(c, x)->dtype));
    if (st) return st;
    ir_attr keep0 = symc_attr_int("keepdims", 0), cl[2] = {symc_attr_float("min", 0), symc_attr_float("max", 255)};
    if ((st = fe_emit_scalar(c, SYMC_F32, 0, &zero)) || (st = fe_emit_scalar(c, SYMC_F32, 255, &q255)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MIN, &x, 1, &keep0, 1, -1, &mn)) ||
        (st = fe_emit_bin(c, IR_OP_MIN, mn, zero, -1, &mn)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MAX, &x, 1, &keep0, 1, -1, &mx)) ||
        (st = fe_emit_bin(c, IR_OP_MAX, mx, zero, -1, &mx)) || (st = fe_emit_bin(c, IR_OP_SUB, mx, mn, -1, &rng)) ||
        (st = fe_emit_bin(c, IR_OP_DIV, rng, q255, fe_has_out(c, 1) ? 1 : -1, &sc)) ||
        (st = fe_emit_bin(c, IR_OP_DIV, mn, sc, -1, &t)) || (st = fe_emit_bin(c, IR_OP_SUB, zero, t, -1, &t)) ||
        (st = fe_emit1(c, IR_OP_CLIP, &t, 1, cl, 2, -1, &t)) || (st = fe_emit_un(c, IR_OP_ROUND, t, -1, &t)) ||
        (st = fe_emit_cast(c, t, SYMC_U8, fe_has_out(c, 2) ? 2 : -1, &zp)))
        return st;
    return quantize(c, x, sc, zp, SYMC_U8, 0, &out);
}

/* x - zero_point as an exact integer tensor of dtype wd; a per-row (A of
 * MatMulInteger: [M]) or per-output-channel (a conv weight: [M]) zero point
 * is viewed along dim `axis` of x's rank. */
static symc_status minus_zero_point(fe_ctx *c, uint32_t x, uint32_t k, int32_t axis, symc_dtype wd, uint32_t *out) {
    symc_status st = fe_emit_cast(c, x, wd, -1, out);
    if (st || !fe_has_in(c, k)) return st;
    uint32_t z;
    if ((st = fe_in(c, k, &z))) return st;
    if (T(c, z)->dtype != T(c, x)->dtype)
        return fe_fail(c, SYMC_ERR_FORMAT, "zero point '%s' is %s, its input '%s' %s", T(c, z)->name,
                       symc_dtype_name(T(c, z)->dtype), T(c, x)->name, symc_dtype_name(T(c, x)->dtype));
    int64_t n = fe_small_numel(c, z);
    if (n != 1) {
        int32_t r = T(c, x)->rank;
        if (T(c, z)->rank != 1 || axis < 0 || axis >= r ||
            sym_prove_eq(c->t, T(c, z)->dims[0], T(c, x)->dims[axis]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "zero point '%s' must be a scalar or have one element per %s (dim %d of '%s')",
                           T(c, z)->name, axis == 0 ? "output channel" : "row", (int)axis, T(c, x)->name);
        sym_expr d[IR_MAX_RANK], one = sym_const(c->t, 1);
        for (int32_t i = 0; i < r; i++) d[i] = i == axis ? T(c, z)->dims[0] : one;
        if ((st = fe_emit_reshape(c, z, d, (uint32_t)r, -1, &z))) return st;
    } else if ((st = fe_emit_reshape(c, z, NULL, 0, -1, &z))) {
        return st;
    }
    if ((st = fe_emit_cast(c, z, wd, -1, &z))) return st;
    return fe_emit_bin(c, IR_OP_SUB, *out, z, -1, out);
}

static symc_status need_8bit(fe_ctx *c, uint32_t t) {
    symc_dtype d = T(c, t)->dtype;
    if (d != SYMC_U8 && d != SYMC_I8)
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' is %s; it must be uint8 or int8", T(c, t)->name,
                       symc_dtype_name(d));
    return SYMC_OK;
}

/* MatMulInteger: (A - a_zero_point) @ (B - b_zero_point) in int32. */
static symc_status h_matmul_integer(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 4);
    uint32_t a, b, out;
    if (!st) st = fe_in(c, 0, &a);
    if (!st) st = fe_in(c, 1, &b);
    if (!st) st = need_8bit(c, a);
    if (!st) st = need_8bit(c, b);
    if (st) return st;
    int32_t ra = T(c, a)->rank, rb = T(c, b)->rank;
    if ((st = minus_zero_point(c, a, 2, ra >= 2 ? ra - 2 : -1, SYMC_I32, &a)) ||
        (st = minus_zero_point(c, b, 3, rb - 1, SYMC_I32, &b)))
        return st;
    return fe_emit_bin(c, IR_OP_MATMUL, a, b, 0, &out);
}

/* (x - x_zero_point) conv (w - w_zero_point) computed exactly in double
 * (products of 8-bit values summed far below 2^53), bias added. */
static symc_status conv_integer_acc(fe_ctx *c, uint32_t x, uint32_t xz_k, uint32_t w, uint32_t wz_k, int have_b,
                                    uint32_t b, uint32_t *acc) {
    symc_status st;
    uint32_t in[3];
    if ((st = need_8bit(c, x)) || (st = need_8bit(c, w)) || (st = minus_zero_point(c, x, xz_k, -1, SYMC_F64, &in[0])) ||
        (st = minus_zero_point(c, w, wz_k, 0, SYMC_F64, &in[1])))
        return st;
    if (have_b) {
        if (T(c, b)->dtype != SYMC_I32)
            return fe_fail(c, SYMC_ERR_FORMAT, "bias '%s' is %s; it must be int32", T(c, b)->name,
                           symc_dtype_name(T(c, b)->dtype));
        if ((st = fe_emit_cast(c, b, SYMC_F64, -1, &in[2]))) return st;
    }
    return fe_conv_of(c, in, have_b ? 3 : 2, -1, acc);
}

static symc_status h_conv_integer(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 4);
    uint32_t x, w, acc, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &w);
    if (!st) st = conv_integer_acc(c, x, 2, w, 3, 0, 0, &acc);
    return st ? st : fe_emit_cast(c, acc, SYMC_I32, 0, &out);
}

/* The requantization of QLinearMatMul and QLinearConv: the integer
 * accumulator times (a_scale * b_scale / y_scale), that factor computed in
 * the scales' dtype, the product in double as the reference's int32 * float
 * promotes; plus y_zero_point, round half to even, saturate. The scale of b
 * may be per output channel (a conv weight's, viewed [1, M, 1, 1]). */
static symc_status requantize(fe_ctx *c, uint32_t acc, uint32_t as, uint32_t bs, int per_channel, uint32_t ys,
                              uint32_t yz, int32_t r) {
    symc_status st;
    symc_dtype sd = T(c, as)->dtype;
    if ((st = need_float_in(c, as, "scale")) || (st = need_float_in(c, bs, "scale")) ||
        (st = need_float_in(c, ys, "scale")))
        return st;
    if (T(c, bs)->dtype != sd || T(c, ys)->dtype != sd)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the scales '%s', '%s', '%s' must have one type", T(c, as)->name,
                       T(c, bs)->name, T(c, ys)->name);
    uint32_t f, y, out;
    if (fe_small_numel(c, as) != 1 || fe_small_numel(c, ys) != 1 || fe_small_numel(c, yz) != 1)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "only per-tensor scales and zero points are supported for '%s', "
                       "'%s' and '%s'",
                       T(c, as)->name, T(c, ys)->name, T(c, yz)->name);
    if ((st = fe_emit_reshape(c, as, NULL, 0, -1, &as)) || (st = fe_emit_reshape(c, ys, NULL, 0, -1, &ys))) return st;
    if (fe_small_numel(c, bs) == 1) {
        if ((st = fe_emit_reshape(c, bs, NULL, 0, -1, &bs))) return st;
    } else if (per_channel && T(c, bs)->rank == 1) {
        sym_expr d[4] = {sym_const(c->t, 1), T(c, bs)->dims[0], sym_const(c->t, 1), sym_const(c->t, 1)};
        if ((st = fe_emit_reshape(c, bs, d, (uint32_t)r, -1, &bs))) return st;
    } else {
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scale '%s' must be per tensor%s", T(c, bs)->name,
                       per_channel ? " or per output channel" : "");
    }
    double lo, hi;
    symc_dtype qt = T(c, yz)->dtype;
    if (!quant_range(qt, &lo, &hi) || (qt != SYMC_U8 && qt != SYMC_I8))
        return fe_fail(c, SYMC_ERR_FORMAT, "output zero point '%s' is %s; it must be uint8 or int8", T(c, yz)->name,
                       symc_dtype_name(qt));
    uint32_t z64;
    ir_attr cl[2] = {symc_attr_float("min", lo), symc_attr_float("max", hi)};
    if ((st = fe_emit_bin(c, IR_OP_MUL, as, bs, -1, &f)) || (st = fe_emit_bin(c, IR_OP_DIV, f, ys, -1, &f)) ||
        (st = fe_emit_cast(c, f, SYMC_F64, -1, &f)) || (st = fe_emit_cast(c, acc, SYMC_F64, -1, &y)) ||
        (st = fe_emit_bin(c, IR_OP_MUL, y, f, -1, &y)) || (st = fe_emit_reshape(c, yz, NULL, 0, -1, &yz)) ||
        (st = fe_emit_cast(c, yz, SYMC_F64, -1, &z64)) || (st = fe_emit_bin(c, IR_OP_ADD, y, z64, -1, &y)) ||
        (st = fe_emit_un(c, IR_OP_ROUND, y, -1, &y)) || (st = fe_emit1(c, IR_OP_CLIP, &y, 1, cl, 2, -1, &y)))
        return st;
    return fe_emit_cast(c, y, qt, 0, &out);
}

/* QLinearMatMul: inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point,
 * y_scale, y_zero_point; the accumulation as MatMulInteger's. */
static symc_status h_qlinear_matmul(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 8, 8);
    uint32_t a, b, in[8], acc;
    for (uint32_t k = 0; k < 8 && !st; k++) st = fe_in(c, k, &in[k]);
    if (!st) st = need_8bit(c, in[0]);
    if (!st) st = need_8bit(c, in[3]);
    if (st) return st;
    if (fe_small_numel(c, in[2]) != 1 || fe_small_numel(c, in[5]) != 1)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "only per-tensor zero points are supported for a and b");
    if ((st = minus_zero_point(c, in[0], 2, -1, SYMC_I32, &a)) ||
        (st = minus_zero_point(c, in[3], 5, -1, SYMC_I32, &b)) || (st = fe_emit_bin(c, IR_OP_MATMUL, a, b, -1, &acc)))
        return st;
    return requantize(c, acc, in[1], in[4], 0, in[6], in[7], 0);
}

/* QLinearConv: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 * y_scale, y_zero_point, optional int32 bias; the Conv attributes. */
static symc_status h_qlinear_conv(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 8, 9);
    uint32_t in[9], acc;
    for (uint32_t k = 0; k < 8 && !st; k++) st = fe_in(c, k, &in[k]);
    if (!st && fe_has_in(c, 8)) st = fe_in(c, 8, &in[8]);
    if (!st) st = conv_integer_acc(c, in[0], 2, in[3], 5, fe_has_in(c, 8), in[8], &acc);
    if (st) return st;
    return requantize(c, acc, in[1], in[4], 1, in[6], in[7], T(c, acc)->rank);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_quant[] = {
    {"ConvInteger", h_conv_integer},
    {"DequantizeLinear", h_dequantize_linear},
    {"DynamicQuantizeLinear", h_dynamic_quantize_linear},
    {"MatMulInteger", h_matmul_integer},
    {"QLinearConv", h_qlinear_conv},
    {"QLinearMatMul", h_qlinear_matmul},
    {"QuantizeLinear", h_quantize_linear},
};
const uint32_t fe_onnx_n_ops_quant = sizeof fe_onnx_ops_quant / sizeof fe_onnx_ops_quant[0];
