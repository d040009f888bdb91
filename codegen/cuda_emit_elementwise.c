/* Elementwise kernels: a fused group of unary/binary/where/cast/clip/expand
 * nodes computed one output element per thread, plus batch_norm (inference)
 * and the broadcast copy that materializes gemm's C.
 *
 * A group is a root node plus every node the fusion plan marks "inlined"
 * into it, transitively (passes/fuse.c): a node whose output only the group
 * reads and whose shape is the root's. So the group's nodes all have the
 * root's shape, each leaf (a tensor produced outside the group) is read once
 * per element through its own broadcast offset into that shape, and each
 * node becomes one `const` local named after its output tensor (v<index>),
 * in node order, which is a topological order. Values compute in the output
 * dtype's own C type, float in fp32 with the fp32 math functions (the
 * reference computes in f64 and rounds once; the difference is a few ulp).
 * A node's expression (op_expr) comes from the part for its kind of op:
 * unary math and tests, activations, clip, binary ops and casts, each a
 * switch over its ops; the dtypes each op takes are checked after.
 *
 * A group whose root is itself inlined feeds a row kernel (softmax, a norm,
 * a row reduction): cg_emit_value writes the same per-element code inside
 * that kernel's loops, at the flat index the kernel reads, so the group's
 * output is never stored. When every leaf is either the output's own shape
 * (f32) or a scalar, the output is f32 and its element count is provably a
 * multiple of 4, the kernel moves float4s: one work item per 4 elements, the
 * group's code once per lane. Pointers from the caller need not be 16-byte
 * aligned, so the kernel tests them and falls back to the scalar loop. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cuda_emit.h"

/* the group's nodes (ascending) and leaf tensors */
typedef struct group {
    uint32_t nodes[CG_GROUP_MAX_NODES], n_nodes;
    uint32_t leaves[CG_KW_MAX_ARGS], n_leaves;
    int overflow;
} group;

