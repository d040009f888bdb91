/* frontend/onnx.h: the ONNX importer (prefix fe_).
 *
 *   fe_shape_list shapes;
 *   fe_shape_list_init(&shapes);
 *   fe_parse_shapes(&shapes, FE_SHAPES, "x:1x196x768,4x196x768,32x196x768", &err);
 *   fe_shape_list_check(&shapes, &err);
 *   ir_module *m;
 *   fe_onnx_import_file("vit.onnx", shapes.items, shapes.n, &m, &err);
 *   fe_shape_list_free(&shapes);
 *
 * A model (ONNX opsets 13 to 21 of the default domain; later ones are read
 * with the same rules) becomes an IR module whose every tensor has its
 * symbolic shape: dim_param names become symbols, dim_value constants,
 * unnamed dynamic dims fresh symbols named "<input>_dim<k>"; each symbol's
 * range comes from the declared input shapes. Shape sub-graphs (Shape ->
 * Gather -> Concat -> Reshape, ConstantOfShape, Range, ...) are evaluated
 * symbolically while importing, so the reshape/expand/slice/pad/tile nodes
 * carry their target sizes as expressions. Any op, attribute or input the
 * importer cannot translate is an error naming the node, its op type and the
 * opset; nothing is skipped silently. */
#ifndef SYMC_FRONTEND_ONNX_H
#define SYMC_FRONTEND_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "symc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define FE_MAX_RANK 8

/* The declared sizes of one graph input, trtexec style: for every dim the
 * smallest, the tuned-for and the largest size. A dim whose min, opt and max
 * are equal is fixed. */
typedef struct fe_input_shape {
    const char *name;
    int32_t rank;
    int64_t min[FE_MAX_RANK], opt[FE_MAX_RANK], max[FE_MAX_RANK];
    int64_t multiple[FE_MAX_RANK]; /* a dynamic dim's declared multiple (--multiple); 0 or 1: none */
} fe_input_shape;

/* Imports a model file. Initializers stored as external data are read from
 * files relative to the model's folder (absolute paths and '..' are refused).
 * shapes may be NULL when n_shapes is 0 (then every input must be static).
 * On success *out is a verified module with every shape inferred; the caller
 * frees it with ir_module_free. */
symc_status fe_onnx_import_file(const char *path, const fe_input_shape *shapes, uint32_t n_shapes, ir_module **out,
                                symc_error *err);
/* The same from bytes in memory; model_dir is the folder external data is
 * relative to (NULL: a model with external data is an error). */
symc_status fe_onnx_import_buffer(const uint8_t *buf, size_t size, const char *model_dir, const fe_input_shape *shapes,
                                  uint32_t n_shapes, ir_module **out, symc_error *err);

/* A model with If nodes whose condition is a comparison of input sizes that the declared ranges
 * leave open (Shape -> Gather -> Greater -> If) imports as several modules, one per combination
 * of branches taken: a region of the input sizes each (symc_compile_regions makes them one
 * engine). A condition over one symbol narrows that symbol's range in each module ("S > 64":
 * S in [65, max] on one side, [min, 64] on the other); any other becomes the region's condition
 * text ("S1 <= S2"). At most FE_ONNX_MAX_REGIONS regions. fe_onnx_import_file refuses such a
 * model, pointing here; a model without them imports as one region with no condition, the module
 * fe_onnx_import_file makes. */
#define FE_ONNX_MAX_REGIONS 8
typedef struct fe_onnx_region {
    ir_module *module;
    char *condition; /* NULL, or the relations its ranges do not say, joined by " and " */
    char *branches;  /* the If nodes it took and how ("'pick' then_branch (S > 64)"), for progress output */
} fe_onnx_region;
typedef struct fe_onnx_regions {
    fe_onnx_region items[FE_ONNX_MAX_REGIONS];
    uint32_t n;
} fe_onnx_regions;
symc_status fe_onnx_import_file_regions(const char *path, const fe_input_shape *shapes, uint32_t n_shapes,
                                        fe_onnx_regions *out, symc_error *err);
void fe_onnx_regions_free(fe_onnx_regions *r);

