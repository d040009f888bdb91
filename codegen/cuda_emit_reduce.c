/* Reductions and normalizations: reduce_sum/mean/max/min/prod, softmax/log_softmax,
 * layer_norm, rms_norm, global_avg_pool.
 *
 * Row kernels. When the reduced elements of each output are contiguous (the
 * reduced axes are the innermost ones; a norm's axes always are; softmax
 * over the last axis), a team of threads handles one row at a time,
 * grid-stride over rows: its threads stride over the row, then a team
 * reduction gives every thread the total. The row length is often a
 * run-time value, so the kernel branches on it (uniform over the grid):
 * rows of up to RK_SHORT (1024) elements take one warp per row (shuffle
 * reductions, sc_warp_reduce), longer rows one block per row (sc_block_reduce).
 * When no row can be longer than 128 (256), a team of 8 (16) lanes takes a row
 * (sc_team_reduce shuffles within the team): about 12 elements a lane, where a
 * warp would spend its lanes on 3 or 4 each (Swin's and ConvNeXt's first
 * stages normalize rows of 96).
 * The launch is fixed at compile time from the row length's range and opt:
 * opt <= 1024 (or max <= 1024) launches 8 warps = 8 rows per 256-thread
 * block; otherwise one row per block of 256..1024 threads (about 16
 * elements a thread at opt). The regime the range rules out is not emitted;
 * the other one stays as the run-time fallback, correct under either launch
 * (warps index rows by global warp number, blocks by block number).
 *
 * Inside a team, for f32: when the row length is a multiple of 4 and every
 * pointer the float4 loads touch is 16-byte aligned (tested once, a uniform
 * branch), the row moves as float4s; softmax and the norms then keep the row
 * in registers (RK_CACHE = 8 float4s a thread: 1024 elements for a warp,
 * 32 * blockDim for a block), so the input, with any inlined producer, is
 * read and computed once and the statistics are taken over registers (still
 * two-pass mean/variance, max-shifted softmax). Longer rows stream float4
 * passes; anything else takes the scalar loop (a pass per statistic).
 * Accumulation is in the dtype's own type (fp32 for f32, int64 for
 * integers); per-thread partial sums then a shuffle/shared-memory tree, which
 * matches the reference's f64 sums well within 1e-4. NaN wins a max.
 *
 * Row kernels read their input through cg_emit_value at the flat index
 * row * cols + j: when the input is produced by an elementwise group the
 * plan inlined (softmax(x * s + mask), layer_norm(x + residual)), the
 * group is computed right there and never stored; on the float4 paths each
 * leaf of the row's own shape is loaded as a float4 and handed to the
 * group's code lane by lane (cg_kw_subst with sc_reg), other leaves are read
 * scalar through their broadcast offsets. A softmax or norm with an
 * epilogue in the fusion plan (an elementwise group of its own shape that
 * alone reads its result, e.g. gelu(softmax(x))) computes that group on
 * each output value before the store, writing the group's result instead.
 *
 * Otherwise (reduced axes not innermost, softmax over an inner axis) a
 * thread computes one output looping over the reduced elements, which keeps
 * neighbouring threads on neighbouring addresses. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cuda_emit.h"

/* accumulator type: fp32 for f32 and for half storage, f64, int64 for integers */
static const char *acc_type(symc_dtype dt) {
    return dt == SYMC_F32 || cg_is_half(dt) ? "float" : dt == SYMC_F64 ? "double" : "long long";
}

typedef enum { RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_PROD } red_kind;

/* the identity, which an empty reduction gives (as the reference): -inf/+inf
 * or the dtype's lowest/highest integer for max/min, 1 for a product */
static const char *red_init(red_kind r, symc_dtype dt) {
    if (r == RED_PROD) return "1";
    if (r != RED_MAX && r != RED_MIN) return "0";
    int mx = r == RED_MAX;
    if (dt == SYMC_F32 || cg_is_half(dt)) return mx ? "-__int_as_float(0x7f800000)" : "__int_as_float(0x7f800000)";
    if (dt == SYMC_F64)
        return mx ? "-__longlong_as_double(0x7ff0000000000000LL)" : "__longlong_as_double(0x7ff0000000000000LL)";
    if (dt == SYMC_I32) return mx ? "(-2147483647LL - 1LL)" : "2147483647LL";
    return mx ? "(-9223372036854775807LL - 1LL)" : "9223372036854775807LL";
}

/* the team reduction's combining functor */
static const char *red_op(red_kind r) {
    return r == RED_MAX ? "sc_max_op" : r == RED_MIN ? "sc_min_op" : r == RED_PROD ? "sc_mul_op" : "sc_add_op";
}

/* "acc = ..." combining acc with value v */
static void red_step(cg_kw *k, red_kind r, const char *v) {
    if (r == RED_MAX) cg_kw_body(k, "acc = sc_nanmax(acc, %s);", v);
    else if (r == RED_MIN) cg_kw_body(k, "acc = sc_nanmin(acc, %s);", v);
    else if (r == RED_PROD) cg_kw_body(k, "acc *= %s;", v);
    else cg_kw_body(k, "acc += %s;", v);
}

/* the stored result: mean divides (integers truncate; an empty integer mean is 0) */
static void red_store(cg_kw *k, red_kind r, symc_dtype dt, const char *dst, const char *count) {
    const char *T = cg_ctype(dt), *A = acc_type(dt);
    char v[160], sv[200];
    if (r != RED_MEAN) snprintf(v, sizeof v, "(%s)acc", T);
    else if (ir_dtype_is_float(dt)) snprintf(v, sizeof v, "(%s)(acc / (%s)%s)", T, A, count);
    else snprintf(v, sizeof v, "(%s)(%s == 0 ? 0 : acc / %s)", T, count, count);
    cg_store(sv, sizeof sv, dt, v);
    cg_kw_body(k, "%s = %s;\n", dst, sv);
}

/* `(T)<element off of tensor t>` through the typed load (half storage reads as fp32) */
static void load_as(cg_kw *k, char *buf, size_t cap, uint32_t t, const char *off, const char *as) {
    char ld[160];
    cg_load(ld, sizeof ld, k->c->m->tensors[t].dtype, cg_kw_in(k, t), off);
    snprintf(buf, cap, "(%s)%s", as, ld);
}

/* ---- row kernels ------------------------------------------------------------------ */
#define RK_SHORT 1024 /* rows up to this many elements: one warp per row */
#define RK_CACHE 8    /* float4s per thread a row is kept in (registers) */
#define RK_WARPS 8    /* warps (rows) per block in the one-warp-per-row launch */

