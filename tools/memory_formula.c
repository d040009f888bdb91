/* The activation workspace as a formula in the engine's symbols
 * (tools/memory.h), for `symc inspect`, `symc bench` and the tests.
 *
 * An engine keeps sizes as slots of a bytecode shape program, so the
 * expressions are recovered first (rt_engine_sym_table, runtime/plan.h: a
 * fresh sym_table with the engine's symbols and their declared ranges, every
 * slot rebuilt through the canonical constructors). The formula is then the
 * fixed-order plan of runtime/plan.h written symbolically: each tensor's
 * offset is the max over the earlier tensors alive with it of (their offset
 * + aligned size), and the workspace the max over tensors of (offset +
 * aligned size); the aligned size is ceildiv(bytes, align) * align, which
 * the simplifier turns back into `bytes` whenever the divisibility facts
 * prove it a multiple.
 *
 * Written as nested maxes the offsets would share structure but print as an
 * exponentially long tree, so each offset is kept instead as a short list of
 * sums (one per chain of tensors stacked under it), dropping any sum the
 * prover shows never exceeds another one in the list. Dropping is exact on
 * every binding in range, so the formula still equals the numeric plan
 * there. A list that stays long anyway (sums that really cross inside the
 * ranges) is folded into one max expression so the work stays bounded.
 * Later offsets build on that max, so a deep network with dynamic H and W
 * (MobileNetV3 at B, H, W) still gets a formula whose DAG is small but whose
 * tree is exponential: everything downstream must walk it per distinct node
 * (sym_eval memoizes, sym_print cuts its text, tool_memory_text collects the
 * top-level max once per node). */
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "tools/memory.h"

#define CHAIN_CAP 12 /* sums kept per offset before folding them into one max */

sym_expr tool_tensor_bytes_expr(const rt_engine *e, sym_table *t, const sym_expr *slots, uint32_t tensor) {
    const rt_tensor *x = &e->tensors[tensor];
    sym_expr b = sym_const(t, (int64_t)symc_dtype_size(x->dtype));
    for (int d = 0; d < x->rank; d++) b = sym_mul(t, b, slots[x->dims[d]]);
    return b;
}

typedef struct chains {
    sym_expr *v;
    uint32_t n, cap;
} chains;

/* Adds x to the list unless a member is provably >= x everywhere in range;
 * drops the members x provably covers. 0; -1 out of memory; -2 when x could
 * not be built (the table holds the error). */
static int chains_add(sym_table *t, chains *c, sym_expr x) {
    if (x == SYM_NONE) return -2;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->v[i] == x || sym_prove_le(t, x, c->v[i]) == SYM_TRUE) return 0;
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (sym_prove_le(t, c->v[i], x) != SYM_TRUE) c->v[k++] = c->v[i];
    c->n = k;
    if (c->n == c->cap) {
        uint32_t cap = c->cap ? 2 * c->cap : 4;
        sym_expr *v = realloc(c->v, cap * sizeof *v);
        if (!v) return -1;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = x;
    return 0;
}

static sym_expr chains_max(sym_table *t, const chains *c) {
    if (!c->n) return sym_const(t, 0);
    sym_expr m = c->v[0];
    for (uint32_t i = 1; i < c->n; i++) m = sym_max(t, m, c->v[i]);
    return m;
}

symc_status tool_memory_formula(const rt_engine *e, const rt_lifetimes *l, sym_table *t, const sym_expr *slots,
                                size_t align, sym_expr *out, symc_error *err) {
    *out = SYM_NONE;
    if (align == 0 || align > (size_t)INT64_MAX / 2)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "tool_memory_formula: alignment %zu", align);
    uint32_t n = l->n_stack;
    sym_expr *size = malloc(((size_t)n + 1) * sizeof *size);
    chains *off = calloc((size_t)n + 1, sizeof *off), top = {0};
    symc_status st = SYMC_OK;
    int bad = 0;
    if (!size || !off) goto nomem;
    sym_expr zero = sym_const(t, 0), a = sym_const(t, (int64_t)align);
    for (uint32_t q = 0; q < n; q++) {
        sym_expr b = tool_tensor_bytes_expr(e, t, slots, l->stack[q]);
        size[q] = align == 1
            ? b
            : sym_scale(t, sym_floordiv(t, sym_add_const(t, b, (int64_t)align - 1), a), (int64_t)align);
    }
    for (uint32_t q = 0; q < n; q++) {
        chains *c = &off[q];
        if (l->below_at[q] == l->below_at[q + 1] && (bad = chains_add(t, c, zero))) goto fail;
        for (uint32_t k = l->below_at[q]; k < l->below_at[q + 1]; k++) {
            uint32_t p = l->below[k];
            for (uint32_t i = 0; i < off[p].n; i++)
                if ((bad = chains_add(t, c, sym_add(t, off[p].v[i], size[p])))) goto fail;
        }
        if (c->n > CHAIN_CAP) {
            sym_expr m = chains_max(t, c);
            c->n = 0;
            if ((bad = chains_add(t, c, m))) goto fail;
        }
        for (uint32_t i = 0; i < c->n; i++)
            if ((bad = chains_add(t, &top, sym_add(t, c->v[i], size[q])))) goto fail;
    }
    *out = chains_max(t, &top);
fail:
    if (bad == -1) goto nomem;
    if (bad || *out == SYM_NONE) {
        const symc_error *te = sym_table_error(t);
        st = symc_error_setf(err, te ? te->code : SYMC_ERR_INVALID_ARG, "the workspace formula: %s",
                             te ? te->msg : "an expression could not be built");
        *out = SYM_NONE;
    }
    goto done;
nomem:
    st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory building the workspace formula");
done:
    if (off)
        for (uint32_t q = 0; q < n; q++) free(off[q].v);
    free(off);
    free(top.v);
    free(size);
    return st;
}
