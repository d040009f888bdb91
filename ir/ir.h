/* ir: the symc module, the in-memory form every pass works on.
 *
 * A module is SSA over tensors addressed by 32-bit indices: graph inputs have
 * no producer; every other tensor is the output of exactly one node (a
 * constant is the output of a `constant` node and carries its data). Tensor
 * dims are symshape expression handles into the module's sym_table, so a
 * shape like (B, (N+1), 768) is three handles and comparing dims is comparing
 * handles. Strings and attribute arrays live in the module's arena and are
 * freed with it; the growing tables (tensors, nodes, constants) are vectors.
 *
 * The op table is common/ops.def (the ir_op enum, in common/ops.h, is shared
 * with the runtime); the struct behind the public symc_module is
 * the same struct, so the builder API in include/symc/symc.h costs nothing. */
#ifndef SYMC_IR_IR_H
#define SYMC_IR_IR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/ops.h" /* ir_op, IR_OP_COUNT, IR_MAX_RANK: shared with the runtime */
#include "symc/symc.h"
#include "symshape/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

#define IR_RANK_UNKNOWN (-1)
#define IR_NONE UINT32_MAX /* absent tensor / node index */
#define IR_FORMAT_VERSION 1u

typedef enum ir_category {
    IR_CAT_UNARY,
    IR_CAT_BINARY,
    IR_CAT_REDUCE,
    IR_CAT_NORM,
    IR_CAT_CONTRACT,
    IR_CAT_WINDOW,
    IR_CAT_MOVE,
    IR_CAT_SHAPE,
    IR_CAT_SOURCE
} ir_category;

typedef enum ir_dtype_rule { IR_DT_SAME, IR_DT_BOOL, IR_DT_I64, IR_DT_ATTR, IR_DT_IN1, IR_DT_KEEP } ir_dtype_rule;

typedef struct ir_op_info {
    const char *name;
    int min_in, max_in, min_out, max_out; /* max -1: variadic */
    ir_category category;
    ir_dtype_rule dtype_rule;
    const char *attrs; /* schema text, see ops.def */
} ir_op_info;

const ir_op_info *ir_op_get(ir_op op);        /* NULL if out of range */
int ir_op_find(const char *name, ir_op *out); /* 1 if found */

/* ---- attributes ----------------------------------------------------------- */
/* Attributes are the public symc_attr (include/symc/symc.h), stored with their
 * arrays and strings copied into the arena. For IR_ATTR_DIMS, dims[i] is a
 * sym_expr handle or SYM_NONE for -1. */
typedef symc_attr_kind ir_attr_kind;
#define IR_ATTR_INT SYMC_ATTR_INT
#define IR_ATTR_FLOAT SYMC_ATTR_FLOAT
#define IR_ATTR_INTS SYMC_ATTR_INTS
#define IR_ATTR_FLOATS SYMC_ATTR_FLOATS
#define IR_ATTR_STR SYMC_ATTR_STR
#define IR_ATTR_DIMS SYMC_ATTR_DIMS
#define IR_ATTR_DTYPE SYMC_ATTR_DTYPE
typedef symc_attr ir_attr;

const char *ir_attr_kind_name(ir_attr_kind k);
int ir_attr_kind_parse(const char *text, size_t len, ir_attr_kind *out);

/* Iterates an op's attribute schema: call with *pos = 0 until it returns 0. */
typedef struct ir_attr_spec {
    char name[32];
    ir_attr_kind kind;
    int optional;
} ir_attr_spec;
int ir_attr_schema_next(const char *schema, size_t *pos, ir_attr_spec *out);

