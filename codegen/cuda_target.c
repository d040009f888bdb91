/* The CUDA target: walks the module in node order and turns each group of
 * its fusion plan into engine steps: generated kernels, cuBLASLt GEMMs,
 * cuDNN convolutions, copies, and aliases for views.
 *
 * Which nodes run together is the fuse pass's decision (passes/fuse.c),
 * stored in the module (m->fuse: a role and a group root per node) and
 * checked by the verifier. The target answers the pass's questions about
 * what it can run fused (cuda_fuse_rules below, given to the pipeline by the
 * driver through cg_fuse_rules): which contractions run as a library call
 * (f32 GEMMs on cuBLASLt, f32 2-D convolutions with symmetric pads on
 * cuDNN), what their epilogues take (a transpose of the last two axes read
 * through trans_a / trans_b; an f32 bias vector; relu, or tanh-gelu after a
 * GEMM bias, relu after a convolution's own bias; a residual as the GEMM's
 * C with beta 1, unless the gemm has a C of its own), which nodes are row
 * kernels (cuda_emit_reduce.c: cg_row_kernel, cg_row_chain_ok), how large a
 * group computed inside a row kernel may be, and the largest head dim its
 * flash attention kernel runs (cuda_emit_attention.c emits every pattern
 * passes/fuse_attention.c matches up to it). A module without a plan
 * (cg_build_engine called without the pipeline, as tests do, or after a
 * pipeline run without rules) is planned here with the same rules, for this
 * build only, so the generated code is the same either way.
 *
 * The walk emits every root of the plan: a plain step (an elementwise
 * group with its inlined nodes, a row kernel with its inlined input, its
 * epilogue and its row-first op, any other kernel, a copy or an alias), a
 * library call (reading its members: transposes, bias, activation,
 * residual), or a fused attention. Members and dead nodes emit nothing.
 * The ops whose output size depends on the data (nonzero, nms, unique
 * without an axis) are cuda_emit_select.c's: each adds a count cell the
 * backend reads after the producer (cg_count_cell); unique with an axis is
 * refused (reference backend only).
 *
 * A library convolution with a 1x1 kernel, stride 1, no padding and one
 * group is a GEMM per image on NCHW data (Y[b] = W X[b]): it becomes a
 * cuBLASLt GEMM step on the conv2d node (a = w, b = x, c = the residual with
 * beta 1, the per-channel bias, the activation; runtime/cuda/cuda_gemm.c
 * says how the bias lands on the channels), since cuDNN runs NCHW half
 * convolutions far below the tensor cores' rate. Any other convolution stays
 * on cuDNN. fp32 storage goes the same way: the step's precision gives the
 * GEMM the math cuDNN would use (FP32: no TF32 in either; TF32: TF32 in
 * both; FP16/BF16: operands rounded in both).
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

/* Which library call a contraction becomes: cuBLASLt for GEMMs, cuDNN for 2-D
 * convolutions with symmetric pads, when every operand has one dtype: f32,
 * or f16/bf16 storage (fp32 accumulation in both libraries). */
static int lib_dtype(symc_dtype dt) { return dt == SYMC_F32 || dt == SYMC_F16 || dt == SYMC_BF16; }

static int same_lib_dtype(const ir_module *m, const ir_node *n) {
    symc_dtype dt = m->tensors[n->out[0]].dtype;
    for (uint32_t i = 0; i < n->n_in; i++)
        if (m->tensors[n->in[i]].dtype != dt) return 0;
    return lib_dtype(dt);
}

static int gemm_ok(const ir_module *m, const ir_node *n) {
    return (n->op == IR_OP_MATMUL || n->op == IR_OP_GEMM) && same_lib_dtype(m, n);
}

static int conv_ok(const ir_module *m, const ir_node *n) {
    const ir_tensor *x = &m->tensors[n->in[0]], *w = &m->tensors[n->in[1]];
    if (n->op != IR_OP_CONV2D || !same_lib_dtype(m, n) || x->rank != 4 || w->rank != 4) return 0;
    const ir_attr *p = ir_node_attr(n, "pads");
    return !p || (p->n == 4 && p->ints[0] == p->ints[2] && p->ints[1] == p->ints[3]);
}

/* A convolution a GEMM computes (the top): conv_ok, a 1x1 kernel, strides 1, no pads, one group
 * (dilations do not matter for a 1x1 kernel), a bias of [Cout] when there is one. */
