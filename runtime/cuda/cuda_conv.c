/* CONV steps on cuDNN's legacy convolution API: ONNX Conv, NCHW, in f32 or
 * in f16/bf16 storage (x, w, bias and y all of one dtype).
 *
 * The node's attributes (strides, pads [top, left, bottom, right],
 * dilations, group; absent = ONNX defaults, as the reference kernel reads
 * them) become a 2-D cross-correlation descriptor with a group count.
 * cuDNN pads symmetrically, so asymmetric pads are refused (codegen does not
 * emit them). Math follows the step's precision: FP32 forbids TF32
 * (CUDNN_FMA_MATH), TF32 allows it, FP16/BF16 allow down-conversion.
 * Half storage computes in fp32 (the descriptor's compute type; cuDNN's
 * PSEUDO_HALF configuration) with tensor-core math.
 *
 * Bias with ReLU is one fused cudnnConvolutionBiasActivationForward, with a
 * residual z (the step's fifth tensor: an add the fuse pass claimed between
 * the bias and the ReLU) as its alpha2 * z term; if the heuristic's
 * algorithm cannot fuse, IMPLICIT_PRECOMP_GEMM (which always can) is tried,
 * then the separate calls (forward, AddTensor z, AddTensor bias,
 * ActivationForward). A tuned algorithm that cannot fuse goes straight to
 * the separate calls: that is how the tuner timed it. Bias alone is
 * cudnnConvolutionForward followed by cudnnAddTensor (z too), valid with
 * every algorithm.
 *
 * Descriptors and the algorithm are cached per step and shape: the tuned id
 * of the nearest entry for N, H and W (rt_cuda_tune_order, runtime/cuda/tuned_pick.h)
 * whose workspace fits, else the first answer of
 * cudnnGetConvolutionForwardAlgorithm_v7 that succeeds with a workspace
 * under the cap. The build-time tuner lists the heuristic's algorithms
 * (rt_cuda_conv_candidates) and times each in this very call with the algorithm
 * forced (rt_cuda.force), fused epilogue and residual included. The cuDNN
 * workspace is per context and grow-only. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_internal.h"
#include "runtime/cuda/tuned_pick.h"

_Static_assert(sizeof(int32_t) == RT_CONV_ALGO_SIZE, "a tuned cuDNN choice is an int32 id");

#define CONV_CACHE 8
#define CONV_WORKSPACE_CAP RT_CUDA_CONV_WORKSPACE_CAP /* largest workspace an algorithm may ask for */

typedef struct conv_key {
    int32_t n, c, h, w, o, kh, kw, ho, wo;
} conv_key;

typedef struct conv_entry {
    int used;
    conv_key key;
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t act;
    cudnnConvolutionFwdAlgo_t algo;
    size_t ws;
    int split;       /* the fused bias+ReLU call was not supported: forward, AddTensor, ActivationForward */
    int from_tuning; /* algo is a build-time tuning choice: timed as it runs, split or not */
} conv_entry;

/* The handle and workspace belong to the context's first state (rt_cuda
 * owner); a region's state borrows them (h a copy of the owner's handle,
 * ws through c->owner->conv) and keeps its own per-step cache, since its
 * step indices are its graph's. */
struct rt_conv_state {
    cudnnHandle_t h;
    int borrowed;   /* h is the owner's: not destroyed here */
    CUdeviceptr ws; /* the owner's is the one used */
    size_t ws_size;
    conv_entry *cache; /* CONV_CACHE per step */
    uint32_t *next;
};

typedef struct conv_problem {
    int64_t strides[2], pads[4], dil[2], group;
    uint32_t x, w, bias, y, z; /* z: a residual added before the bias and activation, RT_NONE if none */
    conv_key key;
    cudnnDataType_t dt; /* of every operand */
    int empty;
} conv_problem;

/* ---- attributes ------------------------------------------------------------------ */

