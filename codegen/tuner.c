/* Build-time tuning of an engine's library steps on the present GPU, at
 * points that cover the declared box of symbol ranges (codegen/tuner.h).
 *
 * The engine tuned is the one cg_build_engine assembles, in memory, before
 * its one encode. The policy is here; the CUDA work goes through the
 * backend's narrow runtime/cuda/cuda_tuning.h. cg_tune_points (tune_points.c)
 * chooses at most CG_TUNE_MAX_POINTS points: opt, max, min, the other
 * corners, each axis through opt, the diagonal's midpoints. At each point
 * the shape program is evaluated (a point that breaks a run-time guard is
 * skipped) and the point bound (buffers and pointers, rt_cuda_tuning_bind),
 * and every library step whose sizes are new gets its problem's signature
 * (the exact cuBLASLt or cuDNN problem as bytes, rt_cuda_tuning_signature).
 * A problem already timed (by another step, at another point, or by an
 * earlier build through the timing cache on disk, codegen/tune_cache.c)
 * takes that result, so a build whose problems are all cached runs nothing.
 * Otherwise the engine is run as a real context would run it: inputs
 * filled with random floats (integer and bool inputs with zeros, so index
 * inputs stay in range), and the whole engine enqueued once so that
 * intermediates hold realistic values (rt_cuda_tuning_run); then the
 * library's candidates (cuBLASLt's
 * heuristic, up to 8; cuDNN's algorithms that fit the workspace cap) are
 * each timed in place through the normal call with the algorithm forced:
 * what the engine runs, a convolution's fused bias, activation and residual
 * included: a warm-up, then 3 to 10 samples of back-to-back runs captured
 * in a CUDA graph and timed with events (so the host's cost of issuing a
 * small call is not mistaken for its GPU time), fewer for long problems or
 * candidates clearly slower than the best so far; the median counts; no
 * more candidates once a step has taken TUNE_STEP_S; a candidate that
 * fails is skipped. The library's own first choice stands unless another
 * is TUNE_MARGIN faster: measured alone, with warm caches, a small edge is
 * noise or does not survive in the model (measured on ResNet-50, where
 * taking every small edge made batch 1 slower than the heuristic).
 *
 * Every winner becomes an rt_tuned entry of its step (sizes, choice, time),
 * sorted by size; the runtime takes the nearest entry per shape
 * (rt_cuda_tune_order), so the points are the step's buckets. A point other than
 * opt that runs out of device memory is skipped with a progress line; no new
 * point starts once TUNE_BUDGET_S has passed, so a build stays inside
 * docs/BENCHMARKS-SUITE.md's 10 s; the timing cache keeps how many points
 * that first build of the job reached, and a later build of the same job
 * tunes at exactly as many (from the cache: the same engine, in a fraction
 * of the time) rather than timing the points the budget left out. Progress: one line per point, then a summary. The
 * entries go into a copy of the steps, installed in the engine with the
 * library versions once the session is gone (the session runs the engine as
 * it was built, so every point's full run uses the heuristic). */
#include "codegen/tuner.h"

#include "codegen/tune_cache.h"
#include "common/clock.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_tuning.h"
#include "runtime/cuda/tuned_pick.h"

#define TUNE_CANDIDATES 8
#define TUNE_WARMUP 1   /* untimed: the first call of an algorithm may load its kernel */
#define TUNE_RUNS_MIN 3 /* timed samples of a candidate, unless it is long or clearly slower */
#define TUNE_RUNS_MAX 10
#define TUNE_CANDIDATE_MS 25.0f /* GPU time after which a candidate's samples stop (>= 1 sample) */
#define TUNE_SAMPLE_MS 0.2f     /* GPU time one sample of back-to-back runs aims at */
#define TUNE_REPS_MAX 16u       /* runs in one sample, at most */
#define TUNE_MARGIN 0.05f       /* how much faster than the library's first choice a candidate must be */
#define TUNE_STEP_S 0.4         /* wall time after which a step's remaining candidates are not timed */
#define TUNE_BUDGET_S 6.0       /* no new point starts after this long */
#define TUNE_VERSION_CAP 32     /* bytes of a library version string */

