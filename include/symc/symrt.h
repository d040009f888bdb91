/* symrt.h: the symc runtime. Load an engine, set input shapes, run.
 *
 * It is familiar to TensorRT users:
 *
 *   symrt_engine *e;   symrt_engine_load_file("m.symx", &e, &err);
 *   symrt_context *c;  symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err);
 *   symrt_set_input_shape(c, "x", (int64_t[]){4, 196, 768}, 3, &err);
 *   symrt_get_tensor_shape(c, "y", dims, &rank, &err);      // sizes for this input shape
 *   symrt_set_tensor_address(c, "x", x, x_bytes, &err);
 *   symrt_set_tensor_address(c, "y", y, y_bytes, &err);
 *   symrt_enqueue(c, stream, &err);
 *
 * One engine serves every input size inside its declared ranges. A shape
 * outside them is refused with a message that names the input, the dim, the
 * symbol and the allowed set. Engines are immutable and may be shared across
 * threads; a context belongs to one thread at a time (use one context per
 * thread or stream). Every call returns a status and fills the optional
 * symc_error.
 *
 * The CUDA backend (SYMRT_BACKEND_CUDA) runs the engine's GPU code on one of
 * the visible GPUs (device 0 unless symrt_context_create_on names another),
 * in its primary context (the one the CUDA runtime uses too): addresses are
 * device pointers on that GPU, stream is a CUstream / cudaStream_t (NULL =
 * the default stream), and symrt_enqueue only queues work: synchronize the
 * stream before reading outputs. symrt_context_set_host_io makes a context
 * take host memory instead and return with the outputs there, for callers
 * without the CUDA toolkit (a server backend). The driver and the CUDA
 * libraries are loaded at run time; without them context creation fails
 * with SYMC_ERR_DEVICE and one line saying what is missing. */
#ifndef SYMC_SYMRT_H
#define SYMC_SYMRT_H

#include <stddef.h>
#include <stdint.h>

#include "symc/dtype.h"
#include "symc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct symrt_engine symrt_engine;
typedef struct symrt_context symrt_context;

typedef enum symrt_backend {
    SYMRT_BACKEND_REF = 0, /* the CPU reference backend: exact, slow, no GPU needed */
    SYMRT_BACKEND_CUDA = 1 /* the engine's kernels and cuBLASLt/cuDNN calls on a CUDA stream */
} symrt_backend;

/* Where a context's activation memory comes from; NULL means malloc/free
 * (reference backend) or cuMemAlloc/cuMemFree (CUDA backend). For the CUDA
 * backend alloc must return device memory (alignment 256) of the current
 * GPU, and free is called only once no queued work uses the memory. */
typedef struct symrt_allocator {
    void *(*alloc)(void *ctx, size_t size, size_t alignment);
    void (*free)(void *ctx, void *ptr);
    void *ctx;
} symrt_allocator;

/* ---- engines -------------------------------------------------------------- */
/* Loading checks the format and version, then every index and size, before
 * it allocates anything. A truncated or corrupt file is an error, never a crash.
 * symrt_engine_load_file reads regular files only (a directory, device or
 * FIFO is refused with what it is) of at most 2 GiB + 16 bytes, the most an
 * engine holds. symrt_engine_load takes the bytes at any address (bytes not
 * 8-aligned are copied first). */
symc_status symrt_engine_load_file(const char *path, symrt_engine **out, symc_error *err);
symc_status symrt_engine_load(const void *data, size_t size, symrt_engine **out, symc_error *err);
void symrt_engine_destroy(symrt_engine *e);

