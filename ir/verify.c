/* The verifier: the invariants every pass may rely on and every loader must
 * establish before handing a module on.
 *
 * It walks the module once in order, so "defined before use" is checked by
 * comparing producer indices, and reports the first problem with the node,
 * its op and the tensor or attribute at fault. Per-node checks are split out
 * (ir_check_node, ir_infer_dtype) so the builder can refuse a bad node before
 * adding it, and the loader and verifier share one definition of "valid".
 * Axis attributes are non-negative once the rank they index is known
 * (ir_check_axes, axes.c). A module with a fusion plan has it checked last
 * (ir_fuse_check, fuse_plan.c). */
#include "ir/ir.h"

#include <stdlib.h>
#include <string.h>

static int valid_dim(ir_module *m, sym_expr e) { return e != SYM_NONE && e < sym_expr_count(m->syms); }

static const ir_attr *find_attr(const ir_attr *attrs, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (attrs[i].name && strcmp(attrs[i].name, name) == 0) return &attrs[i];
    return NULL;
}

/* Value checks beyond the schema's kinds, for the attributes whose meaning
 * does not depend on input shapes (those come with shape inference). */
static symc_status check_attr_values(ir_module *m, ir_op op, const char *name, const ir_attr *attrs, uint32_t n_attrs,
                                     symc_error *err) {
    const char *opn = ir_op_get(op)->name;
    for (uint32_t i = 0; i < n_attrs; i++) {
        const ir_attr *a = &attrs[i];
        const char *an = a->name;
        if (a->kind == IR_ATTR_DTYPE && (a->i < 0 || a->i >= SYMC_DTYPE_COUNT))
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute '%s' = %lld is not a dtype", name,
                                   opn, an, (long long)a->i);
        if (a->kind == IR_ATTR_DIMS) {
            int inferred = 0;
            for (uint32_t k = 0; k < a->n; k++) {
                if (a->dims[k] == SYM_NONE) {
                    inferred++;
                    continue;
                }
                if (!valid_dim(m, a->dims[k]))
                    return symc_error_setf(err, SYMC_ERR_VERIFY,
                                           "node '%s' (%s): attribute '%s'[%u] refers to "
                                           "expression %u, outside the module's %u",
                                           name, opn, an, k, a->dims[k], sym_expr_count(m->syms));
            }
            int allows_inferred = op == IR_OP_RESHAPE && strcmp(an, "shape") == 0;
            if (inferred > (allows_inferred ? 1 : 0))
                return symc_error_setf(err, SYMC_ERR_VERIFY,
                                       "node '%s' (%s): attribute '%s' has %d entries of -1; "
                                       "%s",
                                       name, opn, an, inferred,
                                       allows_inferred ? "at most one may be inferred" : "none may be inferred here");
        }
        if (a->kind == IR_ATTR_INTS && (!strcmp(an, "strides") || !strcmp(an, "dilations") || !strcmp(an, "kernel")))
            for (uint32_t k = 0; k < a->n; k++)
                if (a->ints[k] < 1)
                    return symc_error_setf(err, SYMC_ERR_VERIFY,
                                           "node '%s' (%s): attribute '%s'[%u] = %lld must be >= 1", name, opn, an, k,
                                           (long long)a->ints[k]);
        if (a->kind == IR_ATTR_INTS && !strcmp(an, "pads") && op != IR_OP_CONV_TRANSPOSE) /* there: output growth */
            for (uint32_t k = 0; k < a->n; k++)
                if (a->ints[k] < 0)
                    return symc_error_setf(err, SYMC_ERR_VERIFY,
                                           "node '%s' (%s): attribute 'pads'[%u] = %lld must be >= 0", name, opn, k,
                                           (long long)a->ints[k]);
        if (a->kind == IR_ATTR_INTS && !strcmp(an, "steps"))
            for (uint32_t k = 0; k < a->n; k++)
                if (a->ints[k] == 0)
                    return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute 'steps'[%u] is 0", name,
                                           opn, k);
        if (a->kind == IR_ATTR_INT && !strcmp(an, "group") && a->i < 1)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute 'group' = %lld must be >= 1", name,
                                   opn, (long long)a->i);
        if (a->kind == IR_ATTR_INTS && !strcmp(an, "perm")) {
            for (uint32_t k = 0; k < a->n; k++) {
                int ok = a->ints[k] >= 0 && a->ints[k] < (int64_t)a->n;
                for (uint32_t j = 0; ok && j < k; j++) ok = a->ints[j] != a->ints[k];
                if (!ok)
                    return symc_error_setf(err, SYMC_ERR_VERIFY,
                                           "node '%s' (%s): attribute 'perm' is not a permutation "
                                           "of 0..%u (entry %u = %lld)",
                                           name, opn, a->n ? a->n - 1 : 0, k, (long long)a->ints[k]);
            }
        }
        if (op == IR_OP_PAD && a->kind == IR_ATTR_STR && !strcmp(an, "mode") && strcmp(a->s, "constant") &&
            strcmp(a->s, "reflect") && strcmp(a->s, "edge") && strcmp(a->s, "wrap"))
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "node '%s' (%s): attribute 'mode' = '%s' must be constant, "
                                   "reflect, edge or wrap",
                                   name, opn, a->s);
        if (a->kind == IR_ATTR_STR && !strcmp(an, "approximate") && strcmp(a->s, "none") && strcmp(a->s, "tanh"))
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "node '%s' (%s): attribute 'approximate' = '%s' must be none "
                                   "or tanh",
                                   name, opn, a->s);
        if (a->kind == IR_ATTR_STR && !strcmp(an, "direction") && strcmp(a->s, "left") && strcmp(a->s, "right"))
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "node '%s' (%s): attribute 'direction' = '%s' must be left or right", name, opn,
                                   a->s);
        if (a->kind == IR_ATTR_FLOAT && !strcmp(an, "alpha") && op == IR_OP_CELU && a->f == 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute 'alpha' must not be 0", name, opn);
    }
    if (op == IR_OP_SLICE) {
        const ir_attr *s = find_attr(attrs, n_attrs, "starts"), *e = find_attr(attrs, n_attrs, "ends");
        const ir_attr *ax = find_attr(attrs, n_attrs, "axes"), *st = find_attr(attrs, n_attrs, "steps");
        if ((s && e && s->n != e->n) || (s && ax && ax->n != s->n) || (s && st && st->n != s->n))
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "node '%s' (slice): starts, ends, axes and steps must have "
                                   "the same length",
                                   name);
    }
    return SYMC_OK;
}

