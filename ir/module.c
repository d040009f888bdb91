/* Module storage: the op table from ops.def, dtypes, attribute schemas, and
 * the growing tables of a module.
 *
 * Strings and per-node arrays go to a bump arena (common/arena.h) whose
 * chunks are never moved, so pointers into it stay valid while the module
 * lives and the whole thing is freed at once. Tensors, nodes and constants are vectors that
 * grow by doubling; they are referenced by index, never by pointer, so growth
 * is safe. Constant data is malloc'd per constant because it can be large and
 * the serializer hands it straight to FlatBuffers. */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

#include "common/arena.h"

/* ---- op table ------------------------------------------------------------ */
static const ir_op_info op_table[IR_OP_COUNT] = {
#define IR_OP(ID, nm, min_in, max_in, min_out, max_out, cat, dt, at) \
    [IR_OP_##ID] = {nm, min_in, max_in, min_out, max_out, IR_CAT_##cat, IR_DT_##dt, at},
#include "common/ops.def"
#undef IR_OP
};

const ir_op_info *ir_op_get(ir_op op) { return (unsigned)op < IR_OP_COUNT ? &op_table[op] : NULL; }

int ir_op_find(const char *name, ir_op *out) {
    if (!name) return 0;
    for (int i = 0; i < IR_OP_COUNT; i++)
        if (strcmp(op_table[i].name, name) == 0) {
            *out = (ir_op)i;
            return 1;
        }
    return 0;
}

/* ---- dtypes ---------------------------------------------------------------- */
/* sizes and names: symc_dtype_size, symc_dtype_name (symc/dtype.h, symshape/dtype.c) */
int ir_dtype_parse(const char *name, symc_dtype *out) {
    for (int i = 0; i < SYMC_DTYPE_COUNT; i++)
        if (strcmp(symc_dtype_name((symc_dtype)i), name) == 0) {
            *out = (symc_dtype)i;
            return 1;
        }
    return 0;
}

int ir_dtype_is_float(symc_dtype dt) { return dt == SYMC_F32 || dt == SYMC_F16 || dt == SYMC_BF16 || dt == SYMC_F64; }

/* ---- attribute schemas ------------------------------------------------------- */
static const char *const attr_kind_names[] = {
    [SYMC_ATTR_INT] = "int", [SYMC_ATTR_FLOAT] = "float", [SYMC_ATTR_INTS] = "ints",   [SYMC_ATTR_FLOATS] = "floats",
    [SYMC_ATTR_STR] = "str", [SYMC_ATTR_DIMS] = "dims",   [SYMC_ATTR_DTYPE] = "dtype",
};

const char *ir_attr_kind_name(ir_attr_kind k) { return (unsigned)k <= SYMC_ATTR_DTYPE ? attr_kind_names[k] : "?"; }

int ir_attr_kind_parse(const char *text, size_t len, ir_attr_kind *out) {
    for (int k = 0; k <= SYMC_ATTR_DTYPE; k++)
        if (strlen(attr_kind_names[k]) == len && memcmp(attr_kind_names[k], text, len) == 0) {
            *out = (ir_attr_kind)k;
            return 1;
        }
    return 0;
}

/* Schemas are compile-time text; a malformed one is caught by the op-table
 * unit test, and here simply ends the iteration. */
int ir_attr_schema_next(const char *schema, size_t *pos, ir_attr_spec *out) {
    const char *p = schema + *pos;
    while (*p == ' ') p++;
    if (!*p) return 0;
    const char *colon = strchr(p, ':');
    if (!colon || (size_t)(colon - p) >= sizeof out->name || colon == p) return 0;
    const char *k = colon + 1, *e = k;
    while (*e && *e != ' ' && *e != '?') e++;
    if (!ir_attr_kind_parse(k, (size_t)(e - k), &out->kind)) return 0;
    memcpy(out->name, p, (size_t)(colon - p));
    out->name[colon - p] = '\0';
    out->optional = *e == '?';
    if (*e == '?') e++;
    *pos = (size_t)(e - schema);
    return 1;
}

/* ---- arena ------------------------------------------------------------------- */
void *ir_alloc(ir_module *m, size_t size) { return cm_arena_calloc(m->arena, 1, size); }

char *ir_strdup(ir_module *m, const char *s) {
    if (!s) s = "";
    size_t n = strlen(s) + 1;
    char *d = ir_alloc(m, n);
    if (d) memcpy(d, s, n);
    return d;
}

/* ---- module --------------------------------------------------------------------- */
ir_module *ir_module_new(const char *name, symc_error *err) {
    ir_module *m = calloc(1, sizeof *m);
    if (m) m->arena = calloc(1, sizeof *m->arena);
    if (m && m->arena) m->syms = sym_table_new();
    if (!m || !m->arena || !m->syms) {
        ir_module_free(m);
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating module '%s'", name ? name : "");
        return NULL;
    }
    m->name = ir_strdup(m, name ? name : "module");
    if (!m->name) {
        ir_module_free(m);
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating module");
        return NULL;
    }
    return m;
}

void ir_module_free(ir_module *m) {
    if (!m) return;
    for (uint32_t i = m->n_lent; i < m->n_constants; i++) free(m->constants[i].data);
    free(m->constants);
    free(m->tensors);
    free(m->nodes);
    free(m->inputs);
    free(m->outputs);
    free(m->fuse);
    free(m->attention);
    if (m->arena) {
        cm_arena_free(m->arena);
        free(m->arena);
    }
    sym_table_free(m->syms);
    free(m);
}

/* Grows a vector so it holds at least `need` items (capacity doubles). */
static int grow(void **items, uint32_t *cap, uint32_t need, size_t item_size) {
    if (need <= *cap) return 1;
    uint32_t ncap = *cap ? *cap : 16;
    while (ncap < need) {
        if (ncap > UINT32_MAX / 2) return 0;
        ncap *= 2;
    }
    void *p = realloc(*items, (size_t)ncap * item_size);
    if (!p) return 0;
    *items = p;
    *cap = ncap;
    return 1;
}
#define GROW(vec, cap, need) grow((void **)&(vec), &(cap), (need), sizeof *(vec))

symc_status ir_add_tensor(ir_module *m, const char *name, symc_dtype dtype, int32_t rank, const sym_expr *dims,
                          uint32_t *out, symc_error *err) {
    if (rank > IR_MAX_RANK || rank < IR_RANK_UNKNOWN)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "tensor '%s': rank %d is outside [0, %d]", name ? name : "",
                               (int)rank, IR_MAX_RANK);
    if (m->n_tensors == IR_NONE - 1 || !GROW(m->tensors, m->cap_tensors, m->n_tensors + 1))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory adding tensor '%s'", name);
    ir_tensor *t = &m->tensors[m->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = ir_strdup(m, name);
    if (!t->name) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory adding tensor");
    t->dtype = dtype;
    t->rank = rank;
    for (int i = 0; i < IR_MAX_RANK; i++) t->dims[i] = (dims && i < rank) ? dims[i] : SYM_NONE;
    t->producer = IR_NONE;
    t->constant = IR_NONE;
    *out = m->n_tensors++;
    return SYMC_OK;
}

static symc_status copy_attr(ir_module *m, ir_attr *dst, const ir_attr *src, symc_error *err) {
    *dst = *src;
    dst->name = ir_strdup(m, src->name);
    int ok = dst->name != NULL;
    switch (src->kind) {
    case IR_ATTR_INTS:
        if (ok && src->n) {
            int64_t *a = ir_alloc(m, src->n * sizeof *a);
            if ((ok = a && src->ints)) memcpy(a, src->ints, src->n * sizeof *a);
            dst->ints = a;
        }
        break;
    case IR_ATTR_FLOATS:
        if (ok && src->n) {
            double *a = ir_alloc(m, src->n * sizeof *a);
            if ((ok = a && src->floats)) memcpy(a, src->floats, src->n * sizeof *a);
            dst->floats = a;
        }
        break;
    case IR_ATTR_DIMS:
        if (ok && src->n) {
            sym_expr *a = ir_alloc(m, src->n * sizeof *a);
            if ((ok = a && src->dims)) memcpy(a, src->dims, src->n * sizeof *a);
            dst->dims = a;
        }
        break;
    case IR_ATTR_STR:
        if (ok) ok = (dst->s = ir_strdup(m, src->s)) != NULL;
        break;
    default: break;
    }
    if (!ok)
        return symc_error_setf(
            err, src->n && !src->ints && !src->floats && !src->dims ? SYMC_ERR_INVALID_ARG : SYMC_ERR_NOMEM,
            "attribute '%s': %s", src->name ? src->name : "", "array is NULL or out of memory");
    return SYMC_OK;
}

symc_status ir_add_node(ir_module *m, ir_op op, const char *name, const char *source, const uint32_t *in, uint32_t n_in,
                        const uint32_t *out, uint32_t n_out, const ir_attr *attrs, uint32_t n_attrs, uint32_t *index,
                        symc_error *err) {
    if (!GROW(m->nodes, m->cap_nodes, m->n_nodes + 1))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory adding node '%s'", name);
    ir_node *n = &m->nodes[m->n_nodes];
    memset(n, 0, sizeof *n);
    n->op = op;
    n->name = ir_strdup(m, name);
    n->source = ir_strdup(m, source);
    n->n_in = n_in;
    n->n_out = n_out;
    n->n_attrs = n_attrs;
    n->in = ir_alloc(m, (n_in ? n_in : 1) * sizeof *n->in);
    n->out = ir_alloc(m, (n_out ? n_out : 1) * sizeof *n->out);
    n->attrs = ir_alloc(m, (n_attrs ? n_attrs : 1) * sizeof *n->attrs);
    if (!n->name || !n->source || !n->in || !n->out || !n->attrs)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory adding node '%s'", name);
    if (n_in) memcpy(n->in, in, n_in * sizeof *in);
    if (n_out) memcpy(n->out, out, n_out * sizeof *out);
    for (uint32_t i = 0; i < n_attrs; i++) {
        symc_status st = copy_attr(m, &n->attrs[i], &attrs[i], err);
        if (st) {
            symc_error_prefix(err, "node '%s'", name);
            return st;
        }
    }
    for (uint32_t i = 0; i < n_out; i++)
        if (out[i] < m->n_tensors) m->tensors[out[i]].producer = m->n_nodes;
    if (index) *index = m->n_nodes;
    m->n_nodes++;
    ir_fuse_drop(m);        /* the plan no longer covers every node */
    m->shapes_inferred = 0; /* and the new node has no inferred shape */
    return SYMC_OK;
}

symc_status ir_add_constant(ir_module *m, uint8_t *data, size_t size, uint32_t *out, symc_error *err) {
    if (!GROW(m->constants, m->cap_constants, m->n_constants + 1)) {
        free(data);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory adding a constant");
    }
    m->constants[m->n_constants].data = data;
    m->constants[m->n_constants].size = size;
    *out = m->n_constants++;
    return SYMC_OK;
}

static symc_status mark(ir_module *m, uint32_t **vec, uint32_t *n, uint32_t *cap, uint32_t t, const char *what,
                        symc_error *err) {
    if (t >= m->n_tensors)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: tensor index %u is out of range (module has %u tensors)",
                               what, t, m->n_tensors);
    for (uint32_t i = 0; i < *n; i++)
        if ((*vec)[i] == t)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s: tensor '%s' is already one", what,
                                   m->tensors[t].name);
    if (!grow((void **)vec, cap, *n + 1, sizeof **vec))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory marking an %s", what);
    (*vec)[(*n)++] = t;
    return SYMC_OK;
}

