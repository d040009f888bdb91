/* Engine building: from a module with inferred shapes to rt_engine, then
 * bytes through the runtime's codec (runtime/engine.h).
 *
 * Every expression the runtime needs (tensor dims, dim attributes, both sides
 * of each guard that must be checked at run time) gets a slot; a handle->slot
 * table dedupes them, and sym_program_compile shares common subexpressions, so
 * the runtime evaluates each distinct size once per input shape. Each symbol
 * must be the whole of some input dim, which is how set_input_shape binds it;
 * a symbol that only appears inside expressions is refused here, at build
 * time, rather than becoming unbindable at run time. */
#include "codegen/codegen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdarg.h>

#include "codegen/target.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/engine.h"

cg_options cg_default_options(void) {
    return (cg_options){.gpu = 1, .arch = NULL, .precision = RT_PREC_FP32, .tune = 1};
}

uint32_t cg_slot(cg_builder *b, sym_expr e) {
    if (e == SYM_NONE) return RT_NONE;
    if (e >= b->slot_of_cap) {
        uint32_t cap = b->slot_of_cap ? b->slot_of_cap : 64;
        while (cap <= e) cap *= 2;
        uint32_t *n = realloc(b->slot_of, cap * sizeof *n);
        if (!n) goto oom;
        for (uint32_t i = b->slot_of_cap; i < cap; i++) n[i] = RT_NONE;
        b->slot_of = n;
        b->slot_of_cap = cap;
    }
    if (b->slot_of[e] == RT_NONE) {
        if (b->n_slots == b->exprs_cap) {
            uint32_t cap = b->exprs_cap ? b->exprs_cap * 2 : 64;
            sym_expr *n = realloc(b->exprs, cap * sizeof *n);
            if (!n) goto oom;
            b->exprs = n;
            b->exprs_cap = cap;
        }
        b->exprs[b->n_slots] = e;
        b->slot_of[e] = b->n_slots++;
    }
    return b->slot_of[e];
oom:
    b->failed = 1;
    symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory building the engine");
    return RT_NONE;
}

symc_status cg_source_appendf(cg_builder *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->source_cap - b->source_len;
        int n = vsnprintf(b->source ? b->source + b->source_len : NULL, b->source ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return symc_error_setf(b->err, SYMC_ERR_INTERNAL, "formatting CUDA source failed");
        if (b->source && (size_t)n < room) {
            b->source_len += (size_t)n;
            return SYMC_OK;
        }
        size_t cap = b->source_cap ? b->source_cap : 4096;
        while (cap < b->source_len + (size_t)n + 1) cap *= 2;
        char *ns = realloc(b->source, cap);
        if (!ns) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA source");
        if (!b->source) ns[0] = '\0';
        b->source = ns;
        b->source_cap = cap;
    }
}

symc_status cg_add_kernel(cg_builder *b, const char *name, uint32_t *index) {
    if (b->n_kernels == b->kernels_cap) {
        uint32_t cap = b->kernels_cap ? b->kernels_cap * 2 : 16;
        char **n = realloc(b->kernel_names, cap * sizeof *n);
        if (!n) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating kernels");
        b->kernel_names = n;
        b->kernels_cap = cap;
    }
    char *copy = malloc(strlen(name) + 1);
    if (!copy) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating kernels");
    strcpy(copy, name);
    b->kernel_names[b->n_kernels] = copy;
    *index = b->n_kernels++;
    return SYMC_OK;
}

symc_status cg_add_step(cg_builder *b, const rt_step *s) {
    if (b->n_steps == b->steps_cap) {
        uint32_t cap = b->steps_cap ? b->steps_cap * 2 : 16;
        rt_step *n = realloc(b->steps, cap * sizeof *n);
        if (!n) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating steps");
        b->steps = n;
        b->steps_cap = cap;
    }
    rt_step copy = *s;
    copy.args = NULL;
    if (s->n_args) {
        rt_arg *a = malloc(s->n_args * sizeof *a);
        if (!a) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating steps");
        memcpy(a, s->args, s->n_args * sizeof *a);
        copy.args = a;
    }
    b->steps[b->n_steps++] = copy;
    return SYMC_OK;
}

