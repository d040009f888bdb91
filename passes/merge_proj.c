/* Sibling projections merged into one GEMM (pass_merge_projections), and an unbind into heads
 * rewritten into a split the attention reads in place (pass_unbind_heads).
 *
 * Transformers exported from torch (BERT, and every model whose attention has
 * separate query, key and value Linear layers) compute Q, K and V as three
 * matmuls of the same hidden state x with constant [K, N] weights, each
 * followed by its constant bias add and a reshape into heads. Three GEMMs of
 * n = N each run well below one GEMM of n = 3N on a GPU (BERT-base at 32x512:
 * 0.038 ms each for n = 768, against about 0.09 for n = 2304), so this pass
 * rewrites such a group into GPT-2's c_attn form: one matmul of x with the
 * weights concatenated along their columns, one add of the concatenated
 * biases, and a split along the last axis whose outputs are the original
 * adds' results (same tensors, same names, same readers). The fused attention
 * then reads Q, K and V in place in the merged result at each part's offset
 * (passes/fuse_attention.c's split_view), so the split costs nothing.
 *
 * The new nodes go where the group's first matmul is (x and the constants
 * are ready there, and every reader of a part comes after its old producer,
 * which comes after that matmul); the old matmuls and adds are given fresh
 * unread outputs and removed at the end (pass_remove_dead), with the
 * constants only they held.
 *
 * It runs after the precision pass, on the dtypes that pass chose: in a half
 * module whose attention logits need fp32 Q and K projections (an island),
 * those read x through a cast and V's reads x itself, so V keeps its half
 * GEMM (merged before the precision pass, the island would take all three).
 *
 * It merges only what stays exact and pays off: two to eight matmuls of one
 * x (a float tensor of rank 3, or of rank 2 [B * S, K]: torch.export's linear
 * on 3-D input reads a view of x per projection, and views of one shape of
 * one tensor count as one x; read as the matmul's left operand) by 2-D
 * constant weights of one dtype with the same K, each result private to the
 * matmul's one reader; either every member has a bias add of a rank-1
 * constant [N] of that dtype or none has; and every part is read only by a
 * reshape into heads ([.., H, D] from the last axis) whose result goes
 * through transposes (and casts) into a matmul of two computed operands, the
 * attention's. Elsewhere (Llama's rotary embedding, a gated MLP) a split
 * would be a copy the separate GEMMs do not pay, so those groups are left
 * alone. Each column of the merged product is the same dot product over K as
 * before, so the reference backend's results are bit-identical.
 * SYMC_MERGE_PROJECTIONS=0 turns the pass off (for comparison).
 *
 * A second rewrite of the same aim (pass_unbind_heads): timm's attention (ViT, Swin) computes one
 * qkv projection [B, N, 3C] and unbinds it into heads with a reshape to [B, N, 3, H, D], a
 * transpose by (2, 0, 3, 1, 4) and a split along axis 0 into three parts of 1, each squeezed:
 * the transpose is a copy of the whole projection and the split another, before the attention
 * reads them. The pass rewrites that chain into GPT-2's form, a split of the projection along
 * its last axis, each part reshaped to [B, N, H, D] and transposed by the rest of the
 * permutation (here (0, 2, 1, 3)) into the squeeze's result, which the fused attention reads in
 * place. Any permutation whose first axis is the 3 is taken; the parts are then contiguous
 * column blocks of the projection. It only moves data, so results are bit-identical. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

#define MAX_GROUP 8

typedef struct member {
    uint32_t mm, add; /* the matmul, its bias add (IR_NONE: none) */
    uint32_t w, b;    /* constant sources of the weight and the bias */
    uint32_t part;    /* the tensor the split makes: the add's result, or the matmul's */
    int64_t n;        /* the weight's columns */
} member;

static int const_dim(const ir_module *m, sym_expr e, int64_t *v) {
    return e != SYM_NONE && sym_is_const(m->syms, e, v);
}

static int float_dtype(symc_dtype dt) { return dt == SYMC_F32 || dt == SYMC_F16 || dt == SYMC_BF16; }

