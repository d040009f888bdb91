/* A cyclic shift as one gather (pass_roll_as_gather).
 *
 * torch.roll exports as two slices of one tensor along one axis and their concatenation in swapped
 * order: y = concat(x[k:n], x[0:k]) along axis a, i.e. y[i] = x[(i + k) mod n]. torchvision's Swin
 * rolls every shifted block's input and output along H and W (four rolls a block): each a slice
 * kernel per part and a concat, two full copies with a 64-bit division per axis an element (1.4 ms
 * of Swin-T's 4.75 at batch 32 on an H200). When n is a constant, 0 < k < n, both slices have steps
 * 1, are read only by the concat, and the concat has exactly those two operands, the concat's
 * result is made by gather(x, idx, axis a) with idx the constant i64 [n] (i + k) mod n: one copy,
 * which the CUDA target runs in 16-byte chunks where the rows after the axis allow it. Only moves
 * data: bit-identical results. The slices and the concat are left unread for dce.
 *
 * Rotary embeddings' rotate_half (transformers' Llama: cat((-x[..., h:], x[..., :h]), -1)) is
 * the same roll with one part negated by a private neg (its two parts two slices, or the two
 * outputs of one split): along the last axis of a float x, the
 * concat becomes mul(gather(x, idx), sign) with sign the constant [n] of -1 over the negated
 * part's positions and 1 elsewhere, which the CUDA target fuses into the rotary multiply-adds
 * that read it. Four kernels (two slices, the neg, the concat) become one gather; the sign's
 * multiply is exact, so the results are bit-identical too.
 * SYMC_ROLL_GATHER=0 turns it off (for comparison). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "passes/passes.h"

/* the one (start, end) of slice node s along its one axis, normalized against n (negative counts
 * from the end, ends clamped to n); 0 unless it has one axis, step 1 and constant bounds */
static int slice_range(const ir_module *m, const ir_node *s, int32_t rank, int64_t n, int *axis, int64_t *b,
                       int64_t *e) {
    const ir_attr *st = ir_node_attr(s, "starts"), *en = ir_node_attr(s, "ends"), *ax = ir_node_attr(s, "axes"),
                  *sp = ir_node_attr(s, "steps");
    if (!st || !en || st->kind != IR_ATTR_DIMS || en->kind != IR_ATTR_DIMS || st->n != 1 || en->n != 1) return 0;
    if (sp && (sp->kind != IR_ATTR_INTS || sp->n != 1 || sp->ints[0] != 1)) return 0;
    int64_t a = 0;
    if (ax) {
        if (ax->kind != IR_ATTR_INTS || ax->n != 1) return 0;
        a = ax->ints[0] < 0 ? ax->ints[0] + rank : ax->ints[0];
    }
    if (a < 0 || a >= rank || st->dims[0] == SYM_NONE || en->dims[0] == SYM_NONE ||
        !sym_is_const(m->syms, (sym_expr)st->dims[0], b) || !sym_is_const(m->syms, (sym_expr)en->dims[0], e))
        return 0;
    if (*b < 0) *b += n;
    if (*e < 0) *e += n;
    if (*e > n) *e = n;
    *axis = (int)a;
    return *b >= 0 && *b <= n && *e >= *b;
}

/* t's producer when t is private (one reader, not an output) and made by op (one output), else IR_NONE */
static uint32_t private_of(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t t, ir_op op) {
    uint32_t p = t == IR_NONE || uses[t] != 1 || is_out[t] ? IR_NONE : m->tensors[t].producer;
    return p != IR_NONE && m->nodes[p].op == op && m->nodes[p].n_in >= 1 && m->nodes[p].n_out == 1 ? p : IR_NONE;
}

/* concat node i as a roll of x by k along axis: 1 and the fields filled; neg[j]: operand j is the
 * slice behind a private neg (rotate_half), only along the last axis of a float x */
