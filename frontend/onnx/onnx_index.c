/* ONNX ops over indices and positions: ArgMax / ArgMin, Hardmax, LpNormalization, GatherND,
 * ScatterElements, ScatterND, OneHot, CumSum, TopK, EyeLike; an axis is made non-negative against
 * the input's rank and refused outside it. */
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
 * The output is always sorted, which sorted=0 (any order) allows too. */
static symc_status h_topk(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 2);
    uint32_t x, idx, vals;
    sym_expr k;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_scalar_value(c, 1, "k", &k);
    if (st) return st;
    if (sym_range_of(c->t, k).lo < 0) return fe_fail(c, SYMC_ERR_FORMAT, "k = %s may be negative", fe_txt(c, k));
    int64_t axis = fe_attr_i(c, "axis", -1);
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

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_index[] = {
    {"ArgMax", h_argmax},
    {"ArgMin", h_argmin},
    {"CumSum", h_cumsum},
    {"EyeLike", h_eye_like},
    {"GatherND", h_gather_nd},
    {"Hardmax", h_hardmax},
    {"LpNormalization", h_lp_normalization},
    {"OneHot", h_one_hot},
    {"ScatterElements", h_scatter_elements},
    {"ScatterND", h_scatter_nd},
    {"TopK", h_topk},
};
const uint32_t fe_onnx_n_ops_index = sizeof fe_onnx_ops_index / sizeof fe_onnx_ops_index[0];
