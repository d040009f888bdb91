/* Activation memory planning shared by both backends and `symc inspect`.
 *
 * A tensor that needs workspace storage (not an input, output or constant,
 * not an alias of another tensor) lives from the first to the last position
 * of the schedule that touches it: nodes for the reference backend, GPU steps
 * for the CUDA backend (where a tensor no step touches, such as an
 * intermediate fused away, needs no storage at all). Lifetimes depend only
 * on the engine, so they are computed once; offsets depend on the sizes, so
 * they are laid out once per input shape: largest first, each at the lowest
 * offset that overlaps no tensor alive at the same time. The plan is valid
 * for every shape in range and sized for the actual one, not for max.
 *
 * A second, fixed-order plan bounds the first: the workspace tensors are
 * ordered once (by their offset in the first-fit layout at the opt shape),
 * and each sits right above the highest earlier tensor alive at the same
 * time: offset_i = max over those j of offset_j + size_j. Its total is a
 * closed formula in the symbols (max and +; `symc inspect` prints it,
 * tools/memory_formula.c), equal to its numeric total at every shape; rt_plan_layout uses whichever layout is
 * smaller at the actual shape, so the workspace is never larger than the
 * formula says (and at opt, 256-byte aligned, the fixed order loses
 * nothing to first fit). */
#ifndef SYMC_RUNTIME_PLAN_H
#define SYMC_RUNTIME_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"

typedef enum rt_schedule { RT_SCHEDULE_NODES = 0, RT_SCHEDULE_STEPS = 1 } rt_schedule;

typedef struct rt_lifetimes {
    uint32_t n;      /* tensors */
    uint32_t *first; /* per tensor: first schedule position, RT_NONE = needs no workspace */
    uint32_t *last;
    uint32_t *order;  /* the workspace tensors, largest first at the last layout's sizes */
    uint32_t n_order; /* their count; 0 until the first layout */
    uint32_t *by_off; /* scratch: the placed tensors by offset */
    /* the fixed-order plan: stack[0..n_stack) the workspace tensors in
     * placement order; below[below_at[q] .. below_at[q+1]) the positions
     * p < q whose tensors are alive together with stack[q] */
    uint32_t n_stack;
    uint32_t *stack, *below_at, *below;
    size_t *size;      /* scratch: aligned bytes per tensor */
    size_t *stack_off; /* scratch: offset per stack position */
    /* of the last rt_plan_layout: both totals (SIZE_MAX on overflow) */
    size_t fit_total, stack_total;
} rt_lifetimes;

symc_status rt_lifetimes_compute(const rt_engine *e, rt_schedule s, rt_lifetimes *out, symc_error *err);
void rt_lifetimes_free(rt_lifetimes *l);
/* The tensor whose storage t uses on the GPU (itself unless an alias). */
uint32_t rt_storage_of(const rt_engine *e, uint32_t t);
/* Offsets (per tensor; SIZE_MAX when not in the workspace) and the workspace
 * size for the sizes in `slots`, every offset a multiple of align (>= 1):
 * the smaller of the first-fit and fixed-order layouts, so *total
 * <= the formula's value at these sizes. No allocation. */
symc_status rt_plan_layout(const rt_engine *e, rt_lifetimes *l, const int64_t *slots, size_t align, size_t *offset,
                           size_t *total, symc_error *err);

/* ---- the engine's shape expressions (runtime/engine_exprs.c) ----------- */
/* A fresh table holding the engine's symbols (names, ranges, multiples) and
 * an expression per program slot (*slots: num_slots handles, malloc'd),
 * decoded from the engine's shape program. Free with sym_table_free / free. */
symc_status rt_engine_sym_table(const rt_engine *e, sym_table **table, sym_expr **slots, symc_error *err);

#endif
