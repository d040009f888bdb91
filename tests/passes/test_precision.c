/* The precision pass (passes/mixed_precision.c) through the pipeline: which tensors
 * become f16/bf16, the casts at the model's boundary, the fp32 islands (a
 * target's rule, --fp32-layers by node name and by op name, a calibrated
 * range over the fp16 limit, a constant that would overflow), constants
 * converted with round-to-nearest-even (checked against IEEE bit patterns
 * known by hand, not against the converter), integer tensors untouched, and
 * an unknown --fp32-layers item refused. The module is
 *   x(f32) -> mm = matmul(x, w) -> sm = sigmoid -> act = relu -> addb = add(., b) -> y
 *   x -> shp = shape_of(x) -> n (i64 output)
 * and the verifier runs after the pass (node order, dtypes, shapes). A second
 * module, x -> matmul -> div -> softmax -> relu, checks the softmax island:
 * the logits and the contraction making them stay fp32. A third, attention
 * (softmax(q·kᵀ / 8)·v), checks that Q and K are half (read by the fp32
 * logits through casts) when the calibrated logits are just under the limit
 * (PASS_LOGIT_ERR_F16 / _BF16), and in the island just over it or without
 * calibration. A fourth, T5's relative-position buckets, checks that index
 * arithmetic (floats made from integers and scalar constants) stays fp32. Each case also checks
 * the module's list of fp32 islands (m->islands, which `symc inspect --islands` prints): exactly
 * the nodes kept fp32, in node order, each with the kind of its reason and the names and numbers
 * its text must give. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "tests/check.h"

#define K 8

/* w's first values and their f16 / bf16 bits under round to nearest, ties to even */
static const float wv[] = {1.0f, 1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 65504.0f, -2.5f,
                           0.1f, 1.0f + 0x1p-8f,  1.0f + 0x3p-8f};
static const uint16_t w_f16[] = {0x3C00, 0x3C00, 0x3C02, 0x7BFF, 0xC100, 0x2E66, 0x3C04, 0x3C0C};
static const uint16_t w_bf16[] = {0x3F80, 0x3F80, 0x3F80, 0x4780, 0xC020, 0x3DCD, 0x3F80, 0x3F82};

static symc_module *build(float big) {
    symc_error err;
    symc_module *m = symc_module_create("prec", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_tensor x, w, b, h, s, r, y, n;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, K)}, &x, &err);
    float wd[K * K], bd[K];
    for (int i = 0; i < K * K; i++) wd[i] = i < 8 ? wv[i] : (float)(0.01 * (i % 13) - 0.05);
    for (int i = 0; i < K; i++) bd[i] = (float)i * 0.25f;
    bd[K - 1] = big; /* 1e6 overflows fp16, not bf16 */
    CHECK(symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){K, K}, wd, sizeof wd, &w, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){K}, bd, sizeof bd, &b, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, w}, 2, NULL, 0, &h, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "sigmoid", "sm", &h, 1, NULL, 0, &s, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &s, 1, NULL, 0, &r, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "add", "addb", (symc_tensor[]){r, b}, 2, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "shape_of", "shp", &x, 1, NULL, 0, &n, 1, &err) == SYMC_OK);
    symc_mark_output(m, y, &err);
    symc_mark_output(m, n, &err);
    return m;
}

static symc_dtype dt_of(symc_module *m, const char *tensor) {
    uint32_t t;
    return ir_find_tensor(m, tensor, &t) ? m->tensors[t].dtype : SYMC_DTYPE_COUNT;
}
/* dtype of input k / output 0 of node `name` as it is after the pass */
static symc_dtype in_dt(symc_module *m, const char *node, uint32_t k) {
    uint32_t i;
    return ir_find_node(m, node, &i) ? m->tensors[m->nodes[i].in[k]].dtype : SYMC_DTYPE_COUNT;
}
static symc_dtype out_dt(symc_module *m, const char *node) {
    uint32_t i;
    return ir_find_node(m, node, &i) ? m->tensors[m->nodes[i].out[0]].dtype : SYMC_DTYPE_COUNT;
}
static uint32_t casts(symc_module *m) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) n += m->nodes[i].op == IR_OP_CAST;
    return n;
}

/* m's fp32 islands are exactly `want`: "node=kind" items joined by ';', in node order ("" for
 * none) */