static int ints_all(const ir_node *n, const char *name, uint32_t count, int64_t want) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a) return 1;
    if (a->kind != IR_ATTR_INTS || a->n != count) return 0;
    for (uint32_t i = 0; i < count; i++)
        if (a->ints[i] != want) return 0;
    return 1;
}

int cg_conv_is_gemm(const ir_module *m, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    if (!conv_ok(m, n)) return 0;
    const ir_tensor *w = &m->tensors[n->in[1]];
    int64_t kh, kw;
    if (!sym_is_const(m->syms, w->dims[2], &kh) || !sym_is_const(m->syms, w->dims[3], &kw) || kh != 1 || kw != 1)
        return 0;
    if (!ints_all(n, "strides", 2, 1) || !ints_all(n, "pads", 4, 0) || cg_attr_int(n, "group", 1) != 1) return 0;
    return n->n_in < 3 || m->tensors[n->in[2]].rank == 1;
}

/* the bias a gemm's C gives, when it is [N] or [1, N] with beta == 1 */
static int gemm_c_is_bias(const ir_module *m, const ir_node *n) {
    if (n->n_in < 3 || cg_attr_float(n, "beta", 1.0) != 1.0) return 0;
    const ir_tensor *cc = &m->tensors[n->in[2]], *y = &m->tensors[n->out[0]];
    int64_t one;
    if (cc->rank == 1) return cc->dims[0] == y->dims[1];
    return cc->rank == 2 && sym_is_const(m->syms, cc->dims[0], &one) && one == 1 && cc->dims[1] == y->dims[1];
}

/* a transpose that only swaps the last two axes (a GEMM reads its input
 * with the operand's trans flag flipped: no transpose kernel, q·kᵀ) */
static int swaps_last_two(const ir_module *m, const ir_node *n) {
    if (n->op != IR_OP_TRANSPOSE || n->n_in != 1) return 0;
    const ir_attr *perm = ir_node_attr(n, "perm");
    int r = m->tensors[n->in[0]].rank;
    if (r < 2 || !perm || perm->kind != IR_ATTR_INTS || perm->n != (uint32_t)r) return 0;
    for (int d = 0; d < r - 2; d++)
        if (perm->ints[d] != d) return 0;
    return perm->ints[r - 2] == r - 1 && perm->ints[r - 1] == r - 2;
}

/* ---- what the target can fuse: the fuse pass's questions --------------------------------- */
static int rule_library(ir_module *m, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    return gemm_ok(m, n) || (conv_ok(m, n) && !cg_conv_is_depthwise(m, node));
}

static int rule_library_has_bias(ir_module *m, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    return n->op == IR_OP_CONV2D ? n->n_in > 2 : n->op == IR_OP_GEMM && gemm_c_is_bias(m, n);
}

static int rule_library_takes(ir_module *m, uint32_t lib, uint32_t k, ir_fuse_role role) {
    const ir_node *n = &m->nodes[lib], *kn = &m->nodes[k];
    int gemm = gemm_ok(m, n), own_c = n->op == IR_OP_GEMM && n->n_in > 2;
    switch (role) {
    case IR_FUSE_TRANSPOSE: return gemm && swaps_last_two(m, kn);
    case IR_FUSE_BIAS: { /* cuBLASLt's bias epilogue: a vector of D's dtype, for a GEMM without a C */
        uint32_t v = kn->in[0] == n->out[0] ? kn->in[1] : kn->in[0];
        return gemm && !own_c && m->tensors[v].dtype == m->tensors[n->out[0]].dtype;
    }
    case IR_FUSE_ACTIVATION: /* cuBLASLt: relu or tanh-gelu after a bias; cuDNN: relu */
        return kn->op == IR_OP_RELU ||
            (gemm && kn->op == IR_OP_GELU && !strcmp(cg_attr_str(kn, "approximate", "none"), "tanh"));
    case IR_FUSE_RESIDUAL: /* cuBLASLt's C, unless the GEMM has one; cuDNN's z (alpha2 = 1) */
        return (gemm && (!own_c || gemm_c_is_bias(m, n))) || conv_ok(m, n);
    case IR_FUSE_VIEW: /* a reshape before a GEMM's residual: C and D are dense, read as [M, N] */
        return gemm && (!own_c || gemm_c_is_bias(m, n));
    default: return 0;
    }
}

