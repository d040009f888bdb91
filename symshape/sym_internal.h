/* Internal layout of a sym_table, shared by the symshape translation units.
 * Nothing here is part of the contract in sym.h.
 *
 * Nodes live in one growing array indexed by handle; their operand handles and
 * sum coefficients live in two side pools so a node is a fixed-size record.
 * Children are always interned before their parent, so every operand handle is
 * smaller than the handle that uses it (the evaluators and the program
 * compiler rely on this). Facts (range, divisor, substitution) are cached per
 * handle and stamped with an epoch; sym_assume_eq bumps the epoch because it
 * can narrow symbol ranges and so change every derived fact. */
#ifndef SYMC_SYMSHAPE_SYM_INTERNAL_H
#define SYMC_SYMSHAPE_SYM_INTERNAL_H

#include "symshape/sym.h"

#include <stdbool.h>

typedef struct sym_node {
    int64_t value;
    uint32_t off; /* first operand in t->ops (and coefficient in t->coefs for SYM_ADD) */
    uint32_t n;
    uint32_t hash;
    uint8_t kind;
} sym_node;

typedef struct sym_fact {
    int64_t lo, hi, div;
    uint32_t range_epoch, div_epoch; /* 0 = not computed */
    sym_expr subst;                  /* representative form under the equalities */
    uint32_t subst_epoch;
} sym_fact;

typedef struct sym_sym {
    char *name, *provenance;
    char *hint;                  /* how the user declares a multiple ("{m}" = the multiple), or NULL */
    int64_t min, opt, max, mult; /* current (possibly narrowed) facts */
    uint32_t parent;             /* union-find over symbols */
    sym_expr bound;              /* root only: expression the class equals, or SYM_NONE */
    sym_expr ubound;             /* an unbacked symbol's upper bound (over earlier symbols), or SYM_NONE */
    bool data_dependent;
} sym_sym;

typedef struct sym_eq {
    sym_expr a, b; /* as given by the caller, for binding checks */
} sym_eq;

typedef struct sym_gd {
    sym_rel rel;
    sym_expr lhs, rhs;
    char *provenance;
} sym_gd;

struct sym_table {
    sym_node *nodes;
    sym_fact *facts;
    uint32_t nnodes, capnodes, capfacts;
    sym_expr *ops;
    uint32_t nops, capops;
    int64_t *coefs;
    uint32_t ncoefs, capcoefs;
    uint32_t *slots; /* open addressing; UINT32_MAX = empty */
    uint32_t capslots;

    sym_sym *syms;
    uint32_t nsyms, capsyms;
    sym_eq *eqs;
    uint32_t neqs, capeqs;
    sym_eq *geqs; /* equalities between substituted forms that union-find cannot hold */
    uint32_t ngeqs, capgeqs;
    sym_gd *guards;
    uint32_t nguards, capguards;

    uint32_t epoch;       /* >= 1 */
    bool has_eq;          /* any sym_assume_eq merged something */
    unsigned prove_depth; /* re-entrancy guard between canonicalizer and prover */
    unsigned quiet;       /* > 0: speculative construction, errors are not recorded */
    bool has_error;
    symc_error error;
};

