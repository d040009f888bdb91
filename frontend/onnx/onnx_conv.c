/* ONNX contractions and windows: Gemm, Conv, ConvTranspose, AveragePool, MaxPool, LpPool, their
 * window attributes (kernel, strides, dilations, pads or auto_pad) read into one `window`
 * description; 1-D runs as 2-D with a unit axis. fe_conv_of is shared with ConvInteger. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- contractions and windows -------------------------------------------------------------------- */

static symc_status h_gemm(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    ir_attr a[4] = {
        symc_attr_int("trans_a", fe_attr_i(c, "transA", 0)), symc_attr_int("trans_b", fe_attr_i(c, "transB", 0)),
        symc_attr_float("alpha", fe_attr_f(c, "alpha", 1.0)), symc_attr_float("beta", fe_attr_f(c, "beta", 1.0))};
    return st ? st : fe_emit1(c, IR_OP_GEMM, in, n, a, 4, 0, &out);
}

/* Spatial attributes shared by Conv, MaxPool and AveragePool (2-D only). */
typedef struct window {
    int64_t kernel[2], strides[2], dil[2], pads[4];
    sym_expr lo[2], hi[2]; /* auto_pad SAME: symbolic pads */
    int symbolic;          /* some pad is not a constant: pad explicitly first */
    int one_d;             /* a 1-D op run as 2-D on [N, C, 1, L]: attributes have 1 entry a dim */
} window;

static symc_status ints_attr(fe_ctx *c, const char *name, uint32_t n, const int64_t *dflt, int one_d, int64_t *out) {
    const int64_t *v;
    uint32_t got;
    if (!fe_attr_ints(c, name, &v, &got)) {
        memcpy(out, dflt, n * sizeof *out);
        return SYMC_OK;
    }
    if (one_d) { /* the added dim keeps the default (stride 1, no pads) */
        if (got != n / 2)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries; 1-D ops take %u", name, got, n / 2);
        memcpy(out, dflt, n * sizeof *out);
        out[1] = v[0];
        if (n == 4) out[3] = v[1];
        return SYMC_OK;
    }
    if (got != n)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "attribute '%s' has %u entries; 2-D ops take %u", name, got, n);
    memcpy(out, v, n * sizeof *v);
    return SYMC_OK;
}

/* kernel must be filled in; the input x is NCHW. */
static symc_status read_window(fe_ctx *c, uint32_t x, window *w) {
    static const int64_t ones[2] = {1, 1}, zeros[4] = {0, 0, 0, 0};
    symc_status st;
    if ((st = ints_attr(c, "strides", 2, ones, w->one_d, w->strides)) ||
        (st = ints_attr(c, "dilations", 2, ones, w->one_d, w->dil)) ||
        (st = ints_attr(c, "pads", 4, zeros, w->one_d, w->pads)))
        return st;
    const char *ap = fe_attr_s(c, "auto_pad", "NOTSET");
    w->symbolic = 0;
    if (!strcmp(ap, "NOTSET")) return SYMC_OK;
    if (!strcmp(ap, "VALID")) {
        memset(w->pads, 0, sizeof w->pads);
        return SYMC_OK;
    }
    int upper = !strcmp(ap, "SAME_UPPER");
    if (!upper && strcmp(ap, "SAME_LOWER"))
        return fe_fail(c, SYMC_ERR_FORMAT, "auto_pad = '%s' (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)", ap);
    /* SAME: output ceil(in / stride); total padding
     * max((out - 1) * stride + dilation * (kernel - 1) + 1 - in, 0),
     * the odd one at the end (UPPER) or the beginning (LOWER) */
    for (int i = 0; i < 2; i++) {
        sym_expr in = T(c, x)->dims[2 + i], s = sym_const(c->t, w->strides[i]);
        sym_expr outd = sym_ceildiv(c->t, in, s);
        sym_expr tot = sym_add_const(c->t, sym_sub(c->t, sym_mul(c->t, sym_add_const(c->t, outd, -1), s), in),
                                     w->dil[i] * (w->kernel[i] - 1) + 1);
        tot = sym_max(c->t, tot, sym_const(c->t, 0));
        sym_expr half = sym_floordiv(c->t, tot, sym_const(c->t, 2)), rest = sym_sub(c->t, tot, half);
        w->lo[i] = upper ? half : rest;
        w->hi[i] = upper ? rest : half;
        if (w->lo[i] == SYM_NONE || w->hi[i] == SYM_NONE)
            return fe_fail(c, SYMC_ERR_INTERNAL, "auto_pad: %s",
                           sym_table_error(c->t) ? sym_table_error(c->t)->msg : "?");
        int64_t lo, hi;
        if (sym_is_const(c->t, w->lo[i], &lo) && sym_is_const(c->t, w->hi[i], &hi)) {
            w->pads[i] = lo;
            w->pads[2 + i] = hi;
        } else {
            w->symbolic = 1;
        }
    }
    return SYMC_OK;
}

