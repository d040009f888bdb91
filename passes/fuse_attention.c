/* Fused attention, round 2 of the fuse pass (fuse.c): finds softmax(f(Q·Kᵀ))·V
 * around each matmul and stores what it found in the plan (ir_attention, ir/ir.h)
 * with the nodes it covers as IR_FUSE_CLAIMED members of the matmul, an
 * IR_FUSE_ATTENTION root. The target says only whether it runs fused attention
 * and how large a head dim (pass_fuse_rules.attention_max_head); its emitter
 * (the CUDA target's: codegen/cuda_emit_attention*.c) reads the stored match
 * and matches nothing again.
 *
 * The match starts at a matmul O = P·V whose A operand P is the private result
 * of a softmax over the last axis (reached through at most two private no-ops:
 * an identity, a cast between float types), and walks back from the softmax
 * input through a private chain of at most six elementwise nodes to the score
 * matmul S = Q·B: the chain is the "score function" f, each node one of
 *   - mul / div by a scalar (a literal when constant: the 1/sqrt(d) scale),
 *   - add of a scalar or of a mask broadcast to [.., Sq, Sk] (each mask dim
 *     the score's or the constant 1); a mask that is not shared by every row
 *     or every key is read through the expand or where(cond, a, b) making it
 *     when the pieces behind are (IR_ATT_ADD_SEL: the leaves of cond),
 *   - add of a mask per window between two views (Swin's shifted windows: the
 *     scores [B * W, ..] viewed as [B, W, ..], a mask [1, W, 1, Sq, Sk] added,
 *     viewed back; the kernel reads window b0 mod W of it: window_add),
 *   - where(cond, a, b) with the chain on one side and a scalar on the other;
 *     cond is a bool mask like the above, or a causal mask recognized from
 *     its structure: greater(cols, rows) / less(rows, cols) where rows and
 *     cols are views of one range with a positive constant step, so masked
 *     means key > query and needs no memory at all.
 * A private mul (or div) of Q or of B by a scalar right before the score
 * matmul (timm's q * scale) joins the function as its first op.
 * Every intermediate is private (one consumer, not a graph output). Q, B
 * and V are followed back through private transposes and one private
 * widening cast from f16/bf16 to f32 (the precision pass's in front of fp32
 * logits when Q and K are stored in half: the kernel reads the half storage,
 * whose f32 values are exact; see passes/mixed_precision.c) (and the score's B is
 * read with its last two axes swapped), behind them through the head split of a
 * fused projection (GPT-2's c_attn: a split of one tensor along its last axis,
 * each part reshaped to heads, read at its offset in the split's input: the
 * split and the reshapes are covered), and O forward through private
 * transposes, so the head split and merge of a transformer cost nothing: the
 * kernel reads [B, S, H, D] storage with strides and writes O straight into
 * the merged layout. Batch dims must be the same expressions in Q, K, V and
 * the score (no broadcasting), the head dims D and Dv constants that are
 * multiples of 4 and at most the target's maximum; anything else stays
 * unfused.
 *
 * The round claims a match when none of its nodes is claimed already and
 * what its kernel reads past its own nodes (a mask piece behind the expand,
 * where and and that make the mask) is made by a node that stores it; those
 * tensors then count one more reader, so no later round computes them inside
 * another kernel and leaves them unstored. */
#include <string.h>

#include "passes/passes.h"

/* what the match reads: the module, its uses, the target's largest head dim */
typedef struct att_ctx {
    ir_module *m;
    const ir_uses *uses;
    int64_t max_head;
} att_ctx;

static int is_half(symc_dtype dt) { return dt == SYMC_F16 || dt == SYMC_BF16; }

static int64_t attr_int(const ir_node *n, const char *name, int64_t dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && (a->kind == IR_ATTR_INT || a->kind == IR_ATTR_DTYPE) ? a->i : dflt;
}

static sym_expr prod(const att_ctx *c, const sym_expr *dims, int from, int to) {
    sym_expr p = sym_const(c->m->syms, 1);
    for (int d = from; d < to; d++) p = sym_mul(c->m->syms, p, dims[d]);
    return p;
}

static int cover(ir_attention *a, uint32_t node) {
    if (a->n_covered >= sizeof a->covered / sizeof a->covered[0]) return 0;
    a->covered[a->n_covered++] = node;
    return 1;
}

static int is_view_op(ir_op op) {
    return op == IR_OP_RESHAPE || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE || op == IR_OP_FLATTEN ||
        op == IR_OP_IDENTITY;
}

/* contiguous row-major strides of t's own dims, in a rank-4 frame padded
 * in front with size-1 dims */
static void contiguous_view(const att_ctx *c, uint32_t t, ir_att_view *v) {
    const ir_tensor *x = &c->m->tensors[t];
    int pad = 4 - x->rank;
    v->t = t;
    v->off = 0;
    v->group = 1;
    for (int d = 0; d < 4; d++) {
        if (d < pad) {
            v->dims[d] = sym_const(c->m->syms, 1);
            v->strides[d] = sym_const(c->m->syms, 0);
        } else {
            v->dims[d] = x->dims[d - pad];
            v->strides[d] = prod(c, x->dims, d - pad + 1, x->rank);
        }
    }
}

/* the transpose node's permutation, when it is a plain one of rank r */
static const int64_t *perm_of(const att_ctx *c, const ir_node *n, int r) {
    const ir_attr *p = ir_node_attr(n, "perm");
    if (!p || p->kind != IR_ATTR_INTS || p->n != (uint32_t)r) return NULL;
    for (int d = 0; d < r; d++)
        if (p->ints[d] < 0 || p->ints[d] >= r) return NULL;
    (void)c;
    return p->ints;
}

/* a cast from f16 or bf16 to f32: exact, so the kernel may read its input instead */
static int is_widening(const att_ctx *c, const ir_node *n) {
    return n->op == IR_OP_CAST && n->n_in == 1 && n->n_out == 1 && is_half(c->m->tensors[n->in[0]].dtype) &&
        c->m->tensors[n->out[0]].dtype == SYMC_F32;
}

/* The head split of a fused projection (GPT-2's c_attn: one GEMM makes [B, S, 3 * H * D], split
 * along its last axis into Q, K and V, each reshaped to [B, S, H, D]): when `base` is such a
 * reshape's private output (only its last dim split, into [.., H, D]) of a private split output
 * along the last axis of a rank-3 tensor X with the same leading dims and a constant row length
 * (or of a rank-2 X [B * S, W]: torch.export's linear on 3-D input, proven B * S rows; up to two
 * more private reshapes between), *b is base's dims over X's storage, offset by the parts before
 * it, and the reshapes are covered.
 * The split itself is covered by cover_splits once the kernel reads all of its outputs this way. */
