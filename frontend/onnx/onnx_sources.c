/* ONNX sources: Constant (whichever value attribute it has), ConstantOfShape, and Dropout in
 * inference (its input, and a mask of ones when asked). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- sources -------------------------------------------------------------------------------------------- */

static symc_status h_constant(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 0, 0);
    if (st) return st;
    if (c->node->n_attribute != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "needs exactly one value attribute, has %zu", c->node->n_attribute);
    const Onnx__AttributeProto *a = c->node->attribute[0];
    uint32_t out;
    if (!strcmp(a->name, "value") && fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR) && a->t) {
        symc_dtype dt;
        int32_t rank;
        int64_t dims[IR_MAX_RANK];
        uint8_t *data;
        size_t size;
        if ((st = fe_tensor_data(c, a->t, "attribute 'value'", &dt, &rank, dims, &data, &size))) return st;
        st = fe_const(c, dt, rank, dims, data, 0, &out);
        free(data);
        return st;
    }
    if (!strcmp(a->name, "value_float")) { /* an INT converts (exact), as fe_attr_f does */
        float f = (float)fe_attr_f(c, "value_float", 0.0);
        return c->attr_st ? SYMC_OK : fe_const(c, SYMC_F32, 0, NULL, &f, 0, &out);
    }
    if (!strcmp(a->name, "value_int"))
        return fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
            ? fe_const(c, SYMC_I64, 0, NULL, &a->i, 0, &out)
            : SYMC_OK;
    if (!strcmp(a->name, "value_floats")) {
        if (fe_attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) { /* INTS as FLOATS: each converted */
            int64_t d = (int64_t)a->n_ints;
            float *f = malloc((size_t)(d ? d : 1) * sizeof *f);
            if (!f) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory for 'value_floats'");
            for (int64_t i = 0; i < d; i++) f[i] = (float)a->ints[i];
            st = fe_const(c, SYMC_F32, 1, &d, f, 0, &out);
            free(f);
            return st;
        }
        int64_t d = (int64_t)a->n_floats; /* the list read is the one counted */
        return fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS)
            ? fe_const(c, SYMC_F32, 1, &d, a->floats, 0, &out)
            : SYMC_OK;
    }
    if (!strcmp(a->name, "value_ints")) {
        int64_t d = (int64_t)a->n_ints;
        return fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
            ? fe_const(c, SYMC_I64, 1, &d, a->ints, 0, &out)
            : SYMC_OK;
    }
    return fe_fail(c, SYMC_ERR_UNSUPPORTED, "a constant given as '%s' is not supported", a->name);
}

/* ConstantOfShape: a one-element constant expanded to the shape. */
static symc_status h_constant_of_shape(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t s, n, scalar, out;
    const sym_expr *v;
    if (!st) st = fe_in(c, 0, &s);
    if (!st) st = fe_values(c, s, 0, "the output shape", &v, &n);
    if (st) return st;
    if (n > IR_MAX_RANK) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "output rank %u exceeds %d", n, IR_MAX_RANK);
    const Onnx__AttributeProto *va = fe_attr_of(c, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    symc_dtype dt = SYMC_F32;
    uint8_t zero[8] = {0}, *data = zero;
    if (va && va->t) {
        int32_t rank;
        int64_t dims[IR_MAX_RANK];
        size_t size;
        if ((st = fe_tensor_data(c, va->t, "attribute 'value'", &dt, &rank, dims, &data, &size))) return st;
        if (size != symc_dtype_size(dt)) {
            free(data);
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute 'value' must hold one element");
        }
    }
    st = fe_const(c, dt, 0, NULL, data, -1, &scalar);
    if (data != zero) free(data);
    if (st) return st;
    ir_attr a = symc_attr_dims("shape", v, n);
    if ((st = fe_emit1(c, IR_OP_EXPAND, &scalar, 1, &a, 1, 0, &out))) return st;
    return fe_fold(c, "Expand", &scalar, 1, out);
}

/* Dropout at inference is the identity with an all-true mask (output 1).
 * training_mode (input 2, default false) must be known at build time; in
 * training mode a ratio of 0 drops nothing and is the identity too, while
 * any other ratio draws random numbers no compiled engine can reproduce, so
 * it is refused. */
static symc_status h_dropout(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 3);
    uint32_t x, out, t;
    double on = 0, ratio = 0.5;
    if (!st) st = fe_in(c, 0, &x);
    if (!st && fe_has_in(c, 2) && !(st = fe_in(c, 2, &t))) st = fe_const_scalar(c, t, 2, "training_mode", &on);
    if (!st && on != 0) {
        if (fe_has_in(c, 1) && !(st = fe_in(c, 1, &t))) st = fe_const_scalar(c, t, 1, "the ratio", &ratio);
        if (!st && ratio != 0)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "training_mode is true with ratio %g: random dropout cannot be reproduced (symc compiles "
                           "for inference; only ratio 0 is supported in training mode)",
                           ratio);
    }
    if (st || (st = fe_emit1(c, IR_OP_IDENTITY, &x, 1, NULL, 0, 0, &out)) || !fe_has_out(c, 1)) return st;
    uint8_t one = 1;
    uint32_t tr;
    sym_expr dims[IR_MAX_RANK]; /* x's dims: adding the constant may move the tensor table */
    int32_t r = T(c, x)->rank;
    memcpy(dims, T(c, x)->dims, (size_t)r * sizeof dims[0]);
    ir_attr a = symc_attr_dims("shape", dims, (uint32_t)r);
    if ((st = fe_const(c, SYMC_BOOL, 0, NULL, &one, -1, &tr))) return st;
    return fe_emit1(c, IR_OP_EXPAND, &tr, 1, &a, 1, 1, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_sources[] = {
    {"Constant", h_constant},
    {"ConstantOfShape", h_constant_of_shape},
    {"Dropout", h_dropout},
};
const uint32_t fe_onnx_n_ops_sources = sizeof fe_onnx_ops_sources / sizeof fe_onnx_ops_sources[0];
