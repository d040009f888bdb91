/* Uses: which live nodes read each tensor.
 *
 * Consumers come after producers (the verifier's SSA order), so one walk
 * backwards from the graph outputs finds the live nodes, and one forward
 * walk counts each tensor's distinct live readers. A node producing a size
 * (ir_produced_live) is live while a live node mentions the size, even where
 * nothing reads its outputs; the walk repeats from such producers. Fusion decisions read
 * this (a result with one reader may be computed inside it), and so does
 * the check of a fusion plan. */
#include "ir/ir.h"

#include <stdlib.h>

symc_status ir_uses_compute(const ir_module *m, ir_uses *u, symc_error *err) {
    uint32_t nt = m->n_tensors ? m->n_tensors : 1, nn = m->n_nodes ? m->n_nodes : 1;
    u->n_tensors = m->n_tensors;
    u->live = calloc(nn, 1);
    u->n_consumers = calloc(nt, sizeof *u->n_consumers);
    u->consumer = calloc(nt, sizeof *u->consumer);
    u->is_output = calloc(nt, 1);
    uint8_t *used = calloc(nt, 1);
    if (!u->live || !u->n_consumers || !u->consumer || !u->is_output || !used) {
        free(used);
        ir_uses_free(u);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory counting the readers of each tensor");
    }
    for (uint32_t i = 0; i < m->n_outputs; i++)
        if (m->outputs[i] < m->n_tensors) u->is_output[m->outputs[i]] = 1;
    for (;;) {
        for (uint32_t i = m->n_nodes; i-- > 0;) {
            const ir_node *n = &m->nodes[i];
            for (uint32_t k = 0; k < n->n_out; k++) u->live[i] |= u->is_output[n->out[k]] || used[n->out[k]];
            if (u->live[i])
                for (uint32_t k = 0; k < n->n_in; k++) used[n->in[k]] = 1;
        }
        /* a producer whose size a live node reads is live too, with what it reads (rare: walk again) */
        if (!ir_produced_live(m, u->live)) break;
    }
    free(used);
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        if (!u->live[i]) continue;
        for (uint32_t k = 0; k < n->n_in; k++) {
            uint32_t t = n->in[k];
            if (u->n_consumers[t] && u->consumer[t] == i) continue; /* the same node again */
            u->n_consumers[t]++;
            u->consumer[t] = i;
        }
    }
    return SYMC_OK;
}

uint32_t *ir_uses_counts(const ir_module *m) {
    uint32_t *n = calloc(m->n_tensors ? m->n_tensors : 1, sizeof *n);
    ir_uses u;
    symc_error err;
    if (!n || ir_uses_compute(m, &u, &err)) {
        free(n);
        return NULL;
    }
    for (uint32_t t = 0; t < m->n_tensors; t++) n[t] = u.n_consumers[t] + u.is_output[t];
    ir_uses_free(&u);
    return n;
}

void ir_uses_free(ir_uses *u) {
    free(u->live);
    free(u->n_consumers);
    free(u->consumer);
    free(u->is_output);
    u->live = u->is_output = NULL;
    u->n_consumers = u->consumer = NULL;
}

int ir_uses_private(const ir_uses *u, uint32_t t) {
    return t < u->n_tensors && u->n_consumers[t] == 1 && !u->is_output[t];
}