/* For symbolic SAME padding: an explicit pad node with `value`, after which
 * the window op runs unpadded. */
static symc_status pad_first(fe_ctx *c, uint32_t *x, window *w, double value) {
    if (!w->symbolic) return SYMC_OK;
    sym_expr zero = sym_const(c->t, 0);
    sym_expr pads[8] = {zero, zero, w->lo[0], w->lo[1], zero, zero, w->hi[0], w->hi[1]};
    ir_attr a[3] = {symc_attr_dims("pads", pads, 8), symc_attr_str("mode", "constant"),
                    symc_attr_float("value", value)};
    memset(w->pads, 0, sizeof w->pads);
    return fe_emit1(c, IR_OP_PAD, x, 1, a, 3, -1, x);
}

/* 1-D (rank 3) and 2-D (rank 4) inputs are taken; a 1-D input is viewed as
 * [N, C, 1, L] (one_d), the exact 2-D op with a height of 1. */
static symc_status need_4d(fe_ctx *c, uint32_t *x, const char *what, int *one_d) {
    int32_t r = T(c, *x)->rank;
    *one_d = r == 3;
    if (r != 4 && r != 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "only 1-D to 3-D %s (a 3-D to 5-D input) is supported; input '%s' has rank %d", what,
                       T(c, *x)->name, (int)r);
    int64_t ax = 2;
    ir_attr a = symc_attr_ints("axes", &ax, 1);
    return *one_d ? fe_emit1(c, IR_OP_UNSQUEEZE, x, 1, &a, 1, -1, x) : SYMC_OK;
}

/* The result of a 1-D op run as 2-D: squeeze the added dim into output 0. */
static symc_status emit_1d_to(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n, const ir_attr *a, uint32_t na,
                              int one_d, int out_k, uint32_t *out) {
    int64_t ax = 2;
    ir_attr sq = symc_attr_ints("axes", &ax, 1);
    symc_status st = fe_emit1(c, op, in, n, a, na, one_d ? -1 : out_k, out);
    return st || !one_d ? st : fe_emit1(c, IR_OP_SQUEEZE, out, 1, &sq, 1, out_k, out);
}
static symc_status emit_1d(fe_ctx *c, ir_op op, const uint32_t *in, uint32_t n, const ir_attr *a, uint32_t na,
                           int one_d) {
    uint32_t out;
    return emit_1d_to(c, op, in, n, a, na, one_d, 0, &out);
}

static symc_status read_window3(fe_ctx *c, uint32_t x, int kernel_given, int64_t *k, int64_t *s, int64_t *d,
                                int64_t *p);

/* Conv of in[0..n) (x, w, optional bias) with the node's attributes, into
 * ONNX output out_k (or an intermediate for out_k < 0), on 1 to 3 spatial dims: 1-D runs
 * as 2-D; 3-D (a rank-5 input) is the same IR op with 3 entries a spatial attribute. */
