/* Fused attention: softmax(f(Q·Kᵀ))·V as one flash-attention kernel, emitted
 * from the match the fuse pass stored in the plan (ir_attention, ir/ir.h; the
 * match and what it accepts: passes/fuse_attention.c). Nothing is matched
 * here: the views of Q, K, V and O (strided storage behind transposes and
 * widening casts), the score function's ops and masks, and the covered nodes
 * come from the plan.
 *
 * This file is the driver and what the kernels share: the kernel's shared
 * memory, the row-block loop over (batch, head, query block), the views' and
 * masks' bases, the score function's code (each op, masks read per score or
 * hoisted per key tile / per row for the half kernel, the conditions of
 * where-made masks), and the comment naming the fused nodes. The body is one
 * of three kernel families, each in its own file, all flash attention with
 * fp32 softmax state and accumulation:
 *   - half tensor cores (cuda_emit_attention_h16.c) when Q, K and V are
 *     stored in one half type with head dims multiples of 16: mma.sync
 *     m16n8k16 in f16 or bf16, 128 query rows a block, cp.async double
 *     buffering, P rounded to the half type (as every flash attention does);
 *     on an sm_90 target with head dims 64 or 128, its wgmma variant
 *     (cuda_emit_attention_wg.c: two warpgroups, swizzled tiles);
 *   - TF32 tensor cores (cuda_emit_attention_tf32.c) from sm_80 when the
 *     head dims are multiples of 8: 3xTF32 for fp32 engines (about fp32
 *     accuracy);
 *   - SIMT fp32 (cuda_emit_attention_f32.c) otherwise: 256 threads a block,
 *     64 query rows, 4x4 score blocks a thread.
 * Rows that are fully masked by -inf give NaN, like the unfused softmax, or
 * zeros when the softmax says zero_masked_rows (torch's attention; such a
 * row's sum L is 0); a causal mask whose masked value is -inf (or below
 * -1e8, which exp turns into 0 as well) also skips the key tiles past the
 * block's last query row. */
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit_attention.h"

/* a view the same for every query row (query stride 0) */
static int row_shared_view(cg_cuda *c, const ir_att_view *v) {
    int64_t z;
    return sym_is_const(c->m->syms, v->strides[2], &z) && z == 0;
}

/* the mask is the same for every key of a query row (key stride 0) */
static int key_shared_view(cg_cuda *c, const ir_att_view *v) {
    int64_t z;
    return sym_is_const(c->m->syms, v->strides[3], &z) && z == 0;
}

void cg_att_dim(cg_kw *k, sym_expr e, char *buf, size_t cap) { snprintf(buf, cap, "%s", cg_kw_dim(k, e)); }

/* base offset of view v for batch indices b0, b1, named <name> */
static void view_base(cg_kw *k, const ir_att_view *v, const char *ptr, const char *name, int out) {
    char s0[48], s1[48];
    cg_att_dim(k, v->strides[0], s0, sizeof s0);
    cg_att_dim(k, v->strides[1], s1, sizeof s1);
    char h[48] = "b1"; /* the head; grouped-query K and V: its kv head */
    if (v->group > 1) snprintf(h, sizeof h, "(b1 / %lld)", (long long)v->group);
    cg_kw_body(k, "        %s%s *%s = %s + %lldLL + b0 * %s + %s * %s;\n", out ? "" : "const ",
               cg_stype(k->c->m->tensors[v->t].dtype), name, ptr, (long long)v->off, s0, h, s1);
}

/* `(float)<element off of ptr>`: the typed load of the kernel's storage dtype */
void cg_att_load(char *buf, size_t cap, symc_dtype dt, const char *ptr, const char *off) {
    char ld[200];
    cg_load(ld, sizeof ld, dt, ptr, off);
    if (snprintf(buf, cap, "(float)%s", ld) >= (int)cap && cap) buf[cap - 1] = 0;
}

