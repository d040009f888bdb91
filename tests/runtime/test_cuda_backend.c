/* The CUDA backend where it can be tested without a GPU, and its wiring.
 *
 * An engine is made by hand (rt_engine + rt_engine_encode, no compiler
 * needed): y = relu(x) over [N], with one fake kernel step. On a machine
 * without a driver, or without a GPU, the CUDA backend must refuse in one
 * line that names the driver, never crash, and leave the reference backend
 * working; rt_cuda_device_sm, rt_cuda_driver and the build-time tuning
 * session (runtime/cuda/cuda_tuning.h) fail the same way. With a GPU present,
 * creating a context or a tuning session on an engine whose PTX is not real
 * must fail cleanly in the JIT, and one with no GPU code must say so. The decoder
 * must refuse steps that point outside the engine (kernel, tensor, node,
 * argument slot), a kernel in a module the engine does not have (or in none),
 * a module with neither cubin nor PTX, malformed tuned entries (on a kernel step, a negative size
 * or time, a NaN time, a choice of the wrong size or none) and chained
 * aliases. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_tuning.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "symshape/sym.h"
#include "tests/check.h"

typedef struct fixture {
    uint8_t *program;
    size_t program_size;
    rt_symbol sym;
    rt_source src;
    rt_tensor tensors[2];
    uint32_t in[1], out[1];
    rt_node node;
    const char *kernel_names[1];
    uint32_t kernel_module[1];
    rt_module module;
    rt_arg args[3];
    rt_step step;
    uint32_t aliases[2];
    rt_engine e;
} fixture;

static void make(fixture *f) {
    memset(f, 0, sizeof *f);
    symc_error err = {0};
    sym_table *t = sym_table_new();
    sym_id n;
    sym_symbol_info info = {"N", 1, 4, 64, 1, "input 'x' dim 0"};
    CHECK_MSG(sym_symbol_new(t, &info, &n, &err) == SYMC_OK, "%s", err.msg);
    sym_expr e = sym_var(t, n);
    CHECK_MSG(sym_program_compile(t, &e, 1, &f->program, &f->program_size, &err) == SYMC_OK, "%s", err.msg);
    sym_table_free(t);
    f->sym = (rt_symbol){"N", 1, 4, 64, 1};
    f->src = (rt_source){0, 0, 0};
    f->tensors[0] = (rt_tensor){"x", SYMC_F32, 1, {0}, RT_NONE};
    f->tensors[1] = (rt_tensor){"y", SYMC_F32, 1, {0}, RT_NONE};
    f->in[0] = 0;
    f->out[0] = 1;
    f->node = (rt_node){IR_OP_RELU, "y", "", 1, 1, 0, f->in, f->out, NULL};
    f->kernel_names[0] = "relu_y";
    f->args[0] = (rt_arg){RT_ARG_TENSOR, 0};
    f->args[1] = (rt_arg){RT_ARG_TENSOR, 1};
    f->args[2] = (rt_arg){RT_ARG_SLOT, 0};
    f->step.kind = RT_STEP_KERNEL;
    f->step.node = 0;
    f->step.kernel = 0;
    f->step.work = 0;
    f->step.per_block = 256;
    f->step.block = 256;
    f->step.n_args = 3;
    f->step.args = f->args;
    for (int i = 0; i < RT_STEP_MAX_TENSORS; i++) f->step.tensors[i] = RT_NONE;
    f->aliases[0] = f->aliases[1] = RT_NONE;
    rt_engine *g = &f->e;
    g->format_version = RT_ENGINE_FORMAT_VERSION;
    g->symc_version = "test";
    g->cuda_version = g->cublas_version = g->cudnn_version = "";
    g->name = "cuda_test";
    g->sm = 90;
    g->symbols = &f->sym;
    g->n_symbols = 1;
    g->sources = &f->src;
    g->n_sources = 1;
    g->program = f->program;
    g->program_size = f->program_size;
    g->num_slots = 1;
    g->tensors = f->tensors;
    g->n_tensors = 2;
    g->nodes = &f->node;
    g->n_nodes = 1;
    g->inputs = f->in;
    g->n_inputs = 1;
    g->outputs = f->out;
    g->n_outputs = 1;
    g->cuda_source = "";
    /* not real PTX: enough for the decoder, and a clean JIT failure on a GPU */
    f->module.ptx = "// not PTX\n";
    g->modules = &f->module;
    g->n_modules = 1;
    g->kernel_names = f->kernel_names;
    g->kernel_module = f->kernel_module;
    g->n_kernels = 1;
    g->steps = &f->step;
    g->n_steps = 1;
}

