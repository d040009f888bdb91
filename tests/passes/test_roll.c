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
 * then compose into one gather (passes/move_chain.c, test_move_chain.c).
 * Rotary embeddings' rotate_half on x [B, 3, 8]: cat((-x[..., 4:]), x[..., :4]) (neg first, as in
 * transformers' Llama), cat(x[..., 5:], -x[..., :5]) (neg second, k = 5), and the two with the parts
 * one split's outputs (neg first, k = 4; neg second, k = 3), all along the last axis:
 * one gather and one mul by a constant sign each, no slice, neg or concat left, bit-identical to the
 * plain module and to the formula; the same along axis 1 of [B, 8, 3] is left alone. */
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

/* rotate_half's export along `axis` of x [B, 8, 3] (axis 1) or [B, 3, 8] (axis 2): concat(neg(x[k:8]),
 * x[0:k]), or (neg_second) concat(x[k:8], neg(x[0:k])); split: the two parts one split's outputs */
static symc_module *rotate_half(int neg_second, int64_t k, int64_t axis, int split) {
    symc_error err;
    symc_module *m = symc_module_create("rotate_half", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_tensor x;
    symc_dim d3 = symc_dim_const(m, 3), d8 = symc_dim_const(m, 8);
    symc_add_input(m, "x", SYMC_F32, 3, axis == 2 ? (symc_dim[]){B, d3, d8} : (symc_dim[]){B, d8, d3}, &x, &err);
    symc_tensor tail, head;
    if (split) {
        symc_dim sizes[2] = {symc_dim_const(m, k), symc_dim_const(m, 8 - k)};
        symc_attr sa[2] = {symc_attr_int("axis", axis), symc_attr_dims("sizes", sizes, 2)};
        symc_tensor parts[2];
        CHECK_MSG(symc_add_node(m, "split", "halves", &x, 1, sa, 2, parts, 2, &err) == SYMC_OK, "%s", err.msg);
        head = parts[0], tail = parts[1];
    } else tail = slice(m, "tail", x, axis, k, 8), head = slice(m, "head", x, axis, 0, k);
    if (neg_second) head = test_node(m, "neg", "neg", &head, 1, NULL, 0);
    else tail = test_node(m, "neg", "neg", &tail, 1, NULL, 0);
    symc_mark_output(m, cat(m, "rot", tail, head, axis), &err);
    return m;
}

static uint32_t count(const ir_module *m, ir_op op);

static void test_rotate_half(void) {
    static const struct {
        int neg_second;
        int64_t k, axis;
        int split, folds;
    } cases[] = {{0, 4, 2, 0, 1}, {1, 5, 2, 0, 1}, {0, 4, 1, 0, 0}, {0, 4, 2, 1, 1}, {1, 3, 2, 1, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        symc_error err;
        symc_module *mm = rotate_half(cases[c].neg_second, cases[c].k, cases[c].axis, cases[c].split),
                    *plain = rotate_half(cases[c].neg_second, cases[c].k, cases[c].axis, cases[c].split);
        CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
        const int f = cases[c].folds;
        CHECK_MSG(count(mm, IR_OP_GATHER) == (uint32_t)f && count(mm, IR_OP_CONCAT) == (uint32_t)!f &&
                      count(mm, IR_OP_SLICE) == 2u * (!f && !cases[c].split) &&
                      !count(mm, IR_OP_SPLIT) == (f || !cases[c].split) && count(mm, IR_OP_NEG) == (uint32_t)!f &&
                      count(mm, IR_OP_MUL) == (uint32_t)f,
                  "case %zu: %u gathers, %u concats, %u slices, %u negs, %u muls", c, count(mm, IR_OP_GATHER),
                  count(mm, IR_OP_CONCAT), count(mm, IR_OP_SLICE), count(mm, IR_OP_NEG), count(mm, IR_OP_MUL));
        static double xv[4 * 24], a[4 * 24], b[4 * 24];
        for (int64_t bs = 1; bs <= 4; bs *= 2) {
            int64_t xd[3] = {bs, cases[c].axis == 2 ? 3 : 8, cases[c].axis == 2 ? 8 : 3};
            for (int64_t i = 0; i < bs * 24; i++) xv[i] = (double)((i * 31) % 89) / 4.0 - 11.0;
            if (!run_both_ref(mm, plain, xd, 3, SYMC_F32, xv, a, b, 4 * 24, bs * 24)) break;
            int bad = 0;
            const int64_t k = cases[c].k;
            for (int64_t q = 0; q < bs * 24 && cases[c].axis == 2; q++) {
                const int64_t j = q % 8, row = q / 8, src = j < 8 - k ? j + k : j - (8 - k);
                const int negated = cases[c].neg_second ? j >= 8 - k : j < 8 - k;
                bad += (float)(negated ? -xv[row * 8 + src] : xv[row * 8 + src]) != (float)a[q];
            }
            CHECK_MSG(!bad, "case %zu, B=%lld: %d values are not rotate_half(x)", c, (long long)bs, bad);
        }
        symc_module_destroy(mm);
        symc_module_destroy(plain);
    }
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
    test_rotate_half();
    return check_report("test_roll");
}