/* The GEMM kernel with an epilogue (cuda_emit_gemm.c) is opt-in: SYMC_GEMM_EPILOGUE=kernel
 * takes every half GEMM the kernel can run (the GPU tests run both routes). Measured on an
 * H200 (BENCHMARKS.md, session 23), it is slower than cuBLASLt followed by the group's own
 * kernel at every GEMM of ConvNeXt-T and ViT-S tried: ConvNeXt-T's first MLP at
 * 32x3x320x320 (M 204800, K 96, N 384) takes 0.282 ms against 0.064 + 0.136 ms, ViT-S's at
 * batch 32 0.075 against about 0.036 ms. The erf GELU costs ALU time wherever it runs (the
 * separate kernel is bound by it, not by memory), and the mma.sync main loop is far from
 * cuBLASLt's wgmma kernels once K grows. Until the kernel wins by measurement, the default
 * (unset, or =library) keeps the library call. */

/* the operands a library GEMM reads and whether B is [N, K]; 0 when A is behind a transpose
 * member (the kernel reads A's rows as they are stored) */
static int gemm_operands(const ir_module *m, uint32_t lib, uint32_t *a, uint32_t *b, int *trans_b) {
    const ir_node *n = &m->nodes[lib];
    *a = n->in[0];
    *b = n->in[1];
    *trans_b = n->op == IR_OP_GEMM && cg_attr_int(n, "trans_b", 0) != 0;
    if (n->op == IR_OP_GEMM && cg_attr_int(n, "trans_a", 0) != 0) return 0;
    uint32_t pa = m->tensors[*a].producer, pb = m->tensors[*b].producer;
    if (m->fuse && pa != IR_NONE && m->fuse[pa].role == IR_FUSE_TRANSPOSE && m->fuse[pa].group == lib) return 0;
    if (m->fuse && pb != IR_NONE && m->fuse[pb].role == IR_FUSE_TRANSPOSE && m->fuse[pb].group == lib) {
        *b = m->nodes[pb].in[0];
        *trans_b ^= 1;
    }
    return 1;
}

static int rule_library_epilogue(ir_module *m, uint32_t lib) {
    const ir_node *n = &m->nodes[lib];
    const char *env = getenv("SYMC_GEMM_EPILOGUE");
    if (!env || strcmp(env, "kernel") || !gemm_ok(m, n)) return 0;
    if (n->op == IR_OP_GEMM && (cg_attr_float(n, "alpha", 1.0) != 1.0 || (n->n_in > 2 && !gemm_c_is_bias(m, n))))
        return 0;
    uint32_t a, b;
    int trans_b;
    int64_t K, N;
    return gemm_operands(m, lib, &a, &b, &trans_b) && cg_gemm_kernel_shape(m, lib, a, b, trans_b, &K, &N);
}

static unsigned rule_row_kernel(ir_module *m, uint32_t node) {
    cg_cuda c = {.m = m};
    ir_op op = m->nodes[node].op;
    if (!cg_row_kernel(&c, node)) return 0;
    int per_elem = op == IR_OP_SOFTMAX || op == IR_OP_LOG_SOFTMAX || op == IR_OP_LAYER_NORM || op == IR_OP_RMS_NORM;
    return PASS_ROW_INPUT | (per_elem ? PASS_ROW_EPILOGUE : 0);
}

/* Groups with many leaves stay kernels of their own, leaving the row kernel
 * room for parameters (CG_KW_MAX_ARGS in all). */
static const pass_fuse_rules cuda_fuse_rules = {
    .name = "cuda",
    .library = rule_library,
    .library_has_bias = rule_library_has_bias,
    .library_takes = rule_library_takes,
    .library_epilogue = rule_library_epilogue,
    .row_kernel = rule_row_kernel,
    .row_chain = cg_row_chain_ok,
    .max_group_nodes = CG_GROUP_MAX_NODES,
    .row_input_leaves = 32,
    .epilogue_leaves = 24,
    .attention_max_head = 128,
    .conv_channels_last = cg_conv_nhwc_ok,
};

const pass_fuse_rules *cg_fuse_rules(const cg_options *opt) { return !opt || opt->gpu ? &cuda_fuse_rules : NULL; }

/* The rule is cg_cuda_half_ok (the half-storage section below): the
 * precision pass keeps the other nodes fp32 and emit_node refuses half
 * tensors anywhere else. */
