/* The pass pipeline: a visible list of (name, function) rows run in order,
 * with the verifier after every pass, so a broken invariant is reported
 * against the pass that broke it. `dump_after` names a pass whose result is
 * handed to a callback as text (the CLI's --dump-after=PASS). The rows'
 * functions take the pipeline's options; the passes that need none are
 * wrapped here. Fusion comes last: its plan describes the module as the
 * other passes leave it, so the pipeline drops an old plan before it starts.
 * pass_run_passes runs a range of the rows (by name), so a caller can do its
 * own step between two passes, or test a pass before `dce` removes what it
 * left unread. What a pass needs from outside passes/ comes as data: the
 * target's rules, and the precision pass's range calibration, which the
 * compile driver measures between the two parts (codegen/compile.c). */
#include "passes/pipeline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static symc_status verify(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return ir_verify(m, err);
}
static symc_status infer_shapes(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    if (m->shapes_inferred) { /* the ONNX importer's, node by node: once is enough */
        m->shapes_inferred = 0;
        return SYMC_OK;
    }
    return pass_infer_shapes(m, err);
}
static symc_status check_sizes(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_check_sizes(m, err);
}
static symc_status fold_constants(ir_module *m, const pass_options *o, symc_error *err) {
    return pass_fold_constants(m, o ? o->evaluate : NULL, NULL, err);
}
static symc_status drop_identities(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_drop_identities(m, NULL, err);
}
static symc_status roll_gather(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_roll_as_gather(m, NULL, err);
}
static symc_status space_to_depth(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_space_to_depth(m, NULL, err);
}
static symc_status compose_moves(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_compose_moves(m, NULL, err);
}
static symc_status fold_batch_norm(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_fold_batch_norm(m, err);
}
static symc_status layout(ir_module *m, const pass_options *o, symc_error *err) {
    return pass_layout(m, o ? o->fuse : NULL, err);
}
static symc_status fold_scale(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_fold_scale(m, err);
}
static symc_status fold_gelu(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_fold_gelu(m, err);
}
static symc_status fold_rms_norm(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_fold_rms_norm(m, NULL, err);
}
static symc_status merge_projections(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_merge_projections(m, err);
}
static symc_status unbind_heads(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_unbind_heads(m, err);
}
static symc_status patchify(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_patchify(m, err);
}
static symc_status dce(ir_module *m, const pass_options *o, symc_error *err) {
    (void)o;
    return pass_remove_dead(m, NULL, err);
}
static symc_status fuse(ir_module *m, const pass_options *o, symc_error *err) {
    return pass_fuse(m, o ? o->fuse : NULL, err);
}

int pass_calibration_wanted(const ir_module *m, symc_precision precision) {
    /* fp16: the overflow islands; bf16: attention's logits (bf16 has f32's exponent range, so
     * only a module with a softmax is calibrated); FP32/TF32 convert nothing */
    if (precision == SYMC_PRECISION_FP16) return 1;
    if (precision != SYMC_PRECISION_BF16) return 0;
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].op == IR_OP_SOFTMAX) return 1;
    return 0;
}

static symc_status precision(ir_module *m, const pass_options *o, symc_error *err) {
    if (!o) return SYMC_OK;
    /* FP32/TF32: no conversion, but a target's rules still upcast half nodes it cannot run */
    int half = o->precision == SYMC_PRECISION_FP16 || o->precision == SYMC_PRECISION_BF16;
    pass_precision_options po = {!half                                     ? SYMC_DTYPE_COUNT
                                     : o->precision == SYMC_PRECISION_FP16 ? SYMC_F16
                                                                           : SYMC_BF16,
                                 o->precision_rules,
                                 o->fp32_layers,
                                 NULL,
                                 0,
                                 PASS_FP16_SAFE_MAX};
    if (o->max_abs && pass_calibration_wanted(m, o->precision)) {
        if (o->n_max_abs != m->n_tensors)
            return symc_error_setf(err, SYMC_ERR_INTERNAL,
                                   "the calibration measured %u tensors, the module has %u (calibrate right "
                                   "before the precision pass)",
                                   o->n_max_abs, m->n_tensors);
        po.max_abs = o->max_abs;
        po.n_max_abs = o->n_max_abs;
    }
    return pass_precision(m, &po, err);
}

