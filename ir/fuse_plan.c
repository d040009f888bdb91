/* The fusion plan: one (role, group) entry per node, made by the fuse pass
 * (passes/fuse.c), read by the CUDA target, printed by print.c and checked
 * here as part of ir_verify.
 *
 * The plan stores only who belongs to which group and as what; where a
 * member sits in its group follows from the graph, so the lookups below
 * walk it (a fused attention is the exception: what the attention pass
 * matched, views and score function, is stored whole, ir_attention, since
 * the emitter must not match again); a row kernel's epilogue is reached from its result through the
 * inlined nodes reading it, its "row first" op produces its data input, and
 * a library call's bias, activation and residual read its result one after
 * the other. The check is what lets the target trust a plan it did not
 * make: it refuses entries that do not cover the module, roles on ops that
 * cannot have them, members whose root is of the wrong kind or whose place
 * the lookups would not find, a dead mark on a node whose result is used
 * (or none on one whose is not), a result other than the group's last
 * node's read outside the group, and a member reading a tensor made after
 * its root's place in node order (the step runs there). */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const role_names[IR_FUSE_ROLE_COUNT] = {
    [IR_FUSE_STEP] = "step",           [IR_FUSE_LIBRARY] = "library call",
    [IR_FUSE_ATTENTION] = "attention", [IR_FUSE_DEAD] = "dead",
    [IR_FUSE_INLINED] = "inlined",     [IR_FUSE_EPILOGUE] = "epilogue",
    [IR_FUSE_ROW_FIRST] = "row first", [IR_FUSE_TRANSPOSE] = "transpose",
    [IR_FUSE_BIAS] = "bias",           [IR_FUSE_ACTIVATION] = "activation",
    [IR_FUSE_RESIDUAL] = "residual",   [IR_FUSE_CLAIMED] = "claimed",
    [IR_FUSE_LAYOUT] = "layout",       [IR_FUSE_VIEW] = "view",
};

const char *ir_fuse_role_name(ir_fuse_role r) { return (unsigned)r < IR_FUSE_ROLE_COUNT ? role_names[r] : "?"; }

int ir_fuse_is_root(ir_fuse_role r) { return r == IR_FUSE_STEP || r == IR_FUSE_LIBRARY || r == IR_FUSE_ATTENTION; }

symc_status ir_fuse_new(ir_module *m, const char *target, symc_error *err) {
    ir_fuse_drop(m);
    ir_fuse *f = malloc((m->n_nodes ? m->n_nodes : 1) * sizeof *f);
    if (!f) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory planning fusion");
    for (uint32_t i = 0; i < m->n_nodes; i++) f[i] = (ir_fuse){IR_FUSE_STEP, i};
    m->fuse = f;
    m->n_fuse = m->n_nodes;
    m->fuse_target = target ? target : "";
    return SYMC_OK;
}

void ir_fuse_drop(ir_module *m) {
    free(m->fuse);
    m->fuse = NULL;
    m->n_fuse = 0;
    m->fuse_target = NULL;
    free(m->attention);
    m->attention = NULL;
    m->n_attention = 0;
}

symc_status ir_fuse_add_attention(ir_module *m, const ir_attention *a, symc_error *err) {
    ir_attention *grown = realloc(m->attention, (m->n_attention + 1) * sizeof *grown);
    if (!grown) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory planning fusion");
    m->attention = grown;
    m->attention[m->n_attention++] = *a;
    return SYMC_OK;
}

const ir_attention *ir_fuse_attention_of(const ir_module *m, uint32_t node) {
    for (uint32_t i = 0; i < m->n_attention; i++)
        if (m->attention[i].mm2 == node) return &m->attention[i];
    return NULL;
}

/* ---- lookups ------------------------------------------------------------------------------ */
static ir_fuse_role role_of(const ir_module *m, uint32_t node) { return (ir_fuse_role)m->fuse[node].role; }

static int epilogue_rank(ir_fuse_role r);

