/* symc dot MODEL|ENGINE: the graph for Graphviz (`symc dot m.onnx > g.dot; dot -Tsvg g.dot`).
 *
 * Approach. Both inputs become one small description (dot_graph: nodes with
 * their op, tensors with their shape as text and their producer, and for each
 * node the fused group it belongs to), then one writer prints it:
 *   - a model (.onnx with the --shapes family of `symc compile`, or .symir)
 *     runs the compile pipeline with the CUDA target's fusion rules, as
 *     `symc compile` would, but stops before code generation; the groups are
 *     the fuse pass's plan (ir/fuse_plan.c): one cluster per group of two or more
 *     nodes, labelled with its root and kind (kernel, library call,
 *     attention), each member labelled with its role (inlined, epilogue,
 *     bias, ...); dead nodes are drawn dashed. Shapes are the IR's symbolic
 *     dims printed with the user's symbol names (sym_print: B, S, 2*S+1).
 *   - an engine (.symx) keeps no plan, only its GPU steps, so the groups are
 *     recovered from what the steps store: a tensor no step reads or writes
 *     by address (not an argument of a kernel, not a library step's or a
 *     copy's tensor, not an input or output) lives only inside one step, so
 *     its producer and its readers are in the same group (union-find). A
 *     group is labelled with its steps (kernel name, cuBLASLt gemm, cuDNN
 *     conv, copy). Shapes are the shape program's slots recovered as
 *     expressions of the engine's symbols (rt_engine_sym_table). An engine
 *     without GPU steps is drawn without clusters. An engine with regions
 *     (several graphs) draws each graph so inside a cluster of its own,
 *     "cluster_region_<k>" labelled with its condition, ids prefixed "r<k>_".
 * Edges carry the tensor's name and its shape; weights (constants) are not
 * drawn as nodes, a node's label counts them. The graph's label lists the
 * symbols with their ranges. Output is DOT on stdout; every failure is one
 * line "symc: dot: ..." on stderr and exit 1 (2 for usage). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "frontend/onnx.h"
#include "ir/ir.h"
#include "passes/pipeline.h"
#include "runtime/engine.h"
#include "runtime/plan.h"
#include "symc/symc.h"
#include "tools/checked.h"
#include "tools/cli.h"
#include "tools/dot.h"

#define DOT_NONE 0xffffffffu

typedef struct dot_node {
    const char *name, *op;
    uint32_t n_in, n_out;
    const uint32_t *in, *out;
    uint32_t group;   /* the group's id (a node index: the root or the component's first node), or DOT_NONE */
    const char *role; /* the node's role in its group ("" when none) */
    int dead;         /* computes nothing that reaches an output */
} dot_node;

typedef struct dot_tensor {
    const char *name;
    char *shape; /* "f32[B, 197, 768]", malloc'd */
    uint32_t producer;
    int constant;
} dot_tensor;

typedef struct dot_graph {
    const char *title;
    char *symbols; /* the graph label's symbol lines, malloc'd */
    dot_node *nodes;
    uint32_t n_nodes;
    dot_tensor *tensors;
    uint32_t n_tensors;
    const uint32_t *inputs, *outputs;
    uint32_t n_inputs, n_outputs;
    char **group_label; /* per node: the label of the group it is the id of (malloc'd), or NULL */
} dot_graph;

static void dot_graph_free(dot_graph *g) {
    for (uint32_t t = 0; g->tensors && t < g->n_tensors; t++) free(g->tensors[t].shape);
    for (uint32_t n = 0; g->group_label && n < g->n_nodes; n++) free(g->group_label[n]);
    free(g->tensors);
    free(g->nodes);
    free(g->group_label);
    free(g->symbols);
}

