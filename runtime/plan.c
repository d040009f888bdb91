/* Activation memory planning (runtime/plan.h): liveness over the schedule,
 * then a greedy layout per shape. Largest-first first-fit is the plain
 * choice: n is a few hundred tensors, it runs once per new input shape, and
 * it packs within a few percent of the live-set peak on transformer and CNN
 * graphs. The fixed-order plan that bounds it is prepared with the
 * lifetimes: its order comes from a first-fit layout at the opt shape, and
 * for each tensor the earlier ones alive with it are listed once, so each
 * new shape costs one pass over those lists. All scratch memory is
 * allocated with the lifetimes: laying out a shape allocates nothing. */
#include "runtime/plan.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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

/* Aligned bytes of every workspace tensor into l->size, each at most
 * RT_MAX_BYTES; an error naming the tensor on overflow. */
static symc_status sizes_at(const rt_engine *e, rt_lifetimes *l, const int64_t *slots, size_t align, symc_error *err) {
    for (uint32_t i = 0; i < e->n_tensors; i++) {
        l->size[i] = 0;
        if (l->first[i] == RT_NONE) continue;
        int64_t b;
        if (!rt_tensor_bytes(e, slots, i, &b) || (uint64_t)b > (uint64_t)RT_MAX_BYTES - (align - 1))
            return rt_tensor_overflow(err, e, slots, i, "tensor");
        l->size[i] = ((size_t)b + align - 1) / align * align;
    }
    return SYMC_OK;
}

/* Largest-first first fit of the sizes in l->size; returns the total,
 * SIZE_MAX when an offset overflows. Each tensor goes at the lowest offset
 * where it overlaps no placed tensor alive at the same time: one sweep over
 * the placed tensors in offset order (l->by_off, kept sorted as tensors are
 * placed), moving past each one alive with it that it overlaps and stopping
 * at the first placed tensor, alive with it or not, that starts beyond it.
 * The size order starts from the previous call's, so a new shape re-sorts
 * only what moved (GPT-2 on the reference backend: setting a shape and
 * laying it out went from about 400 to 300 us). */
static size_t first_fit(const rt_engine *e, rt_lifetimes *l, size_t *offset) {
    uint32_t placed = 0, *o = l->order;
    size_t total = 0;
    if (!l->n_order) /* the workspace tensors, once; later calls start from the last order */
        for (uint32_t i = 0; i < e->n_tensors; i++)
            if (l->first[i] != RT_NONE) o[l->n_order++] = i;
    uint32_t n = l->n_order;
    for (uint32_t i = 0; i < e->n_tensors; i++) offset[i] = SIZE_MAX;
    /* largest first, ties by index: a strict order, so insertion sort gives
     * the one sorted sequence from any start, and from the last shape's order
     * it moves only the tensors whose rank changed */
    for (uint32_t k = 1; k < n; k++) {
        uint32_t t = o[k], j = k;
        while (j > 0 && (l->size[o[j - 1]] < l->size[t] || (l->size[o[j - 1]] == l->size[t] && o[j - 1] > t))) {
            o[j] = o[j - 1];
            j--;
        }
        o[j] = t;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t t = o[k];
        size_t at = 0, sz = l->size[t], end;
        for (uint32_t p = 0; p < placed; p++) {
            uint32_t u = l->by_off[p];
            /* placed offsets and ends never overflow (checked below). u and all after it
             * start beyond [at, at + sz): none of them can move it, alive together or not */
            if (offset[u] >= at && offset[u] - at >= sz) break;
            if (l->last[u] < l->first[t] || l->last[t] < l->first[u]) continue; /* not alive together */
            if (at < offset[u] + l->size[u]) at = offset[u] + l->size[u];
        }
        if (__builtin_add_overflow(at, sz, &end)) return SIZE_MAX;
        offset[t] = at;
        if (end > total) total = end;
        /* into by_off after the tensors at offsets <= at: binary search, one move */
        uint32_t lo = 0, hi = placed;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (offset[l->by_off[mid]] <= at) lo = mid + 1;
            else hi = mid;
        }
        memmove(&l->by_off[lo + 1], &l->by_off[lo], (size_t)(placed - lo) * sizeof *l->by_off);
        l->by_off[lo] = t;
        placed++;
    }
    return total;
}

