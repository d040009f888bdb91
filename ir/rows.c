/* rows.c: is a module independent across the rows of its batch? (ir_batch_rows)
 *
 * A server that joins requests into one batch (Triton's dynamic batcher)
 * may run them as one only when every output row b depends on input rows b
 * alone: then running rows 0..b1-1 of one request next to rows b1..b1+b2-1
 * of another gives each request exactly its own result. Shapes alone cannot
 * tell (a mean over dim 0, softmax over the batch, arange(B) added as data,
 * a reshape that interleaves rows all keep dim 0 equal to B), so this is a
 * proof over the graph, conservative: an op it does not know, or a use it
 * cannot place, answers "not proved" with the node and the reason.
 *
 * The batch symbol B is dim 0 of every graph input, which no other input
 * dim mentions. Each tensor gets a state, in node order:
 *   FREE      its values and shape do not depend on the batch (constants,
 *             what is computed from them and from other symbols);
 *   ROWS(a,g) axis a has extent B*g, index i along it belongs to batch row
 *             i / g (g = 1: one index a row; g = S after [B,S,D] -> [B*S,D]),
 *             each row computed from the same row of the inputs only, and no
 *             other dim mentions B;
 *   MIXED     anything else (with the node that made it so).
 * Each op has a rule (elementwise with broadcasting, reductions and
 * normalizations over axes other than a, matmul and gemm on their batch,
 * row or column axes, convolutions and pools on axis 0, views that keep
 * rows contiguous, transposes, gathers from a free table or along another
 * axis, ...). A FREE operand broadcast onto the batch axis must have extent
 * 1 there, and a FREE tensor expanded or tiled along B gives identical rows
 * (independent). Every graph output must end ROWS(0, 1): dim 0 exactly B.
 * Dims are compared with symshape's proofs, so B*S and S*B are one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

/* RW_INDEX: ROWS(a, 1) whose every value is its own index along a (arange(B) and its views: a batch row
 * index, as masks built by index functions use it); RW_NDINDEX: ROWS(a, 1) gather_nd indices whose first
 * component (along the last axis) is such an index and whose others are row values; RW_FLAT: ROWS(a, 1)
 * whose value at row b is b * k (the row index times a free scalar k); RW_FLATIDX: ROWS(a, 1) whose value
 * at row b lies in [b * k, b * k + k) (RW_FLAT plus free values in [0, k): the flat index of row b's
 * elements in a tensor of rows of k, as transformers' masks index the flattened [B*S] mask). All are rows as
 * far as shapes go, but as data they are not (the index of a row changes when requests are joined): only
 * views, the arithmetic that builds them, a concat into gather_nd indices and the gathers that read a row
 * with them may use them.
 *
 * Shape values: a tensor whose every element shape inference knows as an expression of the symbols
 * (ir_tensor.value: shape_of and what is computed from it) depends on nothing but the symbols, so it is FREE
 * when no element mentions B, however it was computed (element 1 of shape_of([B, S]) is S). */
enum { RW_FREE, RW_ROWS, RW_MIXED, RW_INDEX, RW_NDINDEX, RW_FLAT, RW_FLATIDX };

typedef struct rw {
    int kind;
    int32_t axis;
    sym_expr g;
    sym_expr k;         /* RW_FREE: every value lies in [0, k) (SYM_NONE: not known); RW_FLAT(IDX): the stride */
    uint32_t node;      /* RW_MIXED: the node that made it so (IR_NONE: an input) */
    const char *reason; /* RW_MIXED: why (static text) */
} rw;

typedef struct rows_ctx {
    ir_module *m;
    sym_table *t;
    sym_id b;
    sym_expr vb;
    rw *st; /* per tensor */
} rows_ctx;

static int mentions(const rows_ctx *c, sym_expr e) { return e != SYM_NONE && sym_mentions(c->t, e, c->b); }

static int is_const(const rows_ctx *c, sym_expr e, int64_t v) {
    int64_t x;
    return e != SYM_NONE && sym_is_const(c->t, e, &x) && x == v;
}

static int eq(const rows_ctx *c, sym_expr a, sym_expr b) {
    return a == b || (a != SYM_NONE && b != SYM_NONE && sym_prove_eq(c->t, a, b) == SYM_TRUE);
}