static int split_view(const att_ctx *c, uint32_t base, ir_attention *a, ir_att_view *b) {
    const ir_tensor *bt = &c->m->tensors[base];
    uint32_t rp = bt->producer;
    if (bt->rank != 4 || rp == IR_NONE || !ir_uses_private(c->uses, base)) return 0;
    const ir_node *rn = &c->m->nodes[rp];
    if (rn->op != IR_OP_RESHAPE || rn->n_out != 1) return 0;
    uint32_t si = rn->in[0], chain[2], n_chain = 0;
    /* behind further private reshapes (torch.export: [B * S, W] -> [B, S, W] -> [B, S, H, D]); a
     * reshape only reinterprets row-major data, so the chain is one reshape of the split's part */
    while (n_chain < 2 && c->m->tensors[si].producer != IR_NONE && ir_uses_private(c->uses, si) &&
           c->m->nodes[c->m->tensors[si].producer].op == IR_OP_RESHAPE &&
           c->m->nodes[c->m->tensors[si].producer].n_out == 1) {
        chain[n_chain++] = c->m->tensors[si].producer;
        si = c->m->nodes[chain[n_chain - 1]].in[0];
    }
    const ir_tensor *st = &c->m->tensors[si];
    uint32_t sp = st->producer;
    /* X [B, S, W], or [B * S, W] (torch.export's linear on 3-D input: addmm on a view) */
    const int r = st->rank;
    if ((r != 3 && r != 2) || sp == IR_NONE || !ir_uses_private(c->uses, si)) return 0;
    const ir_node *sn = &c->m->nodes[sp];
    if (sn->op != IR_OP_SPLIT || sn->n_in < 1) return 0;
    const ir_tensor *xt = &c->m->tensors[sn->in[0]];
    int64_t axis, h, d, w, part;
    if (xt->rank != r || !ir_axis_norm(attr_int(sn, "axis", 0), r, &axis) || axis != r - 1 ||
        xt->dims[0] != st->dims[0] ||
        (r == 3 && (xt->dims[1] != st->dims[1] || bt->dims[0] != st->dims[0] || bt->dims[1] != st->dims[1])) ||
        (r == 2 && sym_prove_eq(c->m->syms, sym_mul(c->m->syms, bt->dims[0], bt->dims[1]), st->dims[0]) != SYM_TRUE) ||
        !sym_is_const(c->m->syms, bt->dims[2], &h) || !sym_is_const(c->m->syms, bt->dims[3], &d) ||
        !sym_is_const(c->m->syms, st->dims[r - 1], &part) || h * d != part ||
        !sym_is_const(c->m->syms, xt->dims[r - 1], &w))
        return 0;
    /* the part's first column: the sizes of the outputs before it (every output's last dim, constant) */
    int64_t off = -1, at = 0;
    for (uint32_t i = 0; i < sn->n_out; i++) {
        int64_t n;
        if (!sym_is_const(c->m->syms, c->m->tensors[sn->out[i]].dims[r - 1], &n)) return 0;
        if (sn->out[i] == si) off = at;
        at += n;
    }
    if (off < 0 || at != w || !cover(a, rp)) return 0;
    for (uint32_t i = 0; i < n_chain; i++)
        if (!cover(a, chain[i])) return 0;
    sym_table *y = c->m->syms;
    b->t = sn->in[0];
    b->dims[0] = bt->dims[0], b->dims[1] = bt->dims[1], b->dims[2] = bt->dims[2], b->dims[3] = bt->dims[3];
    b->strides[0] = sym_mul(y, bt->dims[1], sym_const(y, w)); /* S rows of W a batch (S: X's or the reshape's) */
    b->strides[1] = sym_const(y, w);
    b->strides[2] = sym_const(y, d);
    b->strides[3] = sym_const(y, 1);
    b->off = off;
    b->group = 1;
    return 1;
}

/* Grouped-query attention's K or V (transformers' repeat_kv: [B, Hkv, S, D] unsqueezed to
 * [B, Hkv, 1, S, D], expanded to [B, Hkv, G, S, D], reshaped to [B, Hkv * G, S, D]): when `base`
 * is such a reshape's private output of a private expand along dim 2 only, from size 1 to a
 * constant G >= 2, *b reads the expand's input as [B, H, S, D] with head b1 at kv head b1 / G
 * (group G); the reshape and the expand are covered. The expanded copy, G times K's or V's bytes,
 * is never made. SYMC_ATTENTION_GQA=0 reads the expanded copy (for comparison). */
static int group_view(const att_ctx *c, uint32_t base, ir_attention *a, ir_att_view *b) {
    if (pass_switched_off("SYMC_ATTENTION_GQA")) return 0;
    const ir_tensor *bt = &c->m->tensors[base];
    const uint32_t rp = bt->producer;
    if (bt->rank != 4 || rp == IR_NONE || !ir_uses_private(c->uses, base)) return 0;
    const ir_node *rn = &c->m->nodes[rp];
    if (rn->op != IR_OP_RESHAPE || rn->n_out != 1) return 0;
    const uint32_t et = rn->in[0], ep = c->m->tensors[et].producer;
    if (ep == IR_NONE || !ir_uses_private(c->uses, et)) return 0;
    const ir_node *en = &c->m->nodes[ep];
    if (en->op != IR_OP_EXPAND || en->n_out != 1 || en->n_in < 1) return 0;
    const ir_tensor *e = &c->m->tensors[et], *x = &c->m->tensors[en->in[0]];
    sym_table *y = c->m->syms;
    int64_t g, one;
    if (e->rank != 5 || x->rank != 5 || x->dtype != e->dtype || !sym_is_const(y, x->dims[2], &one) || one != 1 ||
        !sym_is_const(y, e->dims[2], &g) || g < 2)
        return 0;
    for (int d = 0; d < 5; d++)
        if (d != 2 && x->dims[d] != e->dims[d]) return 0;
    if (e->dims[0] != bt->dims[0] || e->dims[3] != bt->dims[2] || e->dims[4] != bt->dims[3] ||
        sym_prove_eq(y, sym_scale(y, e->dims[1], g), bt->dims[1]) != SYM_TRUE)
        return 0;
    if (a->n_covered + 2 > sizeof a->covered / sizeof a->covered[0]) return 0; /* room for both */
    cover(a, rp);
    cover(a, ep);
    b->t = en->in[0];
    b->off = 0;
    b->group = g;
    b->dims[0] = bt->dims[0], b->dims[1] = bt->dims[1], b->dims[2] = bt->dims[2], b->dims[3] = bt->dims[3];
    b->strides[3] = sym_const(y, 1);
    b->strides[2] = x->dims[4];
    b->strides[1] = sym_mul(y, x->dims[3], x->dims[4]);
    b->strides[0] = sym_mul(y, x->dims[1], b->strides[1]);
    return 1;
}

