/* The entry point of the reference kernels: a table from op to kernel and the
 * checks every op shares.
 *
 * The table is indexed by ir_op and holds the kernel and the dtypes it
 * accepts for input 0, so "erf on i64" is refused here, once, with the same
 * message for every op. Arity comes from ops.def itself (the X-macro), so
 * the limits cannot drift from the op table. Before any kernel runs, every
 * tensor is checked for a valid dtype and rank, non-negative dims whose
 * product (in bytes) fits in int64, and a data pointer when it has elements:
 * after that, kernels index without fear of overflow. */
#include <stdio.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

typedef struct op_limits {
    int min_in, max_in, min_out, max_out; /* max -1: variadic */
} op_limits;

static const op_limits limits[IR_OP_COUNT] = {
#define IR_OP(ID, nm, min_in, max_in, min_out, max_out, cat, dt, at) [IR_OP_##ID] = {min_in, max_in, min_out, max_out},
#include "common/ops.def"
#undef IR_OP
};

typedef struct kernel_entry {
    rt_kernel_fn fn;
    uint32_t dtypes; /* accepted dtypes of input 0 */
} kernel_entry;

/* Unary math is float only; the sign-and-order ops also take integers. */
static const kernel_entry kernels[IR_OP_COUNT] = {
    [IR_OP_IDENTITY] = {rt_ref_k_unary, RT_ALL},
    [IR_OP_NEG] = {rt_ref_k_unary, RT_NUMS},
    [IR_OP_ABS] = {rt_ref_k_unary, RT_NUMS},
    [IR_OP_SIGN] = {rt_ref_k_unary, RT_NUMS},
    [IR_OP_EXP] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_LOG] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SQRT] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_RSQRT] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_RECIPROCAL] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_FLOOR] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_CEIL] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ERF] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_TANH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SIN] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_COS] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_TAN] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SIGMOID] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_RELU] = {rt_ref_k_unary, RT_NUMS},
    [IR_OP_LEAKY_RELU] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_GELU] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SILU] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_HARD_SIGMOID] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_HARD_SWISH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_CLIP] = {rt_ref_k_unary, RT_NUMS},
    [IR_OP_NOT] = {rt_ref_k_not, RT_BOOLS},
    [IR_OP_IS_NAN] = {rt_ref_k_is_nan_inf, RT_FLOATS},
    [IR_OP_IS_INF] = {rt_ref_k_is_nan_inf, RT_FLOATS},
    [IR_OP_CAST] = {rt_ref_k_cast, RT_ALL},
    [IR_OP_ROUND] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ASIN] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ACOS] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ATAN] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SINH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_COSH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ASINH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ACOSH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ATANH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_ELU] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SELU] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_CELU] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SOFTPLUS] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SOFTSIGN] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_THRESHOLDED_RELU] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_MISH] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_SHRINK] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_EXPM1] = {rt_ref_k_unary, RT_FLOATS},
    [IR_OP_LOG1P] = {rt_ref_k_unary, RT_FLOATS},

    [IR_OP_ADD] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_SUB] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_MUL] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_DIV] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_POW] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_MOD] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_MIN] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_MAX] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_EQUAL] = {rt_ref_k_binary, RT_ALL},
    [IR_OP_LESS] = {rt_ref_k_binary, RT_ALL},
    [IR_OP_LESS_EQUAL] = {rt_ref_k_binary, RT_ALL},
    [IR_OP_GREATER] = {rt_ref_k_binary, RT_ALL},
    [IR_OP_GREATER_EQUAL] = {rt_ref_k_binary, RT_ALL},
    [IR_OP_AND] = {rt_ref_k_binary, RT_BOOLS},
    [IR_OP_OR] = {rt_ref_k_binary, RT_BOOLS},
    [IR_OP_WHERE] = {rt_ref_k_where, RT_BOOLS},
    [IR_OP_PRELU] = {rt_ref_k_binary, RT_NUMS},
    [IR_OP_BITWISE_AND] = {rt_ref_k_binary, RT_INTS},
    [IR_OP_BITWISE_OR] = {rt_ref_k_binary, RT_INTS},
    [IR_OP_BITWISE_XOR] = {rt_ref_k_binary, RT_INTS},
    [IR_OP_BIT_SHIFT] = {rt_ref_k_binary, RT_DT(SYMC_U8) | RT_DT(SYMC_U16) | RT_DT(SYMC_U32) | RT_DT(SYMC_U64)},

    [IR_OP_REDUCE_SUM] = {rt_ref_k_reduce, RT_NUMS},
    [IR_OP_REDUCE_MEAN] = {rt_ref_k_reduce, RT_NUMS},
    [IR_OP_REDUCE_MAX] = {rt_ref_k_reduce, RT_NUMS},
    [IR_OP_SOFTMAX] = {rt_ref_k_softmax, RT_FLOATS},
    [IR_OP_LOG_SOFTMAX] = {rt_ref_k_softmax, RT_FLOATS},
    [IR_OP_LAYER_NORM] = {rt_ref_k_layer_norm, RT_FLOATS},
    [IR_OP_RMS_NORM] = {rt_ref_k_rms_norm, RT_FLOATS},
    [IR_OP_BATCH_NORM] = {rt_ref_k_batch_norm, RT_FLOATS},

    [IR_OP_MATMUL] = {rt_ref_k_matmul, RT_NUMS},
    [IR_OP_GEMM] = {rt_ref_k_gemm, RT_FLOATS},
    [IR_OP_CONV2D] = {rt_ref_k_conv2d, RT_FLOATS},

    [IR_OP_MAX_POOL2D] = {rt_ref_k_max_pool2d,
                          RT_FLOATS | RT_DT(SYMC_I8) | RT_DT(SYMC_U8) | RT_DT(SYMC_I16) | RT_DT(SYMC_U16) |
                              RT_DT(SYMC_I32) | RT_DT(SYMC_U32)},
    [IR_OP_AVG_POOL2D] = {rt_ref_k_avg_pool2d, RT_FLOATS},
    [IR_OP_GLOBAL_AVG_POOL] = {rt_ref_k_global_avg_pool, RT_FLOATS},

    [IR_OP_RESHAPE] = {rt_ref_k_reshape, RT_ALL},
    [IR_OP_TRANSPOSE] = {rt_ref_k_transpose, RT_ALL},
    [IR_OP_EXPAND] = {rt_ref_k_expand, RT_ALL},
    [IR_OP_CONCAT] = {rt_ref_k_concat, RT_ALL},
    [IR_OP_SLICE] = {rt_ref_k_slice, RT_ALL},
    [IR_OP_GATHER] = {rt_ref_k_gather, RT_ALL},
    [IR_OP_SQUEEZE] = {rt_ref_k_squeeze, RT_ALL},
    [IR_OP_UNSQUEEZE] = {rt_ref_k_unsqueeze, RT_ALL},
    [IR_OP_FLATTEN] = {rt_ref_k_flatten, RT_ALL},
    [IR_OP_SPLIT] = {rt_ref_k_split, RT_ALL},
    [IR_OP_PAD] = {rt_ref_k_pad, RT_ALL},
    [IR_OP_SHAPE_OF] = {rt_ref_k_shape_of, RT_ALL},
    [IR_OP_RANGE] = {rt_ref_k_range, RT_NUMS}, /* no inputs: the mask applies to the output */
    [IR_OP_TILE] = {rt_ref_k_tile, RT_ALL},
    [IR_OP_TRILU] = {rt_ref_k_trilu, RT_ALL},
    [IR_OP_GATHER_ELEMENTS] = {rt_ref_k_gather_elements, RT_ALL},
    [IR_OP_REDUCE_MIN] = {rt_ref_k_reduce, RT_NUMS},
    [IR_OP_REDUCE_PROD] = {rt_ref_k_reduce, RT_NUMS},
    [IR_OP_ARGMAX] = {rt_ref_k_arg_reduce, RT_NUMS},
    [IR_OP_ARGMIN] = {rt_ref_k_arg_reduce, RT_NUMS},
    [IR_OP_TOPK] = {rt_ref_k_topk, RT_NUMS},
    [IR_OP_CUMSUM] = {rt_ref_k_cumsum, RT_NUMS},
    [IR_OP_GATHER_ND] = {rt_ref_k_gather_nd, RT_ALL},
    [IR_OP_SCATTER_ND] = {rt_ref_k_scatter_nd, RT_ALL},
    [IR_OP_SCATTER_ELEMENTS] = {rt_ref_k_scatter_elements, RT_ALL},
    [IR_OP_RESIZE] = {rt_ref_k_resize, RT_FLOATS},
    [IR_OP_CONV_TRANSPOSE] = {rt_ref_k_conv_transpose, RT_FLOATS},
    [IR_OP_GRID_SAMPLE] = {rt_ref_k_grid_sample, RT_FLOATS},
    [IR_OP_DFT] = {rt_ref_k_dft, RT_FLOATS},
    [IR_OP_MAX_POOL_INDICES] = {rt_ref_k_max_pool_indices,
                                RT_FLOATS | RT_DT(SYMC_I8) | RT_DT(SYMC_U8) | RT_DT(SYMC_I16) | RT_DT(SYMC_U16) |
                                    RT_DT(SYMC_I32) | RT_DT(SYMC_U32)},
    [IR_OP_COL2IM] = {rt_ref_k_col2im, RT_FLOATS},
    [IR_OP_DET] = {rt_ref_k_det, RT_FLOATS},
    [IR_OP_ROI_ALIGN] = {rt_ref_k_roi_align, RT_FLOATS},
    [IR_OP_NONZERO] = {rt_ref_k_nonzero, RT_ALL},
    [IR_OP_UNIQUE] = {rt_ref_k_unique, RT_ALL},
    [IR_OP_NMS] = {rt_ref_k_nms, RT_FLOATS},
    [IR_OP_ITEM] = {rt_ref_k_item, RT_DT(SYMC_I32) | RT_DT(SYMC_I64)},
    /* IR_OP_CONSTANT: no kernel; the engine holds the data */
};

