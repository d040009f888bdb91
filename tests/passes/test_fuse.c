/* The fuse pass (passes/fuse.c) and the fusion plan's check (ir/fuse_plan.c),
 * on the CPU, with rules of a made-up target (no codegen linked): f32
 * matmuls are library calls taking transposes, a bias, relu and a residual;
 * softmax and layer_norm are row kernels that take inlined inputs,
 * epilogues and each other as "row first"; fused attention (round 2,
 * passes/fuse_attention.c) is the real match, given a head dim limit, and
 * its match is stored in the plan. Each case runs the pipeline with the rules,
 * checks the printed groups (what --dump-after=fuse shows), and checks that
 * the pipeline without rules leaves no plan. Then plans are corrupted one
 * way at a time and ir_verify must refuse each with a message naming the
 * node and the broken rule. */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "tests/check.h"
#include "tests/qkv_split.h"
#include "tests/test_node.h"
#include "tests/test_gqa.h"

/* ---- a made-up target -------------------------------------------------------------------- */
static int t_library(ir_module *m, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    return n->op == IR_OP_MATMUL && m->tensors[n->in[0]].dtype == SYMC_F32;
}
static int t_has_bias(ir_module *m, uint32_t node) {
    (void)m, (void)node;
    return 0;
}
static int t_takes(ir_module *m, uint32_t lib, uint32_t k, ir_fuse_role role) {
    (void)lib;
    ir_op op = m->nodes[k].op;
    return role == IR_FUSE_TRANSPOSE ? op == IR_OP_TRANSPOSE : role == IR_FUSE_ACTIVATION ? op == IR_OP_RELU : 1;
}
static unsigned t_row_kernel(ir_module *m, uint32_t node) {
    ir_op op = m->nodes[node].op;
    return op == IR_OP_SOFTMAX || op == IR_OP_LAYER_NORM ? PASS_ROW_INPUT | PASS_ROW_EPILOGUE : 0;
}
static int t_row_chain(ir_module *m, uint32_t first, uint32_t second) {
    return m->nodes[first].op != m->nodes[second].op;
}
static const pass_fuse_rules rules = {
    .name = "test",
    .library = t_library,
    .library_has_bias = t_has_bias,
    .library_takes = t_takes,
    .row_kernel = t_row_kernel,
    .row_chain = t_row_chain,
    .max_group_nodes = 256,
    .row_input_leaves = 4,
    .epilogue_leaves = 4,
};

/* ---- building ------------------------------------------------------------------------------ */
static symc_dim module_B; /* the last module's B */

