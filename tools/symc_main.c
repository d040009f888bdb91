/* symc: the command-line driver (trtexec's conventions: docs/ARCHITECTURE.md).
 *
 * Subcommands are rows of a table (name, one-line summary, handler), so the
 * help text and the dispatch cannot drift apart. Every failure is one line on
 * stderr starting with "symc: " and a non-zero exit: 2 for usage errors
 * (unknown subcommand or flag, missing argument), 1 for everything else
 * (unreadable or invalid files). The library reports through symc_error; only
 * this driver prints. `compile` imports the model, then hands it to the
 * public compile driver (symc_module_compile, codegen/compile.c) with the
 * progress and --dump-after callbacks, as any embedder would. */
#include <inttypes.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "frontend/onnx.h"
#include "ir/ir.h"
#include "passes/pipeline.h"
#include "runtime/cuda/cuda_backend.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tools/bench.h"
#include "tools/checked.h"
#include "tools/cli.h"
#include "tools/dot.h"
#include "tools/inspect_engine.h"
#include "tools/npy.h"
#include "tools/triton_repo.h"

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

static int cmd_inspect(int argc, char **argv) {
    const char *path = NULL;
    int source = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: symc inspect FILE.symir\n"
                   "       symc inspect FILE.symx [--source] [--tensors] [--islands]\n"
                   "A module: symbols with their ranges, guards, inputs, nodes with their\n"
                   "symbolic output shapes, outputs, and whether its batch rows are proved\n"
                   "independent (a server may join requests along dim 0). An engine: versions and GPU target,\n"
                   "shapes and activation memory at min|opt|max, and every GPU step in order\n"
                   "with its library choice, and the tensors' storage types (count and\n"
                   "bytes at opt per type), a half engine's fp32 islands counted by reason,\n"
                   "then the batch-row verdict its build stored (the\n"
                   "module's line; 'unknown' for an engine built before symc stored it);\n"
                   "--tensors lists every tensor with its type, --islands every fp32 island with\n"
                   "its reason, --source prints the generated CUDA C.\n");
            return 0;
        }
        if (!strcmp(argv[i], "--source")) {
            source |= SYMC_INSPECT_SOURCE;
            continue;
        }
        if (!strcmp(argv[i], "--tensors")) {
            source |= SYMC_INSPECT_TENSORS;
            continue;
        }
        if (!strcmp(argv[i], "--islands")) {
            source |= SYMC_INSPECT_ISLANDS;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) return usage_error("inspect: unknown flag '%s'", argv[i]);
        if (path) return usage_error("inspect: takes one file, got a second: '%s'", argv[i]);
        path = argv[i];
    }
    if (!path) return usage_error("inspect: missing FILE%s", "");
    if (source && !tool_has_suffix(path, ".symx"))
        return usage_error("inspect: --source, --tensors and --islands are for engines (.symx)%s", "");
    symc_error err;
    if (tool_check_regular_file(path, tool_has_suffix(path, ".symx") ? "engine" : "module", &err)) {
        fprintf(stderr, "symc: %s\n", err.msg);
        return 1;
    }
    if (tool_has_suffix(path, ".symx")) return symc_inspect_engine(path, source);
    symc_module *m;
    if (symc_module_load(path, &m, &err) != SYMC_OK) {
        fprintf(stderr, "symc: %s\n", err.msg);
        return 1;
    }
    ir_print(m, write_stdout, NULL);
    /* whether requests may be joined along the batch (ir_batch_rows), for the shapes as inferred */
    ir_batch_rows_result rows;
    if (symc_module_infer_shapes(m, &err) == SYMC_OK && ir_batch_rows(m, &rows, &err) == SYMC_OK) {
        sym_symbol_info b = {0};
        char line[512];
        int named = rows.batched && sym_symbol_get(m->syms, rows.batch, &b);
        tool_batch_rows_line(!rows.batched          ? SYMRT_BATCH_ROWS_NONE
                                 : rows.independent ? SYMRT_BATCH_ROWS_INDEPENDENT
                                                    : SYMRT_BATCH_ROWS_BATCHED,
                             named ? b.name : NULL, rows.why, line, sizeof line);
        printf("%s\n", line);
    }
    symc_module_destroy(m);
    return fflush(stdout) == 0 ? 0 : 1;
}

static void dump_text(void *ctx, const char *pass, const char *text) {
    (void)ctx;
    printf("; IR after %s\n%s", pass, text);
}

/* Progress of `symc compile` on stderr, each line with the seconds since
 * the start: a build that ends within a second says nothing; a longer one
 * prints the lines held so far once a line comes after the first second,
 * then each as it comes. -q: none. */
