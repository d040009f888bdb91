/* Shape rules of the four ops added for the ONNX importer (range, tile,
 * trilu, gather_elements) and the elementwise ops of issue 15 (prelu,
 * bit_shift, bitwise_*, celu, shrink), built with the public builder API: symbolic
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

int main(void) {
    test_range();
    test_tile_trilu_gather_elements();
    test_elementwise_more();
    return check_report("test_onnx_op_rules");
}
