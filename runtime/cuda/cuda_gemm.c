/* GEMM steps on cuBLASLt: ONNX MatMul and Gemm on row-major data.
 *
 * cuBLASLt is column-major; a row-major [r, c] matrix is the column-major
 * [c, r] matrix with the same bytes, so D = op(A) op(B) is computed as
 * D^T = op(B)^T op(A)^T: the operands swap and m, n swap, and the
 * transposes stay as the step says (codegen folded them into trans_a /
 * trans_b; alpha and beta come from the step too). Gemm's bias over the
 * columns of D is then cuBLASLt's bias over the rows of D^T, so the BIAS /
 * RELU_BIAS / GELU_BIAS epilogues apply as they are.
 *
 * MatMul broadcasts batch dims like NumPy, with 1-D operands promoted to
 * [1, K] / [K, 1]. When each operand's batch is either the whole output batch
 * (contiguous) or entirely broadcast, one strided-batched call does it
 * (stride 0 for a broadcast operand); when b is broadcast and a is a plain
 * contiguous stack, a's batch folds into M for one large GEMM, much faster.
 * Any other mix (e.g. [2,1] x [1,3] batches) loops over the output batch with
 * pointer offsets. K == 0 still goes through cuBLASLt, as a K = 1 product of
 * zeros, so beta*C, the bias and the epilogue come out right without a
 * kernel of our own.
 *
 * A GEMM step whose node is a conv2d is a 1x1 convolution with stride 1, no
 * padding and one group (codegen/cuda_target.c chooses it): on NCHW data it
 * is one GEMM per image, Y[b] (Cout x HW) = W (Cout x Cin) X[b] (Cin x HW),
 * one strided-batched call with W broadcast (stride 0), the residual as C
 * with beta 1. Its bias is per output channel, a ROW of the row-major D,
 * while cuBLASLt's bias epilogue runs over the rows of its column-major D
 * (our columns, HW). So with a bias the call is first asked in
 * CUBLASLT_ORDER_ROW layouts without the swap (cuBLASLt's rows are then the
 * channels); when the heuristic has no algorithm for that (cuBLASLt may not
 * pair row order with a bias epilogue), the call runs in the usual column
 * order without its epilogue, and a second call with K = 1 adds the bias
 * exactly and applies the activation: D = ones(HW x 1) bias(1 x Cout) + D
 * (C = D, beta 1, one fp32 sum and one rounding per element).
 *
 * Descriptors and the algorithm are cached per problem key (sizes, strides,
 * alignment, dtype) and shared by the steps of one class (the same precision,
 * epilogue and tuned choices: runtime/cuda/setup_pool.h), so a transformer's
 * layers make each setup once at a new shape, and steady-state enqueues only
 * set the bias pointer and call cublasLtMatmul. The algorithm is the step's tuned entry nearest
 * the sizes (rt_cuda_tune_order, runtime/cuda/tuned_pick.h: the tuned points cover the
 * declared box) whose alignment the pointers meet and which
 * cublasLtMatmulAlgoCheck accepts, the next nearest if not; the heuristic's
 * first answer for this key when none does. Either way it is
 * chosen once per key and cached; nothing is allocated on the hot path. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_internal.h"
#include "runtime/cuda/setup_pool.h"
#include "runtime/cuda/tuned_pick.h"

_Static_assert(sizeof(cublasLtMatmulAlgo_t) == RT_GEMM_ALGO_SIZE, "engine.h's RT_GEMM_ALGO_SIZE is stale");

#define GEMM_WORKSPACE RT_CUDA_GEMM_WORKSPACE
#define GEMM_CACHE 8 /* setups remembered per step */
#define GEMM_MAX_BATCH_RANK 8

typedef struct gemm_key {
    int64_t m, n, k, batch;               /* cuBLASLt's view: m = rows of D^T (our N), n = our M */
    int64_t lda, ldb, ldd;                /* leading dims of cuBLASLt's A (our b), B (our a), C/D */
    int64_t stride_a, stride_b, stride_d; /* batch strides in elements (0 = broadcast) */
    int32_t op_a, op_b;                   /* cublasOperation_t of cuBLASLt's A and B */
    int32_t bias, has_c;
    int32_t conv;   /* a 1x1 convolution: the bias is per row of our D (see the top) */
    uint32_t align; /* bytes every pointer, ld and stride is a multiple of (<= 256) */
} gemm_key;

/* What a setup is for: the call's key, the problem's batch (the tuned pick reads it; a loop's key
 * says 1), the step's class (rt_cuda_setup_classes) and dtype. */
typedef struct gemm_pkey {
    gemm_key key;
    int64_t batch;
    uint32_t cls;
    int32_t dt;
} gemm_pkey;

typedef struct gemm_entry {
    rt_cuda_setup base; /* first: the pool's header */
    gemm_pkey pk;       /* pk.key: the call's key */
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, ld;
    cublasLtMatmulAlgo_t algo;
    size_t ws;       /* workspace the algorithm needs */
    int from_tuning; /* the algorithm is a build-time tuning choice (else the heuristic's first) */
    /* a 1x1 convolution with a bias: row = 1 when the call runs in CUBLASLT_ORDER_ROW with the bias
     * epilogue; split = 1 when it runs in column order and the bias pass (bop, bla, blb, balgo; D's
     * layout ld) adds the bias and applies the activation */
    int row, split;
    cublasLtMatmulDesc_t bop;
    cublasLtMatrixLayout_t bla, blb;
    cublasLtMatmulAlgo_t balgo;
    size_t bws;
} gemm_entry;

/* The handle and the buffers belong to the context's first state (rt_cuda
 * owner); a region's state borrows them (h a copy of the owner's handle,
 * the buffers through c->owner->gemm) and keeps its own per-step cache,
 * since its step indices are its graph's. */
struct rt_gemm_state {
    cublasLtHandle_t h;
    int borrowed;      /* h is the owner's: not destroyed here; the buffers below stay 0 */
    CUdeviceptr ws;    /* GEMM_WORKSPACE bytes, allocated at first use */
    CUdeviceptr zeros; /* for K == 0 */
    size_t zeros_size;
    CUdeviceptr ones[3]; /* f32, f16, bf16 ones: the A of a 1x1 convolution's bias pass */
    size_t ones_n[3];
    rt_cuda_setups setups; /* gemm_entry, GEMM_CACHE per step, shared within a class */
    uint32_t *cls;         /* per step: its class */
};

/* The problem a step solves at these slots, in row-major terms, and how its
 * batch is walked. */
typedef struct gemm_problem {
    symc_dtype dt;
    size_t esize;
    int64_t m, n, k, batch; /* after folding */
    int ta, tb;
    int64_t stride_a, stride_b, stride_d;
    int loop; /* 1: one call per output batch (mixed broadcast) */
    int conv; /* 1: a 1x1 convolution (a = w, b = x, the bias per row of D; see the top) */
    int nb;
    int64_t out_dims[GEMM_MAX_BATCH_RANK], a_str[GEMM_MAX_BATCH_RANK], b_str[GEMM_MAX_BATCH_RANK];
    uint32_t ta_t, tb_t, tc_t, tbias_t, td_t; /* tensors */
} gemm_problem;

static int64_t dim(const rt_engine *e, const int64_t *slots, uint32_t t, int d) { return slots[e->tensors[t].dims[d]]; }

static symc_status shape_err(const rt_engine *e, const rt_step *s, symc_status code, const char *what,
                             symc_error *err) {
    return symc_error_setf(err, code, "node '%s' (GEMM step): %s", rt_cuda_node_name(e, s), what);
}