static void scalar_text(cg_kw *k, uint32_t t, char *buf, size_t cap) {
    double v;
    if (pass_attention_literal(k->c->m, t, &v)) cg_float_literal(buf, cap, v, SYMC_F32);
    else cg_att_load(buf, cap, k->c->m->tensors[t].dtype, cg_kw_in(k, t), "0");
}

static void emit_chain_op(cg_kw *k, const ir_attention *a, uint32_t i);

/* a literal scalar that keeps scores bounded: finite with |x| <= 1e6 (mask values: see below) */
static int tail_normal(const ir_module *m, uint32_t t, double *v) {
    return t != IR_NONE && pass_attention_literal(m, t, v) && *v >= -1e6 && *v <= 1e6;
}
/* a literal mask value: <= -1e30 (float32's lowest, -inf) */
static int tail_masked(const ir_module *m, uint32_t t) {
    double v;
    return t != IR_NONE && pass_attention_literal(m, t, &v) && v <= -1e30;
}

/* f16 Q and K with head dims up to 256: |Q·Kᵀ| <= 256 * 65504^2 < 1.1e12 (the bound the causal tail
 * and the folded scale rest on) */
static int bounded_products(const ir_attention *a) { return a->qdt == SYMC_F16 && a->kdt == SYMC_F16 && a->d <= 256; }

/* The causal tail (see cuda_emit_attention.h). Every score before the last op is bounded: f16
 * Q and K give |Q·Kᵀ| <= 256 * 65504^2 < 1.1e12, then scales and additions of literals of at
 * most 1e6 and masks of at most -1e30 (which only lower a score), so an unmasked score stays
 * within B < 1e19 of 0. A key after the row then scores at most B - 1e30; where the row's running
 * max is above -1e29 (it has an unmasked score) that is 9e29 below it and its probability is
 * exactly 0, as the reference's; a row whose max is below -1e29 has no unmasked score yet and
 * takes every tile. */
int cg_att_causal_tail(cg_cuda *c, const ir_attention *a) {
    const ir_module *m = c->m;
    if (a->causal_skip || a->n_ops == 0 || !bounded_products(a)) return 0;
    const ir_att_op *last = &a->ops[a->n_ops - 1];
    double v;
    int le = 0;
    if (last->kind != IR_ATT_ADD_SEL || !tail_normal(m, last->scalar, &v) || !tail_masked(m, last->scalar2)) return 0;
    for (uint32_t j = 0; j < last->n_leaf; j++) le |= last->leaf[j].kind == IR_ATT_LEAF_K_LE_Q;
    if (!le) return 0;
    for (uint32_t i = 0; i + 1 < a->n_ops; i++) {
        const ir_att_op *op = &a->ops[i];
        switch (op->kind) {
        case IR_ATT_MUL:
        case IR_ATT_ADD:
            if (!tail_normal(m, op->scalar, &v)) return 0;
            break;
        case IR_ATT_DIV:
            if (!tail_normal(m, op->scalar, &v) || (v > -1e-6 && v < 1e-6)) return 0;
            break;
        case IR_ATT_ADD_SEL:
            if (!(tail_normal(m, op->scalar, &v) || tail_masked(m, op->scalar)) ||
                !(tail_normal(m, op->scalar2, &v) || tail_masked(m, op->scalar2)))
                return 0;
            break;
        default: return 0;
        }
    }
    return 1;
}

/* The score function is one positive scale of Q·Kᵀ on f16 Q and K: *c is the multiplier (1 / x for
 * a division). Scores then stay within 256 * 65504^2 * 1e6 of 0, so the half kernel takes the row
 * max of the raw products and folds the scale into the exponent's multiply-add. */
int cg_att_pure_scale(cg_cuda *c, const ir_attention *a, double *mul) {
    double v;
    if (a->n_ops != 1 || !bounded_products(a)) return 0;
    const ir_att_op *op = &a->ops[0];
    if (op->kind == IR_ATT_MUL && tail_normal(c->m, op->scalar, &v) && v > 1e-6) *mul = v;
    else if (op->kind == IR_ATT_DIV && tail_normal(c->m, op->scalar, &v) && v > 1e-6) *mul = 1.0 / v;
    else return 0;
    return 1;
}