typedef struct tuner {
    const rt_engine *e;
    const cg_options *opt;
    rt_cuda_tuning *s;
    int64_t *slots;      /* the shape program at the current point */
    rt_step *steps;      /* the copy that gets the entries */
    rt_tuned *entries;   /* CG_TUNE_MAX_POINTS per step */
    uint8_t *algo_store; /* RT_ALGO_MAX bytes per entry */
    uint32_t *n_entries; /* per step */
    int64_t *sizes;      /* per step: its 4 sizes at the current point */
    uint8_t *todo;       /* per step: to be timed at the current point */
    uint32_t *problem;   /* per step: its problem at the current point (index into problems) */
    uint8_t *fresh;      /* per step: that problem is new here (to be timed) */
    uint32_t failed;     /* steps where no candidate ran, over all points */
    /* every problem met so far, by signature: timed once, shared by steps and points */
    struct tune_problem *problems;
    uint32_t n_problems, cap_problems;
    uint32_t timed, shared, cached; /* results timed here, shared within the build, read from the cache */
    int64_t *done;                  /* the points tuned at, n_symbols values each, in order (the engine's) */
    uint32_t n_done;
    cg_tune_cache *cache; /* the timing cache on disk (NULL: none) */
} tuner;

typedef struct tune_problem {
    uint64_t hash;
    size_t len;
    uint8_t sig[RT_TUNING_SIGNATURE_MAX];
    uint8_t algo[RT_ALGO_MAX];
    uint32_t algo_size;
    float ms;
    int found; /* 0: no candidate ran (the heuristic serves) */
} tune_problem;

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median GPU time of one run of a library step with `algo` forced; < 0
 * when it fails. best: the best median so far (0: none), to stop early on
 * a clear loser. After a warm-up, one run alone (a graph of one) says how
 * many back-to-back runs make a sample of about TUNE_SAMPLE_MS (1 to
 * TUNE_REPS_MAX); samples: TUNE_RUNS_MIN to TUNE_RUNS_MAX, fewer once
 * TUNE_CANDIDATE_MS of GPU time is spent (a 20 ms GEMM times precisely in
 * one or two), or once the candidate is clearly slower than the best (2x
 * after one sample, 1.25x after TUNE_RUNS_MIN). */
static float time_candidate(tuner *t, uint32_t step, const uint8_t *algo, float best) {
    float times[TUNE_RUNS_MAX], total = 0, fastest = 0, one = 0;
    int runs = 0;
    symc_error e = {0}; /* a candidate that fails is skipped, not an error */
    for (int i = 0; i < TUNE_WARMUP; i++)
        if (rt_cuda_tuning_step_run(t->s, step, algo, 0, NULL, &e)) return -1;
    if (rt_cuda_tuning_step_run(t->s, step, algo, 1, &one, &e)) return -1;
    uint32_t reps = one > 0 ? (uint32_t)(TUNE_SAMPLE_MS / one) : TUNE_REPS_MAX;
    if (reps < 1) reps = 1;
    if (reps > TUNE_REPS_MAX) reps = TUNE_REPS_MAX;
    while (runs < TUNE_RUNS_MAX) {
        float x = 0;
        if (rt_cuda_tuning_step_run(t->s, step, algo, reps, &x, &e)) return -1;
        times[runs++] = x;
        total += x * (float)reps;
        if (runs == 1 || x < fastest) fastest = x;
        if (total >= TUNE_CANDIDATE_MS || (best > 0 && fastest > 2.0f * best)) break;
        if (runs >= TUNE_RUNS_MIN && best > 0 && fastest > 1.25f * best) break;
    }
    qsort(times, (size_t)runs, sizeof times[0], cmp_float);
    return times[(runs - 1) / 2]; /* the lower median */
}

static uint64_t hash_bytes(const uint8_t *b, size_t n) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* The problem with this signature met earlier in the build, or NULL. */
static tune_problem *find_problem(tuner *t, const uint8_t *sig, size_t len, uint64_t h) {
    for (uint32_t i = 0; i < t->n_problems; i++) {
        tune_problem *p = &t->problems[i];
        if (p->hash == h && p->len == len && !memcmp(p->sig, sig, len)) return p;
    }
    return NULL;
}

