/* Patch embeddings as one GEMM (passes/patchify.c, pass_patchify), on builder modules of a patch
 * convolution: x [B, 3, H, W] (B in [1, 4]), a constant weight [8, 3, kh, kw] with stride (kh, kw)
 * and a bias [8]. Variants:
 *   vit       4x4 on 32x32, then flatten(2) and transpose(0, 2, 1) (ViT's tokens): rewritten with no
 *             transpose after the GEMM (the tokens a reshape of the GEMM's result)
 *   nchw      4x4 on 32x32 read by a relu as NCHW: rewritten, the GEMM's result transposed to NCHW
 *   nhwc      x given channels-last [B, 32, 32, 3], transposed to NCHW, a 2x2 convolution, and the
 *             result transposed back to NHWC (ConvNeXt's downsampling): the patches cut from the
 *             NHWC input, and the layout pass cancels the NCHW transpose against the NHWC one: one
 *             transpose (the patches') in the module
 *   rect      2x8 kernel on 16x64, no bias
 *   dyn_mult  H and W symbols in [8, 64] that are multiples of 4: rewritten
 *   dyn       H and W symbols in [8, 64] (not known multiples of 4: the convolution drops a
 *             remainder row), left alone
 *   padded    pads 1: left alone
 *   overlap   kernel 4, stride 2: left alone
 *   grouped   group 3 (weight [9, 1, 4, 4]): left alone
 *   off       SYMC_PATCHIFY=0: left alone
 * In f32 and f16, each module through the passes runs on the reference backend at B = 1, 2, 4 (and
 * two sizes of H, W for the dynamic ones) against the same module with shapes inferred only: the
 * same products summed in another order, so the outputs differ by rounding only: at most 2 ulps of
 * the dtype at the largest output's magnitude (an error bound of a dot product is relative to the
 * sum of its terms, not to a small result); the variants left alone are bit-identical. Rewritten
 * variants must also build for sm_90 with no cuDNN convolution step, the patches' transpose keeping
 * its source's innermost axis innermost ((0, 2, 4, 1, 3, 5) from NCHW, (0, 1, 3, 2, 4, 5) from
 * NHWC) and run as a row copy (codegen/cuda_emit_move.c's rows_kept). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes/passes.h"
#include "passes/pipeline.h"
#include "runtime/engine.h"
#include "tests/check.h"
#include "tests/passes/run_module.h"
#include "tests/test_node.h"

#define O 8
#define BMAX 4

typedef enum variant { VIT, NCHW, NHWC, RECT, DYN_MULT, DYN, PADDED, OVERLAP, GROUPED, OFF, VARIANTS } variant;
static const char *variant_name[VARIANTS] = {"vit", "nchw",   "nhwc",    "rect",    "dyn_mult",
                                             "dyn", "padded", "overlap", "grouped", "off"};
static int rewritten(variant v) { return v <= DYN_MULT; }

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) { /* [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static symc_tensor constant(symc_module *m, const char *name, symc_dtype dt, int32_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    uint8_t *data = malloc((size_t)n * symc_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) symc_dtype_store(data, dt, (size_t)i, 0.3 * urand());
    symc_error err;
    symc_tensor t = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_constant(m, name, dt, rank, dims, data, (size_t)n * symc_dtype_size(dt), &t, &err) == SYMC_OK,
              "%s: %s", name, err.msg);
    free(data);
    return t;
}

static void geometry(variant v, int64_t *h, int64_t *w, int64_t *kh, int64_t *kw) {
    *h = *w = 32, *kh = *kw = 4;
    if (v == NHWC) *kh = *kw = 2;
    if (v == RECT) *h = 16, *w = 64, *kh = 2, *kw = 8;
}

static symc_module *build(symc_dtype dt, variant v) {
    rng = 0x9e3779b97f4a7c15ull + (uint64_t)v;
    symc_error err;
    symc_module *m = symc_module_create(variant_name[v], &err);
    int64_t h, w, kh, kw;
    geometry(v, &h, &w, &kh, &kw);
    symc_dim B, H = symc_dim_const(m, h), W = symc_dim_const(m, w), C = symc_dim_const(m, 3);
    symc_declare_symbol(m, "B", 1, 2, BMAX, 1, &B, &err);
    if (v == DYN || v == DYN_MULT) {
        symc_declare_symbol(m, "H", 8, 32, 64, v == DYN_MULT ? 4 : 1, &H, &err);
        symc_declare_symbol(m, "W", 8, 32, 64, v == DYN_MULT ? 4 : 1, &W, &err);
    }
    symc_tensor x;
    if (v == NHWC) {
        symc_add_input(m, "x", dt, 4, (symc_dim[]){B, H, W, C}, &x, &err);
        int64_t to_nchw[4] = {0, 3, 1, 2};
        symc_attr p = symc_attr_ints("perm", to_nchw, 4);
        x = test_node(m, "transpose", "x_nchw", &x, 1, &p, 1);
    } else symc_add_input(m, "x", dt, 4, (symc_dim[]){B, C, H, W}, &x, &err);
    int64_t groups = v == GROUPED ? 3 : 1, oc = v == GROUPED ? 9 : O;
    symc_tensor wt = constant(m, "w", dt, 4, (int64_t[]){oc, 3 / groups, kh, kw});
    int64_t strides[2] = {kh, kw}, pads[4] = {0, 0, 0, 0};
    if (v == OVERLAP) strides[0] = strides[1] = 2;
    if (v == PADDED) pads[0] = pads[1] = pads[2] = pads[3] = 1;
    symc_attr ca[3] = {symc_attr_ints("strides", strides, 2), symc_attr_ints("pads", pads, 4),
                       symc_attr_int("group", groups)};
    symc_tensor in[3] = {x, wt, SYMC_TENSOR_NONE};
    uint32_t n_in = 2;
    if (v != RECT) in[n_in++] = constant(m, "b", dt, 1, (int64_t[]){oc});
    symc_tensor y = test_node(m, "conv2d", "patch", in, n_in, ca, 3);
    if (v == VIT) {
        symc_dim tokens = symc_dim_const(m, (h / kh) * (w / kw));
        symc_attr flat = symc_attr_dims("shape", (symc_dim[]){B, symc_dim_const(m, O), tokens}, 3);
        y = test_node(m, "reshape", "flat", &y, 1, &flat, 1);
        int64_t t3[3] = {0, 2, 1};
        symc_attr p = symc_attr_ints("perm", t3, 3);
        y = test_node(m, "transpose", "tokens", &y, 1, &p, 1);
    } else if (v == NHWC) {
        int64_t to_nhwc[4] = {0, 2, 3, 1};
        symc_attr p = symc_attr_ints("perm", to_nhwc, 4);
        y = test_node(m, "transpose", "y_nhwc", &y, 1, &p, 1);
    } else y = test_node(m, "relu", "act", &y, 1, NULL, 0);
    symc_mark_output(m, y, &err);
    return m;
}

static void check_structure(symc_module *m, symc_dtype dt, variant v) {
    const char *dn = symc_dtype_name(dt);
    uint32_t *uses = ir_uses_counts(m), convs = 0, gemms = 0, transposes = 0, rank6 = 0;
    for (uint32_t i = 0; i < m->n_nodes; i++) {
        const ir_node *n = &m->nodes[i];
        int live = 0;
        for (uint32_t o = 0; o < n->n_out; o++) live |= uses[n->out[o]] > 0 || m->tensors[n->out[o]].producer == i;
        convs += n->op == IR_OP_CONV2D;
        gemms += n->op == IR_OP_MATMUL && !strcmp(n->source, "patchify");
        if (n->op == IR_OP_TRANSPOSE && uses[n->out[0]]) {
            transposes++;
            rank6 += m->tensors[n->out[0]].rank == 6;
            const ir_attr *perm = ir_node_attr(n, "perm");
            if (m->tensors[n->out[0]].rank == 6) { /* the patches keep the source's innermost axis innermost */
                static const int64_t from_nchw[6] = {0, 2, 4, 1, 3, 5}, from_nhwc[6] = {0, 1, 3, 2, 4, 5};
                const int64_t *want = v == NHWC ? from_nhwc : from_nchw;
                CHECK_MSG(perm && perm->n == 6 && !memcmp(perm->ints, want, sizeof from_nchw),
                          "%s %s: the patches' transpose is not (%lld, %lld, %lld, %lld, %lld, %lld)", variant_name[v],
                          dn, (long long)want[0], (long long)want[1], (long long)want[2], (long long)want[3],
                          (long long)want[4], (long long)want[5]);
            }
        }
        (void)live;
    }
    free(uses);
    int rw = rewritten(v);
    CHECK_MSG(convs == (rw ? 0u : 1u), "%s %s: %u convolutions", variant_name[v], dn, convs);
    CHECK_MSG(gemms == (rw ? 1u : 0u), "%s %s: %u patch GEMMs", variant_name[v], dn, gemms);
    CHECK_MSG(rank6 == (rw ? 1u : 0u), "%s %s: %u patch transposes", variant_name[v], dn, rank6);
    /* vit: the patches' transpose only (the tokens a view); nhwc: the patches' only (the NCHW ones
     * cancelled or skipped); nchw, rect, dyn_mult: the patches' and the NCHW result's */
    uint32_t want = !rw ? (v == NHWC ? 2u : 0u) : v == VIT || v == NHWC ? 1u : 2u;
    if (v != NHWC || rw) CHECK_MSG(transposes == want, "%s %s: %u transposes read", variant_name[v], dn, transposes);
}

