/* The CUDA target: walks the module in node order and turns each node (or a
 * fused group) into engine steps: generated kernels, cuBLASLt GEMMs, cuDNN
 * convolutions, copies, and aliases for views.
 *
 * Fusion is decided before anything is emitted, in three passes, so later
 * decisions see earlier ones. First the library calls claim their
 * neighbours: a matmul/gemm reads a private transpose of its operand that
 * only swaps the last two axes directly, with trans_a / trans_b flipped (no
 * transpose kernel: q·kᵀ); its private result (one consumer, not a graph
 * output) feeding an add of a 1-D [N] vector takes it as its bias, and then
 * a relu or tanh-gelu on the biased result as its epilogue; with no
 * activation and no C of its own, an add of a tensor of exactly the
 * result's shape becomes C with beta = 1 (the residual: d = a·b + bias + r;
 * not after an activation, which cuBLASLt applies after C). A conv2d with
 * bias takes a following relu. Anything a library call reads must be
 * computed before the call's step, which is at the library node's place in
 * node order. Then every remaining elementwise node whose private result
 * feeds an elementwise consumer of the same shape (same expression handles)
 * is "inlined": computed inside the consumer's kernel, so a chain or tree
 * becomes one kernel rooted at its last node. Last, a group whose root's
 * private result is the data input of a row kernel (softmax, layer/rms
 * norm, a reduction over the innermost axes) is inlined into that kernel
 * too: softmax(x * s + mask) and layer_norm(x + r) are one kernel each.
 * Then a softmax or norm whose private result feeds an elementwise group of
 * its own shape and dtype (not one inlined elsewhere) takes that group as
 * its epilogue, applied before the store: gelu(softmax(x)) is one kernel.
 * And a softmax reading a layer norm of the same rows (or a norm reading a
 * softmax) computes it in its own kernel: gelu(softmax(layer_norm(x + r)))
 * reads x and r once and stores once.
 * Before all of these, attention is recognized (cuda_emit_attention.c):
 * softmax(f(Q·Kᵀ))·V with its head transposes becomes one flash-attention
 * kernel at the second matmul's place, and its nodes are claimed.
 * The walk then emits every node that is neither claimed nor inlined.
 *
 * The SM is --arch when given (parsed and checked by NVRTC), else the GPU
 * present, else sm_90. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_api.h>
#include <cudnn_version.h>

#include "codegen/cuda_emit.h"
#include "runtime/cuda/cuda_backend.h"

/* ---- library calls ------------------------------------------------------------------ */
static void init_lib_step(rt_step *s, uint8_t kind, uint32_t node, uint32_t n_tensors) {
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->node = node;
    s->per_block = 1;
    s->block = 1;
    s->n_tensors = n_tensors;
    for (uint32_t i = 0; i < RT_STEP_MAX_TENSORS; i++) s->tensors[i] = RT_NONE;
    s->alpha = 1.0f;
    s->beta = 0.0f;
}

/* The node consuming t when t is private to it and it has op `op`. */
static uint32_t private_consumer(cg_cuda *c, uint32_t t, ir_op op) {
    if (!cg_private(c, t)) return IR_NONE;
    uint32_t k = c->consumer[t];
    return c->m->nodes[k].op == op ? k : IR_NONE;
}

/* tensor t is computed before node `at`'s step runs: an input or constant,
 * or the output of an earlier node (every claim keeps a tensor's step at or
 * before its producer's place) */
static int ready_before(cg_cuda *c, uint32_t t, uint32_t at) {
    uint32_t p = c->m->tensors[t].producer;
    return p == IR_NONE || p < at || c->m->nodes[p].op == IR_OP_CONSTANT;
}

