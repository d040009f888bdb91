/* Shared internals of the reference kernels (runtime/ref/ref_kernels*.c).
 *
 * Every kernel receives one rt_ctx: the op, the node name, attributes, inputs
 * and outputs, and the error to fill. rt_ref_run has already checked the
 * arity against ops.def, each tensor's rank, dims, data pointer and dtype,
 * and that input 0's dtype is one the kernel supports; a kernel checks the
 * rest (other inputs, attributes, the output shape and dtype) and computes.
 *
 * Elements are read and written through two families of accessors, so a
 * kernel is written once for every dtype (each is a call through the dtype's
 * row of common/dtype_traits.h):
 *   rt_ld_f / rt_st_f: float domain (f64). Loading f16/bf16/f32 is exact;
 *     storing rounds once to the destination (nearest even; to an integer
 *     dtype it truncates toward zero and saturates, NaN -> 0; to bool, != 0).
 *   rt_ld_i / rt_st_i: integer domain (int64). Storing wraps to a narrower
 *     integer dtype like a two's-complement cast, rounds correctly to a float
 *     dtype, and gives 0/1 for bool. u64 travels as its bit pattern: loads
 *     and wrapping stores are exact, and the ops where its sign matters
 *     (order, division, float conversion) test rt_is_u64 and work on
 *     uint64_t (rt_st_u stores such a value). */
#ifndef SYMC_RUNTIME_REF_KERNELS_INTERNAL_H
#define SYMC_RUNTIME_REF_KERNELS_INTERNAL_H

#include <stdint.h>

#include "common/dtype_traits.h"
#include "runtime/ref/ref_kernels.h"

typedef struct rt_ctx {
    ir_op op;
    const char *node;   /* never NULL */
    const char *opname; /* ops.def name */
    const symc_attr *attrs;
    uint32_t n_attrs;
    const rt_ref_tensor *in;
    uint32_t n_in;
    rt_ref_tensor *out;
    uint32_t n_out;
    symc_error *err;
} rt_ctx;

typedef symc_status (*rt_kernel_fn)(rt_ctx *c);

/* dtype sets, as bit masks over symc_dtype */
#define RT_DT(d) (1u << (unsigned)(d))
#define RT_FLOATS (RT_DT(SYMC_F32) | RT_DT(SYMC_F16) | RT_DT(SYMC_BF16) | RT_DT(SYMC_F64))
#define RT_INTS                                                                                                \
    (RT_DT(SYMC_I32) | RT_DT(SYMC_I64) | RT_DT(SYMC_I8) | RT_DT(SYMC_U8) | RT_DT(SYMC_I16) | RT_DT(SYMC_U16) | \
     RT_DT(SYMC_U32) | RT_DT(SYMC_U64))
#define RT_BOOLS RT_DT(SYMC_BOOL)
#define RT_NUMS (RT_FLOATS | RT_INTS)
#define RT_ALL (RT_NUMS | RT_BOOLS)

static inline int rt_is_float(symc_dtype dt) { return (RT_DT(dt) & RT_FLOATS) != 0; }
static inline int rt_is_u64(symc_dtype dt) { return dt == SYMC_U64; }

