/* backend.h: the one interface between the runtime's core and a backend.
 *
 * The core (runtime/context.c) owns everything a backend shares: the engine,
 * shape binding and its checks, the evaluated shape program (`slots`: every
 * dim, size and guard side at the current input shapes) and the user's
 * buffers, checked against the shapes. A backend owns how the engine runs:
 * its memory, its kernels and its per-context caches, behind an opaque
 * state. The core calls the table below and knows no backend; which table
 * serves a symrt_backend value is decided in one place, the registry
 * (runtime/backends.c).
 *
 * A new backend is a folder under runtime/ (runtime/<name>/, prefix
 * rt_<name>_) that defines a `const rt_backend` and includes the core and
 * its own folder only, a value in symrt_backend (include/symc/symrt.h), and
 * its entry in the registry. runtime/ref/ (the CPU reference) and
 * runtime/cuda/ (CUDA) are the two there are. */
#ifndef SYMC_RUNTIME_BACKEND_H
#define SYMC_RUNTIME_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"
#include "symc/symrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Calls come from one thread at a time per state (the context's rule; the
 * states of one context's regions are called by the same thread, one at a
 * time) and in this order: create (and create_more per further region);
 * then, per new set of input shapes, layout; per new
 * set of addresses or shapes, check_buffer for every input and output; then
 * enqueue, as often as the user asks; destroy last. Optional entries are
 * NULL when the backend has nothing to do there. */
/* The core's side of a run with produced symbols (runtime/context.c):
 * produced(ctx, k, count, &slots, err) checks count against produced[k]'s
 * bound (SYMC_ERR_RANGE naming the node, the count and the bound), stores
 * it, evaluates the shape program again and checks the guards that wait for
 * it; *slots then points at the real slots for every later node. */
typedef struct rt_run_hook {
    void *ctx;
    symc_status (*produced)(void *ctx, uint32_t k, int64_t count, const int64_t **slots, symc_error *err);
} rt_run_hook;

typedef struct rt_backend {
    const char *name; /* "reference", "CUDA" */
    /* The byte alignment of every tensor's offset in the backend's layout
     * (rt_plan_layout); the memory report (tools/memory.c) reads it here. */
    size_t align;
    /* The state of one context of engine e on `device` (the backend's own
     * numbering: an ordinal among the visible GPUs, 0 for the CPU): everything
     * that does not depend on input shapes. alloc: the context's allocator,
     * NULL for the backend's own; its memory is the backend's kind (host or
     * device). */
    symc_status (*create)(const rt_engine *e, int32_t device, const symrt_allocator *alloc, void **state,
                          symc_error *err);
    /* Optional: the state of another graph of the same engine (a region,
     * engine.h rt_region) in the same context, made after `first` (graph
     * 0's, from create) and destroyed before it. It shares what belongs to
     * the engine rather than the graph (constants, library handles, the
     * workspace: the graphs of one context run one at a time) and takes
     * first's allocator. NULL: the core calls create for each graph. */
    symc_status (*create_more)(void *first, const rt_engine *graph, void **state, symc_error *err);
    void (*destroy)(void *state); /* accepts NULL */
    /* Lays the backend's memory out for the sizes in slots, allocating
     * nothing: an error when it would not fit (int64 bytes). The next
     * enqueue with shape_changed uses this layout. */
    symc_status (*layout)(void *state, const int64_t *slots, symc_error *err);
    /* Optional: checks the user's buffer at ptr for an input or output
     * (what = "input" / "output", name its tensor), which must hold `need`
     * bytes; the core has already compared the size the user gave. */
    symc_status (*check_buffer)(void *state, const char *what, const char *name, const void *ptr, size_t need,
                                symc_error *err);
    /* Runs the engine at slots. shape_changed: slots differ from the last
     * enqueue that succeeded (layout ran for them). addr/size: per tensor,
     * the user's buffers (inputs and outputs; NULL/0 elsewhere), checked
     * against the shapes; outputs the engine holds as constants are the
     * backend's to copy. stream: the caller's (a CUstream for CUDA).
     * With produced symbols (rt_engine.produced), slots are the capacity
     * slots the layout was made for; after node produced[k].node has run,
     * the backend calls hook->produced with the count it wrote and runs
     * every later node at the slots that call returns (the real sizes,
     * never above the capacity ones: memory stays where the layout put
     * it). hook is NULL for an engine without produced symbols. */
    symc_status (*enqueue)(void *state, const int64_t *slots, int shape_changed, void *const *addr, const size_t *size,
                           void *stream, const struct rt_run_hook *hook, symc_error *err);
    /* Optional: waits for the last run and reports bad data its kernels
     * found and could not stop on (symrt_context_check). */
    symc_status (*check_run)(void *state, symc_error *err);
    /* Optional: graph capture and replay per shape key, on by default
     * (symrt_context_set_cuda_graphs), and what they did so far. */
    void (*set_graphs)(void *state, int on);
    symrt_graph_stats (*graph_stats)(void *state);
    /* Optional: one run like enqueue (shape_changed and hook likewise) with
     * every step timed (symrt_context_profile); fills out[0..min(cap,
     * steps)). cap 0 only counts the steps: nothing runs, hook is NULL. */
    symc_status (*profile)(void *state, const int64_t *slots, int shape_changed, void *const *addr, void *stream,
                           const struct rt_run_hook *hook, symrt_step_profile *out, uint32_t cap, uint32_t *n_steps,
                           symc_error *err);
    /* Optional: host I/O on or off (symrt_context_set_host_io), called on
     * the first state; the others follow it. While on, the addresses enqueue
     * gets are host memory, stream is NULL and enqueue returns once the
     * outputs are in host memory. NULL: the backend's memory is host memory
     * already. */
    symc_status (*set_host_io)(void *first, int on, symc_error *err);
    /* Optional: host memory the backend's host I/O copies run fastest from
     * (symrt_context_host_alloc), and its free; NULL: plain aligned memory. */
    symc_status (*host_alloc)(void *first, size_t bytes, void **ptr, symc_error *err);
    void (*host_free)(void *first, void *ptr);
    /* Optional: how many devices create accepts (0..count-1); NULL: one. */
    symc_status (*device_count)(int32_t *count, symc_error *err);
} rt_backend;

/* The table serving `which`, NULL when there is none (runtime/backends.c). */
const rt_backend *rt_backend_get(symrt_backend which);

#ifdef __cplusplus
}
#endif
#endif