static void check_numbers(symc_module *mm, symc_module *plain, symc_dtype dt, variant v) {
    int64_t h, w, kh, kw;
    geometry(v, &h, &w, &kh, &kw);
    int64_t hs[2] = {h, v == DYN || v == DYN_MULT ? 48 : h}, ws[2] = {w, v == DYN || v == DYN_MULT ? 24 : w};
    if (v == DYN) hs[1] = 47, ws[1] = 21; /* remainders the convolution drops */
    enum { CAP = BMAX * 3 * 64 * 64 };
    static double xv[CAP], a[CAP], b[CAP];
    const double ulp = dt == SYMC_F16 ? 1.0 / 1024 : 1.0 / 8388608;
    for (int s = 0; s < 2; s++)
        for (int64_t bsz = 1; bsz <= BMAX; bsz *= 2) {
            int64_t xd[4] = {bsz, 3, hs[s], ws[s]}, n = bsz * 3 * hs[s] * ws[s], na = 0, nb = 0;
            if (v == NHWC) xd[1] = hs[s], xd[2] = ws[s], xd[3] = 3;
            uint8_t tmp[8];
            for (int64_t i = 0; i < n; i++) {
                symc_dtype_store(tmp, dt, 0, urand());
                xv[i] = symc_dtype_load(tmp, dt, 0);
            }
            if (!run_module_ref(mm, xd, 4, dt, xv, a, CAP, &na, NULL) ||
                !run_module_ref(plain, xd, 4, dt, xv, b, CAP, &nb, NULL))
                return;
            CHECK_MSG(na == nb && na > 0, "%s: %lld and %lld outputs", variant_name[v], (long long)na, (long long)nb);
            double worst = 0, big = 0;
            for (int64_t i = 0; i < na; i++) worst = fmax(worst, fabs(a[i] - b[i])), big = fmax(big, fabs(b[i]));
            CHECK_MSG(worst <= 2 * ulp * big,
                      "%s %s B=%lld H=%lld W=%lld: outputs differ by %g, more than 2 ulps of %g", variant_name[v],
                      symc_dtype_name(dt), (long long)bsz, (long long)hs[s], (long long)ws[s], worst, big);
            if (!rewritten(v)) CHECK_MSG(worst == 0, "%s: not rewritten, yet the outputs differ", variant_name[v]);
        }
}

