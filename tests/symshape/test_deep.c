/* Deep shared DAGs must cost time linear in their distinct nodes (issue 13).
 *
 * Shape inference builds a CNN's spatial sizes stage by stage, each stage a
 * window formula of the previous size, and several stage kinds mention the
 * previous size more than once (a ceil-mode window is a min of two forms of
 * it, a residual-style x + x//2, a max or min of two divisions of it). The
 * hash-consed expression of stage 40 is then a DAG of a few hundred nodes
 * whose tree has ~2^35 paths: anything that walks it as a tree (evaluation,
 * printing, collecting symbols) never finishes. This test builds two such
 * chains (H and W) the way sym_window_out does and checks that evaluation
 * (sym_eval and the compiled program) matches a direct integer computation
 * of the same recurrence at several bindings, that printing is bounded, and
 * that ranges, proofs, guards, an assumed equality and program decoding all
 * answer, everything within a time budget.
 *
 * `symshape_test_deep PHASE` runs the build plus one phase (build, eval,
 * program, range, prove, print, guard, assume, decode) so a regression
 * shows which walk went exponential. */
#include "test.h"

#include <time.h>

#define STAGES 40
#define HMAX (1 << 20)

/* Sanitizer builds run several times slower; the budget is about
 * exponential blow-up, not about microseconds. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
#define BUDGET_MS 2000.0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define BUDGET_MS 2000.0
#endif
#endif
#ifndef BUDGET_MS
#define BUDGET_MS 200.0
#endif

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int64_t fdiv(int64_t a, int64_t b) { /* Python floor division, b > 0 */
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}
static int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t imax(int64_t a, int64_t b) { return a > b ? a : b; }

/* Window output size as PyTorch defines it (the reference the symbolic
 * sym_window_out must match): floor, or ceil with the last window dropped
 * when it would start in the right padding. */
static int64_t window(int64_t x, int64_t k, int64_t s, int64_t p, int ceil_mode) {
    int64_t num = x + 2 * p - k;
    if (!ceil_mode) return fdiv(num, s) + 1;
    int64_t o = -fdiv(-num, s) + 1;
    if ((o - 1) * s >= x + p) o--;
    return o;
}

/* Stage i of the recurrence, on plain integers. Two stride-2 windows and
 * three stages that grow by about 3/2 per cycle keep the sizes from
 * collapsing to constants over 40 stages, and keep the ceil-mode pool's
 * input >= 2 so every window is valid. */
static int64_t stage_val(int64_t x, int i) {
    switch (i % 5) {
    case 0: return window(x, 3, 2, 1, 0);                /* conv k3 s2 p1 */
    case 1: return x + fdiv(x + 1, 2);                   /* x reused in a sum */
    case 2: return window(x, 3, 2, 0, 1);                /* ceil-mode pool k3 s2: min of two forms of x */
    case 3: return imax(fdiv(x, 2), fdiv(x + 3, 3)) + x; /* x reused three times, under a max */
    default: return imin(2 * x, x + fdiv(x + 1, 2) + 3); /* x reused under a min */
    }
}

/* The same stage built symbolically, window stages through sym_window_out
 * (which also records its ">= 1" guards). */
static sym_expr stage_sym(sym_table *t, sym_expr x, int i) {
    sym_expr r = SYM_NONE;
    symc_error err;
    sym_expr two = sym_const(t, 2), three = sym_const(t, 3);
    switch (i % 5) {
    case 0:
        if (sym_window_out(t, x, 3, 2, 1, 1, 1, 0, "conv", &r, &err)) fprintf(stderr, "stage %d: %s\n", i, err.msg);
        return r;
    case 1: return sym_add(t, x, sym_floordiv(t, sym_add_const(t, x, 1), two));
    case 2:
        if (sym_window_out(t, x, 3, 2, 0, 0, 1, 1, "pool", &r, &err)) fprintf(stderr, "stage %d: %s\n", i, err.msg);
        return r;
    case 3: return sym_add(t, sym_max(t, sym_floordiv(t, x, two), sym_floordiv(t, sym_add_const(t, x, 3), three)), x);
    default:
        return sym_min(t, sym_scale(t, x, 2),
                       sym_add(t, x, sym_add_const(t, sym_floordiv(t, sym_add_const(t, x, 1), two), 3)));
    }
}

