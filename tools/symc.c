/* symc: the command-line driver (trtexec conventions, DESIGN.md).
 *
 * Subcommands are rows of a table (name, one-line summary, handler), so the
 * help text and the dispatch cannot drift apart. Every failure is one line on
 * stderr starting with "symc: " and a non-zero exit: 2 for usage errors
 * (unknown subcommand or flag, missing argument), 1 for everything else
 * (unreadable or invalid files). The library reports through symc_error; only
 * this driver prints. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "frontend/onnx.h"
#include "ir/ir.h"
#include "passes/pipeline.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/ref/ref_kernels.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tools/bench.h"
#include "tools/checked.h"
#include "tools/inspect_engine.h"
#include "tools/npy.h"

enum { EXIT_USAGE = 2 };

static int usage_error(const char *fmt, const char *arg) {
    fprintf(stderr, "symc: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see 'symc --help')\n");
    return EXIT_USAGE;
}

static void write_stdout(void *ctx, const char *text, size_t len) {
    (void)ctx;
    fwrite(text, 1, len, stdout);
}

static int has_suffix(const char *s, const char *suffix);

static int cmd_inspect(int argc, char **argv) {
    const char *path = NULL;
    int source = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: symc inspect FILE.symir\n"
                   "       symc inspect FILE.symx [--source]\n"
                   "A module: symbols with their ranges, guards, inputs, nodes with their\n"
                   "symbolic output shapes, and outputs. An engine: versions and GPU target,\n"
                   "shapes and activation memory at min|opt|max, and every GPU step in order\n"
                   "with its library choice; --source prints the generated CUDA C.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--source")) {
            source = 1;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) return usage_error("inspect: unknown flag '%s'", argv[i]);
        if (path) return usage_error("inspect: takes one file, got a second: '%s'", argv[i]);
        path = argv[i];
    }
    if (!path) return usage_error("inspect: missing FILE%s", "");
    if (source && !has_suffix(path, ".symx")) return usage_error("inspect: --source is for engines (.symx)%s", "");
    symc_error err;
    if (tool_check_regular_file(path, has_suffix(path, ".symx") ? "engine" : "module", &err)) {
        fprintf(stderr, "symc: %s\n", err.msg);
        return 1;
    }
    if (has_suffix(path, ".symx")) return symc_inspect_engine(path, source);
    symc_module *m;
    if (symc_module_load(path, &m, &err) != SYMC_OK) {
        fprintf(stderr, "symc: %s\n", err.msg);
        return 1;
    }
    ir_print(m, write_stdout, NULL);
    symc_module_destroy(m);
    return fflush(stdout) == 0 ? 0 : 1;
}

/* "--flag=value" or "--flag value": returns the value and advances *i. */
static const char *flag_value(int argc, char **argv, int *i, const char *flag) {
    size_t n = strlen(flag);
    if (!strncmp(argv[*i], flag, n) && argv[*i][n] == '=') return argv[*i] + n + 1;
    if (!strcmp(argv[*i], flag) && *i + 1 < argc) return argv[++*i];
    return NULL;
}