static int as_roll(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, uint32_t *x, int *axis,
                   int64_t *k, int64_t *n, int neg[2]) {
    const ir_node *c = &m->nodes[i];
    if (c->op != IR_OP_CONCAT || c->n_in != 2 || c->n_out != 1) return 0;
    uint32_t p[2], part[2];
    int split = 0;
    for (int j = 0; j < 2; j++) {
        uint32_t t = c->in[j], q = private_of(m, uses, is_out, t, IR_OP_NEG);
        neg[j] = q != IR_NONE;
        if (neg[j]) t = m->nodes[q].in[0];
        part[j] = t;
        if ((p[j] = private_of(m, uses, is_out, t, IR_OP_SLICE)) != IR_NONE) continue;
        /* or the two outputs of one split into two parts (the rotary model's Split), each private */
        uint32_t sp = t == IR_NONE || uses[t] != 1 || is_out[t] ? IR_NONE : m->tensors[t].producer;
        if (sp == IR_NONE || m->nodes[sp].op != IR_OP_SPLIT || m->nodes[sp].n_out != 2 || m->nodes[sp].n_in < 1)
            return 0;
        p[j] = sp;
        split = 1;
    }
    *x = m->nodes[p[0]].in[0];
    if (m->nodes[p[1]].in[0] != *x || (split && (p[0] != p[1] || m->nodes[p[0]].op != IR_OP_SPLIT))) return 0;
    const ir_tensor *xt = &m->tensors[*x];
    int64_t ca = 0;
    const ir_attr *cax = ir_node_attr(c, "axis");
    if (cax) ca = cax->i < 0 ? cax->i + xt->rank : cax->i;
    int a0, a1;
    int64_t b0, e0, b1, e1;
    if (ca < 0 || ca >= xt->rank || !sym_is_const(m->syms, xt->dims[ca], n) || *n < 2) return 0;
    if (split) { /* concat(split.out[1], split.out[0]): the parts [k, n) and [0, k) along the split's axis */
        const ir_node *sn = &m->nodes[p[0]];
        const ir_attr *sax = ir_node_attr(sn, "axis");
        int64_t sa = sax ? (sax->i < 0 ? sax->i + xt->rank : sax->i) : 0;
        if (part[0] != sn->out[1] || part[1] != sn->out[0] || sa != ca ||
            !sym_is_const(m->syms, m->tensors[sn->out[0]].dims[ca], &b0))
            return 0;
        a0 = a1 = (int)ca, e0 = *n, b1 = 0, e1 = b0;
    } else if (!slice_range(m, &m->nodes[p[0]], xt->rank, *n, &a0, &b0, &e0) ||
               !slice_range(m, &m->nodes[p[1]], xt->rank, *n, &a1, &b1, &e1))
        return 0;
    /* x[k:n] then x[0:k] along the concat's axis */
    if (a0 != ca || a1 != ca || e0 != *n || b1 != 0 || e1 != b0 || b0 <= 0 || b0 >= *n) return 0;
    const symc_dtype dt = xt->dtype;
    if ((neg[0] || neg[1]) &&
        (ca != xt->rank - 1 || (dt != SYMC_F32 && dt != SYMC_F16 && dt != SYMC_BF16 && dt != SYMC_F64)))
        return 0;
    *axis = (int)ca;
    *k = b0;
    return 1;
}

/* a constant [n] of dtype dt holding data (malloc'd: owned from here on), named base + suffix:
 * its tensor *t, its node *node */
static symc_status add_const(ir_module *m, const char *base, const char *suffix, symc_dtype dt, int64_t n,
                             uint8_t *data, uint32_t *t, uint32_t *node, symc_error *err) {
    const sym_expr d = sym_const(m->syms, n);
    return pass_add_constant(m, "roll-gather", base, suffix, dt, 1, &d, data, (size_t)n * symc_dtype_size(dt), t, node,
                             err);
}

static int64_t gcd(int64_t a, int64_t b) {
    while (b) {
        const int64_t t = a % b;
        a = b, b = t;
    }
    return a;
}

/* The roll by k along `axis` of x (n long) into concat i's result y. Along the last axis, with
 * g = gcd(n, k) > 1, x is viewed as [.., n / g, g] and its rows of g elements are gathered whole
 * along the second-last axis (the CUDA target copies them in 16-byte chunks where a row allows it;
 * one element a thread otherwise: rotate_half's halves are rows of D / 2), then viewed back. A
 * signed roll (a negated part) multiplies by the constant sign after it. */
