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
 * sizes are now an attribute) are dead afterwards and removed, then the
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

#include "frontend/onnx_internal.h"

/* ---- string map ------------------------------------------------------------------ */

static uint32_t hash_str(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

int fe_map_get(const fe_map *mp, const char *key, uint32_t *val) {
    if (!mp->cap) return 0;
    for (uint32_t i = hash_str(key) & (mp->cap - 1);; i = (i + 1) & (mp->cap - 1)) {
        if (!mp->keys[i]) return 0;
        if (!strcmp(mp->keys[i], key)) {
            if (val) *val = mp->vals[i];
            return 1;
        }
    }
}

static void map_insert(fe_map *mp, const char *key, uint32_t val) {
    uint32_t i = hash_str(key) & (mp->cap - 1);
    while (mp->keys[i] && strcmp(mp->keys[i], key)) i = (i + 1) & (mp->cap - 1);
    if (!mp->keys[i]) mp->n++;
    mp->keys[i] = key;
    mp->vals[i] = val;
}

int fe_map_put(fe_map *mp, const char *key, uint32_t val) {
    if (2 * (mp->n + 1) > mp->cap) { /* keep the load under one half */
        fe_map bigger = {0};
        bigger.cap = mp->cap ? 2 * mp->cap : 64;
        bigger.keys = calloc(bigger.cap, sizeof *bigger.keys);
        bigger.vals = calloc(bigger.cap, sizeof *bigger.vals);
        if (!bigger.keys || !bigger.vals) {
            fe_map_free(&bigger);
            return 0;
        }
        for (uint32_t i = 0; i < mp->cap; i++)
            if (mp->keys[i]) map_insert(&bigger, mp->keys[i], mp->vals[i]);
        fe_map_free(mp);
        *mp = bigger;
    }
    map_insert(mp, key, val);
    return 1;
}

void fe_map_free(fe_map *mp) {
    free(mp->keys);
    free(mp->vals);
    memset(mp, 0, sizeof *mp);
}

/* ---- messages ---------------------------------------------------------------------- */

symc_status fe_fail(fe_ctx *c, symc_status code, const char *fmt, ...) {
    char msg[SYMC_ERROR_MSG_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->where) return symc_error_setf(c->err, code, "%s: %s", c->where, msg);
    return symc_error_setf(c->err, code, "%s", msg);
}

const char *fe_txt(fe_ctx *c, sym_expr e) {
    static _Thread_local char bufs[4][128];
    static _Thread_local int next;
    char *b = bufs[next++ & 3];
    if (e == SYM_NONE) return "-1";
    sym_print(c->t, e, b, sizeof b);
    return b;
}

static symc_status nomem(fe_ctx *c) { return fe_fail(c, SYMC_ERR_NOMEM, "out of memory"); }

/* ---- names --------------------------------------------------------------------------- */

/* A tensor name not used by any ONNX value nor by an earlier tensor. */
static const char *fresh_name(fe_ctx *c, const char *base) {
    char buf[300];
    snprintf(buf, sizeof buf, "%s", base);
    for (uint32_t k = 1; fe_map_get(&c->reserved, buf, NULL) || fe_map_get(&c->taken, buf, NULL); k++)
        snprintf(buf, sizeof buf, "%.280s_%u", base, k); /* the suffix always fits, so names differ */
    return ir_strdup(c->m, buf);
}

static symc_status add_tensor(fe_ctx *c, const char *name, symc_dtype dt, int32_t rank, const sym_expr *dims,
                              uint32_t *out) {
    symc_status st = ir_add_tensor(c->m, name, dt, rank, dims, out, c->err);
    if (st) return st;
    if (!fe_map_put(&c->taken, c->m->tensors[*out].name, *out)) return nomem(c);
    return SYMC_OK;
}

/* ---- node inputs, outputs, attributes ------------------------------------------------------ */

uint32_t fe_n_in(fe_ctx *c) {
    uint32_t n = (uint32_t)c->node->n_input;
    while (n && !c->node->input[n - 1][0]) n--;
    return n;
}

int fe_has_in(fe_ctx *c, uint32_t k) { return k < c->node->n_input && c->node->input[k][0]; }

int fe_has_out(fe_ctx *c, uint32_t k) { return k < c->node->n_output && c->node->output[k][0]; }

static symc_status materialize_init(fe_ctx *c, const char *name, uint32_t idx, uint32_t *t);

/* *found = 0 when no value has that name (the caller words the error). */
static symc_status lookup_value(fe_ctx *c, const char *name, uint32_t *t, int *found) {
    *found = 1;
    if (fe_map_get(&c->values, name, t)) return SYMC_OK;
    uint32_t idx;
    if (fe_map_get(&c->inits, name, &idx)) return materialize_init(c, name, idx, t);
    *found = 0;
    return SYMC_OK;
}

symc_status fe_in(fe_ctx *c, uint32_t k, uint32_t *t) {
    if (!fe_has_in(c, k)) return fe_fail(c, SYMC_ERR_VERIFY, "input %u is required but absent", k);
    const char *name = c->node->input[k];
    int found;
    symc_status st = lookup_value(c, name, t, &found);
    if (!st && !found)
        return fe_fail(c, SYMC_ERR_FORMAT,
                       "input %u '%s' is not a graph input, an initializer or the output of an "
                       "earlier node (ONNX needs nodes in topological order)",
                       k, name);
    return st;
}

const Onnx__AttributeProto *fe_attr(fe_ctx *c, const char *name) {
    for (size_t i = 0; i < c->node->n_attribute; i++)
        if (c->node->attribute[i]->name && !strcmp(c->node->attribute[i]->name, name)) return c->node->attribute[i];
    return NULL;
}

/* the attribute's type: its field, or where a file leaves it UNDEFINED, the field holding a value */
int fe_attr_type(const Onnx__AttributeProto *a) {
    if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED) return (int)a->type;
    if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
    if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
    if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT; /* i, or nothing set: 0 either way */
}

