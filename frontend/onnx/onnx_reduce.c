/* ONNX Reduce* ops: the axes from the input (opset 13 / 18) or the attribute, noop_with_empty_axes,
 * and the composite reductions (ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceSumSquare)
 * as their definitions' core ops. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- reductions -------------------------------------------------------------------------------- */

static symc_status read_reduce_axes(fe_ctx *c, int64_t axes_input_since, red_axes *ra) {
    symc_status st = fe_need_inputs(c, 1, 2);
    uint32_t ax;
    int have = 0;
    ra->n = 0;
    if (!st && c->opset >= axes_input_since) {
        if (fe_has_in(c, 1)) {
            have = 1;
            if (!(st = fe_in(c, 1, &ax))) st = fe_const_ints(c, ax, 1, "the axes", ra->axes, IR_MAX_RANK, &ra->n);
        }
        /* not part of the op at this opset: an empty list means what no axes
         * input means, anything else would be silently ignored */
        const int64_t *v;
        uint32_t na;
        if (!st && fe_attr_ints(c, "axes", &v, &na) && na)
            return fe_fail(c, SYMC_ERR_FORMAT,
                           "%s has no 'axes' attribute at opset %" PRId64 " (the axes are its "
                           "input 1 since opset %" PRId64 "), so the given one would be ignored: pass the axes as "
                           "input 1",
                           c->node->op_type, c->opset, axes_input_since);
    } else if (!st) {
        const int64_t *v;
        if (fe_has_in(c, 1))
            return fe_fail(c, SYMC_ERR_FORMAT, "axes come as an attribute before opset %" PRId64, axes_input_since);
        if ((have = fe_attr_ints(c, "axes", &v, &ra->n))) {
            if (ra->n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_FORMAT, "%u axes", ra->n);
            if (ra->n) memcpy(ra->axes, v, ra->n * sizeof *v); /* protobuf-c leaves an empty list NULL */
        }
    }
    ra->noop = (!have || ra->n == 0) && fe_attr_i(c, "noop_with_empty_axes", 0);
    ra->keep = fe_attr_i(c, "keepdims", 1) != 0;
    return st;
}

/* ReduceSum/Mean/Max/Min/Prod: one core reduction. Bool max/min (any/all)
 * run on i32 0/1 and are cast back. */
static symc_status reduce(fe_ctx *c, ir_op op, int64_t axes_input_since) {
    red_axes ra;
    uint32_t x, out;
    symc_status st = read_reduce_axes(c, axes_input_since, &ra);
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    if (T(c, x)->dtype == SYMC_BOOL && (op == IR_OP_REDUCE_MAX || op == IR_OP_REDUCE_MIN)) {
        ir_attr to_i = symc_attr_dtype("to", SYMC_I32), to_b = symc_attr_dtype("to", SYMC_BOOL);
        if ((st = fe_emit1(c, IR_OP_CAST, &x, 1, &to_i, 1, -1, &x)) ||
            (st = fe_emit_reduce(c, op, x, &ra, ra.keep, -1, &x)))
            return st;
        return fe_emit1(c, IR_OP_CAST, &x, 1, &to_b, 1, 0, &out);
    }
    return fe_emit_reduce(c, op, x, &ra, ra.keep, 0, &out);
}
static symc_status h_reduce_sum(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_SUM, 13); }
static symc_status h_reduce_mean(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MEAN, 18); }
static symc_status h_reduce_max(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MAX, 18); }
static symc_status h_reduce_min(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_MIN, 18); }
static symc_status h_reduce_prod(fe_ctx *c) { return reduce(c, IR_OP_REDUCE_PROD, 18); }

/* The composite reductions, as their ONNX function bodies: L1 = sum(|x|),
 * L2 = sqrt(sum(x*x)), SumSquare = sum(x*x), LogSum = log(sum(x)). With
 * noop_with_empty_axes and no axes only the elementwise parts remain (the
 * ONNX reference: L1 gives |x|, SumSquare x*x, LogSum log(x)). */
typedef enum { RC_L1, RC_L2, RC_SUM_SQUARE, RC_LOG_SUM } red_composite;