static symc_module *module(const char *name, symc_tensor *x, symc_tensor *y, symc_tensor *vec) {
    symc_error err;
    symc_module *m = symc_module_create(name, &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    module_B = B;
    symc_dim d[2] = {B, symc_dim_const(m, 16)};
    symc_add_input(m, "x", SYMC_F32, 2, d, x, &err);
    symc_add_input(m, "y", SYMC_F32, 2, d, y, &err);
    symc_add_input(m, "vec", SYMC_F32, 1, d + 1, vec, &err);
    return m;
}

static uint32_t node_index(symc_module *m, const char *name) {
    uint32_t i = IR_NONE;
    CHECK_MSG(ir_find_node(m, name, &i), "no node '%s'", name);
    return i;
}

/* runs the pipeline with the made-up rules; the printed module (malloc'd) */
static char *plan(symc_module *m, const pass_fuse_rules *r) {
    symc_error err;
    pass_options o = {.fuse = r};
    CHECK_MSG(pass_run_pipeline(m, &o, &err) == SYMC_OK, "%s", err.msg);
    return ir_print_to_string(m);
}

/* plan() with the made-up rules and fused attention up to head dim max_head (0: none) */
static char *plan_heads(symc_module *m, int64_t max_head) {
    pass_fuse_rules r = rules;
    r.attention_max_head = max_head;
    return plan(m, &r);
}

/* the pipeline without rules leaves no plan, and the print has no groups */
static void check_no_rules(symc_module *m) {
    char *text = plan(m, NULL);
    CHECK(!m->fuse && text && !strstr(text, "fused groups"));
    free(text);
}

/* ---- plans ------------------------------------------------------------------------------------- */
/* add -> mul -> relu -> exp is one kernel rooted at exp; a dead node is gone */
static void test_chain(void) {
    symc_tensor x, y, v;
    symc_module *m = module("chain", &x, &y, &v);
    symc_tensor a = test_node(m, "add", "a", (symc_tensor[]){x, y}, 2, NULL, 0);
    symc_tensor b = test_node(m, "mul", "b", (symc_tensor[]){a, x}, 2, NULL, 0);
    symc_tensor r = test_node(m, "relu", "r", &b, 1, NULL, 0);
    symc_tensor z = test_node(m, "exp", "z", &r, 1, NULL, 0);
    test_node(m, "neg", "unused", &x, 1, NULL, 0);
    symc_error err;
    symc_mark_output(m, z, &err);
    char *text = plan(m, &rules);
    /* the pipeline's dce row removed the dead node before fuse */
    CHECK_CONTAINS(text, "fused groups (test):\n  z (exp): kernel with a (inlined), b (inlined), r (inlined)\n");
    CHECK(!strstr(text, "unused"));
    CHECK(m->fuse[node_index(m, "a")].group == node_index(m, "z"));
    free(text);
    check_no_rules(m);
    symc_module_destroy(m);
}

/* matmul(xᵀᵀ, w) + vec -> relu: a library call with its transpose, bias and
 * activation; with the matmul's result also a graph output, none of them */
static void test_library(int shared) {
    symc_tensor x, y, v;
    symc_module *m = module("lib", &x, &y, &v);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    symc_tensor xt = test_node(m, "transpose", "xt", &x, 1, &pa, 1);                   /* [16, B] */
    symc_tensor y0 = test_node(m, "transpose", "y0", &y, 1, &pa, 1);                   /* [16, B] */
    symc_tensor w = test_node(m, "transpose", "w", &y0, 1, &pa, 1);                    /* [B, 16] */
    symc_tensor mm = test_node(m, "matmul", "mm", (symc_tensor[]){xt, w}, 2, NULL, 0); /* [16, 16] */
    symc_tensor a = test_node(m, "add", "a", (symc_tensor[]){mm, v}, 2, NULL, 0);
    symc_tensor r = test_node(m, "relu", "r", &a, 1, NULL, 0);
    symc_error err;
    symc_mark_output(m, r, &err);
    if (shared) symc_mark_output(m, mm, &err);
    char *text = plan(m, &rules);
    if (!shared) {
        CHECK_CONTAINS(text,
                       "  mm (matmul): library call with xt (transpose), w (transpose), a (bias), r (activation)\n");
    } else {
        CHECK_CONTAINS(text, "  mm (matmul): library call with xt (transpose), w (transpose)\n");
        CHECK_CONTAINS(text, "  r (relu): kernel with a (inlined)\n");
        /* a bias that does not read the call's result (it is also a graph output) */
        m->fuse[node_index(m, "a")] = (ir_fuse){IR_FUSE_BIAS, node_index(m, "mm")};
        CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
        CHECK_CONTAINS(err.msg, "node 'a' (add), bias of 'mm': it does not read the library call's result");
    }
    CHECK(m->fuse[node_index(m, "y0")].role == IR_FUSE_STEP);
    free(text);
    symc_module_destroy(m);
}

/* matmul + add of a tensor of the result's shape: the residual (C) */
static void test_residual(void) {
    symc_tensor x, y, v;
    symc_module *m = module("res", &x, &y, &v);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    symc_tensor w = test_node(m, "transpose", "w", &y, 1, &pa, 1);
    symc_tensor sq = test_node(m, "matmul", "sq", (symc_tensor[]){x, w}, 2, NULL, 0); /* [B, B] */
    symc_tensor r0 = test_node(m, "matmul", "r0", (symc_tensor[]){x, w}, 2, NULL, 0);
    symc_tensor s = test_node(m, "add", "s", (symc_tensor[]){r0, sq}, 2, NULL, 0);
    symc_error err;
    symc_mark_output(m, s, &err);
    char *text = plan(m, &rules);
    CHECK_CONTAINS(text, "  r0 (matmul): library call with s (residual)\n");
    CHECK_CONTAINS(text, "  sq (matmul): library call\n");
    free(text);
    symc_module_destroy(m);
}

/* matmul, a reshape of its result alone, and an add of a tensor of the reshaped shape (GPT-2's
 * Conv1D: Gemm on [B*S, N], Reshape to [B, S, N], the residual add): the reshape is the call's
 * view and the add its residual (the call writes the add's result). With the reshape's result
 * also a graph output, neither; a plan claiming that view anyway is refused. */
static void test_residual_view(int shared) {
    symc_tensor x, y, v;
    symc_module *m = module("resview", &x, &y, &v);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    symc_dim B = module_B, shape[3] = {symc_dim_const(m, 1), B, B};
    symc_attr rs = symc_attr_dims("shape", shape, 3);
    symc_tensor w = test_node(m, "transpose", "w", &y, 1, &pa, 1);
    symc_tensor sq = test_node(m, "matmul", "sq", (symc_tensor[]){x, w}, 2, NULL, 0); /* [B, B] */
    symc_tensor sqr = test_node(m, "reshape", "sqr", &sq, 1, &rs, 1);                 /* [1, B, B]: the residual */
    symc_tensor r0 = test_node(m, "matmul", "r0", (symc_tensor[]){x, w}, 2, NULL, 0);
    symc_tensor vw = test_node(m, "reshape", "vw", &r0, 1, &rs, 1);
    symc_tensor s = test_node(m, "add", "s", (symc_tensor[]){vw, sqr}, 2, NULL, 0);
    symc_error err;
    symc_mark_output(m, s, &err);
    if (shared) symc_mark_output(m, vw, &err);
    char *text = plan(m, &rules);
    if (!shared) {
        CHECK_CONTAINS(text, "  r0 (matmul): library call with vw (view), s (residual)\n");
        CHECK(m->fuse[node_index(m, "sqr")].role == IR_FUSE_STEP);
    } else {
        CHECK_CONTAINS(text, "  r0 (matmul): library call\n");
        m->fuse[node_index(m, "vw")] = (ir_fuse){IR_FUSE_VIEW, node_index(m, "r0")};
        CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
        CHECK_CONTAINS(err.msg,
                       "node 'vw' (reshape), view of 'r0': a view must reshape the result alone and be read "
                       "by the call's residual add or activation");
    }
    free(text);
    symc_module_destroy(m);
}

/* matmul + bias, a reshape of the result alone, then an activation (GPT-2's Conv1D c_fc: Gemm on
 * [B*S, N] with its bias, Reshape to [B, S, N], the GELU): the reshape is the call's view and the
 * activation its epilogue (the call writes the activation's result). Without the bias the view
 * and the activation stay out (the libraries' activations follow a bias). */
static void test_view_activation(int bias) {
    symc_tensor x, y, v;
    symc_module *m = module("viewact", &x, &y, &v);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    symc_dim shape[3] = {symc_dim_const(m, 1), symc_dim_const(m, 16), symc_dim_const(m, 16)};
    symc_attr rs = symc_attr_dims("shape", shape, 3);
    symc_tensor xt = test_node(m, "transpose", "xt", &x, 1, &pa, 1);
    symc_tensor mm = test_node(m, "matmul", "mm", (symc_tensor[]){xt, y}, 2, NULL, 0);
    if (bias) mm = test_node(m, "add", "a", (symc_tensor[]){mm, v}, 2, NULL, 0);
    symc_tensor vw = test_node(m, "reshape", "vw", &mm, 1, &rs, 1);
    symc_tensor r = test_node(m, "relu", "r", &vw, 1, NULL, 0);
    symc_error err;
    symc_mark_output(m, r, &err);
    char *text = plan(m, &rules);
    if (bias)
        CHECK_CONTAINS(text, "  mm (matmul): library call with xt (transpose), a (bias), vw (view), r (activation)\n");
    else CHECK_CONTAINS(text, "  mm (matmul): library call with xt (transpose)\n");
    CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    free(text);
    symc_module_destroy(m);
}

/* matmul + bias + residual + relu: one library call computing act(op + residual + bias);
 * with the relu before the residual add, the add stays out (a plan claiming it is refused) */
static void test_bias_residual_activation(int relu_first) {
    symc_tensor x, y, v;
    symc_module *m = module("bra", &x, &y, &v);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    symc_tensor yt = test_node(m, "transpose", "yt", &y, 1, &pa, 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){yt, x}, 2, NULL, 0); /* [16, 16]: the residual */
    symc_tensor xt = test_node(m, "transpose", "xt", &x, 1, &pa, 1);
    symc_tensor mm = test_node(m, "matmul", "mm", (symc_tensor[]){xt, y}, 2, NULL, 0); /* [16, 16] */
    symc_tensor a = test_node(m, "add", "a", (symc_tensor[]){mm, v}, 2, NULL, 0);
    symc_tensor out;
    if (!relu_first) {
        symc_tensor s = test_node(m, "add", "s", (symc_tensor[]){a, o}, 2, NULL, 0);
        out = test_node(m, "relu", "r", &s, 1, NULL, 0);
    } else {
        symc_tensor r = test_node(m, "relu", "r", &a, 1, NULL, 0);
        out = test_node(m, "add", "s", (symc_tensor[]){o, r}, 2, NULL, 0);
    }
    symc_error err;
    symc_mark_output(m, out, &err);
    char *text = plan(m, &rules);
    if (!relu_first) {
        CHECK_CONTAINS(text,
                       "  mm (matmul): library call with xt (transpose), a (bias), s (residual), r (activation)\n");
    } else {
        CHECK_CONTAINS(text, "  mm (matmul): library call with xt (transpose), a (bias), r (activation)\n");
        m->fuse[node_index(m, "s")] = (ir_fuse){IR_FUSE_RESIDUAL, node_index(m, "mm")};
        CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
        CHECK_CONTAINS(err.msg,
                       "node 's' (add), residual of 'mm': the library call's epilogue must be bias, then a "
                       "view and its residual, then an activation");
    }
    free(text);
    symc_module_destroy(m);
}

