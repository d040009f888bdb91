/* Fusion planning: which nodes run together as one step, stored in the
 * module as its plan (ir_fuse: a role and a group root per node, see
 * ir/ir.h), so `--dump-after=fuse` prints it and ir_verify checks it.
 *
 * The pass decides the groups; the target's rules (pass_fuse_rules, given
 * by the driver: codegen/target.h has the CUDA target's) say what its
 * kernels and libraries can take. Decisions are made in rounds, each seeing
 * the earlier ones, and a node claimed once is never claimed again:
 *  1. dead nodes (no output reaches a graph output) get no step;
 *  2. attention (fuse_attention.c): softmax(f(Q·Kᵀ))·V around each matmul,
 *     when the target runs fused attention of its head dims, claims the
 *     nodes its kernel computes and stores the match in the plan
 *     (ir_attention), which the target's emitter reads;
 *  3. library calls claim their neighbours: a private transpose making an
 *     operand (read through the trans flag), and on the result, each
 *     private to the next: an add of a 1-D vector of the last dim (the
 *     bias, unless the call has one of its own), then an activation (only
 *     after a bias), or with no activation an add of a tensor of the
 *     result's shape and dtype (the residual, C with beta 1), also through
 *     a reshape of the result alone (a view: the call writes the add's
 *     result, the same elements in the same order). What a
 *     library call reads must be computed before its place in node order.
 *     Then a convolution the target runs channels-last (conv_channels_last)
 *     claims a private transpose to NCHW making its input and the transpose
 *     to NHWC that alone reads its result (IR_FUSE_LAYOUT: the kernel reads
 *     and writes NHWC; the layout pass puts them there);
 *  4. every elementwise node whose private result feeds an elementwise node
 *     of the same shape is inlined: computed inside its reader's code, so a
 *     chain or tree is one kernel rooted at its last node;
 *  5. an elementwise group whose root's private result is the data input of
 *     a row kernel (softmax, a norm, a row reduction) is inlined into it
 *     (softmax(x * s + mask), layer_norm(x + r)), when small enough;
 *  6. a row kernel with a per-element result that only an elementwise
 *     group of its shape and dtype reads applies that group before its
 *     store (its epilogue: gelu(softmax(x))), when the group's other inputs
 *     are ready at the row kernel's place; the group may change the float
 *     storage type (f32, f16, bf16: the precision pass's cast of a half
 *     layer norm to the model's f32 output is stored by the norm's kernel);
 *     a library call the target can run as a kernel of its own with an
 *     epilogue (library_epilogue: a GEMM whose erf-GELU cuBLASLt cannot
 *     apply) takes the same, from the result of its last member, read by
 *     any number of the group's nodes (x * 0.5 * (1 + erf(x / sqrt 2))
 *     reads x twice) and by nothing else;
 *  7. a row op reading the private result of another row op over the same
 *     rows (softmax after layer_norm, or the reverse) computes the first
 *     one in its own kernel (row first), when that one has no epilogue.
 * "Private" is ir_uses_private: one live reader, not a graph output.
 * A new fusion rule is a round here (or a condition in one) plus, when it
 * depends on what the target can do, a query in pass_fuse_rules that the
 * target answers; its role goes into ir_fuse_role, with its place checked
 * in ir/fuse_plan.c and read by the target's emitter. */
#include <stdlib.h>

#include "passes/passes.h"

typedef struct fuser {
    ir_module *m;
    const pass_fuse_rules *r;
    ir_uses u;
    uint32_t *gnodes, *gleaves; /* group_fits' scratch */
} fuser;

static ir_fuse_role role(const fuser *f, uint32_t i) { return (ir_fuse_role)f->m->fuse[i].role; }

static void set(fuser *f, uint32_t i, ir_fuse_role r, uint32_t group) { f->m->fuse[i] = (ir_fuse){(uint8_t)r, group}; }

/* computed by another node's step (inlined nodes are counted apart, as
 * the rounds treat them apart) */
static int covered(const fuser *f, uint32_t i) {
    ir_fuse_role r = role(f, i);
    return !ir_fuse_is_root(r) && r != IR_FUSE_INLINED;
}

static int elementwise(const fuser *f, uint32_t i) { return ir_op_is_elementwise(f->m->nodes[i].op); }