/* Elements of tensor t: 1 and *n, or 0 when the count (in bytes too) does
 * not fit RT_MAX_BYTES. */
static int numel(const rt_engine *e, const int64_t *slots, uint32_t t, int64_t *n) {
    int64_t bytes;
    if (!rt_tensor_bytes(e, slots, t, &bytes)) return 0;
    int64_t dims[IR_MAX_RANK];
    for (int d = 0; d < e->tensors[t].rank; d++) dims[d] = dim(e, slots, t, d);
    return rt_checked_product(dims, e->tensors[t].rank, 1, n);
}

static symc_status too_big(const rt_engine *e, const rt_step *s, const int64_t *slots, uint32_t t, symc_error *err) {
    symc_status st = rt_tensor_overflow(err, e, slots, t, "tensor");
    symc_error_prefix(err, "node '%s' (GEMM step)", rt_cuda_node_name(e, s));
    return st;
}

static symc_status extent_overflow(const rt_engine *e, const rt_step *s, int64_t m, int64_t n, int64_t k,
                                   symc_error *err) {
    return symc_error_setf(err, SYMC_ERR_OVERFLOW,
                           "node '%s' (GEMM step): M=%" PRId64 ", N=%" PRId64 ", K=%" PRId64
                           " over its batch dims: an operand's extent does not fit in 64 bits",
                           rt_cuda_node_name(e, s), m, n, k);
}

/* ---- 1x1 convolutions ------------------------------------------------------------- */

/* Whether the conv2d node's attribute `name` is absent or `count` values all equal to `want`. */
static int conv_attr_is(const rt_node *n, const int64_t *slots, const char *name, uint32_t count, int64_t want) {
    for (uint32_t i = 0; i < n->n_attrs; i++) {
        const symc_attr *a = &n->attrs[i];
        if (!a->name || strcmp(a->name, name)) continue;
        if (a->kind == SYMC_ATTR_INT) return count == 1 && a->i == want;
        if ((a->kind != SYMC_ATTR_INTS && a->kind != SYMC_ATTR_DIMS) || a->n != count) return 0;
        for (uint32_t k = 0; k < count; k++) {
            int64_t v = a->kind == SYMC_ATTR_INTS ? a->ints[k] : a->dims[k] == RT_NONE ? -1 : slots[a->dims[k]];
            if (v != want) return 0;
        }
        return 1;
    }
    return 1;
}

/* A GEMM step of a conv2d node (see the top): w [M, K, 1, 1], x [batch, K, H, W], y [batch, M, H, W];
 * M = Cout, K = Cin, N = H * W. Anything else (a kernel larger than 1x1, strides, pads, groups) is
 * refused: codegen keeps those convolutions on cuDNN. */
static symc_status plan_conv(const rt_engine *e, const rt_step *s, const int64_t *slots, gemm_problem *p,
                             symc_error *err) {
    const rt_node *node = &e->nodes[s->node];
    const rt_tensor *A = &e->tensors[p->ta_t], *B = &e->tensors[p->tb_t], *D = &e->tensors[p->td_t];
    if (A->rank != 4 || B->rank != 4 || D->rank != 4)
        return shape_err(e, s, SYMC_ERR_FORMAT, "a convolution as a GEMM needs 4-D w, x and y", err);
    if (!conv_attr_is(node, slots, "strides", 2, 1) || !conv_attr_is(node, slots, "pads", 4, 0) ||
        !conv_attr_is(node, slots, "group", 1, 1) || dim(e, slots, p->ta_t, 2) != 1 || dim(e, slots, p->ta_t, 3) != 1)
        return shape_err(e, s, SYMC_ERR_FORMAT,
                         "a convolution runs as a GEMM only with a 1x1 kernel, stride 1, no padding and one group "
                         "(this engine's step asks for another: rebuild it)",
                         err);
    int64_t count;
    if (!numel(e, slots, p->ta_t, &count)) return too_big(e, s, slots, p->ta_t, err);
    if (!numel(e, slots, p->tb_t, &count)) return too_big(e, s, slots, p->tb_t, err);
    if (!numel(e, slots, p->td_t, &count)) return too_big(e, s, slots, p->td_t, err);
    int64_t m = dim(e, slots, p->ta_t, 0), k = dim(e, slots, p->ta_t, 1), batch = dim(e, slots, p->tb_t, 0);
    int64_t h = dim(e, slots, p->tb_t, 2), w = dim(e, slots, p->tb_t, 3);
    if (dim(e, slots, p->tb_t, 1) != k || dim(e, slots, p->td_t, 0) != batch || dim(e, slots, p->td_t, 1) != m ||
        dim(e, slots, p->td_t, 2) != h || dim(e, slots, p->td_t, 3) != w)
        return shape_err(e, s, SYMC_ERR_INTERNAL, "x, w and y shapes of the 1x1 convolution disagree", err);
    int64_t n, mn, kn;
    /* products of dims of x and y, whose byte sizes fit; checked anyway, as a dim may be 0 */
    if (__builtin_mul_overflow(h, w, &n) || __builtin_mul_overflow(m, n, &mn) || __builtin_mul_overflow(k, n, &kn))
        return extent_overflow(e, s, m, n, k, err);
    if (p->tc_t != RT_NONE) { /* the residual: y's shape */
        const rt_tensor *C = &e->tensors[p->tc_t];
        int same = C->rank == 4;
        for (int d = 0; same && d < 4; d++) same = dim(e, slots, p->tc_t, d) == dim(e, slots, p->td_t, d);
        if (!same) return shape_err(e, s, SYMC_ERR_FORMAT, "the residual of a 1x1 convolution is not y's shape", err);
    }
    if (p->tbias_t != RT_NONE) {
        int64_t biasn;
        if (!numel(e, slots, p->tbias_t, &biasn)) return too_big(e, s, slots, p->tbias_t, err);
        if (biasn != m) return shape_err(e, s, SYMC_ERR_INTERNAL, "the bias does not have Cout elements", err);
    }
    if (batch > INT32_MAX)
        return shape_err(e, s, SYMC_ERR_UNSUPPORTED, "a batch of more than 2^31 - 1 images for cuBLASLt", err);
    p->conv = 1;
    p->m = m;
    p->n = n;
    p->k = k;
    p->batch = batch;
    p->nb = 1;
    p->out_dims[0] = batch;
    if (batch > 1) {
        p->stride_a = 0; /* w: one matrix for every image */
        p->stride_b = kn;
        p->stride_d = mn;
    }
    return SYMC_OK;
}