static void collect(cg_cuda *c, uint32_t node, group *g) {
    for (uint32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i] == node) return;
    if (g->n_nodes == CG_GROUP_MAX_NODES) {
        g->overflow = 1;
        return;
    }
    g->nodes[g->n_nodes++] = node;
    const ir_node *n = &c->m->nodes[node];
    for (uint32_t k = 0; k < n->n_in; k++) {
        uint32_t t = n->in[k], p = c->m->tensors[t].producer;
        if (p != IR_NONE && cg_role(c, p) == IR_FUSE_INLINED) {
            collect(c, p, g);
            continue;
        }
        int seen = 0;
        for (uint32_t j = 0; j < g->n_leaves && !seen; j++) seen = g->leaves[j] == t;
        if (seen) continue;
        if (g->n_leaves == CG_KW_MAX_ARGS) {
            g->overflow = 1;
            return;
        }
        g->leaves[g->n_leaves++] = t;
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void int64_literal(char *buf, size_t cap, int64_t v) {
    if (v == INT64_MIN) snprintf(buf, cap, "(-9223372036854775807LL - 1LL)");
    else snprintf(buf, cap, "(%lldLL)", (long long)v);
}

/* what op_expr's parts read: the node, its first input and result, the result's C type, the
 * operands' value names (v<tensor>), whether the first input is a float, and where the
 * expression goes */
typedef struct ex_ctx {
    cg_cuda *c;
    const ir_node *n;
    const ir_tensor *x, *y;
    const char *T;
    char a[24], b[24], w[24];
    int fl;
    char *buf;
    size_t cap;
} ex_ctx;

#define OUT(...) snprintf(e->buf, e->cap, __VA_ARGS__)

/* the unary math ops, logic and tests: e's expression into e->buf; 0 when the op is not one */
static int math_expr(const ex_ctx *e) {
    const ir_node *n = e->n;
    const char *T = e->T;
    const char *a = e->a;
    const int fl = e->fl;
    switch (e->n->op) {
    case IR_OP_EXPAND: OUT("%s", a); break;
    case IR_OP_NEG: OUT(fl ? "(-%s)" : "((%s)(0ULL - (unsigned long long)%s))", fl ? a : T, a); break;
    case IR_OP_ABS:
        if (fl) OUT("sc_fabs(%s)", a);
        else OUT("(%s < 0 ? (%s)(0ULL - (unsigned long long)%s) : %s)", a, T, a, a);
        break;
    case IR_OP_SIGN:
        if (fl) OUT("(%s != %s ? %s : (%s)((%s > 0) - (%s < 0)))", a, a, a, T, a, a);
        else OUT("((%s)((%s > 0) - (%s < 0)))", T, a, a);
        break;
    case IR_OP_EXP: OUT("sc_exp(%s)", a); break;
    case IR_OP_LOG: OUT("sc_log(%s)", a); break;
    case IR_OP_SQRT: OUT("sc_sqrt(%s)", a); break;
    case IR_OP_RSQRT: OUT("((%s)1 / sc_sqrt(%s))", T, a); break;
    case IR_OP_RECIPROCAL: OUT("((%s)1 / %s)", T, a); break;
    case IR_OP_FLOOR: OUT("sc_floor(%s)", a); break;
    case IR_OP_CEIL: OUT("sc_ceil(%s)", a); break;
    case IR_OP_ERF: OUT("sc_erf(%s)", a); break;
    case IR_OP_TANH: OUT("sc_tanh(%s)", a); break;
    case IR_OP_SIN: OUT("sc_sin(%s)", a); break;
    case IR_OP_COS: OUT("sc_cos(%s)", a); break;
    case IR_OP_TAN: OUT("sc_tan(%s)", a); break;
    case IR_OP_ROUND: OUT("sc_rint(%s)", a); break; /* the current rounding mode: to nearest even */
    case IR_OP_ASIN: OUT("sc_asin(%s)", a); break;
    case IR_OP_ACOS: OUT("sc_acos(%s)", a); break;
    case IR_OP_ATAN: OUT("sc_atan(%s)", a); break;
    case IR_OP_SINH: OUT("sc_sinh(%s)", a); break;
    case IR_OP_COSH: OUT("sc_cosh(%s)", a); break;
    case IR_OP_ASINH: OUT("sc_asinh(%s)", a); break;
    case IR_OP_ACOSH: OUT("sc_acosh(%s)", a); break;
    case IR_OP_ATANH: OUT("sc_atanh(%s)", a); break;
    case IR_OP_SOFTPLUS: OUT("sc_softplus(%s)", a); break;
    case IR_OP_SOFTSIGN: OUT("(%s / ((%s)1 + sc_fabs(%s)))", a, T, a); break;
    case IR_OP_MISH: OUT("(%s * sc_tanh(sc_softplus(%s)))", a, a); break;
    case IR_OP_EXPM1: OUT("sc_expm1(%s)", a); break;
    case IR_OP_LOG1P: OUT("sc_log1p(%s)", a); break;
    case IR_OP_NOT: OUT("(!%s)", a); break;
    case IR_OP_IS_NAN: OUT("isnan(%s)", a); break;
    case IR_OP_IS_INF: {
        int pos = cg_attr_int(n, "detect_positive", 1) != 0, neg = cg_attr_int(n, "detect_negative", 1) != 0;
        OUT("(isinf(%s) && (%s > 0 ? %d : %d))", a, a, pos, neg);
        break;
    }
    default: return 0;
    }
    return 1;
}

/* the activations (their attributes as literals of the result dtype); 0 when the op is not one */
static int activation_expr(const ex_ctx *e) {
    const ir_node *n = e->n;
    const ir_tensor *y = e->y;
    const char *T = e->T;
    const char *a = e->a;
    const char *b = e->b;
    char l1[96], l2[96];
    switch (e->n->op) {
    case IR_OP_SIGMOID: OUT("((%s)1 / ((%s)1 + sc_exp(-%s)))", T, T, a); break;
    case IR_OP_RELU: OUT("(%s < (%s)0 ? (%s)0 : %s)", a, T, T, a); break; /* NaN stays NaN */
    case IR_OP_LEAKY_RELU:
        cg_float_literal(l1, sizeof l1, cg_attr_float(n, "alpha", 0.01), y->dtype);
        OUT("(%s < (%s)0 ? %s * %s : %s)", a, T, l1, a, a);
        break;
    case IR_OP_GELU:
        if (!strcmp(cg_attr_str(n, "approximate", "none"), "tanh"))
            OUT("((%s)0.5 * %s * ((%s)1 + sc_tanh((%s)0.79788456080286535588 * (%s + (%s)0.044715 * %s * %s * %s))))",
                T, a, T, T, a, T, a, a, a);
        else OUT("((%s)0.5 * %s * ((%s)1 + sc_erf(%s * (%s)0.70710678118654752440)))", T, a, T, a, T);
        break;
    case IR_OP_SILU: OUT("(%s * ((%s)1 / ((%s)1 + sc_exp(-%s))))", a, T, T, a); break;
    case IR_OP_HARD_SIGMOID:
        cg_float_literal(l1, sizeof l1, cg_attr_float(n, "alpha", 0.2), y->dtype);
        cg_float_literal(l2, sizeof l2, cg_attr_float(n, "beta", 0.5), y->dtype);
        OUT("sc_fmax((%s)0, sc_fmin((%s)1, %s * %s + %s))", T, T, l1, a, l2);
        break;
    case IR_OP_HARD_SWISH: OUT("(%s * sc_fmax((%s)0, sc_fmin((%s)1, %s / (%s)6 + (%s)0.5)))", a, T, T, a, T, T); break;
    case IR_OP_ELU:
        cg_float_literal(l1, sizeof l1, cg_attr_float(n, "alpha", 1.0), y->dtype);
        OUT("(%s < (%s)0 ? %s * sc_expm1(%s) : %s)", a, T, l1, a, a);
        break;
    case IR_OP_SELU:
        cg_float_literal(l1, sizeof l1, cg_attr_float(n, "alpha", 1.67326319217681884765625), y->dtype);
        cg_float_literal(l2, sizeof l2, cg_attr_float(n, "gamma", 1.05070102214813232421875), y->dtype);
        OUT("(%s * (%s <= (%s)0 ? %s * sc_expm1(%s) : %s))", l2, a, T, l1, a, a);
        break;
    case IR_OP_CELU:
        cg_float_literal(l1, sizeof l1, cg_attr_float(n, "alpha", 1.0), y->dtype);
        OUT("(%s != %s ? %s : sc_fmax((%s)0, %s) + sc_fmin((%s)0, %s * sc_expm1(%s / %s)))", a, a, a, T, a, T, l1, a,
            l1);
        break;
    case IR_OP_THRESHOLDED_RELU:
        cg_float_literal(l1, sizeof l1, cg_attr_float(n, "alpha", 1.0), y->dtype);
        OUT("(%s > %s ? %s : (%s)0)", a, l1, a, T);
        break;
    case IR_OP_SHRINK:
        cg_float_literal(l1, sizeof l1, cg_attr_float(n, "lambd", 0.5), y->dtype);
        cg_float_literal(l2, sizeof l2, cg_attr_float(n, "bias", 0.0), y->dtype);
        OUT("(%s < -%s ? %s + %s : %s > %s ? %s - %s : (%s)0)", a, l1, a, l2, a, l1, a, l2, T);
        break;
    case IR_OP_PRELU: OUT("(%s < (%s)0 ? (%s)(%s * %s) : %s)", a, T, T, b, a, a); break;
    default: return 0;
    }
    return 1;
}

/* clip: floats keep NaN; integers clamp to the integers inside [min, max], saturated to the
 * dtype's range; 0 when the op is not clip */
static int clip_expr(const ex_ctx *e) {
    const ir_node *n = e->n;
    const ir_tensor *x = e->x;
    const ir_tensor *y = e->y;
    const char *T = e->T;
    const char *a = e->a;
    const int fl = e->fl;
    char l1[96], l2[96];
    switch (e->n->op) {
    case IR_OP_CLIP: {
        const ir_attr *lo = ir_node_attr(n, "min"), *hi = ir_node_attr(n, "max");
        /* min > max: every value becomes max (ONNX, NumPy), as with min = max */
        double lo_f = lo && hi && lo->f > hi->f ? hi->f : lo ? lo->f : 0;
        if (fl) {
            char lo_s[400] = "", hi_s[400] = "";
            if (lo) {
                cg_float_literal(l1, sizeof l1, lo_f, y->dtype);
                snprintf(lo_s, sizeof lo_s, "%s < %s ? %s : ", a, l1, l1);
            }
            if (hi) {
                cg_float_literal(l2, sizeof l2, hi->f, y->dtype);
                snprintf(hi_s, sizeof hi_s, "%s > %s ? %s : ", a, l2, l2);
            }
            OUT("(%s != %s ? %s : %s%s%s)", a, a, a, lo_s, hi_s, a);
        } else if (x->dtype == SYMC_U64) { /* the integers inside [min, max], saturated to [0, 2^64) */
            double lf = lo ? ceil(lo_f) : 0, hf = hi ? floor(hi->f) : 18446744073709551616.0;
            unsigned long long lu = lf <= 0 ? 0ull : lf >= 18446744073709551616.0 ? ~0ull : (unsigned long long)lf;
            unsigned long long hu = hf <= 0 ? 0ull : hf >= 18446744073709551616.0 ? ~0ull : (unsigned long long)hf;
            if (lu > hu) lu = hu;
            OUT("(%s < %lluULL ? %lluULL : %s > %lluULL ? %lluULL : %s)", a, lu, lu, a, hu, hu, a);
        } else { /* the integers inside [min, max], saturated to int64 */
            double lf = lo ? ceil(lo_f) : -INFINITY, hf = hi ? floor(hi->f) : INFINITY;
            if (lf > hf) lf = hf; /* ceil/floor of bounds in one gap between integers */
            char lo_s[40], hi_s[40];
            int64_literal(lo_s, sizeof lo_s, lf <= -9223372036854775808.0 ? INT64_MIN : (int64_t)lf);
            int64_literal(hi_s, sizeof hi_s, hf >= 9223372036854775808.0 ? INT64_MAX : (int64_t)hf);
            OUT("((%s)((long long)%s < %s ? %s : (long long)%s > %s ? %s : (long long)%s))", T, a, lo_s, lo_s, a, hi_s,
                hi_s, a);
        }
        break;
    }
    default: return 0;
    }
    return 1;
}

/* the binary arithmetic, comparison, bitwise and select ops, and cast; 0 when the op is not one */
static int binary_expr(const ex_ctx *e) {
    const ir_node *n = e->n;
    const ir_tensor *x = e->x;
    const ir_tensor *y = e->y;
    const char *T = e->T;
    const char *a = e->a;
    const char *b = e->b;
    const char *w = e->w;
    const int fl = e->fl;
    cg_cuda *c = e->c;
    switch (e->n->op) {
    case IR_OP_BITWISE_AND: OUT("((%s)(%s & %s))", T, a, b); break;
    case IR_OP_BITWISE_OR: OUT("((%s)(%s | %s))", T, a, b); break;
    case IR_OP_BITWISE_XOR: OUT("((%s)(%s ^ %s))", T, a, b); break;
    case IR_OP_BIT_SHIFT: { /* unsigned operands; a shift by the width or more gives 0, as the reference */
        int left = !strcmp(cg_attr_str(n, "direction", "left"), "left");
        OUT("(%s >= %uu ? (%s)0 : (%s)(%s %s %s))", b, (unsigned)(8 * symc_dtype_size(x->dtype)), T, T, a,
            left ? "<<" : ">>", b);
        break;
    }
    case IR_OP_CAST:
        if (y->dtype == SYMC_BOOL) OUT("(%s != 0)", a);
        else if (fl && cg_is_small_int(y->dtype)) /* saturated like the reference (cvt would wrap them) */
            OUT("(%s != %s ? (%s)0 : (%s)sc_fmin(sc_fmax((double)%s, %s), %s))", a, a, T, T, a,
                y->dtype == SYMC_I8        ? "-128.0"
                    : y->dtype == SYMC_I16 ? "-32768.0"
                                           : "0.0",
                y->dtype == SYMC_I8        ? "127.0"
                    : y->dtype == SYMC_U8  ? "255.0"
                    : y->dtype == SYMC_I16 ? "32767.0"
                                           : "65535.0");
        else OUT("((%s)%s)", T, a); /* float -> int: cvt.rzi saturates, NaN -> 0, as the reference */
        break;
    case IR_OP_ADD: OUT("(%s + %s)", a, b); break;
    case IR_OP_SUB: OUT("(%s - %s)", a, b); break;
    case IR_OP_MUL: OUT("(%s * %s)", a, b); break;
    case IR_OP_DIV:
        if (fl) OUT("(%s / %s)", a, b);
        else OUT("sc_idiv(%s, %s, %uu)", a, b, (unsigned)(n - c->m->nodes));
        break;
    case IR_OP_POW: {
        symc_dtype eb = c->m->tensors[n->in[1]].dtype;
        double ex;
        if (!fl && !ir_dtype_is_float(eb)) OUT("((%s)sc_ipow((long long)%s, (long long)%s))", T, a, b);
        else if (fl && ir_scalar_constant(c->m, n->in[1], &ex) && (ex == 2.0 || ex == 3.0)) {
            /* a constant square or cube (GPT-2's tanh GELU: x^3) as products: powf's log and exp
             * made that GELU kernel ALU-bound; x * x * x is within an ulp of it, NaN and the
             * infinities and signed zeros as pow's */
            if (ex == 2.0) OUT("((%s)%s * (%s)%s)", T, a, T, a);
            else OUT("((%s)%s * (%s)%s * (%s)%s)", T, a, T, a, T, a);
        } else {
            const char *D = x->dtype == SYMC_F64 || eb == SYMC_F64 ? "double" : "float";
            OUT("((%s)sc_pow((%s)%s, (%s)%s))", T, D, a, D, b);
        }
        break;
    }
    case IR_OP_MOD: {
        int py = cg_attr_int(n, "fmod", 0) == 0;
        if (fl) OUT(py ? "sc_fmod_py(%s, %s)" : "sc_fmod(%s, %s)", a, b);
        else OUT("sc_imod(%s, %s, %s, %uu)", a, b, py ? "true" : "false", (unsigned)(n - c->m->nodes));
        break;
    }
    case IR_OP_MIN: OUT("sc_min(%s, %s)", a, b); break;
    case IR_OP_MAX: OUT("sc_max(%s, %s)", a, b); break;
    case IR_OP_EQUAL: OUT("(%s == %s)", a, b); break;
    case IR_OP_LESS: OUT("(%s < %s)", a, b); break;
    case IR_OP_LESS_EQUAL: OUT("(%s <= %s)", a, b); break;
    case IR_OP_GREATER: OUT("(%s > %s)", a, b); break;
    case IR_OP_GREATER_EQUAL: OUT("(%s >= %s)", a, b); break;
    case IR_OP_AND: OUT("(%s && %s)", a, b); break;
    case IR_OP_OR: OUT("(%s || %s)", a, b); break;
    case IR_OP_WHERE: OUT("(%s ? %s : %s)", a, b, w); break;
    default: return 0;
    }
    return 1;
}

#undef OUT

/* the dtypes op n takes beyond what the elementwise rules check: bitwise ops integers, bit
 * shifts unsigned integers, the float-only math ops floats (the reference's ops.def dtype sets) */
static symc_status op_dtype_check(cg_cuda *c, uint32_t node, const ir_tensor *x, int fl) {
    const ir_node *n = &c->m->nodes[node];
    if ((n->op == IR_OP_BITWISE_AND || n->op == IR_OP_BITWISE_OR || n->op == IR_OP_BITWISE_XOR) &&
        (fl || x->dtype == SYMC_BOOL))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; the op needs an integer dtype", x->name,
                       symc_dtype_name(x->dtype));
    if (n->op == IR_OP_BIT_SHIFT && x->dtype != SYMC_U8 && x->dtype != SYMC_U16 && x->dtype != SYMC_U32 &&
        x->dtype != SYMC_U64)
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; the op needs an unsigned integer dtype",
                       x->name, symc_dtype_name(x->dtype));
    /* the reference supports these only on floats (ops.def dtype sets) */
    if (!fl &&
        (n->op == IR_OP_EXP || n->op == IR_OP_LOG || n->op == IR_OP_SQRT || n->op == IR_OP_RSQRT ||
         n->op == IR_OP_RECIPROCAL || n->op == IR_OP_FLOOR || n->op == IR_OP_CEIL || n->op == IR_OP_ERF ||
         n->op == IR_OP_TANH || n->op == IR_OP_SIN || n->op == IR_OP_COS || n->op == IR_OP_TAN ||
         n->op == IR_OP_SIGMOID || n->op == IR_OP_LEAKY_RELU || n->op == IR_OP_GELU || n->op == IR_OP_SILU ||
         n->op == IR_OP_HARD_SIGMOID || n->op == IR_OP_HARD_SWISH || n->op == IR_OP_ROUND || n->op == IR_OP_ASIN ||
         n->op == IR_OP_ACOS || n->op == IR_OP_ATAN || n->op == IR_OP_SINH || n->op == IR_OP_COSH ||
         n->op == IR_OP_ASINH || n->op == IR_OP_ACOSH || n->op == IR_OP_ATANH || n->op == IR_OP_ELU ||
         n->op == IR_OP_SELU || n->op == IR_OP_CELU || n->op == IR_OP_SOFTPLUS || n->op == IR_OP_SOFTSIGN ||
         n->op == IR_OP_THRESHOLDED_RELU || n->op == IR_OP_MISH || n->op == IR_OP_SHRINK || n->op == IR_OP_EXPM1 ||
         n->op == IR_OP_LOG1P))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' is %s; the op needs a float dtype", x->name,
                       symc_dtype_name(x->dtype));
    return SYMC_OK;
}

