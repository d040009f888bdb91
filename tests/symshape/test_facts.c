/* Table tests of facts: ranges, divisors, three-valued proofs and assumed
 * equalities (union-find merging, narrowing, contradictions). */
#include "test.h"

typedef struct range_row {
    const char *spec, *e;
    int64_t lo, hi, div;
} range_row;

static const range_row ranges[] = {
    {"B:1..32", "B*197", 197, 6304, 197},
    {"H:1..224", "(H-1)//2+1", 1, 112, 1},
    {"S:8..64:8", "S", 8, 64, 8},
    {"S:8..64:8", "S*3+4", 28, 196, 4},
    {"B:1..32", "B%8", 0, 7, 1},
    {"B:-5..5", "B%3", 0, 2, 1},
    {"B:-5..5", "B%-3", -2, 0, 1},
    {"B:-5..5", "B//2", -3, 2, 1},
    {"B:-5..5", "B//-2", -3, 2, 1},
    {"B:1..32 N:1..64", "min(B, N)", 1, 32, 1},
    {"B:1..32 N:1..64", "max(B, N)", 1, 64, 1},
    {"B:-3..3", "B*B", 0, 9, 1},
    {"B:-3..3 N:-2..4", "B*N", -12, 12, 1},
    {"B:1..32", "B-B", 0, 0, 0},
    {"B:1..32", "B - B//2", 1, 16, 1}, /* x and x//2 move together */
    {"H:1..224", "H-1-(H-1)//2", 0, 112, 1},
    {"B:1..32 N:2..8", "B//N", 0, 16, 1},
    {"B:1..32 N:-8..8", "B//N", -32, 32, 1},
    {"S:8..64:8 B:1..4", "S*B", 8, 256, 8},
    {"S:8..64:8", "S//4", 2, 16, 2},
    {"S:8..64:8 T:4..12:4", "S%T", 0, 8, 4},
};

typedef struct prove_row {
    const char *spec, *a, *b;
    char eq, le, lt; /* T, F or U */
} prove_row;

static const prove_row proofs[] = {
    {"B:1..32", "B", "B", 'T', 'T', 'F'},
    {"B:1..32", "B", "B+1", 'F', 'T', 'T'},
    {"B:1..32 N:1..64", "B", "N", 'U', 'U', 'U'},
    {"B:1..32 N:40..64", "B", "N", 'F', 'T', 'T'},
    {"B:1..32 N:1..64", "B*2", "N*2+1", 'F', 'U', 'U'},
    {"S:8..64:8", "S", "12", 'F', 'U', 'U'},
    {"S:8..64:8", "S", "16", 'U', 'U', 'U'},
    {"B:1..32", "B//2", "B", 'F', 'T', 'T'},
    {"H:1..224", "(H-1)//2+1", "H", 'U', 'T', 'U'},
    {"B:1..32", "B%8", "8", 'F', 'T', 'T'},
    {"B:1..32", "B*B", "B", 'U', 'U', 'U'},
    {"B:1..32", "(B+1)*(B+1)", "B*B+B*2+1", 'T', 'T', 'F'},
    {"B:1..32 N:1..64", "min(B, N)", "N", 'U', 'T', 'U'},
    {"B:1..32", "100", "B", 'F', 'F', 'F'},
};

typedef struct div_row {
    const char *spec, *e;
    int64_t k;
    char want;
} div_row;

static const div_row divs[] = {
    {"S:8..64:8", "S", 8, 'T'},   {"S:8..64:8", "S", 4, 'T'},   {"S:8..64:8", "S", 16, 'U'},
    {"S:8..64:8", "S+4", 8, 'F'}, {"B:1..32", "B*6+3", 3, 'T'}, {"B:1..32", "B*6+3", 2, 'F'},
    {"B:1..32", "B", 2, 'U'},     {"B:1..7", "B", 8, 'F'},      {"B:1..32", "B*197*4", 4, 'T'},
    {"B:1..32", "B", 1, 'T'},     {"B:8..15", "B", 16, 'F'},
};

