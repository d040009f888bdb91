/* tune_cache.h: the timing cache on disk that build-time tuning reads and
 * writes (codegen/tune.c), so a later build of any model that meets the same
 * library problem on the same GPU and libraries takes the result instead of
 * timing it again.
 *
 * Where: $SYMC_CACHE_DIR/tuning/ (default $XDG_CACHE_HOME/symc, else
 * $HOME/.cache/symc; SYMC_CACHE_DIR=off turns the cache off). One small file
 * per result, named by a hash of its key and holding the whole key, so a
 * hash collision is a miss, never a wrong answer; written to a temporary
 * name and renamed, so concurrent builds never read half a file. A file
 * that is truncated, corrupt or of another format is a miss (and is
 * rewritten). Failing to write is never an error: the build goes on. */
#ifndef SYMC_CODEGEN_TUNE_CACHE_H
#define SYMC_CODEGEN_TUNE_CACHE_H

#include <stddef.h>
#include <stdint.h>

typedef struct cg_tune_cache cg_tune_cache;

/* The cache for results timed on `device` with these library versions
 * (each part of every key). NULL when the cache is off or has no usable
 * directory; every call below accepts NULL and then does nothing. *where
 * (may be NULL) gets the directory or why there is none, for a progress
 * line. */
cg_tune_cache *cg_tune_cache_open(const char *device, const char *cublas_version, const char *cudnn_version,
                                  char *where, size_t where_cap);
void cg_tune_cache_close(cg_tune_cache *c);

/* The result stored for problem signature sig: 1 with the choice in algo
 * (RT_ALGO_MAX bytes of room), its size and its time; 0 on a miss. */
int cg_tune_cache_get(cg_tune_cache *c, const uint8_t *sig, size_t len, uint8_t *algo, uint32_t *algo_size,
                      float *ms);
/* Stores a result; silently nothing when it cannot. */
void cg_tune_cache_put(cg_tune_cache *c, const uint8_t *sig, size_t len, const uint8_t *algo, uint32_t algo_size,
                       float ms);

/* The cache's root directory into buf: $SYMC_CACHE_DIR, else
 * $XDG_CACHE_HOME/symc, else $HOME/.cache/symc. 0 when it is off
 * (SYMC_CACHE_DIR=off or empty, or no HOME) or does not fit. */
int cg_cache_root(char *buf, size_t cap);

#endif
