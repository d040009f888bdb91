/* ONNX Einsum: the equation parsed into terms (ellipsis included), repeated letters taken as
 * diagonals, then transposes, a batched matmul and sums over the contracted letters. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- Einsum ---------------------------------------------------------------------------------------- */
/* Einsum of one or two operands as core ops. Each dim carries a label (a
 * letter, or one of the dims "..." stands for, aligned from the right). One
 * operand: a reduce_sum over the labels the output drops, then a transpose.
 * Two operands: labels only one operand has and the output drops are summed
 * first; the rest become a batched matmul, A as [batch.., M, K] and B as
 * [batch.., K, N] (M, N, K: the kept labels of each side and the contracted
 * ones, flattened), reshaped back and transposed to the output's order. So
 * batched matmuls, transposes, sums, inner and outer products are all
 * covered. A label repeated within one operand (a diagonal) and three or
 * more operands are refused. A label must have provably the same size
 * wherever it appears (a "..." dim may also be 1 and broadcast). */
#define EIN_ELL 256 /* labels of the "..." dims: EIN_ELL + position */

typedef struct ein_term {
    int lab[IR_MAX_RANK];
    int32_t n;
} ein_term;

static int ein_find(const ein_term *t, int l) {
    for (int32_t i = 0; i < t->n; i++)
        if (t->lab[i] == l) return i;
    return -1;
}

/* One term of the equation (text s of length len) for an operand of rank r
 * (r < 0: the output); n_ell: the widest "..." */
static symc_status ein_term_parse(fe_ctx *c, const char *s, size_t len, int32_t r, int32_t n_ell, ein_term *t,
                                  int *has_ell) {
    int32_t letters = 0;
    *has_ell = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (*has_ell || i + 2 >= len + 0 || s[i + 1] != '.' || s[i + 2] != '.')
                return fe_fail(c, SYMC_ERR_FORMAT, "equation term '%.*s' has a malformed '...'", (int)len, s);
            *has_ell = 1;
            i += 2;
        } else if ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) {
            letters++;
        } else {
            return fe_fail(c, SYMC_ERR_FORMAT, "equation term '%.*s' has the character '%c'", (int)len, s, s[i]);
        }
    }
    int32_t ell = r < 0 ? (*has_ell ? n_ell : 0) : r - letters;
    if (r >= 0 && (ell < 0 || (!*has_ell && ell != 0)))
        return fe_fail(c, SYMC_ERR_FORMAT, "equation term '%.*s' does not match an operand of rank %d", (int)len, s,
                       (int)r);
    if (letters + ell > IR_MAX_RANK)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "term '%.*s' has too many dims", (int)len, s);
    t->n = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            for (int32_t j = 0; j < ell; j++) t->lab[t->n++] = EIN_ELL + (n_ell - ell) + j;
            i += 2;
        } else {
            if (r < 0 && ein_find(t, s[i]) >= 0)
                return fe_fail(c, SYMC_ERR_FORMAT, "index '%c' appears twice in the output term '%.*s'", s[i], (int)len,
                               s);
            t->lab[t->n++] = s[i]; /* twice in an operand: a diagonal, taken by ein_diagonals */
        }
    }
    return SYMC_OK;
}

/* An index repeated in an operand's term takes that operand's diagonal:
 * the two dims moved last, merged into one of n * n elements and sliced
 * with step n + 1 (exact data movement), until every index is unique. */