typedef struct deep {
    sym_table *t;
    sym_id B, H, W;
    sym_expr h[STAGES + 1], w[STAGES + 1];
    sym_expr numel; /* B*24*h[STAGES]*w[STAGES] */
} deep;

static void build(deep *d) {
    d->t = test_table("B:1..64@8 H:1..1048576@224 W:1..1048576@320");
    CHECK(sym_symbol_find(d->t, "B", &d->B) && sym_symbol_find(d->t, "H", &d->H) && sym_symbol_find(d->t, "W", &d->W));
    d->h[0] = sym_var(d->t, d->H);
    d->w[0] = sym_var(d->t, d->W);
    for (int i = 0; i < STAGES; i++) {
        d->h[i + 1] = stage_sym(d->t, d->h[i], i);
        d->w[i + 1] = stage_sym(d->t, d->w[i], i);
        CHECK_MSG(d->h[i + 1] != SYM_NONE && d->w[i + 1] != SYM_NONE, "stage %d", i);
    }
    d->numel = sym_mul(d->t, sym_scale(d->t, sym_var(d->t, d->B), 24), sym_mul(d->t, d->h[STAGES], d->w[STAGES]));
    CHECK(d->numel != SYM_NONE && !sym_table_error(d->t));
}

/* Bindings that exercise the small fixed points and the large end. */
static const int64_t binds[][3] = {{1, 1, 1},          {2, 2, 3},        {3, 7, 5},       {8, 224, 320},
                                   {5, 161, 317},      {64, HMAX, HMAX}, {17, 999, 1000}, {1, 4096, 3},
                                   {33, 65535, 65537}, {64, 12345, 777}};
#define NBINDS (sizeof binds / sizeof binds[0])

static void want_chain(int64_t x, int64_t *out) {
    out[0] = x;
    for (int i = 0; i < STAGES; i++) out[i + 1] = stage_val(out[i], i);
}

static void phase_eval(deep *d) {
    for (size_t b = 0; b < NBINDS; b++) {
        int64_t wh[STAGES + 1], ww[STAGES + 1], v;
        symc_error err;
        want_chain(binds[b][1], wh);
        want_chain(binds[b][2], ww);
        for (int i = 0; i <= STAGES; i++) {
            CHECK_MSG(sym_eval(d->t, d->h[i], binds[b], 3, &v, &err) == SYMC_OK && v == wh[i],
                      "H=%lld stage %d: got %lld want %lld", (long long)binds[b][1], i, (long long)v, (long long)wh[i]);
            CHECK_MSG(sym_eval(d->t, d->w[i], binds[b], 3, &v, &err) == SYMC_OK && v == ww[i],
                      "W=%lld stage %d: got %lld want %lld", (long long)binds[b][2], i, (long long)v, (long long)ww[i]);
        }
        CHECK(sym_eval(d->t, d->numel, binds[b], 3, &v, &err) == SYMC_OK &&
              v == binds[b][0] * 24 * wh[STAGES] * ww[STAGES]);
        CHECK(sym_check_binding(d->t, binds[b], 3, &err) == SYMC_OK);
    }
}

