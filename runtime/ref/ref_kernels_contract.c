/* Contractions: matmul (NumPy semantics), gemm (ONNX), conv2d (NCHW, or
 * NCDHW: 2-D runs as 3-D with a depth of 1), conv_transpose (1 to 3 spatial
 * dims) and det (LU with partial pivoting).
 *
 * Every output element is one dot product accumulated in f64 (int64 for
 * integer matmul, wrapping) in the natural index order and rounded once when
 * stored: no blocking, no reassociation, no fused tricks, so the result is
 * the definition. matmul first normalizes its operands to batched matrices
 * (a 1-D left operand is a row [1, K], a 1-D right operand a column [K, 1],
 * and the added dims are dropped from the result), then broadcasts the batch
 * dims like any NumPy operands. conv2d walks the 7 loops of the definition
 * with padding as "skip what falls outside" and groups as a channel offset.
 *
 * Threads (OpenMP, when the build has it: top-level CMakeLists.txt): the
 * outer loops over output rows (matmul, gemm; over the products of a batch of
 * small float matrices instead), over (image, output channel)
 * (conv2d) and over output elements (conv_transpose) are split among the
 * cores. Every output element is still one sum computed by one thread in the
 * same order as the single-threaded loop, so the results are bit-identical
 * whatever OMP_NUM_THREADS is (tests/tools/omp_threads_test.py compares
 * the bytes). Small problems (under RT_OMP_MIN_WORK multiply-adds) stay on
 * the calling thread, where starting the team would cost more than it saves. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/ref/ref_kernels_internal.h"

/* multiply-adds below which a kernel runs on the calling thread alone */
#define RT_OMP_MIN_WORK 32768
/* "parallel for" over the loop that follows when `work` is large enough; nothing
 * without OpenMP */
#ifdef _OPENMP
#define RT_PRAGMA(x) _Pragma(#x)
#define RT_OMP_FOR(work) RT_PRAGMA(omp parallel for schedule(static) if ((work) >= RT_OMP_MIN_WORK))
#define RT_OMP_FOR2(work) RT_PRAGMA(omp parallel for collapse(2) schedule(static) if ((work) >= RT_OMP_MIN_WORK))
#else
#define RT_OMP_FOR(work)
#define RT_OMP_FOR2(work)
#endif

/* ---- matmul ----------------------------------------------------------------------------- */
/* f32/f64 matrices: the same f64 sums as the plain loop, in the same order
 * over p for every output element (so bit-identical results), computed in
 * register tiles of MM_MR rows by MM_NR columns. Threads take blocks of
 * MM_MB rows; within a block, for each panel of MM_NR columns of B, the
 * panel is widened to f64 once per chunk of MM_KC steps of p (packed, on the
 * stack) and every row tile of the block runs over it, its sums carried in an
 * f64 block between chunks (so chunking changes nothing in the order). A
 * short panel (n not a multiple of MM_NR) is padded with zeros that are never
 * stored. This keeps the reference backend usable at real model sizes: the
 * fp16 calibration runs whole models on it at build time. */
enum { MM_MR = 4, MM_NR = 4, MM_MB = 64, MM_KC = 256 };

