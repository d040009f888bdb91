/* The layout pass: channels-last regions where a model moves between NCHW
 * and NHWC by transposes.
 *
 * Models written channels-first but computing channels-last (ConvNeXt:
 * depthwise conv, permute to NHWC, LayerNorm and two Linear layers over the
 * channels, permute back, scale, residual add) pay a transpose pair per
 * block. The pass removes them the way a transpose optimizer does, on the
 * module's own ops, so every backend runs the same exact graph:
 *   - a transpose to NHWC of a transpose to NCHW (perms (0,2,3,1) and
 *     (0,3,1,2), rank 4) cancels: the second becomes an identity and its
 *     readers read the first one's input;
 *   - an elementwise node (unary or binary, where included) reading a
 *     transposed tensor computes on the untransposed data and is
 *     transposed after: op(T(a), b) = T(op(a, T⁻¹(b))). The other operands
 *     follow: another T(x) reads x, a constant gets its data permuted once
 *     (broadcast shapes right-aligned, then permuted), a tensor of ones
 *     stays as it is, and any other tensor of the same rank is read through
 *     T⁻¹(x), an existing one reused. The node moves only when that makes
 *     no more transposes than it removes (its own result's transpose
 *     counted), so transposes sink toward the next cancellation and never
 *     multiply;
 *   - a convolution the target runs channels-last (pass_fuse_rules'
 *     conv_channels_last: a kernel that reads NHWC and writes NHWC) whose
 *     result goes only to a transpose to NHWC reads its input through
 *     T(T⁻¹(x)) when x is not already a transpose to NCHW: T⁻¹(x) is the
 *     NHWC copy the residual stream then reuses, and the fuse pass lets the
 *     kernel read and write through both transposes (IR_FUSE_LAYOUT).
 * In a ConvNeXt stage the residual stream then stays NHWC from block to
 * block; transposes remain only at the library convolutions (stem and
 * downsampling) and at the pooling head.
 * The pass visits the original nodes once, in order, so each node sees its
 * inputs' final producers; new nodes are appended and the module is put
 * back in topological order at the end (each new node right before its
 * first reader). Transposes left without readers stay as dead nodes: the
 * fuse pass gives them no step, and the reference backend still runs them
 * (removing nodes needs their tensors removed too; no pass does that yet).
 * Only rank-4 NCHW/NHWC transposes are moved:
 * attention's transposes, which the attention planner reads as they are,
 * are left alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

enum { NO_PERM = IR_PERM_NONE, TO_NHWC = IR_PERM_TO_NHWC, TO_NCHW = IR_PERM_TO_NCHW };
static const int64_t PERMS[3][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}};

typedef struct layout {
    ir_module *m;
    const pass_fuse_rules *rules;
    uint32_t *nread; /* per tensor: readers (a node reading it twice counts twice), graph outputs counted */
    uint32_t *alias; /* per tensor: the tensor its readers read instead (IR_NONE: itself) */
    uint32_t cap;
    symc_error *err;
} layout;

static int inverse(int p) { return p == TO_NHWC ? TO_NCHW : TO_NHWC; }

/* the transpose kind making tensor t (NO_PERM when another op makes it) */
static int made_by(const ir_module *m, uint32_t t) { return ir_layout_perm(m, m->tensors[t].producer); }

static symc_status grow(layout *l) {
    uint32_t n = l->m->n_tensors;
    if (n <= l->cap) return SYMC_OK;
    uint32_t cap = n * 2;
    uint32_t *a = realloc(l->nread, cap * sizeof *a);
    if (!a) return symc_error_setf(l->err, SYMC_ERR_NOMEM, "out of memory in the layout pass");
    l->nread = a;
    uint32_t *b = realloc(l->alias, cap * sizeof *b);
    if (!b) return symc_error_setf(l->err, SYMC_ERR_NOMEM, "out of memory in the layout pass");
    l->alias = b;
    for (uint32_t i = l->cap; i < cap; i++) l->nread[i] = 0, l->alias[i] = IR_NONE;
    l->cap = cap;
    return SYMC_OK;
}

