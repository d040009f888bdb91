/* Data movement: reshape, transpose, expand, concat, slice, gather, squeeze,
 * unsqueeze, flatten, split, pad, shape_of, and the ops added for the ONNX
 * importer: range, tile, trilu, gather_elements.
 *
 * These ops compute nothing, so every dtype is handled alike by copying
 * elements bit for bit (rt_ref_copy_elem); only pad's constant goes through a
 * conversion. The work is in the shape rules and index maps, which follow
 * ONNX: negative axes count from the end, slice clamps starts and ends to the
 * dim (and allows negative steps), gather wraps negative indices and refuses
 * anything else out of range before writing, expand broadcasts both ways,
 * pad's negative pads crop. Each kernel maps an output coordinate to an
 * input offset, the plainest formulation; view-like ops (reshape, squeeze,
 * unsqueeze, flatten) are a straight copy since row-major order is kept. */
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

static void copy_all(rt_ctx *c) {
    int64_t n = rt_ref_numel_dims(c->in[0].rank, c->in[0].dims);
    for (int64_t i = 0; i < n; i++) rt_ref_copy_elem(&c->out[0], i, &c->in[0], i);
}

/* ---- reshape ------------------------------------------------------------------------------ */
symc_status rt_ref_k_reshape(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *shape;
    uint32_t n;
    symc_status s;
    char t1[160], t2[160];
    if ((s = rt_ref_attr_ints(c, "shape", 1, &shape, &n, NULL))) return s;
    if (n > RT_REF_MAX_RANK)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'shape' has %u entries, more than rank %d", n, RT_REF_MAX_RANK);
    int64_t od[RT_REF_MAX_RANK], known = 1;
    int infer = -1;
    for (uint32_t d = 0; d < n; d++) {
        if (shape[d] == -1) {
            if (infer >= 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'shape' has more than one -1");
            infer = (int)d;
            continue;
        }
        if (shape[d] < 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'shape' entry %u is %lld; only -1 may be negative", d,
                               (long long)shape[d]);
        if (!rt_ref_mul_ok(known, shape[d], &known))
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'shape' %s has too many elements",
                               rt_ref_shape_str(t1, sizeof t1, (int32_t)n, shape));
        od[d] = shape[d];
    }
    int64_t numel = rt_ref_numel_dims(x->rank, x->dims);
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "cannot infer the -1 in 'shape' %s from input %s",
                               rt_ref_shape_str(t1, sizeof t1, (int32_t)n, shape),
                               rt_ref_shape_str(t2, sizeof t2, x->rank, x->dims));
        od[infer] = numel / known;
    } else if (known != numel) {
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input %s (%lld elements) cannot be reshaped to %s",
                           rt_ref_shape_str(t1, sizeof t1, x->rank, x->dims), (long long)numel,
                           rt_ref_shape_str(t2, sizeof t2, (int32_t)n, shape));
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, (int32_t)n, od))) return s;
    copy_all(c);
    return SYMC_OK;
}

/* ---- transpose -------------------------------------------------------------------------------- */
symc_status rt_ref_k_transpose(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *perm;
    uint32_t n;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "perm", 1, &perm, &n, NULL))) return s;
    int seen[RT_REF_MAX_RANK] = {0};
    int ok = n == (uint32_t)x->rank;
    for (uint32_t d = 0; ok && d < n; d++) {
        ok = perm[d] >= 0 && perm[d] < x->rank && !seen[perm[d]];
        if (ok) seen[perm[d]] = 1;
    }
    if (!ok) {
        char t[160];
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'perm' %s is not a permutation of 0..%d",
                           rt_ref_shape_str(t, sizeof t, (int32_t)(n < RT_REF_MAX_RANK ? n : RT_REF_MAX_RANK), perm),
                           (int)x->rank - 1);
    }
    int64_t od[RT_REF_MAX_RANK], is[RT_REF_MAX_RANK], st[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    rt_ref_strides(x->rank, x->dims, is);
    for (int32_t d = 0; d < x->rank; d++) {
        od[d] = x->dims[perm[d]];
        st[d] = is[perm[d]]; /* output axis d walks input axis perm[d] */
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;
    int64_t total = rt_ref_numel_dims(x->rank, od);
    for (int64_t i = 0; i < total; i++, rt_next(x->rank, od, coord))
        rt_ref_copy_elem(&c->out[0], i, x, rt_offset(x->rank, coord, st));
    return SYMC_OK;
}

/* ---- expand ------------------------------------------------------------------------------------ */
symc_status rt_ref_k_expand(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *shape;
    uint32_t n;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "shape", 1, &shape, &n, NULL))) return s;
    if (n > RT_REF_MAX_RANK)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'shape' has %u entries, more than rank %d", n, RT_REF_MAX_RANK);
    rt_ref_tensor target = {x->dtype, (int32_t)n, {0}, NULL};
    for (uint32_t d = 0; d < n; d++) {
        if (shape[d] < 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'shape' entry %u is %lld, must be >= 0", d,
                               (long long)shape[d]);
        target.dims[d] = shape[d];
    }
    /* ONNX Expand: the result is the broadcast of both shapes */
    const rt_ref_tensor *ts[2] = {x, &target};
    int32_t rank;
    int64_t od[RT_REF_MAX_RANK], st[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    if ((s = rt_ref_broadcast_shape(c, ts, 2, &rank, od))) return s;
    if ((s = rt_ref_check_out(c, 0, x->dtype, rank, od))) return s;
    rt_ref_bcast_strides(x, rank, st);
    int64_t total = rt_ref_numel_dims(rank, od);
    for (int64_t i = 0; i < total; i++, rt_next(rank, od, coord))
        rt_ref_copy_elem(&c->out[0], i, x, rt_offset(rank, coord, st));
    return SYMC_OK;
}

