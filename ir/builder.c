/* The public builder API (include/symc/symc.h) over the IR module.
 *
 * Each call checks its arguments completely before changing the module, so a
 * refused call leaves the module as it was and the caller can correct and
 * retry. Output tensors get their dtype from the op's dtype rule now and
 * their shapes from shape inference later (rank unknown until then). Dims
 * built with the symc_dim_* calls are symshape handles; SYMC_DIM_NONE carries
 * an earlier failure, whose reason the symshape table recorded. */
#include "ir/ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *symc_version(void) { return SYMC_VERSION_STRING; }

symc_module *symc_module_create(const char *name, symc_error *err) { return ir_module_new(name, err); }

void symc_module_destroy(symc_module *m) { ir_module_free(m); }

symc_status symc_declare_symbol(symc_module *m, const char *name, int64_t min, int64_t opt, int64_t max,
                                int64_t multiple_of, symc_dim *out, symc_error *err) {
    if (!m || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_declare_symbol: NULL argument");
    sym_symbol_info info = {name, min, opt, max, multiple_of, "declared with symc_declare_symbol"};
    sym_id id;
    symc_status st = sym_symbol_new(m->syms, &info, &id, err);
    if (st) return st;
    *out = sym_var(m->syms, id);
    if (*out == SYM_NONE) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory declaring symbol '%s'", name);
    return SYMC_OK;
}

symc_status symc_symbol_set_hint(symc_module *m, symc_dim symbol, const char *hint, symc_error *err) {
    if (!m) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_symbol_set_hint: NULL module");
    sym_view v;
    if (symbol == SYM_NONE || symbol >= sym_expr_count(m->syms) || !sym_expr_view(m->syms, symbol, &v) ||
        v.kind != SYM_SYMBOL)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_symbol_set_hint: the dim is not a declared symbol");
    return sym_symbol_set_hint(m->syms, (sym_id)v.value, hint, err);
}

symc_dim symc_dim_const(symc_module *m, int64_t v) { return m ? sym_const(m->syms, v) : SYM_NONE; }

static int dim_ok(symc_module *m, symc_dim d) { return d != SYM_NONE && d < sym_expr_count(m->syms); }

symc_dim symc_dim_add(symc_module *m, symc_dim a, symc_dim b) {
    return m && dim_ok(m, a) && dim_ok(m, b) ? sym_add(m->syms, a, b) : SYM_NONE;
}
symc_dim symc_dim_mul(symc_module *m, symc_dim a, symc_dim b) {
    return m && dim_ok(m, a) && dim_ok(m, b) ? sym_mul(m->syms, a, b) : SYM_NONE;
}
symc_dim symc_dim_floordiv(symc_module *m, symc_dim a, symc_dim b) {
    return m && dim_ok(m, a) && dim_ok(m, b) ? sym_floordiv(m->syms, a, b) : SYM_NONE;
}
symc_dim symc_dim_min(symc_module *m, symc_dim a, symc_dim b) {
    return m && dim_ok(m, a) && dim_ok(m, b) ? sym_min(m->syms, a, b) : SYM_NONE;
}
symc_dim symc_dim_max(symc_module *m, symc_dim a, symc_dim b) {
    return m && dim_ok(m, a) && dim_ok(m, b) ? sym_max(m->syms, a, b) : SYM_NONE;
}

size_t symc_dim_print(symc_module *m, symc_dim d, char *buf, size_t cap) {
    if (!m || !dim_ok(m, d)) return (size_t)snprintf(buf, cap, "<invalid dim>");
    return sym_print(m->syms, d, buf, cap);
}

int symc_dim_equal(symc_module *m, symc_dim a, symc_dim b) {
    if (!m || !dim_ok(m, a) || !dim_ok(m, b)) return -1;
    if (a == b) return 1;
    sym_tri r = sym_prove_eq(m->syms, a, b);
    return r == SYM_TRUE ? 1 : r == SYM_FALSE ? 0 : -1;
}

symc_status symc_dim_eval(symc_module *m, symc_dim d, const int64_t *values, uint32_t n, int64_t *out,
                          symc_error *err) {
    if (!m || !out || (n && !values)) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_dim_eval: NULL argument");
    if (!dim_ok(m, d)) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_dim_eval: invalid dim %u", d);
    uint32_t ns = sym_symbol_count(m->syms);
    if (n < ns)
        return symc_error_setf(err, SYMC_ERR_UNBOUND, "symc_dim_eval: %u symbols declared, %u values given", ns, n);
    return sym_eval(m->syms, d, values, n, out, err);
}

/* The reason a dim is SYMC_DIM_NONE or otherwise unusable. */
static symc_status bad_dim(symc_module *m, const char *what, int i, symc_error *err) {
    const symc_error *why = sym_table_error(m->syms);
    return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s dim %d is not a valid dimension%s%s", what, i,
                           why ? ": " : "", why ? why->msg : "");
}