static void phase_program(deep *d) {
    sym_expr outs[2 * STAGES + 3];
    uint32_t n = 0;
    for (int i = 0; i <= STAGES; i++) {
        outs[n++] = d->h[i];
        outs[n++] = d->w[i];
    }
    outs[n++] = d->numel;
    uint8_t *code = NULL;
    size_t size = 0;
    symc_error err;
    CHECK_MSG(sym_program_compile(d->t, outs, n, &code, &size, &err) == SYMC_OK, "%s", err.msg);
    if (!code) return;
    /* shared subterms are computed once: the program is linear in the DAG */
    CHECK_MSG(size < (size_t)64 * sym_expr_count(d->t), "program of %zu bytes for %u nodes", size,
              sym_expr_count(d->t));
    for (size_t b = 0; b < NBINDS; b++) {
        int64_t got[2 * STAGES + 3], wh[STAGES + 1], ww[STAGES + 1];
        want_chain(binds[b][1], wh);
        want_chain(binds[b][2], ww);
        CHECK_MSG(sym_program_eval(code, size, binds[b], 3, got, n, &err) == SYMC_OK, "%s", err.msg);
        for (int i = 0; i <= STAGES; i++)
            CHECK_MSG(got[2 * i] == wh[i] && got[2 * i + 1] == ww[i], "bind %zu stage %d", b, i);
        CHECK(got[n - 1] == binds[b][0] * 24 * wh[STAGES] * ww[STAGES]);
    }
    free(code);
}

static void phase_range(deep *d) {
    for (int i = 0; i <= STAGES; i++) {
        sym_range r = sym_range_of(d->t, d->h[i]);
        /* sound: contains every value the brute force reaches */
        for (size_t b = 0; b < NBINDS; b++) {
            int64_t wh[STAGES + 1];
            want_chain(binds[b][1], wh);
            CHECK_MSG(r.lo <= wh[i] && wh[i] <= r.hi, "stage %d range [%lld, %lld] misses %lld", i, (long long)r.lo,
                      (long long)r.hi, (long long)wh[i]);
        }
        CHECK_MSG(r.lo >= 1 && r.hi <= 2 * (int64_t)HMAX, "stage %d range [%lld, %lld]", i, (long long)r.lo,
                  (long long)r.hi);
        CHECK(sym_divisor_of(d->t, d->h[i]) >= 1);
    }
    sym_range r = sym_range_of(d->t, d->numel);
    CHECK(r.lo >= 24 && r.hi > r.lo);
}

static void phase_prove(deep *d) {
    sym_table *t = d->t;
    sym_expr one = sym_const(t, 1), h = d->h[STAGES], w = d->w[STAGES];
    CHECK(sym_prove_le(t, one, h) == SYM_TRUE);
    CHECK(sym_prove_lt(t, h, sym_const(t, 3 * (int64_t)HMAX)) == SYM_TRUE);
    CHECK(sym_prove_le(t, h, sym_const(t, 0)) == SYM_FALSE);
    CHECK(sym_prove_eq(t, h, h) == SYM_TRUE);
    CHECK(sym_prove_eq(t, h, sym_const(t, -5)) == SYM_FALSE);
    CHECK(sym_prove_ne(t, h, w) == SYM_UNKNOWN); /* H == W is possible, and so is H != W */
    /* any answer will do for these: they must simply come back */
    (void)sym_prove_le(t, h, w);
    (void)sym_prove_lt(t, d->h[STAGES - 1], h);
    (void)sym_prove_eq(t, d->h[STAGES - 3], d->w[STAGES - 2]);
    (void)sym_prove_divisible(t, d->numel, 8);
    CHECK(sym_prove_divisible(t, d->numel, 24) == SYM_TRUE);
    for (int i = 1; i <= STAGES; i++) {
        CHECK_MSG(sym_prove_le(t, one, d->h[i]) == SYM_TRUE, "stage %d", i);
        (void)sym_prove_le(t, d->h[i], d->h[i - 1]);
        (void)sym_prove_le(t, d->h[i], d->w[i]);
    }
    /* constructors that consult the prover on two deep operands */
    CHECK(sym_min(t, h, w) != SYM_NONE && sym_max(t, d->h[STAGES - 1], w) != SYM_NONE);
    CHECK(sym_floordiv(t, d->numel, h) != SYM_NONE && sym_mod(t, d->numel, w) != SYM_NONE);
    CHECK(sym_sub(t, d->numel, sym_mul(t, h, w)) != SYM_NONE);
}

