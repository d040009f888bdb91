/* Writing one CUDA kernel: parameters collected on use, broadcast indexing,
 * the shared prelude, and the small helpers every emitter needs.
 *
 * A kernel's sizes are symshape expressions. A constant one is printed as a
 * literal, so NVRTC folds it; any other becomes a program slot (cg_slot)
 * passed as a `long long` parameter named after the slot, so the same
 * expression used twice is one parameter and the runtime evaluates it once
 * per input shape. Nothing is specialized on a size that is not constant:
 * a dim that may be 1 while the output's is not gets its broadcast stride
 * chosen at run time ("dim == 1 ? 0 : stride"). Every kernel loops
 * grid-stride over its work items with int64 indices, so any grid the
 * runtime picks (it caps the block count) is correct. A kernel may
 * substitute a tensor's pointer by text of its own (cg_kw_subst): the row
 * kernels feed registers (float4 lanes, their own results) to the
 * elementwise code that reads "pointer[offset]". */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cuda_emit.h"

/* ---- text ------------------------------------------------------------------------ */
static void str_vappendf(cg_str *s, const char *fmt, va_list ap) {
    if (s->oom) return;
    for (;;) {
        va_list aq;
        va_copy(aq, ap);
        size_t room = s->cap - s->len;
        int n = vsnprintf(s->p ? s->p + s->len : NULL, s->p ? room : 0, fmt, aq);
        va_end(aq);
        if (n < 0) {
            s->oom = 1;
            return;
        }
        if (s->p && (size_t)n < room) {
            s->len += (size_t)n;
            return;
        }
        size_t cap = s->cap ? s->cap : 1024;
        while (cap < s->len + (size_t)n + 1) cap *= 2;
        char *p = realloc(s->p, cap);
        if (!p) {
            s->oom = 1;
            return;
        }
        if (!s->p) p[0] = '\0';
        s->p = p;
        s->cap = cap;
    }
}

void cg_str_appendf(cg_str *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    str_vappendf(s, fmt, ap);
    va_end(ap);
}

void cg_str_free(cg_str *s) {
    free(s->p);
    memset(s, 0, sizeof *s);
}

/* ---- small helpers ------------------------------------------------------------------ */
symc_status cg_fail(cg_cuda *c, uint32_t node, symc_status code, const char *fmt, ...) {
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const ir_node *n = &c->m->nodes[node];
    return symc_error_setf(c->b->err, code, "node '%s' (%s): %s", n->name, ir_op_get(n->op)->name, what);
}

ir_fuse_role cg_role(const cg_cuda *c, uint32_t node) { return (ir_fuse_role)c->m->fuse[node].role; }

sym_expr cg_prod(cg_cuda *c, const sym_expr *dims, int from, int to) {
    sym_expr p = sym_const(c->m->syms, 1);
    for (int d = from; d < to; d++) p = sym_mul(c->m->syms, p, dims[d]);
    return p;
}

const char *cg_ctype(symc_dtype dt) {
    switch (dt) {
    case SYMC_F32: return "float";
    case SYMC_F64: return "double";
    case SYMC_I64: return "long long";
    case SYMC_I32: return "int";
    case SYMC_BOOL: return "bool";
    case SYMC_I8: return "signed char";
    case SYMC_U8: return "unsigned char";
    case SYMC_I16: return "short";
    case SYMC_U16: return "unsigned short";
    case SYMC_U32: return "unsigned int";
    case SYMC_U64: return "unsigned long long";
    case SYMC_F16:
    case SYMC_BF16: return "float"; /* stored as 16 bits, computed in fp32 */
    default: return "void";
    }
}

const char *cg_stype(symc_dtype dt) {
    if (dt == SYMC_F16 || dt == SYMC_BF16) return "unsigned short";
    return dt == SYMC_BOOL ? "unsigned char" : cg_ctype(dt);
}

int cg_is_half(symc_dtype dt) { return dt == SYMC_F16 || dt == SYMC_BF16; }

int cg_is_small_int(symc_dtype dt) { return dt == SYMC_I8 || dt == SYMC_U8 || dt == SYMC_I16 || dt == SYMC_U16; }

void cg_load(char *buf, size_t cap, symc_dtype dt, const char *ptr, const char *off) {
    /* a value the kernel already holds (cg_kw_subst: sc_reg<T>{v}), in the compute type: no conversion */
    if (!strncmp(ptr, "sc_reg<", 7)) snprintf(buf, cap, "%s[%s]", ptr, off);
    else if (dt == SYMC_F16) snprintf(buf, cap, "sc_h2f(%s[%s])", ptr, off);
    else if (dt == SYMC_BF16) snprintf(buf, cap, "sc_b2f(%s[%s])", ptr, off);
    else if (dt == SYMC_BOOL) snprintf(buf, cap, "(%s[%s] != 0)", ptr, off);
    else snprintf(buf, cap, "%s[%s]", ptr, off);
}

