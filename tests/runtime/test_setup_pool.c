/* Library call setups shared between steps (runtime/cuda/setup_pool.h), on the CPU:
 *  - classes: GEMM steps with equal precision, epilogue, transposes, alpha, beta and tuned
 *    choices (byte for byte) share the first one's index; one differing byte of a tuned algorithm,
 *    a precision, an epilogue, a beta or another kind splits them; other kinds get UINT32_MAX;
 *    against a brute-force pairwise comparison on 300 random steps;
 *  - the pool: a second step of a class takes the first's setup (counted shared, made once); a
 *    key differing in one byte is made anew; each step's row keeps `ways` setups and lets the
 *    oldest go; a setup is destroyed exactly when the last row holding it lets it go, and every
 *    setup exactly once at the end, under a random workload checked against a model of the rows. */
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/setup_pool.h"
#include "tests/check.h"

typedef struct item {
    rt_cuda_setup base;
    int key[3];
    int alive;
} item;

static int destroyed, live;

static void item_destroy(rt_cuda_setup *s) {
    item *it = (item *)s;
    CHECK(it->alive == 1);
    it->alive = 0;
    destroyed++;
    live--;
    free(it);
}

static item *make(const int key[3]) {
    item *it = calloc(1, sizeof *it);
    memcpy(it->key, key, sizeof it->key);
    it->alive = 1;
    it->base.key = it->key;
    it->base.key_len = sizeof it->key;
    live++;
    return it;
}

/* the step's setup for key: its row's, another step's, or made */
static item *get(rt_cuda_setups *p, uint32_t step, const int key[3], int *made) {
    rt_cuda_setup *s = rt_cuda_setups_row(p, step, key, 3 * sizeof(int));
    if (!s) s = rt_cuda_setups_take(p, step, key, 3 * sizeof(int));
    *made = !s;
    if (!s) {
        item *it = make(key);
        rt_cuda_setups_put(p, step, &it->base);
        s = &it->base;
    }
    return (item *)s;
}

static uint8_t algos[4][RT_GEMM_ALGO_SIZE];

static rt_step gemm_step(uint8_t precision, uint8_t epilogue, float beta, const rt_tuned *tuned, uint32_t n) {
    rt_step s;
    memset(&s, 0, sizeof s);
    s.kind = RT_STEP_GEMM;
    s.precision = precision;
    s.epilogue = epilogue;
    s.alpha = 1.0f;
    s.beta = beta;
    s.tuned = tuned;
    s.n_tuned = n;
    return s;
}

static void test_classes(void) {
    for (int i = 0; i < 4; i++) memset(algos[i], i + 1, sizeof algos[i]);
    rt_tuned t1[2] = {{{8, 768, 768, 1}, 0.01f, RT_GEMM_ALGO_SIZE, algos[0]},
                      {{4096, 768, 768, 1}, 0.1f, RT_GEMM_ALGO_SIZE, algos[1]}};
    rt_tuned t2[2] = {t1[0], t1[1]};
    static uint8_t other[RT_GEMM_ALGO_SIZE];
    memcpy(other, algos[1], sizeof other);
    other[RT_GEMM_ALGO_SIZE - 1] ^= 1; /* one byte of the second algorithm */
    rt_tuned t3[2] = {t1[0], t1[1]};
    t3[1].algo = other;
    rt_step steps[9] = {gemm_step(0, 0, 0, t1, 2), gemm_step(0, 0, 0, t2, 2), gemm_step(0, 0, 0, t3, 2),
                        gemm_step(1, 0, 0, t1, 2), gemm_step(0, 1, 0, t1, 2), gemm_step(0, 0, 1, t1, 2),
                        gemm_step(0, 0, 0, t1, 2), gemm_step(0, 0, 0, t1, 1), gemm_step(0, 0, 0, t1, 2)};
    steps[8].kind = RT_STEP_CONV;
    rt_engine e;
    memset(&e, 0, sizeof e);
    e.steps = steps;
    e.n_steps = 9;
    uint32_t cls[9];
    rt_cuda_setup_classes(&e, RT_STEP_GEMM, cls);
    const uint32_t want[9] = {0, 0, 2, 3, 4, 5, 0, 7, UINT32_MAX};
    for (int i = 0; i < 9; i++) CHECK_MSG(cls[i] == want[i], "step %d: class %u, want %u", i, cls[i], want[i]);

    /* random steps against a brute-force pairwise comparison */
    enum { N = 300 };
    rt_step *many = calloc(N, sizeof *many);
    rt_tuned *tl = calloc(N, sizeof *tl);
    srand(7);
    for (int i = 0; i < N; i++) {
        tl[i] = t1[0];
        tl[i].algo = algos[rand() % 4];
        tl[i].at[0] = 1 + rand() % 2;
        many[i] = gemm_step((uint8_t)(rand() % 2), (uint8_t)(rand() % 2), 0, &tl[i], (uint32_t)(rand() % 2));
        if (rand() % 7 == 0) many[i].kind = RT_STEP_KERNEL;
    }
    e.steps = many;
    e.n_steps = N;
    uint32_t *c = calloc(N, sizeof *c);
    rt_cuda_setup_classes(&e, RT_STEP_GEMM, c);
    for (int i = 0; i < N; i++) {
        uint32_t w = UINT32_MAX;
        if (many[i].kind == RT_STEP_GEMM)
            for (int j = 0; j <= i && w == UINT32_MAX; j++) {
                const rt_step *a = &many[i], *b = &many[j];
                int same = b->kind == RT_STEP_GEMM && a->precision == b->precision && a->epilogue == b->epilogue &&
                    a->n_tuned == b->n_tuned;
                if (same && a->n_tuned)
                    same = a->tuned[0].at[0] == b->tuned[0].at[0] && a->tuned[0].algo == b->tuned[0].algo;
                if (same) w = (uint32_t)j;
            }
        CHECK_MSG(c[i] == w, "random step %d: class %u, want %u", i, c[i], w);
    }
    free(c);
    free(many);
    free(tl);
}

