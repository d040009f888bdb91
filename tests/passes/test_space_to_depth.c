/* Strided slices concatenated along the last axis as one space-to-depth (passes/space_to_depth.c,
 * pass_space_to_depth), on a builder module with x f32 [B, 6, 4, 5] (B in [1, 4]):
 *   e = x[:, 0::2], o = x[:, 1::2]                                (shared by two parts each)
 *   y = concat(e[:, :, 0::2], o[:, :, 0::2], e[:, :, 1::2], o[:, :, 1::2]) along axis 3
 *       (Swin's patch merge: y[b, h, w, p * 5 + c] = x[b, 2h + p % 2, 2w + p / 2, c])
 *   u = concat(x[:, :, 0::2], x[:, :, 1::2]) along axis 3         (one sliced axis)
 *   z = concat(x[:, 1::2], x[:, 0::2]) along axis 3               (offsets 1, 0: not digits, left)
 *   out = concat of the three flattened to [B, 120] along axis 1
 * Checked: after the pass (dce included) two transposes, z's two slices and z's and out's concats
 * left; out on the reference backend bit-identical to the plain module's and y's part equal to the
 * formula at B = 1, 2, 4; SYMC_SPACE_TO_DEPTH=0 leaves every concat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/passes/run_module.h"
#include "tests/test_node.h"

/* x[start::2] along axis (torch's end: INT64_MAX) */
static symc_tensor every2(symc_module *m, const char *name, symc_tensor x, int64_t axis, int64_t start) {
    symc_dim db = symc_dim_const(m, start), de = symc_dim_const(m, INT64_MAX);
    int64_t two = 2;
    symc_attr a[4] = {symc_attr_dims("starts", &db, 1), symc_attr_dims("ends", &de, 1),
                      symc_attr_ints("axes", &axis, 1), symc_attr_ints("steps", &two, 1)};
    return test_node(m, "slice", name, &x, 1, a, 4);
}

static symc_tensor cat(symc_module *m, const char *name, const symc_tensor *parts, uint32_t n, int64_t axis) {
    symc_attr a = symc_attr_int("axis", axis);
    return test_node(m, "concat", name, parts, n, &a, 1);
}

static symc_tensor flat(symc_module *m, const char *name, symc_tensor x, symc_dim B) {
    symc_attr a = symc_attr_dims("shape", (symc_dim[]){B, symc_dim_const(m, 120)}, 2);
    return test_node(m, "reshape", name, &x, 1, &a, 1);
}

static symc_module *build(void) {
    symc_error err;
    symc_module *m = symc_module_create("space_to_depth", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4,
                   (symc_dim[]){B, symc_dim_const(m, 6), symc_dim_const(m, 4), symc_dim_const(m, 5)}, &x, &err);
    symc_tensor e = every2(m, "e", x, 1, 0), o = every2(m, "o", x, 1, 1);
    symc_tensor yp[4] = {every2(m, "p0", e, 2, 0), every2(m, "p1", o, 2, 0), every2(m, "p2", e, 2, 1),
                         every2(m, "p3", o, 2, 1)};
    symc_tensor y = cat(m, "y", yp, 4, 3);
    symc_tensor up[2] = {every2(m, "u0", x, 2, 0), every2(m, "u1", x, 2, 1)};
    symc_tensor u = cat(m, "u", up, 2, -1);
    symc_tensor zp[2] = {every2(m, "z0", x, 1, 1), every2(m, "z1", x, 1, 0)};
    symc_tensor z = cat(m, "z", zp, 2, 3);
    symc_tensor all[3] = {flat(m, "yf", y, B), flat(m, "uf", u, B), flat(m, "zf", z, B)};
    symc_mark_output(m, cat(m, "out", all, 3, 1), &err);
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
    CHECK_MSG(count(mm, IR_OP_TRANSPOSE) == 2 && count(mm, IR_OP_CONCAT) == 2 && count(mm, IR_OP_SLICE) == 2,
              "%u transposes, %u concats and %u slices, want 2, 2 and 2", count(mm, IR_OP_TRANSPOSE),
              count(mm, IR_OP_CONCAT), count(mm, IR_OP_SLICE));
    static double xv[4 * 120], a[4 * 360], b[4 * 360];
    for (int64_t bs = 1; bs <= 4; bs *= 2) {
        int64_t xd[4] = {bs, 6, 4, 5};
        for (int64_t i = 0; i < bs * 120; i++) xv[i] = (double)((i * 29) % 97) / 8.0 - 6.0;
        if (!run_both_ref(mm, plain, xd, 4, SYMC_F32, xv, a, b, 4 * 360, bs * 360)) break;
        int bad = 0;
        for (int64_t bb = 0; bb < bs; bb++)
            for (int64_t q = 0; q < 120; q++) { /* y[b, h, w, p * 5 + c] */
                int64_t c = q % 5, p = q / 5 % 4, w = q / 20 % 2, h = q / 40;
                double want = (double)(float)xv[((bb * 6 + 2 * h + p % 2) * 4 + 2 * w + p / 2) * 5 + c];
                bad += want != a[bb * 360 + q];
            }
        CHECK_MSG(!bad, "B=%lld: %d values of y are not the space-to-depth of x", (long long)bs, bad);
    }
    symc_module_destroy(mm);
    symc_module_destroy(plain);
    setenv("SYMC_SPACE_TO_DEPTH", "0", 1);
    symc_module *off = build();
    CHECK_MSG(pass_run_passes(off, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    unsetenv("SYMC_SPACE_TO_DEPTH");
    CHECK_MSG(count(off, IR_OP_CONCAT) == 4 && count(off, IR_OP_TRANSPOSE) == 0, "SYMC_SPACE_TO_DEPTH=0 rewrote");
    symc_module_destroy(off);
    return check_report("test_space_to_depth");
}