symc_status ir_check_node(ir_module *m, ir_op op, const char *name, const uint32_t *in, uint32_t n_in, uint32_t n_out,
                          const ir_attr *attrs, uint32_t n_attrs, symc_error *err) {
    const ir_op_info *info = ir_op_get(op);
    if (!info)
        return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s': op id %d is not in the op table", name, (int)op);
    if ((int64_t)n_in < info->min_in || (info->max_in >= 0 && (int64_t)n_in > info->max_in)) {
        if (info->max_in < 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): has %u inputs, needs at least %d", name,
                                   info->name, n_in, info->min_in);
        return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): has %u inputs, needs %d%s%d", name, info->name,
                               n_in, info->min_in, info->min_in == info->max_in ? "" : " to ",
                               info->min_in == info->max_in ? 0 : info->max_in);
    }
    if ((int64_t)n_out < info->min_out || (info->max_out >= 0 && (int64_t)n_out > info->max_out))
        return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): has %u outputs, needs %d%s", name, info->name,
                               n_out, info->min_out, info->max_out < 0 ? " or more" : "");
    for (uint32_t i = 0; i < n_in; i++)
        if (in[i] >= m->n_tensors)
            return symc_error_setf(err, SYMC_ERR_VERIFY,
                                   "node '%s' (%s): input %u refers to tensor %u, but the module "
                                   "has %u tensors",
                                   name, info->name, i, in[i], m->n_tensors);
    /* attributes: each known, of its schema kind, once; required ones present */
    for (uint32_t i = 0; i < n_attrs; i++) {
        const ir_attr *a = &attrs[i];
        if (!a->name || !*a->name)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute %u has no name", name, info->name,
                                   i);
        ir_attr_spec spec;
        size_t pos = 0;
        int found = 0;
        while (!found && ir_attr_schema_next(info->attrs, &pos, &spec)) found = !strcmp(spec.name, a->name);
        if (!found)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): unknown attribute '%s' (the op takes: %s)",
                                   name, info->name, a->name, *info->attrs ? info->attrs : "none");
        if (spec.kind != a->kind)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute '%s' is %s, must be %s", name,
                                   info->name, a->name, ir_attr_kind_name(a->kind), ir_attr_kind_name(spec.kind));
        if ((a->kind == IR_ATTR_INTS && a->n && !a->ints) || (a->kind == IR_ATTR_FLOATS && a->n && !a->floats) ||
            (a->kind == IR_ATTR_DIMS && a->n && !a->dims) || (a->kind == IR_ATTR_STR && !a->s))
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute '%s' has no data", name, info->name,
                                   a->name);
        for (uint32_t j = 0; j < i; j++)
            if (!strcmp(attrs[j].name, a->name))
                return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute '%s' is given twice", name,
                                       info->name, a->name);
    }
    ir_attr_spec spec;
    size_t pos = 0;
    while (ir_attr_schema_next(info->attrs, &pos, &spec))
        if (!spec.optional && !find_attr(attrs, n_attrs, spec.name))
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): missing required attribute '%s' (%s)", name,
                                   info->name, spec.name, ir_attr_kind_name(spec.kind));
    if (op == IR_OP_SPLIT) {
        const ir_attr *sizes = find_attr(attrs, n_attrs, "sizes");
        if (sizes && sizes->n != n_out)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (split): %u sizes but %u outputs", name, sizes->n,
                                   n_out);
    }
    return check_attr_values(m, op, name, attrs, n_attrs, err);
}

