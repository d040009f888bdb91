/* Reductions and normalizations: reduce_sum/mean/max, softmax/log_softmax,
 * layer_norm, rms_norm, global_avg_pool.
 *
 * When the reduced elements of each output are contiguous (the reduced axes
 * are the innermost ones; a norm's axes always are; softmax over the last
 * axis), one block handles one row at a time (grid-stride over rows): its
 * threads stride over the row, then a block reduction (warp shuffles and one
 * shared partial per warp, sc_block_reduce in the prelude) gives every
 * thread the total. Otherwise a thread computes one output (softmax: one
 * (outer, inner) lane) looping over the reduced elements, which keeps
 * neighbouring threads on neighbouring addresses when the reduced axes are
 * outer ones. Accumulation is in the dtype's own type (fp32 for f32, int64
 * for integers); the reference accumulates in f64, which a tree reduction in
 * fp32 matches well within 1e-4. Algorithms follow the reference: two-pass
 * mean/variance, max-shifted softmax, NaN winning a max.
 *
 * Row kernels read their input through cg_emit_value at the flat index
 * row * cols + j: when the input is produced by an elementwise group the
 * target inlined (softmax(x * s + mask), layer_norm(x + residual)), the
 * group is computed right there and never stored; a kernel that passes over
 * the row more than once recomputes it each pass, which costs arithmetic
 * and re-reads of the leaves but no round trip of the intermediate. */
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit.h"

/* accumulator type */
static const char *acc_type(symc_dtype dt) {
    return dt == SYMC_F32 ? "float" : dt == SYMC_F64 ? "double" : "long long";
}

/* block size for rows of `cols` elements: fewer threads for short constant rows */
static uint32_t row_block(cg_cuda *c, sym_expr cols) {
    int64_t v;
    if (!sym_is_const(c->m->syms, cols, &v)) return 256;
    return v <= 32 ? 32 : v <= 64 ? 64 : v <= 128 ? 128 : 256;
}

typedef enum { RED_SUM, RED_MEAN, RED_MAX } red_kind;

static const char *red_init(red_kind r, symc_dtype dt) {
    if (r != RED_MAX) return "0";
    if (dt == SYMC_F32) return "-__int_as_float(0x7f800000)";
    if (dt == SYMC_F64) return "-__longlong_as_double(0x7ff0000000000000LL)";
    return "(-9223372036854775807LL - 1LL)";
}

/* "acc = ..." combining acc with value v */
static void red_step(cg_kw *k, red_kind r, const char *v) {
    if (r == RED_MAX) kw_body(k, "acc = sc_nanmax(acc, %s);", v);
    else kw_body(k, "acc += %s;", v);
}

/* the stored result: mean divides (integers truncate; an empty integer mean is 0) */
static void red_store(cg_kw *k, red_kind r, symc_dtype dt, const char *dst, const char *count) {
    const char *T = cg_ctype(dt), *A = acc_type(dt);
    if (r != RED_MEAN) kw_body(k, "%s = (%s)acc;\n", dst, T);
    else if (ir_dtype_is_float(dt)) kw_body(k, "%s = (%s)(acc / (%s)%s);\n", dst, T, A, count);
    else kw_body(k, "%s = (%s)(%s == 0 ? 0 : acc / %s);\n", dst, T, count, count);
}

/* one block per row of `cols` contiguous elements */
static symc_status row_reduce(cg_cuda *c, uint32_t node, red_kind r, uint32_t xt, uint32_t yt, sym_expr rows,
                              sym_expr cols, const char *what) {
    symc_dtype dt = c->m->tensors[xt].dtype;
    cg_kw k;
    kw_begin(&k, c, node);
    char cs[48], dst[48];
    snprintf(dst, sizeof dst, "%s[row]", kw_out(&k, yt));
    snprintf(cs, sizeof cs, "%s", kw_dim(&k, cols));
    kw_body(&k, "    SC_ROWS(row, %s) {\n", kw_dim(&k, rows));
    kw_body(&k, "        %s acc = %s;\n", acc_type(dt), red_init(r, dt));
    kw_body(&k, "        for (long long j = threadIdx.x; j < %s; j += blockDim.x) {\n", cs);
    kw_body(&k, "            const long long i = row * %s + j;\n", cs);
    symc_status st = cg_emit_value(&k, xt, "i", "x");
    kw_body(&k, "            ");
    red_step(&k, r, "x");
    kw_body(&k, "\n        }\n        acc = sc_block_reduce(acc, %s());\n        if (threadIdx.x == 0) ",
            r == RED_MAX ? "sc_max_op" : "sc_add_op");
    red_store(&k, r, dt, dst, cs);
    kw_body(&k, "    }\n");
    cg_str comment = {0};
    cg_str_appendf(&comment, "%s: %s (%s), one block per row", what, c->m->nodes[node].name,
                   ir_op_get(c->m->nodes[node].op)->name);
    cg_describe_inlined(c, xt, &comment);
    if (!st) st = kw_finish(&k, comment.p ? comment.p : "", rows, 1, row_block(c, cols));
    cg_str_free(&comment);
    kw_free(&k);
    return st;
}