typedef enum { RK_REDUCE, RK_SOFTMAX, RK_LOG_SOFTMAX, RK_LAYER_NORM, RK_RMS_NORM } rk_kind;

typedef struct row_spec {
    rk_kind kind;
    red_kind red;          /* RK_REDUCE */
    uint32_t node, xt, yt; /* data input, the node's output */
    uint32_t epi, zt;      /* epilogue root node (IR_NONE: none) and the tensor stored (yt without one) */
    sym_expr rows, cols;
    symc_dtype dt;
    uint32_t aff[2], n_aff; /* norms: scale, bias over aff_dims */
    const sym_expr *aff_dims;
    int aff_rank;
    char eps[96];
    int vec;         /* the float4 paths are emitted */
    int zero_masked; /* softmax: a row of -inf gives zeros (attribute zero_masked_rows) */
    /* float4 operands: leaves of the input's group of x's shape (x itself
     * when not inlined), of the epilogue's group of z's shape (not yt), the
     * affine tensors of exactly the normalized shape */
    uint32_t vin[CG_KW_MAX_ARGS], n_vin, vepi[CG_KW_MAX_ARGS], n_vepi, vaff[2], n_vaff;
    /* a chained row op computed first in the same kernel (the plan's row first:
     * its result is this op's input and is never stored); NULL: none */
    const struct row_spec *first;
} row_spec;

/* the leaves of the elementwise code computing t (t itself when its
 * producer is not inlined), added to ts without duplicates */
static void add_unique(uint32_t *ts, uint32_t *n, uint32_t t) {
    for (uint32_t i = 0; i < *n; i++)
        if (ts[i] == t) return;
    if (*n < CG_KW_MAX_ARGS) ts[(*n)++] = t;
}

static void leaves_of(cg_cuda *c, uint32_t t, uint32_t *ts, uint32_t *n, int depth) {
    uint32_t p = c->m->tensors[t].producer;
    if (p == IR_NONE || cg_role(c, p) != IR_FUSE_INLINED || depth > 256) {
        add_unique(ts, n, t);
        return;
    }
    const ir_node *nd = &c->m->nodes[p];
    for (uint32_t k = 0; k < nd->n_in; k++) leaves_of(c, nd->in[k], ts, n, depth + 1);
}