typedef struct symrt_io_info {
    const char *name;
    symc_dtype dtype;
    int32_t rank;
} symrt_io_info;
uint32_t symrt_engine_num_inputs(const symrt_engine *e);
uint32_t symrt_engine_num_outputs(const symrt_engine *e);
symc_status symrt_engine_input(const symrt_engine *e, uint32_t i, symrt_io_info *out, symc_error *err);
symc_status symrt_engine_output(const symrt_engine *e, uint32_t i, symrt_io_info *out, symc_error *err);
/* Dim d of input i (or output i) as text (snprintf semantics into buf): a
 * number for a fixed dim, the symbol's name ("B") or an expression over
 * symbols ("(S*2)"), as `symc inspect` prints shapes. */
symc_status symrt_engine_input_dim(const symrt_engine *e, uint32_t i, int32_t d, char *buf, size_t cap,
                                   symc_error *err);
symc_status symrt_engine_output_dim(const symrt_engine *e, uint32_t i, int32_t d, char *buf, size_t cap,
                                    symc_error *err);

/* The symbols the engine was compiled for: min <= value <= max, a multiple of
 * multiple_of; opt is the size it was tuned for. */
typedef struct symrt_symbol_info {
    const char *name;
    int64_t min, opt, max, multiple_of;
} symrt_symbol_info;
uint32_t symrt_engine_num_symbols(const symrt_engine *e);
symc_status symrt_engine_symbol(const symrt_engine *e, uint32_t i, symrt_symbol_info *out, symc_error *err);
/* How many of those symbols are sizes known only after a run (NonZero's
 * count: see symrt_context_sync_shapes); their range is [0, the most their
 * bound can be]. 0 for an engine whose every size follows from the input
 * shapes. */
uint32_t symrt_engine_num_produced(const symrt_engine *e);

/* Regions (an engine of several graphs, symc_compile_regions): 0 for an
 * engine of one graph. Region r's name is its condition as text ("B == 1",
 * "2 <= B <= 32 and S <= 64"); the runtime runs the first region whose
 * condition holds at the input shapes. */
typedef struct symrt_region_info {
    const char *name;
    uint32_t steps; /* GPU steps (0 for an engine without GPU code) */
    uint32_t nodes; /* graph nodes */
} symrt_region_info;
uint32_t symrt_engine_num_regions(const symrt_engine *e);
symc_status symrt_engine_region(const symrt_engine *e, uint32_t r, symrt_region_info *out, symc_error *err);

/* Whether a server may join requests along the batch (dim 0 of every input)
 * into one run and split the outputs' rows back: the batch-row proof made
 * when the engine was built (every output row b computed from input rows b
 * alone, by every graph the engine may run, whatever the batch size):
 *   SYMRT_BATCH_ROWS_UNKNOWN      the engine was built before symc stored the
 *                                 verdict: nothing is known; run requests
 *                                 separately (or rebuild the engine);
 *   SYMRT_BATCH_ROWS_NONE         no batch axis: dim 0 of the inputs is not
 *                                 one symbol (a fixed size, or two symbols);
 *   SYMRT_BATCH_ROWS_BATCHED      dim 0 of every input is one symbol, but row
 *                                 independence is not proved (a reduction or
 *                                 softmax over the batch, a reshape that mixes
 *                                 rows, an op the proof does not cover, regions
 *                                 chosen by the batch size): run requests
 *                                 separately;
 *   SYMRT_BATCH_ROWS_INDEPENDENT  proved: requests may run joined along dim 0.
 * The proof is over the computation as written, exact on the reference
 * backend; a library call (a GEMM) may round a row differently at another
 * batch size on the GPU. *batch_symbol: the batch symbol's index
 * (symrt_engine_symbol) for BATCHED and INDEPENDENT, else UINT32_MAX. why
 * (snprintf semantics into cap bytes; may be NULL with cap 0): for NONE and
 * BATCHED the reason, naming the input, or the output, node and op where the
 * proof stops; "" otherwise. batch_symbol may be NULL. */
