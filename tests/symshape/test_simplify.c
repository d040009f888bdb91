/* Table tests of the canonical form: one row per simplification rule, with
 * the symbol ranges that enable it and the exact printed result. Every row
 * also checks the printer/parser round trip (parse(print(e)) is the same
 * handle) and, by brute force over the declared ranges, that the simplified
 * expression evaluates like the input read by a separate naive evaluator
 * (Python semantics) when that input evaluates. */
#include "test.h"

#include <ctype.h>

typedef struct row {
    const char *spec, *in, *want;
} row;

static const row rows[] = {
    /* constants folded */
    {"", "2+3*4", "14"},
    {"", "7//2", "3"},
    {"", "-7//2", "-4"},
    {"", "7%-3", "-2"},
    {"", "-7%3", "2"},
    {"", "min(3, 5)", "3"},
    {"", "max(3, -5)", "3"},
    /* sums sorted and merged; identities */
    {"B:1..32 N:1..64", "N+B+B", "(B*2+N)"},
    {"B:1..32 N:1..64", "B+N-B", "N"},
    {"B:1..32", "B+0", "B"},
    {"B:1..32", "B*1", "B"},
    {"B:1..32", "B*0", "0"},
    {"B:1..32", "B-B", "0"},
    {"B:1..32", "197*B", "(B*197)"},
    {"B:1..32", "B*197", "(B*197)"},
    {"B:1..32", "2*(B+3)", "(B*2+6)"},
    {"B:1..32", "-(B-3)", "(-B+3)"},
    {"B:1..32", "-B*3", "(-B*3)"},
    {"B:1..32 N:1..64", "(B+1)*(N+2)", "(B*2+N+B*N+2)"},
    {"B:1..32 N:1..64", "B*N-N*B", "0"},
    {"B:1..32", "B*B", "(B*B)"},
    /* x//1, x%1, (a*k)//k, (a*k)%k */
    {"B:1..32", "B//1", "B"},
    {"B:1..32", "B%1", "0"},
    {"B:1..32", "(B*8)//8", "B"},
    {"B:1..32", "(B*8)%8", "0"},
    {"B:1..32", "B*197//197", "B"},
    {"B:1..32 N:1..64", "(B*N)//N", "B"},
    {"B:1..32 N:1..64", "(B*N+N)//N", "(B+1)"},
    {"B:1..32 N:1..64", "(B*N+3)%N", "3%N"},
    {"B:1..32 N:1..64", "(B*N*6)//(N*3)", "(B*2)"},
    /* floordiv / mod of sums by a common divisor */
    {"B:1..32", "(B*4+8)//4", "(B+2)"},
    {"B:1..32", "(B*4+2)//8", "(B*2+1)//4"},
    {"B:1..32", "(B*4+2)%8", "((B*2+1)%4*2)"},
    {"B:1..32", "(B*6+5)%3", "2"},
    {"B:1..32", "(B*6+5)//3", "(B*2+1)"},
    {"B:1..32", "(B*9+1)%8", "(B+1)%8"},
    /* multiples pulled out of a floordiv; constants reduced toward zero */
    {"B:1..32 N:1..64", "(B*8+N)//8", "(B+N//8)"},
    {"B:1..32", "(B+17)//8", "((B+1)//8+2)"},
    {"H:1..224", "(H-1)//2+1", "((H-1)//2+1)"},
    {"H:1..224", "(H+2-3)//2+1", "((H-1)//2+1)"},
    {"S:8..64:8", "(S+7)//8", "S//8"},
    {"S:8..64:8", "S%8", "0"},
    {"S:8..64:8", "(S*3)//8", "(S//8*3)"},
    {"S:8..64:8 B:1..32", "(S*B)%8", "0"},
    /* negative divisors normalized */
    {"B:1..32", "B//-2", "(-B)//2"},
    {"B:1..32", "B%-2", "(-((-B)%2))"},
    /* nested floordiv / mod */
    {"B:1..32", "B//2//3", "B//6"},
    {"B:1..1000", "(B%8)%4", "B%4"},
    {"B:1..32 N:1..64", "B//2//N", "B//(N*2)"},
    /* a sum divisor that divides the dividend exactly: the quotient is a constant or one term (wav2vec2's
     * attention reshape: 32*B*L // (8*B*L) with L = T//20 - 1 the length after three strided convs, then the
     * element count over the other dims again) */
    {"B:1..3 T:400..800", "(32*B*(T//20-1))//(8*B*(T//20-1))", "4"},
    {"B:1..3 T:400..800", "(32*B*(T//20-1))%(8*B*(T//20-1))", "0"},
    {"B:1..3 T:400..800", "(8*B*(T//20-1)*((32*B*(T//20-1))//(8*B*(T//20-1))))//(8*B*(T//20-1))", "4"},
    {"B:1..32 N:1..64", "(B*N+B*N*N)//(N+N*N)", "B"},
    {"B:1..32 N:1..64", "(B*N+B*N*N)%(N+N*N)", "0"},
    {"B:1..32 N:1..64", "(B*N*3+B*3-N*6-6)//(N+1)", "(B*3-6)"},
    {"B:1..32 N:1..64", "(B*N+B*N*N)//(B+B*N)", "N"},
    {"B:1..32 N:1..64", "((B+N+2)*(B*N+3))//(B*N+3)", "(B+N+2)"},
    {"B:1..32 N:1..64", "((B-N)*(N+B*2))//(N+B*2)", "(B-N)"},
    /* not exact (a remainder, or a coefficient that does not divide): kept */
    {"B:1..32 N:1..64", "(B*N+B*N*N+1)//(N+N*N)", "(B*N+B*N*N+1)//(N+N*N)"},
    {"B:1..32", "(B*3+3)//(B*2+2)", "(B*3+3)//(B*2+2)"},
    /* ranges decide */
    {"B:1..32", "B//64", "0"},
    {"B:1..32", "B%64", "B"},
    {"B:32..63", "B//32", "1"},
    {"B:32..63", "B%32", "(B-32)"},
    {"B:0..7 N:8..16", "B//N", "0"},
    {"B:0..7 N:8..16", "B%N", "B"},
    /* min / max with provable order, absorption, canonical operand order */
    {"B:1..32", "min(B, B+1)", "B"},
    {"B:1..32", "max(B, B+1)", "(B+1)"},
    {"B:1..32", "max(B, 0)", "B"},
    {"B:1..32", "min(B, 64)", "B"},
    {"B:0..8", "max(B, 1)", "max(1, B)"},
    {"B:1..32 N:1..64", "min(N, B)", "min(B, N)"},
    {"B:1..32 N:1..64", "min(B, max(B, N))", "B"},
    {"B:1..32 N:1..64", "max(B, max(B, N))", "max(B, N)"},
    {"B:1..32 N:40..64", "min(B, N)", "B"},
    {"B:1..32", "max(B*2, B)", "(B*2)"},
};

