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

#include "runtime/engine.h"

typedef struct builder {
    ir_module *m;
    uint32_t *slot_of; /* by handle; RT_NONE if absent */
    sym_expr *exprs;   /* by slot */
    uint32_t n_slots;
    symc_error *err;
} builder;

static uint32_t slot(builder *b, sym_expr e) {
    if (e == SYM_NONE) return RT_NONE;
    if (b->slot_of[e] == RT_NONE) {
        b->exprs[b->n_slots] = e;
        b->slot_of[e] = b->n_slots++;
    }
    return b->slot_of[e];
}

symc_status cg_build_engine(ir_module *m, uint8_t **bytes, size_t *size, symc_error *err) {
    *bytes = NULL;
    *size = 0;
    sym_table *t = m->syms;
    uint32_t nexpr = sym_expr_count(t), nsym = sym_symbol_count(t), ng = sym_guard_count(t);
    for (uint32_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].rank < 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "tensor '%s' has no inferred shape: run shape inference first",
                                   m->tensors[i].name);

    builder b = {m, malloc((nexpr ? nexpr : 1) * sizeof(uint32_t)), malloc((nexpr ? nexpr : 1) * sizeof(sym_expr)), 0, err};
    rt_symbol *syms = calloc(nsym ? nsym : 1, sizeof *syms);
    rt_source *src = calloc(nsym ? nsym : 1, sizeof *src);
    rt_guard *guards = calloc(ng ? ng : 1, sizeof *guards);
    rt_tensor *ts = calloc(m->n_tensors ? m->n_tensors : 1, sizeof *ts);
    rt_node *ns = calloc(m->n_nodes ? m->n_nodes : 1, sizeof *ns);
    rt_constant *cs = calloc(m->n_constants ? m->n_constants : 1, sizeof *cs);
    symc_attr **attr_copies = calloc(m->n_nodes ? m->n_nodes : 1, sizeof *attr_copies);
    uint32_t **dim_copies = calloc(m->n_nodes ? m->n_nodes : 1, sizeof *dim_copies);
    uint8_t *program = NULL;
    size_t program_size = 0;
    symc_status st = SYMC_OK;
    if (!b.slot_of || !b.exprs || !syms || !src || !guards || !ts || !ns || !cs || !attr_copies || !dim_copies) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory building the engine");
        goto done;
    }
    for (uint32_t i = 0; i < nexpr; i++) b.slot_of[i] = RT_NONE;

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

    /* guards the runtime must check (implied ones cost nothing) */
    uint32_t n_guards = 0;
    for (uint32_t g = 0; g < ng; g++) {
        if (sym_guard_classify(t, g) == SYM_GUARD_IMPLIED) continue;
        sym_guard gd;
        sym_guard_get(t, g, &gd);
        guards[n_guards++] = (rt_guard){gd.rel, slot(&b, gd.lhs), slot(&b, gd.rhs), gd.provenance};
    }

    for (uint32_t i = 0; i < m->n_tensors; i++) {
        const ir_tensor *x = &m->tensors[i];
        ts[i].name = x->name;
        ts[i].dtype = x->dtype;
        ts[i].rank = x->rank;
        for (int d = 0; d < x->rank; d++) ts[i].dims[d] = slot(&b, x->dims[d]);
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
            for (uint32_t k = 0; k < n->attrs[a].n; k++) dim_copies[i][used + k] = slot(&b, n->attrs[a].dims[k]);
            attr_copies[i][a].dims = dim_copies[i] + used;
            used += n->attrs[a].n;
        }
        ns[i].attrs = attr_copies[i];
    }
    for (uint32_t i = 0; i < m->n_constants; i++) cs[i] = (rt_constant){m->constants[i].data, m->constants[i].size};

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
    st = rt_engine_encode(&e, bytes, size, err);

done:
    for (uint32_t i = 0; attr_copies && i < m->n_nodes; i++) free(attr_copies[i]);
    for (uint32_t i = 0; dim_copies && i < m->n_nodes; i++) free(dim_copies[i]);
    free(attr_copies);
    free(dim_copies);
    free(program);
    free(b.slot_of);
    free(b.exprs);
    free(syms);
    free(src);
    free(guards);
    free(ts);
    free(ns);
    free(cs);
    return st;
}

symc_status cg_write_engine(ir_module *m, const char *path, symc_error *err) {
    uint8_t *bytes;
    size_t size;
    symc_status st = cg_build_engine(m, &bytes, &size, err);
    if (st) return st;
    st = ir_write_file(path, bytes, size, err);
    free(bytes);
    return st;
}
