/* Fused attention's half tensor-core kernel (sm_80+; the driver and the
 * score function are cuda_emit_attention.c's): Q, K and V stored in one half
 * type (f16 or bf16) with head dims multiples of 16, rows copyable 16 bytes
 * at a time. mma.sync m16n8k16 in the storage's half type with fp32
 * accumulation; 4 warps, each 1 or 2 m-tiles of 16 query rows; K and V tiles
 * of 64 keys double buffered in shared memory by cp.async; the score tile
 * kept in the accumulator layout, which is P·V's A fragment layout once
 * packed to half pairs. Masks shared by every row of a key tile or every key
 * of a row are read once per tile or row (emit_tile_vals,
 * cg_att_emit_row_masks). The body is emitted in its phases, one helper
 * each: the first tiles and Q's fragments (the wgmma variant: its producer
 * warpgroup), the key-tile loop's head and Q·Kᵀ, the hoisted masks, the
 * online softmax with P·V, the store. With transformers' causal mask
 * (cg_att_causal_tail) a row block stops at its diagonal once every row has
 * an unmasked score. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cuda_emit_attention.h"

/* `type name[kt / 8][2]`: the value `val` (of the tile's key kl) for this thread's
 * kt / 4 keys of the key tile of kt keys, in the half kernel's score layout */
static void emit_tile_vals(cg_kw *k, int kt, const char *type, const char *name, const char *val) {
    cg_kw_body(k,
               "            %s %s[%d][2];\n"
               "#pragma unroll\n"
               "            for (int n = 0; n < %d; n++)\n"
               "#pragma unroll\n"
               "                for (int u = 0; u < 2; u++) {\n"
               "                    const int kl = n * 8 + 2 * t + u;\n"
               "                    %s[n][u] = %s;\n"
               "                }\n",
               type, name, kt / 8, kt / 8, name, val);
}

/* 1 when view v's storage rows can be copied 8 halves (16 bytes) at a time:
 * contiguous last dim, offset, row and batch strides provably multiples of 8 */
static int view_vec8(cg_cuda *c, const ir_att_view *v) {
    int64_t one;
    if (!sym_is_const(c->m->syms, v->strides[3], &one) || one != 1 || v->off % 8) return 0;
    for (int d = 0; d < 3; d++)
        if (sym_prove_divisible(c->m->syms, v->strides[d], 8) != SYM_TRUE) return 0;
    return 1;
}

/* the half tensor-core kernel applies: Q, K, V stored in one half type, head
 * dims multiples of 16 up to 128, rows copyable 16 bytes at a time, sm_80+ */
int cg_att_h16_ok(cg_cuda *c, const ir_attention *a) {
    return c->b->sm >= 80 && cg_is_half(a->qdt) && a->kdt == a->qdt && a->vdt == a->qdt && a->d % 16 == 0 &&
        a->dv % 16 == 0 && view_vec8(c, &a->q) && view_vec8(c, &a->k) && view_vec8(c, &a->v);
}

/* The mma.sync kernel's m-tiles a warp: 2 (a block of 128 query rows, each K and V fragment read
 * from shared memory feeding two products), or 1 (64 rows) where Sq is at most 64 throughout its
 * range. Swin's windows hold 49 tokens: a 128-row block was 62% padding rows, every one of them
 * multiplied, and a block held twice the registers and Q's shared memory it needed.
 * SYMC_ATTENTION_MT=1 or 2 sets it at any Sq (for comparison and tests). The wgmma kernel: one
 * m-tile a warp, 128 rows a block (H16_ROWS). */
int cg_att_h16_mt(cg_cuda *c, const ir_attention *a, int wg) {
    if (wg) return 1;
    const char *env = getenv("SYMC_ATTENTION_MT");
    if (env && (!strcmp(env, "1") || !strcmp(env, "2"))) return env[0] - '0';
    return sym_range_of(c->m->syms, a->sq).hi <= 64 ? 1 : H16_MT;
}

int cg_att_h16_rows(cg_cuda *c, const ir_attention *a, int wg) { return wg ? H16_ROWS : 64 * cg_att_h16_mt(c, a, wg); }

/* Q's fragments stay in registers for the row block when the head dim is
 * small; from D = 128 they are read from shared memory at each use (the
 * registers go to the output accumulators) */
static int h16_q_in_regs(int64_t d) { return d <= 64; }

/* the half kernel's sizes: head dims D and DV, the shared row pitches QP and VP (halves), NV
 * n-tiles of 8 output columns, KD k-steps of 16 along D; qreg: Q's fragments in registers; mt:
 * 16-row m-tiles a warp; the mma and pack helpers of the storage's half type. wg: the wgmma
 * variant (cuda_emit_attention_wg.c): 256 threads, the tiles in swizzled 64-column atoms
 * (pitches D and DV), one m-tile a warp, its own products for Q·Kᵀ and P·V. tail: the causal tail
 * (cg_att_causal_tail). kt: keys a tile. */
typedef struct h16_shape {
    int64_t D, DV, QP, VP, NV, KD;
    int kt;   /* keys a tile (cg_att_h16_kt) */
    int rows; /* query rows a block (cg_att_h16_rows) */
    int qreg, mt, wg, tail;
    int overlap; /* the wgmma kernel's softmax under the previous tile's P·V (h16_wg_overlap) */
    int qbufs;   /* the wgmma kernel's Q buffers (cg_att_wg_qbufs) */
    int early;   /* the tile's masks read before its Q·Kᵀ is issued (h16_early_masks) */
    int tma;     /* the wgmma kernel's producer stages K and V by TMA (cg_att_wg_tma) */
    int tma_q;   /* and Q (cg_att_wg_tma_q) */
    const char *mma, *pack;
} h16_shape;

/* The wgmma kernel reads a tile's row-shared masks (a padding mask's keys: h16_tile_masks) right
 * after the tile's wait, before its Q·Kᵀ is issued, so the loads are in flight while the tensor
 * cores run; after the product they stalled the warpgroup between the scores and the softmax.
 * Measured on an H200 (session 32, BERT-base --fp16 at 32x512, padding mask): the attention step
 * 0.1503 -> 0.1488-0.1496 ms, the model 7.686 / 7.713 -> 7.648 / 7.654 ms (two runs each).
 * SYMC_ATTENTION_MASK_EARLY=0 reads them after Q·Kᵀ (for comparison). */
