/* Brute-force fuzzer for symshape.
 *
 * Random tables (2-3 symbols, small ranges that include negatives, zero and
 * multiples, sometimes an assumed equality, a data-dependent symbol, or an
 * unbacked third symbol whose bound is a random expression over the first
 * two: the domain then holds only bindings where the bound evaluates and the
 * unbacked symbol does not exceed it, so every TRUE proof is checked against
 * enumeration within the bound) and
 * random expression trees over them. The trees are kept here and evaluated by
 * a naive reference evaluator (Python semantics, overflow and division by zero
 * detected) that never touches the interning table. For every binding of the
 * declared ranges that satisfies the assumed equalities (computed here, from
 * the reference trees of the equalities), the fuzzer checks that:
 *   - sym_check_binding accepts exactly those bindings;
 *   - the interned (simplified) expression evaluates like the original
 *     wherever the original evaluates; a constructor error is a constant
 *     division by zero only if the original fails at every binding;
 *   - sym_range_of contains every value and sym_divisor_of divides it;
 *   - TRUE/FALSE answers of sym_prove_{eq,ne,le,lt,divisible} hold;
 *   - guard classification agrees with enumeration (guards are about the
 *     interned expressions, as documented), and sym_guard_eval agrees too;
 *   - a shape program compiled from all expressions of the table, after
 *     sym_program_check, evaluates like sym_eval, and decoded back
 *     (sym_program_decode) into a fresh table with the declared symbols it
 *     gives expressions that evaluate like the program wherever it does.
 * Usage: test_fuzz [iterations [seed]]; seed 0 picks one from the clock
 * (printed, so a failure can be replayed). */
#include "test.h"

#include <inttypes.h>
#include <time.h>

/* ---- deterministic PRNG (splitmix64) ---- */
static uint64_t rng_state;
static uint64_t rnd(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static int64_t rint_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

/* ---- reference trees ---- */
enum { T_CONST, T_SYM, T_ADD, T_SUB, T_MUL, T_NEG, T_SCALE, T_ADDK, T_FDIV, T_CDIV, T_MOD, T_MIN, T_MAX, T_NOPS };

typedef struct tnode {
    int op;
    int64_t c;
    int a, b;
} tnode;

#define MAXN 200000
static tnode nodes[MAXN];
static int nnodes;

static int mk(int op, int64_t c, int a, int b) {
    if (nnodes >= MAXN) nnodes = 0; /* trees of old tables are dead by then */
    nodes[nnodes] = (tnode){op, c, a, b};
    return nnodes++;
}

static uint32_t nsym;

static int gen(int depth) {
    if (depth <= 0 || rnd() % 4 == 0) {
        if (rnd() % 3 == 0) return mk(T_CONST, rint_in(-6, 6), -1, -1);
        return mk(T_SYM, (int64_t)(rnd() % nsym), -1, -1);
    }
    int op = (int)rint_in(T_ADD, T_NOPS - 1);
    int a = gen(depth - 1), b = -1;
    if (rnd() % 8 == 0) { /* c1*a + c*(a//k): one subtree used twice, as in x - x//2 */
        int q = mk(T_FDIV, 0, a, mk(T_CONST, rint_in(2, 5), -1, -1));
        return mk(T_ADD, 0, mk(T_SCALE, rint_in(-2, 3), a, -1), mk(T_SCALE, rint_in(-4, 4), q, -1));
    }
    int64_t c = 0;
    switch (op) {
    case T_NEG: break;
    case T_SCALE: c = rint_in(-4, 6); break;
    case T_ADDK: c = rint_in(-9, 9); break;
    case T_FDIV:
    case T_CDIV:
    case T_MOD:
        /* mostly constant divisors, like real shapes; sometimes 0 or negative */
        b = rnd() % 3 ? mk(T_CONST, rint_in(-3, 9), -1, -1) : gen(depth - 1);
        break;
    default: b = gen(depth - 1);
    }
    return mk(op, c, a, b);
}

typedef struct rv {
    int64_t v;
    int bad;
} rv;

static int64_t fdiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if (a % b && ((a < 0) != (b < 0))) q--;
    return q;
}