static const char *attr_type_name(int type) {
    static const char *const names[] = {
        "UNDEFINED", "FLOAT",   "INT",    "STRING",        "TENSOR",         "GRAPH",      "FLOATS",     "INTS",
        "STRINGS",   "TENSORS", "GRAPHS", "SPARSE_TENSOR", "SPARSE_TENSORS", "TYPE_PROTO", "TYPE_PROTOS"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : "of an unknown type";
}

int fe_attr_is(fe_ctx *c, const Onnx__AttributeProto *a, int type) {
    int have = fe_attr_type(a);
    if (have == type) return 1;
    if (!c->attr_st) {
        c->attr_st = SYMC_ERR_FORMAT;
        snprintf(c->attr_msg, sizeof c->attr_msg,
                 "attribute '%.100s' is %s %s, but the op takes %s %s (onnx.helper.make_attribute's type comes "
                 "from the Python value: write 1.0 for a FLOAT, [1] for INTS)",
                 a->name, have == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? "an" : "a", attr_type_name(have),
                 type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT ? "an" : "a", attr_type_name(type));
    }
    return 0;
}

const Onnx__AttributeProto *fe_attr_of(fe_ctx *c, const char *name, int type) {
    const Onnx__AttributeProto *a = fe_attr(c, name);
    return a && fe_attr_is(c, a, type) ? a : NULL;
}

int64_t fe_attr_i(fe_ctx *c, const char *name, int64_t dflt) {
    const Onnx__AttributeProto *a = fe_attr_of(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    return a ? a->i : dflt;
}

double fe_attr_f(fe_ctx *c, const char *name, double dflt) {
    const Onnx__AttributeProto *a = fe_attr(c, name);
    if (!a) return dflt;
    if (fe_attr_type(a) == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT) return (double)a->i; /* alpha=2: exact */
    return fe_attr_is(c, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT) ? (double)a->f : dflt;
}

const char *fe_attr_s(fe_ctx *c, const char *name, const char *dflt) {
    const Onnx__AttributeProto *a = fe_attr_of(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    if (!a) return dflt;
    char *s = ir_alloc(c->m, a->s.len + 1);
    if (!s) return dflt;
    if (a->s.len) memcpy(s, a->s.data, a->s.len);
    return s;
}

int fe_attr_ints(fe_ctx *c, const char *name, const int64_t **v, uint32_t *n) {
    const Onnx__AttributeProto *a = fe_attr_of(c, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    if (!a) return 0;
    *v = a->ints;
    *n = (uint32_t)a->n_ints;
    return 1;
}

/* ---- emitting IR ---------------------------------------------------------------------------- */

static const char *base_name(fe_ctx *c, ir_op op) {
    static _Thread_local char buf[300];
    const char *first = c->node->n_output && c->node->output[0][0] ? c->node->output[0] : c->node->op_type;
    snprintf(buf, sizeof buf, "%s/%s", first, ir_op_get(op)->name);
    return buf;
}

symc_status fe_emit(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n_in, const ir_attr *attrs, uint32_t n_attrs,
                    const int *out_k, uint32_t n_out, uint32_t *outs) {
    ir_module *m = c->m;
    uint32_t tmp[64];
    if (n_out > 64) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%u outputs, at most 64", n_out);
    const char *names[64];
    for (uint32_t k = 0; k < n_out; k++) {
        /* a node may list fewer outputs than the op can make: those get fresh names */
        int ok = out_k && out_k[k] >= 0 && (size_t)out_k[k] < c->node->n_output;
        const char *onnx = ok ? c->node->output[out_k[k]] : NULL;
        if (ok && !fe_map_get(&c->taken, onnx, NULL)) {
            names[k] = ir_strdup(m, onnx);
        } else { /* fresh: outputs after the first get their index, so the names of one node differ */
            char base[300];
            snprintf(base, sizeof base, k ? "%.280s_out%u" : "%.280s", base_name(c, op), k);
            names[k] = fresh_name(c, base);
        }
        if (!names[k]) return nomem(c);
    }
    const char *node_name = n_out ? names[0] : fresh_name(c, base_name(c, op));
    symc_status st = ir_check_node(m, op, node_name, in, n_in, n_out, attrs, n_attrs, c->err);
    symc_dtype dt = SYMC_F32;
    if (!st) st = ir_infer_dtype(m, op, node_name, in, n_in, attrs, n_attrs, &dt, c->err);
    if (st) {
        symc_error_prefix(c->err, "%s", c->where);
        return st;
    }
    for (uint32_t k = 0; k < n_out; k++) {
        /* name the tensor directly (names[k] is already unique) */
        if ((st = add_tensor(c, names[k], dt, IR_RANK_UNKNOWN, NULL, &tmp[k]))) return st;
        if (out_k && out_k[k] >= 0 && (size_t)out_k[k] < c->node->n_output &&
            !fe_map_put(&c->values, c->node->output[out_k[k]], tmp[k]))
            return nomem(c);
    }
    uint32_t idx;
    if ((st = ir_add_node(m, op, node_name, c->source, in, n_in, tmp, n_out, attrs, n_attrs, &idx, c->err))) return st;
    if ((st = pass_infer_node(m, idx, c->err))) {
        symc_error_prefix(c->err, "%s", c->where);
        return st;
    }
    if (outs) memcpy(outs, tmp, n_out * sizeof *tmp);
    return SYMC_OK;
}

symc_status fe_emit1(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n_in, const ir_attr *attrs, uint32_t n_attrs,
                     int out_k, uint32_t *out) {
    return fe_emit(c, op, in, n_in, attrs, n_attrs, &out_k, 1, out);
}

/* A constant node named `name` (unique, not yet taken) owning `data`. */
static symc_status add_constant(fe_ctx *c, const char *name, symc_dtype dt, int32_t rank, const int64_t *dims,
                                uint8_t *data, size_t size, const char *source, uint32_t *out) {
    sym_expr d[IR_MAX_RANK];
    for (int32_t i = 0; i < rank; i++) d[i] = sym_const(c->t, dims[i]);
    uint32_t ci, t, idx;
    symc_status st = ir_add_constant(c->m, data, size, &ci, c->err);
    if (st) return st;
    if ((st = add_tensor(c, name, dt, rank, d, &t))) return st;
    c->m->tensors[t].constant = ci;
    if ((st = ir_add_node(c->m, IR_OP_CONSTANT, name, source, NULL, 0, &t, 1, NULL, 0, &idx, c->err))) return st;
    if ((st = pass_infer_node(c->m, idx, c->err))) return st;
    *out = t;
    return SYMC_OK;
}

symc_status fe_const(fe_ctx *c, symc_dtype dt, int32_t rank, const int64_t *dims, const void *data, int out_k,
                     uint32_t *out) {
    size_t n = symc_dtype_size(dt);
    for (int32_t i = 0; i < rank; i++) n *= (size_t)dims[i];
    uint8_t *copy = malloc(n ? n : 1);
    if (!copy) return nomem(c);
    if (n) memcpy(copy, data, n);
    const char *onnx = out_k >= 0 && (size_t)out_k < c->node->n_output ? c->node->output[out_k] : NULL;
    const char *name = onnx && !fe_map_get(&c->taken, onnx, NULL) ? ir_strdup(c->m, onnx)
                                                                  : fresh_name(c, base_name(c, IR_OP_CONSTANT));
    if (!name) {
        free(copy);
        return nomem(c);
    }
    symc_status st = add_constant(c, name, dt, rank, dims, copy, n, c->source, out);
    if (st) return st;
    if (onnx && !fe_map_put(&c->values, onnx, *out)) return nomem(c);
    return SYMC_OK;
}

symc_status fe_bind(fe_ctx *c, uint32_t k, uint32_t t) {
    if (!fe_has_out(c, k)) return SYMC_OK;
    return fe_map_put(&c->values, c->node->output[k], t) ? SYMC_OK : nomem(c);
}

/* ---- values ------------------------------------------------------------------------------------ */

/* The first graph input whose elements (not only its shape) tensor t is
 * computed from, or IR_NONE: what a message names as the run-time value
 * behind a build-time one. Shape reads only its input's dims, so the walk
 * does not pass through it. */
static uint32_t data_source(fe_ctx *c, uint32_t t) {
    const ir_module *m = c->m;
    uint8_t *seen = calloc(m->n_tensors, 1);
    uint32_t *stack = malloc(m->n_tensors * sizeof *stack), n = 0, found = IR_NONE;
    if (!seen || !stack) {
        free(seen), free(stack);
        return IR_NONE;
    }
    stack[n++] = t;
    seen[t] = 1;
    while (n && found == IR_NONE) {
        const ir_tensor *x = &m->tensors[stack[--n]];
        if (x->value || x->constant != IR_NONE) continue;
        if (x->producer == IR_NONE) {
            found = stack[n];
            continue;
        }
        const ir_node *p = &m->nodes[x->producer];
        if (p->op == IR_OP_SHAPE_OF) continue;
        for (uint32_t k = 0; k < p->n_in; k++)
            if (!seen[p->in[k]]) seen[p->in[k]] = 1, stack[n++] = p->in[k];
    }
    free(seen), free(stack);
    return found;
}

symc_status fe_values(fe_ctx *c, uint32_t t, uint32_t k, const char *role, const sym_expr **v, uint32_t *n) {
    const ir_tensor *x = &c->m->tensors[t];
    if (x->value) {
        *v = x->value;
        *n = x->n_value;
        return SYMC_OK;
    }
    char why[256];
    if (x->dtype != SYMC_I64 && x->dtype != SYMC_I32)
        snprintf(why, sizeof why, "it is %s; it must be an integer tensor", symc_dtype_name(x->dtype));
    else if (x->producer == IR_NONE)
        snprintf(why, sizeof why, "it is the graph input '%s', whose elements are only known at run time", x->name);
    else if (x->constant != IR_NONE)
        snprintf(why, sizeof why, "it is a constant of more than 64 elements or of rank > 1");
    else {
        const ir_node *p = &c->m->nodes[x->producer];
        uint32_t gi = data_source(c, t);
        if (gi != IR_NONE)
            snprintf(why, sizeof why,
                     "it comes from %s node '%s', computed from the elements of the graph input '%s', whose "
                     "elements are only known at run time",
                     ir_op_get(p->op)->name, p->source && *p->source ? p->source : p->name, c->m->tensors[gi].name);
        else
            snprintf(why, sizeof why,
                     "it must be a constant or computed from tensor shapes (Shape, Gather, Concat, Slice, "
                     "Unsqueeze, Squeeze, Cast, Add, Sub, Mul, Div, Min, Max, Range, ...); it comes from "
                     "%s node '%s'",
                     ir_op_get(p->op)->name, p->source && *p->source ? p->source : p->name);
    }
    return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input %u '%s' (%s) is not known at build time: %s", k, c->node->input[k],
                   role, why);
}

symc_status fe_const_ints(fe_ctx *c, uint32_t t, uint32_t k, const char *role, int64_t *v, uint32_t cap, uint32_t *n) {
    const sym_expr *e;
    symc_status st = fe_values(c, t, k, role, &e, n);
    if (st) return st;
    if (*n > cap)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input %u '%s' (%s) has %u elements, at most %u", k, c->node->input[k],
                       role, *n, cap);
    for (uint32_t i = 0; i < *n; i++)
        if (!sym_is_const(c->t, e[i], &v[i]))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input %u '%s' (%s) must be constant, but element %u is %s", k,
                           c->node->input[k], role, i, fe_txt(c, e[i]));
    return SYMC_OK;
}

symc_status fe_const_scalar(fe_ctx *c, uint32_t t, uint32_t k, const char *role, double *v) {
    const ir_tensor *x = &c->m->tensors[t];
    if (x->constant == IR_NONE && x->producer == IR_NONE)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input %u '%s' (%s) must be a constant: it is the graph input '%s', whose elements are only "
                       "known at run time",
                       k, c->node->input[k], role, x->name);
    if (x->constant == IR_NONE && x->producer == IR_NONE)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input %u '%s' (%s) is not known at build time: it is the graph input '%s', whose elements are "
                       "only known at run time",
                       k, c->node->input[k], role, x->name);
    uint32_t gi = x->constant == IR_NONE ? data_source(c, t) : IR_NONE;
    if (gi != IR_NONE)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "input %u '%s' (%s) must be a constant: it is computed from the elements of the graph input "
                       "'%s', whose elements are only known at run time",
                       k, c->node->input[k], role, c->m->tensors[gi].name);
    if (x->constant == IR_NONE)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input %u '%s' (%s) must be a constant", k, c->node->input[k], role);
    const ir_constant *cd = &c->m->constants[x->constant];
    size_t es = symc_dtype_size(x->dtype);
    if (cd->size != es)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input %u '%s' (%s) must have one element, has %zu", k,
                       c->node->input[k], role, es ? cd->size / es : 0);
    const uint8_t *d = cd->data;
    *v = symc_dtype_load(d, x->dtype, 0);
    return SYMC_OK;
}

