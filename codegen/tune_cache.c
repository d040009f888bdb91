/* The timing cache on disk (codegen/tune_cache.h), an entry kind of the
 * build cache (codegen/cache.h): <dir>/tuning/<SHA-256 of the key>.
 *
 * The key hashes the device, the cuBLASLt and cuDNN versions and the
 * problem's signature (runtime/cuda/cuda_tuning.h), each with its length;
 * the entry holds the choice's size, the choice and the time (size 0: no
 * candidate ran for this problem, so the heuristic serves it). The build
 * cache checks every entry (its key and a SHA-256 of its bytes) and writes
 * atomically, so a damaged entry is a miss and a concurrent build never
 * reads half of one; an entry of the wrong size is a miss here too. A put
 * that cannot write is dropped: tuning goes on without the cache. */
#include "codegen/tune_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cache.h"
#include "runtime/engine.h"

#define TC_KIND "tuning"
#define TC_PREFIX_MAX 1024
#define TC_RESULT "symc tuning 1"
#define TC_POINTS "symc tuning points 1"

struct cg_tune_cache {
    char prefix[TC_PREFIX_MAX]; /* device and versions: the start of every key */
};

cg_tune_cache *cg_tune_cache_open(const char *device, const char *cublas_version, const char *cudnn_version,
                                  char *where, size_t where_cap) {
    char dir[4096];
    if (where && where_cap) where[0] = '\0';
    if (!cg_cache_dir(dir, sizeof dir)) {
        if (where && where_cap) snprintf(where, where_cap, "off (SYMC_CACHE_DIR=off, or no HOME)");
        return NULL;
    }
    cg_tune_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    int k = snprintf(c->prefix, sizeof c->prefix, "%s\n%s\n%s", device ? device : "",
                     cublas_version ? cublas_version : "", cudnn_version ? cudnn_version : "");
    if (k <= 0 || (size_t)k >= sizeof c->prefix) {
        free(c);
        return NULL;
    }
    if (where && where_cap) snprintf(where, where_cap, "%s/%s", dir, TC_KIND);
    return c;
}

void cg_tune_cache_close(cg_tune_cache *c) { free(c); }

/* tag: what the entry holds ("symc tuning 1": a problem's result; "symc tuning points 1": a job's
 * point count), so the two never share a key */
static void key_of(const cg_tune_cache *c, const char *tag, const uint8_t *sig, size_t len,
                   uint8_t key[CG_HASH_BYTES]) {
    cg_hash h;
    cg_hash_init(&h);
    cg_hash_str(&h, tag);
    cg_hash_str(&h, c->prefix);
    uint64_t n = len;
    cg_hash_update(&h, &n, sizeof n);
    cg_hash_update(&h, sig, len);
    cg_hash_final(&h, key);
}

int cg_tune_cache_get(cg_tune_cache *c, const uint8_t *sig, size_t len, uint8_t *algo, uint32_t *algo_size, float *ms) {
    if (!c) return 0;
    uint8_t key[CG_HASH_BYTES], *bytes = NULL;
    size_t size = 0;
    key_of(c, TC_RESULT, sig, len, key);
    if (!cg_cache_get(TC_KIND, key, &bytes, &size)) return 0;
    uint32_t n = 0;
    int hit = size >= 8 && (memcpy(&n, bytes, 4), n <= RT_ALGO_MAX && size == 4 + (size_t)n + 4);
    if (hit) {
        memcpy(algo, bytes + 4, n);
        memcpy(ms, bytes + 4 + n, 4);
        *algo_size = n;
    }
    free(bytes);
    return hit;
}

void cg_tune_cache_put(cg_tune_cache *c, const uint8_t *sig, size_t len, const uint8_t *algo, uint32_t algo_size,
                       float ms) {
    if (!c || algo_size > RT_ALGO_MAX) return;
    uint8_t key[CG_HASH_BYTES], buf[4 + RT_ALGO_MAX + 4];
    key_of(c, TC_RESULT, sig, len, key);
    memcpy(buf, &algo_size, 4);
    memcpy(buf + 4, algo, algo_size);
    memcpy(buf + 4 + algo_size, &ms, 4);
    char why[256];
    (void)cg_cache_put(TC_KIND, key, buf, 4 + (size_t)algo_size + 4, why, sizeof why);
}

int cg_tune_cache_get_points(cg_tune_cache *c, const uint8_t *job, size_t len, uint32_t *points) {
    if (!c) return 0;
    uint8_t key[CG_HASH_BYTES], *bytes = NULL;
    size_t size = 0;
    key_of(c, TC_POINTS, job, len, key);
    if (!cg_cache_get(TC_KIND, key, &bytes, &size)) return 0;
    int hit = size == 4;
    if (hit) memcpy(points, bytes, 4);
    free(bytes);
    return hit;
}

void cg_tune_cache_put_points(cg_tune_cache *c, const uint8_t *job, size_t len, uint32_t points) {
    if (!c) return;
    uint8_t key[CG_HASH_BYTES];
    key_of(c, TC_POINTS, job, len, key);
    char why[256];
    (void)cg_cache_put(TC_KIND, key, &points, 4, why, sizeof why);
}