static int h16_early_masks(int wg) {
    const char *env = getenv("SYMC_ATTENTION_MASK_EARLY");
    return wg && !(env && !strcmp(env, "0"));
}

/* the wgmma kernel overlaps a tile's softmax with the previous tile's P·V (h16_scores): a
 * consumer issues this tile's Q·Kᵀ, then the previous tile's P·V (its P kept packed in pa), waits
 * for the scores only, and waits for P·V before the output's rescale. At head dim 128 (at 64 it
 * measured slower); not under a causal skip or tail, whose warpgroups skip tiles. */
static int h16_wg_overlap(const ir_attention *a, int wg, int tail) {
    const char *env = getenv("SYMC_ATTENTION_OVERLAP"); /* 0: off, for comparison */
    return wg && a->dv >= 128 && !a->causal_skip && !tail && !(env && !strcmp(env, "0"));
}

/* The tiles' cp.async copies with their addresses made once a tile and stepped by constants
 * (emit_cp_tile), where each copy computed its row, chunk, swizzle and source from its index:
 * about 20 instructions a copy, 16-32 copies a thread a key tile, on the ALU pipe the consumers'
 * softmax needs (the busiest pipe of the wgmma kernel under Nsight Compute, 34%; its loads cost
 * 10-32% of its time, H200, session 32). SYMC_ATTENTION_CP_STRIDED=0 keeps the indexed loop
 * (for comparison). */
static int cg_att_cp_strided(void) {
    const char *env = getenv("SYMC_ATTENTION_CP_STRIDED");
    return !(env && !strcmp(env, "0"));
}

/* where chunk column c8 of tile row `r` (a variable's name) goes in a tile of `rows` rows: pitch
 * `ld` halves, or (wg) the swizzled atoms (emit_cp_tile) */
static void tile_index(char *buf, size_t cap, const h16_shape *h, int64_t rows, int64_t ld, const char *r) {
    if (h->wg)
        snprintf(buf, cap, "(c8 >> 6) * %lld + %s * 64 + ((((c8 >> 3) & 7) ^ (%s & 7)) << 3)", (long long)(rows * 64),
                 r, r);
    else snprintf(buf, cap, "%s * %lld + c8", r, (long long)ld);
}

/* stage `rows` rows [row0, row0 + rows) x `cols` halves of `ptr` (row stride rs) into shared
 * `dst` with 16-byte cp.async by 128 threads (`tid` their index), zeros past `lim`: rows of pitch
 * `ld` halves, or (wg) the swizzled atoms [cols / 64][rows][64], whose row r holds its 16-byte
 * chunk c at chunk c ^ (r % 8) */
static void emit_cp_tile(cg_kw *k, const h16_shape *h, const char *dst, int64_t ld, const char *ptr, const char *rs,
                         int64_t rows, int64_t cols, const char *row0, const char *lim, const char *tid) {
    const int64_t cpr = cols / 8, rp = cpr > 0 && 128 % cpr == 0 ? 128 / cpr : 0; /* chunks a row, rows a pass */
    if (cg_att_cp_strided() && rp && rows % rp == 0 && (!h->wg || rp % 8 == 0)) {
        /* A thread copies one chunk column c8 of rows r0 + rp * i: its source and destination
         * step by constants, made once (the swizzle's r % 8 is r0 % 8 for every i, rp being a
         * multiple of 8), so a copy costs its bound compare and two adds, not its index math. */
        char base[128];
        tile_index(base, sizeof base, h, rows, ld, "r0");
        cg_kw_body(k,
                   "            {\n"
                   "                const int r0 = %s / %lld, c8 = (%s - r0 * %lld) * 8;\n"
                   "                long long rr = %s + r0;\n"
                   "                const unsigned short *src = %s + rr * %s + c8;\n"
                   "                const long long sstep = %lld * %s;\n"
                   "                unsigned short *dp = &%s[%s];\n"
                   "#pragma unroll 4\n"
                   "                for (int i = 0; i < %lld; i++, rr += %lld, src += sstep, dp += %lld) {\n"
                   "                    const bool in = rr < %s;\n"
                   "                    sc_cp16(dp, in ? src : %s, in);\n"
                   "                }\n"
                   "            }\n",
                   tid, (long long)cpr, tid, (long long)cpr, row0, ptr, rs, (long long)rp, rs, dst, base,
                   (long long)(rows / rp), (long long)rp, (long long)(rp * (h->wg ? 64 : ld)), lim, ptr);
        return;
    }
    char idx[128];
    tile_index(idx, sizeof idx, h, rows, ld, "r");
    cg_kw_body(k,
               "            for (int e = %s; e < %lld; e += 128) {\n"
               "                const int r = e / %lld, c8 = (e - r * %lld) * 8;\n"
               "                const bool in = %s + r < %s;\n"
               "                sc_cp16(&%s[%s], %s + (in ? (%s + r) * %s + c8 : 0), in);\n"
               "            }\n",
               tid, (long long)(rows * (cols / 8)), (long long)(cols / 8), (long long)(cols / 8), row0, lim, dst, idx,
               ptr, row0, rs);
}

/* the key tile from row0 of K and V into Kdst and Vdst */
static void emit_kv_tile(cg_kw *k, const h16_shape *h, const char *kdst, const char *vdst, const char *ksr,
                         const char *vsr, const char *row0, const char *tid) {
    emit_cp_tile(k, h, kdst, h->QP, "kp", ksr, h->kt, h->D, row0, "Sk", tid);
    emit_cp_tile(k, h, vdst, h->VP, "vp", vsr, h->kt, h->DV, row0, "Sk", tid);
}

/* the row block's key range (causal: up to its last row) */
static void h16_key_range(cg_kw *k, const ir_attention *a, int kt, int rows) {
    cg_kw_body(k, "        const long long q0 = qt * %d;\n", rows);
    if (a->causal_skip)
        cg_kw_body(k,
                   "        const long long kend = Sk < q0 + %d ? Sk : q0 + %d; /* causal: later keys are masked */\n",
                   rows, rows);
    else cg_kw_body(k, "        const long long kend = Sk;\n");
    cg_kw_body(k, "        const long long ntile = (kend + %d) / %d;\n", kt - 1, kt);
}

