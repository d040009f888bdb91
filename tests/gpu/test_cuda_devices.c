/* Contexts on any visible GPU, and host I/O (symrt_context_create_on,
 * symrt_device_count, symrt_context_set_host_io, symrt_context_host_alloc,
 * symrt_context_warm), on a real GPU against the
 * reference backend:
 *  - every visible GPU runs a model of a GEMM, a bias, a softmax and a
 *    gather (a cuBLASLt call and generated kernels) in host I/O mode at its
 *    min, opt, max and random in-range shapes, results against the reference;
 *  - two contexts per GPU, each on its own thread, run at once at random
 *    shapes (host I/O runs on each context's own stream), every result
 *    checked; one shape run again and again replays its CUDA graph in host
 *    I/O mode;
 *  - refusals: a device past the count (naming it), a negative one, a stream
 *    in host I/O mode, profiling in host I/O mode, a host pointer once host
 *    I/O is off again, memory of GPU 0 given to a context on GPU 1 (two
 *    GPUs or more), a gather index out of range reported by the host I/O run
 *    itself, naming the node; the context runs correctly after each.
 * Without a GPU it checks the reference backend's side (one device, the
 * stream rule of host I/O) and the CUDA backend's one-line refusal, and
 * exits 0, so it also runs in CI. */
#include <math.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/cuda/cuda_backend.h"
#include "symc/symrt.h"
#include "tests/check.h"

enum { K = 16, N = 24, VOCAB = 10 };

/* y = softmax(x @ W + b, -1), g = gather(table, idx, axis 0) + 1
 * x: f32[B, S, 16], idx: i64[B, S]; B in [1, 8] opt 4, S in [1, 40] opt 16 */
static uint8_t *build(size_t *size) {
    symc_error err;
    symc_module *m = symc_module_create("devices", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 4, 8, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 16, 40, 1, &S, &err);
    float w[K * N], b[N], table[VOCAB * N], one = 1;
    for (int i = 0; i < K * N; i++) w[i] = (float)((i * 37) % 19) / 19.0f - 0.5f;
    for (int i = 0; i < N; i++) b[i] = (float)i / 24.0f;
    for (int i = 0; i < VOCAB * N; i++) table[i] = (float)((i * 13) % 11) - 5.0f;
    symc_tensor x, idx, W, bias, tab, k1, xw, xb, y, gt, g;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, K)}, &x, &err);
    symc_add_input(m, "idx", SYMC_I64, 2, (symc_dim[]){B, S}, &idx, &err);
    symc_add_constant(m, "W", SYMC_F32, 2, (int64_t[]){K, N}, w, sizeof w, &W, &err);
    symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){N}, b, sizeof b, &bias, &err);
    symc_add_constant(m, "table", SYMC_F32, 2, (int64_t[]){VOCAB, N}, table, sizeof table, &tab, &err);
    symc_add_constant(m, "one", SYMC_F32, 0, NULL, &one, sizeof one, &k1, &err);
    symc_attr last = symc_attr_int("axis", -1), axis0 = symc_attr_int("axis", 0);
    symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, W}, 2, NULL, 0, &xw, 1, &err);
    symc_add_node(m, "add", "bias", (symc_tensor[]){xw, bias}, 2, NULL, 0, &xb, 1, &err);
    symc_add_node(m, "softmax", "y", &xb, 1, &last, 1, &y, 1, &err);
    symc_add_node(m, "gather", "emb", (symc_tensor[]){tab, idx}, 2, &axis0, 1, &gt, 1, &err);
    symc_add_node(m, "add", "g", (symc_tensor[]){gt, k1}, 2, NULL, 0, &g, 1, &err);
    symc_mark_output(m, y, &err);
    symc_mark_output(m, g, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.gpu = 1;
    uint8_t *bytes = NULL;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    return bytes;
}

typedef struct io {
    int64_t B, S;
    float *x, *y, *g;
    int64_t *idx;
} io;

