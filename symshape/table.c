/* The table: storage, interning and symbols.
 *
 * Interning is a plain open-addressing hash set of node indices (linear
 * probing, power-of-two capacity, at most half full), keyed by the node's
 * kind, constant, operands and coefficients. Constructors in expr.c build the
 * canonical parts first and call sym__intern last, so structural equality of
 * canonical forms is handle equality. All memory is malloc/realloc; a failed
 * allocation records SYMC_ERR_NOMEM and leaves the table consistent, so the
 * caller can still free it. */
#include "symshape/sym_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

symc_status sym__grow(void **p, uint32_t *cap, uint32_t need, size_t elem) {
    if (need <= *cap) return SYMC_OK;
    uint64_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    if (c > UINT32_MAX / 2 || c * elem > SIZE_MAX / 2) return SYMC_ERR_NOMEM;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return SYMC_ERR_NOMEM;
    *p = q;
    *cap = (uint32_t)c;
    return SYMC_OK;
}

sym_expr sym__fail(sym_table *t, symc_status code, const char *fmt, ...) {
    if (t && !t->has_error && !t->quiet) {
        va_list ap;
        va_start(ap, fmt);
        symc_error_vsetf(&t->error, code, fmt, ap);
        va_end(ap);
        t->has_error = true;
    }
    return SYM_NONE;
}

sym_table *sym_table_new(void) {
    sym_table *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->epoch = 1;
    t->capslots = 1024;
    t->slots = malloc(t->capslots * sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return NULL;
    }
    memset(t->slots, 0xff, t->capslots * sizeof *t->slots);
    return t;
}

void sym_table_free(sym_table *t) {
    if (!t) return;
    for (uint32_t i = 0; i < t->nsyms; i++) {
        free(t->syms[i].name);
        free(t->syms[i].provenance);
        free(t->syms[i].hint);
    }
    for (uint32_t i = 0; i < t->nguards; i++) free(t->guards[i].provenance);
    free(t->nodes);
    free(t->facts);
    free(t->ops);
    free(t->coefs);
    free(t->slots);
    free(t->syms);
    free(t->eqs);
    free(t->geqs);
    free(t->guards);
    free(t);
}

const symc_error *sym_table_error(const sym_table *t) { return t && t->has_error ? &t->error : NULL; }

void sym_table_clear_error(sym_table *t) {
    if (!t) return;
    t->has_error = false;
    symc_error_clear(&t->error);
}

uint32_t sym_expr_count(const sym_table *t) { return t ? t->nnodes : 0; }

