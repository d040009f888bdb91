/* Folding constant scales into the contraction before them: two folds.
 *
 * Batch normalization into the convolution before it (pass_fold_batch_norm).
 * Inference-mode batch_norm(conv(x, W) [+ b]) with every parameter a
 * constant is conv(x, W') + b' with, per output channel o,
 *   s = scale[o] / sqrt(var[o] + eps),  W'[o] = W[o] * s,
 *   b'[o] = (b[o] - mean[o]) * s + beta[o]     (b = 0 without a bias),
 * computed in double and rounded once. The conv then runs as one library
 * call that also takes the following ReLU (cuDNN's fused bias+activation),
 * instead of a convolution, a batch-norm pass and a ReLU pass over the
 * activation. The rewrite happens in place, so node order (constants before
 * their users) is kept: W's data is scaled where it is stored, the bias
 * goes into the conv's own bias or, when it has none, into the data of the
 * batch norm's beta (whose constant node moves before the conv), the batch
 * norm becomes an identity of the conv's result, and its consumers read
 * the conv's result directly. Only constants that nothing else reads are
 * changed; anything else leaves the pair as it is.
 *
 * A per-column scale after a matmul into its weights (pass_fold_scale):
 * ConvNeXt's layer scale, g * (x @ W + b). mul(add(matmul(a, W), b), g),
 * mul(matmul(a, W), g) and the same with a gemm (whose constant C is
 * scaled like b; trans_b picks W's axis of N) become the contraction with
 *   W'[k][j] = W[k][j] * g[j],  b'[j] = b[j] * g[j],
 * in double, rounded once to the constants' dtype (f32, f16, bf16, f64;
 * read and written with symc_dtype_load/store), and the mul becomes an
 * identity whose readers read the add (or matmul) directly. A residual add
 * after it is then the GEMM's C for the CUDA target's fuse pass (fuse.c,
 * round 3): the block's tail is one library call. It folds only when it is
 * exact up to that one rounding, and leaves the nodes alone otherwise:
 * W 2-D, b, C and g constants of the same float dtype whose every dim but
 * the last is 1 (last N, or 1 for a scalar; a scalar bias only with a
 * scalar g), g not changing the mul's output shape (a rank-4 [1,1,1,N] on a
 * rank-2 product broadcasts it up), the matmul's and add's results read by
 * the next node only, W, b and C read by nothing else (they change in
 * place; g is only read), every value finite before and after the scaling
 * (an f16 product over 65504 would overflow), and no column of W' whose
 * largest value falls below the dtype's smallest normal (a tiny g would
 * leave the column only subnormal precision). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* the data of constant tensor t of dtype dt with exactly n elements, or NULL */
static void *const_data(ir_module *m, uint32_t t, symc_dtype dt, int64_t n) {
    const ir_tensor *x = &m->tensors[t];
    if (x->constant == IR_NONE || x->dtype != dt) return NULL;
    ir_constant *k = &m->constants[x->constant];
    if (n < 0 || k->size != (size_t)n * symc_dtype_size(dt)) return NULL;
    return k->data;
}

/* the f32 data of constant tensor t with exactly n elements, or NULL */
static float *const_f32(ir_module *m, uint32_t t, int64_t n) { return const_data(m, t, SYMC_F32, n); }

/* the constant-pool entry of t is used by t alone */
static int pool_private(const ir_module *m, uint32_t t) {
    uint32_t c = m->tensors[t].constant, n = 0;
    for (uint32_t i = 0; i < m->n_tensors; i++) n += m->tensors[i].constant == c;
    return n == 1;
}

/* Moves node j (a constant: no inputs) to position i < j, shifting nodes
 * i..j-1 up by one and renumbering their outputs' producers. */
static void move_constant_before(ir_module *m, uint32_t j, uint32_t i) {
    ir_node moved = m->nodes[j];
    memmove(&m->nodes[i + 1], &m->nodes[i], (size_t)(j - i) * sizeof *m->nodes);
    m->nodes[i] = moved;
    for (uint32_t k = i; k <= j; k++)
        for (uint32_t o = 0; o < m->nodes[k].n_out; o++) m->tensors[m->nodes[k].out[o]].producer = k;
}

