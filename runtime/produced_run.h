/* produced_run.h: the runtime's side of sizes known only after a node runs
 * (rt_engine.produced, format 7; docs/PLAN-data-dependent.md §4), kept
 * apart from the context code (context.c) that calls it.
 *
 * Per input shape, the capacity: each produced symbol at its capacity
 * (capacity_program), from which the context evaluates the shape program
 * into the capacity slots that memory, buffer checks and the backend's
 * layout use. Per run, the real values: the backend reports each
 * producer's count through an rt_run_hook (backend.h); the count is checked
 * against its bound, the shape program runs again into the run's real
 * slots, every tensor is checked to fit where the layout put it, and the
 * guards waiting for that symbol are checked. After the run, the real slots
 * are the shapes the user reads (symrt_context_sync_shapes). */
#ifndef SYMC_RUNTIME_PRODUCED_RUN_H
#define SYMC_RUNTIME_PRODUCED_RUN_H

#include <stdint.h>

#include "runtime/backend.h"
#include "runtime/engine.h"

typedef struct rt_produced_run {
    const rt_engine *e;
    const int64_t *cap_slots; /* the context's capacity slots (the layout's) */
    int64_t *cap;             /* per produced symbol: its capacity at the current input shapes */
    int64_t *count;           /* per produced symbol: its value in the last run (-1 before it ran) */
    int64_t *values;          /* per symbol: the run's values */
    int64_t *slots;           /* the run's slots (real sizes once every producer ran) */
    uint8_t *dependent;       /* per slot: 1 when it may depend on a produced symbol */
    uint32_t *watch;          /* the tensors with such a slot among their dims: the only ones a count resizes */
    uint32_t n_watch;
    uint32_t done; /* producers that ran in the current (or last) run */
    int finished;  /* the last run completed: slots hold its real sizes */
} rt_produced_run;

/* Allocates for engine e (n_produced > 0) and finds which slots depend on a
 * produced symbol (every slot when the shape program cannot be decoded:
 * reporting -1 for a known dim loses nothing). */
symc_status rt_produced_init(rt_produced_run *r, const rt_engine *e, symc_error *err);
void rt_produced_free(rt_produced_run *r);

/* The capacities at these symbol values (input-dim symbols set), written
 * into values[] at the produced symbols, ready for the shape program. */
symc_status rt_produced_capacity(rt_produced_run *r, int64_t *values, symc_error *err);

/* Starts a run at the capacity values and slots; the hook to pass to the
 * backend's enqueue. */
rt_run_hook rt_produced_begin(rt_produced_run *r, const int64_t *values, const int64_t *cap_slots);
/* Ends a run the backend completed: every producer must have reported. */
symc_status rt_produced_end(rt_produced_run *r, symc_error *err);

#endif
