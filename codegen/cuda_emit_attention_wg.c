/* Fused attention's Hopper kernel pieces (sm_90a: wgmma), the variant of the
 * half tensor-core kernel (cuda_emit_attention_h16.c, which drives the body
 * and shares its hoisted masks, online softmax and store) for Q, K and V in
 * one half type with head dims 64 or 128 on an sm_90 target.
 *
 * Three warpgroups a block, warp-specialized: two consumers, each 64 of the
 * block's 128 query rows, and a producer (threads 256..383) that stages Q's
 * rows and every key tile (cg_att_h16_kt: 128 keys) of K and V by cp.async into
 * a ring of CG_ATT_WG_STAGES shared-memory stages, ahead of the consumers. Each
 * role runs its own loop over the row blocks after setmaxnreg: the producer
 * keeps 56 registers a thread and the consumers take 224 (ptxas allocates each
 * loop at its count). mbarriers
 * order the two sides: the producer's copies arrive on qfull / full[st] as
 * they land (cp.async.mbarrier.arrive.noinc), the consumers release Q and each
 * stage on qempty / empty[st]; the ring's position and phases follow the
 * kernel's count of key tiles (gs, modulo twice the stages) and row blocks (rq), the same on both
 * sides. A consumer that waited for a stage issues fence.proxy.async before
 * wgmma reads what cp.async (the generic proxy) wrote. Tiles are stored in the
 * 128-byte-swizzled layout the wgmma descriptors name: atoms of 64 halves
 * (128 bytes) by as many rows, a row's 16-byte chunk c stored at chunk
 * c ^ (row % 8), every atom 1024-byte aligned. S = Q·Kᵀ is wgmma m64n{kt}k16
 * with both operands from shared memory (K-major: 32 bytes further along the
 * atom per k-step); O += P·V is wgmma m64n{DV}k16 with P from registers (the
 * score accumulators packed to half pairs are its A fragments, as in the
 * mma.sync kernel) and V from shared memory read MN-major (the transposed
 * B). The accumulators' layout per warp is mma.sync's m16n8 one repeated
 * over n, so s[0][n][4] and o[0][n][4] are the h16 kernel's arrays with one
 * m-tile, and everything between the products is shared with it; each
 * product is waited for before its registers are read.
 *
 * The staging (the swizzled tiles' index), the loop and the rest of the body are the h16
 * kernel's (its h16_shape.wg); this file holds what is wgmma's own: when it applies, its helpers
 * and its two products. The helpers (sc_wg_*) are emitted into the prelude of sm_90 sources
 * under __CUDA_ARCH_FEAT_SM90_ALL; a kernel that uses them carries CG_SM90A_MARK, and
 * codegen/cuda_nvrtc.c compiles its module for sm_90a. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cuda_emit_attention.h"

/* the wgmma kernel applies: the half kernel would (cg_att_h16_ok), on an sm_90 target, with
 * head dims 64 or 128, except at head dim 64 under the causal tail (cg_att_causal_tail). Measured
 * on an H200 (session 28, with h16_softmax's softmax): alone (bench/bench_attention.py) head dim
 * 128 1.19-1.26x the mma.sync kernel, head dim 64 1.00-1.24x (causal 1.03-1.09x); in BERT-base
 * --fp16 0.2-4% faster at every point. Under the causal tail its producer still loads every key
 * tile where the mma.sync kernel's block stops at its diagonal: GPT-2 at 32x512 was 1.2% slower.
 * SYMC_ATTENTION=mma keeps mma.sync everywhere, SYMC_ATTENTION=wgmma takes wgmma under the tail
 * too (for comparison and tests). */
int cg_att_wg_ok(cg_cuda *c, const ir_attention *a) {
    const char *env = getenv("SYMC_ATTENTION");
    if (env && !strcmp(env, "mma")) return 0;
    if (c->b->sm != 90 || !cg_att_h16_ok(c, a)) return 0;
    if (!(env && !strcmp(env, "wgmma")) && a->d == 64 && cg_att_causal_tail(c, a)) return 0;
    return (a->d == 64 || a->d == 128) && (a->dv == 64 || a->dv == 128);
}

