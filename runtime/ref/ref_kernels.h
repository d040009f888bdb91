/* ref_kernels.h: the CPU reference kernels, one for every op of common/ops.def
 * except `constant` (whose data the engine already holds).
 *
 * They are the oracle every GPU kernel is tested against, so they aim at
 * exactness and plain readability, not speed: plain loops over contiguous
 * row-major tensors, float math in f64 (sums, means, matmul, conv, norms and
 * softmax accumulate in f64), one correctly rounded store per output element
 * (round to nearest even, also for f16 and bf16), exact integer arithmetic.
 *
 * The caller (the CPU backend of the runtime, or a test) has already computed
 * every output's dims from the shape programs and allocated out[k].data. A
 * kernel recomputes the output shape and dtype from its inputs and attributes
 * and fails with SYMC_ERR_INTERNAL, naming the node, the op and both shapes,
 * when they disagree: that cross-checks symbolic shape inference.
 *
 * Attributes are the public symc_attr. Attributes of kind `dims` in ops.def
 * (reshape/expand "shape", slice "starts"/"ends", split "sizes", pad "pads")
 * must arrive evaluated, as SYMC_ATTR_INTS (reshape keeps -1 for the inferred
 * entry). Optional inputs are trailing: n_in says which are present.
 *
 * The kernels never allocate, print or abort, and keep no state: bad input
 * (wrong arity, ranks, axes, indices, integer division by zero, unsupported
 * dtype) yields a status and a message in *err that starts with
 * "node '<name>' (<op>): ". Output buffers must not overlap input buffers.
 *
 * An op whose output size depends on the data (nonzero, unique, nms: the
 * dim ir_produced_dim names) is called with that dim of out[k].dims at its
 * capacity, the size memory was planned for; the kernel writes the output
 * contiguous at its real size, sets that dim to the real size, and fails
 * with SYMC_ERR_RANGE when the real size exceeds the capacity. */
#ifndef SYMC_RUNTIME_REF_KERNELS_H
#define SYMC_RUNTIME_REF_KERNELS_H

#include <stdint.h>

#include "common/ops.h" /* ir_op, ir_op_name, IR_MAX_RANK */
#include "symc/dtype.h" /* symc_dtype_size, symc_dtype_name */
#include "symc/attr.h"
#include "symc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RT_REF_MAX_RANK IR_MAX_RANK

/* A contiguous row-major tensor. bool is one byte (0 or 1); f16 and bf16 are
 * stored as their uint16_t bit patterns. data may be NULL when a dim is 0. */
typedef struct rt_ref_tensor {
    symc_dtype dtype;
    int32_t rank; /* 0 (a scalar) .. RT_REF_MAX_RANK */
    int64_t dims[RT_REF_MAX_RANK];
    void *data;
} rt_ref_tensor;

/* Runs node `node_name` (used in messages only; may be NULL) applying `op` to
 * in[0..n_in) and writes out[0..n_out). */
symc_status rt_ref_run(ir_op op, const char *node_name, const symc_attr *attrs, uint32_t n_attrs,
                       const rt_ref_tensor *in, uint32_t n_in, rt_ref_tensor *out, uint32_t n_out, symc_error *err);

/* ---- helpers shared with tests and the GPU comparison harness ----------
 * (op and dtype names and sizes: ir_op_name in common/ops.h, symc_dtype_name
 * and symc_dtype_size in symc/dtype.h) */
int64_t rt_ref_numel(const rt_ref_tensor *t); /* product of dims, -1 on overflow/bad rank */

/* the f16/bf16 conversions: symc/dtype.h (symc_f16_to_f64, ...) */

#ifdef __cplusplus
}
#endif
#endif