static int dot_graph_alloc(dot_graph *g, uint32_t n_nodes, uint32_t n_tensors, symc_error *err) {
    g->n_nodes = n_nodes;
    g->n_tensors = n_tensors;
    g->nodes = calloc(n_nodes ? n_nodes : 1, sizeof *g->nodes);
    g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *g->tensors);
    g->group_label = calloc(n_nodes ? n_nodes : 1, sizeof *g->group_label);
    if (!g->nodes || !g->tensors || !g->group_label)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for a graph of %u nodes", n_nodes), 1;
    return 0;
}

/* The text of expression e (malloc'd into b). */
static void dot_add_expr(tool_buf *b, const sym_table *t, sym_expr e) {
    if (e == SYM_NONE) {
        tool_buf_addf(b, "?");
        return;
    }
    char small[256];
    size_t n = sym_print(t, e, small, sizeof small);
    if (n < sizeof small) {
        tool_buf_addf(b, "%s", small);
        return;
    }
    char *big = malloc(n + 1);
    if (!big) {
        tool_buf_addf(b, "%s", small);
        return;
    }
    sym_print(t, e, big, n + 1);
    tool_buf_addf(b, "%s", big);
    free(big);
}

static char *dot_shape(const sym_table *t, symc_dtype dt, int32_t rank, const sym_expr *dims) {
    tool_buf b = {0};
    tool_buf_addf(&b, "%s", symc_dtype_name(dt));
    if (rank < 0) tool_buf_addf(&b, "[?]");
    else {
        tool_buf_addf(&b, "[");
        for (int32_t d = 0; d < rank; d++) {
            if (d) tool_buf_addf(&b, ", ");
            dot_add_expr(&b, t, dims[d]);
        }
        tool_buf_addf(&b, "]");
    }
    if (b.oom) free(b.s), b.s = NULL;
    return b.s;
}

static char *dot_symbols(const sym_table *t) {
    tool_buf b = {0};
    uint32_t ns = sym_symbol_count(t);
    for (sym_id i = 0; i < ns; i++) {
        sym_symbol_info s;
        if (!sym_symbol_get(t, i, &s)) continue;
        tool_buf_addf(&b, "\\n%s in [%" PRId64 ", %" PRId64 "] opt %" PRId64, s.name, s.min, s.max, s.opt);
        if (s.multiple_of > 1) tool_buf_addf(&b, " multiple of %" PRId64, s.multiple_of);
    }
    if (!b.s) tool_buf_addf(&b, "%s", "");
    if (b.oom) free(b.s), b.s = NULL;
    return b.s;
}

/* ---- the writer -------------------------------------------------------------------------- */
/* s as the inside of a DOT string: quotes and backslashes escaped, but "\n"
 * written by this file (keep_nl) kept as DOT's line break */
static void dot_str(FILE *f, const char *s, int keep_nl) {
    for (; *s; s++) {
        if (keep_nl && s[0] == '\\' && s[1] == 'n') {
            fputs("\\n", f);
            s++;
        } else if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if (*s == '\n') fputs("\\n", f);
        else fputc(*s, f);
    }
}

/* A node that makes weights only (a constant node): not drawn, its readers count it. */
static int dot_hidden(const dot_graph *g, uint32_t i) {
    const dot_node *n = &g->nodes[i];
    for (uint32_t k = 0; k < n->n_out; k++)
        if (n->out[k] >= g->n_tensors || !g->tensors[n->out[k]].constant) return 0;
    return n->n_out > 0;
}

/* Node ids are "<p>n<i>", "<p>in<i>", "<p>out<i>": p is "" for one graph, "r<k>_" for region k's. */
static void dot_node_stmt(FILE *f, const dot_graph *g, uint32_t i, const char *indent, const char *p) {
    const dot_node *n = &g->nodes[i];
    uint32_t consts = 0;
    for (uint32_t k = 0; k < n->n_in; k++) consts += n->in[k] < g->n_tensors && g->tensors[n->in[k]].constant;
    fprintf(f, "%s\"%sn%u\" [label=\"", indent, p, i);
    dot_str(f, n->name, 0);
    fprintf(f, "\\n");
    dot_str(f, n->op, 0);
    if (n->role && *n->role) {
        fprintf(f, " (");
        dot_str(f, n->role, 0);
        fprintf(f, ")");
    }
    if (consts) fprintf(f, "\\n+%u weight%s", consts, consts > 1 ? "s" : "");
    fprintf(f, "\"%s];\n", n->dead ? ", style=dashed, color=gray50, fontcolor=gray50" : "");
}

