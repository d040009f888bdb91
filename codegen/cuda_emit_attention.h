/* Fused attention's emitters, internal to codegen (cuda_emit_attention*.c): what the
 * driver (cuda_emit_attention.c: the kernel's parameters, batch and view bases, the score
 * function and the comment) shares with the three kernel bodies: half tensor cores
 * (cuda_emit_attention_h16.c, with its wgmma variant in cuda_emit_attention_wg.c), TF32 tensor cores (cuda_emit_attention_tf32.c) and SIMT fp32
 * (cuda_emit_attention_f32.c). Every body reads the match the fuse pass stored in the plan
 * (ir_attention, ir/ir.h; passes/fuse_attention.c) and writes into the kernel k from the
 * driver's `SC_ROWS(blk, ...) {` on, with qt, b0, b1, NINF, Sq, Sk and the views' bases qp, kp,
 * vp, op (and the masks' mk<i>, mk<i>_<j>) declared. */
#ifndef SYMC_CODEGEN_CUDA_EMIT_ATTENTION_H
#define SYMC_CODEGEN_CUDA_EMIT_ATTENTION_H

#include "codegen/cuda_emit.h"

#define ATT_TILE 64            /* keys a tile; query rows a block of the f32 and TF32 kernels */
#define H16_MT 2               /* the half kernel: 16-row m-tiles a warp (but cg_att_h16_mt) */
#define H16_ROWS (64 * H16_MT) /* query rows a block of the wgmma kernel (of the mma.sync one: cg_att_h16_rows) */

/* keys a tile of the half kernels (both products, the stages, the masks), for the mma.sync
 * kernel (64) or (wg) the wgmma one (cuda_emit_attention_wg.c) */
int cg_att_h16_kt(int wg);
/* the half kernels' 16-row m-tiles a warp and query rows a block (wg: the wgmma kernel's), for
 * attention a (cuda_emit_attention_h16.c) */
int cg_att_h16_mt(cg_cuda *c, const ir_attention *a, int wg);
int cg_att_h16_rows(cg_cuda *c, const ir_attention *a, int wg);
/* the attention step's grid cap, rt_step.resident (wg: the wgmma kernel; cuda_emit_attention_wg.c) */
uint32_t cg_att_resident(const ir_attention *a, int wg);
/* Q's buffers in the wgmma kernel's shared memory: 2 where its grid is capped (so a block has a
 * next row block, whose Q its producer loads under this one) and they fit, else 1 */
int cg_att_wg_qbufs(const ir_attention *a, int wg);
/* the wgmma kernel's producer stages K and V by TMA (tensor maps, cg_kw_tmap): 1, else cp.async */
int cg_att_wg_tma(const ir_attention *a, int wg);
/* and Q too (one copy a row block's 64-column atom by the producer's thread 0, Q's full barrier
 * counting the bytes): 1, else Q by cp.async from the producer's 128 threads */
int cg_att_wg_tma_q(const ir_attention *a, int wg);
/* in a row block of either role: mq, the mbarriers of the block's Q buffer (qfull; qempty at
 * mq + 8), qph their phase, and Qc the buffer (pitch qp halves); buffer rq % qbufs */
void cg_att_wg_qbuf(cg_kw *k, int qbufs, int64_t qp);

/* row pitch >= n with pitch % 32 == want (bank-conflict-free fragment loads) */
static inline int64_t cg_att_pitch(int64_t n, int64_t want) { return n + ((want - n % 32) % 32 + 32) % 32; }

/* The row's 1/L, computed once: a division per output element would be 32-64
 * IEEE divides a thread, whose slow-path calls (taken for some values) save
 * registers to local memory and made the kernel 3x slower inside BERT. A
 * zero_masked_rows row (L == 0) stores zeros; otherwise 0 * inf gives NaN,
 * as the reference's 0 / 0 does. */
#define RL_EXPR(a) ((a)->zero_masked ? "L == 0.f ? 0.f : 1.f / L" : "1.f / L")

/* ---- shared (cuda_emit_attention.c) ---- */
/* e's text in the kernel, into buf */
void cg_att_dim(cg_kw *k, sym_expr e, char *buf, size_t cap);
/* `(float)<element off of ptr>`: the typed load of the kernel's storage dtype */
void cg_att_load(char *buf, size_t cap, symc_dtype dt, const char *ptr, const char *off);
/* op's mask is the same for every query row (query stride 0: a padding mask [B, 1, 1, S]) */
int cg_att_mask_row_shared(cg_cuda *c, const ir_att_op *op);
/* an IR_ATT_ADD_SEL leaf viewed with query stride 0 (read once per key tile by the half kernel) */
int cg_att_leaf_row_shared(cg_cuda *c, const ir_att_leaf *l);
/* the key-shared masks' values of row qi, once per row and key tile: mr<i>, mrb<i>_<j> */
void cg_att_emit_row_masks(cg_kw *k, const ir_attention *a);
/* the score function, applied to `v` for query qi / key kj (in range when `ok`) */
void cg_att_emit_chain(cg_kw *k, const ir_attention *a);
/* the same; hoisted: row-shared masks were read once per key tile into mkv<i>[n][u] and
 * mkb<i>_<j>[n][u] (the half kernel's score layout), key-shared ones once per row */
