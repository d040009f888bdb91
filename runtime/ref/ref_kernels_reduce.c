/* Reductions and normalizations: reduce_sum/mean/max/min/prod, argmax/argmin,
 * softmax, log_softmax, layer_norm, rms_norm, batch_norm.
 *
 * All float accumulation is in f64 and two-pass (mean first, then squared
 * deviations for the variance; max first, then the shifted exponentials for
 * softmax), the textbook formulations GPU kernels are measured against.
 * Integer sums accumulate exactly in int64 (wrapping like the dtype would).
 *
 * A reduction splits the input's axes into kept and reduced ones, each with
 * the input's own strides; an output element is the kept coordinate's base
 * offset plus every reduced offset. Walking the reduced coordinates per
 * output element needs no scratch memory, so the kernels never allocate. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

/* ---- reduce_sum / _mean / _max / _min / _prod ----------------------------------------- */
symc_status rt_ref_k_reduce(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *axes;
    uint32_t n_axes;
    int64_t keepdims;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "axes", 0, &axes, &n_axes, NULL))) return s;
    if ((s = rt_ref_attr_int(c, "keepdims", 0, 1, &keepdims))) return s;
    if (keepdims != 0 && keepdims != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'keepdims' = %lld must be 0 or 1", (long long)keepdims);
    int reduced[RT_REF_MAX_RANK] = {0};
    if (n_axes == 0) { /* absent or empty: every axis, as in ONNX */
        for (int32_t d = 0; d < x->rank; d++) reduced[d] = 1;
    }
    for (uint32_t k = 0; k < n_axes; k++) {
        int32_t a;
        if ((s = rt_ref_norm_axis(c, axes[k], x->rank, "axis", &a))) return s;
        if (reduced[a])
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "axis %lld appears twice in 'axes'", (long long)axes[k]);
        reduced[a] = 1;
    }

    int64_t out_dims[RT_REF_MAX_RANK], strides[RT_REF_MAX_RANK];
    int64_t kd[RT_REF_MAX_RANK], ks[RT_REF_MAX_RANK], rd[RT_REF_MAX_RANK], rs[RT_REF_MAX_RANK];
    int32_t out_rank = 0, nk = 0, nr = 0;
    rt_ref_strides(x->rank, x->dims, strides);
    for (int32_t d = 0; d < x->rank; d++) {
        if (reduced[d]) {
            rd[nr] = x->dims[d];
            rs[nr++] = strides[d];
            if (keepdims) out_dims[out_rank++] = 1;
        } else {
            kd[nk] = x->dims[d];
            ks[nk++] = strides[d];
            out_dims[out_rank++] = x->dims[d];
        }
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, out_rank, out_dims))) return s;

    int64_t n_out = rt_ref_numel_dims(nk, kd), n_red = rt_ref_numel_dims(nr, rd);
    ir_op op = c->op;
    int is_max = op == IR_OP_REDUCE_MAX, is_min = op == IR_OP_REDUCE_MIN, is_prod = op == IR_OP_REDUCE_PROD;
    /* an empty reduction gives the identity (ONNX opset 18): 0 for a sum, 1
     * for a product, -inf/+inf for a float max/min and the dtype's lowest /
     * highest integer; an empty float mean is NaN (0/0), an integer one has no
     * value */
    int64_t imin = x->dtype == SYMC_I32 ? INT32_MIN : INT64_MIN, imax = x->dtype == SYMC_I32 ? INT32_MAX : INT64_MAX;
    if (n_red == 0 && n_out > 0 && !rt_is_float(x->dtype) &&
        (op == IR_OP_REDUCE_MEAN || ((is_max || is_min) && x->dtype != SYMC_I32 && x->dtype != SYMC_I64)))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s of %s over an empty set of elements (a reduced dim is 0)",
                           c->opname, symc_dtype_name(x->dtype));
    int64_t kc[RT_REF_MAX_RANK] = {0};
    for (int64_t o = 0; o < n_out; o++, rt_next(nk, kd, kc)) {
        int64_t base = rt_offset(nk, kc, ks);
        int64_t rc[RT_REF_MAX_RANK] = {0};
        if (rt_is_float(x->dtype)) {
            double acc = is_max ? -INFINITY : is_min ? INFINITY : is_prod ? 1.0 : 0.0;
            for (int64_t r = 0; r < n_red; r++, rt_next(nr, rd, rc)) {
                double v = rt_ld_f(x, base + rt_offset(nr, rc, rs));
                if (is_max) {
                    if (isnan(v) || v > acc) acc = isnan(acc) ? acc : v; /* NaN wins */
                } else if (is_min) {
                    if (isnan(v) || v < acc) acc = isnan(acc) ? acc : v;
                } else if (is_prod) {
                    acc *= v;
                } else {
                    acc += v;
                }
            }
            if (op == IR_OP_REDUCE_MEAN) acc /= (double)n_red; /* 0/0 = NaN when empty */
            rt_st_f(&c->out[0], o, acc);
        } else {
            int u64 = rt_is_u64(x->dtype); /* its bit pattern in acc; order and division unsigned */
            int64_t acc = is_max ? (u64 ? 0 : imin) : is_min ? (u64 ? -1 /* UINT64_MAX */ : imax) : is_prod ? 1 : 0;
            for (int64_t r = 0; r < n_red; r++, rt_next(nr, rd, rc)) {
                int64_t v = rt_ld_i(x, base + rt_offset(nr, rc, rs));
                if (is_max) {
                    if (u64 ? (uint64_t)v > (uint64_t)acc : v > acc) acc = v;
                } else if (is_min) {
                    if (u64 ? (uint64_t)v < (uint64_t)acc : v < acc) acc = v;
                } else if (is_prod) acc = (int64_t)((uint64_t)acc * (uint64_t)v); /* wraps like the dtype */
                else acc = (int64_t)((uint64_t)acc + (uint64_t)v);
            }
            /* integer mean truncates toward zero, like ONNX Runtime */
            if (op == IR_OP_REDUCE_MEAN) acc = u64 ? (int64_t)((uint64_t)acc / (uint64_t)n_red) : acc / n_red;
            rt_st_i(&c->out[0], o, acc);
        }
    }
    return SYMC_OK;
}

