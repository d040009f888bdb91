/* Dead-node removal (passes/dce.c) on modules made with the C builder API.
 *
 * One module has a live chain to the output, a dead chain from the input (two
 * nodes, one reading the other), a dead node reading a constant the live
 * chain reads too (the constant stays), a constant only a dead node reads
 * (it goes, with its data), and an input nothing reads (it stays: inputs are
 * the engine's interface). The pipeline removes the dead ones (its `dce`
 * row), the module verifies, names and indices stay consistent, and a second
 * removal finds nothing. A batch norm folded into its conv (an unread
 * identity after fold-batch-norm) is gone after the pipeline, with the three
 * constants only it read. */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "tests/check.h"

static symc_tensor constant(symc_module *m, const char *name, int64_t n, float v) {
    float *d = malloc((size_t)n * sizeof *d);
    for (int64_t i = 0; i < n; i++) d[i] = v + (float)i;
    symc_tensor t = SYMC_TENSOR_NONE;
    symc_error err;
    CHECK_MSG(symc_add_constant(m, name, SYMC_F32, 1, &n, d, (size_t)n * sizeof *d, &t, &err) == SYMC_OK, "%s",
              err.msg);
    free(d);
    return t;
}

static symc_tensor node(symc_module *m, const char *op, const char *name, const symc_tensor *in, uint32_t n_in) {
    symc_tensor t = SYMC_TENSOR_NONE;
    symc_error err;
    CHECK_MSG(symc_add_node(m, op, name, in, n_in, NULL, 0, &t, 1, &err) == SYMC_OK, "%s: %s", name, err.msg);
    return t;
}

static int has_node(symc_module *m, const char *name) {
    uint32_t i;
    return ir_find_node(m, name, &i);
}
static int has_tensor(symc_module *m, const char *name) {
    uint32_t i;
    return ir_find_tensor(m, name, &i);
}

