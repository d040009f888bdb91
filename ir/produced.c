/* The producers of unbacked symbols (docs/PLAN-data-dependent.md §2).
 *
 * A data-dependent size (the columns of a nonzero) is a symshape symbol
 * declared unbacked (sym_symbol_new_unbacked) by the shape rule of the op
 * that produces it, and that op's output dim is the symbol. The producer of
 * a symbol is therefore found in the graph, not in a table: the node of a
 * producing op (ir_produced_dim) whose produced dim is the bare symbol.
 * Passes that move, rename or drop nodes need to do nothing to keep the link
 * (a model has a few such nodes; the scans are linear).
 *
 * A producer is live while a live node mentions its size (ir_produced_live),
 * even where nothing reads its outputs: dead-node removal keeps it.
 *
 * The verifier's part checks, per unbacked symbol that any tensor dim or dim
 * attribute mentions: one producer, and nothing reads the symbol before it
 * runs (no graph input dim, no dim or dim attribute of an earlier node): the
 * runtime learns the value only when the producer has run. Bounds are over
 * earlier symbols by construction (symshape refuses anything else). */
#include <stdlib.h>

#include "ir/ir.h"

/* The unbacked symbol node ni produces, or SYM_NONE. */
static sym_id produced_by(const ir_module *m, uint32_t ni) {
    const ir_node *n = &m->nodes[ni];
    unsigned k;
    int d;
    if (!ir_produced_dim(n->op, &k, &d) || k >= n->n_out) return SYM_NONE;
    const ir_tensor *t = &m->tensors[n->out[k]];
    sym_view v;
    if (t->rank <= d || !sym_expr_view(m->syms, t->dims[d], &v) || v.kind != SYM_SYMBOL) return SYM_NONE;
    return sym_symbol_bound(m->syms, (sym_id)v.value) == SYM_NONE ? SYM_NONE : (sym_id)v.value;
}

uint32_t ir_producer_of(const ir_module *m, sym_id s) {
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (produced_by(m, i) == s) return i;
    return IR_NONE;
}

/* The first dim of t mentioning s, or -1. */
static int tensor_reads(const ir_module *m, const ir_tensor *t, sym_id s) {
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] != SYM_NONE && sym_mentions(m->syms, t->dims[d], s)) return d;
    return -1;
}

/* Whether node ni reads s: in an input's or output's dims or a dim attribute;
 * *where names the tensor or attribute. */
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

uint32_t ir_produced_live(const ir_module *m, uint8_t *live) {
    uint32_t made = 0;
    for (uint32_t p = 0; p < m->n_nodes; p++) {
        if (live[p]) continue;
        sym_id s = produced_by(m, p);
        if (s == SYM_NONE) continue;
        const char *where;
        for (uint32_t i = p + 1; i < m->n_nodes; i++)
            if (live[i] && node_reads(m, i, s, &where)) {
                live[p] = 1, made++;
                break;
            }
    }
    return made;
}

static symc_status check_symbol(ir_module *m, sym_id s, symc_error *err) {
    sym_symbol_info si = {0};
    sym_symbol_get(m->syms, s, &si);
    uint32_t p = IR_NONE, first_reader = IR_NONE;
    const char *where = "";
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (produced_by(m, i) == s) {
            if (p != IR_NONE)
                return symc_error_setf(err, SYMC_ERR_VERIFY, "symbol %s has two producers, nodes '%s' and '%s'",
                                       si.name, m->nodes[p].name, m->nodes[i].name);
            p = i;
        } else if (first_reader == IR_NONE && node_reads(m, i, s, &where)) {
            first_reader = i;
        }
    }
    for (uint32_t k = 0; k < m->n_inputs; k++) {
        const ir_tensor *x = &m->tensors[m->inputs[k]];
        int d = tensor_reads(m, x, s);
        if (d >= 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "input '%s' dim %d mentions %s, a size known only at run time (%s)", x->name, d,
                                   si.name, si.provenance && *si.provenance ? si.provenance : "no producer");
    }
    if (first_reader == IR_NONE) return SYMC_OK; /* mentioned by nothing: nothing to produce */
    if (p == IR_NONE)
        return symc_error_setf(err, SYMC_ERR_VERIFY,
                               "node '%s' (%s) reads %s (in '%s'), a size known only at run time, but no node "
                               "produces it",
                               m->nodes[first_reader].name, ir_op_get(m->nodes[first_reader].op)->name, si.name, where);
    if (first_reader < p) {
        (void)node_reads(m, first_reader, s, &where);
        return symc_error_setf(err, SYMC_ERR_VERIFY,
                               "node '%s' (%s) reads %s (in '%s') before its producer, node "
                               "'%s' (%s), runs",
                               m->nodes[first_reader].name, ir_op_get(m->nodes[first_reader].op)->name, si.name, where,
                               m->nodes[p].name, ir_op_get(m->nodes[p].op)->name);
    }
    return SYMC_OK;
}

symc_status ir_check_produced(ir_module *m, symc_error *err) {
    if (!m->syms) return SYMC_OK;
    uint32_t ns = sym_symbol_count(m->syms);
    for (sym_id s = 0; s < ns; s++) {
        if (sym_symbol_bound(m->syms, s) == SYM_NONE) continue;
        symc_status st = check_symbol(m, s, err);
        if (st) return st;
    }
    return SYMC_OK;
}
