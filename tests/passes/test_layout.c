/* The layout pass (passes/layout.c) on small modules built with the C API:
 *  - transpose to NHWC, relu, transpose back: the transpose sinks below the
 *    relu and cancels with its inverse, no live transpose is left;
 *  - an add of a broadcast constant [H, 1, C] behind a transpose to NHWC:
 *    the add runs on the NCHW data with the constant permuted to
 *    [1, C, H, 1], checked element by element;
 *  - a transpose read by a graph output too is not moved (it would not die,
 *    and moving it would make a second one);
 *  - a depthwise convolution read only by a transpose to NHWC, with rules
 *    that run it channels-last, reads its input through
 *    T_nchw(T_nhwc(x)).
 * Each module verifies after the pass (SSA, node order), and live
 * transposes are counted with the uses the fuse pass sees. */
#include <string.h>

#include "passes/passes.h"
#include "tests/check.h"

static const int64_t TO_NHWC[4] = {0, 2, 3, 1}, TO_NCHW[4] = {0, 3, 1, 2};

static symc_module *start(symc_dim *B, symc_tensor *x, int64_t c) {
    symc_error err;
    symc_module *m = symc_module_create("layout", &err);
    symc_declare_symbol(m, "B", 1, 2, 4, 1, B, &err);
    symc_add_input(m, "x", SYMC_F32, 4,
                   (symc_dim[]){*B, symc_dim_const(m, c), symc_dim_const(m, 5), symc_dim_const(m, 6)}, x, &err);
    return m;
}

static symc_tensor tr(symc_module *m, const char *name, symc_tensor x, const int64_t *perm) {
    symc_error err;
    symc_attr a = symc_attr_ints("perm", perm, 4);
    symc_tensor y = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_node(m, "transpose", name, &x, 1, &a, 1, &y, 1, &err) == SYMC_OK, "%s", err.msg);
    return y;
}

static symc_tensor op(symc_module *m, const char *kind, const char *name, symc_tensor *in, uint32_t n) {
    symc_error err;
    symc_tensor y = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_node(m, kind, name, in, n, NULL, 0, &y, 1, &err) == SYMC_OK, "%s", err.msg);
    return y;
}