static const symc_attr *find_attr(const rt_node *n, const char *name) {
    for (uint32_t i = 0; i < n->n_attrs; i++)
        if (n->attrs[i].name && !strcmp(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

static symc_status attr_ints(const rt_node *n, const int64_t *slots, const char *name, uint32_t count,
                             const int64_t *dflt, int64_t *out, symc_error *err) {
    const symc_attr *a = find_attr(n, name);
    if (!a) {
        memcpy(out, dflt, count * sizeof *out);
        return SYMC_OK;
    }
    if ((a->kind != SYMC_ATTR_INTS && a->kind != SYMC_ATTR_DIMS) || a->n != count)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "node '%s' (conv2d): attribute '%s' must be %u integers", n->name,
                               name, count);
    for (uint32_t i = 0; i < count; i++)
        out[i] = a->kind == SYMC_ATTR_INTS ? a->ints[i] : a->dims[i] == RT_NONE ? -1 : slots[a->dims[i]];
    return SYMC_OK;
}

static int fits_int(int64_t v) { return v >= 0 && v <= INT32_MAX; }

/* Needs the engine only (no GPU): rt_cuda_conv_sizes checks it on the CPU. */
static symc_status plan(const rt_engine *e, uint32_t step, const int64_t *slots, conv_problem *p, symc_error *err) {
    const rt_step *s = &e->steps[step];
    const rt_node *node = &e->nodes[s->node];
    const char *name = rt_cuda_node_name(e, s);
    memset(p, 0, sizeof *p);
    p->x = s->tensors[0];
    p->w = s->tensors[1];
    p->bias = s->tensors[2];
    p->y = s->tensors[3];
    p->z = s->n_tensors > 4 ? s->tensors[4] : RT_NONE;
    if (p->x == RT_NONE || p->w == RT_NONE || p->y == RT_NONE)
        return symc_error_setf(err, SYMC_ERR_FORMAT, "node '%s': a CONV step without x, w or y", name);
    if (p->z != RT_NONE) { /* the residual: y's dtype and shape */
        const rt_tensor *Z = &e->tensors[p->z], *Yt = &e->tensors[p->y];
        int same = Z->dtype == Yt->dtype && Z->rank == Yt->rank;
        for (int32_t d = 0; same && d < Z->rank; d++) same = slots[Z->dims[d]] == slots[Yt->dims[d]];
        if (!same)
            return symc_error_setf(err, SYMC_ERR_FORMAT,
                                   "node '%s': the residual '%s' of a CONV step differs from its output '%s' in dtype "
                                   "or shape",
                                   name, Z->name, Yt->name);
    }
    const rt_tensor *X = &e->tensors[p->x], *W = &e->tensors[p->w], *Y = &e->tensors[p->y];
    symc_dtype dt = X->dtype;
    p->dt = dt == SYMC_F16 ? CUDNN_DATA_HALF : dt == SYMC_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
    if ((dt != SYMC_F32 && dt != SYMC_F16 && dt != SYMC_BF16) || W->dtype != dt || Y->dtype != dt ||
        (p->bias != RT_NONE && e->tensors[p->bias].dtype != dt))
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "node '%s': convolution on %s tensors (weights %s, output %s) is not supported by the "
                               "CUDA backend (f32, f16 or bf16, one dtype for all operands)",
                               name, symc_dtype_name(X->dtype), symc_dtype_name(W->dtype), symc_dtype_name(Y->dtype));
    if (X->rank != 4 || W->rank != 4 || Y->rank != 4)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "node '%s': the CUDA backend runs 2-D (NCHW) convolutions only", name);
    /* every operand's size in bytes fits int64, so no product of its dims overflows */
    const uint32_t operands[4] = {p->x, p->w, p->y, p->bias};
    for (int i = 0; i < 4; i++) {
        int64_t bytes;
        if (operands[i] != RT_NONE && !rt_tensor_bytes(e, slots, operands[i], &bytes)) {
            symc_status st = rt_tensor_overflow(err, e, slots, operands[i], "tensor");
            symc_error_prefix(err, "node '%s' (CONV step)", name);
            return st;
        }
    }
    static const int64_t ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
    symc_status st;
    if ((st = attr_ints(node, slots, "strides", 2, ones, p->strides, err))) return st;
    if ((st = attr_ints(node, slots, "pads", 4, zeros, p->pads, err))) return st;
    if ((st = attr_ints(node, slots, "dilations", 2, ones, p->dil, err))) return st;
    p->group = 1;
    const symc_attr *g = find_attr(node, "group");
    if (g) {
        if (g->kind != SYMC_ATTR_INT)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "node '%s' (conv2d): attribute 'group' must be an integer",
                                   name);
        p->group = g->i;
    }
    if (p->pads[0] != p->pads[2] || p->pads[1] != p->pads[3])
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "node '%s': asymmetric pads [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                               "] are not supported by cuDNN",
                               name, p->pads[0], p->pads[1], p->pads[2], p->pads[3]);
    int64_t v[12] = {slots[X->dims[0]], slots[X->dims[1]], slots[X->dims[2]], slots[X->dims[3]],
                     slots[W->dims[0]], slots[W->dims[2]], slots[W->dims[3]], slots[Y->dims[2]],
                     slots[Y->dims[3]], p->group,          p->strides[0],     p->pads[0]};
    for (int i = 0; i < 12; i++)
        if (!fits_int(v[i]))
            return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "node '%s': a convolution size does not fit cuDNN's int",
                                   name);
    for (int i = 0; i < 2; i++)
        if (!fits_int(p->strides[i]) || !fits_int(p->dil[i]) || !fits_int(p->pads[i]) || p->strides[i] < 1 ||
            p->dil[i] < 1)
            return symc_error_setf(err, SYMC_ERR_FORMAT, "node '%s': bad strides, dilations or pads", name);
    int64_t w_in; /* w's input channels times group: a product of fitting sizes, checked anyway */
    if (p->group < 1 || v[1] % p->group || v[4] % p->group ||
        __builtin_mul_overflow(slots[W->dims[1]], p->group, &w_in) || w_in != v[1] || slots[Y->dims[1]] != v[4] ||
        slots[Y->dims[0]] != v[0])
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "node '%s': x, w and y shapes disagree (group %" PRId64 ")",
                               name, p->group);
    p->key = (conv_key){(int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3], (int32_t)v[4],
                        (int32_t)v[5], (int32_t)v[6], (int32_t)v[7], (int32_t)v[8]};
    p->empty = !v[0] || !v[4] || !v[7] || !v[8];
    if (p->bias != RT_NONE) {
        int64_t bn = 0, dims[IR_MAX_RANK];
        const rt_tensor *B = &e->tensors[p->bias];
        for (int d = 0; d < B->rank; d++) dims[d] = slots[B->dims[d]];
        if (!rt_checked_product(dims, B->rank, 1, &bn) || bn != v[4])
            return symc_error_setf(err, SYMC_ERR_INTERNAL, "node '%s': the bias does not have O elements", name);
    }
    return SYMC_OK;
}

