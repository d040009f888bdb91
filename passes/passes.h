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

/* ---- fusion (fuse.c) ---------------------------------------------------------------- */
/* What a target can run fused. The fuse pass finds the candidates (private
 * results, shapes, node order, what is already claimed) and asks these
 * questions; a target answers for its own kernels and libraries
 * (codegen/target.h: the CUDA target's). Queries may intern expressions in
 * m->syms. */
enum {
    PASS_ROW_INPUT = 1,   /* one team per contiguous row of in[0]: an elementwise producer of in[0]
                             can be computed inside the kernel */
    PASS_ROW_EPILOGUE = 2 /* and the result is per element of the row: an elementwise consumer of
                             the result's shape can be applied before the store */
};
typedef struct pass_fuse_rules {
    const char *name; /* the target's; recorded in the plan */
    /* node runs as a library call (a GEMM, a convolution) */
    int (*library)(ir_module *m, uint32_t node);
    /* library call `node` adds a bias from its own inputs (gemm's C as a bias vector, conv's bias) */
    int (*library_has_bias)(ir_module *m, uint32_t node);
    /* library call `lib` can absorb node k in `role`: IR_FUSE_TRANSPOSE (k makes one of its
     * operands), IR_FUSE_BIAS, IR_FUSE_ACTIVATION or IR_FUSE_RESIDUAL (k reads its result);
     * the pass has checked the structure (see fuse.c) */
    int (*library_takes)(ir_module *m, uint32_t lib, uint32_t k, ir_fuse_role role);
    /* PASS_ROW_* flags of node's kernel (0: not a row kernel) */
    unsigned (*row_kernel)(ir_module *m, uint32_t node);
    /* row kernel `second` can compute row kernel `first` (one with a per-element result, whose
     * private result is its data input) in its own kernel */
    int (*row_chain)(ir_module *m, uint32_t first, uint32_t second);
    /* a group computed inside another kernel: at most this many nodes, and leaf tensors when
     * it is a row kernel's input or epilogue */
    uint32_t max_group_nodes, row_input_leaves, epilogue_leaves;
    /* the nodes a fused attention kernel at matmul `node` would compute besides the matmul (at
     * most cap, into claimed), or 0 when the pattern around it is not one it runs */
    uint32_t (*attention)(ir_module *m, const ir_uses *u, uint32_t node, uint32_t *claimed, uint32_t cap);
} pass_fuse_rules;

/* Fusion planning (fuse.c): groups the nodes into the steps a target with
 * these rules runs, and stores them as the module's plan (ir_fuse). NULL
 * rules: no target to plan for, the module is left without a plan. */
symc_status pass_fuse(ir_module *m, const pass_fuse_rules *rules, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
