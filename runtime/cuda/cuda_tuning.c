/* The CUDA backend's side of build-time tuning (runtime/cuda/cuda_tuning.h): a
 * session is an rt_cuda, as a context would create it, plus the point's
 * input and output buffers and two events.
 *
 * A point runs the engine through rt_cuda_enqueue on buffers of our own,
 * inputs filled by a xorshift generator (reproducible, and the process's
 * rand() untouched). A GEMM step is then run in place through the normal
 * GEMM path (rt_cuda_gemm_run, on the tensors the run bound) with the algorithm
 * forced through rt_cuda.force, which cuda_gemm.c honours for that step
 * only; the force is cleared before returning, so the rt_cuda is never left
 * in a state an enqueue would not expect. A CONV step likewise, through
 * rt_cuda_conv_run with a cuDNN algorithm id forced: the fused call with its
 * bias, activation and residual, as an enqueue runs it. Candidates come from
 * rt_cuda_gemm_candidates and rt_cuda_conv_candidates. Algorithms are copied into
 * local variables both ways: the caller's bytes carry no alignment. */
#include "runtime/cuda/cuda_tuning.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/backend.h"
#include "runtime/cuda/cuda_internal.h"
#include "symc/dtype.h"

#define CANDIDATES_MAX 16 /* what rt_cuda_gemm_candidates asks the heuristic for, at most */

struct rt_cuda_tuning {
    const rt_engine *e;
    rt_cuda *c;
    int64_t *slots; /* the bound point */
    void **addr;    /* per tensor: our input/output buffers at the bound point */
    CUdeviceptr *bufs;
    CUevent ev[2];
    /* the timed runs of the last candidate, captured into a graph on our own
     * stream: its step, reps and algorithm bytes say whether it can be reused */
    CUstream stream;
    int filled; /* the bound point's inputs hold their random data */
    CUgraphExec exec;
    uint32_t exec_step, exec_reps;
    uint8_t exec_algo[RT_ALGO_MAX];
};

static void drop_graph(rt_cuda_tuning *s) {
    if (s->exec) rt_cuda_cu.GraphExecDestroy(s->exec);
    s->exec = NULL;
}

/* the bound point's buffers, after the work that may still use them */
static void release_io(rt_cuda_tuning *s) {
    if (!s->c) return;
    rt_cuda_cu.CtxSynchronize();
    for (uint32_t i = 0; i < s->e->n_tensors; i++) {
        rt_cuda_free(s->c, s->bufs[i]);
        s->bufs[i] = 0;
        s->addr[i] = NULL;
    }
}

void rt_cuda_tuning_destroy(rt_cuda_tuning *s) {
    if (!s) return;
    if (s->c) {
        release_io(s);
        if (s->ev[0]) rt_cuda_cu.EventDestroy(s->ev[0]);
        if (s->ev[1]) rt_cuda_cu.EventDestroy(s->ev[1]);
        drop_graph(s);
        if (s->stream) rt_cuda_cu.StreamDestroy(s->stream);
        rt_cuda_destroy(s->c);
    }
    free(s->slots);
    free(s->addr);
    free(s->bufs);
    free(s);
}

symc_status rt_cuda_tuning_create(const rt_engine *e, rt_cuda_tuning **out, symc_error *err) {
    if (!out) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_tuning_create: NULL argument");
    *out = NULL;
    if (!e) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_tuning_create: NULL argument");
    rt_cuda_tuning *s = calloc(1, sizeof *s);
    if (s) {
        s->e = e;
        s->slots = calloc(e->num_slots + 1, sizeof *s->slots);
        s->addr = calloc(e->n_tensors + 1, sizeof *s->addr);
        s->bufs = calloc(e->n_tensors + 1, sizeof *s->bufs);
    }
    symc_status st = SYMC_OK;
    if (!s || !s->slots || !s->addr || !s->bufs) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory tuning");
    if (!st) st = rt_cuda_create(e, 0, NULL, &s->c, err);
    if (!st) rt_cuda_set_graphs(s->c, 0); /* forced algorithms change what runs, not the graph key */
    if (!st) st = RT_CU(err, EventCreate, (&s->ev[0], CU_EVENT_DEFAULT));
    if (!st) st = RT_CU(err, EventCreate, (&s->ev[1], CU_EVENT_DEFAULT));
    if (!st) st = RT_CU(err, StreamCreate, (&s->stream, CU_STREAM_NON_BLOCKING));
    if (st) {
        rt_cuda_tuning_destroy(s);
        return st;
    }
    *out = s;
    return SYMC_OK;
}