/* bias: add(t, v) or add(v, t) with v 1-D [N], N = t's last dim */
static uint32_t bias_add(cg_cuda *c, uint32_t t, uint32_t *bias) {
    uint32_t k = private_consumer(c, t, IR_OP_ADD);
    if (k == IR_NONE) return IR_NONE;
    const ir_node *n = &c->m->nodes[k];
    const ir_tensor *x = &c->m->tensors[t];
    uint32_t other = n->in[0] == t ? n->in[1] : n->in[0];
    const ir_tensor *v = &c->m->tensors[other];
    if (n->in[0] == n->in[1] || x->rank < 1 || v->rank != 1 || v->dims[0] != x->dims[x->rank - 1] ||
        v->dtype != SYMC_F32 || !cg_same_shape(x, &c->m->tensors[n->out[0]]) ||
        !ready_before(c, other, c->m->tensors[t].producer))
        return IR_NONE;
    *bias = other;
    return k;
}

/* residual: add(t, r) or add(r, t) with r of exactly t's shape and dtype,
 * computed before the library node `lib` */
static uint32_t residual_add(cg_cuda *c, uint32_t t, uint32_t lib, uint32_t *res) {
    uint32_t k = private_consumer(c, t, IR_OP_ADD);
    if (k == IR_NONE) return IR_NONE;
    const ir_node *n = &c->m->nodes[k];
    const ir_tensor *x = &c->m->tensors[t];
    uint32_t other = n->in[0] == t ? n->in[1] : n->in[0];
    const ir_tensor *r = &c->m->tensors[other];
    if (n->in[0] == n->in[1] || r->dtype != x->dtype || !cg_same_shape(r, x) ||
        !cg_same_shape(x, &c->m->tensors[n->out[0]]) || !ready_before(c, other, lib))
        return IR_NONE;
    *res = other;
    return k;
}

/* relu, or gelu with approximate = "tanh", consuming the private t */
static uint32_t activation(cg_cuda *c, uint32_t t, uint8_t *epi, int gelu_ok) {
    uint32_t k = private_consumer(c, t, IR_OP_RELU);
    if (k != IR_NONE) {
        *epi = RT_EPI_RELU;
        return k;
    }
    k = private_consumer(c, t, IR_OP_GELU);
    if (gelu_ok && k != IR_NONE && !strcmp(cg_attr_str(&c->m->nodes[k], "approximate", "none"), "tanh")) {
        *epi = RT_EPI_GELU;
        return k;
    }
    return IR_NONE;
}

/* Which library call a contraction becomes (checked again when emitting). */
static int gemm_ok(cg_cuda *c, const ir_node *n) {
    return (n->op == IR_OP_MATMUL || n->op == IR_OP_GEMM) && c->m->tensors[n->in[0]].dtype == SYMC_F32 &&
           c->m->tensors[n->in[1]].dtype == SYMC_F32;
}

/* When operand t of library GEMM node `gemm` is the private result of a
 * transpose that only swaps the last two axes, the transpose's input (the
 * GEMM reads it with the operand's trans flag flipped); else IR_NONE. */
static uint32_t folded_transpose(cg_cuda *c, uint32_t t) {
    uint32_t p = c->m->tensors[t].producer;
    if (p == IR_NONE || !cg_private(c, t)) return IR_NONE;
    const ir_node *n = &c->m->nodes[p];
    const ir_node *g = &c->m->nodes[c->consumer[t]];
    if (n->op != IR_OP_TRANSPOSE || n->n_in != 1 || !gemm_ok(c, g)) return IR_NONE;
    const ir_attr *perm = ir_node_attr(n, "perm");
    int r = c->m->tensors[n->in[0]].rank;
    if (r < 2 || !perm || perm->kind != IR_ATTR_INTS || perm->n != (uint32_t)r) return IR_NONE;
    for (int d = 0; d < r - 2; d++)
        if (perm->ints[d] != d) return IR_NONE;
    if (perm->ints[r - 2] != r - 1 || perm->ints[r - 1] != r - 2) return IR_NONE;
    return n->in[0];
}

