/* The text printer: the readable form of a module, shown by `symc inspect`
 * and `--dump-after`, and compared byte for byte in round-trip tests, so
 * it is deterministic (declaration order, fixed number formats, constants by
 * size and checksum rather than by content).
 *
 * A module with a fusion plan ends with its fused groups (one line per
 * group: the root, its kind, the members with their roles; then the dead
 * nodes); without one the text is as before, so round trips through .symir
 * files, which do not keep the plan, compare equal for unplanned modules.
 *
 * Output goes through a write callback; the library itself never prints. A
 * small buffered writer formats each line with vsnprintf and falls back to a
 * heap buffer for the rare line longer than the stack buffer. */
#include "ir/ir.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct printer {
    ir_module *m;
    ir_write_fn write;
    void *ctx;
} printer;

static void out(printer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out(printer *p, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof buf) {
        p->write(p->ctx, buf, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        p->write(p->ctx, buf, sizeof buf - 1);
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    p->write(p->ctx, big, (size_t)n);
    free(big);
}

static void dim(printer *p, sym_expr e) {
    if (e == SYM_NONE) {
        out(p, "-1");
        return;
    }
    char buf[256];
    size_t n = sym_print(p->m->syms, e, buf, sizeof buf);
    if (n < sizeof buf) {
        out(p, "%s", buf);
        return;
    }
    char *big = malloc(n + 1);
    if (!big) {
        out(p, "%s", buf);
        return;
    }
    sym_print(p->m->syms, e, big, n + 1);
    out(p, "%s", big);
    free(big);
}

static void tensor_type(printer *p, const ir_tensor *t) {
    out(p, "%s", symc_dtype_name(t->dtype));
    if (t->rank < 0) {
        out(p, "[?]");
        return;
    }
    out(p, "[");
    for (int i = 0; i < t->rank; i++) {
        if (i) out(p, ", ");
        dim(p, t->dims[i]);
    }
    out(p, "]");
}

static void attr(printer *p, const ir_attr *a) {
    out(p, "%s=", a->name);
    switch (a->kind) {
    case IR_ATTR_INT: out(p, "%" PRId64, a->i); break;
    case IR_ATTR_FLOAT: out(p, "%.9g", a->f); break;
    case IR_ATTR_STR: out(p, "\"%s\"", a->s); break;
    case IR_ATTR_DTYPE: out(p, "%s", symc_dtype_name((symc_dtype)a->i)); break;
    case IR_ATTR_INTS:
    case IR_ATTR_FLOATS:
    case IR_ATTR_DIMS:
        out(p, "[");
        for (uint32_t i = 0; i < a->n; i++) {
            if (i) out(p, ", ");
            if (a->kind == IR_ATTR_INTS) out(p, "%" PRId64, a->ints[i]);
            else if (a->kind == IR_ATTR_FLOATS) out(p, "%.9g", a->floats[i]);
            else dim(p, a->dims[i]);
        }
        out(p, "]");
        break;
    }
}

static uint32_t fnv1a(const uint8_t *d, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ d[i]) * 16777619u;
    return h;
}

static const char *rel_text(sym_rel r) {
    switch (r) {
    case SYM_REL_EQ: return "==";
    case SYM_REL_NE: return "!=";
    case SYM_REL_LE: return "<=";
    case SYM_REL_LT: return "<";
    case SYM_REL_DIVISIBLE: return "divisible by";
    case SYM_REL_BROADCAST: return "broadcasts with";
    }
    return "?";
}

/* The fused groups: one line per group with members, per library call and
 * per attention (root, then the members in node order with their roles),
 * then the dead nodes. Plain steps of one node are not listed. */
static void fused_groups(printer *p) {
    ir_module *m = p->m;
    out(p, "fused groups (%s):", m->fuse_target ? m->fuse_target : "");
    uint32_t nn = m->n_nodes;
    uint32_t *next = malloc((nn ? nn : 1) * sizeof *next), *tail = malloc((nn ? nn : 1) * sizeof *tail);
    if (!next || !tail) {
        out(p, " (out of memory listing them)\n");
        free(next);
        free(tail);
        return;
    }
    /* each root's members as a list in node order: next[root] is the first, next[member] the
     * one after it (a node is a root or a member, never both), tail[root] the last */
    for (uint32_t i = 0; i < nn; i++) next[i] = tail[i] = IR_NONE;
    uint32_t shown = 0, dead = 0;
    for (uint32_t i = 0; i < nn; i++) {
        uint32_t g = m->fuse[i].group;
        dead += m->fuse[i].role == IR_FUSE_DEAD;
        if (g == IR_NONE || g == i || g >= nn) continue;
        if (tail[g] == IR_NONE) next[g] = i;
        else next[tail[g]] = i;
        tail[g] = i;
    }
    for (uint32_t i = 0; i < nn; i++) {
        ir_fuse_role r = (ir_fuse_role)m->fuse[i].role;
        if (!ir_fuse_is_root(r) || m->fuse[i].group != i || (r == IR_FUSE_STEP && tail[i] == IR_NONE)) continue;
        const ir_node *n = &m->nodes[i];
        out(p, "\n  %s (%s): %s", n->name, ir_op_get(n->op)->name, r == IR_FUSE_STEP ? "kernel" : ir_fuse_role_name(r));
        for (uint32_t k = next[i], first = 1; k != IR_NONE; k = next[k]) {
            out(p, "%s%s (%s)", first ? " with " : ", ", m->nodes[k].name,
                ir_fuse_role_name((ir_fuse_role)m->fuse[k].role));
            first = 0;
        }
        shown++;
    }
    if (dead) {
        out(p, "\n  dead:");
        for (uint32_t i = 0, first = 1; i < nn; i++)
            if (m->fuse[i].role == IR_FUSE_DEAD) {
                out(p, "%s %s", first ? "" : ",", m->nodes[i].name);
                first = 0;
            }
    }
    out(p, "%s\n", shown || dead ? "" : " none");
    free(next);
    free(tail);
}

void ir_print(ir_module *m, ir_write_fn write, void *ctx) {
    printer pr = {m, write, ctx}, *p = &pr;
    out(p, "module %s\n", m->name);

    uint32_t ns = sym_symbol_count(m->syms);
    out(p, "symbols:%s\n", ns ? "" : " none");
    for (sym_id i = 0; i < ns; i++) {
        sym_symbol_info s;
        sym_symbol_get(m->syms, i, &s);
        out(p, "  %s in [%" PRId64 ", %" PRId64 "] opt %" PRId64, s.name, s.min, s.max, s.opt);
        if (s.multiple_of > 1) out(p, " multiple of %" PRId64, s.multiple_of);
        if (s.provenance && *s.provenance) out(p, "  # %s", s.provenance);
        out(p, "\n");
    }
    uint32_t ng = sym_guard_count(m->syms);
    if (ng) {
        out(p, "guards:\n");
        for (uint32_t i = 0; i < ng; i++) {
            sym_guard g;
            sym_guard_get(m->syms, i, &g);
            out(p, "  ");
            dim(p, g.lhs);
            out(p, " %s ", rel_text(g.rel));
            dim(p, g.rhs);
            if (g.provenance && *g.provenance) out(p, "  # %s", g.provenance);
            out(p, "\n");
        }
    }

    out(p, "inputs:%s\n", m->n_inputs ? "" : " none");
    for (uint32_t i = 0; i < m->n_inputs; i++) {
        const ir_tensor *t = &m->tensors[m->inputs[i]];
        out(p, "  %s: ", t->name);
        tensor_type(p, t);
        out(p, "\n");
    }

    out(p, "nodes:%s\n", m->n_nodes ? "" : " none");
    for (uint32_t ni = 0; ni < m->n_nodes; ni++) {
        const ir_node *n = &m->nodes[ni];
        out(p, "  ");
        for (uint32_t k = 0; k < n->n_out; k++) {
            const ir_tensor *t = &m->tensors[n->out[k]];
            out(p, "%s%s: ", k ? ", " : "", t->name);
            tensor_type(p, t);
        }
        const ir_op_info *info = ir_op_get(n->op);
        out(p, " = %s", info ? info->name : "?");
        if (n->op == IR_OP_CONSTANT) {
            const ir_tensor *t = &m->tensors[n->out[0]];
            if (t->constant < m->n_constants) {
                const ir_constant *c = &m->constants[t->constant];
                out(p, " <%zu bytes, fnv1a %08x>", c->size, fnv1a(c->data, c->size));
            }
        } else {
            out(p, "(");
            for (uint32_t k = 0; k < n->n_in; k++)
                out(p, "%s%s", k ? ", " : "", n->in[k] < m->n_tensors ? m->tensors[n->in[k]].name : "?");
            out(p, ")");
        }
        for (uint32_t k = 0; k < n->n_attrs; k++) {
            out(p, k ? ", " : " {");
            attr(p, &n->attrs[k]);
            if (k + 1 == n->n_attrs) out(p, "}");
        }
        /* the node name is shown when it is not simply its single output's */
        if (n->n_out != 1 || strcmp(n->name, m->tensors[n->out[0]].name) != 0) out(p, "  @%s", n->name);
        if (n->source && *n->source) out(p, "  # %s", n->source);
        out(p, "\n");
    }

    out(p, "outputs:%s\n", m->n_outputs ? "" : " none");
    for (uint32_t i = 0; i < m->n_outputs; i++) {
        const ir_tensor *t = &m->tensors[m->outputs[i]];
        out(p, "  %s: ", t->name);
        tensor_type(p, t);
        out(p, "\n");
    }
    if (m->fuse && m->n_fuse == m->n_nodes) fused_groups(p);
}

typedef struct strbuf {
    char *data;
    size_t len, cap;
    int failed;
} strbuf;

static void strbuf_write(void *ctx, const char *text, size_t len) {
    strbuf *b = ctx;
    if (b->failed) return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap < b->len + len + 1) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, text, len);
    b->len += len;
    b->data[b->len] = '\0';
}

char *ir_print_to_string(ir_module *m) {
    strbuf b = {0};
    strbuf_write(&b, "", 0);
    ir_print(m, strbuf_write, &b);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}
