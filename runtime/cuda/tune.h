/* tune.h: the pure decisions of library tuning, and what the tools need to
 * show them (internal to runtime/, codegen and tools/; no CUDA types).
 *
 * Build time (runtime/cuda_tune.c) tunes every GEMM/CONV step at a few
 * points of the symbol ranges chosen by rt_tune_points; run time
 * (cuda_gemm.c, cuda_conv.c) picks one of a step's entries for the actual
 * sizes with rt_tune_pick, once per shape key. Both are plain functions of
 * their arguments, tested on the CPU (tests/runtime/test_tune.c). */
#ifndef SYMC_RUNTIME_TUNE_H
#define SYMC_RUNTIME_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"

/* At most this many points, so a build with tuning stays well inside
 * BENCH.md's 10 s (each point is one full run of the engine plus the timed
 * candidates of every library step). */
#define RT_TUNE_MAX_POINTS 5

typedef enum rt_tune_point_kind {
    RT_POINT_OPT = 0,  /* every symbol at opt */
    RT_POINT_MIN = 1,  /* every symbol at min */
    RT_POINT_MAX = 2,  /* every symbol at max */
    RT_POINT_LOW = 3,  /* geometric midpoint of min and opt */
    RT_POINT_HIGH = 4  /* geometric midpoint of opt and max */
} rt_tune_point_kind;

/* "opt", "min", ... */
const char *rt_tune_point_name(rt_tune_point_kind k);

/* The tuning points for these symbols, most important first: opt, min, max,
 * then the geometric midpoints min..opt and opt..max. All symbols move
 * together along one path min -> opt -> max (not a grid), so the count never
 * grows with the number of symbols. Each value is snapped to the symbol's
 * multiple_of inside [min, max]. A point equal to one already chosen is
 * dropped, and so is a midpoint whose two ends are within 4x of each other in
 * every symbol (every size between them is then within 2x of an end, which
 * the run-time pick covers). Writes at most `cap` (<= RT_TUNE_MAX_POINTS)
 * points: values[p * n + s] is symbol s at point p; kinds (may be NULL) gets
 * each point's kind. Returns the number of points (>= 1 when cap >= 1). */
uint32_t rt_tune_points(const rt_symbol *syms, uint32_t n, uint32_t cap, int64_t *values, uint8_t *kinds);

/* Which of a step's tuned entries serves a problem of these sizes (the same
 * four as rt_tuned.at): the index, or -1 for the library heuristic. Entries
 * whose algo_size differs from `algo_size` are ignored. The nearest entry in
 * log-size distance (sum over the sizes of |log(size / at)|, a 0 against
 * anything else counting as very far; ties go to the earlier entry) when
 * every size is within 2x of it (a size 0 only matches 0); otherwise the
 * nearest one still, when the second nearest made the same choice and every
 * size lies between the two or within 2x of one of them (both sides chose
 * it); otherwise -1. No allocation; called once per new shape key. */
int rt_tune_pick(const rt_tuned *entries, uint32_t n, const int64_t sizes[4], uint32_t algo_size);

/* The sizes a library step's entries are keyed by, at these slots (see
 * rt_tuned.at); needs no GPU. */
symc_status rt_tune_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4], symc_error *err);
/* The GEMM part of it (cuda_gemm.c: the call's plan). */
symc_status rt_gemm_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4], symc_error *err);
/* The same sizes for a CONV step through the call's plan (cuda_conv.c), so
 * every check the CUDA backend makes before calling cuDNN (dtypes, ranks,
 * attributes, sizes that fit) runs without a GPU. */
symc_status rt_conv_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4], symc_error *err);

/* Index of the first run-time guard that these slots break, or RT_NONE. */
uint32_t rt_tune_guard_broken(const rt_engine *e, const int64_t *slots);

/* One line describing an entry's choice: for a GEMM the cuBLASLt algorithm
 * id, tile, stages, split-k, swizzle, custom option and cluster shape read
 * with cublasLtMatmulAlgoConfigGetAttribute when libcublasLt loads here (no
 * GPU needed), else a hash of its bytes; for a CONV the cuDNN algorithm by
 * name. Never fails (cuda_gemm.c / cuda_conv.c). */
void rt_gemm_algo_describe(const uint8_t *algo, uint32_t size, char *buf, size_t cap);
void rt_conv_algo_describe(const uint8_t *algo, uint32_t size, char *buf, size_t cap);

#endif
