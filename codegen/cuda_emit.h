/* The CUDA target's internals (codegen/cuda_*.c only).
 *
 * cg_cuda is one emit pass over a module: the module with its fusion plan
 * (passes/fuse.c decides the groups; the emitters read each node's role and
 * root from m->fuse) and the readers of each tensor. cg_kw writes one
 * kernel: it collects the parameters as it goes (a tensor becomes a pointer
 * parameter "t<index>", a symbolic size a `long long` parameter "s<slot>", a
 * constant size a literal), so emitters write the body in one pass and never
 * track argument lists by hand; cg_kw_finish prints the kernel into the
 * module's source, registers it and adds its launch step. */
#ifndef SYMC_CODEGEN_CUDA_EMIT_H
#define SYMC_CODEGEN_CUDA_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "codegen/target.h"

/* ---- growable text ---------------------------------------------------------- */
typedef struct cg_str {
    char *p;
    size_t len, cap;
    int oom;
} cg_str;
void cg_str_appendf(cg_str *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void cg_str_free(cg_str *s);

/* ---- one emit pass ------------------------------------------------------------- */
/* A group computed inside another kernel has at most this many nodes (the
 * fuse pass is told so through the target's rules) */
#define CG_GROUP_MAX_NODES 256

typedef struct cg_cuda {
    cg_builder *b;       /* NULL while answering the fuse pass's questions */
    ir_module *m;        /* its fusion plan (m->fuse) says which nodes run together */
    const ir_uses *uses; /* readers of each tensor, counted over live nodes (the plan's "private") */
} cg_cuda;

/* the node's role in the fusion plan */
ir_fuse_role cg_role(const cg_cuda *c, uint32_t node);
/* product of dims[from..to) as an expression */
sym_expr cg_prod(cg_cuda *c, const sym_expr *dims, int from, int to);
/* CUDA C type of a dtype's values ("float", "double", "long long", "int",
 * "bool", "signed char", ..., "unsigned long long") and of its storage (bool
 * is stored as one byte) */
const char *cg_ctype(symc_dtype dt);
const char *cg_stype(symc_dtype dt);
/* f16/bf16: stored as 16 bits ("unsigned short"), computed as float */
int cg_is_half(symc_dtype dt);
/* i8, u8, i16, u16 (C arithmetic promotes them to int) */
int cg_is_small_int(symc_dtype dt);
/* an element load as a value of cg_ctype, and a value as its storage */
void cg_load(char *buf, size_t cap, symc_dtype dt, const char *ptr, const char *off);
void cg_store(char *buf, size_t cap, symc_dtype dt, const char *v);
/* a dtype the generated code handles; f16/bf16 only where half_ok
 * (elementwise ops and data movement). UNSUPPORTED names the node, op and
 * tensor. */
symc_status cg_check_dtype(cg_cuda *c, uint32_t node, uint32_t t, int half_ok);
/* `v` as a CUDA literal of type ctype (inf and NaN spelled out) */
void cg_float_literal(char *buf, size_t cap, double v, symc_dtype dt);
symc_status cg_fail(cg_cuda *c, uint32_t node, symc_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* attribute helpers (defaults when absent) */
int64_t cg_attr_int(const ir_node *n, const char *name, int64_t dflt);
double cg_attr_float(const ir_node *n, const char *name, double dflt);
const char *cg_attr_str(const ir_node *n, const char *name, const char *dflt);
/* axis in [0, rank) as it is, -1 when out of range: a verified module's axes are non-negative
 * (ir/axes.c), so nothing is normalized here any more */
int cg_norm_axis(int64_t axis, int rank);

/* ---- one kernel ------------------------------------------------------------------ */
#define CG_KW_MAX_ARGS 96
#define CG_KW_RING 24
#define CG_KW_MAX_SUBST 40

typedef struct cg_kw {
    cg_cuda *c;
    uint32_t node;
    rt_arg args[CG_KW_MAX_ARGS];
    uint8_t arg_out[CG_KW_MAX_ARGS]; /* the kernel writes the tensor of args[i] */
    uint32_t n_args;
    uint32_t shared;     /* bytes of dynamic shared memory the launch asks for (0: none) */
    uint32_t min_blocks; /* __launch_bounds__'s blocks an SM should hold at once (0: the compiler's choice) */
    uint32_t resident;   /* the step's grid cap, rt_step.resident (0: one block per per_block items) */
    rt_tmap tmaps[RT_STEP_MAX_TMAPS]; /* the TMA tensor maps its RT_ARG_TMAP args name (cg_kw_tmap) */
    uint32_t n_tmaps;
    int too_many;
    cg_str params, body;
    char ring[CG_KW_RING][48];
    uint32_t ring_at;
    /* read-side substitutions (cg_kw_subst): tensor -> text standing for its pointer */
    uint32_t subst_t[CG_KW_MAX_SUBST], n_subst;
    char subst[CG_KW_MAX_SUBST][48];
} cg_kw;

void cg_kw_begin(cg_kw *k, cg_cuda *c, uint32_t node);
/* pointer parameter for tensor t, read-only or written; returns "t<index>" */
const char *cg_kw_in(cg_kw *k, uint32_t t);
const char *cg_kw_out(cg_kw *k, uint32_t t);
/* A TMA tensor map of tensor t, a parameter "const __grid_constant__ sc_tmap tm<i>" (and t's
 * pointer parameter too, so every reader of the step's tensors sees it): the view at `offset`
 * elements with extents dims[0..rank) and strides (elements) strides[1..rank), innermost first,
 * dim 0 contiguous, copied in boxes of box[] elements with swizzle 0-3 (none, 32, 64, 128 B).
 * The runtime encodes it at launch (rt_tmap). Returns "tm<i>"; the same map asked twice is one. */
const char *cg_kw_tmap(cg_kw *k, uint32_t t, sym_expr offset, int rank, const sym_expr *dims, const sym_expr *strides,
                       const uint32_t *box, int swizzle);
/* From now on cg_kw_in(t) returns `text` instead of t's pointer parameter (and
 * adds no parameter): code that reads "text[off]" then reads a value the
 * kernel already holds, e.g. "sc_reg<float>{q.x}" (the prelude's sc_reg
 * ignores the index). Row kernels use it to feed float4 lanes and their own
 * result to the elementwise code that cg_emit_value writes. text NULL
 * removes t's substitution; cg_kw_subst_clear removes all. */
void cg_kw_subst(cg_kw *k, uint32_t t, const char *text);
void cg_kw_subst_clear(cg_kw *k);
/* a size in the body: a literal when constant, else the slot parameter.
 * SYM_NONE (-1 in a dims attribute) is the literal -1. The text lives in a
 * small ring, valid for the next CG_KW_RING calls. */
const char *cg_kw_dim(cg_kw *k, sym_expr e);
void cg_kw_body(cg_kw *k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Declares `long long <prefix><j>` offsets, for each of n tensors ts[j],
 * of the row-major index variable `idx` over the shape odims[0..orank), each
 * tensor right-aligned and broadcast (stride 0 where its dim is 1; a dim that
 * may be 1 at run time is tested at run time). A tensor whose shape is the
 * output's reads at idx directly. Emits code into the body. */
void cg_kw_bcast_offsets(cg_kw *k, const char *idx, const sym_expr *odims, int orank, uint32_t n,
                         const ir_tensor *const *ts, const char *prefix);
/* Prints the kernel (a comment listing the nodes it covers, then the
 * definition), registers it and appends its launch: ceil(work / per_block)
 * blocks of `block` threads. */
symc_status cg_kw_finish(cg_kw *k, const char *comment, sym_expr work, uint32_t per_block, uint32_t block);
void cg_kw_free(cg_kw *k);

/* "node 'n' (op)" comment text for the nodes[] of a fused group */
void cg_describe_nodes(cg_cuda *c, const uint32_t *nodes, uint32_t n, cg_str *out);

/* the source's shared helpers, printed once before the kernels */
symc_status cg_emit_prelude(cg_cuda *c);

/* ---- emitters (one family each) -------------------------------------------------- */
/* cuda_emit_elementwise.c: the fused group rooted at `root` (it and its
 * inlined producers, all ir_op_is_elementwise); batch_norm */
symc_status cg_emit_elementwise(cg_cuda *c, uint32_t root);
symc_status cg_emit_batch_norm(cg_cuda *c, uint32_t node);
/* Declares `const T <name>` holding element `idx` (a flat index, text) of
 * tensor t: computed by its inlined elementwise group when t's producer is
 * inlined, else loaded. Emits code into k's body. */
symc_status cg_emit_value(cg_kw *k, uint32_t t, const char *idx, const char *name);
/* The same for the result of the elementwise group rooted at `root` (a
 * row kernel's epilogue, which is not itself inlined). */
symc_status cg_emit_group_value(cg_kw *k, uint32_t root, const char *idx, const char *name);
/* appends "; its input computed inline: <nodes>" when t's producer is inlined */
void cg_describe_inlined(cg_cuda *c, uint32_t t, cg_str *out);
/* broadcast copy of tensor `src` into `dst` (dst's shape), e.g. gemm's C */
symc_status cg_emit_broadcast_copy(cg_cuda *c, uint32_t node, uint32_t src, uint32_t dst);
/* cuda_emit_reduce.c. cg_row_kernel: the node's kernel is one block per
 * contiguous row of its data input in[0], read through cg_emit_value, so an
 * elementwise producer can be inlined into it. */
int cg_row_kernel(cg_cuda *c, uint32_t node);
/* row op `second` may compute row op `first` in its own kernel: a softmax
 * after a norm or a norm after a softmax, both f32 row kernels over the same
 * rows (the fuse pass's row_chain question; the pass checks that first's
 * result is private to second and that first has no epilogue) */
int cg_row_chain_ok(ir_module *m, uint32_t first, uint32_t second);
symc_status cg_emit_reduce(cg_cuda *c, uint32_t node);
symc_status cg_emit_softmax(cg_cuda *c, uint32_t node);
symc_status cg_emit_norm(cg_cuda *c, uint32_t node);
symc_status cg_emit_global_avg_pool(cg_cuda *c, uint32_t node);
/* cuda_emit_window.c: pooling, direct convolution, plain matmul/gemm */
symc_status cg_emit_pool(cg_cuda *c, uint32_t node);
symc_status cg_emit_conv_direct(cg_cuda *c, uint32_t node);
/* a depthwise convolution cg_emit_conv_depthwise takes (group = channels, constant window) */
int cg_conv_is_depthwise(const ir_module *m, uint32_t node);
/* a library convolution that runs as a cuBLASLt GEMM: 1x1 kernel, stride 1, no pads, one group (cuda_target.c) */
int cg_conv_is_gemm(const ir_module *m, uint32_t node);
symc_status cg_emit_conv_depthwise(cg_cuda *c, uint32_t node);
/* a depthwise convolution the channels-last kernel takes (the CUDA target's conv_channels_last),
 * and that kernel: it reads NHWC tensor x and writes NHWC tensor y, the tensors its IR_FUSE_LAYOUT
 * transposes read and make */
int cg_conv_nhwc_ok(const ir_module *m, uint32_t node);
symc_status cg_emit_conv_depthwise_nhwc(cg_cuda *c, uint32_t node, uint32_t x, uint32_t y);
symc_status cg_emit_matmul_generic(cg_cuda *c, uint32_t node);
/* cuda_emit_attention.c: softmax(f(Q·Kᵀ))·V as one flash-attention kernel at the matmul
 * `node`, the root of an attention group in the plan, from the match the fuse pass stored
 * there (ir_fuse_attention_of; passes/fuse_attention.c). */
symc_status cg_emit_attention(cg_cuda *c, uint32_t node);
/* cuda_emit_gemm.c: a library GEMM whose result an elementwise group reads (its IR_FUSE_EPILOGUE)
 * as one kernel of symc's own: y = act(a · b + res + bias), then the group rooted at `root` on
 * y, stored as the root's result. RT_NONE for an absent bias or residual; act an RT_EPI_*. */
typedef struct cg_gemm_call {
    uint32_t a, b; /* b [K, N], or [N, K] when trans_b */
    int trans_b;
    uint32_t bias, res, y, root;
    uint8_t act;
} cg_gemm_call;
/* The kernel takes these operands: a and b in the result's half type, b 2-D with K and N
 * constant, K a multiple of 32 and N of 32 (*K, *N set). */
int cg_gemm_kernel_shape(const ir_module *m, uint32_t node, uint32_t a, uint32_t b, int trans_b, int64_t *K,
                         int64_t *N);
symc_status cg_emit_gemm_kernel(cg_cuda *c, uint32_t node, const cg_gemm_call *g);
/* cuda_emit_move.c */
symc_status cg_emit_move(cg_cuda *c, uint32_t node);
/* cuda_emit_index.c: argmax/argmin, topk, cumsum, gather_nd, scatter_nd, scatter_elements */
symc_status cg_emit_index(cg_cuda *c, uint32_t node);
/* cuda_emit_resize.c: resize, every mode of the reference (runtime/ref/ref_kernels_resize.c) */
symc_status cg_emit_resize(cg_cuda *c, uint32_t node);
/* cuda_emit_select.c: the ops whose output size depends on the data (nonzero, nms, unique without an axis),
 * each writing its real count into a count cell (cg_count_cell, codegen/target.h) */
symc_status cg_emit_select(cg_cuda *c, uint32_t node);

/* cuda_emit_attention_wg.c: the wgmma helpers of the Hopper attention kernel, into the prelude
 * of an sm_90 source (nothing for other targets) */
symc_status cg_att_wg_prelude(cg_builder *b);
/* A kernel that uses sm_90a's instructions (wgmma) says so in its body; a source holding one is
 * compiled for sm_90a (cuda_nvrtc.c), whose cubin and PTX run on sm_90 GPUs only. */
#define CG_SM90A_MARK "/* needs sm_90a */"

/* ---- NVRTC (cuda_nvrtc.c) ------------------------------------------------------------ */
/* Compiles `source` once for sm_<sm> (sm_90a when it holds CG_SM90A_MARK), giving its cubin
 * and its PTX (for compute_<sm>, which NVRTC emits on the way). The error carries NVRTC's
 * log. n_kernels only words the message. Outputs are malloc'd. */
symc_status cg_nvrtc_compile(const char *source, uint32_t sm, uint32_t n_kernels, uint8_t **cubin, size_t *cubin_size,
                             char **ptx, symc_error *err);
/* Compiles n sources into n modules (out[i]: cubin and PTX, malloc'd),
 * each through the build cache (codegen/cache.h) and the misses on up to
 * as many threads as CPUs are online, saying its progress through
 * opt->progress; n_kernels[i] words source i's error. *cached: how many
 * came from the cache. On an error every out[i] is freed and zeroed. */
symc_status cg_nvrtc_compile_modules(const char *const *sources, const uint32_t *n_kernels, uint32_t n, uint32_t sm,
                                     const cg_options *opt, rt_module *out, uint32_t *cached, symc_error *err);
/* Online CPUs (at least 1). */
uint32_t cg_nvrtc_cpus(void);
/* "13.0" */
void cg_nvrtc_version(char *buf, size_t cap);
/* Parses "sm_90", "sm_90a", "90", "compute_90" and checks the SM against
 * the archs NVRTC supports (the error lists them). */
symc_status cg_nvrtc_parse_arch(const char *arch, uint32_t *sm, symc_error *err);

#endif
