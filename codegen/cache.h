/* cache.h: the on-disk build cache (internal to codegen/, prefix cg_cache_).
 *
 * Build outputs that are a pure function of their inputs (NVRTC's cubin and
 * PTX for one source, the library tuner's timings, the fp16 range
 * calibration of one module) are kept under
 * cg_cache_dir(), one file per entry: <dir>/<kind>/<64 hex digits>, named by
 * the SHA-256 of everything the output depends on (cg_hash_*). Each file
 * carries its key, its size and the SHA-256 of its bytes, checked on every
 * read: a truncated, corrupt or foreign file is a miss (and is rewritten by
 * the next put), never trusted. Writes go to a temporary file in the same
 * folder and are renamed into place, so concurrent builds see a whole entry
 * or none. The cache never fails a build: a get that cannot read is a miss,
 * a put that cannot write says why and the build goes on without it. */
#ifndef SYMC_CODEGEN_CACHE_H
#define SYMC_CODEGEN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define CG_HASH_BYTES 32

/* SHA-256, fed in pieces. */
typedef struct cg_hash {
    uint32_t h[8];
    uint64_t bytes;
    uint8_t buf[64];
    size_t used;
} cg_hash;

void cg_hash_init(cg_hash *h);
void cg_hash_update(cg_hash *h, const void *p, size_t n);
/* A string with its length first, so ("ab", "c") and ("a", "bc") differ. */
void cg_hash_str(cg_hash *h, const char *s);
void cg_hash_final(cg_hash *h, uint8_t out[CG_HASH_BYTES]);

/* XXH64 (xxHash's 64-bit hash; its reference values in the test): a fast,
 * non-cryptographic digest of bulk bytes (a model's weights) that a key then
 * takes in place of the bytes, where SHA-256 over hundreds of megabytes would
 * cost more than the cache saves. Not collision resistant: whoever keys with
 * it says why that is acceptable there (codegen/compile.c). */
uint64_t cg_hash64(const void *p, size_t n, uint64_t seed);

/* The cache folder: $SYMC_CACHE_DIR, else $XDG_CACHE_HOME/symc, else
 * $HOME/.cache/symc. 0 (and "" in buf) when the cache is off: SYMC_CACHE_DIR
 * is "off" or "", or no folder can be named (no HOME), or it does not fit. */
int cg_cache_dir(char *buf, size_t cap);

/* The entry of `kind` ("nvrtc", ...: a folder name) under `key`: 1 and
 * *bytes (malloc'd; free() it) / *size on a hit; 0 on a miss (no cache, no
 * entry, or an entry that fails its checks). */
int cg_cache_get(const char *kind, const uint8_t key[CG_HASH_BYTES], uint8_t **bytes, size_t *size);

/* Stores an entry (replacing any). 0 when written or the cache is off; -1
 * when it could not be, with why (a path and strerror) in `why`. */
int cg_cache_put(const char *kind, const uint8_t key[CG_HASH_BYTES], const void *bytes, size_t size, char *why,
                 size_t why_cap);

#endif