static rv ref(int i, const int64_t *v) {
    const tnode *n = &nodes[i];
    rv x = {0, 0}, y = {0, 0}, r = {0, 0};
    if (n->op == T_CONST) return (rv){n->c, 0};
    if (n->op == T_SYM) return (rv){v[n->c], 0};
    x = ref(n->a, v);
    if (n->b >= 0) y = ref(n->b, v);
    if (x.bad || y.bad) return (rv){0, 1};
    int64_t t;
    switch (n->op) {
    case T_ADD: r.bad = __builtin_add_overflow(x.v, y.v, &r.v); break;
    case T_SUB: r.bad = __builtin_sub_overflow(x.v, y.v, &r.v); break;
    case T_MUL: r.bad = __builtin_mul_overflow(x.v, y.v, &r.v); break;
    case T_NEG: r.bad = __builtin_sub_overflow(0, x.v, &r.v); break;
    case T_SCALE: r.bad = __builtin_mul_overflow(x.v, n->c, &r.v); break;
    case T_ADDK: r.bad = __builtin_add_overflow(x.v, n->c, &r.v); break;
    case T_FDIV:
        if (y.v == 0 || (x.v == INT64_MIN && y.v == -1)) return (rv){0, 1};
        r.v = fdiv(x.v, y.v);
        break;
    case T_CDIV: /* documented as (a + b - 1) // b */
        if (__builtin_add_overflow(x.v, y.v, &t) || __builtin_sub_overflow(t, 1, &t) || y.v == 0 ||
            (t == INT64_MIN && y.v == -1))
            return (rv){0, 1};
        r.v = fdiv(t, y.v);
        break;
    case T_MOD:
        if (y.v == 0) return (rv){0, 1};
        r.v = y.v == -1 ? 0 : x.v - fdiv(x.v, y.v) * y.v;
        break;
    case T_MIN: r.v = x.v < y.v ? x.v : y.v; break;
    case T_MAX: r.v = x.v > y.v ? x.v : y.v; break;
    }
    return r;
}

static sym_expr build(sym_table *t, int i) {
    const tnode *n = &nodes[i];
    if (n->op == T_CONST) return sym_const(t, n->c);
    if (n->op == T_SYM) return sym_var(t, (sym_id)n->c);
    sym_expr a = build(t, n->a), b = n->b >= 0 ? build(t, n->b) : SYM_NONE;
    switch (n->op) {
    case T_ADD: return sym_add(t, a, b);
    case T_SUB: return sym_sub(t, a, b);
    case T_MUL: return sym_mul(t, a, b);
    case T_NEG: return sym_neg(t, a);
    case T_SCALE: return sym_scale(t, a, n->c);
    case T_ADDK: return sym_add_const(t, a, n->c);
    case T_FDIV: return sym_floordiv(t, a, b);
    case T_CDIV: return sym_ceildiv(t, a, b);
    case T_MOD: return sym_mod(t, a, b);
    case T_MIN: return sym_min(t, a, b);
    case T_MAX: return sym_max(t, a, b);
    }
    return SYM_NONE;
}

static bool mentions(int i, int64_t sym) {
    const tnode *n = &nodes[i];
    if (n->op == T_SYM) return n->c == sym;
    if (n->op == T_CONST) return false;
    return mentions(n->a, sym) || (n->b >= 0 && mentions(n->b, sym));
}

static void tree_text(int i, char *buf, size_t cap) {
    const tnode *n = &nodes[i];
    char a[2048] = "", b[2048] = "";
    static const char *nm[] = {"", "", "+", "-", "*", "neg", "scale", "addk", "//", "ceildiv", "%", "min", "max"};
    if (n->op == T_CONST) {
        snprintf(buf, cap, "%" PRId64, n->c);
        return;
    }
    if (n->op == T_SYM) {
        snprintf(buf, cap, "%c", (char)('a' + n->c));
        return;
    }
    tree_text(n->a, a, sizeof a);
    if (n->b >= 0) tree_text(n->b, b, sizeof b);
    if (n->b >= 0) snprintf(buf, cap, "%s(%s, %s)", nm[n->op], a, b);
    else snprintf(buf, cap, "%s(%s, %" PRId64 ")", nm[n->op], a, n->c);
}

/* ---- one table ---- */

typedef struct symdecl {
    int64_t min, max, mult;
} symdecl;

