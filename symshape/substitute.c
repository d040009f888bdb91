/* Substitution of one symbol by an expression (sym_substitute), and whether
 * an expression mentions a symbol (sym_mentions).
 *
 * The expression is a hash-consed DAG, so the rewrite is a depth-first walk
 * that memoizes each distinct node's result (sym_memo, handle to handle):
 * time linear in the distinct nodes, as for evaluation. A node whose operands
 * are unchanged is kept as it is; a changed one is rebuilt from its parts by
 * sym_make, the canonical constructors, so the result is canonical and is
 * simplified again under every symbol's range. That is why the result is
 * only promised equal to e where the replacement's value is a value the
 * symbol may take: e itself was simplified under the symbol's range and
 * multiple_of (max(u, 0) is u when u >= 0), and the rewrite does not undo
 * that. Memory planning substitutes an unbacked symbol's bound, which lies in
 * its range by construction. A constructor's failure (a divisor that becomes
 * the constant 0) is recorded in the table like any constructor's, and the
 * result is SYM_NONE. */
#include "symshape/sym_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct subctx {
    sym_table *t;
    sym_id id;
    sym_expr by;
    sym_memo memo; /* node -> its rewritten handle */
} subctx;

static sym_expr rewrite(subctx *c, sym_expr e) {
    sym_table *t = c->t;
    const sym_node *nd = sym__node(t, e);
    if (nd->kind == SYM_CONST) return e;
    if (nd->kind == SYM_SYMBOL) return (sym_id)nd->value == c->id ? c->by : e;
    int64_t *known = sym__memo_find(&c->memo, e);
    if (known) return (sym_expr)*known;
    sym_kind kind = (sym_kind)nd->kind;
    int64_t value = nd->value;
    uint32_t n = nd->n;
    sym_expr small[8], *ops = n <= 8 ? small : malloc(n * sizeof *ops);
    int64_t ksmall[8], *ks = kind != SYM_ADD ? NULL : n <= 8 ? ksmall : malloc(n * sizeof *ks);
    sym_expr r = SYM_NONE;
    if (!ops || (kind == SYM_ADD && !ks)) {
        sym__fail(t, SYMC_ERR_NOMEM, "out of memory substituting a symbol");
        goto done;
    }
    memcpy(ops, sym__ops(t, e), n * sizeof *ops); /* the pools may move while rebuilding */
    if (ks) memcpy(ks, sym__coefs(t, e), n * sizeof *ks);
    bool changed = false;
    for (uint32_t i = 0; i < n; i++) {
        sym_expr s = rewrite(c, ops[i]);
        if (s == SYM_NONE) goto done;
        changed |= s != ops[i];
        ops[i] = s;
    }
    r = changed ? sym_make(t, kind, value, n, ops, ks) : e;
    if (r != SYM_NONE && !sym__memo_put(&c->memo, e, (int64_t)r)) {
        sym__fail(t, SYMC_ERR_NOMEM, "out of memory substituting a symbol");
        r = SYM_NONE;
    }
done:
    if (ops != small) free(ops);
    if (ks && ks != ksmall) free(ks);
    return r;
}

sym_expr sym_substitute(sym_table *t, sym_expr e, sym_id id, sym_expr by) {
    if (!t) return SYM_NONE;
    if (e == SYM_NONE || by == SYM_NONE) return SYM_NONE;
    if (!sym__valid(t, e) || !sym__valid(t, by))
        return sym__fail(t, SYMC_ERR_INVALID_ARG, "sym_substitute: bad expression handle %u",
                         sym__valid(t, e) ? by : e);
    if (id >= t->nsyms) return sym__fail(t, SYMC_ERR_INVALID_ARG, "sym_substitute: no symbol %u", id);
    subctx c = {t, id, by, {0}};
    sym__memo_init(&c.memo);
    sym_expr r = rewrite(&c, e);
    sym__memo_free(&c.memo);
    return r;
}

/* Depth first, each distinct node once (the memo is the visited set). */
static bool mentions(const sym_table *t, sym_expr e, sym_id id, sym_memo *seen, bool *nomem) {
    const sym_node *nd = sym__node(t, e);
    if (nd->kind == SYM_CONST) return false;
    if (nd->kind == SYM_SYMBOL) return (sym_id)nd->value == id;
    if (sym__memo_find(seen, e)) return false;
    if (!sym__memo_put(seen, e, 0)) *nomem = true;
    for (uint32_t i = 0; i < nd->n && !*nomem; i++)
        if (mentions(t, sym__ops(t, e)[i], id, seen, nomem)) return true;
    return false;
}

int sym_mentions(const sym_table *t, sym_expr e, sym_id id) {
    if (!sym__valid(t, e)) return 0;
    sym_memo seen;
    bool nomem = false;
    sym__memo_init(&seen);
    bool r = mentions(t, e, id, &seen, &nomem);
    sym__memo_free(&seen);
    return r || nomem ? 1 : 0; /* out of memory: "may mention", the safe answer for a reader check */
}