/* node `node` reads `to` where it read `from` (input k) */
static void reroute(layout *l, uint32_t node, uint32_t k, uint32_t to) {
    ir_node *n = &l->m->nodes[node];
    l->nread[n->in[k]]--;
    l->nread[to]++;
    n->in[k] = to;
}

/* a unique node or tensor name "<base>.<what>[.k]" */
static void unique_name(const ir_module *m, char *out, size_t cap, const char *base, const char *what, int node) {
    uint32_t found;
    snprintf(out, cap, "%s.%s", base ? base : "t", what);
    for (unsigned k = 2; (node ? ir_find_node(m, out, &found) : ir_find_tensor(m, out, &found)) && k < 1000000; k++)
        snprintf(out, cap, "%s.%s.%u", base ? base : "t", what, k);
}

/* a new tensor like t (dtype) with t's dims permuted the way a transpose of kind `perm` undoes:
 * T_perm(new) has t's shape */
static symc_status untransposed_like(layout *l, uint32_t t, int perm, uint32_t *out) {
    ir_module *m = l->m;
    sym_expr dims[4];
    for (int d = 0; d < 4; d++) dims[PERMS[perm][d]] = m->tensors[t].dims[d];
    char name[512];
    unique_name(m, name, sizeof name, m->tensors[t].name, perm == TO_NCHW ? "nhwc" : "nchw", 0);
    symc_status st = ir_add_tensor(m, name, m->tensors[t].dtype, 4, dims, out, l->err);
    return st ? st : grow(l);
}

/* appends transpose node src -> dst of kind perm */
static symc_status add_transpose(layout *l, uint32_t src, uint32_t dst, int perm) {
    ir_module *m = l->m;
    char name[512];
    unique_name(m, name, sizeof name, m->tensors[dst].name, "layout", 1);
    ir_attr a = symc_attr_ints("perm", PERMS[perm], 4);
    symc_status st = ir_add_node(m, IR_OP_TRANSPOSE, name, "layout", &src, 1, &dst, 1, &a, 1, NULL, l->err);
    if (!st) l->nread[src]++;
    return st;
}

/* the result of a live transpose of x of that kind already in the module, or IR_NONE */
static uint32_t existing(const layout *l, uint32_t x, int perm) {
    const ir_module *m = l->m;
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].n_in == 1 && m->nodes[i].in[0] == x && ir_layout_perm(m, i) == perm &&
            l->nread[m->nodes[i].out[0]])
            return m->nodes[i].out[0];
    return IR_NONE;
}

/* T_perm(x): an existing live transpose of x of that kind, or a new one */
static symc_status transposed(layout *l, uint32_t x, int perm, uint32_t *out) {
    ir_module *m = l->m;
    if ((*out = existing(l, x, perm)) != IR_NONE) return SYMC_OK;
    /* the new tensor y = T_perm(x) has dims y[d] = x[PERMS[perm][d]] */
    sym_expr dims[4];
    for (int d = 0; d < 4; d++) dims[d] = m->tensors[x].dims[PERMS[perm][d]];
    char name[512];
    unique_name(m, name, sizeof name, m->tensors[x].name, perm == TO_NHWC ? "nhwc" : "nchw", 0);
    symc_status st = ir_add_tensor(m, name, m->tensors[x].dtype, 4, dims, out, l->err);
    if (!st) st = grow(l);
    return st ? st : add_transpose(l, x, *out, perm);
}

/* 1 when an existing live transpose of x of that kind exists */

/* every dim of t is the constant 1 (a scalar included): broadcasting it ignores the layout */
static int all_ones(const ir_module *m, uint32_t t) {
    const ir_tensor *x = &m->tensors[t];
    if (x->rank < 0) return 0;
    for (int d = 0; d < x->rank; d++) {
        int64_t v;
        if (!sym_is_const(m->syms, x->dims[d], &v) || v != 1) return 0;
    }
    return 1;
}