/* `rows` m-tiles' rows of this thread have an unmasked score: the condition, as text */
void cg_att_rows_seen(char *buf, size_t cap, int mt) {
    size_t n = (size_t)snprintf(buf, cap, "(true");
    for (int i = 0; i < mt && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, " && m[%d][0] > -1e29f && m[%d][1] > -1e29f", i, i);
    if (n < cap) snprintf(buf + n, cap - n, ")");
}

/* 1 when op's mask is the same for every query row (its query stride is 0:
 * a padding mask [B, 1, 1, S]) */
int cg_att_mask_row_shared(cg_cuda *c, const ir_att_op *op) {
    int64_t z;
    return (op->kind == IR_ATT_ADD_MASK || op->kind == IR_ATT_WHERE) &&
        sym_is_const(c->m->syms, op->mask.strides[2], &z) && z == 0;
}

/* 1 when op's mask is the same for every key of a query row (its key
 * stride is 0) and not also row-shared */
static int mask_key_shared(cg_cuda *c, const ir_att_op *op) {
    return (op->kind == IR_ATT_ADD_MASK || op->kind == IR_ATT_WHERE) && !cg_att_mask_row_shared(c, op) &&
        key_shared_view(c, &op->mask);
}

/* an IR_ATT_ADD_SEL leaf read once per key tile (row-shared view) or once per
 * row (key-shared view) by the half kernel */
int cg_att_leaf_row_shared(cg_cuda *c, const ir_att_leaf *l) {
    return l->kind == IR_ATT_LEAF_VIEW && row_shared_view(c, &l->v);
}
static int leaf_key_shared(cg_cuda *c, const ir_att_leaf *l) {
    return l->kind == IR_ATT_LEAF_VIEW && !row_shared_view(c, &l->v) && key_shared_view(c, &l->v);
}

/* op i's (an IR_ATT_ADD_SEL) condition for query qi / key kj: the and of its
 * leaves; hoisted: row-shared leaves read from mkb<i>_<j>[n][u], key-shared
 * ones from mrb<i>_<j> (the half kernel); else every view leaf read here */
static void sel_cond(cg_kw *k, const ir_att_op *op, uint32_t i, int hoisted, char *buf, size_t cap) {
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "(true");
    for (uint32_t j = 0; j < op->n_leaf && n < cap; j++) {
        const ir_att_leaf *l = &op->leaf[j];
        if (l->kind == IR_ATT_LEAF_K_GT_Q) n += (size_t)snprintf(buf + n, cap - n, " && kj > qi");
        else if (l->kind == IR_ATT_LEAF_K_LE_Q) n += (size_t)snprintf(buf + n, cap - n, " && kj <= qi");
        else if (hoisted && cg_att_leaf_row_shared(k->c, l))
            n += (size_t)snprintf(buf + n, cap - n, " && mkb%u_%u[n][u]", i, j);
        else if (hoisted && leaf_key_shared(k->c, l)) n += (size_t)snprintf(buf + n, cap - n, " && mrb%u_%u", i, j);
        else {
            char msq[48], msk[48];
            cg_att_dim(k, l->v.strides[2], msq, sizeof msq);
            cg_att_dim(k, l->v.strides[3], msk, sizeof msk);
            n += (size_t)snprintf(buf + n, cap - n, " && mk%u_%u[qi * %s + kj * %s] != 0", i, j, msq, msk);
        }
    }
    if (n < cap) snprintf(buf + n, cap - n, ")");
}

