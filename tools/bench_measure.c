/* symc bench's measurement (tools/bench_internal.h): one point at a time in one context, its buffers
 * bound (rotated over sets larger than L2 on CUDA), the first call, the warm-up, the timed runs
 * (CUDA events on the stream, or the host clock on the reference backend), host time per enqueue,
 * memory against the formula, and --profile's per-step times. */
#include "tools/bench_internal.h"

static double b_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int b_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* q-quantile of sorted v[0..n) with linear interpolation */
static double b_quant(const double *v, size_t n, double q) {
    if (!n) return NAN;
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo + 1 >= n) return v[n - 1];
    return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

#define B_CU(call, what)                                                                       \
    do {                                                                                       \
        int cu_rc_ = (call);                                                                   \
        if (cu_rc_) {                                                                          \
            symc_error_setf(err, SYMC_ERR_DEVICE, "CUDA driver error %d in %s", cu_rc_, what); \
            goto out;                                                                          \
        }                                                                                      \
    } while (0)

/* Sets every input's shape for point p; 0 or fills err. */
int tool_bench_set_shapes(const b_run *r, const b_point *p, symc_error *err) {
    symrt_io_info info;
    for (uint32_t k = 0; k < p->n; k++) {
        uint32_t i;
        for (i = 0; i < r->ni; i++)
            if (!symrt_engine_input(r->e, i, &info, NULL) && !strcmp(info.name, p->items[k].name)) break;
        if (i == r->ni) {
            char names[512];
            tool_input_names(r->e, names, sizeof names);
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no input named '%s' (inputs: %s)", p->items[k].name,
                                   names),
                   1;
        }
    }
    for (uint32_t i = 0; i < r->ni; i++) {
        symrt_engine_input(r->e, i, &info, NULL);
        const fe_point_input *it = NULL;
        for (uint32_t k = 0; k < p->n; k++)
            if (!strcmp(p->items[k].name, info.name)) it = &p->items[k];
        if (!it)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "no shape for input '%s' (add %s:AxB... to it)",
                                   info.name, info.name),
                   1;
        if (symrt_set_input_shape(r->c, info.name, it->dims, it->rank, err)) return 1;
    }
    int64_t dims[B_MAX_RANK];
    int32_t rank;
    for (uint32_t i = 0; i < r->ni + r->no; i++) { /* every buffer's size fits (checked.h) */
        if (i < r->ni) symrt_engine_input(r->e, i, &info, NULL);
        else symrt_engine_output(r->e, i - r->ni, &info, NULL);
        char what[160];
        snprintf(what, sizeof what, "%s '%s'", i < r->ni ? "input" : "output", info.name);
        /* an output's size may depend on the data: its buffer holds the most it can be */
        if (symrt_get_tensor_max_shape(r->c, info.name, dims, &rank, err) ||
            tool_tensor_size(what, info.dtype, rank, dims, NULL, NULL, err))
            return 1;
    }
    return 0;
}

/* The engine's symbol values at point p (from the input dims that bind
 * them); 0, or 1 when an input of the point is missing. */
int tool_bench_point_symbols(const rt_engine *e, const b_point *p, int64_t *vals) {
    for (uint32_t s = 0; s < e->n_symbols; s++) vals[s] = e->symbols[s].opt;
    const rt_engine *io = rt_engine_io(e); /* a regions root's sources index its graphs' inputs */
    for (uint32_t s = 0; s < e->n_sources; s++) {
        const rt_source *src = &e->sources[s];
        const char *name = io->tensors[io->inputs[src->input]].name;
        const fe_point_input *it = NULL;
        for (uint32_t k = 0; k < p->n; k++)
            if (!strcmp(p->items[k].name, name)) it = &p->items[k];
        if (!it || (int32_t)src->dim >= it->rank) return 1;
        vals[src->symbol] = it->dims[src->dim];
    }
    /* sizes known only after a run: at their capacity, what memory is planned for */
    int64_t cap[64];
    if (e->n_produced && e->n_produced <= 64 &&
        sym_program_eval(e->capacity_program, e->capacity_program_size, vals, e->n_symbols, cap, e->n_produced, NULL) ==
            SYMC_OK)
        for (uint32_t k = 0; k < e->n_produced; k++) vals[e->produced[k].symbol] = cap[k];
    return 0;
}