/* Node i (one output) becomes an identity of x, its in[0]..; the nodes after
 * it that read its output read x instead (a graph output keeps the identity). */
static void make_identity(ir_module *m, uint32_t i, uint32_t x) {
    ir_node *n = &m->nodes[i];
    uint32_t y = n->out[0];
    n->op = IR_OP_IDENTITY;
    n->in[0] = x;
    n->n_in = 1;
    n->n_attrs = 0;
    for (uint32_t j = i + 1; j < m->n_nodes; j++)
        for (uint32_t k = 0; k < m->nodes[j].n_in; k++)
            if (m->nodes[j].in[k] == y) m->nodes[j].in[k] = x;
}

static int fold_one(ir_module *m, uint32_t bn, const uint32_t *uses) {
    ir_node *b = &m->nodes[bn]; /* stays put: only nodes before it move */
    if (b->op != IR_OP_BATCH_NORM || b->n_in != 5 || b->n_out != 1) return 0;
    uint32_t x = b->in[0], cv = m->tensors[x].producer;
    if (cv == IR_NONE || uses[x] != 1) return 0;
    ir_node *c = &m->nodes[cv];
    if (c->op != IR_OP_CONV2D || c->n_out != 1 || c->n_in < 2) return 0;
    const ir_tensor *wt = &m->tensors[c->in[1]];
    int64_t dims[4], numel = 1;
    if (wt->rank != 4) return 0;
    for (int d = 0; d < 4; d++) {
        if (!sym_is_const(m->syms, wt->dims[d], &dims[d])) return 0;
        numel *= dims[d];
    }
    int64_t C = dims[0], per = C ? numel / C : 0;
    float *w = const_f32(m, c->in[1], numel);
    float *scale = const_f32(m, b->in[1], C), *beta = const_f32(m, b->in[2], C);
    float *mean = const_f32(m, b->in[3], C), *var = const_f32(m, b->in[4], C);
    if (!w || !scale || !beta || !mean || !var || uses[c->in[1]] != 1 || !pool_private(m, c->in[1])) return 0;
    /* where the folded bias goes */
    uint32_t bias_t;
    float *bias;
    if (c->n_in >= 3) {
        bias_t = c->in[2];
        bias = const_f32(m, bias_t, C);
    } else {
        bias_t = b->in[2];
        bias = beta;
    }
    if (!bias || uses[bias_t] != 1 || !pool_private(m, bias_t) || bias_t == b->in[1] || bias_t == b->in[3] ||
        bias_t == b->in[4])
        return 0;
    uint32_t bp = m->tensors[bias_t].producer;
    if (c->n_in < 3 && bp != IR_NONE && (m->nodes[bp].op != IR_OP_CONSTANT || bp > bn)) return 0;
    double eps = 1e-5;
    const ir_attr *ea = ir_node_attr(b, "epsilon");
    if (ea && ea->kind == IR_ATTR_FLOAT) eps = ea->f;
    uint32_t *in3 = NULL;
    if (c->n_in < 3) {
        in3 = ir_alloc(m, 3 * sizeof *in3);
        if (!in3) return -1;
    }
    for (int64_t o = 0; o < C; o++) {
        double s = (double)scale[o] / sqrt((double)var[o] + eps);
        for (int64_t i = 0; i < per; i++) w[o * per + i] = (float)((double)w[o * per + i] * s);
        double b0 = c->n_in >= 3 ? (double)bias[o] : 0.0;
        bias[o] = (float)((b0 - (double)mean[o]) * s + (double)beta[o]);
    }
    if (in3) {
        /* beta becomes the conv's bias: its constant node must come first */
        uint32_t p = m->tensors[bias_t].producer;
        if (p != IR_NONE && p > cv) {
            move_constant_before(m, p, cv);
            c = &m->nodes[++cv];
        }
        in3[0] = c->in[0];
        in3[1] = c->in[1];
        in3[2] = bias_t;
        c->in = in3;
        c->n_in = 3;
    }
    /* the batch norm becomes an identity; its consumers read the conv */
    make_identity(m, bn, x);
    return 1;
}

