/* setup_pool.h: library call setups shared by the steps that make the same call (internal to
 * runtime/cuda; no CUDA types, tested on the CPU by tests/runtime/test_setup_pool.c).
 *
 * A library step (cuBLASLt GEMM) needs a setup per shape key: descriptors and a checked
 * algorithm, 15-25 us of host time to make. A transformer's layers repeat the same few calls
 * (BERT-base: 72 GEMM steps, 4 problems at any shape), so the first call at a new shape made
 * the same setup once per step. Here steps that describe the same call share one setup:
 *
 *  - rt_cuda_setup_classes gives each step of a kind the index of the first step whose setup
 *    inputs are equal (precision, epilogue, transposes, alpha, beta, the tuned choices byte for
 *    byte): only those steps may share. The caller's key adds what the shape decides.
 *  - Each step keeps its last `ways` setups (its row, the hot path: a few memcmp); a miss asks
 *    the pool (a hash of the key), which holds every setup some row holds, reference counted;
 *    a setup is destroyed when the last row lets it go.
 *
 * The setup is the caller's struct with an rt_cuda_setup first; its key bytes (class included,
 * padding zeroed) are compared whole. */
#ifndef SYMC_RUNTIME_CUDA_SETUP_POOL_H
#define SYMC_RUNTIME_CUDA_SETUP_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/engine.h"

typedef struct rt_cuda_setup {
    struct rt_cuda_setup *chain; /* the pool bucket's next */
    uint64_t hash;
    uint32_t refs; /* rows that hold it */
    uint32_t key_len;
    const void *key; /* in the caller's struct */
} rt_cuda_setup;

typedef struct rt_cuda_setups {
    uint32_t n_steps, ways, n_buckets;
    rt_cuda_setup **rows; /* ways per step */
    uint32_t *next;       /* per step: the way replaced next */
    rt_cuda_setup **buckets;
    void (*destroy)(rt_cuda_setup *); /* frees the caller's struct */
    uint64_t made, shared;            /* setups made; misses served by another step's setup */
} rt_cuda_setups;

/* Per step of `kind`: the first step of that kind whose setup inputs equal its own (its index
 * for the first); other steps get UINT32_MAX. cls holds e->n_steps entries. */
void rt_cuda_setup_classes(const rt_engine *e, uint8_t kind, uint32_t *cls);

symc_status rt_cuda_setups_init(rt_cuda_setups *p, uint32_t n_steps, uint32_t ways, void (*destroy)(rt_cuda_setup *),
                                symc_error *err);
/* Destroys every setup (each once). */
void rt_cuda_setups_free(rt_cuda_setups *p);

/* The step's row: the setup with this key, or NULL. */
rt_cuda_setup *rt_cuda_setups_row(const rt_cuda_setups *p, uint32_t step, const void *key, size_t len);
/* After a row miss: another step's setup with this key, now also in this step's row (counted in
 * `shared`), or NULL. */
rt_cuda_setup *rt_cuda_setups_take(rt_cuda_setups *p, uint32_t step, const void *key, size_t len);
/* A setup just made for this step (s->key, s->key_len set): into the pool and the step's row. */
void rt_cuda_setups_put(rt_cuda_setups *p, uint32_t step, rt_cuda_setup *s);
/* The step's way i (i < ways), NULL when empty. */
rt_cuda_setup *rt_cuda_setups_way(const rt_cuda_setups *p, uint32_t step, uint32_t i);

#endif