/* The wgmma kernel's ring position gs, the same in every warpgroup: `step`, the key-tile loop's
 * increment that moves it (modulo twice the stages), and `stage`, the declaration of this tile's
 * stage st; its phase is gs >= stages. */
static void wg_ring(char *step, size_t step_cap, char *stage, size_t stage_cap) {
    snprintf(step, step_cap, ", gs = gs == %du ? 0u : gs + 1u", 2 * CG_ATT_WG_STAGES - 1);
    snprintf(stage, stage_cap, "const int st = gs < %du ? (int)gs : (int)gs - %d;", CG_ATT_WG_STAGES, CG_ATT_WG_STAGES);
}

/* the wgmma kernel's producer warpgroup (threads 256..383), inside its own loop over the row
 * blocks (cg_att_emit_h16_producer): for each row block, Q's rows once the consumers are done
 * with the previous ones (mbarrier qempty), then every key tile of K and V into the ring of
 * CG_ATT_WG_STAGES stages, each once its consumers released it (empty[st]); cp.async's completion
 * arrives on qfull and full[st] (cp.async.mbarrier.arrive.noinc: 128 arrivals a phase), at the
 * ring's position gs (wg_ring). */
/* The tensor map of view v (K or V: kt rows of `cols` halves a tile, of `rows` = Sk; Q: a row
 * block's, of Sq) for the TMA producer: dims (cols, rows[, n1][, n0]) innermost first, a batch dim left out where its stride is 0 (a
 * broadcast: the copy's coordinate is then 0 throughout), boxes of one 64-column atom by kt rows,
 * swizzled 128 bytes as the wgmma descriptors read them. *coords gets the copy's coordinates
 * after the column and the row: ", (int)b1, (int)b0" or fewer. Returns the map's parameter. */
static const char *wg_tmap(cg_kw *k, const ir_attention *a, const ir_att_view *v, sym_expr rows, int64_t cols, int kt,
                           int *rank, char *coords, size_t cap) {
    sym_table *T = k->c->m->syms;
    sym_expr dims[4] = {sym_const(T, cols), rows, 0, 0}, strides[4] = {0, v->strides[2], 0, 0};
    uint32_t box[4] = {64, (uint32_t)kt, 1, 1};
    int r = 2;
    int64_t z;
    size_t n = 0;
    coords[0] = '\0';
    if (!(sym_is_const(T, v->strides[1], &z) && z == 0)) { /* grouped-query K and V: the kv heads */
        dims[r] = v->group > 1 ? sym_floordiv(T, a->n1, sym_const(T, v->group)) : a->n1, strides[r++] = v->strides[1];
        if (v->group > 1) n += (size_t)snprintf(coords + n, cap - n, ", (int)(b1 / %lld)", (long long)v->group);
        else n += (size_t)snprintf(coords + n, cap - n, ", (int)b1");
    }
    if (!(sym_is_const(T, v->strides[0], &z) && z == 0)) {
        dims[r] = a->n0, strides[r++] = v->strides[0];
        if (n < cap) snprintf(coords + n, cap - n, ", (int)b0");
    }
    *rank = r;
    return cg_kw_tmap(k, v->t, sym_const(T, v->off), r, dims, strides, box, 3);
}

/* the TMA producer's copies of one key tile (thread pt 0): expect the tile's bytes on its full
 * barrier, then one copy a 64-column atom of K and of V */
static void wg_tma_tile(cg_kw *k, const ir_attention *a, const h16_shape *h) {
    const struct {
        const ir_att_view *v;
        int64_t cols;
        const char *dst;
    } ops[2] = {{&a->k, h->D, "Kn"}, {&a->v, h->DV, "Vn"}};
    cg_kw_body(k,
               "                const unsigned fb = mb + 16 + 8 * st; /* the stage's full barrier */\n"
               "                sc_mb_expect_tx(fb, %lldu);\n",
               (long long)(h->kt * (h->D + h->DV) * 2));
    for (int o = 0; o < 2; o++) {
        char coords[48], map[16];
        int rank;
        snprintf(map, sizeof map, "%s",
                 wg_tmap(k, a, ops[o].v, a->sk, ops[o].cols, h->kt, &rank, coords, sizeof coords));
        for (int64_t j = 0; j < ops[o].cols / 64; j++)
            cg_kw_body(k, "                sc_tma_load%d(sc_smem_addr(%s + %lld), &%s, %lld, (int)k1%s, fb);\n", rank,
                       ops[o].dst, (long long)(j * h->kt * 64), map, (long long)(j * 64), coords);
    }
}

static void h16_wg_producer(cg_kw *k, const ir_attention *a, const h16_shape *h, const char *qsr, const char *ksr,
                            const char *vsr) {
    char step[64], stage[80];
    wg_ring(step, sizeof step, stage, sizeof stage);
    cg_kw_body(k, "        %s\n", CG_SM90A_MARK);
    cg_att_wg_qbuf(k, h->qbufs, h->QP);
    cg_kw_body(k,
               "        {\n"
               "            const int pt = threadIdx.x - 256;\n"
               "            sc_mb_wait(mq + 8, qph ^ 1u); /* the consumers are done with this buffer's last Q */\n"
               "            {\n");
    if (h->tma_q) { /* K's and V's maps first (tm0, tm1: the same maps the tiles' copies name), then Q's */
        char cq[48], ck[48];
        int rq, rk;
        (void)wg_tmap(k, a, &a->k, a->sk, h->D, h->kt, &rk, ck, sizeof ck);
        (void)wg_tmap(k, a, &a->v, a->sk, h->DV, h->kt, &rk, ck, sizeof ck);
        const char *mq = wg_tmap(k, a, &a->q, a->sq, h->D, h->rows, &rq, cq, sizeof cq);
        cg_kw_body(k,
                   "            if (pt == 0) { /* Q's row block by TMA: its full barrier counts the bytes */\n"
                   "                sc_mb_expect_tx(mq, %lldu);\n",
                   (long long)(h->rows * h->D * 2));
        for (int64_t j = 0; j < h->D / 64; j++)
            cg_kw_body(k, "                sc_tma_load%d(sc_smem_addr(Qc + %lld), &%s, %lld, (int)q0%s, mq);\n", rq,
                       (long long)(j * h->rows * 64), mq, (long long)(j * 64), cq);
        cg_kw_body(k, "            }\n            }\n");
    } else {
        emit_cp_tile(k, h, "Qc", h->QP, "qp", qsr, h->rows, h->D, "q0", "Sq", "pt");
        cg_kw_body(k,
                   "            }\n"
                   "            sc_mb_cp_arrive(mq);\n");
    }
    cg_kw_body(k,
               "            for (long long it = 0; it < ntile%s; it++%s) {\n"
               "                %s\n"
               "                sc_mb_wait(mb + %d + 8 * st, (unsigned)(gs >= %du) ^ 1u); /* stage st is free */\n"
               "                unsigned short *Kn = Ks + st * %lld, *Vn = Vs + st * %lld;\n"
               "                const long long k1 = it * %d;\n",
               h->tma ? " && pt == 0" : "", step, stage, 16 + 8 * CG_ATT_WG_STAGES, CG_ATT_WG_STAGES,
               (long long)(h->kt * h->QP), (long long)(h->kt * h->VP), h->kt);
    if (h->tma) wg_tma_tile(k, a, h); /* one thread: the ring's position gs is its own */
    else {
        emit_kv_tile(k, h, "Kn", "Vn", ksr, vsr, "k1", "pt");
        cg_kw_body(k, "                sc_mb_cp_arrive(mb + 16 + 8 * st);\n");
    }
    cg_kw_body(k,
               "            }\n"
               "        }\n"
               "        rq++;\n"
               "    }\n");
}