/* Needs the engine only (no GPU): rt_cuda_gemm_sizes serves `symc inspect`. */
static symc_status plan(const rt_engine *e, uint32_t step, const int64_t *slots, gemm_problem *p, symc_error *err) {
    const rt_step *s = &e->steps[step];
    memset(p, 0, sizeof *p);
    p->ta_t = s->tensors[0];
    p->tb_t = s->tensors[1];
    p->tc_t = s->tensors[2];
    p->tbias_t = s->tensors[3];
    p->td_t = s->tensors[4];
    if (p->ta_t == RT_NONE || p->tb_t == RT_NONE || p->td_t == RT_NONE)
        return shape_err(e, s, SYMC_ERR_FORMAT, "the step lacks a, b or its output", err);
    const rt_tensor *A = &e->tensors[p->ta_t], *B = &e->tensors[p->tb_t], *D = &e->tensors[p->td_t];
    p->dt = D->dtype;
    if (p->dt != SYMC_F32 && p->dt != SYMC_F64 && p->dt != SYMC_F16 && p->dt != SYMC_BF16)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "node '%s': GEMM on %s tensors is not supported by the CUDA backend (f32, f64, f16 and "
                               "bf16 are)",
                               rt_cuda_node_name(e, s), symc_dtype_name(p->dt));
    if (A->dtype != p->dt || B->dtype != p->dt || (p->tc_t != RT_NONE && e->tensors[p->tc_t].dtype != p->dt) ||
        (p->tbias_t != RT_NONE && e->tensors[p->tbias_t].dtype != p->dt))
        return shape_err(e, s, SYMC_ERR_FORMAT, "operands of different dtypes", err);
    p->esize = symc_dtype_size(p->dt);
    if (e->nodes[s->node].op == IR_OP_CONV2D) return plan_conv(e, s, slots, p, err);
    int ra = A->rank, rb = B->rank;
    if (ra < 1 || rb < 1) return shape_err(e, s, SYMC_ERR_FORMAT, "a scalar operand", err);
    int ta = ra >= 2 && s->trans_a, tb = rb >= 2 && s->trans_b;
    int64_t m, k, kb, n;
    if (ra == 1) m = 1, k = dim(e, slots, p->ta_t, 0);
    else {
        int64_t r = dim(e, slots, p->ta_t, ra - 2), cc = dim(e, slots, p->ta_t, ra - 1);
        m = ta ? cc : r;
        k = ta ? r : cc;
    }
    if (rb == 1) n = 1, kb = dim(e, slots, p->tb_t, 0);
    else {
        int64_t r = dim(e, slots, p->tb_t, rb - 2), cc = dim(e, slots, p->tb_t, rb - 1);
        kb = tb ? cc : r;
        n = tb ? r : cc;
    }
    /* each operand's extent in bytes fits, so every offset into it does */
    int64_t count, dn;
    if (!numel(e, slots, p->ta_t, &count)) return too_big(e, s, slots, p->ta_t, err);
    if (!numel(e, slots, p->tb_t, &count)) return too_big(e, s, slots, p->tb_t, err);
    if (!numel(e, slots, p->td_t, &dn)) return too_big(e, s, slots, p->td_t, err);
    if (k != kb) {
        char msg[128];
        snprintf(msg, sizeof msg, "inner dims differ (%" PRId64 " and %" PRId64 ")", k, kb);
        return shape_err(e, s, SYMC_ERR_INTERNAL, msg, err);
    }
    /* batch dims, right-aligned, NumPy broadcasting */
    int na = ra > 2 ? ra - 2 : 0, nbb = rb > 2 ? rb - 2 : 0;
    int nb = na > nbb ? na : nbb;
    if (nb > GEMM_MAX_BATCH_RANK) return shape_err(e, s, SYMC_ERR_UNSUPPORTED, "more than 8 batch dims", err);
    if (e->nodes[s->node].op == IR_OP_GEMM && nb)
        return shape_err(e, s, SYMC_ERR_FORMAT, "Gemm operands must be 2-D", err);
    /* The output batch, each operand's batch count, M*N, M*K and K*N are
     * products of dims of D, A or B, so they fit when those tensors' element
     * counts do, unless another dim of the tensor is 0 (an empty tensor with
     * huge dims): checked, since strides and offsets are computed from them. */
    int64_t batch = 1, a_count = 1, b_count = 1, mn = 0, mk = 0, kn = 0, want = 0;
    int over = 0;
    for (int j = 0; j < nb; j++) {
        int ja = j - (nb - na), jb = j - (nb - nbb);
        int64_t da = ja >= 0 ? dim(e, slots, p->ta_t, ja) : 1, db = jb >= 0 ? dim(e, slots, p->tb_t, jb) : 1;
        if (da != db && da != 1 && db != 1)
            return shape_err(e, s, SYMC_ERR_INTERNAL, "batch dims do not broadcast", err);
        p->out_dims[j] = da == 1 ? db : da;
        if (__builtin_mul_overflow(batch, p->out_dims[j], &batch) || __builtin_mul_overflow(a_count, da, &a_count) ||
            __builtin_mul_overflow(b_count, db, &b_count))
            over = 1;
    }
    if (over || __builtin_mul_overflow(m, n, &mn) || __builtin_mul_overflow(m, k, &mk) ||
        __builtin_mul_overflow(k, n, &kn) || __builtin_mul_overflow(batch, mn, &want))
        return extent_overflow(e, s, m, n, k, err);
    if (dn != want) return shape_err(e, s, SYMC_ERR_INTERNAL, "the output size is not batch*M*N", err);
    if (p->tc_t != RT_NONE) {
        int64_t cn;
        if (!numel(e, slots, p->tc_t, &cn)) return too_big(e, s, slots, p->tc_t, err);
        if (cn != want)
            return shape_err(e, s, SYMC_ERR_UNSUPPORTED, "C must be a full [M, N] matrix on the CUDA backend", err);
    }
    if (p->tbias_t != RT_NONE) {
        int64_t biasn;
        if (!numel(e, slots, p->tbias_t, &biasn)) return too_big(e, s, slots, p->tbias_t, err);
        if (biasn != n) return shape_err(e, s, SYMC_ERR_INTERNAL, "the bias does not have N elements", err);
    }
    p->ta = ta;
    p->tb = tb;
    p->m = m;
    p->n = n;
    p->k = k;
    p->batch = batch;
    p->nb = nb;
    if (batch <= 1 || m == 0 || n == 0) {
        p->batch = batch < 1 ? batch : 1;
        return SYMC_OK;
    }
    int a_full = a_count == batch, b_full = b_count == batch;
    int a_bc = a_count == 1, b_bc = b_count == 1;
    if ((a_full || a_bc) && (b_full || b_bc)) {
        p->stride_a = a_full ? mk : 0;
        p->stride_b = b_full ? kn : 0;
        p->stride_d = mn;
        if (b_bc && a_full && !ta) {
            /* [batch, M, K] x [K, N] is one [batch*M, K] x [K, N]; a C (a
             * residual) has D's contiguous layout, so it folds the same way
             * (batch*M <= batch*M*N, which fits; n > 0 here) */
            p->m = m * batch;
            p->batch = 1;
            p->stride_a = p->stride_b = p->stride_d = 0;
        }
        if (p->batch > INT32_MAX) { /* cuBLASLt's batch count is an int32: never truncate it */
            char msg[160];
            snprintf(msg, sizeof msg, "a batch of %" PRId64 " matrices; cuBLASLt takes at most %d", p->batch,
                     INT32_MAX);
            return shape_err(e, s, SYMC_ERR_UNSUPPORTED, msg, err);
        }
        return SYMC_OK;
    }
    /* mixed broadcasting: per-dim element strides of each operand's batch */
    p->loop = 1;
    int64_t sa = mk, sb = kn; /* suffix products of each operand's dims: <= its element count */
    for (int j = nb - 1; j >= 0; j--) {
        int ja = j - (nb - na), jb = j - (nb - nbb);
        int64_t da = ja >= 0 ? dim(e, slots, p->ta_t, ja) : 1, db = jb >= 0 ? dim(e, slots, p->tb_t, jb) : 1;
        p->a_str[j] = da == 1 ? 0 : sa;
        p->b_str[j] = db == 1 ? 0 : sb;
        if (__builtin_mul_overflow(sa, da, &sa) || __builtin_mul_overflow(sb, db, &sb))
            return extent_overflow(e, s, m, n, k, err);
    }
    return SYMC_OK;
}

