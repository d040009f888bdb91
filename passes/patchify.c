/* Patch embeddings as one GEMM (pass_patchify).
 *
 * ViT, Swin and ConvNeXt start with a convolution whose kernel tiles the image: kernel (kh, kw)
 * = stride, no padding, no dilation, one group (16x16 on 3 channels in ViT-S). Each output pixel
 * is then the dot product of one patch of C * kh * kw input values with each filter, and no
 * input value is read twice: the convolution is a matmul of the image's patches by the filters.
 * A library convolution runs it far below a GEMM (cuDNN's heuristic choice took 0.28 ms of ViT-S's
 * 2.2 ms at batch 32 on an H200; the GEMM's work is a few microseconds) and its first call at a
 * new shape costs 130-330 us of host time. The pass rewrites
 *   y = conv2d(x [B, C, H, W], w [O, C, kh, kw], b [O]?)   (H = Ho * kh, W = Wo * kw, proven)
 * into
 *   p = reshape(transpose(reshape(x, [B, C, Ho, kh, Wo, kw]), (0, 2, 4, 1, 3, 5)),
 *               [B * Ho * Wo, C * kh * kw])                the patches, one row each
 *   g = matmul(p, w') [+ b]                                  w' [C * kh * kw, O]: w's rows, transposed
 *   y = transpose(reshape(g, [B, Ho, Wo, O]), (0, 3, 1, 2))  the conv's own result tensor
 * where w' is a new constant (w's data reordered once). When y is read only by a flatten of its
 * spatial dims, [B, O, Ho * Wo], read only by a transpose (0, 2, 1) (ViT's
 * x.flatten(2).transpose(1, 2)), that transpose's result is reshape(g, [B, Ho * Wo, O]) instead:
 * no transpose after the GEMM at all. Elsewhere the NCHW transpose meets the model's own NHWC
 * permute (ConvNeXt's and Swin's channels-last norms), which the layout pass cancels. When x is
 * itself a private transpose (0, 3, 1, 2) of an NHWC tensor (ConvNeXt's downsampling after its
 * channels-last norm), the patches are cut from that tensor: reshape to [B, Ho, kh, Wo, kw, C],
 * transpose (0, 1, 3, 2, 4, 5), one copy instead of two, rows of kw * C moved whole (the
 * weights' rows reordered to (kh, kw, C) to match).
 * Each output is the same sum of the same products as before, in another order: the reference
 * backend's double accumulation gives the same values up to that rounding. Only float tensors,
 * a constant 4-D weight, a bias of [O] or none, and kernels of at least 2x2 (1x1 convolutions are
 * GEMMs in the CUDA target already) are taken; anything else is left as it is.
 * SYMC_PATCHIFY=0 turns the pass off (for comparison). */
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"

/* the ints attribute `name` of n equals want (n_want entries); absent counts as dflt for all */
static int ints_are(const ir_node *n, const char *name, const int64_t *want, uint32_t n_want, int64_t dflt) {
    const ir_attr *a = ir_node_attr(n, name);
    if (!a) {
        for (uint32_t i = 0; i < n_want; i++)
            if (want[i] != dflt) return 0;
        return 1;
    }
    if (a->kind != IR_ATTR_INTS || a->n != n_want) return 0;
    for (uint32_t i = 0; i < n_want; i++)
        if (a->ints[i] != want[i]) return 0;
    return 1;
}

static int const_dim(const ir_module *m, sym_expr e, int64_t *v) {
    return e != SYM_NONE && sym_is_const(m->syms, e, v);
}

typedef struct patch_conv {
    uint32_t node, x, w, b, y; /* b: IR_NONE without a bias */
    int64_t o, c, kh, kw;
    uint32_t vit;  /* the transpose (0, 2, 1) after a flatten of y, or IR_NONE */
    uint32_t nhwc; /* x's NHWC source when x is its private transpose (0, 3, 1, 2), or IR_NONE */
} patch_conv;

