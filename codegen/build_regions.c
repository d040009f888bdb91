/* Engines of several graphs (regions, symc_compile_regions' contract in
 * include/symc/symc.h; docs/PLAN-regions.md §3): each region's module is
 * assembled as one engine is (cg_assemble: its own symbols, program,
 * guards, GPU code, tuning inside its own ranges), every build kept alive,
 * and the root is made over them, then encoded once (into the output file
 * for cg_write_regions: cg_write_encoded).
 *
 * Root symbols are keyed by the input dim they are read from (rt_source:
 * input index, dim), not by name: the first region reading (input, dim) as a
 * symbol names it. Its range is the hull of the regions' ranges and of the
 * values the other regions fix there; its opt is the first opt that lies
 * strictly inside its region's range (a split range clamps every other
 * part's opt to an end), else the first region's; its multiple_of must be
 * the same wherever it is a symbol, and every value a region fixes there
 * must be a multiple. Region k's graph symbol i is root symbol map[k][i].
 *
 * Conditions are built in a fresh sym_table of the root symbols: "lo <= s"
 * and "s <= hi" where the region's range is narrower than the hull (one
 * "s == v" where it is a single value), "s == e" where the region reads a
 * root symbol's input dim as the expression e (a constant, "B == 1", or
 * another symbol), then the condition text: split on " and ", each part on
 * its relation, each side parsed by sym_parse in the region module's own
 * table (the text uses its names) and carried over to the root table
 * (translate). Every side is a slot of one root program
 * (sym_program_compile), which the runtime evaluates at the input shapes;
 * each guard's message and the region's name are the printed relations.
 *
 * Coverage is proved at build time: every point of the hull (multiples
 * only) when it has at most CG_REGION_POINTS, else the product of each
 * symbol's ends, opt and the regions' edges and constants +-1 (or, when
 * that is too large too, the axes through opt and the corners), is run
 * through the program: a point in no region is an error naming it and the
 * regions; points in several are reported as progress (the first region
 * runs them). Constants are stored once by content: a (size, checksum) hash
 * table (rt_engine_checksum's lanes), a hit confirmed with memcmp; each
 * region graph's tensors are rewritten to the root's indices and its
 * constants are the root's. A size a region's model knows only at run time
 * (rt_produced: a detection model's box count) is its region graph's own: it
 * maps to no root symbol (RT_NONE in the symbol map), the root's symbols
 * being input dims only. The root's batch-row verdict combines the graphs'
 * (root_batch_rows): independent only when every region is proved and no
 * condition mentions the batch symbol.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/codegen.h"
#include "runtime/engine.h"

/* points of the hull enumerated exactly, as sym_guard_classify does */
#define CG_REGION_POINTS 65536u

typedef struct root_sym {
    uint32_t input, dim;
    int64_t lo, hi, opt, mult;
    uint32_t region, sym; /* the first region reading it as a symbol, and that symbol there */
    int opt_inside;       /* opt is strictly inside the range of the region it came from */
} root_sym;

typedef struct region_cond {
    uint32_t region;
    sym_rel rel;
    sym_expr lhs, rhs;
    const char *text; /* in the arena */
    const char *name; /* its part of the region's name (the box "2 <= B <= 32" once), or NULL */
} region_cond;

typedef struct regions {
    ir_module *const *ms;
    const char *const *texts;
    uint32_t n;
    cg_build *xs;
    const cg_options *opt;
    symc_error *err;
    int dry; /* only parse the condition texts (cg_check_conditions) */
    cm_arena arena;
    root_sym *rs; /* malloc'd */
    uint32_t nr, cap_rs;
    uint32_t **map; /* per region, per graph symbol: the root symbol (arena) */
    sym_table *t;   /* the root symbols, in order */
    region_cond *conds;
    uint32_t n_conds, cap_conds;
    sym_expr *slots;
    uint32_t n_slots, cap_slots;
    uint8_t *program;
    size_t program_size;
    rt_engine root;
} regions;

static const char *mod_name(const ir_module *m) { return m->name ? m->name : ""; }

static void *r_calloc(regions *g, size_t n, size_t size) {
    void *p = cm_arena_calloc(&g->arena, n ? n : 1, size);
    if (!p) symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory building the regions");
    return p;
}

static char *r_strdup(regions *g, const char *s) {
    size_t n = strlen(s) + 1;
    char *d = r_calloc(g, n, 1);
    if (d) memcpy(d, s, n);
    return d;
}

static const char *io_name(const ir_module *m, int out, uint32_t k) {
    return m->tensors[out ? m->outputs[k] : m->inputs[k]].name;
}

symc_status cg_check_interface(ir_module *const *ms, uint32_t n, symc_error *err) {
    const ir_module *a = ms[0];
    for (uint32_t r = 1; r < n; r++) {
        const ir_module *b = ms[r];
        for (int out = 0; out < 2; out++) {
            const char *what = out ? "output" : "input";
            uint32_t na = out ? a->n_outputs : a->n_inputs, nb = out ? b->n_outputs : b->n_inputs;
            if (na != nb)
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "region %u (module '%s') has %u %ss, region 0 (module '%s') %u: every region "
                                       "takes the same inputs and gives the same outputs",
                                       r, mod_name(b), nb, what, mod_name(a), na);
            for (uint32_t k = 0; k < na; k++) {
                const ir_tensor *ta = &a->tensors[out ? a->outputs[k] : a->inputs[k]];
                const ir_tensor *tb = &b->tensors[out ? b->outputs[k] : b->inputs[k]];
                if (!strcmp(ta->name, tb->name) && ta->dtype == tb->dtype &&
                    (ta->rank < 0 || tb->rank < 0 || ta->rank == tb->rank))
                    continue;
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "region %u (module '%s'): %s %u '%s' is %s of rank %d, but region 0 (module "
                                       "'%s') has %s %u '%s' %s of rank %d: every region takes the same inputs and "
                                       "gives the same outputs (names, dtypes, ranks, in order)",
                                       r, mod_name(b), what, k, io_name(b, out, k), symc_dtype_name(tb->dtype),
                                       (int)tb->rank, mod_name(a), what, k, io_name(a, out, k),
                                       symc_dtype_name(ta->dtype), (int)ta->rank);
            }
        }
    }
    return SYMC_OK;
}