/* e == B * g with g free of B: 1 and *g */
static int factor(const rows_ctx *c, sym_expr e, sym_expr *g) {
    if (!mentions(c, e)) return 0;
    sym_expr h = sym_substitute(c->t, e, c->b, sym_const(c->t, 1));
    if (h == SYM_NONE || mentions(c, h) || !eq(c, e, sym_mul(c->t, c->vb, h))) return 0;
    *g = h;
    return 1;
}

static rw mixed(uint32_t node, const char *reason) { return (rw){RW_MIXED, 0, SYM_NONE, SYM_NONE, node, reason}; }
static rw rows(int32_t axis, sym_expr g) { return (rw){RW_ROWS, axis, g, SYM_NONE, IR_NONE, NULL}; }
static rw index_state(int kind, int32_t axis, sym_expr g, sym_expr k) { return (rw){kind, axis, g, k, IR_NONE, NULL}; }
static const rw free_state = {RW_FREE, 0, SYM_NONE, SYM_NONE, IR_NONE, NULL};

static int is_index(int kind) { return kind >= RW_INDEX; }

static int64_t attr_int(const ir_node *n, const char *name, int64_t dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->kind == IR_ATTR_INT ? a->i : dflt;
}

static const ir_tensor *in_t(const rows_ctx *c, const ir_node *n, uint32_t k) {
    return k < n->n_in && n->in[k] != IR_NONE ? &c->m->tensors[n->in[k]] : NULL;
}

static rw in_s(const rows_ctx *c, const ir_node *n, uint32_t k) {
    return k < n->n_in && n->in[k] != IR_NONE ? c->st[n->in[k]] : free_state;
}

/* the first MIXED input, or -1; the number of ROWS inputs in *n_rows */
static int first_mixed(const rows_ctx *c, const ir_node *n, int *n_rows) {
    int first = -1;
    *n_rows = 0;
    for (uint32_t k = 0; k < n->n_in; k++) {
        rw s = in_s(c, n, k);
        if (s.kind == RW_MIXED && first < 0) first = (int)k;
        *n_rows += s.kind == RW_ROWS || is_index(s.kind);
    }
    return first;
}

/* elementwise over inputs broadcast to the output's rank */
static rw broadcast(const rows_ctx *c, const ir_node *n, uint32_t node, const ir_tensor *out) {
    int32_t p = -1;
    sym_expr g = SYM_NONE;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const ir_tensor *t = in_t(c, n, k);
        rw s = in_s(c, n, k);
        if (!t || s.kind != RW_ROWS) continue;
        int32_t pk = s.axis + (out->rank - t->rank);
        if (p >= 0 && (pk != p || !eq(c, g, s.g))) return mixed(node, "its inputs' batch axes do not line up");
        p = pk;
        g = s.g;
    }
    if (p < 0) return free_state;
    for (uint32_t k = 0; k < n->n_in; k++) {
        const ir_tensor *t = in_t(c, n, k);
        if (!t || in_s(c, n, k).kind != RW_FREE) continue;
        int32_t ak = p - (out->rank - t->rank);
        if (ak >= 0 && !is_const(c, t->dims[ak], 1))
            return mixed(node,
                         "an input that does not depend on the batch is broadcast along the batch axis with "
                         "an extent other than 1");
    }
    return rows(p, g);
}

/* ops that keep the row-major order of the elements (reshape, flatten, squeeze, unsqueeze) */
static rw view(const rows_ctx *c, uint32_t node, const ir_tensor *x, rw s, const ir_tensor *out) {
    if (s.kind != RW_ROWS) return s;
    for (int32_t d = 0; d < s.axis; d++)
        if (!is_const(c, x->dims[d], 1))
            return mixed(node,
                         "a reshape of a tensor whose batch rows are not contiguous (an axis before the batch "
                         "axis)");
    int32_t a = 0;
    while (a < out->rank && is_const(c, out->dims[a], 1)) a++;
    sym_expr g;
    if (a == out->rank || !factor(c, out->dims[a], &g))
        return mixed(node, "a reshape that splits or interleaves the batch rows");
    return rows(a, g);
}

static int axis_in(const ir_attr *axes, int32_t rank, int32_t a) {
    if (!axes) return 1; /* absent: every axis */
    for (uint32_t i = 0; i < axes->n; i++) {
        int64_t v;
        if (ir_axis_norm(axes->ints[i], rank, &v) && v == a) return 1;
    }
    return 0;
}