void cg_att_emit_chain_h(cg_kw *k, const ir_attention *a, int hoisted);

/* The causal tail: transformers' causal mask, an additive where(key <= query && ..., 0, lowest)
 * last, on f16 Q and K, after bounded ops only (cg_att_causal_tail says which). The half kernel
 * then stops at the first key tile past its row block (a warp or warpgroup skips tiles past its
 * own rows) once every row has an unmasked score: the keys left score at least 9e29 below the
 * row's max, probability exactly 0. A row that has none yet (fully masked so far: softmax is
 * uniform over every key) keeps the whole key range, as before. */
int cg_att_causal_tail(cg_cuda *c, const ir_attention *a);
/* the score function is one positive scale (a literal multiplier or divisor within [1e-6, 1e6]) of
 * Q·Kᵀ on f16 Q and K: *mul the multiplier */
int cg_att_pure_scale(cg_cuda *c, const ir_attention *a, double *mul);
/* `(true && m[0][0] > -1e29f && ...)`: this thread's rows of mt m-tiles have an unmasked score */
void cg_att_rows_seen(char *buf, size_t cap, int mt);

/* ---- the bodies ---- */
/* the half kernel applies (cuda_emit_attention_h16.c) */
int cg_att_h16_ok(cg_cuda *c, const ir_attention *a);
/* qsr..osd: the views' row and element strides as text; wg: the wgmma variant (cg_att_wg_ok) */
void cg_att_emit_h16(cg_kw *k, const ir_attention *a, int wg, const char *qsr, const char *ksr, const char *vsr,
                     const char *osr, const char *osd);
/* the wgmma kernel's producer warpgroup, in its own loop over the row blocks (threads 256..383),
 * from its key range to the loop's end: K and V into the ring of stages */
void cg_att_emit_h16_producer(cg_kw *k, const ir_attention *a, const char *qsr, const char *ksr, const char *vsr);
/* the half kernel's shared row pitch (halves) for a head dim n: padded against bank conflicts,
 * or n in the wgmma variant (its swizzled atoms need none) */
static inline int64_t cg_att_h16_pitch(int64_t n, int wg) { return wg ? n : n + 8; }
/* the wgmma variant (cuda_emit_attention_wg.c): whether it applies, and its two products in the
 * half kernel's body (S = Q·Kᵀ into s, O += P·V from s) */
int cg_att_wg_ok(cg_cuda *c, const ir_attention *a);
/* the wgmma kernel's K and V stages (a ring filled by its producer warpgroup) */
#define CG_ATT_WG_STAGES 3
/* its registers a thread after setmaxnreg: the producer gives (168 - 56) x 128 to the two consumer
 * warpgroups, (224 - 168) x 256 (168 each at launch: 65536 / 384 rounded down to 8). With 168 the
 * 128-key tile spilled under a padding mask (ptxas: 218 bytes at head dim 128); with 40 for the
 * producer its own loop spilled. */
#define CG_ATT_WG_PRODUCER_REGS 56
#define CG_ATT_WG_CONSUMER_REGS 224
/* its shared bytes past the tiles: the mbarriers qfull, qempty, full[stages], empty[stages] and
 * the second Q buffer's qfull, qempty (cg_att_wg_qbufs) */
#define CG_ATT_WG_BARS (8 * (4 + 2 * CG_ATT_WG_STAGES))
#define CG_ATT_WG_Q1_BAR (16 + 16 * CG_ATT_WG_STAGES) /* the second Q buffer's qfull, past mb */
/* its preamble, before the row-block loop: the mbarriers at `bars` (their shared address mb),
 * initialized once, and the counters gs (key tiles so far modulo twice the stages: the ring's
 * stage and phase) and rq (row blocks so far) */
void cg_att_wg_preamble(cg_kw *k, const char *bars, int tma, int tma_q);
/* its two products over a key tile of kt keys (cg_att_h16_kt) */
void cg_att_wg_qk(cg_kw *k, const ir_attention *a, int kt);
void cg_att_wg_pv(cg_kw *k, const ir_attention *a, int kt);
/* the same in pieces, for the overlapped loop: Q·Kᵀ issued and committed (not waited for), P
 * packed into pa, P·V from the V tile at `v` issued (not committed) */
void cg_att_wg_qk_issue(cg_kw *k, const ir_attention *a, int kt);
void cg_att_wg_pack(cg_kw *k, const ir_attention *a, int kt);
void cg_att_wg_pv_issue(cg_kw *k, const ir_attention *a, int kt, const char *v);
/* split: 3xTF32 products (fp32 engines), else one TF32 product */
void cg_att_emit_tf32(cg_kw *k, const ir_attention *a, int split, const char *qsr, const char *qsd, const char *ksr,
                      const char *ksd, const char *vsr, const char *vsd, const char *osr, const char *osd);
void cg_att_emit_f32(cg_kw *k, const ir_attention *a, const char *qsr, const char *qsd, const char *ksr,
                     const char *ksd, const char *vsr, const char *vsd, const char *osr, const char *osd);

#endif