/* The fixed-order plan at the sizes in l->size: offsets per stack position
 * into l->stack_off; SIZE_MAX when a sum overflows. */
static size_t stack_layout(rt_lifetimes *l) {
    size_t total = 0;
    for (uint32_t q = 0; q < l->n_stack; q++) {
        size_t at = 0, top;
        for (uint32_t k = l->below_at[q]; k < l->below_at[q + 1]; k++) {
            uint32_t p = l->below[k];
            if (__builtin_add_overflow(l->stack_off[p], l->size[l->stack[p]], &top)) return SIZE_MAX;
            if (top > at) at = top;
        }
        l->stack_off[q] = at;
        if (__builtin_add_overflow(at, l->size[l->stack[q]], &top)) return SIZE_MAX;
        if (top > total) total = top;
    }
    return total;
}

typedef struct ranked {
    size_t offset;
    uint32_t tensor;
} ranked;

static int by_offset(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

/* The fixed order: by offset in the first-fit layout at opt with 256-byte
 * alignment (the CUDA backend's), tensors empty at opt last, ties (and an
 * engine whose opt shape does not evaluate) by index. Any order is valid;
 * this one makes the fixed plan no larger than that first fit at opt, since
 * two non-empty tensors alive together there share no byte, so each one's
 * earlier neighbours end at or below its own opt offset. */
static symc_status prepare_stack(const rt_engine *e, rt_lifetimes *l, symc_error *err) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->n_tensors; i++) n += l->first[i] != RT_NONE;
    l->n_stack = n;
    ranked *r = malloc((n + 1) * sizeof *r);
    size_t *offset = malloc((e->n_tensors + 1) * sizeof *offset);
    int64_t *vals = malloc((e->n_symbols + 1) * sizeof *vals), *slots = malloc((e->num_slots + 1) * sizeof *slots);
    symc_status st = SYMC_OK;
    if (!r || !offset || !vals || !slots) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory planning activation memory");
        goto done;
    }
    for (uint32_t s = 0; s < e->n_symbols; s++) vals[s] = e->symbols[s].opt;
    int at_opt = sym_program_eval(e->program, e->program_size, vals, e->n_symbols, slots, e->num_slots, NULL) ==
            SYMC_OK &&
        sizes_at(e, l, slots, 256, NULL) == SYMC_OK;
    if (at_opt) first_fit(e, l, offset);
    n = 0;
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (l->first[i] != RT_NONE) r[n++] = (ranked){!at_opt ? 0 : l->size[i] ? offset[i] : SIZE_MAX, i};
    qsort(r, n, sizeof *r, by_offset);
    for (uint32_t q = 0; q < n; q++) l->stack[q] = r[q].tensor;
    /* earlier tensors alive together, as a compressed list per position */
    for (int pass = 0; pass < 2; pass++) {
        uint64_t k = 0;
        for (uint32_t q = 0; q < n; q++) {
            uint32_t t = l->stack[q];
            if (pass) l->below_at[q] = (uint32_t)k;
            for (uint32_t p = 0; p < q; p++) {
                uint32_t u = l->stack[p];
                if (l->last[u] < l->first[t] || l->last[t] < l->first[u]) continue;
                if (pass) l->below[k] = p;
                k++;
            }
        }
        if (!pass) {
            if (k >= UINT32_MAX) {
                st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                                     "activation memory: %u workspace tensors alive "
                                     "together in too many pairs to plan",
                                     n);
                goto done;
            }
            l->below = malloc((size_t)(k + 1) * sizeof *l->below);
            if (!l->below) {
                st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory planning activation memory");
                goto done;
            }
        } else {
            l->below_at[n] = (uint32_t)k;
        }
    }
done:
    free(r);
    free(offset);
    free(vals);
    free(slots);
    return st;
}

