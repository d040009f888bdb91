/* Kernels whose output size depends on the data (docs/PLAN-data-dependent.md
 * §5, stage 6: correct first): nonzero, nms and unique without an axis.
 *
 * Each producer gets a count cell, a temporary i64 [1] tensor named
 * "<node>.count" that its kernels write the real count into; the CUDA
 * backend copies it to the host after the producer's last step (a sync
 * point), hands it to the run hook and runs every later step at the real
 * sizes. cg_count_cell finds the cell again for the engine's rt_produced.
 * Outputs are laid out at capacity (the produced dim's slot, evaluated at
 * the bound when these kernels run) and written contiguous at the real
 * count, as the reference writes them. Every kernel of a producer that runs
 * after the count is known reads the cell (the last one included), so the
 * memory planner keeps the cell alive up to the backend's copy; a count
 * above the capacity (a declared bound below the real count) writes nothing
 * and the hook reports it.
 *
 * nonzero is a stream compaction in three kernels, 1024 elements a block
 * (one a thread, grid-stride over chunks): per-chunk counts
 * (__syncthreads_count), one block scanning the chunk counts in place into
 * exclusive offsets (tiles of 1024, warp shuffles then one partial per warp)
 * and writing the total into the cell, then every chunk scanning its flags
 * again and writing each kept element's coordinates at d * total + position:
 * row-major order, the reference's (ref_kernels_index.c), int64 offsets.
 * NaN is non-zero, -0.0 zero. A zero-element input launches only the scan,
 * which writes 0.
 *
 * nms runs onnxruntime's greedy algorithm exactly as the reference does
 * (ref_kernels_select.c), one thread per (batch, class): the next box is the
 * best-scoring one after the previous in (score descending, index ascending)
 * order, kept unless its IoU with a box already kept for the class exceeds
 * the threshold; the kept indices go to scratch [B*C, N] and their number to
 * [B*C]. IoU is the reference's float arithmetic step for step with every
 * operation rounded on its own (__fmul_rn, __fadd_rn, __fsub_rn, __fdiv_rn:
 * NVRTC would otherwise contract a product and a sum into an FMA, which the
 * reference's -ffp-contract=off forbids), since a few ulps flip a
 * suppression. One thread then sums the classes' counts into offsets and
 * the cell, and one thread per class copies its rows [b, c, box]. Scores
 * compare in double as the reference loads them. An iou_threshold outside
 * [0, 1], which the reference refuses, keeps nothing and is reported
 * (sc_report code 3).
 *
 * unique without an axis is quadratic and slow (a thread per element
 * scanning all of them; one thread counting): correct for the small inputs
 * models give it until the sort-based version of the plan exists. Each
 * element finds its first equal; the first ones count, find their position
 * among the kept values (in value order, NaN after every number, -0.0 equal
 * to 0.0, or in order of first occurrence) and their number of equals; the
 * inverse reads the position of each element's first equal. unique with an
 * axis is refused: it runs on the reference backend only.
 *
 * item is one kernel: the value read is the count, and 0..v-1 the output. */
#include <stdio.h>
#include <string.h>

#include "codegen/cuda_emit.h"

#define SEL_CHUNK 1024 /* nonzero: elements per block, one per thread (the scan assumes 32 warps) */

static symc_status finish(cg_kw *k, const char *how, sym_expr work, uint32_t per_block, uint32_t block) {
    const ir_node *n = &k->c->m->nodes[k->node];
    char comment[256];
    snprintf(comment, sizeof comment, "%s: %s, %s", ir_op_get(n->op)->name, n->name, how);
    symc_status st = cg_kw_finish(k, comment, work, per_block, block);
    cg_kw_free(k);
    return st;
}

/* a temporary i64 tensor "<node>.<what>" (the module's tables may move: callers re-read their pointers) */
static symc_status temp(cg_cuda *c, uint32_t node, const char *what, int32_t rank, const sym_expr *dims,
                        uint32_t *out) {
    char name[256];
    snprintf(name, sizeof name, "%s.%s", c->m->nodes[node].name, what);
    return ir_add_tensor(c->m, name, SYMC_I64, rank, dims, out, c->b->err);
}

