/* The CPU reference backend behind the runtime's backend table
 * (runtime/backend.h): the engine's nodes, one after the other, each run by
 * its reference kernel (rt_ref_run, ref_kernels.c). Synchronous; the stream
 * is ignored.
 *
 * Intermediate tensors live in one grow-only host workspace, laid out per
 * input shape for that shape, not for max (runtime/plan.h: lifetimes over
 * the nodes, computed once at create); inputs, outputs and constants are
 * used in place, and an output the engine holds as a constant is copied
 * into the caller's buffer. Each node's dim attributes arrive as program
 * slots and are turned into integers in a scratch array before its kernel
 * runs, since the kernels take plain SYMC_ATTR_INTS.
 *
 * Sizes known only after a node runs (rt_engine.produced): the layout is
 * made at their capacity; a producer's kernel writes its output at the real
 * size and leaves it in the output's dims, which goes to the core through
 * the run hook, and every later node runs at the real slots the hook
 * returns, in memory laid out for the capacity (no tensor grows: the core
 * checks it).
 *
 * The states of an engine's other regions (create_more) use the first
 * one's workspace, which grows to the largest need of any of them: the
 * backend is synchronous and a context runs one region at a time, so they
 * never use it together. Constants are host pointers into the engine and
 * are shared already. */
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/plan.h"
#include "runtime/ref/ref_kernels.h"

#define REF_ALIGN 64 /* bytes: every tensor offset in the workspace (AVX-512 loads, cache lines) */

typedef struct ref_state ref_state;
struct ref_state {
    const rt_engine *e;
    ref_state *owner;       /* the state whose workspace this one uses: itself, or the context's first */
    symrt_allocator alloc;  /* host memory */
    rt_lifetimes lifetimes; /* per tensor, over the nodes */
    uint8_t *workspace;     /* the owner's is the one used */
    size_t workspace_size;
    size_t workspace_need; /* for the current shapes (layout) */
    size_t *offset;        /* per tensor: offset in the workspace, SIZE_MAX if not there */
    symc_attr *scratch_attrs;
    int64_t *scratch_ints;
    rt_ref_tensor *in, *out; /* one node's, sized for the engine's widest (a concat of 90 inputs) */
};

static void *default_alloc(void *ctx, size_t size, size_t alignment) {
    (void)ctx;
    size = (size + alignment - 1) / alignment * alignment;
    return aligned_alloc(alignment, size ? size : alignment);
}
static void default_free(void *ctx, void *p) {
    (void)ctx;
    free(p);
}

static void ref_destroy(void *state) {
    ref_state *r = state;
    if (!r) return;
    rt_lifetimes_free(&r->lifetimes);
    if (r->workspace) r->alloc.free(r->alloc.ctx, r->workspace);
    free(r->offset);
    free(r->scratch_attrs);
    free(r->scratch_ints);
    free(r->in);
    free(r->out);
    free(r);
}

/* A state of graph e using owner's workspace (NULL: its own) and allocator. */
static symc_status new_state(const rt_engine *e, ref_state *owner, const symrt_allocator *alloc, void **state,
                             symc_error *err) {
    *state = NULL;
    ref_state *r = calloc(1, sizeof *r);
    if (!r) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a context");
    r->e = e;
    r->owner = owner ? owner : r;
    r->alloc = alloc ? *alloc : (symrt_allocator){default_alloc, default_free, NULL};
    /* scratch for the largest node's attributes and dim entries */
    uint32_t max_attrs = 0, max_dims = 0, max_in = 0, max_out = 0;
    for (uint32_t i = 0; i < e->n_nodes; i++) {
        uint32_t nd = 0;
        if (e->nodes[i].n_in > max_in) max_in = e->nodes[i].n_in;
        if (e->nodes[i].n_out > max_out) max_out = e->nodes[i].n_out;
        for (uint32_t a = 0; a < e->nodes[i].n_attrs; a++)
            if (e->nodes[i].attrs[a].kind == SYMC_ATTR_DIMS) nd += e->nodes[i].attrs[a].n;
        if (e->nodes[i].n_attrs > max_attrs) max_attrs = e->nodes[i].n_attrs;
        if (nd > max_dims) max_dims = nd;
    }
    r->offset = calloc(e->n_tensors + 1, sizeof *r->offset);
    r->scratch_attrs = calloc(max_attrs + 1, sizeof *r->scratch_attrs);
    r->scratch_ints = calloc(max_dims + 1, sizeof *r->scratch_ints);
    r->in = calloc(max_in + 1, sizeof *r->in);
    r->out = calloc(max_out + 1, sizeof *r->out);
    if (!r->offset || !r->scratch_attrs || !r->scratch_ints || !r->in || !r->out) {
        ref_destroy(r);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a context");
    }
    symc_status st = rt_lifetimes_compute(e, RT_SCHEDULE_NODES, &r->lifetimes, err);
    if (st) {
        ref_destroy(r);
        return st;
    }
    *state = r;
    return SYMC_OK;
}

static symc_status ref_create(const rt_engine *e, int32_t device, const symrt_allocator *alloc, void **state,
                              symc_error *err) {
    if (device != 0)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "the reference backend runs on the CPU, device 0 only (device %d given)", (int)device);
    return new_state(e, NULL, alloc, state, err);
}

