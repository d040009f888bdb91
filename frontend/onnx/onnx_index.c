/* ONNX ops over indices and positions: ArgMax / ArgMin, Hardmax, LpNormalization, GatherND,
 * ScatterElements, ScatterND, OneHot, CumSum, TopK, EyeLike; an axis is made non-negative against
 * the input's rank and refused outside it.
 *
 * And the ops whose output size depends on the data (docs/PLAN-data-dependent.md §6): each becomes
 * one IR op that produces a size (nonzero, unique, nms: the shape rule declares the unbacked symbol
 * and its bound) plus existing ops around it. Compress is no op of its own: gather(x, the nonzero
 * positions of its condition, axis), the condition cut to the axis length first and x flattened
 * without an axis; Unique's values are gather(x, indices, axis) likewise. NonMaxSuppression's
 * optional inputs stay tensors read at run time (the conformance models feed them as graph inputs);
 * one left out before a given one becomes its default as a constant (0 boxes, IoU threshold 0). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- indices and positions ---------------------------------------------------------------------- */

static symc_status arg_reduce(fe_ctx *c, ir_op op) {
    ir_attr a[3] = {symc_attr_int("axis", fe_attr_i(c, "axis", 0)),
                    symc_attr_int("keepdims", fe_attr_i(c, "keepdims", 1) != 0),
                    symc_attr_int("select_last_index", fe_attr_i(c, "select_last_index", 0) != 0)};
    return fe_emit_unary_attrs(c, op, a, 3);
}
static symc_status h_argmax(fe_ctx *c) { return arg_reduce(c, IR_OP_ARGMAX); }
static symc_status h_argmin(fe_ctx *c) { return arg_reduce(c, IR_OP_ARGMIN); }

/* TopK: the core op gives the indices; the values are gathered with them.
 * The output is always sorted, which sorted=0 (any order) allows too. A k
 * known only at run time (a graph input, or computed from one) is read by an
 * item node as a size bounded by the axis dim: memory is planned for the
 * whole axis, the real k sizes every later shape, and a k above the dim or
 * below 0 is an error at run time. */
static symc_status h_topk(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, idx, vals, kt;
    sym_expr k;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &kt);
    if (st) return st;
    int64_t axis = fe_attr_i(c, "axis", -1);
    const ir_tensor *ktt = T(c, kt);
    if (ir_dtype_is_float(ktt->dtype) || ktt->value) {
        if ((st = fe_scalar_value(c, 1, "k", &k))) return st;
    } else {
        int32_t ax = 0;
        if ((st = fe_norm_axis_of(c, axis, T(c, x)->rank, &ax))) return st;
        sym_expr bound = T(c, x)->dims[ax];
        uint32_t u;
        ir_attr b = symc_attr_dims("bound", &bound, 1);
        if ((st = fe_emit1(c, IR_OP_ITEM, &kt, 1, &b, 1, -1, &u))) return st;
        k = T(c, u)->dims[0];
    }
    if (sym_range_of(c->t, k).lo < 0) return fe_fail(c, SYMC_ERR_FORMAT, "k = %s may be negative", fe_txt(c, k));
    ir_attr a[3] = {symc_attr_dims("k", &k, 1), symc_attr_int("axis", axis),
                    symc_attr_int("largest", fe_attr_i(c, "largest", 1) != 0)};
    if ((st = fe_emit1(c, IR_OP_TOPK, &x, 1, a, 3, fe_has_out(c, 1) ? 1 : -1, &idx))) return st;
    if (!fe_has_out(c, 0)) return SYMC_OK;
    uint32_t in[2] = {x, idx};
    ir_attr g = symc_attr_int("axis", axis);
    return fe_emit1(c, IR_OP_GATHER_ELEMENTS, in, 2, &g, 1, 0, &vals);
}

/* 0, 1, ..., n-1 as an i64 tensor shaped to broadcast along `axis` of a
 * rank-r tensor: [n, 1, ..., 1] with r - axis - 1 trailing ones. */
