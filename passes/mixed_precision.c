/* The precision pass: half storage (f16 or bf16) for a module compiled with
 * --fp16/--bf16.
 *
 * Precision is decided per node. A node "runs in half" when it reads or
 * writes an f32 tensor and nothing keeps it fp32: the target cannot run it
 * in half (the target's pass_precision_rules; no rules: every op may, as on
 * the reference backend), the user pinned it (--fp32-layers: node names or
 * op names), or, for fp16, a calibrated max |value| of one of its f32
 * tensors exceeds the safety limit (PASS_FP16_SAFE_MAX), or it computes a
 * softmax's logits or a sin/cos/tan's angles (softmax_island: the softmax and
 * the elementwise and movement nodes back to the contraction making its
 * input, and on to the projections making that one's operands; in attention
 * whose calibrated logits are small, only back to the logits' matmul, so Q
 * and K are half: attention_logits), or its result
 * is discontinuous in its inputs (mod, floor, ceil, sign, comparisons, and the
 * ops that select by value: nonzero, unique, nms), or it
 * is index arithmetic: floats made from integers and scalar constants alone
 * (index_arithmetic; T5's relative-position buckets, where(mask, 0, min)).
 * Those are the fp32 islands; each is listed with its reason in m->islands
 * (why_text: the kind, the names and numbers), which the engine keeps for
 * `symc inspect --islands`. Then, in one walk over the original nodes:
 *   - every f32 output of a half node becomes half; a graph output keeps the
 *     dtype the model declares: the node writes a new half tensor and a cast
 *     after it writes the output;
 *   - a constant read only by half nodes is converted where it is stored
 *     (round to nearest even, once, from the f32 value); one read by an fp32
 *     node too stays f32 and its half readers get a cast; one whose values
 *     would overflow fp16 keeps its readers fp32;
 *   - each f32 input of a half node that stayed f32 (a graph input, an island's
 *     result, a kept constant) is read through one cast to half, made once per
 *     tensor; each half tensor read by an fp32 node through one cast to f32;
 *   - cast and shape_of read any dtype: they get no cast; a half cast whose
 *     `to` is f32 gets `to` = the half type; range stays as it is.
 * Integer, bool and f64 tensors are never touched. With a target's rules the
 * pass also runs without --fp16/--bf16: a node the target cannot run in half
 * that reads or writes half tensors the model itself declares (an ONNX model
 * exported in fp16, a torch model after .half()) computes in fp32 between
 * casts, so such models compile as they are. The new casts are placed
 * right before their first reader (a result's cast right after its
 * producer), so node order stays topological, and each new tensor gets its
 * source's shape. The pass runs before fuse, so the casts fuse into kernels.
 * The math is the kernels': the reference kernels load half exactly into
 * double and round once on store; accumulators (sums, softmax, norms) are
 * double there and fp32 in the CUDA kernels. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dtype_traits.h" /* cm_f32_to_half */
#include "passes/passes.h"

/* token `name` is one of the comma-separated items of list */
static int listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ') p++, len--;
        while (len && p[len - 1] == ' ') len--;
        if (len == n && !strncmp(p, name, n)) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* every item of --fp32-layers names a node or an op */
static symc_status check_layers(const ir_module *m, const char *list, symc_error *err) {
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ') p++, len--;
        while (len && p[len - 1] == ' ') len--;
        char item[256];
        if (len >= sizeof item)
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "--fp32-layers: item '%.40s...' is too long", p);
        memcpy(item, p, len);
        item[len] = '\0';
        ir_op op;
        uint32_t node;
        if (len && !ir_op_find(item, &op) && !ir_find_node(m, item, &node))
            return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                                   "--fp32-layers: '%s' is neither a node of the module nor an op name", item);
        if (!e) break;
        p = e + 1;
    }
    return SYMC_OK;
}

typedef struct prec {
    ir_module *m;
    symc_dtype half;
    uint32_t n0, t0;   /* nodes and tensors before the pass */
    uint32_t *to_half; /* per original tensor: its half version (IR_NONE: none yet) */
    uint32_t *to_f32;  /* per original tensor: its f32 version */
    uint8_t *made;     /* per original tensor: made half by this pass */
    uint8_t *fits;     /* per original constant tensor: 0 not yet asked, 1 its values fit the half type, 2 not */
    uint32_t *anchor;  /* per new node: the original node it goes before (or after) */
    uint8_t *after;    /* per new node: placed after its anchor */
    uint32_t n_new, cap_new;
    symc_error *err;
} prec;

static int is_output(const ir_module *m, uint32_t t) {
    for (uint32_t i = 0; i < m->n_outputs; i++)
        if (m->outputs[i] == t) return 1;
    return 0;
}

/* ops that read any dtype: they need no cast in front */
static int reads_any(ir_op op) { return op == IR_OP_CAST || op == IR_OP_SHAPE_OF; }

static symc_status placed(prec *p, uint32_t anchor, int after);

/* a new tensor like t with dtype dt, and a cast node src -> it placed at anchor */
static symc_status add_cast(prec *p, uint32_t src, uint32_t dst, symc_dtype dt, uint32_t anchor, int after) {
    ir_module *m = p->m;
    char name[512];
    const char *tn = m->tensors[dst].name ? m->tensors[dst].name : "t";
    uint32_t found;
    snprintf(name, sizeof name, "precision.cast.%s", tn);
    for (unsigned k = 2; ir_find_node(m, name, &found) && k < 1000000; k++)
        snprintf(name, sizeof name, "precision.cast.%s.%u", tn, k);
    ir_attr to = symc_attr_dtype("to", dt);
    uint32_t idx;
    symc_status st = ir_add_node(m, IR_OP_CAST, name, "precision", &src, 1, &dst, 1, &to, 1, &idx, p->err);
    if (st) return st;
    return placed(p, anchor, after);
}