symc_status rt_cuda_conv_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4],
                               symc_error *err) {
    if (step >= e->n_steps || e->steps[step].kind != RT_STEP_CONV)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "step %u is not a CONV step", step);
    conv_problem p;
    symc_status st = plan(e, step, slots, &p, err);
    if (st) return st;
    sizes[0] = p.key.n, sizes[1] = p.key.h, sizes[2] = p.key.w, sizes[3] = 0;
    return SYMC_OK;
}

/* What a CONV step computes at these slots, as bytes: equal bytes are the
 * same cuDNN problem (sizes, attributes, dtype, precision, fused epilogue
 * and residual), whichever step or model asks. The tuner times each once. */
symc_status rt_cuda_conv_signature(const rt_engine *e, uint32_t step, const int64_t *slots, uint8_t *buf, size_t cap,
                                   size_t *len, symc_error *err) {
    conv_problem p;
    symc_status st = plan(e, step, slots, &p, err);
    if (st) return st;
    struct {
        conv_key key;
        int64_t strides[2], pads[4], dil[2], group;
        int32_t dt;
        uint8_t kind, precision, epilogue, bias, z, pad[3];
    } sig;
    memset(&sig, 0, sizeof sig);
    const rt_step *s = &e->steps[step];
    sig.key = p.key;
    memcpy(sig.strides, p.strides, sizeof sig.strides);
    memcpy(sig.pads, p.pads, sizeof sig.pads);
    memcpy(sig.dil, p.dil, sizeof sig.dil);
    sig.group = p.group;
    sig.dt = (int32_t)p.dt;
    sig.kind = RT_STEP_CONV;
    sig.precision = s->precision;
    sig.epilogue = s->epilogue;
    sig.bias = p.bias != RT_NONE;
    sig.z = p.z != RT_NONE;
    if (cap < sizeof sig)
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "a convolution signature needs %zu bytes", sizeof sig);
    memcpy(buf, &sig, sizeof sig);
    *len = sizeof sig;
    return SYMC_OK;
}