/* Tensor t (rank 2..4) as a strided view of the storage behind the private
 * transposes that produce it, and behind a private widening cast (the
 * precision pass's in front of fp32 logits: Q and K stored in half); those
 * nodes are covered. Behind them, a head split of a fused projection is read
 * in the projection's output (split_view). */
static int read_view(const att_ctx *c, uint32_t t, ir_attention *a, ir_att_view *v) {
    int r = c->m->tensors[t].rank;
    int perm[4] = {0, 1, 2, 3}; /* logical dim d of t is dim perm[d] of `base` */
    uint32_t base = t;
    int widened = 0;
    for (int hops = 0; hops < 5; hops++) {
        uint32_t p = c->m->tensors[base].producer;
        if (p == IR_NONE || !ir_uses_private(c->uses, base)) break;
        if (!widened && is_widening(c, &c->m->nodes[p])) {
            if (!cover(a, p)) return 0;
            widened = 1;
            base = c->m->nodes[p].in[0];
            continue;
        }
        if (c->m->nodes[p].op != IR_OP_TRANSPOSE) break;
        const int64_t *pp = perm_of(c, &c->m->nodes[p], r);
        if (!pp || c->m->tensors[c->m->nodes[p].in[0]].rank != r) break;
        for (int d = 0; d < r; d++) perm[d] = (int)pp[perm[d]];
        if (!cover(a, p)) return 0;
        base = c->m->nodes[p].in[0];
    }
    ir_att_view b;
    /* a grouped view keeps its heads in dim 1 (the transposes above it may swap the last two) */
    if (r != 4 || !((perm[1] == 1 && group_view(c, base, a, &b)) || split_view(c, base, a, &b)))
        contiguous_view(c, base, &b);
    int pad = 4 - r;
    *v = b;
    for (int d = 0; d < r; d++) {
        v->dims[pad + d] = b.dims[pad + perm[d]];
        v->strides[pad + d] = b.strides[pad + perm[d]];
    }
    return 1;
}

static int is_covered(const ir_attention *a, uint32_t node) {
    for (uint32_t i = 0; i < a->n_covered; i++)
        if (a->covered[i] == node) return 1;
    return 0;
}

/* A split whose every output is read through a covered reshape (split_view covers them): the kernel
 * reads all its parts in its input, so the split is covered too, once. */
static int cover_splits(const att_ctx *c, ir_attention *a) {
    const uint32_t n = a->n_covered;
    for (uint32_t i = 0; i < n; i++) {
        const ir_node *rn = &c->m->nodes[a->covered[i]];
        uint32_t sp = rn->op == IR_OP_RESHAPE ? c->m->tensors[rn->in[0]].producer : IR_NONE;
        if (sp == IR_NONE || c->m->nodes[sp].op != IR_OP_SPLIT || is_covered(a, sp)) continue;
        const ir_node *sn = &c->m->nodes[sp];
        int all = 1;
        for (uint32_t o = 0; o < sn->n_out && all; o++)
            all = ir_uses_private(c->uses, sn->out[o]) && is_covered(a, c->uses->consumer[sn->out[o]]);
        if (all && !cover(a, sp)) return 0;
    }
    return 1;
}

/* O (= t) written through the private transposes that consume it: the
 * storage is the last transpose's output. */
static int write_view(const att_ctx *c, uint32_t t, ir_attention *a, ir_att_view *v) {
    int r = c->m->tensors[t].rank;
    int pos[4] = {0, 1, 2, 3}; /* logical dim d of t is dim pos[d] of `dst` */
    uint32_t dst = t;
    for (int hops = 0; hops < 4; hops++) {
        if (!ir_uses_private(c->uses, dst)) break;
        uint32_t k = c->uses->consumer[dst];
        const ir_node *n = &c->m->nodes[k];
        if (n->op != IR_OP_TRANSPOSE || c->m->tensors[n->out[0]].rank != r) break;
        const int64_t *pp = perm_of(c, n, r);
        if (!pp) break;
        int inv[4];
        for (int e = 0; e < r; e++) inv[pp[e]] = e; /* out dim e holds in dim pp[e] */
        for (int d = 0; d < r; d++) pos[d] = inv[pos[d]];
        if (!cover(a, k)) return 0;
        dst = n->out[0];
    }
    ir_att_view b;
    contiguous_view(c, dst, &b);
    int pad = 4 - r;
    v->t = dst;
    v->off = 0;
    for (int d = 0; d < 4; d++) v->dims[d] = v->strides[d] = sym_const(c->m->syms, d < pad ? 1 : 0);
    for (int d = 0; d < r; d++) {
        v->dims[pad + d] = c->m->tensors[t].dims[d];
        v->strides[pad + d] = b.strides[pad + pos[d]];
    }
    return 1;
}

static int is_one(const att_ctx *c, sym_expr e) {
    int64_t v;
    return sym_is_const(c->m->syms, e, &v) && v == 1;
}

/* the dtypes the kernel reads and writes (computing in fp32) */
static int att_dtype(symc_dtype dt) { return dt == SYMC_F32 || is_half(dt); }

static int is_scalar(const att_ctx *c, uint32_t t) {
    const ir_tensor *x = &c->m->tensors[t];
    if (!att_dtype(x->dtype)) return 0;
    for (int d = 0; d < x->rank; d++)
        if (!is_one(c, x->dims[d])) return 0;
    return 1;
}

/* mask t broadcast to the score's [n0, n1, sq, sk]: each of its dims (right
 * aligned) is the score's or 1 (stride 0) */
static int mask_view(const att_ctx *c, uint32_t t, const ir_tensor *score, ir_att_view *v) {
    const ir_tensor *x = &c->m->tensors[t];
    if (x->rank > score->rank) return 0;
    ir_att_view b;
    contiguous_view(c, t, &b);
    int spad = 4 - score->rank;
    for (int d = 0; d < 4; d++) {
        sym_expr want = d < spad ? sym_const(c->m->syms, 1) : score->dims[d - spad];
        if (b.dims[d] == want) continue;
        if (!is_one(c, b.dims[d])) return 0;
        b.strides[d] = sym_const(c->m->syms, 0);
    }
    *v = b;
    return 1;
}