/* grows the alias table to the module's current tensor count */
static symc_status grow_aliases(cg_builder *b) {
    uint32_t n = b->m->n_tensors;
    if (b->aliases && b->n_aliases == n) return SYMC_OK;
    uint32_t *a = realloc(b->aliases, (n ? n : 1) * sizeof *a);
    if (!a) return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory planning aliases");
    for (uint32_t i = b->aliases ? b->n_aliases : 0; i < n; i++) a[i] = RT_NONE;
    b->aliases = a;
    b->n_aliases = n;
    return SYMC_OK;
}

symc_status cg_alias(cg_builder *b, uint32_t t, uint32_t of) {
    symc_status st = grow_aliases(b);
    if (st) return st;
    if (t >= b->n_aliases || of >= b->n_aliases)
        return symc_error_setf(b->err, SYMC_ERR_INTERNAL, "alias of a tensor out of range");
    while (b->aliases[of] != RT_NONE) of = b->aliases[of];
    if (of == t) return symc_error_setf(b->err, SYMC_ERR_INTERNAL, "tensor '%s' would alias itself", b->m->tensors[t].name);
    b->aliases[t] = of;
    /* tensors that aliased t now alias its root */
    for (uint32_t i = 0; i < b->n_aliases; i++)
        if (b->aliases[i] == t) b->aliases[i] = of;
    return SYMC_OK;
}

static void free_builder(cg_builder *b) {
    free(b->slot_of);
    free(b->exprs);
    free(b->source);
    for (uint32_t i = 0; i < b->n_kernels; i++) free(b->kernel_names[i]);
    free(b->kernel_names);
    for (uint32_t i = 0; i < b->n_steps; i++) free((void *)b->steps[i].args);
    free(b->steps);
    free(b->aliases);
    free(b->cubin);
    free(b->ptx);
}

static void progress(const cg_options *o, const char *fmt, ...) {
    if (!o->progress) return;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, msg);
}

/* With a GPU of the target SM present, time the library candidates at opt
 * and at a few bucket representatives of the symbol ranges and keep every
 * winner (runtime/cuda_tune.c); without one the runtime asks the heuristics
 * once per shape (DESIGN.md). */
static symc_status tune(const cg_options *opt, const cg_builder *b, uint8_t **bytes, size_t *size, symc_error *err) {
    int has_library = 0;
    for (uint32_t i = 0; i < b->n_steps; i++)
        if (b->steps[i].kind == RT_STEP_GEMM || b->steps[i].kind == RT_STEP_CONV) has_library = 1;
    uint32_t sm;
    symc_error quiet;
    if (!has_library || rt_cuda_device_sm(&sm, &quiet) != SYMC_OK) return SYMC_OK;
    if (sm != b->sm) {
        progress(opt, "not tuning: the GPU here is sm_%u, the engine targets sm_%u", sm, b->sm);
        return SYMC_OK;
    }
    uint8_t *tuned = NULL;
    size_t tuned_size = 0;
    symc_status st = rt_cuda_tune(*bytes, *size, &tuned, &tuned_size, opt->progress, opt->progress_ctx, err);
    if (st) {
        symc_error_prefix(err, "tuning library calls");
        return st;
    }
    free(*bytes);
    *bytes = tuned;
    *size = tuned_size;
    return SYMC_OK;
}

