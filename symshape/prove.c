/* Three-valued proofs and assumed equalities.
 *
 * A proof first compares the operands' ranges, then the range of their
 * canonical difference (which cancels shared terms that interval arithmetic
 * alone cannot), and uses residues (e == c mod g) for (in)equality and
 * divisibility. When equalities were assumed, the same questions are asked
 * again on the "substituted" forms, where every symbol is replaced by its
 * class representative (union-find root) or by the expression the class was
 * assumed equal to. Both views are sound, so either one answering is enough.
 *
 * The canonicalizer calls the prover (min/max ordering, division by
 * non-constant divisors) and the prover builds differences with the
 * canonicalizer, so speculative construction runs "quiet" (errors are not
 * recorded in the table) and a depth limit turns runaway re-entrancy into
 * UNKNOWN, which is always a safe answer.
 *
 * An unbacked symbol u (a size produced at run time) has an upper bound
 * over earlier symbols: u <= bound(u) for every binding. An inequality the
 * ranges leave open gets one more try: in the difference b - a, each term
 * that falls as u grows is replaced by its value at u = bound(u), a lower
 * bound of the difference (bound_toward); if that is >= 0, a <= b, and if
 * the upper bound made the same way is < 0, never. */
#include "symshape/sym_internal.h"

#include <stdio.h>
#include <string.h>

#define MAX_PROVE_DEPTH 6

static sym_tri tri_not(sym_tri x) { return x == SYM_UNKNOWN ? x : (x == SYM_TRUE ? SYM_FALSE : SYM_TRUE); }

static sym_expr quiet_sub(sym_table *t, sym_expr a, sym_expr b) {
    t->quiet++;
    sym_expr d = sym_sub(t, a, b);
    t->quiet--;
    return d;
}

/* ---- substitution under the equalities -------------------------------------- */

sym_expr sym__subst(sym_table *t, sym_expr e) {
    if (!t->has_eq || !sym__valid(t, e)) return e;
    if (t->facts[e].subst_epoch == t->epoch) return t->facts[e].subst;
    const sym_node *nd = sym__node(t, e);
    sym_kind kind = (sym_kind)nd->kind;
    uint32_t n = nd->n;
    int64_t value = nd->value;
    sym_expr r = e;
    if (kind == SYM_SYMBOL) {
        uint32_t root = sym__root(t, (uint32_t)value);
        if (t->syms[root].bound != SYM_NONE) r = sym__subst(t, t->syms[root].bound);
        else if (root != (uint32_t)value) r = sym_var(t, root);
    } else if (kind != SYM_CONST) {
        sym_expr ops[64];
        int64_t ks[64];
        if (n > 64) return e; /* wide sums stay as they are: sound, just weaker */
        memcpy(ops, sym__ops(t, e), n * sizeof *ops);
        if (kind == SYM_ADD) memcpy(ks, sym__coefs(t, e), n * sizeof *ks);
        bool changed = false;
        for (uint32_t i = 0; i < n; i++) {
            sym_expr s = sym__subst(t, ops[i]);
            changed |= s != ops[i];
            ops[i] = s;
        }
        if (changed) {
            t->quiet++;
            r = sym_make(t, kind, value, n, ops, kind == SYM_ADD ? ks : NULL);
            t->quiet--;
            if (r == SYM_NONE) r = e;
        }
    }
    t->facts[e].subst = r;
    t->facts[e].subst_epoch = t->epoch;
    return r;
}

/* Depth first, each distinct node once (the DAG's tree can be exponential). */
static bool symbols_walk(const sym_table *t, sym_expr e, sym_memo *seen, uint32_t *ids, uint32_t *n, uint32_t cap) {
    const sym_node *nd = sym__node(t, e);
    if (nd->kind == SYM_SYMBOL) {
        for (uint32_t i = 0; i < *n; i++)
            if (ids[i] == (uint32_t)nd->value) return true;
        if (*n < cap) ids[(*n)++] = (uint32_t)nd->value;
        return true;
    }
    if (nd->n == 0 || sym__memo_find(seen, e)) return true;
    if (!sym__memo_put(seen, e, 0)) return false;
    for (uint32_t i = 0; i < nd->n; i++)
        if (!symbols_walk(t, sym__ops(t, e)[i], seen, ids, n, cap)) return false;
    return true;
}