static symc_status count_cell(cg_cuda *c, uint32_t node, uint32_t *out) {
    sym_expr one = sym_const(c->m->syms, 1);
    return temp(c, node, "count", 1, &one, out);
}

uint32_t cg_count_cell(const ir_module *m, const rt_step *steps, uint32_t n_steps, uint32_t node) {
    if (!m || node >= m->n_nodes) return RT_NONE;
    char name[256];
    snprintf(name, sizeof name, "%s.count", m->nodes[node].name);
    for (uint32_t i = 0; i < n_steps; i++) {
        const rt_step *s = &steps[i];
        if (s->node != node || s->kind != RT_STEP_KERNEL || !s->arg_writes) continue;
        for (uint32_t a = 0; a < s->n_args; a++) {
            uint32_t t = s->args[a].value;
            if (s->args[a].kind == RT_ARG_TENSOR && s->arg_writes[a] && t < m->n_tensors &&
                m->tensors[t].dtype == SYMC_I64 && m->tensors[t].producer == IR_NONE &&
                !strcmp(m->tensors[t].name, name))
                return t;
        }
    }
    return RT_NONE;
}

/* An exclusive scan over the block (1024 threads) of `val` (a long long variable): `excl` gets the sum of the
 * values of the threads before, `total` the block's; wsum is a __shared__ long long[32] the kernel declares. */
static void block_scan(cg_kw *k, const char *ind, const char *val, const char *excl, const char *total) {
    cg_kw_body(k, "%slong long incl = %s;\n", ind, val);
    cg_kw_body(k,
               "%sfor (int o = 1; o < 32; o <<= 1) {\n"
               "%s    const long long y = __shfl_up_sync(0xffffffffu, incl, o);\n"
               "%s    if ((int)(threadIdx.x & 31) >= o) incl += y;\n"
               "%s}\n",
               ind, ind, ind, ind);
    cg_kw_body(k, "%sif ((threadIdx.x & 31) == 31) wsum[threadIdx.x >> 5] = incl;\n%s__syncthreads();\n", ind, ind);
    cg_kw_body(k,
               "%sif (threadIdx.x < 32) {\n"
               "%s    long long w = wsum[threadIdx.x];\n"
               "%s    for (int o = 1; o < 32; o <<= 1) {\n"
               "%s        const long long y = __shfl_up_sync(0xffffffffu, w, o);\n"
               "%s        if ((int)threadIdx.x >= o) w += y;\n"
               "%s    }\n"
               "%s    wsum[threadIdx.x] = w;\n"
               "%s}\n"
               "%s__syncthreads();\n",
               ind, ind, ind, ind, ind, ind, ind, ind, ind);
    cg_kw_body(k, "%sconst long long %s = incl - %s + ((threadIdx.x >> 5) ? wsum[(threadIdx.x >> 5) - 1] : 0LL);\n",
               ind, excl, val);
    cg_kw_body(k, "%sconst long long %s = wsum[31];\n%s__syncthreads(); /* wsum is read again next round */\n", ind,
               total, ind);
}

/* ---- nonzero ----------------------------------------------------------------------------- */
/* `long long f` = element i of x is non-zero (0 past n) */
static void nz_flag(cg_kw *k, symc_dtype dt, const char *xp) {
    char ld[160];
    cg_load(ld, sizeof ld, dt, xp, "i");
    cg_kw_body(k, "        long long f = 0;\n        if (i < n) f = (%s) != 0;\n", ld);
}