/* ---- tensor data ------------------------------------------------------------------------------- */

int fe_dtype(int32_t onnx_type, symc_dtype *out) {
    switch (onnx_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = SYMC_F32; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: *out = SYMC_F16; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: *out = SYMC_BF16; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *out = SYMC_F64; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = SYMC_I64; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = SYMC_I32; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = SYMC_BOOL; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *out = SYMC_I8; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *out = SYMC_U8; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: *out = SYMC_I16; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: *out = SYMC_U16; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: *out = SYMC_U32; return 1;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64: *out = SYMC_U64; return 1;
    default: return 0;
    }
}

const char *fe_onnx_type_name(int32_t t) {
    static const char *const names[] = {"UNDEFINED", "FLOAT",  "UINT8",     "INT8",       "UINT16",  "INT16",
                                        "INT32",     "INT64",  "STRING",    "BOOL",       "FLOAT16", "DOUBLE",
                                        "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    if (t >= 0 && t < (int32_t)(sizeof names / sizeof names[0])) return names[t];
    return t <= 23 ? "FLOAT8/INT4 family" : "unknown";
}

/* External data: a file relative to the model's folder, never outside it. */
/* Reads `want` bytes of external data into a new buffer (*data), allocated
 * only once the file is known to hold them. */
static symc_status read_external(fe_ctx *c, const Onnx__TensorProto *tp, const char *what, size_t want,
                                 uint8_t **data) {
    const char *loc = NULL;
    int64_t offset = 0, length = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key || !e->value) continue;
        char *end;
        if (!strcmp(e->key, "location")) loc = e->value;
        else if (!strcmp(e->key, "offset") || !strcmp(e->key, "length")) {
            errno = 0;
            long long v = strtoll(e->value, &end, 10);
            if (errno || *end || v < 0)
                return fe_fail(c, SYMC_ERR_FORMAT, "%s: external data %s '%s' is not a byte count", what, e->key,
                               e->value);
            if (!strcmp(e->key, "offset")) offset = v;
            else length = v;
        }
    }
    if (!loc || !*loc) return fe_fail(c, SYMC_ERR_FORMAT, "%s is external data without a 'location'", what);
    if (!c->model_dir)
        return fe_fail(c, SYMC_ERR_INVALID_ARG,
                       "%s is stored in the external file '%s', but the model was given as a buffer "
                       "without its folder",
                       what, loc);
    if (loc[0] == '/' || loc[0] == '\\' || (loc[0] && loc[1] == ':'))
        return fe_fail(c, SYMC_ERR_INVALID_ARG,
                       "%s: external data location '%s' is an absolute path; it must be relative to the "
                       "model's folder",
                       what, loc);
    for (const char *p = loc; *p;) {
        size_t n = strcspn(p, "/\\");
        if (n == 2 && p[0] == '.' && p[1] == '.')
            return fe_fail(c, SYMC_ERR_INVALID_ARG,
                           "%s: external data location '%s' leaves the model's folder ('..' is not "
                           "allowed)",
                           what, loc);
        p += n;
        if (*p) p++;
    }
    if (length >= 0 && (uint64_t)length != want)
        return fe_fail(c, SYMC_ERR_FORMAT, "%s: external data length %" PRId64 " but its shape needs %zu bytes", what,
                       length, want);
    size_t plen = strlen(c->model_dir) + strlen(loc) + 2;
    char *path = malloc(plen);
    if (!path) return nomem(c);
    snprintf(path, plen, "%s/%s", c->model_dir, loc);
    /* '..' and absolute paths are refused above; a symlink inside the folder could still point out
     * of it (onnxruntime refuses that too): the real path must be inside the folder's real path */
    char *real_dir = realpath(c->model_dir, NULL), *real = realpath(path, NULL);
    size_t rd = real_dir ? strlen(real_dir) : 0;
    int inside = real_dir && real && !strncmp(real, real_dir, rd) && (real[rd] == '/' || (rd == 1 && real[0] == '/'));
    if (real_dir && real && !inside) {
        symc_status st = fe_fail(c, SYMC_ERR_INVALID_ARG,
                                 "%s: external data location '%s' resolves to '%s', outside the model's folder '%s' "
                                 "(through a symbolic link); external data must stay inside the folder",
                                 what, loc, real, real_dir);
        free(real_dir);
        free(real);
        free(path);
        return st;
    }
    free(real_dir);
    free(real);
    const char *kind;
    FILE *f = ir_open_regular(path, &kind); /* a FIFO there would block the import forever */
    symc_status st = SYMC_OK;
    off_t end = -1;
    if (f && fseeko(f, 0, SEEK_END) == 0) end = ftello(f);
    if (!f && kind)
        st = fe_fail(c, SYMC_ERR_IO, "%s: external data file '%s' is %s; external data must be a regular file", what,
                     path, kind);
    else if (!f)
        st = fe_fail(c, SYMC_ERR_IO, "%s: cannot open external data file '%s': %s", what, path, strerror(errno));
    else if (end < 0 || (uint64_t)end < (uint64_t)offset || (uint64_t)end - (uint64_t)offset < want)
        st = fe_fail(c, SYMC_ERR_FORMAT, "%s: external data file '%s' ends before offset %" PRId64 " + %zu bytes", what,
                     path, offset, want);
    else if (fseeko(f, (off_t)offset, SEEK_SET) != 0)
        st = fe_fail(c, SYMC_ERR_IO, "%s: cannot seek to offset %" PRId64 " of '%s'", what, offset, path);
    else if (!(*data = malloc(want ? want : 1)))
        st = fe_fail(c, SYMC_ERR_NOMEM, "out of memory for %s (%zu bytes)", what, want);
    else if (want && fread(*data, 1, want, f) != want)
        st = fe_fail(c, SYMC_ERR_FORMAT, "%s: external data file '%s' ends before offset %" PRId64 " + %zu bytes", what,
                     path, offset, want);
    if (st && *data) {
        free(*data);
        *data = NULL;
    }
    if (f) fclose(f);
    free(path);
    return st;
}