static int conv_ok(cg_cuda *c, const ir_node *n) {
    const ir_tensor *x = &c->m->tensors[n->in[0]], *w = &c->m->tensors[n->in[1]];
    if (n->op != IR_OP_CONV2D || x->dtype != SYMC_F32 || w->dtype != SYMC_F32 || x->rank != 4 || w->rank != 4)
        return 0;
    if (n->n_in > 2 && c->m->tensors[n->in[2]].dtype != SYMC_F32) return 0;
    const ir_attr *p = ir_node_attr(n, "pads");
    return !p || (p->n == 4 && p->ints[0] == p->ints[2] && p->ints[1] == p->ints[3]);
}

/* the bias a gemm's C gives, when it is [N] or [1, N] with beta == 1 */
static int gemm_c_is_bias(cg_cuda *c, const ir_node *n) {
    if (n->n_in < 3 || cg_attr_float(n, "beta", 1.0) != 1.0) return 0;
    const ir_tensor *cc = &c->m->tensors[n->in[2]], *y = &c->m->tensors[n->out[0]];
    int64_t one;
    if (cc->rank == 1) return cc->dims[0] == y->dims[1];
    return cc->rank == 2 && sym_is_const(c->m->syms, cc->dims[0], &one) && one == 1 && cc->dims[1] == y->dims[1];
}

/* The nodes a library call absorbs: bias add, then activation, or with no
 * activation a residual add (C). */
typedef struct epilogue_plan {
    uint32_t bias, bias_node; /* tensor, add node */
    uint32_t act_node;
    uint8_t epi;
    uint32_t res, res_node; /* C = res with beta 1, add node */
    uint32_t result;        /* the tensor the call writes */
} epilogue_plan;

static void plan_epilogue(cg_cuda *c, uint32_t node, epilogue_plan *e) {
    const ir_node *n = &c->m->nodes[node];
    e->bias = e->res = RT_NONE;
    e->bias_node = e->act_node = e->res_node = IR_NONE;
    e->epi = RT_EPI_NONE;
    e->result = n->out[0];
    if (n->op == IR_OP_CONV2D) {
        if (n->n_in > 2 && (e->act_node = private_consumer(c, e->result, IR_OP_RELU)) != IR_NONE) {
            e->epi = RT_EPI_RELU;
            e->result = c->m->nodes[e->act_node].out[0];
        }
        return;
    }
    if (n->op == IR_OP_GEMM && gemm_c_is_bias(c, n)) e->bias = n->in[2];
    else if (n->op == IR_OP_MATMUL || n->n_in < 3) {
        e->bias_node = bias_add(c, e->result, &e->bias);
        if (e->bias_node != IR_NONE) e->result = c->m->nodes[e->bias_node].out[0];
    }
    if (e->bias != RT_NONE) { /* activations only follow a bias (the epilogues' BIAS forms) */
        e->act_node = activation(c, e->result, &e->epi, 1);
        if (e->act_node != IR_NONE) {
            e->result = c->m->nodes[e->act_node].out[0];
            return; /* the activation applies after C: no residual */
        }
    }
    int has_c = n->op == IR_OP_GEMM && n->n_in > 2 && !gemm_c_is_bias(c, n);
    if (has_c) return;
    e->res_node = residual_add(c, e->result, node, &e->res);
    if (e->res_node != IR_NONE) e->result = c->m->nodes[e->res_node].out[0];
}

static void plan_library_calls(cg_cuda *c) {
    for (uint32_t i = 0; i < c->m->n_nodes; i++) {
        const ir_node *n = &c->m->nodes[i];
        if (c->covered[i] || c->attention[i] || (!gemm_ok(c, n) && !conv_ok(c, n))) continue;
        if (gemm_ok(c, n))
            for (uint32_t k = 0; k < 2; k++)
                if (folded_transpose(c, n->in[k]) != IR_NONE) c->covered[c->m->tensors[n->in[k]].producer] = 1;
        epilogue_plan e;
        plan_epilogue(c, i, &e);
        if (e.bias_node != IR_NONE) c->covered[e.bias_node] = 1;
        if (e.act_node != IR_NONE) c->covered[e.act_node] = 1;
        if (e.res_node != IR_NONE) c->covered[e.res_node] = 1;
    }
}