/* Times the candidates of step i at the bound point into p. */
static symc_status time_problem(tuner *t, uint32_t i, tune_problem *p, symc_error *err) {
    uint8_t cand[TUNE_CANDIDATES][RT_ALGO_MAX];
    int n = 0;
    uint32_t algo_size = 0;
    symc_status st = rt_cuda_tuning_candidates(t->s, i, &cand[0][0], TUNE_CANDIDATES, &n, &algo_size, err);
    if (st) return st;
    int best = -1;
    float best_ms = 0, first_ms = -1;
    double start = symc_now_s();
    for (int k = 0; k < n; k++) {
        if (best >= 0 && symc_now_s() - start > TUNE_STEP_S) break; /* a huge problem: keep the best so far */
        float ms = time_candidate(t, i, cand[k], best < 0 ? 0 : best_ms);
        if (k == 0) first_ms = ms;
        if (ms >= 0 && (best < 0 || ms < best_ms)) best = k, best_ms = ms;
    }
    /* the library's own first choice stands unless another is clearly faster: a small edge
     * measured in isolation (warm caches, no neighbours) does not survive in the model */
    if (best > 0 && first_ms > 0 && best_ms > (1.0f - TUNE_MARGIN) * first_ms) best = 0, best_ms = first_ms;
    p->found = best >= 0;
    if (best >= 0) {
        memcpy(p->algo, cand[best], algo_size);
        p->algo_size = algo_size;
        p->ms = best_ms;
    }
    return SYMC_OK;
}

/* The problem step i solves at the bound point, as an index into
 * t->problems: one met earlier in the build (shared), one the timing cache
 * has (found), or a new one still to time (*fresh = 1). */
