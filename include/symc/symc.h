/* symc.h: build a model by hand, the way TensorRT's network definition is used.
 *
 *   symc_module *m = symc_module_create("vit", &err);
 *   symc_dim B;  symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
 *   symc_dim x_dims[] = { B, symc_dim_const(m, 196), symc_dim_const(m, 768) };
 *   symc_tensor x;  symc_add_input(m, "x", SYMC_F32, 3, x_dims, &x, &err);
 *   symc_tensor y;  symc_add_node(m, "relu", "act", &x, 1, NULL, 0, &y, 1, &err);
 *   symc_mark_output(m, y, &err);
 *   symc_module_save(m, "vit.symir", &err);
 *
 * Dimensions are symbols with inclusive ranges [min, max], an opt value (the
 * size to tune for) and an optional multiple_of, or expressions over them.
 * Ops are named as in common/ops.def ("matmul", "reshape", ...); an unknown name,
 * a wrong arity or a bad attribute is an error naming the node and the op.
 * Every call returns a symc_status and fills the optional symc_error. */
#ifndef SYMC_SYMC_H
#define SYMC_SYMC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symc/attr.h"
#include "symc/dtype.h"
#include "symc/precision.h"
#include "symc/status.h"
#include "symc/version.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct symc_module symc_module;
typedef uint32_t symc_tensor; /* a tensor of a module */
#define SYMC_TENSOR_NONE ((symc_tensor)0xffffffffu)
/* symc_dim (a symbolic dimension expression, SYMC_DIM_NONE) and the node
 * attributes (symc_attr, symc_attr_int(), ...) are in symc/attr.h. */

/* ---- modules ------------------------------------------------------------- */
const char *symc_version(void);
symc_module *symc_module_create(const char *name, symc_error *err); /* NULL on failure */
void symc_module_destroy(symc_module *m);

/* A symbol: every value v with min <= v <= max (and v % multiple_of == 0) is a
 * size the compiled model accepts; opt is the size to tune for. */
symc_status symc_declare_symbol(symc_module *m, const char *name, int64_t min, int64_t opt, int64_t max,
                                int64_t multiple_of, symc_dim *out, symc_error *err);
/* How the caller's user declares this symbol a multiple, in the caller's own
 * words, with "{m}" standing for the multiple: e.g. "--multiple x:1={m}" or
 * "multiple_of={1: {m}} in symc.Input for input 'x'". A build error that needs
 * the symbol to be a multiple then suggests exactly that text with the
 * multiple filled in. symbol must be a symc_declare_symbol result; NULL or ""
 * removes the hint. Not saved in .symir files. */
symc_status symc_symbol_set_hint(symc_module *m, symc_dim symbol, const char *hint, symc_error *err);
/* Dimension expressions. On error (overflow, division by a zero constant) they
 * return SYMC_DIM_NONE, which propagates; symc_add_input and symc_add_node
 * report it with the module's recorded reason. */
symc_dim symc_dim_const(symc_module *m, int64_t v);
symc_dim symc_dim_add(symc_module *m, symc_dim a, symc_dim b);
symc_dim symc_dim_mul(symc_module *m, symc_dim a, symc_dim b);
symc_dim symc_dim_floordiv(symc_module *m, symc_dim a, symc_dim b);
symc_dim symc_dim_min(symc_module *m, symc_dim a, symc_dim b); /* e.g. min(300, u0): the k of a top-k over a count */
symc_dim symc_dim_max(symc_module *m, symc_dim a, symc_dim b);
/* Readable text of a dimension, snprintf semantics. */
size_t symc_dim_print(symc_module *m, symc_dim d, char *buf, size_t cap);
/* Whether a == b at every size inside the declared ranges: 1 proven for all of
 * them, 0 proven for none, -1 neither proven (evaluate to tell). */
int symc_dim_equal(symc_module *m, symc_dim a, symc_dim b);
/* The value of d with the declared symbols bound to values[0..n) in
 * declaration order (n = every symbol declared so far). Overflow and division
 * by zero are errors. */
symc_status symc_dim_eval(symc_module *m, symc_dim d, const int64_t *values, uint32_t n, int64_t *out, symc_error *err);

/* Graph inputs, in declaration order. rank <= 8. */
symc_status symc_add_input(symc_module *m, const char *name, symc_dtype dtype, int32_t rank, const symc_dim *dims,
                           symc_tensor *out, symc_error *err);
/* A constant of a static shape; data (nbytes = numel * dtype size) is copied. */
symc_status symc_add_constant(symc_module *m, const char *name, symc_dtype dtype, int32_t rank, const int64_t *dims,
                              const void *data, size_t nbytes, symc_tensor *out, symc_error *err);
/* A node applying `op` (its ops.def name). name may be NULL (a unique one is
 * made). Creates n_out output tensors, named after the node, whose dtype
 * follows the op's dtype rule; their shapes come from shape inference. */
symc_status symc_add_node(symc_module *m, const char *op, const char *name, const symc_tensor *inputs, uint32_t n_in,
                          const symc_attr *attrs, uint32_t n_attrs, symc_tensor *outputs, uint32_t n_out,
                          symc_error *err);
symc_status symc_mark_output(symc_module *m, symc_tensor t, symc_error *err);
/* A tensor's dtype and shape: node outputs get their shapes from
 * symc_module_infer_shapes (*rank is -1 before it). dims has room for 8. */