static uint32_t view_root(const att_ctx *c, uint32_t t) {
    for (int hops = 0; hops < 8; hops++) {
        uint32_t p = c->m->tensors[t].producer;
        if (p == IR_NONE || !is_view_op(c->m->nodes[p].op)) break;
        t = c->m->nodes[p].in[0];
    }
    return t;
}

/* 1 when the last dim is 1 and others are not all 1 (varies along rows),
 * 2 when it varies along the last axis only, 0 otherwise */
static int axis_role(const att_ctx *c, const ir_tensor *x) {
    if (x->rank < 1) return 0;
    int last_one = is_one(c, x->dims[x->rank - 1]);
    int others_one = 1;
    for (int d = 0; d < x->rank - 1; d++) others_one &= is_one(c, x->dims[d]);
    if (!last_one && others_one) return 2;
    if (last_one && x->rank >= 2 && !is_one(c, x->dims[x->rank - 2])) {
        for (int d = 0; d < x->rank - 2; d++)
            if (!is_one(c, x->dims[d])) return 0;
        return 1;
    }
    return 0;
}

/* the constant start and positive step of the range that view tensor t is a
 * view of; 0 when it is not one */
static int range_of(const att_ctx *c, uint32_t t, int64_t *start, int64_t *step) {
    uint32_t rp = c->m->tensors[view_root(c, t)].producer;
    if (rp == IR_NONE || c->m->nodes[rp].op != IR_OP_RANGE) return 0;
    const ir_attr *s0 = ir_node_attr(&c->m->nodes[rp], "start"), *d = ir_node_attr(&c->m->nodes[rp], "delta");
    return s0 && d && s0->kind == IR_ATTR_DIMS && d->kind == IR_ATTR_DIMS && s0->n == 1 && d->n == 1 &&
        sym_is_const(c->m->syms, s0->dims[0], start) && sym_is_const(c->m->syms, d->dims[0], step) && *step > 0;
}

/* cond[.., q, k] as a comparison of key and query positions: 1 for (k > q)
 * from greater(cols, rows) or less(rows, cols), 2 for (k <= q) from
 * less_equal(cols, rows) or greater_equal(rows, cols); 0 otherwise. The
 * positions are one range, or two ranges with the same constant start and
 * positive step (transformers 5 makes kv_idx and cache_position apart), so
 * comparing positions is comparing indices. */
static int causal_rel(const att_ctx *c, uint32_t cond, const ir_tensor *score) {
    uint32_t p = c->m->tensors[cond].producer;
    if (p == IR_NONE) return 0;
    const ir_node *n = &c->m->nodes[p];
    if (n->n_in != 2) return 0;
    int rel = n->op == IR_OP_GREATER || n->op == IR_OP_LESS         ? 1
        : n->op == IR_OP_LESS_EQUAL || n->op == IR_OP_GREATER_EQUAL ? 2
                                                                    : 0;
    if (!rel) return 0;
    const int key_first = n->op == IR_OP_GREATER || n->op == IR_OP_LESS_EQUAL;
    uint32_t hi = key_first ? n->in[0] : n->in[1]; /* must be the key (cols) side */
    uint32_t lo = key_first ? n->in[1] : n->in[0];
    if (axis_role(c, &c->m->tensors[hi]) != 2 || axis_role(c, &c->m->tensors[lo]) != 1) return 0;
    int64_t s1, d1, s2, d2;
    if (!range_of(c, hi, &s1, &d1) || !range_of(c, lo, &s2, &d2) || s1 != s2 || d1 != d2) return 0;
    const ir_tensor *h = &c->m->tensors[hi], *l = &c->m->tensors[lo];
    /* the positions run along the score's own query and key dims */
    return h->dims[h->rank - 1] == score->dims[score->rank - 1] && l->dims[l->rank - 2] == score->dims[score->rank - 2]
        ? rel
        : 0;
}

/* cond[.., q, k] == (k > q) */
static int causal_cond(const att_ctx *c, uint32_t cond, const ir_tensor *score) {
    return causal_rel(c, cond, score) == 1;
}

/* the constant value of scalar tensor t, when it is one */
static int scalar_value(const att_ctx *c, uint32_t t, double *out) {
    const ir_tensor *x = &c->m->tensors[t];
    if (x->constant == IR_NONE || !att_dtype(x->dtype)) return 0;
    const ir_constant *k = &c->m->constants[x->constant];
    if (k->size < symc_dtype_size(x->dtype)) return 0;
    *out = symc_dtype_load(k->data, x->dtype, 0);
    return 1;
}

static int row_shared_view(const att_ctx *c, const ir_att_view *v) {
    int64_t z;
    return sym_is_const(c->m->syms, v->strides[2], &z) && z == 0;
}

/* the mask is the same for every key of a query row (key stride 0) */
static int key_shared_view(const att_ctx *c, const ir_att_view *v) {
    int64_t z;
    return sym_is_const(c->m->syms, v->strides[3], &z) && z == 0;
}

static int shared_view(const att_ctx *c, const ir_att_view *v) {
    return row_shared_view(c, v) || key_shared_view(c, v);
}

/* t itself, or the input of the expand that makes t (expand only repeats
 * values: reading its input through the broadcast view is the same) */
static uint32_t unexpand(const att_ctx *c, uint32_t t) {
    uint32_t p = c->m->tensors[t].producer;
    if (p != IR_NONE && c->m->nodes[p].op == IR_OP_EXPAND && c->m->nodes[p].n_in >= 1 &&
        c->m->tensors[c->m->nodes[p].in[0]].dtype == c->m->tensors[t].dtype)
        return c->m->nodes[p].in[0];
    return t;
}

/* t without the bool-to-bool casts and expands in front of it */
static uint32_t strip_bool(const att_ctx *c, uint32_t t) {
    for (int hops = 0; hops < 8; hops++) {
        uint32_t u = unexpand(c, t), p = c->m->tensors[u].producer;
        if (p != IR_NONE && c->m->nodes[p].op == IR_OP_CAST && c->m->nodes[p].n_in == 1 &&
            c->m->tensors[c->m->nodes[p].in[0]].dtype == SYMC_BOOL)
            u = c->m->nodes[p].in[0];
        if (u == t) break;
        t = u;
    }
    return t;
}

/* the leaves of bool condition t (an and-tree of expands, casts, causal
 * comparisons and bool tensors viewed against the score); constant-true
 * scalars drop out. 1 when every leaf is a causal comparison or a view
 * shared by every row or by every key of a row (reading them beats reading
 * the materialized condition), else 0. */
