/* Data movement kernels: transpose, concat (in chunks of operands when they are
 * many: concat_chunks), slice, gather, gather_elements,
 * pad, tile, trilu, range, split, shape_of.
 *
 * Each is one thread per output element (split: per input element, so one
 * kernel fills every output) mapping its coordinate to an input offset,
 * the reference's own formulation, except a transpose that moves the last
 * axis. There one of the two sides would be read or written with a stride,
 * so when the permutation, after dropping axes of constant size 1 and
 * merging runs of axes that stay adjacent, is a batched 2-D transpose
 * [batch, A, B] -> [batch, B, A] (NCHW <-> NHWC, a matrix transpose, (0,2,1)),
 * it goes through shared memory: one block per square tile (32x32 elements,
 * 64x64 for 1- and 2-byte types), read along B and written along A, both
 * coalesced, the tile padded against bank conflicts, partial tiles guarded.
 * A permutation that keeps the innermost merged group innermost (Swin's window
 * partition, patchify's patches) copies rows of that group as 16-, 8- or
 * 4-byte vectors, one input offset a vector (rows_kept). Any other
 * permutation keeps the per-element kernel. Elements are copied in
 * their storage type, so every dtype moves alike. Symbolic attributes (slice
 * starts, pad amounts, range bounds, split sizes) arrive as slot parameters
 * and are clamped in the kernel exactly as the reference clamps them, since
 * their values are only known at run time. An out-of-range gather index,
 * which the reference refuses, reads element 0 of the axis (never out of
 * bounds) and is flagged with sc_report; the runtime turns the flag into an
 * error naming the node after the run. */
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit.h"

/* `long long c[rank]`: the coordinate of flat index i over dims */
static void coords(cg_kw *k, const ir_tensor *t, const char *idx) {
    cg_kw_body(k, "        long long c[%d];\n        {\n            long long r = %s;\n", t->rank > 0 ? t->rank : 1,
               idx);
    for (int d = t->rank - 1; d > 0; d--) {
        const char *dim = cg_kw_dim(k, t->dims[d]);
        cg_kw_body(k, "            c[%d] = r %% %s; r /= %s;\n", d, dim, dim);
    }
    if (t->rank > 0) cg_kw_body(k, "            c[0] = r;\n");
    cg_kw_body(k, "        }\n");
}

/* row-major stride of dim d of t, as text in the ring */
static const char *stride(cg_kw *k, const ir_tensor *t, int d) {
    return cg_kw_dim(k, cg_prod(k->c, t->dims, d + 1, t->rank));
}

static const ir_attr *attr(const ir_node *n, const char *name) { return ir_node_attr(n, name); }

static symc_status finish(cg_kw *k, const char *how, sym_expr work) {
    const ir_node *n = &k->c->m->nodes[k->node];
    char comment[256];
    snprintf(comment, sizeof comment, "%s: %s, %s", ir_op_get(n->op)->name, n->name, how);
    symc_status st = cg_kw_finish(k, comment, work, 256, 256);
    cg_kw_free(k);
    return st;
}

/* A permutation with the input's axes of constant size 1 dropped and runs of input axes that stay
 * adjacent in the output merged: g groups in output order, group i the kept input axes
 * start[i] .. start[i] + len[i] - 1 (kept axes renumbered 0..k-1) of product size[i]. */
typedef struct perm_groups {
    int g, k;
    int start[IR_MAX_RANK], len[IR_MAX_RANK];
    sym_expr size[IR_MAX_RANK];
} perm_groups;

/* 0 when perm is no permutation of x's axes or x has rank < 2 */
static int merge_perm(cg_cuda *c, const ir_tensor *x, const ir_attr *perm, perm_groups *pg) {
    const int r = x->rank;
    int seen[IR_MAX_RANK] = {0}, kept[IR_MAX_RANK], q[IR_MAX_RANK], k = 0;
    if (r < 2 || r > IR_MAX_RANK) return 0;
    for (int d = 0; d < r; d++) {
        int64_t p = perm->ints[d], v;
        if (p < 0 || p >= r || seen[p]) return 0;
        seen[p] = 1;
        kept[d] = !(sym_is_const(c->m->syms, x->dims[d], &v) && v == 1);
    }
    /* kept input axes renumbered 0..k-1, in output order */
    int rank_of[IR_MAX_RANK];
    for (int d = 0, j = 0; d < r; d++) rank_of[d] = kept[d] ? j++ : -1;
    for (int d = 0; d < r; d++)
        if (kept[perm->ints[d]]) q[k++] = rank_of[perm->ints[d]];
    /* runs of q that step by one are merged groups */
    int g = 0;
    for (int i = 0; i < k; i++) {
        if (i > 0 && q[i] == q[i - 1] + 1) pg->len[g - 1]++;
        else pg->start[g] = q[i], pg->len[g++] = 1;
    }
    pg->g = g;
    pg->k = k;
    for (int i = 0; i < g; i++) {
        pg->size[i] = sym_const(c->m->syms, 1);
        for (int d = 0; d < r; d++)
            if (kept[d] && rank_of[d] >= pg->start[i] && rank_of[d] < pg->start[i] + pg->len[i])
                pg->size[i] = sym_mul(c->m->syms, pg->size[i], x->dims[d]);
    }
    return 1;
}

