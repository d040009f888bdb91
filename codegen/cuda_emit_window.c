/* Window and contraction kernels the libraries do not cover: max/avg
 * pooling, direct convolution (asymmetric pads, f64), depthwise convolution
 * (faster than cuDNN's NCHW kernels; its own comment below), and a plain
 * matmul / gemm for dtypes cuBLASLt is not asked to handle (f64, integers).
 *
 * All are one thread per output element, the reference's loops with the
 * output coordinate recovered from the flat index: simple and correct for
 * every shape, and these are the rare cases (the common f32 convolutions
 * and matmuls go to cuDNN and cuBLASLt). Pooling follows the reference
 * exactly: padding never enters a max, an average divides by the elements
 * inside the input, or with count_include_pad by the window cut to the
 * padded input. Integer matmul accumulates in uint64 so it wraps like the
 * reference. */
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit.h"

/* ints attribute entry i, or dflt */
static int64_t attr_ints_at(const ir_node *n, const char *name, uint32_t i, int64_t dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    return a && a->kind == IR_ATTR_INTS && i < a->n ? a->ints[i] : dflt;
}

/* i -> (p = n*C + c plane, oi, oj) over an NCHW output */
static void nchw_coords(cg_kw *k, const ir_tensor *y) {
    char wo[48];
    snprintf(wo, sizeof wo, "%s", cg_kw_dim(k, y->dims[3]));
    cg_kw_body(k, "        const long long oj = i %% %s, t = i / %s;\n", wo, wo);
    const char *ho = cg_kw_dim(k, y->dims[2]);
    cg_kw_body(k, "        const long long oi = t %% %s, p = t / %s;\n", ho, ho);
}

symc_status cg_emit_pool(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *y = &c->m->tensors[n->out[0]];
    if (x->rank != 4 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "input '%s' must be a 4-D float tensor", x->name);
    int is_max = n->op == IR_OP_MAX_POOL2D;
    if (!is_max && (attr_ints_at(n, "dilations", 0, 1) != 1 || attr_ints_at(n, "dilations", 1, 1) != 1))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "average pooling with dilations has no CUDA kernel");
    int64_t kh = attr_ints_at(n, "kernel", 0, 1), kw = attr_ints_at(n, "kernel", 1, 1);
    int64_t sh = attr_ints_at(n, "strides", 0, 1), sw = attr_ints_at(n, "strides", 1, 1);
    int64_t pt = attr_ints_at(n, "pads", 0, 0), pl = attr_ints_at(n, "pads", 1, 0);
    int64_t pb = attr_ints_at(n, "pads", 2, 0), pr = attr_ints_at(n, "pads", 3, 0);
    int64_t dh = is_max ? attr_ints_at(n, "dilations", 0, 1) : 1, dw = is_max ? attr_ints_at(n, "dilations", 1, 1) : 1;
    const char *T = cg_ctype(x->dtype);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, y);
    char H[48], W[48];
    snprintf(H, sizeof H, "%s", cg_kw_dim(&k, x->dims[2]));
    snprintf(W, sizeof W, "%s", cg_kw_dim(&k, x->dims[3]));
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    nchw_coords(&k, y);
    cg_kw_body(&k, "        const %s* xp = %s + p * %s * %s;\n", cg_stype(x->dtype), xp, H, W);
    char ld[96], st_v[96];
    char xoff[96];
    snprintf(xoff, sizeof xoff, "yy * %s + xx", W);
    cg_load(ld, sizeof ld, x->dtype, "xp", xoff);
    if (is_max) {
        cg_kw_body(&k, "        %s mx = -(%s)__longlong_as_double(0x7ff0000000000000LL);\n", T, T);
        cg_kw_body(&k, "        for (long long r = 0; r < %lldLL; r++) {\n", (long long)kh);
        cg_kw_body(&k, "            const long long yy = oi * %lldLL - %lldLL + r * %lldLL;\n", (long long)sh,
                   (long long)pt, (long long)dh);
        cg_kw_body(&k, "            if (yy < 0 || yy >= %s) continue;\n", H);
        cg_kw_body(&k, "            for (long long s = 0; s < %lldLL; s++) {\n", (long long)kw);
        cg_kw_body(&k, "                const long long xx = oj * %lldLL - %lldLL + s * %lldLL;\n", (long long)sw,
                   (long long)pl, (long long)dw);
        cg_kw_body(&k, "                if (xx >= 0 && xx < %s) mx = sc_nanmax(mx, (%s)%s);\n", W, T, ld);
        cg_store(st_v, sizeof st_v, y->dtype, "mx");
        cg_kw_body(&k, "            }\n        }\n        %s[i] = %s;\n    }\n", yp, st_v);
    } else {
        int include_pad = cg_attr_int(n, "count_include_pad", 0) != 0;
        cg_kw_body(&k, "        const long long y0 = oi * %lldLL - %lldLL, x0 = oj * %lldLL - %lldLL;\n", (long long)sh,
                   (long long)pt, (long long)sw, (long long)pl);
        cg_kw_body(&k,
                   "        const long long y1 = min(y0 + %lldLL, %s + %lldLL), x1 = min(x0 + %lldLL, %s + %lldLL);\n",
                   (long long)kh, H, (long long)pb, (long long)kw, W, (long long)pr);
        cg_kw_body(&k, "        %s sum = 0;\n        long long count = 0;\n", T);
        cg_kw_body(&k, "        for (long long yy = max(y0, 0LL); yy < min(y1, %s); yy++)\n", H);
        cg_kw_body(&k,
                   "            for (long long xx = max(x0, 0LL); xx < min(x1, %s); xx++, count++) sum += (%s)%s;\n", W,
                   T, ld);
        char avg[96];
        snprintf(avg, sizeof avg, "sum / (%s)%s", T, include_pad ? "((y1 - y0) * (x1 - x0))" : "count");
        cg_store(st_v, sizeof st_v, y->dtype, avg);
        cg_kw_body(&k, "        %s[i] = %s;\n    }\n", yp, st_v);
    }
    char comment[256];
    snprintf(comment, sizeof comment, "%s: %s, one thread per output", ir_op_get(n->op)->name, n->name);
    symc_status st = cg_kw_finish(&k, comment, numel, 256, 256);
    cg_kw_free(&k);
    return st;
}