/* ---- table.c ---- */
symc_status sym__grow(void **p, uint32_t *cap, uint32_t need, size_t elem);
sym_expr sym__intern(sym_table *t, sym_kind kind, int64_t value, uint32_t n, const sym_expr *ops, const int64_t *coefs);
sym_expr sym__fail(sym_table *t, symc_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
uint32_t sym__root(const sym_table *t, uint32_t id);
static inline const sym_node *sym__node(const sym_table *t, sym_expr e) { return &t->nodes[e]; }
/* NULL (not NULL + 0, which is undefined) while no node has operands yet */
static inline const sym_expr *sym__ops(const sym_table *t, sym_expr e) {
    return t->ops ? t->ops + t->nodes[e].off : NULL;
}
static inline const int64_t *sym__coefs(const sym_table *t, sym_expr e) {
    return t->coefs ? t->coefs + t->nodes[e].off : NULL;
}
static inline bool sym__valid(const sym_table *t, sym_expr e) { return t && e < t->nnodes; }

/* Per-walk memo: a map from handle to int64 for one traversal of a DAG (a
 * visited set, or each node's value under one binding). Expressions are
 * hash-consed DAGs whose subterms are shared, often several times per level
 * (a ceil-mode window is a min of two forms of its input), so any walk that
 * recurses into children must visit each distinct node once or it costs
 * exponential time in the depth. Open addressing with linear probing, at
 * most half full; the first SYM_MEMO_INLINE / 2 entries live inside the
 * struct, so walks over small expressions (nearly all of them) do not
 * allocate. */
#define SYM_MEMO_INLINE 64
typedef struct sym_memo {
    sym_expr *keys; /* SYM_NONE = empty */
    int64_t *vals;
    uint32_t cap, n; /* cap a power of two */
    sym_expr kbuf[SYM_MEMO_INLINE];
    int64_t vbuf[SYM_MEMO_INLINE];
} sym_memo;
void sym__memo_init(sym_memo *m);
void sym__memo_free(sym_memo *m); /* frees what init/put allocated; init again to reuse */
/* The value stored for e, or NULL when e has none. */
int64_t *sym__memo_find(const sym_memo *m, sym_expr e);
/* Stores v for e (replacing an old value); false only when out of memory. */
bool sym__memo_put(sym_memo *m, sym_expr e, int64_t v);

/* ---- expr.c ---- */
int sym__compare(const sym_table *t, sym_expr a, sym_expr b); /* deterministic structural order */
sym_expr sym__lincomb(sym_table *t, int64_t c, uint32_t n, const sym_expr *terms, const int64_t *coefs);

/* ---- range.c ---- */
int64_t sym__gcd(int64_t a, int64_t b); /* >= 0; saturates |INT64_MIN| to 2^62 */
int64_t sym__sat_add(int64_t a, int64_t b);
int64_t sym__sat_mul(int64_t a, int64_t b);
/* e == c (mod *g) for every binding; returns c. *g == 0 means e == c. */
int64_t sym__residue(sym_table *t, sym_expr e, int64_t *g);
/* Value of e mod k when it is the same for every binding, else -1 (k >= 1). */
int64_t sym__const_residue(sym_table *t, sym_expr e, int64_t k);
/* Narrows [lo, hi] to the multiples of m inside it; false when there are none. */
bool sym__round_range(int64_t *lo, int64_t *hi, int64_t m);

/* ---- prove.c ---- */
sym_expr sym__subst(sym_table *t, sym_expr e); /* rewrite symbols to class representatives */
/* Appends the distinct symbols of e to ids (up to cap); returns the new count,
 * or UINT32_MAX when out of memory (the list is then incomplete). Visits each
 * distinct node once. */
uint32_t sym__symbols_of(const sym_table *t, sym_expr e, uint32_t *ids, uint32_t n, uint32_t cap);

/* ---- eval.c ---- */
symc_status sym__eval_op(sym_kind kind, int64_t a, int64_t b, int64_t *out);
int64_t sym__floordiv(int64_t a, int64_t b); /* b != 0, not (INT64_MIN, -1) */
int64_t sym__mod(int64_t a, int64_t b);      /* b != 0 */

/* ---- sym_print.c ---- */
/* Prints e into a fixed buffer, cut with "..." (for messages). */
const char *sym__text(const sym_table *t, sym_expr e, char *buf, size_t cap);
const char *sym__range_text(int64_t lo, int64_t hi, char *buf, size_t cap);
/* "B in [1, 8], N in [16, 32] multiple of 8" for the given symbols. */
const char *sym__symbols_text(const sym_table *t, const uint32_t *ids, uint32_t n, char *buf, size_t cap);

#endif
