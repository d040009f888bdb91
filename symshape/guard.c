/* Guards: facts a pass needed but could not prove, and their classification.
 *
 * The domain of a guard is every binding of its symbols inside the current
 * (declared, possibly narrowed by sym_assume_eq) ranges and multiples that
 * satisfies the assumed equalities and keeps every unbacked symbol within
 * its bound (sym_symbol_new_unbacked; the bound's symbols join the guard's);
 * bindings at which the guard's own
 * expressions fail to evaluate (a division by zero) are not part of it,
 * because the shape program reports those itself. Classification:
 *   IMPLIED  the guard holds on the whole domain (proof or enumeration);
 *   FALSE    it holds nowhere on the (nonempty) domain;
 *   NARROWS  a binding of the domain is known to violate it (enumeration or a
 *            sampled witness), and the violation is the user's to fix: the
 *            relation is EQ/NE/LE/LT/DIVISIBLE on declared symbols only;
 *   RUNTIME  everything else: BROADCAST guards that hold for some bindings
 *            (their satisfying set "equal, or either is 1" is not a range or
 *            a multiple, so no declaration can express it; the run-time
 *            check rejects bad pairs with a message), guards that involve a
 *            data-dependent symbol (sym_symbol_set_data_dependent), and
 *            guards neither proven nor refuted within the search budget.
 * IMPLIED, FALSE and NARROWS are claims backed by a proof or an exhaustive
 * enumeration or a concrete witness; RUNTIME claims nothing, so it is always
 * a safe answer. Small domains (up to ENUM_LIMIT bindings) are decided
 * exactly by enumeration; larger ones use the prover plus sampled corners. */
#include "symshape/sym_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ENUM_LIMIT (1u << 16)
#define MAX_GSYMS 16
#define FIX_ENUM_LIMIT (1u << 18)

static const char *rel_text(sym_rel r) {
    switch (r) {
    case SYM_REL_EQ: return "==";
    case SYM_REL_NE: return "!=";
    case SYM_REL_LE: return "<=";
    case SYM_REL_LT: return "<";
    case SYM_REL_DIVISIBLE: return "%";
    case SYM_REL_BROADCAST: return "broadcast";
    }
    return "?";
}

symc_status sym_guard_add(sym_table *t, sym_rel rel, sym_expr lhs, sym_expr rhs, const char *provenance,
                          uint32_t *index, symc_error *err) {
    if (!t) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_guard_add: NULL table");
    if ((unsigned)rel > SYM_REL_BROADCAST)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_guard_add: bad relation %d", (int)rel);
    if (!sym__valid(t, lhs) || !sym__valid(t, rhs))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_guard_add (%s): bad expression handle",
                               provenance ? provenance : "");
    int64_t k;
    if (rel == SYM_REL_DIVISIBLE && (!sym_is_const(t, rhs, &k) || k < 1))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "sym_guard_add (%s): a divisibility guard needs a positive constant divisor",
                               provenance ? provenance : "");
    for (uint32_t i = 0; i < t->nguards; i++) {
        const sym_gd *g = &t->guards[i];
        if (g->rel == rel && g->lhs == lhs && g->rhs == rhs) {
            if (index) *index = i;
            return SYMC_OK;
        }
    }
    if (sym__grow((void **)&t->guards, &t->capguards, t->nguards + 1, sizeof *t->guards))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory adding a guard");
    const char *p = provenance ? provenance : "";
    size_t n = strlen(p) + 1;
    char *c = malloc(n);
    if (!c) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory adding a guard");
    memcpy(c, p, n);
    t->guards[t->nguards] = (sym_gd){rel, lhs, rhs, c};
    if (index) *index = t->nguards;
    t->nguards++;
    return SYMC_OK;
}

uint32_t sym_guard_count(const sym_table *t) { return t ? t->nguards : 0; }

int sym_guard_get(const sym_table *t, uint32_t index, sym_guard *out) {
    if (!out) return 0;
    memset(out, 0, sizeof *out);
    if (!t || index >= t->nguards) return 0;
    const sym_gd *g = &t->guards[index];
    out->rel = g->rel;
    out->lhs = g->lhs;
    out->rhs = g->rhs;
    out->provenance = g->provenance;
    return 1;
}