static int cond_leaves(const att_ctx *c, uint32_t t, const ir_tensor *score, ir_att_op *op, int depth) {
    t = strip_bool(c, t);
    const ir_tensor *x = &c->m->tensors[t];
    if (x->dtype != SYMC_BOOL || depth > 4) return 0;
    uint32_t p = x->producer;
    if (p != IR_NONE && c->m->nodes[p].op == IR_OP_AND && c->m->nodes[p].n_in == 2)
        return cond_leaves(c, c->m->nodes[p].in[0], score, op, depth + 1) &&
            cond_leaves(c, c->m->nodes[p].in[1], score, op, depth + 1);
    if (x->constant != IR_NONE) { /* a constant scalar true drops out; anything else stays a tensor */
        const ir_constant *k = &c->m->constants[x->constant];
        int all_one = 1;
        for (int d = 0; d < x->rank; d++) all_one &= is_one(c, x->dims[d]);
        if (all_one && k->size >= 1 && k->data[0] != 0) return 1;
    }
    if (op->n_leaf >= IR_ATT_MAX_LEAF) return 0;
    ir_att_leaf *l = &op->leaf[op->n_leaf];
    int rel = causal_rel(c, t, score);
    if (rel) {
        l->kind = rel == 1 ? IR_ATT_LEAF_K_GT_Q : IR_ATT_LEAF_K_LE_Q;
        op->n_leaf++;
        return 1;
    }
    if (!mask_view(c, t, score, &l->v) || !shared_view(c, &l->v)) return 0;
    l->kind = IR_ATT_LEAF_VIEW;
    op->n_leaf++;
    return 1;
}

/* An additive mask materialized as [B, 1, S, S] whose values are the same
 * for every query row or for every key of a row, or made from such pieces
 * and a causal comparison: Hugging Face's masks (transformers 5 expands a
 * [B, 1, 1, S] or [1, 1, S, 1] condition, or and(causal, padding), then
 * where(cond, 0, min)). Read through the expand (IR_ATT_ADD_MASK on its input)
 * or through the where with scalar values to the leaves of its condition
 * (IR_ATT_ADD_SEL), the mask costs the half kernel a read per key tile or per
 * row and a compare, not a read per score. Only taken when every piece is
 * shared or causal. */
static int mask_lookthrough(const att_ctx *c, uint32_t t, const ir_tensor *score, ir_att_op *op) {
    ir_att_view v;
    uint32_t src = unexpand(c, t);
    if (src != t && mask_view(c, src, score, &v) && shared_view(c, &v)) {
        op->kind = IR_ATT_ADD_MASK;
        op->mask = v;
        return 1;
    }
    uint32_t p = c->m->tensors[t].producer;
    if (p == IR_NONE) return 0;
    const ir_node *w = &c->m->nodes[p];
    if (w->op != IR_OP_WHERE || w->n_in != 3 || w->n_out != 1 || c->m->tensors[w->in[0]].dtype != SYMC_BOOL ||
        !is_scalar(c, w->in[1]) || !is_scalar(c, w->in[2]) || c->m->tensors[w->in[1]].dtype != c->m->tensors[t].dtype ||
        c->m->tensors[w->in[2]].dtype != c->m->tensors[t].dtype)
        return 0;
    op->n_leaf = 0; /* op is the caller's scratch copy: left as it is on failure */
    if (!cond_leaves(c, w->in[0], score, op, 0)) return 0;
    op->kind = IR_ATT_ADD_SEL;
    op->scalar = w->in[1];
    op->scalar2 = w->in[2];
    return 1;
}

/* one chain node: x is the chain's tensor entering node `node` */
static int classify(const att_ctx *c, uint32_t node, uint32_t x, const ir_tensor *score, ir_att_op *op) {
    const ir_node *n = &c->m->nodes[node];
    memset(op, 0, sizeof *op);
    op->node = node;
    op->scalar = op->scalar2 = IR_NONE;
    if (n->n_out != 1 || !ir_same_shape(&c->m->tensors[n->out[0]], score) ||
        c->m->tensors[n->out[0]].dtype != score->dtype)
        return 0;
    if (n->op == IR_OP_MUL || n->op == IR_OP_ADD || n->op == IR_OP_DIV) {
        if (n->n_in != 2 || n->in[0] == n->in[1]) return 0;
        uint32_t other = n->in[0] == x ? n->in[1] : n->in[0];
        if (n->op == IR_OP_DIV && n->in[0] != x) return 0;
        if (is_scalar(c, other)) {
            op->kind = n->op == IR_OP_MUL ? IR_ATT_MUL : n->op == IR_OP_DIV ? IR_ATT_DIV : IR_ATT_ADD;
            op->scalar = other;
            return 1;
        }
        if (n->op != IR_OP_ADD || c->m->tensors[other].dtype != score->dtype) return 0;
        op->kind = IR_ATT_ADD_MASK;
        if (!mask_view(c, other, score, &op->mask)) return 0;
        if (!shared_view(c, &op->mask)) {
            ir_att_op alt = *op;
            if (mask_lookthrough(c, other, score, &alt)) *op = alt;
        }
        return 1;
    }
    if (n->op == IR_OP_WHERE && n->n_in == 3) {
        uint32_t cond = n->in[0];
        if (cond == x || c->m->tensors[cond].dtype != SYMC_BOOL) return 0;
        if (n->in[1] == x && n->in[2] != x) op->chain_is_true = 1, op->scalar = n->in[2];
        else if (n->in[2] == x && n->in[1] != x) op->chain_is_true = 0, op->scalar = n->in[1];
        else return 0;
        if (!is_scalar(c, op->scalar)) return 0;
        if (causal_cond(c, cond, score)) {
            op->kind = IR_ATT_WHERE_CAUSAL;
            op->mask.t = cond;
            return 1;
        }
        op->kind = IR_ATT_WHERE;
        if (!mask_view(c, cond, score, &op->mask)) return 0;
        ir_att_view v;
        if (!shared_view(c, &op->mask) && unexpand(c, cond) != cond && mask_view(c, unexpand(c, cond), score, &v) &&
            shared_view(c, &v))
            op->mask = v; /* read through the expand */
        return 1;
    }
    return 0;
}

/* an identity or a cast between float storage types (f32, f16, bf16), one input
 * and one output: transformers' softmax(...).type(value.dtype), or the precision
 * pass's cast of fp32 probabilities to half. The kernel keeps P in fp32. */
static int is_noop(const att_ctx *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    if (n->n_in != 1 || n->n_out != 1) return 0;
    return n->op == IR_OP_IDENTITY ||
        (n->op == IR_OP_CAST && att_dtype(c->m->tensors[n->in[0]].dtype) && att_dtype(c->m->tensors[n->out[0]].dtype));
}

