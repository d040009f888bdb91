/* cuda_tuning.h: what build-time tuning needs from the CUDA backend, and no
 * more (internal to runtime/ and codegen's tuner, codegen/tune.c; never a
 * public header, and no CUDA types in it).
 *
 * The tuner decides which points to tune at, which steps to time, how many
 * runs count, when to stop and what to keep; this is the mechanism under
 * it: a CUDA backend session on an in-memory engine (codegen's, before it is
 * encoded, or a decoded one), one point bound at a time with real inputs
 * and one full run, cuBLASLt's candidates for a GEMM step and one timed run
 * of the step with a candidate forced, and cuDNN's own search for a CONV
 * step. Algorithms travel as bytes (RT_GEMM_ALGO_SIZE, runtime/engine.h),
 * as they are stored in rt_tuned. */
#ifndef SYMC_RUNTIME_CUDA_TUNING_H
#define SYMC_RUNTIME_CUDA_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"

typedef struct rt_cuda_tuning rt_cuda_tuning;

/* A CUDA backend session for `e`, which must outlive it unchanged (the
 * backend keeps per-step state; tuned entries found go into a copy of the
 * steps). Fails like a CUDA context would (no driver, no GPU, a module that
 * does not load); *out is then NULL. */
symc_status rt_cuda_tuning_create(const rt_engine *e, rt_cuda_tuning **out, symc_error *err);
/* Frees the point's buffers and everything else of the session. NULL: nothing. */
void rt_cuda_tuning_destroy(rt_cuda_tuning *s);

/* Binds a point: `slots` (e->num_slots values: the shape program evaluated
 * there; the caller checks the guards) are copied, the previous point's
 * buffers are freed, every input and output that is not a constant gets a
 * device buffer of its size at these slots, inputs are filled with
 * reproducible random data from `seed` (floats uniform in [-1, 1), integers
 * and bools 0, so index inputs stay in range), and the whole engine runs
 * once, waited for, so intermediates hold realistic values. The calls
 * below work at this point. Out of device memory is SYMC_ERR_NOMEM. */
symc_status rt_cuda_tuning_run(rt_cuda_tuning *s, const int64_t *slots, uint64_t seed, symc_error *err);

/* Up to `cap` (<= 16) of cuBLASLt's heuristic candidates for GEMM step
 * `step` at the bound point, best first, RT_GEMM_ALGO_SIZE bytes each into
 * algos; *n of them. None (*n = 0) for an empty problem. */
symc_status rt_cuda_tuning_gemm_candidates(rt_cuda_tuning *s, uint32_t step, uint8_t *algos, int cap, int *n,
                                           symc_error *err);
/* Runs GEMM step `step` once at the bound point, as an enqueue would, with
 * `algo` (RT_GEMM_ALGO_SIZE bytes from above) forced. ms NULL: an untimed
 * run (a warm-up), then the device is synchronized; else *ms is its GPU
 * time between two events around it on the default stream. */
symc_status rt_cuda_tuning_gemm_run(rt_cuda_tuning *s, uint32_t step, const uint8_t *algo, float *ms, symc_error *err);
/* cuDNN's own timing of its algorithms for CONV step `step` at the bound
 * point (cudnnFindConvolutionForwardAlgorithmEx on the bound tensors): the
 * fastest that ran, as a cudnnConvolutionFwdAlgo_t id, and its time; *algo
 * = -1 for an empty convolution. */
symc_status rt_cuda_tuning_conv_find(rt_cuda_tuning *s, uint32_t step, int32_t *algo, float *ms, symc_error *err);

/* The versions of the libraries that timed ("13.1.0"; "none" when one does
 * not load), for the engine's header. A NULL buffer is skipped (and its
 * library not loaded). */
void rt_cuda_tuning_versions(char *cublas, size_t cublas_cap, char *cudnn, size_t cudnn_cap);

#endif