symc_status cg_emit_conv_direct(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *w = &c->m->tensors[n->in[1]], *y = &c->m->tensors[n->out[0]];
    if (x->rank != 4 || w->rank != 4 || !ir_dtype_is_float(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "x '%s' (%s) and w '%s' must be 4-D float tensors", x->name,
                       symc_dtype_name(x->dtype), w->name);
    int64_t sh = attr_ints_at(n, "strides", 0, 1), sw = attr_ints_at(n, "strides", 1, 1);
    int64_t pt = attr_ints_at(n, "pads", 0, 0), pl = attr_ints_at(n, "pads", 1, 0);
    int64_t dh = attr_ints_at(n, "dilations", 0, 1), dw = attr_ints_at(n, "dilations", 1, 1);
    int64_t group = cg_attr_int(n, "group", 1);
    const char *T = cg_ctype(x->dtype);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *wp = cg_kw_in(&k, n->in[1]), *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, y);
    char H[48], W[48], CI[48], CO[48], CG[48], KH[48], KW[48];
    snprintf(H, sizeof H, "%s", cg_kw_dim(&k, x->dims[2]));
    snprintf(W, sizeof W, "%s", cg_kw_dim(&k, x->dims[3]));
    snprintf(CI, sizeof CI, "%s", cg_kw_dim(&k, x->dims[1]));
    snprintf(CO, sizeof CO, "%s", cg_kw_dim(&k, w->dims[0]));
    snprintf(CG, sizeof CG, "%s", cg_kw_dim(&k, w->dims[1]));
    snprintf(KH, sizeof KH, "%s", cg_kw_dim(&k, w->dims[2]));
    snprintf(KW, sizeof KW, "%s", cg_kw_dim(&k, w->dims[3]));
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    nchw_coords(&k, y);
    cg_kw_body(&k, "        const long long o = p %% %s, nb = p / %s;\n", CO, CO);
    cg_kw_body(&k, "        const long long c0 = (o / (%s / %lldLL)) * %s; /* first input channel of o's group */\n",
               CO, (long long)group, CG);
    if (n->n_in > 2) {
        char bl[160];
        cg_load(bl, sizeof bl, c->m->tensors[n->in[2]].dtype, cg_kw_in(&k, n->in[2]), "o");
        cg_kw_body(&k, "        %s acc = (%s)%s;\n", T, T, bl);
    } else {
        cg_kw_body(&k, "        %s acc = 0;\n", T);
    }
    cg_kw_body(&k, "        for (long long q = 0; q < %s; q++)\n", CG);
    cg_kw_body(&k, "            for (long long r = 0; r < %s; r++) {\n", KH);
    cg_kw_body(&k, "                const long long yy = oi * %lldLL - %lldLL + r * %lldLL;\n", (long long)sh,
               (long long)pt, (long long)dh);
    cg_kw_body(&k, "                if (yy < 0 || yy >= %s) continue;\n", H);
    cg_kw_body(&k, "                for (long long s = 0; s < %s; s++) {\n", KW);
    cg_kw_body(&k, "                    const long long xx = oj * %lldLL - %lldLL + s * %lldLL;\n", (long long)sw,
               (long long)pl, (long long)dw);
    cg_kw_body(&k, "                    if (xx < 0 || xx >= %s) continue;\n", W);
    char xo[200], wo[200], xl[260], wl[260], sv[64];
    snprintf(xo, sizeof xo, "((nb * %s + c0 + q) * %s + yy) * %s + xx", CI, H, W);
    snprintf(wo, sizeof wo, "((o * %s + q) * %s + r) * %s + s", CG, KH, KW);
    cg_load(xl, sizeof xl, x->dtype, xp, xo);
    cg_load(wl, sizeof wl, w->dtype, wp, wo);
    cg_kw_body(&k, "                    acc += (%s)%s * (%s)%s;\n", T, xl, T, wl);
    cg_store(sv, sizeof sv, y->dtype, "acc");
    cg_kw_body(&k, "                }\n            }\n        %s[i] = %s;\n    }\n", yp, sv);
    char comment[256];
    snprintf(comment, sizeof comment, "conv2d (direct): %s, one thread per output", n->name);
    symc_status st = cg_kw_finish(&k, comment, numel, 256, 256);
    cg_kw_free(&k);
    return st;
}