/* ---- concat ------------------------------------------------------------------------------------- */
symc_status rt_ref_k_concat(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t axis_attr;
    int32_t axis;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 is a scalar; concat needs rank >= 1");
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    int64_t od[RT_REF_MAX_RANK];
    memcpy(od, x->dims, sizeof od);
    od[axis] = 0;
    for (uint32_t k = 0; k < c->n_in; k++) {
        const rt_ref_tensor *t = &c->in[k];
        if ((s = rt_ref_check_in_dtype(c, k, x->dtype))) return s;
        int ok = t->rank == x->rank;
        for (int32_t d = 0; ok && d < x->rank; d++) ok = d == axis || t->dims[d] == x->dims[d];
        if (!ok) {
            char t1[160], t2[160];
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input %u %s does not match input 0 %s outside axis %d", k,
                               rt_ref_shape_str(t1, sizeof t1, t->rank, t->dims),
                               rt_ref_shape_str(t2, sizeof t2, x->rank, x->dims), (int)axis);
        }
        if (t->dims[axis] > INT64_MAX - od[axis])
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "the concatenated dim is too large");
        od[axis] += t->dims[axis];
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;
    /* per outer index, each input contributes one contiguous block */
    int64_t outer = rt_ref_numel_dims(axis, x->dims), inner = rt_ref_numel_dims(x->rank - axis - 1, x->dims + axis + 1);
    int64_t o = 0;
    for (int64_t i = 0; i < outer; i++)
        for (uint32_t k = 0; k < c->n_in; k++) {
            int64_t block = c->in[k].dims[axis] * inner;
            for (int64_t j = 0; j < block; j++) rt_ref_copy_elem(&c->out[0], o++, &c->in[k], i * block + j);
        }
    return SYMC_OK;
}