/* the key-shared masks' values of row qi, once per row and key tile: mr<i> */
void cg_att_emit_row_masks(cg_kw *k, const ir_attention *a) {
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const ir_att_op *op = &a->ops[i];
        if (!mask_key_shared(k->c, op)) continue;
        char msq[48], mp[16], off[96], ld[700];
        cg_att_dim(k, op->mask.strides[2], msq, sizeof msq);
        snprintf(mp, sizeof mp, "mk%u", i);
        snprintf(off, sizeof off, "qi * %s", msq);
        if (op->kind == IR_ATT_ADD_MASK) cg_att_load(ld, sizeof ld, k->c->m->tensors[op->mask.t].dtype, mp, off);
        else snprintf(ld, sizeof ld, "(%s[%s] != 0)", mp, off);
        cg_kw_body(k, "                const %s mr%u = qi < Sq ? %s : %s;\n",
                   op->kind == IR_ATT_WHERE ? "bool" : "float", i, ld, op->kind == IR_ATT_WHERE ? "false" : "0.f");
    }
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const ir_att_op *op = &a->ops[i];
        for (uint32_t j = 0; op->kind == IR_ATT_ADD_SEL && j < op->n_leaf; j++) {
            if (!leaf_key_shared(k->c, &op->leaf[j])) continue;
            char msq[48];
            cg_att_dim(k, op->leaf[j].v.strides[2], msq, sizeof msq);
            cg_kw_body(k, "                const bool mrb%u_%u = qi < Sq && mk%u_%u[qi * %s] != 0;\n", i, j, i, j, msq);
        }
    }
}

/* the chain, applied to `v` for query qi / key kj (in range when `ok`);
 * hoisted: a row-shared mask was read once per key tile into mkv<i>[n][u]
 * (the half kernel's score layout), a key-shared one once per row into
 * mr<i> */
void cg_att_emit_chain_h(cg_kw *k, const ir_attention *a, int hoisted) {
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const ir_att_op *op = &a->ops[i];
        if (hoisted && cg_att_mask_row_shared(k->c, op)) {
            if (op->kind == IR_ATT_ADD_MASK) cg_kw_body(k, "                        v = v + mkv%u[n][u];\n", i);
            else if (op->chain_is_true) {
                char sv[240];
                scalar_text(k, op->scalar, sv, sizeof sv);
                cg_kw_body(k, "                        v = mkv%u[n][u] ? v : %s;\n", i, sv);
            } else {
                char sv[240];
                scalar_text(k, op->scalar, sv, sizeof sv);
                cg_kw_body(k, "                        v = mkv%u[n][u] ? %s : v;\n", i, sv);
            }
            continue;
        }
        if (hoisted && mask_key_shared(k->c, op)) {
            if (op->kind == IR_ATT_ADD_MASK) {
                cg_kw_body(k, "                        v = v + mr%u;\n", i);
            } else {
                char sv[240];
                scalar_text(k, op->scalar, sv, sizeof sv);
                if (op->chain_is_true) cg_kw_body(k, "                        v = mr%u ? v : %s;\n", i, sv);
                else cg_kw_body(k, "                        v = mr%u ? %s : v;\n", i, sv);
            }
            continue;
        }
        if (hoisted && op->kind == IR_ATT_ADD_SEL) {
            char cond[1024], s1[240], s2[240];
            sel_cond(k, op, i, 1, cond, sizeof cond);
            scalar_text(k, op->scalar, s1, sizeof s1);
            scalar_text(k, op->scalar2, s2, sizeof s2);
            cg_kw_body(k, "                        v = v + (%s ? %s : %s);\n", cond, s1, s2);
            continue;
        }
        emit_chain_op(k, a, i);
    }
}

