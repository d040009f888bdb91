/* The one parser of command-line shapes ("NAME:AxBxC"), for every tool:
 * the trtexec-style flags of `symc compile` and `symc run` (--shapes,
 * --min-shapes, --opt-shapes and --max-shapes, each given any number of
 * times, accumulate into one list of fe_input_shape) and the points of
 * `symc bench` (one shape per input, dims that may name engine symbols).
 *
 * A spec is a comma-separated list of items; an item with a ':' starts an
 * input ("name:AxBxC", the name running to the item's last ':' so TensorFlow
 * names like "input:0" survive) and an item without one is a further shape of
 * the current input, which is how --shapes takes min,opt,max. A point takes
 * one shape an input, so there every item names its input, ';' separates
 * items too and empty items are skipped. split_items reads that grammar for both into a scratch array,
 * which is checked and merged only when the whole spec is valid, so a bad
 * flag leaves the list as it was. Errors quote the flag, the text and the
 * 1-based column, because that is what a person needs to fix a command
 * line. trtexec's spellings --minShapes/--optShapes/--maxShapes are the same
 * flags. --multiple ("x:1=8": input x's dim 1 takes multiples of 8) has a
 * grammar of its own (fe_parse_multiple); its items are kept in the list and
 * applied to the inputs' declarations by fe_shape_list_check, once every
 * --shapes flag is in, so the flags may come in any order. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx.h"

enum { GIVEN_MIN = 1, GIVEN_OPT = 2, GIVEN_MAX = 4, GIVEN_ALL = 7 };

static const char *flag_text(fe_shape_flag f) {
    switch (f) {
    case FE_SHAPES: return "--shapes";
    case FE_MIN_SHAPES: return "--min-shapes";
    case FE_OPT_SHAPES: return "--opt-shapes";
    case FE_MAX_SHAPES: return "--max-shapes";
    }
    return "--shapes";
}

void fe_shape_list_init(fe_shape_list *l) { memset(l, 0, sizeof *l); }

void fe_shape_list_free(fe_shape_list *l) {
    if (!l) return;
    for (uint32_t i = 0; i < l->n; i++) free((char *)l->items[i].name);
    for (uint32_t i = 0; i < l->n_mult; i++) free(l->mult[i].name);
    free(l->items);
    free(l->given);
    free(l->mult);
    memset(l, 0, sizeof *l);
}

int fe_shape_flag_parse(const char *flag, fe_shape_flag *out) {
    /* symc's spellings, then trtexec's (in the same order of fe_shape_flag) */
    static const char *const names[] = {"--shapes", "--min-shapes", "--opt-shapes", "--max-shapes",
                                        "--shapes", "--minShapes",  "--optShapes",  "--maxShapes"};
    for (int i = 0; i < 8; i++)
        if (flag && !strcmp(flag, names[i])) {
            *out = (fe_shape_flag)(i % 4);
            return 1;
        }
    return 0;
}

/* How a spec is read: the flag's spelling (for messages), how many shapes
 * an input takes, and whether it is a point (symc bench). */
typedef struct rules {
    const char *flag;
    int max_shapes; /* 3 for --shapes (min,opt,max), else 1 */
    int point;      /* ';' separates items too, every item names its input, dims may be symbols */
} rules;

/* One parsed item group: an input name and 1..3 shapes; in a point, a dim
 * may be a symbol, spec[sym_at .. sym_at + sym_len) (sym_len 0: a number). */
typedef struct parsed {
    char *name;
    size_t name_col;
    int n_shapes;
    int32_t rank[3];
    int64_t dims[3][FE_MAX_RANK];
    size_t col[3];
    size_t sym_at[FE_MAX_RANK], sym_len[FE_MAX_RANK];
} parsed;

static symc_status syntax(symc_error *err, const rules *r, const char *spec, size_t pos, const char *what) {
    return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s '%s': %s at column %zu", r->flag, spec, what, pos + 1);
}