/* softmax(x * y + vec) then exp(.) + y: the input group inlined into the
 * row kernel, the exp and add its epilogue; softmax(layer_norm(x)) computes
 * the norm first. With x * y also a graph output, only the add is inlined. */
static symc_module *rows_module(int shared) {
    symc_tensor x, y, v;
    symc_module *m = module("rows", &x, &y, &v);
    symc_attr ax = symc_attr_int("axis", -1), lna[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 1e-5)};
    symc_tensor s = test_node(m, "mul", "s", (symc_tensor[]){x, y}, 2, NULL, 0);
    symc_tensor t = test_node(m, "add", "t", (symc_tensor[]){s, v}, 2, NULL, 0);
    symc_tensor p = test_node(m, "softmax", "p", &t, 1, &ax, 1);
    symc_tensor e = test_node(m, "exp", "e", &p, 1, NULL, 0);
    symc_tensor f = test_node(m, "add", "f", (symc_tensor[]){e, y}, 2, NULL, 0);
    symc_tensor q = test_node(m, "layer_norm", "q", &x, 1, lna, 2);
    symc_tensor n = test_node(m, "softmax", "n", &q, 1, &ax, 1);
    symc_error err;
    symc_mark_output(m, f, &err);
    symc_mark_output(m, n, &err);
    if (shared) symc_mark_output(m, s, &err);
    return m;
}

static void test_rows(int shared) {
    symc_module *m = rows_module(shared);
    char *text = plan(m, &rules);
    if (!shared) {
        CHECK_CONTAINS(text, "  p (softmax): kernel with s (inlined), t (inlined), e (inlined), f (epilogue)\n");
    } else {
        CHECK_CONTAINS(text, "  p (softmax): kernel with t (inlined), e (inlined), f (epilogue)\n");
        CHECK(m->fuse[node_index(m, "s")].role == IR_FUSE_STEP);
    }
    CHECK_CONTAINS(text, "  n (softmax): kernel with q (row first)\n");
    CHECK(m->fuse[node_index(m, "e")].group == node_index(m, "p"));
    free(text);
    check_no_rules(m);
    symc_module_destroy(m);
}

