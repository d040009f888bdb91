/* Copies that change nothing (passes/identity.c, pass_drop_identities), on a builder module with
 * x f32 [B, 6, 8] (B in [1, 4]) through a chain of every form the pass takes:
 *   a = pad(x) of zero width; b = slice(a) of whole axes (step 1); c = transpose(b, (0, 1, 2));
 *   d = cast(c) to f32; e = expand(d) to [B, 6, 8]; f = concat(e) of one operand; g = identity(f)
 * and the look-alikes it must leave: h = slice(g) [0:5] of axis 1 (a crop), p = pad(h) by one
 * row at the end of axis 1, r = slice(g) of axis 2 with step -1 over the whole axis (a reversal:
 * same shape), q = transpose(g, (0, 2, 1)) then back (a real transpose pair), and y = p + r + the
 * transposes' result. A second module's zero pad is its graph output: kept.
 * Checked: after the pass (run with dce) the seven copies are gone and the crop, the pad, the
 * reversal and both transposes are there (counts by op); y reads only computed tensors; the
 * reference outputs of the rewritten and the plain module are bit-identical at B = 1, 2 and 4;
 * with SYMC_DROP_IDENTITIES=0 nothing is dropped; the output pad stays. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/passes/run_module.h"
#include "tests/test_node.h"

static symc_module *build(int output_pad) {
    symc_error err;
    symc_module *m = symc_module_create(output_pad ? "identity_out" : "identities", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_dim c0 = symc_dim_const(m, 0), c1 = symc_dim_const(m, 1), c5 = symc_dim_const(m, 5), c6 = symc_dim_const(m, 6),
             c8 = symc_dim_const(m, 8), c7 = symc_dim_const(m, 7), cm9 = symc_dim_const(m, -9);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, c6, c8}, &x, &err);
    symc_dim z6[6] = {c0, c0, c0, c0, c0, c0};
    symc_attr zp[2] = {symc_attr_dims("pads", z6, 6), symc_attr_str("mode", "constant")};
    symc_tensor a = test_node(m, "pad", "pad0", &x, 1, zp, 2);
    if (output_pad) {
        symc_mark_output(m, a, &err);
        return m;
    }
    int64_t ax1 = 1, ax2 = 2, one = 1, neg = -1, id3[3] = {0, 1, 2}, sw[3] = {0, 2, 1};
    symc_attr sa[4] = {symc_attr_dims("starts", &c0, 1), symc_attr_dims("ends", &c6, 1),
                       symc_attr_ints("axes", &ax1, 1), symc_attr_ints("steps", &one, 1)};
    symc_tensor b = test_node(m, "slice", "whole", &a, 1, sa, 4);
    symc_attr pid = symc_attr_ints("perm", id3, 3);
    symc_tensor c = test_node(m, "transpose", "same", &b, 1, &pid, 1);
    symc_attr to = symc_attr_dtype("to", SYMC_F32);
    symc_tensor d = test_node(m, "cast", "to_f32", &c, 1, &to, 1);
    symc_attr es = symc_attr_dims("shape", (symc_dim[]){B, c6, c8}, 3);
    symc_tensor e = test_node(m, "expand", "same_shape", &d, 1, &es, 1);
    symc_attr ca = symc_attr_int("axis", 1);
    symc_tensor f = test_node(m, "concat", "one", &e, 1, &ca, 1);
    symc_tensor g = test_node(m, "identity", "ident", &f, 1, NULL, 0);
    symc_attr cr[4] = {symc_attr_dims("starts", &c0, 1), symc_attr_dims("ends", &c5, 1),
                       symc_attr_ints("axes", &ax1, 1), symc_attr_ints("steps", &one, 1)};
    symc_tensor h = test_node(m, "slice", "crop", &g, 1, cr, 4);
    symc_dim p6[6] = {c0, c0, c0, c0, c1, c0};
    symc_attr pp[2] = {symc_attr_dims("pads", p6, 6), symc_attr_str("mode", "constant")};
    symc_tensor p = test_node(m, "pad", "pad1", &h, 1, pp, 2);
    symc_attr rv[4] = {symc_attr_dims("starts", &c7, 1), symc_attr_dims("ends", &cm9, 1),
                       symc_attr_ints("axes", &ax2, 1), symc_attr_ints("steps", &neg, 1)};
    symc_tensor r = test_node(m, "slice", "reverse", &g, 1, rv, 4);
    symc_attr psw = symc_attr_ints("perm", sw, 3);
    symc_tensor q = test_node(m, "transpose", "swap", &g, 1, &psw, 1);
    symc_tensor q2 = test_node(m, "transpose", "swap_back", &q, 1, &psw, 1);
    symc_tensor s = test_node(m, "add", "pr", (symc_tensor[]){p, r}, 2, NULL, 0);
    symc_mark_output(m, test_node(m, "add", "y", (symc_tensor[]){s, q2}, 2, NULL, 0), &err);
    return m;
}

static uint32_t count(const ir_module *m, ir_op op) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) n += m->nodes[i].op == op;
    return n;
}

static void check_numbers(symc_module *mm, symc_module *plain) {
    static double xv[4 * 48], a[4 * 48], b[4 * 48];
    for (int64_t bs = 1; bs <= 4; bs *= 2) {
        int64_t xd[3] = {bs, 6, 8};
        for (int64_t i = 0; i < bs * 48; i++) xv[i] = (double)((i * 37) % 101) / 16.0 - 3.0;
        if (!run_both_ref(mm, plain, xd, 3, SYMC_F32, xv, a, b, 4 * 48, bs * 48)) return;
    }
}

int main(void) {
    symc_error err;
    symc_module *mm = build(0), *plain = build(0);
    CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(count(mm, IR_OP_IDENTITY) == 0 && count(mm, IR_OP_CAST) == 0 && count(mm, IR_OP_EXPAND) == 0 &&
                  count(mm, IR_OP_CONCAT) == 0,
              "identity, cast, expand or concat left");
    CHECK_MSG(count(mm, IR_OP_PAD) == 1, "%u pads, want the one of width 1", count(mm, IR_OP_PAD));
    CHECK_MSG(count(mm, IR_OP_SLICE) == 2, "%u slices, want the crop and the reversal", count(mm, IR_OP_SLICE));
    CHECK_MSG(count(mm, IR_OP_TRANSPOSE) == 2, "%u transposes, want the pair", count(mm, IR_OP_TRANSPOSE));
    check_numbers(mm, plain);
    symc_module_destroy(mm);
    symc_module_destroy(plain);

    /* switched off: every copy stays */
    setenv("SYMC_DROP_IDENTITIES", "0", 1);
    symc_module *off = build(0);
    CHECK_MSG(pass_run_passes(off, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    unsetenv("SYMC_DROP_IDENTITIES");
    CHECK_MSG(count(off, IR_OP_PAD) == 2 && count(off, IR_OP_IDENTITY) == 1 && count(off, IR_OP_SLICE) == 3 &&
                  count(off, IR_OP_TRANSPOSE) == 3 && count(off, IR_OP_CAST) == 1 && count(off, IR_OP_EXPAND) == 1 &&
                  count(off, IR_OP_CONCAT) == 1,
              "SYMC_DROP_IDENTITIES=0 dropped something");
    symc_module_destroy(off);

    /* a graph output's copy stays */
    symc_module *out = build(1);
    CHECK_MSG(pass_run_passes(out, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(count(out, IR_OP_PAD) == 1, "the output's zero pad was dropped");
    symc_module_destroy(out);
    return check_report("test_identities");
}
