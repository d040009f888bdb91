/* Printing and parsing of expressions.
 *
 * The printer writes Python-compatible integer arithmetic so that a printed
 * expression means what it says when pasted into Python and so sym_parse can
 * read it back: sums and products carry their own parentheses ("(B*197)",
 * "((H-1)//2+1)"), a floordiv or mod is parenthesized wherever Python's
 * left-associative precedence would otherwise regroup it, and min/max print as
 * calls. Output depends only on the expression's structure and symbol names
 * (sums and products are stored in a structural order), so it is stable
 * across tables and runs: golden tests and round trips can rely on it.
 *
 * Expressions are DAGs with shared subterms, and text cannot share: forty
 * conv stages that each mention their input twice print as ~2^40 characters.
 * So the text is cut at SYM_PRINT_LIMIT characters, its head followed by
 * SYM_PRINT_CUT, and the walk stops as soon as the limit is reached: every
 * call that is not cut short writes at least one character (or leads
 * straight to one that does), so printing costs O(SYM_PRINT_LIMIT) however
 * large the tree. A cut text does not read back; every shorter one does. */
#include "symshape/sym_internal.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

typedef struct sb {
    char *buf;
    size_t cap, len;
    size_t stop; /* text is produced up to this length and no further */
} sb;

static void put(sb *o, const char *s, size_t n) {
    if (o->len >= o->stop) return;
    if (n > o->stop - o->len) n = o->stop - o->len;
    if (o->len < o->cap) {
        size_t room = o->cap - 1 - o->len, m = n < room ? n : room;
        memcpy(o->buf + o->len, s, m);
        o->buf[o->len + m] = '\0';
    }
    o->len += n;
}

static void puts_(sb *o, const char *s) { put(o, s, strlen(s)); }

static void put_i64(sb *o, int64_t v) {
    char b[32];
    int n = snprintf(b, sizeof b, "%" PRId64, v);
    put(o, b, (size_t)n);
}

static void put_u64(sb *o, uint64_t v) {
    char b[32];
    int n = snprintf(b, sizeof b, "%" PRIu64, v);
    put(o, b, (size_t)n);
}

static uint64_t mag(int64_t v) { return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v; }

static void pr(const sym_table *t, sym_expr e, sb *o);

static bool is_div(const sym_table *t, sym_expr e) {
    uint8_t k = sym__node(t, e)->kind;
    return k == SYM_FLOORDIV || k == SYM_MOD;
}

/* factor*factor*...*m, with an optional leading minus. */
static void body(const sym_table *t, const sym_expr *f, uint32_t n, bool neg, uint64_t m, sb *o) {
    if (neg) puts_(o, "-");
    for (uint32_t i = 0; i < n && o->len < o->stop; i++) {
        if (i) puts_(o, "*");
        /* a//b*c groups as (a//b)*c, but -a//b and c*a//b do not */
        bool paren = is_div(t, f[i]) && (i > 0 || neg);
        if (paren) puts_(o, "(");
        pr(t, f[i], o);
        if (paren) puts_(o, ")");
    }
    if (m != 1) {
        puts_(o, "*");
        put_u64(o, m);
    }
}

static void monomial(const sym_table *t, sym_expr u, int64_t k, sb *o) {
    const sym_node *nd = sym__node(t, u);
    if (nd->kind == SYM_MUL && nd->value == 1) body(t, sym__ops(t, u), nd->n, k < 0, mag(k), o);
    else body(t, &u, 1, k < 0, mag(k), o);
}

static void operand(const sym_table *t, sym_expr e, sb *o) {
    bool paren = is_div(t, e);
    if (paren) puts_(o, "(");
    pr(t, e, o);
    if (paren) puts_(o, ")");
}

static void pr(const sym_table *t, sym_expr e, sb *o) {
    if (o->len >= o->stop) return; /* cut: the rest of the tree is not visited */
    const sym_node *nd = sym__node(t, e);
    const sym_expr *ops = sym__ops(t, e);
    switch ((sym_kind)nd->kind) {
    case SYM_CONST: put_i64(o, nd->value); return;
    case SYM_SYMBOL: puts_(o, t->syms[nd->value].name); return;
    case SYM_ADD:
        puts_(o, "(");
        for (uint32_t i = 0; i < nd->n && o->len < o->stop; i++) {
            int64_t k = sym__coefs(t, e)[i];
            if (i && k > 0) puts_(o, "+");
            monomial(t, ops[i], k, o);
        }
        if (nd->value > 0) puts_(o, "+");
        if (nd->value) put_i64(o, nd->value);
        puts_(o, ")");
        return;
    case SYM_MUL:
        puts_(o, "(");
        body(t, ops, nd->n, nd->value < 0, mag(nd->value), o);
        puts_(o, ")");
        return;
    case SYM_FLOORDIV:
    case SYM_MOD:
        operand(t, ops[0], o);
        puts_(o, nd->kind == SYM_FLOORDIV ? "//" : "%");
        operand(t, ops[1], o);
        return;
    case SYM_MIN:
    case SYM_MAX:
        puts_(o, nd->kind == SYM_MIN ? "min(" : "max(");
        pr(t, ops[0], o);
        puts_(o, ", ");
        pr(t, ops[1], o);
        puts_(o, ")");
        return;
    }
}

