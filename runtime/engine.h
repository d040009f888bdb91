/* runtime engine: the in-memory form of a .symx file and its codec.
 *
 * An rt_engine is plain C arrays: symbols, how each is bound from an input
 * dim, one shape program whose output slots hold every size the model needs
 * (tensor dims, dim attributes, guard sides), tensors, nodes and constants.
 * The codec (engine_fb.cc, the one C++ translation unit for runtime/engine.fbs)
 * encodes one for the compiler and decodes untrusted bytes for the runtime:
 * FlatBuffers verifier first, then every index, count and slot checked,
 * then the copy. Decoded engines are immutable and may be shared by threads. */
#ifndef SYMC_RUNTIME_ENGINE_H
#define SYMC_RUNTIME_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/ops.h" /* ir_op, IR_MAX_RANK: the op table shared with the compiler */
#include "symc/attr.h"  /* the symc_attr layout nodes keep */
#include "symc/dtype.h" /* symc_dtype_size, symc_dtype_name */
#include "symc/precision.h"
#include "symshape/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Format 3: a library step carries a list of tuned entries (rt_tuned), not
 * one choice. Format 4: a GEMM step may implement a 1x1 convolution (its
 * node a conv2d; see RT_STEP_GEMM), which a format-3 runtime would misread.
 * Format 5: the generated kernels are in several modules (rt_module), each
 * compiled on its own, and each kernel names its module.
 * Format 6: regions (rt_region), several graphs in one engine. Only an engine
 * with regions is written as format 6: one without them is written as
 * format 5, byte for byte as before regions existed, so older runtimes still
 * read it (and a format-5 runtime refuses a regions engine by its version
 * instead of running its empty root). The decoder accepts
 * RT_ENGINE_FORMAT_MIN..RT_ENGINE_FORMAT_VERSION and refuses a format-5 file
 * that carries regions. Files of any other version are refused with a
 * message that says which versions are involved and to rebuild the engine
 * (engines are build artifacts tied to the library versions they were tuned
 * with anyway).
 * Format 7: sizes known only after a node runs (rt_produced: nonzero's
 * count). Written only when an engine has produced symbols; every other
 * engine stays format 5 (or 6 with regions) byte for byte, and a format-6
 * runtime refuses a format-7 file by its version.
 * The batch-row verdict (rt_batch_rows) is an optional table of any format,
 * as Step.arg_writes was: it changes no number, since a runtime that
 * predates it skips it and loses nothing (it claims nothing), and an engine
 * built before it reads as RT_BATCH_ROWS_UNKNOWN. Step.resident (rt_step) is
 * one too: a runtime that predates it launches the whole grid, which the
 * kernels' grid-stride loop runs the same.
 * Format 8: kernel steps that take TMA tensor maps (rt_tmap, RT_ARG_TMAP). Written only when a
 * step has one; every other engine keeps its format, and a format-7 runtime refuses a format-8
 * file by its version. */
#define RT_ENGINE_FORMAT_VERSION 8u
#define RT_ENGINE_FORMAT_MIN 5u
#define RT_NONE 0xffffffffu
#define RT_RESIDENT_MAX 64u  /* rt_step.resident */
#define RT_TMAP_MAX_RANK 5u  /* rt_tmap.rank */
#define RT_STEP_MAX_TMAPS 8u /* rt_step.n_tmaps */

typedef struct rt_symbol {
    const char *name;
    int64_t min, opt, max, multiple_of;
} rt_symbol;

typedef struct rt_source {
    uint32_t symbol, input, dim; /* input: index into rt_engine.inputs */
} rt_source;

typedef struct rt_guard {
    sym_rel rel;
    uint32_t lhs, rhs;   /* program slots */
    const char *message; /* the node and relation, shown when it fails */
    /* 0: checked once the input shapes are set; k > 0: it mentions a produced
     * symbol, and is checked after produced[k-1] (the last of them to be
     * produced) has run, at the real values (format 7) */
    uint32_t after;
} rt_guard;

/* A size known only after a node runs (format 7; docs/PLAN-data-dependent.md):
 * symbol `symbol` is dim `dim` of output `output` of node `node`, the
 * producer (ir_produced_dim: nonzero's count). It is no input dim: no
 * rt_source binds it. Memory is planned at its capacity, output k of the
 * engine's capacity_program (the bound with every produced symbol in it
 * replaced by its own bound, so it reads input-dim symbols only); the kernel
 * writes at most that many and reports the real value, which must not exceed
 * slot `bound` of the shape program (the bound at the real values of the
 * symbols produced before it). Produced symbols are listed in the order
 * their producers run. */