/* t flows through transposes and casts only (each result private) into a matmul whose operands
 * are both computed: the attention's Q·Kᵀ or P·V. */
static int reaches_attention(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t t, int depth) {
    uint32_t r = pass_only_reader(m, uses, is_out, t);
    if (r == IR_NONE || depth > 4) return 0;
    const ir_node *n = &m->nodes[r];
    if (n->op == IR_OP_TRANSPOSE || n->op == IR_OP_CAST)
        return n->n_out == 1 && reaches_attention(m, uses, is_out, n->out[0], depth + 1);
    if (n->op != IR_OP_MATMUL || n->n_in != 2) return 0;
    return ir_constant_source(m, n->in[0]) == IR_NONE && ir_constant_source(m, n->in[1]) == IR_NONE;
}

/* part ([d0, d1, N], or [d0 * d1, N]) is read only by a reshape into heads [d0, d1, H, D] (H * D =
 * N; up to two private reshapes before it) whose result reaches an attention. */
static int heads_only(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t part, int64_t n) {
    uint32_t r = pass_only_reader(m, uses, is_out, part);
    if (r == IR_NONE) return 0;
    const ir_node *rn = &m->nodes[r];
    if (rn->op != IR_OP_RESHAPE || rn->n_out != 1) return 0;
    /* through up to two more private reshapes (torch.export: [B * S, N] -> [B, S, N] -> heads) */
    for (int hop = 0; hop < 2 && m->tensors[rn->out[0]].rank != 4; hop++) {
        uint32_t nx = pass_only_reader(m, uses, is_out, rn->out[0]);
        if (nx == IR_NONE || m->nodes[nx].op != IR_OP_RESHAPE || m->nodes[nx].n_out != 1) return 0;
        rn = &m->nodes[nx];
    }
    const ir_tensor *pt = &m->tensors[part], *ht = &m->tensors[rn->out[0]];
    int64_t h, d;
    if (ht->rank != 4 || !const_dim(m, ht->dims[2], &h) || !const_dim(m, ht->dims[3], &d) || h * d != n) return 0;
    if (pt->rank == 3 ? ht->dims[0] != pt->dims[0] || ht->dims[1] != pt->dims[1]
                      : sym_prove_eq(m->syms, sym_mul(m->syms, ht->dims[0], ht->dims[1]), pt->dims[0]) != SYM_TRUE)
        return 0;
    return reaches_attention(m, uses, is_out, rn->out[0], 0);
}

/* t as it reads: a reshape's input (torch.export decomposes a linear on 3-D input into a view to
 * [B * S, K] per projection, so Q, K and V read three views of one x), else t itself */
static uint32_t view_source(const ir_module *m, uint32_t t) {
    uint32_t p = m->tensors[t].producer;
    return p != IR_NONE && m->nodes[p].op == IR_OP_RESHAPE && m->nodes[p].n_in >= 1 ? m->nodes[p].in[0] : t;
}

/* a and b hold the same values: one tensor, or views of the same shape of one tensor */
static int same_value(const ir_module *m, uint32_t a, uint32_t b) {
    return a == b ||
        (view_source(m, a) == view_source(m, b) && view_source(m, a) != a &&
         ir_same_shape(&m->tensors[a], &m->tensors[b]) && m->tensors[a].dtype == m->tensors[b].dtype);
}