/* 1 holds, 0 violated; an error status when the expressions fail. */
static symc_status holds_at(const sym_table *t, sym_rel rel, sym_expr lhs, sym_expr rhs, const int64_t *v, uint32_t n,
                            int *holds, symc_error *err) {
    int64_t a, b;
    symc_status s;
    if ((s = sym_eval(t, lhs, v, n, &a, err)) || (s = sym_eval(t, rhs, v, n, &b, err))) return s;
    if (rel == SYM_REL_DIVISIBLE && b < 1)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "divisibility guard by %" PRId64, b);
    *holds = sym_rel_holds(rel, a, b);
    return SYMC_OK;
}

symc_status sym_guard_eval(const sym_table *t, uint32_t index, const int64_t *values, uint32_t n, int *holds,
                           symc_error *err) {
    if (!t || !holds || index >= t->nguards)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_guard_eval: bad guard index %u", index);
    const sym_gd *g = &t->guards[index];
    symc_status s = holds_at(t, g->rel, g->lhs, g->rhs, values, n, holds, err);
    if (s && err) symc_error_prefix(err, "guard %u (%s)", index, g->provenance);
    return s;
}

/* ---- classification ------------------------------------------------------------ */

typedef struct gctx {
    uint32_t ids[MAX_GSYMS], nids;
    bool overflowed; /* more symbols than MAX_GSYMS (or out of memory): no enumeration */
    bool data_dep;
    bool *touch;   /* per assumed equality: does it tie one of ids? (NULL: none do) */
    int64_t *vals; /* nsyms values, others parked at their min */
    bool have_witness;
    int64_t witness[MAX_GSYMS];
    uint64_t n_hold, n_fail;
} gctx;

static void add_syms(const sym_table *t, gctx *c, sym_expr e) {
    uint32_t tmp[MAX_GSYMS + 1], n = sym__symbols_of(t, e, tmp, 0, MAX_GSYMS + 1);
    if (n == UINT32_MAX) { /* out of memory: the list is incomplete */
        c->overflowed = true;
        return;
    }
    for (uint32_t i = 0; i < n; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < c->nids; j++) seen |= c->ids[j] == tmp[i];
        if (seen) continue;
        if (c->nids == MAX_GSYMS) {
            c->overflowed = true;
            return;
        }
        c->ids[c->nids++] = tmp[i];
    }
}

static bool eq_touches(const sym_table *t, gctx *c, const sym_eq *q) {
    uint32_t tmp[64], n = sym__symbols_of(t, q->a, tmp, 0, 64);
    if (n != UINT32_MAX) n = sym__symbols_of(t, q->b, tmp, n, 64);
    if (n == UINT32_MAX) { /* out of memory: give up enumerating rather than guess */
        c->overflowed = true;
        return true;
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < c->nids; j++)
            if (tmp[i] == c->ids[j]) return true;
    return false;
}

/* Symbols of the guard plus those tied to them by assumed equalities, and
 * which equalities tie them (computed once here: walking every equality's
 * expressions again at each enumerated binding costs more than evaluating). */
static void collect(const sym_table *t, const sym_gd *g, gctx *c) {
    add_syms(t, c, g->lhs);
    add_syms(t, c, g->rhs);
    for (bool grew = true; grew && !c->overflowed;) {
        grew = false;
        for (uint32_t i = 0; i < c->nids && !c->overflowed; i++) { /* an unbacked symbol's bound: its domain */
            sym_expr ub = t->syms[c->ids[i]].ubound;
            if (ub == SYM_NONE) continue;
            uint32_t before = c->nids;
            add_syms(t, c, ub);
            grew |= c->nids != before;
        }
        for (uint32_t i = 0; i < t->neqs; i++) {
            if (!eq_touches(t, c, &t->eqs[i])) continue;
            uint32_t before = c->nids;
            add_syms(t, c, t->eqs[i].a);
            add_syms(t, c, t->eqs[i].b);
            grew |= c->nids != before;
        }
    }
    for (uint32_t i = 0; i < c->nids; i++) c->data_dep |= t->syms[c->ids[i]].data_dependent;
    if (c->overflowed || !t->neqs) return;
    if (!(c->touch = malloc(t->neqs * sizeof *c->touch))) {
        c->overflowed = true; /* nothing is claimed without enumerating */
        return;
    }
    for (uint32_t i = 0; i < t->neqs; i++) c->touch[i] = eq_touches(t, c, &t->eqs[i]);
}