/* ---- slice ------------------------------------------------------------------------------------------ */
symc_status rt_ref_k_slice(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *starts, *ends, *axes, *steps;
    uint32_t ns, ne, na, nst;
    int has_axes, has_steps;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "starts", 1, &starts, &ns, NULL))) return s;
    if ((s = rt_ref_attr_ints(c, "ends", 1, &ends, &ne, NULL))) return s;
    if ((s = rt_ref_attr_ints(c, "axes", 0, &axes, &na, &has_axes))) return s;
    if ((s = rt_ref_attr_ints(c, "steps", 0, &steps, &nst, &has_steps))) return s;
    if (ne != ns || (has_axes && na != ns) || (has_steps && nst != ns))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "starts, ends, axes and steps must have the same length (%u, %u, %u, %u)", ns, ne,
                           has_axes ? na : ns, has_steps ? nst : ns);
    if (!has_axes && ns > (uint32_t)x->rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%u starts for an input of rank %d", ns, (int)x->rank);
    /* per input axis: first index, step, count (untouched axes: 0, 1, dim) */
    int64_t first[RT_REF_MAX_RANK], step[RT_REF_MAX_RANK], od[RT_REF_MAX_RANK];
    int done[RT_REF_MAX_RANK] = {0};
    for (int32_t d = 0; d < x->rank; d++) first[d] = 0, step[d] = 1, od[d] = x->dims[d];
    for (uint32_t k = 0; k < ns; k++) {
        int32_t a = (int32_t)k;
        if (has_axes && (s = rt_ref_norm_axis(c, axes[k], x->rank, "axis", &a))) return s;
        if (done[a]) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "axis %d is sliced twice", (int)a);
        done[a] = 1;
        int64_t st = has_steps ? steps[k] : 1, dim = x->dims[a];
        if (st == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "step 0 for axis %d", (int)a);
        int64_t b = starts[k], e = ends[k];
        if (b < 0) b += dim; /* no overflow: b < 0 <= dim */
        if (e < 0) e += dim;
        if (st > 0) {
            b = b < 0 ? 0 : b > dim ? dim : b;
            e = e < 0 ? 0 : e > dim ? dim : e;
        } else {
            b = b < 0 ? 0 : b > dim - 1 ? dim - 1 : b;
            e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
        }
        int64_t span = st > 0 ? e - b : b - e;
        uint64_t ustep = st > 0 ? (uint64_t)st : 0u - (uint64_t)st;
        od[a] = span > 0 ? (int64_t)(((uint64_t)span + ustep - 1u) / ustep) : 0;
        first[a] = b;
        step[a] = st;
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;
    int64_t is[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    rt_ref_strides(x->rank, x->dims, is);
    int64_t total = rt_ref_numel_dims(x->rank, od);
    for (int64_t i = 0; i < total; i++, rt_next(x->rank, od, coord)) {
        int64_t off = 0;
        for (int32_t d = 0; d < x->rank; d++) off += (first[d] + coord[d] * step[d]) * is[d];
        rt_ref_copy_elem(&c->out[0], i, x, off);
    }
    return SYMC_OK;
}

/* ---- gather --------------------------------------------------------------------------------------------- */
symc_status rt_ref_k_gather(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *idx = &c->in[1];
    int64_t axis_attr;
    int32_t axis;
    symc_status s;
    char t[160];
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if (idx->dtype != SYMC_I64 && idx->dtype != SYMC_I32)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "indices (input 1) are %s, must be i32 or i64",
                           symc_dtype_name(idx->dtype));
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "data (input 0) is a scalar; gather needs rank >= 1");
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    int32_t orank = x->rank - 1 + idx->rank;
    if (orank > RT_REF_MAX_RANK)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "the result would have rank %d > %d", (int)orank, RT_REF_MAX_RANK);
    int64_t od[RT_REF_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < axis; d++) od[r++] = x->dims[d];
    for (int32_t d = 0; d < idx->rank; d++) od[r++] = idx->dims[d];
    for (int32_t d = axis + 1; d < x->rank; d++) od[r++] = x->dims[d];
    if ((s = rt_ref_check_out(c, 0, x->dtype, orank, od))) return s;
    int64_t dim = x->dims[axis], nidx = rt_ref_numel_dims(idx->rank, idx->dims);
    /* every index is checked before anything is written */
    for (int64_t q = 0; q < nidx; q++) {
        int64_t v = rt_ld_i(idx, q);
        if (v < -dim || v >= dim) {
            int64_t coord[RT_REF_MAX_RANK];
            rt_ref_unravel(q, idx->rank, idx->dims, coord);
            return rt_ref_fail(c, SYMC_ERR_RANGE,
                               "index %lld at indices%s is out of range [%lld, %lld] for axis %d of "
                               "size %lld",
                               (long long)v, rt_ref_shape_str(t, sizeof t, idx->rank, coord), (long long)-dim,
                               (long long)dim - 1, (int)axis, (long long)dim);
        }
    }
    int64_t outer = rt_ref_numel_dims(axis, x->dims), inner = rt_ref_numel_dims(x->rank - axis - 1, x->dims + axis + 1);
    int64_t o = 0;
    for (int64_t i = 0; i < outer; i++)
        for (int64_t q = 0; q < nidx; q++) {
            int64_t v = rt_ld_i(idx, q);
            if (v < 0) v += dim;
            for (int64_t j = 0; j < inner; j++) rt_ref_copy_elem(&c->out[0], o++, x, (i * dim + v) * inner + j);
        }
    return SYMC_OK;
}