size_t sym_print(const sym_table *t, sym_expr e, char *buf, size_t cap) {
    sb o = {buf, buf ? cap : 0, 0, SYM_PRINT_LIMIT + 1}; /* one more: tells "exactly full" from "cut" */
    if (o.cap) buf[0] = '\0';
    if (!sym__valid(t, e)) {
        puts_(&o, e == SYM_NONE ? "<none>" : "<bad handle>");
        return o.len;
    }
    pr(t, e, &o);
    if (o.len > SYM_PRINT_LIMIT) { /* keep the head, end with the marker: SYM_PRINT_LIMIT in all */
        o.len = SYM_PRINT_LIMIT - (sizeof SYM_PRINT_CUT - 1);
        puts_(&o, SYM_PRINT_CUT);
    }
    return o.len;
}

const char *sym__text(const sym_table *t, sym_expr e, char *buf, size_t cap) {
    size_t n = sym_print(t, e, buf, cap);
    if (n >= cap && cap >= 4) memcpy(buf + cap - 4, "...", 4);
    return buf;
}

const char *sym__range_text(int64_t lo, int64_t hi, char *buf, size_t cap) {
    char a[32], b[32];
    if (lo == SYM_NEG_INF) snprintf(a, sizeof a, "-inf");
    else snprintf(a, sizeof a, "%" PRId64, lo);
    if (hi == SYM_POS_INF) snprintf(b, sizeof b, "inf");
    else snprintf(b, sizeof b, "%" PRId64, hi);
    snprintf(buf, cap, "[%s, %s]", a, b);
    return buf;
}

const char *sym__symbols_text(const sym_table *t, const uint32_t *ids, uint32_t n, char *buf, size_t cap) {
    sb o = {buf, cap, 0, SIZE_MAX};
    if (cap) buf[0] = '\0';
    for (uint32_t i = 0; i < n; i++) {
        const sym_sym *s = &t->syms[ids[i]];
        char r[64];
        if (i) puts_(&o, ", ");
        puts_(&o, s->name);
        puts_(&o, " in ");
        puts_(&o, sym__range_text(s->min, s->max, r, sizeof r));
        if (s->mult > 1) {
            puts_(&o, " multiple of ");
            put_i64(&o, s->mult);
        }
    }
    if (o.len >= cap && cap >= 4) memcpy(buf + cap - 4, "...", 4);
    return buf;
}

/* ---- parser ------------------------------------------------------------------- */

typedef struct ps {
    sym_table *t;
    const char *s, *p;
    symc_error *err;
    symc_status st;
    unsigned depth;
} ps;

static void skip(ps *p) {
    while (isspace((unsigned char)*p->p)) p->p++;
}

static sym_expr perr(ps *p, symc_status code, const char *what) {
    if (p->st == SYMC_OK)
        p->st = symc_error_setf(p->err, code, "parse error at column %d: %s in \"%.120s\"", (int)(p->p - p->s) + 1,
                                what, p->s);
    return SYM_NONE;
}

/* A constructor returned SYM_NONE: surface the table's reason. */
static sym_expr built(ps *p, sym_expr e) {
    if (e != SYM_NONE || p->st) return e;
    const symc_error *te = sym_table_error(p->t);
    p->st = symc_error_setf(p->err, te ? te->code : SYMC_ERR_INTERNAL, "%s",
                            te ? te->msg : "could not build the expression");
    return SYM_NONE;
}

static sym_expr p_expr(ps *p);

static sym_expr p_number(ps *p, bool neg) {
    uint64_t v = 0;
    if (!isdigit((unsigned char)*p->p)) return perr(p, SYMC_ERR_FORMAT, "expected a number");
    while (isdigit((unsigned char)*p->p)) {
        unsigned d = (unsigned)(*p->p - '0');
        if (v > (UINT64_MAX - d) / 10) return perr(p, SYMC_ERR_OVERFLOW, "integer literal too large");
        v = v * 10 + d;
        p->p++;
    }
    if (v > (uint64_t)INT64_MAX + (neg ? 1u : 0u)) return perr(p, SYMC_ERR_OVERFLOW, "integer literal too large");
    int64_t x = neg ? (int64_t)(0 - v) : (int64_t)v;
    return built(p, sym_const(p->t, x));
}