void cg_store(char *buf, size_t cap, symc_dtype dt, const char *v) {
    if (dt == SYMC_F16) snprintf(buf, cap, "sc_f2h(%s)", v);
    else if (dt == SYMC_BF16) snprintf(buf, cap, "sc_f2b(%s)", v);
    else if (dt == SYMC_BOOL) snprintf(buf, cap, "(unsigned char)%s", v);
    else snprintf(buf, cap, "%s", v);
}

symc_status cg_check_dtype(cg_cuda *c, uint32_t node, uint32_t t, int half_ok) {
    symc_dtype dt = c->m->tensors[t].dtype;
    if (dt == SYMC_F32 || dt == SYMC_F64 || dt == SYMC_I64 || dt == SYMC_I32 || dt == SYMC_BOOL) return SYMC_OK;
    if (half_ok && cg_is_half(dt)) return SYMC_OK;
    /* the narrow and unsigned integers: elementwise ops (their C types,
     * wrapping like the reference) and data movement (copies) only */
    const ir_node *n = &c->m->nodes[node];
    if ((cg_is_small_int(dt) || dt == SYMC_U32 || dt == SYMC_U64) &&
        (ir_op_is_elementwise(n->op) || ir_op_get(n->op)->category == IR_CAT_MOVE))
        return SYMC_OK;
    return cg_fail(c, node, SYMC_ERR_UNSUPPORTED,
                   "tensor '%s' is %s: the CUDA target does not support %s tensors in this op yet (only elementwise "
                   "ops and data movement)",
                   c->m->tensors[t].name, symc_dtype_name(dt), symc_dtype_name(dt));
}

void cg_float_literal(char *buf, size_t cap, double v, symc_dtype dt) {
    const char *t = cg_ctype(dt);
    if (isnan(v)) snprintf(buf, cap, "((%s)__longlong_as_double(0x7ff8000000000000LL))", t);
    else if (isinf(v)) snprintf(buf, cap, "((%s)%s__longlong_as_double(0x7ff0000000000000LL))", t, v < 0 ? "-" : "");
    else snprintf(buf, cap, "((%s)%.17g)", t, v);
}

static const ir_attr *find_attr(const ir_node *n, const char *name) { return ir_node_attr(n, name); }

int64_t cg_attr_int(const ir_node *n, const char *name, int64_t dflt) {
    const ir_attr *a = find_attr(n, name);
    return a && (a->kind == IR_ATTR_INT || a->kind == IR_ATTR_DTYPE) ? a->i : dflt;
}

double cg_attr_float(const ir_node *n, const char *name, double dflt) {
    const ir_attr *a = find_attr(n, name);
    return a && a->kind == IR_ATTR_FLOAT ? a->f : dflt;
}

const char *cg_attr_str(const ir_node *n, const char *name, const char *dflt) {
    const ir_attr *a = find_attr(n, name);
    return a && a->kind == IR_ATTR_STR ? a->s : dflt;
}

int cg_norm_axis(int64_t axis, int rank) {
    /* the module's axes are non-negative (ir_check_axes in ir_verify): only the range is checked */
    return axis >= 0 && axis < rank ? (int)axis : -1;
}

void cg_describe_nodes(cg_cuda *c, const uint32_t *nodes, uint32_t n, cg_str *out) {
    for (uint32_t i = 0; i < n; i++) {
        const ir_node *nd = &c->m->nodes[nodes[i]];
        cg_str_appendf(out, "%s%s (%s)", i ? ", " : "", nd->name, ir_op_get(nd->op)->name);
    }
}

/* ---- one kernel --------------------------------------------------------------------- */
void cg_kw_begin(cg_kw *k, cg_cuda *c, uint32_t node) {
    memset(k, 0, sizeof *k);
    k->c = c;
    k->node = node;
}

void cg_kw_free(cg_kw *k) {
    cg_str_free(&k->params);
    cg_str_free(&k->body);
}

static int add_arg(cg_kw *k, uint8_t kind, uint32_t value) {
    for (uint32_t i = 0; i < k->n_args; i++)
        if (k->args[i].kind == kind && k->args[i].value == value) return 0;
    if (k->n_args == CG_KW_MAX_ARGS) {
        k->too_many = 1;
        return 0;
    }
    k->arg_out[k->n_args] = 0;
    k->args[k->n_args++] = (rt_arg){kind, value};
    return 1;
}

static char *ring_next(cg_kw *k) {
    char *s = k->ring[k->ring_at];
    k->ring_at = (k->ring_at + 1) % CG_KW_RING;
    return s;
}