/* node and the inlined nodes its group computes */
static void group_nodes_of(cg_cuda *c, uint32_t node, uint32_t *nodes, uint32_t *n, int depth) {
    add_unique(nodes, n, node);
    const ir_node *nd = &c->m->nodes[node];
    for (uint32_t k = 0; k < nd->n_in && depth < 256; k++) {
        uint32_t p = c->m->tensors[nd->in[k]].producer;
        if (p != IR_NONE && cg_role(c, p) == IR_FUSE_INLINED) group_nodes_of(c, p, nodes, n, depth + 1);
    }
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* the dtypes a float4 path reads and writes: f32 (16 bytes) and f16/bf16
 * (4 halves, 8 bytes, widened to a float4) */
static int vec_dtype(symc_dtype dt) { return dt == SYMC_F32 || cg_is_half(dt); }

/* the dtype stored: the epilogue's result may be another float storage type than the row op's
 * (the precision pass's cast of a half result to an f32 graph output) */
static symc_dtype c_zdt(cg_kw *k, const row_spec *s) { return k->c->m->tensors[s->zt].dtype; }

/* keeps the f32/f16/bf16 tensors of ts whose shape is ref's (and not `skip`) */
static void keep_full_vec(cg_cuda *c, uint32_t *ts, uint32_t *n, const ir_tensor *ref, uint32_t skip) {
    uint32_t m = 0;
    for (uint32_t i = 0; i < *n; i++) {
        const ir_tensor *t = &c->m->tensors[ts[i]];
        if (ts[i] != skip && vec_dtype(t->dtype) && ir_same_shape(t, ref)) ts[m++] = ts[i];
    }
    *n = m;
}

/* opt value of e: every symbol at its opt (dflt when it cannot be evaluated) */
static int64_t expr_opt(sym_table *t, sym_expr e, int64_t dflt) {
    uint32_t n = sym_symbol_count(t);
    int64_t *v = malloc((n ? n : 1) * sizeof *v), out = dflt;
    if (!v) return dflt;
    for (uint32_t i = 0; i < n; i++) {
        sym_symbol_info info;
        sym_symbol_get(t, i, &info);
        v[i] = info.opt;
    }
    symc_error err;
    if (sym_eval(t, e, v, n, &out, &err) != SYMC_OK) out = dflt;
    free(v);
    return out;
}

/* substitutes each tensor of ts by its float4 lane (q<t>.<lane>); lane 0 removes */
static void lanes(cg_kw *k, const uint32_t *ts, uint32_t n, char lane) {
    for (uint32_t i = 0; i < n; i++) {
        char txt[48];
        snprintf(txt, sizeof txt, "sc_reg<float>{q%u.%c}", ts[i], lane);
        cg_kw_subst(k, ts[i], lane ? txt : NULL);
    }
}

/* `const float4 q<t>` for each tensor of ts not yet in `done`, at float4 index `at` */
static void load4(cg_kw *k, const uint32_t *ts, uint32_t n, const char *at, uint32_t *done, uint32_t *n_done) {
    for (uint32_t i = 0; i < n; i++) {
        uint32_t before = *n_done;
        add_unique(done, n_done, ts[i]);
        if (*n_done == before) continue;
        symc_dtype dt = k->c->m->tensors[ts[i]].dtype;
        if (cg_is_half(dt))
            cg_kw_body(k, "            const float4 q%u = %s(t%u, %s);\n", ts[i],
                       dt == SYMC_F16 ? "sc_ld4h" : "sc_ld4b", ts[i], at);
        else
            cg_kw_body(k, "            const float4 q%u = reinterpret_cast<const float4*>(t%u)[%s];\n", ts[i], ts[i],
                       at);
    }
}

/* `dst = <element i of the row input>` (its inlined producer computed here)
 * in a scope of its own; lane: read the float4 operands' lane */
static symc_status emit_x(cg_kw *k, const row_spec *s, char lane, const char *dst) {
    if (lane) lanes(k, s->vin, s->n_vin, lane);
    cg_kw_body(k, "            {\n");
    symc_status st = cg_emit_value(k, s->xt, "i", "xv");
    cg_kw_body(k, "            %s = xv;\n            }\n", dst);
    if (lane) lanes(k, s->vin, s->n_vin, 0);
    return st;
}

/* `dst = <the output element>` for the row value v at index i, column j:
 * the op's formula, the affine scale/bias, then the epilogue group */
static symc_status emit_out(cg_kw *k, const row_spec *s, char lane, const char *dst) {
    cg_cuda *c = k->c;
    const char *T = cg_ctype(s->dt);
    symc_status st = SYMC_OK;
    cg_kw_body(k, "            {\n");
    switch (s->kind) {
    case RK_SOFTMAX:
        if (s->zero_masked)
            cg_kw_body(k, "            const %s y = mx == %s ? (%s)0 : (%s)(sc_exp(v - mx) / sum);\n", T,
                       red_init(RED_MAX, s->dt), T, T);
        else cg_kw_body(k, "            const %s y = (%s)(sc_exp(v - mx) / sum);\n", T, T);
        break;
    case RK_LOG_SOFTMAX: cg_kw_body(k, "            const %s y = (%s)(v - mx - lse);\n", T, T); break;
    default: {
        const ir_tensor *aff[2];
        for (uint32_t i = 0; i < s->n_aff; i++) aff[i] = &c->m->tensors[s->aff[i]];
        if (lane) lanes(k, s->vaff, s->n_vaff, lane);
        if (s->n_aff) cg_kw_bcast_offsets(k, "j", s->aff_dims, s->aff_rank, s->n_aff, aff, "a");
        cg_kw_body(k, "            %s y = (v - mean) * inv;\n", T);
        char av[200];
        if (s->n_aff > 0) {
            load_as(k, av, sizeof av, s->aff[0], "a0", T);
            cg_kw_body(k, "            y *= %s;\n", av);
        }
        if (s->n_aff > 1) {
            load_as(k, av, sizeof av, s->aff[1], "a1", T);
            cg_kw_body(k, "            y += %s;\n", av);
        }
        if (lane) lanes(k, s->vaff, s->n_vaff, 0);
    }
    }
    if (s->epi == IR_NONE) {
        cg_kw_body(k, "            %s = y;\n            }\n", dst);
        return SYMC_OK;
    }
    /* the epilogue group reads y where it would read the row kernel's output */
    char yv[48];
    snprintf(yv, sizeof yv, "sc_reg<%s>{y}", T);
    cg_kw_subst(k, s->yt, yv);
    if (lane) lanes(k, s->vepi, s->n_vepi, lane);
    st = cg_emit_group_value(k, s->epi, "i", "zv");
    if (lane) lanes(k, s->vepi, s->n_vepi, 0);
    cg_kw_subst(k, s->yt, NULL);
    cg_kw_body(k, "            %s = zv;\n            }\n", dst);
    return st;
}

/* passes over the row before the output: their per-element step */
static int n_stat_passes(const row_spec *s) {
    return s->kind == RK_LAYER_NORM || s->kind == RK_SOFTMAX || s->kind == RK_LOG_SOFTMAX ? 2 : 1;
}

static void emit_init(cg_kw *k, const row_spec *s) {
    const char *T = cg_ctype(s->dt);
    switch (s->kind) {
    case RK_REDUCE: cg_kw_body(k, "            %s acc = %s;\n", acc_type(s->dt), red_init(s->red, s->dt)); break;
    case RK_SOFTMAX:
    case RK_LOG_SOFTMAX: cg_kw_body(k, "            %s mx = %s, sum = 0;\n", T, red_init(RED_MAX, s->dt)); break;
    default: cg_kw_body(k, "            %s mean = 0, m2 = 0;\n", T);
    }
}

static void emit_step(cg_kw *k, const row_spec *s, int p) {
    const char *T = cg_ctype(s->dt);
    cg_kw_body(k, "            ");
    switch (s->kind) {
    case RK_REDUCE: red_step(k, s->red, "v"); break;
    case RK_SOFTMAX:
    case RK_LOG_SOFTMAX: cg_kw_body(k, p == 0 ? "mx = sc_nanmax(mx, v);" : "sum += sc_exp(v - mx);"); break;
    case RK_LAYER_NORM:
        if (p == 0) cg_kw_body(k, "mean += v;");
        else cg_kw_body(k, "{ const %s d = v - mean; m2 += d * d; }", T);
        break;
    case RK_RMS_NORM: cg_kw_body(k, "m2 += v * v;"); break;
    }
    cg_kw_body(k, "\n");
}

/* the team's reduction after pass p */
static void emit_after(cg_kw *k, const row_spec *s, int p, const char *red) {
    const char *T = cg_ctype(s->dt);
    switch (s->kind) {
    case RK_REDUCE: {
        char dst[48];
        snprintf(dst, sizeof dst, "%s[row]", cg_kw_out(k, s->yt));
        cg_kw_body(k, "        acc = %s(acc, %s());\n        if (lane == 0) ", red, red_op(s->red));
        red_store(k, s->red, s->dt, dst, "ncols");
        break;
    }
    case RK_SOFTMAX:
    case RK_LOG_SOFTMAX:
        if (p == 0) cg_kw_body(k, "        mx = %s(mx, sc_max_op());\n", red);
        else {
            cg_kw_body(k, "        sum = %s(sum, sc_add_op());\n", red);
            if (s->kind == RK_LOG_SOFTMAX) cg_kw_body(k, "        const %s lse = sc_log(sum);\n", T);
        }
        break;
    default:
        if (s->kind == RK_LAYER_NORM && p == 0) {
            cg_kw_body(k, "        mean = %s(mean, sc_add_op()) / (%s)ncols;\n", red, T);
            break;
        }
        cg_kw_body(k, "        m2 = %s(m2, sc_add_op());\n", red);
        cg_kw_body(k, "        const %s inv = (%s)1 / sc_sqrt(m2 / (%s)ncols + %s);\n", T, T, T, s->eps);
    }
}

static const char lane_ch[4] = {'x', 'y', 'z', 'w'};

/* `dst = <this op's input element>` in a loop of mode 0 or 1: the row
 * input (its inlined producer computed here) or, for a chained op, the
 * first op's output at that element (its statistics are already known) */
static symc_status emit_val(cg_kw *k, const row_spec *s, char lane, const char *dst) {
    if (!s->first) return emit_x(k, s, lane, dst);
    /* fresh names: dst is usually the caller's `v`, which emit_out's own `v` would shadow */
    const char *T = cg_ctype(s->first->dt);
    cg_kw_body(k, "            { %s fv, fo;\n", T);
    symc_status st = emit_x(k, s->first, lane, "fv");
    cg_kw_body(k, "            { const %s v = fv;\n", T);
    if (!st) st = emit_out(k, s->first, lane, "fo");
    cg_kw_body(k, "            }\n            %s = fo; }\n", dst);
    return st;
}

/* the float4 operands a mode-1 loop reads for emit_val */
static void load_val4(cg_kw *k, const row_spec *s, uint32_t *done, uint32_t *n_done) {
    if (!s->first) {
        load4(k, s->vin, s->n_vin, "(rb >> 2) + q", done, n_done);
        return;
    }
    load4(k, s->first->vin, s->first->n_vin, "(rb >> 2) + q", done, n_done);
    load4(k, s->first->vaff, s->first->n_vaff, "q", done, n_done);
}

/* the loops of one path. mode 0: scalar, a team-stride loop per pass;
 * 1: float4, a team-stride loop per pass; 2: float4, the row loaded once
 * into cache[] (RK_CACHE float4s per thread), the passes over registers.
 * A chained op first runs the first op's statistic passes; in mode 2 a
 * pass then turns the cached row into the first op's output, in the other
 * modes each later pass recomputes it from the input. */
static symc_status emit_path(cg_kw *k, const row_spec *s, int mode, const char *red) {
    const char *T = cg_ctype(s->dt);
    symc_status st = SYMC_OK;
    const row_spec *f = s->first;
    int np = n_stat_passes(s), final = s->kind != RK_REDUCE, np1 = f ? n_stat_passes(f) : 0;
    if (f) emit_init(k, f);
    emit_init(k, s);
    static const char *open[3] = {
        "        for (long long j = lane; j < ncols; j += team) {\n            const long long i = rb + j;\n",
        "        for (long long q = lane; q < (ncols >> 2); q += team) {\n"
        "            const long long j4 = 4 * q, i4 = rb + j4;\n",
        "        #pragma unroll\n        for (int u = 0; u < %d; u++) {\n"
        "            const long long q = lane + (long long)u * team;\n"
        "            if (q >= (ncols >> 2)) continue;\n            const long long j4 = 4 * q, i4 = rb + j4;\n"};
    uint32_t done[CG_KW_MAX_ARGS + 8], n_done = 0;
    const row_spec *in = f ? f : s; /* whose input the kernel reads */
    if (mode == 2) {                /* load the row once */
        cg_kw_body(k, "        float4 cache[%d];\n", RK_CACHE);
        cg_kw_body(k, open[2], RK_CACHE);
        load4(k, in->vin, in->n_vin, "(rb >> 2) + q", done, &n_done);
        for (int l = 0; l < 4 && !st; l++) {
            cg_kw_body(k, "            { const long long i = i4 + %d;\n", l);
            char dst[32];
            snprintf(dst, sizeof dst, "cache[u].%c", lane_ch[l]);
            st = emit_x(k, in, lane_ch[l], dst);
            cg_kw_body(k, "            }\n");
        }
        cg_kw_body(k, "        }\n");
    }
    /* the first op's statistics over its input */
    for (int p = 0; p < np1 && !st; p++) {
        n_done = 0;
        cg_kw_body(k, open[mode], RK_CACHE);
        if (mode == 0) {
            cg_kw_body(k, "            %s v;\n", T);
            st = emit_x(k, f, 0, "v");
            emit_step(k, f, p);
        } else {
            if (mode == 1) load4(k, f->vin, f->n_vin, "(rb >> 2) + q", done, &n_done);
            for (int l = 0; l < 4 && !st; l++) {
                cg_kw_body(k, "            { const long long i = i4 + %d, j = j4 + %d;\n", l, l);
                if (mode == 2) cg_kw_body(k, "            const float v = cache[u].%c;\n", lane_ch[l]);
                else {
                    cg_kw_body(k, "            float v;\n");
                    st = emit_x(k, f, lane_ch[l], "v");
                }
                emit_step(k, f, p);
                cg_kw_body(k, "            (void)i; (void)j; }\n");
            }
        }
        cg_kw_body(k, "        }\n");
        emit_after(k, f, p, red);
    }
    if (f && mode == 2 && !st) { /* the cached row becomes the first op's output */
        n_done = 0;
        cg_kw_body(k, open[2], RK_CACHE);
        load4(k, f->vaff, f->n_vaff, "q", done, &n_done);
        for (int l = 0; l < 4 && !st; l++) {
            cg_kw_body(k, "            { const long long i = i4 + %d, j = j4 + %d;\n", l, l);
            cg_kw_body(k, "            const float v = cache[u].%c;\n", lane_ch[l]);
            char dst[32];
            snprintf(dst, sizeof dst, "cache[u].%c", lane_ch[l]);
            st = emit_out(k, f, lane_ch[l], dst);
            cg_kw_body(k, "            (void)i; (void)j; }\n");
        }
        cg_kw_body(k, "        }\n");
    }
    for (int p = 0; p < np + final && !st; p++) {
        int last = p == np;
        n_done = 0;
        cg_kw_body(k, open[mode], RK_CACHE);
        if (mode == 0) {
            cg_kw_body(k, "            %s v;\n", T);
            st = emit_val(k, s, 0, "v");
            if (last) {
                cg_kw_body(k, "            %s o;\n", T);
                if (!st) st = emit_out(k, s, 0, "o");
                char sv[64];
                cg_store(sv, sizeof sv, c_zdt(k, s), "o");
                cg_kw_body(k, "            %s[i] = %s;\n", cg_kw_out(k, s->zt), sv);
            } else {
                emit_step(k, s, p);
            }
        } else {
            if (mode == 1) load_val4(k, s, done, &n_done);
            if (last) {
                load4(k, s->vepi, s->n_vepi, "(rb >> 2) + q", done, &n_done);
                load4(k, s->vaff, s->n_vaff, "q", done, &n_done);
                cg_kw_body(k, "            float4 o;\n");
            }
            for (int l = 0; l < 4 && !st; l++) {
                cg_kw_body(k, "            { const long long i = i4 + %d, j = j4 + %d;\n", l, l);
                if (mode == 2) cg_kw_body(k, "            const float v = cache[u].%c;\n", lane_ch[l]);
                else {
                    cg_kw_body(k, "            float v;\n");
                    st = emit_val(k, s, lane_ch[l], "v");
                }
                char dst[8];
                snprintf(dst, sizeof dst, "o.%c", lane_ch[l]);
                if (last && !st) st = emit_out(k, s, lane_ch[l], dst);
                else if (!last) emit_step(k, s, p);
                cg_kw_body(k, "            (void)i; (void)j; }\n");
            }
            if (last && cg_is_half(c_zdt(k, s)))
                cg_kw_body(k, "            %s(%s, i4 >> 2, o);\n", c_zdt(k, s) == SYMC_F16 ? "sc_st4h" : "sc_st4b",
                           cg_kw_out(k, s->zt));
            else if (last)
                cg_kw_body(k, "            reinterpret_cast<float4*>(%s)[i4 >> 2] = o;\n", cg_kw_out(k, s->zt));
        }
        cg_kw_body(k, "        }\n");
        if (!last) emit_after(k, s, p, red);
    }
    return st;
}

/* one team (`lanes` lanes of a warp: 8, 16 or 32; or the block: 0) per row, grid-stride over
 * rows; inside, the float4 paths when vec (uniform: the row length and the pointers) */
static symc_status emit_team(cg_kw *k, const row_spec *s, int lanes) {
    char red[32];
    const int warp = lanes > 0;
    if (lanes == 32 || !warp) snprintf(red, sizeof red, "%s", warp ? "sc_warp_reduce" : "sc_block_reduce");
    else snprintf(red, sizeof red, "sc_team_reduce<%d>", lanes);
    symc_status st = SYMC_OK;
    if (lanes == 32)
        cg_kw_body(k,
                   "    /* short rows: one warp per row */\n"
                   "    const int lane = threadIdx.x & 31, team = 32, nw = blockDim.x >> 5;\n"
                   "    for (long long row = (long long)blockIdx.x * nw + (threadIdx.x >> 5); row < nrows; "
                   "row += (long long)gridDim.x * nw) {\n");
    else if (warp)
        cg_kw_body(k,
                   "    /* short rows: a team of %d lanes per row (its reductions shuffle within the team) */\n"
                   "    const int lane = threadIdx.x & %d, team = %d, nw = blockDim.x / %d;\n"
                   "    for (long long row = (long long)blockIdx.x * nw + threadIdx.x / %d; row < nrows; "
                   "row += (long long)gridDim.x * nw) {\n",
                   lanes, lanes - 1, lanes, lanes, lanes);
    else
        cg_kw_body(k,
                   "    /* long rows: one block per row */\n"
                   "    const int lane = threadIdx.x, team = blockDim.x;\n"
                   "    for (long long row = blockIdx.x; row < nrows; row += gridDim.x) {\n");
    cg_kw_body(k, "        const long long rb = row * ncols;\n");
    int cached = s->kind != RK_REDUCE;
    if (s->vec) {
        if (cached) {
            /* warp rows (<= RK_SHORT = 32 lanes * RK_CACHE * 4) always fit */
            if (warp) cg_kw_body(k, "        if (vec) { /* float4, the row kept in registers */\n");
            else
                cg_kw_body(k, "        if (vec && ncols <= %dLL * team) { /* float4, the row kept in registers */\n",
                           4 * RK_CACHE);
            st = emit_path(k, s, 2, red);
            cg_kw_body(k, "        } else ");
        }
        if (!cached || !warp) {
            cg_kw_body(k, "%sif (vec) { /* float4, a pass per statistic */\n", cached ? "" : "        ");
            if (!st) st = emit_path(k, s, 1, red);
            cg_kw_body(k, "        } else ");
        }
        cg_kw_body(k, "{ /* scalar */\n");
    }
    if (!st) st = emit_path(k, s, 0, red);
    if (s->vec) cg_kw_body(k, "        }\n");
    cg_kw_body(k, "    }\n");
    return st;
}

/* the norm's affine operands of exactly the normalized shape (float4 lanes) */
static void vec_affine(cg_cuda *c, row_spec *s) {
    for (uint32_t i = 0; i < s->n_aff; i++) {
        const ir_tensor *a = &c->m->tensors[s->aff[i]];
        int same = vec_dtype(a->dtype) && a->rank == s->aff_rank;
        for (int d = 0; same && d < a->rank; d++) same = a->dims[d] == s->aff_dims[d];
        if (same) s->vaff[s->n_vaff++] = s->aff[i];
    }
}

/* Emits the row kernel of s: picks the launch from the row length's range
 * and opt, writes the kernel comment, finishes the kernel. */
static symc_status emit_row_kernel(cg_cuda *c, row_spec *s, const char *what) {
    sym_table *syms = c->m->syms;
    const ir_tensor *x = &c->m->tensors[s->xt];
    cg_kw k;
    cg_kw_begin(&k, c, s->node);
    /* float4 operands */
    s->vec = vec_dtype(s->dt) && sym_prove_divisible(syms, s->cols, 4) != SYM_FALSE;
    s->n_vin = s->n_vepi = s->n_vaff = 0;
    if (!s->first) {
        leaves_of(c, s->xt, s->vin, &s->n_vin, 0);
        keep_full_vec(c, s->vin, &s->n_vin, x, RT_NONE);
    } else { /* the kernel reads the first op's input and affine operands */
        row_spec *f = (row_spec *)s->first;
        f->n_vin = f->n_vepi = f->n_vaff = 0;
        leaves_of(c, f->xt, f->vin, &f->n_vin, 0);
        keep_full_vec(c, f->vin, &f->n_vin, &c->m->tensors[f->xt], RT_NONE);
        vec_affine(c, f);
    }
    if (s->epi != IR_NONE) {
        const ir_node *e = &c->m->nodes[s->epi];
        for (uint32_t i = 0; i < e->n_in; i++) leaves_of(c, e->in[i], s->vepi, &s->n_vepi, 0);
        keep_full_vec(c, s->vepi, &s->n_vepi, &c->m->tensors[s->zt], s->yt);
    }
    vec_affine(c, s);
    if (s->kind == RK_REDUCE && s->n_vin == 0) s->vec = 0;
    /* regimes: a warp per row for rows <= RK_SHORT, a block per row above */
    sym_range rg = sym_range_of(syms, s->cols);
    int64_t opt = expr_opt(syms, s->cols, rg.hi);
    int warp_path = rg.lo <= RK_SHORT, block_path = rg.hi > RK_SHORT;
    int warp_launch = !block_path || (warp_path && opt <= RK_SHORT);
    /* rows of at most 128 (256) elements, whatever the size: a team of 8 (16) lanes a row, about
     * 12 elements a lane, 32 (16) rows a block; a warp per row spent its lanes on 4 elements
     * each at 96 (Swin's and ConvNeXt's first stages: a quarter of the bandwidth) */
    const int lanes = block_path ? 32 : rg.hi <= 128 ? 8 : rg.hi <= 256 ? 16 : 32;
    uint32_t block = 256, per_block = RK_WARPS * 32 / (uint32_t)lanes;
    if (!warp_launch) { /* threads for ~16 elements each at opt, 256..1024 */
        per_block = 1;
        while (block < 1024 && (int64_t)block * 16 < opt) block *= 2;
    }
    cg_kw_body(&k, "    const long long nrows = %s", cg_kw_dim(&k, s->rows));
    cg_kw_body(&k, ", ncols = %s;\n", cg_kw_dim(&k, s->cols));
    if (s->vec) {
        uint32_t all[CG_KW_MAX_ARGS + 4], n_all = 0;
        for (uint32_t i = 0; i < s->n_vin; i++) add_unique(all, &n_all, s->vin[i]);
        for (uint32_t i = 0; i < s->n_vepi; i++) add_unique(all, &n_all, s->vepi[i]);
        for (uint32_t i = 0; i < s->n_vaff; i++) add_unique(all, &n_all, s->vaff[i]);
        if (s->first) {
            for (uint32_t i = 0; i < s->first->n_vin; i++) add_unique(all, &n_all, s->first->vin[i]);
            for (uint32_t i = 0; i < s->first->n_vaff; i++) add_unique(all, &n_all, s->first->vaff[i]);
        }
        /* 16 bytes of f32 or 8 bytes of half a load: the pointers aligned to that */
        cg_kw_body(&k,
                   "    /* float4 when the row length is a multiple of 4 and the pointers are 16-byte (f32) or 8-byte "
                   "(half) aligned */\n");
        cg_kw_body(&k, "    const bool vec = (ncols & 3LL) == 0");
        if (s->kind != RK_REDUCE)
            cg_kw_body(&k, " && ((unsigned long long)%s & %dull) == 0ull", cg_kw_out(&k, s->zt),
                       cg_is_half(c->m->tensors[s->zt].dtype) ? 7 : 15);
        for (uint32_t i = 0; i < n_all; i++)
            cg_kw_body(&k, " && ((unsigned long long)%s & %dull) == 0ull", cg_kw_in(&k, all[i]),
                       cg_is_half(c->m->tensors[all[i]].dtype) ? 7 : 15);
        cg_kw_body(&k, ";\n");
    }
    symc_status st = SYMC_OK;
    if (warp_path && block_path) {
        cg_kw_body(&k, "    if (ncols <= %dLL) {\n", RK_SHORT);
        st = emit_team(&k, s, 32);
        cg_kw_body(&k, "    } else {\n");
        if (!st) st = emit_team(&k, s, 0);
        cg_kw_body(&k, "    }\n");
    } else {
        st = emit_team(&k, s, warp_path ? lanes : 0);
    }
    cg_str comment = {0};
    cg_str_appendf(&comment, "%s: %s (%s); ", what, c->m->nodes[s->node].name,
                   ir_op_get(c->m->nodes[s->node].op)->name);
    if (warp_path && lanes < 32)
        cg_str_appendf(&comment,
                       "rows of up to %d elements: a team of %d lanes per row (launch: %u rows per "
                       "256-thread block)",
                       lanes == 8 ? 128 : 256, lanes, per_block);
    else if (warp_path)
        cg_str_appendf(&comment, "rows of up to %d elements: one warp per row%s", RK_SHORT,
                       warp_launch ? " (launch: 8 warps = 8 rows per 256-thread block)" : "");
    if (warp_path && block_path) cg_str_appendf(&comment, "; longer rows: ");
    else if (block_path) cg_str_appendf(&comment, "rows of over %d elements: ", RK_SHORT);
    if (block_path) cg_str_appendf(&comment, "one block per row%s", warp_launch ? "" : " (launch)");
    if (!warp_launch) cg_str_appendf(&comment, ", %u threads", block);
    if (s->vec)
        cg_str_appendf(&comment, "; float4 when the row length is a multiple of 4 and the pointers 16-byte aligned%s",
                       s->kind != RK_REDUCE ? ", then the row is read once and kept in registers (up to 32 elements "
                                              "a thread), else streamed per pass"
                                            : "");
    if (s->first) {
        const ir_node *fn = &c->m->nodes[s->first->node];
        cg_str_appendf(&comment, "; its input is %s (%s) computed in this kernel (never stored)", fn->name,
                       ir_op_get(fn->op)->name);
        cg_describe_inlined(c, s->first->xt, &comment);
    } else {
        cg_describe_inlined(c, s->xt, &comment);
    }
    if (s->epi != IR_NONE) {
        uint32_t nodes[CG_KW_MAX_ARGS], n_nodes = 0;
        group_nodes_of(c, s->epi, nodes, &n_nodes, 0);
        qsort(nodes, n_nodes, sizeof nodes[0], cmp_u32);
        cg_str_appendf(&comment, "; epilogue before the store: ");
        cg_describe_nodes(c, nodes, n_nodes, &comment);
    }
    if (!st) st = cg_kw_finish(&k, comment.p ? comment.p : "", s->rows, per_block, block);
    cg_str_free(&comment);
    cg_kw_free(&k);
    return st;
}

/* a reduction over rows of `cols` contiguous elements */
static symc_status row_reduce(cg_cuda *c, uint32_t node, red_kind r, uint32_t xt, uint32_t yt, sym_expr rows,
                              sym_expr cols, const char *what) {
    row_spec s;
    memset(&s, 0, sizeof s);
    s.kind = RK_REDUCE;
    s.red = r;
    s.node = node;
    s.xt = xt;
    s.yt = s.zt = yt;
    s.epi = IR_NONE;
    s.rows = rows;
    s.cols = cols;
    s.dt = c->m->tensors[xt].dtype;
    return emit_row_kernel(c, &s, what);
}

/* unravels `idx` over the dims of x whose mark equals `want`, adding each
 * coordinate times x's own stride to `off` */
static void unravel_axes(cg_kw *k, const ir_tensor *x, const int *mark, int want, const char *idx, const char *off) {
    cg_kw_body(k, "            { long long r = %s, c;", idx);
    int last = -1;
    for (int d = 0; d < x->rank; d++)
        if (mark[d] == want) last = last < 0 ? d : last;
    for (int d = x->rank - 1; d >= 0; d--) {
        if (mark[d] != want) continue;
        const char *st = cg_kw_dim(k, cg_prod(k->c, x->dims, d + 1, x->rank));
        if (d == last) cg_kw_body(k, " c = r;");
        else {
            const char *dim = cg_kw_dim(k, x->dims[d]);
            cg_kw_body(k, " c = r %% %s; r /= %s;", dim, dim);
        }
        cg_kw_body(k, " %s += c * %s;", off, st);
    }
    cg_kw_body(k, " }\n");
}

/* marks the reduced axes of a reduce_* node; *suffix: they are the innermost
 * ones (the reduced elements of each output are contiguous). 0, with *bad
 * the axis, when an axis is out of range. */
static int reduced_axes(const ir_node *n, const ir_tensor *x, int *reduced, int *suffix, int64_t *bad) {
    for (int d = 0; d < x->rank; d++) reduced[d] = 0;
    const ir_attr *axes = ir_node_attr(n, "axes");
    if (!axes || axes->n == 0)
        for (int d = 0; d < x->rank; d++) reduced[d] = 1;
    for (uint32_t i = 0; axes && i < axes->n; i++) {
        int a = cg_norm_axis(axes->ints[i], x->rank);
        if (a < 0) {
            *bad = axes->ints[i];
            return 0;
        }
        reduced[a] = 1;
    }
    int first = x->rank;
    for (int d = x->rank - 1; d >= 0 && reduced[d]; d--) first = d;
    *suffix = 1;
    for (int d = 0; d < first; d++) *suffix &= !reduced[d];
    return 1;
}

/* The row-kernel spec of a softmax / log_softmax over the last axis or a
 * layer / rms norm (cg_row_kernel holds), without an epilogue. */
static void row_spec_of(cg_cuda *c, uint32_t node, row_spec *s) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank);
    memset(s, 0, sizeof *s);
    s->node = node;
    s->xt = n->in[0];
    s->yt = s->zt = n->out[0];
    s->epi = IR_NONE;
    s->rows = cg_prod(c, x->dims, 0, axis);
    s->dt = x->dtype;
    if (n->op == IR_OP_SOFTMAX || n->op == IR_OP_LOG_SOFTMAX) {
        s->kind = n->op == IR_OP_LOG_SOFTMAX ? RK_LOG_SOFTMAX : RK_SOFTMAX;
        s->zero_masked = n->op == IR_OP_SOFTMAX && cg_attr_int(n, "zero_masked_rows", 0) != 0;
        s->cols = x->dims[axis];
        return;
    }
    s->kind = n->op == IR_OP_RMS_NORM ? RK_RMS_NORM : RK_LAYER_NORM;
    s->cols = cg_prod(c, x->dims, axis, x->rank);
    for (uint32_t i = 1; i < n->n_in && s->n_aff < 2; i++) s->aff[s->n_aff++] = n->in[i];
    s->aff_dims = x->dims + axis;
    s->aff_rank = x->rank - axis;
    cg_float_literal(s->eps, sizeof s->eps, cg_attr_float(n, "epsilon", 1e-5), x->dtype);
}

