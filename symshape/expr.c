/* Canonical constructors.
 *
 * Every expression is normalized as a linear combination: a constant plus
 * coefficient * monomial terms, where a monomial is a sorted multiset of
 * factors that are not constants, sums or products (symbols, //, %, min, max,
 * and sums only when a product was too large to expand). Sums are flattened,
 * sorted by a structural order that does not depend on creation order (so the
 * printer is deterministic across tables), merged and stripped of zero terms;
 * products distribute over sums while the expansion stays small. Floordiv and
 * mod by a constant pull out the terms that are provably multiples of the
 * divisor (using divisibility facts), cancel common divisors of the whole
 * sum, collapse nested divisions and fold to a constant or to the dividend
 * when the range allows; a division by a sum that divides the dividend
 * exactly (long division whose remainder is the handle of 0) folds to the
 * quotient; min/max fold when the prover orders the operands.
 * Rules only fire when they can be proven for every binding, so the result
 * always evaluates to the same value as the input wherever the input
 * evaluates without error. */
#include "symshape/sym_internal.h"

#include <stdlib.h>
#include <string.h>

#define EXPAND_LIMIT 32 /* most terms a product of sums may expand into */

/* ---- structural order ---------------------------------------------------- */

static int kind_rank(uint8_t k) {
    switch (k) {
    case SYM_CONST: return 0;
    case SYM_SYMBOL: return 1;
    case SYM_MUL: return 2;
    case SYM_FLOORDIV: return 3;
    case SYM_MOD: return 4;
    case SYM_MIN: return 5;
    case SYM_MAX: return 6;
    default: return 7; /* SYM_ADD */
    }
}

static int cmp64(int64_t a, int64_t b) { return (a > b) - (a < b); }

int sym__compare(const sym_table *t, sym_expr a, sym_expr b) {
    if (a == b) return 0;
    const sym_node *x = sym__node(t, a), *y = sym__node(t, b);
    int r = kind_rank(x->kind) - kind_rank(y->kind);
    if (r) return r;
    if (x->kind == SYM_CONST) return cmp64(x->value, y->value);
    if (x->kind == SYM_SYMBOL) {
        r = strcmp(t->syms[x->value].name, t->syms[y->value].name);
        return r ? r : cmp64(x->value, y->value);
    }
    if (x->n != y->n) return x->n < y->n ? -1 : 1;
    const sym_expr *xo = sym__ops(t, a), *yo = sym__ops(t, b);
    for (uint32_t i = 0; i < x->n; i++)
        if ((r = sym__compare(t, xo[i], yo[i])) != 0) return r;
    if (x->kind == SYM_ADD) {
        const int64_t *xc = sym__coefs(t, a), *yc = sym__coefs(t, b);
        for (uint32_t i = 0; i < x->n; i++)
            if ((r = cmp64(xc[i], yc[i])) != 0) return r;
    }
    if ((r = cmp64(x->value, y->value)) != 0) return r;
    return cmp64(a, b);
}

/* ---- growable term lists --------------------------------------------------- */

typedef struct lin {
    int64_t c;
    uint32_t n, cap;
    sym_expr *t;
    int64_t *k;
    sym_expr tbuf[8];
    int64_t kbuf[8];
    bool bad; /* overflow or out of memory already recorded */
} lin;

static void lin_init(lin *l, int64_t c) {
    l->c = c;
    l->n = 0;
    l->cap = 8;
    l->t = l->tbuf;
    l->k = l->kbuf;
    l->bad = false;
}

static void lin_free(lin *l) {
    if (l->t != l->tbuf) free(l->t);
    if (l->k != l->kbuf) free(l->k);
}

static void lin_push(sym_table *t, lin *l, sym_expr term, int64_t coef) {
    if (l->bad) return;
    if (l->n == l->cap) {
        uint32_t cap = l->cap * 2;
        sym_expr *nt = malloc(cap * sizeof *nt);
        int64_t *nk = malloc(cap * sizeof *nk);
        if (!nt || !nk || cap < l->cap) {
            free(nt);
            free(nk);
            sym__fail(t, SYMC_ERR_NOMEM, "out of memory building a sum");
            l->bad = true;
            return;
        }
        memcpy(nt, l->t, l->n * sizeof *nt);
        memcpy(nk, l->k, l->n * sizeof *nk);
        lin_free(l);
        l->t = nt;
        l->k = nk;
        l->cap = cap;
    }
    l->t[l->n] = term;
    l->k[l->n] = coef;
    l->n++;
}

static void lin_overflow(sym_table *t, lin *l) {
    if (!l->bad) sym__fail(t, SYMC_ERR_OVERFLOW, "int64 overflow folding constants of a sum");
    l->bad = true;
}

static void lin_addc(sym_table *t, lin *l, int64_t v) {
    if (__builtin_add_overflow(l->c, v, &l->c)) lin_overflow(t, l);
}