/* After point p ran (its buffers freed): what the context holds and what the
 * formula says. Leaves res->mem 0 when either is unknown. */
void tool_bench_point_memory(b_run *r, const b_point *p, b_result *res) {
    size_t fr = 0, total = 0;
    int64_t vals[256], ws = 0;
    uint64_t fixed = 0;
    if (!r->mem || !r->drv || r->mem->root->n_symbols > 256) return;
    if (r->drv->ctx_synchronize() || r->drv->mem_get_info(&fr, &total)) return;
    if (fr < r->free_min) r->free_min = fr;
    if (tool_bench_point_symbols(r->mem->root, p, vals) || tool_memory_set_eval(r->mem, vals, &ws, &fixed, NULL))
        return;
    if (ws > r->ws_held) r->ws_held = ws;
    res->mem = 1;
    res->mem_measured = r->free0 > r->free_min ? r->free0 - r->free_min : 0;
    res->mem_workspace = (uint64_t)ws;
    res->mem_formula = fixed + (uint64_t)ws;
    res->mem_formula_held = fixed + (uint64_t)r->ws_held;
}

static int b_cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* --profile at the point whose buffers are bound: `runs` profiled runs
 * (symrt_context_profile), each step's median time into res->prof (in step
 * order); the last run's timeline into the trace. 0 or fills err. */
static int b_point_profile(b_run *r, const b_point *p, int point_index, b_result *res, symc_error *err) {
    uint32_t n = 0;
    if (symrt_context_profile(r->c, r->stream, NULL, 0, &n, err)) return 1;
    int runs = r->iters < 3 ? 3 : r->iters > 25 ? 25 : r->iters;
    symrt_step_profile *all = calloc((size_t)runs * (n ? n : 1), sizeof *all);
    float *col = calloc((size_t)runs, sizeof *col);
    res->prof = calloc(n ? n : 1, sizeof *res->prof);
    if (!all || !col || !res->prof) {
        free(all), free(col);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of host memory for the profile of %u steps", n), 1;
    }
    for (int k = 0; k < runs; k++) {
        uint32_t got = 0;
        if (symrt_context_profile(r->c, r->stream, &all[(size_t)k * n], n, &got, err)) {
            free(all), free(col);
            return 1;
        }
    }
    res->n_prof = n;
    res->prof_sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        for (int k = 0; k < runs; k++) col[k] = all[(size_t)k * n + i].ms;
        qsort(col, (size_t)runs, sizeof *col, b_cmp_float);
        res->prof[i] = all[(size_t)(runs - 1) * n + i];
        res->prof[i].ms = col[runs / 2];
        res->prof_sum += col[runs / 2];
        for (int k = 0; k < runs; k++) col[k] = all[(size_t)k * n + i].host_us;
        qsort(col, (size_t)runs, sizeof *col, b_cmp_float);
        res->prof[i].host_us = col[runs / 2];
    }
    if (r->trace) {
        const symrt_step_profile *last = &all[(size_t)(runs - 1) * n];
        char st[256];
        tool_bench_shape_text(p, st, sizeof st);
        fprintf(r->trace, "%s\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, \"args\": {\"name\": ",
                r->trace_events++ ? "," : "", point_index);
        tool_bench_json_str(r->trace, st);
        fprintf(r->trace, "}}");
        double end = 0;
        for (uint32_t i = 0; i < n; i++) {
            double ts = r->trace_t0 + last[i].start_ms * 1e3, dur = last[i].ms * 1e3;
            fprintf(r->trace, ",\n{\"name\": ");
            tool_bench_json_str(r->trace, last[i].node);
            fprintf(r->trace,
                    ", \"cat\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": 0, \"ts\": %.3f, \"dur\": %.3f, "
                    "\"args\": {\"op\": ",
                    last[i].kind, point_index, ts, dur);
            tool_bench_json_str(r->trace, last[i].op);
            fprintf(r->trace, ", \"detail\": ");
            tool_bench_json_str(r->trace, last[i].detail);
            fprintf(r->trace, "}}");
            if (ts + dur > end) end = ts + dur;
        }
        r->trace_t0 = end + 100.0; /* the next point starts 100 µs later on the timeline */
    }
    free(all);
    free(col);
    return 0;
}