/* the full spec of a row op at emission: its epilogue and its chained
 * first op from the fusion plan */
static void row_spec_planned(cg_cuda *c, uint32_t node, row_spec *s, row_spec *first) {
    row_spec_of(c, node, s);
    s->epi = ir_fuse_epilogue_of(c->m, c->uses, node);
    if (s->epi != IR_NONE) s->zt = c->m->nodes[s->epi].out[0];
    uint32_t a = ir_fuse_row_first_of(c->m, node);
    if (a != IR_NONE) {
        row_spec_of(c, a, first);
        s->first = first;
    }
}

int cg_row_chain_ok(ir_module *m, uint32_t first, uint32_t second) {
    cg_cuda view = {.m = m}, *c = &view;
    const ir_node *a = &c->m->nodes[first], *b = &c->m->nodes[second];
    int a_sm = a->op == IR_OP_SOFTMAX || a->op == IR_OP_LOG_SOFTMAX,
        b_sm = b->op == IR_OP_SOFTMAX || b->op == IR_OP_LOG_SOFTMAX;
    int a_nm = a->op == IR_OP_LAYER_NORM || a->op == IR_OP_RMS_NORM,
        b_nm = b->op == IR_OP_LAYER_NORM || b->op == IR_OP_RMS_NORM;
    if (!((a_sm && b_nm) || (a_nm && b_sm)) || !cg_row_kernel(c, first) || !cg_row_kernel(c, second)) return 0;
    row_spec sa, sb;
    row_spec_of(c, first, &sa);
    row_spec_of(c, second, &sb);
    return sa.dt == sb.dt && (sa.dt == SYMC_F32 || cg_is_half(sa.dt)) && sa.rows == sb.rows && sa.cols == sb.cols;
}