static symc_status emit_gemm(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    epilogue_plan e;
    plan_epilogue(c, node, &e);
    rt_step s;
    init_lib_step(&s, RT_STEP_GEMM, node, 5);
    s.tensors[0] = n->in[0];
    s.tensors[1] = n->in[1];
    s.tensors[3] = e.bias;
    s.tensors[4] = e.result;
    s.epilogue = e.epi;
    s.precision = (uint8_t)c->b->opt->precision;
    if (n->op == IR_OP_GEMM) {
        s.trans_a = (uint8_t)(cg_attr_int(n, "trans_a", 0) != 0);
        s.trans_b = (uint8_t)(cg_attr_int(n, "trans_b", 0) != 0);
        s.alpha = (float)cg_attr_float(n, "alpha", 1.0);
        if (n->n_in > 2 && e.bias == RT_NONE) {
            const ir_tensor *cc = &c->m->tensors[n->in[2]], *y = &c->m->tensors[n->out[0]];
            s.beta = (float)cg_attr_float(n, "beta", 1.0);
            if (cg_same_shape(cc, y)) {
                s.tensors[2] = n->in[2];
            } else { /* materialize C at [M, N] in a temporary */
                char name[256];
                snprintf(name, sizeof name, "%s.c_full", n->name);
                uint32_t tmp;
                symc_status st = ir_add_tensor(c->m, name, y->dtype, 2, y->dims, &tmp, c->b->err);
                if (st) return st;
                n = &c->m->nodes[node]; /* tables may have moved */
                if ((st = cg_emit_broadcast_copy(c, node, n->in[2], tmp))) return st;
                s.tensors[2] = tmp;
            }
        }
    }
    if (e.res != RT_NONE) {
        s.tensors[2] = e.res;
        s.beta = 1.0f;
    }
    /* operands behind a folded transpose: read its input, flip the flag */
    uint32_t ta = folded_transpose(c, s.tensors[0]), tb = folded_transpose(c, s.tensors[1]);
    if (ta != IR_NONE) s.tensors[0] = ta, s.trans_a ^= 1;
    if (tb != IR_NONE) s.tensors[1] = tb, s.trans_b ^= 1;
    return cg_add_step(c->b, &s);
}

static symc_status emit_conv(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    epilogue_plan e;
    plan_epilogue(c, node, &e);
    rt_step s;
    init_lib_step(&s, RT_STEP_CONV, node, 4);
    s.tensors[0] = n->in[0];
    s.tensors[1] = n->in[1];
    s.tensors[2] = n->n_in > 2 ? n->in[2] : RT_NONE;
    s.tensors[3] = e.result;
    s.epilogue = e.epi;
    s.precision = (uint8_t)c->b->opt->precision;
    return cg_add_step(c->b, &s);
}

/* ---- views ---------------------------------------------------------------------------- */
static symc_status emit_view(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    uint32_t in = n->in[0], out = n->out[0];
    if (!c->is_output[out]) return cg_alias(c->b, out, in);
    /* A graph output lives in the caller's buffer. When the input is an
     * intermediate with storage of its own, let it live there instead (its
     * producer writes straight into the output: no copy). Otherwise the data
     * must move. */
    const ir_tensor *x = &c->m->tensors[in];
    int is_input = 0;
    for (uint32_t k = 0; k < c->m->n_inputs; k++) is_input |= c->m->inputs[k] == in;
    if (!is_input && !c->is_output[in] && x->constant == RT_NONE && (!c->b->aliases || c->b->aliases[in] == RT_NONE) &&
        (!c->b->aliases || c->b->aliases[out] == RT_NONE))
        return cg_alias(c->b, in, out);
    rt_step s;
    init_lib_step(&s, RT_STEP_COPY, node, 2);
    s.tensors[0] = in;
    s.tensors[1] = out;
    return cg_add_step(c->b, &s);
}

