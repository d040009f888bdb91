/* symc bench's reports (tools/bench_internal.h): the table on stdout, --profile's steps, the first
 * call's host time per step, --json, and --sweep's --csv and --plot series. */
#include "tools/bench_internal.h"

static int b_cmp_step(const void *a, const void *b) {
    const symrt_step_profile *x = a, *y = b;
    return (x->ms < y->ms) - (x->ms > y->ms); /* slowest first */
}

/* The --profile table of one point: the slowest steps first, then the time
 * per op and per kind of step. */
void tool_bench_print_profile(const b_result *x, double p50) {
    uint32_t n = x->n_prof;
    symrt_step_profile *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, x->prof, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, b_cmp_step);
    double sum = x->prof_sum > 0 ? x->prof_sum : 1;
    printf("  profile: %u steps, %.4f ms summed (a plain run: p50 %.4f ms; events between steps add a little)\n", n,
           x->prof_sum, p50);
    printf("  %9s %6s %6s %8s  %-6s %-10s %-28s %s\n", "ms", "%", "cum%", "host us", "kind", "op", "node", "what");
    double cum = 0;
    uint32_t shown = n < 40 ? n : 40;
    for (uint32_t i = 0; i < shown; i++) {
        cum += sorted[i].ms;
        printf("  %9.4f %6.2f %6.2f %8.1f  %-6s %-10s %-28.28s %s\n", sorted[i].ms, 100.0 * sorted[i].ms / sum,
               100.0 * cum / sum, sorted[i].host_us, sorted[i].kind, sorted[i].op, sorted[i].node, sorted[i].detail);
    }
    if (shown < n) printf("  ... %u more steps, %.4f ms\n", n - shown, x->prof_sum - cum);
    /* per op and per kind */
    const char *names[64];
    double ms[64];
    int cnt[64], m = 0;
    for (int pass = 0; pass < 2; pass++) {
        m = 0;
        for (uint32_t i = 0; i < n; i++) {
            const char *k = pass ? x->prof[i].kind : x->prof[i].op;
            int j = 0;
            while (j < m && strcmp(names[j], k)) j++;
            if (j == m) {
                if (m == 64) continue;
                names[m] = k, ms[m] = 0, cnt[m] = 0, m++;
            }
            ms[j] += x->prof[i].ms;
            cnt[j]++;
        }
        printf("  by %s:", pass ? "kind" : "op (of a step's first node)");
        for (int a = 0; a < m; a++) /* descending */
            for (int b = a + 1; b < m; b++)
                if (ms[b] > ms[a]) {
                    const char *tn = names[a];
                    double tm = ms[a];
                    int tc = cnt[a];
                    names[a] = names[b], ms[a] = ms[b], cnt[a] = cnt[b];
                    names[b] = tn, ms[b] = tm, cnt[b] = tc;
                }
        for (int a = 0; a < m; a++)
            printf("%s %s %.4f ms (%d, %.1f%%)", a ? "," : "", names[a], ms[a], cnt[a], 100.0 * ms[a] / sum);
        printf("\n");
    }
    free(sorted);
    fflush(stdout);
}

/* --profile: the host side of the first call at this shape (a profiled
 * run): its total over the steps, per kind of step, and the slowest steps. */
static int b_cmp_host(const void *a, const void *b) {
    const symrt_step_profile *x = a, *y = b;
    return (x->host_us < y->host_us) - (x->host_us > y->host_us); /* slowest first */
}

void tool_bench_print_first(const b_result *x) {
    uint32_t n = x->n_prof;
    symrt_step_profile *sorted = malloc((n ? n : 1) * sizeof *sorted);
    if (!sorted) return;
    memcpy(sorted, x->first_prof, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, b_cmp_host);
    const char *kinds[] = {"conv", "gemm", "kernel", "copy"};
    double sum = 0, by[4] = {0};
    int cnt[4] = {0};
    for (uint32_t i = 0; i < n; i++) {
        sum += sorted[i].host_us;
        for (int k = 0; k < 4; k++)
            if (!strcmp(sorted[i].kind, kinds[k])) by[k] += sorted[i].host_us, cnt[k]++;
    }
    printf("  first call at this shape (profiled): %.1f us, of it %.1f us enqueueing the %u steps:", x->first_us, sum,
           n);
    for (int k = 0; k < 4; k++)
        if (cnt[k]) printf(" %s %.1f us (%d)", kinds[k], by[k], cnt[k]);
    printf("\n");
    for (uint32_t i = 0; i < n && i < 8; i++)
        printf("  %9.1f us  %-6s %-10s %-28.28s %s\n", sorted[i].host_us, sorted[i].kind, sorted[i].op, sorted[i].node,
               sorted[i].detail);
    free(sorted);
    fflush(stdout);
}