static int is_digit(char ch) { return ch >= '0' && ch <= '9'; }

/* A symbol name's characters: those of the names symc gives symbols (letters,
 * digits, '_'), except 'x', which separates dims. */
static int is_sym_char(char ch) {
    return ch != 'x' && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || is_digit(ch) || ch == '_');
}

/* dims: "" (a scalar) or D('x'D)*, from spec[pos] to `end`; D is digits, or
 * (when sym_at is not NULL) a symbol name, whose dim is -1 */
static symc_status parse_dims(const rules *r, const char *spec, size_t pos, size_t end, int32_t *rank, int64_t *dims,
                              size_t *sym_at, size_t *sym_len, symc_error *err) {
    *rank = 0;
    if (pos == end) return SYMC_OK;
    for (;;) {
        int64_t v = 0;
        size_t at = pos;
        if (sym_at && !is_digit(spec[pos]) && is_sym_char(spec[pos])) {
            while (pos < end && is_sym_char(spec[pos])) pos++;
            v = -1;
        } else if (!is_digit(spec[pos])) {
            return syntax(err, r, spec, pos,
                          sym_at ? "expected a dimension (digits or a symbol name)" : "expected a dimension (digits)");
        }
        while (v >= 0 && pos < end && is_digit(spec[pos])) {
            int d = spec[pos] - '0';
            if (v > (INT64_MAX - d) / 10) return syntax(err, r, spec, pos, "dimension too large");
            v = v * 10 + d;
            pos++;
        }
        if (*rank == FE_MAX_RANK) return syntax(err, r, spec, pos, "more than 8 dimensions");
        if (sym_at) sym_at[*rank] = at, sym_len[*rank] = v < 0 ? pos - at : 0;
        dims[(*rank)++] = v;
        if (pos == end) return SYMC_OK;
        if (spec[pos] != 'x' && (spec[pos] != 'X' || v < 0))
            return syntax(err, r, spec, pos, "expected 'x' between dimensions, ',' or the end");
        pos++;
        if (pos == end) return syntax(err, r, spec, pos, "expected a dimension after 'x'");
    }
}

static void free_parsed(parsed *p, int n) {
    for (int i = 0; i < n; i++) free(p[i].name);
    free(p);
}

static int is_separator(const rules *r, char ch) { return ch == ',' || (r->point && ch == ';'); }

/* Pass 1, the grammar: the items of spec into groups (an input and its
 * shapes), *out malloc'd. On error *out holds what was read, for free_parsed. */
static symc_status split_items(const rules *r, const char *spec, parsed **out, int *n_out, symc_error *err) {
    size_t len = strlen(spec);
    parsed *ps = NULL;
    int np = 0, cap = 0;
    symc_status st = SYMC_OK;
    for (size_t pos = 0; pos <= len && !st;) {
        size_t end = pos;
        while (end < len && !is_separator(r, spec[end])) end++;
        if (r->point && end == pos) { /* a point skips empty items, as bench always did ("x:1x3,") */
            pos = end + 1;
            continue;
        }
        size_t colon = SIZE_MAX;
        for (size_t i = pos; i < end; i++)
            if (spec[i] == ':') colon = i;
        size_t dims_at = pos;
        if (colon != SIZE_MAX) {
            if (colon == pos) {
                st = syntax(err, r, spec, pos, "expected an input name before ':'");
                break;
            }
            if (np == cap) {
                cap = cap ? 2 * cap : 4;
                parsed *g = realloc(ps, (size_t)cap * sizeof *g);
                if (!g) {
                    st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory parsing %s", r->flag);
                    break;
                }
                ps = g;
            }
            parsed *p = &ps[np];
            memset(p, 0, sizeof *p);
            p->name = malloc(colon - pos + 1);
            if (!p->name) {
                st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory parsing %s", r->flag);
                break;
            }
            np++;
            memcpy(p->name, spec + pos, colon - pos);
            p->name[colon - pos] = '\0';
            p->name_col = pos;
            dims_at = colon + 1;
        } else if (r->point) {
            st = syntax(err, r, spec, pos, "expected NAME:AxBxC");
            break;
        } else if (np == 0) {
            st = syntax(err, r, spec, pos, "expected 'name:' before the shape");
            break;
        } else if (dims_at == end) {
            st = syntax(err, r, spec, pos, "empty shape");
            break;
        }
        parsed *p = &ps[np - 1];
        if (p->n_shapes == r->max_shapes) {
            st = syntax(err, r, spec, pos,
                        r->max_shapes == 3 ? "a fourth shape for one input (give one, or min,opt,max)"
                                           : "a second shape for one input (start the next with 'name:')");
            break;
        }
        int k = p->n_shapes++;
        p->col[k] = dims_at;
        st = parse_dims(r, spec, dims_at, end, &p->rank[k], p->dims[k], r->point ? p->sym_at : NULL, p->sym_len, err);
        pos = end + 1;
    }
    if (!st && np == 0) st = syntax(err, r, spec, 0, "expected NAME:AxBxC");
    *out = ps;
    *n_out = np;
    return st;
}

