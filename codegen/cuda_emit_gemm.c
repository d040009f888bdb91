/* A GEMM of symc's own with an elementwise epilogue, for the library GEMMs
 * whose result an elementwise group alone reads (the fuse pass's
 * IR_FUSE_EPILOGUE under a library root; cuda_target.c's rule says which):
 * cuBLASLt's epilogues stop at a bias, a residual and relu or the tanh
 * GELU, so the exact erf GELU of BERT, ViT or ConvNeXt (x * 0.5 * (1 +
 * erf(x / sqrt 2)) in an ONNX export), SiLU gates or a layer scale are
 * otherwise a separate pass over the whole result: written in half, read
 * back, written again. Opt-in (SYMC_GEMM_EPILOGUE=kernel): measured slower
 * than that separate pass on an H200, see cuda_target.c and BENCHMARKS.md.
 *
 * D[M, N] = epi(act(A[M, K] · B + C + bias)) with A the rows of a row-major
 * half tensor (every dim but the last folded into M, which may be any
 * symbolic size), B a [K, N] (or, trans_b, [N, K]) row-major half matrix,
 * K a multiple of 32 and N of 32, both constant. mma.sync m16n8k16 in the
 * storage's half type with fp32 accumulation, as the half attention kernel
 * (its sc_mma_*, sc_ldsm4*, sc_cp16 helpers from the prelude): a block of 8
 * warps computes a 64 x 128, 128 x 64 or 256 x 32 tile (BN the largest of
 * 128, 64 and 32 dividing N), each warp 32 x 32, two blocks an SM; K in steps of 32 through a
 * 3-stage cp.async ring in dynamic shared memory (rows padded by 8 halves,
 * so the ldmatrix rows of one 8x8 matrix fall in distinct banks); A's
 * fragments by ldmatrix, B's by ldmatrix.trans ([K, N]) or ldmatrix
 * ([N, K]). Rows past M are zero-filled on load and not stored.
 *
 * The epilogue runs on the fp32 accumulator, two adjacent columns of one row
 * at a time: the bias and the residual (read from their half storage), the
 * library-style activation member (relu, tanh GELU), then the elementwise
 * group with the result substituted as a register (cg_kw_subst, as the row
 * kernels do), its other leaves read at the element's flat index; the pair
 * is stored as one 32-bit word (half) or float2. The result is rounded to
 * half once, at the store, where cuBLASLt and a separate kernel round it
 * twice (once after the GEMM, once after the group). */
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit.h"

#define GK_BK 32    /* K per stage */
#define GK_STAGES 3 /* cp.async ring */
#define GK_THREADS 256
#define GK_PITCH (GK_BK + 8) /* halves per staged A row (and B row when trans_b) */

/* the kernel's operands from the plan, and the sizes it needs; 0 when it does not apply */
int cg_gemm_kernel_shape(const ir_module *m, uint32_t node, uint32_t a, uint32_t b, int trans_b, int64_t *K,
                         int64_t *N) {
    const ir_node *n = &m->nodes[node];
    const ir_tensor *at = &m->tensors[a], *bt = &m->tensors[b], *yt = &m->tensors[n->out[0]];
    symc_dtype dt = yt->dtype;
    if (!cg_is_half(dt) || at->dtype != dt || bt->dtype != dt || at->rank < 2 || bt->rank != 2) return 0;
    if (!sym_is_const(m->syms, bt->dims[trans_b ? 1 : 0], K) || !sym_is_const(m->syms, bt->dims[trans_b ? 0 : 1], N))
        return 0;
    if (at->dims[at->rank - 1] != bt->dims[trans_b ? 1 : 0] || yt->dims[yt->rank - 1] != bt->dims[trans_b ? 0 : 1])
        return 0;
    return *K > 0 && *K % GK_BK == 0 && *N > 0 && *N % 32 == 0;
}

/* the block's tile and its warps' arrangement: every warp computes 32 x 32 (two m16 by four
 * n8 tiles), so a block's tile is 64 x 128, 128 x 64 or 256 x 32 (8192 results, 32 fp32
 * accumulators a thread, at most 128 registers: two blocks an SM) */
typedef struct gk_shape {
    int64_t K, N;
    int bm, bn, warps_n, wm, wn, mt, nt; /* tile rows, columns; warps along N; a warp's rows, columns, m16, n8 tiles */
    int trans_b;
    int64_t astage, bstage; /* halves of a staged A and B tile */
} gk_shape;

