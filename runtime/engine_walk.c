/* The engine codec's walks over an rt_engine and its region graphs (sizes to reserve, what
 * format a file needs), the op of a name and the tensor maps' check, in C: engine_fb.cc, the schema's one C++
 * translation unit, keeps only what needs FlatBuffers (runtime/engine_walk.h). */
#include <string.h>

#include "runtime/engine_walk.h"

size_t rt_engine_items(const rt_engine *e) {
    size_t n = (size_t)e->n_tensors + e->n_nodes + e->n_steps + e->n_symbols + e->n_guards + e->n_kernels +
        e->n_produced;
    for (uint32_t r = 0; r < e->n_regions; r++) n += 1 + e->regions[r].n_cond + rt_engine_items(&e->regions[r].graph);
    return n;
}

size_t rt_engine_text_bytes(const rt_engine *e) {
    size_t text = e->program_size + e->region_program_size + e->capacity_program_size +
        (e->cuda_source ? strlen(e->cuda_source) : 0);
    for (uint32_t i = 0; i < e->n_modules; i++)
        text += e->modules[i].cubin_size + (e->modules[i].ptx ? strlen(e->modules[i].ptx) : 0) + 64;
    for (uint32_t r = 0; r < e->n_regions; r++) text += rt_engine_text_bytes(&e->regions[r].graph);
    return text;
}

int rt_engine_own_constants(const rt_engine *root, const rt_engine *g) {
    return g->n_constants && g->constants != root->constants;
}

size_t rt_engine_constant_bytes(const rt_engine *e, size_t *count) {
    size_t n = 0;
    *count += e->n_constants;
    for (uint32_t i = 0; i < e->n_constants; i++) n += e->constants[i].size;
    for (uint32_t r = 0; r < e->n_regions; r++)
        if (rt_engine_own_constants(e, &e->regions[r].graph))
            n += rt_engine_constant_bytes(&e->regions[r].graph, count);
    return n;
}

int rt_engine_any_produced(const rt_engine *e) {
    if (e->n_produced) return 1;
    for (uint32_t r = 0; r < e->n_regions; r++)
        if (e->regions[r].graph.n_produced) return 1;
    return 0;
}

int rt_engine_any_tmaps(const rt_engine *e) {
    for (uint32_t i = 0; i < e->n_steps; i++)
        if (e->steps[i].n_tmaps) return 1;
    for (uint32_t r = 0; r < e->n_regions; r++)
        if (rt_engine_any_tmaps(&e->regions[r].graph)) return 1;
    return 0;
}

int rt_op_of_name(const char *name, ir_op *out) {
    for (int i = 0; i < IR_OP_COUNT; i++)
        if (!strcmp(ir_op_name((ir_op)i), name)) {
            *out = (ir_op)i;
            return 1;
        }
    return 0;
}

const char *rt_tmap_check(const rt_tmap *t, uint32_t n_tensors, uint32_t n_slots) {
    if (t->tensor >= n_tensors) return "its tensor is out of range";
    if (t->rank < 1 || t->rank > RT_TMAP_MAX_RANK) return "its rank is not 1..5";
    if (t->offset >= n_slots) return "its offset's slot is out of range";
    if (t->swizzle > 3) return "its swizzle is not 0..3";
    for (uint32_t j = 0; j < t->rank; j++) {
        if (t->dims[j] >= n_slots || (j && t->strides[j] >= n_slots))
            return "an extent's or stride's slot is out of range";
        if (t->box[j] < 1 || t->box[j] > 256) return "a box dim is not 1..256";
    }
    return NULL;
}
