/* Where a build tunes (codegen/tuner.h), on the CPU: the points tuned at
 * (cg_tune_points: the suite's ranges, caps, snapping to multiple_of,
 * dropping duplicates and near midpoints, a random property check) and
 * whether a point breaks a run-time guard (cg_tune_guard_broken). The
 * timing itself needs a GPU: the GPU tests build every model with tuning on
 * (tests/gpu). */
#include <stdlib.h>
#include <string.h>

#include "codegen/tuner.h"
#include "tests/check.h"

static uint32_t points(const rt_symbol *s, uint32_t n, uint32_t cap, int64_t *v, uint8_t *kinds) {
    memset(v, 0x7f, sizeof(int64_t) * CG_TUNE_MAX_POINTS * (n ? n : 1));
    return cg_tune_points(s, n, cap, v, kinds);
}

static void test_points(void) {
    int64_t v[CG_TUNE_MAX_POINTS * 4];
    memset(v, 0, sizeof v);
    uint8_t k[CG_TUNE_MAX_POINTS];
    /* M2 (BERT layer): B 1/8/64, S 16/128/512: opt, the ends, the other
     * corners, each axis through opt, the diagonal's midpoints */
    rt_symbol bert[2] = {{"B", 1, 8, 64, 1}, {"S", 16, 128, 512, 1}};
    uint32_t n = points(bert, 2, CG_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 11, "n=%u", n);
    static const int64_t want_bert[11][2] = {{8, 128},  {64, 512}, {1, 16},  {64, 16}, {1, 512}, {1, 128},
                                             {64, 128}, {8, 16},   {8, 512}, {3, 45},  {23, 256}};
    static const uint8_t want_kind[11] = {CG_POINT_OPT,    CG_POINT_MAX,  CG_POINT_MIN,  CG_POINT_CORNER,
                                          CG_POINT_CORNER, CG_POINT_AXIS, CG_POINT_AXIS, CG_POINT_AXIS,
                                          CG_POINT_AXIS,   CG_POINT_LOW,  CG_POINT_HIGH};
    for (uint32_t p = 0; p < n && p < 11; p++) {
        CHECK_MSG(v[p * 2] == want_bert[p][0] && v[p * 2 + 1] == want_bert[p][1], "point %u: B=%lld S=%lld", p,
                  (long long)v[p * 2], (long long)v[p * 2 + 1]);
        CHECK(k[p] == want_kind[p]);
    }
    CHECK(!strcmp(cg_tune_point_name(CG_POINT_OPT), "opt") && !strcmp(cg_tune_point_name(CG_POINT_HIGH), "opt..max"));
    CHECK(!strcmp(cg_tune_point_name(CG_POINT_CORNER), "corner") && !strcmp(cg_tune_point_name(CG_POINT_AXIS), "axis"));
    /* an image model, B, H and W dynamic: batch 1 at a wide and at a tall
     * image are tuned, not only the square ends; the cap keeps the first 16 */
    rt_symbol img[3] = {{"B", 1, 8, 32, 1}, {"H", 128, 224, 320, 1}, {"W", 128, 224, 320, 1}};
    n = points(img, 3, CG_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == CG_TUNE_MAX_POINTS, "n=%u", n);
    int wide = 0, tall = 0, big_wide = 0;
    for (uint32_t p = 0; p < n; p++) {
        wide |= v[p * 3] == 1 && v[p * 3 + 1] == 128 && v[p * 3 + 2] == 320;
        tall |= v[p * 3] == 1 && v[p * 3 + 1] == 320 && v[p * 3 + 2] == 128;
        big_wide |= v[p * 3] == 32 && v[p * 3 + 1] == 128 && v[p * 3 + 2] == 320;
    }
    CHECK(wide && tall && big_wide);
    CHECK(v[3] == 32 && v[4] == 320 && v[5] == 320 && v[6] == 1 && v[7] == 128 && v[8] == 128);
    CHECK(k[15] == CG_POINT_LOW && v[45] == 3 && v[46] == 169 && v[47] == 169);
    /* M1 (MLP): B 1/256/4096 */
    rt_symbol mlp = {"B", 1, 256, 4096, 1};
    n = points(&mlp, 1, CG_TUNE_MAX_POINTS, v, k);
    CHECK(n == 5 && v[0] == 256 && v[1] == 4096 && v[2] == 1 && v[3] == 16 && v[4] == 1024);
    /* smaller caps keep the most important points */
    n = points(&mlp, 1, 3, v, k);
    CHECK(n == 3 && v[0] == 256 && v[1] == 4096 && v[2] == 1);
    n = points(&mlp, 1, 1, v, k);
    CHECK(n == 1 && v[0] == 256 && k[0] == CG_POINT_OPT);
    n = points(&mlp, 1, 99, v, k); /* one symbol: no corners or axes beyond the ends */
    CHECK(n == 5);
    /* S1 (ViT seed): B 1/4/32: min and opt are 4x apart, so no midpoint there */
    rt_symbol vit = {"B", 1, 4, 32, 1};
    n = points(&vit, 1, CG_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 4 && v[0] == 4 && v[1] == 32 && v[2] == 1 && v[3] == 11 && k[3] == CG_POINT_HIGH, "n=%u", n);
    /* opt at min: the min point is opt again and is dropped */
    rt_symbol low = {"B", 1, 1, 64, 1};
    n = points(&low, 1, CG_TUNE_MAX_POINTS, v, k);
    CHECK(n == 3 && v[0] == 1 && v[1] == 64 && k[1] == CG_POINT_MAX && v[2] == 8 && k[2] == CG_POINT_HIGH);
    /* static models: one point */
    rt_symbol fixed = {"N", 7, 7, 7, 1};
    n = points(&fixed, 1, CG_TUNE_MAX_POINTS, v, k);
    CHECK(n == 1 && v[0] == 7);
    CHECK(points(NULL, 0, CG_TUNE_MAX_POINTS, v, k) == 1 && k[0] == CG_POINT_OPT);
    CHECK(points(&mlp, 1, 0, v, NULL) == 0);
    /* one symbol spans more than 4x, the other does not: corners and axes,
     * then midpoints where the other moves along */
    rt_symbol two[2] = {{"B", 2, 4, 8, 1}, {"S", 1, 100, 10000, 1}};
    n = points(two, 2, CG_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 11 && v[18] == 3 && v[19] == 10 && v[20] == 6 && v[21] == 1000, "n=%u", n);
    /* a fixed symbol next to a varying one: it stays put, no corners */
    rt_symbol one_fixed[2] = {{"B", 1, 8, 64, 1}, {"C", 3, 3, 3, 1}};
    n = points(one_fixed, 2, CG_TUNE_MAX_POINTS, v, k);
    CHECK(n == 5 && v[1] == 3 && v[3] == 3 && v[9] == 3);
    /* multiple_of: midpoints and ends snapped onto multiples inside the range */
    rt_symbol s16 = {"S", 16, 128, 1024, 16};
    n = points(&s16, 1, CG_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 5 && v[3] == 48 && v[4] == 368, "n=%u low=%lld high=%lld", n, (long long)v[3], (long long)v[4]);
    rt_symbol s8 = {"S", 8, 64, 100, 8}; /* max not a multiple: 96 is the largest usable */
    n = points(&s8, 1, CG_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 4 && v[0] == 64 && v[1] == 96 && v[2] == 8 && v[3] == 24 && k[3] == CG_POINT_LOW, "n=%u max=%lld", n,
              (long long)v[1]);
    rt_symbol huge = {"N", 1, 1000, INT64_MAX - 5, 7}; /* snapping near INT64_MAX must not overflow */
    n = points(&huge, 1, CG_TUNE_MAX_POINTS, v, k);
    CHECK(n == 5);
    for (uint32_t p = 0; p < n; p++) CHECK(v[p] >= 1 && v[p] <= INT64_MAX - 5 && v[p] % 7 == 0);

    /* property: random ranges; every point in range, on a multiple, distinct;
     * opt first; the ends and a midpoint where the range is wide */
    uint64_t seed = 12345;
    for (int trial = 0; trial < 20000; trial++) {
        rt_symbol sy[3];
        uint32_t ns = (uint32_t)(trial % 4);
        for (uint32_t s = 0; s < ns; s++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            int64_t mult = (seed >> 60) % 3 == 0 ? (int64_t)((seed >> 40) % 16) + 1 : 1;
            int64_t a = (int64_t)((seed >> 20) % 3000) * mult + mult, b = a + (int64_t)((seed >> 5) % 100000) * mult;
            int64_t o = a + ((b - a) / mult ? (int64_t)((seed >> 33) % (uint64_t)((b - a) / mult + 1)) * mult : 0);
            sy[s] = (rt_symbol){"x", a, o, b, mult};
        }
        n = points(sy, ns, CG_TUNE_MAX_POINTS, v, k);
        CHECK(n >= 1 && n <= CG_TUNE_MAX_POINTS && k[0] == CG_POINT_OPT);
        for (uint32_t s = 0; s < ns; s++) CHECK(v[s] == sy[s].opt);
        for (uint32_t p = 0; p < n; p++) {
            for (uint32_t s = 0; s < ns; s++) {
                int64_t x = v[p * ns + s];
                CHECK_MSG(x >= sy[s].min && x <= sy[s].max && x % sy[s].multiple_of == 0,
                          "trial %d point %u symbol %u: %lld not in [%lld, %lld] multiple of %lld", trial, p, s,
                          (long long)x, (long long)sy[s].min, (long long)sy[s].max, (long long)sy[s].multiple_of);
            }
            for (uint32_t q = 0; q < p; q++) CHECK(ns && memcmp(&v[p * ns], &v[q * ns], ns * sizeof v[0]));
        }
        int wide = 0, varies = 0;
        for (uint32_t s = 0; s < ns; s++) {
            wide |= sy[s].max > 4 * sy[s].opt || sy[s].opt > 4 * sy[s].min;
            varies |= sy[s].min != sy[s].max;
        }
        if (!varies) CHECK(n == 1);
        if (wide) CHECK(n >= 3);
    }
}

/* guards at a point: M divisible by 3, B broadcasting against K */
static void test_guards(void) {
    rt_guard guards[2] = {{SYM_REL_DIVISIBLE, 1, 8, "node 'r': M divisible by 3", 0},
                          {SYM_REL_BROADCAST, 0, 2, "node 'z': B broadcasts against K", 0}};
    rt_engine e;
    memset(&e, 0, sizeof e);
    e.guards = guards;
    e.n_guards = 2;
    /* slots: B M K N C H W O 3 */
    int64_t slots[9] = {4, 6, 32, 16, 3, 224, 200, 8, 3};
    CHECK(cg_tune_guard_broken(&e, slots) == 1); /* B = 4 vs K = 32 */
    slots[2] = 4;
    CHECK(cg_tune_guard_broken(&e, slots) == RT_NONE);
    slots[1] = 7;
    CHECK(cg_tune_guard_broken(&e, slots) == 0);
}

int main(void) {
    test_points();
    test_guards();
    return check_report("codegen_test_tune");
}
