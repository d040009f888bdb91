/* Fused attention: softmax(f(Q·Kᵀ))·V as one flash-attention kernel.
 *
 * Recognition (plan; cg_attention_claims answers the fuse pass with the
 * nodes it claims, and emission recognizes the pattern again for the views,
 * checking it against the plan) starts at a matmul O = P·V whose A operand
 * P is the private result of a softmax over the last axis, and walks back
 * from the softmax input through a private chain of at most six
 * elementwise nodes to the score matmul S = Q·B: the chain is the "score
 * function" f, each node one of
 *   - mul / div by a scalar (a literal when constant: the 1/sqrt(d) scale),
 *   - add of a scalar or of a mask broadcast to [.., Sq, Sk] (each mask dim
 *     the score's or the constant 1),
 *   - where(cond, a, b) with the chain on one side and a scalar on the other;
 *     cond is a bool mask like the above, or a causal mask recognized from
 *     its structure: greater(cols, rows) / less(rows, cols) where rows and
 *     cols are views of one range with a positive constant step, so masked
 *     means key > query and needs no memory at all.
 * Every intermediate is private (one consumer, not a graph output). Q, B
 * and V are followed back through private transposes and one private
 * widening cast from f16/bf16 to f32 (the precision pass's in front of fp32
 * logits when Q and K are stored in half: the kernel reads the half storage,
 * whose f32 values are exact, and keeps the logits in fp32 as the graph
 * says; see passes/precision.c attention_logits) (and the score's B is
 * read with its last two axes swapped), and O forward through a private
 * transpose, so the head split and merge of a transformer cost nothing: the
 * kernel reads [B, S, H, D] storage with strides and writes O straight into
 * the merged layout. Batch dims must be the same expressions in Q, K, V and
 * the score (no broadcasting), the head dims D and Dv constants that are
 * multiples of 4 and at most 128; anything else stays unfused.
 *
 * The kernel (one per fused attention) is flash attention with fp32
 * softmax state and accumulation, in one of three forms:
 *   - half tensor cores (emit_h16_body) when Q, K and V are stored in one
 *     half type with head dims multiples of 16: mma.sync m16n8k16 in f16 or
 *     bf16, 128 query rows a block, cp.async double buffering, P rounded to
 *     the half type (as every flash attention does);
 *   - TF32 tensor cores (emit_mma_body) from sm_80 when the head dims are
 *     multiples of 8: 3xTF32 for fp32 engines (about fp32 accuracy);
 *   - SIMT fp32 (emit_simt_body) otherwise, described here:
 * a block of 256 threads owns 64 query rows of
 * one batch index and loops over 64-key tiles. Q's tile stays in shared
 * memory; K and V tiles are staged row-major with padded rows. Each thread
 * holds a 4x4 block of the score tile (rows ty*4+i, keys tx+16j: float4
 * reads of both operands, conflict-free), applies f and the bounds, takes
 * the running row max over its 16 lanes with shuffles, rescales its output
 * accumulators (4 rows x 4 or 8 columns), and hands the probabilities to
 * the P·V product through shared memory. Rows that are fully masked by -inf
 * give NaN, like the unfused softmax, or zeros when the softmax says
 * zero_masked_rows (torch's attention; such a row's sum L is 0); a causal mask whose masked value is
 * -inf (or below -1e8, which exp turns into 0 as well) also skips the key
 * tiles past the block's last query row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cuda_emit.h"

#define ATT_MAX_CHAIN 6
#define ATT_MAX_HEAD 128
#define ATT_TILE 64

/* a rank-4 strided view [b0, b1, rows, cols] of tensor t's storage */
typedef struct att_view {
    uint32_t t;
    sym_expr dims[4], strides[4];
} att_view;

typedef enum att_kind {
    ATT_MUL,         /* v * scalar */
    ATT_DIV,         /* v / scalar */
    ATT_ADD,         /* v + scalar */
    ATT_ADD_MASK,    /* v + mask[b0, b1, q, k] */
    ATT_WHERE,       /* mask ? (chain or scalar) : (scalar or chain) */
    ATT_ADD_SEL,     /* v + (leaf && leaf ... ? scalar : scalar2): an additive mask made by where(cond, a, b),
                        read through the where, expands and ands to the leaves of its bool condition */
    ATT_WHERE_CAUSAL /* (k > q) ? ... */
} att_kind;

/* a leaf of an ATT_ADD_SEL condition: a bool view, or a causal comparison */
typedef enum att_leaf_kind { LEAF_VIEW, LEAF_K_GT_Q, LEAF_K_LE_Q } att_leaf_kind;
typedef struct att_leaf {
    att_leaf_kind kind;
    att_view v; /* LEAF_VIEW */
} att_leaf;
#define ATT_MAX_LEAF 4

typedef struct att_op {
    att_kind kind;
    uint32_t node;
    uint32_t scalar;             /* scalar tensor (RT_NONE: none) */
    uint32_t scalar2;            /* ATT_ADD_SEL: the value where the condition is false */
    int chain_is_true;           /* where: the chain is the value taken where cond holds */
    att_view mask;               /* ATT_ADD_MASK / ATT_WHERE */
    att_leaf leaf[ATT_MAX_LEAF]; /* ATT_ADD_SEL: the condition is the and of these (none: true) */
    uint32_t n_leaf;
} att_op;

typedef struct att_plan {
    uint32_t mm1, mm2, softmax;
    att_view q, k, v, o;
    sym_expr sq, sk, n0, n1;
    int64_t d, dv;
    att_op ops[ATT_MAX_CHAIN]; /* from the score to the softmax input */
    uint32_t n_ops;
    int causal_skip;
    int zero_masked; /* the softmax's zero_masked_rows: a fully masked row gives zeros (L == 0), not NaN */
    /* storage of Q, K, V and O (each f32, f16 or bf16; the kernel computes in fp32 and
     * keeps scores and probabilities in fp32 whatever the graph stores them as) */
    symc_dtype qdt, kdt, vdt, odt;
    uint32_t covered[64];
    uint32_t n_covered;
} att_plan;