static const pass_precision_rules cuda_precision_rules = {"cuda", cg_cuda_half_ok};

const pass_precision_rules *cg_precision_rules(const cg_options *opt) {
    return !opt || opt->gpu ? &cuda_precision_rules : NULL;
}

/* ---- library calls, from the plan ------------------------------------------------------------ */
/* What a library call writes and applies: its bias (own or a member's),
 * activation and residual, read from the group's members along its result. */
typedef struct epilogue_plan {
    uint32_t bias; /* tensor */
    uint8_t epi;
    uint32_t res;    /* C = res with beta 1 */
    uint32_t result; /* the tensor the call writes */
} epilogue_plan;

static void plan_epilogue(cg_cuda *c, uint32_t node, epilogue_plan *e) {
    const ir_node *n = &c->m->nodes[node];
    e->bias = e->res = RT_NONE;
    e->epi = RT_EPI_NONE;
    e->result = n->out[0];
    if (n->op == IR_OP_GEMM && gemm_c_is_bias(c->m, n)) e->bias = n->in[2];
    for (int hops = 0; hops < 4; hops++) {
        uint32_t k = ir_fuse_reader_in_group(c->m, c->uses, node, e->result);
        if (k == IR_NONE) return;
        const ir_node *kn = &c->m->nodes[k];
        uint32_t other = kn->n_in > 1 && kn->in[0] == e->result ? kn->in[1] : kn->in[0];
        switch (cg_role(c, k)) {
        case IR_FUSE_BIAS: e->bias = other; break;
        case IR_FUSE_ACTIVATION: e->epi = kn->op == IR_OP_RELU ? RT_EPI_RELU : RT_EPI_GELU; break;
        case IR_FUSE_RESIDUAL: e->res = other; break;
        case IR_FUSE_VIEW: break; /* the same elements: the call writes what reads them */
        default: return;
        }
        e->result = kn->out[0];
    }
}

/* When operand t of library GEMM `gemm` is the result of a transpose in
 * its group, the transpose's input (read with the trans flag flipped). */
static uint32_t folded_transpose(cg_cuda *c, uint32_t gemm, uint32_t t) {
    uint32_t p = c->m->tensors[t].producer;
    return p != IR_NONE && cg_role(c, p) == IR_FUSE_TRANSPOSE && c->m->fuse[p].group == gemm ? c->m->nodes[p].in[0]
                                                                                             : IR_NONE;
}

