/* The ONNX importer's driver: bytes -> protobuf-c message -> IR module.
 *
 * The model is unpacked whole (protobuf-c keeps every field in memory; ONNX
 * caps a model file at protobuf's 2 GiB, larger weights live in external
 * files). Graph inputs become IR inputs with symbolic dims whose ranges come
 * from the declared shapes; nodes are then translated in the model's order
 * (ONNX requires topological order), and each IR node is shape-inferred as
 * soon as it is added, so a later ONNX op can read an earlier tensor's
 * symbolic shape and, for shape sub-graphs, its symbolic element values.
 * Initializers become constant nodes only when first used, which skips
 * unused weights and keeps the module in use order. Sub-graphs that only
 * fed build-time values (Shape -> Gather -> Concat feeding a Reshape whose
 * sizes are now an attribute) are dead afterwards and removed by the
 * pipeline's dead-node pass (pass_remove_dead, passes/dce.c), then the
 * result is verified.
 *
 * Names: a tensor keeps its ONNX value name; intermediate tensors of ops that
 * expand to several IR nodes get fresh names derived from the ONNX output,
 * avoiding every ONNX name of the graph. An IR node is named after its first
 * output (unique, since every tensor has one producer) and its source is the
 * ONNX node name, or "<OpType>#<index>" for an unnamed node. */
#define _XOPEN_SOURCE 700 /* realpath: the real path of external data */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/onnx/onnx_internal.h"

/* ---- graph inputs and symbols -------------------------------------------------------------------- */

/* A dim_param's declared range and who declared it. */
typedef struct param_range {
    const char *param;
    int64_t min, opt, max, mult; /* mult: the declared multiple, 1 when none */
    const char *input;
    int dim;
    sym_expr sym; /* SYM_NONE until its symbol exists */
} param_range;

typedef struct inputs_ctx {
    param_range *params;
    uint32_t n_params;
} inputs_ctx;

static param_range *find_param(inputs_ctx *ic, const char *p) {
    for (uint32_t i = 0; i < ic->n_params; i++)
        if (!strcmp(ic->params[i].param, p)) return &ic->params[i];
    return NULL;
}

/* A symbol name from text: letters, digits and '_' (what sym_parse reads
 * back), not starting with a digit, unique in the table. */
static symc_status new_symbol(fe_ctx *c, const char *text, int64_t min, int64_t opt, int64_t max, int64_t mult,
                              const char *input, int dim, const char *prov, sym_expr *out) {
    char base[96], name[112];
    size_t n = 0;
    if (!text[0] || (text[0] >= '0' && text[0] <= '9')) base[n++] = 'd';
    for (const char *p = text; *p && n + 1 < sizeof base; p++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
        base[n++] = ok ? ch : '_';
    }
    base[n] = '\0';
    snprintf(name, sizeof name, "%s", base);
    sym_id id;
    for (int k = 1; sym_symbol_find(c->t, name, &id); k++) snprintf(name, sizeof name, "%s_%d", base, k);
    if (!fe_branch_range(c, name, &min, &opt, &max, mult)) /* this region leaves it no size */
        return fe_fail(c, SYMC_ERR_RANGE, "symbol '%s' has no size in this region", name);
    sym_symbol_info info = {name, min, opt, max, mult > 1 ? mult : 1, prov};
    symc_status st = sym_symbol_new(c->t, &info, &id, c->err);
    if (st) return st;
    /* a guard needing a multiple suggests the flag that declares it */
    char hint[320];
    snprintf(hint, sizeof hint, "--multiple %s:%d={m}", input, dim);
    if ((st = sym_symbol_set_hint(c->t, id, hint, c->err))) return st;
    *out = sym_var(c->t, id);
    return SYMC_OK;
}

static const Onnx__TensorShapeProto *input_shape(const Onnx__ValueInfoProto *vi) {
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type) return NULL;
    return vi->type->tensor_type->shape;
}