/* constant tensor t of rank <= 4 with constant dims: its data right-aligned to rank 4 (size-1 dims
 * in front) and then read through T_perm⁻¹, so that T_perm(result) broadcasts like t; a new
 * constant node goes with it */
static symc_status permuted_constant(layout *l, uint32_t t, int perm, uint32_t *out) {
    ir_module *m = l->m;
    const ir_tensor *x = &m->tensors[t];
    int64_t in4[4] = {1, 1, 1, 1};
    for (int d = 0; d < x->rank; d++) sym_is_const(m->syms, x->dims[d], &in4[4 - x->rank + d]);
    /* result r with T_perm(r) = in4: r[PERMS[perm][d]] = in4[d] */
    int64_t r4[4];
    for (int d = 0; d < 4; d++) r4[PERMS[perm][d]] = in4[d];
    size_t es = symc_dtype_size(x->dtype), n = (size_t)(in4[0] * in4[1] * in4[2] * in4[3]);
    const ir_constant *k = &m->constants[x->constant];
    if (k->size != n * es)
        return symc_error_setf(l->err, SYMC_ERR_INTERNAL, "layout: constant '%s' holds %zu bytes, not %zu", x->name,
                               k->size, n * es);
    uint8_t *data = malloc(n * es > 0 ? n * es : 1);
    if (!data) return symc_error_setf(l->err, SYMC_ERR_NOMEM, "out of memory permuting constant '%s'", x->name);
    /* element at r-coordinate c sits at in4-coordinate e with e[d] = c[PERMS[perm][d]] */
    int64_t c[4];
    size_t at = 0;
    for (c[0] = 0; c[0] < r4[0]; c[0]++)
        for (c[1] = 0; c[1] < r4[1]; c[1]++)
            for (c[2] = 0; c[2] < r4[2]; c[2]++)
                for (c[3] = 0; c[3] < r4[3]; c[3]++, at++) {
                    int64_t e[4], off = 0;
                    for (int d = 0; d < 4; d++) e[d] = c[PERMS[perm][d]];
                    for (int d = 0; d < 4; d++) off = off * in4[d] + e[d];
                    memcpy(data + at * es, k->data + (size_t)off * es, es);
                }
    uint32_t pool;
    symc_status st = ir_add_constant(m, data, n * es, &pool, l->err); /* takes data */
    if (st) return st;
    sym_expr dims[4];
    for (int d = 0; d < 4; d++) dims[d] = sym_const(m->syms, r4[d]);
    char name[512];
    unique_name(m, name, sizeof name, m->tensors[t].name, perm == TO_NCHW ? "nhwc" : "nchw", 0);
    if ((st = ir_add_tensor(m, name, m->tensors[t].dtype, 4, dims, out, l->err)) || (st = grow(l))) return st;
    m->tensors[*out].constant = pool;
    unique_name(m, name, sizeof name, m->tensors[*out].name, "constant", 1);
    return ir_add_node(m, IR_OP_CONSTANT, name, "layout", NULL, 0, out, 1, NULL, 0, NULL, l->err);
}

/* t's values are a constant of rank <= 4 with constant dims (through identities) */
static int is_constant(const ir_module *m, uint32_t t) {
    t = ir_constant_source(m, t);
    if (t == IR_NONE) return 0;
    const ir_tensor *x = &m->tensors[t];
    if (x->rank < 0 || x->rank > 4) return 0;
    for (int d = 0; d < x->rank; d++)
        if (!sym_is_const(m->syms, x->dims[d], NULL)) return 0;
    return 1;
}

