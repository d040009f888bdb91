/* Constant folding (pass_fold_constants): a node whose inputs are all constants, or computed
 * from constants alone, and whose results have static shapes computes the same values at every
 * run. Exporters leave such chains where a model builds a table from its static sizes: torchvision's
 * Swin builds each shifted block's attention mask at run time (zeros of [56, 56], nine slice
 * assignments as ScatterND with index grids made of Range, Slice, Expand, Unsqueeze and Concat,
 * a reshape, a transpose and a comparison): about 150 steps a block, 0.4 ms of its 6 ms at batch 32.
 *
 * The pass marks every tensor whose value is known at build time: a constant, or the result of a
 * node (any op but the ones that make sizes: nonzero, unique, nms, item) whose inputs are all
 * known, whose results all have constant dims and at most FOLD_MAX_INTERIOR bytes each, and whose
 * dims attributes are constants. The known tensors that something unknown reads (or a graph
 * output) are the frontier; those of at most FOLD_MAX_RESULT bytes, other than views of a constant
 * (a reshape of one is free already), are computed by the driver's
 * evaluator (codegen/compile.c: the module's copy, cut to them, on the reference backend; passes/
 * may not run the runtime) and become constants, each made by a new constant node where its
 * producer stood; dce then removes what only they read. Bigger results stay computed, so an
 * engine never grows by more than FOLD_MAX_RESULT a tensor. Values are the reference backend's,
 * which the engine's own steps match. An evaluator that cannot take the subgraph (SYMC_ERR_UNSUPPORTED)
 * leaves it computed. Without an evaluator (a pipeline run outside the compile
 * driver) the pass does nothing; SYMC_FOLD_CONSTANTS=0 turns it off (for comparison). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

#define FOLD_MAX_INTERIOR (16u << 20) /* bytes of a tensor computed while folding */
#define FOLD_MAX_RESULT (1u << 20)    /* bytes of a tensor that becomes a constant */

/* bytes of t when its dims are all constants, else 0 (*bytes = 0 for a zero-size tensor too: then
 * the return value 1 says it is static) */
static int static_bytes(const ir_module *m, const ir_tensor *t, uint64_t *bytes) {
    uint64_t n = symc_dtype_size(t->dtype);
    if (t->rank < 0 || !n) return 0;
    for (int32_t d = 0; d < t->rank; d++) {
        int64_t v;
        if (!sym_is_const(m->syms, t->dims[d], &v) || v < 0) return 0;
        if (v && n > UINT64_MAX / (uint64_t)v) return 0;
        n *= (uint64_t)v;
    }
    *bytes = n;
    return 1;
}

static int foldable_op(ir_op op) {
    switch (op) {
    case IR_OP_CONSTANT:
    case IR_OP_NONZERO:
    case IR_OP_UNIQUE:
    case IR_OP_NMS:
    case IR_OP_ITEM:
    case IR_OP_SHAPE_OF: return 0;
    default: return 1;
    }
}

/* node i computes known values from known[] inputs */
static int known_node(const ir_module *m, const uint8_t *known, uint32_t i) {
    const ir_node *n = &m->nodes[i];
    if (!foldable_op(n->op) || !n->n_out) return 0;
    for (uint32_t k = 0; k < n->n_in; k++)
        if (n->in[k] == IR_NONE || !known[n->in[k]]) return 0;
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].kind == IR_ATTR_DIMS)
            for (uint32_t d = 0; d < n->attrs[a].n; d++) {
                int64_t v;
                sym_expr e = (sym_expr)n->attrs[a].dims[d];
                if (e != SYM_NONE && !sym_is_const(m->syms, e, &v)) return 0;
            }
    for (uint32_t o = 0; o < n->n_out; o++) {
        uint64_t b;
        if (!static_bytes(m, &m->tensors[n->out[o]], &b) || b > FOLD_MAX_INTERIOR) return 0;
    }
    return 1;
}

/* t is a view of a constant (a reshape, squeeze, unsqueeze, flatten or identity of one): free
 * already, and folding it would copy the constant's data */
