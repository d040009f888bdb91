/* The engine file's bytes and its checksum trailer, which must never change
 * without a format version (engines written before must load, engines
 * written again must be byte-identical):
 *   - rt_engine_checksum against the format's definition written out here
 *     byte by byte (eight FNV-1a lanes, byte i to lane i % 8 up to the last
 *     whole 8 bytes, the rest to lane 0, the lanes folded byte by byte, xor
 *     the length), at every length 0..80 and from every alignment, on larger
 *     buffers, and against stored values (so the two cannot drift together);
 *   - a literal engine whose constants have odd sizes (0, 1, 7, 13, 4099,
 *     1 MiB + 3) and a region graph with constants of its own: its bytes'
 *     checksum and size against stored values taken from the encoder before
 *     it wrote the constants straight to the output (gcc's and clang's: the
 *     encoder's argument order is the compiler's), its trailer against the
 *     definition, and rt_engine_encode_to's pieces, concatenated, against
 *     rt_engine_encode's bytes (a sink that fails stops the writing with its
 *     status). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "tests/check.h"

/* The format's checksum, the plain way (runtime/engine_checksum.c computes the same value faster). */
static uint64_t ref_checksum(const uint8_t *p, size_t n) {
    const uint64_t prime = 1099511628211ull, basis = 1469598103934665603ull;
    uint64_t lane[8];
    for (int k = 0; k < 8; k++) lane[k] = basis ^ (uint64_t)k;
    size_t whole = n - n % 8;
    for (size_t i = 0; i < n; i++) {
        int k = i < whole ? (int)(i % 8) : 0;
        lane[k] = (lane[k] ^ p[i]) * prime;
    }
    uint64_t h = basis;
    for (int k = 0; k < 8; k++)
        for (int b = 0; b < 8; b++) h = (h ^ ((lane[k] >> (8 * b)) & 0xff)) * prime;
    return h ^ n;
}

static void fill(uint8_t *p, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (uint8_t)(seed >> 24);
    }
}

static void check_checksum(void) {
    enum { kBig = (1 << 20) + 13 };
    uint8_t *buf = malloc(kBig + 8);
    if (!buf) {
        CHECK(buf != NULL);
        return;
    }
    fill(buf, kBig + 8, 7);
    int bad = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 80; n++) bad += rt_engine_checksum(buf + off, n) != ref_checksum(buf + off, n);
    CHECK_MSG(bad == 0, "%d short buffers checksum differently from the definition", bad);
    const size_t big[] = {4095, 4096, 4097, 65536 + 3, kBig};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        for (size_t off = 0; off < 8; off += 3)
            CHECK_MSG(rt_engine_checksum(buf + off, big[i]) == ref_checksum(buf + off, big[i]), "%zu bytes at +%zu",
                      big[i], off);
    /* stored values (the checksum of engines written since format 1) */
    CHECK(rt_engine_checksum(buf, 0) == 0x2d2ebf88ec44bb23ull);
    CHECK(rt_engine_checksum(buf, 13) == 0xb58a7661e279ba6bull);
    CHECK(rt_engine_checksum(buf + 5, 4099) == 0x49791ac615c76eb2ull);
    CHECK(rt_engine_checksum(buf, kBig) == 0xb5bd44359fa2deeaull);
    free(buf);
}

/* ---- a literal engine with odd-sized constants -------------------------------------------------- */

enum { kNConst = 6, kNRegionConst = 2 };
static const size_t kConstSize[kNConst] = {0, 1, 7, 13, 4099, (1u << 20) + 3};
static const size_t kRegionConstSize[kNRegionConst] = {5, 3};

typedef struct lit {
    uint8_t *data[kNConst + kNRegionConst];
    rt_constant consts[kNConst], region_consts[kNRegionConst];
    rt_tensor tensors[kNConst];
    rt_region regions[2];
    rt_engine e;
} lit;

