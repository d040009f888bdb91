/* Index-computing kernels: argmax/argmin, topk, cumsum, gather_nd,
 * scatter_nd, scatter_elements.
 *
 * The reference's own formulations, one thread per independent piece of
 * work: argmax/argmin, topk and cumsum one thread per line along the axis
 * (outer x inner lines; topk picks its k indices by k scans of the line in
 * the reference's strict order, value then lower index, sc_topk_before);
 * gather_nd one thread per output element. The scatters are two kernels:
 * a copy of the data (one thread per element), then the updates applied in
 * the order of the indices by a single thread, so duplicate indices give
 * the reference's result (later updates win without a reduction) with no
 * atomics; that second kernel is sequential, correct rather than fast, and
 * fine for the small updates models make (a KV-cache write). cumsum
 * accumulates floats in double like the reference. An index out of range,
 * which the reference refuses, is clamped to a valid place and reported
 * with sc_report (code 1); an argmax over an empty axis writes 0 and is
 * reported likewise. */
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit.h"

static symc_status finish(cg_kw *k, const char *how, sym_expr work) {
    const ir_node *n = &k->c->m->nodes[k->node];
    char comment[256];
    snprintf(comment, sizeof comment, "%s: %s, %s", ir_op_get(n->op)->name, n->name, how);
    symc_status st = cg_kw_finish(k, comment, work, 256, 256);
    cg_kw_free(k);
    return st;
}

/* outer/line/inner split of x around axis: the body declares
 * `const long long oi = o / inner, ii = o % inner` for a line index o */
typedef struct line {
    sym_expr outer, n, inner, lines;
    int axis;
} line;

static symc_status line_of(cg_cuda *c, uint32_t node, const ir_tensor *x, int64_t axis_attr, line *l) {
    l->axis = cg_norm_axis(axis_attr, x->rank);
    if (l->axis < 0) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "axis %lld is out of range", (long long)axis_attr);
    l->outer = cg_prod(c, x->dims, 0, l->axis);
    l->n = x->dims[l->axis];
    l->inner = cg_prod(c, x->dims, l->axis + 1, x->rank);
    l->lines = sym_mul(c->m->syms, l->outer, l->inner);
    return SYMC_OK;
}

static symc_status arg_reduce(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    line l;
    symc_status st = line_of(c, node, x, cg_attr_int(n, "axis", 0), &l);
    if (st) return st;
    int is_max = n->op == IR_OP_ARGMAX, last = cg_attr_int(n, "select_last_index", 0) != 0;
    int fl = ir_dtype_is_float(x->dtype);
    const char *T = cg_ctype(x->dtype);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    char nn[48], inner[48], ld0[160], ld[160];
    snprintf(nn, sizeof nn, "%s", cg_kw_dim(&k, l.n));
    snprintf(inner, sizeof inner, "%s", cg_kw_dim(&k, l.inner));
    cg_load(ld0, sizeof ld0, x->dtype, xp, "base");
    cg_load(ld, sizeof ld, x->dtype, xp, "base + j * inner");
    cg_kw_body(&k, "    const long long inner = %s;\n    SC_LOOP(o, %s) {\n", inner, cg_kw_dim(&k, l.lines));
    cg_kw_body(&k, "        const long long base = (o / inner) * %s * inner + o %% inner;\n", nn);
    cg_kw_body(&k, "        if (%s == 0) { sc_report(1u, %uu); %s[o] = 0; continue; } /* no index: reported */\n", nn,
               node, yp);
    cg_kw_body(&k, "        long long best = 0;\n        %s bv = (%s)%s;\n", T, T, ld0);
    cg_kw_body(&k, "        for (long long j = 1; j < %s; j++) {\n            const %s v = (%s)%s;\n", nn, T, T, ld);
    if (fl)
        cg_kw_body(&k, "            const bool better = bv != bv ? (%s && v != v) : (v != v || v %s bv%s);\n",
                   last ? "true" : "false", is_max ? ">" : "<", last ? " || v == bv" : "");
    else cg_kw_body(&k, "            const bool better = v %s bv%s;\n", is_max ? ">" : "<", last ? " || v == bv" : "");
    cg_kw_body(&k, "            if (better) { best = j; bv = v; }\n        }\n        %s[o] = best;\n    }\n", yp);
    return finish(&k, "one thread per line", l.lines);
}

