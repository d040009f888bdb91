/* Index-computing ops added for ONNX conformance: topk, cumsum, gather_nd,
 * scatter_nd, scatter_elements; and nonzero, whose output size is known only
 * once it has counted (rt_ref_produced_out: the caller planned memory for
 * the bound, numel(x), and reads the real count back from the output dims).
 *
 * Like the other reference kernels these never allocate. topk writes its
 * output (the indices) in rank order and finds the next one by a scan over
 * the row for the best element after the previous pick in one strict total
 * order (value, then the lower index first), so ties are broken by index and
 * no scratch is needed: O(k n) a row, the plainest exact formulation. cumsum
 * accumulates in f64 (integers in int64, wrapping like the dtype). The
 * scatters copy the data, check every index before writing anything, then
 * apply the updates in the order of the indices (later ones win without a
 * reduction, as in the ONNX reference); gather_nd and the scatters wrap
 * negative indices and refuse anything else out of range, naming the index
 * and its position. */
#include <math.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

/* ---- topk ------------------------------------------------------------------------------- */
/* Compares elements a and b of x: -1, 0, 1; NaN beyond every number (integers
 * compared as integers, exact beyond 2^53). */
static int cmp_elems(const rt_ref_tensor *x, int64_t a, int64_t b) {
    if (!rt_is_float(x->dtype)) {
        int64_t va = rt_ld_i(x, a), vb = rt_ld_i(x, b);
        return (va > vb) - (va < vb);
    }
    double va = rt_ld_f(x, a), vb = rt_ld_f(x, b);
    int na = isnan(va), nb = isnan(vb);
    if (na || nb) return na - nb;
    return (va > vb) - (va < vb);
}

/* element j (at offset oj) goes before element i (at oi) in the output: the
 * larger (largest) or smaller value first, equal values by the lower index */
static int topk_before(const rt_ref_tensor *x, int64_t oj, int64_t j, int64_t oi, int64_t i, int largest) {
    int cm = cmp_elems(x, oj, oi);
    if (cm) return largest ? cm > 0 : cm < 0;
    return j < i;
}

symc_status rt_ref_k_topk(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *kv;
    uint32_t nk;
    int64_t axis_attr, largest;
    int32_t axis;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "k", 1, &kv, &nk, NULL))) return s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if ((s = rt_ref_attr_int(c, "largest", 0, 1, &largest))) return s;
    if (nk != 1) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attribute 'k' has %u entries, needs 1", nk);
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 is a scalar; topk needs an axis");
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    int64_t k = kv[0], n = x->dims[axis];
    if (k < 0 || k > n)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "k = %lld is outside [0, %lld] (the size of axis %d)", (long long)k,
                           (long long)n, (int)axis);
    int64_t od[RT_REF_MAX_RANK];
    memcpy(od, x->dims, sizeof od);
    od[axis] = k;
    if ((s = rt_ref_check_out(c, 0, SYMC_I64, x->rank, od))) return s;
    int64_t outer = rt_ref_numel_dims(axis, x->dims), inner = rt_ref_numel_dims(x->rank - axis - 1, x->dims + axis + 1);
    int lg = largest != 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            int64_t base = o * n * inner + i, obase = o * k * inner + i, prev = -1;
            for (int64_t r = 0; r < k; r++) {
                int64_t best = -1;
                for (int64_t j = 0; j < n; j++) {
                    int64_t oj = base + j * inner;
                    if (prev >= 0 && !topk_before(x, base + prev * inner, prev, oj, j, lg)) continue; /* taken */
                    if (best < 0 || topk_before(x, oj, j, base + best * inner, best, lg)) best = j;
                }
                rt_st_i(&c->out[0], obase + r * inner, best);
                prev = best;
            }
        }
    return SYMC_OK;
}

/* ---- cumsum ------------------------------------------------------------------------------- */
symc_status rt_ref_k_cumsum(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t axis_attr, exclusive, reverse;
    int32_t axis;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if ((s = rt_ref_attr_int(c, "exclusive", 0, 0, &exclusive))) return s;
    if ((s = rt_ref_attr_int(c, "reverse", 0, 0, &reverse))) return s;
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 is a scalar; cumsum needs an axis");
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims))) return s;
    int64_t outer = rt_ref_numel_dims(axis, x->dims), n = x->dims[axis];
    int64_t inner = rt_ref_numel_dims(x->rank - axis - 1, x->dims + axis + 1);
    int fl = rt_is_float(x->dtype);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double af = 0;
            int64_t ai = 0;
            for (int64_t step = 0; step < n; step++) {
                int64_t j = reverse ? n - 1 - step : step, at = o * n * inner + j * inner + i;
                double vf = fl ? rt_ld_f(x, at) : 0;
                int64_t vi = fl ? 0 : rt_ld_i(x, at);
                if (!exclusive) af += vf, ai = (int64_t)((uint64_t)ai + (uint64_t)vi);
                if (fl) rt_st_f(&c->out[0], at, af);
                else rt_st_i(&c->out[0], at, ai);
                if (exclusive) af += vf, ai = (int64_t)((uint64_t)ai + (uint64_t)vi);
            }
        }
    return SYMC_OK;
}