/* the node just added goes before (or after) original node `anchor` */
static symc_status placed(prec *p, uint32_t anchor, int after) {
    if (p->n_new == p->cap_new) {
        uint32_t cap = p->cap_new ? 2 * p->cap_new : 64;
        uint32_t *a = realloc(p->anchor, cap * sizeof *a);
        if (!a) return symc_error_setf(p->err, SYMC_ERR_NOMEM, "out of memory in the precision pass");
        p->anchor = a;
        uint8_t *b = realloc(p->after, cap);
        if (!b) return symc_error_setf(p->err, SYMC_ERR_NOMEM, "out of memory in the precision pass");
        p->after = b;
        p->cap_new = cap;
    }
    p->anchor[p->n_new] = anchor;
    p->after[p->n_new] = (uint8_t)after;
    p->n_new++;
    return SYMC_OK;
}

/* a new tensor named after t ("<t>:f16") with t's shape */
static symc_status twin(prec *p, uint32_t t, symc_dtype dt, uint32_t *out) {
    ir_module *m = p->m;
    char name[512];
    const char *tn = m->tensors[t].name ? m->tensors[t].name : "t";
    uint32_t found;
    snprintf(name, sizeof name, "%s:%s", tn, symc_dtype_name(dt));
    for (unsigned k = 2; ir_find_tensor(m, name, &found) && k < 1000000; k++)
        snprintf(name, sizeof name, "%s:%s.%u", tn, symc_dtype_name(dt), k);
    sym_expr dims[IR_MAX_RANK];
    int32_t rank = m->tensors[t].rank;
    for (int32_t d = 0; d < rank && d < IR_MAX_RANK; d++) dims[d] = m->tensors[t].dims[d];
    return ir_add_tensor(m, name, dt, rank, rank > 0 ? dims : NULL, out, p->err);
}

/* constant tensor v (a twin of constant t) gets t's values converted to v's float dtype, made
 * by a constant node placed before `reader` */
static symc_status convert_copy(prec *p, uint32_t t, uint32_t v, uint32_t reader) {
    ir_module *m = p->m;
    symc_dtype from = m->tensors[t].dtype, to = m->tensors[v].dtype;
    const ir_constant *k = &m->constants[m->tensors[t].constant];
    size_t n = k->size / symc_dtype_size(from), bytes = n * symc_dtype_size(to);
    uint8_t *d = malloc(bytes ? bytes : 1);
    if (!d)
        return symc_error_setf(p->err, SYMC_ERR_NOMEM, "out of memory converting constant '%s'", m->tensors[t].name);
    for (size_t i = 0; i < n; i++) symc_dtype_store(d, to, i, symc_dtype_load(k->data, from, i));
    uint32_t c;
    symc_status st = ir_add_constant(m, d, bytes, &c, p->err); /* takes d, also on failure */
    if (st) return st;
    m->tensors[v].constant = c;
    char name[512];
    uint32_t found;
    snprintf(name, sizeof name, "precision.constant.%s", m->tensors[v].name ? m->tensors[v].name : "t");
    for (unsigned k = 2; ir_find_node(m, name, &found) && k < 1000000; k++)
        snprintf(name, sizeof name, "precision.constant.%s.%u", m->tensors[v].name ? m->tensors[v].name : "t", k);
    if ((st = ir_add_node(m, IR_OP_CONSTANT, name, "precision", NULL, 0, &v, 1, NULL, 0, NULL, p->err))) return st;
    return placed(p, reader, 0);
}

/* the version of original tensor t (currently dtype `have`) in dtype `want`, read by node `reader` */
static symc_status version(prec *p, uint32_t t, symc_dtype want, uint32_t reader, uint32_t *out) {
    uint32_t *cache = want == SYMC_F32 ? p->to_f32 : p->to_half;
    if (cache[t] == IR_NONE) {
        uint32_t v;
        symc_status st = twin(p, t, want, &v);
        if (st) return st;
        /* a constant's version is a converted constant (what a cast would compute, once, at build
         * time: rounded to nearest even), not a cast run at every call */
        if (p->m->tensors[t].constant != IR_NONE) st = convert_copy(p, t, v, reader);
        else st = add_cast(p, t, v, want, reader, 0);
        if (st) return st;
        cache[t] = v;
    }
    *out = cache[t];
    return SYMC_OK;
}

/* converts constant tensor t's f32 data to half, in place when its pool entry is its own */
static symc_status convert_constant(prec *p, uint32_t t) {
    ir_module *m = p->m;
    ir_tensor *x = &m->tensors[t];
    ir_constant *k = &m->constants[x->constant];
    size_t n = k->size / 4;
    uint32_t shared = 0;
    for (uint32_t i = 0; i < m->n_tensors; i++) shared += i != t && m->tensors[i].constant == x->constant;
    if (!shared && x->constant >= m->n_lent) {
        /* the module's own block, read by this tensor alone: converted where it is (no second
         * block of the model's size to fault in), then shrunk to the halves */
        cm_f32_to_half(k->data, k->data, n, p->half); /* rounded once, as a cast would: nearest even */
        uint8_t *h = realloc(k->data, n ? n * 2 : 1);
        if (h) k->data = h; /* a shrink that fails keeps the larger block, as good */
        k->size = n * 2;
    } else {
        uint8_t *h = malloc(n ? n * 2 : 1);
        if (!h) return symc_error_setf(p->err, SYMC_ERR_NOMEM, "out of memory converting constant '%s'", x->name);
        cm_f32_to_half(h, k->data, n, p->half);
        if (!shared) {
            free(k->data);
            k->data = h;
            k->size = n * 2;
        } else {
            uint32_t c;
            symc_status st = ir_add_constant(m, h, n * 2, &c, p->err);
            if (st) return st;
            m->tensors[t].constant = c;
        }
    }
    m->tensors[t].dtype = p->half;
    p->made[t] = 1;
    return SYMC_OK;
}