uint32_t sym__symbols_of(const sym_table *t, sym_expr e, uint32_t *ids, uint32_t n, uint32_t cap) {
    if (!sym__valid(t, e)) return n;
    sym_memo seen;
    sym__memo_init(&seen);
    bool ok = symbols_walk(t, e, &seen, ids, &n, cap);
    sym__memo_free(&seen);
    return ok ? n : UINT32_MAX;
}

/* ---- proofs ------------------------------------------------------------------------- */

/* The unbacked symbol x is (or, for a product, its one unbacked factor
 * with every other factor >= 0), else UINT32_MAX. */
static uint32_t unbacked_in(sym_table *t, sym_expr x) {
    const sym_node *n = sym__node(t, x);
    if (n->kind == SYM_SYMBOL) return t->syms[n->value].ubound != SYM_NONE ? (uint32_t)n->value : UINT32_MAX;
    if (n->kind != SYM_MUL) return UINT32_MAX;
    uint32_t u = UINT32_MAX, nn = n->n; /* n is not read again: sym_range_of may grow the table */
    for (uint32_t i = 0; i < nn; i++) {
        sym_expr f = sym__ops(t, x)[i];
        const sym_node *nf = sym__node(t, f);
        if (nf->kind == SYM_SYMBOL && t->syms[nf->value].ubound != SYM_NONE && u == UINT32_MAX) u = (uint32_t)nf->value;
        else if (sym_range_of(t, f).lo < 0 || (nf->kind == SYM_SYMBOL && (uint32_t)nf->value == u)) return UINT32_MAX;
    }
    return u;
}

/* A bound of d from the unbacked symbols' bounds: a lower one (dir < 0)
 * replaces each term c*x of d whose value falls as its unbacked symbol u
 * grows (c times x's constant factor < 0, x = u or u times factors >= 0)
 * by the same term at u = bound(u), which is no larger since u <= bound(u);
 * an upper one (dir > 0) likewise each term that rises with u. SYM_NONE
 * when no term changes (or building fails). */
static sym_expr bound_toward(sym_table *t, sym_expr d, int dir) {
    const sym_node *n = sym__node(t, d);
    uint32_t nt = n->kind == SYM_ADD ? n->n : 1;
    if (nt > 64) return SYM_NONE;
    sym_expr terms[64];
    int64_t coefs[64];
    if (n->kind == SYM_ADD) {
        memcpy(terms, sym__ops(t, d), nt * sizeof *terms);
        memcpy(coefs, sym__coefs(t, d), nt * sizeof *coefs);
    } else {
        terms[0] = d;
        coefs[0] = 1;
    }
    sym_expr out = d;
    bool changed = false;
    t->quiet++;
    for (uint32_t i = 0; i < nt && out != SYM_NONE; i++) {
        uint32_t u = unbacked_in(t, terms[i]);
        if (u == UINT32_MAX) continue;
        /* the term's node read once: every constructor below may grow (move) the table */
        const sym_node *x = sym__node(t, terms[i]);
        int is_mul = x->kind == SYM_MUL;
        int64_t factor = is_mul ? x->value : 1;
        uint32_t nf = is_mul ? x->n : 1;
        sym_expr fs[64];
        if (nf > 64) continue;
        if (is_mul) memcpy(fs, sym__ops(t, terms[i]), nf * sizeof *fs);
        else fs[0] = terms[i];
        int64_t sign = is_mul ? (factor < 0 ? -coefs[i] : coefs[i]) : coefs[i];
        if (sign == 0 || (sign < 0) != (dir < 0)) continue;
        sym_expr at = sym_const(t, factor); /* the term at u = bound(u) */
        for (uint32_t k = 0; k < nf && at != SYM_NONE; k++) {
            const sym_node *n_f = sym__node(t, fs[k]);
            int is_u = n_f->kind == SYM_SYMBOL && (uint32_t)n_f->value == u;
            at = sym_mul(t, at, is_u ? t->syms[u].ubound : fs[k]);
        }
        out = sym_add(t, out, sym_scale(t, sym_sub(t, at, terms[i]), coefs[i]));
        changed = true;
    }
    t->quiet--;
    return changed ? out : SYM_NONE;
}