/* an input group with more leaves than the rules allow stays a kernel */
static void test_row_limit(void) {
    symc_tensor x, y, v;
    symc_module *m = module("limit", &x, &y, &v);
    symc_attr ax = symc_attr_int("axis", -1);
    symc_tensor a = test_node(m, "add", "a", (symc_tensor[]){x, y}, 2, NULL, 0);
    symc_tensor b = test_node(m, "add", "b", (symc_tensor[]){a, v}, 2, NULL, 0);
    symc_tensor c = test_node(m, "neg", "c", &x, 1, NULL, 0); /* a node made earlier: a leaf of b's group */
    symc_tensor d = test_node(m, "sub", "d", (symc_tensor[]){b, c}, 2, NULL, 0);
    symc_tensor w = test_node(m, "exp", "w", &y, 1, NULL, 0);
    symc_tensor e = test_node(m, "mul", "e", (symc_tensor[]){d, w}, 2, NULL, 0); /* leaves x, y, v, c, w: 5 > 4 */
    symc_tensor p = test_node(m, "softmax", "p", &e, 1, &ax, 1);
    symc_error err;
    symc_mark_output(m, p, &err);
    symc_mark_output(m, c, &err);
    symc_mark_output(m, w, &err);
    char *text = plan(m, &rules);
    CHECK_CONTAINS(text, "  e (mul): kernel with a (inlined), b (inlined), d (inlined)\n");
    CHECK(m->fuse[node_index(m, "p")].role == IR_FUSE_STEP && m->fuse[node_index(m, "e")].role == IR_FUSE_STEP);
    free(text);
    symc_module_destroy(m);
}

/* x, y: [B, 16] and mk: [1, B], f32; *B the symbol */
static symc_module *att_module(const char *name, symc_tensor *x, symc_tensor *y, symc_tensor *mk, symc_dim *B) {
    symc_error err;
    symc_module *m = symc_module_create(name, &err);
    symc_declare_symbol(m, "B", 1, 4, 64, 1, B, &err);
    symc_dim d[2] = {*B, symc_dim_const(m, 16)}, md[2] = {symc_dim_const(m, 1), *B};
    symc_add_input(m, "x", SYMC_F32, 2, d, x, &err);
    symc_add_input(m, "y", SYMC_F32, 2, d, y, &err);
    symc_add_input(m, "mk", SYMC_F32, 2, md, mk, &err);
    return m;
}

/* matmul(softmax(matmul(x, transpose(y))), y): with an attention limit of at least the head
 * dim (16) the attention claims the score matmul, the transpose and the softmax, and its match
 * is in the plan; with none, or a smaller one, the matmuls are library calls and the softmax a
 * kernel */
static void test_attention(int64_t max_head) {
    symc_tensor x, y, mk;
    symc_dim B;
    symc_module *m = att_module("att", &x, &y, &mk, &B);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2), ax = symc_attr_int("axis", -1);
    symc_tensor yt = test_node(m, "transpose", "yt", &y, 1, &pa, 1);
    symc_tensor s = test_node(m, "matmul", "s", (symc_tensor[]){x, yt}, 2, NULL, 0);
    symc_tensor p = test_node(m, "softmax", "p", &s, 1, &ax, 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, y}, 2, NULL, 0);
    symc_error err;
    symc_mark_output(m, o, &err);
    char *text = plan_heads(m, max_head);
    if (max_head >= 16) {
        CHECK_CONTAINS(text, "  o (matmul): attention with yt (claimed), s (claimed), p (claimed)\n");
        const ir_attention *a = ir_fuse_attention_of(m, node_index(m, "o"));
        CHECK(m->n_attention == 1 && a && a->mm1 == node_index(m, "s") && a->softmax == node_index(m, "p"));
        CHECK(a && a->d == 16 && a->dv == 16 && a->n_ops == 0 && a->n_covered == 3);
        CHECK(a && a->q.t == x && a->k.t == y && a->v.t == y && a->o.t == o);
        CHECK(ir_verify(m, &err) == SYMC_OK);
        /* the match is what the check holds the claimed members to */
        m->attention[0].n_covered = 2;
        CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
        CHECK_CONTAINS(err.msg,
                       "node 'o' (matmul), attention: the nodes its fused attention computes are not its "
                       "claimed members");
    } else {
        CHECK_CONTAINS(text, "  s (matmul): library call with yt (transpose)\n");
        CHECK(!m->n_attention && m->fuse[node_index(m, "p")].role == IR_FUSE_STEP);
    }
    free(text);
    symc_module_destroy(m);
}

/* GPT-2's fused projection (tests/qkv_split.h): q, k and v split from one [B, S, 96] tensor along its
 * last axis, each reshaped to [B, S, 2, 16] and transposed to heads. The attention reads them in the split's input
 * at offsets 0, 32 and 64 (row stride 96) and claims the reshapes and the split. When the v part
 * is also a graph output (`shared`), v is read from its reshape and the split stays a step. */