/* ---- naive reference: Python integer semantics on the text itself ---- */

typedef struct ref {
    const char *p;
    const sym_table *t;
    const int64_t *v;
    int bad; /* division by zero or overflow */
} ref;

static int64_t r_expr(ref *r);

static void r_skip(ref *r) {
    while (*r->p == ' ') r->p++;
}

static int64_t r_fdiv(ref *r, int64_t a, int64_t b) {
    if (b == 0 || (a == INT64_MIN && b == -1)) {
        r->bad = 1;
        return 0;
    }
    int64_t q = a / b;
    if (a % b && ((a < 0) != (b < 0))) q--;
    return q;
}

static int64_t r_atom(ref *r) {
    r_skip(r);
    if (*r->p == '-') {
        r->p++;
        int64_t x = r_atom(r), y;
        if (__builtin_sub_overflow(0, x, &y)) r->bad = 1;
        return y;
    }
    if (*r->p == '(') {
        r->p++;
        int64_t x = r_expr(r);
        r_skip(r);
        r->p++; /* ')' */
        return x;
    }
    if (isdigit((unsigned char)*r->p)) {
        int64_t x = 0;
        while (isdigit((unsigned char)*r->p)) x = x * 10 + (*r->p++ - '0');
        return x;
    }
    char name[64];
    int n = 0;
    while (isalnum((unsigned char)*r->p) || *r->p == '_') name[n++] = *r->p++;
    name[n] = 0;
    r_skip(r);
    if ((!strcmp(name, "min") || !strcmp(name, "max")) && *r->p == '(') {
        r->p++;
        int64_t a = r_expr(r);
        r_skip(r);
        r->p++; /* ',' */
        int64_t b = r_expr(r);
        r_skip(r);
        r->p++; /* ')' */
        return !strcmp(name, "min") ? (a < b ? a : b) : (a > b ? a : b);
    }
    sym_id id;
    if (!sym_symbol_find(r->t, name, &id)) {
        r->bad = 1;
        return 0;
    }
    return r->v[id];
}