/* ---- root symbols --------------------------------------------------------------------------- */

static uint32_t find_root(const regions *g, uint32_t input, uint32_t dim) {
    for (uint32_t k = 0; k < g->nr; k++)
        if (g->rs[k].input == input && g->rs[k].dim == dim) return k;
    return RT_NONE;
}

/* the root symbol of graph symbol i of region r, added when new */
static symc_status root_of(regions *g, uint32_t r, uint32_t i) {
    const rt_engine *e = &g->xs[r].e;
    const rt_symbol *s = &e->symbols[i];
    const rt_source *src = NULL;
    for (uint32_t k = 0; k < e->n_sources && !src; k++)
        if (e->sources[k].symbol == i) src = &e->sources[k];
    if (!src) { /* a size the graph produces at run time: its own, no root symbol */
        g->map[r][i] = RT_NONE;
        return SYMC_OK;
    }
    uint32_t k = find_root(g, src->input, src->dim);
    int inside = s->min < s->opt && s->opt < s->max;
    if (k == RT_NONE) {
        if (g->nr == g->cap_rs) {
            uint32_t cap = g->cap_rs ? 2 * g->cap_rs : 8;
            root_sym *n = realloc(g->rs, cap * sizeof *n);
            if (!n) return symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory building the regions");
            g->rs = n;
            g->cap_rs = cap;
        }
        k = g->nr++;
        g->rs[k] = (root_sym){src->input, src->dim, s->min, s->max, s->opt, s->multiple_of, r, i, inside};
    } else {
        root_sym *x = &g->rs[k];
        if (x->mult != s->multiple_of)
            return symc_error_setf(
                g->err, SYMC_ERR_INVALID_ARG,
                "input '%s' dim %u is a multiple of %" PRId64 " in region %u (module '%s', symbol %s in [%" PRId64
                ", %" PRId64 "]) but of %" PRId64 " in region %u (module '%s', symbol %s in [%" PRId64 ", %" PRId64
                "]): the regions must declare the same multiple",
                io_name(g->ms[r], 0, src->input), src->dim, x->mult, x->region, mod_name(g->ms[x->region]),
                g->xs[x->region].e.symbols[x->sym].name, g->xs[x->region].e.symbols[x->sym].min,
                g->xs[x->region].e.symbols[x->sym].max, s->multiple_of, r, mod_name(g->ms[r]), s->name, s->min, s->max);
        if (s->min < x->lo) x->lo = s->min;
        if (s->max > x->hi) x->hi = s->max;
        if (!x->opt_inside && inside) x->opt = s->opt, x->opt_inside = 1;
    }
    g->map[r][i] = k;
    return SYMC_OK;
}

/* the graph symbol of region r read from root symbol k's input dim, or RT_NONE */
static uint32_t graph_sym(const regions *g, uint32_t r, uint32_t k) {
    const rt_engine *e = &g->xs[r].e;
    for (uint32_t i = 0; i < e->n_symbols; i++)
        if (g->map[r][i] == k) return i;
    return RT_NONE;
}

/* root symbol k's input dim in region r, as the module reads it */
static sym_expr dim_expr(const regions *g, uint32_t r, uint32_t k) {
    const ir_module *m = g->ms[r];
    return m->tensors[m->inputs[g->rs[k].input]].dims[g->rs[k].dim];
}

/* The hull grows by the values the regions that read a root symbol's dim
 * as a constant (or another expression) give it there. */
static symc_status widen_by_fixed(regions *g) {
    for (uint32_t r = 0; r < g->n; r++)
        for (uint32_t k = 0; k < g->nr; k++) {
            if (graph_sym(g, r, k) != RT_NONE) continue;
            root_sym *x = &g->rs[k];
            ir_module *m = g->ms[r];
            sym_range v = sym_range_of(m->syms, dim_expr(g, r, k));
            const char *in = io_name(m, 0, x->input);
            const rt_symbol *s = &g->xs[x->region].e.symbols[x->sym];
            if (v.lo == SYM_NEG_INF || v.hi == SYM_POS_INF)
                return symc_error_setf(g->err, SYMC_ERR_UNSUPPORTED,
                                       "region %u (module '%s'): input '%s' dim %u has no bounded range there, while "
                                       "region %u reads it as symbol %s",
                                       r, mod_name(m), in, x->dim, x->region, s->name);
            if (v.lo == v.hi && v.lo % x->mult)
                return symc_error_setf(g->err, SYMC_ERR_INVALID_ARG,
                                       "region %u (module '%s'): input '%s' dim %u is %" PRId64
                                       ", not a multiple of %" PRId64 " as symbol %s of region %u (module '%s') "
                                       "declares it: the runtime would refuse it",
                                       r, mod_name(m), in, x->dim, v.lo, x->mult, s->name, x->region,
                                       mod_name(g->ms[x->region]));
            if (v.lo < x->lo) x->lo = v.lo;
            if (v.hi > x->hi) x->hi = v.hi;
        }
    return SYMC_OK;
}

/* The root table, symbols and sources: names from the first region reading
 * each as a symbol (made unique with its input dim when two differ). */