/* the row block's start: its key range, Q's tile and the first K and V tiles in shared memory,
 * and Q's fragments in registers when they stay there (the wgmma kernel: its producer) */
static void h16_first_tiles(cg_kw *k, const ir_attention *a, const h16_shape *h, const char *qsr, const char *ksr,
                            const char *vsr) {
    const int64_t D = h->D, QP = h->QP, KD = h->KD;
    h16_key_range(k, a, h->kt, h->rows);
    if (h->wg) { /* the producer (cg_att_emit_h16_producer) loads the tiles */
        cg_att_wg_qbuf(k, h->qbufs, h->QP);
        cg_kw_body(k, "        sc_mb_wait(mq, qph); /* Q's rows are in */\n");
        return;
    }
    cg_kw_body(k, "        __syncthreads(); /* the previous row block is done with the tiles */\n        {\n");
    emit_cp_tile(k, h, "Qs", QP, "qp", qsr, h->rows, D, "q0", "Sq", "threadIdx.x");
    cg_kw_body(k, "        }\n        if (ntile > 0) {\n            const long long k0 = 0;\n");
    emit_kv_tile(k, h, "Ks", "Vs", ksr, vsr, "k0", "threadIdx.x");
    cg_kw_body(k,
               "        }\n"
               "        sc_cp_commit();\n"
               "        sc_cp_wait<0>();\n"
               "        __syncthreads();\n");
    if (h->qreg)
        cg_kw_body(
            k,
            "        unsigned qf[%d][%lld][4];\n"
            "#pragma unroll\n"
            "        for (int mt = 0; mt < %d; mt++)\n"
            "#pragma unroll\n"
            "            for (int kk = 0; kk < %lld; kk++)\n"
            "                sc_ldsm4(qf[mt][kk], &Qs[(w * %d + mt * 16 + (lane & 15)) * %lld + kk * 16 + (lane >> 4) * 8]);\n",
            h->mt, (long long)KD, h->mt, (long long)KD, 16 * h->mt, (long long)QP);
}

/* Q·Kᵀ by mma.sync into s[mt][n][4] (the accumulator layout): Q's fragments from registers or
 * shared memory, K's by ldmatrix */
static void h16_qk(cg_kw *k, const h16_shape *h) {
    const int64_t QP = h->QP, KD = h->KD;
    const int qreg = h->qreg;
    const char *mma = h->mma;
    cg_kw_body(k,
               "#pragma unroll\n"
               "            for (int kk = 0; kk < %lld; kk++) {\n",
               (long long)KD);
    if (!qreg)
        cg_kw_body(
            k,
            "                unsigned qa[%d][4];\n"
            "#pragma unroll\n"
            "                for (int mt = 0; mt < %d; mt++)\n"
            "                    sc_ldsm4(qa[mt], &Qs[(w * %d + mt * 16 + (lane & 15)) * %lld + kk * 16 + (lane >> 4) * 8]);\n",
            h->mt, h->mt, 16 * h->mt, (long long)QP);
    cg_kw_body(
        k,
        "#pragma unroll\n"
        "                for (int np = 0; np < %d; np++) {\n"
        "                    unsigned b[4];\n"
        "                    sc_ldsm4(b, &Kc[(np * 16 + (lane & 7) + ((lane >> 4) << 3)) * %lld + kk * 16 + ((lane >> 3) & 1) * 8]);\n"
        "#pragma unroll\n"
        "                    for (int mt = 0; mt < %d; mt++) {\n"
        "                        %s(s[mt][2 * np], %s, b);\n"
        "                        %s(s[mt][2 * np + 1], %s, b + 2);\n"
        "                    }\n"
        "                }\n"
        "            }\n",
        h->kt / 16, (long long)QP, h->mt, mma, qreg ? "qf[mt][kk]" : "qa[mt]", mma, qreg ? "qf[mt][kk]" : "qa[mt]");
}

/* the row-shared masks (padding masks [B, 1, 1, S]) and IR_ATT_ADD_SEL leaves: this thread's 16
 * keys read once a tile, mkv<i>[n][u] and mkb<i>_<j>[n][u] */
