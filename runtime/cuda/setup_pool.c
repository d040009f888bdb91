/* Library call setups shared by the steps that make the same call (setup_pool.h).
 *
 * Classes: steps are hashed on their setup inputs and put in an open-addressing table; a step
 * joins the class of the first earlier step in its chain with equal inputs (byte compares of the
 * tuned choices), so the pass is linear in the steps. Without memory for the table every step is
 * its own class: nothing is shared, nothing is wrong.
 *
 * The pool: a power-of-two hash table (FNV-1a over the key bytes) of chains; every setup in a
 * chain is held by at least one row (refs), so the pool never holds what no step can reach. */
#include "runtime/cuda/setup_pool.h"

#include <stdlib.h>
#include <string.h>

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

#define FNV0 1469598103934665603ull

static uint64_t step_hash(const rt_step *s) {
    const uint8_t head[5] = {s->kind, s->precision, s->epilogue, s->trans_a, s->trans_b};
    uint64_t h = fnv(FNV0, head, sizeof head);
    h = fnv(h, &s->alpha, sizeof s->alpha);
    h = fnv(h, &s->beta, sizeof s->beta);
    h = fnv(h, &s->n_tuned, sizeof s->n_tuned);
    for (uint32_t i = 0; i < s->n_tuned; i++) {
        const rt_tuned *t = &s->tuned[i];
        h = fnv(h, t->at, sizeof t->at);
        h = fnv(h, &t->ms, sizeof t->ms);
        h = fnv(h, &t->algo_size, sizeof t->algo_size);
        if (t->algo) h = fnv(h, t->algo, t->algo_size);
    }
    return h;
}

static int step_same(const rt_step *a, const rt_step *b) {
    if (a->kind != b->kind || a->precision != b->precision || a->epilogue != b->epilogue || a->trans_a != b->trans_a ||
        a->trans_b != b->trans_b || memcmp(&a->alpha, &b->alpha, sizeof a->alpha) ||
        memcmp(&a->beta, &b->beta, sizeof a->beta) || a->n_tuned != b->n_tuned)
        return 0;
    for (uint32_t i = 0; i < a->n_tuned; i++) {
        const rt_tuned *x = &a->tuned[i], *y = &b->tuned[i];
        if (memcmp(x->at, y->at, sizeof x->at) || memcmp(&x->ms, &y->ms, sizeof x->ms) ||
            x->algo_size != y->algo_size || !x->algo != !y->algo || (x->algo && memcmp(x->algo, y->algo, x->algo_size)))
            return 0;
    }
    return 1;
}

void rt_cuda_setup_classes(const rt_engine *e, uint8_t kind, uint32_t *cls) {
    uint32_t n = 0, size = 16;
    for (uint32_t i = 0; i < e->n_steps; i++) {
        cls[i] = UINT32_MAX;
        n += e->steps[i].kind == kind;
    }
    while (size < 2 * n) size *= 2;
    uint32_t *table = malloc(size * sizeof *table); /* step index + 1, 0 = empty */
    uint64_t *hashes = malloc(size * sizeof *hashes);
    if (table) memset(table, 0, size * sizeof *table);
    for (uint32_t i = 0; i < e->n_steps; i++) {
        const rt_step *s = &e->steps[i];
        if (s->kind != kind) continue;
        cls[i] = i;
        if (!table || !hashes) continue;
        uint64_t h = step_hash(s);
        uint32_t at = (uint32_t)h & (size - 1);
        for (; table[at]; at = (at + 1) & (size - 1))
            if (hashes[at] == h && step_same(&e->steps[table[at] - 1], s)) break;
        if (table[at]) cls[i] = table[at] - 1; /* an earlier step with equal inputs */
        else {
            table[at] = i + 1;
            hashes[at] = h;
        }
    }
    free(table);
    free(hashes);
}

symc_status rt_cuda_setups_init(rt_cuda_setups *p, uint32_t n_steps, uint32_t ways, void (*destroy)(rt_cuda_setup *),
                                symc_error *err) {
    memset(p, 0, sizeof *p);
    p->n_steps = n_steps;
    p->ways = ways ? ways : 1;
    p->destroy = destroy;
    p->n_buckets = 64;
    while (p->n_buckets < 2 * (uint64_t)n_steps) p->n_buckets *= 2;
    p->rows = calloc((size_t)n_steps * p->ways + 1, sizeof *p->rows);
    p->next = calloc((size_t)n_steps + 1, sizeof *p->next);
    p->buckets = calloc(p->n_buckets, sizeof *p->buckets);
    if (!p->rows || !p->next || !p->buckets) {
        rt_cuda_setups_free(p);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for the library call setups of %u steps", n_steps);
    }
    return SYMC_OK;
}

static void release(rt_cuda_setups *p, rt_cuda_setup *s) {
    if (--s->refs) return;
    rt_cuda_setup **at = &p->buckets[s->hash & (p->n_buckets - 1)];
    while (*at && *at != s) at = &(*at)->chain;
    if (*at) *at = s->chain;
    p->destroy(s);
}

void rt_cuda_setups_free(rt_cuda_setups *p) {
    if (p->rows)
        for (size_t i = 0; i < (size_t)p->n_steps * p->ways; i++)
            if (p->rows[i]) {
                release(p, p->rows[i]);
                p->rows[i] = NULL;
            }
    free(p->rows);
    free(p->next);
    free(p->buckets);
    p->rows = p->buckets = NULL;
    p->next = NULL;
}

rt_cuda_setup *rt_cuda_setups_row(const rt_cuda_setups *p, uint32_t step, const void *key, size_t len) {
    rt_cuda_setup *const *row = &p->rows[(size_t)step * p->ways];
    for (uint32_t i = 0; i < p->ways; i++)
        if (row[i] && row[i]->key_len == len && !memcmp(row[i]->key, key, len)) return row[i];
    return NULL;
}

/* s (its reference already counted) into the step's row, in place of the way replaced next */
static void install(rt_cuda_setups *p, uint32_t step, rt_cuda_setup *s) {
    rt_cuda_setup **slot = &p->rows[(size_t)step * p->ways + p->next[step]];
    p->next[step] = (p->next[step] + 1) % p->ways;
    rt_cuda_setup *old = *slot;
    *slot = s;
    if (old) release(p, old);
}

rt_cuda_setup *rt_cuda_setups_take(rt_cuda_setups *p, uint32_t step, const void *key, size_t len) {
    uint64_t h = fnv(FNV0, key, len);
    for (rt_cuda_setup *s = p->buckets[h & (p->n_buckets - 1)]; s; s = s->chain)
        if (s->hash == h && s->key_len == len && !memcmp(s->key, key, len)) {
            s->refs++;
            install(p, step, s);
            p->shared++;
            return s;
        }
    return NULL;
}

void rt_cuda_setups_put(rt_cuda_setups *p, uint32_t step, rt_cuda_setup *s) {
    s->hash = fnv(FNV0, s->key, s->key_len);
    s->refs = 1;
    rt_cuda_setup **bucket = &p->buckets[s->hash & (p->n_buckets - 1)];
    s->chain = *bucket;
    *bucket = s;
    install(p, step, s);
    p->made++;
}

rt_cuda_setup *rt_cuda_setups_way(const rt_cuda_setups *p, uint32_t step, uint32_t i) {
    return p->rows && i < p->ways ? p->rows[(size_t)step * p->ways + i] : NULL;
}