/* Matmul node i as a member reading x: 1 and *mb filled when it qualifies. */
static int as_member(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, uint32_t x,
                     member *mb) {
    const ir_node *n = &m->nodes[i];
    if (n->op != IR_OP_MATMUL || n->n_in != 2 || n->n_out != 1 || !same_value(m, n->in[0], x) || n->in[1] == x)
        return 0;
    uint32_t w = ir_constant_source(m, n->in[1]), y = n->out[0];
    const ir_tensor *xt = &m->tensors[x], *yt = &m->tensors[y];
    if (w == IR_NONE || m->tensors[w].rank != 2 || m->tensors[w].dtype != xt->dtype || yt->rank != xt->rank ||
        yt->dtype != xt->dtype)
        return 0;
    int64_t k, nn, ny;
    if (!const_dim(m, m->tensors[w].dims[0], &k) || !const_dim(m, m->tensors[w].dims[1], &nn) ||
        !const_dim(m, yt->dims[yt->rank - 1], &ny) || ny != nn || nn <= 0)
        return 0;
    *mb = (member){i, IR_NONE, w, IR_NONE, y, nn};
    uint32_t r = pass_only_reader(m, uses, is_out, y);
    if (r == IR_NONE) return 0;
    const ir_node *a = &m->nodes[r];
    if (a->op == IR_OP_ADD && a->n_in == 2 && a->n_out == 1) {
        uint32_t c = a->in[0] == y ? a->in[1] : a->in[0], b = ir_constant_source(m, c);
        int64_t bn;
        const ir_tensor *at = &m->tensors[a->out[0]];
        if (b == IR_NONE || a->in[0] == a->in[1] || m->tensors[b].rank != 1 || m->tensors[b].dtype != xt->dtype ||
            !const_dim(m, m->tensors[b].dims[0], &bn) || bn != nn || !ir_same_shape(at, yt) || at->dtype != yt->dtype)
            return 0;
        mb->add = r, mb->b = b, mb->part = a->out[0];
    }
    return heads_only(m, uses, is_out, mb->part, nn);
}

static int64_t w_rows(const ir_module *m, const member *mb) {
    int64_t k = 0;
    const_dim(m, m->tensors[mb->w].dims[0], &k);
    return k;
}

/* A constant tensor of dtype dt and dims (k, n), or (n) when k < 0, holding data (taken), made by
 * a new constant node (appended; *node its index). */
static symc_status add_constant(ir_module *m, const char *base, symc_dtype dt, int64_t k, int64_t n, uint8_t *data,
                                size_t size, uint32_t *t, uint32_t *node, symc_error *err) {
    sym_expr dims[2] = {sym_const(m->syms, k < 0 ? n : k), sym_const(m->syms, n)};
    return pass_add_constant(m, "merge-projections", base, k < 0 ? ".merged_bias" : ".merged_weight", dt, k < 0 ? 1 : 2,
                             dims, data, size, t, node, err);
}

/* The concatenation of the members' constants (weights: row by row; biases: one after another). */
static uint8_t *concat(const ir_module *m, const member *g, uint32_t n, int64_t k, int64_t total, size_t es, int bias) {
    uint8_t *out = malloc((size_t)((bias ? 1 : k) * total) * es);
    if (!out) return NULL;
    for (int64_t r = 0; r < (bias ? 1 : k); r++)
        for (uint32_t i = 0, col = 0; i < n; col += (uint32_t)g[i].n, i++) {
            const uint8_t *src = m->constants[m->tensors[bias ? g[i].b : g[i].w].constant].data;
            memcpy(out + (size_t)(r * total + col) * es, src + (size_t)(r * g[i].n) * es, (size_t)g[i].n * es);
        }
    return out;
}

/* Rewrites group g (n members reading x) into matmul(x, W) [+ b] and a split into the parts. The
 * old producers of the parts are retired first (indices unchanged); the new nodes are appended,
 * then moved, in order, to where the first member's matmul is. */
