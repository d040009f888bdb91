/* symc bench: latency and throughput of one engine at one or many input shapes.
 *
 * Approach. One engine, one context, one stream for the whole run, so the
 * numbers include what a real caller pays when the shape changes. A "point"
 * is one shape per input. Points come from --shapes (one point; repeat the
 * flag for more inputs), from repeated --point (one point each), or from
 * --sweep, which expands a template whose dims may name engine symbols
 * (x:Bx196x768) at the levels min, opt, opt+1, a prime between opt and max,
 * and max, every symbol at the same level; the specs are read by the one
 * shape parser of the tools (frontend/onnx.h, fe_parse_point), so bench,
 * run and compile share its grammar and messages. Per point: set the input
 * shapes, read the output shapes, allocate `sets` input/output buffer sets once
 * (device memory from rt_cuda_driver's table on the CUDA backend, host
 * memory on the reference backend), fill the inputs with seeded random
 * values and poison the outputs, time the first enqueue at the new shape,
 * warm up, then time `iters` enqueues. On CUDA each is bracketed by events on
 * the stream (GPU time); then `iters` more, each after waiting for the run
 * two before it, timed by clock_gettime around the symrt_enqueue call (host
 * time per call with one run in flight: back to back, a full launch queue
 * would make an enqueue wait for the GPU); sets rotate per iteration so
 * inputs that fit in L2 are not served from it. On the reference backend,
 * which runs synchronously, the host clock is the latency. Reported per
 * point: p50/p90/p99/mean/min latency, median host time per call, first-call
 * host time, and samples/s = leading dim of the first input / p50. One table
 * row per point on stdout; --json writes every number. Every failure is one
 * line "symc: bench: ..." and exit 1 (2 for usage).
 *
 * Memory (CUDA backend): the device memory the context holds, measured with
 * cuMemGetInfo as the free memory before the context is created minus the
 * least free memory seen after each point (the point's own input/output
 * buffers freed first, so only the context's constants, workspace and
 * library state count; other processes on the GPU add noise). Next to it
 * the formula from the engine alone (tools/memory.h): weights + the
 * activation workspace formula at this point + cuBLASLt's fixed workspace;
 * "held" is that with the workspace at its largest over the points so far,
 * because the context's workspace only grows, and it is what the
 * measurement should stay under (a cuDNN workspace, chosen per shape, the
 * ones a 1x1 convolution's bias pass reads (H * W elements, cuda_gemm.c), the
 * module's code and the library handles are not in the formula). Without
 * a formula or a driver (the reference backend) the fields are left out. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/onnx.h"
#include "ir/ir.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "tools/bench.h"
#include "tools/checked.h"
#include "tools/cli.h"
#include "tools/memory.h"
#include "tools/npy.h"
#include "tools/plot.h"

#define B_MAX_IO 64
#define B_MAX_POINTS 256
#define B_MAX_RANK 8

/* A point: one shape per input. Its items are copies of what the shape
 * parser (frontend/onnx.h, fe_parse_point) returned: names and symbol names
 * point into those fe_points, which live for the whole command; a resolved
 * point has every sym[d] NULL. */
typedef struct b_point {
    char label[32];
    int level; /* --sweep: the level (0 min .. 4 max); -1 otherwise */
    uint32_t n;
    fe_point_input items[B_MAX_IO];
} b_point;

typedef struct b_result {
    double p50, p90, p99, mean, min; /* ms */
    double host_us, host_p90_us, first_us, stream_ms, throughput;
    double shape_us;         /* setting this point's input shapes and evaluating them (host) */
    symrt_graph_stats graph; /* what the context's CUDA graphs did during this point */
    int64_t batch;
    uint32_t sets;
    int iters; /* timed runs made (fewer than --iters only under the reference backend's time budget) */
    int64_t out_dims[B_MAX_IO][B_MAX_RANK];
    int32_t out_rank[B_MAX_IO];
    size_t nan_out; /* NaN elements in set 0's first float output (poison left = unwritten) */
    int mem;        /* the memory fields below are known (CUDA, with a formula) */
    uint64_t mem_measured, mem_workspace, mem_formula, mem_formula_held;
    symrt_step_profile *prof;       /* --profile: per step, the median over the profiled runs */
    symrt_step_profile *first_prof; /* --profile: the first call at this shape, profiled (host_us per step) */
    uint32_t n_prof;
    double prof_sum; /* ms, the steps' medians summed */
} b_result;

static int b_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "symc: bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'symc bench --help')\n");
    va_end(ap);
    return 2;
}

/* trtexec's timing flags, which a trtexec user types first: each answered with symc bench's own
 * spelling (their units differ: trtexec's --warmUp and --duration are milliseconds and seconds of
 * time, symc's --warmup and --iters are counts of runs), NULL for another flag. */
static const char *trtexec_flag(const char *arg) {
    static const struct {
        const char *name, *answer;
    } map[] = {
        {"--iterations", "--iterations is trtexec's; symc bench takes --iters N (timed runs per point)"},
        {"--warmUp", "--warmUp is trtexec's (milliseconds); symc bench takes --warmup N (untimed runs first)"},
        {"--duration", "--duration is trtexec's (seconds); symc bench times a count of runs: --iters N"},
        {"--dumpProfile", "--dumpProfile is trtexec's; symc bench takes --profile (each step's GPU time)"},
        {"--exportProfile", "--exportProfile is trtexec's; symc bench takes --trace FILE.json (a Chrome trace)"},
        {"--exportTimes", "--exportTimes is trtexec's; symc bench takes --json FILE (or --csv FILE)"},
        {"--exportOutput", "--exportOutput is trtexec's; symc run writes outputs: --output NAME=FILE.npy"},
        {"--verbose", "--verbose is trtexec's; symc bench prints every point already (--quiet for less)"},
    };
    size_t n = strcspn(arg, "=");
    for (size_t k = 0; k < sizeof map / sizeof *map; k++)
        if (strlen(map[k].name) == n && !strncmp(arg, map[k].name, n)) return map[k].answer;
    return NULL;
}

/* One parsed flag (or the --shapes flags together) as a point: p's items
 * borrow from `parsed`. Returns 0, or 1 when there are too many inputs. */
static int b_point_of(const fe_point *parsed, b_point *p) {
    if (parsed->n > B_MAX_IO) return 1;
    p->n = parsed->n;
    if (parsed->n) memcpy(p->items, parsed->items, parsed->n * sizeof *p->items); /* items is NULL when n = 0 */
    return 0;
}

static int b_is_prime(int64_t v) {
    if (v < 2) return 0;
    for (int64_t q = 2; q * q <= v; q++)
        if (v % q == 0) return 0;
    return 1;
}

/* The value of symbol s at a sweep level; 0 if the level does not exist. */
static int64_t b_level(const symrt_symbol_info *s, int level) {
    int64_t m = s->multiple_of > 1 ? s->multiple_of : 1;
    switch (level) {
    case 0: return s->min;
    case 1: return s->opt;
    case 2: return s->opt + m <= s->max ? s->opt + m : 0;
    case 3: {
        if (m > 1) return 0;
        int64_t mid = s->opt + (s->max - s->opt) / 2;
        for (int64_t v = mid; v > s->opt + 1; v--)
            if (b_is_prime(v)) return v;
        for (int64_t v = mid + 1; v < s->max; v++)
            if (b_is_prime(v)) return v;
        return 0;
    }
    case 4: return s->max;
    default: return 0;
    }
}

static const char *const level_names[] = {"min", "opt", "opt+1", "prime", "max"};

/* Resolves a template's symbol dims at `level` (-1: opt, for plain --shapes).
 * Returns 0 ok, 1 when the level is missing for a symbol (skip), 2 on an
 * unknown symbol (msg). */
static int b_resolve(const symrt_engine *e, const b_point *tmpl, int level, b_point *out, char *msg, size_t cap) {
    *out = *tmpl;
    for (uint32_t k = 0; k < out->n; k++)
        for (int32_t d = 0; d < out->items[k].rank; d++) {
            const char *sn = out->items[k].sym[d];
            if (!sn) continue;
            uint32_t ns = symrt_engine_num_symbols(e), j;
            symrt_symbol_info s = {0};
            for (j = 0; j < ns; j++)
                if (!symrt_engine_symbol(e, j, &s, NULL) && !strcmp(s.name, sn)) break;
            if (j == ns) {
                int len = snprintf(msg, cap, "'%s' is not a symbol of the engine (it has:", sn);
                for (j = 0; j < ns && len > 0 && (size_t)len < cap; j++)
                    if (!symrt_engine_symbol(e, j, &s, NULL))
                        len += snprintf(msg + len, cap - (size_t)len, " %s", s.name);
                if (len > 0 && (size_t)len < cap) snprintf(msg + len, cap - (size_t)len, ")");
                return 2;
            }
            int64_t v = level < 0 ? s.opt : b_level(&s, level);
            if (!v) return 1;
            out->items[k].dims[d] = v;
            out->items[k].sym[d] = NULL;
        }
    return 0;
}