/* The flag a person adds for this input: dynamic dims as MIN/OPT/MAX. */
static void suggest_flag(const char *name, const Onnx__TensorShapeProto *sh, char *buf, size_t cap) {
    static const char *const word[3] = {"MIN", "OPT", "MAX"};
    size_t n = (size_t)snprintf(buf, cap, "--shapes %s:", name);
    for (int w = 0; w < 3 && n < cap; w++) {
        if (w) n += (size_t)snprintf(buf + n, cap - n, ",");
        for (size_t d = 0; sh && d < sh->n_dim && n < cap; d++) {
            const Onnx__TensorShapeProto__Dimension *dm = sh->dim[d];
            if (d) n += (size_t)snprintf(buf + n, cap - n, "x");
            if (n >= cap) break;
            if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value >= 0)
                n += (size_t)snprintf(buf + n, cap - n, "%" PRId64, dm->dim_value);
            else n += (size_t)snprintf(buf + n, cap - n, "%s", word[w]);
        }
    }
}

static int is_dim_value(const Onnx__TensorShapeProto__Dimension *dm) {
    return dm && dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value >= 0;
}

/* A dim's dim_param, or NULL (a value, or no name). */
static const char *dim_param(const Onnx__TensorShapeProto__Dimension *dm) {
    return dm && dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param[0]
        ? dm->dim_param
        : NULL;
}

/* Which model input (not an initializer) declaration d is for, into *at. */
static symc_status find_declared_input(fe_ctx *c, const fe_input_shape *d, uint32_t s, size_t *at) {
    const Onnx__GraphProto *g = c->g;
    if (!d->name) return fe_fail(c, SYMC_ERR_INVALID_ARG, "declared input shape %u has no name", s);
    size_t i = 0;
    while (i < g->n_input && (strcmp(g->input[i]->name, d->name) || fe_map_get(&c->inits, d->name, NULL))) i++;
    if (i == g->n_input) {
        char list[256];
        size_t n = 0;
        list[0] = '\0';
        for (size_t k = 0; k < g->n_input && n < sizeof list; k++)
            if (!fe_map_get(&c->inits, g->input[k]->name, NULL))
                n += (size_t)snprintf(list + n, sizeof list - n, "%s'%s'", n ? ", " : "", g->input[k]->name);
        return fe_fail(c, SYMC_ERR_INVALID_ARG,
                       "shapes are declared for '%s', but there is no input named '%s' (inputs: %s)", d->name, d->name,
                       n ? list : "none");
    }
    *at = i;
    return SYMC_OK;
}

/* Declaration d against the model's shape sh of its input: rank, fixed dims,
 * min <= opt <= max; each dim_param's range goes into ic, and a dim_param
 * given two ranges is an error naming both. */
