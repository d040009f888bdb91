/* Helpers of the passes that rewrite a module's graph (merge_proj.c, patchify.c, fold_const.c,
 * roll.c, space_to_depth.c, move_chain.c): reader counts, the one reader of a tensor, fresh names,
 * a new node and its result, moving nodes, retiring a node's result,
 * the walk that looks for rewrites again after each one, and the passes' environment switch. A
 * rewrite appends its new nodes and moves them into place (pass_place keeps
 * the producers right and infers the results); the old nodes get fresh unread results
 * (pass_retire) and go at the end with pass_remove_dead. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* The one live node reading tensor t (uses[t] == 1 and t is not a graph output), or IR_NONE. */
uint32_t pass_only_reader(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t t) {
    if (uses[t] != 1 || is_out[t]) return IR_NONE;
    for (uint32_t i = m->tensors[t].producer == IR_NONE ? 0 : m->tensors[t].producer + 1; i < m->n_nodes; i++) {
        int live = 0; /* a reader left unread (a dropped identity's copy, dce's to remove) is not the one */
        for (uint32_t o = 0; o < m->nodes[i].n_out && !live; o++)
            live = uses[m->nodes[i].out[o]] || is_out[m->nodes[i].out[o]];
        for (uint32_t k = 0; live && k < m->nodes[i].n_in; k++)
            if (m->nodes[i].in[k] == t) return i;
    }
    return IR_NONE;
}

/* A name not yet taken by a tensor or a node: base + suffix (+ a number). */
void pass_fresh_name(const ir_module *m, const char *base, const char *suffix, char *buf, size_t cap) {
    uint32_t found;
    snprintf(buf, cap, "%s%s", base, suffix);
    for (unsigned k = 2; (ir_find_tensor(m, buf, &found) || ir_find_node(m, buf, &found)) && k < 1000000; k++)
        snprintf(buf, cap, "%s%s.%u", base, suffix, k);
}

/* A new node op(in[0..n_in)) named base + suffix (a fresh name), `source` the pass making it; its
 * result is *out, or when *out is IR_NONE a new tensor of that name, in[0]'s dtype and the given
 * dims; attr (may be NULL) its one attribute. *node: its index. */
symc_status pass_add_step(ir_module *m, const char *source, ir_op op, const char *base, const char *suffix,
                          const uint32_t *in, uint32_t n_in, int32_t rank, const sym_expr *dims, const ir_attr *attr,
                          uint32_t *out, uint32_t *node, symc_error *err) {
    char name[512];
    pass_fresh_name(m, base, suffix, name, sizeof name);
    symc_status st = *out == IR_NONE ? ir_add_tensor(m, name, m->tensors[in[0]].dtype, rank, dims, out, err) : SYMC_OK;
    return st ? st : ir_add_node(m, op, name, source, in, n_in, out, 1, attr, attr ? 1 : 0, node, err);
}

symc_status pass_add_constant(ir_module *m, const char *source, const char *base, const char *suffix, symc_dtype dt,
                              int32_t rank, const sym_expr *dims, uint8_t *data, size_t size, uint32_t *t,
                              uint32_t *node, symc_error *err) {
    uint32_t pool;
    symc_status st = ir_add_constant(m, data, size, &pool, err);
    if (st) return st;
    char name[512];
    pass_fresh_name(m, base, suffix, name, sizeof name);
    if ((st = ir_add_tensor(m, name, dt, rank, dims, t, err))) return st;
    m->tensors[*t].constant = pool;
    return ir_add_node(m, IR_OP_CONSTANT, name, source, NULL, 0, t, 1, NULL, 0, node, err);
}

/* Moves node j to position i <= j, shifting nodes i..j-1 up by one and renumbering producers. */
void pass_move_before(ir_module *m, uint32_t j, uint32_t i) {
    ir_node moved = m->nodes[j];
    memmove(&m->nodes[i + 1], &m->nodes[i], (size_t)(j - i) * sizeof *m->nodes);
    m->nodes[i] = moved;
    for (uint32_t k = i; k <= j; k++)
        for (uint32_t o = 0; o < m->nodes[k].n_out; o++) m->tensors[m->nodes[k].out[o]].producer = k;
}