/* transpose node i reading a transpose of the inverse kind: an identity of that one's input */
static void cancel(layout *l, uint32_t i) {
    ir_module *m = l->m;
    uint32_t p = m->tensors[m->nodes[i].in[0]].producer, src = m->nodes[p].in[0];
    reroute(l, i, 0, src);
    ir_node *n = &m->nodes[i];
    n->op = IR_OP_IDENTITY;
    n->n_attrs = 0;
    n->attrs = NULL;
    /* later readers read src directly; a graph output keeps the identity as its producer */
    uint32_t y = n->out[0];
    int output = 0;
    for (uint32_t k = 0; k < m->n_outputs; k++) output |= m->outputs[k] == y;
    if (!output) l->alias[y] = src;
}

/* elementwise node i: moves a transpose of its operands to its result when that costs no
 * transpose (see the file comment) */
static symc_status sink(layout *l, uint32_t i) {
    ir_module *m = l->m;
    const ir_node *n = &m->nodes[i];
    if (n->n_out != 1 || m->tensors[n->out[0]].rank != 4) return SYMC_OK;
    int perm = NO_PERM;
    for (uint32_t k = 0; k < n->n_in && !perm; k++) perm = made_by(m, n->in[k]);
    if (!perm) return SYMC_OK;
    /* cost: transposes made (the result's, and T⁻¹ of plain operands) against those dying */
    int added = 1, removed = 0;
    for (uint32_t k = 0; k < n->n_in; k++) {
        uint32_t t = n->in[k];
        int dup = 0;
        for (uint32_t j = 0; j < k; j++) dup |= n->in[j] == t;
        if (dup) continue;
        if (made_by(m, t) == perm) {
            uint32_t reads = 0;
            for (uint32_t j = 0; j < n->n_in; j++) reads += n->in[j] == t;
            removed += l->nread[t] == reads;
        } else if (is_constant(m, t) || all_ones(m, t)) {
            continue;
        } else if (m->tensors[t].rank == 4) {
            added += existing(l, t, inverse(perm)) == IR_NONE;
        } else {
            return SYMC_OK; /* a lower-rank operand that broadcasts: left as it is */
        }
    }
    if (added > removed) return SYMC_OK;
    for (uint32_t k = 0; k < m->nodes[i].n_in; k++) {
        uint32_t t = m->nodes[i].in[k], to;
        symc_status st = SYMC_OK;
        if (made_by(m, t) == perm) to = m->nodes[m->tensors[t].producer].in[0];
        else if (all_ones(m, t)) continue;
        else if (is_constant(m, t)) st = permuted_constant(l, ir_constant_source(m, t), perm, &to);
        else st = transposed(l, t, inverse(perm), &to);
        if (st) return st;
        reroute(l, i, k, to);
    }
    uint32_t y = m->nodes[i].out[0], y2;
    symc_status st = untransposed_like(l, y, perm, &y2);
    if (st) return st;
    m->nodes[i].out[0] = y2;
    m->tensors[y2].producer = i;
    return add_transpose(l, y2, y, perm);
}

/* convolution i run channels-last, its result read only by a transpose to NHWC: its input
 * comes through T_nchw(T_nhwc(x)) unless x already is a transpose to NCHW */
static symc_status channels_last_conv(layout *l, uint32_t i) {
    ir_module *m = l->m;
    const ir_node *n = &m->nodes[i];
    if (!l->rules || !l->rules->conv_channels_last || !l->rules->conv_channels_last(m, i)) return SYMC_OK;
    uint32_t y = n->out[0], x = n->in[0];
    if (l->nread[y] != 1 || made_by(m, x) == TO_NCHW) return SYMC_OK;
    int read_by_nhwc = 0;
    for (uint32_t k = 0; k < m->n_nodes && !read_by_nhwc; k++)
        read_by_nhwc = m->nodes[k].n_in == 1 && m->nodes[k].in[0] == y && ir_layout_perm(m, k) == TO_NHWC;
    if (!read_by_nhwc) return SYMC_OK;
    uint32_t nhwc, back;
    symc_status st = transposed(l, x, TO_NHWC, &nhwc);
    if (!st) st = untransposed_like(l, nhwc, TO_NHWC, &back); /* T_nchw(nhwc) has x's shape */
    if (st) return st;
    /* untransposed_like named it after nhwc; its dims: back[PERMS[NHWC][d]] = nhwc[d], i.e. x's */
    if ((st = add_transpose(l, nhwc, back, TO_NCHW))) return st;
    reroute(l, i, 0, back);
    return SYMC_OK;
}