static void test_attention_split(int shared) {
    symc_error err;
    symc_tensor x, parts[3], r[3], o;
    symc_module *m = qkv_split_module(SYMC_F32, &x, parts, r, &o);
    if (shared) symc_mark_output(m, parts[2], &err);
    char *text = plan_heads(m, 64);
    const ir_attention *a = ir_fuse_attention_of(m, node_index(m, "o"));
    CHECK_MSG(a, "%s", text ? text : "");
    if (a) {
        int64_t v1, v2, v3;
        CHECK(a->q.t == x && a->q.off == 0 && a->k.t == x && a->k.off == 32);
        /* Q as [B, 2, S, 16] over x: heads 16 apart, rows 96 apart, columns contiguous */
        CHECK(sym_is_const(m->syms, a->q.strides[1], &v1) && v1 == 16 && sym_is_const(m->syms, a->q.strides[2], &v2) &&
              v2 == 96 && sym_is_const(m->syms, a->q.strides[3], &v3) && v3 == 1);
        int split = 0, reshapes = 0;
        for (uint32_t i = 0; i < a->n_covered; i++) {
            split += a->covered[i] == node_index(m, "split");
            reshapes += a->covered[i] == node_index(m, "qr") || a->covered[i] == node_index(m, "kr") ||
                a->covered[i] == node_index(m, "vr");
        }
        if (shared) {
            CHECK(a->v.t == r[2] && a->v.off == 0 && !split && reshapes == 2);
            CHECK(m->fuse[node_index(m, "split")].role == IR_FUSE_STEP);
        } else CHECK(a->v.t == x && a->v.off == 64 && split == 1 && reshapes == 3);
        CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    }
    free(text);
    symc_module_destroy(m);
}

/* The attention's kernel reads the mask piece `leaf` behind the where, expand and and that make
 * the mask it adds (transformers' where(and(causal, padding), 0, min) over pieces shared by
 * every row: read once per key tile): leaf's one reader in the graph, the and, must not compute
 * it inside its own kernel, or nothing would store what the attention reads. Without the
 * attention, it would. */
static void test_attention_reads(int with_attention) {
    symc_tensor x, y, mk;
    symc_dim B;
    symc_module *m = att_module("att_reads", &x, &y, &mk, &B);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2), ax = symc_attr_int("axis", -1);
    symc_attr ea = symc_attr_dims("shape", (symc_dim[]){B, B}, 2);
    symc_attr ta = symc_attr_dtype("to", SYMC_BOOL);
    symc_error err;
    symc_tensor zero = SYMC_TENSOR_NONE, low = SYMC_TENSOR_NONE;
    float zv = 0.f, lv = -1e9f;
    CHECK(symc_add_constant(m, "zero", SYMC_F32, 0, NULL, &zv, 4, &zero, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "low", SYMC_F32, 0, NULL, &lv, 4, &low, &err) == SYMC_OK);
    symc_tensor mb = test_node(m, "cast", "mb", &mk, 1, &ta, 1);
    symc_tensor leaf = test_node(m, "not", "leaf", &mb, 1, NULL, 0);
    symc_tensor c = test_node(m, "and", "c", (symc_tensor[]){leaf, mb}, 2, NULL, 0);
    symc_tensor ce = test_node(m, "expand", "ce", &c, 1, &ea, 1);
    symc_tensor me = test_node(m, "where", "me", (symc_tensor[]){ce, zero, low}, 3, NULL, 0);
    symc_tensor yt = test_node(m, "transpose", "yt", &y, 1, &pa, 1);
    symc_tensor s = test_node(m, "matmul", "s", (symc_tensor[]){x, yt}, 2, NULL, 0);
    symc_tensor sm = test_node(m, "add", "sm", (symc_tensor[]){s, me}, 2, NULL, 0);
    symc_tensor p = test_node(m, "softmax", "p", &sm, 1, &ax, 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, y}, 2, NULL, 0);
    symc_mark_output(m, o, &err);
    char *text = plan_heads(m, with_attention ? 128 : 0);
    if (with_attention) {
        CHECK_CONTAINS(text, "  o (matmul): attention with");
        const ir_attention *a = ir_fuse_attention_of(m, node_index(m, "o"));
        CHECK(a && a->n_ops == 1 && a->ops[0].kind == IR_ATT_ADD_SEL && a->ops[0].n_leaf == 2);
        CHECK(a && a->ops[0].leaf[0].v.t == leaf && a->ops[0].scalar == zero && a->ops[0].scalar2 == low);
        CHECK(!strstr(text, "leaf (inlined)"));
        CHECK(m->fuse[node_index(m, "leaf")].role == IR_FUSE_STEP); /* its own kernel, which stores it */
    } else {
        CHECK_CONTAINS(text, "  c (and): kernel with leaf (inlined)\n");
        CHECK(m->fuse[node_index(m, "leaf")].role == IR_FUSE_INLINED);
    }
    free(text);
    symc_module_destroy(m);
}

/* Swin's shifted-window mask: scores [4B, 2, 8, 8] viewed as [B, 4, 2, 8, 8], a mask added, viewed
 * back. A mask [1, 4, 1, 8, 8] (one per window) is read by the attention at window b0 mod 4 over
 * its own strides, and the two views are its claimed members; a mask [B, 4, 1, 8, 8] (one per
 * image) is no window mask and the attention is not fused. */
