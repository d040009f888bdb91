/* The pass pipeline (pipeline.c): the list of passes and a runner. */
#ifndef SYMC_PASSES_PIPELINE_H
#define SYMC_PASSES_PIPELINE_H

#include "passes/passes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pass_info {
    const char *name;
    symc_status (*run)(ir_module *m, symc_error *err);
} pass_info;

typedef struct pass_options {
    const char *dump_after; /* pass name, or NULL */
    void (*dump)(void *ctx, const char *pass, const char *text);
    void (*progress)(void *ctx, const char *pass); /* called as each pass starts; may be NULL */
    void *ctx;
} pass_options;

const pass_info *pass_list(uint32_t *count);
symc_status pass_run_pipeline(ir_module *m, const pass_options *opt, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
