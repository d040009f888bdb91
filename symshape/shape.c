/* Shape helpers for the shape rules of passes/.
 *
 * Each helper states what the op needs (equal dims, divisibility, a positive
 * output) through sym_require: proven facts cost nothing, refuted facts are
 * an error naming the op and the dims, and the rest become guards with the
 * op as provenance, so the build can decide later whether they are run-time
 * checks or declaration errors. Results are plain canonical expressions;
 * data-dependent choices (which operand of a broadcast is 1, whether a slice
 * bound is negative) are written as min/max arithmetic instead of being
 * specialized, so one compiled engine serves every shape in range. */
#include "symshape/sym_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *W(const char *what) { return what && what[0] ? what : "shape"; }

static symc_status built(sym_table *t, sym_expr e, const char *what, symc_error *err) {
    if (e != SYM_NONE) return SYMC_OK;
    const symc_error *te = sym_table_error(t);
    return symc_error_setf(err, te ? te->code : SYMC_ERR_INTERNAL, "%s: %s", W(what),
                           te ? te->msg : "could not build a shape expression");
}

static bool valid_list(const sym_table *t, const sym_expr *d, uint32_t n, bool allow_none) {
    if (n && !d) return false;
    for (uint32_t i = 0; i < n; i++)
        if (!sym__valid(t, d[i]) && !(allow_none && d[i] == SYM_NONE)) return false;
    return true;
}

symc_status sym_require(sym_table *t, sym_rel rel, sym_expr lhs, sym_expr rhs, const char *what, symc_error *err) {
    if (!t || !sym__valid(t, lhs) || !sym__valid(t, rhs))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad expression handle", W(what));
    sym_tri p;
    int64_t k = 0;
    switch (rel) {
    case SYM_REL_EQ: p = sym_prove_eq(t, lhs, rhs); break;
    case SYM_REL_NE: p = sym_prove_ne(t, lhs, rhs); break;
    case SYM_REL_LE: p = sym_prove_le(t, lhs, rhs); break;
    case SYM_REL_LT: p = sym_prove_lt(t, lhs, rhs); break;
    case SYM_REL_DIVISIBLE:
        if (!sym_is_const(t, rhs, &k) || k < 1)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: divisibility needs a positive constant", W(what));
        p = sym_prove_divisible(t, lhs, k);
        break;
    case SYM_REL_BROADCAST: {
        sym_expr one = sym_const(t, 1);
        sym_tri a = sym_prove_eq(t, lhs, rhs), b = sym_prove_eq(t, lhs, one), c = sym_prove_eq(t, rhs, one);
        p = (a == SYM_TRUE || b == SYM_TRUE || c == SYM_TRUE)      ? SYM_TRUE
            : (a == SYM_FALSE && b == SYM_FALSE && c == SYM_FALSE) ? SYM_FALSE
                                                                   : SYM_UNKNOWN;
        break;
    }
    default: return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad relation %d", W(what), (int)rel);
    }
    if (p == SYM_TRUE) return SYMC_OK;
    uint32_t idx;
    symc_status s = sym_guard_add(t, rel, lhs, rhs, W(what), &idx, err);
    if (s) return s;
    if (p == SYM_UNKNOWN) return SYMC_OK;
    /* refuted: keep the guard (an inspector may list it) and explain */
    char line[SYMC_ERROR_MSG_CAP];
    sym_guard_explain(t, idx, line, sizeof line);
    return symc_error_setf(err, SYMC_ERR_VERIFY, "%s", line);
}

sym_expr sym_numel(sym_table *t, const sym_expr *dims, uint32_t n) {
    if (!t) return SYM_NONE;
    sym_expr p = sym_const(t, 1);
    for (uint32_t i = 0; i < n && p != SYM_NONE; i++) p = sym_mul(t, p, dims[i]);
    return p;
}

/* ---- broadcast ------------------------------------------------------------------- */