static int b_same(const b_point *a, const b_point *b) {
    if (a->n != b->n) return 0;
    for (uint32_t k = 0; k < a->n; k++)
        if (strcmp(a->items[k].name, b->items[k].name) || a->items[k].rank != b->items[k].rank ||
            memcmp(a->items[k].dims, b->items[k].dims, sizeof(int64_t) * (size_t)a->items[k].rank))
            return 0;
    return 1;
}

static double b_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int b_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* q-quantile of sorted v[0..n) with linear interpolation */
static double b_quant(const double *v, size_t n, double q) {
    if (!n) return NAN;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

typedef struct b_run {
    const symrt_engine *e;
    symrt_context *c;
    const rt_cuda_driver_api *drv; /* NULL on the reference backend */
    void *stream;
    uint32_t ni, no;
    int iters, warmup, rotate;
    double budget_us; /* ref with the default counts: timed runs stop past this (at least one), 0 = none */
    int graphs;       /* CUDA graphs on in the context */
    uint64_t seed;
    /* memory (CUDA only; mem NULL when unavailable) */
    symc_memory *mem;
    size_t free0, free_min; /* device free bytes before the context, least seen since */
    uint64_t mem_context;   /* held right after creation (constants, module, handles) */
    int64_t ws_held;        /* largest workspace formula value so far */
    int profile;            /* --profile: per-step GPU times after the timed runs */
    FILE *trace;            /* --trace: Chrome trace events, one process per point */
    double trace_t0;        /* µs: where the next point's timeline starts */
    int trace_events;       /* events written so far */
} b_run;

#define B_CU(call, what)                                                                       \
    do {                                                                                       \
        int cu_rc_ = (call);                                                                   \
        if (cu_rc_) {                                                                          \
            symc_error_setf(err, SYMC_ERR_DEVICE, "CUDA driver error %d in %s", cu_rc_, what); \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

/* Sets every input's shape for point p; 0 or fills err. */
static int b_set_shapes(const b_run *r, const b_point *p, symc_error *err) {
    symrt_io_info info;
    for (uint32_t k = 0; k < p->n; k++) {
        uint32_t i;
        for (i = 0; i < r->ni; i++)
            if (!symrt_engine_input(r->e, i, &info, NULL) && !strcmp(info.name, p->items[k].name)) break;
        if (i == r->ni) {
            char names[512];
            tool_input_names(r->e, names, sizeof names);
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no input named '%s' (inputs: %s)", p->items[k].name,
                                   names),
                   1;
        }
    }
    for (uint32_t i = 0; i < r->ni; i++) {
        symrt_engine_input(r->e, i, &info, NULL);
        const fe_point_input *it = NULL;
        for (uint32_t k = 0; k < p->n; k++)
            if (!strcmp(p->items[k].name, info.name)) it = &p->items[k];
        if (!it)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no shape for input '%s' (add %s:AxB... to it)",
                                   info.name, info.name),
                   1;
        if (symrt_set_input_shape(r->c, info.name, it->dims, it->rank, err)) return 1;
    }
    int64_t dims[B_MAX_RANK];
    int32_t rank;
    for (uint32_t i = 0; i < r->ni + r->no; i++) { /* every buffer's size fits (checked.h) */
        if (i < r->ni) symrt_engine_input(r->e, i, &info, NULL);
        else symrt_engine_output(r->e, i - r->ni, &info, NULL);
        char what[160];
        snprintf(what, sizeof what, "%s '%s'", i < r->ni ? "input" : "output", info.name);
        if (symrt_get_tensor_shape(r->c, info.name, dims, &rank, err) ||
            tool_tensor_size(what, info.dtype, rank, dims, NULL, NULL, err))
            return 1;
    }
    return 0;
}

/* The engine's symbol values at point p (from the input dims that bind
 * them); 0, or 1 when an input of the point is missing. */
static int b_point_symbols(const rt_engine *e, const b_point *p, int64_t *vals) {
    for (uint32_t s = 0; s < e->n_symbols; s++) vals[s] = e->symbols[s].opt;
    for (uint32_t s = 0; s < e->n_sources; s++) {
        const rt_source *src = &e->sources[s];
        const char *name = e->tensors[e->inputs[src->input]].name;
        const fe_point_input *it = NULL;
        for (uint32_t k = 0; k < p->n; k++)
            if (!strcmp(p->items[k].name, name)) it = &p->items[k];
        if (!it || (int32_t)src->dim >= it->rank) return 1;
        vals[src->symbol] = it->dims[src->dim];
    }
    return 0;
}

/* After point p ran (its buffers freed): what the context holds and what the
 * formula says. Leaves res->mem 0 when either is unknown. */
static void b_point_memory(b_run *r, const b_point *p, b_result *res) {
    size_t fr = 0, total = 0;
    int64_t vals[256], ws = 0;
    if (!r->mem || !r->drv || r->mem->e->n_symbols > 256) return;
    if (r->drv->ctx_synchronize() || r->drv->mem_get_info(&fr, &total)) return;
    if (fr < r->free_min) r->free_min = fr;
    if (b_point_symbols(r->mem->e, p, vals) || symc_memory_eval(r->mem, vals, &ws, NULL)) return;
    if (ws > r->ws_held) r->ws_held = ws;
    uint64_t fixed = r->mem->weights + r->mem->library;
    res->mem = 1;
    res->mem_measured = r->free0 > r->free_min ? r->free0 - r->free_min : 0;
    res->mem_workspace = (uint64_t)ws;
    res->mem_formula = fixed + (uint64_t)ws;
    res->mem_formula_held = fixed + (uint64_t)r->ws_held;
}

static int b_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static int b_cmp_step(const void *a, const void *b) {
    const symrt_step_profile *x = a, *y = b;
    return (x->ms < y->ms) - (x->ms > y->ms); /* slowest first */
}

static void b_json_str(FILE *f, const char *s);
static void b_shape_text(const b_point *p, char *buf, size_t cap);

/* --profile at the point whose buffers are bound: `runs` profiled runs
 * (symrt_context_profile), each step's median time into res->prof (in step
 * order); the last run's timeline into the trace. 0 or fills err. */
static int b_point_profile(b_run *r, const b_point *p, int point_index, b_result *res, symc_error *err) {
    uint32_t n = 0;
    if (symrt_context_profile(r->c, r->stream, NULL, 0, &n, err)) return 1;
    int runs = r->iters < 3 ? 3 : r->iters > 25 ? 25 : r->iters;
    symrt_step_profile *all = calloc((size_t)runs * (n ? n : 1), sizeof *all);
    float *col = calloc((size_t)runs, sizeof *col);
    res->prof = calloc(n ? n : 1, sizeof *res->prof);
    if (!all || !col || !res->prof) {
        free(all), free(col);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of host memory for the profile of %u steps", n), 1;
    }
    for (int k = 0; k < runs; k++) {
        uint32_t got = 0;
        if (symrt_context_profile(r->c, r->stream, &all[(size_t)k * n], n, &got, err)) {
            free(all), free(col);
            return 1;
        }
    }
    res->n_prof = n;
    res->prof_sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < runs; k++) col[k] = all[(size_t)k * n + i].ms;
        qsort(col, (size_t)runs, sizeof *col, b_cmp_float);
        res->prof[i] = all[(size_t)(runs - 1) * n + i];
        res->prof[i].ms = col[runs / 2];
        res->prof_sum += col[runs / 2];
        for (int k = 0; k < runs; k++) col[k] = all[(size_t)k * n + i].host_us;
        qsort(col, (size_t)runs, sizeof *col, b_cmp_float);
        res->prof[i].host_us = col[runs / 2];
    }
    if (r->trace) {
        const symrt_step_profile *last = &all[(size_t)(runs - 1) * n];
        char st[256];
        b_shape_text(p, st, sizeof st);
        fprintf(r->trace, "%s\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": ",
                r->trace_events++ ? "," : "", point_index);
        b_json_str(r->trace, st);
        fprintf(r->trace, "}}");
        double end = 0;
        for (uint32_t i = 0; i < n; i++) {
            double ts = r->trace_t0 + last[i].start_ms * 1e3, dur = last[i].ms * 1e3;
            fprintf(r->trace, ",\n{\"name\": ");
            b_json_str(r->trace, last[i].node);
            fprintf(r->trace,
                    ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": 0, \"ts\": %.3f, \"dur\": %.3f, "
                    "\"args\": {\"op\": ",
                    last[i].kind, point_index, ts, dur);
            b_json_str(r->trace, last[i].op);
            fprintf(r->trace, ", \"detail\": ");
            b_json_str(r->trace, last[i].detail);
            fprintf(r->trace, "}}");
            if (ts + dur > end) end = ts + dur;
        }
        r->trace_t0 = end + 100.0; /* the next point starts 100 µs later on the timeline */
    }
    free(all);
    free(col);
    return 0;
}