/* ---- tensors, nodes, constants -------------------------------------------- */
typedef struct ir_tensor {
    const char *name;
    symc_dtype dtype;
    int32_t rank; /* IR_RANK_UNKNOWN until shape inference */
    sym_expr dims[IR_MAX_RANK];
    uint32_t producer; /* node index, IR_NONE for graph inputs */
    uint32_t constant; /* constant-pool index, IR_NONE unless a constant */
    /* For small integer tensors whose elements shape inference can express
     * symbolically (shape_of and what is computed from it): n_value element
     * expressions in row-major order, arena-owned; NULL otherwise. Derived
     * data, recomputed by shape inference and not serialized. */
    sym_expr *value;
    uint32_t n_value;
} ir_tensor;

typedef struct ir_node {
    ir_op op;
    const char *name;   /* unique within the module */
    const char *source; /* ONNX node name, torch node, or "" */
    uint32_t n_in, n_out, n_attrs;
    uint32_t *in, *out; /* tensor indices */
    ir_attr *attrs;
} ir_node;

typedef struct ir_constant {
    uint8_t *data; /* malloc'd, owned by the module */
    size_t size;   /* bytes */
} ir_constant;

struct symc_module {
    char *name;
    sym_table *syms;
    struct cm_arena *arena; /* common/arena.h */

    ir_tensor *tensors;
    uint32_t n_tensors, cap_tensors;
    ir_node *nodes;
    uint32_t n_nodes, cap_nodes;
    ir_constant *constants;
    uint32_t n_constants, cap_constants;
    uint32_t n_lent;            /* the first n_lent constants' data belongs to another module (ir_module_copy) */
    uint32_t *inputs, *outputs; /* tensor indices, in declaration order */
    uint32_t n_inputs, cap_inputs, n_outputs, cap_outputs;

    /* Every tensor has the shape shape inference gives it, for the module as it is: the ONNX
     * importer infers each node as it adds it, and sets this at the end; ir_add_node clears it,
     * and the pipeline's infer-shapes row, which then has nothing to do, consumes it (a pass
     * after it may change nodes in place). 0 otherwise: inference runs. */
    uint8_t shapes_inferred;

    /* The fusion plan (see "fused groups" below): one entry per node, made
     * by the fuse pass; NULL when the module has none. */
    struct ir_fuse *fuse;
    uint32_t n_fuse;
    const char *fuse_target; /* the name of the rules that made it (static) */
    /* The plan's fused attentions (see "fused attention" below), one per
     * IR_FUSE_ATTENTION root, in node order; freed with the plan. */
    struct ir_attention *attention;
    uint32_t n_attention;
    /* The precision pass's fp32 islands (--fp16/--bf16): the nodes it kept fp32 though they
     * read or write f32, in node order, each with why (arena memory; none without conversion). */
    struct ir_island *islands;
    uint32_t n_islands;
};
typedef struct symc_module ir_module;

/* An fp32 island: node `node` (op `op`) kept fp32 in a half module. kind is a short label of
 * the reason ("softmax logits", "calibrated range", ...: passes/mixed_precision.c), why the
 * reason with its numbers and names. */
typedef struct ir_island {
    const char *node, *op, *kind, *why;
} ir_island;

/* ---- module lifetime and growth (module.c) ------------------------------------ */
ir_module *ir_module_new(const char *name, symc_error *err);
void ir_module_free(ir_module *m);
/* Copies of strings/arrays into the module's arena (NULL on out of memory). */
char *ir_strdup(ir_module *m, const char *s);
void *ir_alloc(ir_module *m, size_t size); /* zeroed, 16-byte aligned */
/* Appends a tensor with a copied name; dims may be NULL when rank is unknown. */
symc_status ir_add_tensor(ir_module *m, const char *name, symc_dtype dtype, int32_t rank, const sym_expr *dims,
                          uint32_t *out, symc_error *err);
/* Appends a node; copies arrays and attributes into the arena and sets each
 * output's producer; drops the fusion plan, which no longer covers every
 * node. Does not check the op's rules: see ir_verify. */
symc_status ir_add_node(ir_module *m, ir_op op, const char *name, const char *source, const uint32_t *in, uint32_t n_in,
                        const uint32_t *out, uint32_t n_out, const ir_attr *attrs, uint32_t n_attrs, uint32_t *index,
                        symc_error *err);
