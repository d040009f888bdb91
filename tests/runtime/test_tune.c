/* The pure decisions of library tuning (runtime/cuda/tune.h), on the CPU:
 * where to tune (rt_tune_points: the suite's ranges, caps, snapping to
 * multiple_of, dropping duplicates and near midpoints, a random property
 * check), which tuned entry serves a shape (rt_tune_pick: within 2x, nearest,
 * ties, between two entries that agree, zero sizes, other choice sizes
 * ignored), the sizes a step is keyed by (rt_tune_sizes on hand-made GEMM and
 * CONV steps, a broadcast batch folded into m; sizes that overflow int64
 * refused by the GEMM and CONV plans), run-time guards at a point, and the
 * words `symc inspect` prints for a choice. */
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/tune.h"
#include "tests/check.h"

static uint32_t points(const rt_symbol *s, uint32_t n, uint32_t cap, int64_t *v, uint8_t *kinds) {
    memset(v, 0x7f, sizeof(int64_t) * RT_TUNE_MAX_POINTS * (n ? n : 1));
    return rt_tune_points(s, n, cap, v, kinds);
}

static void test_points(void) {
    int64_t v[RT_TUNE_MAX_POINTS * 4];
    uint8_t k[RT_TUNE_MAX_POINTS];
    /* M2 (BERT layer): B 1/8/64, S 16/128/512: every point, along one path */
    rt_symbol bert[2] = {{"B", 1, 8, 64, 1}, {"S", 16, 128, 512, 1}};
    uint32_t n = points(bert, 2, RT_TUNE_MAX_POINTS, v, k);
    CHECK(n == 5);
    static const int64_t want_bert[5][2] = {{8, 128}, {1, 16}, {64, 512}, {3, 45}, {23, 256}};
    static const uint8_t want_kind[5] = {RT_POINT_OPT, RT_POINT_MIN, RT_POINT_MAX, RT_POINT_LOW, RT_POINT_HIGH};
    for (uint32_t p = 0; p < n && p < 5; p++) {
        CHECK_MSG(v[p * 2] == want_bert[p][0] && v[p * 2 + 1] == want_bert[p][1], "point %u: B=%lld S=%lld", p,
                  (long long)v[p * 2], (long long)v[p * 2 + 1]);
        CHECK(k[p] == want_kind[p]);
    }
    CHECK(!strcmp(rt_tune_point_name(RT_POINT_OPT), "opt") && !strcmp(rt_tune_point_name(RT_POINT_HIGH), "opt..max"));
    /* M1 (MLP): B 1/256/4096 */
    rt_symbol mlp = {"B", 1, 256, 4096, 1};
    n = points(&mlp, 1, RT_TUNE_MAX_POINTS, v, k);
    CHECK(n == 5 && v[0] == 256 && v[1] == 1 && v[2] == 4096 && v[3] == 16 && v[4] == 1024);
    /* smaller caps keep the most important points */
    n = points(&mlp, 1, 3, v, k);
    CHECK(n == 3 && v[0] == 256 && v[1] == 1 && v[2] == 4096);
    n = points(&mlp, 1, 1, v, k);
    CHECK(n == 1 && v[0] == 256 && k[0] == RT_POINT_OPT);
    n = points(&mlp, 1, 99, v, k); /* capped at RT_TUNE_MAX_POINTS */
    CHECK(n == 5);
    /* S1 (ViT seed): B 1/4/32: min and opt are 4x apart, so no midpoint there */
    rt_symbol vit = {"B", 1, 4, 32, 1};
    n = points(&vit, 1, RT_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 4 && v[0] == 4 && v[1] == 1 && v[2] == 32 && v[3] == 11 && k[3] == RT_POINT_HIGH, "n=%u", n);
    /* opt at min: the min point is opt again and is dropped */
    rt_symbol low = {"B", 1, 1, 64, 1};
    n = points(&low, 1, RT_TUNE_MAX_POINTS, v, k);
    CHECK(n == 3 && v[0] == 1 && v[1] == 64 && k[1] == RT_POINT_MAX && v[2] == 8 && k[2] == RT_POINT_HIGH);
    /* static models: one point */
    rt_symbol fixed = {"N", 7, 7, 7, 1};
    n = points(&fixed, 1, RT_TUNE_MAX_POINTS, v, k);
    CHECK(n == 1 && v[0] == 7);
    CHECK(points(NULL, 0, RT_TUNE_MAX_POINTS, v, k) == 1 && k[0] == RT_POINT_OPT);
    CHECK(points(&mlp, 1, 0, v, NULL) == 0);
    /* one symbol spans more than 4x, the other does not: it still gets midpoints,
     * the other moves along */
    rt_symbol two[2] = {{"B", 2, 4, 8, 1}, {"S", 1, 100, 10000, 1}};
    n = points(two, 2, RT_TUNE_MAX_POINTS, v, k);
    CHECK(n == 5 && v[6] == 3 && v[7] == 10 && v[8] == 6 && v[9] == 1000);
    /* multiple_of: midpoints and ends snapped onto multiples inside the range */
    rt_symbol s16 = {"S", 16, 128, 1024, 16};
    n = points(&s16, 1, RT_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 5 && v[3] == 48 && v[4] == 368, "n=%u low=%lld high=%lld", n, (long long)v[3], (long long)v[4]);
    rt_symbol s8 = {"S", 8, 64, 100, 8}; /* max not a multiple: 96 is the largest usable */
    n = points(&s8, 1, RT_TUNE_MAX_POINTS, v, k);
    CHECK_MSG(n == 4 && v[0] == 64 && v[1] == 8 && v[2] == 96 && v[3] == 24 && k[3] == RT_POINT_LOW, "n=%u max=%lld",
              n, (long long)v[2]);
    rt_symbol huge = {"N", 1, 1000, INT64_MAX - 5, 7}; /* snapping near INT64_MAX must not overflow */
    n = points(&huge, 1, RT_TUNE_MAX_POINTS, v, k);
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
        n = points(sy, ns, RT_TUNE_MAX_POINTS, v, k);
        CHECK(n >= 1 && n <= RT_TUNE_MAX_POINTS && k[0] == RT_POINT_OPT);
        for (uint32_t s = 0; s < ns; s++) CHECK(v[s] == sy[s].opt);
        for (uint32_t p = 0; p < n; p++) {
            for (uint32_t s = 0; s < ns; s++) {
                int64_t x = v[p * ns + s];
                CHECK_MSG(x >= sy[s].min && x <= sy[s].max && x % sy[s].multiple_of == 0,
                          "trial %d point %u symbol %u: %lld not in [%lld, %lld] multiple of %lld", trial, p, s,
                          (long long)x, (long long)sy[s].min, (long long)sy[s].max, (long long)sy[s].multiple_of);
            }
            for (uint32_t q = 0; q < p; q++)
                CHECK(ns && memcmp(&v[p * ns], &v[q * ns], ns * sizeof v[0]));
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

static uint8_t algo_a[RT_GEMM_ALGO_SIZE], algo_b[RT_GEMM_ALGO_SIZE], algo_c[RT_GEMM_ALGO_SIZE];

static rt_tuned entry(int64_t m, int64_t n, int64_t k, int64_t batch, const uint8_t *algo) {
    rt_tuned t;
    memset(&t, 0, sizeof t);
    t.at[0] = m, t.at[1] = n, t.at[2] = k, t.at[3] = batch;
    t.algo = algo;
    t.algo_size = RT_GEMM_ALGO_SIZE;
    return t;
}

static int pick(const rt_tuned *v, uint32_t n, int64_t m, int64_t nn, int64_t k, int64_t batch) {
    const int64_t sizes[4] = {m, nn, k, batch};
    return rt_tune_pick(v, n, sizes, RT_GEMM_ALGO_SIZE);
}

static void test_pick(void) {
    memset(algo_a, 1, sizeof algo_a);
    memset(algo_b, 2, sizeof algo_b);
    memset(algo_c, 3, sizeof algo_c);
    /* the MLP's first GEMM tuned along B = 1, 16, 256, 4096 */
    rt_tuned v[4] = {entry(1, 4096, 1024, 1, algo_a), entry(16, 4096, 1024, 1, algo_b),
                     entry(256, 4096, 1024, 1, algo_c), entry(4096, 4096, 1024, 1, algo_a)};
    CHECK(pick(v, 4, 256, 4096, 1024, 1) == 2);  /* exact */
    CHECK(pick(v, 4, 300, 4096, 1024, 1) == 2);  /* within 2x */
    CHECK(pick(v, 4, 512, 4096, 1024, 1) == 2);  /* exactly 2x */
    CHECK(pick(v, 4, 2, 4096, 1024, 1) == 0);
    CHECK(pick(v, 4, 2048, 4096, 1024, 1) == 3); /* 2x from 4096, 8x from 256 */
    CHECK(pick(v, 4, 3, 4096, 1024, 1) == -1);   /* 3x from 1 and 5.3x from 16, which disagree */
    CHECK(pick(v, 4, 64, 4096, 1024, 1) == -1);  /* 4x from 16 and 256 (a tie), which disagree */
    CHECK(pick(v, 4, 8192, 4096, 1024, 1) == 3); /* 2x above the largest */
    CHECK(pick(v, 4, 8193, 4096, 1024, 1) == -1);
    CHECK(pick(v, 4, 256, 4096, 4096, 1) == -1);  /* k 4x off */
    CHECK(pick(v, 4, 256, 4096, 1024, 12) == -1); /* a batch the entries never saw */
    CHECK(pick(v, 0, 256, 4096, 1024, 1) == -1);
    CHECK(rt_tune_pick(NULL, 0, (const int64_t[4]){1, 1, 1, 1}, RT_GEMM_ALGO_SIZE) == -1);
    /* between two entries that chose the same algorithm: that algorithm */
    v[1].algo = algo_c;
    CHECK(pick(v, 4, 64, 4096, 1024, 1) == 1); /* the tie goes to the earlier entry */
    CHECK(pick(v, 4, 64, 4096, 2048, 1) == 1); /* within 2x in k, between in m */
    CHECK(pick(v, 4, 64, 4096, 4096, 1) == -1); /* k outside both */
    v[0].algo = algo_c;
    CHECK(pick(v, 4, 4, 4096, 1024, 1) == 0);
    CHECK(pick(v, 4, 5, 4096, 1024, 1) == 1); /* nearer 16 (3.2x) than 1 (5x) */
    /* the nearest entry wins in several dims at once */
    rt_tuned w[2] = {entry(100, 100, 64, 1, algo_a), entry(400, 50, 64, 1, algo_b)};
    CHECK(pick(w, 2, 200, 100, 64, 1) == 0);
    CHECK(pick(w, 2, 300, 60, 64, 1) == 1);
    /* zero sizes: only an entry of zero matches a zero */
    rt_tuned z[2] = {entry(8, 8, 0, 1, algo_a), entry(8, 8, 1, 1, algo_b)};
    CHECK(pick(z, 2, 8, 8, 0, 1) == 0);
    CHECK(pick(z, 2, 8, 8, 2, 1) == 1);
    CHECK(pick(z + 1, 1, 8, 8, 0, 1) == -1);
    /* choices of another size (another library's) are not candidates */
    rt_tuned c[2] = {entry(8, 8, 8, 1, algo_a), entry(64, 8, 8, 1, algo_b)};
    c[0].algo_size = RT_CONV_ALGO_SIZE;
    CHECK(pick(c, 2, 8, 8, 8, 1) == -1);
    CHECK(pick(c, 2, 40, 8, 8, 1) == 1);
    c[1].algo = NULL;
    CHECK(pick(c, 2, 40, 8, 8, 1) == -1);
    /* convolution entries: n, h, w */
    int32_t id1 = 1, id6 = 6;
    rt_tuned conv[2] = {{{1, 224, 224, 0}, 0.5f, RT_CONV_ALGO_SIZE, (const uint8_t *)&id1},
                        {{32, 512, 512, 0}, 9.0f, RT_CONV_ALGO_SIZE, (const uint8_t *)&id6}};
    CHECK(rt_tune_pick(conv, 2, (const int64_t[4]){2, 300, 300, 0}, RT_CONV_ALGO_SIZE) == 0);
    CHECK(rt_tune_pick(conv, 2, (const int64_t[4]){16, 384, 384, 0}, RT_CONV_ALGO_SIZE) == 1);
    CHECK(rt_tune_pick(conv, 2, (const int64_t[4]){8, 224, 224, 0}, RT_CONV_ALGO_SIZE) == -1);
}

/* A hand-made engine: d = a @ b with a [B, M, K], b [K, N] (slots B, M, K, N),
 * and a convolution y = conv(x, w) with x [B, 3, H, W]. */
static void test_sizes(void) {
    rt_tensor t[7] = {
        {"a", SYMC_F32, 3, {0, 1, 2}, RT_NONE},    {"b", SYMC_F32, 2, {2, 3}, RT_NONE},
        {"d", SYMC_F32, 3, {0, 1, 3}, RT_NONE},    {"x", SYMC_F32, 4, {0, 4, 5, 6}, RT_NONE},
        {"w", SYMC_F32, 4, {7, 4, 8, 8}, RT_NONE}, {"y", SYMC_F32, 4, {0, 7, 5, 6}, RT_NONE},
        {"v", SYMC_F32, 1, {2}, RT_NONE},
    };
    uint32_t in_mm[2] = {0, 1}, out_mm[1] = {2}, in_cv[2] = {3, 4}, out_cv[1] = {5};
    rt_node nodes[2] = {{IR_OP_MATMUL, "mm", "", 2, 1, 0, in_mm, out_mm, NULL},
                        {IR_OP_CONV2D, "cv", "", 2, 1, 0, in_cv, out_cv, NULL}};
    rt_step steps[3];
    memset(steps, 0, sizeof steps);
    steps[0].kind = RT_STEP_GEMM;
    steps[0].node = 0;
    steps[0].n_tensors = 5;
    uint32_t gt[5] = {0, 1, RT_NONE, RT_NONE, 2}, ct[4] = {3, 4, RT_NONE, 5};
    memcpy(steps[0].tensors, gt, sizeof gt);
    steps[1].kind = RT_STEP_CONV;
    steps[1].node = 1;
    steps[1].n_tensors = 4;
    memcpy(steps[1].tensors, ct, sizeof ct);
    steps[2].kind = RT_STEP_KERNEL;
    rt_guard guards[2] = {{SYM_REL_DIVISIBLE, 1, 8, "node 'r': M divisible by 3"},
                          {SYM_REL_BROADCAST, 0, 2, "node 'z': B broadcasts against K"}};
    rt_engine e;
    memset(&e, 0, sizeof e);
    e.tensors = t;
    e.n_tensors = 7;
    e.nodes = nodes;
    e.n_nodes = 2;
    e.steps = steps;
    e.n_steps = 3;
    e.guards = guards;
    e.n_guards = 2;
    /* slots: B M K N C H W O 3 */
    int64_t slots[9] = {4, 6, 32, 16, 3, 224, 200, 8, 3};
    int64_t sz[4];
    symc_error err = {0};
    CHECK_MSG(rt_tune_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(sz[0] == 24 && sz[1] == 16 && sz[2] == 32 && sz[3] == 1, "m=%lld n=%lld k=%lld batch=%lld",
              (long long)sz[0], (long long)sz[1], (long long)sz[2], (long long)sz[3]); /* [B*M, K] x [K, N] */
    CHECK_MSG(rt_tune_sizes(&e, 1, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[0] == 4 && sz[1] == 224 && sz[2] == 200 && sz[3] == 0);
    CHECK(rt_tune_sizes(&e, 2, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "not a library call");
    CHECK(rt_tune_sizes(&e, 3, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(rt_gemm_sizes(&e, 1, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
    /* a transposed b: [N, K]^T */
    t[1].dims[0] = 3, t[1].dims[1] = 2;
    steps[0].trans_b = 1;
    CHECK_MSG(rt_tune_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[0] == 24 && sz[1] == 16 && sz[2] == 32 && sz[3] == 1);
    /* inner dims that disagree: an error naming the node, never a crash */
    t[1].dims[1] = 3;
    CHECK(rt_tune_sizes(&e, 0, slots, sz, &err) != SYMC_OK);
    CHECK_CONTAINS(err.msg, "node 'mm'");

    /* guards at a point */
    CHECK(rt_tune_guard_broken(&e, slots) == 1); /* B = 4 vs K = 32 */
    slots[2] = 4;
    CHECK(rt_tune_guard_broken(&e, slots) == RT_NONE);
    slots[1] = 7;
    CHECK(rt_tune_guard_broken(&e, slots) == 0);
}

/* Sizes that overflow int64: refused by the GEMM and CONV plans (which
 * compute strides and offsets from them) with the node and the tensor, never
 * wrapped; a batch beyond cuBLASLt's int32 count refused, not truncated. */
static void test_size_overflow(void) {
    /* d = a @ b, a [B, M, K], b [B2, K, N]; y = conv(x, w, group 4), w [O, CG, 1, 1] */
    rt_tensor t[6] = {
        {"a", SYMC_F32, 3, {0, 1, 2}, RT_NONE},    {"b", SYMC_F32, 3, {4, 2, 3}, RT_NONE},
        {"d", SYMC_F32, 3, {0, 1, 3}, RT_NONE},    {"x", SYMC_F32, 4, {0, 5, 7, 7}, RT_NONE},
        {"w", SYMC_F32, 4, {5, 6, 8, 8}, RT_NONE}, {"y", SYMC_F32, 4, {0, 5, 7, 7}, RT_NONE},
    };
    uint32_t in_mm[2] = {0, 1}, out_mm[1] = {2}, in_cv[2] = {3, 4}, out_cv[1] = {5};
    symc_attr group = {.name = "group", .kind = SYMC_ATTR_INT, .i = 4};
    rt_node nodes[2] = {{IR_OP_MATMUL, "mm", "", 2, 1, 0, in_mm, out_mm, NULL},
                        {IR_OP_CONV2D, "cv", "", 2, 1, 1, in_cv, out_cv, &group}};
    rt_step steps[2];
    memset(steps, 0, sizeof steps);
    steps[0].kind = RT_STEP_GEMM;
    steps[0].n_tensors = 5;
    const uint32_t gt[5] = {0, 1, RT_NONE, RT_NONE, 2}, ct[4] = {3, 4, RT_NONE, 5};
    memcpy(steps[0].tensors, gt, sizeof gt);
    steps[1].kind = RT_STEP_CONV;
    steps[1].node = 1;
    steps[1].n_tensors = 4;
    memcpy(steps[1].tensors, ct, sizeof ct);
    rt_engine e;
    memset(&e, 0, sizeof e);
    e.tensors = t;
    e.n_tensors = 6;
    e.nodes = nodes;
    e.n_nodes = 2;
    e.steps = steps;
    e.n_steps = 2;
    int64_t sz[4];
    symc_error err = {0};
    /* slots: B M K N B2 C CG H 1 */
    const int64_t G = (int64_t)1 << 31;
    int64_t slots[9] = {(int64_t)1 << 20, (int64_t)1 << 20, 1, (int64_t)1 << 30, 1, 8, 2, 5, 1};
    /* batch * M * N = 2^70 elements (a and b fit): wraps to 0, the output's
     * wrapped size too, without the checks */
    CHECK(rt_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_OVERFLOW);
    CHECK_CONTAINS(err.msg, "node 'mm' (GEMM step)");
    CHECK_CONTAINS(err.msg, "tensor 'd' of shape [1048576, 1048576, 1073741824] (f32) is too large");
    slots[2] = G; /* and an operand */
    CHECK(rt_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_OVERFLOW);
    CHECK_CONTAINS(err.msg, "tensor 'a' of shape [1048576, 1048576, 2147483648] (f32) is too large");
    slots[2] = 1;
    /* fits: B = 2^20 matrices of 2^10 x 2^10 */
    slots[0] = (int64_t)1 << 20, slots[1] = slots[3] = 1024;
    CHECK_MSG(rt_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    /* a batch of 2^31 + 1 matrices, both operands batched: cuBLASLt's count is an int32 */
    slots[0] = slots[4] = G + 1, slots[1] = slots[3] = 1;
    CHECK(rt_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "a batch of 2147483649 matrices; cuBLASLt takes at most 2147483647");
    slots[0] = slots[4] = G - 1;
    CHECK_MSG(rt_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[3] == G - 1);

    /* CONV: x [B, C, H, H], w [C, CG, 1, 1], group 4 */
    slots[0] = 2;
    CHECK_MSG(rt_conv_sizes(&e, 1, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[0] == 2 && sz[1] == 5 && sz[2] == 5 && sz[3] == 0);
    /* CG = 2^62 with C = 0 (w is empty, so it fits): CG * group wraps to 0
     * == C without the check, and the plan went on */
    slots[5] = 0, slots[6] = (int64_t)1 << 62;
    CHECK(rt_conv_sizes(&e, 1, slots, sz, &err) == SYMC_ERR_INTERNAL);
    CHECK_CONTAINS(err.msg, "node 'cv': x, w and y shapes disagree (group 4)");
    slots[5] = 8; /* w [8, 2^62, 1, 1] */
    CHECK(rt_conv_sizes(&e, 1, slots, sz, &err) == SYMC_ERR_OVERFLOW);
    CHECK_CONTAINS(err.msg, "node 'cv' (CONV step)");
    CHECK_CONTAINS(err.msg, "tensor 'w' of shape [8, 4611686018427387904, 1, 1] (f32) is too large");
    CHECK(rt_conv_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
}

static void test_describe(void) {
    char store[192];
    char *buf = store;
    int32_t id = 1;
    rt_conv_algo_describe((const uint8_t *)&id, 4, buf, sizeof store);
    CHECK_CONTAINS(buf, "cuDNN algo 1 (IMPLICIT_PRECOMP_GEMM)");
    id = 77;
    rt_conv_algo_describe((const uint8_t *)&id, 4, buf, sizeof store);
    CHECK_CONTAINS(buf, "unknown");
    rt_conv_algo_describe((const uint8_t *)&id, 3, buf, sizeof store);
    CHECK_CONTAINS(buf, "3 bytes");
    uint8_t zero[RT_GEMM_ALGO_SIZE] = {0};
    rt_gemm_algo_describe(zero, sizeof zero, buf, sizeof store);
    printf("a zeroed cuBLASLt algo reads: %s\n", buf);
    CHECK(!strncmp(buf, "cuBLASLt algo ", 14));
    rt_gemm_algo_describe(zero, 12, buf, sizeof store);
    CHECK_CONTAINS(buf, "12 bytes");
    rt_gemm_algo_describe(zero, sizeof zero, buf, 8); /* cut, still terminated */
    CHECK(strlen(buf) == 7);
}

int main(void) {
    test_points();
    test_pick();
    test_sizes();
    test_size_overflow();
    test_describe();
    return check_report("runtime_test_tune");
}