symc_status symc_tensor_info(symc_module *m, symc_tensor t, symc_dtype *dtype, int32_t *rank, symc_dim *dims,
                             symc_error *err);

/* Checks the whole module (types, arities, attributes, references). */
symc_status symc_module_verify(symc_module *m, symc_error *err);
/* Symbolic shape inference: every node output gets its shape as expressions
 * over the declared symbols. Facts that cannot be proven become guards; one
 * that would reject sizes you declared valid is an error naming the node, the
 * relation and a fix (e.g. "declare S as a multiple of 8"). It may run before
 * any output is marked (a frontend asking for a shape while it builds), and
 * again after more nodes: shapes it gave stay (a size a node produces at run
 * time keeps its symbol). */
symc_status symc_module_infer_shapes(symc_module *m, symc_error *err);
/* .symir files (FlatBuffers, ir/symir.fbs). Loading verifies the buffer, then
 * checks indices and sizes, before building anything. */
symc_status symc_module_save(symc_module *m, const char *path, symc_error *err);
symc_status symc_module_load(const char *path, symc_module **out, symc_error *err);
/* The module as readable text (malloc'd; free() it); NULL if out of memory. */
char *symc_module_print(symc_module *m);

/* ---- compiling to an engine (what `symc compile` does) ------------------- */
/* Fields are only ever appended (the ones before keep their offsets), so
 * start from symc_compile_options_init and set what you need. */
typedef struct symc_compile_options {
    int gpu;                  /* 1: CUDA kernels and library calls (default); 0: reference backend only */
    const char *arch;         /* "sm_90"...; NULL: the GPU present, else sm_90 */
    symc_precision precision; /* default SYMC_PRECISION_FP32 (symc/precision.h) */
    int tune;                 /* 1 (default): time library candidates at opt and a few sizes across
                                 the ranges when a GPU is present */
    /* Watching the work (what `symc compile` prints); all NULL by default. */
    void (*progress)(void *ctx, const char *step); /* as each pass and each long codegen step starts */
    const char *dump_after;                        /* a pass name (--dump-after): dump gets the IR as text after it */
    void (*dump)(void *ctx, const char *pass, const char *text);
    void *ctx; /* handed to progress and dump */
    /* Half storage (precision FP16/BF16, the precision pass): node names and/or op names
     * ("softmax,layer_norm,/blocks.0/Add"), comma separated, kept fp32 (--fp32-layers);
     * NULL: none. */
    const char *fp32_layers;
    /* 1 (default): for FP16 (and BF16 with a softmax), run the module once on the reference
     * backend at min (else opt) with seeded random inputs; FP16 keeps fp32 every tensor whose max
     * |value| passes 4096, and both store attention's Q and K in half when the logits are small
     * enough (--no-calibrate: 0; Q and K then stay fp32) */
    int calibrate;
} symc_compile_options;

/* The defaults above. */
void symc_compile_options_init(symc_compile_options *o);
/* Runs the pass pipeline (verify, shape inference) and writes an engine
 * (.symx) that runs at every size inside the declared ranges. opt may be
 * NULL (defaults). Errors name the node, op, tensor or symbol. This is the
 * one compile driver: `symc compile` calls it too. */
symc_status symc_module_compile(symc_module *m, const symc_compile_options *opt, const char *path, symc_error *err);

/* One engine for a declared box that no one graph serves (a model that
 * branches on a size, or that a tracer specialized for part of the range):
 * several modules, each a complete graph of the same inputs and outputs
 * (names, dtypes, ranks, in order), each valid in a region of the input
 * sizes. A region is its module's own symbol ranges (an input dim that is a
 * symbol in another region but a constant c here adds "dim == c"), plus an
 * optional condition text over its module's symbol names for what a box
 * cannot say: relations joined by " and ", each "A <= B", "A < B",
 * "A >= B", "A > B", "A == B", "A != B" or "A % k == 0", where A and B are
 * dim expressions ("S1 <= S2 and S1 % 8 == 0"). Symbols of different
 * modules are the same when they are read from the same input dim (not by
 * name). The declared box is the hull of the regions; every point of it
 * must lie in some region (checked at build time: a gap is an error naming
 * a point in it); a point in several regions runs the first. Weights equal
 * in content are stored once. */
typedef struct symc_region {
    symc_module *module;
    const char *condition; /* NULL or "": the box alone */
} symc_region;
/* Compiles every region's module with the same options (each tuned and
 * calibrated inside its own region) into one engine at path. n == 1 with no
 * condition is symc_module_compile, byte for byte. The runtime picks the
 * region when input shapes are set (symrt_context_region says which). */
symc_status symc_compile_regions(const symc_region *regions, uint32_t n, const symc_compile_options *opt,
                                 const char *path, symc_error *err);

/* ---- for language bindings (libsymc.so) ----------------------------------- */
/* Every public constant by its C name: the enumerators and integer macros of
 * the public headers ("SYMC_F32", "SYMRT_BACKEND_CUDA", "SYMC_DIM_NONE") and
 * the layout of the public structs ("sizeof(symc_compile_options)",
 * "offsetof(symc_attr, dims)"), so a binding reads them from the library it
 * loaded instead of copying them. A static table of *count rows. */
typedef struct symc_constant {
    const char *name;
    int64_t value;
} symc_constant;
const symc_constant *symc_constants(uint32_t *count);

#ifdef __cplusplus
}
#endif
#endif