typedef enum symrt_batch_rows {
    SYMRT_BATCH_ROWS_UNKNOWN = 0,
    SYMRT_BATCH_ROWS_NONE = 1,
    SYMRT_BATCH_ROWS_BATCHED = 2,
    SYMRT_BATCH_ROWS_INDEPENDENT = 3
} symrt_batch_rows;
symc_status symrt_engine_batch_rows(const symrt_engine *e, symrt_batch_rows *state, uint32_t *batch_symbol, char *why,
                                    size_t cap, symc_error *err);

/* ---- contexts ---------------------------------------------------------------
 * A context holds the shapes, addresses and activation memory of one run, and
 * belongs to one thread at a time. Every call below that takes a context
 * refuses at once, without blocking, when another thread is inside a call on
 * the same context: SYMC_ERR_INVALID_ARG, "context N of engine 'name' is in
 * use by another thread" (contexts are numbered per engine from 1). A context
 * may move to another thread between calls; symrt_context_destroy must not
 * run while another thread may still call it. Contexts of one engine run in
 * parallel freely. */
symc_status symrt_context_create(const symrt_engine *e, symrt_backend backend, const symrt_allocator *alloc,
                                 symrt_context **out, symc_error *err);
void symrt_context_destroy(symrt_context *c);
/* A context on one device of the backend: for SYMRT_BACKEND_CUDA an ordinal
 * among the GPUs this process sees (CUDA_VISIBLE_DEVICES decides which),
 * for the reference backend 0. A device outside 0..count-1 is refused,
 * naming the count. symrt_context_create is this on device 0. The
 * context's memory, streams and buffers are that GPU's: a device pointer of
 * another GPU is refused at symrt_enqueue, naming both. */
symc_status symrt_context_create_on(const symrt_engine *e, symrt_backend backend, int32_t device,
                                    const symrt_allocator *alloc, symrt_context **out, symc_error *err);
/* How many devices the backend offers this process (1 for the reference
 * backend; the visible GPUs for CUDA, an error naming why when none). */
symc_status symrt_device_count(symrt_backend backend, int32_t *count, symc_error *err);

/* Checks at once what this input alone decides: its rank, the symbols it
 * binds against their ranges, the dims the model fixes (a wrong one names
 * the input, the dim, the value given and the one needed) and its own size
 * in bytes (refused when it does not fit in 64 bits). A refused shape leaves
 * the context's earlier one. Checks that need every input (dims shared with
 * or computed from other inputs, guards, the sizes of the other tensors and
 * of the workspace) run once every input has a shape, at
 * symrt_get_tensor_shape or symrt_enqueue, so inputs whose dims are linked
 * can be changed one at a time; until the shapes agree those calls refuse
 * with the same message. */
symc_status symrt_set_input_shape(symrt_context *c, const char *name, const int64_t *dims, int32_t rank,
                                  symc_error *err);
/* Shape of any input or output for the current input shapes. dims has room
 * for 8. A dim known only after a run is -1 until the run's shapes are
 * synced (see symrt_context_sync_shapes below). */
symc_status symrt_get_tensor_shape(symrt_context *c, const char *name, int64_t *dims, int32_t *rank, symc_error *err);
/* Sizes known only after a run (an engine built from a model with NonZero,
 * Compress, Unique or NonMaxSuppression: outputs whose size depends on the
 * data). Memory is planned for each such size's bound, and
 * symrt_get_tensor_shape reports -1 for a dim that depends on one until a
 * run's shapes are synced. The sequence:
 *   symrt_get_tensor_max_shape(c, "y", max, &rank, &err); // what y's buffer must hold
 *   symrt_set_tensor_address(c, "y", y, bytes_of(max), &err);
 *   symrt_enqueue(c, stream, &err);
 *   symrt_context_sync_shapes(c, &err);     // waits for the run (the reference backend has finished already)
 *   symrt_get_output_shape(c, "y", dims, &rank, &err); // y's real shape; its data is at the start of the buffer,
 *                                                      // contiguous at that shape
 * A run whose data exceed a declared bound, or break a condition of the
 * model that depends on such a size, fails (that run's outputs must not be
 * used) with a message naming the node, the size and its bound. For an
 * engine without such sizes the max shape is the shape, sync returns at
 * once, and symrt_get_output_shape equals symrt_get_tensor_shape. Setting a
 * different input shape forgets the last run's shapes; a new symrt_enqueue
 * replaces them once synced. */