static bool in_domain(const sym_table *t, const gctx *c) {
    for (uint32_t i = 0; i < c->nids; i++) { /* an unbacked symbol never exceeds its bound */
        sym_expr ub = t->syms[c->ids[i]].ubound;
        int64_t b;
        if (ub != SYM_NONE && (sym_eval(t, ub, c->vals, t->nsyms, &b, NULL) || c->vals[c->ids[i]] > b)) return false;
    }
    for (uint32_t i = 0; i < t->neqs; i++) {
        if (!c->touch || !c->touch[i]) continue;
        int64_t a, b;
        if (sym_eval(t, t->eqs[i].a, c->vals, t->nsyms, &a, NULL) ||
            sym_eval(t, t->eqs[i].b, c->vals, t->nsyms, &b, NULL) || a != b)
            return false;
    }
    return true;
}

static void visit(const sym_table *t, const sym_gd *g, gctx *c) {
    if (!in_domain(t, c)) return;
    int h = 0;
    if (holds_at(t, g->rel, g->lhs, g->rhs, c->vals, t->nsyms, &h, NULL)) return;
    if (h) {
        c->n_hold++;
    } else {
        c->n_fail++;
        if (!c->have_witness) {
            c->have_witness = true;
            for (uint32_t i = 0; i < c->nids; i++) c->witness[i] = c->vals[c->ids[i]];
        }
    }
}

static uint64_t domain_size(const sym_table *t, const gctx *c) {
    uint64_t total = 1;
    for (uint32_t i = 0; i < c->nids; i++) {
        const sym_sym *s = &t->syms[c->ids[i]];
        uint64_t span = ((uint64_t)s->max - (uint64_t)s->min) / (uint64_t)s->mult + 1;
        if (span == 0 || total > UINT64_MAX / span) return UINT64_MAX;
        total *= span;
    }
    return total;
}

static void enumerate(const sym_table *t, const sym_gd *g, gctx *c) {
    for (uint32_t i = 0; i < c->nids; i++) c->vals[c->ids[i]] = t->syms[c->ids[i]].min;
    for (;;) {
        visit(t, g, c);
        uint32_t i = 0;
        for (; i < c->nids; i++) {
            const sym_sym *s = &t->syms[c->ids[i]];
            int64_t *v = &c->vals[c->ids[i]];
            if (*v <= s->max - s->mult) {
                *v += s->mult;
                break;
            }
            *v = s->min;
        }
        if (i == c->nids) return;
    }
}

/* Corners and a few inner points of each symbol's range. */
static uint32_t candidates(const sym_sym *s, int64_t *out) {
    int64_t m = s->mult, mid = s->min + ((s->max - s->min) / 2 / m) * m;
    int64_t c[7] = {s->min, s->max, s->opt, mid, s->min, s->max, s->min};
    uint32_t n = 0;
    if (s->max - s->min >= m) {
        c[4] = s->min + m;
        c[5] = s->max - m;
    }
    if (s->min <= 1 && s->max >= 1 && m == 1) c[6] = 1; /* broadcast's special value */
    for (int i = 0; i < 7; i++) {
        bool dup = false;
        for (uint32_t j = 0; j < n; j++) dup |= out[j] == c[i];
        if (!dup) out[n++] = c[i];
    }
    return n;
}

static void sample(const sym_table *t, const sym_gd *g, gctx *c) {
    int64_t cand[MAX_GSYMS][7];
    uint32_t nc[MAX_GSYMS], idx[MAX_GSYMS] = {0};
    uint64_t total = 1;
    for (uint32_t i = 0; i < c->nids; i++) {
        nc[i] = candidates(&t->syms[c->ids[i]], cand[i]);
        total = total > 4096 ? total : total * nc[i];
    }
    if (total > 4096) /* too many combinations: keep min, max, opt per symbol */
        for (uint32_t i = 0; i < c->nids; i++) nc[i] = nc[i] < 3 ? nc[i] : 3;
    for (uint64_t step = 0; step < 4096; step++) {
        for (uint32_t i = 0; i < c->nids; i++) c->vals[c->ids[i]] = cand[i][idx[i]];
        visit(t, g, c);
        uint32_t i = 0;
        for (; i < c->nids; i++) {
            if (++idx[i] < nc[i]) break;
            idx[i] = 0;
        }
        if (i == c->nids) return;
    }
}