static symc_status problem_of(tuner *t, uint32_t i, uint32_t *index, int *fresh, symc_error *err) {
    *fresh = 0;
    uint8_t sig[RT_TUNING_SIGNATURE_MAX];
    size_t len = 0;
    symc_status st = rt_cuda_tuning_signature(t->s, i, sig, sizeof sig, &len, err);
    if (st) return st;
    uint64_t h = hash_bytes(sig, len);
    tune_problem *p = find_problem(t, sig, len, h);
    if (p) {
        t->shared++;
        *index = (uint32_t)(p - t->problems);
        return SYMC_OK;
    }
    if (t->n_problems == t->cap_problems) {
        uint32_t cap = t->cap_problems ? 2 * t->cap_problems : 64;
        tune_problem *grown = realloc(t->problems, cap * sizeof *grown);
        if (!grown) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
        t->problems = grown;
        t->cap_problems = cap;
    }
    p = &t->problems[t->n_problems];
    memset(p, 0, sizeof *p);
    p->hash = h;
    p->len = len;
    memcpy(p->sig, sig, len);
    if (cg_tune_cache_get(t->cache, sig, len, p->algo, &p->algo_size, &p->ms)) {
        p->found = p->algo_size > 0; /* 0: no candidate ran when it was timed */
        t->cached++;
    } else *fresh = 1;
    *index = t->n_problems++;
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

static int library_step(const rt_step *s) { return s->kind == RT_STEP_GEMM || s->kind == RT_STEP_CONV; }

/* One point: run the engine there, then time every library step whose sizes
 * are new. */
static symc_status tune_point(tuner *t, const int64_t *values, const char *label, const char *kind, uint32_t k,
                              uint32_t np, symc_error *err) {
    const rt_engine *e = t->e;
    symc_status st = sym_program_eval(e->program, e->program_size, values, e->n_symbols, t->slots, e->num_slots, err);
    if (st) {
        symc_error_prefix(err, "evaluating the shape program");
        return st;
    }
    uint32_t g = cg_tune_guard_broken(e, t->slots);
    if (g != RT_NONE) {
        cg_progress(t->opt, "not tuning at %s (%s, %u/%u): it breaks a condition of the model: %s", label, kind, k + 1,
                    np, e->guards[g].message);
        return SYMC_OK;
    }
    if ((st = rt_cuda_tuning_bind(t->s, t->slots, err))) return st;
    uint32_t n_gemm = 0, n_conv = 0, n_known = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        t->todo[i] = 0;
        if (!library_step(&e->steps[i])) continue;
        int64_t *sz = &t->sizes[(size_t)i * 4];
        if ((st = rt_cuda_tune_sizes(e, i, t->slots, sz, err))) return st;
        int empty = e->steps[i].kind == RT_STEP_GEMM ? (sz[0] == 0 || sz[1] == 0 || sz[3] == 0)
                                                     : (sz[0] == 0 || sz[1] == 0 || sz[2] == 0);
        if (empty) continue;
        int known = 0;
        for (uint32_t j = 0; j < t->n_entries[i] && !known; j++)
            known = !memcmp(t->entries[(size_t)i * CG_TUNE_MAX_POINTS + j].at, sz, 4 * sizeof *sz);
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
    cg_progress(t->opt, "tuning at %s (%s, %u/%u): %u GEMM steps, %u conv%s", label, kind, k + 1, np, n_gemm, n_conv,
                known_note);
    /* each step's problem; the engine runs here only when one is new to the build and the cache */
    int need_run = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        if (!t->todo[i] || t->n_entries[i] >= CG_TUNE_MAX_POINTS) continue;
        int fresh = 0;
        if ((st = problem_of(t, i, &t->problem[i], &fresh, err))) return st;
        t->fresh[i] = (uint8_t)fresh;
        need_run |= fresh;
    }
    if (need_run && (st = rt_cuda_tuning_run(t->s, 0x9e3779b97f4a7c15ull + k, err))) return st;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        if (!t->todo[i] || t->n_entries[i] >= CG_TUNE_MAX_POINTS) continue;
        tune_problem *p = &t->problems[t->problem[i]];
        if (t->fresh[i]) {
            if ((st = time_problem(t, i, p, err))) return st;
            cg_tune_cache_put(t->cache, p->sig, p->len, p->algo, p->found ? p->algo_size : 0, p->ms);
            t->timed++;
        }
        size_t slot = (size_t)i * CG_TUNE_MAX_POINTS + t->n_entries[i];
        rt_tuned *out = &t->entries[slot];
        uint8_t *algo = &t->algo_store[slot * RT_ALGO_MAX];
        memset(out, 0, sizeof *out);
        memcpy(out->at, &t->sizes[(size_t)i * 4], sizeof out->at);
        if (!p->found) {
            t->failed++;
            continue;
        }
        memcpy(algo, p->algo, p->algo_size);
        out->algo = algo;
        out->algo_size = p->algo_size;
        out->ms = p->ms;
        t->n_entries[i]++;
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

/* The tuner's arrays, in the build's arena (the steps and entries become the engine's). */
static symc_status alloc_tuner(tuner *t, cm_arena *a, int64_t **points, symc_error *err) {
    const rt_engine *e = t->e;
    size_t n_entries = (size_t)e->n_steps * CG_TUNE_MAX_POINTS;
    *points = cm_arena_calloc(a, (size_t)CG_TUNE_MAX_POINTS * e->n_symbols + 1, sizeof **points);
    t->slots = cm_arena_calloc(a, (size_t)e->num_slots + 1, sizeof *t->slots);
    t->steps = cm_arena_calloc(a, (size_t)e->n_steps + 1, sizeof *t->steps);
    t->entries = cm_arena_calloc(a, n_entries + 1, sizeof *t->entries);
    t->algo_store = cm_arena_calloc(a, n_entries * RT_ALGO_MAX + 1, 1);
    t->n_entries = cm_arena_calloc(a, (size_t)e->n_steps + 1, sizeof *t->n_entries);
    t->sizes = cm_arena_calloc(a, (size_t)e->n_steps * 4 + 1, sizeof *t->sizes);
    t->todo = cm_arena_calloc(a, (size_t)e->n_steps + 1, 1);
    t->problem = cm_arena_calloc(a, (size_t)e->n_steps + 1, sizeof *t->problem);
    t->fresh = cm_arena_calloc(a, (size_t)e->n_steps + 1, 1);
    t->done = cm_arena_calloc(a, (size_t)CG_TUNE_MAX_POINTS * e->n_symbols + 1, sizeof *t->done);
    if (!*points || !t->slots || !t->steps || !t->entries || !t->algo_store || !t->n_entries || !t->sizes || !t->todo ||
        !t->problem || !t->fresh || !t->done)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
    if (e->n_steps) memcpy(t->steps, e->steps, e->n_steps * sizeof *t->steps);
    return SYMC_OK;
}

/* The bytes that identify this tuning job for the timing cache's point
 * count (cg_tune_cache_get_points): the points, then every library step's
 * problem signature at the first point (opt), in step order; NULL when out
 * of memory (then no count is read or kept). The caller frees it. */
static uint8_t *job_bytes(const tuner *t, const int64_t *points, uint32_t np, size_t *len) {
    const rt_engine *e = t->e;
    size_t n = 8 + (size_t)np * e->n_symbols * sizeof *points;
    for (uint32_t i = 0; i < e->n_steps; i++) n += 8 + (t->todo[i] ? t->problems[t->problem[i]].len : 0);
    uint8_t *b = malloc(n), *at = b;
    if (!b) return NULL;
    uint32_t head[2] = {np, e->n_symbols};
    memcpy(at, head, 8), at += 8;
    memcpy(at, points, (size_t)np * e->n_symbols * sizeof *points), at += (size_t)np * e->n_symbols * sizeof *points;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        const tune_problem *p = t->todo[i] ? &t->problems[t->problem[i]] : NULL;
        uint32_t step[2] = {i, p ? (uint32_t)p->len : 0};
        memcpy(at, step, 8), at += 8;
        if (p) memcpy(at, p->sig, p->len), at += p->len;
    }
    *len = n;
    return b;
}