static symc_status nonzero(cg_cuda *c, uint32_t node) {
    sym_table *t = c->m->syms;
    uint32_t xin = c->m->nodes[node].in[0], yout = c->m->nodes[node].out[0];
    sym_expr numel = ir_tensor_numel(c->m, &c->m->tensors[xin]);
    sym_expr chunks = sym_ceildiv(t, numel, sym_const(t, SEL_CHUNK));
    uint32_t blocks, cell;
    symc_status st = temp(c, node, "blocks", 1, &chunks, &blocks);
    if (!st) st = count_cell(c, node, &cell);
    if (st) return st;
    const ir_tensor *x = &c->m->tensors[xin], *y = &c->m->tensors[yout];
    symc_dtype dt = x->dtype;
    int32_t rank = x->rank;
    sym_expr dims[IR_MAX_RANK], cap = y->rank == 2 ? y->dims[1] : SYM_NONE;
    for (int32_t d = 0; d < rank; d++) dims[d] = x->dims[d];
    if (cap == SYM_NONE) return cg_fail(c, node, SYMC_ERR_INTERNAL, "output '%s' is not [rank, u]", y->name);

    /* 1: per-chunk counts */
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, xin), *bp = cg_kw_out(&k, blocks);
    cg_kw_body(&k, "    const long long n = %s;\n", cg_kw_dim(&k, numel));
    cg_kw_body(&k,
               "    SC_ROWS(ch, (n + 1023LL) / 1024LL) {\n        const long long i = ch * 1024LL + threadIdx.x;\n");
    nz_flag(&k, dt, xp);
    cg_kw_body(&k, "        const int tot = __syncthreads_count((int)f);\n");
    cg_kw_body(&k, "        if (threadIdx.x == 0) %s[ch] = tot;\n    }\n", bp);
    if ((st = finish(&k, "non-zero elements per chunk of 1024", numel, SEL_CHUNK, SEL_CHUNK))) return st;

    /* 2: the chunk counts scanned into offsets, the total into the count cell */
    cg_kw_begin(&k, c, node);
    bp = cg_kw_out(&k, blocks);
    const char *cp = cg_kw_out(&k, cell);
    cg_kw_body(&k, "    const long long nb = (%s + 1023LL) / 1024LL;\n", cg_kw_dim(&k, numel));
    cg_kw_body(&k, "    __shared__ long long wsum[32];\n    long long carry = 0;\n");
    cg_kw_body(&k, "    for (long long base = 0; base < nb; base += 1024LL) {\n");
    cg_kw_body(&k, "        const long long j = base + threadIdx.x;\n");
    cg_kw_body(&k, "        const long long cnt = j < nb ? %s[j] : 0LL;\n", bp);
    block_scan(&k, "        ", "cnt", "excl", "total");
    cg_kw_body(&k, "        if (j < nb) %s[j] = carry + excl;\n        carry += total;\n    }\n", bp);
    cg_kw_body(&k, "    if (threadIdx.x == 0) %s[0] = carry;\n", cp);
    if ((st = finish(&k, "one block scanning the chunk counts, the total into the count cell", sym_const(t, 1), 1,
                     SEL_CHUNK)))
        return st;

    /* 3: every kept element's coordinates at d * total + position */
    cg_kw_begin(&k, c, node);
    xp = cg_kw_in(&k, xin);
    bp = cg_kw_in(&k, blocks);
    cp = cg_kw_in(&k, cell);
    const char *yp = cg_kw_out(&k, yout);
    cg_kw_body(&k, "    const long long n = %s;\n", cg_kw_dim(&k, numel));
    cg_kw_body(&k, "    const long long total = %s[0], cap = %s; /* above the capacity: nothing is written */\n", cp,
               cg_kw_dim(&k, cap));
    cg_kw_body(&k, "    __shared__ long long wsum[32];\n");
    cg_kw_body(&k,
               "    SC_ROWS(ch, (n + 1023LL) / 1024LL) {\n        const long long i = ch * 1024LL + threadIdx.x;\n");
    nz_flag(&k, dt, xp);
    block_scan(&k, "        ", "f", "excl", "kept");
    cg_kw_body(&k, "        (void)kept;\n        if (f && total <= cap) {\n");
    cg_kw_body(&k, "            const long long pos = %s[ch] + excl;\n            long long r = i;\n", bp);
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (d > 0) {
            const char *dd = cg_kw_dim(&k, dims[d]);
            cg_kw_body(&k, "            { const long long cd = r %% %s; r /= %s; %s[%dLL * total + pos] = cd; }\n", dd,
                       dd, yp, d);
        } else {
            cg_kw_body(&k, "            %s[pos] = r;\n", yp);
        }
    }
    cg_kw_body(&k, "        }\n    }\n");
    return finish(&k, "coordinates of the non-zero elements in row-major order", numel, SEL_CHUNK, SEL_CHUNK);
}

