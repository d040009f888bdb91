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

/* Symbolic shape inference (infer_shapes.c): gives every node output its symbolic
 * shape from the op's rule, in node order. Facts a rule needs but cannot
 * prove become guards with the node as provenance; a guard that would narrow
 * a declared range, or never holds, fails the pass with the guard's
 * explanation and a suggested fix. Small integer tensors (shape_of and what is
 * computed from it) also get symbolic element values (ir_tensor.value). */
symc_status pass_infer_shapes(ir_module *m, symc_error *err);
/* The same for one node, whose inputs must already have shapes. */
symc_status pass_infer_node(ir_module *m, uint32_t node, symc_error *err);
/* Refuses declared ranges under which some tensor's byte size can pass
 * INT64_MAX (size_check.c): the error names the tensor, the node producing it,
 * the symbols with their ranges, and the largest max that would fit. */
symc_status pass_check_sizes(ir_module *m, symc_error *err);
/* Inference batch_norm folded into the conv2d before it (fold.c): scaled
 * constant weights, a bias, the batch norm an identity nobody reads. */
symc_status pass_fold_batch_norm(ir_module *m, symc_error *err);
/* A constant per-column scale after a matmul or gemm (and its constant bias
 * add) folded into the constant weights and bias (fold.c): g * (x @ W + b)
 * becomes x @ W' + b', the mul an identity nobody reads (ConvNeXt's layer
 * scale, so a residual add after it can be the GEMM's C). */
symc_status pass_fold_scale(ir_module *m, symc_error *err);
/* The exact GELU decomposed by exporters, x * 0.5 * (1 + erf(x / sqrt 2)) in
 * its two node orders (fold_gelu.c), rewritten into one gelu node (approximate
 * "none") in place of its last mul, the rest left unread for dce; only when
 * the chain is private, of one float dtype and x's shape. */
symc_status pass_fold_gelu(ir_module *m, symc_error *err);
/* The RMS norm decomposed by exporters (transformers' LlamaRMSNorm, T5LayerNorm: w * (x *
 * rsqrt(mean(x^2, -1) + eps)) in its node forms) rewritten into one rms_norm node in place of its
 * last mul (fold_norm.c), the rest left unread for dce; only when the chain is private, of one
 * float dtype and x's shape. *folded (may be NULL): how many. SYMC_FOLD_RMS_NORM=0: off. */
symc_status pass_fold_rms_norm(ir_module *m, uint32_t *folded, symc_error *err);
/* Sibling projections of one hidden state into attention heads (Q, K and V as three matmuls by
 * constant weights, each with its constant bias) merged into one matmul by the concatenated
 * weights, one bias add and a split along the last axis that the fused attention reads in place
 * (merge_proj.c); the old nodes left unread for dce. SYMC_MERGE_PROJECTIONS=0: off. */
symc_status pass_merge_projections(ir_module *m, symc_error *err);
/* An unbind of a fused projection into heads (timm's qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1,
 * 4).unbind(0): reshape, transpose, split along axis 0, squeezes) rewritten into GPT-2's form, a
 * split along the last axis, a reshape into heads and a transpose per part, which the fused attention
 * reads in place (merge_proj.c); the old nodes left unread for dce. SYMC_UNBIND_HEADS=0: off. */
symc_status pass_unbind_heads(ir_module *m, symc_error *err);
/* The compile driver's evaluator for pass_fold_constants: the values of tensors ts[0..n) of m,
 * each computed from constants alone with static dims, into data[i] (malloc'd, row-major in the
 * tensor's dtype; the caller frees what it does not keep). */
typedef symc_status (*pass_evaluate_fn)(const ir_module *m, const uint32_t *ts, uint32_t n, uint8_t **data,
                                        symc_error *err);
