/* Chains of row moves composed into one gather (pass_compose_moves).
 *
 * torchvision's Swin rolls a shifted block's input along H and along W and cuts it into windows
 * (after roll-gather: two gathers by constant indices and a transpose, three full copies), and
 * merges the windows back and rolls the result back on the way out (three more). Each of these
 * moves whole rows of the last axis (the channels) between positions of the middle axes, the same
 * way in every batch row: together they are one permutation of the H * W positions. So a private
 * chain from X to Y of
 *   - gathers by constant rank-1 indices along a middle axis (not the first, not the last),
 *   - transposes that keep the first and the last axis in place,
 *   - reshapes that keep the first dim (the same expression) and the last,
 * holding at least two copies (gathers and transposes), with constant middle dims of M elements in
 * all, is made by one gather: X viewed as [B, M, C], gathered along axis 1 by the constant i64
 * table T[M] (T[p]: the source position of Y's flattened middle position p, found by running the
 * chain on the positions 0..M-1), viewed as Y. One copy instead of two to six, in 16-byte chunks of
 * the rows on the CUDA target. An index out of range leaves the chain as it is (the gathers report
 * it at run time). Only moves data: bit-identical results. The chain's nodes are left unread for
 * dce. SYMC_COMPOSE_MOVES=0 turns it off. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

#define MOVES_MAX 8           /* nodes in a chain */
#define MOVES_TABLE (1 << 22) /* middle positions at most (a 32 MiB table) */

/* the constant middle dims of t (dims 1 .. rank - 2) and their product; 0 unless all constant */
static int middle(const ir_module *m, uint32_t t, int64_t *dims, int *n, int64_t *prod) {
    const ir_tensor *x = &m->tensors[t];
    *n = x->rank - 2;
    *prod = 1;
    for (int d = 1; d < x->rank - 1; d++) {
        if (!sym_is_const(m->syms, x->dims[d], &dims[d - 1]) || dims[d - 1] < 1) return 0;
        *prod *= dims[d - 1];
        if (*prod > MOVES_TABLE) return 0;
    }
    return 1;
}

/* node q moves rows of its input 0 into its output the chain's way: 2 for a copy (gather,
 * transpose), 1 for a reshape, 0 for neither; first and last dims kept */
static int move_kind(const ir_module *m, uint32_t q) {
    const ir_node *n = &m->nodes[q];
    if (n->n_in < 1 || n->n_out != 1) return 0;
    const ir_tensor *in = &m->tensors[n->in[0]], *out = &m->tensors[n->out[0]];
    if (in->rank < 3 || out->rank < 3 || in->dtype != out->dtype || in->dims[0] != out->dims[0] ||
        in->dims[in->rank - 1] != out->dims[out->rank - 1])
        return 0;
    int64_t c;
    if (!sym_is_const(m->syms, in->dims[in->rank - 1], &c)) return 0;
    if (n->op == IR_OP_RESHAPE && n->n_in == 1) return 1;
    if (n->op == IR_OP_TRANSPOSE && n->n_in == 1) {
        const ir_attr *p = ir_node_attr(n, "perm");
        return p && p->kind == IR_ATTR_INTS && p->n == (uint32_t)in->rank && p->ints[0] == 0 &&
                p->ints[in->rank - 1] == in->rank - 1
            ? 2
            : 0;
    }
    if (n->op == IR_OP_GATHER && n->n_in == 2) {
        const ir_tensor *ix = &m->tensors[n->in[1]];
        const ir_attr *ax = ir_node_attr(n, "axis");
        int64_t a = ax ? ax->i : 0;
        if (a < 0) a += in->rank;
        return ix->rank == 1 && ix->constant != IR_NONE && (ix->dtype == SYMC_I64 || ix->dtype == SYMC_I32) && a >= 1 &&
                a < in->rank - 1 && out->rank == in->rank
            ? 2
            : 0;
    }
    return 0;
}