static gk_shape gk_shape_of(int64_t K, int64_t N, int trans_b) {
    gk_shape s = {.K = K, .N = N, .trans_b = trans_b};
    s.bn = N % 128 == 0 ? 128 : N % 64 == 0 ? 64 : 32;
    s.warps_n = s.bn / 32;
    s.wn = 32;
    s.wm = 32;
    s.bm = s.wm * (8 / s.warps_n);
    s.astage = (int64_t)s.bm * GK_PITCH;
    s.mt = s.wm / 16;
    s.nt = s.wn / 8;
    s.bstage = trans_b ? (int64_t)s.bn * GK_PITCH : (int64_t)GK_BK * (s.bn + 8);
    return s;
}

/* one stage's cp.async loads: A's rows [m0, m0 + bm) and B's tile of k-tile `kt` into stage `st` */
static void gk_emit_load(cg_kw *k, const gk_shape *s, const char *ap, const char *bp, const char *st, const char *kt) {
    cg_kw_body(
        k,
        "            for (int e = threadIdx.x; e < %d; e += %d) {\n"
        "                const int r = e >> 2, c8 = (e & 3) * 8;\n"
        "                const bool in = m0 + r < M;\n"
        "                sc_cp16(&As[(%s) * %lld + r * %d + c8], %s + (in ? (m0 + r) * %lldLL + (long long)(%s) * %d + c8 : 0), in);\n"
        "            }\n",
        s->bm * GK_BK / 8, GK_THREADS, st, (long long)s->astage, GK_PITCH, ap, (long long)s->K, kt, GK_BK);
    if (s->trans_b)
        cg_kw_body(
            k,
            "            for (int e = threadIdx.x; e < %d; e += %d) {\n"
            "                const int r = e >> 2, c8 = (e & 3) * 8;\n"
            "                sc_cp16(&Bs[(%s) * %lld + r * %d + c8], %s + (long long)(n0 + r) * %lldLL + (long long)(%s) * %d + c8, true);\n"
            "            }\n",
            s->bn * GK_BK / 8, GK_THREADS, st, (long long)s->bstage, GK_PITCH, bp, (long long)s->K, kt, GK_BK);
    else
        cg_kw_body(
            k,
            "            for (int e = threadIdx.x; e < %d; e += %d) {\n"
            "                const int r = e / %d, c8 = (e %% %d) * 8;\n"
            "                sc_cp16(&Bs[(%s) * %lld + r * %d + c8], %s + ((long long)(%s) * %d + r) * %lldLL + n0 + c8, true);\n"
            "            }\n",
            s->bn * GK_BK / 8, GK_THREADS, s->bn / 8, s->bn / 8, st, (long long)s->bstage, s->bn + 8, bp, kt, GK_BK,
            (long long)s->N);
}

/* the activation member's formula on float v (the elementwise kernels' relu and tanh GELU) */
static void gk_emit_act(cg_kw *k, uint8_t act, const char *v) {
    if (act == RT_EPI_RELU) cg_kw_body(k, "                    %s = %s < 0.f ? 0.f : %s;\n", v, v, v);
    else if (act == RT_EPI_GELU)
        cg_kw_body(
            k,
            "                    %s = 0.5f * %s * (1.f + sc_tanh(0.79788456080286535588f * (%s + 0.044715f * %s * %s * %s)));\n",
            v, v, v, v, v, v);
}

/* the pair v0, v1 (columns col and col + 1 of row `row`, flat index i0) through the bias, the
 * residual, the activation and the group, stored as one word */