typedef struct progress_lines {
    int quiet, live;
    double start;
    char held[4096];
    size_t len;
} progress_lines;

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void progress(void *ctx, const char *step) {
    progress_lines *p = ctx;
    if (p->quiet) return;
    double t = seconds() - p->start;
    char line[600];
    int n = snprintf(line, sizeof line, "symc: [%5.1f s] %s\n", t, step);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1, line[n - 1] = '\n';
    if (!p->live && t < 1.0) {
        if (p->len + (size_t)n < sizeof p->held) memcpy(p->held + p->len, line, (size_t)n), p->len += (size_t)n;
        return;
    }
    if (!p->live) fwrite(p->held, 1, p->len, stderr);
    p->live = 1;
    fputs(line, stderr);
}

/* A --multiple narrows its dim's declared range to the multiples inside it: said, not silent
 * (asked [8, 64] with a multiple of 24, the engine takes [24, 48]). An empty range is the
 * importer's error. */
static void note_multiples(const fe_shape_list *l, progress_lines *lines) {
    for (uint32_t i = 0; i < l->n_mult; i++) {
        const fe_multiple *mu = &l->mult[i];
        for (uint32_t k = 0; k < l->n; k++) {
            const fe_input_shape *s = &l->items[k];
            if (strcmp(s->name, mu->name) || mu->axis >= s->rank || mu->m < 2) continue;
            int64_t lo = s->min[mu->axis], hi = s->max[mu->axis];
            int64_t rlo = (lo + mu->m - 1) / mu->m * mu->m, rhi = hi / mu->m * mu->m;
            if ((rlo != lo || rhi != hi) && rlo <= rhi) {
                char line[400];
                snprintf(line, sizeof line,
                         "note: --multiple %s:%d=%" PRId64 " narrows input '%s' dim %d from [%" PRId64 ", %" PRId64
                         "] to [%" PRId64 ", %" PRId64 "] (its multiples of %" PRId64 ")",
                         mu->name, (int)mu->axis, mu->m, mu->name, (int)mu->axis, lo, hi, rlo, rhi, mu->m);
                if (!lines->quiet) fprintf(stderr, "symc: %s\n", line); /* a note: not held like progress */
            }
        }
    }
}

static void compile_help(void) {
    char passes[256];
    pass_names(passes, sizeof passes); /* the pipeline's table, in order */
    printf("usage: symc compile MODEL.onnx --shapes NAME:MINxAxB,OPTxAxB,MAXxAxB ... -o OUT.symx\n"
           "       symc compile MODEL.onnx --min-shapes a:1x3,b:1x7 --opt-shapes ... --max-shapes ... -o OUT.symx\n"
           "       symc compile MODEL.symir -o OUT.symx\n"
           "       symc compile MODEL.onnx --shapes ... -o OUT.symir   (the imported module, not compiled:\n"
           "                                                          for `symc inspect` or a later compile)\n"
           "trtexec's spellings work too: --onnx=MODEL.onnx, --minShapes/--optShapes/--maxShapes,\n"
           "--saveEngine=OUT.symx, --noTF32 (the default: true fp32); every flag takes --flag=value\n"
           "or --flag value.\n"
           "options:\n"
           "  --multiple NAME:AXIS=M  input NAME's dim AXIS takes only multiples of M (repeatable;\n"
           "                    comma separated items), e.g. --multiple x:1=8 for a reshape that\n"
           "                    needs S %% 8 == 0; the range's ends round to multiples\n"
           "  --arch sm_XY      target GPU (default: the GPU present, else sm_90); cubin for it\n"
           "                    plus PTX that newer GPUs compile at load\n"
           "  --fp16 | --bf16   layers may run in half precision: weights and activations stored\n"
           "                    as fp16/bf16 (the precision pass), fp32 accumulation, fp32\n"
           "                    islands where the target has no half kernel, for --fp32-layers\n"
           "                    and (fp16) for tensors whose calibrated max |value| passes 4096;\n"
           "                    attention's Q and K are half when the calibrated logits are small\n"
           "                    enough (else fp32 back to their projections, with the softmax);\n"
           "                    model inputs and outputs keep their dtypes (casts at the boundary)\n"
           "  --fp32-layers L   keep these nodes and/or op types fp32 (comma separated, e.g.\n"
           "                    softmax,layer_norm,/blocks.0/attn/MatMul)\n"
           "  --no-calibrate    skip the range calibration of --fp16 (and of --bf16 with a softmax): a run\n"
           "                    at min, else opt, with seeded random inputs on the reference backend;\n"
           "                    without it attention's Q and K stay fp32\n"
           "  --tf32            matrix products and convolutions in TF32 (default: true fp32)\n"
           "  --no-tune         store library heuristics instead of timing candidates at opt and\n"
           "                    a few sizes across the declared ranges\n"
           "                    (timing needs a GPU at build time; without one this is implied)\n"
           "  --no-gpu          a reference-backend-only engine (no CUDA code)\n"
           "  -q, --quiet       no progress lines (a build past a second prints them, with the\n"
           "                    seconds since the start) and no 'wrote' line: errors only\n"
           "  --verbose         every progress line as it happens (trtexec's flag; by default a\n"
           "                    build prints them once it passes a second)\n"
           "  --dump-after=PASS print the IR after a pass, one of\n"
           "                    %s\n"
           "                    (after fuse with the fused groups; --no-gpu plans none)\n"
           "Imports the model with every dynamic dim a symbol whose range comes from the\n"
           "declared shapes, runs the pass pipeline, and writes an engine that runs at\n"
           "every size inside those ranges.\n"
           "Build cache: NVRTC's output for each part of the generated CUDA is kept under\n"
           "$SYMC_CACHE_DIR (default $XDG_CACHE_HOME/symc, else $HOME/.cache/symc), keyed by\n"
           "the SHA-256 of the source, NVRTC's version and options, so building the same model\n"
           "again compiles nothing; SYMC_CACHE_DIR=off turns it off. Entries are checked on\n"
           "every read and may be deleted at any time.\n",
           passes);
}

