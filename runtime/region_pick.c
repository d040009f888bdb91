/* The regions of an engine as the symbol API sees them (region_pick.h).
 *
 * Fixed dims: each graph's shape program is decoded once at load
 * (rt_engine_sym_table) and an input dim is fixed when its expression is a
 * constant; across regions the dim stays fixed only where every graph
 * fixes it to the same value (B fixed to 1 in one region and free in the
 * other is the region choice's business, not a refusal at
 * symrt_set_input_shape).
 *
 * The pick: the root's region_program maps the root symbol values to every
 * side of every region's condition, once per new input shape; the first
 * region whose guards all hold wins. When none does, the error walks the
 * regions again and names, per region, the first relation that fails with
 * its two values, cut to the error's capacity with "...".
 *
 * Dim text: a graph's expressions are printed with the root's names for its
 * symbols (a region graph may name them otherwise), so the forms of the
 * regions compare as text. A dim that is root symbol B in some regions and,
 * in the others, the constant an input dim B is read from pins B to there
 * ("1" in the region of B == 1) is B everywhere, and prints as "B": what a
 * caller feeds it (Triton's batch dim, for `symc triton`). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"
#include "runtime/region_pick.h"

/* Graph g of root with the root's names on its symbols, for printing: *tmp
 * is the graph with symbols replaced by *names (malloc'd; free it). */
static int named_graph(const rt_engine *root, uint32_t r, rt_engine *tmp, rt_symbol **names) {
    const rt_engine *g = rt_engine_graph(root, r);
    *tmp = *g;
    *names = NULL;
    if (!root->n_regions) return 1;
    const rt_region *reg = &root->regions[r];
    if (!(*names = malloc(((size_t)g->n_symbols + 1) * sizeof **names))) return 0;
    for (uint32_t i = 0; i < g->n_symbols; i++) {
        (*names)[i] = g->symbols[i];
        if (i < reg->n_symbols && reg->symbols[i] < root->n_symbols)
            (*names)[i].name = root->symbols[reg->symbols[i]].name;
    }
    tmp->symbols = *names;
    return 1;
}

/* Intersects graph r's fixed input dims into fixed (first: copies them). */
static int fixed_of_graph(const rt_engine *root, uint32_t r, int first, int64_t (*fixed)[IR_MAX_RANK]) {
    const rt_engine *g = rt_engine_graph(root, r);
    sym_table *t = NULL;
    sym_expr *x = NULL;
    if (rt_engine_sym_table(g, &t, &x, NULL)) return 0;
    for (uint32_t k = 0; k < g->n_inputs; k++) {
        const rt_tensor *in = &g->tensors[g->inputs[k]];
        for (int d = 0; d < IR_MAX_RANK; d++) {
            int64_t v;
            int64_t here = d < in->rank && sym_is_const(t, x[in->dims[d]], &v) ? v : RT_DIM_FREE;
            if (first) fixed[k][d] = here;
            else if (fixed[k][d] != here) fixed[k][d] = RT_DIM_FREE;
        }
    }
    /* a dim a graph symbol is read from keeps the symbol's message */
    for (uint32_t s = 0; s < g->n_sources; s++)
        if (g->sources[s].input < g->n_inputs && g->sources[s].dim < IR_MAX_RANK)
            fixed[g->sources[s].input][g->sources[s].dim] = RT_DIM_FREE;
    sym_table_free(t);
    free(x);
    return 1;
}

int64_t (*rt_fixed_dims(const rt_engine *root))[IR_MAX_RANK] {
    const rt_engine *io = rt_engine_io(root);
    int64_t(*fixed)[IR_MAX_RANK] = malloc((io->n_inputs + 1) * sizeof *fixed);
    if (!fixed) return NULL;
    for (uint32_t r = 0; r < rt_engine_n_graphs(root); r++)
        if (rt_engine_graph(root, r)->n_inputs != io->n_inputs || !fixed_of_graph(root, r, r == 0, fixed)) {
            free(fixed);
            return NULL;
        }
    /* a dim a root symbol is read from: the symbol's range check speaks for it */
    for (uint32_t s = 0; s < root->n_sources; s++)
        if (root->sources[s].input < io->n_inputs && root->sources[s].dim < IR_MAX_RANK)
            fixed[root->sources[s].input][root->sources[s].dim] = RT_DIM_FREE;
    return fixed;
}

/* ---- the pick --------------------------------------------------------------- */