/* The coefficient-free monomial of a non-constant, non-sum expression. */
static sym_expr unit_of(sym_table *t, sym_expr e, int64_t *coef) {
    const sym_node *nd = sym__node(t, e);
    *coef = 1;
    if (nd->kind != SYM_MUL || nd->value == 1) return e;
    *coef = nd->value;
    if (nd->n == 1) return sym__ops(t, e)[0];
    /* copy out: interning may move the pool */
    uint32_t n = nd->n;
    sym_expr buf[16], *f = n <= 16 ? buf : malloc(n * sizeof *f);
    if (!f) return sym__fail(t, SYMC_ERR_NOMEM, "out of memory building a product");
    memcpy(f, sym__ops(t, e), n * sizeof *f);
    sym_expr u = sym__intern(t, SYM_MUL, 1, n, f, NULL);
    if (f != buf) free(f);
    return u;
}

/* Adds k * e to l, flattening sums and pulling product constants out. */
static void lin_add_expr(sym_table *t, lin *l, sym_expr e, int64_t k) {
    if (l->bad || k == 0) return;
    const sym_node *nd = sym__node(t, e);
    int64_t v;
    if (nd->kind == SYM_CONST) {
        if (__builtin_mul_overflow(nd->value, k, &v)) return lin_overflow(t, l);
        lin_addc(t, l, v);
    } else if (nd->kind == SYM_ADD) {
        if (__builtin_mul_overflow(nd->value, k, &v)) return lin_overflow(t, l);
        lin_addc(t, l, v);
        for (uint32_t i = 0; i < nd->n && !l->bad; i++) {
            if (__builtin_mul_overflow(sym__coefs(t, e)[i], k, &v)) return lin_overflow(t, l);
            lin_push(t, l, sym__ops(t, e)[i], v);
        }
    } else {
        int64_t c;
        sym_expr u = unit_of(t, e, &c);
        if (u == SYM_NONE) {
            l->bad = true;
            return;
        }
        if (__builtin_mul_overflow(c, k, &v)) return lin_overflow(t, l);
        lin_push(t, l, u, v);
    }
}

/* Sorts terms by the structural order (merge sort: sums can be long). */
static void sort_terms(const sym_table *t, sym_expr *ts, int64_t *ks, uint32_t n, sym_expr *tt, int64_t *tk) {
    if (n < 2) return;
    if (n <= 12) {
        for (uint32_t i = 1; i < n; i++) {
            sym_expr x = ts[i];
            int64_t y = ks[i];
            uint32_t j = i;
            for (; j > 0 && sym__compare(t, ts[j - 1], x) > 0; j--) {
                ts[j] = ts[j - 1];
                ks[j] = ks[j - 1];
            }
            ts[j] = x;
            ks[j] = y;
        }
        return;
    }
    uint32_t h = n / 2;
    sort_terms(t, ts, ks, h, tt, tk);
    sort_terms(t, ts + h, ks + h, n - h, tt, tk);
    uint32_t i = 0, j = h, o = 0;
    while (i < h || j < n) {
        if (j >= n || (i < h && sym__compare(t, ts[i], ts[j]) <= 0)) {
            tt[o] = ts[i];
            tk[o++] = ks[i++];
        } else {
            tt[o] = ts[j];
            tk[o++] = ks[j++];
        }
    }
    memcpy(ts, tt, n * sizeof *ts);
    memcpy(ks, tk, n * sizeof *ks);
}

/* Builds the canonical expression of a term list (consumes l). */
static sym_expr lin_finish(sym_table *t, lin *l) {
    if (l->bad) {
        lin_free(l);
        return SYM_NONE;
    }
    if (l->n > 12) {
        sym_expr *tt = malloc(l->n * sizeof *tt);
        int64_t *tk = malloc(l->n * sizeof *tk);
        if (!tt || !tk) {
            free(tt);
            free(tk);
            lin_free(l);
            return sym__fail(t, SYMC_ERR_NOMEM, "out of memory sorting a sum");
        }
        sort_terms(t, l->t, l->k, l->n, tt, tk);
        free(tt);
        free(tk);
    } else {
        sort_terms(t, l->t, l->k, l->n, NULL, NULL);
    }
    uint32_t m = 0;
    for (uint32_t i = 0; i < l->n; i++) {
        if (m && l->t[m - 1] == l->t[i]) {
            if (__builtin_add_overflow(l->k[m - 1], l->k[i], &l->k[m - 1])) {
                lin_overflow(t, l);
                lin_free(l);
                return SYM_NONE;
            }
        } else {
            l->t[m] = l->t[i];
            l->k[m++] = l->k[i];
        }
        if (l->k[m - 1] == 0) m--;
    }
    /* merging may leave a zero that a later equal term revived; sweep again */
    uint32_t w = 0;
    for (uint32_t i = 0; i < m; i++)
        if (l->k[i]) {
            l->t[w] = l->t[i];
            l->k[w++] = l->k[i];
        }
    m = w;
    sym_expr r;
    if (m == 0) {
        r = sym_const(t, l->c);
    } else if (m == 1 && l->c == 0 && l->k[0] == 1) {
        r = l->t[0];
    } else if (m == 1 && l->c == 0) {
        const sym_node *u = sym__node(t, l->t[0]);
        if (u->kind == SYM_MUL) {
            uint32_t n = u->n;
            sym_expr buf[16], *f = n <= 16 ? buf : malloc(n * sizeof *f);
            if (!f) {
                lin_free(l);
                return sym__fail(t, SYMC_ERR_NOMEM, "out of memory building a product");
            }
            memcpy(f, sym__ops(t, l->t[0]), n * sizeof *f);
            r = sym__intern(t, SYM_MUL, l->k[0], n, f, NULL);
            if (f != buf) free(f);
        } else {
            r = sym__intern(t, SYM_MUL, l->k[0], 1, &l->t[0], NULL);
        }
    } else {
        r = sym__intern(t, SYM_ADD, l->c, m, l->t, l->k);
    }
    lin_free(l);
    return r;
}

