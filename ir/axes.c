/* Axis attributes: non-negative in the IR, made so where a module is made.
 *
 * ONNX, torch and the builder API count axes from the end with negative
 * values; the IR does not. Every op attribute that names axes ("axis", an
 * int; "axes", ints; the op table's schemas, common/ops.def) indexes the rank
 * of the node's first input, but two: unsqueeze's axes index its result's
 * rank (the input's plus the number of axes), and flatten's axis may equal
 * the rank. ir_normalize_axes rewrites one node's negative axes in place once
 * that rank is known; the builder calls it as it adds a node (symc_add_node),
 * the loader for every node of a .symir file, and shape inference for each
 * node before its rule (pass_infer_node, so a node the builder added over a
 * tensor of unknown rank, and every node the ONNX importer adds, is
 * normalized when its input gets a shape). An axis out of range stays as it
 * is, for the shape rule's message. ir_verify then refuses a negative axis
 * of a node whose rank is known (ir_check_axes), so every pass after shape
 * inference, and codegen, reads non-negative axes. ir_axis_norm is the one
 * definition of the arithmetic, which the importer uses for the ONNX
 * attributes it reads itself. */
#include <stdio.h>
#include <string.h>

#include "ir/ir.h"

int ir_axis_norm(int64_t axis, int32_t rank, int64_t *out) {
    if (rank < 0 || axis < -(int64_t)rank || axis >= (int64_t)rank) return 0;
    *out = axis < 0 ? axis + rank : axis;
    return 1;
}

/* the attribute holds axes of this node's op */
static int is_axes_attr(const ir_attr *a) {
    return (a->kind == IR_ATTR_INT && !strcmp(a->name, "axis")) ||
        (a->kind == IR_ATTR_INTS && !strcmp(a->name, "axes"));
}

/* The rank a's values index; IR_RANK_UNKNOWN while the input has no shape. */
static int32_t axes_rank(const ir_module *m, const ir_node *n, const ir_attr *a) {
    if (!n->n_in || n->in[0] >= m->n_tensors) return IR_RANK_UNKNOWN;
    int32_t r = m->tensors[n->in[0]].rank;
    if (r < 0) return IR_RANK_UNKNOWN;
    if (n->op == IR_OP_UNSQUEEZE) r += (int32_t)a->n;
    return r;
}

symc_status ir_normalize_axes(ir_module *m, uint32_t node, symc_error *err) {
    (void)err;
    ir_node *n = &m->nodes[node];
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        ir_attr *a = &n->attrs[i];
        if (!is_axes_attr(a)) continue;
        int32_t r = axes_rank(m, n, a);
        if (r < 0) continue;
        int64_t v;
        if (a->kind == IR_ATTR_INT) {
            if (a->i < 0 && ir_axis_norm(a->i, r, &v)) a->i = v; /* flatten's [-r, r] too */
            continue;
        }
        /* the module's own copy (ir_add_node copies attribute arrays into the arena) */
        int64_t *ints = (int64_t *)(uintptr_t)a->ints;
        for (uint32_t k = 0; k < a->n; k++)
            if (ints[k] < 0 && ir_axis_norm(ints[k], r, &v)) ints[k] = v;
    }
    return SYMC_OK;
}

symc_status ir_check_axes(const ir_module *m, uint32_t node, symc_error *err) {
    const ir_node *n = &m->nodes[node];
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const ir_attr *a = &n->attrs[i];
        if (!is_axes_attr(a) || axes_rank(m, n, a) < 0) continue;
        for (uint32_t k = 0; k < (a->kind == IR_ATTR_INT ? 1u : a->n); k++) {
            int64_t v = a->kind == IR_ATTR_INT ? a->i : a->ints[k];
            if (v >= 0) continue;
            char at[32] = "";
            if (a->kind == IR_ATTR_INTS) snprintf(at, sizeof at, "[%u]", k);
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "node '%s' (%s): attribute '%s'%s = %lld is a negative axis (rank %d): the IR's "
                                   "axes are non-negative, made so at import (ir_normalize_axes)%s",
                                   n->name, ir_op_get(n->op)->name, a->name, at, (long long)v, (int)axes_rank(m, n, a),
                                   v < -(int64_t)axes_rank(m, n, a) ? "; this one is out of range for the rank" : "");
        }
    }
    return SYMC_OK;
}