symc_status fe_tensor_data(fe_ctx *c, const Onnx__TensorProto *tp, const char *what, symc_dtype *dt, int32_t *rank,
                           int64_t *dims, uint8_t **data, size_t *size) {
    if (!tp->has_data_type || !fe_dtype(tp->data_type, dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "%s has ONNX type %s, which symc does not support (supported: FLOAT, FLOAT16, "
                       "BFLOAT16, DOUBLE, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL)",
                       what, fe_onnx_type_name(tp->has_data_type ? tp->data_type : 0));
    if (tp->segment) return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s is a segmented tensor", what);
    if (tp->n_dims > IR_MAX_RANK)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s has rank %zu, more than %d", what, tp->n_dims, IR_MAX_RANK);
    *rank = (int32_t)tp->n_dims;
    uint64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0) return fe_fail(c, SYMC_ERR_FORMAT, "%s has a negative dim %" PRId64, what, tp->dims[i]);
        dims[i] = tp->dims[i];
        if (dims[i] && numel > (UINT64_MAX >> 4) / (uint64_t)dims[i])
            return fe_fail(c, SYMC_ERR_FORMAT, "%s is too large", what);
        numel *= (uint64_t)dims[i];
    }
    size_t es = symc_dtype_size(*dt), want = (size_t)numel * es;
    /* the data in the file must be there before we allocate for it: a forged
     * shape must not become a huge allocation (found by the fuzz target) */
    int external = tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (!external && tp->has_raw_data && tp->raw_data.len != want)
        return fe_fail(c, SYMC_ERR_FORMAT, "%s: raw_data holds %zu bytes, its shape and type need %zu", what,
                       tp->raw_data.len, want);
    if (!external && !tp->has_raw_data) {
        size_t n = *dt == SYMC_F32               ? tp->n_float_data
            : *dt == SYMC_F64                    ? tp->n_double_data
            : *dt == SYMC_I64                    ? tp->n_int64_data
            : *dt == SYMC_U32 || *dt == SYMC_U64 ? tp->n_uint64_data
                                                 : tp->n_int32_data;
        if (n != numel)
            return fe_fail(c, SYMC_ERR_FORMAT, "%s holds %zu elements, its shape needs %" PRIu64, what, n, numel);
    }
    uint8_t *d = NULL;
    if (external) {
        symc_status st = read_external(c, tp, what, want, &d);
        if (st) return st;
    } else if (!(d = malloc(want ? want : 1))) {
        return fe_fail(c, SYMC_ERR_NOMEM, "out of memory for %s (%zu bytes)", what, want);
    }
    symc_status st = SYMC_OK;
    size_t have = 0; /* elements in the typed field used, to check against numel */
    int typed = 0;
    if (external) {
        /* read above */
    } else if (tp->has_raw_data) {
        /* raw_data is little-endian, as the hosts symc builds for */
        if (tp->raw_data.len != want)
            st = fe_fail(c, SYMC_ERR_FORMAT, "%s: raw_data holds %zu bytes, its shape and type need %zu", what,
                         tp->raw_data.len, want);
        else if (want) memcpy(d, tp->raw_data.data, want);
    } else {
        typed = 1;
        switch (*dt) {
        case SYMC_F32:
            have = tp->n_float_data;
            if (have == numel && want) memcpy(d, tp->float_data, want);
            break;
        case SYMC_F64:
            have = tp->n_double_data;
            if (have == numel && want) memcpy(d, tp->double_data, want);
            break;
        case SYMC_I64:
            have = tp->n_int64_data;
            if (have == numel && want) memcpy(d, tp->int64_data, want);
            break;
        case SYMC_U32:
        case SYMC_U64: /* one per uint64 */
            have = tp->n_uint64_data;
            if (have == numel)
                for (size_t i = 0; i < have; i++) {
                    uint64_t v = tp->uint64_data[i];
                    uint32_t w = (uint32_t)v;
                    if (*dt == SYMC_U64) memcpy(d + 8 * i, &v, 8);
                    else memcpy(d + 4 * i, &w, 4);
                }
            break;
        default: /* int32, and 8/16-bit integers, 16-bit floats and bool stored one per int32 */
            have = tp->n_int32_data;
            if (have == numel)
                for (size_t i = 0; i < have; i++) {
                    int32_t v = tp->int32_data[i];
                    if (*dt == SYMC_I32) memcpy(d + 4 * i, &v, 4);
                    else if (*dt == SYMC_BOOL) d[i] = v != 0;
                    else if (es == 1) d[i] = (uint8_t)v; /* i8, u8: the low byte */
                    else {
                        uint16_t h = (uint16_t)v;
                        memcpy(d + 2 * i, &h, 2);
                    }
                }
            break;
        }
    }
    if (!st && typed && have != numel)
        st = fe_fail(c, SYMC_ERR_FORMAT, "%s holds %zu elements, its shape needs %" PRIu64, what, have, numel);
    if (st) {
        free(d);
        return st;
    }
    *data = d;
    *size = want;
    return SYMC_OK;
}