/* Takes ownership of data (malloc'd) on success and on failure. */
symc_status ir_add_constant(ir_module *m, uint8_t *data, size_t size, uint32_t *out, symc_error *err);
symc_status ir_mark_input(ir_module *m, uint32_t tensor, symc_error *err);
symc_status ir_mark_output(ir_module *m, uint32_t tensor, symc_error *err);
int ir_find_tensor(const ir_module *m, const char *name, uint32_t *out);
/* The constant tensor holding t's values: t itself when it is a constant, the constant
 * behind a chain of identities (exporters alias shared initializers that way), else IR_NONE. */
uint32_t ir_constant_source(const ir_module *m, uint32_t t);
/* 1 and *v = its value when t is a constant of one element (every dim the constant 1), of any
 * numeric dtype; else 0 (t itself must hold the constant: see ir_constant_source). */
int ir_scalar_constant(const ir_module *m, uint32_t t, double *v);
/* A rank-4 transpose node between the NCHW and NHWC layouts: IR_PERM_TO_NHWC for perm
 * (0,2,3,1), IR_PERM_TO_NCHW for (0,3,1,2), else IR_PERM_NONE (also for node IR_NONE). */
enum { IR_PERM_NONE = 0, IR_PERM_TO_NHWC = 1, IR_PERM_TO_NCHW = 2 };
int ir_layout_perm(const ir_module *m, uint32_t node);
int ir_find_node(const ir_module *m, const char *name, uint32_t *out);
/* Sizes known only after a node runs (docs/PLAN-data-dependent.md; ir/produced.c).
 * ir_produced_dim (common/ops.h): 1 when op produces one (nonzero, unique,
 * nms, item), with the output and dim that are the size; that dim of a node's output is an unbacked
 * symbol (sym_symbol_new_unbacked, declared by its shape rule), and the node
 * is the symbol's producer: the link lives in the graph itself, so passes that
 * reorder or rewrite nodes keep it without a table to update.
 * ir_producer_of: the node producing symbol s, or IR_NONE.
 * ir_check_produced (part of ir_verify): every unbacked symbol a tensor dim or
 * a dim attribute mentions has one producer, and no graph input and no node
 * before the producer mentions it; the error names the reader and the
 * producer. */
uint32_t ir_producer_of(const ir_module *m, sym_id s);
/* ir_produced_live (ir_uses_compute's liveness): producers are live while a
 * live node mentions their size, even where nothing reads their outputs (an
 * `item` whose value is a TopK's k): for each producer node p, sets live[p]
 * when some live node after it reads its symbol. Scans the nodes after each
 * producer not yet live (none where the module has no producers). Returns the
 * number of producers it made live (the caller walks again from them). */
uint32_t ir_produced_live(const ir_module *m, uint8_t *live);
symc_status ir_check_produced(ir_module *m, symc_error *err);
const ir_attr *ir_node_attr(const ir_node *n, const char *name);

/* An op computed one output element at a time from the elements of its
 * inputs at the same (broadcast) position: every UNARY and BINARY op but
 * identity (a view), and expand. Such ops fuse into one kernel. */
int ir_op_is_elementwise(ir_op op);
/* The two tensors have the same rank and the same dim expression handles. */
int ir_same_shape(const ir_tensor *a, const ir_tensor *b);
/* Element count as an expression (product of dims); SYM_NONE if rank unknown. */
sym_expr ir_tensor_numel(ir_module *m, const ir_tensor *t);
int ir_dtype_parse(const char *name, symc_dtype *out);