static symdecl decl[3];
static int eq_a[4], eq_b[4], neq;   /* assumed equalities as reference trees (for messages) */
static sym_expr eq_ha[4], eq_hb[4]; /* ... and as the handles the table was given */
static sym_expr ub_h = SYM_NONE;    /* the unbacked symbol's bound (symbol nsym - 1), or SYM_NONE */
static int ub_tree;
static sym_table *cur;
#define MAXB 2048
static int64_t bindings[MAXB][3];
static int nbind;     /* bindings of the declared ranges satisfying the equalities */
static int ndeclared; /* all bindings of the declared ranges */
static int64_t declared[MAXB][3];

static struct {
    long exprs, built_fail, evals, range_checks, proofs_true, proofs_false, proofs_unknown, guards, programs;
    long gstate[4];
} stats;

static void fail_ctx(sym_table *t, sym_expr e, int tree, const int64_t *v) {
    char a[4096], b[1024];
    tree_text(tree, a, sizeof a);
    sym_print(t, e, b, sizeof b);
    fprintf(stderr, "  tree: %s\n  interned: %s\n", a, b);
    for (int q = 0; q < neq; q++) {
        char x[512], y[512];
        tree_text(eq_a[q], x, sizeof x);
        tree_text(eq_b[q], y, sizeof y);
        fprintf(stderr, "  assumed %s == %s\n", x, y);
    }
    for (uint32_t i = 0; i < nsym; i++)
        if (sym_symbol_is_data_dependent(t, i)) fprintf(stderr, "  %c is data-dependent\n", (char)('a' + i));
    if (ub_h != SYM_NONE) {
        char u[1024];
        tree_text(ub_tree, u, sizeof u);
        fprintf(stderr, "  %c is unbacked, bound max(%s, 0)\n", (char)('a' + nsym - 1), u);
    }
    for (uint32_t i = 0; i < nsym; i++)
        fprintf(stderr, "  %c in [%" PRId64 ", %" PRId64 "] mult %" PRId64 "%s", (char)('a' + i), decl[i].min,
                decl[i].max, decl[i].mult, v ? "" : "\n");
    if (v) {
        fprintf(stderr, "\n  at");
        for (uint32_t i = 0; i < nsym; i++) fprintf(stderr, " %c=%" PRId64, (char)('a' + i), v[i]);
        fprintf(stderr, "\n");
    }
}

static void enumerate_bindings(void) {
    int64_t v[3];
    for (uint32_t i = 0; i < nsym; i++) v[i] = decl[i].min;
    nbind = ndeclared = 0;
    for (;;) {
        memcpy(declared[ndeclared++], v, sizeof v);
        bool ok = true;
        /* The table only knows the handles it was given, and a canonical form
         * may evaluate where its source tree fails (b//b is 1): the domain is
         * defined on the handles, as documented. */
        for (int q = 0; q < neq && ok; q++) {
            int64_t x, y;
            ok = !sym_eval(cur, eq_ha[q], v, nsym, &x, NULL) && !sym_eval(cur, eq_hb[q], v, nsym, &y, NULL) && x == y;
        }
        if (ok && ub_h != SYM_NONE) { /* within the bound, where the bound evaluates */
            int64_t b;
            ok = !sym_eval(cur, ub_h, v, nsym, &b, NULL) && v[nsym - 1] <= b;
        }
        if (ok) memcpy(bindings[nbind++], v, sizeof v);
        uint32_t i = 0;
        for (; i < nsym; i++) {
            if (v[i] + decl[i].mult <= decl[i].max) {
                v[i] += decl[i].mult;
                break;
            }
            v[i] = decl[i].min;
        }
        if (i == nsym) return;
    }
}

/* A third symbol c <= max(tree over a and b, 0), when that bound builds and
 * its largest value is small enough to enumerate. */
static void add_unbacked(sym_table *t, bool *data_dep) {
    ub_tree = gen(2); /* over a and b: nsym is still 2 */
    sym_expr b = sym_max(t, build(t, ub_tree), sym_const(t, 0));
    sym_table_clear_error(t);
    int64_t hi = sym_range_of(t, b).hi, na = (decl[0].max - decl[0].min) / decl[0].mult + 1,
            nb = (decl[1].max - decl[1].min) / decl[1].mult + 1;
    if (b == SYM_NONE || hi > 12 || na * nb * (hi + 1) > MAXB) return;
    /* Bounds that evaluate everywhere only, as a producer's do (numel, a dim):
     * a guard's domain follows the bounds of the symbols it mentions, so a
     * bound failing at some binding (a // b at b = 0) would leave out, for
     * sym_check_binding only, bindings of guards that never mention c. */
    for (int64_t x = decl[0].min; x <= decl[0].max; x += decl[0].mult)
        for (int64_t y = decl[1].min; y <= decl[1].max; y += decl[1].mult) {
            int64_t v[2] = {x, y}, r;
            if (sym_eval(t, b, v, 2, &r, NULL)) return;
        }
    sym_id id;
    symc_error err;
    CHECK_MSG(sym_symbol_new_unbacked(t, "c", b, "fuzz producer", &id, &err) == SYMC_OK, "unbacked: %s", err.msg);
    if (id != 2) return;
    sym_symbol_info got;
    sym_symbol_get(t, id, &got);
    decl[2] = (symdecl){got.min, got.max, got.multiple_of};
    nsym = 3;
    ub_h = b;
    *data_dep = true;
}