static sym_expr p_unary(ps *p) {
    skip(p);
    if (*p->p == '-') {
        p->p++;
        skip(p);
        if (isdigit((unsigned char)*p->p)) return p_number(p, true);
        if (++p->depth > 1000) return perr(p, SYMC_ERR_FORMAT, "nesting too deep");
        sym_expr a = p_unary(p);
        p->depth--;
        return a == SYM_NONE ? a : built(p, sym_neg(p->t, a));
    }
    if (isdigit((unsigned char)*p->p)) return p_number(p, false);
    if (*p->p == '(') {
        p->p++;
        if (++p->depth > 1000) return perr(p, SYMC_ERR_FORMAT, "nesting too deep");
        sym_expr a = p_expr(p);
        p->depth--;
        skip(p);
        if (a == SYM_NONE) return a;
        if (*p->p != ')') return perr(p, SYMC_ERR_FORMAT, "expected ')'");
        p->p++;
        return a;
    }
    if (isalpha((unsigned char)*p->p) || *p->p == '_') {
        const char *b = p->p;
        while (isalnum((unsigned char)*p->p) || *p->p == '_') p->p++;
        size_t n = (size_t)(p->p - b);
        char name[128];
        if (n >= sizeof name) return perr(p, SYMC_ERR_FORMAT, "name too long");
        memcpy(name, b, n);
        name[n] = '\0';
        skip(p);
        sym_id id;
        if (sym_symbol_find(p->t, name, &id)) return built(p, sym_var(p->t, id));
        bool mn = strcmp(name, "min") == 0, mx = strcmp(name, "max") == 0;
        if ((mn || mx) && *p->p == '(') {
            p->p++;
            if (++p->depth > 1000) return perr(p, SYMC_ERR_FORMAT, "nesting too deep");
            sym_expr a = p_expr(p);
            skip(p);
            if (a == SYM_NONE) return a;
            if (*p->p != ',') return perr(p, SYMC_ERR_FORMAT, "expected ','");
            p->p++;
            sym_expr c = p_expr(p);
            p->depth--;
            skip(p);
            if (c == SYM_NONE) return c;
            if (*p->p != ')') return perr(p, SYMC_ERR_FORMAT, "expected ')'");
            p->p++;
            return built(p, mn ? sym_min(p->t, a, c) : sym_max(p->t, a, c));
        }
        p->p = b;
        return perr(p, SYMC_ERR_INVALID_ARG, "unknown symbol");
    }
    return perr(p, SYMC_ERR_FORMAT, *p->p ? "unexpected character" : "unexpected end of text");
}

static sym_expr p_term(ps *p) {
    sym_expr a = p_unary(p);
    for (;;) {
        if (a == SYM_NONE) return a;
        skip(p);
        if (p->p[0] == '*') {
            p->p++;
            sym_expr b = p_unary(p);
            if (b == SYM_NONE) return b;
            a = built(p, sym_mul(p->t, a, b));
        } else if (p->p[0] == '/' && p->p[1] == '/') {
            p->p += 2;
            sym_expr b = p_unary(p);
            if (b == SYM_NONE) return b;
            a = built(p, sym_floordiv(p->t, a, b));
        } else if (p->p[0] == '%') {
            p->p++;
            sym_expr b = p_unary(p);
            if (b == SYM_NONE) return b;
            a = built(p, sym_mod(p->t, a, b));
        } else {
            return a;
        }
    }
}

static sym_expr p_expr(ps *p) {
    sym_expr a = p_term(p);
    for (;;) {
        if (a == SYM_NONE) return a;
        skip(p);
        char c = *p->p;
        if (c != '+' && c != '-') return a;
        p->p++;
        sym_expr b = p_term(p);
        if (b == SYM_NONE) return b;
        a = built(p, c == '+' ? sym_add(p->t, a, b) : sym_sub(p->t, a, b));
    }
}

symc_status sym_parse(sym_table *t, const char *text, sym_expr *out, symc_error *err) {
    if (!t || !text || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_parse: NULL argument");
    *out = SYM_NONE;
    bool had = t->has_error;
    ps p = {t, text, text, err, SYMC_OK, 0};
    sym_expr e = p_expr(&p);
    skip(&p);
    if (e != SYM_NONE && *p.p) e = perr(&p, SYMC_ERR_FORMAT, "unexpected text after the expression");
    if (!had) sym_table_clear_error(t); /* reported through err instead */
    if (e == SYM_NONE) return p.st ? p.st : symc_error_setf(err, SYMC_ERR_INTERNAL, "parse failed");
    *out = e;
    return SYMC_OK;
}