static int lit_make(lit *l) {
    memset(l, 0, sizeof *l);
    for (int i = 0; i < kNConst + kNRegionConst; i++) {
        size_t n = i < kNConst ? kConstSize[i] : kRegionConstSize[i - kNConst];
        if (!(l->data[i] = malloc(n ? n : 1))) return 0;
        fill(l->data[i], n, 100u + (uint32_t)i);
        if (i < kNConst) l->consts[i] = (rt_constant){l->data[i], n};
        else l->region_consts[i - kNConst] = (rt_constant){l->data[i], n};
    }
    static const char *const names[kNConst] = {"c0", "c1", "c7", "c13", "c4099", "c1m"};
    for (int i = 0; i < kNConst; i++) l->tensors[i] = (rt_tensor){names[i], SYMC_U8, 1, {0}, (uint32_t)i};
    static const rt_symbol syms[1] = {{"N", 1, 4, 16, 1}};
    static const uint8_t program[5] = {1, 2, 3, 4, 5};
    static const uint32_t io[1] = {0}, map[1] = {0};
    static const rt_guard cond[1] = {{SYM_REL_LE, 0, 1, "N <= 8", 0}};
    rt_engine g = {0};
    g.symbols = syms;
    g.n_symbols = 1;
    g.program = program;
    g.program_size = sizeof program;
    g.num_slots = 1;
    g.tensors = l->tensors;
    g.n_tensors = kNConst;
    g.inputs = io;
    g.n_inputs = 1;
    g.outputs = io;
    g.n_outputs = 1;
    l->e = g;
    l->e.symc_version = "0.0.0-golden";
    l->e.cuda_version = "13.0";
    l->e.cublas_version = "13.0.0";
    l->e.cudnn_version = "9.10.0";
    l->e.name = "odd-constants";
    l->e.constants = l->consts;
    l->e.n_constants = kNConst;
    l->e.region_program = program;
    l->e.region_program_size = 3;
    l->e.region_slots = 2;
    for (int r = 0; r < 2; r++) {
        l->regions[r] = (rt_region){r ? "N > 8" : "N <= 8", cond, 1, map, 1, g};
        /* region 1's graph has constants of its own (only tests write them: the decoder refuses them) */
        l->regions[r].graph.constants = r ? l->region_consts : l->consts;
        l->regions[r].graph.n_constants = r ? kNRegionConst : kNConst;
    }
    l->e.regions = l->regions;
    l->e.n_regions = 2;
    return 1;
}

static void lit_free(lit *l) {
    for (int i = 0; i < kNConst + kNRegionConst; i++) free(l->data[i]);
}

/* A sink that collects the pieces (fail_at: the call that fails, 0 for none). */
typedef struct sink {
    uint8_t *bytes;
    size_t size;
    int calls, fail_at, failed;
} sink;

static symc_status collect(void *ctx, const uint8_t *bytes, size_t size, symc_error *err) {
    sink *s = ctx;
    if (++s->calls == s->fail_at) return symc_error_setf(err, SYMC_ERR_IO, "disk full");
    uint8_t *b = realloc(s->bytes, s->size + size + 1);
    if (!b) {
        s->failed = 1;
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
    }
    if (size) memcpy(b + s->size, bytes, size);
    s->bytes = b;
    s->size += size;
    return SYMC_OK;
}

static void check_literal_engine(void) {
    lit l;
    if (!lit_make(&l)) {
        CHECK(!"out of memory");
        lit_free(&l);
        return;
    }
    /* [without regions, with]: taken from main at 2ff9e64, the encoder that copied the builder's
     * buffer; the bytes depend on the C++ compiler (see test_engine_regions.c) */
#if defined(__clang__)
    const uint64_t kGolden[2] = {0x2338f9c4d4c0055dull, 0xa3be3e2226cece52ull};
#else
    const uint64_t kGolden[2] = {0x77956c5043e79a07ull, 0xbf0034c4e83e7733ull};
#endif
    const size_t kGoldenSize[2] = {1053532, 1054972};
    symc_error err;
    for (int regions = 0; regions < 2; regions++) {
        rt_engine e = l.e;
        if (!regions) e.regions = NULL, e.n_regions = 0, e.region_program = NULL, e.region_program_size = 0;
        uint8_t *bytes = NULL;
        size_t size = 0;
        CHECK_MSG(rt_engine_encode(&e, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
        if (!bytes) continue;
        uint64_t h = rt_engine_checksum(bytes, size);
        CHECK_MSG(size == kGoldenSize[regions] && h == kGolden[regions],
                  "the engine's bytes changed (regions %d): %zu bytes, 0x%016llx", regions, size,
                  (unsigned long long)h);
        /* the trailer: "SXCK" and the checksum of everything before it, little endian */
        CHECK(size > 12 && !memcmp(bytes + size - 12, "SXCK", 4));
        uint64_t t = 0;
        for (int i = 0; i < 8; i++) t |= (uint64_t)bytes[size - 8 + i] << (8 * i);
        CHECK(t == ref_checksum(bytes, size - 12));
        /* the same bytes through a sink, in pieces */
        sink s = {0};
        CHECK_MSG(rt_engine_encode_to(&e, collect, &s, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(!s.failed && s.size == size && !memcmp(s.bytes, bytes, size), "%zu bytes in %d pieces, not the %zu",
                  s.size, s.calls, size);
        CHECK(s.calls >= 2 * kNConst);
        /* a sink's failure stops the writing, its status and message returned */
        for (int stop = 1; stop <= s.calls; stop += stop < 4 ? 1 : s.calls / 3) {
            sink f = {.fail_at = stop};
            CHECK(rt_engine_encode_to(&e, collect, &f, &err) == SYMC_ERR_IO && f.calls == stop);
            CHECK_CONTAINS(err.msg, "disk full");
            free(f.bytes);
        }
        free(s.bytes);
        free(bytes);
    }
    lit_free(&l);
}

int main(void) {
    check_checksum();
    check_literal_engine();
    return check_report("runtime.engine_checksum");
}