static symc_status bcast_dim(sym_table *t, sym_expr x, sym_expr y, uint32_t dim, const char *what, sym_expr *r,
                             symc_error *err) {
    sym_expr one = sym_const(t, 1), zero = sym_const(t, 0);
    sym_tri exy = sym_prove_eq(t, x, y), ex1 = sym_prove_eq(t, x, one), ey1 = sym_prove_eq(t, y, one);
    if (exy == SYM_TRUE || ey1 == SYM_TRUE) {
        *r = x;
        return SYMC_OK;
    }
    if (ex1 == SYM_TRUE) {
        *r = y;
        return SYMC_OK;
    }
    char w[256];
    snprintf(w, sizeof w, "%s (broadcast, output dim %u)", W(what), dim);
    symc_status s = sym_require(t, SYM_REL_BROADCAST, x, y, w, err);
    if (s) return s;
    /* Under the guard: a dim that is never 1 is the result; otherwise pick
     * at run time. max() is right for positive dims; 1 vs 0 broadcasts to 0. */
    if (ex1 == SYM_FALSE) {
        *r = x;
    } else if (ey1 == SYM_FALSE) {
        *r = y;
    } else if (sym_prove_le(t, one, x) == SYM_TRUE && sym_prove_le(t, one, y) == SYM_TRUE) {
        *r = sym_max(t, x, y);
    } else if (sym_prove_le(t, zero, x) == SYM_TRUE && sym_prove_le(t, zero, y) == SYM_TRUE) {
        *r = sym_mul(t, sym_max(t, x, y), sym_min(t, sym_min(t, x, y), one));
    } else {
        *r = sym_max(t, x, y);
    }
    return built(t, *r, what, err);
}

symc_status sym_broadcast(sym_table *t, const sym_expr *a, uint32_t na, const sym_expr *b, uint32_t nb, sym_expr *out,
                          uint32_t *nout, const char *what, symc_error *err) {
    if (!t || !out || !valid_list(t, a, na, false) || !valid_list(t, b, nb, false))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad broadcast arguments", W(what));
    uint32_t n = na > nb ? na : nb;
    sym_expr tmp[64], *res = n <= 64 ? tmp : out; /* out may alias a or b */
    for (uint32_t i = 0; i < n; i++) {
        bool ha = i >= n - na, hb = i >= n - nb;
        sym_expr x = ha ? a[i - (n - na)] : SYM_NONE, y = hb ? b[i - (n - nb)] : SYM_NONE, r;
        if (!ha) r = y;
        else if (!hb) r = x;
        else {
            symc_status s = bcast_dim(t, x, y, i, what, &r, err);
            if (s) return s;
        }
        res[i] = r;
    }
    if (n && res != out) memcpy(out, res, n * sizeof *out);
    if (nout) *nout = n;
    return SYMC_OK;
}

/* ---- matmul and concat -------------------------------------------------------------- */

symc_status sym_matmul(sym_table *t, const sym_expr *a, uint32_t na, const sym_expr *b, uint32_t nb, sym_expr *out,
                       uint32_t *nout, const char *what, symc_error *err) {
    if (!t || !out || na == 0 || nb == 0 || na > 64 || nb > 64 || !valid_list(t, a, na, false) ||
        !valid_list(t, b, nb, false))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad matmul arguments (ranks %u and %u)", W(what), na,
                               nb);
    sym_expr one = sym_const(t, 1);
    sym_expr A[65], B[65];
    uint32_t ra = na, rb = nb;
    if (na == 1) {
        A[0] = one;
        A[1] = a[0];
        ra = 2;
    } else {
        if (na) memcpy(A, a, na * sizeof *A);
    }
    if (nb == 1) {
        B[0] = b[0];
        B[1] = one;
        rb = 2;
    } else {
        if (nb) memcpy(B, b, nb * sizeof *B);
    }
    char w[256];
    snprintf(w, sizeof w, "%s (matmul: inner dims must match)", W(what));
    symc_status s = sym_require(t, SYM_REL_EQ, A[ra - 1], B[rb - 2], w, err);
    if (s) return s;
    uint32_t nbatch;
    sym_expr batch[64];
    s = sym_broadcast(t, A, ra - 2, B, rb - 2, batch, &nbatch, what, err);
    if (s) return s;
    uint32_t n = 0;
    for (uint32_t i = 0; i < nbatch; i++) out[n++] = batch[i];
    if (na != 1) out[n++] = A[ra - 2];
    if (nb != 1) out[n++] = B[rb - 1];
    if (nout) *nout = n;
    return SYMC_OK;
}