/* Constant folding (fold_const.c): the tensors computed from constants alone (static dims, at most
 * 16 MiB each, ops that make no sizes) that something else reads become constants (those of at
 * most 1 MiB), evaluated by `evaluate`; dce removes what only they read. *folded (may be NULL):
 * how many. No evaluator: nothing. SYMC_FOLD_CONSTANTS=0: off. */
symc_status pass_fold_constants(ir_module *m, pass_evaluate_fn evaluate, uint32_t *folded, symc_error *err);
/* Copies that change nothing (identity.c): identity, a pad of zero width, a slice of whole axes, a
 * transpose by the identity, a cast or expand to the same type and shape, a concat of one operand;
 * their readers read the input instead (graph outputs keep theirs); dce removes them later.
 * *dropped (may be NULL): how many. SYMC_DROP_IDENTITIES=0: off. */
symc_status pass_drop_identities(ir_module *m, uint32_t *dropped, symc_error *err);
/* torch.roll's export, concat(slice(x)[k:n], slice(x)[0:k]) along one axis of constant size n,
 * as one gather of x by the constant indices (i + k) mod n (roll.c); the slices and the concat left
 * for dce. *rolled (may be NULL): how many. SYMC_ROLL_GATHER=0: off. */
symc_status pass_roll_as_gather(ir_module *m, uint32_t *rolled, symc_error *err);
/* Strided slices of one tensor concatenated along its last axis, Swin's patch merge
 * cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], ..], -1), as one space-to-depth: a reshape, a transpose
 * keeping the last axis innermost and a reshape (space_to_depth.c); the slices and the concat left
 * for dce. *count (may be NULL): how many. SYMC_SPACE_TO_DEPTH=0: off. */
symc_status pass_space_to_depth(ir_module *m, uint32_t *count, symc_error *err);
/* A private chain of row moves (gathers by constant indices along middle axes, transposes and
 * reshapes keeping the first and last axes: Swin's rolls and window partitions) as one gather of
 * the rows by a constant table (move_chain.c); the chain left for dce. *count (may be NULL): how
 * many. SYMC_COMPOSE_MOVES=0: off. */
symc_status pass_compose_moves(ir_module *m, uint32_t *count, symc_error *err);
/* A convolution whose kernel tiles its input (kernel = stride, no padding or dilation, one group:
 * ViT's, Swin's and ConvNeXt's patch embedding) rewritten into a reshape and transpose of the
 * input into patches and one matmul by the reshaped weights (patchify.c); the old nodes left
 * unread for dce. SYMC_PATCHIFY=0: off. */
symc_status pass_patchify(ir_module *m, symc_error *err);
/* Helpers of the graph rewrites (rewrite.c): the one live node reading t (uses[t] == 1, t not a
 * graph output: is_out), or IR_NONE; a tensor and node name not yet taken (base + suffix [+ .N]);
 * node j moved to position i <= j (producers renumbered); node's result t (any output) replaced by
 * a fresh unread tensor (t then takes a new producer). */
uint32_t pass_only_reader(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t t);
void pass_fresh_name(const ir_module *m, const char *base, const char *suffix, char *buf, size_t cap);
void pass_move_before(ir_module *m, uint32_t j, uint32_t i);
symc_status pass_retire(ir_module *m, uint32_t node, uint32_t t, symc_error *err);
/* A new node op(in) named base + suffix (fresh), made by pass `source`: its result *out, or a new
 * tensor of in[0]'s dtype and `dims` when *out is IR_NONE; attr (may be NULL) its one attribute. */
symc_status pass_add_step(ir_module *m, const char *source, ir_op op, const char *base, const char *suffix,
                          const uint32_t *in, uint32_t n_in, int32_t rank, const sym_expr *dims, const ir_attr *attr,
                          uint32_t *out, uint32_t *node, symc_error *err);
/* A new constant tensor named base + suffix (fresh) of dtype dt and dims[0..rank), holding data
 * (size bytes, malloc'd: the module takes it), made by a new constant node of pass `source`
 * (appended): *t the tensor, *node the node. */