/* ---- command-line shape flags ------------------------------------------------ */
/* Which flag a spec came from:
 *   FE_SHAPES      --shapes x:1x3x224x224            (fixed: min = opt = max)
 *                  --shapes x:1x196x768,4x196x768,32x196x768   (min,opt,max)
 *                  several inputs in one spec: --shapes a:1x3,b:1x7 or
 *                  a:1x3,2x3,4x3,b:1x7,2x7,4x7; or repeat the flag
 *   FE_MIN_SHAPES  --min-shapes a:1x3,b:1x7   (one shape an input)
 *   FE_OPT_SHAPES  --opt-shapes ...
 *   FE_MAX_SHAPES  --max-shapes ...
 * An input name runs to the last ':' of its item, so names like "input:0"
 * work; a name with ',' cannot be given. A scalar input is "name:" with no
 * dims. */
typedef enum fe_shape_flag { FE_SHAPES, FE_MIN_SHAPES, FE_OPT_SHAPES, FE_MAX_SHAPES } fe_shape_flag;

/* One --multiple item: input `name`'s dim `axis` is a multiple of `m`. */
typedef struct fe_multiple {
    char *name;
    int32_t axis;
    int64_t m;
    size_t col; /* 1-based column in its flag's text, for messages */
} fe_multiple;

/* The inputs declared so far; items[0..n) are what the importer takes. */
typedef struct fe_shape_list {
    fe_input_shape *items; /* names are owned by the list */
    uint8_t *given;        /* per item: bit 0 min, bit 1 opt, bit 2 max declared */
    uint32_t n, cap;
    fe_multiple *mult; /* the --multiple items, applied to items by fe_shape_list_check */
    uint32_t n_mult, cap_mult;
} fe_shape_list;

void fe_shape_list_init(fe_shape_list *l);
void fe_shape_list_free(fe_shape_list *l);
/* The flag for its command-line spelling ("--shapes", "--min-shapes",
 * "--opt-shapes", "--max-shapes", or trtexec's "--minShapes", "--optShapes",
 * "--maxShapes"); 0 if it is none of them. */
int fe_shape_flag_parse(const char *flag, fe_shape_flag *out);
/* Adds one occurrence of a flag. Bad syntax is SYMC_ERR_INVALID_ARG quoting
 * the flag, the text and the 1-based column; declaring the same bound of an
 * input twice, or shapes of different ranks for one input, is an error too.
 * On error the list is unchanged. */
symc_status fe_parse_shapes(fe_shape_list *l, fe_shape_flag flag, const char *spec, symc_error *err);
/* Adds one --multiple flag: "NAME:AXIS=M" items, comma separated (e.g.
 * "x:1=8,mask:1=8"): input NAME's dim AXIS takes only multiples of M (>= 1),
 * so a reshape or split that needs S % 8 == 0 compiles for a dynamic S. The
 * name runs to the item's last ':'. An axis given twice is an error. On
 * error the list is unchanged. */
symc_status fe_parse_multiple(fe_shape_list *l, const char *spec, symc_error *err);
/* After the last flag: every input has min, opt and max, and min <= opt <=
 * max in every dim; each --multiple names a declared input, a dim inside its
 * rank and a dynamic one (min < max), and is copied into items[].multiple.
 * The error names the input, the dim and the flag to add. */
symc_status fe_shape_list_check(fe_shape_list *l, symc_error *err);

/* ---- points: one shape per input (symc bench) ---------------------------------- */
/* The same grammar with one shape an input: "x:4x196x768,mask:4x196", ';'
 * also separating inputs (empty items are skipped), and a dim may name a
 * symbol ("x:Bx196x768"): a letter or '_' then letters, digits and '_', but
 * no 'x' (which separates dims); the caller resolves it. */
typedef struct fe_point_input {
    char *name;
    int32_t rank;
    int64_t dims[FE_MAX_RANK]; /* -1 where sym[d] names a symbol */
    char *sym[FE_MAX_RANK];    /* a symbol's name, or NULL for a number */
} fe_point_input;

/* The inputs of one point; names and symbols are owned by it. */
typedef struct fe_point {
    fe_point_input *items;
    uint32_t n, cap;
} fe_point;

void fe_point_init(fe_point *p);
void fe_point_free(fe_point *p);
/* Adds one flag's inputs to p (flag: its spelling, for messages). Syntax
 * errors read like fe_parse_shapes's; an input given twice in the point is
 * an error too. On error p is unchanged. */
symc_status fe_parse_point(fe_point *p, const char *flag, const char *spec, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
