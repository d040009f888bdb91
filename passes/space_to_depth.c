/* Strided slices concatenated along the channels as one transpose (pass_space_to_depth).
 *
 * torchvision's Swin merges patches as cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2],
 * x[:, 1::2, 1::2]], -1): six slice kernels with step 2 (the H slices shared by two parts) and a
 * concat, each element copied twice with a division per axis. That is a space-to-depth: with the
 * sliced axes a_1..a_r of X (steps s_i, dims proven multiples of s_i) split into [dim / s_i, s_i],
 * part p's offsets (o_1..o_r) are the digits of p in a mixed radix over some order of the axes, so
 * the concat's result is X reshaped to [.., dim_i / s_i, s_i, .., C], transposed to put the s_i
 * axes (most significant digit first) right before C, and reshaped to the concat's shape: one
 * copy, which the CUDA target runs as rows of C (a transpose that keeps its innermost axis).
 *
 * Taken when the concat joins P >= 2 private operands along the last axis, each made by a chain
 * of slices of one tensor X (at most one slice per axis, none on the last axis, each with a
 * constant start in [0, step), a step >= 2 and an end at or past the axis's size; intermediate
 * slices may be shared between parts), all parts slicing the same axes with the same steps, P the
 * product of the steps and every offset tuple appearing once. Only moves data: bit-identical
 * results. The slices and the concat are left unread for dce. SYMC_SPACE_TO_DEPTH=0 turns it off. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "passes/passes.h"

#define S2D_AXES 3   /* sliced axes at most */
#define S2D_PARTS 64 /* concat operands at most */

/* one part: its offset on each sliced axis of X (-1: not sliced) */
typedef struct s2d_part {
    int64_t off[IR_MAX_RANK];
    int64_t step[IR_MAX_RANK];
} s2d_part;

/* slice node s of a tensor of `rank` dims `dims`: each of its axes' (start, step) into p; 0 unless
 * every axis has a constant start in [0, step), a step >= 2, an end at or past the dim, and is
 * not sliced in p yet */
static int take_slice(const ir_module *m, const ir_node *s, const ir_tensor *x, s2d_part *p) {
    const ir_attr *st = ir_node_attr(s, "starts"), *en = ir_node_attr(s, "ends"), *ax = ir_node_attr(s, "axes"),
                  *sp = ir_node_attr(s, "steps");
    if (!st || !en || !sp || st->kind != IR_ATTR_DIMS || en->kind != IR_ATTR_DIMS || sp->kind != IR_ATTR_INTS ||
        st->n != en->n || sp->n != st->n || st->n < 1 || (ax && (ax->kind != IR_ATTR_INTS || ax->n != st->n)))
        return 0;
    for (uint32_t j = 0; j < st->n; j++) {
        int64_t a = ax ? ax->ints[j] : (int64_t)j, b, e, d;
        if (a < 0) a += x->rank;
        if (a < 0 || a >= x->rank - 1 || p->step[a] || st->dims[j] == SYM_NONE || en->dims[j] == SYM_NONE ||
            !sym_is_const(m->syms, (sym_expr)st->dims[j], &b) || !sym_is_const(m->syms, (sym_expr)en->dims[j], &e))
            return 0;
        int64_t step = sp->ints[j];
        if (step < 2 || b < 0 || b >= step) return 0;
        /* the end reaches the axis's end: a constant dim at most e, or torch's INT64_MAX-like end */
        if (!(sym_is_const(m->syms, x->dims[a], &d) ? e >= d : e >= INT32_MAX)) return 0;
        p->off[a] = b;
        p->step[a] = step;
    }
    return 1;
}

/* part t (a concat operand): the chain of slices back to its source *x (the same for every part
 * when *x is set already) */
static int part_of(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t t, uint32_t *x,
                   s2d_part *p) {
    memset(p, 0, sizeof *p);
    if (uses[t] != 1 || is_out[t]) return 0;
    uint32_t cur = t;
    int n = 0;
    for (; n <= S2D_AXES; n++) {
        uint32_t q = m->tensors[cur].producer;
        if (q == IR_NONE || m->nodes[q].op != IR_OP_SLICE || m->nodes[q].n_in < 1 || m->nodes[q].n_out != 1) break;
        uint32_t src = m->nodes[q].in[0];
        if (m->tensors[src].rank != m->tensors[t].rank || !take_slice(m, &m->nodes[q], &m->tensors[src], p)) return 0;
        cur = src;
    }
    if (n == 0 || n > S2D_AXES) return 0;
    if (*x == IR_NONE) *x = cur;
    return cur == *x;
}

/* the sliced axes in order of significance (most first) such that part p's offsets are the digits
 * of p: 1 and ord[0..r) filled, else 0 */
static int digit_order(const s2d_part *parts, uint32_t n_parts, const int *axes, int r, int *ord) {
    int perm[S2D_AXES];
    for (int i = 0; i < r; i++) perm[i] = i;
    /* every order of r <= 3 axes: the permutations in lexicographic order */
    for (;;) {
        int ok = 1;
        for (uint32_t p = 0; p < n_parts && ok; p++) {
            int64_t v = 0;
            for (int i = 0; i < r; i++) {
                int a = axes[perm[i]];
                v = v * parts[p].step[a] + parts[p].off[a];
            }
            ok = v == (int64_t)p;
        }
        if (ok) {
            for (int i = 0; i < r; i++) ord[i] = axes[perm[i]];
            return 1;
        }
        int i = r - 2;
        while (i >= 0 && perm[i] > perm[i + 1]) i--;
        if (i < 0) return 0;
        int j = r - 1;
        while (perm[j] < perm[i]) j--;
        int t = perm[i];
        perm[i] = perm[j], perm[j] = t;
        for (int lo = i + 1, hi = r - 1; lo < hi; lo++, hi--) t = perm[lo], perm[lo] = perm[hi], perm[hi] = t;
    }
}

