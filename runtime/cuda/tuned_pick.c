/* The run-time half of library tuning (runtime/cuda/tuned_pick.h): which tuned entry
 * serves a shape, and the sizes a step's entries are keyed by. The points
 * they were tuned at are chosen at build time (codegen/tune_points.c) to
 * cover the declared box: its corners, each axis through opt, the diagonal.
 *
 * Pick: the nearest entry by log-size distance. A step's buckets are thus
 * the cells of its tuned points in log-size space, the boundary between
 * two neighbours at the geometric midpoint of their sizes; adjacent cells
 * with the same choice merge (symc inspect prints them). Log distance makes
 * "m = 3 vs 1" as far as "m = 3000 vs 1000". The library may still refuse
 * the nearest entry for a problem (an alignment, a workspace): callers then
 * try the next in rt_cuda_tune_order, and the heuristic last. */
#include "runtime/cuda/tuned_pick.h"

#include <math.h>
#include <string.h>

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

uint32_t rt_cuda_tune_order(const rt_tuned *entries, uint32_t n, const int64_t sizes[4], uint32_t algo_size, int *order,
                            uint32_t cap) {
    uint32_t count = 0;
    double dist[RT_TUNE_ORDER_MAX];
    if (cap > RT_TUNE_ORDER_MAX) cap = RT_TUNE_ORDER_MAX;
    for (uint32_t i = 0; i < n && cap; i++) {
        const rt_tuned *t = &entries[i];
        if (t->algo_size != algo_size || !t->algo || !algo_size) continue;
        double d = log_distance(sizes, t->at);
        /* insertion by distance; an equal distance stays after the earlier entry */
        uint32_t j = count < cap ? count : cap - 1;
        if (count == cap && !closer(d, dist[j])) continue;
        while (j > 0 && closer(d, dist[j - 1])) {
            dist[j] = dist[j - 1];
            order[j] = order[j - 1];
            j--;
        }
        dist[j] = d;
        order[j] = (int)i;
        if (count < cap) count++;
    }
    return count;
}

int rt_cuda_tune_pick(const rt_tuned *entries, uint32_t n, const int64_t sizes[4], uint32_t algo_size) {
    int best;
    return rt_cuda_tune_order(entries, n, sizes, algo_size, &best, 1) ? best : -1;
}

symc_status rt_cuda_tune_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4],
                               symc_error *err) {
    if (step >= e->n_steps) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "step %u of %u", step, e->n_steps);
    const rt_step *s = &e->steps[step];
    if (s->kind == RT_STEP_GEMM) return rt_cuda_gemm_sizes(e, step, slots, sizes, err);
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