/* The expression of node n over its inputs' locals (v<tensor>), into buf: the op's part (math,
 * activation, clip, binary) writes it, then its dtypes are checked. */
static symc_status op_expr(cg_cuda *c, uint32_t node, char *buf, size_t cap) {
    const ir_node *n = &c->m->nodes[node];
    ex_ctx e = {.c = c, .n = n, .x = &c->m->tensors[n->in[0]], .y = &c->m->tensors[n->out[0]], .buf = buf, .cap = cap};
    e.T = cg_ctype(e.y->dtype);
    snprintf(e.a, sizeof e.a, "v%u", n->in[0]);
    snprintf(e.b, sizeof e.b, "v%u", n->n_in > 1 ? n->in[1] : n->in[0]);
    snprintf(e.w, sizeof e.w, "v%u", n->n_in > 2 ? n->in[2] : n->in[0]);
    e.fl = ir_dtype_is_float(e.x->dtype);
    if (!math_expr(&e) && !activation_expr(&e) && !clip_expr(&e) && !binary_expr(&e))
        return cg_fail(c, node, SYMC_ERR_INTERNAL, "not an elementwise op");
    return op_dtype_check(c, node, e.x, e.fl);
}

/* The group of `root` with its nodes in node (topological) order. */
static symc_status group_of(cg_cuda *c, uint32_t root, group *g) {
    memset(g, 0, sizeof *g);
    collect(c, root, g);
    if (g->overflow) return cg_fail(c, root, SYMC_ERR_UNSUPPORTED, "the fused elementwise group is too large");
    qsort(g->nodes, g->n_nodes, sizeof g->nodes[0], cmp_u32);
    for (uint32_t i = 0; i < g->n_leaves; i++) {
        symc_status st = cg_check_dtype(c, root, g->leaves[i], 1);
        if (st) return st;
    }
    return SYMC_OK;
}