sym_expr sym__lincomb(sym_table *t, int64_t c, uint32_t n, const sym_expr *terms, const int64_t *coefs) {
    if (!t) return SYM_NONE;
    lin l;
    lin_init(&l, c);
    for (uint32_t i = 0; i < n; i++) {
        if (!sym__valid(t, terms[i])) {
            lin_free(&l);
            return terms[i] == SYM_NONE ? SYM_NONE
                                        : sym__fail(t, SYMC_ERR_INVALID_ARG, "bad expression handle %u", terms[i]);
        }
        lin_add_expr(t, &l, terms[i], coefs[i]);
    }
    return lin_finish(t, &l);
}

/* ---- basic constructors ---------------------------------------------------- */

#define CHECK1(a)                                                                                         \
    do {                                                                                                  \
        if (!t) return SYM_NONE;                                                                          \
        if ((a) == SYM_NONE) return SYM_NONE;                                                             \
        if ((a) >= t->nnodes) return sym__fail(t, SYMC_ERR_INVALID_ARG, "bad expression handle %u", (a)); \
    } while (0)

sym_expr sym_const(sym_table *t, int64_t v) {
    if (!t) return SYM_NONE;
    return sym__intern(t, SYM_CONST, v, 0, NULL, NULL);
}

sym_expr sym_var(sym_table *t, sym_id id) {
    if (!t) return SYM_NONE;
    if (id >= t->nsyms) return sym__fail(t, SYMC_ERR_INVALID_ARG, "bad symbol id %u", id);
    return sym__intern(t, SYM_SYMBOL, id, 0, NULL, NULL);
}

sym_expr sym_scale(sym_table *t, sym_expr a, int64_t k) {
    CHECK1(a);
    if (k == 1) return a;
    if (k == 0) return sym_const(t, 0);
    lin l;
    lin_init(&l, 0);
    lin_add_expr(t, &l, a, k);
    return lin_finish(t, &l);
}

sym_expr sym_add(sym_table *t, sym_expr a, sym_expr b) {
    CHECK1(a);
    CHECK1(b);
    lin l;
    lin_init(&l, 0);
    lin_add_expr(t, &l, a, 1);
    lin_add_expr(t, &l, b, 1);
    return lin_finish(t, &l);
}

sym_expr sym_sub(sym_table *t, sym_expr a, sym_expr b) {
    CHECK1(a);
    CHECK1(b);
    if (a == b) return sym_const(t, 0);
    lin l;
    lin_init(&l, 0);
    lin_add_expr(t, &l, a, 1);
    lin_add_expr(t, &l, b, -1);
    return lin_finish(t, &l);
}

sym_expr sym_neg(sym_table *t, sym_expr a) { return sym_scale(t, a, -1); }

sym_expr sym_add_const(sym_table *t, sym_expr a, int64_t k) {
    CHECK1(a);
    if (k == 0) return a;
    lin l;
    lin_init(&l, k);
    lin_add_expr(t, &l, a, 1);
    return lin_finish(t, &l);
}

/* ---- products ---------------------------------------------------------------- */

/* Factor multiset of a unit monomial. */
static uint32_t factors_of(const sym_table *t, sym_expr u, const sym_expr **f) {
    const sym_node *nd = sym__node(t, u);
    if (nd->kind == SYM_MUL) {
        *f = sym__ops(t, u);
        return nd->n;
    }
    *f = NULL; /* the monomial is its own single factor */
    return 1;
}

/* Unit monomial of the product of unit monomials a and b (merged, sorted). */
static sym_expr mono_mul(sym_table *t, sym_expr a, sym_expr b) {
    const sym_expr *fa, *fb;
    uint32_t na = factors_of(t, a, &fa), nb = factors_of(t, b, &fb);
    uint32_t n = na + nb;
    sym_expr buf[32], *o = n <= 32 ? buf : malloc(n * sizeof *o);
    if (!o) return sym__fail(t, SYMC_ERR_NOMEM, "out of memory building a product");
    sym_expr sa[1] = {a}, sb[1] = {b};
    /* copy inputs first: interning below may move the pool */
    sym_expr *ca = malloc((na + nb) * sizeof *ca);
    if (!ca) {
        if (o != buf) free(o);
        return sym__fail(t, SYMC_ERR_NOMEM, "out of memory building a product");
    }
    memcpy(ca, fa ? fa : sa, na * sizeof *ca);
    memcpy(ca + na, fb ? fb : sb, nb * sizeof *ca);
    uint32_t i = 0, j = na, k = 0;
    while (i < na || j < n) {
        if (j >= n || (i < na && sym__compare(t, ca[i], ca[j]) <= 0)) o[k++] = ca[i++];
        else o[k++] = ca[j++];
    }
    free(ca);
    sym_expr r = sym__intern(t, SYM_MUL, 1, n, o, NULL);
    if (o != buf) free(o);
    return r;
}