/* The first guard of region r that fails at cond, or RT_NONE. */
static uint32_t first_failing(const rt_region *reg, const int64_t *cond) {
    for (uint32_t i = 0; i < reg->n_cond; i++)
        if (!sym_rel_holds(reg->cond[i].rel, cond[reg->cond[i].lhs], cond[reg->cond[i].rhs])) return i;
    return RT_NONE;
}

/* "70 > 64": why a relation fails at values a, b */
static void why_not(sym_rel rel, int64_t a, int64_t b, char *buf, size_t cap) {
    switch (rel) {
    case SYM_REL_EQ: snprintf(buf, cap, "%" PRId64 " != %" PRId64, a, b); return;
    case SYM_REL_NE: snprintf(buf, cap, "%" PRId64 " == %" PRId64, a, b); return;
    case SYM_REL_LE: snprintf(buf, cap, "%" PRId64 " > %" PRId64, a, b); return;
    case SYM_REL_LT: snprintf(buf, cap, "%" PRId64 " >= %" PRId64, a, b); return;
    case SYM_REL_DIVISIBLE: snprintf(buf, cap, "%" PRId64 " %% %" PRId64 " != 0", a, b); return;
    default: snprintf(buf, cap, "values %" PRId64 " and %" PRId64, a, b); return;
    }
}

/* Appends to buf (used bytes in *used), keeping room for the "..." mark. */
static void append(char *buf, size_t cap, size_t *used, const char *fmt, const char *a, const char *b, const char *c) {
    if (*used >= cap) return;
    int n = snprintf(buf + *used, cap - *used, fmt, a, b, c);
    if (n < 0) return;
    *used = (size_t)n >= cap - *used ? cap : *used + (size_t)n;
}

static symc_status no_region(const rt_engine *root, const int64_t *sym_values, const int64_t *cond, symc_error *err) {
    char shapes[160], regions[SYMC_ERROR_MSG_CAP];
    size_t used = 0;
    shapes[0] = regions[0] = '\0';
    for (uint32_t s = 0; s < root->n_symbols; s++) {
        char v[32];
        snprintf(v, sizeof v, "%" PRId64, sym_values[s]);
        append(shapes, sizeof shapes, &used, "%s%s=%s", s ? ", " : "", root->symbols[s].name, v);
    }
    if (used >= sizeof shapes) strcpy(shapes + sizeof shapes - 4, "...");
    used = 0;
    for (uint32_t r = 0; r < root->n_regions; r++) {
        const rt_region *reg = &root->regions[r];
        uint32_t f = first_failing(reg, cond);
        char head[48], why[128] = "";
        snprintf(head, sizeof head, "%sregion %u", r ? "; " : "", r);
        if (f != RT_NONE) {
            const rt_guard *gd = &reg->cond[f];
            char vals[64];
            why_not(gd->rel, cond[gd->lhs], cond[gd->rhs], vals, sizeof vals);
            snprintf(why, sizeof why, "%.48s (%s)", gd->message ? gd->message : "?", vals);
        }
        append(regions, sizeof regions, &used, "%s '%s' fails at %s", head, reg->name ? reg->name : "?", why);
    }
    if (used >= sizeof regions) strcpy(regions + sizeof regions - 4, "...");
    const char *name = root->name && *root->name ? root->name : "?";
    return symc_error_setf(err, SYMC_ERR_RANGE, "input shapes %s are in no region of engine '%s': %s", shapes, name,
                           regions);
}

symc_status rt_region_pick(const rt_engine *root, const int64_t *sym_values, int64_t *cond, uint32_t *region,
                           symc_error *err) {
    symc_status st = sym_program_eval(root->region_program, root->region_program_size, sym_values, root->n_symbols,
                                      cond, root->region_slots, err);
    if (st) {
        symc_error_prefix(err, "evaluating the regions' conditions");
        return st;
    }
    for (uint32_t r = 0; r < root->n_regions; r++)
        if (first_failing(&root->regions[r], cond) == RT_NONE) {
            *region = r;
            return SYMC_OK;
        }
    return no_region(root, sym_values, cond, err);
}

/* ---- dim text ----------------------------------------------------------------- */

/* Graph r's text for the dim (over the root's names) into buf. */
static symc_status graph_dim(const rt_engine *root, uint32_t r, int output, uint32_t index, int32_t d, char *buf,
                             size_t cap, symc_error *err) {
    rt_engine g;
    rt_symbol *names;
    if (!named_graph(root, r, &g, &names)) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    sym_table *tab;
    sym_expr *slots;
    symc_status st = rt_engine_sym_table(&g, &tab, &slots, err);
    if (!st) {
        const rt_tensor *t = &g.tensors[output ? g.outputs[index] : g.inputs[index]];
        sym_print(tab, slots[t->dims[d]], buf, cap);
        sym_table_free(tab);
        free(slots);
    }
    free(names);
    return st;
}