/* ---- axes (axes.c) ------------------------------------------------------------------ */
/* The IR's axis attributes ("axis", "axes") are non-negative. ir_axis_norm: axis in
 * [-rank, rank) made non-negative into *out (1), or 0 when out of range: the one definition
 * of the arithmetic. ir_normalize_axes: the node's negative axes made non-negative in place,
 * once the rank they index is known (its first input's; unsqueeze's result's), leaving those
 * out of range for the shape rule; the builder, the .symir loader and shape inference call
 * it. ir_check_axes (part of ir_verify): refuses a negative axis of a node whose rank is known,
 * naming the node and the attribute. */
int ir_axis_norm(int64_t axis, int32_t rank, int64_t *out);
symc_status ir_normalize_axes(ir_module *m, uint32_t node, symc_error *err);
symc_status ir_check_axes(const ir_module *m, uint32_t node, symc_error *err);
int ir_dtype_is_float(symc_dtype dt);

/* ---- batch rows (rows.c) ------------------------------------------------------------ */
/* Whether a server may join requests along the batch: batched when dim 0 of
 * every input is one symbol B (bare) that sizes no other input dim;
 * independent when, moreover, the graph provably computes every output row b
 * from input rows b alone, with every output's dim 0 exactly B. A proof, so
 * conservative: an op or use it does not cover leaves independent 0, and why
 * names the output, the node and the reason. Needs the shapes inferred. */
typedef struct ir_batch_rows_result {
    int batched, independent;
    sym_id batch;
    char why[256];
} ir_batch_rows_result;
symc_status ir_batch_rows(ir_module *m, ir_batch_rows_result *out, symc_error *err);

/* ---- uses (uses.c) ------------------------------------------------------------------ */
/* Who reads each tensor. A node is live when one of its outputs is a graph
 * output or is read by a live node; only live readers are counted, so a
 * dead node (e.g. a batch norm folded into its conv) keeps nothing alive. */
typedef struct ir_uses {
    uint32_t n_tensors;    /* tensors when computed: later ones have no entry */
    uint8_t *live;         /* per node */
    uint32_t *n_consumers; /* per tensor: distinct live nodes reading it */
    uint32_t *consumer;    /* per tensor: the last of them (the only one when n_consumers == 1) */
    uint8_t *is_output;    /* per tensor: a graph output */
} ir_uses;
symc_status ir_uses_compute(const ir_module *m, ir_uses *u, symc_error *err);
void ir_uses_free(ir_uses *u);
/* live readers of each tensor (distinct live nodes), a graph output counting
 * one more: a calloc'd array of m->n_tensors (at least 1) for the caller to
 * free, NULL when out of memory */
uint32_t *ir_uses_counts(const ir_module *m);
/* t has exactly one live reader and is not a graph output, so the reader
 * may compute it in place (0 for a tensor added after u was computed) */
int ir_uses_private(const ir_uses *u, uint32_t t);

/* ---- fused groups (fuse_plan.c) ------------------------------------------------------------ */
/* The fuse pass (passes/fuse.c) partitions the nodes into groups, each run
 * as one step at its root's place in node order: a generated kernel, a
 * library call or a fused attention. Every node gets a role and the root of
 * its group. Roots have group == their own index; members name their root;
 * dead nodes have none. The plan describes the module as the pass saw it:
 * adding a node drops it (ir_add_node), and ir_verify checks it (ir_fuse_check).
 * It is not serialized: a module read from a .symir file has no plan. */
