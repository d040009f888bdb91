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

#include "ir/ir.h" /* ir_op (the op table) and the symc_attr layout only */
#include "symshape/sym.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RT_ENGINE_FORMAT_VERSION 1u
#define RT_NONE 0xffffffffu

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
} rt_guard;

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
    void *owned; /* decoder-owned memory (NULL for an engine described by the compiler) */
} rt_engine;

/* Encodes an engine (malloc'd bytes; free() them). */
symc_status rt_engine_encode(const rt_engine *e, uint8_t **bytes, size_t *size, symc_error *err);
/* Decodes and checks untrusted bytes. The engine keeps its own copy of
 * everything; free it with rt_engine_free. */
symc_status rt_engine_decode(const uint8_t *bytes, size_t size, rt_engine **out, symc_error *err);
void rt_engine_free(rt_engine *e);

#ifdef __cplusplus
}
#endif
#endif