static symc_status merge_group(ir_module *m, uint32_t x, const member *g, uint32_t n, symc_error *err) {
    symc_dtype dt = m->tensors[x].dtype;
    size_t es = symc_dtype_size(dt);
    int64_t k = w_rows(m, &g[0]), total = 0;
    for (uint32_t i = 0; i < n; i++) total += g[i].n;
    int bias = g[0].add != IR_NONE;
    uint32_t at = g[0].mm, made[5], n_made = 0, wt, bt = IR_NONE, prod, split_in, parts[MAX_GROUP];
    char base[400], name[512];
    snprintf(base, sizeof base, "%s", m->nodes[g[0].mm].name);
    symc_status st;
    for (uint32_t i = 0; i < n; i++) {
        parts[i] = g[i].part;
        if ((st = pass_retire(m, bias ? g[i].add : g[i].mm, g[i].part, err))) return st;
    }
    uint8_t *w = concat(m, g, n, k, total, es, 0);
    if (!w)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory merging the projections of '%s'",
                               m->tensors[x].name);
    if ((st = add_constant(m, base, dt, k, total, w, (size_t)(k * total) * es, &wt, &made[n_made++], err))) return st;
    if (bias) {
        uint8_t *b = concat(m, g, n, k, total, es, 1);
        if (!b)
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory merging the projections of '%s'",
                                   m->tensors[x].name);
        if ((st = add_constant(m, base, dt, -1, total, b, (size_t)total * es, &bt, &made[n_made++], err))) return st;
    }
    const int32_t r = m->tensors[x].rank; /* 3, or 2 for views [B * S, K] */
    sym_expr dims[3] = {m->tensors[x].dims[0], m->tensors[x].dims[1], 0};
    dims[r - 1] = sym_const(m->syms, total);
    pass_fresh_name(m, base, ".merged", name, sizeof name);
    if ((st = ir_add_tensor(m, name, dt, r, dims, &prod, err))) return st;
    uint32_t in[2] = {x, wt};
    if ((st = ir_add_node(m, IR_OP_MATMUL, name, "merge-projections", in, 2, &prod, 1, NULL, 0, &made[n_made++], err)))
        return st;
    split_in = prod;
    if (bias) {
        pass_fresh_name(m, base, ".merged_add", name, sizeof name);
        if ((st = ir_add_tensor(m, name, dt, r, dims, &split_in, err))) return st;
        uint32_t ain[2] = {prod, bt};
        if ((st = ir_add_node(m, IR_OP_ADD, name, "merge-projections", ain, 2, &split_in, 1, NULL, 0, &made[n_made++],
                              err)))
            return st;
    }
    sym_expr sizes[MAX_GROUP];
    for (uint32_t i = 0; i < n; i++) sizes[i] = sym_const(m->syms, g[i].n);
    ir_attr attrs[2] = {{.name = "axis", .kind = IR_ATTR_INT, .i = r - 1},
                        {.name = "sizes", .kind = IR_ATTR_DIMS, .n = n, .dims = sizes}};
    pass_fresh_name(m, base, ".merged_split", name, sizeof name);
    if ((st = ir_add_node(m, IR_OP_SPLIT, name, "merge-projections", &split_in, 1, parts, n, attrs, 2, &made[n_made++],
                          err)))
        return st;
    return pass_place(m, made, n_made, at, err);
}

/* ---- unbind-heads --------------------------------------------------------------------------- */

/* An unbind: what takes T's G parts along axis 0, in order, into parts[]: one split along axis 0
 * into G parts, G slices of axis 0, [i, i + 1) each (torch.export's unbind), each [1, ..], or G
 * gathers of axis 0 by a scalar constant index (torchvision's q, k, v = qkv[0], qkv[1], qkv[2]),
 * each one rank lower; T read by nothing else. *first: the first of those nodes. 1 when found. */