static int is_view(ir_op op) {
    return op == IR_OP_RESHAPE || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE || op == IR_OP_FLATTEN ||
           op == IR_OP_IDENTITY;
}

/* ---- the walk --------------------------------------------------------------------------- */
static symc_status emit_node(cg_cuda *c, uint32_t i) {
    const ir_node *n = &c->m->nodes[i];
    if (is_view(n->op)) return emit_view(c, i); /* any dtype: no element is touched */
    /* f16/bf16 are computed as fp32 by elementwise kernels and copied by data
     * movement; the other kernels and the library steps are fp32/fp64 */
    int half_ok = cg_is_elementwise(n->op) || (ir_op_get(n->op)->category == IR_CAT_MOVE && n->op != IR_OP_PAD) ||
                  n->op == IR_OP_SHAPE_OF;
    for (uint32_t k = 0; k < n->n_in; k++) {
        symc_status st = cg_check_dtype(c, i, n->in[k], half_ok);
        if (st) return st;
    }
    for (uint32_t k = 0; k < n->n_out; k++) {
        symc_status st = cg_check_dtype(c, i, n->out[k], half_ok);
        if (st) return st;
    }
    if (c->attention[i]) return cg_emit_attention(c, i);
    if (cg_is_elementwise(n->op)) return cg_emit_elementwise(c, i);
    switch (n->op) {
    case IR_OP_MATMUL:
    case IR_OP_GEMM: return gemm_ok(c, n) ? emit_gemm(c, i) : cg_emit_matmul_generic(c, i);
    case IR_OP_CONV2D: return conv_ok(c, n) ? emit_conv(c, i) : cg_emit_conv_direct(c, i);
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_MAX: return cg_emit_reduce(c, i);
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX: return cg_emit_softmax(c, i);
    case IR_OP_LAYER_NORM:
    case IR_OP_RMS_NORM: return cg_emit_norm(c, i);
    case IR_OP_BATCH_NORM: return cg_emit_batch_norm(c, i);
    case IR_OP_MAX_POOL2D:
    case IR_OP_AVG_POOL2D: return cg_emit_pool(c, i);
    case IR_OP_GLOBAL_AVG_POOL: return cg_emit_global_avg_pool(c, i);
    default: return cg_emit_move(c, i);
    }
}

static void plan_inlining(cg_cuda *c) {
    for (uint32_t i = 0; i < c->m->n_nodes; i++) {
        const ir_node *n = &c->m->nodes[i];
        if (c->covered[i] || !cg_is_elementwise(n->op) || n->n_out != 1 || !cg_private(c, n->out[0])) continue;
        uint32_t k = c->consumer[n->out[0]];
        const ir_node *cn = &c->m->nodes[k];
        if (c->covered[k] || !cg_is_elementwise(cn->op)) continue;
        if (cg_same_shape(&c->m->tensors[n->out[0]], &c->m->tensors[cn->out[0]])) c->inlined[i] = 1;
    }
}

/* An elementwise group whose root's private result is the data input of a
 * row kernel is computed inside it (cg_emit_value). Groups with many leaves
 * stay kernels of their own, leaving the row kernel room for parameters. */
static void plan_row_inputs(cg_cuda *c) {
    for (uint32_t i = 0; i < c->m->n_nodes; i++) {
        if (c->covered[i] || c->inlined[i] || !cg_row_kernel(c, i)) continue;
        uint32_t t = c->m->nodes[i].in[0], p = c->m->tensors[t].producer;
        if (p == IR_NONE || c->covered[p] || c->inlined[p] || !cg_is_elementwise(c->m->nodes[p].op) ||
            !cg_private(c, t) || !cg_group_fits(c, p, 32))
            continue;
        c->inlined[p] = 1;
    }
}