symc_status ir_mark_input(ir_module *m, uint32_t tensor, symc_error *err) {
    return mark(m, &m->inputs, &m->n_inputs, &m->cap_inputs, tensor, "input", err);
}

symc_status ir_mark_output(ir_module *m, uint32_t tensor, symc_error *err) {
    return mark(m, &m->outputs, &m->n_outputs, &m->cap_outputs, tensor, "output", err);
}

int ir_find_tensor(const ir_module *m, const char *name, uint32_t *out) {
    for (uint32_t i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) {
            *out = i;
            return 1;
        }
    return 0;
}

int ir_find_node(const ir_module *m, const char *name, uint32_t *out) {
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (strcmp(m->nodes[i].name, name) == 0) {
            *out = i;
            return 1;
        }
    return 0;
}

const ir_attr *ir_node_attr(const ir_node *n, const char *name) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

uint32_t ir_constant_source(const ir_module *m, uint32_t t) {
    for (uint32_t hops = 0; t < m->n_tensors && hops < m->n_nodes + 1; hops++) {
        if (m->tensors[t].constant != IR_NONE) return t;
        uint32_t p = m->tensors[t].producer;
        if (p == IR_NONE || m->nodes[p].op != IR_OP_IDENTITY || m->nodes[p].n_in != 1) return IR_NONE;
        t = m->nodes[p].in[0];
    }
    return IR_NONE;
}