/* the DOT id of tensor t's source (its producer node, else the graph input it is)
 * into buf; 0 when it has neither */
static int dot_source(const dot_graph *g, uint32_t t, char *buf, size_t cap, const char *p) {
    if (g->tensors[t].producer < g->n_nodes) {
        snprintf(buf, cap, "\"%sn%u\"", p, g->tensors[t].producer);
        return 1;
    }
    for (uint32_t j = 0; j < g->n_inputs; j++)
        if (g->inputs[j] == t) {
            snprintf(buf, cap, "\"%sin%u\"", p, j);
            return 1;
        }
    return 0;
}

static void dot_edge(FILE *f, const dot_graph *g, const char *from, const char *to, uint32_t t) {
    fprintf(f, "  %s -> %s [label=\"", from, to);
    dot_str(f, g->tensors[t].name, 0);
    fprintf(f, "\\n");
    dot_str(f, g->tensors[t].shape ? g->tensors[t].shape : "?", 0);
    fprintf(f, "\"];\n");
}

/* The graph's statements (inputs, outputs, clusters, nodes, edges), ids prefixed with p. */
static int dot_write_body(FILE *f, const dot_graph *g, const char *p) {
    for (uint32_t i = 0; i < g->n_inputs; i++) {
        uint32_t t = g->inputs[i];
        fprintf(f, "  \"%sin%u\" [shape=ellipse, style=filled, fillcolor=\"#dde8f8\", label=\"input ", p, i);
        dot_str(f, g->tensors[t].name, 0);
        fprintf(f, "\\n");
        dot_str(f, g->tensors[t].shape ? g->tensors[t].shape : "?", 0);
        fprintf(f, "\"];\n");
    }
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        uint32_t t = g->outputs[i];
        fprintf(f, "  \"%sout%u\" [shape=ellipse, style=filled, fillcolor=\"#e4f4e0\", label=\"output ", p, i);
        dot_str(f, g->tensors[t].name, 0);
        fprintf(f, "\"];\n");
    }
    /* clusters: groups of two or more nodes */
    uint32_t *size = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *size);
    if (!size) return 1;
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].group < g->n_nodes && !dot_hidden(g, i)) size[g->nodes[i].group]++;
    for (uint32_t r = 0; r < g->n_nodes; r++) {
        if (size[r] < 2) continue;
        fprintf(f, "  subgraph \"cluster_%s%u\" {\n    label=\"", p, r);
        dot_str(f, g->group_label[r] ? g->group_label[r] : g->nodes[r].name, 0);
        fprintf(f, "\";\n    style=\"rounded,filled\"; fillcolor=\"#fdf6e3\"; color=\"#b58900\";\n");
        for (uint32_t i = 0; i < g->n_nodes; i++)
            if (g->nodes[i].group == r && !dot_hidden(g, i)) dot_node_stmt(f, g, i, "    ", p);
        fprintf(f, "  }\n");
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if ((g->nodes[i].group >= g->n_nodes || size[g->nodes[i].group] < 2) && !dot_hidden(g, i))
            dot_node_stmt(f, g, i, "  ", p);
    free(size);
    char from[48], to[48];
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const dot_node *n = &g->nodes[i];
        snprintf(to, sizeof to, "\"%sn%u\"", p, i);
        for (uint32_t k = 0; k < n->n_in; k++) {
            uint32_t t = n->in[k];
            if (t >= g->n_tensors || g->tensors[t].constant || !dot_source(g, t, from, sizeof from, p)) continue;
            dot_edge(f, g, from, to, t);
        }
    }
    for (uint32_t i = 0; i < g->n_outputs; i++) {
        uint32_t t = g->outputs[i];
        snprintf(to, sizeof to, "\"%sout%u\"", p, i);
        if (dot_source(g, t, from, sizeof from, p)) dot_edge(f, g, from, to, t);
    }
    return 0;
}

