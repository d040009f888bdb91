/* ONNX normalizations and softmax: Softmax, LogSoftmax, LayerNormalization, BatchNormalization,
 * InstanceNormalization, GroupNormalization, MeanVarianceNormalization, LRN, written as the core
 * ops their definitions are (a mean, a variance, a scale and shift); an extra training output
 * (LayerNormalization's Mean, ...) is refused by name. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* Extra outputs an op can produce in training or debugging form (MaxPool's
 * Indices, LayerNormalization's Mean, ...) are refused when requested. */
static symc_status only_first_output(fe_ctx *c, const char *what) {
    for (uint32_t k = 1; k < c->node->n_output; k++)
        if (fe_has_out(c, k))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "output %u '%s' (%s) is not supported", k, c->node->output[k],
                           what);
    return SYMC_OK;
}
/* ---- normalizations --------------------------------------------------------------------------- */

static symc_status softmax_like(fe_ctx *c, ir_op op) {
    ir_attr a = symc_attr_int("axis", fe_attr_i(c, "axis", -1)); /* -1 since opset 13 */
    return fe_emit_unary_attrs(c, op, &a, 1);
}
static symc_status h_softmax(fe_ctx *c) { return softmax_like(c, IR_OP_SOFTMAX); }
static symc_status h_log_softmax(fe_ctx *c) { return softmax_like(c, IR_OP_LOG_SOFTMAX); }

static symc_status emit_mean(fe_ctx *c, uint32_t x, const int64_t *axes, uint32_t n, int out_k, uint32_t *out) {
    ir_attr a[2] = {symc_attr_int("keepdims", 1), symc_attr_ints("axes", axes, n)};
    return fe_emit1(c, IR_OP_REDUCE_MEAN, &x, 1, a, 2, out_k, out);
}

/* stash_type (LayerNormalization, GroupNormalization 21): the dtype of the
 * statistics and of their computation. */
static symc_status stash_dtype(fe_ctx *c, symc_dtype *dt) {
    int64_t st = fe_attr_i(c, "stash_type", 1);
    if (!fe_dtype((int32_t)st, dt) || !ir_dtype_is_float(*dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "stash_type = %" PRId64 " (%s) is not a float type symc supports", st,
                       fe_onnx_type_name((int32_t)st));
    return SYMC_OK;
}

/* Y is one layer_norm node. The statistics outputs Mean and InvStdDev, when
 * requested, are computed beside it in the stash type: mean over [axis,
 * rank), 1 / sqrt(mean((x - mean)^2) + epsilon), both keeping the reduced
 * dims as 1 (their ONNX shape). */
static symc_status h_layer_norm(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    int64_t axis = fe_attr_i(c, "axis", -1);
    double eps = fe_attr_f(c, "epsilon", 1e-5);
    int32_t r = T(c, in[0])->rank, ax;
    if ((st = fe_norm_axis_of(c, axis, r, &ax))) return st;
    axis = ax;
    ir_attr a[2] = {symc_attr_int("axis", axis), symc_attr_float("epsilon", eps)};
    if ((st = fe_emit1(c, IR_OP_LAYER_NORM, in, n, a, 2, 0, &out))) return st;
    if (!fe_has_out(c, 1) && !fe_has_out(c, 2)) return SYMC_OK;
    symc_dtype sd;
    if ((st = stash_dtype(c, &sd))) return st;
    int64_t axes[IR_MAX_RANK];
    uint32_t na = 0;
    for (int64_t d = axis; d < r; d++) axes[na++] = d;
    uint32_t x, mean, dev, sq, var, e, ve, sd_, inv;
    if ((st = fe_emit_cast(c, in[0], sd, -1, &x)) || (st = emit_mean(c, x, axes, na, fe_has_out(c, 1) ? 1 : -1, &mean)))
        return st;
    if (!fe_has_out(c, 2)) return SYMC_OK;
    if ((st = fe_emit_bin(c, IR_OP_SUB, x, mean, -1, &dev)) || (st = fe_emit_bin(c, IR_OP_MUL, dev, dev, -1, &sq)) ||
        (st = emit_mean(c, sq, axes, na, -1, &var)) || (st = fe_emit_scalar(c, sd, eps, &e)) ||
        (st = fe_emit_bin(c, IR_OP_ADD, var, e, -1, &ve)) || (st = fe_emit_un(c, IR_OP_SQRT, ve, -1, &sd_)))
        return st;
    return fe_emit_un(c, IR_OP_RECIPROCAL, sd_, 2, &inv);
}

/* Scale or bias of shape [C] viewed as [C, 1, ..., 1] against an input of
 * rank r whose channels are dim 1. */
static symc_status channel_view(fe_ctx *c, uint32_t p, int32_t r, uint32_t *out) {
    sym_expr d[IR_MAX_RANK];
    if (T(c, p)->rank != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "'%s' has rank %d, needs 1", T(c, p)->name, (int)T(c, p)->rank);
    d[0] = T(c, p)->dims[0];
    for (int32_t i = 1; i < r - 1; i++) d[i] = sym_const(c->t, 1);
    return fe_emit_reshape(c, p, d, (uint32_t)(r - 1), -1, out);
}

/* InstanceNormalization: a layer_norm over the spatial dims [2, rank), then
 * the per-channel scale and bias. */
static symc_status h_instance_norm(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 3, 3);
    uint32_t in[3], y, s, b, t;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    int32_t r = T(c, in[0])->rank;
    if (r < 3) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 3", T(c, in[0])->name, (int)r);
    ir_attr a[2] = {symc_attr_int("axis", 2), symc_attr_float("epsilon", fe_attr_f(c, "epsilon", 1e-5))};
    if ((st = fe_emit1(c, IR_OP_LAYER_NORM, in, 1, a, 2, -1, &y)) || (st = channel_view(c, in[1], r, &s)) ||
        (st = channel_view(c, in[2], r, &b)) || (st = fe_emit_bin(c, IR_OP_MUL, y, s, -1, &t)))
        return st;
    return fe_emit_bin(c, IR_OP_ADD, t, b, 0, &y);
}