static rw reduce(const ir_node *n, uint32_t node, const ir_tensor *x, rw s) {
    if (s.kind != RW_ROWS) return s;
    const ir_attr *axes = ir_node_attr(n, "axes");
    int single = n->op == IR_OP_ARGMAX || n->op == IR_OP_ARGMIN;
    int64_t ax = 0;
    if (single && !ir_axis_norm(attr_int(n, "axis", 0), x->rank, &ax)) return mixed(node, "an axis out of range");
    if (single ? ax == s.axis : axis_in(axes, x->rank, s.axis)) return mixed(node, "a reduction over the batch axis");
    if (attr_int(n, "keepdims", 1)) return s;
    int32_t below = 0;
    for (int32_t d = 0; d < s.axis; d++) below += single ? d == ax : axis_in(axes, x->rank, d);
    return rows(s.axis - below, s.g);
}

static rw matmul(const rows_ctx *c, const ir_node *n, uint32_t node, const ir_tensor *out) {
    const ir_tensor *a = in_t(c, n, 0), *b = in_t(c, n, 1);
    rw sa = in_s(c, n, 0), sb = in_s(c, n, 1);
    if (sa.kind == RW_FREE && sb.kind == RW_FREE) return free_state;
    if (a->rank < 2 || b->rank < 2) return mixed(node, "a matmul of a vector with a batched operand");
    int32_t pa = -1, pb = -1; /* output positions of the batch axis, -2: contracted */
    if (sa.kind == RW_ROWS)
        pa = sa.axis == a->rank - 1 ? -2 : sa.axis == a->rank - 2 ? out->rank - 2 : sa.axis + (out->rank - a->rank);
    if (sb.kind == RW_ROWS)
        pb = sb.axis == b->rank - 2 ? -2 : sb.axis == b->rank - 1 ? out->rank - 1 : sb.axis + (out->rank - b->rank);
    if (pa == -2 || pb == -2) return mixed(node, "a matmul that contracts over the batch axis");
    if (pa >= 0 && pb >= 0) {
        if (pa != pb || pa >= out->rank - 2 || !eq(c, sa.g, sb.g))
            return mixed(node, "a matmul that combines different batch rows of its operands");
        return rows(pa, sa.g);
    }
    int32_t p = pa >= 0 ? pa : pb;
    const ir_tensor *f = pa >= 0 ? b : a; /* the free operand */
    if (p < out->rank - 2) {              /* a batch dim: the free operand must broadcast there */
        int32_t ak = p - (out->rank - f->rank);
        if (ak >= 0 && !is_const(c, f->dims[ak], 1))
            return mixed(node, "a matmul whose free operand is broadcast along the batch axis");
    }
    return rows(p, pa >= 0 ? sa.g : sb.g);
}

static rw gemm(const rows_ctx *c, const ir_node *n, uint32_t node) {
    rw sa = in_s(c, n, 0), sb = in_s(c, n, 1), sc = in_s(c, n, 2);
    if (sa.kind == RW_FREE && sb.kind == RW_FREE && sc.kind == RW_FREE) return free_state;
    const ir_tensor *ct = in_t(c, n, 2);
    int ta = attr_int(n, "trans_a", 0) != 0;
    if (sa.kind == RW_ROWS && sb.kind == RW_FREE && sc.kind == RW_FREE && sa.axis == (ta ? 1 : 0)) {
        /* rows of A are rows of the result; C broadcasts over [M, N] */
        if (ct && ct->rank == 2 && !is_const(c, ct->dims[0], 1))
            return mixed(node, "a gemm whose bias has rows of its own");
        return rows(0, sa.g);
    }
    return mixed(node, "a gemm with a batched operand other than the rows of A");
}

static rw slice(const rows_ctx *c, const ir_node *n, uint32_t node, const ir_tensor *x, rw s) {
    const ir_attr *starts = ir_node_attr(n, "starts"), *ends = ir_node_attr(n, "ends"), *axes = ir_node_attr(n, "axes"),
                  *steps = ir_node_attr(n, "steps");
    if (!starts || !ends || starts->n != ends->n) return mixed(node, "a slice without starts and ends");
    for (uint32_t i = 0; i < starts->n; i++) {
        int64_t ax = axes && i < axes->n ? axes->ints[i] : (int64_t)i;
        if (!ir_axis_norm(ax, x->rank, &ax)) return mixed(node, "an axis out of range");
        int64_t step = steps && i < steps->n ? steps->ints[i] : 1;
        sym_expr st = starts->dims[i], en = ends->dims[i];
        if (s.kind == RW_ROWS && ax == s.axis) {
            int64_t big;
            int whole = step == 1 && is_const(c, st, 0) &&
                (eq(c, en, x->dims[ax]) || (sym_is_const(c->t, en, &big) && big >= ((int64_t)1 << 31)));
            if (!whole) return mixed(node, "a slice along the batch axis");
        } else if (mentions(c, st) || mentions(c, en)) {
            return mixed(node, "a slice whose bounds depend on the batch size");
        }
    }
    return s;
}