/* matmul with NumPy batch broadcasting, or gemm with trans/alpha/beta/C */
symc_status cg_emit_matmul_generic(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *a = &c->m->tensors[n->in[0]], *b = &c->m->tensors[n->in[1]], *y = &c->m->tensors[n->out[0]];
    symc_dtype dt = y->dtype;
    int fl = ir_dtype_is_float(dt);
    const char *A = fl ? cg_ctype(dt) : "unsigned long long", *T = cg_ctype(dt);
    if (dt == SYMC_BOOL) return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "bool operands '%s'", a->name);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *ap = cg_kw_in(&k, n->in[0]), *bp = cg_kw_in(&k, n->in[1]), *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, y);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    char M[48], N[48], K[48];
    if (n->op == IR_OP_GEMM) {
        int ta = cg_attr_int(n, "trans_a", 0) != 0, tb = cg_attr_int(n, "trans_b", 0) != 0;
        snprintf(M, sizeof M, "%s", cg_kw_dim(&k, y->dims[0]));
        snprintf(N, sizeof N, "%s", cg_kw_dim(&k, y->dims[1]));
        snprintf(K, sizeof K, "%s", cg_kw_dim(&k, a->dims[ta ? 0 : 1]));
        cg_kw_body(&k, "        const long long m = i / %s, nn = i %% %s;\n        %s acc = 0;\n", N, N, A);
        char ai[128], bi[128];
        if (ta) snprintf(ai, sizeof ai, "q * %s + m", M);
        else snprintf(ai, sizeof ai, "m * %s + q", K);
        if (tb) snprintf(bi, sizeof bi, "nn * %s + q", K);
        else snprintf(bi, sizeof bi, "q * %s + nn", N);
        char al[200], bl[200];
        cg_load(al, sizeof al, a->dtype, ap, ai);
        cg_load(bl, sizeof bl, b->dtype, bp, bi);
        cg_kw_body(&k, "        for (long long q = 0; q < %s; q++) acc += (%s)%s * (%s)%s;\n", K, A, al, A, bl);
        char alpha[96], beta[96];
        cg_float_literal(alpha, sizeof alpha, cg_attr_float(n, "alpha", 1.0), dt);
        cg_float_literal(beta, sizeof beta, cg_attr_float(n, "beta", 1.0), dt);
        cg_kw_body(&k, "        %s v = %s * acc;\n", T, alpha);
        if (n->n_in > 2) {
            const ir_tensor *cc = &c->m->tensors[n->in[2]];
            cg_kw_bcast_offsets(&k, "i", y->dims, 2, 1, &cc, "oc");
            char cl[160];
            cg_load(cl, sizeof cl, cc->dtype, cg_kw_in(&k, n->in[2]), "oc0");
            cg_kw_body(&k, "        v += %s * (%s)%s;\n", beta, T, cl);
        }
        char sv[64];
        cg_store(sv, sizeof sv, dt, "v");
        cg_kw_body(&k, "        %s[i] = %s;\n    }\n", yp, sv);
    } else {
        int am = a->rank >= 2, bm = b->rank >= 2;
        snprintf(M, sizeof M, "%s", am ? cg_kw_dim(&k, a->dims[a->rank - 2]) : "1LL");
        snprintf(K, sizeof K, "%s", cg_kw_dim(&k, a->dims[a->rank - 1]));
        snprintf(N, sizeof N, "%s", bm ? cg_kw_dim(&k, b->dims[b->rank - 1]) : "1LL");
        int br = y->rank - am - bm;
        cg_kw_body(&k, "        const long long nn = i %% %s, m = (i / %s) %% %s, bi = i / (%s * %s);\n", N, N, M, N,
                   M);
        /* batch dims as tensors of their own, broadcast to the result's */
        ir_tensor ab = {0}, bb = {0};
        ab.rank = am ? a->rank - 2 : 0;
        bb.rank = bm ? b->rank - 2 : 0;
        memcpy(ab.dims, a->dims, (size_t)ab.rank * sizeof(sym_expr));
        memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(sym_expr));
        const ir_tensor *bt[2] = {&ab, &bb};
        cg_kw_bcast_offsets(&k, "bi", y->dims, br, 2, bt, "ob");
        cg_kw_body(&k, "        const %s* ar = %s + ob0 * %s * %s + m * %s;\n", cg_stype(dt), ap, M, K, K);
        cg_kw_body(&k, "        const %s* bc = %s + ob1 * %s * %s + nn;\n", cg_stype(dt), bp, K, N);
        cg_kw_body(&k, "        %s acc = 0;\n", A);
        char al[96], bl[96], bo[64], sv[96], cv[64];
        snprintf(bo, sizeof bo, "q * %s", N);
        cg_load(al, sizeof al, dt, "ar", "q");
        cg_load(bl, sizeof bl, dt, "bc", bo);
        cg_kw_body(&k, "        for (long long q = 0; q < %s; q++) acc += (%s)%s * (%s)%s;\n", K, A, al, A, bl);
        snprintf(cv, sizeof cv, "(%s)acc", T);
        cg_store(sv, sizeof sv, dt, cv);
        cg_kw_body(&k, "        %s[i] = %s;\n    }\n", yp, sv);
    }
    char comment[256];
    snprintf(comment, sizeof comment, "%s (plain, %s): %s, one thread per output", ir_op_get(n->op)->name,
             symc_dtype_name(dt), n->name);
    symc_status st = cg_kw_finish(&k, comment, numel, 256, 256);
    cg_kw_free(&k);
    return st;
}