/* A scale on Q or on Kᵀ before the score matmul (timm's `q = q * self.scale`): t's private producer
 * multiplies a tensor of t's shape and dtype by a scalar (or divides it by one). *op is the score
 * function's op it becomes, (s·Q)·Kᵀ = s·(Q·Kᵀ); *t the scaled tensor. The kernel computes the
 * product in fp32 and scales it there, so a half Q is not rounded once more after the scale (the
 * same or more accurate; exact for a power of two). Behind the precision pass's widening cast
 * (*cast: it goes too, and the kernel reads the half storage) when there is one. */
static int peel_scale(const att_ctx *c, uint32_t *t, ir_att_op *op, uint32_t *cast) {
    uint32_t p = c->m->tensors[*t].producer, in = *t;
    if (p == IR_NONE || !ir_uses_private(c->uses, in)) return 0;
    *cast = IR_NONE;
    if (is_widening(c, &c->m->nodes[p])) { /* the precision pass's cast in front of fp32 logits */
        *cast = p;
        in = c->m->nodes[p].in[0];
        p = c->m->tensors[in].producer;
        if (p == IR_NONE || !ir_uses_private(c->uses, in)) return 0;
    }
    const ir_node *n = &c->m->nodes[p];
    if ((n->op != IR_OP_MUL && n->op != IR_OP_DIV) || n->n_in != 2 || n->n_out != 1 || n->in[0] == n->in[1]) return 0;
    int k = is_scalar(c, n->in[1]) ? 1 : n->op == IR_OP_MUL && is_scalar(c, n->in[0]) ? 0 : -1;
    if (k < 0) return 0;
    uint32_t x = n->in[1 - k];
    const ir_tensor *xt = &c->m->tensors[x], *ot = &c->m->tensors[in];
    if (!ir_same_shape(xt, ot) || xt->dtype != ot->dtype) return 0;
    memset(op, 0, sizeof *op);
    op->node = p;
    op->kind = n->op == IR_OP_MUL ? IR_ATT_MUL : IR_ATT_DIV;
    op->scalar = n->in[k];
    op->scalar2 = IR_NONE;
    *t = x;
    return 1;
}

/* Swin's shifted-window mask (torchvision's shifted_window_attention): the scores [B * W, H, Sq,
 * Sk] viewed as [B, W, H, Sq, Sk], a mask added whose dims (right aligned) are 1 on B and the
 * view's or 1 on the rest (torchvision's [1, W, 1, Sq, Sk]), and viewed back. Score row b0 lies
 * in window b0 mod W, so the kernel reads the mask as [W, H, Sq, Sk] at b0 mod W. When x's
 * private producer is the view back, *w is the pattern: the add, both views, the tensor the first
 * view reads (score-shaped: the chain goes on from it) and the mask. */
typedef struct att_window {
    uint32_t add, view5, view4; /* the add, the view to 5-D, the view back to the score's shape */
    uint32_t in, mask;          /* the first view's input; the add's other operand */
    sym_expr windows;           /* W */
} att_window;

static int window_add(const att_ctx *c, uint32_t x, att_window *w) {
    ir_module *m = c->m;
    uint32_t r4 = m->tensors[x].producer;
    if (r4 == IR_NONE || m->nodes[r4].op != IR_OP_RESHAPE || m->nodes[r4].n_out != 1) return 0;
    uint32_t y = m->nodes[r4].in[0];
    const ir_tensor *xt = &m->tensors[x], *yt = &m->tensors[y];
    if (xt->rank != 4 || yt->rank != 5 || yt->dtype != xt->dtype || !ir_uses_private(c->uses, y) ||
        sym_prove_eq(m->syms, sym_mul(m->syms, yt->dims[0], yt->dims[1]), xt->dims[0]) != SYM_TRUE)
        return 0;
    for (int d = 1; d < 4; d++)
        if (yt->dims[d + 1] != xt->dims[d]) return 0;
    uint32_t add = yt->producer;
    if (add == IR_NONE || m->nodes[add].op != IR_OP_ADD || m->nodes[add].n_in != 2 || m->nodes[add].n_out != 1)
        return 0;
    for (int k = 0; k < 2; k++) {
        uint32_t z = m->nodes[add].in[k], mk = m->nodes[add].in[1 - k], r5 = m->tensors[z].producer;
        if (z == mk || r5 == IR_NONE || m->nodes[r5].op != IR_OP_RESHAPE || !ir_uses_private(c->uses, z)) continue;
        uint32_t in = m->nodes[r5].in[0];
        const ir_tensor *zt = &m->tensors[z], *it = &m->tensors[in], *mt = &m->tensors[mk];
        if (!ir_same_shape(zt, yt) || zt->dtype != yt->dtype || !ir_same_shape(it, xt) || it->dtype != xt->dtype ||
            mt->dtype != xt->dtype || mt->rank < 1 || mt->rank > 5)
            continue;
        int ok = 1;
        for (int i = 0; i < mt->rank && ok; i++) {
            int p = i + 5 - mt->rank; /* its place in [B, W, H, Sq, Sk] */
            ok = is_one(c, mt->dims[i]) || (p > 0 && mt->dims[i] == yt->dims[p]);
        }
        if (!ok) continue;
        *w = (att_window){.add = add, .view5 = r5, .view4 = r4, .in = in, .mask = mk, .windows = yt->dims[1]};
        return 1;
    }
    return 0;
}

/* the window pattern's add as a chain op: the mask as [W, H, Sq, Sk] (size-1 dims at stride 0),
 * read at b0 mod W */
static void classify_window(const att_ctx *c, const att_window *w, ir_att_op *op) {
    memset(op, 0, sizeof *op);
    op->node = w->add;
    op->scalar = op->scalar2 = IR_NONE;
    op->kind = IR_ATT_ADD_MASK;
    op->windowed = 1;
    op->windows = w->windows;
    const ir_tensor *mt = &c->m->tensors[w->mask];
    ir_att_view *v = &op->mask;
    v->t = w->mask;
    v->off = 0;
    for (int d = 0; d < 4; d++) {       /* frame place d + 1 of [B, W, H, Sq, Sk] */
        int i = d + 1 - (5 - mt->rank); /* the mask's own dim there, if any */
        if (i < 0 || is_one(c, mt->dims[i])) {
            v->dims[d] = sym_const(c->m->syms, 1);
            v->strides[d] = sym_const(c->m->syms, 0);
        } else {
            v->dims[d] = mt->dims[i];
            v->strides[d] = prod(c, mt->dims, i + 1, mt->rank);
        }
    }
}