static rw gather(const rows_ctx *c, const ir_node *n, uint32_t node) {
    const ir_tensor *d = in_t(c, n, 0), *i = in_t(c, n, 1);
    rw sd = in_s(c, n, 0), si = in_s(c, n, 1);
    int64_t ax;
    if (!ir_axis_norm(attr_int(n, "axis", 0), d->rank, &ax)) return mixed(node, "an axis out of range");
    if (sd.kind == RW_FREE && si.kind == RW_FREE) return free_state;
    if (sd.kind == RW_ROWS && si.kind == RW_FREE && ax != sd.axis)
        return rows(sd.axis < ax ? sd.axis : sd.axis - 1 + i->rank, sd.g);
    if (sd.kind == RW_FREE && si.kind == RW_ROWS) return rows((int32_t)ax + si.axis, si.g);
    return mixed(node, "a gather along the batch axis, or with both data and indices batched");
}

/* x expanded (expand) or tiled (tile) to out */
static rw grow(const rows_ctx *c, const ir_node *n, uint32_t node, const ir_tensor *x, rw s, const ir_tensor *out) {
    int32_t off = out->rank - x->rank;
    if (s.kind == RW_ROWS) {
        if (n->op == IR_OP_TILE) {
            const ir_attr *rep = ir_node_attr(n, "repeats");
            if (!rep || rep->n <= (uint32_t)s.axis || !is_const(c, rep->dims[s.axis], 1))
                return mixed(node, "a tile along the batch axis");
        }
        return rows(s.axis + off, s.g);
    }
    /* a free tensor grown along B: identical rows */
    int32_t p = -1;
    for (int32_t d = 0; d < out->rank; d++)
        if (mentions(c, out->dims[d])) {
            if (p >= 0) return mixed(node, "an expand or tile along the batch size on two axes");
            p = d;
        }
    sym_expr g;
    if (p < 0) return s; /* free, with its bound on the values */
    if (!factor(c, out->dims[p], &g)) return mixed(node, "an expand or tile to a size that is not a multiple of B");
    return rows(p, g);
}

/* the dims attributes of ops not handled by a rule of their own must not mention B */
static int attrs_mention(const rows_ctx *c, const ir_node *n) {
    if (n->op == IR_OP_RESHAPE || n->op == IR_OP_EXPAND || n->op == IR_OP_TILE || n->op == IR_OP_SLICE ||
        n->op == IR_OP_RESIZE || n->op == IR_OP_RANGE)
        return 0;
    for (uint32_t k = 0; k < n->n_attrs; k++)
        if (n->attrs[k].kind == IR_ATTR_DIMS)
            for (uint32_t i = 0; i < n->attrs[k].n; i++)
                if (mentions(c, n->attrs[k].dims[i])) return 1;
    return 0;
}

/* every element of t known (ir_tensor.value) and one expression, free of B: *v */
static int uniform_value(const rows_ctx *c, const ir_tensor *t, sym_expr *v) {
    int64_t n;
    sym_expr numel = ir_tensor_numel(c->m, t);
    if (!t->value || !t->n_value || numel == SYM_NONE || !sym_is_const(c->t, numel, &n) || n != (int64_t)t->n_value)
        return 0;
    for (uint32_t i = 0; i < t->n_value; i++)
        if (t->value[i] == SYM_NONE || mentions(c, t->value[i]) || !eq(c, t->value[i], t->value[0])) return 0;
    *v = t->value[0];
    return 1;
}

/* every element of t known and free of B, and its dims too: its values are the same at every batch size */
static int known_free(const rows_ctx *c, const ir_tensor *t) {
    int64_t n;
    sym_expr numel = ir_tensor_numel(c->m, t);
    if (!t->value || numel == SYM_NONE || !sym_is_const(c->t, numel, &n) || n != (int64_t)t->n_value) return 0;
    for (int32_t d = 0; d < t->rank; d++)
        if (mentions(c, t->dims[d])) return 0;
    for (uint32_t i = 0; i < t->n_value; i++)
        if (t->value[i] == SYM_NONE || mentions(c, t->value[i])) return 0;
    return 1;
}

