/* Memory formulas for the tools (tools/memory.h).
 *
 * Everything comes from the engine alone: the lifetimes and fixed-order plan
 * of runtime/plan.h for the chosen schedule, the slot expressions decoded
 * from the shape program, and tool_memory_formula (memory_formula.c) on
 * top. The text form only rearranges what the simplifier produced: nested
 * maxes become one max(...) whose terms are sorted by their value at opt
 * (the dominant one first), so a reader sees which chain of tensors sets
 * the peak. A deep
 * network with dynamic H and W has hundreds of terms, each a long sum (the
 * printer cuts one at SYM_PRINT_LIMIT), so the text stops adding terms past
 * MEMORY_TEXT_LIMIT characters and counts the rest. The formula itself stays
 * exact: only its text is shortened. */
#include "tools/memory.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/region_pick.h"
#include "runtime/cuda/cuda_backend.h" /* the libraries' workspaces */

#define MEMORY_TEXT_LIMIT 4096 /* characters of formula text before the remaining terms are only counted */

symc_status tool_memory_init(tool_memory *m, const rt_engine *e, rt_schedule s, symc_error *err) {
    memset(m, 0, sizeof *m);
    m->e = e;
    m->sched = s;
    /* the backend that runs this schedule lays its tensors out at its own alignment */
    const rt_backend *b = rt_backend_get(s == RT_SCHEDULE_STEPS ? SYMRT_BACKEND_CUDA : SYMRT_BACKEND_REF);
    if (!b) return symc_error_setf(err, SYMC_ERR_INTERNAL, "memory report: no backend runs schedule %d", (int)s);
    m->align = b->align;
    m->workspace = SYM_NONE;
    for (uint32_t c = 0; c < e->n_constants; c++) m->weights += e->constants[c].size;
    if (s == RT_SCHEDULE_STEPS)
        for (uint32_t i = 0; i < e->n_steps; i++) {
            if (e->steps[i].kind == RT_STEP_GEMM) m->library = RT_CUDA_GEMM_WORKSPACE;
            if (e->steps[i].kind == RT_STEP_CONV) m->has_conv = 1;
        }
    symc_status st = rt_lifetimes_compute(e, s, &m->l, err);
    if (!st) st = rt_engine_sym_table(e, &m->t, &m->slots, err);
    if (!st) st = tool_memory_formula(e, &m->l, m->t, m->slots, m->align, &m->workspace, err);
    return st;
}

void tool_memory_free(tool_memory *m) {
    rt_lifetimes_free(&m->l);
    sym_table_free(m->t);
    free(m->slots);
    memset(m, 0, sizeof *m);
    m->workspace = SYM_NONE;
}

/* Sizes known only after a run (rt_engine.produced) at their capacity for these input-dim symbol
 * values: the memory is planned for it. */
static void at_capacity(const rt_engine *e, int64_t *vals) {
    int64_t cap[64];
    if (!e->n_produced || e->n_produced > 64 ||
        sym_program_eval(e->capacity_program, e->capacity_program_size, vals, e->n_symbols, cap, e->n_produced, NULL))
        return;
    for (uint32_t k = 0; k < e->n_produced; k++) vals[e->produced[k].symbol] = cap[k];
}

symc_status tool_memory_eval(const tool_memory *m, const int64_t *vals, int64_t *bytes, symc_error *err) {
    *bytes = 0;
    if (!m->t || m->workspace == SYM_NONE) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no workspace formula");
    return sym_eval(m->t, m->workspace, vals, m->e->n_symbols, bytes, err);
}

symc_status tool_memory_set_init(tool_memory_set *s, const rt_engine *root, rt_schedule sched, symc_error *err) {
    memset(s, 0, sizeof *s);
    s->root = root;
    uint32_t n = rt_engine_n_graphs(root);
    if (!(s->g = calloc(n, sizeof *s->g))) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    s->n = n;
    for (uint32_t r = 0; r < n; r++) {
        symc_status st = tool_memory_init(&s->g[r], rt_engine_graph(root, r), sched, err);
        if (st) {
            if (root->n_regions) symc_error_prefix(err, "region %u ('%s')", r, root->regions[r].name);
            return st;
        }
        s->weights = s->g[r].weights;
        if (s->g[r].library > s->library) s->library = s->g[r].library;
        s->has_conv |= s->g[r].has_conv;
    }
    return SYMC_OK;
}

void tool_memory_set_free(tool_memory_set *s) {
    for (uint32_t r = 0; s->g && r < s->n; r++) tool_memory_free(&s->g[r]);
    free(s->g);
    memset(s, 0, sizeof *s);
}