/* ---- gather_nd / scatter_nd ----------------------------------------------------------------- */
/* The shapes of gather_nd and scatter_nd: data [B.., D..], indices [B.., Q.., m]
 * with m <= rank - b; an index tuple addresses a slice [D_{b+m}..] of data. */
typedef struct nd_shape {
    int32_t b, m;                     /* batch dims, index tuple length */
    int64_t batch;                    /* product of the batch dims */
    int64_t tuples;                   /* index tuples a batch */
    int64_t slice;                    /* elements of one addressed slice */
    int64_t dstride[RT_REF_MAX_RANK]; /* data strides */
} nd_shape;

static symc_status nd_check(rt_ctx *c, int64_t b, nd_shape *g) {
    const rt_ref_tensor *x = &c->in[0], *idx = &c->in[1];
    char t1[160], t2[160];
    if (idx->dtype != SYMC_I64 && idx->dtype != SYMC_I32)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "indices (input 1) are %s, must be i32 or i64",
                           symc_dtype_name(idx->dtype));
    if (idx->rank < 1 || x->rank < 1 || b < 0 || b >= idx->rank || b >= x->rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "indices %s and data %s do not fit batch_dims = %lld",
                           rt_ref_shape_str(t1, sizeof t1, idx->rank, idx->dims),
                           rt_ref_shape_str(t2, sizeof t2, x->rank, x->dims), (long long)b);
    g->b = (int32_t)b;
    int64_t m = idx->dims[idx->rank - 1];
    if (m < 1 || m > x->rank - b)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "the last dim of indices %s is %lld; it must be in [1, %lld]",
                           rt_ref_shape_str(t1, sizeof t1, idx->rank, idx->dims), (long long)m,
                           (long long)(x->rank - b));
    g->m = (int32_t)m;
    for (int32_t d = 0; d < b; d++)
        if (idx->dims[d] != x->dims[d])
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "batch dim %d of indices %s and data %s differ", (int)d,
                               rt_ref_shape_str(t1, sizeof t1, idx->rank, idx->dims),
                               rt_ref_shape_str(t2, sizeof t2, x->rank, x->dims));
    g->batch = rt_ref_numel_dims(g->b, x->dims);
    g->tuples = rt_ref_numel_dims(idx->rank - 1 - g->b, idx->dims + g->b);
    g->slice = rt_ref_numel_dims(x->rank - g->b - g->m, x->dims + g->b + g->m);
    rt_ref_strides(x->rank, x->dims, g->dstride);
    return SYMC_OK;
}

/* Offset in data of the slice index tuple t of batch bi addresses; every
 * entry checked against its dim (negative ones wrap). */
static symc_status nd_offset(rt_ctx *c, const nd_shape *g, int64_t bi, int64_t t, int64_t *off) {
    const rt_ref_tensor *x = &c->in[0], *idx = &c->in[1];
    int64_t base = (bi * g->tuples + t) * g->m, o = bi * (g->b ? g->dstride[g->b - 1] : 0);
    for (int32_t j = 0; j < g->m; j++) {
        int64_t v = rt_ld_i(idx, base + j), dim = x->dims[g->b + j];
        if (v < -dim || v >= dim)
            return rt_ref_fail(
                c, SYMC_ERR_RANGE, "index %lld (element %lld of indices) is out of range [%lld, %lld] for data dim %d",
                (long long)v, (long long)(base + j), (long long)-dim, (long long)dim - 1, (int)(g->b + j));
        o += (v < 0 ? v + dim : v) * g->dstride[g->b + j];
    }
    *off = o;
    return SYMC_OK;
}

symc_status rt_ref_k_gather_nd(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *idx = &c->in[1];
    int64_t b;
    nd_shape g;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "batch_dims", 0, 0, &b))) return s;
    if ((s = nd_check(c, b, &g))) return s;
    int64_t od[RT_REF_MAX_RANK];
    int32_t orank = 0;
    for (int32_t d = 0; d < idx->rank - 1; d++) od[orank++] = idx->dims[d];
    for (int32_t d = g.b + g.m; d < x->rank; d++) od[orank++] = x->dims[d];
    if (orank > RT_REF_MAX_RANK) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "output rank %d is too large", (int)orank);
    if ((s = rt_ref_check_out(c, 0, x->dtype, orank, od))) return s;
    for (int64_t bi = 0; bi < g.batch; bi++)
        for (int64_t t = 0; t < g.tuples; t++) {
            int64_t off;
            if ((s = nd_offset(c, &g, bi, t, &off))) return s;
            for (int64_t e = 0; e < g.slice; e++)
                rt_ref_copy_elem(&c->out[0], (bi * g.tuples + t) * g.slice + e, x, off + e);
        }
    return SYMC_OK;
}