/* ---- depthwise convolution ------------------------------------------------------------------ */
#define DW_TW 4     /* outputs of a row per thread */
#define DW_MAX_K 15 /* largest window side emitted unrolled */
#define DW_MAX_SPAN 48

/* constant value of dim d, or -1 */
static int64_t const_dim(const ir_module *m, sym_expr d) {
    int64_t v;
    return sym_is_const(m->syms, d, &v) ? v : -1;
}

int cg_conv_is_depthwise(const ir_module *m, uint32_t node) {
    const ir_node *n = &m->nodes[node];
    if (n->op != IR_OP_CONV2D || n->n_in < 2) return 0;
    const ir_tensor *x = &m->tensors[n->in[0]], *w = &m->tensors[n->in[1]], *y = &m->tensors[n->out[0]];
    if (x->rank != 4 || w->rank != 4 || y->rank != 4 || !ir_dtype_is_float(x->dtype) || x->dtype == SYMC_F64 ||
        w->dtype != x->dtype || y->dtype != x->dtype || (n->n_in > 2 && m->tensors[n->in[2]].dtype != x->dtype))
        return 0;
    int64_t ci = const_dim(m, x->dims[1]), co = const_dim(m, w->dims[0]), cg = const_dim(m, w->dims[1]);
    int64_t kh = const_dim(m, w->dims[2]), kw = const_dim(m, w->dims[3]), group = cg_attr_int(n, "group", 1);
    if (ci < 2 || co != ci || cg != 1 || group != ci || kh < 1 || kw < 1 || kh > DW_MAX_K || kw > DW_MAX_K) return 0;
    int64_t sw = attr_ints_at(n, "strides", 1, 1), dw = attr_ints_at(n, "dilations", 1, 1);
    int64_t sh = attr_ints_at(n, "strides", 0, 1), dh = attr_ints_at(n, "dilations", 0, 1);
    if (sh < 1 || sw < 1 || dh < 1 || dw < 1 || sh > 4 || sw > 4 || dh > 4 || dw > 4) return 0;
    return (DW_TW - 1) * sw + (kw - 1) * dw + 1 <= DW_MAX_SPAN;
}

/* Depthwise convolution (group = channels, one input channel per output
 * channel, a constant window): the common case cuDNN serves slowly in NCHW
 * (ConvNeXt's 7x7, MobileNet's and EfficientNet's 3x3/5x5: measured on the
 * H100 about 30x over the memory time in half storage). One thread computes
 * DW_TW consecutive outputs of a row: per window row it loads the input
 * span they share once into registers, then the unrolled taps reuse it, with
 * fp32 accumulators; the weights are read through the read-only cache (a
 * warp's threads mostly share a channel). Pads of any sides (the left and
 * top ones shift the window; out-of-range taps read zero). */
