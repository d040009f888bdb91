/* regions_two.h: a 2-region engine assembled in memory from two decoded
 * one-graph engines, for the runtime's region tests on the reference
 * (tests/runtime/test_regions.c) and CUDA (tests/gpu/test_cuda_regions.c)
 * backends. Region 0 is g0 under 'B == 1 and S <= 6' (its graph reads only
 * S: B is fixed to 1 there), region 1 is g1 under '2 <= B'; the root's
 * symbols are B in [1, maxb] and S in [1, maxs], read from input 0's dims 0
 * and 1, and its constants are g1's (g0's must be g1's first ones: the
 * caller checks). Nothing is encoded: the engine is what a decoder would
 * hand the runtime (rt_engine_handle loads it). */
#ifndef SYMC_TESTS_RUNTIME_REGIONS_TWO_H
#define SYMC_TESTS_RUNTIME_REGIONS_TWO_H

#include <stdint.h>

#include "runtime/engine.h"

typedef struct rt_test_two {
    rt_engine *g[2]; /* owned: freed by rt_test_two_free */
    rt_engine root;
    rt_symbol symbols[2];
    rt_source sources[2];
    rt_region regions[2];
    rt_guard cond0[2], cond1[1];
    uint32_t map0[1], map1[2];
    uint8_t *program;
} rt_test_two;

/* 1 when assembled; takes g0 and g1 (decoded engines) either way. */
int rt_test_two_assemble(rt_test_two *f, rt_engine *g0, rt_engine *g1, int64_t maxb, int64_t maxs);
void rt_test_two_free(rt_test_two *f);

#endif
