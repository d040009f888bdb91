/* The batch-row verdict of a loaded engine (symrt_engine_batch_rows,
 * include/symc/symrt.h): what the build proved about joining requests along
 * dim 0 (ir_batch_rows on the module the engine runs; with regions, the
 * conservative verdict over every region: codegen/build_regions.c), read from
 * the root's rt_batch_rows. The loader checked it (a known state, the batch
 * symbol bound from input 0 dim 0 exactly in the batched states); an engine
 * built before the field existed decodes to RT_BATCH_ROWS_UNKNOWN, which no
 * caller may take for independence. The public numbers are the engine's. */
#include <stdio.h>

#include "runtime/engine.h"
#include "symc/symrt.h"

_Static_assert(SYMRT_BATCH_ROWS_UNKNOWN == RT_BATCH_ROWS_UNKNOWN && SYMRT_BATCH_ROWS_NONE == RT_BATCH_ROWS_NONE &&
                   SYMRT_BATCH_ROWS_BATCHED == RT_BATCH_ROWS_BATCHED &&
                   SYMRT_BATCH_ROWS_INDEPENDENT == RT_BATCH_ROWS_INDEPENDENT,
               "the public batch-row states are the engine's");

symc_status symrt_engine_batch_rows(const symrt_engine *h, symrt_batch_rows *state, uint32_t *batch_symbol, char *why,
                                    size_t cap, symc_error *err) {
    if (!h || !state || (!why && cap))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "symrt_engine_batch_rows: NULL %s",
                               !h           ? "engine"
                                   : !state ? "state"
                                            : "why with a capacity");
    const rt_batch_rows *r = &rt_engine_of(h)->batch_rows;
    int batched = r->state == RT_BATCH_ROWS_BATCHED || r->state == RT_BATCH_ROWS_INDEPENDENT;
    *state = (symrt_batch_rows)r->state;
    if (batch_symbol) *batch_symbol = batched ? r->symbol : UINT32_MAX;
    if (why && cap) snprintf(why, cap, "%s", r->state == RT_BATCH_ROWS_INDEPENDENT || !r->why ? "" : r->why);
    return SYMC_OK;
}
