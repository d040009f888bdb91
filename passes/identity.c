/* Nodes that copy their input unchanged (pass_drop_identities).
 *
 * Exporters leave copies that change nothing once the sizes are known: torchvision's Swin pads
 * each block's input to a multiple of its window with pads computed from the sizes (all zero at
 * 224x224) and crops the result back with a slice over the whole axis; ONNX exports carry
 * Identity nodes, casts to the same type, expands to the same shape, transposes by the identity
 * permutation and concats of one operand. Each was a kernel that copied the tensor (Swin-T: 15
 * zero pads, 0.38 ms at batch 32 on an H200). A node is such a copy when its result has its
 * input's dtype and shape (the same dims, as expressions) and it is one of:
 *   identity; pad with every pad provably 0; slice with every step 1 (the shape then says every
 *   start is 0 and every end the whole axis); transpose by (0, 1, ..., r - 1); cast; expand;
 *   concat of one operand.
 * Its readers then read the input instead; the node, unread, is removed by the pipeline's dce row
 * (indices stay as they are until then). A result that is a graph output
 * keeps its node (the engine's outputs are distinct tensors). Only moves reads: results are bit
 * for bit the same. SYMC_DROP_IDENTITIES=0 turns it off (for comparison). */
#include <stdlib.h>

#include "passes/passes.h"

/* every entry of the dims attribute `name` of n is the constant 0 (absent: 1) */
static int all_zero(const ir_module *m, const ir_node *n, const char *name) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a) return 1;
    if (a->kind != IR_ATTR_DIMS && a->kind != IR_ATTR_INTS) return 0;
    for (uint32_t i = 0; i < a->n; i++) {
        int64_t v;
        if (a->kind == IR_ATTR_INTS ? a->ints[i] != 0
                                    : (a->dims[i] == SYM_NONE || !sym_is_const(m->syms, (sym_expr)a->dims[i], &v) || v))
            return 0;
    }
    return 1;
}

/* every entry of the ints attribute `name` is 1 (absent: 1) */
static int all_one(const ir_node *n, const char *name) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a) return 1;
    if (a->kind != IR_ATTR_INTS) return 0;
    for (uint32_t i = 0; i < a->n; i++)
        if (a->ints[i] != 1) return 0;
    return 1;
}

/* node i copies its input 0 unchanged into its one result */
static int copies_input(const ir_module *m, uint32_t i) {
    const ir_node *n = &m->nodes[i];
    if (n->n_out != 1 || n->n_in < 1 || n->in[0] == IR_NONE) return 0;
    const ir_tensor *x = &m->tensors[n->in[0]], *y = &m->tensors[n->out[0]];
    if (x->dtype != y->dtype || x->rank < 0 || !ir_same_shape(x, y)) return 0;
    switch (n->op) {
    case IR_OP_IDENTITY:
    case IR_OP_CAST:
    case IR_OP_EXPAND: return 1;
    case IR_OP_CONCAT: return n->n_in == 1;
    case IR_OP_PAD: return all_zero(m, n, "pads");
    case IR_OP_SLICE: return all_one(n, "steps");
    case IR_OP_TRANSPOSE: {
        const ir_attr *p = ir_node_attr(n, "perm");
        if (!p || p->kind != IR_ATTR_INTS || p->n != (uint32_t)x->rank) return 0;
        for (uint32_t d = 0; d < p->n; d++)
            if (p->ints[d] != (int64_t)d) return 0;
        return 1;
    }
    default: return 0;
    }
}

symc_status pass_drop_identities(ir_module *m, uint32_t *dropped, symc_error *err) {
    if (dropped) *dropped = 0;
    if (pass_switched_off("SYMC_DROP_IDENTITIES")) return SYMC_OK;
    uint32_t *uses = NULL, n = 0;
    uint8_t *is_out = NULL;
    symc_status st = pass_reader_counts(m, &uses, &is_out, "drop-identities", err);
    for (uint32_t i = 0; !st && i < m->n_nodes; i++) {
        if (!copies_input(m, i) || is_out[m->nodes[i].out[0]]) continue;
        const uint32_t x = m->nodes[i].in[0], y = m->nodes[i].out[0];
        for (uint32_t j = i + 1; j < m->n_nodes; j++) /* readers come after their producer */
            for (uint32_t k = 0; k < m->nodes[j].n_in; k++)
                if (m->nodes[j].in[k] == y) m->nodes[j].in[k] = x;
        n++;
    }
    free(uses);
    free(is_out);
    if (!st && n) ir_fuse_drop(m); /* the copies are left unread: the pipeline's dce row removes them */
    if (!st && dropped) *dropped = n;
    return st;
}