/* The transpose as [nb, A, B] -> [nb, B, A] (sizes as expressions): 1 when the merged
 * permutation (merge_perm) is (1, 0) or (0, 2, 1) */
static int batched_2d(cg_cuda *c, const ir_tensor *x, const ir_attr *perm, sym_expr *nb, sym_expr *a, sym_expr *b) {
    perm_groups pg;
    if (!merge_perm(c, x, perm, &pg)) return 0;
    const int g = pg.g;
    int swap2 = g == 2 && pg.start[0] > pg.start[1];
    int swap3 = g == 3 && pg.start[0] == 0 && pg.start[1] > pg.start[2];
    if (!swap2 && !swap3) return 0;
    *nb = swap3 ? pg.size[0] : sym_const(c->m->syms, 1);
    *a = pg.size[g - 1]; /* the output's last group is the input's A */
    *b = pg.size[g - 2];
    return 1;
}

/* A transpose that keeps the input's innermost merged group innermost (Swin's window partition
 * (0, 1, 3, 2, 4, 5), patchify's patches, a (1, 0, 2)) moves whole rows of that group: the
 * elements copied as vectors of 16, 8 or 4 bytes (the widest that divides a row for every size
 * in range and exceeds the element), the input offset computed once a vector over the merged
 * groups. Pointers not aligned to the vector run the per-element loop (SC_LOOP over the elements).
 * 0 when it does not apply (the per-element kernel then runs alone). */
static int rows_kept(cg_cuda *c, const ir_tensor *x, const ir_attr *perm, perm_groups *pg, int *vbytes) {
    const size_t es = symc_dtype_size(x->dtype);
    if (!es || !merge_perm(c, x, perm, pg) || pg->start[pg->g - 1] + pg->len[pg->g - 1] != pg->k) return 0;
    for (int v = 16; v >= 4; v /= 2)
        if ((size_t)v > es && v % es == 0 &&
            sym_prove_divisible(c->m->syms, pg->size[pg->g - 1], v / (int64_t)es) == SYM_TRUE) {
            *vbytes = v;
            return 1;
        }
    return 0;
}

/* One block per TxT tile of one batch entry, loops grid-stride over the
 * tiles: tile[j][tx] = x[a0 + j][b0 + tx] (coalesced along B), then
 * y[b0 + j][a0 + tx] = tile[tx][j] (coalesced along A). The row pitch is
 * T elements plus 4 bytes (plus one element for 8-byte types), so the 32
 * lanes reading a column hit 32 different banks. The indices within a tile
 * are int; offsets into the tensors are int64. */
static symc_status transpose_tiled(cg_cuda *c, uint32_t node, sym_expr nb, sym_expr a, sym_expr b) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    sym_table *S = c->m->syms;
    const size_t es = symc_dtype_size(x->dtype);
    const int T = es <= 2 ? 64 : 32, pitch = T + (es < 4 ? (int)(4 / es) : 1), block = 256;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    char xp[16], yp[16], A[48], B[48], TA[48], TB[48];
    snprintf(xp, sizeof xp, "%s", cg_kw_in(&k, n->in[0]));
    snprintf(yp, sizeof yp, "%s", cg_kw_out(&k, n->out[0]));
    snprintf(A, sizeof A, "%s", cg_kw_dim(&k, a));
    snprintf(B, sizeof B, "%s", cg_kw_dim(&k, b));
    sym_expr ta = sym_ceildiv(S, a, sym_const(S, T)), tb = sym_ceildiv(S, b, sym_const(S, T));
    snprintf(TA, sizeof TA, "%s", cg_kw_dim(&k, ta));
    snprintf(TB, sizeof TB, "%s", cg_kw_dim(&k, tb));
    sym_expr tiles = sym_mul(S, nb, sym_mul(S, ta, tb));
    cg_kw_body(&k, "    __shared__ %s sc_tile[%d][%d];\n", cg_stype(x->dtype), T, pitch);
    cg_kw_body(&k, "    const int tx = threadIdx.x %% %d, ty = threadIdx.x / %d;\n", T, T);
    cg_kw_body(&k, "    SC_ROWS(blk, %s) {\n", cg_kw_dim(&k, tiles));
    cg_kw_body(&k, "        const long long rest = blk / %s, a0 = rest %% %s * %d, b0 = blk %% %s * %d;\n", TB, TA, T,
               TB, T);
    cg_kw_body(&k, "        const long long base = rest / %s * %s * %s;\n", TA, A, B);
    cg_kw_body(&k, "#pragma unroll\n        for (int j = ty; j < %d; j += %d)\n", T, block / T);
    cg_kw_body(&k,
               "            if (a0 + j < %s && b0 + tx < %s) sc_tile[j][tx] = %s[base + (a0 + j) * %s + b0 + tx];\n", A,
               B, xp, B);
    cg_kw_body(&k, "        __syncthreads();\n");
    cg_kw_body(&k, "#pragma unroll\n        for (int j = ty; j < %d; j += %d)\n", T, block / T);
    cg_kw_body(&k,
               "            if (b0 + j < %s && a0 + tx < %s) %s[base + (b0 + j) * %s + a0 + tx] = sc_tile[tx][j];\n", B,
               A, yp, A);
    cg_kw_body(&k, "        __syncthreads(); /* the next tile overwrites sc_tile */\n    }\n");
    char comment[256];
    snprintf(comment, sizeof comment,
             "transpose: %s, batched 2-D [nb, A, B] -> [nb, B, A] in %dx%d shared-memory tiles", n->name, T, T);
    symc_status st = cg_kw_finish(&k, comment, tiles, 1, (uint32_t)block);
    cg_kw_free(&k);
    return st;
}