static symc_status root_table(regions *g) {
    g->t = sym_table_new();
    rt_symbol *syms = r_calloc(g, g->nr, sizeof *syms);
    rt_source *src = r_calloc(g, g->nr, sizeof *src);
    if (!g->t || !syms || !src) return symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory building the regions");
    for (uint32_t k = 0; k < g->nr; k++) {
        root_sym *x = &g->rs[k];
        const char *own = g->xs[x->region].e.symbols[x->sym].name, *in = io_name(g->ms[x->region], 0, x->input);
        char name[160], prov[160];
        sym_id id, dup;
        snprintf(name, sizeof name, "%s", own);
        if (sym_symbol_find(g->t, name, &dup)) snprintf(name, sizeof name, "%s_%u_%u", own, x->input, x->dim);
        snprintf(prov, sizeof prov, "input '%s' dim %u", in, x->dim);
        sym_symbol_info info = {name,  x->lo,   x->opt < x->lo ? x->lo : x->opt > x->hi ? x->hi : x->opt,
                                x->hi, x->mult, prov};
        symc_status st = sym_symbol_new(g->t, &info, &id, g->err);
        if (st) return st;
        sym_symbol_get(g->t, id, &info); /* the table's copy of the name, and its range */
        x->lo = info.min;
        x->hi = info.max;
        x->opt = info.opt;
        syms[k] = (rt_symbol){info.name, info.min, info.opt, info.max, info.multiple_of};
        src[k] = (rt_source){k, x->input, x->dim};
    }
    g->root.symbols = syms;
    g->root.n_symbols = g->root.n_sources = g->nr;
    g->root.sources = src;
    return SYMC_OK;
}

/* ---- conditions ----------------------------------------------------------------------------- */

/* An expression of region r's module table, over the root symbols. */
static sym_expr translate(regions *g, uint32_t r, sym_expr e) {
    const sym_table *mt = g->ms[r]->syms;
    sym_view v;
    if (!sym_expr_view(mt, e, &v)) return SYM_NONE;
    if (v.kind == SYM_CONST) return sym_const(g->t, v.value);
    if (v.kind == SYM_SYMBOL)
        return v.value >= 0 && (uint64_t)v.value < g->xs[r].e.n_symbols && g->map[r][v.value] != RT_NONE
            ? sym_var(g->t, g->map[r][v.value])
            : SYM_NONE;
    sym_expr *ops = malloc(v.n * sizeof *ops);
    if (!ops) return SYM_NONE;
    sym_expr out = SYM_NONE;
    uint32_t i = 0;
    for (; i < v.n; i++) /* views of the module's table stay valid: only the root table grows */
        if ((ops[i] = translate(g, r, v.ops[i])) == SYM_NONE) break;
    if (i == v.n) out = sym_make(g->t, v.kind, v.value, v.n, ops, v.coefs);
    free(ops);
    return out;
}

static uint32_t slot_of(regions *g, sym_expr e) {
    for (uint32_t s = 0; s < g->n_slots; s++)
        if (g->slots[s] == e) return s;
    if (g->n_slots == g->cap_slots) {
        uint32_t cap = g->cap_slots ? 2 * g->cap_slots : 16;
        sym_expr *n = realloc(g->slots, cap * sizeof *n);
        if (!n) return RT_NONE;
        g->slots = n;
        g->cap_slots = cap;
    }
    g->slots[g->n_slots] = e;
    return g->n_slots++;
}

static const char *rel_text(sym_rel rel) {
    switch (rel) {
    case SYM_REL_EQ: return "==";
    case SYM_REL_NE: return "!=";
    case SYM_REL_LE: return "<=";
    case SYM_REL_LT: return "<";
    default: return "?";
    }
}

/* Adds lhs rel rhs to region r, its text printed from the root table; op
 * is how it reads (">" for a swapped "<"), NULL: rel's own. name: its part
 * of the region's name; NULL: its text; "": none. */
static symc_status add_cond_named(regions *g, uint32_t r, sym_rel rel, sym_expr lhs, sym_expr rhs, const char *op,
                                  const char *name) {
    if (lhs == SYM_NONE || rhs == SYM_NONE) {
        const symc_error *te = sym_table_error(g->t);
        return symc_error_setf(g->err, te ? te->code : SYMC_ERR_NOMEM, "region %u (module '%s'): condition: %s", r,
                               mod_name(g->ms[r]), te ? te->msg : "out of memory");
    }
    char a[256], b[256], text[600];
    int swap = op && op[0] == '>';
    sym_print(g->t, swap ? rhs : lhs, a, sizeof a);
    sym_print(g->t, swap ? lhs : rhs, b, sizeof b);
    snprintf(text, sizeof text, "%s %s %s", a, op ? op : rel_text(rel), b);
    if (g->n_conds == g->cap_conds) {
        uint32_t cap = g->cap_conds ? 2 * g->cap_conds : 16;
        region_cond *n = realloc(g->conds, cap * sizeof *n);
        if (!n) return symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory building the regions");
        g->conds = n;
        g->cap_conds = cap;
    }
    const char *t = r_strdup(g, text), *nm = !name ? t : name[0] ? r_strdup(g, name) : NULL;
    if (!t || (name && name[0] && !nm)) return SYMC_ERR_NOMEM;
    g->conds[g->n_conds++] = (region_cond){r, rel, lhs, rhs, t, nm};
    return SYMC_OK;
}

static symc_status add_cond(regions *g, uint32_t r, sym_rel rel, sym_expr lhs, sym_expr rhs, const char *op) {
    return add_cond_named(g, r, rel, lhs, rhs, op, NULL);
}

/* What region r's ranges say: its box inside the hull, and the dims it
 * reads as constants or other symbols. */