/* the constant's values all stay finite in the half type: every finite |value| below the type's
 * overflow point. This runs over every weight of the model, so on the bits, with no branch an
 * element: the limit is a float (65520 for f16, (2 - 2^-8) * 2^127 for bf16) and finite
 * non-negative floats order as their bits do, so isfinite(v) && |v| >= limit is
 * lim <= a < inf for a = bits & 0x7fffffff, one unsigned compare: a - lim < inf - lim. Blocks of a
 * fixed 1024 (the compiler's cheapest vectorization takes such a loop, -O2 included), stopping at
 * the first block over. Once per tensor (p->fits: asked once per half reader, then once more). */
static int constant_fits(prec *p, uint32_t t) {
    if (p->fits[t]) return p->fits[t] == 1;
    const ir_constant *k = &p->m->constants[p->m->tensors[t].constant];
    const float lim = (float)symc_dtype_overflow(p->half);
    uint32_t lo;
    memcpy(&lo, &lim, 4);
    const uint32_t range = 0x7f800000u - lo;
    const unsigned char *d = k->data;
    const size_t n = k->size / 4;
    uint32_t over = 0, u;
    size_t i = 0;
    for (; n - i >= 1024 && !over; i += 1024)
        for (size_t j = 0; j < 1024; j++) memcpy(&u, d + 4 * (i + j), 4), over |= ((u & 0x7fffffffu) - lo) < range;
    for (; i < n; i++) memcpy(&u, d + 4 * i, 4), over |= ((u & 0x7fffffffu) - lo) < range;
    p->fits[t] = over ? 2 : 1;
    return !over;
}

/* places the new nodes at their anchors (casts of inputs before their first reader, casts of
 * results after their producer) and renumbers the producers */
static symc_status reorder(prec *p) {
    ir_module *m = p->m;
    uint32_t total = m->n_nodes;
    ir_node *old = malloc((size_t)total * sizeof *old);
    uint32_t *order = malloc((size_t)total * sizeof *order);
    if (!old || !order) {
        free(old);
        free(order);
        return symc_error_setf(p->err, SYMC_ERR_NOMEM, "out of memory in the precision pass");
    }
    memcpy(old, m->nodes, (size_t)total * sizeof *old);
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n0; i++) {
        for (uint32_t j = 0; j < p->n_new; j++)
            if (p->anchor[j] == i && !p->after[j]) order[n++] = p->n0 + j;
        order[n++] = i;
        for (uint32_t j = 0; j < p->n_new; j++)
            if (p->anchor[j] == i && p->after[j]) order[n++] = p->n0 + j;
    }
    for (uint32_t i = 0; i < n; i++) {
        m->nodes[i] = old[order[i]];
        for (uint32_t o = 0; o < m->nodes[i].n_out; o++) m->tensors[m->nodes[i].out[o]].producer = i;
    }
    free(old);
    free(order);
    return SYMC_OK;
}

/* Ops whose result jumps where the input crosses a boundary (an integer, the other operand,
 * a multiple of the divisor): an input rounded to half moves results near a boundary by a
 * whole step (fmod by the divisor, floor by 1, a comparison from false to true), not by a
 * rounding error, so they read their inputs in fp32. */
static int discontinuous(ir_op op) {
    switch (op) {
    case IR_OP_MOD:
    case IR_OP_FLOOR:
    case IR_OP_CEIL:
    case IR_OP_SIGN:
    case IR_OP_ROUND:
    case IR_OP_THRESHOLDED_RELU:
    case IR_OP_SHRINK:
    case IR_OP_EQUAL:
    case IR_OP_LESS:
    case IR_OP_LESS_EQUAL:
    case IR_OP_GREATER:
    case IR_OP_GREATER_EQUAL:
    case IR_OP_ARGMAX: /* comparisons too: a rounded tie moves an index */
    case IR_OP_ARGMIN:
    case IR_OP_TOPK:
    case IR_OP_GRID_SAMPLE: /* grid coordinates: a half-rounded one moves the sample (by pixels, at large sizes) */
    case IR_OP_ROI_ALIGN:   /* box coordinates, likewise */
    case IR_OP_NONZERO:     /* a value rounded to 0 drops out, */
    case IR_OP_UNIQUE:      /* two rounded to one merge, */
    case IR_OP_NMS: /* and a rounded IoU or score flips a suppression (docs/PLAN-data-dependent.md §10) */ return 1;
    default: return 0;
    }
}

/* a view: no element moves (reshape and its kin) */
static int is_view(ir_op op) {
    return op == IR_OP_RESHAPE || op == IR_OP_SQUEEZE || op == IR_OP_UNSQUEEZE || op == IR_OP_FLATTEN ||
        op == IR_OP_IDENTITY;
}

static int one_element(const ir_module *m, uint32_t t);

