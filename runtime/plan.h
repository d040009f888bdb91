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
 * for every shape in range and sized for the actual one, not for max. */
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
    uint32_t *order; /* scratch for the layout */
} rt_lifetimes;

symc_status rt_lifetimes_compute(const rt_engine *e, rt_schedule s, rt_lifetimes *out, symc_error *err);
void rt_lifetimes_free(rt_lifetimes *l);
/* The tensor whose storage t uses on the GPU (itself unless an alias). */
uint32_t rt_storage_of(const rt_engine *e, uint32_t t);
/* Offsets (per tensor; SIZE_MAX when not in the workspace) and the workspace
 * size for the sizes in `slots`, every offset a multiple of align. */
symc_status rt_plan_layout(const rt_engine *e, rt_lifetimes *l, const int64_t *slots, size_t align, size_t *offset,
                           size_t *total, symc_error *err);

#endif