symc_status pass_fold_batch_norm(ir_module *m, symc_error *err) {
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (m->nodes[i].op != IR_OP_BATCH_NORM) continue;
        uint32_t *uses = ir_uses_counts(m); /* recounted: a fold moves uses */
        if (!uses) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding batch norms");
        int r = fold_one(m, i, uses);
        free(uses);
        if (r < 0)
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding batch norm '%s'", m->nodes[i].name);
    }
    return SYMC_OK;
}

/* ---- a per-column scale after a matmul ------------------------------------------------------ */
/* The smallest normal magnitude of a float dtype (0: not one the fold handles). */
static double min_normal(symc_dtype dt) {
    switch (dt) {
    case SYMC_F16: return 0x1p-14;
    case SYMC_BF16:
    case SYMC_F32: return 0x1p-126;
    case SYMC_F64: return 0x1p-1022;
    default: return 0.0;
    }
}

/* Constant t of dtype dt broadcast along the last axis only, against a result of rank `rank`
 * whose last dim is n: rank <= `rank`, constant dims, all 1 but the last, the last n or 1.
 * Returns the element count (n or 1), or 0 when t is not such a constant. */
static int64_t last_axis_len(ir_module *m, uint32_t t, symc_dtype dt, int32_t rank, int64_t n) {
    const ir_tensor *x = &m->tensors[t];
    if (x->constant == IR_NONE || x->dtype != dt || x->rank < 0 || x->rank > rank) return 0;
    int64_t last = 1;
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t v;
        if (!sym_is_const(m->syms, x->dims[d], &v)) return 0;
        if (d < x->rank - 1 && v != 1) return 0;
        if (d == x->rank - 1) last = v;
    }
    if (last != 1 && last != n) return 0;
    return const_data(m, t, dt, last) ? last : 0;
}

/* The matmul or gemm making x (a private result), with an optional private add of a constant
 * in between: *lin the contraction, *add the add node or IR_NONE, *bias its constant. */
static int find_contraction(ir_module *m, const uint32_t *uses, uint32_t x, uint32_t *lin, uint32_t *add,
                            uint32_t *bias) {
    uint32_t p = m->tensors[x].producer;
    if (p == IR_NONE || uses[x] != 1 || m->nodes[p].n_out != 1) return 0;
    const ir_node *n = &m->nodes[p];
    *add = *bias = IR_NONE;
    if (n->op == IR_OP_ADD && n->n_in == 2) {
        for (int s = 0; s < 2; s++) {
            uint32_t y = n->in[s], c = n->in[1 - s], q = m->tensors[y].producer;
            if (ir_constant_source(m, c) == IR_NONE || q == IR_NONE || uses[y] != 1 || m->nodes[q].n_out != 1 ||
                (m->nodes[q].op != IR_OP_MATMUL && m->nodes[q].op != IR_OP_GEMM))
                continue;
            *lin = q, *add = p, *bias = c;
            return 1;
        }
        return 0;
    }
    *lin = p;
    return n->op == IR_OP_MATMUL || n->op == IR_OP_GEMM;
}

/* Scales the n values of constant t (dtype dt, count len: n or 1) by g (length n), into a new
 * buffer *out; 0 when a value is not finite before or after. */
static int scale_vector(ir_module *m, uint32_t t, symc_dtype dt, int64_t len, const double *g, uint8_t **out) {
    const void *src = m->constants[m->tensors[t].constant].data;
    size_t es = symc_dtype_size(dt);
    *out = malloc((size_t)len * es);
    if (!*out) return -1;
    for (int64_t j = 0; j < len; j++) {
        double v = symc_dtype_load(src, dt, (size_t)j) * g[j];
        symc_dtype_store(*out, dt, (size_t)j, v);
        if (!isfinite(v) || !isfinite(symc_dtype_load(*out, dt, (size_t)j))) return 0;
    }
    return 1;
}

/* The add node `add` reads a new constant tensor like b holding `data` (taken, also on
 * failure) instead of b, made by a constant node moved right before the add. 1 done, -1 out of
 * memory or a module error. */
