/* Build-time tuning of an engine's library steps on the present GPU.
 *
 * The engine is decoded and run as a real context would run it, at the
 * tuning point: every symbol at its opt value, inputs filled with random
 * floats (integer and bool inputs with zeros, so index inputs stay in
 * range), and the whole engine enqueued once so that intermediates hold
 * realistic values. Then, for each GEMM step, the cuBLASLt heuristic's
 * candidates (up to 8) are each timed in place through the normal GEMM path
 * with the algorithm forced (3 warm-ups, then the median of 10 runs timed
 * with events); a candidate that fails is skipped. For each CONV step
 * cudnnFindConvolutionForwardAlgorithmEx times cuDNN's algorithms itself.
 * The winners go into a copy of the steps (algo bytes and the sizes tuned
 * at), with the library versions, and the engine is encoded again. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda_internal.h"
#include "runtime/ref_kernels.h"

#define TUNE_CANDIDATES 8
#define TUNE_WARMUP 3
#define TUNE_RUNS 10

typedef struct tuner {
    rt_engine *e;
    rt_cuda *c;
    int64_t *slots;
    void **addr;
    CUdeviceptr *bufs; /* per tensor: our input/output buffers */
    rt_step *steps;    /* the mutable copy */
    uint8_t **algo;    /* per step: its new algo bytes */
    CUevent ev[2];
    void (*progress)(void *, const char *);
    void *progress_ctx;
} tuner;