static symc_status gk_emit_store(cg_kw *k, const cg_gemm_call *g, symc_dtype zdt) {
    char l0[160], l1[160];
    if (g->bias != RT_NONE) {
        const char *bias = cg_kw_in(k, g->bias);
        cg_load(l0, sizeof l0, k->c->m->tensors[g->bias].dtype, bias, "col");
        cg_load(l1, sizeof l1, k->c->m->tensors[g->bias].dtype, bias, "col + 1");
        cg_kw_body(k, "                    v0 += %s;\n                    v1 += %s;\n", l0, l1);
    }
    if (g->res != RT_NONE) {
        const char *res = cg_kw_in(k, g->res);
        cg_load(l0, sizeof l0, k->c->m->tensors[g->res].dtype, res, "i0");
        cg_load(l1, sizeof l1, k->c->m->tensors[g->res].dtype, res, "i0 + 1");
        cg_kw_body(k, "                    v0 += %s;\n                    v1 += %s;\n", l0, l1);
    }
    gk_emit_act(k, g->act, "v0");
    gk_emit_act(k, g->act, "v1");
    /* the group, once per column, in a block of its own (its names repeat) */
    symc_status st = SYMC_OK;
    cg_kw_body(k, "                    float z0, z1;\n");
    for (int u = 0; u < 2 && !st; u++) {
        char reg[32];
        snprintf(reg, sizeof reg, "sc_reg<float>{v%d}", u);
        cg_kw_subst(k, g->y, reg);
        cg_kw_body(k, "                    { const long long i = i0 + %d;\n", u);
        st = cg_emit_group_value(k, g->root, "i", "zv");
        cg_kw_body(k, "                    z%d = zv; (void)i; }\n", u);
        cg_kw_subst(k, g->y, NULL);
    }
    const char *zp = cg_kw_out(k, k->c->m->nodes[g->root].out[0]);
    if (zdt == SYMC_F32)
        cg_kw_body(k, "                    reinterpret_cast<float2 *>(%s + i0)[0] = make_float2(z0, z1);\n", zp);
    else
        cg_kw_body(k, "                    reinterpret_cast<unsigned *>(%s + i0)[0] = %s(z0, z1);\n", zp,
                   zdt == SYMC_BF16 ? "sc_pack_bf16" : "sc_pack_f16");
    return st;
}