/* View of an expression as constant + terms (without interning anything). */
typedef struct linview {
    int64_t c;
    uint32_t n;
    const sym_expr *t; /* NULL with n == 1 means the single term is `self` */
    const int64_t *k;
    sym_expr self;
    int64_t selfk;
} linview;

static void view_lin(sym_table *t, sym_expr e, linview *v) {
    const sym_node *nd = sym__node(t, e);
    v->c = 0;
    v->t = NULL;
    v->k = NULL;
    v->n = 1;
    v->self = e;
    v->selfk = 1;
    if (nd->kind == SYM_CONST) {
        v->c = nd->value;
        v->n = 0;
    } else if (nd->kind == SYM_ADD) {
        v->c = nd->value;
        v->n = nd->n;
        v->t = sym__ops(t, e);
        v->k = sym__coefs(t, e);
    }
}

sym_expr sym_mul(sym_table *t, sym_expr a, sym_expr b) {
    CHECK1(a);
    CHECK1(b);
    int64_t v;
    if (sym_is_const(t, a, &v)) return sym_scale(t, b, v);
    if (sym_is_const(t, b, &v)) return sym_scale(t, a, v);
    /* Work on copies of both term lists: interning moves the pools. */
    lin la, lb;
    lin_init(&la, 0);
    lin_init(&lb, 0);
    lin_add_expr(t, &la, a, 1);
    lin_add_expr(t, &lb, b, 1);
    if (la.bad || lb.bad) {
        lin_free(&la);
        lin_free(&lb);
        return SYM_NONE;
    }
    uint64_t ta = la.n + (la.c != 0), tb = lb.n + (lb.c != 0);
    sym_expr r;
    if (ta * tb <= EXPAND_LIMIT) {
        lin o;
        lin_init(&o, 0);
        int64_t cc;
        if (__builtin_mul_overflow(la.c, lb.c, &cc)) lin_overflow(t, &o);
        lin_addc(t, &o, cc);
        for (uint32_t i = 0; i < la.n && !o.bad; i++) {
            if (lb.c) {
                if (__builtin_mul_overflow(la.k[i], lb.c, &cc)) lin_overflow(t, &o);
                lin_push(t, &o, la.t[i], cc);
            }
            for (uint32_t j = 0; j < lb.n && !o.bad; j++) {
                sym_expr m = mono_mul(t, la.t[i], lb.t[j]);
                if (m == SYM_NONE) {
                    o.bad = true;
                    break;
                }
                if (__builtin_mul_overflow(la.k[i], lb.k[j], &cc)) lin_overflow(t, &o);
                lin_push(t, &o, m, cc);
            }
        }
        for (uint32_t j = 0; j < lb.n && la.c && !o.bad; j++) {
            if (__builtin_mul_overflow(la.c, lb.k[j], &cc)) lin_overflow(t, &o);
            lin_push(t, &o, lb.t[j], cc);
        }
        r = lin_finish(t, &o);
    } else {
        /* Too big to expand: a product whose sum factors stay whole. The
         * constant factors of single-term operands still move out front. */
        sym_expr ua = a, ub = b;
        int64_t ka = 1, kb = 1;
        if (la.n == 1 && la.c == 0) {
            ua = la.t[0];
            ka = la.k[0];
        }
        if (lb.n == 1 && lb.c == 0) {
            ub = lb.t[0];
            kb = lb.k[0];
        }
        sym_expr m = mono_mul(t, ua, ub);
        int64_t kk;
        if (__builtin_mul_overflow(ka, kb, &kk))
            r = sym__fail(t, SYMC_ERR_OVERFLOW, "int64 overflow folding constants of a product");
        else r = sym_scale(t, m, kk);
    }
    lin_free(&la);
    lin_free(&lb);
    return r;
}

/* ---- exact division by a monomial ---------------------------------------------- */

/* Removes the factor multiset d from f (both sorted); returns the count left
 * in out, or -1 when d is not contained in f. */
static int remove_factors(const sym_table *t, const sym_expr *f, uint32_t nf, const sym_expr *d, uint32_t nd,
                          sym_expr *out) {
    uint32_t i = 0, j = 0, o = 0;
    while (i < nf) {
        if (j < nd && f[i] == d[j]) {
            i++;
            j++;
        } else {
            if (j < nd && sym__compare(t, f[i], d[j]) > 0) return -1;
            out[o++] = f[i++];
        }
    }
    return j == nd ? (int)o : -1;
}

/* Splits a = b*q + r where q collects the terms of a that are structurally
 * b times something; b must be a single monomial (coefficient * factors).
 * Returns false when b is not a monomial. q and r are SYM_NONE on error. */
