/* The run-time half of library tuning (runtime/cuda/tuned_pick.h), on the CPU: which
 * tuned entry serves a shape (rt_cuda_tune_pick and rt_cuda_tune_order: the nearest
 * in log size, midpoints, ties, a brute-force check of the order, zero
 * sizes, other choice sizes ignored),
 * the sizes a step is keyed by (rt_cuda_tune_sizes on hand-made GEMM and CONV
 * steps, a broadcast batch folded into m; sizes that overflow int64 refused
 * by the GEMM and CONV plans), and the words `symc inspect` prints for a
 * choice. Where to tune is codegen's (tests/codegen/test_tuner.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/tuned_pick.h"
#include "tests/check.h"

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
    return rt_cuda_tune_pick(v, n, sizes, RT_GEMM_ALGO_SIZE);
}

static void test_pick(void) {
    memset(algo_a, 1, sizeof algo_a);
    memset(algo_b, 2, sizeof algo_b);
    memset(algo_c, 3, sizeof algo_c);
    /* the MLP's first GEMM tuned along B = 1, 16, 256, 4096: the buckets are
     * the cells of the tuned points, boundaries at geometric midpoints */
    rt_tuned v[4] = {entry(1, 4096, 1024, 1, algo_a), entry(16, 4096, 1024, 1, algo_b),
                     entry(256, 4096, 1024, 1, algo_c), entry(4096, 4096, 1024, 1, algo_a)};
    CHECK(pick(v, 4, 256, 4096, 1024, 1) == 2); /* exact */
    CHECK(pick(v, 4, 300, 4096, 1024, 1) == 2);
    CHECK(pick(v, 4, 1024, 4096, 1024, 1) == 2); /* the midpoint of 256 and 4096: a tie, the earlier entry */
    CHECK(pick(v, 4, 1025, 4096, 1024, 1) == 3);
    CHECK(pick(v, 4, 2, 4096, 1024, 1) == 0);
    CHECK(pick(v, 4, 3, 4096, 1024, 1) == 0);  /* 3x from 1, 5.3x from 16 */
    CHECK(pick(v, 4, 5, 4096, 1024, 1) == 1);  /* 5x from 1, 3.2x from 16 */
    CHECK(pick(v, 4, 64, 4096, 1024, 1) == 1); /* 4x from 16 and from 256: the earlier */
    CHECK(pick(v, 4, 65, 4096, 1024, 1) == 2);
    CHECK(pick(v, 4, 8193, 4096, 1024, 1) == 3); /* past the largest: still the nearest */
    CHECK(pick(v, 4, 256, 4096, 4096, 1) == 2);  /* k off in every entry alike */
    CHECK(pick(v, 4, 256, 4096, 1024, 12) == 2); /* a batch the entries never saw */
    CHECK(pick(v, 0, 256, 4096, 1024, 1) == -1);
    CHECK(rt_cuda_tune_pick(NULL, 0, (const int64_t[4]){1, 1, 1, 1}, RT_GEMM_ALGO_SIZE) == -1);
    /* the order the runtime tries them in when the library refuses one */
    int order[RT_TUNE_ORDER_MAX] = {-1, -1, -1, -1};
    const int64_t at40[4] = {40, 4096, 1024, 1};
    CHECK(rt_cuda_tune_order(v, 4, at40, RT_GEMM_ALGO_SIZE, order, RT_TUNE_ORDER_MAX) == 4);
    CHECK(order[0] == 1 && order[1] == 2 && order[2] == 0 && order[3] == 3);
    CHECK(rt_cuda_tune_order(v, 4, at40, RT_GEMM_ALGO_SIZE, order, 2) == 2 && order[0] == 1 && order[1] == 2);
    const int64_t at5000[4] = {5000, 4096, 1024, 1};
    CHECK(rt_cuda_tune_order(v, 4, at5000, RT_GEMM_ALGO_SIZE, order, 3) == 3);
    CHECK(order[0] == 3 && order[1] == 2 && order[2] == 1);
    /* property: the order is by distance, the pick its first, against brute force */
    uint64_t seed = 99;
    for (int trial = 0; trial < 2000; trial++) {
        rt_tuned r[6];
        for (int i = 0; i < 6; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            r[i] = entry((int64_t)(seed >> 54) + 1, (int64_t)(seed >> 50 & 63) + 1, 64, 1,
                         i % 3 == 0       ? algo_a
                             : i % 3 == 1 ? algo_b
                                          : algo_c);
        }
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        const int64_t q[4] = {(int64_t)(seed >> 54) + 1, (int64_t)(seed >> 50 & 63) + 1, 64, 1};
        int o[RT_TUNE_ORDER_MAX];
        uint32_t got = rt_cuda_tune_order(r, 6, q, RT_GEMM_ALGO_SIZE, o, RT_TUNE_ORDER_MAX);
        CHECK(got == RT_TUNE_ORDER_MAX && pick(r, 6, q[0], q[1], q[2], q[3]) == o[0]);
        double prev = -1;
        for (uint32_t i = 0; i < got; i++) {
            double d = 0;
            for (int j = 0; j < 2; j++) d += fabs(log((double)q[j]) - log((double)r[o[i]].at[j]));
            CHECK(d >= prev - 1e-9);
            prev = d;
        }
        for (int i = 0; i < 6; i++) { /* nothing left out is nearer than the last kept */
            int kept = 0;
            for (uint32_t j = 0; j < got; j++) kept |= o[j] == i;
            double d = 0;
            for (int j = 0; j < 2; j++) d += fabs(log((double)q[j]) - log((double)r[i].at[j]));
            if (!kept) CHECK(d >= prev - 1e-9);
        }
    }
    /* the nearest entry wins in several dims at once */
    rt_tuned w[2] = {entry(100, 100, 64, 1, algo_a), entry(400, 50, 64, 1, algo_b)};
    CHECK(pick(w, 2, 200, 100, 64, 1) == 0);
    CHECK(pick(w, 2, 300, 60, 64, 1) == 1);
    /* zero sizes: an entry of zero is far from any other size, and the reverse */
    rt_tuned z[2] = {entry(8, 8, 0, 1, algo_a), entry(8, 8, 1, 1, algo_b)};
    CHECK(pick(z, 2, 8, 8, 0, 1) == 0);
    CHECK(pick(z, 2, 8, 8, 2, 1) == 1);
    CHECK(pick(z, 2, 8, 8, 1000000, 1) == 1);
    /* choices of another size (another library's) are not candidates */
    rt_tuned c[2] = {entry(8, 8, 8, 1, algo_a), entry(64, 8, 8, 1, algo_b)};
    c[0].algo_size = RT_CONV_ALGO_SIZE;
    CHECK(pick(c, 2, 8, 8, 8, 1) == 1);
    CHECK(pick(c, 2, 40, 8, 8, 1) == 1);
    c[1].algo = NULL;
    CHECK(pick(c, 2, 40, 8, 8, 1) == -1);
    /* convolution entries: n, h, w; a wide image nearer the wide corner */
    int32_t id1 = 1, id6 = 6, id0 = 0;
    rt_tuned conv[3] = {{{1, 224, 224, 0}, 0.5f, RT_CONV_ALGO_SIZE, (const uint8_t *)&id1},
                        {{32, 512, 512, 0}, 9.0f, RT_CONV_ALGO_SIZE, (const uint8_t *)&id6},
                        {{1, 128, 512, 0}, 0.4f, RT_CONV_ALGO_SIZE, (const uint8_t *)&id0}};
    CHECK(rt_cuda_tune_pick(conv, 2, (const int64_t[4]){2, 300, 300, 0}, RT_CONV_ALGO_SIZE) == 0);
    CHECK(rt_cuda_tune_pick(conv, 2, (const int64_t[4]){16, 384, 384, 0}, RT_CONV_ALGO_SIZE) == 1);
    CHECK(rt_cuda_tune_pick(conv, 3, (const int64_t[4]){2, 150, 450, 0}, RT_CONV_ALGO_SIZE) == 2);
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
    rt_engine e;
    memset(&e, 0, sizeof e);
    e.tensors = t;
    e.n_tensors = 7;
    e.nodes = nodes;
    e.n_nodes = 2;
    e.steps = steps;
    e.n_steps = 3;
    /* slots: B M K N C H W O 3 */
    int64_t slots[9] = {4, 6, 32, 16, 3, 224, 200, 8, 3};
    int64_t sz[4];
    symc_error err = {0};
    CHECK_MSG(rt_cuda_tune_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(sz[0] == 24 && sz[1] == 16 && sz[2] == 32 && sz[3] == 1, "m=%lld n=%lld k=%lld batch=%lld",
              (long long)sz[0], (long long)sz[1], (long long)sz[2], (long long)sz[3]); /* [B*M, K] x [K, N] */
    CHECK_MSG(rt_cuda_tune_sizes(&e, 1, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[0] == 4 && sz[1] == 224 && sz[2] == 200 && sz[3] == 0);
    CHECK(rt_cuda_tune_sizes(&e, 2, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "not a library call");
    CHECK(rt_cuda_tune_sizes(&e, 3, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(rt_cuda_gemm_sizes(&e, 1, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
    /* a transposed b: [N, K]^T */
    t[1].dims[0] = 3, t[1].dims[1] = 2;
    steps[0].trans_b = 1;
    CHECK_MSG(rt_cuda_tune_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[0] == 24 && sz[1] == 16 && sz[2] == 32 && sz[3] == 1);
    /* inner dims that disagree: an error naming the node, never a crash */
    t[1].dims[1] = 3;
    CHECK(rt_cuda_tune_sizes(&e, 0, slots, sz, &err) != SYMC_OK);
    CHECK_CONTAINS(err.msg, "node 'mm'");
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
    CHECK(rt_cuda_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_OVERFLOW);
    CHECK_CONTAINS(err.msg, "node 'mm' (GEMM step)");
    CHECK_CONTAINS(err.msg, "tensor 'd' of shape [1048576, 1048576, 1073741824] (f32) is too large");
    slots[2] = G; /* and an operand */
    CHECK(rt_cuda_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_OVERFLOW);
    CHECK_CONTAINS(err.msg, "tensor 'a' of shape [1048576, 1048576, 2147483648] (f32) is too large");
    slots[2] = 1;
    /* fits: B = 2^20 matrices of 2^10 x 2^10 */
    slots[0] = (int64_t)1 << 20, slots[1] = slots[3] = 1024;
    CHECK_MSG(rt_cuda_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    /* a batch of 2^31 + 1 matrices, both operands batched: cuBLASLt's count is an int32 */
    slots[0] = slots[4] = G + 1, slots[1] = slots[3] = 1;
    CHECK(rt_cuda_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "a batch of 2147483649 matrices; cuBLASLt takes at most 2147483647");
    slots[0] = slots[4] = G - 1;
    CHECK_MSG(rt_cuda_gemm_sizes(&e, 0, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[3] == G - 1);

    /* CONV: x [B, C, H, H], w [C, CG, 1, 1], group 4 */
    slots[0] = 2;
    CHECK_MSG(rt_cuda_conv_sizes(&e, 1, slots, sz, &err) == SYMC_OK, "%s", err.msg);
    CHECK(sz[0] == 2 && sz[1] == 5 && sz[2] == 5 && sz[3] == 0);
    /* CG = 2^62 with C = 0 (w is empty, so it fits): CG * group wraps to 0
     * == C without the check, and the plan went on */
    slots[5] = 0, slots[6] = (int64_t)1 << 62;
    CHECK(rt_cuda_conv_sizes(&e, 1, slots, sz, &err) == SYMC_ERR_INTERNAL);
    CHECK_CONTAINS(err.msg, "node 'cv': x, w and y shapes disagree (group 4)");
    slots[5] = 8; /* w [8, 2^62, 1, 1] */
    CHECK(rt_cuda_conv_sizes(&e, 1, slots, sz, &err) == SYMC_ERR_OVERFLOW);
    CHECK_CONTAINS(err.msg, "node 'cv' (CONV step)");
    CHECK_CONTAINS(err.msg, "tensor 'w' of shape [8, 4611686018427387904, 1, 1] (f32) is too large");
    CHECK(rt_cuda_conv_sizes(&e, 0, slots, sz, &err) == SYMC_ERR_INVALID_ARG);
}

static void test_describe(void) {
    char store[192];
    char *buf = store;
    int32_t id = 1;
    rt_cuda_conv_algo_describe((const uint8_t *)&id, 4, buf, sizeof store);
    CHECK_CONTAINS(buf, "cuDNN algo 1 (IMPLICIT_PRECOMP_GEMM)");
    id = 77;
    rt_cuda_conv_algo_describe((const uint8_t *)&id, 4, buf, sizeof store);
    CHECK_CONTAINS(buf, "unknown");
    rt_cuda_conv_algo_describe((const uint8_t *)&id, 3, buf, sizeof store);
    CHECK_CONTAINS(buf, "3 bytes");
    uint8_t zero[RT_GEMM_ALGO_SIZE] = {0};
    rt_cuda_gemm_algo_describe(zero, sizeof zero, buf, sizeof store);
    printf("a zeroed cuBLASLt algo reads: %s\n", buf);
    CHECK(!strncmp(buf, "cuBLASLt algo ", 14));
    rt_cuda_gemm_algo_describe(zero, 12, buf, sizeof store);
    CHECK_CONTAINS(buf, "12 bytes");
    rt_cuda_gemm_algo_describe(zero, sizeof zero, buf, 8); /* cut, still terminated */
    CHECK(strlen(buf) == 7);
}

int main(void) {
    test_pick();
    test_sizes();
    test_size_overflow();
    test_describe();
    return check_report("runtime_test_tune");
}