/* What `symc compile` was asked, from its flags. */
typedef struct compile_cli {
    const char *model, *out;
    symc_compile_options opt;
    int n_prec, n_multiple, no_tf32;
    progress_lines lines;
    fe_shape_list shapes;
} compile_cli;

/* Reads compile's flags into a; returns -1 to go on, else the exit code (0
 * after --help, 2 on a usage error, said). */
static int compile_flags(int argc, char **argv, compile_cli *a) {
    symc_error err;
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return compile_help(), 0;
        char flag[32];
        tool_shape_flag_result sr = tool_shape_flag(argc, argv, &i, &a->shapes, &a->n_multiple, flag, &err);
        if (sr == TOOL_SHAPES_NO_VALUE) return usage_error("compile: %s needs a value", flag);
        if (sr == TOOL_SHAPES_BAD) return fprintf(stderr, "symc: %s\n", err.msg), 2;
        if (sr == TOOL_SHAPES_READ) continue;
        if ((v = tool_flag(argc, argv, &i, "-o")) || (v = tool_flag(argc, argv, &i, "--output")) ||
            (v = tool_flag(argc, argv, &i, "--saveEngine")))
            a->out = v;
        else if ((v = tool_flag(argc, argv, &i, "--onnx"))) {
            if (a->model) return usage_error("compile: takes one model, got a second: '%s'", v);
            a->model = v;
        } else if (!strcmp(argv[i], "--noTF32")) a->no_tf32 = 1;
        else if ((v = tool_flag(argc, argv, &i, "--dump-after"))) a->opt.dump_after = v;
        else if ((v = tool_flag(argc, argv, &i, "--arch"))) a->opt.arch = v;
        else if ((v = tool_flag(argc, argv, &i, "--fp32-layers"))) {
            if (!*v || strspn(v, ", ") == strlen(v))
                return usage_error("compile: --fp32-layers needs node names or op types, comma separated (e.g. "
                                   "softmax,layer_norm), got '%s'",
                                   v);
            a->opt.fp32_layers = v;
        } else if (!strcmp(argv[i], "--no-calibrate")) a->opt.calibrate = 0;
        else if (!strcmp(argv[i], "--fp16")) a->opt.precision = SYMC_PRECISION_FP16, a->n_prec++;
        else if (!strcmp(argv[i], "--bf16")) a->opt.precision = SYMC_PRECISION_BF16, a->n_prec++;
        else if (!strcmp(argv[i], "--tf32")) a->opt.precision = SYMC_PRECISION_TF32, a->n_prec++;
        else if (!strcmp(argv[i], "--no-tune")) a->opt.tune = 0;
        else if (!strcmp(argv[i], "--no-gpu")) a->opt.gpu = 0;
        else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) a->lines.quiet = 1;
        else if (!strcmp(argv[i], "--verbose")) a->lines.live = 1; /* trtexec's: every progress line, at once */
        else if (argv[i][0] == '-') return usage_error("compile: unknown flag '%s'", argv[i]);
        else if (a->model) return usage_error("compile: takes one model, got a second: '%s'", argv[i]);
        else a->model = argv[i];
    }
    return -1;
}

