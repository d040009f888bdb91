/* region_pick.h: what the symrt API (context.c) needs to know about an
 * engine's regions (engine.h rt_region), kept apart from the context code:
 * the input dims the model fixes in every region, the choice of a region at
 * the root symbols' values with the error for a shape in no region, and the
 * symbolic text of an I/O dim whose form differs between regions. Each
 * works unchanged on an engine without regions (its one graph). */
#ifndef SYMC_RUNTIME_REGION_PICK_H
#define SYMC_RUNTIME_REGION_PICK_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"

#define RT_DIM_FREE INT64_MIN /* an input dim the symbols (or the region) decide */

/* Per input (of rt_engine_io) and dim: its value when every graph of the
 * engine fixes it to that same value (its slot depends on no symbol), else
 * RT_DIM_FREE; a dim a root symbol is read from is always free. NULL when
 * a graph's shape program could not be decoded (or out of memory): nothing
 * is lost but the early check. malloc'd. */
int64_t (*rt_fixed_dims(const rt_engine *root))[IR_MAX_RANK];

/* The first region whose every condition guard holds at these root symbol
 * values (root->n_symbols of them), evaluating the root's region_program
 * into cond (room for root->region_slots). A shape in no region is
 * SYMC_ERR_RANGE naming the input shapes, the engine and, per region, its
 * first failing relation with its values. Only for an engine with regions. */
symc_status rt_region_pick(const rt_engine *root, const int64_t *sym_values, int64_t *cond, uint32_t *region,
                           symc_error *err);

/* Dim d of input (output = 0) or output (output = 1) `index` as symbolic
 * text over the root's symbol names: the one form when every region has
 * it, or a root symbol B when each region has B or the constant it pins B
 * to (an input dim B is read from is that constant there); else the root
 * symbol the dim is bound to followed by each region where it differs
 * ("S (4 in region 0)"), or each region's form. */
symc_status rt_region_io_dim(const rt_engine *root, int output, uint32_t index, int32_t d, char *buf, size_t cap,
                             symc_error *err);

#endif