static int plan(const att_ctx *c, uint32_t mm2, ir_attention *a) {
    memset(a, 0, sizeof *a);
    const ir_node *n2 = &c->m->nodes[mm2];
    if (n2->op != IR_OP_MATMUL || n2->n_in != 2 || n2->n_out != 1) return 0;
    uint32_t p = n2->in[0], vt = n2->in[1];
    uint32_t sm = c->m->tensors[p].producer;
    /* P may reach the product through private no-ops: an identity, or a cast
     * to the dtype it has (transformers' softmax(..).type(value.dtype)) */
    uint32_t noop[2], n_noop = 0;
    while (sm != IR_NONE && n_noop < 2 && ir_uses_private(c->uses, p) && is_noop(c, sm)) {
        noop[n_noop++] = sm;
        p = c->m->nodes[sm].in[0];
        sm = c->m->tensors[p].producer;
    }
    if (sm == IR_NONE || c->m->nodes[sm].op != IR_OP_SOFTMAX || !ir_uses_private(c->uses, p) || p == vt) return 0;
    for (uint32_t i = 0; i < n_noop; i++)
        if (!cover(a, noop[i])) return 0;
    a->zero_masked = attr_int(&c->m->nodes[sm], "zero_masked_rows", 0) != 0;
    const ir_tensor *pt = &c->m->tensors[p];
    int rank = pt->rank;
    int64_t axis;
    if (rank < 2 || rank > 4 || !att_dtype(pt->dtype) ||
        !ir_axis_norm(attr_int(&c->m->nodes[sm], "axis", -1), rank, &axis) || axis != rank - 1)
        return 0;
    /* the score function chain, back from the softmax input */
    uint32_t x = c->m->nodes[sm].in[0];
    uint32_t chain[IR_ATT_MAX_CHAIN + 1], chain_in[IR_ATT_MAX_CHAIN + 1];
    att_window win[IR_ATT_MAX_CHAIN + 1];
    uint32_t n_chain = 0;
    for (;;) {
        uint32_t q = c->m->tensors[x].producer;
        if (q == IR_NONE || !ir_uses_private(c->uses, x)) return 0;
        if (c->m->nodes[q].op == IR_OP_MATMUL) break;
        if (n_chain == IR_ATT_MAX_CHAIN) return 0;
        win[n_chain].add = IR_NONE;
        if (window_add(c, x, &win[n_chain])) { /* Swin's per-window mask between two views */
            chain[n_chain] = win[n_chain].add;
            chain_in[n_chain] = win[n_chain].in;
            x = win[n_chain++].in;
            continue;
        }
        const ir_node *e = &c->m->nodes[q];
        /* the chain continues through the operand a matmul (else an elementwise node) makes privately */
        uint32_t next = IR_NONE;
        for (uint32_t k = e->op == IR_OP_WHERE ? 1 : 0; k < e->n_in; k++) {
            uint32_t t = e->in[k], tp = c->m->tensors[t].producer;
            if (is_scalar(c, t) || tp == IR_NONE || !ir_uses_private(c->uses, t)) continue;
            if (c->m->nodes[tp].op == IR_OP_MATMUL) {
                next = t;
                break;
            }
            if (ir_op_is_elementwise(c->m->nodes[tp].op) && next == IR_NONE) next = t;
        }
        if (next == IR_NONE) return 0;
        chain[n_chain] = q;
        chain_in[n_chain++] = next;
        x = next;
    }
    uint32_t mm1 = c->m->tensors[x].producer;
    const ir_node *n1 = &c->m->nodes[mm1];
    if (n1->n_in != 2 || n1->n_out != 1) return 0;
    const ir_tensor *score = &c->m->tensors[x];
    if (!ir_same_shape(score, pt) || score->dtype != pt->dtype) return 0;
    a->mm1 = mm1;
    a->mm2 = mm2;
    a->softmax = sm;
    /* the operands, behind a scale of Q or Kᵀ: the score function's first ops */
    uint32_t qin = n1->in[0], bin = n1->in[1], n_pre = 0, casts[2];
    if (n_chain < IR_ATT_MAX_CHAIN && peel_scale(c, &qin, &a->ops[n_pre], &casts[n_pre])) n_pre++;
    if (n_chain + n_pre < IR_ATT_MAX_CHAIN && peel_scale(c, &bin, &a->ops[n_pre], &casts[n_pre])) n_pre++;
    /* chain ops in evaluation order: from the score to the softmax input */
    for (uint32_t i = 0; i < n_chain; i++) {
        uint32_t j = n_chain - 1 - i;
        ir_att_op *op = &a->ops[n_pre + i];
        if (win[j].add != IR_NONE) classify_window(c, &win[j], op);
        else if (!classify(c, chain[j], chain_in[j], score, op)) return 0;
        if (op->kind == IR_ATT_WHERE_CAUSAL) {
            double v;
            a->causal_skip = i == n_chain - 1 && !op->chain_is_true && scalar_value(c, op->scalar, &v) && v <= -1e8;
        }
    }
    a->n_ops = n_pre + n_chain;
    /* operands */
    const ir_tensor *qt = &c->m->tensors[qin], *bt = &c->m->tensors[bin];
    const ir_tensor *vv = &c->m->tensors[vt], *ot = &c->m->tensors[n2->out[0]];
    if (qt->rank != rank || bt->rank != rank || vv->rank != rank || ot->rank != rank || !att_dtype(qt->dtype) ||
        !att_dtype(bt->dtype) || !att_dtype(vv->dtype) || !att_dtype(ot->dtype) || qin == bin)
        return 0;
    a->qdt = qt->dtype, a->kdt = bt->dtype, a->vdt = vv->dtype, a->odt = ot->dtype;
    for (int d = 0; d < rank - 2; d++)
        if (qt->dims[d] != score->dims[d] || bt->dims[d] != score->dims[d] || vv->dims[d] != score->dims[d]) return 0;
    if (!sym_is_const(c->m->syms, qt->dims[rank - 1], &a->d) || !sym_is_const(c->m->syms, vv->dims[rank - 1], &a->dv) ||
        a->d < 4 || a->d > c->max_head || a->d % 4 || a->dv < 4 || a->dv > c->max_head || a->dv % 4 ||
        vv->dims[rank - 2] != score->dims[rank - 1])
        return 0;
    if (!cover(a, mm1) || !cover(a, sm)) return 0;
    for (uint32_t i = 0; i < n_chain; i++)
        if (!cover(a, chain[i]) || (win[i].add != IR_NONE && (!cover(a, win[i].view5) || !cover(a, win[i].view4))))
            return 0;
    for (uint32_t i = 0; i < n_pre; i++)
        if (!cover(a, a->ops[i].node) || (casts[i] != IR_NONE && !cover(a, casts[i]))) return 0;
    /* a recognized causal condition needs no memory: its node goes too when private */
    for (uint32_t i = 0; i < a->n_ops; i++)
        if (a->ops[i].kind == IR_ATT_WHERE_CAUSAL && ir_uses_private(c->uses, a->ops[i].mask.t) &&
            !cover(a, c->m->tensors[a->ops[i].mask.t].producer))
            return 0;
    if (!read_view(c, qin, a, &a->q) || !read_view(c, bin, a, &a->k) || !read_view(c, vt, a, &a->v) ||
        !write_view(c, n2->out[0], a, &a->o))
        return 0;
    if (!cover_splits(c, a)) return 0;
    /* the storage read, behind a widening cast */
    a->qdt = c->m->tensors[a->q.t].dtype, a->kdt = c->m->tensors[a->k.t].dtype, a->vdt = c->m->tensors[a->v.t].dtype;
    /* B is [.., D, Sk]: K is its last two axes swapped */
    sym_expr t0 = a->k.dims[2], t1 = a->k.strides[2];
    a->k.dims[2] = a->k.dims[3], a->k.strides[2] = a->k.strides[3];
    a->k.dims[3] = t0, a->k.strides[3] = t1;
    a->sq = score->dims[rank - 2];
    a->sk = score->dims[rank - 1];
    a->n0 = rank == 4 ? score->dims[0] : sym_const(c->m->syms, 1);
    a->n1 = rank >= 3 ? score->dims[rank - 3] : sym_const(c->m->syms, 1);
    return 1;
}