static symc_status box_conds(regions *g, uint32_t r) {
    symc_status st = SYMC_OK;
    for (uint32_t k = 0; !st && k < g->nr; k++) {
        const root_sym *x = &g->rs[k];
        sym_expr v = sym_var(g->t, (sym_id)k);
        uint32_t i = graph_sym(g, r, k);
        if (i == RT_NONE) {
            st = add_cond(g, r, SYM_REL_EQ, v, translate(g, r, dim_expr(g, r, k)), NULL);
            continue;
        }
        const rt_symbol *s = &g->xs[r].e.symbols[i];
        if (s->min == s->max && (s->min > x->lo || s->max < x->hi)) {
            st = add_cond(g, r, SYM_REL_EQ, v, sym_const(g->t, s->min), NULL);
            continue;
        }
        char box[300]; /* the region's whole range names it, "2 <= B <= 32", though only 2 <= B is checked */
        snprintf(box, sizeof box, "%" PRId64 " <= %s <= %" PRId64, s->min, g->root.symbols[k].name, s->max);
        if (s->min > x->lo) st = add_cond_named(g, r, SYM_REL_LE, sym_const(g->t, s->min), v, NULL, box);
        if (!st && s->max < x->hi)
            st = add_cond_named(g, r, SYM_REL_LE, v, sym_const(g->t, s->max), NULL, s->min > x->lo ? "" : box);
    }
    return st;
}

/* A parse error of one side (text[at..at+len)) of region r's condition,
 * reported with its column in the whole text. */
static symc_status side_error(regions *g, uint32_t r, size_t at, const symc_error *pe) {
    const char *cond = g->texts[r];
    ir_module *m = g->ms[r];
    int col = 0;
    char what[sizeof pe->msg];
    const char *p = strstr(pe->msg, ": ");
    if (sscanf(pe->msg, "parse error at column %d", &col) == 1 && p) {
        snprintf(what, sizeof what, "%s", p + 2);
        char *cut = NULL; /* the parser quotes the side: the whole text is quoted instead */
        for (char *q = strstr(what, " in \""); q; q = strstr(q + 1, " in \"")) cut = q;
        if (cut) *cut = '\0';
    } else snprintf(what, sizeof what, "%s", pe->msg);
    char syms[300] = "";
    for (uint32_t i = 0, n = sym_symbol_count(m->syms); pe->code == SYMC_ERR_INVALID_ARG && i < n; i++) {
        sym_symbol_info info;
        sym_symbol_get(m->syms, i, &info);
        size_t len = strlen(syms);
        snprintf(syms + len, sizeof syms - len, "%s%s", i ? ", " : "; symbols: ", info.name);
    }
    return symc_error_setf(g->err, pe->code,
                           "region %u (module '%s'): condition \"%s\": parse error at column %d: %s%s", r, mod_name(m),
                           cond, (int)at + (col > 0 ? col : 1), what, syms);
}

/* One side of a relation, parsed in region r's module table, over the root symbols. */
static symc_status parse_side(regions *g, uint32_t r, size_t at, size_t len, sym_expr *out) {
    char buf[512];
    symc_error pe = {0};
    if (len >= sizeof buf) {
        pe.code = SYMC_ERR_FORMAT;
        snprintf(pe.msg, sizeof pe.msg, "parse error at column 1: expression too long (at most 511 characters)");
        return side_error(g, r, at, &pe);
    }
    memcpy(buf, g->texts[r] + at, len);
    buf[len] = '\0';
    sym_expr e;
    if (sym_parse(g->ms[r]->syms, buf, &e, &pe)) return side_error(g, r, at, &pe);
    *out = g->dry ? e : translate(g, r, e);
    return SYMC_OK;
}

/* One relation, text[at..end): "A <= B", "A < B", "A >= B", "A > B", "A == B", "A != B". */
static symc_status parse_relation(regions *g, uint32_t r, size_t at, size_t end) {
    const char *s = g->texts[r];
    size_t op = at;
    while (op < end && !strchr("<>=!", s[op])) op++;
    size_t oplen = op + 1 < end && s[op + 1] == '=' ? 2 : 1;
    int ok = op < end && (oplen == 2 || s[op] == '<' || s[op] == '>');
    if (!ok) { /* at the stray '=' or '!', else where the part starts */
        size_t c = op < end ? op : at;
        while (op >= end && c < end && s[c] == ' ') c++;
        symc_error pe = {SYMC_ERR_FORMAT, ""};
        snprintf(pe.msg, sizeof pe.msg, "parse error at column 1: expected a relation (<=, <, >=, >, ==, !=)");
        return side_error(g, r, c, &pe);
    }
    char opt[3] = {s[op], oplen == 2 ? '=' : '\0', '\0'};
    sym_expr a, b;
    symc_status st = parse_side(g, r, at, op - at, &a);
    if (!st) st = parse_side(g, r, op + oplen, end - op - oplen, &b);
    if (st || g->dry) return st;
    if (!strcmp(opt, "<=")) return add_cond(g, r, SYM_REL_LE, a, b, NULL);
    if (!strcmp(opt, "<")) return add_cond(g, r, SYM_REL_LT, a, b, NULL);
    if (!strcmp(opt, ">=")) return add_cond(g, r, SYM_REL_LE, b, a, ">=");
    if (!strcmp(opt, ">")) return add_cond(g, r, SYM_REL_LT, b, a, ">");
    return add_cond(g, r, opt[0] == '!' ? SYM_REL_NE : SYM_REL_EQ, a, b, NULL);
}

/* Region r's condition text, split on " and ". */
static symc_status text_conds(regions *g, uint32_t r) {
    const char *s = g->texts[r];
    if (!s || !s[0]) return SYMC_OK;
    size_t at = 0, n = strlen(s);
    for (;;) {
        const char *and = strstr(s + at, " and ");
        size_t end = and? (size_t)(and-s) : n;
        symc_status st = parse_relation(g, r, at, end);
        if (st || !and) return st;
        at = end + 5;
    }
}

