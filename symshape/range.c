/* Facts per handle: ranges by interval arithmetic, divisors by gcd reasoning.
 *
 * A range is a pair of int64 bounds that hold for every binding in range at
 * which the expression evaluates without error. SYM_NEG_INF / SYM_POS_INF are
 * simply the int64 limits, so "unbounded" needs no special case: arithmetic
 * saturates (clamps) at the limits, which stays sound because no int64 value
 * lies beyond them. The one trap is a sum whose partial lower bound clamps at
 * the bottom and is then pulled up by a later term; lower bounds therefore
 * treat INT64_MIN as absorbing (and upper bounds INT64_MAX). Ranges are then
 * tightened to the multiples of the known divisor. Both facts are cached per
 * handle and stamped with the table epoch, which sym_assume_eq bumps. */
#include "symshape/sym_internal.h"

int64_t sym__gcd(int64_t a, int64_t b) {
    uint64_t x = a == INT64_MIN ? (1ull << 62) : (uint64_t)(a < 0 ? -a : a);
    uint64_t y = b == INT64_MIN ? (1ull << 62) : (uint64_t)(b < 0 ? -b : b);
    while (y) {
        uint64_t r = x % y;
        x = y;
        y = r;
    }
    return (int64_t)x;
}

int64_t sym__sat_add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) return a > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

int64_t sym__sat_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? INT64_MIN : INT64_MAX;
    return r;
}

static int64_t lo_add(int64_t a, int64_t b) {
    if (a == INT64_MIN || b == INT64_MIN) return INT64_MIN;
    return sym__sat_add(a, b);
}

static int64_t hi_add(int64_t a, int64_t b) {
    if (a == INT64_MAX || b == INT64_MAX) return INT64_MAX;
    return sym__sat_add(a, b);
}

