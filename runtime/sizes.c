/* Checked sizes (runtime/engine.h): the dtype table, products of dims with
 * overflow checks, and the message that names a tensor whose size does not
 * fit.
 *
 * A shape in range can still describe more bytes than int64 holds (a batch
 * symbol declared up to 2^62): every byte count the runtime computes from
 * dims (tensor sizes, constants' expected sizes, the library calls'
 * operand extents) is a product checked factor by factor with
 * __builtin_mul_overflow against RT_MAX_BYTES, so an overflowing size is
 * refused with the tensor and its dims instead of wrapping into a small
 * buffer. */
#include <inttypes.h>
#include <stdio.h>

#include "runtime/engine.h"

int rt_checked_product(const int64_t *dims, int32_t rank, int64_t scale, int64_t *out) {
    int64_t n = scale;
    if (n < 0) return 0;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0 || __builtin_mul_overflow(n, dims[d], &n)) return 0;
    }
    if (n > RT_MAX_BYTES) return 0;
    *out = n;
    return 1;
}

static void dims_at(const rt_engine *e, const int64_t *slots, uint32_t t, int64_t *dims) {
    const rt_tensor *x = &e->tensors[t];
    for (int32_t d = 0; d < x->rank; d++) dims[d] = slots[x->dims[d]];
}

int rt_tensor_bytes(const rt_engine *e, const int64_t *slots, uint32_t t, int64_t *bytes) {
    const rt_tensor *x = &e->tensors[t];
    int64_t dims[IR_MAX_RANK];
    dims_at(e, slots, t, dims);
    return rt_checked_product(dims, x->rank, (int64_t)symc_dtype_size(x->dtype), bytes);
}

void rt_format_dims(const int64_t *dims, int32_t rank, char *buf, size_t cap) {
    if (!cap) return;
    size_t used = 0;
    buf[0] = '\0';
    for (int32_t d = 0; d < rank; d++) {
        int n = snprintf(buf + used, cap - used, "%s%" PRId64, d ? ", " : "[", dims[d]);
        if (n < 0 || (size_t)n >= cap - used) {
            if (cap >= 5) snprintf(buf + cap - 5, 5, "...]");
            return;
        }
        used += (size_t)n;
    }
    snprintf(buf + used, cap - used, rank ? "]" : "[]");
}

symc_status rt_size_overflow(symc_error *err, const char *what, const char *name, const int64_t *dims, int32_t rank,
                             symc_dtype dtype) {
    char shape[160];
    rt_format_dims(dims, rank, shape, sizeof shape);
    for (int32_t d = 0; d < rank; d++)
        if (dims[d] < 0)
            return symc_error_setf(err, SYMC_ERR_RANGE, "%s '%s' has shape %s (%s): dim %d is negative", what, name,
                                   shape, symc_dtype_name(dtype), (int)d);
    return symc_error_setf(err, SYMC_ERR_OVERFLOW,
                           "%s '%s' of shape %s (%s) is too large: its size in bytes does not fit in 64 bits (at most "
                           "%" PRId64 " bytes)",
                           what, name, shape, symc_dtype_name(dtype), (int64_t)RT_MAX_BYTES);
}

symc_status rt_tensor_overflow(symc_error *err, const rt_engine *e, const int64_t *slots, uint32_t t,
                               const char *what) {
    const rt_tensor *x = &e->tensors[t];
    int64_t dims[IR_MAX_RANK];
    dims_at(e, slots, t, dims);
    return rt_size_overflow(err, what, x->name, dims, x->rank, x->dtype);
}
