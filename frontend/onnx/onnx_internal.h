/* Internals shared by the ONNX importer's files: onnx_context.c (what translating a node
 * needs: names, attributes, emitting IR nodes, build-time values, tensor data), onnx_import.c
 * (the model, its inputs and symbols, dead-node removal) and the op families (onnx_ops.h, one
 * translation function per ONNX op type, found by onnx_op_table.c). */
#ifndef SYMC_FRONTEND_ONNX_INTERNAL_H
#define SYMC_FRONTEND_ONNX_INTERNAL_H

#include <stdint.h>

#include "frontend/onnx.h"
#include "onnx/onnx.pb-c.h"
#include "passes/passes.h"

/* String -> uint32 map (open addressing); keys are borrowed, not copied. */
typedef struct fe_map {
    const char **keys;
    uint32_t *vals;
    uint32_t n, cap; /* cap a power of two, or 0 */
} fe_map;
int fe_map_get(const fe_map *mp, const char *key, uint32_t *val);
int fe_map_put(fe_map *mp, const char *key, uint32_t val); /* 0: out of memory */
void fe_map_free(fe_map *mp);

/* How one import of a model with shape-conditioned If nodes goes (onnx_branch.c): the branches
 * decided for the Ifs whose condition the ranges leave open, the symbol ranges narrowed for this
 * region, the condition text gathered, and the relation of the first If left undecided (the driver
 * then imports the model once per side of it). */
#define FE_MAX_REGIONS 8
typedef struct fe_narrow {
    char name[112]; /* the symbol's name (the same in every import of one model) */
    int64_t lo, hi;
} fe_narrow;
typedef struct fe_branching {
    uint8_t decide[FE_MAX_REGIONS];
    uint32_t n_decide, met; /* decisions given; open Ifs met so far */
    fe_narrow narrow[FE_MAX_REGIONS];
    uint32_t n_narrow;
    char cond[600]; /* "S1 <= S2 and ..." over the module's symbol names */
    /* the open If met past the decisions: its relation, as text both ways, and the one symbol it
     * reads with the intervals where it holds and where it fails (lo > hi: not one interval) */
    int fork;
    char fork_text[2][240], fork_sym[112];
    int64_t fork_lo[2], fork_hi[2];
    int fork_runs[2]; /* intervals of each side: 0 none (no sizes), 1 a box, 2 more */
} fe_branching;

typedef struct fe_ctx {
    ir_module *m;
    sym_table *t;
    symc_error *err;
    const char *model_dir;
    int64_t opset; /* of the default domain */
    const Onnx__GraphProto *g;
    fe_map values;   /* ONNX value name -> tensor */
    fe_map inits;    /* initializer name -> index in g->initializer */
    fe_map reserved; /* every ONNX value name: fresh names avoid them */
    fe_map taken;    /* tensor names in use */
    /* the node being translated */
    const Onnx__NodeProto *node;
    const char *where; /* "node 'n' (Op, opset 17)" for messages */
    const char *source;
    /* the first attribute of the node read as a type it does not have (fe_attr_i and the others
     * record it and return the default; fe_translate_node then fails the node with it) */
    symc_status attr_st;
    char attr_msg[320];
    fe_branching *br; /* NULL: one module (an open shape condition is refused) */
} fe_ctx;

