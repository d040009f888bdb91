/* The pure parts of library tuning (runtime/cuda/tune.h): where to tune, and
 * which tuned entry serves a shape.
 *
 * Points: one path through the symbol ranges, min -> opt -> max, with every
 * symbol moving together, sampled at its ends, at opt and at the geometric
 * midpoints between them (sizes matter to GEMM and convolution algorithms by
 * ratio, not difference). A grid over the symbols would multiply the count
 * by itself per symbol for little gain: the library problems of a model are
 * mostly products of its symbols (m = B*S), which the path covers from the
 * smallest to the largest. Points are taken in order of importance (opt, the
 * ends, the midpoints) so a smaller cap keeps the ones that matter most.
 *
 * Pick: the nearest entry by log-size distance, trusted within 2x in every
 * size (what the single tuned choice of format 2 used); between two entries
 * that made the same choice, that choice; otherwise the heuristic. Log
 * distance makes "m = 3 vs 1" as far as "m = 3000 vs 1000". */
#include "runtime/cuda/tune.h"

#include <math.h>
#include <string.h>

const char *rt_tune_point_name(rt_tune_point_kind k) {
    switch (k) {
    case RT_POINT_OPT: return "opt";
    case RT_POINT_MIN: return "min";
    case RT_POINT_MAX: return "max";
    case RT_POINT_LOW: return "min..opt";
    case RT_POINT_HIGH: return "opt..max";
    }
    return "?";
}

/* v moved into [min, max] and onto a multiple of multiple_of (the nearest
 * one inside the range; v itself if the range holds none). */
static int64_t snap(const rt_symbol *s, int64_t v) {
    if (v < s->min) v = s->min;
    if (v > s->max) v = s->max;
    int64_t m = s->multiple_of;
    if (m <= 1 || v % m == 0) return v;
    int64_t r = v % m;
    if (r < 0) r += m;
    int64_t down = v - r; /* >= v - m + 1: no overflow */
    int up_ok = v <= s->max - (m - r), down_ok = down >= s->min;
    int64_t up = up_ok ? v + (m - r) : v;
    if (down_ok && up_ok) return v - down <= up - v ? down : up;
    if (down_ok) return down;
    if (up_ok) return up;
    return v;
}

static int64_t geo_mid(int64_t a, int64_t b) {
    double x = (double)(a > 1 ? a : 1), y = (double)(b > 1 ? b : 1);
    double m = floor(sqrt(x) * sqrt(y) + 0.5);
    int64_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (m <= (double)lo) return lo;
    if (m >= (double)hi) return hi;
    return (int64_t)m;
}

/* the two ends are more than 4x apart (sizes below 1 count as 1) */
static int far_apart(int64_t a, int64_t b) {
    if (a < 1) a = 1;
    if (b < 1) b = 1;
    int64_t lo = a < b ? a : b, hi = a < b ? b : a;
    return hi / 4 > lo || (hi / 4 == lo && hi % 4);
}

uint32_t rt_tune_points(const rt_symbol *syms, uint32_t n, uint32_t cap, int64_t *values, uint8_t *kinds) {
    if (cap > RT_TUNE_MAX_POINTS) cap = RT_TUNE_MAX_POINTS;
    uint32_t count = 0;
    for (int k = RT_POINT_OPT; k <= RT_POINT_HIGH && count < cap; k++) {
        int64_t *p = values + (size_t)count * n;
        int wanted = k <= RT_POINT_MAX; /* a midpoint only where some symbol spans more than 4x */
        for (uint32_t s = 0; s < n; s++) {
            const rt_symbol *y = &syms[s];
            int64_t v = y->opt;
            switch ((rt_tune_point_kind)k) {
            case RT_POINT_OPT: v = y->opt; break;
            case RT_POINT_MIN: v = y->min; break;
            case RT_POINT_MAX: v = y->max; break;
            case RT_POINT_LOW:
                v = geo_mid(y->min, y->opt);
                wanted |= far_apart(y->min, y->opt);
                break;
            case RT_POINT_HIGH:
                v = geo_mid(y->opt, y->max);
                wanted |= far_apart(y->opt, y->max);
                break;
            }
            p[s] = snap(y, v);
        }
        if (!wanted) continue;
        int dup = 0;
        for (uint32_t q = 0; q < count && !dup; q++)
            dup = n == 0 || !memcmp(values + (size_t)q * n, p, n * sizeof *p);
        if (dup) continue;
        if (kinds) kinds[count] = (uint8_t)k;
        count++;
    }
    return count;
}

