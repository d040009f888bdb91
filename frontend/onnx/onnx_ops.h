/* Internals shared by the ONNX op families (frontend/onnx/onnx_*.c): each family file translates
 * its ops, one handler per ONNX op type, and lists them in a table sorted by name
 * (fe_onnx_ops_<family>); onnx_op_table.c finds a node's handler in them. The helpers below
 * (onnx_ops_common.c) are what the families share; the importer's own helpers (attributes,
 * emitting IR, build-time values) are in onnx_internal.h. */
#ifndef SYMC_FRONTEND_ONNX_OPS_H
#define SYMC_FRONTEND_ONNX_OPS_H

#include "frontend/onnx/onnx_internal.h"

#define MAXV 64 /* symbolic values followed, as in passes/infer_shapes.c */
static inline ir_tensor *T(fe_ctx *c, uint32_t t) { return &c->m->tensors[t]; }
/* The axes of a Reduce* node: an input since opset 13 (ReduceSum) or 18 (the
 * others), an attribute before. noop: noop_with_empty_axes with no (or empty)
 * axes, where the node reduces nothing. */
typedef struct red_axes {
    int64_t axes[IR_MAX_RANK];
    uint32_t n;
    int noop, keep;
} red_axes;

/* ---- shared helpers (onnx_ops_common.c) ---- */
symc_status fe_emit_bin(fe_ctx *c, ir_op op, uint32_t a, uint32_t b, int out_k, uint32_t *out);
symc_status fe_emit_binary(fe_ctx *c, ir_op op, uint32_t a, uint32_t b, int out_k, uint32_t *out);
symc_status fe_emit_cast(fe_ctx *c, uint32_t x, symc_dtype dt, int out_k, uint32_t *out);
symc_status fe_emit_reduce(fe_ctx *c, ir_op op, uint32_t x, const red_axes *ra, int keep, int out_k, uint32_t *out);
symc_status fe_emit_reshape(fe_ctx *c, uint32_t x, const sym_expr *dims, uint32_t n, int out_k, uint32_t *out);
symc_status fe_emit_scalar(fe_ctx *c, symc_dtype dt, double v, uint32_t *out);
symc_status fe_emit_un(fe_ctx *c, ir_op op, uint32_t x, int out_k, uint32_t *out);
symc_status fe_emit_unary(fe_ctx *c, ir_op op, uint32_t x, int out_k, uint32_t *out);
symc_status fe_emit_unary_attrs(fe_ctx *c, ir_op op, const ir_attr *a, uint32_t na);
symc_status fe_fold(fe_ctx *c, const char *op, const uint32_t *in, uint32_t n_in, uint32_t out);
symc_status fe_need_float(fe_ctx *c, uint32_t x);
symc_status fe_need_inputs(fe_ctx *c, uint32_t lo, uint32_t hi);
symc_status fe_norm_axis_of(fe_ctx *c, int64_t axis, int32_t r, int32_t *out);
symc_status fe_scalar_value(fe_ctx *c, uint32_t k, const char *role, sym_expr *e);
symc_status fe_set_values(fe_ctx *c, uint32_t t, const sym_expr *v, uint32_t n);
int64_t fe_small_numel(fe_ctx *c, uint32_t t);

/* (onnx_conv.c) */
symc_status fe_conv_of(fe_ctx *c, uint32_t *in, uint32_t n, int out_k, uint32_t *out);

/* ---- the op families' tables (onnx_op_table.c searches them) ---- */
typedef struct fe_op {
    const char *name; /* ONNX op type */
    symc_status (*fn)(fe_ctx *c);
} fe_op;
extern const fe_op fe_onnx_ops_elementwise[];
extern const uint32_t fe_onnx_n_ops_elementwise;
extern const fe_op fe_onnx_ops_norm[];
extern const uint32_t fe_onnx_n_ops_norm;
extern const fe_op fe_onnx_ops_reduce[];
extern const uint32_t fe_onnx_n_ops_reduce;
extern const fe_op fe_onnx_ops_index[];
extern const uint32_t fe_onnx_n_ops_index;
extern const fe_op fe_onnx_ops_einsum[];
extern const uint32_t fe_onnx_n_ops_einsum;
extern const fe_op fe_onnx_ops_conv[];
extern const uint32_t fe_onnx_n_ops_conv;
extern const fe_op fe_onnx_ops_movement[];
extern const uint32_t fe_onnx_n_ops_movement;
extern const fe_op fe_onnx_ops_resize[];
extern const uint32_t fe_onnx_n_ops_resize;
extern const fe_op fe_onnx_ops_quant[];
extern const uint32_t fe_onnx_n_ops_quant;
extern const fe_op fe_onnx_ops_signal[];
extern const uint32_t fe_onnx_n_ops_signal;
extern const fe_op fe_onnx_ops_loss[];
extern const uint32_t fe_onnx_n_ops_loss;
extern const fe_op fe_onnx_ops_recurrent[];
extern const uint32_t fe_onnx_n_ops_recurrent;
extern const fe_op fe_onnx_ops_sequence[];
extern const uint32_t fe_onnx_n_ops_sequence;
extern const fe_op fe_onnx_ops_sources[];
extern const uint32_t fe_onnx_n_ops_sources;
extern const fe_op fe_onnx_ops_control[];
extern const uint32_t fe_onnx_n_ops_control;
/* the handler of an ONNX op type of the default domain, NULL when symc has none */
const fe_op *fe_onnx_find_op(const char *name);

#endif