static symc_status check_new_name(symc_module *m, const char *name, const char *what, symc_error *err) {
    uint32_t idx;
    if (!name || !*name) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s needs a non-empty name", what);
    if (ir_find_tensor(m, name, &idx))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "%s '%s': a tensor of that name exists", what, name);
    return SYMC_OK;
}

symc_status symc_add_input(symc_module *m, const char *name, symc_dtype dtype, int32_t rank, const symc_dim *dims,
                           symc_tensor *out, symc_error *err) {
    if (!m || !out || (rank > 0 && !dims))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_add_input: NULL argument");
    symc_status st = check_new_name(m, name, "input", err);
    if (st) return st;
    if ((unsigned)dtype >= SYMC_DTYPE_COUNT)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "input '%s': invalid dtype %d", name, (int)dtype);
    if (rank < 0 || rank > IR_MAX_RANK)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "input '%s': rank %d is outside [0, %d]", name, (int)rank,
                               IR_MAX_RANK);
    char what[300];
    snprintf(what, sizeof what, "input '%s'", name);
    for (int i = 0; i < rank; i++) {
        if (!dim_ok(m, dims[i])) return bad_dim(m, what, i, err);
        sym_range r = sym_range_of(m->syms, dims[i]);
        if (r.lo < 0) {
            char buf[128];
            sym_print(m->syms, dims[i], buf, sizeof buf);
            return symc_error_setf(err, SYMC_ERR_RANGE,
                                   "input '%s' dim %d = %s may be negative (its range starts at %lld)", name, i, buf,
                                   (long long)r.lo);
        }
    }
    uint32_t t;
    if ((st = ir_add_tensor(m, name, dtype, rank, dims, &t, err))) return st;
    if ((st = ir_mark_input(m, t, err))) {
        m->n_tensors--; /* the input was the last tensor added */
        return st;
    }
    *out = t;
    return SYMC_OK;
}

symc_status symc_add_constant(symc_module *m, const char *name, symc_dtype dtype, int32_t rank, const int64_t *dims,
                              const void *data, size_t nbytes, symc_tensor *out, symc_error *err) {
    if (!m || !out || (rank > 0 && !dims) || (nbytes && !data))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_add_constant: NULL argument");
    symc_status st = check_new_name(m, name, "constant", err);
    if (st) return st;
    uint32_t idx;
    if (ir_find_node(m, name, &idx))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "constant '%s': a node of that name exists", name);
    if ((unsigned)dtype >= SYMC_DTYPE_COUNT)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "constant '%s': invalid dtype %d", name, (int)dtype);
    if (rank < 0 || rank > IR_MAX_RANK)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "constant '%s': rank %d is outside [0, %d]", name, (int)rank,
                               IR_MAX_RANK);
    sym_expr d[IR_MAX_RANK];
    uint64_t numel = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "constant '%s' dim %d = %lld is negative", name, i,
                                   (long long)dims[i]);
        if (dims[i] && numel > UINT64_MAX / (uint64_t)dims[i])
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "constant '%s' is too large", name);
        numel *= (uint64_t)dims[i];
        d[i] = sym_const(m->syms, dims[i]);
        if (d[i] == SYM_NONE) return bad_dim(m, "constant", i, err);
    }
    size_t es = symc_dtype_size(dtype);
    if (numel > SIZE_MAX / es || numel * es != nbytes)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "constant '%s': %zu bytes given, its shape and dtype need %llu", name, nbytes,
                               (unsigned long long)(numel * es));
    uint8_t *copy = malloc(nbytes ? nbytes : 1);
    if (!copy) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory copying constant '%s'", name);
    if (nbytes) memcpy(copy, data, nbytes);
    uint32_t c, t;
    if ((st = ir_add_constant(m, copy, nbytes, &c, err))) return st;
    if ((st = ir_add_tensor(m, name, dtype, rank, d, &t, err))) goto undo_constant;
    m->tensors[t].constant = c;
    if ((st = ir_add_node(m, IR_OP_CONSTANT, name, "", NULL, 0, &t, 1, NULL, 0, NULL, err))) {
        m->n_tensors--;
        goto undo_constant;
    }
    *out = t;
    return SYMC_OK;