symc_status ir_infer_dtype(ir_module *m, ir_op op, const char *name, const uint32_t *in, uint32_t n_in,
                           const ir_attr *attrs, uint32_t n_attrs, symc_dtype *out, symc_error *err) {
    const ir_op_info *info = ir_op_get(op);
    switch (info->dtype_rule) {
    case IR_DT_BOOL: *out = SYMC_BOOL; break;
    case IR_DT_I64: *out = SYMC_I64; break;
    case IR_DT_ATTR: {
        const ir_attr *to = find_attr(attrs, n_attrs, "to");
        if (!to || to->kind != IR_ATTR_DTYPE || to->i < 0 || to->i >= SYMC_DTYPE_COUNT)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): attribute 'to' must name a dtype", name,
                                   info->name);
        *out = (symc_dtype)to->i;
        break;
    }
    case IR_DT_IN1:
        if (m->tensors[in[0]].dtype != SYMC_BOOL)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): condition '%s' is %s, must be bool", name,
                                   info->name, m->tensors[in[0]].name, symc_dtype_name(m->tensors[in[0]].dtype));
        if (m->tensors[in[1]].dtype != m->tensors[in[2]].dtype)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): '%s' is %s but '%s' is %s; they must agree",
                                   name, info->name, m->tensors[in[1]].name, symc_dtype_name(m->tensors[in[1]].dtype),
                                   m->tensors[in[2]].name, symc_dtype_name(m->tensors[in[2]].dtype));
        *out = m->tensors[in[1]].dtype;
        break;
    case IR_DT_KEEP:
        *out = m->tensors[in[0]].dtype;
        if ((op == IR_OP_GATHER || op == IR_OP_GATHER_ELEMENTS || op == IR_OP_GATHER_ND || op == IR_OP_SCATTER_ND ||
             op == IR_OP_SCATTER_ELEMENTS) &&
            m->tensors[in[1]].dtype != SYMC_I64 && m->tensors[in[1]].dtype != SYMC_I32)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): indices '%s' are %s, must be i32 or i64",
                                   name, info->name, m->tensors[in[1]].name, symc_dtype_name(m->tensors[in[1]].dtype));
        if ((op == IR_OP_SCATTER_ND || op == IR_OP_SCATTER_ELEMENTS) && m->tensors[in[2]].dtype != *out)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): updates '%s' are %s but data '%s' is %s",
                                   name, info->name, m->tensors[in[2]].name, symc_dtype_name(m->tensors[in[2]].dtype),
                                   m->tensors[in[0]].name, symc_dtype_name(*out));
        break;
    case IR_DT_SAME:
        if (op == IR_OP_CONSTANT) return SYMC_OK; /* the tensor's own dtype */
        *out = m->tensors[in[0]].dtype;
        /* inputs past the first must agree, except scale/bias/stat operands
         * of normalizations, which may be f32 under f16 activations */
        if (info->category != IR_CAT_NORM)
            for (uint32_t i = 1; i < n_in; i++)
                if (m->tensors[in[i]].dtype != *out)
                    return symc_error_setf(err, SYMC_ERR_VERIFY,
                                           "node '%s' (%s): input %u '%s' is %s but input 0 '%s' "
                                           "is %s; they must agree",
                                           name, info->name, i, m->tensors[in[i]].name,
                                           symc_dtype_name(m->tensors[in[i]].dtype), m->tensors[in[0]].name,
                                           symc_dtype_name(*out));
        break;
    }
    if ((op == IR_OP_AND || op == IR_OP_OR || op == IR_OP_NOT))
        for (uint32_t i = 0; i < n_in; i++)
            if (m->tensors[in[i]].dtype != SYMC_BOOL)
                return symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): input '%s' is %s, must be bool", name,
                                       info->name, m->tensors[in[i]].name, symc_dtype_name(m->tensors[in[i]].dtype));
    return SYMC_OK;
}