static symc_status check_declaration(fe_ctx *c, inputs_ctx *ic, const fe_input_shape *d,
                                     const Onnx__TensorShapeProto *sh) {
    if (d->rank < 0 || d->rank > IR_MAX_RANK)
        return fe_fail(c, SYMC_ERR_INVALID_ARG, "input '%s': declared rank %d is outside [0, %d]", d->name,
                       (int)d->rank, IR_MAX_RANK);
    if (sh && (int32_t)sh->n_dim != d->rank)
        return fe_fail(c, SYMC_ERR_INVALID_ARG,
                       "input '%s' has rank %zu in the model, but its declared "
                       "shapes have %d dims",
                       d->name, sh->n_dim, (int)d->rank);
    for (int32_t k = 0; k < d->rank; k++) {
        if (d->min[k] < 0 || d->min[k] > d->opt[k] || d->opt[k] > d->max[k])
            return fe_fail(c, SYMC_ERR_INVALID_ARG,
                           "input '%s' dim %d: declared min %" PRId64 ", opt %" PRId64 ", max %" PRId64
                           " must satisfy 0 <= min <= opt <= max",
                           d->name, (int)k, d->min[k], d->opt[k], d->max[k]);
        const Onnx__TensorShapeProto__Dimension *dm = sh ? sh->dim[k] : NULL;
        const char *param = dim_param(dm);
        if (is_dim_value(dm)) {
            if (d->min[k] != dm->dim_value || d->opt[k] != dm->dim_value || d->max[k] != dm->dim_value)
                return fe_fail(c, SYMC_ERR_INVALID_ARG,
                               "input '%s' dim %d is %" PRId64 " in the model, but the "
                               "declared shapes give min %" PRId64 ", opt %" PRId64 ", max %" PRId64,
                               d->name, (int)k, dm->dim_value, d->min[k], d->opt[k], d->max[k]);
        } else if (param) {
            param_range *p = find_param(ic, param);
            if (!p) {
                p = &ic->params[ic->n_params++];
                int64_t mult = d->multiple[k] > 1 ? d->multiple[k] : 1;
                *p = (param_range){param, d->min[k], d->opt[k], d->max[k], mult, d->name, (int)k, SYM_NONE};
            } else if (p->min != d->min[k] || p->opt != d->opt[k] || p->max != d->max[k]) {
                return fe_fail(c, SYMC_ERR_INVALID_ARG,
                               "symbol '%s' gets two ranges: [%" PRId64 ", %" PRId64 "] opt %" PRId64
                               " from input '%s' dim %d, and [%" PRId64 ", %" PRId64 "] opt %" PRId64
                               " from input '%s' dim %d",
                               p->param, p->min, p->max, p->opt, p->input, p->dim, d->min[k], d->max[k], d->opt[k],
                               d->name, (int)k);
            } else if (d->multiple[k] > 1 && p->mult > 1 && d->multiple[k] != p->mult) {
                return fe_fail(c, SYMC_ERR_INVALID_ARG,
                               "symbol '%s' is declared a multiple of %" PRId64 " (--multiple %s:%d=%" PRId64
                               ") and of %" PRId64 " (--multiple %s:%d=%" PRId64 "): declare one",
                               p->param, p->mult, p->input, p->dim, p->mult, d->multiple[k], d->name, (int)k,
                               d->multiple[k]);
            } else if (d->multiple[k] > 1) {
                p->mult = d->multiple[k];
            }
        }
    }
    return SYMC_OK;
}

/* A graph input's element type, after checking that it is a tensor whose
 * fixed dims are sizes (a negative dim_value is an invalid model, not a
 * dynamic dim). */
static symc_status input_dtype(fe_ctx *c, const Onnx__ValueInfoProto *vi, symc_dtype *dt) {
    const Onnx__TensorShapeProto *sh = input_shape(vi);
    for (size_t k = 0; sh && k < sh->n_dim; k++) {
        const Onnx__TensorShapeProto__Dimension *dm = sh->dim[k];
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dm->dim_value < 0)
            return fe_fail(c, SYMC_ERR_FORMAT,
                           "input '%s' dim %zu has dim_value %" PRId64 ": a size must be >= 0 "
                           "(a dynamic dim is a dim_param, or a dim with no value)",
                           vi->name, k, dm->dim_value);
    }
    if (!vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !vi->type->tensor_type)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input '%s' is not a tensor (sequences, maps and optionals are "
                       "not supported)",
                       vi->name);
    int32_t et = vi->type->tensor_type->has_elem_type ? vi->type->tensor_type->elem_type : 0;
    if (!fe_dtype(et, dt))
        return fe_fail(
            c, SYMC_ERR_UNSUPPORTED,
            "input '%s' has ONNX type %s, which symc does not support "
            "(supported: FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL)",
            vi->name, fe_onnx_type_name(et));
    return SYMC_OK;
}

/* Dim k of graph input vi (model shape sh, declaration d or NULL) as an
 * expression: a constant for a dim_value or an unnamed dim declared fixed,
 * the dim_param's symbol (made on first use), or a fresh symbol
 * "<input>_dim<k>" with the declared range. A dynamic dim with no
 * declaration is an error suggesting the flag to add. */