symc_status rt_lifetimes_compute(const rt_engine *e, rt_schedule s, rt_lifetimes *out, symc_error *err) {
    memset(out, 0, sizeof *out);
    out->n = e->n_tensors;
    size_t n1 = (size_t)e->n_tensors + 1;
    out->first = malloc(n1 * sizeof *out->first);
    out->last = malloc(n1 * sizeof *out->last);
    out->order = malloc(n1 * sizeof *out->order);
    out->by_off = malloc(n1 * sizeof *out->by_off);
    out->stack = malloc(n1 * sizeof *out->stack);
    out->below_at = malloc((n1 + 1) * sizeof *out->below_at);
    out->size = malloc(n1 * sizeof *out->size);
    out->stack_off = malloc(n1 * sizeof *out->stack_off);
    if (!out->first || !out->last || !out->order || !out->by_off || !out->stack || !out->below_at || !out->size ||
        !out->stack_off) {
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
                for (uint32_t k = 0; k < st->n_tensors && k < RT_STEP_MAX_TENSORS; k++)
                    touch(out, e, st->tensors[k], i, 1);
            }
        }
    }
    /* only workspace tensors keep a lifetime */
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (e->tensors[i].constant != RT_NONE || rt_engine_is_io(e, i) ||
            (s == RT_SCHEDULE_STEPS && rt_storage_of(e, i) != i))
            out->first[i] = out->last[i] = RT_NONE;
    symc_status st = prepare_stack(e, out, err);
    if (st) rt_lifetimes_free(out);
    return st;
}

void rt_lifetimes_free(rt_lifetimes *l) {
    if (!l) return;
    free(l->first);
    free(l->last);
    free(l->order);
    free(l->by_off);
    free(l->stack);
    free(l->below_at);
    free(l->below);
    free(l->size);
    free(l->stack_off);
    memset(l, 0, sizeof *l);
}

symc_status rt_plan_layout(const rt_engine *e, rt_lifetimes *l, const int64_t *slots, size_t align, size_t *offset,
                           size_t *total, symc_error *err) {
    *total = 0;
    l->fit_total = l->stack_total = SIZE_MAX;
    if (align == 0) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_plan_layout: alignment 0");
    symc_status st = sizes_at(e, l, slots, align, err);
    if (st) {
        for (uint32_t i = 0; i < e->n_tensors; i++) offset[i] = SIZE_MAX;
        return st;
    }
    l->fit_total = first_fit(e, l, offset);
    l->stack_total = stack_layout(l);
    *total = l->fit_total;
    if (l->stack_total < l->fit_total) {
        for (uint32_t q = 0; q < l->n_stack; q++) offset[l->stack[q]] = l->stack_off[q];
        *total = l->stack_total;
    }
    if (*total > (uint64_t)RT_MAX_BYTES) {
        /* name the largest tensor in it, the likely culprit */
        uint32_t big = RT_NONE;
        for (uint32_t i = 0; i < e->n_tensors; i++)
            if (l->first[i] != RT_NONE && (big == RT_NONE || l->size[i] > l->size[big])) big = i;
        char shape[160] = "";
        if (big != RT_NONE) {
            int64_t dims[IR_MAX_RANK];
            for (int32_t d = 0; d < e->tensors[big].rank; d++) dims[d] = slots[e->tensors[big].dims[d]];
            rt_format_dims(dims, e->tensors[big].rank, shape, sizeof shape);
        }
        for (uint32_t i = 0; i < e->n_tensors; i++) offset[i] = SIZE_MAX;
        *total = 0;
        return symc_error_setf(err, SYMC_ERR_OVERFLOW,
                               "the activation workspace for these shapes is too large: its size in bytes does not "
                               "fit in 64 bits (the intermediates alive at the same time need more than %" PRId64
                               " bytes; the largest is '%s' of shape %s)",
                               (int64_t)RT_MAX_BYTES, big != RT_NONE ? e->tensors[big].name : "?", shape);
    }
    return SYMC_OK;
}
