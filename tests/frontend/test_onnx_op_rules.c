/* Shape rules of the four ops added for the ONNX importer (range, tile,
 * trilu, gather_elements) and the elementwise ops of issue 15 (prelu,
 * bit_shift, bitwise_*, celu, shrink) and the spatial ops for conformance
 * (grid_sample, dft, col2im, det, 3-D pooling) and the ops whose output size depends on the
 * data (nonzero, unique, nms: the unbacked symbol and its bound), built with the public builder API: symbolic
 * lengths and sizes, symbolic element values of a short range, and the
 * errors each rule reports. The importer tests exercise them through ONNX
 * models; these cover the cases a model does not reach easily. */
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "passes/passes.h"
#include "tests/check.h"

static symc_error err;

typedef struct fx {
    symc_module *m;
    symc_dim B, D;
    symc_tensor x;
} fx;

static fx setup(void) {
    fx f;
    f.m = symc_module_create("rules", &err);
    symc_declare_symbol(f.m, "B", 1, 4, 8, 1, &f.B, &err);
    symc_declare_symbol(f.m, "D", -2, 1, 2, 1, &f.D, &err);
    symc_dim dims[2] = {f.B, symc_dim_const(f.m, 3)};
    symc_add_input(f.m, "x", SYMC_F32, 2, dims, &f.x, &err);
    return f;
}

/* Adds one node and infers shapes; returns the status of the inference. */
static symc_status add(fx *f, const char *op, const symc_tensor *in, uint32_t n_in, const symc_attr *a, uint32_t na,
                       symc_tensor *out) {
    symc_error_clear(&err);
    symc_status st = symc_add_node(f->m, op, NULL, in, n_in, a, na, out, 1, &err);
    if (st) return st;
    return pass_infer_node(f->m, f->m->n_nodes - 1, &err);
}

static const char *shape(fx *f, symc_tensor t) {
    static char buf[256];
    size_t n = 0;
    const ir_tensor *x = &f->m->tensors[t];
    buf[n++] = '[';
    for (int d = 0; d < x->rank; d++) {
        if (d) n += (size_t)snprintf(buf + n, sizeof buf - n, ", ");
        n += sym_print(f->m->syms, x->dims[d], buf + n, sizeof buf - n);
    }
    snprintf(buf + n, sizeof buf - n, "]");
    return buf;
}