static symc_status transpose_or_tile(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *y = &c->m->tensors[n->out[0]];
    const ir_attr *perm = attr(n, "perm");
    if (n->op == IR_OP_TRANSPOSE && (!perm || perm->n != (uint32_t)x->rank))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "'perm' must have %d entries", x->rank);
    sym_expr nb, a, b;
    if (n->op == IR_OP_TRANSPOSE && symc_dtype_size(x->dtype) > 0 && batched_2d(c, x, perm, &nb, &a, &b))
        return transpose_tiled(c, node, nb, a, b);
    perm_groups pg;
    int vb = 0;
    const int rows = n->op == IR_OP_TRANSPOSE && rows_kept(c, x, perm, &pg, &vb);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    char xp[16], yp[16];
    snprintf(xp, sizeof xp, "%s", cg_kw_in(&k, n->in[0]));
    snprintf(yp, sizeof yp, "%s", cg_kw_out(&k, n->out[0]));
    sym_expr numel = ir_tensor_numel(c->m, y), work = numel;
    char how[160] = "one thread per output";
    if (rows) {
        sym_table *S = c->m->syms;
        const int64_t lanes = vb / (int64_t)symc_dtype_size(x->dtype);
        const char *V = vb == 16 ? "uint4" : vb == 8 ? "uint2" : "unsigned";
        const sym_expr L = sym_const(S, lanes);
        work = sym_floordiv(S, numel, L);
        char nv[48];
        snprintf(nv, sizeof nv, "%s", cg_kw_dim(&k, work));
        cg_kw_body(&k,
                   "    if ((((unsigned long long)%s | (unsigned long long)%s) & %dull) == 0ull) {\n"
                   "    SC_LOOP(q, %s) {\n        long long r = q, off = 0;\n",
                   xp, yp, vb - 1, nv);
        /* groups innermost first: the last group's vectors, then each group's coordinate times its
         * input stride in vectors (the product of the groups inside it in the input) */
        for (int j = pg.g - 1; j >= 0; j--) {
            sym_expr stride = sym_const(S, 1);
            for (int i = 0; i < pg.g; i++)
                if (pg.start[i] > pg.start[j]) stride = sym_mul(S, stride, pg.size[i]);
            sym_expr extent = j == pg.g - 1 ? sym_floordiv(S, pg.size[j], L) : pg.size[j];
            sym_expr sv = j == pg.g - 1 ? sym_const(S, 1) : sym_floordiv(S, stride, L);
            char ext[48], str[48];
            snprintf(ext, sizeof ext, "%s", cg_kw_dim(&k, extent));
            snprintf(str, sizeof str, "%s", cg_kw_dim(&k, sv));
            if (j > 0) cg_kw_body(&k, "        off += r %% %s * %s; r /= %s;\n", ext, str, ext);
            else cg_kw_body(&k, "        off += r * %s;\n", str);
        }
        cg_kw_body(&k, "        reinterpret_cast<%s*>(%s)[q] = reinterpret_cast<const %s*>(%s)[off];\n    }\n", V, yp,
                   V, xp);
        cg_kw_body(&k, "    } else {\n");
        snprintf(how, sizeof how,
                 "innermost of %d merged groups kept: rows as %d-byte vectors (elements where unaligned)", pg.g, vb);
    }
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    coords(&k, y, "i");
    cg_kw_body(&k, "        long long off = 0;\n");
    for (int d = 0; d < y->rank; d++) {
        if (n->op == IR_OP_TRANSPOSE) /* output axis d walks input axis perm[d] */
            cg_kw_body(&k, "        off += c[%d] * %s;\n", d, stride(&k, x, (int)perm->ints[d]));
        else /* tile: every repeat reads the input again */
            cg_kw_body(&k, "        off += (c[%d] %% %s) * %s;\n", d, cg_kw_dim(&k, x->dims[d]), stride(&k, x, d));
    }
    cg_kw_body(&k, "        %s[i] = %s[off];\n    }\n", yp, xp);
    if (rows) cg_kw_body(&k, "    }\n");
    return finish(&k, how, work);
}