static sym_table *new_table(bool *data_dep) {
    for (;;) {
        sym_table *t = sym_table_new();
        cur = t;
        neq = 0;
        nsym = 2 + (uint32_t)(rnd() % 2);
        *data_dep = false;
        for (uint32_t i = 0; i < nsym; i++) {
            int kind = (int)(rnd() % 4);
            int64_t lo = kind == 0 ? rint_in(-4, 2) : kind == 1 ? 0 : 1;
            int64_t hi = lo + rint_in(0, 6), m = rnd() % 5 == 0 ? rint_in(2, 3) : 1;
            if (m > 1) hi = lo + rint_in(m, 3 * m);
            if (nsym == 2 && rnd() % 6 == 0) hi = lo + rint_in(8, 40); /* wider: more rules fire */
            char name[2] = {(char)('a' + i), 0};
            sym_symbol_info info = {name, lo, lo, hi, m, "fuzz"};
            symc_error err;
            sym_id id;
            if (sym_symbol_new(t, &info, &id, &err)) { /* no multiple in range: reported, retry */
                CHECK_MSG(err.code == SYMC_ERR_RANGE && strstr(err.msg, name), "%s", err.msg);
                sym_table_free(t);
                t = NULL;
                break;
            }
            sym_symbol_info got;
            sym_symbol_get(t, id, &got);
            decl[i] = (symdecl){got.min, got.max, got.multiple_of};
            if (rnd() % 10 == 0) {
                sym_symbol_set_data_dependent(t, id, 1);
                *data_dep = true;
            }
        }
        if (!t) continue;
        ub_h = SYM_NONE;
        if (nsym == 2 && rnd() % 3 == 0) add_unbacked(t, data_dep);
        neq = 0;
        /* an assumed equality: symbol == symbol or expression (not beside an unbacked
         * symbol: equalities that tie one to a declared symbol are not handled yet) */
        if (ub_h == SYM_NONE && rnd() % 4 == 0) {
            int x = mk(T_SYM, 0, -1, -1);
            int y;
            if (rnd() % 2) {
                y = mk(T_SYM, 1, -1, -1);
            } else { /* expression over the other symbols only */
                int tries = 0;
                do y = gen(2);
                while (mentions(y, 0) && ++tries < 20);
                if (tries >= 20) y = mk(T_ADDK, 1, mk(T_SYM, 1, -1, -1), -1);
            }
            sym_expr ex = build(t, x), ey = build(t, y);
            symc_error err;
            if (ex != SYM_NONE && ey != SYM_NONE) {
                symc_status s = sym_assume_eq(t, ex, ey, &err);
                eq_a[neq] = x;
                eq_b[neq] = y;
                eq_ha[neq] = ex;
                eq_hb[neq] = ey;
                neq++;
                if (s) {
                    /* a reported contradiction must be real: no binding satisfies it */
                    enumerate_bindings();
                    CHECK_MSG(s == SYMC_ERR_CONTRADICTION && nbind == 0, "assume_eq failed (%s) with %d bindings",
                              err.msg, nbind);
                    neq--;
                }
            }
            sym_table_clear_error(t);
        }
        enumerate_bindings();
        return t;
    }
}

static void check_binding_api(sym_table *t) {
    /* check_binding accepts exactly the declared bindings that satisfy the equalities */
    int j = 0;
    for (int i = 0; i < ndeclared; i++) {
        bool in = j < nbind && memcmp(declared[i], bindings[j], sizeof declared[i]) == 0;
        if (in) j++;
        symc_error err;
        symc_status s = sym_check_binding(t, declared[i], nsym, &err);
        CHECK_MSG((s == SYMC_OK) == in, "check_binding says %s for a binding %s the domain", s ? err.msg : "ok",
                  in ? "inside" : "outside");
    }
}