static void h16_tile_masks(cg_kw *k, const ir_attention *a, int kt) {
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const ir_att_op *op = &a->ops[i];
        if (!cg_att_mask_row_shared(k->c, op)) continue;
        char msk[48], off[96], ld[700];
        cg_att_dim(k, op->mask.strides[3], msk, sizeof msk);
        snprintf(off, sizeof off, "(k0 + kl) * %s", msk);
        char mp[16];
        snprintf(mp, sizeof mp, "mk%u", i);
        const int fl = op->kind != IR_ATT_WHERE; /* a float added to the score */
        if (op->kind == IR_ATT_ADD_MASK) cg_att_load(ld, sizeof ld, k->c->m->tensors[op->mask.t].dtype, mp, off);
        else snprintf(ld, sizeof ld, "(%s[%s] != 0)", mp, off);
        char name[24], val[800];
        snprintf(name, sizeof name, "mkv%u", i);
        snprintf(val, sizeof val, "kl < rem ? %s : %s", ld, fl ? "0.f" : "false");
        emit_tile_vals(k, kt, fl ? "float" : "bool", name, val);
    }
    for (uint32_t i = 0; i < a->n_ops; i++) {
        const ir_att_op *op = &a->ops[i];
        for (uint32_t j = 0; op->kind == IR_ATT_ADD_SEL && j < op->n_leaf; j++) {
            if (!cg_att_leaf_row_shared(k->c, &op->leaf[j])) continue;
            char msk[48];
            cg_att_dim(k, op->leaf[j].v.strides[3], msk, sizeof msk);
            char name[32], val[256];
            snprintf(name, sizeof name, "mkb%u_%u", i, j);
            snprintf(val, sizeof val, "kl < rem && mk%u_%u[(k0 + kl) * %s] != 0", i, j, msk);
            emit_tile_vals(k, kt, "bool", name, val);
        }
    }
}

/* the key-tile loop's head (the accumulators; the next tile's cp.async into the other buffer, or
 * in the wgmma kernel the wait for this tile's stage) and the score tile Q·Kᵀ in the accumulator
 * layout, s[mt][n][4]. The causal skip is per warp, per warpgroup in the wgmma kernel (whose
 * products are warpgroup-collective; a skipping warpgroup still waits for the stage, so that its
 * release counts in the stage's phase). */
static void h16_scores(cg_kw *k, const ir_attention *a, const h16_shape *h, const char *ksr, const char *vsr) {
    const int64_t QP = h->QP, VP = h->VP, NV = h->NV;
    char step[64], stage[80]; /* the wgmma kernel's ring position */
    wg_ring(step, sizeof step, stage, sizeof stage);
    const int overlap = h->overlap;
    char pdecl[128];
    snprintf(pdecl, sizeof pdecl,
             "        unsigned pa[%d][4]; /* the previous tile's P */\n        int pst = 0; /* its stage */\n",
             h->kt / 16);
    cg_kw_body(
        k,
        "        float m[%d][2], l[%d][2], o[%d][%lld][4];\n"
        "        float bq[%d][2]; /* per row: the exponent's B, 0 where it subtracts its max (h16_softmax) */\n"
        "        bool big = false; /* a row of this thread was past 2^22 (h16_softmax) */\n"
        "#pragma unroll\n"
        "        for (int mt = 0; mt < %d; mt++) {\n"
        "            m[mt][0] = m[mt][1] = NINF;\n"
        "            l[mt][0] = l[mt][1] = 0.f;\n"
        "            bq[mt][0] = bq[mt][1] = 0.f;\n"
        "#pragma unroll\n"
        "            for (int n = 0; n < %lld; n++) o[mt][n][0] = o[mt][n][1] = o[mt][n][2] = o[mt][n][3] = 0.f;\n"
        "        }\n"
        "%s"
        "        for (long long it = 0; it < ntile; it++%s) {\n"
        "            const long long k0 = it * %d;\n"
        "            const int rem = Sk - k0 < %d ? (int)(Sk - k0) : %d; /* keys of this tile in range */\n",
        h->mt, h->mt, h->mt, (long long)NV, h->mt, h->mt, (long long)NV, overlap ? pdecl : "", h->wg ? step : "", h->kt,
        h->kt, h->kt);
    if (h->wg)
        cg_kw_body(k,
                   "            %s\n"
                   "            sc_mb_wait(mb + 16 + 8 * st, (unsigned)(gs >= %du)); /* the tile is in */\n"
                   "            sc_wg_fence_smem(); /* cp.async's writes, for wgmma's reads */\n"
                   "            const unsigned short *Kc = Ks + st * %lld, *Vc = Vs + st * %lld;\n",
                   stage, CG_ATT_WG_STAGES, (long long)(h->kt * QP), (long long)(h->kt * VP));
    else {
        cg_kw_body(k, "            const unsigned short *Kc = Ks + (it & 1) * %lld, *Vc = Vs + (it & 1) * %lld;\n",
                   (long long)(h->kt * QP), (long long)(h->kt * VP));
        if (h->tail) {
            char seen[200];
            cg_att_rows_seen(seen, sizeof seen, h->mt);
            cg_kw_body(
                k,
                "            if (k0 >= q0 + %d && __syncthreads_and(%s)) {\n"
                "                /* the causal tail: every row has an unmasked score, the keys left are all after\n"
                "                 * the block's rows (probability 0); this tile's copies land before a reuse */\n"
                "                sc_cp_wait<0>();\n"
                "                break;\n"
                "            }\n",
                h->rows, seen);
        }
        cg_kw_body(
            k,
            "            if (it + 1 < ntile) { /* the next tile into the other buffer */\n"
            "                unsigned short *Kn = Ks + ((it + 1) & 1) * %lld, *Vn = Vs + ((it + 1) & 1) * %lld;\n"
            "                const long long k1 = k0 + %d;\n",
            (long long)(h->kt * QP), (long long)(h->kt * VP), h->kt);
        emit_kv_tile(k, h, "Kn", "Vn", ksr, vsr, "k1", "threadIdx.x");
        cg_kw_body(k,
                   "                sc_cp_commit();\n"
                   "                sc_cp_wait<1>();\n"
                   "            } else sc_cp_wait<0>();\n"
                   "            __syncthreads();\n");
    }
    char mine[64]; /* the tile has keys up to this warp(group)'s rows */
    if (h->wg) snprintf(mine, sizeof mine, "k0 <= q0 + (w >> 2) * 64 + 63");
    else snprintf(mine, sizeof mine, "k0 <= q0 + w * %d + %d", 16 * h->mt, 16 * h->mt - 1);
    char cond[480], seen[200];
    cg_att_rows_seen(seen, sizeof seen, h->mt);
    if (a->causal_skip) snprintf(cond, sizeof cond, "%s", mine);
    else if (h->tail) /* the causal tail: past its rows only while a row has no unmasked score */
        snprintf(cond, sizeof cond, "%s || !%s%s)", mine,
                 h->wg ? "sc_wg_all(1 + (w >> 2), " : "__all_sync(0xffffffffu, ", seen);
    else snprintf(cond, sizeof cond, "true");
    cg_kw_body(k,
               "            if (%s) { /* else every key of the tile is after the %s last row: masked (causal) */\n"
               "            float s[%d][%d][4];\n",
               cond, h->wg ? "warpgroup's" : "warp's", h->mt, h->kt / 8);
    if (h->early) h16_tile_masks(k, a, h->kt);
    if (overlap) { /* this tile's Q·Kᵀ, then the previous tile's P·V; the scores waited for */
        cg_att_wg_qk_issue(k, a, h->kt);
        cg_kw_body(k,
                   "            if (it > 0) {\n"
                   "                const unsigned short *Vp = Vs + pst * %lld;\n",
                   (long long)(h->kt * VP));
        cg_att_wg_pv_issue(k, a, h->kt, "Vp");
        /* wgmma only in the branch: ptxas serializes every wgmma when the waits differ by path */
        cg_kw_body(k,
                   "            }\n"
                   "            sc_wg_commit(); /* P·V's group, or an empty one on the first tile */\n"
                   "            sc_wg_wait1(); /* the scores; P·V runs on under the softmax */\n"
                   "            sc_wg_fence_acc<%d>(&s[0][0][0]);\n",
                   h->kt / 2);
        return;
    }
    if (h->wg) { /* its first product ignores s's values */
        cg_att_wg_qk(k, a, h->kt);
        return;
    }
    cg_kw_body(
        k,
        "#pragma unroll\n"
        "            for (int mt = 0; mt < %d; mt++)\n"
        "#pragma unroll\n"
        "                for (int n = 0; n < %d; n++) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;\n",
        h->mt, h->kt / 8);
    h16_qk(k, h);
}