symc_status symrt_get_tensor_max_shape(symrt_context *c, const char *name, int64_t *dims, int32_t *rank,
                                       symc_error *err);
symc_status symrt_context_sync_shapes(symrt_context *c, symc_error *err);
symc_status symrt_get_output_shape(symrt_context *c, const char *name, int64_t *dims, int32_t *rank, symc_error *err);
/* Binds an input or output to memory of `size` bytes (host memory for the
 * reference backend, device memory for the CUDA backend). Every input and
 * output needs one, an output the engine holds as a constant too (it is
 * copied into the buffer). A buffer smaller than the tensor at the current
 * shape is refused at symrt_enqueue; the CUDA backend also refuses a pointer
 * that is not device memory, or whose allocation ends before the tensor
 * does. */
symc_status symrt_set_tensor_address(symrt_context *c, const char *name, void *ptr, size_t size, symc_error *err);
/* Runs the model. The reference backend runs synchronously and ignores
 * stream; the CUDA backend queues the work on stream (a CUstream) and
 * returns. */
symc_status symrt_enqueue(symrt_context *c, void *stream, symc_error *err);

/* Host I/O (enable = 1; 0 turns it off): the addresses given to
 * symrt_set_tensor_address are host memory whatever the backend. On the
 * CUDA backend each run copies the inputs to device buffers the context
 * keeps (grown to the largest size seen), runs on a stream the context
 * owns, copies the outputs back and returns once they are in host memory,
 * reporting bad data a kernel flagged in that run at once; the stream given
 * to symrt_enqueue must be NULL, and symrt_context_profile is refused. On
 * the reference backend, whose memory is host memory already, it changes
 * nothing but the stream rule. */
symc_status symrt_context_set_host_io(symrt_context *c, int enable, symc_error *err);

/* Warm-up: runs the engine once at each point its build tuned library calls
 * at (per graph; opt where the engine records none), with zero inputs, so
 * that every library kernel the tuned choices name is loaded and has run
 * before the first real call at a new shape: a cuBLASLt or cuDNN kernel's
 * first launch in a process costs 3-16 ms of module loading. Call it once
 * after creating a context (a server's instance start-up); it is
 * synchronous, runs through the host-I/O path with CUDA graphs off, and
 * needs no buffers from the caller. A point the model's conditions refuse
 * is skipped, and bad data the zeros make is no error here. Afterwards the
 * context has no input shapes and no addresses (set them again), its
 * host-I/O and graph settings as before; a context not in host-I/O mode
 * keeps device buffers of its inputs' and outputs' largest warm sizes.
 * *points (may be NULL): how many ran. The reference backend has nothing to
 * load: none runs. */
symc_status symrt_context_warm(symrt_context *c, uint32_t *points, symc_error *err);

/* Host memory for a host-I/O context's buffers that its copies run fastest
 * from: page-locked on the CUDA backend (the copies go by DMA, with no
 * staging copy through the driver's own pinned buffers), plain memory on the
 * reference backend. *ptr is aligned for every tensor type; bytes 0 gives a
 * valid pointer. Free it with symrt_context_host_free on the same context
 * before the context is destroyed. Pinned memory is a scarce resource of
 * the host: allocate it once and reuse it, as Triton's backend does for its
 * gather buffers. */
symc_status symrt_context_host_alloc(symrt_context *c, size_t bytes, void **ptr, symc_error *err);
/* Frees what symrt_context_host_alloc gave (NULL: nothing). */
void symrt_context_host_free(symrt_context *c, void *ptr);