/* ---- nms ---------------------------------------------------------------------------------- */
static int is_int(symc_dtype dt) { return !ir_dtype_is_float(dt) && dt != SYMC_BOOL; }

/* optional scalar input k must be one element of the right kind (the reference checks it at run time) */
static symc_status nms_scalar(cg_cuda *c, uint32_t node, uint32_t k, const char *role, int want_int) {
    const ir_node *n = &c->m->nodes[node];
    if (n->n_in <= k) return SYMC_OK;
    const ir_tensor *s = &c->m->tensors[n->in[k]];
    int64_t v;
    if (sym_is_const(c->m->syms, ir_tensor_numel(c->m, s), &v) && v != 1)
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "input %u (%s) must hold one element", k, role);
    if (want_int ? !is_int(s->dtype) : !ir_dtype_is_float(s->dtype))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "input %u (%s) is %s but must be %s", k, role,
                       symc_dtype_name(s->dtype), want_int ? "an integer" : "a float");
    return SYMC_OK;
}

static symc_status nms(cg_cuda *c, uint32_t node) {
    sym_table *t = c->m->syms;
    const ir_node *n = &c->m->nodes[node];
    const ir_tensor *boxes = &c->m->tensors[n->in[0]], *scores = &c->m->tensors[n->in[1]];
    if (boxes->rank != 3 || scores->rank != 3 || !ir_dtype_is_float(boxes->dtype) || !ir_dtype_is_float(scores->dtype))
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "boxes and scores must be float [B, N, 4] and [B, C, N]");
    int64_t center = cg_attr_int(n, "center_point_box", 0);
    if (center != 0 && center != 1)
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "center_point_box = %lld must be 0 or 1", (long long)center);
    symc_status st = nms_scalar(c, node, 2, "max_output_boxes_per_class", 1);
    if (!st) st = nms_scalar(c, node, 3, "iou_threshold", 0);
    if (!st) st = nms_scalar(c, node, 4, "score_threshold", 0);
    if (st) return st;
    sym_expr B = scores->dims[0], C = scores->dims[1], N = scores->dims[2], BC = sym_mul(t, B, C);
    sym_expr sel_dims[2] = {BC, N};
    uint32_t sel, kept, start, cell;
    if ((st = temp(c, node, "selected", 2, sel_dims, &sel)) || (st = temp(c, node, "kept", 1, &BC, &kept)) ||
        (st = temp(c, node, "start", 1, &BC, &start)) || (st = count_cell(c, node, &cell)))
        return st;
    n = &c->m->nodes[node];
    uint32_t in[5], n_in = n->n_in, yout = n->out[0];
    for (uint32_t i = 0; i < n_in && i < 5; i++) in[i] = n->in[i];
    symc_dtype bdt = c->m->tensors[in[0]].dtype, sdt = c->m->tensors[in[1]].dtype;
    sym_expr cap = c->m->tensors[yout].dims[0];

    /* 1: the greedy selection, one thread per (batch, class) */
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *bx = cg_kw_in(&k, in[0]), *sc = cg_kw_in(&k, in[1]), *sp = cg_kw_out(&k, sel),
               *kp = cg_kw_out(&k, kept);
    char ld[200], v[4][160];
    cg_kw_body(&k, "    const long long C = %s, N = %s;\n", cg_kw_dim(&k, C), cg_kw_dim(&k, N));
    if (n_in > 2) cg_kw_body(&k, "    const long long mo = (long long)%s[0];\n", cg_kw_in(&k, in[2]));
    else cg_kw_body(&k, "    const long long mo = 0; /* absent: no box */\n");
    if (n_in > 3) {
        cg_load(ld, sizeof ld, c->m->tensors[in[3]].dtype, cg_kw_in(&k, in[3]), "0");
        cg_kw_body(&k, "    const float iou = (float)(double)%s;\n", ld);
    } else cg_kw_body(&k, "    const float iou = 0.0f;\n");
    if (n_in > 4) {
        cg_load(ld, sizeof ld, c->m->tensors[in[4]].dtype, cg_kw_in(&k, in[4]), "0");
        cg_kw_body(&k, "    const bool thr_on = true;\n    const double thr = (double)%s;\n", ld);
    } else cg_kw_body(&k, "    const bool thr_on = false;\n    const double thr = 0.0;\n");
    cg_kw_body(&k, "    const bool iou_ok = iou >= 0.0f && iou <= 1.0f; /* the reference refuses any other */\n");
    cg_kw_body(&k, "    if (!iou_ok && blockIdx.x == 0 && threadIdx.x == 0) sc_report(3u, %uu);\n", node);
    /* box i of batch bi as [x_min, x_max, y_min, y_max] */
    for (int j = 0; j < 4; j++) {
        char off[48];
        snprintf(off, sizeof off, "o + %d", j);
        cg_load(v[j], sizeof v[j], bdt, bx, off);
    }
    cg_kw_body(&k, "    auto box_at = [&](long long bi, long long i, float *e) {\n");
    cg_kw_body(&k, "        const long long o = (bi * N + i) * 4;\n");
    cg_kw_body(&k, "        const float a0 = (float)%s, a1 = (float)%s, a2 = (float)%s, a3 = (float)%s;\n", v[0], v[1],
               v[2], v[3]);
    if (center) {
        cg_kw_body(&k,
                   "        const float hw = __fdiv_rn(a2, 2.0f), hh = __fdiv_rn(a3, 2.0f); /* [xc, yc, w, h] */\n");
        cg_kw_body(&k, "        e[0] = __fsub_rn(a0, hw); e[1] = __fadd_rn(a0, hw);\n");
        cg_kw_body(&k, "        e[2] = __fsub_rn(a1, hh); e[3] = __fadd_rn(a1, hh);\n");
    } else {
        cg_kw_body(&k, "        /* [y1, x1, y2, x2], either corner first */\n");
        cg_kw_body(&k, "        e[0] = a1 >= a3 ? a3 : a1; e[1] = a1 >= a3 ? a1 : a3;\n");
        cg_kw_body(&k, "        e[2] = a0 >= a2 ? a2 : a0; e[3] = a0 >= a2 ? a0 : a2;\n");
    }
    cg_kw_body(&k, "    };\n");
    /* box p (kept) suppresses box q (the candidate): onnxruntime's order, each step rounded */
    cg_kw_body(&k,
               "    auto suppresses = [&](const float *p, const float *q) -> bool {\n"
               "        const float x_lo = p[0] < q[0] ? q[0] : p[0], x_hi = q[1] < p[1] ? q[1] : p[1];\n"
               "        if (x_hi <= x_lo) return false;\n"
               "        const float y_lo = p[2] < q[2] ? q[2] : p[2], y_hi = q[3] < p[3] ? q[3] : p[3];\n"
               "        if (y_hi <= y_lo) return false;\n"
               "        const float inter = __fmul_rn(__fsub_rn(x_hi, x_lo), __fsub_rn(y_hi, y_lo));\n"
               "        if (inter <= 0.0f) return false;\n"
               "        const float area_p = __fmul_rn(__fsub_rn(p[1], p[0]), __fsub_rn(p[3], p[2]));\n"
               "        const float area_q = __fmul_rn(__fsub_rn(q[1], q[0]), __fsub_rn(q[3], q[2]));\n"
               "        const float uni = __fsub_rn(__fadd_rn(area_p, area_q), inter);\n"
               "        if (area_p <= 0.0f || area_q <= 0.0f || uni <= 0.0f) return false;\n"
               "        return __fdiv_rn(inter, uni) > iou;\n"
               "    };\n");
    cg_load(ld, sizeof ld, sdt, sc, "base + i");
    cg_kw_body(&k, "    SC_LOOP(bc, %s) {\n", cg_kw_dim(&k, BC));
    cg_kw_body(&k, "        const long long bi = bc / C, base = bc * N;\n        long long nk = 0;\n");
    cg_kw_body(&k, "        if (mo > 0 && iou_ok) {\n            long long pi = -1;\n            double ps = 0.0;\n");
    cg_kw_body(&k, "            for (;;) {\n                long long best = -1;\n                double bs = 0.0;\n");
    cg_kw_body(&k, "                for (long long i = 0; i < N; i++) {\n");
    cg_kw_body(&k, "                    const double sv = (double)%s;\n", ld);
    cg_kw_body(&k, "                    if (sv != sv || (thr_on && !(sv > thr))) continue;\n");
    cg_kw_body(&k, "                    if (pi >= 0 && !(sv < ps || (sv == ps && i > pi))) continue; /* visited */\n");
    cg_kw_body(&k, "                    if (best < 0 || sv > bs) { best = i; bs = sv; } /* ties: the lower index */\n");
    cg_kw_body(&k, "                }\n                if (best < 0) break;\n                ps = bs, pi = best;\n");
    cg_kw_body(&k, "                float e[4], kb[4];\n                box_at(bi, best, e);\n");
    cg_kw_body(&k, "                bool keep = true;\n");
    cg_kw_body(&k, "                for (long long r = 0; r < nk && keep; r++) {\n");
    cg_kw_body(&k, "                    box_at(bi, %s[base + r], kb);\n", sp);
    cg_kw_body(&k, "                    keep = !suppresses(kb, e);\n                }\n");
    cg_kw_body(&k, "                if (!keep) continue;\n                if (nk == mo) break;\n");
    cg_kw_body(&k, "                %s[base + nk] = best;\n                nk++;\n            }\n        }\n", sp);
    cg_kw_body(&k, "        %s[bc] = nk;\n    }\n", kp);
    if ((st = finish(&k, "one thread per (batch, class), the reference's greedy order", BC, 64, 64))) return st;

    /* 2: offsets of each class's rows, the total into the count cell */
    cg_kw_begin(&k, c, node);
    kp = cg_kw_in(&k, kept);
    const char *stp = cg_kw_out(&k, start), *cp = cg_kw_out(&k, cell);
    cg_kw_body(&k, "    SC_LOOP(one, 1LL) {\n        long long acc = 0;\n");
    cg_kw_body(&k, "        for (long long bc = 0; bc < %s; bc++) { %s[bc] = acc; acc += %s[bc]; }\n",
               cg_kw_dim(&k, BC), stp, kp);
    cg_kw_body(&k, "        %s[0] = acc;\n    }\n", cp);
    if ((st = finish(&k, "one thread: offsets of the classes' rows, the total", sym_const(t, 1), 1, 32))) return st;

    /* 3: the rows [b, c, box] in (batch, class) order */
    cg_kw_begin(&k, c, node);
    kp = cg_kw_in(&k, kept);
    stp = cg_kw_in(&k, start);
    sp = cg_kw_in(&k, sel);
    cp = cg_kw_in(&k, cell);
    const char *yp = cg_kw_out(&k, yout);
    cg_kw_body(&k, "    const long long C = %s, N = %s;\n", cg_kw_dim(&k, C), cg_kw_dim(&k, N));
    cg_kw_body(&k, "    const long long total = %s[0], cap = %s; /* above the capacity: nothing is written */\n", cp,
               cg_kw_dim(&k, cap));
    cg_kw_body(&k, "    SC_LOOP(bc, %s) {\n        if (total > cap) break;\n", cg_kw_dim(&k, BC));
    cg_kw_body(&k, "        const long long at = %s[bc], nk = %s[bc];\n", stp, kp);
    cg_kw_body(&k, "        for (long long r = 0; r < nk; r++) {\n");
    cg_kw_body(&k, "            %s[(at + r) * 3] = bc / C;\n            %s[(at + r) * 3 + 1] = bc %% C;\n", yp, yp);
    cg_kw_body(&k, "            %s[(at + r) * 3 + 2] = %s[bc * N + r];\n        }\n    }\n", yp, sp);
    return finish(&k, "one thread per (batch, class) writing its rows", BC, 64, 64);
}