/* pos (the positions of node q's input, middle dims in[0..n_in)) moved through q into out */
static int apply(const ir_module *m, uint32_t q, const int64_t *pos, int64_t *out, const int64_t *idims, int n_in,
                 int64_t total) {
    const ir_node *n = &m->nodes[q];
    if (n->op == IR_OP_RESHAPE) { /* row-major order kept */
        memcpy(out, pos, (size_t)total * sizeof *out);
        return 1;
    }
    int64_t stride[IR_MAX_RANK], odims[IR_MAX_RANK], src[IR_MAX_RANK], s = 1;
    for (int d = n_in - 1; d >= 0; s *= idims[d], d--) stride[d] = s;
    if (n->op == IR_OP_TRANSPOSE) {
        const ir_attr *p = ir_node_attr(n, "perm");
        for (int d = 0; d < n_in; d++) src[d] = p->ints[d + 1] - 1, odims[d] = idims[src[d]];
    } else {
        const ir_attr *ax = ir_node_attr(n, "axis");
        int64_t a = (ax ? ax->i : 0);
        if (a < 0) a += n_in + 2;
        a -= 1;
        const ir_tensor *ix = &m->tensors[n->in[1]];
        const ir_constant *k = &m->constants[ix->constant];
        int64_t len;
        /* as many indices as the axis has positions: the chain keeps its M */
        if (!sym_is_const(m->syms, ix->dims[0], &len) || len != idims[a] ||
            k->size < (size_t)len * symc_dtype_size(ix->dtype))
            return 0;
        const int64_t inner = stride[a], outer_n = total / (len * inner);
        for (int64_t o = 0; o < outer_n; o++)
            for (int64_t j = 0; j < len; j++) {
                int64_t v = (int64_t)symc_dtype_load(k->data, ix->dtype, (size_t)j);
                if (v < 0) v += idims[a];
                if (v < 0 || v >= idims[a]) return 0;
                memcpy(out + (o * len + j) * inner, pos + (o * idims[a] + v) * inner, (size_t)inner * sizeof *out);
            }
        return 1;
    }
    /* transpose: out[c] = pos[source of c] */
    for (int64_t i = 0; i < total; i++) {
        int64_t r = i, off = 0;
        for (int d = n_in - 1; d >= 0; d--) {
            int64_t c = r % odims[d];
            r /= odims[d];
            off += c * stride[src[d]];
        }
        out[i] = pos[off];
    }
    return 1;
}

/* *table: the source position of each of the chain's result positions (the chain run on the
 * positions 0 .. total - 1 from X's side); NULL when an index is out of range */
static symc_status source_table(const ir_module *m, const uint32_t *chain, int n_chain, int64_t total, int64_t **table,
                                symc_error *err) {
    int64_t *a = malloc((size_t)total * sizeof *a), *b = malloc((size_t)total * sizeof *b);
    *table = NULL;
    if (!a || !b) {
        free(a), free(b);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the compose-moves pass");
    }
    for (int64_t p = 0; p < total; p++) a[p] = p;
    int ok = 1;
    for (int c = n_chain - 1; c >= 0 && ok; c--) {
        int64_t idims[IR_MAX_RANK], prod;
        int n;
        middle(m, m->nodes[chain[c]].in[0], idims, &n, &prod);
        ok = apply(m, chain[c], a, b, idims, n, total);
        int64_t *t = a;
        a = b, b = t;
    }
    free(b);
    if (ok) *table = a;
    else free(a);
    return SYMC_OK;
}

/* node i's result made by gather(reshape(x, [B, total, C]), table a, axis 1) viewed as it; takes
 * a (malloc'd) */