/* The --profile table of one point: the slowest steps first, then the time
 * per op and per kind of step. */
static void b_print_profile(const b_result *x, double p50) {
    uint32_t n = x->n_prof;
    symrt_step_profile *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, x->prof, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, b_cmp_step);
    double sum = x->prof_sum > 0 ? x->prof_sum : 1;
    printf("  profile: %u steps, %.4f ms summed (a plain run: p50 %.4f ms; events between steps add a little)\n", n,
           x->prof_sum, p50);
    printf("  %9s %6s %6s %8s  %-6s %-10s %-28s %s\n", "ms", "%", "cum%", "host us", "kind", "op", "node", "what");
    double cum = 0;
    uint32_t shown = n < 40 ? n : 40;
    for (uint32_t i = 0; i < shown; i++) {
        cum += sorted[i].ms;
        printf("  %9.4f %6.2f %6.2f %8.1f  %-6s %-10s %-28.28s %s\n", sorted[i].ms, 100.0 * sorted[i].ms / sum,
               100.0 * cum / sum, sorted[i].host_us, sorted[i].kind, sorted[i].op, sorted[i].node, sorted[i].detail);
    }
    if (shown < n) printf("  ... %u more steps, %.4f ms\n", n - shown, x->prof_sum - cum);
    /* per op and per kind */
    const char *names[64];
    double ms[64];
    int cnt[64], m = 0;
    for (int pass = 0; pass < 2; pass++) {
        m = 0;
        for (uint32_t i = 0; i < n; i++) {
            const char *k = pass ? x->prof[i].kind : x->prof[i].op;
            int j = 0;
            while (j < m && strcmp(names[j], k)) j++;
            if (j == m) {
                if (m == 64) continue;
                names[m] = k, ms[m] = 0, cnt[m] = 0, m++;
            }
            ms[j] += x->prof[i].ms;
            cnt[j]++;
        }
        printf("  by %s:", pass ? "kind" : "op (of a step's first node)");
        for (int a = 0; a < m; a++) /* descending */
            for (int b = a + 1; b < m; b++)
                if (ms[b] > ms[a]) {
                    const char *tn = names[a];
                    double tm = ms[a];
                    int tc = cnt[a];
                    names[a] = names[b], ms[a] = ms[b], cnt[a] = cnt[b];
                    names[b] = tn, ms[b] = tm, cnt[b] = tc;
                }
        for (int a = 0; a < m; a++)
            printf("%s %s %.4f ms (%d, %.1f%%)", a ? "," : "", names[a], ms[a], cnt[a], 100.0 * ms[a] / sum);
        printf("\n");
    }
    free(sorted);
    fflush(stdout);
}

/* --profile: the host side of the first call at this shape (a profiled
 * run): its total over the steps, per kind of step, and the slowest steps. */
static int b_cmp_host(const void *a, const void *b) {
    const symrt_step_profile *x = a, *y = b;
    return (x->host_us < y->host_us) - (x->host_us > y->host_us); /* slowest first */
}

static void b_print_first(const b_result *x) {
    uint32_t n = x->n_prof;
    symrt_step_profile *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, x->first_prof, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, b_cmp_host);
    const char *kinds[] = {"conv", "gemm", "kernel", "copy"};
    double sum = 0, by[4] = {0};
    int cnt[4] = {0};
    for (uint32_t i = 0; i < n; i++) {
        sum += sorted[i].host_us;
        for (int k = 0; k < 4; k++)
            if (!strcmp(sorted[i].kind, kinds[k])) by[k] += sorted[i].host_us, cnt[k]++;
    }
    printf("  first call at this shape (profiled): %.1f us, of it %.1f us enqueueing the %u steps:", x->first_us, sum,
           n);
    for (int k = 0; k < 4; k++)
        if (cnt[k]) printf(" %s %.1f us (%d)", kinds[k], by[k], cnt[k]);
    printf("\n");
    for (uint32_t i = 0; i < n && i < 8; i++)
        printf("  %9.1f us  %-6s %-10s %-28.28s %s\n", sorted[i].host_us, sorted[i].kind, sorted[i].op, sorted[i].node,
               sorted[i].detail);
    free(sorted);
    fflush(stdout);
}