static const char *index_as_data = "the batch row index (arange(B)) used as data: it changes when requests are joined";

/* arange(B): the row index */
static rw range_rule(const rows_ctx *c, const ir_node *n, uint32_t node) {
    const ir_attr *st = ir_node_attr(n, "start"), *li = ir_node_attr(n, "limit"), *de = ir_node_attr(n, "delta");
    int any = (st && st->n && mentions(c, st->dims[0])) || (li && li->n && mentions(c, li->dims[0])) ||
        (de && de->n && mentions(c, de->dims[0]));
    if (!any) { /* arange(L): values in [0, L) */
        rw f = free_state;
        if (st && li && de && st->n && li->n && de->n && is_const(c, st->dims[0], 0) && is_const(c, de->dims[0], 1))
            f.k = li->dims[0];
        return f;
    }
    if (st && li && de && st->n && li->n && de->n && is_const(c, st->dims[0], 0) && is_const(c, de->dims[0], 1) &&
        eq(c, li->dims[0], c->vb))
        return index_state(RW_INDEX, 0, sym_const(c->t, 1), SYM_NONE);
    return mixed(node, "a range whose bounds depend on the batch size");
}

/* ops that read a row index (RW_INDEX / RW_NDINDEX) without using it as data */
static rw index_rule(const rows_ctx *c, const ir_node *n, uint32_t node, const ir_tensor *out) {
    const ir_tensor *x = in_t(c, n, 0);
    rw s = in_s(c, n, 0);
    switch (n->op) {
    case IR_OP_IDENTITY:
    case IR_OP_CAST:
        if (n->op == IR_OP_CAST && ir_dtype_is_float(out->dtype)) break;
        return s;
    case IR_OP_RESHAPE:
    case IR_OP_FLATTEN:
    case IR_OP_SQUEEZE:
    case IR_OP_UNSQUEEZE:
    case IR_OP_TRANSPOSE:
    case IR_OP_EXPAND: {
        if (!is_index(s.kind) || s.kind == RW_NDINDEX || n->n_in != 1) break;
        rw r = s;
        r.kind = RW_ROWS;
        if (n->op == IR_OP_TRANSPOSE) {
            const ir_attr *perm = ir_node_attr(n, "perm");
            r.kind = RW_MIXED;
            for (uint32_t d = 0; perm && d < perm->n; d++)
                if (perm->ints[d] == s.axis) r = rows((int32_t)d, s.g);
        } else {
            r = n->op == IR_OP_EXPAND ? grow(c, n, node, x, r, out) : view(c, node, x, r, out);
        }
        if (r.kind != RW_ROWS || !is_const(c, r.g, 1)) break;
        r.kind = s.kind;
        r.k = s.k;
        return r;
    }
    case IR_OP_MUL:   /* row index * k: RW_FLAT */
    case IR_OP_ADD: { /* RW_FLAT + values in [0, k): RW_FLATIDX */
        if (n->n_in != 2) break;
        uint32_t ki = is_index(in_s(c, n, 0).kind) ? 0 : 1;
        rw si = in_s(c, n, ki), sf = in_s(c, n, 1 - ki);
        const ir_tensor *ti = in_t(c, n, ki), *tf = in_t(c, n, 1 - ki);
        if (sf.kind != RW_FREE || !ti || !tf || !is_const(c, si.g, 1)) break;
        int32_t p = si.axis + (out->rank - ti->rank), ak = p - (out->rank - tf->rank);
        if (ak >= 0 && !is_const(c, tf->dims[ak], 1)) break;
        sym_expr v;
        if (n->op == IR_OP_MUL && si.kind == RW_INDEX && uniform_value(c, tf, &v))
            return index_state(RW_FLAT, p, si.g, v);
        if (n->op == IR_OP_ADD && si.kind == RW_FLAT && sf.k != SYM_NONE && sym_prove_le(c->t, sf.k, si.k) == SYM_TRUE)
            return index_state(RW_FLATIDX, p, si.g, si.k);
        break;
    }
    case IR_OP_GATHER: { /* data of rows of k along the gather axis, read at [b*k, b*k + k): row b reads row b */
        rw si = in_s(c, n, 1);
        int64_t ax;
        if (s.kind == RW_ROWS && si.kind == RW_FLATIDX && ir_axis_norm(attr_int(n, "axis", 0), x->rank, &ax) &&
            ax == s.axis && eq(c, s.g, si.k))
            return rows((int32_t)ax + si.axis, si.g);
        break;
    }
    case IR_OP_CONCAT: { /* gather_nd indices: the row index first, row values after, along the last axis */
        int64_t ax;
        if (!ir_axis_norm(attr_int(n, "axis", 0), x->rank, &ax) || ax != x->rank - 1 || s.kind != RW_INDEX ||
            !is_const(c, x->dims[ax], 1))
            break;
        for (uint32_t k = 1; k < n->n_in; k++) {
            rw sk = in_s(c, n, k);
            if (sk.kind != RW_ROWS || sk.axis != s.axis || !is_const(c, sk.g, 1)) return mixed(node, index_as_data);
        }
        return index_state(RW_NDINDEX, s.axis, s.g, SYM_NONE);
    }
    case IR_OP_GATHER_ND: { /* data[idx[..., 0], idx[..., 1:]...]: row b of the result reads row b of data */
        rw si = in_s(c, n, 1);
        if (s.kind == RW_ROWS && s.axis == 0 && is_const(c, s.g, 1) && si.kind == RW_NDINDEX && si.axis == 0 &&
            attr_int(n, "batch_dims", 0) == 0)
            return rows(0, s.g);
        break;
    }
    default: break;
    }
    return mixed(node, index_as_data);
}

