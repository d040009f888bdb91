/* Exact evaluation with every symbol bound, and binding checks.
 *
 * Evaluation walks the expression recursively with int64 arithmetic checked
 * by __builtin_*_overflow. The operation order is fixed and shared with the
 * shape-program compiler (a sum adds its terms first and its constant last; a
 * product multiplies its factors first and its constant last) so the two
 * evaluators overflow at exactly the same bindings. Division follows Python:
 * floordiv rounds toward -infinity and mod takes the sign of the divisor. */
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

static symc_status ev(const sym_table *t, sym_expr e, const int64_t *vals, uint32_t nv, int64_t *out,
                      symc_error *err) {
    const sym_node *nd = sym__node(t, e);
    symc_status s;
    int64_t acc = 0, x;
    switch ((sym_kind)nd->kind) {
    case SYM_CONST: *out = nd->value; return SYMC_OK;
    case SYM_SYMBOL:
        if ((uint64_t)nd->value >= nv)
            return symc_error_setf(err, SYMC_ERR_UNBOUND, "symbol %s has no value (%u values given)",
                                   t->syms[nd->value].name, nv);
        *out = vals[nd->value];
        return SYMC_OK;
    case SYM_ADD:
    case SYM_MUL:
        for (uint32_t i = 0; i < nd->n; i++) {
            if ((s = ev(t, sym__ops(t, e)[i], vals, nv, &x, err))) return s;
            if (nd->kind == SYM_ADD && (s = sym__eval_op(SYM_MUL, x, sym__coefs(t, e)[i], &x)))
                return op_error(t, e, s, err);
            if (i == 0)
                acc = x;
            else if ((s = sym__eval_op((sym_kind)nd->kind, acc, x, &acc)))
                return op_error(t, e, s, err);
        }
        if (nd->n == 0) acc = nd->kind == SYM_ADD ? 0 : 1; /* not canonical, but well defined */
        if ((nd->kind == SYM_ADD && nd->value != 0) || (nd->kind == SYM_MUL && nd->value != 1))
            if ((s = sym__eval_op((sym_kind)nd->kind, acc, nd->value, &acc))) return op_error(t, e, s, err);
        *out = acc;
        return SYMC_OK;
    default: {
        int64_t a, b;
        if ((s = ev(t, sym__ops(t, e)[0], vals, nv, &a, err))) return s;
        if ((s = ev(t, sym__ops(t, e)[1], vals, nv, &b, err))) return s;
        if ((s = sym__eval_op((sym_kind)nd->kind, a, b, out))) return op_error(t, e, s, err);
        return SYMC_OK;
    }
    }
}

symc_status sym_eval(const sym_table *t, sym_expr e, const int64_t *values, uint32_t n,
                     int64_t *out, symc_error *err) {
    if (!t || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_eval: NULL argument");
    if (!sym__valid(t, e)) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_eval: bad expression handle %u", e);
    if (n && !values) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_eval: NULL values");
    return ev(t, e, values, n, out, err);
}

symc_status sym_check_binding(const sym_table *t, const int64_t *values, uint32_t n,
                              symc_error *err) {
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
                                       sym__range_text(s->min, s->max, rb, sizeof rb), p ? " (" : "",
                                       p ? p : "", p ? ")" : "");
            return symc_error_setf(err, SYMC_ERR_RANGE, "symbol %s = %lld must be in %s%s%s%s", s->name,
                                   (long long)v, sym__range_text(s->min, s->max, rb, sizeof rb),
                                   p ? " (" : "", p ? p : "", p ? ")" : "");
        }
    }
    for (uint32_t i = 0; i < t->neqs; i++) {
        int64_t a, b;
        symc_status s;
        if ((s = ev(t, t->eqs[i].a, values, n, &a, err)) || (s = ev(t, t->eqs[i].b, values, n, &b, err)))
            return s;
        if (a != b)
            return symc_error_setf(err, SYMC_ERR_RANGE, "binding breaks the assumed equality %s == %s (%lld != %lld)",
                                   sym__text(t, t->eqs[i].a, ta, sizeof ta),
                                   sym__text(t, t->eqs[i].b, tb, sizeof tb), (long long)a, (long long)b);
    }
    return SYMC_OK;
}