/* ---- state --------------------------------------------------------------------- */

symc_status rt_cuda_conv_create(rt_cuda *c, symc_error *err) {
    symc_status st = rt_cuda_dnn_load(err);
    if (st) return st;
    /* a region's state: the handle is made once, in the owner, whichever region needs it first */
    if (c->owner != c && !c->owner->conv && (st = rt_cuda_conv_create(c->owner, err))) return st;
    rt_conv_state *g = calloc(1, sizeof *g);
    if (!g) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating the cuDNN state");
    c->conv = g;
    g->cache = calloc((size_t)c->e->n_steps * CONV_CACHE + 1, sizeof *g->cache);
    g->next = calloc((size_t)c->e->n_steps + 1, sizeof *g->next);
    if (!g->cache || !g->next) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating the cuDNN state");
    if (c->owner != c) {
        g->h = c->owner->conv->h;
        g->borrowed = 1;
        return SYMC_OK;
    }
    return RT_DNN(err, Create, (&g->h));
}

static void entry_clear(conv_entry *en) {
    if (en->x) rt_cuda_dnn.DestroyTensorDescriptor(en->x);
    if (en->y) rt_cuda_dnn.DestroyTensorDescriptor(en->y);
    if (en->bias) rt_cuda_dnn.DestroyTensorDescriptor(en->bias);
    if (en->w) rt_cuda_dnn.DestroyFilterDescriptor(en->w);
    if (en->conv) rt_cuda_dnn.DestroyConvolutionDescriptor(en->conv);
    if (en->act) rt_cuda_dnn.DestroyActivationDescriptor(en->act);
    memset(en, 0, sizeof *en);
}

void rt_cuda_conv_destroy(rt_cuda *c) {
    rt_conv_state *g = c->conv;
    if (!g) return;
    if (g->cache)
        for (size_t i = 0; i < (size_t)c->e->n_steps * CONV_CACHE; i++) entry_clear(&g->cache[i]);
    if (g->h && !g->borrowed) rt_cuda_dnn.Destroy(g->h);
    rt_cuda_free(c, g->ws); /* 0 in a borrowing state */
    free(g->cache);
    free(g->next);
    free(g);
    c->conv = NULL;
}

static cudnnMathType_t math_of(uint8_t precision, cudnnDataType_t dt) {
    if (dt != CUDNN_DATA_FLOAT) return CUDNN_TENSOR_OP_MATH; /* half storage */
    switch ((rt_precision)precision) {
    case RT_PREC_TF32: return CUDNN_DEFAULT_MATH;
    case RT_PREC_FP16:
    case RT_PREC_BF16: return CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    case RT_PREC_FP32: break;
    }
    return CUDNN_FMA_MATH; /* true fp32: no TF32 */
}

