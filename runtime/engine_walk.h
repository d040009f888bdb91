/* engine_walk.h: what the engine codec (engine_fb.cc) asks of an rt_engine and its region graphs
 * before it builds or after it reads a FlatBuffer, in plain C over the runtime's structs, so the
 * one C++ translation unit of the schema (docs/ARCHITECTURE.md) holds only what needs FlatBuffers. */
#ifndef SYMC_RUNTIME_ENGINE_WALK_H
#define SYMC_RUNTIME_ENGINE_WALK_H

#include "runtime/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the tables, vectors and names of a graph and its regions', a generous bound on each */
size_t rt_engine_items(const rt_engine *e);
/* bytes of the programs, generated source and modules of a graph and its regions' */
size_t rt_engine_text_bytes(const rt_engine *e);
/* a region graph's constants are written: only a table other than its root's (which the decoder
 * refuses; tests write one to see it), never the root's again */
int rt_engine_own_constants(const rt_engine *root, const rt_engine *g);
/* bytes of the constants written (the root's and any region graph's own); adds their count */
size_t rt_engine_constant_bytes(const rt_engine *e, size_t *count);
/* produced sizes (format 7) / a kernel step's TMA tensor maps (format 8) anywhere in e */
int rt_engine_any_produced(const rt_engine *e);
int rt_engine_any_tmaps(const rt_engine *e);
/* the op named `name` into *out: 1, or 0 for a name no op has */
int rt_op_of_name(const char *name, ir_op *out);
/* NULL when tensor map t is well formed for an engine of n_tensors tensors and n_slots slots,
 * else what is wrong with it */
const char *rt_tmap_check(const rt_tmap *t, uint32_t n_tensors, uint32_t n_slots);

#ifdef __cplusplus
}
#endif
#endif
