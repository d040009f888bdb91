/* The producers of unbacked symbols (docs/PLAN-data-dependent.md §2).
 *
 * A data-dependent size (the rows of a nonzero) is a symshape symbol declared
 * unbacked (sym_symbol_new_unbacked); the module records, per such symbol,
 * the node whose output dim it is (ir_module.produced, a small vector, looked
 * up linearly: a model has a few of them). The verifier's part checks the
 * table against the graph: each entry names an unbacked symbol, a node, an
 * output and a dim in range whose expression is that symbol, one producer per
 * symbol, and nothing reads the symbol before its producer runs: no graph
 * input dim and no dim or dim attribute of an earlier node mentions it (the
 * runtime learns the value only when the producer has run). Bounds are over
 * earlier symbols by construction (symshape refuses anything else). */
#include <stdlib.h>

#include "ir/ir.h"

symc_status ir_add_produced(ir_module *m, const ir_produced *p, symc_error *err) {
    sym_symbol_info si = {0};
    if (!sym_symbol_get(m->syms, p->symbol, &si))
        return symc_error_setf(err, SYMC_ERR_VERIFY, "no symbol %u to record a producer for", p->symbol);
    if (sym_symbol_bound(m->syms, p->symbol) == SYM_NONE)
        return symc_error_setf(err, SYMC_ERR_VERIFY, "symbol %s is not an unbacked symbol: it has no producer",
                               si.name);
    uint32_t old = ir_produced_of(m, p->symbol);
    if (old != IR_NONE)
        return symc_error_setf(err, SYMC_ERR_VERIFY, "symbol %s already has a producer, node %u", si.name,
                               m->produced[old].node);
    if (m->n_produced == m->cap_produced) {
        uint32_t cap = m->cap_produced ? 2 * m->cap_produced : 4;
        ir_produced *v = realloc(m->produced, cap * sizeof *v);
        if (!v) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory recording the producer of %s", si.name);
        m->produced = v;
        m->cap_produced = cap;
    }
    m->produced[m->n_produced++] = *p;
    return SYMC_OK;
}

uint32_t ir_produced_find(const ir_module *m, uint32_t node, uint32_t output, int32_t dim) {
    for (uint32_t i = 0; i < m->n_produced; i++)
        if (m->produced[i].node == node && m->produced[i].output == output && m->produced[i].dim == dim) return i;
    return IR_NONE;
}

uint32_t ir_produced_of(const ir_module *m, sym_id symbol) {
    for (uint32_t i = 0; i < m->n_produced; i++)
        if (m->produced[i].symbol == symbol) return i;
    return IR_NONE;
}

/* The first dim of t mentioning s, or -1. */
static int tensor_reads(const ir_module *m, const ir_tensor *t, sym_id s) {
    for (int d = 0; d < t->rank; d++)
        if (sym_mentions(m->syms, t->dims[d], s)) return d;
    return -1;
}

/* Whether node ni reads s: in an input's or output's dims or a dim attribute. */
static int node_reads(const ir_module *m, uint32_t ni, sym_id s, const char **where) {
    const ir_node *n = &m->nodes[ni];
    for (uint32_t k = 0; k < n->n_in; k++)
        if (tensor_reads(m, &m->tensors[n->in[k]], s) >= 0) return *where = m->tensors[n->in[k]].name, 1;
    for (uint32_t k = 0; k < n->n_out; k++)
        if (tensor_reads(m, &m->tensors[n->out[k]], s) >= 0) return *where = m->tensors[n->out[k]].name, 1;
    for (uint32_t a = 0; a < n->n_attrs; a++)
        if (n->attrs[a].kind == IR_ATTR_DIMS)
            for (uint32_t k = 0; k < n->attrs[a].n; k++)
                if (n->attrs[a].dims[k] != SYM_NONE && sym_mentions(m->syms, n->attrs[a].dims[k], s))
                    return *where = n->attrs[a].name, 1;
    return 0;
}

static symc_status check_entry(ir_module *m, uint32_t i, symc_error *err) {
    const ir_produced *p = &m->produced[i];
    sym_symbol_info si = {0};
    if (!sym_symbol_get(m->syms, p->symbol, &si) || sym_symbol_bound(m->syms, p->symbol) == SYM_NONE)
        return symc_error_setf(err, SYMC_ERR_VERIFY, "produced symbol %u is not an unbacked symbol", p->symbol);
    if (p->node >= m->n_nodes || p->output >= m->nodes[p->node].n_out)
        return symc_error_setf(err, SYMC_ERR_VERIFY, "symbol %s is produced by node %u output %u, which is not there",
                               si.name, p->node, p->output);
    const ir_node *n = &m->nodes[p->node];
    const ir_tensor *t = &m->tensors[n->out[p->output]];
    const char *opn = ir_op_get(n->op)->name;
    if (t->rank != IR_RANK_UNKNOWN &&
        (p->dim < 0 || p->dim >= t->rank || t->dims[p->dim] != sym_var(m->syms, p->symbol)))
        return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): dim %d of '%s' is not its produced symbol %s",
                               n->name, opn, (int)p->dim, t->name, si.name);
    for (uint32_t j = 0; j < i; j++)
        if (m->produced[j].symbol == p->symbol)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "symbol %s has two producers, nodes '%s' and '%s'", si.name,
                                   m->nodes[m->produced[j].node].name, n->name);
    for (uint32_t k = 0; k < m->n_inputs; k++) {
        const ir_tensor *x = &m->tensors[m->inputs[k]];
        int d = tensor_reads(m, x, p->symbol);
        if (d >= 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "input '%s' dim %d mentions %s, a size node '%s' (%s) produces at run time", x->name,
                                   d, si.name, n->name, opn);
    }
    for (uint32_t r = 0; r < p->node; r++) {
        const char *where = "";
        if (node_reads(m, r, p->symbol, &where))
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "node '%s' (%s) reads %s (in '%s') before its producer, node '%s' (%s), runs",
                                   m->nodes[r].name, ir_op_get(m->nodes[r].op)->name, si.name, where, n->name, opn);
    }
    return SYMC_OK;
}

symc_status ir_check_produced(ir_module *m, symc_error *err) {
    for (uint32_t i = 0; i < m->n_produced; i++) {
        symc_status st = check_entry(m, i, err);
        if (st) return st;
    }
    return SYMC_OK;
}