/* ---- interning ---------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 29);
}

static uint32_t node_hash(sym_kind kind, int64_t value, uint32_t n, const sym_expr *ops, const int64_t *coefs) {
    uint64_t h = mix((uint64_t)kind * 0x100000001b3ull, (uint64_t)value);
    h = mix(h, n);
    for (uint32_t i = 0; i < n; i++) {
        h = mix(h, ops[i]);
        if (coefs) h = mix(h, (uint64_t)coefs[i]);
    }
    return (uint32_t)(h ^ (h >> 32));
}

static bool node_equal(const sym_table *t, uint32_t idx, sym_kind kind, int64_t value, uint32_t n, const sym_expr *ops,
                       const int64_t *coefs) {
    const sym_node *nd = &t->nodes[idx];
    if (nd->kind != kind || nd->value != value || nd->n != n) return false;
    if (n && memcmp(t->ops + nd->off, ops, n * sizeof *ops) != 0) return false;
    if (coefs && memcmp(t->coefs + nd->off, coefs, n * sizeof *coefs) != 0) return false;
    return true;
}

static symc_status rehash(sym_table *t) {
    uint32_t cap = t->capslots * 2;
    uint32_t *s = malloc((size_t)cap * sizeof *s);
    if (!s) return SYMC_ERR_NOMEM;
    memset(s, 0xff, (size_t)cap * sizeof *s);
    for (uint32_t i = 0; i < t->nnodes; i++) {
        uint32_t j = t->nodes[i].hash & (cap - 1);
        while (s[j] != UINT32_MAX) j = (j + 1) & (cap - 1);
        s[j] = i;
    }
    free(t->slots);
    t->slots = s;
    t->capslots = cap;
    return SYMC_OK;
}

sym_expr sym__intern(sym_table *t, sym_kind kind, int64_t value, uint32_t n, const sym_expr *ops,
                     const int64_t *coefs) {
    uint32_t h = node_hash(kind, value, n, ops, coefs);
    uint32_t mask = t->capslots - 1, j = h & mask;
    for (; t->slots[j] != UINT32_MAX; j = (j + 1) & mask) {
        uint32_t idx = t->slots[j];
        if (t->nodes[idx].hash == h && node_equal(t, idx, kind, value, n, ops, coefs)) return idx;
    }
    if (t->nnodes >= SYM_NONE - 1) return sym__fail(t, SYMC_ERR_NOMEM, "expression table full (%u handles)", t->nnodes);
    if ((uint64_t)t->nops + n > UINT32_MAX / 2) return sym__fail(t, SYMC_ERR_NOMEM, "expression operand pool full");
    if (sym__grow((void **)&t->nodes, &t->capnodes, t->nnodes + 1, sizeof *t->nodes) ||
        sym__grow((void **)&t->ops, &t->capops, t->nops + n, sizeof *t->ops) ||
        (coefs && sym__grow((void **)&t->coefs, &t->capcoefs, t->nops + n, sizeof *t->coefs)))
        return sym__fail(t, SYMC_ERR_NOMEM, "out of memory interning an expression");
    if (sym__grow((void **)&t->facts, &t->capfacts, t->nnodes + 1, sizeof *t->facts))
        return sym__fail(t, SYMC_ERR_NOMEM, "out of memory interning an expression");
    if ((uint64_t)(t->nnodes + 1) * 2 > t->capslots) {
        if (rehash(t)) return sym__fail(t, SYMC_ERR_NOMEM, "out of memory growing the hash table");
        mask = t->capslots - 1;
        for (j = h & mask; t->slots[j] != UINT32_MAX; j = (j + 1) & mask) {
        }
    }
    uint32_t idx = t->nnodes++;
    sym_node *nd = &t->nodes[idx];
    nd->kind = (uint8_t)kind;
    nd->value = value;
    nd->n = n;
    nd->hash = h;
    nd->off = t->nops;
    if (n) memcpy(t->ops + t->nops, ops, n * sizeof *ops);
    if (coefs) memcpy(t->coefs + t->nops, coefs, n * sizeof *coefs);
    t->nops += n;
    memset(&t->facts[idx], 0, sizeof t->facts[idx]);
    t->slots[j] = idx;
    return idx;
}

int sym_expr_view(const sym_table *t, sym_expr e, sym_view *out) {
    if (!out) return 0;
    memset(out, 0, sizeof *out);
    if (!sym__valid(t, e)) return 0;
    const sym_node *nd = sym__node(t, e);
    out->kind = (sym_kind)nd->kind;
    out->value = nd->value;
    out->n = nd->n;
    out->ops = nd->n ? t->ops + nd->off : NULL;
    out->coefs = nd->kind == SYM_ADD ? t->coefs + nd->off : NULL;
    return 1;
}

int sym_is_const(const sym_table *t, sym_expr e, int64_t *value) {
    if (!sym__valid(t, e) || t->nodes[e].kind != SYM_CONST) return 0;
    if (value) *value = t->nodes[e].value;
    return 1;
}

/* ---- per-walk memo -------------------------------------------------------- */

void sym__memo_init(sym_memo *m) {
    m->keys = m->kbuf;
    m->vals = m->vbuf;
    m->cap = SYM_MEMO_INLINE;
    m->n = 0;
    memset(m->kbuf, 0xff, sizeof m->kbuf);
}

void sym__memo_free(sym_memo *m) {
    if (m->keys != m->kbuf) free(m->keys);
    if (m->vals != m->vbuf) free(m->vals);
    m->keys = m->kbuf; /* a second free is harmless; reuse needs sym__memo_init */
    m->vals = m->vbuf;
}