static void check_islands(symc_module *m, const char *want, const char *ctx) {
    char got[1024] = "";
    size_t n = 0;
    for (uint32_t i = 0; i < m->n_islands && n < sizeof got; i++) {
        const ir_island *x = &m->islands[i];
        n += (size_t)snprintf(got + n, sizeof got - n, "%s%s=%s", i ? ";" : "", x->node, x->kind);
        CHECK_MSG(x->why && x->why[0] && x->op && ir_op_find(x->op, &(ir_op){0}), "%s: island %s: op %s why %s", ctx,
                  x->node, x->op, x->why);
    }
    CHECK_MSG(!strcmp(got, want), "%s: islands '%s', want '%s'", ctx, got, want);
}

/* the why of island `node` contains `text` */
static void check_why(symc_module *m, const char *node, const char *text, const char *ctx) {
    const char *why = NULL;
    for (uint32_t i = 0; i < m->n_islands; i++)
        if (!strcmp(m->islands[i].node, node)) why = m->islands[i].why;
    CHECK_MSG(why && strstr(why, text), "%s: island %s's why '%s' lacks '%s'", ctx, node, why ? why : "(none)", text);
}

static int no_sigmoid(const ir_module *m, uint32_t node) { return m->nodes[node].op != IR_OP_SIGMOID; }
static int no_matmul(const ir_module *m, uint32_t node) { return m->nodes[node].op != IR_OP_MATMUL; }
static const pass_precision_rules rules_no_matmul = {"test", no_matmul};
static const pass_precision_rules rules_no_sigmoid = {"test", no_sigmoid};

static double fake_h_max;
static void fake_calibrate(const ir_module *m, double *max_abs) {
    for (uint32_t t = 0; t < m->n_tensors; t++) max_abs[t] = 0.5;
    uint32_t node;
    if (ir_find_node(m, "mm", &node)) max_abs[m->nodes[node].out[0]] = fake_h_max;
}

/* The compile driver's order (codegen/compile.c): the pipeline up to the precision pass, a
 * calibration (here fake: statistics made up from node names), handed to the rest as data. */
static symc_status run_calibrated(symc_module *m, pass_options *o, void (*fake)(const ir_module *, double *),
                                  symc_error *err) {
    symc_status st = pass_run_passes(m, o, NULL, "precision", err);
    if (st) return st;
    double *max_abs = NULL;
    if (fake && pass_calibration_wanted(m, o->precision)) {
        max_abs = malloc((m->n_tensors ? m->n_tensors : 1) * sizeof *max_abs);
        if (!max_abs) return SYMC_ERR_NOMEM;
        fake(m, max_abs);
        o->max_abs = max_abs;
        o->n_max_abs = m->n_tensors;
    }
    st = pass_run_passes(m, o, "precision", NULL, err);
    o->max_abs = NULL;
    free(max_abs);
    return st;
}