symc_status fe_conv_of(fe_ctx *c, uint32_t *in, uint32_t n, int out_k, uint32_t *out) {
    symc_status st = SYMC_OK;
    window w;
    if (st) return st;
    if (T(c, in[0])->rank == 5) {
        const ir_tensor *wt = T(c, in[1]);
        int64_t k[3], s3[3], d3[3], p3[6];
        if (wt->rank != 5)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' has rank %d; the input's 3-D convolution needs 5",
                           wt->name, (int)wt->rank);
        for (int i = 0; i < 3; i++)
            if (!sym_is_const(c->t, wt->dims[2 + i], &k[i]))
                return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d is not a constant", wt->name, 2 + i);
        if ((st = read_window3(c, in[0], 1, k, s3, d3, p3))) return st;
        ir_attr a[4] = {symc_attr_ints("strides", s3, 3), symc_attr_ints("pads", p3, 6),
                        symc_attr_ints("dilations", d3, 3), symc_attr_int("group", fe_attr_i(c, "group", 1))};
        return fe_emit1(c, IR_OP_CONV2D, in, n, a, 4, out_k, out);
    }
    st = need_4d(c, &in[0], "convolution", &w.one_d);
    if (st) return st;
    if (w.one_d && T(c, in[1])->rank == 3) {
        int64_t ax = 2;
        ir_attr ua = symc_attr_ints("axes", &ax, 1);
        if ((st = fe_emit1(c, IR_OP_UNSQUEEZE, &in[1], 1, &ua, 1, -1, &in[1]))) return st;
    }
    const ir_tensor *wt = T(c, in[1]);
    if (wt->rank != 4)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' has rank %d; the input's convolution needs %d", wt->name,
                       (int)(wt->rank - w.one_d), 4 - w.one_d);
    for (int i = 0; i < 2; i++)
        if (!sym_is_const(c->t, wt->dims[2 + i], &w.kernel[i]))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d is not a constant", wt->name, 2 + i);
    const int64_t *ks;
    uint32_t nk;
    if (fe_attr_ints(c, "kernel_shape", &ks, &nk) &&
        (nk != 2u - w.one_d || (!w.one_d && ks[0] != w.kernel[0]) || ks[nk - 1] != w.kernel[1]))
        return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape does not match weight '%s' (%" PRId64 "x%" PRId64 ")",
                       wt->name, w.kernel[0], w.kernel[1]);
    if ((st = read_window(c, in[0], &w)) || (st = pad_first(c, &in[0], &w, 0.0))) return st;
    ir_attr a[4] = {symc_attr_ints("strides", w.strides, 2), symc_attr_ints("pads", w.pads, 4),
                    symc_attr_ints("dilations", w.dil, 2), symc_attr_int("group", fe_attr_i(c, "group", 1))};
    return emit_1d_to(c, IR_OP_CONV2D, in, n, a, 4, w.one_d, out_k, out);
}

static symc_status h_conv(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    return st ? st : fe_conv_of(c, in, n, 0, &out);
}

/* ConvTranspose on 1 to 3 spatial dims. output_shape and auto_pad SAME
 * become explicit pads (ONNX's total padding stride * (in - 1) +
 * output_padding + dilation * (k - 1) + 1 - out, split with Python's floor
 * division as the reference splits it; a negative total grows the output);
 * the pads must then be constants. */