static sym_tri le_core(sym_table *t, sym_expr a, sym_expr b) {
    if (a == b) return SYM_TRUE;
    sym_range ra = sym_range_of(t, a), rb = sym_range_of(t, b);
    if (ra.hi <= rb.lo) return SYM_TRUE;
    if (ra.lo > rb.hi) return SYM_FALSE;
    sym_expr d = quiet_sub(t, b, a);
    if (d == SYM_NONE) return SYM_UNKNOWN;
    sym_range rd = sym_range_of(t, d);
    if (rd.lo >= 0) return SYM_TRUE;
    if (rd.hi < 0) return SYM_FALSE;
    /* b - a between bounds from the unbacked symbols' bounds; a few rounds,
     * for bounds that mention other unbacked symbols */
    for (int dir = -1; dir <= 1; dir += 2) {
        sym_expr x = d;
        for (int round = 0; round < 4; round++) {
            x = bound_toward(t, x, dir);
            if (x == SYM_NONE) break;
            sym_range rx = sym_range_of(t, x);
            if (dir < 0 && rx.lo >= 0) return SYM_TRUE;
            if (dir > 0 && rx.hi < 0) return SYM_FALSE;
        }
    }
    return SYM_UNKNOWN;
}

static bool in_geqs(sym_table *t, sym_expr a, sym_expr b) {
    for (uint32_t i = 0; i < t->ngeqs; i++) {
        /* stored forms may predate later bindings: compare current forms */
        sym_expr x = sym__subst(t, t->geqs[i].a), y = sym__subst(t, t->geqs[i].b);
        if ((x == a && y == b) || (x == b && y == a)) return true;
    }
    return false;
}

static sym_tri eq_core(sym_table *t, sym_expr a, sym_expr b) {
    if (a == b) return SYM_TRUE;
    if (t->ngeqs && in_geqs(t, a, b)) return SYM_TRUE;
    sym_range ra = sym_range_of(t, a), rb = sym_range_of(t, b);
    if (ra.hi < rb.lo || rb.hi < ra.lo) return SYM_FALSE;
    sym_expr d = quiet_sub(t, a, b);
    if (d == SYM_NONE) return SYM_UNKNOWN;
    int64_t v;
    if (sym_is_const(t, d, &v)) return v == 0 ? SYM_TRUE : SYM_FALSE;
    sym_range rd = sym_range_of(t, d);
    if (rd.lo > 0 || rd.hi < 0) return SYM_FALSE;
    int64_t g, c = sym__residue(t, d, &g);
    if (g > 1 && sym__mod(c, g) != 0) return SYM_FALSE; /* d == c mod g, never 0 */
    return SYM_UNKNOWN;
}

static sym_tri div_core(sym_table *t, sym_expr a, int64_t k) {
    int64_t d = sym_divisor_of(t, a);
    if (d % k == 0) return SYM_TRUE;
    int64_t r = sym__const_residue(t, a, k);
    if (r >= 0) return r == 0 ? SYM_TRUE : SYM_FALSE;
    sym_range ra = sym_range_of(t, a);
    if (sym__floordiv(ra.lo, k) == sym__floordiv(ra.hi, k) && sym__mod(ra.lo, k) != 0) return SYM_FALSE;
    t->quiet++;
    sym_expr m = sym_mod(t, a, sym_const(t, k));
    t->quiet--;
    if (m == SYM_NONE) return SYM_UNKNOWN;
    int64_t v;
    if (sym_is_const(t, m, &v)) return v == 0 ? SYM_TRUE : SYM_FALSE;
    sym_range rm = sym_range_of(t, m);
    if (rm.lo > 0 || rm.hi < 0) return SYM_FALSE;
    return SYM_UNKNOWN;
}

typedef enum { P_LE, P_EQ } pkind;

static sym_tri prove2(sym_table *t, pkind k, sym_expr a, sym_expr b);

/* min/max on either side split into two questions:
 * min(p, q) <= b if either is; max(p, q) <= b iff both are; duals for b. */
static sym_tri le_minmax(sym_table *t, sym_expr a, sym_expr b) {
    const sym_node *na = sym__node(t, a), *nb = sym__node(t, b);
    bool amm = na->kind == SYM_MIN || na->kind == SYM_MAX, bmm = nb->kind == SYM_MIN || nb->kind == SYM_MAX;
    if (!amm && !bmm) return SYM_UNKNOWN;
    bool any = amm ? na->kind == SYM_MIN : nb->kind == SYM_MAX; /* one suffices vs both needed */
    sym_expr p = amm ? sym__ops(t, a)[0] : sym__ops(t, b)[0], q = amm ? sym__ops(t, a)[1] : sym__ops(t, b)[1];
    sym_tri x = amm ? prove2(t, P_LE, p, b) : prove2(t, P_LE, a, p);
    sym_tri y = amm ? prove2(t, P_LE, q, b) : prove2(t, P_LE, a, q);
    if (any) {
        if (x == SYM_TRUE || y == SYM_TRUE) return SYM_TRUE;
        if (x == SYM_FALSE && y == SYM_FALSE) return SYM_FALSE;
    } else {
        if (x == SYM_TRUE && y == SYM_TRUE) return SYM_TRUE;
        if (x == SYM_FALSE || y == SYM_FALSE) return SYM_FALSE;
    }
    return SYM_UNKNOWN;
}