/* Index arithmetic: per tensor, 1 when its values come from integers and scalar constants alone
 * (an integer or bool tensor; a one-element float constant; an elementwise op or a view of such
 * tensors), as positions do on their way to T5's relative-position buckets (abs(i - j) as a
 * float, divided, log, scaled, cast back to an integer) or an additive mask where(cond, 0, min).
 * Such floats stay fp32, as eager code computes them whatever the model's dtype: a bucket
 * computed from a half log lands one bucket off near the boundaries, and the tensors are small
 * (positions, not activations). Node order is topological, so one pass suffices. */
static uint8_t *index_arithmetic(const ir_module *m) {
    uint8_t *ex = calloc(m->n_tensors ? m->n_tensors : 1, 1);
    if (!ex) return NULL;
    for (uint32_t t = 0; t < m->n_tensors; t++) {
        const ir_tensor *x = &m->tensors[t];
        ex[t] = !ir_dtype_is_float(x->dtype) || (x->constant != IR_NONE && one_element(m, t));
    }
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        if (!ir_op_is_elementwise(n->op) && !is_view(n->op) && n->op != IR_OP_EXPAND) continue;
        int all = 1;
        for (uint32_t k = 0; k < n->n_in; k++) all &= ex[n->in[k]];
        for (uint32_t k = 0; all && k < n->n_out; k++) ex[n->out[k]] = 1;
    }
    return ex;
}

/* Why a node stays fp32 (an fp32 island), kept per node while deciding and written out as text
 * at the end (islands): the reason, and the tensor or node it names, and a number. */
typedef enum why_kind {
    W_NONE,
    W_LOGITS,   /* ref: the softmax or sin/cos/tan node the island is for */
    W_RANGE,    /* ref: the tensor, v: its calibrated max |value| */
    W_NO_HALF,  /* the target's rules */
    W_LAYERS,   /* v: 1 when --fp32-layers names the op, 0 the node */
    W_STEP,     /* discontinuous in its inputs */
    W_INDEX,    /* index arithmetic (or a float range) */
    W_OUT_VIEW, /* ref: the graph output the view makes */
    W_UPCAST,   /* ref: the half tensor the model casts up */
    W_CONSTANT, /* ref: the constant whose values overflow the half type */
} why_kind;

typedef struct why {
    uint8_t kind;
    uint32_t ref;
    double v;
    double limit; /* W_RANGE: the options' fp16_limit that v exceeded */
} why;

/* node i may run in half (before the tensors change): 1; else 0 when it touches f32 (an island:
 * *w says why) or -1 when it does not (no island); exact: index_arithmetic's */
static int node_half(const ir_module *m, uint32_t i, const pass_precision_options *o, const uint8_t *exact, why *w) {
    const ir_node *n = &m->nodes[i];
    int f32 = 0;
    for (uint32_t k = 0; k < n->n_in; k++) f32 |= m->tensors[n->in[k]].dtype == SYMC_F32 && !reads_any(n->op);
    for (uint32_t k = 0; k < n->n_out; k++) f32 |= m->tensors[n->out[k]].dtype == SYMC_F32;
    if (n->op == IR_OP_CONSTANT || !f32) return -1;
    *w = (why){W_NONE, IR_NONE, 0, 0};
    int index = n->n_out > 0;
    for (uint32_t k = 0; k < n->n_out; k++) index &= exact[n->out[k]];
    if (n->op == IR_OP_RANGE || index) return w->kind = W_INDEX, 0;
    if (discontinuous(n->op)) return w->kind = W_STEP, 0;
    /* a view making a graph output stays fp32: the boundary cast goes in front of it, right
     * after the node computing the values, whose kernel can store it (GPT-2's ln_f -> reshape) */
    if (is_view(n->op) && n->n_out == 1 && is_output(m, n->out[0])) return *w = (why){W_OUT_VIEW, n->out[0], 0, 0}, 0;
    /* a cast from half the model makes itself (an fp16 model's own upcast) is its island */
    if (n->op == IR_OP_CAST && n->n_in == 1 &&
        (m->tensors[n->in[0]].dtype == SYMC_F16 || m->tensors[n->in[0]].dtype == SYMC_BF16))
        return *w = (why){W_UPCAST, n->in[0], 0, 0}, 0;
    if (o->fp32_layers && listed(o->fp32_layers, n->name)) return *w = (why){W_LAYERS, IR_NONE, 0, 0}, 0;
    if (o->fp32_layers && listed(o->fp32_layers, ir_op_get(n->op)->name)) return *w = (why){W_LAYERS, IR_NONE, 1, 0}, 0;
    if (o->rules && o->rules->half_ok && !o->rules->half_ok(m, i)) return w->kind = W_NO_HALF, 0;
    if (o->half == SYMC_F16 && o->max_abs) {
        /* the calibrated range: every f32 tensor the node stores or reads as half must fit */
        for (uint32_t k = 0; k < n->n_out + n->n_in; k++) {
            uint32_t t = k < n->n_out ? n->out[k] : n->in[k - n->n_out];
            if (k >= n->n_out && reads_any(n->op)) continue;
            if (m->tensors[t].dtype != SYMC_F32 || t >= o->n_max_abs) continue;
            if (!(o->max_abs[t] <= o->fp16_limit) && !isnan(o->max_abs[t]))
                return *w = (why){W_RANGE, t, o->max_abs[t], o->fp16_limit}, 0;
        }
    }
    return 1;
}