static const char *tensor_param(cg_kw *k, uint32_t t, int out) {
    char *name = ring_next(k);
    snprintf(name, sizeof k->ring[0], "t%u", t);
    int added = add_arg(k, RT_ARG_TENSOR, t);
    for (uint32_t i = 0; out && i < k->n_args; i++)
        if (k->args[i].kind == RT_ARG_TENSOR && k->args[i].value == t) k->arg_out[i] = 1;
    if (added)
        cg_str_appendf(&k->params, "%s%s%s*%s %s", k->params.len ? ", " : "", out ? "" : "const ",
                       cg_stype(k->c->m->tensors[t].dtype), out ? "" : " __restrict__", name);
    return name;
}

const char *cg_kw_in(cg_kw *k, uint32_t t) {
    for (uint32_t i = 0; i < k->n_subst; i++)
        if (k->subst_t[i] == t) return k->subst[i];
    return tensor_param(k, t, 0);
}

void cg_kw_subst(cg_kw *k, uint32_t t, const char *text) {
    for (uint32_t i = 0; i < k->n_subst; i++)
        if (k->subst_t[i] == t) {
            if (text) snprintf(k->subst[i], sizeof k->subst[i], "%s", text);
            else {
                k->n_subst--;
                k->subst_t[i] = k->subst_t[k->n_subst];
                memcpy(k->subst[i], k->subst[k->n_subst], sizeof k->subst[i]);
            }
            return;
        }
    if (!text) return;
    if (k->n_subst == CG_KW_MAX_SUBST) {
        k->too_many = 1;
        return;
    }
    k->subst_t[k->n_subst] = t;
    snprintf(k->subst[k->n_subst++], sizeof k->subst[0], "%s", text);
}

void cg_kw_subst_clear(cg_kw *k) { k->n_subst = 0; }
const char *cg_kw_out(cg_kw *k, uint32_t t) { return tensor_param(k, t, 1); }

const char *cg_kw_tmap(cg_kw *k, uint32_t t, sym_expr offset, int rank, const sym_expr *dims, const sym_expr *strides,
                       const uint32_t *box, int swizzle) {
    char *name = ring_next(k);
    rt_tmap m;
    memset(&m, 0, sizeof m);
    m.tensor = t;
    m.rank = rank > 0 && rank <= (int)RT_TMAP_MAX_RANK ? (uint32_t)rank : 0;
    m.offset = cg_slot(k->c->b, offset);
    m.swizzle = (uint8_t)(swizzle & 3);
    m.strides[0] = RT_NONE;
    int ok = m.rank && m.offset != RT_NONE;
    for (uint32_t j = 0; ok && j < m.rank; j++) {
        m.dims[j] = cg_slot(k->c->b, dims[j]);
        m.strides[j] = j ? cg_slot(k->c->b, strides[j]) : RT_NONE;
        m.box[j] = box[j];
        ok = m.dims[j] != RT_NONE && (!j || m.strides[j] != RT_NONE) && box[j] >= 1 && box[j] <= 256;
    }
    uint32_t i = 0;
    while (i < k->n_tmaps && memcmp(&k->tmaps[i], &m, sizeof m)) i++;
    snprintf(name, sizeof k->ring[0], "tm%u", i);
    if (!ok || (i == k->n_tmaps && k->n_tmaps == RT_STEP_MAX_TMAPS)) {
        k->too_many = 1; /* reported by cg_kw_finish (a rank or box out of range is a bug of its caller) */
        return name;
    }
    (void)tensor_param(k, t, 0);
    if (i < k->n_tmaps) return name;
    k->tmaps[k->n_tmaps++] = m;
    if (add_arg(k, RT_ARG_TMAP, i))
        cg_str_appendf(&k->params, "%sconst __grid_constant__ sc_tmap %s", k->params.len ? ", " : "", name);
    return name;
}

const char *cg_kw_dim(cg_kw *k, sym_expr e) {
    char *s = ring_next(k);
    int64_t v;
    if (e == SYM_NONE) {
        snprintf(s, sizeof k->ring[0], "(-1LL)");
    } else if (sym_is_const(k->c->m->syms, e, &v)) {
        if (v < 0) snprintf(s, sizeof k->ring[0], "(%lldLL)", (long long)v);
        else snprintf(s, sizeof k->ring[0], "%lldLL", (long long)v);
    } else {
        uint32_t slot = cg_slot(k->c->b, e);
        snprintf(s, sizeof k->ring[0], "s%u", slot);
        if (slot != RT_NONE && add_arg(k, RT_ARG_SLOT, slot))
            cg_str_appendf(&k->params, "%slong long %s", k->params.len ? ", " : "", s);
    }
    return s;
}

void cg_kw_body(cg_kw *k, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    str_vappendf(&k->body, fmt, ap);
    va_end(ap);
}

