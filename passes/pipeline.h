/* The pass pipeline (pipeline.c): the list of passes and a runner. */
#ifndef SYMC_PASSES_PIPELINE_H
#define SYMC_PASSES_PIPELINE_H

#include <stddef.h>

#include "passes/passes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pass_options {
    const char *dump_after; /* pass name, or NULL */
    void (*dump)(void *ctx, const char *pass, const char *text);
    void (*progress)(void *ctx, const char *pass); /* called as each pass starts; may be NULL */
    void *ctx;
    /* the rules of the target the module is built for (the driver gets them from codegen:
     * cg_fuse_rules); NULL: no fusion plan (a reference-only engine) */
    const pass_fuse_rules *fuse;
    /* half storage (the precision pass): FP16/BF16 convert, FP32/TF32 leave the module as it is */
    symc_precision precision;
    const pass_precision_rules *precision_rules; /* the target's (cg_precision_rules); NULL: every op */
    const char *fp32_layers;                     /* --fp32-layers; NULL: none */
    /* the range calibration's statistics, data the driver measured on the module as the
     * precision pass receives it (codegen/compile.c runs the pipeline up to `precision`, runs
     * the module on the reference backend, then the rest): max_abs[t] per tensor (NaN: not
     * measured), n_max_abs = the module's tensor count then; NULL: no calibration. Used only
     * where pass_calibration_wanted says so. */
    const double *max_abs;
    uint32_t n_max_abs;
    /* the driver's evaluator of constant subgraphs (the fold-constants row; codegen/compile.c runs
     * them on the reference backend); NULL: no folding */
    pass_evaluate_fn evaluate;
} pass_options;

typedef struct pass_info {
    const char *name;
    symc_status (*run)(ir_module *m, const pass_options *opt, symc_error *err); /* opt may be NULL */
} pass_info;

const pass_info *pass_list(uint32_t *count);
/* Whether the precision pass uses a range calibration of m at this precision: fp16 (the
 * overflow islands), bf16 with a softmax (attention's logits). The driver calibrates only then. */
int pass_calibration_wanted(const ir_module *m, symc_precision precision);
/* The pass names in pipeline order, comma separated ("verify, infer-shapes, ..."), into buf. */
void pass_names(char *buf, size_t cap);
/* Drops any old fusion plan, then runs every pass with the verifier after each. */
symc_status pass_run_pipeline(ir_module *m, const pass_options *opt, symc_error *err);
/* The rows from `from` up to, not including, `until` (pass names; NULL: from the first row, to
 * the end), with the verifier after each but the first row; from NULL drops any old fusion plan.
 * The compile driver runs the pipeline in two parts around its calibration step, tests run a
 * prefix (a pass's result before the dead-node pass removes what it left unread). */
symc_status pass_run_passes(ir_module *m, const pass_options *opt, const char *from, const char *until,
                            symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