static int64_t r_term(ref *r) {
    int64_t a = r_atom(r);
    for (;;) {
        r_skip(r);
        if (*r->p == '*') {
            r->p++;
            int64_t b = r_atom(r);
            if (__builtin_mul_overflow(a, b, &a)) r->bad = 1;
        } else if (r->p[0] == '/' && r->p[1] == '/') {
            r->p += 2;
            a = r_fdiv(r, a, r_atom(r));
        } else if (*r->p == '%') {
            r->p++;
            int64_t b = r_atom(r);
            if (b == 0) {
                r->bad = 1;
            } else {
                int64_t q = r_fdiv(r, a, b), qb;
                if (__builtin_mul_overflow(q, b, &qb) || __builtin_sub_overflow(a, qb, &a)) r->bad = 1;
            }
        } else {
            return a;
        }
    }
}

static int64_t r_expr(ref *r) {
    int64_t a = r_term(r);
    for (;;) {
        r_skip(r);
        char c = *r->p;
        if (c != '+' && c != '-') return a;
        r->p++;
        int64_t b = r_term(r);
        if (c == '+' ? __builtin_add_overflow(a, b, &a) : __builtin_sub_overflow(a, b, &a)) r->bad = 1;
    }
}

static void brute(sym_table *t, const char *in, sym_expr e) {
    uint32_t n = sym_symbol_count(t);
    int64_t v[8] = {0};
    sym_symbol_info info[8];
    for (uint32_t i = 0; i < n; i++) {
        sym_symbol_get(t, i, &info[i]);
        v[i] = info[i].min;
    }
    for (long iter = 0; iter < 200000; iter++) {
        ref r = {in, t, v, 0};
        int64_t want = r_expr(&r), got;
        if (!r.bad) {
            symc_error err;
            symc_status s = sym_eval(t, e, v, n, &got, &err);
            CHECK_MSG(s == SYMC_OK && got == want, "%s at B0=%lld: got %lld want %lld (%s)", in, (long long)v[0],
                      (long long)got, (long long)want, s ? err.msg : "ok");
        }
        uint32_t i = 0;
        for (; i < n; i++) {
            if (v[i] + info[i].multiple_of <= info[i].max) {
                v[i] += info[i].multiple_of;
                break;
            }
            v[i] = info[i].min;
        }
        if (i == n) break;
    }
}

