/* The CUDA target without a GPU: models built with the builder API go
 * through cg_build_engine (NVRTC compiles every kernel for sm_90), and the
 * decoded engine is checked for what the target promised: cubin and PTX,
 * the step kinds, fusion of elementwise chains into one kernel, GEMM bias
 * and activation epilogues (and no fusion when the intermediate is a graph
 * output), aliases for views and copies into graph outputs, dynamic dims as
 * slot arguments and constant dims as literals, a clear error for a bad
 * --arch, and NVRTC's log in the error of a failed compile. The fusions of
 * issue 7: elementwise producers computed inside row kernels (softmax with
 * scale and mask, layer_norm of a residual sum), the residual add as the
 * GEMM's C, transposes of the last two axes folded into trans_a / trans_b,
 * and float4 elementwise kernels where 4 divides the element count. Row
 * kernels: both length regimes (a warp per row, a block per row) in one
 * kernel when the row length's range spans them, the launch picked from
 * opt, the float4 / register-cached / scalar paths, and elementwise
 * epilogues (gelu after softmax, a scale after rms_norm) in the row kernel.
 * Attention: softmax(q·kᵀ·scale)·v with its transposes is one flash kernel
 * and no library call; it stays unfused when the scores are also a graph
 * output or the head dim is not a multiple of 4. The fusion plan: what the
 * pipeline's fuse pass prints with the CUDA target's rules, the same code
 * whether the pass or the target made the plan, a corrupted plan refused.
 * Resize: a kernel NVRTC compiles for every mode of the reference kernel,
 * and its refusals. Transposes that move the last axis and are a batched
 * 2-D transpose run as shared-memory tiles; others one thread per output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "codegen/cuda_emit.h"
#include "codegen/cuda_emit_attention.h"
#include "passes/pipeline.h"
#include "runtime/cuda/tuned_pick.h"
#include "runtime/engine.h"
#include "tests/check.h"
#include "tests/qkv_split.h"
#include "tests/test_node.h"
#include "tests/test_gqa.h"

/* Builds the engine for sm_90 and decodes it (NULL on failure; err says why). */
static rt_engine *compile_module(symc_module *m, const char *arch, symc_error *err) {
    rt_engine *e = NULL;
    if (symc_module_infer_shapes(m, err) != SYMC_OK) return NULL;
    cg_options o = cg_default_options();
    o.arch = arch;
    o.tune = 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    if (cg_build_engine(m, &o, &bytes, &size, err) != SYMC_OK) return NULL;
    if (rt_engine_decode(bytes, size, &e, err) != SYMC_OK) e = NULL;
    free(bytes);
    if (e && getenv("SYMC_TEST_DUMP_CUDA")) printf("%s\n", e->cuda_source); /* for reading the kernels */
    return e;
}

/* the engine's cubins' bytes, all modules together */
static size_t cubin_bytes(const rt_engine *e) {
    size_t n = 0;
    for (uint32_t i = 0; i < e->n_modules; i++) n += e->modules[i].cubin_size;
    return n;
}

/* the PTX of every module has an entry point, and its bytes together */
static size_t ptx_bytes(const rt_engine *e) {
    size_t n = 0;
    for (uint32_t i = 0; i < e->n_modules; i++) {
        if (!strstr(e->modules[i].ptx, ".entry")) return 0;
        n += strlen(e->modules[i].ptx);
    }
    return n;
}

/* how many times `needle` occurs in `hay` */
static int count_of(const char *hay, const char *needle) {
    int n = 0;
    for (const char *p = hay ? strstr(hay, needle) : NULL; p; p = strstr(p + 1, needle)) n++;
    return n;
}

static uint32_t count_steps(const rt_engine *e, uint8_t kind) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->n_steps; i++) n += e->steps[i].kind == kind;
    return n;
}

static const rt_step *first_step(const rt_engine *e, uint8_t kind) {
    for (uint32_t i = 0; i < e->n_steps; i++)
        if (e->steps[i].kind == kind) return &e->steps[i];
    return NULL;
}

static uint32_t tensor_index(const rt_engine *e, const char *name) {
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (!strcmp(e->tensors[i].name, name)) return i;
    return RT_NONE;
}

/* (b) add -> mul -> relu -> exp is one kernel */
static void test_chain(void) {
    symc_error err;
    symc_module *m = symc_module_create("chain", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 16)};
    symc_tensor x, y;
    symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 1, d + 1, &y, &err);
    symc_tensor a = test_node(m, "add", "a", (symc_tensor[]){x, y}, 2, NULL, 0);
    symc_tensor b = test_node(m, "mul", "b", (symc_tensor[]){a, x}, 2, NULL, 0);
    symc_tensor r = test_node(m, "relu", "r", &b, 1, NULL, 0);
    symc_tensor z = test_node(m, "exp", "z", &r, 1, NULL, 0);
    symc_mark_output(m, z, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(e->sm == 90 && cubin_bytes(e) > 0 && ptx_bytes(e) > 0);
        CHECK_MSG(e->n_steps == 1 && count_steps(e, RT_STEP_KERNEL) == 1, "%u steps", e->n_steps);
        CHECK(e->n_kernels == 1);
        CHECK_CONTAINS(e->cuda_source, "a (add), b (mul), r (relu), z (exp)");
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (h) the elementwise ops of issue 15 and the narrow and unsigned integer
 * dtypes compile through NVRTC, each op one local of a fused kernel; a
 * reduction of an i8 tensor is refused with a message */
static void test_more_elementwise(void) {
    symc_error err;
    symc_module *m = symc_module_create("more", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 16)};
    symc_tensor x, sl;
    symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err);
    symc_add_input(m, "slope", SYMC_F32, 1, d + 1, &sl, &err);
    static const char *const unary[] = {"round", "asin",  "acos",     "atan",     "sinh", "cosh",  "asinh",
                                        "acosh", "atanh", "softplus", "softsign", "mish", "expm1", "log1p"};
    symc_tensor v = x;
    char name[32];
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) v = test_node(m, unary[i], unary[i], &v, 1, NULL, 0);
    symc_attr al = symc_attr_float("alpha", 0.5),
              sel[2] = {symc_attr_float("alpha", 1.6), symc_attr_float("gamma", 1.05)};
    symc_attr shr[2] = {symc_attr_float("bias", 0.1), symc_attr_float("lambd", 0.5)};
    v = test_node(m, "elu", "elu", &v, 1, &al, 1);
    v = test_node(m, "selu", "selu", &v, 1, sel, 2);
    v = test_node(m, "celu", "celu", &v, 1, &al, 1);
    v = test_node(m, "thresholded_relu", "trelu", &v, 1, &al, 1);
    v = test_node(m, "shrink", "shrink", &v, 1, shr, 2);
    v = test_node(m, "prelu", "prelu", (symc_tensor[]){v, sl}, 2, NULL, 0);
    symc_mark_output(m, v, &err);
    /* every integer dtype: arithmetic, division, modulo, order, bits, clip, casts both ways */
    static const symc_dtype ints[] = {SYMC_I8, SYMC_U8, SYMC_I16, SYMC_U16, SYMC_U32, SYMC_U64};
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        symc_dtype dt = ints[i];
        const char *dn = symc_dtype_name(dt);
        symc_tensor a, b;
        snprintf(name, sizeof name, "a_%s", dn);
        symc_add_input(m, name, dt, 2, d, &a, &err);
        snprintf(name, sizeof name, "b_%s", dn);
        symc_add_input(m, name, dt, 2, d, &b, &err);
        symc_attr fm0 = symc_attr_int("fmod", 0), fm1 = symc_attr_int("fmod", 1);
        symc_attr clip[2] = {symc_attr_float("min", 1), symc_attr_float("max", 100)};
        symc_attr tof = symc_attr_dtype("to", SYMC_F32), toi = symc_attr_dtype("to", dt);
        symc_tensor t = test_node(m, "add", NULL, (symc_tensor[]){a, b}, 2, NULL, 0);
        t = test_node(m, "mul", NULL, (symc_tensor[]){t, b}, 2, NULL, 0);
        t = test_node(m, "div", NULL, (symc_tensor[]){t, b}, 2, NULL, 0);
        t = test_node(m, "mod", NULL, (symc_tensor[]){t, b}, 2, &fm0, 1);
        t = test_node(m, "mod", NULL, (symc_tensor[]){t, a}, 2, &fm1, 1);
        t = test_node(m, "max", NULL, (symc_tensor[]){t, a}, 2, NULL, 0);
        t = test_node(m, "bitwise_xor", NULL, (symc_tensor[]){t, b}, 2, NULL, 0);
        t = test_node(m, "bitwise_and", NULL, (symc_tensor[]){t, a}, 2, NULL, 0);
        t = test_node(m, "bitwise_or", NULL, (symc_tensor[]){t, b}, 2, NULL, 0);
        t = test_node(m, "abs", NULL, &t, 1, NULL, 0);
        t = test_node(m, "neg", NULL, &t, 1, NULL, 0);
        t = test_node(m, "clip", NULL, &t, 1, clip, 2);
        if (dt == SYMC_U8 || dt == SYMC_U16 || dt == SYMC_U32 || dt == SYMC_U64) {
            symc_attr left = symc_attr_str("direction", "left"), right = symc_attr_str("direction", "right");
            t = test_node(m, "bit_shift", NULL, (symc_tensor[]){t, b}, 2, &left, 1);
            t = test_node(m, "bit_shift", NULL, (symc_tensor[]){t, a}, 2, &right, 1);
        }
        symc_tensor lt = test_node(m, "less", NULL, (symc_tensor[]){t, a}, 2, NULL, 0);
        t = test_node(m, "where", NULL, (symc_tensor[]){lt, t, b}, 3, NULL, 0);
        symc_tensor f = test_node(m, "cast", NULL, &t, 1, &tof, 1);
        f = test_node(m, "mul", NULL, (symc_tensor[]){f, x}, 2, NULL, 0);
        snprintf(name, sizeof name, "out_%s", dn);
        symc_mark_output(m, test_node(m, "cast", name, &f, 1, &toi, 1), &err);
    }
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(cubin_bytes(e) > 0);
        CHECK_CONTAINS(e->cuda_source, "sc_softplus(");
        CHECK_CONTAINS(e->cuda_source, "sc_rint(");
        CHECK_CONTAINS(e->cuda_source, "const unsigned long long v");
        CHECK_CONTAINS(e->cuda_source, "const signed char v");
        CHECK_CONTAINS(e->cuda_source, "(double)"); /* float -> i8/u8/i16/u16 saturates */
        /* the float chain is one kernel */
        CHECK_CONTAINS(e->cuda_source, "round (round), asin (asin), acos (acos), atan (atan), sinh (sinh)");
        CHECK_CONTAINS(e->cuda_source, "shrink (shrink), prelu (prelu)");
        rt_engine_free(e);
    }
    symc_module_destroy(m);

    m = symc_module_create("reduce_i8", &err);
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d2[2] = {B, symc_dim_const(m, 16)};
    symc_tensor q;
    symc_add_input(m, "q", SYMC_I8, 2, d2, &q, &err);
    symc_mark_output(m, test_node(m, "reduce_sum", "rs", &q, 1, NULL, 0), &err);
    e = compile_module(m, "sm_90", &err);
    CHECK(!e);
    CHECK_CONTAINS(err.msg, "tensor 'q' is i8: the CUDA target does not support i8 tensors in this op yet");
    if (e) rt_engine_free(e);
    symc_module_destroy(m);
}

/* (c) matmul + add(bias[N]) + relu is one GEMM with bias and RELU; with the
 * matmul's result also a graph output, the add stays a kernel */