/* ---- squeeze / unsqueeze / flatten -------------------------------------------------------------------------- */
symc_status rt_ref_k_squeeze(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *axes;
    uint32_t n;
    int present;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "axes", 0, &axes, &n, &present))) return s;
    int drop[RT_REF_MAX_RANK] = {0};
    if (!present || n == 0) { /* every size-1 dim */
        for (int32_t d = 0; d < x->rank; d++) drop[d] = x->dims[d] == 1;
    }
    for (uint32_t k = 0; k < n; k++) {
        int32_t a;
        if ((s = rt_ref_norm_axis(c, axes[k], x->rank, "axis", &a))) return s;
        if (drop[a])
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "axis %lld appears twice in 'axes'", (long long)axes[k]);
        if (x->dims[a] != 1) {
            char t[160];
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "cannot squeeze axis %d of size %lld (input %s)", (int)a,
                               (long long)x->dims[a], rt_ref_shape_str(t, sizeof t, x->rank, x->dims));
        }
        drop[a] = 1;
    }
    int64_t od[RT_REF_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < x->rank; d++)
        if (!drop[d]) od[r++] = x->dims[d];
    if ((s = rt_ref_check_out(c, 0, x->dtype, r, od))) return s;
    copy_all(c);
    return SYMC_OK;
}

symc_status rt_ref_k_unsqueeze(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *axes;
    uint32_t n;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "axes", 1, &axes, &n, NULL))) return s;
    if ((int64_t)x->rank + n > RT_REF_MAX_RANK)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "rank %d plus %u new axes exceeds %d", (int)x->rank, n,
                           RT_REF_MAX_RANK);
    int32_t orank = x->rank + (int32_t)n;
    int added[RT_REF_MAX_RANK] = {0};
    for (uint32_t k = 0; k < n; k++) {
        int32_t a; /* axes count in the output's rank */
        if ((s = rt_ref_norm_axis(c, axes[k], orank, "axis", &a))) return s;
        if (added[a])
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "axis %lld appears twice in 'axes'", (long long)axes[k]);
        added[a] = 1;
    }
    int64_t od[RT_REF_MAX_RANK];
    for (int32_t d = 0, src = 0; d < orank; d++) od[d] = added[d] ? 1 : x->dims[src++];
    if ((s = rt_ref_check_out(c, 0, x->dtype, orank, od))) return s;
    copy_all(c);
    return SYMC_OK;
}

symc_status rt_ref_k_flatten(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t axis;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 0, 1, &axis))) return s;
    if (axis < -(int64_t)x->rank || axis > x->rank) /* ONNX: [-r, r] */
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "axis %lld is out of range [%d, %d] for rank %d", (long long)axis,
                           -(int)x->rank, (int)x->rank, (int)x->rank);
    if (axis < 0) axis += x->rank;
    int64_t od[2] = {rt_ref_numel_dims((int32_t)axis, x->dims),
                     rt_ref_numel_dims(x->rank - (int32_t)axis, x->dims + axis)};
    if ((s = rt_ref_check_out(c, 0, x->dtype, 2, od))) return s;
    copy_all(c);
    return SYMC_OK;
}

/* ---- split ------------------------------------------------------------------------------------------------------ */
symc_status rt_ref_k_split(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *sizes;
    uint32_t n;
    int64_t axis_attr;
    int32_t axis;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
    if ((s = rt_ref_attr_ints(c, "sizes", 1, &sizes, &n, NULL))) return s;
    if (x->rank == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 is a scalar; split needs rank >= 1");
    if ((s = rt_ref_norm_axis(c, axis_attr, x->rank, "axis", &axis))) return s;
    if (n != c->n_out) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%u sizes but %u outputs", n, c->n_out);
    int64_t total = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (sizes[k] < 0 || sizes[k] > x->dims[axis] - total)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "size %u (%lld) is negative or the sizes exceed dim %d (%lld)",
                               k, (long long)sizes[k], (int)axis, (long long)x->dims[axis]);
        total += sizes[k];
    }
    if (total != x->dims[axis])
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "sizes add up to %lld but axis %d has %lld", (long long)total,
                           (int)axis, (long long)x->dims[axis]);
    for (uint32_t k = 0; k < n; k++) {
        int64_t od[RT_REF_MAX_RANK];
        memcpy(od, x->dims, sizeof od);
        od[axis] = sizes[k];
        if ((s = rt_ref_check_out(c, k, x->dtype, x->rank, od))) return s;
    }
    int64_t outer = rt_ref_numel_dims(axis, x->dims), inner = rt_ref_numel_dims(x->rank - axis - 1, x->dims + axis + 1);
    int64_t row = x->dims[axis] * inner, at = 0; /* at: start of output k's block within a row */
    for (uint32_t k = 0; k < n; k++) {
        int64_t block = sizes[k] * inner;
        for (int64_t i = 0; i < outer; i++)
            for (int64_t j = 0; j < block; j++) rt_ref_copy_elem(&c->out[k], i * block + j, x, i * row + at + j);
        at += block;
    }
    return SYMC_OK;
}

