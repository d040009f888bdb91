/* Build-time tuning of an engine's library steps on the present GPU, at opt
 * and at a few bucket representatives of the symbol ranges.
 *
 * rt_tune_points (runtime/tune.h) chooses at most RT_TUNE_MAX_POINTS points
 * along one path min -> opt -> max (opt first, then the ends, then the
 * geometric midpoints). At each point the engine is run as a real context
 * would run it: the shape program evaluated for the point (a point that
 * breaks a run-time guard is skipped), inputs filled with random floats
 * (integer and bool inputs with zeros, so index inputs stay in range), and
 * the whole engine enqueued once so that intermediates hold realistic
 * values. Then, for each GEMM step, the cuBLASLt heuristic's candidates (up
 * to 8) are each timed in place through the normal GEMM path with the
 * algorithm forced (a warm-up, then 3 to 10 runs timed with events, fewer
 * for long problems or candidates clearly slower than the best so far; the
 * median counts; no more candidates once a step has taken TUNE_STEP_S); a
 * candidate that fails is skipped. For each CONV step
 * cudnnFindConvolutionForwardAlgorithmEx times cuDNN's algorithms itself. A
 * step whose sizes do not change between points (a part of the model the
 * symbols do not reach) is timed once.
 *
 * Every winner becomes an rt_tuned entry of its step (sizes, choice, time),
 * sorted by size; the runtime picks among them per shape with rt_tune_pick.
 * A point other than opt that runs out of device memory is skipped with a
 * progress line; no new point starts once TUNE_BUDGET_S has passed, so a
 * build stays inside BENCH.md's 10 s. Progress: one line per point, then a
 * summary. The engine is encoded again with the entries and the library
 * versions. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/cuda/cuda_internal.h"
#include "runtime/ref/ref_kernels.h"
#include "runtime/cuda/tune.h"

#define TUNE_CANDIDATES 8
#define TUNE_WARMUP 1           /* untimed: the first call of an algorithm may load its kernel */
#define TUNE_RUNS_MIN 3         /* timed runs of a candidate, unless it is long or clearly slower */
#define TUNE_RUNS_MAX 10
#define TUNE_CANDIDATE_MS 25.0f /* GPU time after which a candidate's runs stop (>= 1 run) */
#define TUNE_STEP_S 0.4         /* wall time after which a step's remaining candidates are not timed */
#define TUNE_BUDGET_S 6.0       /* no new point starts after this long */

typedef struct tuner {
    rt_engine *e;
    rt_cuda *c;
    int64_t *slots;
    void **addr;
    CUdeviceptr *bufs;    /* per tensor: our input/output buffers at the current point */
    rt_step *steps;       /* the mutable copy */
    rt_tuned *entries;    /* RT_TUNE_MAX_POINTS per step */
    uint8_t *algo_store;  /* RT_ALGO_MAX bytes per entry */
    uint32_t *n_entries;  /* per step */
    int64_t *sizes;       /* per step: its 4 sizes at the current point */
    uint8_t *todo;        /* per step: to be timed at the current point */
    uint32_t failed;      /* steps where no candidate ran, over all points */
    CUevent ev[2];
    void (*progress)(void *, const char *);
    void *progress_ctx;
} tuner;