typedef struct rt_produced {
    uint32_t symbol;  /* index into symbols */
    uint32_t node;    /* index into nodes */
    uint32_t output;  /* index into that node's outputs */
    uint32_t dim;     /* a dim of that output, whose slot is the symbol */
    uint32_t bound;   /* program slot */
    const char *what; /* for messages: "the count of non-zero elements of node 'nz' (nonzero)" */
    /* With GPU code: the tensor (i64 [1], a workspace temporary the CUDA
     * target adds; codegen cg_cuda_count_cell) into which the producer's
     * kernels write the real count; the CUDA backend copies it to the host
     * after the producer's last step (a sync point) and calls the run hook
     * with it. The producer's last step reads it, so the memory planner
     * keeps it alive up to that copy. RT_NONE without GPU code. */
    uint32_t count_tensor;
} rt_produced;

typedef struct rt_tensor {
    const char *name;
    symc_dtype dtype;
    int32_t rank;
    uint32_t dims[IR_MAX_RANK]; /* program slots */
    uint32_t constant;          /* index into constants, or RT_NONE */
} rt_tensor;

/* Attributes keep the symc_attr layout; for SYMC_ATTR_DIMS, dims[i] is a
 * program slot (RT_NONE for -1). */
typedef struct rt_node {
    ir_op op;
    const char *name, *source;
    uint32_t n_in, n_out, n_attrs;
    const uint32_t *in, *out;
    const symc_attr *attrs;
} rt_node;

typedef struct rt_constant {
    const uint8_t *data;
    size_t size;
} rt_constant;

/* The batch-row proof made at build time (ir_batch_rows, ir/rows.c: every
 * output row b computed from input rows b alone), the public
 * symrt_batch_rows' states and numbers: whether a server may join requests
 * along dim 0. UNKNOWN: an engine built before the verdict was stored (the
 * field is absent), never treated as independent. NONE: no batch axis (dim
 * 0 of the inputs is not one symbol). BATCHED: a batch symbol, independence
 * not proved (why says where). INDEPENDENT: proved for every graph the engine
 * may run. The root holds it: a region graph's is not written (the encoder
 * skips it; the decoder refuses one and leaves it UNKNOWN). */
#define RT_BATCH_ROWS_UNKNOWN 0
#define RT_BATCH_ROWS_NONE 1
#define RT_BATCH_ROWS_BATCHED 2
#define RT_BATCH_ROWS_INDEPENDENT 3
/* An fp32 island of a half engine (the precision pass's, ir_island): node `node` (op `op`) kept
 * fp32 though it reads or writes f32; kind a short label of the reason, why the reason. For
 * `symc inspect`; nothing runs from it. */
typedef struct rt_island {
    const char *node, *op, *kind, *why;
} rt_island;

typedef struct rt_batch_rows {
    uint8_t state;   /* RT_BATCH_ROWS_* */
    uint32_t symbol; /* BATCHED, INDEPENDENT: index into symbols (bound from input 0 dim 0); else RT_NONE */
    const char *why; /* NONE, BATCHED: the output, node and reason; NULL or "" otherwise */
} rt_batch_rows;

/* ---- GPU part (format 2 on). The reference backend runs `nodes`; the CUDA
 * backend runs `steps`, in order, on one stream. ------------------------- */

typedef enum rt_step_kind {
    RT_STEP_KERNEL = 0, /* an NVRTC kernel of the engine's module */
    RT_STEP_GEMM = 1,   /* cuBLASLt matmul: tensors {a, b, c, bias, d}; when `node` is a conv2d (format 4), a 1x1
                           convolution, stride 1, no pads, one group: {w, x, residual (beta 1), bias per output
                           channel, y}, one GEMM per image (runtime/cuda/cuda_gemm.c) */
    RT_STEP_CONV = 2,   /* cuDNN convolution: tensors {x, w, bias, y[, z]} (z: a residual added before the bias and
                           activation); attributes from `node` */
    RT_STEP_COPY = 3    /* device-to-device copy: tensors {src, dst}, bytes of dst */
} rt_step_kind;
#define RT_STEP_KIND_COUNT 4

/* 1 when a library or copy step writes its tensor k (GEMM d, CONV y, COPY dst), 0 when it reads it:
 * the one statement of it, for the build's dataflow check (codegen/build_engine.c) and the loader's */
