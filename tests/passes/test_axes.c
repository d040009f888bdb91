/* Non-negative axes (ir/axes.c): the builder makes a node's negative axes
 * non-negative as it adds the node when its input's rank is known (a graph
 * input, a constant), shape inference does it for a node over a tensor of
 * unknown rank, unsqueeze counts its result's rank, flatten's axis may equal
 * the rank, an axis out of range is left for the shape rule's message, and
 * ir_verify refuses a negative axis whose rank is known, naming the node and
 * the attribute. The pipeline's modules end with non-negative axes only. */
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "tests/check.h"

static const ir_attr *attr_of(symc_module *m, const char *node, const char *name) {
    uint32_t i;
    return ir_find_node(m, node, &i) ? ir_node_attr(&m->nodes[i], name) : NULL;
}

static int64_t axis_of(symc_module *m, const char *node) {
    const ir_attr *a = attr_of(m, node, "axis");
    return a ? a->i : 99;
}

static void test_builder_and_inference(void) {
    symc_error err;
    symc_module *m = symc_module_create("axes", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_tensor x, s, r, t, u, f, y;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, symc_dim_const(m, 4), symc_dim_const(m, 6)}, &x, &err);
    symc_attr ax = symc_attr_int("axis", -1);
    CHECK(symc_add_node(m, "softmax", "sm", &x, 1, &ax, 1, &s, 1, &err) == SYMC_OK);
    CHECK(axis_of(m, "sm") == 2); /* x's rank is known: at once */
    symc_attr rd[2] = {symc_attr_ints("axes", (int64_t[]){-1, 0}, 2), symc_attr_int("keepdims", 1)};
    CHECK(symc_add_node(m, "reduce_sum", "rs", &s, 1, rd, 2, &r, 1, &err) == SYMC_OK);
    const ir_attr *a = attr_of(m, "rs", "axes");
    CHECK(a && a->n == 2 && a->ints[0] == -1 && a->ints[1] == 0); /* s has no rank yet */
    symc_attr ua = symc_attr_ints("axes", (int64_t[]){-1}, 1);
    CHECK(symc_add_node(m, "unsqueeze", "us", &x, 1, &ua, 1, &u, 1, &err) == SYMC_OK);
    a = attr_of(m, "us", "axes");
    CHECK(a && a->ints[0] == 3); /* the result's rank, 4 */
    symc_attr fa = symc_attr_int("axis", -3);
    CHECK(symc_add_node(m, "flatten", "fl", &x, 1, &fa, 1, &f, 1, &err) == SYMC_OK);
    CHECK(axis_of(m, "fl") == 0);
    symc_attr ca = symc_attr_int("axis", -2);
    CHECK(symc_add_node(m, "concat", "cat", (symc_tensor[]){r, r}, 2, &ca, 1, &t, 1, &err) == SYMC_OK);
    CHECK(axis_of(m, "cat") == -2);
    CHECK(symc_add_node(m, "relu", "y", &t, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    symc_mark_output(m, y, &err);
    symc_mark_output(m, u, &err);
    symc_mark_output(m, f, &err);
    CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg); /* unknown ranks: not yet refused */
    CHECK_MSG(pass_run_pipeline(m, NULL, &err) == SYMC_OK, "%s", err.msg);
    a = attr_of(m, "rs", "axes");
    CHECK(a && a->ints[0] == 2 && a->ints[1] == 0);
    CHECK(axis_of(m, "cat") == 1);
    /* a negative axis of known rank: the verifier names the node and the attribute */
    uint32_t i;
    CHECK(ir_find_node(m, "sm", &i));
    for (uint32_t k = 0; k < m->nodes[i].n_attrs; k++)
        if (!strcmp(m->nodes[i].attrs[k].name, "axis")) m->nodes[i].attrs[k].i = -1;
    CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
    CHECK_MSG(strstr(err.msg, "node 'sm' (softmax): attribute 'axis' = -1 is a negative axis") != NULL, "%s", err.msg);
    symc_module_destroy(m);
}

/* out of range: the shape rule's message, as before */
static void test_out_of_range(void) {
    symc_error err;
    symc_module *m = symc_module_create("axes_range", &err);
    symc_tensor x, s, y;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){symc_dim_const(m, 2), symc_dim_const(m, 3)}, &x, &err);
    CHECK(symc_add_node(m, "relu", "r", &x, 1, NULL, 0, &s, 1, &err) == SYMC_OK);
    symc_attr ax = symc_attr_int("axis", -3);
    CHECK(symc_add_node(m, "softmax", "sm", &s, 1, &ax, 1, &y, 1, &err) == SYMC_OK);
    symc_mark_output(m, y, &err);
    CHECK(symc_module_infer_shapes(m, &err) != SYMC_OK);
    CHECK_MSG(strstr(err.msg, "axis -3 is out of range for rank 2") != NULL, "%s", err.msg);
    symc_module_destroy(m);
}

int main(void) {
    test_builder_and_inference();
    test_out_of_range();
    return check_report("test_axes");
}