/* The flags' combinations; -1 when they hold, else 2 (said). */
static int compile_check(const compile_cli *a) {
    const symc_compile_options *opt = &a->opt;
    if (!a->model || !a->out) return usage_error("compile: missing %s", !a->model ? "MODEL" : "-o OUT.symx");
    if (a->n_prec > 1) return usage_error("compile: --fp16, --bf16 and --tf32 exclude each other%s", "");
    if (a->no_tf32 && opt->precision == SYMC_PRECISION_TF32)
        return usage_error("compile: --noTF32 and --tf32 exclude each other%s", "");
    if (opt->fp32_layers && opt->precision != SYMC_PRECISION_FP16 && opt->precision != SYMC_PRECISION_BF16)
        return usage_error("compile: --fp32-layers needs --fp16 or --bf16%s", "");
    /* --fp16/--bf16 are half storage, which the reference backend runs too */
    if (!opt->gpu && (opt->arch || opt->precision == SYMC_PRECISION_TF32))
        return usage_error("compile: --no-gpu takes no --arch or --tf32%s", "");
    int is_onnx = tool_has_suffix(a->model, ".onnx");
    if (!is_onnx && !tool_has_suffix(a->model, ".symir"))
        return usage_error("compile: '%s' is neither .onnx nor .symir", a->model);
    if (!is_onnx && (a->shapes.n || a->n_multiple))
        return usage_error("compile: '%s' declares its own symbol ranges; --shapes and --multiple are for ONNX models",
                           a->model);
    return -1;
}

/* A model whose If nodes branch on its input sizes: one engine, a region per side
 * (frontend/onnx/onnx_branch.c), said as a progress line each. */
static symc_status compile_regions(compile_cli *a, const fe_onnx_regions *r, symc_error *err) {
    symc_region parts[FE_ONNX_MAX_REGIONS];
    for (uint32_t i = 0; i < r->n; i++) {
        char line[900];
        snprintf(line, sizeof line, "region %u of %u: %s", i, r->n, r->items[i].branches);
        progress(&a->lines, line);
        parts[i] = (symc_region){r->items[i].module, r->items[i].condition};
    }
    return symc_compile_regions(parts, r->n, &a->opt, a->out, err);
}

static int cmd_compile(int argc, char **argv) {
    compile_cli a;
    memset(&a, 0, sizeof a);
    symc_compile_options_init(&a.opt);
    a.lines.start = seconds();
    fe_shape_list_init(&a.shapes);
    symc_error err;
    symc_module *m = NULL;
    fe_onnx_regions regions = {0};
    int rc = compile_flags(argc, argv, &a);
    if (rc < 0) rc = compile_check(&a);
    if (rc >= 0) goto done;
    rc = 1;
    if (tool_check_regular_file(a.model, "model", &err)) {
        fprintf(stderr, "symc: %s\n", err.msg);
        goto done;
    }
    char importing[600];
    snprintf(importing, sizeof importing, "importing %s", a.model);
    progress(&a.lines, importing);
    if (tool_has_suffix(a.model, ".onnx")) {
        /* the importer's messages start with the model's path already: one prefix */
        if (fe_shape_list_check(&a.shapes, &err)) {
            fprintf(stderr, "symc: %s\n", err.msg);
            goto done;
        }
        note_multiples(&a.shapes, &a.lines);
        if (fe_onnx_import_file_regions(a.model, a.shapes.items, a.shapes.n, &regions, &err)) {
            fprintf(stderr, "symc: %s\n", err.msg);
            goto done;
        }
        if (regions.n == 1 && !regions.items[0].condition) { /* no size branch: one graph, as always */
            m = regions.items[0].module;
            regions.items[0].module = NULL;
        }
    } else if (symc_module_load(a.model, &m, &err) != SYMC_OK) {
        fprintf(stderr, "symc: %s\n", err.msg);
        goto done;
    }
    a.opt.progress = progress;
    a.opt.dump = dump_text;
    a.opt.ctx = &a.lines;
    if (tool_has_suffix(a.out, ".symir")) { /* the imported module, for `symc inspect` or a later compile */
        if (!m) {
            fprintf(stderr,
                    "symc: %s: the model branches on its input sizes and imports to %u modules, one a region; "
                    "-o FILE.symir writes one module: compile it to an engine (-o FILE.symx)\n",
                    a.model, regions.n);
            goto done;
        }
        if (symc_module_infer_shapes(m, &err) != SYMC_OK || symc_module_save(m, a.out, &err) != SYMC_OK) {
            fprintf(stderr, "symc: %s: %s\n", a.model, err.msg);
            goto done;
        }
    } else if (!m && compile_regions(&a, &regions, &err)) {
        fprintf(stderr, "symc: %s: %s\n", a.model, err.msg);
        goto done;
    } else if (m && symc_module_compile(m, &a.opt, a.out, &err) != SYMC_OK) {
        fprintf(stderr, "symc: %s: %s\n", a.model, err.msg);
        goto done;
    }
    if (!a.lines.quiet) fprintf(stderr, "symc: wrote %s\n", a.out);
    rc = 0;
done:
    symc_module_destroy(m);
    fe_onnx_regions_free(&regions);
    fe_shape_list_free(&a.shapes);
    return rc;
}