static symc_status slice(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *y = &c->m->tensors[n->out[0]];
    const ir_attr *starts = attr(n, "starts"), *axes = attr(n, "axes"), *steps = attr(n, "steps");
    if (!starts) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "missing 'starts'");
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    int64_t step[IR_MAX_RANK];
    int sliced[IR_MAX_RANK] = {0};
    for (int d = 0; d < x->rank; d++) step[d] = 1;
    /* first index per sliced axis, clamped like the reference */
    for (uint32_t i = 0; i < starts->n; i++) {
        int a = axes && i < axes->n ? cg_norm_axis(axes->ints[i], x->rank) : (int)i;
        if (a < 0 || a >= x->rank) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "slice axis out of range");
        step[a] = steps && i < steps->n ? steps->ints[i] : 1;
        if (step[a] == 0) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "step 0 for axis %d", a);
        sliced[a] = 1;
        char dim[48];
        snprintf(dim, sizeof dim, "%s", cg_kw_dim(&k, x->dims[a]));
        cg_kw_body(&k, "    long long f%d = %s;\n    if (f%d < 0) f%d += %s;\n", a, cg_kw_dim(&k, starts->dims[i]), a,
                   a, dim);
        if (step[a] > 0) cg_kw_body(&k, "    f%d = f%d < 0 ? 0 : f%d > %s ? %s : f%d;\n", a, a, a, dim, dim, a);
        else cg_kw_body(&k, "    f%d = f%d < 0 ? 0 : f%d > %s - 1 ? %s - 1 : f%d;\n", a, a, a, dim, dim, a);
    }
    sym_expr numel = ir_tensor_numel(c->m, y), work = numel;
    /* One axis a sliced with step 1 (Llama's rotate_half: x[..., :64], x[..., 64:]): the output is
     * rows of y[a:] copied from rows of x[a:] at f * inner, as 16-byte vectors when both row
     * lengths are whole vectors for every binding and, at run time, the pointers and the start's
     * offset are aligned (else the element loop below). */
    int one = -1, n_sliced = 0;
    for (int d = 0; d < x->rank; d++)
        if (sliced[d]) n_sliced++, one = d;
    sym_table *T = c->m->syms;
    const size_t es = symc_dtype_size(x->dtype);
    const int64_t V = es && es <= 8 && 16 % es == 0 ? (int64_t)(16 / es) : 0;
    int vec = n_sliced == 1 && step[one] == 1 && V > 1;
    sym_expr inner = vec ? cg_prod(c, x->dims, one + 1, x->rank) : sym_const(T, 1);
    sym_expr rowo = vec ? sym_mul(T, y->dims[one], inner) : inner, rowi = vec ? sym_mul(T, x->dims[one], inner) : inner;
    vec = vec && sym_prove_divisible(T, rowo, V) == SYM_TRUE && sym_prove_divisible(T, rowi, V) == SYM_TRUE;
    if (vec) {
        const sym_expr sv = sym_const(T, V);
        work = sym_floordiv(T, numel, sv);
        char ro[48], ri[48], in[48];
        snprintf(ro, sizeof ro, "%s", cg_kw_dim(&k, sym_floordiv(T, rowo, sv)));
        snprintf(ri, sizeof ri, "%s", cg_kw_dim(&k, sym_floordiv(T, rowi, sv)));
        snprintf(in, sizeof in, "%s", cg_kw_dim(&k, inner));
        cg_kw_body(
            &k,
            "    if ((((unsigned long long)%s | (unsigned long long)%s) & 15ull) == 0ull && f%d * %s %% %lld == 0) {\n"
            "    const long long fv = f%d * %s / %lld; /* the start, in vectors */\n"
            "    SC_LOOP(q, %s) {\n"
            "        const long long o = q / %s, j = q - o * %s;\n"
            "        reinterpret_cast<uint4 *>(%s)[q] = reinterpret_cast<const uint4 *>(%s)[o * %s + fv + j];\n"
            "    }\n"
            "    return;\n"
            "    }\n",
            xp, yp, one, in, (long long)V, one, in, (long long)V, cg_kw_dim(&k, work), ro, ro, yp, xp, ri);
    }
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    coords(&k, y, "i");
    cg_kw_body(&k, "        long long off = 0;\n");
    for (int d = 0; d < x->rank; d++) {
        if (sliced[d])
            cg_kw_body(&k, "        off += (f%d + c[%d] * %lldLL) * %s;\n", d, d, (long long)step[d], stride(&k, x, d));
        else cg_kw_body(&k, "        off += c[%d] * %s;\n", d, stride(&k, x, d));
    }
    cg_kw_body(&k, "        %s[i] = %s[off];\n    }\n", yp, xp);
    return finish(
        &k, vec ? "rows as 16-byte vectors when aligned, else one thread per output" : "one thread per output", work);
}