static inline double mm_ld(const void *p, int f32, int64_t i) {
    return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* rows [i, i + nr) of the block (nr <= MM_MR), sums in acc (MM_NR a row) over p in [p0, p0 + kc) */
static inline void mm_tile(const void *a, int f32, int64_t arow, int64_t k, int64_t p0, int64_t kc, const double *wb,
                           double *acc, int64_t nr) {
    if (nr == MM_MR) { /* constant bounds: the sums stay in registers */
        double t[MM_MR][MM_NR];
        for (int r = 0; r < MM_MR; r++)
            for (int q = 0; q < MM_NR; q++) t[r][q] = acc[r * MM_NR + q];
        for (int64_t p = 0; p < kc; p++) {
            const double *bp = wb + p * MM_NR;
            for (int r = 0; r < MM_MR; r++) {
                double x = mm_ld(a, f32, arow + r * k + p0 + p);
                for (int q = 0; q < MM_NR; q++) t[r][q] += x * bp[q];
            }
        }
        for (int r = 0; r < MM_MR; r++)
            for (int q = 0; q < MM_NR; q++) acc[r * MM_NR + q] = t[r][q];
        return;
    }
    for (int64_t r = 0; r < nr; r++)
        for (int64_t p = 0; p < kc; p++) {
            double x = mm_ld(a, f32, arow + r * k + p0 + p);
            for (int q = 0; q < MM_NR; q++) acc[r * MM_NR + q] += x * wb[p * MM_NR + q];
        }
}

static void matmul_block(const rt_ref_tensor *a, const rt_ref_tensor *b, rt_ref_tensor *out, int64_t a0, int64_t b0,
                         int64_t o0, int64_t m, int64_t n, int64_t k, int serial) {
    int f32 = a->dtype == SYMC_F32;
    int64_t row_blocks = (m + MM_MB - 1) / MM_MB;
    (void)serial; /* read by the pragma only, which a build without OpenMP drops */
    RT_OMP_FOR(serial ? 0.0 : (double)m * n * k)
    for (int64_t ib = 0; ib < row_blocks; ib++) {
        double wb[MM_KC * MM_NR];  /* B's panel, chunk of p, widened */
        double acc[MM_MB * MM_NR]; /* the block's sums for the panel */
        int64_t i0 = ib * MM_MB, mb = m - i0 < MM_MB ? m - i0 : MM_MB;
        for (int64_t j0 = 0; j0 < n; j0 += MM_NR) {
            int64_t nj = n - j0 < MM_NR ? n - j0 : MM_NR;
            for (int64_t x = 0; x < mb * MM_NR; x++) acc[x] = 0.0;
            for (int64_t p0 = 0; p0 < k; p0 += MM_KC) {
                int64_t kc = k - p0 < MM_KC ? k - p0 : MM_KC;
                for (int64_t p = 0; p < kc; p++)
                    for (int64_t q = 0; q < MM_NR; q++)
                        wb[p * MM_NR + q] = q < nj ? mm_ld(b->data, f32, b0 + (p0 + p) * n + j0 + q) : 0.0;
                for (int64_t i = 0; i < mb; i += MM_MR)
                    mm_tile(a->data, f32, a0 + (i0 + i) * k, k, p0, kc, wb, acc + i * MM_NR,
                            mb - i < MM_MR ? mb - i : MM_MR);
            }
            for (int64_t i = 0; i < mb; i++)
                for (int64_t q = 0; q < nj; q++) {
                    int64_t oi = o0 + (i0 + i) * n + j0 + q;
                    if (f32) ((float *)out->data)[oi] = (float)acc[i * MM_NR + q];
                    else ((double *)out->data)[oi] = acc[i * MM_NR + q];
                }
        }
    }
}

symc_status rt_ref_k_matmul(rt_ctx *c) {
    const rt_ref_tensor *a = &c->in[0], *b = &c->in[1];
    symc_status s;
    char sa_txt[160], sb_txt[160];
    if ((s = rt_ref_check_in_dtype(c, 1, a->dtype))) return s;
    if (a->rank < 1 || b->rank < 1)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "operands %s and %s: matmul needs rank >= 1",
                           rt_ref_shape_str(sa_txt, sizeof sa_txt, a->rank, a->dims),
                           rt_ref_shape_str(sb_txt, sizeof sb_txt, b->rank, b->dims));
    int64_t m = a->rank == 1 ? 1 : a->dims[a->rank - 2], k = a->dims[a->rank - 1];
    int64_t kb = b->rank == 1 ? b->dims[0] : b->dims[b->rank - 2];
    int64_t n = b->rank == 1 ? 1 : b->dims[b->rank - 1];
    if (k != kb)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "operands %s and %s: contracted dims differ (%lld vs %lld)",
                           rt_ref_shape_str(sa_txt, sizeof sa_txt, a->rank, a->dims),
                           rt_ref_shape_str(sb_txt, sizeof sb_txt, b->rank, b->dims), (long long)k, (long long)kb);
    /* batch dims as tensors of their own, so NumPy broadcasting applies */
    rt_ref_tensor ab = {a->dtype, a->rank > 2 ? a->rank - 2 : 0, {0}, NULL};
    rt_ref_tensor bb = {b->dtype, b->rank > 2 ? b->rank - 2 : 0, {0}, NULL};
    memcpy(ab.dims, a->dims, (size_t)ab.rank * sizeof(int64_t));
    memcpy(bb.dims, b->dims, (size_t)bb.rank * sizeof(int64_t));
    const rt_ref_tensor *ts[2] = {&ab, &bb};
    int32_t br;
    int64_t bdims[RT_REF_MAX_RANK + 2];
    if ((s = rt_ref_broadcast_shape(c, ts, 2, &br, bdims))) return s;
    int64_t od[RT_REF_MAX_RANK + 2];
    int32_t orank = br;
    memcpy(od, bdims, (size_t)br * sizeof(int64_t));
    if (a->rank > 1) od[orank++] = m;
    if (b->rank > 1) od[orank++] = n;
    if (orank > RT_REF_MAX_RANK)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "the result would have rank %d > %d", (int)orank, RT_REF_MAX_RANK);
    if ((s = rt_ref_check_out(c, 0, a->dtype, orank, od))) return s;

    int64_t sa[RT_REF_MAX_RANK], sb[RT_REF_MAX_RANK], bc[RT_REF_MAX_RANK] = {0};
    rt_ref_bcast_strides(&ab, br, sa);
    rt_ref_bcast_strides(&bb, br, sb);
    int64_t batches = rt_ref_numel_dims(br, bdims), o = 0;
    int is_float = rt_is_float(a->dtype);
    /* half operands: each batch's blocks widened (exactly) to f64, the f64 block loop, and the
     * result rounded once on store: the same sums in the same order as the element loop below */
    int half = (a->dtype == SYMC_F16 || a->dtype == SYMC_BF16) && b->dtype == a->dtype;
    double *wide = NULL;
    if (half && m * k + k * n + m * n > 0) {
        wide = malloc((size_t)(m * k + k * n + m * n) * sizeof *wide);
        if (!wide) return rt_ref_fail(c, SYMC_ERR_NOMEM, "out of memory widening half operands");
    }
    /* many small float matrices (window attention: Swin-T's first stage at batch 1 is 192
     * products of 49x32 by 32x49): threads over the batch, each product on one thread, rather
     * than a team started per product for its 49 rows (the start and the spinning waits cost
     * more than the work: the fp16 calibration run of Swin-T took about 40 s). The same sums in
     * the same order either way. */
    if ((a->dtype == SYMC_F32 || a->dtype == SYMC_F64) && batches > 1 && m < 256) {
        RT_OMP_FOR((double)batches * m * n * k)
        for (int64_t bi = 0; bi < batches; bi++) {
            int64_t co[RT_REF_MAX_RANK + 2], r = bi;
            for (int32_t d = br - 1; d >= 0; d--) co[d] = r % bdims[d], r /= bdims[d];
            matmul_block(a, b, &c->out[0], rt_offset(br, co, sa) * m * k, rt_offset(br, co, sb) * k * n, bi * m * n, m,
                         n, k, 1);
        }
        free(wide);
        return SYMC_OK;
    }
    for (int64_t bi = 0; bi < batches; bi++, rt_next(br, bdims, bc)) {
        int64_t a0 = rt_offset(br, bc, sa) * m * k, b0 = rt_offset(br, bc, sb) * k * n;
        if (a->dtype == SYMC_F32 || a->dtype == SYMC_F64) {
            matmul_block(a, b, &c->out[0], a0, b0, o, m, n, k, 0);
            o += m * n;
            continue;
        }
        if (wide) {
            rt_ref_tensor wa = {SYMC_F64, 1, {m * k}, wide}, wb = {SYMC_F64, 1, {k * n}, wide + m * k};
            rt_ref_tensor wo = {SYMC_F64, 1, {m * n}, wide + m * k + k * n};
            for (int64_t i = 0; i < m * k; i++) wide[i] = rt_ld_f(a, a0 + i);
            for (int64_t i = 0; i < k * n; i++) wide[m * k + i] = rt_ld_f(b, b0 + i);
            matmul_block(&wa, &wb, &wo, 0, 0, 0, m, n, k, 0);
            for (int64_t i = 0; i < m * n; i++, o++) rt_st_f(&c->out[0], o, wide[m * k + k * n + i]);
            continue;
        }
        RT_OMP_FOR((double)m * n * k)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                int64_t oi = o + i * n + j;
                if (is_float) {
                    double acc = 0.0;
                    for (int64_t p = 0; p < k; p++) acc += rt_ld_f(a, a0 + i * k + p) * rt_ld_f(b, b0 + p * n + j);
                    rt_st_f(&c->out[0], oi, acc);
                } else {
                    uint64_t acc = 0;
                    for (int64_t p = 0; p < k; p++)
                        acc += (uint64_t)rt_ld_i(a, a0 + i * k + p) * (uint64_t)rt_ld_i(b, b0 + p * n + j);
                    rt_st_i(&c->out[0], oi, (int64_t)acc);
                }
            }
        o += m * n;
    }
    free(wide);
    return SYMC_OK;
}