static symc_status ein_diagonals(fe_ctx *c, uint32_t *x, ein_term *t, const char *term, size_t len) {
    for (;;) {
        int32_t p = -1, q = -1;
        for (int32_t i = 0; i < t->n && p < 0; i++)
            for (int32_t j = i + 1; j < t->n; j++)
                if (t->lab[i] == t->lab[j]) {
                    p = i, q = j;
                    break;
                }
        if (p < 0) return SYMC_OK;
        const ir_tensor *xt = T(c, *x);
        int64_t n, n2;
        if (!sym_is_const(c->t, xt->dims[p], &n) || sym_prove_eq(c->t, xt->dims[p], xt->dims[q]) != SYM_TRUE)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the diagonal of index '%c' in the term '%.*s' needs equal constant sizes, has %s and %s",
                           t->lab[p], (int)len, term, fe_txt(c, xt->dims[p]), fe_txt(c, xt->dims[q]));
        if (n > ((int64_t)1 << 31)) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a diagonal of size %" PRId64, n);
        n2 = n * n;
        int64_t perm[IR_MAX_RANK];
        sym_expr d[IR_MAX_RANK];
        ein_term nt = {.n = 0};
        for (int32_t i = 0; i < t->n; i++)
            if (i != p && i != q) d[nt.n] = xt->dims[i], perm[nt.n] = i, nt.lab[nt.n++] = t->lab[i];
        perm[nt.n] = p, perm[nt.n + 1] = q;
        d[nt.n] = sym_const(c->t, n2);
        int64_t axis = nt.n, step = n + 1;
        sym_expr s0 = sym_const(c->t, 0), e = sym_const(c->t, n2);
        ir_attr pa = symc_attr_ints("perm", perm, (uint32_t)t->n);
        ir_attr sl[4] = {symc_attr_dims("starts", &s0, 1), symc_attr_dims("ends", &e, 1),
                         symc_attr_ints("axes", &axis, 1), symc_attr_ints("steps", &step, 1)};
        symc_status st;
        if ((st = fe_emit1(c, IR_OP_TRANSPOSE, x, 1, &pa, 1, -1, x)) ||
            (st = fe_emit_reshape(c, *x, d, (uint32_t)nt.n + 1, -1, x)) ||
            (st = fe_emit1(c, IR_OP_SLICE, x, 1, sl, 4, -1, x)))
            return st;
        nt.lab[nt.n++] = t->lab[p];
        *t = nt;
    }
}

static symc_status ein_transpose(fe_ctx *c, uint32_t *x, ein_term *t, const int *order, int out_k) {
    int64_t perm[IR_MAX_RANK];
    int ident = 1;
    ein_term nt = {.n = t->n};
    for (int32_t i = 0; i < t->n; i++) {
        perm[i] = ein_find(t, order[i]);
        nt.lab[i] = order[i];
        ident &= perm[i] == i;
    }
    *t = nt;
    if (ident && out_k < 0) return SYMC_OK;
    if (ident) return fe_emit1(c, IR_OP_IDENTITY, x, 1, NULL, 0, out_k, x);
    ir_attr a = symc_attr_ints("perm", perm, (uint32_t)t->n);
    return fe_emit1(c, IR_OP_TRANSPOSE, x, 1, &a, 1, out_k, x);
}

/* sums the labels of t that `keep` says go */
static symc_status ein_sum(fe_ctx *c, uint32_t *x, ein_term *t, const int *drop) {
    int64_t axes[IR_MAX_RANK];
    uint32_t n = 0;
    ein_term nt = {.n = 0};
    for (int32_t i = 0; i < t->n; i++)
        if (drop[i]) axes[n++] = i;
        else nt.lab[nt.n++] = t->lab[i];
    if (!n) return SYMC_OK;
    *t = nt;
    ir_attr a[2] = {symc_attr_ints("axes", axes, n), symc_attr_int("keepdims", 0)};
    return fe_emit1(c, IR_OP_REDUCE_SUM, x, 1, a, 2, -1, x);
}

static symc_status ein_reshape(fe_ctx *c, uint32_t *x, const sym_expr *dims, uint32_t n) {
    const ir_tensor *t = T(c, *x);
    int same = t->rank == (int32_t)n;
    for (uint32_t i = 0; same && i < n; i++) same = t->dims[i] == dims[i];
    if (same) return SYMC_OK;
    ir_attr a = symc_attr_dims("shape", dims, n);
    return fe_emit1(c, IR_OP_RESHAPE, x, 1, &a, 1, -1, x);
}