static const pass_info pipeline[] = {
    {"verify", verify},
    {"infer-shapes", infer_shapes},
    {"check-sizes", check_sizes},
    {"fold-constants",
     fold_constants}, /* first: the later passes see the tables a model builds from its sizes as constants */
    {"drop-identities", drop_identities}, /* after fold-constants: pads and slices it made constant-sized */
    {"roll-gather", roll_gather},
    {"space-to-depth", space_to_depth},
    {"compose-moves", compose_moves}, /* after roll-gather: Swin's rolls are gathers by then */
    {"fold-batch-norm", fold_batch_norm},
    {"patchify", patchify}, /* before layout, which cancels its NCHW transpose against a model's NHWC permute */
    {"layout", layout},
    {"fold-scale", fold_scale},
    {"fold-gelu", fold_gelu},         /* before dce, which removes the chains it leaves unread, and before the
                                 calibration that codegen/compile.c measures right before precision */
    {"fold-rms-norm", fold_rms_norm}, /* the same: before dce and the calibration */
    {"dce", dce},
    {"precision", precision},
    {"merge-projections", merge_projections}, /* after precision: it merges only projections of one
                                                 dtype, so an fp32 island keeps its own GEMM */
    {"unbind-heads", unbind_heads},
    {"fuse", fuse},
};

const pass_info *pass_list(uint32_t *count) {
    *count = sizeof pipeline / sizeof pipeline[0];
    return pipeline;
}

void pass_names(char *buf, size_t cap) {
    if (!cap) return;
    buf[0] = '\0';
    for (uint32_t i = 0; i < sizeof pipeline / sizeof pipeline[0]; i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", pipeline[i].name);
    }
}

static int row_of(const pass_info *list, uint32_t n, const char *name, uint32_t *at) {
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(list[i].name, name)) {
            *at = i;
            return 1;
        }
    return 0;
}

symc_status pass_run_passes(ir_module *m, const pass_options *opt, const char *from, const char *until,
                            symc_error *err) {
    uint32_t n, first = 0, end;
    const pass_info *list = pass_list(&n);
    end = n;
    char names[256];
    pass_names(names, sizeof names);
    if (opt && opt->dump_after && !row_of(list, n, opt->dump_after, &end))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "unknown pass '%s' for --dump-after (passes: %s)",
                               opt->dump_after, names);
    end = n;
    if (from && !row_of(list, n, from, &first))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "unknown pass '%s' (passes: %s)", from, names);
    if (until && !row_of(list, n, until, &end))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "unknown pass '%s' (passes: %s)", until, names);
    if (!from) ir_fuse_drop(m);
    for (uint32_t i = first; i < end; i++) {
        if (opt && opt->progress) opt->progress(opt->ctx, list[i].name);
        symc_status st = list[i].run(m, opt, err);
        if (!st && i > 0) st = ir_verify(m, err);
        if (st) {
            symc_error_prefix(err, "pass %s", list[i].name);
            return st;
        }
        if (opt && opt->dump_after && opt->dump && !strcmp(opt->dump_after, list[i].name)) {
            char *text = ir_print_to_string(m);
            if (!text) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory printing the module");
            opt->dump(opt->ctx, list[i].name, text);
            free(text);
        }
    }
    return SYMC_OK;
}

symc_status pass_run_pipeline(ir_module *m, const pass_options *opt, symc_error *err) {
    return pass_run_passes(m, opt, NULL, NULL, err);
}

symc_status symc_module_infer_shapes(symc_module *m, symc_error *err) {
    if (!m) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_module_infer_shapes: NULL module");
    ir_fuse_drop(m); /* shapes may change: a plan made for the old ones no longer holds */
    /* a module still being built may have no outputs yet (the torch tracer asks for the size a nonzero
     * produces as soon as it adds the node) */
    symc_status st = ir_verify_open(m, err);
    return st ? st : pass_infer_shapes(m, err);
}