/* The wgmma kernel's key tile: 128 keys (FlashAttention-3 takes 128-176 at head dim 128), its
 * consumers at 224 registers (CG_ATT_WG_CONSUMER_REGS: no spill under any mask form). Measured
 * on an H200 (session 30, bench/bench_attention.py against 64 keys with the same registers):
 * head dim 64 1.08-1.14x, head dim 128 1.04-1.06x, causal head dim 128 1.02x; BERT-base --fp16
 * at 32x512 1.7% faster. SYMC_ATTENTION_KT=64 keeps 64 (for comparison). */
int cg_att_h16_kt(int wg) {
    if (!wg) return 64;
    const char *env = getenv("SYMC_ATTENTION_KT");
    return env && !strcmp(env, "64") ? 64 : 128;
}

/* The attention step's grid cap (rt_step.resident, 0 for none): the wgmma kernel launches as many
 * blocks as the GPU holds at once, each looping over row blocks, so a block's setup (mbarriers,
 * setmaxnreg) is paid once an SM and its producer runs on into the next row block's tiles (and
 * Q, cg_att_wg_qbufs) while the consumers finish this one, where one block a row block started
 * each cold. Under a causal skip the row blocks differ in work: there the loop deals them in a
 * snake, most keys first (emit_rows_head), since a plain stride through them balanced worse than
 * the hardware's handing out of blocks (H200, session 31: causal head dim 128 5-22% slower).
 * Measured on an H200: plain head dim 64 1.03-1.30x with two Q buffers, the faster the shorter S,
 * head dim 128 within 2% (session 31); causal head dim 64 1.16-1.20x with the snake (0.140 ->
 * 0.117 ms at 8x1024, 0.386 -> 0.334 at 2x4096), causal head dim 128 the same (session 32).
 * SYMC_ATTENTION_RESIDENT=0 launches one block a row block (for comparison); =all caps the
 * mma.sync kernels' grid too. SYMC_ATTENTION_SNAKE=0 keeps one block a row block under a causal
 * skip (session 31's kernel, for comparison). */
uint32_t cg_att_resident(const ir_attention *a, int wg) {
    const char *env = getenv("SYMC_ATTENTION_RESIDENT");
    if (env && !strcmp(env, "0")) return 0;
    if (env && !strcmp(env, "all")) return 1;
    const char *snake = getenv("SYMC_ATTENTION_SNAKE"); /* 0: a causal skip keeps one block a row block */
    return wg && (!a->causal_skip || !(snake && !strcmp(snake, "0"))) ? 1 : 0;
}

/* The producer stages K and V by TMA (cp.async.bulk.tensor: one thread, one copy a 64-column
 * atom of a tile, swizzled by the copy engine), where 128 threads issued 16-32 cp.async of 16
 * bytes a tile each with its index math. The views already qualify: the kernel's views have a
 * contiguous last dim and offsets and strides of multiples of 8 halves (cg_att_h16_ok), as the
 * tensor map wants (16 bytes). Measured on an H200 (session 32, SYMC_ATTENTION_DIAG): without
 * K/V loads the kernel took 0.452 against 0.664 ms at head dim 128 (2x4096), 0.109 against
 * 0.119 at head dim 64 (32x512). SYMC_ATTENTION_TMA=0 keeps cp.async (for comparison). */
int cg_att_wg_tma(const ir_attention *a, int wg) {
    (void)a;
    const char *env = getenv("SYMC_ATTENTION_TMA");
    return wg && !(env && !strcmp(env, "0"));
}

/* Q by TMA too: at short sequences (BERT's S = 512: four key tiles a row block) a row block's Q
 * is a fifth of its loads, issued by 128 threads with their index math while the one TMA thread
 * waits for them. SYMC_ATTENTION_TMA_Q=0 keeps Q on cp.async (for comparison). */
int cg_att_wg_tma_q(const ir_attention *a, int wg) {
    const char *env = getenv("SYMC_ATTENTION_TMA_Q");
    return cg_att_wg_tma(a, wg) && !(env && !strcmp(env, "0"));
}

/* Two Q buffers where the grid is capped and they fit beside the ring (head dims 64; at 128 the
 * ring of 128-key stages fills the shared memory). SYMC_ATTENTION_QBUFS=1 keeps one (for
 * comparison). */