/* The digraph's header: its name, and its label (the title and the symbol lines). */
static void dot_header(FILE *f, const char *title, const char *symbols) {
    fprintf(f, "digraph \"");
    dot_str(f, title, 0);
    fprintf(f, "\" {\n  graph [rankdir=TB, fontname=\"Helvetica\", labelloc=t, label=\"");
    dot_str(f, title, 0);
    dot_str(f, symbols ? symbols : "", 1);
    fprintf(f,
            "\"];\n  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n"
            "  edge [fontname=\"Helvetica\", fontsize=9];\n");
}

static int dot_write(FILE *f, const dot_graph *g) {
    dot_header(f, g->title, g->symbols);
    int rc = dot_write_body(f, g, "");
    fprintf(f, "}\n");
    return rc;
}

/* ---- a module: the fuse pass's plan -------------------------------------------------------- */
static int dot_from_module(ir_module *m, dot_graph *g, symc_error *err) {
    if (dot_graph_alloc(g, m->n_nodes, m->n_tensors, err)) return 1;
    g->title = m->name;
    g->symbols = dot_symbols(m->syms);
    g->inputs = m->inputs, g->n_inputs = m->n_inputs;
    g->outputs = m->outputs, g->n_outputs = m->n_outputs;
    for (uint32_t t = 0; t < m->n_tensors; t++) {
        const ir_tensor *x = &m->tensors[t];
        g->tensors[t] = (dot_tensor){x->name, dot_shape(m->syms, x->dtype, x->rank, x->dims),
                                     x->producer == IR_NONE ? DOT_NONE : x->producer, x->constant != IR_NONE};
    }
    int plan = m->fuse && m->n_fuse == m->n_nodes;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        dot_node *d = &g->nodes[i];
        *d = (dot_node){n->name, ir_op_get(n->op)->name, n->n_in, n->n_out, n->in, n->out, DOT_NONE, "", 0};
        if (!plan) continue;
        ir_fuse_role r = (ir_fuse_role)m->fuse[i].role;
        d->dead = r == IR_FUSE_DEAD;
        d->group = d->dead ? DOT_NONE : m->fuse[i].group;
        d->role = ir_fuse_is_root(r) ? "" : d->dead ? "dead" : ir_fuse_role_name(r);
        if (ir_fuse_is_root(r) && m->fuse[i].group == i) {
            tool_buf b = {0};
            tool_buf_addf(&b, "%s: %s", r == IR_FUSE_STEP ? "fused kernel" : ir_fuse_role_name(r), n->name);
            g->group_label[i] = b.oom ? (free(b.s), NULL) : b.s;
        }
    }
    return 0;
}

static int dot_model(const char *path, int is_onnx, fe_shape_list *shapes, int fuse, dot_graph *g, symc_error *err,
                     symc_module **out) {
    symc_module *m = NULL;
    *out = NULL;
    if (is_onnx) {
        if (fe_shape_list_check(shapes, err) || fe_onnx_import_file(path, shapes->items, shapes->n, &m, err)) return 1;
    } else if (symc_module_load(path, &m, err) != SYMC_OK) return 1;
    *out = m;
    cg_options cg = cg_default_options();
    cg.gpu = fuse;
    pass_options po = {.fuse = cg_fuse_rules(&cg), .precision = SYMC_PRECISION_FP32};
    if (pass_run_pipeline(m, &po, err)) return 1;
    return dot_from_module(m, g, err);
}

/* ---- an engine: groups from what its steps store ------------------------------------------ */
static uint32_t dot_find(uint32_t *parent, uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
}