static int view_of_constant(const ir_module *m, uint32_t t) {
    const ir_node *n = &m->nodes[m->tensors[t].producer];
    switch (n->op) {
    case IR_OP_RESHAPE:
    case IR_OP_SQUEEZE:
    case IR_OP_UNSQUEEZE:
    case IR_OP_FLATTEN:
    case IR_OP_IDENTITY: return n->n_in >= 1 && m->tensors[n->in[0]].constant != IR_NONE;
    default: return 0;
    }
}

/* t's value as a constant made by a new node placed where t's producer p stands; p keeps a fresh
 * unread result in t's slot (dce removes it when nothing else of p is read) */
static symc_status install(ir_module *m, uint32_t t, uint8_t *data, uint64_t bytes, symc_error *err) {
    const uint32_t p = m->tensors[t].producer;
    uint32_t pool, node;
    symc_status st = pass_retire(m, p, t, err);
    if (st) {
        free(data);
        return st;
    }
    if ((st = ir_add_constant(m, data, (size_t)bytes, &pool, err))) return st;
    m->tensors[t].constant = pool;
    char name[512];
    pass_fresh_name(m, m->tensors[t].name ? m->tensors[t].name : "folded", ".folded", name, sizeof name);
    if ((st = ir_add_node(m, IR_OP_CONSTANT, name, "fold-constants", NULL, 0, &t, 1, NULL, 0, &node, err))) return st;
    return pass_place(m, &node, 1, p, err);
}

symc_status pass_fold_constants(ir_module *m, pass_evaluate_fn evaluate, uint32_t *folded, symc_error *err) {
    if (folded) *folded = 0;
    if (!evaluate || pass_switched_off("SYMC_FOLD_CONSTANTS")) return SYMC_OK;
    const uint32_t nt = m->n_tensors;
    uint8_t *known = calloc(nt + 1, 1), *read_unknown = calloc(nt + 1, 1);
    uint32_t *front = malloc((nt + 1) * sizeof *front), n_front = 0;
    symc_status st = SYMC_OK;
    if (!known || !read_unknown || !front) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the fold-constants pass");
        goto done;
    }
    for (uint32_t t = 0; t < nt; t++) known[t] = m->tensors[t].constant != IR_NONE;
    for (uint32_t i = 0; i < m->n_nodes; i++) /* node order is topological */
        if (known_node(m, known, i))
            for (uint32_t o = 0; o < m->nodes[i].n_out; o++) known[m->nodes[i].out[o]] = 1;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        int unknown = n->op != IR_OP_CONSTANT && !(n->n_out && known[n->out[0]]);
        for (uint32_t k = 0; unknown && k < n->n_in; k++)
            if (n->in[k] != IR_NONE) read_unknown[n->in[k]] = 1;
    }
    for (uint32_t k = 0; k < m->n_outputs; k++) read_unknown[m->outputs[k]] = 1;
    for (uint32_t t = 0; t < nt; t++) {
        uint64_t b;
        if (known[t] && read_unknown[t] && m->tensors[t].constant == IR_NONE && m->tensors[t].producer != IR_NONE &&
            static_bytes(m, &m->tensors[t], &b) && b > 0 && b <= FOLD_MAX_RESULT && !view_of_constant(m, t))
            front[n_front++] = t;
    }
    if (!n_front) goto done;
    uint8_t **data = calloc(n_front, sizeof *data);
    if (!data) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the fold-constants pass");
        goto done;
    }
    st = evaluate(m, front, n_front, data, err);
    if (st == SYMC_ERR_UNSUPPORTED) { /* a subgraph the evaluator cannot copy: left computed */
        for (uint32_t i = 0; i < n_front; i++) free(data[i]);
        free(data);
        st = SYMC_OK;
        goto done;
    }
    for (uint32_t i = 0; i < n_front; i++) {
        uint64_t b = 0;
        static_bytes(m, &m->tensors[front[i]], &b);
        if (!st && data[i]) {
            st = install(m, front[i], data[i], b, err); /* takes data[i] */
            data[i] = NULL;
        }
        free(data[i]);
    }
    free(data);
    if (!st) st = pass_remove_dead(m, NULL, err);
    if (!st && folded) *folded = n_front;
done:
    free(known);
    free(read_unknown);
    free(front);
    return st;
}