/* A concat of more operands than one kernel's parameters take (torchvision's detection heads concatenate
 * one tensor per class: 90): one input-driven kernel per chunk of CONCAT_CHUNK operands, each writing its
 * operands' blocks of the axis (three parameters an operand: its pointer, axis length and size). */
#define CONCAT_CHUNK 24
static symc_status concat_chunks(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *whole = &c->m->tensors[n->out[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", 0), whole->rank);
    if (axis < 0) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "axis out of range");
    sym_table *t = c->m->syms;
    sym_expr before = sym_const(t, 0);
    for (uint32_t p0 = 0; p0 < n->n_in; p0 += CONCAT_CHUNK) {
        uint32_t p1 = p0 + CONCAT_CHUNK < n->n_in ? p0 + CONCAT_CHUNK : n->n_in;
        cg_kw k;
        cg_kw_begin(&k, c, node);
        char yp[16], inner[48], total[48], start[48];
        snprintf(yp, sizeof yp, "%s", cg_kw_out(&k, n->out[0]));
        snprintf(inner, sizeof inner, "%s", cg_kw_dim(&k, cg_prod(c, whole->dims, axis + 1, whole->rank)));
        snprintf(total, sizeof total, "%s", cg_kw_dim(&k, whole->dims[axis]));
        snprintf(start, sizeof start, "%s", cg_kw_dim(&k, before));
        sym_expr work = sym_const(t, 0);
        for (uint32_t p = p0; p < p1; p++) work = sym_add(t, work, ir_tensor_numel(c->m, &c->m->tensors[n->in[p]]));
        cg_kw_body(&k, "    SC_LOOP(i, %s) {\n        long long r = i, a0 = %s;\n", cg_kw_dim(&k, work), start);
        for (uint32_t p = p0; p < p1; p++) {
            const ir_tensor *x = &c->m->tensors[n->in[p]];
            char len[48], cnt[48];
            snprintf(len, sizeof len, "%s", cg_kw_dim(&k, x->dims[axis]));
            snprintf(cnt, sizeof cnt, "%s", cg_kw_dim(&k, ir_tensor_numel(c->m, x)));
            const char *xp = cg_kw_in(&k, n->in[p]);
            cg_kw_body(&k,
                       "        if (r < %s) { const long long j = r %% %s, a = (r / %s) %% %s, o = r / (%s * %s);\n"
                       "            %s[(o * %s + a0 + a) * %s + j] = %s[r]; continue; }\n"
                       "        r -= %s; a0 += %s;\n",
                       cnt, inner, inner, len, inner, len, yp, total, inner, xp, cnt, len);
            before = sym_add(t, before, x->dims[axis]);
        }
        cg_kw_body(&k, "    }\n");
        symc_status st = finish(&k, "one thread per input element, a chunk of the operands", work);
        if (st) return st;
    }
    return SYMC_OK;
}

/* concat (output-driven) and split (input-driven): the axis is cut into
 * consecutive blocks, one per operand */
static symc_status concat_split(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    int concat = n->op == IR_OP_CONCAT;
    if (concat && n->n_in > CONCAT_CHUNK) return concat_chunks(c, node);
    const ir_tensor *whole = &c->m->tensors[concat ? n->out[0] : n->in[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", 0), whole->rank);
    if (axis < 0) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "axis out of range");
    uint32_t parts = concat ? n->n_in : n->n_out;
    const uint32_t *pt = concat ? n->in : n->out;
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *wp = concat ? cg_kw_out(&k, n->out[0]) : cg_kw_in(&k, n->in[0]);
    char wname[16], inner[48], total[48];
    snprintf(wname, sizeof wname, "%s", wp);
    snprintf(inner, sizeof inner, "%s", cg_kw_dim(&k, cg_prod(c, whole->dims, axis + 1, whole->rank)));
    snprintf(total, sizeof total, "%s", cg_kw_dim(&k, whole->dims[axis]));
    sym_expr numel = ir_tensor_numel(c->m, whole);
    /* 16 bytes a thread when every part's block of a row (its length on the axis times the inner
     * size) is a whole number of 16-byte vectors for every binding, and the pointers are aligned
     * (checked at run time; else the element loop below) */
    sym_table *T = c->m->syms;
    const size_t es = symc_dtype_size(whole->dtype);
    const int64_t V = es && es <= 16 && 16 % es == 0 ? (int64_t)(16 / es) : 0;
    const sym_expr sv = sym_const(T, V ? V : 1), row = cg_prod(c, whole->dims, axis, whole->rank);
    int vec = V > 1 && sym_prove_divisible(T, row, V) == SYM_TRUE;
    for (uint32_t p = 0; p < parts && vec; p++)
        vec = sym_prove_divisible(T, cg_prod(c, c->m->tensors[pt[p]].dims, axis, whole->rank), V) == SYM_TRUE;
    const sym_expr work = vec ? sym_floordiv(T, numel, sv) : numel;
    if (vec) {
        cg_kw_body(&k, "    if ((((unsigned long long)%s", wname);
        for (uint32_t p = 0; p < parts; p++)
            cg_kw_body(&k, " | (unsigned long long)%s", concat ? cg_kw_in(&k, pt[p]) : cg_kw_out(&k, pt[p]));
        char rowu[48];
        snprintf(rowu, sizeof rowu, "%s", cg_kw_dim(&k, sym_floordiv(T, row, sv)));
        cg_kw_body(&k,
                   ") & 15ull) == 0ull) { /* 16-byte vectors, a row's %s of them */\n"
                   "    SC_LOOP(i, %s) {\n"
                   "        const long long o = i / %s;\n"
                   "        long long a = i %% %s;\n",
                   rowu, cg_kw_dim(&k, work), rowu, rowu);
        for (uint32_t p = 0; p < parts; p++) {
            char len[48];
            snprintf(len, sizeof len, "%s",
                     cg_kw_dim(&k, sym_floordiv(T, cg_prod(c, c->m->tensors[pt[p]].dims, axis, whole->rank), sv)));
            const char *tp = concat ? cg_kw_in(&k, pt[p]) : cg_kw_out(&k, pt[p]);
            if (concat)
                cg_kw_body(&k,
                           "        if (a < %s) { reinterpret_cast<uint4 *>(%s)[i] = "
                           "reinterpret_cast<const uint4 *>(%s)[o * %s + a]; continue; }\n",
                           len, wname, tp, len);
            else
                cg_kw_body(&k,
                           "        if (a < %s) { reinterpret_cast<uint4 *>(%s)[o * %s + a] = "
                           "reinterpret_cast<const uint4 *>(%s)[i]; continue; }\n",
                           len, tp, len, wname);
            cg_kw_body(&k, "        a -= %s;\n", len);
        }
        cg_kw_body(&k, "    }\n    return;\n    }\n");
    }
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    cg_kw_body(&k, "        const long long j = i %% %s, o = i / (%s * %s);\n        long long a = (i / %s) %% %s;\n",
               inner, inner, total, inner, total);
    for (uint32_t p = 0; p < parts; p++) {
        const ir_tensor *t = &c->m->tensors[pt[p]];
        char len[48];
        snprintf(len, sizeof len, "%s", cg_kw_dim(&k, t->dims[axis]));
        const char *tp = concat ? cg_kw_in(&k, pt[p]) : cg_kw_out(&k, pt[p]);
        if (concat)
            cg_kw_body(&k, "        if (a < %s) { %s[i] = %s[(o * %s + a) * %s + j]; continue; }\n", len, wname, tp,
                       len, inner);
        else
            cg_kw_body(&k, "        if (a < %s) { %s[(o * %s + a) * %s + j] = %s[i]; continue; }\n", len, tp, len,
                       inner, wname);
        cg_kw_body(&k, "        a -= %s;\n", len);
    }
    cg_kw_body(&k, "    }\n");
    return finish(&k,
                  vec          ? (concat ? "16 bytes a thread when aligned, else one thread per output"
                                         : "16 bytes a thread when aligned, else one thread per input element")
                      : concat ? "one thread per output"
                               : "one thread per input element",
                  work);
}

static symc_status gather(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *idx = &c->m->tensors[n->in[1]], *y = &c->m->tensors[n->out[0]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", 0), x->rank);
    if (axis < 0 || (idx->dtype != SYMC_I64 && idx->dtype != SYMC_I32))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "indices '%s' must be i32/i64 and the axis in range", idx->name);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *ip = cg_kw_in(&k, n->in[1]), *yp = cg_kw_out(&k, n->out[0]);
    char inner[48], nidx[48], dim[48];
    snprintf(inner, sizeof inner, "%s", cg_kw_dim(&k, cg_prod(c, x->dims, axis + 1, x->rank)));
    snprintf(nidx, sizeof nidx, "%s", cg_kw_dim(&k, ir_tensor_numel(c->m, idx)));
    snprintf(dim, sizeof dim, "%s", cg_kw_dim(&k, x->dims[axis]));
    sym_expr numel = ir_tensor_numel(c->m, y), work = numel;
    /* a row gather (axis 0: an embedding lookup; another axis: rows after it, e.g. roll-gather's
     * cyclic shifts) of rows of whole 16-byte chunks: a thread copies a chunk (one index lookup and
     * one uint4 each, where one a element cost the lookup and three 64-bit divisions, one by the
     * index count), when both pointers are 16-byte aligned */
    int64_t in_c, es = (int64_t)symc_dtype_size(x->dtype), chunks = 0;
    if (es > 0 && sym_is_const(c->m->syms, cg_prod(c, x->dims, axis + 1, x->rank), &in_c) && in_c > 0 &&
        (in_c * es) % 16 == 0) {
        chunks = in_c * es / 16;
        work = sym_mul(c->m->syms, ir_tensor_numel(c->m, idx), sym_const(c->m->syms, chunks));
        if (axis > 0) work = sym_mul(c->m->syms, work, cg_prod(c, x->dims, 0, axis));
        cg_kw_body(&k,
                   "    if ((((unsigned long long)%s | (unsigned long long)%s) & 15ull) == 0ull) {\n"
                   "    SC_LOOP(i, %s) {\n",
                   xp, yp, cg_kw_dim(&k, work));
        if (axis == 0)
            cg_kw_body(&k, "        const long long q = i / %lldLL, ch = i - q * %lldLL, o = 0;\n", (long long)chunks,
                       (long long)chunks);
        else /* o: the outer row, q: the index, ch: the chunk */
            cg_kw_body(&k, "        const long long r = i / %lldLL, ch = i - r * %lldLL, q = r %% %s, o = r / %s;\n",
                       (long long)chunks, (long long)chunks, nidx, nidx);
        cg_kw_body(
            &k,
            "        long long v = %s[q];\n        if (v < 0) v += %s;\n"
            "        if (v < 0 || v >= %s) { sc_report(1u, %uu); v = 0; } /* reported after the run */\n"
            "        reinterpret_cast<uint4 *>(%s)[i] = reinterpret_cast<const uint4 *>(%s)[(o * %s + v) * %lldLL + ch];\n"
            "    }\n"
            "    return;\n"
            "    }\n",
            ip, dim, dim, node, yp, xp, dim, (long long)chunks);
    }
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    if (axis == 0) /* no outer dims: the row is i / inner */
        cg_kw_body(&k, "        const long long j = i %% %s, q = i / %s, o = 0;\n", inner, inner);
    else
        cg_kw_body(&k, "        const long long j = i %% %s, q = (i / %s) %% %s, o = i / (%s * %s);\n", inner, inner,
                   nidx, inner, nidx);
    cg_kw_body(&k, "        long long v = %s[q];\n        if (v < 0) v += %s;\n", ip, dim);
    cg_kw_body(&k, "        if (v < 0 || v >= %s) { sc_report(1u, %uu); v = 0; } /* reported after the run */\n", dim,
               node);
    cg_kw_body(&k, "        %s[i] = %s[(o * %s + v) * %s + j];\n    }\n", yp, xp, dim, inner);
    return finish(&k,
                  chunks ? "a 16-byte chunk of a row a thread (aligned), else one thread per output"
                         : "one thread per output",
                  work);
}

static symc_status gather_elements(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *idx = &c->m->tensors[n->in[1]];
    int axis = cg_norm_axis(cg_attr_int(n, "axis", 0), x->rank);
    if (axis < 0 || idx->rank != x->rank || (idx->dtype != SYMC_I64 && idx->dtype != SYMC_I32))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "indices '%s' must be i32/i64 of the data's rank", idx->name);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *ip = cg_kw_in(&k, n->in[1]), *yp = cg_kw_out(&k, n->out[0]);
    char dim[48];
    snprintf(dim, sizeof dim, "%s", cg_kw_dim(&k, x->dims[axis]));
    sym_expr numel = ir_tensor_numel(c->m, idx);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    coords(&k, idx, "i");
    cg_kw_body(&k, "        long long v = %s[i];\n        if (v < 0) v += %s;\n", ip, dim);
    cg_kw_body(&k, "        if (v < 0 || v >= %s) { sc_report(1u, %uu); v = 0; } /* reported after the run */\n", dim,
               node);
    cg_kw_body(&k, "        c[%d] = v;\n        long long off = 0;\n", axis);
    for (int d = 0; d < x->rank; d++) cg_kw_body(&k, "        off += c[%d] * %s;\n", d, stride(&k, x, d));
    cg_kw_body(&k, "        %s[i] = %s[off];\n    }\n", yp, xp);
    return finish(&k, "one thread per output", numel);
}

static symc_status pad(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]], *y = &c->m->tensors[n->out[0]];
    const ir_attr *pads = attr(n, "pads");
    const char *mode = cg_attr_str(n, "mode", "constant");
    int constant = !strcmp(mode, "constant"), edge = !strcmp(mode, "edge"), reflect = !strcmp(mode, "reflect");
    if (!pads || pads->n != 2u * (uint32_t)x->rank || !(constant || edge || reflect))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG,
                       "'pads' must have 2 x rank entries and mode '%s' be "
                       "constant, reflect or edge",
                       mode);
    double value = cg_attr_float(n, "value", 0.0);
    char lit[128], f[96];
    /* the value as the reference stores it: to an integer dtype through the
     * truncating, saturating conversion (cvt.rzi saturates, NaN -> 0) */
    cg_float_literal(f, sizeof f, value, ir_dtype_is_float(x->dtype) ? x->dtype : SYMC_F64);
    if (x->dtype == SYMC_BOOL) snprintf(lit, sizeof lit, "(unsigned char)%d", value != 0.0);
    else if (cg_is_half(x->dtype)) cg_store(lit, sizeof lit, x->dtype, f); /* the value's half bits */
    else snprintf(lit, sizeof lit, "(%s)%s", cg_ctype(x->dtype), f);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, y);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    coords(&k, y, "i");
    cg_kw_body(&k, "        long long off = 0;\n        bool outside = false;\n");
    for (int d = 0; d < x->rank; d++) {
        char dim[48];
        snprintf(dim, sizeof dim, "%s", cg_kw_dim(&k, x->dims[d]));
        cg_kw_body(&k, "        {\n            long long j = c[%d] - %s;\n", d, cg_kw_dim(&k, pads->dims[d]));
        cg_kw_body(&k, "            if (j < 0 || j >= %s) {\n", dim);
        if (constant) cg_kw_body(&k, "                outside = true;\n");
        else if (edge) cg_kw_body(&k, "                j = j < 0 ? 0 : %s - 1;\n", dim);
        else { /* reflect without repeating the edge: period 2(dim-1) */
            cg_kw_body(&k, "                if (%s == 1) j = 0;\n                else {\n", dim);
            cg_kw_body(&k, "                    const long long period = 2 * (%s - 1);\n", dim);
            cg_kw_body(&k, "                    j %%= period;\n                    if (j < 0) j += period;\n");
            cg_kw_body(&k, "                    if (j >= %s) j = period - j;\n                }\n", dim);
        }
        cg_kw_body(&k, "            }\n            off += j * %s;\n        }\n", stride(&k, x, d));
    }
    cg_kw_body(&k, "        %s[i] = outside ? %s : %s[outside ? 0 : off];\n    }\n", yp, lit, xp);
    return finish(&k, "one thread per output", numel);
}