static symc_status ref_create_more(void *first, const rt_engine *graph, void **state, symc_error *err) {
    ref_state *owner = first;
    return new_state(graph, owner, &owner->alloc, state, err);
}

/* 64-byte aligned; tensors whose lifetimes do not overlap share memory. */
static symc_status ref_layout(void *state, const int64_t *slots, symc_error *err) {
    ref_state *r = state;
    return rt_plan_layout(r->e, &r->lifetimes, slots, REF_ALIGN, r->offset, &r->workspace_need, err);
}

/* Grows the (owner's) workspace when this shape needs more than any before. */
static symc_status grow_workspace(ref_state *state, symc_error *err) {
    size_t total = state->workspace_need;
    ref_state *r = state->owner;
    if (total > r->workspace_size) {
        void *w = r->alloc.alloc(r->alloc.ctx, total, 64);
        if (!w) return symc_error_setf(err, SYMC_ERR_NOMEM, "cannot allocate %zu bytes of activation memory", total);
        if (r->workspace) r->alloc.free(r->alloc.ctx, r->workspace);
        r->workspace = w;
        r->workspace_size = total;
    }
    return SYMC_OK;
}

static void *data_of(const ref_state *r, void *const *addr, uint32_t t) {
    const rt_tensor *x = &r->e->tensors[t];
    if (x->constant != RT_NONE) return (void *)r->e->constants[x->constant].data;
    if (r->offset[t] != SIZE_MAX) return r->owner->workspace + r->offset[t];
    return addr[t];
}

static void to_ref(const ref_state *r, const int64_t *slots, void *const *addr, uint32_t t, rt_ref_tensor *out) {
    const rt_tensor *x = &r->e->tensors[t];
    out->dtype = x->dtype;
    out->rank = x->rank;
    for (int d = 0; d < x->rank; d++) out->dims[d] = slots[x->dims[d]];
    out->data = data_of(r, addr, t);
}

/* Node n's attributes with every dim entry (a slot) turned into its value,
 * as SYMC_ATTR_INTS (-1 stays -1), in the scratch arrays. */
static const symc_attr *evaluated_attrs(ref_state *r, const int64_t *slots, const rt_node *n) {
    uint32_t used = 0;
    for (uint32_t a = 0; a < n->n_attrs; a++) {
        symc_attr *at = &r->scratch_attrs[a];
        *at = n->attrs[a];
        if (at->kind != SYMC_ATTR_DIMS) continue;
        for (uint32_t k = 0; k < at->n; k++)
            r->scratch_ints[used + k] = at->dims[k] == RT_NONE ? -1 : slots[at->dims[k]];
        at->kind = SYMC_ATTR_INTS;
        at->ints = r->scratch_ints + used;
        at->dims = NULL;
        used += at->n;
    }
    return r->scratch_attrs;
}

static symc_status ref_enqueue(void *state, const int64_t *slots, int shape_changed, void *const *addr,
                               const size_t *size, void *stream, const rt_run_hook *hook, symc_error *err) {
    (void)size; /* checked by the core against the shapes */
    (void)stream;
    ref_state *r = state;
    const rt_engine *e = r->e;
    symc_status st;
    /* the layout depends only on the shapes: allocate once per new shape, not per call */
    if (shape_changed && (st = grow_workspace(r, err))) return st;

    rt_ref_tensor *in = r->in, *out = r->out;
    uint32_t next = 0; /* the next produced size (e->produced, in node order) */
    for (uint32_t i = 0; i < e->n_nodes; i++) {
        const rt_node *n = &e->nodes[i];
        if (n->op == IR_OP_CONSTANT) continue;
        for (uint32_t k = 0; k < n->n_in; k++) to_ref(r, slots, addr, n->in[k], &in[k]);
        for (uint32_t k = 0; k < n->n_out; k++) to_ref(r, slots, addr, n->out[k], &out[k]);
        const symc_attr *attrs = evaluated_attrs(r, slots, n);
        if ((st = rt_ref_run(n->op, n->name, attrs, n->n_attrs, in, n->n_in, out, n->n_out, err))) return st;
        /* a producer wrote its output at the real size and left it in the dims:
         * every later node runs at the real sizes */
        for (; hook && next < e->n_produced && e->produced[next].node == i; next++) {
            const rt_produced *p = &e->produced[next];
            if ((st = hook->produced(hook->ctx, next, out[p->output].dims[p->dim], &slots, err))) return st;
        }
    }
    /* an output that is a constant is written by no node (its buffer was
     * checked like every other); one that is also an input shares its
     * single address and needs nothing */
    for (uint32_t i = 0; i < e->n_outputs; i++) {
        const rt_tensor *x = &e->tensors[e->outputs[i]];
        int64_t bytes = 0;
        if (x->constant != RT_NONE && rt_tensor_bytes(e, slots, e->outputs[i], &bytes) && bytes)
            memcpy(addr[e->outputs[i]], e->constants[x->constant].data, (size_t)bytes);
    }
    return SYMC_OK;
}

const rt_backend rt_ref_backend = {
    .name = "reference",
    .align = REF_ALIGN,
    .create = ref_create,
    .create_more = ref_create_more,
    .destroy = ref_destroy,
    .layout = ref_layout,
    .check_buffer = NULL, /* host memory: nothing to ask anyone */
    .enqueue = ref_enqueue,
    .check_run = NULL, /* synchronous: bad data fails the run itself */
    .set_graphs = NULL,
};