/* node order: topological again after the appends, original nodes in their order and each new
 * node right before its first reader (unread ones at the end) */
static symc_status sort(layout *l) {
    ir_module *m = l->m;
    uint32_t n = m->n_nodes;
    uint32_t *order = malloc((size_t)n * sizeof *order), *stack = malloc((size_t)n * 2 * sizeof *stack);
    uint8_t *state = calloc(n, 1); /* 1: on the stack, 2: placed */
    ir_node *old = malloc((size_t)n * sizeof *old);
    if (!order || !stack || !state || !old) {
        free(order), free(stack), free(state), free(old);
        return symc_error_setf(l->err, SYMC_ERR_NOMEM, "out of memory ordering the nodes");
    }
    uint32_t placed = 0;
    for (uint32_t root = 0; root < n; root++) {
        if (state[root]) continue;
        uint32_t sp = 0;
        stack[sp++] = root;
        state[root] = 1;
        while (sp) {
            uint32_t v = stack[sp - 1], next = IR_NONE;
            for (uint32_t k = 0; k < m->nodes[v].n_in && next == IR_NONE; k++) {
                uint32_t p = m->tensors[m->nodes[v].in[k]].producer;
                if (p != IR_NONE && !state[p]) next = p;
            }
            if (next == IR_NONE) {
                order[placed++] = v;
                state[v] = 2;
                sp--;
            } else {
                state[next] = 1;
                stack[sp++] = next;
            }
        }
    }
    memcpy(old, m->nodes, (size_t)n * sizeof *old);
    for (uint32_t i = 0; i < n; i++) {
        m->nodes[i] = old[order[i]];
        for (uint32_t o = 0; o < m->nodes[i].n_out; o++) m->tensors[m->nodes[i].out[o]].producer = i;
    }
    free(order), free(stack), free(state), free(old);
    return SYMC_OK;
}

symc_status pass_layout(ir_module *m, const pass_fuse_rules *rules, symc_error *err) {
    int any = 0;
    for (uint32_t i = 0; i < m->n_nodes && !any; i++) any = ir_layout_perm(m, i) != NO_PERM;
    if (!any) return SYMC_OK;
    layout l = {m, rules, NULL, NULL, 0, err};
    symc_status st = grow(&l);
    for (uint32_t i = 0; i < m->n_nodes && !st; i++)
        for (uint32_t k = 0; k < m->nodes[i].n_in; k++) l.nread[m->nodes[i].in[k]]++;
    for (uint32_t k = 0; k < m->n_outputs && !st; k++) l.nread[m->outputs[k]]++;
    uint32_t n0 = m->n_nodes, moved = 0;
    for (uint32_t i = 0; i < n0 && !st; i++) {
        for (uint32_t k = 0; k < m->nodes[i].n_in; k++)
            if (l.alias[m->nodes[i].in[k]] != IR_NONE) reroute(&l, i, k, l.alias[m->nodes[i].in[k]]);
        ir_op op = m->nodes[i].op;
        int kind = ir_layout_perm(m, i);
        if (kind && made_by(m, m->nodes[i].in[0]) == inverse(kind)) cancel(&l, i), moved++;
        else if (ir_op_is_elementwise(op) && op != IR_OP_EXPAND) st = sink(&l, i);
        else if (op == IR_OP_CONV2D && m->nodes[i].n_out == 1) st = channels_last_conv(&l, i);
    }
    if (!st && (m->n_nodes != n0 || moved)) st = sort(&l);
    free(l.nread);
    free(l.alias);
    return st;
}
