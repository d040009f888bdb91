/* Building an engine with a size known only after a node runs (docs/PLAN-data-dependent.md §3,
 * engine format 7; codegen/build_engine.c): y = nonzero(x > 0) and g = gather_nd(x,
 * transpose(y)) built with the public builder and compiled for the reference backend, then
 * decoded: one produced size (u0, by node 'nz', output 0 dim 1), no input dim bound to it, its
 * bound slot and the capacity program giving numel(x) = 4*B at several B whatever u0 holds, the
 * output g sized u0 at the real count, a guard over u0 checked after it, the bytes re-encoded the
 * same. Refused, each naming what: a GPU build (naming the producer and the way out), a tensor whose
 * size shrinks as u0 grows (a range of length 40 - u0), an engine of regions over such a model, and
 * (for now) a model whose nonzero nothing uses (removed, its symbol left with no producer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"

enum { PLAIN, SHRINK, DEAD };

/* x [B, 4] f32, w [C] f32; nz = nonzero(x > 0) [2, u0], g = gather_nd(x, transpose(nz)) [u0],
 * s = g + w (u0 and C broadcast: a guard over u0). SHRINK adds r = range(u0, 40) [40 - u0];
 * DEAD has only relu(x) as output, its nonzero unused. */
static symc_module *model(int kind) {
    symc_error err;
    symc_module *m = symc_module_create("nz_model", &err);
    symc_dim B, C;
    CHECK(symc_declare_symbol(m, "B", 1, 3, 8, 1, &B, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "C", 1, 3, 32, 1, &C, &err) == SYMC_OK);
    symc_dim four = symc_dim_const(m, 4);
    symc_tensor x, w, zero, gt, nz, t, g, s, r, y;
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, four}, &x, &err) == SYMC_OK);
    CHECK(symc_add_input(m, "w", SYMC_F32, 1, (symc_dim[]){C}, &w, &err) == SYMC_OK);
    float z0 = 0;
    CHECK(symc_add_constant(m, "zero", SYMC_F32, 1, (int64_t[]){1}, &z0, sizeof z0, &zero, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "greater", "gt", (symc_tensor[]){x, zero}, 2, NULL, 0, &gt, 1, &err) == SYMC_OK);
    CHECK_MSG(symc_add_node(m, "nonzero", "nz", &gt, 1, NULL, 0, &nz, 1, &err) == SYMC_OK, "%s", err.msg);
    if (kind == DEAD) {
        CHECK(symc_add_node(m, "relu", "y", &x, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
        CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
        return m;
    }
    symc_attr perm = symc_attr_ints("perm", (int64_t[]){1, 0}, 2);
    CHECK(symc_add_node(m, "transpose", "t", &nz, 1, &perm, 1, &t, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "gather_nd", "g", (symc_tensor[]){x, t}, 2, NULL, 0, &g, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "add", "s", (symc_tensor[]){g, w}, 2, NULL, 0, &s, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, nz, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, g, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, s, &err) == SYMC_OK);
    if (kind == SHRINK) {
        CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
        symc_dtype dt;
        int32_t rank = 0;
        symc_dim dims[8];
        CHECK(symc_tensor_info(m, nz, &dt, &rank, dims, &err) == SYMC_OK && rank == 2);
        symc_attr ra[4] = {symc_attr_dims("start", (symc_dim[]){dims[1]}, 1),
                           symc_attr_dims("limit", (symc_dim[]){symc_dim_const(m, 40)}, 1),
                           symc_attr_dims("delta", (symc_dim[]){symc_dim_const(m, 1)}, 1),
                           symc_attr_dtype("to", SYMC_I64)};
        CHECK_MSG(symc_add_node(m, "range", "r", NULL, 0, ra, 4, &r, 1, &err) == SYMC_OK, "%s", err.msg);
        CHECK(symc_mark_output(m, r, &err) == SYMC_OK);
    }
    return m;
}

static symc_status compile(int kind, int gpu, const char *path, symc_error *err) {
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = gpu;
    symc_module *m = model(kind);
    remove(path);
    symc_status st = symc_module_compile(m, &o, path, err);
    symc_module_destroy(m);
    return st;
}

static uint32_t find_symbol(const rt_engine *e, const char *name) {
    for (uint32_t i = 0; i < e->n_symbols; i++)
        if (!strcmp(e->symbols[i].name, name)) return i;
    return RT_NONE;
}

static uint32_t find_tensor(const rt_engine *e, const char *name) {
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (!strcmp(e->tensors[i].name, name)) return i;
    return RT_NONE;
}

static void check_engine(const char *path) {
    symc_error err;
    uint8_t *bytes = NULL;
    size_t size = 0;
    rt_engine *e = NULL;
    CHECK_MSG(rt_read_file(path, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(bytes && rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    if (!e) {
        free(bytes);
        return;
    }
    CHECK(e->format_version == 7 && e->sm == 0 && e->n_steps == 0);
    uint32_t u = find_symbol(e, "u0"), b = find_symbol(e, "B"), c = find_symbol(e, "C");
    CHECK(u != RT_NONE && b != RT_NONE && c != RT_NONE && e->n_symbols == 3);
    CHECK_MSG(e->n_produced == 1, "%u produced sizes", e->n_produced);
    CHECK(e->n_sources == 2);
    for (uint32_t s = 0; s < e->n_sources; s++) CHECK(e->sources[s].symbol != u);
    if (e->n_produced != 1 || u == RT_NONE || b == RT_NONE || c == RT_NONE) goto done;
    const rt_produced *p = &e->produced[0];
    CHECK(p->symbol == u && p->node < e->n_nodes && p->output == 0 && p->dim == 1);
    CHECK(!strcmp(e->nodes[p->node].name, "nz") && e->nodes[p->node].op == IR_OP_NONZERO);
    CHECK_CONTAINS(p->what, "the count of non-zero elements");
    CHECK_CONTAINS(p->what, "'nz'");
    CHECK(p->bound < e->num_slots && e->tensors[e->nodes[p->node].out[0]].dims[1] < e->num_slots);
    /* capacity = numel(x) = 4*B, whatever u0 holds (it is never read) */
    for (int64_t bv = 1; bv <= 8; bv += 3) {
        int64_t vals[3], cap = -1;
        vals[b] = bv, vals[c] = 5, vals[u] = 1000 + bv;
        CHECK(sym_program_eval(e->capacity_program, e->capacity_program_size, vals, 3, &cap, 1, &err) == SYMC_OK);
        CHECK_MSG(cap == 4 * bv, "capacity at B=%lld is %lld", (long long)bv, (long long)cap);
        /* the bound slot and the tensors at a real count */
        vals[u] = bv + 1;
        int64_t *slots = calloc(e->num_slots, sizeof *slots);
        CHECK(sym_program_eval(e->program, e->program_size, vals, 3, slots, e->num_slots, &err) == SYMC_OK);
        CHECK(slots[p->bound] == 4 * bv);
        uint32_t g = find_tensor(e, "g"), nz = e->nodes[p->node].out[0];
        CHECK(g != RT_NONE && e->tensors[g].rank == 1 && slots[e->tensors[g].dims[0]] == bv + 1);
        CHECK(e->tensors[nz].rank == 2 && slots[e->tensors[nz].dims[0]] == 2 &&
              slots[e->tensors[nz].dims[1]] == bv + 1);
        free(slots);
    }
    /* the broadcast of g [u0] with w [C] waits for u0; no guard waits for anything else */
    uint32_t after_u = 0;
    for (uint32_t i = 0; i < e->n_guards; i++) {
        CHECK(e->guards[i].after <= 1);
        after_u += e->guards[i].after == 1;
    }
    CHECK_MSG(after_u >= 1, "no guard of the %u is checked after u0", e->n_guards);
    /* written once, the same bytes again */
    uint8_t *again = NULL;
    size_t n = 0;
    CHECK_MSG(rt_engine_encode(e, &again, &n, &err) == SYMC_OK && n == size && !memcmp(again, bytes, n),
              "re-encoding the built engine changed it");
    free(again);
done:
    rt_engine_free(e);
    free(bytes);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[4096];
    snprintf(path, sizeof path, "%s/test_build_produced.symx", dir);
    symc_error err;

    CHECK_MSG(compile(PLAIN, 0, path, &err) == SYMC_OK, "%s", err.msg);
    check_engine(path);
    /* kept for `symc inspect` (codegen.inspect_produced) */
    char kept[4096];
    snprintf(kept, sizeof kept, "%s/produced.symx", dir);
    CHECK_MSG(compile(PLAIN, 0, kept, &err) == SYMC_OK, "%s", err.msg);

    /* GPU code (NVRTC, no GPU needed): each produced size names its count cell, a tensor of the engine */
    CHECK_MSG(compile(PLAIN, 1, path, &err) == SYMC_OK, "%s", err.msg);
    {
        uint8_t *bytes = NULL;
        size_t size = 0;
        rt_engine *d = NULL;
        CHECK(rt_read_file(path, &bytes, &size, &err) == SYMC_OK && rt_engine_decode(bytes, size, &d, &err) == SYMC_OK);
        CHECK_MSG(d && d->sm && d->n_produced == 1 && d->produced[0].count_tensor < d->n_tensors,
                  "GPU engine: sm %u, %u produced, count tensor %u", d ? d->sm : 0, d ? d->n_produced : 0,
                  d && d->n_produced ? d->produced[0].count_tensor : 0);
        rt_engine_free(d);
        free(bytes);
    }

    /* a tensor whose size shrinks as u0 grows: memory cannot be planned at the bound */
    CHECK(compile(SHRINK, 0, path, &err) == SYMC_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "tensor 'r' of node 'r' (range)");
    CHECK_CONTAINS(err.msg,
                   "its size shrinks as u0 grows (with every symbol at opt: 40 elements with u0 = 0, 28 with "
                   "u0 = 12), so its memory cannot be planned at u0's bound");

    /* regions over such a model */
    symc_module *m1 = model(PLAIN), *m2 = model(PLAIN);
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = 0;
    symc_region regs[2] = {{m1, "B <= 4"}, {m2, "B >= 5"}};
    CHECK_MSG(symc_compile_regions(regs, 2, &o, path, &err) == SYMC_OK, "%s", err.msg);
    { /* each region graph produces its own u0, mapped to no root symbol; the root produces nothing */
        uint8_t *bytes = NULL;
        size_t size = 0;
        rt_engine *d = NULL;
        CHECK(rt_read_file(path, &bytes, &size, &err) == SYMC_OK && rt_engine_decode(bytes, size, &d, &err) == SYMC_OK);
        CHECK(d && d->format_version == 7 && d->n_regions == 2 && d->n_produced == 0);
        for (uint32_t r = 0; d && r < d->n_regions; r++) {
            const rt_region *g = &d->regions[r];
            uint32_t u = g->graph.n_produced ? g->graph.produced[0].symbol : RT_NONE;
            CHECK_MSG(g->graph.n_produced == 1 && u < g->n_symbols && g->symbols[u] == RT_NONE,
                      "region %u: %u produced", r, g->graph.n_produced);
        }
        rt_engine_free(d);
        free(bytes);
    }
    symc_module_destroy(m1);
    symc_module_destroy(m2);

    /* a nonzero nothing reads: removed, its symbol stays with no producer; refused for now, saying so
     * (an engine binds every symbol: docs/PLAN-data-dependent.md, open) */
    CHECK(compile(DEAD, 0, path, &err) == SYMC_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "symbol 'u0' (the count of non-zero elements of node 'nz' (nonzero)");
    CHECK_CONTAINS(err.msg, "no node of the model produces it");
    remove(path);
    return check_report("test_build_produced");
}
