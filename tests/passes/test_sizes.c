/* The check-sizes pass (passes/size_check.c) in the pipeline: declared ranges
 * under which a tensor's byte size passes INT64_MAX are refused, with the
 * tensor, its producing node, the symbols and their ranges, and the largest
 * max that fits; ranges whose largest tensor fits, up to the last byte,
 * compile. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "passes/pipeline.h"
#include "tests/check.h"

static symc_error err;

/* y = relu(x), x: f32[B, 128] with B in [1, max], a multiple of `mult`. */
static symc_status relu_b(int64_t max, int64_t mult) {
    symc_module *m = symc_module_create("relu_b", &err);
    symc_dim B;
    symc_tensor x, y;
    symc_status st = symc_declare_symbol(m, "B", mult, mult, max, mult, &B, &err);
    if (!st) st = symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 128)}, &x, &err);
    if (!st) st = symc_add_node(m, "relu", "act", &x, 1, NULL, 0, &y, 1, &err);
    if (!st) st = symc_mark_output(m, y, &err);
    if (!st) st = pass_run_pipeline(m, NULL, &err);
    symc_module_destroy(m);
    return st;
}

static void test_boundary(void) {
    /* 2^53 * 512 = 2^62 bytes; (2^54 - 1) * 512 = 2^63 - 512: both fit */
    CHECK_MSG(relu_b((int64_t)1 << 53, 1) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(relu_b(((int64_t)1 << 54) - 1, 1) == SYMC_OK, "%s", err.msg);
    /* 2^54 * 512 = 2^63: one past INT64_MAX */
    CHECK(relu_b((int64_t)1 << 54, 1) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg,
                   "pass check-sizes: input 'x' (f32[B, 128], a graph input) takes (B*512) bytes, which "
                   "does not fit in int64 at the largest declared sizes (B in [1, 18014398509481984]): "
                   "lower the max of B to at most 18014398509481983");
    /* the suggestion keeps B a multiple of its declared multiple */
    CHECK(relu_b((int64_t)1 << 62, 8) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "lower the max of B to at most 18014398509481976");
}

/* scores = x @ x^T, x: f32[S, 64] with S in [1, 2^32]: x fits (2^40 bytes),
 * the S x S scores (2^66) do not; the error names them and their matmul. */
static void test_intermediate(void) {
    symc_module *m = symc_module_create("attn", &err);
    symc_dim S;
    symc_tensor x, xt, s;
    CHECK(symc_declare_symbol(m, "S", 1, 128, (int64_t)1 << 32, 1, &S, &err) == SYMC_OK);
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){S, symc_dim_const(m, 64)}, &x, &err) == SYMC_OK);
    symc_attr perm = symc_attr_ints("perm", (const int64_t[]){1, 0}, 2);
    CHECK(symc_add_node(m, "transpose", "xt", &x, 1, &perm, 1, &xt, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "scores", (symc_tensor[]){x, xt}, 2, NULL, 0, &s, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, s, &err) == SYMC_OK);
    CHECK(pass_run_pipeline(m, NULL, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "tensor 'scores' (f32[S, S]) from node 'scores' (matmul) takes ");
    /* floor(sqrt((2^63 - 1) / 4)) */
    CHECK_CONTAINS(err.msg, "(S in [1, 4294967296]): lower the max of S to at most 1518500249");
    symc_module_destroy(m);
}

/* Two symbols: each one's largest max with the other at its max. */
static void test_two_symbols(void) {
    symc_module *m = symc_module_create("two", &err);
    symc_dim B, S;
    symc_tensor x, y;
    CHECK(symc_declare_symbol(m, "B", 1, 2, (int64_t)1 << 40, 1, &B, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "S", 1, 2, (int64_t)1 << 20, 1, &S, &err) == SYMC_OK);
    CHECK(symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, 16)}, &x, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &x, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    CHECK(pass_run_pipeline(m, NULL, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'x' (f32[B, S, 16], a graph input)");
    CHECK_CONTAINS(err.msg,
                   "(B in [1, 1099511627776], S in [1, 1048576]): lower the max of B to at most "
                   "137438953471, or of S to at most 131071 (the others at their max)");
    symc_module_destroy(m);
}

int main(void) {
    test_boundary();
    test_intermediate();
    test_two_symbols();
    return check_report("test_sizes");
}