static void test_attention_window(int per_image) {
    symc_error err;
    symc_module *m = symc_module_create(per_image ? "att_window_image" : "att_window", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim one = symc_dim_const(m, 1), four = symc_dim_const(m, 4), two = symc_dim_const(m, 2),
             eight = symc_dim_const(m, 8), N = symc_dim_mul(m, B, four);
    symc_dim qd[4] = {N, two, eight, symc_dim_const(m, 16)}, md[5] = {per_image ? B : one, four, one, eight, eight};
    symc_dim s5[5] = {B, four, two, eight, eight}, s4[4] = {N, two, eight, eight};
    symc_tensor q, k, v, mk;
    symc_add_input(m, "q", SYMC_F32, 4, qd, &q, &err);
    symc_add_input(m, "k", SYMC_F32, 4, qd, &k, &err);
    symc_add_input(m, "v", SYMC_F32, 4, qd, &v, &err);
    symc_add_input(m, "mk", SYMC_F32, 5, md, &mk, &err);
    int64_t perm[4] = {0, 1, 3, 2};
    symc_attr pa = symc_attr_ints("perm", perm, 4), ax = symc_attr_int("axis", -1);
    symc_attr r5 = symc_attr_dims("shape", s5, 5), r4 = symc_attr_dims("shape", s4, 4);
    symc_tensor kt = test_node(m, "transpose", "kt", &k, 1, &pa, 1);
    symc_tensor s = test_node(m, "matmul", "s", (symc_tensor[]){q, kt}, 2, NULL, 0);
    symc_tensor sw = test_node(m, "reshape", "sw", &s, 1, &r5, 1);
    symc_tensor sm = test_node(m, "add", "sm", (symc_tensor[]){sw, mk}, 2, NULL, 0);
    symc_tensor sb = test_node(m, "reshape", "sb", &sm, 1, &r4, 1);
    symc_tensor p = test_node(m, "softmax", "p", &sb, 1, &ax, 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, v}, 2, NULL, 0);
    symc_mark_output(m, o, &err);
    char *text = plan_heads(m, 64);
    const ir_attention *a = ir_fuse_attention_of(m, node_index(m, "o"));
    if (per_image) {
        CHECK_MSG(!a && m->fuse[node_index(m, "p")].role == IR_FUSE_STEP, "%s", text ? text : "");
    } else {
        CHECK_MSG(a, "%s", text ? text : "");
    }
    if (a && !per_image) {
        int64_t w, s0, s1, s2, s3;
        const ir_att_op *op = &a->ops[0];
        CHECK(a->n_ops == 1 && op->kind == IR_ATT_ADD_MASK && op->windowed && op->node == node_index(m, "sm"));
        CHECK(sym_is_const(m->syms, op->windows, &w) && w == 4 && op->mask.t == mk);
        CHECK(sym_is_const(m->syms, op->mask.strides[0], &s0) && s0 == 64 &&
              sym_is_const(m->syms, op->mask.strides[1], &s1) && s1 == 0 &&
              sym_is_const(m->syms, op->mask.strides[2], &s2) && s2 == 8 &&
              sym_is_const(m->syms, op->mask.strides[3], &s3) && s3 == 1);
        int views = 0;
        for (uint32_t i = 0; i < a->n_covered; i++)
            views += a->covered[i] == node_index(m, "sw") || a->covered[i] == node_index(m, "sb");
        CHECK(views == 2 && m->fuse[node_index(m, "sw")].role == IR_FUSE_CLAIMED);
        CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    }
    free(text);
    symc_module_destroy(m);
}

/* grouped-query attention (transformers' repeat_kv): K and V [B, 2, S, 16] unsqueezed to
 * [B, 2, 1, S, 16], expanded to [B, 2, 4, S, 16] and reshaped to [B, 8, S, 16] are read before the
 * expand (group 4, strides of the kv tensor), the unsqueeze, expand and reshape covered; with V's
 * expanded copy also a graph output, V is read in that copy (no group), K still grouped */
static void test_attention_group(int v_escapes) {
    symc_error err;
    test_gqa g = test_gqa_module(v_escapes ? "att_group_out" : "att_group", 32, 256, 16, v_escapes);
    symc_module *m = g.m;
    const symc_tensor k = g.k, ku = g.ku, vu = g.vu, vr = g.vr;
    char *text = plan_heads(m, 64);
    const ir_attention *a = ir_fuse_attention_of(m, node_index(m, "o"));
    CHECK_MSG(a, "%s", text ? text : "");
    if (a) {
        int64_t s1, s2, s3;
        /* K: [B, 8, S, 16] over k's storage, head b1 at kv head b1 / 4 (K's last two axes swapped back) */
        CHECK(a->k.group == 4 && a->k.t == ku);
        CHECK(sym_is_const(m->syms, a->k.strides[2], &s2) && s2 == 16 && sym_is_const(m->syms, a->k.strides[3], &s3) &&
              s3 == 1);
        CHECK(sym_prove_eq(m->syms, a->k.strides[1], sym_mul(m->syms, m->tensors[k].dims[2], sym_const(m->syms, 16))) ==
              SYM_TRUE);
        CHECK(sym_prove_eq(m->syms, a->k.strides[0], sym_mul(m->syms, a->k.strides[1], sym_const(m->syms, 2))) ==
              SYM_TRUE);
        int covered = 0;
        for (uint32_t i = 0; i < a->n_covered; i++)
            covered += a->covered[i] == node_index(m, "ke") || a->covered[i] == node_index(m, "kr") ||
                a->covered[i] == node_index(m, "ve") || a->covered[i] == node_index(m, "vr");
        if (v_escapes) {
            CHECK(a->v.group <= 1 && a->v.t == vr && covered == 2);
            CHECK(m->fuse[node_index(m, "ve")].role != IR_FUSE_CLAIMED);
        } else {
            CHECK(a->v.group == 4 && a->v.t == vu && covered == 4);
            CHECK(sym_is_const(m->syms, a->v.strides[2], &s2) && s2 == 16 &&
                  sym_is_const(m->syms, a->v.strides[3], &s3) && s3 == 1 &&
                  sym_is_const(m->syms, a->v.strides[1], &s1) == 0);
            CHECK(m->fuse[node_index(m, "ve")].role == IR_FUSE_CLAIMED);
        }
        CHECK(a->q.group <= 1 && a->o.group <= 1);
        CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    }
    free(text);
    symc_module_destroy(m);
}