static int unbind_parts(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t t, uint32_t g,
                        uint32_t *parts, uint32_t *first) {
    if (is_out[t] || uses[t] < 1 || uses[t] > g) return 0;
    uint32_t found = 0, from = m->tensors[t].producer + 1;
    for (uint32_t i = 0; i < g; i++) parts[i] = IR_NONE;
    for (uint32_t i = from; i < m->n_nodes && found < uses[t]; i++) {
        const ir_node *n = &m->nodes[i];
        if (!n->n_in || n->in[0] != t) {
            for (uint32_t k = 0; k < n->n_in; k++)
                if (n->in[k] == t) return 0; /* t read some other way */
            continue;
        }
        if (!found) *first = i;
        found++;
        int64_t axis;
        const ir_attr *ax = ir_node_attr(n, "axis");
        if (n->op == IR_OP_SPLIT && uses[t] == 1 && n->n_out == g && n->n_in == 1 &&
            ir_axis_norm(ax && ax->kind == IR_ATTR_INT ? ax->i : 0, 5, &axis) && axis == 0) {
            for (uint32_t o = 0; o < g; o++) parts[o] = n->out[o];
            continue;
        }
        double idx;
        if (n->op == IR_OP_GATHER && uses[t] == g && n->n_in == 2 && n->n_out == 1 &&
            ir_axis_norm(ax && ax->kind == IR_ATTR_INT ? ax->i : 0, 5, &axis) && axis == 0 &&
            m->tensors[n->in[1]].rank == 0 && ir_scalar_constant(m, ir_constant_source(m, n->in[1]), &idx) &&
            idx >= 0 && idx < (double)g && idx == (double)(int64_t)idx && parts[(int64_t)idx] == IR_NONE) {
            parts[(int64_t)idx] = n->out[0]; /* qkv[i]: rank 4 already, no squeeze */
            continue;
        }
        const ir_attr *st = ir_node_attr(n, "starts"), *en = ir_node_attr(n, "ends"), *axs = ir_node_attr(n, "axes"),
                      *sp = ir_node_attr(n, "steps");
        int64_t s0, e0;
        if (n->op != IR_OP_SLICE || uses[t] != g || n->n_in != 1 || n->n_out != 1 || !st || !en || st->n != 1 ||
            en->n != 1 || !const_dim(m, st->dims[0], &s0) || !const_dim(m, en->dims[0], &e0) || s0 < 0 ||
            s0 >= (int64_t)g || e0 != s0 + 1 || (axs && (axs->n != 1 || axs->ints[0] != 0)) ||
            (sp && (sp->n != 1 || sp->ints[0] != 1)) || parts[s0] != IR_NONE)
            return 0;
        parts[s0] = n->out[0];
    }
    for (uint32_t i = 0; i < g; i++) {
        int64_t one;
        if (parts[i] == IR_NONE ||
            (m->tensors[parts[i]].rank == 5 && (!const_dim(m, m->tensors[parts[i]].dims[0], &one) || one != 1)))
            return 0;
    }
    return found == uses[t];
}

/* The unbind of a fused projection into heads at transpose node tp: T = transpose(R, perm) with
 * perm[0] = 2, R = reshape(X) [d0, d1, G, H, D] from X [d0, d1, G * H * D] (or [d0 * d1, ..]), R
 * private, T unbound along axis 0 (unbind_parts) into G parts each read only by a squeeze of axis
 * 0 (or a gather's part itself). Returns X (and the squeezes or gathers, and *first), or IR_NONE. */
static uint32_t unbind_source(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t tp,
                              uint32_t *squeeze, uint32_t *g_out, uint32_t *first) {
    const ir_node *tn = &m->nodes[tp];
    if (tn->op != IR_OP_TRANSPOSE || tn->n_in != 1 || tn->n_out != 1 || m->tensors[tn->out[0]].rank != 5)
        return IR_NONE;
    const ir_attr *perm = ir_node_attr(tn, "perm");
    uint32_t r = tn->in[0], rp = m->tensors[r].producer;
    if (!perm || perm->kind != IR_ATTR_INTS || perm->n != 5 || perm->ints[0] != 2 ||
        pass_only_reader(m, uses, is_out, r) != tp || rp == IR_NONE || m->nodes[rp].op != IR_OP_RESHAPE)
        return IR_NONE;
    uint32_t x = m->nodes[rp].in[0];
    const ir_tensor *rt = &m->tensors[r], *xt = &m->tensors[x];
    int64_t g, h, d, w;
    if (rt->rank != 5 || (xt->rank != 3 && xt->rank != 2) || !const_dim(m, rt->dims[2], &g) || g < 2 || g > MAX_GROUP ||
        !const_dim(m, rt->dims[3], &h) || !const_dim(m, rt->dims[4], &d) || !const_dim(m, xt->dims[xt->rank - 1], &w) ||
        g * h * d != w)
        return IR_NONE;
    if (xt->rank == 3 ? xt->dims[0] != rt->dims[0] || xt->dims[1] != rt->dims[1]
                      : sym_prove_eq(m->syms, sym_mul(m->syms, rt->dims[0], rt->dims[1]), xt->dims[0]) != SYM_TRUE)
        return IR_NONE;
    uint32_t parts[MAX_GROUP];
    if (!unbind_parts(m, uses, is_out, tn->out[0], (uint32_t)g, parts, first)) return IR_NONE;
    for (uint32_t o = 0; o < (uint32_t)g; o++) {
        if (m->tensors[parts[o]].rank == 4) { /* a gather's part: it is the head tensor itself */
            squeeze[o] = m->tensors[parts[o]].producer;
            continue;
        }
        uint32_t q = pass_only_reader(m, uses, is_out, parts[o]);
        if (q == IR_NONE || m->nodes[q].op != IR_OP_SQUEEZE || m->nodes[q].n_out != 1) return IR_NONE;
        const ir_attr *sq = ir_node_attr(&m->nodes[q], "axes");
        if (!sq || sq->kind != IR_ATTR_INTS || sq->n != 1 || sq->ints[0] != 0) return IR_NONE;
        squeeze[o] = q;
    }
    *g_out = (uint32_t)g;
    return x;
}