typedef enum ir_fuse_role {
    IR_FUSE_STEP,       /* root: its own step (a kernel, a copy, an alias) */
    IR_FUSE_LIBRARY,    /* root: a library call (GEMM, convolution) */
    IR_FUSE_ATTENTION,  /* root: the second matmul of softmax(f(Q·Kᵀ))·V, one kernel */
    IR_FUSE_DEAD,       /* no step: no output of it reaches a graph output */
    IR_FUSE_INLINED,    /* elementwise, computed inside the code of its result's one reader */
    IR_FUSE_EPILOGUE,   /* last node of an elementwise group the root (a row kernel, or a library
                           call the target runs as its own kernel) applies to its result (after
                           the library call's members) before the store */
    IR_FUSE_ROW_FIRST,  /* a row op (softmax, norm) the root, a row op reading its result,
                           computes first in its own kernel */
    IR_FUSE_TRANSPOSE,  /* a transpose of the last two axes the root (a library GEMM) reads
                           through its trans flag */
    IR_FUSE_BIAS,       /* add of a bias vector to the root's result: its bias epilogue */
    IR_FUSE_ACTIVATION, /* activation of the biased result: the root's epilogue */
    IR_FUSE_RESIDUAL,   /* add of a tensor of the result's shape: the root's C, beta 1 */
    IR_FUSE_CLAIMED,    /* computed inside the fused attention kernel of the root */
    IR_FUSE_LAYOUT,     /* a transpose making the root's data input in[0], or the one reader of
                           its result: the root's kernel (a channels-last convolution) reads
                           the transpose's input, or stores the transposed result */
    IR_FUSE_VIEW,       /* a reshape of the root's (biased) result whose one reader is its residual
                           add: the call writes the add's result, the same elements in the same
                           order (GPT-2's Conv1D: Gemm on [B*S, N], Reshape, Add) */
    IR_FUSE_ROLE_COUNT
} ir_fuse_role;

typedef struct ir_fuse {
    uint8_t role;   /* ir_fuse_role */
    uint32_t group; /* the root whose step computes the node; IR_NONE when dead */
} ir_fuse;

const char *ir_fuse_role_name(ir_fuse_role r);
/* a role whose node is the root of its group (STEP, LIBRARY, ATTENTION) */
int ir_fuse_is_root(ir_fuse_role r);
/* A new plan for every node, each a STEP of its own, replacing any old one;
 * `target` names the rules that fill it (a static string). */
symc_status ir_fuse_new(ir_module *m, const char *target, symc_error *err);
void ir_fuse_drop(ir_module *m);
/* Lookups through the plan (IR_NONE when absent): the EPILOGUE member of
 * row kernel or library call `node` (reached from its result, a library
 * call's after its bias, residual and activation members, through INLINED
 * readers), the
 * ROW_FIRST member producing its in[0], and the member of library call
 * `node` that privately reads tensor t (its result, then each member's). */
uint32_t ir_fuse_epilogue_of(const ir_module *m, const ir_uses *u, uint32_t node);
/* the tensor library call `lib`'s step writes: its result after its bias,
 * residual and activation members (its own result when it has none) */
uint32_t ir_fuse_library_result(const ir_module *m, const ir_uses *u, uint32_t lib);
uint32_t ir_fuse_row_first_of(const ir_module *m, uint32_t node);
uint32_t ir_fuse_reader_in_group(const ir_module *m, const ir_uses *u, uint32_t node, uint32_t t);
/* ---- fused attention (part of the plan) ------------------------------------------------- */
/* What the fuse pass matched around an IR_FUSE_ATTENTION root (passes/fuse_attention.c says
 * how): softmax(f(Q·Kᵀ))·V, with Q, K, V and O as strided views of the storage behind the
 * transposes and widening casts the kernel computes, and the score function f as a chain of
 * ops. Tensors and nodes are module indices, expressions interned in m->syms. The target's
 * emitter reads it and matches nothing itself. */
#define IR_ATT_MAX_CHAIN 6    /* score-function ops */
#define IR_ATT_MAX_LEAF 4     /* leaves of an IR_ATT_ADD_SEL condition */
#define IR_ATT_MAX_COVERED 64 /* nodes the kernel computes besides the root */

/* a rank-4 strided view [b0, b1, rows, cols] of tensor t's storage */
typedef struct ir_att_view {
    uint32_t t;
    sym_expr dims[4], strides[4];
    int64_t off;   /* elements from t's start (a part of a split read in its input: GPT-2's fused qkv) */
    int64_t group; /* > 1: dim 1 (heads) reads head b1 / group of t (grouped-query K and V read before
                    * their expand: Llama's repeat_kv); 0 or 1: none */
} ir_att_view;