uint32_t ir_fuse_library_result(const ir_module *m, const ir_uses *u, uint32_t lib) {
    uint32_t t = m->nodes[lib].out[0];
    for (int hops = 0; m->fuse && hops < 4; hops++) {
        uint32_t k = ir_fuse_reader_in_group(m, u, lib, t);
        if (k == IR_NONE || !epilogue_rank(role_of(m, k))) break;
        t = m->nodes[k].out[0];
    }
    return t;
}

uint32_t ir_fuse_epilogue_of(const ir_module *m, const ir_uses *u, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    if (!m->fuse || n->n_out != 1) return IR_NONE;
    int lib = role_of(m, node) == IR_FUSE_LIBRARY;
    /* a library call's epilogue reads the result of its last member (bias, residual, activation) */
    uint32_t t = lib ? ir_fuse_library_result(m, u, node) : n->out[0];
    for (int hops = 0; hops < 256; hops++) {
        /* a library call's result may have several readers in the group (the fuse pass checks that
         * all are; ir_fuse_check that none is outside it): the last one leads to the group's root */
        int shared = hops == 0 && lib;
        if (shared ? t >= u->n_tensors || u->is_output[t] || !u->n_consumers[t] : !ir_uses_private(u, t))
            return IR_NONE;
        uint32_t k = u->consumer[t];
        if (role_of(m, k) == IR_FUSE_EPILOGUE) return m->fuse[k].group == node ? k : IR_NONE;
        if (role_of(m, k) != IR_FUSE_INLINED || m->nodes[k].n_out != 1) return IR_NONE;
        t = m->nodes[k].out[0];
    }
    return IR_NONE;
}

uint32_t ir_fuse_row_first_of(const ir_module *m, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    if (!m->fuse || n->n_in < 1) return IR_NONE;
    uint32_t p = m->tensors[n->in[0]].producer;
    return p != IR_NONE && role_of(m, p) == IR_FUSE_ROW_FIRST && m->fuse[p].group == node ? p : IR_NONE;
}

uint32_t ir_fuse_reader_in_group(const ir_module *m, const ir_uses *u, uint32_t node, uint32_t t) {
    if (!m->fuse || !ir_uses_private(u, t)) return IR_NONE;
    uint32_t k = u->consumer[t];
    return k != node && m->fuse[k].group == node ? k : IR_NONE;
}

/* ---- the check -------------------------------------------------------------------------------- */
/* the root role a member role needs */
static ir_fuse_role root_for(ir_fuse_role r) {
    switch (r) {
    case IR_FUSE_TRANSPOSE:
    case IR_FUSE_BIAS:
    case IR_FUSE_ACTIVATION:
    case IR_FUSE_RESIDUAL:
    case IR_FUSE_VIEW: return IR_FUSE_LIBRARY;
    case IR_FUSE_CLAIMED: return IR_FUSE_ATTENTION;
    default: return IR_FUSE_STEP;
    }
}

static int is_row_op(ir_op op) {
    return op == IR_OP_SOFTMAX || op == IR_OP_LOG_SOFTMAX || op == IR_OP_LAYER_NORM || op == IR_OP_RMS_NORM;
}

/* the op may have the role */
static int op_fits(ir_op op, ir_fuse_role r) {
    switch (r) {
    case IR_FUSE_LIBRARY: return ir_op_get(op)->category == IR_CAT_CONTRACT;
    case IR_FUSE_ATTENTION: return op == IR_OP_MATMUL;
    case IR_FUSE_INLINED:
    case IR_FUSE_EPILOGUE: return ir_op_is_elementwise(op);
    case IR_FUSE_ROW_FIRST: return is_row_op(op);
    case IR_FUSE_TRANSPOSE:
    case IR_FUSE_LAYOUT: return op == IR_OP_TRANSPOSE;
    case IR_FUSE_BIAS:
    case IR_FUSE_RESIDUAL: return op == IR_OP_ADD;
    case IR_FUSE_ACTIVATION: return ir_op_get(op)->category == IR_CAT_UNARY;
    case IR_FUSE_VIEW: return op == IR_OP_RESHAPE;
    default: return 1;
    }
}