/* The score function, the bounds and the online softmax over the 4 lanes of a row, in base 2.
 *
 * The scores and each row's max come first, in two copies: a tile whose 64 keys are all in range
 * (every tile but the last) has no bound compare. The row's max m is then kept stale while the
 * tile's max stays within TAU (8 in base 2) above it: a probability is then at most 2^8, nothing
 * a float or a half cannot hold, and the sum and the output, taken against the same m, come out
 * the same (FlashAttention-4's rule). A row whose max moves past it rescales its sum and its
 * output columns, the warp's output only when one of its rows moved (a vote): most tiles after
 * the first skip those 2 * DV / 8 multiplies a row.
 *
 * The probability is ex2(v * A + B), one multiply-add (A = log2(e), B = -m * A rounded): fmaf
 * forms v * A + B exactly before its one rounding, so every probability of a row is 2^((v - m) * A +
 * e) with the same e = m * A + B, the rounding of B, exactly representable (fmaf(m, A, B)). The sum
 * and the output carry the common factor 2^e, which the final o / L cancels, and a rescale from max
 * m to m' multiplies by ex2((m - m') * A + e' - e), so tiles taken against different maxima add
 * exactly. |e| is at most half an ulp of m * A: a row with |m * A| < 2^22 (every row of a model
 * with sane scores) has |e| <= 1/8. A row beyond that (a fully masked row under a -1e9 fill, bf16
 * products near float32's largest, a row masked by float32's lowest) would hold a factor no half
 * could carry, so such a row takes e = 0 and the probabilities as ex2((v - m) * A): its scores
 * are made v - m first, and the thread's other rows v - 0 (a flag the rescale sets and never
 * clears: one branch a tile and a few instructions in the loop, not a second copy of the
 * exponentials); the subtraction is exact there or the exponential is 0 in any
 * base, as in the reference. A row's B and subtrahend change with its max only, so a tile whose
 * maxima stay costs the max and one multiply-add a score, nothing more a row. When the score function is
 * one positive scale on f16 Q and K (cg_att_pure_scale) the max is taken of the raw products and
 * the scale folds into A (no multiply a score). */
