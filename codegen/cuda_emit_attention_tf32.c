/* Fused attention's TF32 tensor-core kernel (sm_80+, head dims multiples of
 * 8; the driver and the score function are cuda_emit_attention.c's): 4
 * warps, each 16 query rows of the block's 64, mma.sync m16n8k8 TF32 with
 * fp32 accumulation, 3xTF32 (about fp32 accuracy) for fp32 engines. Q, K and
 * V tiles are staged into padded shared rows (emit_stage: 16-byte loads when
 * the view allows, half storage widened on the way). */
#include <stdio.h>

#include "codegen/cuda_emit_attention.h"

/* 1 when the offset, row stride and batch strides of v are provably multiples
 * of 4 and its last dim is contiguous: 16-byte loads of whole rows */
static int view_vec4(cg_cuda *c, const ir_att_view *v) {
    int64_t one;
    if (!sym_is_const(c->m->syms, v->strides[3], &one) || one != 1 || v->off % 4) return 0;
    for (int d = 0; d < 3; d++)
        if (sym_prove_divisible(c->m->syms, v->strides[d], 4) != SYM_TRUE) return 0;
    return 1;
}

/* stage rows [k0, k0 + 64) of view `ptr` (row stride rs, elem stride es,
 * `cols` columns) into shared `dst` with row pitch ld, zeros past `lim` */
static void emit_stage(cg_kw *k, const char *dst, int64_t ld, const char *ptr, const char *rs, const char *es,
                       int64_t cols, const char *row0, const char *lim, int vec, int threads, symc_dtype dt) {
    if (vec && cg_is_half(dt)) { /* 4 halves (8 bytes) a load, widened to a float4 */
        const char *cv = dt == SYMC_F16 ? "sc_h2f" : "sc_b2f";
        cg_kw_body(
            k,
            "            for (int e = threadIdx.x; e < 64 * %lld; e += %d) {\n"
            "                const int r = e / %lld, c4 = (e - r * %lld) * 4;\n"
            "                uint2 u = make_uint2(0u, 0u);\n"
            "                if (%s + r < %s) u = *(const uint2 *)&%s[(%s + r) * %s + c4];\n"
            "                *(float4 *)&%s[r * %lld + c4] = make_float4(%s((unsigned short)(u.x & 0xffffu)), "
            "%s((unsigned short)(u.x >> 16)), %s((unsigned short)(u.y & 0xffffu)), %s((unsigned short)(u.y >> 16)));\n"
            "            }\n",
            (long long)(cols / 4), threads, (long long)(cols / 4), (long long)(cols / 4), row0, lim, ptr, row0, rs, dst,
            (long long)ld, cv, cv, cv, cv);
    } else if (vec) {
        cg_kw_body(k,
                   "            for (int e = threadIdx.x; e < 64 * %lld; e += %d) {\n"
                   "                const int r = e / %lld, c4 = (e - r * %lld) * 4;\n"
                   "                float4 x = make_float4(0.f, 0.f, 0.f, 0.f);\n"
                   "                if (%s + r < %s) x = *(const float4 *)&%s[(%s + r) * %s + c4];\n"
                   "                *(float4 *)&%s[r * %lld + c4] = x;\n"
                   "            }\n",
                   (long long)(cols / 4), threads, (long long)(cols / 4), (long long)(cols / 4), row0, lim, ptr, row0,
                   rs, dst, (long long)ld);
    } else {
        char off[160], x[240];
        snprintf(off, sizeof off, "(%s + r) * %s + d * %s", row0, rs, es);
        cg_att_load(x, sizeof x, dt, ptr, off);
        cg_kw_body(k,
                   "            for (int e = threadIdx.x; e < 64 * %lld; e += %d) {\n"
                   "                const int r = e / %lld, d = e - r * %lld;\n"
                   "                %s[r * %lld + d] = %s + r < %s ? %s : 0.f;\n"
                   "            }\n",
                   (long long)cols, threads, (long long)cols, (long long)cols, dst, (long long)ld, row0, lim, x);
    }
}