typedef enum ir_att_kind {
    IR_ATT_MUL,         /* v * scalar */
    IR_ATT_DIV,         /* v / scalar */
    IR_ATT_ADD,         /* v + scalar */
    IR_ATT_ADD_MASK,    /* v + mask[b0, b1, q, k] */
    IR_ATT_WHERE,       /* mask ? (chain or scalar) : (scalar or chain) */
    IR_ATT_ADD_SEL,     /* v + (leaf && leaf ... ? scalar : scalar2): an additive mask made by where(cond, a, b),
                           read through the where, expands and ands to the leaves of its bool condition */
    IR_ATT_WHERE_CAUSAL /* (k > q) ? ... */
} ir_att_kind;

/* a leaf of an IR_ATT_ADD_SEL condition: a bool view, or a causal comparison */
typedef enum ir_att_leaf_kind { IR_ATT_LEAF_VIEW, IR_ATT_LEAF_K_GT_Q, IR_ATT_LEAF_K_LE_Q } ir_att_leaf_kind;
typedef struct ir_att_leaf {
    ir_att_leaf_kind kind;
    ir_att_view v; /* IR_ATT_LEAF_VIEW */
} ir_att_leaf;

typedef struct ir_att_op {
    ir_att_kind kind;
    uint32_t node;
    uint32_t scalar;                   /* scalar tensor (IR_NONE: none) */
    uint32_t scalar2;                  /* IR_ATT_ADD_SEL: the value where the condition is false */
    int chain_is_true;                 /* where: the chain is the value taken where cond holds */
    ir_att_view mask;                  /* IR_ATT_ADD_MASK / IR_ATT_WHERE (WHERE_CAUSAL: mask.t is the condition) */
    ir_att_leaf leaf[IR_ATT_MAX_LEAF]; /* IR_ATT_ADD_SEL: the condition is the and of these (none: true) */
    uint32_t n_leaf;
    /* IR_ATT_ADD_MASK per window (Swin's shifted-window mask, added to the scores viewed as
     * [B, W, H, Sq, Sk]): the mask's dim 0 is the window, score row b0's is b0 mod `windows` */
    int windowed;
    sym_expr windows;
} ir_att_op;

typedef struct ir_attention {
    uint32_t mm1, mm2, softmax;      /* the score matmul, the root (P·V), the softmax */
    ir_att_view q, k, v, o;          /* k: Kᵀ's storage read with its last two axes swapped */
    sym_expr sq, sk, n0, n1;         /* query and key lengths, the two batch dims */
    int64_t d, dv;                   /* head dims of Q/K and V */
    ir_att_op ops[IR_ATT_MAX_CHAIN]; /* from the score to the softmax input */
    uint32_t n_ops;
    int causal_skip; /* a causal mask with value -inf (or <= -1e8) last: key tiles past the row block skip */
    int zero_masked; /* the softmax's zero_masked_rows: a fully masked row gives zeros (L == 0), not NaN */
    /* storage of Q, K, V and O (each f32, f16 or bf16; the kernel computes in fp32 and
     * keeps scores and probabilities in fp32 whatever the graph stores them as) */
    symc_dtype qdt, kdt, vdt, odt;
    uint32_t covered[IR_ATT_MAX_COVERED]; /* the nodes it computes besides mm2 (its CLAIMED members) */
    uint32_t n_covered;
} ir_attention;

/* Appends a to the plan (whose fuse entries the caller sets). */
symc_status ir_fuse_add_attention(ir_module *m, const ir_attention *a, symc_error *err);
/* The plan's attention whose root is `node`; NULL when there is none. */
const ir_attention *ir_fuse_attention_of(const ir_module *m, uint32_t node);

/* The plan's invariants (part of ir_verify): one entry per node, roots are
 * their own group, members name a root of the kind their role needs and
 * have an op their role allows, dead nodes are exactly those reaching no
 * output, every result but the group's last node's is read only inside the
 * group, members read nothing computed after the root's place, and every
 * attention root has one fused attention whose covered nodes are exactly its
 * claimed members. */