void tool_bench_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
    }
    fputc('"', f);
}

static void b_json_num(FILE *f, double v) {
    if (isfinite(v)) fprintf(f, "%.9g", v);
    else fprintf(f, "null");
}

int tool_bench_write_json(const char *path, const char *engine, const char *backend, const char *device, const b_run *r,
                          const b_point *pts, const b_result *res, int n, symc_error *err) {
    ir_out out; /* a regular file replaced whole, anything else (/dev/stdout) written in place */
    if (ir_out_open(&out, path, err)) return 1;
    FILE *f = out.f;
    fprintf(f, "{\n  \"engine\": ");
    tool_bench_json_str(f, engine);
    fprintf(f, ",\n  \"backend\": ");
    tool_bench_json_str(f, backend);
    fprintf(f, ",\n  \"device\": ");
    tool_bench_json_str(f, device);
    fprintf(f, ",\n  \"timer\": \"%s\",\n  \"iters\": %d,\n  \"warmup\": %d,\n  \"points\": [",
            r->drv ? "cuda-events" : "host", r->iters, r->warmup);
    for (int k = 0; k < n; k++) {
        const b_point *p = &pts[k];
        const b_result *x = &res[k];
        char st[2048];
        tool_bench_shape_text(p, st, sizeof st);
        fprintf(f, "%s\n    {\"label\": ", k ? "," : "");
        tool_bench_json_str(f, p->label);
        fprintf(f, ", \"point\": ");
        tool_bench_json_str(f, st);
        fprintf(f, ", \"shapes\": {");
        for (uint32_t i = 0; i < p->n; i++) {
            fprintf(f, "%s", i ? ", " : "");
            tool_bench_json_str(f, p->items[i].name);
            fprintf(f, ": [");
            for (int32_t d = 0; d < p->items[i].rank; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", p->items[i].dims[d]);
            fprintf(f, "]");
        }
        fprintf(f, "}, \"outputs\": {");
        for (uint32_t o = 0; o < r->no && o < B_MAX_IO; o++) {
            symrt_io_info oi;
            symrt_engine_output(r->e, o, &oi, NULL);
            fprintf(f, "%s", o ? ", " : "");
            tool_bench_json_str(f, oi.name);
            fprintf(f, ": [");
            for (int32_t d = 0; d < x->out_rank[o]; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", x->out_dims[o][d]);
            fprintf(f, "]");
        }
        fprintf(f, "},\n     \"p50_ms\": ");
        b_json_num(f, x->p50);
        fprintf(f, ", \"p90_ms\": ");
        b_json_num(f, x->p90);
        fprintf(f, ", \"p99_ms\": ");
        b_json_num(f, x->p99);
        fprintf(f, ", \"mean_ms\": ");
        b_json_num(f, x->mean);
        fprintf(f, ", \"min_ms\": ");
        b_json_num(f, x->min);
        fprintf(f, ", \"stream_ms\": ");
        b_json_num(f, x->stream_ms);
        fprintf(f, ", \"host_us\": ");
        b_json_num(f, x->host_us);
        fprintf(f, ", \"host_p90_us\": ");
        b_json_num(f, x->host_p90_us);
        fprintf(f, ", \"first_us\": ");
        b_json_num(f, x->first_us);
        fprintf(f, ", \"shape_us\": ");
        b_json_num(f, x->shape_us);
        fprintf(f,
                ",\n     \"graph_replays\": %" PRIu64 ", \"graph_captures\": %" PRIu64 ", \"graph_updates\": %" PRIu64
                ", \"graph_plain\": %" PRIu64 ", \"graph_failed\": %" PRIu64 ", \"setups_made\": %" PRIu64
                ", \"setups_shared\": %" PRIu64,
                x->graph.replays, x->graph.captures, x->graph.updates, x->graph.plain, x->graph.failed,
                x->graph.setups_made, x->graph.setups_shared);
        fprintf(f, ",\n     \"batch\": %" PRId64 ", \"throughput\": ", x->batch);
        b_json_num(f, x->throughput);
        fprintf(f, ", \"iters\": %d, \"sets\": %u, \"nan_out\": %zu", x->iters, x->sets, x->nan_out);
        if (x->mem)
            fprintf(f,
                    ",\n     \"mem_measured_bytes\": %" PRIu64 ", \"mem_formula_bytes\": %" PRIu64
                    ", \"mem_formula_held_bytes\": %" PRIu64 ", \"mem_workspace_formula_bytes\": %" PRIu64
                    ", \"mem_weights_bytes\": %" PRIu64 ", \"mem_library_bytes\": %" PRIu64
                    ", \"mem_context_bytes\": %" PRIu64 ", \"mem_formula_excludes_cudnn\": %s",
                    x->mem_measured, x->mem_formula, x->mem_formula_held, x->mem_workspace, r->mem->weights,
                    r->mem->library, r->mem_context, r->mem->has_conv ? "true" : "false");
        if (x->prof) {
            fprintf(f, ",\n     \"profile_sum_ms\": ");
            b_json_num(f, x->prof_sum);
            fprintf(f, ", \"profile\": [");
            for (uint32_t i = 0; i < x->n_prof; i++) {
                const symrt_step_profile *q = &x->prof[i];
                fprintf(f, "%s\n       {\"step\": %u, \"node\": ", i ? "," : "", i);
                tool_bench_json_str(f, q->node);
                fprintf(f, ", \"op\": ");
                tool_bench_json_str(f, q->op);
                fprintf(f, ", \"kind\": \"%s\", \"ms\": ", q->kind);
                b_json_num(f, q->ms);
                fprintf(f, ", \"host_us\": ");
                b_json_num(f, q->host_us);
                if (x->first_prof) {
                    fprintf(f, ", \"first_host_us\": ");
                    b_json_num(f, x->first_prof[i].host_us);
                }
                fprintf(f, ", \"detail\": ");
                tool_bench_json_str(f, q->detail);
                fprintf(f, "}");
            }
            fprintf(f, "]");
        }
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]\n}\n");
    return ir_out_close(&out, err) ? 1 : 0;
}

/* --plot and --csv: per point the swept symbol's value (the template's first
 * symbol at the point's level; the point's index without --sweep or
 * symbol) and the memory: measured on CUDA where every point has it, else
 * the engine's formula at the point (weights + activation workspace of the
 * schedule the backend runs + library workspace, tools/memory.h). */
static int b_sweep_series(const b_opts *o, const symrt_engine *e, const b_point *tmpl, const b_run *run,
                          const b_point *pts, const b_result *res, int n, double *x, double *mem, int *measured,
                          char *sym_name, size_t cap, symc_error *err) {
    snprintf(sym_name, cap, "point");
    symrt_symbol_info s = {0};
    int have_sym = 0;
    for (uint32_t k = 0; k < tmpl->n && !have_sym; k++)
        for (int32_t d = 0; d < tmpl->items[k].rank && !have_sym; d++)
            if (tmpl->items[k].sym[d]) {
                uint32_t ns = symrt_engine_num_symbols(e);
                for (uint32_t j = 0; j < ns && !have_sym; j++)
                    have_sym = !symrt_engine_symbol(e, j, &s, NULL) && !strcmp(s.name, tmpl->items[k].sym[d]);
            }
    if (have_sym && o->sweep) snprintf(sym_name, cap, "%s", s.name);
    for (int k = 0; k < n; k++)
        x[k] = have_sym && o->sweep && pts[k].level >= 0 ? (double)tool_bench_level(&s, pts[k].level) : k;
    *measured = run->mem != NULL;
    for (int k = 0; k < n; k++) *measured &= res[k].mem;
    if (*measured) {
        for (int k = 0; k < n; k++) mem[k] = (double)res[k].mem_measured;
        return 0;
    }
    const rt_engine *re = rt_engine_of(e);
    tool_memory_set m = {0};
    int rc = 1;
    int64_t *vals = NULL;
    if (tool_memory_set_init(&m, re, run->drv && rt_engine_io(re)->n_steps ? RT_SCHEDULE_STEPS : RT_SCHEDULE_NODES,
                             err))
        goto out;
    vals = calloc(re->n_symbols ? re->n_symbols : 1, sizeof *vals);
    if (!vals) {
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int k = 0; k < n; k++) {
        int64_t ws = 0;
        uint64_t fixed = 0;
        if (tool_bench_point_symbols(re, &pts[k], vals) || tool_memory_set_eval(&m, vals, &ws, &fixed, err)) {
            if (!err->msg[0]) symc_error_setf(err, SYMC_ERR_INVALID_ARG, "point %s binds no symbol", pts[k].label);
            goto out;
        }
        mem[k] = (double)fixed + (double)ws;
    }
    rc = 0;
out:
    free(vals);
    tool_memory_set_free(&m);
    return rc;
}

static void b_csv_field(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

int tool_bench_write_sweep(const b_opts *o, const symrt_engine *e, const b_point *tmpl, const b_run *run,
                           const char *device, const b_point *pts, const b_result *res, int n, symc_error *err) {
    double *x = calloc((size_t)n, sizeof *x), *mem = calloc((size_t)n, sizeof *mem),
           *lat = calloc((size_t)n, sizeof *lat);
    double *mib = calloc((size_t)n, sizeof *mib);
    const char **labels = calloc((size_t)n, sizeof *labels);
    char sym[64], (*text)[320] = calloc((size_t)n, sizeof *text);
    int measured = 0, rc = 1;
    if (!x || !mem || !lat || !mib || !labels || !text) {
        symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory");
        goto out;
    }
    if (b_sweep_series(o, e, tmpl, run, pts, res, n, x, mem, &measured, sym, sizeof sym, err)) goto out;
    const char *mem_kind = measured ? "measured" : "formula";
    if (o->csv) {
        ir_out csv;
        if (ir_out_open(&csv, o->csv, err)) goto out;
        FILE *f = csv.f;
        fprintf(f,
                "label,shapes,%s,p50_ms,p90_ms,p99_ms,mean_ms,min_ms,host_us,first_us,samples_per_s,memory_bytes,"
                "memory_source\n",
                sym);
        for (int k = 0; k < n; k++) {
            char st[2048];
            tool_bench_shape_text(&pts[k], st, sizeof st);
            b_csv_field(f, pts[k].label);
            fputc(',', f);
            b_csv_field(f, st);
            fprintf(f, ",%.0f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.0f,%s\n", x[k], res[k].p50, res[k].p90,
                    res[k].p99, res[k].mean, res[k].min, res[k].host_us, res[k].first_us, res[k].throughput, mem[k],
                    mem_kind);
        }
        if (ir_out_close(&csv, err)) goto out;
    }
    if (o->plot) {
        for (int k = 0; k < n; k++) {
            lat[k] = res[k].p50;
            mib[k] = mem[k] / 1048576.0;
            size_t len = (size_t)snprintf(text[k], sizeof text[k], "%s (", pts[k].label);
            tool_bench_shape_text(&pts[k], text[k] + len, sizeof text[k] - len - 1);
            len = strlen(text[k]);
            text[k][len] = ')', text[k][len + 1] = '\0';
            labels[k] = text[k];
        }
        char title[512], sub[512], xl[128];
        snprintf(title, sizeof title, "%s: latency and memory across %s", o->engine, sym);
        snprintf(sub, sizeof sub, "%s, %s timer, p50 of %d runs per point", device, run->drv ? "CUDA-event" : "host",
                 run->iters);
        snprintf(xl, sizeof xl, "%s (symbol value at the sweep's levels)", sym);
        tool_plot p = {.title = title,
                       .subtitle = sub,
                       .x_label = xl,
                       .y1_label = "latency p50, ms",
                       .y2_label = measured ? "memory held, MiB (measured)"
                                            : "memory, MiB (formula: weights + workspace)",
                       .y1_name = "latency p50 (ms)",
                       .y2_name = measured ? "memory (MiB, measured)" : "memory (MiB, formula)",
                       .x = x,
                       .y1 = lat,
                       .y2 = mib,
                       .point_labels = labels,
                       .n = n};
        if (tool_plot_svg(o->plot, &p, err)) goto out;
    }
    rc = 0;
out:
    free(x), free(mem), free(lat), free(mib), free(labels), free(text);
    return rc;
}

void tool_bench_print_header(const b_opts *o, const b_run *run, const char *device) {
    printf("# %s on %s, %s timer, %ld iters after %ld warm-up%s\n", o->engine, device, run->drv ? "CUDA-event" : "host",
           o->iters, o->warmup,
           o->ref_budget           ? " (fewer once the timed runs pass 5 s)"
               : !run->drv         ? ""
               : o->default_stream ? (o->graphs ? ", default stream, CUDA graphs" : ", default stream, no graphs")
                                   : (o->graphs ? ", own stream, CUDA graphs" : ", own stream, no graphs"));
    printf("%-7s %-36s %10s %10s %10s %9s %9s %12s", "point", "shapes", "p50 ms", "p90 ms", "p99 ms", "host us",
           "first us", "samples/s");
    if (run->mem) printf(" %10s %10s", "mem MiB", "formula");
    printf("\n");
    fflush(stdout);
}

void tool_bench_print_row(const b_run *run, const b_point *p, const b_result *x) {
    char st[256];
    tool_bench_shape_text(p, st, sizeof st);
    printf("%-7s %-36s %10.4f %10.4f %10.4f %9.1f %9.1f %12.1f", p->label, st, x->p50, x->p90, x->p99, x->host_us,
           x->first_us, x->throughput);
    if (x->mem) printf(" %10.1f %10.1f", x->mem_measured / 1048576.0, x->mem_formula_held / 1048576.0);
    else if (run->mem) printf(" %10s %10s", "?", "?");
    printf("\n");
    if (x->nan_out)
        printf("        warning: %zu NaN elements in the first output (poison not overwritten?)\n", x->nan_out);
    fflush(stdout);
}
