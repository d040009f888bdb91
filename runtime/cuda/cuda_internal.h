/* cuda_internal.h: the rt_cuda state shared by cuda_backend.c (module,
 * memory, kernels, copies), cuda_gemm.c (cuBLASLt), cuda_conv.c (cuDNN) and
 * cuda_tuning.c (build-time tuning's session). Internal to those files. */
#ifndef SYMC_RUNTIME_CUDA_INTERNAL_H
#define SYMC_RUNTIME_CUDA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/cuda/cuda_api.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/plan.h"

typedef struct rt_gemm_state rt_gemm_state; /* cuda_gemm.c */
typedef struct rt_conv_state
    rt_conv_state; /* "cuBLASLt f16 m x n x k (batch b) + bias, relu" for a GEMM step at these slots */
void rt_cuda_gemm_describe(rt_cuda *c, uint32_t step, const int64_t *slots, char *buf, size_t cap);
/* The problem a library step solves at these slots (the tensors bound in
 * c->ptr for a GEMM's alignment) as bytes into buf (*len of them): equal
 * bytes, equal problem. */
symc_status rt_cuda_gemm_signature(rt_cuda *c, uint32_t step, const int64_t *slots, uint8_t *buf, size_t cap,
                                   size_t *len, symc_error *err);
symc_status rt_cuda_conv_signature(const rt_engine *e, uint32_t step, const int64_t *slots, uint8_t *buf, size_t cap,
                                   size_t *len, symc_error *err);

/* cuda_conv.c */

/* Library algorithm choice forced by the tuning session (cuda_tuning.c) for
 * one step (NULL: normal selection). */
typedef struct rt_cuda_force {
    uint32_t step;
    const void *algo; /* cublasLtMatmulAlgo_t* or int32 cuDNN algo id* */
} rt_cuda_force;

/* A context of an engine with regions holds one rt_cuda per region graph
 * (rt_cuda_create_more): the first is the owner of what belongs to the
 * engine and is shared: the constants on the device (consts), the
 * workspace and memory_gen, the capture stream, the library handles and
 * their buffers (cuda_gemm.c, cuda_conv.c), and the error word with its
 * pinned copy and event. The others borrow them through `owner` and never
 * free them; each keeps its modules, functions, per-tensor pointers and
 * offsets, lifetimes, kernel arguments, library step caches and graph
 * cache. Without regions, owner is the state itself. */