/* leaves of the elementwise group rooted at `node` (through inlined
 * producers) are all computed before node `at`'s step, except `skip` */
static int group_ready(cg_cuda *c, uint32_t node, uint32_t at, uint32_t skip, int depth) {
    const ir_node *n = &c->m->nodes[node];
    if (depth > 64) return 0;
    for (uint32_t k = 0; k < n->n_in; k++) {
        uint32_t t = n->in[k], p = c->m->tensors[t].producer;
        if (t == skip) continue;
        if (p != IR_NONE && c->inlined[p]) {
            if (!group_ready(c, p, at, skip, depth + 1)) return 0;
        } else if (!ready_before(c, t, at)) {
            return 0;
        }
    }
    return 1;
}

/* A row kernel whose output (per element: softmax, log_softmax, layer/rms
 * norm) is private to an elementwise group of the same shape and dtype
 * applies that group before its store (an epilogue: gelu(softmax(x)), a
 * scale after layer_norm): the group's root is covered, its output written
 * by the row kernel, and the intermediate never stored. The group's other
 * leaves must be ready at the row kernel's place in node order. */
static void plan_epilogues(cg_cuda *c) {
    for (uint32_t i = 0; i < c->m->n_nodes; i++) {
        const ir_node *n = &c->m->nodes[i];
        int per_elem = n->op == IR_OP_SOFTMAX || n->op == IR_OP_LOG_SOFTMAX || n->op == IR_OP_LAYER_NORM ||
                       n->op == IR_OP_RMS_NORM;
        if (!per_elem || c->covered[i] || c->inlined[i] || !cg_row_kernel(c, i) || n->n_out != 1) continue;
        uint32_t y = n->out[0];
        if (!cg_private(c, y)) continue;
        uint32_t r = c->consumer[y];
        for (int hops = 0; r != IR_NONE && c->inlined[r] && hops < 256; hops++) {
            uint32_t t = c->m->nodes[r].out[0];
            r = cg_private(c, t) ? c->consumer[t] : IR_NONE;
        }
        if (r == IR_NONE || c->inlined[r] || c->covered[r] || !cg_is_elementwise(c->m->nodes[r].op) ||
            c->m->nodes[r].n_out != 1)
            continue;
        const ir_tensor *yt = &c->m->tensors[y], *zt = &c->m->tensors[c->m->nodes[r].out[0]];
        if (!cg_same_shape(yt, zt) || yt->dtype != zt->dtype || !cg_group_fits(c, r, 24) ||
            !group_ready(c, r, i, y, 0))
            continue;
        c->epilogue[i] = r;
        c->covered[r] = 1;
    }
}

/* A softmax after a layer norm (or a norm after a softmax) over the same
 * rows computes the first op in its own kernel (cg_row_chain_ok): one read
 * of the input, one store, the intermediate never written. */
static void plan_row_chains(cg_cuda *c) {
    for (uint32_t i = 0; i < c->m->n_nodes; i++) {
        if (c->covered[i] || c->inlined[i] || c->m->nodes[i].n_in < 1) continue;
        uint32_t a = c->m->tensors[c->m->nodes[i].in[0]].producer;
        if (a == IR_NONE || c->covered[a] || c->inlined[a] || c->row_first[a] != IR_NONE ||
            !cg_row_chain_ok(c, a, i))
            continue;
        c->row_first[i] = a;
        c->covered[a] = 1;
    }
}

static symc_status resolve_sm(cg_builder *b) {
    if (b->opt->arch) return cg_nvrtc_parse_arch(b->opt->arch, &b->sm, b->err);
    uint32_t sm = 0;
    symc_error ignored;
    if (rt_cuda_device_sm(&sm, &ignored) == SYMC_OK && sm) { /* fails cleanly without a GPU */
        char arch[32];
        snprintf(arch, sizeof arch, "sm_%u", sm);
        if (cg_nvrtc_parse_arch(arch, &sm, &ignored) == SYMC_OK) b->sm = sm;
    }
    if (!b->sm) b->sm = 90; /* no GPU, or one NVRTC does not know: sm_90 */
    return SYMC_OK;
}