/* Runs one point; 0 or fills err. */
static int b_point_run(b_run *r, const b_point *p, int point_index, b_result *res, symc_error *err) {
    int rc = 1;
    uint32_t nio = r->ni + r->no;
    size_t bytes[2 * B_MAX_IO] = {0}, elems[2 * B_MAX_IO] = {0}, set_bytes = 0;
    symrt_io_info info[2 * B_MAX_IO];
    void *host[2 * B_MAX_IO] = {0}; /* ref: the buffers; cuda: staging */
    uint64_t *dev = NULL;           /* cuda: [set][tensor] */
    void *hbufs = NULL;             /* ref: [set][tensor] host pointers (void*) */
    void **ev = NULL;
    double *gpu_ms = NULL, *host_us = NULL;
    int n_ev = 0;
    uint32_t sets = 1;
    memset(res, 0, sizeof *res);

    symrt_graph_stats g0;
    if (symrt_context_graph_stats(r->c, &g0, err)) goto out;
    double s0 = b_now_us();
    if (b_set_shapes(r, p, err)) goto out;
    if (r->no) { /* the first query evaluates the shape program and lays the memory out */
        symrt_io_info o0;
        int64_t dims[B_MAX_RANK];
        int32_t rank;
        symrt_engine_output(r->e, 0, &o0, NULL);
        if (symrt_get_tensor_shape(r->c, o0.name, dims, &rank, err)) goto out;
    }
    res->shape_us = b_now_us() - s0;
    for (uint32_t i = 0; i < r->ni; i++) symrt_engine_input(r->e, i, &info[i], NULL);
    for (uint32_t i = 0; i < nio; i++) {
        if (i >= r->ni) symrt_engine_output(r->e, i - r->ni, &info[i], NULL);
        int64_t dims[B_MAX_RANK];
        int32_t rank;
        if (symrt_get_tensor_shape(r->c, info[i].name, dims, &rank, err)) goto out;
        char what[160];
        snprintf(what, sizeof what, "%s '%s'", i < r->ni ? "input" : "output", info[i].name);
        if (tool_tensor_size(what, info[i].dtype, rank, dims, &elems[i], &bytes[i], err)) goto out;
        size_t padded = (bytes[i] + 255) & ~(size_t)255; /* bytes <= INT64_MAX: no wrap */
        set_bytes = set_bytes > SIZE_MAX - padded ? SIZE_MAX : set_bytes + padded;
        if (i == 0) res->batch = rank > 0 ? dims[0] : 1;
        if (i >= r->ni && i - r->ni < B_MAX_IO) {
            res->out_rank[i - r->ni] = rank;
            memcpy(res->out_dims[i - r->ni], dims, sizeof(int64_t) * (size_t)rank);
        }
    }
    if (r->drv) {
        if (r->rotate > 0) sets = (uint32_t)r->rotate;
        else { /* enough sets to exceed 128 MiB (well past a 50 MB L2), at most 8 */
            size_t want = set_bytes ? (((size_t)128 << 20) + set_bytes - 1) / set_bytes : 1;
            sets = want < 1 ? 1 : want > 8 ? 8 : (uint32_t)want;
        }
    }
    res->sets = sets;

    /* buffers */
    uint64_t state = r->seed;
    if (r->drv) {
        dev = calloc((size_t)sets * nio, sizeof *dev);
        if (!dev) goto oom;
        for (uint32_t i = 0; i < nio; i++) {
            host[i] = malloc(bytes[i] ? bytes[i] : 1);
            if (!host[i]) goto oom;
        }
        for (uint32_t s = 0; s < sets; s++)
            for (uint32_t i = 0; i < nio; i++) {
                uint64_t *d = &dev[(size_t)s * nio + i];
                B_CU(r->drv->mem_alloc(d, bytes[i] ? bytes[i] : 1), "cuMemAlloc (out of device memory?)");
                if (i < r->ni) {
                    symc_dtype_fill_random(host[i], info[i].dtype, elems[i], &state);
                    if (bytes[i]) B_CU(r->drv->memcpy_htod(*d, host[i], bytes[i]), "cuMemcpyHtoD");
                } else if (bytes[i]) B_CU(r->drv->memset_d8(*d, 0xff, bytes[i]), "cuMemsetD8");
            }
        B_CU(r->drv->ctx_synchronize(), "cuCtxSynchronize");
    } else {
        for (uint32_t i = 0; i < nio; i++) {
            host[i] = malloc(bytes[i] ? bytes[i] : 1);
            if (!host[i]) goto oom;
            if (i < r->ni) symc_dtype_fill_random(host[i], info[i].dtype, elems[i], &state);
            else memset(host[i], 0xff, bytes[i]);
        }
    }
    (void)hbufs;

#define BIND(s)                                                                            \
    for (uint32_t i_ = 0; i_ < nio; i_++) {                                                \
        void *ptr_ = r->drv ? (void *)(uintptr_t)dev[(size_t)(s) * nio + i_] : host[i_];   \
        if (symrt_set_tensor_address(r->c, info[i_].name, ptr_, bytes[i_], err)) goto out; \
    }

    /* first call at this shape; with --profile a profiled run, which times the
     * host side of every step (the libraries' per-shape setup is there) */
    BIND(0);
    double t0 = b_now_us();
    if (r->profile) {
        uint32_t n = 0, got = 0;
        if (symrt_context_profile(r->c, r->stream, NULL, 0, &n, err)) goto out;
        t0 = b_now_us(); /* sizing the array above ran nothing */
        if (!(res->first_prof = calloc(n ? n : 1, sizeof *res->first_prof))) goto oom;
        if (symrt_context_profile(r->c, r->stream, res->first_prof, n, &got, err)) goto out;
        res->n_prof = n;
    } else if (symrt_enqueue(r->c, r->stream, err)) goto out;
    res->first_us = b_now_us() - t0;
    if (r->drv) B_CU(r->drv->stream_synchronize(r->stream), "the first enqueue (cuStreamSynchronize)");
    /* with CUDA graphs every buffer set runs twice more first, so each has its
     * graph (captured at its second run) before the timing: the timed runs are
     * the steady state, replays only */
    int warm = r->warmup + (r->graphs ? 2 * (int)sets : 0);
    /* the reference backend's default: a first run of a second or more has
     * already warmed what a warm-up would (it runs synchronously, nothing is
     * compiled or captured later) */
    if (r->budget_us > 0 && res->first_us >= 1e6) warm = 0;
    for (int w = 0; w < warm; w++) {
        BIND((uint32_t)(w + 1) % sets);
        if (symrt_enqueue(r->c, r->stream, err)) goto out;
    }
    if (r->drv) B_CU(r->drv->stream_synchronize(r->stream), "warm-up (cuStreamSynchronize)");

    gpu_ms = calloc((size_t)r->iters, sizeof *gpu_ms);
    host_us = calloc((size_t)r->iters, sizeof *host_us);
    if (!gpu_ms || !host_us) goto oom;
    if (r->drv) {
        ev = calloc(2 * (size_t)r->iters, sizeof *ev);
        if (!ev) goto oom;
        for (; n_ev < 2 * r->iters; n_ev++) B_CU(r->drv->event_create(&ev[n_ev], 0), "cuEventCreate");
    }
    int n = r->iters; /* timed runs made */
    double spent = 0;
    for (int it = 0; it < r->iters; it++) {
        BIND((uint32_t)it % sets);
        if (r->drv) B_CU(r->drv->event_record(ev[2 * it], r->stream), "cuEventRecord");
        double h0 = b_now_us();
        if (symrt_enqueue(r->c, r->stream, err)) goto out;
        host_us[it] = b_now_us() - h0;
        if (r->drv) B_CU(r->drv->event_record(ev[2 * it + 1], r->stream), "cuEventRecord");
        spent += host_us[it];
        if (!r->drv && r->budget_us > 0 && spent >= r->budget_us) {
            n = it + 1;
            break;
        }
    }
    res->iters = n;
    if (r->drv) {
        B_CU(r->drv->stream_synchronize(r->stream), "the timed runs (cuStreamSynchronize)");
        for (int it = 0; it < r->iters; it++) {
            float ms = 0;
            B_CU(r->drv->event_elapsed_time(&ms, ev[2 * it], ev[2 * it + 1]), "cuEventElapsedTime");
            gpu_ms[it] = ms;
        }
        float span = 0;
        B_CU(r->drv->event_elapsed_time(&span, ev[0], ev[2 * r->iters - 1]), "cuEventElapsedTime");
        res->stream_ms = span / r->iters;
        /* host time per enqueue with at most one run ahead of it on the stream: in
         * the back-to-back loop above a run that outlasts its enqueue fills the
         * launch queue, and from then on an enqueue waits for the GPU (at large
         * shapes its host time reads as the GPU time). Each enqueue here first
         * waits for the run before the previous one, so the GPU stays busy and
         * the queue never fills, as in a server that keeps one batch in flight */
        for (int it = 0; it < r->iters; it++) {
            BIND((uint32_t)it % sets);
            if (it >= 2) B_CU(r->drv->event_synchronize(ev[2 * (it - 2) + 1]), "cuEventSynchronize");
            double h0 = b_now_us();
            if (symrt_enqueue(r->c, r->stream, err)) goto out;
            host_us[it] = b_now_us() - h0;
            B_CU(r->drv->event_record(ev[2 * it + 1], r->stream), "cuEventRecord");
        }
        B_CU(r->drv->stream_synchronize(r->stream), "the host-time runs (cuStreamSynchronize)");
    } else {
        for (int it = 0; it < n; it++) gpu_ms[it] = host_us[it] / 1e3;
        double sum = 0;
        for (int it = 0; it < n; it++) sum += gpu_ms[it];
        res->stream_ms = sum / n;
    }
    double sum = 0;
    for (int it = 0; it < n; it++) sum += gpu_ms[it];
    res->mean = sum / n;
    qsort(gpu_ms, (size_t)n, sizeof *gpu_ms, b_cmp);
    qsort(host_us, (size_t)n, sizeof *host_us, b_cmp);
    res->min = gpu_ms[0];
    res->p50 = b_quant(gpu_ms, (size_t)n, 0.50);
    res->p90 = b_quant(gpu_ms, (size_t)n, 0.90);
    res->p99 = b_quant(gpu_ms, (size_t)n, 0.99);
    res->host_us = b_quant(host_us, (size_t)n, 0.50);
    res->host_p90_us = b_quant(host_us, (size_t)n, 0.90);
    if (symrt_context_graph_stats(r->c, &res->graph, err)) goto out;
    res->graph.replays -= g0.replays;
    res->graph.captures -= g0.captures;
    res->graph.updates -= g0.updates;
    res->graph.plain -= g0.plain;
    res->graph.failed -= g0.failed;
    res->throughput = res->p50 > 0 ? (double)res->batch / (res->p50 / 1e3) : 0;
    if (r->profile && b_point_profile(r, p, point_index, res, err)) goto out;

    /* the first float output of set 0: NaN left means poison never overwritten */
    for (uint32_t i = r->ni; i < nio; i++) {
        if (info[i].dtype != SYMC_F32) continue;
        if (r->drv && bytes[i]) B_CU(r->drv->memcpy_dtoh(host[i], dev[i], bytes[i]), "cuMemcpyDtoH");
        for (size_t k = 0; k < elems[i]; k++)
            if (isnan(((const float *)host[i])[k])) res->nan_out++;
        break;
    }
    rc = 0;
    goto out;
oom:
    symc_error_setf(err, SYMC_ERR_NOMEM, "out of host memory at point %s", p->label);
out:
    if (r->drv) {
        r->drv->ctx_synchronize();
        for (int k = 0; k < n_ev; k++) r->drv->event_destroy(ev[k]);
        if (dev)
            for (size_t k = 0; k < (size_t)sets * nio; k++)
                if (dev[k]) r->drv->mem_free(dev[k]);
    }
    for (uint32_t i = 0; i < nio; i++) free(host[i]);
    free(dev);
    free(ev);
    free(gpu_ms);
    free(host_us);
    return rc;
#undef BIND
}

static void b_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void b_json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fprintf(f, "null");
}

static void b_shape_text(const b_point *p, char *buf, size_t cap) {
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t k = 0; k < p->n && len < cap; k++) {
        len += (size_t)snprintf(buf + len, cap - len, "%s%s:", k ? "," : "", p->items[k].name);
        for (int32_t d = 0; d < p->items[k].rank && len < cap; d++)
            len += (size_t)snprintf(buf + len, cap - len, "%s%" PRId64, d ? "x" : "", p->items[k].dims[d]);
    }
}

