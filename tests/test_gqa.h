/* The builder tests' grouped-query attention (passes' test_fuse.c, codegen's test_cuda_target.c):
 * q [B, 8, S, d], k and v [B, 2, S, d] of f16 (B in [1, 8], S in [1, s_max] opt s_opt), K and V
 * repeated as transformers' repeat_kv writes it (unsqueeze at 2 "ku"/"vu", expand to 4 "ke"/"ve",
 * reshape to 8 heads "kr"/"vr"), then o = softmax(q · krᵀ) · vr marked as the output, and vr too
 * when v_out. Header-only, after tests/check.h and tests/test_node.h. */
#ifndef SYMC_TESTS_TEST_GQA_H
#define SYMC_TESTS_TEST_GQA_H

#include "symc/symc.h"
#include "tests/test_node.h"

typedef struct test_gqa {
    symc_module *m;
    symc_tensor q, k, v, ku, vu, vr;
} test_gqa;

static test_gqa test_gqa_module(const char *name, int64_t s_opt, int64_t s_max, int64_t head_dim, int v_out) {
    symc_error err;
    test_gqa g = {0};
    g.m = symc_module_create(name, &err);
    symc_module *m = g.m;
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, s_opt, s_max, 1, &S, &err);
    symc_dim two = symc_dim_const(m, 2), four = symc_dim_const(m, 4), eight = symc_dim_const(m, 8),
             d = symc_dim_const(m, head_dim);
    symc_add_input(m, "q", SYMC_F16, 4, (symc_dim[]){B, eight, S, d}, &g.q, &err);
    symc_add_input(m, "k", SYMC_F16, 4, (symc_dim[]){B, two, S, d}, &g.k, &err);
    symc_add_input(m, "v", SYMC_F16, 4, (symc_dim[]){B, two, S, d}, &g.v, &err);
    symc_attr ua = symc_attr_ints("axes", (int64_t[]){2}, 1);
    symc_attr ea = symc_attr_dims("shape", (symc_dim[]){B, two, four, S, d}, 5);
    symc_attr ra = symc_attr_dims("shape", (symc_dim[]){B, eight, S, d}, 4);
    int64_t perm[4] = {0, 1, 3, 2};
    symc_attr pa = symc_attr_ints("perm", perm, 4), ax = symc_attr_int("axis", -1);
    g.ku = test_node(m, "unsqueeze", "ku", &g.k, 1, &ua, 1);
    g.vu = test_node(m, "unsqueeze", "vu", &g.v, 1, &ua, 1);
    symc_tensor ke = test_node(m, "expand", "ke", &g.ku, 1, &ea, 1),
                ve = test_node(m, "expand", "ve", &g.vu, 1, &ea, 1);
    symc_tensor kr = test_node(m, "reshape", "kr", &ke, 1, &ra, 1);
    g.vr = test_node(m, "reshape", "vr", &ve, 1, &ra, 1);
    symc_tensor kt = test_node(m, "transpose", "kt", &kr, 1, &pa, 1);
    symc_tensor s = test_node(m, "matmul", "s", (symc_tensor[]){g.q, kt}, 2, NULL, 0);
    symc_tensor p = test_node(m, "softmax", "p", &s, 1, &ax, 1);
    symc_mark_output(m, test_node(m, "matmul", "o", (symc_tensor[]){p, g.vr}, 2, NULL, 0), &err);
    if (v_out) symc_mark_output(m, g.vr, &err);
    return g;
}

#endif
