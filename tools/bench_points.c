/* symc bench's points (tools/bench_internal.h): the --shapes and --point specs resolved against the
 * engine's symbols, and --sweep's levels (min, opt, opt+1, a prime between opt and max, max), every
 * symbol at the same level, levels that do not exist or repeat a point skipped. */
#include "tools/bench_internal.h"

/* One parsed flag (or the --shapes flags together) as a point: p's items
 * borrow from `parsed`. Returns 0, or 1 when there are too many inputs. */
static int b_point_of(const fe_point *parsed, b_point *p) {
    if (parsed->n > B_MAX_IO) return 1;
    p->n = parsed->n;
    if (parsed->n) memcpy(p->items, parsed->items, parsed->n * sizeof *p->items); /* items is NULL when n = 0 */
    return 0;
}

static int b_is_prime(int64_t v) {
    if (v < 2) return 0;
    for (int64_t q = 2; q * q <= v; q++)
        if (v % q == 0) return 0;
    return 1;
}

/* The value of symbol s at a sweep level; 0 if the level does not exist. */
int64_t tool_bench_level(const symrt_symbol_info *s, int level) {
    int64_t m = s->multiple_of > 1 ? s->multiple_of : 1;
    switch (level) {
    case 0: return s->min;
    case 1: return s->opt;
    case 2: return s->opt + m <= s->max ? s->opt + m : 0;
    case 3: {
        if (m > 1) return 0;
        int64_t mid = s->opt + (s->max - s->opt) / 2;
        for (int64_t v = mid; v > s->opt + 1; v--)
            if (b_is_prime(v)) return v;
        for (int64_t v = mid + 1; v < s->max; v++)
            if (b_is_prime(v)) return v;
        return 0;
    }
    case 4: return s->max;
    default: return 0;
    }
}

static const char *const level_names[] = {"min", "opt", "opt+1", "prime", "max"};

/* Resolves a template's symbol dims at `level` (-1: opt, for plain --shapes).
 * Returns 0 ok, 1 when the level is missing for a symbol (skip), 2 on an
 * unknown symbol (msg). */
static int b_resolve(const symrt_engine *e, const b_point *tmpl, int level, b_point *out, char *msg, size_t cap) {
    *out = *tmpl;
    for (uint32_t k = 0; k < out->n; k++)
        for (int32_t d = 0; d < out->items[k].rank; d++) {
            const char *sn = out->items[k].sym[d];
            if (!sn) continue;
            uint32_t ns = symrt_engine_num_symbols(e), j;
            symrt_symbol_info s = {0};
            for (j = 0; j < ns; j++)
                if (!symrt_engine_symbol(e, j, &s, NULL) && !strcmp(s.name, sn)) break;
            if (j == ns) {
                int len = snprintf(msg, cap, "'%s' is not a symbol of the engine (it has:", sn);
                for (j = 0; j < ns && len > 0 && (size_t)len < cap; j++)
                    if (!symrt_engine_symbol(e, j, &s, NULL))
                        len += snprintf(msg + len, cap - (size_t)len, " %s", s.name);
                if (len > 0 && (size_t)len < cap) snprintf(msg + len, cap - (size_t)len, ")");
                return 2;
            }
            int64_t v = level < 0 ? s.opt : tool_bench_level(&s, level);
            if (!v) return 1;
            out->items[k].dims[d] = v;
            out->items[k].sym[d] = NULL;
        }
    return 0;
}

static int b_same(const b_point *a, const b_point *b) {
    if (a->n != b->n) return 0;
    for (uint32_t k = 0; k < a->n; k++)
        if (strcmp(a->items[k].name, b->items[k].name) || a->items[k].rank != b->items[k].rank ||
            memcmp(a->items[k].dims, b->items[k].dims, sizeof(int64_t) * (size_t)a->items[k].rank))
            return 0;
    return 1;
}

void tool_bench_shape_text(const b_point *p, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < p->n && len < cap; k++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%s:", k ? "," : "", p->items[k].name);
        for (int32_t d = 0; d < p->items[k].rank && len < cap; d++)
            len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, d ? "x" : "", p->items[k].dims[d]);
    }
}

/* Parses every spec before any file is touched, so syntax errors are usage
 * errors: the --shapes into specs[0] and the template tmpl, --point k into
 * specs[1 + k] and parsed[k] (the b_points borrow from specs). Returns 0, or
 * 2 after a usage error. */
int tool_bench_parse_specs(const b_opts *o, fe_point *specs, b_point *tmpl, b_point *parsed) {
    symc_error err = {0};
    for (int k = 0; k < o->n_shapes; k++)
        if (fe_parse_point(&specs[0], "--shapes", o->shapes[k], &err)) return tool_bench_usage("%s", err.msg);
    if (b_point_of(&specs[0], tmpl)) return tool_bench_usage("--shapes: too many inputs");
    for (int k = 0; k < o->n_points; k++) {
        if (fe_parse_point(&specs[1 + k], "--point", o->points[k], &err)) return tool_bench_usage("%s", err.msg);
        if (b_point_of(&specs[1 + k], &parsed[k])) return tool_bench_usage("--point: too many inputs");
    }
    return 0;
}

/* The points to time, labelled, into pts: each --point, or the --sweep levels
 * of the template (those that exist and repeat no earlier point), or the
 * template at opt. Returns how many, or -1 with msg (an unknown symbol). */
int tool_bench_points(const symrt_engine *e, const b_opts *o, const b_point *tmpl, const b_point *parsed, b_point *pts,
                      char *msg, size_t cap) {
    int n = 0;
    if (o->n_points) {
        for (int k = 0; k < o->n_points; k++) {
            if (b_resolve(e, &parsed[k], -1, &pts[n], msg, cap)) return -1;
            snprintf(pts[n].label, sizeof pts[n].label, "p%d", k);
            pts[n].level = -1;
            n++;
        }
    } else if (o->sweep) {
        for (int level = 0; level < 5; level++) {
            int s = b_resolve(e, tmpl, level, &pts[n], msg, cap);
            if (s == 2) return -1;
            if (s == 1) continue;
            int dup = 0;
            for (int k = 0; k < n; k++) dup |= b_same(&pts[k], &pts[n]);
            if (dup) continue;
            snprintf(pts[n].label, sizeof pts[n].label, "%s", level_names[level]);
            pts[n].level = level;
            n++;
        }
    } else {
        if (b_resolve(e, tmpl, -1, &pts[0], msg, cap)) return -1;
        snprintf(pts[0].label, sizeof pts[0].label, "shapes");
        pts[0].level = -1;
        n = 1;
    }
    return n;
}