#define MAX_IO 64

/* The command line of symc run. */
typedef struct run_opts {
    const char *engine, *backend;
    const char *shapes[MAX_IO], *inputs[MAX_IO], *outputs[MAX_IO];
    int n_shapes, n_inputs, n_outputs;
    uint64_t seed;
    symrt_backend be;
} run_opts;

/* One run: the engine and context, then per tensor (inputs, then outputs)
 * its host buffer, element count, byte size and device copy. */
typedef struct run_state {
    symrt_engine *e;
    symrt_context *c;
    const rt_cuda_driver_api *drv; /* NULL on the reference backend */
    uint32_t ni, no;
    npy_array given[MAX_IO]; /* --input files, by input index */
    void *bufs[2 * MAX_IO];
    size_t elems[2 * MAX_IO], sizes[2 * MAX_IO]; /* checked: tool_tensor_size */
    uint64_t dev[2 * MAX_IO];                    /* device copies (CUDA backend) */
} run_state;

/* Reads the flags into o. Returns -1 to go on, else the exit code: 0 after
 * --help, 2 after a usage error (said on stderr). */
static int run_parse_args(int argc, char **argv, run_opts *o) {
    *o = (run_opts){.backend = "ref", .seed = 1};
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: symc run ENGINE.symx --shapes NAME:AxBxC ... [--input NAME=FILE.npy] ...\n"
                   "                [--output NAME=FILE.npy] ... [--backend ref|cuda] [--seed N]\n"
                   "Runs the engine at the given input shapes (random seeded inputs unless --input)\n"
                   "and prints each output's shape and checksums. trtexec's --loadEngine=ENGINE.symx\n"
                   "names the engine too; every flag takes --flag=value or --flag value.\n");
            return 0;
        }
        if ((v = tool_flag(argc, argv, &i, "--shapes"))) {
            if (o->n_shapes == MAX_IO) return usage_error("run: too many --shapes%s", "");
            o->shapes[o->n_shapes++] = v;
        } else if ((v = tool_flag(argc, argv, &i, "--input"))) {
            if (o->n_inputs == MAX_IO) return usage_error("run: too many --input%s", "");
            o->inputs[o->n_inputs++] = v;
        } else if ((v = tool_flag(argc, argv, &i, "--output"))) {
            if (o->n_outputs == MAX_IO) return usage_error("run: too many --output%s", "");
            o->outputs[o->n_outputs++] = v;
        } else if ((v = tool_flag(argc, argv, &i, "--backend"))) o->backend = v;
        else if ((v = tool_flag(argc, argv, &i, "--seed"))) {
            char *end;
            errno = 0;
            o->seed = strtoull(v, &end, 10);
            if (!*v || *end || *v == '-' || *v == '+' || errno)
                return usage_error("run: --seed takes a whole number from 0 to 18446744073709551615, got '%s'", v);
        } else if ((v = tool_flag(argc, argv, &i, "--loadEngine"))) {
            if (o->engine) return usage_error("run: takes one engine, got a second: '%s'", v);
            o->engine = v;
        } else if (!strcmp(argv[i], "--fp16") || !strcmp(argv[i], "--bf16") || !strcmp(argv[i], "--tf32") ||
                   !strcmp(argv[i], "--noTF32"))
            return usage_error("run: '%s': the precision is chosen when the engine is compiled (symc compile "
                               "--fp16|--bf16|--tf32)",
                               argv[i]);
        else if (!strncmp(argv[i], "--exportOutput", 14) && (argv[i][14] == '=' || !argv[i][14]))
            return usage_error("run: --exportOutput is trtexec's; symc run writes each output with --output "
                               "NAME=FILE.npy%s",
                               "");
        else if (argv[i][0] == '-') return usage_error("run: unknown flag '%s'", argv[i]);
        else if (o->engine) return usage_error("run: takes one engine, got a second: '%s'", argv[i]);
        else o->engine = argv[i];
    }
    for (int k = 0; k < o->n_outputs; k++)
        if (!strchr(o->outputs[k], '=') || o->outputs[k][0] == '=')
            return usage_error("run: --output needs NAME=FILE.npy, got '%s'", o->outputs[k]);
    /* one file per name: a second --input x=... would silently win (and the first leak) */
    for (int pass = 0; pass < 2; pass++) {
        const char *const *list = pass ? o->outputs : o->inputs;
        int n = pass ? o->n_outputs : o->n_inputs;
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++) {
                const char *ea = strchr(list[a], '='), *eb = strchr(list[b], '=');
                if (ea && eb && ea - list[a] == eb - list[b] && !strncmp(list[a], list[b], (size_t)(ea - list[a]))) {
                    char msg[1200];
                    snprintf(msg, sizeof msg,
                             "run: %s names '%.*s' twice ('%.400s' and '%.400s'): give each name one file",
                             pass ? "--output" : "--input", (int)(ea - list[a]), list[a], list[a], list[b]);
                    return usage_error("%s", msg);
                }
            }
    }
    if (!o->engine) return usage_error("run: missing ENGINE%s", "");
    if (!strcmp(o->backend, "ref")) o->be = SYMRT_BACKEND_REF;
    else if (!strcmp(o->backend, "cuda")) o->be = SYMRT_BACKEND_CUDA;
    else return usage_error("run: unknown backend '%s' (ref or cuda)", o->backend);
    return -1;
}

