/* The on-disk build cache (codegen/cache.h): SHA-256 keys (and XXH64, the
 * fast digest of bulk bytes a key may take), the folder, and checked entries
 * written atomically.
 *
 * SHA-256 is FIPS 180-4 written out plainly (the test checks it against the
 * standard's vectors): a key must never collide, since a wrong cubin would
 * be a silently wrong result. An entry file is a header and the payload:
 *   "SYMCACHE", u32 format (1), u32 0, the 32-byte key, u64 payload size,
 *   the SHA-256 of the payload (32 bytes), then the payload;
 * integers little endian. A read checks all of it against the file's size
 * and the key asked for. A write goes to a mkstemp file in the entry's
 * folder, then rename() puts it in place (atomic on POSIX within a folder),
 * so a reader sees the old entry, the new one, or none. */
#include "codegen/cache.h"
#include "ir/ir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- SHA-256 -------------------------------------------------------------------------- */
static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void block(uint32_t h[8], const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
}

void cg_hash_init(cg_hash *s) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, iv, sizeof iv);
    s->bytes = 0;
    s->used = 0;
}

void cg_hash_update(cg_hash *s, const void *data, size_t n) {
    const uint8_t *p = data;
    s->bytes += n;
    while (n) {
        if (s->used == 0 && n >= 64) {
            block(s->h, p);
            p += 64, n -= 64;
            continue;
        }
        size_t take = 64 - s->used < n ? 64 - s->used : n;
        memcpy(s->buf + s->used, p, take);
        s->used += take, p += take, n -= take;
        if (s->used == 64) block(s->h, s->buf), s->used = 0;
    }
}

void cg_hash_str(cg_hash *s, const char *str) {
    uint64_t n = str ? strlen(str) : 0;
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)(n >> (8 * i));
    cg_hash_update(s, len, 8);
    if (n) cg_hash_update(s, str, (size_t)n);
}

void cg_hash_final(cg_hash *s, uint8_t out[CG_HASH_BYTES]) {
    uint64_t bits = s->bytes * 8;
    uint8_t pad[72] = {0x80};
    size_t npad = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++) pad[npad + i] = (uint8_t)(bits >> (56 - 8 * i));
    cg_hash_update(s, pad, npad + 8);
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

/* ---- XXH64 ----------------------------------------------------------------------------- */
/* xxHash's 64-bit algorithm as its specification gives it: four lanes over 32-byte stripes, then
 * the tail in 8, 4 and 1-byte steps, then the avalanche. Words are read little endian (memcpy: any
 * alignment), so the digest is the reference one on every host. */
#define P1 0x9E3779B185EBCA87ull
#define P2 0xC2B2AE3D27D4EB4Full
#define P3 0x165667B19E3779F9ull
#define P4 0x85EBCA77C2B2AE63ull
#define P5 0x27D4EB2F165667C5ull

static uint64_t rotl64(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

static uint64_t read64(const uint8_t *p) {
    uint64_t v = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&v, p, 8);
#else
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
#endif
    return v;
}

static uint64_t xxround(uint64_t acc, uint64_t input) { return rotl64(acc + input * P2, 31) * P1; }

static uint64_t xxmerge(uint64_t acc, uint64_t v) { return (acc ^ xxround(0, v)) * P1 + P4; }