typedef enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN } red_mode;

static symc_status read_reduction(rt_ctx *c, red_mode *r) {
    const char *s;
    symc_status st = rt_ref_attr_str(c, "reduction", 0, "none", &s);
    if (st) return st;
    if (!strcmp(s, "none")) *r = RED_NONE;
    else if (!strcmp(s, "add")) *r = RED_ADD;
    else if (!strcmp(s, "mul")) *r = RED_MUL;
    else if (!strcmp(s, "max")) *r = RED_MAX;
    else if (!strcmp(s, "min")) *r = RED_MIN;
    else return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "reduction '%s' is not none, add, mul, max or min", s);
    return SYMC_OK;
}

/* out[o] = out[o] (reduction) u[ui] */
static void combine(rt_ref_tensor *out, int64_t o, const rt_ref_tensor *u, int64_t ui, red_mode r) {
    if (r == RED_NONE) {
        rt_ref_copy_elem(out, o, u, ui);
    } else if (rt_is_float(out->dtype)) {
        double a = rt_ld_f(out, o), b = rt_ld_f(u, ui);
        double v = r == RED_ADD ? a + b : r == RED_MUL ? a * b : r == RED_MAX ? fmax(a, b) : fmin(a, b);
        if (r >= RED_MAX && (isnan(a) || isnan(b))) v = NAN;
        rt_st_f(out, o, v);
    } else {
        int64_t a = rt_ld_i(out, o), b = rt_ld_i(u, ui);
        int64_t v = r == RED_ADD ? (int64_t)((uint64_t)a + (uint64_t)b)
            : r == RED_MUL       ? (int64_t)((uint64_t)a * (uint64_t)b)
            : r == RED_MAX       ? (a > b ? a : b)
                                 : (a < b ? a : b);
        rt_st_i(out, o, v);
    }
}

static symc_status check_updates(rt_ctx *c, int32_t rank, const int64_t *dims) {
    const rt_ref_tensor *u = &c->in[2];
    char t1[160], t2[160];
    if (u->dtype != c->in[0].dtype)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "updates (input 2) are %s but data is %s",
                           symc_dtype_name(u->dtype), symc_dtype_name(c->in[0].dtype));
    int ok = u->rank == rank;
    for (int32_t d = 0; ok && d < rank; d++) ok = u->dims[d] == dims[d];
    if (!ok)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "updates have shape %s, must be %s",
                           rt_ref_shape_str(t1, sizeof t1, u->rank, u->dims),
                           rt_ref_shape_str(t2, sizeof t2, rank, dims));
    return SYMC_OK;
}

static void copy_data(rt_ctx *c) {
    int64_t n = rt_ref_numel_dims(c->in[0].rank, c->in[0].dims);
    for (int64_t i = 0; i < n; i++) rt_ref_copy_elem(&c->out[0], i, &c->in[0], i);
}

symc_status rt_ref_k_scatter_nd(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *idx = &c->in[1];
    nd_shape g;
    red_mode r;
    symc_status s;
    if ((s = read_reduction(c, &r))) return s;
    if ((s = nd_check(c, 0, &g))) return s;
    int64_t ud[RT_REF_MAX_RANK];
    int32_t urank = 0;
    for (int32_t d = 0; d < idx->rank - 1; d++) ud[urank++] = idx->dims[d];
    for (int32_t d = g.m; d < x->rank; d++) ud[urank++] = x->dims[d];
    if (urank > RT_REF_MAX_RANK)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "updates rank %d is too large", (int)urank);
    if ((s = check_updates(c, urank, ud))) return s;
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims))) return s;
    int64_t off;
    for (int64_t t = 0; t < g.tuples; t++) /* every index checked before anything is written */
        if ((s = nd_offset(c, &g, 0, t, &off))) return s;
    copy_data(c);
    for (int64_t t = 0; t < g.tuples; t++) {
        nd_offset(c, &g, 0, t, &off);
        for (int64_t e = 0; e < g.slice; e++) combine(&c->out[0], off + e, &c->in[2], t * g.slice + e, r);
    }
    return SYMC_OK;
}