symc_status sym_concat(sym_table *t, const sym_expr *const *shapes, uint32_t ninputs, uint32_t rank, uint32_t axis,
                       sym_expr *out, const char *what, symc_error *err) {
    if (!t || !shapes || !out || ninputs == 0 || axis >= rank)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad concat arguments (axis %u, rank %u, %u inputs)",
                               W(what), axis, rank, ninputs);
    for (uint32_t j = 0; j < ninputs; j++)
        if (!valid_list(t, shapes[j], rank, false))
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: input %u has a bad shape", W(what), j);
    sym_expr sum = sym_const(t, 0);
    for (uint32_t d = 0; d < rank; d++) {
        if (d == axis) continue;
        for (uint32_t j = 1; j < ninputs; j++) {
            char w[256];
            snprintf(w, sizeof w, "%s (concat: input %u dim %u must match input 0)", W(what), j, d);
            symc_status s = sym_require(t, SYM_REL_EQ, shapes[j][d], shapes[0][d], w, err);
            if (s) return s;
        }
    }
    for (uint32_t j = 0; j < ninputs; j++) sum = sym_add(t, sum, shapes[j][axis]);
    symc_status s = built(t, sum, what, err);
    if (s) return s;
    for (uint32_t d = 0; d < rank; d++) out[d] = d == axis ? sum : shapes[0][d];
    return SYMC_OK;
}

/* ---- conv / pool ----------------------------------------------------------------------- */

symc_status sym_window_out(sym_table *t, sym_expr in, int64_t kernel, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                           int64_t dilation, int ceil_mode, const char *what, sym_expr *out, symc_error *err) {
    if (!t || !out || !sym__valid(t, in))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad window arguments", W(what));
    if (kernel < 1 || stride < 1 || dilation < 1 || pad_lo < 0 || pad_hi < 0)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "%s: kernel %" PRId64 ", stride %" PRId64 ", dilation %" PRId64
                               " must be >= 1 and pads %" PRId64 ", %" PRId64 " >= 0",
                               W(what), kernel, stride, dilation, pad_lo, pad_hi);
    int64_t eff, off;
    if (__builtin_mul_overflow(dilation, kernel - 1, &eff) || __builtin_add_overflow(eff, 1, &eff) ||
        __builtin_add_overflow(pad_lo, pad_hi, &off) || __builtin_sub_overflow(off, eff, &off))
        return symc_error_setf(err, SYMC_ERR_OVERFLOW, "%s: window parameters overflow int64", W(what));
    sym_expr num = sym_add_const(t, in, off), r;
    if (!ceil_mode) {
        r = sym_add_const(t, sym_floordiv(t, num, sym_const(t, stride)), 1);
    } else {
        /* PyTorch: round up, then drop a last window that would start in the right padding */
        sym_expr k = sym_const(t, stride);
        sym_expr oc = sym_add_const(t, sym_ceildiv(t, num, k), 1);
        if (pad_hi <= eff) { /* then the adjustment is at most one: a min says it */
            sym_expr lim = sym_add_const(t, sym_floordiv(t, sym_add_const(t, in, pad_lo - 1), k), 1);
            r = sym_min(t, oc, lim);
        } else {
            sym_expr start = sym_scale(t, sym_add_const(t, oc, -1), stride);
            sym_expr over = sym_sub(t, start, sym_add_const(t, in, pad_lo - 1)); /* >= 1 iff the window is out */
            sym_expr ind = sym_min(t, sym_max(t, over, sym_const(t, 0)), sym_const(t, 1));
            r = sym_sub(t, oc, ind);
        }
    }
    symc_status s = built(t, r, what, err);
    if (s) return s;
    char w[256];
    snprintf(w, sizeof w, "%s (window output must be >= 1)", W(what));
    s = sym_require(t, SYM_REL_LE, sym_const(t, 1), r, w, err);
    if (s) return s;
    *out = r;
    return SYMC_OK;
}