/* ---- errors (every message starts with "node '<name>' (<op>): ") ---------- */
symc_status rt_ref_fail(rt_ctx *c, symc_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* "[2, 3, 4]" into buf */
const char *rt_ref_shape_str(char *buf, size_t cap, int32_t rank, const int64_t *dims);
/* The caller's out[k] must have this dtype and shape; SYMC_ERR_INTERNAL if not. */
symc_status rt_ref_check_out(rt_ctx *c, uint32_t k, symc_dtype dt, int32_t rank, const int64_t *dims);
/* in[k] must have dtype dt (SYMC_ERR_INVALID_ARG naming both otherwise). */
/* For an op that produces a size (ir_produced_dim): output k must be dt,
 * of this rank, with dims equal to dims[] except at `dim`, where the caller
 * gave the capacity (the memory planned at the bound); count, the real
 * size, must not exceed it. On success the output's dim becomes count: the
 * kernel writes it contiguous at the real shape and the caller reads the
 * count back from there. */
symc_status rt_ref_produced_out(rt_ctx *c, uint32_t k, symc_dtype dt, int32_t rank, const int64_t *dims, int32_t dim,
                                int64_t count);
symc_status rt_ref_check_in_dtype(rt_ctx *c, uint32_t k, symc_dtype dt);
/* in[k] must be a float dtype (norm scale/bias/statistics may differ from x). */
symc_status rt_ref_check_in_float(rt_ctx *c, uint32_t k, const char *role);

/* ---- attributes ------------------------------------------------------------ */
/* Each getter returns SYMC_OK and the default (or sets *present = 0) when the
 * attribute is absent and not required; a present attribute of the wrong kind
 * is an error. present may be NULL. */
const symc_attr *rt_ref_attr_find(const rt_ctx *c, const char *name);
symc_status rt_ref_attr_int(rt_ctx *c, const char *name, int required, int64_t dflt, int64_t *out);
symc_status rt_ref_attr_float(rt_ctx *c, const char *name, int required, double dflt, double *out);
symc_status rt_ref_attr_ints(rt_ctx *c, const char *name, int required, const int64_t **v, uint32_t *n, int *present);
symc_status rt_ref_attr_str(rt_ctx *c, const char *name, int required, const char *dflt, const char **out);
symc_status rt_ref_attr_dtype(rt_ctx *c, const char *name, symc_dtype *out);
/* An ints attribute of exactly n entries (or the default when absent). */
symc_status rt_ref_attr_ints_n(rt_ctx *c, const char *name, uint32_t n, const int64_t *dflt, int64_t *out);

/* axis in [-rank, rank) -> [0, rank); `what` names it in the message */
symc_status rt_ref_norm_axis(rt_ctx *c, int64_t axis, int32_t rank, const char *what, int32_t *out);

/* ---- elements ---------------------------------------------------------------- */
/* Through the element types' one table (common/dtype_traits.h): one row
 * lookup and one call an element, in place of a switch on the dtype. */
static inline double rt_ld_f(const rt_ref_tensor *t, int64_t i) {
    return cm_dtype_traits_of(t->dtype)->load_f64(t->data, (size_t)i);
}
static inline int64_t rt_ld_i(const rt_ref_tensor *t, int64_t i) {
    return cm_dtype_traits_of(t->dtype)->load_i64(t->data, (size_t)i);
}
static inline void rt_st_f(rt_ref_tensor *t, int64_t i, double v) {
    cm_dtype_traits_of(t->dtype)->store_f64(t->data, (size_t)i, v);
}
static inline void rt_st_i(rt_ref_tensor *t, int64_t i, int64_t v) {
    cm_dtype_traits_of(t->dtype)->store_i64(t->data, (size_t)i, v);
}
/* an unsigned 64-bit value: one correct rounding to a float dtype, else as rt_st_i */
static inline void rt_st_u(rt_ref_tensor *t, int64_t i, uint64_t v) {
    cm_dtype_traits_of(t->dtype)->store_u64(t->data, (size_t)i, v);
}
/* dst[di] = src[si], same dtype, bit for bit */
void rt_ref_copy_elem(rt_ref_tensor *dst, int64_t di, const rt_ref_tensor *src, int64_t si);
/* float -> integer conversion of cast: truncate toward zero, saturate, NaN -> 0 */
int64_t rt_ref_f64_to_i64_sat(double v);

/* ---- shapes and indexing ------------------------------------------------------ */
int64_t rt_ref_numel_dims(int32_t rank, const int64_t *dims); /* dims already checked */
/* *out = a * b, or 0 (with *out untouched) on int64 overflow or negative input */
int rt_ref_mul_ok(int64_t a, int64_t b, int64_t *out);
void rt_ref_strides(int32_t rank, const int64_t *dims, int64_t *strides);
void rt_ref_unravel(int64_t i, int32_t rank, const int64_t *dims, int64_t *coord);
/* NumPy broadcast of n tensors' shapes; error names the inputs and shapes */
symc_status rt_ref_broadcast_shape(rt_ctx *c, const rt_ref_tensor *const *ts, uint32_t n, int32_t *rank, int64_t *dims);
/* strides of t viewed at out_rank dims (right aligned), 0 where t broadcasts */
void rt_ref_bcast_strides(const rt_ref_tensor *t, int32_t out_rank, int64_t *strides);
/* offset of coord (out_rank dims) under those strides */
static inline int64_t rt_offset(int32_t rank, const int64_t *coord, const int64_t *strides) {
    int64_t o = 0;
    for (int32_t d = 0; d < rank; d++) o += coord[d] * strides[d];
    return o;
}
/* advances coord like an odometer over dims (row-major) */
static inline void rt_next(int32_t rank, const int64_t *dims, int64_t *coord) {
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (++coord[d] < dims[d]) return;
        coord[d] = 0;
    }
}