/* shapes, the pass, the verifier; the number of live transposes after it */
static int run(symc_module *m, const pass_fuse_rules *rules) {
    symc_error err;
    CHECK_MSG(pass_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(pass_layout(m, rules, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    ir_uses u;
    if (ir_uses_compute(m, &u, &err) != SYMC_OK) return -1;
    int live = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) live += u.live[i] && m->nodes[i].op == IR_OP_TRANSPOSE;
    ir_uses_free(&u);
    return live;
}

static void test_cancel(void) {
    symc_error err;
    symc_dim B;
    symc_tensor x;
    symc_module *m = start(&B, &x, 4);
    symc_tensor t = tr(m, "t", x, TO_NHWC);
    symc_tensor r = op(m, "relu", "r", &t, 1);
    symc_tensor b = tr(m, "back", r, TO_NCHW);
    symc_tensor y = op(m, "neg", "y", &b, 1);
    symc_mark_output(m, y, &err);
    CHECK(run(m, NULL) == 0);
    uint32_t ri = 0, yi = 0;
    CHECK(ir_find_node(m, "r", &ri) && ir_find_node(m, "y", &yi));
    CHECK(m->nodes[ri].in[0] == x);                                          /* relu on the NCHW input */
    CHECK(m->nodes[yi].in[0] == m->nodes[ri].out[0]);                        /* neg reads relu's result directly */
    CHECK(m->tensors[m->nodes[ri].out[0]].dims[1] == m->tensors[x].dims[1]); /* NCHW shape */
    symc_module_destroy(m);
}

static void test_constant(void) {
    symc_error err;
    symc_dim B;
    symc_tensor x;
    symc_module *m = start(&B, &x, 4);
    float c[5 * 1 * 4];
    for (int i = 0; i < 20; i++) c[i] = (float)i + 0.5f;
    symc_tensor ct = SYMC_TENSOR_NONE;
    CHECK(symc_add_constant(m, "c", SYMC_F32, 3, (int64_t[]){5, 1, 4}, c, sizeof c, &ct, &err) == SYMC_OK);
    symc_tensor t = tr(m, "t", x, TO_NHWC); /* [B, 5, 6, 4] + [5, 1, 4] */
    symc_tensor a = op(m, "add", "a", (symc_tensor[]){t, ct}, 2);
    symc_mark_output(m, a, &err);
    CHECK(run(m, NULL) == 1); /* the result's transpose, to the graph output */
    uint32_t ai = 0;
    CHECK(ir_find_node(m, "a", &ai));
    const ir_node *n = &m->nodes[ai];
    CHECK(n->in[0] == x);
    const ir_tensor *p = &m->tensors[n->in[1]];
    int64_t d[4] = {0};
    for (int k = 0; k < 4 && p->rank == 4; k++) sym_is_const(m->syms, p->dims[k], &d[k]);
    CHECK(p->rank == 4 && d[0] == 1 && d[1] == 4 && d[2] == 5 && d[3] == 1);
    CHECK(p->constant != IR_NONE);
    if (p->constant != IR_NONE && p->rank == 4) {
        const float *v = (const float *)(const void *)m->constants[p->constant].data;
        for (int ch = 0; ch < 4; ch++)
            for (int h = 0; h < 5; h++)
                CHECK_MSG(v[ch * 5 + h] == c[h * 4 + ch], "c'[0][%d][%d][0] = %g, want %g", ch, h, v[ch * 5 + h],
                          c[h * 4 + ch]);
    }
    CHECK(m->tensors[a].producer != IR_NONE && m->nodes[m->tensors[a].producer].op == IR_OP_TRANSPOSE);
    symc_module_destroy(m);
}

static void test_kept(void) {
    symc_error err;
    symc_dim B;
    symc_tensor x;
    symc_module *m = start(&B, &x, 4);
    symc_tensor t = tr(m, "t", x, TO_NHWC);
    symc_tensor r = op(m, "relu", "r", &t, 1);
    symc_mark_output(m, t, &err);
    symc_mark_output(m, r, &err);
    CHECK(run(m, NULL) == 1);
    uint32_t ri = 0;
    CHECK(ir_find_node(m, "r", &ri) && m->nodes[ri].in[0] == t);
    symc_module_destroy(m);
}

static int all_convs(const ir_module *m, uint32_t node) { return m->nodes[node].op == IR_OP_CONV2D; }

static void test_conv(void) {
    symc_error err;
    symc_dim B;
    symc_tensor x;
    symc_module *m = start(&B, &x, 3);
    float w[3 * 9];
    for (int i = 0; i < 27; i++) w[i] = 0.1f * (float)i;
    symc_tensor wt = SYMC_TENSOR_NONE;
    CHECK(symc_add_constant(m, "w", SYMC_F32, 4, (int64_t[]){3, 1, 3, 3}, w, sizeof w, &wt, &err) == SYMC_OK);
    symc_attr at[2] = {symc_attr_ints("pads", (int64_t[]){1, 1, 1, 1}, 4), symc_attr_int("group", 3)};
    symc_tensor cv = SYMC_TENSOR_NONE;
    CHECK(symc_add_node(m, "conv2d", "dw", (symc_tensor[]){x, wt}, 2, at, 2, &cv, 1, &err) == SYMC_OK);
    symc_tensor t = tr(m, "t", cv, TO_NHWC);
    symc_mark_output(m, t, &err);
    pass_fuse_rules rules = {.name = "test", .conv_channels_last = all_convs};
    CHECK(run(m, &rules) == 3); /* x to NHWC, back to NCHW (the kernel's to read through), the result's */
    uint32_t ci = 0;
    CHECK(ir_find_node(m, "dw", &ci));
    uint32_t p = m->tensors[m->nodes[ci].in[0]].producer;
    CHECK(p != IR_NONE && m->nodes[p].op == IR_OP_TRANSPOSE &&
          !memcmp(ir_node_attr(&m->nodes[p], "perm")->ints, TO_NCHW, sizeof TO_NCHW));
    uint32_t q = p != IR_NONE ? m->tensors[m->nodes[p].in[0]].producer : IR_NONE;
    CHECK(q != IR_NONE && m->nodes[q].op == IR_OP_TRANSPOSE && m->nodes[q].in[0] == x &&
          !memcmp(ir_node_attr(&m->nodes[q], "perm")->ints, TO_NHWC, sizeof TO_NHWC));
    CHECK(q < p && p < ci); /* node order: topological again */
    symc_module_destroy(m);
    /* without the rule, the convolution is left alone */
    m = start(&B, &x, 3);
    CHECK(symc_add_constant(m, "w", SYMC_F32, 4, (int64_t[]){3, 1, 3, 3}, w, sizeof w, &wt, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "conv2d", "dw", (symc_tensor[]){x, wt}, 2, at, 2, &cv, 1, &err) == SYMC_OK);
    t = tr(m, "t", cv, TO_NHWC);
    symc_mark_output(m, t, &err);
    CHECK(run(m, NULL) == 1);
    CHECK(ir_find_node(m, "dw", &ci) && m->nodes[ci].in[0] == x);
    symc_module_destroy(m);
}

int main(void) {
    test_cancel();
    test_constant();
    test_kept();
    test_conv();
    return check_report("test_layout");
}