static symc_status reduce_composite(fe_ctx *c, red_composite kind) {
    red_axes ra;
    uint32_t x, t, out;
    symc_status st = read_reduce_axes(c, 18, &ra);
    if (!st) st = fe_in(c, 0, &x);
    if (!st && (kind == RC_L2 || kind == RC_LOG_SUM)) st = fe_need_float(c, x);
    if (st) return st;
    int last = kind == RC_L1 || kind == RC_SUM_SQUARE; /* the sum makes the output */
    if (kind == RC_L1) st = fe_emit_unary(c, IR_OP_ABS, x, -1, &t);
    else if (kind == RC_LOG_SUM) t = x;
    else st = fe_emit_binary(c, IR_OP_MUL, x, x, -1, &t);
    if (!st) st = fe_emit_reduce(c, IR_OP_REDUCE_SUM, t, &ra, ra.keep, last ? 0 : -1, &t);
    if (st || last) return st;
    return fe_emit_unary(c, kind == RC_L2 ? IR_OP_SQRT : IR_OP_LOG, t, 0, &out);
}
static symc_status h_reduce_l1(fe_ctx *c) { return reduce_composite(c, RC_L1); }
static symc_status h_reduce_l2(fe_ctx *c) { return reduce_composite(c, RC_L2); }
static symc_status h_reduce_sum_square(fe_ctx *c) { return reduce_composite(c, RC_SUM_SQUARE); }
static symc_status h_reduce_log_sum(fe_ctx *c) { return reduce_composite(c, RC_LOG_SUM); }

/* ReduceLogSumExp, max-shifted for range: s = max(x) (0 where the max is
 * infinite: an empty or all -inf set, or a +inf element), then
 * log(sum(exp(x - s))) + s, which gives -inf for an empty set as ONNX asks.
 * The reduced axes are kept until the end and dropped by a squeeze. */
static symc_status h_reduce_log_sum_exp(fe_ctx *c) {
    red_axes ra;
    uint32_t x, m, inf, zero, s, t, out;
    symc_status st = read_reduce_axes(c, 18, &ra);
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_need_float(c, x);
    if (st) return st;
    if (ra.noop) return fe_emit_unary(c, IR_OP_IDENTITY, x, 0, &out);
    uint8_t zbytes[8] = {0}; /* 0.0 in every float dtype */
    ir_attr det[2] = {symc_attr_int("detect_positive", 1), symc_attr_int("detect_negative", 1)};
    if ((st = fe_emit_reduce(c, IR_OP_REDUCE_MAX, x, &ra, 1, -1, &m)) ||
        (st = fe_emit1(c, IR_OP_IS_INF, &m, 1, det, 2, -1, &inf)) ||
        (st = fe_const(c, T(c, x)->dtype, 0, NULL, zbytes, -1, &zero)))
        return st;
    uint32_t w[3] = {inf, zero, m};
    if ((st = fe_emit1(c, IR_OP_WHERE, w, 3, NULL, 0, -1, &s)) || (st = fe_emit_binary(c, IR_OP_SUB, x, s, -1, &t)) ||
        (st = fe_emit_unary(c, IR_OP_EXP, t, -1, &t)) ||
        (st = fe_emit_reduce(c, IR_OP_REDUCE_SUM, t, &ra, 1, -1, &t)) ||
        (st = fe_emit_unary(c, IR_OP_LOG, t, -1, &t)) ||
        (st = fe_emit_binary(c, IR_OP_ADD, t, s, ra.keep ? 0 : -1, &t)))
        return st;
    if (ra.keep) return SYMC_OK;
    int64_t all[IR_MAX_RANK];
    const int64_t *axes = ra.axes;
    uint32_t n = ra.n;
    if (!n) { /* every axis */
        n = (uint32_t)T(c, x)->rank;
        for (uint32_t i = 0; i < n; i++) all[i] = i;
        axes = all;
    }
    if (!n) return fe_emit_unary(c, IR_OP_IDENTITY, t, 0, &out); /* a scalar */
    ir_attr a = symc_attr_ints("axes", axes, n);
    return fe_emit1(c, IR_OP_SQUEEZE, &t, 1, &a, 1, 0, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_reduce[] = {
    {"ReduceL1", h_reduce_l1},          {"ReduceL2", h_reduce_l2},
    {"ReduceLogSum", h_reduce_log_sum}, {"ReduceLogSumExp", h_reduce_log_sum_exp},
    {"ReduceMax", h_reduce_max},        {"ReduceMean", h_reduce_mean},
    {"ReduceMin", h_reduce_min},        {"ReduceProd", h_reduce_prod},
    {"ReduceSum", h_reduce_sum},        {"ReduceSumSquare", h_reduce_sum_square},
};
const uint32_t fe_onnx_n_ops_reduce = sizeof fe_onnx_ops_reduce / sizeof fe_onnx_ops_reduce[0];