int cg_att_wg_qbufs(const ir_attention *a, int wg) {
    const char *env = getenv("SYMC_ATTENTION_QBUFS");
    if (!wg || !cg_att_resident(a, wg) || (env && !strcmp(env, "1"))) return 1;
    const int64_t kt = cg_att_h16_kt(1);
    const int64_t bytes = (2 * H16_ROWS * a->d + CG_ATT_WG_STAGES * kt * (a->d + a->dv)) * 2 + 1024 + CG_ATT_WG_BARS;
    return bytes <= 227 * 1024 ? 2 : 1;
}

/* one wgmma wrapper: m64n<n>k16, f32 accumulators d[n / 2], A from shared memory (ss) or
 * registers, B from shared memory, K-major unless trans_b; scale_d 0 ignores d's old values */
static symc_status emit_mma(cg_builder *b, int n, int ss, const char *type, const char *tname) {
    const int nreg = n / 2;
    char ops[1200] = "", cons[2000] = "";
    size_t po = 0, pc = 0;
    for (int i = 0; i < nreg; i++) {
        po += (size_t)snprintf(ops + po, sizeof ops - po, "%s%%%d", i ? ", " : "", i);
        pc += (size_t)snprintf(cons + pc, sizeof cons - pc, "%s\"+f\"(d[%d])", i ? ", " : "", i);
    }
    if (ss)
        return cg_source_appendf(
            b,
            "__device__ __forceinline__ void sc_wg_ss_n%d_%s(float *d, unsigned long long da, unsigned long long db, "
            "int sd) {\n"
            "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n"
            "                 \"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {%s}, %%%d, %%%d, p, 1, 1, 0, 0;\\n}\\n\"\n"
            "                 : %s\n"
            "                 : \"l\"(da), \"l\"(db), \"r\"(sd));\n"
            "}\n",
            n, tname, nreg + 2, n, type, type, ops, nreg, nreg + 1, cons);
    return cg_source_appendf(
        b,
        "__device__ __forceinline__ void sc_wg_rs_n%d_%s(float *d, const unsigned *a, unsigned long long db, int sd) "
        "{\n"
        "    asm volatile(\"{\\n.reg .pred p;\\nsetp.ne.b32 p, %%%d, 0;\\n\"\n"
        "                 \"wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s.%s {%s}, {%%%d, %%%d, %%%d, %%%d}, %%%d, p, 1, 1, "
        "1;\\n}\\n\"\n"
        "                 : %s\n"
        "                 : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"l\"(db), \"r\"(sd));\n"
        "}\n",
        n, tname, nreg + 5, n, type, type, ops, nreg, nreg + 1, nreg + 2, nreg + 3, nreg + 4, cons);
}