static symc_status input_dim(fe_ctx *c, inputs_ctx *ic, const Onnx__ValueInfoProto *vi,
                             const Onnx__TensorShapeProto *sh, const fe_input_shape *d, int32_t k, sym_expr *out) {
    const Onnx__TensorShapeProto__Dimension *dm = sh ? sh->dim[k] : NULL;
    char prov[300], fresh[200];
    snprintf(prov, sizeof prov, "input '%s' dim %d", vi->name, (int)k);
    if (is_dim_value(dm)) {
        *out = sym_const(c->t, dm->dim_value);
        return SYMC_OK;
    }
    const char *param = dim_param(dm);
    param_range *p = param ? find_param(ic, param) : NULL;
    if (p && p->sym != SYM_NONE) {
        *out = p->sym;
        return SYMC_OK;
    }
    if (p) {
        symc_status st = new_symbol(c, param, p->min, p->opt, p->max, p->mult, p->input, p->dim, prov, &p->sym);
        *out = p->sym;
        return st;
    }
    snprintf(fresh, sizeof fresh, "%s_dim%d", vi->name, (int)k);
    if (!d) {
        char flag[256];
        suggest_flag(vi->name, sh, flag, sizeof flag);
        return fe_fail(c, SYMC_ERR_INVALID_ARG, "input '%s' dim %d (%s) is dynamic: add %s", vi->name, (int)k,
                       param ? param : fresh, flag);
    }
    if (d->min[k] == d->max[k] && !param) { /* an unnamed dim declared fixed is a constant */
        *out = sym_const(c->t, d->min[k]);
        return SYMC_OK;
    }
    return new_symbol(c, param ? param : fresh, d->min[k], d->opt[k], d->max[k], d->multiple[k], vi->name, (int)k, prov,
                      out);
}

/* One graph input (d: its declaration, or NULL) as an IR input tensor. */
static symc_status import_input(fe_ctx *c, inputs_ctx *ic, const Onnx__ValueInfoProto *vi, const fe_input_shape *d) {
    symc_dtype dt;
    symc_status st = input_dtype(c, vi, &dt);
    if (st) return st;
    const Onnx__TensorShapeProto *sh = input_shape(vi);
    if (!sh && !d)
        return fe_fail(c, SYMC_ERR_INVALID_ARG,
                       "input '%s' has no shape in the model: declare it with "
                       "--shapes %s:MIN,OPT,MAX",
                       vi->name, vi->name);
    int32_t rank = sh ? (int32_t)sh->n_dim : d->rank;
    if (rank > IR_MAX_RANK)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' has rank %d, more than %d", vi->name, (int)rank,
                       IR_MAX_RANK);
    sym_expr dims[IR_MAX_RANK];
    for (int32_t k = 0; k < rank; k++)
        if ((st = input_dim(c, ic, vi, sh, d, k, &dims[k]))) return st;
    uint32_t t;
    if ((st = fe_add_tensor(c, vi->name, dt, rank, dims, &t)) || (st = ir_mark_input(c->m, t, c->err))) return st;
    return fe_map_put(&c->values, vi->name, t) ? SYMC_OK : fe_nomem(c);
}

/* The graph inputs that are not initializers, in model order, with every
 * declared shape first matched to its input and checked (so the symbols a
 * dim_param names get one range, whichever input uses it first). */
static symc_status import_inputs(fe_ctx *c, const fe_input_shape *shapes, uint32_t n_shapes) {
    const Onnx__GraphProto *g = c->g;
    symc_status st = SYMC_OK;
    /* which model input each declaration is for */
    int32_t *decl_of = malloc((g->n_input ? g->n_input : 1) * sizeof *decl_of);
    inputs_ctx ic = {0};
    size_t total_dims = 0;
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__TensorShapeProto *sh = input_shape(g->input[i]);
        total_dims += sh ? sh->n_dim : 0;
    }
    ic.params = malloc((total_dims ? total_dims : 1) * sizeof *ic.params);
    if (!decl_of || !ic.params) {
        st = fe_nomem(c);
        goto done;
    }
    for (size_t i = 0; i < g->n_input; i++) decl_of[i] = -1;
    for (uint32_t s = 0; s < n_shapes && !st; s++) {
        size_t i = 0;
        if ((st = find_declared_input(c, &shapes[s], s, &i))) break;
        if (decl_of[i] >= 0) {
            st = fe_fail(c, SYMC_ERR_INVALID_ARG, "shapes for input '%s' are declared twice", shapes[s].name);
            break;
        }
        decl_of[i] = (int32_t)s;
        st = check_declaration(c, &ic, &shapes[s], input_shape(g->input[i]));
    }
    for (size_t i = 0; i < g->n_input && !st; i++) {
        if (fe_map_get(&c->inits, g->input[i]->name, NULL)) continue; /* an initializer listed as input: a constant */
        st = import_input(c, &ic, g->input[i], decl_of[i] >= 0 ? &shapes[decl_of[i]] : NULL);
    }
