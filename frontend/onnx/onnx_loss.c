/* ONNX losses defined by a function body (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss),
 * translated as that body: weights, ignore_index and every reduction. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- losses ------------------------------------------------------------------------------------------ */

/* NegativeLogLikelihoodLoss as its ONNX function body: with the target t
 * [N, d..] viewed as [N, 1, d..], loss = -x[n, t, d..] (GatherElements on
 * axis 1) times weight[t] when a weight is given; a target equal to
 * ignore_index reads class 0 and contributes 0 (and 0 weight). Reduction
 * none keeps [N, d..], sum sums everything, mean divides the sum by the sum
 * of the gathered weights (the count of targets not ignored without a
 * weight, the element count without an ignore_index). x is the log
 * probabilities, the node's input 0 for NegativeLogLikelihoodLoss, the
 * log_softmax of the scores for SoftmaxCrossEntropyLoss. */
static symc_status nll_loss(fe_ctx *c, uint32_t x, uint32_t target, int have_w, uint32_t w) {
    const char *red = fe_attr_s(c, "reduction", "mean");
    int r_none = !strcmp(red, "none"), r_sum = !strcmp(red, "sum"), r_mean = !strcmp(red, "mean");
    if (!r_none && !r_sum && !r_mean)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute 'reduction' = '%s' (expected none, sum or mean)", red);
    const ir_tensor *xt = T(c, x), *tt = T(c, target);
    symc_dtype xd = xt->dtype, td = tt->dtype;
    if (!ir_dtype_is_float(xd))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; the loss takes floats", xt->name,
                       symc_dtype_name(xd));
    if (td != SYMC_I32 && td != SYMC_I64)
        return fe_fail(c, SYMC_ERR_FORMAT, "target '%s' is %s; it must be int32 or int64", tt->name,
                       symc_dtype_name(td));
    if (xt->rank < 2 || tt->rank != xt->rank - 1)
        return fe_fail(c, SYMC_ERR_FORMAT,
                       "input '%s' has rank %d and target '%s' rank %d; they must be [N, C, d..] "
                       "and [N, d..]",
                       xt->name, (int)xt->rank, tt->name, (int)tt->rank);
    if (have_w && T(c, w)->rank != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "weight '%s' has rank %d, must be 1", T(c, w)->name, (int)T(c, w)->rank);
    const Onnx__AttributeProto *iia = fe_attr_of(c, "ignore_index", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    int has_ii = iia != NULL;
    int64_t ii = has_ii ? iia->i : 0;
    if (has_ii && td == SYMC_I32 && (ii < INT32_MIN || ii > INT32_MAX))
        has_ii = 0; /* no int32 target can equal it: nothing is ignored */
    symc_status st;
    int64_t ax1 = 1;
    ir_attr un = symc_attr_ints("axes", &ax1, 1), g1 = symc_attr_int("axis", 1), g0 = symc_attr_int("axis", 0);
    uint32_t t, mask = 0, zf, g, loss, wg = 0, tmp;
    uint8_t zbytes[8] = {0}, iib[8];
    if ((st = fe_emit1(c, IR_OP_UNSQUEEZE, &target, 1, &un, 1, -1, &t)) || (st = fe_emit_scalar(c, xd, 0.0, &zf)))
        return st;
    if (has_ii) {
        uint32_t iic, zt;
        symc_dtype_store(iib, td, 0, (double)ii);
        if (td == SYMC_I64) memcpy(iib, &ii, 8); /* exact beyond 2^53 */
        if ((st = fe_const(c, td, 0, NULL, iib, -1, &iic)) || (st = fe_const(c, td, 0, NULL, zbytes, -1, &zt)) ||
            (st = fe_emit_bin(c, IR_OP_EQUAL, t, iic, -1, &mask)))
            return st;
        uint32_t w3[3] = {mask, zt, t};
        if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &t))) return st;
    }
    uint32_t gin[2] = {x, t};
    if ((st = fe_emit1(c, IR_OP_GATHER_ELEMENTS, gin, 2, &g1, 1, -1, &g))) return st;
    if (has_ii) {
        uint32_t w3[3] = {mask, zf, g};
        if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &g))) return st;
    }
    if ((st = fe_emit_un(c, IR_OP_NEG, g, -1, &loss)) || (st = fe_emit1(c, IR_OP_SQUEEZE, &loss, 1, &un, 1, -1, &loss)))
        return st;
    int weighted = have_w || (has_ii && r_mean); /* the mean divides by the weights' sum */
    if (have_w) {
        uint32_t win[2] = {w, t};
        if ((st = fe_emit1(c, IR_OP_GATHER, win, 2, &g0, 1, -1, &wg))) return st;
        if (has_ii) {
            uint32_t w3[3] = {mask, zf, wg};
            if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &wg))) return st;
        }
        if ((st = fe_emit1(c, IR_OP_SQUEEZE, &wg, 1, &un, 1, -1, &wg))) return st;
    } else if (weighted) {
        uint32_t one, w3[3];
        if ((st = fe_emit_scalar(c, xd, 1.0, &one))) return st;
        w3[0] = mask, w3[1] = zf, w3[2] = one;
        if ((st = fe_emit1(c, IR_OP_WHERE, w3, 3, NULL, 0, -1, &wg)) ||
            (st = fe_emit1(c, IR_OP_SQUEEZE, &wg, 1, &un, 1, -1, &wg)))
            return st;
    }
    if (have_w && (st = fe_emit_bin(c, IR_OP_MUL, loss, wg, -1, &loss))) return st;
    if (r_none) return fe_emit_un(c, IR_OP_IDENTITY, loss, 0, &tmp);
    ir_attr keep0 = symc_attr_int("keepdims", 0);
    if (r_sum) return fe_emit1(c, IR_OP_REDUCE_SUM, &loss, 1, &keep0, 1, 0, &tmp);
    if (!weighted) return fe_emit1(c, IR_OP_REDUCE_MEAN, &loss, 1, &keep0, 1, 0, &tmp);
    uint32_t ls, ws;
    if ((st = fe_emit1(c, IR_OP_REDUCE_SUM, &loss, 1, &keep0, 1, -1, &ls)) ||
        (st = fe_emit1(c, IR_OP_REDUCE_SUM, &wg, 1, &keep0, 1, -1, &ws)))
        return st;
    return fe_emit_bin(c, IR_OP_DIV, ls, ws, 0, &tmp);
}