static int dot_from_engine(const rt_engine *e, sym_table *t, const sym_expr *slots, dot_graph *g, symc_error *err) {
    if (dot_graph_alloc(g, e->n_nodes, e->n_tensors, err)) return 1;
    g->title = e->name && *e->name ? e->name : "engine";
    g->symbols = dot_symbols(t);
    g->inputs = e->inputs, g->n_inputs = e->n_inputs;
    g->outputs = e->outputs, g->n_outputs = e->n_outputs;
    uint8_t *stored = calloc(e->n_tensors ? e->n_tensors : 1, 1);
    uint32_t *parent = malloc((e->n_nodes ? e->n_nodes : 1) * sizeof *parent);
    if (!stored || !parent) {
        free(stored), free(parent);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory"), 1;
    }
    for (uint32_t k = 0; k < e->n_tensors; k++) {
        const rt_tensor *x = &e->tensors[k];
        sym_expr dims[IR_MAX_RANK];
        for (int32_t d = 0; d < x->rank && d < IR_MAX_RANK; d++) dims[d] = slots[x->dims[d]];
        g->tensors[k] = (dot_tensor){x->name, dot_shape(t, x->dtype, x->rank, dims), DOT_NONE, x->constant != RT_NONE};
    }
    for (uint32_t i = 0; i < e->n_nodes; i++) {
        const rt_node *n = &e->nodes[i];
        for (uint32_t k = 0; k < n->n_out; k++)
            if (n->out[k] < e->n_tensors) g->tensors[n->out[k]].producer = i;
        g->nodes[i] = (dot_node){n->name, ir_op_name(n->op), n->n_in, n->n_out, n->in, n->out, DOT_NONE, "", 0};
        parent[i] = i;
    }
    for (uint32_t i = 0; i < e->n_inputs; i++) stored[e->inputs[i]] = 1;
    for (uint32_t i = 0; i < e->n_outputs; i++) stored[e->outputs[i]] = 1;
    for (uint32_t s = 0; s < e->n_steps; s++) {
        const rt_step *st = &e->steps[s];
        if (st->kind == RT_STEP_KERNEL) {
            for (uint32_t a = 0; a < st->n_args; a++)
                if (st->args[a].kind == RT_ARG_TENSOR && st->args[a].value < e->n_tensors)
                    stored[st->args[a].value] = 1;
        } else
            for (uint32_t k = 0; k < st->n_tensors && k < RT_STEP_MAX_TENSORS; k++)
                if (st->tensors[k] < e->n_tensors) stored[st->tensors[k]] = 1;
    }
    /* a tensor no step stores joins its producer and its readers */
    if (e->n_steps)
        for (uint32_t i = 0; i < e->n_nodes; i++)
            for (uint32_t k = 0; k < e->nodes[i].n_in; k++) {
                uint32_t x = e->nodes[i].in[k];
                if (x >= e->n_tensors || stored[x] || g->tensors[x].constant || g->tensors[x].producer == DOT_NONE)
                    continue;
                uint32_t a = dot_find(parent, i), b = dot_find(parent, g->tensors[x].producer);
                if (a != b) parent[a > b ? a : b] = a < b ? a : b;
            }
    int status = 0;
    tool_buf *labels = calloc(e->n_nodes ? e->n_nodes : 1, sizeof *labels);
    if (!labels) status = 1;
    for (uint32_t s = 0; !status && s < e->n_steps; s++) {
        const rt_step *st = &e->steps[s];
        if (st->node >= e->n_nodes) continue;
        uint32_t r = dot_find(parent, st->node);
        tool_buf *b = &labels[r];
        static const char *const kind[] = {"kernel", "gemm (cuBLASLt)", "conv (cuDNN)", "copy"};
        tool_buf_addf(b, "%sstep %u: %s", b->len ? ", " : "", s, st->kind < 4 ? kind[st->kind] : "?");
        if (st->kind == RT_STEP_KERNEL && st->kernel < e->n_kernels)
            tool_buf_addf(b, " %s", e->kernel_names[st->kernel]);
    }
    for (uint32_t i = 0; !status && i < e->n_nodes; i++) {
        uint32_t r = dot_find(parent, i);
        if (!labels[r].len) continue; /* no step: a view, or dead */
        g->nodes[i].group = r;
        if (r == i && !labels[i].oom) {
            g->group_label[i] = labels[i].s; /* the graph owns it now */
            labels[i].s = NULL;
        }
    }
    for (uint32_t i = 0; labels && i < e->n_nodes; i++) free(labels[i].s);
    free(labels);
    free(stored);
    free(parent);
    if (status) symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    return status;
}

