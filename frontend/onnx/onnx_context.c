/* The ONNX importer's context (frontend/onnx/onnx_internal.h): what translating a node needs from
 * the import in progress: a string map, messages that name the node, fresh names, the node's
 * inputs, outputs and type-checked attributes, emitting IR nodes (each checked and shape-inferred
 * as it is added), build-time values of tensors, and ONNX tensor data (raw, typed or external, an
 * initializer turned into a constant node on first use, its raw data taken from the unpacked
 * message rather than copied). The importer (onnx_import.c) drives it;
 * the op families (onnx_ops.h) use it. */
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

symc_status fe_nomem(fe_ctx *c) { return fe_fail(c, SYMC_ERR_NOMEM, "out of memory"); }

/* ---- names --------------------------------------------------------------------------- */

/* A tensor name not used by any ONNX value nor by an earlier tensor. */
static const char *fresh_name(fe_ctx *c, const char *base) {
    char buf[300];
    snprintf(buf, sizeof buf, "%s", base);
    for (uint32_t k = 1; fe_map_get(&c->reserved, buf, NULL) || fe_map_get(&c->taken, buf, NULL); k++)
        snprintf(buf, sizeof buf, "%.280s_%u", base, k); /* the suffix always fits, so names differ */
    return ir_strdup(c->m, buf);
}

symc_status fe_add_tensor(fe_ctx *c, const char *name, symc_dtype dt, int32_t rank, const sym_expr *dims,
                          uint32_t *out) {
    symc_status st = ir_add_tensor(c->m, name, dt, rank, dims, out, c->err);
    if (st) return st;
    if (!fe_map_put(&c->taken, c->m->tensors[*out].name, *out)) return fe_nomem(c);
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
symc_status fe_lookup_value(fe_ctx *c, const char *name, uint32_t *t, int *found) {
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
    symc_status st = fe_lookup_value(c, name, t, &found);
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
        if (!names[k]) return fe_nomem(c);
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
        if ((st = fe_add_tensor(c, names[k], dt, IR_RANK_UNKNOWN, NULL, &tmp[k]))) return st;
        if (out_k && out_k[k] >= 0 && (size_t)out_k[k] < c->node->n_output &&
            !fe_map_put(&c->values, c->node->output[out_k[k]], tmp[k]))
            return fe_nomem(c);
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
    if ((st = fe_add_tensor(c, name, dt, rank, d, &t))) return st;
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
    if (!copy) return fe_nomem(c);
    if (n) memcpy(copy, data, n);
    const char *onnx = out_k >= 0 && (size_t)out_k < c->node->n_output ? c->node->output[out_k] : NULL;
    const char *name = onnx && !fe_map_get(&c->taken, onnx, NULL) ? ir_strdup(c->m, onnx)
                                                                  : fresh_name(c, base_name(c, IR_OP_CONSTANT));
    if (!name) {
        free(copy);
        return fe_nomem(c);
    }
    symc_status st = add_constant(c, name, dt, rank, dims, copy, n, c->source, out);
    if (st) return st;
    if (onnx && !fe_map_put(&c->values, onnx, *out)) return fe_nomem(c);
    return SYMC_OK;
}

symc_status fe_bind(fe_ctx *c, uint32_t k, uint32_t t) {
    if (!fe_has_out(c, k)) return SYMC_OK;
    return fe_map_put(&c->values, c->node->output[k], t) ? SYMC_OK : fe_nomem(c);
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
    if (!path) return fe_nomem(c);
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

/* fe_tensor_data; with take (tp's own raw_data field) a raw_data block of the size wanted is taken
 * from the message (the field emptied) instead of copied: onnx__model_proto__unpack(NULL, ...)
 * mallocs each bytes field on its own, and its free_unpacked skips a NULL one. For initializers,
 * whose message is the import's own and each read once (materialize_init): a model's weights are
 * not copied once more. */
static symc_status tensor_data(fe_ctx *c, const Onnx__TensorProto *tp, ProtobufCBinaryData *take, const char *what,
                               symc_dtype *dt, int32_t *rank, int64_t *dims, uint8_t **data, size_t *size) {
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
    int taken = !external && take && tp->has_raw_data && want && take->data; /* its length is want: checked above */
    if (external) {
        symc_status st = read_external(c, tp, what, want, &d);
        if (st) return st;
    } else if (taken) {
        d = take->data;
        take->data = NULL;
        take->len = 0;
    } else if (!(d = malloc(want ? want : 1))) {
        return fe_fail(c, SYMC_ERR_NOMEM, "out of memory for %s (%zu bytes)", what, want);
    }
    symc_status st = SYMC_OK;
    size_t have = 0; /* elements in the typed field used, to check against numel */
    int typed = 0;
    if (external || taken) {
        /* read or taken above */
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

symc_status fe_tensor_data(fe_ctx *c, const Onnx__TensorProto *tp, const char *what, symc_dtype *dt, int32_t *rank,
                           int64_t *dims, uint8_t **data, size_t *size) {
    return tensor_data(c, tp, NULL, what, dt, rank, dims, data, size);
}

static symc_status materialize_init(fe_ctx *c, const char *name, uint32_t idx, uint32_t *t) {
    Onnx__TensorProto *tp = c->g->initializer[idx];
    char what[300];
    snprintf(what, sizeof what, "initializer '%s'", name);
    symc_dtype dt;
    int32_t rank;
    int64_t dims[IR_MAX_RANK];
    uint8_t *data;
    size_t size;
    symc_status st = tensor_data(c, tp, &tp->raw_data, what, &dt, &rank, dims, &data, &size);
    if (st) return st;
    /* the initializer's own name is reserved for it and not yet taken */
    const char *nm = fe_map_get(&c->taken, name, NULL) ? fresh_name(c, name) : ir_strdup(c->m, name);
    if (!nm) {
        free(data);
        return fe_nomem(c);
    }
    if ((st = add_constant(c, nm, dt, rank, dims, data, size, "initializer", t))) return st;
    return fe_map_put(&c->values, name, *t) ? SYMC_OK : fe_nomem(c);
}