/* The tensor-core kernel (sm_80+, D and Dv multiples of 8): 4 warps, each
 * 16 query rows of the block's 64; mma.sync m16n8k8 TF32 with fp32
 * accumulation. For fp32 engines every product is split 3xTF32 (a = hi + lo,
 * a·b ≈ hi·hi + hi·lo + lo·hi: about fp32 accuracy), for tf32/fp16/bf16
 * engines one TF32 product. Scores and probabilities stay in the mma
 * accumulator layout (row g / g+8, columns 2t, 2t+1 of each 8-key tile); P
 * goes through the warp's own rows of shared memory to become the A
 * operand of P·V. */
void cg_att_emit_tf32(cg_kw *k, const ir_attention *a, int split, const char *qsr, const char *qsd, const char *ksr,
                      const char *ksd, const char *vsr, const char *vsd, const char *osr, const char *osd) {
    cg_cuda *c = k->c;
    const int64_t D = a->d, DV = a->dv, QLD = cg_att_pitch(D, 4), VLD = cg_att_pitch(DV, 8), PLD = cg_att_pitch(64, 4);
    const int64_t NV = DV / 8;
    int qv = view_vec4(c, &a->q), kv = view_vec4(c, &a->k), vv = view_vec4(c, &a->v);
    char st0[160], st1[160];
    cg_store(st0, sizeof st0, a->odt, "o[n][2 * h] * rL");
    cg_store(st1, sizeof st1, a->odt, "o[n][2 * h + 1] * rL");
    cg_kw_body(k,
               "        const long long q0 = qt * 64;\n"
               "        __syncthreads(); /* the previous row block is done with Qs */\n");
    emit_stage(k, "Qs", QLD, "qp", qsr, qsd, D, "q0", "Sq", qv, 128, a->qdt);
    cg_kw_body(k,
               "        float m[2] = {NINF, NINF}, l[2] = {0.f, 0.f}, o[%lld][4];\n"
               "#pragma unroll\n"
               "        for (int n = 0; n < %lld; n++) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;\n",
               (long long)NV, (long long)NV);
    if (a->causal_skip)
        cg_kw_body(k,
                   "        const long long kend = Sk < q0 + 64 ? Sk : q0 + 64; /* causal: later keys are masked */\n");
    else cg_kw_body(k, "        const long long kend = Sk;\n");
    cg_kw_body(k, "        for (long long k0 = 0; k0 < kend; k0 += 64) {\n            __syncthreads();\n");
    emit_stage(k, "Ks", QLD, "kp", ksr, ksd, D, "k0", "Sk", kv, 128, a->kdt);
    emit_stage(k, "Vs", VLD, "vp", vsr, vsd, DV, "k0", "Sk", vv, 128, a->vdt);
    cg_kw_body(k,
               "            __syncthreads();\n"
               "            float s[8][4];\n"
               "#pragma unroll\n"
               "            for (int n = 0; n < 8; n++) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;\n"
               "#pragma unroll 2\n"
               "            for (int kk = 0; kk < %lld; kk += 8) {\n"
               "                const float *qa = &Qs[(w * 16 + g) * %lld + kk + t];\n"
               "                unsigned ah[4], al[4];\n"
               "                sc_split(qa[0], ah[0], al[0]);\n"
               "                sc_split(qa[8 * %lld], ah[1], al[1]);\n"
               "                sc_split(qa[4], ah[2], al[2]);\n"
               "                sc_split(qa[8 * %lld + 4], ah[3], al[3]);\n"
               "#pragma unroll\n"
               "                for (int n = 0; n < 8; n++) {\n"
               "                    const float *kb = &Ks[(n * 8 + g) * %lld + kk + t];\n"
               "                    unsigned bh[2], bl[2];\n"
               "                    sc_split(kb[0], bh[0], bl[0]);\n"
               "                    sc_split(kb[4], bh[1], bl[1]);\n"
               "%s"
               "                    sc_mma_tf32(s[n], ah, bh);\n"
               "                }\n"
               "            }\n",
               (long long)D, (long long)QLD, (long long)QLD, (long long)QLD, (long long)QLD,
               split
                   ? "                    sc_mma_tf32(s[n], al, bh);\n                    sc_mma_tf32(s[n], ah, bl);\n"
                   : "");
    /* score function, bounds, online softmax over the 4 lanes of a row */
    cg_kw_body(k,
               "#pragma unroll\n"
               "            for (int h = 0; h < 2; h++) {\n"
               "                const long long qi = q0 + w * 16 + g + 8 * h;\n"
               "                float mx = NINF;\n"
               "#pragma unroll\n"
               "                for (int n = 0; n < 8; n++)\n"
               "#pragma unroll\n"
               "                    for (int u = 0; u < 2; u++) {\n"
               "                        const long long kj = k0 + n * 8 + 2 * t + u;\n"
               "                        const bool ok = qi < Sq && kj < Sk;\n"
               "                        float v = s[n][2 * h + u];\n"
               "                        (void)ok;\n");
    cg_att_emit_chain(k, a);
    cg_kw_body(
        k,
        "                        v = kj < Sk ? v : NINF;\n"
        "                        s[n][2 * h + u] = v;\n"
        "                        mx = fmaxf(mx, v);\n"
        "                    }\n"
        "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));\n"
        "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));\n"
        "                const float mn = fmaxf(m[h], mx), mu = mn == NINF ? 0.f : mn, re = __expf(m[h] - mu);\n"
        "                m[h] = mn;\n"
        "                l[h] *= re;\n"
        "#pragma unroll\n"
        "                for (int n = 0; n < %lld; n++) o[n][2 * h] *= re, o[n][2 * h + 1] *= re;\n"
        "#pragma unroll\n"
        "                for (int n = 0; n < 8; n++) {\n"
        "                    const float p0 = __expf(s[n][2 * h] - mu), p1 = __expf(s[n][2 * h + 1] - mu);\n"
        "                    l[h] += p0 + p1;\n"
        "                    *(float2 *)&Ps[(w * 16 + g + 8 * h) * %lld + n * 8 + 2 * t] = make_float2(p0, p1);\n"
        "                }\n"
        "            }\n"
        "            __syncwarp();\n"
        "#pragma unroll 2\n"
        "            for (int kk = 0; kk < 64; kk += 8) {\n"
        "                const float *pa = &Ps[(w * 16 + g) * %lld + kk + t];\n"
        "                unsigned ah[4], al[4];\n"
        "                sc_split(pa[0], ah[0], al[0]);\n"
        "                sc_split(pa[8 * %lld], ah[1], al[1]);\n"
        "                sc_split(pa[4], ah[2], al[2]);\n"
        "                sc_split(pa[8 * %lld + 4], ah[3], al[3]);\n"
        "#pragma unroll\n"
        "                for (int n = 0; n < %lld; n++) {\n"
        "                    const float *vb = &Vs[(kk + t) * %lld + n * 8 + g];\n"
        "                    unsigned bh[2], bl[2];\n"
        "                    sc_split(vb[0], bh[0], bl[0]);\n"
        "                    sc_split(vb[4 * %lld], bh[1], bl[1]);\n"
        "%s"
        "                    sc_mma_tf32(o[n], ah, bh);\n"
        "                }\n"
        "            }\n"
        "        }\n",
        (long long)NV, (long long)PLD, (long long)PLD, (long long)PLD, (long long)PLD, (long long)NV, (long long)VLD,
        (long long)VLD,
        split ? "                    sc_mma_tf32(o[n], al, bh);\n                    sc_mma_tf32(o[n], ah, bl);\n"
              : "");
    cg_kw_body(k,
               "#pragma unroll\n"
               "        for (int h = 0; h < 2; h++) {\n"
               "            float L = l[h];\n"
               "            L += __shfl_xor_sync(0xffffffffu, L, 1);\n"
               "            L += __shfl_xor_sync(0xffffffffu, L, 2);\n"
               "            const float rL = %s;\n"
               "            const long long qi = q0 + w * 16 + g + 8 * h;\n"
               "            if (qi >= Sq) continue;\n"
               "#pragma unroll\n"
               "            for (int n = 0; n < %lld; n++) {\n"
               "                op[qi * %s + (n * 8 + 2 * t) * %s] = %s;\n"
               "                op[qi * %s + (n * 8 + 2 * t + 1) * %s] = %s;\n"
               "            }\n"
               "        }\n"
               "    }\n",
               RL_EXPR(a), (long long)NV, osr, osd, st0, osr, osd, st1);
}