/* An engine with regions: each region's graph inside "cluster_region_<k>", labelled with its
 * condition and its symbols' ranges, its node ids prefixed "r<k>_" (its groups' clusters too);
 * the digraph's label lists the root's symbols, the declared hull. Every graph is described
 * before anything is written. */
static int dot_write_regions(FILE *f, const rt_engine *e, symc_error *err) {
    dot_graph *gs = calloc(e->n_regions, sizeof *gs);
    if (!gs) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory"), 1;
    int rc = 0;
    for (uint32_t k = 0; k < e->n_regions && !rc; k++) {
        sym_table *t = NULL;
        sym_expr *slots = NULL;
        rc = rt_engine_sym_table(&e->regions[k].graph, &t, &slots, err) != SYMC_OK ||
            dot_from_engine(&e->regions[k].graph, t, slots, &gs[k], err);
        free(slots);
        if (t) sym_table_free(t);
        if (rc) symc_error_prefix(err, "region %u", k);
    }
    tool_buf hull = {0};
    for (uint32_t s = 0; s < e->n_symbols; s++)
        tool_buf_addf(&hull, "\\n%s in [%" PRId64 ", %" PRId64 "] opt %" PRId64, e->symbols[s].name, e->symbols[s].min,
                      e->symbols[s].max, e->symbols[s].opt);
    if (!rc && hull.oom) {
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
        rc = 1;
    }
    if (!rc) {
        dot_header(f, e->name && *e->name ? e->name : "engine", hull.s);
        for (uint32_t k = 0; k < e->n_regions && !rc; k++) {
            char p[24];
            snprintf(p, sizeof p, "r%u_", k);
            fprintf(f, "  subgraph \"cluster_region_%u\" {\n    label=\"region %u: ", k, k);
            dot_str(f, e->regions[k].name, 0);
            dot_str(f, gs[k].symbols ? gs[k].symbols : "", 1);
            fprintf(f, "\";\n    style=dashed; color=\"#586e75\";\n");
            rc = dot_write_body(f, &gs[k], p);
            fprintf(f, "  }\n");
        }
        fprintf(f, "}\n");
        if (rc) symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    }
    for (uint32_t k = 0; k < e->n_regions; k++) dot_graph_free(&gs[k]);
    free(gs);
    free(hull.s);
    return rc;
}

/* ---- the command ------------------------------------------------------------------------------- */
static int dot_usage(const char *fmt, const char *arg) {
    fprintf(stderr, "symc: dot: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'symc dot --help')\n");
    return 2;
}