static int64_t min2(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max2(int64_t a, int64_t b) { return a > b ? a : b; }

static sym_range mul_range(sym_range a, sym_range b) {
    int64_t p[4] = {sym__sat_mul(a.lo, b.lo), sym__sat_mul(a.lo, b.hi), sym__sat_mul(a.hi, b.lo),
                    sym__sat_mul(a.hi, b.hi)};
    sym_range r = {p[0], p[0]};
    for (int i = 1; i < 4; i++) {
        r.lo = min2(r.lo, p[i]);
        r.hi = max2(r.hi, p[i]);
    }
    return r;
}

/* floor(a / b) with b != 0, saturating the one overflow (INT64_MIN / -1). */
static int64_t sat_floordiv(int64_t a, int64_t b) {
    if (a == INT64_MIN && b == -1) return INT64_MAX;
    return sym__floordiv(a, b);
}

/* Range of a // b over the divisors of b's range that are nonzero; the
 * quotient is monotone in each argument on one sign of b, so corners do. */
static sym_range floordiv_range(sym_range a, sym_range b) {
    sym_range r = {INT64_MAX, INT64_MIN};
    int64_t parts[2][2];
    int np = 0;
    if (b.hi >= 1) {
        parts[np][0] = max2(b.lo, 1);
        parts[np++][1] = b.hi;
    }
    if (b.lo <= -1) {
        parts[np][0] = b.lo;
        parts[np++][1] = min2(b.hi, -1);
    }
    for (int i = 0; i < np; i++) {
        int64_t c[4] = {sat_floordiv(a.lo, parts[i][0]), sat_floordiv(a.lo, parts[i][1]),
                        sat_floordiv(a.hi, parts[i][0]), sat_floordiv(a.hi, parts[i][1])};
        for (int j = 0; j < 4; j++) {
            r.lo = min2(r.lo, c[j]);
            r.hi = max2(r.hi, c[j]);
        }
    }
    if (np == 0) r = (sym_range){INT64_MIN, INT64_MAX}; /* never evaluates */
    return r;
}

static sym_range mod_range(sym_range a, sym_range b, bool bconst) {
    sym_range r;
    if (b.lo >= 1) {
        r.lo = 0;
        r.hi = b.hi - 1;
        if (a.lo >= 0) r.hi = min2(r.hi, a.hi);
        if (bconst) {
            int64_t q = sym__floordiv(a.lo, b.lo);
            if (q == sym__floordiv(a.hi, b.lo)) {
                int64_t off = sym__sat_mul(q, b.lo);
                if (off != INT64_MIN && off != INT64_MAX) {
                    r.lo = a.lo - off;
                    r.hi = a.hi - off;
                }
            }
        }
    } else if (b.hi <= -1) {
        r.lo = b.lo + 1;
        r.hi = 0;
        if (a.hi <= 0) r.lo = max2(r.lo, a.lo);
    } else {
        r.lo = min2(sym__sat_add(b.lo, 1), 0);
        r.hi = max2(sym__sat_add(b.hi, -1), 0);
    }
    return r;
}

/* Index of term x in sum e, or -1 (terms are few; a scan is fine). */
static int find_term(const sym_table *t, sym_expr e, sym_expr x) {
    const sym_node *nd = sym__node(t, e);
    for (uint32_t i = 0; i < nd->n; i++)
        if (sym__ops(t, e)[i] == x) return (int)i;
    return -1;
}

static int64_t ceildiv_pos(int64_t a, int64_t k) {
    if (a == INT64_MIN || a == INT64_MAX) return a; /* saturated: keep "unbounded" */
    return -sym__floordiv(-a, k);
}

/* Interval arithmetic forgets that x and x//k move together, so x - x//2 or
 * H - 1 - (H-1)//2 look like they could be negative. When a sum holds
 * c1*X + c*(X//k) (k > 0), bound that pair as ((c1*k + c)*X - c*r) / k with
 * r = X mod k in [0, k-1], which is exact algebra, and add the range of the
 * remaining terms. Returns the full int64 range when the pattern is absent. */
static sym_range floordiv_pair_range(sym_table *t, sym_expr e, uint32_t j) {
    sym_range none = {INT64_MIN, INT64_MAX};
    const sym_node *nd = sym__node(t, e);
    sym_expr f = sym__ops(t, e)[j];
    int64_t c = sym__coefs(t, e)[j], k;
    const sym_node *fn = sym__node(t, f);
    if (fn->kind != SYM_FLOORDIV || !sym_is_const(t, sym__ops(t, f)[1], &k) || k < 2) return none;
    sym_expr x = sym__ops(t, f)[0];
    const sym_node *xn = sym__node(t, x);
    if (xn->kind == SYM_CONST || (xn->kind == SYM_MUL && xn->value != 1)) return none;
    uint32_t nx = xn->kind == SYM_ADD ? xn->n : 1;
    int64_t cx = xn->kind == SYM_ADD ? xn->value : 0, c1 = 0;
    bool used[64] = {false};
    if (nd->n > 64) return none;
    for (uint32_t i = 0; i < nx; i++) {
        sym_expr xt = xn->kind == SYM_ADD ? sym__ops(t, x)[i] : x;
        int64_t xk = xn->kind == SYM_ADD ? sym__coefs(t, x)[i] : 1;
        int at = find_term(t, e, xt);
        if (at < 0 || (uint32_t)at == j) return none;
        int64_t sk = sym__coefs(t, e)[at];
        if (i == 0) {
            if (sk % xk != 0) return none;
            c1 = sk / xk;
        }
        int64_t want;
        if (__builtin_mul_overflow(c1, xk, &want) || want != sk) return none;
        used[at] = true;
    }
    /* rest = sum - c1*X - c*(X//k) */
    int64_t rc;
    if (__builtin_mul_overflow(c1, cx, &rc) || __builtin_sub_overflow(nd->value, rc, &rc)) return none;
    sym_range rest = {rc, rc};
    for (uint32_t i = 0; i < nd->n; i++) {
        if (used[i] || i == j) continue;
        sym_range ri = sym_range_of(t, sym__ops(t, e)[i]);
        int64_t ki = sym__coefs(t, e)[i], a = sym__sat_mul(ki, ri.lo), b = sym__sat_mul(ki, ri.hi);
        rest.lo = lo_add(rest.lo, min2(a, b));
        rest.hi = hi_add(rest.hi, max2(a, b));
    }
    int64_t A;
    if (__builtin_mul_overflow(c1, k, &A) || __builtin_add_overflow(A, c, &A)) return none;
    sym_range rx = sym_range_of(t, x);
    sym_range rr = {0, k - 1};
    if (rx.lo >= 0 && rx.hi < rr.hi) rr.hi = rx.hi;
    int64_t p0 = sym__sat_mul(A, rx.lo), p1 = sym__sat_mul(A, rx.hi);
    int64_t q0 = sym__sat_mul(-c, rr.lo), q1 = sym__sat_mul(-c, rr.hi);
    if (c == INT64_MIN) return none;
    sym_range num = {lo_add(min2(p0, p1), min2(q0, q1)), hi_add(max2(p0, p1), max2(q0, q1))};
    sym_range pair = {ceildiv_pos(num.lo, k), num.hi == INT64_MAX ? INT64_MAX : sym__floordiv(num.hi, k)};
    return (sym_range){lo_add(rest.lo, pair.lo), hi_add(rest.hi, pair.hi)};
}

static sym_range compute_range(sym_table *t, sym_expr e) {
    const sym_node *nd = sym__node(t, e);
    uint32_t n = nd->n;
    int64_t v = nd->value;
    sym_range r;
    switch ((sym_kind)nd->kind) {
    case SYM_CONST: return (sym_range){v, v};
    case SYM_SYMBOL: return (sym_range){t->syms[v].min, t->syms[v].max};
    case SYM_ADD:
        r.lo = r.hi = v;
        for (uint32_t i = 0; i < n; i++) {
            sym_expr op = sym__ops(t, e)[i];
            int64_t k = sym__coefs(t, e)[i];
            sym_range c = sym_range_of(t, op);
            int64_t a = sym__sat_mul(k, c.lo), b = sym__sat_mul(k, c.hi);
            r.lo = lo_add(r.lo, min2(a, b));
            r.hi = hi_add(r.hi, max2(a, b));
        }
        for (uint32_t j = 0; j < n; j++) {
            sym_range q = floordiv_pair_range(t, e, j);
            r.lo = max2(r.lo, q.lo);
            r.hi = min2(r.hi, q.hi);
        }
        return r;
    case SYM_MUL:
        r = (sym_range){v, v};
        for (uint32_t i = 0; i < n; i++) {
            sym_expr op = sym__ops(t, e)[i];
            sym_range c = sym_range_of(t, op);
            /* x*x*... is never negative for an even power of one factor; the
             * plain product misses that, so square repeated factors first */
            if (i + 1 < n && sym__ops(t, e)[i + 1] == op) {
                int64_t a2 = sym__sat_mul(c.lo, c.lo), b2 = sym__sat_mul(c.hi, c.hi);
                sym_range sq = {min2(a2, b2), max2(a2, b2)};
                if (c.lo <= 0 && c.hi >= 0) sq.lo = 0;
                r = mul_range(r, sq);
                i++;
                continue;
            }
            r = mul_range(r, c);
        }
        return r;
    case SYM_FLOORDIV: {
        sym_expr a = sym__ops(t, e)[0], b = sym__ops(t, e)[1];
        sym_range ra = sym_range_of(t, a);
        return floordiv_range(ra, sym_range_of(t, b));
    }
    case SYM_MOD: {
        sym_expr a = sym__ops(t, e)[0], b = sym__ops(t, e)[1];
        sym_range ra = sym_range_of(t, a);
        return mod_range(ra, sym_range_of(t, b), sym__node(t, b)->kind == SYM_CONST);
    }
    case SYM_MIN:
    case SYM_MAX: {
        sym_expr a = sym__ops(t, e)[0], b = sym__ops(t, e)[1];
        sym_range ra = sym_range_of(t, a), rb = sym_range_of(t, b);
        if (nd->kind == SYM_MIN) return (sym_range){min2(ra.lo, rb.lo), min2(ra.hi, rb.hi)};
        return (sym_range){max2(ra.lo, rb.lo), max2(ra.hi, rb.hi)};
    }
    }
    return (sym_range){INT64_MIN, INT64_MAX};
}

sym_range sym_range_of(sym_table *t, sym_expr e) {
    if (!sym__valid(t, e)) return (sym_range){INT64_MIN, INT64_MAX};
    sym_fact *f = &t->facts[e];
    if (f->range_epoch == t->epoch) return (sym_range){f->lo, f->hi};
    sym_range r = compute_range(t, e);
    int64_t d = sym_divisor_of(t, e);
    if (d == 0) {
        r.lo = r.hi = 0;
    } else if (d > 1) {
        int64_t m = sym__mod(r.lo, d);
        if (m && r.lo != INT64_MIN) r.lo = sym__sat_add(r.lo, d - m);
        m = sym__mod(r.hi, d);
        if (m && r.hi != INT64_MAX) r.hi = r.hi < INT64_MIN + m ? INT64_MIN : r.hi - m; /* saturate, as lo does */
    }
    f = &t->facts[e]; /* sym_divisor_of does not intern, but stay safe */
    f->lo = r.lo;
    f->hi = r.hi;
    f->range_epoch = t->epoch;
    return r;
}

static int64_t compute_divisor(sym_table *t, sym_expr e) {
    const sym_node *nd = sym__node(t, e);
    uint32_t n = nd->n;
    int64_t v = nd->value, g, k;
    switch ((sym_kind)nd->kind) {
    case SYM_CONST: return sym__gcd(v, 0);
    case SYM_SYMBOL: {
        const sym_sym *s = &t->syms[v];
        if (s->min == s->max) return sym__gcd(s->min, 0);
        return s->mult;
    }
    case SYM_ADD:
        g = sym__gcd(v, 0);
        for (uint32_t i = 0; i < n; i++) {
            int64_t c = sym__coefs(t, e)[i], d = sym_divisor_of(t, sym__ops(t, e)[i]), p;
            if (__builtin_mul_overflow(c, d, &p)) p = c; /* c still divides c*d */
            g = sym__gcd(g, p);
        }
        return g;
    case SYM_MUL:
        g = sym__gcd(v, 0);
        for (uint32_t i = 0; i < n; i++) {
            int64_t d = sym_divisor_of(t, sym__ops(t, e)[i]), p;
            if (d == 0) return 0;
            if (!__builtin_mul_overflow(g, d, &p) && p != INT64_MIN) g = p;
        }
        return g;
    case SYM_FLOORDIV: {
        int64_t da = sym_divisor_of(t, sym__ops(t, e)[0]);
        if (da == 0) return 0;
        if (sym_is_const(t, sym__ops(t, e)[1], &k) && k != INT64_MIN && k != 0) {
            int64_t ak = k < 0 ? -k : k;
            if (da % ak == 0) return da / ak; /* exact quotient keeps the rest */
        }
        return 1;
    }
    case SYM_MOD:
    case SYM_MIN:
    case SYM_MAX:
        /* a % b == a - b*q, and min/max pick one operand: common divisors survive */
        return sym__gcd(sym_divisor_of(t, sym__ops(t, e)[0]), sym_divisor_of(t, sym__ops(t, e)[1]));
    }
    return 1;
}

int64_t sym_divisor_of(sym_table *t, sym_expr e) {
    if (!sym__valid(t, e)) return 1;
    sym_fact *f = &t->facts[e];
    if (f->div_epoch == t->epoch) return f->div;
    int64_t d = compute_divisor(t, e);
    f = &t->facts[e];
    f->div = d;
    f->div_epoch = t->epoch;
    return d;
}

int64_t sym__residue(sym_table *t, sym_expr e, int64_t *g) {
    const sym_node *nd = sym__node(t, e);
    if (nd->kind == SYM_CONST) {
        *g = 0;
        return nd->value;
    }
    if (nd->kind != SYM_ADD) {
        *g = sym_divisor_of(t, e);
        return 0;
    }
    int64_t gg = 0;
    for (uint32_t i = 0; i < nd->n; i++) {
        int64_t cf = sym__coefs(t, e)[i], d = sym_divisor_of(t, sym__ops(t, e)[i]), p;
        if (__builtin_mul_overflow(cf, d, &p)) p = cf; /* cf still divides cf*d */
        gg = sym__gcd(gg, p);
    }
    *g = gg;
    return nd->value;
}

int64_t sym__const_residue(sym_table *t, sym_expr e, int64_t k) {
    int64_t g, c = sym__residue(t, e, &g);
    if (g != 0 && g % k != 0) return -1;
    return sym__mod(c, k);
}

bool sym__round_range(int64_t *lo, int64_t *hi, int64_t m) {
    if (m <= 1) return *lo <= *hi;
    int64_t r = sym__mod(*lo, m), l = *lo;
    if (r != 0 && __builtin_add_overflow(l, m - r, &l)) return false;
    int64_t h = *hi - sym__mod(*hi, m);
    if (l > h) return false;
    *lo = l;
    *hi = h;
    return true;
}
