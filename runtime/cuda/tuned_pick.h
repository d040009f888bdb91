/* tuned_pick.h: the run-time half of library tuning, and what the tools need to
 * show it (internal to runtime/, codegen and tools/; no CUDA types).
 *
 * Build time (codegen/tuner.c) times every GEMM/CONV step at a few points of
 * the symbol ranges and stores the winners as rt_tuned entries keyed by the
 * step's sizes (rt_cuda_tune_sizes); run time (cuda_gemm.c, cuda_conv.c) picks
 * one of a step's entries for the actual sizes with rt_cuda_tune_pick, once per
 * shape key. Both are plain functions of their arguments, tested on the CPU
 * (tests/runtime/test_tuned_pick.c). */
#ifndef SYMC_RUNTIME_TUNE_H
#define SYMC_RUNTIME_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"

/* Which of a step's tuned entries serves a problem of these sizes (the same
 * four as rt_tuned.at): the nearest in log-size distance (sum over the sizes
 * of |log(size / at)|, a 0 against anything else counting as very far; ties
 * go to the earlier entry), or -1 when the step has none. Entries whose
 * algo_size differs from `algo_size` are ignored. No allocation; called
 * once per new shape key. */
int rt_cuda_tune_pick(const rt_tuned *entries, uint32_t n, const int64_t sizes[4], uint32_t algo_size);
/* The same entries nearest first: up to min(cap, RT_TUNE_ORDER_MAX) indices
 * into order, their count returned (the runtime tries them in turn when the
 * library refuses one for a problem). */
#define RT_TUNE_ORDER_MAX 4
uint32_t rt_cuda_tune_order(const rt_tuned *entries, uint32_t n, const int64_t sizes[4], uint32_t algo_size, int *order,
                            uint32_t cap);

/* The sizes a library step's entries are keyed by, at these slots (see
 * rt_tuned.at); needs no GPU. */
symc_status rt_cuda_tune_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4],
                               symc_error *err);
/* The GEMM part of it (cuda_gemm.c: the call's plan). */
symc_status rt_cuda_gemm_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4],
                               symc_error *err);
/* The same sizes for a CONV step through the call's plan (cuda_conv.c), so
 * every check the CUDA backend makes before calling cuDNN (dtypes, ranks,
 * attributes, sizes that fit) runs without a GPU. */
symc_status rt_cuda_conv_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4],
                               symc_error *err);

/* One line describing an entry's choice: for a GEMM the cuBLASLt algorithm
 * id, tile, stages, split-k, swizzle, custom option and cluster shape read
 * with cublasLtMatmulAlgoConfigGetAttribute when libcublasLt loads here (no
 * GPU needed), else a hash of its bytes; for a CONV the cuDNN algorithm by
 * name. Never fails (cuda_gemm.c / cuda_conv.c). */
void rt_cuda_gemm_algo_describe(const uint8_t *algo, uint32_t size, char *buf, size_t cap);
void rt_cuda_conv_algo_describe(const uint8_t *algo, uint32_t size, char *buf, size_t cap);

#endif