/* conv node i as a patch embedding: 1 and *p filled when it qualifies */
static int as_patch_conv(const ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, patch_conv *p) {
    const ir_node *n = &m->nodes[i];
    if (n->op != IR_OP_CONV2D || n->n_in < 2 || n->n_out != 1) return 0;
    uint32_t x = n->in[0], w = ir_constant_source(m, n->in[1]), y = n->out[0];
    if (!uses[y] && !is_out[y]) return 0; /* dead: a conv this pass rewrote already */
    const ir_tensor *xt = &m->tensors[x], *yt = &m->tensors[y];
    symc_dtype dt = xt->dtype;
    if ((dt != SYMC_F32 && dt != SYMC_F16 && dt != SYMC_BF16) || xt->rank != 4 || yt->rank != 4 || yt->dtype != dt ||
        w == IR_NONE || m->tensors[w].rank != 4 || m->tensors[w].dtype != dt)
        return 0;
    const ir_tensor *wt = &m->tensors[w];
    int64_t o, c, kh, kw, xc;
    if (!const_dim(m, wt->dims[0], &o) || !const_dim(m, wt->dims[1], &c) || !const_dim(m, wt->dims[2], &kh) ||
        !const_dim(m, wt->dims[3], &kw) || !const_dim(m, xt->dims[1], &xc) || xc != c || kh * kw < 4 || o < 1)
        return 0;
    const int64_t strides[2] = {kh, kw}, zero[4] = {0, 0, 0, 0}, one[2] = {1, 1}, groups[1] = {1};
    const ir_attr *g = ir_node_attr(n, "group");
    if (!ints_are(n, "strides", strides, 2, 1) || !ints_are(n, "pads", zero, 4, 0) ||
        !ints_are(n, "dilations", one, 2, 1) || (g && (g->kind != IR_ATTR_INT || g->i != groups[0])))
        return 0;
    /* the kernel tiles the input exactly: H a multiple of kh (then Ho = H // kh), W of kw */
    sym_table *T = m->syms;
    if (sym_prove_divisible(T, xt->dims[2], kh) != SYM_TRUE || sym_prove_divisible(T, xt->dims[3], kw) != SYM_TRUE ||
        sym_prove_eq(T, yt->dims[2], sym_floordiv(T, xt->dims[2], sym_const(T, kh))) != SYM_TRUE ||
        sym_prove_eq(T, yt->dims[3], sym_floordiv(T, xt->dims[3], sym_const(T, kw))) != SYM_TRUE)
        return 0;
    uint32_t b = IR_NONE;
    if (n->n_in >= 3 && n->in[2] != IR_NONE) {
        int64_t bn;
        b = n->in[2];
        const ir_tensor *bt = &m->tensors[b];
        if (bt->rank != 1 || bt->dtype != dt || !const_dim(m, bt->dims[0], &bn) || bn != o) return 0;
    }
    *p = (patch_conv){i, x, w, b, y, o, c, kh, kw, IR_NONE, IR_NONE};
    /* a channels-last model's transpose to NCHW in front (ConvNeXt's downsampling): the patches are
     * cut from its input, one copy instead of two */
    const int64_t to_nchw[4] = {0, 3, 1, 2};
    uint32_t xp = xt->producer;
    if (xp != IR_NONE && pass_only_reader(m, uses, is_out, x) == i && m->nodes[xp].op == IR_OP_TRANSPOSE &&
        m->nodes[xp].n_in == 1 && ints_are(&m->nodes[xp], "perm", to_nchw, 4, -1))
        p->nhwc = m->nodes[xp].in[0];
    /* ViT's flatten(2).transpose(1, 2) after it */
    uint32_t f = pass_only_reader(m, uses, is_out, y);
    if (f != IR_NONE && (m->nodes[f].op == IR_OP_RESHAPE || m->nodes[f].op == IR_OP_FLATTEN) &&
        m->nodes[f].n_out == 1) {
        const ir_tensor *ft = &m->tensors[m->nodes[f].out[0]];
        uint32_t t = pass_only_reader(m, uses, is_out, m->nodes[f].out[0]);
        const int64_t perm[3] = {0, 2, 1};
        if (ft->rank == 3 && ft->dims[0] == yt->dims[0] && ft->dims[1] == yt->dims[1] &&
            sym_prove_eq(T, sym_mul(T, yt->dims[2], yt->dims[3]), ft->dims[2]) == SYM_TRUE && t != IR_NONE &&
            m->nodes[t].op == IR_OP_TRANSPOSE && m->nodes[t].n_out == 1 && ints_are(&m->nodes[t], "perm", perm, 3, -1))
            p->vit = t;
    }
    return 1;
}