static symc_status h_einsum(fe_ctx *c) {
    uint32_t n_in = fe_n_in(c), x[2], out;
    const char *eq = fe_attr_s(c, "equation", NULL);
    if (!eq) return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'equation' is missing");
    if (n_in < 1 || n_in > 2)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "Einsum of %u operands (one or two are supported)", n_in);
    symc_status st = SYMC_OK;
    for (uint32_t k = 0; k < n_in && !st; k++) st = fe_in(c, k, &x[k]);
    if (st) return st;
    char e[256];
    size_t len = 0;
    for (const char *p = eq; *p; p++)
        if (*p != ' ') {
            if (len + 1 >= sizeof e) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "equation '%s' is too long", eq);
            e[len++] = *p;
        }
    e[len] = '\0';
    const char *arrow = strstr(e, "->");
    size_t lhs = arrow ? (size_t)(arrow - e) : len;
    /* the operand terms */
    const char *ts[2];
    size_t tl[2];
    uint32_t nt = 0;
    for (size_t i = 0, st0 = 0; i <= lhs; i++)
        if (i == lhs || e[i] == ',') {
            if (nt == 2) return fe_fail(c, SYMC_ERR_FORMAT, "equation '%s' has more terms than operands", eq);
            ts[nt] = e + st0, tl[nt++] = i - st0, st0 = i + 1;
        }
    if (nt != n_in) return fe_fail(c, SYMC_ERR_FORMAT, "equation '%s' has %u terms for %u operands", eq, nt, n_in);
    int32_t n_ell = 0;
    for (uint32_t k = 0; k < n_in; k++) {
        int32_t letters = 0;
        for (size_t i = 0; i < tl[k]; i++) letters += ts[k][i] != '.';
        if (T(c, x[k])->rank - letters > n_ell && memchr(ts[k], '.', tl[k])) n_ell = T(c, x[k])->rank - letters;
    }
    ein_term in[2], o;
    int any_ell = 0, he;
    for (uint32_t k = 0; k < n_in; k++) {
        if ((st = ein_term_parse(c, ts[k], tl[k], T(c, x[k])->rank, n_ell, &in[k], &he)) ||
            (st = ein_diagonals(c, &x[k], &in[k], ts[k], tl[k])))
            return st;
        any_ell |= he;
    }
    /* every label's size, the same wherever it appears ("..." dims may broadcast from 1) */
    sym_expr size[EIN_ELL + IR_MAX_RANK];
    for (int l = 0; l < EIN_ELL + IR_MAX_RANK; l++) size[l] = SYM_NONE;
    for (uint32_t k = 0; k < n_in; k++)
        for (int32_t i = 0; i < in[k].n; i++) {
            int l = in[k].lab[i];
            sym_expr d = T(c, x[k])->dims[i];
            int64_t one;
            if (size[l] == SYM_NONE || (l >= EIN_ELL && sym_is_const(c->t, size[l], &one) && one == 1)) size[l] = d;
            else if (!(l >= EIN_ELL && sym_is_const(c->t, d, &one) && one == 1) &&
                     sym_prove_eq(c->t, size[l], d) != SYM_TRUE)
                return fe_fail(c, SYMC_ERR_UNSUPPORTED, "index '%c' has sizes %s and %s, which are not provably equal",
                               l < EIN_ELL ? l : '.', fe_txt(c, size[l]), fe_txt(c, d));
        }
    /* the output term: given, or implicit ("..." first, then the letters seen once, sorted) */
    if (arrow) {
        if ((st = ein_term_parse(c, arrow + 2, strlen(arrow + 2), -1, n_ell, &o, &he))) return st;
        for (int32_t i = 0; i < o.n; i++)
            if (size[o.lab[i]] == SYM_NONE)
                return fe_fail(c, SYMC_ERR_FORMAT, "output index '%c' is in no operand",
                               o.lab[i] < EIN_ELL ? o.lab[i] : '.');
    } else {
        o.n = 0;
        if (any_ell)
            for (int32_t j = 0; j < n_ell; j++) o.lab[o.n++] = EIN_ELL + j;
        for (int l = 'A'; l <= 'z'; l++) {
            int count = 0; /* in the terms as written: a diagonal's index counts twice (numpy's 'ii' is a trace) */
            for (uint32_t k = 0; k < n_in; k++)
                for (size_t i = 0; i < tl[k]; i++) count += ts[k][i] == l;
            if (count == 1) {
                if (o.n == IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the output has too many dims");
                o.lab[o.n++] = l;
            }
        }
    }
    /* labels an operand alone has and the output drops are summed at once */
    for (uint32_t k = 0; k < n_in; k++) {
        int drop[IR_MAX_RANK] = {0};
        for (int32_t i = 0; i < in[k].n; i++)
            drop[i] = ein_find(&o, in[k].lab[i]) < 0 && (n_in == 1 || ein_find(&in[1 - k], in[k].lab[i]) < 0);
        if ((st = ein_sum(c, &x[k], &in[k], drop))) return st;
    }
    if (n_in == 1) return ein_transpose(c, &x[0], &in[0], o.lab, 0);

    /* batch (both and the output, in the output's order), M (A and the output),
     * K (both, not the output), N (B and the output) */
    int ordA[IR_MAX_RANK], ordB[IR_MAX_RANK], nb = 0, nm = 0, nk = 0, nn = 0;
    int bl[IR_MAX_RANK], ml[IR_MAX_RANK], kl[IR_MAX_RANK], nl[IR_MAX_RANK];
    for (int32_t i = 0; i < o.n; i++) {
        int l = o.lab[i], a = ein_find(&in[0], l) >= 0, b = ein_find(&in[1], l) >= 0;
        if (a && b) bl[nb++] = l;
        else if (a) ml[nm++] = l;
        else nl[nn++] = l;
    }
    for (int32_t i = 0; i < in[0].n; i++)
        if (ein_find(&o, in[0].lab[i]) < 0) kl[nk++] = in[0].lab[i];
    int p = 0;
    for (int i = 0; i < nb; i++) ordA[p++] = bl[i];
    for (int i = 0; i < nm; i++) ordA[p++] = ml[i];
    for (int i = 0; i < nk; i++) ordA[p++] = kl[i];
    p = 0;
    for (int i = 0; i < nb; i++) ordB[p++] = bl[i];
    for (int i = 0; i < nk; i++) ordB[p++] = kl[i];
    for (int i = 0; i < nn; i++) ordB[p++] = nl[i];
    if ((st = ein_transpose(c, &x[0], &in[0], ordA, -1)) || (st = ein_transpose(c, &x[1], &in[1], ordB, -1))) return st;
    sym_expr one = sym_const(c->t, 1), da[IR_MAX_RANK], db[IR_MAX_RANK];
    sym_expr pm = one, pk = one, pkb = one, pn = one;
    for (int i = 0; i < nb; i++) da[i] = T(c, x[0])->dims[i], db[i] = T(c, x[1])->dims[i];
    for (int i = 0; i < nm; i++) pm = sym_mul(c->t, pm, T(c, x[0])->dims[nb + i]);
    for (int i = 0; i < nk; i++) pk = sym_mul(c->t, pk, T(c, x[0])->dims[nb + nm + i]);
    for (int i = 0; i < nk; i++) pkb = sym_mul(c->t, pkb, T(c, x[1])->dims[nb + i]);
    for (int i = 0; i < nn; i++) pn = sym_mul(c->t, pn, T(c, x[1])->dims[nb + nk + i]);
    da[nb] = pm, da[nb + 1] = pk, db[nb] = pkb, db[nb + 1] = pn;
    if ((st = ein_reshape(c, &x[0], da, (uint32_t)nb + 2)) || (st = ein_reshape(c, &x[1], db, (uint32_t)nb + 2)) ||
        (st = fe_emit_binary(c, IR_OP_MATMUL, x[0], x[1], -1, &out)))
        return st;
    /* [batch.., M.., N..] with the matmul's own (broadcast) batch dims, then the output's order */
    sym_expr dr[IR_MAX_RANK];
    ein_term r = {.n = 0};
    for (int i = 0; i < nb; i++) dr[r.n] = T(c, out)->dims[i], r.lab[r.n++] = bl[i];
    for (int i = 0; i < nm; i++) dr[r.n] = size[ml[i]], r.lab[r.n++] = ml[i];
    for (int i = 0; i < nn; i++) dr[r.n] = size[nl[i]], r.lab[r.n++] = nl[i];
    if ((st = ein_reshape(c, &out, dr, (uint32_t)r.n))) return st;
    return ein_transpose(c, &out, &r, o.lab, 0);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_einsum[] = {
    {"Einsum", h_einsum},
};
const uint32_t fe_onnx_n_ops_einsum = sizeof fe_onnx_ops_einsum / sizeof fe_onnx_ops_einsum[0];