/* ---- scatter_elements ------------------------------------------------------------------------ */
symc_status rt_ref_k_scatter_elements(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *idx = &c->in[1];
    int64_t axis_attr;
    int32_t axis;
    red_mode r;
    symc_status s;
    char t1[160], t2[160];
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if ((s = read_reduction(c, &r))) return s;
    if (idx->dtype != SYMC_I64 && idx->dtype != SYMC_I32)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "indices (input 1) are %s, must be i32 or i64",
                           symc_dtype_name(idx->dtype));
    if (x->rank == 0 || idx->rank != x->rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "indices %s and data %s must have the same rank >= 1",
                           rt_ref_shape_str(t1, sizeof t1, idx->rank, idx->dims),
                           rt_ref_shape_str(t2, sizeof t2, x->rank, x->dims));
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    for (int32_t d = 0; d < x->rank; d++)
        if (d != axis && idx->dims[d] > x->dims[d])
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "indices %s exceed data %s at axis %d",
                               rt_ref_shape_str(t1, sizeof t1, idx->rank, idx->dims),
                               rt_ref_shape_str(t2, sizeof t2, x->rank, x->dims), (int)d);
    if ((s = check_updates(c, idx->rank, idx->dims))) return s;
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims))) return s;
    int64_t dim = x->dims[axis], total = rt_ref_numel_dims(idx->rank, idx->dims);
    int64_t is[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    rt_ref_strides(x->rank, x->dims, is);
    for (int64_t q = 0; q < total; q++) {
        int64_t v = rt_ld_i(idx, q);
        if (v < -dim || v >= dim) {
            rt_ref_unravel(q, idx->rank, idx->dims, coord);
            return rt_ref_fail(c, SYMC_ERR_RANGE,
                               "index %lld at indices%s is out of range [%lld, %lld] for axis %d of size %lld",
                               (long long)v, rt_ref_shape_str(t1, sizeof t1, idx->rank, coord), (long long)-dim,
                               (long long)dim - 1, (int)axis, (long long)dim);
        }
    }
    copy_data(c);
    for (int64_t q = 0; q < total; q++, rt_next(idx->rank, idx->dims, coord)) {
        int64_t v = rt_ld_i(idx, q), off = 0;
        if (v < 0) v += dim;
        for (int32_t d = 0; d < x->rank; d++) off += (d == axis ? v : coord[d]) * is[d];
        combine(&c->out[0], off, &c->in[2], q, r);
    }
    return SYMC_OK;
}

/* ---- nonzero ------------------------------------------------------------------------------ */
/* Two passes: count, then write each non-zero element's coordinates as a
 * column of [rank, count], in row-major order (numpy's and ONNX's). NaN is
 * non-zero, as in numpy. */
static int elem_nonzero(const rt_ref_tensor *x, int64_t i) {
    if (rt_is_float(x->dtype)) return rt_ld_f(x, i) != 0.0;
    return rt_ld_i(x, i) != 0;
}

/* item: the value v of in[0]'s one element as a size: [v] holding 0, 1, ..., v-1 */
symc_status rt_ref_k_item(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    if (rt_ref_numel_dims(x->rank, x->dims) != 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 holds %lld elements; item reads one",
                           (long long)rt_ref_numel_dims(x->rank, x->dims));
    int64_t v = rt_ld_i(x, 0);
    if (v < 0)
        return rt_ref_fail(c, SYMC_ERR_RANGE, "the value read, %lld, is negative: a size must be >= 0", (long long)v);
    if (c->out[0].rank == 1 && v > c->out[0].dims[0])
        return rt_ref_fail(c, SYMC_ERR_RANGE, "the value read, %lld, is above its bound %lld", (long long)v,
                           (long long)c->out[0].dims[0]);
    int64_t dims[1] = {v};
    symc_status s = rt_ref_produced_out(c, 0, SYMC_I64, 1, dims, 0, v);
    if (s) return s;
    for (int64_t i = 0; i < v; i++) rt_st_i(&c->out[0], i, i);
    return SYMC_OK;
}

symc_status rt_ref_k_nonzero(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t n = rt_ref_numel_dims(x->rank, x->dims), count = 0;
    for (int64_t i = 0; i < n; i++) count += elem_nonzero(x, i);
    int64_t dims[2] = {x->rank, count};
    symc_status s = rt_ref_produced_out(c, 0, SYMC_I64, 2, dims, 1, count);
    if (s) return s;
    int64_t coord[RT_REF_MAX_RANK] = {0}, j = 0;
    for (int64_t i = 0; i < n; i++, rt_next(x->rank, x->dims, coord)) {
        if (!elem_nonzero(x, i)) continue;
        for (int32_t d = 0; d < x->rank; d++) rt_st_i(&c->out[0], d * count + j, coord[d]);
        j++;
    }
    return SYMC_OK;
}
