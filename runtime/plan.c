/* Activation memory planning (runtime/plan.h): liveness over the schedule,
 * then a greedy layout per shape. Largest-first first-fit is the plain
 * choice: n is a few hundred tensors, it runs once per new input shape, and
 * it packs within a few percent of the live-set peak on transformer and CNN
 * graphs. */
#include "runtime/plan.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/ref_kernels.h"

uint32_t rt_storage_of(const rt_engine *e, uint32_t t) {
    return e->n_aliases && e->aliases[t] != RT_NONE ? e->aliases[t] : t;
}

/* aliases share storage only on the GPU: the reference backend gives every
 * tensor its own */
static void touch(rt_lifetimes *l, const rt_engine *e, uint32_t t, uint32_t pos, int aliases) {
    if (t == RT_NONE || t >= l->n) return;
    if (aliases) t = rt_storage_of(e, t);
    if (l->first[t] == RT_NONE || pos < l->first[t]) l->first[t] = pos;
    if (l->last[t] == RT_NONE || pos > l->last[t]) l->last[t] = pos;
}

symc_status rt_lifetimes_compute(const rt_engine *e, rt_schedule s, rt_lifetimes *out, symc_error *err) {
    memset(out, 0, sizeof *out);
    out->n = e->n_tensors;
    out->first = malloc((e->n_tensors + 1) * sizeof *out->first);
    out->last = malloc((e->n_tensors + 1) * sizeof *out->last);
    out->order = malloc((e->n_tensors + 1) * sizeof *out->order);
    if (!out->first || !out->last || !out->order) {
        rt_lifetimes_free(out);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory planning activation memory");
    }
    for (uint32_t i = 0; i < e->n_tensors; i++) out->first[i] = out->last[i] = RT_NONE;
    if (s == RT_SCHEDULE_NODES) {
        for (uint32_t i = 0; i < e->n_nodes; i++) {
            const rt_node *n = &e->nodes[i];
            for (uint32_t k = 0; k < n->n_in; k++) touch(out, e, n->in[k], i, 0);
            for (uint32_t k = 0; k < n->n_out; k++) touch(out, e, n->out[k], i, 0);
        }
    } else {
        for (uint32_t i = 0; i < e->n_steps; i++) {
            const rt_step *st = &e->steps[i];
            if (st->kind == RT_STEP_KERNEL) {
                for (uint32_t k = 0; k < st->n_args; k++)
                    if (st->args[k].kind == RT_ARG_TENSOR) touch(out, e, st->args[k].value, i, 1);
            } else {
                for (uint32_t k = 0; k < st->n_tensors && k < RT_STEP_MAX_TENSORS; k++) touch(out, e, st->tensors[k], i, 1);
            }
        }
    }
    /* only workspace tensors keep a lifetime */
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (e->tensors[i].constant != RT_NONE || rt_engine_is_io(e, i) ||
            (s == RT_SCHEDULE_STEPS && rt_storage_of(e, i) != i))
            out->first[i] = out->last[i] = RT_NONE;
    return SYMC_OK;
}

void rt_lifetimes_free(rt_lifetimes *l) {
    if (!l) return;
    free(l->first);
    free(l->last);
    free(l->order);
    memset(l, 0, sizeof *l);
}

static size_t bytes_of(const rt_engine *e, const int64_t *slots, uint32_t t) {
    const rt_tensor *x = &e->tensors[t];
    size_t n = rt_ref_dtype_size(x->dtype);
    for (int d = 0; d < x->rank; d++) {
        uint64_t v = (uint64_t)slots[x->dims[d]];
        if (v && n > SIZE_MAX / v) return SIZE_MAX;
        n *= v;
    }
    return n;
}

symc_status rt_plan_layout(const rt_engine *e, rt_lifetimes *l, const int64_t *slots, size_t align, size_t *offset,
                           size_t *total, symc_error *err) {
    uint32_t n = 0;
    *total = 0;
    for (uint32_t i = 0; i < e->n_tensors; i++) {
        offset[i] = SIZE_MAX;
        if (l->first[i] != RT_NONE) l->order[n++] = i;
    }
    /* largest first (insertion sort: stable, n is small) */
    size_t *size = malloc((n + 1) * sizeof *size);
    if (!size) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory planning activation memory");
    for (uint32_t k = 0; k < n; k++) {
        size_t b = bytes_of(e, slots, l->order[k]);
        if (b == SIZE_MAX || b > SIZE_MAX / 2) {
            free(size);
            return symc_error_setf(err, SYMC_ERR_OVERFLOW, "tensor '%s' is too large for this machine",
                                   e->tensors[l->order[k]].name);
        }
        size[k] = (b + align - 1) / align * align;
    }
    for (uint32_t k = 1; k < n; k++) {
        uint32_t t = l->order[k];
        size_t sz = size[k];
        uint32_t j = k;
        while (j > 0 && size[j - 1] < sz) {
            l->order[j] = l->order[j - 1];
            size[j] = size[j - 1];
            j--;
        }
        l->order[j] = t;
        size[j] = sz;
    }
    /* first fit against the placed tensors alive at the same time */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t t = l->order[k];
        size_t at = 0;
        for (int moved = 1; moved;) {
            moved = 0;
            for (uint32_t p = 0; p < k; p++) {
                uint32_t u = l->order[p];
                if (l->last[u] < l->first[t] || l->last[t] < l->first[u]) continue; /* not alive together */
                if (at < offset[u] + size[p] && offset[u] < at + size[k]) {
                    at = offset[u] + size[p];
                    moved = 1;
                }
            }
        }
        offset[t] = at;
        if (at + size[k] > *total) *total = at + size[k];
    }
    free(size);
    return SYMC_OK;
}
