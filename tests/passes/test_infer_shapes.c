/* Shape inference tests: the symbolic output shape of each rule on the
 * patterns of docs/BENCHMARKS-SUITE.md's models, symbolic values through an ONNX-style shape
 * sub-graph, and the errors (disproven facts, guards that narrow declared
 * ranges, ambiguous squeezes). Every symbolic shape is also checked against
 * brute force: evaluated at every binding of its symbols it must equal the
 * size computed by hand from the op's definition at that binding. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "tests/check.h"

static char *shape_text(symc_module *m, symc_tensor t) {
    static char buf[512];
    if (t >= m->n_tensors) return "<no tensor>";
    const ir_tensor *x = &m->tensors[t];
    size_t n = 0;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "[");
    for (int i = 0; i < x->rank; i++) {
        if (i) n += (size_t)snprintf(buf + n, sizeof buf - n, ", ");
        n += sym_print(m->syms, x->dims[i], buf + n, sizeof buf - n);
    }
    snprintf(buf + n, sizeof buf - n, "]");
    return buf;
}

#define EXPECT_SHAPE(m, t, text) \
    CHECK_MSG(strcmp(shape_text(m, t), text) == 0, "got %s, want %s", shape_text(m, t), text)

static symc_dim c_(symc_module *m, int64_t v) { return symc_dim_const(m, v); }

static symc_tensor const_f32(symc_module *m, const char *name, int rank, const int64_t *dims) {
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    float *d = calloc((size_t)n, sizeof *d);
    symc_tensor t = SYMC_TENSOR_NONE;
    symc_error err;
    if (symc_add_constant(m, name, SYMC_F32, rank, dims, d, (size_t)n * 4, &t, &err)) fprintf(stderr, "%s\n", err.msg);
    free(d);
    return t;
}

static symc_tensor node(symc_module *m, const char *op, const char *name, const symc_tensor *in, uint32_t n_in,
                        const symc_attr *attrs, uint32_t n_attrs) {
    symc_tensor out = SYMC_TENSOR_NONE;
    symc_error err;
    if (symc_add_node(m, op, name, in, n_in, attrs, n_attrs, &out, 1, &err)) {
        fprintf(stderr, "node %s: %s\n", name, err.msg);
        check_failures++;
    }
    return out;
}

/* Evaluates a tensor's dim at a binding of all symbols. */
static int64_t dim_at(symc_module *m, symc_tensor t, int d, const int64_t *vals) {
    int64_t v = -999;
    symc_error err;
    if (sym_eval(m->syms, m->tensors[t].dims[d], vals, sym_symbol_count(m->syms), &v, &err)) {
        fprintf(stderr, "eval: %s\n", err.msg);
        check_failures++;
    }
    return v;
}

/* S1: the ViT pattern. */
static void test_vit(void) {
    symc_error err;
    symc_module *m = symc_module_create("vit", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, c_(m, 196), c_(m, 768)}, &x, &err);
    symc_tensor cls = const_f32(m, "cls", 3, (int64_t[]){1, 1, 768});
    symc_tensor w = const_f32(m, "w", 2, (int64_t[]){768, 2304});
    symc_tensor b = const_f32(m, "b", 1, (int64_t[]){2304});
    symc_attr ea = symc_attr_dims("shape", (symc_dim[]){B, c_(m, 1), c_(m, 768)}, 3);
    symc_tensor clsb = node(m, "expand", "clsb", &cls, 1, &ea, 1);
    symc_attr ax1 = symc_attr_int("axis", 1);
    symc_tensor tok = node(m, "concat", "tok", (symc_tensor[]){clsb, x}, 2, &ax1, 1);
    symc_tensor mm = node(m, "matmul", "mm", (symc_tensor[]){tok, w}, 2, NULL, 0);
    symc_tensor qkv = node(m, "add", "qkv", (symc_tensor[]){mm, b}, 2, NULL, 0);
    symc_attr ra = symc_attr_dims("shape", (symc_dim[]){B, c_(m, 197), c_(m, 3), c_(m, 12), SYMC_DIM_NONE}, 5);
    symc_tensor heads = node(m, "reshape", "heads", &qkv, 1, &ra, 1);
    symc_attr pa = symc_attr_ints("perm", (int64_t[]){2, 0, 3, 1, 4}, 5);
    symc_tensor perm = node(m, "transpose", "perm", &heads, 1, &pa, 1);
    symc_mark_output(m, perm, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    EXPECT_SHAPE(m, clsb, "[B, 1, 768]");
    EXPECT_SHAPE(m, tok, "[B, 197, 768]");
    EXPECT_SHAPE(m, mm, "[B, 197, 2304]");
    EXPECT_SHAPE(m, qkv, "[B, 197, 2304]");
    EXPECT_SHAPE(m, heads, "[B, 197, 3, 12, 64]");
    EXPECT_SHAPE(m, perm, "[3, B, 12, 197, 64]");
    CHECK(symc_module_verify(m, &err) == SYMC_OK);
    symc_module_destroy(m);
}