/* ---- corrupted plans ------------------------------------------------------------------------------ */
static void set_role(symc_module *m, const char *node, ir_fuse_role r, const char *group) {
    m->fuse[node_index(m, node)] = (ir_fuse){(uint8_t)r, group ? node_index(m, group) : IR_NONE};
}

/* matmul + bias, then a * exp(a): the library call applies the group, which reads the biased
 * result twice, when the target runs it as a kernel of its own (library_epilogue); with the
 * biased result read outside the group too, or no such kernel, the group stays a kernel of its
 * own. A forged plan with the outside reader is refused. */
static int t_epilogue(ir_module *m, uint32_t lib) { return !strcmp(m->nodes[lib].name, "mm"); }

static void test_library_epilogue(int outside, int kernel) {
    symc_tensor x, y, v;
    symc_module *m = module("libepi", &x, &y, &v);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    symc_tensor xt = test_node(m, "transpose", "xt", &x, 1, &pa, 1);                  /* [16, B] */
    symc_tensor w = test_node(m, "matmul", "w", (symc_tensor[]){xt, y}, 2, NULL, 0);  /* [16, 16] */
    symc_tensor mm = test_node(m, "matmul", "mm", (symc_tensor[]){x, w}, 2, NULL, 0); /* [B, 16] */
    symc_tensor a = test_node(m, "add", "a", (symc_tensor[]){mm, v}, 2, NULL, 0);
    symc_error err;
    /* before the group's nodes: the last reader of a is in the group, the plan's check must look further */
    if (outside) symc_mark_output(m, test_node(m, "neg", "z", &a, 1, NULL, 0), &err);
    symc_tensor e = test_node(m, "exp", "e", &a, 1, NULL, 0);
    symc_tensor p = test_node(m, "mul", "p", (symc_tensor[]){a, e}, 2, NULL, 0);
    symc_mark_output(m, p, &err);
    pass_fuse_rules r = rules;
    if (kernel) r.library_epilogue = t_epilogue;
    char *text = plan(m, &r);
    CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    if (kernel && !outside) {
        CHECK_CONTAINS(text, "  mm (matmul): library call with a (bias), e (inlined), p (epilogue)\n");
        CHECK(m->fuse[node_index(m, "e")].group == node_index(m, "mm"));
        ir_uses u;
        CHECK(ir_uses_compute(m, &u, &err) == SYMC_OK);
        CHECK(ir_fuse_epilogue_of(m, &u, node_index(m, "mm")) == node_index(m, "p"));
        CHECK(ir_fuse_epilogue_of(m, &u, node_index(m, "w")) == IR_NONE);
        ir_uses_free(&u);
    } else {
        CHECK_CONTAINS(text, "  mm (matmul): library call with a (bias)\n");
        CHECK_CONTAINS(text, "  p (mul): kernel with e (inlined)\n");
    }
    if (outside && kernel) { /* the group forged onto the call while z reads its source */
        set_role(m, "p", IR_FUSE_EPILOGUE, "mm");
        set_role(m, "e", IR_FUSE_INLINED, "mm");
        CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
        CHECK_CONTAINS(err.msg,
                       "node 'a' (add), bias of 'mm': only the last node of a group may make a result read "
                       "outside it; node 'z' (neg), outside the group, reads its result 'a'");
    }
    free(text);
    symc_module_destroy(m);
}

/* each one way to break the plan of rows_module(0) (s, t, e inlined and f the
 * epilogue of p; q the row first of n) */
static void bad_root(symc_module *m) { set_role(m, "e", IR_FUSE_EPILOGUE, "s"); } /* s is inlined */
static void bad_kind(symc_module *m) { set_role(m, "f", IR_FUSE_BIAS, "p"); }     /* p is no library call */
static void bad_op(symc_module *m) { set_role(m, "q", IR_FUSE_INLINED, "n"); }    /* a norm inlined */
static void bad_dead(symc_module *m) { set_role(m, "s", IR_FUSE_DEAD, NULL); }    /* t reads it */
static void bad_live(symc_module *m) { set_role(m, "n", IR_FUSE_STEP, "q"), set_role(m, "q", IR_FUSE_STEP, "q"); }
static void bad_role(symc_module *m) { m->fuse[node_index(m, "e")].role = IR_FUSE_ROLE_COUNT; }
static void bad_count(symc_module *m) { m->n_fuse--; }
static void bad_first(symc_module *m) { set_role(m, "q", IR_FUSE_ROW_FIRST, "p"); } /* p reads t, not q */
static void bad_epilogue(symc_module *m) { set_role(m, "e", IR_FUSE_STEP, "e"); }   /* f no longer reached */
static void bad_reader(symc_module *m) { set_role(m, "e", IR_FUSE_INLINED, "n"); }  /* its reader f is in p's */
static void bad_private(symc_module *m) { set_role(m, "f", IR_FUSE_INLINED, "p"); } /* f is a graph output */