/* A tensor the kernels may trust: valid dtype and rank, dims >= 0, byte size
 * representable, data present when there are elements. */
static symc_status check_tensor(rt_ctx *c, const rt_ref_tensor *t, const char *kind, uint32_t k) {
    if ((unsigned)t->dtype >= SYMC_DTYPE_COUNT)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s %u has an invalid dtype %d", kind, k, (int)t->dtype);
    if (t->rank < 0 || t->rank > RT_REF_MAX_RANK)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s %u has rank %d, must be 0..%d", kind, k, (int)t->rank,
                           RT_REF_MAX_RANK);
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s %u has a negative dim %lld at axis %d", kind, k,
                               (long long)t->dims[d], (int)d);
        if (!rt_ref_mul_ok(n, t->dims[d], &n))
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s %u has too many elements", kind, k);
    }
    int64_t bytes;
    if (!rt_ref_mul_ok(n, (int64_t)symc_dtype_size(t->dtype), &bytes))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s %u has too many elements", kind, k);
    if (n > 0 && !t->data)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s %u has %lld elements but no data", kind, k, (long long)n);
    return SYMC_OK;
}

static void dtype_list(uint32_t mask, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (int d = 0; d < SYMC_DTYPE_COUNT; d++)
        if (mask & RT_DT(d)) {
            int n = snprintf(buf + len, cap - len, "%s%s", len ? " " : "", symc_dtype_name((symc_dtype)d));
            if (n < 0 || (size_t)n >= cap - len) return;
            len += (size_t)n;
        }
}