/* ---- pad ------------------------------------------------------------------------------------------------------------ */
symc_status rt_ref_k_pad(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *pads;
    uint32_t n;
    const char *mode_s;
    double value;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "pads", 1, &pads, &n, NULL))) return s;
    if ((s = rt_ref_attr_str(c, "mode", 0, "constant", &mode_s))) return s;
    if ((s = rt_ref_attr_float(c, "value", 0, 0.0, &value))) return s;
    enum { CONSTANT, REFLECT, EDGE, WRAP } mode;
    if (!strcmp(mode_s, "constant")) mode = CONSTANT;
    else if (!strcmp(mode_s, "reflect")) mode = REFLECT;
    else if (!strcmp(mode_s, "edge")) mode = EDGE;
    else if (!strcmp(mode_s, "wrap")) mode = WRAP;
    else return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "mode '%s' must be constant, reflect, edge or wrap", mode_s);
    if (n != 2u * (uint32_t)x->rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'pads' has %u entries, must be 2 x rank = %d", n,
                           2 * (int)x->rank);
    int64_t od[RT_REF_MAX_RANK];
    const int64_t lim = (int64_t)1 << 61; /* keeps the sums below exact in int64 */
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t b = pads[d], e = pads[d + x->rank];
        if (b < -lim || b > lim || e < -lim || e > lim || x->dims[d] > lim)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "pads for axis %d are too large", (int)d);
        od[d] = x->dims[d] + b + e;
        if (od[d] < 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "pads %lld and %lld crop more than axis %d's %lld elements",
                               (long long)b, (long long)e, (int)d, (long long)x->dims[d]);
        if (mode != CONSTANT && x->dims[d] == 0 && od[d] > 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "%s padding of the empty axis %d", mode_s, (int)d);
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;
    int64_t is[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    rt_ref_strides(x->rank, x->dims, is);
    int64_t total = rt_ref_numel_dims(x->rank, od);
    for (int64_t i = 0; i < total; i++, rt_next(x->rank, od, coord)) {
        int64_t off = 0;
        int outside = 0;
        for (int32_t d = 0; d < x->rank; d++) {
            int64_t dim = x->dims[d], j = coord[d] - pads[d];
            if (j < 0 || j >= dim) {
                if (mode == CONSTANT) {
                    outside = 1;
                    break;
                }
                if (mode == EDGE) {
                    j = j < 0 ? 0 : dim - 1;
                } else if (mode == WRAP) { /* the axis repeated periodically */
                    j %= dim;
                    if (j < 0) j += dim;
                } else if (dim == 1) {
                    j = 0;
                } else { /* reflect without repeating the edge: period 2(dim-1) */
                    int64_t period = 2 * (dim - 1);
                    j %= period;
                    if (j < 0) j += period;
                    if (j >= dim) j = period - j;
                }
            }
            off += j * is[d];
        }
        if (outside) rt_st_f(&c->out[0], i, value);
        else rt_ref_copy_elem(&c->out[0], i, x, off);
    }
    return SYMC_OK;
}

/* ---- shape_of ------------------------------------------------------------------------------------------------------- */
symc_status rt_ref_k_shape_of(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t od[1] = {x->rank};
    symc_status s = rt_ref_check_out(c, 0, SYMC_I64, 1, od);
    if (s) return s;
    for (int32_t d = 0; d < x->rank; d++) rt_st_i(&c->out[0], d, x->dims[d]);
    return SYMC_OK;
}

/* ---- range ----------------------------------------------------------------------------------------------------------- */
/* The only source op with a kernel: no inputs, the output dtype is `to`. The
 * length max(ceil((limit - start) / delta), 0) is computed exactly, refusing
 * int64 overflow rather than wrapping. */