done:
    free(decl_of);
    free(ic.params);
    return st;
}

/* ---- the model ---------------------------------------------------------------------------------------- */

static symc_status import_graph(fe_ctx *c, const fe_input_shape *shapes, uint32_t n_shapes) {
    const Onnx__GraphProto *g = c->g;
    symc_status st;
    /* protobuf-c leaves absent strings NULL: refuse them once, here, so no
     * later step sees a NULL name (found by the fuzz target) */
    for (size_t i = 0; i < g->n_input; i++)
        if (!g->input[i] || !g->input[i]->name || !*g->input[i]->name)
            return fe_fail(c, SYMC_ERR_FORMAT, "graph input %zu has no name", i);
    for (size_t i = 0; i < g->n_output; i++)
        if (!g->output[i] || !g->output[i]->name || !*g->output[i]->name)
            return fe_fail(c, SYMC_ERR_FORMAT, "graph output %zu has no name", i);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        if (!n || !n->op_type || !*n->op_type) return fe_fail(c, SYMC_ERR_FORMAT, "node %zu has no op type", i);
        if (n->n_output == 0) return fe_fail(c, SYMC_ERR_FORMAT, "node %zu (%s) has no outputs", i, n->op_type);
        for (size_t k = 0; k < n->n_input; k++)
            if (!n->input[k])
                return fe_fail(c, SYMC_ERR_FORMAT, "node %zu (%s) input %zu is missing", i, n->op_type, k);
        for (size_t k = 0; k < n->n_output; k++)
            if (!n->output[k])
                return fe_fail(c, SYMC_ERR_FORMAT, "node %zu (%s) output %zu is missing", i, n->op_type, k);
        for (size_t k = 0; k < n->n_attribute; k++)
            if (!n->attribute[k] || !n->attribute[k]->name || !*n->attribute[k]->name)
                return fe_fail(c, SYMC_ERR_FORMAT, "node %zu (%s) attribute %zu has no name", i, n->op_type, k);
    }
    /* every ONNX value name is reserved before any fresh name is made */
    for (size_t i = 0; i < g->n_initializer; i++) {
        const char *nm = g->initializer[i]->name;
        if (!nm || !*nm) return fe_fail(c, SYMC_ERR_FORMAT, "initializer %zu has no name", i);
        if (!fe_map_put(&c->inits, nm, (uint32_t)i) || !fe_map_put(&c->reserved, nm, 0)) return fe_nomem(c);
    }
    if (g->n_sparse_initializer)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "sparse initializers are not supported ('%s')",
                       g->sparse_initializer[0]->values && g->sparse_initializer[0]->values->name
                           ? g->sparse_initializer[0]->values->name
                           : "?");
    for (size_t i = 0; i < g->n_input; i++)
        if (!fe_map_put(&c->reserved, g->input[i]->name, 0)) return fe_nomem(c);
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (!fe_map_put(&c->reserved, g->node[i]->output[k], 0)) return fe_nomem(c);
    if ((st = import_inputs(c, shapes, n_shapes))) return st;

    char where[512], source[300];
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *n = g->node[i];
        c->node = n;
        if (n->name && *n->name) snprintf(source, sizeof source, "%s", n->name);
        else snprintf(source, sizeof source, "%s#%zu", n->op_type ? n->op_type : "?", i);
        c->source = source;
        snprintf(where, sizeof where, "node '%s' (%s, opset %" PRId64 ")", source, n->op_type ? n->op_type : "?",
                 c->opset);
        c->where = where;
        if (!n->op_type || !*n->op_type) return fe_fail(c, SYMC_ERR_FORMAT, "the node has no op type");
        if (n->domain && *n->domain && strcmp(n->domain, "ai.onnx"))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "op '%s' of domain '%s' is not supported (only the default "
                           "ONNX domain is)",
                           n->op_type, n->domain);
        for (size_t k = 0; k < n->n_output; k++)
            if (n->output[k][0] && fe_map_get(&c->values, n->output[k], NULL))
                return fe_fail(c, SYMC_ERR_FORMAT, "output '%s' is already defined (ONNX values are assigned once)",
                               n->output[k]);
        if ((st = fe_translate_node(c))) return st;
        for (size_t k = 0; k < n->n_output; k++)
            if (n->output[k][0] && !fe_map_get(&c->values, n->output[k], NULL))
                return fe_fail(c, SYMC_ERR_INTERNAL, "output %zu '%s' was not produced", k, n->output[k]);
    }
    c->node = NULL;
    c->where = NULL;
    c->source = "";
    for (size_t i = 0; i < g->n_output; i++) {
        const char *nm = g->output[i]->name;
        uint32_t t;
        int found;
        if ((st = fe_lookup_value(c, nm, &t, &found))) return st;
        if (!found)
            return fe_fail(c, SYMC_ERR_FORMAT, "graph output '%s' is not produced by any node, initializer or input",
                           nm);
        int dup = 0;
        for (uint32_t k = 0; k < c->m->n_outputs; k++) dup |= c->m->outputs[k] == t;
        if (dup) /* the same value listed twice: a copy keeps outputs distinct */
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "graph output '%s' is listed twice", nm);
        if ((st = ir_mark_output(c->m, t, c->err))) return st;
    }
    if (c->m->n_outputs == 0) return fe_fail(c, SYMC_ERR_FORMAT, "the graph has no outputs");
    /* shape sub-graphs whose values became attributes: the pipeline's dead-node pass (one owner) */
    if ((st = pass_remove_dead(c->m, NULL, c->err))) return st;
    if ((st = ir_verify(c->m, c->err))) {
        symc_error_prefix(c->err, "imported module fails verification (a bug in symc's importer)");
        return st;
    }
    for (uint32_t i = 0; i < c->m->n_tensors; i++)
        if (c->m->tensors[i].rank < 0)
            return fe_fail(c, SYMC_ERR_INTERNAL, "tensor '%s' has no inferred shape", c->m->tensors[i].name);
    c->m->shapes_inferred = 1; /* the pipeline's infer-shapes row need not run them again */
    return SYMC_OK;
}