/* Whether spec ("NAME=FILE") names `name` before its '='. */
static int names_tensor(const char *spec, const char *eq, const char *name) {
    return strlen(name) == (size_t)(eq - spec) && !strncmp(name, spec, (size_t)(eq - spec));
}

/* The --input files into r->given, each checked against its input's dtype.
 * Returns 0, 1 with err, or 2 after a usage error (said on stderr). */
static int run_read_inputs(run_state *r, const run_opts *o, symc_error *err) {
    for (int k = 0; k < o->n_inputs; k++) {
        const char *spec = o->inputs[k], *eq = strchr(spec, '=');
        if (!eq) {
            fprintf(stderr, "symc: run: --input needs NAME=FILE.npy, got '%s'\n", spec);
            return 2;
        }
        symrt_io_info info;
        uint32_t found = UINT32_MAX;
        for (uint32_t i = 0; i < r->ni; i++)
            if (!symrt_engine_input(r->e, i, &info, NULL) && names_tensor(spec, eq, info.name)) found = i;
        if (found == UINT32_MAX) {
            char names[512];
            tool_input_names(r->e, names, sizeof names);
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "run: --input %s: no input named '%.*s' (inputs: %s)",
                                   spec, (int)(eq - spec), spec, names),
                   1;
        }
        if (npy_read(eq + 1, &r->given[found], err)) return 1;
        symrt_engine_input(r->e, found, &info, NULL);
        npy_array *g = &r->given[found];
        /* The two conversions symc run makes, both because NumPy has no bf16 of its own (README): an f32
         * file for a half input, rounded once to nearest even, and a '<u2' file for a bf16 input, read as
         * the raw bf16 bit patterns (what the ONNX test data holds). Any other difference is refused:
         * a silent cast would run the engine on values the user did not give it. */
        if (g->dtype == SYMC_F32 && (info.dtype == SYMC_BF16 || info.dtype == SYMC_F16)) {
            size_t n = g->size / 4;
            for (size_t k = 0; k < n; k++)
                symc_dtype_store(g->data, info.dtype, k, symc_dtype_load(g->data, SYMC_F32, k));
            g->dtype = info.dtype;
            g->size = n * 2;
        }
        if (g->dtype == SYMC_U16 && info.dtype == SYMC_BF16) g->dtype = SYMC_BF16;
        if (g->dtype != info.dtype)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "run: --input %s: '%s' holds %s ('%s'), input '%s' is %s; symc run does not "
                                   "convert: save the array as %s%s",
                                   spec, eq + 1, symc_dtype_name(g->dtype), g->descr, info.name,
                                   symc_dtype_name(info.dtype), npy_numpy_name(info.dtype),
                                   info.dtype == SYMC_BF16 || info.dtype == SYMC_F16 ? " or numpy.float32" : ""),
                   1;
    }
    return 0;
}

/* Every --output names an output of the engine: a name it lacks would write
 * no file, so it is refused before anything runs. */
static symc_status run_check_outputs(const run_state *r, const run_opts *o, symc_error *err) {
    for (int k = 0; k < o->n_outputs; k++) {
        const char *spec = o->outputs[k], *eq = strchr(spec, '=');
        int found = 0;
        for (uint32_t i = 0; i < r->no && !found; i++) {
            symrt_io_info info;
            found = !symrt_engine_output(r->e, i, &info, NULL) && names_tensor(spec, eq, info.name);
        }
        if (!found) {
            char names[512];
            tool_output_names(r->e, names, sizeof names);
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "run: --output %s: no output named '%.*s' (outputs: %s)",
                                   spec, (int)(eq - spec), spec, names);
        }
    }
    return SYMC_OK;
}

