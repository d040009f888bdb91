/* The 2-region engine of regions_two.h: the root's condition sides (B, 1,
 * S, 6, 2) compiled into one region program over the root symbols B and S,
 * the two regions' guards reading its slots, and the root emptied of every
 * graph part (what the loader's check_regions demands of a root). */
#include "tests/runtime/regions_two.h"

#include <stdlib.h>
#include <string.h>

#include "symshape/sym.h"

int rt_test_two_assemble(rt_test_two *f, rt_engine *g0, rt_engine *g1, int64_t maxb, int64_t maxs) {
    memset(f, 0, sizeof *f);
    f->g[0] = g0;
    f->g[1] = g1;
    if (!g0 || !g1) return 0;
    f->symbols[0] = (rt_symbol){"B", 1, 2, maxb, 1};
    f->symbols[1] = (rt_symbol){"S", 1, 4, maxs, 1};
    f->sources[0] = (rt_source){0, 0, 0};
    f->sources[1] = (rt_source){1, 0, 1};
    sym_table *t = sym_table_new();
    symc_error err;
    sym_id b, s;
    size_t size = 0;
    if (!t || sym_symbol_new(t, &(sym_symbol_info){"B", 1, 2, maxb, 1, ""}, &b, &err) ||
        sym_symbol_new(t, &(sym_symbol_info){"S", 1, 4, maxs, 1, ""}, &s, &err)) {
        sym_table_free(t);
        return 0;
    }
    sym_expr x[5] = {sym_var(t, b), sym_const(t, 1), sym_var(t, s), sym_const(t, 6), sym_const(t, 2)};
    symc_status st = sym_program_compile(t, x, 5, &f->program, &size, &err);
    sym_table_free(t);
    if (st) return 0;
    f->cond0[0] = (rt_guard){SYM_REL_EQ, 0, 1, "B == 1", 0};
    f->cond0[1] = (rt_guard){SYM_REL_LE, 2, 3, "S <= 6", 0};
    f->cond1[0] = (rt_guard){SYM_REL_LE, 4, 0, "2 <= B", 0};
    f->map0[0] = 1;
    f->map1[0] = 0;
    f->map1[1] = 1;
    rt_engine *root = &f->root;
    *root = (rt_engine){.format_version = g1->format_version,
                        .symc_version = g1->symc_version,
                        .cuda_version = g1->cuda_version,
                        .cublas_version = g1->cublas_version,
                        .cudnn_version = g1->cudnn_version,
                        .name = "regions",
                        .sm = g1->sm,
                        .precision = g1->precision,
                        .cuda_source = g1->cuda_source,
                        .symbols = f->symbols,
                        .n_symbols = 2,
                        .sources = f->sources,
                        .n_sources = 2,
                        .constants = g1->constants,
                        .n_constants = g1->n_constants,
                        .region_program = f->program,
                        .region_program_size = size,
                        .region_slots = 5,
                        .regions = f->regions,
                        .n_regions = 2};
    f->regions[0] = (rt_region){"B == 1 and S <= 6", f->cond0, 2, f->map0, 1, *g0};
    f->regions[1] = (rt_region){"2 <= B", f->cond1, 1, f->map1, 2, *g1};
    for (int r = 0; r < 2; r++) {
        f->regions[r].graph.constants = root->constants;
        f->regions[r].graph.n_constants = root->n_constants;
        f->regions[r].graph.owned = NULL;
    }
    return 1;
}

void rt_test_two_free(rt_test_two *f) {
    rt_engine_free(f->g[0]);
    rt_engine_free(f->g[1]);
    free(f->program);
    memset(f, 0, sizeof *f);
}