void cg_kw_bcast_offsets(cg_kw *k, const char *idx, const sym_expr *odims, int orank, uint32_t n,
                         const ir_tensor *const *ts, const char *prefix) {
    sym_table *syms = k->c->m->syms;
    int need = 0;
    for (uint32_t j = 0; j < n; j++) {
        int same = ts[j]->rank == orank;
        for (int d = 0; same && d < orank; d++) same = ts[j]->dims[d] == odims[d];
        if (same) cg_kw_body(k, "        const long long %s%u = %s;\n", prefix, j, idx);
        else {
            cg_kw_body(k, "        long long %s%u = 0;\n", prefix, j);
            need = 1;
        }
    }
    if (!need) return;
    cg_kw_body(k, "        {\n            long long r = %s, c;\n", idx);
    for (int d = orank - 1; d >= 0; d--) {
        if (d > 0) {
            const char *od = cg_kw_dim(k, odims[d]);
            cg_kw_body(k, "            c = r %% %s; r /= %s;", od, od);
        } else {
            cg_kw_body(k, "            c = r;");
        }
        for (uint32_t j = 0; j < n; j++) {
            const ir_tensor *t = ts[j];
            int same = t->rank == orank;
            for (int e = 0; same && e < orank; e++) same = t->dims[e] == odims[e];
            int td = d - (orank - t->rank);
            if (same || td < 0) continue;
            int64_t v;
            int64_t ov;
            sym_expr tdim = t->dims[td];
            if (sym_is_const(syms, tdim, &v) && v == 1 && !(sym_is_const(syms, odims[d], &ov) && ov == 1)) continue;
            sym_expr stride = cg_prod(k->c, t->dims, td + 1, t->rank);
            const char *st = cg_kw_dim(k, stride);
            if (tdim == odims[d] || sym_is_const(syms, tdim, &v)) cg_kw_body(k, " %s%u += c * %s;", prefix, j, st);
            else /* may be 1 while the output's dim is not: broadcast decided at run time */
                cg_kw_body(k, " %s%u += c * (%s == 1LL ? 0LL : %s);", prefix, j, cg_kw_dim(k, tdim), st);
        }
        cg_kw_body(k, "\n");
    }
    cg_kw_body(k, "        }\n");
}

/* A C identifier from the IR node name, made unique by the kernel index. */
static void kernel_name(cg_kw *k, char *buf, size_t cap) {
    const char *src = k->c->m->nodes[k->node].name;
    size_t j = 0;
    if (!isalpha((unsigned char)src[0]) && src[0] != '_') buf[j++] = 'k', buf[j++] = '_';
    for (size_t i = 0; src[i] && j < 48 && j + 1 < cap; i++) buf[j++] = isalnum((unsigned char)src[i]) ? src[i] : '_';
    buf[j] = '\0';
    snprintf(buf + j, cap - j, "_%u", k->c->b->n_kernels);
}

/* The kernel's key for cg_find_kernel: its launch bound, parameters and
 * body with the names it takes from tensor and slot numbers renumbered in
 * order of first use. Those names are t<n> (a tensor's pointer), v<n> and
 * q<n> (its values), s<n> (a slot): one letter and digits, never the name of
 * anything in the prelude or of CUDA's (a test checks the prelude). Tensor
 * numbers (t, v, q) and slot numbers (s) each have their map from number to
 * ordinal, and the letter stays, so the renaming is one to one and two
 * kernels with one key differ only in the names of their own parameters and
 * locals: the same code, each step passing its own arguments. Numbers elsewhere (literals, a node index given to sc_report,
 * other names) stay as they are and must match exactly. */
static int key_letter(char c) { return c == 't' || c == 'v' || c == 'q' || c == 's'; }

static void kernel_key(const char *const *parts, int n_parts, uint32_t block, cg_str *out) {
    unsigned long long seen[2][256]; /* tensor numbers, slot numbers */
    unsigned n_seen[2] = {0, 0};
    cg_str_appendf(out, "%u", block);
    for (int p = 0; p < n_parts; p++) {
        cg_str_appendf(out, "|");
        for (const char *c = parts[p] ? parts[p] : ""; *c && !out->oom;) {
            const char *start = c;
            if (isdigit((unsigned char)*c)) { /* a literal, 0x1fu and 1.5e-3f included */
                while (isalnum((unsigned char)*c) || *c == '_' || *c == '.') c++;
            } else if (isalpha((unsigned char)*c) || *c == '_') {
                while (isalnum((unsigned char)*c) || *c == '_') c++;
                size_t len = (size_t)(c - start);
                int numbered = len >= 2 && len <= 10 && key_letter(start[0]);
                for (size_t i = 1; numbered && i < len; i++) numbered = isdigit((unsigned char)start[i]) != 0;
                if (numbered) {
                    unsigned long long v = strtoull(start + 1, NULL, 10);
                    int space = start[0] == 's';
                    unsigned ord = 0, *n = &n_seen[space];
                    while (ord < *n && seen[space][ord] != v) ord++;
                    if (ord == *n && *n < sizeof seen[0] / sizeof seen[0][0]) seen[space][(*n)++] = v;
                    if (ord < *n) {
                        cg_str_appendf(out, "%c%u", start[0], ord);
                        continue;
                    }
                    out->oom = 1; /* too many names to renumber: no key */
                    return;
                }
            } else {
                c++;
            }
            cg_str_appendf(out, "%.*s", (int)(c - start), start);
        }
    }
}