static symc_status topk(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    const ir_attr *ka = ir_node_attr(n, "k");
    if (!ka || ka->n != 1) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "attribute 'k' must hold one value");
    line l;
    symc_status st = line_of(c, node, x, cg_attr_int(n, "axis", -1), &l);
    if (st) return st;
    const char *T = cg_ctype(x->dtype);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    char nn[48], inner[48], kk[48], lj[160], lp[160], lb[160];
    snprintf(nn, sizeof nn, "%s", cg_kw_dim(&k, l.n));
    snprintf(inner, sizeof inner, "%s", cg_kw_dim(&k, l.inner));
    snprintf(kk, sizeof kk, "%s", cg_kw_dim(&k, ka->dims[0]));
    cg_load(lj, sizeof lj, x->dtype, xp, "base + j * inner");
    cg_load(lp, sizeof lp, x->dtype, xp, "base + prev * inner");
    cg_load(lb, sizeof lb, x->dtype, xp, "base + best * inner");
    cg_kw_body(&k, "    const long long inner = %s;\n    const bool largest = %s;\n    SC_LOOP(o, %s) {\n", inner,
               cg_attr_int(n, "largest", 1) ? "true" : "false", cg_kw_dim(&k, l.lines));
    cg_kw_body(&k, "        const long long base = (o / inner) * %s * inner + o %% inner;\n", nn);
    cg_kw_body(&k, "        const long long obase = (o / inner) * %s * inner + o %% inner;\n", kk);
    cg_kw_body(&k, "        long long prev = -1;\n        for (long long r = 0; r < %s; r++) {\n", kk);
    cg_kw_body(&k, "            long long best = -1;\n            for (long long j = 0; j < %s; j++) {\n", nn);
    cg_kw_body(&k, "                const %s v = (%s)%s;\n", T, T, lj);
    cg_kw_body(&k,
               "                if (prev >= 0 && !sc_topk_before((%s)%s, prev, v, j, largest)) continue; /* taken */\n",
               T, lp);
    cg_kw_body(&k, "                if (best < 0 || sc_topk_before(v, j, (%s)%s, best, largest)) best = j;\n", T, lb);
    cg_kw_body(&k,
               "            }\n            %s[obase + r * inner] = best;\n            prev = best;\n        }\n    }\n",
               yp);
    return finish(&k, "one thread per line, k scans", l.lines);
}

static symc_status cumsum(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    line l;
    symc_status st = line_of(c, node, x, cg_attr_int(n, "axis", 0), &l);
    if (st) return st;
    int excl = cg_attr_int(n, "exclusive", 0) != 0, rev = cg_attr_int(n, "reverse", 0) != 0;
    int fl = ir_dtype_is_float(x->dtype);
    const char *A = fl ? "double" : "unsigned long long"; /* integers wrap like the dtype */
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    char nn[48], inner[48], ld[160], stv[200], cast[64];
    snprintf(nn, sizeof nn, "%s", cg_kw_dim(&k, l.n));
    snprintf(inner, sizeof inner, "%s", cg_kw_dim(&k, l.inner));
    cg_load(ld, sizeof ld, x->dtype, xp, "at");
    snprintf(cast, sizeof cast, "(%s)acc", cg_ctype(x->dtype));
    cg_store(stv, sizeof stv, x->dtype, cast);
    cg_kw_body(&k, "    const long long inner = %s;\n    SC_LOOP(o, %s) {\n", inner, cg_kw_dim(&k, l.lines));
    cg_kw_body(&k, "        const long long base = (o / inner) * %s * inner + o %% inner;\n        %s acc = 0;\n", nn,
               A);
    cg_kw_body(&k, "        for (long long s = 0; s < %s; s++) {\n", nn);
    if (rev) cg_kw_body(&k, "            const long long at = base + (%s - 1 - s) * inner;\n", nn);
    else cg_kw_body(&k, "            const long long at = base + s * inner;\n");
    cg_kw_body(&k, "            const %s v = (%s)%s;\n", A, A, ld);
    if (!excl) cg_kw_body(&k, "            acc += v;\n");
    cg_kw_body(&k, "            %s[at] = %s;\n", yp, stv);
    if (excl) cg_kw_body(&k, "            acc += v;\n");
    cg_kw_body(&k, "        }\n    }\n");
    return finish(&k, "one thread per line", l.lines);
}

/* data [B.., D..] and indices [B.., Q.., m] of gather_nd / scatter_nd (b batch dims) */
typedef struct nd {
    int b, m;
    sym_expr batch, tuples, slice, bstride;
} nd;

