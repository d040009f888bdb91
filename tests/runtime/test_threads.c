/* Threads and the symrt API (reference backend): one engine shared by 8
 * threads, each with its own context, gives bit-exact the outputs of a
 * single-threaded run at every shape; one context entered by two threads at
 * once refuses the second with "in use by another thread", naming the
 * context, without blocking, crashing or corrupting the first call (made
 * deterministic by an allocator that holds the first call inside
 * symrt_enqueue until the second thread has been refused), and survives two
 * threads hammering it. Run under ThreadSanitizer too (SYMC_TSAN, label
 * `threads`), where any data race fails the test. Worker threads record what
 * they saw; only the main thread checks (tests/check.h is not thread-safe). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "symc/symrt.h"
#include "tests/check.h"

enum { D = 16, MAXB = 3, MAXS = 8, THREADS = 8, ROUNDS = 3 };

/* y = relu(softmax(x @ w + b) * x) over the last axis, x [B, S, 16] */
static symrt_engine *make_engine(void) {
    symc_error err;
    symc_module *m = symc_module_create("block", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 2, MAXB, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 4, MAXS, 1, &S, &err);
    float w[D * D], b[D];
    for (int i = 0; i < D * D; i++) w[i] = (float)((i * 37) % 23 - 11) / 16.0f;
    for (int i = 0; i < D; i++) b[i] = (float)(i % 5) / 8.0f - 0.25f;
    symc_tensor x, wt, bt, mm, h, s, p, y;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, D)}, &x, &err);
    symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){D, D}, w, sizeof w, &wt, &err);
    symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){D}, b, sizeof b, &bt, &err);
    symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, wt}, 2, NULL, 0, &mm, 1, &err);
    symc_add_node(m, "add", "h", (symc_tensor[]){mm, bt}, 2, NULL, 0, &h, 1, &err);
    symc_attr axis = symc_attr_int("axis", -1);
    symc_add_node(m, "softmax", "s", &h, 1, &axis, 1, &s, 1, &err);
    symc_add_node(m, "mul", "p", (symc_tensor[]){s, x}, 2, NULL, 0, &p, 1, &err);
    symc_add_node(m, "relu", "y", &p, 1, NULL, 0, &y, 1, &err);
    symc_mark_output(m, y, &err);
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.gpu = 0;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    symrt_engine *e = NULL;
    CHECK_MSG(bytes && symrt_engine_load(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    free(bytes);
    return e;
}

static void fill(float *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 16) % 2001) / 500.0f - 2.0f;
    }
}

static float inputs[MAXB][MAXS][MAXB * MAXS * D];
static float expected[MAXB][MAXS][MAXB * MAXS * D];

/* One run at (Bv, Sv) on c; 0 or the status, the message in err. */
static symc_status run(symrt_context *c, int64_t Bv, int64_t Sv, const float *x, float *y, symc_error *err) {
    size_t bytes = (size_t)(Bv * Sv * D) * sizeof(float);
    symc_status st = symrt_set_input_shape(c, "x", (int64_t[]){Bv, Sv, D}, 3, err);
    if (!st) st = symrt_set_tensor_address(c, "x", (void *)x, bytes, err);
    if (!st) st = symrt_set_tensor_address(c, "y", y, bytes, err);
    if (!st) st = symrt_enqueue(c, NULL, err);
    return st;
}

/* ---- 8 threads, a context each ------------------------------------------------ */

typedef struct worker {
    symrt_engine *e;
    int index;
    int mismatches, failures;
    char first_error[SYMC_ERROR_MSG_CAP];
} worker;

static void *work(void *arg) {
    worker *w = arg;
    symc_error err;
    symrt_context *c = NULL;
    if (symrt_context_create(w->e, SYMRT_BACKEND_REF, NULL, &c, &err)) {
        w->failures++;
        memcpy(w->first_error, err.msg, sizeof err.msg);
        return NULL;
    }
    float y[MAXB * MAXS * D];
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < MAXB * MAXS; k++) {
            /* each thread walks the shapes in its own order, so contexts differ in state */
            int idx = (k * 7 + w->index * 5 + r) % (MAXB * MAXS);
            int64_t Bv = idx / MAXS + 1, Sv = idx % MAXS + 1;
            memset(y, 0xff, sizeof y);
            if (run(c, Bv, Sv, inputs[Bv - 1][Sv - 1], y, &err)) {
                if (!w->failures++) memcpy(w->first_error, err.msg, sizeof err.msg);
                continue;
            }
            if (memcmp(y, expected[Bv - 1][Sv - 1], (size_t)(Bv * Sv * D) * sizeof(float))) w->mismatches++;
        }
    symrt_context_destroy(c);
    return NULL;
}