/* Runs one point; 0 or fills err. */
/* One point's inputs and outputs: their sizes at the point's shapes and their
 * buffers (host ones for the reference backend; for CUDA device ones in
 * `sets` rotating sets, dev[set * nio + tensor], with host staging). */
typedef struct b_bufs {
    uint32_t nio, sets;
    size_t bytes[2 * B_MAX_IO], elems[2 * B_MAX_IO];
    symrt_io_info info[2 * B_MAX_IO];
    void *host[2 * B_MAX_IO];
    uint64_t *dev;
} b_bufs;

/* Sets the point's shapes (timing the first shape query, which evaluates the
 * shape program and lays the memory out) and sizes every tensor; picks how
 * many buffer sets rotate on CUDA. */
static int b_point_sizes(b_run *r, const b_point *p, b_result *res, b_bufs *bf, symc_error *err) {
    size_t set_bytes = 0;
    double s0 = b_now_us();
    if (tool_bench_set_shapes(r, p, err)) return 1;
    if (r->no) {
        symrt_io_info o0;
        int64_t dims[B_MAX_RANK];
        int32_t rank;
        symrt_engine_output(r->e, 0, &o0, NULL);
        if (symrt_get_tensor_shape(r->c, o0.name, dims, &rank, err)) return 1;
    }
    res->shape_us = b_now_us() - s0;
    for (uint32_t i = 0; i < bf->nio; i++) {
        if (i < r->ni) symrt_engine_input(r->e, i, &bf->info[i], NULL);
        else symrt_engine_output(r->e, i - r->ni, &bf->info[i], NULL);
        int64_t dims[B_MAX_RANK];
        int32_t rank;
        if (symrt_get_tensor_max_shape(r->c, bf->info[i].name, dims, &rank, err)) return 1;
        char what[160];
        snprintf(what, sizeof what, "%s '%s'", i < r->ni ? "input" : "output", bf->info[i].name);
        if (tool_tensor_size(what, bf->info[i].dtype, rank, dims, &bf->elems[i], &bf->bytes[i], err)) return 1;
        size_t padded = (bf->bytes[i] + 255) & ~(size_t)255; /* bytes <= INT64_MAX: no wrap */
        set_bytes = set_bytes > SIZE_MAX - padded ? SIZE_MAX : set_bytes + padded;
        if (i == 0) res->batch = rank > 0 ? dims[0] : 1;
        if (i >= r->ni && i - r->ni < B_MAX_IO) {
            res->out_rank[i - r->ni] = rank;
            memcpy(res->out_dims[i - r->ni], dims, sizeof(int64_t) * (size_t)rank);
        }
    }
    bf->sets = 1;
    if (r->drv) {
        if (r->rotate > 0) bf->sets = (uint32_t)r->rotate;
        else { /* enough sets to exceed 128 MiB (well past a 50 MB L2), at most 8 */
            size_t want = set_bytes ? (((size_t)128 << 20) + set_bytes - 1) / set_bytes : 1;
            bf->sets = want < 1 ? 1 : want > 8 ? 8 : (uint32_t)want;
        }
    }
    res->sets = bf->sets;
    return 0;
}

/* Allocates the buffers: inputs random (the run's seed), outputs poisoned
 * with 0xff bytes (NaN in float), so an output never written shows. */
