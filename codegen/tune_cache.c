/* The timing cache on disk (codegen/tune_cache.h).
 *
 * A result is one file, <dir>/tuning/<16 hex digits>.tc, the digits a hash
 * of the key: the device, the cuBLASLt and cuDNN versions and the problem's
 * signature (runtime/cuda/cuda_tuning.h). The file holds a magic line, the
 * key's length and bytes, the choice's size and bytes, the time, and an
 * FNV-1a checksum of everything before it. A read compares the whole key,
 * so two keys that share a hash are a miss, never a wrong answer; any
 * mismatch in magic, lengths or checksum is a miss too, and the next put
 * replaces the file. A put writes <name>.<pid>.tmp then renames it over the
 * name (atomic on POSIX), so a concurrent build reads the old file or the
 * new one, never half of one. The directory is made on open (mode 0755,
 * parents included); a cache that cannot be made or written is simply not
 * used: tuning goes on without it. */
#include "codegen/tune_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/engine.h"

#define TC_MAGIC "symc-tuning-cache 1\n"
#define TC_KEY_MAX 1024
#define TC_PATH_MAX 4096

struct cg_tune_cache {
    char dir[TC_PATH_MAX];
    uint8_t prefix[TC_KEY_MAX]; /* device, versions: the start of every key */
    size_t prefix_len;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

int cg_cache_root(char *buf, size_t cap) {
    const char *env = getenv("SYMC_CACHE_DIR");
    int n;
    if (env) {
        if (!*env || !strcmp(env, "off")) return 0;
        n = snprintf(buf, cap, "%s", env);
    } else if ((env = getenv("XDG_CACHE_HOME")) && *env) n = snprintf(buf, cap, "%s/symc", env);
    else if ((env = getenv("HOME")) && *env) n = snprintf(buf, cap, "%s/.cache/symc", env);
    else return 0;
    return n > 0 && (size_t)n < cap;
}

/* mkdir -p */
static int make_dirs(char *path) {
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int bad = mkdir(path, 0755) && errno != EEXIST;
        *p = '/';
        if (bad) return 0;
    }
    return !mkdir(path, 0755) || errno == EEXIST;
}

cg_tune_cache *cg_tune_cache_open(const char *device, const char *cublas_version, const char *cudnn_version,
                                  char *where, size_t where_cap) {
    char root[TC_PATH_MAX];
    if (where && where_cap) where[0] = '\0';
    if (!cg_cache_root(root, sizeof root)) {
        if (where && where_cap) snprintf(where, where_cap, "off (SYMC_CACHE_DIR=off, or no HOME)");
        return NULL;
    }
    cg_tune_cache *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    int n = snprintf(c->dir, sizeof c->dir, "%s/tuning", root);
    int k = snprintf((char *)c->prefix, sizeof c->prefix, "%s\n%s\n%s\n", device ? device : "",
                     cublas_version ? cublas_version : "", cudnn_version ? cudnn_version : "");
    if (n <= 0 || (size_t)n >= sizeof c->dir || k <= 0 || (size_t)k >= sizeof c->prefix || !make_dirs(c->dir)) {
        if (where && where_cap) snprintf(where, where_cap, "not used: cannot make %s/tuning", root);
        free(c);
        return NULL;
    }
    c->prefix_len = (size_t)k;
    if (where && where_cap) snprintf(where, where_cap, "%s", c->dir);
    return c;
}

void cg_tune_cache_close(cg_tune_cache *c) { free(c); }

/* The file of a key: prefix then signature. */
static int path_of(const cg_tune_cache *c, const uint8_t *sig, size_t len, char *path, size_t cap) {
    uint64_t h = fnv(fnv(1469598103934665603ull, c->prefix, c->prefix_len), sig, len);
    int n = snprintf(path, cap, "%s/%016llx.tc", c->dir, (unsigned long long)h);
    return n > 0 && (size_t)n < cap;
}

int cg_tune_cache_get(cg_tune_cache *c, const uint8_t *sig, size_t len, uint8_t *algo, uint32_t *algo_size,
                      float *ms) {
    char path[TC_PATH_MAX + 32];
    if (!c || len > TC_KEY_MAX || !path_of(c, sig, len, path, sizeof path)) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    uint8_t buf[sizeof TC_MAGIC + 4 + 2 * TC_KEY_MAX + 4 + RT_ALGO_MAX + 4 + 8];
    size_t n = fread(buf, 1, sizeof buf, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    size_t m = sizeof TC_MAGIC - 1, key_len = c->prefix_len + len, at = m;
    uint32_t klen, asize;
    if (extra || n < m + 4 || memcmp(buf, TC_MAGIC, m)) return 0;
    memcpy(&klen, buf + at, 4);
    at += 4;
    if (klen != key_len || n < at + klen + 4) return 0;
    if (memcmp(buf + at, c->prefix, c->prefix_len) || memcmp(buf + at + c->prefix_len, sig, len)) return 0;
    at += klen;
    memcpy(&asize, buf + at, 4);
    at += 4;
    if (asize == 0 || asize > RT_ALGO_MAX || n != at + asize + 4 + 8) return 0;
    uint64_t sum;
    memcpy(&sum, buf + at + asize + 4, 8);
    if (sum != fnv(1469598103934665603ull, buf, at + asize + 4)) return 0;
    memcpy(algo, buf + at, asize);
    memcpy(ms, buf + at + asize, 4);
    *algo_size = asize;
    return 1;
}

void cg_tune_cache_put(cg_tune_cache *c, const uint8_t *sig, size_t len, const uint8_t *algo, uint32_t algo_size,
                       float ms) {
    char path[TC_PATH_MAX + 32], tmp[TC_PATH_MAX + 64];
    if (!c || len > TC_KEY_MAX || !algo_size || algo_size > RT_ALGO_MAX || !path_of(c, sig, len, path, sizeof path))
        return;
    uint8_t buf[sizeof TC_MAGIC + 4 + 2 * TC_KEY_MAX + 4 + RT_ALGO_MAX + 4 + 8];
    size_t m = sizeof TC_MAGIC - 1, at = 0;
    uint32_t klen = (uint32_t)(c->prefix_len + len);
    memcpy(buf, TC_MAGIC, m);
    at = m;
    memcpy(buf + at, &klen, 4);
    at += 4;
    memcpy(buf + at, c->prefix, c->prefix_len);
    memcpy(buf + at + c->prefix_len, sig, len);
    at += klen;
    memcpy(buf + at, &algo_size, 4);
    at += 4;
    memcpy(buf + at, algo, algo_size);
    at += algo_size;
    memcpy(buf + at, &ms, 4);
    at += 4;
    uint64_t sum = fnv(1469598103934665603ull, buf, at);
    memcpy(buf + at, &sum, 8);
    at += 8;
    int n = snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    if (n <= 0 || (size_t)n >= sizeof tmp) return;
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    int ok = fwrite(buf, 1, at, f) == at;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path)) remove(tmp);
}