static bool split_by_monomial(sym_table *t, sym_expr a, sym_expr b, sym_expr *q, sym_expr *r) {
    linview vb;
    view_lin(t, b, &vb);
    sym_expr bu;
    int64_t bk;
    if (sym__node(t, b)->kind == SYM_ADD) {
        bu = b; /* a sum divisor counts as one opaque factor */
        bk = 1;
    } else if (vb.n == 1 && vb.c == 0) {
        bu = unit_of(t, b, &bk);
        if (bu == SYM_NONE) {
            *q = *r = SYM_NONE;
            return true;
        }
    } else {
        return false;
    }
    lin la;
    lin_init(&la, 0);
    lin_add_expr(t, &la, a, 1);
    if (la.bad) {
        lin_free(&la);
        *q = *r = SYM_NONE;
        return true;
    }
    lin lq, lr;
    lin_init(&lq, 0);
    lin_init(&lr, la.c);
    const sym_expr *fd;
    uint32_t ndv = factors_of(t, bu, &fd);
    sym_expr dbuf[32];
    if (ndv > 32) ndv = 0; /* absurdly wide divisor: treat as not dividing */
    if (ndv) memcpy(dbuf, fd ? fd : &bu, ndv * sizeof *dbuf);
    for (uint32_t i = 0; i < la.n; i++) {
        const sym_expr *ff;
        uint32_t nf = factors_of(t, la.t[i], &ff);
        sym_expr fbuf[64], left[64];
        int m = -1;
        if (ndv && nf <= 64 && la.k[i] % bk == 0 && !(la.k[i] == INT64_MIN && bk == -1)) {
            memcpy(fbuf, ff ? ff : &la.t[i], nf * sizeof *fbuf);
            m = remove_factors(t, fbuf, nf, dbuf, ndv, left);
        }
        if (m < 0) {
            lin_push(t, &lr, la.t[i], la.k[i]);
            continue;
        }
        sym_expr qt = m == 0 ? sym_const(t, 1) : m == 1 ? left[0] : sym__intern(t, SYM_MUL, 1, (uint32_t)m, left, NULL);
        if (qt == SYM_NONE) {
            lq.bad = true;
            break;
        }
        lin_add_expr(t, &lq, qt, la.k[i] / bk);
    }
    lin_free(&la);
    *q = lin_finish(t, &lq);
    *r = lin_finish(t, &lr);
    return true;
}

/* ---- exact division by a sum ------------------------------------------------------ */

/* The term of sum view v with the most factors (the first such): the lead
 * term of a graded order, which long division cancels first. */
static uint32_t lead_term(const sym_table *t, const sym_expr *ts, uint32_t n) {
    uint32_t best = 0, most = 0;
    for (uint32_t i = 0; i < n; i++) {
        const sym_expr *f;
        uint32_t nf = factors_of(t, ts[i], &f);
        if (nf > most) most = nf, best = i;
    }
    return best;
}

/* One step of long division: the first term of r (most factors first) that
 * b's lead term (factors db[0..ndb), coefficient bk) divides, as the
 * quotient term c (coefficient * monomial). SYM_NONE when none divides. */
static sym_expr divide_step(sym_table *t, sym_expr r, const sym_expr *db, uint32_t ndb, int64_t bk) {
    lin lr;
    lin_init(&lr, 0);
    lin_add_expr(t, &lr, r, 1);
    sym_expr c = SYM_NONE;
    uint32_t most = 0;
    for (uint32_t i = 0; i < lr.n; i++) {
        const sym_expr *f;
        uint32_t nf = factors_of(t, lr.t[i], &f);
        if (nf > most) most = nf;
    }
    for (uint32_t deg = most; deg >= 1 && c == SYM_NONE && !lr.bad; deg--) {
        for (uint32_t i = 0; i < lr.n && c == SYM_NONE; i++) {
            const sym_expr *ff;
            uint32_t nf = factors_of(t, lr.t[i], &ff);
            if (nf != deg || nf > 64 || lr.k[i] % bk != 0 || (lr.k[i] == INT64_MIN && bk == -1)) continue;
            sym_expr fbuf[64], left[64];
            memcpy(fbuf, ff ? ff : &lr.t[i], nf * sizeof *fbuf);
            int m = remove_factors(t, fbuf, nf, db, ndb, left);
            if (m < 0) continue;
            sym_expr u = m == 0 ? sym_const(t, 1)
                : m == 1        ? left[0]
                                : sym__intern(t, SYM_MUL, 1, (uint32_t)m, left, NULL);
            if (u != SYM_NONE) c = sym_scale(t, u, lr.k[i] / bk);
            if (c == SYM_NONE) break;
        }
    }
    lin_free(&lr);
    return c;
}

/* Finds q with a == q*b when b is a sum, by multivariate long division:
 * Reshape's inferred dims divide an element count by the product of the other
 * dims, and once both are expanded sums (wav2vec2: 32*B*L over 8*B*L with
 * L = T//20 - 1 the length after three strided convs) the quotient is a
 * constant, a term or a small sum the structural rules above do not see.
 * Each step moves one quotient term c (a term of the remainder over b's lead
 * term) into q and subtracts c*b; q is taken only when the remainder is
 * exactly 0 (the same handle), so a == q*b holds as an identity and
 * a // b == q, a % b == 0 wherever b != 0. At most 8 steps; the steps are
 * built quietly (an overflow in a rejected attempt is no error). Returns 1
 * with *q set, 0 when b does not divide a that way. */