static symc_status emit_gemm(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    epilogue_plan e;
    plan_epilogue(c, node, &e);
    /* an elementwise group on the result: one kernel of symc's own from sm_80 (cuda_emit_gemm.c);
     * else cuBLASLt, then the group as its own kernel */
    uint32_t epi = ir_fuse_epilogue_of(c->m, c->uses, node);
    if (epi != IR_NONE && c->b->sm >= 80) {
        cg_gemm_call g = {.bias = e.bias, .res = e.res, .y = e.result, .root = epi, .act = e.epi};
        int64_t K, N;
        if (gemm_operands(c->m, node, &g.a, &g.b, &g.trans_b) &&
            cg_gemm_kernel_shape(c->m, node, g.a, g.b, g.trans_b, &K, &N))
            return cg_emit_gemm_kernel(c, node, &g);
    }
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
            if (ir_same_shape(cc, y)) {
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
    uint32_t ta = folded_transpose(c, node, s.tensors[0]), tb = folded_transpose(c, node, s.tensors[1]);
    if (ta != IR_NONE) s.tensors[0] = ta, s.trans_a ^= 1;
    if (tb != IR_NONE) s.tensors[1] = tb, s.trans_b ^= 1;
    symc_status st = cg_add_step(c->b, &s);
    return st || epi == IR_NONE ? st : cg_emit_elementwise(c, epi);
}

/* A 1x1 convolution as a cuBLASLt GEMM step (the top): a = w, b = x, c = the residual (beta 1), the bias per
 * output channel, d = the group's result, the activation in the epilogue. */
static symc_status emit_conv_gemm(cg_cuda *c, uint32_t node, const epilogue_plan *e) {
    const ir_node *n = &c->m->nodes[node];
    rt_step s;
    init_lib_step(&s, RT_STEP_GEMM, node, 5);
    s.tensors[0] = n->in[1];
    s.tensors[1] = n->in[0];
    s.tensors[2] = e->res;
    s.tensors[3] = n->n_in > 2 ? n->in[2] : RT_NONE;
    s.tensors[4] = e->result;
    s.beta = e->res != RT_NONE ? 1.0f : 0.0f;
    s.epilogue = e->epi;
    s.precision = (uint8_t)c->b->opt->precision;
    return cg_add_step(c->b, &s);
}

static symc_status emit_conv(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    epilogue_plan e;
    plan_epilogue(c, node, &e);
    if (cg_conv_is_gemm(c->m, node)) return emit_conv_gemm(c, node, &e);
    rt_step s;
    init_lib_step(&s, RT_STEP_CONV, node, e.res != RT_NONE ? 5 : 4);
    s.tensors[0] = n->in[0];
    s.tensors[1] = n->in[1];
    s.tensors[2] = n->n_in > 2 ? n->in[2] : RT_NONE;
    s.tensors[3] = e.result;
    if (e.res != RT_NONE) s.tensors[4] = e.res; /* added before the bias and activation (cuDNN's z) */
    s.epilogue = e.epi;
    s.precision = (uint8_t)c->b->opt->precision;
    return cg_add_step(c->b, &s);
}

/* ---- views ---------------------------------------------------------------------------- */
static symc_status emit_view(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    uint32_t in = n->in[0], out = n->out[0];
    if (!c->uses->is_output[out]) return cg_alias(c->b, out, in);
    /* A graph output lives in the caller's buffer. When the input is an
     * intermediate with storage of its own, let it live there instead (its
     * producer writes straight into the output: no copy). Otherwise the data
     * must move. */
    const ir_tensor *x = &c->m->tensors[in];
    int is_input = 0;
    for (uint32_t k = 0; k < c->m->n_inputs; k++) is_input |= c->m->inputs[k] == in;
    if (!is_input && !c->uses->is_output[in] && x->constant == RT_NONE &&
        (!c->b->aliases || c->b->aliases[in] == RT_NONE) && (!c->b->aliases || c->b->aliases[out] == RT_NONE))
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

/* ---- half storage ------------------------------------------------------------------------ */
/* Which ops the CUDA target runs on f16/bf16 tensors (read and written in
 * half, computed in fp32): elementwise kernels, data movement, the row
 * kernels (reductions, softmax, norms: fp32 statistics), pooling, batch
 * norm, the direct convolution and plain matmul, and the cuBLASLt / cuDNN
 * steps (fp32 accumulation), views (reshape, identity: no element is
 * touched). Fused attention reads each operand in its own storage type
 * (codegen/cuda_emit_attention.c). */
int cg_cuda_half_ok(const ir_module *m, uint32_t node) {
    ir_op op = m->nodes[node].op;
    if (ir_op_is_elementwise(op) || is_view(op)) return 1; /* views touch no element */
    switch (op) { /* listed one by one: a new op's kernel must use the typed loads and stores first */
    case IR_OP_RESHAPE:
    case IR_OP_TRANSPOSE:
    case IR_OP_EXPAND:
    case IR_OP_CONCAT:
    case IR_OP_SLICE:
    case IR_OP_GATHER:
    case IR_OP_SQUEEZE:
    case IR_OP_UNSQUEEZE:
    case IR_OP_FLATTEN:
    case IR_OP_SPLIT:
    case IR_OP_PAD:
    case IR_OP_TILE:
    case IR_OP_TRILU:
    case IR_OP_GATHER_ELEMENTS:
    case IR_OP_SHAPE_OF:
    case IR_OP_CONSTANT:
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_MAX:
    case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD:
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX:
    case IR_OP_LAYER_NORM:
    case IR_OP_RMS_NORM:
    case IR_OP_BATCH_NORM:
    case IR_OP_MATMUL:
    case IR_OP_GEMM:
    case IR_OP_CONV2D:
    case IR_OP_MAX_POOL2D:
    case IR_OP_AVG_POOL2D:
    case IR_OP_GLOBAL_AVG_POOL:
    case IR_OP_RESIZE:
    case IR_OP_NONZERO:          /* a value compared with 0 */
    case IR_OP_UNIQUE: return 1; /* values compared in fp32 */
    default: return 0;
    }
}

/* ---- the walk --------------------------------------------------------------------------- */
static symc_status emit_node(cg_cuda *c, uint32_t i) {
    const ir_node *n = &c->m->nodes[i];
    if (is_view(n->op)) return emit_view(c, i); /* any dtype: no element is touched */
    int half_ok = cg_cuda_half_ok(c->m, i);
    for (uint32_t k = 0; k < n->n_in; k++) {
        symc_status st = cg_check_dtype(c, i, n->in[k], half_ok);
        if (st) return st;
    }
    for (uint32_t k = 0; k < n->n_out; k++) {
        symc_status st = cg_check_dtype(c, i, n->out[k], half_ok);
        if (st) return st;
    }
    if (cg_role(c, i) == IR_FUSE_ATTENTION) return cg_emit_attention(c, i);
    if (ir_op_is_elementwise(n->op)) return cg_emit_elementwise(c, i);
    int library = cg_role(c, i) == IR_FUSE_LIBRARY;
    if (library && !rule_library(c->m, i))
        return cg_fail(c, i, SYMC_ERR_INTERNAL, "the fusion plan makes it a library call the CUDA target cannot make");
    switch (n->op) {
    case IR_OP_MATMUL:
    case IR_OP_GEMM: return library ? emit_gemm(c, i) : cg_emit_matmul_generic(c, i);
    case IR_OP_CONV2D:
        if (c->m->tensors[n->in[0]].rank != 4)
            return cg_fail(c, i, SYMC_ERR_UNSUPPORTED, "3-D convolution (a 5-D input) has no CUDA kernel");
        if (!library) { /* a channels-last region's depthwise conv reads and writes through its transposes */
            uint32_t p = c->m->tensors[n->in[0]].producer, y = n->out[0];
            uint32_t k = c->uses->n_consumers[y] == 1 ? c->uses->consumer[y] : IR_NONE;
            if (p != IR_NONE && k != IR_NONE && cg_role(c, p) == IR_FUSE_LAYOUT && cg_role(c, k) == IR_FUSE_LAYOUT &&
                c->m->fuse[p].group == i && c->m->fuse[k].group == i)
                return cg_emit_conv_depthwise_nhwc(c, i, c->m->nodes[p].in[0], c->m->nodes[k].out[0]);
        }
        return library                      ? emit_conv(c, i)
            : cg_conv_is_depthwise(c->m, i) ? cg_emit_conv_depthwise(c, i)
                                            : cg_emit_conv_direct(c, i);
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_MAX:
    case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD: return cg_emit_reduce(c, i);
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX: return cg_emit_softmax(c, i);
    case IR_OP_LAYER_NORM:
    case IR_OP_RMS_NORM: return cg_emit_norm(c, i);
    case IR_OP_BATCH_NORM: return cg_emit_batch_norm(c, i);
    case IR_OP_MAX_POOL2D:
    case IR_OP_AVG_POOL2D: return cg_emit_pool(c, i);
    case IR_OP_GLOBAL_AVG_POOL: return cg_emit_global_avg_pool(c, i);
    case IR_OP_ARGMAX:
    case IR_OP_ARGMIN:
    case IR_OP_TOPK:
    case IR_OP_CUMSUM:
    case IR_OP_GATHER_ND:
    case IR_OP_SCATTER_ND:
    case IR_OP_SCATTER_ELEMENTS: return cg_emit_index(c, i);
    case IR_OP_RESIZE: return cg_emit_resize(c, i);
    case IR_OP_NONZERO:
    case IR_OP_UNIQUE:
    case IR_OP_NMS:
    case IR_OP_ITEM: return cg_emit_select(c, i);
    default: return cg_emit_move(c, i);
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

    /* the module's plan, or one made here for this build (the same rules, so the same code) */
    ir_module *m = b->m;
    int own_plan = !m->fuse;
    if (own_plan) st = pass_fuse(m, &cuda_fuse_rules, b->err);
    else if (strcmp(m->fuse_target ? m->fuse_target : "", cuda_fuse_rules.name))
        st = symc_error_setf(b->err, SYMC_ERR_INVALID_ARG,
                             "the module's fusion plan is for target '%s', not '%s': run the fuse pass again",
                             m->fuse_target ? m->fuse_target : "", cuda_fuse_rules.name);
    if (!st) st = ir_fuse_check(m, b->err);
    ir_uses uses = {0};
    if (!st) st = ir_uses_compute(m, &uses, b->err);
    cg_cuda c = {.b = b, .m = m, .uses = &uses};
    if (!st) st = cg_emit_prelude(&c);
    for (uint32_t i = 0; i < m->n_nodes && !st; i++) {
        if (m->nodes[i].op == IR_OP_CONSTANT || !ir_fuse_is_root(cg_role(&c, i))) continue; /* members, dead */
        st = emit_node(&c, i);
    }
    if (!st && b->failed) st = SYMC_ERR_NOMEM;
    ir_uses_free(&uses);
    if (own_plan) ir_fuse_drop(m);
    return st;
}

/* ---- compiling ----------------------------------------------------------------------------- */
/* The kernels in modules compiled in parallel (cg_nvrtc_compile_modules):
 * min(online CPUs, kernels / 4, 16) of them, or opt->nvrtc_modules (else
 * $SYMC_NVRTC_MODULES, for tests) when set, each
 * the prelude and a run of consecutive kernels, the runs cut where the
 * kernel text reaches an equal share of the total (NVRTC's time grows
 * with the text), every module at least one kernel. Consecutive runs keep
 * the split a function of the source alone, so the same model makes the
 * same modules (and hits the build cache) on a machine with as many CPUs. */
static uint32_t module_count(const cg_builder *b) {
    uint32_t n = b->opt->nvrtc_modules;
    const char *env = getenv("SYMC_NVRTC_MODULES"); /* the same, for the tools' tests (the GPU sweep) */
    if (!n && env && *env) n = (uint32_t)strtoul(env, NULL, 10);
    if (!n) {
        n = cg_nvrtc_cpus();
        if (n > (b->n_kernels + 3) / 4) n = (b->n_kernels + 3) / 4;
        if (n > 16) n = 16;
    }
    /* the runs must tile the source after the prelude */
    if (b->n_kernels == 0 || b->kernel_end[b->n_kernels - 1] != b->source_len ||
        b->prelude_len > (b->n_kernels ? b->kernel_end[0] : 0))
        return 1;
    return n < 1 ? 1 : n > b->n_kernels ? b->n_kernels : n;
}

static symc_status compile(cg_builder *b) {
    uint32_t n = module_count(b), nk = b->n_kernels;
    const char *src = b->source ? b->source : "";
    size_t pre = n > 1 ? b->prelude_len : 0, total = b->source_len - pre;
    char **sources = calloc(n, sizeof *sources);
    uint32_t *counts = calloc(n, sizeof *counts);
    b->modules = calloc(n, sizeof *b->modules);
    b->kernel_module = calloc(nk ? nk : 1, sizeof *b->kernel_module);
    symc_status st = SYMC_OK;
    if (!sources || !counts || !b->modules || !b->kernel_module)
        st = symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory compiling kernels");
    uint32_t k = 0; /* module i: kernels [first, k), text [begin, end) after the prelude */
    for (uint32_t i = 0; i < n && !st; i++) {
        uint32_t first = k;
        size_t begin = k ? b->kernel_end[k - 1] : pre, share = total / n * (i + 1);
        if (i + 1 == n) k = nk;
        else /* at least one kernel, and one left for each module after this */
            for (k++; k < nk - (n - 1 - i) && b->kernel_end[k - 1] - pre < share; k++) {
            }
        size_t end = i + 1 == n ? b->source_len : b->kernel_end[k - 1], len = pre + end - begin;
        if (!(sources[i] = malloc(len + 1))) {
            st = symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory compiling kernels");
            break;
        }
        memcpy(sources[i], src, pre);
        memcpy(sources[i] + pre, src + begin, end - begin);
        sources[i][len] = '\0';
        counts[i] = k - first;
        for (uint32_t j = first; j < k; j++) b->kernel_module[j] = i;
    }
    uint32_t cached = 0;
    if (!st) {
        b->n_modules = n;
        st = cg_nvrtc_compile_modules((const char *const *)sources, counts, n, b->sm, b->opt, b->modules, &cached,
                                      b->err);
        if (st) b->n_modules = 0;
    }
    if (!st && b->opt->stats) {
        b->opt->stats->modules = n;
        b->opt->stats->cached = cached;
    }
    for (uint32_t i = 0; sources && i < n; i++) free(sources[i]);
    free(sources);
    free(counts);
    return st;
}

const cg_target cg_target_cuda = {"cuda", emit, compile, &cuda_fuse_rules};