static symc_status trilu(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    if (x->rank < 2) return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "input '%s' needs rank >= 2", x->name);
    int upper = cg_attr_int(n, "upper", 1) != 0;
    long long kd = (long long)cg_attr_int(n, "k", 0);
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, n->in[0]), *yp = cg_kw_out(&k, n->out[0]);
    char rows[48], cols[48];
    snprintf(rows, sizeof rows, "%s", cg_kw_dim(&k, x->dims[x->rank - 2]));
    snprintf(cols, sizeof cols, "%s", cg_kw_dim(&k, x->dims[x->rank - 1]));
    sym_expr numel = ir_tensor_numel(c->m, x);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    cg_kw_body(&k, "        const long long diff = i %% %s - (i / %s) %% %s;\n", cols, cols, rows);
    cg_kw_body(&k, "        %s[i] = diff %s (%lldLL) ? %s[i] : (%s)0;\n    }\n", yp, upper ? ">=" : "<=", kd, xp,
               cg_stype(x->dtype));
    return finish(&k, "one thread per element", numel);
}

static symc_status range(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *y = &c->m->tensors[n->out[0]];
    const ir_attr *start = attr(n, "start"), *delta = attr(n, "delta");
    if (!start || !delta || start->n != 1 || delta->n != 1 || y->dtype == SYMC_BOOL)
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "start and delta must be one value each, of a numeric dtype");
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *yp = cg_kw_out(&k, n->out[0]);
    sym_expr numel = ir_tensor_numel(c->m, y);
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n", cg_kw_dim(&k, numel));
    const char *s0 = cg_kw_dim(&k, start->dims[0]);
    cg_kw_body(&k, "        %s[i] = (%s)(%s + i * %s);\n    }\n", yp, cg_ctype(y->dtype), s0,
               cg_kw_dim(&k, delta->dims[0]));
    return finish(&k, "one thread per element", numel);
}