static void io_fill(io *a, int64_t B, int64_t S, unsigned seed, int bad_index) {
    a->B = B;
    a->S = S;
    size_t n = (size_t)(B * S);
    a->x = malloc(n * K * sizeof *a->x);
    a->idx = malloc(n * sizeof *a->idx);
    a->y = calloc(n * N, sizeof *a->y);
    a->g = calloc(n * N, sizeof *a->g);
    for (size_t i = 0; i < n * K; i++) a->x[i] = (float)((seed + i * 7919u) % 1000u) / 250.0f - 2.0f;
    for (size_t i = 0; i < n; i++) a->idx[i] = (int64_t)((seed + i * 31u) % (2 * VOCAB)) - VOCAB; /* [-10, 10) */
    if (bad_index) a->idx[n - 1] = VOCAB;
}

static void io_free(io *a) {
    free(a->x);
    free(a->idx);
    free(a->y);
    free(a->g);
}

static symc_status run(symrt_context *c, io *a, void *stream, symc_error *err) {
    size_t n = (size_t)(a->B * a->S);
    symc_status st = symrt_set_input_shape(c, "x", (int64_t[]){a->B, a->S, K}, 3, err);
    if (!st) st = symrt_set_input_shape(c, "idx", (int64_t[]){a->B, a->S}, 2, err);
    if (!st) st = symrt_set_tensor_address(c, "x", a->x, n * K * sizeof *a->x, err);
    if (!st) st = symrt_set_tensor_address(c, "idx", a->idx, n * sizeof *a->idx, err);
    if (!st) st = symrt_set_tensor_address(c, "y", a->y, n * N * sizeof *a->y, err);
    if (!st) st = symrt_set_tensor_address(c, "g", a->g, n * N * sizeof *a->g, err);
    if (!st) st = symrt_enqueue(c, stream, err);
    return st;
}

/* wrong elements of got against want: y within 1e-4 (TF32 GEMMs are off in an fp32 engine), g exact */
static int compare(const io *got, const io *want) {
    size_t n = (size_t)(got->B * got->S) * N;
    int wrong = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(fabsf(got->y[i] - want->y[i]) <= 1e-4f + 1e-4f * fabsf(want->y[i]))) wrong++;
        if (got->g[i] != want->g[i]) wrong++;
    }
    return wrong;
}

static const symrt_engine *engine;
static symrt_context *ref;

/* the reference's result for the same inputs */
static void expect(const io *a, io *want) {
    symc_error err;
    io_fill(want, a->B, a->S, 0, 0);
    memcpy(want->x, a->x, (size_t)(a->B * a->S) * K * sizeof *a->x);
    memcpy(want->idx, a->idx, (size_t)(a->B * a->S) * sizeof *a->idx);
    CHECK_MSG(run(ref, want, NULL, &err) == SYMC_OK, "reference: %s", err.msg);
}

/* a's inputs copied into buffers from symrt_context_host_alloc (aligned for every tensor type; NULL
 * freed as nothing), run there and checked against want; bytes 0 gives a pointer too. *pinned: what
 * the CUDA driver says of x's buffer (1: page-locked host memory; 0: not known to the driver) */