static sym_tri prove2(sym_table *t, pkind k, sym_expr a, sym_expr b) {
    if (!sym__valid(t, a) || !sym__valid(t, b)) return SYM_UNKNOWN;
    if (t->prove_depth >= MAX_PROVE_DEPTH) return a == b ? SYM_TRUE : SYM_UNKNOWN;
    t->prove_depth++;
    sym_tri r = k == P_LE ? le_core(t, a, b) : eq_core(t, a, b);
    if (r == SYM_UNKNOWN && k == P_LE) r = le_minmax(t, a, b);
    if (r == SYM_UNKNOWN && t->has_eq) {
        sym_expr sa = sym__subst(t, a), sb = sym__subst(t, b);
        if (sa != a || sb != b) r = k == P_LE ? le_core(t, sa, sb) : eq_core(t, sa, sb);
    }
    t->prove_depth--;
    return r;
}

sym_tri sym_prove_le(sym_table *t, sym_expr a, sym_expr b) { return prove2(t, P_LE, a, b); }

sym_tri sym_prove_lt(sym_table *t, sym_expr a, sym_expr b) {
    if (!sym__valid(t, a) || !sym__valid(t, b)) return SYM_UNKNOWN;
    if (a == b) return SYM_FALSE;
    t->quiet++;
    sym_expr a1 = sym_add_const(t, a, 1);
    t->quiet--;
    if (a1 == SYM_NONE) { /* a + 1 overflows only at a == INT64_MAX, where a < b is false */
        sym_range rb = sym_range_of(t, b), ra = sym_range_of(t, a);
        return ra.lo >= rb.hi ? SYM_FALSE : SYM_UNKNOWN;
    }
    return prove2(t, P_LE, a1, b);
}

sym_tri sym_prove_eq(sym_table *t, sym_expr a, sym_expr b) { return prove2(t, P_EQ, a, b); }

sym_tri sym_prove_ne(sym_table *t, sym_expr a, sym_expr b) { return tri_not(sym_prove_eq(t, a, b)); }

sym_tri sym_prove_divisible(sym_table *t, sym_expr a, int64_t k) {
    if (!sym__valid(t, a) || k < 1) return SYM_UNKNOWN;
    if (k == 1) return SYM_TRUE;
    if (t->prove_depth >= MAX_PROVE_DEPTH) return SYM_UNKNOWN;
    t->prove_depth++;
    sym_tri r = div_core(t, a, k);
    if (r == SYM_UNKNOWN && t->has_eq) {
        sym_expr sa = sym__subst(t, a);
        if (sa != a) r = div_core(t, sa, k);
    }
    t->prove_depth--;
    return r;
}

/* ---- assumed equalities ------------------------------------------------------------ */

static int64_t lcm_or_zero(int64_t a, int64_t b) {
    int64_t g = sym__gcd(a, b), r;
    if (g == 0) return 0;
    if (__builtin_mul_overflow(a / g, b, &r)) return 0;
    return r < 0 ? -r : r;
}

static void set_class(sym_table *t, uint32_t root, int64_t lo, int64_t hi, int64_t mult) {
    for (uint32_t i = 0; i < t->nsyms; i++) {
        if (sym__root(t, i) != root) continue;
        sym_sym *s = &t->syms[i];
        s->min = lo;
        s->max = hi;
        s->mult = mult;
        if (s->opt < lo) s->opt = lo;
        if (s->opt > hi) s->opt = hi;
        int64_t r = sym__mod(s->opt, mult);
        if (r) s->opt = s->opt - r >= lo ? s->opt - r : s->opt - r + mult;
    }
}

