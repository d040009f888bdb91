/* Sizes known only after a node runs, on the runtime's side (produced_run.h).
 *
 * Capacity first: the capacity program reads the input-dim symbols and
 * gives each produced symbol the most it can be (its bound with every
 * produced symbol in it at its own bound); the context evaluates the shape
 * program with those values, so every size and the backend's layout are
 * planned for the largest run. The build proved that no tensor shrinks as
 * a produced symbol grows; the run checks it again, per producer, for
 * every tensor whose dims mention a produced size (listed once, at context
 * creation), so a wrong proof is an error, never a write past the planned
 * memory.
 *
 * During a run: the backend calls the hook after each producer with the
 * count it wrote. The count must be at most the bound at the real values
 * of the symbols produced before it (a derived bound always holds; a
 * declared one may not) and at most the capacity; then the shape program
 * runs again at the real values (about 0.5 µs for 200 expressions: simpler
 * and as cheap as a program split before and after each producer) and the
 * guards waiting for this symbol are checked. Which slots depend on a
 * produced symbol is found once, by decoding the shape program
 * (rt_engine_sym_table) and asking which expressions mention one. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/plan.h"
#include "runtime/produced_run.h"

void rt_produced_free(rt_produced_run *r) {
    if (!r) return;
    free(r->cap);
    free(r->count);
    free(r->values);
    free(r->slots);
    free(r->dependent);
    free(r->watch);
    memset(r, 0, sizeof *r);
}

static void find_dependent(rt_produced_run *r) {
    const rt_engine *e = r->e;
    sym_table *t = NULL;
    sym_expr *x = NULL;
    symc_error ignored = {0};
    if (rt_engine_sym_table(e, &t, &x, &ignored)) {
        memset(r->dependent, 1, e->num_slots);
        return;
    }
    for (uint32_t s = 0; s < e->num_slots; s++)
        for (uint32_t k = 0; k < e->n_produced && !r->dependent[s]; k++)
            r->dependent[s] = (uint8_t)sym_mentions(t, x[s], e->produced[k].symbol);
    sym_table_free(t);
    free(x);
}

symc_status rt_produced_init(rt_produced_run *r, const rt_engine *e, symc_error *err) {
    memset(r, 0, sizeof *r);
    r->e = e;
    r->cap = calloc(e->n_produced + 1, sizeof *r->cap);
    r->count = calloc(e->n_produced + 1, sizeof *r->count);
    r->values = calloc(e->n_symbols + 1, sizeof *r->values);
    r->slots = calloc(e->num_slots + 1, sizeof *r->slots);
    r->dependent = calloc(e->num_slots + 1, 1);
    if (!r->cap || !r->count || !r->values || !r->slots || !r->dependent) {
        rt_produced_free(r);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a context");
    }
    find_dependent(r);
    /* the tensors a count can resize: checked per producer in a run, the others are as planned */
    if (!(r->watch = calloc(e->n_tensors + 1, sizeof *r->watch))) {
        rt_produced_free(r);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating a context");
    }
    for (uint32_t i = 0; i < e->n_tensors; i++) {
        int dep = 0;
        for (int32_t d = 0; d < e->tensors[i].rank && !dep; d++) dep = r->dependent[e->tensors[i].dims[d]];
        if (dep) r->watch[r->n_watch++] = i;
    }
    return SYMC_OK;
}

symc_status rt_produced_capacity(rt_produced_run *r, int64_t *values, symc_error *err) {
    const rt_engine *e = r->e;
    r->finished = 0;
    symc_status st = sym_program_eval(e->capacity_program, e->capacity_program_size, values, e->n_symbols, r->cap,
                                      e->n_produced, err);
    if (st) return symc_error_prefix(err, "evaluating the capacities of the sizes known only at run time"), st;
    for (uint32_t k = 0; k < e->n_produced; k++) {
        if (r->cap[k] < 0)
            return symc_error_setf(err, SYMC_ERR_RANGE, "%s: its bound is %" PRId64 " at these input shapes",
                                   e->produced[k].what, r->cap[k]);
        values[e->produced[k].symbol] = r->cap[k];
    }
    return SYMC_OK;
}

