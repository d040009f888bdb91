/* Helpers every reference kernel uses: element access, errors, attribute
 * lookup, and shape arithmetic.
 *
 * Elements are loaded and stored through the element types' one table
 * (common/dtype_traits.h, common/dtype.c), which holds the exact conversions:
 * f16/bf16 rounded once from an f64, integers too wide for f64 reduced with a
 * sticky bit first so they never round twice, float-to-integer conversion
 * truncated and saturated with NaN -> 0 instead of C's undefined behaviour,
 * and narrower integer stores wrapped like two's complement through uint64
 * arithmetic. The accessors (ref_kernels_internal.h) are calls through it;
 * this file keeps the helpers around them. */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

int rt_ref_mul_ok(int64_t a, int64_t b, int64_t *out) {
    if (a < 0 || b < 0) return 0;
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

int64_t rt_ref_numel(const rt_ref_tensor *t) {
    if (!t || t->rank < 0 || t->rank > RT_REF_MAX_RANK) return -1;
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++)
        if (!rt_ref_mul_ok(n, t->dims[d], &n)) return -1;
    return n;
}

/* ---- element access -------------------------------------------------------------- */
int64_t rt_ref_f64_to_i64_sat(double v) {
    int64_t x = 0;
    symc_dtype_store(&x, SYMC_I64, 0, v); /* truncates toward zero, saturates, NaN -> 0 */
    return x;
}

void rt_ref_copy_elem(rt_ref_tensor *dst, int64_t di, const rt_ref_tensor *src, int64_t si) {
    size_t sz = symc_dtype_size(src->dtype);
    memcpy((char *)dst->data + (size_t)di * sz, (const char *)src->data + (size_t)si * sz, sz);
}

/* ---- errors ------------------------------------------------------------------------ */
symc_status rt_ref_fail(rt_ctx *c, symc_status code, const char *fmt, ...) {
    char what[SYMC_ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return symc_error_setf(c->err, code, "node '%s' (%s): %s", c->node, c->opname, what);
}

const char *rt_ref_shape_str(char *buf, size_t cap, int32_t rank, const int64_t *dims) {
    size_t len = 0;
    int n = snprintf(buf, cap, "[");
    if (n > 0) len = (size_t)n;
    for (int32_t d = 0; d < rank && len < cap; d++) {
        n = snprintf(buf + len, cap - len, "%s%lld", d ? ", " : "", (long long)dims[d]);
        if (n < 0) break;
        len += (size_t)n;
    }
    if (len < cap) snprintf(buf + len, cap - len, "]");
    return buf;
}

symc_status rt_ref_check_out(rt_ctx *c, uint32_t k, symc_dtype dt, int32_t rank, const int64_t *dims) {
    const rt_ref_tensor *o = &c->out[k];
    int same = o->rank == rank;
    for (int32_t d = 0; same && d < rank; d++) same = o->dims[d] == dims[d];
    if (same && o->dtype == dt) return SYMC_OK;
    char want[160], got[160];
    rt_ref_shape_str(want, sizeof want, rank, dims);
    rt_ref_shape_str(got, sizeof got, o->rank, o->dims);
    return rt_ref_fail(c, SYMC_ERR_INTERNAL,
                       "output %u: the caller's %s%s disagrees with %s%s computed from the inputs "
                       "(shape inference and the reference kernel differ)",
                       k, symc_dtype_name(o->dtype), got, symc_dtype_name(dt), want);
}

symc_status rt_ref_produced_out(rt_ctx *c, uint32_t k, symc_dtype dt, int32_t rank, const int64_t *dims, int32_t dim,
                                int64_t count) {
    rt_ref_tensor *o = &c->out[k];
    int64_t want[RT_REF_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) want[d] = d == dim ? (o->rank == rank ? o->dims[dim] : count) : dims[d];
    symc_status s = rt_ref_check_out(c, k, dt, rank, want);
    if (s) return s;
    if (count > o->dims[dim])
        return rt_ref_fail(c, SYMC_ERR_RANGE,
                           "output %u has %lld entries along dim %d, more than the %lld its memory was planned for "
                           "(the size's bound)",
                           k, (long long)count, (int)dim, (long long)o->dims[dim]);
    o->dims[dim] = count;
    return SYMC_OK;
}

symc_status rt_ref_check_in_dtype(rt_ctx *c, uint32_t k, symc_dtype dt) {
    if (c->in[k].dtype == dt) return SYMC_OK;
    return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input %u is %s but must be %s (as input 0)", k,
                       symc_dtype_name(c->in[k].dtype), symc_dtype_name(dt));
}