static symc_status compose(ir_module *m, uint32_t i, uint32_t x, int64_t *a, int64_t total, symc_error *err) {
    const uint32_t y = m->nodes[i].out[0];
    const ir_tensor *xt = &m->tensors[x];
    sym_table *T = m->syms;
    sym_expr d3[3] = {xt->dims[0], sym_const(T, total), xt->dims[xt->rank - 1]}, dy[IR_MAX_RANK];
    const int32_t ry = m->tensors[y].rank;
    memcpy(dy, m->tensors[y].dims, (size_t)ry * sizeof *dy);
    char base[400];
    snprintf(base, sizeof base, "%s", m->nodes[i].name ? m->nodes[i].name : "moves");
    symc_status st = pass_retire(m, i, y, err);
    uint32_t tab = IR_NONE, flat = IR_NONE, g = IR_NONE, out = y, made[4];
    if (st) {
        free(a);
        return st;
    }
    const sym_expr dt = sym_const(T, total); /* the table takes a */
    if ((st = pass_add_constant(m, "compose-moves", base, ".move_index", SYMC_I64, 1, &dt, (uint8_t *)a,
                                (size_t)total * sizeof *a, &tab, &made[0], err)))
        return st;
    ir_attr a3 = {.name = "shape", .kind = IR_ATTR_DIMS, .n = 3, .dims = d3};
    ir_attr ax = {.name = "axis", .kind = IR_ATTR_INT, .i = 1};
    ir_attr ay = {.name = "shape", .kind = IR_ATTR_DIMS, .n = (uint32_t)ry, .dims = dy};
    uint32_t gin[2] = {IR_NONE, tab};
    if ((st = pass_add_step(m, "compose-moves", IR_OP_RESHAPE, base, ".move_rows", &x, 1, 3, d3, &a3, &flat, &made[1],
                            err)))
        return st;
    gin[0] = flat;
    if ((st = pass_add_step(m, "compose-moves", IR_OP_GATHER, base, ".moved", gin, 2, 3, d3, &ax, &g, &made[2], err)) ||
        (st = pass_add_step(m, "compose-moves", IR_OP_RESHAPE, base, ".moved_view", &g, 1, ry, dy, &ay, &out, &made[3],
                            err)))
        return st;
    return pass_place(m, made, 4, i, err);
}

/* the chain ending at node i (pass_rewrite_walk's step) */
static symc_status moves_at(ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, int *rewrote,
                            symc_error *err) {
    int kind = move_kind(m, i);
    if (kind != 2) return SYMC_OK; /* a chain ends at a copy (a trailing view stays a view) */
    uint32_t chain[MOVES_MAX], x = m->nodes[i].in[0];
    int n_chain = 0, copies = 0;
    chain[n_chain++] = i, copies++;
    /* back while the input is private and made by another move */
    while (n_chain < MOVES_MAX && uses[x] == 1 && !is_out[x]) {
        uint32_t q = m->tensors[x].producer;
        int k = q == IR_NONE ? 0 : move_kind(m, q);
        if (!k) break;
        chain[n_chain++] = q, copies += k == 2;
        x = m->nodes[q].in[0];
    }
    if (copies < 2) return SYMC_OK;
    int64_t dims[IR_MAX_RANK], total = -1;
    for (int c = 0; c < n_chain; c++) {
        int n;
        int64_t p;
        if (!middle(m, m->nodes[chain[c]].in[0], dims, &n, &p) || !middle(m, m->nodes[chain[c]].out[0], dims, &n, &p) ||
            (total >= 0 && p != total))
            return SYMC_OK;
        total = p;
    }
    if (total < 2) return SYMC_OK;
    int64_t *table = NULL;
    symc_status st = source_table(m, chain, n_chain, total, &table, err);
    if (st || !table) return st;
    *rewrote = 1;
    return compose(m, i, x, table, total, err);
}

symc_status pass_compose_moves(ir_module *m, uint32_t *count, symc_error *err) {
    if (count) *count = 0;
    if (pass_switched_off("SYMC_COMPOSE_MOVES")) return SYMC_OK;
    return pass_rewrite_walk(m, "compose-moves", moves_at, count, err);
}