static symc_status iota_along(fe_ctx *c, sym_expr start, sym_expr n, int32_t axis, int32_t r, symc_dtype dt,
                              uint32_t *out) {
    sym_expr one = sym_const(c->t, 1), limit = sym_add(c->t, start, n);
    ir_attr a[4] = {symc_attr_dims("start", &start, 1), symc_attr_dims("limit", &limit, 1),
                    symc_attr_dims("delta", &one, 1), symc_attr_dtype("to", dt)};
    symc_status st = fe_emit1(c, IR_OP_RANGE, NULL, 0, a, 4, -1, out);
    if (st || axis == r - 1) return st;
    sym_expr dims[IR_MAX_RANK];
    dims[0] = n;
    for (int32_t i = 1; i < r - axis; i++) dims[i] = one;
    ir_attr sh = symc_attr_dims("shape", dims, (uint32_t)(r - axis));
    return fe_emit1(c, IR_OP_RESHAPE, out, 1, &sh, 1, -1, out);
}

/* Hardmax: 1 at the first max along axis, else 0: argmax compared with the
 * positions along the axis. */
static symc_status h_hardmax(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, am, pos, eq, out;
    int32_t axis = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_norm_axis_of(c, fe_attr_i(c, "axis", -1), T(c, x)->rank, &axis);
    if (st) return st;
    ir_attr a[2] = {symc_attr_int("axis", axis), symc_attr_int("keepdims", 1)};
    ir_attr to = symc_attr_dtype("to", T(c, x)->dtype);
    if ((st = fe_emit1(c, IR_OP_ARGMAX, &x, 1, a, 2, -1, &am)) ||
        (st = iota_along(c, sym_const(c->t, 0), T(c, x)->dims[axis], axis, T(c, x)->rank, SYMC_I64, &pos)) ||
        (st = fe_emit_binary(c, IR_OP_EQUAL, pos, am, -1, &eq)))
        return st;
    return fe_emit1(c, IR_OP_CAST, &eq, 1, &to, 1, 0, &out);
}

static symc_status h_cumsum(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, t, n, out;
    int64_t axis;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st) st = fe_const_ints(c, t, 1, "the axis", &axis, 1, &n);
    if (!st && n != 1) return fe_fail(c, SYMC_ERR_FORMAT, "the axis has %u elements, must be one", n);
    if (st) return st;
    ir_attr a[3] = {symc_attr_int("axis", axis), symc_attr_int("exclusive", fe_attr_i(c, "exclusive", 0) != 0),
                    symc_attr_int("reverse", fe_attr_i(c, "reverse", 0) != 0)};
    return fe_emit1(c, IR_OP_CUMSUM, &x, 1, a, 3, 0, &out);
}

/* OneHot: where(index == position, on, off) with the position along the new
 * axis; an index in [-depth, -1] counts from the end, any other index out of
 * [0, depth) matches nothing (all off), as the spec says. Indices of a float
 * type are compared as they are, so a fractional one matches nothing. */