/* w [O, C, kh, kw] as w' [C * kh * kw, O] (row (c * kh + i) * kw + j, column o; with hwc, row
 * (i * kw + j) * C + c: the patches of an NHWC source keep C innermost), in a new constant tensor
 * made by a new constant node (appended; *node) */
static symc_status patch_weight(ir_module *m, const patch_conv *p, int hwc, const char *base, uint32_t *t,
                                uint32_t *node, symc_error *err) {
    symc_dtype dt = m->tensors[p->w].dtype;
    size_t es = symc_dtype_size(dt);
    int64_t k = p->c * p->kh * p->kw;
    const uint8_t *src = m->constants[m->tensors[p->w].constant].data;
    uint8_t *data = malloc((size_t)(k * p->o) * es);
    if (!data) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reordering the weights of '%s'", base);
    for (int64_t o = 0; o < p->o; o++)
        for (int64_t r = 0; r < k; r++) { /* r = (c * kh + i) * kw + j: w's own order */
            const int64_t c = r / (p->kh * p->kw), i = r / p->kw % p->kh, j = r % p->kw;
            const int64_t row = hwc ? (i * p->kw + j) * p->c + c : r;
            memcpy(data + (size_t)(row * p->o + o) * es, src + (size_t)(o * k + r) * es, es);
        }
    sym_expr dims[2] = {sym_const(m->syms, k), sym_const(m->syms, p->o)};
    return pass_add_constant(m, "patchify", base, ".patch_weight", dt, 2, dims, data, (size_t)(k * p->o) * es, t, node,
                             err);
}