/* Node `node`'s result t (any of its outputs) gets a fresh unread tensor in its place: t is then
 * free for a new producer, and the node dead unless another of its results is read. */
symc_status pass_retire(ir_module *m, uint32_t node, uint32_t t, symc_error *err) {
    uint32_t slot = 0;
    while (slot < m->nodes[node].n_out && m->nodes[node].out[slot] != t) slot++;
    if (slot == m->nodes[node].n_out)
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "'%s' is no result of node '%s'", m->tensors[t].name,
                               m->nodes[node].name);
    char name[512];
    pass_fresh_name(m, m->tensors[t].name ? m->tensors[t].name : "part", ".retired", name, sizeof name);
    sym_expr dims[IR_MAX_RANK];
    int32_t rank = m->tensors[t].rank;
    for (int32_t d = 0; d < rank; d++) dims[d] = m->tensors[t].dims[d];
    uint32_t nt;
    symc_status st = ir_add_tensor(m, name, m->tensors[t].dtype, rank, dims, &nt, err);
    if (st) return st;
    m->nodes[node].out[slot] = nt;
    m->tensors[nt].producer = node;
    return SYMC_OK;
}

/* The new nodes made[0..n), appended in order, moved to positions at, at + 1, ..., and the
 * results of all but the constants inferred. Appended nodes keep their indices until moved, and
 * each move shifts only nodes before it. */
symc_status pass_place(ir_module *m, const uint32_t *made, uint32_t n, uint32_t at, symc_error *err) {
    symc_status st;
    for (uint32_t i = 0; i < n; i++) pass_move_before(m, made[i], at + i);
    for (uint32_t i = at; i < at + n; i++)
        if (m->nodes[i].op != IR_OP_CONSTANT && (st = pass_infer_node(m, i, err))) return st;
    return SYMC_OK;
}

/* *uses (live readers of each tensor) and *is_out (graph outputs) of m as it is now, the old
 * arrays freed; `pass` names the pass in the out-of-memory error */
symc_status pass_reader_counts(const ir_module *m, uint32_t **uses, uint8_t **is_out, const char *pass,
                               symc_error *err) {
    free(*uses);
    free(*is_out);
    *uses = ir_uses_counts(m);
    *is_out = calloc(m->n_tensors + 1, 1);
    if (!*uses || !*is_out) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the %s pass", pass);
    for (uint32_t i = 0; i < m->n_outputs; i++) (*is_out)[m->outputs[i]] = 1;
    return SYMC_OK;
}

/* the pass's switch: off when the environment variable is "0" (for comparison) */
int pass_switched_off(const char *env) {
    const char *sw = getenv(env);
    return sw && !strcmp(sw, "0");
}

/* The walk of a rewriting pass: at(m, uses, is_out, i, &rewrote, err) at each node i in order, with
 * the live reader counts and graph-output flags of m as it is; a rewrite moves indices, so after
 * one the walk starts again from the first node of the new module, until a walk rewrites nothing
 * or `at` fails. `pass` names the pass in an out-of-memory error; *count (may be NULL): the
 * rewrites. */
symc_status pass_rewrite_walk(ir_module *m, const char *pass, pass_rewrite_fn at, uint32_t *count, symc_error *err) {
    uint32_t *uses = NULL, n = 0;
    uint8_t *is_out = NULL;
    symc_status st = SYMC_OK;
    for (int again = 1; again && !st && !(st = pass_reader_counts(m, &uses, &is_out, pass, err));) {
        again = 0;
        for (uint32_t i = 0; i < m->n_nodes && !again && !st; i++) {
            int rewrote = 0;
            st = at(m, uses, is_out, i, &rewrote, err);
            if (!st && rewrote) again = 1, n++;
        }
    }
    free(uses);
    free(is_out);
    if (count) *count = n;
    return st;
}