/* Every condition's sides become slots of the root program; each region
 * gets its guards and its name (its relations joined by " and ", a box
 * as "lo <= s <= hi"). */
static symc_status region_program(regions *g, rt_region *out) {
    for (uint32_t r = 0; r < g->n; r++) {
        uint32_t nc = 0;
        for (uint32_t c = 0; c < g->n_conds; c++) nc += g->conds[c].region == r;
        rt_guard *gs = r_calloc(g, nc, sizeof *gs);
        char *name = r_calloc(g, 64 + 610 * (size_t)nc, 1);
        if (!gs || !name) return SYMC_ERR_NOMEM;
        size_t len = 0, cap = 64 + 610 * (size_t)nc;
        uint32_t k = 0;
        for (uint32_t c = 0; c < g->n_conds; c++) {
            const region_cond *x = &g->conds[c];
            if (x->region != r) continue;
            uint32_t a = slot_of(g, x->lhs), b = slot_of(g, x->rhs);
            if (a == RT_NONE || b == RT_NONE)
                return symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory building the regions");
            gs[k] = (rt_guard){x->rel, a, b, x->text, 0};
            if (x->name && len < cap)
                len += (size_t)snprintf(name + len, cap - len, "%s%s", len ? " and " : "", x->name);
            k++;
        }
        if (!nc) snprintf(name, cap, "true");
        out[r] = (rt_region){name, gs, nc, g->map[r], g->xs[r].e.n_symbols, g->xs[r].e};
    }
    symc_status st = sym_program_compile(g->t, g->slots, g->n_slots, &g->program, &g->program_size, g->err);
    if (st) return st;
    g->root.region_program = g->program;
    g->root.region_program_size = g->program_size;
    g->root.region_slots = g->n_slots;
    g->root.regions = out;
    g->root.n_regions = g->n;
    return SYMC_OK;
}

/* ---- the batch-row verdict ------------------------------------------------------------------ */

/* The root's verdict from the regions' (each cg_assemble's proof on its own module), the
 * conservative one: independent only when every region is proved over the root symbol of input
 * 0 dim 0 and no condition mentions it, so a batch joined from requests runs the same graph each
 * request alone would (else a request of B = 1 alone might run region "B == 1" and, joined, the
 * other: a different graph, which nothing proves computes the same rows). The encoder writes
 * the root's only. */
static symc_status root_batch_rows(regions *g, rt_region *regs) {
    rt_batch_rows *out = &g->root.batch_rows;
    uint32_t kb = find_root(g, 0, 0), none = 0, bad = RT_NONE;
    char why[600];
    for (uint32_t r = 0; r < g->n; r++) {
        const rt_batch_rows *v = &g->xs[r].e.batch_rows;
        if (v->state == RT_BATCH_ROWS_NONE) none++;
        if (bad == RT_NONE && v->state != RT_BATCH_ROWS_INDEPENDENT) bad = r;
    }
    uint32_t cond = RT_NONE;
    for (uint32_t c = 0; kb != RT_NONE && c < g->n_conds && cond == RT_NONE; c++)
        if (sym_mentions(g->t, g->conds[c].lhs, kb) || sym_mentions(g->t, g->conds[c].rhs, kb)) cond = c;
    if (kb == RT_NONE || none == g->n) { /* the reason of a region reading input 0 dim 0 as a symbol, if any */
        uint32_t r = 0;
        while (kb != RT_NONE && r + 1 < g->n && graph_sym(g, r, kb) == RT_NONE) r++;
        *out = (rt_batch_rows){RT_BATCH_ROWS_NONE, RT_NONE, NULL};
        snprintf(why, sizeof why, "region %u ('%s'): %s", r, regs[r].name, g->xs[r].e.batch_rows.why);
    } else if (cond != RT_NONE) {
        uint32_t r = g->conds[cond].region;
        *out = (rt_batch_rows){RT_BATCH_ROWS_BATCHED, kb, NULL};
        snprintf(why, sizeof why,
                 "the engine's regions are chosen by the batch size %s (region %u '%s'): a batch joined from "
                 "requests may run another region's graph than each request alone",
                 g->root.symbols[kb].name, r, regs[r].name);
    } else if (bad != RT_NONE) {
        *out = (rt_batch_rows){RT_BATCH_ROWS_BATCHED, kb, NULL};
        snprintf(why, sizeof why, "region %u ('%s'): %s", bad, regs[bad].name, g->xs[bad].e.batch_rows.why);
    } else {
        *out = (rt_batch_rows){RT_BATCH_ROWS_INDEPENDENT, kb, NULL};
        why[0] = '\0';
        for (uint32_t r = 0; r < g->n && out->state == RT_BATCH_ROWS_INDEPENDENT; r++)
            if (g->map[r][g->xs[r].e.batch_rows.symbol] != kb) { /* a bare dim 0 of input 0 is kb: a safeguard */
                out->state = RT_BATCH_ROWS_BATCHED;
                snprintf(why, sizeof why, "region %u ('%s') is batched over another symbol than input 0 dim 0", r,
                         regs[r].name);
            }
    }
    return (out->why = r_strdup(g, why)) ? SYMC_OK : SYMC_ERR_NOMEM;
}

/* ---- coverage ------------------------------------------------------------------------------- */

typedef struct cover {
    int64_t *slots;
    uint8_t *holds; /* per region, at the current point */
    uint64_t points, overlaps;
    char first_overlap[256];
    symc_status st;
} cover;

static void point_text(const regions *g, const int64_t *v, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < g->nr && len < cap; k++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s = %" PRId64, k ? ", " : "", g->root.symbols[k].name, v[k]);
    if (!g->nr) snprintf(buf, cap, "the one shape");
}

