/* Build time without a GPU: the kernels split into modules compiled in
 * parallel, identical kernels emitted once, and the on-disk build cache
 * (codegen/cache.c).
 *
 * SHA-256 is checked against FIPS 180-4's vectors (fed in odd pieces). A
 * model of six different elementwise kernels, built with three modules
 * forced, must give an engine of three modules, each with cubin and PTX,
 * every kernel's entry point in its own module's PTX and no other, the
 * modules runs of consecutive kernels; it decodes, re-encodes to the same
 * bytes, and the same build again with the same SYMC_CACHE_DIR (a temporary
 * folder) reads all three modules from the cache and gives byte-identical
 * engines. A cache entry cut short, or with one byte changed, is compiled
 * again (not used) and rewritten whole; an entry under another key's name is
 * a miss; a cache folder that cannot be created fails nothing and says so
 * once in the progress lines; SYMC_CACHE_DIR=off writes nothing. Two
 * elementwise chains that differ only in their tensors are one kernel both
 * steps launch (with their own arguments); a third with another op is a
 * kernel of its own. The prelude names nothing the dedupe renames (t<n>,
 * v<n>, q<n>, s<n>). XXH64 (cg_hash64) gives xxHash's reference values.
 *
 * The fp16 range calibration's entries ("calib", codegen/compile.c): a module
 * with a matmul and a softmax compiled --fp16 twice with a cache reads the
 * second calibration back (its progress line says so) and gives the same
 * islands and engine bytes as a build without the cache; one weight changed
 * (to 1e5, which makes an island) is another key, calibrated again, island
 * found; the entry with a changed byte, cut short, replaced by whole entries
 * of the wrong count or size (values that would change the islands), or with
 * a value no calibration writes, is a miss: calibrated again, the same
 * result, and the entry rewritten byte for byte as the first build wrote it;
 * SYMC_CACHE_DIR=off calibrates every time and writes nothing; a folder that
 * cannot be made fails nothing and says why. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/cache.h"
#include "codegen/codegen.h"
#include "runtime/engine.h"
#include "tests/check.h"

static void hex(const uint8_t *d, char *out) {
    for (int i = 0; i < CG_HASH_BYTES; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static void test_sha256(void) {
    static const struct {
        const char *text;
        size_t repeat;
        const char *digest;
    } v[] = {
        {"", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t n = strlen(v[i].text) * v[i].repeat;
        char *buf = malloc(n + 1);
        for (size_t k = 0; k < v[i].repeat; k++) memcpy(buf + k * strlen(v[i].text), v[i].text, strlen(v[i].text));
        cg_hash h;
        cg_hash_init(&h);
        for (size_t at = 0, step = 1; at < n; at += step, step = step * 3 + 1) /* pieces across block edges */
            cg_hash_update(&h, buf + at, at + step > n ? n - at : step);
        uint8_t d[CG_HASH_BYTES];
        char got[2 * CG_HASH_BYTES + 1];
        cg_hash_final(&h, d);
        hex(d, got);
        CHECK_MSG(!strcmp(got, v[i].digest), "sha256 vector %zu: %s", i, got);
        free(buf);
    }
}

/* XXH64 against xxHash's own values (the python xxhash package, seeds 0 and 0x5eed): every path of
 * the algorithm (under 32 bytes, stripes, 8/4/1-byte tails) */
