/* Folding batch normalization into the convolution before it.
 *
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
 * changed; anything else leaves the pair as it is. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* consumers of each tensor (distinct nodes), and graph outputs counted too */
static uint32_t *use_counts(ir_module *m) {
    uint32_t *u = calloc(m->n_tensors ? m->n_tensors : 1, sizeof *u);
    if (!u) return NULL;
    for (uint32_t i = 0; i < m->n_nodes; i++)
        for (uint32_t k = 0; k < m->nodes[i].n_in; k++) u[m->nodes[i].in[k]]++;
    for (uint32_t i = 0; i < m->n_outputs; i++) u[m->outputs[i]]++;
    return u;
}

/* the f32 data of constant tensor t with exactly n elements, or NULL */
static float *const_f32(ir_module *m, uint32_t t, int64_t n) {
    const ir_tensor *x = &m->tensors[t];
    if (x->constant == IR_NONE || x->dtype != SYMC_F32) return NULL;
    ir_constant *k = &m->constants[x->constant];
    if (n < 0 || k->size != (size_t)n * sizeof(float)) return NULL;
    return (float *)(void *)k->data;
}

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
    uint32_t y = b->out[0];
    b->op = IR_OP_IDENTITY;
    b->n_in = 1;
    b->n_attrs = 0;
    for (uint32_t i = bn + 1; i < m->n_nodes; i++)
        for (uint32_t k = 0; k < m->nodes[i].n_in; k++)
            if (m->nodes[i].in[k] == y) m->nodes[i].in[k] = x;
    return 1;
}

symc_status pass_fold_batch_norm(ir_module *m, symc_error *err) {
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (m->nodes[i].op != IR_OP_BATCH_NORM) continue;
        uint32_t *uses = use_counts(m); /* recounted: a fold moves uses */
        if (!uses) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding batch norms");
        int r = fold_one(m, i, uses);
        free(uses);
        if (r < 0)
            return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory folding batch norm '%s'", m->nodes[i].name);
    }
    return SYMC_OK;
}