int ir_scalar_constant(const ir_module *m, uint32_t t, double *v) {
    if (t >= m->n_tensors) return 0;
    const ir_tensor *x = &m->tensors[t];
    if (x->constant == IR_NONE || x->rank < 0 || x->dtype == SYMC_BOOL || symc_dtype_size(x->dtype) == 0) return 0;
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t n;
        if (!sym_is_const(m->syms, x->dims[d], &n) || n != 1) return 0;
    }
    const ir_constant *k = &m->constants[x->constant];
    if (k->size != symc_dtype_size(x->dtype)) return 0;
    *v = symc_dtype_load(k->data, x->dtype, 0);
    return 1;
}

int ir_layout_perm(const ir_module *m, uint32_t node) {
    static const int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2};
    if (node == IR_NONE || m->nodes[node].op != IR_OP_TRANSPOSE) return IR_PERM_NONE;
    const ir_attr *a = ir_node_attr(&m->nodes[node], "perm");
    if (!a || a->kind != IR_ATTR_INTS || a->n != 4 || m->tensors[m->nodes[node].in[0]].rank != 4) return IR_PERM_NONE;
    if (!memcmp(a->ints, to_nhwc, sizeof to_nhwc)) return IR_PERM_TO_NHWC;
    return memcmp(a->ints, to_nchw, sizeof to_nchw) ? IR_PERM_NONE : IR_PERM_TO_NCHW;
}

int ir_op_is_elementwise(ir_op op) {
    const ir_op_info *info = ir_op_get(op);
    if (!info || op == IR_OP_IDENTITY) return 0; /* identity is a view: an alias, never a kernel */
    return op == IR_OP_EXPAND || info->category == IR_CAT_UNARY || info->category == IR_CAT_BINARY;
}

int ir_same_shape(const ir_tensor *a, const ir_tensor *b) {
    if (a->rank != b->rank) return 0;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

sym_expr ir_tensor_numel(ir_module *m, const ir_tensor *t) {
    if (t->rank < 0) return SYM_NONE;
    sym_expr n = sym_const(m->syms, 1);
    for (int i = 0; i < t->rank; i++) n = sym_mul(m->syms, n, t->dims[i]);
    return n;
}