static int b_point_buffers(b_run *r, const b_point *p, b_bufs *bf, symc_error *err) {
    uint64_t state = r->seed;
    uint32_t nio = bf->nio;
    for (uint32_t i = 0; i < nio; i++)
        if (!(bf->host[i] = malloc(bf->bytes[i] ? bf->bytes[i] : 1))) goto oom;
    if (!r->drv) {
        for (uint32_t i = 0; i < nio; i++)
            if (i < r->ni) symc_dtype_fill_random(bf->host[i], bf->info[i].dtype, bf->elems[i], &state);
            else memset(bf->host[i], 0xff, bf->bytes[i]);
        return 0;
    }
    if (!(bf->dev = calloc((size_t)bf->sets * nio, sizeof *bf->dev))) goto oom;
    for (uint32_t s = 0; s < bf->sets; s++)
        for (uint32_t i = 0; i < nio; i++) {
            uint64_t *d = &bf->dev[(size_t)s * nio + i];
            size_t b = bf->bytes[i];
            B_CU(r->drv->mem_alloc(d, b ? b : 1), "cuMemAlloc (out of device memory?)");
            if (i < r->ni) {
                symc_dtype_fill_random(bf->host[i], bf->info[i].dtype, bf->elems[i], &state);
                if (b) B_CU(r->drv->memcpy_htod(*d, bf->host[i], b), "cuMemcpyHtoD");
            } else if (b) B_CU(r->drv->memset_d8(*d, 0xff, b), "cuMemsetD8");
        }
    B_CU(r->drv->ctx_synchronize(), "cuCtxSynchronize");
    return 0;
oom:
    symc_error_setf(err, SYMC_ERR_NOMEM, "out of host memory at point %s", p->label);
out:
    return 1;
}

static void b_bufs_free(b_run *r, b_bufs *bf) {
    if (r->drv && bf->dev)
        for (size_t k = 0; k < (size_t)bf->sets * bf->nio; k++)
            if (bf->dev[k]) r->drv->mem_free(bf->dev[k]);
    for (uint32_t i = 0; i < bf->nio; i++) free(bf->host[i]);
    free(bf->dev);
}

/* Gives the context the addresses of buffer set s. */
static int b_bind(b_run *r, const b_bufs *bf, uint32_t s, symc_error *err) {
    for (uint32_t i = 0; i < bf->nio; i++) {
        void *ptr = r->drv ? (void *)(uintptr_t)bf->dev[(size_t)s * bf->nio + i] : bf->host[i];
        if (symrt_set_tensor_address(r->c, bf->info[i].name, ptr, bf->bytes[i], err)) return 1;
    }
    return 0;
}

/* The first call at this shape (with --profile a profiled run, which times
 * the host side of every step: the libraries' per-shape setup is there), then
 * the warm-up runs. */
static int b_point_first(b_run *r, const b_point *p, const b_bufs *bf, b_result *res, symc_error *err) {
    if (b_bind(r, bf, 0, err)) return 1;
    double t0 = b_now_us();
    if (r->profile) {
        uint32_t n = 0, got = 0;
        if (symrt_context_profile(r->c, r->stream, NULL, 0, &n, err)) return 1;
        t0 = b_now_us(); /* sizing the array above ran nothing */
        if (!(res->first_prof = calloc(n ? n : 1, sizeof *res->first_prof)))
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of host memory at point %s", p->label), 1;
        if (symrt_context_profile(r->c, r->stream, res->first_prof, n, &got, err)) return 1;
        res->n_prof = n;
    } else if (symrt_enqueue(r->c, r->stream, err)) return 1;
    res->first_us = b_now_us() - t0;
    if (r->drv) B_CU(r->drv->stream_synchronize(r->stream), "the first enqueue (cuStreamSynchronize)");
    /* with CUDA graphs every buffer set runs twice more first, so each has its
     * graph (captured at its second run) before the timing: the timed runs are
     * the steady state, replays only */
    int warm = r->warmup + (r->graphs ? 2 * (int)bf->sets : 0);
    /* the reference backend's default: a first run of a second or more has
     * already warmed what a warm-up would (it runs synchronously, nothing is
     * compiled or captured later) */
    if (r->budget_us > 0 && res->first_us >= 1e6) warm = 0;
    for (int w = 0; w < warm; w++)
        if (b_bind(r, bf, (uint32_t)(w + 1) % bf->sets, err) || symrt_enqueue(r->c, r->stream, err)) return 1;
    if (r->drv) B_CU(r->drv->stream_synchronize(r->stream), "warm-up (cuStreamSynchronize)");
    return 0;
out:
    return 1;
}