static symc_status shape_of(cg_cuda *c, uint32_t node) {
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *x = &c->m->tensors[n->in[0]];
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *yp = cg_kw_out(&k, n->out[0]);
    char y[16];
    snprintf(y, sizeof y, "%s", yp);
    cg_kw_body(&k, "    SC_LOOP(i, %dLL) {\n", x->rank);
    for (int d = 0; d < x->rank; d++)
        cg_kw_body(&k, "        if (i == %d) %s[%d] = %s;\n", d, y, d, cg_kw_dim(&k, x->dims[d]));
    cg_kw_body(&k, "    }\n");
    return finish(&k, "the input's dims", sym_const(c->m->syms, x->rank));
}

symc_status cg_emit_move(cg_cuda *c, uint32_t node) {
    switch (c->m->nodes[node].op) {
    case IR_OP_TRANSPOSE:
    case IR_OP_TILE: return transpose_or_tile(c, node);
    case IR_OP_SLICE: return slice(c, node);
    case IR_OP_CONCAT:
    case IR_OP_SPLIT: return concat_split(c, node);
    case IR_OP_GATHER: return gather(c, node);
    case IR_OP_GATHER_ELEMENTS: return gather_elements(c, node);
    case IR_OP_PAD: return pad(c, node);
    case IR_OP_TRILU: return trilu(c, node);
    case IR_OP_RANGE: return range(c, node);
    case IR_OP_SHAPE_OF: return shape_of(c, node);
    default: return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "the CUDA target has no kernel for this op");
    }
}