/* tensor t is ready before node `at` runs: a graph input, a constant, or
 * made by an earlier node */
static int ready_before(const fuser *f, uint32_t t, uint32_t at) {
    uint32_t p = f->m->tensors[t].producer;
    return p == IR_NONE || p < at || f->m->nodes[p].op == IR_OP_CONSTANT;
}

/* node k reads t as its data input in[0] and as nothing else */
static int data_input_only(const fuser *f, uint32_t k, uint32_t t) {
    const ir_node *n = &f->m->nodes[k];
    if (n->n_in < 1 || n->in[0] != t) return 0;
    for (uint32_t i = 1; i < n->n_in; i++)
        if (n->in[i] == t) return 0;
    return 1;
}

/* the one reader of t when t is private and the reader is unclaimed, with op `op` (IR_OP_COUNT: any) */
static uint32_t private_reader(const fuser *f, uint32_t t, ir_op op) {
    if (!ir_uses_private(&f->u, t)) return IR_NONE;
    uint32_t k = f->u.consumer[t];
    return role(f, k) == IR_FUSE_STEP && (op == IR_OP_COUNT || f->m->nodes[k].op == op) ? k : IR_NONE;
}

/* ---- 3. library calls ---------------------------------------------------------------------------- */
/* add(t, v) or add(v, t) reading the library call's result t, with v 1-D [N], N = t's last dim */
static uint32_t bias_add(const fuser *f, uint32_t lib, uint32_t t) {
    uint32_t k = private_reader(f, t, IR_OP_ADD);
    if (k == IR_NONE) return IR_NONE;
    const ir_node *n = &f->m->nodes[k];
    const ir_tensor *x = &f->m->tensors[t];
    uint32_t other = n->in[0] == t ? n->in[1] : n->in[0];
    const ir_tensor *v = &f->m->tensors[other];
    if (n->in[0] == n->in[1] || x->rank < 1 || v->rank != 1 || v->dims[0] != x->dims[x->rank - 1] ||
        !ir_same_shape(x, &f->m->tensors[n->out[0]]) || !ready_before(f, other, lib))
        return IR_NONE;
    return k;
}

/* add(t, r) or add(r, t) with r of exactly t's shape and dtype, computed before the library call */
static uint32_t residual_add(const fuser *f, uint32_t lib, uint32_t t) {
    uint32_t k = private_reader(f, t, IR_OP_ADD);
    if (k == IR_NONE) return IR_NONE;
    const ir_node *n = &f->m->nodes[k];
    const ir_tensor *x = &f->m->tensors[t];
    uint32_t other = n->in[0] == t ? n->in[1] : n->in[0];
    const ir_tensor *r = &f->m->tensors[other];
    if (n->in[0] == n->in[1] || r->dtype != x->dtype || !ir_same_shape(r, x) ||
        !ir_same_shape(x, &f->m->tensors[n->out[0]]) || !ready_before(f, other, lib))
        return IR_NONE;
    return k;
}