/* A constant's data must match its static shape. */
static symc_status check_constant(ir_module *m, uint32_t ti, symc_error *err) {
    const ir_tensor *t = &m->tensors[ti];
    if (t->constant >= m->n_constants)
        return symc_error_setf(err, SYMC_ERR_VERIFY, "constant '%s' refers to data %u, but the module has %u constants",
                               t->name, t->constant, m->n_constants);
    if (t->rank < 0) return symc_error_setf(err, SYMC_ERR_VERIFY, "constant '%s' has no shape", t->name);
    uint64_t numel = 1;
    for (int d = 0; d < t->rank; d++) {
        int64_t v;
        if (!sym_is_const(m->syms, t->dims[d], &v) || v < 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "constant '%s' dim %d is not a non-negative constant", t->name,
                                   d);
        if (v && numel > UINT64_MAX / (uint64_t)v)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "constant '%s' is too large", t->name);
        numel *= (uint64_t)v;
    }
    size_t es = symc_dtype_size(t->dtype);
    if (numel > SIZE_MAX / es || m->constants[t->constant].size != numel * es)
        return symc_error_setf(err, SYMC_ERR_VERIFY, "constant '%s' holds %zu bytes, its shape needs %llu", t->name,
                               m->constants[t->constant].size, (unsigned long long)(numel * es));
    return SYMC_OK;
}