/* Softmax's input is kept fp32 with the nodes computing it: back through
 * elementwise ops, normalizations and data movement to the contraction making
 * the logits (Q·Kᵀ), and on through that contraction's operands to the
 * contractions making them (the Q and K projections). A logit carries an absolute error
 * of about |logit| times the storage's relative error, which exp turns into a
 * relative error of the probabilities: with Q and K stored in fp16 the e2e
 * attention models' logits (up to ~60) moved by 0.3 and their outputs by 3%;
 * with this island they stay within 1e-2. A layer norm making the logits
 * (bench model m5_long) is no help if its input was rounded: bf16 rounding of
 * its input moved the outputs by 2.1%. The probabilities, in [0, 1], are
 * stored in half again. Attention with small calibrated logits keeps only the
 * logits' matmul (`released`, see attention_logits below). */
/* sin, cos and tan take the same island as softmax: an angle carries an absolute
 * error of |angle| times the storage's relative error, and rotary embeddings'
 * angles (position x inverse frequency) reach thousands of radians; with the
 * angles in fp16 the e2e rotary model's outputs moved by 6% at S = 32. */
static int periodic(ir_op op) { return op == IR_OP_SIN || op == IR_OP_COS || op == IR_OP_TAN; }

/* a node of the island of node `cause` goes fp32; the first reason a node got stays its own */
static void to_island(uint8_t *half, why *w, uint32_t node, uint32_t cause) {
    if (half[node]) w[node] = (why){W_LOGITS, cause, 0, 0};
    half[node] = 0;
}

static void softmax_island(const ir_module *m, uint32_t node, uint32_t released, uint8_t *half, uint8_t *seen, why *w) {
    to_island(half, w, node, node);
    uint32_t stack[128], level[128], n = 0; /* level: contractions passed on the way */
    stack[n] = m->nodes[node].in[0], level[n++] = 0;
    while (n) {
        n--;
        uint32_t t = stack[n], lv = level[n], p = m->tensors[t].producer;
        if (p == IR_NONE || seen[p] || m->tensors[t].dtype != SYMC_F32) continue;
        ir_op op = m->nodes[p].op;
        ir_category cat = ir_op_get(op)->category;
        if (op == IR_OP_CONSTANT) continue;
        seen[p] = 1;
        to_island(half, w, p, node);
        if (cat == IR_CAT_CONTRACT) {
            if (p == released) continue; /* attention's logits: Q and K may be half (attention_logits) */
            if (lv++ > 0) continue;      /* a projection: its own inputs may be half */
        } else if (!(ir_op_is_elementwise(op) || cat == IR_CAT_MOVE || cat == IR_CAT_NORM || op == IR_OP_IDENTITY))
            continue;
        for (uint32_t k = 0; k < m->nodes[p].n_in && n < 128; k++) stack[n] = m->nodes[p].in[k], level[n++] = lv;
    }
}

/* ---- attention ---------------------------------------------------------------------------------
 * In attention, softmax(f(Q·Kᵀ))·V, the island can stop at the matmul making the logits: it
 * stays fp32 with the score function and the softmax, reading Q and K through widening casts,
 * while Q and K (and the projections making them) are half. The logits then carry an absolute
 * error of about |logit| times the half type's unit roundoff from Q and K's rounding, but they
 * are never stored in half, and a fused attention kernel keeps them in fp32 registers (the
 * CUDA target's reads half Q and K behind the casts, on its half tensor-core path). So Q and K
 * are half when the calibration says that error is small: est = max |logit| x unit roundoff
 * at most PASS_LOGIT_ERR_F16 / _BF16 (passes.h); unknown (no calibration): the old island.
 * Measured on the reference backend against fp32 (max error over the output / max |output|,
 * test inputs N(0, 1), calibration's uniform in [-1, 1)): m2_attn est 1.6e-3 (f16) gave
 * 3.4e-3 with half Q and K (7.9e-4 with the island), m4_causal est 2.5e-3 gave 5.8e-3
 * (1.1e-3), `attention` est 8.4e-3 gave 1.4e-2 (kept: 9.1e-4); in bf16 m2_attn est 1.3e-2
 * gave 2.7e-2 and m4_causal est 2.0e-2 gave 4.3e-2 (kept). HF BERT-base (random init) has
 * est 4.4e-4..6.3e-4 in f16 and 3.5e-3..5.1e-3 in bf16: half Q and K in both. */

/* tensor t has one element */
static int one_element(const ir_module *m, uint32_t t) {
    const ir_tensor *x = &m->tensors[t];
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t v;
        if (!sym_is_const(m->syms, x->dims[d], &v) || v != 1) return 0;
    }
    return x->rank >= 0;
}

/* |value| of a one-element f32/f16/bf16 constant, NaN when t is not one */
static double scalar_abs(const ir_module *m, uint32_t t) {
    double v;
    return ir_dtype_is_float(m->tensors[t].dtype) && ir_scalar_constant(m, t, &v) ? fabs(v) : NAN;
}

/* a float cast or an identity, one input and one output */
static int passes_value(const ir_module *m, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    if (n->n_in != 1 || n->n_out != 1) return 0;
    if (n->op == IR_OP_IDENTITY) return 1;
    return n->op == IR_OP_CAST && ir_dtype_is_float(m->tensors[n->in[0]].dtype) &&
        ir_dtype_is_float(m->tensors[n->out[0]].dtype);
}

/* of a binary node's operands (from `first`), the one carrying the logits: the one a matmul
 * makes, else the only one of the result's full shape; IR_NONE when that is ambiguous */
static uint32_t chain_operand(const ir_module *m, const ir_node *n, uint32_t first) {
    uint32_t pick = IR_NONE, n_full = 0;
    for (uint32_t k = first; k < n->n_in; k++) {
        uint32_t t = n->in[k], p = m->tensors[t].producer;
        if (p != IR_NONE && m->nodes[p].op == IR_OP_MATMUL) return t;
        if (ir_same_shape(&m->tensors[t], &m->tensors[n->out[0]])) pick = t, n_full++;
    }
    return n_full == 1 ? pick : IR_NONE;
}

