/* ONNX op -> core IR ops: one translation function per ONNX op type, found by
 * name in the op families' tables (bisection in each) (ops of the default domain, opsets 13 to 21).
 *
 * Most ops map one to one. The work is in the ones whose ONNX form passes
 * sizes as tensors (Reshape, Expand, Slice, Pad, Tile, Range,
 * ConstantOfShape, Split, Unsqueeze, Squeeze, Reduce* axes, Clip bounds):
 * those tensors must be known at build time, either constants or small
 * integer tensors whose elements shape inference expresses over the input
 * symbols (ir_tensor.value), and they become attributes of kind dims or
 * ints. A few ops that shape sub-graphs use but the core shape rules do not
 * evaluate (comparisons, Where, Not, Expand of a known scalar, bool<->int
 * Cast) get their symbolic values here, decided by symshape's proofs, so
 * PyTorch's "Where(Equal(shape, -1), 1, shape)" idiom before Expand stays
 * symbolic; And, Or, Mod (passes/infer_shapes.c) and casts of one-element constants
 * fold the same way, which ONNX's function-expanded Attention needs.
 *
 * Ops ONNX defines by a function body (SoftmaxCrossEntropyLoss,
 * NegativeLogLikelihoodLoss, DynamicQuantizeLinear) are translated as that
 * body; the quantized ops decompose into existing ops on exact values (the
 * integer accumulation in int32 or double, round half to even, clip, cast);
 * ops whose inputs are all build-time constants (the window functions,
 * MelWeightMatrix) become constants computed here as the ONNX reference
 * computes them; an If whose condition is known at build time is its chosen
 * branch, imported in place, and Loop (constant trip count) and Scan
 * (constant length) are unrolled, their bodies imported once per iteration.
 * Anything that cannot be translated faithfully is an error
 * naming the node, never a silent approximation. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- table ------------------------------------------------------------------------------------------------ */

/* every family's table (each sorted by name; onnx_table_test checks it and that no name repeats) */
static const struct {
    const fe_op *ops;
    const uint32_t *n;
} families[] = {
    {fe_onnx_ops_elementwise, &fe_onnx_n_ops_elementwise},
    {fe_onnx_ops_norm, &fe_onnx_n_ops_norm},
    {fe_onnx_ops_reduce, &fe_onnx_n_ops_reduce},
    {fe_onnx_ops_index, &fe_onnx_n_ops_index},
    {fe_onnx_ops_einsum, &fe_onnx_n_ops_einsum},
    {fe_onnx_ops_conv, &fe_onnx_n_ops_conv},
    {fe_onnx_ops_movement, &fe_onnx_n_ops_movement},
    {fe_onnx_ops_resize, &fe_onnx_n_ops_resize},
    {fe_onnx_ops_quant, &fe_onnx_n_ops_quant},
    {fe_onnx_ops_signal, &fe_onnx_n_ops_signal},
    {fe_onnx_ops_loss, &fe_onnx_n_ops_loss},
    {fe_onnx_ops_recurrent, &fe_onnx_n_ops_recurrent},
    {fe_onnx_ops_sequence, &fe_onnx_n_ops_sequence},
    {fe_onnx_ops_sources, &fe_onnx_n_ops_sources},
    {fe_onnx_ops_control, &fe_onnx_n_ops_control},
};

static int cmp_op(const void *key, const void *e) { return strcmp(key, ((const fe_op *)e)->name); }

const fe_op *fe_onnx_find_op(const char *name) {
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        const fe_op *hit = bsearch(name, families[f].ops, *families[f].n, sizeof(fe_op), cmp_op);
        if (hit) return hit;
    }
    return NULL;
}

/* Ops refused by design, with the reason: a random draw no compiled engine
 * can reproduce, or a size or content symc cannot bound. (Ops whose output
 * size depends on the input's values with a bound from the op, NonZero,
 * Compress, Unique and NonMaxSuppression, are translated: onnx_index.c.) */
typedef struct refused_op {
    const char *name, *why;
} refused_op;

#define RANDOM_OP "it draws random numbers, which a compiled engine cannot reproduce"
static const refused_op refused[] = {
    {"Bernoulli", RANDOM_OP},
    {"ImageDecoder", "it decodes compressed image bytes, whose decoded size depends on the data"},
    {"Multinomial", RANDOM_OP},
    {"RandomNormal", RANDOM_OP},
    {"RandomNormalLike", RANDOM_OP},
    {"RandomUniform", RANDOM_OP},
    {"RandomUniformLike", RANDOM_OP},
    {"TfIdfVectorizer", "it counts n-grams of its input into a table of strings and pools"},
};

/* An attribute read as a type it does not have fails the node with that message, whatever the
 * handler made of the default it got (the node's IR is discarded with the import). A body's
 * nodes translate inside their parent's handler: the parent's record is kept across them. */
static symc_status translate_checked(fe_ctx *c, symc_status (*fn)(fe_ctx *)) {
    symc_status outer = c->attr_st;
    char outer_msg[sizeof c->attr_msg];
    memcpy(outer_msg, c->attr_msg, sizeof outer_msg);
    c->attr_st = SYMC_OK;
    symc_status st = fn(c);
    if (c->attr_st) st = fe_fail(c, c->attr_st, "%s", c->attr_msg);
    c->attr_st = outer;
    memcpy(c->attr_msg, outer_msg, sizeof outer_msg);
    return st;
}

symc_status fe_translate_node(fe_ctx *c) {
    const fe_op *op = fe_onnx_find_op(c->node->op_type);
    if (op) return translate_checked(c, op->fn);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (!strcmp(refused[i].name, c->node->op_type))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "ONNX op '%s' is not supported by symc's importer: %s",
                           c->node->op_type, refused[i].why);
    return fe_fail(c, SYMC_ERR_UNSUPPORTED, "ONNX op '%s' is not supported by symc's importer", c->node->op_type);
}