/* x -> q = x·wq, k = x·wk, v = x·wv -> softmax(q·kᵀ / 8)·v -> relu: attention */
static symc_module *attention_module(int windowed) {
    symc_error err;
    symc_module *m = symc_module_create("att", &err);
    symc_dim S;
    symc_declare_symbol(m, "S", 1, 4, 16, 1, &S, &err);
    symc_tensor x, wt[3], q, k, v, kt, s, d, p, o, y, c, mk = SYMC_TENSOR_NONE;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){S, symc_dim_const(m, K)}, &x, &err);
    symc_dim one = symc_dim_const(m, 1);
    if (windowed) symc_add_input(m, "mk", SYMC_F32, 3, (symc_dim[]){one, one, S}, &mk, &err);
    float wd[K * K], cd = 8.0f;
    for (int i = 0; i < K * K; i++) wd[i] = (float)(i % 7) * 0.125f - 0.375f;
    const char *wn[3] = {"wq", "wk", "wv"};
    for (int i = 0; i < 3; i++)
        CHECK(symc_add_constant(m, wn[i], SYMC_F32, 2, (int64_t[]){K, K}, wd, sizeof wd, &wt[i], &err) == SYMC_OK);
    symc_add_constant(m, "c", SYMC_F32, 0, NULL, &cd, sizeof cd, &c, &err);
    symc_attr axis = symc_attr_int("axis", -1), perm = symc_attr_ints("perm", (int64_t[]){1, 0}, 2);
    CHECK(symc_add_node(m, "matmul", "pq", (symc_tensor[]){x, wt[0]}, 2, NULL, 0, &q, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "pk", (symc_tensor[]){x, wt[1]}, 2, NULL, 0, &k, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "pv", (symc_tensor[]){x, wt[2]}, 2, NULL, 0, &v, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "transpose", "tk", &k, 1, &perm, 1, &kt, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "logits", (symc_tensor[]){q, kt}, 2, NULL, 0, &s, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "div", "scale", (symc_tensor[]){s, c}, 2, NULL, 0, &d, 1, &err) == SYMC_OK);
    if (windowed) { /* Swin's form: a mask added to a view of the scores, viewed back */
        symc_tensor w, wm;
        symc_attr v3 = symc_attr_dims("shape", (symc_dim[]){one, S, S}, 3),
                  v2 = symc_attr_dims("shape", (symc_dim[]){S, S}, 2);
        CHECK(symc_add_node(m, "reshape", "win", &d, 1, &v3, 1, &w, 1, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "add", "madd", (symc_tensor[]){w, mk}, 2, NULL, 0, &wm, 1, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "reshape", "back", &wm, 1, &v2, 1, &d, 1, &err) == SYMC_OK);
    }
    CHECK(symc_add_node(m, "softmax", "sm", &d, 1, &axis, 1, &p, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "matmul", "pv2", (symc_tensor[]){p, v}, 2, NULL, 0, &o, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &o, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    symc_mark_output(m, y, &err);
    return m;
}

/* every tensor 0.5, the logits (node "logits") fake_logit_max */
static double fake_logit_max;
static void fake_logit_calibrate(const ir_module *m, double *max_abs) {
    for (uint32_t t = 0; t < m->n_tensors; t++) max_abs[t] = 0.5;
    uint32_t node;
    if (ir_find_node(m, "logits", &node)) max_abs[m->nodes[node].out[0]] = fake_logit_max;
}

static symc_module *run(symc_precision p, const pass_precision_rules *rules, const char *layers, int calib, float big,
                        symc_status want) {
    symc_module *m = build(big);
    symc_error err;
    pass_options o = {.precision = p, .precision_rules = rules, .fp32_layers = layers};
    symc_status st = run_calibrated(m, &o, calib ? fake_calibrate : NULL, &err);
    CHECK_MSG(st == want, "status %d: %s", (int)st, st ? err.msg : "");
    if (st && want) CHECK_MSG(strstr(err.msg, "nosuch") != NULL, "message names the item: %s", err.msg);
    return m;
}

static void check_w_bits(symc_module *m, symc_dtype half) {
    uint32_t t;
    CHECK(ir_find_tensor(m, "w", &t) && m->tensors[t].dtype == half);
    const ir_constant *c = &m->constants[m->tensors[t].constant];
    CHECK(c->size == K * K * 2);
    for (int i = 0; i < 8; i++) {
        uint16_t h;
        memcpy(&h, c->data + 2 * i, 2);
        uint16_t want = half == SYMC_F16 ? w_f16[i] : w_bf16[i];
        CHECK_MSG(h == want, "w[%d] = %g: 0x%04x, want 0x%04x (%s)", i, (double)wv[i], h, want, symc_dtype_name(half));
    }
}

/* T5's relative-position buckets: d = abs(i - j) as a float, log(d / 8) / log(16) * 8, floored by
 * a cast to i64, then an embedding lookup. The float chain is index arithmetic (integers and scalar
 * constants only): it stays fp32, or a bucket lands one off where a half log crosses an integer
 * (as it did on the GPU: T5's fp16 error 2.5x eager half's). The lookup reads a weight table, so
 * it and what follows are half. */
static void test_index_arithmetic(symc_precision p, symc_dtype H) {
    symc_error err;
    symc_module *m = symc_module_create("buckets", &err);
    symc_dim S;
    symc_declare_symbol(m, "S", 1, 8, 64, 1, &S, &err);
    symc_tensor pos, x, eight, lg, k8, tab, d, df, q, l, sc, b, e, y;
    symc_add_input(m, "pos", SYMC_I64, 1, (symc_dim[]){S}, &pos, &err);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){S, symc_dim_const(m, 4)}, &x, &err);
    float v8 = 8.0f, vl = 2.7725887f, vk = 8.0f, t[32 * 4];
    for (int i = 0; i < 32 * 4; i++) t[i] = (float)i / 64.0f;
    CHECK(symc_add_constant(m, "eight", SYMC_F32, 0, NULL, &v8, sizeof v8, &eight, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "log16", SYMC_F32, 0, NULL, &vl, sizeof vl, &lg, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "k8", SYMC_F32, 0, NULL, &vk, sizeof vk, &k8, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "table", SYMC_F32, 2, (int64_t[]){32, 4}, t, sizeof t, &tab, &err) == SYMC_OK);
    symc_attr to_f = symc_attr_dtype("to", SYMC_F32), to_i = symc_attr_dtype("to", SYMC_I64);
    CHECK(symc_add_node(m, "abs", "absd", &pos, 1, NULL, 0, &d, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "cast", "tofloat", &d, 1, &to_f, 1, &df, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "div", "ratio", (symc_tensor[]){df, eight}, 2, NULL, 0, &q, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "log", "lg", &q, 1, NULL, 0, &l, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "div", "norm", (symc_tensor[]){l, lg}, 2, NULL, 0, &sc, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "mul", "scaled", (symc_tensor[]){sc, k8}, 2, NULL, 0, &b, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "cast", "bucket", &b, 1, &to_i, 1, &e, 1, &err) == SYMC_OK);
    symc_tensor g, s2;
    symc_attr ax0 = symc_attr_int("axis", 0);
    CHECK_MSG(symc_add_node(m, "gather", "bias", (symc_tensor[]){tab, e}, 2, &ax0, 1, &g, 1, &err) == SYMC_OK, "%s",
              err.msg);
    CHECK(symc_add_node(m, "add", "addx", (symc_tensor[]){g, x}, 2, NULL, 0, &s2, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &s2, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    pass_options o = {.precision = p};
    CHECK_MSG(pass_run_pipeline(m, &o, &err) == SYMC_OK, "%s", err.msg);
    CHECK(out_dt(m, "tofloat") == SYMC_F32 && out_dt(m, "ratio") == SYMC_F32 && out_dt(m, "lg") == SYMC_F32);
    CHECK(out_dt(m, "norm") == SYMC_F32 && out_dt(m, "scaled") == SYMC_F32 && in_dt(m, "bucket", 0) == SYMC_F32);
    CHECK(out_dt(m, "bias") == H && out_dt(m, "act") == H);
    check_islands(m,
                  "tofloat=index arithmetic;ratio=index arithmetic;lg=index arithmetic;norm=index arithmetic;"
                  "scaled=index arithmetic", /* the cast to i64 reads any dtype and writes no f32: no island */
                  "index arithmetic");
    check_why(m, "lg", "integers and scalar constants", "index arithmetic");
    symc_module_destroy(m);
}

int main(void) {
    test_index_arithmetic(SYMC_PRECISION_FP16, SYMC_F16);
    test_index_arithmetic(SYMC_PRECISION_BF16, SYMC_BF16);
    /* every op may be half: x and the outputs keep their dtypes, one cast in, one out */
    for (int k = 0; k < 2; k++) {
        symc_precision p = k ? SYMC_PRECISION_BF16 : SYMC_PRECISION_FP16;
        symc_dtype H = k ? SYMC_BF16 : SYMC_F16;
        symc_module *m = run(p, NULL, NULL, 0, 3.0f, SYMC_OK);
        CHECK(dt_of(m, "x") == SYMC_F32 && m->tensors[m->inputs[0]].dtype == SYMC_F32);
        CHECK(in_dt(m, "mm", 0) == H && out_dt(m, "mm") == H && out_dt(m, "sm") == H && out_dt(m, "act") == H);
        CHECK(out_dt(m, "addb") == H && in_dt(m, "addb", 1) == H);
        CHECK(m->tensors[m->outputs[0]].dtype == SYMC_F32 && m->tensors[m->outputs[1]].dtype == SYMC_I64);
        CHECK(in_dt(m, "shp", 0) == SYMC_F32); /* shape_of reads any dtype: no cast */
        CHECK_MSG(casts(m) == 2, "%u casts", casts(m));
        check_w_bits(m, H);
        check_islands(m, "", "all half");
        symc_module_destroy(m);
    }
    /* the target cannot run sigmoid in half: an island with casts around it */
    {
        symc_module *m = run(SYMC_PRECISION_FP16, &rules_no_sigmoid, NULL, 0, 3.0f, SYMC_OK);
        CHECK(out_dt(m, "mm") == SYMC_F16 && in_dt(m, "sm", 0) == SYMC_F32 && out_dt(m, "sm") == SYMC_F32);
        CHECK(in_dt(m, "act", 0) == SYMC_F16 && out_dt(m, "act") == SYMC_F16);
        CHECK_MSG(casts(m) == 4, "%u casts", casts(m));
        check_islands(m, "sm=no half kernel", "no half sigmoid");
        check_why(m, "sm", "no half kernel for sigmoid", "no half sigmoid");
        symc_module_destroy(m);
    }
    /* --fp32-layers by node name and by op name; w read only by an fp32 node stays f32 */
    {
        symc_module *m = run(SYMC_PRECISION_FP16, NULL, "act, matmul", 0, 3.0f, SYMC_OK);
        CHECK(out_dt(m, "mm") == SYMC_F32 && dt_of(m, "w") == SYMC_F32 && out_dt(m, "act") == SYMC_F32);
        CHECK(out_dt(m, "sm") == SYMC_F16 && out_dt(m, "addb") == SYMC_F16 && in_dt(m, "addb", 0) == SYMC_F16);
        check_islands(m, "mm=--fp32-layers;act=--fp32-layers", "--fp32-layers");
        check_why(m, "mm", "names its op", "--fp32-layers");
        check_why(m, "act", "names its node", "--fp32-layers");
        symc_module_destroy(m);
        m = run(SYMC_PRECISION_BF16, NULL, "act,nosuch", 0, 3.0f, SYMC_ERR_INVALID_ARG);
        symc_module_destroy(m);
    }
    /* calibration: mm's result over the fp16 limit keeps mm and its reader fp32; bf16 ignores it */
    {
        fake_h_max = 1e5;
        symc_module *m = run(SYMC_PRECISION_FP16, NULL, NULL, 1, 3.0f, SYMC_OK);
        CHECK(out_dt(m, "mm") == SYMC_F32 && in_dt(m, "sm", 0) == SYMC_F32 && out_dt(m, "sm") == SYMC_F32);
        CHECK(out_dt(m, "act") == SYMC_F16);
        check_islands(m, "mm=calibrated range;sm=calibrated range", "calibrated");
        check_why(m, "mm", "max |value| 1e+05", "calibrated");
        check_why(m, "mm", "above the 4096 kept under", "calibrated: the limit the options carry");
        check_why(m, "sm", "max |value| 1e+05", "calibrated");
        symc_module_destroy(m);
        fake_h_max = PASS_FP16_SAFE_MAX; /* at the limit: half */
        m = run(SYMC_PRECISION_FP16, NULL, NULL, 1, 3.0f, SYMC_OK);
        CHECK(out_dt(m, "mm") == SYMC_F16 && out_dt(m, "sm") == SYMC_F16);
        check_islands(m, "", "calibrated at the limit");
        symc_module_destroy(m);
        fake_h_max = 1e5;
        m = run(SYMC_PRECISION_BF16, NULL, NULL, 1, 3.0f, SYMC_OK);
        CHECK(out_dt(m, "mm") == SYMC_BF16 && out_dt(m, "sm") == SYMC_BF16);
        check_islands(m, "", "calibrated, bf16");
        symc_module_destroy(m);
    }
    /* a constant that would overflow fp16 stays f32 with its reader (an island); bf16 converts it */
    {
        symc_module *m = run(SYMC_PRECISION_FP16, NULL, NULL, 0, 1e6f, SYMC_OK);
        CHECK(dt_of(m, "b") == SYMC_F32 && in_dt(m, "addb", 1) == SYMC_F32 && out_dt(m, "addb") == SYMC_F32);
        CHECK(in_dt(m, "addb", 0) == SYMC_F32 && out_dt(m, "act") == SYMC_F16);
        CHECK_MSG(casts(m) == 2, "%u casts", casts(m));
        check_islands(m, "addb=constant overflow", "constant overflow");
        check_why(m, "addb", "constant 'b', whose values overflow f16", "constant overflow");
        symc_module_destroy(m);
        m = run(SYMC_PRECISION_BF16, NULL, NULL, 0, 1e6f, SYMC_OK);
        CHECK(dt_of(m, "b") == SYMC_BF16);
        check_islands(m, "", "constant, bf16");
        symc_module_destroy(m);
    }
    /* softmax's logits stay fp32 back to the matmul making them; its result is half again */
    {
        symc_error err;
        symc_module *m = symc_module_create("sm", &err);
        symc_dim B;
        symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
        symc_tensor x, w, c, h, d, s, y;
        symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, K)}, &x, &err);
        float wd[K * K], cd = 8.0f;
        for (int i = 0; i < K * K; i++) wd[i] = (float)(i % 5) - 2.0f;
        symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){K, K}, wd, sizeof wd, &w, &err);
        symc_add_constant(m, "c", SYMC_F32, 0, NULL, &cd, sizeof cd, &c, &err);
        symc_attr axis = symc_attr_int("axis", -1);
        CHECK(symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, w}, 2, NULL, 0, &h, 1, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "div", "scale", (symc_tensor[]){h, c}, 2, NULL, 0, &d, 1, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "softmax", "sm", &d, 1, &axis, 1, &s, 1, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "relu", "act", &s, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
        symc_mark_output(m, y, &err);
        /* small calibrated logits change nothing: no matmul reads the probabilities (not attention) */
        fake_h_max = 1e-3;
        pass_options o = {.precision = SYMC_PRECISION_BF16};
        CHECK_MSG(run_calibrated(m, &o, fake_calibrate, &err) == SYMC_OK, "%s", err.msg);
        CHECK(out_dt(m, "mm") == SYMC_F32 && out_dt(m, "scale") == SYMC_F32 && out_dt(m, "sm") == SYMC_F32);
        CHECK(dt_of(m, "w") == SYMC_F32 && dt_of(m, "c") == SYMC_F32);
        CHECK(in_dt(m, "act", 0) == SYMC_BF16 && out_dt(m, "act") == SYMC_BF16);
        check_islands(m, "mm=softmax logits;scale=softmax logits;sm=softmax logits", "softmax");
        check_why(m, "mm", "computes the logits of softmax 'sm': stored in bf16", "softmax");
        check_why(m, "sm", "reads its logits in fp32", "softmax");
        symc_module_destroy(m);
    }
    /* attention: Q and K half when the calibrated logits are small, else the island; windowed: the
     * scores reach the softmax through a view, a mask add and a view back (Swin's shifted windows) */
    for (int windowed = 0; windowed < 2; windowed++) {
        const double u16 = 0x1p-11, u8 = 0x1p-8; /* unit roundoffs */
        struct {
            symc_precision p;
            double logit_max; /* of Q·Kᵀ, before the 1/8 scale */
            int calib, released;
        } cases[] = {
            {SYMC_PRECISION_FP16, 0.9 * PASS_LOGIT_ERR_F16 * 8 / u16, 1, 1},
            {SYMC_PRECISION_FP16, 1.1 * PASS_LOGIT_ERR_F16 * 8 / u16, 1, 0},
            {SYMC_PRECISION_BF16, 0.9 * PASS_LOGIT_ERR_BF16 * 8 / u8, 1, 1},
            {SYMC_PRECISION_BF16, 1.1 * PASS_LOGIT_ERR_BF16 * 8 / u8, 1, 0},
            {SYMC_PRECISION_FP16, 1.0, 0, 0}, /* no calibration: the island */
        };
        for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
            symc_dtype H = cases[ci].p == SYMC_PRECISION_FP16 ? SYMC_F16 : SYMC_BF16;
            symc_module *m = attention_module(windowed);
            symc_error err;
            fake_logit_max = cases[ci].logit_max;
            pass_options o = {.precision = cases[ci].p};
            CHECK_MSG(run_calibrated(m, &o, cases[ci].calib ? fake_logit_calibrate : NULL, &err) == SYMC_OK, "%s",
                      err.msg);
            symc_dtype qk = cases[ci].released ? H : SYMC_F32;
            CHECK_MSG(out_dt(m, "pq") == qk && out_dt(m, "pk") == qk && out_dt(m, "tk") == qk, "case %zu: q %s k %s",
                      ci, symc_dtype_name(out_dt(m, "pq")), symc_dtype_name(out_dt(m, "pk")));
            /* the logits, the score function and the softmax stay fp32 either way; P·V is half */
            CHECK(in_dt(m, "logits", 0) == SYMC_F32 && in_dt(m, "logits", 1) == SYMC_F32);
            CHECK(out_dt(m, "logits") == SYMC_F32 && out_dt(m, "scale") == SYMC_F32 && out_dt(m, "sm") == SYMC_F32);
            CHECK(out_dt(m, "pv") == H && in_dt(m, "pv2", 0) == H && out_dt(m, "pv2") == H);
            uint32_t lg = 0;
            CHECK(ir_find_node(m, "logits", &lg));
            for (uint32_t k = 0; k < 2; k++) {
                /* released: Q and K reach the logits through widening casts of their half storage */
                uint32_t pr = m->tensors[m->nodes[lg].in[k]].producer;
                int cast = pr != IR_NONE && m->nodes[pr].op == IR_OP_CAST && m->tensors[m->nodes[pr].in[0]].dtype == H;
                CHECK_MSG(cast == cases[ci].released, "case %zu: logits operand %u %s a cast", ci, k,
                          cast ? "is" : "is not");
            }
            const char *score = windowed ? "logits=softmax logits;scale=softmax logits;win=softmax logits;"
                                           "madd=softmax logits;back=softmax logits;sm=softmax logits"
                                         : "logits=softmax logits;scale=softmax logits;sm=softmax logits";
            char want[512];
            snprintf(want, sizeof want, "%s%s",
                     cases[ci].released ? "" : "pq=softmax logits;pk=softmax logits;tk=softmax logits;", score);
            check_islands(m, want, windowed ? "windowed attention" : "attention");
            symc_module_destroy(m);
        }
    }
    /* an fp16 model compiled without --fp16 for a target without a half matmul: the matmul
     * computes in fp32 between casts, everything else stays as the model declares it */
    {
        symc_error err;
        symc_module *m = symc_module_create("h", &err);
        symc_dim B;
        symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
        symc_tensor x, w, h, y;
        symc_add_input(m, "x", SYMC_F16, 2, (symc_dim[]){B, symc_dim_const(m, K)}, &x, &err);
        uint16_t wd[K * K];
        for (int i = 0; i < K * K; i++) wd[i] = 0x3C00; /* 1.0 */
        symc_add_constant(m, "w", SYMC_F16, 2, (int64_t[]){K, K}, wd, sizeof wd, &w, &err);
        CHECK(symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, w}, 2, NULL, 0, &h, 1, &err) == SYMC_OK);
        CHECK(symc_add_node(m, "relu", "act", &h, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
        symc_mark_output(m, y, &err);
        pass_options o = {.precision = SYMC_PRECISION_FP32, .precision_rules = &rules_no_matmul};
        CHECK_MSG(pass_run_pipeline(m, &o, &err) == SYMC_OK, "%s", err.msg);
        CHECK(in_dt(m, "mm", 0) == SYMC_F32 && in_dt(m, "mm", 1) == SYMC_F32 && out_dt(m, "mm") == SYMC_F32);
        CHECK(dt_of(m, "w") == SYMC_F16 && dt_of(m, "x") == SYMC_F16);
        CHECK(in_dt(m, "act", 0) == SYMC_F16 && out_dt(m, "act") == SYMC_F16);
        check_islands(m, "", "fp16 model, no conversion"); /* no conversion, no islands */
        /* x and mm's result are cast at run time; w is read through an f32 copy made at build time */
        CHECK_MSG(casts(m) == 2, "%u casts", casts(m));
        uint32_t mm = 0;
        CHECK(ir_find_node(m, "mm", &mm));
        const ir_tensor *wc = &m->tensors[m->nodes[mm].in[1]];
        CHECK(wc->constant != IR_NONE && wc->dtype == SYMC_F32 && m->constants[wc->constant].size == K * K * 4);
        if (wc->constant != IR_NONE) {
            const float *v = (const float *)m->constants[wc->constant].data;
            for (int i = 0; i < K * K; i++) CHECK(v[i] == 1.0f);
        }
        symc_module_destroy(m);
    }
    /* fp32 and tf32 leave the module as it is */
    {
        symc_module *m = run(SYMC_PRECISION_TF32, NULL, NULL, 1, 3.0f, SYMC_OK);
        CHECK(out_dt(m, "mm") == SYMC_F32 && casts(m) == 0 && dt_of(m, "w") == SYMC_F32);
        check_islands(m, "", "tf32");
        symc_module_destroy(m);
    }
    return check_report("passes.precision");
}
