/* Exact evaluation with every symbol bound, and binding checks.
 *
 * Evaluation is a depth-first walk with int64 arithmetic checked by
 * __builtin_*_overflow. Expressions are hash-consed DAGs whose subterms are
 * shared (a ceil-mode window mentions its input twice, and each of forty
 * stages doing so makes a tree of 2^40 paths), so the walk memoizes each
 * compound node's value for the one binding (sym_memo: no allocation for
 * small expressions) and costs time linear in the distinct nodes. The order
 * is the shape-program compiler's (program.c emits instructions in this
 * same memoized depth-first order): a node's operands left to right, each
 * folded in as soon as it is known, a sum adds its terms first and its
 * constant last, a product multiplies its factors first and its constant
 * last. Both evaluators therefore meet the same first failing operation, and
 * overflow (or divide by zero) at exactly the same bindings. Division follows
 * Python: floordiv rounds toward -infinity and mod takes the sign of the
 * divisor. */
#include "symshape/sym_internal.h"

#include <string.h>

int64_t sym__floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    return q;
}

int64_t sym__mod(int64_t a, int64_t b) {
    if (b == -1) return 0; /* INT64_MIN % -1 traps in C */
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

int sym_rel_holds(sym_rel rel, int64_t a, int64_t b) {
    switch (rel) {
    case SYM_REL_EQ: return a == b;
    case SYM_REL_NE: return a != b;
    case SYM_REL_LE: return a <= b;
    case SYM_REL_LT: return a < b;
    case SYM_REL_DIVISIBLE: return b >= 1 && sym__mod(a, b) == 0; /* no INT64_MIN % -1 trap */
    case SYM_REL_BROADCAST: return a == b || a == 1 || b == 1;
    }
    return 0;
}

symc_status sym__eval_op(sym_kind kind, int64_t a, int64_t b, int64_t *out) {
    switch (kind) {
    case SYM_ADD: return __builtin_add_overflow(a, b, out) ? SYMC_ERR_OVERFLOW : SYMC_OK;
    case SYM_MUL: return __builtin_mul_overflow(a, b, out) ? SYMC_ERR_OVERFLOW : SYMC_OK;
    case SYM_FLOORDIV:
        if (b == 0) return SYMC_ERR_DIV_ZERO;
        if (a == INT64_MIN && b == -1) return SYMC_ERR_OVERFLOW;
        *out = sym__floordiv(a, b);
        return SYMC_OK;
    case SYM_MOD:
        if (b == 0) return SYMC_ERR_DIV_ZERO;
        *out = sym__mod(a, b);
        return SYMC_OK;
    case SYM_MIN: *out = a < b ? a : b; return SYMC_OK;
    case SYM_MAX: *out = a > b ? a : b; return SYMC_OK;
    default: return SYMC_ERR_INTERNAL;
    }
}

static symc_status op_error(const sym_table *t, sym_expr e, symc_status s, symc_error *err) {
    char buf[160];
    if (s == SYMC_ERR_DIV_ZERO)
        return symc_error_setf(err, s, "division by zero evaluating %s", sym__text(t, e, buf, sizeof buf));
    return symc_error_setf(err, s, "int64 overflow evaluating %s", sym__text(t, e, buf, sizeof buf));
}

/* One evaluation: the binding and the values of the compound nodes seen so
 * far. Symbols and constants are not memoized (reading them is as cheap as
 * a lookup). */
typedef struct evctx {
    const sym_table *t;
    const int64_t *vals;
    uint32_t nv;
    symc_error *err;
    sym_memo memo;
} evctx;

static void ev_init(evctx *c, const sym_table *t, const int64_t *vals, uint32_t nv, symc_error *err) {
    c->t = t;
    c->vals = vals;
    c->nv = nv;
    c->err = err;
    sym__memo_init(&c->memo); /* the memo's buffers stay uninitialized but for the keys */
}

static symc_status ev(evctx *c, sym_expr e, int64_t *out) {
    const sym_table *t = c->t;
    const sym_node *nd = sym__node(t, e);
    symc_status s;
    int64_t acc = 0, x, *known;
    switch ((sym_kind)nd->kind) {
    case SYM_CONST: *out = nd->value; return SYMC_OK;
    case SYM_SYMBOL:
        if ((uint64_t)nd->value >= c->nv)
            return symc_error_setf(c->err, SYMC_ERR_UNBOUND, "symbol %s has no value (%u values given)",
                                   t->syms[nd->value].name, c->nv);
        *out = c->vals[nd->value];
        return SYMC_OK;
    default: break;
    }
    if ((known = sym__memo_find(&c->memo, e))) {
        *out = *known;
        return SYMC_OK;
    }
    if (nd->kind == SYM_ADD || nd->kind == SYM_MUL) {
        for (uint32_t i = 0; i < nd->n; i++) {
            if ((s = ev(c, sym__ops(t, e)[i], &x))) return s;
            if (nd->kind == SYM_ADD && (s = sym__eval_op(SYM_MUL, x, sym__coefs(t, e)[i], &x)))
                return op_error(t, e, s, c->err);
            if (i == 0) acc = x;
            else if ((s = sym__eval_op((sym_kind)nd->kind, acc, x, &acc))) return op_error(t, e, s, c->err);
        }
        if (nd->n == 0) acc = nd->kind == SYM_ADD ? 0 : 1; /* not canonical, but well defined */
        if ((nd->kind == SYM_ADD && nd->value != 0) || (nd->kind == SYM_MUL && nd->value != 1))
            if ((s = sym__eval_op((sym_kind)nd->kind, acc, nd->value, &acc))) return op_error(t, e, s, c->err);
    } else {
        int64_t a, b;
        if ((s = ev(c, sym__ops(t, e)[0], &a))) return s;
        if ((s = ev(c, sym__ops(t, e)[1], &b))) return s;
        if ((s = sym__eval_op((sym_kind)nd->kind, a, b, &acc))) return op_error(t, e, s, c->err);
    }
    if (!sym__memo_put(&c->memo, e, acc))
        return symc_error_setf(c->err, SYMC_ERR_NOMEM, "out of memory evaluating an expression");
    *out = acc;
    return SYMC_OK;
}

symc_status sym_eval(const sym_table *t, sym_expr e, const int64_t *values, uint32_t n, int64_t *out, symc_error *err) {
    if (!t || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_eval: NULL argument");
    if (!sym__valid(t, e)) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_eval: bad expression handle %u", e);
    if (n && !values) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_eval: NULL values");
    evctx c;
    ev_init(&c, t, values, n, err);
    symc_status s = ev(&c, e, out);
    sym__memo_free(&c.memo);
    return s;
}

symc_status sym_check_binding(const sym_table *t, const int64_t *values, uint32_t n, symc_error *err) {
    char rb[64], ta[128], tb[128];
    if (!t) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_check_binding: NULL table");
    if (n && !values) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_check_binding: NULL values");
    if (n < t->nsyms)
        return symc_error_setf(err, SYMC_ERR_UNBOUND, "symbol %s has no value (%u of %u symbols bound)",
                               t->syms[n].name, n, t->nsyms);
    for (uint32_t i = 0; i < t->nsyms; i++) {
        const sym_sym *s = &t->syms[i];
        int64_t v = values[i];
        const char *p = s->provenance[0] ? s->provenance : NULL;
        if (v < s->min || v > s->max || sym__mod(v, s->mult) != 0) {
            if (s->mult > 1)
                return symc_error_setf(err, SYMC_ERR_RANGE, "symbol %s = %lld must be a multiple of %lld in %s%s%s%s",
                                       s->name, (long long)v, (long long)s->mult,
                                       sym__range_text(s->min, s->max, rb, sizeof rb), p ? " (" : "", p ? p : "",
                                       p ? ")" : "");
            return symc_error_setf(err, SYMC_ERR_RANGE, "symbol %s = %lld must be in %s%s%s%s", s->name, (long long)v,
                                   sym__range_text(s->min, s->max, rb, sizeof rb), p ? " (" : "", p ? p : "",
                                   p ? ")" : "");
        }
    }
    /* one binding: the bounds and equalities share one memo */
    evctx c;
    symc_status s = SYMC_OK;
    ev_init(&c, t, values, n, err);
    for (uint32_t i = 0; i < t->nsyms && !s; i++) {
        int64_t b;
        if (t->syms[i].ubound == SYM_NONE || (s = ev(&c, t->syms[i].ubound, &b))) continue;
        if (values[i] > b)
            s = symc_error_setf(err, SYMC_ERR_RANGE, "symbol %s = %lld exceeds its bound %s = %lld", t->syms[i].name,
                                (long long)values[i], sym__text(t, t->syms[i].ubound, ta, sizeof ta), (long long)b);
    }
    for (uint32_t i = 0; i < t->neqs && !s; i++) {
        int64_t a, b;
        if ((s = ev(&c, t->eqs[i].a, &a)) || (s = ev(&c, t->eqs[i].b, &b))) break;
        if (a != b)
            s = symc_error_setf(err, SYMC_ERR_RANGE, "binding breaks the assumed equality %s == %s (%lld != %lld)",
                                sym__text(t, t->eqs[i].a, ta, sizeof ta), sym__text(t, t->eqs[i].b, tb, sizeof tb),
                                (long long)a, (long long)b);
    }
    sym__memo_free(&c.memo);
    return s;
}
