/* codegen targets: what a backend emits into an engine, and the builder it
 * emits through (internal to codegen/).
 *
 * cg_build_engine makes one cg_builder per compile: every size the engine
 * needs is a slot of one shape program (cg_slot dedupes by expression
 * handle), and a target adds kernels (CUDA C appended to `source`, one entry
 * point each), steps (kernel launches, library calls, copies) and tensor
 * aliases. A target is a struct of function pointers (docs/ARCHITECTURE.md, "A new backend"): `emit`
 * walks the module's fused groups (its plan, passes/fuse.c) and fills the
 * builder; `compile` turns `source` into modules (cubin + PTX each); `fuse` answers the
 * fuse pass's questions about what the target can run fused. Targets may
 * intern new expressions (launch sizes, strides) in the module's symbol
 * table before the program is compiled. */
#ifndef SYMC_CODEGEN_TARGET_H
#define SYMC_CODEGEN_TARGET_H

#include "codegen/codegen.h"
#include "runtime/engine.h"

typedef struct cg_builder {
    ir_module *m;
    const cg_options *opt;
    symc_error *err;
    /* slots of the shape program */
    uint32_t *slot_of; /* by expression handle; RT_NONE if absent */
    uint32_t slot_of_cap;
    sym_expr *exprs; /* by slot */
    uint32_t n_slots, exprs_cap;
    /* GPU part, filled by the target */
    uint32_t sm;  /* resolved target SM, e.g. 90 */
    char *source; /* CUDA C: the prelude, then every kernel (malloc'd, grows) */
    size_t source_len, source_cap;
    size_t prelude_len;    /* the shared prelude: source[0, prelude_len) */
    char **kernel_names;   /* malloc'd strings */
    size_t *kernel_end;    /* per kernel: where its text ends in source (it starts where the one before ends) */
    char **kernel_keys;    /* per kernel: its text up to names (cg_find_kernel), malloc'd; may be NULL */
    uint64_t *kernel_hash; /* of each key */
    uint32_t n_kernels, kernels_cap;
    rt_step *steps;    /* args of each step malloc'd separately */
    uint8_t **arg_out; /* per step: which of a kernel's args it writes (malloc'd; NULL for other steps) */
    uint32_t n_steps, steps_cap;
    uint32_t *aliases; /* per tensor, RT_NONE = own storage; NULL until cg_alias */
    uint32_t n_aliases;
    /* set by compile: the modules (the kernels compiled together, in parts
     * of the source) and which one holds each kernel; malloc'd */
    rt_module *modules;
    uint32_t n_modules;
    uint32_t *kernel_module;
    char cuda_version[32], cublas_version[32], cudnn_version[32]; /* set by the target */
    int failed;                                                   /* cg_slot ran out of memory */
} cg_builder;

/* The slot holding expression e (added when new). RT_NONE for SYM_NONE or
 * when out of memory (b->err is then set). */
uint32_t cg_slot(cg_builder *b, sym_expr e);
/* Appends printf-formatted CUDA C to the source. */
symc_status cg_source_appendf(cg_builder *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Registers an entry point named `name`, defined by the source appended
 * since the kernel before it (or the prelude: set prelude_len after
 * appending it); *index receives its kernel index. `key` (NULL: none) is
 * the kernel's text with every name of its own made canonical: a later
 * kernel with the same key is the same code (cg_find_kernel). */
symc_status cg_add_kernel(cg_builder *b, const char *name, const char *key, uint32_t *index);
/* The kernel registered with this key, or RT_NONE. */
uint32_t cg_find_kernel(const cg_builder *b, const char *key);
/* Appends a step; the builder copies `s` and its args. */
symc_status cg_add_step(cg_builder *b, const rt_step *s);
/* Appends a kernel step; out[i] says whether the kernel writes the tensor of
 * s->args[i] (kept for cg_check_dataflow, not in the engine). */
symc_status cg_add_kernel_step(cg_builder *b, const rt_step *s, const uint8_t *out);
/* Every tensor a step reads is a graph input, a constant, or written by an
 * earlier step (through any alias of its storage): else an INTERNAL error
 * naming the step, its node and the tensor. A kernel reading memory no step
 * wrote computes garbage that passes every size check, so the build refuses
 * it instead. */
symc_status cg_check_dataflow(const cg_builder *b);
/* Makes tensor t share the storage of tensor `of` (resolved to its root).
 * Targets may add tensors to the module (ir_add_tensor) for temporaries:
 * every tensor that is not an input, output, constant or alias gets its own
 * workspace storage at run time. */
symc_status cg_alias(cg_builder *b, uint32_t t, uint32_t of);

/* The count cell of producer `node` (a nonzero, unique or nms node: ir_produced_dim): the i64 [1] temporary
 * "<node>.count" that one of the node's kernel steps writes and the CUDA backend reads after the node's last
 * step (codegen/cuda_emit_select.c), or RT_NONE when the steps have none (no GPU code). steps: the builder's
 * (b->steps, b->n_steps, after the target's emit) or an engine's; arg_writes must be set. For the engine's
 * rt_produced.count_tensor. */
uint32_t cg_count_cell(const ir_module *m, const rt_step *steps, uint32_t n_steps, uint32_t node);

typedef struct cg_target {
    const char *name;
    symc_status (*emit)(cg_builder *b);
    symc_status (*compile)(cg_builder *b);
    /* what the target can run fused: the fuse pass plans with these
     * (passes/passes.h), and `emit` follows the module's plan, planning with
     * them itself when the module has none */
    const pass_fuse_rules *fuse;
} cg_target;

extern const cg_target cg_target_cuda;

#endif