static symc_status materialize_init(fe_ctx *c, const char *name, uint32_t idx, uint32_t *t) {
    const Onnx__TensorProto *tp = c->g->initializer[idx];
    char what[300];
    snprintf(what, sizeof what, "initializer '%s'", name);
    symc_dtype dt;
    int32_t rank;
    int64_t dims[IR_MAX_RANK];
    uint8_t *data;
    size_t size;
    symc_status st = fe_tensor_data(c, tp, what, &dt, &rank, dims, &data, &size);
    if (st) return st;
    /* the initializer's own name is reserved for it and not yet taken */
    const char *nm = fe_map_get(&c->taken, name, NULL) ? fresh_name(c, name) : ir_strdup(c->m, name);
    if (!nm) {
        free(data);
        return nomem(c);
    }
    if ((st = add_constant(c, nm, dt, rank, dims, data, size, "initializer", t))) return st;
    return fe_map_put(&c->values, name, *t) ? SYMC_OK : nomem(c);
}

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
    if ((st = add_tensor(c, vi->name, dt, rank, dims, &t)) || (st = ir_mark_input(c->m, t, c->err))) return st;
    return fe_map_put(&c->values, vi->name, t) ? SYMC_OK : nomem(c);
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
        st = nomem(c);
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

/* ---- dead-node removal ---------------------------------------------------------------------------- */