/* ---- reshape --------------------------------------------------------------------------- */

static void dims_text(sym_table *t, const sym_expr *d, uint32_t n, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n && len + 4 < cap; i++) {
        char e[96];
        if (d[i] == SYM_NONE) snprintf(e, sizeof e, "-1");
        else sym__text(t, d[i], e, sizeof e);
        int m = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", e);
        if (m < 0) break;
        len += (size_t)m;
    }
}

/* e as a monomial: a constant factor *c and the other factors ops[0..*n) (a product's operands,
 * or e itself). 0 when there are more than cap factors. */
static int monomial(sym_table *t, sym_expr e, int64_t *c, sym_expr *ops, uint32_t *n, uint32_t cap) {
    sym_view v;
    if (!sym_expr_view(t, e, &v)) return 0;
    *n = 0;
    if (v.kind == SYM_CONST) {
        *c = v.value;
        return 1;
    }
    if (v.kind != SYM_MUL) {
        *c = 1;
        ops[(*n)++] = e;
        return 1;
    }
    if (v.n > cap) return 0;
    *c = v.value;
    for (uint32_t i = 0; i < v.n; i++) ops[(*n)++] = v.ops[i];
    return 1;
}

/* When every non-constant factor of den is also a factor of num (as a multiset): num / those
 * factors into *rest and den's constant factor (> 0) into *k; returns 1. Else 0. */
static int cancel_factors(sym_table *t, sym_expr num, sym_expr den, sym_expr *rest, int64_t *k) {
    enum { CAP = 64 };
    sym_expr a[CAP], b[CAP];
    uint32_t na, nb;
    int64_t ca, cb;
    if (!monomial(t, num, &ca, a, &na, CAP) || !monomial(t, den, &cb, b, &nb, CAP) || cb < 1 || nb == 0) return 0;
    for (uint32_t j = 0; j < nb; j++) {
        uint32_t i = 0;
        while (i < na && a[i] != b[j]) i++;
        if (i == na) return 0;
        a[i] = a[--na];
    }
    sym_expr r = sym_const(t, ca);
    for (uint32_t i = 0; i < na; i++) r = sym_mul(t, r, a[i]);
    if (r == SYM_NONE) return 0;
    *rest = r;
    *k = cb;
    return 1;
}

