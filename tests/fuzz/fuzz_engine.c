/* libFuzzer target: the engine (.symx) loader and the whole reference run
 * behind it, on arbitrary FlatBuffers.
 *
 * The input is the FlatBuffer part of an engine; the harness seals it with a
 * valid checksum trailer (otherwise the checksum would refuse nearly every
 * mutation and the structural checks behind it would go untested). Any input
 * must load or be refused with a message. A loaded engine then goes the way
 * an embedder drives it: a reference context, input shapes, host buffers,
 * symrt_enqueue. Shapes come from the input's hash (so a crash reproduces):
 * each symbol gets a small value in its declared range (a multiple as
 * declared), the shape program gives every input dim, and now and then one
 * dim is nudged or a buffer is one byte short, so the refusals run too.
 * Every failing call must leave a message. The run is skipped when a tensor
 * other than a constant would exceed RUN_MAX_ELEMENTS (a valid big engine
 * must not time out); shapes are still set and evaluated, which is where
 * sizes overflowing int64 are refused. The seed corpus is a small
 * attention-block engine with GPU steps (kernels, cuBLASLt calls, cubin and
 * PTX), the same with tuned entries, reference-only engines of a few
 * other models and an engine with 2 regions (tests/fuzz/engine_corpus.sh). FUZZ_ENGINE_VERBOSE=1 prints
 * each run's outcome. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "runtime/ref/ref_kernels.h"
#include "symc/symrt.h"

#define RUN_MAX_ELEMENTS 4096 /* per non-constant tensor, for symrt_enqueue */
#define RUN_MAX_TOTAL 65536   /* all of them together */