symc_status cg_att_wg_prelude(cg_builder *b) {
    if (b->sm != 90) return SYMC_OK;
    symc_status st = cg_source_appendf(
        b,
        "/* wgmma helpers (sm_90a: the Hopper attention kernel, codegen/cuda_emit_attention_wg.c): the\n"
        " * shared-memory matrix descriptor (128-byte swizzle), fences, commit and wait, and the products */\n"
        "#if defined(__CUDA_ARCH_FEAT_SM90_ALL)\n"
        "/* the descriptor's low word (address / 16 in bits 0-13, the leading byte offset / 16 above), and\n"
        " * the descriptor from it (the stride byte offset / 16 and the swizzle mode in the high word):\n"
        " * stepping the address is a 32-bit add to the low word (shared addresses are below 2^18) */\n"
        "__device__ __forceinline__ unsigned sc_wg_lo(unsigned addr, unsigned lbo) {\n"
        "    return ((addr & 0x3FFFFu) >> 4) | ((lbo >> 4) << 16);\n"
        "}\n"
        "__device__ __forceinline__ unsigned long long sc_wg_d(unsigned lo, unsigned sbo) {\n"
        "    return ((unsigned long long)((sbo >> 4) | (1u << 30)) << 32) | lo;\n"
        "}\n"
        "__device__ __forceinline__ void sc_wg_fence() { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); }\n"
        "__device__ __forceinline__ void sc_wg_commit() { asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: "
        "\"memory\"); }\n"
        "__device__ __forceinline__ void sc_wg_wait1() { asm volatile(\"wgmma.wait_group.sync.aligned 1;\" ::: "
        "\"memory\"); }\n"
        "__device__ __forceinline__ void sc_wg_wait0() { asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: "
        "\"memory\"); }\n"
        "__device__ __forceinline__ void sc_wg_fence_smem() { asm volatile(\"fence.proxy.async.shared::cta;\" ::: "
        "\"memory\"); }\n"
        "template <int N> __device__ __forceinline__ void sc_wg_fence_acc(float *d) {\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < N; i++) asm volatile(\"\" : \"+f\"(d[i])::\"memory\");\n"
        "}\n"
        "/* setmaxnreg: this warpgroup's registers a thread, down (giving them to the block's pool) or up */\n"
        "template <int N> __device__ __forceinline__ void sc_wg_regs_dec() {\n"
        "    asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %%0;\" ::\"n\"(N));\n"
        "}\n"
        "template <int N> __device__ __forceinline__ void sc_wg_regs_inc() {\n"
        "    asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %%0;\" ::\"n\"(N));\n"
        "}\n"
        "/* mbarriers (shared addresses): init with an arrival count, arrive, arrive when this thread's\n"
        " * cp.async copies so far have landed (noinc: counted in the init's count), wait for a phase */\n"
        "__device__ __forceinline__ void sc_mb_init(unsigned a, unsigned n) {\n"
        "    asm volatile(\"mbarrier.init.shared::cta.b64 [%%0], %%1;\" ::\"r\"(a), \"r\"(n) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void sc_mb_init_fence() {\n"
        "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void sc_mb_arrive(unsigned a) {\n"
        "    asm volatile(\"{\\n.reg .b64 st;\\nmbarrier.arrive.shared::cta.b64 st, [%%0];\\n}\" ::\"r\"(a) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void sc_mb_cp_arrive(unsigned a) {\n"
        "    asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%%0];\" ::\"r\"(a) : \"memory\");\n"
        "}\n"
        "/* every thread of warpgroup barrier `id`'s 128 has p (bar.red.and over the warpgroup) */\n"
        "__device__ __forceinline__ bool sc_wg_all(int id, bool p) {\n"
        "    unsigned r;\n"
        "    asm volatile(\"{\\n.reg .pred a, b;\\nsetp.ne.u32 a, %%1, 0;\\nbarrier.red.and.pred b, %%2, 128, a;\\n\"\n"
        "                 \"selp.u32 %%0, 1, 0, b;\\n}\" : \"=r\"(r) : \"r\"((unsigned)p), \"r\"(id) : \"memory\");\n"
        "    return r != 0;\n"
        "}\n"
        "/* TMA (cp.async.bulk.tensor): one thread arrives on mbarrier a expecting `bytes`, then copies boxes\n"
        " * of tensor map m at coordinates (innermost first) into shared dst; a completes when they land */\n"
        "__device__ __forceinline__ void sc_mb_expect_tx(unsigned a, unsigned bytes) {\n"
        "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\" ::\"r\"(a), \"r\"(bytes) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void sc_tma_load2(unsigned dst, const sc_tmap *m, int c0, int c1, unsigned a) {\n"
        "    asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \"\n"
        "                 \"[%%0], [%%1, {%%2, %%3}], [%%4];\" ::\"r\"(dst), \"l\"(m), \"r\"(c0), \"r\"(c1), \"r\"(a) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void sc_tma_load3(unsigned dst, const sc_tmap *m, int c0, int c1, int c2, unsigned a) {\n"
        "    asm volatile(\"cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \"\n"
        "                 \"[%%0], [%%1, {%%2, %%3, %%4}], [%%5];\" ::\"r\"(dst), \"l\"(m), \"r\"(c0), \"r\"(c1), \"r\"(c2),\n"
        "                 \"r\"(a) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void sc_tma_load4(unsigned dst, const sc_tmap *m, int c0, int c1, int c2, int c3,\n"
        "                                             unsigned a) {\n"
        "    asm volatile(\"cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes \"\n"
        "                 \"[%%0], [%%1, {%%2, %%3, %%4, %%5}], [%%6];\" ::\"r\"(dst), \"l\"(m), \"r\"(c0), \"r\"(c1), \"r\"(c2),\n"
        "                 \"r\"(c3), \"r\"(a) : \"memory\");\n"
        "}\n"
        "__device__ __forceinline__ void sc_mb_wait(unsigned a, unsigned parity) {\n"
        "    asm volatile(\"{\\n.reg .pred p;\\nSC_MB_WAIT:\\n\"\n"
        "                 \"mbarrier.try_wait.parity.shared::cta.b64 p, [%%0], %%1;\\n@!p bra SC_MB_WAIT;\\n}\"\n"
        "                 ::\"r\"(a), \"r\"(parity) : \"memory\");\n"
        "}\n");
    static const char *const types[2][2] = {{"f16", "f16"}, {"bf16", "bf16"}};
    for (int t = 0; t < 2 && !st; t++) {
        st = emit_mma(b, cg_att_h16_kt(1), 1, types[t][0], types[t][1]); /* S = Q·Kᵀ: a key tile */
        if (!st) st = emit_mma(b, 64, 0, types[t][0], types[t][1]);
        if (!st) st = emit_mma(b, 128, 0, types[t][0], types[t][1]);
    }
    if (!st) st = cg_source_appendf(b, "#endif\n");
    return st;
}