static void test_xxh64(void) {
    static const struct {
        size_t n;
        uint64_t seed0, seed5eed;
    } v[] = {
        {0, 0xef46db3751d8e999ull, 0x4e167d2026e7365cull},    {3, 0x31d2363f52e564c9ull, 0x907c35e191ba3f5bull},
        {7, 0x9a7b149959ce60d8ull, 0xb1abb2ee077af106ull},    {8, 0xdab99d95c6f90092ull, 0x105fcf88a24212c6ull},
        {31, 0xa2aa5f33cc4a6119ull, 0x1d3bd1a2a64d640full},   {32, 0x23c3c17ef790fd97ull, 0x56bc51db378cd80eull},
        {33, 0x50a7cfc7ba588784ull, 0x63a2f07e4f4acb91ull},   {100, 0xa61f8d4c170fe531ull, 0xc5491e324458f8fcull},
        {1000, 0x5f235fa033f1a3fbull, 0x79ab3458459e839full},
    };
    uint8_t d[1001];
    for (int i = 0; i < 1000; i++) d[i + 1] = (uint8_t)(i * 7 + 3); /* d + 1: not 8-byte aligned */
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        CHECK_MSG(cg_hash64(d + 1, v[i].n, 0) == v[i].seed0, "xxh64 of %zu bytes", v[i].n);
        CHECK_MSG(cg_hash64(d + 1, v[i].n, 0x5eed) == v[i].seed5eed, "xxh64 of %zu bytes, seed 0x5eed", v[i].n);
    }
    CHECK(cg_hash64("abc", 3, 0) == 0x44bc2cf5ad770999ull);
}

static symc_tensor node(symc_module *m, const char *op, const char *name, const symc_tensor *in, uint32_t n_in) {
    symc_error err;
    symc_tensor out = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_node(m, op, name, in, n_in, NULL, 0, &out, 1, &err) == SYMC_OK, "%s: %s", name, err.msg);
    return out;
}

/* x[B, 16] through `n` kernels that differ (a different unary op each,
 * each result an output, so no two fuse) */
static symc_module *six_kernels(void) {
    static const char *const ops[] = {"relu", "exp", "tanh", "sigmoid", "abs", "neg"};
    symc_error err;
    symc_module *m = symc_module_create("six", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 16)};
    symc_tensor x, y;
    symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 2, d, &y, &err);
    for (int i = 0; i < 6; i++) {
        char a[16], b[16];
        snprintf(a, sizeof a, "add%d", i);
        snprintf(b, sizeof b, "%s%d", ops[i], i);
        symc_tensor s = node(m, "add", a, (symc_tensor[]){i % 2 ? x : y, i % 2 ? y : x}, 2);
        symc_tensor r = node(m, ops[i], b, &s, 1);
        symc_mark_output(m, r, &err);
    }
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    return m;
}

typedef struct lines {
    char text[4096];
} lines;

static void on_progress(void *ctx, const char *msg) {
    lines *l = ctx;
    size_t n = strlen(l->text);
    snprintf(l->text + n, sizeof l->text - n, "%s\n", msg);
}

/* one build: bytes (malloc'd), stats, progress lines */
static symc_status build(symc_module *m, uint32_t modules, uint8_t **bytes, size_t *size, cg_build_stats *stats,
                         lines *l, symc_error *err) {
    cg_options o = cg_default_options();
    o.arch = "sm_90";
    o.tune = 0;
    o.nvrtc_modules = modules;
    o.stats = stats;
    memset(stats, 0, sizeof *stats);
    if (l) {
        l->text[0] = '\0';
        o.progress = on_progress;
        o.progress_ctx = l;
    }
    return cg_build_engine(m, &o, bytes, size, err);
}

/* the files in dir/kind, sorted by name into names[] (up to cap); count */
static int entries(const char *dir, const char *kind, char names[][1024], int cap) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, kind);
    DIR *d = opendir(path);
    int n = 0;
    if (!d) return 0;
    for (struct dirent *de; (de = readdir(d));)
        if (de->d_name[0] != '.' && n < cap) snprintf(names[n++], 1024, "%s/%s", path, de->d_name);
    closedir(d);
    for (int i = 0; i < n; i++) /* sort: a stable order to pick from */
        for (int j = i + 1; j < n; j++)
            if (strcmp(names[j], names[i]) < 0) {
                char t[1024];
                memcpy(t, names[i], sizeof t);
                memcpy(names[i], names[j], sizeof t);
                memcpy(names[j], t, sizeof t);
            }
    return n;
}

static long file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) ? -1 : (long)sb.st_size;
}

static int has_entry(const char *ptx, const char *name) {
    char want[256];
    snprintf(want, sizeof want, ".entry %s(", name);
    return strstr(ptx, want) != NULL;
}