/* GroupNormalization: x [N, C, ...] viewed as [N, G, rest] and normalized
 * over the last dim by layer_norm; scale and bias are per channel [C] since
 * opset 21 (applied in x's shape) and per group [G] before (applied in the
 * grouped view). The statistics are computed in stash_type (opset 21). */
static symc_status h_group_norm(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 3, 3);
    uint32_t in[3], x, g, y, s, b, t;
    for (uint32_t k = 0; k < 3 && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const ir_tensor *xt = T(c, in[0]); /* not valid after the first emit (the tensor table grows) */
    int32_t r = xt->rank;
    int64_t groups = fe_attr_i(c, "num_groups", 0);
    if (r < 2) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 2", xt->name, (int)r);
    sym_expr xs[IR_MAX_RANK];
    memcpy(xs, xt->dims, (size_t)r * sizeof xs[0]);
    if (groups < 1) return fe_fail(c, SYMC_ERR_FORMAT, "num_groups = %" PRId64 " must be >= 1", groups);
    symc_dtype sd = SYMC_F32, xd = xt->dtype;
    if (c->opset >= 21 && (st = stash_dtype(c, &sd))) return st;
    sym_expr d[3] = {xt->dims[0], sym_const(c->t, groups), SYM_NONE}; /* SYM_NONE: reshape's -1 */
    ir_attr a[2] = {symc_attr_int("axis", 2), symc_attr_float("epsilon", fe_attr_f(c, "epsilon", 1e-5))};
    if ((st = fe_emit_cast(c, in[0], sd, -1, &x)) || (st = fe_emit_reshape(c, x, d, 3, -1, &g)) ||
        (st = fe_emit1(c, IR_OP_LAYER_NORM, &g, 1, a, 2, -1, &y)) || (st = fe_emit_cast(c, y, xd, -1, &y)))
        return st;
    if (c->opset >= 21) {
        if ((st = fe_emit_reshape(c, y, xs, (uint32_t)r, -1, &y)) || (st = channel_view(c, in[1], r, &s)) ||
            (st = channel_view(c, in[2], r, &b)) || (st = fe_emit_bin(c, IR_OP_MUL, y, s, -1, &t)))
            return st;
        return fe_emit_bin(c, IR_OP_ADD, t, b, 0, &y);
    }
    if ((st = channel_view(c, in[1], 3, &s)) || (st = channel_view(c, in[2], 3, &b)) ||
        (st = fe_emit_bin(c, IR_OP_MUL, y, s, -1, &t)) || (st = fe_emit_bin(c, IR_OP_ADD, t, b, -1, &y)))
        return st;
    return fe_emit_reshape(c, y, xs, (uint32_t)r, 0, &y);
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9)
 * over `axes` (default [0, 2, 3]), the 1e-9 where ONNX's definition has it. */