static symc_status contradiction(sym_table *t, sym_expr a, sym_expr b, const char *why, symc_error *err) {
    char ta[128], tb[128], st[256];
    uint32_t ids[8], n = sym__symbols_of(t, a, ids, 0, 8);
    if (n != UINT32_MAX) n = sym__symbols_of(t, b, ids, n, 8);
    return symc_error_setf(err, SYMC_ERR_CONTRADICTION, "cannot assume %s == %s: %s (%s)",
                           sym__text(t, a, ta, sizeof ta), sym__text(t, b, tb, sizeof tb), why,
                           n == UINT32_MAX ? "out of memory listing the symbols"
                               : n         ? sym__symbols_text(t, ids, n, st, sizeof st)
                                           : "no symbols");
}

static bool contains_symbol(const sym_table *t, sym_expr e, uint32_t id) {
    uint32_t ids[256], n = sym__symbols_of(t, e, ids, 0, 256);
    if (n == UINT32_MAX) return true; /* out of memory: cannot tell, refuse to bind */
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] == id) return true;
    return n == 256; /* too many to tell: refuse to bind */
}

static symc_status record_eq(sym_table *t, sym_expr a, sym_expr b, symc_error *err) {
    if (sym__grow((void **)&t->eqs, &t->capeqs, t->neqs + 1, sizeof *t->eqs))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory recording an equality");
    t->eqs[t->neqs++] = (sym_eq){a, b};
    return SYMC_OK;
}

symc_status sym_assume_eq(sym_table *t, sym_expr a, sym_expr b, symc_error *err) {
    if (!t) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_assume_eq: NULL table");
    if (!sym__valid(t, a) || !sym__valid(t, b))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_assume_eq: bad expression handle");
    sym_tri p = sym_prove_eq(t, a, b);
    /* A proven equality adds no fact, but is still recorded: it excludes the
     * bindings where one side fails to evaluate (a division by zero). */
    if (p == SYM_TRUE) return record_eq(t, a, b, err);
    if (p == SYM_FALSE) return contradiction(t, a, b, "they are never equal", err);
    /* make room first so that nothing below can fail half way */
    if (sym__grow((void **)&t->eqs, &t->capeqs, t->neqs + 1, sizeof *t->eqs) ||
        sym__grow((void **)&t->geqs, &t->capgeqs, t->ngeqs + 1, sizeof *t->geqs))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory recording an equality");
    bool had = t->has_eq;
    t->has_eq = true; /* subst is the identity until now; harmless to enable early */
    sym_expr sa = sym__subst(t, a), sb = sym__subst(t, b);
    t->has_eq = had;
    const sym_node *na = sym__node(t, sa), *nb = sym__node(t, sb);
    if (nb->kind == SYM_SYMBOL && na->kind != SYM_SYMBOL) {
        sym_expr s = sa;
        sa = sb;
        sb = s;
        na = sym__node(t, sa);
        nb = sym__node(t, sb);
    }
    if (na->kind == SYM_SYMBOL) {
        uint32_t ra = (uint32_t)na->value; /* a root without a binding, by construction */
        sym_sym *x = &t->syms[ra];
        int64_t lo, hi, m;
        uint32_t rb = UINT32_MAX;
        if (nb->kind == SYM_SYMBOL) {
            rb = (uint32_t)nb->value;
            if (rb == ra) goto general;
            const sym_sym *y = &t->syms[rb];
            lo = x->min > y->min ? x->min : y->min;
            hi = x->max < y->max ? x->max : y->max;
            m = lcm_or_zero(x->mult, y->mult);
        } else if (!contains_symbol(t, sb, ra)) {
            sym_range r = sym_range_of(t, sb);
            int64_t d = sym_divisor_of(t, sb);
            lo = x->min > r.lo ? x->min : r.lo;
            hi = x->max < r.hi ? x->max : r.hi;
            m = d == 0 ? x->mult : lcm_or_zero(x->mult, d); /* d == 0: sb is 0, its range says so */
        } else {
            goto general;
        }
        if (m == 0 || !sym__round_range(&lo, &hi, m))
            return contradiction(t, a, b, "no value lies in both ranges", err);
        if (rb != UINT32_MAX) {
            uint32_t root = ra < rb ? ra : rb, other = ra < rb ? rb : ra;
            t->syms[other].parent = root;
            t->syms[root].data_dependent |= t->syms[other].data_dependent;
            set_class(t, root, lo, hi, m);
        } else {
            x->bound = sb;
            set_class(t, ra, lo, hi, m);
        }
    } else {
    general:
        t->geqs[t->ngeqs++] = (sym_eq){sa, sb};
    }
    t->has_eq = true;
    t->epoch++;
    return record_eq(t, a, b, err);
}