int cg_row_kernel(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    if (n->n_in < 1) return 0;
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    int fl = x->dtype == SYMC_F32 || x->dtype == SYMC_F64 || cg_is_half(x->dtype);
    switch (n->op) {
    case IR_OP_SOFTMAX:
    case IR_OP_LOG_SOFTMAX: return fl && cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank) == x->rank - 1;
    case IR_OP_LAYER_NORM:
    case IR_OP_RMS_NORM: return fl && cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank) >= 0;
    case IR_OP_GLOBAL_AVG_POOL: return fl && x->rank >= 3;
    case IR_OP_REDUCE_SUM:
    case IR_OP_REDUCE_MEAN:
    case IR_OP_REDUCE_MAX:
    case IR_OP_REDUCE_MIN:
    case IR_OP_REDUCE_PROD: {
        int reduced[IR_MAX_RANK], suffix = 0;
        int64_t bad;
        return reduced_axes(n, x, reduced, &suffix, &bad) && suffix &&
            (fl || x->dtype == SYMC_I32 || x->dtype == SYMC_I64);
    }
    default: return 0;
    }
}

symc_status cg_emit_reduce(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    red_kind r = n->op == IR_OP_REDUCE_SUM ? RED_SUM
        : n->op == IR_OP_REDUCE_MEAN       ? RED_MEAN
        : n->op == IR_OP_REDUCE_MIN        ? RED_MIN
        : n->op == IR_OP_REDUCE_PROD       ? RED_PROD
                                           : RED_MAX;
    if (x->dtype == SYMC_BOOL) return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' is bool", x->name);
    int reduced[IR_MAX_RANK], suffix;
    int64_t bad;
    if (!reduced_axes(n, x, reduced, &suffix, &bad))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "axis %lld is out of range", (long long)bad);
    sym_expr kept = sym_const(c->m->syms, 1), red = sym_const(c->m->syms, 1);
    for (int d = 0; d < x->rank; d++) {
        if (reduced[d]) red = sym_mul(c->m->syms, red, x->dims[d]);
        else kept = sym_mul(c->m->syms, kept, x->dims[d]);
    }
    if (suffix) return row_reduce(c, node, r, n->in[0], n->out[0], kept, red, "reduction");

    /* generic: one thread per output */
    cg_kw k;
    cg_kw_begin(&k, c, node);
    symc_dtype dt = x->dtype;
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    char ns[48];
    snprintf(ns, sizeof ns, "%s", cg_kw_dim(&k, red));
    cg_kw_body(&k, "    SC_LOOP(o, %s) {\n        long long base = 0;\n", cg_kw_dim(&k, kept));
    unravel_axes(&k, x, reduced, 0, "o", "base");
    cg_kw_body(
        &k, "        %s acc = %s;\n        for (long long q = 0; q < %s; q++) {\n            long long off = base;\n",
        acc_type(dt), red_init(r, dt), ns);
    unravel_axes(&k, x, reduced, 1, "q", "off");
    cg_kw_body(&k, "            ");
    char v[200];
    (void)xp;
    load_as(&k, v, sizeof v, n->in[0], "off", acc_type(dt));
    red_step(&k, r, v);
    cg_kw_body(&k, "\n        }\n        ");
    char dst[64];
    snprintf(dst, sizeof dst, "%s[o]", yp);
    red_store(&k, r, dt, dst, ns);
    cg_kw_body(&k, "    }\n");
    char comment[256];
    snprintf(comment, sizeof comment, "reduction: %s (%s), one thread per output", n->name, ir_op_get(n->op)->name);
    symc_status st = cg_kw_finish(&k, comment, kept, 256, 256);
    cg_kw_free(&k);
    return st;
}