static int find_item(const fe_shape_list *l, const char *name) {
    for (uint32_t i = 0; i < l->n; i++)
        if (!strcmp(l->items[i].name, name)) return (int)i;
    return -1;
}

static const char *bound_name(int bit) { return bit == GIVEN_MIN ? "min" : bit == GIVEN_OPT ? "opt" : "max"; }

symc_status fe_parse_shapes(fe_shape_list *l, fe_shape_flag flag, const char *spec, symc_error *err) {
    if (!l || !spec) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_parse_shapes: NULL argument");
    if ((unsigned)flag > FE_MAX_SHAPES)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_parse_shapes: bad flag %d", (int)flag);
    size_t len = strlen(spec);
    if (len == 0)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s needs a value like x:1x3x224x224", flag_text(flag));
    rules r = {flag_text(flag), flag == FE_SHAPES ? 3 : 1, 0};
    parsed *ps = NULL;
    int np = 0;
    symc_status st = split_items(&r, spec, &ps, &np, err);
    /* pass 2: checks within this flag */
    for (int i = 0; i < np && !st; i++) {
        parsed *p = &ps[i];
        if (p->n_shapes == 2)
            st = symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                 "%s '%s': input '%s' has 2 shapes; give one (fixed) or three "
                                 "(min,opt,max)",
                                 flag_text(flag), spec, p->name);
        for (int k = 1; k < p->n_shapes && !st; k++)
            if (p->rank[k] != p->rank[0])
                st = symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                     "%s '%s': shapes of input '%s' have %d and %d dims (column %zu)", flag_text(flag),
                                     spec, p->name, (int)p->rank[0], (int)p->rank[k], p->col[k] + 1);
        for (int j = 0; j < i && !st; j++)
            if (!strcmp(ps[j].name, p->name))
                st = symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s '%s': input '%s' appears twice (column %zu)",
                                     flag_text(flag), spec, p->name, p->name_col + 1);
    }
    /* pass 3: against what earlier flags declared */
    int bits_of_flag = flag == FE_SHAPES ? GIVEN_ALL
        : flag == FE_MIN_SHAPES          ? GIVEN_MIN
        : flag == FE_OPT_SHAPES          ? GIVEN_OPT
                                         : GIVEN_MAX;
    for (int i = 0; i < np && !st; i++) {
        int at = find_item(l, ps[i].name);
        if (at < 0) continue;
        int both = l->given[at] & bits_of_flag;
        if (both) {
            int bit = both & GIVEN_MIN ? GIVEN_MIN : both & GIVEN_OPT ? GIVEN_OPT : GIVEN_MAX;
            st = symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                 "%s '%s': the %s shape of input '%s' is already declared by an "
                                 "earlier flag",
                                 flag_text(flag), spec, bound_name(bit), ps[i].name);
        } else if (l->items[at].rank != ps[i].rank[0]) {
            st = symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                 "%s '%s': input '%s' has %d dims here but %d in an earlier flag", flag_text(flag),
                                 spec, ps[i].name, (int)ps[i].rank[0], (int)l->items[at].rank);
        }
    }
    /* pass 4: merge (only allocation can fail now; the list stays valid) */
    for (int i = 0; i < np && !st; i++) {
        parsed *p = &ps[i];
        int at = find_item(l, p->name);
        if (at < 0) {
            if (l->n == l->cap) {
                uint32_t ncap = l->cap ? 2 * l->cap : 4;
                fe_input_shape *it = realloc(l->items, ncap * sizeof *it);
                if (it) l->items = it;
                uint8_t *gv = it ? realloc(l->given, ncap) : NULL;
                if (gv) l->given = gv;
                if (!it || !gv) {
                    st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory parsing %s", flag_text(flag));
                    break;
                }
                l->cap = ncap;
            }
            at = (int)l->n++;
            memset(&l->items[at], 0, sizeof l->items[at]);
            l->items[at].name = p->name;
            l->items[at].rank = p->rank[0];
            l->given[at] = 0;
            p->name = NULL; /* owned by the list now */
        }
        fe_input_shape *s = &l->items[at];
        size_t bytes = (size_t)p->rank[0] * sizeof(int64_t);
        if (flag == FE_SHAPES) {
            int k1 = p->n_shapes == 3 ? 1 : 0, k2 = p->n_shapes == 3 ? 2 : 0;
            memcpy(s->min, p->dims[0], bytes);
            memcpy(s->opt, p->dims[k1], bytes);
            memcpy(s->max, p->dims[k2], bytes);
        } else {
            memcpy(flag == FE_MIN_SHAPES ? s->min : flag == FE_OPT_SHAPES ? s->opt : s->max, p->dims[0], bytes);
        }
        l->given[at] |= (uint8_t)bits_of_flag;
    }
    free_parsed(ps, np);
    return st;
}

