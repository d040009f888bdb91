/* symc bench: latency and throughput of one engine at one or many input shapes. This file reads
 * the flags and runs the command; the points, the measurement and the reports are bench_points.c,
 * bench_measure.c and bench_report.c (tools/bench_internal.h).
 *
 * Approach. One engine, one context, one stream for the whole run, so the
 * numbers include what a real caller pays when the shape changes. A "point"
 * is one shape per input. Points come from --shapes (one point; repeat the
 * flag for more inputs), from repeated --point (one point each), or from
 * --sweep, which expands a template whose dims may name engine symbols
 * (x:Bx196x768) at the levels min, opt, opt+1, a prime between opt and max,
 * and max, every symbol at the same level; the specs are read by the one
 * shape parser of the tools (frontend/onnx.h, fe_parse_point), so bench,
 * run and compile share its grammar and messages. Per point: set the input
 * shapes, read the output shapes, allocate `sets` input/output buffer sets once
 * (device memory from rt_cuda_driver's table on the CUDA backend, host
 * memory on the reference backend), fill the inputs with seeded random
 * values and poison the outputs, time the first enqueue at the new shape,
 * warm up, then time `iters` enqueues. On CUDA each is bracketed by events on
 * the stream (GPU time); then `iters` more, each after waiting for the run
 * two before it, timed by clock_gettime around the symrt_enqueue call (host
 * time per call with one run in flight: back to back, a full launch queue
 * would make an enqueue wait for the GPU); sets rotate per iteration so
 * inputs that fit in L2 are not served from it. On the reference backend,
 * which runs synchronously, the host clock is the latency. Reported per
 * point: p50/p90/p99/mean/min latency, median host time per call, first-call
 * host time, and samples/s = leading dim of the first input / p50. One table
 * row per point on stdout; --json writes every number. Every failure is one
 * line "symc: bench: ..." and exit 1 (2 for usage).
 *
 * Memory (CUDA backend): the device memory the context holds, measured with
 * cuMemGetInfo as the free memory before the context is created minus the
 * least free memory seen after each point (the point's own input/output
 * buffers freed first, so only the context's constants, workspace and
 * library state count; other processes on the GPU add noise). Next to it
 * the formula from the engine alone (tools/memory.h): weights + the
 * activation workspace formula at this point + cuBLASLt's fixed workspace;
 * "held" is that with the workspace at its largest over the points so far,
 * because the context's workspace only grows, and it is what the
 * measurement should stay under (a cuDNN workspace, chosen per shape, the
 * ones a 1x1 convolution's bias pass reads (H * W elements, cuda_gemm.c), the
 * module's code and the library handles are not in the formula). Without
 * a formula or a driver (the reference backend) the fields are left out. */
#include "tools/bench_internal.h"

int tool_bench_usage(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int rc = tool_vusage("bench", fmt, ap);
    va_end(ap);
    return rc;
}

/* trtexec's timing flags, which a trtexec user types first: each answered with symc bench's own
 * spelling (their units differ: trtexec's --warmUp and --duration are milliseconds and seconds of
 * time, symc's --warmup and --iters are counts of runs), NULL for another flag. */
static const char *trtexec_flag(const char *arg) {
    static const struct {
        const char *name, *answer;
    } map[] = {
        {"--iterations", "--iterations is trtexec's; symc bench takes --iters N (timed runs per point)"},
        {"--warmUp", "--warmUp is trtexec's (milliseconds); symc bench takes --warmup N (untimed runs first)"},
        {"--duration", "--duration is trtexec's (seconds); symc bench times a count of runs: --iters N"},
        {"--dumpProfile", "--dumpProfile is trtexec's; symc bench takes --profile (each step's GPU time)"},
        {"--exportProfile", "--exportProfile is trtexec's; symc bench takes --trace FILE.json (a Chrome trace)"},
        {"--exportTimes", "--exportTimes is trtexec's; symc bench takes --json FILE (or --csv FILE)"},
        {"--exportOutput", "--exportOutput is trtexec's; symc run writes outputs: --output NAME=FILE.npy"},
        {"--verbose", "--verbose is trtexec's; symc bench prints every point already (--quiet for less)"},
    };
    size_t n = strcspn(arg, "=");
    for (size_t k = 0; k < sizeof map / sizeof *map; k++)
        if (strlen(map[k].name) == n && !strncmp(arg, map[k].name, n)) return map[k].answer;
    return NULL;
}

