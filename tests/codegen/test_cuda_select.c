/* The CUDA target's kernels for sizes known only after a run
 * (codegen/cuda_emit_select.c), without a GPU: nonzero at f32, f16, bf16,
 * bool, i64 and i8 inputs of ranks 0 to 4, nms with and without its optional
 * inputs and in both box formats, unique sorted and not at f32, f16, i64 and
 * bool, each emitted by the target and compiled by NVRTC for sm_90 (cubin and
 * PTX). Checked besides: each producer's kernels write and its last kernel
 * reads the count cell cg_count_cell finds (the CUDA backend copies it after
 * that step), the nms IoU is written without contraction (__fmul_rn and
 * friends), and unique with an axis is refused by name.
 *
 * The target is driven directly (emit, dataflow check, compile on a
 * cg_build), since an engine with produced sizes needs the format-7 writer
 * of build_engine.c; the GPU test (tests/gpu/test_cuda_select_kernels.c)
 * runs the same kernels against the reference kernels. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/build.h"
#include "codegen/cuda_emit.h"
#include "symc/symc.h"
#include "tests/check.h"

static symc_tensor node(symc_module *m, const char *op, const char *name, const symc_tensor *in, uint32_t n_in,
                        const symc_attr *attrs, uint32_t n_attrs, symc_tensor *outs, uint32_t n_out) {
    symc_error err;
    symc_tensor out[3] = {SYMC_TENSOR_NONE, SYMC_TENSOR_NONE, SYMC_TENSOR_NONE};
    CHECK_MSG(symc_add_node(m, op, name, in, n_in, attrs, n_attrs, out, n_out, &err) == SYMC_OK, "%s: %s", name,
              err.msg);
    for (uint32_t i = 0; outs && i < n_out; i++) outs[i] = out[i];
    return out[0];
}

/* the node's index in the module */
static uint32_t node_index(const ir_module *m, const char *name) {
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (!strcmp(m->nodes[i].name, name)) return i;
    return IR_NONE;
}

/* Emits and compiles m's GPU code; returns the status, x to be released by the caller. */
static symc_status emit_compile(symc_module *m, cg_build *x, symc_error *err) {
    ir_module *im = (ir_module *)m;
    *x = (cg_build){.m = im, .opt = cg_default_options(), .err = err};
    x->opt.arch = "sm_90";
    x->opt.tune = 0;
    x->opt.nvrtc_modules = 1;
    x->b = (cg_builder){.m = im, .opt = &x->opt, .err = err};
    symc_status st = symc_module_infer_shapes(m, err);
    if (!st) st = cg_target_cuda.emit(&x->b);
    if (!st) st = cg_check_dataflow(&x->b);
    if (!st) st = cg_target_cuda.compile(&x->b);
    if (!st && getenv("SYMC_TEST_DUMP_CUDA")) printf("%s\n", x->b.source);
    return st;
}

/* node `name` has a count cell that one of its steps writes and its last step reads; its kernels compiled */
static void check_producer(cg_build *x, const char *name, uint32_t want_steps) {
    const cg_builder *b = &x->b;
    uint32_t nd = node_index(x->m, name), cell = cg_count_cell(x->m, b->steps, b->n_steps, nd), n = 0, last = 0;
    CHECK_MSG(cell != RT_NONE, "%s: no count cell", name);
    for (uint32_t i = 0; i < b->n_steps; i++)
        if (b->steps[i].node == nd) n++, last = i;
    CHECK_MSG(n == want_steps, "%s: %u steps, expected %u", name, n, want_steps);
    int reads = 0;
    for (uint32_t a = 0; n && a < b->steps[last].n_args; a++)
        reads |= b->steps[last].args[a].kind == RT_ARG_TENSOR && b->steps[last].args[a].value == cell;
    CHECK_MSG(reads, "%s: its last step does not read the count cell", name);
    CHECK(b->n_modules == 1 && b->modules[0].cubin_size > 0 && b->modules[0].ptx &&
          strstr(b->modules[0].ptx, ".entry"));
    CHECK(cg_count_cell(x->m, b->steps, b->n_steps, IR_NONE) == RT_NONE);
}

static void test_nonzero(symc_dtype dt, int32_t rank) {
    symc_error err;
    symc_module *m = symc_module_create("nz", &err);
    symc_dim N, d[4];
    CHECK(symc_declare_symbol(m, "N", 0, 64, 1 << 22, 1, &N, &err) == SYMC_OK);
    for (int32_t i = 0; i < rank; i++) d[i] = i == 0 ? N : symc_dim_const(m, 2 + i);
    symc_tensor xin;
    CHECK(symc_add_input(m, "x", dt, rank, d, &xin, &err) == SYMC_OK);
    symc_mark_output(m, node(m, "nonzero", "nz", &xin, 1, NULL, 0, NULL, 1), &err);
    cg_build x;
    symc_status st = emit_compile(m, &x, &err);
    CHECK_MSG(!st, "nonzero %s rank %d: %s", symc_dtype_name(dt), rank, err.msg);
    if (!st) {
        check_producer(&x, "nz", 3);
        CHECK_CONTAINS(x.b.source, "__syncthreads_count");
        CHECK_CONTAINS(x.b.source, "__shfl_up_sync");
    }
    cg_build_release(&x);
    symc_module_destroy(m);
}