static void say(tuner *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(tuner *t, const char *fmt, ...) {
    if (!t->progress) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    t->progress(t->progress_ctx, buf);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* xorshift: reproducible data without touching the process's rand() */
static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static symc_status fill_random(tuner *t, uint32_t tensor, size_t bytes, uint64_t *seed, symc_error *err) {
    const rt_tensor *x = &t->e->tensors[tensor];
    uint8_t *h = calloc(bytes ? bytes : 1, 1);
    if (!h) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory making tuning data for '%s'", x->name);
    size_t n = bytes / (rt_dtype_size(x->dtype) ? rt_dtype_size(x->dtype) : 1);
    for (size_t i = 0; i < n; i++) {
        float v = (float)((double)(next_random(seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        switch (x->dtype) {
        case SYMC_F32: memcpy(h + 4 * i, &v, 4); break;
        case SYMC_F64: {
            double d = v;
            memcpy(h + 8 * i, &d, 8);
            break;
        }
        case SYMC_F16: {
            uint16_t b = rt_ref_f32_to_f16(v);
            memcpy(h + 2 * i, &b, 2);
            break;
        }
        case SYMC_BF16: {
            uint16_t b = rt_ref_f32_to_bf16(v);
            memcpy(h + 2 * i, &b, 2);
            break;
        }
        default: break; /* integers and bools stay 0: valid indices and shapes */
        }
    }
    symc_status st = bytes ? RT_CU(err, MemcpyHtoD, (t->bufs[tensor], h, bytes)) : SYMC_OK;
    free(h);
    return st;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median time of one GEMM step with `algo` forced; < 0 when it fails.
 * best: the best median so far (0: none), to stop early on a clear loser.
 * Runs: TUNE_RUNS_MIN to TUNE_RUNS_MAX, fewer once TUNE_CANDIDATE_MS of GPU
 * time is spent (a 20 ms GEMM times precisely in one or two runs), or once
 * the candidate is clearly slower than the best (2x after one run, 1.25x
 * after TUNE_RUNS_MIN). */
static float time_gemm(tuner *t, uint32_t step, const cublasLtMatmulAlgo_t *algo, float best) {
    rt_cuda *c = t->c;
    c->force = (rt_cuda_force){step, algo};
    float times[TUNE_RUNS_MAX], ms = -1, total = 0, fastest = 0;
    int runs = 0;
    symc_error e = {0};
    for (int i = 0; i < TUNE_WARMUP; i++)
        if (rt_gemm_run(c, step, t->slots, NULL, &e)) goto done;
    if (rt_cu.CtxSynchronize() != CUDA_SUCCESS) goto done;
    while (runs < TUNE_RUNS_MAX) {
        float x = 0;
        if (rt_cu.EventRecord(t->ev[0], NULL) != CUDA_SUCCESS || rt_gemm_run(c, step, t->slots, NULL, &e) ||
            rt_cu.EventRecord(t->ev[1], NULL) != CUDA_SUCCESS || rt_cu.EventSynchronize(t->ev[1]) != CUDA_SUCCESS ||
            rt_cu.EventElapsedTime(&x, t->ev[0], t->ev[1]) != CUDA_SUCCESS)
            goto done;
        times[runs++] = x;
        total += x;
        if (runs == 1 || x < fastest) fastest = x;
        if (total >= TUNE_CANDIDATE_MS || (best > 0 && fastest > 2.0f * best)) break;
        if (runs >= TUNE_RUNS_MIN && best > 0 && fastest > 1.25f * best) break;
    }
    qsort(times, (size_t)runs, sizeof times[0], cmp_float);
    ms = times[(runs - 1) / 2]; /* the lower median */
done:
    c->force = (rt_cuda_force){0, NULL};
    return ms;
}

/* The fastest candidate of GEMM step i at the current point into *out
 * (*found = 0 when none ran: the runtime heuristic then serves there). */
static symc_status tune_gemm(tuner *t, uint32_t i, rt_tuned *out, uint8_t *algo, int *found, symc_error *err) {
    *found = 0;
    cublasLtMatmulAlgo_t cand[TUNE_CANDIDATES];
    int n = 0;
    symc_status st = rt_gemm_candidates(t->c, i, t->slots, cand, TUNE_CANDIDATES, &n, err);
    if (st) return st;
    int best = -1;
    float best_ms = 0;
    double start = now_s();
    for (int k = 0; k < n; k++) {
        if (best >= 0 && now_s() - start > TUNE_STEP_S) break; /* a huge problem: keep the best so far */
        float ms = time_gemm(t, i, &cand[k], best < 0 ? 0 : best_ms);
        if (ms >= 0 && (best < 0 || ms < best_ms)) best = k, best_ms = ms;
    }
    if (best < 0) return SYMC_OK;
    memcpy(algo, &cand[best], sizeof cand[best]);
    out->algo = algo;
    out->algo_size = (uint32_t)sizeof cand[best];
    out->ms = best_ms;
    *found = 1;
    return SYMC_OK;
}

static symc_status tune_conv(tuner *t, uint32_t i, rt_tuned *out, uint8_t *algo, int *found, symc_error *err) {
    *found = 0;
    int32_t id;
    float ms;
    int n;
    symc_status st = rt_conv_find(t->c, i, t->slots, &id, &ms, &n, err);
    if (st || id < 0) return st; /* id < 0: an empty convolution here */
    memcpy(algo, &id, sizeof id);
    out->algo = algo;
    out->algo_size = (uint32_t)sizeof id;
    out->ms = ms > 0 ? ms : 0;
    *found = 1;
    return SYMC_OK;
}

/* "B=8,S=128": the symbols that vary (all of them when none does) */
static void point_label(const rt_engine *e, const int64_t *values, char *buf, size_t cap) {
    size_t len = 0;
    int any = 0;
    buf[0] = '\0';
    for (int pass = 0; pass < 2 && !any; pass++)
        for (uint32_t s = 0; s < e->n_symbols; s++) {
            if (pass == 0 && e->symbols[s].min == e->symbols[s].max) continue;
            int n = snprintf(buf + len, cap - len, "%s%s=%" PRId64, any ? "," : "", e->symbols[s].name, values[s]);
            any = 1;
            if (n < 0 || (size_t)n >= cap - len) {
                if (cap > 4) memcpy(buf + cap - 4, "...", 4);
                return;
            }
            len += (size_t)n;
        }
    if (!any) snprintf(buf, cap, "the static shape");
}

static void release_io(tuner *t) {
    if (!t->c) return;
    rt_cu.CtxSynchronize();
    for (uint32_t i = 0; i < t->e->n_tensors; i++) {
        rt_cuda_free(t->c, t->bufs[i]);
        t->bufs[i] = 0;
        t->addr[i] = NULL;
    }
}

static int library_step(const rt_step *s) { return s->kind == RT_STEP_GEMM || s->kind == RT_STEP_CONV; }

/* One point: run the engine there, then time every library step whose sizes
 * are new. */
static symc_status tune_point(tuner *t, const int64_t *values, const char *label, const char *kind, uint32_t k,
                              uint32_t np, symc_error *err) {
    rt_engine *e = t->e;
    symc_status st = sym_program_eval(e->program, e->program_size, values, e->n_symbols, t->slots, e->num_slots, err);
    if (st) {
        symc_error_prefix(err, "evaluating the shape program");
        return st;
    }
    uint32_t g = rt_tune_guard_broken(e, t->slots);
    if (g != RT_NONE) {
        say(t, "not tuning at %s (%s, %u/%u): it breaks a condition of the model: %s", label, kind, k + 1, np,
            e->guards[g].message);
        return SYMC_OK;
    }
    release_io(t);
    uint64_t seed = 0x9e3779b97f4a7c15ull + k;
    for (uint32_t i = 0; i < e->n_tensors; i++) {
        if (!rt_engine_is_io(e, i) || e->tensors[i].constant != RT_NONE) continue;
        size_t n = rt_cuda_tensor_bytes(e, t->slots, i);
        if (n == SIZE_MAX) return symc_error_setf(err, SYMC_ERR_OVERFLOW, "tensor '%s' is too large", e->tensors[i].name);
        if ((st = rt_cuda_alloc(t->c, n, &t->bufs[i], "a tuning buffer", err))) return st;
        t->addr[i] = (void *)(uintptr_t)t->bufs[i];
        if ((st = fill_random(t, i, n, &seed, err))) return st;
    }
    /* one full run: checks the engine and gives intermediates real values */
    if ((st = rt_cuda_enqueue(t->c, t->slots, 1, t->addr, NULL, NULL, err))) {
        symc_error_prefix(err, "running the engine");
        return st;
    }
    if ((st = RT_CU(err, CtxSynchronize, ()))) return st;
    uint32_t n_gemm = 0, n_conv = 0, n_known = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        t->todo[i] = 0;
        if (!library_step(&e->steps[i])) continue;
        int64_t *sz = &t->sizes[(size_t)i * 4];
        if ((st = rt_tune_sizes(e, i, t->slots, sz, err))) return st;
        int empty = e->steps[i].kind == RT_STEP_GEMM ? (sz[0] == 0 || sz[1] == 0 || sz[3] == 0)
                                                     : (sz[0] == 0 || sz[1] == 0 || sz[2] == 0);
        if (empty) continue;
        int known = 0;
        for (uint32_t j = 0; j < t->n_entries[i] && !known; j++)
            known = !memcmp(t->entries[(size_t)i * RT_TUNE_MAX_POINTS + j].at, sz, 4 * sizeof *sz);
        if (known) {
            n_known++;
            continue;
        }
        t->todo[i] = 1;
        if (e->steps[i].kind == RT_STEP_GEMM) n_gemm++;
        else n_conv++;
    }
    char known_note[64] = "";
    if (n_known) snprintf(known_note, sizeof known_note, " (%u already tuned at these sizes)", n_known);
    say(t, "tuning at %s (%s, %u/%u): %u GEMM steps, %u conv%s", label, kind, k + 1, np, n_gemm, n_conv, known_note);
    for (uint32_t i = 0; i < e->n_steps; i++) {
        if (!t->todo[i] || t->n_entries[i] >= RT_TUNE_MAX_POINTS) continue;
        size_t slot = (size_t)i * RT_TUNE_MAX_POINTS + t->n_entries[i];
        rt_tuned *out = &t->entries[slot];
        uint8_t *algo = &t->algo_store[slot * RT_ALGO_MAX];
        int found = 0;
        memset(out, 0, sizeof *out);
        memcpy(out->at, &t->sizes[(size_t)i * 4], sizeof out->at);
        st = e->steps[i].kind == RT_STEP_GEMM ? tune_gemm(t, i, out, algo, &found, err)
                                              : tune_conv(t, i, out, algo, &found, err);
        if (st) return st;
        if (found) t->n_entries[i]++;
        else t->failed++;
    }
    return SYMC_OK;
}

/* entries of one step by size, smallest first (for reading; the pick does not care) */
static void sort_entries(rt_tuned *v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++) {
        rt_tuned x = v[i];
        uint32_t j = i;
        while (j > 0) {
            const int64_t *a = v[j - 1].at;
            int greater = 0;
            for (int d = 0; d < 4; d++)
                if (a[d] != x.at[d]) {
                    greater = a[d] > x.at[d];
                    break;
                }
            if (!greater) break;
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

symc_status rt_cuda_tune(const uint8_t *bytes, size_t size, uint8_t **out, size_t *out_size,
                         void (*progress)(void *ctx, const char *msg), void *progress_ctx, symc_error *err) {
    if (!bytes || !out || !out_size) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_tune: NULL argument");
    *out = NULL;
    *out_size = 0;
    tuner t;
    memset(&t, 0, sizeof t);
    t.progress = progress;
    t.progress_ctx = progress_ctx;
    symc_status st = rt_engine_decode(bytes, size, &t.e, err);
    if (st) return st;
    rt_engine *e = t.e;
    double start = now_s();
    size_t n_entries = (size_t)e->n_steps * RT_TUNE_MAX_POINTS;
    int64_t *points = calloc((size_t)RT_TUNE_MAX_POINTS * e->n_symbols + 1, sizeof *points);
    t.slots = calloc(e->num_slots + 1, sizeof *t.slots);
    t.addr = calloc(e->n_tensors + 1, sizeof *t.addr);
    t.bufs = calloc(e->n_tensors + 1, sizeof *t.bufs);
    t.steps = calloc(e->n_steps + 1, sizeof *t.steps);
    t.entries = calloc(n_entries + 1, sizeof *t.entries);
    t.algo_store = calloc(n_entries * RT_ALGO_MAX + 1, 1);
    t.n_entries = calloc(e->n_steps + 1, sizeof *t.n_entries);
    t.sizes = calloc((size_t)e->n_steps * 4 + 1, sizeof *t.sizes);
    t.todo = calloc(e->n_steps + 1, 1);
    if (!points || !t.slots || !t.addr || !t.bufs || !t.steps || !t.entries || !t.algo_store || !t.n_entries ||
        !t.sizes || !t.todo) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
        goto done;
    }
    if (e->n_steps) memcpy(t.steps, e->steps, e->n_steps * sizeof *t.steps);
    uint8_t kinds[RT_TUNE_MAX_POINTS];
    uint32_t np = rt_tune_points(e->symbols, e->n_symbols, RT_TUNE_MAX_POINTS, points, kinds);
    if ((st = rt_cuda_create(e, NULL, &t.c, err))) goto done;
    if ((st = RT_CU(err, EventCreate, (&t.ev[0], CU_EVENT_DEFAULT)))) goto done;
    if ((st = RT_CU(err, EventCreate, (&t.ev[1], CU_EVENT_DEFAULT)))) goto done;
    uint32_t done_points = 0;
    for (uint32_t k = 0; k < np; k++) {
        const int64_t *values = points + (size_t)k * e->n_symbols;
        const char *kind = rt_tune_point_name((rt_tune_point_kind)kinds[k]);
        char label[160];
        point_label(e, values, label, sizeof label);
        if (k > 0 && now_s() - start > TUNE_BUDGET_S) {
            say(&t, "tuning: stopping after %u of %u points (%.1f s spent, budget %.0f s); the heuristic serves "
                    "sizes far from them", k, np, now_s() - start, TUNE_BUDGET_S);
            break;
        }
        st = tune_point(&t, values, label, kind, k, np, err);
        if (st == SYMC_ERR_NOMEM && kinds[k] != RT_POINT_OPT) {
            say(&t, "not tuning at %s (%s, %u/%u): %s", label, kind, k + 1, np, err->msg);
            release_io(&t);
            st = SYMC_OK;
            continue;
        }
        if (st) {
            symc_error_prefix(err, "tuning at %s (%s)", label, kind);
            goto done;
        }
        done_points++;
    }
    int has_gemm = 0, has_conv = 0;
    uint32_t total = 0, n_lib = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        if (!library_step(&e->steps[i])) continue;
        n_lib++;
        has_gemm |= e->steps[i].kind == RT_STEP_GEMM;
        has_conv |= e->steps[i].kind == RT_STEP_CONV;
        rt_tuned *v = &t.entries[(size_t)i * RT_TUNE_MAX_POINTS];
        sort_entries(v, t.n_entries[i]);
        t.steps[i].n_tuned = t.n_entries[i];
        t.steps[i].tuned = t.n_entries[i] ? v : NULL;
        total += t.n_entries[i];
    }
    say(&t, "tuned %u library steps at %u of %u points in %.1f s: %u entries%s", n_lib, done_points, np,
        now_s() - start, total, t.failed ? " (some problems had no candidate that ran; the heuristic serves them)" : "");
    rt_engine copy = *e;
    copy.steps = t.steps;
    copy.owned = NULL;
    char lt_version[32], dnn_version[32];
    if (has_gemm) {
        rt_lt_version(lt_version, sizeof lt_version);
        copy.cublas_version = lt_version;
    }
    if (has_conv) {
        rt_dnn_version(dnn_version, sizeof dnn_version);
        copy.cudnn_version = dnn_version;
    }
    st = rt_engine_encode(&copy, out, out_size, err);
done:
    if (t.c) {
        release_io(&t);
        if (t.ev[0]) rt_cu.EventDestroy(t.ev[0]);
        if (t.ev[1]) rt_cu.EventDestroy(t.ev[1]);
        rt_cuda_destroy(t.c);
    }
    free(t.todo);
    free(t.sizes);
    free(t.n_entries);
    free(t.algo_store);
    free(t.entries);
    free(t.steps);
    free(t.bufs);
    free(t.addr);
    free(t.slots);
    free(points);
    rt_engine_free(e);
    return st;
}