symc_status pass_add_constant(ir_module *m, const char *source, const char *base, const char *suffix, symc_dtype dt,
                              int32_t rank, const sym_expr *dims, uint8_t *data, size_t size, uint32_t *t,
                              uint32_t *node, symc_error *err);
/* More rewrite helpers (rewrite.c): appended nodes made[0..n) moved to at.. and all but constants
 * inferred; live reader counts and graph-output flags recomputed (old arrays freed; `pass` names
 * the pass in the error); whether env is "0" (a pass's off switch). */
symc_status pass_place(ir_module *m, const uint32_t *made, uint32_t n, uint32_t at, symc_error *err);
symc_status pass_reader_counts(const ir_module *m, uint32_t **uses, uint8_t **is_out, const char *pass,
                               symc_error *err);
int pass_switched_off(const char *env);
/* A rewriting pass's walk (rewrite.c): at(node i) rewrites what starts there (*rewrote = 1) or
 * nothing, given m's live reader counts; after a rewrite the walk starts again on the new module,
 * until none is left or at fails. *count (may be NULL): the rewrites. */
typedef symc_status (*pass_rewrite_fn)(ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i,
                                       int *rewrote, symc_error *err);
symc_status pass_rewrite_walk(ir_module *m, const char *pass, pass_rewrite_fn at, uint32_t *count, symc_error *err);
/* Dead-node removal (dce.c): deletes the nodes no graph output depends on (ir_uses' liveness;
 * no op has a side effect), with their tensors and the constants only they held; keeps graph
 * inputs and the order of the rest, and drops the fusion plan when it removes anything.
 * *removed (may be NULL): how many nodes went. */
symc_status pass_remove_dead(ir_module *m, uint32_t *removed, symc_error *err);

/* ---- precision (mixed_precision.c) -------------------------------------------------------- */
/* What a target can run in half precision: half_ok(m, node) says whether the
 * target's kernel for `node` reads and writes f16/bf16 storage (computing in
 * fp32). The CUDA target's answer is cg_cuda_half_ok (codegen/cuda_target.c),
 * which its emitter checks too; without rules every op may be half (the
 * reference backend runs every op on half storage, math in double). */
typedef struct pass_precision_rules {
    const char *name; /* the target's */
    int (*half_ok)(const ir_module *m, uint32_t node);
} pass_precision_rules;

/* The largest calibrated max |value| an f32 tensor may have to be stored in
 * fp16 (max finite 65504): 16x headroom, because calibration sees seeded
 * random inputs at one size, not the worst input, and a tensor near the
 * limit there can overflow with real data. */
#define PASS_FP16_SAFE_MAX 4096.0

/* Attention's Q and K are stored in half (the logits' matmul, fp32, reading them through
 * widening casts) when est = calibrated max |logit| times the half type's unit roundoff (2^-11
 * for f16, 2^-8 for bf16) is at most these; else they stay in the softmax's fp32 island, back
 * to the projections making them (mixed_precision.c, released_logits). est approximates the logits'
 * absolute error, so the probabilities' relative error; on the e2e attention models the output
 * error the half Q and K add was 1.6-2.1 times est. The limits are 0.3 of the accuracy targets
 * (1e-2 for f16, 2e-2 for bf16), leaving the rest to the other roundings. */
#define PASS_LOGIT_ERR_F16 3e-3
#define PASS_LOGIT_ERR_BF16 6e-3

typedef struct pass_precision_options {
    symc_dtype half;                   /* SYMC_F16 or SYMC_BF16; anything else: the pass changes nothing */
    const pass_precision_rules *rules; /* NULL: every op may run in half */
    const char *fp32_layers;           /* node names and/or op names kept fp32, comma separated; NULL: none */
    const double *max_abs;             /* per tensor (indices before the pass): calibrated max |value|
                                          (NaN: unknown); NULL: no calibration */
    uint32_t n_max_abs;
    double fp16_limit; /* for f16: tensors whose max_abs exceeds it stay f32 (PASS_FP16_SAFE_MAX) */
} pass_precision_options;