static symc_status make_descs(const rt_step *s, const conv_problem *p, conv_entry *en, symc_error *err) {
    const conv_key *k = &p->key;
    symc_status st;
    if ((st = RT_DNN(err, CreateTensorDescriptor, (&en->x)))) return st;
    if ((st = RT_DNN(err, CreateTensorDescriptor, (&en->y)))) return st;
    if ((st = RT_DNN(err, CreateFilterDescriptor, (&en->w)))) return st;
    if ((st = RT_DNN(err, CreateConvolutionDescriptor, (&en->conv)))) return st;
    if ((st = RT_DNN(err, SetTensor4dDescriptor, (en->x, CUDNN_TENSOR_NCHW, p->dt, k->n, k->c, k->h, k->w)))) return st;
    if ((st = RT_DNN(err, SetFilter4dDescriptor,
                     (en->w, p->dt, CUDNN_TENSOR_NCHW, k->o, k->c / (int)p->group, k->kh, k->kw))))
        return st;
    if ((st = RT_DNN(err, SetConvolution2dDescriptor,
                     (en->conv, (int)p->pads[0], (int)p->pads[1], (int)p->strides[0], (int)p->strides[1],
                      (int)p->dil[0], (int)p->dil[1], CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT))))
        return st;
    if ((st = RT_DNN(err, SetConvolutionGroupCount, (en->conv, (int)p->group)))) return st;
    if ((st = RT_DNN(err, SetConvolutionMathType, (en->conv, math_of(s->precision, p->dt))))) return st;
    int on, oc, oh, ow;
    if ((st = RT_DNN(err, GetConvolution2dForwardOutputDim, (en->conv, en->x, en->w, &on, &oc, &oh, &ow)))) return st;
    if (on != k->n || oc != k->o || oh != k->ho || ow != k->wo)
        return symc_error_setf(err, SYMC_ERR_INTERNAL,
                               "cuDNN computes an output of [%d, %d, %d, %d], the engine says [%d, %d, %d, %d]", on, oc,
                               oh, ow, k->n, k->o, k->ho, k->wo);
    if ((st = RT_DNN(err, SetTensor4dDescriptor, (en->y, CUDNN_TENSOR_NCHW, p->dt, k->n, k->o, k->ho, k->wo))))
        return st;
    if (p->bias != RT_NONE) {
        if ((st = RT_DNN(err, CreateTensorDescriptor, (&en->bias)))) return st;
        if ((st = RT_DNN(err, SetTensor4dDescriptor, (en->bias, CUDNN_TENSOR_NCHW, p->dt, 1, k->o, 1, 1)))) return st;
    }
    if (s->epilogue == RT_EPI_RELU) {
        if ((st = RT_DNN(err, CreateActivationDescriptor, (&en->act)))) return st;
        if ((st = RT_DNN(err, SetActivationDescriptor, (en->act, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0))))
            return st;
    }
    return SYMC_OK;
}

static symc_status choose_algo(rt_conv_state *g, const rt_step *s, const conv_problem *p, conv_entry *en,
                               symc_error *err) {
    const int64_t sizes[4] = {p->key.n, p->key.h, p->key.w, 0};
    int order[RT_TUNE_ORDER_MAX];
    uint32_t nt = rt_cuda_tune_order(s->tuned, s->n_tuned, sizes, RT_CONV_ALGO_SIZE, order, RT_TUNE_ORDER_MAX);
    for (uint32_t i = 0; i < nt; i++) {
        int32_t id;
        memcpy(&id, s->tuned[order[i]].algo, sizeof id);
        size_t ws = 0;
        if (id >= 0 && id < CUDNN_CONVOLUTION_FWD_ALGO_COUNT &&
            rt_cuda_dnn.GetConvolutionForwardWorkspaceSize(
                g->h, en->x, en->w, en->conv, en->y, (cudnnConvolutionFwdAlgo_t)id, &ws) == CUDNN_STATUS_SUCCESS &&
            ws <= CONV_WORKSPACE_CAP) {
            en->algo = (cudnnConvolutionFwdAlgo_t)id;
            en->ws = ws;
            en->from_tuning = 1;
            return SYMC_OK;
        }
    }
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    symc_status st = RT_DNN(err, GetConvolutionForwardAlgorithm_v7,
                            (g->h, en->x, en->w, en->conv, en->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf));
    if (st) return st;
    for (int i = 0; i < n; i++)
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= CONV_WORKSPACE_CAP) {
            en->algo = perf[i].algo;
            en->ws = perf[i].memory;
            return SYMC_OK;
        }
    return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "cuDNN has no forward algorithm for this convolution");
}