typedef struct item {
    sym_expr e;
    int tree;
} item;

static void values_of(sym_table *t, sym_expr e, int64_t *out, bool *ok) {
    for (int i = 0; i < nbind; i++) ok[i] = sym_eval(t, e, bindings[i], nsym, &out[i], NULL) == SYMC_OK;
}

static void check_tri(sym_table *t, sym_tri p, int holds, int fails, const char *what, sym_expr a, sym_expr b) {
    if (p == SYM_TRUE) stats.proofs_true++;
    else if (p == SYM_FALSE) stats.proofs_false++;
    else stats.proofs_unknown++;
    if ((p == SYM_TRUE && fails) || (p == SYM_FALSE && holds)) {
        char x[512], y[512];
        sym_print(t, a, x, sizeof x);
        sym_print(t, b, y, sizeof y);
        CHECK_MSG(0, "%s(%s, %s) = %s but it %s at some binding", what, x, y, p == SYM_TRUE ? "TRUE" : "FALSE",
                  p == SYM_TRUE ? "fails" : "holds");
        fail_ctx(t, a, 0, NULL);
    }
}

static void check_proofs(sym_table *t, sym_expr a, sym_expr b) {
    static int64_t va[MAXB], vb[MAXB];
    static bool oa[MAXB], ob[MAXB];
    values_of(t, a, va, oa);
    values_of(t, b, vb, ob);
    int h[4] = {0}, f[4] = {0};
    for (int i = 0; i < nbind; i++) {
        if (!oa[i] || !ob[i]) continue;
        bool r[4] = {va[i] == vb[i], va[i] != vb[i], va[i] <= vb[i], va[i] < vb[i]};
        for (int k = 0; k < 4; k++) r[k] ? h[k]++ : f[k]++;
    }
    check_tri(t, sym_prove_eq(t, a, b), h[0], f[0], "prove_eq", a, b);
    check_tri(t, sym_prove_ne(t, a, b), h[1], f[1], "prove_ne", a, b);
    check_tri(t, sym_prove_le(t, a, b), h[2], f[2], "prove_le", a, b);
    check_tri(t, sym_prove_lt(t, a, b), h[3], f[3], "prove_lt", a, b);
    for (int64_t k = 2; k <= 4; k++) {
        int hd = 0, fd = 0;
        for (int i = 0; i < nbind; i++)
            if (oa[i]) (va[i] % k == 0) ? hd++ : fd++;
        check_tri(t, sym_prove_divisible(t, a, k), hd, fd, "prove_divisible", a, sym_const(t, k));
    }
}

static void check_guard(sym_table *t, sym_expr a, sym_expr b, bool data_dep) {
    sym_rel rel = (sym_rel)(rnd() % 6);
    if (rel == SYM_REL_DIVISIBLE) b = sym_const(t, rint_in(1, 4));
    uint32_t idx;
    symc_error err;
    if (sym_guard_add(t, rel, a, b, "fuzz op", &idx, &err)) {
        CHECK_MSG(0, "guard_add: %s", err.msg);
        return;
    }
    int holds = 0, fails = 0;
    for (int i = 0; i < nbind; i++) {
        int h;
        if (sym_guard_eval(t, idx, bindings[i], nsym, &h, NULL)) continue;
        h ? holds++ : fails++;
    }
    sym_guard_state st = sym_guard_classify(t, idx);
    stats.guards++;
    stats.gstate[st]++;
    bool ok;
    if (holds == 0 && fails == 0) st = SYM_GUARD_IMPLIED; /* empty domain: any claim is vacuous */
    switch (st) {
    case SYM_GUARD_IMPLIED: ok = fails == 0; break;
    case SYM_GUARD_FALSE: ok = holds == 0; break;
    case SYM_GUARD_NARROWS: ok = fails > 0 && rel != SYM_REL_BROADCAST; break;
    default: /* small domains are enumerated: RUNTIME means mixed broadcast or data-dependent */
        ok = holds > 0 && fails > 0 && (rel == SYM_REL_BROADCAST || data_dep);
    }
    if (!ok) {
        char x[512], y[512];
        sym_print(t, a, x, sizeof x);
        sym_print(t, b, y, sizeof y);
        CHECK_MSG(0, "guard %d(%s, %s) classified %s with %d holding, %d failing bindings", (int)rel, x, y,
                  sym_guard_state_name(st), holds, fails);
        fail_ctx(t, a, 0, NULL);
    }
    char line[1024];
    size_t n = sym_guard_explain(t, idx, line, sizeof line);
    CHECK(n > 0 && strstr(line, "fuzz op") != NULL);
    if (st == SYM_GUARD_NARROWS) CHECK_MSG(strstr(line, "fix:") || strstr(line, "no multiple"), "%s", line);
}