static void h16_softmax(cg_kw *k, const ir_attention *a, const h16_shape *h) {
    const int64_t NV = h->NV;
    double mul = 1.0;
    const int pure = cg_att_pure_scale(k->c, a, &mul);
    char a0[64], tau[64];
    cg_float_literal(a0, sizeof a0, 1.4426950408889634 * mul, SYMC_F32);
    cg_float_literal(tau, sizeof tau, 8.0 * 0.6931471805599453 / mul, SYMC_F32); /* 8 in base 2, in v's units */
    cg_kw_body(k, "            float mxa[%d][2];\n", h->mt);
    char full[64];
    snprintf(full, sizeof full, "if (rem == %d) { /* every key of the tile in range */", h->kt);
    for (int part = 0; part < 2; part++) {
        cg_kw_body(k,
                   "            %s\n"
                   "#pragma unroll\n"
                   "            for (int mt = 0; mt < %d; mt++)\n"
                   "#pragma unroll\n"
                   "            for (int h = 0; h < 2; h++) {\n"
                   "                const long long qi = q0 + rb + mt * 16 + g + 8 * h;\n"
                   "                float mx = NINF;\n",
                   part ? "} else { /* the last tile: keys past Sk are -inf */" : full, h->mt);
        cg_att_emit_row_masks(k, a);
        cg_kw_body(k,
                   "#pragma unroll\n"
                   "                for (int n = 0; n < %d; n++)\n"
                   "#pragma unroll\n"
                   "                    for (int u = 0; u < 2; u++) {\n"
                   "                        const int kl = n * 8 + 2 * t + u;\n"
                   "                        const long long kj = k0 + kl;\n"
                   "                        const bool ok = qi < Sq && kl < rem;\n"
                   "                        float v = s[mt][n][2 * h + u];\n"
                   "                        (void)ok;\n"
                   "                        (void)kj;\n",
                   h->kt / 8);
        if (pure) cg_kw_body(k, "                        /* the scale (%.17g) is folded into the exponent */\n", mul);
        else cg_att_emit_chain_h(k, a, 1);
        if (part) cg_kw_body(k, "                        v = kl < rem ? v : NINF;\n");
        cg_kw_body(k,
                   "                        s[mt][n][2 * h + u] = v;\n"
                   "                        mx = fmaxf(mx, v);\n"
                   "                    }\n"
                   "                mxa[mt][h] = mx;\n"
                   "            }\n");
    }
    cg_kw_body(k,
               "            }\n"
               "            const float ea = %s; /* A: log2(e), times a folded scale */\n"
               "            float re[%d][2];\n"
               "            bool up = false; /* a row of this thread moved its max */\n"
               "#pragma unroll\n"
               "            for (int mt = 0; mt < %d; mt++)\n"
               "#pragma unroll\n"
               "            for (int h = 0; h < 2; h++) {\n"
               "                float mx = mxa[mt][h];\n"
               "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));\n"
               "                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));\n"
               "                const float mo = m[mt][h];\n"
               "                re[mt][h] = 1.f;\n"
               "                if (mx > mo + %s) { /* past the stale max's margin: rescale, the row's B anew */\n"
               "                    re[mt][h] = sc_ex2(fmaf(mo - mx, ea, sc_att_e(mx, ea) - sc_att_e(mo, ea)));\n"
               "                    m[mt][h] = mx;\n"
               "                    l[mt][h] *= re[mt][h];\n"
               "                    up = true;\n"
               "                    const float b = __fmul_rn(-mx, ea);\n"
               "                    const bool sub = !(fabsf(b) < 4194304.f); /* |m * A| >= 2^22: e would not fit */\n"
               "                    bq[mt][h] = sub ? 0.f : b;\n"
               "                    big |= sub; /* sticky: a row that stops subtracting just subtracts 0 */\n"
               "                }\n"
               "            }\n",
               a0, h->mt, h->mt, tau);
    cg_kw_body(
        k,
        "            if (big) /* a row of this thread past 2^22: it subtracts its max */\n"
        "#pragma unroll\n"
        "                for (int mt = 0; mt < %d; mt++)\n"
        "#pragma unroll\n"
        "                    for (int h = 0; h < 2; h++) {\n"
        "                        const float c = bq[mt][h] == 0.f && m[mt][h] != NINF ? m[mt][h] : 0.f; /* B = 0 */\n"
        "#pragma unroll\n"
        "                        for (int n = 0; n < %d; n++) s[mt][n][2 * h] -= c, s[mt][n][2 * h + 1] -= c;\n"
        "                    }\n"
        "#pragma unroll\n"
        "            for (int mt = 0; mt < %d; mt++)\n"
        "#pragma unroll\n"
        "            for (int h = 0; h < 2; h++)\n"
        "#pragma unroll\n"
        "                for (int n = 0; n < %d; n++) { /* one multiply-add a score */\n"
        "                    const float p0 = sc_ex2(fmaf(s[mt][n][2 * h], ea, bq[mt][h])),\n"
        "                                p1 = sc_ex2(fmaf(s[mt][n][2 * h + 1], ea, bq[mt][h]));\n"
        "                    l[mt][h] += p0 + p1;\n"
        "                    s[mt][n][2 * h] = p0, s[mt][n][2 * h + 1] = p1;\n"
        "                }\n",
        h->mt, h->kt / 8, h->mt, h->kt / 8);
    if (h->overlap)
        cg_kw_body(k,
                   "            sc_wg_wait0(); /* the previous tile's P·V: its stage is free */\n"
                   "            sc_wg_fence_acc<%lld>(&o[0][0][0]);\n"
                   "            if (it > 0) sc_mb_arrive(mb + %d + 8 * pst);\n",
                   (long long)(h->DV / 2), 16 + 8 * CG_ATT_WG_STAGES);
    cg_kw_body(k,
               "            if (__any_sync(0xffffffffu, up)) /* a max moved: the output rescaled */\n"
               "#pragma unroll\n"
               "                for (int mt = 0; mt < %d; mt++)\n"
               "#pragma unroll\n"
               "                    for (int n = 0; n < %lld; n++) {\n"
               "                        o[mt][n][0] *= re[mt][0], o[mt][n][1] *= re[mt][0];\n"
               "                        o[mt][n][2] *= re[mt][1], o[mt][n][3] *= re[mt][1];\n"
               "                    }\n",
               h->mt, (long long)NV);
}

/* P (the probabilities packed to half pairs: the A fragments) times the V tile by mma.sync */
static void h16_pv(cg_kw *k, const h16_shape *h) {
    const int64_t DV = h->DV, VP = h->VP;
    const char *mma = h->mma, *pack = h->pack;
    cg_kw_body(
        k,
        "#pragma unroll\n"
        "            for (int j = 0; j < %d; j++) { /* keys 16j..16j+15: P's A fragments from two score tiles */\n"
        "                unsigned pa[%d][4];\n"
        "#pragma unroll\n"
        "                for (int mt = 0; mt < %d; mt++) {\n"
        "                    pa[mt][0] = %s(s[mt][2 * j][0], s[mt][2 * j][1]);\n"
        "                    pa[mt][1] = %s(s[mt][2 * j][2], s[mt][2 * j][3]);\n"
        "                    pa[mt][2] = %s(s[mt][2 * j + 1][0], s[mt][2 * j + 1][1]);\n"
        "                    pa[mt][3] = %s(s[mt][2 * j + 1][2], s[mt][2 * j + 1][3]);\n"
        "                }\n"
        "#pragma unroll\n"
        "                for (int np = 0; np < %lld; np++) {\n"
        "                    unsigned b[4];\n"
        "                    sc_ldsm4_t(b, &Vc[(j * 16 + (lane & 7) + ((lane >> 3) & 1) * 8) * %lld + np * 16 + (lane >> 4) * 8]);\n"
        "#pragma unroll\n"
        "                    for (int mt = 0; mt < %d; mt++) {\n"
        "                        %s(o[mt][2 * np], pa[mt], b);\n"
        "                        %s(o[mt][2 * np + 1], pa[mt], b + 2);\n"
        "                    }\n"
        "                }\n"
        "            }\n",
        h->kt / 16, h->mt, h->mt, pack, pack, pack, pack, (long long)(DV / 16), (long long)VP, h->mt, mma, mma);
}