static rw transfer(const rows_ctx *c, uint32_t node, uint32_t out_k) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *out = &c->m->tensors[n->out[out_k]];
    const ir_tensor *x = in_t(c, n, 0);
    rw s = in_s(c, n, 0);
    int n_rows;
    if (known_free(c, out)) return free_state; /* a shape value without B (element 1 of shape_of([B, S])) */
    int mk = first_mixed(c, n, &n_rows);
    if (mk >= 0) return c->st[n->in[mk]];
    if (attrs_mention(c, n)) return mixed(node, "an attribute that depends on the batch size");
    if (n->op == IR_OP_RANGE) return range_rule(c, n, node);
    for (uint32_t k = 0; k < n->n_in; k++) {
        int kind = in_s(c, n, k).kind;
        if (is_index(kind)) return index_rule(c, n, node, out);
    }
    const ir_op_info *info = ir_op_get(n->op);
    if (n->op == IR_OP_EXPAND || n->op == IR_OP_TILE) return grow(c, n, node, x, s, out);
    if (!n_rows) { /* every input free: so is the result, unless its shape or values bring in B (checked after) */
        int keeps = n->op == IR_OP_IDENTITY || n->op == IR_OP_RESHAPE || n->op == IR_OP_FLATTEN ||
            n->op == IR_OP_SQUEEZE || n->op == IR_OP_UNSQUEEZE ||
            (n->op == IR_OP_CAST && (out->dtype == SYMC_I64 || out->dtype == SYMC_I32));
        return keeps ? s : free_state; /* views keep the bound on the values */
    }
    if (info && info->category == IR_CAT_UNARY) return s;
    if (info && info->category == IR_CAT_BINARY) return broadcast(c, n, node, out);
    switch (n->op) {
    case IR_OP_IDENTITY: return s;
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_MAX:
    case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD:
    case IR_OP_ARGMAX:
    case IR_OP_ARGMIN: return reduce(n, node, x, s);
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX:
    case IR_OP_CUMSUM:
    case IR_OP_TOPK:
    case IR_OP_DFT: {
        int64_t ax;
        if (s.kind != RW_ROWS || n_rows != 1) return mixed(node, "a batched operand other than the first");
        if (!ir_axis_norm(attr_int(n, "axis", 0), x->rank, &ax)) return mixed(node, "an axis out of range");
        return ax == s.axis ? mixed(node, "an operation along the batch axis") : s;
    }
    case IR_OP_LAYER_NORM:
    case IR_OP_RMS_NORM: {
        int64_t ax;
        if (s.kind != RW_ROWS || n_rows != 1) return mixed(node, "a batched scale or bias");
        if (!ir_axis_norm(attr_int(n, "axis", 0), x->rank, &ax)) return mixed(node, "an axis out of range");
        return s.axis >= ax ? mixed(node, "a normalization over the batch axis") : s;
    }
    case IR_OP_BATCH_NORM: return s.kind == RW_ROWS && n_rows == 1 ? s : mixed(node, "batched statistics");
    case IR_OP_MATMUL: return matmul(c, n, node, out);
    case IR_OP_GEMM: return gemm(c, n, node);
    case IR_OP_CONV2D:
    case IR_OP_CONV_TRANSPOSE:
    case IR_OP_MAX_POOL2D:
    case IR_OP_AVG_POOL2D:
    case IR_OP_GLOBAL_AVG_POOL:
    case IR_OP_COL2IM:
        return s.kind == RW_ROWS && n_rows == 1 && s.axis == 0
            ? s
            : mixed(node, "a convolution or pooling batched on an axis other than 0, or on its weights");
    case IR_OP_GRID_SAMPLE:
        return n_rows == 2 && s.axis == 0 && in_s(c, n, 1).axis == 0 && eq(c, s.g, in_s(c, n, 1).g)
            ? s
            : mixed(node, "a grid sample whose image and grid are not both batched on axis 0");
    case IR_OP_RESHAPE:
    case IR_OP_FLATTEN:
    case IR_OP_SQUEEZE:
    case IR_OP_UNSQUEEZE: return view(c, node, x, s, out);
    case IR_OP_TRANSPOSE: {
        const ir_attr *perm = ir_node_attr(n, "perm");
        for (uint32_t d = 0; perm && d < perm->n; d++)
            if (perm->ints[d] == s.axis) return rows((int32_t)d, s.g);
        return mixed(node, "a transpose without a permutation");
    }
    case IR_OP_SHAPE_OF: return mixed(node, "the batch size read as data (shape_of)");
    case IR_OP_CONCAT:
    case IR_OP_SPLIT: {
        int64_t ax;
        if (!ir_axis_norm(attr_int(n, "axis", 0), x->rank, &ax)) return mixed(node, "an axis out of range");
        for (uint32_t k = 0; k < n->n_in; k++) {
            rw sk = in_s(c, n, k);
            if (sk.kind != RW_ROWS || sk.axis != s.axis || !eq(c, sk.g, s.g))
                return mixed(node, "a concat of batched and unbatched tensors");
        }
        return ax == s.axis ? mixed(node, "a concat or split along the batch axis") : s;
    }
    case IR_OP_SLICE: return slice(c, n, node, x, s);
    case IR_OP_PAD: {
        const ir_attr *pads = ir_node_attr(n, "pads");
        if (pads && pads->n == 2 * (uint32_t)x->rank &&
            (!is_const(c, pads->dims[s.axis], 0) || !is_const(c, pads->dims[x->rank + s.axis], 0)))
            return mixed(node, "padding along the batch axis");
        return s;
    }
    case IR_OP_TRILU:
    case IR_OP_DET:
        return s.axis < x->rank - 2 ? s : mixed(node, "an operation on the last two axes, one of them the batch");
    case IR_OP_RESIZE: {
        const ir_attr *sizes = ir_node_attr(n, "sizes");
        if (!sizes || sizes->n != (uint32_t)x->rank || !eq(c, sizes->dims[s.axis], x->dims[s.axis]))
            return mixed(node, "a resize along the batch axis");
        for (uint32_t d = 0; d < sizes->n; d++)
            if ((int32_t)d != s.axis && mentions(c, sizes->dims[d]))
                return mixed(node, "a resize to sizes that depend on the batch size");
        return s;
    }
    case IR_OP_GATHER: return gather(c, n, node);
    case IR_OP_GATHER_ELEMENTS: {
        int64_t ax;
        rw si = in_s(c, n, 1);
        if (!ir_axis_norm(attr_int(n, "axis", 0), x->rank, &ax)) return mixed(node, "an axis out of range");
        if (s.kind == RW_ROWS && si.kind == RW_ROWS && s.axis == si.axis && eq(c, s.g, si.g) && ax != s.axis) return s;
        return mixed(node, "a gather_elements along the batch axis or with one side unbatched");
    }
    case IR_OP_GATHER_ND: { /* batch_dims >= 1: each row of data gathered by the same row of indices */
        rw si = in_s(c, n, 1);
        if (s.kind == RW_ROWS && si.kind == RW_ROWS && s.axis == 0 && si.axis == 0 && eq(c, s.g, si.g) &&
            attr_int(n, "batch_dims", 0) >= 1)
            return s;
        return mixed(node, "a gather_nd across the batch");
    }
    default: return mixed(node, "an operation the batch-row proof does not cover");
    }
}