static symc_status find_entry(rt_cuda *c, uint32_t step, const conv_problem *p, conv_entry **out, symc_error *err) {
    rt_conv_state *g = c->conv;
    const rt_step *s = &c->e->steps[step];
    conv_entry *row = &g->cache[(size_t)step * CONV_CACHE];
    for (int i = 0; i < CONV_CACHE; i++)
        if (row[i].used && !memcmp(&row[i].key, &p->key, sizeof p->key)) {
            *out = &row[i];
            return SYMC_OK;
        }
    conv_entry *en = &row[g->next[step]];
    g->next[step] = (g->next[step] + 1) % CONV_CACHE;
    entry_clear(en);
    en->key = p->key;
    symc_status st = make_descs(s, p, en, err);
    if (!st) st = choose_algo(g, s, p, en, err);
    if (st) {
        entry_clear(en);
        return st;
    }
    en->used = 1;
    *out = en;
    return SYMC_OK;
}

static symc_status ensure_ws(rt_cuda *c, size_t need, symc_error *err) {
    rt_conv_state *g = c->owner->conv; /* the workspace is the owner's */
    if (need <= g->ws_size) return SYMC_OK;
    symc_status st;
    if (g->ws) {
        /* queued convolutions may still use the old one */
        if ((st = rt_cuda_quiesce(c, err))) return st;
        rt_cuda_free(c, g->ws);
        g->ws = 0;
        g->ws_size = 0;
    }
    if ((st = rt_cuda_alloc(c, need, &g->ws, "the cuDNN workspace", err))) return st;
    g->ws_size = need;
    c->owner->memory_gen++; /* captured graphs (of every region) that used the old workspace are stale */
    return SYMC_OK;
}

static void *dp(CUdeviceptr p) { return (void *)(uintptr_t)p; }

