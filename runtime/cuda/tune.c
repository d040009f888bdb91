/* The run-time half of library tuning (runtime/cuda/tune.h): which tuned entry
 * serves a shape, and the sizes a step's entries are keyed by. The points
 * they were tuned at are chosen at build time (codegen/tune_points.c).
 *
 * Pick: the nearest entry by log-size distance, trusted within 2x in every
 * size (what the single tuned choice of format 2 used); between two entries
 * that made the same choice, that choice; otherwise the heuristic. Log
 * distance makes "m = 3 vs 1" as far as "m = 3000 vs 1000". */
#include "runtime/cuda/tune.h"

#include <math.h>
#include <string.h>

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
    if (step >= e->n_steps) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "step %u of %u", step, e->n_steps);
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