uint64_t cg_hash64(const void *data, size_t n, uint64_t seed) {
    const uint8_t *p = data, *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        for (; end - p >= 32; p += 32) {
            v1 = xxround(v1, read64(p));
            v2 = xxround(v2, read64(p + 8));
            v3 = xxround(v3, read64(p + 16));
            v4 = xxround(v4, read64(p + 24));
        }
        h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
        h = xxmerge(xxmerge(xxmerge(xxmerge(h, v1), v2), v3), v4);
    } else {
        h = seed + P5;
    }
    h += (uint64_t)n;
    for (; end - p >= 8; p += 8) h = rotl64(h ^ xxround(0, read64(p)), 27) * P1 + P4;
    if (end - p >= 4) {
        uint64_t w = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24;
        h = rotl64(h ^ w * P1, 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++) h = rotl64(h ^ *p * P5, 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ (h >> 32);
}

/* ---- the folder ---------------------------------------------------------------------- */
int cg_cache_dir(char *buf, size_t cap) {
    const char *v = getenv("SYMC_CACHE_DIR"), *home;
    int n = -1;
    if (v) {
        if (*v && strcmp(v, "off")) n = snprintf(buf, cap, "%s", v);
    } else if ((v = getenv("XDG_CACHE_HOME")) && v[0] == '/') {
        n = snprintf(buf, cap, "%s/symc", v);
    } else if ((home = getenv("HOME")) && *home) {
        n = snprintf(buf, cap, "%s/.cache/symc", home);
    }
    if (n < 0 || (size_t)n >= cap) {
        if (cap) buf[0] = '\0';
        return 0;
    }
    return 1;
}

/* <dir>/<kind>/<hex> into buf (hex NULL: the folder); 0 when it does not fit or the cache is off */
static int entry_path(char *buf, size_t cap, const char *kind, const uint8_t *key) {
    char dir[3072];
    if (!cg_cache_dir(dir, sizeof dir)) return 0;
    char hex[2 * CG_HASH_BYTES + 1] = "";
    for (int i = 0; key && i < CG_HASH_BYTES; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
    int n = key ? snprintf(buf, cap, "%s/%s/%s", dir, kind, hex) : snprintf(buf, cap, "%s/%s", dir, kind);
    return n >= 0 && (size_t)n < cap;
}

/* mkdir -p */
static int make_dirs(char *path) {
    for (char *p = path + 1;; p++) {
        if (*p != '/' && *p != '\0') continue;
        char c = *p;
        *p = '\0';
        int ok = mkdir(path, 0777) == 0 || errno == EEXIST;
        *p = c;
        if (!ok) return -1;
        if (!c) return 0;
    }
}

/* ---- entries ---------------------------------------------------------------------------- */
#define MAGIC "SYMCACHE"
#define HEADER (8 + 4 + 4 + CG_HASH_BYTES + 8 + CG_HASH_BYTES)
#define ENTRY_MAX ((size_t)1 << 30)

static void put_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_u64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void digest(const void *bytes, size_t size, uint8_t out[CG_HASH_BYTES]) {
    cg_hash h;
    cg_hash_init(&h);
    cg_hash_update(&h, bytes, size);
    cg_hash_final(&h, out);
}

int cg_cache_get(const char *kind, const uint8_t key[CG_HASH_BYTES], uint8_t **bytes, size_t *size) {
    *bytes = NULL;
    *size = 0;
    char path[4096];
    if (!entry_path(path, sizeof path, kind, key)) return 0;
    const char *what;
    FILE *f = ir_open_regular(path, &what); /* a FIFO or device at the entry's path: a miss, not a hang */
    if (!f) return 0;
    struct stat sb;
    uint8_t *data = NULL;
    int hit = 0;
    if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size >= HEADER &&
        (uint64_t)sb.st_size <= ENTRY_MAX + HEADER && (data = malloc((size_t)sb.st_size)) &&
        fread(data, 1, (size_t)sb.st_size, f) == (size_t)sb.st_size) {
        static const uint8_t format[8] = {1, 0, 0, 0, 0, 0, 0, 0};
        uint64_t n = get_u64(data + 16 + CG_HASH_BYTES);
        uint8_t d[CG_HASH_BYTES];
        if (!memcmp(data, MAGIC, 8) && !memcmp(data + 8, format, 8) && !memcmp(data + 16, key, CG_HASH_BYTES) &&
            n == (uint64_t)sb.st_size - HEADER) {
            digest(data + HEADER, (size_t)n, d);
            hit = !memcmp(d, data + 24 + CG_HASH_BYTES, CG_HASH_BYTES);
        }
        if (hit) {
            memmove(data, data + HEADER, (size_t)n);
            *bytes = data;
            *size = (size_t)n;
        }
    }
    fclose(f);
    if (!hit) free(data);
    return hit;
}

int cg_cache_put(const char *kind, const uint8_t key[CG_HASH_BYTES], const void *bytes, size_t size, char *why,
                 size_t why_cap) {
    char path[4096], tmp[4200];
    if (why_cap) why[0] = '\0';
    if (!entry_path(path, sizeof path, kind, NULL)) return 0; /* off */
    if (size > ENTRY_MAX) return 0;                           /* not worth keeping */
    if (make_dirs(path)) {
        snprintf(why, why_cap, "cannot create '%s': %s", path, strerror(errno));
        return -1;
    }
    snprintf(tmp, sizeof tmp, "%s/.tmp-XXXXXX", path);
    if (!entry_path(path, sizeof path, kind, key)) return 0;
    int fd = mkstemp(tmp);
    if (fd < 0) {
        snprintf(why, why_cap, "cannot write in '%.3000s': %s", tmp, strerror(errno));
        return -1;
    }
    uint8_t head[HEADER] = MAGIC;
    head[8] = 1;
    memcpy(head + 16, key, CG_HASH_BYTES);
    put_u64(head + 16 + CG_HASH_BYTES, size);
    digest(bytes, size, head + 24 + CG_HASH_BYTES);
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(head, 1, HEADER, f) == HEADER && fwrite(bytes, 1, size, f) == size;
    int saved = errno;
    if (f) ok &= fclose(f) == 0;
    else close(fd);
    if (ok && rename(tmp, path) == 0) return 0;
    if (!ok) errno = saved;
    snprintf(why, why_cap, "cannot write '%.3000s': %s", path, strerror(errno));
    remove(tmp);
    return -1;
}