static void plan_library_calls(fuser *f) {
    const pass_fuse_rules *r = f->r;
    ir_module *m = f->m;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (role(f, i) != IR_FUSE_STEP || !r->library || !r->library(m, i)) continue;
        set(f, i, IR_FUSE_LIBRARY, i);
        const ir_node *n = &m->nodes[i];
        for (uint32_t k = 0; k < 2 && k < n->n_in; k++) {
            uint32_t t = n->in[k], p = m->tensors[t].producer;
            if (p != IR_NONE && ir_uses_private(&f->u, t) && role(f, p) == IR_FUSE_STEP &&
                r->library_takes(m, i, p, IR_FUSE_TRANSPOSE))
                set(f, p, IR_FUSE_TRANSPOSE, i);
        }
        if (n->n_out != 1) continue;
        uint32_t res = n->out[0], k;
        int has_bias = r->library_has_bias && r->library_has_bias(m, i);
        if (!has_bias && (k = bias_add(f, i, res)) != IR_NONE && r->library_takes(m, i, k, IR_FUSE_BIAS)) {
            set(f, k, IR_FUSE_BIAS, i);
            res = m->nodes[k].out[0];
            has_bias = 1;
        }
        /* the libraries compute act(alpha * op + residual + bias): a residual add right after the
         * call (and its bias), then an activation; activations only follow a bias (the library
         * epilogues' BIAS forms). An activation before the add ends the group there. A reshape
         * alone between the result and the add (a view: the same elements in the same order) is
         * the call's too: it writes the add's result. */
        uint32_t v = private_reader(f, res, IR_OP_RESHAPE), kv;
        if (v != IR_NONE && m->nodes[v].n_in == 1 && m->nodes[v].n_out == 1 &&
            (kv = residual_add(f, i, m->nodes[v].out[0])) != IR_NONE && r->library_takes(m, i, v, IR_FUSE_VIEW) &&
            r->library_takes(m, i, kv, IR_FUSE_RESIDUAL)) {
            set(f, v, IR_FUSE_VIEW, i);
            set(f, kv, IR_FUSE_RESIDUAL, i);
            res = m->nodes[kv].out[0];
        } else if ((k = residual_add(f, i, res)) != IR_NONE && r->library_takes(m, i, k, IR_FUSE_RESIDUAL)) {
            set(f, k, IR_FUSE_RESIDUAL, i);
            res = m->nodes[k].out[0];
        }
        if (has_bias && (k = private_reader(f, res, IR_OP_COUNT)) != IR_NONE) {
            /* a reshape alone between the call and its activation (GPT-2's c_fc: Gemm [B * S, N] viewed
             * as [B, S, N] before its GELU) is the call's too */
            uint32_t a = IR_NONE;
            if (m->nodes[k].op == IR_OP_RESHAPE && m->nodes[k].n_in == 1 && m->nodes[k].n_out == 1 &&
                r->library_takes(m, i, k, IR_FUSE_VIEW) &&
                (a = private_reader(f, m->nodes[k].out[0], IR_OP_COUNT)) != IR_NONE &&
                r->library_takes(m, i, a, IR_FUSE_ACTIVATION)) {
                set(f, k, IR_FUSE_VIEW, i);
                set(f, a, IR_FUSE_ACTIVATION, i);
            } else if (r->library_takes(m, i, k, IR_FUSE_ACTIVATION)) set(f, k, IR_FUSE_ACTIVATION, i);
        }
    }
}

/* ---- 4-7. kernels ---------------------------------------------------------------------------------- */
static void plan_inlining(fuser *f) {
    ir_module *m = f->m;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        if (role(f, i) != IR_FUSE_STEP || !elementwise(f, i) || n->n_out != 1 || !ir_uses_private(&f->u, n->out[0]))
            continue;
        uint32_t k = f->u.consumer[n->out[0]];
        if (covered(f, k) || !elementwise(f, k)) continue;
        if (ir_same_shape(&m->tensors[n->out[0]], &m->tensors[m->nodes[k].out[0]])) set(f, i, IR_FUSE_INLINED, IR_NONE);
    }
}

/* counts the distinct nodes and leaf tensors of the group rooted at
 * `node` (through inlined producers); 0 once past either limit */
static int count_group(fuser *f, uint32_t node, uint32_t max_leaves, uint32_t *nn, uint32_t *nl) {
    for (uint32_t i = 0; i < *nn; i++)
        if (f->gnodes[i] == node) return 1;
    if (*nn == f->r->max_group_nodes) return 0;
    f->gnodes[(*nn)++] = node;
    const ir_node *n = &f->m->nodes[node];
    for (uint32_t k = 0; k < n->n_in; k++) {
        uint32_t t = n->in[k], p = f->m->tensors[t].producer;
        if (p != IR_NONE && role(f, p) == IR_FUSE_INLINED) {
            if (!count_group(f, p, max_leaves, nn, nl)) return 0;
            continue;
        }
        int seen = 0;
        for (uint32_t j = 0; j < *nl && !seen; j++) seen = f->gleaves[j] == t;
        if (seen) continue;
        if (*nl == max_leaves) return 0;
        f->gleaves[(*nl)++] = t;
    }
    return 1;
}

/* the group rooted at `root` has at most max_leaves leaves and the target's most nodes */
static int group_fits(fuser *f, uint32_t root, uint32_t max_leaves) {
    uint32_t nn = 0, nl = 0;
    return count_group(f, root, max_leaves, &nn, &nl);
}