#define RT_CUDA_RUN_STREAMS 8
/* an encoded tensor map and the values it was encoded from (cuda_backend.c, encode_tmap) */
typedef struct rt_cuda_tmap {
    CUtensorMap map; /* 64-byte aligned: cuLaunchKernel copies it as the kernel's parameter */
    CUdeviceptr base;
    int64_t vals[3 * RT_TMAP_MAX_RANK];
    int encoded;
} rt_cuda_tmap;
struct rt_cuda {
    const rt_engine *e;
    rt_cuda *owner; /* the context's first state (itself when it is the first) */
    uint32_t index; /* among the owner's states: 0 for the owner */
    rt_cuda *errs;  /* the state whose error word, pinned copy and event this one reports through */
    /* in the owner: each state's graph by index, for naming the node of bad
     * data a state reported through the shared word */
    const rt_engine **family;
    uint32_t n_family;
    const rt_cu_device *dev;
    symrt_allocator alloc; /* alloc.alloc NULL: cuMemAlloc/cuMemFree */
    CUmodule *modules;     /* per engine module (rt_module), NULL where not loaded */
    CUfunction *fns;       /* per kernel */
    int64_t *grid_cap;     /* per step: the most blocks a launch takes (rt_step.resident), 0 for no cap */
    CUdeviceptr *consts;   /* per constant: its device copy */
    CUdeviceptr *ptr;      /* per tensor: where it lives during this enqueue */
    size_t *offset;        /* per tensor: offset in the workspace, SIZE_MAX if not there */
    uint64_t *argv;        /* kernel parameter values (8 bytes each) */
    void **params;         /* pointers into argv (or tmaps), as cuLaunchKernel wants them */
    /* per step, its TMA tensor maps (rt_step.tmaps) as last encoded, and what they were encoded
     * from (the pointer and the slots' values), so a launch at the same values encodes nothing */
    rt_cuda_tmap **tmaps;
    uint32_t max_args;
    CUdeviceptr workspace;
    size_t workspace_size;
    rt_lifetimes lifetimes; /* per tensor, over the steps (runtime/plan.h) */
    int planned;
    int laid_out;        /* c->offset holds rt_cuda_layout's layout for the next bind's slots */
    size_t layout_total; /* its workspace size */
    rt_gemm_state *gemm; /* NULL when the engine has no GEMM step */
    rt_conv_state *conv; /* NULL when the engine has no CONV step */
    rt_cuda_force force;
    /* bad data a kernel found (an index out of range, an integer division by
     * zero): the module's `sc_error` word pair {code, node}, copied after
     * each run into pinned memory and read once `error_event` has passed */
    /* CUDA graphs (on unless symrt_context_set_cuda_graphs turns them off):
     * one instantiated graph per key = the slots, the pointer of every
     * tensor and the memory generation. Graphs are captured on a stream the
     * context owns and launched on the caller's, so any stream works, the
     * legacy default stream included (capturing there is illegal). A new
     * shape runs plainly the first time (that run sizes every workspace and
     * fills the library caches, none of which may happen inside a capture)
     * and is captured the second; a new key whose shape is already captured
     * (only pointers changed) is captured at once. When the cache is full the
     * least recently used graph is destroyed and the new capture instantiated
     * (never cuGraphExecUpdate: see new_entry). A key whose capture fails
     * runs plainly from then on; other keys still try. */
    int graphs;          /* enabled */
    CUstream capture;    /* the context's own stream for captures (created on first use) */
    uint64_t memory_gen; /* bumped whenever a workspace is reallocated */
    struct rt_graph_entry *graph_cache;
    uint32_t n_graphs;
    uint64_t graph_clock;
    uint64_t *graph_key; /* scratch for this call's key; a new cache entry takes it over, so a
                                replayed shape allocates nothing */
    symrt_graph_stats graph_stats;
    CUdeviceptr error_word;
    uint32_t *error_host;
    CUevent error_event;
    int error_pending;
    /* in the state holding the word: which states (bit = index, the last bit
     * for 63 and above) ran since the word was last seen clear, and which
     * of them after the pending copy was queued: a flag names the node of
     * the one graph that can have set it, or each candidate */
    uint64_t error_ran, error_ran_after;
    /* sizes known only after a node runs (rt_engine.produced): per produced
     * symbol, the last step of its producer, after which the count cell
     * (rt_produced.count_tensor) is copied into count_host (pinned) and the
     * stream synchronized before the run hook gets it (a sync point; graphs
     * are off for such an engine) */
    uint32_t *produced_step;
    int64_t *count_host;
    /* host I/O (symrt_context_set_host_io; cuda_backend.c host_run): in the
     * owner, the switch, the stream its runs use and per input then output
     * position a device buffer (io_dev) of io_cap bytes; per state, the
     * tensor-address table a run uses in place of the caller's */
    int host_io;
    CUstream io_stream;
    /* in the owner: the streams this context's runs were queued on, each with
     * an event recorded after its last run there, and the stream of the run
     * in progress (cur_stream while in_run): rt_cuda_quiesce waits for these
     * rather than for the whole CUDA context, which fails while another
     * context of the process (a server's other instance) captures a graph.
     * More streams than the table: run_streams_full, and quiesce waits for
     * the whole CUDA context after all. */
    CUstream run_stream[RT_CUDA_RUN_STREAMS];
    CUevent run_event[RT_CUDA_RUN_STREAMS];
    uint32_t n_run_streams;
    int run_streams_full, in_run;
    CUstream cur_stream;
    CUdeviceptr *io_dev;
    size_t *io_cap;
    void **host_addr;
};

enum { RT_GRAPH_SEEN, RT_GRAPH_CAPTURED, RT_GRAPH_FAILED };
#define RT_GRAPH_CACHE 8
typedef struct rt_graph_entry {
    uint64_t hash;
    uint64_t *key; /* slots, then tensor pointers, then the memory generation */
    size_t key_len;
    CUgraphExec exec;
    int state;     /* RT_GRAPH_SEEN, RT_GRAPH_CAPTURED or RT_GRAPH_FAILED */
    uint64_t used; /* for least-recently-used eviction */
} rt_graph_entry;