/* unravels `idx` over the dims of x whose mark equals `want`, adding each
 * coordinate times x's own stride to `off` */
static void unravel_axes(cg_kw *k, const ir_tensor *x, const int *mark, int want, const char *idx, const char *off) {
    kw_body(k, "            { long long r = %s, c;", idx);
    int last = -1;
    for (int d = 0; d < x->rank; d++)
        if (mark[d] == want) last = last < 0 ? d : last;
    for (int d = x->rank - 1; d >= 0; d--) {
        if (mark[d] != want) continue;
        const char *st = kw_dim(k, cg_prod(k->c, x->dims, d + 1, x->rank));
        if (d == last) kw_body(k, " c = r;");
        else {
            const char *dim = kw_dim(k, x->dims[d]);
            kw_body(k, " c = r %% %s; r /= %s;", dim, dim);
        }
        kw_body(k, " %s += c * %s;", off, st);
    }
    kw_body(k, " }\n");
}

/* marks the reduced axes of a reduce_* node; *suffix: they are the innermost
 * ones (the reduced elements of each output are contiguous). 0, with *bad
 * the axis, when an axis is out of range. */
static int reduced_axes(const ir_node *n, const ir_tensor *x, int *reduced, int *suffix, int64_t *bad) {
    for (int d = 0; d < x->rank; d++) reduced[d] = 0;
    const ir_attr *axes = ir_node_attr(n, "axes");
    if (!axes || axes->n == 0)
        for (int d = 0; d < x->rank; d++) reduced[d] = 1;
    for (uint32_t i = 0; axes && i < axes->n; i++) {
        int a = cg_norm_axis(axes->ints[i], x->rank);
        if (a < 0) {
            *bad = axes->ints[i];
            return 0;
        }
        reduced[a] = 1;
    }
    int first = x->rank;
    for (int d = x->rank - 1; d >= 0 && reduced[d]; d--) first = d;
    *suffix = 1;
    for (int d = 0; d < first; d++) *suffix &= !reduced[d];
    return 1;
}

int cg_row_kernel(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    if (n->n_in < 1) return 0;
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    int fl = x->dtype == SYMC_F32 || x->dtype == SYMC_F64;
    switch (n->op) {
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX: return fl && cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank) == x->rank - 1;
    case IR_OP_LAYER_NORM:
    case IR_OP_RMS_NORM: return fl && cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank) >= 0;
    case IR_OP_GLOBAL_AVG_POOL: return fl && x->rank >= 3;
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_MAX: {
        int reduced[IR_MAX_RANK], suffix = 0;
        int64_t bad;
        return reduced_axes(n, x, reduced, &suffix, &bad) && suffix &&
               (fl || x->dtype == SYMC_I32 || x->dtype == SYMC_I64);
    }
    default: return 0;
    }
}

symc_status cg_emit_reduce(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    red_kind r = n->op == IR_OP_REDUCE_SUM ? RED_SUM : n->op == IR_OP_REDUCE_MEAN ? RED_MEAN : RED_MAX;
    if (x->dtype == SYMC_BOOL) return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' is bool", x->name);
    int reduced[IR_MAX_RANK], suffix;
    int64_t bad;
    if (!reduced_axes(n, x, reduced, &suffix, &bad))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "axis %lld is out of range", (long long)bad);
    sym_expr kept = sym_const(c->m->syms, 1), red = sym_const(c->m->syms, 1);
    for (int d = 0; d < x->rank; d++) {
        if (reduced[d]) red = sym_mul(c->m->syms, red, x->dims[d]);
        else kept = sym_mul(c->m->syms, kept, x->dims[d]);
    }
    if (suffix) return row_reduce(c, node, r, n->in[0], n->out[0], kept, red, "reduction");

    /* generic: one thread per output */
    cg_kw k;
    kw_begin(&k, c, node);
    symc_dtype dt = x->dtype;
    const char *xp = kw_in(&k, n->in[0]), *yp = kw_out(&k, n->out[0]);
    char ns[48];
    snprintf(ns, sizeof ns, "%s", kw_dim(&k, red));
    kw_body(&k, "    SC_LOOP(o, %s) {\n        long long base = 0;\n", kw_dim(&k, kept));
    unravel_axes(&k, x, reduced, 0, "o", "base");
    kw_body(&k, "        %s acc = %s;\n        for (long long q = 0; q < %s; q++) {\n            long long off = base;\n",
            acc_type(dt), red_init(r, dt), ns);
    unravel_axes(&k, x, reduced, 1, "q", "off");
    kw_body(&k, "            ");
    char v[64];
    snprintf(v, sizeof v, "(%s)%s[off]", acc_type(dt), xp);
    red_step(&k, r, v);
    kw_body(&k, "\n        }\n        ");
    char dst[64];
    snprintf(dst, sizeof dst, "%s[o]", yp);
    red_store(&k, r, dt, dst, ns);
    kw_body(&k, "    }\n");
    char comment[256];
    snprintf(comment, sizeof comment, "reduction: %s (%s), one thread per output", n->name, ir_op_get(n->op)->name);
    symc_status st = kw_finish(&k, comment, kept, 256, 256);
    kw_free(&k);
    return st;
}