static char tri(sym_tri x) { return x == SYM_TRUE ? 'T' : x == SYM_FALSE ? 'F' : 'U'; }

static void test_equalities(void) {
    symc_error err;
    /* symbol == symbol: the surviving range is the intersection */
    sym_table *t = test_table("B:1..32 N:16..64 M:40..64");
    sym_expr B = test_parse(t, "B"), N = test_parse(t, "N"), M = test_parse(t, "M");
    CHECK(sym_prove_eq(t, B, N) == SYM_UNKNOWN);
    CHECK(sym_assume_eq(t, B, N, &err) == SYMC_OK);
    sym_symbol_info i;
    sym_symbol_get(t, 0, &i);
    CHECK(i.min == 16 && i.max == 32);
    sym_symbol_get(t, 1, &i);
    CHECK(i.min == 16 && i.max == 32);
    CHECK(sym_prove_eq(t, B, N) == SYM_TRUE);
    CHECK(sym_prove_eq(t, sym_mul(t, B, sym_const(t, 2)), sym_add(t, N, B)) == SYM_TRUE);
    CHECK(sym_prove_le(t, N, sym_const(t, 32)) == SYM_TRUE);
    /* a contradiction is reported with both symbols and ranges; nothing changes */
    symc_status s = sym_assume_eq(t, B, M, &err);
    CHECK(s == SYMC_ERR_CONTRADICTION);
    CHECK_MSG(strstr(err.msg, "B in [16, 32]") && strstr(err.msg, "M in [40, 64]"), "%s", err.msg);
    sym_symbol_get(t, 2, &i);
    CHECK(i.min == 40 && i.max == 64);
    /* binding checks see the equality */
    int64_t v[3] = {20, 21, 50};
    CHECK(sym_check_binding(t, v, 3, &err) == SYMC_ERR_RANGE && strstr(err.msg, "equality"));
    v[1] = 20;
    CHECK(sym_check_binding(t, v, 3, &err) == SYMC_OK);
    sym_table_free(t);

    /* symbol == expression: proofs see through it */
    t = test_table("B:1..32 N:1..1000 H:1..64");
    B = test_parse(t, "B");
    N = test_parse(t, "N");
    sym_expr H = test_parse(t, "H");
    CHECK(sym_assume_eq(t, N, test_parse(t, "B*4"), &err) == SYMC_OK);
    sym_symbol_get(t, 1, &i);
    CHECK(i.min == 4 && i.max == 128 && i.multiple_of == 4);
    CHECK(sym_prove_eq(t, N, test_parse(t, "B*4")) == SYM_TRUE);
    CHECK(sym_prove_divisible(t, N, 4) == SYM_TRUE);
    CHECK(sym_prove_eq(t, test_parse(t, "N//4"), B) == SYM_TRUE);
    CHECK(sym_prove_le(t, B, N) == SYM_TRUE);
    /* disjoint multiples are a contradiction */
    s = sym_assume_eq(t, N, test_parse(t, "B*4+2"), &err);
    CHECK(s == SYMC_ERR_CONTRADICTION);
    /* an equality between two general expressions is kept as a fact */
    CHECK(sym_assume_eq(t, test_parse(t, "H*H"), test_parse(t, "B+7"), &err) == SYMC_OK);
    CHECK(sym_prove_eq(t, test_parse(t, "B+7"), test_parse(t, "H*H")) == SYM_TRUE);
    (void)H;
    /* multiples merge by lcm; no common multiple in range is a contradiction */
    sym_table_free(t);
    t = test_table("X:2..10:2 Y:3..9:3 Z:3..3");
    CHECK(sym_assume_eq(t, test_parse(t, "X"), test_parse(t, "Y"), &err) == SYMC_OK);
    sym_symbol_get(t, 0, &i);
    CHECK(i.min == 6 && i.max == 6 && i.multiple_of == 6);
    s = sym_assume_eq(t, test_parse(t, "X"), test_parse(t, "Z"), &err);
    CHECK_MSG(s == SYMC_ERR_CONTRADICTION && strstr(err.msg, "X"), "%s", err.msg);
    sym_table_free(t);
}