static symc_status h_one_hot(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 3, 3);
    uint32_t idx, dep, vals, zero, lt, sum, pos, eq, on, off, out;
    sym_expr depth;
    if (!st) st = fe_in(c, 0, &idx);
    if (!st) st = fe_scalar_value(c, 1, "the depth", &depth);
    if (!st) st = fe_in(c, 1, &dep);
    if (!st) st = fe_in(c, 2, &vals);
    if (st) return st;
    symc_dtype dt = T(c, idx)->dtype;
    if (dt == SYMC_BOOL) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "bool indices are not supported");
    if (sym_range_of(c->t, depth).lo < 1) return fe_fail(c, SYMC_ERR_FORMAT, "depth %s may be < 1", fe_txt(c, depth));
    if (fe_small_numel(c, vals) != 2)
        return fe_fail(c, SYMC_ERR_FORMAT, "input 2 (the values [off, on]) must have two elements");
    int32_t r = T(c, idx)->rank + 1, axis = 0;
    if ((st = fe_norm_axis_of(c, fe_attr_i(c, "axis", -1), r, &axis))) return st;
    uint8_t zbytes[8] = {0};
    ir_attr to = symc_attr_dtype("to", dt), un = symc_attr_ints("axes", (int64_t[]){axis}, 1);
    sym_expr s0 = sym_const(c->t, 0), s1 = sym_const(c->t, 1), s2 = sym_const(c->t, 2);
    /* index + depth where the index is negative */
    if ((st = fe_const(c, dt, 0, NULL, zbytes, -1, &zero)) ||
        (st = fe_emit_binary(c, IR_OP_LESS, idx, zero, -1, &lt)) ||
        (st = fe_emit1(c, IR_OP_CAST, &dep, 1, &to, 1, -1, &dep)) ||
        (st = fe_emit_binary(c, IR_OP_ADD, idx, dep, -1, &sum)))
        return st;
    uint32_t w[3] = {lt, sum, idx};
    if ((st = fe_emit1(c, IR_OP_WHERE, w, 3, NULL, 0, -1, &idx)) ||
        (st = fe_emit1(c, IR_OP_UNSQUEEZE, &idx, 1, &un, 1, -1, &idx)) ||
        (st = iota_along(c, s0, depth, axis, r, dt, &pos)) || (st = fe_emit_binary(c, IR_OP_EQUAL, idx, pos, -1, &eq)))
        return st;
    /* the values as two one-element slices */
    int64_t flat = 2;
    ir_attr fl = symc_attr_dims("shape", (sym_expr[]){sym_const(c->t, flat)}, 1);
    if ((st = fe_emit1(c, IR_OP_RESHAPE, &vals, 1, &fl, 1, -1, &vals))) return st;
    ir_attr soff[2] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &s1, 1)};
    ir_attr son[2] = {symc_attr_dims("starts", &s1, 1), symc_attr_dims("ends", &s2, 1)};
    if ((st = fe_emit1(c, IR_OP_SLICE, &vals, 1, soff, 2, -1, &off)) ||
        (st = fe_emit1(c, IR_OP_SLICE, &vals, 1, son, 2, -1, &on)))
        return st;
    uint32_t w2[3] = {eq, on, off};
    return fe_emit1(c, IR_OP_WHERE, w2, 3, NULL, 0, 0, &out);
}

/* EyeLike: ones where column - row == k, as row + k == column. */
static symc_status h_eye_like(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, rows, cols, eq, out;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    if (T(c, x)->rank != 2) return fe_fail(c, SYMC_ERR_FORMAT, "input has rank %d, must be 2", (int)T(c, x)->rank);
    symc_dtype dt = T(c, x)->dtype;
    const Onnx__AttributeProto *da = fe_attr_of(c, "dtype", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (da && !fe_dtype((int32_t)da->i, &dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "dtype %s is not supported", fe_onnx_type_name((int32_t)da->i));
    int64_t k = fe_attr_i(c, "k", 0);
    if (k > ((int64_t)1 << 40) || k < -((int64_t)1 << 40))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "k = %" PRId64 " is too large", k);
    ir_attr to = symc_attr_dtype("to", dt);
    if ((st = iota_along(c, sym_const(c->t, k), T(c, x)->dims[0], 0, 2, SYMC_I64, &rows)) ||
        (st = iota_along(c, sym_const(c->t, 0), T(c, x)->dims[1], 1, 2, SYMC_I64, &cols)) ||
        (st = fe_emit_binary(c, IR_OP_EQUAL, rows, cols, -1, &eq)))
        return st;
    return fe_emit1(c, IR_OP_CAST, &eq, 1, &to, 1, 0, &out);
}

/* LpNormalization: x / ||x||_p along axis, p 1 or 2; a zero vector stays
 * zero (the ONNX reference's where(norm == 0, 0, x / norm)). */
static symc_status h_lp_normalization(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, t, out;
    int32_t axis = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_need_float(c, x);
    if (!st) st = fe_norm_axis_of(c, fe_attr_i(c, "axis", -1), T(c, x)->rank, &axis);
    if (st) return st;
    int64_t p = fe_attr_i(c, "p", 2);
    if (p != 1 && p != 2) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "p = %" PRId64 " (1 and 2 are supported)", p);
    red_axes ra = {.axes = {axis}, .n = 1, .noop = 0, .keep = 1};
    if (p == 1) st = fe_emit_unary(c, IR_OP_ABS, x, -1, &t);
    else st = fe_emit_binary(c, IR_OP_MUL, x, x, -1, &t);
    if (!st) st = fe_emit_reduce(c, IR_OP_REDUCE_SUM, t, &ra, 1, -1, &t);
    if (!st && p == 2) st = fe_emit_unary(c, IR_OP_SQRT, t, -1, &t);
    uint8_t zbytes[8] = {0}; /* 0.0 in every float dtype */
    uint32_t zero, isz, q;
    if (st || (st = fe_const(c, T(c, x)->dtype, 0, NULL, zbytes, -1, &zero)) ||
        (st = fe_emit_binary(c, IR_OP_EQUAL, t, zero, -1, &isz)) || (st = fe_emit_binary(c, IR_OP_DIV, x, t, -1, &q)))
        return st;
    uint32_t w[3] = {isz, zero, q};
    return fe_emit1(c, IR_OP_WHERE, w, 3, NULL, 0, 0, &out);
}