static symc_status nd_of(cg_cuda *c, uint32_t node, const ir_tensor *x, const ir_tensor *idx, int64_t b, nd *g) {
    int64_t m;
    if (idx->rank < 1 || b < 0 || b >= idx->rank || b >= x->rank ||
        !sym_is_const(c->m->syms, idx->dims[idx->rank - 1], &m) || m < 1 || m > x->rank - b ||
        (idx->dtype != SYMC_I64 && idx->dtype != SYMC_I32))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "indices '%s' do not fit data '%s'", idx->name, x->name);
    g->b = (int)b, g->m = (int)m;
    g->batch = cg_prod(c, x->dims, 0, g->b);
    g->tuples = cg_prod(c, idx->dims, g->b, idx->rank - 1);
    g->slice = cg_prod(c, x->dims, g->b + g->m, x->rank);
    g->bstride = cg_prod(c, x->dims, g->b, x->rank);
    return SYMC_OK;
}

/* `long long off` of index tuple q (counted over batch x tuples) in data,
 * batch bi = q / tuples; an entry out of range is reported and clamped to 0 */
static void nd_offset(cg_kw *k, const ir_tensor *x, const nd *g, const char *ip, const char *q, uint32_t node) {
    cg_kw_body(k, "        long long off = (%s / %s) * %s;\n", q, cg_kw_dim(k, g->tuples), cg_kw_dim(k, g->bstride));
    for (int j = 0; j < g->m; j++) {
        char dim[48];
        snprintf(dim, sizeof dim, "%s", cg_kw_dim(k, x->dims[g->b + j]));
        cg_kw_body(k, "        { long long v = %s[%s * %dLL + %d];\n", ip, q, g->m, j);
        cg_kw_body(k, "          if (v < 0) v += %s;\n          if (v < 0 || v >= %s) { sc_report(1u, %uu); v = 0; }\n",
                   dim, dim, node);
        cg_kw_body(k, "          off += v * %s; }\n", cg_kw_dim(k, cg_prod(k->c, x->dims, g->b + j + 1, x->rank)));
    }
}

static symc_status gather_nd(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *idx = &c->m->tensors[n->in[1]], *y = &c->m->tensors[n->out[0]];
    nd g = {0};
    symc_status st = nd_of(c, node, x, idx, cg_attr_int(n, "batch_dims", 0), &g);
    if (st) return st;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *ip = cg_kw_in(&k, n->in[1]), *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, y);
    char slice[48];
    snprintf(slice, sizeof slice, "%s", cg_kw_dim(&k, g.slice));
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n        const long long q = i / %s;\n", cg_kw_dim(&k, numel), slice);
    nd_offset(&k, x, &g, ip, "q", node);
    cg_kw_body(&k, "        %s[i] = %s[off + i %% %s];\n    }\n", yp, xp, slice);
    return finish(&k, "one thread per output", numel);
}

/* the first kernel of a scatter: the output starts as a copy of the data */
static symc_status scatter_copy(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, &c->m->tensors[n->in[0]]);
    cg_kw_body(&k, "    SC_LOOP(i, %s) %s[i] = %s[i];\n", cg_kw_dim(&k, numel), yp, xp);
    return finish(&k, "the data copied, before the updates", numel);
}

/* y[o] (reduction)= u[ui], in the body */
static symc_status combine(cg_cuda *c, uint32_t node, cg_kw *k, symc_dtype dt, const char *yp, const char *up,
                           const char *o, const char *ui) {
    const char *red = cg_attr_str(&c->m->nodes[node], "reduction", "none");
    if (!strcmp(red, "none")) {
        cg_kw_body(k, "            %s[%s] = %s[%s];\n", yp, o, up, ui);
        return SYMC_OK;
    }
    const char *fn = !strcmp(red, "add") ? "+"
        : !strcmp(red, "mul")            ? "*"
        : !strcmp(red, "max")            ? "sc_max"
        : !strcmp(red, "min")            ? "sc_min"
                                         : NULL;
    if (!fn) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "reduction '%s' is not none, add, mul, max or min", red);
    char ya[160], ua[160], v[400], sv[480];
    cg_load(ya, sizeof ya, dt, yp, o);
    cg_load(ua, sizeof ua, dt, up, ui);
    const char *T = cg_ctype(dt);
    if (fn[0] == 's') snprintf(v, sizeof v, "%s((%s)%s, (%s)%s)", fn, T, ya, T, ua);
    else if (ir_dtype_is_float(dt)) snprintf(v, sizeof v, "(%s)((%s)%s %s (%s)%s)", T, T, ya, fn, T, ua);
    else /* integers wrap like the dtype */
        snprintf(v, sizeof v, "(%s)((unsigned long long)%s %s (unsigned long long)%s)", T, ya, fn, ua);
    cg_store(sv, sizeof sv, dt, v);
    cg_kw_body(k, "            %s[%s] = %s;\n", yp, o, sv);
    return SYMC_OK;
}