static symc_status h_conv_transpose(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 3);
    uint32_t in[3], out, n = fe_n_in(c);
    for (uint32_t k = 0; k < n && !st; k++) st = fe_in(c, k, &in[k]);
    if (st) return st;
    const ir_tensor *xt = T(c, in[0]), *wt = T(c, in[1]);
    int32_t nsp = xt->rank - 2;
    if (nsp < 1 || nsp > 3)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "input '%s' has rank %d; 1-D to 3-D (rank 3 to 5) are supported",
                       xt->name, (int)xt->rank);
    if (wt->rank != xt->rank)
        return fe_fail(c, SYMC_ERR_FORMAT, "weight '%s' has rank %d, input rank %d", wt->name, (int)wt->rank,
                       (int)xt->rank);
    int64_t k[3], s[3], d[3], op[3], p[6];
    for (int i = 0; i < nsp; i++) {
        if (!sym_is_const(c->t, wt->dims[2 + i], &k[i]))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "weight '%s' kernel dim %d is not a constant", wt->name, 2 + i);
        s[i] = d[i] = 1, op[i] = 0, p[i] = p[nsp + i] = 0;
    }
    const int64_t *v;
    uint32_t nv;
    static const char *const names[4] = {"strides", "dilations", "output_padding", "pads"};
    int64_t *dst[4] = {s, d, op, p};
    for (int a = 0; a < 4; a++) {
        uint32_t want = (uint32_t)(a == 3 ? 2 * nsp : nsp);
        if (!fe_attr_ints(c, names[a], &v, &nv)) continue;
        if (nv != want)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries, needs %u", names[a], nv, want);
        memcpy(dst[a], v, nv * sizeof *v);
    }
    if (fe_attr_ints(c, "kernel_shape", &v, &nv)) {
        int same = nv == (uint32_t)nsp;
        for (uint32_t i = 0; same && i < nv; i++) same = v[i] == k[i];
        if (!same) return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape does not match weight '%s'", wt->name);
    }
    const char *ap = fe_attr_s(c, "auto_pad", "NOTSET");
    int upper = !strcmp(ap, "SAME_UPPER"), same = upper || !strcmp(ap, "SAME_LOWER");
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID"))
        return fe_fail(c, SYMC_ERR_FORMAT, "auto_pad = '%s' (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)", ap);
    if (!strcmp(ap, "VALID")) memset(p, 0, sizeof p);
    const int64_t *os = NULL;
    uint32_t nos = 0;
    if (fe_attr_ints(c, "output_shape", &os, &nos)) {
        if (nos != (uint32_t)nsp && nos != (uint32_t)nsp + 2)
            return fe_fail(c, SYMC_ERR_FORMAT, "output_shape has %u entries for %d spatial dims", nos, (int)nsp);
        os += nos - (uint32_t)nsp;
    }
    if (os || same) {
        for (int i = 0; i < nsp; i++) {
            sym_expr in = xt->dims[2 + i];
            sym_expr want = os ? sym_const(c->t, os[i]) : sym_scale(c->t, in, s[i]);
            sym_expr tot = sym_sub(
                c->t,
                sym_add_const(c->t, sym_scale(c->t, sym_add_const(c->t, in, -1), s[i]), op[i] + d[i] * (k[i] - 1) + 1),
                want);
            int64_t t;
            if (!sym_is_const(c->t, tot, &t))
                return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                               "the padding that output_shape needs along spatial dim %d (%s) depends on the input "
                               "size; symc takes constant pads only",
                               i, fe_txt(c, tot));
            int64_t half = t >= 0 ? t / 2 : -((-t + 1) / 2); /* floor */
            p[i] = upper ? half : t - half;
            p[nsp + i] = upper ? t - half : half;
        }
    }
    int64_t group = fe_attr_i(c, "group", 1);
    if (group < 1) return fe_fail(c, SYMC_ERR_FORMAT, "group = %" PRId64 " must be >= 1", group);
    ir_attr a[5] = {symc_attr_ints("strides", s, (uint32_t)nsp), symc_attr_ints("pads", p, 2 * (uint32_t)nsp),
                    symc_attr_ints("dilations", d, (uint32_t)nsp), symc_attr_int("group", group),
                    symc_attr_ints("output_padding", op, (uint32_t)nsp)};
    return fe_emit1(c, IR_OP_CONV_TRANSPOSE, in, n, a, 5, 0, &out);
}

/* The spatial attributes of a 3-D pool (rank-5 input): kernel_shape,
 * strides, dilations, pads (6 entries) and auto_pad, whose SAME padding
 * must come out constant. */