/* CUDA: host time per enqueue with at most one run ahead of it on the
 * stream. In the back-to-back timed loop a run that outlasts its enqueue
 * fills the launch queue, and from then on an enqueue waits for the GPU (at
 * large shapes its host time reads as the GPU time). Each enqueue here first
 * waits for the run before the previous one, so the GPU stays busy and the
 * queue never fills, as in a server that keeps one batch in flight. */
static int b_host_times(b_run *r, const b_bufs *bf, void **ev, double *host_us, symc_error *err) {
    for (int it = 0; it < r->iters; it++) {
        if (b_bind(r, bf, (uint32_t)it % bf->sets, err)) return 1;
        if (it >= 2) B_CU(r->drv->event_synchronize(ev[2 * (it - 2) + 1]), "cuEventSynchronize");
        double h0 = b_now_us();
        if (symrt_enqueue(r->c, r->stream, err)) return 1;
        host_us[it] = b_now_us() - h0;
        B_CU(r->drv->event_record(ev[2 * it + 1], r->stream), "cuEventRecord");
    }
    B_CU(r->drv->stream_synchronize(r->stream), "the host-time runs (cuStreamSynchronize)");
    return 0;
out:
    return 1;
}

/* The timed runs: per run the GPU time between CUDA events (the host time of
 * enqueue on the reference backend, which runs synchronously) into gpu_ms and
 * the host time into host_us; returns how many ran in *n (the reference
 * backend stops at its time budget). ev: 2 * iters events on CUDA. */
static int b_timed_runs(b_run *r, const b_bufs *bf, void **ev, double *gpu_ms, double *host_us, int *n, b_result *res,
                        symc_error *err) {
    double spent = 0;
    *n = r->iters;
    for (int it = 0; it < r->iters; it++) {
        if (b_bind(r, bf, (uint32_t)it % bf->sets, err)) return 1;
        if (r->drv) B_CU(r->drv->event_record(ev[2 * it], r->stream), "cuEventRecord");
        double h0 = b_now_us();
        if (symrt_enqueue(r->c, r->stream, err)) return 1;
        host_us[it] = b_now_us() - h0;
        if (r->drv) B_CU(r->drv->event_record(ev[2 * it + 1], r->stream), "cuEventRecord");
        spent += host_us[it];
        if (!r->drv && r->budget_us > 0 && spent >= r->budget_us) {
            *n = it + 1;
            break;
        }
    }
    if (!r->drv) {
        double sum = 0;
        for (int it = 0; it < *n; it++) sum += gpu_ms[it] = host_us[it] / 1e3;
        res->stream_ms = sum / *n;
        return 0;
    }
    B_CU(r->drv->stream_synchronize(r->stream), "the timed runs (cuStreamSynchronize)");
    for (int it = 0; it < r->iters; it++) {
        float ms = 0;
        B_CU(r->drv->event_elapsed_time(&ms, ev[2 * it], ev[2 * it + 1]), "cuEventElapsedTime");
        gpu_ms[it] = ms;
    }
    float span = 0;
    B_CU(r->drv->event_elapsed_time(&span, ev[0], ev[2 * r->iters - 1]), "cuEventElapsedTime");
    res->stream_ms = span / r->iters;
    return b_host_times(r, bf, ev, host_us, err);
out:
    return 1;
}