/* Rewrites the unbind at transpose tp (unbind_source: X and the G squeezes) into a split of X
 * along its last axis into G parts of H * D, each reshaped to [d0, d1, H, D] and transposed by
 * perm[1..4] (R's axis 2 left out) into the squeeze's result (same tensor, same readers). The
 * squeezes get fresh unread results (the old chain is then dead); the new nodes go where the
 * first node of the unbind is. */
static symc_status unbind_group(ir_module *m, uint32_t tp, uint32_t x, const uint32_t *squeeze, uint32_t g, uint32_t at,
                                symc_error *err) {
    /* everything read from the module first: adding tensors and nodes moves its arrays */
    const ir_node *tn = &m->nodes[tp];
    const ir_tensor *rt = &m->tensors[tn->in[0]];
    const uint32_t xr = (uint32_t)m->tensors[x].rank;
    const symc_dtype dt = m->tensors[x].dtype;
    const ir_attr *perm = ir_node_attr(tn, "perm");
    int64_t p4[4];
    for (int i = 0; i < 4; i++) p4[i] = perm->ints[i + 1] > 2 ? perm->ints[i + 1] - 1 : perm->ints[i + 1];
    sym_expr heads[4] = {rt->dims[0], rt->dims[1], rt->dims[3], rt->dims[4]};
    sym_expr part = sym_mul(m->syms, rt->dims[3], rt->dims[4]);
    sym_expr pdims[3] = {m->tensors[x].dims[0], m->tensors[x].dims[1], 0}, sizes[MAX_GROUP];
    pdims[xr - 1] = part;
    uint32_t outs[MAX_GROUP], parts[MAX_GROUP], made[1 + 2 * MAX_GROUP], n_made = 0;
    for (uint32_t i = 0; i < g; i++) {
        outs[i] = m->nodes[squeeze[i]].out[0];
        sizes[i] = part;
    }
    char base[400], name[512];
    snprintf(base, sizeof base, "%s", tn->name ? tn->name : "unbind");
    symc_status st;
    for (uint32_t i = 0; i < g; i++)
        if ((st = pass_retire(m, squeeze[i], outs[i], err))) return st;
    for (uint32_t i = 0; i < g; i++) {
        pass_fresh_name(m, base, ".head_part", name, sizeof name);
        if ((st = ir_add_tensor(m, name, dt, (int32_t)xr, pdims, &parts[i], err))) return st;
    }
    ir_attr sa[2] = {{.name = "axis", .kind = IR_ATTR_INT, .i = (int64_t)xr - 1},
                     {.name = "sizes", .kind = IR_ATTR_DIMS, .n = g, .dims = sizes}};
    pass_fresh_name(m, base, ".heads", name, sizeof name);
    if ((st = ir_add_node(m, IR_OP_SPLIT, name, "unbind-heads", &x, 1, parts, g, sa, 2, &made[n_made++], err)))
        return st;
    for (uint32_t i = 0; i < g; i++) {
        uint32_t rs;
        pass_fresh_name(m, base, ".head_view", name, sizeof name);
        if ((st = ir_add_tensor(m, name, dt, 4, heads, &rs, err))) return st;
        ir_attr ra = {.name = "shape", .kind = IR_ATTR_DIMS, .n = 4, .dims = heads};
        if ((st = ir_add_node(m, IR_OP_RESHAPE, name, "unbind-heads", &parts[i], 1, &rs, 1, &ra, 1, &made[n_made++],
                              err)))
            return st;
        ir_attr ta = {.name = "perm", .kind = IR_ATTR_INTS, .n = 4, .ints = p4};
        pass_fresh_name(m, base, ".head_transpose", name, sizeof name);
        if ((st = ir_add_node(m, IR_OP_TRANSPOSE, name, "unbind-heads", &rs, 1, &outs[i], 1, &ta, 1, &made[n_made++],
                              err)))
            return st;
    }
    return pass_place(m, made, n_made, at, err);
}