/* `const T v<t> = ...;` for every node of g after its leaves' locals */
static symc_status group_nodes(cg_kw *k, const group *g) {
    cg_cuda *c = k->c;
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &c->m->nodes[g->nodes[i]];
        char expr[1024];
        symc_status st = op_expr(c, g->nodes[i], expr, sizeof expr);
        if (st) return st;
        cg_kw_body(k, "        const %s v%u = %s;\n", cg_ctype(c->m->tensors[n->out[0]].dtype), n->out[0], expr);
    }
    return SYMC_OK;
}

/* Element `idx` (a flat index over out's shape) of the group: each leaf's
 * local through its broadcast offset, then the nodes. The root's value is
 * the local v<root output>. */
static symc_status group_element(cg_kw *k, const group *g, const ir_tensor *out, const char *idx) {
    const ir_tensor *lt[CG_KW_MAX_ARGS];
    for (uint32_t i = 0; i < g->n_leaves; i++) lt[i] = &k->c->m->tensors[g->leaves[i]];
    cg_kw_bcast_offsets(k, idx, out->dims, out->rank, g->n_leaves, lt, "o");
    for (uint32_t i = 0; i < g->n_leaves; i++) {
        char off[16];
        snprintf(off, sizeof off, "o%u", i);
        symc_dtype dt = lt[i]->dtype;
        char ld[96];
        cg_load(ld, sizeof ld, dt, cg_kw_in(k, g->leaves[i]), off);
        cg_kw_body(k, "        const %s v%u = %s;\n", cg_ctype(dt), g->leaves[i], ld);
    }
    return group_nodes(k, g);
}