symc_status rt_ref_check_in_float(rt_ctx *c, uint32_t k, const char *role) {
    if (rt_is_float(c->in[k].dtype)) return SYMC_OK;
    return rt_ref_fail(c, SYMC_ERR_UNSUPPORTED, "%s (input %u) is %s; only float dtypes are supported", role, k,
                       symc_dtype_name(c->in[k].dtype));
}

/* ---- attributes ----------------------------------------------------------------------- */
const symc_attr *rt_ref_attr_find(const rt_ctx *c, const char *name) {
    for (uint32_t i = 0; i < c->n_attrs; i++)
        if (!strcmp(c->attrs[i].name, name)) return &c->attrs[i];
    return NULL;
}

static symc_status missing(rt_ctx *c, const char *name) {
    return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "missing required attribute '%s'", name);
}

static symc_status wrong_kind(rt_ctx *c, const symc_attr *a, const char *want) {
    if (a->kind == SYMC_ATTR_DIMS)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "attribute '%s' is still symbolic dims; evaluate it to ints before "
                           "running the reference kernel",
                           a->name);
    static const char *const kinds[] = {
        [SYMC_ATTR_INT] = "int",       [SYMC_ATTR_FLOAT] = "float", [SYMC_ATTR_INTS] = "ints",
        [SYMC_ATTR_FLOATS] = "floats", [SYMC_ATTR_STR] = "str",     [SYMC_ATTR_DIMS] = "dims",
        [SYMC_ATTR_DTYPE] = "dtype",
    };
    const char *kind = (unsigned)a->kind < sizeof kinds / sizeof kinds[0] ? kinds[a->kind] : "?";
    return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute '%s' is %s, must be %s", a->name, kind, want);
}

symc_status rt_ref_attr_int(rt_ctx *c, const char *name, int required, int64_t dflt, int64_t *out) {
    const symc_attr *a = rt_ref_attr_find(c, name);
    if (!a) {
        if (required) return missing(c, name);
        *out = dflt;
        return SYMC_OK;
    }
    if (a->kind != SYMC_ATTR_INT) return wrong_kind(c, a, "int");
    *out = a->i;
    return SYMC_OK;
}

symc_status rt_ref_attr_float(rt_ctx *c, const char *name, int required, double dflt, double *out) {
    const symc_attr *a = rt_ref_attr_find(c, name);
    if (!a) {
        if (required) return missing(c, name);
        *out = dflt;
        return SYMC_OK;
    }
    if (a->kind == SYMC_ATTR_FLOAT) *out = a->f;
    else if (a->kind == SYMC_ATTR_INT) *out = (double)a->i; /* an integral literal is fine */
    else return wrong_kind(c, a, "float");
    return SYMC_OK;
}

symc_status rt_ref_attr_ints(rt_ctx *c, const char *name, int required, const int64_t **v, uint32_t *n, int *present) {
    const symc_attr *a = rt_ref_attr_find(c, name);
    *v = NULL;
    *n = 0;
    if (present) *present = a != NULL;
    if (!a) return required ? missing(c, name) : SYMC_OK;
    if (a->kind != SYMC_ATTR_INTS) return wrong_kind(c, a, "ints");
    if (a->n && !a->ints) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute '%s' has no data", name);
    *v = a->ints;
    *n = a->n;
    return SYMC_OK;
}

symc_status rt_ref_attr_ints_n(rt_ctx *c, const char *name, uint32_t n, const int64_t *dflt, int64_t *out) {
    const int64_t *v;
    uint32_t got;
    int present;
    symc_status s = rt_ref_attr_ints(c, name, dflt == NULL, &v, &got, &present);
    if (s) return s;
    if (!present) {
        memcpy(out, dflt, n * sizeof *out);
        return SYMC_OK;
    }
    if (got != n)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute '%s' has %u entries, must have %u", name, got, n);
    memcpy(out, v, n * sizeof *out);
    return SYMC_OK;
}