void cg_att_wg_preamble(cg_kw *k, const char *bars, int tma, int tma_q) {
    cg_kw_body(
        k,
        "    const unsigned mb = sc_smem_addr(%s); /* qfull, qempty, full[%d], empty[%d], qfull1, qempty1 */\n"
        "    if (threadIdx.x == 0) {\n"
        "        sc_mb_init(mb, %d);\n"
        "        sc_mb_init(mb + 8, 256);\n"
        "        sc_mb_init(mb + %d, %d);\n"
        "        sc_mb_init(mb + %d, 256);\n"
        "        for (int i = 0; i < %d; i++) {\n"
        "            sc_mb_init(mb + 16 + 8 * i, %d);\n"
        "            sc_mb_init(mb + %d + 8 * i, 256);\n"
        "        }\n"
        "        sc_mb_init_fence();\n"
        "    }\n"
        "    __syncthreads();\n"
        "    unsigned gs = 0; /* key tiles so far modulo %d: the ring's stage (gs %% %d) and phase (gs >= %d) */\n"
        "    unsigned rq = 0; /* row blocks so far: Q's buffer and phase (cg_att_wg_qbuf) */\n",
        bars, CG_ATT_WG_STAGES, CG_ATT_WG_STAGES, tma_q ? 1 : 128, CG_ATT_WG_Q1_BAR, tma_q ? 1 : 128,
        CG_ATT_WG_Q1_BAR + 8, CG_ATT_WG_STAGES, tma ? 1 : 128, 16 + 8 * CG_ATT_WG_STAGES, 2 * CG_ATT_WG_STAGES,
        CG_ATT_WG_STAGES, CG_ATT_WG_STAGES);
}

/* Q's buffer for row block rq, in either role's loop (cuda_emit_attention.h says what it declares) */
void cg_att_wg_qbuf(cg_kw *k, int qbufs, int64_t qp) {
    if (qbufs == 1)
        cg_kw_body(k,
                   "        const unsigned mq = mb, qph = rq & 1u; /* Q's mbarriers (qfull; qempty at + 8), phase */\n"
                   "        unsigned short *const Qc = Qs;\n");
    else
        cg_kw_body(
            k,
            "        const unsigned mq = (rq & 1u) ? mb + %d : mb, qph = (rq >> 1) & 1u; /* Q's buffer rq %% 2 */\n"
            "        unsigned short *const Qc = Qs + (rq & 1u) * %lld;\n",
            CG_ATT_WG_Q1_BAR, (long long)(H16_ROWS * qp));
}