static symc_status read_window3(fe_ctx *c, uint32_t x, int kernel_given, int64_t *k, int64_t *s, int64_t *d,
                                int64_t *p) {
    static const char *const names[4] = {"kernel_shape", "strides", "dilations", "pads"};
    int64_t *dst[4] = {k, s, d, p};
    for (int i = 0; i < 3; i++) s[i] = d[i] = 1, p[i] = p[3 + i] = 0;
    for (int a = 0; a < 4; a++) {
        const int64_t *v;
        uint32_t n, want = a == 3 ? 6 : 3;
        if (!fe_attr_ints(c, names[a], &v, &n)) {
            if (a == 0 && !kernel_given) return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape is missing");
            continue;
        }
        if (n != want)
            return fe_fail(c, SYMC_ERR_FORMAT, "attribute '%s' has %u entries; 3-D windows take %u", names[a], n, want);
        if (a == 0 && kernel_given) { /* a convolution's kernel comes from its weight */
            if (memcmp(k, v, 3 * sizeof *v))
                return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape does not match the weight's kernel dims");
            continue;
        }
        memcpy(dst[a], v, n * sizeof *v);
    }
    const char *ap = fe_attr_s(c, "auto_pad", "NOTSET");
    if (!strcmp(ap, "NOTSET")) return SYMC_OK;
    if (!strcmp(ap, "VALID")) {
        memset(p, 0, 6 * sizeof *p);
        return SYMC_OK;
    }
    int upper = !strcmp(ap, "SAME_UPPER");
    if (!upper && strcmp(ap, "SAME_LOWER"))
        return fe_fail(c, SYMC_ERR_FORMAT, "auto_pad = '%s' (expected NOTSET, VALID, SAME_UPPER or SAME_LOWER)", ap);
    for (int i = 0; i < 3; i++) {
        int64_t in;
        if (!sym_is_const(c->t, T(c, x)->dims[2 + i], &in))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "auto_pad %s on the symbolic spatial dim %d (%s) of a 3-D pool is not supported", ap, i,
                           fe_txt(c, T(c, x)->dims[2 + i]));
        int64_t out = (in + s[i] - 1) / s[i], tot = (out - 1) * s[i] + d[i] * (k[i] - 1) + 1 - in;
        if (tot < 0) tot = 0;
        p[i] = upper ? tot / 2 : tot - tot / 2;
        p[3 + i] = tot - p[i];
    }
    return SYMC_OK;
}

/* MaxPool, AveragePool and LpPool (1-D to 3-D; 1-D runs as 2-D). LpPool is
 * (K * avg_pool(|x|^p))^(1/p) with the K-tap window counted whole
 * (count_include_pad), which is the sum of |x|^p over the window: exact as
 * long as no ceil_mode window is cut short, so ceil_mode is refused there. */
