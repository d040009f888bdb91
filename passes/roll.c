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

static symc_status roll_one(ir_module *m, uint32_t i, uint32_t x, int axis, int64_t k, int64_t n, const int neg[2],
                            symc_error *err) {
    const uint32_t y = m->nodes[i].out[0];
    const int signed_roll = neg[0] || neg[1];
    char base[400], name[512];
    snprintf(base, sizeof base, "%s", m->nodes[i].name ? m->nodes[i].name : "roll");
    symc_status st = pass_retire(m, i, y, err);
    if (st) return st;
    int64_t *idx = malloc((size_t)n * sizeof *idx);
    if (!idx) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the roll-gather pass");
    for (int64_t j = 0; j < n; j++) idx[j] = (j + k) % n;
    uint32_t pool, it, made[4], g = y;
    if ((st = ir_add_constant(m, (uint8_t *)idx, (size_t)n * sizeof *idx, &pool, err))) return st; /* owns idx */
    pass_fresh_name(m, base, ".roll_index", name, sizeof name);
    sym_expr d = sym_const(m->syms, n);
    if ((st = ir_add_tensor(m, name, SYMC_I64, 1, &d, &it, err))) return st;
    m->tensors[it].constant = pool;
    if ((st = ir_add_node(m, IR_OP_CONSTANT, name, "roll-gather", NULL, 0, &it, 1, NULL, 0, &made[0], err))) return st;
    if (signed_roll) { /* the gather into a fresh tensor of y's type and shape; y = it times the sign */
        const ir_tensor *yt = &m->tensors[y];
        sym_expr dims[IR_MAX_RANK];
        for (int32_t r = 0; r < yt->rank; r++) dims[r] = yt->dims[r];
        const symc_dtype dt = yt->dtype;
        const int32_t rank = yt->rank;
        pass_fresh_name(m, base, ".rolled", name, sizeof name);
        if ((st = ir_add_tensor(m, name, dt, rank, dims, &g, err))) return st;
    }
    uint32_t in[2] = {x, it};
    ir_attr ax = {.name = "axis", .kind = IR_ATTR_INT, .i = axis};
    pass_fresh_name(m, base, ".roll", name, sizeof name);
    if ((st = ir_add_node(m, IR_OP_GATHER, name, "roll-gather", in, 2, &g, 1, &ax, 1, &made[1], err))) return st;
    if (!signed_roll) return pass_place(m, made, 2, i, err);
    /* the sign: -1 where a negated part lands (the first n - k positions are x[k:n], operand 0) */
    const symc_dtype dt = m->tensors[y].dtype;
    const size_t es = symc_dtype_size(dt);
    uint8_t *sign = malloc((size_t)n * es);
    if (!sign) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the roll-gather pass");
    for (int64_t j = 0; j < n; j++) symc_dtype_store(sign, dt, (size_t)j, neg[j < n - k ? 0 : 1] ? -1.0 : 1.0);
    uint32_t sp, stn;
    if ((st = ir_add_constant(m, sign, (size_t)n * es, &sp, err))) return st; /* owns sign */
    pass_fresh_name(m, base, ".roll_sign", name, sizeof name);
    if ((st = ir_add_tensor(m, name, dt, 1, &d, &stn, err))) return st;
    m->tensors[stn].constant = sp;
    if ((st = ir_add_node(m, IR_OP_CONSTANT, name, "roll-gather", NULL, 0, &stn, 1, NULL, 0, &made[2], err))) return st;
    uint32_t min[2] = {g, stn};
    pass_fresh_name(m, base, ".roll_signed", name, sizeof name);
    if ((st = ir_add_node(m, IR_OP_MUL, name, "roll-gather", min, 2, &y, 1, NULL, 0, &made[3], err))) return st;
    return pass_place(m, made, 4, i, err);
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