/* Softmax node sm as attention's: over the last axis, its result the first operand of a matmul
 * (through up to two identities or float casts), its input a matmul's result through at most 8
 * nodes of a score function (mul or div by a constant scalar, add or sub, where, identity,
 * float cast, reshape: Swin's scores viewed per window for the shifted-window mask). Returns the logits' matmul (IR_NONE: not attention) and in *scale the product of
 * the constant factors, so a logit is scale * Q·Kᵀ. */
static uint32_t attention_logits(const ir_module *m, uint32_t sm, double *scale) {
    const ir_node *s = &m->nodes[sm];
    if (s->op != IR_OP_SOFTMAX || s->n_in != 1 || s->n_out != 1) return IR_NONE;
    const ir_attr *ax = ir_node_attr(s, "axis");
    int32_t rank = m->tensors[s->out[0]].rank;
    int64_t axis = ax && ax->kind == IR_ATTR_INT ? ax->i : -1; /* non-negative: ir_check_axes */
    if (rank < 2 || axis != rank - 1) return IR_NONE;
    /* the probabilities: read by a matmul as its first operand */
    uint32_t p = s->out[0];
    int found = 0;
    for (int hops = 0; hops < 3 && !found; hops++) {
        uint32_t next = IR_NONE;
        for (uint32_t i = 0; i < m->n_nodes && !found; i++) {
            const ir_node *n = &m->nodes[i];
            if (n->op == IR_OP_MATMUL && n->n_in == 2 && n->in[0] == p && n->in[1] != p) found = 1;
            else if (n->n_in == 1 && n->in[0] == p && passes_value(m, i) && next == IR_NONE) next = n->out[0];
        }
        if (found || next == IR_NONE) break;
        p = next;
    }
    if (!found) return IR_NONE;
    /* the score function, back to the logits */
    uint32_t x = s->in[0];
    *scale = 1.0;
    for (int hops = 0; hops <= 8; hops++) {
        uint32_t q = m->tensors[x].producer;
        if (q == IR_NONE) return IR_NONE;
        const ir_node *n = &m->nodes[q];
        if (n->n_out != 1) return IR_NONE;
        if (n->op == IR_OP_MATMUL) return n->n_in == 2 ? q : IR_NONE;
        if (hops == 8) return IR_NONE;
        uint32_t next = IR_NONE;
        if (passes_value(m, q) || n->op == IR_OP_RESHAPE) next = n->in[0]; /* a reshape: Swin's window view */
        else if ((n->op == IR_OP_MUL || n->op == IR_OP_DIV) && n->n_in == 2) {
            uint32_t k = one_element(m, n->in[1]) ? 1 : n->op == IR_OP_MUL && one_element(m, n->in[0]) ? 0 : 2;
            if (k == 2) return IR_NONE;
            double v = scalar_abs(m, n->in[k]);
            if (isnan(v) || v == 0 || !isfinite(v)) return IR_NONE;
            *scale = n->op == IR_OP_MUL ? *scale * v : *scale / v;
            next = n->in[1 - k];
        } else if ((n->op == IR_OP_ADD || n->op == IR_OP_SUB) && n->n_in == 2) {
            next = chain_operand(m, n, 0);
        } else if (n->op == IR_OP_WHERE && n->n_in == 3) {
            next = chain_operand(m, n, 1);
        }
        if (next == IR_NONE) return IR_NONE;
        x = next;
    }
    return IR_NONE;
}

/* the logits of attention softmax sm may come from half Q and K: the calibrated max |logit|
 * times the half type's unit roundoff is at most PASS_LOGIT_ERR_MAX (unknown: no) */
static uint32_t released_logits(const ir_module *m, uint32_t sm, const pass_precision_options *o) {
    double scale;
    uint32_t mm = attention_logits(m, sm, &scale);
    if (mm == IR_NONE || !o->max_abs) return IR_NONE;
    uint32_t t = m->nodes[mm].out[0];
    if (t >= o->n_max_abs || isnan(o->max_abs[t])) return IR_NONE;
    double u = o->half == SYMC_F16 ? 0x1p-11 : 0x1p-8; /* unit roundoff: half an ulp at 1 */
    double est = u * o->max_abs[t] * scale;
    return est <= (o->half == SYMC_F16 ? PASS_LOGIT_ERR_F16 : PASS_LOGIT_ERR_BF16) ? mm : IR_NONE;
}