/* node k reads t as its data input in[0] only, or is elementwise (which
 * computes an inlined producer wherever it reads it) */
static int reads_as_data(const ir_module *m, uint32_t k, uint32_t t) {
    const ir_node *n = &m->nodes[k];
    if (ir_op_is_elementwise(n->op)) return 1;
    if (n->n_in < 1 || n->in[0] != t) return 0;
    for (uint32_t i = 1; i < n->n_in; i++)
        if (n->in[i] == t) return 0;
    return 1;
}

typedef struct checker {
    ir_module *m;
    ir_uses u;
    symc_error *err;
} checker;

/* "fusion plan: node 'a' (add), bias of 'mm': <what><detail>" */
static symc_status bad(checker *c, uint32_t node, const char *what, const char *detail) {
    const ir_node *n = &c->m->nodes[node];
    ir_fuse e = c->m->fuse[node];
    ir_fuse_role r = (ir_fuse_role)e.role;
    char role[200];
    if (ir_fuse_is_root(r) || r == IR_FUSE_DEAD || e.group >= c->m->n_nodes || e.group == node)
        snprintf(role, sizeof role, "%s", ir_fuse_role_name(r));
    else snprintf(role, sizeof role, "%s of '%s'", ir_fuse_role_name(r), c->m->nodes[e.group].name);
    return symc_error_setf(c->err, SYMC_ERR_VERIFY, "fusion plan: node '%s' (%s), %s: %s%s", n->name,
                           ir_op_get(n->op)->name, role, what, detail);
}

/* position of an epilogue role in the chain the libraries compute:
 * act(op + residual + bias), each at most once; a view (the same elements reshaped) only
 * right before the residual, or before the activation when there is none */
static int epilogue_rank(ir_fuse_role r) {
    return r == IR_FUSE_BIAS ? 1 : r == IR_FUSE_VIEW ? 2 : r == IR_FUSE_RESIDUAL ? 3 : r == IR_FUSE_ACTIVATION ? 4 : 0;
}

/* the library-call epilogue chain from root g's result: bias, a view, residual,
 * activation, each reading the one before, in that order (any may be
 * absent; a view only when the residual or the activation follows it); node i must be on it */
static symc_status check_chain(checker *c, uint32_t g, uint32_t i) {
    const ir_module *m = c->m;
    uint32_t t = m->nodes[g].out[0];
    int prev = 0;
    for (int hops = 0; hops < 4; hops++) {
        uint32_t k = ir_fuse_reader_in_group(m, &c->u, g, t);
        if (k == IR_NONE) break;
        int r = epilogue_rank(role_of(m, k));
        if (!r) break;
        if (r <= prev)
            return bad(
                c, k, "the library call's epilogue must be bias, then a view and its residual, then an activation", "");
        if (role_of(m, k) == IR_FUSE_VIEW) {
            uint32_t after = ir_fuse_reader_in_group(m, &c->u, g, m->nodes[k].out[0]);
            if (m->nodes[k].n_in != 1 || after == IR_NONE ||
                (role_of(m, after) != IR_FUSE_RESIDUAL && role_of(m, after) != IR_FUSE_ACTIVATION))
                return bad(c, k,
                           "a view must reshape the result alone and be read by the call's residual add or activation",
                           "");
        }
        if (k == i) return SYMC_OK;
        prev = r;
        t = m->nodes[k].out[0];
    }
    return bad(c, i, "it does not read the library call's result (or the member of the group before it)", "");
}