/* Device memory through the user's allocator or cuMemAlloc (256-aligned). */
symc_status rt_cuda_alloc(rt_cuda *c, size_t bytes, CUdeviceptr *p, const char *what, symc_error *err);
/* Waits until no work this context queued (earlier runs on any stream, and
 * the run in progress) can still use its memory: before a buffer it owns is
 * freed or replaced. */
symc_status rt_cuda_quiesce(rt_cuda *c, symc_error *err);
void rt_cuda_free(rt_cuda *c, CUdeviceptr p);
/* Bytes of tensor t at these slots; SIZE_MAX on overflow. */
size_t rt_cuda_tensor_bytes(const rt_engine *e, const int64_t *slots, uint32_t t);
/* "node 'x'" prefix for errors of a step */
const char *rt_cuda_node_name(const rt_engine *e, const rt_step *s);

/* cuda_gemm.c */
symc_status rt_cuda_gemm_create(rt_cuda *c, symc_error *err);
void rt_cuda_gemm_destroy(rt_cuda *c);
symc_status rt_cuda_gemm_run(rt_cuda *c, uint32_t step, const int64_t *slots, CUstream stream, symc_error *err);
/* cuBLASLt setups made and taken from another step of the same call, so far (0 without GEMM steps) */
void rt_cuda_gemm_setup_stats(const rt_cuda *c, uint64_t *made, uint64_t *shared);
/* (the sizes a GEMM step solves at some slots: rt_cuda_gemm_sizes, runtime/cuda/tuned_pick.h) */
/* Up to `cap` heuristic candidates for a GEMM step at these slots. */
symc_status rt_cuda_gemm_candidates(rt_cuda *c, uint32_t step, const int64_t *slots, cublasLtMatmulAlgo_t *algos,
                                    int cap, int *n, symc_error *err);

/* "cuBLASLt f16 m x n x k (batch b) + bias, relu" for a GEMM step at these slots */
void rt_cuda_gemm_describe(rt_cuda *c, uint32_t step, const int64_t *slots, char *buf, size_t cap);
/* The problem a library step solves at these slots (the tensors bound in
 * c->ptr for a GEMM's alignment) as bytes into buf (*len of them): equal
 * bytes, equal problem. */
symc_status rt_cuda_gemm_signature(rt_cuda *c, uint32_t step, const int64_t *slots, uint8_t *buf, size_t cap,
                                   size_t *len, symc_error *err);
symc_status rt_cuda_conv_signature(const rt_engine *e, uint32_t step, const int64_t *slots, uint8_t *buf, size_t cap,
                                   size_t *len, symc_error *err);

/* cuda_conv.c */
symc_status rt_cuda_conv_create(rt_cuda *c, symc_error *err);
void rt_cuda_conv_destroy(rt_cuda *c);
symc_status rt_cuda_conv_run(rt_cuda *c, uint32_t step, const int64_t *slots, CUstream stream, symc_error *err);
/* Up to `cap` of cuDNN's algorithm ids for a CONV step at these slots that
 * the heuristic says run with a workspace under the cap, ranked. */
symc_status rt_cuda_conv_candidates(rt_cuda *c, uint32_t step, const int64_t *slots, int32_t *ids, int cap, int *n,
                                    symc_error *err);

/* "cuDNN f16 x=[n, c, h, w] w=[o, c/g, kh, kw] g, algo N (name), fused bias+ReLU" for a
 * CONV step at these slots: the algorithm its cache holds for that shape */
void rt_cuda_conv_describe(rt_cuda *c, uint32_t step, const int64_t *slots, char *buf, size_t cap);

/* cuda_backend.c: captures what run(ctx, stream) enqueues on `stream` into
 * a new graph (*graph, the caller's to instantiate and destroy); an error of
 * run or of the capture leaves *graph NULL. Nothing runs on the GPU. */
typedef symc_status (*rt_cuda_enqueue_fn)(void *ctx, CUstream stream, symc_error *err);
symc_status rt_cuda_capture(CUstream stream, rt_cuda_enqueue_fn run, void *ctx, CUgraph *graph, symc_error *err);

/* cuda_backend.c: binds tensors to device pointers for these slots (plans
 * the workspace when needed) without running anything; the tuner uses it. */
symc_status rt_cuda_bind(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr, CUstream stream,
                         symc_error *err);

#endif