static symc_status h_mvn(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, mean, dev, sq, var, sd, e, den, y;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    static const int64_t dflt[3] = {0, 2, 3};
    const int64_t *v = dflt;
    uint32_t n = 3;
    if (fe_attr_ints(c, "axes", &v, &n) && n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_FORMAT, "%u axes", n);
    if ((st = emit_mean(c, x, v, n, -1, &mean)) || (st = fe_emit_bin(c, IR_OP_SUB, x, mean, -1, &dev)) ||
        (st = fe_emit_bin(c, IR_OP_MUL, dev, dev, -1, &sq)) || (st = emit_mean(c, sq, v, n, -1, &var)) ||
        (st = fe_emit_un(c, IR_OP_SQRT, var, -1, &sd)) || (st = fe_emit_scalar(c, T(c, x)->dtype, 1e-9, &e)) ||
        (st = fe_emit_bin(c, IR_OP_ADD, sd, e, -1, &den)))
        return st;
    return fe_emit_bin(c, IR_OP_DIV, dev, den, 0, &y);
}

/* LRN: x / (bias + alpha / size * sum of squares over a window of `size`
 * channels)^beta. The window sum is an average pool (count_include_pad, so
 * the divisor is always size) over x^2 viewed as [N, 1, C, rest]: channels
 * floor((size - 1) / 2) before and ceil((size - 1) / 2) after. */
static symc_status h_lrn(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, sq, v, p, k, t, base, be, pw, y;
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    const ir_tensor *xt = T(c, x); /* not valid after the first emit */
    int32_t r = xt->rank;
    symc_dtype dt = xt->dtype;
    int64_t size = fe_attr_i(c, "size", 0);
    if (size < 1) return fe_fail(c, SYMC_ERR_FORMAT, "size = %" PRId64 " must be >= 1", size);
    if (r < 2) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 2", xt->name, (int)r);
    double alpha = fe_attr_f(c, "alpha", 1e-4), beta = fe_attr_f(c, "beta", 0.75), bias = fe_attr_f(c, "bias", 1.0);
    sym_expr d4[4] = {xt->dims[0], sym_const(c->t, 1), xt->dims[1], SYM_NONE}; /* SYM_NONE: reshape's -1 */
    if (r == 2) d4[3] = sym_const(c->t, 1);
    int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
    int64_t kern[2] = {size, 1}, strides[2] = {1, 1}, pads[4] = {lo, 0, hi, 0};
    ir_attr a[5] = {symc_attr_ints("kernel", kern, 2), symc_attr_ints("strides", strides, 2),
                    symc_attr_ints("pads", pads, 4), symc_attr_int("ceil_mode", 0),
                    symc_attr_int("count_include_pad", 1)};
    sym_expr xs[IR_MAX_RANK];
    memcpy(xs, xt->dims, (size_t)r * sizeof xs[0]);
    if ((st = fe_emit_bin(c, IR_OP_MUL, x, x, -1, &sq)) || (st = fe_emit_reshape(c, sq, d4, 4, -1, &v)) ||
        (st = fe_emit1(c, IR_OP_AVG_POOL2D, &v, 1, a, 5, -1, &p)) ||
        (st = fe_emit_reshape(c, p, xs, (uint32_t)r, -1, &p)) || (st = fe_emit_scalar(c, dt, alpha, &k)) ||
        (st = fe_emit_bin(c, IR_OP_MUL, p, k, -1, &t)) || (st = fe_emit_scalar(c, dt, bias, &k)) ||
        (st = fe_emit_bin(c, IR_OP_ADD, t, k, -1, &base)) || (st = fe_emit_scalar(c, dt, beta, &be)) ||
        (st = fe_emit_bin(c, IR_OP_POW, base, be, -1, &pw)))
        return st;
    return fe_emit_bin(c, IR_OP_DIV, x, pw, 0, &y);
}