static void test_gemm(int matmul_is_output) {
    symc_error err;
    symc_module *m = symc_module_create("gemm", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 32)};
    symc_tensor x, w, bias;
    symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err);
    float wd[32 * 8] = {0}, bd[8] = {0};
    symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){32, 8}, wd, sizeof wd, &w, &err);
    symc_add_constant(m, "bias", SYMC_F32, 1, (int64_t[]){8}, bd, sizeof bd, &bias, &err);
    symc_tensor mm = test_node(m, "matmul", "mm", (symc_tensor[]){x, w}, 2, NULL, 0);
    symc_tensor a = test_node(m, "add", "a", (symc_tensor[]){bias, mm}, 2, NULL, 0);
    symc_tensor r = test_node(m, "relu", "r", &a, 1, NULL, 0);
    symc_mark_output(m, r, &err);
    if (matmul_is_output) symc_mark_output(m, mm, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const rt_step *g = first_step(e, RT_STEP_GEMM);
        CHECK(count_steps(e, RT_STEP_GEMM) == 1);
        if (!matmul_is_output) {
            CHECK_MSG(e->n_steps == 1, "%u steps", e->n_steps);
            CHECK(g && g->n_tensors == 5 && g->tensors[3] == tensor_index(e, "bias") &&
                  g->tensors[4] == tensor_index(e, "r") && g->epilogue == RT_EPI_RELU);
        } else {
            CHECK(g && g->tensors[3] == RT_NONE && g->tensors[4] == tensor_index(e, "mm") &&
                  g->epilogue == RT_EPI_NONE);
            CHECK(count_steps(e, RT_STEP_KERNEL) == 1);
        }
        CHECK(g && g->tensors[0] == tensor_index(e, "x") && g->tensors[1] == tensor_index(e, "w") &&
              g->tensors[2] == RT_NONE);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

static symc_tensor constant(symc_module *m, const char *name, symc_dtype dt, int32_t rank, const int64_t *dims) {
    static uint8_t zeros[1 << 16];
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    symc_error err;
    symc_tensor t = SYMC_TENSOR_NONE;
    size_t es = dt == SYMC_F64 || dt == SYMC_I64 ? 8 : dt == SYMC_BOOL ? 1 : dt == SYMC_F16 || dt == SYMC_BF16 ? 2 : 4;
    CHECK_MSG(symc_add_constant(m, name, dt, rank, dims, zeros, (size_t)n * es, &t, &err) == SYMC_OK, "%s", err.msg);
    return t;
}

/* An embedding lookup (gather along axis 0 of a [V, 64] table by [B, S] indices) copies a
 * 16-byte chunk of a row a thread when the pointers allow (f16 and f32 rows: 8 and 16 chunks), with
 * the element loop after it, whose row index divides by a constant (no outer dims); a gather along
 * axis 1 of 1-element rows, and rows of 6 f16 (12 bytes), keep one thread an element; a gather along
 * axis 1 of a [4, 100, 64] table copies chunks of its 64-element rows. */
static void test_gather_rows(void) {
    static const struct {
        symc_dtype dt;
        int64_t cols;
        int axis;
        int64_t chunks; /* 0: no chunk path */
    } cases[4] = {{SYMC_F16, 64, 0, 8}, {SYMC_F32, 64, 0, 16}, {SYMC_F16, 6, 0, 0}, {SYMC_F16, 64, 1, 0}};
    for (int c = 0; c < 4; c++) {
        symc_error err;
        symc_module *m = symc_module_create("emb", &err);
        symc_dim B, S;
        symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
        symc_declare_symbol(m, "S", 1, 100, 300, 1, &S, &err);
        symc_tensor ids, table = constant(m, "table", cases[c].dt, 2, (int64_t[]){100, cases[c].cols});
        symc_add_input(m, "ids", SYMC_I64, 2, (symc_dim[]){B, S}, &ids, &err);
        symc_attr ax = symc_attr_int("axis", cases[c].axis);
        symc_tensor y = test_node(m, "gather", "emb", (symc_tensor[]){table, ids}, 2, &ax, 1);
        symc_mark_output(m, y, &err);
        rt_engine *e = compile_module(m, "sm_90", &err);
        CHECK_MSG(e, "case %d: %s", c, err.msg);
        const char *src = e ? e->cuda_source : "";
        char want[96];
        snprintf(want, sizeof want, "const long long q = i / %lldLL, ch = i - q * %lldLL, o = 0;",
                 (long long)cases[c].chunks, (long long)cases[c].chunks);
        CHECK_MSG(!!strstr(src, want) == (cases[c].chunks > 0) &&
                      !!strstr(src, "reinterpret_cast<uint4 *>") == (cases[c].chunks > 0),
                  "case %d: the chunk path %s", c, cases[c].chunks ? "missing" : "taken");
        if (cases[c].axis == 0) {
            snprintf(want, sizeof want, "q = i / %lldLL, o = 0;", (long long)cases[c].cols);
            CHECK_CONTAINS(src, want);
        }
        rt_engine_free(e);
        symc_module_destroy(m);
    }
    /* along axis 1 of a [4, 100, 64] f16 table (roll-gather's form: rows after the axis): chunks of the
     * rows, the outer row and the index from the chunk's row */
    symc_error err;
    symc_module *m = symc_module_create("rows_axis1", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_tensor ids, table = constant(m, "table", SYMC_F16, 3, (int64_t[]){4, 100, 64});
    symc_add_input(m, "ids", SYMC_I64, 1, (symc_dim[]){B}, &ids, &err);
    symc_attr ax = symc_attr_int("axis", 1);
    symc_mark_output(m, test_node(m, "gather", "rows", (symc_tensor[]){table, ids}, 2, &ax, 1), &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "axis 1: %s", err.msg);
    const char *src = e ? e->cuda_source : "";
    CHECK_CONTAINS(src, "const long long r = i / 8LL, ch = i - r * 8LL, q = r % s");
    CHECK_CONTAINS(src, "reinterpret_cast<const uint4 *>(t");
    CHECK_CONTAINS(src, "* 100LL + v) * 8LL + ch]");
    rt_engine_free(e);
    symc_module_destroy(m);
}

/* (a) one node of each op family compiles through NVRTC for sm_90 */
static void test_every_family(void) {
    symc_error err;
    symc_module *m = symc_module_create("families", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 16, 1, &B, &err);
    symc_dim c1 = symc_dim_const(m, 1), c4 = symc_dim_const(m, 4), c8 = symc_dim_const(m, 8);
    symc_tensor x, xi;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){B, c4, c8, c8}, &x, &err);
    symc_add_input(m, "xi", SYMC_I64, 2, (symc_dim[]){B, c8}, &xi, &err);
    symc_tensor outs[64];
    uint32_t n_out = 0;
#define OUT(t) (outs[n_out++] = (t))
    /* elementwise, with a dim that may be 1 broadcast at run time */
    symc_tensor xb;
    symc_add_input(m, "xb", SYMC_F32, 4, (symc_dim[]){B, c1, c1, c8}, &xb, &err);
    symc_tensor s = test_node(m, "sigmoid", "sig", &x, 1, NULL, 0);
    symc_tensor mx = test_node(m, "max", "mx", (symc_tensor[]){s, xb}, 2, NULL, 0);
    symc_attr clip[2] = {symc_attr_float("min", -1.0), symc_attr_float("max", 1.0)};
    symc_tensor cl = test_node(m, "clip", "cl", &mx, 1, clip, 2);
    symc_tensor gt = test_node(m, "greater", "gt", (symc_tensor[]){cl, x}, 2, NULL, 0);
    OUT(test_node(m, "where", "wh", (symc_tensor[]){gt, x, cl}, 3, NULL, 0));
    symc_attr to = symc_attr_dtype("to", SYMC_F64);
    symc_tensor xd = test_node(m, "cast", "to_f64", &x, 1, &to, 1);
    symc_attr gel = symc_attr_str("approximate", "tanh");
    OUT(test_node(m, "gelu", "gelu_d", &xd, 1, &gel, 1));
    symc_attr fm = symc_attr_int("fmod", 0);
    OUT(test_node(m, "mod", "imod", (symc_tensor[]){xi, xi}, 2, &fm, 1));
    /* reductions and norms */
    int64_t ax23[2] = {2, 3}, ax1[1] = {1};
    symc_attr r1[2] = {symc_attr_ints("axes", ax23, 2), symc_attr_int("keepdims", 1)};
    OUT(test_node(m, "reduce_sum", "rsum", &x, 1, r1, 2));
    symc_attr r2[2] = {symc_attr_ints("axes", ax1, 1), symc_attr_int("keepdims", 0)};
    OUT(test_node(m, "reduce_max", "rmax", &x, 1, r2, 2));
    OUT(test_node(m, "reduce_mean", "rmean_i", &xi, 1, NULL, 0));
    symc_attr last = symc_attr_int("axis", -1), one = symc_attr_int("axis", 1);
    OUT(test_node(m, "softmax", "sm_last", &x, 1, &last, 1));
    OUT(test_node(m, "log_softmax", "lsm_1", &x, 1, &one, 1));
    symc_tensor sc = constant(m, "ln_scale", SYMC_F32, 1, (int64_t[]){8});
    symc_tensor bi = constant(m, "ln_bias", SYMC_F32, 1, (int64_t[]){8});
    symc_attr ln[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 1e-5)};
    OUT(test_node(m, "layer_norm", "ln", (symc_tensor[]){x, sc, bi}, 3, ln, 2));
    symc_attr rn[2] = {symc_attr_int("axis", 2), symc_attr_float("epsilon", 1e-6)};
    OUT(test_node(m, "rms_norm", "rms", (symc_tensor[]){x, sc}, 2, rn, 2));
    symc_tensor bn[4];
    for (int i = 0; i < 4; i++)
        bn[i] = constant(m, (const char *[]){"bn_s", "bn_b", "bn_m", "bn_v"}[i], SYMC_F32, 1, (int64_t[]){4});
    symc_attr eps = symc_attr_float("epsilon", 1e-5);
    OUT(test_node(m, "batch_norm", "bn", (symc_tensor[]){x, bn[0], bn[1], bn[2], bn[3]}, 5, &eps, 1));
    /* contractions */
    symc_tensor w88 = constant(m, "w88", SYMC_F32, 2, (int64_t[]){8, 8});
    OUT(test_node(m, "matmul", "mm", (symc_tensor[]){x, w88}, 2, NULL, 0));
    symc_tensor wi = constant(m, "wi", SYMC_I64, 2, (int64_t[]){8, 8});
    OUT(test_node(m, "matmul", "mm_i64", (symc_tensor[]){xi, wi}, 2, NULL, 0));
    symc_attr fl = symc_attr_int("axis", 1);
    symc_tensor flat = test_node(m, "flatten", "flat", &x, 1, &fl, 1); /* an alias */
    symc_tensor wg = constant(m, "wg", SYMC_F32, 2, (int64_t[]){16, 256});
    symc_tensor cs = constant(m, "c_scalar", SYMC_F32, 1, (int64_t[]){1});
    symc_attr ga[2] = {symc_attr_int("trans_b", 1), symc_attr_float("beta", 0.5)};
    OUT(test_node(m, "gemm", "gemm_c", (symc_tensor[]){flat, wg, cs}, 3, ga, 2));
    symc_tensor cw = constant(m, "cw", SYMC_F32, 4, (int64_t[]){4, 4, 3, 3});
    symc_tensor cb = constant(m, "cb", SYMC_F32, 1, (int64_t[]){4});
    int64_t p1[4] = {1, 1, 1, 1}, pa[4] = {0, 1, 1, 0};
    symc_attr cp = symc_attr_ints("pads", p1, 4), cpa = symc_attr_ints("pads", pa, 4);
    symc_tensor cv = test_node(m, "conv2d", "conv", (symc_tensor[]){x, cw, cb}, 3, &cp, 1);
    OUT(test_node(m, "relu", "conv_relu", &cv, 1, NULL, 0));
    OUT(test_node(m, "conv2d", "conv_asym", (symc_tensor[]){x, cw}, 2, &cpa, 1));
    /* pooling */
    int64_t k2[2] = {2, 2}, k3[2] = {3, 3};
    symc_attr mp[3] = {symc_attr_ints("kernel", k3, 2), symc_attr_ints("pads", p1, 4), symc_attr_int("ceil_mode", 1)};
    OUT(test_node(m, "max_pool2d", "maxpool", &x, 1, mp, 3));
    symc_attr ap[2] = {symc_attr_ints("kernel", k2, 2), symc_attr_ints("strides", k2, 2)};
    OUT(test_node(m, "avg_pool2d", "avgpool", &x, 1, ap, 2));
    OUT(test_node(m, "global_avg_pool", "gap", &x, 1, NULL, 0));
    /* data movement */
    int64_t perm[4] = {0, 2, 3, 1};
    symc_attr pe = symc_attr_ints("perm", perm, 4);
    OUT(test_node(m, "transpose", "tr", &x, 1, &pe, 1));
    OUT(test_node(m, "concat", "cat", (symc_tensor[]){x, s, x}, 3, &one, 1));
    symc_dim st[1] = {symc_dim_const(m, -1)}, en[1] = {symc_dim_const(m, -100)};
    int64_t sa[1] = {3}, ss[1] = {-2};
    symc_attr sl[4] = {symc_attr_dims("starts", st, 1), symc_attr_dims("ends", en, 1), symc_attr_ints("axes", sa, 1),
                       symc_attr_ints("steps", ss, 1)};
    OUT(test_node(m, "slice", "sl", &x, 1, sl, 4));
    symc_tensor gi = constant(m, "gi", SYMC_I64, 1, (int64_t[]){3});
    symc_attr g1 = symc_attr_int("axis", 1);
    OUT(test_node(m, "gather", "ga", (symc_tensor[]){x, gi}, 2, &g1, 1));
    symc_tensor gei = constant(m, "gei", SYMC_I64, 2, (int64_t[]){1, 8});
    symc_attr g0 = symc_attr_int("axis", 0);
    OUT(test_node(m, "gather_elements", "gel", (symc_tensor[]){xi, gei}, 2, &g0, 1));
    symc_dim pd[8] = {symc_dim_const(m, 0), symc_dim_const(m, 0), c1, c1,
                      symc_dim_const(m, 0), symc_dim_const(m, 0), c1, c1};
    symc_attr pa_[2] = {symc_attr_dims("pads", pd, 8), symc_attr_str("mode", "reflect")};
    OUT(test_node(m, "pad", "pad", &x, 1, pa_, 2));
    symc_dim rep[2] = {c1, symc_dim_const(m, 3)};
    symc_attr ti = symc_attr_dims("repeats", rep, 2);
    OUT(test_node(m, "tile", "tile", &xi, 1, &ti, 1));
    OUT(test_node(m, "trilu", "tri", &x, 1, NULL, 0));
    symc_dim r0[1] = {symc_dim_const(m, 0)}, rd[1] = {c1}, rl[1] = {B};
    symc_attr ra[4] = {symc_attr_dims("start", r0, 1), symc_attr_dims("limit", rl, 1), symc_attr_dims("delta", rd, 1),
                       symc_attr_dtype("to", SYMC_I64)};
    OUT(test_node(m, "range", "rng", NULL, 0, ra, 4));
    symc_dim sz[2] = {symc_dim_const(m, 3), symc_dim_const(m, 5)};
    symc_attr sp[2] = {symc_attr_int("axis", -1), symc_attr_dims("sizes", sz, 2)};
    symc_tensor parts[2];
    CHECK_MSG(symc_add_node(m, "split", "split", &x, 1, sp, 2, parts, 2, &err) == SYMC_OK, "%s", err.msg);
    OUT(parts[0]);
    OUT(parts[1]);
    OUT(test_node(m, "shape_of", "shape", &x, 1, NULL, 0));
    symc_attr ex = symc_attr_dims("shape", (symc_dim[]){B, c4, c8, c8}, 4);
    OUT(test_node(m, "expand", "expand", &xb, 1, &ex, 1));
    symc_attr rs = symc_attr_dims("shape", (symc_dim[]){B, SYMC_DIM_NONE}, 2);
    OUT(test_node(m, "reshape", "rs_out", &s, 1, &rs, 1)); /* s is stored in the output's buffer: no copy */
    /* added for ONNX conformance: min/prod reductions (row and generic kernels), the index ops */
    OUT(test_node(m, "reduce_min", "rmin", &x, 1, r1, 2));
    OUT(test_node(m, "reduce_prod", "rprod_i", &xi, 1, r2, 2));
    symc_attr rax0[1] = {symc_attr_ints("axes", (int64_t[]){0}, 1)};
    OUT(test_node(m, "reduce_min", "rmin_outer", &x, 1, rax0, 1));
    symc_attr am[3] = {symc_attr_int("axis", 1), symc_attr_int("keepdims", 0), symc_attr_int("select_last_index", 1)};
    OUT(test_node(m, "argmax", "amax", &x, 1, am, 3));
    OUT(test_node(m, "argmin", "amin_i", &xi, 1, am, 1));
    symc_attr tk[3] = {symc_attr_dims("k", &c4, 1), symc_attr_int("axis", -1), symc_attr_int("largest", 0)};
    symc_tensor tki = test_node(m, "topk", "topk", &x, 1, tk, 3);
    OUT(tki);
    symc_attr cu[3] = {symc_attr_int("axis", 2), symc_attr_int("exclusive", 1), symc_attr_int("reverse", 1)};
    OUT(test_node(m, "cumsum", "cumsum", &x, 1, cu, 3));
    OUT(test_node(m, "cumsum", "cumsum_i", &xi, 1, &one, 1));
    symc_tensor ndi = constant(m, "ndi", SYMC_I64, 2, (int64_t[]){3, 2});
    OUT(test_node(m, "gather_nd", "gnd", (symc_tensor[]){x, ndi}, 2, NULL, 0));
    symc_tensor ndi1 = constant(m, "ndi1", SYMC_I64, 2, (int64_t[]){2, 1});
    symc_tensor upd = constant(m, "upd", SYMC_I64, 2, (int64_t[]){2, 8});
    symc_attr sadd = symc_attr_str("reduction", "add");
    OUT(test_node(m, "scatter_nd", "snd", (symc_tensor[]){xi, ndi1, upd}, 3, &sadd, 1));
    symc_tensor tkv = test_node(m, "gather_elements", "tkv", (symc_tensor[]){x, tki}, 2, &last, 1);
    symc_attr se[2] = {symc_attr_int("axis", -1), symc_attr_str("reduction", "max")};
    OUT(test_node(m, "scatter_elements", "sel", (symc_tensor[]){x, tki, tkv}, 3, se, 2));