/* ---- --multiple ----------------------------------------------------------------------------------- */

/* digits from spec[*pos] into *v (at most 18 of them: no overflow); 0 when there are none */
static int read_count(const char *spec, size_t *pos, int64_t *v) {
    size_t p = *pos;
    *v = 0;
    while (is_digit(spec[p]) && p - *pos < 18) *v = *v * 10 + (spec[p++] - '0');
    if (p == *pos || is_digit(spec[p])) return 0;
    *pos = p;
    return 1;
}

symc_status fe_parse_multiple(fe_shape_list *l, const char *spec, symc_error *err) {
    if (!l || !spec) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_parse_multiple: NULL argument");
    rules r = {"--multiple", 1, 0};
    if (!spec[0]) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "--multiple needs a value like x:1=8");
    size_t len = strlen(spec);
    uint32_t n0 = l->n_mult;
    symc_status st = SYMC_OK;
    for (size_t pos = 0; pos <= len && !st;) {
        size_t end = pos;
        while (end < len && spec[end] != ',') end++;
        size_t colon = SIZE_MAX;
        for (size_t i = pos; i < end; i++)
            if (spec[i] == ':') colon = i;
        int64_t axis = 0, m = 1;
        size_t p = colon + 1;
        if (colon == SIZE_MAX || colon == pos) {
            st = syntax(err, &r, spec, pos, "expected NAME:AXIS=MULTIPLE");
        } else if (!read_count(spec, &p, &axis) || axis >= FE_MAX_RANK) {
            st = syntax(err, &r, spec, colon + 1, "expected an axis (0 to 7) after ':'");
        } else if (spec[p] != '=') {
            st = syntax(err, &r, spec, p, "expected '=' after the axis");
        } else if (++p, !read_count(spec, &p, &m) || m < 1) {
            size_t at = (size_t)(strchr(spec + colon, '=') - spec) + 1, digits = 0;
            while (is_digit(spec[at + digits])) digits++;
            st = syntax(err, &r, spec, at,
                        digits > 18 ? "the multiple is too large (at most 18 digits; a multiple past the dim's "
                                      "maximum leaves no size)"
                                    : "expected a multiple (>= 1) after '='");
        } else if (p != end) {
            st = syntax(err, &r, spec, p, "expected ',' or the end");
        }
        if (st) break;
        for (uint32_t i = 0; i < l->n_mult && !st; i++)
            if (l->mult[i].axis == axis && strlen(l->mult[i].name) == colon - pos &&
                !strncmp(l->mult[i].name, spec + pos, colon - pos))
                st = symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                     "--multiple '%s': input '%s' dim %d is declared a multiple twice (column %zu)",
                                     spec, l->mult[i].name, (int)axis, pos + 1);
        if (st) break;
        if (l->n_mult == l->cap_mult) {
            uint32_t ncap = l->cap_mult ? 2 * l->cap_mult : 4;
            fe_multiple *g = realloc(l->mult, ncap * sizeof *g);
            if (!g) {
                st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory parsing --multiple");
                break;
            }
            l->mult = g;
            l->cap_mult = ncap;
        }
        fe_multiple *it = &l->mult[l->n_mult];
        if (!(it->name = malloc(colon - pos + 1))) {
            st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory parsing --multiple");
            break;
        }
        memcpy(it->name, spec + pos, colon - pos);
        it->name[colon - pos] = '\0';
        it->axis = (int32_t)axis;
        it->m = m;
        it->col = pos + 1;
        l->n_mult++;
        pos = end + 1;
    }
    if (st) /* the list as it was */
        while (l->n_mult > n0) free(l->mult[--l->n_mult].name);
    return st;
}