/* an unbind of one fused projection at transpose i rewritten (pass_rewrite_walk's step) */
static symc_status unbind_at(ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, int *rewrote,
                             symc_error *err) {
    uint32_t squeeze[MAX_GROUP], g = 0, at = 0, x = unbind_source(m, uses, is_out, i, squeeze, &g, &at);
    if (x == IR_NONE) return SYMC_OK;
    *rewrote = 1;
    return unbind_group(m, i, x, squeeze, g, at, err);
}

symc_status pass_unbind_heads(ir_module *m, symc_error *err) {
    if (pass_switched_off("SYMC_UNBIND_HEADS")) return SYMC_OK;
    uint32_t n = 0;
    symc_status st = pass_rewrite_walk(m, "unbind-heads", unbind_at, &n, err);
    if (!st && n) st = pass_remove_dead(m, NULL, err);
    return st;
}

symc_status pass_merge_projections(ir_module *m, symc_error *err) {
    if (pass_switched_off("SYMC_MERGE_PROJECTIONS")) return SYMC_OK;
    symc_status st = SYMC_OK;
    int merged_any = 0;
    uint8_t *is_out = NULL, *done = NULL;
    uint32_t *uses = NULL;
    for (int again = 1; again && !st && !(st = pass_reader_counts(m, &uses, &is_out, "merge-projections", err));) {
        again = 0;
        free(done);
        if (!(done = calloc(m->n_tensors + 1, 1))) {
            st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the merge-projections pass");
            break;
        }
        for (uint32_t i = 0; i < m->n_nodes && !again; i++) {
            const ir_node *n = &m->nodes[i];
            if (n->op != IR_OP_MATMUL || n->n_in != 2) continue;
            uint32_t x = n->in[0];
            if (done[x] || !float_dtype(m->tensors[x].dtype) || (m->tensors[x].rank != 3 && m->tensors[x].rank != 2))
                continue;
            for (uint32_t j = i; j < m->n_nodes; j++) /* x's views of its shape are the same x */
                if (m->nodes[j].op == IR_OP_MATMUL && m->nodes[j].n_in == 2 && same_value(m, m->nodes[j].in[0], x))
                    done[m->nodes[j].in[0]] = 1;
            /* the members with a bias and those without, each of the first one's K */
            member g[2][MAX_GROUP];
            uint32_t cnt[2] = {0, 0};
            for (uint32_t j = i; j < m->n_nodes; j++) {
                member mb;
                if (!as_member(m, uses, is_out, j, x, &mb)) continue;
                int f = mb.add == IR_NONE;
                if (cnt[f] < MAX_GROUP && (!cnt[f] || w_rows(m, &mb) == w_rows(m, &g[f][0]))) g[f][cnt[f]++] = mb;
            }
            int f = cnt[0] >= 2 ? 0 : 1;
            if (cnt[f] < 2) continue;
            st = merge_group(m, x, g[f], cnt[f], err);
            merged_any = 1;
            again = !st; /* indices moved: look again from the start (the other form's group too) */
        }
    }
    free(uses);
    free(done);
    free(is_out);
    if (!st && merged_any) st = pass_remove_dead(m, NULL, err);
    return st;
}