/* ---- argmax / argmin --------------------------------------------------------------------- */
/* The first index of the max (min) along axis, or the last one with
 * select_last_index; NaN counts as the extreme, as in NumPy's argmax. */
symc_status rt_ref_k_arg_reduce(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t axis_attr, keepdims, last;
    int32_t axis;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if ((s = rt_ref_attr_int(c, "keepdims", 0, 1, &keepdims))) return s;
    if ((s = rt_ref_attr_int(c, "select_last_index", 0, 0, &last))) return s;
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 is a scalar; %s needs an axis", c->opname);
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    int64_t out_dims[RT_REF_MAX_RANK];
    int32_t out_rank = 0;
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis) out_dims[out_rank++] = x->dims[d];
        else if (keepdims) out_dims[out_rank++] = 1;
    if ((s = rt_ref_check_out(c, 0, SYMC_I64, out_rank, out_dims))) return s;
    int64_t outer = rt_ref_numel_dims(axis, x->dims), n = x->dims[axis];
    int64_t inner = rt_ref_numel_dims(x->rank - axis - 1, x->dims + axis + 1);
    if (n == 0 && outer * inner > 0)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s over an empty axis %d has no index", c->opname, (int)axis);
    int is_max = c->op == IR_OP_ARGMAX, fl = rt_is_float(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i, best = 0;
            double bf = fl ? rt_ld_f(x, base) : 0;
            int64_t bi = fl ? 0 : rt_ld_i(x, base);
            for (int64_t j = 1; j < n; j++) {
                int better;
                if (fl) {
                    double v = rt_ld_f(x, base + j * inner);
                    if (isnan(bf)) better = last && isnan(v);
                    else if (isnan(v)) better = 1;
                    else better = (is_max ? v > bf : v < bf) || (last && v == bf);
                    if (better) bf = v;
                } else {
                    int64_t v = rt_ld_i(x, base + j * inner);
                    better = (is_max ? v > bi : v < bi) || (last && v == bi);
                    if (better) bi = v;
                }
                if (better) best = j;
            }
            rt_st_i(&c->out[0], o * inner + i, best);
        }
    return SYMC_OK;
}

/* ---- softmax / log_softmax ---------------------------------------------------------------- */
symc_status rt_ref_k_softmax(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t axis_attr, zero_masked = 0;
    int32_t axis;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if (c->op == IR_OP_SOFTMAX && (s = rt_ref_attr_int(c, "zero_masked_rows", 0, 0, &zero_masked))) return s;
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 is a scalar; softmax needs an axis");
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims))) return s;
    int64_t outer = rt_ref_numel_dims(axis, x->dims), n = x->dims[axis];
    int64_t inner = rt_ref_numel_dims(x->rank - axis - 1, x->dims + axis + 1);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i;
            double mx = -INFINITY, sum = 0.0;
            for (int64_t j = 0; j < n; j++) {
                double v = rt_ld_f(x, base + j * inner);
                if (v > mx || isnan(v)) mx = isnan(mx) ? mx : v;
            }
            if (zero_masked && mx == -INFINITY) { /* every input -inf: zeros (torch's safe softmax) */
                for (int64_t j = 0; j < n; j++) rt_st_f(&c->out[0], base + j * inner, 0.0);
                continue;
            }
            for (int64_t j = 0; j < n; j++) sum += exp(rt_ld_f(x, base + j * inner) - mx);
            for (int64_t j = 0; j < n; j++) {
                double v = rt_ld_f(x, base + j * inner) - mx;
                rt_st_f(&c->out[0], base + j * inner, c->op == IR_OP_LOG_SOFTMAX ? v - log(sum) : exp(v) / sum);
            }
        }
    return SYMC_OK;
}

/* ---- layer_norm / rms_norm ------------------------------------------------------------------- */
/* in[k] (scale or bias) must broadcast to the normalized dims tdims[0..tr):
 * its rank at most tr and each of its dims 1 or equal, right-aligned. */