/* Error at the current node: "node 'n' (Op, opset 17): ..." */
symc_status fe_fail(fe_ctx *c, symc_status code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Expression text for messages (a few rotating buffers). */
const char *fe_txt(fe_ctx *c, sym_expr e);

/* ---- node inputs, outputs, attributes ---------------------------------------------- */
uint32_t fe_n_in(fe_ctx *c);          /* inputs, ignoring trailing absent ones */
int fe_has_in(fe_ctx *c, uint32_t k); /* input k present (non-empty name) */
/* The tensor of input k; an absent or undefined input is an error. */
symc_status fe_in(fe_ctx *c, uint32_t k, uint32_t *t);
int fe_has_out(fe_ctx *c, uint32_t k); /* output k requested */
/* Attributes by name, checked against the type the op takes (never a value read from the wrong
 * field: an INT attribute's f is 0). An attribute of another type is recorded as the node's error
 * (attr_st) and reads as absent; the one conversion is INT where FLOAT is taken (exact: exporters
 * write alpha=2 as an INT), and FLOATS from INTS likewise. A file that leaves the type UNDEFINED
 * (IR version 1) has it inferred from the field that holds the value. */
const Onnx__AttributeProto *fe_attr(fe_ctx *c, const char *name); /* any type: presence */
/* the attribute when present with ONNX attribute type `type` (Onnx__AttributeProto__AttributeType) */
const Onnx__AttributeProto *fe_attr_of(fe_ctx *c, const char *name, int type);
int64_t fe_attr_i(fe_ctx *c, const char *name, int64_t dflt);
double fe_attr_f(fe_ctx *c, const char *name, double dflt);
/* A string attribute as text (its bytes copied into the module's arena); dflt if absent. */
const char *fe_attr_s(fe_ctx *c, const char *name, const char *dflt);
/* ints attribute; returns 0 when absent. */
int fe_attr_ints(fe_ctx *c, const char *name, const int64_t **v, uint32_t *n);
/* The node's attribute a as `type`, else the mismatch recorded (and 0); for the Constant op,
 * which takes whichever value attribute it is given */
int fe_attr_is(fe_ctx *c, const Onnx__AttributeProto *a, int type);
int fe_attr_type(const Onnx__AttributeProto *a); /* its type (inferred where UNDEFINED) */

/* ---- emitting IR -------------------------------------------------------------------- */
/* Adds an IR node for the current ONNX node: checks it (ir_check_node),
 * gives its outputs the op's dtype, then infers their shapes and symbolic
 * values (pass_infer_node). Output k is named after ONNX output out_k[k] when
 * out_k is given and out_k[k] >= 0 (and bound to it), else a fresh name
 * derived from the node's first output. outs may be NULL. */
symc_status fe_emit(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n_in, const ir_attr *attrs, uint32_t n_attrs,
                    const int *out_k, uint32_t n_out, uint32_t *outs);
/* Single-output shorthand: out_k < 0 for an intermediate tensor. */
symc_status fe_emit1(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n_in, const ir_attr *attrs, uint32_t n_attrs,
                     int out_k, uint32_t *out);
/* A constant tensor of static dims (data copied); out_k as above. */
symc_status fe_const(fe_ctx *c, symc_dtype dt, int32_t rank, const int64_t *dims, const void *data, int out_k,
                     uint32_t *out);
/* Binds ONNX output k to an existing tensor (no node). */
symc_status fe_bind(fe_ctx *c, uint32_t k, uint32_t t);

/* ---- values ---------------------------------------------------------------------------- */
/* The elements of tensor t as expressions, which an ONNX op needs at build time
 * (Reshape's shape, Slice's starts, ...). `role` names the input in the error:
 * "input 1 'shape' (the target shape) is not known at build time: ...". */
symc_status fe_values(fe_ctx *c, uint32_t t, uint32_t k, const char *role, const sym_expr **v, uint32_t *n);
/* The same, each element a constant. */
symc_status fe_const_ints(fe_ctx *c, uint32_t t, uint32_t k, const char *role, int64_t *v, uint32_t cap, uint32_t *n);
/* A scalar (or one-element) constant tensor's value as a double. */
symc_status fe_const_scalar(fe_ctx *c, uint32_t t, uint32_t k, const char *role, double *v);

/* ---- tensors ------------------------------------------------------------------------------- */
/* ONNX element type -> dtype; 0 if symc has none. */
int fe_dtype(int32_t onnx_type, symc_dtype *out);
const char *fe_onnx_type_name(int32_t onnx_type);
/* Decodes a TensorProto (raw, typed or external data) into malloc'd bytes of
 * its dtype. `what` names it in errors. */
symc_status fe_tensor_data(fe_ctx *c, const Onnx__TensorProto *tp, const char *what, symc_dtype *dt, int32_t *rank,
                           int64_t *dims, uint8_t **data, size_t *size);

/* ---- the import's tensors (onnx_context.c) ------------------------------------------------ */
symc_status fe_nomem(fe_ctx *c); /* "out of memory" at the current node */
/* A new IR tensor named name (which the caller made unique), recorded as taken. */
symc_status fe_add_tensor(fe_ctx *c, const char *name, symc_dtype dt, int32_t rank, const sym_expr *dims, uint32_t *t);
/* The tensor an ONNX value name stands for (an initializer made a constant on first use); *found 0
 * when the name is unknown. */
symc_status fe_lookup_value(fe_ctx *c, const char *name, uint32_t *t, int *found);

/* ---- branches on shape conditions (onnx_branch.c) ---------------------------------------------- */
/* The branch an If takes when its condition `cond` is a comparison of shape values (Greater,
 * Less, Equal, ... of build-time integer values, through Not and Cast): *take 1 for
 * then_branch, 0 for else_branch, -1 when cond is no such comparison. Decided by proof over the ranges when it can be; otherwise by
 * the import's decisions (c->br), or it stops the import for the driver to fork (c->br->fork),
 * or, without c->br, it is refused saying that symc compile imports both sides. */
symc_status fe_shape_condition(fe_ctx *c, uint32_t cond, int *take);
/* A new symbol's range within this import's region (the narrowings of c->br for `name`); 0 when
 * the region leaves the symbol no value. */
int fe_branch_range(const fe_ctx *c, const char *name, int64_t *min, int64_t *opt, int64_t *max, int64_t mult);
/* One import of the bytes (onnx_import.c), under the decisions and narrowings of br (NULL: none). */
symc_status fe_import_buffer(const uint8_t *buf, size_t size, const char *model_dir, const fe_input_shape *shapes,
                             uint32_t n_shapes, fe_branching *br, ir_module **out, symc_error *err);
/* The model file's bytes and folder (onnx_import.c), for the importers of one and of several modules. */
symc_status fe_read_model(const char *path, uint8_t **buf, size_t *size, char **dir, symc_error *err);

/* ---- ops (onnx_op_table.c) ------------------------------------------------------------------ */
/* Translates c->node; an unknown op type is an error naming it. */
symc_status fe_translate_node(fe_ctx *c);

#endif