symc_status fe_import_buffer(const uint8_t *buf, size_t size, const char *model_dir, const fe_input_shape *shapes,
                             uint32_t n_shapes, fe_branching *br, ir_module **out, symc_error *err) {
    *out = NULL;
    if (size > ((size_t)1 << 31))
        return symc_error_setf(err, SYMC_ERR_FORMAT,
                               "the model is %zu bytes, over protobuf's 2 GiB limit: store its weights as "
                               "external data",
                               size);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, buf);
    if (!mp) return symc_error_setf(err, SYMC_ERR_FORMAT, "not an ONNX model (the protobuf does not parse)");
    symc_status st = SYMC_OK;
    fe_ctx c;
    memset(&c, 0, sizeof c);
    c.err = err;
    c.model_dir = model_dir;
    c.source = "";
    c.opset = -1;
    c.br = br;
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        if (!o->domain || !*o->domain || !strcmp(o->domain, "ai.onnx")) c.opset = o->version;
    }
    if (!mp->graph) st = symc_error_setf(err, SYMC_ERR_FORMAT, "the ONNX model has no graph");
    else if (c.opset < 0)
        st = symc_error_setf(err, SYMC_ERR_FORMAT, "the ONNX model imports no opset of the default domain");
    else if (c.opset < 13 || c.opset > 21) /* README: 13-21; an op's meaning can change in a newer opset */
        st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                             "the model uses ONNX opset %" PRId64 "; symc imports opsets 13 to 21: convert it "
                             "with onnx.version_converter.convert_version(model, %d)",
                             c.opset, c.opset < 13 ? 17 : 21);
    if (!st) {
        c.g = mp->graph;
        c.m = ir_module_new(mp->graph->name && *mp->graph->name ? mp->graph->name : "onnx", err);
        if (!c.m) st = SYMC_ERR_NOMEM;
    }
    if (!st) {
        c.t = c.m->syms;
        st = import_graph(&c, shapes, n_shapes);
    }
    fe_map_free(&c.values);
    fe_map_free(&c.inits);
    fe_map_free(&c.reserved);
    fe_map_free(&c.taken);
    onnx__model_proto__free_unpacked(mp, NULL);
    if (st) {
        ir_module_free(c.m);
        return st;
    }
    *out = c.m;
    return SYMC_OK;
}