static symc_status h_nll_loss(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t x, t, w = 0;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &w);
    return st ? st : nll_loss(c, x, t, fe_has_in(c, 2), w);
}

/* SoftmaxCrossEntropyLoss as its ONNX function body: log_softmax of the
 * scores over the classes (axis 1), the optional output log_prob, then the
 * NegativeLogLikelihoodLoss of it. */
static symc_status h_softmax_cross_entropy_loss(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t x, t, w = 0, lp;
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = fe_in(c, 1, &t);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &w);
    if (!st && T(c, x)->rank < 2)
        return fe_fail(c, SYMC_ERR_FORMAT, "scores '%s' have rank %d; they must be [N, C, d..]", T(c, x)->name,
                       (int)T(c, x)->rank);
    if (!st && !ir_dtype_is_float(T(c, x)->dtype))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "scores '%s' are %s; the loss takes floats", T(c, x)->name,
                       symc_dtype_name(T(c, x)->dtype));
    ir_attr a = symc_attr_int("axis", 1);
    if (!st) st = fe_emit1(c, IR_OP_LOG_SOFTMAX, &x, 1, &a, 1, fe_has_out(c, 1) ? 1 : -1, &lp);
    return st ? st : nll_loss(c, lp, t, fe_has_in(c, 2), w);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_loss[] = {
    {"NegativeLogLikelihoodLoss", h_nll_loss},
    {"SoftmaxCrossEntropyLoss", h_softmax_cross_entropy_loss},
};
const uint32_t fe_onnx_n_ops_loss = sizeof fe_onnx_ops_loss / sizeof fe_onnx_ops_loss[0];
