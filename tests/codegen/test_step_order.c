/* The engine loader checks the GPU steps' order (issue 30 item 6), as it checks the nodes': an
 * engine compiled for sm_90 here (NVRTC; no GPU needed), decoded, edited and re-encoded with a
 * valid checksum. The steps reversed, a kernel's written argument marked read (its result then
 * read before anything writes it), the step computing the output dropped: each refused naming the
 * step, its kernel or node and the tensor; the kernels' write flags all dropped (an engine written
 * before they were recorded) loads unchecked; the unedited engine, re-encoded, loads. The built
 * engine records every kernel's write flags, and the check passes on it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"

/* y = abs(neg(relu(x)) * w) over x [B, 64]: several kernels (the fuse pass joins some) */
static uint8_t *build(size_t *size) {
    symc_error err;
    symc_module *m = symc_module_create("steps", &err);
    symc_dim B = SYMC_DIM_NONE;
    CHECK(m && symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err) == SYMC_OK);
    symc_dim dims[] = {B, symc_dim_const(m, 64)};
    symc_tensor x, a, b, c, y, s, w;
    float wv[64];
    for (int i = 0; i < 64; i++) wv[i] = (float)i;
    int64_t wd[] = {64};
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "w", SYMC_F32, 1, wd, wv, sizeof wv, &w, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "a", &x, 1, NULL, 0, &a, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "neg", "b", &a, 1, NULL, 0, &b, 1, &err) == SYMC_OK);
    symc_tensor bw[2] = {b, w};
    CHECK(symc_add_node(m, "mul", "c", bw, 2, NULL, 0, &c, 1, &err) == SYMC_OK);
    symc_attr axes = symc_attr_ints("axes", (const int64_t[]){1}, 1);
    CHECK(symc_add_node(m, "reduce_sum", "s", &c, 1, &axes, 1, &s, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "abs", "y", &s, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = 1;
    o.arch = "sm_90";
    o.tune = 0;
    const char *path = "test_step_order.symx";
    symc_status st = symc_module_compile(m, &o, path, &err);
    CHECK_MSG(st == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    FILE *f = st ? NULL : fopen(path, "rb");
    uint8_t *bytes = NULL;
    if (f) {
        fseek(f, 0, SEEK_END);
        *size = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        bytes = malloc(*size);
        if (bytes && fread(bytes, 1, *size, f) != *size) free(bytes), bytes = NULL;
        fclose(f);
    }
    remove(path);
    return bytes;
}

/* encodes e and loads it: the status, and the message in err */
static symc_status reload(const rt_engine *e, symc_error *err) {
    uint8_t *b = NULL;
    size_t n = 0;
    symc_status st = rt_engine_encode(e, &b, &n, err);
    CHECK_MSG(st == SYMC_OK, "encode: %s", err->msg);
    symrt_engine *loaded = NULL;
    if (!st) st = symrt_engine_load(b, n, &loaded, err);
    symrt_engine_destroy(loaded);
    free(b);
    return st;
}

int main(void) {
    size_t size = 0;
    uint8_t *bytes = build(&size);
    symc_error err;
    rt_engine *e = NULL;
    CHECK_MSG(bytes && rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", bytes ? err.msg : "no engine");
    if (!e) return check_report("codegen.step_order");
    uint32_t ns = e->n_steps, nk = 0, written = 0;
    for (uint32_t i = 0; i < ns; i++)
        if (e->steps[i].kind == RT_STEP_KERNEL) {
            nk++;
            CHECK_MSG(e->steps[i].arg_writes != NULL, "kernel step %u has no write flags", i);
            for (uint32_t k = 0; e->steps[i].arg_writes && k < e->steps[i].n_args; k++)
                written += e->steps[i].arg_writes[k];
        }
    CHECK_MSG(ns >= 2 && nk >= 2 && written >= nk, "%u steps, %u kernels, %u written arguments", ns, nk, written);
    rt_step *steps = malloc(ns * sizeof *steps);
    uint8_t flags[16][16];
    for (int kase = 0; kase < 5 && steps; kase++) {
        memcpy(steps, e->steps, ns * sizeof *steps);
        for (uint32_t i = 0; i < ns && i < 16; i++)
            if (steps[i].arg_writes) {
                memcpy(flags[i], steps[i].arg_writes, steps[i].n_args < 16 ? steps[i].n_args : 16);
                steps[i].arg_writes = flags[i];
            }
        rt_engine copy = *e;
        copy.steps = steps;
        copy.owned = NULL;
        const char *want = NULL;
        if (kase == 1) { /* the steps reversed */
            for (uint32_t i = 0; i < ns / 2; i++) {
                rt_step t = steps[i];
                steps[i] = steps[ns - 1 - i];
                steps[ns - 1 - i] = t;
            }
            want = "which no earlier step writes";
        }
        if (kase == 2) { /* the first kernel's written argument marked read: read before anything writes it */
            for (uint32_t i = 0; i < ns && !want; i++)
                for (uint32_t k = 0; steps[i].arg_writes && k < steps[i].n_args && !want; k++)
                    if (steps[i].arg_writes[k]) flags[i][k] = 0, want = "which no earlier step writes";
        }
        if (kase == 3) { /* the last step dropped: the output is written by nothing */
            copy.n_steps = ns - 1;
            want = "is written by no GPU step";
        }
        if (kase == 4) /* no write flags at all (an engine from before they were recorded): loads unchecked */
            for (uint32_t i = 0; i < ns; i++) steps[i].arg_writes = NULL;
        symc_status st = reload(&copy, &err);
        if (!want) CHECK_MSG(st == SYMC_OK, "case %d should load: %s", kase, err.msg);
        else {
            CHECK_MSG(st == SYMC_ERR_FORMAT, "case %d loaded", kase);
            CHECK_CONTAINS(err.msg, want);
            if (kase != 3) CHECK_CONTAINS(err.msg, "step");
        }
    }
    free(steps);
    rt_engine_free(e);
    free(bytes);
    return check_report("codegen.step_order");
}