/* The program decoded into a fresh table (declared ranges, no equalities):
 * at every declared binding where the program evaluates, so do the decoded
 * expressions, to the same values. */
static void check_decode(sym_table *t, const uint8_t *code, size_t size, int n) {
    symc_error err;
    sym_table *d = sym_table_new();
    for (uint32_t i = 0; i < nsym; i++) {
        sym_symbol_info info;
        sym_id id;
        sym_symbol_get(t, i, &info);
        info.min = decl[i].min, info.max = decl[i].max, info.multiple_of = decl[i].mult;
        info.opt = decl[i].min;
        CHECK_MSG(sym_symbol_new(d, &info, &id, &err) == SYMC_OK, "declare: %s", err.msg);
    }
    sym_expr out[64];
    CHECK_MSG(sym_program_decode(d, code, size, out, (uint32_t)n, &err) == SYMC_OK, "decode: %s", err.msg);
    CHECK(sym_program_decode(d, code, size, out, (uint32_t)n - 1, &err) != SYMC_OK); /* too little room */
    for (int b = 0; b < ndeclared; b++) {
        int64_t want[64], got;
        if (sym_program_eval(code, size, declared[b], nsym, want, (uint32_t)n, NULL)) continue;
        for (int i = 0; i < n; i++) {
            symc_status s = sym_eval(d, out[i], declared[b], nsym, &got, &err);
            if (s || got != want[i]) {
                CHECK_MSG(0, "decoded output %d: %s %" PRId64 ", program %" PRId64, i, s ? err.msg : "value", got,
                          want[i]);
                char text[1024];
                sym_print(d, out[i], text, sizeof text);
                fprintf(stderr, "  decoded: %s at", text);
                for (uint32_t k = 0; k < nsym; k++) fprintf(stderr, " %c=%" PRId64, (char)('a' + k), declared[b][k]);
                fprintf(stderr, "\n");
                break;
            }
        }
    }
    sym_table_free(d);
}

static void check_program(sym_table *t, const item *items, int n) {
    sym_expr es[64];
    for (int i = 0; i < n; i++) es[i] = items[i].e;
    uint8_t *code;
    size_t size;
    symc_error err;
    if (sym_program_compile(t, es, (uint32_t)n, &code, &size, &err)) {
        CHECK_MSG(0, "compile: %s", err.msg);
        return;
    }
    uint32_t ps, po;
    CHECK_MSG(sym_program_check(code, size, &ps, &po, &err) == SYMC_OK, "check: %s", err.msg);
    CHECK(ps == nsym && po == (uint32_t)n);
    stats.programs++;
    for (int b = 0; b < ndeclared; b++) {
        int64_t out[64], want;
        symc_status s = sym_program_eval(code, size, declared[b], nsym, out, (uint32_t)n, &err);
        bool all_ok = true;
        for (int i = 0; i < n; i++) {
            symc_status s1 = sym_eval(t, es[i], declared[b], nsym, &want, NULL);
            if (s1) {
                all_ok = false;
                continue;
            }
            if (s == SYMC_OK && out[i] != want) {
                CHECK_MSG(0, "program output %d = %" PRId64 ", sym_eval %" PRId64, i, out[i], want);
                fail_ctx(t, es[i], items[i].tree, declared[b]);
            }
        }
        CHECK_MSG((s == SYMC_OK) == all_ok, "program status %s, sym_eval %s", s ? err.msg : "ok",
                  all_ok ? "all ok" : "some failed");
    }
    check_decode(t, code, size, n);
    free(code);
}