/* tensor t holds one element (every dim the constant 1) */
static int is_scalar(cg_cuda *c, const ir_tensor *t) {
    for (int d = 0; d < t->rank; d++) {
        int64_t v;
        if (!sym_is_const(c->m->syms, t->dims[d], &v) || v != 1) return 0;
    }
    return 1;
}

/* tensor t is a vector along out's last axis: every other dim (right
 * aligned) the constant 1, the last dim out's, and `lanes` divides it */
static int is_row_vector(cg_cuda *c, const ir_tensor *t, const ir_tensor *out, int lanes) {
    if (t->rank < 1 || out->rank < 1 || t->rank > out->rank || t->dims[t->rank - 1] != out->dims[out->rank - 1] ||
        sym_prove_divisible(c->m->syms, out->dims[out->rank - 1], lanes) != SYM_TRUE)
        return 0;
    for (int d = 0; d < t->rank - 1; d++) {
        int64_t v;
        if (!sym_is_const(c->m->syms, t->dims[d], &v) || v != 1) return 0;
    }
    return 1;
}

/* The lanes of a 16-byte vector (0: none): 4 for an f32 output, 8 for an
 * f16/bf16 one, when every leaf has the output's dtype and shape, is a
 * scalar, or is a vector along the last axis (a bias, a per-feature scale),
 * and the lane count divides numel for every binding in range */