/* BatchNormalization. training_mode=1 (deterministic: no random draw)
 * normalizes with the batch's own statistics, the mean and the population
 * variance over every dim but the channels (1), and its outputs 1 and 2 are
 * the updated running statistics mean * momentum + batch * (1 - momentum). */
static symc_status h_batch_norm(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 5, 5);
    int train = fe_attr_i(c, "training_mode", 0) != 0;
    if (!st && !train) st = only_first_output(c, "the running statistics of training");
    uint32_t in[5], out;
    for (uint32_t k = 0; k < 5 && !st; k++) st = fe_in(c, k, &in[k]);
    ir_attr a = symc_attr_float("epsilon", fe_attr_f(c, "epsilon", 1e-5));
    if (st || !train) return st ? st : fe_emit1(c, IR_OP_BATCH_NORM, in, 5, &a, 1, 0, &out);
    int32_t r = T(c, in[0])->rank;
    symc_dtype dt = T(c, in[0])->dtype;
    if (r < 2) return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' has rank %d, needs >= 2", T(c, in[0])->name, (int)r);
    if (!ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; only floats are supported", T(c, in[0])->name,
                       symc_dtype_name(dt));
    int64_t axes[IR_MAX_RANK];
    uint32_t na = 0;
    for (int32_t d = 0; d < r; d++)
        if (d != 1) axes[na++] = d;
    ir_attr keep0[2] = {symc_attr_int("keepdims", 0), symc_attr_ints("axes", axes, na)};
    uint32_t mk, dev, sq, bm, bv, bn[5];
    if ((st = emit_mean(c, in[0], axes, na, -1, &mk)) || (st = fe_emit_bin(c, IR_OP_SUB, in[0], mk, -1, &dev)) ||
        (st = fe_emit_bin(c, IR_OP_MUL, dev, dev, -1, &sq)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MEAN, &in[0], 1, keep0, 2, -1, &bm)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_MEAN, &sq, 1, keep0, 2, -1, &bv)))
        return st;
    bn[0] = in[0], bn[1] = in[1], bn[2] = in[2], bn[3] = bm, bn[4] = bv;
    if ((st = fe_emit1(c, IR_OP_BATCH_NORM, bn, 5, &a, 1, 0, &out))) return st;
    double mom = fe_attr_f(c, "momentum", 0.9);
    for (uint32_t k = 1; k <= 2; k++) {
        if (!fe_has_out(c, k)) continue;
        uint32_t m, one_m, t, u, run;
        if ((st = fe_emit_scalar(c, dt, mom, &m)) || (st = fe_emit_scalar(c, dt, 1.0 - mom, &one_m)) ||
            (st = fe_emit_bin(c, IR_OP_MUL, in[2 + k], m, -1, &t)) ||
            (st = fe_emit_bin(c, IR_OP_MUL, k == 1 ? bm : bv, one_m, -1, &u)) ||
            (st = fe_emit_bin(c, IR_OP_ADD, t, u, (int)k, &run)))
            return st;
    }
    return SYMC_OK;
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_norm[] = {
    {"BatchNormalization", h_batch_norm},       {"GroupNormalization", h_group_norm},
    {"InstanceNormalization", h_instance_norm}, {"LRN", h_lrn},
    {"LayerNormalization", h_layer_norm},       {"LogSoftmax", h_log_softmax},
    {"MeanVarianceNormalization", h_mvn},       {"Softmax", h_softmax},
};
const uint32_t fe_onnx_n_ops_norm = sizeof fe_onnx_ops_norm / sizeof fe_onnx_ops_norm[0];
