/* A test model shared by passes.fuse and codegen.cuda_target: GPT-2's fused projection split into
 * Q, K and V. x [B, S, 96] (B in [1, 8], S in [1, 300]) is split along its last axis into three
 * parts of 32, each reshaped to [B, S, 2, 16] and transposed to heads (K to [B, 2, 16, S]), then
 * o = softmax(Q·Kᵀ)·V. Header-only: each test binary includes it once. */
#ifndef SYMC_TESTS_QKV_SPLIT_H
#define SYMC_TESTS_QKV_SPLIT_H

#include "symc/symc.h"
#include "tests/check.h"

/* the module; *x its input, parts[3] the split's outputs, r[3] the reshapes' outputs ("qr", "kr",
 * "vr"), *o the output (marked); the split node is named "split" */
static symc_module *qkv_split_module(symc_dtype dt, symc_tensor *x, symc_tensor parts[3], symc_tensor r[3],
                                     symc_tensor *o) {
    symc_error err;
    symc_module *m = symc_module_create("qkv_split", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 100, 300, 1, &S, &err);
    symc_add_input(m, "x", dt, 3, (symc_dim[]){B, S, symc_dim_const(m, 96)}, x, &err);
    symc_dim c32 = symc_dim_const(m, 32);
    symc_attr sa[2] = {symc_attr_int("axis", -1), symc_attr_dims("sizes", (symc_dim[]){c32, c32, c32}, 3)};
    CHECK_MSG(symc_add_node(m, "split", "split", x, 1, sa, 2, parts, 3, &err) == SYMC_OK, "%s", err.msg);
    symc_attr rs = symc_attr_dims("shape", (symc_dim[]){B, S, symc_dim_const(m, 2), symc_dim_const(m, 16)}, 4);
    static const char *const rn[3] = {"qr", "kr", "vr"}, *const tn[3] = {"qh", "kt", "vh"};
    int64_t heads[4] = {0, 2, 1, 3}, keys[4] = {0, 2, 3, 1};
    symc_attr ph = symc_attr_ints("perm", heads, 4), pk = symc_attr_ints("perm", keys, 4);
    symc_tensor h[3];
    for (int i = 0; i < 3; i++) {
        CHECK(symc_add_node(m, "reshape", rn[i], &parts[i], 1, &rs, 1, &r[i], 1, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "transpose", tn[i], &r[i], 1, i == 1 ? &pk : &ph, 1, &h[i], 1, &err) == SYMC_OK);
    }
    symc_attr ax = symc_attr_int("axis", -1);
    symc_tensor sc, p;
    CHECK(symc_add_node(m, "matmul", "s", (symc_tensor[]){h[0], h[1]}, 2, NULL, 0, &sc, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "softmax", "p", &sc, 1, &ax, 1, &p, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "o", (symc_tensor[]){p, h[2]}, 2, NULL, 0, o, 1, &err) == SYMC_OK);
    symc_mark_output(m, *o, &err);
    return m;
}

#endif