/* The statistics of n timed runs into res (sorts the arrays). */
static void b_point_stats(b_result *res, double *gpu_ms, double *host_us, int n) {
    double sum = 0;
    for (int it = 0; it < n; it++) sum += gpu_ms[it];
    res->iters = n;
    res->mean = sum / n;
    qsort(gpu_ms, (size_t)n, sizeof *gpu_ms, b_cmp);
    qsort(host_us, (size_t)n, sizeof *host_us, b_cmp);
    res->min = gpu_ms[0];
    res->p50 = b_quant(gpu_ms, (size_t)n, 0.50);
    res->p90 = b_quant(gpu_ms, (size_t)n, 0.90);
    res->p99 = b_quant(gpu_ms, (size_t)n, 0.99);
    res->host_us = b_quant(host_us, (size_t)n, 0.50);
    res->host_p90_us = b_quant(host_us, (size_t)n, 0.90);
    res->throughput = res->p50 > 0 ? (double)res->batch / (res->p50 / 1e3) : 0;
}

/* Counts the NaNs left in the first float output of set 0: poison that no
 * kernel overwrote. */
static int b_point_nans(b_run *r, const b_bufs *bf, b_result *res, symc_error *err) {
    for (uint32_t i = r->ni; i < bf->nio; i++) {
        if (bf->info[i].dtype != SYMC_F32) continue;
        if (r->drv && bf->bytes[i]) B_CU(r->drv->memcpy_dtoh(bf->host[i], bf->dev[i], bf->bytes[i]), "cuMemcpyDtoH");
        /* an output whose size depends on the data fills only its real shape (the last run's) */
        size_t elems = bf->elems[i];
        int64_t dims[B_MAX_RANK];
        int32_t rank;
        if (symrt_engine_num_produced(r->e) && !symrt_context_sync_shapes(r->c, NULL) &&
            !symrt_get_output_shape(r->c, bf->info[i].name, dims, &rank, NULL)) {
            elems = 1;
            for (int32_t d = 0; d < rank; d++) elems *= (size_t)dims[d];
        }
        for (size_t k = 0; k < elems && k < bf->elems[i]; k++)
            if (isnan(((const float *)bf->host[i])[k])) res->nan_out++;
        break;
    }
    return 0;
out:
    return 1;
}

int tool_bench_point_run(b_run *r, const b_point *p, int point_index, b_result *res, symc_error *err) {
    int rc = 1, n = 0, n_ev = 0;
    b_bufs bf;
    void **ev = NULL;
    double *gpu_ms = NULL, *host_us = NULL;
    symrt_graph_stats g0;
    memset(res, 0, sizeof *res);
    memset(&bf, 0, sizeof bf);
    bf.nio = r->ni + r->no;
    if (symrt_context_graph_stats(r->c, &g0, err) || b_point_sizes(r, p, res, &bf, err) ||
        b_point_buffers(r, p, &bf, err) || b_point_first(r, p, &bf, res, err))
        goto out;
    gpu_ms = calloc((size_t)r->iters, sizeof *gpu_ms);
    host_us = calloc((size_t)r->iters, sizeof *host_us);
    if (!gpu_ms || !host_us) goto oom;
    if (r->drv) {
        if (!(ev = calloc(2 * (size_t)r->iters, sizeof *ev))) goto oom;
        for (; n_ev < 2 * r->iters; n_ev++) B_CU(r->drv->event_create(&ev[n_ev], 0), "cuEventCreate");
    }
    if (b_timed_runs(r, &bf, ev, gpu_ms, host_us, &n, res, err)) goto out;
    b_point_stats(res, gpu_ms, host_us, n);
    if (symrt_context_graph_stats(r->c, &res->graph, err)) goto out;
    res->graph.replays -= g0.replays;
    res->graph.captures -= g0.captures;
    res->graph.updates -= g0.updates;
    res->graph.plain -= g0.plain;
    res->graph.failed -= g0.failed;
    res->graph.setups_made -= g0.setups_made;
    res->graph.setups_shared -= g0.setups_shared;
    if (r->profile && b_point_profile(r, p, point_index, res, err)) goto out;
    if (b_point_nans(r, &bf, res, err)) goto out;
    rc = 0;
    goto out;
oom:
    symc_error_setf(err, SYMC_ERR_NOMEM, "out of host memory at point %s", p->label);
out:
    if (r->drv) {
        r->drv->ctx_synchronize();
        for (int k = 0; k < n_ev; k++) r->drv->event_destroy(ev[k]);
    }
    b_bufs_free(r, &bf);
    free(ev);
    free(gpu_ms);
    free(host_us);
    return rc;
}