/* the text of why w for node i of a half module (kind: its short label) */
static void why_text(const ir_module *m, uint32_t i, const why *w, symc_dtype half, const char **kind, char *buf,
                     size_t cap) {
    const ir_node *n = &m->nodes[i];
    const char *hn = symc_dtype_name(half), *ref_t = w->ref < m->n_tensors ? m->tensors[w->ref].name : "?";
    switch ((why_kind)w->kind) {
    case W_LOGITS: {
        const ir_node *c = &m->nodes[w->ref];
        int angle = periodic(c->op);
        const char *u = half == SYMC_F16 ? "2^-11" : "2^-8";
        *kind = angle ? "angles" : "softmax logits";
        int k = w->ref == i
            ? snprintf(buf, cap, "reads its %s in fp32: stored in %s, ", angle ? "angles" : "logits", hn)
            : snprintf(buf, cap, "computes the %s of %s '%s': stored in %s, ", angle ? "angles" : "logits",
                       ir_op_get(c->op)->name, c->name, hn);
        if (k <= 0 || (size_t)k >= cap) return;
        if (angle)
            snprintf(buf + k, cap - (size_t)k,
                     "an angle would carry |angle| x %s of error (rotary angles reach thousands of radians)", u);
        else
            snprintf(buf + k, cap - (size_t)k,
                     "a logit would carry |logit| x %s of error, which exp turns into a relative error of the "
                     "probabilities",
                     u);
        return;
    }
    case W_RANGE:
        *kind = "calibrated range";
        snprintf(buf, cap,
                 "tensor '%s' reached max |value| %.4g in the calibration run, above the %g kept under "
                 "%s's overflow at 65504",
                 ref_t, w->v, w->limit, hn);
        return;
    case W_NO_HALF:
        *kind = "no half kernel";
        snprintf(buf, cap, "the target has no half kernel for %s", ir_op_get(n->op)->name);
        return;
    case W_LAYERS:
        *kind = "--fp32-layers";
        snprintf(buf, cap, "--fp32-layers names its %s", w->v != 0 ? "op" : "node");
        return;
    case W_STEP:
        *kind = "discontinuous";
        snprintf(buf, cap,
                 "%s is discontinuous in its inputs: an input rounded to %s can move its result by a "
                 "whole step",
                 ir_op_get(n->op)->name, hn);
        return;
    case W_INDEX:
        *kind = "index arithmetic";
        snprintf(buf, cap,
                 "its floats come from integers and scalar constants alone (positions), computed in fp32 "
                 "as eager code does");
        return;
    case W_OUT_VIEW:
        *kind = "output boundary";
        snprintf(buf, cap,
                 "a view making graph output '%s': the cast to its declared type goes before it, into the "
                 "kernel computing the values",
                 ref_t);
        return;
    case W_UPCAST:
        *kind = "model upcast";
        snprintf(buf, cap, "the model's own cast of '%s' up from %s", ref_t,
                 w->ref < m->n_tensors ? symc_dtype_name(m->tensors[w->ref].dtype) : hn);
        return;
    case W_CONSTANT:
        *kind = "constant overflow";
        snprintf(buf, cap, "reads constant '%s', whose values overflow %s", ref_t, hn);
        return;
    case W_NONE: break;
    }
    *kind = "other";
    snprintf(buf, cap, "kept fp32");
}

/* m->islands: the original nodes left fp32 that touch f32 (w[i].kind set), in node order */
static symc_status islands(prec *p, const uint8_t *half, const why *w) {
    ir_module *m = p->m;
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n0; i++) n += !half[i] && w[i].kind != W_NONE;
    m->islands = NULL;
    m->n_islands = 0;
    if (!n) return SYMC_OK;
    ir_island *is = ir_alloc(m, n * sizeof *is);
    if (!is) return symc_error_setf(p->err, SYMC_ERR_NOMEM, "out of memory listing fp32 islands");
    for (uint32_t i = 0, k = 0; i < p->n0; i++) {
        if (half[i] || w[i].kind == W_NONE) continue;
        char buf[512];
        const char *kind = NULL;
        why_text(m, i, &w[i], p->half, &kind, buf, sizeof buf);
        is[k] = (ir_island){m->nodes[i].name, ir_op_get(m->nodes[i].op)->name, kind, ir_strdup(m, buf)};
        if (!is[k++].why) return symc_error_setf(p->err, SYMC_ERR_NOMEM, "out of memory listing fp32 islands");
    }
    m->islands = is;
    m->n_islands = n;
    return SYMC_OK;
}