static void test_refused(void) {
    struct {
        void (*corrupt)(symc_module *m);
        const char *needle;
    } cases[] = {
        {bad_root, "fusion plan: node 'e' (exp), epilogue of 's': its root must have role 'step', not 'inlined'"},
        {bad_kind, "node 'f' (add), bias of 'p': its root must have role 'library call', not 'step'"},
        {bad_op, "node 'q' (layer_norm), inlined of 'n': its op cannot have this role"},
        {bad_dead, "node 's' (mul), dead: it is marked dead, but a graph output needs its result"},
        {bad_live, "node 'n' (softmax), step: a root must be its own group"},
        {bad_role, "fusion plan: node 'e' (exp) has role 14, which is not a role"},
        {bad_count, "fusion plan: 6 entries for 7 nodes"},
        {bad_first, "node 'q' (layer_norm), row first of 'p': its result must be the root's data input (in[0])"},
        {bad_epilogue, "node 'f' (add), epilogue of 'p': it is not reached from the root's result through inlined"},
        {bad_reader, "node 'e' (exp), inlined of 'n': its reader is in another group"},
        {bad_private,
         "node 'f' (add), inlined of 'p': an inlined node's result must have one reader and not be a "
         "graph output"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        symc_module *m = rows_module(0);
        free(plan(m, &rules));
        symc_error err;
        CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg); /* the pass's own plan holds */
        cases[i].corrupt(m);
        CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
        CHECK_CONTAINS(err.msg, cases[i].needle);
        symc_module_destroy(m);
    }
}

/* a member reading what is computed after its root: f, the epilogue of p,
 * reads w, made after p; the pass keeps f a kernel of its own, the forged
 * plan is refused. Adding a node drops the plan. */
static void test_refused_order(void) {
    symc_tensor x, y, v;
    symc_module *m = module("order", &x, &y, &v);
    symc_attr ax = symc_attr_int("axis", -1);
    symc_tensor p = test_node(m, "softmax", "p", &x, 1, &ax, 1);
    symc_tensor w = test_node(m, "neg", "w", &y, 1, NULL, 0);
    symc_tensor f = test_node(m, "mul", "f", (symc_tensor[]){p, w}, 2, NULL, 0);
    symc_error err;
    symc_mark_output(m, f, &err);
    symc_mark_output(m, w, &err);
    char *text = plan(m, &rules);
    CHECK_CONTAINS(text, "fused groups (test): none\n");
    free(text);
    set_role(m, "f", IR_FUSE_EPILOGUE, "p");
    CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg,
                   "node 'f' (mul), epilogue of 'p': a member must read only what is computed before its "
                   "root runs; it reads 'w', which node 'w' makes after the root's place");
    symc_tensor z = test_node(m, "exp", "z", &f, 1, NULL, 0);
    CHECK(!m->fuse && z != SYMC_TENSOR_NONE);
    symc_module_destroy(m);
}

/* a result leaving a group from a node other than its last: the softmax
 * an attention would compute, read by another node or a graph output (so
 * the pass does not claim it; the forged plan does) */
static void test_refused_escape(int read_outside) {
    symc_tensor x, y, v;
    symc_module *m = module("escape", &x, &y, &v);
    int64_t perm[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2), ax = symc_attr_int("axis", -1);
    symc_tensor p = test_node(m, "softmax", "p", &x, 1, &ax, 1);
    symc_tensor yt = test_node(m, "transpose", "yt", &y, 1, &pa, 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, yt}, 2, NULL, 0);
    symc_error err;
    symc_mark_output(m, o, &err);
    if (read_outside) symc_mark_output(m, test_node(m, "exp", "z", &p, 1, NULL, 0), &err);
    else symc_mark_output(m, p, &err);
    char *text = plan_heads(m, 128);
    CHECK_CONTAINS(text, "  o (matmul): library call with yt (transpose)\n");
    free(text);
    set_role(m, "o", IR_FUSE_ATTENTION, "o");
    set_role(m, "p", IR_FUSE_CLAIMED, "o");
    set_role(m, "yt", IR_FUSE_CLAIMED, "o");
    CHECK(ir_verify(m, &err) == SYMC_ERR_VERIFY);
    if (read_outside)
        CHECK_CONTAINS(err.msg,
                       "node 'p' (softmax), claimed of 'o': only the last node of a group may make a result "
                       "read outside it; node 'z' (exp), outside the group, reads its result 'p'");
    else
        CHECK_CONTAINS(err.msg,
                       "node 'p' (softmax), claimed of 'o': only the last node of a group may make a graph "
                       "output; it makes p");
    symc_module_destroy(m);
}

int main(void) {
    test_chain();
    test_library(0);
    test_library(1);
    test_library_epilogue(0, 1);
    test_library_epilogue(1, 1);
    test_library_epilogue(0, 0);
    test_residual();
    test_residual_view(0);
    test_residual_view(1);
    test_bias_residual_activation(0);
    test_bias_residual_activation(1);
    test_view_activation(1);
    test_view_activation(0);
    test_rows(0);
    test_rows(1);
    test_row_limit();
    test_attention(0);
    test_attention(8);
    test_attention(16);
    test_attention_split(0);
    test_attention_split(1);
    test_attention_reads(0);
    test_attention_reads(1);
    test_attention_window(0);
    test_attention_window(1);
    test_attention_group(0);
    test_attention_group(1);
    test_refused();
    test_refused_order();
    test_refused_escape(0);
    test_refused_escape(1);
    return check_report("test_fuse");
}