static inline int rt_step_lib_writes(uint8_t kind, uint32_t k) {
    return (kind == RT_STEP_GEMM && k == 4) || (kind == RT_STEP_CONV && k == 3) || (kind == RT_STEP_COPY && k == 1);
}

typedef enum rt_arg_kind {
    RT_ARG_TENSOR = 0, /* value: tensor index; passed as a device pointer */
    RT_ARG_SLOT = 1,   /* value: program slot; passed as a 64-bit integer */
    RT_ARG_TMAP = 2    /* value: index into the step's tmaps; passed as a 128-byte CUtensorMap (format 8) */
} rt_arg_kind;

typedef struct rt_arg {
    uint8_t kind;
    uint32_t value;
} rt_arg;

/* A TMA tensor map (format 8): a kernel's copies of boxes of `tensor` by the tensor memory
 * accelerator (cp.async.bulk.tensor). The runtime encodes it at launch (cuTensorMapEncodeTiled)
 * from the tensor's pointer plus slots[offset] elements, extents slots[dims[i]] and strides
 * slots[strides[i]] elements (i >= 1; dim 0 is contiguous), innermost first, the element type
 * the tensor's; rows past an extent read as zeros. */
typedef struct rt_tmap {
    uint32_t tensor;
    uint32_t offset;                    /* slot */
    uint32_t rank;                      /* 1..RT_TMAP_MAX_RANK */
    uint32_t dims[RT_TMAP_MAX_RANK];    /* slots */
    uint32_t strides[RT_TMAP_MAX_RANK]; /* slots; [0] unused (RT_NONE) */
    uint32_t box[RT_TMAP_MAX_RANK];     /* 1..256 each */
    uint8_t swizzle;                    /* 0 none, 1: 32 B, 2: 64 B, 3: 128 B (CUtensorMapSwizzle's order) */
} rt_tmap;

/* Epilogues fused into a library call (applied after alpha*op(a)op(b) +
 * beta*c and the bias). */
typedef enum rt_epilogue {
    RT_EPI_NONE = 0,
    RT_EPI_RELU = 1,
    RT_EPI_GELU = 2 /* tanh approximation only when the node asked for it; see codegen */
} rt_epilogue;

/* Math used by library calls: the public symc_precision (symc/precision.h),
 * under the runtime's names. Storage stays fp32; FP16/BF16/TF32 let the
 * tensor cores round operands, accumulating in fp32. */
typedef symc_precision rt_precision;
#define RT_PREC_FP32 SYMC_PRECISION_FP32
#define RT_PREC_TF32 SYMC_PRECISION_TF32
#define RT_PREC_FP16 SYMC_PRECISION_FP16
#define RT_PREC_BF16 SYMC_PRECISION_BF16

#define RT_STEP_MAX_TENSORS 5
#define RT_ALGO_MAX 256      /* bytes of one tuned choice, at most */
#define RT_GEMM_ALGO_SIZE 64 /* sizeof(cublasLtMatmulAlgo_t), checked in cuda_gemm.c */
#define RT_CONV_ALGO_SIZE 4  /* a cudnnConvolutionFwdAlgo_t as int32 */
#define RT_TUNED_MAX 16      /* tuned entries of one library step */

/* One library choice timed at build time: the problem sizes it was timed at
 * (GEMM: m, n, k, batch as cuda_gemm.c plans the call, after folding a
 * broadcast batch into m; CONV: n, h, w of x, then 0), the choice
 * (cublasLtMatmulAlgo_t bytes, or a cuDNN forward algorithm id as int32) and
 * its median time there (0 when not recorded). The runtime picks among a
 * step's entries with rt_cuda_tune_pick (runtime/cuda/tuned_pick.h). */
typedef struct rt_tuned {
    int64_t at[4];
    float ms;
    uint32_t algo_size; /* RT_GEMM_ALGO_SIZE or RT_CONV_ALGO_SIZE */
    const uint8_t *algo;
} rt_tuned;