static symc_status check_affine(rt_ctx *c, uint32_t k, const char *role, int32_t tr, const int64_t *tdims,
                                int64_t *strides) {
    const rt_ref_tensor *t = &c->in[k];
    symc_status s = rt_ref_check_in_float(c, k, role);
    if (s) return s;
    int ok = t->rank <= tr;
    for (int32_t d = 0; ok && d < t->rank; d++) {
        int64_t want = tdims[tr - t->rank + d];
        ok = t->dims[d] == want || t->dims[d] == 1;
    }
    if (!ok) {
        char a[160], b[160];
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "%s (input %u) of shape %s does not broadcast to "
                           "the normalized dims %s",
                           role, k, rt_ref_shape_str(a, sizeof a, t->rank, t->dims),
                           rt_ref_shape_str(b, sizeof b, tr, tdims));
    }
    rt_ref_bcast_strides(t, tr, strides);
    return SYMC_OK;
}

static symc_status norm_common(rt_ctx *c, int rms) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t axis_attr;
    int32_t axis;
    double eps;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if ((s = rt_ref_attr_float(c, "epsilon", 1, 0, &eps))) return s;
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 is a scalar; the norm needs an axis");
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    int32_t tr = x->rank - axis;
    const int64_t *tdims = x->dims + axis;
    int64_t sst[RT_REF_MAX_RANK], bst[RT_REF_MAX_RANK];
    int has_scale = c->n_in >= 2, has_bias = c->n_in >= 3;
    if (has_scale && (s = check_affine(c, 1, "scale", tr, tdims, sst))) return s;
    if (has_bias && (s = check_affine(c, 2, "bias", tr, tdims, bst))) return s;
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims))) return s;

    int64_t outer = rt_ref_numel_dims(axis, x->dims), n = rt_ref_numel_dims(tr, tdims);
    for (int64_t o = 0; o < outer; o++) {
        int64_t base = o * n;
        double mean = 0.0, m2 = 0.0;
        if (!rms) {
            for (int64_t j = 0; j < n; j++) mean += rt_ld_f(x, base + j);
            mean /= (double)n;
        }
        for (int64_t j = 0; j < n; j++) {
            double d = rt_ld_f(x, base + j) - mean;
            m2 += d * d;
        }
        /* layer_norm: population variance; rms_norm: mean of squares */
        double inv = 1.0 / sqrt(m2 / (double)n + eps);
        int64_t tc[RT_REF_MAX_RANK] = {0};
        for (int64_t j = 0; j < n; j++, rt_next(tr, tdims, tc)) {
            double y = (rt_ld_f(x, base + j) - mean) * inv;
            if (has_scale) y *= rt_ld_f(&c->in[1], rt_offset(tr, tc, sst));
            if (has_bias) y += rt_ld_f(&c->in[2], rt_offset(tr, tc, bst));
            rt_st_f(&c->out[0], base + j, y);
        }
    }
    return SYMC_OK;
}

symc_status rt_ref_k_layer_norm(rt_ctx *c) { return norm_common(c, 0); }
symc_status rt_ref_k_rms_norm(rt_ctx *c) { return norm_common(c, 1); }

/* ---- batch_norm (inference) ----------------------------------------------------------------------- */
symc_status rt_ref_k_batch_norm(rt_ctx *c) {
    static const char *const roles[5] = {"x", "scale", "bias", "mean", "var"};
    const rt_ref_tensor *x = &c->in[0];
    double eps;
    symc_status s;
    if ((s = rt_ref_attr_float(c, "epsilon", 1, 0, &eps))) return s;
    if (x->rank < 2) {
        char a[160];
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "input 0 has shape %s; batch_norm needs rank >= 2 "
                           "(channels on dim 1)",
                           rt_ref_shape_str(a, sizeof a, x->rank, x->dims));
    }
    int64_t ch = x->dims[1];
    for (uint32_t k = 1; k < 5; k++) {
        if ((s = rt_ref_check_in_float(c, k, roles[k]))) return s;
        if (c->in[k].rank != 1 || c->in[k].dims[0] != ch) {
            char a[160];
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                               "%s (input %u) has shape %s, must be [%lld] "
                               "(the channels of x)",
                               roles[k], k, rt_ref_shape_str(a, sizeof a, c->in[k].rank, c->in[k].dims), (long long)ch);
        }
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims))) return s;
    int64_t batch = x->dims[0], inner = rt_ref_numel_dims(x->rank - 2, x->dims + 2);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t k = 0; k < ch; k++) {
            double scale = rt_ld_f(&c->in[1], k), bias = rt_ld_f(&c->in[2], k);
            double mean = rt_ld_f(&c->in[3], k), var = rt_ld_f(&c->in[4], k);
            double inv = 1.0 / sqrt(var + eps);
            int64_t base = (b * ch + k) * inner;
            for (int64_t i = 0; i < inner; i++)
                rt_st_f(&c->out[0], base + i, (rt_ld_f(x, base + i) - mean) * inv * scale + bias);
        }
    return SYMC_OK;
}