enum { POOL_AVG, POOL_MAX, POOL_LP };
static symc_status pool(fe_ctx *c, int kind) {
    static const char *const what[3] = {"average pooling", "max pooling", "Lp pooling"};
    symc_status st = fe_need_inputs(c, 1, 1);
    uint32_t x, out;
    window w;
    int is_max = kind == POOL_MAX, nsp = 2;
    int64_t kern[3], strides[3], dil[3], pads[6];
    if (!st) st = fe_in(c, 0, &x);
    if (st) return st;
    int indices = is_max && fe_has_out(c, 1);
    if (T(c, x)->rank == 5) {
        nsp = 3;
        w.one_d = 0, w.symbolic = 0;
        if ((st = read_window3(c, x, 0, kern, strides, dil, pads))) return st;
    } else {
        if ((st = need_4d(c, &x, what[kind], &w.one_d))) return st;
        const int64_t *ks;
        uint32_t nk;
        if (!fe_attr_ints(c, "kernel_shape", &ks, &nk)) return fe_fail(c, SYMC_ERR_FORMAT, "kernel_shape is missing");
        if (nk != 2u - w.one_d)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "kernel_shape has %u entries for a %d-D input", nk, 2 - w.one_d);
        w.kernel[0] = w.one_d ? 1 : ks[0];
        w.kernel[1] = ks[nk - 1];
        if ((st = read_window(c, x, &w))) return st;
        for (int i = 0; i < 2; i++)
            kern[i] = w.kernel[i], strides[i] = w.strides[i], dil[i] = w.dil[i], pads[i] = w.pads[i],
            pads[2 + i] = w.pads[2 + i];
    }
    int64_t cip = kind == POOL_LP ? 1 : fe_attr_i(c, "count_include_pad", 0), ceil_mode = fe_attr_i(c, "ceil_mode", 0);
    if (kind == POOL_LP && ceil_mode)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "LpPool with ceil_mode = 1 is not supported");
    if (!is_max && w.symbolic && !cip)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "auto_pad SAME with stride > 1 needs padding that depends on the input size (%s x %s), which "
                       "average pooling with count_include_pad=0 cannot take as an explicit pad; export with "
                       "explicit pads",
                       fe_txt(c, T(c, x)->dims[2]), fe_txt(c, T(c, x)->dims[3]));
    double p = (double)fe_attr_i(c, "p", 2);
    uint32_t e;
    if (kind == POOL_LP) {
        if (p < 1) return fe_fail(c, SYMC_ERR_FORMAT, "p = %g must be >= 1", p);
        if ((st = fe_emit_un(c, IR_OP_ABS, x, -1, &x)) || (st = fe_emit_scalar(c, T(c, x)->dtype, p, &e)) ||
            (st = fe_emit_bin(c, IR_OP_POW, x, e, -1, &x)))
            return st;
    }
    if ((st = pad_first(c, &x, &w, is_max ? -INFINITY : 0.0))) return st;
    if (nsp == 2)
        for (int i = 0; i < 4; i++) pads[i] = w.pads[i];
    ir_attr a[6];
    uint32_t na = 0;
    a[na++] = symc_attr_ints("kernel", kern, (uint32_t)nsp);
    a[na++] = symc_attr_ints("strides", strides, (uint32_t)nsp);
    a[na++] = symc_attr_ints("pads", pads, 2 * (uint32_t)nsp);
    a[na++] = symc_attr_int("ceil_mode", ceil_mode);
    a[na++] = symc_attr_ints("dilations", dil, (uint32_t)nsp);
    if (!is_max) a[na++] = symc_attr_int("count_include_pad", cip);
    if (indices) { /* the Indices output: the flat input index of each maximum */
        int64_t order = fe_attr_i(c, "storage_order", 0);
        if (w.symbolic)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the Indices output with auto_pad SAME over symbolic dims is not supported");
        if ((order != 0 && order != 1) || (order == 1 && nsp == 3))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "attribute 'storage_order' = %" PRId64 " is not supported here (0, or 1 for 1-D and 2-D)",
                           order);
        ir_attr ai[7];
        memcpy(ai, a, na * sizeof *a);
        ai[na] = symc_attr_int("storage_order", order);
        uint32_t ix;
        int64_t ax = 2;
        ir_attr sq = symc_attr_ints("axes", &ax, 1);
        if ((st = fe_emit1(c, IR_OP_MAX_POOL_INDICES, &x, 1, ai, na + 1, w.one_d ? -1 : 1, &ix)) ||
            (w.one_d && (st = fe_emit1(c, IR_OP_SQUEEZE, &ix, 1, &sq, 1, 1, &ix))))
            return st;
    }
    if (kind != POOL_LP) return emit_1d(c, is_max ? IR_OP_MAX_POOL2D : IR_OP_AVG_POOL2D, &x, 1, a, na, w.one_d);
    uint32_t y;
    double taps = 1;
    for (int i = 0; i < nsp; i++) taps *= (double)kern[i];
    if ((st = fe_emit1(c, IR_OP_AVG_POOL2D, &x, 1, a, na, -1, &y)) ||
        (st = fe_emit_scalar(c, T(c, x)->dtype, taps, &e)) || (st = fe_emit_bin(c, IR_OP_MUL, y, e, -1, &y)) ||
        (st = fe_emit_scalar(c, T(c, x)->dtype, 1.0 / p, &e)))
        return st;
    uint32_t in2[2] = {y, e};
    (void)out;
    return emit_1d(c, IR_OP_POW, in2, 2, NULL, 0, w.one_d);
}
static symc_status h_max_pool(fe_ctx *c) { return pool(c, POOL_MAX); }
static symc_status h_avg_pool(fe_ctx *c) { return pool(c, POOL_AVG); }
static symc_status h_lp_pool(fe_ctx *c) { return pool(c, POOL_LP); }

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_conv[] = {
    {"AveragePool", h_avg_pool}, {"Conv", h_conv},        {"ConvTranspose", h_conv_transpose}, {"Gemm", h_gemm},
    {"LpPool", h_lp_pool},       {"MaxPool", h_max_pool},
};
const uint32_t fe_onnx_n_ops_conv = sizeof fe_onnx_ops_conv / sizeof fe_onnx_ops_conv[0];
