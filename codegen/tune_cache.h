/* tune_cache.h: the timing cache on disk that build-time tuning reads and
 * writes (codegen/tuner.c), so a later build of any model that meets the same
 * library problem on the same GPU and libraries takes the result instead of
 * timing it again.
 *
 * Where: the build cache's folder (codegen/cache.h: $SYMC_CACHE_DIR, default
 * $XDG_CACHE_HOME/symc, else $HOME/.cache/symc; SYMC_CACHE_DIR=off turns it
 * off), entries of kind "tuning", one per result, keyed by the SHA-256 of
 * the device, the library versions and the problem's signature. A damaged
 * entry is a miss; failing to write is never an error. */
#ifndef SYMC_CODEGEN_TUNE_CACHE_H
#define SYMC_CODEGEN_TUNE_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cg_tune_cache cg_tune_cache;

/* The cache for results timed on `device` with these library versions
 * (each part of every key). NULL when the cache is off; every call below
 * accepts NULL and then does nothing. *where (may be NULL) gets the folder
 * or why there is none, for a progress line. */
cg_tune_cache *cg_tune_cache_open(const char *device, const char *cublas_version, const char *cudnn_version,
                                  char *where, size_t where_cap);
void cg_tune_cache_close(cg_tune_cache *c);

/* The result stored for problem signature sig: 1 with the choice in algo
 * (RT_ALGO_MAX bytes of room), its size and its time (size 0: no candidate
 * ran, the heuristic serves: also a result, so it is not timed again); 0 on
 * a miss. */
int cg_tune_cache_get(cg_tune_cache *c, const uint8_t *sig, size_t len, uint8_t *algo, uint32_t *algo_size, float *ms);
/* Stores a result (algo_size 0: no candidate ran); silently nothing when it
 * cannot. */
void cg_tune_cache_put(cg_tune_cache *c, const uint8_t *sig, size_t len, const uint8_t *algo, uint32_t algo_size,
                       float ms);

/* How many of its points the first build of a tuning job tuned at before its
 * budget stopped it (or all of them). job: bytes that identify the job (the
 * points and every library problem at opt, codegen/tuner.c). A later build
 * of the same job on the same GPU and libraries tunes at exactly as many, so
 * it makes the same engine from the cached results, in a fraction of the
 * time, instead of timing the points the first build left out. 1 with
 * *points; 0 on a miss. */
int cg_tune_cache_get_points(cg_tune_cache *c, const uint8_t *job, size_t len, uint32_t *points);
void cg_tune_cache_put_points(cg_tune_cache *c, const uint8_t *job, size_t len, uint32_t points);

#endif