/* "regions 0 and 1", "regions 0, 2 and 3" of the regions that hold */
static void regions_text(const regions *g, const uint8_t *holds, char *buf, size_t cap) {
    uint32_t n = 0, seen = 0;
    for (uint32_t r = 0; r < g->n; r++) n += holds[r];
    size_t len = (size_t)snprintf(buf, cap, "regions ");
    for (uint32_t r = 0; r < g->n && len < cap; r++)
        if (holds[r]) {
            seen++;
            len += (size_t)snprintf(buf + len, cap - len, "%s%u", seen == 1 ? "" : seen == n ? " and " : ", ", r);
        }
}

static void visit(regions *g, const int64_t *v, cover *c) {
    if (c->st) return;
    symc_error e;
    if (sym_program_eval(g->program, g->program_size, v, g->nr, c->slots, g->n_slots, &e)) {
        char at[256];
        point_text(g, v, at, sizeof at);
        c->st = symc_error_setf(g->err, SYMC_ERR_RANGE, "the regions' conditions cannot be evaluated at %s: %s", at,
                                e.msg);
        return;
    }
    uint32_t n = 0;
    for (uint32_t r = 0; r < g->n; r++) {
        const rt_region *x = &g->root.regions[r];
        c->holds[r] = 1;
        for (uint32_t k = 0; k < x->n_cond && c->holds[r]; k++)
            c->holds[r] = (uint8_t)sym_rel_holds(x->cond[k].rel, c->slots[x->cond[k].lhs], c->slots[x->cond[k].rhs]);
        n += c->holds[r];
    }
    c->points++;
    if (n > 1 && !c->overlaps++) {
        char at[128], which[120];
        point_text(g, v, at, sizeof at);
        regions_text(g, c->holds, which, sizeof which);
        snprintf(c->first_overlap, sizeof c->first_overlap, "%s: %s", at, which);
    }
    if (n) return;
    char at[200], list[400], hull[300];
    size_t len = 0, hl = 0;
    point_text(g, v, at, sizeof at);
    list[0] = hull[0] = '\0';
    for (uint32_t r = 0; r < g->n && len < sizeof list; r++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%sregion %u '%s' (module '%s')", r ? ", " : "", r,
                                g->root.regions[r].name, mod_name(g->ms[r]));
    for (uint32_t k = 0; k < g->nr && hl < sizeof hull; k++)
        hl += (size_t)snprintf(hull + hl, sizeof hull - hl, "%s%s in [%" PRId64 ", %" PRId64 "]", k ? ", " : "",
                               g->root.symbols[k].name, g->rs[k].lo, g->rs[k].hi);
    c->st = symc_error_setf(g->err, SYMC_ERR_RANGE,
                            "%s is in no region: %s; every point of the regions' hull (%s) must be in one: widen a "
                            "region or add one",
                            at, list, hull);
}