static int exact_quotient(sym_table *t, sym_expr a, sym_expr b, sym_expr *q) {
    const sym_node *nb = sym__node(t, b);
    if (nb->kind != SYM_ADD || nb->n == 0 || nb->n > 16) return 0;
    {
        const sym_node *na = sym__node(t, a);
        if (na->kind == SYM_CONST || (na->kind == SYM_ADD && na->n > 16)) return 0;
    }
    /* b's lead term, copied: interning below may move the pools */
    uint32_t li = lead_term(t, sym__ops(t, b), nb->n);
    sym_expr b0 = sym__ops(t, b)[li];
    int64_t bk = sym__coefs(t, b)[li];
    const sym_expr *fd;
    uint32_t ndv = factors_of(t, b0, &fd);
    sym_expr dbuf[32];
    if (ndv > 32 || bk == 0) return 0;
    memcpy(dbuf, fd ? fd : &b0, ndv * sizeof *dbuf);
    t->quiet++;
    sym_expr acc = sym_const(t, 0), r = a;
    int found = 0;
    for (int step = 0; step <= 8 && acc != SYM_NONE && r != SYM_NONE; step++) {
        int64_t rv;
        if (sym_is_const(t, r, &rv)) {
            found = rv == 0;
            break;
        }
        if (step == 8) break;
        sym_expr c = divide_step(t, r, dbuf, ndv, bk);
        if (c == SYM_NONE) break;
        acc = sym_add(t, acc, c);
        r = sym_sub(t, r, sym_mul(t, c, b));
    }
    t->quiet--;
    if (found) *q = acc;
    return found;
}

/* ---- floordiv and mod ---------------------------------------------------------------- */

static sym_expr floordiv_const(sym_table *t, sym_expr a, int64_t k);
static sym_expr mod_const(sym_table *t, sym_expr a, int64_t k);

/* Exactly divides a sum by g (g divides every coefficient and the constant). */
static sym_expr div_exact_struct(sym_table *t, const lin *l, int64_t g) {
    lin o;
    lin_init(&o, l->c / g);
    for (uint32_t i = 0; i < l->n; i++) lin_push(t, &o, l->t[i], l->k[i] / g);
    return lin_finish(t, &o);
}

static int64_t lin_content(const lin *l) {
    int64_t g = sym__gcd(l->c, 0);
    for (uint32_t i = 0; i < l->n; i++) g = sym__gcd(g, l->k[i]);
    return g;
}

static sym_expr floordiv_const(sym_table *t, sym_expr a, int64_t k) {
    if (a == SYM_NONE) return SYM_NONE;
    sym_range r = sym_range_of(t, a);
    int64_t qlo = sym__floordiv(r.lo, k), qhi = sym__floordiv(r.hi, k);
    if (qlo == qhi) return sym_const(t, qlo);
    if (sym_divisor_of(t, a) == 0) return sym_const(t, 0);

    lin la;
    lin_init(&la, 0);
    lin_add_expr(t, &la, a, 1);
    if (la.bad) {
        lin_free(&la);
        return SYM_NONE;
    }
    bool unit = la.n == 1 && la.c == 0 && la.k[0] == 1;
    if (!unit) {
        /* (k*q*x + rest) // k == q*x + rest // k when k divides k*q*x for every binding */
        lin pulled, rest;
        lin_init(&pulled, la.c / k); /* truncating keeps ((H-1)//2+1) readable */
        lin_init(&rest, la.c % k);
        for (uint32_t i = 0; i < la.n; i++) {
            int64_t g1 = sym__gcd(la.k[i], k), kp = k / g1;
            int64_t d = sym_divisor_of(t, la.t[i]);
            if (d == 0) continue;
            if (d % kp == 0) {
                sym_expr q = kp == 1 ? la.t[i] : floordiv_const(t, la.t[i], kp);
                lin_add_expr(t, &pulled, q, la.k[i] / g1);
            } else {
                lin_push(t, &rest, la.t[i], la.k[i]);
            }
        }
        if (pulled.n || pulled.c) {
            lin_free(&la);
            sym_expr p = lin_finish(t, &pulled);
            sym_expr q = floordiv_const(t, lin_finish(t, &rest), k);
            return sym_add(t, p, q);
        }
        lin_free(&pulled);
        lin_free(&rest);
        /* (g*x) // (g*m) == x // m */
        int64_t g = sym__gcd(lin_content(&la), k);
        if (g > 1) {
            sym_expr x = div_exact_struct(t, &la, g);
            lin_free(&la);
            return k / g == 1 ? x : floordiv_const(t, x, k / g);
        }
    }
    lin_free(&la);
    /* (x // k1) // k == x // (k1*k) for positive k1, k */
    const sym_node *nd = sym__node(t, a);
    if (nd->kind == SYM_FLOORDIV) {
        int64_t k1, kk;
        sym_expr x = sym__ops(t, a)[0];
        if (sym_is_const(t, sym__ops(t, a)[1], &k1) && k1 > 0 && !__builtin_mul_overflow(k1, k, &kk))
            return floordiv_const(t, x, kk);
    }
    sym_expr ops[2] = {a, sym_const(t, k)};
    if (ops[1] == SYM_NONE) return SYM_NONE;
    return sym__intern(t, SYM_FLOORDIV, 0, 2, ops, NULL);
}