static void test_chains(void) {
    symc_error err;
    symc_module *m = symc_module_create("dce", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_tensor x, unused;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 4)}, &x, &err);
    symc_add_input(m, "unused", SYMC_F32, 1, (symc_dim[]){symc_dim_const(m, 4)}, &unused, &err);
    symc_tensor shared = constant(m, "shared", 4, 1.0f);
    symc_tensor lonely = constant(m, "lonely", 4, 100.0f);
    symc_tensor a = node(m, "add", "a", (symc_tensor[]){x, shared}, 2);
    symc_tensor d1 = node(m, "neg", "d1", &x, 1);
    node(m, "exp", "d2", &d1, 1);
    node(m, "mul", "d3", (symc_tensor[]){x, shared}, 2);
    node(m, "sub", "d4", (symc_tensor[]){x, lonely}, 2);
    symc_tensor y = node(m, "relu", "y", &a, 1);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    uint32_t nodes = m->n_nodes, consts = m->n_constants;
    CHECK(nodes == 8 && consts == 2);

    CHECK_MSG(pass_run_pipeline(m, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(m->n_nodes == nodes - 5, "%u nodes after the pipeline, want %u", m->n_nodes, nodes - 5);
    CHECK(!has_node(m, "d1") && !has_node(m, "d2") && !has_node(m, "d3") && !has_node(m, "d4"));
    CHECK(!has_tensor(m, "d1") && !has_tensor(m, "d2") && !has_tensor(m, "lonely"));
    CHECK(has_node(m, "shared") && has_node(m, "a") && has_node(m, "y") && !has_node(m, "lonely"));
    CHECK(m->n_constants == 1);
    CHECK(m->n_inputs == 2 && has_tensor(m, "unused") && has_tensor(m, "x"));
    uint32_t ai = 0, yi = 0, si = 0, xi = 0;
    CHECK(ir_find_node(m, "a", &ai) && ir_find_node(m, "y", &yi) && ir_find_tensor(m, "shared", &si) &&
          ir_find_tensor(m, "x", &xi));
    CHECK(m->nodes[ai].in[0] == xi && m->nodes[ai].in[1] == si && m->nodes[yi].in[0] == m->nodes[ai].out[0]);
    CHECK(m->n_outputs == 1 && m->outputs[0] == m->nodes[yi].out[0]);
    CHECK(m->tensors[si].constant == 0 && m->constants[0].size == 16 &&
          ((const float *)(void *)m->constants[0].data)[3] == 4.0f);
    CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    uint32_t removed = 99;
    CHECK(pass_remove_dead(m, &removed, &err) == SYMC_OK && removed == 0);
    symc_module_destroy(m);
}

/* fold-batch-norm leaves the batch norm an identity nobody reads: the pipeline removes it */
static void test_folded_batch_norm(void) {
    symc_error err;
    symc_module *m = symc_module_create("dce_bn", &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4,
                   (symc_dim[]){symc_dim_const(m, 1), symc_dim_const(m, 2), symc_dim_const(m, 4), symc_dim_const(m, 4)},
                   &x, &err);
    float w[3 * 2] = {1, 2, 3, 4, 5, 6};
    symc_tensor wt;
    CHECK(symc_add_constant(m, "w", SYMC_F32, 4, (int64_t[]){3, 2, 1, 1}, w, sizeof w, &wt, &err) == SYMC_OK);
    symc_tensor cv = node(m, "conv2d", "conv", (symc_tensor[]){x, wt}, 2);
    symc_tensor bn_in[5] = {cv, constant(m, "g", 3, 1.0f), constant(m, "be", 3, 0.0f), constant(m, "mu", 3, 0.5f),
                            constant(m, "var", 3, 2.0f)};
    symc_attr eps = symc_attr_float("epsilon", 1e-3);
    symc_tensor bn, y;
    CHECK(symc_add_node(m, "batch_norm", "bn", bn_in, 5, &eps, 1, &bn, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &bn, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    symc_mark_output(m, y, &err);
    CHECK_MSG(pass_run_passes(m, NULL, NULL, "dce", &err) == SYMC_OK, "%s", err.msg);
    uint32_t bi = 0;
    CHECK(ir_find_node(m, "bn", &bi) && m->nodes[bi].op == IR_OP_IDENTITY); /* folded, unread */
    CHECK_MSG(pass_run_passes(m, NULL, "dce", NULL, &err) == SYMC_OK, "%s", err.msg);
    /* the fold wrote the new bias into be's constant; g, mu and var went with the identity */
    CHECK(!has_node(m, "bn") && !has_node(m, "g") && !has_node(m, "mu") && !has_node(m, "var"));
    CHECK(has_node(m, "conv") && has_node(m, "act"));
    CHECK(m->n_constants == 2 && has_node(m, "be")); /* W' and the new bias */
    CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
}

/* a copy's lent constants are dropped without freeing their data (the original owns it) */
static void test_lent(void) {
    symc_error err;
    symc_module *m = symc_module_create("dce_lent", &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 1, (symc_dim[]){symc_dim_const(m, 4)}, &x, &err);
    symc_tensor c1 = constant(m, "c1", 4, 1.0f), c2 = constant(m, "c2", 4, 2.0f);
    symc_tensor y = node(m, "add", "y", (symc_tensor[]){x, c2}, 2);
    node(m, "add", "dead", (symc_tensor[]){x, c1}, 2);
    symc_mark_output(m, y, &err);
    ir_module *copy = NULL;
    CHECK_MSG(ir_module_copy(m, &copy, &err) == SYMC_OK, "%s", err.msg);
    uint32_t removed = 0;
    CHECK(copy && pass_remove_dead(copy, &removed, &err) == SYMC_OK && removed == 2); /* dead and c1 */
    CHECK(copy && copy->n_constants == 1 && copy->n_lent == 1 && copy->constants[0].data == m->constants[1].data);
    ir_module_free(copy); /* frees no lent data: m's stay valid (ASan would see a double free) */
    CHECK(((const float *)(void *)m->constants[0].data)[0] == 1.0f);
    symc_module_destroy(m);
}

int main(void) {
    test_chains();
    test_folded_batch_norm();
    test_lent();
    return check_report("test_dce");
}