static sym_tri prove_rel(sym_table *t, sym_rel rel, sym_expr l, sym_expr r) {
    int64_t k;
    switch (rel) {
    case SYM_REL_EQ: return sym_prove_eq(t, l, r);
    case SYM_REL_NE: return sym_prove_ne(t, l, r);
    case SYM_REL_LE: return sym_prove_le(t, l, r);
    case SYM_REL_LT: return sym_prove_lt(t, l, r);
    case SYM_REL_DIVISIBLE: return sym_is_const(t, r, &k) ? sym_prove_divisible(t, l, k) : SYM_UNKNOWN;
    case SYM_REL_BROADCAST: {
        sym_expr one = sym_const(t, 1);
        sym_tri a = sym_prove_eq(t, l, r), b = sym_prove_eq(t, l, one), c = sym_prove_eq(t, r, one);
        if (a == SYM_TRUE || b == SYM_TRUE || c == SYM_TRUE) return SYM_TRUE;
        if (a == SYM_FALSE && b == SYM_FALSE && c == SYM_FALSE) return SYM_FALSE;
        return SYM_UNKNOWN;
    }
    }
    return SYM_UNKNOWN;
}

static sym_guard_state classify_in(sym_table *t, const sym_gd *g, gctx *c, bool want_witness) {
    collect(t, g, c);
    sym_guard_state mixed = (g->rel == SYM_REL_BROADCAST || c->data_dep) ? SYM_GUARD_RUNTIME : SYM_GUARD_NARROWS;
    sym_tri p = prove_rel(t, g->rel, g->lhs, g->rhs);
    if (p == SYM_TRUE) return SYM_GUARD_IMPLIED;
    if (p == SYM_FALSE && !want_witness) return SYM_GUARD_FALSE;
    if (c->overflowed) return p == SYM_FALSE ? SYM_GUARD_FALSE : SYM_GUARD_RUNTIME;
    c->vals = malloc((t->nsyms ? t->nsyms : 1) * sizeof *c->vals);
    if (!c->vals) return p == SYM_FALSE ? SYM_GUARD_FALSE : SYM_GUARD_RUNTIME; /* nothing claimed */
    for (uint32_t i = 0; i < t->nsyms; i++) c->vals[i] = t->syms[i].min;
    sym_guard_state st;
    if (domain_size(t, c) <= ENUM_LIMIT) {
        enumerate(t, g, c);
        st = p == SYM_FALSE || (c->n_hold == 0 && c->n_fail) ? SYM_GUARD_FALSE
            : c->n_fail == 0                                 ? SYM_GUARD_IMPLIED
                                                             : mixed;
    } else {
        sample(t, g, c);
        /* a witness proves "some declared binding fails"; never claim IMPLIED here */
        st = p == SYM_FALSE ? SYM_GUARD_FALSE : c->n_fail ? mixed : SYM_GUARD_RUNTIME;
    }
    free(c->vals);
    c->vals = NULL;
    return st;
}

static sym_guard_state classify(sym_table *t, const sym_gd *g, gctx *c, bool want_witness) {
    memset(c, 0, sizeof *c);
    sym_guard_state st = classify_in(t, g, c, want_witness);
    free(c->touch);
    c->touch = NULL;
    return st;
}

sym_guard_state sym_guard_classify(sym_table *t, uint32_t index) {
    if (!t || index >= t->nguards) return SYM_GUARD_RUNTIME;
    gctx c;
    sym_gd g = t->guards[index];
    return classify(t, &g, &c, false);
}