/* chain op i, applied to `v` for query qi / key kj (in range when `ok`) */
static void emit_chain_op(cg_kw *k, const ir_attention *a, uint32_t i) {
    {
        const ir_att_op *op = &a->ops[i];
        char sv[240] = "", msq[48], msk[48], cond[160];
        if (op->scalar != IR_NONE) scalar_text(k, op->scalar, sv, sizeof sv);
        if (op->kind == IR_ATT_ADD_MASK || op->kind == IR_ATT_WHERE) {
            cg_att_dim(k, op->mask.strides[2], msq, sizeof msq);
            cg_att_dim(k, op->mask.strides[3], msk, sizeof msk);
        }
        switch (op->kind) {
        case IR_ATT_MUL: cg_kw_body(k, "                    v = v * %s;\n", sv); break;
        case IR_ATT_DIV: cg_kw_body(k, "                    v = v / %s;\n", sv); break;
        case IR_ATT_ADD: cg_kw_body(k, "                    v = v + %s;\n", sv); break;
        case IR_ATT_ADD_MASK: {
            char mp[16], off[128], ld[240];
            snprintf(mp, sizeof mp, "mk%u", i);
            snprintf(off, sizeof off, "qi * %s + kj * %s", msq, msk);
            cg_att_load(ld, sizeof ld, k->c->m->tensors[op->mask.t].dtype, mp, off);
            cg_kw_body(k, "                    v = v + (ok ? %s : 0.f);\n", ld);
            break;
        }
        case IR_ATT_ADD_SEL: {
            char s2[240], sc[1024];
            scalar_text(k, op->scalar2, s2, sizeof s2);
            sel_cond(k, op, i, 0, sc, sizeof sc);
            cg_kw_body(k, "                    v = v + (ok ? (%s ? %s : %s) : 0.f);\n", sc, sv, s2);
            break;
        }
        case IR_ATT_WHERE:
        case IR_ATT_WHERE_CAUSAL:
            if (op->kind == IR_ATT_WHERE)
                snprintf(cond, sizeof cond, "(ok && mk%u[qi * %s + kj * %s] != 0)", i, msq, msk);
            else snprintf(cond, sizeof cond, "(kj > qi)");
            if (op->chain_is_true) cg_kw_body(k, "                    v = %s ? v : %s;\n", cond, sv);
            else cg_kw_body(k, "                    v = %s ? %s : v;\n", cond, sv);
            break;
        }
    }
}

/* the row-block loop's head: SC_ROWS over the work items, the block's query tile qt and batch
 * indices b0, b1, the views' bases qp, kp, vp and (all) op and the masks' mk<i>, mk<i>_<j> */