symc_status tool_memory_set_eval(const tool_memory_set *s, const int64_t *vals, int64_t *ws, uint64_t *fixed,
                                 symc_error *err) {
    *ws = 0;
    *fixed = 0;
    if (!s->g) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no workspace formula");
    const rt_engine *root = s->root;
    if (!root->n_regions) {
        *fixed = s->g[0].weights + s->g[0].library;
        return tool_memory_eval(&s->g[0], vals, ws, err);
    }
    uint32_t r = 0;
    const rt_region *reg = NULL;
    int64_t *cond = calloc(root->region_slots ? root->region_slots : 1, sizeof *cond);
    uint32_t most = 1; /* a region graph's symbols: the root's it reads, and the sizes it produces */
    for (uint32_t k = 0; k < root->n_regions; k++)
        if (root->regions[k].n_symbols > most) most = root->regions[k].n_symbols;
    int64_t *gv = calloc(most, sizeof *gv);
    symc_status st = cond && gv ? rt_region_pick(root, vals, cond, &r, err)
                                : symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    if (!st) {
        reg = &root->regions[r];
        for (uint32_t i = 0; i < reg->n_symbols; i++) gv[i] = reg->symbols[i] == RT_NONE ? 0 : vals[reg->symbols[i]];
        at_capacity(&reg->graph, gv);
        *fixed = s->g[r].weights + s->g[r].library;
        st = tool_memory_eval(&s->g[r], gv, ws, err);
    }
    free(cond);
    free(gv);
    return st;
}

typedef struct term {
    sym_expr e;
    int64_t at_opt;
} term;

typedef struct terms {
    term *v;
    uint32_t n, cap;
    uint8_t *seen; /* one byte per handle of the table */
    int oom;
} terms;

/* The leaves of the top-level max tree, each distinct one once. The tree is a
 * DAG (one max can sit under several others), so it is walked with a visited
 * set: as a tree it could take exponential time. */

static void collect(const sym_table *t, sym_expr e, terms *c) {
    sym_view v;
    if (c->oom || e >= sym_expr_count(t) || c->seen[e]) return;
    c->seen[e] = 1;
    if (sym_expr_view(t, e, &v) && v.kind == SYM_MAX) {
        sym_expr a = v.ops[0], b = v.ops[1]; /* the view dies with the next call */
        collect(t, a, c);
        collect(t, b, c);
        return;
    }
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 16;
        term *x = realloc(c->v, cap * sizeof *x);
        if (!x) {
            c->oom = 1;
            return;
        }
        c->v = x;
        c->cap = cap;
    }
    c->v[c->n++] = (term){e, 0};
}

static int by_opt_desc(const void *a, const void *b) {
    const term *x = a, *y = b;
    return x->at_opt < y->at_opt ? 1 : x->at_opt > y->at_opt ? -1 : 0;
}

/* appends s without one pair of parentheses around the whole of it */
static size_t put_bare(char *buf, size_t cap, size_t len, const char *s) {
    size_t n = strlen(s);
    int wrapped = n >= 2 && s[0] == '(' && s[n - 1] == ')';
    for (size_t i = 0, depth = 0; wrapped && i + 1 < n; i++) {
        depth += s[i] == '(';
        depth -= s[i] == ')';
        if (depth == 0) wrapped = 0; /* "(a)//(b)": the first parenthesis closes early */
    }
    if (wrapped) s++, n -= 2;
    int w = snprintf(len < cap ? buf + len : NULL, len < cap ? cap - len : 0, "%.*s", (int)n, s);
    return len + (size_t)(w > 0 ? w : 0);
}

size_t tool_memory_text(const tool_memory *m, char *buf, size_t cap) {
    if (cap) buf[0] = '\0';
    if (!m->t || m->workspace == SYM_NONE) return (size_t)snprintf(buf, cap, "?");
    terms c = {0};
    int64_t *opt = calloc(m->e->n_symbols + 1, sizeof *opt);
    char *one = NULL;
    size_t len = 0;
    c.seen = calloc(sym_expr_count(m->t) + 1, 1);
    if (!opt || !c.seen) goto done;
    collect(m->t, m->workspace, &c);
    if (c.oom) goto done;
    for (uint32_t s = 0; s < m->e->n_symbols; s++) opt[s] = m->e->symbols[s].opt;
    at_capacity(m->e, opt);
    for (uint32_t i = 0; i < c.n; i++)
        if (sym_eval(m->t, c.v[i].e, opt, m->e->n_symbols, &c.v[i].at_opt, NULL)) c.v[i].at_opt = INT64_MIN;
    qsort(c.v, c.n, sizeof *c.v, by_opt_desc);
    if (c.n > 1) len = put_bare(buf, cap, len, "max(");
    for (uint32_t i = 0; i < c.n; i++) {
        /* a deep dynamic network has hundreds of long terms: past the limit
         * the rest (the smaller ones at opt) are only counted */
        if (i && len > MEMORY_TEXT_LIMIT) {
            char more[64];
            snprintf(more, sizeof more, ", ...[%u more terms]", c.n - i);
            len = put_bare(buf, cap, len, more);
            break;
        }
        size_t need = sym_print(m->t, c.v[i].e, NULL, 0) + 1;
        char *b = realloc(one, need);
        if (!b) goto done;
        one = b;
        sym_print(m->t, c.v[i].e, one, need);
        if (i) len = put_bare(buf, cap, len, ", ");
        len = put_bare(buf, cap, len, one);
    }
    if (c.n > 1) len = put_bare(buf, cap, len, ")");
done:
    free(one);
    free(c.v);
    free(c.seen);
    free(opt);
    return len;
}

