/* A chain of row moves composed into one gather (passes/move_chain.c, pass_compose_moves), on a
 * builder module with x f32 [B, 6, 4, 8] (B in [1, 4]):
 *   g = gather(gather(x, (h + 2) % 6, axis 1), [-1, 0, 1, 2], axis 2)   (Swin's two rolls)
 *   y = transpose(reshape(g, [B, 3, 2, 2, 2, 8]), (0, 1, 3, 2, 4, 5))   (its window partition)
 *   u = transpose(x, (0, 2, 1, 3))                                      (one copy: left alone)
 *   out = concat(y, u flattened to [B, 192]) along axis 1
 * Checked: after the pass (dce included) one gather by a constant i64 table of 24 and u's transpose
 * left; out on the reference backend bit-identical to the plain module's and y equal to
 * x[b, (2 h1 + h2 + 2) % 6, (2 w1 + w2 + 3) % 4, c] at B = 1, 2, 4; SYMC_COMPOSE_MOVES=0 leaves the
 * two gathers and two transposes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/passes/run_module.h"
#include "tests/test_node.h"

static symc_tensor gather(symc_module *m, const char *name, symc_tensor x, int64_t axis, const int64_t *idx,
                          int64_t n) {
    symc_error err;
    symc_tensor t = SYMC_TENSOR_NONE;
    char cname[64];
    snprintf(cname, sizeof cname, "%s_index", name);
    CHECK_MSG(symc_add_constant(m, cname, SYMC_I64, 1, &n, idx, (size_t)n * 8, &t, &err) == SYMC_OK, "%s", err.msg);
    symc_attr a = symc_attr_int("axis", axis);
    return test_node(m, "gather", name, (symc_tensor[]){x, t}, 2, &a, 1);
}

static symc_tensor transpose(symc_module *m, const char *name, symc_tensor x, const int64_t *perm, uint32_t n) {
    symc_attr a = symc_attr_ints("perm", perm, n);
    return test_node(m, "transpose", name, &x, 1, &a, 1);
}

static symc_tensor reshape(symc_module *m, const char *name, symc_tensor x, const symc_dim *dims, uint32_t n) {
    symc_attr a = symc_attr_dims("shape", dims, n);
    return test_node(m, "reshape", name, &x, 1, &a, 1);
}

static symc_module *build(void) {
    symc_error err;
    symc_module *m = symc_module_create("move_chain", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_dim c2 = symc_dim_const(m, 2), c3 = symc_dim_const(m, 3), c8 = symc_dim_const(m, 8);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){B, symc_dim_const(m, 6), symc_dim_const(m, 4), c8}, &x, &err);
    static const int64_t ih[6] = {2, 3, 4, 5, 0, 1}, iw[4] = {-1, 0, 1, 2};
    symc_tensor g = gather(m, "roll_w", gather(m, "roll_h", x, 1, ih, 6), 2, iw, 4);
    symc_tensor r = reshape(m, "windows", g, (symc_dim[]){B, c3, c2, c2, c2, c8}, 6);
    symc_tensor y = transpose(m, "partition", r, (int64_t[]){0, 1, 3, 2, 4, 5}, 6);
    symc_tensor u = transpose(m, "swap", x, (int64_t[]){0, 2, 1, 3}, 4);
    symc_dim flat[2] = {B, symc_dim_const(m, 192)};
    symc_tensor parts[2] = {reshape(m, "yf", y, flat, 2), reshape(m, "uf", u, flat, 2)};
    symc_attr ax = symc_attr_int("axis", 1);
    symc_mark_output(m, test_node(m, "concat", "out", parts, 2, &ax, 1), &err);
    return m;
}

static uint32_t count(const ir_module *m, ir_op op) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) n += m->nodes[i].op == op;
    return n;
}

int main(void) {
    symc_error err;
    symc_module *mm = build(), *plain = build();
    CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(count(mm, IR_OP_GATHER) == 1 && count(mm, IR_OP_TRANSPOSE) == 1,
              "%u gathers and %u transposes, want 1, 1", count(mm, IR_OP_GATHER), count(mm, IR_OP_TRANSPOSE));
    for (uint32_t n = 0; n < mm->n_nodes; n++) {
        const ir_node *g = &mm->nodes[n];
        if (g->op != IR_OP_GATHER) continue;
        const ir_tensor *idx = &mm->tensors[g->in[1]];
        int64_t len = 0;
        CHECK_MSG(idx->dtype == SYMC_I64 && idx->constant != IR_NONE && sym_is_const(mm->syms, idx->dims[0], &len) &&
                      len == 24,
                  "the gather's table is not a constant i64 [24]");
    }
    static double xv[4 * 192], a[4 * 384], b[4 * 384];
    for (int64_t bs = 1; bs <= 4; bs *= 2) {
        int64_t xd[4] = {bs, 6, 4, 8};
        for (int64_t i = 0; i < bs * 192; i++) xv[i] = (double)((i * 29) % 97) / 8.0 - 6.0;
        if (!run_both_ref(mm, plain, xd, 4, SYMC_F32, xv, a, b, 4 * 384, bs * 384)) break;
        int bad = 0;
        for (int64_t bb = 0; bb < bs; bb++)
            for (int64_t q = 0; q < 192; q++) { /* y[b, h1, w1, h2, w2, c] */
                int64_t c = q % 8, w2 = q / 8 % 2, h2 = q / 16 % 2, w1 = q / 32 % 2, h1 = q / 64;
                int64_t h = (2 * h1 + h2 + 2) % 6, w = (2 * w1 + w2 + 3) % 4;
                bad += (double)(float)xv[((bb * 6 + h) * 4 + w) * 8 + c] != a[bb * 384 + q];
            }
        CHECK_MSG(!bad, "B=%lld: %d values of y are not the moved x", (long long)bs, bad);
    }
    symc_module_destroy(mm);
    symc_module_destroy(plain);
    setenv("SYMC_COMPOSE_MOVES", "0", 1);
    symc_module *off = build();
    CHECK_MSG(pass_run_passes(off, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    unsetenv("SYMC_COMPOSE_MOVES");
    CHECK_MSG(count(off, IR_OP_GATHER) == 2 && count(off, IR_OP_TRANSPOSE) == 2, "SYMC_COMPOSE_MOVES=0 composed");
    symc_module_destroy(off);
    return check_report("test_move_chain");
}