/* Names must be unique; a sorted copy keeps this O(n log n) for big models. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }
static symc_status check_unique(const char **names, uint32_t n, const char *what, symc_error *err) {
    qsort(names, n, sizeof *names, cmp_str);
    for (uint32_t i = 1; i < n; i++)
        if (!strcmp(names[i - 1], names[i]))
            return symc_error_setf(err, SYMC_ERR_VERIFY, "two %ss are named '%s'", what, names[i]);
    return SYMC_OK;
}

static symc_status verify(ir_module *m, int need_outputs, symc_error *err) {
    symc_status st = SYMC_OK;
    uint32_t nmax = m->n_tensors > m->n_nodes ? m->n_tensors : m->n_nodes;
    const char **names = malloc((nmax ? nmax : 1) * sizeof *names);
    if (!names) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory verifying the module");

    /* tensors */
    for (uint32_t i = 0; i < m->n_tensors && !st; i++) {
        const ir_tensor *t = &m->tensors[i];
        names[i] = t->name;
        if (!t->name || !*t->name) st = symc_error_setf(err, SYMC_ERR_VERIFY, "tensor %u has no name", i);
        else if ((unsigned)t->dtype >= SYMC_DTYPE_COUNT)
            st = symc_error_setf(err, SYMC_ERR_VERIFY, "tensor '%s' has invalid dtype %d", t->name, (int)t->dtype);
        else if (t->rank < IR_RANK_UNKNOWN || t->rank > IR_MAX_RANK)
            st = symc_error_setf(err, SYMC_ERR_VERIFY, "tensor '%s' has rank %d, outside [0, %d]", t->name,
                                 (int)t->rank, IR_MAX_RANK);
        for (int d = 0; !st && d < t->rank; d++)
            if (!valid_dim(m, t->dims[d]))
                st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                     "tensor '%s' dim %d refers to expression %u, outside the "
                                     "module's %u",
                                     t->name, d, t->dims[d], sym_expr_count(m->syms));
        if (!st && t->producer != IR_NONE && t->producer >= m->n_nodes)
            st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                 "tensor '%s' names producer node %u, but the module has %u nodes", t->name,
                                 t->producer, m->n_nodes);
        if (!st && t->constant != IR_NONE) {
            if (t->producer == IR_NONE || m->nodes[t->producer].op != IR_OP_CONSTANT)
                st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                     "tensor '%s' carries data but is not made by a constant node", t->name);
            else st = check_constant(m, i, err);
        }
    }
    if (!st) st = check_unique(names, m->n_tensors, "tensor", err);

    /* graph inputs are exactly the tensors without a producer */
    for (uint32_t i = 0; i < m->n_inputs && !st; i++) {
        uint32_t t = m->inputs[i];
        if (t >= m->n_tensors)
            st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                 "input %u refers to tensor %u, but the "
                                 "module has %u tensors",
                                 i, t, m->n_tensors);
        else if (m->tensors[t].producer != IR_NONE)
            st = symc_error_setf(err, SYMC_ERR_VERIFY, "input '%s' is also the output of node '%s'", m->tensors[t].name,
                                 m->nodes[m->tensors[t].producer].name);
        else if (m->tensors[t].rank < 0)
            st = symc_error_setf(err, SYMC_ERR_VERIFY, "input '%s' has no shape", m->tensors[t].name);
        for (int d = 0; !st && d < m->tensors[t].rank; d++) {
            sym_range r = sym_range_of(m->syms, m->tensors[t].dims[d]);
            if (r.lo < 0) {
                char buf[128];
                sym_print(m->syms, m->tensors[t].dims[d], buf, sizeof buf);
                st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                     "input '%s' dim %d = %s may be negative (its range starts "
                                     "at %lld)",
                                     m->tensors[t].name, d, buf, (long long)r.lo);
            }
        }
    }
    for (uint32_t i = 0; i < m->n_tensors && !st; i++)
        if (m->tensors[i].producer == IR_NONE) {
            int is_input = 0;
            for (uint32_t k = 0; k < m->n_inputs && !is_input; k++) is_input = m->inputs[k] == i;
            if (!is_input)
                st = symc_error_setf(err, SYMC_ERR_VERIFY, "tensor '%s' is neither a graph input nor made by a node",
                                     m->tensors[i].name);
        }

    /* nodes, in order: inputs defined before use, outputs owned once */
    for (uint32_t ni = 0; ni < m->n_nodes && !st; ni++) {
        const ir_node *n = &m->nodes[ni];
        names[ni] = n->name;
        const char *nm = n->name ? n->name : "";
        if (!*nm) {
            st = symc_error_setf(err, SYMC_ERR_VERIFY, "node %u has no name", ni);
            break;
        }
        st = ir_check_node(m, n->op, nm, n->in, n->n_in, n->n_out, n->attrs, n->n_attrs, err);
        if (!st) st = ir_check_axes(m, ni, err); /* non-negative once their rank is known (axes.c) */
        if (st) break;
        const char *opn = ir_op_get(n->op)->name;
        for (uint32_t k = 0; k < n->n_in && !st; k++) {
            uint32_t p = m->tensors[n->in[k]].producer;
            if (p != IR_NONE && p >= ni)
                st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                     "node '%s' (%s): input '%s' is used before node '%s' makes it", nm, opn,
                                     m->tensors[n->in[k]].name, m->nodes[p].name);
        }
        for (uint32_t k = 0; k < n->n_out && !st; k++) {
            if (n->out[k] >= m->n_tensors)
                st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                     "node '%s' (%s): output %u refers to tensor %u, but the module "
                                     "has %u tensors",
                                     nm, opn, k, n->out[k], m->n_tensors);
            else if (m->tensors[n->out[k]].producer != ni)
                st = symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): output '%s' is claimed by another node", nm,
                                     opn, m->tensors[n->out[k]].name);
        }
        if (st) break;
        if (n->op == IR_OP_CONSTANT) {
            if (m->tensors[n->out[0]].constant == IR_NONE)
                st = symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (constant): output '%s' carries no data", nm,
                                     m->tensors[n->out[0]].name);
            continue;
        }
        symc_dtype dt;
        st = ir_infer_dtype(m, n->op, nm, n->in, n->n_in, n->attrs, n->n_attrs, &dt, err);
        for (uint32_t k = 0; k < n->n_out && !st; k++)
            if (m->tensors[n->out[k]].dtype != dt)
                st = symc_error_setf(err, SYMC_ERR_VERIFY, "node '%s' (%s): output '%s' is %s, the op makes %s", nm,
                                     opn, m->tensors[n->out[k]].name, symc_dtype_name(m->tensors[n->out[k]].dtype),
                                     symc_dtype_name(dt));
    }
    if (!st) st = check_unique(names, m->n_nodes, "node", err);

    /* an output is a tensor the engine writes (or a constant it copies): a graph input named as an
     * output would share the input's name and never be written, so the caller would read whatever its
     * buffer held; the same tensor twice would give two outputs one name */
    for (uint32_t i = 0; i < m->n_outputs && !st; i++) {
        if (m->outputs[i] >= m->n_tensors) {
            st = symc_error_setf(err, SYMC_ERR_VERIFY, "output %u refers to tensor %u, but the module has %u tensors",
                                 i, m->outputs[i], m->n_tensors);
            break;
        }
        const ir_tensor *o = &m->tensors[m->outputs[i]];
        if (o->producer == IR_NONE && o->constant == IR_NONE)
            st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                 "output %u is the graph input '%s'; an output must be computed: add an "
                                 "identity node to copy it",
                                 i, o->name);
        for (uint32_t j = 0; j < i && !st; j++)
            if (m->outputs[j] == m->outputs[i])
                st = symc_error_setf(err, SYMC_ERR_VERIFY,
                                     "tensor '%s' is marked as an output twice (outputs %u and %u); add an "
                                     "identity node for the second",
                                     o->name, j, i);
    }
    if (!st && need_outputs && m->n_outputs == 0 && m->n_nodes > 0)
        st = symc_error_setf(err, SYMC_ERR_VERIFY, "module '%s' has nodes but no outputs", m->name);
    free(names);
    if (!st) st = ir_check_produced(m, err); /* producers of unbacked symbols (produced.c) */
    if (!st) st = ir_fuse_check(m, err);     /* the fusion plan, when there is one (fuse_plan.c) */
    return st;
}

symc_status ir_verify(ir_module *m, symc_error *err) { return verify(m, 1, err); }
symc_status ir_verify_open(ir_module *m, symc_error *err) { return verify(m, 0, err); }
