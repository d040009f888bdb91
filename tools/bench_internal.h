/* Internals shared by symc bench's files: bench.c (the command and its flags), bench_points.c (the
 * points), bench_measure.c (the timed runs) and bench_report.c (the table, JSON, CSV and plot). */
#ifndef SYMC_TOOLS_BENCH_INTERNAL_H
#define SYMC_TOOLS_BENCH_INTERNAL_H

#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frontend/onnx.h"
#include "ir/ir.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "tools/bench.h"
#include "tools/checked.h"
#include "tools/cli.h"
#include "tools/memory.h"
#include "tools/npy.h"
#include "tools/plot.h"

#define B_MAX_IO 64

#define B_MAX_POINTS 256

#define B_MAX_RANK 8

/* A point: one shape per input. Its items are copies of what the shape
 * parser (frontend/onnx.h, fe_parse_point) returned: names and symbol names
 * point into those fe_points, which live for the whole command; a resolved
 * point has every sym[d] NULL. */
typedef struct b_point {
    char label[32];
    int level; /* --sweep: the level (0 min .. 4 max); -1 otherwise */
    uint32_t n;
    fe_point_input items[B_MAX_IO];
} b_point;

typedef struct b_result {
    double p50, p90, p99, mean, min; /* ms */
    double host_us, host_p90_us, first_us, stream_ms, throughput;
    double shape_us;         /* setting this point's input shapes and evaluating them (host) */
    symrt_graph_stats graph; /* what the context's CUDA graphs did during this point */
    int64_t batch;
    uint32_t sets;
    int iters; /* timed runs made (fewer than --iters only under the reference backend's time budget) */
    int64_t out_dims[B_MAX_IO][B_MAX_RANK];
    int32_t out_rank[B_MAX_IO];
    size_t nan_out; /* NaN elements in set 0's first float output (poison left = unwritten) */
    int mem;        /* the memory fields below are known (CUDA, with a formula) */
    uint64_t mem_measured, mem_workspace, mem_formula, mem_formula_held;
    symrt_step_profile *prof;       /* --profile: per step, the median over the profiled runs */
    symrt_step_profile *first_prof; /* --profile: the first call at this shape, profiled (host_us per step) */
    uint32_t n_prof;
    double prof_sum; /* ms, the steps' medians summed */
} b_result;

typedef struct b_run {
    const symrt_engine *e;
    symrt_context *c;
    const rt_cuda_driver_api *drv; /* NULL on the reference backend */
    void *stream;
    uint32_t ni, no;
    int iters, warmup, rotate;
    double budget_us; /* ref with the default counts: timed runs stop past this (at least one), 0 = none */
    int graphs;       /* CUDA graphs on in the context */
    uint64_t seed;
    /* memory (CUDA only; mem NULL when unavailable) */
    tool_memory_set *mem;
    size_t free0, free_min; /* device free bytes before the context, least seen since */
    uint64_t mem_context;   /* held right after creation (constants, module, handles) */
    int64_t ws_held;        /* largest workspace formula value so far */
    int profile;            /* --profile: per-step GPU times after the timed runs */
    FILE *trace;            /* --trace: Chrome trace events, one process per point */
    double trace_t0;        /* µs: where the next point's timeline starts */
    int trace_events;       /* events written so far */
} b_run;

/* The command line of symc bench. */
typedef struct b_opts {
    const char *engine, *backend, *json, *trace, *plot, *csv;
    const char *shapes[B_MAX_IO], *points[B_MAX_POINTS];
    int n_shapes, n_points, sweep, quiet, graphs, profile, default_stream;
    int warm; /* --warm: symrt_context_warm once, after creating the context */
    long iters, warmup, rotate;
    int ref_budget; /* ref with --iters and --warmup left to their defaults: bounded by time */
    uint64_t seed;
    symrt_backend be;
    char fell_back[SYMC_ERROR_MSG_CAP]; /* without --backend and no usable driver: why the ref backend */
} b_opts;

int tool_bench_usage(const char *fmt, ...);
int64_t tool_bench_level(const symrt_symbol_info *s, int level);
void tool_bench_shape_text(const b_point *p, char *buf, size_t cap);
int tool_bench_parse_specs(const b_opts *o, fe_point *specs, b_point *tmpl, b_point *parsed);
int tool_bench_points(const symrt_engine *e, const b_opts *o, const b_point *tmpl, const b_point *parsed, b_point *pts,
                      char *msg, size_t cap);
int tool_bench_set_shapes(const b_run *r, const b_point *p, symc_error *err);
int tool_bench_point_symbols(const rt_engine *e, const b_point *p, int64_t *vals);
void tool_bench_point_memory(b_run *r, const b_point *p, b_result *res);
int tool_bench_point_run(b_run *r, const b_point *p, int point_index, b_result *res, symc_error *err);
int tool_bench_open(b_run *run, symrt_engine *e, const b_opts *o, tool_memory_set *mem, const char **device,
                    symc_error *err);
void tool_bench_print_profile(const b_result *x, double p50);
void tool_bench_print_first(const b_result *x);
void tool_bench_json_str(FILE *f, const char *s);
int tool_bench_write_json(const char *path, const char *engine, const char *backend, const char *device, const b_run *r,
                          const b_point *pts, const b_result *res, int n, symc_error *err);
int tool_bench_write_sweep(const b_opts *o, const symrt_engine *e, const b_point *tmpl, const b_run *run,
                           const char *device, const b_point *pts, const b_result *res, int n, symc_error *err);
void tool_bench_print_header(const b_opts *o, const b_run *run, const char *device);
void tool_bench_print_row(const b_run *run, const b_point *p, const b_result *x);

#endif