/* ---- unique ------------------------------------------------------------------------------- */
static symc_status unique(cg_cuda *c, uint32_t node) {
    sym_table *t = c->m->syms;
    const ir_node *n = &c->m->nodes[node];
    if (ir_node_attr(n, "axis"))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED,
                       "unique with an axis has no CUDA kernel: it runs on the reference backend only");
    int64_t sorted = cg_attr_int(n, "sorted", 1);
    if (sorted != 0 && sorted != 1)
        return cg_fail(c, node, SYMC_ERR_INVALID_ARG, "sorted = %lld must be 0 or 1", (long long)sorted);
    uint32_t xin = n->in[0], oi = n->out[0], ov = n->out[1], oc = n->out[2];
    sym_expr numel = ir_tensor_numel(c->m, &c->m->tensors[xin]);
    uint32_t first, pos, cell;
    symc_status st;
    if ((st = temp(c, node, "first", 1, &numel, &first)) || (st = temp(c, node, "position", 1, &numel, &pos)) ||
        (st = count_cell(c, node, &cell)))
        return st;
    symc_dtype dt = c->m->tensors[xin].dtype;
    sym_expr cap = c->m->tensors[oi].dims[0];
    const char *T = cg_ctype(dt);
    int fl = ir_dtype_is_float(dt);
    char lj[160], li[160];

    /* 1: each element's first equal */
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, xin), *fp = cg_kw_out(&k, first);
    cg_load(lj, sizeof lj, dt, xp, "j");
    cg_load(li, sizeof li, dt, xp, "i");
    cg_kw_body(&k, "    auto same = [](%s a, %s b) -> bool { return %s; };\n", T, T,
               fl ? "a == b || (a != a && b != b)" : "a == b");
    cg_kw_body(&k, "    SC_LOOP(i, %s) {\n        const %s xi = (%s)%s;\n        long long j = 0;\n",
               cg_kw_dim(&k, numel), T, T, li);
    cg_kw_body(&k, "        while (j < i && !same((%s)%s, xi)) j++;\n        %s[i] = j;\n    }\n", T, lj, fp);
    if ((st = finish(&k, "each element's first equal (quadratic)", numel, 256, 256))) return st;

    /* 2: the count, one thread */
    cg_kw_begin(&k, c, node);
    fp = cg_kw_in(&k, first);
    const char *cp = cg_kw_out(&k, cell);
    cg_kw_body(&k, "    SC_LOOP(one, 1LL) {\n        long long acc = 0;\n");
    cg_kw_body(&k, "        for (long long i = 0; i < %s; i++) acc += %s[i] == i;\n", cg_kw_dim(&k, numel), fp);
    cg_kw_body(&k, "        %s[0] = acc;\n    }\n", cp);
    if ((st = finish(&k, "one thread counting the distinct values", sym_const(t, 1), 1, 32))) return st;

    /* 3: each distinct value's position and number of equals */
    cg_kw_begin(&k, c, node);
    xp = cg_kw_in(&k, xin);
    fp = cg_kw_in(&k, first);
    cp = cg_kw_in(&k, cell);
    const char *pp = cg_kw_out(&k, pos), *ip = cg_kw_out(&k, oi), *np = cg_kw_out(&k, oc);
    cg_load(lj, sizeof lj, dt, xp, "j");
    cg_load(li, sizeof li, dt, xp, "i");
    cg_kw_body(&k, "    auto same = [](%s a, %s b) -> bool { return %s; };\n", T, T,
               fl ? "a == b || (a != a && b != b)" : "a == b");
    cg_kw_body(&k, "    auto below = [](%s a, %s b) -> bool { return %s; }; /* NaN after every number */\n", T, T,
               fl ? "a != a ? false : (b != b ? true : a < b)" : "a < b");
    cg_kw_body(&k, "    const long long total = %s[0], cap = %s; /* above the capacity: nothing is written */\n", cp,
               cg_kw_dim(&k, cap));
    cg_kw_body(&k, "    const long long n = %s;\n", cg_kw_dim(&k, numel));
    cg_kw_body(&k, "    SC_LOOP(i, n) {\n        if (%s[i] != i || total > cap) continue;\n", fp);
    cg_kw_body(&k, "        const %s xi = (%s)%s;\n        long long p = 0, cnt = 0;\n", T, T, li);
    cg_kw_body(&k, "        for (long long j = 0; j < n; j++) {\n            const %s xj = (%s)%s;\n", T, T, lj);
    cg_kw_body(&k, "            cnt += same(xj, xi);\n");
    cg_kw_body(&k, "            if (%s[j] == j && j != i) p += %s;\n        }\n", fp,
               sorted ? "below(xj, xi)" : "j < i");
    cg_kw_body(&k, "        %s[i] = p;\n        %s[p] = i;\n        %s[p] = cnt;\n    }\n", pp, ip, np);
    if ((st = finish(&k, "each distinct value's position and count (quadratic)", numel, 256, 256))) return st;

    /* 4: the inverse */
    cg_kw_begin(&k, c, node);
    fp = cg_kw_in(&k, first);
    pp = cg_kw_in(&k, pos);
    cp = cg_kw_in(&k, cell);
    const char *vp = cg_kw_out(&k, ov);
    cg_kw_body(&k, "    const long long total = %s[0], cap = %s;\n", cp, cg_kw_dim(&k, cap));
    cg_kw_body(&k, "    SC_LOOP(i, %s) if (total <= cap) %s[i] = %s[%s[i]];\n", cg_kw_dim(&k, numel), vp, pp, fp);
    return finish(&k, "the inverse: the position of each element's first equal", numel, 256, 256);
}