symc_status fe_onnx_import_buffer(const uint8_t *buf, size_t size, const char *model_dir, const fe_input_shape *shapes,
                                  uint32_t n_shapes, ir_module **out, symc_error *err) {
    if (!buf || !out || (n_shapes && !shapes))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_onnx_import_buffer: NULL argument");
    return fe_import_buffer(buf, size, model_dir, shapes, n_shapes, NULL, out, err);
}

symc_status fe_read_model(const char *path, uint8_t **bufp, size_t *sizep, char **dirp, symc_error *err) {
    *bufp = NULL;
    *sizep = 0;
    *dirp = NULL;
    /* a directory would open and then read as INT64_MAX bytes, and a FIFO would block the open */
    const char *kind;
    FILE *f = ir_open_regular(path, &kind);
    if (!f && kind) return symc_error_setf(err, SYMC_ERR_IO, "'%s' is %s, not an ONNX model file", path, kind);
    if (!f) return symc_error_setf(err, SYMC_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    symc_status st = SYMC_OK;
    off_t size = -1;
    if (fseeko(f, 0, SEEK_END) == 0) size = ftello(f);
    if (size < 0 || fseeko(f, 0, SEEK_SET) != 0)
        st = symc_error_setf(err, SYMC_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    else if ((uint64_t)size > ((uint64_t)1 << 31))
        st = symc_error_setf(err, SYMC_ERR_FORMAT,
                             "'%s' is %lld bytes, over protobuf's 2 GiB limit for a model: store its weights "
                             "as external data",
                             path, (long long)size);
    uint8_t *buf = NULL;
    if (!st) {
        buf = malloc(size ? (size_t)size : 1);
        if (!buf) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading '%s'", path);
        else if (size && fread(buf, 1, (size_t)size, f) != (size_t)size)
            st = symc_error_setf(err, SYMC_ERR_IO, "cannot read '%s'", path);
    }
    fclose(f);
    /* external data is relative to the model's folder */
    char *dir = st ? NULL : strdup(path);
    if (!st && !dir) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    if (st) {
        free(buf);
        return st;
    }
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    *bufp = buf;
    *sizep = (size_t)size;
    *dirp = dir;
    return SYMC_OK;
}

symc_status fe_onnx_import_file(const char *path, const fe_input_shape *shapes, uint32_t n_shapes, ir_module **out,
                                symc_error *err) {
    if (!path || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_onnx_import_file: NULL argument");
    *out = NULL;
    uint8_t *buf;
    size_t size;
    char *dir;
    symc_status st = fe_read_model(path, &buf, &size, &dir, err);
    if (st) return st;
    st = fe_onnx_import_buffer(buf, size, dir, shapes, n_shapes, out, err);
    if (st) symc_error_prefix(err, "%s", path);
    free(dir);
    free(buf);
    return st;
}