/* ---- gemm ------------------------------------------------------------------------------------ */
symc_status rt_ref_k_gemm(rt_ctx *c) {
    const rt_ref_tensor *a = &c->in[0], *b = &c->in[1];
    const rt_ref_tensor *cc = c->n_in >= 3 ? &c->in[2] : NULL;
    int64_t ta, tb;
    double alpha, beta;
    symc_status s;
    char t1[160], t2[160];
    if ((s = rt_ref_check_in_dtype(c, 1, a->dtype))) return s;
    if (cc && (s = rt_ref_check_in_dtype(c, 2, a->dtype))) return s;
    if ((s = rt_ref_attr_int(c, "trans_a", 0, 0, &ta))) return s;
    if ((s = rt_ref_attr_int(c, "trans_b", 0, 0, &tb))) return s;
    if ((s = rt_ref_attr_float(c, "alpha", 0, 1.0, &alpha))) return s;
    if ((s = rt_ref_attr_float(c, "beta", 0, 1.0, &beta))) return s;
    if ((ta != 0 && ta != 1) || (tb != 0 && tb != 1))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "attributes 'trans_a' and 'trans_b' must be 0 or 1");
    if (a->rank != 2 || b->rank != 2)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "A %s and B %s must both be 2-D",
                           rt_ref_shape_str(t1, sizeof t1, a->rank, a->dims),
                           rt_ref_shape_str(t2, sizeof t2, b->rank, b->dims));
    int64_t m = ta ? a->dims[1] : a->dims[0], k = ta ? a->dims[0] : a->dims[1];
    int64_t kb = tb ? b->dims[1] : b->dims[0], n = tb ? b->dims[0] : b->dims[1];
    if (k != kb)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "A %s (trans_a=%lld) and B %s (trans_b=%lld): contracted dims differ "
                           "(%lld vs %lld)",
                           rt_ref_shape_str(t1, sizeof t1, a->rank, a->dims), (long long)ta,
                           rt_ref_shape_str(t2, sizeof t2, b->rank, b->dims), (long long)tb, (long long)k,
                           (long long)kb);
    int64_t od[2] = {m, n}, cst[2] = {0, 0};
    if (cc) { /* C broadcasts one way, to [M, N] */
        int ok = cc->rank <= 2;
        for (int32_t d = 0; ok && d < cc->rank; d++) ok = cc->dims[d] == 1 || cc->dims[d] == od[2 - cc->rank + d];
        if (!ok)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "C %s does not broadcast to the result %s",
                               rt_ref_shape_str(t1, sizeof t1, cc->rank, cc->dims),
                               rt_ref_shape_str(t2, sizeof t2, 2, od));
        rt_ref_bcast_strides(cc, 2, cst);
    }
    if ((s = rt_ref_check_out(c, 0, a->dtype, 2, od))) return s;
    /* element (i, p) of op(A) and (p, j) of op(B) in row-major storage */
    int64_t sai = ta ? 1 : k, sap = ta ? m : 1, sbp = tb ? 1 : n, sbj = tb ? k : 1;
    RT_OMP_FOR((double)m * n * k)
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (int64_t p = 0; p < k; p++) acc += rt_ld_f(a, i * sai + p * sap) * rt_ld_f(b, p * sbp + j * sbj);
            double y = alpha * acc;
            if (cc) y += beta * rt_ld_f(cc, i * cst[0] + j * cst[1]);
            rt_st_f(&c->out[0], i * n + j, y);
        }
    return SYMC_OK;
}