symc_status cg_emit_global_avg_pool(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    if (x->rank < 3 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' must be a float tensor of rank >= 3", x->name);
    return row_reduce(c, node, RED_MEAN, n->in[0], n->out[0], cg_prod(c, x->dims, 0, 2),
                      cg_prod(c, x->dims, 2, x->rank), "global average pool");
}

symc_status cg_emit_softmax(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank);
    if (axis < 0 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' (%s) needs a float dtype and an axis in range",
                       x->name, ir_dtype_name(x->dtype));
    int logsm = n->op == IR_OP_LOG_SOFTMAX;
    const char *T = cg_ctype(x->dtype);
    const char *ninf = red_init(RED_MAX, x->dtype);
    cg_kw k;
    kw_begin(&k, c, node);
    sym_expr outer = cg_prod(c, x->dims, 0, axis), inner = cg_prod(c, x->dims, axis + 1, x->rank);
    char len[48];
    snprintf(len, sizeof len, "%s", kw_dim(&k, x->dims[axis]));
    const char *out_expr = logsm ? "(%s)(v - mx - sc_log(sum))" : "(%s)(sc_exp(v - mx) / sum)";
    char store[96];
    snprintf(store, sizeof store, out_expr, T);
    symc_status st = SYMC_OK;
    cg_str comment = {0};
    if (cg_row_kernel(c, node)) { /* the last axis: one block per row, three passes over it */
        const char *yp = kw_out(&k, n->out[0]);
        const char *pass[3] = {"mx = sc_nanmax(mx, v);", "sum += sc_exp(v - mx);", NULL};
        kw_body(&k, "    SC_ROWS(row, %s) {\n", kw_dim(&k, outer));
        kw_body(&k, "        %s* yr = %s + row * %s;\n", T, yp, len);
        kw_body(&k, "        %s mx = %s, sum = 0;\n", T, ninf);
        for (int p = 0; p < 3 && !st; p++) {
            kw_body(&k, "        for (long long j = threadIdx.x; j < %s; j += blockDim.x) {\n", len);
            kw_body(&k, "            const long long i = row * %s + j;\n", len);
            st = cg_emit_value(&k, n->in[0], "i", "v");
            if (pass[p]) kw_body(&k, "            %s\n        }\n", pass[p]);
            else kw_body(&k, "            yr[j] = %s;\n        }\n", store);
            if (p == 0) kw_body(&k, "        mx = sc_block_reduce(mx, sc_max_op());\n");
            if (p == 1) kw_body(&k, "        sum = sc_block_reduce(sum, sc_add_op());\n");
        }
        kw_body(&k, "    }\n");
        cg_str_appendf(&comment, "%s: %s, one block per row", ir_op_get(n->op)->name, n->name);
        cg_describe_inlined(c, n->in[0], &comment);
        if (!st) st = kw_finish(&k, comment.p ? comment.p : "", outer, 1, row_block(c, x->dims[axis]));
    } else {
        const char *xp = kw_in(&k, n->in[0]), *yp = kw_out(&k, n->out[0]);
        sym_expr work = sym_mul(c->m->syms, outer, inner);
        char in_s[48];
        snprintf(in_s, sizeof in_s, "%s", kw_dim(&k, inner));
        kw_body(&k, "    SC_LOOP(w, %s) {\n", kw_dim(&k, work));
        kw_body(&k, "        const %s* xr = %s + (w / %s) * %s * %s + w %% %s;\n", T, xp, in_s, len, in_s, in_s);
        kw_body(&k, "        %s* yr = %s + (w / %s) * %s * %s + w %% %s;\n", T, yp, in_s, len, in_s, in_s);
        kw_body(&k, "        %s mx = %s, sum = 0;\n", T, ninf);
        kw_body(&k, "        for (long long j = 0; j < %s; j++) mx = sc_nanmax(mx, xr[j * %s]);\n", len, in_s);
        kw_body(&k, "        for (long long j = 0; j < %s; j++) sum += sc_exp(xr[j * %s] - mx);\n", len, in_s);
        kw_body(&k, "        for (long long j = 0; j < %s; j++) {\n", len);
        kw_body(&k, "            const %s v = xr[j * %s];\n            yr[j * %s] = %s;\n        }\n    }\n", T, in_s,
                in_s, store);
        cg_str_appendf(&comment, "%s: %s over axis %d, one thread per (outer, inner)", ir_op_get(n->op)->name, n->name,
                       axis);
        st = kw_finish(&k, comment.p ? comment.p : "", work, 256, 256);
    }
    cg_str_free(&comment);
    kw_free(&k);
    return st;
}