/* the state's claims about the tensor's shape and values hold */
static rw consistent(const rows_ctx *c, uint32_t node, const ir_tensor *t, rw s) {
    if (s.kind == RW_MIXED) return s;
    for (int32_t d = 0; d < t->rank; d++) {
        if (s.kind != RW_FREE && d == s.axis) {
            if (!eq(c, t->dims[d], sym_mul(c->t, c->vb, s.g))) return mixed(node, "its batch axis is not B rows");
        } else if (mentions(c, t->dims[d])) {
            return mixed(node, "the batch size reaches another dim of its result");
        }
    }
    for (uint32_t i = 0; t->value && i < t->n_value; i++)
        if (mentions(c, t->value[i])) return mixed(node, "its values depend on the batch size (a shape read as data)");
    return s;
}

static void name_mixed(const rows_ctx *c, rw s, const char *where, char *why, size_t cap) {
    if (s.node == IR_NONE) {
        snprintf(why, cap, "%s: %s", where, s.reason ? s.reason : "not a batch row");
        return;
    }
    const ir_node *n = &c->m->nodes[s.node];
    const ir_op_info *info = ir_op_get(n->op);
    char from[96] = "";
    if (n->source && n->source[0] && strcmp(n->source, n->name)) snprintf(from, sizeof from, ", from '%s'", n->source);
    snprintf(why, cap, "%s depends on node '%s' (%s%s): %s", where, n->name, info ? info->name : "?", from, s.reason);
}