/* CUDA: the memory formula of the loaded engine (rt_engine_of), and the
 * device's free memory before the context exists. Any failure only drops the
 * memory columns, with a comment line saying why. */
static void b_memory_begin(b_run *r, const rt_engine *engine, int quiet, tool_memory_set *mem) {
    symc_error err = {0};
    size_t total = 0;
    memset(mem, 0, sizeof *mem);
    if (!rt_engine_io(engine)->n_steps) symc_error_setf(&err, SYMC_ERR_UNSUPPORTED, "the engine has no GPU steps");
    else if (!tool_memory_set_init(mem, engine, RT_SCHEDULE_STEPS, &err) && !r->drv->ctx_synchronize() &&
             !r->drv->mem_get_info(&r->free0, &total)) {
        r->free_min = r->free0;
        r->mem = mem;
    } else if (!err.msg[0]) symc_error_setf(&err, SYMC_ERR_DEVICE, "cuMemGetInfo failed");
    if (!r->mem) {
        tool_memory_set_free(mem);
        if (!quiet) printf("# memory not measured: %s\n", err.msg);
    }
}

/* What every point shares, into run: the CUDA driver (*device: its name),
 * the memory baseline and formula (mem), the context (with CUDA graphs when
 * asked) and the stream. Returns 0 or 1 with err; whatever was made is in run
 * for the caller to release. */
int tool_bench_open(b_run *run, symrt_engine *e, const b_opts *o, tool_memory_set *mem, const char **device,
                    symc_error *err) {
    *device = "cpu (reference backend)";
    run->e = e;
    if (o->be == SYMRT_BACKEND_CUDA) {
        run->drv = rt_cuda_driver(err);
        if (!run->drv) return 1;
        *device = run->drv->device_name;
    }
    if (run->drv) b_memory_begin(run, rt_engine_of(e), o->quiet, mem);
    if (symrt_context_create(e, o->be, NULL, &run->c, err)) return 1;
    if (run->mem) {
        size_t fr = 0, total = 0;
        if (!run->drv->ctx_synchronize() && !run->drv->mem_get_info(&fr, &total))
            run->mem_context = run->free0 > fr ? run->free0 - fr : 0;
    }
    if (symrt_context_set_cuda_graphs(run->c, o->graphs, err)) return 1;
    run->graphs = o->graphs && run->drv;
    if (o->warm) {
        uint32_t n = 0;
        double t0 = b_now_us();
        if (symrt_context_warm(run->c, &n, err)) return 1;
        if (!o->quiet) printf("warm-up: %u point%s in %.1f ms\n", n, n == 1 ? "" : "s", (b_now_us() - t0) / 1e3);
    }
    if (run->drv && !o->default_stream) {
        int cu = run->drv->stream_create(&run->stream, 1 /* CU_STREAM_NON_BLOCKING */);
        if (cu) return symc_error_setf(err, SYMC_ERR_DEVICE, "CUDA driver error %d in cuStreamCreate", cu), 1;
    }
    run->ni = symrt_engine_num_inputs(e);
    run->no = symrt_engine_num_outputs(e);
    run->iters = (int)o->iters;
    run->warmup = (int)o->warmup;
    run->budget_us = o->ref_budget ? 5e6 : 0;
    run->rotate = (int)o->rotate;
    run->seed = o->seed;
    run->profile = o->profile;
    if (o->trace) {
        run->trace = fopen(o->trace, "w");
        if (!run->trace) return symc_error_setf(err, SYMC_ERR_IO, "cannot write --trace file %s", o->trace), 1;
        fprintf(run->trace, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [");
    }
    if (run->ni > B_MAX_IO || run->no > B_MAX_IO)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "more than %d inputs or outputs", B_MAX_IO), 1;
    return 0;
}