/* ---- item ----------------------------------------------------------------------------------- */
/* One kernel: every thread reads the one element v; thread 0 writes it into the count cell (a negative v
 * as -1, which the run hook refuses) and the threads write 0, 1, ..., v-1 when v fits the capacity. */
static symc_status item(cg_cuda *c, uint32_t node) {
    uint32_t cell;
    symc_status st = count_cell(c, node, &cell);
    if (st) return st;
    const ir_node *n = &c->m->nodes[node];
    uint32_t xin = n->in[0], yout = n->out[0];
    const ir_tensor *x = &c->m->tensors[xin], *y = &c->m->tensors[yout];
    if (!is_int(x->dtype))
        return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "item reads an integer, not %s", symc_dtype_name(x->dtype));
    sym_expr cap = y->dims[0];
    cg_kw k;
    cg_kw_begin(&k, c, node);
    const char *xp = cg_kw_in(&k, xin), *cp = cg_kw_out(&k, cell), *yp = cg_kw_out(&k, yout);
    char ld[160];
    cg_load(ld, sizeof ld, x->dtype, xp, "0");
    cg_kw_body(&k, "    const long long v = (long long)(%s), cap = %s;\n", ld, cg_kw_dim(&k, cap));
    cg_kw_body(&k, "    if (blockIdx.x == 0 && threadIdx.x == 0) %s[0] = v < 0 ? -1LL : v;\n", cp);
    cg_kw_body(&k, "    SC_LOOP(i, cap) if (v <= cap && i < v) %s[i] = i;\n", yp);
    return finish(&k, "the value read as a size, and 0..v-1", cap, 256, 256);
}

symc_status cg_emit_select(cg_cuda *c, uint32_t node) {
    switch (c->m->nodes[node].op) {
    case IR_OP_NONZERO: return nonzero(c, node);
    case IR_OP_NMS: return nms(c, node);
    case IR_OP_UNIQUE: return unique(c, node);
    case IR_OP_ITEM: return item(c, node);
    default: return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "the CUDA target has no kernel for this op");
    }
}