symc_status rt_cuda_conv_run(rt_cuda *c, uint32_t step, const int64_t *slots, CUstream stream, symc_error *err) {
    const rt_step *s = &c->e->steps[step];
    rt_conv_state *g = c->conv;
    const char *name = rt_cuda_node_name(c->e, s);
    conv_problem p;
    symc_status st = plan(c->e, step, slots, &p, err);
    if (st) return st;
    if (p.empty) return SYMC_OK;
    if (s->epilogue == RT_EPI_GELU || (s->epilogue == RT_EPI_RELU && p.bias == RT_NONE))
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "node '%s': cuDNN fuses only bias+ReLU into a convolution (this step asks for %s)", name,
                               s->epilogue == RT_EPI_GELU ? "GELU" : "ReLU without a bias");
    conv_entry *en;
    if ((st = find_entry(c, step, &p, &en, err))) goto fail;
    /* the tuner's forced algorithm, else the entry's */
    int forced = c->force.algo && c->force.step == step;
    cudnnConvolutionFwdAlgo_t algo = en->algo;
    size_t ws = en->ws;
    if (forced) {
        int32_t id;
        memcpy(&id, c->force.algo, sizeof id);
        if (id < 0 || id >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT) {
            st = symc_error_setf(err, SYMC_ERR_INVALID_ARG, "cuDNN algorithm %d does not exist", (int)id);
            goto fail;
        }
        algo = (cudnnConvolutionFwdAlgo_t)id;
        if ((st = RT_DNN(err, GetConvolutionForwardWorkspaceSize, (g->h, en->x, en->w, en->conv, en->y, algo, &ws))))
            goto fail;
    }
    if ((st = ensure_ws(c, ws, err))) goto fail;
    if ((st = RT_DNN(err, SetStream, (g->h, stream)))) goto fail;
    const float one = 1.0f, zero = 0.0f;
    void *x = dp(c->ptr[p.x]), *w = dp(c->ptr[p.w]), *y = dp(c->ptr[p.y]);
    void *z = p.z != RT_NONE ? dp(c->ptr[p.z]) : NULL; /* never y's memory: both live at this step */
    if (s->epilogue == RT_EPI_RELU) {
        void *b = dp(c->ptr[p.bias]);
        /* y = relu(conv(x) + 1 * z + bias) */
        cudnnStatus_t r = CUDNN_STATUS_NOT_SUPPORTED;
        int split = !forced && en->split;
        if (!split)
            r = rt_cuda_dnn.ConvolutionBiasActivationForward(g->h, &one, en->x, x, en->w, w, en->conv, algo,
                                                             dp(c->owner->conv->ws), ws, z ? &one : &zero, en->y,
                                                             z ? z : y, en->bias, b, en->act, en->y, y);
        if (r == CUDNN_STATUS_NOT_SUPPORTED && !split && !forced && !en->from_tuning &&
            algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) {
            /* the heuristic's choice does not fuse: the one algorithm documented to fuse
             * every activation (a tuned choice was timed as it runs, split or not) */
            size_t pws = 0;
            if ((st = RT_DNN(
                     err, GetConvolutionForwardWorkspaceSize,
                     (g->h, en->x, en->w, en->conv, en->y, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, &pws))))
                goto fail;
            if ((st = ensure_ws(c, pws, err))) goto fail;
            en->algo = algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
            en->ws = ws = pws;
            r = rt_cuda_dnn.ConvolutionBiasActivationForward(g->h, &one, en->x, x, en->w, w, en->conv, algo,
                                                             dp(c->owner->conv->ws), ws, z ? &one : &zero, en->y,
                                                             z ? z : y, en->bias, b, en->act, en->y, y);
        }
        if (r == CUDNN_STATUS_SUCCESS) return SYMC_OK;
        if (r != CUDNN_STATUS_NOT_SUPPORTED) {
            st = rt_cuda_dnn_fail(r, "cudnnConvolutionBiasActivationForward(bias + ReLU)", __FILE__, __LINE__, err);
            goto fail;
        }
        /* no fused kernel for this configuration (some half-storage
         * shapes): the three calls, each valid with every algorithm */
        if (!forced) en->split = 1;
        if ((st = RT_DNN(
                 err, ConvolutionForward,
                 (g->h, &one, en->x, x, en->w, w, en->conv, algo, dp(c->owner->conv->ws), ws, &zero, en->y, y))))
            goto fail;
        if (z && (st = RT_DNN(err, AddTensor, (g->h, &one, en->y, z, &one, en->y, y)))) goto fail;
        if ((st = RT_DNN(err, AddTensor, (g->h, &one, en->bias, b, &one, en->y, y)))) goto fail;
        if ((st = RT_DNN(err, ActivationForward, (g->h, en->act, &one, en->y, y, &zero, en->y, y)))) goto fail;
        return SYMC_OK;
    }
    if ((st = RT_DNN(err, ConvolutionForward,
                     (g->h, &one, en->x, x, en->w, w, en->conv, algo, dp(c->owner->conv->ws), ws, &zero, en->y, y))))
        goto fail;
    if (z && (st = RT_DNN(err, AddTensor, (g->h, &one, en->y, z, &one, en->y, y)))) goto fail;
    if (p.bias != RT_NONE && (st = RT_DNN(err, AddTensor, (g->h, &one, en->bias, dp(c->ptr[p.bias]), &one, en->y, y))))
        goto fail;
    return SYMC_OK;
fail:
    symc_error_prefix(err, "node '%s': convolution x=[%d, %d, %d, %d] w=[%d, %d, %d, %d] group %" PRId64, name, p.key.n,
                      p.key.c, p.key.h, p.key.w, p.key.o, p.group ? p.key.c / (int)p.group : 0, p.key.kh, p.key.kw,
                      p.group);
    return st;
}

