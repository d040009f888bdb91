/* Fused attention's SIMT fp32 kernel (any SM, head dims multiples of 4; the
 * driver and the score function are cuda_emit_attention.c's): a block of 256
 * threads owns 64 query rows of one batch index and loops over 64-key tiles.
 * Q's tile stays in shared memory; K and V tiles are staged row-major with
 * padded rows. Each thread holds a 4x4 block of the score tile (rows
 * ty*4+i, keys tx+16j: float4 reads of both operands, conflict-free),
 * applies f and the bounds, takes the running row max over its 16 lanes with
 * shuffles, rescales its output accumulators (4 rows x 4 or 8 columns), and
 * hands the probabilities to the P·V product through shared memory. */
#include <stdio.h>

#include "codegen/cuda_emit_attention.h"

/* A row block's start: Q's tile into shared memory (ql loads one element),
 * the running max, sum and output accumulators cleared. */
static void f32_row_block_start(cg_kw *k, int64_t D, int64_t G, int64_t QLD, const char *ql) {
    cg_kw_body(k,
               "        const long long q0 = qt * %d;\n"
               "        __syncthreads(); /* the previous row block is done with Qs */\n"
               "        for (int e = threadIdx.x; e < %d * %lld; e += 256) {\n"
               "            const int r = e / %lld, d = e - r * %lld;\n"
               "            Qs[r * %lld + d] = q0 + r < Sq ? %s : 0.f;\n"
               "        }\n"
               "        float m[4], l[4], acc[4][%lld];\n"
               "#pragma unroll\n"
               "        for (int i = 0; i < 4; i++) {\n"
               "            m[i] = NINF;\n"
               "            l[i] = 0.f;\n"
               "#pragma unroll\n"
               "            for (int j = 0; j < %lld; j++) acc[i][j] = 0.f;\n"
               "        }\n",
               ATT_TILE, ATT_TILE, (long long)D, (long long)D, (long long)D, (long long)QLD, ql, (long long)(4 * G),
               (long long)(4 * G));
}

/* The SIMT kernel (any SM; D, Dv multiples of 4): 256 threads, each a 4x4
 * block of the score tile (rows ty*4+i, keys tx+16j) and 4 rows x 4 or 8
 * output columns; exact fp32 FMAs. */