symc_status rt_cuda_gemm_sizes(const rt_engine *e, uint32_t step, const int64_t *slots, int64_t sizes[4],
                               symc_error *err) {
    if (step >= e->n_steps || e->steps[step].kind != RT_STEP_GEMM)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "step %u is not a GEMM step", step);
    gemm_problem p;
    symc_status st = plan(e, step, slots, &p, err);
    if (st) return st;
    sizes[0] = p.m, sizes[1] = p.n, sizes[2] = p.k, sizes[3] = p.batch;
    return SYMC_OK;
}

/* ---- handle, workspace, cache ------------------------------------------------- */

static void entry_destroy(rt_cuda_setup *s);

symc_status rt_cuda_gemm_create(rt_cuda *c, symc_error *err) {
    symc_status st = rt_cuda_lt_load(err);
    if (st) return st;
    /* a region's state: the handle is made once, in the owner, whichever region needs it first */
    if (c->owner != c && !c->owner->gemm && (st = rt_cuda_gemm_create(c->owner, err))) return st;
    rt_gemm_state *g = calloc(1, sizeof *g);
    if (!g) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating the cuBLASLt state");
    c->gemm = g;
    g->cls = calloc((size_t)c->e->n_steps + 1, sizeof *g->cls);
    if (!g->cls) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory creating the cuBLASLt state");
    rt_cuda_setup_classes(c->e, RT_STEP_GEMM, g->cls);
    if ((st = rt_cuda_setups_init(&g->setups, c->e->n_steps, GEMM_CACHE, entry_destroy, err))) return st;
    if (c->owner != c) {
        g->h = c->owner->gemm->h;
        g->borrowed = 1;
        return SYMC_OK;
    }
    return RT_LT(err, Create, (&g->h));
}

/* Destroys an entry's descriptors (the key stays). */
static void descs_clear(gemm_entry *en) {
    if (en->op) rt_cuda_lt.MatmulDescDestroy(en->op);
    if (en->bop) rt_cuda_lt.MatmulDescDestroy(en->bop);
    cublasLtMatrixLayout_t *l[5] = {&en->la, &en->lb, &en->ld, &en->bla, &en->blb};
    for (int i = 0; i < 5; i++) {
        if (*l[i]) rt_cuda_lt.MatrixLayoutDestroy(*l[i]);
        *l[i] = NULL;
    }
    en->op = en->bop = NULL;
}

static void entry_clear(gemm_entry *en) {
    descs_clear(en);
    memset(en, 0, sizeof *en);
}

static void entry_destroy(rt_cuda_setup *s) {
    descs_clear((gemm_entry *)s);
    free(s);
}

void rt_cuda_gemm_destroy(rt_cuda *c) {
    rt_gemm_state *g = c->gemm;
    if (!g) return;
    rt_cuda_setups_free(&g->setups);
    if (g->h && !g->borrowed) rt_cuda_lt.Destroy(g->h);
    rt_cuda_free(c, g->ws); /* the buffers: 0 in a borrowing state */
    rt_cuda_free(c, g->zeros);
    for (int i = 0; i < 3; i++) rt_cuda_free(c, g->ones[i]);
    free(g->cls);
    free(g);
    c->gemm = NULL;
}

/* Half storage (f16/bf16 A, B, C, D and bias) always accumulates in fp32;
 * fp32 storage follows the step's precision (TF32, or operands rounded to
 * f16/bf16 inside the library). */
static cublasComputeType_t compute_type(symc_dtype dt, uint8_t precision) {
    if (dt == SYMC_F64) return CUBLAS_COMPUTE_64F;
    if (dt == SYMC_F16 || dt == SYMC_BF16) return CUBLAS_COMPUTE_32F;
    switch ((rt_precision)precision) {
    case RT_PREC_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case RT_PREC_FP16: return CUBLAS_COMPUTE_32F_FAST_16F;
    case RT_PREC_BF16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    case RT_PREC_FP32: break;
    }
    return CUBLAS_COMPUTE_32F; /* true fp32: no TF32 */
}