/* Each --multiple into its input's item: a declared input, a dim inside its rank, a dynamic one. */
static symc_status apply_multiples(fe_shape_list *l, symc_error *err) {
    for (uint32_t i = 0; i < l->n_mult; i++) {
        const fe_multiple *mu = &l->mult[i];
        int at = find_item(l, mu->name);
        if (at < 0) {
            char names[256];
            size_t n = 0;
            names[0] = '\0';
            for (uint32_t k = 0; k < l->n && n < sizeof names; k++)
                n += (size_t)snprintf(names + n, sizeof names - n, "%s'%s'", k ? ", " : "", l->items[k].name);
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "--multiple %s:%d=%" PRId64 ": input '%s' has no declared shapes (declared: %s); "
                                   "give its range with --shapes %s:MIN,OPT,MAX",
                                   mu->name, (int)mu->axis, mu->m, mu->name, n ? names : "none", mu->name);
        }
        fe_input_shape *s = &l->items[at];
        if (mu->axis >= s->rank)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "--multiple %s:%d=%" PRId64 ": input '%s' has %d dims (axes 0 to %d)", mu->name,
                                   (int)mu->axis, mu->m, mu->name, (int)s->rank, (int)s->rank - 1);
        if (s->min[mu->axis] == s->max[mu->axis])
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "--multiple %s:%d=%" PRId64 ": input '%s' dim %d is fixed (%" PRId64
                                   "); --multiple is for a dynamic dim (min < max)",
                                   mu->name, (int)mu->axis, mu->m, mu->name, (int)mu->axis, s->min[mu->axis]);
        s->multiple[mu->axis] = mu->m;
    }
    return SYMC_OK;
}