static int row_kernel(const fuser *f, uint32_t i, unsigned flag) {
    return f->r->row_kernel && (f->r->row_kernel(f->m, i) & flag);
}

static void plan_row_inputs(fuser *f) {
    ir_module *m = f->m;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (covered(f, i) || role(f, i) == IR_FUSE_INLINED || !row_kernel(f, i, PASS_ROW_INPUT)) continue;
        uint32_t t = m->nodes[i].in[0], p = m->tensors[t].producer;
        if (p == IR_NONE || role(f, p) != IR_FUSE_STEP || !elementwise(f, p) || !ir_uses_private(&f->u, t) ||
            !data_input_only(f, i, t) || !group_fits(f, p, f->r->row_input_leaves))
            continue;
        set(f, p, IR_FUSE_INLINED, IR_NONE);
    }
}

/* leaves of the group rooted at `node` (through inlined producers) are all
 * ready before node `at` runs, except `skip` */
static int group_ready(const fuser *f, uint32_t node, uint32_t at, uint32_t skip, int depth) {
    const ir_node *n = &f->m->nodes[node];
    if (depth > 64) return 0;
    for (uint32_t k = 0; k < n->n_in; k++) {
        uint32_t t = n->in[k], p = f->m->tensors[t].producer;
        if (t == skip) continue;
        if (p != IR_NONE && role(f, p) == IR_FUSE_INLINED) {
            if (!group_ready(f, p, at, skip, depth + 1)) return 0;
        } else if (!ready_before(f, t, at)) {
            return 0;
        }
    }
    return 1;
}

/* f32, f16 or bf16: row kernels compute them in fp32 and store any of them */
static int float_storage(symc_dtype dt) { return dt == SYMC_F32 || dt == SYMC_F16 || dt == SYMC_BF16; }

/* every live reader of t is one of the nn nodes count_group just left in f->gnodes, and t is no
 * graph output */
static int group_reads_all(const fuser *f, uint32_t nn, uint32_t t) {
    uint32_t readers = 0;
    if (f->u.is_output[t]) return 0;
    for (uint32_t j = 0; j < nn; j++) {
        const ir_node *g = &f->m->nodes[f->gnodes[j]];
        for (uint32_t k = 0; k < g->n_in; k++)
            if (g->in[k] == t) {
                readers++;
                break;
            }
    }
    return readers == f->u.n_consumers[t];
}

static void plan_epilogues(fuser *f) {
    ir_module *m = f->m;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        int lib = role(f, i) == IR_FUSE_LIBRARY && n->n_out == 1 && f->r->library_epilogue &&
            f->r->library_epilogue(m, i);
        if (!lib &&
            (covered(f, i) || role(f, i) == IR_FUSE_INLINED || n->n_out != 1 || !row_kernel(f, i, PASS_ROW_EPILOGUE)))
            continue;
        uint32_t y = lib ? ir_fuse_library_result(m, &f->u, i) : n->out[0];
        if (lib ? f->u.is_output[y] || !f->u.n_consumers[y] : !ir_uses_private(&f->u, y)) continue;
        /* the group reading y: up through inlined nodes to its root */
        uint32_t r = f->u.consumer[y];
        for (int hops = 0; r != IR_NONE && role(f, r) == IR_FUSE_INLINED && hops < 256; hops++) {
            uint32_t t = m->nodes[r].out[0];
            r = ir_uses_private(&f->u, t) ? f->u.consumer[t] : IR_NONE;
        }
        if (r == IR_NONE || role(f, r) != IR_FUSE_STEP || !elementwise(f, r) || m->nodes[r].n_out != 1) continue;
        const ir_tensor *yt = &m->tensors[y], *zt = &m->tensors[m->nodes[r].out[0]];
        uint32_t nn = 0, nl = 0;
        if (!ir_same_shape(yt, zt) ||
            !(yt->dtype == zt->dtype || (float_storage(yt->dtype) && float_storage(zt->dtype))) ||
            !count_group(f, r, f->r->epilogue_leaves, &nn, &nl) || (lib && !group_reads_all(f, nn, y)) ||
            !group_ready(f, r, i, y, 0))
            continue;
        set(f, r, IR_FUSE_EPILOGUE, i);
    }
}