static int copy_bias(ir_module *m, uint32_t add, uint32_t b, uint8_t *data, size_t size) {
    symc_error err;
    uint32_t pool, t, node;
    if (ir_add_constant(m, data, size, &pool, &err)) return -1;
    char name[512];
    uint32_t found;
    const char *bn = m->tensors[b].name ? m->tensors[b].name : "bias";
    snprintf(name, sizeof name, "%s.scaled", bn);
    for (unsigned k = 2; (ir_find_tensor(m, name, &found) || ir_find_node(m, name, &found)) && k < 1000000; k++)
        snprintf(name, sizeof name, "%s.scaled.%u", bn, k);
    sym_expr dims[IR_MAX_RANK];
    int32_t rank = m->tensors[b].rank;
    for (int32_t d = 0; d < rank && d < IR_MAX_RANK; d++) dims[d] = m->tensors[b].dims[d];
    if (ir_add_tensor(m, name, m->tensors[b].dtype, rank, rank > 0 ? dims : NULL, &t, &err)) return -1;
    m->tensors[t].constant = pool;
    if (ir_add_node(m, IR_OP_CONSTANT, name, "fold-scale", NULL, 0, &t, 1, NULL, 0, &node, &err)) return -1;
    move_constant_before(m, node, add);
    ir_node *a = &m->nodes[add + 1];
    for (uint32_t k = 0; k < a->n_in; k++)
        if (a->in[k] == b) a->in[k] = t;
    return 1;
}

/* Folds mul node mi when it is a per-column scale of a contraction; 1 folded, 0 left alone, -1
 * out of memory. */