static void say(tuner *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(tuner *t, const char *fmt, ...) {
    if (!t->progress) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    t->progress(t->progress_ctx, buf);
}

/* xorshift: reproducible data without touching the process's rand() */
static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static symc_status fill_random(tuner *t, uint32_t tensor, size_t bytes, uint64_t *seed, symc_error *err) {
    const rt_tensor *x = &t->e->tensors[tensor];
    uint8_t *h = calloc(bytes ? bytes : 1, 1);
    if (!h) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory making tuning data for '%s'", x->name);
    size_t n = bytes / (rt_ref_dtype_size(x->dtype) ? rt_ref_dtype_size(x->dtype) : 1);
    for (size_t i = 0; i < n; i++) {
        float v = (float)((double)(next_random(seed) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        switch (x->dtype) {
        case SYMC_F32: memcpy(h + 4 * i, &v, 4); break;
        case SYMC_F64: {
            double d = v;
            memcpy(h + 8 * i, &d, 8);
            break;
        }
        case SYMC_F16: {
            uint16_t b = rt_ref_f32_to_f16(v);
            memcpy(h + 2 * i, &b, 2);
            break;
        }
        case SYMC_BF16: {
            uint16_t b = rt_ref_f32_to_bf16(v);
            memcpy(h + 2 * i, &b, 2);
            break;
        }
        default: break; /* integers and bools stay 0: valid indices and shapes */
        }
    }
    symc_status st = bytes ? RT_CU(err, MemcpyHtoD, (t->bufs[tensor], h, bytes)) : SYMC_OK;
    free(h);
    return st;
}

static int cmp_float(const void *a, const void *b) {
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median time of one GEMM step with `algo` forced; < 0 when it fails. */
static float time_gemm(tuner *t, uint32_t step, const cublasLtMatmulAlgo_t *algo) {
    rt_cuda *c = t->c;
    c->force = (rt_cuda_force){step, algo};
    float times[TUNE_RUNS], ms = -1;
    symc_error e = {0};
    for (int i = 0; i < TUNE_WARMUP; i++)
        if (rt_gemm_run(c, step, t->slots, NULL, &e)) goto done;
    if (rt_cu.CtxSynchronize() != CUDA_SUCCESS) goto done;
    for (int i = 0; i < TUNE_RUNS; i++) {
        if (rt_cu.EventRecord(t->ev[0], NULL) != CUDA_SUCCESS || rt_gemm_run(c, step, t->slots, NULL, &e) ||
            rt_cu.EventRecord(t->ev[1], NULL) != CUDA_SUCCESS || rt_cu.EventSynchronize(t->ev[1]) != CUDA_SUCCESS ||
            rt_cu.EventElapsedTime(&times[i], t->ev[0], t->ev[1]) != CUDA_SUCCESS)
            goto done;
    }
    qsort(times, TUNE_RUNS, sizeof times[0], cmp_float);
    ms = times[TUNE_RUNS / 2];
done:
    c->force = (rt_cuda_force){0, NULL};
    return ms;
}

static symc_status tune_gemm(tuner *t, uint32_t i, symc_error *err) {
    rt_step *s = &t->steps[i];
    const char *name = rt_cuda_node_name(t->e, s);
    rt_gemm_shape sh;
    symc_status st = rt_gemm_shape_of(t->c, i, t->slots, &sh, err);
    if (st) return st;
    cublasLtMatmulAlgo_t cand[TUNE_CANDIDATES];
    int n = 0;
    if ((st = rt_gemm_candidates(t->c, i, t->slots, cand, TUNE_CANDIDATES, &n, err))) return st;
    int best = -1;
    float best_ms = 0, first_ms = -1;
    for (int k = 0; k < n; k++) {
        float ms = time_gemm(t, i, &cand[k]);
        if (k == 0) first_ms = ms;
        if (ms >= 0 && (best < 0 || ms < best_ms)) best = k, best_ms = ms;
    }
    if (best < 0) {
        say(t, "tuning gemm '%s' at m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
               ": %d candidates, none ran; the runtime heuristic will choose",
            name, sh.m, sh.n, sh.k, sh.batch, n);
        return SYMC_OK;
    }
    t->algo[i] = malloc(sizeof(cublasLtMatmulAlgo_t));
    if (!t->algo[i]) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
    memcpy(t->algo[i], &cand[best], sizeof cand[best]);
    s->algo = t->algo[i];
    s->algo_size = sizeof(cublasLtMatmulAlgo_t);
    s->tuned[0] = sh.m, s->tuned[1] = sh.n, s->tuned[2] = sh.k, s->tuned[3] = sh.batch;
    say(t, "tuning gemm '%s' at m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64
           ": %d candidates, best %.3f ms (heuristic's first %.3f ms)",
        name, sh.m, sh.n, sh.k, sh.batch, n, (double)best_ms, (double)first_ms);
    return SYMC_OK;
}

static symc_status tune_conv(tuner *t, uint32_t i, symc_error *err) {
    rt_step *s = &t->steps[i];
    int32_t algo;
    float ms;
    int n;
    symc_status st = rt_conv_find(t->c, i, t->slots, &algo, &ms, &n, err);
    if (st) return st;
    if (algo < 0) return SYMC_OK; /* an empty convolution at opt */
    const rt_tensor *x = &t->e->tensors[s->tensors[0]];
    t->algo[i] = malloc(sizeof algo);
    if (!t->algo[i]) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
    memcpy(t->algo[i], &algo, sizeof algo);
    s->algo = t->algo[i];
    s->algo_size = sizeof algo;
    s->tuned[0] = t->slots[x->dims[0]], s->tuned[1] = t->slots[x->dims[2]], s->tuned[2] = t->slots[x->dims[3]];
    s->tuned[3] = 0;
    say(t, "tuning conv '%s' at n=%" PRId64 " h=%" PRId64 " w=%" PRId64 ": %d algorithms, best %d at %.3f ms",
        rt_cuda_node_name(t->e, s), s->tuned[0], s->tuned[1], s->tuned[2], n, (int)algo, (double)ms);
    return SYMC_OK;
}

symc_status rt_cuda_tune(const uint8_t *bytes, size_t size, uint8_t **out, size_t *out_size,
                         void (*progress)(void *ctx, const char *msg), void *progress_ctx, symc_error *err) {
    if (!bytes || !out || !out_size) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_tune: NULL argument");
    *out = NULL;
    *out_size = 0;
    tuner t;
    memset(&t, 0, sizeof t);
    t.progress = progress;
    t.progress_ctx = progress_ctx;
    symc_status st = rt_engine_decode(bytes, size, &t.e, err);
    if (st) return st;
    rt_engine *e = t.e;
    int64_t *values = calloc(e->n_symbols + 1, sizeof *values);
    t.slots = calloc(e->num_slots + 1, sizeof *t.slots);
    t.addr = calloc(e->n_tensors + 1, sizeof *t.addr);
    t.bufs = calloc(e->n_tensors + 1, sizeof *t.bufs);
    t.steps = calloc(e->n_steps + 1, sizeof *t.steps);
    t.algo = calloc(e->n_steps + 1, sizeof *t.algo);
    if (!values || !t.slots || !t.addr || !t.bufs || !t.steps || !t.algo) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
        goto done;
    }
    if (e->n_steps) memcpy(t.steps, e->steps, e->n_steps * sizeof *t.steps);
    for (uint32_t i = 0; i < e->n_symbols; i++) values[i] = e->symbols[i].opt;
    if ((st = sym_program_eval(e->program, e->program_size, values, e->n_symbols, t.slots, e->num_slots, err))) {
        symc_error_prefix(err, "tuning: evaluating the shape program at the opt sizes");
        goto done;
    }
    if ((st = rt_cuda_create(e, NULL, &t.c, err))) goto done;
    if ((st = RT_CU(err, EventCreate, (&t.ev[0], CU_EVENT_DEFAULT)))) goto done;
    if ((st = RT_CU(err, EventCreate, (&t.ev[1], CU_EVENT_DEFAULT)))) goto done;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < e->n_tensors; i++) {
        if (!rt_engine_is_io(e, i) || e->tensors[i].constant != RT_NONE) continue;
        size_t n = rt_cuda_tensor_bytes(e, t.slots, i);
        if (n == SIZE_MAX) {
            st = symc_error_setf(err, SYMC_ERR_OVERFLOW, "tuning: tensor '%s' is too large", e->tensors[i].name);
            goto done;
        }
        if ((st = rt_cuda_alloc(t.c, n, &t.bufs[i], "a tuning buffer", err))) goto done;
        t.addr[i] = (void *)(uintptr_t)t.bufs[i];
        if ((st = fill_random(&t, i, n, &seed, err))) goto done;
    }
    /* one full run: checks the engine and gives intermediates real values */
    if ((st = rt_cuda_enqueue(t.c, t.slots, 1, t.addr, NULL, NULL, err))) {
        symc_error_prefix(err, "tuning: running the engine at the opt sizes");
        goto done;
    }
    if ((st = RT_CU(err, CtxSynchronize, ()))) goto done;
    int has_gemm = 0, has_conv = 0;
    for (uint32_t i = 0; i < e->n_steps && !st; i++) {
        if (e->steps[i].kind == RT_STEP_GEMM) has_gemm = 1, st = tune_gemm(&t, i, err);
        else if (e->steps[i].kind == RT_STEP_CONV) has_conv = 1, st = tune_conv(&t, i, err);
    }
    if (st) goto done;
    rt_engine copy = *e;
    copy.steps = t.steps;
    copy.owned = NULL;
    char lt_version[32], dnn_version[32];
    if (has_gemm) {
        rt_lt_version(lt_version, sizeof lt_version);
        copy.cublas_version = lt_version;
    }
    if (has_conv) {
        rt_dnn_version(dnn_version, sizeof dnn_version);
        copy.cudnn_version = dnn_version;
    }
    st = rt_engine_encode(&copy, out, out_size, err);
done:
    if (t.c) {
        rt_cu.CtxSynchronize();
        for (uint32_t i = 0; i < e->n_tensors; i++) rt_cuda_free(t.c, t.bufs[i]);
        if (t.ev[0]) rt_cu.EventDestroy(t.ev[0]);
        if (t.ev[1]) rt_cu.EventDestroy(t.ev[1]);
        rt_cuda_destroy(t.c);
    }
    if (t.algo)
        for (uint32_t i = 0; i < e->n_steps; i++) free(t.algo[i]);
    free(t.algo);
    free(t.steps);
    free(t.bufs);
    free(t.addr);
    free(t.slots);
    free(values);
    rt_engine_free(e);
    return st;
}