static void test_contexts_per_thread(symrt_engine *e) {
    symc_error err;
    symrt_context *c = NULL;
    CHECK(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK);
    for (int64_t Bv = 1; Bv <= MAXB; Bv++)
        for (int64_t Sv = 1; Sv <= MAXS; Sv++) {
            fill(inputs[Bv - 1][Sv - 1], (size_t)(Bv * Sv * D), (unsigned)(Bv * 100 + Sv));
            CHECK_MSG(run(c, Bv, Sv, inputs[Bv - 1][Sv - 1], expected[Bv - 1][Sv - 1], &err) == SYMC_OK, "%s", err.msg);
        }
    symrt_context_destroy(c);
    pthread_t t[THREADS];
    worker w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        w[i] = (worker){e, i, 0, 0, ""};
        CHECK(pthread_create(&t[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK_MSG(w[i].failures == 0, "thread %d: %d calls failed, first: %s", i, w[i].failures, w[i].first_error);
        CHECK_MSG(w[i].mismatches == 0, "thread %d: %d runs differ from the single-threaded ones", i, w[i].mismatches);
    }
}

/* ---- one context, two threads: deterministic collision ------------------------- */

/* The allocator holds the first thread inside symrt_enqueue (growing the
 * workspace) until the second thread has tried the context; any other
 * thread allocating (which only a runtime letting it in would do) passes. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t first;
    int inside, tried;
} gate;

static void *gated_alloc(void *ctx, size_t size, size_t alignment) {
    gate *g = ctx;
    pthread_mutex_lock(&g->mu);
    if (pthread_equal(pthread_self(), g->first)) {
        g->inside = 1;
        pthread_cond_broadcast(&g->cv);
        while (!g->tried) pthread_cond_wait(&g->cv, &g->mu);
    }
    pthread_mutex_unlock(&g->mu);
    size = (size + alignment - 1) / alignment * alignment;
    return aligned_alloc(alignment, size ? size : alignment);
}
static void plain_free(void *ctx, void *p) {
    (void)ctx;
    free(p);
}

typedef struct collide {
    symrt_context *c;
    gate *g;
    symc_status first_st, second_st[4];
    char first_msg[SYMC_ERROR_MSG_CAP], second_msg[SYMC_ERROR_MSG_CAP];
    float y[MAXB * MAXS * D];
} collide;

static void *first_caller(void *arg) {
    collide *k = arg;
    symc_error err;
    pthread_mutex_lock(&k->g->mu);
    k->g->first = pthread_self();
    pthread_mutex_unlock(&k->g->mu);
    k->first_st = run(k->c, 2, 5, inputs[1][4], k->y, &err);
    memcpy(k->first_msg, err.msg, sizeof err.msg);
    return NULL;
}

static void test_collision(symrt_engine *e) {
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, pthread_self(), 0, 0};
    symrt_allocator alloc = {gated_alloc, plain_free, &g};
    symc_error err;
    collide k;
    memset(&k, 0, sizeof k);
    k.g = &g;
    CHECK(symrt_context_create(e, SYMRT_BACKEND_REF, &alloc, &k.c, &err) == SYMC_OK);
    if (!k.c) return;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, first_caller, &k) == 0);
    pthread_mutex_lock(&g.mu);
    while (!g.inside) pthread_cond_wait(&g.cv, &g.mu);
    pthread_mutex_unlock(&g.mu);
    /* the first thread is inside symrt_enqueue now: every entry point refuses at once */
    float other[MAXB * MAXS * D];
    int64_t dims[8];
    int32_t rank;
    k.second_st[0] = symrt_set_input_shape(k.c, "x", (int64_t[]){1, 1, D}, 3, &err);
    memcpy(k.second_msg, err.msg, sizeof err.msg);
    k.second_st[1] = symrt_set_tensor_address(k.c, "y", other, sizeof other, &err);
    k.second_st[2] = symrt_get_tensor_shape(k.c, "y", dims, &rank, &err);
    k.second_st[3] = symrt_enqueue(k.c, NULL, &err);
    pthread_mutex_lock(&g.mu);
    g.tried = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    pthread_join(t, NULL);
    for (int i = 0; i < 4; i++)
        CHECK_MSG(k.second_st[i] == SYMC_ERR_INVALID_ARG, "call %d of the second thread: %d", i, k.second_st[i]);
    /* contexts are numbered per engine: 1 + 8 were made before this one */
    CHECK_CONTAINS(k.second_msg, "symrt_set_input_shape: context 10 of engine 'block' is in use by another thread");
    CHECK_CONTAINS(k.second_msg, "create one context per thread");
    CHECK_CONTAINS(err.msg, "symrt_enqueue: context 10 of engine 'block' is in use by another thread");
    /* the first call was not disturbed */
    CHECK_MSG(k.first_st == SYMC_OK, "%s", k.first_msg);
    CHECK(!memcmp(k.y, expected[1][4], 2 * 5 * D * sizeof(float)));
    /* and the context is free again */
    CHECK(symrt_get_tensor_shape(k.c, "y", dims, &rank, &err) == SYMC_OK && rank == 3 && dims[0] == 2 && dims[1] == 5);
    symrt_context_destroy(k.c);
}

/* ---- one context, two threads hammering it -------------------------------------- */

typedef struct hammer {
    symrt_context *c;
    atomic_int *start;
    int index, ok, in_use, other;
    char other_msg[SYMC_ERROR_MSG_CAP];
    float y[MAXB * MAXS * D];
} hammer;

static void *hammer_work(void *arg) {
    hammer *h = arg;
    symc_error err;
    int64_t dims[8];
    int32_t rank;
    atomic_fetch_add(h->start, 1);
    while (atomic_load(h->start) < 2) {
    }
    /* a refused call is far quicker than an enqueue: go on until this thread
     * also got calls through (bounded) */
    for (int i = 0; i < 2000000 && (i < 2000 || h->ok < 200); i++) {
        symc_status st;
        switch (i % 4) {
        case 0: st = symrt_set_input_shape(h->c, "x", (int64_t[]){3, 8, D}, 3, &err); break;
        case 1: st = symrt_set_tensor_address(h->c, "x", inputs[2][7], sizeof inputs[2][7], &err); break;
        case 2: st = symrt_set_tensor_address(h->c, "y", h->y, sizeof h->y, &err); break;
        default:
            st = (i / 4) % 2 ? symrt_get_tensor_shape(h->c, "y", dims, &rank, &err) : symrt_enqueue(h->c, NULL, &err);
        }
        if (st == SYMC_OK) h->ok++;
        else if (strstr(err.msg, "in use by another thread")) {
            h->in_use++;
            sched_yield();
        } else if (!h->other++) memcpy(h->other_msg, err.msg, sizeof err.msg);
    }
    return NULL;
}

static void test_hammer(symrt_engine *e) {
    symc_error err;
    symrt_context *c = NULL;
    CHECK(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK);
    if (!c) return;
    atomic_int start = 0;
    hammer h[2];
    pthread_t t[2];
    memset(h, 0, sizeof h);
    /* bound before the threads start, so whichever call wins, the next finds a complete binding */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){3, 8, D}, 3, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "x", inputs[2][7], sizeof inputs[2][7], &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "y", h[0].y, sizeof h[0].y, &err) == SYMC_OK);
    for (int i = 0; i < 2; i++) {
        h[i].c = c;
        h[i].start = &start;
        h[i].index = i;
        CHECK(pthread_create(&t[i], NULL, hammer_work, &h[i]) == 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    /* both threads bind the same shape and same-size buffers, so the only
     * error possible is the context being in use */
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(h[i].other == 0, "thread %d: %d unexpected errors, first: %s", i, h[i].other, h[i].other_msg);
        CHECK(h[i].ok > 0);
    }
    printf("two threads on one context: %d + %d calls ran, %d + %d refused as in use\n", h[0].ok, h[1].ok, h[0].in_use,
           h[1].in_use);
    /* whatever interleaving happened, the context still computes right */
    float y[3 * 8 * D];
    CHECK(run(c, 3, 8, inputs[2][7], y, &err) == SYMC_OK);
    CHECK(!memcmp(y, expected[2][7], sizeof y));
    symrt_context_destroy(c);
}

int main(void) {
    symrt_engine *e = make_engine();
    if (!e) return check_report("runtime_test_threads");
    test_contexts_per_thread(e);
    test_collision(e);
    test_hammer(e);
    symrt_engine_destroy(e);
    return check_report("runtime_test_threads");
}