/* Drops nodes whose outputs reach no graph output (mostly shape sub-graphs
 * whose results became attributes), with their tensors and constants;
 * keeps graph inputs and the order of everything else. */
static symc_status remove_dead(fe_ctx *c) {
    ir_module *m = c->m;
    uint8_t *live_t = calloc(m->n_tensors + 1, 1), *live_n = calloc(m->n_nodes + 1, 1);
    uint32_t *tmap = malloc((m->n_tensors + 1) * sizeof *tmap), *nmap = malloc((m->n_nodes + 1) * sizeof *nmap);
    uint32_t *cmap = malloc((m->n_constants + 1) * sizeof *cmap);
    if (!live_t || !live_n || !tmap || !nmap || !cmap) {
        free(live_t), free(live_n), free(tmap), free(nmap), free(cmap);
        return nomem(c);
    }
    for (uint32_t i = 0; i < m->n_outputs; i++) live_t[m->outputs[i]] = 1;
    for (uint32_t ni = m->n_nodes; ni-- > 0;) {
        const ir_node *n = &m->nodes[ni];
        for (uint32_t k = 0; k < n->n_out; k++) live_n[ni] |= live_t[n->out[k]];
        if (live_n[ni])
            for (uint32_t k = 0; k < n->n_in; k++) live_t[n->in[k]] = 1;
    }
    for (uint32_t i = 0; i < m->n_inputs; i++) live_t[m->inputs[i]] = 1;
    uint32_t nt = 0, nn = 0, nc = 0;
    for (uint32_t ci = 0; ci < m->n_constants; ci++) cmap[ci] = IR_NONE;
    for (uint32_t ni = 0; ni < m->n_nodes; ni++) nmap[ni] = live_n[ni] ? nn++ : IR_NONE;
    for (uint32_t ti = 0; ti < m->n_tensors; ti++) {
        const ir_tensor *t = &m->tensors[ti];
        int keep = t->producer == IR_NONE ? live_t[ti] : live_n[t->producer];
        tmap[ti] = keep ? nt++ : IR_NONE;
        if (keep && t->constant != IR_NONE) cmap[t->constant] = 1;
    }
    for (uint32_t ci = 0; ci < m->n_constants; ci++) {
        if (cmap[ci] == IR_NONE) {
            free(m->constants[ci].data);
            continue;
        }
        cmap[ci] = nc;
        m->constants[nc++] = m->constants[ci];
    }
    for (uint32_t ti = 0; ti < m->n_tensors; ti++) {
        if (tmap[ti] == IR_NONE) continue;
        ir_tensor t = m->tensors[ti];
        if (t.producer != IR_NONE) t.producer = nmap[t.producer];
        if (t.constant != IR_NONE) t.constant = cmap[t.constant];
        m->tensors[tmap[ti]] = t;
    }
    for (uint32_t ni = 0; ni < m->n_nodes; ni++) {
        if (nmap[ni] == IR_NONE) continue;
        ir_node n = m->nodes[ni];
        for (uint32_t k = 0; k < n.n_in; k++) n.in[k] = tmap[n.in[k]];
        for (uint32_t k = 0; k < n.n_out; k++) n.out[k] = tmap[n.out[k]];
        m->nodes[nmap[ni]] = n;
    }
    for (uint32_t i = 0; i < m->n_inputs; i++) m->inputs[i] = tmap[m->inputs[i]];
    for (uint32_t i = 0; i < m->n_outputs; i++) m->outputs[i] = tmap[m->outputs[i]];
    m->n_tensors = nt;
    m->n_nodes = nn;
    m->n_constants = nc;
    free(live_t), free(live_n), free(tmap), free(nmap), free(cmap);
    return SYMC_OK;
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
        if (!fe_map_put(&c->inits, nm, (uint32_t)i) || !fe_map_put(&c->reserved, nm, 0)) return nomem(c);
    }
    if (g->n_sparse_initializer)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "sparse initializers are not supported ('%s')",
                       g->sparse_initializer[0]->values && g->sparse_initializer[0]->values->name
                           ? g->sparse_initializer[0]->values->name
                           : "?");
    for (size_t i = 0; i < g->n_input; i++)
        if (!fe_map_put(&c->reserved, g->input[i]->name, 0)) return nomem(c);
    for (size_t i = 0; i < g->n_node; i++)
        for (size_t k = 0; k < g->node[i]->n_output; k++)
            if (!fe_map_put(&c->reserved, g->node[i]->output[k], 0)) return nomem(c);
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
        if ((st = lookup_value(c, nm, &t, &found))) return st;
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
    if ((st = remove_dead(c))) return st;
    if ((st = ir_verify(c->m, c->err))) {
        symc_error_prefix(c->err, "imported module fails verification (a bug in symc's importer)");
        return st;
    }
    for (uint32_t i = 0; i < c->m->n_tensors; i++)
        if (c->m->tensors[i].rank < 0)
            return fe_fail(c, SYMC_ERR_INTERNAL, "tensor '%s' has no inferred shape", c->m->tensors[i].name);
    return SYMC_OK;
}

symc_status fe_onnx_import_buffer(const uint8_t *buf, size_t size, const char *model_dir, const fe_input_shape *shapes,
                                  uint32_t n_shapes, ir_module **out, symc_error *err) {
    if (!buf || !out || (n_shapes && !shapes))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_onnx_import_buffer: NULL argument");
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

symc_status fe_onnx_import_file(const char *path, const fe_input_shape *shapes, uint32_t n_shapes, ir_module **out,
                                symc_error *err) {
    if (!path || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "fe_onnx_import_file: NULL argument");
    *out = NULL;
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
    if (!st) {
        /* external data is relative to the model's folder */
        char *dir = strdup(path);
        if (!dir) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
        else {
            char *slash = strrchr(dir, '/');
            if (!slash) strcpy(dir, ".");
            else if (slash == dir) dir[1] = '\0';
            else *slash = '\0';
            st = fe_onnx_import_buffer(buf, (size_t)size, dir, shapes, n_shapes, out, err);
            if (st) symc_error_prefix(err, "%s", path);
            free(dir);
        }
    }
    free(buf);
    return st;
}