static int b_write_json(const char *path, const char *engine, const char *backend, const char *device, const b_run *r,
                        const b_point *pts, const b_result *res, int n, symc_error *err) {
    ir_out out; /* a regular file replaced whole, anything else (/dev/stdout) written in place */
    if (ir_out_open(&out, path, err)) return 1;
    FILE *f = out.f;
    fprintf(f, "{\n  \"engine\": ");
    b_json_str(f, engine);
    fprintf(f, ",\n  \"backend\": ");
    b_json_str(f, backend);
    fprintf(f, ",\n  \"device\": ");
    b_json_str(f, device);
    fprintf(f, ",\n  \"timer\": \"%s\",\n  \"iters\": %d,\n  \"warmup\": %d,\n  \"points\": [",
            r->drv ? "cuda-events" : "host", r->iters, r->warmup);
    for (int k = 0; k < n; k++) {
        const b_point *p = &pts[k];
        const b_result *x = &res[k];
        char st[2048];
        b_shape_text(p, st, sizeof st);
        fprintf(f, "%s\n    {\"label\": ", k ? "," : "");
        b_json_str(f, p->label);
        fprintf(f, ", \"point\": ");
        b_json_str(f, st);
        fprintf(f, ", \"shapes\": {");
        for (uint32_t i = 0; i < p->n; i++) {
            fprintf(f, "%s", i ? ", " : "");
            b_json_str(f, p->items[i].name);
            fprintf(f, ": [");
            for (int32_t d = 0; d < p->items[i].rank; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", p->items[i].dims[d]);
            fprintf(f, "]");
        }
        fprintf(f, "}, \"outputs\": {");
        for (uint32_t o = 0; o < r->no && o < B_MAX_IO; o++) {
            symrt_io_info oi;
            symrt_engine_output(r->e, o, &oi, NULL);
            fprintf(f, "%s", o ? ", " : "");
            b_json_str(f, oi.name);
            fprintf(f, ": [");
            for (int32_t d = 0; d < x->out_rank[o]; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", x->out_dims[o][d]);
            fprintf(f, "]");
        }
        fprintf(f, "},\n     \"p50_ms\": ");
        b_json_num(f, x->p50);
        fprintf(f, ", \"p90_ms\": ");
        b_json_num(f, x->p90);
        fprintf(f, ", \"p99_ms\": ");
        b_json_num(f, x->p99);
        fprintf(f, ", \"mean_ms\": ");
        b_json_num(f, x->mean);
        fprintf(f, ", \"min_ms\": ");
        b_json_num(f, x->min);
        fprintf(f, ", \"stream_ms\": ");
        b_json_num(f, x->stream_ms);
        fprintf(f, ", \"host_us\": ");
        b_json_num(f, x->host_us);
        fprintf(f, ", \"host_p90_us\": ");
        b_json_num(f, x->host_p90_us);
        fprintf(f, ", \"first_us\": ");
        b_json_num(f, x->first_us);
        fprintf(f, ", \"shape_us\": ");
        b_json_num(f, x->shape_us);
        fprintf(f,
                ",\n     \"graph_replays\": %" PRIu64 ", \"graph_captures\": %" PRIu64 ", \"graph_updates\": %" PRIu64
                ", \"graph_plain\": %" PRIu64 ", \"graph_failed\": %" PRIu64,
                x->graph.replays, x->graph.captures, x->graph.updates, x->graph.plain, x->graph.failed);
        fprintf(f, ",\n     \"batch\": %" PRId64 ", \"throughput\": ", x->batch);
        b_json_num(f, x->throughput);
        fprintf(f, ", \"iters\": %d, \"sets\": %u, \"nan_out\": %zu", x->iters, x->sets, x->nan_out);
        if (x->mem)
            fprintf(f,
                    ",\n     \"mem_measured_bytes\": %" PRIu64 ", \"mem_formula_bytes\": %" PRIu64
                    ", \"mem_formula_held_bytes\": %" PRIu64 ", \"mem_workspace_formula_bytes\": %" PRIu64
                    ", \"mem_weights_bytes\": %" PRIu64 ", \"mem_library_bytes\": %" PRIu64
                    ", \"mem_context_bytes\": %" PRIu64 ", \"mem_formula_excludes_cudnn\": %s",
                    x->mem_measured, x->mem_formula, x->mem_formula_held, x->mem_workspace, r->mem->weights,
                    r->mem->library, r->mem_context, r->mem->has_conv ? "true" : "false");
        if (x->prof) {
            fprintf(f, ",\n     \"profile_sum_ms\": ");
            b_json_num(f, x->prof_sum);
            fprintf(f, ", \"profile\": [");
            for (uint32_t i = 0; i < x->n_prof; i++) {
                const symrt_step_profile *q = &x->prof[i];
                fprintf(f, "%s\n       {\"step\": %u, \"node\": ", i ? "," : "", i);
                b_json_str(f, q->node);
                fprintf(f, ", \"op\": ");
                b_json_str(f, q->op);
                fprintf(f, ", \"kind\": \"%s\", \"ms\": ", q->kind);
                b_json_num(f, q->ms);
                fprintf(f, ", \"host_us\": ");
                b_json_num(f, q->host_us);
                if (x->first_prof) {
                    fprintf(f, ", \"first_host_us\": ");
                    b_json_num(f, x->first_prof[i].host_us);
                }
                fprintf(f, ", \"detail\": ");
                b_json_str(f, q->detail);
                fprintf(f, "}");
            }
            fprintf(f, "]");
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    return ir_out_close(&out, err) ? 1 : 0;
}

/* CUDA: the memory formula from a second decode of the engine file (the
 * symrt handle does not expose the engine), and the device's free memory
 * before the context exists. Any failure only drops the memory columns, with
 * a comment line saying why. */
static void b_memory_begin(b_run *r, const char *path, int quiet, rt_engine **engine, symc_memory *mem) {
    symc_error err = {0};
    uint8_t *bytes = NULL;
    size_t n = 0, total = 0;
    *engine = NULL;
    memset(mem, 0, sizeof *mem);
    if (!rt_read_file(path, &bytes, &n, &err) && !rt_engine_decode(bytes, n, engine, &err)) {
        if (!(*engine)->n_steps) symc_error_setf(&err, SYMC_ERR_UNSUPPORTED, "the engine has no GPU steps");
        else if (!symc_memory_init(mem, *engine, RT_SCHEDULE_STEPS, &err) && !r->drv->ctx_synchronize() &&
                 !r->drv->mem_get_info(&r->free0, &total)) {
            r->free_min = r->free0;
            r->mem = mem;
        } else if (!err.msg[0]) symc_error_setf(&err, SYMC_ERR_DEVICE, "cuMemGetInfo failed");
    }
    free(bytes);
    if (!r->mem) {
        symc_memory_free(mem);
        if (!quiet) printf("# memory not measured: %s\n", err.msg);
    }
}

static void b_help(void) {
    printf("usage: symc bench ENGINE.symx --shapes NAME:AxBxC [--shapes ...]\n"
           "       symc bench ENGINE.symx --point NAME:AxB,NAME2:CxD [--point ...]\n"
           "       symc bench ENGINE.symx --sweep --shapes NAME:Bx196x768\n"
           "options: [--backend cuda|ref] [--iters N] [--warmup N] [--rotate N] [--seed N]\n"
           "         [--json FILE] [--csv FILE] [--plot FILE.svg] [--profile] [--trace FILE.json]\n"
           "         [--no-graphs] [--stream own|default] [--quiet]\n"
           "trtexec's --loadEngine=ENGINE.symx names the engine too; every flag takes --flag=value\n"
           "or --flag value.\n"
           "Times symrt_enqueue at each point (one shape per input) in one context.\n"
           "  --shapes   adds inputs to the single point; a dim may name an engine symbol,\n"
           "             which stands for its opt value (a symbol name may not contain 'x')\n"
           "  --point    one point per flag, every input in one spec (',' or ';' between)\n"
           "  --sweep    expands the --shapes template at the levels min, opt, opt+1, a prime\n"
           "             between opt and max, and max, every symbol at the same level\n"
           "             (levels that do not exist or repeat a point are skipped)\n"
           "  --backend  cuda (the default where a GPU driver loads; without one, ref, said\n"
           "             once): GPU time with CUDA events around each enqueue on\n"
           "             a stream, host time with a monotonic clock around the call itself;\n"
           "             ref: the CPU reference backend, host time only\n"
           "  --iters    timed runs per point (default 100 on cuda; on ref 5, or fewer\n"
           "             once the timed runs pass 5 s, at least 1)\n"
           "  --warmup   untimed runs first (default 10 on cuda; on ref 1, none after a\n"
           "             first run of 1 s or more)\n"
           "  --no-graphs  every enqueue launches step by step; by default CUDA graphs\n"
           "             capture each shape and buffer set once and replay it, as for any\n"
           "             context (symrt_context_set_cuda_graphs; --graphs is accepted);\n"
           "             with graphs each buffer set runs twice more in the warm-up, so\n"
           "             the timed runs are replays\n"
           "  --stream   own (default): a non-blocking stream of the bench's; default: the\n"
           "             legacy default stream (NULL), where most callers enqueue\n"
           "  --profile  per point, each step's GPU time (CUDA events around every step,\n"
           "             median of up to 25 runs), slowest first, with its op, fused\n"
           "             kernel or library call and algorithm, and its host time; then totals\n"
           "             per op and kind. The first call at each point is a profiled run\n"
           "             too: its host time per step (the libraries' per-shape setup is\n"
           "             there), per kind, the slowest steps first (first_us includes its events)\n"
           "  --trace F  writes the steps of the last profiled run of every point as a\n"
           "             Chrome trace (chrome://tracing, ui.perfetto.dev); implies --profile\n"
           "  --rotate   buffer sets rotated per run (default on cuda: enough to pass\n"
           "             128 MiB, at most 8, so small inputs do not live in L2; ref: 1)\n"
           "  --csv      writes one row per point: label, shapes, the swept symbol's value, p50/p90/\n"
           "             p99/mean/min ms, host and first-call us, samples/s, memory bytes and\n"
           "             its source (measured on cuda, else the formula: see below)\n"
           "  --plot F   with --sweep: latency (p50) and memory against the first symbol of the\n"
           "             template, one point per level, as an SVG (no other program needed)\n"
           "  --json     writes every number (p50/p90/p99/mean/min ms, host_us, first_us,\n"
           "             throughput = leading dim of the first input / p50, per second;\n"
           "             on cuda mem_measured_bytes and mem_formula_bytes, see below)\n"
           "Memory (cuda): 'mem MiB' is the device memory the context holds after the point\n"
           "(cuMemGetInfo: free before the context minus the least free since), 'formula'\n"
           "what `symc inspect` predicts for it: weights + activation workspace formula\n"
           "(largest over the points so far: the workspace only grows) + cuBLASLt workspace.\n"
           "Inputs are seeded random values ([-1, 1) for floats), as `symc run` makes them.\n");
}

/* The command line of symc bench. */
typedef struct b_opts {
    const char *engine, *backend, *json, *trace, *plot, *csv;
    const char *shapes[B_MAX_IO], *points[B_MAX_POINTS];
    int n_shapes, n_points, sweep, quiet, graphs, profile, default_stream;
    long iters, warmup, rotate;
    int ref_budget; /* ref with --iters and --warmup left to their defaults: bounded by time */
    uint64_t seed;
    symrt_backend be;
    char fell_back[SYMC_ERROR_MSG_CAP]; /* without --backend and no usable driver: why the ref backend */
} b_opts;

/* Reads the flags into o. Returns -1 to go on, else the exit code: 0 after
 * --help, 2 after a usage error (said on stderr). */
static int b_parse_args(int argc, char **argv, b_opts *o) {
    *o = (b_opts){.backend = NULL, .iters = -1, .warmup = -1, .seed = 1, .graphs = 1};
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            b_help();
            return 0;
        }
        if (!strcmp(argv[i], "--sweep")) o->sweep = 1;
        else if (!strcmp(argv[i], "--quiet")) o->quiet = 1;
        else if (!strcmp(argv[i], "--graphs")) o->graphs = 1;
        else if (!strcmp(argv[i], "--no-graphs")) o->graphs = 0;
        else if ((v = tool_flag(argc, argv, &i, "--stream"))) {
            if (strcmp(v, "own") && strcmp(v, "default")) return b_usage("--stream takes own or default, got '%s'", v);
            o->default_stream = !strcmp(v, "default");
        } else if (!strcmp(argv[i], "--profile")) o->profile = 1;
        else if ((v = tool_flag(argc, argv, &i, "--trace"))) o->trace = v;
        else if ((v = tool_flag(argc, argv, &i, "--shapes"))) {
            if (o->n_shapes == B_MAX_IO) return b_usage("too many --shapes");
            o->shapes[o->n_shapes++] = v;
        } else if ((v = tool_flag(argc, argv, &i, "--point"))) {
            if (o->n_points == B_MAX_POINTS) return b_usage("too many --point");
            o->points[o->n_points++] = v;
        } else if ((v = tool_flag(argc, argv, &i, "--loadEngine"))) {
            if (o->engine) return b_usage("takes one engine, got a second: '%s'", v);
            o->engine = v;
        } else if ((v = tool_flag(argc, argv, &i, "--backend"))) o->backend = v;
        else if ((v = tool_flag(argc, argv, &i, "--json"))) o->json = v;
        else if ((v = tool_flag(argc, argv, &i, "--plot"))) o->plot = v;
        else if ((v = tool_flag(argc, argv, &i, "--csv"))) o->csv = v;
        else if ((v = tool_flag(argc, argv, &i, "--iters")) || (v = tool_flag(argc, argv, &i, "--warmup")) ||
                 (v = tool_flag(argc, argv, &i, "--rotate")) || (v = tool_flag(argc, argv, &i, "--seed"))) {
            char *end;
            long long x = strtoll(v, &end, 10);
            /* the flag itself: argv[i] when given as --flag=value, else the word before the value */
            const char *f = !strncmp(argv[i], "--", 2) ? argv[i] : argv[i - 1];
            size_t fl = strcspn(f, "=");
            if (!*v || *end || x < 0 || x > 10000000)
                return b_usage("%.*s takes a whole number from 0 to 10000000, got '%s'", (int)fl, f, v);
            if (!strncmp(f, "--iters", 7)) {
                if (x < 1) return b_usage("--iters needs at least 1");
                o->iters = (long)x;
            } else if (!strncmp(f, "--warmup", 8)) o->warmup = (long)x;
            else if (!strncmp(f, "--rotate", 8)) {
                if (x < 1 || x > 64) return b_usage("--rotate takes 1 to 64");
                o->rotate = (long)x;
            } else o->seed = (uint64_t)x;
        } else if (argv[i][0] == '-' && trtexec_flag(argv[i])) {
            return b_usage("%s", trtexec_flag(argv[i]));
        } else if (argv[i][0] == '-') {
            if (!strcmp(argv[i], "--shapes") || !strcmp(argv[i], "--point") || !strcmp(argv[i], "--backend") ||
                !strcmp(argv[i], "--json") || !strcmp(argv[i], "--iters") || !strcmp(argv[i], "--warmup") ||
                !strcmp(argv[i], "--rotate") || !strcmp(argv[i], "--seed") || !strcmp(argv[i], "--trace") ||
                !strcmp(argv[i], "--plot") || !strcmp(argv[i], "--csv"))
                return b_usage("%s needs a value", argv[i]);
            return b_usage("unknown flag '%s'", argv[i]);
        } else if (o->engine) return b_usage("takes one engine, got a second: '%s'", argv[i]);
        else o->engine = argv[i];
    }
    if (!o->engine) return b_usage("missing ENGINE.symx");
    if (!o->backend) { /* the GPU when there is one, else the reference backend, as symc run, said once */
        symc_error why = {0};
        o->backend = rt_cuda_driver(&why) ? "cuda" : "ref";
        if (!strcmp(o->backend, "ref")) snprintf(o->fell_back, sizeof o->fell_back, "%s", why.msg);
    }
    if (!strcmp(o->backend, "ref")) o->be = SYMRT_BACKEND_REF;
    else if (!strcmp(o->backend, "cuda")) o->be = SYMRT_BACKEND_CUDA;
    else return b_usage("unknown backend '%s' (cuda or ref)", o->backend);
    if (!o->n_shapes && !o->n_points) return b_usage("needs --shapes or --point");
    if (o->n_points && (o->n_shapes || o->sweep)) return b_usage("--point cannot be mixed with --shapes or --sweep");
    if (o->plot && !o->sweep)
        return b_usage("--plot draws latency and memory across a sweep: it needs --sweep (and --shapes with a symbol)");
    if ((o->profile || o->trace) && o->be != SYMRT_BACKEND_CUDA)
        return b_usage(o->fell_back[0] ? "--profile and --trace time GPU steps: they need a GPU (%s)"
                                       : "--profile and --trace time GPU steps: they need --backend cuda%s",
                       o->fell_back);
    if (o->trace) o->profile = 1;
    o->ref_budget = o->be == SYMRT_BACKEND_REF && o->iters < 0 && o->warmup < 0;
    if (o->iters < 0) o->iters = o->be == SYMRT_BACKEND_CUDA ? 100 : 5;
    if (o->warmup < 0) o->warmup = o->be == SYMRT_BACKEND_CUDA ? 10 : 1;
    return -1;
}

/* Parses every spec before any file is touched, so syntax errors are usage
 * errors: the --shapes into specs[0] and the template tmpl, --point k into
 * specs[1 + k] and parsed[k] (the b_points borrow from specs). Returns 0, or
 * 2 after a usage error. */
static int b_parse_specs(const b_opts *o, fe_point *specs, b_point *tmpl, b_point *parsed) {
    symc_error err = {0};
    for (int k = 0; k < o->n_shapes; k++)
        if (fe_parse_point(&specs[0], "--shapes", o->shapes[k], &err)) return b_usage("%s", err.msg);
    if (b_point_of(&specs[0], tmpl)) return b_usage("--shapes: too many inputs");
    for (int k = 0; k < o->n_points; k++) {
        if (fe_parse_point(&specs[1 + k], "--point", o->points[k], &err)) return b_usage("%s", err.msg);
        if (b_point_of(&specs[1 + k], &parsed[k])) return b_usage("--point: too many inputs");
    }
    return 0;
}

/* The points to time, labelled, into pts: each --point, or the --sweep levels
 * of the template (those that exist and repeat no earlier point), or the
 * template at opt. Returns how many, or -1 with msg (an unknown symbol). */
static int b_points(const symrt_engine *e, const b_opts *o, const b_point *tmpl, const b_point *parsed, b_point *pts,
                    char *msg, size_t cap) {
    int n = 0;
    if (o->n_points) {
        for (int k = 0; k < o->n_points; k++) {
            if (b_resolve(e, &parsed[k], -1, &pts[n], msg, cap)) return -1;
            snprintf(pts[n].label, sizeof pts[n].label, "p%d", k);
            pts[n].level = -1;
            n++;
        }
    } else if (o->sweep) {
        for (int level = 0; level < 5; level++) {
            int s = b_resolve(e, tmpl, level, &pts[n], msg, cap);
            if (s == 2) return -1;
            if (s == 1) continue;
            int dup = 0;
            for (int k = 0; k < n; k++) dup |= b_same(&pts[k], &pts[n]);
            if (dup) continue;
            snprintf(pts[n].label, sizeof pts[n].label, "%s", level_names[level]);
            pts[n].level = level;
            n++;
        }
    } else {
        if (b_resolve(e, tmpl, -1, &pts[0], msg, cap)) return -1;
        snprintf(pts[0].label, sizeof pts[0].label, "shapes");
        pts[0].level = -1;
        n = 1;
    }
    return n;
}

/* --plot and --csv: per point the swept symbol's value (the template's first
 * symbol at the point's level; the point's index without --sweep or
 * symbol) and the memory: measured on CUDA where every point has it, else
 * the engine's formula at the point (weights + activation workspace of the
 * schedule the backend runs + library workspace, tools/memory.h). */
static int b_sweep_series(const b_opts *o, const symrt_engine *e, const b_point *tmpl, const b_run *run,
                          const b_point *pts, const b_result *res, int n, double *x, double *mem, int *measured,
                          char *sym_name, size_t cap, symc_error *err) {
    snprintf(sym_name, cap, "point");
    symrt_symbol_info s = {0};
    int have_sym = 0;
    for (uint32_t k = 0; k < tmpl->n && !have_sym; k++)
        for (int32_t d = 0; d < tmpl->items[k].rank && !have_sym; d++)
            if (tmpl->items[k].sym[d]) {
                uint32_t ns = symrt_engine_num_symbols(e);
                for (uint32_t j = 0; j < ns && !have_sym; j++)
                    have_sym = !symrt_engine_symbol(e, j, &s, NULL) && !strcmp(s.name, tmpl->items[k].sym[d]);
            }
    if (have_sym && o->sweep) snprintf(sym_name, cap, "%s", s.name);
    for (int k = 0; k < n; k++)
        x[k] = have_sym && o->sweep && pts[k].level >= 0 ? (double)b_level(&s, pts[k].level) : k;
    *measured = run->mem != NULL;
    for (int k = 0; k < n; k++) *measured &= res[k].mem;
    if (*measured) {
        for (int k = 0; k < n; k++) mem[k] = (double)res[k].mem_measured;
        return 0;
    }
    uint8_t *bytes = NULL;
    size_t size = 0;
    rt_engine *re = NULL;
    symc_memory m;
    memset(&m, 0, sizeof m);
    int rc = 1;
    int64_t *vals = NULL;
    if (rt_read_file(o->engine, &bytes, &size, err) || rt_engine_decode(bytes, size, &re, err)) goto out;
    if (symc_memory_init(&m, re, run->drv && re->n_steps ? RT_SCHEDULE_STEPS : RT_SCHEDULE_NODES, err)) goto out;
    vals = calloc(re->n_symbols ? re->n_symbols : 1, sizeof *vals);
    if (!vals) {
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int k = 0; k < n; k++) {
        int64_t ws = 0;
        if (b_point_symbols(re, &pts[k], vals) || symc_memory_eval(&m, vals, &ws, err)) {
            if (!err->msg[0]) symc_error_setf(err, SYMC_ERR_INVALID_ARG, "point %s binds no symbol", pts[k].label);
            goto out;
        }
        mem[k] = (double)(m.weights + m.library) + (double)ws;
    }
    rc = 0;
out:
    free(vals);
    symc_memory_free(&m);
    rt_engine_free(re);
    free(bytes);
    return rc;
}

static void b_csv_field(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static int b_write_sweep(const b_opts *o, const symrt_engine *e, const b_point *tmpl, const b_run *run,
                         const char *device, const b_point *pts, const b_result *res, int n, symc_error *err) {
    double *x = calloc((size_t)n, sizeof *x), *mem = calloc((size_t)n, sizeof *mem),
           *lat = calloc((size_t)n, sizeof *lat);
    double *mib = calloc((size_t)n, sizeof *mib);
    const char **labels = calloc((size_t)n, sizeof *labels);
    char sym[64], (*text)[320] = calloc((size_t)n, sizeof *text);
    int measured = 0, rc = 1;
    if (!x || !mem || !lat || !mib || !labels || !text) {
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (b_sweep_series(o, e, tmpl, run, pts, res, n, x, mem, &measured, sym, sizeof sym, err)) goto out;
    const char *mem_kind = measured ? "measured" : "formula";
    if (o->csv) {
        ir_out csv;
        if (ir_out_open(&csv, o->csv, err)) goto out;
        FILE *f = csv.f;
        fprintf(f,
                "label,shapes,%s,p50_ms,p90_ms,p99_ms,mean_ms,min_ms,host_us,first_us,samples_per_s,memory_bytes,"
                "memory_source\n",
                sym);
        for (int k = 0; k < n; k++) {
            char st[2048];
            b_shape_text(&pts[k], st, sizeof st);
            b_csv_field(f, pts[k].label);
            fputc(',', f);
            b_csv_field(f, st);
            fprintf(f, ",%.0f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.0f,%s\n", x[k], res[k].p50, res[k].p90,
                    res[k].p99, res[k].mean, res[k].min, res[k].host_us, res[k].first_us, res[k].throughput, mem[k],
                    mem_kind);
        }
        if (ir_out_close(&csv, err)) goto out;
    }
    if (o->plot) {
        for (int k = 0; k < n; k++) {
            lat[k] = res[k].p50;
            mib[k] = mem[k] / 1048576.0;
            size_t len = (size_t)snprintf(text[k], sizeof text[k], "%s (", pts[k].label);
            b_shape_text(&pts[k], text[k] + len, sizeof text[k] - len - 1);
            len = strlen(text[k]);
            text[k][len] = ')', text[k][len + 1] = '\0';
            labels[k] = text[k];
        }
        char title[512], sub[512], xl[128];
        snprintf(title, sizeof title, "%s: latency and memory across %s", o->engine, sym);
        snprintf(sub, sizeof sub, "%s, %s timer, p50 of %d runs per point", device, run->drv ? "CUDA-event" : "host",
                 run->iters);
        snprintf(xl, sizeof xl, "%s (symbol value at the sweep's levels)", sym);
        tool_plot p = {.title = title,
                       .subtitle = sub,
                       .x_label = xl,
                       .y1_label = "latency p50, ms",
                       .y2_label = measured ? "memory held, MiB (measured)"
                                            : "memory, MiB (formula: weights + workspace)",
                       .y1_name = "latency p50 (ms)",
                       .y2_name = measured ? "memory (MiB, measured)" : "memory (MiB, formula)",
                       .x = x,
                       .y1 = lat,
                       .y2 = mib,
                       .point_labels = labels,
                       .n = n};
        if (tool_plot_svg(o->plot, &p, err)) goto out;
    }
    rc = 0;
out:
    free(x), free(mem), free(lat), free(mib), free(labels), free(text);
    return rc;
}

/* What every point shares, into run: the CUDA driver (*device: its name),
 * the memory baseline and formula (mem, *mem_engine), the context (with CUDA
 * graphs when asked) and the stream. Returns 0 or 1 with err; whatever was
 * made is in run (and *mem_engine) for the caller to release. */
static int b_open(b_run *run, symrt_engine *e, const b_opts *o, rt_engine **mem_engine, symc_memory *mem,
                  const char **device, symc_error *err) {
    *device = "cpu (reference backend)";
    run->e = e;
    if (o->be == SYMRT_BACKEND_CUDA) {
        run->drv = rt_cuda_driver(err);
        if (!run->drv) return 1;
        *device = run->drv->device_name;
    }
    if (run->drv) b_memory_begin(run, o->engine, o->quiet, mem_engine, mem);
    if (symrt_context_create(e, o->be, NULL, &run->c, err)) return 1;
    if (run->mem) {
        size_t fr = 0, total = 0;
        if (!run->drv->ctx_synchronize() && !run->drv->mem_get_info(&fr, &total))
            run->mem_context = run->free0 > fr ? run->free0 - fr : 0;
    }
    if (symrt_context_set_cuda_graphs(run->c, o->graphs, err)) return 1;
    run->graphs = o->graphs && run->drv;
    if (run->drv && !o->default_stream) {
        int cu = run->drv->stream_create(&run->stream, 1 /* CU_STREAM_NON_BLOCKING */);
        if (cu) return symc_error_setf(err, SYMC_ERR_DEVICE, "CUDA driver error %d in cuStreamCreate", cu), 1;
    }
    run->ni = symrt_engine_num_inputs(e);
    run->no = symrt_engine_num_outputs(e);
    run->iters = (int)o->iters;
    run->warmup = (int)o->warmup;
    run->budget_us = o->ref_budget ? 5e6 : 0;
    run->rotate = (int)o->rotate;
    run->seed = o->seed;
    run->profile = o->profile;
    if (o->trace) {
        run->trace = fopen(o->trace, "w");
        if (!run->trace) return symc_error_setf(err, SYMC_ERR_IO, "cannot write --trace file %s", o->trace), 1;
        fprintf(run->trace, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [");
    }
    if (run->ni > B_MAX_IO || run->no > B_MAX_IO)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "more than %d inputs or outputs", B_MAX_IO), 1;
    return 0;
}

static void b_print_header(const b_opts *o, const b_run *run, const char *device) {
    printf("# %s on %s, %s timer, %ld iters after %ld warm-up%s\n", o->engine, device, run->drv ? "CUDA-event" : "host",
           o->iters, o->warmup,
           o->ref_budget           ? " (fewer once the timed runs pass 5 s)"
               : !run->drv         ? ""
               : o->default_stream ? (o->graphs ? ", default stream, CUDA graphs" : ", default stream, no graphs")
                                   : (o->graphs ? ", own stream, CUDA graphs" : ", own stream, no graphs"));
    printf("%-7s %-36s %10s %10s %10s %9s %9s %12s", "point", "shapes", "p50 ms", "p90 ms", "p99 ms", "host us",
           "first us", "samples/s");
    if (run->mem) printf(" %10s %10s", "mem MiB", "formula");
    printf("\n");
    fflush(stdout);
}

static void b_print_row(const b_run *run, const b_point *p, const b_result *x) {
    char st[256];
    b_shape_text(p, st, sizeof st);
    printf("%-7s %-36s %10.4f %10.4f %10.4f %9.1f %9.1f %12.1f", p->label, st, x->p50, x->p90, x->p99, x->host_us,
           x->first_us, x->throughput);
    if (x->mem) printf(" %10.1f %10.1f", x->mem_measured / 1048576.0, x->mem_formula_held / 1048576.0);
    else if (run->mem) printf(" %10s %10s", "?", "?");
    printf("\n");
    if (x->nan_out)
        printf("        warning: %zu NaN elements in the first output (poison not overwritten?)\n", x->nan_out);
    fflush(stdout);
}

int symc_cmd_bench(int argc, char **argv) {
    b_opts o;
    int rc = b_parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    char msg[512] = "";
    b_point tmpl;
    memset(&tmpl, 0, sizeof tmpl);
    fe_point *specs = calloc((size_t)o.n_points + 1, sizeof *specs);
    b_point *parsed = calloc((size_t)(o.n_points ? o.n_points : 1), sizeof *parsed);
    b_point *pts = calloc(B_MAX_POINTS, sizeof *pts);
    b_result *res = calloc(B_MAX_POINTS, sizeof *res);
    if (!specs || !parsed || !pts || !res) {
        free(specs), free(parsed), free(pts), free(res);
        fprintf(stderr, "symc: bench: out of memory\n");
        return 1;
    }
    symrt_engine *e = NULL;
    b_run run = {0};
    rt_engine *mem_engine = NULL; /* the engine decoded again, for the memory formula */
    symc_memory mem;
    symc_error err = {0};
    const char *device;
    int n, failed = -1;
    if ((rc = b_parse_specs(&o, specs, &tmpl, parsed))) goto done;
    if (o.fell_back[0] && !o.quiet)
        fprintf(stderr,
                "symc: bench: no GPU to time on (%s): timing on the reference backend, host time only "
                "(--backend ref says so; --backend cuda insists)\n",
                o.fell_back);
    rc = 1;
    if (tool_check_regular_file(o.engine, "engine", &err) || symrt_engine_load_file(o.engine, &e, &err)) goto fail;
    if ((n = b_points(e, &o, &tmpl, parsed, pts, msg, sizeof msg)) < 0) goto fail_msg;
    if (b_open(&run, e, &o, &mem_engine, &mem, &device, &err)) goto fail;
    for (int k = 0; k < n; k++) /* every point's shapes are valid before any timing */
        if (b_set_shapes(&run, &pts[k], &err)) {
            failed = k;
            goto fail_point;
        }
    if (!o.quiet) b_print_header(&o, &run, device);
    for (int k = 0; k < n; k++) {
        if (b_point_run(&run, &pts[k], k, &res[k], &err)) {
            failed = k;
            goto fail_point;
        }
        b_point_memory(&run, &pts[k], &res[k]);
        if (!o.quiet) b_print_row(&run, &pts[k], &res[k]);
        if (!o.quiet && res[k].first_prof) b_print_first(&res[k]);
        if (!o.quiet && res[k].prof) b_print_profile(&res[k], res[k].p50);
    }
    if (o.json && b_write_json(o.json, o.engine, o.backend, device, &run, pts, res, n, &err)) goto fail;
    if ((o.plot || o.csv) && b_write_sweep(&o, e, &tmpl, &run, device, pts, res, n, &err)) goto fail;
    rc = 0;
    goto done;
fail_point: {
    char m2[SYMC_ERROR_MSG_CAP], st[256];
    snprintf(m2, sizeof m2, "%s", err.msg);
    b_shape_text(&pts[failed], st, sizeof st);
    fprintf(stderr, "symc: bench: point %s (%s): %s\n", pts[failed].label, st, m2);
}
    goto done;
fail_msg:
    fprintf(stderr, "symc: bench: %s\n", msg);
    goto done;
fail:
    fprintf(stderr, "symc: bench: %s\n", err.msg);
done:
    if (run.trace) {
        fprintf(run.trace, "\n]}\n");
        if (fclose(run.trace) && rc == 0) {
            fprintf(stderr, "symc: bench: cannot write --trace file %s\n", o.trace);
            rc = 1;
        }
    }
    for (int k = 0; k < B_MAX_POINTS; k++) free(res[k].prof), free(res[k].first_prof);
    if (run.drv && run.stream) run.drv->stream_destroy(run.stream);
    symrt_context_destroy(run.c);
    symrt_engine_destroy(e);
    if (run.mem) symc_memory_free(run.mem);
    rt_engine_free(mem_engine);
    for (int k = 0; k <= o.n_points; k++) fe_point_free(&specs[k]);
    free(specs);
    free(parsed);
    free(pts);
    free(res);
    return rc;
}