static void host_alloc_run(symrt_context *c, const io *a, const io *want, int *pinned, const char *where) {
    symc_error err;
    size_t n = (size_t)(a->B * a->S);
    io h = {.B = a->B, .S = a->S};
    void *p[5] = {0};
    size_t bytes[5] = {n * K * sizeof *a->x, n * sizeof *a->idx, n * N * sizeof *a->y, n * N * sizeof *a->g, 0};
    for (int k = 0; k < 5; k++) {
        CHECK_MSG(symrt_context_host_alloc(c, bytes[k], &p[k], &err) == SYMC_OK && p[k], "%s: %s", where, err.msg);
        CHECK_MSG(((uintptr_t)p[k] & 255) == 0, "%s: host_alloc gave %p, not 256-byte aligned", where, p[k]);
    }
    if (!p[0] || !p[1] || !p[2] || !p[3]) goto out;
    h.x = p[0], h.idx = p[1], h.y = p[2], h.g = p[3];
    memcpy(h.x, a->x, bytes[0]);
    memcpy(h.idx, a->idx, bytes[1]);
    memset(h.y, 0, bytes[2]);
    memset(h.g, 0, bytes[3]);
    CHECK_MSG(run(c, &h, NULL, &err) == SYMC_OK, "%s: %s", where, err.msg);
    int wrong = compare(&h, want);
    CHECK_MSG(wrong == 0, "%s: %d wrong in host_alloc buffers", where, wrong);
    *pinned = 0;
    /* cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE (2), ptr): CU_MEMORYTYPE_HOST (1) */
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    int (*attr)(void *, int, unsigned long long) = NULL;
    if (cu) *(void **)&attr = dlsym(cu, "cuPointerGetAttribute");
    unsigned type = 0;
    if (attr && attr(&type, 2, (unsigned long long)(uintptr_t)h.x) == 0 && type == 1) *pinned = 1;
    if (cu) dlclose(cu);
out:
    for (int k = 0; k < 5; k++) symrt_context_host_free(c, p[k]);
    symrt_context_host_free(c, NULL);
}

typedef struct worker {
    symrt_context *c;
    int device, index;
    io *cases, *want;
    int n_cases, rounds;
    int failures;
    char msg[SYMC_ERROR_MSG_CAP];
} worker;

static void *work(void *arg) {
    worker *w = arg;
    for (int r = 0; r < w->rounds; r++)
        for (int i = 0; i < w->n_cases; i++) {
            int k = (i + r * 3 + w->index) % w->n_cases;
            io *a = &w->cases[k];
            memset(a->y, 0, (size_t)(a->B * a->S) * N * sizeof *a->y);
            symc_error err;
            if (run(w->c, a, NULL, &err) != SYMC_OK) {
                if (!w->failures++) snprintf(w->msg, sizeof w->msg, "%s", err.msg);
                continue;
            }
            int wrong = compare(a, &w->want[k]);
            if (wrong && !w->failures++)
                snprintf(w->msg, sizeof w->msg, "shape (%lld, %lld): %d wrong elements", (long long)a->B,
                         (long long)a->S, wrong);
        }
    return NULL;
}