/* x within 2x of t (both > 0), or equal */
static int near2(int64_t x, int64_t t) {
    if (x == t) return 1;
    if (x <= 0 || t <= 0) return 0;
    return x > t ? x - t <= t : t - x <= x;
}

/* a size 0 is a different problem from any other size (an empty or K = 0
 * product): as far as a 2^64 ratio */
#define ZERO_APART 44.4

static double log_distance(const int64_t a[4], const int64_t b[4]) {
    double d = 0;
    for (int i = 0; i < 4; i++) {
        if (a[i] == b[i]) continue;
        if (a[i] <= 0 || b[i] <= 0) {
            d += ZERO_APART;
            continue;
        }
        d += fabs(log((double)a[i]) - log((double)b[i]));
    }
    return d;
}

/* closer by more than rounding: equal distances (64 between 16 and 256) tie */
static int closer(double d, double than) { return d < than - 1e-9; }

static int same_choice(const rt_tuned *a, const rt_tuned *b) {
    return a->algo_size == b->algo_size && !memcmp(a->algo, b->algo, a->algo_size);
}

int rt_tune_pick(const rt_tuned *entries, uint32_t n, const int64_t sizes[4], uint32_t algo_size) {
    int best = -1, second = -1;
    double best_d = 0, second_d = 0;
    for (uint32_t i = 0; i < n; i++) {
        const rt_tuned *t = &entries[i];
        if (t->algo_size != algo_size || !t->algo || !algo_size) continue;
        double d = log_distance(sizes, t->at);
        if (best < 0 || closer(d, best_d)) {
            second = best, second_d = best_d;
            best = (int)i, best_d = d;
        } else if (second < 0 || closer(d, second_d)) {
            second = (int)i, second_d = d;
        }
    }
    if (best < 0) return -1;
    const rt_tuned *b = &entries[best];
    int near = 1;
    for (int i = 0; i < 4 && near; i++) near = near2(sizes[i], b->at[i]);
    if (near) return best;
    if (second < 0 || !same_choice(b, &entries[second])) return -1;
    const rt_tuned *c = &entries[second];
    for (int i = 0; i < 4; i++) {
        int64_t lo = b->at[i] < c->at[i] ? b->at[i] : c->at[i], hi = b->at[i] < c->at[i] ? c->at[i] : b->at[i];
        int64_t x = sizes[i];
        if ((x < lo || x > hi) && !near2(x, lo) && !near2(x, hi)) return -1;
    }
    return best;
}

symc_status rt_tune_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4], symc_error *err) {
    if (step >= e->n_steps)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "step %u of %u", step, e->n_steps);
    const rt_step *s = &e->steps[step];
    if (s->kind == RT_STEP_GEMM) return rt_gemm_sizes(e, step, slots, sizes, err);
    const char *node = s->node < e->n_nodes && e->nodes[s->node].name ? e->nodes[s->node].name : "?";
    if (s->kind != RT_STEP_CONV)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "node '%s': step %u is not a library call", node, step);
    uint32_t x = s->tensors[0];
    if (x == RT_NONE || x >= e->n_tensors || e->tensors[x].rank != 4)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "node '%s' (CONV step): x is not a 4-D tensor", node);
    const rt_tensor *t = &e->tensors[x];
    sizes[0] = slots[t->dims[0]];
    sizes[1] = slots[t->dims[2]];
    sizes[2] = slots[t->dims[3]];
    sizes[3] = 0;
    return SYMC_OK;
}

uint32_t rt_tune_guard_broken(const rt_engine *e, const int64_t *slots) {
    for (uint32_t g = 0; g < e->n_guards; g++)
        if (!sym_rel_holds(e->guards[g].rel, slots[e->guards[g].lhs], slots[e->guards[g].rhs])) return g;
    return RT_NONE;
}