symc_status rt_ref_k_range(rt_ctx *c) {
    static const char *const names[3] = {"start", "limit", "delta"};
    int64_t v[3];
    symc_dtype to;
    symc_status s;
    for (int i = 0; i < 3; i++) {
        const int64_t *p;
        uint32_t n;
        if ((s = rt_ref_attr_ints(c, names[i], 1, &p, &n, NULL))) return s;
        if (n != 1) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'%s' has %u entries, must have 1", names[i], n);
        v[i] = p[0];
    }
    if ((s = rt_ref_attr_dtype(c, "to", &to))) return s;
    if (!(RT_DT(to) & RT_NUMS)) return rt_ref_fail(c, SYMC_ERR_UNSUPPORTED, "range of dtype %s", symc_dtype_name(to));
    int64_t start = v[0], limit = v[1], delta = v[2], span, len = 0;
    if (delta == 0) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "delta is 0");
    if (__builtin_sub_overflow(limit, start, &span))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "limit - start overflows");
    /* ceil(span / delta) for spans of delta's sign; C division truncates */
    if ((span > 0 && delta > 0) || (span < 0 && delta < 0)) len = span / delta + (span % delta != 0);
    if (len > 0 && (__builtin_mul_overflow(len - 1, delta, &span) || __builtin_add_overflow(start, span, &span)))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "the range has too many elements");
    int64_t od[1] = {len};
    if ((s = rt_ref_check_out(c, 0, to, 1, od))) return s;
    for (int64_t i = 0; i < len; i++) rt_st_i(&c->out[0], i, start + i * delta);
    return SYMC_OK;
}

/* ---- tile ---------------------------------------------------------------------------------------------------------------- */
symc_status rt_ref_k_tile(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    const int64_t *rep;
    uint32_t n;
    symc_status s;
    if ((s = rt_ref_attr_ints(c, "repeats", 1, &rep, &n, NULL))) return s;
    if (n != (uint32_t)x->rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'repeats' has %u entries but the input has rank %d", n,
                           (int)x->rank);
    int64_t od[RT_REF_MAX_RANK], total = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        if (rep[d] < 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "'repeats' entry %d is %lld, must be >= 0", (int)d,
                               (long long)rep[d]);
        if (!rt_ref_mul_ok(x->dims[d], rep[d], &od[d]) || !rt_ref_mul_ok(total, od[d], &total))
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "the tiled tensor has too many elements");
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;
    int64_t is[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    rt_ref_strides(x->rank, x->dims, is);
    for (int64_t i = 0; i < total; i++, rt_next(x->rank, od, coord)) {
        int64_t off = 0; /* every repeat reads the input again: coordinate modulo the input dim */
        for (int32_t d = 0; d < x->rank; d++) off += (coord[d] % x->dims[d]) * is[d];
        rt_ref_copy_elem(&c->out[0], i, x, off);
    }
    return SYMC_OK;
}

/* ---- trilu --------------------------------------------------------------------------------------------------------------- */
/* Element (i, j) of each matrix of the last two dims is kept when j - i >= k
 * (upper) or j - i <= k (lower), else zero of the dtype. */
symc_status rt_ref_k_trilu(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t upper, k;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "upper", 0, 1, &upper))) return s;
    if ((s = rt_ref_attr_int(c, "k", 0, 0, &k))) return s;
    if (x->rank < 2) return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 has rank %d, trilu needs >= 2", (int)x->rank);
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, x->dims))) return s;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t total = rt_ref_numel_dims(x->rank, x->dims);
    for (int64_t e = 0; e < total; e++) {
        int64_t j = e % cols, i = (e / cols) % rows, diff = j - i;
        /* diff is within +-2^62 (dims fit in memory) while k may be anything */
        int keep = upper ? diff >= k : diff <= k;
        if (keep) rt_ref_copy_elem(&c->out[0], e, x, e);
        else rt_st_i(&c->out[0], e, 0);
    }
    return SYMC_OK;
}

/* ---- gather_elements ------------------------------------------------------------------------------------------------------ */
symc_status rt_ref_k_gather_elements(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *idx = &c->in[1];
    int64_t axis_attr;
    int32_t axis;
    symc_status s;
    char t1[160], t2[160];
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis_attr))) return s;
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
    if ((s = rt_ref_check_out(c, 0, x->dtype, idx->rank, idx->dims))) return s;
    int64_t dim = x->dims[axis], total = rt_ref_numel_dims(idx->rank, idx->dims);
    int64_t is[RT_REF_MAX_RANK], coord[RT_REF_MAX_RANK] = {0};
    rt_ref_strides(x->rank, x->dims, is);
    /* every index is checked before anything is written */
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
    for (int64_t q = 0; q < total; q++, rt_next(idx->rank, idx->dims, coord)) {
        int64_t v = rt_ld_i(idx, q), off = 0;
        if (v < 0) v += dim;
        for (int32_t d = 0; d < x->rank; d++) off += (d == axis ? v : coord[d]) * is[d];
        rt_ref_copy_elem(&c->out[0], q, x, off);
    }
    return SYMC_OK;
}
