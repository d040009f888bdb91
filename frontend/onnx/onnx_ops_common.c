/* Helpers the ONNX op families share (frontend/onnx/onnx_ops.h): input-count checks, symbolic
 * element values of small tensors (set_values, small_numel) and the build-time folding of ops the
 * core shape rules do not evaluate (fe_fold: comparisons, Where, Not, bool<->int Cast, decided by
 * symshape's proofs, so PyTorch's "Where(Equal(shape, -1), 1, shape)" idiom before Expand stays
 * symbolic), and the one-node emitters the decompositions are written with (unary, binary, cast,
 * scalar, reshape, reduce). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

symc_status fe_need_inputs(fe_ctx *c, uint32_t lo, uint32_t hi) {
    uint32_t n = fe_n_in(c);
    if (n < lo || n > hi) {
        if (lo == hi) return fe_fail(c, SYMC_ERR_FORMAT, "has %u inputs, needs %u", n, lo);
        return fe_fail(c, SYMC_ERR_FORMAT, "has %u inputs, needs %u to %u", n, lo, hi);
    }
    return SYMC_OK;
}

symc_status fe_set_values(fe_ctx *c, uint32_t t, const sym_expr *v, uint32_t n) {
    sym_expr *copy = ir_alloc(c->m, (n ? n : 1) * sizeof *copy);
    if (!copy) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    if (n) memcpy(copy, v, n * sizeof *v);
    T(c, t)->value = copy;
    T(c, t)->n_value = n;
    return SYMC_OK;
}

/* Element count of a tensor with a small static shape, else -1. */
int64_t fe_small_numel(fe_ctx *c, uint32_t t) {
    const ir_tensor *x = T(c, t);
    int64_t n = 1, v;
    for (int d = 0; d < x->rank; d++) {
        if (!sym_is_const(c->t, x->dims[d], &v) || v < 0 || (v && n > MAXV / v)) return -1; /* no overflow */
        n *= v;
        if (n > MAXV) return -1;
    }
    return n;
}

/* ---- build-time values the core rules do not compute ------------------------------------- */

static int is_intlike(symc_dtype d) { return d == SYMC_I64 || d == SYMC_I32 || d == SYMC_BOOL; }

/* Comparisons, Where, Not, And, Or, bool<->int Cast and Expand of known values, with
 * NumPy broadcasting of one-element operands. Leaves `out` without values
 * whenever a result is not decided. */
symc_status fe_fold(fe_ctx *c, const char *op, const uint32_t *in, uint32_t n_in, uint32_t out) {
    int64_t n = fe_small_numel(c, out);
    if (n < 0 || T(c, out)->value || !is_intlike(T(c, out)->dtype)) return SYMC_OK;
    for (uint32_t i = 0; i < n_in; i++) {
        const ir_tensor *x = T(c, in[i]);
        if (!strcmp(op, "Where") && i > 0 && !is_intlike(x->dtype)) return SYMC_OK;
        if (!x->value || (x->n_value != 1 && (int64_t)x->n_value != n)) return SYMC_OK;
    }
    sym_expr v[MAXV], one = sym_const(c->t, 1), zero = sym_const(c->t, 0);
    for (int64_t i = 0; i < n; i++) {
        sym_expr a[3];
        for (uint32_t k = 0; k < n_in; k++) {
            const ir_tensor *x = T(c, in[k]);
            a[k] = x->value[x->n_value == 1 ? 0 : i];
        }
        sym_tri r;
        if (!strcmp(op, "Equal")) r = sym_prove_eq(c->t, a[0], a[1]);
        else if (!strcmp(op, "Less")) r = sym_prove_lt(c->t, a[0], a[1]);
        else if (!strcmp(op, "Greater")) r = sym_prove_lt(c->t, a[1], a[0]);
        else if (!strcmp(op, "LessOrEqual")) r = sym_prove_le(c->t, a[0], a[1]);
        else if (!strcmp(op, "GreaterOrEqual")) r = sym_prove_le(c->t, a[1], a[0]);
        else if (!strcmp(op, "Not")) r = sym_prove_eq(c->t, a[0], zero);
        else if (!strcmp(op, "And") || !strcmp(op, "Or")) {
            /* bool values are the constants 0 and 1 */
            int64_t p, q;
            if (!sym_is_const(c->t, a[0], &p) || !sym_is_const(c->t, a[1], &q)) return SYMC_OK;
            r = (!strcmp(op, "And") ? p && q : p || q) ? SYM_TRUE : SYM_FALSE;
        } else if (!strcmp(op, "Cast")) {
            /* to bool: != 0; to an integer: the value itself */
            if (T(c, out)->dtype != SYMC_BOOL) {
                v[i] = a[0];
                continue;
            }
            r = sym_prove_ne(c->t, a[0], zero);
        } else if (!strcmp(op, "Where")) {
            int64_t cond;
            if (!sym_is_const(c->t, a[0], &cond)) return SYMC_OK;
            v[i] = cond ? a[1] : a[2];
            continue;
        } else if (!strcmp(op, "Expand")) {
            if (T(c, in[0])->n_value != 1) return SYMC_OK; /* only a broadcast scalar */
            v[i] = a[0];
            continue;
        } else {
            return SYMC_OK;
        }
        if (r == SYM_UNKNOWN) return SYMC_OK;
        v[i] = r == SYM_TRUE ? one : zero;
    }
    return fe_set_values(c, out, v, (uint32_t)n);
}