typedef struct rt_step {
    uint8_t kind;  /* rt_step_kind */
    uint32_t node; /* the IR node it implements (the first of a fused group) */
    /* RT_STEP_KERNEL: grid = ceil(slots[work] / per_block) blocks of `block`
     * threads (capped; kernels loop grid-stride over `work`), `shared` bytes
     * of dynamic shared memory, parameters `args` in order. Not launched when
     * slots[work] == 0. */
    uint32_t kernel;    /* index into kernel_names */
    uint32_t work;      /* program slot */
    uint32_t per_block; /* >= 1 */
    uint32_t block;     /* 1..1024 */
    uint32_t shared;
    /* RT_STEP_KERNEL: n > 0 caps the grid at n x the blocks the GPU holds at
     * once (its SMs x the kernel's occupancy at `block` and `shared`): a
     * kernel that loops over its work items with state kept across them (the
     * wgmma attention's mbarrier ring, its producer running ahead into the
     * next row block) starts once an SM instead of once an item. 0: grid as
     * above. At most RT_RESIDENT_MAX. */
    uint32_t resident;
    uint32_t n_args;
    const rt_arg *args;
    /* RT_STEP_KERNEL: the TMA tensor maps its RT_ARG_TMAP args name (format 8; none before) */
    uint32_t n_tmaps; /* <= RT_STEP_MAX_TMAPS */
    const rt_tmap *tmaps;
    /* per arg, 1 where the kernel writes that tensor (what the loader checks the steps' order
     * against: every tensor read was written by an earlier step, or is an input or constant);
     * NULL when unknown (engines written before it was recorded) */
    const uint8_t *arg_writes;
    /* library calls and copies */
    uint32_t n_tensors;
    uint32_t tensors[RT_STEP_MAX_TENSORS]; /* RT_NONE where absent */
    uint8_t trans_a, trans_b, epilogue, precision;
    float alpha, beta;
    /* GEMM and CONV: the choices timed at build time, at opt and at a few
     * representatives of the symbol ranges (codegen/tuner.c), sorted by
     * size; none when the build had no GPU (the runtime then asks the
     * library's heuristic once per shape) */
    uint32_t n_tuned; /* <= RT_TUNED_MAX */
    const rt_tuned *tuned;
} rt_step;

/* One module of generated code: a part of the kernels that NVRTC compiled
 * together (with the shared prelude), as a cubin for the engine's SM and as
 * PTX for newer GPUs (JIT-compiled by the driver). */
typedef struct rt_module {
    const uint8_t *cubin; /* for `sm` */
    size_t cubin_size;
    const char *ptx;
} rt_module;

typedef struct rt_engine {
    uint32_t format_version;
    const char *symc_version, *cuda_version, *cublas_version, *cudnn_version, *name;
    uint32_t sm;
    const rt_symbol *symbols;
    uint32_t n_symbols;
    const rt_source *sources;
    uint32_t n_sources;
    const uint8_t *program;
    size_t program_size;
    uint32_t num_slots;
    const rt_guard *guards;
    uint32_t n_guards;
    const rt_tensor *tensors;
    uint32_t n_tensors;
    const rt_node *nodes;
    uint32_t n_nodes;
    const uint32_t *inputs, *outputs;
    uint32_t n_inputs, n_outputs;
    const rt_constant *constants;
    uint32_t n_constants;
    /* GPU part: empty (sm == 0) for an engine built without GPU code */
    uint8_t precision;       /* rt_precision */
    const char *cuda_source; /* the generated CUDA C (prelude and every kernel), for reading */
    const rt_module *modules;
    uint32_t n_modules;
    const char *const *kernel_names; /* entry points */
    const uint32_t *kernel_module;   /* per kernel: the module that holds it */
    uint32_t n_kernels;
    const rt_step *steps;
    uint32_t n_steps;
    /* per tensor: the tensor whose storage it shares (a reshape that moves no
     * data), or RT_NONE; aliases never chain. Empty = none. */
    const uint32_t *aliases;
    uint32_t n_aliases;
    /* Regions (format 6): an engine with several graphs, each for a part of
     * the declared input box. Empty (n_regions == 0) for a one-graph engine:
     * the fields above are then the graph. With regions, the root (this
     * struct) keeps the name, versions, sm, precision, `symbols` (the declared
     * hull of every region: each symbol's min is the least of its regions',
     * max the largest), `sources` (how each root symbol is bound) and
     * `constants` (each weight once); its tensors, nodes, steps, modules,
     * program and guards are empty, and every region graph's `constants`
     * points at the root's. region_program runs over the root symbols (in
     * order, as sym_program_eval takes them) and fills region_slots slots,
     * which the regions' conditions read. */
    const uint8_t *region_program;
    size_t region_program_size;
    uint32_t region_slots;
    const struct rt_region *regions;
    uint32_t n_regions;
    /* Produced symbols (format 7): empty for an engine whose every size is
     * known from the input shapes. Never with regions (the build refuses the
     * combination; the loader too). With GPU code each names its count cell
     * (rt_produced.count_tensor), which the CUDA backend reads back after the
     * producer's last step (a sync point: such an engine runs without graphs).
     * capacity_program runs over every symbol's value (as sym_program_eval
     * takes them; it reads input-dim symbols only) and fills n_produced
     * slots: slot k is produced[k]'s capacity. */
    const rt_produced *produced;
    uint32_t n_produced;
    const uint8_t *capacity_program;
    size_t capacity_program_size;
    rt_batch_rows batch_rows;        /* the root's; state 0 (UNKNOWN) writes nothing */
    const struct rt_island *islands; /* this graph's fp32 islands (--fp16/--bf16; informative) */
    uint32_t n_islands;
    /* the points the build tuned this graph's library calls at: n_tuned_points
     * rows of n_symbols values (this graph's symbols); what
     * symrt_context_warm runs (none: it takes opt) */
    const int64_t *tuned_points;
    uint32_t n_tuned_points;
    void *owned; /* decoder-owned memory (NULL for an engine described by the compiler) */
} rt_engine;