/* one entry on its own: role, root, op, dead mark, where the member sits */
static symc_status check_entry(checker *c, uint32_t i) {
    ir_module *m = c->m;
    const ir_node *n = &m->nodes[i];
    ir_fuse e = m->fuse[i];
    if (e.role >= IR_FUSE_ROLE_COUNT)
        return symc_error_setf(c->err, SYMC_ERR_VERIFY, "fusion plan: node '%s' (%s) has role %u, which is not a role",
                               n->name, ir_op_get(n->op)->name, e.role);
    ir_fuse_role r = (ir_fuse_role)e.role;
    if (r == IR_FUSE_DEAD) {
        if (c->u.live[i]) return bad(c, i, "it is marked dead, but a graph output needs its result", "");
        return e.group == IR_NONE ? SYMC_OK : bad(c, i, "a dead node belongs to no group", "");
    }
    if (!c->u.live[i]) return bad(c, i, "no graph output needs its result, but it is not marked dead", "");
    if (!op_fits(n->op, r)) return bad(c, i, "its op cannot have this role", "");
    if (ir_fuse_is_root(r)) return e.group == i ? SYMC_OK : bad(c, i, "a root must be its own group", "");
    if (e.group >= m->n_nodes || e.group == i) return bad(c, i, "its group names no other node", "");
    /* an elementwise group is a library call's epilogue, its nodes under the library root */
    ir_fuse_role want = (r == IR_FUSE_EPILOGUE || r == IR_FUSE_INLINED) && role_of(m, e.group) == IR_FUSE_LIBRARY
        ? IR_FUSE_LIBRARY
        : root_for(r);
    if (role_of(m, e.group) != want) {
        char detail[96];
        snprintf(detail, sizeof detail, "'%s', not '%s'", ir_fuse_role_name(want),
                 ir_fuse_role_name(role_of(m, e.group)));
        return bad(c, i, "its root must have role ", detail);
    }
    const ir_node *g = &m->nodes[e.group];
    uint32_t y = n->n_out == 1 ? n->out[0] : IR_NONE;
    switch (r) {
    case IR_FUSE_INLINED:
        if (y == IR_NONE || !ir_uses_private(&c->u, y))
            return bad(c, i, "an inlined node's result must have one reader and not be a graph output", "");
        if (m->fuse[c->u.consumer[y]].group != e.group) return bad(c, i, "its reader is in another group", "");
        if (!reads_as_data(m, c->u.consumer[y], y))
            return bad(c, i, "its reader is neither elementwise nor reads it as its data input (in[0]) alone", "");
        return SYMC_OK;
    case IR_FUSE_ROW_FIRST:
        if (y == IR_NONE || !ir_uses_private(&c->u, y) || ir_fuse_row_first_of(m, e.group) != i ||
            !reads_as_data(m, e.group, y))
            return bad(c, i, "its result must be the root's data input (in[0]) and read by nothing else", "");
        return SYMC_OK;
    case IR_FUSE_EPILOGUE:
        if (ir_fuse_epilogue_of(m, &c->u, e.group) != i)
            return bad(c, i, "it is not reached from the root's result through inlined nodes alone", "");
        return SYMC_OK;
    case IR_FUSE_TRANSPOSE:
        if (y == IR_NONE || !ir_uses_private(&c->u, y) || c->u.consumer[y] != e.group || g->n_in < 2 ||
            (g->in[0] != y && g->in[1] != y))
            return bad(c, i, "its result must be an operand (in[0] or in[1]) of the root alone", "");
        return SYMC_OK;
    case IR_FUSE_LAYOUT: {
        uint32_t x = n->in[0];
        int before = y != IR_NONE && ir_uses_private(&c->u, y) && c->u.consumer[y] == e.group &&
            reads_as_data(m, e.group, y);
        int after = g->n_out == 1 && g->out[0] == x && ir_uses_private(&c->u, x) && c->u.consumer[x] == i;
        if (!before && !after)
            return bad(c, i, "it must make the root's data input (in[0]) alone, or be the one reader of its result",
                       "");
        return SYMC_OK;
    }
    case IR_FUSE_BIAS:
    case IR_FUSE_ACTIVATION:
    case IR_FUSE_RESIDUAL:
    case IR_FUSE_VIEW:
        if (g->n_out != 1 || y == IR_NONE) return bad(c, i, "the root and the member must make one result each", "");
        return check_chain(c, e.group, i);
    default: return SYMC_OK;
    }
}

/* results leave a group only from its last node; members read nothing made
 * after their root */
