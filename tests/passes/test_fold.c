/* Batch-norm folding (passes/fold.c): conv2d(x, W) -> batch_norm -> relu
 * becomes conv2d(x, W', b') -> relu with the batch norm an unread identity.
 * The folded weights and bias are checked element by element against the
 * formula evaluated here in double; folding is refused (the module left
 * alone) when the weights are read by another node too, and it keeps an
 * existing conv bias. The module verifies after the pass (the pipeline up to
 * its dead-node pass, which would remove the identity). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "tests/check.h"

#define C 3
#define CIN 2
#define K 3

static symc_tensor constant(symc_module *m, const char *name, int rank, const int64_t *dims, const float *data) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    symc_tensor t = SYMC_TENSOR_NONE;
    symc_error err;
    CHECK_MSG(symc_add_constant(m, name, SYMC_F32, rank, dims, data, (size_t)n * 4, &t, &err) == SYMC_OK, "%s",
              err.msg);
    return t;
}

static const float *data_of(symc_module *m, uint32_t t) {
    return m->tensors[t].constant == IR_NONE ? NULL : (const float *)(void *)m->constants[m->tensors[t].constant].data;
}

/* variant 0: no conv bias; 1: a conv bias; 2: W also read by another node (no fold) */
static void test_fold(int variant) {
    symc_error err;
    symc_module *m = symc_module_create("fold", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4,
                   (symc_dim[]){B, symc_dim_const(m, CIN), symc_dim_const(m, 8), symc_dim_const(m, 8)}, &x, &err);
    float w[C * CIN * K * K], bias[C], g[C], be[C], mu[C], var[C];
    for (int i = 0; i < C * CIN * K * K; i++) w[i] = (float)(0.1 * (i % 7) - 0.3);
    for (int o = 0; o < C; o++) {
        bias[o] = 0.5f * (float)o - 0.2f;
        g[o] = 1.0f + 0.25f * (float)o;
        be[o] = 0.1f * (float)o;
        mu[o] = -0.3f + 0.2f * (float)o;
        var[o] = 0.5f + (float)o;
    }
    symc_tensor wt = constant(m, "w", 4, (int64_t[]){C, CIN, K, K}, w);
    symc_tensor in[3] = {x, wt, SYMC_TENSOR_NONE};
    if (variant == 1) in[2] = constant(m, "cb", 1, (int64_t[]){C}, bias);
    symc_attr pads = symc_attr_ints("pads", (int64_t[]){1, 1, 1, 1}, 4);
    symc_tensor cv;
    CHECK(symc_add_node(m, "conv2d", "conv", in, variant == 1 ? 3 : 2, &pads, 1, &cv, 1, &err) == SYMC_OK);
    symc_tensor bn_in[5] = {cv, constant(m, "g", 1, (int64_t[]){C}, g), constant(m, "be", 1, (int64_t[]){C}, be),
                            constant(m, "mu", 1, (int64_t[]){C}, mu), constant(m, "var", 1, (int64_t[]){C}, var)};
    symc_attr eps = symc_attr_float("epsilon", 1e-3);
    symc_tensor bn, y;
    CHECK(symc_add_node(m, "batch_norm", "bn", bn_in, 5, &eps, 1, &bn, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &bn, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    symc_mark_output(m, y, &err);
    if (variant == 2) {
        symc_tensor wn;
        CHECK(symc_add_node(m, "neg", "wneg", &wt, 1, NULL, 0, &wn, 1, &err) == SYMC_OK);
        symc_mark_output(m, wn, &err);
    }
    /* the passes before dce, which would remove the folded (unread) batch norm: tests/passes/test_dce.c */
    CHECK_MSG(pass_run_passes(m, NULL, NULL, "dce", &err) == SYMC_OK, "%s", err.msg);
    uint32_t ci = 0, bi = 0, ai = 0;
    int found = ir_find_node(m, "conv", &ci) && ir_find_node(m, "bn", &bi) && ir_find_node(m, "act", &ai);
    CHECK(found);
    if (!found) {
        symc_module_destroy(m);
        return;
    }
    const ir_node *c = &m->nodes[ci], *b = &m->nodes[bi], *a = &m->nodes[ai];
    if (variant == 2) {
        CHECK(b->op == IR_OP_BATCH_NORM && c->n_in == 2 && a->in[0] == bn);
        CHECK(data_of(m, wt) && memcmp(data_of(m, wt), w, sizeof w) == 0);
    } else {
        CHECK(b->op == IR_OP_IDENTITY && b->n_in == 1 && b->in[0] == cv);
        CHECK(a->in[0] == cv); /* the relu reads the conv directly */
        CHECK(c->n_in == 3);
        const float *fw = data_of(m, c->in[1]), *fb = data_of(m, c->in[2]);
        CHECK(fw && fb);
        for (int o = 0; fw && fb && o < C; o++) {
            double s = g[o] / sqrt((double)var[o] + 1e-3);
            for (int i = 0; i < CIN * K * K; i++) {
                double want = w[o * CIN * K * K + i] * s;
                CHECK_MSG(fabs(fw[o * CIN * K * K + i] - want) <= 1e-6 * fabs(want) + 1e-7, "W'[%d][%d] %g want %g", o,
                          i, fw[o * CIN * K * K + i], want);
            }
            double want = ((variant == 1 ? bias[o] : 0.0) - mu[o]) * s + be[o];
            CHECK_MSG(fabs(fb[o] - want) <= 1e-6 * fabs(want) + 1e-7, "b'[%d] %g want %g", o, fb[o], want);
        }
        /* node order still defines every input before its use */
        CHECK(m->tensors[c->in[2]].producer < ci);
    }
    CHECK_MSG(ir_verify(m, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
}

int main(void) {
    test_fold(0);
    test_fold(1);
    test_fold(2);
    return check_report("test_fold");
}
