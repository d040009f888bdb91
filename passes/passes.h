/* passes: functions on the module, run in the order of pipeline.c.
 *
 * Each pass takes the module and a symc_error and either completes or leaves
 * a message naming the node, op, tensor, symbol and range at fault. */
#ifndef SYMC_PASSES_PASSES_H
#define SYMC_PASSES_PASSES_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Symbolic shape inference (shape.c): gives every node output its symbolic
 * shape from the op's rule, in node order. Facts a rule needs but cannot
 * prove become guards with the node as provenance; a guard that would narrow
 * a declared range, or never holds, fails the pass with the guard's
 * explanation and a suggested fix. Small integer tensors (shape_of and what is
 * computed from it) also get symbolic element values (ir_tensor.value). */
symc_status pass_infer_shapes(ir_module *m, symc_error *err);
/* The same for one node, whose inputs must already have shapes. */
symc_status pass_infer_node(ir_module *m, uint32_t node, symc_error *err);
/* Refuses declared ranges under which some tensor's byte size can pass
 * INT64_MAX (sizes.c): the error names the tensor, the node producing it,
 * the symbols with their ranges, and the largest max that would fit. */
symc_status pass_check_sizes(ir_module *m, symc_error *err);
/* Inference batch_norm folded into the conv2d before it (fold.c): scaled
 * constant weights, a bias, the batch norm an identity nobody reads. */
symc_status pass_fold_batch_norm(ir_module *m, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