/* The --shapes, each naming an input of the engine with one shape. */
static symc_status run_parse_shapes(const run_state *r, const run_opts *o, fe_shape_list *l, symc_error *err) {
    for (int k = 0; k < o->n_shapes; k++) {
        symc_status st = fe_parse_shapes(l, FE_SHAPES, o->shapes[k], err);
        if (st) return st;
    }
    for (uint32_t k = 0; k < l->n; k++) {
        uint32_t i = 0;
        symrt_io_info info;
        while (i < r->ni && (symrt_engine_input(r->e, i, &info, NULL) || strcmp(info.name, l->items[k].name))) i++;
        if (i == r->ni) {
            char names[512];
            tool_input_names(r->e, names, sizeof names);
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "run: --shapes %s:...: no input named '%s' (inputs: %s)",
                                   l->items[k].name, l->items[k].name, names);
        }
    }
    for (uint32_t k = 0; k < l->n; k++)
        for (int32_t d = 0; d < l->items[k].rank; d++)
            if (l->items[k].min[d] != l->items[k].max[d])
                return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                       "run: --shapes %s takes one shape (AxBxC), not a range", l->items[k].name);
    return SYMC_OK;
}

/* Every input's shape, from --shapes or else from its --input file. */
static symc_status run_set_shapes(run_state *r, const run_opts *o, symc_error *err) {
    fe_shape_list l;
    fe_shape_list_init(&l);
    symc_status st = run_parse_shapes(r, o, &l, err);
    for (uint32_t i = 0; i < r->ni && !st; i++) {
        symrt_io_info info;
        symrt_engine_input(r->e, i, &info, NULL);
        int64_t dims[8];
        int32_t rank = -1;
        for (uint32_t k = 0; k < l.n; k++)
            if (!strcmp(l.items[k].name, info.name)) {
                memcpy(dims, l.items[k].min, sizeof dims);
                rank = l.items[k].rank;
            }
        if (rank < 0 && r->given[i].data) memcpy(dims, r->given[i].dims, sizeof dims), rank = r->given[i].rank;
        if (rank < 0)
            st = symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                 "input '%s' needs a shape: add --shapes %s:AxB... or --input %s=FILE.npy", info.name,
                                 info.name, info.name);
        else st = symrt_set_input_shape(r->c, info.name, dims, rank, err);
    }
    fe_shape_list_free(&l);
    return st;
}

/* Tensor i's host buffer: its --input file's data, else seeded random values
 * (inputs) or poison (outputs: a missed write shows); then, on CUDA, its
 * device copy; then its address in the context. */
static symc_status run_bind(run_state *r, uint32_t i, const symrt_io_info *info, uint64_t *state, symc_error *err) {
    size_t bytes = r->sizes[i];
    if (i < r->ni && r->given[i].data) {
        if (r->given[i].size != bytes)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "--input for '%s' holds %zu bytes, the shape needs %zu",
                                   info->name, r->given[i].size, bytes);
        r->bufs[i] = r->given[i].data;
        r->given[i].data = NULL;
    } else {
        r->bufs[i] = malloc(bytes ? bytes : 1);
        if (!r->bufs[i]) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for '%s'", info->name);
        if (i < r->ni) symc_dtype_fill_random(r->bufs[i], info->dtype, r->elems[i], state);
        else memset(r->bufs[i], 0xff, bytes); /* poison: a missed write shows */
    }
    if (!r->drv) return symrt_set_tensor_address(r->c, info->name, r->bufs[i], bytes, err);
    /* device buffers: inputs copied in, outputs poisoned */
    int rc = r->drv->mem_alloc(&r->dev[i], bytes ? bytes : 1);
    if (!rc && i < r->ni) rc = r->drv->memcpy_htod(r->dev[i], r->bufs[i], bytes);
    else if (!rc) rc = r->drv->memset_d8(r->dev[i], 0xff, bytes);
    if (rc)
        return symc_error_setf(err, SYMC_ERR_DEVICE, "CUDA error %d preparing '%s' (%zu bytes)", rc, info->name, bytes);
    return symrt_set_tensor_address(r->c, info->name, (void *)(uintptr_t)r->dev[i], bytes, err);
}

/* Every tensor's size at the shapes set, and its buffer bound. */
static symc_status run_bind_all(run_state *r, uint64_t seed, symc_error *err) {
    uint64_t state = seed;
    for (uint32_t i = 0; i < r->ni + r->no; i++) {
        symrt_io_info info;
        if (i < r->ni) symrt_engine_input(r->e, i, &info, NULL);
        else symrt_engine_output(r->e, i - r->ni, &info, NULL);
        int64_t dims[8];
        int32_t rank;
        char what[160];
        snprintf(what, sizeof what, "%s '%s'", i < r->ni ? "input" : "output", info.name);
        /* an output at the most it can hold: its size may depend on the data */
        symc_status st = i < r->ni ? symrt_get_tensor_shape(r->c, info.name, dims, &rank, err)
                                   : symrt_get_tensor_max_shape(r->c, info.name, dims, &rank, err);
        if (!st) st = tool_tensor_size(what, info.dtype, rank, dims, &r->elems[i], &r->sizes[i], err);
        if (!st) st = run_bind(r, i, &info, &state, err);
        if (st) return st;
    }
    return SYMC_OK;
}