static int fold_scale_one(ir_module *m, uint32_t mi, const uint32_t *uses) {
    const ir_node *mul = &m->nodes[mi];
    if (mul->op != IR_OP_MUL || mul->n_in != 2 || mul->n_out != 1) return 0;
    uint32_t x = IR_NONE, gt = IR_NONE, lin = IR_NONE, add = IR_NONE, bias[2] = {IR_NONE, IR_NONE};
    for (int s = 0; s < 2 && x == IR_NONE; s++)
        if (ir_constant_source(m, mul->in[1 - s]) != IR_NONE &&
            find_contraction(m, uses, mul->in[s], &lin, &add, &bias[0])) {
            x = mul->in[s];
            gt = mul->in[1 - s];
        }
    if (x == IR_NONE) return 0;
    const ir_node *c = &m->nodes[lin];
    const ir_tensor *y = &m->tensors[c->out[0]], *xo = &m->tensors[x], *mo = &m->tensors[mul->out[0]];
    symc_dtype dt = y->dtype;
    double tiny = min_normal(dt);
    /* the contraction: W = in[1], 2-D, constant; a gemm's C a second bias */
    int tb = 0;
    if (c->op == IR_OP_GEMM) {
        const ir_attr *a = ir_node_attr(c, "trans_b");
        tb = a && a->kind == IR_ATTR_INT && a->i != 0;
        if (c->n_in > 2) bias[1] = c->in[2];
    } else if (c->n_in != 2) return 0;
    const ir_tensor *w = &m->tensors[c->in[1]];
    int64_t K, N, wd[2];
    if (tiny == 0.0 || w->rank != 2 || y->rank < 1 || !sym_is_const(m->syms, w->dims[0], &wd[0]) ||
        !sym_is_const(m->syms, w->dims[1], &wd[1]) || !sym_is_const(m->syms, y->dims[y->rank - 1], &N))
        return 0;
    K = wd[tb ? 1 : 0];
    if (N != wd[tb ? 0 : 1] || N < 1 || !const_data(m, c->in[1], dt, K * N)) return 0;
    /* shapes and dtypes unchanged: the add and the mul keep the contraction's shape */
    if ((add != IR_NONE && !ir_same_shape(y, &m->tensors[m->nodes[add].out[0]])) || !ir_same_shape(xo, mo) ||
        xo->dtype != dt || mo->dtype != dt)
        return 0;
    /* g and the add's bias may be identities of constants (exporters share equal initializers
     * that way): their values are read where they are stored */
    gt = ir_constant_source(m, gt);
    int64_t glen = last_axis_len(m, gt, dt, mo->rank, N), blen[2] = {0, 0};
    if (!glen) return 0;
    /* W and the gemm's C change in place, so nothing else may read them; the add's bias is
     * replaced by a new constant when anything else reads it (copy_b); g is only read */
    uint32_t wt = c->in[1], bsrc[2] = {bias[0] != IR_NONE ? ir_constant_source(m, bias[0]) : IR_NONE, bias[1]};
    if (uses[wt] != 1 || !pool_private(m, wt) || wt == gt) return 0;
    int copy_b = bias[0] != IR_NONE && (bsrc[0] != bias[0] || uses[bias[0]] != 1 || !pool_private(m, bias[0]));
    for (int k = 0; k < 2; k++) {
        if (bias[k] == IR_NONE) continue;
        blen[k] = last_axis_len(m, bsrc[k], dt, k ? 2 : y->rank, N);
        if (!blen[k] || (blen[k] == 1 && glen == N && N > 1) || bsrc[k] == wt ||
            (k == 1 && (uses[bias[k]] != 1 || !pool_private(m, bias[k]) || bias[k] == gt)))
            return 0;
    }
    /* the scaled values, in new buffers until every check has passed */
    double *g = malloc((size_t)N * sizeof *g);
    size_t es = symc_dtype_size(dt);
    uint8_t *nw = malloc((size_t)(K * N) * es), *nb[2] = {NULL, NULL};
    int ok = g && nw ? 1 : -1;
    const void *gd = m->constants[m->tensors[gt].constant].data, *wsrc = m->constants[w->constant].data;
    for (int64_t j = 0; ok == 1 && j < N; j++) {
        g[j] = symc_dtype_load(gd, dt, (size_t)(glen == 1 ? 0 : j));
        if (!isfinite(g[j])) ok = 0;
    }
    for (int64_t j = 0; ok == 1 && j < N; j++) {
        double colmax = 0.0;
        for (int64_t k = 0; ok == 1 && k < K; k++) {
            size_t at = (size_t)(tb ? j * K + k : k * N + j);
            double v = symc_dtype_load(wsrc, dt, at) * g[j];
            symc_dtype_store(nw, dt, at, v);
            if (!isfinite(v) || !isfinite(symc_dtype_load(nw, dt, at))) ok = 0;
            if (fabs(v) > colmax) colmax = fabs(v);
        }
        if (colmax > 0.0 && colmax < tiny) ok = 0;
    }
    for (int k = 0; k < 2 && ok == 1; k++)
        if (bias[k] != IR_NONE) ok = scale_vector(m, bsrc[k], dt, blen[k], g, &nb[k]);
    if (ok == 1 && copy_b) { /* the add reads a new constant made right before it */
        ok = copy_bias(m, add, bias[0], nb[0], (size_t)blen[0] * es);
        nb[0] = NULL; /* taken */
        if (ok == 1 && add < mi) mi++;
    }
    if (ok == 1) {
        memcpy(m->constants[m->tensors[wt].constant].data, nw, (size_t)(K * N) * es);
        for (int k = copy_b; k < 2; k++)
            if (bias[k] != IR_NONE)
                memcpy(m->constants[m->tensors[bias[k]].constant].data, nb[k], (size_t)blen[k] * es);
        make_identity(m, mi, x);
    }
    free(g);
    free(nw);
    free(nb[0]);
    free(nb[1]);
    return ok;
}

symc_status pass_fold_scale(ir_module *m, symc_error *err) {
    uint32_t *uses = NULL;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (m->nodes[i].op != IR_OP_MUL) continue;
        if (!uses && !(uses = ir_uses_counts(m)))
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding scales into matmuls");
        int r = fold_scale_one(m, i, uses);
        if (r < 0) {
            free(uses);
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding the scale '%s' into its matmul",
                                   m->nodes[i].name);
        }
        if (r > 0) { /* recounted: the mul's readers moved to its input */
            free(uses);
            uses = NULL;
        }
    }
    free(uses);
    return SYMC_OK;
}