/* ---- conv2d ------------------------------------------------------------------------------------ */
/* f32/f64/f16/bf16: the same sums as the direct loop below (bias first, then the taps in the order q, u,
 * r, t, out-of-bounds taps skipped, f64), so bit-identical results, but one output row at a time:
 * CONV_ROW accumulators over the row's positions j, and for each tap the run of j whose input
 * position is in bounds, so the innermost loop is contiguous (stride 1) and vectorizes. Half
 * operands come widened to f32 views (exact: every f16 and bf16 value is an f32 value) by the
 * caller, so the loop reads them as f32; y's own dtype decides the one rounding on store. */
enum { CONV_ROW = 512 };
static void conv_rows(const rt_ref_tensor *x, const rt_ref_tensor *w, const rt_ref_tensor *bias, rt_ref_tensor *y,
                      int64_t nb, int64_t ci, int64_t co, int64_t cg, int64_t co_per_group, const int64_t in[3],
                      const int64_t k[3], const int64_t st[3], const int64_t dl[3], const int64_t pb[3],
                      const int64_t out[3]) {
    const int f32 = x->dtype == SYMC_F32, f64 = x->dtype == SYMC_F64;
    uint16_t (*st16)(double) = y->dtype == SYMC_BF16 ? symc_f64_to_bf16 : symc_f64_to_f16;
#define CONV_LD(p, i) (f32 ? (double)((const float *)(p))[i] : ((const double *)(p))[i])
    const int64_t in_n = in[0] * in[1] * in[2], k_n = k[0] * k[1] * k[2], rows = out[0] * out[1];
    RT_OMP_FOR2((double)nb * co * out[0] * out[1] * out[2] * cg * k_n)
    for (int64_t n = 0; n < nb; n++)
        for (int64_t o = 0; o < co; o++) {
            int64_t c0 = (o / co_per_group) * cg; /* first input channel of o's group */
            double b0 = bias ? CONV_LD(bias->data, o) : 0.0;
            for (int64_t row = 0; row < rows; row++) {
                int64_t a = row / out[1], i = row % out[1];
                for (int64_t j0 = 0; j0 < out[2]; j0 += CONV_ROW) {
                    double acc[CONV_ROW];
                    int64_t nj = out[2] - j0 < CONV_ROW ? out[2] - j0 : CONV_ROW;
                    for (int64_t j = 0; j < nj; j++) acc[j] = b0;
                    for (int64_t q = 0; q < cg; q++)
                        for (int64_t u = 0; u < k[0]; u++) {
                            int64_t z = a * st[0] - pb[0] + u * dl[0];
                            if (z < 0 || z >= in[0]) continue;
                            for (int64_t r = 0; r < k[1]; r++) {
                                int64_t yy = i * st[1] - pb[1] + r * dl[1];
                                if (yy < 0 || yy >= in[1]) continue;
                                int64_t xrow = (n * ci + c0 + q) * in_n + (z * in[1] + yy) * in[2];
                                for (int64_t t = 0; t < k[2]; t++) {
                                    /* j in [lo, hi): 0 <= (j0 + j) * st - pb + t * dl < in */
                                    int64_t base = t * dl[2] - pb[2], lo = 0, hi = nj;
                                    while (lo < nj && (j0 + lo) * st[2] + base < 0) lo++;
                                    while (hi > lo && (j0 + hi - 1) * st[2] + base >= in[2]) hi--;
                                    double wv = CONV_LD(w->data, (o * cg + q) * k_n + (u * k[1] + r) * k[2] + t);
                                    int64_t x0 = xrow + j0 * st[2] + base;
                                    if (f32 && st[2] == 1) {
                                        const float *xp = (const float *)x->data + x0;
                                        for (int64_t j = lo; j < hi; j++) acc[j] += (double)xp[j] * wv;
                                    } else if (f64 && st[2] == 1) {
                                        const double *xp = (const double *)x->data + x0;
                                        for (int64_t j = lo; j < hi; j++) acc[j] += xp[j] * wv;
                                    } else {
                                        for (int64_t j = lo; j < hi; j++)
                                            acc[j] += CONV_LD(x->data, x0 + j * st[2]) * wv;
                                    }
                                }
                            }
                        }
                    int64_t oi = ((n * co + o) * out[0] + a) * out[1] * out[2] + i * out[2] + j0;
                    for (int64_t j = 0; j < nj; j++) {
                        if (y->dtype == SYMC_F32) ((float *)y->data)[oi + j] = (float)acc[j];
                        else if (y->dtype == SYMC_F64) ((double *)y->data)[oi + j] = acc[j];
                        else ((uint16_t *)y->data)[oi + j] = st16(acc[j]);
                    }
                }
            }
        }
#undef CONV_LD
}

