/* codegen: turns a compiled module into an engine (prefix cg_).
 *
 * The engine always carries the IR for the CPU reference backend: every
 * symbolic size becomes a slot of one shape program. With GPU code on (the
 * default), the CUDA target adds NVRTC-compiled kernels (cubin for the target
 * SM plus PTX), cuBLASLt/cuDNN call descriptors and copies, and, when a GPU is
 * present and tuning is on, the library choices timed at opt and at a few
 * representatives of the symbol ranges (codegen/tuner.c), all before the
 * engine is encoded once. */
#ifndef SYMC_CODEGEN_CODEGEN_H
#define SYMC_CODEGEN_CODEGEN_H

#include "ir/ir.h"
#include "passes/passes.h"
#include "symc/precision.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a build did, when cg_options.stats asks (tests, tools). */
typedef struct cg_build_stats {
    uint32_t kernels;      /* distinct generated kernels */
    uint32_t kernel_steps; /* the kernel launches using them */
    uint32_t modules;      /* NVRTC programs the kernels were compiled in */
    uint32_t cached;       /* of those, read from the build cache (codegen/cache.h) */
} cg_build_stats;

typedef struct cg_options {
    int gpu;                  /* 1: emit GPU code (CUDA target); 0: a reference-only engine */
    const char *arch;         /* "sm_90" etc.; NULL: the GPU present, else sm_90 */
    symc_precision precision; /* of matrix products and convolutions (symc/precision.h) */
    int tune;                 /* time library candidates (opt and a few range representatives) when a GPU is present */
    /* progress lines for long work (NULL: quiet) */
    void (*progress)(void *ctx, const char *msg);
    void *progress_ctx;
    /* NVRTC programs the kernels are split into, compiled in parallel: 0 =
     * min(online CPUs, kernels / 4, 16); n = at most n (tests) */
    uint32_t nvrtc_modules;
    cg_build_stats *stats; /* filled when not NULL */
} cg_options;

/* gpu = 1, arch = NULL, fp32, tune = 1, quiet */
cg_options cg_default_options(void);

/* The fusion rules of the target these options build for, for the fuse pass
 * (pass_options.fuse): the CUDA target's when GPU code is on (opt NULL:
 * the defaults), NULL for a reference-only engine, which has no plan. */
const pass_fuse_rules *cg_fuse_rules(const cg_options *opt);
/* What the target runs in half precision, for the precision pass
 * (pass_options.precision_rules): the CUDA target's when GPU code is on,
 * NULL for a reference-only engine (every op may be half). */
const pass_precision_rules *cg_precision_rules(const cg_options *opt);
/* The CUDA target's rule (codegen/cuda_target.c): node runs on f16/bf16
 * storage (read and written in half, computed in fp32); the precision pass
 * keeps the others fp32 and emit_node refuses half tensors on them. */
int cg_cuda_half_ok(const ir_module *m, uint32_t node);

/* Encodes a module whose shapes are inferred as engine bytes (malloc'd).
 * opt NULL = cg_default_options(). Errors: a tensor without a shape, a symbol
 * that no input dim equals (it could not be bound at run time), an op or
 * dtype the CUDA target does not implement, NVRTC's log on a compile error. */
symc_status cg_build_engine(ir_module *m, const cg_options *opt, uint8_t **bytes, size_t *size, symc_error *err);
/* The same, written to a file (through a temporary file and rename). */
symc_status cg_write_engine(ir_module *m, const cg_options *opt, const char *path, symc_error *err);

/* One engine of n >= 1 regions (codegen/build_regions.c, symc_compile_regions'
 * contract in symc/symc.h): ms[r] is region r's module, its passes run
 * (shapes inferred), conds[r] its condition text (NULL or "": its box
 * alone). Each module is assembled as cg_build_engine does; then the root
 * symbols (by the input dim they are read from, ranges the hull), every
 * region's condition as guards of one root program, the coverage of the
 * hull (a point in no region is an error naming it; one in several is
 * reported as progress: the first region runs it), and the constants stored
 * once by content. Always an engine with regions, even for n == 1. */
symc_status cg_build_regions(ir_module *const *ms, const char *const *conds, uint32_t n, const cg_options *opt,
                             uint8_t **bytes, size_t *size, symc_error *err);
/* The regions' modules take the same inputs and give the same outputs: count,
 * names, dtypes and ranks (where both are known), in order; else an error
 * naming the I/O and both regions. */
symc_status cg_check_interface(ir_module *const *ms, uint32_t n, symc_error *err);
/* Parses each region's condition text in its module's symbol table (no
 * engine is built): the refusal cg_build_regions would give for a text,
 * before any pass has run. */
symc_status cg_check_conditions(ir_module *const *ms, const char *const *conds, uint32_t n, symc_error *err);
symc_status cg_write_regions(ir_module *const *ms, const char *const *conds, uint32_t n, const cg_options *opt,
                             const char *path, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