static symc_status h_gather_nd(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t in[2], out;
    if (!st) st = fe_in(c, 0, &in[0]);
    if (!st) st = fe_in(c, 1, &in[1]);
    ir_attr a = symc_attr_int("batch_dims", fe_attr_i(c, "batch_dims", 0));
    return st ? st : fe_emit1(c, IR_OP_GATHER_ND, in, 2, &a, 1, 0, &out);
}

static symc_status scatter(fe_ctx *c, ir_op op) {
    symc_status st = fe_need_inputs(c, 3, 3);
    uint32_t in[3], out;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const char *red = fe_attr_s(c, "reduction", "none");
    if (strcmp(red, "none") && strcmp(red, "add") && strcmp(red, "mul") && strcmp(red, "max") && strcmp(red, "min"))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "reduction = '%s' (none, add, mul, max and min are supported)", red);
    ir_attr a[2] = {symc_attr_str("reduction", red), symc_attr_int("axis", fe_attr_i(c, "axis", 0))};
    return fe_emit1(c, op, in, 3, a, op == IR_OP_SCATTER_ELEMENTS ? 2 : 1, 0, &out);
}
static symc_status h_scatter_nd(fe_ctx *c) { return scatter(c, IR_OP_SCATTER_ND); }
static symc_status h_scatter_elements(fe_ctx *c) { return scatter(c, IR_OP_SCATTER_ELEMENTS); }

/* ---- sizes that depend on the data ------------------------------------------------------------- */

static symc_status h_nonzero(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, out;
    if (!st) st = fe_in(c, 0, &x);
    return st ? st : fe_emit1(c, IR_OP_NONZERO, &x, 1, NULL, 0, 0, &out);
}

/* x flattened to one dim, for the ops that work on its elements without an axis */
static symc_status flat(fe_ctx *c, uint32_t x, uint32_t *out) {
    const ir_tensor *t = T(c, x);
    if (t->rank == 1) return *out = x, SYMC_OK;
    sym_expr n = sym_const(c->t, 1);
    for (int32_t d = 0; d < t->rank; d++) n = sym_mul(c->t, n, t->dims[d]);
    return fe_emit_reshape(c, x, &n, 1, -1, out);
}

/* Compress: the slices (elements, without an axis) at the true entries of
 * the condition; entries past the axis length are cut off, and a shorter
 * condition leaves the slices after it out, as the spec says. */
static symc_status h_compress(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, cond, nz, idx, out;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &cond);
    if (st) return st;
    if (T(c, cond)->rank != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "the condition '%s' has rank %d, must be 1", T(c, cond)->name,
                       (int)T(c, cond)->rank);
    int32_t axis = 0;
    if (fe_attr(c, "axis")) {
        if ((st = fe_norm_axis_of(c, fe_attr_i(c, "axis", 0), T(c, x)->rank, &axis))) return st;
    } else if ((st = flat(c, x, &x))) {
        return st;
    }
    sym_expr len = T(c, x)->dims[axis], clen = T(c, cond)->dims[0];
    if (sym_prove_le(c->t, clen, len) != SYM_TRUE) {
        sym_expr zero = sym_const(c->t, 0), end = sym_min(c->t, clen, len);
        ir_attr a[2] = {symc_attr_dims("starts", &zero, 1), symc_attr_dims("ends", &end, 1)};
        if ((st = fe_emit1(c, IR_OP_SLICE, &cond, 1, a, 2, -1, &cond))) return st;
    }
    int64_t zero_axis = 0;
    ir_attr sq = symc_attr_ints("axes", &zero_axis, 1), g = symc_attr_int("axis", axis);
    if ((st = fe_emit1(c, IR_OP_NONZERO, &cond, 1, NULL, 0, -1, &nz)) ||
        (st = fe_emit1(c, IR_OP_SQUEEZE, &nz, 1, &sq, 1, -1, &idx)))
        return st;
    uint32_t in[2] = {x, idx};
    return fe_emit1(c, IR_OP_GATHER, in, 2, &g, 1, 0, &out);
}

