/* cuda_tuning.h: what build-time tuning needs from the CUDA backend, and no
 * more (internal to runtime/ and codegen's tuner, codegen/tuner.c; never a
 * public header, and no CUDA types in it).
 *
 * The tuner decides which points to tune at, which steps to time, how many
 * runs count, when to stop and what to keep; this is the mechanism under
 * it: a CUDA backend session on an in-memory engine (codegen's, before it is
 * encoded, or a decoded one), one point bound at a time with real inputs
 * and one full run, the library's candidates for a GEMM or CONV step and
 * one timed run of the step with a candidate forced, and the problem's
 * signature. Algorithms travel as bytes (RT_GEMM_ALGO_SIZE,
 * RT_CONV_ALGO_SIZE, runtime/engine.h), as they are stored in rt_tuned. */
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
 * device buffer of its size at these slots and every tensor its pointer,
 * without running anything: enough for rt_cuda_tuning_signature. Out of
 * device memory is SYMC_ERR_NOMEM. */
symc_status rt_cuda_tuning_bind(rt_cuda_tuning *s, const int64_t *slots, symc_error *err);
/* Runs the bound point: inputs filled (once per point) with reproducible
 * random data from `seed` (floats uniform in [-1, 1), integers and bools 0,
 * so index inputs stay in range), and the whole engine run once, waited
 * for, so intermediates hold realistic values. The calls below that run a
 * step need it first. */
symc_status rt_cuda_tuning_run(rt_cuda_tuning *s, uint64_t seed, symc_error *err);

/* Up to `cap` (<= 16) of the library's candidates for library step `step`
 * at the bound point, best first by its heuristic, RT_ALGO_MAX bytes apart
 * in algos, *algo_size bytes each (a cublasLtMatmulAlgo_t for GEMM, a cuDNN
 * algorithm id for CONV); *n of them. None (*n = 0) for an empty problem. */
symc_status rt_cuda_tuning_candidates(rt_cuda_tuning *s, uint32_t step, uint8_t *algos, int cap, int *n,
                                      uint32_t *algo_size, symc_error *err);
/* Runs library step `step` at the bound point, as an enqueue would (a
 * convolution's fused bias, activation and residual included), with `algo`
 * (from above) forced. reps 0 or ms NULL: one untimed run (a warm-up: it
 * sizes the workspaces), then the device is synchronized. Else `reps` runs
 * captured back to back into a CUDA graph (kept while the step, reps and
 * algorithm stay the same) are launched between two events, and *ms is
 * the GPU time per run: no host time between the runs, so a small problem
 * is not timed as its call's host overhead. A call that cannot be captured
 * is timed once as issued. */
symc_status rt_cuda_tuning_step_run(rt_cuda_tuning *s, uint32_t step, const uint8_t *algo, uint32_t reps, float *ms,
                                    symc_error *err);
/* The problem step `step` solves at the bound point, as bytes (*len of
 * them, at most cap): equal bytes are the same library problem, whichever
 * step, point or model asks (what the tuner times once and caches). */
#define RT_TUNING_SIGNATURE_MAX 192
symc_status rt_cuda_tuning_signature(rt_cuda_tuning *s, uint32_t step, uint8_t *buf, size_t cap, size_t *len,
                                     symc_error *err);
/* "NVIDIA H100 80GB HBM3 sm_90": the device the timings are of, for the
 * timing cache's key. */
void rt_cuda_tuning_device(char *buf, size_t cap);

/* The versions of the libraries that timed ("13.1.0"; "none" when one does
 * not load), for the engine's header. A NULL buffer is skipped (and its
 * library not loaded). */
void rt_cuda_tuning_versions(char *cublas, size_t cublas_cap, char *cudnn, size_t cudnn_cap);

#endif