static void check_modules(const rt_engine *e, uint32_t want) {
    CHECK_MSG(e->n_modules == want, "%u modules, wanted %u", e->n_modules, want);
    CHECK(e->n_kernels == 12 / 2); /* six kernels */
    for (uint32_t i = 0; i < e->n_modules; i++)
        CHECK_MSG(e->modules[i].cubin_size > 0 && strstr(e->modules[i].ptx, ".entry"), "module %u", i);
    uint32_t per[16] = {0};
    for (uint32_t k = 0; k < e->n_kernels; k++) {
        uint32_t mk = e->kernel_module[k];
        CHECK(mk < e->n_modules && (k == 0 || mk == e->kernel_module[k - 1] || mk == e->kernel_module[k - 1] + 1));
        if (mk >= e->n_modules) continue;
        per[mk]++;
        for (uint32_t i = 0; i < e->n_modules; i++)
            CHECK_MSG(has_entry(e->modules[i].ptx, e->kernel_names[k]) == (i == mk), "kernel %s in module %u's PTX",
                      e->kernel_names[k], i);
    }
    for (uint32_t i = 0; i < e->n_modules && i < 16; i++) CHECK_MSG(per[i] >= 1, "module %u has no kernel", i);
}

/* SYMC_CACHE_DIR set to a folder that cannot be made: below the file dir/afile */
static void block_cache(const char *dir) {
    char blocked[600];
    snprintf(blocked, sizeof blocked, "%s/afile", dir);
    FILE *f = fopen(blocked, "w");
    if (f) fclose(f);
    snprintf(blocked, sizeof blocked, "%s/afile/cache", dir);
    setenv("SYMC_CACHE_DIR", blocked, 1);
}

/* the byte `back` bytes before the end of file `path`, xor mask (a damaged cache entry) */
static void flip_byte(const char *path, long back, int mask) {
    FILE *f = fopen(path, "r+b");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, -back, SEEK_END);
    int c = fgetc(f);
    fseek(f, -back, SEEK_END);
    fputc(c ^ mask, f);
    fclose(f);
}