/* Enqueues the run and, on CUDA, waits and copies the outputs back. */
static symc_status run_execute(run_state *r, symc_error *err) {
    symc_status st = symrt_enqueue(r->c, NULL, err);
    if (st) return st;
    for (uint32_t i = 0; r->drv && i < r->no; i++) {
        symrt_io_info info;
        symrt_engine_output(r->e, i, &info, NULL);
        int rc = r->drv->ctx_synchronize();
        if (!rc) rc = r->drv->memcpy_dtoh(r->bufs[r->ni + i], r->dev[r->ni + i], r->sizes[r->ni + i]);
        if (rc)
            return symc_error_setf(err, SYMC_ERR_DEVICE, "CUDA error %d running the engine or reading '%s'", rc,
                                   info.name);
    }
    return SYMC_OK;
}

/* Each output's shape (the run's real one: sizes known only after the run
 * are synced first) and checksums on stdout, and the --output files. */
static symc_status run_report(const run_state *r, const run_opts *o, symc_error *err) {
    symc_status st = symrt_context_sync_shapes(r->c, err);
    if (st) return st;
    for (uint32_t i = 0; i < r->no; i++) {
        symrt_io_info info;
        symrt_engine_output(r->e, i, &info, NULL);
        int64_t dims[8];
        int32_t rank;
        if ((st = symrt_get_output_shape(r->c, info.name, dims, &rank, err))) return st;
        const void *data = r->bufs[r->ni + i];
        size_t elems = 1; /* at most the elements allocated (r->elems), which the max shape had */
        for (int d = 0; d < rank; d++) elems *= (size_t)dims[d];
        printf("%s: %s[", info.name, symc_dtype_name(info.dtype));
        for (int d = 0; d < rank; d++) printf("%s%" PRId64, d ? ", " : "", dims[d]);
        double sum = 0, asum = 0;
        for (size_t k = 0; k < elems; k++) {
            double v = symc_dtype_load(data, info.dtype, k);
            sum += v;
            asum += fabs(v);
        }
        printf("]  sum %.9g  abs-sum %.9g\n", sum, asum);
        for (int k = 0; k < o->n_outputs; k++) {
            const char *eq = strchr(o->outputs[k], '=');
            if (eq && names_tensor(o->outputs[k], eq, info.name))
                st = npy_write(eq + 1, info.dtype, rank, dims, data, err);
            if (st) return st;
        }
    }
    return SYMC_OK;
}

static void run_free(run_state *r) {
    for (uint32_t i = 0; i < 2 * MAX_IO; i++) {
        free(r->bufs[i]);
        if (r->dev[i]) r->drv->mem_free(r->dev[i]);
    }
    for (uint32_t i = 0; i < MAX_IO; i++) free(r->given[i].data);
    symrt_context_destroy(r->c);
    symrt_engine_destroy(r->e);
}

static int cmd_run(int argc, char **argv) {
    run_opts o;
    int rc = run_parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    symc_error err;
    run_state r;
    memset(&r, 0, sizeof r);
    rc = 1;
    if (tool_check_regular_file(o.engine, "engine", &err) || symrt_engine_load_file(o.engine, &r.e, &err) ||
        symrt_context_create(r.e, o.be, NULL, &r.c, &err))
        goto fail;
    if (o.be == SYMRT_BACKEND_CUDA && !(r.drv = rt_cuda_driver(&err))) goto fail;
    r.ni = symrt_engine_num_inputs(r.e);
    r.no = symrt_engine_num_outputs(r.e);
    if (r.ni > MAX_IO || r.no > MAX_IO) {
        symc_error_setf(&err, SYMC_ERR_UNSUPPORTED, "more than %d inputs or outputs", MAX_IO);
        goto fail;
    }
    if (run_check_outputs(&r, &o, &err)) goto fail;
    if ((rc = run_read_inputs(&r, &o, &err))) {
        if (rc == 2) goto done; /* said already */
        goto fail;
    }
    rc = 1;
    if (run_set_shapes(&r, &o, &err) || run_bind_all(&r, o.seed, &err) || run_execute(&r, &err) ||
        run_report(&r, &o, &err))
        goto fail;
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "symc: %s\n", err.msg);
done:
    run_free(&r);
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
    {"inspect", "print a module (symbols, guards, symbolic shapes) or an engine (GPU steps, memory)", cmd_inspect},
    {"dot", "a model or engine as a Graphviz graph: symbolic shapes on the edges, fused groups as clusters",
     symc_cmd_dot},
    {"triton", "write an engine's Triton Inference Server model-repository entry (config.pbtxt and the engine)",
     symc_cmd_triton},
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