static cublasLtEpilogue_t epilogue_of(const rt_step *s, int bias) {
    switch ((rt_epilogue)s->epilogue) {
    case RT_EPI_RELU: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case RT_EPI_GELU: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case RT_EPI_NONE: break;
    }
    return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

static symc_status layout(cublasLtMatrixLayout_t *l, cudaDataType_t t, int64_t rows, int64_t cols, int64_t ld,
                          int64_t batch, int64_t stride, symc_error *err) {
    symc_status st = RT_LT(err, MatrixLayoutCreate, (l, t, (uint64_t)rows, (uint64_t)cols, ld));
    if (st || batch <= 1) return st;
    int32_t count = (int32_t)batch;
    if ((st = RT_LT(err, MatrixLayoutSetAttribute, (*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count))))
        return st;
    return RT_LT(err, MatrixLayoutSetAttribute,
                 (*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
}

static cudaDataType_t data_type(symc_dtype dt) {
    switch (dt) {
    case SYMC_F64: return CUDA_R_64F;
    case SYMC_F16: return CUDA_R_16F;
    case SYMC_BF16: return CUDA_R_16BF;
    default: return CUDA_R_32F;
    }
}

static symc_status row_order(cublasLtMatrixLayout_t l, symc_error *err) {
    int32_t order = CUBLASLT_ORDER_ROW;
    return RT_LT(err, MatrixLayoutSetAttribute, (l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order));
}

/* The main call's descriptors: cuBLASLt's column-major view of our row-major
 * operands (A = our b, B = our a, D^T), or, for a 1x1 convolution with
 * en->row, the operands as stored in CUBLASLT_ORDER_ROW (A = w [M x K], B =
 * x [K x N], D [M x N]: the key's fields read back unswapped). A split entry's
 * main call has no epilogue: the bias pass applies bias and activation. */
static symc_status make_descs(const rt_step *s, symc_dtype dt, const gemm_key *key, gemm_entry *en, symc_error *err) {
    cudaDataType_t t = data_type(dt), scale = dt == SYMC_F64 ? CUDA_R_64F : CUDA_R_32F;
    symc_status st = RT_LT(err, MatmulDescCreate, (&en->op, compute_type(dt, s->precision), scale));
    if (st) return st;
    int32_t opa = key->op_a, opb = key->op_b;
    cublasLtEpilogue_t epi = en->split ? CUBLASLT_EPILOGUE_DEFAULT : epilogue_of(s, key->bias);
    if ((st = RT_LT(err, MatmulDescSetAttribute, (en->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof opa)))) return st;
    if ((st = RT_LT(err, MatmulDescSetAttribute, (en->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof opb)))) return st;
    if ((st = RT_LT(err, MatmulDescSetAttribute, (en->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi)))) return st;
    if (en->row) { /* no transposes here (a convolution has none) */
        if ((st = layout(&en->la, t, key->n, key->k, key->ldb, key->batch, key->stride_b, err)) ||
            (st = row_order(en->la, err)))
            return st;
        if ((st = layout(&en->lb, t, key->k, key->m, key->lda, key->batch, key->stride_a, err)) ||
            (st = row_order(en->lb, err)))
            return st;
        if ((st = layout(&en->ld, t, key->n, key->m, key->ldd, key->batch, key->stride_d, err))) return st;
        return row_order(en->ld, err);
    }
    /* cuBLASLt's A is our b: [m x k] after op_a */
    int64_t ar = key->op_a == CUBLAS_OP_N ? key->m : key->k, ac = key->op_a == CUBLAS_OP_N ? key->k : key->m;
    int64_t br = key->op_b == CUBLAS_OP_N ? key->k : key->n, bc = key->op_b == CUBLAS_OP_N ? key->n : key->k;
    if ((st = layout(&en->la, t, ar, ac, key->lda, key->batch, key->stride_a, err))) return st;
    if ((st = layout(&en->lb, t, br, bc, key->ldb, key->batch, key->stride_b, err))) return st;
    return layout(&en->ld, t, key->m, key->n, key->ldd, key->batch, key->stride_d, err);
}

/* The bias pass of a split 1x1 convolution: D^T (HW x Cout, column order,
 * the layout of the main call's D) = ones (HW x 1) bias (1 x Cout) + D^T,
 * with C = D and beta 1, then the step's activation. fp32 compute whatever
 * the step's precision: 1 * bias is exact, so the bias is added as stored. */
static symc_status make_bias_pass(const rt_step *s, symc_dtype dt, const gemm_key *key, gemm_entry *en,
                                  symc_error *err) {
    cudaDataType_t t = data_type(dt);
    symc_status st = RT_LT(err, MatmulDescCreate, (&en->bop, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    if (st) return st;
    int32_t op = CUBLAS_OP_N;
    cublasLtEpilogue_t epi = epilogue_of(s, 0);
    if ((st = RT_LT(err, MatmulDescSetAttribute, (en->bop, CUBLASLT_MATMUL_DESC_TRANSA, &op, sizeof op)))) return st;
    if ((st = RT_LT(err, MatmulDescSetAttribute, (en->bop, CUBLASLT_MATMUL_DESC_TRANSB, &op, sizeof op)))) return st;
    if ((st = RT_LT(err, MatmulDescSetAttribute, (en->bop, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi))))
        return st;
    if ((st = layout(&en->bla, t, key->m, 1, key->m, key->batch, 0, err))) return st;
    return layout(&en->blb, t, 1, key->n, 1, key->batch, 0, err);
}

static symc_status preference(cublasLtMatmulPreference_t *pref, uint32_t align, symc_error *err) {
    symc_status st = RT_LT(err, MatmulPreferenceCreate, (pref));
    if (st) return st;
    uint64_t ws = GEMM_WORKSPACE;
    st = RT_LT(err, MatmulPreferenceSetAttribute, (*pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    const cublasLtMatmulPreferenceAttributes_t al[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && !st; i++)
        st = RT_LT(err, MatmulPreferenceSetAttribute, (*pref, al[i], &align, sizeof align));
    return st;
}

/* does the algorithm accept pointers aligned to `align` bytes? */
static int algo_alignment_ok(const cublasLtMatmulAlgo_t *algo, uint32_t align) {
    const cublasLtMatmulAlgoCapAttributes_t caps[] = {
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4; i++) {
        uint32_t need = 0;
        size_t written = 0;
        if (rt_cuda_lt.MatmulAlgoCapGetAttribute(algo, caps[i], &need, sizeof need, &written) != CUBLAS_STATUS_SUCCESS)
            return 0;
        if (need > align) return 0;
    }
    return 1;
}

/* The heuristic's first `cap` (<= 16) algorithms for one call into res, *n of them. */
static symc_status heuristic(rt_gemm_state *g, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
                             cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld, uint32_t align, int cap,
                             cublasLtMatmulHeuristicResult_t *res, int *n, symc_error *err) {
    cublasLtMatmulPreference_t pref = NULL;
    *n = 0;
    memset(res, 0, (size_t)cap * sizeof *res);
    symc_status st = preference(&pref, align, err);
    if (!st) st = RT_LT(err, MatmulAlgoGetHeuristic, (g->h, op, la, lb, ld, ld, pref, cap, res, n));
    if (pref) rt_cuda_lt.MatmulPreferenceDestroy(pref);
    return st;
}

/* An entry's descriptors for its key. A 1x1 convolution with a bias asks
 * for row order with the bias epilogue first (row = 1); when cuBLASLt has no
 * algorithm for that (or refuses the layouts), column order without an
 * epilogue plus the bias pass (split = 1), whose algorithm is the
 * heuristic's first. The main call's algorithm is the caller's to choose. */
static symc_status make_call(rt_gemm_state *g, const rt_step *s, symc_dtype dt, gemm_entry *en, symc_error *err) {
    const gemm_key *key = &en->pk.key;
    en->row = en->split = 0;
    if (!(key->conv && key->bias)) return make_descs(s, dt, key, en, err);
    cublasLtMatmulHeuristicResult_t res[1];
    int n = 0;
    symc_error ignored;
    en->row = 1;
    if (!make_descs(s, dt, key, en, &ignored) &&
        !heuristic(g, en->op, en->la, en->lb, en->ld, key->align, 1, res, &n, &ignored) && n > 0 &&
        res[0].state == CUBLAS_STATUS_SUCCESS)
        return SYMC_OK;
    descs_clear(en);
    en->row = 0;
    en->split = 1;
    symc_status st = make_descs(s, dt, key, en, err);
    if (!st) st = make_bias_pass(s, dt, key, en, err);
    if (!st) st = heuristic(g, en->bop, en->bla, en->blb, en->ld, key->align, 1, res, &n, err);
    if (!st && (n < 1 || res[0].state != CUBLAS_STATUS_SUCCESS))
        st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for the bias pass (K = 1)");
    if (!st) {
        en->balgo = res[0].algo;
        en->bws = res[0].workspaceSize;
    }
    return st;
}

/* The nearest tuned algorithm for these sizes (rt_cuda_tune_order) that accepts
 * this problem's alignment and descriptors; the next nearest when it does
 * not. */
static int use_tuned(rt_gemm_state *g, const rt_step *s, const gemm_problem *p, gemm_entry *en) {
    const int64_t sizes[4] = {p->m, p->n, p->k, p->batch};
    int order[RT_TUNE_ORDER_MAX];
    uint32_t n = rt_cuda_tune_order(s->tuned, s->n_tuned, sizes, RT_GEMM_ALGO_SIZE, order, RT_TUNE_ORDER_MAX);
    for (uint32_t i = 0; i < n; i++) {
        cublasLtMatmulAlgo_t algo;
        memcpy(&algo, s->tuned[order[i]].algo, sizeof algo);
        if (!algo_alignment_ok(&algo, en->pk.key.align)) continue;
        cublasLtMatmulHeuristicResult_t res;
        memset(&res, 0, sizeof res);
        if (rt_cuda_lt.MatmulAlgoCheck(g->h, en->op, en->la, en->lb, en->ld, en->ld, &algo, &res) !=
                CUBLAS_STATUS_SUCCESS ||
            res.workspaceSize > GEMM_WORKSPACE)
            continue;
        en->algo = algo;
        en->ws = res.workspaceSize;
        return 1;
    }
    return 0;
}

static uint32_t align_of(uint32_t align, uint64_t v) {
    while (align > 1 && v % align) align >>= 1;
    return align;
}

/* The cuBLASLt problem for a plan with these base pointers. */
static void key_of(const rt_step *s, const gemm_problem *p, const CUdeviceptr ptrs[5], int k0, gemm_key *key) {
    memset(key, 0, sizeof *key); /* memcmp'd: no padding garbage */
    key->m = p->n;
    key->n = p->m;
    key->k = k0 ? 1 : p->k;
    key->batch = p->loop ? 1 : p->batch;
    if (k0) {
        key->op_a = key->op_b = CUBLAS_OP_N;
        key->lda = p->n;
        key->ldb = 1;
    } else {
        key->op_a = p->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        key->op_b = p->ta ? CUBLAS_OP_T : CUBLAS_OP_N;
        key->lda = p->tb ? p->k : p->n; /* row length of b as stored */
        key->ldb = p->ta ? p->m : p->k; /* row length of a as stored */
        key->stride_a = p->stride_b;
        key->stride_b = p->stride_a;
    }
    key->ldd = p->n;
    key->stride_d = p->stride_d;
    key->bias = p->tbias_t != RT_NONE;
    key->has_c = p->tc_t != RT_NONE && s->beta != 0.0f;
    key->conv = p->conv;
    uint32_t al = 256;
    for (int i = 0; i < 5; i++) al = align_of(al, ptrs[i]);
    const int64_t vals[] = {key->lda,      key->ldb,    key->ldd,    key->stride_a, key->stride_b,
                            key->stride_d, p->a_str[0], p->b_str[0], p->m * p->n};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) al = align_of(al, (uint64_t)vals[i] * p->esize);
    if (p->loop)
        for (int j = 0; j < p->nb; j++)
            al = align_of(align_of(al, (uint64_t)p->a_str[j] * p->esize), (uint64_t)p->b_str[j] * p->esize);
    key->align = al;
}

/* The setup for this step and key: the step's own, another step's of its class (the same call),
 * or made now (descriptors and the algorithm). */
static symc_status find_entry(rt_cuda *c, uint32_t step, const gemm_problem *p, const gemm_key *key, gemm_entry **out,
                              symc_error *err) {
    rt_gemm_state *g = c->gemm;
    const rt_step *s = &c->e->steps[step];
    gemm_pkey pk;
    memset(&pk, 0, sizeof pk); /* memcmp'd: no padding garbage */
    pk.key = *key;
    pk.batch = p->batch;
    pk.cls = g->cls[step];
    pk.dt = (int32_t)p->dt;
    rt_cuda_setup *got = rt_cuda_setups_row(&g->setups, step, &pk, sizeof pk);
    if (!got) got = rt_cuda_setups_take(&g->setups, step, &pk, sizeof pk);
    if (got) {
        *out = (gemm_entry *)got;
        return SYMC_OK;
    }
    gemm_entry *en = calloc(1, sizeof *en);
    if (!en)
        return symc_error_setf(err, SYMC_ERR_NOMEM, "node '%s': out of host memory for a cuBLASLt setup",
                               rt_cuda_node_name(c->e, s));
    en->pk = pk;
    symc_status st = make_call(g, s, p->dt, en, err);
    if (!st) en->from_tuning = use_tuned(g, s, p, en);
    if (!st && !en->from_tuning) {
        cublasLtMatmulHeuristicResult_t res;
        int n = 0;
        st = heuristic(g, en->op, en->la, en->lb, en->ld, key->align, 1, &res, &n, err);
        if (!st && n < 1) st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "cuBLASLt has no algorithm for this problem");
        if (!st) {
            en->algo = res.algo;
            en->ws = res.workspaceSize;
        }
    }
    if (st) {
        symc_error_prefix(err, "node '%s': GEMM m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64,
                          rt_cuda_node_name(c->e, s), p->m, p->n, p->k, p->batch);
        entry_destroy(&en->base);
        return st;
    }
    en->base.key = &en->pk;
    en->base.key_len = sizeof en->pk;
    rt_cuda_setups_put(&g->setups, step, &en->base);
    *out = en;
    return SYMC_OK;
}

static symc_status ensure_buffers(rt_cuda *c, const gemm_problem *p, int k0, symc_error *err) {
    rt_gemm_state *g = c->owner->gemm; /* the buffers are the owner's */
    symc_status st;
    if (!g->ws) {
        if ((st = rt_cuda_alloc(c, GEMM_WORKSPACE, &g->ws, "the cuBLASLt workspace", err))) return st;
        c->owner->memory_gen++;
    }
    if (k0) {
        size_t need = (size_t)(p->m > p->n ? p->m : p->n) * p->esize;
        if (need > g->zeros_size) {
            if (g->zeros) {
                if ((st = rt_cuda_quiesce(c, err))) return st;
                rt_cuda_free(c, g->zeros);
                g->zeros = 0;
                g->zeros_size = 0;
            }
            if ((st = rt_cuda_alloc(c, need, &g->zeros, "zeros for a K = 0 GEMM", err))) return st;
            if ((st = RT_CU(err, MemsetD8, (g->zeros, 0, need)))) return st;
            g->zeros_size = need;
            c->owner->memory_gen++; /* captured graphs that read the old buffer are stale */
        }
    }
    return SYMC_OK;
}

/* At least n ones of dtype dt on the device (the bias pass's A). */
static symc_status ensure_ones(rt_cuda *c, symc_dtype dt, int64_t n, symc_error *err) {
    rt_gemm_state *g = c->owner->gemm; /* the buffers are the owner's */
    int i = dt == SYMC_F16 ? 1 : dt == SYMC_BF16 ? 2 : 0;
    if ((size_t)n <= g->ones_n[i]) return SYMC_OK;
    symc_status st;
    if (g->ones[i]) { /* queued calls may still read the old one */
        if ((st = rt_cuda_quiesce(c, err))) return st;
        rt_cuda_free(c, g->ones[i]);
        g->ones[i] = 0;
        g->ones_n[i] = 0;
    }
    size_t es = symc_dtype_size(dt), bytes = (size_t)n * es;
    uint8_t *host = malloc(bytes);
    if (!host) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory for %" PRId64 " ones", n);
    symc_dtype_store(host, dt, 0, 1.0);
    for (int64_t k = 1; k < n; k++) memcpy(host + (size_t)k * es, host, es);
    st = rt_cuda_alloc(c, bytes, &g->ones[i], "ones for a convolution's bias pass", err);
    if (!st) st = RT_CU(err, MemcpyHtoD, (g->ones[i], host, bytes));
    free(host);
    if (st) return st;
    g->ones_n[i] = (size_t)n;
    c->owner->memory_gen++; /* captured graphs (of every region) that read the old buffer are stale */
    return SYMC_OK;
}

/* One cuBLASLt call (or a loop of them) for the step, with `algo` when the
 * tuner forces one. */
static symc_status run(rt_cuda *c, uint32_t step, const int64_t *slots, CUstream stream,
                       const cublasLtMatmulAlgo_t *forced, symc_error *err) {
    const rt_step *s = &c->e->steps[step];
    rt_gemm_state *g = c->gemm;
    gemm_problem p;
    symc_status st = plan(c->e, step, slots, &p, err);
    if (st) return st;
    if (p.m == 0 || p.n == 0 || p.batch == 0) return SYMC_OK; /* an empty output */
    int k0 = p.k == 0;
    CUdeviceptr pa = c->ptr[p.ta_t], pb = c->ptr[p.tb_t], pd = c->ptr[p.td_t];
    CUdeviceptr pc = p.tc_t != RT_NONE && s->beta != 0.0f ? c->ptr[p.tc_t] : pd;
    CUdeviceptr pbias = p.tbias_t != RT_NONE ? c->ptr[p.tbias_t] : 0;
    if ((st = ensure_buffers(c, &p, k0, err))) return st;
    if (k0) pa = pb = c->owner->gemm->zeros;
    const CUdeviceptr ptrs[5] = {pa, pb, pc, pd, pbias ? pbias : pd};
    gemm_key key;
    key_of(s, &p, ptrs, k0, &key);
    gemm_entry *en = NULL;
    if ((st = find_entry(c, step, &p, &key, &en, err))) return st;
    const cublasLtMatmulAlgo_t *algo = forced ? forced : &en->algo;
    if (en->split && (st = ensure_ones(c, p.dt, p.n, err))) goto fail;
    if (pbias && !en->split) {
        void *bp = (void *)(uintptr_t)pbias;
        if ((st = RT_LT(err, MatmulDescSetAttribute, (en->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bp, sizeof bp))))
            goto fail;
    }
    double alpha64 = s->alpha, beta64 = key.has_c ? s->beta : 0.0;
    float alpha32 = s->alpha, beta32 = (float)beta64;
    const void *alpha = p.dt == SYMC_F64 ? (const void *)&alpha64 : (const void *)&alpha32;
    const void *beta = p.dt == SYMC_F64 ? (const void *)&beta64 : (const void *)&beta32;
    int64_t count = p.loop ? p.batch : 1;
    for (int64_t i = 0; i < count; i++) {
        int64_t oa = 0, ob = 0, od = 0;
        if (p.loop) { /* decompose the output batch index over the broadcast dims */
            int64_t r = i;
            for (int j = p.nb - 1; j >= 0; j--) {
                int64_t idx = r % p.out_dims[j];
                r /= p.out_dims[j];
                oa += idx * p.a_str[j];
                ob += idx * p.b_str[j];
            }
            od = i * p.m * p.n;
            if (k0) oa = ob = 0;
        }
        const void *A = (const void *)(uintptr_t)(pb + (CUdeviceptr)ob * p.esize); /* cuBLASLt's A is our b */
        const void *B = (const void *)(uintptr_t)(pa + (CUdeviceptr)oa * p.esize);
        if (en->row) { /* row order: as stored */
            const void *t = A;
            A = B;
            B = t;
        }
        const void *C = (const void *)(uintptr_t)(pc + (CUdeviceptr)od * p.esize);
        void *D = (void *)(uintptr_t)(pd + (CUdeviceptr)od * p.esize);
        st = RT_LT(err, Matmul,
                   (g->h, en->op, alpha, A, en->la, B, en->lb, beta, C, en->ld, D, en->ld, algo,
                    (void *)(uintptr_t)c->owner->gemm->ws, GEMM_WORKSPACE, stream));
        if (st) goto fail;
        if (en->split) { /* D = ones bias + D, then the activation (the top) */
            const float one = 1.0f;
            const void *O = (const void *)(uintptr_t)c->owner->gemm->ones[p.dt == SYMC_F16        ? 1
                                                                              : p.dt == SYMC_BF16 ? 2
                                                                                                  : 0];
            st = RT_LT(err, Matmul,
                       (g->h, en->bop, &one, O, en->bla, (const void *)(uintptr_t)pbias, en->blb, &one, D, en->ld, D,
                        en->ld, &en->balgo, (void *)(uintptr_t)c->owner->gemm->ws, GEMM_WORKSPACE, stream));
            if (st) goto fail;
        }
    }
    return SYMC_OK;
fail:
    symc_error_prefix(err, "node '%s': GEMM m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64,
                      rt_cuda_node_name(c->e, s), p.m, p.n, p.k, p.batch);
    return st;
}

void rt_cuda_gemm_describe(rt_cuda *c, uint32_t step, const int64_t *slots, char *buf, size_t cap) {
    const rt_step *s = &c->e->steps[step];
    gemm_problem p;
    symc_error err = {0};
    if (!cap) return;
    if (plan(c->e, step, slots, &p, &err)) {
        snprintf(buf, cap, "cuBLASLt (%s)", err.msg);
        return;
    }
    int from_tuning = -1;
    const char *form = p.conv ? " (1x1 conv)" : "";
    for (uint32_t i = 0; c->gemm && i < GEMM_CACHE; i++) {
        const gemm_entry *en = (const gemm_entry *)rt_cuda_setups_way(&c->gemm->setups, step, i);
        if (en && en->pk.key.m == p.n && en->pk.key.n == p.m && en->pk.key.k == p.k) {
            from_tuning = en->from_tuning;
            if (en->row) form = " (1x1 conv, row order, bias epilogue)";
            if (en->split) form = " (1x1 conv, bias in a K=1 call)";
        }
    }
    snprintf(buf, cap, "cuBLASLt %s%s m=%" PRId64 " n=%" PRId64 " k=%" PRId64 " batch=%" PRId64 "%s%s%s%s%s, %s",
             symc_dtype_name(p.dt), form, p.m, p.n, p.k, p.batch, p.ta ? " A^T" : "", p.tb ? " B^T" : "",
             p.tbias_t != RT_NONE ? (p.conv ? " +bias per channel" : " +bias") : "",
             s->epilogue == RT_EPI_RELU       ? " +relu"
                 : s->epilogue == RT_EPI_GELU ? " +gelu"
                                              : "",
             p.loop ? " (one call per batch)" : "",
             from_tuning < 0   ? "algo not chosen yet"
                 : from_tuning ? "tuned algo"
                               : "heuristic algo");
}

void rt_cuda_gemm_setup_stats(const rt_cuda *c, uint64_t *made, uint64_t *shared) {
    *made = c->gemm ? c->gemm->setups.made : 0;
    *shared = c->gemm ? c->gemm->setups.shared : 0;
}

symc_status rt_cuda_gemm_run(rt_cuda *c, uint32_t step, const int64_t *slots, CUstream stream, symc_error *err) {
    const cublasLtMatmulAlgo_t *forced = NULL;
    if (c->force.algo && c->force.step == step) forced = c->force.algo;
    return run(c, step, slots, stream, forced, err);
}

symc_status rt_cuda_gemm_candidates(rt_cuda *c, uint32_t step, const int64_t *slots, cublasLtMatmulAlgo_t *algos,
                                    int cap, int *n, symc_error *err) {
    *n = 0;
    const rt_step *s = &c->e->steps[step];
    gemm_problem p;
    symc_status st = plan(c->e, step, slots, &p, err);
    if (st || p.m == 0 || p.n == 0 || p.batch == 0) return st;
    int k0 = p.k == 0;
    CUdeviceptr pa = c->ptr[p.ta_t], pb = c->ptr[p.tb_t], pd = c->ptr[p.td_t];
    CUdeviceptr pc = p.tc_t != RT_NONE && s->beta != 0.0f ? c->ptr[p.tc_t] : pd;
    CUdeviceptr pbias = p.tbias_t != RT_NONE ? c->ptr[p.tbias_t] : pd;
    if ((st = ensure_buffers(c, &p, k0, err))) return st;
    if (k0) pa = pb = c->owner->gemm->zeros;
    const CUdeviceptr ptrs[5] = {pa, pb, pc, pd, pbias};
    gemm_key key;
    key_of(s, &p, ptrs, k0, &key);
    gemm_entry tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.pk.key = key;
    cublasLtMatmulHeuristicResult_t res[16];
    if (cap > 16) cap = 16;
    st = make_call(c->gemm, s, p.dt, &tmp, err); /* the main call of the formulation run() will use */
    if (!st) st = heuristic(c->gemm, tmp.op, tmp.la, tmp.lb, tmp.ld, key.align, cap, res, n, err);
    entry_clear(&tmp);
    if (st) {
        symc_error_prefix(err, "node '%s'", rt_cuda_node_name(c->e, s));
        return st;
    }
    int kept = 0;
    for (int i = 0; i < *n; i++)
        if (res[i].state == CUBLAS_STATUS_SUCCESS) algos[kept++] = res[i].algo;
    *n = kept;
    return SYMC_OK;
}

/* What a GEMM step computes at these slots with the tensors bound in
 * c->ptr, as bytes: equal bytes are the same cuBLASLt problem (the call's
 * key: sizes, leading dims, strides, transposes, bias, C, alignment; dtype,
 * precision, epilogue, alpha and beta, and the loop over a mixed batch),
 * whichever step asks. The tuner times each once. */
symc_status rt_cuda_gemm_signature(rt_cuda *c, uint32_t step, const int64_t *slots, uint8_t *buf, size_t cap,
                                   size_t *len, symc_error *err) {
    const rt_step *s = &c->e->steps[step];
    gemm_problem p;
    symc_status st = plan(c->e, step, slots, &p, err);
    if (st) return st;
    int k0 = p.k == 0;
    CUdeviceptr pa = c->ptr[p.ta_t], pb = c->ptr[p.tb_t], pd = c->ptr[p.td_t];
    CUdeviceptr pc = p.tc_t != RT_NONE && s->beta != 0.0f ? c->ptr[p.tc_t] : pd;
    CUdeviceptr pbias = p.tbias_t != RT_NONE ? c->ptr[p.tbias_t] : pd;
    const CUdeviceptr ptrs[5] = {pa, pb, pc, pd, pbias};
    struct {
        gemm_key key;
        int64_t batch;
        float alpha, beta;
        int32_t dt;
        uint8_t kind, precision, epilogue, loop, k0, pad[3];
    } sig;
    memset(&sig, 0, sizeof sig);
    key_of(s, &p, ptrs, k0, &sig.key);
    sig.batch = p.batch;
    sig.alpha = s->alpha;
    sig.beta = s->beta;
    sig.dt = (int32_t)p.dt;
    sig.kind = RT_STEP_GEMM;
    sig.precision = s->precision;
    sig.epilogue = s->epilogue;
    sig.loop = (uint8_t)p.loop;
    sig.k0 = (uint8_t)k0;
    if (cap < sizeof sig)
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "a GEMM signature needs %zu bytes", sizeof sig);
    memcpy(buf, &sig, sizeof sig);
    *len = sizeof sig;
    return SYMC_OK;
}

/* ---- describing a tuned choice (symc inspect) ----------------------------------- */

typedef enum lt_name_kind { LT_MATMUL_TILE, LT_MATMUL_STAGES, LT_CLUSTER_SHAPE } lt_name_kind;
typedef struct lt_name {
    lt_name_kind kind;
    uint32_t id;
    const char *name;
} lt_name;
static const lt_name lt_names[] = {
#define RT_LT_NAME(kind, id, name) {LT_##kind, id, name},
#include "cublaslt_names.h"
#undef RT_LT_NAME
    {LT_MATMUL_TILE, UINT32_MAX, NULL} /* never empty, whatever the header held */
};

static const char *lt_name_of(lt_name_kind kind, uint32_t id) {
    for (size_t i = 0; i < sizeof lt_names / sizeof lt_names[0]; i++)
        if (lt_names[i].kind == kind && lt_names[i].id == id && lt_names[i].name) return lt_names[i].name;
    return NULL;
}

static uint32_t algo_attr(const cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoConfigAttributes_t attr, size_t size,
                          int *ok) {
    uint8_t buf[8] = {0};
    size_t written = 0;
    if (rt_cuda_lt.MatmulAlgoConfigGetAttribute(a, attr, buf, size, &written) != CUBLAS_STATUS_SUCCESS ||
        written != size) {
        *ok = 0;
        return 0;
    }
    if (size == 2) {
        uint16_t v;
        memcpy(&v, buf, 2);
        return v;
    }
    uint32_t v;
    memcpy(&v, buf, 4);
    return v;
}

void rt_cuda_gemm_algo_describe(const uint8_t *algo, uint32_t size, char *buf, size_t cap) {
    if (!cap) return;
    uint64_t h = 1469598103934665603ull; /* FNV-1a: equal choices show equal hashes */
    for (uint32_t i = 0; algo && i < size; i++) h = (h ^ algo[i]) * 1099511628211ull;
    if (!algo || size != sizeof(cublasLtMatmulAlgo_t) || rt_cuda_lt_load(NULL) != SYMC_OK) {
        snprintf(buf, cap, "cuBLASLt algo #%08" PRIx32 " (%u bytes; %s)", (uint32_t)(h ^ (h >> 32)), size,
                 size != sizeof(cublasLtMatmulAlgo_t) ? "not this cuBLASLt's algo size"
                                                      : "libcublasLt not loadable here to decode it");
        return;
    }
    cublasLtMatmulAlgo_t a;
    memcpy(&a, algo, sizeof a);
    int ok = 1;
    uint32_t id = algo_attr(&a, CUBLASLT_ALGO_CONFIG_ID, 4, &ok);
    uint32_t tile = algo_attr(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, 4, &ok);
    uint32_t stages = algo_attr(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, 4, &ok);
    uint32_t splitk = algo_attr(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4, &ok);
    uint32_t reduction = algo_attr(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4, &ok);
    uint32_t swizzle = algo_attr(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4, &ok);
    uint32_t custom = algo_attr(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4, &ok);
    int cluster_ok = 1;
    uint32_t cluster = algo_attr(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, 2, &cluster_ok);
    if (!ok) {
        snprintf(buf, cap, "cuBLASLt algo #%08" PRIx32 " (cuBLASLt could not read its configuration)",
                 (uint32_t)(h ^ (h >> 32)));
        return;
    }
    /* only what is set: id 0 of tile, stages and cluster means "undefined /
     * automatic" (kernels without tiles, e.g. the small-problem ones) */
    char part[6][48];
    memset(part, 0, sizeof part);
    const char *tn = lt_name_of(LT_MATMUL_TILE, tile), *sn = lt_name_of(LT_MATMUL_STAGES, stages);
    const char *cn = cluster_ok && cluster ? lt_name_of(LT_CLUSTER_SHAPE, cluster) : NULL;
    if (tn) snprintf(part[0], sizeof part[0], ", tile %s", tn);
    else if (tile) snprintf(part[0], sizeof part[0], ", tile id %u", tile);
    if (sn) snprintf(part[1], sizeof part[1], ", stages %s", sn);
    else if (stages) snprintf(part[1], sizeof part[1], ", stages id %u", stages);
    if ((int32_t)splitk > 1)
        snprintf(part[2], sizeof part[2], ", split-k %d (reduction %u)", (int)(int32_t)splitk, reduction);
    if (cn) snprintf(part[3], sizeof part[3], ", cluster %s", cn);
    else if (cluster_ok && cluster) snprintf(part[3], sizeof part[3], ", cluster id %u", cluster);
    if (swizzle) snprintf(part[4], sizeof part[4], ", swizzle %u", swizzle);
    if (custom) snprintf(part[5], sizeof part[5], ", custom option %u", custom);
    snprintf(buf, cap, "cuBLASLt algo %d%s%s%s%s%s%s", (int)(int32_t)id, part[0], part[1], part[2], part[3], part[4],
             part[5]);
}
