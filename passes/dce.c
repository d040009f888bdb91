/* Dead-node removal: the one place nodes whose results reach no graph output
 * are deleted, with their tensors and the constants only they held.
 *
 * Liveness is ir_uses' (ir/uses.c: one walk backwards from the graph outputs,
 * a node live when one of its outputs is an output or read by a live node),
 * so the fuse pass's dead nodes and the ones removed here are the same set.
 * No op of the IR has a side effect (every node writes only its own SSA
 * outputs; common/ops.def), so a node is kept only for its results. Graph
 * inputs are kept even when nothing reads them (they are the engine's
 * interface). The survivors are compacted in place, in their order, and every
 * index (producers, constants, node operands, inputs, outputs) is remapped;
 * a constant lent by another module (ir_module_copy) is dropped without
 * freeing its data. Removing anything drops the fusion plan, whose entries
 * are per node.
 *
 * Callers: the pipeline's `dce` row (after the folds and the layout pass,
 * which leave their replaced nodes unread) and the ONNX importer, whose
 * shape sub-graphs are dead once their values became attributes. */
#include <stdlib.h>

#include "passes/passes.h"

symc_status pass_remove_dead(ir_module *m, uint32_t *removed, symc_error *err) {
    if (removed) *removed = 0;
    ir_uses u;
    symc_status st = ir_uses_compute(m, &u, err);
    if (st) return st;
    uint32_t n_dead = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) n_dead += !u.live[i];
    if (!n_dead) {
        ir_uses_free(&u);
        return SYMC_OK;
    }
    uint32_t *tmap = malloc((m->n_tensors + 1) * sizeof *tmap), *nmap = malloc((m->n_nodes + 1) * sizeof *nmap);
    uint32_t *cmap = malloc((m->n_constants + 1) * sizeof *cmap);
    if (!tmap || !nmap || !cmap) {
        free(tmap), free(nmap), free(cmap);
        ir_uses_free(&u);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory removing dead nodes");
    }
    uint32_t nt = 0, nn = 0, nc = 0, lent = 0;
    for (uint32_t ti = 0; ti < m->n_tensors; ti++) tmap[ti] = IR_NONE;
    for (uint32_t ci = 0; ci < m->n_constants; ci++) cmap[ci] = IR_NONE;
    for (uint32_t ni = 0; ni < m->n_nodes; ni++) nmap[ni] = u.live[ni] ? nn++ : IR_NONE;
    for (uint32_t i = 0; i < m->n_inputs; i++) tmap[m->inputs[i]] = 0; /* marks: graph inputs */
    for (uint32_t ti = 0; ti < m->n_tensors; ti++) {
        const ir_tensor *t = &m->tensors[ti];
        /* no producer: kept when a graph input (or read, or an output: the verifier's to refuse);
         * else its producer decides */
        int keep = t->producer == IR_NONE ? tmap[ti] == 0 || u.n_consumers[ti] || u.is_output[ti] : u.live[t->producer];
        tmap[ti] = keep ? nt++ : IR_NONE;
        if (keep && t->constant != IR_NONE) cmap[t->constant] = 0;
    }
    ir_uses_free(&u);
    for (uint32_t ci = 0; ci < m->n_constants; ci++) {
        if (cmap[ci] == IR_NONE) {
            if (ci >= m->n_lent) free(m->constants[ci].data);
            continue;
        }
        lent += ci < m->n_lent;
        cmap[ci] = nc;
        m->constants[nc++] = m->constants[ci];
    }
    for (uint32_t ti = 0; ti < m->n_tensors; ti++) {
        if (tmap[ti] == IR_NONE) continue;
        ir_tensor t = m->tensors[ti];
        if (t.producer != IR_NONE) t.producer = nmap[t.producer];
        if (t.constant != IR_NONE) t.constant = cmap[t.constant];
        m->tensors[tmap[ti]] = t;
    }
    for (uint32_t ni = 0; ni < m->n_nodes; ni++) {
        if (nmap[ni] == IR_NONE) continue;
        ir_node n = m->nodes[ni];
        for (uint32_t k = 0; k < n.n_in; k++) n.in[k] = tmap[n.in[k]];
        for (uint32_t k = 0; k < n.n_out; k++) n.out[k] = tmap[n.out[k]];
        m->nodes[nmap[ni]] = n;
    }
    for (uint32_t i = 0; i < m->n_inputs; i++) m->inputs[i] = tmap[m->inputs[i]];
    for (uint32_t i = 0; i < m->n_outputs; i++) m->outputs[i] = tmap[m->outputs[i]];
    m->n_tensors = nt;
    m->n_nodes = nn;
    m->n_constants = nc;
    m->n_lent = lent;
    free(tmap), free(nmap), free(cmap);
    ir_fuse_drop(m);
    if (removed) *removed = n_dead;
    return SYMC_OK;
}
