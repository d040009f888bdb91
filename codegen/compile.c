/* The compile driver: the pass pipeline then the engine, with the options of
 * `symc compile` as a struct. It is the public entry point
 * (include/symc/symc.h) and the one place that turns symc_compile_options
 * into the pipeline's pass_options and codegen's cg_options; the command-line
 * tool fills the same struct and calls it, so the two cannot drift apart. It
 * lives in codegen because it is the last stage; passes and ir do not depend
 * on it. */
#include <stddef.h>

#include "codegen/codegen.h"
#include "passes/pipeline.h"
#include "symc/symc.h"

void symc_compile_options_init(symc_compile_options *o) {
    if (!o) return;
    *o = (symc_compile_options){.gpu = 1, .arch = NULL, .precision = SYMC_PRECISION_FP32, .tune = 1};
}

symc_status symc_module_compile(symc_module *m, const symc_compile_options *opt, const char *path, symc_error *err) {
    if (!m || !path) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_module_compile: NULL argument");
    symc_compile_options o;
    symc_compile_options_init(&o);
    if (opt) o = *opt;
    if ((int)o.precision < 0 || o.precision > SYMC_PRECISION_BF16)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_module_compile: unknown precision %d",
                               (int)o.precision);
    cg_options cg = cg_default_options();
    cg.gpu = o.gpu != 0;
    cg.arch = o.arch;
    cg.precision = o.precision;
    cg.tune = o.tune != 0;
    cg.progress = o.progress;
    cg.progress_ctx = o.ctx;
    /* the target's rules plan fusion (NULL without GPU code: no plan) */
    pass_options po = {o.dump_after, o.dump, o.progress, o.ctx, cg_fuse_rules(&cg)};
    symc_status st = pass_run_pipeline(m, &po, err);
    if (st) return st;
    return cg_write_engine(m, &cg, path, err);
}