static void print3(const char *fmt_each, const uint64_t v[3]) {
    for (int l = 0; l < 3; l++) printf(fmt_each, l ? " | " : "", v[l]);
}

/* One schedule: the runtime's layout, the formula and the totals. */
static int report_schedule(const rt_engine *e, rt_schedule s, int64_t *const vals[3], int64_t *const slots[3],
                           const char *path) {
    symc_error err;
    tool_memory m;
    const char *what = s == RT_SCHEDULE_STEPS ? "CUDA backend (GPU steps" : "reference backend (nodes";
    size_t *offset = calloc(e->n_tensors + 1, sizeof *offset);
    char *text = NULL;
    int rc = 1;
    if (!offset) {
        fprintf(stderr, "symc: %s: out of memory planning memory\n", path);
        return 1;
    }
    if (tool_memory_init(&m, e, s, &err)) {
        fprintf(stderr, "symc: %s: the workspace formula of the %s): %s\n", path, what, err.msg);
        goto done;
    }
    uint64_t peak[3] = {0}, flat[3] = {0}, formula[3] = {0};
    for (int l = 0; l < 3; l++) {
        size_t total = 0;
        int64_t f = 0;
        if (rt_plan_layout(e, &m.l, slots[l], m.align, offset, &total, &err) ||
            tool_memory_eval(&m, vals[l], &f, &err)) {
            fprintf(stderr, "symc: %s: planning memory at %s: %s\n", path,
                    l == 0       ? "min"
                        : l == 1 ? "opt"
                                 : "max",
                    err.msg);
            goto done;
        }
        peak[l] = total;
        formula[l] = (uint64_t)f;
        for (uint32_t i = 0; i < e->n_tensors; i++) {
            if (m.l.first[i] == RT_NONE) continue;
            uint64_t b = symc_dtype_size(e->tensors[i].dtype);
            for (int d = 0; d < e->tensors[i].rank; d++) b *= (uint64_t)slots[l][e->tensors[i].dims[d]];
            flat[l] += (b + m.align - 1) / m.align * m.align;
        }
    }
    size_t need = tool_memory_text(&m, NULL, 0) + 1;
    if (!(text = malloc(need))) {
        fprintf(stderr, "symc: %s: out of memory printing the workspace formula\n", path);
        goto done;
    }
    tool_memory_text(&m, text, need);
    printf("  %s, %zu-byte offsets): activation workspace ", what, m.align);
    print3("%s%" PRIu64, peak);
    printf(" bytes at min | opt | max (");
    print3("%s%" PRIu64, flat);
    printf(" without reuse)\n    workspace <= %s bytes = ", text);
    print3("%s%" PRIu64, formula);
    printf("\n    total <= %" PRIu64 " (weights)", m.weights);
    if (m.library) printf(" + %" PRIu64 " (cuBLASLt workspace)", m.library);
    printf(" + workspace = ");
    uint64_t total[3];
    for (int l = 0; l < 3; l++) total[l] = m.weights + m.library + formula[l];
    print3("%s%" PRIu64, total);
    printf(" bytes");
    if (m.has_conv)
        printf(", plus cuDNN's workspace, chosen per shape (at most %zu)", (size_t)RT_CUDA_CONV_WORKSPACE_CAP);
    printf("\n");
    rc = 0;
done:
    tool_memory_free(&m);
    free(offset);
    free(text);
    return rc;
}

int tool_memory_report(const rt_engine *e, const char *path) {
    int64_t *vals[3] = {0}, *slots[3] = {0};
    int rc = 0;
    for (int l = 0; l < 3 && !rc; l++) {
        vals[l] = calloc(e->n_symbols + 1, sizeof(int64_t));
        slots[l] = calloc(e->num_slots + 1, sizeof(int64_t));
        if (!vals[l] || !slots[l]) {
            fprintf(stderr, "symc: %s: out of memory planning memory\n", path);
            rc = 1;
            break;
        }
        for (uint32_t s = 0; s < e->n_symbols; s++)
            vals[l][s] = l == 0 ? e->symbols[s].min : l == 1 ? e->symbols[s].opt : e->symbols[s].max;
        at_capacity(e, vals[l]);
        symc_error err;
        if (sym_program_eval(e->program, e->program_size, vals[l], e->n_symbols, slots[l], e->num_slots, &err)) {
            fprintf(stderr, "symc: %s: evaluating its shape program: %s\n", path, err.msg);
            rc = 1;
        }
    }
    if (!rc) {
        uint64_t weights = 0;
        for (uint32_t c = 0; c < e->n_constants; c++) weights += e->constants[c].size;
        printf("memory (bytes at min | opt | max; the formulas are in the symbols): weights %" PRIu64 " (constants)\n",
               weights);
        rc = report_schedule(e, RT_SCHEDULE_NODES, vals, slots, path);
        if (!rc && e->n_steps) rc = report_schedule(e, RT_SCHEDULE_STEPS, vals, slots, path);
    }
    for (int l = 0; l < 3; l++) {
        free(vals[l]);
        free(slots[l]);
    }
    return rc;
}