static void one_table(long *budget) {
    bool data_dep;
    sym_table *t = new_table(&data_dep);
    check_binding_api(t);
    item items[24];
    int n = 0;
    int per = 24;
    for (int k = 0; k < per && *budget > 0; k++, (*budget)--) {
        int tree = gen((int)rint_in(1, 5));
        sym_table_clear_error(t);
        sym_expr e = build(t, tree);
        stats.exprs++;
        int nok = 0;
        for (int i = 0; i < nbind; i++) nok += !ref(tree, bindings[i]).bad;
        if (e == SYM_NONE) {
            stats.built_fail++;
            const symc_error *te = sym_table_error(t);
            CHECK_MSG(te && (te->code == SYMC_ERR_DIV_ZERO || te->code == SYMC_ERR_OVERFLOW), "no table error");
            if (te && te->code == SYMC_ERR_DIV_ZERO) {
                /* only if the original fails everywhere in the declared ranges */
                int dok = 0;
                for (int i = 0; i < nbind; i++) dok += !ref(tree, bindings[i]).bad;
                CHECK_MSG(dok == 0, "constructor reported '%s' but the tree evaluates at %d bindings", te->msg, dok);
                if (dok) fail_ctx(t, e, tree, NULL);
            }
            continue;
        }
        sym_range r = sym_range_of(t, e);
        int64_t d = sym_divisor_of(t, e);
        /* simplification may use the assumed equalities: compare on the domain */
        for (int i = 0; i < nbind; i++) {
            rv want = ref(tree, bindings[i]);
            if (want.bad) continue;
            int64_t got;
            symc_error err;
            symc_status s = sym_eval(t, e, bindings[i], nsym, &got, &err);
            stats.evals++;
            if (s != SYMC_OK || got != want.v) {
                CHECK_MSG(0, "eval %s: got %" PRId64 " want %" PRId64, s ? err.msg : "ok", got, want.v);
                fail_ctx(t, e, tree, bindings[i]);
                break;
            }
        }
        /* facts are claims over the domain (declared ranges + equalities) */
        for (int i = 0; i < nbind; i++) {
            int64_t got;
            if (sym_eval(t, e, bindings[i], nsym, &got, NULL)) continue;
            stats.range_checks++;
            bool in = got >= r.lo && got <= r.hi, dv = d == 0 ? got == 0 : got % d == 0;
            if (!in || !dv) {
                CHECK_MSG(0, "value %" PRId64 " vs range [%" PRId64 ", %" PRId64 "] divisor %" PRId64, got, r.lo, r.hi,
                          d);
                fail_ctx(t, e, tree, bindings[i]);
                break;
            }
        }
        (void)nok;
        items[n++] = (item){e, tree};
        /* proofs against an earlier expression, a constant and a symbol */
        if (n > 1) check_proofs(t, e, items[rnd() % (uint64_t)(n - 1)].e);
        check_proofs(t, e, sym_const(t, rint_in(-3, 6)));
        check_proofs(t, sym_var(t, (sym_id)(rnd() % nsym)), e);
        check_guard(t, e, n > 1 ? items[rnd() % (uint64_t)(n - 1)].e : sym_const(t, rint_in(0, 4)), data_dep);
        check_guard(t, e, sym_const(t, rint_in(-1, 5)), data_dep);
    }
    if (n) check_program(t, items, n);
    sym_table_free(t);
}

#ifndef FUZZ_DEFAULT_ITERS
#define FUZZ_DEFAULT_ITERS 4000
#define FUZZ_DEFAULT_SEED 20240601
#endif

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : FUZZ_DEFAULT_ITERS;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : FUZZ_DEFAULT_SEED;
    if (seed == 0) seed = (uint64_t)time(NULL) ^ (uint64_t)clock();
    printf("test_fuzz: %ld expressions, seed %" PRIu64 "\n", iters, seed);
    rng_state = seed;
    long budget = iters;
    while (budget > 0 && check_failures < 20) one_table(&budget);
    printf("  built %ld (%ld constructor errors), %ld evaluations, %ld range/divisor checks\n", stats.exprs,
           stats.built_fail, stats.evals, stats.range_checks);
    printf("  proofs: %ld TRUE, %ld FALSE, %ld UNKNOWN; %ld programs\n", stats.proofs_true, stats.proofs_false,
           stats.proofs_unknown, stats.programs);
    printf("  guards: %ld (implied %ld, runtime %ld, narrows %ld, false %ld)\n", stats.guards, stats.gstate[0],
           stats.gstate[1], stats.gstate[2], stats.gstate[3]);
    return check_report("test_fuzz");
}