static int has_suffix(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static void dump_text(void *ctx, const char *pass, const char *text) {
    (void)ctx;
    printf("; IR after %s\n%s", pass, text);
}

static void progress(void *ctx, const char *pass) {
    if (*(int *)ctx) fprintf(stderr, "symc: %s...\n", pass);
}

static int cmd_compile(int argc, char **argv) {
    const char *model = NULL, *out = NULL, *dump_after = NULL;
    cg_options cgo = cg_default_options();
    int n_prec = 0;
    fe_shape_list shapes;
    fe_shape_list_init(&shapes);
    symc_error err;
    int rc = 2;
    symc_module *m = NULL;
    for (int i = 0; i < argc; i++) {
        const char *v;
        fe_shape_flag sf;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: symc compile MODEL.onnx --shapes NAME:MINxAxB,OPTxAxB,MAXxAxB ... -o OUT.symx\n"
                   "       symc compile MODEL.onnx --min-shapes a:1x3,b:1x7 --opt-shapes ... --max-shapes ... -o OUT.symx\n"
                   "       symc compile MODEL.symir -o OUT.symx\n"
                   "options:\n"
                   "  --arch sm_XY      target GPU (default: the GPU present, else sm_90); cubin for it\n"
                   "                    plus PTX that newer GPUs compile at load\n"
                   "  --fp16 | --bf16   matrix products and convolutions with fp16/bf16 operands and\n"
                   "                    fp32 accumulation (tensor storage stays fp32)\n"
                   "  --tf32            matrix products and convolutions in TF32 (default: true fp32)\n"
                   "  --no-tune         store library heuristics instead of timing candidates at opt and\n"
                   "                    a few sizes across the declared ranges\n"
                   "                    (timing needs a GPU at build time; without one this is implied)\n"
                   "  --no-gpu          a reference-backend-only engine (no CUDA code)\n"
                   "  --dump-after=PASS print the IR after a pass (verify, infer-shapes, check-sizes,\n"
                   "                    fold-batch-norm)\n"
                   "Imports the model with every dynamic dim a symbol whose range comes from the\n"
                   "declared shapes, runs the pass pipeline, and writes an engine that runs at\n"
                   "every size inside those ranges.\n");
            rc = 0;
            goto done;
        }
        const char *eq = strchr(argv[i], '=');
        char flag[32] = "";
        if (argv[i][0] == '-' && argv[i][1] == '-') {
            size_t n = eq ? (size_t)(eq - argv[i]) : strlen(argv[i]);
            if (n < sizeof flag) memcpy(flag, argv[i], n), flag[n] = '\0';
        }
        if (*flag && fe_shape_flag_parse(flag, &sf)) {
            if (!(v = flag_value(argc, argv, &i, flag))) {
                rc = usage_error("compile: %s needs a value", flag);
                goto done;
            }
            if (fe_parse_shapes(&shapes, sf, v, &err)) {
                fprintf(stderr, "symc: %s\n", err.msg);
                goto done;
            }
        } else if ((v = flag_value(argc, argv, &i, "-o")) || (v = flag_value(argc, argv, &i, "--output"))) out = v;
        else if ((v = flag_value(argc, argv, &i, "--dump-after"))) dump_after = v;
        else if ((v = flag_value(argc, argv, &i, "--arch"))) cgo.arch = v;
        else if (!strcmp(argv[i], "--fp16")) cgo.precision = 2, n_prec++;
        else if (!strcmp(argv[i], "--bf16")) cgo.precision = 3, n_prec++;
        else if (!strcmp(argv[i], "--tf32")) cgo.precision = 1, n_prec++;
        else if (!strcmp(argv[i], "--no-tune")) cgo.tune = 0;
        else if (!strcmp(argv[i], "--no-gpu")) cgo.gpu = 0;
        else if (argv[i][0] == '-') {
            rc = usage_error("compile: unknown flag '%s'", argv[i]);
            goto done;
        } else if (model) {
            rc = usage_error("compile: takes one model, got a second: '%s'", argv[i]);
            goto done;
        } else model = argv[i];
    }
    if (!model || !out) {
        rc = usage_error("compile: missing %s", !model ? "MODEL" : "-o OUT.symx");
        goto done;
    }
    if (n_prec > 1) {
        rc = usage_error("compile: --fp16, --bf16 and --tf32 exclude each other%s", "");
        goto done;
    }
    if (!cgo.gpu && (cgo.arch || n_prec)) {
        rc = usage_error("compile: --no-gpu takes no --arch or precision flag%s", "");
        goto done;
    }
    int is_onnx = has_suffix(model, ".onnx");
    if (!is_onnx && !has_suffix(model, ".symir")) {
        rc = usage_error("compile: '%s' is neither .onnx nor .symir", model);
        goto done;
    }
    if (!is_onnx && shapes.n) {
        rc = usage_error("compile: '%s' declares its own symbol ranges; --shapes is for ONNX models", model);
        goto done;
    }
    rc = 1;
    if (tool_check_regular_file(model, "model", &err)) {
        fprintf(stderr, "symc: %s\n", err.msg);
        goto done;
    }
    if (is_onnx) {
        if (fe_shape_list_check(&shapes, &err) || fe_onnx_import_file(model, shapes.items, shapes.n, &m, &err)) {
            fprintf(stderr, "symc: %s: %s\n", model, err.msg);
            goto done;
        }
    } else if (symc_module_load(model, &m, &err) != SYMC_OK) {
        fprintf(stderr, "symc: %s\n", err.msg);
        goto done;
    }
    int tty = isatty(2);
    pass_options opt = {dump_after, dump_text, progress, &tty};
    cgo.progress = progress;
    cgo.progress_ctx = &tty;
    if (pass_run_pipeline(m, &opt, &err) != SYMC_OK || cg_write_engine(m, &cgo, out, &err) != SYMC_OK) {
        fprintf(stderr, "symc: %s: %s\n", model, err.msg);
        goto done;
    }
    fprintf(stderr, "symc: wrote %s\n", out);
    rc = 0;
