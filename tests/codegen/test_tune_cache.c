/* The timing cache on disk (codegen/tune_cache.h), on the CPU: a result put
 * is got back bit for bit; another signature, device or library version is
 * a miss; a truncated, bit-flipped or extended file is a miss and the next
 * put repairs it; SYMC_CACHE_DIR=off gives no cache, an unwritable folder
 * a cache that misses, and every call on either does nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/tune_cache.h"
#include "runtime/engine.h"
#include "tests/check.h"

/* the one file in dir/tuning, its path into buf */
static int only_file(const char *dir, char *buf, size_t cap) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls %s/tuning/ 2>/dev/null | sed 's|^|%s/tuning/|'", dir, dir);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    int n = 0;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(buf, cap, "%s", line);
        n++;
    }
    pclose(p);
    return n;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/tmp/symc_test_tune_cache";
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
    setenv("SYMC_CACHE_DIR", dir, 1);
    char where[400];
    cg_tune_cache *c = cg_tune_cache_open("GPU X sm_90", "13.1.0", "9.14.0", where, sizeof where);
    CHECK_MSG(c != NULL, "%s", where);
    CHECK(strstr(where, "/tuning") != NULL);
    uint8_t sig[100], sig2[100], algo[RT_ALGO_MAX], got[RT_ALGO_MAX];
    for (int i = 0; i < 100; i++) sig[i] = (uint8_t)(i * 7), sig2[i] = sig[i];
    sig2[99] ^= 1;
    for (int i = 0; i < RT_GEMM_ALGO_SIZE; i++) algo[i] = (uint8_t)(255 - i);
    uint32_t size = 0;
    float ms = 0;
    CHECK(!cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms)); /* empty */
    cg_tune_cache_put(c, sig, sizeof sig, algo, RT_GEMM_ALGO_SIZE, 0.125f);
    CHECK(cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms));
    CHECK(size == RT_GEMM_ALGO_SIZE && ms == 0.125f && !memcmp(got, algo, size));
    CHECK(!cg_tune_cache_get(c, sig2, sizeof sig2, got, &size, &ms)); /* another problem */
    /* "no candidate ran" is a result too */
    uint8_t sig3[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cg_tune_cache_put(c, sig3, sizeof sig3, algo, 0, 0.0f);
    size = 99;
    CHECK(cg_tune_cache_get(c, sig3, sizeof sig3, got, &size, &ms) && size == 0);
    CHECK(!cg_tune_cache_get(c, sig, 99, got, &size, &ms));
    /* another device or library version: another key */
    cg_tune_cache *d = cg_tune_cache_open("GPU Y sm_90", "13.1.0", "9.14.0", NULL, 0);
    cg_tune_cache *v = cg_tune_cache_open("GPU X sm_90", "13.1.0", "9.15.0", NULL, 0);
    CHECK(d && v);
    CHECK(!cg_tune_cache_get(d, sig, sizeof sig, got, &size, &ms));
    CHECK(!cg_tune_cache_get(v, sig, sizeof sig, got, &size, &ms));
    cg_tune_cache_close(d);
    cg_tune_cache_close(v);
    /* a reopened cache (a later build) has it */
    cg_tune_cache_close(c);
    c = cg_tune_cache_open("GPU X sm_90", "13.1.0", "9.14.0", NULL, 0);
    CHECK(c && cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms) && ms == 0.125f);
    /* damaged files are misses, and a put repairs them */
    char path[512];
    CHECK(only_file(dir, path, sizeof path) == 2);
    /* the damage tests below work on sig's file alone */
    snprintf(cmd, sizeof cmd, "rm -rf %s/tuning", dir);
    CHECK(system(cmd) == 0);
    cg_tune_cache_put(c, sig, sizeof sig, algo, RT_GEMM_ALGO_SIZE, 0.125f);
    CHECK(only_file(dir, path, sizeof path) == 1);
    struct stat stt;
    CHECK(stat(path, &stt) == 0);
    long full = (long)stt.st_size;
    for (long cut = 0; cut < full; cut += 7) {
        CHECK(truncate(path, cut) == 0);
        CHECK_MSG(!cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms), "truncated to %ld bytes", cut);
        cg_tune_cache_put(c, sig, sizeof sig, algo, RT_GEMM_ALGO_SIZE, 0.125f);
        CHECK(cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms));
    }
    for (long at = 0; at < full; at++) {
        FILE *f = fopen(path, "r+b");
        CHECK(f != NULL);
        if (!f) break;
        fseek(f, at, SEEK_SET);
        int ch = fgetc(f);
        fseek(f, at, SEEK_SET);
        fputc(ch ^ 0x20, f);
        fclose(f);
        CHECK_MSG(!cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms), "byte %ld flipped", at);
        cg_tune_cache_put(c, sig, sizeof sig, algo, RT_GEMM_ALGO_SIZE, 0.125f);
    }
    FILE *f = fopen(path, "ab"); /* trailing bytes */
    CHECK(f != NULL);
    if (f) {
        fputs("x", f);
        fclose(f);
    }
    CHECK(!cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms));
    cg_tune_cache_put(c, sig, sizeof sig, algo, RT_GEMM_ALGO_SIZE, 0.125f);
    CHECK(cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms));
    CHECK(only_file(dir, path, sizeof path) == 1); /* no temporary left behind */
    /* a job's point count: its own keys (the same bytes as a problem's signature are another entry),
     * kept across a reopen, per device, replaced by a later put */
    uint32_t pts = 0;
    CHECK(!cg_tune_cache_get_points(c, sig, sizeof sig, &pts));
    cg_tune_cache_put_points(c, sig, sizeof sig, 10);
    CHECK(cg_tune_cache_get_points(c, sig, sizeof sig, &pts) && pts == 10);
    CHECK(cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms) && size == RT_GEMM_ALGO_SIZE); /* untouched */
    CHECK(!cg_tune_cache_get_points(c, sig2, sizeof sig2, &pts));
    CHECK(!cg_tune_cache_get_points(c, sig, 99, &pts));
    cg_tune_cache_close(c);
    c = cg_tune_cache_open("GPU X sm_90", "13.1.0", "9.14.0", NULL, 0);
    pts = 0;
    CHECK(c && cg_tune_cache_get_points(c, sig, sizeof sig, &pts) && pts == 10);
    d = cg_tune_cache_open("GPU Y sm_90", "13.1.0", "9.14.0", NULL, 0);
    CHECK(d && !cg_tune_cache_get_points(d, sig, sizeof sig, &pts));
    cg_tune_cache_close(d);
    cg_tune_cache_put_points(c, sig, sizeof sig, 16);
    CHECK(cg_tune_cache_get_points(c, sig, sizeof sig, &pts) && pts == 16);
    CHECK(only_file(dir, path, sizeof path) == 2);
    cg_tune_cache_close(c);
    /* off, and unusable: no cache; calls on NULL do nothing */
    setenv("SYMC_CACHE_DIR", "off", 1);
    CHECK(cg_tune_cache_open("GPU X sm_90", "a", "b", where, sizeof where) == NULL);
    CHECK(strstr(where, "off") != NULL);
    setenv("SYMC_CACHE_DIR", "/proc/symc_no_such_dir", 1);
    c = cg_tune_cache_open("GPU X sm_90", "a", "b", where, sizeof where);
    cg_tune_cache_put(c, sig, sizeof sig, algo, RT_GEMM_ALGO_SIZE, 1.0f); /* dropped, no error */
    CHECK(!cg_tune_cache_get(c, sig, sizeof sig, got, &size, &ms));
    cg_tune_cache_close(c);
    CHECK(!cg_tune_cache_get(NULL, sig, sizeof sig, got, &size, &ms));
    cg_tune_cache_put(NULL, sig, sizeof sig, algo, RT_GEMM_ALGO_SIZE, 1.0f);
    CHECK(!cg_tune_cache_get_points(NULL, sig, sizeof sig, &pts));
    cg_tune_cache_put_points(NULL, sig, sizeof sig, 3);
    return check_report("codegen.tune_cache");
}