#undef OUT
    for (uint32_t i = 0; i < n_out; i++) symc_mark_output(m, outs[i], &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(cubin_bytes(e) > 1000 && ptx_bytes(e) > 1000);
        CHECK(count_steps(e, RT_STEP_GEMM) == 2 && count_steps(e, RT_STEP_CONV) == 1 &&
              count_steps(e, RT_STEP_COPY) == 0);
        CHECK(tensor_index(e, "sig") != RT_NONE && e->aliases[tensor_index(e, "sig")] == tensor_index(e, "rs_out"));
        CHECK_MSG(count_steps(e, RT_STEP_KERNEL) >= 30, "%u kernel steps", count_steps(e, RT_STEP_KERNEL));
        CHECK(e->n_aliases == e->n_tensors && e->aliases[tensor_index(e, "flat")] == tensor_index(e, "x"));
        const rt_step *cv_step = first_step(e, RT_STEP_CONV);
        CHECK(cv_step && cv_step->tensors[2] == tensor_index(e, "cb") &&
              cv_step->tensors[3] == tensor_index(e, "conv_relu") && cv_step->epilogue == RT_EPI_RELU);
        CHECK_CONTAINS(e->cuda_source, "conv2d (direct)");
        CHECK_CONTAINS(e->cuda_source, "a team of 8 lanes per row"); /* rows of 8: a team, not a warp */
        CHECK_CONTAINS(e->cuda_source, "sc_team_reduce<8>(");
        CHECK_CONTAINS(e->cuda_source, "one thread per (outer, inner)");
        CHECK_CONTAINS(e->cuda_source, "broadcast copy of 'c_scalar'");
        CHECK_CONTAINS(e->cuda_source, "topk: topk, one thread per line, k scans");
        CHECK_CONTAINS(e->cuda_source, "scatter_nd: snd, the updates in order, one thread");
        CHECK_CONTAINS(e->cuda_source, "sc_nanmin(acc");
        CHECK(!strcmp(e->cuda_version, "13.0") || strlen(e->cuda_version) >= 3);
        CHECK(strlen(e->cublas_version) >= 5 && strlen(e->cudnn_version) >= 5);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (d) a reshape of an intermediate is an alias; so is a reshape to a graph
 * output in reverse (the intermediate lives in the output's buffer), while a
 * reshape of a graph input to a graph output is a copy. (e) the dynamic dim is a slot parameter, the constant one a literal */
static void test_views_and_dims(void) {
    symc_error err;
    symc_module *m = symc_module_create("views", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim d[2] = {B, symc_dim_const(m, 24)};
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err);
    symc_tensor a = test_node(m, "neg", "a", &x, 1, NULL, 0);
    symc_attr rs = symc_attr_dims("shape", (symc_dim[]){B, symc_dim_const(m, 4), symc_dim_const(m, 6)}, 3);
    symc_tensor r = test_node(m, "reshape", "r", &a, 1, &rs, 1);
    int64_t perm[3] = {0, 2, 1};
    symc_attr pe = symc_attr_ints("perm", perm, 3);
    symc_tensor t = test_node(m, "transpose", "t", &r, 1, &pe, 1);
    symc_attr rs2 = symc_attr_dims("shape", (symc_dim[]){B, symc_dim_const(m, 24)}, 2);
    symc_tensor o = test_node(m, "reshape", "o", &t, 1, &rs2, 1);
    symc_tensor o2 = test_node(m, "reshape", "o2", &x, 1, &rs, 1);
    symc_mark_output(m, o, &err);
    symc_mark_output(m, o2, &err);
    rt_engine *e = compile_module(m, "90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(e->sm == 90);
        CHECK(e->n_aliases == e->n_tensors && e->aliases[tensor_index(e, "r")] == tensor_index(e, "a"));
        CHECK(e->aliases[tensor_index(e, "o")] == RT_NONE && e->aliases[tensor_index(e, "t")] == tensor_index(e, "o"));
        const rt_step *cp = first_step(e, RT_STEP_COPY);
        CHECK(cp && cp->tensors[0] == tensor_index(e, "x") && cp->tensors[1] == tensor_index(e, "o2"));
        CHECK(count_steps(e, RT_STEP_KERNEL) == 2 && count_steps(e, RT_STEP_COPY) == 1 && e->n_steps == 3);
        /* the neg kernel: numel B*24 is a slot parameter; the transpose's 4 and 6 are literals */
        const rt_step *k0 = first_step(e, RT_STEP_KERNEL);
        int slot_args = 0;
        for (uint32_t i = 0; k0 && i < k0->n_args; i++) slot_args += k0->args[i].kind == RT_ARG_SLOT;
        CHECK(slot_args == 1);
        CHECK_CONTAINS(e->cuda_source, "long long s");
        CHECK_CONTAINS(e->cuda_source, "transpose: t, batched 2-D [nb, A, B] -> [nb, B, A] in 32x32");
        CHECK_CONTAINS(e->cuda_source, "sc_tile[j][tx] = t"); /* x[base + (a0 + j) * 6 + b0 + tx] */
        CHECK_CONTAINS(e->cuda_source, "(a0 + j) * 6LL + b0 + tx];");
        CHECK_CONTAINS(e->cuda_source, "(b0 + j) * 4LL + a0 + tx] = sc_tile[tx][j];");
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (f) a bad --arch; (g) NVRTC's log in the error of a failed compile */
static void test_errors(void) {
    symc_error err;
    symc_module *m = symc_module_create("arch", &err);
    symc_dim d[1] = {symc_dim_const(m, 4)};
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 1, d, &x, &err);
    symc_mark_output(m, test_node(m, "relu", "y", &x, 1, NULL, 0), &err);
    rt_engine *e = compile_module(m, "sm_12345", &err);
    CHECK(!e && err.code == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "--arch 'sm_12345'");
    CHECK_CONTAINS(err.msg, "supported: ");
    CHECK_CONTAINS(err.msg, "sm_90");
    e = compile_module(m, "compute_90", &err);
    CHECK_MSG(e && e->sm == 90, "%s", err.msg);
    rt_engine_free(e);
    e = compile_module(m, "sm_90a", &err);
    CHECK_MSG(e && e->sm == 90, "%s", err.msg);
    rt_engine_free(e);
    symc_module_destroy(m);

    uint8_t *cubin = NULL;
    size_t size = 0;
    char *ptx = NULL;
    symc_status st = cg_nvrtc_compile("extern \"C\" __global__ void k(float* p) { p[0] = undefined_thing; }\n", 90, 1,
                                      &cubin, &size, &ptx, &err);
    CHECK(st != SYMC_OK && !cubin && !ptx);
    CHECK_CONTAINS(err.msg, "NVRTC failed compiling 1 kernels for sm_90");
    CHECK_CONTAINS(err.msg, "undefined_thing");
    st = cg_nvrtc_compile("extern \"C\" __global__ void k(float* p) { p[0] = 1.0f; }\n", 90, 1, &cubin, &size, &ptx,
                          &err);
    CHECK_MSG(st == SYMC_OK && cubin && size > 0 && ptx && strstr(ptx, ".entry k"), "%s", err.msg);
    free(cubin);
    free(ptx);
}

/* (h') layer_norm(h + r) and softmax over f16/bf16 tensors take the vector path:
 * 4 halves (8 bytes) a load widened to a float4, 4 halves a store, the
 * pointers checked for 8-byte alignment */
static void test_row_half(symc_dtype dt) {
    symc_error err;
    symc_module *m = symc_module_create("row_half", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim c768 = symc_dim_const(m, 768);
    symc_tensor h, r;
    symc_add_input(m, "h", dt, 2, (symc_dim[]){B, c768}, &h, &err);
    symc_add_input(m, "r", dt, 2, (symc_dim[]){B, c768}, &r, &err);
    symc_tensor sum = test_node(m, "add", "res", (symc_tensor[]){h, r}, 2, NULL, 0);
    symc_tensor sc = constant(m, "ln_s", dt, 1, (int64_t[]){768});
    symc_tensor bi = constant(m, "ln_b", dt, 1, (int64_t[]){768});
    symc_attr ln[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 1e-5)};
    symc_tensor y = test_node(m, "layer_norm", "ln", (symc_tensor[]){sum, sc, bi}, 3, ln, 2);
    symc_attr last = symc_attr_int("axis", -1);
    symc_tensor p = test_node(m, "softmax", "probs", &h, 1, &last, 1);
    symc_mark_output(m, y, &err);
    symc_mark_output(m, p, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const char *ld = dt == SYMC_F16 ? "= sc_ld4h(t" : "= sc_ld4b(t", *st = dt == SYMC_F16 ? "sc_st4h(" : "sc_st4b(";
        CHECK_CONTAINS(e->cuda_source, ld);
        CHECK_CONTAINS(e->cuda_source, st);
        CHECK_CONTAINS(e->cuda_source, "& 7ull) == 0ull");
        CHECK_CONTAINS(e->cuda_source, "layer_norm: ln (layer_norm); rows of up to 1024 elements: one warp per row");
        CHECK_CONTAINS(e->cuda_source, "float4 when the row length is a multiple of 4");
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* The reference-only ops of the ONNX importer (grid_sample, dft, col2im,
 * det, max_pool_indices, roi_align), 3-D convolution and average pooling with dilations are refused by
 * the CUDA target with an error naming the node and the op. */
static void test_reference_only_ops(void) {
    struct {
        const char *op, *what;
        int32_t rank;
        int64_t dims[5];
        symc_attr a[3];
        uint32_t na;
        int second; /* 1: grid_sample's grid; 2: roi_align's boxes and batch indices; 3: a 3-D conv weight */
    } cases[] = {
        {"grid_sample",
         "no kernel",
         4,
         {1, 2, 4, 4},
         {symc_attr_str("mode", "linear"), symc_attr_str("padding_mode", "zeros")},
         2,
         1},
        {"dft", "no kernel", 3, {1, 8, 1}, {symc_attr_int("axis", 1), symc_attr_int("length", 8)}, 2, 0},
        {"det", "no kernel", 3, {2, 3, 3}, {{0}}, 0, 0},
        {"roi_align",
         "no kernel",
         4,
         {1, 2, 8, 8},
         {symc_attr_int("output_height", 2), symc_attr_int("output_width", 2)},
         2,
         2},
        {"col2im",
         "no kernel",
         3,
         {1, 4, 9},
         {symc_attr_ints("image_shape", (const int64_t[]){4, 4}, 2),
          symc_attr_ints("block_shape", (const int64_t[]){2, 2}, 2)},
         2,
         0},
        {"max_pool_indices",
         "no kernel",
         4,
         {1, 1, 4, 4},
         {symc_attr_ints("kernel", (const int64_t[]){2, 2}, 2)},
         1,
         0},
        {"conv2d", "3-D convolution", 5, {1, 2, 4, 4, 4}, {{0}}, 0, 3},
        {"avg_pool2d",
         "dilations",
         4,
         {1, 1, 6, 6},
         {symc_attr_ints("kernel", (const int64_t[]){2, 2}, 2),
          symc_attr_ints("dilations", (const int64_t[]){2, 2}, 2)},
         2,
         0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        symc_error err;
        symc_module *m = symc_module_create("ref_only", &err);
        symc_dim d[5];
        for (int32_t i = 0; i < cases[k].rank; i++) d[i] = symc_dim_const(m, cases[k].dims[i]);
        symc_tensor in[3];
        symc_add_input(m, "x", SYMC_F32, cases[k].rank, d, &in[0], &err);
        if (cases[k].second == 3) {
            symc_dim wd[5] = {symc_dim_const(m, 3), symc_dim_const(m, 2), symc_dim_const(m, 2), symc_dim_const(m, 2),
                              symc_dim_const(m, 2)};
            symc_add_input(m, "w", SYMC_F32, 5, wd, &in[1], &err);
        } else if (cases[k].second == 2) {
            symc_dim rd[2] = {symc_dim_const(m, 3), symc_dim_const(m, 4)};
            symc_add_input(m, "rois", SYMC_F32, 2, rd, &in[1], &err);
            symc_add_input(m, "bi", SYMC_I64, 1, rd, &in[2], &err);
        } else if (cases[k].second) {
            symc_dim g[4] = {symc_dim_const(m, 1), symc_dim_const(m, 3), symc_dim_const(m, 3), symc_dim_const(m, 2)};
            symc_add_input(m, "g", SYMC_F32, 4, g, &in[1], &err);
        }
        symc_mark_output(m,
                         test_node(m, cases[k].op, "y", in, cases[k].second == 3 ? 2 : 1 + (uint32_t)cases[k].second,
                                   cases[k].a, cases[k].na),
                         &err);
        rt_engine *e = compile_module(m, "sm_90", &err);
        CHECK_MSG(!e && err.code == SYMC_ERR_UNSUPPORTED, "%s: %s", cases[k].op, e ? "built" : err.msg);
        CHECK_CONTAINS(err.msg, "'y'");
        CHECK_CONTAINS(err.msg, cases[k].what);
        if (!strcmp(cases[k].what, "no kernel")) CHECK_CONTAINS(err.msg, cases[k].op);
        rt_engine_free(e);
        symc_module_destroy(m);
    }
}

/* (h) softmax(x * s + mask) and layer_norm(x + r) are one row kernel each;
 * with the sum also a graph output, layer_norm reads it from memory */
static void test_row_inline(int sum_is_output) {
    symc_error err;
    symc_module *m = symc_module_create("row_inline", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 16, 128, 1, &S, &err);
    symc_dim c2 = symc_dim_const(m, 2), c64 = symc_dim_const(m, 64);
    symc_tensor x, mask, h, r;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){B, c2, S, S}, &x, &err);
    symc_add_input(m, "mask", SYMC_F32, 2, (symc_dim[]){S, S}, &mask, &err);
    symc_add_input(m, "h", SYMC_F32, 3, (symc_dim[]){B, S, c64}, &h, &err);
    symc_add_input(m, "r", SYMC_F32, 3, (symc_dim[]){B, S, c64}, &r, &err);
    symc_tensor s = constant(m, "s", SYMC_F32, 1, (int64_t[]){1});
    symc_tensor xs = test_node(m, "mul", "xs", (symc_tensor[]){x, s}, 2, NULL, 0);
    symc_tensor xm = test_node(m, "add", "xm", (symc_tensor[]){xs, mask}, 2, NULL, 0);
    symc_attr last = symc_attr_int("axis", -1);
    symc_tensor p = test_node(m, "softmax", "probs", &xm, 1, &last, 1);
    symc_tensor sum = test_node(m, "add", "res", (symc_tensor[]){h, r}, 2, NULL, 0);
    symc_tensor sc = constant(m, "ln_s", SYMC_F32, 1, (int64_t[]){64});
    symc_tensor bi = constant(m, "ln_b", SYMC_F32, 1, (int64_t[]){64});
    symc_attr ln[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 1e-5)};
    symc_tensor y = test_node(m, "layer_norm", "ln", (symc_tensor[]){sum, sc, bi}, 3, ln, 2);
    symc_mark_output(m, p, &err);
    symc_mark_output(m, y, &err);
    if (sum_is_output) symc_mark_output(m, sum, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(cubin_bytes(e) > 0);
        CHECK_CONTAINS(e->cuda_source,
                       "softmax: probs (softmax); rows of up to 128 elements: a team of 8 lanes per row (launch: "
                       "32 rows per 256-thread block); float4 when");
        CHECK_CONTAINS(e->cuda_source, "; its input computed inline: xs (mul), xm (add)");
        CHECK(!strstr(e->cuda_source, "one block per row")); /* S <= 128, 64 columns: warps only */
        if (!sum_is_output) {
            CHECK_MSG(e->n_steps == 2 && count_steps(e, RT_STEP_KERNEL) == 2, "%u steps", e->n_steps);
            CHECK_CONTAINS(e->cuda_source,
                           "layer_norm: ln (layer_norm); rows of up to 128 elements: a team of 8 lanes per row");
            CHECK_CONTAINS(e->cuda_source,
                           "kept in registers (up to 32 elements a thread), else streamed per pass; its "
                           "input computed inline: res (add)");
        } else {
            CHECK_MSG(e->n_steps == 3 && count_steps(e, RT_STEP_KERNEL) == 3, "%u steps", e->n_steps);
            CHECK(!strstr(e->cuda_source, "computed inline: res"));
        }
        /* the softmax step reads x, mask and s, never the intermediate xm */
        const rt_step *k0 = &e->steps[0];
        int reads_xm = 0, reads_x = 0;
        for (uint32_t i = 0; i < k0->n_args; i++) {
            reads_xm |= k0->args[i].kind == RT_ARG_TENSOR && k0->args[i].value == tensor_index(e, "xm");
            reads_x |= k0->args[i].kind == RT_ARG_TENSOR && k0->args[i].value == tensor_index(e, "x");
        }
        CHECK(k0->kind == RT_STEP_KERNEL && e->nodes[k0->node].op == IR_OP_SOFTMAX && reads_x && !reads_xm);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (i) matmul + bias + add(residual) is one GEMM with C = residual and
 * beta 1; after a relu epilogue the add stays a kernel; a gemm with its own
 * C keeps the add too */
static void test_gemm_residual(int variant) {
    symc_error err;
    symc_module *m = symc_module_create("residual", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim c32 = symc_dim_const(m, 32);
    symc_tensor x, res;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, c32}, &x, &err);
    symc_add_input(m, "res", SYMC_F32, 2, (symc_dim[]){B, c32}, &res, &err);
    symc_tensor w = constant(m, "w", SYMC_F32, 2, (int64_t[]){32, 32});
    symc_tensor bias = constant(m, "bias", SYMC_F32, 1, (int64_t[]){32});
    symc_tensor pre;
    if (variant == 2) { /* gemm with a full C of its own */
        symc_attr beta = symc_attr_float("beta", 0.5);
        pre = test_node(m, "gemm", "mm", (symc_tensor[]){x, w, x}, 3, &beta, 1);
    } else {
        symc_tensor mm = test_node(m, "matmul", "mm", (symc_tensor[]){x, w}, 2, NULL, 0);
        pre = test_node(m, "add", "biased", (symc_tensor[]){mm, bias}, 2, NULL, 0);
        if (variant == 1) pre = test_node(m, "relu", "act", &pre, 1, NULL, 0);
    }
    symc_tensor y = test_node(m, "add", "y", (symc_tensor[]){res, pre}, 2, NULL, 0);
    symc_mark_output(m, y, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const rt_step *g = first_step(e, RT_STEP_GEMM);
        CHECK(g && count_steps(e, RT_STEP_GEMM) == 1);
        if (variant == 0) {
            CHECK_MSG(e->n_steps == 1, "%u steps", e->n_steps);
            CHECK(g && g->tensors[2] == tensor_index(e, "res") && g->beta == 1.0f &&
                  g->tensors[3] == tensor_index(e, "bias") && g->tensors[4] == tensor_index(e, "y") &&
                  g->epilogue == RT_EPI_NONE);
        } else {
            CHECK_MSG(e->n_steps == 2 && count_steps(e, RT_STEP_KERNEL) == 1, "%u steps", e->n_steps);
            CHECK(g && g->tensors[4] != tensor_index(e, "y"));
            if (variant == 1) CHECK(g && g->tensors[2] == RT_NONE && g->epilogue == RT_EPI_RELU);
            else CHECK(g && g->tensors[2] == tensor_index(e, "x") && g->beta == 0.5f);
        }
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (j) matmul(q, transpose(k, swap of the last two)) reads k with trans_b, and
 * matmul(transpose(a), b) reads a with trans_a; a transpose with a second
 * consumer stays a kernel */
static void test_transpose_fold(int shared) {
    symc_error err;
    symc_module *m = symc_module_create("qk", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 16, 128, 1, &S, &err);
    symc_dim c2 = symc_dim_const(m, 2), c16 = symc_dim_const(m, 16);
    symc_tensor q, k, a;
    symc_add_input(m, "q", SYMC_F32, 4, (symc_dim[]){B, c2, S, c16}, &q, &err);
    symc_add_input(m, "k", SYMC_F32, 4, (symc_dim[]){B, c2, S, c16}, &k, &err);
    symc_add_input(m, "a", SYMC_F32, 2, (symc_dim[]){S, c16}, &a, &err);
    int64_t perm[4] = {0, 1, 3, 2}, perm2[2] = {1, 0};
    symc_attr pe = symc_attr_ints("perm", perm, 4), pe2 = symc_attr_ints("perm", perm2, 2);
    symc_tensor kt = test_node(m, "transpose", "kt", &k, 1, &pe, 1);
    symc_tensor scores = test_node(m, "matmul", "scores", (symc_tensor[]){q, kt}, 2, NULL, 0);
    symc_tensor at = test_node(m, "transpose", "at", &a, 1, &pe2, 1);
    /* gemm(at, neg(wt), trans_a, trans_b) = a · (-w): the fold turns trans_a back off */
    symc_tensor w = constant(m, "w", SYMC_F32, 2, (int64_t[]){16, 8});
    symc_tensor wt = test_node(m, "transpose", "wt", &w, 1, &pe2, 1);
    symc_tensor na = test_node(m, "neg", "na", &wt, 1, NULL, 0);
    symc_attr tt[2] = {symc_attr_int("trans_a", 1), symc_attr_int("trans_b", 1)};
    symc_tensor proj = test_node(m, "gemm", "proj", (symc_tensor[]){at, na}, 2, tt, 2);
    symc_mark_output(m, scores, &err);
    symc_mark_output(m, proj, &err);
    if (shared) symc_mark_output(m, test_node(m, "neg", "kt_neg", &kt, 1, NULL, 0), &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const rt_step *g = NULL, *p = NULL;
        for (uint32_t i = 0; i < e->n_steps; i++) {
            if (e->steps[i].kind != RT_STEP_GEMM) continue;
            if (e->steps[i].tensors[4] == tensor_index(e, "scores")) g = &e->steps[i];
            if (e->steps[i].tensors[4] == tensor_index(e, "proj")) p = &e->steps[i];
        }
        CHECK(g && p && count_steps(e, RT_STEP_GEMM) == 2);
        CHECK(p && p->tensors[0] == tensor_index(e, "a") && p->tensors[1] == tensor_index(e, "na") && p->trans_a == 0 &&
              p->trans_b == 1);
        if (!shared) {
            CHECK(g && g->tensors[0] == tensor_index(e, "q") && g->tensors[1] == tensor_index(e, "k") &&
                  g->trans_b == 1 && g->trans_a == 0);
            CHECK(!strstr(e->cuda_source, "transpose: kt"));
        } else {
            CHECK(g && g->tensors[1] == tensor_index(e, "kt") && g->trans_b == 0);
            CHECK_CONTAINS(e->cuda_source, "transpose: kt");
        }
        CHECK(!strstr(e->cuda_source, "transpose: at"));
        CHECK_CONTAINS(e->cuda_source, "transpose: wt"); /* its consumer is the neg */
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (k) a float4 path when 4 provably divides the element count and every
 * leaf is full-shape, a scalar or a vector along the last axis; none for a
 * broadcast along another axis or [B, 3] */
static void test_vector(void) {
    symc_error err;
    symc_module *m = symc_module_create("vec", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim c16 = symc_dim_const(m, 16), c3 = symc_dim_const(m, 3);
    symc_tensor x, y, z, row, col;
    symc_add_input(m, "col", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 1)}, &col, &err);
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, c16}, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 2, (symc_dim[]){B, c16}, &y, &err);
    symc_add_input(m, "z", SYMC_F32, 2, (symc_dim[]){B, c3}, &z, &err);
    symc_add_input(m, "row", SYMC_F32, 1, (symc_dim[]){c16}, &row, &err);
    symc_tensor s = constant(m, "s", SYMC_F32, 1, (int64_t[]){1});
    symc_tensor a = test_node(m, "mul", "va", (symc_tensor[]){x, s}, 2, NULL, 0);
    symc_tensor gt = test_node(m, "greater", "vgt", (symc_tensor[]){a, y}, 2, NULL, 0);
    symc_mark_output(m, test_node(m, "where", "vec4", (symc_tensor[]){gt, x, y}, 3, NULL, 0), &err);
    symc_mark_output(m, test_node(m, "add", "bcast", (symc_tensor[]){x, row}, 2, NULL, 0), &err);
    symc_mark_output(m, test_node(m, "exp", "odd", &z, 1, NULL, 0), &err);
    symc_mark_output(m, test_node(m, "mul", "colb", (symc_tensor[]){x, col}, 2, NULL, 0), &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(e->n_steps == 4 && cubin_bytes(e) > 0);
        CHECK_CONTAINS(e->cuda_source, "elementwise (float4 when aligned): va (mul), vgt (greater), vec4 (where)");
        /* a vector along the last axis is read as float4 too, at q % (16 / 4) */
        CHECK_CONTAINS(e->cuda_source, "elementwise (float4 when aligned): bcast (add)");
        CHECK_CONTAINS(e->cuda_source, "[q % 4LL]");
        /* a broadcast along another axis keeps the scalar path */
        CHECK_CONTAINS(e->cuda_source, "elementwise: colb (mul)");
        CHECK_CONTAINS(e->cuda_source, "elementwise: odd (exp)");
        CHECK_CONTAINS(e->cuda_source, "reinterpret_cast<const float4*>");
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (l) M5: gelu(softmax(layer_norm(x + r))) over rows whose length H is a
 * run-time value in [min_h, max_h] (opt opt_h): the residual add inside
 * layer_norm's kernel, gelu the softmax kernel's epilogue: two kernels, the
 * softmax intermediate never stored. The launch follows opt: one warp per
 * row when opt <= 1024, else one block per row; the other regime stays in
 * the kernel as a run-time branch when H may fall in it. A scale after a
 * norm is an epilogue too, but not when the scaled tensor is also a graph
 * output of the norm (then it is stored and the mul is its own kernel). */
static void test_row_regimes(int64_t min_h, int64_t opt_h, int64_t max_h, int norm_out) {
    symc_error err;
    symc_module *m = symc_module_create("m5", &err);
    symc_dim R, H;
    symc_declare_symbol(m, "R", 1, 512, 4096, 1, &R, &err);
    symc_declare_symbol(m, "H", min_h, opt_h, max_h, 1, &H, &err);
    symc_tensor x, r, g, b;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){R, H}, &x, &err);
    symc_add_input(m, "r", SYMC_F32, 2, (symc_dim[]){R, H}, &r, &err);
    symc_add_input(m, "g", SYMC_F32, 1, (symc_dim[]){H}, &g, &err);
    symc_add_input(m, "b", SYMC_F32, 1, (symc_dim[]){H}, &b, &err);
    symc_tensor sum = test_node(m, "add", "res", (symc_tensor[]){x, r}, 2, NULL, 0);
    symc_attr ln[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 1e-5)};
    symc_tensor y = test_node(m, "layer_norm", "ln", (symc_tensor[]){sum, g, b}, 3, ln, 2);
    symc_attr last = symc_attr_int("axis", -1);
    symc_tensor p = test_node(m, "softmax", "sm", &y, 1, &last, 1);
    symc_tensor q = test_node(m, "gelu", "act", &p, 1, NULL, 0);
    symc_mark_output(m, q, &err);
    /* a second branch: rms_norm(x) * 2 (the scale an epilogue) */
    symc_tensor two = constant(m, "two", SYMC_F32, 1, (int64_t[]){1});
    symc_tensor rn = test_node(m, "rms_norm", "rms", (symc_tensor[]){x, g}, 2, ln, 2);
    symc_tensor sc = test_node(m, "mul", "scaled", (symc_tensor[]){rn, two}, 2, NULL, 0);
    symc_mark_output(m, sc, &err);
    if (norm_out) symc_mark_output(m, rn, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const char *src = e->cuda_source;
        CHECK(cubin_bytes(e) > 0);
        /* the layer norm is computed inside the softmax's kernel (a row chain) */
        CHECK_MSG(count_steps(e, RT_STEP_KERNEL) == (norm_out ? 3u : 2u), "%u kernels", count_steps(e, RT_STEP_KERNEL));
        CHECK_CONTAINS(src, "softmax: sm (softmax); ");
        CHECK_CONTAINS(src, "; epilogue before the store: act (gelu)");
        CHECK(!strstr(src, "layer_norm: ln (layer_norm); "));
        CHECK_CONTAINS(src,
                       "; its input is ln (layer_norm) computed in this kernel (never stored); its input computed "
                       "inline: res (add)");
        if (!norm_out) CHECK_CONTAINS(src, "rms_norm: rms (rms_norm); ");
        if (!norm_out) CHECK_CONTAINS(src, "; epilogue before the store: scaled (mul)");
        else CHECK(strstr(src, "elementwise: scaled (mul)") && !strstr(src, "epilogue before the store: scaled"));
        /* the float4 paths: registers when the row fits, streamed passes else, scalar fallback */
        CHECK_CONTAINS(src, "const bool vec = (ncols & 3LL) == 0");
        CHECK_CONTAINS(src, "reinterpret_cast<const float4*>");
        CHECK_CONTAINS(src, "float4 cache[8];");
        CHECK_CONTAINS(src, "/* scalar */");
        int warp = min_h <= 1024, block = max_h > 1024;
        CHECK(!warp || strstr(src, "/* short rows: one warp per row */"));
        CHECK(!block || strstr(src, "/* long rows: one block per row */"));
        CHECK(warp || !strstr(src, "one warp per row"));
        CHECK(block || !strstr(src, "one block per row"));
        if (warp && block) CHECK_CONTAINS(src, "if (ncols <= 1024LL) {");
        /* the softmax step writes the gelu output and never touches the softmax intermediate */
        uint32_t tp = tensor_index(e, "sm"), tq = tensor_index(e, "act");
        int found = 0;
        for (uint32_t i = 0; i < e->n_steps; i++) {
            const rt_step *st = &e->steps[i];
            if (st->kind != RT_STEP_KERNEL || e->nodes[st->node].op != IR_OP_SOFTMAX) continue;
            found = 1;
            int reads_p = 0, writes_q = 0;
            for (uint32_t a = 0; a < st->n_args; a++) {
                reads_p |= st->args[a].kind == RT_ARG_TENSOR && st->args[a].value == tp;
                writes_q |= st->args[a].kind == RT_ARG_TENSOR && st->args[a].value == tq;
            }
            CHECK(!reads_p && writes_q);
            int opt_warp = opt_h <= 1024;
            CHECK_MSG(opt_warp ? st->per_block == 8 && st->block == 256 : st->per_block == 1 && st->block >= 256,
                      "per_block %u block %u", st->per_block, st->block);
        }
        CHECK(found);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (m) attention fusion (tensor-core kernel); variant 1: the scores are a
 * graph output too, variant 2: head dim 6; both unfused (two GEMMs and a
 * softmax kernel); variant 3: head dim 12, the SIMT kernel; variant + 4: the
 * softmax with zero_masked_rows (torch's attention: a fully masked row gives 0);
 * + 8: f16 storage, + 16: bf16 storage; + 32, + 64: head dim 64, 128; + 128: the scale 1/8;
 * + 256: S in [1, 64] (opt 49, Swin's windows), else [1, 300] */
static symc_module *attention_module(int variant) {
    symc_error err;
    int zero_masked = (variant & 4) != 0;
    symc_dtype dt = variant & 8 ? SYMC_F16 : variant & 16 ? SYMC_BF16 : SYMC_F32;
    const int wide = variant & 32 ? 64 : variant & 64 ? 128 : 0; /* head dim 64 or 128 */
    const int eighth = (variant & 128) != 0;                     /* the scale 1/8, else 0 */
    const int short_s = (variant & 256) != 0;
    variant &= 3;
    symc_module *m = symc_module_create("attn", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, short_s ? 49 : 100, short_s ? 64 : 300, 1, &S, &err);
    symc_dim c2 = symc_dim_const(m, 2), hd = symc_dim_const(m, wide ? wide : variant == 2 ? 6 : variant == 3 ? 12 : 16);
    symc_tensor q, k, v;
    symc_add_input(m, "q", dt, 4, (symc_dim[]){B, S, c2, hd}, &q, &err);
    symc_add_input(m, "k", dt, 4, (symc_dim[]){B, c2, S, hd}, &k, &err);
    symc_add_input(m, "v", dt, 4, (symc_dim[]){B, c2, S, hd}, &v, &err);
    int64_t perm[4] = {0, 1, 3, 2}, heads[4] = {0, 2, 1, 3};
    symc_attr pe = symc_attr_ints("perm", perm, 4), ph = symc_attr_ints("perm", heads, 4);
    symc_tensor qh = test_node(m, "transpose", "qh", &q, 1, &ph, 1);
    symc_tensor kt = test_node(m, "transpose", "kt", &k, 1, &pe, 1);
    symc_tensor scores = test_node(m, "matmul", "scores", (symc_tensor[]){qh, kt}, 2, NULL, 0);
    symc_tensor scale = constant(m, "scale", dt, 0, NULL);
    if (eighth) {
        const uint16_t h = dt == SYMC_F16 ? 0x3000 : 0x3e00; /* 0.125 in f16 / bf16 */
        const float f = 0.125f;
        CHECK(symc_add_constant(m, "eighth", dt, 0, NULL, dt == SYMC_F32 ? (const void *)&f : (const void *)&h,
                                dt == SYMC_F32 ? 4 : 2, &scale, &err) == SYMC_OK);
    }
    symc_tensor scaled = test_node(m, "mul", "scaled", (symc_tensor[]){scores, scale}, 2, NULL, 0);
    symc_attr ax[2] = {symc_attr_int("axis", -1), symc_attr_int("zero_masked_rows", 1)};
    symc_tensor p = test_node(m, "softmax", "p", &scaled, 1, ax, zero_masked ? 2 : 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, v}, 2, NULL, 0);
    symc_tensor ot = test_node(m, "transpose", "ot", &o, 1, &ph, 1);
    symc_mark_output(m, ot, &err);
    if (variant == 1) symc_mark_output(m, scores, &err);
    return m;
}

/* how many modules of e have PTX for exactly `target` (".target sm_90a" holds ".target sm_90") */
static uint32_t modules_for(const rt_engine *e, const char *target) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < e->n_modules; i++) {
        const char *t = e->modules[i].ptx ? strstr(e->modules[i].ptx, ".target ") : NULL;
        size_t len = strlen(target);
        n += t && !strncmp(t + 8, target, len) && (t[8 + len] == '\n' || t[8 + len] == ' ' || t[8 + len] == ',');
    }
    return n;
}

/* half attention: with head dims 64 and 128 on sm_90 the wgmma kernel (a producer warpgroup
 * filling a ring of swizzled K and V tiles for two consumer warpgroups, its module compiled for
 * sm_90a); on sm_80, with SYMC_ATTENTION=mma, or head dims other than 64 and 128 (test_attention's
 * 16), the mma.sync kernel for plain sm_<n> */
static void test_attention_wgmma(void) {
    static const struct {
        int hd; /* 64 or 128 */
        const char *arch, *env, *target;
        int wg;
    } cases[] = {
        {128, "sm_90", NULL, "sm_90a", 1}, {64, "sm_90", NULL, "sm_90a", 1},  {64, "sm_90", "mma", "sm_90", 0},
        {128, "sm_80", NULL, "sm_80", 0},  {128, "sm_90", "mma", "sm_90", 0}, {64, "sm_80", NULL, "sm_80", 0},
    };
    for (int bf = 0; bf < 2; bf++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            symc_error err;
            symc_module *m = attention_module((cases[i].hd == 64 ? 32 : 64) | (bf ? 16 : 8));
            if (cases[i].env) setenv("SYMC_ATTENTION", cases[i].env, 1);
            rt_engine *e = compile_module(m, cases[i].arch, &err);
            unsetenv("SYMC_ATTENTION");
            CHECK_MSG(e, "%s", err.msg);
            if (e) {
                const int wg = cases[i].wg, d = cases[i].hd;
                const char *h = bf ? "bf16" : "f16";
                char want[320], pv[64];
                snprintf(want, sizeof want, "fused attention (flash, %s %s, storage q %s k %s v %s o %s, D %d, Dv %d)",
                         h, wg ? "wgmma" : "tensor cores", h, h, h, h, d, d);
                CHECK_MSG(strstr(e->cuda_source, want), "case %zu: no '%s'", i, want);
                CHECK(!strstr(e->cuda_source, CG_SM90A_MARK) == !wg);
                /* the attention's module for sm_90a, the others (if any) as before */
                if (wg) CHECK(modules_for(e, "sm_90a") == 1 && modules_for(e, "sm_90") == e->n_modules - 1);
                else CHECK_MSG(modules_for(e, cases[i].target) == e->n_modules, "case %zu", i);
                const rt_step *s = first_step(e, RT_STEP_KERNEL);
                if (wg) {
                    const int kt = cg_att_h16_kt(1);
                    snprintf(want, sizeof want, "sc_wg_ss_n%d_%s(&s[0][0][0],", kt, h);
                    CHECK_CONTAINS(e->cuda_source, want);
                    snprintf(want, sizeof want, "sc_wg_rs_n%d_%s(&o[0][0][0], pa[j],", d, h);
                    CHECK_CONTAINS(e->cuda_source, want);
                    /* three warpgroups (two consumers, the producer), Q's 128 rows, CG_ATT_WG_STAGES
                     * K and V tiles of kt keys, the alignment pad and the mbarriers; the ring's waits */
                    const int qb = d == 64 ? 2 : 1; /* Q's buffers: two where they fit (head dim 64) */
                    CHECK(s && s->block == 384 &&
                          s->shared ==
                              (uint32_t)((qb * 128 * d + 2 * CG_ATT_WG_STAGES * kt * d) * 2 + 1024 + CG_ATT_WG_BARS));
                    /* its grid: the blocks the GPU holds at once, each looping over row blocks; with two
                     * Q buffers each role takes row block rq's from buffer rq % 2, its mbarriers past the ring's */
                    CHECK(s && s->resident == 1);
                    snprintf(
                        want, sizeof want,
                        "const unsigned mq = (rq & 1u) ? mb + %d : mb, qph = (rq >> 1) & 1u; /* Q's buffer rq %% 2 "
                        "*/\n        unsigned short *const Qc = Qs + (rq & 1u) * %d;",
                        CG_ATT_WG_Q1_BAR, 128 * d);
                    CHECK_MSG(count_of(e->cuda_source, want) == (qb == 2 ? 2 : 0), "case %zu: '%s'", i, want);
                    CHECK(count_of(e->cuda_source, "const unsigned mq = mb, qph = rq & 1u;") == (qb == 1 ? 2 : 0));
                    CHECK_CONTAINS(e->cuda_source, "sc_mb_wait(mq + 8, qph ^ 1u);");
                    CHECK_CONTAINS(e->cuda_source, "sc_mb_wait(mq, qph); /* Q's rows are in */");
                    CHECK_CONTAINS(e->cuda_source, "sc_mb_arrive(mq + 8); /* Q may be refilled */");
                    /* head dim 128: a tile's softmax overlaps the previous tile's P·V */
                    CHECK(!strstr(e->cuda_source, "sc_wg_wait1(); /* the scores; P·V runs on under the softmax */") ==
                          (d != 128));
                    if (d == 128) { /* in this order: the hazards it avoids need every wait where it is */
                        snprintf(want, sizeof want, "sc_wg_ss_n%d_%s(", kt, h);
                        snprintf(pv, sizeof pv, "sc_wg_rs_n128_%s(&o[0][0][0], pa[j]", h);
                        const char *seq[] = {want,
                                             "if (it > 0) {",
                                             pv,
                                             "sc_wg_commit(); /* P·V's group, or an empty one on the first tile */",
                                             "sc_wg_wait1();",
                                             "sc_ex2(fmaf(s[mt][n][2 * h], ea, bq[mt][h]))",
                                             "sc_wg_wait0(); /* the previous tile's P·V: its stage is free */",
                                             "if (it > 0) sc_mb_arrive(mb + 40 + 8 * pst);",
                                             "o[mt][n][0] *= re[mt][0]",
                                             "pa[j][0] = ",
                                             "pst = st;",
                                             "if (ntile > 0) { /* the last tile's P·V */",
                                             pv,
                                             "sc_wg_wait0();",
                                             "sc_mb_arrive(mb + 40 + 8 * pst); /* its stage may be refilled */",
                                             "sc_mb_arrive(mq + 8); /* Q may be refilled */"};
                        const char *at = strstr(e->cuda_source, "} else { /* the consumer warpgroups */");
                        for (size_t j = 0; at && j < sizeof seq / sizeof seq[0]; j++) {
                            const char *next = strstr(at, seq[j]);
                            CHECK_MSG(next, "case %zu: '%s' not after the step before it", i, seq[j]);
                            at = next ? next + strlen(seq[j]) : NULL;
                        }
                        CHECK(at);
                    }
                    CHECK_CONTAINS(e->cuda_source, "__launch_bounds__(384, 1)");
                    /* each role its own loop over the row blocks, after its setmaxnreg */
                    /* (its threads but the one that issues the TMA copies leave first) */
                    snprintf(want, sizeof want,
                             "if (threadIdx.x >= 256) { /* the producer warpgroup: its registers to the consumers "
                             "*/\n    sc_wg_regs_dec<%d>();\n    if (threadIdx.x != 256) return; /* Q, K and V by TMA: "
                             "one thread issues every copy */\n    SC_ROWS(blk,",
                             CG_ATT_WG_PRODUCER_REGS);
                    CHECK_CONTAINS(e->cuda_source, want);
                    snprintf(want, sizeof want,
                             "} else { /* the consumer warpgroups */\n    sc_wg_regs_inc<%d>();\n    SC_ROWS(blk,",
                             CG_ATT_WG_CONSUMER_REGS);
                    CHECK_CONTAINS(e->cuda_source, want);
                    CHECK(128 * (CG_ATT_WG_PRODUCER_REGS + 2 * CG_ATT_WG_CONSUMER_REGS) <= 384 * 168);
                    CHECK_CONTAINS(e->cuda_source, "sc_mb_wait(mb + 16 + 8 * st, (unsigned)(gs >= 3u));");
                    CHECK_CONTAINS(e->cuda_source, "sc_mb_wait(mb + 40 + 8 * st, (unsigned)(gs >= 3u) ^ 1u);");
                    CHECK_CONTAINS(e->cuda_source, "gs = gs == 5u ? 0u : gs + 1u");
                } else CHECK(s && s->block == 128 && s->resident == 0);
                rt_engine_free(e);
            }
            symc_module_destroy(m);
        }
}

/* the attention step's grid cap (rt_step.resident): the wgmma kernel's by default, none under
 * SYMC_ATTENTION_RESIDENT=0, the mma.sync kernel's too under =all */
static void test_attention_resident(void) {
    static const struct {
        const char *arch, *env;
        uint32_t want;
    } cases[] = {{"sm_90", NULL, 1}, {"sm_90", "0", 0}, {"sm_90", "all", 1},
                 {"sm_80", NULL, 0}, {"sm_80", "0", 0}, {"sm_80", "all", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        symc_error err;
        symc_module *m = attention_module(32 | 8);
        if (cases[i].env) setenv("SYMC_ATTENTION_RESIDENT", cases[i].env, 1);
        rt_engine *e = compile_module(m, cases[i].arch, &err);
        unsetenv("SYMC_ATTENTION_RESIDENT");
        CHECK_MSG(e, "%s", err.msg);
        const rt_step *s = e ? first_step(e, RT_STEP_KERNEL) : NULL;
        CHECK_MSG(s && strstr(e->cuda_source, "fused attention (flash, f16 ") && s->resident == cases[i].want,
                  "case %zu: resident %u", i, s ? s->resident : 99u);
        rt_engine_free(e);
        symc_module_destroy(m);
    }
}

/* the mma.sync half kernel's rows a block: 64 (one m-tile a warp) where S is at most 64 over its
 * range, 128 (two) otherwise; SYMC_ATTENTION_MT sets it at any S; the wgmma kernel keeps 128 */
static void test_attention_rows(void) {
    static const struct {
        int variant;
        const char *arch, *env;
        int rows; /* 0: the wgmma kernel */
    } cases[] = {{8, "sm_90", NULL, 128},          {8 | 256, "sm_90", NULL, 64},  {8, "sm_90", "1", 64},
                 {8 | 256, "sm_90", "2", 128},     {16 | 256, "sm_80", NULL, 64}, {16 | 4, "sm_80", "1", 64},
                 {32 | 8 | 256, "sm_90", NULL, 0}, {32 | 8, "sm_80", NULL, 128},  {32 | 8 | 256, "sm_80", NULL, 64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        symc_error err;
        symc_module *m = attention_module(cases[i].variant);
        if (cases[i].env) setenv("SYMC_ATTENTION_MT", cases[i].env, 1);
        rt_engine *e = compile_module(m, cases[i].arch, &err); /* NVRTC compiles it */
        unsetenv("SYMC_ATTENTION_MT");
        CHECK_MSG(e, "case %zu: %s", i, err.msg);
        if (!e) {
            symc_module_destroy(m);
            continue;
        }
        const int64_t d = cases[i].variant & 32 ? 64 : 16, hp = d + 8, rows = cases[i].rows;
        const rt_step *s = first_step(e, RT_STEP_KERNEL);
        const char *src = e->cuda_source;
        if (!rows) CHECK_MSG(strstr(src, "f16 wgmma") && !strstr(src, "query rows a block"), "case %zu", i);
        else {
            char q0[64];
            snprintf(q0, sizeof q0, "const long long q0 = qt * %lld;", (long long)rows);
            CHECK_MSG(s && s->block == 128 && s->shared == (uint32_t)((rows * hp + 4 * 64 * hp) * 2) && strstr(src, q0),
                      "case %zu: block %u shared %u", i, s ? s->block : 0u, s ? s->shared : 0u);
            CHECK_MSG(!strstr(src, "query rows a block") == (rows == 128), "case %zu", i);
            CHECK_MSG(strstr(src, rows == 64 ? "rb = w * 16;" : "rb = w * 32;"), "case %zu", i);
            if (rows == 64) CHECK_CONTAINS(src, ", 64 query rows a block) of ");
        }
        rt_engine_free(e);
        symc_module_destroy(m);
    }
}

/* grouped-query attention (repeat_kv: K and V [B, 2, S, 64] unsqueezed, expanded 4 times along
 * the new dim and reshaped to 8 heads): the kernel reads K and V at kv head b1 / 4, the wgmma
 * kernel's tensor maps too (sm_90), no expand kernel; NVRTC compiles it */
static void test_attention_group(void) {
    static const char *arch[] = {"sm_90", "sm_80"};
    for (int i = 0; i < 2; i++) {
        symc_error err;
        test_gqa g = test_gqa_module("attn_gqa", 100, 300, 64, 0);
        symc_module *m = g.m;
        rt_engine *e = compile_module(m, arch[i], &err);
        CHECK_MSG(e, "%s: %s", arch[i], err.msg);
        if (e) {
            CHECK(count_steps(e, RT_STEP_KERNEL) == 1);
            CHECK_CONTAINS(e->cuda_source, "kp = ");
            CHECK_CONTAINS(e->cuda_source, "(b1 / 4) *");
            CHECK_CONTAINS(e->cuda_source, i == 0 ? "f16 wgmma" : "f16 tensor cores");
            if (i == 0) CHECK_CONTAINS(e->cuda_source, ", (int)(b1 / 4), (int)b0, fb);");
            rt_engine_free(e);
        }
        symc_module_destroy(m);
    }
}

/* a slice along one axis with step 1 copies rows as 16-byte vectors when both row lengths are whole
 * vectors (Llama's rotate_half halves, a middle axis of f32 rows); an odd width or a step of 2 keeps
 * the element loop; NVRTC compiles each */
static void test_slice_rows(void) {
    static const struct {
        symc_dtype dt;
        int64_t axis, start, end, step;
        int vec;
    } cases[] = {{SYMC_F16, 2, 64, 128, 1, 1}, {SYMC_F16, 2, 0, 64, 1, 1},  {SYMC_F32, 1, 1, 3, 1, 1},
                 {SYMC_F16, 2, 0, 3, 1, 0},    {SYMC_F16, 2, 0, 128, 2, 0}, {SYMC_BF16, -1, -64, 1000, 1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        symc_error err;
        symc_module *m = symc_module_create("slice_rows", &err);
        symc_dim B;
        symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
        symc_tensor x;
        symc_add_input(m, "x", cases[i].dt, 3, (symc_dim[]){B, symc_dim_const(m, 4), symc_dim_const(m, 128)}, &x, &err);
        symc_dim st = symc_dim_const(m, cases[i].start), en = symc_dim_const(m, cases[i].end);
        symc_attr sl[4] = {symc_attr_dims("starts", &st, 1), symc_attr_dims("ends", &en, 1),
                           symc_attr_ints("axes", &cases[i].axis, 1), symc_attr_ints("steps", &cases[i].step, 1)};
        symc_mark_output(m, test_node(m, "slice", "sl", &x, 1, sl, 4), &err);
        rt_engine *e = compile_module(m, "sm_80", &err);
        CHECK_MSG(e, "case %zu: %s", i, err.msg);
        if (e) {
            const int vec = strstr(e->cuda_source, "slice: sl, rows as 16-byte vectors when aligned") != NULL;
            CHECK_MSG(vec == cases[i].vec && strstr(e->cuda_source, "slice: sl, "), "case %zu", i);
            if (vec) CHECK_CONTAINS(e->cuda_source, "reinterpret_cast<uint4 *>");
            rt_engine_free(e);
        }
        symc_module_destroy(m);
    }
}

/* the half kernels' tile copies: a thread's chunk column stepped by constants (the wgmma kernel
 * on sm_90, the mma.sync one on sm_80), the indexed loop under SYMC_ATTENTION_CP_STRIDED=0 */
static void test_attention_cp_strided(void) {
    static const char *arch[2] = {"sm_90", "sm_80"};
    for (int c = 0; c < 4; c++) {
        const int strided = c < 2;
        symc_error err;
        symc_module *m = attention_module(32 | 8);
        if (!strided) setenv("SYMC_ATTENTION_CP_STRIDED", "0", 1);
        setenv("SYMC_ATTENTION_TMA", "0", 1); /* the wgmma kernel's K and V by cp.async too */
        rt_engine *e = compile_module(m, arch[c & 1], &err);
        unsetenv("SYMC_ATTENTION_CP_STRIDED");
        unsetenv("SYMC_ATTENTION_TMA");
        CHECK_MSG(e, "%s", err.msg);
        const char *src = e ? e->cuda_source : "";
        const int has_strided = strstr(src, "sc_cp16(dp, in ? src : kp, in);") &&
            strstr(src, "sc_cp16(dp, in ? src : vp, in);");
        const int has_indexed = strstr(src, "for (int e = ") != NULL;
        CHECK_MSG(strstr(src, "fused attention (flash, f16 ") && has_strided == strided && has_indexed == !strided,
                  "case %d (%s): strided %d indexed %d", c, arch[c & 1], has_strided, has_indexed);
        rt_engine_free(e);
        symc_module_destroy(m);
    }
}

/* the wgmma kernel's producer stages K and V by TMA: two tensor maps (K's, V's: rank 4, boxes of
 * 64 columns by 128 keys, 128-byte swizzle), each a kernel parameter by value and its tensor an
 * argument too, one copy an atom, the full barriers counting one arrival; the engine is format 8.
 * SYMC_ATTENTION_TMA=0 and the mma.sync kernel (sm_80) have none. */
static void test_attention_tma(void) {
    static const char *arch[4] = {"sm_90", "sm_90", "sm_80", "sm_90"};
    for (int c = 0; c < 4; c++) {
        symc_error err;
        symc_module *m = attention_module(32 | 8);
        if (c == 1) setenv("SYMC_ATTENTION_TMA", "0", 1);
        if (c == 3) setenv("SYMC_ATTENTION_TMA_Q", "0", 1); /* K and V by TMA, Q by cp.async */
        rt_engine *e = compile_module(m, arch[c], &err);
        unsetenv("SYMC_ATTENTION_TMA");
        unsetenv("SYMC_ATTENTION_TMA_Q");
        CHECK_MSG(e, "%s", err.msg);
        const rt_step *s = e ? first_step(e, RT_STEP_KERNEL) : NULL;
        for (uint32_t i = 0; e && i < e->n_steps; i++)
            if (e->steps[i].kind == RT_STEP_KERNEL && e->steps[i].n_tmaps) s = &e->steps[i];
        const char *src = e ? e->cuda_source : "";
        if (c == 0 || c == 3) {
            const uint32_t nm = c == 0 ? 3 : 2; /* K, V (and Q) */
            CHECK_MSG(s && s->n_tmaps == nm, "tensor maps: %u", s ? s->n_tmaps : 99u);
            uint32_t maps = 0;
            for (uint32_t a = 0; s && a < s->n_args; a++) maps += s->args[a].kind == RT_ARG_TMAP;
            CHECK(maps == nm);
            if (c == 0) {
                CHECK_CONTAINS(src, "sc_tma_load4(sc_smem_addr(Qc + 0), &tm2, 0, (int)q0, (int)b1, (int)b0, mq);");
                CHECK_CONTAINS(src, "sc_mb_expect_tx(mq, 16384u);");
                CHECK_CONTAINS(src, "sc_mb_init(mb, 1);");
                CHECK_CONTAINS(src, "if (threadIdx.x != 256) return;");
                CHECK(!strstr(src, "sc_mb_cp_arrive(mq);"));
            } else {
                CHECK_CONTAINS(src, "sc_mb_cp_arrive(mq);");
                CHECK_CONTAINS(src, "sc_mb_init(mb, 128);");
                CHECK(!strstr(src, "(int)q0"));
            }
            for (uint32_t i = 0; s && i < s->n_tmaps && i < nm; i++) {
                const rt_tmap *t = &s->tmaps[i];
                int arg = 0;
                for (uint32_t a = 0; a < s->n_args; a++)
                    arg |= s->args[a].kind == RT_ARG_TENSOR && s->args[a].value == t->tensor;
                CHECK_MSG(arg && t->rank == 4 && t->box[0] == 64 && t->box[1] == 128 && t->box[2] == 1 &&
                              t->box[3] == 1 && t->swizzle == 3,
                          "map %u: arg %d rank %u box %u %u swizzle %u", i, arg, t->rank, t->box[0], t->box[1],
                          t->swizzle);
            }
            CHECK_CONTAINS(src, "const __grid_constant__ sc_tmap tm0");
            CHECK_CONTAINS(src, "sc_mb_expect_tx(fb, 32768u);");
            CHECK_CONTAINS(src, "sc_tma_load4(sc_smem_addr(Kn + 0), &tm0, 0, (int)k1, (int)b1, (int)b0, fb);");
            CHECK_CONTAINS(src, "sc_tma_load4(sc_smem_addr(Vn + 0), &tm1, 0, (int)k1, (int)b1, (int)b0, fb);");
            CHECK_CONTAINS(src, "sc_mb_init(mb + 16 + 8 * i, 1);");
            uint8_t *bytes = NULL;
            size_t size = 0;
            rt_engine *d = NULL;
            CHECK_MSG(e && rt_engine_encode(e, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
            CHECK_MSG(bytes && rt_engine_decode(bytes, size, &d, &err) == SYMC_OK, "%s", err.msg);
            CHECK(d && d->format_version == 8);
            rt_engine_free(d);
            free(bytes);
        } else {
            for (uint32_t i = 0; e && i < e->n_steps; i++) CHECK(e->steps[i].n_tmaps == 0);
            CHECK(!strstr(src, "sc_tma_load4(sc_smem_addr("));
            if (c == 1) CHECK_CONTAINS(src, "sc_mb_init(mb + 16 + 8 * i, 128);");
        }
        rt_engine_free(e);
        symc_module_destroy(m);
    }
}

/* transformers' attention inputs: B in [1, 8], S in [100, 300], q, k, v [B, 2, S, 16] of dt and
 * keep [B, 1, 1, S] (the padding mask) */
static symc_module *hf_attention_inputs(const char *name, symc_dtype dt, int64_t head_dim, symc_dim *B, symc_dim *S,
                                        symc_tensor *q, symc_tensor *k, symc_tensor *v, symc_tensor *keep) {
    symc_error err;
    symc_module *m = symc_module_create(name, &err);
    symc_declare_symbol(m, "B", 1, 2, 8, 1, B, &err);
    symc_declare_symbol(m, "S", 1, 100, 300, 1, S, &err);
    symc_dim c1 = symc_dim_const(m, 1), c2 = symc_dim_const(m, 2), hd = symc_dim_const(m, head_dim);
    symc_add_input(m, "q", dt, 4, (symc_dim[]){*B, c2, *S, hd}, q, &err);
    symc_add_input(m, "k", dt, 4, (symc_dim[]){*B, c2, *S, hd}, k, &err);
    symc_add_input(m, "v", dt, 4, (symc_dim[]){*B, c2, *S, hd}, v, &err);
    symc_add_input(m, "keep", SYMC_BOOL, 4, (symc_dim[]){*B, c1, c1, *S}, keep, &err);
    return m;
}

/* GPT-2's condition in transformers 5: and(kv_idx <= q_idx, keep), the indices from two ranges */
static symc_tensor hf_causal_keep(symc_module *m, symc_dim S, symc_tensor keep) {
    symc_dim zero_d = symc_dim_const(m, 0), one_d = symc_dim_const(m, 1);
    symc_attr ra[4] = {symc_attr_dims("start", &zero_d, 1), symc_attr_dims("limit", &S, 1),
                       symc_attr_dims("delta", &one_d, 1), symc_attr_dtype("to", SYMC_I64)};
    symc_tensor rk = test_node(m, "range", "rk", NULL, 0, ra, 4), rq = test_node(m, "range", "rq", NULL, 0, ra, 4);
    int64_t ak[3] = {0, 1, 2}, aq[3] = {0, 1, 3};
    symc_attr uk = symc_attr_ints("axes", ak, 3), uq = symc_attr_ints("axes", aq, 3);
    symc_tensor kv = test_node(m, "unsqueeze", "kvidx", &rk, 1, &uk, 1),
                qv = test_node(m, "unsqueeze", "qidx", &rq, 1, &uq, 1);
    symc_tensor le = test_node(m, "less_equal", "le", (symc_tensor[]){kv, qv}, 2, NULL, 0);
    return test_node(m, "and", "both", (symc_tensor[]){le, keep}, 2, NULL, 0);
}

/* the wgmma kernel reads a tile's padding-mask keys before it issues the tile's Q·Kᵀ (their loads
 * in flight under the product), after it under SYMC_ATTENTION_MASK_EARLY=0 */
static void test_attention_early_masks(void) {
    for (int early = 1; early >= 0; early--) {
        symc_error err;
        symc_dim B, S;
        symc_tensor q, k, v, keep;
        symc_module *m = hf_attention_inputs("attn_early", SYMC_F16, 64, &B, &S, &q, &k, &v, &keep);
        symc_dim c1 = symc_dim_const(m, 1);
        int64_t perm[4] = {0, 1, 3, 2};
        symc_attr pe = symc_attr_ints("perm", perm, 4);
        symc_attr ex = symc_attr_dims("shape", (symc_dim[]){B, c1, S, S}, 4);
        symc_tensor kt = test_node(m, "transpose", "kt", &k, 1, &pe, 1);
        symc_tensor scores = test_node(m, "matmul", "scores", (symc_tensor[]){q, kt}, 2, NULL, 0);
        symc_tensor scale = constant(m, "scale", SYMC_F16, 0, NULL), zero = constant(m, "zero", SYMC_F16, 0, NULL);
        symc_tensor fill = constant(m, "fill", SYMC_F16, 0, NULL);
        symc_tensor scaled = test_node(m, "mul", "scaled", (symc_tensor[]){scores, scale}, 2, NULL, 0);
        symc_tensor kbe = test_node(m, "expand", "kbe", &keep, 1, &ex, 1);
        symc_tensor am = test_node(m, "where", "am", (symc_tensor[]){kbe, zero, fill}, 3, NULL, 0);
        symc_tensor s2 = test_node(m, "add", "s2", (symc_tensor[]){scaled, am}, 2, NULL, 0);
        symc_attr ax = symc_attr_int("axis", -1);
        symc_tensor p = test_node(m, "softmax", "p", &s2, 1, &ax, 1);
        symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, v}, 2, NULL, 0);
        symc_mark_output(m, o, &err);
        if (!early) setenv("SYMC_ATTENTION_MASK_EARLY", "0", 1);
        rt_engine *e = compile_module(m, "sm_90", &err);
        unsetenv("SYMC_ATTENTION_MASK_EARLY");
        CHECK_MSG(e, "%s", err.msg);
        const char *src = e ? e->cuda_source : "";
        const char *load = strstr(src, "mkb1_0[n][u] = kl < rem && mk1_0[(k0 + kl) * 1LL] != 0;");
        const char *issue = strstr(src, "dk = sc_wg_lo(sc_smem_addr(Kc), 16);");
        CHECK_MSG(e && strstr(src, "fused attention (flash, f16 wgmma") && load && issue &&
                      (early ? load < issue : load > issue),
                  "early %d: the mask's loads %s the Q·K issue", early, early ? "before" : "after");
        rt_engine_free(e);
        symc_module_destroy(m);
    }
}

/* (m2) transformers 5's masks in the half kernel: where(expand(keep[B,1,1,S] > 0), 0, -inf) added (a
 * padding mask read through the where and the expand once per key tile), expand(rowbias[B,1,S,1])
 * added and where(expand(rowkeep[B,1,S,1]), scores, fill) (read once per row), not per score */
static void test_attention_hf_masks(int causal) {
    symc_error err;
    symc_dim B, S;
    symc_tensor q, k, v, keep, rowbias, rowkeep;
    symc_module *m = hf_attention_inputs("attn_hf", SYMC_F16, 16, &B, &S, &q, &k, &v, &keep);
    symc_dim c1 = symc_dim_const(m, 1);
    symc_add_input(m, "rowbias", SYMC_F16, 4, (symc_dim[]){B, c1, S, c1}, &rowbias, &err);
    symc_add_input(m, "rowkeep", SYMC_BOOL, 4, (symc_dim[]){B, c1, S, c1}, &rowkeep, &err);
    int64_t perm[4] = {0, 1, 3, 2};
    symc_attr pe = symc_attr_ints("perm", perm, 4);
    symc_dim full[4] = {B, c1, S, S};
    symc_attr ex = symc_attr_dims("shape", full, 4);
    symc_tensor kt = test_node(m, "transpose", "kt", &k, 1, &pe, 1);
    symc_tensor scores = test_node(m, "matmul", "scores", (symc_tensor[]){q, kt}, 2, NULL, 0);
    symc_tensor scale = constant(m, "scale", SYMC_F16, 0, NULL), zero = constant(m, "zero", SYMC_F16, 0, NULL);
    symc_tensor fill = constant(m, "fill", SYMC_F16, 0, NULL);
    symc_tensor scaled = test_node(m, "mul", "scaled", (symc_tensor[]){scores, scale}, 2, NULL, 0);
    if (causal) keep = hf_causal_keep(m, S, keep);
    symc_tensor kbe = test_node(m, "expand", "kbe", &keep, 1, &ex, 1);
    symc_tensor am = test_node(m, "where", "am", (symc_tensor[]){kbe, zero, fill}, 3, NULL, 0);
    symc_tensor s2 = test_node(m, "add", "s2", (symc_tensor[]){scaled, am}, 2, NULL, 0);
    symc_tensor rbe = test_node(m, "expand", "rbe", &rowbias, 1, &ex, 1);
    symc_tensor s3 = test_node(m, "add", "s3", (symc_tensor[]){s2, rbe}, 2, NULL, 0);
    symc_tensor rke = test_node(m, "expand", "rke", &rowkeep, 1, &ex, 1);
    symc_tensor sw = test_node(m, "where", "sw", (symc_tensor[]){rke, s3, fill}, 3, NULL, 0);
    symc_attr ax = symc_attr_int("axis", -1);
    symc_tensor p = test_node(m, "softmax", "p", &sw, 1, &ax, 1);
    symc_tensor o = test_node(m, "matmul", "o", (symc_tensor[]){p, v}, 2, NULL, 0);
    symc_mark_output(m, o, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const char *src = e->cuda_source;
        CHECK_CONTAINS(src, "fused attention (flash, f16 tensor cores");
        /* the padding condition once per key tile, the where's values chosen there */
        CHECK_CONTAINS(src,
                       causal ? "mkb1_1[n][u] = kl < rem && mk1_1[(k0 + kl) * 1LL] != 0;"
                              : "mkb1_0[n][u] = kl < rem && mk1_0[(k0 + kl) * 1LL] != 0;");
        CHECK_CONTAINS(
            src, causal ? "v = v + ((true && kj <= qi && mkb1_1[n][u]) ? " : "v = v + ((true && mkb1_0[n][u]) ? ");
        /* the per-row bias and condition once per row */
        CHECK_CONTAINS(src, "const float mr2 = qi < Sq ? (float)sc_h2f(mk2[qi * 1LL]) : 0.f;");
        CHECK_CONTAINS(src, "const bool mr3 = qi < Sq ? (mk3[qi * 1LL] != 0) : false;");
        CHECK_CONTAINS(src, "v = mr3 ? v : ");
        /* the kernel reads the unexpanded inputs, never an expanded [B, 1, S, S] mask per score */
        CHECK(!strstr(src, "[qi * s"));
        const rt_step *st = NULL; /* the last kernel: the attention (the expands run before it) */
        for (uint32_t i = 0; i < e->n_steps; i++)
            if (e->steps[i].kind == RT_STEP_KERNEL) st = &e->steps[i];
        int reads_expanded = 0, reads_inputs = 0;
        for (uint32_t a = 0; st && a < st->n_args; a++) {
            if (st->args[a].kind != RT_ARG_TENSOR) continue;
            uint32_t t = st->args[a].value;
            reads_expanded |= t == tensor_index(e, "kbe") || t == tensor_index(e, "am") ||
                t == tensor_index(e, "rbe") || t == tensor_index(e, "rke") ||
                (causal && (t == tensor_index(e, "le") || t == tensor_index(e, "both")));
            reads_inputs += t == tensor_index(e, "keep") || t == tensor_index(e, "rowbias") ||
                t == tensor_index(e, "rowkeep");
        }
        CHECK_MSG(st && !reads_expanded && reads_inputs == 3, "attention step %s", st ? "found" : "missing");
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* GPT-2's Conv1D: Gemm(x2d, W, bias) on [B*S, N], Reshape to [B, S, N], then the residual add:
 * one cuBLASLt call writing the add's result with the residual as C (beta 1), no add kernel */
static void test_gemm_residual_view(void) {
    symc_error err;
    symc_module *m = symc_module_create("conv1d", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
    symc_dim c2 = symc_dim_const(m, 2), c16 = symc_dim_const(m, 16), b2 = symc_dim_mul(m, B, c2);
    symc_tensor x, res;
    symc_add_input(m, "x", SYMC_F16, 2, (symc_dim[]){b2, c16}, &x, &err);
    symc_add_input(m, "res", SYMC_F16, 3, (symc_dim[]){B, c2, c16}, &res, &err);
    symc_tensor w = constant(m, "w", SYMC_F16, 2, (int64_t[]){16, 16}),
                bias = constant(m, "bias", SYMC_F16, 1, (int64_t[]){16});
    symc_tensor g = test_node(m, "gemm", "proj", (symc_tensor[]){x, w, bias}, 3, NULL, 0);
    symc_attr rs = symc_attr_dims("shape", (symc_dim[]){B, c2, c16}, 3);
    symc_tensor v = test_node(m, "reshape", "view", &g, 1, &rs, 1);
    symc_mark_output(m, test_node(m, "add", "sum", (symc_tensor[]){v, res}, 2, NULL, 0), &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        const rt_step *s = first_step(e, RT_STEP_GEMM);
        CHECK(s && s->tensors[2] == tensor_index(e, "res") && s->tensors[4] == tensor_index(e, "sum") &&
              s->tensors[3] == tensor_index(e, "bias"));
        CHECK(!first_step(e, RT_STEP_KERNEL)); /* no add kernel */
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* split and concat along the last axis move 16 bytes a thread when every part's block of a row is
 * a whole number of 16-byte vectors for every binding (GPT-2's qkv split: 2304 -> 3 x 768 halves),
 * with the element loop behind a run-time alignment test; a part of 12 halves keeps the element
 * loop only. A constant exponent 2 or 3 is products (GPT-2's tanh GELU cubes), 2.5 is powf. */
static void test_move_vectors(void) {
    for (int odd = 0; odd < 2; odd++) {
        symc_error err;
        symc_module *m = symc_module_create("moves", &err);
        symc_dim B;
        symc_declare_symbol(m, "B", 1, 4, 64, 1, &B, &err);
        const int64_t w0 = 8, w1 = odd ? 12 : 16;
        symc_dim wd = symc_dim_const(m, w0 + w1);
        symc_tensor x, h;
        symc_add_input(m, "x", SYMC_F16, 2, (symc_dim[]){B, wd}, &x, &err);
        symc_add_input(m, "h", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 8)}, &h, &err);
        symc_dim sz[2] = {symc_dim_const(m, w0), symc_dim_const(m, w1)};
        symc_attr sp[2] = {symc_attr_int("axis", -1), symc_attr_dims("sizes", sz, 2)};
        symc_tensor parts[2];
        CHECK_MSG(symc_add_node(m, "split", "split", &x, 1, sp, 2, parts, 2, &err) == SYMC_OK, "%s", err.msg);
        symc_attr ax = symc_attr_int("axis", -1);
        symc_mark_output(m, test_node(m, "concat", "cat", (symc_tensor[]){parts[1], parts[0], parts[1]}, 3, &ax, 1),
                         &err);
        const float two = 2.f, three = 3.f, half5 = 2.5f;
        symc_tensor e2 = SYMC_TENSOR_NONE, e3 = SYMC_TENSOR_NONE, e25 = SYMC_TENSOR_NONE;
        CHECK(symc_add_constant(m, "two", SYMC_F32, 0, NULL, &two, 4, &e2, &err) == SYMC_OK);
        CHECK(symc_add_constant(m, "three", SYMC_F32, 0, NULL, &three, 4, &e3, &err) == SYMC_OK);
        CHECK(symc_add_constant(m, "two_and_half", SYMC_F32, 0, NULL, &half5, 4, &e25, &err) == SYMC_OK);
        symc_mark_output(m, test_node(m, "pow", "sq", (symc_tensor[]){h, e2}, 2, NULL, 0), &err);
        symc_mark_output(m, test_node(m, "pow", "cube", (symc_tensor[]){h, e3}, 2, NULL, 0), &err);
        symc_mark_output(m, test_node(m, "pow", "p25", (symc_tensor[]){h, e25}, 2, NULL, 0), &err);
        rt_engine *e = compile_module(m, "sm_90", &err);
        CHECK_MSG(e, "%s", err.msg);
        if (e) {
            const char *src = e->cuda_source;
            if (odd) CHECK(!strstr(src, "16-byte vectors, a row's"));
            else {
                CHECK_CONTAINS(src,
                               "/* split: split, 16 bytes a thread when aligned, else one thread per input element */");
                CHECK_CONTAINS(src, "/* concat: cat, 16 bytes a thread when aligned, else one thread per output */");
                CHECK_CONTAINS(src, "16-byte vectors, a row's 3LL of them");
                CHECK_CONTAINS(src, "16-byte vectors, a row's 5LL of them");
                CHECK_CONTAINS(src, "if (a < 2LL) { reinterpret_cast<uint4 *>(");
            }
            /* each kernel's text up to the next kernel's comment */
            const char *sq = strstr(src, "/* elementwise (float4 when aligned): sq (pow) */"),
                       *cube = strstr(src, "/* elementwise (float4 when aligned): cube (pow) */"),
                       *p25 = strstr(src, "/* elementwise (float4 when aligned): p25 (pow) */");
            CHECK_MSG(sq && cube && p25 && sq < cube && cube < p25, "the three pow kernels, in order");
            if (sq && cube && p25) {
                const char *pw = strstr(sq, "sc_pow((float)");
                CHECK_MSG(pw && pw > p25, "powf only in the 2.5 kernel");
                CHECK(strstr(sq, "((float)v1 * (float)v1);") && strstr(sq, "((float)v1 * (float)v1);") < cube);
                CHECK(strstr(cube, "((float)v1 * (float)v1 * (float)v1);") &&
                      strstr(cube, "((float)v1 * (float)v1 * (float)v1);") < p25);
            }
            rt_engine_free(e);
        }
        symc_module_destroy(m);
    }
}

/* the causal tail (cg_att_causal_tail): transformers' causal mask, where(kv <= q && keep, 0, fill) added
 * last to the f32 product of f16 Q and K (as --fp16 engines keep the logits), stops at the row block's
 * diagonal once every row has an unmasked score: the half kernel breaks out of its key loop and a
 * warp skips tiles past its rows while one has none. A fill above -1e30, bf16 Q and K, or an op
 * after the mask keep the whole key range. */
static void test_attention_causal_tail(void) {
    static const struct {
        symc_dtype dt;
        float fill;
        int extra, tail;
    } cases[] = {
        {SYMC_F16, -3.40282347e38f, 0, 1},  {SYMC_F16, -INFINITY, 0, 1},       {SYMC_F16, -1e4f, 0, 0},
        {SYMC_BF16, -3.40282347e38f, 0, 0}, {SYMC_F16, -3.40282347e38f, 1, 0},
    };
    /* i >= n: the cases again at head dim 64 on sm_90, where the tail keeps the mma.sync kernel (its
     * block stops at the diagonal; the wgmma kernel's producer would load every key tile) and the
     * others take wgmma */
    const size_t n = sizeof cases / sizeof cases[0];
    for (size_t j = 0; j < 2 * n; j++) {
        symc_error err;
        symc_dim B, S;
        symc_tensor q, k, v, keep;
        const size_t i = j % n;
        const int hopper = j >= n;
        symc_module *m = hf_attention_inputs("attn_tail", cases[i].dt, hopper ? 64 : 16, &B, &S, &q, &k, &v, &keep);
        symc_dim c1 = symc_dim_const(m, 1);
        int64_t perm[4] = {0, 1, 3, 2};
        symc_attr pe = symc_attr_ints("perm", perm, 4), tof = symc_attr_dtype("to", SYMC_F32);
        /* Q, K and V widened to f32 (the kernel reads their half storage) */
        symc_tensor q32 = test_node(m, "cast", "q32", &q, 1, &tof, 1),
                    k32 = test_node(m, "cast", "k32", &k, 1, &tof, 1),
                    v32 = test_node(m, "cast", "v32", &v, 1, &tof, 1);
        symc_tensor kt = test_node(m, "transpose", "kt", &k32, 1, &pe, 1);
        symc_tensor scf = test_node(m, "matmul", "scores", (symc_tensor[]){q32, kt}, 2, NULL, 0);
        const float quarter = 0.25f, zero = 0.f, one = 1.f;
        symc_tensor scale = SYMC_TENSOR_NONE, z = SYMC_TENSOR_NONE, fill = SYMC_TENSOR_NONE, bias = SYMC_TENSOR_NONE;
        CHECK(symc_add_constant(m, "scale", SYMC_F32, 0, NULL, &quarter, 4, &scale, &err) == SYMC_OK);
        CHECK(symc_add_constant(m, "zero", SYMC_F32, 0, NULL, &zero, 4, &z, &err) == SYMC_OK);
        CHECK(symc_add_constant(m, "fill", SYMC_F32, 0, NULL, &cases[i].fill, 4, &fill, &err) == SYMC_OK);
        CHECK(symc_add_constant(m, "bias", SYMC_F32, 0, NULL, &one, 4, &bias, &err) == SYMC_OK);
        symc_tensor scaled = test_node(m, "mul", "scaled", (symc_tensor[]){scf, scale}, 2, NULL, 0);
        symc_dim full[4] = {B, c1, S, S};
        symc_attr ex = symc_attr_dims("shape", full, 4);
        symc_tensor both = hf_causal_keep(m, S, keep);
        symc_tensor kbe = test_node(m, "expand", "kbe", &both, 1, &ex, 1);
        symc_tensor am = test_node(m, "where", "am", (symc_tensor[]){kbe, z, fill}, 3, NULL, 0);
        symc_tensor s2 = test_node(m, "add", "s2", (symc_tensor[]){scaled, am}, 2, NULL, 0);
        if (cases[i].extra) s2 = test_node(m, "add", "s3", (symc_tensor[]){s2, bias}, 2, NULL, 0);
        symc_attr ax = symc_attr_int("axis", -1);
        symc_tensor p = test_node(m, "softmax", "p", &s2, 1, &ax, 1);
        symc_mark_output(m, test_node(m, "matmul", "o", (symc_tensor[]){p, v32}, 2, NULL, 0), &err);
        rt_engine *e = compile_module(m, hopper ? "sm_90" : "sm_80", &err);
        CHECK_MSG(e, "case %zu: %s", i, err.msg);
        if (e && hopper) {
            CHECK_MSG(!!strstr(e->cuda_source, "tensor cores, storage q") == !!cases[i].tail &&
                          !!strstr(e->cuda_source, "wgmma, storage q") == !cases[i].tail,
                      "case %zu at head dim 64 on sm_90: the wgmma kernel iff no tail", i);
            rt_engine_free(e);
            e = NULL;
        }
        if (e) {
            CHECK_MSG(strstr(e->cuda_source, "tensor cores, storage q"), "case %zu: not the half kernel", i);
            const int tail = strstr(e->cuda_source,
                                    "if (k0 >= q0 + 128 && __syncthreads_and((true && m[0][0] > -1e29f") &&
                strstr(e->cuda_source, "|| !__all_sync(0xffffffffu, (true && m[0][0] > -1e29f");
            CHECK_MSG(tail == cases[i].tail, "case %zu: causal tail %d, want %d", i, tail, cases[i].tail);
            CHECK_MSG(!strstr(e->cuda_source, "__syncthreads_and(") == !cases[i].tail, "case %zu", i);
            rt_engine_free(e);
        }
        symc_module_destroy(m);
    }
}

/* GPT-2's fused projection split into Q, K and V (tests/qkv_split.h: [B, S, 96] along its last
 * axis, each reshaped to [B, S, 2, 16] and transposed to heads), in f16: the half kernel reads the three parts in the
 * split's input at their offsets, and the engine has no split step: one kernel, the attention */
static void test_attention_split_qkv(void) {
    symc_error err;
    symc_tensor x, parts[3], r[3], o;
    symc_module *m = qkv_split_module(SYMC_F16, &x, parts, r, &o);
    rt_engine *e = compile_module(m, "sm_80", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK_CONTAINS(e->cuda_source, "fused attention (flash, f16 tensor cores");
        CHECK(strstr(e->cuda_source, " + 0LL + b0 * ") && strstr(e->cuda_source, " + 32LL + b0 * ") &&
              strstr(e->cuda_source, " + 64LL + b0 * "));
        CHECK(count_steps(e, RT_STEP_KERNEL) == 1 && count_steps(e, RT_STEP_GEMM) == 0);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* the half kernel's online softmax (h16_softmax): the bound compare on the last key tile only, the
 * row max kept stale within its margin with the output rescaled on a warp's vote, one multiply-add
 * a score into ex2; a positive literal scale of f16 Q·Kᵀ folded into that multiply-add (not a zero
 * scale, not bf16's unbounded products, not with a mask after it: test_attention_causal_tail) */
static void test_attention_softmax(void) {
    static const struct {
        int variant, fold;
        const char *arch;
    } cases[] = {{8 | 128, 1, "sm_80"},
                 {8 | 64 | 128, 1, "sm_90"},
                 {16 | 128, 0, "sm_80"},
                 {8, 0, "sm_80"},
                 {8 | 64, 0, "sm_90"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        symc_error err;
        symc_module *m = attention_module(cases[i].variant);
        rt_engine *e = compile_module(m, cases[i].arch, &err);
        CHECK_MSG(e, "case %zu: %s", i, err.msg);
        if (e) {
            /* the key tile: 64 keys, the wgmma kernel's cg_att_h16_kt(1) */
            char full[80];
            snprintf(full, sizeof full, "if (rem == %d) { /* every key of the tile in range */",
                     strstr(e->cuda_source, " wgmma, ") ? cg_att_h16_kt(1) : 64);
            CHECK_CONTAINS(e->cuda_source, full);
            CHECK_CONTAINS(e->cuda_source, "} else { /* the last tile: keys past Sk are -inf */");
            CHECK(strstr(e->cuda_source, "kl < rem ? v : NINF") > strstr(e->cuda_source, full));
            CHECK_CONTAINS(e->cuda_source, "if (__any_sync(0xffffffffu, up))");
            /* the rescale carries both maxima's exponent offsets; a row beyond 2^22 takes the subtraction,
             * the whole warp on its vote, the others one multiply-add a score */
            CHECK_CONTAINS(e->cuda_source, "sc_ex2(fmaf(mo - mx, ea, sc_att_e(mx, ea) - sc_att_e(mo, ea)))");
            CHECK_CONTAINS(e->cuda_source, "const bool sub = !(fabsf(b) < 4194304.f);");
            /* B and the subtrahend change with the max only: set inside the rescale */
            CHECK(strstr(e->cuda_source, "bq[mt][h] = sub ? 0.f : b;") > strstr(e->cuda_source, "if (mx > mo + "));
            CHECK(strstr(e->cuda_source, "big |= sub;") > strstr(e->cuda_source, "if (mx > mo + "));
            const char *slow = strstr(e->cuda_source, "if (big) /* a row of this thread past 2^22");
            CHECK(slow && strstr(slow, "s[mt][n][2 * h] -= c, s[mt][n][2 * h + 1] -= c;") &&
                  strstr(slow, "sc_ex2(fmaf(s[mt][n][2 * h], ea, bq[mt][h]))") >
                      strstr(slow, "s[mt][n][2 * h] -= c, s[mt][n][2 * h + 1] -= c;"));
            CHECK(!strstr(e->cuda_source, "sc_ex2(fmaf(s[mt][n][2 * h] - ")); /* one copy of the exponentials */
            const char *fold = strstr(e->cuda_source, "/* the scale (0.125) is folded into the exponent */");
            CHECK_MSG(!fold == !cases[i].fold, "case %zu: fold %d", i, !!fold);
            /* folded: A = log2(e) / 8, and the margin 8 ln 2 in raw products (x8) */
            if (cases[i].fold) CHECK_CONTAINS(e->cuda_source, "const float ea = ((float)0.180336880111");
            else CHECK_CONTAINS(e->cuda_source, "const float ea = ((float)1.44269504088");
            rt_engine_free(e);
        }
        symc_module_destroy(m);
    }
}

static void test_attention(int variant) {
    symc_error err;
    symc_module *m = attention_module(variant);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e && variant >= 8) {
        /* half storage: the half tensor-core kernel, P packed to half pairs, 64 of 128 keys double buffered */
        CHECK_CONTAINS(e->cuda_source,
                       variant & 8
                           ? "fused attention (flash, f16 tensor cores, storage q f16 k f16 v f16 o f16, D 16"
                           : "fused attention (flash, bf16 tensor cores, storage q bf16 k bf16 v bf16 o bf16, D 16");
        CHECK_CONTAINS(e->cuda_source,
                       variant & 8 ? "sc_mma_f16(o[mt][2 * np], pa[mt], b);"
                                   : "sc_mma_bf16(o[mt][2 * np], pa[mt], b);");
        CHECK_CONTAINS(e->cuda_source, "sc_cp_wait<1>();");
        const rt_step *s = first_step(e, RT_STEP_KERNEL);
        CHECK(s && s->block == 128 && s->shared == (128 * 24 + 4 * 64 * 24) * 2);
        if (variant & 4) CHECK_CONTAINS(e->cuda_source, "const float rL = L == 0.f ? 0.f : 1.f / L;");
        rt_engine_free(e);
        symc_module_destroy(m);
        return;
    }
    if (e && variant >= 4) {
        /* a fully masked row is stored as zeros: L == 0 in the fused kernel, a max of -inf in the row kernel */
        if (variant == 4) CHECK_CONTAINS(e->cuda_source, "const float rL = L == 0.f ? 0.f : 1.f / L;");
        else CHECK_CONTAINS(e->cuda_source, "mx == -__int_as_float(0x7f800000) ? (float)0 :");
    }
    if (e && variant < 4) CHECK(!strstr(e->cuda_source, "L == 0.f ?") && !strstr(e->cuda_source, "? (float)0 :"));
    const int base = variant & 3;
    if (e) {
        if (base == 3) {
            CHECK(count_steps(e, RT_STEP_GEMM) == 0 && count_steps(e, RT_STEP_KERNEL) == 1);
            CHECK_CONTAINS(e->cuda_source, "fused attention (flash, fp32, D 12, Dv 12)");
            CHECK(first_step(e, RT_STEP_KERNEL) && first_step(e, RT_STEP_KERNEL)->block == 256);
        } else if (base == 0) {
            CHECK(count_steps(e, RT_STEP_GEMM) == 0 && count_steps(e, RT_STEP_KERNEL) == 1);
            CHECK_CONTAINS(e->cuda_source, "fused attention (flash, 3xTF32 tensor cores, D 16, Dv 16)");
            const rt_step *s = first_step(e, RT_STEP_KERNEL);
            CHECK(s && s->shared > 0 && s->block == 128);
            /* the kernel writes the transposed output itself and reads q, k, v */
            int wrote = 0, reads = 0;
            for (uint32_t i = 0; s && i < s->n_args; i++) {
                if (s->args[i].kind != RT_ARG_TENSOR) continue;
                wrote |= s->args[i].value == tensor_index(e, "ot");
                reads += s->args[i].value == tensor_index(e, "q") || s->args[i].value == tensor_index(e, "k") ||
                    s->args[i].value == tensor_index(e, "v");
            }
            CHECK(wrote && reads == 3);
        } else {
            CHECK(count_steps(e, RT_STEP_GEMM) == 2);
            CHECK(!strstr(e->cuda_source, "fused attention"));
        }
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (n) softmax(layer_norm(x)) over the same rows is one kernel (the norm
 * computed inside the softmax's kernel); not when the norm's result is
 * also a graph output */
static void test_row_chain(int shared) {
    symc_error err;
    symc_module *m = symc_module_create("chain", &err);
    symc_dim R, H;
    symc_declare_symbol(m, "R", 1, 64, 512, 1, &R, &err);
    symc_declare_symbol(m, "H", 64, 768, 4096, 1, &H, &err);
    symc_tensor x, g, b;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){R, H}, &x, &err);
    symc_add_input(m, "g", SYMC_F32, 1, (symc_dim[]){H}, &g, &err);
    symc_add_input(m, "b", SYMC_F32, 1, (symc_dim[]){H}, &b, &err);
    symc_attr ax = symc_attr_int("axis", -1), lna[2] = {symc_attr_int("axis", -1), symc_attr_float("epsilon", 1e-5)};
    symc_tensor n = test_node(m, "layer_norm", "ln", (symc_tensor[]){x, g, b}, 3, lna, 2);
    symc_tensor p = test_node(m, "softmax", "sm", &n, 1, &ax, 1);
    symc_mark_output(m, p, &err);
    if (shared) symc_mark_output(m, n, &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(count_steps(e, RT_STEP_KERNEL) == (shared ? 2u : 1u));
        if (shared) CHECK(!strstr(e->cuda_source, "computed in this kernel"));
        else CHECK_CONTAINS(e->cuda_source, "its input is ln (layer_norm) computed in this kernel (never stored)");
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* (o) the fusion plan as the pipeline's fuse pass makes it with the CUDA
 * target's rules (cg_fuse_rules): printed groups, the same engine as a
 * build that plans inside the target, no plan without GPU code, and a
 * corrupted plan refused by the build */
static void test_plan(void) {
    symc_error err;
    symc_module *m = attention_module(0), *unplanned = attention_module(0);
    cg_options o = cg_default_options();
    o.tune = 0;
    o.arch = "sm_90";
    pass_options po = {.fuse = cg_fuse_rules(&o)};
    CHECK_MSG(pass_run_pipeline(m, &po, &err) == SYMC_OK, "%s", err.msg);
    char *text = symc_module_print(m);
    CHECK_CONTAINS(text,
                   "fused groups (cuda):\n  o (matmul): attention with qh (claimed), kt (claimed), scores (claimed), "
                   "scaled (claimed), p (claimed), ot (claimed)\n");
    free(text);
    uint8_t *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    CHECK_MSG(cg_build_engine(m, &o, &a, &na, &err) == SYMC_OK, "%s", err.msg);
    CHECK(m->fuse != NULL); /* the module's own plan stays */
    CHECK_MSG(symc_module_infer_shapes(unplanned, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(cg_build_engine(unplanned, &o, &b, &nb, &err) == SYMC_OK, "%s", err.msg);
    CHECK(unplanned->fuse == NULL); /* planned for that build only */
    rt_engine *ea = NULL, *eb = NULL;
    CHECK(a && rt_engine_decode(a, na, &ea, &err) == SYMC_OK);
    CHECK(b && rt_engine_decode(b, nb, &eb, &err) == SYMC_OK);
    CHECK(ea && eb && !strcmp(ea->cuda_source, eb->cuda_source) && ea->n_steps == eb->n_steps);
    rt_engine_free(ea);
    rt_engine_free(eb);
    free(a);
    free(b);
    /* the softmax taken out of the attention: its group no longer holds */
    uint32_t p = IR_NONE;
    CHECK(ir_find_node(m, "p", &p));
    m->fuse[p] = (ir_fuse){IR_FUSE_STEP, p};
    CHECK(cg_build_engine(m, &o, &a, &na, &err) == SYMC_ERR_VERIFY);
    CHECK_CONTAINS(err.msg,
                   "fusion plan: node 'scaled' (mul), claimed of 'o': only the last node of a group may make a "
                   "result read outside it");
    /* no GPU code, no rules: the pipeline leaves no plan */
    o.gpu = 0;
    CHECK(cg_fuse_rules(&o) == NULL);
    po.fuse = cg_fuse_rules(&o);
    CHECK_MSG(pass_run_pipeline(m, &po, &err) == SYMC_OK, "%s", err.msg);
    CHECK(m->fuse == NULL);
    symc_module_destroy(m);
    symc_module_destroy(unplanned);
}

/* resize (codegen/cuda_emit_resize.c): NVRTC compiles a kernel for every mode of the reference,
 * each nearest rounding rule and coordinate transformation, antialias, exclude_outside,
 * tf_crop_and_resize, an axis resized to a symbolic size (the scale known at run time), and
 * f16 / f64 storage; integer tensors and antialias at a run-time scale are refused by name. */
static symc_tensor resize_node(symc_module *m, const char *name, symc_tensor x, const symc_dim *sizes, const char *mode,
                               const char *coord, const char *nearest, const double *scales, int antialias, int exclude,
                               const double *roi) {
    symc_attr a[9];
    uint32_t n = 0;
    a[n++] = symc_attr_dims("sizes", sizes, 4);
    a[n++] = symc_attr_str("mode", mode);
    a[n++] = symc_attr_str("coord_mode", coord);
    if (nearest) a[n++] = symc_attr_str("nearest_mode", nearest);
    if (scales) a[n++] = symc_attr_floats("scales", scales, 4);
    if (antialias) a[n++] = symc_attr_int("antialias", 1);
    if (exclude) a[n++] = symc_attr_int("exclude_outside", 1);
    if (roi) {
        a[n++] = symc_attr_floats("roi", roi, 8);
        a[n++] = symc_attr_float("extrapolation_value", -2.5);
    }
    return test_node(m, "resize", name, &x, 1, a, n);
}

static void test_resize(void) {
    symc_error err;
    symc_module *m = symc_module_create("resize", &err);
    symc_dim B, H;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "H", 4, 8, 32, 1, &H, &err);
    symc_dim c3 = symc_dim_const(m, 3), c6 = symc_dim_const(m, 6), c12 = symc_dim_const(m, 12);
    symc_dim c16 = symc_dim_const(m, 16), c24 = symc_dim_const(m, 24);
    symc_tensor x, xh, xd;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){B, c3, H, c12}, &x, &err);
    symc_add_input(m, "xh", SYMC_F16, 4, (symc_dim[]){B, c3, c12, c12}, &xh, &err);
    symc_add_input(m, "xd", SYMC_F64, 4, (symc_dim[]){B, c3, c12, c12}, &xd, &err);
    symc_dim H2 = symc_dim_mul(m, H, symc_dim_const(m, 2));
    symc_dim up[4] = {B, c3, H2, c24}, fixed[4] = {B, c3, c16, c6};
    static const double s2[4] = {1, 1, 2, 2}, half[4] = {1, 1, 0.5, 0.5}, roi[8] = {0, 0, 0.1, -0.2, 1, 1, 0.9, 1.3};
    static const char *const coords[] = {"half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
                                         "align_corners", "asymmetric",           "tf_crop_and_resize"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    symc_tensor outs[32];
    uint32_t n_out = 0;
    char name[64];
    for (int i = 0; i < 6; i++) { /* nearest: every coordinate transformation, and every rounding rule */
        snprintf(name, sizeof name, "near_%s", coords[i]);
        outs[n_out++] = resize_node(m, name, x, up, "nearest", coords[i], nearests[i % 4], s2, 0, 0,
                                    i == 5 ? roi : NULL);
    }
    for (int i = 0; i < 6; i++) { /* linear and cubic: every coordinate transformation, the scale at run time */
        snprintf(name, sizeof name, "%s_%s", i % 2 ? "cubic" : "linear", coords[i]);
        outs[n_out++] = resize_node(m, name, x, fixed, i % 2 ? "cubic" : "linear", coords[i], NULL, NULL, 0, i == 3,
                                    i == 5 ? roi : NULL);
    }
    symc_dim down[4] = {B, c3, c6, c6};
    outs[n_out++] = resize_node(m, "aa_linear", xh, down, "linear", "half_pixel", NULL, half, 1, 0, NULL);
    outs[n_out++] = resize_node(m, "aa_cubic", xd, down, "cubic", "pytorch_half_pixel", NULL, NULL, 1, 1, NULL);
    outs[n_out++] = resize_node(m, "near_half", xh, (symc_dim[]){B, c3, c24, c24}, "nearest", "asymmetric", "floor",
                                NULL, 0, 0, NULL);
    for (uint32_t i = 0; i < n_out; i++) CHECK(symc_mark_output(m, outs[i], &err) == SYMC_OK);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e != NULL, "resize: %s", err.msg);
    if (e) {
        CHECK(count_steps(e, RT_STEP_KERNEL) == n_out);
        for (uint32_t i = 0; i < e->n_nodes; i++) {
            char want[96];
            snprintf(want, sizeof want, "resize: %s, ", e->nodes[i].name);
            CHECK_MSG(e->nodes[i].op != IR_OP_RESIZE || strstr(e->cuda_source, want), "no kernel for %s",
                      e->nodes[i].name);
        }
        CHECK(strstr(e->cuda_source, "sc_h2f(") && strstr(e->cuda_source, "sc_f2h("));
        rt_engine_free(e);
    }
    symc_module_destroy(m);

    /* refused by name: an integer tensor, antialias whose scale is known only at run time */
    for (int v = 0; v < 2; v++) {
        m = symc_module_create("resize_refused", &err);
        symc_declare_symbol(m, "H", 4, 8, 32, 1, &H, &err);
        symc_dim c1 = symc_dim_const(m, 1), k6 = symc_dim_const(m, 6), k12 = symc_dim_const(m, 12);
        symc_add_input(m, "x", v ? SYMC_F32 : SYMC_I64, 4, (symc_dim[]){c1, c1, H, k12}, &x, &err);
        symc_dim sz[4] = {c1, c1, symc_dim_const(m, 16), k6};
        symc_tensor y = resize_node(m, "rs", x, sz, "linear", "half_pixel", NULL, NULL, v, 0, NULL);
        CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
        e = compile_module(m, "sm_90", &err);
        CHECK(e == NULL);
        CHECK_MSG(strstr(err.msg, "'rs'") && strstr(err.msg, v ? "antialias on axis 2" : "float tensors only"),
                  "resize refusal %d: %s", v, err.msg);
        rt_engine_free(e);
        symc_module_destroy(m);
    }
}

static const rt_step *step_of(const rt_engine *e, const char *node) {
    for (uint32_t i = 0; i < e->n_steps; i++)
        if (!strcmp(e->nodes[e->steps[i].node].name, node)) return &e->steps[i];
    return NULL;
}

/* 1x1 convolutions with stride 1, no pads and one group become cuBLASLt GEMM steps on their conv2d node (a = w, b = x,
 * c = the residual with beta 1, the bias per channel, the relu), in f32, f16 and bf16; a 3x3, a strided, a padded and
 * a grouped 1x1 convolution stay cuDNN CONV steps. The runtime's plan of the GEMM step (rt_cuda_gemm_sizes, no GPU) is one
 * GEMM per image, m = Cout, n = H * W, k = Cin, batch = B, and it refuses a GEMM step on a convolution that is not
 * such a 1x1 one. */
static void test_conv1x1(symc_dtype dt) {
    symc_error err;
    symc_module *m = symc_module_create("conv1x1", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, 8, 1, &B, &err);
    symc_dim d[4] = {B, symc_dim_const(m, 16), symc_dim_const(m, 7), symc_dim_const(m, 9)};
    symc_tensor x;
    symc_add_input(m, "x", dt, 4, d, &x, &err);
    symc_tensor w1 = constant(m, "w1", dt, 4, (int64_t[]){32, 16, 1, 1}),
                b1 = constant(m, "b1", dt, 1, (int64_t[]){32});
    symc_tensor w2 = constant(m, "w2", dt, 4, (int64_t[]){16, 32, 1, 1}),
                b2 = constant(m, "b2", dt, 1, (int64_t[]){16});
    symc_tensor w3 = constant(m, "w3", dt, 4, (int64_t[]){16, 16, 1, 1});
    symc_tensor w33 = constant(m, "w33", dt, 4, (int64_t[]){16, 16, 3, 3});
    symc_tensor wg = constant(m, "wg", dt, 4, (int64_t[]){16, 8, 1, 1});
    symc_tensor c1 = test_node(m, "conv2d", "c1", (symc_tensor[]){x, w1, b1}, 3, NULL, 0);
    symc_tensor r1 = test_node(m, "relu", "r1", &c1, 1, NULL, 0);
    int64_t ones2[2] = {1, 1}, zeros4[4] = {0, 0, 0, 0}, twos[2] = {2, 2}, pads1[4] = {1, 1, 1, 1};
    symc_attr plain[3] = {symc_attr_ints("strides", ones2, 2), symc_attr_ints("pads", zeros4, 4),
                          symc_attr_int("group", 1)}; /* the defaults spelled out */
    symc_tensor c2 = test_node(m, "conv2d", "c2", (symc_tensor[]){r1, w2, b2}, 3, plain, 3);
    symc_tensor s2 = test_node(m, "add", "s2", (symc_tensor[]){c2, x}, 2, NULL, 0);
    symc_tensor r2 = test_node(m, "relu", "r2", &s2, 1, NULL, 0);
    symc_tensor c3 = test_node(m, "conv2d", "c3", (symc_tensor[]){r2, w3}, 2, NULL, 0);
    symc_attr p1 = symc_attr_ints("pads", pads1, 4), st2 = symc_attr_ints("strides", twos, 2);
    symc_attr g2 = symc_attr_int("group", 2);
    symc_tensor k3 = test_node(m, "conv2d", "k3", (symc_tensor[]){c3, w33}, 2, &p1, 1);
    symc_tensor down = test_node(m, "conv2d", "down", (symc_tensor[]){c3, w3}, 2, &st2, 1);
    symc_tensor padded = test_node(m, "conv2d", "padded", (symc_tensor[]){c3, w3}, 2, &p1, 1);
    symc_tensor grouped = test_node(m, "conv2d", "grouped", (symc_tensor[]){c3, wg}, 2, &g2, 1);
    symc_tensor outs[4] = {k3, down, padded, grouped};
    for (int i = 0; i < 4; i++) symc_mark_output(m, outs[i], &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s: %s", symc_dtype_name(dt), err.msg);
    if (e) {
        CHECK_MSG(count_steps(e, RT_STEP_GEMM) == 3 && count_steps(e, RT_STEP_CONV) == 4, "%s: %u GEMM, %u CONV steps",
                  symc_dtype_name(dt), count_steps(e, RT_STEP_GEMM), count_steps(e, RT_STEP_CONV));
        const rt_step *g1 = step_of(e, "c1"), *g2s = step_of(e, "c2"), *g3 = step_of(e, "c3");
        CHECK(g1 && g1->kind == RT_STEP_GEMM && g1->tensors[0] == tensor_index(e, "w1") &&
              g1->tensors[1] == tensor_index(e, "x") && g1->tensors[2] == RT_NONE &&
              g1->tensors[3] == tensor_index(e, "b1") && g1->tensors[4] == tensor_index(e, "r1") &&
              g1->epilogue == RT_EPI_RELU && g1->beta == 0.0f && g1->alpha == 1.0f && !g1->trans_a && !g1->trans_b);
        CHECK(g2s && g2s->kind == RT_STEP_GEMM && g2s->tensors[0] == tensor_index(e, "w2") &&
              g2s->tensors[1] == tensor_index(e, "r1") && g2s->tensors[2] == tensor_index(e, "x") &&
              g2s->tensors[3] == tensor_index(e, "b2") && g2s->tensors[4] == tensor_index(e, "r2") &&
              g2s->epilogue == RT_EPI_RELU && g2s->beta == 1.0f);
        CHECK(g3 && g3->kind == RT_STEP_GEMM && g3->tensors[3] == RT_NONE && g3->tensors[2] == RT_NONE &&
              g3->tensors[4] == tensor_index(e, "c3") && g3->epilogue == RT_EPI_NONE);
        const char *cudnn[4] = {"k3", "down", "padded", "grouped"};
        for (int i = 0; i < 4; i++) {
            const rt_step *c = step_of(e, cudnn[i]);
            CHECK_MSG(c && c->kind == RT_STEP_CONV, "%s: %s is not a cuDNN step", symc_dtype_name(dt), cudnn[i]);
        }
        /* the runtime's plan at B = 1, 4 (opt), 8: one GEMM per image */
        int64_t *slots = calloc(e->num_slots + 1, sizeof *slots);
        const int64_t bs[3] = {1, 4, 8};
        for (int k = 0; slots && k < 3; k++) {
            int64_t vals[1] = {bs[k]}, sz[4];
            CHECK(sym_program_eval(e->program, e->program_size, vals, e->n_symbols, slots, e->num_slots, &err) ==
                  SYMC_OK);
            CHECK_MSG(rt_cuda_tune_sizes(e, (uint32_t)(g1 - e->steps), slots, sz, &err) == SYMC_OK, "%s", err.msg);
            CHECK_MSG(sz[0] == 32 && sz[1] == 63 && sz[2] == 16 && sz[3] == bs[k],
                      "c1 at B=%lld: m=%lld n=%lld k=%lld batch=%lld", (long long)bs[k], (long long)sz[0],
                      (long long)sz[1], (long long)sz[2], (long long)sz[3]);
            CHECK(rt_cuda_tune_sizes(e, (uint32_t)(g2s - e->steps), slots, sz, &err) == SYMC_OK && sz[0] == 16 &&
                  sz[1] == 63 && sz[2] == 32 && sz[3] == bs[k]);
        }
        /* a GEMM step on a convolution that is not 1x1 / stride 1 / unpadded / one group is refused (a damaged or
         * hand-made engine; codegen never makes one) */
        rt_step *steps = malloc(e->n_steps * sizeof *steps);
        if (steps && slots) {
            memcpy(steps, e->steps, e->n_steps * sizeof *steps);
            rt_engine fake = *e;
            fake.steps = steps;
            for (int i = 0; i < 4; i++) {
                uint32_t k = (uint32_t)(step_of(e, cudnn[i]) - e->steps);
                const rt_node *nd = &e->nodes[steps[k].node];
                steps[k].kind = RT_STEP_GEMM;
                steps[k].n_tensors = 5;
                steps[k].tensors[0] = nd->in[1];
                steps[k].tensors[1] = nd->in[0];
                steps[k].tensors[2] = steps[k].tensors[3] = RT_NONE;
                steps[k].tensors[4] = nd->out[0];
                int64_t sz[4];
                symc_status st = rt_cuda_tune_sizes(&fake, k, slots, sz, &err);
                CHECK_MSG(st == SYMC_ERR_FORMAT && strstr(err.msg, cudnn[i]) &&
                              strstr(err.msg, "1x1 kernel, stride 1, no padding and one group"),
                          "%s as a GEMM: %d %s", cudnn[i], (int)st, st ? err.msg : "");
            }
        }
        free(steps);
        free(slots);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* the source of the kernel a node's step runs: from its comment to the kernel's closing brace */
static char *kernel_source(const rt_engine *e, const char *comment) {
    const char *at = strstr(e->cuda_source, comment), *end = at ? strstr(at, "\n}\n") : NULL;
    if (!end) return NULL;
    size_t n = (size_t)(end - at) + 3;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, at, n);
        s[n] = '\0';
    }
    return s;
}

/* A transpose that moves the last axis and is a batched 2-D transpose [nb, A, B] -> [nb, B, A] once axes of
 * size 1 are dropped and adjacent runs merged (NCHW -> NHWC in f16 with a symbolic batch, NHWC -> NCHW in f32,
 * (0,3,2,1) over an axis of size 1 with a symbolic S inside B, a matrix in i64, a (0,2,1) in u8) runs as shared-memory
 * tiles: a 64x66 tile for 1- and 2-byte types, 32x33 for 4 and 8 bytes, A and B as grouped (checked through the tile
 * counts and row lengths printed in the kernel), one block per tile, and a work size that is the tile count at run
 * time (nb * ceil(A / T) * ceil(B / T), evaluated at two batch sizes). A perm keeping the last axis (1,0,2) and one
 * that is no swap of two groups (0,3,2,1) keep the per-element kernel. NVRTC compiles it all. */
static void test_transpose_tiled(void) {
    symc_error err;
    symc_module *m = symc_module_create("transposes", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 40, 300, 1, &S, &err);
    symc_dim c1 = symc_dim_const(m, 1), c5 = symc_dim_const(m, 5), c7 = symc_dim_const(m, 7), c9 = symc_dim_const(m, 9),
             c96 = symc_dim_const(m, 96), c37 = symc_dim_const(m, 37);
    symc_tensor x, y, u, mi, q, g;
    symc_add_input(m, "x", SYMC_F16, 4, (symc_dim[]){B, c96, c7, c9}, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 4, (symc_dim[]){B, c7, c9, c96}, &y, &err);
    symc_add_input(m, "u", SYMC_F32, 4, (symc_dim[]){B, S, c1, c37}, &u, &err);
    symc_add_input(m, "mi", SYMC_I64, 2, (symc_dim[]){S, c37}, &mi, &err);
    symc_add_input(m, "q", SYMC_U8, 3, (symc_dim[]){B, S, c5}, &q, &err);
    symc_add_input(m, "g", SYMC_F32, 4, (symc_dim[]){B, c5, c7, c9}, &g, &err);
    int64_t to_nhwc[4] = {0, 2, 3, 1}, to_nchw[4] = {0, 3, 1, 2}, rev[4] = {0, 3, 2, 1}, mat[2] = {1, 0},
            last2[3] = {0, 2, 1}, keep[3] = {1, 0, 2};
    symc_attr p_nhwc = symc_attr_ints("perm", to_nhwc, 4), p_nchw = symc_attr_ints("perm", to_nchw, 4),
              p_rev = symc_attr_ints("perm", rev, 4), p_mat = symc_attr_ints("perm", mat, 2),
              p_last2 = symc_attr_ints("perm", last2, 3), p_keep = symc_attr_ints("perm", keep, 3);
    symc_mark_output(m, test_node(m, "transpose", "nhwc", &x, 1, &p_nhwc, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "nchw", &y, 1, &p_nchw, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "unit", &u, 1, &p_rev, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "mat", &mi, 1, &p_mat, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "last2", &q, 1, &p_last2, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "keep", &q, 1, &p_keep, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "rev", &g, 1, &p_rev, 1), &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(cubin_bytes(e) > 0 && ptx_bytes(e) > 0);
        /* name, tile declaration, A, B, tiles of A (ceil(A / T)), tiles of B as printed; NULL: symbolic */
        const struct {
            const char *node, *tile, *a, *b, *ta, *tb;
        } tiled[5] = {
            {"nhwc", "__shared__ unsigned short sc_tile[64][66];", "96LL", "63LL", "2LL", "1LL"},
            {"nchw", "__shared__ float sc_tile[32][33];", "63LL", "96LL", "2LL", "3LL"},
            {"unit", "__shared__ float sc_tile[32][33];", NULL, "37LL", NULL, "2LL"},
            {"mat", "__shared__ long long sc_tile[32][33];", NULL, "37LL", NULL, "2LL"},
            {"last2", "__shared__ unsigned char sc_tile[64][68];", NULL, "5LL", NULL, "1LL"},
        };
        for (int i = 0; i < 5; i++) {
            char comment[128], want[160];
            snprintf(comment, sizeof comment, "transpose: %s, batched 2-D [nb, A, B] -> [nb, B, A] in", tiled[i].node);
            char *ks = kernel_source(e, comment);
            CHECK_MSG(ks, "%s: no tiled kernel", tiled[i].node);
            if (!ks) continue;
            CHECK_MSG(strstr(ks, tiled[i].tile), "%s: %s", tiled[i].node, ks);
            CHECK_MSG(strstr(ks, "SC_ROWS(blk, ") && strstr(ks, "__syncthreads();"), "%s: %s", tiled[i].node, ks);
            const char *T = strstr(tiled[i].tile, "[64]") ? "64" : "32";
            if (tiled[i].a) { /* x read along B, y written along A */
                snprintf(want, sizeof want, "if (a0 + j < %s && b0 + tx < %s)", tiled[i].a, tiled[i].b);
                CHECK_MSG(strstr(ks, want), "%s: no '%s' in %s", tiled[i].node, want, ks);
                snprintf(want, sizeof want, "(b0 + j) * %s + a0 + tx] = sc_tile[tx][j];", tiled[i].a);
                CHECK_MSG(strstr(ks, want), "%s: no '%s' in %s", tiled[i].node, want, ks);
                snprintf(want, sizeof want, "a0 = rest %% %s * %s, b0 = blk %% %s * %s;", tiled[i].ta, T, tiled[i].tb,
                         T);
                CHECK_MSG(strstr(ks, want), "%s: no '%s' in %s", tiled[i].node, want, ks);
            } else { /* A has the symbolic S: a slot parameter */
                snprintf(want, sizeof want, "(a0 + j) * %s + b0 + tx];", tiled[i].b);
                CHECK_MSG(strstr(ks, want), "%s: no '%s' in %s", tiled[i].node, want, ks);
                snprintf(want, sizeof want, "b0 = blk %% %s * %s;", tiled[i].tb, T);
                CHECK_MSG(strstr(ks, want), "%s: no '%s' in %s", tiled[i].node, want, ks);
                CHECK_MSG(strstr(ks, "long long s"), "%s: %s", tiled[i].node, ks);
            }
            CHECK(!strstr(ks, "SC_LOOP"));
            free(ks);
        }
        /* the launch: one block of 256 per tile, the tile count evaluated at run time */
        int64_t *slots = calloc(e->num_slots + 1, sizeof *slots);
        const int64_t bs[2][2] = {{3, 40}, {32, 300}}; /* B, S */
        for (int k = 0; slots && k < 2; k++) {
            CHECK(sym_program_eval(e->program, e->program_size, bs[k], e->n_symbols, slots, e->num_slots, &err) ==
                  SYMC_OK);
            const int64_t b = bs[k][0], s = bs[k][1];
            const struct {
                const char *node;
                int64_t tiles;
            } want[5] = {{"nhwc", b * 2 * 1},
                         {"nchw", b * 2 * 3},
                         {"unit", b * ((s + 31) / 32) * 2},
                         {"mat", ((s + 31) / 32) * 2},
                         {"last2", b * ((s + 63) / 64) * 1}};
            for (int i = 0; i < 5; i++) {
                const rt_step *st = step_of(e, want[i].node);
                CHECK_MSG(st && st->kind == RT_STEP_KERNEL && st->per_block == 1 && st->block == 256 &&
                              slots[st->work] == want[i].tiles,
                          "%s at B=%lld S=%lld: %lld tiles, want %lld", want[i].node, (long long)b, (long long)s,
                          st ? (long long)slots[st->work] : -1LL, (long long)want[i].tiles);
            }
        }
        free(slots);
        /* the last axis kept, and a perm that is no swap of two groups: one thread per output */
        CHECK_CONTAINS(e->cuda_source, "transpose: keep, one thread per output");
        CHECK_CONTAINS(e->cuda_source, "transpose: rev, one thread per output");
        CHECK(count_steps(e, RT_STEP_KERNEL) == 7);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

/* A transpose that keeps the input's innermost merged group innermost moves rows of it as vectors
 * (codegen/cuda_emit_move.c's rows_kept): Swin's window partition (0,1,3,2,4,5) in f16 (rows of
 * 7 * 24 halves: 16-byte vectors, 21 a row), patches from NCHW (0,2,4,1,3,5) in f32 (rows of kw = 4
 * floats: one 16-byte vector), a (1,0,2) with a symbolic S outside a row of 70 floats (8-byte
 * vectors: 280 bytes are no multiple of 16) and one of i64 pairs (16 bytes, 2 elements). Each kernel
 * tests both pointers' alignment at run time and keeps the per-element loop behind it, and its work
 * is the vector count (numel / lanes, evaluated at two sizes). Rows of 3 halves (6 bytes) keep
 * the per-element kernel. NVRTC compiles it all. */
static void test_transpose_rows(void) {
    symc_error err;
    symc_module *m = symc_module_create("transpose_rows", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 4, 32, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 40, 300, 1, &S, &err);
    symc_dim c2 = symc_dim_const(m, 2), c3 = symc_dim_const(m, 3), c4 = symc_dim_const(m, 4), c7 = symc_dim_const(m, 7),
             c8 = symc_dim_const(m, 8), c24 = symc_dim_const(m, 24), c70 = symc_dim_const(m, 70);
    symc_tensor w, p, s, h, l;
    symc_add_input(m, "w", SYMC_F16, 6, (symc_dim[]){B, c4, c7, c4, c7, c24}, &w, &err);
    symc_add_input(m, "p", SYMC_F32, 6, (symc_dim[]){B, c3, c8, c4, c8, c4}, &p, &err);
    symc_add_input(m, "s", SYMC_F32, 3, (symc_dim[]){B, S, c70}, &s, &err);
    symc_add_input(m, "h", SYMC_F16, 3, (symc_dim[]){B, S, c3}, &h, &err);
    symc_add_input(m, "l", SYMC_I64, 3, (symc_dim[]){S, B, c2}, &l, &err);
    int64_t win[6] = {0, 1, 3, 2, 4, 5}, pat[6] = {0, 2, 4, 1, 3, 5}, keep[3] = {1, 0, 2};
    symc_attr p_win = symc_attr_ints("perm", win, 6), p_pat = symc_attr_ints("perm", pat, 6),
              p_keep = symc_attr_ints("perm", keep, 3);
    symc_mark_output(m, test_node(m, "transpose", "windows", &w, 1, &p_win, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "patches", &p, 1, &p_pat, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "rows70", &s, 1, &p_keep, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "rows3", &h, 1, &p_keep, 1), &err);
    symc_mark_output(m, test_node(m, "transpose", "pairs", &l, 1, &p_keep, 1), &err);
    rt_engine *e = compile_module(m, "sm_90", &err);
    CHECK_MSG(e, "%s", err.msg);
    if (e) {
        CHECK(cubin_bytes(e) > 0 && ptx_bytes(e) > 0);
        const struct {
            const char *node, *comment, *vec, *align, *row;
            int64_t lanes;
        } rows[4] = {
            {"windows", "transpose: windows, innermost of 4 merged groups kept: rows as 16-byte vectors", "uint4",
             "& 15ull", "off += r % 21LL * 1LL; r /= 21LL;", 8},
            {"patches", "transpose: patches, innermost of 6 merged groups kept: rows as 16-byte vectors", "uint4",
             "& 15ull", "off += r % 1LL * 1LL; r /= 1LL;", 4},
            {"rows70", "transpose: rows70, innermost of 3 merged groups kept: rows as 8-byte vectors", "uint2",
             "& 7ull", "off += r % 35LL * 1LL; r /= 35LL;", 2},
            {"pairs", "transpose: pairs, innermost of 3 merged groups kept: rows as 16-byte vectors", "uint4",
             "& 15ull", "off += r % 1LL * 1LL; r /= 1LL;", 2},
        };
        for (int i = 0; i < 4; i++) {
            char *ks = kernel_source(e, rows[i].comment);
            CHECK_MSG(ks, "%s: no row kernel in %s", rows[i].node, e->cuda_source);
            if (!ks) continue;
            char want[160];
            snprintf(want, sizeof want, "reinterpret_cast<%s*>", rows[i].vec);
            CHECK_MSG(strstr(ks, want), "%s: no '%s' in %s", rows[i].node, want, ks);
            CHECK_MSG(strstr(ks, rows[i].align), "%s: no '%s' in %s", rows[i].node, rows[i].align, ks);
            CHECK_MSG(strstr(ks, rows[i].row), "%s: no '%s' in %s", rows[i].node, rows[i].row, ks);
            /* the per-element loop behind the alignment test */
            CHECK_MSG(strstr(ks, "} else {") && strstr(ks, "SC_LOOP(i, "), "%s: no fallback in %s", rows[i].node, ks);
            free(ks);
        }
        CHECK_CONTAINS(e->cuda_source, "transpose: rows3, one thread per output");
        int64_t *slots = calloc(e->num_slots + 1, sizeof *slots);
        const int64_t bs[2][2] = {{3, 40}, {32, 300}}; /* B, S */
        for (int k = 0; slots && k < 2; k++) {
            CHECK(sym_program_eval(e->program, e->program_size, bs[k], e->n_symbols, slots, e->num_slots, &err) ==
                  SYMC_OK);
            const int64_t b = bs[k][0], sv = bs[k][1];
            const int64_t numel[4] = {b * 4 * 7 * 4 * 7 * 24, b * 3 * 8 * 4 * 8 * 4, b * sv * 70, sv * b * 2};
            for (int i = 0; i < 4; i++) {
                const rt_step *st = step_of(e, rows[i].node);
                CHECK_MSG(st && st->kind == RT_STEP_KERNEL && slots[st->work] == numel[i] / rows[i].lanes,
                          "%s at B=%lld S=%lld: work %lld, want %lld vectors", rows[i].node, (long long)b,
                          (long long)sv, st ? (long long)slots[st->work] : -1LL, (long long)(numel[i] / rows[i].lanes));
            }
        }
        free(slots);
        rt_engine_free(e);
    }
    symc_module_destroy(m);
}

int main(void) {
    test_transpose_tiled();
    test_transpose_rows();
    test_conv1x1(SYMC_F32);
    test_conv1x1(SYMC_F16);
    test_conv1x1(SYMC_BF16);
    test_resize();
    test_reference_only_ops();
    test_plan();
    test_more_elementwise();
    test_row_chain(0);
    test_row_chain(1);
    test_attention(0);
    test_attention(1);
    test_attention(2);
    test_attention(3);
    test_attention(4);
    test_attention(6);
    test_attention(8);      /* f16 */
    test_attention(16 + 4); /* bf16, zero_masked_rows */
    test_attention_wgmma();
    test_attention_resident();
    test_attention_rows();
    test_attention_group();
    test_slice_rows();
    test_attention_cp_strided();
    test_attention_tma();
    test_attention_early_masks();
    test_attention_hf_masks(0);
    test_attention_hf_masks(1); /* and(causal, padding) */
    test_attention_causal_tail();
    test_attention_softmax();
    test_attention_split_qkv();
    test_move_vectors();
    test_gemm_residual_view();
    test_views_and_dims();
    test_errors();
    test_every_family();
    test_gather_rows();
    test_chain();
    test_gemm(0);
    test_gemm(1);
    test_row_inline(0);
    test_row_inline(1);
    test_row_half(SYMC_F16);
    test_row_half(SYMC_BF16);
    test_gemm_residual(0);
    test_gemm_residual(1);
    test_gemm_residual(2);
    test_transpose_fold(0);
    test_transpose_fold(1);
    test_vector();
    test_row_regimes(256, 4096, 8192, 0);   /* both regimes, block launch */
    test_row_regimes(16, 512, 2048, 1);     /* both regimes, warp launch */
    test_row_regimes(2048, 8192, 65536, 0); /* long rows only */
    test_row_regimes(4, 100, 1000, 0);      /* short rows only */
    return check_report("test_cuda_target");
}