/* Half storage (mixed_precision.c): converts the module's f32 tensors and constant
 * data to o->half, except the fp32 islands (ops the rules refuse, the
 * --fp32-layers list, calibrated tensors over the fp16 limit); graph inputs
 * and outputs keep their declared dtypes, with casts at the boundary. */
symc_status pass_precision(ir_module *m, const pass_precision_options *o, symc_error *err);

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
#define PASS_ATTENTION_READS 16
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
    /* library call `lib` (with its members chosen) can run as a kernel of the target's own that
     * applies an elementwise group to its result before the store (IR_FUSE_EPILOGUE under a
     * library root); NULL or 0: the group stays a kernel of its own */
    int (*library_epilogue)(ir_module *m, uint32_t lib);
    /* PASS_ROW_* flags of node's kernel (0: not a row kernel) */
    unsigned (*row_kernel)(ir_module *m, uint32_t node);
    /* row kernel `second` can compute row kernel `first` (one with a per-element result, whose
     * private result is its data input) in its own kernel */
    int (*row_chain)(ir_module *m, uint32_t first, uint32_t second);
    /* a group computed inside another kernel: at most this many nodes, and leaf tensors when
     * it is a row kernel's input or epilogue */
    uint32_t max_group_nodes, row_input_leaves, epilogue_leaves;
    /* the largest head dim (D, Dv) of the target's fused attention kernel, which runs every
     * pattern fuse_attention.c matches (head dims multiples of 4); 0: no fused attention */
    int64_t attention_max_head;
    /* convolution `node` has a kernel reading its input and writing its result channels-last
     * (NHWC) when a transpose to NCHW makes its input and a transpose to NHWC reads its result
     * (IR_FUSE_LAYOUT); NULL: none */
    int (*conv_channels_last)(const ir_module *m, uint32_t node);
} pass_fuse_rules;

/* The layout pass (layout.c): rank-4 NCHW<->NHWC transposes cancelled and moved through
 * elementwise nodes toward their cancellation, and the convolutions `rules` run channels-last
 * given NHWC operands (NULL rules: none), so a channels-last region keeps its activations NHWC. */
symc_status pass_layout(ir_module *m, const pass_fuse_rules *rules, symc_error *err);

/* ---- fused attention (fuse_attention.c) -------------------------------------------------- */
/* The fuse pass's round 2 on plan m->fuse (just made, dead nodes marked; u its uses): each
 * softmax(f(Q·Kᵀ))·V the rules' kernel runs becomes an attention root with its claimed members
 * and its match stored in the plan (ir_fuse_add_attention). Tensors the kernel reads past its
 * own nodes get one more reader in u. Nothing when rules->attention_max_head is 0. */
symc_status pass_fuse_attention(ir_module *m, ir_uses *u, const pass_fuse_rules *rules, symc_error *err);
/* The match at matmul `node` alone (1: found, into a; 0: none): what the round would claim, with
 * the tensors its kernel reads that are no covered node's input (at most PASS_ATTENTION_READS,
 * *n_reads of them); it interns expressions in m->syms. */
int pass_attention_match(ir_module *m, const ir_uses *u, uint32_t node, int64_t max_head, ir_attention *a,
                         uint32_t *reads, uint32_t *n_reads);
/* scalar tensor t of a match (an op's scalar) is a constant: its value, which the kernel uses
 * as a literal instead of reading t */
int pass_attention_literal(const ir_module *m, uint32_t t, double *out);

/* Fusion planning (fuse.c): groups the nodes into the steps a target with
 * these rules runs, and stores them as the module's plan (ir_fuse). NULL
 * rules: no target to plan for, the module is left without a plan. */
symc_status pass_fuse(ir_module *m, const pass_fuse_rules *rules, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