static uint32_t memo_slot(const sym_memo *m, sym_expr e) {
    uint32_t mask = m->cap - 1, j = (uint32_t)(((uint64_t)e * 0x9e3779b97f4a7c15ull) >> 32) & mask;
    while (m->keys[j] != SYM_NONE && m->keys[j] != e) j = (j + 1) & mask;
    return j;
}

int64_t *sym__memo_find(const sym_memo *m, sym_expr e) {
    uint32_t j = memo_slot(m, e);
    return m->keys[j] == e ? &m->vals[j] : NULL;
}

bool sym__memo_put(sym_memo *m, sym_expr e, int64_t v) {
    uint32_t j = memo_slot(m, e);
    if (m->keys[j] == e) {
        m->vals[j] = v;
        return true;
    }
    if ((m->n + 1) * 2 > m->cap) {
        if (m->cap > UINT32_MAX / 4) return false;
        uint32_t cap = m->cap * 2;
        sym_expr *keys = malloc((size_t)cap * sizeof *keys);
        int64_t *vals = malloc((size_t)cap * sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return false;
        }
        memset(keys, 0xff, (size_t)cap * sizeof *keys);
        sym_expr *okeys = m->keys; /* may be the inline buffers: still readable below */
        int64_t *ovals = m->vals;
        uint32_t ocap = m->cap;
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
        for (uint32_t i = 0; i < ocap; i++)
            if (okeys[i] != SYM_NONE) {
                uint32_t k = memo_slot(m, okeys[i]);
                m->keys[k] = okeys[i];
                m->vals[k] = ovals[i];
            }
        if (okeys != m->kbuf) free(okeys);
        if (ovals != m->vbuf) free(ovals);
        j = memo_slot(m, e);
    }
    m->keys[j] = e;
    m->vals[j] = v;
    m->n++;
    return true;
}

/* ---- symbols ------------------------------------------------------------ */

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

uint32_t sym__root(const sym_table *t, uint32_t id) {
    while (t->syms[id].parent != id) id = t->syms[id].parent;
    return id;
}

symc_status sym_symbol_new(sym_table *t, const sym_symbol_info *info, sym_id *out, symc_error *err) {
    char r1[64];
    if (!t || !info) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_symbol_new: NULL argument");
    if (!info->name || !info->name[0]) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symbol name is empty");
    sym_id dup;
    if (sym_symbol_find(t, info->name, &dup))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symbol %s is declared twice", info->name);
    if (info->min > info->max)
        return symc_error_setf(err, SYMC_ERR_RANGE, "symbol %s: empty range %s (min > max)", info->name,
                               sym__range_text(info->min, info->max, r1, sizeof r1));
    if (info->multiple_of < 1)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symbol %s: multiple_of = %lld must be >= 1", info->name,
                               (long long)info->multiple_of);
    if (info->opt < info->min || info->opt > info->max)
        return symc_error_setf(err, SYMC_ERR_RANGE, "symbol %s: opt = %lld must be in %s", info->name,
                               (long long)info->opt, sym__range_text(info->min, info->max, r1, sizeof r1));
    int64_t lo = info->min, hi = info->max;
    if (!sym__round_range(&lo, &hi, info->multiple_of))
        return symc_error_setf(err, SYMC_ERR_RANGE, "symbol %s: no multiple of %lld in %s", info->name,
                               (long long)info->multiple_of, sym__range_text(info->min, info->max, r1, sizeof r1));
    if (t->nsyms >= INT32_MAX) return symc_error_setf(err, SYMC_ERR_NOMEM, "too many symbols");
    if (sym__grow((void **)&t->syms, &t->capsyms, t->nsyms + 1, sizeof *t->syms))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory declaring symbol %s", info->name);
    sym_sym *s = &t->syms[t->nsyms];
    memset(s, 0, sizeof *s);
    s->name = dup_str(info->name);
    s->provenance = dup_str(info->provenance ? info->provenance : "");
    if (!s->name || !s->provenance) {
        free(s->name);
        free(s->provenance);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory declaring symbol %s", info->name);
    }
    int64_t opt = info->opt;
    if (info->multiple_of > 1) { /* nearest multiple inside the rounded range */
        if (opt < lo) opt = lo;
        if (opt > hi) opt = hi;
        int64_t r = sym__mod(opt, info->multiple_of);
        if (r) opt = (opt - r >= lo) ? opt - r : opt - r + info->multiple_of;
    }
    s->min = lo;
    s->max = hi;
    s->opt = opt;
    s->mult = info->multiple_of;
    s->parent = t->nsyms;
    s->bound = SYM_NONE;
    s->ubound = SYM_NONE;
    if (out) *out = t->nsyms;
    t->nsyms++;
    return SYMC_OK;
}