symc_status fe_emit_unary_attrs(fe_ctx *c, ir_op op, const ir_attr *a, uint32_t na) {
    uint32_t x, out;
    symc_status st = fe_need_inputs(c, 1, 1);
    if (!st) st = fe_in(c, 0, &x);
    return st ? st : fe_emit1(c, op, &x, 1, a, na, 0, &out);
}
/* Small emitters for the decompositions below: an intermediate tensor
 * (out_k -1) or ONNX output out_k. */
symc_status fe_emit_bin(fe_ctx *c, ir_op op, uint32_t a, uint32_t b, int out_k, uint32_t *out) {
    uint32_t in[2] = {a, b};
    return fe_emit1(c, op, in, 2, NULL, 0, out_k, out);
}
symc_status fe_emit_un(fe_ctx *c, ir_op op, uint32_t x, int out_k, uint32_t *out) {
    return fe_emit1(c, op, &x, 1, NULL, 0, out_k, out);
}
symc_status fe_emit_cast(fe_ctx *c, uint32_t x, symc_dtype dt, int out_k, uint32_t *out) {
    if (T(c, x)->dtype == dt && out_k < 0) {
        *out = x;
        return SYMC_OK;
    }
    ir_attr a = symc_attr_dtype("to", dt);
    return fe_emit1(c, IR_OP_CAST, &x, 1, &a, 1, out_k, out);
}
/* A scalar constant of dtype dt (f32, f64, f16 or bf16 are what the
 * decompositions need: the value is rounded once, as ONNX's own function
 * bodies do with CastLike). */
symc_status fe_emit_scalar(fe_ctx *c, symc_dtype dt, double v, uint32_t *out) {
    uint8_t buf[8];
    symc_dtype_store(buf, dt, 0, v);
    return fe_const(c, dt, 0, NULL, buf, -1, out);
}
symc_status fe_emit_reshape(fe_ctx *c, uint32_t x, const sym_expr *dims, uint32_t n, int out_k, uint32_t *out) {
    ir_attr a = symc_attr_dims("shape", dims, n);
    return fe_emit1(c, IR_OP_RESHAPE, &x, 1, &a, 1, out_k, out);
}
/* op over the axes (keepdims `keep`), or the identity for a noop */
symc_status fe_emit_reduce(fe_ctx *c, ir_op op, uint32_t x, const red_axes *ra, int keep, int out_k, uint32_t *out) {
    if (ra->noop) return fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, out_k, out);
    ir_attr a[2] = {symc_attr_int("keepdims", keep), symc_attr_ints("axes", ra->axes, ra->n)};
    return fe_emit1(c, op, &x, 1, a, ra->n ? 2 : 1, out_k, out);
}
symc_status fe_emit_unary(fe_ctx *c, ir_op op, uint32_t x, int out_k, uint32_t *out) {
    return fe_emit1(c, op, &x, 1, NULL, 0, out_k, out);
}
symc_status fe_emit_binary(fe_ctx *c, ir_op op, uint32_t a, uint32_t b, int out_k, uint32_t *out) {
    uint32_t in[2] = {a, b};
    return fe_emit1(c, op, in, 2, NULL, 0, out_k, out);
}
symc_status fe_need_float(fe_ctx *c, uint32_t x) {
    symc_dtype dt = T(c, x)->dtype;
    if (!ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; only float inputs are supported", T(c, x)->name,
                       symc_dtype_name(dt));
    return SYMC_OK;
}
/* A scalar (or one-element) integer input known at build time, as an
 * expression (a constant or symbolic, e.g. read from a shape). */
symc_status fe_scalar_value(fe_ctx *c, uint32_t k, const char *role, sym_expr *e) {
    uint32_t t, n;
    const sym_expr *v;
    symc_status st = fe_in(c, k, &t);
    if (!st && ir_dtype_is_float(T(c, t)->dtype)) {
        double d;
        if ((st = fe_const_scalar(c, t, k, role, &d))) return st;
        if (d != floor(d) || fabs(d) > 9e15)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s is %g; it must be a whole number", role, d);
        *e = sym_const(c->t, (int64_t)d);
        return SYMC_OK;
    }
    if (!st) st = fe_values(c, t, k, role, &v, &n);
    if (!st && n != 1) return fe_fail(c, SYMC_ERR_FORMAT, "input %u (%s) has %u elements, must be one", k, role, n);
    if (!st) *e = v[0];
    return st;
}
symc_status fe_norm_axis_of(fe_ctx *c, int64_t axis, int32_t r, int32_t *out) {
    int64_t v;
    if (!ir_axis_norm(axis, r, &v))
        return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range for rank %d", axis, (int)r);
    *out = (int32_t)v;
    return SYMC_OK;
}