/* xorshift: reproducible data without touching the process's rand() */
static uint64_t next_random(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static symc_status fill_random(rt_cuda_tuning *s, uint32_t tensor, size_t bytes, uint64_t *seed, symc_error *err) {
    const rt_tensor *x = &s->e->tensors[tensor];
    uint8_t *h = calloc(bytes ? bytes : 1, 1);
    if (!h) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory making tuning data for '%s'", x->name);
    size_t n = bytes / (symc_dtype_size(x->dtype) ? symc_dtype_size(x->dtype) : 1);
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
            uint16_t b = symc_f32_to_f16(v);
            memcpy(h + 2 * i, &b, 2);
            break;
        }
        case SYMC_BF16: {
            uint16_t b = symc_f32_to_bf16(v);
            memcpy(h + 2 * i, &b, 2);
            break;
        }
        default: break; /* integers and bools stay 0: valid indices and shapes */
        }
    }
    symc_status st = bytes ? RT_CU(err, MemcpyHtoD, (s->bufs[tensor], h, bytes)) : SYMC_OK;
    free(h);
    return st;
}

symc_status rt_cuda_tuning_bind(rt_cuda_tuning *s, const int64_t *slots, symc_error *err) {
    const rt_engine *e = s->e;
    drop_graph(s); /* it holds the last point's pointers */
    release_io(s);
    s->filled = 0;
    if (e->num_slots) memcpy(s->slots, slots, e->num_slots * sizeof *s->slots);
    symc_status st;
    for (uint32_t i = 0; i < e->n_tensors; i++) {
        if (!rt_engine_is_io(e, i) || e->tensors[i].constant != RT_NONE) continue;
        size_t n = rt_cuda_tensor_bytes(e, s->slots, i);
        if (n == SIZE_MAX)
            return symc_error_setf(err, SYMC_ERR_OVERFLOW, "tensor '%s' is too large", e->tensors[i].name);
        if ((st = rt_cuda_alloc(s->c, n, &s->bufs[i], "a tuning buffer", err))) return st;
        s->addr[i] = (void *)(uintptr_t)s->bufs[i];
    }
    return rt_cuda_bind(s->c, s->slots, 1, s->addr, NULL, err);
}

/* Sizes known only after a node runs: a tuning run keeps the point's slots
 * after each producer (the library steps are timed at the sizes the tuner
 * chose, whatever the random data's counts), so steps after a producer may
 * read rows past its count: bad data they report is dropped below. */
static symc_status keep_slots(void *ctx, uint32_t k, int64_t count, const int64_t **slots, symc_error *err) {
    (void)k, (void)count, (void)err;
    *slots = ctx;
    return SYMC_OK;
}

symc_status rt_cuda_tuning_run(rt_cuda_tuning *s, uint64_t seed, symc_error *err) {
    const rt_engine *e = s->e;
    symc_status st;
    for (uint32_t i = 0; i < e->n_tensors && !s->filled; i++) {
        if (!s->bufs[i]) continue;
        if ((st = fill_random(s, i, rt_cuda_tensor_bytes(e, s->slots, i), &seed, err))) return st;
    }
    s->filled = 1;
    /* one full run: checks the engine and gives intermediates real values */
    rt_run_hook keep = {s->slots, keep_slots};
    if ((st = rt_cuda_enqueue(s->c, s->slots, 1, s->addr, NULL, NULL, e->n_produced ? &keep : NULL, err))) {
        symc_error_prefix(err, "running the engine");
        return st;
    }
    if ((st = RT_CU(err, CtxSynchronize, ()))) return st;
    symc_error ignored;
    if (e->n_produced) (void)rt_cuda_check_run(s->c, 1, &ignored); /* rows past a count: not the tuner's concern */
    return SYMC_OK;
}

static symc_status check_step(const rt_cuda_tuning *s, uint32_t step, symc_error *err) {
    if (step >= s->e->n_steps || (s->e->steps[step].kind != RT_STEP_GEMM && s->e->steps[step].kind != RT_STEP_CONV))
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "tuning: step %u is not a library step", step);
    return SYMC_OK;
}

symc_status rt_cuda_tuning_candidates(rt_cuda_tuning *s, uint32_t step, uint8_t *algos, int cap, int *n,
                                      uint32_t *algo_size, symc_error *err) {
    *n = 0;
    symc_status st = check_step(s, step, err);
    if (st || cap <= 0) return st;
    if (cap > CANDIDATES_MAX) cap = CANDIDATES_MAX;
    if (s->e->steps[step].kind == RT_STEP_CONV) {
        int32_t ids[CANDIDATES_MAX];
        *algo_size = RT_CONV_ALGO_SIZE;
        if ((st = rt_cuda_conv_candidates(s->c, step, s->slots, ids, cap, n, err))) return st;
        for (int i = 0; i < *n; i++) memcpy(algos + (size_t)i * RT_ALGO_MAX, &ids[i], sizeof ids[i]);
        return SYMC_OK;
    }
    cublasLtMatmulAlgo_t found[CANDIDATES_MAX];
    *algo_size = RT_GEMM_ALGO_SIZE;
    if ((st = rt_cuda_gemm_candidates(s->c, step, s->slots, found, cap, n, err))) return st;
    for (int i = 0; i < *n; i++) memcpy(algos + (size_t)i * RT_ALGO_MAX, &found[i], RT_GEMM_ALGO_SIZE);
    return SYMC_OK;
}