static symc_status on_produced(void *ctx, uint32_t k, int64_t count, const int64_t **slots, symc_error *err) {
    rt_produced_run *r = ctx;
    const rt_engine *e = r->e;
    if (k >= e->n_produced || k != r->done)
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "a backend reported produced size %u, expected %u", k, r->done);
    const rt_produced *p = &e->produced[k];
    const rt_node *n = &e->nodes[p->node];
    const char *sym = e->symbols[p->symbol].name;
    int64_t bound = r->slots[p->bound];
    if (count < 0)
        return symc_error_setf(err, SYMC_ERR_RANGE,
                               "node '%s' (%s): %s is negative (%s); a size must be >= 0; the run's outputs are not "
                               "valid",
                               n->name, ir_op_name(n->op), sym, p->what);
    if (count > bound || count > r->cap[k])
        return symc_error_setf(err, SYMC_ERR_RANGE,
                               "node '%s' (%s): %s = %" PRId64 " exceeds its bound %" PRId64
                               " (%s); the run's outputs are not valid",
                               n->name, ir_op_name(n->op), sym, count, bound < r->cap[k] ? bound : r->cap[k], p->what);
    r->count[k] = count;
    r->values[p->symbol] = count;
    symc_status st = sym_program_eval(e->program, e->program_size, r->values, e->n_symbols, r->slots, e->num_slots,
                                      err);
    if (st)
        return symc_error_prefix(err, "evaluating the shape program after node '%s' (%s)", n->name, ir_op_name(n->op)),
               st;
    /* every tensor a count resizes stays inside the memory planned at the capacity */
    for (uint32_t w = 0; w < r->n_watch; w++) {
        uint32_t i = r->watch[w];
        int64_t real = 0, planned = 0;
        if (!rt_tensor_bytes(e, r->slots, i, &real) || !rt_tensor_bytes(e, r->cap_slots, i, &planned) || real > planned)
            return symc_error_setf(err, SYMC_ERR_INTERNAL,
                                   "tensor '%s' needs %" PRId64 " bytes once %s = %" PRId64
                                   " but its memory was planned for %" PRId64 " (at the bound)",
                                   e->tensors[i].name, real, sym, count, planned);
    }
    for (uint32_t g = 0; g < e->n_guards; g++) {
        const rt_guard *gd = &e->guards[g];
        if (gd->after != k + 1) continue;
        int64_t a = r->slots[gd->lhs], b = r->slots[gd->rhs];
        if (!sym_rel_holds(gd->rel, a, b))
            return symc_error_setf(err, SYMC_ERR_RANGE,
                                   "the data break a condition of the model once %s = %" PRId64 ": %s (values %" PRId64
                                   " and %" PRId64 "); the run's outputs are not valid",
                                   sym, count, gd->message, a, b);
    }
    r->done = k + 1;
    *slots = r->slots;
    return SYMC_OK;
}

rt_run_hook rt_produced_begin(rt_produced_run *r, const int64_t *values, const int64_t *cap_slots) {
    const rt_engine *e = r->e;
    memcpy(r->values, values, e->n_symbols * sizeof *values);
    memcpy(r->slots, cap_slots, e->num_slots * sizeof *cap_slots);
    r->cap_slots = cap_slots;
    for (uint32_t k = 0; k < e->n_produced; k++) r->count[k] = -1;
    r->done = 0;
    r->finished = 0;
    return (rt_run_hook){r, on_produced};
}

symc_status rt_produced_end(rt_produced_run *r, symc_error *err) {
    if (r->done != r->e->n_produced)
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "the backend reported %u of the %u sizes known only at run time",
                               r->done, r->e->n_produced);
    r->finished = 1;
    return SYMC_OK;
}