symc_status cg_emit_conv_depthwise(cg_cuda *c, uint32_t node) {
    const ir_module *m = c->m;
    const ir_node *n = &m->nodes[node];
    const ir_tensor *x = &m->tensors[n->in[0]], *w = &m->tensors[n->in[1]], *y = &m->tensors[n->out[0]];
    if (!cg_conv_is_depthwise(m, node))
        return cg_fail(c, node, SYMC_ERR_INTERNAL, "not a depthwise convolution the generated kernel takes");
    int64_t sh = attr_ints_at(n, "strides", 0, 1), sw = attr_ints_at(n, "strides", 1, 1);
    int64_t pt = attr_ints_at(n, "pads", 0, 0), pl = attr_ints_at(n, "pads", 1, 0);
    int64_t dh = attr_ints_at(n, "dilations", 0, 1), dw = attr_ints_at(n, "dilations", 1, 1);
    int64_t kh = const_dim(m, w->dims[2]), kw = const_dim(m, w->dims[3]);
    int64_t span = (DW_TW - 1) * sw + (kw - 1) * dw + 1;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *wp = cg_kw_in(&k, n->in[1]), *yp = cg_kw_out(&k, n->out[0]);
    const char *bp = n->n_in > 2 ? cg_kw_in(&k, n->in[2]) : NULL;
    char H[48], W[48], C[48], HO[48], WO[48];
    snprintf(H, sizeof H, "%s", cg_kw_dim(&k, x->dims[2]));
    snprintf(W, sizeof W, "%s", cg_kw_dim(&k, x->dims[3]));
    snprintf(C, sizeof C, "%s", cg_kw_dim(&k, x->dims[1]));
    snprintf(HO, sizeof HO, "%s", cg_kw_dim(&k, y->dims[2]));
    snprintf(WO, sizeof WO, "%s", cg_kw_dim(&k, y->dims[3]));
    /* work: N * C * HO * ceil(WO / DW_TW) */
    sym_table *S = m->syms;
    sym_expr tiles = sym_ceildiv(S, y->dims[3], sym_const(S, DW_TW));
    sym_expr work = sym_mul(S, sym_mul(S, sym_mul(S, y->dims[0], y->dims[1]), y->dims[2]), tiles);
    char WT[48];
    snprintf(WT, sizeof WT, "%s", cg_kw_dim(&k, tiles));
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, work));
    cg_kw_body(&k, "        const long long tj = i %% %s, t = i / %s;\n", WT, WT);
    cg_kw_body(&k, "        const long long oi = t %% %s, p = t / %s; /* p = n * C + channel */\n", HO, HO);
    cg_kw_body(&k, "        const long long ch = p %% %s, oj0 = tj * %d;\n", C, DW_TW);
    char bl[200] = "0.0f";
    if (bp) cg_load(bl, sizeof bl, m->tensors[n->in[2]].dtype, bp, "ch");
    cg_kw_body(&k, "        float acc[%d];\n#pragma unroll\n        for (int u = 0; u < %d; u++) acc[u] = %s;\n", DW_TW,
               DW_TW, bl);
    cg_kw_body(&k, "        const long long plane = p * %s * %s, x0 = oj0 * %lldLL - %lldLL;\n", H, W, (long long)sw,
               (long long)pl);
    cg_kw_body(&k, "#pragma unroll\n        for (int r = 0; r < %lld; r++) {\n", (long long)kh);
    cg_kw_body(&k, "            const long long yy = oi * %lldLL - %lldLL + r * %lldLL;\n", (long long)sh,
               (long long)pt, (long long)dh);
    cg_kw_body(&k, "            if (yy < 0 || yy >= %s) continue;\n", H);
    cg_kw_body(&k, "            const long long row = plane + yy * %s;\n", W);
    char xl[260], wl[260];
    cg_load(xl, sizeof xl, x->dtype, xp, "row + xx");
    cg_kw_body(&k, "            float v[%lld];\n#pragma unroll\n            for (int u = 0; u < %lld; u++) {\n",
               (long long)span, (long long)span);
    cg_kw_body(&k, "                const long long xx = x0 + u;\n");
    cg_kw_body(&k, "                v[u] = xx >= 0 && xx < %s ? (float)%s : 0.0f;\n            }\n", W, xl);
    char wi[96];
    snprintf(wi, sizeof wi, "(ch * %lldLL + r) * %lldLL + s", (long long)kh, (long long)kw);
    cg_load(wl, sizeof wl, w->dtype, wp, wi);
    cg_kw_body(&k, "#pragma unroll\n            for (int s = 0; s < %lld; s++) {\n", (long long)kw);
    cg_kw_body(&k, "                const float wv = (float)%s;\n", wl);
    cg_kw_body(&k,
               "#pragma unroll\n                for (int u = 0; u < %d; u++) acc[u] += v[u * %lld + s * %lld] * wv;\n",
               DW_TW, (long long)sw, (long long)dw);
    cg_kw_body(&k, "            }\n        }\n");
    char sv[64];
    cg_store(sv, sizeof sv, y->dtype, "acc[u]");
    cg_kw_body(&k, "        const long long out = (p * %s + oi) * %s + oj0;\n", HO, WO);
    cg_kw_body(&k, "#pragma unroll\n        for (int u = 0; u < %d; u++)\n", DW_TW);
    cg_kw_body(&k, "            if (oj0 + u < %s) %s[out + u] = %s;\n    }\n", WO, yp, sv);
    char comment[256];
    snprintf(comment, sizeof comment, "conv2d (depthwise %lldx%lld): %s, %d outputs of a row per thread", (long long)kh,
             (long long)kw, n->name, DW_TW);
    symc_status st = cg_kw_finish(&k, comment, work, 256, 256);
    cg_kw_free(&k);
    return st;
}