symc_status ir_batch_rows(ir_module *m, ir_batch_rows_result *out, symc_error *err) {
    if (!m || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "ir_batch_rows: NULL argument");
    memset(out, 0, sizeof *out);
    rows_ctx c = {m, m->syms, 0, SYM_NONE, NULL};
    /* the batch symbol: dim 0 of every input, bare */
    for (uint32_t k = 0; k < m->n_inputs; k++) {
        const ir_tensor *t = &m->tensors[m->inputs[k]];
        sym_view v;
        if (t->rank < 1 || !sym_expr_view(c.t, t->dims[0], &v) || v.kind != SYM_SYMBOL) {
            snprintf(out->why, sizeof out->why, "input '%s' has no symbol at dim 0", t->name);
            return SYMC_OK;
        }
        if (k == 0) {
            c.b = (sym_id)v.value;
            c.vb = t->dims[0];
        } else if (!eq(&c, t->dims[0], c.vb)) {
            snprintf(out->why, sizeof out->why, "inputs '%s' and '%s' have different symbols at dim 0",
                     m->tensors[m->inputs[0]].name, t->name);
            return SYMC_OK;
        }
    }
    if (!m->n_inputs) {
        snprintf(out->why, sizeof out->why, "the module has no inputs");
        return SYMC_OK;
    }
    out->batched = 1;
    out->batch = c.b;
    if (!(c.st = calloc(m->n_tensors ? m->n_tensors : 1, sizeof *c.st)))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "ir_batch_rows: out of memory");
    for (uint32_t t = 0; t < m->n_tensors; t++) c.st[t] = free_state;
    for (uint32_t k = 0; k < m->n_inputs; k++) {
        const ir_tensor *t = &m->tensors[m->inputs[k]];
        c.st[m->inputs[k]] = consistent(&c, IR_NONE, t, rows(0, sym_const(c.t, 1)));
        if (c.st[m->inputs[k]].kind == RW_MIXED) c.st[m->inputs[k]].reason = "B also sizes another of its dims";
    }
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        for (uint32_t o = 0; o < n->n_out; o++) {
            if (n->out[o] == IR_NONE) continue;
            c.st[n->out[o]] = consistent(&c, i, &m->tensors[n->out[o]], transfer(&c, i, o));
        }
    }
    out->independent = 1;
    for (uint32_t k = 0; k < m->n_outputs && out->independent; k++) {
        const ir_tensor *t = &m->tensors[m->outputs[k]];
        rw s = c.st[m->outputs[k]];
        char where[160];
        snprintf(where, sizeof where, "output '%s'", t->name);
        if (s.kind == RW_MIXED) {
            name_mixed(&c, s, where, out->why, sizeof out->why);
            out->independent = 0;
        } else if (s.kind != RW_ROWS || s.axis != 0 || !is_const(&c, s.g, 1)) {
            snprintf(out->why, sizeof out->why, "%s does not have the batch rows at dim 0", where);
            out->independent = 0;
        }
    }
    free(c.st);
    return SYMC_OK;
}