symc_status ir_fuse_check(ir_module *m, symc_error *err);

/* ---- checks, text, files -------------------------------------------------------- */
/* Types, arities, attribute schemas, references in range, SSA form, unique
 * names, constants sized to their shapes, and the fusion plan when there is
 * one (ir_fuse_check). The first problem is reported, naming the node, its
 * op and the tensor or attribute at fault. */
symc_status ir_verify(ir_module *m, symc_error *err);
/* The same for a module still being built: it may have no outputs yet. */
symc_status ir_verify_open(ir_module *m, symc_error *err);
/* The per-node part of the verifier, usable before a node exists: arity,
 * input indices, attributes against the op's schema and their values. `name`
 * is used in messages. */
symc_status ir_check_node(ir_module *m, ir_op op, const char *name, const uint32_t *in, uint32_t n_in, uint32_t n_out,
                          const ir_attr *attrs, uint32_t n_attrs, symc_error *err);
/* The output dtype an op's dtype rule gives for these inputs; checks that
 * inputs which must agree do. */
symc_status ir_infer_dtype(ir_module *m, ir_op op, const char *name, const uint32_t *in, uint32_t n_in,
                           const ir_attr *attrs, uint32_t n_attrs, symc_dtype *out, symc_error *err);

/* Readable text: symbols with ranges, inputs, nodes with their outputs'
 * symbolic shapes, outputs, and the fused groups when there is a plan. Writes through a callback so the library never
 * prints by itself. */
typedef void (*ir_write_fn)(void *ctx, const char *text, size_t len);
void ir_print(ir_module *m, ir_write_fn write, void *ctx);
/* Convenience: the whole printout as a malloc'd string (NULL if out of memory). */
char *ir_print_to_string(ir_module *m);

/* FlatBuffers (ir/symir.fbs) through the official C++ runtime (serialize.cc). */
symc_status ir_serialize(ir_module *m, uint8_t **buf, size_t *size, symc_error *err);
symc_status ir_deserialize(const uint8_t *buf, size_t size, ir_module **out, symc_error *err);
symc_status ir_save(ir_module *m, const char *path, symc_error *err);
symc_status ir_load(const char *path, ir_module **out, symc_error *err);
/* A copy of m through the same writer and reader (symbols, guards, tensors, nodes, inputs,
 * outputs; no fusion plan) whose constants are m's data, lent and not copied: m must outlive the
 * copy and keep its constants unchanged meanwhile. Constants added to the copy are its own. */
symc_status ir_module_copy(ir_module *m, ir_module **out, symc_error *err);
/* Files where the user pointed (file.c). Over a regular file or a new name the bytes go to a
 * temporary made exclusively beside it (never a predictable name a planted symlink could take)
 * and renamed over the target once every write and the close succeeded, so a failed write never
 * leaves a truncated file under the real name; a symlink, device or pipe at the path (/dev/stdout)
 * is written directly, never replaced. ir_out_close commits (and reports a write error),
 * ir_out_abort drops the temporary. */
typedef struct ir_out {
    FILE *f;
    char *path, *tmp; /* tmp NULL: written in place */
} ir_out;
symc_status ir_out_open(ir_out *o, const char *path, symc_error *err);
symc_status ir_out_close(ir_out *o, symc_error *err);
void ir_out_abort(ir_out *o);
symc_status ir_write_file(const char *path, const uint8_t *bytes, size_t size, symc_error *err);
/* A regular file opened for reading; NULL with errno set, and *what naming the kind of file when the
 * path is something else ("a FIFO (named pipe)", "a directory", "a device"). Opened non-blocking
 * first, so a FIFO at the path is refused instead of blocking. */
FILE *ir_open_regular(const char *path, const char **what);

#ifdef __cplusplus
}
#endif
#endif