/* built for sm_90: a cuBLASLt GEMM, no cuDNN convolution */
static void check_gpu(symc_dtype dt, variant v) {
    symc_module *m = build(dt, v);
    rt_engine *e = build_sm90(m, variant_name[v]);
    uint32_t conv = 0, gemm = 0;
    for (uint32_t i = 0; e && i < e->n_steps; i++) {
        conv += e->steps[i].kind == RT_STEP_CONV;
        gemm += e->steps[i].kind == RT_STEP_GEMM;
    }
    CHECK_MSG(e && conv == 0 && gemm == 1, "%s sm_90: %u cuDNN and %u cuBLASLt steps", variant_name[v], conv, gemm);
    /* the patches move as rows of kw (x NCHW) or kw * C (NHWC) elements: vectors, not one thread an element */
    CHECK_MSG(e && e->cuda_source && strstr(e->cuda_source, ".patches, innermost of"),
              "%s sm_90: no row copy of the patches", variant_name[v]);
    rt_engine_free(e);
    symc_module_destroy(m);
}

static void test_variant(symc_dtype dt, variant v) {
    if (v == OFF) setenv("SYMC_PATCHIFY", "0", 1);
    symc_module *mm = build(dt, v), *plain = build(dt, v);
    symc_error err;
    CHECK_MSG(pass_run_passes(mm, NULL, NULL, "fuse", &err) == SYMC_OK, "%s: %s", variant_name[v], err.msg);
    CHECK_MSG(symc_module_infer_shapes(plain, &err) == SYMC_OK, "%s", err.msg);
    unsetenv("SYMC_PATCHIFY");
    check_structure(mm, dt, v);
    check_numbers(mm, plain, dt, v);
    symc_module_destroy(mm);
    symc_module_destroy(plain);
}

int main(void) {
    for (int v = 0; v < VARIANTS; v++) {
        test_variant(SYMC_F32, (variant)v);
        test_variant(SYMC_F16, (variant)v);
    }
    for (int v = 0; v < VARIANTS; v++)
        if (rewritten((variant)v)) check_gpu(SYMC_F16, (variant)v);
    return check_report("test_patchify");
}