/* ---- depthwise convolution, channels-last ----------------------------------------------------- */
#define DWL_MAX_TAPS 121 /* window taps held in shared memory (11x11) */
#define DWL_TW 8         /* outputs of a row per thread where the span allows */
#define DWL_MAX_SPAN 24

int cg_conv_nhwc_ok(const ir_module *m, uint32_t node) {
    if (!cg_conv_is_depthwise(m, node)) return 0;
    const ir_tensor *w = &m->tensors[m->nodes[node].in[1]];
    return const_dim(m, w->dims[2]) * const_dim(m, w->dims[3]) <= DWL_MAX_TAPS;
}

/* The depthwise convolution of a channels-last region (the layout pass and IR_FUSE_LAYOUT):
 * it reads x = the NHWC tensor its input transpose reads and writes y = the NHWC result its
 * output transpose makes. Threads run along the channels, VC (2 when C is even) adjacent
 * channels each, so a warp's loads and stores are contiguous; each thread computes DWL_TW (8)
 * consecutive outputs of a row where their input span is short, else DW_TW as the NCHW kernel,
 * from the input span they share, a channel pair loaded as one word when x is aligned for it
 * (ConvNeXt-T's first 7x7 stage at 32x96x80x80 f16 on the H100: 0.195 ms with 4 outputs and
 * scalar loads, 0.123 ms this way).
 * A block covers LW lanes of channels by 256 / LW pixel tiles; it first copies its channels'
 * window weights into shared memory, tap-major, so a tap's weights are one conflict-free row
 * (in the ONNX layout [C, 1, KH, KW] a warp's weights would be KH * KW elements apart). */