int main(void) {
    for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
        const range_row *r = &ranges[i];
        sym_table *t = test_table(r->spec);
        sym_expr e = test_parse(t, r->e);
        sym_range g = sym_range_of(t, e);
        int64_t d = sym_divisor_of(t, e);
        CHECK_MSG(g.lo == r->lo && g.hi == r->hi && d == r->div,
                  "%s: [%lld, %lld] div %lld, want [%lld, %lld] div %lld", r->e, (long long)g.lo, (long long)g.hi,
                  (long long)d, (long long)r->lo, (long long)r->hi, (long long)r->div);
        sym_table_free(t);
    }
    for (size_t i = 0; i < sizeof proofs / sizeof proofs[0]; i++) {
        const prove_row *r = &proofs[i];
        sym_table *t = test_table(r->spec);
        sym_expr a = test_parse(t, r->a), b = test_parse(t, r->b);
        char eq = tri(sym_prove_eq(t, a, b)), ne = tri(sym_prove_ne(t, a, b)), le = tri(sym_prove_le(t, a, b)),
             lt = tri(sym_prove_lt(t, a, b));
        char want_ne = r->eq == 'T' ? 'F' : r->eq == 'F' ? 'T' : 'U';
        CHECK_MSG(eq == r->eq && ne == want_ne && le == r->le && lt == r->lt,
                  "%s vs %s: eq %c le %c lt %c, want %c %c %c", r->a, r->b, eq, le, lt, r->eq, r->le, r->lt);
        sym_table_free(t);
    }
    for (size_t i = 0; i < sizeof divs / sizeof divs[0]; i++) {
        const div_row *r = &divs[i];
        sym_table *t = test_table(r->spec);
        char got = tri(sym_prove_divisible(t, test_parse(t, r->e), r->k));
        CHECK_MSG(got == r->want, "%s divisible by %lld: %c, want %c", r->e, (long long)r->k, got, r->want);
        sym_table_free(t);
    }
    /* unbounded symbols: bounds saturate at the int64 limits */
    {
        sym_table *t = sym_table_new();
        sym_symbol_info x = {"X", 0, 5, SYM_POS_INF, 1, "unbounded"};
        sym_symbol_info y = {"Y", SYM_NEG_INF, 0, SYM_POS_INF, 1, ""};
        symc_error err;
        sym_id ix = 0, iy = 0;
        CHECK(sym_symbol_new(t, &x, &ix, &err) == SYMC_OK && sym_symbol_new(t, &y, &iy, &err) == SYMC_OK);
        sym_expr X = sym_var(t, ix), Y = sym_var(t, iy);
        sym_range r = sym_range_of(t, sym_scale(t, X, 2));
        CHECK(r.lo == 0 && r.hi == SYM_POS_INF);
        r = sym_range_of(t, sym_add(t, X, Y));
        CHECK(r.lo == SYM_NEG_INF && r.hi == SYM_POS_INF);
        r = sym_range_of(t, sym_neg(t, X));
        CHECK(r.lo == -INT64_MAX && r.hi == 0);
        r = sym_range_of(t, sym_mod(t, Y, sym_const(t, 7)));
        CHECK(r.lo == 0 && r.hi == 6);
        CHECK(sym_prove_le(t, sym_const(t, 0), X) == SYM_TRUE);
        CHECK(sym_prove_le(t, X, sym_const(t, INT64_MAX)) == SYM_TRUE);
        CHECK(sym_prove_le(t, Y, X) == SYM_UNKNOWN);
        sym_table_free(t);
    }
    test_equalities();
    return check_report("test_facts");
}