symc_status fe_shape_list_check(fe_shape_list *l, symc_error *err) {
    if (!l) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_shape_list_check: NULL list");
    for (uint32_t i = 0; i < l->n; i++) {
        const fe_input_shape *s = &l->items[i];
        static const struct {
            int bit;
            const char *flag;
        } need[] = {{GIVEN_MIN, "--min-shapes"}, {GIVEN_OPT, "--opt-shapes"}, {GIVEN_MAX, "--max-shapes"}};
        for (int k = 0; k < 3; k++)
            if (!(l->given[i] & need[k].bit))
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "input '%s' has no %s shape: add %s %s:... (or give all three "
                                       "with --shapes %s:MIN,OPT,MAX)",
                                       s->name, bound_name(need[k].bit), need[k].flag, s->name, s->name);
        for (int32_t d = 0; d < s->rank; d++)
            if (s->min[d] > s->opt[d] || s->opt[d] > s->max[d])
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "input '%s' dim %d: min %" PRId64 ", opt %" PRId64 ", max %" PRId64
                                       " must satisfy min <= opt <= max",
                                       s->name, (int)d, s->min[d], s->opt[d], s->max[d]);
    }
    return apply_multiples(l, err);
}

/* ---- points (symc bench) ------------------------------------------------------------------------ */

void fe_point_init(fe_point *p) { memset(p, 0, sizeof *p); }

static void free_point_input(fe_point_input *in) {
    free(in->name);
    for (int d = 0; d < FE_MAX_RANK; d++) free(in->sym[d]);
}

void fe_point_free(fe_point *p) {
    if (!p) return;
    for (uint32_t i = 0; i < p->n; i++) free_point_input(&p->items[i]);
    free(p->items);
    memset(p, 0, sizeof *p);
}

static int point_has(const fe_point *p, const char *name) {
    for (uint32_t i = 0; i < p->n; i++)
        if (!strcmp(p->items[i].name, name)) return 1;
    return 0;
}

symc_status fe_parse_point(fe_point *p, const char *flag, const char *spec, symc_error *err) {
    if (!p || !flag || !spec) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_parse_point: NULL argument");
    if (!spec[0]) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s needs a value like x:1x3x224x224", flag);
    rules r = {flag, 1, 1};
    parsed *ps = NULL;
    int np = 0;
    symc_status st = split_items(&r, spec, &ps, &np, err);
    /* every input once in a point, across its flags too */
    for (int i = 0; i < np && !st; i++) {
        for (int j = 0; j < i && !st; j++)
            if (!strcmp(ps[j].name, ps[i].name))
                st = symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s '%s': input '%s' appears twice (column %zu)", flag,
                                     spec, ps[i].name, ps[i].name_col + 1);
        if (!st && point_has(p, ps[i].name))
            st = symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s '%s': input '%s' is already given by an earlier flag",
                                 flag, spec, ps[i].name);
    }
    if (!st && p->n + (uint32_t)np > p->cap) {
        fe_point_input *it = realloc(p->items, (p->n + (size_t)np) * sizeof *it);
        if (!it) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory parsing %s", flag);
        else p->items = it, p->cap = p->n + (uint32_t)np;
    }
    /* merge; on a failed allocation, drop what this call added */
    uint32_t n0 = p->n;
    for (int i = 0; i < np && !st; i++) {
        fe_point_input *in = &p->items[p->n];
        memset(in, 0, sizeof *in);
        in->rank = ps[i].rank[0];
        memcpy(in->dims, ps[i].dims[0], sizeof in->dims);
        for (int32_t d = 0; d < in->rank && !st; d++) {
            size_t n = ps[i].sym_len[d];
            if (!n) continue;
            if (!(in->sym[d] = malloc(n + 1))) {
                st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory parsing %s", flag);
                break;
            }
            memcpy(in->sym[d], spec + ps[i].sym_at[d], n);
            in->sym[d][n] = '\0';
        }
        if (st) {
            free_point_input(in);
            break;
        }
        in->name = ps[i].name;
        ps[i].name = NULL; /* owned by the point now */
        p->n++;
    }
    if (st)
        while (p->n > n0) free_point_input(&p->items[--p->n]);
    free_parsed(ps, np);
    return st;
}