symc_status rt_ref_k_conv2d(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *w = &c->in[1];
    const rt_ref_tensor *bias = c->n_in >= 3 ? &c->in[2] : NULL;
    static const int64_t ones[3] = {1, 1, 1}, zeros[6] = {0, 0, 0, 0, 0, 0};
    static const char *const axis[3] = {"depth", "height", "width"};
    int64_t strides[3], pads[6], dil[3], group;
    symc_status s;
    char t1[160], t2[160];
    if ((x->rank != 4 && x->rank != 5) || w->rank != x->rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "x %s and w %s must both be 4-D (NCHW, OIHW) or 5-D (NCDHW, OIDHW)",
                           rt_ref_shape_str(t1, sizeof t1, x->rank, x->dims),
                           rt_ref_shape_str(t2, sizeof t2, w->rank, w->dims));
    uint32_t nsp = (uint32_t)x->rank - 2;
    if ((s = rt_ref_check_in_dtype(c, 1, x->dtype))) return s;
    if (bias && (s = rt_ref_check_in_dtype(c, 2, x->dtype))) return s;
    if ((s = rt_ref_attr_ints_n(c, "strides", nsp, ones, strides))) return s;
    if ((s = rt_ref_attr_ints_n(c, "pads", 2 * nsp, zeros, pads))) return s;
    if ((s = rt_ref_attr_ints_n(c, "dilations", nsp, ones, dil))) return s;
    if ((s = rt_ref_attr_int(c, "group", 0, 1, &group))) return s;
    int64_t nb = x->dims[0], ci = x->dims[1], co = w->dims[0], cg = w->dims[1];
    if (group < 1 || co % group != 0 || cg * group != ci)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "x %s and w %s with group %lld: need C = w.dim1 * group and O divisible "
                           "by group",
                           rt_ref_shape_str(t1, sizeof t1, x->rank, x->dims),
                           rt_ref_shape_str(t2, sizeof t2, w->rank, w->dims), (long long)group);
    if (bias && (bias->rank != 1 || bias->dims[0] != co))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "bias %s must be [%lld] (the output channels)",
                           rt_ref_shape_str(t1, sizeof t1, bias->rank, bias->dims), (long long)co);
    /* 2-D runs as 3-D with a leading spatial dim of 1 */
    int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0},
            pe[3] = {0, 0, 0}, out[3] = {1, 1, 1};
    int64_t od[5] = {nb, co};
    uint32_t off = 3 - nsp;
    for (uint32_t i = 0; i < nsp; i++) {
        in[off + i] = x->dims[2 + i], k[off + i] = w->dims[2 + i], st[off + i] = strides[i], dl[off + i] = dil[i];
        pb[off + i] = pads[i], pe[off + i] = pads[nsp + i];
        if ((s = rt_ref_window_out(c, axis[off + i], in[off + i], k[off + i], st[off + i], dl[off + i], pb[off + i],
                                   pe[off + i], 0, &out[off + i])))
            return s;
        od[2 + i] = out[off + i];
    }
    if ((s = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return s;

    int64_t co_per_group = co / group, in_n = in[0] * in[1] * in[2], k_n = k[0] * k[1] * k[2];
    if (x->dtype == SYMC_F32 || x->dtype == SYMC_F64) {
        conv_rows(x, w, bias, &c->out[0], nb, ci, co, cg, co_per_group, in, k, st, dl, pb, out);
        return SYMC_OK;
    }
    if ((x->dtype == SYMC_F16 || x->dtype == SYMC_BF16) && w->dtype == x->dtype && (!bias || bias->dtype == x->dtype)) {
        /* x, w and bias widened once to f32 (a call per element per tap was half the run time) */
        int64_t nx = rt_ref_numel(x), nw = rt_ref_numel(w), nbias = bias ? co : 0;
        float *wide = malloc((size_t)(nx + nw + nbias + 1) * sizeof *wide);
        if (!wide)
            return rt_ref_fail(c, SYMC_ERR_NOMEM, "out of memory widening half operands (%lld elements)",
                               (long long)(nx + nw + nbias));
        float (*ld)(uint16_t) = x->dtype == SYMC_BF16 ? symc_bf16_to_f32 : symc_f16_to_f32;
        const uint16_t *xs = x->data, *ws = w->data;
        RT_OMP_FOR((double)nx)
        for (int64_t i = 0; i < nx; i++) wide[i] = ld(xs[i]);
        for (int64_t i = 0; i < nw; i++) wide[nx + i] = ld(ws[i]);
        for (int64_t i = 0; i < nbias; i++) wide[nx + nw + i] = ld(((const uint16_t *)bias->data)[i]);
        rt_ref_tensor xv = *x, wv = *w, bv = bias ? *bias : (rt_ref_tensor){0};
        xv.dtype = wv.dtype = bv.dtype = SYMC_F32;
        xv.data = wide, wv.data = wide + nx, bv.data = wide + nx + nw;
        conv_rows(&xv, &wv, bias ? &bv : NULL, &c->out[0], nb, ci, co, cg, co_per_group, in, k, st, dl, pb, out);
        free(wide);
        return SYMC_OK;
    }
    RT_OMP_FOR2((double)nb * co * out[0] * out[1] * out[2] * cg * k_n)
    for (int64_t n = 0; n < nb; n++)
        for (int64_t o = 0; o < co; o++) {
            int64_t c0 = (o / co_per_group) * cg; /* first input channel of o's group */
            for (int64_t a = 0; a < out[0]; a++)
                for (int64_t i = 0; i < out[1]; i++)
                    for (int64_t j = 0; j < out[2]; j++) {
                        double acc = bias ? rt_ld_f(bias, o) : 0.0;
                        for (int64_t q = 0; q < cg; q++)
                            for (int64_t u = 0; u < k[0]; u++) {
                                int64_t z = a * st[0] - pb[0] + u * dl[0];
                                if (z < 0 || z >= in[0]) continue;
                                for (int64_t r = 0; r < k[1]; r++) {
                                    int64_t y = i * st[1] - pb[1] + r * dl[1];
                                    if (y < 0 || y >= in[1]) continue;
                                    for (int64_t t = 0; t < k[2]; t++) {
                                        int64_t xx = j * st[2] - pb[2] + t * dl[2];
                                        if (xx < 0 || xx >= in[2]) continue;
                                        acc += rt_ld_f(x, (n * ci + c0 + q) * in_n + (z * in[1] + y) * in[2] + xx) *
                                            rt_ld_f(w, (o * cg + q) * k_n + (u * k[1] + r) * k[2] + t);
                                    }
                                }
                            }
                        rt_st_f(&c->out[0], ((n * co + o) * out[0] + a) * out[1] * out[2] + i * out[2] + j, acc);
                    }
        }
    return SYMC_OK;
}

/* ---- conv_transpose ------------------------------------------------------------------------------ */
/* The gradient of a convolution written as a gather: output position o of a
 * spatial dim takes input position i through kernel tap t when
 * i * stride + t * dilation - pad_begin = o. Any pads, negative included
 * (they widen the output), and groups as a channel offset. */
symc_status rt_ref_k_conv_transpose(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0], *w = &c->in[1];
    const rt_ref_tensor *bias = c->n_in >= 3 ? &c->in[2] : NULL;
    static const int64_t ones[3] = {1, 1, 1}, zeros[6] = {0};
    int64_t s[3], d[3], p[6], op[3], group;
    symc_status st;
    char t1[160], t2[160];
    int32_t nsp = x->rank - 2;
    if (nsp < 1 || nsp > 3 || w->rank != x->rank)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "x %s and w %s must both have rank 3 to 5",
                           rt_ref_shape_str(t1, sizeof t1, x->rank, x->dims),
                           rt_ref_shape_str(t2, sizeof t2, w->rank, w->dims));
    if ((st = rt_ref_check_in_dtype(c, 1, x->dtype))) return st;
    if (bias && (st = rt_ref_check_in_dtype(c, 2, x->dtype))) return st;
    if ((st = rt_ref_attr_ints_n(c, "strides", (uint32_t)nsp, ones, s)) ||
        (st = rt_ref_attr_ints_n(c, "dilations", (uint32_t)nsp, ones, d)) ||
        (st = rt_ref_attr_ints_n(c, "pads", 2 * (uint32_t)nsp, zeros, p)) ||
        (st = rt_ref_attr_ints_n(c, "output_padding", (uint32_t)nsp, zeros, op)) ||
        (st = rt_ref_attr_int(c, "group", 0, 1, &group)))
        return st;
    int64_t ci = x->dims[1], cg = group > 0 ? ci / group : 0, ocg = w->dims[1], co = ocg * group;
    if (group < 1 || ci % group != 0 || w->dims[0] != ci)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "x %s and w %s with group %lld: need w.dim0 = C divisible by group",
                           rt_ref_shape_str(t1, sizeof t1, x->rank, x->dims),
                           rt_ref_shape_str(t2, sizeof t2, w->rank, w->dims), (long long)group);
    if (bias && (bias->rank != 1 || bias->dims[0] != co))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "bias %s must be [%lld] (the output channels)",
                           rt_ref_shape_str(t1, sizeof t1, bias->rank, bias->dims), (long long)co);
    const int64_t lim = (int64_t)1 << 32;
    int64_t od[RT_REF_MAX_RANK] = {x->dims[0], co};
    for (int32_t i = 0; i < nsp; i++) {
        int64_t k = w->dims[2 + i];
        if (s[i] < 1 || s[i] > lim || d[i] < 1 || d[i] > lim || op[i] < 0 || op[i] > lim || p[i] < -lim || p[i] > lim ||
            p[nsp + i] < -lim || p[nsp + i] > lim || x->dims[2 + i] > lim || k > lim)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "strides, dilations, pads or output_padding of spatial dim %d",
                               (int)i);
        od[2 + i] = (x->dims[2 + i] - 1) * s[i] + d[i] * (k - 1) + 1 - p[i] - p[nsp + i] + op[i];
        if (od[2 + i] < 0)
            return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "output dim %d would be %lld", (int)(2 + i),
                               (long long)od[2 + i]);
    }
    if ((st = rt_ref_check_out(c, 0, x->dtype, x->rank, od))) return st;
    int64_t xs[RT_REF_MAX_RANK], ws[RT_REF_MAX_RANK];
    rt_ref_strides(x->rank, x->dims, xs);
    rt_ref_strides(w->rank, w->dims, ws);
    int64_t total = rt_ref_numel_dims(x->rank, od), ntap = rt_ref_numel_dims(nsp, w->dims + 2);
    RT_OMP_FOR((double)total * ntap * cg)
    for (int64_t e = 0; e < total; e++) {
        int64_t coord[RT_REF_MAX_RANK]; /* e's coordinates in the output */
        int64_t rest = e;
        for (int32_t i = x->rank - 1; i >= 0; i--) coord[i] = rest % od[i], rest /= od[i];
        int64_t n = coord[0], o = coord[1], g = o / ocg, oo = o % ocg;
        double acc = bias ? rt_ld_f(bias, o) : 0.0;
        int64_t kc[3] = {0, 0, 0};
        for (int64_t tap = 0; tap < ntap; tap++, rt_next(nsp, w->dims + 2, kc)) {
            int64_t xoff = 0, woff = 0;
            int ok = 1;
            for (int32_t i = 0; i < nsp && ok; i++) {
                int64_t t = coord[2 + i] + p[i] - kc[i] * d[i];
                if (t < 0 || t % s[i] != 0 || t / s[i] >= x->dims[2 + i]) ok = 0;
                else xoff += (t / s[i]) * xs[2 + i], woff += kc[i] * ws[2 + i];
            }
            if (!ok) continue;
            for (int64_t q = 0; q < cg; q++) {
                int64_t ch = g * cg + q;
                acc += rt_ld_f(x, n * xs[0] + ch * xs[1] + xoff) * rt_ld_f(w, ch * ws[0] + oo * ws[1] + woff);
            }
        }
        rt_st_f(&c->out[0], e, acc);
    }
    return SYMC_OK;
}