static int vectorizable(cg_cuda *c, const group *g, const ir_tensor *out, sym_expr numel) {
    int lanes = out->dtype == SYMC_F32 ? 4 : cg_is_half(out->dtype) ? 8 : 0;
    if (!lanes || sym_prove_divisible(c->m->syms, numel, lanes) != SYM_TRUE) return 0;
    for (uint32_t i = 0; i < g->n_leaves; i++) {
        const ir_tensor *t = &c->m->tensors[g->leaves[i]];
        if (is_scalar(c, t)) continue;
        if (t->dtype != out->dtype || (!ir_same_shape(t, out) && !is_row_vector(c, t, out, lanes))) return 0;
    }
    return lanes;
}

/* lane l of 16-byte vector q<t>: a float4 component, or half l of a uint4 */
static void lane_value(char *buf, size_t cap, symc_dtype dt, uint32_t t, int l) {
    static const char comp[4] = {'x', 'y', 'z', 'w'};
    if (dt == SYMC_F32) snprintf(buf, cap, "q%u.%c", t, comp[l]);
    else
        snprintf(buf, cap, "%s((unsigned short)(q%u.%c %s))", dt == SYMC_F16 ? "sc_h2f" : "sc_b2f", t, comp[l / 2],
                 l % 2 ? ">> 16" : "& 0xffffu");
}

/* 16-byte vectors a thread takes a round of the vector loop, all loaded before any is computed,
 * so a thread keeps that many loads in flight. Measured on an H200 (session 32, bench_models
 * --profile, BERT-base --fp16 at 32x512): the exact GELU 0.0745 -> 0.0700 ms a call (4 against
 * 1), BERT 0.3-0.8% faster, ConvNeXt-T the same. SYMC_EW_UNROLL=1 (or 2, 8) for comparison. */
static int ew_unroll(void) {
    const char *env = getenv("SYMC_EW_UNROLL");
    int u = env ? atoi(env) : 4;
    return u == 1 || u == 2 || u == 4 || u == 8 ? u : 4;
}

/* The vector loop over numel/lanes items (q): float4s for f32, uint4s of 8
 * halves for f16/bf16, ew_unroll() of them a thread a round (each leaf's
 * vectors loaded into rv_<leaf>[] first); then the scalar loop as the
 * fallback for pointers that are not 16-byte aligned. */