static void emit_rows_head(cg_kw *k, const ir_attention *a, const char *wk, const char *n1, int all) {
    if (a->causal_skip && k->resident) {
        /* a capped grid under a causal skip: the row blocks ordered by their work, the most keys
         * first over every batch and head, dealt to the blocks in a snake (round r: block i takes
         * r * grid + i, or + grid - 1 - i in odd rounds), so every block's sum of work is about
         * the same. A round's items are consecutive, so an item past the work ends the loop. */
        cg_kw_body(k,
                   "    for (long long rr = 0, blk; (blk = rr * gridDim.x + ((rr & 1) ? gridDim.x - 1 - blockIdx.x : "
                   "blockIdx.x)) < %s; rr++) {\n",
                   wk);
        cg_kw_body(
            k,
            "        const long long nb = (%s) / nq, qt = nq - 1 - blk / nb, bb = blk %% nb, b1 = bb %% %s, b0 = "
            "bb / %s;\n",
            wk, n1, n1);
    } else {
        cg_kw_body(k, "    SC_ROWS(blk, %s) {\n", wk);
        /* causal: the row blocks with the most keys first (they finish last otherwise) */
        cg_kw_body(k, "        const long long qt = %sblk %% nq, bb = blk / nq, b1 = bb %% %s, b0 = bb / %s;\n",
                   a->causal_skip ? "nq - 1 - " : "", n1, n1);
    }
    {
        const char *qp = cg_kw_in(k, a->q.t), *kp = cg_kw_in(k, a->k.t), *vp = cg_kw_in(k, a->v.t),
                   *op = all ? cg_kw_out(k, a->o.t) : "";
        char qpn[32], kpn[32], vpn[32], opn[32];
        snprintf(qpn, sizeof qpn, "%s", qp);
        snprintf(kpn, sizeof kpn, "%s", kp);
        snprintf(vpn, sizeof vpn, "%s", vp);
        snprintf(opn, sizeof opn, "%s", op);
        view_base(k, &a->q, qpn, "qp", 0);
        view_base(k, &a->k, kpn, "kp", 0);
        view_base(k, &a->v, vpn, "vp", 0);
        if (all) view_base(k, &a->o, opn, "op", 1);
    }
    for (uint32_t i = 0; all && i < a->n_ops; i++) {
        const ir_att_op *o = &a->ops[i];
        for (uint32_t j = 0; o->kind == IR_ATT_ADD_SEL && j < o->n_leaf; j++) {
            const ir_att_view *lv = &o->leaf[j].v;
            if (o->leaf[j].kind != IR_ATT_LEAF_VIEW) continue;
            char ptr[32], s0[48], s1[48];
            snprintf(ptr, sizeof ptr, "%s", cg_kw_in(k, lv->t));
            cg_att_dim(k, lv->strides[0], s0, sizeof s0);
            cg_att_dim(k, lv->strides[1], s1, sizeof s1);
            cg_kw_body(k, "        const %s *mk%u_%u = %s + b0 * %s + b1 * %s;\n",
                       cg_stype(k->c->m->tensors[lv->t].dtype), i, j, ptr, s0, s1);
        }
        if (o->kind != IR_ATT_ADD_MASK && o->kind != IR_ATT_WHERE) continue;
        char name[16], ptr[32];
        snprintf(name, sizeof name, "mk%u", i);
        snprintf(ptr, sizeof ptr, "%s", cg_kw_in(k, o->mask.t));
        char s0[48], s1[48], w[48] = "";
        cg_att_dim(k, o->mask.strides[0], s0, sizeof s0);
        cg_att_dim(k, o->mask.strides[1], s1, sizeof s1);
        if (o->windowed) cg_att_dim(k, o->windows, w, sizeof w); /* Swin's mask: window b0 mod W */
        cg_kw_body(k, "        const %s *%s = %s + %s%s%s * %s + b1 * %s;\n",
                   cg_stype(k->c->m->tensors[o->mask.t].dtype), name, ptr, o->windowed ? "(b0 % " : "b0", w,
                   o->windowed ? ")" : "", s0, s1);
    }
}

/* the chain, applied to `v` for query qi / key kj (in range when `ok`) */
void cg_att_emit_chain(cg_kw *k, const ir_attention *a) {
    for (uint32_t i = 0; i < a->n_ops; i++) emit_chain_op(k, a, i);
}