static int is_digits(const char *t) { return *t && strspn(t, "0123456789") == strlen(t); }

/* In graph r, root symbol s is pinned to *v: an input dim the root reads s from is the constant *v there (the region
 * takes only shapes with that dim, so s == *v whenever region r runs). */
static symc_status pinned(const rt_engine *root, uint32_t r, uint32_t s, int64_t *v, int *yes, symc_error *err) {
    char t[128];
    *yes = 0;
    for (uint32_t k = 0; k < root->n_sources && !*yes; k++) {
        if (root->sources[k].symbol != s) continue;
        symc_status st = graph_dim(root, r, 0, root->sources[k].input, (int32_t)root->sources[k].dim, t, sizeof t, err);
        if (st) return st;
        if (is_digits(t)) *v = strtoll(t, NULL, 10), *yes = 1;
    }
    return SYMC_OK;
}

/* The dim is root symbol `name` in every region: there it prints as the symbol, or as the constant the region
 * pins the symbol to ("1" in the region of B == 1 is B). Then the symbol is its text: what a caller feeds. */
static symc_status is_symbol_everywhere(const rt_engine *root, int output, uint32_t index, int32_t d, int *yes,
                                        char *name, size_t cap, symc_error *err) {
    char here[128];
    uint32_t n = rt_engine_n_graphs(root), s = RT_NONE;
    *yes = 0;
    for (uint32_t r = 0; r < n && s == RT_NONE; r++) {
        symc_status st = graph_dim(root, r, output, index, d, here, sizeof here, err);
        if (st) return st;
        for (uint32_t k = 0; k < root->n_symbols && s == RT_NONE; k++)
            if (root->symbols[k].name && !strcmp(here, root->symbols[k].name)) s = k;
    }
    if (s == RT_NONE) return SYMC_OK;
    for (uint32_t r = 0; r < n; r++) {
        symc_status st = graph_dim(root, r, output, index, d, here, sizeof here, err);
        if (st) return st;
        if (!strcmp(here, root->symbols[s].name)) continue;
        int64_t v;
        int pin;
        if (!is_digits(here) || (st = pinned(root, r, s, &v, &pin, err))) return st;
        if (!pin || v != strtoll(here, NULL, 10)) return SYMC_OK;
    }
    snprintf(name, cap, "%s", root->symbols[s].name);
    *yes = 1;
    return SYMC_OK;
}

symc_status rt_region_io_dim(const rt_engine *root, int output, uint32_t index, int32_t d, char *buf, size_t cap,
                             symc_error *err) {
    uint32_t n = rt_engine_n_graphs(root);
    char first[128], here[128];
    symc_status st = graph_dim(root, 0, output, index, d, n > 1 ? first : buf, n > 1 ? sizeof first : cap, err);
    if (st || n == 1) return st;
    /* the root's form: the root symbol read from this input dim, if any */
    const char *base = NULL;
    for (uint32_t s = 0; !output && s < root->n_sources; s++)
        if (root->sources[s].input == index && (int32_t)root->sources[s].dim == d)
            base = root->symbols[root->sources[s].symbol].name;
    int same = 1;
    for (uint32_t r = 1; r < n && same; r++) {
        if ((st = graph_dim(root, r, output, index, d, here, sizeof here, err))) return st;
        same = !strcmp(here, first);
    }
    if (same) {
        snprintf(buf, cap, "%s", first);
        return SYMC_OK;
    }
    int sym = 0;
    if ((st = is_symbol_everywhere(root, output, index, d, &sym, buf, cap, err)) || sym) return st;
    size_t used = 0;
    buf[0] = '\0';
    if (base) append(buf, cap, &used, "%s%s%s", base, "", "");
    for (uint32_t r = 0, listed = 0; r < n; r++) {
        if ((st = graph_dim(root, r, output, index, d, here, sizeof here, err))) return st;
        if (base && !strcmp(here, base)) continue;
        char num[16];
        snprintf(num, sizeof num, "%u", r);
        append(buf, cap, &used, base ? (listed ? ", %s in region %s%s" : " (%s in region %s%s") : "%s%s in region %s",
               base ? here : (listed ? ", " : ""), base ? num : here, base ? "" : num);
        listed++;
    }
    if (base) append(buf, cap, &used, "%s%s%s", ")", "", "");
    return SYMC_OK;
}