/* S2 and matmul broadcasting. */
static void test_matmul(void) {
    symc_error err;
    symc_module *m = symc_module_create("mm", &err);
    symc_dim S;
    symc_declare_symbol(m, "S", 1, 128, 2048, 1, &S, &err);
    symc_tensor q, k, v1;
    symc_add_input(m, "q", SYMC_F32, 4, (symc_dim[]){c_(m, 1), c_(m, 12), S, c_(m, 64)}, &q, &err);
    symc_add_input(m, "k", SYMC_F32, 4, (symc_dim[]){c_(m, 1), c_(m, 12), S, c_(m, 64)}, &k, &err);
    symc_add_input(m, "v1", SYMC_F32, 1, (symc_dim[]){c_(m, 64)}, &v1, &err);
    symc_attr pa = symc_attr_ints("perm", (int64_t[]){0, 1, 3, 2}, 4);
    symc_tensor kt = node(m, "transpose", "kt", &k, 1, &pa, 1);
    symc_tensor s = node(m, "matmul", "scores", (symc_tensor[]){q, kt}, 2, NULL, 0);
    symc_tensor mv = node(m, "matmul", "mv", (symc_tensor[]){q, v1}, 2, NULL, 0);
    symc_tensor vm = node(m, "matmul", "vm", (symc_tensor[]){v1, kt}, 2, NULL, 0);
    symc_attr sa = symc_attr_int("axis", -1);
    symc_tensor p = node(m, "softmax", "p", &s, 1, &sa, 1);
    symc_mark_output(m, p, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    EXPECT_SHAPE(m, s, "[1, 12, S, S]");
    EXPECT_SHAPE(m, mv, "[1, 12, S]");
    EXPECT_SHAPE(m, vm, "[1, 12, S]");
    EXPECT_SHAPE(m, p, "[1, 12, S, S]");
    symc_module_destroy(m);
}

/* S3 / M3: convolutions and pools, checked against the definition at every H. */
static void test_conv_pool(void) {
    symc_error err;
    symc_module *m = symc_module_create("cnn", &err);
    symc_dim N, H, W;
    symc_declare_symbol(m, "N", 1, 8, 32, 1, &N, &err);
    symc_declare_symbol(m, "H", 17, 32, 64, 1, &H, &err);
    symc_declare_symbol(m, "W", 17, 30, 40, 1, &W, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){N, c_(m, 3), H, W}, &x, &err);
    symc_tensor w7 = const_f32(m, "w7", 4, (int64_t[]){16, 3, 7, 7});
    symc_attr ca[] = {symc_attr_ints("strides", (int64_t[]){2, 2}, 2),
                      symc_attr_ints("pads", (int64_t[]){3, 3, 3, 3}, 4)};
    symc_tensor stem = node(m, "conv2d", "stem", (symc_tensor[]){x, w7}, 2, ca, 2);
    symc_attr pa[] = {symc_attr_ints("kernel", (int64_t[]){3, 3}, 2), symc_attr_ints("strides", (int64_t[]){2, 2}, 2),
                      symc_attr_ints("pads", (int64_t[]){1, 1, 1, 1}, 4)};
    symc_tensor pool = node(m, "max_pool2d", "pool", &stem, 1, pa, 3);
    symc_attr pc[] = {symc_attr_ints("kernel", (int64_t[]){2, 2}, 2), symc_attr_ints("strides", (int64_t[]){2, 2}, 2),
                      symc_attr_int("ceil_mode", 1)};
    symc_tensor pool2 = node(m, "avg_pool2d", "pool2", &pool, 1, pc, 3);
    symc_tensor w3 = const_f32(m, "w3", 4, (int64_t[]){16, 4, 3, 3});
    symc_attr ga[] = {symc_attr_int("group", 4), symc_attr_ints("pads", (int64_t[]){1, 1, 1, 1}, 4),
                      symc_attr_ints("dilations", (int64_t[]){2, 2}, 2)};
    symc_tensor grouped = node(m, "conv2d", "grouped", (symc_tensor[]){pool2, w3}, 2, ga, 3);
    symc_tensor gap = node(m, "global_avg_pool", "gap", &grouped, 1, NULL, 0);
    symc_attr fa = symc_attr_int("axis", 1);
    symc_tensor flat = node(m, "flatten", "flat", &gap, 1, &fa, 1);
    symc_mark_output(m, flat, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    EXPECT_SHAPE(m, gap, "[N, 16, 1, 1]");
    EXPECT_SHAPE(m, flat, "[N, 16]");
    /* brute force against the definitions: floor((in + pads - dil*(k-1) - 1)/s) + 1,
     * ceil mode dropping a last window that starts in the right padding */
    int64_t vals[3] = {1, 0, 0};
    for (int64_t h = 17; h <= 64; h++)
        for (int64_t wv = 30; wv <= 40; wv += 3) {
            vals[1] = h, vals[2] = wv;
            int64_t e = (h + 6 - 7) / 2 + 1;
            CHECK_MSG(dim_at(m, stem, 2, vals) == e, "stem H=%" PRId64, h);
            int64_t p = (e + 2 - 3) / 2 + 1;
            CHECK_MSG(dim_at(m, pool, 2, vals) == p, "pool H=%" PRId64, h);
            int64_t q = (p - 2 + 1) / 2 + 1; /* ceil((p-2)/2)+1 */
            if ((q - 1) * 2 >= p) q--;
            CHECK_MSG(dim_at(m, pool2, 2, vals) == q, "pool2 H=%" PRId64 ": got %" PRId64 " want %" PRId64, h,
                      dim_at(m, pool2, 2, vals), q);
            int64_t g = (q + 2 - 2 * 2 - 1) / 1 + 1;
            CHECK_MSG(dim_at(m, grouped, 2, vals) == g, "grouped H=%" PRId64, h);
        }
    symc_module_destroy(m);
}

/* resize takes its output dims from `sizes` (the importer's floor(in * scale) as in * num // 2^e);
 * conv_transpose's spatial dims are (in - 1) * s + d * (k - 1) + 1 - pads + output_padding, pads
 * possibly negative. Both checked by brute force over H. */
static void test_resize_conv_transpose(void) {
    symc_error err;
    symc_module *m = symc_module_create("up", &err);
    symc_dim N, H;
    symc_declare_symbol(m, "N", 1, 2, 4, 1, &N, &err);
    symc_declare_symbol(m, "H", 5, 16, 41, 1, &H, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){N, c_(m, 4), H, c_(m, 6)}, &x, &err);
    symc_dim h34 = symc_dim_floordiv(m, symc_dim_mul(m, H, c_(m, 3)), c_(m, 4)); /* floor(H * 0.75) */
    symc_attr ra[] = {symc_attr_dims("sizes", (symc_dim[]){N, c_(m, 4), h34, c_(m, 12)}, 4),
                      symc_attr_str("mode", "linear"), symc_attr_str("coord_mode", "half_pixel")};
    symc_tensor r = node(m, "resize", "r", &x, 1, ra, 3);
    symc_tensor w = const_f32(m, "w", 4, (int64_t[]){4, 3, 3, 2});
    symc_attr ta[] = {symc_attr_ints("strides", (int64_t[]){2, 3}, 2),
                      symc_attr_ints("pads", (int64_t[]){1, -1, 0, 0}, 4), symc_attr_int("group", 2),
                      symc_attr_ints("output_padding", (int64_t[]){1, 0}, 2)};
    symc_tensor t = node(m, "conv_transpose", "t", (symc_tensor[]){r, w}, 2, ta, 4);
    symc_mark_output(m, t, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    int64_t vals[2] = {1, 0};
    for (int64_t h = 5; h <= 41; h++) {
        vals[1] = h;
        int64_t rh = (int64_t)((double)h * 0.75);
        CHECK_MSG(dim_at(m, r, 2, vals) == rh, "resize H=%" PRId64, h);
        CHECK_MSG(dim_at(m, t, 1, vals) == 6, "conv_transpose channels = 3 x 2 groups");
        CHECK_MSG(dim_at(m, t, 2, vals) == (rh - 1) * 2 + 3 - 1 + 1, "conv_transpose H=%" PRId64, h);
        CHECK_MSG(dim_at(m, t, 3, vals) == (12 - 1) * 3 + 2 + 1, "conv_transpose W (pad -1 grows it)");
    }
    /* a sizes attribute of the wrong rank is refused */
    symc_attr bad[] = {symc_attr_dims("sizes", (symc_dim[]){N, H}, 2), symc_attr_str("mode", "nearest"),
                       symc_attr_str("coord_mode", "asymmetric")};
    symc_tensor rb = node(m, "resize", "rb", &x, 1, bad, 3);
    symc_mark_output(m, rb, &err);
    CHECK(symc_module_infer_shapes(m, &err) != SYMC_OK && strstr(err.msg, "sizes has 2 entries"));
    symc_module_destroy(m);
}

/* ONNX-style shape sub-graph: Shape -> Gather -> Unsqueeze -> Concat. */
static void test_shape_values(void) {
    symc_error err;
    symc_module *m = symc_module_create("sub", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 4, 16, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 64, 512, 1, &S, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, c_(m, 768)}, &x, &err);
    symc_tensor shp = node(m, "shape_of", "shp", &x, 1, NULL, 0);
    int64_t i0[] = {0}, i1 = 1, tail[] = {12, 64};
    symc_tensor idx0, idx1, tl;
    symc_add_constant(m, "idx0", SYMC_I64, 1, (int64_t[]){1}, i0, 8, &idx0, &err);
    symc_add_constant(m, "idx1", SYMC_I64, 0, NULL, &i1, 8, &idx1, &err);
    symc_add_constant(m, "tail", SYMC_I64, 1, (int64_t[]){2}, tail, 16, &tl, &err);
    symc_attr a0 = symc_attr_int("axis", 0);
    symc_tensor b = node(m, "gather", "b", (symc_tensor[]){shp, idx0}, 2, &a0, 1);
    symc_tensor s = node(m, "gather", "s", (symc_tensor[]){shp, idx1}, 2, &a0, 1);
    symc_attr ua = symc_attr_ints("axes", (int64_t[]){0}, 1);
    symc_tensor s1 = node(m, "unsqueeze", "s1", &s, 1, &ua, 1);
    symc_tensor s2 = node(m, "mul", "s2", (symc_tensor[]){s1, idx0}, 2, NULL, 0);
    symc_tensor cat = node(m, "concat", "cat", (symc_tensor[]){b, s1, tl}, 3, &a0, 1);
    symc_mark_output(m, cat, &err);
    symc_mark_output(m, s2, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    EXPECT_SHAPE(m, shp, "[3]");
    EXPECT_SHAPE(m, s, "[]");
    EXPECT_SHAPE(m, cat, "[4]");
    const ir_tensor *c = &m->tensors[cat];
    CHECK(c->value && c->n_value == 4);
    if (c->value && c->n_value == 4) {
        char t[4][32];
        for (int i = 0; i < 4; i++) sym_print(m->syms, c->value[i], t[i], sizeof t[i]);
        CHECK(!strcmp(t[0], "B") && !strcmp(t[1], "S") && !strcmp(t[2], "12") && !strcmp(t[3], "64"));
    }
    const ir_tensor *m2 = &m->tensors[s2];
    CHECK(m2->value && m2->n_value == 1 && sym_prove_eq(m->syms, m2->value[0], sym_const(m->syms, 0)) == SYM_TRUE);
    /* Mod of non-negative values (the heads' remainder of an expanded
     * Attention): S mod 12 is kept symbolic; B - 12 may be negative, whose
     * sign rules differ, so its mod stays unknown */
    int64_t twelve = 12;
    symc_tensor k12, neg;
    symc_add_constant(m, "k12", SYMC_I64, 0, NULL, &twelve, 8, &k12, &err);
    symc_attr fm = symc_attr_int("fmod", 0);
    symc_tensor r = node(m, "mod", "r", (symc_tensor[]){s, k12}, 2, &fm, 1);
    symc_tensor d = node(m, "sub", "d", (symc_tensor[]){b, k12}, 2, NULL, 0);
    neg = node(m, "mod", "rn", (symc_tensor[]){d, k12}, 2, &fm, 1);
    symc_mark_output(m, r, &err);
    symc_mark_output(m, neg, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    const ir_tensor *rt = &m->tensors[r];
    CHECK(rt->value && rt->n_value == 1 &&
          sym_prove_eq(m->syms, rt->value[0], sym_mod(m->syms, (sym_expr)S, sym_const(m->syms, 12))) == SYM_TRUE);
    CHECK(!m->tensors[neg].value);
    symc_module_destroy(m);
}

/* Values through rank-2 Slice and Transpose: the legacy ONNX exporter's pads (torch's [begin, end] pairs per
 * dim, last dim first) are a shape-derived list reshaped to [-1, 2], reversed along axis 0 with step -1,
 * transposed and flattened; the values must follow every step so Pad gets symbolic pads. */
static void test_pad_values(void) {
    symc_error err;
    symc_module *m = symc_module_create("pads", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 4, 16, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 64, 512, 1, &S, &err);
    symc_tensor x, five;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, c_(m, 768)}, &x, &err);
    int64_t v5 = 5;
    symc_add_constant(m, "five", SYMC_I64, 1, (int64_t[]){1}, &v5, 8, &five, &err);
    symc_tensor shp = node(m, "shape_of", "shp", &x, 1, NULL, 0);
    symc_attr a0 = symc_attr_int("axis", 0);
    symc_tensor cat = node(m, "concat", "cat", (symc_tensor[]){shp, five}, 2, &a0, 1); /* [B, S, 768, 5] */
    symc_attr ra = symc_attr_dims("shape", (symc_dim[]){SYMC_DIM_NONE, c_(m, 2)}, 2);
    symc_tensor pairs = node(m, "reshape", "pairs", &cat, 1, &ra, 1);
    symc_attr sa[] = {symc_attr_dims("starts", (symc_dim[]){c_(m, -1)}, 1),
                      symc_attr_dims("ends", (symc_dim[]){c_(m, INT64_MIN + 1)}, 1),
                      symc_attr_ints("axes", (int64_t[]){0}, 1), symc_attr_ints("steps", (int64_t[]){-1}, 1)};
    symc_tensor rev = node(m, "slice", "rev", &pairs, 1, sa, 4); /* [[768, 5], [B, S]] */
    symc_attr pa = symc_attr_ints("perm", (int64_t[]){1, 0}, 2);
    symc_tensor tp = node(m, "transpose", "tp", &rev, 1, &pa, 1); /* [[768, B], [5, S]] */
    symc_attr sb[] = {symc_attr_dims("starts", (symc_dim[]){c_(m, 1)}, 1),
                      symc_attr_dims("ends", (symc_dim[]){c_(m, 2)}, 1), symc_attr_ints("axes", (int64_t[]){1}, 1)};
    symc_tensor col = node(m, "slice", "col", &tp, 1, sb, 3); /* [[B], [S]] */
    symc_mark_output(m, tp, &err);
    symc_mark_output(m, col, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    EXPECT_SHAPE(m, rev, "[2, 2]");
    EXPECT_SHAPE(m, tp, "[2, 2]");
    EXPECT_SHAPE(m, col, "[2, 1]");
    const char *want_tp[] = {"768", "B", "5", "S"}, *want_col[] = {"B", "S"};
    const ir_tensor *t = &m->tensors[tp], *cl = &m->tensors[col];
    CHECK(t->value && t->n_value == 4 && cl->value && cl->n_value == 2);
    char txt[32];
    for (uint32_t i = 0; t->value && i < t->n_value && i < 4; i++) {
        sym_print(m->syms, t->value[i], txt, sizeof txt);
        CHECK_MSG(!strcmp(txt, want_tp[i]), "transpose value %u: %s, want %s", i, txt, want_tp[i]);
    }
    for (uint32_t i = 0; cl->value && i < cl->n_value && i < 2; i++) {
        sym_print(m->syms, cl->value[i], txt, sizeof txt);
        CHECK_MSG(!strcmp(txt, want_col[i]), "slice value %u: %s, want %s", i, txt, want_col[i]);
    }
    symc_module_destroy(m);
}

/* Errors: each names the node and op; narrowing guards give a fix. */
static void test_errors(void) {
    symc_error err;
    symc_module *m = symc_module_create("bad", &err);
    symc_dim B, C, S;
    symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
    symc_declare_symbol(m, "C", 1, 4, 32, 1, &C, &err);
    symc_declare_symbol(m, "S", 1, 64, 512, 1, &S, &err);
    symc_tensor x, y, z;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, c_(m, 10)}, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 2, (symc_dim[]){c_(m, 11), C}, &y, &err);
    symc_add_input(m, "z", SYMC_F32, 2, (symc_dim[]){C, S}, &z, &err);
    symc_mark_output(m, node(m, "matmul", "mm_bad", (symc_tensor[]){x, y}, 2, NULL, 0), &err);
    CHECK(symc_module_infer_shapes(m, &err) != SYMC_OK);
    CHECK_CONTAINS(err.msg, "node 'mm_bad' (matmul)");
    CHECK_CONTAINS(err.msg, "never holds");
    symc_module_destroy(m);

    /* two independent symbols must be equal: narrows the declared ranges */
    m = symc_module_create("narrow", &err);
    symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
    symc_declare_symbol(m, "C", 1, 4, 32, 1, &C, &err);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){c_(m, 5), B}, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 2, (symc_dim[]){C, c_(m, 3)}, &y, &err);
    symc_mark_output(m, node(m, "matmul", "mm", (symc_tensor[]){x, y}, 2, NULL, 0), &err);
    CHECK(symc_module_infer_shapes(m, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "node 'mm' (matmul)");
    CHECK_CONTAINS(err.msg, "B");
    CHECK_CONTAINS(err.msg, "C");
    symc_module_destroy(m);

    /* reshape whose -1 needs divisibility the ranges do not give */
    m = symc_module_create("div", &err);
    symc_declare_symbol(m, "S", 1, 64, 512, 1, &S, &err);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){S, c_(m, 10)}, &x, &err);
    symc_attr ra = symc_attr_dims("shape", (symc_dim[]){SYMC_DIM_NONE, c_(m, 8)}, 2);
    symc_mark_output(m, node(m, "reshape", "r", &x, 1, &ra, 1), &err);
    CHECK(symc_module_infer_shapes(m, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "node 'r' (reshape)");
    symc_module_destroy(m);
    /* ... and with S declared a multiple of 4 it is proven: no guard at all */
    m = symc_module_create("div_ok", &err);
    symc_declare_symbol(m, "S", 4, 64, 512, 4, &S, &err);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){S, c_(m, 10)}, &x, &err);
    ra = symc_attr_dims("shape", (symc_dim[]){SYMC_DIM_NONE, c_(m, 8)}, 2);
    symc_tensor r = node(m, "reshape", "r", &x, 1, &ra, 1);
    symc_mark_output(m, r, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    EXPECT_SHAPE(m, r, "[(S//4*5), 8]");
    symc_module_destroy(m);

    /* squeeze without axes on a dim that may be 1 */
    m = symc_module_create("sq", &err);
    symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, c_(m, 1)}, &x, &err);
    symc_mark_output(m, node(m, "squeeze", "sq", &x, 1, NULL, 0), &err);
    CHECK(symc_module_infer_shapes(m, &err) == SYMC_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "node 'sq' (squeeze)");
    CHECK_CONTAINS(err.msg, "may or may not be 1");
    symc_module_destroy(m);

    /* concat of different ranks, and an axis out of range */
    m = symc_module_create("cat", &err);
    symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, c_(m, 3)}, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 1, (symc_dim[]){c_(m, 3)}, &y, &err);
    symc_attr a5 = symc_attr_int("axis", 5);
    symc_mark_output(m, node(m, "concat", "c1", (symc_tensor[]){x, y}, 2, &a5, 1), &err);
    CHECK(symc_module_infer_shapes(m, &err) != SYMC_OK);
    CHECK_CONTAINS(err.msg, "node 'c1' (concat): axis 5 is out of range for rank 2");
    symc_module_destroy(m);
    (void)z;
}

int main(void) {
    test_vit();
    test_matmul();
    test_conv_pool();
    test_resize_conv_transpose();
    test_shape_values();
    test_pad_values();
    test_errors();
    return check_report("test_shape");
}