symc_status rt_ref_attr_str(rt_ctx *c, const char *name, int required, const char *dflt, const char **out) {
    const symc_attr *a = rt_ref_attr_find(c, name);
    if (!a) {
        if (required) return missing(c, name);
        *out = dflt;
        return SYMC_OK;
    }
    if (a->kind != SYMC_ATTR_STR) return wrong_kind(c, a, "str");
    if (!a->s) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute '%s' has no data", name);
    *out = a->s;
    return SYMC_OK;
}

symc_status rt_ref_attr_dtype(rt_ctx *c, const char *name, symc_dtype *out) {
    const symc_attr *a = rt_ref_attr_find(c, name);
    if (!a) return missing(c, name);
    if (a->kind != SYMC_ATTR_DTYPE) return wrong_kind(c, a, "dtype");
    if (a->i < 0 || a->i >= SYMC_DTYPE_COUNT)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute '%s' = %lld is not a dtype", name, (long long)a->i);
    *out = (symc_dtype)a->i;
    return SYMC_OK;
}

symc_status rt_ref_norm_axis(rt_ctx *c, int64_t axis, int32_t rank, const char *what, int32_t *out) {
    if (axis < -(int64_t)rank || axis >= rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s %lld is out of range [%d, %d] for rank %d", what,
                           (long long)axis, -(int)rank, (int)rank - 1, (int)rank);
    *out = (int32_t)(axis < 0 ? axis + rank : axis);
    return SYMC_OK;
}

/* ---- shapes ------------------------------------------------------------------------------ */
int64_t rt_ref_numel_dims(int32_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    return n;
}

void rt_ref_strides(int32_t rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        strides[d] = s;
        s *= dims[d];
    }
}

void rt_ref_unravel(int64_t i, int32_t rank, const int64_t *dims, int64_t *coord) {
    for (int32_t d = rank - 1; d >= 0; d--) {
        coord[d] = dims[d] ? i % dims[d] : 0;
        i = dims[d] ? i / dims[d] : 0;
    }
}

symc_status rt_ref_broadcast_shape(rt_ctx *c, const rt_ref_tensor *const *ts, uint32_t n, int32_t *rank,
                                   int64_t *dims) {
    int32_t r = 0;
    for (uint32_t k = 0; k < n; k++)
        if (ts[k]->rank > r) r = ts[k]->rank;
    for (int32_t d = 0; d < r; d++) {
        int64_t size = 1;
        for (uint32_t k = 0; k < n; k++) {
            int32_t td = d - (r - ts[k]->rank);
            if (td < 0) continue;
            int64_t s = ts[k]->dims[td];
            if (s == size || s == 1) continue;
            if (size != 1) {
                char all[400], one[160];
                size_t len = 0;
                all[0] = '\0';
                for (uint32_t j = 0; j < n && len < sizeof all; j++) {
                    int w = snprintf(all + len, sizeof all - len, "%s%s", j ? " and " : "",
                                     rt_ref_shape_str(one, sizeof one, ts[j]->rank, ts[j]->dims));
                    if (w < 0) break;
                    len += (size_t)w;
                }
                return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                                   "shapes %s do not broadcast (axis %d of the result: %lld vs %lld)", all, (int)d,
                                   (long long)size, (long long)s);
            }
            size = s;
        }
        dims[d] = size;
    }
    *rank = r;
    return SYMC_OK;
}

void rt_ref_bcast_strides(const rt_ref_tensor *t, int32_t out_rank, int64_t *strides) {
    int64_t own[RT_REF_MAX_RANK];
    rt_ref_strides(t->rank, t->dims, own);
    for (int32_t d = 0; d < out_rank; d++) {
        int32_t td = d - (out_rank - t->rank);
        strides[d] = (td < 0 || t->dims[td] == 1) ? 0 : own[td];
    }
}