static void reference_side(void) {
    symc_error err;
    int32_t n = -1;
    CHECK(symrt_device_count(SYMRT_BACKEND_REF, &n, &err) == SYMC_OK && n == 1);
    symrt_context *c = NULL;
    CHECK(symrt_context_create_on(engine, SYMRT_BACKEND_REF, 1, NULL, &c, &err) == SYMC_ERR_INVALID_ARG && !c);
    CHECK_CONTAINS(err.msg, "device 0 only (device 1 given)");
    CHECK(symrt_context_create_on(engine, SYMRT_BACKEND_REF, -1, NULL, &c, &err) == SYMC_ERR_INVALID_ARG && !c);
    CHECK_CONTAINS(err.msg, "device -1");
    CHECK_MSG(symrt_context_create_on(engine, SYMRT_BACKEND_REF, 0, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    CHECK(symrt_context_set_host_io(c, 1, &err) == SYMC_OK);
    io a, want;
    io_fill(&a, 3, 7, 11, 0);
    int fake_stream;
    CHECK(run(c, &a, &fake_stream, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "pass NULL as the stream");
    CHECK_MSG(run(c, &a, NULL, &err) == SYMC_OK, "%s", err.msg);
    expect(&a, &want);
    CHECK(compare(&a, &want) == 0);
    int pinned = -1;
    host_alloc_run(c, &a, &want, &pinned, "reference backend");
    CHECK(pinned == 0);
    void *p = (void *)&p;
    CHECK(symrt_context_host_alloc(c, 8, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "NULL ptr");
    CHECK(symrt_context_host_alloc(NULL, 8, &p, &err) == SYMC_ERR_INVALID_ARG && !p);
    CHECK_CONTAINS(err.msg, "NULL context");
    CHECK(symrt_context_host_alloc(c, SIZE_MAX - 8, &p, &err) == SYMC_ERR_NOMEM && !p);
    CHECK_CONTAINS(err.msg, "out of host memory");
    io_free(&a);
    io_free(&want);
    symrt_context_destroy(c);
}

int main(void) {
    symc_error err;
    size_t size;
    uint8_t *bytes = build(&size);
    symrt_engine *e;
    CHECK_MSG(symrt_engine_load(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    engine = e;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &ref, &err) == SYMC_OK, "%s", err.msg);
    reference_side();

    int32_t count = 0;
    if (symrt_device_count(SYMRT_BACKEND_CUDA, &count, &err) != SYMC_OK) {
        CHECK(count == 0 && strchr(err.msg, '\n') == NULL && strlen(err.msg) > 10);
        symrt_context *c = NULL;
        CHECK(symrt_context_create_on(e, SYMRT_BACKEND_CUDA, 0, NULL, &c, &err) != SYMC_OK && !c);
        printf("no GPU: CUDA backend refused with: %s\n", err.msg);
        goto done;
    }
    printf("%d visible GPU%s\n", count, count == 1 ? "" : "s");
    CHECK(count >= 1);
    symrt_context *c = NULL;
    CHECK(symrt_context_create_on(e, SYMRT_BACKEND_CUDA, count, NULL, &c, &err) == SYMC_ERR_INVALID_ARG && !c);
    char want_msg[96];
    snprintf(want_msg, sizeof want_msg, "no GPU %d: this process sees %d", count, count);
    CHECK_CONTAINS(err.msg, want_msg);

    /* the shapes: min, opt, max and random ones; the reference's answers */
    enum { CASES = 10 };
    static const int64_t shapes[CASES][2] = {{1, 1},  {4, 16}, {8, 40}, {3, 7}, {8, 1},
                                             {1, 40}, {5, 33}, {2, 17}, {7, 9}, {6, 40}};
    io cases[CASES], want[CASES];
    for (int i = 0; i < CASES; i++) {
        io_fill(&cases[i], shapes[i][0], shapes[i][1], 100u + (unsigned)i, 0);
        expect(&cases[i], &want[i]);
    }

    /* each GPU alone, then the refusals */
    for (int d = 0; d < count; d++) {
        CHECK_MSG(symrt_context_create_on(e, SYMRT_BACKEND_CUDA, d, NULL, &c, &err) == SYMC_OK, "GPU %d: %s", d,
                  err.msg);
        if (!c) continue;
        CHECK_MSG(symrt_context_set_host_io(c, 1, &err) == SYMC_OK, "%s", err.msg);
        for (int round = 0; round < 3; round++) /* plain, captured, replayed */
            for (int i = 0; i < CASES; i++) {
                memset(cases[i].y, 0, (size_t)(cases[i].B * cases[i].S) * N * sizeof(float));
                CHECK_MSG(run(c, &cases[i], NULL, &err) == SYMC_OK, "GPU %d: %s", d, err.msg);
                int wrong = compare(&cases[i], &want[i]);
                CHECK_MSG(wrong == 0, "GPU %d shape (%lld, %lld) round %d: %d wrong", d, (long long)cases[i].B,
                          (long long)cases[i].S, round, wrong);
            }
        /* one shape again and again replays its graph (10 shapes in turn do not: the context keeps 8) */
        symrt_graph_stats g0, gs;
        CHECK(symrt_context_graph_stats(c, &g0, &err) == SYMC_OK);
        for (int k = 0; k < 4; k++) {
            memset(cases[1].y, 0, (size_t)(cases[1].B * cases[1].S) * N * sizeof(float));
            CHECK_MSG(run(c, &cases[1], NULL, &err) == SYMC_OK, "GPU %d: %s", d, err.msg);
            CHECK(compare(&cases[1], &want[1]) == 0);
        }
        CHECK(symrt_context_graph_stats(c, &gs, &err) == SYMC_OK);
        CHECK_MSG(gs.replays >= g0.replays + 2, "GPU %d: %llu replays of one shape run 4 times", d,
                  (unsigned long long)(gs.replays - g0.replays));
        printf("GPU %d: %d shapes x 3 rounds in host I/O mode match the reference (%llu graph replays)\n", d, CASES,
               (unsigned long long)gs.replays);
        int fake_stream;
        CHECK(run(c, &cases[0], &fake_stream, &err) == SYMC_ERR_INVALID_ARG);
        CHECK_CONTAINS(err.msg, "host I/O mode");
        uint32_t n_steps = 0;
        symrt_step_profile prof[64];
        CHECK(symrt_context_profile(c, NULL, prof, 64, &n_steps, &err) == SYMC_ERR_UNSUPPORTED);
        CHECK_CONTAINS(err.msg, "host I/O mode");
        /* bad data: reported by the run itself, naming the node */
        io bad;
        io_fill(&bad, 2, 5, 7, 1);
        CHECK(run(c, &bad, NULL, &err) == SYMC_ERR_RANGE);
        CHECK_CONTAINS(err.msg, "node 'emb'");
        io_free(&bad);
        CHECK_MSG(run(c, &cases[3], NULL, &err) == SYMC_OK, "after bad data: %s", err.msg);
        CHECK(compare(&cases[3], &want[3]) == 0);
        /* host I/O off: the host pointers are refused again */
        CHECK(symrt_context_set_host_io(c, 0, &err) == SYMC_OK);
        CHECK(run(c, &cases[3], NULL, &err) == SYMC_ERR_INVALID_ARG);
        CHECK_CONTAINS(err.msg, "not device memory");
        CHECK(symrt_context_set_host_io(c, 1, &err) == SYMC_OK);
        CHECK_MSG(run(c, &cases[4], NULL, &err) == SYMC_OK, "%s", err.msg);
        CHECK(compare(&cases[4], &want[4]) == 0);
        /* inputs and outputs in the context's page-locked host memory */
        int pinned = -1;
        char where[32];
        snprintf(where, sizeof where, "GPU %d", d);
        host_alloc_run(c, &cases[6], &want[6], &pinned, where);
        CHECK_MSG(pinned == 1, "GPU %d: symrt_context_host_alloc's memory is not page-locked", d);
        symrt_context_destroy(c);
        /* a warm-up (symrt_context_warm): the build's tuned points run; afterwards no shapes and no
         * addresses, host I/O still off and graphs still on, and every shape right */
        c = NULL;
        CHECK_MSG(symrt_context_create_on(e, SYMRT_BACKEND_CUDA, d, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
        if (!c) continue;
        uint32_t warmed = 0;
        CHECK_MSG(symrt_context_warm(c, &warmed, &err) == SYMC_OK, "GPU %d warm: %s", d, err.msg);
        CHECK_MSG(warmed >= 1, "GPU %d: the warm-up ran no point", d);
        CHECK(symrt_enqueue(c, NULL, &err) != SYMC_OK);               /* no shapes */
        CHECK(run(c, &cases[2], NULL, &err) == SYMC_ERR_INVALID_ARG); /* host pointers: host I/O is still off */
        CHECK_CONTAINS(err.msg, "not device memory");
        CHECK_MSG(symrt_context_set_host_io(c, 1, &err) == SYMC_OK, "%s", err.msg);
        for (int round = 0; round < 2; round++)
            for (int i = 0; i < CASES; i++) {
                memset(cases[i].y, 0, (size_t)(cases[i].B * cases[i].S) * N * sizeof(float));
                CHECK_MSG(run(c, &cases[i], NULL, &err) == SYMC_OK, "GPU %d after warm: %s", d, err.msg);
                CHECK_MSG(compare(&cases[i], &want[i]) == 0, "GPU %d after warm: shape %d wrong", d, i);
            }
        for (int k = 0; k < 3; k++) CHECK(run(c, &cases[1], NULL, &err) == SYMC_OK);
        CHECK(symrt_context_graph_stats(c, &gs, &err) == SYMC_OK);
        CHECK_MSG(gs.replays >= 1, "GPU %d: no graph replay after the warm-up (graphs left off?)", d);
        printf("GPU %d: warm-up ran %u points; %d shapes x 2 rounds after it match the reference\n", d, warmed, CASES);
        symrt_context_destroy(c);
    }

    /* memory of GPU 0 given to a context on GPU 1 */
    if (count >= 2) {
        const rt_cuda_driver_api *drv = rt_cuda_driver(&err);
        CHECK_MSG(drv != NULL, "%s", err.msg);
        uint64_t dx = 0, di = 0, dy = 0, dg = 0;
        size_t n = 3 * 7;
        CHECK(drv && drv->mem_alloc(&dx, n * K * 4) == 0 && drv->mem_alloc(&di, n * 8) == 0 &&
              drv->mem_alloc(&dy, n * N * 4) == 0 && drv->mem_alloc(&dg, n * N * 4) == 0);
        CHECK_MSG(symrt_context_create_on(e, SYMRT_BACKEND_CUDA, 1, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
        if (c && drv) {
            symrt_set_input_shape(c, "x", (int64_t[]){3, 7, K}, 3, &err);
            symrt_set_input_shape(c, "idx", (int64_t[]){3, 7}, 2, &err);
            symrt_set_tensor_address(c, "x", (void *)(uintptr_t)dx, n * K * 4, &err);
            symrt_set_tensor_address(c, "idx", (void *)(uintptr_t)di, n * 8, &err);
            symrt_set_tensor_address(c, "y", (void *)(uintptr_t)dy, n * N * 4, &err);
            symrt_set_tensor_address(c, "g", (void *)(uintptr_t)dg, n * N * 4, &err);
            CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
            CHECK_CONTAINS(err.msg, "is memory of GPU 0; this context runs on GPU 1");
            printf("GPU 0 memory on GPU 1: %s\n", err.msg);
            symrt_context_destroy(c);
        }
        if (drv) {
            drv->mem_free(dx);
            drv->mem_free(di);
            drv->mem_free(dy);
            drv->mem_free(dg);
        }
    }

    /* two contexts per GPU, each on its own thread, at once */
    {
        enum { PER = 2 };
        int nw = count * PER;
        worker *ws = calloc((size_t)nw, sizeof *ws);
        pthread_t *th = calloc((size_t)nw, sizeof *th);
        io(*own)[CASES] = calloc((size_t)nw, sizeof *own);
        for (int w = 0; w < nw; w++) {
            ws[w].device = w / PER;
            ws[w].index = w;
            ws[w].cases = own[w];
            ws[w].want = want;
            ws[w].n_cases = CASES;
            ws[w].rounds = 6;
            for (int i = 0; i < CASES; i++) {
                io_fill(&own[w][i], shapes[i][0], shapes[i][1], 100u + (unsigned)i, 0);
            }
            CHECK_MSG(symrt_context_create_on(e, SYMRT_BACKEND_CUDA, ws[w].device, NULL, &ws[w].c, &err) == SYMC_OK,
                      "%s", err.msg);
            CHECK_MSG(ws[w].c && symrt_context_set_host_io(ws[w].c, 1, &err) == SYMC_OK, "%s", err.msg);
        }
        for (int w = 0; w < nw; w++)
            if (ws[w].c) pthread_create(&th[w], NULL, work, &ws[w]);
        int failed = 0;
        for (int w = 0; w < nw; w++) {
            if (!ws[w].c) continue;
            pthread_join(th[w], NULL);
            CHECK_MSG(ws[w].failures == 0, "thread %d on GPU %d: %d failures, first: %s", w, ws[w].device,
                      ws[w].failures, ws[w].msg);
            failed += ws[w].failures;
            symrt_context_destroy(ws[w].c);
            for (int i = 0; i < CASES; i++) io_free(&own[w][i]);
        }
        printf("%d threads (%d per GPU) x %d runs in host I/O mode: %d failures\n", nw, PER, 6 * CASES, failed);
        free(own);
        free(th);
        free(ws);
    }
    for (int i = 0; i < CASES; i++) {
        io_free(&cases[i]);
        io_free(&want[i]);
    }
done:
    symrt_context_destroy(ref);
    symrt_engine_destroy(e);
    free(bytes);
    return check_report("test_cuda_devices");
}