symc_status cg_kw_finish(cg_kw *k, const char *comment, sym_expr work, uint32_t per_block, uint32_t block) {
    cg_builder *b = k->c->b;
    if (k->too_many)
        return cg_fail(k->c, k->node, SYMC_ERR_UNSUPPORTED, "the kernel needs more than %d parameters", CG_KW_MAX_ARGS);
    if (k->params.oom || k->body.oom)
        return symc_error_setf(b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA source");
    char name[80];
    kernel_name(k, name, sizeof name);
    uint32_t work_slot = cg_slot(b, work);
    if (b->failed || work_slot == RT_NONE)
        return b->failed ? SYMC_ERR_NOMEM
                         : cg_fail(k->c, k->node, SYMC_ERR_INTERNAL, "kernel work size is not an expression");
    /* a kernel that is an earlier one's code, but for its names, is that kernel */
    const char *parts[2] = {k->params.p, k->body.p};
    cg_str key = {0};
    kernel_key(parts, 2, block | k->min_blocks << 16, &key);
    uint32_t index = key.oom ? RT_NONE : cg_find_kernel(b, key.p);
    symc_status st = SYMC_OK;
    if (index == RT_NONE) {
        char bounds[32];
        if (k->min_blocks) snprintf(bounds, sizeof bounds, "%u, %u", block, k->min_blocks);
        else snprintf(bounds, sizeof bounds, "%u", block);
        st = cg_source_appendf(b, "\n/* %s */\nextern \"C\" __global__ void __launch_bounds__(%s) %s(%s) {\n%s}\n",
                               comment, bounds, name, k->params.p ? k->params.p : "", k->body.p ? k->body.p : "");
        if (!st) st = cg_add_kernel(b, name, key.oom ? NULL : key.p, &index);
    }
    cg_str_free(&key);
    if (st) return st;
    rt_step s;
    memset(&s, 0, sizeof s);
    s.kind = RT_STEP_KERNEL;
    s.node = k->node;
    s.kernel = index;
    s.work = work_slot;
    s.per_block = per_block;
    s.block = block;
    s.shared = k->shared;
    s.resident = k->resident;
    s.n_args = k->n_args;
    s.args = k->args;
    s.n_tmaps = k->n_tmaps;
    s.tmaps = k->n_tmaps ? k->tmaps : NULL;
    for (uint32_t i = 0; i < RT_STEP_MAX_TENSORS; i++) s.tensors[i] = RT_NONE;
    return cg_add_kernel_step(b, &s, k->arg_out);
}

/* ---- prelude ------------------------------------------------------------------------------ */
/* Device helpers the kernels share: float/double overloads of the math the
 * ops need (true fp32 functions for float: expf, not exp), NumPy-style
 * integer division and remainder that never trap, NaN-propagating min/max,
 * warp reductions for the one-warp-per-row kernels, block reductions for
 * the one-block-per-row kernels (warp shuffles, then one partial per warp
 * in shared memory; every thread gets the total), and sc_reg, a register
 * value read through an index (row kernels hand float4 lanes and their own
 * results to inlined elementwise code with it, see cg_kw_subst). */
static const char prelude[] =
    "/* generated by symc: CUDA target */\n"
    "/* a TMA tensor map taken by value (const __grid_constant__; the runtime encodes it: rt_tmap) */\n"
    "struct __align__(64) sc_tmap { unsigned long long x[16]; };\n"
    "#define SC_LOOP(i, n) for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); \\\n"
    "                          i += (long long)blockDim.x * gridDim.x)\n"
    "#define SC_ROWS(r, n) for (long long r = blockIdx.x; r < (n); r += gridDim.x)\n"
    "#define SC_F1(name, f32, f64) \\\n"
    "    __device__ __forceinline__ float name(float x) { return f32(x); } \\\n"
    "    __device__ __forceinline__ double name(double x) { return f64(x); }\n"
    "SC_F1(sc_exp, expf, exp)\nSC_F1(sc_log, logf, log)\nSC_F1(sc_sqrt, sqrtf, sqrt)\n"
    "SC_F1(sc_floor, floorf, floor)\nSC_F1(sc_ceil, ceilf, ceil)\nSC_F1(sc_erf, erff, erf)\n"
    "SC_F1(sc_tanh, tanhf, tanh)\nSC_F1(sc_fabs, fabsf, fabs)\n"
    "SC_F1(sc_sin, sinf, sin)\nSC_F1(sc_cos, cosf, cos)\nSC_F1(sc_tan, tanf, tan)\n"
    "SC_F1(sc_rint, rintf, rint)\nSC_F1(sc_asin, asinf, asin)\nSC_F1(sc_acos, acosf, acos)\n"
    "SC_F1(sc_atan, atanf, atan)\nSC_F1(sc_sinh, sinhf, sinh)\nSC_F1(sc_cosh, coshf, cosh)\n"
    "SC_F1(sc_asinh, asinhf, asinh)\nSC_F1(sc_acosh, acoshf, acosh)\nSC_F1(sc_atanh, atanhf, atanh)\n"
    "SC_F1(sc_expm1, expm1f, expm1)\nSC_F1(sc_log1p, log1pf, log1p)\n"
    "/* log(1 + e^x) without overflow, as the reference */\n"
    "template <typename T> __device__ __forceinline__ T sc_softplus(T x) {\n"
    "    return x > (T)0 ? x + sc_log1p(sc_exp(-x)) : sc_log1p(sc_exp(x));\n"
    "}\n"
    "#define SC_F2(name, f32, f64) \\\n"
    "    __device__ __forceinline__ float name(float a, float b) { return f32(a, b); } \\\n"
    "    __device__ __forceinline__ double name(double a, double b) { return f64(a, b); }\n"
    "SC_F2(sc_pow, powf, pow)\nSC_F2(sc_fmod, fmodf, fmod)\nSC_F2(sc_fmin, fminf, fmin)\nSC_F2(sc_fmax, fmaxf, fmax)\n"
    "template <typename T> __device__ __forceinline__ T sc_min(T a, T b) { return (a != a || b != b) ? a + b : (b < a ? b : a); }\n"
    "template <typename T> __device__ __forceinline__ T sc_max(T a, T b) { return (a != a || b != b) ? a + b : (b > a ? b : a); }\n"
    "/* Python remainder: the result takes the divisor's sign */\n"
    "template <typename T> __device__ __forceinline__ T sc_fmod_py(T a, T b) {\n"
    "    T r = sc_fmod(a, b);\n"
    "    if (r != 0 && ((r < 0) != (b < 0))) r += b;\n"
    "    return r;\n"
    "}\n"
    "/* Bad data a kernel cannot stop on (the reference backend refuses it): the\n"
    " * first {code, node} is kept in sc_error and reported by the runtime after\n"
    " * the run (symrt_context_check). 1: index out of range, 2: integer / 0.\n"
    " * The kernels may be in several modules, each with its own sc_error: the\n"
    " * runtime points every module's sc_error_at at one of them. */\n"
    "__device__ unsigned int sc_error[2];\n"
    "__device__ unsigned int *sc_error_at;\n"
    "__device__ __noinline__ void sc_report(unsigned int code, unsigned int node) {\n"
    "    unsigned int *e = sc_error_at ? sc_error_at : sc_error;\n"
    "    if (atomicCAS(&e[0], 0u, code) == 0u) e[1] = node;\n"
    "}\n"
    "/* integer division truncates; by zero gives 0 and is reported */\n"
    "template <typename T> __device__ __forceinline__ T sc_idiv(T a, T b, unsigned int node) {\n"
    "    if (b == 0) { sc_report(2u, node); return 0; }\n"
    "    if ((T)-1 < (T)0 && b == (T)-1) return (T)(0ULL - (unsigned long long)a);\n"
    "    return a / b;\n"
    "}\n"
    "template <typename T> __device__ __forceinline__ T sc_imod(T a, T b, bool py, unsigned int node) {\n"
    "    if (b == 0) { sc_report(2u, node); return 0; }\n"
    "    if ((T)-1 < (T)0 && b == (T)-1) return 0;\n"
    "    T r = a % b;\n"
    "    if (py && r != 0 && ((r < 0) != (b < 0))) r += b;\n"
    "    return r;\n"
    "}\n"
    "__device__ __forceinline__ long long sc_ipow(long long base, long long e) {\n"
    "    unsigned long long r = 1, b = (unsigned long long)base;\n"
    "    while (e > 0) { if (e & 1) r *= b; b *= b; e >>= 1; }\n"
    "    return (long long)r;\n"
    "}\n"
    "/* max where NaN wins, as the reference */\n"
    "template <typename T> __device__ __forceinline__ T sc_nanmax(T acc, T v) { return (acc != acc) ? acc : ((v != v || v > acc) ? v : acc); }\n"
    "template <typename T> __device__ __forceinline__ T sc_nanmin(T acc, T v) { return (acc != acc) ? acc : ((v != v || v < acc) ? v : acc); }\n"
    "/* f16 / bf16 storage (16 bits) to and from fp32, rounding to nearest even */\n"
    "__device__ __forceinline__ float sc_h2f(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }\n"
    "__device__ __forceinline__ unsigned short sc_f2h(float f) { unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }\n"
    "__device__ __forceinline__ float sc_b2f(unsigned short b) { return __uint_as_float((unsigned)b << 16); }\n"
    "__device__ __forceinline__ unsigned short sc_f2b(float f) {\n"
    "    unsigned u = __float_as_uint(f);\n"
    "    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u); /* quiet NaN */\n"
    "    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n"
    "}\n"
    "struct sc_add_op { template <typename T> __device__ T operator()(T a, T b) const { return a + b; } };\n"
    "struct sc_max_op { template <typename T> __device__ T operator()(T a, T b) const { return sc_nanmax(a, b); } };\n"
    "struct sc_min_op { template <typename T> __device__ T operator()(T a, T b) const { return sc_nanmin(a, b); } };\n"
    "/* topk's order: element (va, ia) before (vb, ib): the larger (largest) or smaller value, NaN beyond\n"
    " * every number, equal values by the lower index */\n"
    "template <typename T> __device__ __forceinline__ bool sc_topk_before(T va, long long ia, T vb, long long ib, bool largest) {\n"
    "    const bool na = va != va, nb = vb != vb;\n"
    "    if (na || nb) return na && nb ? ia < ib : (largest ? na : nb);\n"
    "    if (va != vb) return largest ? va > vb : va < vb;\n"
    "    return ia < ib;\n"
    "}\n"
    "struct sc_mul_op { template <typename T> __device__ T operator()(T a, T b) const { return a * b; } };\n"
    "/* every lane of the warp gets the reduction of the warp's v */\n"
    "template <typename T, typename Op> __device__ __forceinline__ T sc_warp_reduce(T v, Op op) {\n"
    "    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
    "    return v;\n"
    "}\n"
    "/* every lane of a team of W lanes (W = 8, 16 or 32, aligned within the warp) gets the\n"
    " * reduction of the team's v; only the team's lanes take part, so teams of one warp may\n"
    " * leave a loop apart */\n"
    "template <int W, typename T, typename Op> __device__ __forceinline__ T sc_team_reduce(T v, Op op) {\n"
    "    const unsigned m = W == 32 ? 0xffffffffu : ((1u << W) - 1u) << ((threadIdx.x & 31) & ~(W - 1));\n"
    "    for (int o = W / 2; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(m, v, o));\n"
    "    return v;\n"
    "}\n"
    "/* a value a row kernel holds in a register, read where generated code\n"
    " * expects an array (p[i]): the index is ignored */\n"
    "template <typename T> struct sc_reg {\n"
    "    T v;\n"
    "    __device__ __forceinline__ T operator[](long long) const { return v; }\n"
    "};\n"
    "/* every thread of the block gets the reduction of all threads' v;\n"
    " * blockDim.x is a multiple of 32 */\n"
    "template <typename T, typename Op> __device__ T sc_block_reduce(T v, Op op) {\n"
    "    __shared__ T part[32];\n"
    "    for (int o = 16; o > 0; o >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
    "    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;\n"
    "    __syncthreads(); /* part may still be read by a previous call */\n"
    "    if (lane == 0) part[warp] = v;\n"
    "    __syncthreads();\n"
    "    v = part[0];\n"
    "    for (int w = 1; w < nw; w++) v = op(v, part[w]);\n"
    "    return v;\n"
    "}\n"
    "/* 4 halves (8 bytes; element 4i..4i+3 of p) widened to a float4, and a float4 rounded to 4\n"
    " * halves stored as 8 bytes: the row kernels' vector path on f16/bf16 tensors */\n"
    "__device__ __forceinline__ float4 sc_ld4h(const unsigned short *p, long long i) {\n"
    "    const uint2 u = reinterpret_cast<const uint2 *>(p)[i];\n"
    "    return make_float4(sc_h2f((unsigned short)(u.x & 0xffffu)), sc_h2f((unsigned short)(u.x >> 16)),\n"
    "                       sc_h2f((unsigned short)(u.y & 0xffffu)), sc_h2f((unsigned short)(u.y >> 16)));\n"
    "}\n"
    "__device__ __forceinline__ float4 sc_ld4b(const unsigned short *p, long long i) {\n"
    "    const uint2 u = reinterpret_cast<const uint2 *>(p)[i];\n"
    "    return make_float4(sc_b2f((unsigned short)(u.x & 0xffffu)), sc_b2f((unsigned short)(u.x >> 16)),\n"
    "                       sc_b2f((unsigned short)(u.y & 0xffffu)), sc_b2f((unsigned short)(u.y >> 16)));\n"
    "}\n"
    "__device__ __forceinline__ void sc_st4h(unsigned short *p, long long i, float4 v) {\n"
    "    reinterpret_cast<uint2 *>(p)[i] = make_uint2((unsigned)sc_f2h(v.x) | ((unsigned)sc_f2h(v.y) << 16),\n"
    "                                                 (unsigned)sc_f2h(v.z) | ((unsigned)sc_f2h(v.w) << 16));\n"
    "}\n"
    "__device__ __forceinline__ void sc_st4b(unsigned short *p, long long i, float4 v) {\n"
    "    reinterpret_cast<uint2 *>(p)[i] = make_uint2((unsigned)sc_f2b(v.x) | ((unsigned)sc_f2b(v.y) << 16),\n"
    "                                                 (unsigned)sc_f2b(v.z) | ((unsigned)sc_f2b(v.w) << 16));\n"
    "}\n"
    "/* TF32 tensor-core helpers (sm_80+, for the attention kernel): round to TF32, split\n"
    " * x = hi + lo for 3xTF32 products, D += A(16x8, row) * B(8x8, col) */\n"
    "#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800\n"
    "__device__ __forceinline__ unsigned sc_tf32(float x) {\n"
    "    unsigned r;\n"
    "    asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));\n"
    "    return r;\n"
    "}\n"
    "__device__ __forceinline__ void sc_split(float x, unsigned &hi, unsigned &lo) {\n"
    "    hi = sc_tf32(x);\n"
    "    lo = sc_tf32(x - __uint_as_float(hi));\n"
    "}\n"
    "__device__ __forceinline__ void sc_mma_tf32(float *d, const unsigned *a, const unsigned *b) {\n"
    "    asm volatile(\"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, \"\n"
    "                 \"{%0,%1,%2,%3};\"\n"
    "                 : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
    "                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n"
    "/* half tensor-core helpers (sm_80+, the half attention kernel): D += A(16x16, row) * B(16x8,\n"
    " * col) in f16 or bf16 with f32 accumulation; two floats packed as a half2 (lo in bits 0-15);\n"
    " * ldmatrix of four 8x8 b16 matrices (plain or transposed); 16-byte cp.async (zero-filled\n"
    " * when !valid) */\n"
    "__device__ __forceinline__ void sc_mma_f16(float *d, const unsigned *a, const unsigned *b) {\n"
    "    asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, \"\n"
    "                 \"{%0,%1,%2,%3};\"\n"
    "                 : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
    "                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n"
    "__device__ __forceinline__ void sc_mma_bf16(float *d, const unsigned *a, const unsigned *b) {\n"
    "    asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, \"\n"
    "                 \"{%0,%1,%2,%3};\"\n"
    "                 : \"+f\"(d[0]), \"+f\"(d[1]), \"+f\"(d[2]), \"+f\"(d[3])\n"
    "                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n"
    "}\n"
    "__device__ __forceinline__ float sc_ex2(float x) {\n"
    "    float r;\n"
    "    asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(r) : \"f\"(x));\n"
    "    return r;\n"
    "}\n"
    "/* the half attention's exponent offset for a row max m (h16_softmax): m * A + B for B = -m * A rounded,\n"
    " * exact by fmaf; 0 where the row takes its probabilities by a subtraction (|m * A| >= 2^22, -inf) */\n"
    "__device__ __forceinline__ float sc_att_e(float m, float A) {\n"
    "    const float b = __fmul_rn(-m, A);\n"
    "    return fabsf(b) < 4194304.f ? fmaf(m, A, b) : 0.f;\n"
    "}\n"
    "__device__ __forceinline__ unsigned sc_pack_f16(float lo, float hi) {\n"
    "    unsigned r;\n"
    "    asm(\"cvt.rn.f16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
    "    return r;\n"
    "}\n"
    "__device__ __forceinline__ unsigned sc_pack_bf16(float lo, float hi) {\n"
    "    unsigned r;\n"
    "    asm(\"cvt.rn.bf16x2.f32 %0, %1, %2;\" : \"=r\"(r) : \"f\"(hi), \"f\"(lo));\n"
    "    return r;\n"
    "}\n"
    "__device__ __forceinline__ unsigned sc_smem_addr(const void *p) {\n"
    "    unsigned r;\n"
    "    asm(\"{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }\" : \"=r\"(r) : \"l\"(p));\n"
    "    return r;\n"
    "}\n"
    "__device__ __forceinline__ void sc_ldsm4(unsigned *r, const void *p) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\"\n"
    "                 : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(sc_smem_addr(p)));\n"
    "}\n"
    "__device__ __forceinline__ void sc_ldsm4_t(unsigned *r, const void *p) {\n"
    "    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\"\n"
    "                 : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(sc_smem_addr(p)));\n"
    "}\n"
    "__device__ __forceinline__ void sc_cp16(void *dst, const void *src, bool valid) {\n"
    "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\" ::\"r\"(sc_smem_addr(dst)), \"l\"(src),\n"
    "                 \"r\"(valid ? 16 : 0) : \"memory\");\n"
    "}\n"
    "__device__ __forceinline__ void sc_cp_commit() { asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); }\n"
    "template <int N> __device__ __forceinline__ void sc_cp_wait() {\n"
    "    asm volatile(\"cp.async.wait_group %0;\" ::\"n\"(N) : \"memory\");\n"
    "}\n"
    "#endif\n";

symc_status cg_emit_prelude(cg_cuda *c) {
    symc_status st = cg_source_appendf(c->b, "%s", prelude);
    if (!st) st = cg_att_wg_prelude(c->b);
    c->b->prelude_len = c->b->source_len;
    return st;
}