sym_expr sym_floordiv(sym_table *t, sym_expr a, sym_expr b) {
    CHECK1(a);
    CHECK1(b);
    char buf[96];
    int64_t x, k;
    if (sym_is_const(t, b, &k)) {
        if (k == 0)
            return sym__fail(t, SYMC_ERR_DIV_ZERO, "division by zero: %s // 0", sym__text(t, a, buf, sizeof buf));
        if (sym_is_const(t, a, &x)) {
            if (x == INT64_MIN && k == -1)
                return sym__fail(t, SYMC_ERR_OVERFLOW, "int64 overflow folding %lld // -1", (long long)x);
            return sym_const(t, sym__floordiv(x, k));
        }
        if (k == 1) return a;
        if (k == -1) return sym_neg(t, a);
        if (k < 0 && k != INT64_MIN) return floordiv_const(t, sym_neg(t, a), -k); /* a//-k == (-a)//k */
        if (k > 0) return floordiv_const(t, a, k);
        sym_expr ops[2] = {a, b};
        return sym__intern(t, SYM_FLOORDIV, 0, 2, ops, NULL);
    }
    if (sym_is_const(t, a, &x) && x == 0) return a;
    if (a == b) return sym_const(t, 1);
    sym_expr eq;
    if (exact_quotient(t, a, b, &eq)) return eq; /* a == q*b */
    /* a // b == (-a) // (-b): keep provably negative divisors positive */
    if (sym_prove_lt(t, b, sym_const(t, 0)) == SYM_TRUE) return sym_floordiv(t, sym_neg(t, a), sym_neg(t, b));
    sym_expr q, r;
    if (split_by_monomial(t, a, b, &q, &r)) {
        if (q == SYM_NONE || r == SYM_NONE) return SYM_NONE;
        int64_t qv;
        if (!(sym_is_const(t, q, &qv) && qv == 0)) return sym_add(t, q, sym_floordiv(t, r, b));
    }
    sym_expr zero = sym_const(t, 0);
    if (sym_prove_le(t, zero, a) == SYM_TRUE && sym_prove_lt(t, a, b) == SYM_TRUE) return zero;
    /* (x // c) // y == x // (c*y) for positive c and y */
    const sym_node *nd = sym__node(t, a);
    int64_t c;
    if (nd->kind == SYM_FLOORDIV && sym_is_const(t, sym__ops(t, a)[1], &c) && c > 0 &&
        sym_prove_lt(t, zero, b) == SYM_TRUE) {
        sym_expr x0 = sym__ops(t, a)[0];
        return sym_floordiv(t, x0, sym_scale(t, b, c));
    }
    sym_expr ops[2] = {a, b};
    return sym__intern(t, SYM_FLOORDIV, 0, 2, ops, NULL);
}

sym_expr sym_ceildiv(sym_table *t, sym_expr a, sym_expr b) {
    CHECK1(a);
    CHECK1(b);
    return sym_floordiv(t, sym_add(t, a, sym_add_const(t, b, -1)), b);
}

static sym_expr mod_const(sym_table *t, sym_expr a, int64_t k) {
    if (a == SYM_NONE) return SYM_NONE;
    int64_t d = sym_divisor_of(t, a);
    if (d % k == 0) return sym_const(t, 0); /* also d == 0 */
    sym_range r = sym_range_of(t, a);
    int64_t qlo = sym__floordiv(r.lo, k), qhi = sym__floordiv(r.hi, k);
    if (qlo == qhi) {
        int64_t off;
        if (!__builtin_mul_overflow(qlo, k, &off) && off != INT64_MIN) return sym_add_const(t, a, -off);
    }
    lin la;
    lin_init(&la, 0);
    lin_add_expr(t, &la, a, 1);
    if (la.bad) {
        lin_free(&la);
        return SYM_NONE;
    }
    bool unit = la.n == 1 && la.c == 0 && la.k[0] == 1;
    if (!unit) {
        /* Drop multiples of k, reduce coefficients and the constant toward 0. */
        lin red;
        lin_init(&red, la.c % k);
        bool changed = red.c != la.c;
        for (uint32_t i = 0; i < la.n; i++) {
            int64_t dt = sym_divisor_of(t, la.t[i]), ki = la.k[i] % k;
            int64_t g1 = sym__gcd(ki, k);
            if (ki == 0 || dt == 0 || dt % (k / g1) == 0) {
                changed = true;
                continue;
            }
            changed |= ki != la.k[i];
            lin_push(t, &red, la.t[i], ki);
        }
        if (changed) {
            lin_free(&la);
            return mod_const(t, lin_finish(t, &red), k);
        }
        lin_free(&red);
        /* (g*x) % (g*m) == g * (x % m) */
        int64_t g = sym__gcd(lin_content(&la), k);
        if (g > 1) {
            sym_expr x = div_exact_struct(t, &la, g);
            lin_free(&la);
            return sym_scale(t, mod_const(t, x, k / g), g);
        }
    }
    lin_free(&la);
    /* (x % k1) % k == x % k when k divides k1 */
    const sym_node *nd = sym__node(t, a);
    int64_t k1;
    if (nd->kind == SYM_MOD && sym_is_const(t, sym__ops(t, a)[1], &k1) && k1 > 0 && k1 % k == 0)
        return mod_const(t, sym__ops(t, a)[0], k);
    sym_expr ops[2] = {a, sym_const(t, k)};
    if (ops[1] == SYM_NONE) return SYM_NONE;
    return sym__intern(t, SYM_MOD, 0, 2, ops, NULL);
}