static void plan_row_chains(fuser *f) {
    ir_module *m = f->m;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        if (covered(f, i) || role(f, i) == IR_FUSE_INLINED || m->nodes[i].n_in < 1 || !f->r->row_chain) continue;
        uint32_t a = m->tensors[m->nodes[i].in[0]].producer;
        if (a == IR_NONE || covered(f, a) || role(f, a) == IR_FUSE_INLINED || ir_fuse_row_first_of(m, a) != IR_NONE ||
            m->nodes[a].n_out != 1 || !ir_uses_private(&f->u, m->nodes[a].out[0]) ||
            !data_input_only(f, i, m->nodes[a].out[0]) || !row_kernel(f, a, PASS_ROW_EPILOGUE) ||
            !row_kernel(f, i, PASS_ROW_INPUT) || !f->r->row_chain(m, a, i) ||
            ir_fuse_epilogue_of(m, &f->u, a) != IR_NONE)
            continue;
        set(f, a, IR_FUSE_ROW_FIRST, i);
    }
}

/* round 3b: a convolution with a channels-last kernel whose data input is a private transpose
 * to NCHW and whose private result only a transpose to NHWC reads runs as one step reading
 * the first transpose's input and storing the second one's result (the layout pass makes
 * this shape) */
static void plan_layouts(fuser *f) {
    ir_module *m = f->m;
    if (!f->r->conv_channels_last) return;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        if (role(f, i) != IR_FUSE_STEP || n->op != IR_OP_CONV2D || n->n_out != 1 || !f->r->conv_channels_last(m, i))
            continue;
        uint32_t x = n->in[0], p = m->tensors[x].producer, y = n->out[0];
        if (ir_layout_perm(m, p) != IR_PERM_TO_NCHW || role(f, p) != IR_FUSE_STEP || !ir_uses_private(&f->u, x) ||
            !data_input_only(f, i, x) || !ir_uses_private(&f->u, y))
            continue;
        uint32_t k = f->u.consumer[y];
        if (ir_layout_perm(m, k) != IR_PERM_TO_NHWC || role(f, k) != IR_FUSE_STEP) continue;
        set(f, p, IR_FUSE_LAYOUT, i);
        set(f, k, IR_FUSE_LAYOUT, i);
    }
}

symc_status pass_fuse(ir_module *m, const pass_fuse_rules *rules, symc_error *err) {
    ir_fuse_drop(m);
    if (!rules) return SYMC_OK;
    for (uint32_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].rank < 0)
            return symc_error_setf(err, SYMC_ERR_VERIFY, "tensor '%s' has no inferred shape: run shape inference first",
                                   m->tensors[i].name);
    fuser f = {.m = m, .r = rules};
    uint32_t leaves = rules->row_input_leaves > rules->epilogue_leaves ? rules->row_input_leaves
                                                                       : rules->epilogue_leaves;
    symc_status st = ir_fuse_new(m, rules->name, err);
    if (st) return st;
    if ((st = ir_uses_compute(m, &f.u, err))) {
        ir_fuse_drop(m);
        return st;
    }
    f.gnodes = malloc((rules->max_group_nodes + 1) * sizeof *f.gnodes);
    f.gleaves = malloc((leaves + 1) * sizeof *f.gleaves);
    if (!f.gnodes || !f.gleaves) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory planning fusion");
        ir_fuse_drop(m);
        goto done;
    }
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (!f.u.live[i]) set(&f, i, IR_FUSE_DEAD, IR_NONE);
    if ((st = pass_fuse_attention(m, &f.u, rules, err))) { /* round 2 (fuse_attention.c) */
        ir_fuse_drop(m);
        goto done;
    }
    plan_library_calls(&f);
    plan_layouts(&f);
    plan_inlining(&f);
    plan_row_inputs(&f);
    plan_epilogues(&f);
    plan_row_chains(&f);
    /* an inlined node belongs to the group of its reader (readers come later in node order) */
    for (uint32_t i = m->n_nodes; i-- > 0;)
        if (role(&f, i) == IR_FUSE_INLINED) m->fuse[i].group = m->fuse[f.u.consumer[m->nodes[i].out[0]]].group;
done:
    free(f.gnodes);
    free(f.gleaves);
    ir_uses_free(&f.u);
    return st;
}