static symc_status vector_body(cg_kw *k, const group *g, uint32_t yt, sym_expr n4, int lanes) {
    cg_cuda *c = k->c;
    const char *V = lanes == 4 ? "float4" : "uint4";
    char names[CG_KW_MAX_ARGS + 1][24];
    int full[CG_KW_MAX_ARGS] = {0}; /* 0 scalar, 1 the output's shape, 2 a vector along the last axis */
    const ir_tensor *out = &c->m->tensors[yt];
    char row4[48] = "";
    for (uint32_t i = 0; i < g->n_leaves; i++) {
        const ir_tensor *t = &c->m->tensors[g->leaves[i]];
        full[i] = is_scalar(c, t) ? 0 : ir_same_shape(t, out) ? 1 : 2;
        snprintf(names[i], sizeof names[i], "%s", cg_kw_in(k, g->leaves[i]));
        if (full[i] == 2 && !row4[0])
            snprintf(row4, sizeof row4, "%s",
                     cg_kw_dim(k, sym_floordiv(c->m->syms, out->dims[out->rank - 1], sym_const(c->m->syms, lanes))));
    }
    snprintf(names[g->n_leaves], sizeof names[0], "%s", cg_kw_out(k, yt));
    cg_kw_body(k, "    const unsigned long long addr = (unsigned long long)%s", names[g->n_leaves]);
    for (uint32_t i = 0; i < g->n_leaves; i++)
        if (full[i]) cg_kw_body(k, " | (unsigned long long)%s", names[i]);
    cg_kw_body(k, ";\n    if ((addr & 15ull) == 0ull) {\n");
    const int U = ew_unroll();
    char n4c[64]; /* the item count's parameter name, kept past later cg_kw_dim calls */
    snprintf(n4c, sizeof n4c, "%s", cg_kw_dim(k, n4));
    if (U == 1) cg_kw_body(k, "    SC_LOOP(q, %s) {\n", n4c);
    else { /* round of a thread: items qb + u * blockDim.x, u < U; every load of the round first */
        cg_kw_body(k,
                   "    for (long long qb = (long long)blockIdx.x * blockDim.x * %d + threadIdx.x; qb < %s;\n"
                   "         qb += (long long)gridDim.x * blockDim.x * %d) {\n",
                   U, n4c, U);
        for (uint32_t i = 0; i < g->n_leaves; i++) {
            if (!full[i]) continue;
            cg_kw_body(k, "        %s rv_%u[%d];\n", V, i, U); /* leaf i (no tensor number: kernel_key) */
            cg_kw_body(k,
                       "#pragma unroll\n"
                       "        for (int u = 0; u < %d; u++) {\n"
                       "            const long long q = qb + u * (long long)blockDim.x;\n"
                       "            if (q < %s) rv_%u[u] = reinterpret_cast<const %s*>(%s)[q%s%s];\n"
                       "        }\n",
                       U, n4c, i, V, names[i], full[i] == 2 ? " % " : "", full[i] == 2 ? row4 : "");
        }
        cg_kw_body(k,
                   "#pragma unroll\n"
                   "    for (int u = 0; u < %d; u++) {\n"
                   "        const long long q = qb + u * (long long)blockDim.x;\n"
                   "        if (q >= %s) break;\n",
                   U, n4c);
    }
    for (uint32_t i = 0; i < g->n_leaves; i++) {
        if (full[i] && U > 1) {
            cg_kw_body(k, "        const %s q%u = rv_%u[u];\n", V, g->leaves[i], i);
        } else if (full[i] == 1) {
            cg_kw_body(k, "        const %s q%u = reinterpret_cast<const %s*>(%s)[q];\n", V, g->leaves[i], V, names[i]);
        } else if (full[i] == 2) {
            cg_kw_body(k, "        const %s q%u = reinterpret_cast<const %s*>(%s)[q %% %s];\n", V, g->leaves[i], V,
                       names[i], row4);
        } else {
            char ld[96];
            symc_dtype dt = c->m->tensors[g->leaves[i]].dtype;
            cg_load(ld, sizeof ld, dt, names[i], "0");
            cg_kw_body(k, "        const %s v%u = %s;\n", cg_ctype(dt), g->leaves[i], ld);
        }
    }
    cg_kw_body(k, "        %s y;\n", V);
    static const char comp[4] = {'x', 'y', 'z', 'w'};
    for (int l = 0; l < lanes; l++) {
        cg_kw_body(k, "        {\n");
        for (uint32_t i = 0; i < g->n_leaves; i++)
            if (full[i]) {
                char lv[96];
                lane_value(lv, sizeof lv, out->dtype, g->leaves[i], l);
                cg_kw_body(k, "        const float v%u = %s;\n", g->leaves[i], lv);
            }
        symc_status st = group_nodes(k, g);
        if (st) return st;
        if (lanes == 4) cg_kw_body(k, "        y.%c = v%u;\n        }\n", comp[l], yt);
        else { /* two halves a 32-bit component, the even lane in the low bits */ char sv[64], v[16];
            snprintf(v, sizeof v, "v%u", yt);
            cg_store(sv, sizeof sv, out->dtype, v);
            if (l % 2 == 0) cg_kw_body(k, "        y.%c = (unsigned)%s;\n        }\n", comp[l / 2], sv);
            else cg_kw_body(k, "        y.%c |= (unsigned)%s << 16;\n        }\n", comp[l / 2], sv);
        }
    }
    cg_kw_body(k, "        reinterpret_cast<%s*>(%s)[q] = y;\n    }\n%s    return;\n    }\n", V, names[g->n_leaves],
               U > 1 ? "    }\n" : "");
    return SYMC_OK;
}

symc_status cg_emit_elementwise(cg_cuda *c, uint32_t root) {
    group g;
    symc_status st = group_of(c, root, &g);
    if (st) return st;
    uint32_t yt = c->m->nodes[root].out[0];
    const ir_tensor *out = &c->m->tensors[yt];
    if ((st = cg_check_dtype(c, root, yt, 1))) return st;
    cg_kw k;
    cg_kw_begin(&k, c, g.nodes[0]);
    sym_expr numel = ir_tensor_numel(c->m, out), work = numel;
    int vec = vectorizable(c, &g, out, numel);
    if (vec) {
        work = sym_floordiv(c->m->syms, numel, sym_const(c->m->syms, vec));
        st = vector_body(&k, &g, yt, work, vec);
    }
    if (vec) /* numel is lanes * work: no parameter of its own */
        cg_kw_body(&k, "    SC_LOOP(i, %dLL * %s) {\n", vec, cg_kw_dim(&k, work));
    else cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    if (!st) st = group_element(&k, &g, out, "i");
    char v[16], sv[64];
    snprintf(v, sizeof v, "v%u", yt);
    cg_store(sv, sizeof sv, out->dtype, v);
    cg_kw_body(&k, "        %s[i] = %s;\n    }\n", cg_kw_out(&k, yt), sv);
    cg_str comment = {0};
    cg_str_appendf(&comment, "elementwise%s: ",
                   vec == 4       ? " (float4 when aligned)"
                       : vec == 8 ? " (8 halves a 16-byte load when aligned)"
                                  : "");
    cg_describe_nodes(c, g.nodes, g.n_nodes, &comment);
    if (!st) st = cg_kw_finish(&k, comment.p ? comment.p : "", work, vec ? 256 * (uint32_t)ew_unroll() : 256, 256);
    cg_str_free(&comment);
    cg_kw_free(&k);
    return st;
}