symc_status rt_cuda_conv_candidates(rt_cuda *c, uint32_t step, const int64_t *slots, int32_t *ids, int cap, int *n,
                                    symc_error *err) {
    const rt_step *s = &c->e->steps[step];
    rt_conv_state *g = c->conv;
    *n = 0;
    conv_problem p;
    symc_status st = plan(c->e, step, slots, &p, err);
    if (st || p.empty) return st;
    conv_entry *en;
    if ((st = find_entry(c, step, &p, &en, err))) goto fail;
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    if ((st = RT_DNN(err, GetConvolutionForwardAlgorithm_v7,
                     (g->h, en->x, en->w, en->conv, en->y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf))))
        goto fail;
    for (int i = 0; i < got && *n < cap; i++) /* ranked by the heuristic */
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= CONV_WORKSPACE_CAP)
            ids[(*n)++] = (int32_t)perf[i].algo;
    return SYMC_OK;
fail:
    symc_error_prefix(err, "node '%s': listing convolution algorithms", rt_cuda_node_name(c->e, s));
    return st;
}

void rt_cuda_conv_algo_describe(const uint8_t *algo, uint32_t size, char *buf, size_t cap) {
    /* cudnnConvolutionFwdAlgo_t, stable across cuDNN 8 and 9 */
    static const char *const names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
                                        "WINOGRAD",      "WINOGRAD_NONFUSED"};
    int32_t id = -1;
    if (!cap) return;
    if (!algo || size != sizeof id) {
        snprintf(buf, cap, "cuDNN choice of %u bytes (not an algorithm id)", size);
        return;
    }
    memcpy(&id, algo, sizeof id);
    if (id >= 0 && id < (int32_t)(sizeof names / sizeof names[0]))
        snprintf(buf, cap, "cuDNN algo %d (%s)", (int)id, names[id]);
    else snprintf(buf, cap, "cuDNN algo %d (unknown to this runtime)", (int)id);
}

void rt_cuda_conv_describe(rt_cuda *c, uint32_t step, const int64_t *slots, char *buf, size_t cap) {
    const rt_step *s = &c->e->steps[step];
    conv_problem p;
    symc_error err = {0};
    if (!cap) return;
    buf[0] = '\0';
    if (plan(c->e, step, slots, &p, &err)) {
        snprintf(buf, cap, "cuDNN convolution (%s)", err.msg);
        return;
    }
    const conv_entry *en = NULL;
    const conv_entry *row = c->conv ? &c->conv->cache[(size_t)step * CONV_CACHE] : NULL;
    for (int i = 0; row && i < CONV_CACHE; i++)
        if (row[i].used && !memcmp(&row[i].key, &p.key, sizeof p.key)) en = &row[i];
    char algo[64] = "algo not chosen yet";
    if (en) {
        int32_t id = (int32_t)en->algo;
        rt_cuda_conv_algo_describe((const uint8_t *)&id, sizeof id, algo, sizeof algo);
    }
    const char *epi = s->epilogue == RT_EPI_RELU ? (en && en->split ? ", bias+ReLU in 3 calls" : ", fused bias+ReLU")
        : p.bias != RT_NONE                      ? ", + AddTensor bias"
                                                 : "";
    const char *res = p.z == RT_NONE                       ? ""
        : s->epilogue == RT_EPI_RELU && !(en && en->split) ? " + residual (z)"
                                                           : " + AddTensor residual";
    snprintf(buf, cap, "%s x=[%d,%d,%d,%d] w=[%d,%d,%d,%d] g%" PRId64 " s%" PRId64 ", %s%s%s",
             symc_dtype_name(c->e->tensors[p.x].dtype), p.key.n, p.key.c, p.key.h, p.key.w, p.key.o,
             p.group ? p.key.c / (int)p.group : 0, p.key.kh, p.key.kw, p.group, p.strides[0], algo, epi, res);
}