/* nms: n_in 2..5 inputs, center or corner boxes, boxes and scores of dtype dt */
static void test_nms(uint32_t n_in, int center, symc_dtype dt) {
    symc_error err;
    symc_module *m = symc_module_create("nms", &err);
    symc_dim B, C, N;
    CHECK(symc_declare_symbol(m, "B", 1, 1, 4, 1, &B, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "C", 1, 3, 90, 1, &C, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "N", 0, 100, 5000, 1, &N, &err) == SYMC_OK);
    symc_dim bd[3] = {B, N, symc_dim_const(m, 4)}, sd[3] = {B, C, N}, one[1] = {symc_dim_const(m, 1)};
    symc_tensor in[5];
    CHECK(symc_add_input(m, "boxes", dt, 3, bd, &in[0], &err) == SYMC_OK);
    CHECK(symc_add_input(m, "scores", dt, 3, sd, &in[1], &err) == SYMC_OK);
    CHECK(symc_add_input(m, "max_out", SYMC_I64, 1, one, &in[2], &err) == SYMC_OK);
    CHECK(symc_add_input(m, "iou", SYMC_F32, 1, one, &in[3], &err) == SYMC_OK);
    CHECK(symc_add_input(m, "thr", SYMC_F32, 1, one, &in[4], &err) == SYMC_OK);
    symc_attr a = symc_attr_int("center_point_box", center);
    symc_mark_output(m, node(m, "nms", "sel", in, n_in, &a, 1, NULL, 1), &err);
    cg_build x;
    symc_status st = emit_compile(m, &x, &err);
    CHECK_MSG(!st, "nms %u inputs center %d: %s", n_in, center, err.msg);
    if (!st) {
        check_producer(&x, "sel", 3);
        CHECK_CONTAINS(x.b.source, "__fmul_rn(__fsub_rn(x_hi, x_lo), __fsub_rn(y_hi, y_lo))");
        CHECK_CONTAINS(x.b.source, "__fsub_rn(__fadd_rn(area_p, area_q), inter)");
        CHECK_CONTAINS(x.b.source, "__fdiv_rn(inter, uni) > iou");
    }
    cg_build_release(&x);
    symc_module_destroy(m);
}

static void test_unique(symc_dtype dt, int sorted) {
    symc_error err;
    symc_module *m = symc_module_create("uq", &err);
    symc_dim N, d[2];
    CHECK(symc_declare_symbol(m, "N", 0, 64, 4096, 1, &N, &err) == SYMC_OK);
    d[0] = N, d[1] = symc_dim_const(m, 3);
    symc_tensor xin, outs[3];
    CHECK(symc_add_input(m, "x", dt, 2, d, &xin, &err) == SYMC_OK);
    symc_attr a = symc_attr_int("sorted", sorted);
    node(m, "unique", "uq", &xin, 1, &a, 1, outs, 3);
    for (int i = 0; i < 3; i++) symc_mark_output(m, outs[i], &err);
    cg_build x;
    symc_status st = emit_compile(m, &x, &err);
    CHECK_MSG(!st, "unique %s sorted %d: %s", symc_dtype_name(dt), sorted, err.msg);
    if (!st) check_producer(&x, "uq", 4);
    cg_build_release(&x);
    symc_module_destroy(m);
}

static void test_unique_axis_refused(void) {
    symc_error err;
    symc_module *m = symc_module_create("uq_axis", &err);
    symc_dim d[2] = {symc_dim_const(m, 4), symc_dim_const(m, 3)};
    symc_tensor xin, outs[3];
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, d, &xin, &err) == SYMC_OK);
    symc_attr a = symc_attr_int("axis", 0);
    node(m, "unique", "rows", &xin, 1, &a, 1, outs, 3);
    for (int i = 0; i < 3; i++) symc_mark_output(m, outs[i], &err);
    cg_build x;
    symc_status st = emit_compile(m, &x, &err);
    CHECK_MSG(st == SYMC_ERR_UNSUPPORTED, "%s", st ? err.msg : "built");
    CHECK_CONTAINS(err.msg, "'rows'");
    CHECK_CONTAINS(err.msg, "reference backend only");
    cg_build_release(&x);
    symc_module_destroy(m);
}

int main(void) {
    static const symc_dtype nz_types[] = {SYMC_F32, SYMC_F16, SYMC_BF16, SYMC_BOOL, SYMC_I64, SYMC_I8};
    for (size_t i = 0; i < sizeof nz_types / sizeof *nz_types; i++)
        for (int32_t rank = 1; rank <= 4; rank++) test_nonzero(nz_types[i], rank);
    test_nonzero(SYMC_F32, 0);
    test_nms(2, 0, SYMC_F32);
    test_nms(3, 0, SYMC_F32);
    test_nms(5, 0, SYMC_F32);
    test_nms(5, 1, SYMC_F32);
    test_nms(4, 1, SYMC_F64);
    static const symc_dtype uq_types[] = {SYMC_F32, SYMC_F16, SYMC_I64, SYMC_BOOL};
    for (size_t i = 0; i < sizeof uq_types / sizeof *uq_types; i++)
        for (int sorted = 0; sorted < 2; sorted++) test_unique(uq_types[i], sorted);
    test_unique_axis_refused();
    return check_report("codegen_test_cuda_select");
}