int symc_cmd_dot(int argc, char **argv) {
    const char *path = NULL;
    int fuse = 1, rc = 2, n_multiple = 0;
    fe_shape_list shapes;
    fe_shape_list_init(&shapes);
    symc_error err = {0};
    dot_graph g;
    memset(&g, 0, sizeof g);
    symc_module *m = NULL;
    rt_engine *e = NULL;
    sym_table *t = NULL;
    sym_expr *slots = NULL;
    uint8_t *bytes = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: symc dot MODEL.onnx --shapes NAME:MINxAxB,OPTxAxB,MAXxAxB ... [--multiple ...] > g.dot\n"
                   "       symc dot MODEL.symir > g.dot\n"
                   "       symc dot ENGINE.symx > g.dot\n"
                   "then: dot -Tsvg g.dot -o g.svg\n"
                   "The graph in Graphviz's DOT language: one box per node (name, op, role in its fused\n"
                   "group, weights counted), edges labelled with the tensor and its symbolic shape in the\n"
                   "model's symbol names (B, S, S*2+1), and each fused group as a cluster. A model runs\n"
                   "the compile pipeline (shapes as `symc compile` takes them, trtexec's spellings too)\n"
                   "up to the fuse pass, whose plan gives the groups and roles; an engine's groups are\n"
                   "its GPU steps, recovered from the tensors the steps store.\n"
                   "  --no-fuse  a model without a fusion plan (as `symc compile --no-gpu` plans none)\n");
            rc = 0;
            goto done;
        }
        char flag[32];
        tool_shape_flag_result sr = tool_shape_flag(argc, argv, &i, &shapes, &n_multiple, flag, &err);
        if (sr == TOOL_SHAPES_NO_VALUE) {
            rc = dot_usage("%s needs a value", flag);
            goto done;
        } else if (sr == TOOL_SHAPES_BAD) {
            fprintf(stderr, "symc: dot: %s\n", err.msg);
            goto done;
        } else if (sr == TOOL_SHAPES_READ) continue;
        if (!strcmp(argv[i], "--no-fuse")) fuse = 0;
        else if ((v = tool_flag(argc, argv, &i, "--onnx")) || (v = tool_flag(argc, argv, &i, "--loadEngine"))) {
            if (path) {
                rc = dot_usage("takes one model or engine, got a second: '%s'", v);
                goto done;
            }
            path = v;
        } else if (argv[i][0] == '-') {
            rc = dot_usage("unknown flag '%s'", argv[i]);
            goto done;
        } else if (path) {
            rc = dot_usage("takes one model or engine, got a second: '%s'", argv[i]);
            goto done;
        } else path = argv[i];
    }
    if (!path) {
        rc = dot_usage("missing MODEL or ENGINE%s", "");
        goto done;
    }
    int is_onnx = tool_has_suffix(path, ".onnx"), is_engine = tool_has_suffix(path, ".symx");
    if (!is_onnx && !is_engine && !tool_has_suffix(path, ".symir")) {
        rc = dot_usage("'%s' is neither .onnx, .symir nor .symx", path);
        goto done;
    }
    if (!is_onnx && (shapes.n || n_multiple)) {
        rc = dot_usage("'%s' has its symbol ranges already; --shapes and --multiple are for ONNX models", path);
        goto done;
    }
    if (is_engine && !fuse) {
        rc = dot_usage("--no-fuse is for models; an engine's groups are its steps%s", "");
        goto done;
    }
    rc = 1;
    if (tool_check_regular_file(path, is_engine ? "engine" : "model", &err)) goto fail;
    if (is_engine) {
        size_t n = 0;
        if (rt_read_file(path, &bytes, &n, &err) || rt_engine_decode(bytes, n, &e, &err)) goto fail;
        if (e->n_regions ? dot_write_regions(stdout, e, &err)
                         : rt_engine_sym_table(e, &t, &slots, &err) || dot_from_engine(e, t, slots, &g, &err))
            goto fail;
    } else if (dot_model(path, is_onnx, &shapes, fuse, &g, &err, &m)) goto fail;
    if (!e || !e->n_regions) dot_write(stdout, &g);
    rc = fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
    if (rc) fprintf(stderr, "symc: dot: cannot write the graph to stdout\n");
    goto done;
fail:
    /* the importer's and the pipeline's messages name the model already */
    if (!is_engine && strstr(err.msg, path)) fprintf(stderr, "symc: dot: %s\n", err.msg);
    else fprintf(stderr, "symc: dot: %s: %s\n", path, err.msg);
done:
    dot_graph_free(&g);
    symc_module_destroy(m);
    free(slots);
    if (t) sym_table_free(t);
    rt_engine_free(e);
    free(bytes);
    fe_shape_list_free(&shapes);
    return rc;
}
