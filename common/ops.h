/* common/ops.h: the op codes and limits the compiler and the runtime share.
 *
 * common/ holds what ir/ (which builds modules) and runtime/ (which runs
 * engines) must agree on and nothing else. Its library, symc_common
 * (common/CMakeLists.txt), is the base every module links: the status
 * channel, the element types' table and the arena. Its headers-only part:
 * the op table (ops.def), this header, the attribute codec of the two
 * FlatBuffers schemas (symir_fb.h) and the clock (clock.h). The runtime
 * needs no ir/ header or object for any of it. The names here keep the
 * IR's prefix (ir_op, IR_OP_ADD, IR_MAX_RANK) because they are the IR's
 * vocabulary; ir/ir.h includes this header and adds the module API around
 * it. A common/ header includes only common/ and include/symc/ headers
 * (tests/arch/check_includes.sh). */
#ifndef SYMC_COMMON_OPS_H
#define SYMC_COMMON_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Most dims a tensor has, in a module and in an engine. */
#define IR_MAX_RANK 8

/* IR_OP_<ID> for every row of ops.def, in its order. Files store ops by
 * name, so the numbers may change between versions. */
typedef enum ir_op {
#define IR_OP(ID, name, min_in, max_in, min_out, max_out, cat, dt, attrs) IR_OP_##ID,
#include "common/ops.def"
#undef IR_OP
    IR_OP_COUNT
} ir_op;

/* The op's ops.def name ("matmul"), "?" when op is out of range. */
static inline const char *ir_op_name(ir_op op) {
    static const char *const names[IR_OP_COUNT] = {
#define IR_OP(ID, name, min_in, max_in, min_out, max_out, cat, dt, attrs) name,
#include "common/ops.def"
#undef IR_OP
    };
    return (unsigned)op < IR_OP_COUNT ? names[op] : "?";
}

/* Whether op produces a size known only after it runs (docs/PLAN-data-dependent.md): 1 with the output
 * and dim that are the size (ir/produced.c finds the producer of such a size by it; the engine loader
 * checks a produced size's node against it). */
static inline int ir_produced_dim(ir_op op, unsigned *output, int *dim) {
    switch (op) {
    case IR_OP_NONZERO: *output = 0, *dim = 1; return 1; /* [rank, u] */
    case IR_OP_UNIQUE: *output = 0, *dim = 0; return 1;  /* indices [u] */
    case IR_OP_NMS: *output = 0, *dim = 0; return 1;     /* selected [u, 3] */
    case IR_OP_ITEM: *output = 0, *dim = 0; return 1;    /* 0, 1, ..., u-1 */
    default: return 0;
    }
}

#ifdef __cplusplus
}
#endif
#endif
