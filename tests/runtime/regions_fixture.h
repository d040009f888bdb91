/* The shared test fixture for engines with several graphs (regions, docs/PLAN-regions.md): a
 * 2-region engine made in memory from two compiles of tests/runtime/test_engine.c's small graph,
 * for the codec's tests (tests/runtime/test_engine_regions.c) and the runtime's.
 *
 * The graph: inputs x [B, 4] and w [C, 4] (f32), a constant b [4] = {0.5, -0.5, 1, -1};
 * s = x + b, y = op(s), outputs r = reshape(y, [B, 2, -1]) and z = x + w.
 *   - Region 0, condition "B <= 1": compiled with B fixed to 1 (x is [1, 4]; the graph has one
 *     symbol, C: its map is {1}), op = relu.
 *   - Region 1, condition "2 <= B": B in [2, 8] opt 3, C in [1, 8] opt 3 (map {0, 1}), op = neg.
 * The root: symbols B [1, 8] opt 3 and C [1, 8] opt 3, bound from (input 0, dim 0) and
 * (input 1, dim 0); the one constant b, stored once (each region graph's `constants` is the
 * root's, its tensors' constant indices the root's); region_program outputs the slots
 * {B, 1, 2}, so region 0's condition is (LE, 0, 1) and region 1's (LE, 2, 0).
 * Each region graph keeps its compile's GPU part (steps, kernels, modules): region 1's kernels
 * were generated for its own graph, so both backends compute the region's op.
 *
 * Everything is plain, mutable arrays owned by the fixture, so a test can edit a field and
 * encode (rt_engine_encode(&f.root, ...)) to make a refusal case. Free with
 * rt_test_regions_free. */
#ifndef SYMC_TESTS_RUNTIME_REGIONS_FIXTURE_H
#define SYMC_TESTS_RUNTIME_REGIONS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"
#include "symc/status.h"

typedef struct rt_test_regions {
    rt_engine root;        /* the 2-region engine: root.regions = region, root.n_regions = 2 */
    rt_region region[2];   /* region[k].graph: a copy of graph[k] with the root's constants */
    rt_engine *graph[2];   /* the decoded one-graph engine of each region's own compile */
    uint8_t *one_bytes[2]; /* each compile's one-graph engine file (format 5), as cg_build_engine wrote it */
    size_t one_size[2];
    rt_symbol symbols[2]; /* the root's: B, C */
    rt_source sources[2];
    rt_guard cond[2];       /* one guard per region */
    uint32_t map[2][2];     /* region k's graph symbol i is root symbol map[k][i] */
    rt_tensor *tensors[2];  /* region k's tensors (constant indices into the root's constants) */
    rt_constant *constants; /* the root's table (= root.constants; room for 8), data in graph[0] / graph[1] */
    uint8_t *region_program;
} rt_test_regions;

/* Makes the engine (compiles both graphs; a few hundred milliseconds). On failure *f is
 * zeroed, with the message in err. */
symc_status rt_test_regions_make(rt_test_regions *f, symc_error *err);
void rt_test_regions_free(rt_test_regions *f);

/* Region k's value of r at an element whose s = x + b is `s`: relu(s) in region 0, -s in
 * region 1. (z = x + w, with broadcasting, in both.) */
float rt_test_regions_r(uint32_t region, float s);

/* The bias constant b, for computing expected values. */
extern const float rt_test_regions_bias[4];

#endif