void cg_att_emit_f32(cg_kw *k, const ir_attention *a, const char *qsr, const char *qsd, const char *ksr,
                     const char *ksd, const char *vsr, const char *vsd, const char *osr, const char *osd) {
    const int64_t D = a->d, DV = a->dv, G = (DV + 63) / 64, QLD = D + 4, VLD = DV + 4, PLD = ATT_TILE + 4;
    char off[128], ql[240], kl[240], vl[240], ost[160];
    snprintf(off, sizeof off, "(q0 + r) * %s + d * %s", qsr, qsd);
    cg_att_load(ql, sizeof ql, a->qdt, "qp", off);
    snprintf(off, sizeof off, "(k0 + r) * %s + d * %s", ksr, ksd);
    cg_att_load(kl, sizeof kl, a->kdt, "kp", off);
    snprintf(off, sizeof off, "(k0 + r) * %s + d * %s", vsr, vsd);
    cg_att_load(vl, sizeof vl, a->vdt, "vp", off);
    cg_store(ost, sizeof ost, a->odt,
             a->zero_masked ? "(L == 0.f ? 0.f : acc[i][4 * g + u] / L)" : "acc[i][4 * g + u] / L");
    f32_row_block_start(k, D, G, QLD, ql);
    if (a->causal_skip)
        cg_kw_body(k,
                   "        const long long kend = Sk < q0 + %d ? Sk : q0 + %d; /* causal: later keys are masked */\n",
                   ATT_TILE, ATT_TILE);
    else cg_kw_body(k, "        const long long kend = Sk;\n");
    cg_kw_body(k,
               "        for (long long k0 = 0; k0 < kend; k0 += %d) {\n"
               "            __syncthreads();\n"
               "            for (int e = threadIdx.x; e < %d * %lld; e += 256) {\n"
               "                const int r = e / %lld, d = e - r * %lld;\n"
               "                Ks[r * %lld + d] = k0 + r < Sk ? %s : 0.f;\n"
               "            }\n"
               "            for (int e = threadIdx.x; e < %d * %lld; e += 256) {\n"
               "                const int r = e / %lld, d = e - r * %lld;\n"
               "                Vs[r * %lld + d] = k0 + r < Sk ? %s : 0.f;\n"
               "            }\n"
               "            __syncthreads();\n"
               "            float s[4][4];\n"
               "#pragma unroll\n"
               "            for (int i = 0; i < 4; i++)\n"
               "#pragma unroll\n"
               "                for (int j = 0; j < 4; j++) s[i][j] = 0.f;\n"
               "#pragma unroll 4\n"
               "            for (int d = 0; d < %lld; d += 4) {\n"
               "                float4 qa[4], kb[4];\n"
               "#pragma unroll\n"
               "                for (int i = 0; i < 4; i++) qa[i] = *(const float4 *)&Qs[(ty * 4 + i) * %lld + d];\n"
               "#pragma unroll\n"
               "                for (int j = 0; j < 4; j++) kb[j] = *(const float4 *)&Ks[(tx + 16 * j) * %lld + d];\n"
               "#pragma unroll\n"
               "                for (int i = 0; i < 4; i++)\n"
               "#pragma unroll\n"
               "                    for (int j = 0; j < 4; j++) {\n"
               "                        s[i][j] = fmaf(qa[i].x, kb[j].x, s[i][j]);\n"
               "                        s[i][j] = fmaf(qa[i].y, kb[j].y, s[i][j]);\n"
               "                        s[i][j] = fmaf(qa[i].z, kb[j].z, s[i][j]);\n"
               "                        s[i][j] = fmaf(qa[i].w, kb[j].w, s[i][j]);\n"
               "                    }\n"
               "            }\n",
               ATT_TILE, ATT_TILE, (long long)D, (long long)D, (long long)D, (long long)QLD, kl, ATT_TILE,
               (long long)DV, (long long)DV, (long long)DV, (long long)VLD, vl, (long long)D, (long long)QLD,
               (long long)QLD);
    cg_kw_body(k,
               "#pragma unroll\n"
               "            for (int i = 0; i < 4; i++) {\n"
               "                const long long qi = q0 + ty * 4 + i;\n"
               "#pragma unroll\n"
               "                for (int j = 0; j < 4; j++) {\n"
               "                    const long long kj = k0 + tx + 16 * j;\n"
               "                    const bool ok = qi < Sq && kj < Sk;\n"
               "                    float v = s[i][j];\n"
               "                    (void)ok;\n");
    cg_att_emit_chain(k, a);
    cg_kw_body(
        k,
        "                    s[i][j] = kj < Sk ? v : NINF;\n"
        "                }\n"
        "                float mx = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));\n"
        "#pragma unroll\n"
        "                for (int o = 8; o > 0; o >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));\n"
        "                const float mn = fmaxf(m[i], mx), mu = mn == NINF ? 0.f : mn, al = __expf(m[i] - mu);\n"
        "                m[i] = mn;\n"
        "                l[i] *= al;\n"
        "#pragma unroll\n"
        "                for (int j = 0; j < %lld; j++) acc[i][j] *= al;\n"
        "#pragma unroll\n"
        "                for (int j = 0; j < 4; j++) {\n"
        "                    s[i][j] = __expf(s[i][j] - mu);\n"
        "                    l[i] += s[i][j];\n"
        "                }\n"
        "            }\n"
        "#pragma unroll\n"
        "            for (int j = 0; j < 4; j++)\n"
        "                *(float4 *)&Ps[(tx + 16 * j) * %lld + ty * 4] = make_float4(s[0][j], s[1][j], s[2][j], s[3][j]);\n"
        "            __syncthreads();\n"
        "#pragma unroll 4\n"
        "            for (int kk = 0; kk < %d; kk++) {\n"
        "                const float4 p = *(const float4 *)&Ps[kk * %lld + ty * 4];\n"
        "#pragma unroll\n"
        "                for (int g = 0; g < %lld; g++) {\n"
        "                    const int col = 64 * g + tx * 4;\n"
        "                    if (col < %lld) {\n"
        "                        const float4 w = *(const float4 *)&Vs[kk * %lld + col];\n"
        "                        acc[0][4 * g] = fmaf(p.x, w.x, acc[0][4 * g]);\n"
        "                        acc[0][4 * g + 1] = fmaf(p.x, w.y, acc[0][4 * g + 1]);\n"
        "                        acc[0][4 * g + 2] = fmaf(p.x, w.z, acc[0][4 * g + 2]);\n"
        "                        acc[0][4 * g + 3] = fmaf(p.x, w.w, acc[0][4 * g + 3]);\n"
        "                        acc[1][4 * g] = fmaf(p.y, w.x, acc[1][4 * g]);\n"
        "                        acc[1][4 * g + 1] = fmaf(p.y, w.y, acc[1][4 * g + 1]);\n"
        "                        acc[1][4 * g + 2] = fmaf(p.y, w.z, acc[1][4 * g + 2]);\n"
        "                        acc[1][4 * g + 3] = fmaf(p.y, w.w, acc[1][4 * g + 3]);\n"
        "                        acc[2][4 * g] = fmaf(p.z, w.x, acc[2][4 * g]);\n"
        "                        acc[2][4 * g + 1] = fmaf(p.z, w.y, acc[2][4 * g + 1]);\n"
        "                        acc[2][4 * g + 2] = fmaf(p.z, w.z, acc[2][4 * g + 2]);\n"
        "                        acc[2][4 * g + 3] = fmaf(p.z, w.w, acc[2][4 * g + 3]);\n"
        "                        acc[3][4 * g] = fmaf(p.w, w.x, acc[3][4 * g]);\n"
        "                        acc[3][4 * g + 1] = fmaf(p.w, w.y, acc[3][4 * g + 1]);\n"
        "                        acc[3][4 * g + 2] = fmaf(p.w, w.z, acc[3][4 * g + 2]);\n"
        "                        acc[3][4 * g + 3] = fmaf(p.w, w.w, acc[3][4 * g + 3]);\n"
        "                    }\n"
        "                }\n"
        "            }\n"
        "        }\n",
        (long long)(4 * G), (long long)PLD, ATT_TILE, (long long)PLD, (long long)G, (long long)DV, (long long)VLD);
    cg_kw_body(k,
               "#pragma unroll\n"
               "        for (int i = 0; i < 4; i++) {\n"
               "            float L = l[i];\n"
               "#pragma unroll\n"
               "            for (int o = 8; o > 0; o >>= 1) L += __shfl_xor_sync(0xffffffffu, L, o);\n"
               "            const long long qi = q0 + ty * 4 + i;\n"
               "            if (qi >= Sq) continue;\n"
               "#pragma unroll\n"
               "            for (int g = 0; g < %lld; g++)\n"
               "#pragma unroll\n"
               "                for (int u = 0; u < 4; u++) {\n"
               "                    const int col = 64 * g + tx * 4 + u;\n"
               "                    if (col < %lld) op[qi * %s + col * %s] = %s;\n"
               "                }\n"
               "        }\n"
               "    }\n",
               (long long)G, (long long)DV, osr, osd, ost);
}