/* The region the current input shapes run in (an engine with regions),
 * once every input has a shape; -1 for an engine of one graph. A shape in no
 * region is refused here as at symrt_enqueue, naming each region and the
 * relation that fails there. */
symc_status symrt_context_region(symrt_context *c, int32_t *region, symc_error *err);

/* Bad data that only shows while running (a gather index outside its axis,
 * an integer division by zero): the reference backend refuses it in
 * symrt_enqueue itself; a CUDA kernel cannot stop, so it flags the node and
 * the flag is reported by the next symrt_enqueue on this context, or by this
 * call, which waits for the last run. Either way the error names the node and
 * that run's outputs must not be used. */
symc_status symrt_context_check(symrt_context *c, symc_error *err);

/* CUDA graphs (CUDA backend, on by default; enable = 0 turns them off):
 * each distinct key (input shapes and tensor addresses) is run plainly the
 * first time, captured into a graph the second time and replayed from then
 * on, so a repeated shape costs one graph launch instead of one launch per
 * kernel. A key whose shapes are already captured (only buffers moved) is
 * captured at once. Any stream works, the legacy default stream (NULL)
 * included: graphs are captured on a stream the context owns and launched
 * on the caller's. Up to 8 keys per context are kept; past that the least
 * recently used graph is replaced (destroyed, the new capture instantiated).
 * A key whose capture fails runs plainly from then on; the others keep
 * their graphs. No-op on the reference backend. */
symc_status symrt_context_set_cuda_graphs(symrt_context *c, int enable, symc_error *err);

/* What a context's CUDA graphs did so far (all zero on the reference
 * backend): a way to see that a steady loop replays. */
typedef struct symrt_graph_stats {
    uint64_t replays;  /* enqueues that launched a captured graph (the capturing one included) */
    uint64_t captures; /* graphs captured and instantiated */
    uint64_t updates;  /* always 0: symc no longer installs a capture into an existing graph */
    uint64_t plain;    /* enqueues run step by step: graphs off, a shape's first run, a failed key */
    uint64_t failed;   /* captures that failed (that key runs plainly from then on) */
    /* the first call at a new shape: cuBLASLt setups (descriptors and a checked algorithm, 15-25 us
     * each) made, and those a step took from another step making the same call (a transformer's
     * layers: made once per distinct GEMM, not per layer) */
    uint64_t setups_made;
    uint64_t setups_shared;
} symrt_graph_stats;
symc_status symrt_context_graph_stats(symrt_context *c, symrt_graph_stats *out, symc_error *err);

/* Per-step GPU and host time (CUDA backend): runs the model once like
 * symrt_enqueue, with a CUDA event recorded before every step and after the
 * last, waits for it, and fills steps[0..min(cap, n)) with each step's time,
 * the host time its enqueue took (at a shape's first run that holds the
 * libraries' per-shape setup: descriptors, algorithm choice, plans) and what
 * it runs; *n_steps gets the engine's step count (call with cap 0 to size the
 * array: then nothing runs). A step is one generated kernel (a fused group of IR nodes, named
 * after the first), one cuBLASLt or cuDNN call, or one copy. Graphs are not
 * used for this run, and the events serialize the steps, so the sum of the
 * steps is a little more than a plain run. The reference backend refuses
 * (SYMC_ERR_UNSUPPORTED). */
typedef struct symrt_step_profile {
    const char *node; /* the IR node the step implements (the first of a fused group) */
    const char *op;   /* that node's op ("conv", "matmul", ...) */
    const char *kind; /* "kernel", "gemm", "conv", "copy" */
    char detail[192]; /* kernel name and launch, or the library call, its problem and algorithm */
    float start_ms;   /* from the first event of this run */
    float ms;         /* GPU time of the step */
    float host_us;    /* host time enqueueing the step */
} symrt_step_profile;
symc_status symrt_context_profile(symrt_context *c, void *stream, symrt_step_profile *steps, uint32_t cap,
                                  uint32_t *n_steps, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
