/* The memory an engine needs, as formulas in its symbols: shared by `symc
 * inspect` (printed) and `symc bench` (evaluated at each point, next to the
 * device memory measured), and tested by tests/runtime/test_plan.c. Built
 * as the library symc_tools (memory.c, memory_formula.c); the runtime does
 * not carry it: it lays the workspace out numerically (runtime/plan.h). */
#ifndef SYMC_TOOLS_MEMORY_H
#define SYMC_TOOLS_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"
#include "runtime/plan.h"

typedef struct tool_memory {
    const rt_engine *e;
    rt_schedule sched; /* nodes (reference backend) or steps (CUDA) */
    size_t align;      /* 64 or 256: the backend's offset alignment */
    rt_lifetimes l;
    sym_table *t; /* the engine's symbols and slot expressions */
    sym_expr *slots;
    sym_expr workspace; /* activation workspace bytes: >= the runtime's layout at every shape */
    uint64_t weights;   /* constants, bytes */
    uint64_t library;   /* fixed library workspace (CUDA: cuBLASLt's when there are GEMM steps) */
    int has_conv;       /* CUDA: a cuDNN workspace, chosen per shape, comes on top */
} tool_memory;

/* Plans the engine's memory for one schedule (RT_SCHEDULE_STEPS needs GPU
 * steps) and builds the workspace formula. Free with tool_memory_free, also
 * after an error. */
symc_status tool_memory_init(tool_memory *m, const rt_engine *e, rt_schedule s, symc_error *err);
void tool_memory_free(tool_memory *m);
/* The workspace formula at symbol values vals[0..n_symbols). */
symc_status tool_memory_eval(const tool_memory *m, const int64_t *vals, int64_t *bytes, symc_error *err);
/* The formula as text: a top-level max flattened into one max(a, b, ...)
 * with the terms largest-at-opt first, each without its outer parentheses
 * (Python syntax otherwise). A long formula ends with ", ...[N more terms])"
 * once the text passes about 4 KB, and a single long term is cut by
 * sym_print (SYM_PRINT_CUT). snprintf semantics. */
size_t tool_memory_text(const tool_memory *m, char *buf, size_t cap);

/* The formulas of every graph of an engine (one; or one per region, whose
 * graphs share the root's weights), and the one that runs at a point: the
 * region the runtime picks at those root symbol values (rt_region_pick). */
typedef struct tool_memory_set {
    const rt_engine *root;
    tool_memory *g; /* rt_engine_n_graphs(root) of them */
    uint32_t n;
    uint64_t weights, library; /* the weights (held once), the largest fixed library workspace */
    int has_conv;              /* some graph has cuDNN steps */
} tool_memory_set;
symc_status tool_memory_set_init(tool_memory_set *s, const rt_engine *root, rt_schedule sched, symc_error *err);
void tool_memory_set_free(tool_memory_set *s); /* accepts a zeroed set */
/* At root symbol values vals[0..root->n_symbols): the workspace bytes of the graph that runs
 * there, and its fixed bytes (weights and the libraries' fixed workspace). */
symc_status tool_memory_set_eval(const tool_memory_set *s, const int64_t *vals, int64_t *ws, uint64_t *fixed,
                                 symc_error *err);

/* ---- the workspace formula (tools/memory_formula.c) -------------------- */
/* The fixed-order plan's workspace bytes for alignment `align`, as an
 * expression of t over `slots` (from rt_engine_sym_table, runtime/plan.h):
 * at every shape in range it evaluates to l->stack_total of rt_plan_layout
 * with that align. Built as max over chains of sums; terms one proves never
 * larger than another are dropped, so the result is short for typical
 * graphs. */
symc_status tool_memory_formula(const rt_engine *e, const rt_lifetimes *l, sym_table *t, const sym_expr *slots,
                                size_t align, sym_expr *out, symc_error *err);
/* Bytes of tensor `tensor` at `slots` as an expression (dtype size * dims). */
sym_expr tool_tensor_bytes_expr(const rt_engine *e, sym_table *t, const sym_expr *slots, uint32_t tensor);

/* symc inspect's memory section: weights, then per schedule the engine runs
 * on (reference nodes; GPU steps when it has them) the runtime's workspace
 * at min | opt | max (and without reuse), the formula and its values, and
 * the total. 0, or 1 with one line on stderr naming `path`. */
int tool_memory_report(const rt_engine *e, const char *path);

#endif