symc_status cg_emit_gemm_kernel(cg_cuda *c, uint32_t node, const cg_gemm_call *g) {
    int64_t K, N;
    if (!cg_gemm_kernel_shape(c->m, node, g->a, g->b, g->trans_b, &K, &N))
        return cg_fail(c, node, SYMC_ERR_INTERNAL, "the GEMM kernel with an epilogue does not take these operands");
    const gk_shape s = gk_shape_of(K, N, g->trans_b);
    const ir_tensor *at = &c->m->tensors[g->a], *zt = &c->m->tensors[c->m->nodes[g->root].out[0]];
    const symc_dtype dt = at->dtype, zdt = zt->dtype;
    sym_table *T = c->m->syms;
    sym_expr M = cg_prod(c, at->dims, 0, at->rank - 1);
    sym_expr tiles = sym_mul(T, sym_ceildiv(T, M, sym_const(T, s.bm)), sym_const(T, N / s.bn));
    cg_kw k;
    cg_kw_begin(&k, c, node);
    k.shared = (uint32_t)(GK_STAGES * (s.astage + s.bstage) * 2);
    k.min_blocks = 2;
    char ap[32], bp[32], Ms[48], Ts[48];
    snprintf(ap, sizeof ap, "%s", cg_kw_in(&k, g->a));
    snprintf(bp, sizeof bp, "%s", cg_kw_in(&k, g->b));
    snprintf(Ms, sizeof Ms, "%s", cg_kw_dim(&k, M));
    snprintf(Ts, sizeof Ts, "%s", cg_kw_dim(&k, tiles));
    const char *mma = dt == SYMC_BF16 ? "sc_mma_bf16" : "sc_mma_f16";
    cg_kw_body(
        &k,
        "    extern __shared__ float4 sc_smem4[];\n"
        "    unsigned short *As = (unsigned short *)sc_smem4, *Bs = As + %lld;\n"
        "    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, wm = w / %d, wn = w %% %d;\n"
        "    const long long M = %s;\n"
        "    SC_ROWS(blk, %s) {\n"
        "        const long long m0 = blk / %lld * %d;\n"
        "        const int n0 = (int)(blk %% %lld) * %d;\n"
        "        float acc[%d][%d][4];\n"
        "#pragma unroll\n"
        "        for (int i = 0; i < %d; i++)\n"
        "#pragma unroll\n"
        "            for (int j = 0; j < %d; j++) acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;\n"
        "        __syncthreads(); /* the previous tile is done with the stages */\n"
        "#pragma unroll\n"
        "        for (int st = 0; st < %d; st++) {\n"
        "            if (st < %lld) {\n",
        (long long)(GK_STAGES * s.astage), s.warps_n, s.warps_n, Ms, Ts, (long long)(N / s.bn), s.bm,
        (long long)(N / s.bn), s.bn, s.mt, s.nt, s.mt, s.nt, GK_STAGES - 1, (long long)(K / GK_BK));
    gk_emit_load(&k, &s, ap, bp, "st", "st");
    cg_kw_body(&k,
               "            }\n"
               "            sc_cp_commit();\n"
               "        }\n"
               "        for (int kt = 0; kt < %lld; kt++) {\n"
               "            sc_cp_wait<%d>();\n"
               "            __syncthreads();\n"
               "            if (kt + %d < %lld) {\n",
               (long long)(K / GK_BK), GK_STAGES - 2, GK_STAGES - 1, (long long)(K / GK_BK));
    char nst[48], nkt[32];
    snprintf(nst, sizeof nst, "(kt + %d) %% %d", GK_STAGES - 1, GK_STAGES);
    snprintf(nkt, sizeof nkt, "kt + %d", GK_STAGES - 1);
    gk_emit_load(&k, &s, ap, bp, nst, nkt);
    cg_kw_body(
        &k,
        "            }\n"
        "            sc_cp_commit();\n"
        "            const unsigned short *Ac = As + (kt %% %d) * %lld, *Bc = Bs + (kt %% %d) * %lld;\n"
        "#pragma unroll\n"
        "            for (int kk = 0; kk < %d; kk++) {\n"
        "                unsigned af[%d][4];\n"
        "#pragma unroll\n"
        "                for (int mt = 0; mt < %d; mt++)\n"
        "                    sc_ldsm4(af[mt], &Ac[(wm * %d + mt * 16 + (lane & 15)) * %d + kk * 16 + (lane >> 4) * 8]);\n"
        "#pragma unroll\n"
        "                for (int np = 0; np < %d; np++) {\n"
        "                    unsigned b[4];\n",
        GK_STAGES, (long long)s.astage, GK_STAGES, (long long)s.bstage, GK_BK / 16, s.mt, s.mt, s.wm, GK_PITCH,
        s.nt / 2);
    if (s.trans_b)
        cg_kw_body(
            &k,
            "                    sc_ldsm4(b, &Bc[(wn * %d + np * 16 + (lane & 7) + ((lane >> 4) << 3)) * %d + kk * 16 + ((lane >> 3) & 1) * 8]);\n",
            s.wn, GK_PITCH);
    else
        cg_kw_body(
            &k,
            "                    sc_ldsm4_t(b, &Bc[(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * %d + wn * %d + np * 16 + (lane >> 4) * 8]);\n",
            s.bn + 8, s.wn);
    cg_kw_body(&k,
               "#pragma unroll\n"
               "                    for (int mt = 0; mt < %d; mt++) {\n"
               "                        %s(acc[mt][2 * np], af[mt], b);\n"
               "                        %s(acc[mt][2 * np + 1], af[mt], b + 2);\n"
               "                    }\n"
               "                }\n"
               "            }\n"
               "        }\n"
               "        sc_cp_wait<0>();\n"
               "#pragma unroll\n"
               "        for (int mt = 0; mt < %d; mt++)\n"
               "#pragma unroll\n"
               "            for (int h = 0; h < 2; h++) {\n"
               "                const long long row = m0 + wm * %d + mt * 16 + (lane >> 2) + h * 8;\n"
               "                if (row >= M) continue;\n"
               "#pragma unroll\n"
               "                for (int nt = 0; nt < %d; nt++) {\n"
               "                    const int col = n0 + wn * %d + nt * 8 + 2 * (lane & 3);\n"
               "                    const long long i0 = row * %lldLL + col;\n"
               "                    float v0 = acc[mt][nt][2 * h], v1 = acc[mt][nt][2 * h + 1];\n",
               s.mt, mma, mma, s.mt, s.wm, s.nt, s.wn, (long long)N);
    symc_status st = gk_emit_store(&k, g, zdt);
    cg_kw_body(&k,
               "                }\n"
               "            }\n"
               "    }\n");
    if (st) {
        cg_kw_free(&k);
        return st;
    }
    /* the comment: the GEMM, its members and the epilogue group */
    cg_str comment = {0};
    cg_str_appendf(&comment, "GEMM %lldx%lld (K x N%s, tile %dx%d) with its epilogue: ", (long long)K, (long long)N,
                   g->trans_b ? ", B as [N, K]" : "", s.bm, s.bn);
    uint32_t nodes[CG_GROUP_MAX_NODES + 8], nn = 0;
    nodes[nn++] = node;
    for (uint32_t i = 0; i < c->m->n_nodes && nn < CG_GROUP_MAX_NODES + 8; i++)
        if (i != node && c->m->fuse && c->m->fuse[i].group == node && cg_role(c, i) != IR_FUSE_TRANSPOSE)
            nodes[nn++] = i;
    cg_describe_nodes(c, nodes, nn, &comment);
    st = comment.oom ? symc_error_setf(c->b->err, SYMC_ERR_NOMEM, "out of memory generating CUDA source")
                     : cg_kw_finish(&k, comment.p, tiles, 1, GK_THREADS);
    cg_str_free(&comment);
    cg_kw_free(&k);
    return st;
}