/* Output length of a sliding window along one axis (conv and pooling):
 * floor((in + pad_b + pad_e - dil*(k-1) - 1) / stride) + 1, or with ceil_mode
 * the ceiling, dropping a last window that would start in the end padding
 * (PyTorch's rule). Checks k, stride, dil >= 1, pads >= 0 and that the window
 * fits the padded input; `axis` names the dim in messages. */
symc_status rt_ref_window_out(rt_ctx *c, const char *axis, int64_t in, int64_t k, int64_t stride, int64_t dil,
                              int64_t pad_b, int64_t pad_e, int ceil_mode, int64_t *out);

/* ---- kernels (one per file group) ------------------------------------------------ */
/* ref_kernels_elementwise.c */
symc_status rt_ref_k_unary(rt_ctx *c);
symc_status rt_ref_k_cast(rt_ctx *c);
symc_status rt_ref_k_not(rt_ctx *c);
symc_status rt_ref_k_is_nan_inf(rt_ctx *c);
symc_status rt_ref_k_binary(rt_ctx *c);
symc_status rt_ref_k_where(rt_ctx *c);
/* ref_kernels_reduce.c */
symc_status rt_ref_k_reduce(rt_ctx *c);
symc_status rt_ref_k_arg_reduce(rt_ctx *c);
symc_status rt_ref_k_softmax(rt_ctx *c);
symc_status rt_ref_k_layer_norm(rt_ctx *c);
symc_status rt_ref_k_rms_norm(rt_ctx *c);
symc_status rt_ref_k_batch_norm(rt_ctx *c);
/* ref_kernels_contract.c */
symc_status rt_ref_k_matmul(rt_ctx *c);
symc_status rt_ref_k_gemm(rt_ctx *c);
symc_status rt_ref_k_conv2d(rt_ctx *c);
symc_status rt_ref_k_conv_transpose(rt_ctx *c);
/* ref_kernels_window.c */
symc_status rt_ref_k_max_pool2d(rt_ctx *c);
symc_status rt_ref_k_avg_pool2d(rt_ctx *c);
symc_status rt_ref_k_global_avg_pool(rt_ctx *c);
/* ref_kernels_move.c */
symc_status rt_ref_k_reshape(rt_ctx *c);
symc_status rt_ref_k_transpose(rt_ctx *c);
symc_status rt_ref_k_expand(rt_ctx *c);
symc_status rt_ref_k_concat(rt_ctx *c);
symc_status rt_ref_k_slice(rt_ctx *c);
symc_status rt_ref_k_gather(rt_ctx *c);
symc_status rt_ref_k_squeeze(rt_ctx *c);
symc_status rt_ref_k_unsqueeze(rt_ctx *c);
symc_status rt_ref_k_flatten(rt_ctx *c);
symc_status rt_ref_k_split(rt_ctx *c);
symc_status rt_ref_k_pad(rt_ctx *c);
symc_status rt_ref_k_shape_of(rt_ctx *c);
symc_status rt_ref_k_range(rt_ctx *c);
symc_status rt_ref_k_tile(rt_ctx *c);
symc_status rt_ref_k_trilu(rt_ctx *c);
symc_status rt_ref_k_gather_elements(rt_ctx *c);
/* ref_kernels_index.c */
symc_status rt_ref_k_topk(rt_ctx *c);
symc_status rt_ref_k_cumsum(rt_ctx *c);
symc_status rt_ref_k_gather_nd(rt_ctx *c);
symc_status rt_ref_k_scatter_nd(rt_ctx *c);
symc_status rt_ref_k_scatter_elements(rt_ctx *c);
/* ref_kernels_resize.c */
symc_status rt_ref_k_resize(rt_ctx *c);
/* ref_kernels_sample.c */
symc_status rt_ref_k_grid_sample(rt_ctx *c);
symc_status rt_ref_k_roi_align(rt_ctx *c);
/* ref_kernels_index.c */
symc_status rt_ref_k_nonzero(rt_ctx *c);
symc_status rt_ref_k_item(rt_ctx *c);
/* ref_kernels_select.c */
symc_status rt_ref_k_unique(rt_ctx *c);
symc_status rt_ref_k_nms(rt_ctx *c);
/* ref_kernels_dft.c */
symc_status rt_ref_k_dft(rt_ctx *c);
/* ref_kernels_window.c */
symc_status rt_ref_k_max_pool_indices(rt_ctx *c);
symc_status rt_ref_k_col2im(rt_ctx *c);
/* ref_kernels_contract.c */
symc_status rt_ref_k_det(rt_ctx *c);

#endif