/* concat node i as a space-to-depth of some X (pass_rewrite_walk's step) */
static symc_status s2d_at(ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, int *rewrote,
                          symc_error *err) {
    const ir_node *c = &m->nodes[i];
    if (c->op != IR_OP_CONCAT || c->n_in < 2 || c->n_in > S2D_PARTS || c->n_out != 1) return SYMC_OK;
    const uint32_t y = c->out[0];
    const int32_t rank = m->tensors[y].rank;
    const ir_attr *cax = ir_node_attr(c, "axis");
    int64_t ca = cax ? cax->i : 0;
    if (ca < 0) ca += rank;
    if (rank < 2 || rank + S2D_AXES > IR_MAX_RANK || ca != rank - 1) return SYMC_OK;
    s2d_part parts[S2D_PARTS];
    uint32_t x = IR_NONE;
    for (uint32_t p = 0; p < c->n_in; p++)
        if (c->in[p] == IR_NONE || !part_of(m, uses, is_out, c->in[p], &x, &parts[p])) return SYMC_OK;
    const ir_tensor *xt = &m->tensors[x];
    if (xt->rank != rank || xt->dtype != m->tensors[y].dtype) return SYMC_OK;
    /* the same axes and steps in every part, their product the number of parts, dims divisible */
    int axes[S2D_AXES], r = 0;
    int64_t prod = 1;
    for (int a = 0; a < rank; a++) {
        if (!parts[0].step[a]) continue;
        if (r == S2D_AXES) return SYMC_OK;
        axes[r++] = a;
        prod *= parts[0].step[a];
        if (sym_prove_divisible(m->syms, xt->dims[a], parts[0].step[a]) != SYM_TRUE) return SYMC_OK;
    }
    if (prod != (int64_t)c->n_in) return SYMC_OK;
    for (uint32_t p = 1; p < c->n_in; p++)
        for (int a = 0; a < rank; a++)
            if (parts[p].step[a] != parts[0].step[a]) return SYMC_OK;
    int ord[S2D_AXES];
    if (!digit_order(parts, c->n_in, axes, r, ord)) return SYMC_OK;
    /* X split: [.., dim_a / s_a, s_a, .., C]; where each axis lands in the split */
    sym_table *T = m->syms;
    sym_expr d6[IR_MAX_RANK], dt[IR_MAX_RANK], dy[IR_MAX_RANK];
    int64_t perm[IR_MAX_RANK];
    int outer_at[IR_MAX_RANK], step_at[IR_MAX_RANK], k = 0;
    for (int a = 0; a < rank; a++) {
        int64_t s = parts[0].step[a];
        outer_at[a] = k;
        d6[k++] = s ? sym_floordiv(T, xt->dims[a], sym_const(T, s)) : xt->dims[a];
        if (s) step_at[a] = k, d6[k++] = sym_const(T, s);
    }
    /* transposed: the outer dims but C in order, the step dims by significance, then C */
    int n = 0;
    for (int a = 0; a < rank - 1; a++) perm[n++] = outer_at[a];
    for (int j = 0; j < r; j++) perm[n++] = step_at[ord[j]];
    perm[n++] = outer_at[rank - 1];
    for (int j = 0; j < k; j++) dt[j] = d6[perm[j]];
    for (int a = 0; a < rank; a++) dy[a] = m->tensors[y].dims[a];
    if (sym_table_error(T)) return SYMC_OK;
    char base[400];
    snprintf(base, sizeof base, "%s", c->name ? c->name : "space_to_depth");
    *rewrote = 1;
    symc_status st = pass_retire(m, i, y, err);
    if (st) return st;
    ir_attr a1 = {.name = "shape", .kind = IR_ATTR_DIMS, .n = (uint32_t)k, .dims = d6};
    ir_attr ap = {.name = "perm", .kind = IR_ATTR_INTS, .n = (uint32_t)k, .ints = perm};
    ir_attr a2 = {.name = "shape", .kind = IR_ATTR_DIMS, .n = (uint32_t)rank, .dims = dy};
    uint32_t t1 = IR_NONE, t2 = IR_NONE, out = y, made[3];
    if ((st = pass_add_step(m, "space-to-depth", IR_OP_RESHAPE, base, ".s2d_split", &x, 1, k, d6, &a1, &t1, &made[0],
                            err)) ||
        (st = pass_add_step(m, "space-to-depth", IR_OP_TRANSPOSE, base, ".s2d", &t1, 1, k, dt, &ap, &t2, &made[1],
                            err)) ||
        (st = pass_add_step(m, "space-to-depth", IR_OP_RESHAPE, base, ".s2d_merge", &t2, 1, rank, dy, &a2, &out,
                            &made[2], err)))
        return st;
    return pass_place(m, made, 3, i, err);
}

symc_status pass_space_to_depth(ir_module *m, uint32_t *count, symc_error *err) {
    if (count) *count = 0;
    if (pass_switched_off("SYMC_SPACE_TO_DEPTH")) return SYMC_OK;
    return pass_rewrite_walk(m, "space-to-depth", s2d_at, count, err);
}