symc_status cg_emit_attention(cg_cuda *c, uint32_t node) {
    const ir_attention *ap = ir_fuse_attention_of(c->m, node);
    if (!ap) return cg_fail(c, node, SYMC_ERR_INTERNAL, "the plan has no fused attention at this attention root");
    const ir_attention a = *ap;
    const int64_t D = a.d, DV = a.dv;
    /* half tensor cores for half Q, K, V; TF32 tensor cores from sm_80 when the head dims are
     * multiples of 8; else the SIMT kernel */
    const int h16 = cg_att_h16_ok(c, &a), wg = h16 && cg_att_wg_ok(c, &a);
    const int tc = c->b->sm >= 80 && D % 8 == 0 && DV % 8 == 0;
    const int64_t QLD = tc ? cg_att_pitch(D, 4) : D + 4, VLD = tc ? cg_att_pitch(DV, 8) : DV + 4,
                  PLD = tc ? cg_att_pitch(64, 4) : 68;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const int64_t HP = cg_att_h16_pitch(D, wg), HVP = cg_att_h16_pitch(DV, wg); /* the half kernel's pitches */
    /* the half kernel's K and V buffers: two, or the wgmma kernel's ring of stages */
    const int nst = wg ? CG_ATT_WG_STAGES : 2, kt = cg_att_h16_kt(wg), nqb = cg_att_wg_qbufs(&a, wg);
    const int hrows = h16 ? cg_att_h16_rows(c, &a, wg) : 0, hmt = h16 ? cg_att_h16_mt(c, &a, wg) : 0;
    if (h16) /* Q's rows (nqb buffers), the K and V tiles of kt keys; wg: + 1024 bytes to align the swizzled atoms,
              * the mbarriers */
        k.shared = (uint32_t)((nqb * hrows * HP + nst * kt * HP + nst * kt * HVP) * 2 +
                              (wg ? 1024 + CG_ATT_WG_BARS : 0));
    else k.shared = (uint32_t)((2 * ATT_TILE * QLD + ATT_TILE * VLD + ATT_TILE * PLD) * (int64_t)sizeof(float));
    char sq[48], sk[48], n1[48], qsr[48], qsd[48], ksr[48], ksd[48], vsr[48], vsd[48], osr[48], osd[48];
    cg_att_dim(&k, a.sq, sq, sizeof sq);
    cg_att_dim(&k, a.sk, sk, sizeof sk);
    cg_att_dim(&k, a.n1, n1, sizeof n1);
    cg_att_dim(&k, a.q.strides[2], qsr, sizeof qsr);
    cg_att_dim(&k, a.q.strides[3], qsd, sizeof qsd);
    cg_att_dim(&k, a.k.strides[2], ksr, sizeof ksr);
    cg_att_dim(&k, a.k.strides[3], ksd, sizeof ksd);
    cg_att_dim(&k, a.v.strides[2], vsr, sizeof vsr);
    cg_att_dim(&k, a.v.strides[3], vsd, sizeof vsd);
    cg_att_dim(&k, a.o.strides[2], osr, sizeof osr);
    cg_att_dim(&k, a.o.strides[3], osd, sizeof osd);
    sym_table *T = c->m->syms;
    const int rows = h16 ? hrows : ATT_TILE; /* query rows a block */
    sym_expr nq = sym_ceildiv(T, a.sq, sym_const(T, rows));
    sym_expr work = sym_mul(T, sym_mul(T, a.n0, a.n1), nq);
    char wk[48];
    cg_att_dim(&k, work, wk, sizeof wk);
    char rb[48]; /* the warp's first row in the block; wg: a warpgroup's 4 warps 16 rows each */
    if (wg) snprintf(rb, sizeof rb, "(w >> 2) * 64 + (w & 3) * 16");
    else snprintf(rb, sizeof rb, "w * %d", 16 * hmt);
    if (h16) { /* wg: the swizzled atoms 1024-byte aligned */
        cg_kw_body(&k,
                   "    extern __shared__ float4 sc_smem4[];\n"
                   "    unsigned short *Qs = (unsigned short *)%s, *Ks = Qs + %d * %lld, *Vs = Ks + %d * %lld;\n"
                   "    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3,\n"
                   "              rb = %s;\n",
                   wg ? "((char *)sc_smem4 + ((1024u - (sc_smem_addr(sc_smem4) & 1023u)) & 1023u))" : "sc_smem4",
                   nqb * hrows, (long long)HP, nst * kt, (long long)HP, rb);
        if (wg) {
            char bars[64];
            snprintf(bars, sizeof bars, "Vs + %lld", (long long)(nst * kt * HVP));
            cg_att_wg_preamble(&k, bars, cg_att_wg_tma(&a, wg), cg_att_wg_tma_q(&a, wg));
            k.min_blocks = 1; /* three warpgroups: the registers of one block an SM */
        }
        k.resident = cg_att_resident(&a, wg);
    } else
        cg_kw_body(
            &k,
            "    extern __shared__ float4 sc_smem4[];\n"
            "    float *Qs = (float *)sc_smem4, *Ks = Qs + %d * %lld, *Vs = Ks + %d * %lld, *Ps = Vs + %d * %lld;\n"
            "    %s\n",
            ATT_TILE, (long long)QLD, ATT_TILE, (long long)QLD, ATT_TILE, (long long)VLD,
            tc ? "const int w = threadIdx.x >> 5, g = (threadIdx.x >> 2) & 7, t = threadIdx.x & 3;"
               : "const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;");
    cg_kw_body(&k,
               "    const float NINF = __int_as_float(0xff800000);\n"
               "    const long long Sq = %s, Sk = %s, nq = (Sq + %d) / %d;\n",
               sq, sk, rows - 1, rows);
    /* 3xTF32 for fp32 engines; one TF32 product otherwise: f16 and bf16
     * values are exact in TF32, so Q·Kᵀ is exact and P is rounded to TF32's
     * 10 mantissa bits, as an f16 P would be */
    const int split = c->b->opt->precision == RT_PREC_FP32 &&
        (a.qdt == SYMC_F32 || a.kdt == SYMC_F32 || a.vdt == SYMC_F32);
    if (wg) { /* each role its own loop over the row blocks, at its own register count */
        cg_kw_body(&k,
                   "    if (threadIdx.x >= 256) { /* the producer warpgroup: its registers to the consumers */\n"
                   "    sc_wg_regs_dec<%d>();\n",
                   CG_ATT_WG_PRODUCER_REGS);
        if (cg_att_wg_tma_q(&a, wg)) /* its other threads have nothing to do: they leave */
            cg_kw_body(&k,
                       "    if (threadIdx.x != 256) return; /* Q, K and V by TMA: one thread issues every copy */\n");
        emit_rows_head(&k, &a, wk, n1, 0);
        cg_att_emit_h16_producer(&k, &a, qsr, ksr, vsr);
        cg_kw_body(&k,
                   "    } else { /* the consumer warpgroups */\n"
                   "    sc_wg_regs_inc<%d>();\n",
                   CG_ATT_WG_CONSUMER_REGS);
    }
    emit_rows_head(&k, &a, wk, n1, 1);
    if (h16) cg_att_emit_h16(&k, &a, wg, qsr, ksr, vsr, osr, osd);
    else if (tc) cg_att_emit_tf32(&k, &a, split, qsr, qsd, ksr, ksd, vsr, vsd, osr, osd);
    else cg_att_emit_f32(&k, &a, qsr, qsd, ksr, ksd, vsr, vsd, osr, osd);
    if (wg) cg_kw_body(&k, "    }\n    sc_cp_wait<0>(); /* the producer's last copies have landed */\n");
    /* the comment lists the fused nodes */
    cg_str comment = {0};
    char storage[96] = "";
    if (cg_is_half(a.qdt) || cg_is_half(a.kdt) || cg_is_half(a.vdt) || cg_is_half(a.odt))
        snprintf(storage, sizeof storage, ", storage q %s k %s v %s o %s", symc_dtype_name(a.qdt),
                 symc_dtype_name(a.kdt), symc_dtype_name(a.vdt), symc_dtype_name(a.odt));
    char rowtxt[40] = ""; /* the mma.sync kernel's short-sequence blocks (cg_att_h16_mt) */
    if (h16 && !wg && hmt == 1) snprintf(rowtxt, sizeof rowtxt, ", %d query rows a block", hrows);
    cg_str_appendf(&comment, "fused attention (flash, %s%s%s, D %lld, Dv %lld%s) of ",
                   wg          ? (a.qdt == SYMC_BF16 ? "bf16 wgmma" : "f16 wgmma")
                       : h16   ? (a.qdt == SYMC_BF16 ? "bf16 tensor cores" : "f16 tensor cores")
                       : !tc   ? "fp32"
                       : split ? "3xTF32 tensor cores"
                               : "TF32 tensor cores",
                   storage, a.causal_skip ? ", causal" : "", (long long)D, (long long)DV, rowtxt);
    uint32_t nodes[72], nn = 0;
    nodes[nn++] = node;
    for (uint32_t i = 0; i < a.n_covered && nn < 72; i++) nodes[nn++] = a.covered[i];
    cg_describe_nodes(c, nodes, nn, &comment);
    symc_status st = comment.oom ? symc_error_setf(c->b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA source")
                                 : cg_kw_finish(&k, comment.p, work, 1,
                                                wg              ? 384
                                                    : tc || h16 ? 128
                                                                : 256);
    cg_str_free(&comment);
    cg_kw_free(&k);
    return st;
}