/* Every point in turn, within the budget; then the entries into t->steps
 * and the summary line. The number of points is the first build's: a
 * build whose job the timing cache knows (the same points and problems on
 * the same GPU and libraries) tunes at as many points as that build did,
 * so it makes the same engine from the cache, quickly; only the first
 * build of a job is cut by the time budget, and its count is kept. To tune
 * at more points, build with a fresh cache (SYMC_CACHE_DIR). */
static symc_status run_points(tuner *t, const int64_t *points, const uint8_t *kinds, uint32_t np, double start,
                              symc_error *err) {
    const rt_engine *e = t->e;
    uint32_t recorded = 0;
    uint8_t *job = NULL;
    size_t job_len = 0;
    int known = 0, cut = 0;
    for (uint32_t k = 0; k < np; k++) {
        const int64_t *values = points + (size_t)k * e->n_symbols;
        const char *kind = cg_tune_point_name((cg_tune_point_kind)kinds[k]);
        char label[160];
        point_label(e, values, label, sizeof label);
        if (k == 1 && t->cache && (job = job_bytes(t, points, np, &job_len)))
            known = cg_tune_cache_get_points(t->cache, job, job_len, &recorded);
        if (k > 0 && known && k >= recorded) {
            cg_progress(t->opt,
                        "tuning: stopping after %u of %u points, as this model's first build on this GPU did (the "
                        "timing cache holds its results: the same engine)",
                        k, np);
            break;
        }
        if (k > 0 && !known && symc_now_s() - start > TUNE_BUDGET_S) {
            cg_progress(t->opt,
                        "tuning: stopping after %u of %u points (%.1f s spent, budget %.0f s); the heuristic serves "
                        "sizes far from them",
                        k, np, symc_now_s() - start, TUNE_BUDGET_S);
            cut = 1;
            if (job) cg_tune_cache_put_points(t->cache, job, job_len, k);
            break;
        }
        symc_status st = tune_point(t, values, label, kind, k, np, err);
        if ((st == SYMC_ERR_NOMEM || st == SYMC_ERR_RANGE) && kinds[k] != CG_POINT_OPT) {
            /* NOMEM: the next point's run frees this one's buffers first. RANGE: the
             * point's sizes together are not what the model is fed (symbols the graph
             * ties without a guard, e.g. a KV cache's mask length T = past P + new S,
             * so a gather index falls outside its axis); a point is a sample, not a
             * promise: skip it */
            cg_progress(t->opt, "not tuning at %s (%s, %u/%u): %s", label, kind, k + 1, np, err->msg);
            continue;
        }
        if (st) {
            symc_error_prefix(err, "tuning at %s (%s)", label, kind);
            free(job);
            return st;
        }
        memcpy(t->done + (size_t)t->n_done++ * e->n_symbols, values, e->n_symbols * sizeof *values);
    }
    if (job && !known && !cut) cg_tune_cache_put_points(t->cache, job, job_len, np);
    free(job);
    uint32_t total = 0, n_lib = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        if (!library_step(&e->steps[i])) continue;
        n_lib++;
        rt_tuned *v = &t->entries[(size_t)i * CG_TUNE_MAX_POINTS];
        sort_entries(v, t->n_entries[i]);
        t->steps[i].n_tuned = t->n_entries[i];
        t->steps[i].tuned = t->n_entries[i] ? v : NULL;
        total += t->n_entries[i];
    }
    cg_progress(t->opt,
                "tuned %u library steps at %u of %u points in %.1f s: %u entries, %u distinct problems (%u timed, %u "
                "from the timing cache), %u shared between steps and points%s",
                n_lib, t->n_done, np, symc_now_s() - start, total, t->n_problems, t->timed, t->cached, t->shared,
                t->failed ? " (some problems had no candidate that ran; the heuristic serves them)" : "");
    return SYMC_OK;
}