sym_expr sym_mod(sym_table *t, sym_expr a, sym_expr b) {
    CHECK1(a);
    CHECK1(b);
    char buf[96];
    int64_t x, k;
    if (sym_is_const(t, b, &k)) {
        if (k == 0)
            return sym__fail(t, SYMC_ERR_DIV_ZERO, "division by zero: %s %% 0", sym__text(t, a, buf, sizeof buf));
        if (sym_is_const(t, a, &x)) return sym_const(t, sym__mod(x, k));
        if (k == 1 || k == -1) return sym_const(t, 0);
        if (k < 0 && k != INT64_MIN) return sym_neg(t, mod_const(t, sym_neg(t, a), -k)); /* a%-k == -((-a)%k) */
        if (k > 0) return mod_const(t, a, k);
        sym_expr ops[2] = {a, b};
        return sym__intern(t, SYM_MOD, 0, 2, ops, NULL);
    }
    if (sym_is_const(t, a, &x) && x == 0) return a;
    if (a == b) return sym_const(t, 0);
    sym_expr eq;
    if (exact_quotient(t, a, b, &eq)) return sym_const(t, 0); /* a == q*b */
    sym_expr q, r;
    if (split_by_monomial(t, a, b, &q, &r)) {
        if (q == SYM_NONE || r == SYM_NONE) return SYM_NONE;
        int64_t qv;
        if (!(sym_is_const(t, q, &qv) && qv == 0)) return sym_mod(t, r, b);
    }
    sym_expr zero = sym_const(t, 0);
    if (sym_prove_le(t, zero, a) == SYM_TRUE && sym_prove_lt(t, a, b) == SYM_TRUE) return a;
    sym_expr ops[2] = {a, b};
    return sym__intern(t, SYM_MOD, 0, 2, ops, NULL);
}

/* ---- min / max ---------------------------------------------------------------------- */

static sym_expr minmax(sym_table *t, sym_kind kind, sym_expr a, sym_expr b) {
    CHECK1(a);
    CHECK1(b);
    bool is_min = kind == SYM_MIN;
    int64_t x, y;
    if (sym_is_const(t, a, &x) && sym_is_const(t, b, &y))
        return sym_const(t, is_min ? (x < y ? x : y) : (x > y ? x : y));
    if (a == b) return a;
    if (sym__compare(t, a, b) > 0) {
        sym_expr s = a;
        a = b;
        b = s;
    }
    /* absorption: min(x, max(x, y)) == x, min(x, min(x, y)) == min(x, y), and duals */
    for (int side = 0; side < 2; side++) {
        sym_expr p = side ? b : a, o = side ? a : b;
        const sym_node *nd = sym__node(t, o);
        if ((nd->kind == SYM_MIN || nd->kind == SYM_MAX) && (sym__ops(t, o)[0] == p || sym__ops(t, o)[1] == p))
            return nd->kind == kind ? o : p;
    }
    sym_tri le = sym_prove_le(t, a, b);
    if (le == SYM_TRUE) return is_min ? a : b;
    if (le == SYM_FALSE) return is_min ? b : a; /* a > b everywhere */
    if (sym_prove_le(t, b, a) == SYM_TRUE) return is_min ? b : a;
    sym_expr ops[2] = {a, b};
    return sym__intern(t, kind, 0, 2, ops, NULL);
}

sym_expr sym_min(sym_table *t, sym_expr a, sym_expr b) { return minmax(t, SYM_MIN, a, b); }
sym_expr sym_max(sym_table *t, sym_expr a, sym_expr b) { return minmax(t, SYM_MAX, a, b); }

/* ---- rebuild from parts --------------------------------------------------------------- */

sym_expr sym_make(sym_table *t, sym_kind kind, int64_t value, uint32_t n, const sym_expr *ops, const int64_t *coefs) {
    if (!t) return SYM_NONE;
    if (n && !ops) return sym__fail(t, SYMC_ERR_INVALID_ARG, "sym_make: NULL operands");
    for (uint32_t i = 0; i < n; i++)
        if (!sym__valid(t, ops[i]))
            return sym__fail(t, SYMC_ERR_INVALID_ARG, "sym_make: bad operand handle %u", ops[i]);
    switch (kind) {
    case SYM_CONST:
        if (n) break;
        return sym_const(t, value);
    case SYM_SYMBOL:
        if (n || value < 0 || value > UINT32_MAX) break;
        return sym_var(t, (sym_id)value);
    case SYM_ADD:
        if (!n || !coefs) break;
        return sym__lincomb(t, value, n, ops, coefs);
    case SYM_MUL: {
        if (!n || value == 0) break;
        sym_expr p = ops[0];
        for (uint32_t i = 1; i < n; i++) p = sym_mul(t, p, ops[i]);
        return sym_scale(t, p, value);
    }
    case SYM_FLOORDIV:
    case SYM_MOD:
    case SYM_MIN:
    case SYM_MAX:
        if (n != 2) break;
        return kind == SYM_FLOORDIV ? sym_floordiv(t, ops[0], ops[1])
            : kind == SYM_MOD       ? sym_mod(t, ops[0], ops[1])
            : kind == SYM_MIN       ? sym_min(t, ops[0], ops[1])
                                    : sym_max(t, ops[0], ops[1]);
    }
    return sym__fail(t, SYMC_ERR_INVALID_ARG, "sym_make: malformed node (kind %d, n %u)", (int)kind, n);
}
