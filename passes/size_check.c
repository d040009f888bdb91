/* Refusing declared ranges under which a tensor's byte size does not fit in
 * int64.
 *
 * Every buffer size the engine computes at run time is a tensor's element
 * count times its element size, an expression over the symbols. If the
 * declared ranges allow a binding where that product passes INT64_MAX, the
 * engine accepts input shapes whose sizes it cannot represent: whoever sizes
 * a buffer in 64-bit arithmetic wraps to a small number and writes past it.
 * So after shape inference each tensor's byte size is bounded with the range
 * facts (sym_range_of, interval arithmetic that saturates at SYM_POS_INF);
 * an upper bound that saturated, or an expression that cannot even be
 * built (a constant product overflows), is a build error. Tensors are
 * checked in module order, so the first one reported is the earliest to
 * overflow (usually the graph input or the op that multiplies the symbols,
 * such as an S x S attention score). The message names the tensor, its
 * producer, the symbols with their declared ranges, and for each symbol the
 * largest max that makes this tensor fit (the others at their max), found by
 * bisection with exact evaluation (sym_eval fails on overflow). The bound is
 * interval arithmetic, so it is safe (never misses an overflow) and exact
 * for the products of dims that shapes are made of. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* Marks the symbols e mentions in seen[] (DAG walk, shared nodes visited
 * more than once: expressions of tensor sizes are small). Views stay valid:
 * nothing here constructs an expression. */
static void mark_symbols(sym_table *t, sym_expr e, uint8_t *seen, int depth) {
    sym_view v;
    if (depth > 64 || !sym_expr_view(t, e, &v)) return;
    if (v.kind == SYM_SYMBOL) {
        if (v.value >= 0 && (uint64_t)v.value < sym_symbol_count(t)) seen[v.value] = 1;
        return;
    }
    for (uint32_t i = 0; i < v.n; i++) mark_symbols(t, v.ops[i], seen, depth + 1);
}

/* The largest value of symbol s in its range (a multiple of its
 * multiple_of) at which `bytes` evaluates without overflow, the other
 * symbols at their max; 0 when none does. */
static int64_t largest_fitting(sym_table *t, sym_expr bytes, sym_id s, int64_t *vals, uint32_t n) {
    sym_symbol_info si;
    sym_symbol_get(t, s, &si);
    int64_t out, lo = si.min, hi = si.max, m = si.multiple_of > 1 ? si.multiple_of : 1;
    symc_error e;
    vals[s] = lo;
    if (sym_eval(t, bytes, vals, n, &out, &e) || out < 0) return 0;
    while (lo < hi) { /* invariant: lo fits */
        int64_t mid = lo + (hi - lo) / 2 + 1;
        vals[s] = mid;
        if (!sym_eval(t, bytes, vals, n, &out, &e) && out >= 0) lo = mid;
        else hi = mid - 1;
    }
    vals[s] = si.max;
    int64_t r = lo / m * m;
    return r >= si.min ? r : 0;
}

static symc_status too_large(ir_module *m, uint32_t ti, sym_expr bytes, symc_error *err) {
    sym_table *t = m->syms;
    const ir_tensor *x = &m->tensors[ti];
    char shape[512], size[512] = "", syms[1024] = "", fix[1024] = "", who[600];
    size_t n = (size_t)snprintf(shape, sizeof shape, "%s[", symc_dtype_name(x->dtype));
    for (int d = 0; d < x->rank && n < sizeof shape; d++) {
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%s", d ? ", " : "");
        if (n < sizeof shape) n += sym_print(t, x->dims[d], shape + n, sizeof shape - n);
    }
    if (n < sizeof shape) snprintf(shape + n, sizeof shape - n, "]");
    if (bytes != SYM_NONE) sym_print(t, bytes, size, sizeof size);
    if (x->producer == IR_NONE) snprintf(who, sizeof who, "input '%s' (%s, a graph input)", x->name, shape);
    else {
        const ir_node *p = &m->nodes[x->producer];
        int src = p->source && p->source[0] && strcmp(p->source, p->name);
        snprintf(who, sizeof who, "tensor '%s' (%s) from node '%s' (%s%s%s%s)", x->name, shape, p->name,
                 ir_op_get(p->op)->name, src ? ", source node '" : "", src ? p->source : "", src ? "'" : "");
    }
    uint32_t ns = sym_symbol_count(t);
    uint8_t *seen = calloc(ns ? ns : 1, 1);
    int64_t *vals = calloc(ns ? ns : 1, sizeof *vals);
    if (!seen || !vals) {
        free(seen), free(vals);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory checking the size of tensor '%s'", x->name);
    }
    for (int d = 0; d < x->rank; d++) mark_symbols(t, x->dims[d], seen, 0);
    for (sym_id s = 0; s < ns; s++) {
        sym_symbol_info si;
        sym_symbol_get(t, s, &si);
        vals[s] = si.max;
    }
    size_t ls = 0, lf = 0;
    int nsyms = 0, nfix = 0;
    for (sym_id s = 0; s < ns; s++) {
        if (!seen[s]) continue;
        sym_symbol_info si;
        sym_symbol_get(t, s, &si);
        nsyms++;
        if (ls < sizeof syms)
            ls += (size_t)snprintf(syms + ls, sizeof syms - ls, "%s%s in [%" PRId64 ", %" PRId64 "]", ls ? ", " : "",
                                   si.name, si.min, si.max);
        int64_t best = bytes == SYM_NONE ? 0 : largest_fitting(t, bytes, s, vals, ns);
        if (best && lf < sizeof fix) {
            lf += (size_t)snprintf(fix + lf, sizeof fix - lf, "%s%s to at most %" PRId64, lf ? ", or of " : "", si.name,
                                   best);
            nfix++;
        }
    }
    free(seen);
    free(vals);
    if (!nsyms)
        return symc_error_setf(err, SYMC_ERR_RANGE, "%s takes %s bytes, which does not fit in int64", who,
                               size[0] ? size : "more than 9223372036854775807");
    return symc_error_setf(err, SYMC_ERR_RANGE,
                           "%s takes %s bytes, which does not fit in int64 at the largest declared sizes (%s): "
                           "lower the max of %s%s",
                           who, size[0] ? size : "more than 9223372036854775807", syms,
                           nfix ? fix : "its symbols (it does not fit even at the min of any one of them)",
                           nfix && nsyms > 1 ? " (the others at their max)" : "");
}

symc_status pass_check_sizes(ir_module *m, symc_error *err) {
    sym_table *t = m->syms;
    int had_error = sym_table_error(t) != NULL;
    symc_status st = SYMC_OK;
    for (uint32_t i = 0; i < m->n_tensors && !st; i++) {
        const ir_tensor *x = &m->tensors[i];
        if (x->rank < 0) continue;
        sym_expr bytes = sym_scale(t, sym_numel(t, x->dims, (uint32_t)x->rank), (int64_t)symc_dtype_size(x->dtype));
        if (bytes == SYM_NONE || sym_range_of(t, bytes).hi == SYM_POS_INF) st = too_large(m, i, bytes, err);
    }
    if (!had_error) sym_table_clear_error(t); /* an overflow while building `bytes` is reported above */
    return st;
}