static void test_range(void) {
    fx f = setup();
    symc_dim zero = symc_dim_const(f.m, 0), two = symc_dim_const(f.m, 2), m1 = symc_dim_const(f.m, -1);
    symc_tensor y;
    symc_attr a[4] = {symc_attr_dims("start", &zero, 1), symc_attr_dims("limit", &f.B, 1),
                      symc_attr_dims("delta", &two, 1), symc_attr_dtype("to", SYMC_I64)};
    CHECK_MSG(add(&f, "range", NULL, 0, a, 4, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[(B+1)//2]"));
    symc_attr down[4] = {symc_attr_dims("start", &f.B, 1), symc_attr_dims("limit", &zero, 1),
                         symc_attr_dims("delta", &m1, 1), symc_attr_dtype("to", SYMC_F32)};
    CHECK_MSG(add(&f, "range", NULL, 0, down, 4, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[B]") && f.m->tensors[y].dtype == SYMC_F32);
    /* empty when the limit is behind the start: max(..., 0), never negative */
    symc_attr empty[4] = {symc_attr_dims("start", &f.B, 1), symc_attr_dims("limit", &zero, 1),
                          symc_attr_dims("delta", &two, 1), symc_attr_dtype("to", SYMC_I64)};
    CHECK_MSG(add(&f, "range", NULL, 0, empty, 4, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[0]"));
    /* a short constant range carries its elements, symbolically */
    symc_dim five = symc_dim_const(f.m, 5), three = symc_dim_const(f.m, 3);
    symc_attr vals[4] = {symc_attr_dims("start", &f.B, 1),
                         symc_attr_dims("limit", &(symc_dim){symc_dim_add(f.m, f.B, five)}, 1),
                         symc_attr_dims("delta", &three, 1), symc_attr_dtype("to", SYMC_I64)};
    CHECK_MSG(add(&f, "range", NULL, 0, vals, 4, &y) == SYMC_OK, "%s", err.msg);
    const ir_tensor *t = &f.m->tensors[y];
    CHECK(!strcmp(shape(&f, y), "[2]") && t->n_value == 2);
    if (t->n_value == 2) {
        char b0[32], b1[32];
        sym_print(f.m->syms, t->value[0], b0, sizeof b0);
        sym_print(f.m->syms, t->value[1], b1, sizeof b1);
        CHECK(!strcmp(b0, "B") && !strcmp(b1, "(B+3)"));
    }
    symc_attr bad[4] = {symc_attr_dims("start", &zero, 1), symc_attr_dims("limit", &f.B, 1),
                        symc_attr_dims("delta", &f.D, 1), symc_attr_dtype("to", SYMC_I64)};
    CHECK(add(&f, "range", NULL, 0, bad, 4, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "(range): delta D may be zero or change sign for the declared ranges");
    symc_attr two_starts[4] = {symc_attr_dims("start", (symc_dim[]){zero, zero}, 2), a[1], a[2], a[3]};
    CHECK(add(&f, "range", NULL, 0, two_starts, 4, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "attribute 'start' must hold one expression, has 2");
    symc_module_destroy(f.m);
}

static void test_tile_trilu_gather_elements(void) {
    fx f = setup();
    symc_tensor y;
    symc_dim reps[2] = {symc_dim_const(f.m, 2), f.B};
    symc_attr r = symc_attr_dims("repeats", reps, 2);
    CHECK_MSG(add(&f, "tile", &f.x, 1, &r, 1, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[(B*2), (B*3)]"), "%s", shape(&f, y));
    symc_attr r1 = symc_attr_dims("repeats", reps, 1);
    CHECK(add(&f, "tile", &f.x, 1, &r1, 1, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "repeats has 1 entries but 'x' has rank 2");
    symc_dim neg[2] = {f.D, f.B};
    symc_attr rn = symc_attr_dims("repeats", neg, 2);
    CHECK(add(&f, "tile", &f.x, 1, &rn, 1, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "repeats entry 0 = D may be negative");

    symc_attr tk[2] = {symc_attr_int("upper", 0), symc_attr_int("k", 1)};
    CHECK_MSG(add(&f, "trilu", &f.x, 1, tk, 2, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[B, 3]"));
    symc_tensor v;
    symc_dim vd[1] = {f.B};
    symc_add_input(f.m, "v", SYMC_F32, 1, vd, &v, &err);
    CHECK(add(&f, "trilu", &v, 1, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "input 'v' has rank 1, needs >= 2");

    symc_tensor idx, idx1, idx_big;
    symc_dim id[2] = {symc_dim_const(f.m, 1), symc_dim_const(f.m, 5)};
    symc_add_input(f.m, "idx", SYMC_I64, 2, id, &idx, &err);
    symc_add_input(f.m, "idx1", SYMC_I64, 1, id, &idx1, &err);
    symc_dim big[2] = {symc_dim_const(f.m, 9), symc_dim_const(f.m, 1)};
    symc_add_input(f.m, "idx_big", SYMC_I32, 2, big, &idx_big, &err);
    symc_attr ax = symc_attr_int("axis", 1);
    CHECK_MSG(add(&f, "gather_elements", (symc_tensor[]){f.x, idx}, 2, &ax, 1, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[1, 5]")); /* along the axis the indices may be longer */
    CHECK(add(&f, "gather_elements", (symc_tensor[]){f.x, idx1}, 2, &ax, 1, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "indices 'idx1' have rank 1 but data 'x' has rank 2");
    /* 9 rows of indices into B <= 8 rows never fits */
    CHECK(add(&f, "gather_elements", (symc_tensor[]){f.x, idx_big}, 2, &ax, 1, &y) != SYMC_OK);
    CHECK_CONTAINS(err.msg, "dim 0 of indices 'idx_big' must not exceed that of data 'x'");
    symc_tensor xf;
    symc_add_input(f.m, "xf", SYMC_F32, 2, id, &xf, &err);
    CHECK(symc_add_node(f.m, "gather_elements", NULL, (symc_tensor[]){f.x, xf}, 2, &ax, 1, &y, 1, &err) ==
          SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "(gather_elements): indices 'xf' are f32, must be i32 or i64");
    symc_module_destroy(f.m);
}

/* The elementwise ops of issue 15: category rules (broadcast, same dtype) and
 * the verifier's attribute checks. */
static void test_elementwise_more(void) {
    fx f = setup();
    symc_tensor y, slope, u8, u8b, i8;
    symc_dim one3[2] = {symc_dim_const(f.m, 1), symc_dim_const(f.m, 3)};
    symc_add_input(f.m, "slope", SYMC_F32, 2, one3, &slope, &err);
    CHECK_MSG(add(&f, "prelu", (symc_tensor[]){f.x, slope}, 2, NULL, 0, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[B, 3]") && f.m->tensors[y].dtype == SYMC_F32);
    symc_dim d4[1] = {symc_dim_const(f.m, 4)};
    symc_add_input(f.m, "u8", SYMC_U8, 1, d4, &u8, &err);
    symc_add_input(f.m, "u8b", SYMC_U8, 1, d4, &u8b, &err);
    symc_add_input(f.m, "i8", SYMC_I8, 1, d4, &i8, &err);
    symc_attr left = symc_attr_str("direction", "left");
    CHECK_MSG(add(&f, "bit_shift", (symc_tensor[]){u8, u8b}, 2, &left, 1, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[4]") && f.m->tensors[y].dtype == SYMC_U8);
    symc_attr up = symc_attr_str("direction", "up");
    CHECK(add(&f, "bit_shift", (symc_tensor[]){u8, u8b}, 2, &up, 1, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "attribute 'direction' = 'up' must be left or right");
    CHECK(add(&f, "bit_shift", (symc_tensor[]){u8, u8b}, 2, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "missing required attribute 'direction'");
    CHECK(add(&f, "bitwise_xor", (symc_tensor[]){u8, i8}, 2, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "input 1 'i8' is i8 but input 0 'u8' is u8; they must agree");
    symc_attr a0 = symc_attr_float("alpha", 0);
    CHECK(add(&f, "celu", &f.x, 1, &a0, 1, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "(celu): attribute 'alpha' must not be 0");
    symc_attr sh[2] = {symc_attr_float("bias", 0), symc_attr_float("lambd", 0.5)};
    CHECK_MSG(add(&f, "shrink", &f.x, 1, sh, 2, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[B, 3]"));
    symc_module_destroy(f.m);
}

/* grid_sample, dft, col2im, det and 3-D pooling: symbolic dims flow through,
 * and each rule's refusals */
static void test_spatial_rules(void) {
    fx f = setup();
    symc_tensor x4, g, y, s, col, m3, v5;
    symc_dim S;
    symc_declare_symbol(f.m, "S", 1, 4, 8, 1, &S, &err);
    symc_dim xd[4] = {f.B, symc_dim_const(f.m, 3), S, symc_dim_const(f.m, 5)};
    symc_add_input(f.m, "x4", SYMC_F32, 4, xd, &x4, &err);
    symc_dim gd[4] = {f.B, symc_dim_const(f.m, 7), S, symc_dim_const(f.m, 2)};
    symc_add_input(f.m, "g", SYMC_F32, 4, gd, &g, &err);
    symc_attr ga[2] = {symc_attr_str("mode", "linear"), symc_attr_str("padding_mode", "zeros")};
    CHECK_MSG(add(&f, "grid_sample", (symc_tensor[]){x4, g}, 2, ga, 2, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[B, 3, 7, S]"), "%s", shape(&f, y));
    CHECK(add(&f, "grid_sample", (symc_tensor[]){x4, x4}, 2, ga, 2, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "the last dim of grid 'x4' is 5, must be 2");
    /* dft along a symbolic-free axis of [B, 8, 2]: onesided keeps 8 / 2 + 1 bins */
    symc_dim sd[3] = {f.B, symc_dim_const(f.m, 8), symc_dim_const(f.m, 2)};
    symc_add_input(f.m, "s", SYMC_F32, 3, sd, &s, &err);
    symc_attr da[3] = {symc_attr_int("axis", 1), symc_attr_int("length", 8), symc_attr_int("onesided", 1)};
    CHECK_MSG(add(&f, "dft", &s, 1, da, 3, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[B, 5, 2]"), "%s", shape(&f, y));
    symc_attr inv[4] = {da[0], da[1], da[2], symc_attr_int("inverse", 1)};
    CHECK_MSG(add(&f, "dft", &s, 1, inv, 4, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[B, 8, 1]"), "%s", shape(&f, y));
    symc_attr bad[2] = {symc_attr_int("axis", 2), da[1]};
    CHECK(add(&f, "dft", &s, 1, bad, 2, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "before the last");
    /* col2im: [B, 2 * 4, 9] with 2x2 blocks over a 4x4 image */
    symc_dim cd[3] = {f.B, symc_dim_const(f.m, 8), symc_dim_const(f.m, 9)};
    symc_add_input(f.m, "col", SYMC_F32, 3, cd, &col, &err);
    symc_attr ca[2] = {symc_attr_ints("image_shape", (const int64_t[]){4, 4}, 2),
                       symc_attr_ints("block_shape", (const int64_t[]){2, 2}, 2)};
    CHECK_MSG(add(&f, "col2im", &col, 1, ca, 2, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[B, 2, 4, 4]"), "%s", shape(&f, y));
    symc_attr cb[2] = {symc_attr_ints("image_shape", (const int64_t[]){5, 4}, 2), ca[1]};
    CHECK(add(&f, "col2im", &col, 1, cb, 2, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "block positions");
    /* det of [B, 3, 3]; a non-square matrix is refused */
    symc_dim md[3] = {f.B, symc_dim_const(f.m, 3), symc_dim_const(f.m, 3)};
    symc_add_input(f.m, "m3", SYMC_F32, 3, md, &m3, &err);
    CHECK_MSG(add(&f, "det", &m3, 1, NULL, 0, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[B]"), "%s", shape(&f, y));
    CHECK(add(&f, "det", &s, 1, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "square");
    /* 3-D max pooling and its indices over [B, 3, 6, 6, 6] */
    symc_dim vd[5] = {f.B, symc_dim_const(f.m, 3), symc_dim_const(f.m, 6), symc_dim_const(f.m, 6),
                      symc_dim_const(f.m, 6)};
    symc_add_input(f.m, "v5", SYMC_F32, 5, vd, &v5, &err);
    symc_attr pa[2] = {symc_attr_ints("kernel", (const int64_t[]){2, 2, 3}, 3),
                       symc_attr_ints("strides", (const int64_t[]){2, 2, 3}, 3)};
    CHECK_MSG(add(&f, "max_pool2d", &v5, 1, pa, 2, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[B, 3, 3, 3, 2]"), "%s", shape(&f, y));
    CHECK_MSG(add(&f, "max_pool_indices", &v5, 1, pa, 2, &y) == SYMC_OK, "%s", err.msg);
    CHECK(!strcmp(shape(&f, y), "[B, 3, 3, 3, 2]") && f.m->tensors[y].dtype == SYMC_I64);
    symc_attr p2 = symc_attr_ints("kernel", (const int64_t[]){2, 2}, 2);
    CHECK(add(&f, "avg_pool2d", &v5, 1, &p2, 1, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "attribute 'kernel' has 2 entries, needs 3");
    symc_module_destroy(f.m);
}

/* The bound of the unbacked symbol that is dim d of t, as text ("" if none). */
static const char *bound_of(fx *f, symc_tensor t, int d) {
    static char buf[128];
    buf[0] = 0;
    sym_view v;
    const ir_tensor *x = &f->m->tensors[t];
    if (x->rank <= d || !sym_expr_view(f->m->syms, x->dims[d], &v) || v.kind != SYM_SYMBOL) return buf;
    sym_expr b = sym_symbol_bound(f->m->syms, (sym_id)v.value);
    if (b != SYM_NONE) sym_print(f->m->syms, b, buf, sizeof buf);
    return buf;
}

/* nonzero, unique and nms: each output dim the op produces is a new
 * unbacked symbol u<i> with the bound the op derives; inferring the node
 * again keeps it (the pipeline re-runs inference after its passes). */
static void test_data_dependent(void) {
    fx f = setup();
    symc_tensor c23, y, y2, u3[3];
    symc_dim cd[2] = {symc_dim_const(f.m, 2), symc_dim_const(f.m, 3)};
    symc_add_input(f.m, "c23", SYMC_BOOL, 2, cd, &c23, &err);
    CHECK_MSG(add(&f, "nonzero", &c23, 1, NULL, 0, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[2, u0]"), "%s", shape(&f, y));
    CHECK_MSG(!strcmp(bound_of(&f, y, 1), "6"), "bound %s", bound_of(&f, y, 1));
    CHECK(f.m->tensors[y].dtype == SYMC_I64);
    sym_id u0;
    CHECK(sym_symbol_find(f.m->syms, "u0", &u0) && sym_range_of(f.m->syms, sym_var(f.m->syms, u0)).hi == 6);
    CHECK_MSG(pass_infer_node(f.m, f.m->n_nodes - 1, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[2, u0]"), "again: %s", shape(&f, y));
    CHECK_MSG(add(&f, "nonzero", &f.x, 1, NULL, 0, &y2) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y2), "[2, u1]") && !strcmp(bound_of(&f, y2, 1), "(B*3)"), "%s bound %s", shape(&f, y2),
              bound_of(&f, y2, 1));

    /* unique: without an axis over numel, with one over that dim */
    symc_error_clear(&err);
    CHECK_MSG(symc_add_node(f.m, "unique", NULL, &f.x, 1, NULL, 0, u3, 3, &err) == SYMC_OK &&
                  pass_infer_node(f.m, f.m->n_nodes - 1, &err) == SYMC_OK,
              "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, u3[0]), "[u2]") && !strcmp(bound_of(&f, u3[0], 0), "(B*3)"), "%s bound %s",
              shape(&f, u3[0]), bound_of(&f, u3[0], 0));
    CHECK_MSG(!strcmp(shape(&f, u3[1]), "[(B*3)]"), "%s", shape(&f, u3[1]));
    CHECK_MSG(!strcmp(shape(&f, u3[2]), "[u2]"), "%s", shape(&f, u3[2]));
    symc_attr ax = symc_attr_int("axis", -2);
    CHECK_MSG(symc_add_node(f.m, "unique", NULL, &f.x, 1, &ax, 1, u3, 3, &err) == SYMC_OK &&
                  pass_infer_node(f.m, f.m->n_nodes - 1, &err) == SYMC_OK,
              "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, u3[0]), "[u3]") && !strcmp(bound_of(&f, u3[0], 0), "B") &&
                  !strcmp(shape(&f, u3[1]), "[B]"),
              "%s %s bound %s", shape(&f, u3[0]), shape(&f, u3[1]), bound_of(&f, u3[0], 0));
    symc_attr srt = symc_attr_int("sorted", 3);
    CHECK(symc_add_node(f.m, "unique", NULL, &f.x, 1, &srt, 1, u3, 3, &err) == SYMC_OK);
    CHECK(pass_infer_node(f.m, f.m->n_nodes - 1, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "sorted = 3 must be 0 or 1");

    /* nms: [u, 3], u <= B*C*N */
    symc_dim C, N;
    symc_declare_symbol(f.m, "C", 1, 2, 4, 1, &C, &err);
    symc_declare_symbol(f.m, "N", 1, 10, 100, 1, &N, &err);
    symc_tensor boxes, scores, mo, iou, thr, two, boxes5;
    symc_dim one = symc_dim_const(f.m, 1);
    symc_add_input(f.m, "boxes", SYMC_F32, 3, (symc_dim[]){f.B, N, symc_dim_const(f.m, 4)}, &boxes, &err);
    symc_add_input(f.m, "boxes5", SYMC_F32, 3, (symc_dim[]){f.B, N, symc_dim_const(f.m, 5)}, &boxes5, &err);
    symc_add_input(f.m, "scores", SYMC_F32, 3, (symc_dim[]){f.B, C, N}, &scores, &err);
    symc_add_input(f.m, "mo", SYMC_I64, 1, &one, &mo, &err);
    symc_add_input(f.m, "iou", SYMC_F32, 1, &one, &iou, &err);
    symc_add_input(f.m, "thr", SYMC_F32, 0, NULL, &thr, &err);
    symc_add_input(f.m, "two", SYMC_F32, 1, (symc_dim[]){symc_dim_const(f.m, 2)}, &two, &err);
    symc_tensor in5[5] = {boxes, scores, mo, iou, thr};
    CHECK_MSG(add(&f, "nms", in5, 5, NULL, 0, &y) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(!strcmp(shape(&f, y), "[u4, 3]") && !strcmp(bound_of(&f, y, 0), "(B*C*N)"), "%s bound %s", shape(&f, y),
              bound_of(&f, y, 0));
    CHECK_MSG(add(&f, "nms", in5, 2, NULL, 0, &y) == SYMC_OK, "%s", err.msg); /* the optional inputs left out */
    CHECK_MSG(!strcmp(shape(&f, y), "[u5, 3]"), "%s", shape(&f, y));
    CHECK(add(&f, "nms", (symc_tensor[]){boxes5, scores}, 2, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "boxes 'boxes5' must be [B, N, 4]");
    CHECK(add(&f, "nms", (symc_tensor[]){boxes, f.x}, 2, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "scores 'x' must be [B, C, N]");
    CHECK(add(&f, "nms", (symc_tensor[]){boxes, scores, mo, two}, 4, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "iou_threshold 'two' must hold one element");
    CHECK(add(&f, "nms", (symc_tensor[]){boxes, scores, iou}, 3, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "max_output_boxes_per_class 'iou' must be an integer tensor, is f32");
    /* scores whose box count is another declared symbol: the ranges say nothing ties them */
    symc_dim M;
    symc_declare_symbol(f.m, "M", 1, 10, 100, 1, &M, &err);
    symc_tensor sm;
    symc_add_input(f.m, "sm", SYMC_F32, 3, (symc_dim[]){f.B, C, M}, &sm, &err);
    CHECK(add(&f, "nms", (symc_tensor[]){boxes, sm}, 2, NULL, 0, &y) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "fix: declare M and N as one symbol");
    symc_tensor s7;
    symc_add_input(f.m, "s7", SYMC_F32, 3, (symc_dim[]){f.B, C, symc_dim_const(f.m, 7)}, &s7, &err);
    symc_tensor b8;
    symc_add_input(f.m, "b8", SYMC_F32, 3, (symc_dim[]){f.B, symc_dim_const(f.m, 8), symc_dim_const(f.m, 4)}, &b8,
                   &err);
    CHECK(add(&f, "nms", (symc_tensor[]){b8, s7}, 2, NULL, 0, &y) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg, "scores 's7' must have one entry a box of 'b8': 7 == 8 never holds");
    symc_module_destroy(f.m);
}

int main(void) {
    test_range();
    test_tile_trilu_gather_elements();
    test_elementwise_more();
    test_spatial_rules();
    test_data_dependent();
    return check_report("test_onnx_op_rules");
}