/* Every tensor the kernel reads (the scalars that are not literals too), each once, into
 * reads (at most cap); 0 when there are more. */
static uint32_t plan_reads(const att_ctx *c, const ir_attention *a, uint32_t *reads, uint32_t cap) {
    uint32_t all[3 + IR_ATT_MAX_CHAIN * (3 + IR_ATT_MAX_LEAF)], n = 0;
    all[n++] = a->q.t, all[n++] = a->k.t, all[n++] = a->v.t;
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const ir_att_op *o = &a->ops[i];
        double v;
        if (o->scalar != IR_NONE && !scalar_value(c, o->scalar, &v)) all[n++] = o->scalar;
        if (o->scalar2 != IR_NONE && !scalar_value(c, o->scalar2, &v)) all[n++] = o->scalar2;
        if (o->kind == IR_ATT_ADD_MASK || o->kind == IR_ATT_WHERE) all[n++] = o->mask.t;
        for (uint32_t j = 0; o->kind == IR_ATT_ADD_SEL && j < o->n_leaf; j++)
            if (o->leaf[j].kind == IR_ATT_LEAF_VIEW) all[n++] = o->leaf[j].v.t;
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < m && !seen; j++) seen = reads[j] == all[i];
        if (seen) continue;
        if (m == cap) return 0;
        reads[m++] = all[i];
    }
    return m;
}

int pass_attention_match(ir_module *m, const ir_uses *u, uint32_t node, int64_t max_head, ir_attention *a,
                         uint32_t *reads, uint32_t *n_reads) {
    att_ctx c = {.m = m, .uses = u, .max_head = max_head};
    uint32_t all[PASS_ATTENTION_READS], n_all;
    *n_reads = 0;
    if (!plan(&c, node, a) || !(n_all = plan_reads(&c, a, all, PASS_ATTENTION_READS))) return 0;
    /* the reads that are no claimed node's input (nor the matmul's) come through nodes the kernel
     * does not compute: the fuse pass must keep them stored */
    for (uint32_t i = 0; i < n_all; i++) {
        int edge = 0;
        for (uint32_t j = 0; j <= a->n_covered && !edge; j++) {
            const ir_node *n = &m->nodes[j < a->n_covered ? a->covered[j] : node];
            for (uint32_t k = 0; k < n->n_in && !edge; k++) edge = n->in[k] == all[i];
        }
        if (!edge) reads[(*n_reads)++] = all[i];
    }
    return 1;
}

int pass_attention_literal(const ir_module *m, uint32_t t, double *out) {
    att_ctx c = {.m = (ir_module *)m};
    return scalar_value(&c, t, out);
}

/* ---- the round ------------------------------------------------------------------------------ */
static ir_fuse_role role(const ir_module *m, uint32_t i) { return (ir_fuse_role)m->fuse[i].role; }

symc_status pass_fuse_attention(ir_module *m, ir_uses *u, const pass_fuse_rules *r, symc_error *err) {
    if (!r->attention_max_head) return SYMC_OK;
    uint32_t reads[PASS_ATTENTION_READS];
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        /* a node another attention computes is not a root again (nothing but dead marks and
         * attentions are decided yet) */
        ir_fuse_role ri = role(m, i);
        if ((!ir_fuse_is_root(ri) && ri != IR_FUSE_INLINED) || m->nodes[i].op != IR_OP_MATMUL) continue;
        uint32_t n_reads = 0;
        ir_attention a;
        if (!pass_attention_match(m, u, i, r->attention_max_head, &a, reads, &n_reads)) continue;
        int clash = n_reads > PASS_ATTENTION_READS;
        for (uint32_t j = 0; j < a.n_covered && !clash; j++)
            clash = a.covered[j] == i || role(m, a.covered[j]) != IR_FUSE_STEP;
        /* what it reads past its own nodes must be made by a node that stores it: not one
         * another attention computes inside its kernel */
        for (uint32_t j = 0; j < n_reads && !clash; j++) {
            uint32_t p = reads[j] < u->n_tensors ? m->tensors[reads[j]].producer : IR_NONE;
            clash = reads[j] >= u->n_tensors || (p != IR_NONE && role(m, p) != IR_FUSE_STEP);
        }
        if (clash) continue;
        symc_status st = ir_fuse_add_attention(m, &a, err);
        if (st) return st;
        for (uint32_t j = 0; j < a.n_covered; j++) m->fuse[a.covered[j]] = (ir_fuse){IR_FUSE_CLAIMED, i};
        m->fuse[i] = (ir_fuse){IR_FUSE_ATTENTION, i};
        /* the kernel is one more reader of those tensors: they are no longer private to their
         * one reader in the graph, so no later round computes them inside its kernel and
         * leaves them unstored (the attention would read memory nothing wrote) */
        for (uint32_t j = 0; j < n_reads; j++) u->n_consumers[reads[j]]++;
    }
    return SYMC_OK;
}
