/* The compile driver (symc_module_compile, codegen/compile.c), which both the
 * public API and `symc compile` use: the defaults of symc_compile_options_init,
 * the progress callback seeing every pass, the dump callback
 * getting the IR after the named pass only, an unknown pass or precision
 * refused before anything is written, and an engine that loads. A reference
 * engine (gpu = 0), so no GPU and no NVRTC are needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"

typedef struct seen {
    char steps[1024];
    int dumps;
    char dumped_pass[64];
    int dump_has_relu;
} seen;

static void on_progress(void *ctx, const char *step) {
    seen *s = ctx;
    size_t n = strlen(s->steps);
    snprintf(s->steps + n, sizeof s->steps - n, "%s;", step);
}

static void on_dump(void *ctx, const char *pass, const char *text) {
    seen *s = ctx;
    s->dumps++;
    snprintf(s->dumped_pass, sizeof s->dumped_pass, "%s", pass);
    s->dump_has_relu = strstr(text, "relu(") != NULL;
}

static symc_module *small_module(void) {
    symc_error err;
    symc_module *m = symc_module_create("small", &err);
    symc_dim B = SYMC_DIM_NONE;
    CHECK(m && symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err) == SYMC_OK);
    symc_dim dims[] = {B, symc_dim_const(m, 4)};
    symc_tensor x, y;
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &x, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    return m;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096];
    snprintf(path, sizeof path, "%s/test_compile.symx", dir);
    symc_error err;

    symc_compile_options o;
    memset(&o, 0x5a, sizeof o);
    symc_compile_options_init(&o);
    CHECK(o.gpu == 1 && !o.arch && o.precision == SYMC_PRECISION_FP32 && o.tune == 1);
    CHECK(!o.progress && !o.dump_after && !o.dump && !o.ctx);

    /* hooks: every pass, then codegen; the IR once, after infer-shapes */
    seen s = {0};
    o.gpu = 0;
    o.progress = on_progress;
    o.dump = on_dump;
    o.dump_after = "infer-shapes";
    o.ctx = &s;
    symc_module *m = small_module();
    remove(path);
    CHECK_MSG(symc_module_compile(m, &o, path, &err) == SYMC_OK, "%s", err.msg);
    CHECK_CONTAINS(s.steps, "verify;infer-shapes;");
    CHECK_MSG(s.dumps == 1 && !strcmp(s.dumped_pass, "infer-shapes") && s.dump_has_relu, "dumps %d after '%s'", s.dumps,
              s.dumped_pass);
    symrt_engine *e = NULL;
    CHECK_MSG(symrt_engine_load_file(path, &e, &err) == SYMC_OK, "%s", err.msg);
    CHECK(e && symrt_engine_num_inputs(e) == 1 && symrt_engine_num_outputs(e) == 1);
    symrt_engine_destroy(e);
    symc_module_destroy(m);

    /* refusals write nothing */
    remove(path);
    m = small_module();
    o.dump_after = "no-such-pass";
    CHECK(symc_module_compile(m, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "unknown pass 'no-such-pass'");
    o.dump_after = NULL;
    o.precision = (symc_precision)7;
    CHECK(symc_module_compile(m, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "unknown precision 7");
    FILE *f = fopen(path, "rb");
    CHECK(!f);
    if (f) fclose(f);
    CHECK(symc_module_compile(NULL, NULL, path, &err) == SYMC_ERR_INVALID_ARG);
    symc_module_destroy(m);
    return check_report("test_compile");
}