/* O = o / L, stored through the output view (a fully masked row: see RL_EXPR) */
static void h16_store(cg_kw *k, const ir_attention *a, const h16_shape *h, const char *osr, const char *osd) {
    const int64_t NV = h->NV;
    char st0[160], st1[160];
    cg_store(st0, sizeof st0, a->odt, "o[mt][n][2 * h] * rL");
    cg_store(st1, sizeof st1, a->odt, "o[mt][n][2 * h + 1] * rL");
    cg_kw_body(k,
               "#pragma unroll\n"
               "        for (int mt = 0; mt < %d; mt++)\n"
               "#pragma unroll\n"
               "        for (int h = 0; h < 2; h++) {\n"
               "            float L = l[mt][h];\n"
               "            L += __shfl_xor_sync(0xffffffffu, L, 1);\n"
               "            L += __shfl_xor_sync(0xffffffffu, L, 2);\n"
               "            const float rL = %s;\n"
               "            const long long qi = q0 + rb + mt * 16 + g + 8 * h;\n"
               "            if (qi >= Sq) continue;\n"
               "#pragma unroll\n"
               "            for (int n = 0; n < %lld; n++) {\n"
               "                op[qi * %s + (n * 8 + 2 * t) * %s] = %s;\n"
               "                op[qi * %s + (n * 8 + 2 * t + 1) * %s] = %s;\n"
               "            }\n"
               "        }\n",
               h->mt, RL_EXPR(a), (long long)NV, osr, osd, st0, osr, osd, st1);
}

/* the shape of the kernel (wg: the wgmma variant) */
static h16_shape h16_shape_of(cg_kw *k, const ir_attention *a, int wg) {
    const int64_t D = a->d, DV = a->dv;
    const int tail = cg_att_causal_tail(k->c, a);
    const h16_shape h = {.D = D,
                         .DV = DV,
                         .QP = cg_att_h16_pitch(D, wg),
                         .VP = cg_att_h16_pitch(DV, wg),
                         .NV = DV / 8,
                         .KD = D / 16,
                         .kt = cg_att_h16_kt(wg),
                         .rows = cg_att_h16_rows(k->c, a, wg),
                         .qreg = h16_q_in_regs(D),
                         .mt = cg_att_h16_mt(k->c, a, wg),
                         .wg = wg,
                         .tail = tail,
                         .overlap = h16_wg_overlap(a, wg, tail),
                         .qbufs = cg_att_wg_qbufs(a, wg),
                         .early = h16_early_masks(wg),
                         .tma = cg_att_wg_tma(a, wg),
                         .tma_q = cg_att_wg_tma_q(a, wg),
                         .mma = a->qdt == SYMC_BF16 ? "sc_mma_bf16" : "sc_mma_f16",
                         .pack = a->qdt == SYMC_BF16 ? "sc_pack_bf16" : "sc_pack_f16"};
    return h;
}

void cg_att_emit_h16_producer(cg_kw *k, const ir_attention *a, const char *qsr, const char *ksr, const char *vsr) {
    const h16_shape h = h16_shape_of(k, a, 1);
    h16_key_range(k, a, h.kt, h.rows);
    h16_wg_producer(k, a, &h, qsr, ksr, vsr);
}

/* The half tensor-core kernel (sm_80+): flash attention with mma.sync
 * m16n8k16 in the storage's half type and fp32 accumulation. 4 warps, each
 * mt m-tiles of 16 query rows (cg_att_h16_mt: 2, a block of 128 rows, so
 * every K and V fragment read from shared memory feeds two products; 1 at
 * short sequences). K and V tiles of
 * 64 keys are double buffered in shared memory, the next tile's cp.async in
 * flight while the current one is used; K fragments by ldmatrix, V's by
 * ldmatrix.trans; Q's by ldmatrix, kept in registers for D <= 64. The
 * score tile stays in the accumulator layout, which is the A fragment
 * layout of P·V once packed to half pairs: P never touches shared memory.
 * Online softmax in fp32 in base 2 (one multiply-add and ex2 a score, the
 * max kept stale within a margin: h16_softmax says how, and why the float32
 * lowest value that transformers' masks add stays exact), the running max
 * and sum per row over the 4 lanes of a row; key bounds are int compares
 * against the tile's remaining keys, on the last tile only. P is rounded to
 * the half type for the product, as every flash attention does. */
void cg_att_emit_h16(cg_kw *k, const ir_attention *a, int wg, const char *qsr, const char *ksr, const char *vsr,
                     const char *osr, const char *osd) {
    const h16_shape h = h16_shape_of(k, a, wg);
    h16_first_tiles(k, a, &h, qsr, ksr, vsr);
    h16_scores(k, a, &h, ksr, vsr);
    if (!h.early) h16_tile_masks(k, a, h.kt);
    h16_softmax(k, a, &h);
    if (h.overlap) { /* P packed for the next tile's turn; the last tile's P·V after the loop */
        cg_att_wg_pack(k, a, h.kt);
        cg_kw_body(k,
                   "            pst = st;\n"
                   "            }\n"
                   "        }\n"
                   "        if (ntile > 0) { /* the last tile's P·V */\n"
                   "            const unsigned short *Vp = Vs + pst * %lld;\n",
                   (long long)(h.kt * h.VP));
        cg_att_wg_pv_issue(k, a, h.kt, "Vp");
        cg_kw_body(k,
                   "            sc_wg_commit();\n"
                   "            sc_wg_wait0();\n"
                   "            sc_wg_fence_acc<%lld>(&o[0][0][0]);\n"
                   "            sc_mb_arrive(mb + %d + 8 * pst); /* its stage may be refilled */\n"
                   "        }\n"
                   "        sc_mb_arrive(mq + 8); /* Q may be refilled */\n",
                   (long long)(h.DV / 2), 16 + 8 * CG_ATT_WG_STAGES);
        h16_store(k, a, &h, osr, osd);
        cg_kw_body(k,
                   "        rq++;\n"
                   "    }\n");
        return;
    }
    if (wg) {
        cg_att_wg_pv(k, a, h.kt);
        cg_kw_body(k,
                   "            }\n"
                   "            sc_mb_arrive(mb + %d + 8 * st); /* this stage may be refilled */\n"
                   "        }\n"
                   "        sc_mb_arrive(mq + 8); /* Q may be refilled */\n",
                   16 + 8 * CG_ATT_WG_STAGES);
        h16_store(k, a, &h, osr, osd);
        cg_kw_body(k,
                   "        rq++;\n"
                   "    }\n");
        return;
    }
    h16_pv(k, &h);
    cg_kw_body(k,
               "            }\n"
               "            __syncthreads(); /* everyone is done with this buffer before it is refilled */\n"
               "        }\n");
    h16_store(k, a, &h, osr, osd);
    cg_kw_body(k, "    }\n");
}