symc_status cg_emit_conv_depthwise_nhwc(cg_cuda *c, uint32_t node, uint32_t xt, uint32_t yt) {
    const ir_module *m = c->m;
    const ir_node *n = &m->nodes[node];
    const ir_tensor *x = &m->tensors[xt], *w = &m->tensors[n->in[1]], *y = &m->tensors[yt];
    if (!cg_conv_nhwc_ok(m, node) || x->rank != 4 || y->rank != 4)
        return cg_fail(c, node, SYMC_ERR_INTERNAL, "not a depthwise convolution the channels-last kernel takes");
    int64_t sh = attr_ints_at(n, "strides", 0, 1), sw = attr_ints_at(n, "strides", 1, 1);
    int64_t pt = attr_ints_at(n, "pads", 0, 0), pl = attr_ints_at(n, "pads", 1, 0);
    int64_t dh = attr_ints_at(n, "dilations", 0, 1), dw = attr_ints_at(n, "dilations", 1, 1);
    int64_t kh = const_dim(m, w->dims[2]), kw = const_dim(m, w->dims[3]), C = const_dim(m, w->dims[0]);
    /* DWL_TW outputs of a row per thread where the span they read stays short (7x7 stride
     * 1: 14 inputs for 8 outputs), else DW_TW as the NCHW kernel */
    int tw = (DWL_TW - 1) * sw + (kw - 1) * dw + 1 <= DWL_MAX_SPAN ? DWL_TW : DW_TW;
    int64_t span = (tw - 1) * sw + (kw - 1) * dw + 1, taps = kh * kw;
    int vc = C % 2 == 0 ? 2 : 1;
    int64_t cv = C / vc, lw = 32;
    while (lw > 1 && cv % lw) lw /= 2;
    if (lw < 8) lw = 32; /* few channels or an odd count: idle lanes rather than tiny rows */
    int64_t rows = 256 / lw, cvb = (cv + lw - 1) / lw, lwvc = lw * vc;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, xt), *wp = cg_kw_in(&k, n->in[1]), *yp = cg_kw_out(&k, yt);
    const char *bp = n->n_in > 2 ? cg_kw_in(&k, n->in[2]) : NULL;
    char H[48], W[48], HO[48], WO[48], WT[48], NPT[48];
    snprintf(H, sizeof H, "%s", cg_kw_dim(&k, x->dims[1]));
    snprintf(W, sizeof W, "%s", cg_kw_dim(&k, x->dims[2]));
    snprintf(HO, sizeof HO, "%s", cg_kw_dim(&k, y->dims[1]));
    snprintf(WO, sizeof WO, "%s", cg_kw_dim(&k, y->dims[2]));
    sym_table *S = m->syms;
    sym_expr tiles = sym_ceildiv(S, y->dims[2], sym_const(S, tw));
    sym_expr npt = sym_mul(S, sym_mul(S, y->dims[0], y->dims[1]), tiles); /* pixel tiles */
    sym_expr blocks = sym_mul(S, sym_const(S, cvb), sym_ceildiv(S, npt, sym_const(S, rows)));
    snprintf(WT, sizeof WT, "%s", cg_kw_dim(&k, tiles));
    snprintf(NPT, sizeof NPT, "%s", cg_kw_dim(&k, npt));
    /* a channel pair loads as one word where x is a plain tensor of f16, bf16 or f32 */
    int pair = vc == 2 && strncmp(xp, "sc_reg<", 7) &&
        (x->dtype == SYMC_F16 || x->dtype == SYMC_BF16 || x->dtype == SYMC_F32);
    cg_kw_body(&k, "    __shared__ float ws[%lld];\n", (long long)(taps * lwvc));
    if (pair)
        cg_kw_body(&k, "    const bool pair_ok = ((unsigned long long)(%s) %% %dULL) == 0;\n", xp,
                   x->dtype == SYMC_F32 ? 8 : 4);
    cg_kw_body(&k, "    const int lane = threadIdx.x %% %lld, prow = threadIdx.x / %lld;\n", (long long)lw,
               (long long)lw);
    cg_kw_body(&k, "    SC_ROWS(b, %s) {\n", cg_kw_dim(&k, blocks));
    cg_kw_body(&k, "        const long long cb = b %% %lld, pg = b / %lld;\n", (long long)cvb, (long long)cvb);
    char wi[64], wl2[260];
    snprintf(wi, sizeof wi, "ch * %lldLL + tap", (long long)taps);
    cg_load(wl2, sizeof wl2, w->dtype, wp, wi);
    cg_kw_body(&k, "        __syncthreads();\n");
    cg_kw_body(&k, "        for (int j = threadIdx.x; j < %lld; j += blockDim.x) {\n", (long long)(taps * lwvc));
    cg_kw_body(&k, "            const long long tap = j / %lld, ch = cb * %lldLL + j %% %lld;\n", (long long)lwvc,
               (long long)lwvc, (long long)lwvc);
    cg_kw_body(&k, "            ws[j] = ch < %lldLL ? (float)%s : 0.0f;\n        }\n", (long long)C, wl2);
    cg_kw_body(&k, "        __syncthreads();\n");
    cg_kw_body(&k, "        const long long cvi = cb * %lldLL + lane, pti = pg * %lldLL + prow;\n", (long long)lw,
               (long long)rows);
    cg_kw_body(&k, "        if (cvi >= %lldLL || pti >= %s) continue;\n", (long long)cv, NPT);
    cg_kw_body(&k, "        const long long tj = pti %% %s, t = pti / %s;\n", WT, WT);
    cg_kw_body(&k, "        const long long oi = t %% %s, nb = t / %s, ch0 = cvi * %d, oj0 = tj * %d;\n", HO, HO, vc,
               tw);
    cg_kw_body(&k, "        float acc[%d][%d];\n", tw, vc);
    char bl[200] = "0.0f";
    if (bp) cg_load(bl, sizeof bl, m->tensors[n->in[2]].dtype, bp, "ch0 + q");
    cg_kw_body(&k, "#pragma unroll\n        for (int q = 0; q < %d; q++) {\n            const float bq = %s;\n", vc,
               bl);
    cg_kw_body(&k, "#pragma unroll\n            for (int u = 0; u < %d; u++) acc[u][q] = bq;\n        }\n", tw);
    cg_kw_body(&k, "        const long long x0 = oj0 * %lldLL - %lldLL;\n", (long long)sw, (long long)pl);
    cg_kw_body(&k, "#pragma unroll\n        for (int r = 0; r < %lld; r++) {\n", (long long)kh);
    cg_kw_body(&k, "            const long long yy = oi * %lldLL - %lldLL + r * %lldLL;\n", (long long)sh,
               (long long)pt, (long long)dh);
    cg_kw_body(&k, "            if (yy < 0 || yy >= %s) continue;\n", H);
    cg_kw_body(&k, "            const long long row = (nb * %s + yy) * %s * %lldLL + ch0;\n", H, W, (long long)C);
    char xi[64], xl2[260];
    snprintf(xi, sizeof xi, "row + xx * %lldLL + q", (long long)C);
    cg_load(xl2, sizeof xl2, x->dtype, xp, xi);
    cg_kw_body(&k, "            float v[%lld][%d];\n#pragma unroll\n            for (int u = 0; u < %lld; u++) {\n",
               (long long)span, vc, (long long)span);
    cg_kw_body(
        &k, "                const long long xx = x0 + u;\n                const bool in = xx >= 0 && xx < %s;\n", W);
    if (pair) {
        /* both channels in one 4-byte (half) or 8-byte (f32) load: ch0 and C are even,
         * so the pair is aligned wherever the tensor is (checked once: pair_ok) */
        char lo[96], hi[96];
        if (cg_is_half(x->dtype)) {
            const char *cv2 = x->dtype == SYMC_F16 ? "sc_h2f" : "sc_b2f";
            snprintf(lo, sizeof lo, "%s((unsigned short)(p2 & 0xffffu))", cv2);
            snprintf(hi, sizeof hi, "%s((unsigned short)(p2 >> 16))", cv2);
            cg_kw_body(&k,
                       "                if (pair_ok) {\n                    const unsigned int p2 = in ? "
                       "*(const unsigned int*)(%s + row + xx * %lldLL) : 0u;\n",
                       xp, (long long)C);
        } else {
            snprintf(lo, sizeof lo, "p2.x");
            snprintf(hi, sizeof hi, "p2.y");
            cg_kw_body(&k,
                       "                if (pair_ok) {\n                    const float2 p2 = in ? "
                       "*(const float2*)(%s + row + xx * %lldLL) : make_float2(0.0f, 0.0f);\n",
                       xp, (long long)C);
        }
        cg_kw_body(&k,
                   "                    v[u][0] = %s;\n                    v[u][1] = %s;\n                } else {\n",
                   lo, hi);
    }
    cg_kw_body(&k, "#pragma unroll\n                for (int q = 0; q < %d; q++) v[u][q] = in ? (float)%s : 0.0f;\n",
               vc, xl2);
    if (pair) cg_kw_body(&k, "                }\n");
    cg_kw_body(&k, "            }\n#pragma unroll\n            for (int s = 0; s < %lld; s++) {\n", (long long)kw);
    cg_kw_body(&k, "                const float* wr = ws + (r * %lld + s) * %lld + lane * %d;\n", (long long)kw,
               (long long)lwvc, vc);
    cg_kw_body(&k, "#pragma unroll\n                for (int q = 0; q < %d; q++) {\n", vc);
    cg_kw_body(&k, "                    const float wv = wr[q];\n");
    cg_kw_body(
        &k,
        "#pragma unroll\n                    for (int u = 0; u < %d; u++) acc[u][q] += v[u * %lld + s * %lld][q] * "
        "wv;\n",
        tw, (long long)sw, (long long)dw);
    cg_kw_body(&k, "                }\n            }\n        }\n");
    char sv[64];
    cg_store(sv, sizeof sv, y->dtype, "acc[u][q]");
    cg_kw_body(&k, "        const long long out = ((nb * %s + oi) * %s + oj0) * %lldLL + ch0;\n", HO, WO, (long long)C);
    cg_kw_body(&k, "#pragma unroll\n        for (int u = 0; u < %d; u++)\n", tw);
    cg_kw_body(&k, "            if (oj0 + u < %s)\n#pragma unroll\n", WO);
    cg_kw_body(&k, "                for (int q = 0; q < %d; q++) %s[out + u * %lldLL + q] = %s;\n    }\n", vc, yp,
               (long long)C, sv);
    char comment[256];
    snprintf(comment, sizeof comment,
             "conv2d (depthwise %lldx%lld, channels-last): %s, %d channels x %d outputs of a row per thread",
             (long long)kh, (long long)kw, n->name, vc, tw);
    symc_status st = cg_kw_finish(&k, comment, blocks, 1, 256);
    cg_kw_free(&k);
    return st;
}