static void b_help(void) {
    printf("usage: symc bench ENGINE.symx --shapes NAME:AxBxC [--shapes ...]\n"
           "       symc bench ENGINE.symx --point NAME:AxB,NAME2:CxD [--point ...]\n"
           "       symc bench ENGINE.symx --sweep --shapes NAME:Bx196x768\n"
           "options: [--backend cuda|ref] [--iters N] [--warmup N] [--rotate N] [--seed N]\n"
           "         [--json FILE] [--csv FILE] [--plot FILE.svg] [--profile] [--trace FILE.json]\n"
           "         [--no-graphs] [--stream own|default] [--warm] [--quiet]\n"
           "trtexec's --loadEngine=ENGINE.symx names the engine too; every flag takes --flag=value\n"
           "or --flag value.\n"
           "Times symrt_enqueue at each point (one shape per input) in one context.\n"
           "  --shapes   adds inputs to the single point; a dim may name an engine symbol,\n"
           "             which stands for its opt value (a symbol name may not contain 'x')\n"
           "  --point    one point per flag, every input in one spec (',' or ';' between)\n"
           "  --sweep    expands the --shapes template at the levels min, opt, opt+1, a prime\n"
           "             between opt and max, and max, every symbol at the same level\n"
           "             (levels that do not exist or repeat a point are skipped)\n"
           "  --backend  cuda (the default where a GPU driver loads; without one, ref, said\n"
           "             once): GPU time with CUDA events around each enqueue on\n"
           "             a stream, host time with a monotonic clock around the call itself;\n"
           "             ref: the CPU reference backend, host time only\n"
           "  --iters    timed runs per point (default 100 on cuda; on ref 5, or fewer\n"
           "             once the timed runs pass 5 s, at least 1)\n"
           "  --warmup   untimed runs first (default 10 on cuda; on ref 1, none after a\n"
           "             first run of 1 s or more)\n"
           "  --no-graphs  every enqueue launches step by step; by default CUDA graphs\n"
           "             capture each shape and buffer set once and replay it, as for any\n"
           "             context (symrt_context_set_cuda_graphs; --graphs is accepted);\n"
           "             with graphs each buffer set runs twice more in the warm-up, so\n"
           "             the timed runs are replays\n"
           "  --warm     symrt_context_warm once before the first point: the engine runs at\n"
           "             each point its build tuned at, so the first call at each point\n"
           "             (first_us) pays no library module loading\n"
           "  --stream   own (default): a non-blocking stream of the bench's; default: the\n"
           "             legacy default stream (NULL), where most callers enqueue\n"
           "  --profile  per point, each step's GPU time (CUDA events around every step,\n"
           "             median of up to 25 runs), slowest first, with its op, fused\n"
           "             kernel or library call and algorithm, and its host time; then totals\n"
           "             per op and kind. The first call at each point is a profiled run\n"
           "             too: its host time per step (the libraries' per-shape setup is\n"
           "             there), per kind, the slowest steps first (first_us includes its events)\n"
           "  --trace F  writes the steps of the last profiled run of every point as a\n"
           "             Chrome trace (chrome://tracing, ui.perfetto.dev); implies --profile\n"
           "  --rotate   buffer sets rotated per run (default on cuda: enough to pass\n"
           "             128 MiB, at most 8, so small inputs do not live in L2; ref: 1)\n"
           "  --csv      writes one row per point: label, shapes, the swept symbol's value, p50/p90/\n"
           "             p99/mean/min ms, host and first-call us, samples/s, memory bytes and\n"
           "             its source (measured on cuda, else the formula: see below)\n"
           "  --plot F   with --sweep: latency (p50) and memory against the first symbol of the\n"
           "             template, one point per level, as an SVG (no other program needed)\n"
           "  --json     writes every number (p50/p90/p99/mean/min ms, host_us, first_us,\n"
           "             throughput = leading dim of the first input / p50, per second;\n"
           "             on cuda mem_measured_bytes and mem_formula_bytes, see below)\n"
           "Memory (cuda): 'mem MiB' is the device memory the context holds after the point\n"
           "(cuMemGetInfo: free before the context minus the least free since), 'formula'\n"
           "what `symc inspect` predicts for it: weights + activation workspace formula\n"
           "(largest over the points so far: the workspace only grows) + cuBLASLt workspace.\n"
           "Inputs are seeded random values ([-1, 1) for floats), as `symc run` makes them.\n");
}

/* Reads the flags into o. Returns -1 to go on, else the exit code: 0 after
 * --help, 2 after a usage error (said on stderr). */
