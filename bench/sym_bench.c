/* symshape benchmark (not a test): figures for BENCHMARKS.md.
 *
 *  1. intern + simplify: build N random expressions (default 100000) over
 *     shape-like symbols through the canonical constructors, in a fresh
 *     table; then build the same N again (every node is a hash hit).
 *  2. shape program: compile 200 random expressions into one program and
 *     evaluate it repeatedly with changing bindings; also the same 200
 *     through sym_eval for comparison.
 * Each figure is the median of 5 runs. Usage: sym_bench [N] [seed]. */
#include "symshape/sym.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng;
static uint64_t rnd(void) {
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const int64_t consts[] = {1, 2, 3, 4, 7, 8, 16, 64, 197, 768};

/* Shape-like expressions: sums and products of dims, conv/pool formulas,
 * ceildiv by tile sizes, occasional min/max/mod. */
static sym_expr gen(sym_table *t, int depth, uint32_t nsym) {
    if (depth <= 0 || rnd() % 5 == 0) {
        if (rnd() % 3 == 0) return sym_const(t, consts[rnd() % 10]);
        return sym_var(t, (sym_id)(rnd() % nsym));
    }
    sym_expr a = gen(t, depth - 1, nsym);
    int64_t k = consts[rnd() % 10];
    switch (rnd() % 10) {
    case 0: return sym_add(t, a, gen(t, depth - 1, nsym));
    case 1: return sym_mul(t, a, gen(t, depth - 1, nsym));
    case 2: return sym_scale(t, a, k);
    case 3: return sym_add_const(t, a, (int64_t)(rnd() % 9) - 4);
    case 4: return sym_floordiv(t, sym_add_const(t, a, -(int64_t)(rnd() % 3)), sym_const(t, 1 + (int64_t)(rnd() % 4)));
    case 5: return sym_ceildiv(t, a, sym_const(t, k));
    case 6: return sym_mod(t, a, sym_const(t, k));
    case 7: return sym_min(t, a, gen(t, depth - 1, nsym));
    case 8: return sym_max(t, a, gen(t, depth - 1, nsym));
    default: return sym_sub(t, a, gen(t, depth - 1, nsym));
    }
}

static sym_table *make_table(void) {
    sym_table *t = sym_table_new();
    static const sym_symbol_info syms[] = {
        {"B", 1, 8, 64, 1, "input 'x' dim 0"},        {"S", 8, 256, 4096, 8, "input 'x' dim 1"},
        {"H", 16, 224, 1024, 1, "input 'img' dim 2"}, {"W", 16, 224, 1024, 1, "input 'img' dim 3"},
        {"C", 1, 3, 4, 1, "input 'img' dim 1"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) sym_symbol_new(t, &syms[i], NULL, NULL);
    return t;
}

static int cmpd(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median5(double *v) {
    qsort(v, 5, sizeof *v, cmpd);
    return v[2];
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 12345;
    double cold[5], warm[5];
    uint32_t handles = 0;
    for (int r = 0; r < 5; r++) {
        sym_table *t = make_table();
        rng = seed;
        double t0 = now();
        for (long i = 0; i < n; i++) gen(t, 4, 5);
        double t1 = now();
        rng = seed;
        for (long i = 0; i < n; i++) gen(t, 4, 5);
        double t2 = now();
        cold[r] = t1 - t0;
        warm[r] = t2 - t1;
        handles = sym_expr_count(t);
        if (sym_table_error(t)) {
            fprintf(stderr, "unexpected table error: %s\n", sym_table_error(t)->msg);
            return 1;
        }
        sym_table_free(t);
    }
    double c = median5(cold), w = median5(warm);
    printf("intern+simplify %ld random expressions (depth <= 4, 5 symbols): %.1f ms, %.2f us/expression; "
           "%u distinct handles\n",
           n, c * 1e3, c * 1e6 / (double)n, handles);
    printf("rebuild the same %ld (all hash hits): %.1f ms, %.2f us/expression\n", n, w * 1e3, w * 1e6 / (double)n);

    /* shape program of 200 expressions */
    sym_table *t = make_table();
    rng = seed ^ 0xabcdef;
    sym_expr es[200];
    for (int i = 0; i < 200; i++) es[i] = gen(t, 4, 5);
    uint8_t *code;
    size_t size;
    symc_error err;
    if (sym_program_compile(t, es, 200, &code, &size, &err) || sym_program_check(code, size, NULL, NULL, &err)) {
        fprintf(stderr, "program: %s\n", err.msg);
        return 1;
    }
    const char *dump = getenv("SYM_BENCH_DUMP"); /* write the program bytes, for inspection */
    if (dump) {
        FILE *f = fopen(dump, "wb");
        if (f) {
            fwrite(code, 1, size, f);
            fclose(f);
        }
    }
    int64_t binds[64][5], out[200];
    for (int b = 0; b < 64; b++) {
        binds[b][0] = 1 + (int64_t)(rnd() % 64);
        binds[b][1] = 8 * (1 + (int64_t)(rnd() % 512));
        binds[b][2] = 16 + (int64_t)(rnd() % 1009);
        binds[b][3] = 16 + (int64_t)(rnd() % 1009);
        binds[b][4] = 1 + (int64_t)(rnd() % 4);
    }
    long iters = 200000, failures = 0;
    double pe[5], se[5];
    int64_t sink = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (long i = 0; i < iters; i++) {
            if (sym_program_eval(code, size, binds[i & 63], 5, out, 200, NULL)) failures++;
            sink += out[i % 200];
        }
        pe[r] = (now() - t0) / (double)iters;
        double t1 = now();
        long it2 = iters / 20;
        for (long i = 0; i < it2; i++)
            for (int j = 0; j < 200; j++) {
                int64_t v;
                if (sym_eval(t, es[j], binds[i & 63], 5, &v, NULL) == SYMC_OK) sink += v;
            }
        se[r] = (now() - t1) / (double)it2;
    }
    /* A model-like program: what the compiler really emits per op (output
     * dims, buffer element counts, launch grids) for a CNN stem and a
     * transformer stack over symbols B, S, H, W. */
    sym_expr ms[200];
    int nm = 0;
    {
        sym_expr B = sym_var(t, 0), S = sym_var(t, 1), H = sym_var(t, 2), W = sym_var(t, 3);
        int64_t ch = 64;
        for (int l = 0; l < 20 && nm + 5 <= 100; l++) {
            int64_t stride = l % 4 == 3 ? 2 : 1;
            sym_window_out(t, H, 3, stride, 1, 1, 1, 0, "conv", &H, NULL);
            sym_window_out(t, W, 3, stride, 1, 1, 1, 0, "conv", &W, NULL);
            if (stride == 2) ch *= 2;
            sym_expr hw = sym_mul(t, H, W), elems = sym_scale(t, sym_mul(t, B, hw), ch);
            ms[nm++] = H;
            ms[nm++] = W;
            ms[nm++] = elems;                                    /* buffer size */
            ms[nm++] = sym_ceildiv(t, elems, sym_const(t, 256)); /* 1-D grid */
            ms[nm++] = sym_mul(t, B, hw);                        /* GEMM M of a 1x1 conv */
        }
        sym_expr BS = sym_mul(t, B, S);
        for (int l = 0; nm + 5 <= 200; l++) {
            int64_t hidden = 768, heads = 12;
            ms[nm++] = sym_scale(t, BS, hidden * (l % 2 ? 4 : 1));               /* activations */
            ms[nm++] = sym_scale(t, sym_mul(t, BS, S), heads);                   /* attention scores */
            ms[nm++] = sym_scale(t, sym_ceildiv(t, S, sym_const(t, 64)), heads); /* flash grid */
            ms[nm++] = sym_mul(t, sym_ceildiv(t, BS, sym_const(t, 128)), sym_const(t, hidden / 128)); /* GEMM tiles */
            ms[nm++] = sym_scale(t, sym_min(t, S, sym_const(t, 512 + 64 * l)), 64); /* a clamped window */
        }
    }
    uint8_t *mcode;
    size_t msize;
    if (sym_program_compile(t, ms, (uint32_t)nm, &mcode, &msize, &err) ||
        sym_program_check(mcode, msize, NULL, NULL, &err)) {
        fprintf(stderr, "model program: %s\n", err.msg);
        return 1;
    }
    double me[5];
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        for (long i = 0; i < iters; i++) {
            if (sym_program_eval(mcode, msize, binds[i & 63], 5, out, 200, NULL)) failures++;
            sink += out[i % 200];
        }
        me[r] = (now() - t0) / (double)iters;
    }
    uint32_t mins = (uint32_t)mcode[20] | (uint32_t)mcode[21] << 8;
    printf("model-like shape program: %d expressions -> %zu bytes, %u instructions: %.0f ns per evaluation\n", nm,
           msize, mins, median5(me) * 1e9);
    free(mcode);

    /* register file and instruction count, for the record */
    uint32_t ninstr = (uint32_t)code[20] | (uint32_t)code[21] << 8 | (uint32_t)code[22] << 16 |
        (uint32_t)code[23] << 24;
    uint32_t ntemp = (uint32_t)code[12] | (uint32_t)code[13] << 8;
    printf("shape program: 200 expressions -> %zu bytes, %u instructions, %u temporaries\n", size, ninstr, ntemp);
    printf("sym_program_eval: %.0f ns per evaluation of all 200 (median of 5 x %ld; %ld evaluations failed)\n",
           median5(pe) * 1e9, iters, failures);
    printf("sym_eval (table walk) of the same 200: %.0f ns (for comparison)\n", median5(se) * 1e9);
    if (sink == 42) printf(" ");
    free(code);
    sym_table_free(t);
    return 0;
}