const char *sym_guard_state_name(sym_guard_state s) {
    switch (s) {
    case SYM_GUARD_IMPLIED: return "implied";
    case SYM_GUARD_RUNTIME: return "runtime";
    case SYM_GUARD_NARROWS: return "narrows";
    case SYM_GUARD_FALSE: return "false";
    }
    return "unknown";
}

/* ---- explanation ------------------------------------------------------------------ */

typedef struct out {
    char *buf;
    size_t cap, len;
} out;

static void emit(out *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void emit(out *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) o->len += (size_t)n;
}

static void relation_text(sym_table *t, const sym_gd *g, out *o) {
    char a[160], b[160];
    sym__text(t, g->lhs, a, sizeof a);
    sym__text(t, g->rhs, b, sizeof b);
    if (g->rel == SYM_REL_DIVISIBLE) emit(o, "%s %% %s == 0", a, b);
    else if (g->rel == SYM_REL_BROADCAST) emit(o, "%s and %s to broadcast (equal, or one of them 1)", a, b);
    else emit(o, "%s %s %s", a, rel_text(g->rel), b);
}

/* The single symbol of the guard (after equalities) or UINT32_MAX. */
static uint32_t lone_symbol(sym_table *t, const sym_gd *g) {
    uint32_t ids[2], n = sym__symbols_of(t, g->lhs, ids, 0, 2);
    if (n != UINT32_MAX) n = sym__symbols_of(t, g->rhs, ids, n, 2);
    return n == 1 ? ids[0] : UINT32_MAX;
}

/* ": " and the symbol's hint with each "{m}" replaced by m: the exact flag or
 * argument that declares the multiple (sym_symbol_set_hint). */
static void emit_hint(out *o, const char *hint, int64_t m) {
    emit(o, ": ");
    for (const char *p = hint; *p;) {
        const char *at = strstr(p, "{m}");
        size_t n = at ? (size_t)(at - p) : strlen(p);
        emit(o, "%.*s", (int)n, p);
        if (!at) break;
        emit(o, "%" PRId64, m);
        p = at + 3;
    }
}

static void suggest(sym_table *t, const sym_gd *g, out *o) {
    char r[64], e[160];
    int64_t k;
    /* divisibility of c*S: S must be a multiple of k/gcd(c, k) */
    if (g->rel == SYM_REL_DIVISIBLE && sym_is_const(t, g->rhs, &k)) {
        sym_view v;
        sym_expr u = g->lhs;
        int64_t c = 1;
        sym_expr_view(t, u, &v);
        if (v.kind == SYM_MUL) {
            c = v.value;
            for (uint32_t i = 0; i < v.n; i++)
                if (sym__node(t, v.ops[i])->kind == SYM_SYMBOL) {
                    u = v.ops[i];
                    break;
                }
        }
        if (sym__node(t, u)->kind == SYM_SYMBOL) {
            const sym_sym *s = &t->syms[sym__node(t, u)->value];
            int64_t need = k / sym__gcd(c, k), g2 = sym__gcd(need, s->mult), m;
            if (!__builtin_mul_overflow(need / g2, s->mult, &m)) {
                int64_t lo = s->min, hi = s->max;
                if (sym__round_range(&lo, &hi, m)) {
                    emit(o, "; fix: declare %s as a multiple of %" PRId64, s->name, m);
                    if (s->hint) emit_hint(o, s->hint, m);
                } else
                    emit(o, "; no multiple of %" PRId64 " lies in %s's range %s", m, s->name,
                         sym__range_text(s->min, s->max, r, sizeof r));
                return;
            }
        }
    }
    uint32_t id = lone_symbol(t, g);
    if (id != UINT32_MAX) {
        const sym_sym *s = &t->syms[id];
        uint64_t span = ((uint64_t)s->max - (uint64_t)s->min) / (uint64_t)s->mult + 1;
        if (span && span <= FIX_ENUM_LIMIT) {
            int64_t *vals = malloc((t->nsyms ? t->nsyms : 1) * sizeof *vals);
            if (vals) {
                for (uint32_t i = 0; i < t->nsyms; i++) vals[i] = t->syms[i].min;
                int64_t first = 0, last = 0;
                bool any = false, gap = false, after = false;
                for (uint64_t j = 0; j < span; j++) {
                    vals[id] = s->min + (int64_t)j * s->mult;
                    int h = 0;
                    if (holds_at(t, g->rel, g->lhs, g->rhs, vals, t->nsyms, &h, NULL)) h = 0;
                    if (h) {
                        if (after) gap = true;
                        if (!any) first = vals[id];
                        last = vals[id];
                        any = true;
                    } else if (any) {
                        after = true;
                    }
                }
                free(vals);
                if (any && !gap) {
                    if (first == last)
                        emit(o, "; fix: declare %s as the constant %" PRId64 " (min = max = %" PRId64 ")", s->name,
                             first, first);
                    else emit(o, "; fix: narrow %s to %s", s->name, sym__range_text(first, last, r, sizeof r));
                    return;
                }
                if (any) {
                    emit(o, "; fix: restrict %s to values where it holds (e.g. %s = %" PRId64 ")", s->name, s->name,
                         first);
                    return;
                }
            }
        }
    }
    if (g->rel == SYM_REL_EQ) {
        const sym_node *a = sym__node(t, g->lhs), *b = sym__node(t, g->rhs);
        if (a->kind == SYM_SYMBOL && b->kind == SYM_SYMBOL) {
            emit(o, "; fix: declare %s and %s as one symbol (they must be equal)", t->syms[a->value].name,
                 t->syms[b->value].name);
            return;
        }
        if (a->kind == SYM_SYMBOL || b->kind == SYM_SYMBOL) {
            bool left = a->kind == SYM_SYMBOL;
            emit(o, "; fix: declare %s as %s", t->syms[(left ? a : b)->value].name,
                 sym__text(t, left ? g->rhs : g->lhs, e, sizeof e));
            return;
        }
    }
    emit(o, "; fix: change the declared ranges so that it holds for every shape");
}