done:
    symc_module_destroy(m);
    fe_shape_list_free(&shapes);
    return rc;
}


static double element(const void *data, symc_dtype dt, size_t i) {
    switch (dt) {
    case SYMC_F32: return ((const float *)data)[i];
    case SYMC_F64: return ((const double *)data)[i];
    case SYMC_F16: return rt_ref_f16_to_f64(((const uint16_t *)data)[i]);
    case SYMC_BF16: return rt_ref_bf16_to_f64(((const uint16_t *)data)[i]);
    case SYMC_I64: return (double)((const int64_t *)data)[i];
    case SYMC_I32: return ((const int32_t *)data)[i];
    case SYMC_BOOL: return ((const uint8_t *)data)[i];
    default: return 0;
    }
}

#define MAX_IO 64

static int cmd_run(int argc, char **argv) {
    const char *engine = NULL, *backend = "ref";
    const char *shapes[MAX_IO], *inputs[MAX_IO], *outputs[MAX_IO];
    int n_shapes = 0, n_inputs = 0, n_outputs = 0;
    uint64_t seed = 1;
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: symc run ENGINE.symx --shapes NAME:AxBxC ... [--input NAME=FILE.npy] ...\n"
                   "                [--output NAME=FILE.npy] ... [--backend ref|cuda] [--seed N]\n"
                   "Runs the engine at the given input shapes (random seeded inputs unless --input)\n"
                   "and prints each output's shape and checksums.\n");
            return 0;
        }
        if ((v = flag_value(argc, argv, &i, "--shapes"))) {
            if (n_shapes == MAX_IO) return usage_error("run: too many --shapes%s", "");
            shapes[n_shapes++] = v;
        } else if ((v = flag_value(argc, argv, &i, "--input"))) {
            if (n_inputs == MAX_IO) return usage_error("run: too many --input%s", "");
            inputs[n_inputs++] = v;
        } else if ((v = flag_value(argc, argv, &i, "--output"))) {
            if (n_outputs == MAX_IO) return usage_error("run: too many --output%s", "");
            outputs[n_outputs++] = v;
        } else if ((v = flag_value(argc, argv, &i, "--backend"))) backend = v;
        else if ((v = flag_value(argc, argv, &i, "--seed"))) seed = strtoull(v, NULL, 10);
        else if (argv[i][0] == '-') return usage_error("run: unknown flag '%s'", argv[i]);
        else if (engine) return usage_error("run: takes one engine, got a second: '%s'", argv[i]);
        else engine = argv[i];
    }
    if (!engine) return usage_error("run: missing ENGINE%s", "");
    symrt_backend be;
    if (!strcmp(backend, "ref")) be = SYMRT_BACKEND_REF;
    else if (!strcmp(backend, "cuda")) be = SYMRT_BACKEND_CUDA;
    else return usage_error("run: unknown backend '%s' (ref or cuda)", backend);

    symc_error err;
    symrt_engine *e = NULL;
    symrt_context *c = NULL;
    void *bufs[2 * MAX_IO] = {0};
    size_t elems[2 * MAX_IO] = {0}, sizes[2 * MAX_IO] = {0}; /* checked: tool_tensor_size */
    uint64_t dev[2 * MAX_IO] = {0}; /* device copies (CUDA backend) */
    const rt_cuda_driver_api *drv = NULL;
    npy_array given[MAX_IO] = {0};
    fe_shape_list shape_list;
    fe_shape_list_init(&shape_list);
    int rc = 1;
    if (tool_check_regular_file(engine, "engine", &err) || symrt_engine_load_file(engine, &e, &err) ||
        symrt_context_create(e, be, NULL, &c, &err))
        goto fail;
    if (be == SYMRT_BACKEND_CUDA && !(drv = rt_cuda_driver(&err))) goto fail;
    uint32_t ni = symrt_engine_num_inputs(e), no = symrt_engine_num_outputs(e);
    if (ni > MAX_IO || no > MAX_IO) {
        symc_error_setf(&err, SYMC_ERR_UNSUPPORTED, "more than %d inputs or outputs", MAX_IO);
        goto fail;
    }
    for (int k = 0; k < n_inputs; k++) {
        const char *eq = strchr(inputs[k], '=');
        if (!eq) {
            fprintf(stderr, "symc: run: --input needs NAME=FILE.npy, got '%s'\n", inputs[k]);
            rc = 2;
            goto fail_quiet;
        }
        symrt_io_info info;
        uint32_t found = UINT32_MAX;
        for (uint32_t i = 0; i < ni; i++)
            if (!symrt_engine_input(e, i, &info, NULL) && strlen(info.name) == (size_t)(eq - inputs[k]) &&
                !strncmp(info.name, inputs[k], (size_t)(eq - inputs[k])))
                found = i;
        if (found == UINT32_MAX) {
            char names[512];
            tool_input_names(e, names, sizeof names);
            symc_error_setf(&err, SYMC_ERR_INVALID_ARG, "--input '%s': the engine has no such input (its inputs: %s)",
                            inputs[k], names);
            goto fail;
        }
        if (npy_read(eq + 1, &given[found], &err)) goto fail;
        symrt_engine_input(e, found, &info, NULL);
        if (given[found].dtype != info.dtype) {
            symc_error_setf(&err, SYMC_ERR_INVALID_ARG, "--input %s: the file holds %s, the input is %s", inputs[k],
                            ir_dtype_name(given[found].dtype), ir_dtype_name(info.dtype));
            goto fail;
        }
    }
    for (int k = 0; k < n_shapes; k++)
        if (fe_parse_shapes(&shape_list, FE_SHAPES, shapes[k], &err)) goto fail;
    for (uint32_t k = 0; k < shape_list.n; k++) {
        uint32_t i = 0;
        symrt_io_info info;
        while (i < ni && (symrt_engine_input(e, i, &info, NULL) || strcmp(info.name, shape_list.items[k].name))) i++;
        if (i == ni) {
            char names[512];
            tool_input_names(e, names, sizeof names);
            symc_error_setf(&err, SYMC_ERR_INVALID_ARG, "run: --shapes names input '%s', but the engine has no such "
                            "input (its inputs: %s)", shape_list.items[k].name, names);
            goto fail;
        }
    }
    for (uint32_t k = 0; k < shape_list.n; k++)
        for (int32_t d = 0; d < shape_list.items[k].rank; d++)
            if (shape_list.items[k].min[d] != shape_list.items[k].max[d]) {
                symc_error_setf(&err, SYMC_ERR_INVALID_ARG, "run: --shapes %s takes one shape (AxBxC), not a range",
                                shape_list.items[k].name);
                goto fail;
            }
    uint64_t state = seed;
    for (uint32_t i = 0; i < ni; i++) {
        symrt_io_info info;
        symrt_engine_input(e, i, &info, NULL);
        int64_t dims[8];
        int32_t rank = -1;
        for (uint32_t k = 0; k < shape_list.n; k++)
            if (!strcmp(shape_list.items[k].name, info.name)) {
                memcpy(dims, shape_list.items[k].min, sizeof dims);
                rank = shape_list.items[k].rank;
            }
        if (rank < 0 && given[i].data) memcpy(dims, given[i].dims, sizeof dims), rank = given[i].rank;
        if (rank < 0) {
            symc_error_setf(&err, SYMC_ERR_INVALID_ARG, "input '%s' needs a shape: add --shapes %s:AxB... or --input %s=FILE.npy",
                            info.name, info.name, info.name);
            goto fail;
        }
        if (symrt_set_input_shape(c, info.name, dims, rank, &err)) goto fail;
    }
    for (uint32_t i = 0; i < ni + no; i++) {
        symrt_io_info info;
        if (i < ni) symrt_engine_input(e, i, &info, NULL);
        else symrt_engine_output(e, i - ni, &info, NULL);
        int64_t dims[8];
        int32_t rank;
        if (symrt_get_tensor_shape(c, info.name, dims, &rank, &err)) goto fail;
        char what[160];
        snprintf(what, sizeof what, "%s '%s'", i < ni ? "input" : "output", info.name);
        size_t n, bytes;
        if (tool_tensor_size(what, info.dtype, rank, dims, &n, &bytes, &err)) goto fail;
        elems[i] = n;
        sizes[i] = bytes;
        if (i < ni && given[i].data) {
            if (given[i].size != bytes) {
                symc_error_setf(&err, SYMC_ERR_INVALID_ARG, "--input for '%s' holds %zu bytes, the shape needs %zu",
                                info.name, given[i].size, bytes);
                goto fail;
            }
            bufs[i] = given[i].data;
            given[i].data = NULL;
        } else {
            bufs[i] = malloc(bytes ? bytes : 1);
            if (!bufs[i]) {
                symc_error_setf(&err, SYMC_ERR_NOMEM, "out of memory for '%s'", info.name);
                goto fail;
            }
            if (i < ni) npy_fill_random(bufs[i], info.dtype, n, &state);
            else memset(bufs[i], 0xff, bytes); /* poison: a missed write shows */
        }
        if (drv) { /* device buffers: inputs copied in, outputs poisoned */
            int r = drv->mem_alloc(&dev[i], bytes ? bytes : 1);
            if (!r) r = i < ni ? drv->memcpy_htod(dev[i], bufs[i], bytes) : drv->memset_d8(dev[i], 0xff, bytes);
            if (r) {
                symc_error_setf(&err, SYMC_ERR_DEVICE, "CUDA error %d preparing '%s' (%zu bytes)", r, info.name, bytes);
                goto fail;
            }
            if (symrt_set_tensor_address(c, info.name, (void *)(uintptr_t)dev[i], bytes, &err)) goto fail;
        } else if (symrt_set_tensor_address(c, info.name, bufs[i], bytes, &err)) goto fail;
    }
    if (symrt_enqueue(c, NULL, &err)) goto fail;
    for (uint32_t i = 0; drv && i < no; i++) {
        symrt_io_info info;
        symrt_engine_output(e, i, &info, NULL);
        int r = drv->ctx_synchronize();
        if (!r) r = drv->memcpy_dtoh(bufs[ni + i], dev[ni + i], sizes[ni + i]);
        if (r) {
            symc_error_setf(&err, SYMC_ERR_DEVICE, "CUDA error %d running the engine or reading '%s'", r, info.name);
            goto fail;
        }
    }
    for (uint32_t i = 0; i < no; i++) {
        symrt_io_info info;
        symrt_engine_output(e, i, &info, NULL);
        int64_t dims[8];
        int32_t rank;
        symrt_get_tensor_shape(c, info.name, dims, &rank, &err);
        size_t n = elems[ni + i];
        printf("%s: %s[", info.name, ir_dtype_name(info.dtype));
        for (int d = 0; d < rank; d++) printf("%s%" PRId64, d ? ", " : "", dims[d]);
        double sum = 0, asum = 0;
        for (size_t k = 0; k < n; k++) {
            double v = element(bufs[ni + i], info.dtype, k);
            sum += v;
            asum += fabs(v);
        }
        printf("]  sum %.9g  abs-sum %.9g\n", sum, asum);
        for (int k = 0; k < n_outputs; k++) {
            const char *eq = strchr(outputs[k], '=');
            if (eq && strlen(info.name) == (size_t)(eq - outputs[k]) && !strncmp(info.name, outputs[k], (size_t)(eq - outputs[k])))
                if (npy_write(eq + 1, info.dtype, rank, dims, bufs[ni + i], &err)) goto fail;
        }
    }
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "symc: %s\n", err.msg);
fail_quiet:
done:
    for (uint32_t i = 0; i < 2 * MAX_IO; i++) {
        free(bufs[i]);
        if (dev[i]) drv->mem_free(dev[i]);
    }
    for (uint32_t i = 0; i < MAX_IO; i++) free(given[i].data);
    fe_shape_list_free(&shape_list);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
    return rc;
}

typedef struct command {
    const char *name, *summary;
    int (*run)(int argc, char **argv);
} command;

static const command commands[] = {
    {"compile", "compile a model into an engine for its declared dimension ranges", cmd_compile},
    {"run", "run an engine at given input shapes (CPU reference or CUDA backend)", cmd_run},
    {"bench", "time an engine per input shape: GPU and host time, p50/p90/p99, throughput", symc_cmd_bench},
    {"inspect", "print a module (symbols, guards, symbolic shapes) or an engine (GPU steps, memory)",
     cmd_inspect},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void help(void) {
    printf("symc %s: compile a model once for declared dimension ranges, run it at any size\n"
           "inside them.\n\n"
           "usage: symc COMMAND [ARGS]\n       symc --help | --version\n\ncommands:\n",
           symc_version());
    for (size_t i = 0; i < N_COMMANDS; i++) printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    printf("\n'symc COMMAND --help' describes one command.\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        help();
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        help();
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("symc %s\n", symc_version());
        return 0;
    }
    if (cmd[0] == '-') return usage_error("unknown flag '%s'", cmd);
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(cmd, commands[i].name)) return commands[i].run(argc - 2, argv + 2);
    return usage_error("unknown command '%s'", cmd);
}