symc_status cg_emit_global_avg_pool(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    if (x->rank < 3 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' must be a float tensor of rank >= 3", x->name);
    return row_reduce(c, node, RED_MEAN, n->in[0], n->out[0], cg_prod(c, x->dims, 0, 2),
                      cg_prod(c, x->dims, 2, x->rank), "global average pool");
}

symc_status cg_emit_softmax(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank);
    if (axis < 0 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' (%s) needs a float dtype and an axis in range",
                       x->name, symc_dtype_name(x->dtype));
    int logsm = n->op == IR_OP_LOG_SOFTMAX;
    sym_expr outer = cg_prod(c, x->dims, 0, axis);
    if (cg_row_kernel(c, node)) { /* the last axis: a row kernel */
        row_spec s, first;
        row_spec_planned(c, node, &s, &first);
        return emit_row_kernel(c, &s, ir_op_get(n->op)->name);
    }
    const char *T = cg_ctype(x->dtype);
    const char *ninf = red_init(RED_MAX, x->dtype);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    sym_expr inner = cg_prod(c, x->dims, axis + 1, x->rank);
    char len[48];
    snprintf(len, sizeof len, "%s", cg_kw_dim(&k, x->dims[axis]));
    char store[160];
    if (logsm) snprintf(store, sizeof store, "(%s)(v - mx - sc_log(sum))", T);
    else if (cg_attr_int(n, "zero_masked_rows", 0)) /* a row of -inf gives zeros */
        snprintf(store, sizeof store, "(mx == %s ? (%s)0 : (%s)(sc_exp(v - mx) / sum))", ninf, T, T);
    else snprintf(store, sizeof store, "(%s)(sc_exp(v - mx) / sum)", T);
    symc_status st = SYMC_OK;
    cg_str comment = {0};
    {
        const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
        sym_expr work = sym_mul(c->m->syms, outer, inner);
        char in_s[48];
        snprintf(in_s, sizeof in_s, "%s", cg_kw_dim(&k, inner));
        cg_kw_body(&k, "    SC_LOOP(w, %s) {\n", cg_kw_dim(&k, work));
        const char *S = cg_stype(x->dtype);
        char off[96], ld[160], st_v[320];
        snprintf(off, sizeof off, "j * %s", in_s);
        cg_load(ld, sizeof ld, x->dtype, "xr", off);
        cg_store(st_v, sizeof st_v, x->dtype, store);
        cg_kw_body(&k, "        const %s* xr = %s + (w / %s) * %s * %s + w %% %s;\n", S, xp, in_s, len, in_s, in_s);
        cg_kw_body(&k, "        %s* yr = %s + (w / %s) * %s * %s + w %% %s;\n", S, yp, in_s, len, in_s, in_s);
        cg_kw_body(&k, "        %s mx = %s, sum = 0;\n", T, ninf);
        cg_kw_body(&k, "        for (long long j = 0; j < %s; j++) mx = sc_nanmax(mx, (%s)%s);\n", len, T, ld);
        cg_kw_body(&k, "        for (long long j = 0; j < %s; j++) sum += sc_exp((%s)%s - mx);\n", len, T, ld);
        cg_kw_body(&k, "        for (long long j = 0; j < %s; j++) {\n", len);
        cg_kw_body(&k, "            const %s v = %s;\n            yr[j * %s] = %s;\n        }\n    }\n", T, ld, in_s,
                   st_v);
        cg_str_appendf(&comment, "%s: %s over axis %d, one thread per (outer, inner)", ir_op_get(n->op)->name, n->name,
                       axis);
        st = cg_kw_finish(&k, comment.p ? comment.p : "", work, 256, 256);
    }
    cg_str_free(&comment);
    cg_kw_free(&k);
    return st;
}

symc_status cg_emit_norm(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", -1), x->rank);
    int rms = n->op == IR_OP_RMS_NORM;
    if (axis < 0 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' (%s) needs a float dtype and an axis in range",
                       x->name, symc_dtype_name(x->dtype));
    row_spec s, first;
    (void)rms;
    row_spec_planned(c, node, &s, &first);
    return emit_row_kernel(c, &s, ir_op_get(n->op)->name);
}
