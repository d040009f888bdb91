/* torch.roll's export as one gather (passes/roll.c, pass_roll_as_gather), on a builder module with
 * x f32 [B, 7, 5, 8] (B in [1, 4]):
 *   a = concat(x[:, 2:7], x[:, 0:2]) along axis 1          (torch.roll(x, -2, 1))
 *   r = concat(a[:, :, -3:5], a[:, :, 0:-3]) along axis 2   (torch.roll(a, 3, 2): negative bounds)
 *   i = concat(x[:, 0:2], x[:, 2:7]) along axis 1          (x itself: no roll, left alone)
 *   y = r + i
 * Checked: after the pass (dce included) two gathers by constant i64 indices and the one concat
 * left (i's), no slice feeding a gather's input; y on the reference backend bit-identical to the
 * plain module's and equal to x[b, (i + 2) % 7, (j + 2) % 5, c] + x[b, i, j, c] at B = 1, 2, 4;
 * SYMC_ROLL_GATHER=0 leaves the three concats. Run with SYMC_COMPOSE_MOVES=0: the two rolls would
 * then compose into one gather (passes/move_chain.c, test_move_chain.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/passes/run_module.h"
#include "tests/test_node.h"

static symc_tensor slice(symc_module *m, const char *name, symc_tensor x, int64_t axis, int64_t b, int64_t e) {
    symc_dim db = symc_dim_const(m, b), de = symc_dim_const(m, e);
    int64_t one = 1;
    symc_attr a[4] = {symc_attr_dims("starts", &db, 1), symc_attr_dims("ends", &de, 1),
                      symc_attr_ints("axes", &axis, 1), symc_attr_ints("steps", &one, 1)};
    return test_node(m, "slice", name, &x, 1, a, 4);
}

static symc_tensor cat(symc_module *m, const char *name, symc_tensor p, symc_tensor q, int64_t axis) {
    symc_attr a = symc_attr_int("axis", axis);
    return test_node(m, "concat", name, (symc_tensor[]){p, q}, 2, &a, 1);
}

static symc_module *build(void) {
    symc_error err;
    symc_module *m = symc_module_create("roll", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4,
                   (symc_dim[]){B, symc_dim_const(m, 7), symc_dim_const(m, 5), symc_dim_const(m, 8)}, &x, &err);
    symc_tensor a = cat(m, "roll_h", slice(m, "h_tail", x, 1, 2, 7), slice(m, "h_head", x, 1, 0, 2), 1);
    symc_tensor r = cat(m, "roll_w", slice(m, "w_tail", a, 2, -3, 5), slice(m, "w_head", a, 2, 0, -3), 2);
    symc_tensor i = cat(m, "same", slice(m, "s_head", x, 1, 0, 2), slice(m, "s_tail", x, 1, 2, 7), 1);
    symc_mark_output(m, test_node(m, "add", "y", (symc_tensor[]){r, i}, 2, NULL, 0), &err);
    return m;
}

static uint32_t count(const ir_module *m, ir_op op) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) n += m->nodes[i].op == op;
    return n;
}

int main(void) {
    symc_error err;
    setenv("SYMC_COMPOSE_MOVES", "0", 1); /* the two rolls would compose into one gather (test_move_chain.c) */
    symc_module *mm = build(), *plain = build();
    CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(count(mm, IR_OP_GATHER) == 2 && count(mm, IR_OP_CONCAT) == 1, "%u gathers and %u concats, want 2 and 1",
              count(mm, IR_OP_GATHER), count(mm, IR_OP_CONCAT));
    for (uint32_t n = 0; n < mm->n_nodes; n++) {
        const ir_node *g = &mm->nodes[n];
        if (g->op != IR_OP_GATHER) continue;
        const ir_tensor *idx = &mm->tensors[g->in[1]], *src = &mm->tensors[g->in[0]];
        CHECK_MSG(idx->dtype == SYMC_I64 && idx->constant != IR_NONE, "a gather's indices are not a constant");
        CHECK_MSG(src->producer == IR_NONE || mm->nodes[src->producer].op != IR_OP_SLICE, "a gather reads a slice");
    }
    static double xv[4 * 280], a[4 * 280], b[4 * 280];
    for (int64_t bs = 1; bs <= 4; bs *= 2) {
        int64_t xd[4] = {bs, 7, 5, 8};
        for (int64_t i = 0; i < bs * 280; i++) xv[i] = (double)((i * 29) % 97) / 8.0 - 6.0;
        if (!run_both_ref(mm, plain, xd, 4, SYMC_F32, xv, a, b, 4 * 280, bs * 280)) break;
        int bad = 0;
        for (int64_t q = 0; q < bs * 280; q++) {
            int64_t c = q % 8, j = q / 8 % 5, i = q / 40 % 7, bb = q / 280;
            double want = (double)(float)xv[((bb * 7 + (i + 2) % 7) * 5 + (j + 2) % 5) * 8 + c] + (double)(float)xv[q];
            bad += (float)want != (float)a[q];
        }
        CHECK_MSG(!bad, "B=%lld: %d values are not the rolled x plus x", (long long)bs, bad);
    }
    symc_module_destroy(mm);
    symc_module_destroy(plain);
    setenv("SYMC_ROLL_GATHER", "0", 1);
    symc_module *off = build();
    CHECK_MSG(pass_run_passes(off, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
    unsetenv("SYMC_ROLL_GATHER");
    CHECK_MSG(count(off, IR_OP_CONCAT) == 3 && count(off, IR_OP_GATHER) == 0, "SYMC_ROLL_GATHER=0 rolled");
    symc_module_destroy(off);
    return check_report("test_roll");
}