symc_status cg_emit_norm(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank);
    int rms = n->op == IR_OP_RMS_NORM;
    if (axis < 0 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' (%s) needs a float dtype and an axis in range",
                       x->name, ir_dtype_name(x->dtype));
    const char *T = cg_ctype(x->dtype);
    char eps[96];
    cg_float_literal(eps, sizeof eps, cg_attr_float(n, "epsilon", 1e-5), x->dtype);
    sym_expr rows = cg_prod(c, x->dims, 0, axis), cols = cg_prod(c, x->dims, axis, x->rank);
    cg_kw k;
    kw_begin(&k, c, node);
    const char *yp = kw_out(&k, n->out[0]);
    char ns[48];
    snprintf(ns, sizeof ns, "%s", kw_dim(&k, cols));
    kw_body(&k, "    SC_ROWS(row, %s) {\n", kw_dim(&k, rows));
    kw_body(&k, "        %s* yr = %s + row * %s;\n", T, yp, ns);
    kw_body(&k, "        %s mean = 0, m2 = 0;\n", T);
    symc_status st = SYMC_OK;
    /* passes over the row: the mean (layer_norm only), the centred second moment, the output */
    for (int p = rms ? 1 : 0; p < 3 && !st; p++) {
        kw_body(&k, "        for (long long j = threadIdx.x; j < %s; j += blockDim.x) {\n", ns);
        kw_body(&k, "            const long long i = row * %s + j;\n", ns);
        st = cg_emit_value(&k, n->in[0], "i", "v");
        if (p == 0) {
            kw_body(&k, "            mean += v;\n        }\n");
            kw_body(&k, "        mean = sc_block_reduce(mean, sc_add_op()) / (%s)%s;\n", T, ns);
        } else if (p == 1) {
            kw_body(&k, "            const %s d = v - mean;\n            m2 += d * d;\n        }\n", T);
            kw_body(&k, "        m2 = sc_block_reduce(m2, sc_add_op());\n");
            kw_body(&k, "        const %s inv = (%s)1 / sc_sqrt(m2 / (%s)%s + %s);\n", T, T, T, ns, eps);
        } else {
            const ir_tensor *aff[2];
            uint32_t n_aff = 0;
            for (uint32_t i = 1; i < n->n_in; i++) aff[n_aff++] = &c->m->tensors[n->in[i]];
            if (n_aff) kw_bcast_offsets(&k, "j", x->dims + axis, x->rank - axis, n_aff, aff, "a");
            kw_body(&k, "            %s y = (v - mean) * inv;\n", T);
            if (n_aff > 0) kw_body(&k, "            y *= (%s)%s[a0];\n", T, kw_in(&k, n->in[1]));
            if (n_aff > 1) kw_body(&k, "            y += (%s)%s[a1];\n", T, kw_in(&k, n->in[2]));
            kw_body(&k, "            yr[j] = y;\n        }\n");
        }
    }
    kw_body(&k, "    }\n");
    cg_str comment = {0};
    cg_str_appendf(&comment, "%s: %s over dims %d.., one block per row", ir_op_get(n->op)->name, n->name, axis);
    cg_describe_inlined(c, n->in[0], &comment);
    if (!st) st = kw_finish(&k, comment.p ? comment.p : "", rows, 1, row_block(c, cols));
    cg_str_free(&comment);
    kw_free(&k);
    return st;
}