static int b_parse_args(int argc, char **argv, b_opts *o) {
    *o = (b_opts){.backend = NULL, .iters = -1, .warmup = -1, .seed = 1, .graphs = 1};
    for (int i = 0; i < argc; i++) {
        const char *v;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            b_help();
            return 0;
        }
        if (!strcmp(argv[i], "--sweep")) o->sweep = 1;
        else if (!strcmp(argv[i], "--quiet")) o->quiet = 1;
        else if (!strcmp(argv[i], "--graphs")) o->graphs = 1;
        else if (!strcmp(argv[i], "--no-graphs")) o->graphs = 0;
        else if (!strcmp(argv[i], "--warm")) o->warm = 1;
        else if ((v = tool_flag(argc, argv, &i, "--stream"))) {
            if (strcmp(v, "own") && strcmp(v, "default"))
                return tool_bench_usage("--stream takes own or default, got '%s'", v);
            o->default_stream = !strcmp(v, "default");
        } else if (!strcmp(argv[i], "--profile")) o->profile = 1;
        else if ((v = tool_flag(argc, argv, &i, "--trace"))) o->trace = v;
        else if ((v = tool_flag(argc, argv, &i, "--shapes"))) {
            if (o->n_shapes == B_MAX_IO) return tool_bench_usage("too many --shapes");
            o->shapes[o->n_shapes++] = v;
        } else if ((v = tool_flag(argc, argv, &i, "--point"))) {
            if (o->n_points == B_MAX_POINTS) return tool_bench_usage("too many --point");
            o->points[o->n_points++] = v;
        } else if ((v = tool_flag(argc, argv, &i, "--loadEngine"))) {
            if (o->engine) return tool_bench_usage("takes one engine, got a second: '%s'", v);
            o->engine = v;
        } else if ((v = tool_flag(argc, argv, &i, "--backend"))) o->backend = v;
        else if ((v = tool_flag(argc, argv, &i, "--json"))) o->json = v;
        else if ((v = tool_flag(argc, argv, &i, "--plot"))) o->plot = v;
        else if ((v = tool_flag(argc, argv, &i, "--csv"))) o->csv = v;
        else if ((v = tool_flag(argc, argv, &i, "--iters")) || (v = tool_flag(argc, argv, &i, "--warmup")) ||
                 (v = tool_flag(argc, argv, &i, "--rotate")) || (v = tool_flag(argc, argv, &i, "--seed"))) {
            char *end;
            long long x = strtoll(v, &end, 10);
            /* the flag itself: argv[i] when given as --flag=value, else the word before the value */
            const char *f = !strncmp(argv[i], "--", 2) ? argv[i] : argv[i - 1];
            size_t fl = strcspn(f, "=");
            if (!*v || *end || x < 0 || x > 10000000)
                return tool_bench_usage("%.*s takes a whole number from 0 to 10000000, got '%s'", (int)fl, f, v);
            if (!strncmp(f, "--iters", 7)) {
                if (x < 1) return tool_bench_usage("--iters needs at least 1");
                o->iters = (long)x;
            } else if (!strncmp(f, "--warmup", 8)) o->warmup = (long)x;
            else if (!strncmp(f, "--rotate", 8)) {
                if (x < 1 || x > 64) return tool_bench_usage("--rotate takes 1 to 64");
                o->rotate = (long)x;
            } else o->seed = (uint64_t)x;
        } else if (argv[i][0] == '-' && trtexec_flag(argv[i])) {
            return tool_bench_usage("%s", trtexec_flag(argv[i]));
        } else if (argv[i][0] == '-') {
            if (!strcmp(argv[i], "--shapes") || !strcmp(argv[i], "--point") || !strcmp(argv[i], "--backend") ||
                !strcmp(argv[i], "--json") || !strcmp(argv[i], "--iters") || !strcmp(argv[i], "--warmup") ||
                !strcmp(argv[i], "--rotate") || !strcmp(argv[i], "--seed") || !strcmp(argv[i], "--trace") ||
                !strcmp(argv[i], "--plot") || !strcmp(argv[i], "--csv"))
                return tool_bench_usage("%s needs a value", argv[i]);
            return tool_bench_usage("unknown flag '%s'", argv[i]);
        } else if (o->engine) return tool_bench_usage("takes one engine, got a second: '%s'", argv[i]);
        else o->engine = argv[i];
    }
    if (!o->engine) return tool_bench_usage("missing ENGINE.symx");
    if (!o->backend) { /* the GPU when there is one, else the reference backend, as symc run, said once */
        symc_error why = {0};
        o->backend = rt_cuda_driver(&why) ? "cuda" : "ref";
        if (!strcmp(o->backend, "ref")) snprintf(o->fell_back, sizeof o->fell_back, "%s", why.msg);
    }
    if (!strcmp(o->backend, "ref")) o->be = SYMRT_BACKEND_REF;
    else if (!strcmp(o->backend, "cuda")) o->be = SYMRT_BACKEND_CUDA;
    else return tool_bench_usage("unknown backend '%s' (cuda or ref)", o->backend);
    if (!o->n_shapes && !o->n_points) return tool_bench_usage("needs --shapes or --point");
    if (o->n_points && (o->n_shapes || o->sweep))
        return tool_bench_usage("--point cannot be mixed with --shapes or --sweep");
    if (o->plot && !o->sweep)
        return tool_bench_usage(
            "--plot draws latency and memory across a sweep: it needs --sweep (and --shapes with a symbol)");
    if ((o->profile || o->trace) && o->be != SYMRT_BACKEND_CUDA)
        return tool_bench_usage(o->fell_back[0] ? "--profile and --trace time GPU steps: they need a GPU (%s)"
                                                : "--profile and --trace time GPU steps: they need --backend cuda%s",
                                o->fell_back);
    if (o->trace) o->profile = 1;
    o->ref_budget = o->be == SYMRT_BACKEND_REF && o->iters < 0 && o->warmup < 0;
    if (o->iters < 0) o->iters = o->be == SYMRT_BACKEND_CUDA ? 100 : 5;
    if (o->warmup < 0) o->warmup = o->be == SYMRT_BACKEND_CUDA ? 10 : 1;
    return -1;
}