static symc_status emit(cg_builder *b) {
    symc_status st = resolve_sm(b);
    if (st) return st;
    cg_nvrtc_version(b->cuda_version, sizeof b->cuda_version);
    snprintf(b->cublas_version, sizeof b->cublas_version, "%d.%d.%d", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR,
             CUBLAS_VER_PATCH);
    snprintf(b->cudnn_version, sizeof b->cudnn_version, "%d.%d.%d", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);

    ir_module *m = b->m;
    cg_cuda c = {.b = b, .m = m, .n_tensors = m->n_tensors};
    uint32_t nt = m->n_tensors ? m->n_tensors : 1, nn = m->n_nodes ? m->n_nodes : 1;
    c.n_consumers = calloc(nt, sizeof *c.n_consumers);
    c.consumer = calloc(nt, sizeof *c.consumer);
    c.is_output = calloc(nt, 1);
    c.covered = calloc(nn, 1);
    c.inlined = calloc(nn, 1);
    c.epilogue = malloc(nn * sizeof *c.epilogue);
    c.attention = calloc(nn, 1);
    c.row_first = malloc(nn * sizeof *c.row_first);
    if (!c.n_consumers || !c.consumer || !c.is_output || !c.covered || !c.inlined || !c.epilogue || !c.attention || !c.row_first) {
        st = symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA code");
        goto done;
    }
    for (uint32_t i = 0; i < nn; i++) c.epilogue[i] = c.row_first[i] = IR_NONE;
    for (uint32_t i = 0; i < m->n_outputs; i++) c.is_output[m->outputs[i]] = 1;
    /* dead nodes (no output reaches a graph output, e.g. a batch norm folded
     * into its conv) are neither emitted nor counted as consumers; consumers
     * come after producers, so one backward walk finds them */
    uint8_t *used = calloc(nt, 1);
    if (!used) {
        st = symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA code");
        goto done;
    }
    for (uint32_t i = m->n_nodes; i-- > 0;) {
        const ir_node *n = &m->nodes[i];
        int live = 0;
        for (uint32_t k = 0; k < n->n_out; k++) live |= c.is_output[n->out[k]] || used[n->out[k]];
        if (!live) c.covered[i] = 1;
        else
            for (uint32_t k = 0; k < n->n_in; k++) used[n->in[k]] = 1;
    }
    free(used);
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        if (c.covered[i]) continue; /* dead */
        for (uint32_t k = 0; k < n->n_in; k++) {
            uint32_t t = n->in[k];
            if (c.n_consumers[t] && c.consumer[t] == i) continue; /* the same node again */
            c.n_consumers[t]++;
            c.consumer[t] = i;
        }
    }
    cg_plan_attention(&c);
    plan_library_calls(&c);
    plan_inlining(&c);
    plan_row_inputs(&c);
    plan_epilogues(&c);
    plan_row_chains(&c);
    if ((st = cg_emit_prelude(&c))) goto done;
    for (uint32_t i = 0; i < m->n_nodes && !st; i++) {
        if (m->nodes[i].op == IR_OP_CONSTANT || c.covered[i] || c.inlined[i]) continue;
        st = emit_node(&c, i);
    }
    if (!st && b->failed) st = SYMC_ERR_NOMEM;
done:
    free(c.n_consumers);
    free(c.consumer);
    free(c.is_output);
    free(c.covered);
    free(c.inlined);
    free(c.epilogue);
    free(c.attention);
    free(c.row_first);
    return st;
}

static symc_status compile(cg_builder *b) {
    return cg_nvrtc_compile(b->source ? b->source : "", b->sm, b->n_kernels, &b->cubin, &b->cubin_size, &b->ptx,
                            b->err);
}

const cg_target cg_target_cuda = {"cuda", emit, compile};