static symc_status check_groups(checker *c, uint32_t *last) {
    ir_module *m = c->m;
    for (uint32_t i = 0; i < m->n_nodes; i++) last[i] = IR_NONE;
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (m->fuse[i].group != IR_NONE) last[m->fuse[i].group] = i;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        uint32_t g = m->fuse[i].group;
        if (g == IR_NONE) continue;
        for (uint32_t k = 0; k < n->n_in; k++) {
            uint32_t t = n->in[k], p = m->tensors[t].producer;
            if (p == IR_NONE) continue;
            uint32_t pg = m->fuse[p].group;
            if (pg == IR_NONE) continue; /* not reached: a node a live node reads is live */
            if (pg != g && p != last[pg]) {
                char detail[300];
                snprintf(detail, sizeof detail, "node '%s' (%s), outside the group, reads its result '%s'", n->name,
                         ir_op_get(n->op)->name, m->tensors[t].name);
                return bad(c, p, "only the last node of a group may make a result read outside it; ", detail);
            }
            if (i != g && pg != g && p > g && m->nodes[p].op != IR_OP_CONSTANT) {
                char detail[300];
                snprintf(detail, sizeof detail, "it reads '%s', which node '%s' makes after the root's place",
                         m->tensors[t].name, m->nodes[p].name);
                return bad(c, i, "a member must read only what is computed before its root runs; ", detail);
            }
        }
    }
    for (uint32_t i = 0; i < m->n_outputs; i++) {
        uint32_t p = m->tensors[m->outputs[i]].producer;
        if (p != IR_NONE && m->fuse[p].group != IR_NONE && p != last[m->fuse[p].group])
            return bad(c, p, "only the last node of a group may make a graph output; it makes ",
                       m->tensors[m->outputs[i]].name);
    }
    return SYMC_OK;
}

/* each attention root has one fused attention, computing exactly its claimed members */
static symc_status check_attention(checker *c) {
    ir_module *m = c->m;
    for (uint32_t i = 0; i < m->n_attention; i++) {
        uint32_t r = m->attention[i].mm2;
        if (r >= m->n_nodes || role_of(m, r) != IR_FUSE_ATTENTION || ir_fuse_attention_of(m, r) != &m->attention[i])
            return symc_error_setf(c->err, SYMC_ERR_VERIFY,
                                   "fusion plan: fused attention %u is at no attention root of its own", i);
    }
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (role_of(m, i) != IR_FUSE_ATTENTION) continue;
        const ir_attention *a = ir_fuse_attention_of(m, i);
        if (!a) return bad(c, i, "an attention root needs its fused attention (the matched pattern)", "");
        uint32_t claimed = 0;
        for (uint32_t k = 0; k < m->n_nodes; k++) claimed += role_of(m, k) == IR_FUSE_CLAIMED && m->fuse[k].group == i;
        int ok = a->n_covered == claimed;
        for (uint32_t j = 0; j < a->n_covered && ok; j++)
            ok = a->covered[j] < m->n_nodes && role_of(m, a->covered[j]) == IR_FUSE_CLAIMED &&
                m->fuse[a->covered[j]].group == i;
        if (!ok) return bad(c, i, "the nodes its fused attention computes are not its claimed members", "");
    }
    return SYMC_OK;
}

symc_status ir_fuse_check(ir_module *m, symc_error *err) {
    if (!m->fuse) return SYMC_OK;
    if (m->n_fuse != m->n_nodes)
        return symc_error_setf(err, SYMC_ERR_VERIFY,
                               "fusion plan: %u entries for %u nodes (the module changed after the fuse pass)",
                               m->n_fuse, m->n_nodes);
    checker c = {.m = m, .err = err};
    symc_status st = ir_uses_compute(m, &c.u, err);
    if (st) return st;
    for (uint32_t i = 0; i < m->n_nodes && !st; i++) st = check_entry(&c, i);
    if (!st) {
        uint32_t *last = malloc((m->n_nodes ? m->n_nodes : 1) * sizeof *last);
        st = last ? check_groups(&c, last)
                  : symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory checking the fusion plan");
        free(last);
    }
    if (!st) st = check_attention(&c);
    ir_uses_free(&c.u);
    return st;
}