static int cover(att_plan *a, uint32_t node) {
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
static void contiguous_view(cg_cuda *c, uint32_t t, att_view *v) {
    const ir_tensor *x = &c->m->tensors[t];
    int pad = 4 - x->rank;
    v->t = t;
    for (int d = 0; d < 4; d++) {
        if (d < pad) {
            v->dims[d] = sym_const(c->m->syms, 1);
            v->strides[d] = sym_const(c->m->syms, 0);
        } else {
            v->dims[d] = x->dims[d - pad];
            v->strides[d] = cg_prod(c, x->dims, d - pad + 1, x->rank);
        }
    }
}

/* the transpose node's permutation, when it is a plain one of rank r */
static const int64_t *perm_of(cg_cuda *c, const ir_node *n, int r) {
    const ir_attr *p = ir_node_attr(n, "perm");
    if (!p || p->kind != IR_ATTR_INTS || p->n != (uint32_t)r) return NULL;
    for (int d = 0; d < r; d++)
        if (p->ints[d] < 0 || p->ints[d] >= r) return NULL;
    (void)c;
    return p->ints;
}

/* a cast from f16 or bf16 to f32: exact, so the kernel may read its input instead */
static int is_widening(cg_cuda *c, const ir_node *n) {
    return n->op == IR_OP_CAST && n->n_in == 1 && n->n_out == 1 && cg_is_half(c->m->tensors[n->in[0]].dtype) &&
        c->m->tensors[n->out[0]].dtype == SYMC_F32;
}

/* Tensor t (rank 2..4) as a strided view of the storage behind the private
 * transposes that produce it, and behind a private widening cast (the
 * precision pass's in front of fp32 logits: Q and K stored in half); those
 * nodes are covered. */
static int read_view(cg_cuda *c, uint32_t t, att_plan *a, att_view *v) {
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
    att_view b;
    contiguous_view(c, base, &b);
    int pad = 4 - r;
    *v = b;
    for (int d = 0; d < r; d++) {
        v->dims[pad + d] = b.dims[pad + perm[d]];
        v->strides[pad + d] = b.strides[pad + perm[d]];
    }
    return 1;
}

/* O (= t) written through the private transposes that consume it: the
 * storage is the last transpose's output. */
static int write_view(cg_cuda *c, uint32_t t, att_plan *a, att_view *v) {
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
    att_view b;
    contiguous_view(c, dst, &b);
    int pad = 4 - r;
    v->t = dst;
    for (int d = 0; d < 4; d++) v->dims[d] = v->strides[d] = sym_const(c->m->syms, d < pad ? 1 : 0);
    for (int d = 0; d < r; d++) {
        v->dims[pad + d] = c->m->tensors[t].dims[d];
        v->strides[pad + d] = b.strides[pad + pos[d]];
    }
    return 1;
}

static int is_one(cg_cuda *c, sym_expr e) {
    int64_t v;
    return sym_is_const(c->m->syms, e, &v) && v == 1;
}

/* the dtypes the kernel reads and writes (computing in fp32) */
static int att_dtype(symc_dtype dt) { return dt == SYMC_F32 || cg_is_half(dt); }

static int is_scalar(cg_cuda *c, uint32_t t) {
    const ir_tensor *x = &c->m->tensors[t];
    if (!att_dtype(x->dtype)) return 0;
    for (int d = 0; d < x->rank; d++)
        if (!is_one(c, x->dims[d])) return 0;
    return 1;
}

/* mask t broadcast to the score's [n0, n1, sq, sk]: each of its dims (right
 * aligned) is the score's or 1 (stride 0) */
static int mask_view(cg_cuda *c, uint32_t t, const ir_tensor *score, att_view *v) {
    const ir_tensor *x = &c->m->tensors[t];
    if (x->rank > score->rank) return 0;
    att_view b;
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

static uint32_t view_root(cg_cuda *c, uint32_t t) {
    for (int hops = 0; hops < 8; hops++) {
        uint32_t p = c->m->tensors[t].producer;
        if (p == IR_NONE || !is_view_op(c->m->nodes[p].op)) break;
        t = c->m->nodes[p].in[0];
    }
    return t;
}

/* 1 when the last dim is 1 and others are not all 1 (varies along rows),
 * 2 when it varies along the last axis only, 0 otherwise */
static int axis_role(cg_cuda *c, const ir_tensor *x) {
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
static int range_of(cg_cuda *c, uint32_t t, int64_t *start, int64_t *step) {
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
static int causal_rel(cg_cuda *c, uint32_t cond, const ir_tensor *score) {
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
static int causal_cond(cg_cuda *c, uint32_t cond, const ir_tensor *score) { return causal_rel(c, cond, score) == 1; }

/* the constant value of scalar tensor t, when it is one */
static int scalar_value(cg_cuda *c, uint32_t t, double *out) {
    const ir_tensor *x = &c->m->tensors[t];
    if (x->constant == IR_NONE || !att_dtype(x->dtype)) return 0;
    const ir_constant *k = &c->m->constants[x->constant];
    if (k->size < symc_dtype_size(x->dtype)) return 0;
    *out = symc_dtype_load(k->data, x->dtype, 0);
    return 1;
}

static int row_shared_view(cg_cuda *c, const att_view *v) {
    int64_t z;
    return sym_is_const(c->m->syms, v->strides[2], &z) && z == 0;
}

/* the mask is the same for every key of a query row (key stride 0) */
static int key_shared_view(cg_cuda *c, const att_view *v) {
    int64_t z;
    return sym_is_const(c->m->syms, v->strides[3], &z) && z == 0;
}

static int shared_view(cg_cuda *c, const att_view *v) { return row_shared_view(c, v) || key_shared_view(c, v); }

/* t itself, or the input of the expand that makes t (expand only repeats
 * values: reading its input through the broadcast view is the same) */
static uint32_t unexpand(cg_cuda *c, uint32_t t) {
    uint32_t p = c->m->tensors[t].producer;
    if (p != IR_NONE && c->m->nodes[p].op == IR_OP_EXPAND && c->m->nodes[p].n_in >= 1 &&
        c->m->tensors[c->m->nodes[p].in[0]].dtype == c->m->tensors[t].dtype)
        return c->m->nodes[p].in[0];
    return t;
}

/* t without the bool-to-bool casts and expands in front of it */
static uint32_t strip_bool(cg_cuda *c, uint32_t t) {
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
static int cond_leaves(cg_cuda *c, uint32_t t, const ir_tensor *score, att_op *op, int depth) {
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
    if (op->n_leaf >= ATT_MAX_LEAF) return 0;
    att_leaf *l = &op->leaf[op->n_leaf];
    int rel = causal_rel(c, t, score);
    if (rel) {
        l->kind = rel == 1 ? LEAF_K_GT_Q : LEAF_K_LE_Q;
        op->n_leaf++;
        return 1;
    }
    if (!mask_view(c, t, score, &l->v) || !shared_view(c, &l->v)) return 0;
    l->kind = LEAF_VIEW;
    op->n_leaf++;
    return 1;
}

/* An additive mask materialized as [B, 1, S, S] whose values are the same
 * for every query row or for every key of a row, or made from such pieces
 * and a causal comparison: Hugging Face's masks (transformers 5 expands a
 * [B, 1, 1, S] or [1, 1, S, 1] condition, or and(causal, padding), then
 * where(cond, 0, min)). Read through the expand (ATT_ADD_MASK on its input)
 * or through the where with scalar values to the leaves of its condition
 * (ATT_ADD_SEL), the mask costs the half kernel a read per key tile or per
 * row and a compare, not a read per score. Only taken when every piece is
 * shared or causal. */
static int mask_lookthrough(cg_cuda *c, uint32_t t, const ir_tensor *score, att_op *op) {
    att_view v;
    uint32_t src = unexpand(c, t);
    if (src != t && mask_view(c, src, score, &v) && shared_view(c, &v)) {
        op->kind = ATT_ADD_MASK;
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
    op->kind = ATT_ADD_SEL;
    op->scalar = w->in[1];
    op->scalar2 = w->in[2];
    return 1;
}

/* one chain node: x is the chain's tensor entering node `node` */
static int classify(cg_cuda *c, uint32_t node, uint32_t x, const ir_tensor *score, att_op *op) {
    const ir_node *n = &c->m->nodes[node];
    memset(op, 0, sizeof *op);
    op->node = node;
    op->scalar = op->scalar2 = RT_NONE;
    if (n->n_out != 1 || !ir_same_shape(&c->m->tensors[n->out[0]], score) ||
        c->m->tensors[n->out[0]].dtype != score->dtype)
        return 0;
    if (n->op == IR_OP_MUL || n->op == IR_OP_ADD || n->op == IR_OP_DIV) {
        if (n->n_in != 2 || n->in[0] == n->in[1]) return 0;
        uint32_t other = n->in[0] == x ? n->in[1] : n->in[0];
        if (n->op == IR_OP_DIV && n->in[0] != x) return 0;
        if (is_scalar(c, other)) {
            op->kind = n->op == IR_OP_MUL ? ATT_MUL : n->op == IR_OP_DIV ? ATT_DIV : ATT_ADD;
            op->scalar = other;
            return 1;
        }
        if (n->op != IR_OP_ADD || c->m->tensors[other].dtype != score->dtype) return 0;
        op->kind = ATT_ADD_MASK;
        if (!mask_view(c, other, score, &op->mask)) return 0;
        if (!shared_view(c, &op->mask)) {
            att_op alt = *op;
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
            op->kind = ATT_WHERE_CAUSAL;
            op->mask.t = cond;
            return 1;
        }
        op->kind = ATT_WHERE;
        if (!mask_view(c, cond, score, &op->mask)) return 0;
        att_view v;
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
static int is_noop(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    if (n->n_in != 1 || n->n_out != 1) return 0;
    return n->op == IR_OP_IDENTITY ||
        (n->op == IR_OP_CAST && att_dtype(c->m->tensors[n->in[0]].dtype) && att_dtype(c->m->tensors[n->out[0]].dtype));
}

static int plan(cg_cuda *c, uint32_t mm2, att_plan *a) {
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
    a->zero_masked = cg_attr_int(&c->m->nodes[sm], "zero_masked_rows", 0) != 0;
    const ir_tensor *pt = &c->m->tensors[p];
    int rank = pt->rank;
    if (rank < 2 || rank > 4 || !att_dtype(pt->dtype) ||
        cg_norm_axis(cg_attr_int(&c->m->nodes[sm], "axis", -1), rank) != rank - 1)
        return 0;
    /* the score function chain, back from the softmax input */
    uint32_t x = c->m->nodes[sm].in[0];
    uint32_t chain[ATT_MAX_CHAIN + 1], chain_in[ATT_MAX_CHAIN + 1];
    uint32_t n_chain = 0;
    for (;;) {
        uint32_t q = c->m->tensors[x].producer;
        if (q == IR_NONE || !ir_uses_private(c->uses, x)) return 0;
        if (c->m->nodes[q].op == IR_OP_MATMUL) break;
        if (n_chain == ATT_MAX_CHAIN) return 0;
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
    /* chain ops in evaluation order: from the score to the softmax input */
    for (uint32_t i = 0; i < n_chain; i++) {
        uint32_t j = n_chain - 1 - i;
        if (!classify(c, chain[j], chain_in[j], score, &a->ops[i])) return 0;
        if (a->ops[i].kind == ATT_WHERE_CAUSAL) {
            double v;
            a->causal_skip = i == n_chain - 1 && !a->ops[i].chain_is_true && scalar_value(c, a->ops[i].scalar, &v) &&
                v <= -1e8;
        }
    }
    a->n_ops = n_chain;
    /* operands */
    const ir_tensor *qt = &c->m->tensors[n1->in[0]], *bt = &c->m->tensors[n1->in[1]];
    const ir_tensor *vv = &c->m->tensors[vt], *ot = &c->m->tensors[n2->out[0]];
    if (qt->rank != rank || bt->rank != rank || vv->rank != rank || ot->rank != rank || !att_dtype(qt->dtype) ||
        !att_dtype(bt->dtype) || !att_dtype(vv->dtype) || !att_dtype(ot->dtype) || n1->in[0] == n1->in[1])
        return 0;
    a->qdt = qt->dtype, a->kdt = bt->dtype, a->vdt = vv->dtype, a->odt = ot->dtype;
    for (int d = 0; d < rank - 2; d++)
        if (qt->dims[d] != score->dims[d] || bt->dims[d] != score->dims[d] || vv->dims[d] != score->dims[d]) return 0;
    if (!sym_is_const(c->m->syms, qt->dims[rank - 1], &a->d) || !sym_is_const(c->m->syms, vv->dims[rank - 1], &a->dv) ||
        a->d < 4 || a->d > ATT_MAX_HEAD || a->d % 4 || a->dv < 4 || a->dv > ATT_MAX_HEAD || a->dv % 4 ||
        vv->dims[rank - 2] != score->dims[rank - 1])
        return 0;
    if (!cover(a, mm1) || !cover(a, sm)) return 0;
    for (uint32_t i = 0; i < n_chain; i++)
        if (!cover(a, chain[i])) return 0;
    /* a recognized causal condition needs no memory: its node goes too when private */
    for (uint32_t i = 0; i < n_chain; i++)
        if (a->ops[i].kind == ATT_WHERE_CAUSAL && ir_uses_private(c->uses, a->ops[i].mask.t) &&
            !cover(a, c->m->tensors[a->ops[i].mask.t].producer))
            return 0;
    if (!read_view(c, n1->in[0], a, &a->q) || !read_view(c, n1->in[1], a, &a->k) || !read_view(c, vt, a, &a->v) ||
        !write_view(c, n2->out[0], a, &a->o))
        return 0;
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
static uint32_t plan_reads(cg_cuda *c, const att_plan *a, uint32_t *reads, uint32_t cap) {
    uint32_t all[3 + ATT_MAX_CHAIN * (3 + ATT_MAX_LEAF)], n = 0;
    all[n++] = a->q.t, all[n++] = a->k.t, all[n++] = a->v.t;
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const att_op *o = &a->ops[i];
        double v;
        if (o->scalar != RT_NONE && !scalar_value(c, o->scalar, &v)) all[n++] = o->scalar;
        if (o->scalar2 != RT_NONE && !scalar_value(c, o->scalar2, &v)) all[n++] = o->scalar2;
        if (o->kind == ATT_ADD_MASK || o->kind == ATT_WHERE) all[n++] = o->mask.t;
        for (uint32_t j = 0; o->kind == ATT_ADD_SEL && j < o->n_leaf; j++)
            if (o->leaf[j].kind == LEAF_VIEW) all[n++] = o->leaf[j].v.t;
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

uint32_t cg_attention_claims(ir_module *m, const ir_uses *u, uint32_t node, uint32_t *claimed, uint32_t cap,
                             uint32_t *reads, uint32_t *n_reads) {
    cg_cuda c = {.m = m, .uses = u};
    att_plan a;
    uint32_t all[PASS_ATTENTION_READS], n_all;
    *n_reads = 0;
    if (!plan(&c, node, &a) || a.n_covered > cap || !(n_all = plan_reads(&c, &a, all, PASS_ATTENTION_READS))) return 0;
    memcpy(claimed, a.covered, a.n_covered * sizeof *claimed);
    /* the reads that are no claimed node's input (nor the matmul's) come through nodes the kernel
     * does not compute: the fuse pass must keep them stored */
    for (uint32_t i = 0; i < n_all; i++) {
        int edge = 0;
        for (uint32_t j = 0; j <= a.n_covered && !edge; j++) {
            const ir_node *n = &m->nodes[j < a.n_covered ? a.covered[j] : node];
            for (uint32_t k = 0; k < n->n_in && !edge; k++) edge = n->in[k] == all[i];
        }
        if (!edge) reads[(*n_reads)++] = all[i];
    }
    return a.n_covered;
}

/* the nodes the kernel computes are the ones the plan's group claims */
static int matches_plan(cg_cuda *c, uint32_t node, const att_plan *a) {
    for (uint32_t j = 0; j < a->n_covered; j++)
        if (cg_role(c, a->covered[j]) != IR_FUSE_CLAIMED || c->m->fuse[a->covered[j]].group != node) return 0;
    for (uint32_t i = 0; i < c->m->n_nodes; i++) {
        if (cg_role(c, i) != IR_FUSE_CLAIMED || c->m->fuse[i].group != node) continue;
        int found = 0;
        for (uint32_t j = 0; j < a->n_covered && !found; j++) found = a->covered[j] == i;
        if (!found) return 0;
    }
    return 1;
}

/* ---- the kernel ---------------------------------------------------------------------------------- */
static void dim_text(cg_kw *k, sym_expr e, char *buf, size_t cap) { snprintf(buf, cap, "%s", kw_dim(k, e)); }

/* base offset of view v for batch indices b0, b1, named <name> */
static void view_base(cg_kw *k, const att_view *v, const char *ptr, const char *name, int out) {
    char s0[48], s1[48];
    dim_text(k, v->strides[0], s0, sizeof s0);
    dim_text(k, v->strides[1], s1, sizeof s1);
    kw_body(k, "        %s%s *%s = %s + b0 * %s + b1 * %s;\n", out ? "" : "const ",
            cg_stype(k->c->m->tensors[v->t].dtype), name, ptr, s0, s1);
}

/* `(float)<element off of ptr>`: the typed load of the kernel's storage dtype */
static void att_load(char *buf, size_t cap, symc_dtype dt, const char *ptr, const char *off) {
    char ld[200];
    cg_load(ld, sizeof ld, dt, ptr, off);
    if (snprintf(buf, cap, "(float)%s", ld) >= (int)cap && cap) buf[cap - 1] = 0;
}

static void scalar_text(cg_kw *k, uint32_t t, char *buf, size_t cap) {
    double v;
    if (scalar_value(k->c, t, &v)) cg_float_literal(buf, cap, v, SYMC_F32);
    else att_load(buf, cap, k->c->m->tensors[t].dtype, kw_in(k, t), "0");
}

static void emit_chain_op(cg_kw *k, const att_plan *a, uint32_t i);

/* 1 when op's mask is the same for every query row (its query stride is 0:
 * a padding mask [B, 1, 1, S]) */
static int mask_row_shared(cg_cuda *c, const att_op *op) {
    int64_t z;
    return (op->kind == ATT_ADD_MASK || op->kind == ATT_WHERE) && sym_is_const(c->m->syms, op->mask.strides[2], &z) &&
        z == 0;
}

/* 1 when op's mask is the same for every key of a query row (its key
 * stride is 0) and not also row-shared */
static int mask_key_shared(cg_cuda *c, const att_op *op) {
    return (op->kind == ATT_ADD_MASK || op->kind == ATT_WHERE) && !mask_row_shared(c, op) &&
        key_shared_view(c, &op->mask);
}

/* an ATT_ADD_SEL leaf read once per key tile (row-shared view) or once per
 * row (key-shared view) by the half kernel */
static int leaf_row_shared(cg_cuda *c, const att_leaf *l) { return l->kind == LEAF_VIEW && row_shared_view(c, &l->v); }
static int leaf_key_shared(cg_cuda *c, const att_leaf *l) {
    return l->kind == LEAF_VIEW && !row_shared_view(c, &l->v) && key_shared_view(c, &l->v);
}

/* op i's (an ATT_ADD_SEL) condition for query qi / key kj: the and of its
 * leaves; hoisted: row-shared leaves read from mkb<i>_<j>[n][u], key-shared
 * ones from mrb<i>_<j> (the half kernel); else every view leaf read here */
static void sel_cond(cg_kw *k, const att_op *op, uint32_t i, int hoisted, char *buf, size_t cap) {
    size_t n = 0;
    n += (size_t)snprintf(buf + n, cap - n, "(true");
    for (uint32_t j = 0; j < op->n_leaf && n < cap; j++) {
        const att_leaf *l = &op->leaf[j];
        if (l->kind == LEAF_K_GT_Q) n += (size_t)snprintf(buf + n, cap - n, " && kj > qi");
        else if (l->kind == LEAF_K_LE_Q) n += (size_t)snprintf(buf + n, cap - n, " && kj <= qi");
        else if (hoisted && leaf_row_shared(k->c, l))
            n += (size_t)snprintf(buf + n, cap - n, " && mkb%u_%u[n][u]", i, j);
        else if (hoisted && leaf_key_shared(k->c, l)) n += (size_t)snprintf(buf + n, cap - n, " && mrb%u_%u", i, j);
        else {
            char msq[48], msk[48];
            dim_text(k, l->v.strides[2], msq, sizeof msq);
            dim_text(k, l->v.strides[3], msk, sizeof msk);
            n += (size_t)snprintf(buf + n, cap - n, " && mk%u_%u[qi * %s + kj * %s] != 0", i, j, msq, msk);
        }
    }
    if (n < cap) snprintf(buf + n, cap - n, ")");
}

/* the key-shared masks' values of row qi, once per row and key tile: mr<i> */
static void emit_row_masks(cg_kw *k, const att_plan *a) {
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const att_op *op = &a->ops[i];
        if (!mask_key_shared(k->c, op)) continue;
        char msq[48], mp[16], off[96], ld[700];
        dim_text(k, op->mask.strides[2], msq, sizeof msq);
        snprintf(mp, sizeof mp, "mk%u", i);
        snprintf(off, sizeof off, "qi * %s", msq);
        if (op->kind == ATT_ADD_MASK) att_load(ld, sizeof ld, k->c->m->tensors[op->mask.t].dtype, mp, off);
        else snprintf(ld, sizeof ld, "(%s[%s] != 0)", mp, off);
        kw_body(k, "                const %s mr%u = qi < Sq ? %s : %s;\n", op->kind == ATT_WHERE ? "bool" : "float", i,
                ld, op->kind == ATT_WHERE ? "false" : "0.f");
    }
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const att_op *op = &a->ops[i];
        for (uint32_t j = 0; op->kind == ATT_ADD_SEL && j < op->n_leaf; j++) {
            if (!leaf_key_shared(k->c, &op->leaf[j])) continue;
            char msq[48];
            dim_text(k, op->leaf[j].v.strides[2], msq, sizeof msq);
            kw_body(k, "                const bool mrb%u_%u = qi < Sq && mk%u_%u[qi * %s] != 0;\n", i, j, i, j, msq);
        }
    }
}

/* `type name[8][2]`: the value `val` (of the tile's key kl) for this thread's
 * 16 keys of the key tile, in the half kernel's score layout */
static void emit_tile_vals(cg_kw *k, const char *type, const char *name, const char *val) {
    kw_body(k,
            "            %s %s[8][2];\n"
            "#pragma unroll\n"
            "            for (int n = 0; n < 8; n++)\n"
            "#pragma unroll\n"
            "                for (int u = 0; u < 2; u++) {\n"
            "                    const int kl = n * 8 + 2 * t + u;\n"
            "                    %s[n][u] = %s;\n"
            "                }\n",
            type, name, name, val);
}

/* the chain, applied to `v` for query qi / key kj (in range when `ok`);
 * hoisted: a row-shared mask was read once per key tile into mkv<i>[n][u]
 * (the half kernel's score layout), a key-shared one once per row into
 * mr<i> */
static void emit_chain_h(cg_kw *k, const att_plan *a, int hoisted) {
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const att_op *op = &a->ops[i];
        if (hoisted && mask_row_shared(k->c, op)) {
            if (op->kind == ATT_ADD_MASK) kw_body(k, "                        v = v + mkv%u[n][u];\n", i);
            else if (op->chain_is_true) {
                char sv[240];
                scalar_text(k, op->scalar, sv, sizeof sv);
                kw_body(k, "                        v = mkv%u[n][u] ? v : %s;\n", i, sv);
            } else {
                char sv[240];
                scalar_text(k, op->scalar, sv, sizeof sv);
                kw_body(k, "                        v = mkv%u[n][u] ? %s : v;\n", i, sv);
            }
            continue;
        }
        if (hoisted && mask_key_shared(k->c, op)) {
            if (op->kind == ATT_ADD_MASK) {
                kw_body(k, "                        v = v + mr%u;\n", i);
            } else {
                char sv[240];
                scalar_text(k, op->scalar, sv, sizeof sv);
                if (op->chain_is_true) kw_body(k, "                        v = mr%u ? v : %s;\n", i, sv);
                else kw_body(k, "                        v = mr%u ? %s : v;\n", i, sv);
            }
            continue;
        }
        if (hoisted && op->kind == ATT_ADD_SEL) {
            char cond[1024], s1[240], s2[240];
            sel_cond(k, op, i, 1, cond, sizeof cond);
            scalar_text(k, op->scalar, s1, sizeof s1);
            scalar_text(k, op->scalar2, s2, sizeof s2);
            kw_body(k, "                        v = v + (%s ? %s : %s);\n", cond, s1, s2);
            continue;
        }
        emit_chain_op(k, a, i);
    }
}

/* chain op i, applied to `v` for query qi / key kj (in range when `ok`) */
static void emit_chain_op(cg_kw *k, const att_plan *a, uint32_t i) {
    {
        const att_op *op = &a->ops[i];
        char sv[240] = "", msq[48], msk[48], cond[160];
        if (op->scalar != RT_NONE) scalar_text(k, op->scalar, sv, sizeof sv);
        if (op->kind == ATT_ADD_MASK || op->kind == ATT_WHERE) {
            dim_text(k, op->mask.strides[2], msq, sizeof msq);
            dim_text(k, op->mask.strides[3], msk, sizeof msk);
        }
        switch (op->kind) {
        case ATT_MUL: kw_body(k, "                    v = v * %s;\n", sv); break;
        case ATT_DIV: kw_body(k, "                    v = v / %s;\n", sv); break;
        case ATT_ADD: kw_body(k, "                    v = v + %s;\n", sv); break;
        case ATT_ADD_MASK: {
            char mp[16], off[128], ld[240];
            snprintf(mp, sizeof mp, "mk%u", i);
            snprintf(off, sizeof off, "qi * %s + kj * %s", msq, msk);
            att_load(ld, sizeof ld, k->c->m->tensors[op->mask.t].dtype, mp, off);
            kw_body(k, "                    v = v + (ok ? %s : 0.f);\n", ld);
            break;
        }
        case ATT_ADD_SEL: {
            char s2[240], sc[1024];
            scalar_text(k, op->scalar2, s2, sizeof s2);
            sel_cond(k, op, i, 0, sc, sizeof sc);
            kw_body(k, "                    v = v + (ok ? (%s ? %s : %s) : 0.f);\n", sc, sv, s2);
            break;
        }
        case ATT_WHERE:
        case ATT_WHERE_CAUSAL:
            if (op->kind == ATT_WHERE) snprintf(cond, sizeof cond, "(ok && mk%u[qi * %s + kj * %s] != 0)", i, msq, msk);
            else snprintf(cond, sizeof cond, "(kj > qi)");
            if (op->chain_is_true) kw_body(k, "                    v = %s ? v : %s;\n", cond, sv);
            else kw_body(k, "                    v = %s ? %s : v;\n", cond, sv);
            break;
        }
    }
}

/* the chain, applied to `v` for query qi / key kj (in range when `ok`) */
static void emit_chain(cg_kw *k, const att_plan *a) {
    for (uint32_t i = 0; i < a->n_ops; i++) emit_chain_op(k, a, i);
}

/* 1 when the row stride and batch strides of v are provably multiples of 4
 * and its last dim is contiguous: 16-byte loads of whole rows */
static int view_vec4(cg_cuda *c, const att_view *v) {
    int64_t one;
    if (!sym_is_const(c->m->syms, v->strides[3], &one) || one != 1) return 0;
    for (int d = 0; d < 3; d++)
        if (sym_prove_divisible(c->m->syms, v->strides[d], 4) != SYM_TRUE) return 0;
    return 1;
}

/* stage rows [k0, k0 + 64) of view `ptr` (row stride rs, elem stride es,
 * `cols` columns) into shared `dst` with row pitch ld, zeros past `lim` */
static void emit_stage(cg_kw *k, const char *dst, int64_t ld, const char *ptr, const char *rs, const char *es,
                       int64_t cols, const char *row0, const char *lim, int vec, int threads, symc_dtype dt) {
    if (vec && cg_is_half(dt)) { /* 4 halves (8 bytes) a load, widened to a float4 */
        const char *cv = dt == SYMC_F16 ? "sc_h2f" : "sc_b2f";
        kw_body(
            k,
            "            for (int e = threadIdx.x; e < 64 * %lld; e += %d) {\n"
            "                const int r = e / %lld, c4 = (e - r * %lld) * 4;\n"
            "                uint2 u = make_uint2(0u, 0u);\n"
            "                if (%s + r < %s) u = *(const uint2 *)&%s[(%s + r) * %s + c4];\n"
            "                *(float4 *)&%s[r * %lld + c4] = make_float4(%s((unsigned short)(u.x & 0xffffu)), "
            "%s((unsigned short)(u.x >> 16)), %s((unsigned short)(u.y & 0xffffu)), %s((unsigned short)(u.y >> 16)));\n"
            "            }\n",
            (long long)(cols / 4), threads, (long long)(cols / 4), (long long)(cols / 4), row0, lim, ptr, row0, rs, dst,
            (long long)ld, cv, cv, cv, cv);
    } else if (vec) {
        kw_body(k,
                "            for (int e = threadIdx.x; e < 64 * %lld; e += %d) {\n"
                "                const int r = e / %lld, c4 = (e - r * %lld) * 4;\n"
                "                float4 x = make_float4(0.f, 0.f, 0.f, 0.f);\n"
                "                if (%s + r < %s) x = *(const float4 *)&%s[(%s + r) * %s + c4];\n"
                "                *(float4 *)&%s[r * %lld + c4] = x;\n"
                "            }\n",
                (long long)(cols / 4), threads, (long long)(cols / 4), (long long)(cols / 4), row0, lim, ptr, row0, rs,
                dst, (long long)ld);
    } else {
        char off[160], x[240];
        snprintf(off, sizeof off, "(%s + r) * %s + d * %s", row0, rs, es);
        att_load(x, sizeof x, dt, ptr, off);
        kw_body(k,
                "            for (int e = threadIdx.x; e < 64 * %lld; e += %d) {\n"
                "                const int r = e / %lld, d = e - r * %lld;\n"
                "                %s[r * %lld + d] = %s + r < %s ? %s : 0.f;\n"
                "            }\n",
                (long long)cols, threads, (long long)cols, (long long)cols, dst, (long long)ld, row0, lim, x);
    }
}

/* row pitch >= n with pitch % 32 == want (bank-conflict-free fragment loads) */
static int64_t pitch(int64_t n, int64_t want) { return n + ((want - n % 32) % 32 + 32) % 32; }

/* The row's 1/L, computed once: a division per output element would be 32-64
 * IEEE divides a thread, whose slow-path calls (taken for some values) save
 * registers to local memory and made the kernel 3x slower inside BERT. A
 * zero_masked_rows row (L == 0) stores zeros; otherwise 0 * inf gives NaN,
 * as the reference's 0 / 0 does. */
#define RL_EXPR(a) ((a)->zero_masked ? "L == 0.f ? 0.f : 1.f / L" : "1.f / L")

/* The tensor-core kernel (sm_80+, D and Dv multiples of 8): 4 warps, each
 * 16 query rows of the block's 64; mma.sync m16n8k8 TF32 with fp32
 * accumulation. For fp32 engines every product is split 3xTF32 (a = hi + lo,
 * a·b ≈ hi·hi + hi·lo + lo·hi: about fp32 accuracy), for tf32/fp16/bf16
 * engines one TF32 product. Scores and probabilities stay in the mma
 * accumulator layout (row g / g+8, columns 2t, 2t+1 of each 8-key tile); P
 * goes through the warp's own rows of shared memory to become the A
 * operand of P·V. */
static void emit_mma_body(cg_kw *k, const att_plan *a, int split, const char *qsr, const char *qsd, const char *ksr,
                          const char *ksd, const char *vsr, const char *vsd, const char *osr, const char *osd) {
    cg_cuda *c = k->c;
    const int64_t D = a->d, DV = a->dv, QLD = pitch(D, 4), VLD = pitch(DV, 8), PLD = pitch(64, 4);
    const int64_t NV = DV / 8;
    int qv = view_vec4(c, &a->q), kv = view_vec4(c, &a->k), vv = view_vec4(c, &a->v);
    char st0[160], st1[160];
    cg_store(st0, sizeof st0, a->odt, "o[n][2 * h] * rL");
    cg_store(st1, sizeof st1, a->odt, "o[n][2 * h + 1] * rL");
    kw_body(k,
            "        const long long q0 = qt * 64;\n"
            "        __syncthreads(); /* the previous row block is done with Qs */\n");
    emit_stage(k, "Qs", QLD, "qp", qsr, qsd, D, "q0", "Sq", qv, 128, a->qdt);
    kw_body(k,
            "        float m[2] = {NINF, NINF}, l[2] = {0.f, 0.f}, o[%lld][4];\n"
            "#pragma unroll\n"
            "        for (int n = 0; n < %lld; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;\n",
            (long long)NV, (long long)NV);
    if (a->causal_skip)
        kw_body(k, "        const long long kend = Sk < q0 + 64 ? Sk : q0 + 64; /* causal: later keys are masked */\n");
    else kw_body(k, "        const long long kend = Sk;\n");
    kw_body(k, "        for (long long k0 = 0; k0 < kend; k0 += 64) {\n            __syncthreads();\n");
    emit_stage(k, "Ks", QLD, "kp", ksr, ksd, D, "k0", "Sk", kv, 128, a->kdt);
    emit_stage(k, "Vs", VLD, "vp", vsr, vsd, DV, "k0", "Sk", vv, 128, a->vdt);
    kw_body(k,
            "            __syncthreads();\n"
            "            float s[8][4];\n"
            "#pragma unroll\n"
            "            for (int n = 0; n < 8; n++) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;\n"
            "#pragma unroll 2\n"
            "            for (int kk = 0; kk < %lld; kk += 8) {\n"
            "                const float *qa = &Qs[(w * 16 + g) * %lld + kk + t];\n"
            "                unsigned ah[4], al[4];\n"
            "                sc_split(qa[0], ah[0], al[0]);\n"
            "                sc_split(qa[8 * %lld], ah[1], al[1]);\n"
            "                sc_split(qa[4], ah[2], al[2]);\n"
            "                sc_split(qa[8 * %lld + 4], ah[3], al[3]);\n"
            "#pragma unroll\n"
            "                for (int n = 0; n < 8; n++) {\n"
            "                    const float *kb = &Ks[(n * 8 + g) * %lld + kk + t];\n"
            "                    unsigned bh[2], bl[2];\n"
            "                    sc_split(kb[0], bh[0], bl[0]);\n"
            "                    sc_split(kb[4], bh[1], bl[1]);\n"
            "%s"
            "                    sc_mma_tf32(s[n], ah, bh);\n"
            "                }\n"
            "            }\n",
            (long long)D, (long long)QLD, (long long)QLD, (long long)QLD, (long long)QLD,
            split ? "                    sc_mma_tf32(s[n], al, bh);\n                    sc_mma_tf32(s[n], ah, bl);\n"
                  : "");
    /* score function, bounds, online softmax over the 4 lanes of a row */
    kw_body(k,
            "#pragma unroll\n"
            "            for (int h = 0; h < 2; h++) {\n"
            "                const long long qi = q0 + w * 16 + g + 8 * h;\n"
            "                float mx = NINF;\n"
            "#pragma unroll\n"
            "                for (int n = 0; n < 8; n++)\n"
            "#pragma unroll\n"
            "                    for (int u = 0; u < 2; u++) {\n"
            "                        const long long kj = k0 + n * 8 + 2 * t + u;\n"
            "                        const bool ok = qi < Sq && kj < Sk;\n"
            "                        float v = s[n][2 * h + u];\n"
            "                        (void)ok;\n");
    emit_chain(k, a);
    kw_body(k,
            "                        v = kj < Sk ? v : NINF;\n"
            "                        s[n][2 * h + u] = v;\n"
            "                        mx = fmaxf(mx, v);\n"
            "                    }\n"
            "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));\n"
            "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));\n"
            "                const float mn = fmaxf(m[h], mx), mu = mn == NINF ? 0.f : mn, re = __expf(m[h] - mu);\n"
            "                m[h] = mn;\n"
            "                l[h] *= re;\n"
            "#pragma unroll\n"
            "                for (int n = 0; n < %lld; n++) o[n][2 * h] *= re, o[n][2 * h + 1] *= re;\n"
            "#pragma unroll\n"
            "                for (int n = 0; n < 8; n++) {\n"
            "                    const float p0 = __expf(s[n][2 * h] - mu), p1 = __expf(s[n][2 * h + 1] - mu);\n"
            "                    l[h] += p0 + p1;\n"
            "                    *(float2 *)&Ps[(w * 16 + g + 8 * h) * %lld + n * 8 + 2 * t] = make_float2(p0, p1);\n"
            "                }\n"
            "            }\n"
            "            __syncwarp();\n"
            "#pragma unroll 2\n"
            "            for (int kk = 0; kk < 64; kk += 8) {\n"
            "                const float *pa = &Ps[(w * 16 + g) * %lld + kk + t];\n"
            "                unsigned ah[4], al[4];\n"
            "                sc_split(pa[0], ah[0], al[0]);\n"
            "                sc_split(pa[8 * %lld], ah[1], al[1]);\n"
            "                sc_split(pa[4], ah[2], al[2]);\n"
            "                sc_split(pa[8 * %lld + 4], ah[3], al[3]);\n"
            "#pragma unroll\n"
            "                for (int n = 0; n < %lld; n++) {\n"
            "                    const float *vb = &Vs[(kk + t) * %lld + n * 8 + g];\n"
            "                    unsigned bh[2], bl[2];\n"
            "                    sc_split(vb[0], bh[0], bl[0]);\n"
            "                    sc_split(vb[4 * %lld], bh[1], bl[1]);\n"
            "%s"
            "                    sc_mma_tf32(o[n], ah, bh);\n"
            "                }\n"
            "            }\n"
            "        }\n",
            (long long)NV, (long long)PLD, (long long)PLD, (long long)PLD, (long long)PLD, (long long)NV,
            (long long)VLD, (long long)VLD,
            split ? "                    sc_mma_tf32(o[n], al, bh);\n                    sc_mma_tf32(o[n], ah, bl);\n"
                  : "");
    kw_body(k,
            "#pragma unroll\n"
            "        for (int h = 0; h < 2; h++) {\n"
            "            float L = l[h];\n"
            "            L += __shfl_xor_sync(0xffffffffu, L, 1);\n"
            "            L += __shfl_xor_sync(0xffffffffu, L, 2);\n"
            "            const float rL = %s;\n"
            "            const long long qi = q0 + w * 16 + g + 8 * h;\n"
            "            if (qi >= Sq) continue;\n"
            "#pragma unroll\n"
            "            for (int n = 0; n < %lld; n++) {\n"
            "                op[qi * %s + (n * 8 + 2 * t) * %s] = %s;\n"
            "                op[qi * %s + (n * 8 + 2 * t + 1) * %s] = %s;\n"
            "            }\n"
            "        }\n"
            "    }\n",
            RL_EXPR(a), (long long)NV, osr, osd, st0, osr, osd, st1);
}

/* 1 when view v's storage rows can be copied 8 halves (16 bytes) at a time:
 * contiguous last dim, row and batch strides provably multiples of 8 */
static int view_vec8(cg_cuda *c, const att_view *v) {
    int64_t one;
    if (!sym_is_const(c->m->syms, v->strides[3], &one) || one != 1) return 0;
    for (int d = 0; d < 3; d++)
        if (sym_prove_divisible(c->m->syms, v->strides[d], 8) != SYM_TRUE) return 0;
    return 1;
}

/* the half tensor-core kernel applies: Q, K, V stored in one half type, head
 * dims multiples of 16 up to 128, rows copyable 16 bytes at a time, sm_80+ */
static int att_h16(cg_cuda *c, const att_plan *a) {
    return c->b->sm >= 80 && cg_is_half(a->qdt) && a->kdt == a->qdt && a->vdt == a->qdt && a->d % 16 == 0 &&
        a->dv % 16 == 0 && view_vec8(c, &a->q) && view_vec8(c, &a->k) && view_vec8(c, &a->v);
}

#define H16_MT 2                /* 16-row m-tiles a warp */
#define H16_ROWS (64 * H16_MT)  /* query rows a block: 4 warps */
#define H16_WARP_ROWS_TEXT "32" /* 16 * H16_MT, as text */
#define H16_WARP_LAST_TEXT "31" /* 16 * H16_MT - 1 */
_Static_assert(H16_MT == 2, "H16_WARP_ROWS_TEXT and H16_WARP_LAST_TEXT follow H16_MT");

/* Q's fragments stay in registers for the row block when the head dim is
 * small; from D = 128 they are read from shared memory at each use (the
 * registers go to the output accumulators) */
static int h16_q_in_regs(int64_t d) { return d <= 64; }

/* stage `rows` rows [row0, row0 + rows) x `cols` halves of `ptr` (row
 * stride rs) into shared `dst` (row pitch ld halves) with 16-byte cp.async,
 * zeros past `lim` */
static void emit_cp_tile(cg_kw *k, const char *dst, int64_t ld, const char *ptr, const char *rs, int64_t rows,
                         int64_t cols, const char *row0, const char *lim) {
    kw_body(k,
            "            for (int e = threadIdx.x; e < %lld; e += 128) {\n"
            "                const int r = e / %lld, c8 = (e - r * %lld) * 8;\n"
            "                const bool in = %s + r < %s;\n"
            "                sc_cp16(&%s[r * %lld + c8], %s + (in ? (%s + r) * %s + c8 : 0), in);\n"
            "            }\n",
            (long long)(rows * (cols / 8)), (long long)(cols / 8), (long long)(cols / 8), row0, lim, dst, (long long)ld,
            ptr, row0, rs);
}

/* The half tensor-core kernel (sm_80+): flash attention with mma.sync
 * m16n8k16 in the storage's half type and fp32 accumulation. 4 warps, each
 * H16_MT m-tiles of 16 query rows (a block: H16_ROWS rows), so every K and V
 * fragment read from shared memory feeds H16_MT products. K and V tiles of
 * 64 keys are double buffered in shared memory, the next tile's cp.async in
 * flight while the current one is used; K fragments by ldmatrix, V's by
 * ldmatrix.trans; Q's by ldmatrix, kept in registers for D <= 64. The
 * score tile stays in the accumulator layout, which is the A fragment
 * layout of P·V once packed to half pairs: P never touches shared memory.
 * Online softmax in fp32 in base 2 (ex2 of the score's distance below the
 * running max times log2(e); scaling the scores themselves first would turn
 * the float32 lowest value that transformers' masks add into -inf, and a
 * fully masked row, uniform in the model, into 0/0), the running max and
 * sum per row over the 4 lanes of a
 * row; key bounds are int compares against the tile's remaining keys. P is
 * rounded to the half type for the product, as every flash attention does. */
static void emit_h16_body(cg_kw *k, const att_plan *a, const char *qsr, const char *ksr, const char *vsr,
                          const char *osr, const char *osd) {
    const int64_t D = a->d, DV = a->dv, QP = D + 8, VP = DV + 8, NV = DV / 8, KD = D / 16;
    const int qreg = h16_q_in_regs(D);
    const char *mma = a->qdt == SYMC_BF16 ? "sc_mma_bf16" : "sc_mma_f16";
    const char *pack = a->qdt == SYMC_BF16 ? "sc_pack_bf16" : "sc_pack_f16";
    char st0[160], st1[160];
    cg_store(st0, sizeof st0, a->odt, "o[mt][n][2 * h] * rL");
    cg_store(st1, sizeof st1, a->odt, "o[mt][n][2 * h + 1] * rL");
    kw_body(k,
            "        const long long q0 = qt * %d;\n"
            "        __syncthreads(); /* the previous row block is done with the tiles */\n",
            H16_ROWS);
    if (a->causal_skip)
        kw_body(k, "        const long long kend = Sk < q0 + %d ? Sk : q0 + %d; /* causal: later keys are masked */\n",
                H16_ROWS, H16_ROWS);
    else kw_body(k, "        const long long kend = Sk;\n");
    kw_body(k, "        const long long ntile = (kend + 63) / 64;\n        {\n");
    emit_cp_tile(k, "Qs", QP, "qp", qsr, H16_ROWS, D, "q0", "Sq");
    kw_body(k, "        }\n        if (ntile > 0) {\n            const long long k0 = 0;\n");
    emit_cp_tile(k, "Ks", QP, "kp", ksr, 64, D, "k0", "Sk");
    emit_cp_tile(k, "Vs", VP, "vp", vsr, 64, DV, "k0", "Sk");
    kw_body(k,
            "        }\n"
            "        sc_cp_commit();\n"
            "        sc_cp_wait<0>();\n"
            "        __syncthreads();\n");
    if (qreg)
        kw_body(
            k,
            "        unsigned qf[%d][%lld][4];\n"
            "#pragma unroll\n"
            "        for (int mt = 0; mt < %d; mt++)\n"
            "#pragma unroll\n"
            "            for (int kk = 0; kk < %lld; kk++)\n"
            "                sc_ldsm4(qf[mt][kk], &Qs[(w * %d + mt * 16 + (lane & 15)) * %lld + kk * 16 + (lane >> 4) * 8]);\n",
            H16_MT, (long long)KD, H16_MT, (long long)KD, 16 * H16_MT, (long long)QP);
    kw_body(k,
            "        float m[%d][2], l[%d][2], o[%d][%lld][4];\n"
            "#pragma unroll\n"
            "        for (int mt = 0; mt < %d; mt++) {\n"
            "            m[mt][0] = m[mt][1] = NINF;\n"
            "            l[mt][0] = l[mt][1] = 0.f;\n"
            "#pragma unroll\n"
            "            for (int n = 0; n < %lld; n++) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;\n"
            "        }\n"
            "        for (long long it = 0; it < ntile; it++) {\n"
            "            const long long k0 = it * 64;\n"
            "            const int rem = Sk - k0 < 64 ? (int)(Sk - k0) : 64; /* keys of this tile in range */\n"
            "            const unsigned short *Kc = Ks + (it & 1) * %lld, *Vc = Vs + (it & 1) * %lld;\n"
            "            if (it + 1 < ntile) { /* the next tile into the other buffer */\n"
            "                unsigned short *Kn = Ks + ((it + 1) & 1) * %lld, *Vn = Vs + ((it + 1) & 1) * %lld;\n"
            "                const long long k1 = k0 + 64;\n",
            H16_MT, H16_MT, H16_MT, (long long)NV, H16_MT, (long long)NV, (long long)(64 * QP), (long long)(64 * VP),
            (long long)(64 * QP), (long long)(64 * VP));
    emit_cp_tile(k, "Kn", QP, "kp", ksr, 64, D, "k1", "Sk");
    emit_cp_tile(k, "Vn", VP, "vp", vsr, 64, DV, "k1", "Sk");
    kw_body(k,
            "                sc_cp_commit();\n"
            "                sc_cp_wait<1>();\n"
            "            } else sc_cp_wait<0>();\n"
            "            __syncthreads();\n"
            "            if (%s) { /* else every key of the tile is after the warp's last row: masked (causal) */\n"
            "            float s[%d][8][4];\n"
            "#pragma unroll\n"
            "            for (int mt = 0; mt < %d; mt++)\n"
            "#pragma unroll\n"
            "                for (int n = 0; n < 8; n++) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;\n"
            "#pragma unroll\n"
            "            for (int kk = 0; kk < %lld; kk++) {\n",
            a->causal_skip ? "k0 <= q0 + w * " H16_WARP_ROWS_TEXT " + " H16_WARP_LAST_TEXT : "true", H16_MT, H16_MT,
            (long long)KD);
    if (!qreg)
        kw_body(
            k,
            "                unsigned qa[%d][4];\n"
            "#pragma unroll\n"
            "                for (int mt = 0; mt < %d; mt++)\n"
            "                    sc_ldsm4(qa[mt], &Qs[(w * %d + mt * 16 + (lane & 15)) * %lld + kk * 16 + (lane >> 4) * 8]);\n",
            H16_MT, H16_MT, 16 * H16_MT, (long long)QP);
    kw_body(
        k,
        "#pragma unroll\n"
        "                for (int np = 0; np < 4; np++) {\n"
        "                    unsigned b[4];\n"
        "                    sc_ldsm4(b, &Kc[(np * 16 + (lane & 7) + ((lane >> 4) << 3)) * %lld + kk * 16 + ((lane >> 3) & 1) * 8]);\n"
        "#pragma unroll\n"
        "                    for (int mt = 0; mt < %d; mt++) {\n"
        "                        %s(s[mt][2 * np], %s, b);\n"
        "                        %s(s[mt][2 * np + 1], %s, b + 2);\n"
        "                    }\n"
        "                }\n"
        "            }\n",
        (long long)QP, H16_MT, mma, qreg ? "qf[mt][kk]" : "qa[mt]", mma, qreg ? "qf[mt][kk]" : "qa[mt]");
    /* row-shared masks (padding masks [B, 1, 1, S]): this thread's 16 keys read once a tile */
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const att_op *op = &a->ops[i];
        if (!mask_row_shared(k->c, op)) continue;
        char msk[48], off[96], ld[700];
        dim_text(k, op->mask.strides[3], msk, sizeof msk);
        snprintf(off, sizeof off, "(k0 + kl) * %s", msk);
        char mp[16];
        snprintf(mp, sizeof mp, "mk%u", i);
        const int fl = op->kind != ATT_WHERE; /* a float added to the score */
        if (op->kind == ATT_ADD_MASK) att_load(ld, sizeof ld, k->c->m->tensors[op->mask.t].dtype, mp, off);
        else snprintf(ld, sizeof ld, "(%s[%s] != 0)", mp, off);
        char name[24], val[800];
        snprintf(name, sizeof name, "mkv%u", i);
        snprintf(val, sizeof val, "kl < rem ? %s : %s", ld, fl ? "0.f" : "false");
        emit_tile_vals(k, fl ? "float" : "bool", name, val);
    }
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const att_op *op = &a->ops[i];
        for (uint32_t j = 0; op->kind == ATT_ADD_SEL && j < op->n_leaf; j++) {
            if (!leaf_row_shared(k->c, &op->leaf[j])) continue;
            char msk[48];
            dim_text(k, op->leaf[j].v.strides[3], msk, sizeof msk);
            char name[32], val[256];
            snprintf(name, sizeof name, "mkb%u_%u", i, j);
            snprintf(val, sizeof val, "kl < rem && mk%u_%u[(k0 + kl) * %s] != 0", i, j, msk);
            emit_tile_vals(k, "bool", name, val);
        }
    }
    /* score function, bounds, online softmax over the 4 lanes of a row, in base 2 */
    kw_body(k,
            "#pragma unroll\n"
            "            for (int mt = 0; mt < %d; mt++)\n"
            "#pragma unroll\n"
            "            for (int h = 0; h < 2; h++) {\n"
            "                const long long qi = q0 + w * %d + mt * 16 + g + 8 * h;\n"
            "                float mx = NINF;\n",
            H16_MT, 16 * H16_MT);
    emit_row_masks(k, a);
    kw_body(k,
            "#pragma unroll\n"
            "                for (int n = 0; n < 8; n++)\n"
            "#pragma unroll\n"
            "                    for (int u = 0; u < 2; u++) {\n"
            "                        const int kl = n * 8 + 2 * t + u;\n"
            "                        const long long kj = k0 + kl;\n"
            "                        const bool ok = qi < Sq && kl < rem;\n"
            "                        float v = s[mt][n][2 * h + u];\n"
            "                        (void)ok;\n"
            "                        (void)kj;\n");
    emit_chain_h(k, a, 1);
    kw_body(
        k,
        "                        v = kl < rem ? v : NINF;\n"
        "                        s[mt][n][2 * h + u] = v;\n"
        "                        mx = fmaxf(mx, v);\n"
        "                    }\n"
        "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));\n"
        "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));\n"
        "                const float mn = fmaxf(m[mt][h], mx), mu = mn == NINF ? 0.f : mn,\n"
        "                            re = sc_ex2((m[mt][h] - mu) * 1.4426950408889634f);\n"
        "                m[mt][h] = mn;\n"
        "                l[mt][h] *= re;\n"
        "#pragma unroll\n"
        "                for (int n = 0; n < %lld; n++) o[mt][n][2 * h] *= re, o[mt][n][2 * h + 1] *= re;\n"
        "#pragma unroll\n"
        "                for (int n = 0; n < 8; n++) {\n"
        "                    const float p0 = sc_ex2((s[mt][n][2 * h] - mu) * 1.4426950408889634f),\n"
        "                                p1 = sc_ex2((s[mt][n][2 * h + 1] - mu) * 1.4426950408889634f);\n"
        "                    l[mt][h] += p0 + p1;\n"
        "                    s[mt][n][2 * h] = p0, s[mt][n][2 * h + 1] = p1;\n"
        "                }\n"
        "            }\n"
        "#pragma unroll\n"
        "            for (int j = 0; j < 4; j++) { /* keys 16j..16j+15: P's A fragments from two score tiles */\n"
        "                unsigned pa[%d][4];\n"
        "#pragma unroll\n"
        "                for (int mt = 0; mt < %d; mt++) {\n"
        "                    pa[mt][0] = %s(s[mt][2 * j][0], s[mt][2 * j][1]);\n"
        "                    pa[mt][1] = %s(s[mt][2 * j][2], s[mt][2 * j][3]);\n"
        "                    pa[mt][2] = %s(s[mt][2 * j + 1][0], s[mt][2 * j + 1][1]);\n"
        "                    pa[mt][3] = %s(s[mt][2 * j + 1][2], s[mt][2 * j + 1][3]);\n"
        "                }\n"
        "#pragma unroll\n"
        "                for (int np = 0; np < %lld; np++) {\n"
        "                    unsigned b[4];\n"
        "                    sc_ldsm4_t(b, &Vc[(j * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * %lld + np * 16 + (lane >> 4) * 8]);\n"
        "#pragma unroll\n"
        "                    for (int mt = 0; mt < %d; mt++) {\n"
        "                        %s(o[mt][2 * np], pa[mt], b);\n"
        "                        %s(o[mt][2 * np + 1], pa[mt], b + 2);\n"
        "                    }\n"
        "                }\n"
        "            }\n"
        "            }\n"
        "            __syncthreads(); /* everyone is done with this buffer before it is refilled */\n"
        "        }\n",
        (long long)NV, H16_MT, H16_MT, pack, pack, pack, pack, (long long)(DV / 16), (long long)VP, H16_MT, mma, mma);
    kw_body(k,
            "#pragma unroll\n"
            "        for (int mt = 0; mt < %d; mt++)\n"
            "#pragma unroll\n"
            "        for (int h = 0; h < 2; h++) {\n"
            "            float L = l[mt][h];\n"
            "            L += __shfl_xor_sync(0xffffffffu, L, 1);\n"
            "            L += __shfl_xor_sync(0xffffffffu, L, 2);\n"
            "            const float rL = %s;\n"
            "            const long long qi = q0 + w * %d + mt * 16 + g + 8 * h;\n"
            "            if (qi >= Sq) continue;\n"
            "#pragma unroll\n"
            "            for (int n = 0; n < %lld; n++) {\n"
            "                op[qi * %s + (n * 8 + 2 * t) * %s] = %s;\n"
            "                op[qi * %s + (n * 8 + 2 * t + 1) * %s] = %s;\n"
            "            }\n"
            "        }\n"
            "    }\n",
            H16_MT, RL_EXPR(a), 16 * H16_MT, (long long)NV, osr, osd, st0, osr, osd, st1);
}

/* The SIMT kernel (any SM; D, Dv multiples of 4): 256 threads, each a 4x4
 * block of the score tile (rows ty*4+i, keys tx+16j) and 4 rows x 4 or 8
 * output columns; exact fp32 FMAs. */
static void emit_simt_body(cg_kw *k, const att_plan *a, const char *qsr, const char *qsd, const char *ksr,
                           const char *ksd, const char *vsr, const char *vsd, const char *osr, const char *osd) {
    const int64_t D = a->d, DV = a->dv, G = (DV + 63) / 64, QLD = D + 4, VLD = DV + 4, PLD = ATT_TILE + 4;
    char off[128], ql[240], kl[240], vl[240], ost[160];
    snprintf(off, sizeof off, "(q0 + r) * %s + d * %s", qsr, qsd);
    att_load(ql, sizeof ql, a->qdt, "qp", off);
    snprintf(off, sizeof off, "(k0 + r) * %s + d * %s", ksr, ksd);
    att_load(kl, sizeof kl, a->kdt, "kp", off);
    snprintf(off, sizeof off, "(k0 + r) * %s + d * %s", vsr, vsd);
    att_load(vl, sizeof vl, a->vdt, "vp", off);
    cg_store(ost, sizeof ost, a->odt,
             a->zero_masked ? "(L == 0.f ? 0.f : acc[i][4 * g + u] / L)" : "acc[i][4 * g + u] / L");
    kw_body(k,
            "        const long long q0 = qt * %d;\n"
            "        __syncthreads(); /* the previous row block is done with Qs */\n"
            "        for (int e = threadIdx.x; e < %d * %lld; e += 256) {\n"
            "            const int r = e / %lld, d = e - r * %lld;\n"
            "            Qs[r * %lld + d] = q0 + r < Sq ? %s : 0.f;\n"
            "        }\n"
            "        float m[4], l[4], acc[4][%lld];\n"
            "#pragma unroll\n"
            "        for (int i = 0; i < 4; i++) {\n"
            "            m[i] = NINF;\n"
            "            l[i] = 0.f;\n"
            "#pragma unroll\n"
            "            for (int j = 0; j < %lld; j++) acc[i][j] = 0.f;\n"
            "        }\n",
            ATT_TILE, ATT_TILE, (long long)D, (long long)D, (long long)D, (long long)QLD, ql, (long long)(4 * G),
            (long long)(4 * G));
    if (a->causal_skip)
        kw_body(k, "        const long long kend = Sk < q0 + %d ? Sk : q0 + %d; /* causal: later keys are masked */\n",
                ATT_TILE, ATT_TILE);
    else kw_body(k, "        const long long kend = Sk;\n");
    kw_body(k,
            "        for (long long k0 = 0; k0 < kend; k0 += %d) {\n"
            "            __syncthreads();\n"
            "            for (int e = threadIdx.x; e < %d * %lld; e += 256) {\n"
            "                const int r = e / %lld, d = e - r * %lld;\n"
            "                Ks[r * %lld + d] = k0 + r < Sk ? %s : 0.f;\n"
            "            }\n"
            "            for (int e = threadIdx.x; e < %d * %lld; e += 256) {\n"
            "                const int r = e / %lld, d = e - r * %lld;\n"
            "                Vs[r * %lld + d] = k0 + r < Sk ? %s : 0.f;\n"
            "            }\n"
            "            __syncthreads();\n"
            "            float s[4][4];\n"
            "#pragma unroll\n"
            "            for (int i = 0; i < 4; i++)\n"
            "#pragma unroll\n"
            "                for (int j = 0; j < 4; j++) s[i][j] = 0.f;\n"
            "#pragma unroll 4\n"
            "            for (int d = 0; d < %lld; d += 4) {\n"
            "                float4 qa[4], kb[4];\n"
            "#pragma unroll\n"
            "                for (int i = 0; i < 4; i++) qa[i] = *(const float4 *)&Qs[(ty * 4 + i) * %lld + d];\n"
            "#pragma unroll\n"
            "                for (int j = 0; j < 4; j++) kb[j] = *(const float4 *)&Ks[(tx + 16 * j) * %lld + d];\n"
            "#pragma unroll\n"
            "                for (int i = 0; i < 4; i++)\n"
            "#pragma unroll\n"
            "                    for (int j = 0; j < 4; j++) {\n"
            "                        s[i][j] = fmaf(qa[i].x, kb[j].x, s[i][j]);\n"
            "                        s[i][j] = fmaf(qa[i].y, kb[j].y, s[i][j]);\n"
            "                        s[i][j] = fmaf(qa[i].z, kb[j].z, s[i][j]);\n"
            "                        s[i][j] = fmaf(qa[i].w, kb[j].w, s[i][j]);\n"
            "                    }\n"
            "            }\n",
            ATT_TILE, ATT_TILE, (long long)D, (long long)D, (long long)D, (long long)QLD, kl, ATT_TILE, (long long)DV,
            (long long)DV, (long long)DV, (long long)VLD, vl, (long long)D, (long long)QLD, (long long)QLD);
    kw_body(k,
            "#pragma unroll\n"
            "            for (int i = 0; i < 4; i++) {\n"
            "                const long long qi = q0 + ty * 4 + i;\n"
            "#pragma unroll\n"
            "                for (int j = 0; j < 4; j++) {\n"
            "                    const long long kj = k0 + tx + 16 * j;\n"
            "                    const bool ok = qi < Sq && kj < Sk;\n"
            "                    float v = s[i][j];\n"
            "                    (void)ok;\n");
    emit_chain(k, a);
    kw_body(
        k,
        "                    s[i][j] = kj < Sk ? v : NINF;\n"
        "                }\n"
        "                float mx = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));\n"
        "#pragma unroll\n"
        "                for (int o = 8; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));\n"
        "                const float mn = fmaxf(m[i], mx), mu = mn == NINF ? 0.f : mn, al = __expf(m[i] - mu);\n"
        "                m[i] = mn;\n"
        "                l[i] *= al;\n"
        "#pragma unroll\n"
        "                for (int j = 0; j < %lld; j++) acc[i][j] *= al;\n"
        "#pragma unroll\n"
        "                for (int j = 0; j < 4; j++) {\n"
        "                    s[i][j] = __expf(s[i][j] - mu);\n"
        "                    l[i] += s[i][j];\n"
        "                }\n"
        "            }\n"
        "#pragma unroll\n"
        "            for (int j = 0; j < 4; j++)\n"
        "                *(float4 *)&Ps[(tx + 16 * j) * %lld + ty * 4] = make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);\n"
        "            __syncthreads();\n"
        "#pragma unroll 4\n"
        "            for (int kk = 0; kk < %d; kk++) {\n"
        "                const float4 p = *(const float4 *)&Ps[kk * %lld + ty * 4];\n"
        "#pragma unroll\n"
        "                for (int g = 0; g < %lld; g++) {\n"
        "                    const int col = 64 * g + tx * 4;\n"
        "                    if (col < %lld) {\n"
        "                        const float4 w = *(const float4 *)&Vs[kk * %lld + col];\n"
        "                        acc[0][4 * g] = fmaf(p.x, w.x, acc[0][4 * g]);\n"
        "                        acc[0][4 * g + 1] = fmaf(p.x, w.y, acc[0][4 * g + 1]);\n"
        "                        acc[0][4 * g + 2] = fmaf(p.x, w.z, acc[0][4 * g + 2]);\n"
        "                        acc[0][4 * g + 3] = fmaf(p.x, w.w, acc[0][4 * g + 3]);\n"
        "                        acc[1][4 * g] = fmaf(p.y, w.x, acc[1][4 * g]);\n"
        "                        acc[1][4 * g + 1] = fmaf(p.y, w.y, acc[1][4 * g + 1]);\n"
        "                        acc[1][4 * g + 2] = fmaf(p.y, w.z, acc[1][4 * g + 2]);\n"
        "                        acc[1][4 * g + 3] = fmaf(p.y, w.w, acc[1][4 * g + 3]);\n"
        "                        acc[2][4 * g] = fmaf(p.z, w.x, acc[2][4 * g]);\n"
        "                        acc[2][4 * g + 1] = fmaf(p.z, w.y, acc[2][4 * g + 1]);\n"
        "                        acc[2][4 * g + 2] = fmaf(p.z, w.z, acc[2][4 * g + 2]);\n"
        "                        acc[2][4 * g + 3] = fmaf(p.z, w.w, acc[2][4 * g + 3]);\n"
        "                        acc[3][4 * g] = fmaf(p.w, w.x, acc[3][4 * g]);\n"
        "                        acc[3][4 * g + 1] = fmaf(p.w, w.y, acc[3][4 * g + 1]);\n"
        "                        acc[3][4 * g + 2] = fmaf(p.w, w.z, acc[3][4 * g + 2]);\n"
        "                        acc[3][4 * g + 3] = fmaf(p.w, w.w, acc[3][4 * g + 3]);\n"
        "                    }\n"
        "                }\n"
        "            }\n"
        "        }\n",
        (long long)(4 * G), (long long)PLD, ATT_TILE, (long long)PLD, (long long)G, (long long)DV, (long long)VLD);
    kw_body(k,
            "#pragma unroll\n"
            "        for (int i = 0; i < 4; i++) {\n"
            "            float L = l[i];\n"
            "#pragma unroll\n"
            "            for (int o = 8; o > 0; o >>= 1) L += __shfl_xor_sync(0xffffffffu, L, o);\n"
            "            const long long qi = q0 + ty * 4 + i;\n"
            "            if (qi >= Sq) continue;\n"
            "#pragma unroll\n"
            "            for (int g = 0; g < %lld; g++)\n"
            "#pragma unroll\n"
            "                for (int u = 0; u < 4; u++) {\n"
            "                    const int col = 64 * g + tx * 4 + u;\n"
            "                    if (col < %lld) op[qi * %s + col * %s] = %s;\n"
            "                }\n"
            "        }\n"
            "    }\n",
            (long long)G, (long long)DV, osr, osd, ost);
}

symc_status cg_emit_attention(cg_cuda *c, uint32_t node) {
    att_plan a;
    if (!plan(c, node, &a) || !matches_plan(c, node, &a))
        return cg_fail(c, node, SYMC_ERR_INTERNAL, "the fused attention planned here no longer matches");
    const int64_t D = a.d, DV = a.dv;
    /* half tensor cores for half Q, K, V; TF32 tensor cores from sm_80 when the head dims are
     * multiples of 8; else the SIMT kernel */
    const int h16 = att_h16(c, &a);
    const int tc = c->b->sm >= 80 && D % 8 == 0 && DV % 8 == 0;
    const int64_t QLD = tc ? pitch(D, 4) : D + 4, VLD = tc ? pitch(DV, 8) : DV + 4, PLD = tc ? pitch(64, 4) : 68;
    cg_kw k;
    kw_begin(&k, c, node);
    if (h16) k.shared = (uint32_t)((H16_ROWS * (D + 8) + 2 * 64 * (D + 8) + 2 * 64 * (DV + 8)) * 2);
    else k.shared = (uint32_t)((2 * ATT_TILE * QLD + ATT_TILE * VLD + ATT_TILE * PLD) * (int64_t)sizeof(float));
    char sq[48], sk[48], n1[48], qsr[48], qsd[48], ksr[48], ksd[48], vsr[48], vsd[48], osr[48], osd[48];
    dim_text(&k, a.sq, sq, sizeof sq);
    dim_text(&k, a.sk, sk, sizeof sk);
    dim_text(&k, a.n1, n1, sizeof n1);
    dim_text(&k, a.q.strides[2], qsr, sizeof qsr);
    dim_text(&k, a.q.strides[3], qsd, sizeof qsd);
    dim_text(&k, a.k.strides[2], ksr, sizeof ksr);
    dim_text(&k, a.k.strides[3], ksd, sizeof ksd);
    dim_text(&k, a.v.strides[2], vsr, sizeof vsr);
    dim_text(&k, a.v.strides[3], vsd, sizeof vsd);
    dim_text(&k, a.o.strides[2], osr, sizeof osr);
    dim_text(&k, a.o.strides[3], osd, sizeof osd);
    sym_table *T = c->m->syms;
    const int rows = h16 ? H16_ROWS : ATT_TILE; /* query rows a block */
    sym_expr nq = sym_ceildiv(T, a.sq, sym_const(T, rows));
    sym_expr work = sym_mul(T, sym_mul(T, a.n0, a.n1), nq);
    char wk[48];
    dim_text(&k, work, wk, sizeof wk);
    if (h16)
        kw_body(&k,
                "    extern __shared__ float4 sc_smem4[];\n"
                "    unsigned short *Qs = (unsigned short *)sc_smem4, *Ks = Qs + %d * %lld, *Vs = Ks + %d * %lld;\n"
                "    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;\n",
                H16_ROWS, (long long)(D + 8), 2 * 64, (long long)(D + 8));
    else
        kw_body(&k,
                "    extern __shared__ float4 sc_smem4[];\n"
                "    float *Qs = (float *)sc_smem4, *Ks = Qs + %d * %lld, *Vs = Ks + %d * %lld, *Ps = Vs + %d * %lld;\n"
                "    %s\n",
                ATT_TILE, (long long)QLD, ATT_TILE, (long long)QLD, ATT_TILE, (long long)VLD,
                tc ? "const int w = threadIdx.x >> 5, g = (threadIdx.x >> 2) & 7, t = threadIdx.x & 3;"
                   : "const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;");
    kw_body(&k,
            "    const float NINF = __int_as_float(0xff800000);\n"
            "    const long long Sq = %s, Sk = %s, nq = (Sq + %d) / %d;\n",
            sq, sk, rows - 1, rows);
    kw_body(&k, "    SC_ROWS(blk, %s) {\n", wk);
    /* causal: the row blocks with the most keys first (they finish last otherwise) */
    kw_body(&k, "        const long long qt = %sblk %% nq, bb = blk / nq, b1 = bb %% %s, b0 = bb / %s;\n",
            a.causal_skip ? "nq - 1 - " : "", n1, n1);
    {
        const char *qp = kw_in(&k, a.q.t), *kp = kw_in(&k, a.k.t), *vp = kw_in(&k, a.v.t), *op = kw_out(&k, a.o.t);
        char qpn[32], kpn[32], vpn[32], opn[32];
        snprintf(qpn, sizeof qpn, "%s", qp);
        snprintf(kpn, sizeof kpn, "%s", kp);
        snprintf(vpn, sizeof vpn, "%s", vp);
        snprintf(opn, sizeof opn, "%s", op);
        view_base(&k, &a.q, qpn, "qp", 0);
        view_base(&k, &a.k, kpn, "kp", 0);
        view_base(&k, &a.v, vpn, "vp", 0);
        view_base(&k, &a.o, opn, "op", 1);
    }
    for (uint32_t i = 0; i < a.n_ops; i++) {
        const att_op *o = &a.ops[i];
        for (uint32_t j = 0; o->kind == ATT_ADD_SEL && j < o->n_leaf; j++) {
            const att_view *lv = &o->leaf[j].v;
            if (o->leaf[j].kind != LEAF_VIEW) continue;
            char ptr[32], s0[48], s1[48];
            snprintf(ptr, sizeof ptr, "%s", kw_in(&k, lv->t));
            dim_text(&k, lv->strides[0], s0, sizeof s0);
            dim_text(&k, lv->strides[1], s1, sizeof s1);
            kw_body(&k, "        const %s *mk%u_%u = %s + b0 * %s + b1 * %s;\n", cg_stype(c->m->tensors[lv->t].dtype),
                    i, j, ptr, s0, s1);
        }
        if (o->kind != ATT_ADD_MASK && o->kind != ATT_WHERE) continue;
        char name[16], ptr[32];
        snprintf(name, sizeof name, "mk%u", i);
        snprintf(ptr, sizeof ptr, "%s", kw_in(&k, o->mask.t));
        char s0[48], s1[48];
        dim_text(&k, o->mask.strides[0], s0, sizeof s0);
        dim_text(&k, o->mask.strides[1], s1, sizeof s1);
        kw_body(&k, "        const %s *%s = %s + b0 * %s + b1 * %s;\n", cg_stype(c->m->tensors[o->mask.t].dtype), name,
                ptr, s0, s1);
    }
    /* 3xTF32 for fp32 engines; one TF32 product otherwise: f16 and bf16
     * values are exact in TF32, so Q·Kᵀ is exact and P is rounded to TF32's
     * 10 mantissa bits, as an f16 P would be */
    const int split = c->b->opt->precision == RT_PREC_FP32 &&
        (a.qdt == SYMC_F32 || a.kdt == SYMC_F32 || a.vdt == SYMC_F32);
    if (h16) emit_h16_body(&k, &a, qsr, ksr, vsr, osr, osd);
    else if (tc) emit_mma_body(&k, &a, split, qsr, qsd, ksr, ksd, vsr, vsd, osr, osd);
    else emit_simt_body(&k, &a, qsr, qsd, ksr, ksd, vsr, vsd, osr, osd);
    /* the comment lists the fused nodes */
    cg_str comment = {0};
    char storage[96] = "";
    if (cg_is_half(a.qdt) || cg_is_half(a.kdt) || cg_is_half(a.vdt) || cg_is_half(a.odt))
        snprintf(storage, sizeof storage, ", storage q %s k %s v %s o %s", symc_dtype_name(a.qdt),
                 symc_dtype_name(a.kdt), symc_dtype_name(a.vdt), symc_dtype_name(a.odt));
    cg_str_appendf(&comment, "fused attention (flash, %s%s%s, D %lld, Dv %lld) of ",
                   h16         ? (a.qdt == SYMC_BF16 ? "bf16 tensor cores" : "f16 tensor cores")
                       : !tc   ? "fp32"
                       : split ? "3xTF32 tensor cores"
                               : "TF32 tensor cores",
                   storage, a.causal_skip ? ", causal" : "", (long long)D, (long long)DV);
    uint32_t nodes[72], nn = 0;
    nodes[nn++] = node;
    for (uint32_t i = 0; i < a.n_covered && nn < 72; i++) nodes[nn++] = a.covered[i];
    cg_describe_nodes(c, nodes, nn, &comment);
    symc_status st = comment.oom ? symc_error_setf(c->b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA source")
                                 : kw_finish(&k, comment.p, work, 1, tc || h16 ? 128 : 256);
    cg_str_free(&comment);
    kw_free(&k);
    return st;
}