static symc_status run_forced(rt_cuda_tuning *s, uint32_t step, CUstream stream, symc_error *err) {
    return s->e->steps[step].kind == RT_STEP_CONV ? rt_cuda_conv_run(s->c, step, s->slots, stream, err)
                                                  : rt_cuda_gemm_run(s->c, step, s->slots, stream, err);
}

typedef struct reps_call {
    rt_cuda_tuning *s;
    uint32_t step, reps;
} reps_call;

static symc_status enqueue_reps(void *ctx, CUstream stream, symc_error *err) {
    const reps_call *k = ctx;
    symc_status st = SYMC_OK;
    for (uint32_t r = 0; r < k->reps && !st; r++) st = run_forced(k->s, k->step, stream, err);
    return st;
}

/* The graph of `reps` back-to-back runs of the step with the algorithm
 * forced (c->force set by the caller), captured on our stream. */
static symc_status capture_runs(rt_cuda_tuning *s, uint32_t step, const uint8_t *algo, uint32_t reps, symc_error *err) {
    size_t size = s->e->steps[step].kind == RT_STEP_CONV ? RT_CONV_ALGO_SIZE : RT_GEMM_ALGO_SIZE;
    if (s->exec && s->exec_step == step && s->exec_reps == reps && !memcmp(s->exec_algo, algo, size)) return SYMC_OK;
    drop_graph(s);
    reps_call call = {s, step, reps};
    CUgraph graph;
    symc_status st = rt_cuda_capture(s->stream, enqueue_reps, &call, &graph, err);
    if (st) return st;
    st = RT_CU(err, GraphInstantiate, (&s->exec, graph, 0));
    rt_cuda_cu.GraphDestroy(graph);
    if (st) return st;
    s->exec_step = step;
    s->exec_reps = reps;
    memcpy(s->exec_algo, algo, size);
    return SYMC_OK;
}

symc_status rt_cuda_tuning_step_run(rt_cuda_tuning *s, uint32_t step, const uint8_t *algo, uint32_t reps, float *ms,
                                    symc_error *err) {
    if (ms) *ms = 0;
    symc_status st = check_step(s, step, err);
    if (st) return st;
    int conv = s->e->steps[step].kind == RT_STEP_CONV;
    cublasLtMatmulAlgo_t forced;
    int32_t id;
    if (conv) memcpy(&id, algo, sizeof id);
    else memcpy(&forced, algo, sizeof forced);
    rt_cuda *c = s->c;
    c->force = (rt_cuda_force){step, conv ? (const void *)&id : (const void *)&forced};
    if (reps == 0 || !ms) {
        st = run_forced(s, step, NULL, err);
        if (!st) st = RT_CU(err, CtxSynchronize, ());
    } else if ((st = capture_runs(s, step, algo, reps, err)) == SYMC_OK) {
        /* the runs go back to back on the GPU: no host time between them */
        st = RT_CU(err, EventRecord, (s->ev[0], s->stream));
        if (!st) st = RT_CU(err, GraphLaunch, (s->exec, s->stream));
        if (!st) st = RT_CU(err, EventRecord, (s->ev[1], s->stream));
        if (!st) st = RT_CU(err, EventSynchronize, (s->ev[1]));
        if (!st) st = RT_CU(err, EventElapsedTime, (ms, s->ev[0], s->ev[1]));
        if (!st) *ms /= (float)reps;
    } else {
        /* a call that cannot be captured: timed as issued, host time between the events included */
        st = RT_CU(err, EventRecord, (s->ev[0], NULL));
        if (!st) st = run_forced(s, step, NULL, err);
        if (!st) st = RT_CU(err, EventRecord, (s->ev[1], NULL));
        if (!st) st = RT_CU(err, EventSynchronize, (s->ev[1]));
        if (!st) st = RT_CU(err, EventElapsedTime, (ms, s->ev[0], s->ev[1]));
    }
    c->force = (rt_cuda_force){0, NULL};
    return st;
}

symc_status rt_cuda_tuning_signature(rt_cuda_tuning *s, uint32_t step, uint8_t *buf, size_t cap, size_t *len,
                                     symc_error *err) {
    *len = 0;
    symc_status st = check_step(s, step, err);
    if (st) return st;
    return s->e->steps[step].kind == RT_STEP_CONV ? rt_cuda_conv_signature(s->e, step, s->slots, buf, cap, len, err)
                                                  : rt_cuda_gemm_signature(s->c, step, s->slots, buf, cap, len, err);
}

void rt_cuda_tuning_device(char *buf, size_t cap) {
    const rt_cu_device *d = NULL;
    if (!cap) return;
    if (rt_cuda_cu_enter(0, &d, NULL) != SYMC_OK || !d) snprintf(buf, cap, "no device");
    else snprintf(buf, cap, "%s sm_%u", d->name, d->sm);
}

void rt_cuda_tuning_versions(char *cublas, size_t cublas_cap, char *cudnn, size_t cudnn_cap) {
    if (cublas && cublas_cap) rt_cuda_lt_version(cublas, cublas_cap);
    if (cudnn && cudnn_cap) rt_cuda_dnn_version(cudnn, cudnn_cap);
}