int main(void) {
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        sym_table *t = test_table(rows[i].spec);
        sym_expr e = test_parse(t, rows[i].in);
        CHECK_MSG(e != SYM_NONE, "row %zu: %s", i, rows[i].in);
        if (e != SYM_NONE) {
            const char *got = test_print(t, e);
            CHECK_MSG(strcmp(got, rows[i].want) == 0, "row %zu: %s -> %s, want %s", i, rows[i].in, got, rows[i].want);
            sym_expr back = test_parse(t, got);
            CHECK_MSG(back == e, "row %zu: round trip of %s gave %s", i, got, test_print(t, back));
            brute(t, rows[i].in, e);
        }
        sym_table_free(t);
    }

    /* exact division by a sum, randomized: a = q*b for random small polynomials q and b (b > 0 over the
     * ranges); a // b must fold to q's handle, a % b to 0, and (a + r) // b (not a multiple) must still
     * evaluate to floor((a + r) / b) at every binding, brute force over the whole range */
    {
        sym_table *t = test_table("B:1..6 N:1..7 T:40..60");
        const char *atoms[] = {"B", "N", "T//20", "B*N", "N*N", "(T//20)*B", "7", "-3", "-B", "N-2"};
        const char *bsrc[] = {"N+1", "B*N+3", "2*B+N", "B*(T//20-1)*8", "N*N+B", "B+(T//20)", "3*N+6"};
        uint32_t seed = 12345;
        for (int it = 0; it < 120; it++) {
            char qs[128];
            int nq = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3;
            qs[0] = 0;
            for (int k = 0; k < nq; k++) {
                seed = seed * 1103515245u + 12345u;
                strcat(qs, k ? "+" : "");
                strcat(qs, "(");
                strcat(qs, atoms[(seed >> 16) % (sizeof atoms / sizeof *atoms)]);
                strcat(qs, ")");
            }
            seed = seed * 1103515245u + 12345u;
            const char *bs = bsrc[(seed >> 16) % (sizeof bsrc / sizeof *bsrc)];
            int r = (int)((seed >> 8) % 5) - 2;
            sym_expr q = test_parse(t, qs), b = test_parse(t, bs), a = sym_mul(t, q, b);
            sym_expr d = sym_floordiv(t, a, b), m = sym_mod(t, a, b);
            int64_t mv;
            CHECK_MSG(d == q, "(%s)*(%s) // (%s) gave %s", qs, bs, bs, test_print(t, d));
            CHECK_MSG(sym_is_const(t, m, &mv) && mv == 0, "(%s)*(%s) %% (%s) gave %s", qs, bs, bs, test_print(t, m));
            sym_expr ar = sym_add_const(t, a, r), dr = sym_floordiv(t, ar, b), mr = sym_mod(t, ar, b);
            int64_t v[3];
            for (v[0] = 1; v[0] <= 6; v[0]++)
                for (v[1] = 1; v[1] <= 7; v[1]++)
                    for (v[2] = 40; v[2] <= 60; v[2]++) {
                        int64_t av, bv, gd, gm, qv;
                        symc_error err;
                        if (sym_eval(t, ar, v, 3, &av, &err) || sym_eval(t, b, v, 3, &bv, &err) || bv <= 0 ||
                            sym_eval(t, dr, v, 3, &gd, &err) || sym_eval(t, mr, v, 3, &gm, &err) ||
                            sym_eval(t, d, v, 3, &qv, &err)) {
                            CHECK_MSG(0, "(%s)*(%s)+%d: evaluation failed", qs, bs, r);
                            continue;
                        }
                        int64_t fq = av / bv - ((av % bv) != 0 && av < 0), fm = av - fq * bv;
                        CHECK_MSG(gd == fq && gm == fm,
                                  "(%s)*(%s)+%d at B=%lld N=%lld T=%lld: // %lld %% %lld, want %lld %lld", qs, bs, r,
                                  (long long)v[0], (long long)v[1], (long long)v[2], (long long)gd, (long long)gm,
                                  (long long)fq, (long long)fm);
                        CHECK(r != 0 || qv == fq);
                    }
        }
        sym_table_free(t);
    }

    /* ceildiv, built from floordiv of a sum */
    {
        sym_table *t = test_table("B:1..32 S:8..64:8");
        sym_expr B = test_parse(t, "B"), S = test_parse(t, "S"), k8 = sym_const(t, 8);
        CHECK(strcmp(test_print(t, sym_ceildiv(t, B, k8)), "(B+7)//8") == 0);
        CHECK(sym_ceildiv(t, S, k8) == test_parse(t, "S//8"));
        CHECK_MSG(strcmp(test_print(t, sym_ceildiv(t, B, S)), "((B-1)//S+1)") == 0, "%s",
                  test_print(t, sym_ceildiv(t, B, S)));
        CHECK(sym_ceildiv(t, sym_scale(t, S, 3), k8) == test_parse(t, "S//8*3"));
        /* equal expressions built in different orders share a handle */
        CHECK(test_parse(t, "(B+1)*S") == test_parse(t, "S+S*B"));
        CHECK(test_parse(t, "min(B, S)") == sym_min(t, S, B));
        CHECK(sym_mul(t, sym_add(t, B, S), sym_const(t, 2)) == test_parse(t, "B*2+2*S"));
        /* sym_make rebuilds canonical forms from parts */
        sym_expr ops[2] = {B, B};
        int64_t ks[2] = {3, -1};
        CHECK(sym_make(t, SYM_ADD, 1, 2, ops, ks) == test_parse(t, "B*2+1"));
        CHECK(sym_make(t, SYM_MUL, 4, 2, ops, NULL) == test_parse(t, "B*B*4"));
        CHECK(sym_make(t, SYM_FLOORDIV, 0, 2, (sym_expr[]){B, k8}, NULL) == test_parse(t, "B//8"));
        sym_view v;
        CHECK(sym_expr_view(t, test_parse(t, "(B*197)"), &v) && v.kind == SYM_MUL && v.value == 197 && v.n == 1);
        CHECK(sym_expr_view(t, test_parse(t, "B+S*2+3"), &v) && v.kind == SYM_ADD && v.value == 3 && v.n == 2 &&
              v.coefs && v.coefs[1] == 2);
        int64_t c;
        CHECK(sym_is_const(t, test_parse(t, "(B*8)%8"), &c) && c == 0);
        /* printing into small buffers: snprintf semantics */
        char small[6];
        size_t need = sym_print(t, test_parse(t, "B*197"), small, sizeof small);
        CHECK(need == 7 && strcmp(small, "(B*19") == 0);
        CHECK(sym_print(t, test_parse(t, "B*197"), NULL, 0) == 7);
        sym_table_free(t);
    }
    return check_report("test_simplify");
}