static void phase_print(deep *d) {
    char small[160];
    for (int i = 0; i <= STAGES; i++) {
        size_t n = sym_print(d->t, d->h[i], NULL, 0);
        CHECK_MSG(n <= SYM_PRINT_LIMIT, "stage %d prints %zu chars", i, n);
        char *buf = malloc(n + 1);
        if (!buf) continue;
        CHECK(sym_print(d->t, d->h[i], buf, n + 1) == n && strlen(buf) == n);
        /* short text is the whole expression and reads back; cut text says so */
        sym_expr back;
        symc_error err;
        if (!strstr(buf, SYM_PRINT_CUT))
            CHECK_MSG(sym_parse(d->t, buf, &back, &err) == SYMC_OK && back == d->h[i], "stage %d: %s", i, buf);
        else
            CHECK_MSG(n == SYM_PRINT_LIMIT && strcmp(buf + n - strlen(SYM_PRINT_CUT), SYM_PRINT_CUT) == 0,
                      "stage %d: %zu chars, marker not at the end", i, n);
        free(buf);
        CHECK(sym_print(d->t, d->h[i], small, sizeof small) == n && strlen(small) < sizeof small);
    }
    size_t n = sym_print(d->t, d->numel, small, sizeof small);
    CHECK(n == SYM_PRINT_LIMIT); /* the full text of the final size is far longer: it is cut */
    printf("numel prints as %zu chars: %.80s...\n", n, small);
}

static void add_guard(deep *d, sym_rel rel, sym_expr l, sym_expr r, sym_guard_state want) {
    uint32_t idx;
    symc_error err;
    CHECK(sym_guard_add(d->t, rel, l, r, "deep", &idx, &err) == SYMC_OK);
    sym_guard_state st = sym_guard_classify(d->t, idx);
    char line[512];
    size_t n = sym_guard_explain(d->t, idx, line, sizeof line);
    CHECK_MSG(st == want, "guard %u: %s, want %s: %s", idx, sym_guard_state_name(st), sym_guard_state_name(want), line);
    CHECK_MSG(n == strlen(line) && strstr(line, "deep: needs "), "%s", line);
    int holds = -1;
    CHECK(sym_guard_eval(d->t, idx, binds[3], 3, &holds, &err) == SYMC_OK && holds >= 0);
}

/* Guards over the deep sizes: proven, refuted by a sampled witness, and
 * left to run time; the window guards shape inference may have recorded
 * must hold at every binding. */
static void phase_guard(deep *d) {
    sym_expr h = d->h[STAGES], w = d->w[STAGES];
    for (uint32_t g = 0; g < sym_guard_count(d->t); g++) {
        sym_guard_state st = sym_guard_classify(d->t, g);
        CHECK_MSG(st == SYM_GUARD_IMPLIED || st == SYM_GUARD_RUNTIME, "guard %u: %s", g, sym_guard_state_name(st));
    }
    add_guard(d, SYM_REL_LE, sym_const(d->t, 1), h, SYM_GUARD_IMPLIED);
    add_guard(d, SYM_REL_DIVISIBLE, d->numel, sym_const(d->t, 8), SYM_GUARD_IMPLIED);
    add_guard(d, SYM_REL_LE, h, w, SYM_GUARD_NARROWS);
    add_guard(d, SYM_REL_EQ, h, w, SYM_GUARD_NARROWS);
    add_guard(d, SYM_REL_BROADCAST, h, w, SYM_GUARD_RUNTIME);
    char line[512];
    sym_guard_explain(d->t, sym_guard_count(d->t) - 3, line, sizeof line);
    CHECK_MSG(strstr(line, "H in [1, 1048576]") && strstr(line, "e.g. H = "), "%s", line);
    printf("example: %.200s\n", line);
}

/* An equality between a fresh symbol and a deep expression: binding it
 * collects the expression's symbols, later proofs substitute through it,
 * and binding checks evaluate it. */
