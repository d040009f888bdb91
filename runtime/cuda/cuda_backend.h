/* The runtime's CUDA backend (runtime/cuda/; never a public header).
 *
 * Contexts reach it through its backend table, rt_cuda_backend
 * (runtime/backend.h: the adapters at the end of cuda_backend.c), never by
 * name. The functions below are for what runs outside a context: the
 * build-time tuner's narrow interface (cuda_tuning.c, whose header
 * cuda_tuning.h is what codegen/tuner.c includes), codegen (rt_cuda_device_sm: the present GPU's SM), and the tools
 * and GPU tests (rt_cuda_driver: device memory, streams, events).
 *
 * Nothing here links the driver: the CUDA driver (libcuda.so.1), cuBLASLt
 * (libcublasLt.so.13) and cuDNN (libcudnn.so.9) are opened with dlopen on
 * first use, so every program starts on a machine without a GPU driver and
 * the CUDA backend then fails in one line saying what is missing.
 *
 * An rt_cuda is one context's GPU state: the modules (cubin when the GPU's SM
 * equals the engine's, else PTX JIT-compiled by the driver for a newer GPU),
 * its functions, the engine's constants on the device, the library handles,
 * a grow-only activation workspace laid out per input shape, and a per-shape
 * cache of library algorithm choices. It runs `rt_engine.steps` in order on
 * the caller's stream. */
#ifndef SYMC_RUNTIME_CUDA_BACKEND_H
#define SYMC_RUNTIME_CUDA_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"
#include "symc/symrt.h"

typedef struct rt_cuda rt_cuda;

/* Device memory the CUDA backend holds besides constants and the plan, also
 * for the tools' totals: cuBLASLt's workspace, allocated at the first GEMM
 * step (cuda_gemm.c), and the most a cuDNN workspace may take (cuda_conv.c;
 * the size is cuDNN's per shape). */
#define RT_CUDA_GEMM_WORKSPACE ((size_t)32 << 20)
#define RT_CUDA_CONV_WORKSPACE_CAP ((size_t)1 << 30)

/* The driver entry points the tools need (bench, run): loaded once per
 * process by rt_cuda_driver (thread-safe); NULL + message when there is no
 * driver or no GPU. Signatures are the CUDA driver API's, with handles as
 * void * and uint64_t, so this header needs no cuda.h. Each returns a CUresult. */
typedef struct rt_cuda_driver_api {
    int (*mem_alloc)(uint64_t *dptr, size_t bytes);
    int (*mem_free)(uint64_t dptr);
    int (*memcpy_htod)(uint64_t dst, const void *src, size_t bytes);
    int (*memcpy_dtoh)(void *dst, uint64_t src, size_t bytes);
    int (*memset_d8)(uint64_t dst, unsigned char v, size_t bytes);
    int (*stream_create)(void **stream, unsigned flags);
    int (*stream_destroy)(void *stream);
    int (*stream_synchronize)(void *stream);
    int (*event_create)(void **event, unsigned flags);
    int (*event_destroy)(void *event);
    int (*event_record)(void *event, void *stream);
    int (*event_synchronize)(void *event);
    int (*event_elapsed_time)(float *ms, void *start, void *end);
    int (*ctx_synchronize)(void);
    int (*mem_get_info)(size_t *free_bytes, size_t *total_bytes); /* of the device, all processes */
    /* the device in use */
    char device_name[256];
    uint32_t sm; /* e.g. 90 */
    int driver_version;
} rt_cuda_driver_api;

/* Loads the driver, initializes it, and makes the primary context of
 * device 0 (or $CUDA_VISIBLE_DEVICES' first) current on this thread. */
const rt_cuda_driver_api *rt_cuda_driver(symc_error *err);
/* The present GPU's SM (e.g. 90); an error when there is none. */
symc_status rt_cuda_device_sm(uint32_t *sm, symc_error *err);

/* A context's state on GPU `device` (an ordinal among the visible ones).
 * dev_alloc: allocates device memory (NULL: cuMemAlloc/cuMemFree). */
symc_status rt_cuda_create(const rt_engine *e, int device, const symrt_allocator *dev_alloc, rt_cuda **out,
                           symc_error *err);
/* Host I/O on or off for the context whose first state is c (see
 * symrt_context_set_host_io). */
symc_status rt_cuda_set_host_io(rt_cuda *c, int on, symc_error *err);
/* The state of another graph of first's engine (a region, runtime/engine.h
 * rt_region) in the same context: it shares first's constants on the
 * device, workspace, library handles, capture stream and error word (see
 * cuda_internal.h) and must be destroyed before first. */
symc_status rt_cuda_create_more(rt_cuda *first, const rt_engine *graph, rt_cuda **out, symc_error *err);
void rt_cuda_destroy(rt_cuda *c);
/* Lays the activation workspace out for the sizes in `slots` without
 * allocating or touching the GPU: an error when it would overflow int64
 * bytes. The context calls it when the input shapes change; the next
 * rt_cuda_enqueue (with shape_changed, for the same slots) uses this layout. */
symc_status rt_cuda_layout(rt_cuda *c, const int64_t *slots, symc_error *err);
/* Runs every step for the sizes in `slots` (the evaluated shape program) on
 * `stream` (a CUstream; NULL = the default stream). shape_changed: slots
 * differ from the previous call (lay the workspace out again). addr/size:
 * per tensor, the user's device pointers and buffer sizes (inputs and
 * outputs; NULL/0 elsewhere), already checked against the shapes.
 * With produced sizes (rt_engine.produced; hook required, else NULL),
 * slots are the capacity slots: after each producer's last step the count
 * is copied to the host, the stream synchronized and hook->produced called,
 * and every later step (and the outputs' copies) runs at the slots it
 * returns (runtime/backend.h). Graphs are off for such an engine. */
struct rt_run_hook;
symc_status rt_cuda_enqueue(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr, const size_t *size,
                            void *stream, const struct rt_run_hook *hook, symc_error *err);

/* One run with every step timed by CUDA events (symrt_context_profile):
 * out[0..min(cap, steps)) gets each step's time and what it ran. hook as
 * for rt_cuda_enqueue (the steps after a producer at the real sizes). */
symc_status rt_cuda_profile(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr, void *stream,
                            const struct rt_run_hook *hook, symrt_step_profile *out, uint32_t cap, uint32_t *n_steps,
                            symc_error *err);
/* CUDA graphs per shape key (on by default): see symrt_context_set_cuda_graphs. */
void rt_cuda_set_graphs(rt_cuda *c, int on);
/* What the graphs did so far (symrt_context_graph_stats). */
symrt_graph_stats rt_cuda_graph_stats(const rt_cuda *c);
/* Bad data the kernels of an earlier run found (gather indices out of range,
 * integer division by zero), which a kernel cannot stop on: wait = 0 reports
 * it only when that run has finished (the next enqueue calls this); wait = 1
 * waits for the last run first. The error names the node; the flag is then
 * cleared. */
symc_status rt_cuda_check_run(rt_cuda *c, int wait, symc_error *err);
/* Checks that ptr (a user's input or output, what = "input"/"output") is
 * device memory with at least `need` bytes from ptr to the end of its
 * allocation (cuMemGetAddressRange). */
symc_status rt_cuda_check_buffer(rt_cuda *c, const char *what, const char *name, const void *ptr, size_t need,
                                 symc_error *err);

#endif