static void test_modules_and_cache(const char *dir) {
    char cache[400];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    setenv("SYMC_CACHE_DIR", cache, 1);
    symc_module *m = six_kernels();
    symc_error err;
    cg_build_stats s;
    lines l;
    uint8_t *first = NULL, *again = NULL;
    size_t first_size = 0, again_size = 0;
    CHECK_MSG(build(m, 3, &first, &first_size, &s, &l, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(s.modules == 3 && s.cached == 0 && s.kernels == 6 && s.kernel_steps == 6, "%u modules, %u cached",
              s.modules, s.cached);
    CHECK_CONTAINS(l.text, "NVRTC 3/3 modules (0 cached)");
    rt_engine *e = NULL;
    CHECK_MSG(first && rt_engine_decode(first, first_size, &e, &err) == SYMC_OK, "%s", err.msg);
    if (e) {
        check_modules(e, 3);
        uint8_t *re = NULL;
        size_t re_size = 0;
        CHECK_MSG(rt_engine_encode(e, &re, &re_size, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(re_size == first_size && !memcmp(re, first, first_size), "re-encoded: %zu vs %zu bytes", re_size,
                  first_size);
        free(re);
        rt_engine_free(e);
    }
    char names[8][1024];
    CHECK(entries(cache, "nvrtc", names, 8) == 3);

    /* the same build again: every module from the cache, the same bytes */
    CHECK_MSG(build(m, 3, &again, &again_size, &s, &l, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(s.cached == 3, "%u of 3 cached", s.cached);
    CHECK_CONTAINS(l.text, "(3 cached)");
    CHECK(again_size == first_size && again && !memcmp(again, first, first_size));
    free(again);

    /* an entry cut short is compiled again and rewritten whole */
    long whole = file_size(names[0]);
    CHECK(whole > 100 && truncate(names[0], whole / 2) == 0);
    CHECK_MSG(build(m, 3, &again, &again_size, &s, &l, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(s.cached == 2, "%u of 3 cached after a truncation", s.cached);
    CHECK(again_size == first_size && again && !memcmp(again, first, first_size));
    CHECK(file_size(names[0]) == whole);
    free(again);

    /* so is an entry with one byte changed (its checksum fails) */
    flip_byte(names[1], 10, 0x40);
    CHECK_MSG(build(m, 3, &again, &again_size, &s, &l, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(s.cached == 2, "%u of 3 cached after a changed byte", s.cached);
    CHECK(again_size == first_size && again && !memcmp(again, first, first_size));
    free(again);

    /* an entry under another key's name: its header names its own key */
    uint8_t key[CG_HASH_BYTES] = {1, 2, 3}, *bytes = NULL;
    size_t size = 0;
    char why[512];
    CHECK(cg_cache_put("test", key, "hello", 5, why, sizeof why) == 0);
    CHECK(cg_cache_get("test", key, &bytes, &size) == 1 && size == 5 && bytes && !memcmp(bytes, "hello", 5));
    free(bytes);
    char from[600], to[600];
    snprintf(from, sizeof from, "%s/test/0102030000000000000000000000000000000000000000000000000000000000", cache);
    snprintf(to, sizeof to, "%s/test/0902030000000000000000000000000000000000000000000000000000000000", cache);
    CHECK(rename(from, to) == 0);
    key[0] = 9;
    CHECK(cg_cache_get("test", key, &bytes, &size) == 0 && bytes == NULL);

    /* a cache folder that cannot be made (below a file): built anyway, said once */
    block_cache(dir);
    CHECK_MSG(build(m, 3, &again, &again_size, &s, &l, &err) == SYMC_OK, "%s", err.msg);
    CHECK(s.cached == 0 && again_size == first_size && again && !memcmp(again, first, first_size));
    CHECK_CONTAINS(l.text, "build cache: cannot create");
    char *said = strstr(l.text, "build cache:");
    CHECK(said && !strstr(said + 1, "build cache:"));
    free(again);

    /* off: nothing read, nothing written */
    char offdir[600];
    snprintf(offdir, sizeof offdir, "%s/never", dir);
    setenv("SYMC_CACHE_DIR", "off", 1);
    CHECK_MSG(build(m, 2, &again, &again_size, &s, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK(s.cached == 0 && s.modules == 2);
    CHECK(!cg_cache_dir(offdir, sizeof offdir) && offdir[0] == '\0');
    free(again);

    /* more modules asked than kernels: one kernel each */
    setenv("SYMC_CACHE_DIR", cache, 1);
    CHECK_MSG(build(m, 40, &again, &again_size, &s, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(s.modules == 6, "%u modules for 6 kernels", s.modules);
    if (again && rt_engine_decode(again, again_size, &e, &err) == SYMC_OK) {
        check_modules(e, 6);
        rt_engine_free(e);
    }
    free(again);
    free(first);
    symc_module_destroy(m);
}

/* ---- the fp16 range calibration in the cache (codegen/compile.c) ---- */
/* x[B, 16] -> h = x·w -> y = relu(h), and p = softmax(x): every weight 0.01 but w[0][0] = w00. With
 * w00 = 1e5, h passes fp16's limit at calibration: h is an fp32 island ("calibrated range"). */
static symc_module *calib_module(float w00) {
    symc_error err;
    symc_module *m = symc_module_create("calib", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    float w[16 * 16];
    for (int i = 0; i < 16 * 16; i++) w[i] = 0.01f;
    w[0] = w00;
    symc_tensor x, wt, h, y, p;
    symc_attr axis = symc_attr_int("axis", -1);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 16)}, &x, &err);
    CHECK(symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){16, 16}, w, sizeof w, &wt, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, wt}, 2, NULL, 0, &h, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &h, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "softmax", "sm", &x, 1, &axis, 1, &p, 1, &err) == SYMC_OK);
    symc_mark_output(m, y, &err);
    symc_mark_output(m, p, &err);
    return m;
}

typedef struct calib_result {
    lines l;
    char islands[1024];
    uint8_t *engine; /* the .symx's bytes (malloc'd) */
    long size;
} calib_result;

/* a whole file (malloc'd), NULL when it cannot be read */
static uint8_t *read_all(const char *path, long *size) {
    *size = file_size(path);
    FILE *f = fopen(path, "rb");
    uint8_t *b = f && *size > 0 ? malloc((size_t)*size) : NULL;
    if (b && fread(b, 1, (size_t)*size, f) != (size_t)*size) {
        free(b);
        b = NULL;
    }
    if (f) fclose(f);
    return b;
}

/* calib_module(w00) compiled with --fp16 (reference engine) to dir/calib.symx: its progress lines,
 * its fp32 islands and the engine's bytes */
static void calib_build(const char *dir, float w00, calib_result *r) {
    char path[600];
    snprintf(path, sizeof path, "%s/calib.symx", dir);
    memset(r, 0, sizeof *r);
    symc_module *m = calib_module(w00);
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = 0;
    o.precision = SYMC_PRECISION_FP16;
    o.progress = on_progress;
    o.ctx = &r->l;
    symc_error err;
    CHECK_MSG(symc_module_compile(m, &o, path, &err) == SYMC_OK, "%s", err.msg);
    size_t n = 0;
    for (uint32_t i = 0; i < m->n_islands; i++)
        n += (size_t)snprintf(r->islands + n, sizeof r->islands - n, "%s=%s;", m->islands[i].node, m->islands[i].kind);
    r->engine = read_all(path, &r->size);
    CHECK(r->engine != NULL);
    symc_module_destroy(m);
}

static int same_result(const calib_result *a, const calib_result *b) {
    return !strcmp(a->islands, b->islands) && a->size == b->size && a->engine && b->engine &&
        !memcmp(a->engine, b->engine, (size_t)a->size);
}

#define CALIBRATED "precision: range calibration at min on the reference backend"
#define FROM_CACHE "precision: range calibration from the cache"
/* one calib_build whose calibration ran (from_cache 0) or was read back (1), and whose result is
 * want's; what names the case in a failure */
static void build_expect(const char *dir, float w00, int from_cache, const calib_result *want, const char *what) {
    calib_result r;
    calib_build(dir, w00, &r);
    CHECK_MSG(strstr(r.l.text, from_cache ? FROM_CACHE : CALIBRATED) &&
                  !strstr(r.l.text, from_cache ? CALIBRATED : FROM_CACHE),
              "%s: %s", what, r.l.text);
    CHECK_MSG(same_result(&r, want), "%s: islands %s, want %s", what, r.islands, want->islands);
    free(r.engine);
}

static void test_calibration_cache(const char *dir) {
    char cache[400], names[8][1024];
    snprintf(cache, sizeof cache, "%s/calib_cache", dir);
    calib_result truth, big_truth, r;

    /* the truth, without the cache: small weights give no calibrated island, one of 1e5 does */
    setenv("SYMC_CACHE_DIR", "off", 1);
    calib_build(dir, 0.01f, &truth);
    CHECK_CONTAINS(truth.l.text, CALIBRATED);
    CHECK_MSG(!strstr(truth.islands, "calibrated range"), "islands %s", truth.islands);
    calib_build(dir, 1e5f, &big_truth);
    CHECK_MSG(strstr(big_truth.islands, "mm=calibrated range"), "islands %s", big_truth.islands);
    CHECK(!same_result(&truth, &big_truth));

    /* (a) built twice with a cache: the second calibration is read back, the result the same */
    setenv("SYMC_CACHE_DIR", cache, 1);
    build_expect(dir, 0.01f, 0, &truth, "(a) first");
    CHECK(entries(cache, "calib", names, 8) == 1);
    long first_size = 0;
    uint8_t *first = read_all(names[0], &first_size);
    CHECK(first != NULL);
    build_expect(dir, 0.01f, 1, &truth, "(a) again");

    /* (b) one weight changed: another key, so calibrated again (and its island found), then read back */
    calib_build(dir, 1e5f, &r);
    CHECK_CONTAINS(r.l.text, CALIBRATED);
    CHECK_MSG(same_result(&r, &big_truth), "islands %s, want %s", r.islands, big_truth.islands);
    free(r.engine);
    CHECK(entries(cache, "calib", names, 8) == 2);
    calib_build(dir, 1e5f, &r);
    CHECK_CONTAINS(r.l.text, FROM_CACHE);
    CHECK(same_result(&r, &big_truth));
    free(r.engine);

    /* (c) the first entry damaged (a changed byte, cut short, a foreign payload under its key):
     * each a miss, calibrated again with the same result, and rewritten as it was, bit for bit */
    const char *base = strrchr(first ? names[0] : "", '/');
    char path[1024];
    snprintf(path, sizeof path, "%s/calib/%s", cache, base ? base + 1 : "");
    uint8_t key[CG_HASH_BYTES] = {0};
    for (int i = 0; base && i < CG_HASH_BYTES; i++) {
        unsigned v = 0;
        sscanf(base + 1 + 2 * i, "%2x", &v);
        key[i] = (uint8_t)v;
    }
    size_t header = 8 + 4 + 4 + CG_HASH_BYTES + 8 + CG_HASH_BYTES; /* codegen/cache.c */
    uint32_t nt = first_size > (long)(header + 4) ? (uint32_t)(((size_t)first_size - header - 4) / 8) : 0;
    CHECK(nt >= 5); /* x, w, mm, act, sm */
    for (int damage = 0; damage < 6; damage++) {
        char why[512];
        if (damage == 0) { /* one byte of a max |value| */
            flip_byte(path, 3, 0x10);
        } else if (damage == 1) {
            CHECK(truncate(path, first_size - 8) == 0);
        } else if (damage == 2 || damage == 3) {
            /* whole entries (their checksums right) of plausible values (1e5 each: were they used,
             * every tensor would be an island) but another tensor count: one more value, or the
             * right number of values under a count of one more */
            uint32_t n = damage == 2 ? nt + 1 : nt, count = nt + 1;
            uint8_t *other = malloc(4 + 8 * (size_t)n);
            double v = 1e5;
            CHECK(other != NULL);
            if (other) {
                memcpy(other, &count, 4); /* little endian, as the entry */
                for (uint32_t t = 0; t < n; t++) memcpy(other + 4 + 8 * (size_t)t, &v, 8);
                CHECK(cg_cache_put("calib", key, other, 4 + 8 * (size_t)n, why, sizeof why) == 0);
            }
            free(other);
        } else if (damage == 4) { /* a whole entry of too few bytes */
            uint8_t other[4 + 8] = {1};
            CHECK(cg_cache_put("calib", key, other, sizeof other, why, sizeof why) == 0);
        } else { /* the right count, but a value no calibration writes (negative) */
            long n = 0;
            uint8_t *payload = read_all(path, &n);
            CHECK(payload && n == first_size && (size_t)n > header + 12);
            if (payload && (size_t)n > header + 12) {
                payload[n - 1] |= 0x80; /* the last value's sign bit */
                CHECK(cg_cache_put("calib", key, payload + header, (size_t)n - header, why, sizeof why) == 0);
            }
            free(payload);
        }
        char what[32];
        snprintf(what, sizeof what, "damage %d", damage);
        build_expect(dir, 0.01f, 0, &truth, what);
        long again_size = 0;
        uint8_t *again = read_all(path, &again_size);
        CHECK_MSG(again && first && again_size == first_size && !memcmp(again, first, (size_t)first_size),
                  "damage %d: the entry rewritten as it was", damage);
        free(again);
    }

    /* (d) off: calibrated every time, nothing written (here or in a folder named "off") */
    setenv("SYMC_CACHE_DIR", "off", 1);
    for (int i = 0; i < 2; i++) build_expect(dir, 0.01f, 0, &truth, "(d) off");
    CHECK(entries(cache, "calib", names, 8) == 2);
    CHECK(file_size("off") < 0);

    /* a cache folder that cannot be made: calibrated and built anyway, the reason said */
    block_cache(dir);
    calib_build(dir, 0.01f, &r);
    CHECK_CONTAINS(r.l.text, CALIBRATED);
    CHECK_CONTAINS(r.l.text, "build cache: cannot create");
    CHECK(same_result(&r, &truth));
    free(r.engine);

    free(first);
    free(truth.engine);
    free(big_truth.engine);
}

/* two chains that differ only in their tensors share one kernel; one with another op does not */
static void test_dedupe(void) {
    symc_error err;
    symc_module *m = symc_module_create("twins", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 16)};
    symc_tensor in[3];
    const char *names[3] = {"x", "y", "z"};
    for (int i = 0; i < 3; i++) symc_add_input(m, names[i], SYMC_F32, 2, d, &in[i], &err);
    for (int i = 0; i < 3; i++) {
        char a[16], b[16], c[16];
        snprintf(a, sizeof a, "mul%d", i);
        snprintf(b, sizeof b, "add%d", i);
        snprintf(c, sizeof c, "tanh%d", i);
        symc_tensor p = node(m, "mul", a, (symc_tensor[]){in[i], in[(i + 1) % 3]}, 2);
        symc_tensor q = node(m, i == 2 ? "sub" : "add", b, (symc_tensor[]){p, in[i]}, 2);
        symc_tensor r = node(m, "tanh", c, &q, 1);
        symc_mark_output(m, r, &err);
    }
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    setenv("SYMC_CACHE_DIR", "off", 1);
    uint8_t *bytes = NULL;
    size_t size = 0;
    cg_build_stats s;
    rt_engine *e = NULL;
    CHECK_MSG(build(m, 0, &bytes, &size, &s, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(s.kernels == 2 && s.kernel_steps == 3, "%u kernels for %u steps", s.kernels, s.kernel_steps);
    if (bytes && rt_engine_decode(bytes, size, &e, &err) == SYMC_OK) {
        CHECK(e->n_kernels == 2 && e->n_steps == 3);
        if (getenv("SYMC_TEST_DUMP_CUDA")) printf("%s\n", e->cuda_source);
        const rt_step *st = e->steps;
        if (e->n_steps == 3) {
            CHECK(st[0].kind == RT_STEP_KERNEL && st[1].kind == RT_STEP_KERNEL && st[2].kind == RT_STEP_KERNEL);
            CHECK(st[0].kernel == st[1].kernel && st[2].kernel != st[0].kernel);
            /* the shared kernel: the same parameters, each step its own tensors */
            CHECK(st[0].n_args == st[1].n_args);
            int differ = 0;
            for (uint32_t k = 0; k < st[0].n_args && k < st[1].n_args; k++) {
                CHECK(st[0].args[k].kind == st[1].args[k].kind);
                differ |= st[0].args[k].value != st[1].args[k].value;
            }
            CHECK(differ);
            CHECK_CONTAINS(e->cuda_source, "(sub)");
        }
        /* the prelude (everything before the first kernel) has no name the dedupe renames */
        const char *end = strstr(e->cuda_source, "extern \"C\"");
        CHECK(end != NULL);
        for (const char *p = e->cuda_source; end && p < end; p++) {
            if (!(isalpha((unsigned char)*p) || *p == '_') ||
                (p > e->cuda_source && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
                continue;
            const char *q = p + 1;
            while (isdigit((unsigned char)*q)) q++;
            int renamed = strchr("tvqs", *p) && q > p + 1 && !(isalnum((unsigned char)*q) || *q == '_');
            CHECK_MSG(!renamed, "the prelude names %.*s", (int)(q - p), p);
        }
        rt_engine_free(e);
    }
    free(bytes);
    symc_module_destroy(m);
}

int main(int argc, char **argv) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/build_cache_XXXXXX", argc > 1 ? argv[1] : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_sha256();
    test_xxh64();
    test_dedupe();
    test_modules_and_cache(dir);
    test_calibration_cache(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_report("codegen.build_cache");
}