/* S = Q·Kᵀ: m64n{kt}k16 from shared memory, D / 16 k-steps (32 bytes along an atom each, the
 * next atom every 4), into s[0][kt / 8][4]; this warpgroup's 64 rows of Q start 8192 bytes apart.
 * The descriptors' low words are made once a tile and stepped by a 32-bit add to their address
 * field (bits 0-13, the address / 16: shared addresses stay below 2^18, so nothing carries out of
 * it). Issued and committed, not waited for. */
void cg_att_wg_qk_issue(cg_kw *k, const ir_attention *a, int kt) {
    cg_kw_body(
        k,
        "            const unsigned dq = sc_wg_lo(sc_smem_addr(Qc) + (w >> 2) * 8192, 16),\n"
        "                           dk = sc_wg_lo(sc_smem_addr(Kc), 16);\n"
        "            sc_wg_fence();\n"
        "#pragma unroll\n"
        "            for (int kk = 0; kk < %lld; kk++) /* the address field counts 16 bytes */\n"
        "                sc_wg_ss_n%d_%s(&s[0][0][0], sc_wg_d(dq + (unsigned)((kk >> 2) * %d + (kk & 3) * 32) / 16u, 1024),\n"
        "                    sc_wg_d(dk + (unsigned)((kk >> 2) * %d + (kk & 3) * 32) / 16u, 1024), kk > 0);\n"
        "            sc_wg_commit();\n",
        (long long)(a->d / 16), kt, a->qdt == SYMC_BF16 ? "bf16" : "f16", H16_ROWS * 128, kt * 128);
}

void cg_att_wg_qk(cg_kw *k, const ir_attention *a, int kt) {
    cg_att_wg_qk_issue(k, a, kt);
    cg_kw_body(k,
               "            sc_wg_wait0();\n"
               "            sc_wg_fence_acc<%d>(&s[0][0][0]);\n",
               kt / 2);
}

/* P's A fragments into pa[kt / 16][4] from the probabilities in s (keys 16j..16j+15 from two
 * score tiles) */
void cg_att_wg_pack(cg_kw *k, const ir_attention *a, int kt) {
    const char *pack = a->qdt == SYMC_BF16 ? "sc_pack_bf16" : "sc_pack_f16";
    cg_kw_body(k,
               "#pragma unroll\n"
               "            for (int j = 0; j < %d; j++) {\n"
               "                pa[j][0] = %s(s[0][2 * j][0], s[0][2 * j][1]);\n"
               "                pa[j][1] = %s(s[0][2 * j][2], s[0][2 * j][3]);\n"
               "                pa[j][2] = %s(s[0][2 * j + 1][0], s[0][2 * j + 1][1]);\n"
               "                pa[j][3] = %s(s[0][2 * j + 1][2], s[0][2 * j + 1][3]);\n"
               "            }\n",
               kt / 16, pack, pack, pack, pack);
}

/* O += P·V from pa and the V tile at `v`, read MN-major (its 64-column atoms kt * 128 bytes
 * apart), m64n{DV}k16 a 16-key step, after a wgmma.fence. Issued, not committed (the caller
 * commits) nor waited for. */
void cg_att_wg_pv_issue(cg_kw *k, const ir_attention *a, int kt, const char *v) {
    cg_kw_body(
        k,
        "            const unsigned dv = sc_wg_lo(sc_smem_addr(%s), %d);\n"
        "            sc_wg_fence();\n"
        "#pragma unroll\n"
        "            for (int j = 0; j < %d; j++) sc_wg_rs_n%lld_%s(&o[0][0][0], pa[j], sc_wg_d(dv + j * 128u, 1024), 1);\n",
        v, kt * 128, kt / 16, (long long)a->dv, a->qdt == SYMC_BF16 ? "bf16" : "f16");
}

void cg_att_wg_pv(cg_kw *k, const ir_attention *a, int kt) {
    cg_kw_body(k, "            unsigned pa[%d][4];\n", kt / 16);
    cg_att_wg_pack(k, a, kt);
    cg_att_wg_pv_issue(k, a, kt, "Vc");
    cg_kw_body(k,
               "            sc_wg_commit();\n"
               "            sc_wg_wait0();\n"
               "            sc_wg_fence_acc<%lld>(&o[0][0][0]);\n",
               (long long)(a->dv / 2));
}