static uint64_t next(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* a failing call must say why */
static void need_msg(symc_status st, const symc_error *err) {
    if (st != SYMC_OK && err->msg[0] == '\0') abort();
}

/* A value of symbol s near its minimum: one of the first few multiples. */
static int64_t pick(const rt_symbol *s, uint64_t *rng) {
    int64_t m = s->multiple_of > 0 ? s->multiple_of : 1;
    int64_t lo = s->min, r = s->min % m;
    if (r < 0) r += m;
    if (r && __builtin_add_overflow(lo, m - r, &lo)) return s->min; /* first multiple >= min */
    uint64_t span = lo > s->max ? 0 : ((uint64_t)s->max - (uint64_t)lo) / (uint64_t)m;
    uint64_t k = next(rng) % (span < 7 ? span + 1 : 8);
    return lo + (int64_t)k * m;
}

/* Sets shapes from symbol values, binds buffers and runs, as far as the
 * engine lets it. */
static void run_once(const rt_engine *re, symrt_engine *e, uint64_t *rng) {
    symc_error err;
    err.msg[0] = '\0';
    symrt_context *c = NULL;
    symc_status st = symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err);
    need_msg(st, &err);
    if (st) return;
    int64_t *values = calloc(re->n_symbols + 1, sizeof *values);
    int64_t *slots = calloc(re->num_slots + 1, sizeof *slots);
    void **bufs = calloc(re->n_inputs + re->n_outputs + 1, sizeof *bufs);
    if (!values || !slots || !bufs) goto done;
    for (uint32_t s = 0; s < re->n_symbols; s++) values[s] = pick(&re->symbols[s], rng);
    /* the shape program gives every dim; it may refuse the values (overflow, a division by zero) */
    if (sym_program_eval(re->program, re->program_size, values, re->n_symbols, slots, re->num_slots, NULL)) {
        for (uint32_t i = 0; i < re->num_slots; i++) slots[i] = 1;
        for (uint32_t s = 0; s < re->n_sources; s++) values[re->sources[s].symbol] = 1;
    }
    uint64_t nudge = next(rng);
    int nudged = (nudge & 7) == 0; /* one input dim off by one, one time in eight */
    for (uint32_t i = 0; i < re->n_inputs; i++) {
        const rt_tensor *t = &re->tensors[re->inputs[i]];
        int64_t dims[IR_MAX_RANK];
        for (int d = 0; d < t->rank; d++) dims[d] = slots[t->dims[d]];
        for (uint32_t s = 0; s < re->n_sources; s++)
            if (re->sources[s].input == i) dims[re->sources[s].dim] = values[re->sources[s].symbol];
        if (nudged && t->rank > 0 && (nudge >> 8) % re->n_inputs == i) dims[(nudge >> 16) % (uint64_t)t->rank] += 1;
        st = symrt_set_input_shape(c, t->name, dims, t->rank, &err);
        need_msg(st, &err);
    }
    /* every input and output (what symrt_get_tensor_shape reports), within the run's cap */
    uint64_t total = 0;
    int too_big = 0, failed = 0;
    for (uint32_t i = 0; i < re->n_inputs + re->n_outputs; i++) {
        const rt_tensor *t = &re->tensors[i < re->n_inputs ? re->inputs[i] : re->outputs[i - re->n_inputs]];
        int64_t dims[8], n = 1;
        int32_t rank = 0;
        st = symrt_get_tensor_shape(c, t->name, dims, &rank, &err);
        need_msg(st, &err);
        if (st) {
            failed = 1;
            break;
        }
        if (rank != t->rank) abort();
        for (int d = 0; d < rank; d++) {
            if (dims[d] < 0) abort(); /* evaluated shapes are never negative */
            if (__builtin_mul_overflow(n, dims[d], &n) || n > RUN_MAX_ELEMENTS) too_big = 1;
        }
        total += too_big ? 0 : (uint64_t)n;
    }
    if (failed) goto done;
    /* intermediates too: the same slots the context computed */
    if (sym_program_eval(re->program, re->program_size, values, re->n_symbols, slots, re->num_slots, NULL) == SYMC_OK)
        for (uint32_t i = 0; i < re->n_tensors && !too_big; i++) {
            if (re->tensors[i].constant != RT_NONE) continue;
            int64_t n = 1;
            for (int d = 0; d < re->tensors[i].rank && !too_big; d++)
                if (__builtin_mul_overflow(n, slots[re->tensors[i].dims[d]], &n) || n > RUN_MAX_ELEMENTS) too_big = 1;
            total += (uint64_t)n;
        }
    else too_big = 1;
    if (too_big || total > RUN_MAX_TOTAL) goto done;
    uint64_t short_one = next(rng);
    for (uint32_t i = 0; i < re->n_inputs + re->n_outputs; i++) {
        const rt_tensor *t = &re->tensors[i < re->n_inputs ? re->inputs[i] : re->outputs[i - re->n_inputs]];
        int64_t dims[8], bytes = 0;
        int32_t rank = 0;
        if (symrt_get_tensor_shape(c, t->name, dims, &rank, &err) ||
            !rt_checked_product(dims, rank, (int64_t)symc_dtype_size(t->dtype), &bytes))
            goto done;
        /* one buffer in sixteen one byte short: must be refused, never overrun */
        size_t size = (size_t)bytes;
        if (size && (short_one & 15) == 0 && (short_one >> 8) % (re->n_inputs + re->n_outputs) == i) size--;
        uint8_t *p = malloc(size ? size : 1);
        if (!p) goto done;
        bufs[i] = p;
        for (size_t k = 0; k < size; k++) p[k] = (uint8_t)next(rng);
        st = symrt_set_tensor_address(c, t->name, p, size, &err);
        need_msg(st, &err);
    }
    st = symrt_enqueue(c, NULL, &err);
    need_msg(st, &err);
    if (getenv("FUZZ_ENGINE_VERBOSE")) fprintf(stderr, "fuzz_engine: enqueue: %s\n", st ? err.msg : "ok");
    if (st == SYMC_OK) need_msg(symrt_enqueue(c, NULL, &err), &err); /* a second run reuses the plan */
done:
    symrt_context_destroy(c);
    for (uint32_t i = 0; bufs && i < re->n_inputs + re->n_outputs; i++) free(bufs[i]);
    free(bufs);
    free(values);
    free(slots);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf = malloc(size + 12);
    if (!buf) return 0;
    memcpy(buf, data, size);
    memcpy(buf + size, "SXCK", 4);
    uint64_t h = rt_engine_checksum(data, size);
    for (int i = 0; i < 8; i++) buf[size + 4 + i] = (uint8_t)(h >> (8 * i));
    symc_error err;
    err.msg[0] = '\0';
    symrt_engine *e = NULL;
    if (symrt_engine_load(buf, size + 12, &e, &err) != SYMC_OK) {
        if (e != NULL || err.msg[0] == '\0') abort();
        free(buf);
        return 0;
    }
    /* the decoded form, to pick shapes and size the run (the loader accepted
     * these bytes, so the decoder must too) */
    rt_engine *re = NULL;
    if (rt_engine_decode(buf, size + 12, &re, &err) != SYMC_OK) abort();
    free(buf);
    uint64_t rng = h;
    for (int k = 0; k < 2; k++) run_once(re, e, &rng);
    rt_engine_free(re);
    symrt_engine_destroy(e);
    return 0;
}