/* adds v (snapped to a multiple inside symbol k's hull) to the candidates */
static void add_candidate(const root_sym *x, int64_t v, int64_t *out, uint32_t *n) {
    if (v < x->lo) v = x->lo;
    if (v > x->hi) v = x->hi;
    int64_t down = x->lo + (v - x->lo) / x->mult * x->mult;
    int64_t vals[2] = {down, down + x->mult};
    for (int i = 0; i < 2; i++) {
        if (vals[i] > x->hi) continue;
        uint32_t j = 0;
        while (j < *n && out[j] != vals[i]) j++;
        if (j == *n) out[(*n)++] = vals[i];
    }
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Symbol k's sampled values: its ends and opt, each region's edges and
 * fixed values +-1, the constants of the conditions +-1. */
static uint32_t sample_values(const regions *g, uint32_t k, int64_t *out) {
    const root_sym *x = &g->rs[k];
    uint32_t n = 0;
    add_candidate(x, x->lo, out, &n);
    add_candidate(x, x->hi, out, &n);
    add_candidate(x, x->opt, out, &n);
    for (uint32_t r = 0; r < g->n; r++) {
        uint32_t i = graph_sym(g, r, k);
        sym_range v = {0, 0};
        if (i != RT_NONE) v = (sym_range){g->xs[r].e.symbols[i].min, g->xs[r].e.symbols[i].max};
        else v = sym_range_of(g->ms[r]->syms, dim_expr(g, r, k));
        int64_t e[] = {v.lo - 1, v.lo, v.hi, v.hi + 1};
        for (int j = 0; j < 4; j++) add_candidate(x, e[j], out, &n);
    }
    for (uint32_t c = 0; c < g->n_conds; c++) {
        int64_t v;
        for (int side = 0; side < 2; side++)
            if (sym_is_const(g->t, side ? g->conds[c].rhs : g->conds[c].lhs, &v) == 1 && v > INT64_MIN + 1 &&
                v < INT64_MAX - 1)
                for (int64_t d = -1; d <= 1; d++) add_candidate(x, v + d, out, &n);
    }
    qsort(out, n, sizeof *out, cmp_i64);
    return n;
}

/* The points: every one of the hull when there are few, else samples. */
static symc_status check_coverage(regions *g) {
    uint32_t nr = g->nr, per = 8 + 8 * g->n + 12 * g->n_conds; /* add_candidate adds 2 at most */
    uint64_t full = 1, sampled = 1;
    for (uint32_t k = 0; k < nr; k++) {
        uint64_t c = (uint64_t)((g->rs[k].hi - g->rs[k].lo) / g->rs[k].mult) + 1;
        full = full > CG_REGION_POINTS || c > CG_REGION_POINTS ? CG_REGION_POINTS + 1 : full * c;
    }
    int exact = full <= CG_REGION_POINTS;
    cover c = {.slots = calloc(g->n_slots ? g->n_slots : 1, sizeof *c.slots), .holds = calloc(g->n, 1)};
    uint32_t *cnt = calloc(nr ? nr : 1, sizeof *cnt), *idx = calloc(nr ? nr : 1, sizeof *idx);
    int64_t *cand = malloc((nr ? nr : 1) * (exact ? CG_REGION_POINTS : per) * sizeof *cand);
    int64_t *v = calloc(nr ? nr : 1, sizeof *v);
    if (!c.slots || !c.holds || !cnt || !idx || !cand || !v)
        c.st = symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory checking the regions' coverage");
    uint32_t stride = exact ? CG_REGION_POINTS : per;
    for (uint32_t k = 0; !c.st && k < nr; k++) {
        int64_t *o = cand + (size_t)k * stride;
        if (exact)
            for (int64_t x = g->rs[k].lo; x <= g->rs[k].hi; x += g->rs[k].mult) o[cnt[k]++] = x;
        else cnt[k] = sample_values(g, k, o);
        sampled = sampled > CG_REGION_POINTS ? sampled : sampled * cnt[k];
    }
    if (!c.st && (exact || sampled <= CG_REGION_POINTS)) { /* the product of the values, odometer order */
        for (;;) {
            for (uint32_t k = 0; k < nr; k++) v[k] = cand[(size_t)k * stride + idx[k]];
            visit(g, v, &c);
            uint32_t k = 0;
            while (k < nr && ++idx[k] == cnt[k]) idx[k++] = 0;
            if (k == nr || c.st) break;
        }
    } else if (!c.st) { /* too many: the axes through opt, then the corners */
        for (uint32_t a = 0; a < nr && !c.st; a++)
            for (uint32_t j = 0; j < cnt[a]; j++) {
                for (uint32_t k = 0; k < nr; k++) v[k] = g->rs[k].opt;
                v[a] = cand[(size_t)a * stride + j];
                visit(g, v, &c);
            }
        for (uint64_t m = 0; nr <= 16 && m < ((uint64_t)1 << nr) && !c.st; m++) {
            for (uint32_t k = 0; k < nr; k++) v[k] = m >> k & 1 ? g->rs[k].hi : g->rs[k].lo;
            visit(g, v, &c);
        }
    }
    if (!c.st && c.overlaps)
        cg_progress(g->opt,
                    "regions: %" PRIu64 " of %" PRIu64 " points %s are in more than one region (the first: %s); "
                    "the first region that holds runs them",
                    c.overlaps, c.points, exact ? "of the hull" : "checked", c.first_overlap);
    free(c.slots);
    free(c.holds);
    free(cnt);
    free(idx);
    free(cand);
    free(v);
    return c.st;
}

/* ---- constants, root, encode ---------------------------------------------------------------- */

/* Every region's constants into one table, equal contents once; each
 * graph's tensors then index it. */
static symc_status dedupe_constants(regions *g) {
    uint32_t total = 0, cap = 16, nc = 0;
    for (uint32_t r = 0; r < g->n; r++) total += g->xs[r].e.n_constants;
    while (cap < 2 * total) cap *= 2;
    rt_constant *cs = r_calloc(g, total, sizeof *cs);
    uint32_t *table = malloc(cap * sizeof *table), *to = NULL;
    uint64_t *hash = malloc((total ? total : 1) * sizeof *hash);
    size_t bytes_in = 0, bytes_out = 0;
    symc_status st = cs && table && hash ? SYMC_OK : symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory");
    for (uint32_t j = 0; !st && j < cap; j++) table[j] = RT_NONE;
    for (uint32_t r = 0; !st && r < g->n; r++) {
        rt_engine *e = &g->xs[r].e;
        free(to);
        to = malloc((e->n_constants ? e->n_constants : 1) * sizeof *to);
        if (!to) st = symc_error_setf(g->err, SYMC_ERR_NOMEM, "out of memory storing the constants once");
        for (uint32_t k = 0; !st && k < e->n_constants; k++) {
            rt_constant c = e->constants[k];
            uint64_t h = (c.size ? rt_engine_checksum(c.data, c.size) : 0) ^ ((uint64_t)c.size * 0x9e3779b97f4a7c15ull);
            uint32_t j = (uint32_t)(h & (cap - 1));
            while (table[j] != RT_NONE) {
                const rt_constant *d = &cs[table[j]];
                if (hash[table[j]] == h && d->size == c.size && (!c.size || !memcmp(d->data, c.data, c.size))) break;
                j = (j + 1) & (cap - 1);
            }
            if (table[j] == RT_NONE) {
                table[j] = nc;
                hash[nc] = h;
                cs[nc++] = c;
                bytes_out += c.size;
            }
            to[k] = table[j];
            bytes_in += c.size;
        }
        rt_tensor *ts = (rt_tensor *)e->tensors; /* the build's own array (cg_assemble's arena) */
        for (uint32_t t = 0; !st && t < e->n_tensors; t++)
            if (ts[t].constant != RT_NONE)
                ts[t].constant = ts[t].constant < e->n_constants ? to[ts[t].constant] : RT_NONE;
    }
    for (uint32_t r = 0; !st && r < g->n; r++) {
        g->xs[r].e.constants = cs;
        g->xs[r].e.n_constants = nc;
    }
    if (!st) {
        g->root.constants = cs;
        g->root.n_constants = nc;
        cg_progress(g->opt, "regions: %u constants of %u graphs (%zu bytes) stored as %u (%zu bytes)", total, g->n,
                    bytes_in, nc, bytes_out);
    }
    free(to);
    free(table);
    free(hash);
    return st;
}

/* What the root keeps of a graph: versions, name, sm, precision. */
static void root_fields(regions *g) {
    const rt_engine *e0 = &g->xs[0].e;
    rt_engine *e = &g->root;
    e->format_version = RT_ENGINE_FORMAT_VERSION;
    e->symc_version = e0->symc_version;
    e->cuda_version = e0->cuda_version;
    e->cublas_version = e0->cublas_version;
    e->cudnn_version = e0->cudnn_version;
    e->name = e0->name;
    e->sm = e0->sm;
    e->precision = e0->precision;
}

/* An input dim that no region reads as a symbol (so no root symbol and no
 * condition tells the regions apart by it) must be the same constant in
 * every region: else the first region would take every shape, and refuse
 * the others' at its own dim check. */
static symc_status check_fixed_dims(const regions *g) {
    const ir_module *a = g->ms[0];
    for (uint32_t i = 0; i < a->n_inputs; i++)
        for (int32_t d = 0; d < a->tensors[a->inputs[i]].rank; d++) {
            if (find_root(g, i, (uint32_t)d) != RT_NONE) continue;
            int64_t c0, c;
            if (sym_is_const(a->syms, a->tensors[a->inputs[i]].dims[d], &c0) != 1) continue;
            for (uint32_t r = 1; r < g->n; r++) {
                const ir_module *m = g->ms[r];
                if (sym_is_const(m->syms, m->tensors[m->inputs[i]].dims[d], &c) == 1 && c != c0)
                    return symc_error_setf(g->err, SYMC_ERR_INVALID_ARG,
                                           "input '%s' dim %d is %" PRId64 " in region 0 (module '%s') and %" PRId64
                                           " in region %u (module '%s'), and a symbol in no region: the regions "
                                           "cannot be told apart by it; declare it a symbol in one of them",
                                           io_name(a, 0, i), (int)d, c0, mod_name(a), c, r, mod_name(m));
            }
        }
    return SYMC_OK;
}

/* The regions' root symbols and conditions (after every graph is assembled). */
static symc_status root_conditions(regions *g) {
    symc_status st = SYMC_OK;
    g->map = r_calloc(g, g->n, sizeof *g->map);
    if (!g->map) return SYMC_ERR_NOMEM;
    for (uint32_t r = 0; !st && r < g->n; r++) {
        const rt_engine *e = &g->xs[r].e;
        if (e->sm != g->xs[0].e.sm)
            return symc_error_setf(g->err, SYMC_ERR_INTERNAL, "region %u was built for sm_%u, region 0 for sm_%u", r,
                                   e->sm, g->xs[0].e.sm);
        if (!(g->map[r] = r_calloc(g, e->n_symbols, sizeof **g->map))) return SYMC_ERR_NOMEM;
        for (uint32_t i = 0; !st && i < e->n_symbols; i++) st = root_of(g, r, i);
    }
    if (!st) st = widen_by_fixed(g);
    if (!st) st = check_fixed_dims(g);
    if (!st) st = root_table(g);
    for (uint32_t r = 0; !st && r < g->n; r++) {
        st = box_conds(g, r);
        if (!st) st = text_conds(g, r);
    }
    return st;
}

static void regions_free(regions *g, uint32_t built) {
    for (uint32_t r = 0; r < built; r++) cg_build_release(&g->xs[r]);
    free(g->xs);
    free(g->rs);
    free(g->conds);
    free(g->slots);
    free(g->program);
    sym_table_free(g->t);
    cm_arena_free(&g->arena);
}

symc_status cg_check_conditions(ir_module *const *ms, const char *const *conds, uint32_t n, symc_error *err) {
    regions g = {.ms = ms, .texts = conds, .n = n, .err = err, .dry = 1};
    symc_status st = SYMC_OK;
    for (uint32_t r = 0; !st && r < n; r++) st = text_conds(&g, r);
    return st;
}

/* The engine of regions into *bytes, or with path != NULL into that file. */
static symc_status build_regions(ir_module *const *ms, const char *const *conds, uint32_t n, const cg_options *opt,
                                 const char *path, uint8_t **bytes, size_t *size, symc_error *err) {
    if (!ms || !conds || !n) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "cg_build_regions: no region");
    cg_options def = cg_default_options();
    regions g = {.ms = ms, .texts = conds, .n = n, .opt = opt ? opt : &def, .err = err};
    g.xs = calloc(n, sizeof *g.xs);
    uint32_t built = 0;
    symc_status st = g.xs ? cg_check_interface(ms, n, err) : symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    for (uint32_t r = 0; !st && r < n; r++) {
        st = cg_assemble(&g.xs[r], ms[r], g.opt, err);
        built = r + 1;
        if (st) symc_error_prefix(err, "region %u (module '%s')", r, mod_name(ms[r]));
    }
    if (!st) st = cg_check_interface(ms, n, err); /* with the output ranks inferred */
    if (!st) st = root_conditions(&g);
    if (!st) st = dedupe_constants(&g);
    rt_region *regs = st ? NULL : r_calloc(&g, n, sizeof *regs);
    if (!st && !regs) st = SYMC_ERR_NOMEM;
    if (!st) st = region_program(&g, regs);
    if (!st) st = root_batch_rows(&g, regs);
    if (!st) st = check_coverage(&g);
    if (!st) {
        root_fields(&g);
        cg_progress(g.opt, "regions: %u graphs over %u root symbols, %u condition slots", n, g.nr, g.n_slots);
        st = path ? cg_write_encoded(&g.root, path, err) : rt_engine_encode(&g.root, bytes, size, err);
    }
    regions_free(&g, built);
    return st;
}

symc_status cg_build_regions(ir_module *const *ms, const char *const *conds, uint32_t n, const cg_options *opt,
                             uint8_t **bytes, size_t *size, symc_error *err) {
    *bytes = NULL;
    *size = 0;
    return build_regions(ms, conds, n, opt, NULL, bytes, size, err);
}

symc_status cg_write_regions(ir_module *const *ms, const char *const *conds, uint32_t n, const cg_options *opt,
                             const char *path, symc_error *err) {
    return build_regions(ms, conds, n, opt, path, NULL, NULL, err);
}