static void test_pool(void) {
    symc_error err;
    rt_cuda_setups p;
    CHECK(rt_cuda_setups_init(&p, 4, 2, item_destroy, &err) == SYMC_OK);
    int made;
    const int k1[3] = {0, 8, 768}, k2[3] = {0, 8, 769}, k3[3] = {0, 16, 768};
    item *a = get(&p, 0, k1, &made);
    CHECK(made && p.made == 1 && p.shared == 0);
    CHECK(get(&p, 0, k1, &made) == a && !made); /* its own row */
    item *b = get(&p, 1, k1, &made);
    CHECK(b == a && !made && p.made == 1 && p.shared == 1); /* another step's */
    CHECK(a->base.refs == 2);
    item *c = get(&p, 1, k2, &made); /* one byte differs: made anew */
    CHECK(c != a && made && p.made == 2);
    /* step 1's row holds k1 and k2; k3 lets k1 go there, but step 0 still holds it */
    item *d = get(&p, 1, k3, &made);
    CHECK(made && d != a && a->alive && a->base.refs == 1 && destroyed == 0);
    /* step 0 fills its row past 2: k1 goes and is destroyed (no row holds it any more) */
    get(&p, 0, k2, &made);
    CHECK(!made && c->base.refs == 2);
    get(&p, 0, k3, &made);
    CHECK(!made && destroyed == 1);
    CHECK(rt_cuda_setups_row(&p, 0, k1, sizeof k1) == NULL && rt_cuda_setups_take(&p, 2, k1, sizeof k1) == NULL);
    rt_cuda_setups_free(&p);
    CHECK(live == 0);

    /* a random workload against a model of the rows: every setup a row holds is alive and has the
     * key asked for; made + shared = row misses; every setup destroyed once at the end */
    enum { STEPS = 9, WAYS = 3, KEYS = 6, OPS = 20000 };
    CHECK(rt_cuda_setups_init(&p, STEPS, WAYS, item_destroy, &err) == SYMC_OK);
    srand(11);
    uint64_t misses = 0;
    for (int op = 0; op < OPS; op++) {
        uint32_t step = (uint32_t)(rand() % STEPS);
        int key[3] = {(int)step % 3, rand() % KEYS, 0}; /* three classes of three steps */
        int in_row = rt_cuda_setups_row(&p, step, key, sizeof key) != NULL;
        item *it = get(&p, step, key, &made);
        misses += !in_row;
        CHECK(it->alive && !memcmp(it->key, key, sizeof key));
        for (uint32_t s = 0; s < STEPS; s++)
            for (uint32_t w = 0; w < WAYS; w++) {
                item *x = (item *)rt_cuda_setups_way(&p, s, w);
                CHECK(!x || (x->alive && x->key[0] == (int)s % 3 && x->base.refs >= 1));
            }
    }
    CHECK(p.made + p.shared == misses);
    CHECK(p.shared > 0);
    int before = destroyed;
    rt_cuda_setups_free(&p);
    CHECK(live == 0 && destroyed - before > 0);
}

int main(void) {
    test_classes();
    test_pool();
    return check_report("runtime.setup_pool");
}