/* Tunes on a GPU known to be of e's SM. */
static symc_status tune(rt_engine *e, cm_arena *a, const cg_options *opt, symc_error *err) {
    tuner t;
    memset(&t, 0, sizeof t);
    t.e = e;
    t.opt = opt;
    double start = symc_now_s();
    int64_t *points = NULL;
    symc_status st = alloc_tuner(&t, a, &points, err);
    if (st) return st;
    uint8_t kinds[CG_TUNE_MAX_POINTS];
    uint32_t np = cg_tune_points(e->symbols, e->n_symbols, CG_TUNE_MAX_POINTS, points, kinds);
    int has_gemm = 0, has_conv = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        has_gemm |= e->steps[i].kind == RT_STEP_GEMM;
        has_conv |= e->steps[i].kind == RT_STEP_CONV;
    }
    char *lt_version = has_gemm ? cm_arena_calloc(a, TUNE_VERSION_CAP, 1) : NULL;
    char *dnn_version = has_conv ? cm_arena_calloc(a, TUNE_VERSION_CAP, 1) : NULL;
    if ((has_gemm && !lt_version) || (has_conv && !dnn_version))
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
    if ((st = rt_cuda_tuning_create(e, &t.s, err))) return st;
    rt_cuda_tuning_versions(lt_version, TUNE_VERSION_CAP, dnn_version, TUNE_VERSION_CAP);
    char device[320], where[400];
    rt_cuda_tuning_device(device, sizeof device);
    t.cache = cg_tune_cache_open(device, lt_version, dnn_version, where, sizeof where);
    cg_progress(opt, "tuning on %s at up to %u points; timing cache: %s", device, np, where);
    st = run_points(&t, points, kinds, np, start, err);
    rt_cuda_tuning_destroy(t.s);
    cg_tune_cache_close(t.cache);
    free(t.problems);
    if (st) return st;
    e->steps = t.steps;
    e->tuned_points = t.n_done ? t.done : NULL; /* what symrt_context_warm runs */
    e->n_tuned_points = t.n_done;
    if (lt_version) e->cublas_version = lt_version;
    if (dnn_version) e->cudnn_version = dnn_version;
    return SYMC_OK;
}

symc_status cg_tune_engine(rt_engine *e, cm_arena *a, const cg_options *opt, symc_error *err) {
    int has_library = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) has_library |= library_step(&e->steps[i]);
    uint32_t sm;
    symc_error quiet;
    if (!has_library || rt_cuda_device_sm(&sm, &quiet) != SYMC_OK) return SYMC_OK;
    if (sm != e->sm) {
        cg_progress(opt, "not tuning: the GPU here is sm_%u, the engine targets sm_%u", sm, e->sm);
        return SYMC_OK;
    }
    symc_error local;
    if (!err) err = &local; /* the point loop reads the message of a point it skips */
    symc_status st = tune(e, a, opt, err);
    if (st) symc_error_prefix(err, "tuning library calls");
    return st;
}