symc_status pass_precision(ir_module *m, const pass_precision_options *o, symc_error *err) {
    int convert = o && (o->half == SYMC_F16 || o->half == SYMC_BF16);
    if (!o || (!convert && !(o->rules && o->rules->half_ok))) return SYMC_OK;
    symc_status st = convert ? check_layers(m, o->fp32_layers, err) : SYMC_OK;
    if (st) return st;
    prec p = {.m = m, .half = o->half, .n0 = m->n_nodes, .t0 = m->n_tensors, .err = err};
    uint8_t *half = calloc(p.n0 ? p.n0 : 1, 1);
    uint8_t *seen = calloc(p.n0 ? p.n0 : 1, 1);     /* softmax_island's walk */
    uint8_t *all_half = calloc(p.t0 ? p.t0 : 1, 1); /* per constant: read only by half nodes */
    uint32_t *readers = calloc(p.t0 ? p.t0 : 1, sizeof *readers);
    p.to_half = malloc((p.t0 ? p.t0 : 1) * sizeof *p.to_half);
    p.to_f32 = malloc((p.t0 ? p.t0 : 1) * sizeof *p.to_f32);
    p.made = calloc(p.t0 ? p.t0 : 1, 1);
    p.fits = calloc(p.t0 ? p.t0 : 1, 1);
    uint8_t *exact = index_arithmetic(m);
    why *w = calloc(p.n0 ? p.n0 : 1, sizeof *w); /* per node: why it stays fp32 */
    if (!half || !seen || !all_half || !readers || !p.to_half || !p.to_f32 || !p.made || !p.fits || !exact || !w) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory in the precision pass");
        goto done;
    }
    for (uint32_t t = 0; t < p.t0; t++) p.to_half[t] = p.to_f32[t] = IR_NONE, all_half[t] = 1;
    /* without conversion every node stays as it is (half all 0): only the upcasts below */
    for (uint32_t i = 0; convert && i < p.n0; i++) half[i] = node_half(m, i, o, exact, &w[i]) == 1;
    for (uint32_t i = 0; convert && i < p.n0; i++)
        if (m->nodes[i].op == IR_OP_SOFTMAX || m->nodes[i].op == IR_OP_LOG_SOFTMAX || periodic(m->nodes[i].op))
            softmax_island(m, i, m->nodes[i].op == IR_OP_SOFTMAX ? released_logits(m, i, o) : IR_NONE, half, seen, w);
    /* a constant whose values overflow the half type keeps its readers fp32 (a cast would overflow too) */
    for (uint32_t i = 0; convert && i < p.n0; i++)
        for (uint32_t k = 0; half[i] && !reads_any(m->nodes[i].op) && k < m->nodes[i].n_in; k++) {
            uint32_t t = m->nodes[i].in[k];
            if (m->tensors[t].dtype == SYMC_F32 && m->tensors[t].constant != IR_NONE && !constant_fits(&p, t))
                half[i] = 0, w[i] = (why){W_CONSTANT, t, 0, 0};
        }
    for (uint32_t i = 0; i < p.n0; i++)
        for (uint32_t k = 0; k < m->nodes[i].n_in; k++) {
            uint32_t t = m->nodes[i].in[k];
            if (reads_any(m->nodes[i].op)) continue;
            readers[t]++;
            all_half[t] &= half[i];
        }
    /* constants: converted when every reader is half and the values fit */
    for (uint32_t t = 0; t < p.t0; t++) {
        ir_tensor *x = &m->tensors[t];
        if (x->dtype != SYMC_F32 || x->constant == IR_NONE || !readers[t] || !all_half[t] || is_output(m, t)) continue;
        if (!constant_fits(&p, t)) continue;
        if ((st = convert_constant(&p, t))) goto done;
    }
    /* results of half nodes */
    for (uint32_t i = 0; i < p.n0; i++) {
        if (!half[i]) continue;
        ir_node *n = &m->nodes[i];
        if (n->op == IR_OP_CAST) {
            ir_attr *to = NULL;
            for (uint32_t a = 0; a < n->n_attrs; a++)
                if (!strcmp(n->attrs[a].name, "to")) to = &n->attrs[a];
            if (!to || to->i != SYMC_F32) continue;
            if (is_output(m, n->out[0])) continue;
            to->i = o->half;
        }
        for (uint32_t k = 0; k < m->nodes[i].n_out; k++) { /* twin/add_cast may move the node table: no n */
            uint32_t t = m->nodes[i].out[k];
            if (m->tensors[t].dtype != SYMC_F32) continue;
            if (!is_output(m, t)) {
                m->tensors[t].dtype = o->half;
                p.made[t] = 1;
                continue;
            }
            /* a graph output keeps its dtype: the node writes a half twin, a cast after it the output */
            uint32_t h;
            if ((st = twin(&p, t, o->half, &h))) goto done;
            m->nodes[i].out[k] = h;
            m->tensors[h].producer = i;
            if ((st = add_cast(&p, h, t, SYMC_F32, i, 1))) goto done;
            p.to_half[t] = h;
        }
    }
    /* inputs: each node reads its tensors in its own precision */
    for (uint32_t i = 0; i < p.n0; i++) {
        if (reads_any(m->nodes[i].op)) continue;
        for (uint32_t k = 0; k < m->nodes[i].n_in; k++) {
            uint32_t t = m->nodes[i].in[k];
            if (t >= p.t0) continue;
            symc_dtype dt = m->tensors[t].dtype;
            uint32_t v = t;
            if (half[i] && dt == SYMC_F32) {
                if (p.to_half[t] != IR_NONE) v = p.to_half[t];
                else st = version(&p, t, o->half, i, &v);
            } else if (!half[i] && p.made[t]) {
                /* a tensor this pass made half, read by an fp32 node */
                st = version(&p, t, SYMC_F32, i, &v);
            }
            if (st) goto done;
            m->nodes[i].in[k] = v;
        }
    }
    /* half tensors the model itself declares (an fp16/bf16 model) on a node the target cannot run
     * in half: the node computes in fp32 between casts */
    for (uint32_t i = 0; o->rules && o->rules->half_ok && i < p.n0; i++) {
        if (reads_any(m->nodes[i].op) || m->nodes[i].op == IR_OP_CONSTANT || o->rules->half_ok(m, i)) continue;
        for (uint32_t k = 0; k < m->nodes[i].n_in; k++) {
            uint32_t t = m->nodes[i].in[k], v;
            symc_dtype dt = m->tensors[t].dtype;
            if (t >= p.t0 || (dt != SYMC_F16 && dt != SYMC_BF16)) continue;
            if ((st = version(&p, t, SYMC_F32, i, &v))) goto done;
            m->nodes[i].in[k] = v;
        }
        for (uint32_t k = 0; k < m->nodes[i].n_out; k++) {
            uint32_t t = m->nodes[i].out[k], w;
            symc_dtype dt = m->tensors[t].dtype;
            if (dt != SYMC_F16 && dt != SYMC_BF16) continue;
            if ((st = twin(&p, t, SYMC_F32, &w))) goto done;
            m->nodes[i].out[k] = w;
            m->tensors[w].producer = i;
            if ((st = add_cast(&p, w, t, dt, i, 1))) goto done;
        }
    }
    if (convert && (st = islands(&p, half, w))) goto done;
    if (p.n_new) st = reorder(&p);
    if (!st) ir_fuse_drop(m);
done:
    free(half);
    free(seen);
    free(all_half);
    free(readers);
    free(p.to_half);
    free(p.to_f32);
    free(p.made);
    free(p.fits);
    free(exact);
    free(w);
    free(p.anchor);
    free(p.after);
    return st;
}