/* One region of an engine: a whole graph (an rt_engine with no regions of
 * its own and no constants of its own: its `constants` is the root's), the
 * condition under which it runs, and how its symbols map to the root's.
 * The runtime takes the first region whose every condition guard holds at
 * the input shapes (runtime/context.c); a shape in no region is an error
 * naming each region and its first failing guard. */
typedef struct rt_region {
    const char *name;     /* the condition as text: "B == 1", "2 <= B <= 32" */
    const rt_guard *cond; /* a conjunction; lhs/rhs are slots of the root's region_program,
                             message = the text of that one relation */
    uint32_t n_cond;
    const uint32_t *symbols; /* graph symbol i is root symbol symbols[i] */
    uint32_t n_symbols;      /* = graph.n_symbols */
    rt_engine graph;
} rt_region;

/* The graphs of an engine: 1 without regions (the engine itself), else one
 * per region. */
static inline uint32_t rt_engine_n_graphs(const rt_engine *e) { return e->n_regions ? e->n_regions : 1; }
static inline const rt_engine *rt_engine_graph(const rt_engine *e, uint32_t r) {
    return e->n_regions ? &e->regions[r].graph : e;
}
/* The graph whose inputs and outputs describe the engine's interface (names,
 * dtypes, ranks: equal in every region, which the loader checks). */
static inline const rt_engine *rt_engine_io(const rt_engine *e) { return rt_engine_graph(e, 0); }

/* Whether tensor t is an input or output of the engine (user storage). */
static inline int rt_engine_is_io(const rt_engine *e, uint32_t t) {
    for (uint32_t i = 0; i < e->n_inputs; i++)
        if (e->inputs[i] == t) return 1;
    for (uint32_t i = 0; i < e->n_outputs; i++)
        if (e->outputs[i] == t) return 1;
    return 0;
}

/* ---- sizes (runtime/sizes.c) ----------------------------------------------
 * Every size the runtime derives from dims goes through these: a product
 * that overflows, or a negative dim, is an error, never a wrapped value. The
 * limit is RT_MAX_BYTES (int64, and size_t where that is smaller), so a size
 * that passes also fits every int64 offset and size_t length computed from
 * it. */
#define RT_MAX_BYTES ((uint64_t)INT64_MAX < (uint64_t)SIZE_MAX ? INT64_MAX : (int64_t)SIZE_MAX)
/* dims[0] * ... * dims[rank-1] * scale into *out (scale >= 0): 1, or 0 when a
 * dim is negative or the product exceeds RT_MAX_BYTES. */
int rt_checked_product(const int64_t *dims, int32_t rank, int64_t scale, int64_t *out);
/* Bytes of tensor t at these program slots (its dims times its dtype size). */
int rt_tensor_bytes(const rt_engine *e, const int64_t *slots, uint32_t t, int64_t *bytes);
/* "[2, 3, 224, 224]" (snprintf semantics; cut short with "...]"). */
void rt_format_dims(const int64_t *dims, int32_t rank, char *buf, size_t cap);
/* The error for a size that does not fit: "<what> '<name>' of shape [dims]
 * (dtype) is too large: its size in bytes does not fit in 64 bits (at most
 * 9223372036854775807 bytes)" (the words the tools use too). Returns
 * SYMC_ERR_OVERFLOW (SYMC_ERR_RANGE for a negative dim). */
symc_status rt_size_overflow(symc_error *err, const char *what, const char *name, const int64_t *dims, int32_t rank,
                             symc_dtype dtype);