static symc_status patchify_one(ir_module *m, const patch_conv *p, symc_error *err) {
    sym_table *T = m->syms;
    /* read before anything is added (adding moves the module's arrays) */
    sym_expr B = m->tensors[p->x].dims[0], Ho = m->tensors[p->y].dims[2], Wo = m->tensors[p->y].dims[3];
    sym_expr C = sym_const(T, p->c), KH = sym_const(T, p->kh), KW = sym_const(T, p->kw), O = sym_const(T, p->o);
    sym_expr rows = sym_mul(T, B, sym_mul(T, Ho, Wo)), k = sym_const(T, p->c * p->kh * p->kw);
    uint32_t out = p->vit != IR_NONE ? m->nodes[p->vit].out[0] : p->y, last = p->vit != IR_NONE ? p->vit : p->node;
    sym_expr tokens = m->tensors[out].dims[1]; /* ViT's Ho * Wo as the model wrote it (its readers' dims use it) */
    char base[400];
    snprintf(base, sizeof base, "%s", m->nodes[p->node].name ? m->nodes[p->node].name : "conv");
    symc_status st = pass_retire(m, last, out, err);
    if (st) return st;
    uint32_t made[9], n_made = 0, wt, t6 = IR_NONE, tp = IR_NONE, tm = IR_NONE, g = IR_NONE, gb = IR_NONE;
    if ((st = patch_weight(m, p, p->nhwc != IR_NONE, base, &wt, &made[n_made++], err))) return st;
    /* [B, C, Ho, kh, Wo, kw] of x: the patches [B, Ho, Wo, C, kh, kw]; or [B, Ho, kh, Wo, kw, C] of its
     * NHWC source: the patches [B, Ho, Wo, kh, kw, C], rows of kw * C kept whole (the weights' row
     * order either way) */
    sym_expr d6[6] = {B, C, Ho, KH, Wo, KW}, dp[6] = {B, Ho, Wo, C, KH, KW}, dm[2] = {rows, k}, dg[2] = {rows, O};
    int64_t to_patches[6] = {0, 2, 4, 1, 3, 5}, to_nchw[4] = {0, 3, 1, 2};
    uint32_t src = p->x;
    if (p->nhwc != IR_NONE) {
        sym_expr n6[6] = {B, Ho, KH, Wo, KW, C}, np[6] = {B, Ho, Wo, KH, KW, C};
        int64_t from_nhwc[6] = {0, 1, 3, 2, 4, 5};
        memcpy(d6, n6, sizeof d6);
        memcpy(dp, np, sizeof dp);
        memcpy(to_patches, from_nhwc, sizeof to_patches);
        src = p->nhwc;
    }
    ir_attr a6 = {.name = "shape", .kind = IR_ATTR_DIMS, .n = 6, .dims = d6};
    ir_attr ap = {.name = "perm", .kind = IR_ATTR_INTS, .n = 6, .ints = to_patches};
    ir_attr am = {.name = "shape", .kind = IR_ATTR_DIMS, .n = 2, .dims = dm};
    if ((st = pass_add_step(m, "patchify", IR_OP_RESHAPE, base, ".tiles", &src, 1, 6, d6, &a6, &t6, &made[n_made++],
                            err)) ||
        (st = pass_add_step(m, "patchify", IR_OP_TRANSPOSE, base, ".patches", &t6, 1, 6, dp, &ap, &tp, &made[n_made++],
                            err)) ||
        (st = pass_add_step(m, "patchify", IR_OP_RESHAPE, base, ".patch_rows", &tp, 1, 2, dm, &am, &tm, &made[n_made++],
                            err)))
        return st;
    uint32_t mm_in[2] = {tm, wt};
    if ((st = pass_add_step(m, "patchify", IR_OP_MATMUL, base, ".patch_gemm", mm_in, 2, 2, dg, NULL, &g,
                            &made[n_made++], err)))
        return st;
    if (p->b != IR_NONE) {
        uint32_t add_in[2] = {g, p->b};
        if ((st = pass_add_step(m, "patchify", IR_OP_ADD, base, ".patch_bias", add_in, 2, 2, dg, NULL, &gb,
                                &made[n_made++], err)))
            return st;
        g = gb;
    }
    if (p->vit != IR_NONE) { /* [B, Ho * Wo, O]: the transpose's result, a view of the GEMM's */
        sym_expr dv[3] = {B, tokens, O};
        ir_attr av = {.name = "shape", .kind = IR_ATTR_DIMS, .n = 3, .dims = dv};
        if ((st = pass_add_step(m, "patchify", IR_OP_RESHAPE, base, ".tokens", &g, 1, 3, dv, &av, &out, &made[n_made++],
                                err)))
            return st;
    } else { /* NHWC, then the conv's own NCHW result */
        sym_expr dn[4] = {B, Ho, Wo, O};
        uint32_t nhwc = IR_NONE;
        ir_attr an = {.name = "shape", .kind = IR_ATTR_DIMS, .n = 4, .dims = dn};
        ir_attr ac = {.name = "perm", .kind = IR_ATTR_INTS, .n = 4, .ints = to_nchw};
        if ((st = pass_add_step(m, "patchify", IR_OP_RESHAPE, base, ".nhwc", &g, 1, 4, dn, &an, &nhwc, &made[n_made++],
                                err)) ||
            (st = pass_add_step(m, "patchify", IR_OP_TRANSPOSE, base, ".nchw", &nhwc, 1, 4, NULL, &ac, &out,
                                &made[n_made++], err)))
            return st;
    }
    return pass_place(m, made, n_made, p->node, err);
}

/* a patch convolution at node i rewritten (pass_rewrite_walk's step) */
static symc_status patchify_at(ir_module *m, const uint32_t *uses, const uint8_t *is_out, uint32_t i, int *rewrote,
                               symc_error *err) {
    patch_conv p;
    if (!as_patch_conv(m, uses, is_out, i, &p)) return SYMC_OK;
    *rewrote = 1;
    return patchify_one(m, &p, err);
}

symc_status pass_patchify(ir_module *m, symc_error *err) {
    if (pass_switched_off("SYMC_PATCHIFY")) return SYMC_OK;
    uint32_t n = 0;
    symc_status st = pass_rewrite_walk(m, "patchify", patchify_at, &n, err);
    if (!st && n) st = pass_remove_dead(m, NULL, err);
    return st;
}