static symrt_engine *load(const rt_engine *e, symc_status *st, symc_error *err) {
    uint8_t *bytes = NULL;
    size_t size = 0;
    symrt_engine *h = NULL;
    *st = rt_engine_encode(e, &bytes, &size, err);
    CHECK_MSG(*st == SYMC_OK, "encode: %s", err->msg);
    if (*st) return NULL;
    *st = symrt_engine_load(bytes, size, &h, err);
    free(bytes);
    return h;
}

static int one_line(const char *s) { return s[0] && !strchr(s, '\n'); }

/* The reference backend still runs the engine's nodes. */
static void check_reference(symrt_engine *h) {
    symc_error err = {0};
    symrt_context *c = NULL;
    CHECK_MSG(symrt_context_create(h, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    if (!c) return;
    float x[5] = {-1, 2, -3, 4, 0}, y[5];
    memset(y, 0xff, sizeof y);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){5}, 1, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "x", x, sizeof x, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "y", y, sizeof y, &err) == SYMC_OK);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    for (int i = 0; i < 5; i++) CHECK(y[i] == (x[i] > 0 ? x[i] : 0));
    symrt_context_destroy(c);
}

static void test_backend(void) {
    fixture f;
    make(&f);
    symc_error err = {0};
    symc_status st;
    symrt_engine *h = load(&f.e, &st, &err);
    CHECK_MSG(h != NULL, "load: %s", err.msg);
    if (!h) {
        free(f.program);
        return;
    }
    uint32_t sm = 1234;
    symc_error sm_err = {0};
    symc_status sm_st = rt_cuda_device_sm(&sm, &sm_err);
    symrt_context *c = NULL;
    if (sm_st != SYMC_OK) {
        /* no driver or no GPU: every entry point fails in one line */
        printf("no GPU here: %s\n", sm_err.msg);
        CHECK(sm == 0);
        CHECK(one_line(sm_err.msg));
        CHECK_MSG(strstr(sm_err.msg, "libcuda") || strstr(sm_err.msg, "driver") || strstr(sm_err.msg, "GPU") ||
                      strstr(sm_err.msg, "without CUDA"),
                  "%s", sm_err.msg);
        symc_error derr = {0};
        CHECK(rt_cuda_driver(&derr) == NULL);
        CHECK(derr.code != SYMC_OK && one_line(derr.msg));
        st = symrt_context_create(h, SYMRT_BACKEND_CUDA, NULL, &c, &err);
        CHECK(st != SYMC_OK);
        CHECK(c == NULL);
        CHECK(one_line(err.msg));
        CHECK_MSG(strstr(err.msg, "libcuda") || strstr(err.msg, "driver") || strstr(err.msg, "GPU") ||
                      strstr(err.msg, "without CUDA"),
                  "%s", err.msg);
        /* the same answer again (the failed load is remembered, not retried into a crash) */
        symc_error again = {0};
        CHECK(symrt_context_create(h, SYMRT_BACKEND_CUDA, NULL, &c, &again) == st);
        CHECK(!strcmp(again.msg, err.msg));
    } else {
        /* a GPU: the driver API is there, and the fake PTX fails cleanly */
        printf("GPU sm_%u present\n", sm);
        CHECK(sm >= 30);
        symc_error derr = {0};
        const rt_cuda_driver_api *d = rt_cuda_driver(&derr);
        CHECK_MSG(d != NULL, "%s", derr.msg);
        if (d) CHECK(d->sm == sm && d->device_name[0]);
        st = symrt_context_create(h, SYMRT_BACKEND_CUDA, NULL, &c, &err);
        CHECK(st != SYMC_OK && c == NULL && one_line(err.msg));
        printf("fake PTX: %s\n", err.msg);
    }
    /* build-time tuning's session on the engine in memory (no encode):
     * refused like a context, without a GPU or with the fake PTX */
    rt_cuda_tuning *tuning = (rt_cuda_tuning *)(uintptr_t)1; /* must come back NULL */
    symc_error terr = {0};
    CHECK(rt_cuda_tuning_create(&f.e, &tuning, &terr) != SYMC_OK);
    CHECK(tuning == NULL && one_line(terr.msg));
    if (sm_st != SYMC_OK) CHECK_MSG(!strcmp(terr.msg, err.msg), "%s vs %s", terr.msg, err.msg);
    rt_cuda_tuning_destroy(NULL);
    check_reference(h);
    symrt_engine_destroy(h);

    /* an engine without GPU code */
    fixture g;
    make(&g);
    g.e.sm = 0;
    g.e.n_steps = 0;
    g.e.n_kernels = 0;
    g.e.n_modules = 0;
    h = load(&g.e, &st, &err);
    CHECK_MSG(h != NULL, "load: %s", err.msg);
    if (h) {
        st = symrt_context_create(h, SYMRT_BACKEND_CUDA, NULL, &c, &err);
        CHECK(st != SYMC_OK && c == NULL && one_line(err.msg));
        if (sm_st == SYMC_OK) CHECK_CONTAINS(err.msg, "has no GPU code");
        check_reference(h);
        symrt_engine_destroy(h);
    }
    CHECK(symrt_context_create(NULL, SYMRT_BACKEND_CUDA, NULL, &c, &err) == SYMC_ERR_INVALID_ARG);
    free(g.program);
    free(f.program);
}