/* the inlined group whose root produces t, if any */
static uint32_t inlined_root(cg_cuda *c, uint32_t t) {
    uint32_t p = c->m->tensors[t].producer;
    return p != IR_NONE && cg_role(c, p) == IR_FUSE_INLINED ? p : IR_NONE;
}

symc_status cg_emit_group_value(cg_kw *k, uint32_t root, const char *idx, const char *name) {
    cg_cuda *c = k->c;
    uint32_t t = c->m->nodes[root].out[0];
    const ir_tensor *x = &c->m->tensors[t];
    group g;
    symc_status st = group_of(c, root, &g);
    if (!st) st = group_element(k, &g, x, idx);
    cg_kw_body(k, "            const %s %s = v%u;\n", cg_ctype(x->dtype), name, t);
    return st;
}

symc_status cg_emit_value(cg_kw *k, uint32_t t, const char *idx, const char *name) {
    cg_cuda *c = k->c;
    const ir_tensor *x = &c->m->tensors[t];
    uint32_t root = inlined_root(c, t);
    if (root != IR_NONE) return cg_emit_group_value(k, root, idx, name);
    char ld[96];
    cg_load(ld, sizeof ld, x->dtype, cg_kw_in(k, t), idx);
    cg_kw_body(k, "            const %s %s = %s;\n", cg_ctype(x->dtype), name, ld);
    return SYMC_OK;
}

void cg_describe_inlined(cg_cuda *c, uint32_t t, cg_str *out) {
    uint32_t root = inlined_root(c, t);
    if (root == IR_NONE) return;
    group g;
    memset(&g, 0, sizeof g);
    collect(c, root, &g);
    qsort(g.nodes, g.n_nodes, sizeof g.nodes[0], cmp_u32);
    cg_str_appendf(out, "; its input computed inline: ");
    cg_describe_nodes(c, g.nodes, g.n_nodes, out);
}

symc_status cg_emit_broadcast_copy(cg_cuda *c, uint32_t node, uint32_t src, uint32_t dst) {
    const ir_tensor *s = &c->m->tensors[src], *d = &c->m->tensors[dst];
    cg_kw k;
    cg_kw_begin(&k, c, node);
    sym_expr numel = ir_tensor_numel(c->m, d);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    cg_kw_bcast_offsets(&k, "i", d->dims, d->rank, 1, &s, "o");
    const char *sp = cg_kw_in(&k, src);
    cg_kw_body(&k, "        %s[i] = %s[o0];\n    }\n", cg_kw_out(&k, dst), sp);
    char comment[256];
    snprintf(comment, sizeof comment, "broadcast copy of '%s' to '%s' for node %s (%s)", s->name, d->name,
             c->m->nodes[node].name, ir_op_get(c->m->nodes[node].op)->name);
    symc_status st = cg_kw_finish(&k, comment, numel, 256, 256);
    cg_kw_free(&k);
    return st;
}

/* y = (x - mean[ch]) / sqrt(var[ch] + eps) * scale[ch] + bias[ch], ch = dim 1 */
symc_status cg_emit_batch_norm(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    symc_status st;
    for (uint32_t i = 0; i < 5; i++)
        if ((st = cg_check_dtype(c, node, n->in[i], 1))) return st;
    if (x->rank < 2 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' must be a float tensor of rank >= 2", x->name);
    const char *T = cg_ctype(x->dtype);
    char eps[96];
    cg_float_literal(eps, sizeof eps, cg_attr_float(n, "epsilon", 1e-5), x->dtype);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    sym_expr numel = ir_tensor_numel(c->m, x);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    cg_kw_body(&k, "        const long long ch = (i / %s) %% %s;\n", cg_kw_dim(&k, cg_prod(c, x->dims, 2, x->rank)),
               cg_kw_dim(&k, x->dims[1]));
    char v[5][160], sv[96];
    for (int i = 0; i < 5; i++) /* x at i, the channel parameters at ch (typed loads: half storage reads as fp32) */
        cg_load(v[i], sizeof v[i], c->m->tensors[n->in[i]].dtype, cg_kw_in(&k, n->in[i]), i ? "ch" : "i");
    cg_kw_body(&k, "        const %s inv = (%s)1 / sc_sqrt((%s)%s + %s);\n", T, T, T, v[4], eps);
    cg_kw_body(&k, "        const %s y = ((%s)%s - (%s)%s) * inv * (%s)%s + (%s)%s;\n", T, T, v[0], T, v[3], T, v[1], T,
               v[2]);
    cg_store(sv, sizeof sv, c->m->tensors[n->out[0]].dtype, "y");
    cg_kw_body(&k, "        %s[i] = %s;\n    }\n", cg_kw_out(&k, n->out[0]), sv);
    char comment[256];
    snprintf(comment, sizeof comment, "batch_norm (inference): %s", n->name);
    st = cg_kw_finish(&k, comment, numel, 256, 256);
    cg_kw_free(&k);
    return st;
}