symc_status rt_ref_run(ir_op op, const char *node_name, const symc_attr *attrs, uint32_t n_attrs,
                       const rt_ref_tensor *in, uint32_t n_in, rt_ref_tensor *out, uint32_t n_out, symc_error *err) {
    rt_ctx c = {op, node_name ? node_name : "?", ir_op_name(op), attrs, n_attrs, in, n_in, out, n_out, err};
    if ((unsigned)op >= IR_OP_COUNT)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "node '%s': op id %d is not in the op table", c.node,
                               (int)op);
    const kernel_entry *k = &kernels[op];
    if (!k->fn) return rt_ref_fail(&c, SYMC_ERR_UNSUPPORTED, "the reference backend has no kernel for this op");
    const op_limits *l = &limits[op];
    if ((int64_t)n_in < l->min_in || (l->max_in >= 0 && (int64_t)n_in > l->max_in)) {
        if (l->max_in < 0)
            return rt_ref_fail(&c, SYMC_ERR_INVALID_ARG, "has %u inputs, needs at least %d", n_in, l->min_in);
        if (l->min_in == l->max_in)
            return rt_ref_fail(&c, SYMC_ERR_INVALID_ARG, "has %u inputs, needs %d", n_in, l->min_in);
        return rt_ref_fail(&c, SYMC_ERR_INVALID_ARG, "has %u inputs, needs %d to %d", n_in, l->min_in, l->max_in);
    }
    if ((int64_t)n_out < l->min_out || (l->max_out >= 0 && (int64_t)n_out > l->max_out))
        return rt_ref_fail(&c, SYMC_ERR_INVALID_ARG, "has %u outputs, needs %d%s", n_out, l->min_out,
                           l->max_out < 0 ? " or more" : "");
    if ((n_in && !in) || (n_out && !out))
        return rt_ref_fail(&c, SYMC_ERR_INVALID_ARG, "the input or output array is NULL");
    if (n_attrs && !attrs) return rt_ref_fail(&c, SYMC_ERR_INVALID_ARG, "%u attributes but the array is NULL", n_attrs);
    for (uint32_t i = 0; i < n_attrs; i++)
        if (!attrs[i].name) return rt_ref_fail(&c, SYMC_ERR_INVALID_ARG, "attribute %u has no name", i);
    symc_status s;
    for (uint32_t i = 0; i < n_in; i++)
        if ((s = check_tensor(&c, &in[i], "input", i))) return s;
    for (uint32_t i = 0; i < n_out; i++)
        if ((s = check_tensor(&c, &out[i], "output", i))) return s;
    /* a source op (range) has no input 0: its output's dtype is the one checked */
    const rt_ref_tensor *first = n_in ? &in[0] : &out[0];
    if (!(k->dtypes & RT_DT(first->dtype))) {
        char list[64];
        dtype_list(k->dtypes, list, sizeof list);
        return rt_ref_fail(&c, SYMC_ERR_UNSUPPORTED, "dtype %s of %s 0 is not supported (supported: %s)",
                           symc_dtype_name(first->dtype), n_in ? "input" : "output", list);
    }
    return k->fn(&c);
}