static void phase_assume(deep *d) {
    sym_symbol_info info = {"Z", 1, 2, 1 << 22, 1, "test"};
    sym_id z;
    symc_error err;
    CHECK(sym_symbol_new(d->t, &info, &z, &err) == SYMC_OK);
    sym_expr ze = sym_var(d->t, z);
    CHECK_MSG(sym_assume_eq(d->t, ze, d->h[STAGES], &err) == SYMC_OK, "%s", err.msg);
    CHECK(sym_prove_le(d->t, sym_const(d->t, 1), ze) == SYM_TRUE);
    CHECK(sym_prove_eq(d->t, ze, d->h[STAGES]) == SYM_TRUE);
    (void)sym_prove_le(d->t, ze, d->w[STAGES]);
    for (size_t b = 0; b < NBINDS; b++) {
        int64_t wh[STAGES + 1], v[4] = {binds[b][0], binds[b][1], binds[b][2], 0};
        want_chain(binds[b][1], wh);
        v[3] = wh[STAGES];
        CHECK_MSG(sym_check_binding(d->t, v, 4, &err) == SYMC_OK, "%s", err.msg);
        v[3] = wh[STAGES] + 1;
        CHECK(sym_check_binding(d->t, v, 4, &err) == SYMC_ERR_RANGE);
    }
}

/* The inspect path: decode the program into a fresh table and compare. */
static void phase_decode(deep *d) {
    sym_expr outs[2] = {d->h[STAGES], d->numel}, got[2];
    uint8_t *code = NULL;
    size_t size = 0;
    symc_error err;
    CHECK_MSG(sym_program_compile(d->t, outs, 2, &code, &size, &err) == SYMC_OK, "%s", err.msg);
    if (!code) return;
    sym_table *t2 = sym_table_new(); /* the same symbols (the assume phase may have added Z) */
    for (uint32_t i = 0; t2 && i < sym_symbol_count(d->t); i++) {
        sym_symbol_info info;
        sym_symbol_get(d->t, i, &info);
        CHECK(sym_symbol_new(t2, &info, NULL, &err) == SYMC_OK);
    }
    if (!t2) return;
    CHECK_MSG(sym_program_decode(t2, code, size, got, 2, &err) == SYMC_OK, "%s", err.msg);
    for (size_t b = 0; b < NBINDS; b++) {
        int64_t x, y;
        CHECK(sym_eval(d->t, outs[1], binds[b], 3, &x, &err) == SYMC_OK &&
              sym_eval(t2, got[1], binds[b], 3, &y, &err) == SYMC_OK && x == y);
        CHECK(sym_eval(d->t, outs[0], binds[b], 3, &x, &err) == SYMC_OK &&
              sym_eval(t2, got[0], binds[b], 3, &y, &err) == SYMC_OK && x == y);
    }
    CHECK(sym_prove_le(t2, sym_const(t2, 1), got[0]) == SYM_TRUE);
    sym_table_free(t2);
    free(code);
}

typedef struct phase {
    const char *name;
    void (*run)(deep *);
} phase;

static const phase phases[] = {{"eval", phase_eval},     {"program", phase_program}, {"range", phase_range},
                               {"prove", phase_prove},   {"print", phase_print},     {"guard", phase_guard},
                               {"assume", phase_assume}, {"decode", phase_decode}};

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    deep d;
    double t0 = now_ms();
    build(&d);
    double total = now_ms() - t0;
    printf("build: %.2f ms (%u nodes)\n", total, sym_expr_count(d.t));
    fflush(stdout);
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        if (only && strcmp(only, phases[i].name) != 0) continue;
        double a = now_ms();
        phases[i].run(&d);
        double ms = now_ms() - a;
        total += ms;
        printf("%s: %.2f ms\n", phases[i].name, ms);
        fflush(stdout);
    }
    CHECK_MSG(total < BUDGET_MS, "took %.1f ms, budget %.0f ms", total, BUDGET_MS);
    printf("total: %.2f ms (budget %.0f ms)\n", total, BUDGET_MS);
    sym_table_free(d.t);
    return check_report("test_deep");
}