/* The decoder refuses GPU steps pointing outside the engine. */
static void expect_rejected(fixture *f, const char *what) {
    symc_error err = {0};
    uint8_t *bytes = NULL;
    size_t size = 0;
    symc_status st = rt_engine_encode(&f->e, &bytes, &size, &err);
    if (st == SYMC_OK) {
        symrt_engine *h = NULL;
        st = symrt_engine_load(bytes, size, &h, &err);
        CHECK_MSG(st != SYMC_OK, "%s was accepted", what);
        CHECK(h == NULL);
        if (st != SYMC_OK) CHECK(one_line(err.msg));
        symrt_engine_destroy(h);
        free(bytes);
    } /* an encoder that refuses it is fine too */
    free(f->program);
}

static void test_decode(void) {
    fixture f;
    make(&f);
    f.step.kernel = 1;
    expect_rejected(&f, "a step with kernel 1 of 1");
    make(&f);
    f.args[0].value = 7;
    expect_rejected(&f, "a tensor argument out of range");
    make(&f);
    f.args[2].value = 3;
    expect_rejected(&f, "a slot argument out of range");
    make(&f);
    f.step.work = 9;
    expect_rejected(&f, "a work slot out of range");
    make(&f);
    f.step.block = 2048;
    expect_rejected(&f, "a block of 2048 threads");
    make(&f);
    f.step.node = 5;
    expect_rejected(&f, "a step for node 5 of 1");
    make(&f);
    f.step.kind = RT_STEP_COPY;
    f.step.n_tensors = 2;
    f.step.tensors[0] = 0;
    f.step.tensors[1] = 9;
    expect_rejected(&f, "a copy to tensor 9 of 2");
    make(&f);
    f.step.kind = RT_STEP_GEMM;
    f.step.n_tensors = 2;
    f.step.tensors[0] = 0;
    f.step.tensors[1] = 1;
    expect_rejected(&f, "a GEMM step with 2 tensors");
    make(&f);
    f.step.kind = 9;
    expect_rejected(&f, "a step of kind 9");
    make(&f);
    f.module.ptx = "";
    expect_rejected(&f, "kernels without cubin or PTX");
    make(&f);
    f.e.n_modules = 0;
    expect_rejected(&f, "kernels without a module");
    make(&f);
    f.kernel_module[0] = 1;
    expect_rejected(&f, "a kernel in module 1 of 1");
    make(&f);
    f.kernel_module[0] = RT_NONE;
    expect_rejected(&f, "a kernel in module 0xffffffff of 1");
    make(&f);
    f.e.kernel_module = NULL; /* no kernel_module vector at all */
    expect_rejected(&f, "kernels without their modules");
    make(&f);
    f.aliases[0] = 1;
    f.aliases[1] = 0;
    f.e.aliases = f.aliases;
    f.e.n_aliases = 2;
    expect_rejected(&f, "chained aliases");
    make(&f);
    f.e.sm = 0;
    expect_rejected(&f, "steps without a target SM");
    /* tuned entries: only on library steps, each well formed */
    static uint8_t algo[RT_GEMM_ALGO_SIZE];
    rt_tuned t = {{8, 16, 32, 1}, 0.5f, RT_GEMM_ALGO_SIZE, algo};
    make(&f);
    f.step.n_tuned = 1;
    f.step.tuned = &t;
    expect_rejected(&f, "tuned entries on a kernel step");
    static const struct {
        int64_t at0;
        float ms;
        uint32_t algo_size;
        int null_algo;
        uint8_t kind;
        const char *what;
    } bad_entries[] = {
        {-1, 0.5f, RT_GEMM_ALGO_SIZE, 0, RT_STEP_GEMM, "a negative tuned size"},
        {8, -1.0f, RT_GEMM_ALGO_SIZE, 0, RT_STEP_GEMM, "a negative tuned time"},
        {8, 0.5f, RT_CONV_ALGO_SIZE, 0, RT_STEP_GEMM, "a GEMM choice of 4 bytes"},
        {8, 0.5f, RT_GEMM_ALGO_SIZE, 1, RT_STEP_GEMM, "a GEMM entry without a choice"},
        {8, 0.5f, RT_GEMM_ALGO_SIZE, 0, RT_STEP_CONV, "a convolution choice of 64 bytes"},
        {8, NAN, RT_GEMM_ALGO_SIZE, 0, RT_STEP_GEMM, "a NaN tuned time"},
    };
    for (size_t b = 0; b < sizeof bad_entries / sizeof bad_entries[0]; b++) {
        make(&f);
        rt_tuned entries[2] = {t, t};
        entries[1].at[0] = bad_entries[b].at0;
        entries[1].ms = bad_entries[b].ms;
        entries[1].algo_size = bad_entries[b].algo_size;
        if (bad_entries[b].null_algo) entries[1].algo = NULL;
        f.step.kind = bad_entries[b].kind;
        f.step.n_tensors = bad_entries[b].kind == RT_STEP_GEMM ? 5 : 4;
        const uint32_t tensors[5] = {0, 1, RT_NONE, RT_NONE, 1};
        memcpy(f.step.tensors, tensors, sizeof tensors);
        if (bad_entries[b].kind == RT_STEP_CONV) entries[0].algo_size = RT_CONV_ALGO_SIZE;
        f.step.n_tuned = 2;
        f.step.tuned = entries;
        expect_rejected(&f, bad_entries[b].what);
    }
    /* a GEMM step with entries loads, and keeps them */
    make(&f);
    rt_tuned two[2] = {t, t};
    two[1].at[0] = 4096;
    f.step.kind = RT_STEP_GEMM;
    f.step.n_tensors = 5;
    const uint32_t gt[5] = {0, 0, RT_NONE, RT_NONE, 1}; /* y = x x^T: reads the input, writes the output */
    memcpy(f.step.tensors, gt, sizeof gt);
    f.step.n_tuned = 2;
    f.step.tuned = two;
    {
        symc_error lerr = {0};
        uint8_t *bytes = NULL;
        size_t size = 0;
        rt_engine *d = NULL;
        CHECK_MSG(rt_engine_encode(&f.e, &bytes, &size, &lerr) == SYMC_OK, "%s", lerr.msg);
        CHECK_MSG(bytes && rt_engine_decode(bytes, size, &d, &lerr) == SYMC_OK, "%s", lerr.msg);
        if (d) CHECK(d->steps[0].n_tuned == 2 && d->steps[0].tuned[1].at[0] == 4096);
        rt_engine_free(d);
        free(bytes);
    }
    free(f.program);
    /* and the well-formed one loads */
    make(&f);
    symc_error err = {0};
    symc_status st;
    symrt_engine *h = load(&f.e, &st, &err);
    CHECK_MSG(h != NULL, "%s", err.msg);
    symrt_engine_destroy(h);
    free(f.program);
}

int main(void) {
    test_backend();
    test_decode();
    return check_report("runtime_test_cuda_backend");
}