/* The same for tensor t at these slots, what = "tensor" / "input" / "output". */
symc_status rt_tensor_overflow(symc_error *err, const rt_engine *e, const int64_t *slots, uint32_t t, const char *what);

/* The checksum of the trailer (FNV-1a lanes) over the FlatBuffer part of an
 * engine file; rt_engine_encode appends "SXCK" and it, little endian. Exposed
 * for the engine fuzzer, which mutates the FlatBuffer and re-seals it
 * (runtime/engine_checksum.c). The same value fed in pieces: rt_checksum_init
 * with the total size n, rt_checksum_add each piece in order (any sizes adding
 * up to n), rt_checksum_finish. */
uint64_t rt_engine_checksum(const uint8_t *bytes, size_t size);
typedef struct rt_checksum {
    uint64_t lane[8];
    size_t n, whole, at; /* the total, its whole 8-byte words' bytes, the bytes added so far */
} rt_checksum;
void rt_checksum_init(rt_checksum *c, size_t n);
void rt_checksum_add(rt_checksum *c, const uint8_t *bytes, size_t size);
uint64_t rt_checksum_finish(const rt_checksum *c);

/* An engine file into malloc'd bytes (used by symrt and the tools): a
 * regular file only (a directory, device, FIFO or socket is refused with
 * what it is, before anything is read), at most RT_ENGINE_FILE_MAX bytes
 * (checked with fstat first), read in one bounded pass. */
#define RT_ENGINE_FILE_MAX (((uint64_t)1 << 31) + 16)
symc_status rt_read_file(const char *path, uint8_t **bytes, size_t *size, symc_error *err);

/* Encodes an engine (malloc'd bytes; free() them). The version written:
 * e->format_version when it is neither 0 nor RT_ENGINE_FORMAT_VERSION (only
 * tests write another, to see it refused); otherwise 7 with produced sizes
 * (n_produced > 0), else 6 with regions, else 5. The produced sizes, the
 * capacity program and the guards' `after` are written only when they hold
 * something (an `after` only when some guard's is not 0), so an engine
 * without them has the bytes of format 5 or 6 exactly. The
 * root writes the constants once; a region's graph is written without
 * constants, unless its `constants` is a table other than the root's (which
 * the decoder refuses: only tests write one). A region graph's own regions
 * are written too (refused: only tests nest). The batch-row verdict is
 * written for the root alone, and only when its state is not UNKNOWN (an
 * engine described without one keeps the bytes it had before the field). */
symc_status rt_engine_encode(const rt_engine *e, uint8_t **bytes, size_t *size, symc_error *err);
/* Where rt_engine_encode_to puts the bytes: called in order with consecutive pieces (the
 * constants straight from e, the rest in chunks, the trailer last) that together are exactly
 * rt_engine_encode's bytes; a status other than SYMC_OK (with err set) stops the encoding and is
 * returned. */
typedef symc_status (*rt_engine_sink)(void *ctx, const uint8_t *bytes, size_t size, symc_error *err);
/* rt_engine_encode without the whole engine in memory once more: the compiler writes the file
 * with it (codegen), so a 200 MB engine's weights are not copied to a block first. Nothing goes
 * to sink when the engine cannot be encoded. */
symc_status rt_engine_encode_to(const rt_engine *e, rt_engine_sink sink, void *ctx, symc_error *err);
/* Decodes and checks untrusted bytes (format RT_ENGINE_FORMAT_MIN to
 * RT_ENGINE_FORMAT_VERSION). The engine keeps its own copy of everything;
 * free it with rt_engine_free. format_version is the file's (5 for a one-graph
 * engine). With regions, each region graph's `constants`/`n_constants` are the
 * root's table, its format_version the root's, and it has no regions and
 * owned == NULL (the root owns everything); the root's batch_rows is the
 * file's, UNKNOWN (why "") where the file has none. */
symc_status rt_engine_decode(const uint8_t *bytes, size_t size, rt_engine **out, symc_error *err);
void rt_engine_free(rt_engine *e);
/* The decoded engine behind a loaded symrt handle (runtime/context.c), for the
 * tools that read what the public API does not show (bench's memory formula):
 * owned by the handle, valid while it is. */
struct symrt_engine;
const rt_engine *rt_engine_of(const struct symrt_engine *e);
/* A symrt handle over an engine described in memory (the tests' region
 * engines, before or without an encode): e is not copied nor freed, and
 * must outlive the handle and its contexts. */
symc_status rt_engine_handle(const rt_engine *e, struct symrt_engine **out, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