int symc_cmd_bench(int argc, char **argv) {
    b_opts o;
    int rc = b_parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    char msg[512] = "";
    b_point tmpl;
    memset(&tmpl, 0, sizeof tmpl);
    fe_point *specs = calloc((size_t)o.n_points + 1, sizeof *specs);
    b_point *parsed = calloc((size_t)(o.n_points ? o.n_points : 1), sizeof *parsed);
    b_point *pts = calloc(B_MAX_POINTS, sizeof *pts);
    b_result *res = calloc(B_MAX_POINTS, sizeof *res);
    if (!specs || !parsed || !pts || !res) {
        free(specs), free(parsed), free(pts), free(res);
        fprintf(stderr, "symc: bench: out of memory\n");
        return 1;
    }
    symrt_engine *e = NULL;
    b_run run = {0};
    tool_memory_set mem = {0};
    symc_error err = {0};
    const char *device;
    int n, failed = -1;
    if ((rc = tool_bench_parse_specs(&o, specs, &tmpl, parsed))) goto done;
    if (o.fell_back[0] && !o.quiet)
        fprintf(stderr,
                "symc: bench: no GPU to time on (%s): timing on the reference backend, host time only "
                "(--backend ref says so; --backend cuda insists)\n",
                o.fell_back);
    rc = 1;
    if (tool_check_regular_file(o.engine, "engine", &err) || symrt_engine_load_file(o.engine, &e, &err)) goto fail;
    if ((n = tool_bench_points(e, &o, &tmpl, parsed, pts, msg, sizeof msg)) < 0) goto fail_msg;
    if (tool_bench_open(&run, e, &o, &mem, &device, &err)) goto fail;
    for (int k = 0; k < n; k++) /* every point's shapes are valid before any timing */
        if (tool_bench_set_shapes(&run, &pts[k], &err)) {
            failed = k;
            goto fail_point;
        }
    if (!o.quiet) tool_bench_print_header(&o, &run, device);
    for (int k = 0; k < n; k++) {
        if (tool_bench_point_run(&run, &pts[k], k, &res[k], &err)) {
            failed = k;
            goto fail_point;
        }
        tool_bench_point_memory(&run, &pts[k], &res[k]);
        if (!o.quiet) tool_bench_print_row(&run, &pts[k], &res[k]);
        if (!o.quiet && res[k].first_prof) tool_bench_print_first(&res[k]);
        if (!o.quiet && res[k].prof) tool_bench_print_profile(&res[k], res[k].p50);
    }
    if (o.json && tool_bench_write_json(o.json, o.engine, o.backend, device, &run, pts, res, n, &err)) goto fail;
    if ((o.plot || o.csv) && tool_bench_write_sweep(&o, e, &tmpl, &run, device, pts, res, n, &err)) goto fail;
    rc = 0;
    goto done;
fail_point: {
    char m2[SYMC_ERROR_MSG_CAP], st[256];
    snprintf(m2, sizeof m2, "%s", err.msg);
    tool_bench_shape_text(&pts[failed], st, sizeof st);
    fprintf(stderr, "symc: bench: point %s (%s): %s\n", pts[failed].label, st, m2);
}
    goto done;
fail_msg:
    fprintf(stderr, "symc: bench: %s\n", msg);
    goto done;
fail:
    fprintf(stderr, "symc: bench: %s\n", err.msg);
done:
    if (run.trace) {
        fprintf(run.trace, "\n]}\n");
        if (fclose(run.trace) && rc == 0) {
            fprintf(stderr, "symc: bench: cannot write --trace file %s\n", o.trace);
            rc = 1;
        }
    }
    for (int k = 0; k < B_MAX_POINTS; k++) free(res[k].prof), free(res[k].first_prof);
    if (run.drv && run.stream) run.drv->stream_destroy(run.stream);
    symrt_context_destroy(run.c);
    symrt_engine_destroy(e);
    if (run.mem) tool_memory_set_free(run.mem);
    for (int k = 0; k <= o.n_points; k++) fe_point_free(&specs[k]);
    free(specs);
    free(parsed);
    free(pts);
    free(res);
    return rc;
}