static symc_status roll_one(ir_module *m, uint32_t i, uint32_t x, int axis, int64_t k, int64_t n, const int neg[2],
                            symc_error *err) {
    const uint32_t y = m->nodes[i].out[0];
    const int signed_roll = neg[0] || neg[1];
    const int32_t r = m->tensors[x].rank;
    const int64_t g = gcd(n, k);
    const int rows = axis == r - 1 && g > 1 && r < IR_MAX_RANK;
    const int64_t nr = rows ? n / g : n, kr = rows ? k / g : k;
    char base[400];
    snprintf(base, sizeof base, "%s", m->nodes[i].name ? m->nodes[i].name : "roll");
    symc_status st = pass_retire(m, i, y, err);
    if (st) return st;
    sym_expr dy[IR_MAX_RANK], dv[IR_MAX_RANK];
    for (int32_t d = 0; d < r; d++) dy[d] = dv[d] = m->tensors[y].dims[d];
    if (rows) dv[r - 1] = sym_const(m->syms, nr), dv[r] = sym_const(m->syms, g);
    int64_t *idx = malloc((size_t)nr * sizeof *idx);
    if (!idx) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the roll-gather pass");
    for (int64_t j = 0; j < nr; j++) idx[j] = (j + kr) % nr;
    uint32_t it, made[6], nm = 0, src = x;
    if ((st = add_const(m, base, ".roll_index", SYMC_I64, nr, (uint8_t *)idx, &it, &made[nm++], err))) return st;
    const ir_attr sv = {.name = "shape", .kind = IR_ATTR_DIMS, .n = (uint32_t)(r + 1), .dims = dv},
                  sy = {.name = "shape", .kind = IR_ATTR_DIMS, .n = (uint32_t)r, .dims = dy},
                  ax = {.name = "axis", .kind = IR_ATTR_INT, .i = rows ? r - 1 : axis};
    if (rows) {
        src = IR_NONE;
        if ((st = pass_add_step(m, "roll-gather", IR_OP_RESHAPE, base, ".roll_rows", &x, 1, r + 1, dv, &sv, &src,
                                &made[nm++], err)))
            return st;
    }
    uint32_t in[2] = {src, it}, gt = rows || signed_roll ? IR_NONE : y;
    if ((st = pass_add_step(m, "roll-gather", IR_OP_GATHER, base, ".roll", in, 2, rows ? r + 1 : r, dv, &ax, &gt,
                            &made[nm++], err)))
        return st;
    if (rows) {
        uint32_t back = signed_roll ? IR_NONE : y;
        if ((st = pass_add_step(m, "roll-gather", IR_OP_RESHAPE, base, ".roll_merge", &gt, 1, r, dy, &sy, &back,
                                &made[nm++], err)))
            return st;
        gt = back;
    }
    if (signed_roll) { /* the sign: -1 where a negated part lands (the first n - k positions are x[k:n], operand 0) */
        const symc_dtype dt = m->tensors[y].dtype;
        uint8_t *sign = malloc((size_t)n * symc_dtype_size(dt));
        if (!sign) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the roll-gather pass");
        for (int64_t j = 0; j < n; j++) symc_dtype_store(sign, dt, (size_t)j, neg[j < n - k ? 0 : 1] ? -1.0 : 1.0);
        uint32_t stn, out = y;
        if ((st = add_const(m, base, ".roll_sign", dt, n, sign, &stn, &made[nm++], err))) return st;
        const uint32_t min[2] = {gt, stn};
        if ((st = pass_add_step(m, "roll-gather", IR_OP_MUL, base, ".roll_signed", min, 2, r, dy, NULL, &out,
                                &made[nm++], err)))
            return st;
    }
    return pass_place(m, made, nm, i, err);
}

/* a roll ending at concat i rewritten (pass_rewrite_walk's step) */
static symc_status roll_at(ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, int *rewrote,
                           symc_error *err) {
    uint32_t x;
    int axis, neg[2];
    int64_t k, n;
    if (!as_roll(m, uses, is_out, i, &x, &axis, &k, &n, neg)) return SYMC_OK;
    *rewrote = 1;
    return roll_one(m, i, x, axis, k, n, neg, err);
}

symc_status pass_roll_as_gather(ir_module *m, uint32_t *rolled, symc_error *err) {
    if (rolled) *rolled = 0;
    if (pass_switched_off("SYMC_ROLL_GATHER")) return SYMC_OK;
    return pass_rewrite_walk(m, "roll-gather", roll_at, rolled, err);
}