undo_constant: /* the constant was the last one added */
    free(m->constants[--m->n_constants].data);
    return st;
}

symc_status symc_add_node(symc_module *m, const char *op, const char *name, const symc_tensor *inputs, uint32_t n_in,
                          const symc_attr *attrs, uint32_t n_attrs, symc_tensor *outputs, uint32_t n_out,
                          symc_error *err) {
    if (!m || (n_in && !inputs) || (n_attrs && !attrs) || (n_out && !outputs))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_add_node: NULL argument");
    ir_op id;
    if (!ir_op_find(op, &id))
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "node '%s': unknown op '%s' (see common/ops.def)",
                               name ? name : "", op ? op : "(null)");
    if (id == IR_OP_CONSTANT)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "node '%s': make constants with symc_add_constant",
                               name ? name : "");
    char auto_name[64];
    if (!name || !*name) {
        /* first free "<op>_<k>" */
        uint32_t idx;
        for (uint32_t k = m->n_nodes;; k++) {
            snprintf(auto_name, sizeof auto_name, "%s_%u", op, k);
            if (!ir_find_node(m, auto_name, &idx) && !ir_find_tensor(m, auto_name, &idx)) break;
        }
        name = auto_name;
    }
    uint32_t idx;
    if (ir_find_node(m, name, &idx))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "node '%s': a node of that name exists", name);
    symc_status st = ir_check_node(m, id, name, inputs, n_in, n_out, attrs, n_attrs, err);
    if (st) return st;
    symc_dtype dt;
    if ((st = ir_infer_dtype(m, id, name, inputs, n_in, attrs, n_attrs, &dt, err))) return st;

    /* output names: the node's own for one output, "<node>:<k>" for several */
    uint32_t first = m->n_tensors;
    char tname[300];
    for (uint32_t k = 0; k < n_out; k++) {
        if (n_out == 1) snprintf(tname, sizeof tname, "%s", name);
        else snprintf(tname, sizeof tname, "%s:%u", name, k);
        if (ir_find_tensor(m, tname, &idx)) {
            m->n_tensors = first;
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "node '%s': its output name '%s' is taken by another tensor", name, tname);
        }
        if ((st = ir_add_tensor(m, tname, dt, IR_RANK_UNKNOWN, NULL, &outputs[k], err))) {
            m->n_tensors = first;
            return st;
        }
    }
    st = ir_add_node(m, id, name, "", inputs, n_in, outputs, n_out, attrs, n_attrs, NULL, err);
    if (st) {
        m->n_tensors = first;
        return st;
    }
    /* negative axes counted from the end: non-negative now when the input's rank is known, else
     * at shape inference (ir/axes.c) */
    return ir_normalize_axes(m, m->n_nodes - 1, err);
}

symc_status symc_mark_output(symc_module *m, symc_tensor t, symc_error *err) {
    if (!m) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_mark_output: NULL module");
    return ir_mark_output(m, t, err);
}

symc_status symc_module_verify(symc_module *m, symc_error *err) {
    if (!m) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_module_verify: NULL module");
    return ir_verify(m, err);
}

symc_status symc_module_save(symc_module *m, const char *path, symc_error *err) {
    if (!m || !path) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_module_save: NULL argument");
    return ir_save(m, path, err);
}

symc_status symc_module_load(const char *path, symc_module **out, symc_error *err) {
    if (!path || !out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_module_load: NULL argument");
    return ir_load(path, out, err);
}

char *symc_module_print(symc_module *m) { return m ? ir_print_to_string(m) : NULL; }

symc_status symc_tensor_info(symc_module *m, symc_tensor t, symc_dtype *dtype, int32_t *rank, symc_dim *dims,
                             symc_error *err) {
    if (!m || !dtype || !rank || !dims)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_tensor_info: NULL argument");
    if (t >= m->n_tensors)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symc_tensor_info: no tensor %u (the module has %u)", t,
                               m->n_tensors);
    const ir_tensor *x = &m->tensors[t];
    *dtype = x->dtype;
    *rank = x->rank == IR_RANK_UNKNOWN ? -1 : x->rank;
    for (int32_t i = 0; i < *rank; i++) dims[i] = x->dims[i];
    return SYMC_OK;
}