/* Unique: the core op gives indices, inverse_indices and counts (ONNX
 * outputs 1-3); the values Y (output 0) are gathered with the indices. */
static symc_status h_unique(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, outs[3], y;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    int64_t sorted = fe_attr_i(c, "sorted", 1);
    if (sorted != 0 && sorted != 1) return fe_fail(c, SYMC_ERR_FORMAT, "sorted = %" PRId64 " must be 0 or 1", sorted);
    ir_attr a[2] = {symc_attr_int("sorted", sorted)};
    uint32_t na = 1;
    int32_t axis = 0;
    if (fe_attr(c, "axis")) {
        if ((st = fe_norm_axis_of(c, fe_attr_i(c, "axis", 0), T(c, x)->rank, &axis))) return st;
        a[na++] = symc_attr_int("axis", axis);
    }
    int out_k[3];
    for (int k = 0; k < 3; k++) out_k[k] = fe_has_out(c, (uint32_t)k + 1) ? k + 1 : -1;
    if ((st = fe_emit(c, IR_OP_UNIQUE, &x, 1, a, na, out_k, 3, outs))) return st;
    if (!fe_has_out(c, 0)) return SYMC_OK;
    if (na == 1 && (st = flat(c, x, &x))) return st;
    uint32_t in[2] = {x, outs[0]};
    ir_attr g = symc_attr_int("axis", axis);
    return fe_emit1(c, IR_OP_GATHER, in, 2, &g, 1, 0, &y);
}

/* NonMaxSuppression: nms over the inputs as given, read at run time; an
 * input left out before a later one given becomes its default. */
static symc_status h_nms(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 5);
    uint32_t in[5], n = fe_n_in(c), out;
    for (uint32_t k = 0; k < n && !st; k++) {
        if (fe_has_in(c, k)) {
            st = fe_in(c, k, &in[k]);
        } else if (k == 2) {
            int64_t zero = 0, one = 1; /* no boxes */
            st = fe_const(c, SYMC_I64, 1, &one, &zero, -1, &in[k]);
        } else if (k == 3) {
            float zero = 0.0f;
            int64_t one = 1;
            st = fe_const(c, SYMC_F32, 1, &one, &zero, -1, &in[k]);
        } else {
            st = fe_in(c, k, &in[k]); /* boxes and scores are not optional: the error says so */
        }
    }
    if (st) return st;
    int64_t cpb = fe_attr_i(c, "center_point_box", 0);
    if (cpb != 0 && cpb != 1) return fe_fail(c, SYMC_ERR_FORMAT, "center_point_box = %" PRId64 " must be 0 or 1", cpb);
    ir_attr a = symc_attr_int("center_point_box", cpb);
    return fe_emit1(c, IR_OP_NMS, in, n, &a, 1, 0, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_index[] = {
    {"ArgMax", h_argmax},         {"ArgMin", h_argmin},
    {"Compress", h_compress},     {"CumSum", h_cumsum},
    {"EyeLike", h_eye_like},      {"GatherND", h_gather_nd},
    {"Hardmax", h_hardmax},       {"LpNormalization", h_lp_normalization},
    {"NonMaxSuppression", h_nms}, {"NonZero", h_nonzero},
    {"OneHot", h_one_hot},        {"ScatterElements", h_scatter_elements},
    {"ScatterND", h_scatter_nd},  {"TopK", h_topk},
    {"Unique", h_unique},
};
const uint32_t fe_onnx_n_ops_index = sizeof fe_onnx_ops_index / sizeof fe_onnx_ops_index[0];