uint32_t sym_symbol_count(const sym_table *t) { return t ? t->nsyms : 0; }

int sym_symbol_get(const sym_table *t, sym_id id, sym_symbol_info *out) {
    if (!out) return 0;
    memset(out, 0, sizeof *out);
    if (!t || id >= t->nsyms) return 0;
    const sym_sym *s = &t->syms[id];
    out->name = s->name;
    out->provenance = s->provenance;
    out->min = s->min;
    out->opt = s->opt;
    out->max = s->max;
    out->multiple_of = s->mult;
    return 1;
}

int sym_symbol_find(const sym_table *t, const char *name, sym_id *out) {
    if (!t || !name) return 0;
    for (uint32_t i = 0; i < t->nsyms; i++)
        if (strcmp(t->syms[i].name, name) == 0) {
            if (out) *out = i;
            return 1;
        }
    return 0;
}

symc_status sym_symbol_set_data_dependent(sym_table *t, sym_id id, int on) {
    if (!t || id >= t->nsyms) return SYMC_ERR_INVALID_ARG;
    t->syms[id].data_dependent = on != 0;
    return SYMC_OK;
}

symc_status sym_symbol_new_unbacked(sym_table *t, const char *name, sym_expr bound, const char *provenance, sym_id *out,
                                    symc_error *err) {
    char r[64];
    if (!t || !sym__valid(t, bound))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "unbacked symbol %s: bad bound expression",
                               name ? name : "(null)");
    sym_range rb = sym_range_of(t, bound);
    if (rb.lo < 0 || rb.hi == SYM_POS_INF)
        return symc_error_setf(err, SYMC_ERR_RANGE,
                               "unbacked symbol %s: its bound lies in %s, which must be finite "
                               "and not negative",
                               name ? name : "(null)", sym__range_text(rb.lo, rb.hi, r, sizeof r));
    /* opt: the bound at every earlier symbol's opt (the largest value where that fails) */
    int64_t opt = rb.hi, *opts = malloc((t->nsyms ? t->nsyms : 1) * sizeof *opts);
    if (!opts) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory declaring symbol %s", name ? name : "");
    for (uint32_t i = 0; i < t->nsyms; i++) opts[i] = t->syms[i].opt;
    int64_t v;
    if (!sym_eval(t, bound, opts, t->nsyms, &v, NULL) && v >= 0 && v <= rb.hi) opt = v;
    free(opts);
    sym_symbol_info info = {name, 0, opt, rb.hi, 1, provenance};
    sym_id id;
    symc_status st = sym_symbol_new(t, &info, &id, err);
    if (st) return st;
    t->syms[id].ubound = bound;
    t->syms[id].data_dependent = true;
    if (out) *out = id;
    return SYMC_OK;
}

sym_expr sym_symbol_bound(const sym_table *t, sym_id id) { return t && id < t->nsyms ? t->syms[id].ubound : SYM_NONE; }

symc_status sym_symbol_set_hint(sym_table *t, sym_id id, const char *hint, symc_error *err) {
    if (!t || id >= t->nsyms) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "sym_symbol_set_hint: bad symbol");
    char *h = hint && hint[0] ? dup_str(hint) : NULL;
    if (hint && hint[0] && !h)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory setting the hint of symbol %s", t->syms[id].name);
    free(t->syms[id].hint);
    t->syms[id].hint = h;
    return SYMC_OK;
}

const char *sym_symbol_hint(const sym_table *t, sym_id id) { return t && id < t->nsyms ? t->syms[id].hint : NULL; }

int sym_symbol_is_data_dependent(const sym_table *t, sym_id id) {
    return t && id < t->nsyms && t->syms[id].data_dependent;
}