symc_status cg_build_engine(ir_module *m, const cg_options *opt_in, uint8_t **bytes, size_t *size, symc_error *err) {
    cg_options opt = opt_in ? *opt_in : cg_default_options();
    *bytes = NULL;
    *size = 0;
    sym_table *t = m->syms;
    uint32_t nexpr = sym_expr_count(t), nsym = sym_symbol_count(t), ng = sym_guard_count(t);
    for (uint32_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].rank < 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "tensor '%s' has no inferred shape: run shape inference first",
                                   m->tensors[i].name);

    (void)nexpr;
    cg_builder b = {.m = m, .opt = &opt, .err = err};
    rt_symbol *syms = calloc(nsym ? nsym : 1, sizeof *syms);
    rt_source *src = calloc(nsym ? nsym : 1, sizeof *src);
    rt_guard *guards = calloc(ng ? ng : 1, sizeof *guards);
    rt_tensor *ts = NULL;
    rt_node *ns = NULL;
    rt_constant *cs = calloc(m->n_constants ? m->n_constants : 1, sizeof *cs);
    symc_attr **attr_copies = NULL;
    uint32_t **dim_copies = NULL;
    uint8_t *program = NULL;
    size_t program_size = 0;
    symc_status st = SYMC_OK;
    if (!syms || !src || !guards || !cs) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory building the engine");
        goto done;
    }

    /* symbols and where each is bound from */
    for (sym_id i = 0; i < nsym && !st; i++) {
        sym_symbol_info info;
        sym_symbol_get(t, i, &info);
        syms[i] = (rt_symbol){info.name, info.min, info.opt, info.max, info.multiple_of};
        sym_expr v = sym_var(t, i);
        int found = 0;
        for (uint32_t k = 0; k < m->n_inputs && !found; k++) {
            const ir_tensor *x = &m->tensors[m->inputs[k]];
            for (int d = 0; d < x->rank && !found; d++)
                if (x->dims[d] == v) {
                    src[i] = (rt_source){i, k, (uint32_t)d};
                    found = 1;
                }
        }
        if (!found)
            st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                                 "symbol '%s' is not the size of any input dim, so it cannot be bound from the "
                                 "input shapes at run time; declare an input dim as exactly '%s'",
                                 info.name, info.name);
    }
    if (st) goto done;

    /* GPU code first: a target may add tensors (temporaries) to the module */
    if (opt.gpu) {
        const cg_target *target = &cg_target_cuda;
        progress(&opt, "%s: generating %s code for %u nodes", m->name ? m->name : "model", target->name, m->n_nodes);
        if ((st = target->emit(&b))) goto done;
        if (b.n_kernels) {
            progress(&opt, "%s: NVRTC compiling %u kernels for sm_%u", m->name ? m->name : "model", b.n_kernels, b.sm);
            if ((st = target->compile(&b))) goto done;
        }
    }
    ts = calloc(m->n_tensors ? m->n_tensors : 1, sizeof *ts);
    ns = calloc(m->n_nodes ? m->n_nodes : 1, sizeof *ns);
    attr_copies = calloc(m->n_nodes ? m->n_nodes : 1, sizeof *attr_copies);
    dim_copies = calloc(m->n_nodes ? m->n_nodes : 1, sizeof *dim_copies);
    if (!ts || !ns || !attr_copies || !dim_copies) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory building the engine");
        goto done;
    }

    /* guards the runtime must check (implied ones cost nothing) */
    uint32_t n_guards = 0;
    for (uint32_t g = 0; g < ng; g++) {
        if (sym_guard_classify(t, g) == SYM_GUARD_IMPLIED) continue;
        sym_guard gd;
        sym_guard_get(t, g, &gd);
        guards[n_guards++] = (rt_guard){gd.rel, cg_slot(&b, gd.lhs), cg_slot(&b, gd.rhs), gd.provenance};
    }

    for (uint32_t i = 0; i < m->n_tensors; i++) {
        const ir_tensor *x = &m->tensors[i];
        ts[i].name = x->name;
        ts[i].dtype = x->dtype;
        ts[i].rank = x->rank;
        for (int d = 0; d < x->rank; d++) ts[i].dims[d] = cg_slot(&b, x->dims[d]);
        ts[i].constant = x->constant;
    }
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        ns[i] = (rt_node){n->op, n->name, n->source, n->n_in, n->n_out, n->n_attrs, n->in, n->out, n->attrs};
        uint32_t ndims = 0;
        for (uint32_t a = 0; a < n->n_attrs; a++)
            if (n->attrs[a].kind == SYMC_ATTR_DIMS) ndims += n->attrs[a].n;
        if (!ndims) continue;
        /* dim attributes: handles become slots in a private copy */
        attr_copies[i] = malloc(n->n_attrs * sizeof(symc_attr));
        dim_copies[i] = malloc(ndims * sizeof(uint32_t));
        if (!attr_copies[i] || !dim_copies[i]) {
            st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory building the engine");
            goto done;
        }
        uint32_t used = 0;
        for (uint32_t a = 0; a < n->n_attrs; a++) {
            attr_copies[i][a] = n->attrs[a];
            if (n->attrs[a].kind != SYMC_ATTR_DIMS) continue;
            for (uint32_t k = 0; k < n->attrs[a].n; k++) dim_copies[i][used + k] = cg_slot(&b, n->attrs[a].dims[k]);
            attr_copies[i][a].dims = dim_copies[i] + used;
            used += n->attrs[a].n;
        }
        ns[i].attrs = attr_copies[i];
    }
    for (uint32_t i = 0; i < m->n_constants; i++) cs[i] = (rt_constant){m->constants[i].data, m->constants[i].size};

    if (b.failed) {
        st = SYMC_ERR_NOMEM;
        goto done;
    }
    if ((st = sym_program_compile(t, b.exprs, b.n_slots, &program, &program_size, err))) goto done;

    char producer[32];
    snprintf(producer, sizeof producer, "%s", SYMC_VERSION_STRING);
    rt_engine e = {
        .format_version = RT_ENGINE_FORMAT_VERSION, .symc_version = producer, .cuda_version = "",
        .cublas_version = "", .cudnn_version = "", .name = m->name, .sm = 0,
        .symbols = syms, .n_symbols = nsym, .sources = src, .n_sources = nsym,
        .program = program, .program_size = program_size, .num_slots = b.n_slots,
        .guards = guards, .n_guards = n_guards, .tensors = ts, .n_tensors = m->n_tensors,
        .nodes = ns, .n_nodes = m->n_nodes, .inputs = m->inputs, .n_inputs = m->n_inputs,
        .outputs = m->outputs, .n_outputs = m->n_outputs, .constants = cs, .n_constants = m->n_constants,
    };
    if (opt.gpu) {
        e.sm = b.sm;
        e.precision = (uint8_t)opt.precision;
        e.cuda_source = b.source ? b.source : "";
        e.cubin = b.cubin;
        e.cubin_size = b.cubin_size;
        e.ptx = b.ptx ? b.ptx : "";
        e.kernel_names = (const char *const *)b.kernel_names;
        e.n_kernels = b.n_kernels;
        e.steps = b.steps;
        e.n_steps = b.n_steps;
        if (b.aliases && (st = grow_aliases(&b))) goto done;
        e.aliases = b.aliases;
        e.n_aliases = b.aliases ? m->n_tensors : 0;
        e.cuda_version = b.cuda_version;
        e.cublas_version = b.cublas_version;
        e.cudnn_version = b.cudnn_version;
    }
    st = rt_engine_encode(&e, bytes, size, err);
    if (!st && opt.gpu && opt.tune) st = tune(&opt, &b, bytes, size, err);

done:
    for (uint32_t i = 0; attr_copies && i < m->n_nodes; i++) free(attr_copies[i]);
    for (uint32_t i = 0; dim_copies && i < m->n_nodes; i++) free(dim_copies[i]);
    free(attr_copies);
    free(dim_copies);
    free(program);
    free_builder(&b);
    free(syms);
    free(src);
    free(guards);
    free(ts);
    free(ns);
    free(cs);
    return st;
}

symc_status cg_write_engine(ir_module *m, const cg_options *opt, const char *path, symc_error *err) {
    uint8_t *bytes;
    size_t size;
    symc_status st = cg_build_engine(m, opt, &bytes, &size, err);
    if (st) return st;
    st = ir_write_file(path, bytes, size, err);
    free(bytes);
    return st;
}
