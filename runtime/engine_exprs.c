/* The engine's shape expressions, recovered (runtime/plan.h): its symbols
 * in a fresh sym_table with their declared ranges and multiples, and every
 * slot of its shape program rebuilt by sym_program_decode through the
 * canonical constructors, so the expressions simplify and prove as the
 * compiler's did. The context uses them to find the input dims a model
 * fixes (context.c), the tools for memory formulas (tools/memory.c). */
#include <stdlib.h>

#include "runtime/plan.h"

symc_status rt_engine_sym_table(const rt_engine *e, sym_table **table, sym_expr **slots, symc_error *err) {
    *table = NULL;
    *slots = NULL;
    sym_table *t = sym_table_new();
    sym_expr *x = malloc(((size_t)e->num_slots + 1) * sizeof *x);
    symc_status st = SYMC_OK;
    if (!t || !x) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory recovering the engine's shape expressions");
        goto fail;
    }
    for (uint32_t s = 0; s < e->n_symbols; s++) {
        const rt_symbol *y = &e->symbols[s];
        sym_symbol_info info = {y->name, y->min, y->opt, y->max, y->multiple_of > 1 ? y->multiple_of : 1, ""};
        sym_id id;
        if ((st = sym_symbol_new(t, &info, &id, err))) {
            symc_error_prefix(err, "engine symbol %u", s);
            goto fail;
        }
    }
    if ((st = sym_program_decode(t, e->program, e->program_size, x, e->num_slots, err))) {
        symc_error_prefix(err, "the engine's shape program");
        goto fail;
    }
    *table = t;
    *slots = x;
    return SYMC_OK;
fail:
    sym_table_free(t);
    free(x);
    return st;
}