/* det: LU decomposition with partial pivoting of each matrix, in f64. */
symc_status rt_ref_k_det(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int32_t r = x->rank;
    char t[160];
    if (r < 2 || x->dims[r - 1] != x->dims[r - 2] || x->dims[r - 1] > 4096)
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "input 0 %s must end in a square matrix of at most 4096 x 4096",
                           rt_ref_shape_str(t, sizeof t, r, x->dims));
    symc_status s = rt_ref_check_out(c, 0, x->dtype, r - 2, x->dims);
    if (s) return s;
    int64_t n = x->dims[r - 1], mats = rt_ref_numel_dims(r - 2, x->dims);
    double *a = malloc((size_t)(n * n > 0 ? n * n : 1) * sizeof *a);
    if (!a) return rt_ref_fail(c, SYMC_ERR_NOMEM, "out of memory for a %lld x %lld matrix", (long long)n, (long long)n);
    for (int64_t m = 0; m < mats; m++) {
        for (int64_t i = 0; i < n * n; i++) a[i] = rt_ld_f(x, m * n * n + i);
        double det = 1.0;
        for (int64_t col = 0; col < n; col++) {
            int64_t piv = col;
            for (int64_t i = col + 1; i < n; i++)
                if (fabs(a[i * n + col]) > fabs(a[piv * n + col])) piv = i;
            if (a[piv * n + col] == 0.0) {
                det = 0.0;
                break;
            }
            if (piv != col) {
                for (int64_t j = 0; j < n; j++) {
                    double tmp = a[col * n + j];
                    a[col * n + j] = a[piv * n + j], a[piv * n + j] = tmp;
                }
                det = -det;
            }
            det *= a[col * n + col];
            for (int64_t i = col + 1; i < n; i++) {
                double f = a[i * n + col] / a[col * n + col];
                for (int64_t j = col; j < n; j++) a[i * n + j] -= f * a[col * n + j];
            }
        }
        rt_st_f(&c->out[0], m, det);
    }
    free(a);
    return SYMC_OK;
}