static symc_status scatter_nd(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *idx = &c->m->tensors[n->in[1]];
    nd g = {0};
    symc_status st = nd_of(c, node, x, idx, 0, &g);
    if (st || (st = scatter_copy(c, node))) return st;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *ip = cg_kw_in(&k, n->in[1]), *up = cg_kw_in(&k, n->in[2]), *yp = cg_kw_out(&k, n->out[0]);
    char slice[48];
    snprintf(slice, sizeof slice, "%s", cg_kw_dim(&k, g.slice));
    cg_kw_body(&k, "    SC_LOOP(t0, 1LL) for (long long q = 0; q < %s; q++) {\n", cg_kw_dim(&k, g.tuples));
    nd_offset(&k, x, &g, ip, "q", node);
    cg_kw_body(&k, "        for (long long e = 0; e < %s; e++) {\n", slice);
    char ui[80];
    snprintf(ui, sizeof ui, "q * %s + e", slice);
    if ((st = combine(c, node, &k, x->dtype, yp, up, "off + e", ui))) {
        cg_kw_free(&k);
        return st;
    }
    cg_kw_body(&k, "        }\n    }\n");
    return finish(&k, "the updates in order, one thread", sym_const(c->m->syms, 1));
}

static symc_status scatter_elements(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *idx = &c->m->tensors[n->in[1]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", 0), x->rank);
    if (axis < 0 || idx->rank != x->rank || (idx->dtype != SYMC_I64 && idx->dtype != SYMC_I32))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "indices '%s' must be i32/i64 of the data's rank", idx->name);
    symc_status st = scatter_copy(c, node);
    if (st) return st;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *ip = cg_kw_in(&k, n->in[1]), *up = cg_kw_in(&k, n->in[2]), *yp = cg_kw_out(&k, n->out[0]);
    char dim[48];
    snprintf(dim, sizeof dim, "%s", cg_kw_dim(&k, x->dims[axis]));
    cg_kw_body(&k, "    SC_LOOP(t0, 1LL) for (long long q = 0; q < %s; q++) {\n",
               cg_kw_dim(&k, ir_tensor_numel(c->m, idx)));
    cg_kw_body(&k, "        long long off = 0, r = q, cd;\n");
    for (int d = x->rank - 1; d >= 0; d--) {
        cg_kw_body(&k, "        cd = r %% %s; r /= %s;\n", cg_kw_dim(&k, idx->dims[d]), cg_kw_dim(&k, idx->dims[d]));
        if (d == axis) {
            cg_kw_body(&k, "        cd = %s[q];\n        if (cd < 0) cd += %s;\n", ip, dim);
            cg_kw_body(&k, "        if (cd < 0 || cd >= %s) { sc_report(1u, %uu); cd = 0; }\n", dim, node);
        }
        cg_kw_body(&k, "        off += cd * %s;\n", cg_kw_dim(&k, cg_prod(c, x->dims, d + 1, x->rank)));
    }
    cg_kw_body(&k, "        {\n");
    if ((st = combine(c, node, &k, x->dtype, yp, up, "off", "q"))) {
        cg_kw_free(&k);
        return st;
    }
    cg_kw_body(&k, "        }\n    }\n");
    return finish(&k, "the updates in order, one thread", sym_const(c->m->syms, 1));
}

symc_status cg_emit_index(cg_cuda *c, uint32_t node) {
    switch (c->m->nodes[node].op) {
    case IR_OP_ARGMAX:
    case IR_OP_ARGMIN: return arg_reduce(c, node);
    case IR_OP_TOPK: return topk(c, node);
    case IR_OP_CUMSUM: return cumsum(c, node);
    case IR_OP_GATHER_ND: return gather_nd(c, node);
    case IR_OP_SCATTER_ND: return scatter_nd(c, node);
    case IR_OP_SCATTER_ELEMENTS: return scatter_elements(c, node);
    default: return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "the CUDA target has no kernel for this op");
    }
}