/* A guard over a size known only at run time (an unbacked or data-dependent
 * symbol) cannot be fixed by declaring other ranges for it: the fix names
 * what produces it instead of suggesting "narrow u0". Returns whether it
 * wrote the fix. */
static bool produced_fix(const sym_table *t, const gctx *c, out *o) {
    for (uint32_t i = 0; i < c->nids; i++) {
        const sym_sym *s = &t->syms[c->ids[i]];
        if (!s->data_dependent) continue;
        emit(o, "; fix: change the graph: %s is %s, known only at run time", s->name,
             s->provenance[0] ? s->provenance : "a size produced at run time");
        if (s->ubound != SYM_NONE) {
            char b[160];
            emit(o, " (at most %s)", sym__text(t, s->ubound, b, sizeof b));
        }
        return true;
    }
    return false;
}

size_t sym_guard_explain(sym_table *t, uint32_t index, char *buf, size_t cap) {
    out o = {buf, buf ? cap : 0, 0};
    if (o.cap) buf[0] = '\0';
    if (!t || index >= t->nguards) {
        emit(&o, "no guard %u", index);
        return o.len;
    }
    sym_gd g = t->guards[index];
    gctx c;
    sym_guard_state st = classify(t, &g, &c, true);
    char syms[320];
    sym__symbols_text(t, c.ids, c.nids, syms, sizeof syms);
    emit(&o, "%s%sneeds ", g.provenance, g.provenance[0] ? ": " : "");
    relation_text(t, &g, &o);
    switch (st) {
    case SYM_GUARD_IMPLIED: emit(&o, "; implied by the declared ranges (%s)", syms); break;
    case SYM_GUARD_RUNTIME: emit(&o, "; checked at run time (%s)", syms); break;
    case SYM_GUARD_NARROWS:
    case SYM_GUARD_FALSE:
        if (st == SYM_GUARD_FALSE) emit(&o, "; holds for no declared shape (%s)", syms);
        else emit(&o, "; declared shapes violate it (%s)", syms);
        if (c.have_witness && c.nids) {
            emit(&o, ", e.g. ");
            for (uint32_t i = 0; i < c.nids; i++)
                emit(&o, "%s%s = %" PRId64, i ? ", " : "", t->syms[c.ids[i]].name, c.witness[i]);
        }
        if (!produced_fix(t, &c, &o)) suggest(t, &g, &o);
        break;
    }
    return o.len;
}