symc_status sym_reshape(sym_table *t, const sym_expr *in, uint32_t nin, const sym_expr *target, uint32_t n,
                        sym_expr *out, const char *what, symc_error *err) {
    if (!t || !out || !valid_list(t, in, nin, false) || !valid_list(t, target, n, true))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad reshape arguments", W(what));
    uint32_t infer = UINT32_MAX;
    for (uint32_t i = 0; i < n; i++)
        if (target[i] == SYM_NONE) {
            if (infer != UINT32_MAX)
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: reshape target has more than one -1", W(what));
            infer = i;
        }
    sym_expr pin = sym_numel(t, in, nin), known = sym_const(t, 1);
    for (uint32_t i = 0; i < n; i++)
        if (i != infer) known = sym_mul(t, known, target[i]);
    symc_status s = built(t, pin, what, err);
    if (!s) s = built(t, known, what, err);
    if (s) return s;
    char a[200], b[200], w[512];
    dims_text(t, in, nin, a, sizeof a);
    dims_text(t, target, n, b, sizeof b);
    snprintf(w, sizeof w, "%s (reshape (%s) to (%s))", W(what), a, b);
    if (infer == UINT32_MAX) {
        s = sym_require(t, SYM_REL_EQ, known, pin, w, err);
        if (s) return s;
        if (n && out != target) memmove(out, target, n * sizeof *out);
        return SYMC_OK;
    }
    int64_t k;
    sym_expr x;
    if (sym_is_const(t, known, &k)) {
        if (k == 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "%s: cannot infer -1 when the other dims multiply to 0", w);
        if (k < 0) return symc_error_setf(err, SYMC_ERR_VERIFY, "%s: the other dims multiply to %" PRId64, w, k);
        s = sym_require(t, SYM_REL_DIVISIBLE, pin, known, w, err);
        if (s) return s;
        x = sym_floordiv(t, pin, known);
    } else {
        s = sym_require(t, SYM_REL_LE, sym_const(t, 1), known, w, err);
        if (s) return s;
        sym_expr rest;
        if (cancel_factors(t, pin, known, &rest, &k)) {
            /* pin = rest * P and known = k * P with P != 0 (known >= 1): the same condition as
             * divisibility of rest by the constant k, which names the symbol and the multiple it
             * needs ("declare S as a multiple of 8") where the product form could not */
            if (k > 1 && (s = sym_require(t, SYM_REL_DIVISIBLE, rest, sym_const(t, k), w, err))) return s;
            x = sym_floordiv(t, rest, sym_const(t, k));
        } else {
            x = sym_floordiv(t, pin, known);
            if ((s = built(t, x, what, err))) return s;
            s = sym_require(t, SYM_REL_EQ, sym_mul(t, x, known), pin, w, err);
            if (s) return s;
        }
    }
    if ((s = built(t, x, what, err))) return s;
    if (n && out != target) memmove(out, target, n * sizeof *out);
    out[infer] = x;
    return SYMC_OK;
}

/* ---- slice ------------------------------------------------------------------------------ */

/* v < 0 ? v + dim : v, without knowing the sign: v + dim*[v < 0]. */
static sym_expr wrap_negative(sym_table *t, sym_expr v, sym_expr dim) {
    sym_expr zero = sym_const(t, 0);
    if (sym_prove_le(t, zero, v) == SYM_TRUE) return v;
    if (sym_prove_lt(t, v, zero) == SYM_TRUE) return sym_add(t, v, dim);
    sym_expr neg = sym_min(t, sym_max(t, sym_neg(t, v), zero), sym_const(t, 1));
    return sym_add(t, v, sym_mul(t, dim, neg));
}

static sym_expr clamp(sym_table *t, sym_expr v, sym_expr lo, sym_expr hi) { return sym_min(t, sym_max(t, v, lo), hi); }

symc_status sym_slice_len(sym_table *t, sym_expr dim, sym_expr start, sym_expr end, int64_t step, sym_expr *out,
                          const char *what, symc_error *err) {
    if (!t || !out || !sym__valid(t, dim) || !sym__valid(t, start) || !sym__valid(t, end))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: bad slice arguments", W(what));
    if (step == 0 || step == INT64_MIN)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: slice step %" PRId64 " is not allowed", W(what), step);
    sym_expr s0 = wrap_negative(t, start, dim), e0 = wrap_negative(t, end, dim), len;
    sym_expr zero = sym_const(t, 0);
    if (step > 0) {
        sym_expr s = clamp(t, s0, zero, dim), e = clamp(t, e0, zero, dim);
        len = sym_ceildiv(t, sym_sub(t, e, s), sym_const(t, step));
    } else {
        sym_expr top = sym_add_const(t, dim, -1);
        sym_expr s = clamp(t, s0, zero, top), e = clamp(t, e0, sym_const(t, -1), top);
        len = sym_ceildiv(t, sym_sub(t, s, e), sym_const(t, -step));
    }
    len = sym_max(t, len, zero);
    symc_status st = built(t, len, what, err);
    if (st) return st;
    *out = len;
    return SYMC_OK;
}
