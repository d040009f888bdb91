/* The ONNX importer on models written by gen_models.py (argv[1] is their
 * folder): one model per op family, checked on the printed IR (symbolic
 * shapes and attributes), on symbolic sizes evaluated against hand formulas
 * across the declared range, on initializer bytes, and on every error the
 * importer reports (message text asserted). Every imported module has
 * already passed ir_verify inside the importer; here it is also re-inferred
 * from scratch (pass_infer_shapes) and round-tripped through .symir. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frontend/onnx.h"
#include "passes/passes.h"
#include "tests/check.h"

static const char *dir;
static symc_error err;
static char *text; /* printout of the last successful import */

/* Imports dir/NAME.onnx with flag/spec pairs (NULL-terminated); NULL on error
 * (err holds why). */
static ir_module *imp(const char *name, ...) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    fe_shape_list l;
    fe_shape_list_init(&l);
    symc_error_clear(&err);
    va_list ap;
    va_start(ap, name);
    symc_status st = SYMC_OK;
    for (const char *flag; !st && (flag = va_arg(ap, const char *));) {
        const char *spec = va_arg(ap, const char *);
        fe_shape_flag f;
        if (!fe_shape_flag_parse(flag, &f)) st = symc_error_setf(&err, SYMC_ERR_INVALID_ARG, "flag %s", flag);
        else st = fe_parse_shapes(&l, f, spec, &err);
    }
    va_end(ap);
    if (!st) st = fe_shape_list_check(&l, &err);
    ir_module *m = NULL;
    if (!st) st = fe_onnx_import_file(path, l.items, l.n, &m, &err);
    fe_shape_list_free(&l);
    free(text);
    text = NULL;
    if (st) return NULL;
    text = ir_print_to_string(m);
    return m;
}

/* Imports and expects success; also checks the module survives a full
 * re-inference and a .symir round trip unchanged. */
static ir_module *ok(ir_module *m, const char *name) {
    CHECK_MSG(m != NULL, "%s: %s", name, err.msg);
    if (!m) return NULL;
    symc_error e2 = {0};
    CHECK_MSG(pass_infer_shapes(m, &e2) == SYMC_OK, "%s re-inferred: %s", name, e2.msg);
    char *again = ir_print_to_string(m);
    CHECK_MSG(again && !strcmp(again, text), "%s: re-inference changed the printout", name);
    free(again);
    uint8_t *buf = NULL;
    size_t size = 0;
    ir_module *back = NULL;
    CHECK_MSG(ir_serialize(m, &buf, &size, &e2) == SYMC_OK, "%s: %s", name, e2.msg);
    CHECK_MSG(buf && ir_deserialize(buf, size, &back, &e2) == SYMC_OK, "%s: %s", name, e2.msg);
    if (back) {
        char *bt = ir_print_to_string(back);
        CHECK_MSG(bt && !strcmp(bt, text), "%s: .symir round trip changed the printout", name);
        free(bt);
        ir_module_free(back);
    }
    free(buf);
    return m;
}

#define EXPECT_ERR(want, msg_text, ...)                                                     \
    do {                                                                                    \
        ir_module *m_ = imp(__VA_ARGS__, NULL);                                             \
        CHECK_MSG(m_ == NULL && err.code == (want), "code %d: %s", (int)err.code, err.msg); \
        CHECK_CONTAINS(err.msg, msg_text);                                                  \
        ir_module_free(m_);                                                                 \
    } while (0)

static const ir_tensor *tensor(ir_module *m, const char *name) {
    uint32_t t;
    CHECK_MSG(ir_find_tensor(m, name, &t), "no tensor '%s'", name);
    return ir_find_tensor(m, name, &t) ? &m->tensors[t] : NULL;
}

/* Value of dim d of a tensor with the named symbols bound (others 1). */
static int64_t eval_dim(ir_module *m, const char *name, int d, const char *s1, int64_t v1, const char *s2, int64_t v2) {
    const ir_tensor *t = tensor(m, name);
    int64_t vals[16];
    uint32_t n = sym_symbol_count(m->syms);
    for (uint32_t i = 0; i < n && i < 16; i++) vals[i] = 1;
    sym_id id;
    if (s1 && sym_symbol_find(m->syms, s1, &id)) vals[id] = v1;
    if (s2 && sym_symbol_find(m->syms, s2, &id)) vals[id] = v2;
    int64_t out = -999;
    symc_error e = {0};
    if (!t || sym_eval(m->syms, t->dims[d], vals, n, &out, &e)) CHECK_MSG(0, "eval %s dim %d: %s", name, d, e.msg);
    return out;
}

/* ---- families ------------------------------------------------------------------------ */

static void test_vit(void) {
    ir_module *m = ok(imp("vit_patch", "--shapes", "x:1x196x768,4x196x768,32x196x768", NULL), "vit_patch");
    if (!m) return;
    CHECK_CONTAINS(text, "B in [1, 32] opt 4  # input 'x' dim 0");
    CHECK_CONTAINS(text, "qkv5: f32[B, 197, 3, 12, 64] = reshape(qkv) {shape=[B, 197, 3, 12, -1]}  # reshape_qkv");
    CHECK_CONTAINS(text, "cls_b: f32[B, 1, 768] = expand(cls) {shape=[B, 1, 768]}  # expand_cls");
    CHECK_CONTAINS(text, "tokens: f32[B, 197, 768] = concat(cls_b, x) {axis=1}");
    /* the shape sub-graphs became attributes and are gone */
    CHECK(!strstr(text, "shape_of") && !strstr(text, "gather") && !strstr(text, "unsqueeze"));
    CHECK(m->n_nodes == 6 && m->n_constants == 2);
    ir_module_free(m);
}

static void test_conv_pool(void) {
    ir_module *m = ok(imp("conv_pool", "--shapes", "x:1x3x32x32,2x3x224x224,8x3x512x512", NULL), "conv_pool");
    if (!m) return;
    CHECK_CONTAINS(text,
                   "c1: f32[N, 16, ((H-1)//2+1), ((W-1)//2+1)] = conv2d(x, w1, b1) {strides=[2, 2], "
                   "pads=[1, 1, 1, 1], dilations=[1, 1], group=1}  # conv1");
    CHECK_CONTAINS(text, "= batch_norm(c1, bn_s, bn_b, bn_m, bn_v) {epsilon=0.00100000005}");
    CHECK_CONTAINS(text, "= conv2d(r1, wg) {strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1], group=4}");
    CHECK_CONTAINS(text, "= conv2d(cg, wd) {strides=[1, 1], pads=[1, 1, 1, 1], dilations=[1, 1], group=16}");
    CHECK_CONTAINS(text, "= max_pool2d(cd) {kernel=[3, 3], strides=[2, 2], pads=[0, 0, 0, 0], ceil_mode=1");
    CHECK_CONTAINS(text,
                   "= avg_pool2d(mp) {kernel=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=0, "
                   "dilations=[1, 1], count_include_pad=1}");
    CHECK_CONTAINS(text, "logits: f32[N, 10] = gemm(flat, wfc, bfc) {trans_a=0, trans_b=1, alpha=1, beta=1}");
    CHECK_CONTAINS(text, "gap: f32[N, 8, 1, 1] = global_avg_pool(cs)");
    CHECK_CONTAINS(text, "flat: f32[N, 8] = flatten(gap) {axis=1}");
    /* SAME padding with stride 2 on a symbolic size: an explicit pad first */
    CHECK_CONTAINS(text, "mp_same: f32[N, 3, (H+1)//2, (W+1)//2] = max_pool2d(mp_same/pad)");
    CHECK_CONTAINS(text, "mode=\"constant\", value=-inf}  # pool_same");
    CHECK_CONTAINS(text, "cs: f32[N, 8, ");
    CHECK_CONTAINS(text, "= conv2d(cs/pad, ws) {strides=[2, 2], pads=[0, 0, 0, 0]");
    CHECK_CONTAINS(text,
                   "c_valid: f32[N, 16, (H-4), (W-4)] = conv2d(x, w1) {strides=[1, 1], pads=[0, 0, 0, 0], "
                   "dilations=[2, 2], group=1}");
    /* the symbolic sizes agree with ONNX's formulas at every declared H */
    for (int64_t h = 32; h <= 512; h += 7) {
        int64_t c1 = (h + 2 - 3) / 2 + 1;
        int64_t mp = (c1 - 3 + 1) / 2 + 1; /* ceil((c1 - 3) / 2) + 1 */
        if ((mp - 1) * 2 >= c1) mp--;      /* the last window must start inside */
        int64_t ap = (mp + 1 - 2) / 2 + 1;
        int64_t cs = (ap + 1) / 2; /* SAME: ceil(ap / 2) */
        CHECK(eval_dim(m, "c1", 2, "H", h, NULL, 0) == c1);
        CHECK_MSG(eval_dim(m, "mp", 2, "H", h, NULL, 0) == mp, "H=%lld", (long long)h);
        CHECK(eval_dim(m, "ap", 2, "H", h, NULL, 0) == ap);
        CHECK_MSG(eval_dim(m, "cs", 2, "H", h, NULL, 0) == cs, "H=%lld", (long long)h);
        CHECK(eval_dim(m, "mp_same", 2, "H", h, NULL, 0) == (h + 1) / 2);
        /* SAME_LOWER: the odd padding row goes first */
        int64_t tot = ((h + 1) / 2 - 1) * 2 + 3 - h;
        const ir_attr *pads = ir_node_attr(&m->nodes[tensor(m, "mp_same/pad")->producer], "pads");
        int64_t vals[3] = {1, h, 1}, lo = -1, hi = -1;
        sym_eval(m->syms, pads->dims[2], vals, 3, &lo, NULL);
        sym_eval(m->syms, pads->dims[6], vals, 3, &hi, NULL);
        CHECK_MSG(lo == tot - tot / 2 && hi == tot / 2, "H=%lld lo %lld hi %lld", (long long)h, (long long)lo,
                  (long long)hi);
    }
    ir_module_free(m);
}

static void test_attention(void) {
    ir_module *m = ok(imp("attention", "--shapes", "x:1x1x64,2x128x64,8x512x64", NULL), "attention");
    if (!m) return;
    CHECK_CONTAINS(text, "batch in [1, 8] opt 2  # input 'x' dim 0");
    CHECK_CONTAINS(text, "seq in [1, 512] opt 128  # input 'x' dim 1");
    CHECK_CONTAINS(text, "q4: f32[batch, seq, 4, 16] = reshape(q) {shape=[batch, seq, 4, 16]}");
    CHECK_CONTAINS(text, "kt: f32[batch, 4, 16, seq] = transpose(k4) {perm=[0, 2, 3, 1]}");
    CHECK_CONTAINS(text, "scores: f32[batch, 4, seq, seq] = matmul(qt, kt)");
    CHECK_CONTAINS(text, "pos: i64[seq] = range() {start=[0], limit=[seq], delta=[1], to=i64}  # positions");
    CHECK_CONTAINS(text, "future: bool[seq, seq] = less(col, row)  # causal");
    CHECK_CONTAINS(text, "masked: f32[batch, 4, seq, seq] = where(future, neg_inf, scaled)");
    CHECK_CONTAINS(text, "probs: f32[batch, 4, seq, seq] = softmax(masked) {axis=3}");
    CHECK_CONTAINS(text, "merged: f32[batch, seq, 64] = reshape(ctx_t) {shape=[batch, seq, 64]}");
    CHECK_CONTAINS(text, "y: f32[batch, seq, 64] = layer_norm(res, ln_s, ln_b) {axis=2, epsilon=9.99999975e-06}  # ln");
    /* unnamed nodes get "<OpType>#<index>" as their source */
    CHECK_CONTAINS(text, "q: f32[batch, seq, 64] = matmul(x, wq)  # MatMul#0");
    CHECK(!strstr(text, "guards:"));
    ir_module_free(m);
}

static void test_elementwise(void) {
    ir_module *m = ok(imp("elementwise", "--shapes", "x:1x8,2x8,4x8", NULL), "elementwise");
    if (!m) return;
    static const char *const lines[] = {
        "sqrt: f32[B, 8] = sqrt(x)",
        "reciprocal: f32[B, 8] = reciprocal(x)",
        "neg: f32[B, 8] = neg(x)",
        "exp: f32[B, 8] = exp(x)",
        "log: f32[B, 8] = log(x)",
        "abs: f32[B, 8] = abs(x)",
        "erf: f32[B, 8] = erf(x)",
        "tanh: f32[B, 8] = tanh(x)",
        "sigmoid: f32[B, 8] = sigmoid(x)",
        "relu: f32[B, 8] = relu(x)",
        "hardswish: f32[B, 8] = hard_swish(x)",
        "floor: f32[B, 8] = floor(x)",
        "ceil: f32[B, 8] = ceil(x)",
        "sign: f32[B, 8] = sign(x)",
        "identity: f32[B, 8] = identity(x)",
        "leaky: f32[B, 8] = leaky_relu(x) {alpha=0.100000001}",
        "hsig: f32[B, 8] = hard_sigmoid(x) {alpha=0.2, beta=0.5}",
        "drop: f32[B, 8] = identity(x)  # Dropout#17",
        "add: f32[B, 8] = add(x, y)",
        "sub: f32[B, 8] = sub(x, y)",
        "mul: f32[B, 8] = mul(x, row)",
        "div: f32[B, 8] = div(x, y)",
        "pow: f32[B, 8] = pow(x, two)",
        "fmod: f32[B, 8] = mod(x, y) {fmod=1}",
        "imod: i64[B, 8] = mod(xi, yi) {fmod=0}",
        "min3/min: f32[B, 8] = min(x, y)",
        "min3: f32[B, 8] = min(min3/min, row)",
        "max2: f32[B, 8] = max(x, y)",
        "sum3/add: f32[B, 8] = add(x, y)",
        "sum3: f32[B, 8] = add(sum3/add, x)",
        "clip: f32[B, 8] = clip(x) {min=-1, max=1.5}",
        "clip_hi: f32[B, 8] = clip(x) {max=1.5}",
        "eq: bool[B, 8] = equal(x, y)",
        "lt: bool[B, 8] = less(x, y)",
        "gt: bool[B, 8] = greater(x, y)",
        "le: bool[B, 8] = less_equal(x, y)",
        "ge: bool[B, 8] = greater_equal(x, y)",
        "and: bool[B, 8] = and(lt, ge)",
        "or: bool[B, 8] = or(lt, gt)",
        "not: bool[B, 8] = not(eq)",
        "where: f32[B, 8] = where(lt, x, y)",
        "cast_i: i32[B, 8] = cast(x) {to=i32}",
        "cast_h: f16[B, 8] = cast(x) {to=f16}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) CHECK_CONTAINS(text, lines[i]);
    /* y, xi and yi share x's dim_param B, so declaring x is enough */
    CHECK_CONTAINS(text, "  yi: i64[B, 8]\n");
    ir_module_free(m);

    m = ok(imp("gelu", "--shapes", "x:1x8,2x8,4x8", NULL), "gelu");
    if (m) {
        CHECK_CONTAINS(text, "g: f32[B, 8] = gelu(x) {approximate=\"none\"}");
        CHECK_CONTAINS(text, "gt: f32[B, 8] = gelu(x) {approximate=\"tanh\"}");
    }
    ir_module_free(m);
}

static void test_reductions(void) {
    static const char *const names[] = {"reduce13", "reduce18"};
    for (int i = 0; i < 2; i++) {
        ir_module *m = ok(imp(names[i], "--shapes", "x:1x1x16,2x8x16,4x32x16", NULL), names[i]);
        if (!m) continue;
        CHECK_CONTAINS(text, "mean: f32[B, S, 1] = reduce_mean(x) {keepdims=1, axes=[2]}");
        CHECK_CONTAINS(text, "max: f32[B, 16] = reduce_max(x) {keepdims=0, axes=[1]}");
        CHECK_CONTAINS(text, "sum: f32[B, 16] = reduce_sum(x) {keepdims=0, axes=[1]}");
        CHECK_CONTAINS(text, "sum_all: f32[] = reduce_sum(xabs) {keepdims=0}");
        CHECK_CONTAINS(text, "sum_noop: f32[B, S, 16] = identity(x)");
        CHECK_CONTAINS(text, "sm: f32[B, S, 16] = softmax(x) {axis=2}");
        CHECK_CONTAINS(text, "lsm: f32[B, S, 16] = log_softmax(x) {axis=1}");
        if (i == 1) CHECK_CONTAINS(text, "ln: f32[B, S, 16] = layer_norm(x, ln_s) {axis=2, epsilon=1e-05}");
        ir_module_free(m);
    }
}

/* Opset 13 with axes=[] as an attribute: imported (no memcpy from protobuf-c's
 * NULL empty list, which UBSan rejects) with the spec's meaning, every axis
 * reduced unless noop_with_empty_axes; a transpose of a scalar with perm=[]. */
static void test_reduce_empty_axes(void) {
    ir_module *m = ok(imp("reduce_empty_axes", "--shapes", "x:1x1x16,2x8x16,4x32x16", NULL), "reduce_empty_axes");
    if (!m) return;
    CHECK_CONTAINS(text, "mean_all: f32[] = reduce_mean(x) {keepdims=0}");
    CHECK_CONTAINS(text, "max_all: f32[1, 1, 1] = reduce_max(x) {keepdims=1}");
    CHECK_CONTAINS(text, "sum_noop: f32[B, S, 16] = identity(x)");
    CHECK_CONTAINS(text, "sum_all: f32[] = reduce_sum(x) {keepdims=0}");
    CHECK_CONTAINS(text, "st: f32[] = transpose(s) {perm=[]}");
    ir_module_free(m);
}

static void test_movement(void) {
    ir_module *m = ok(imp("movement", "--shapes", "x:1x2x6,2x8x6,4x32x6", NULL), "movement");
    if (!m) return;
    static const char *const lines[] = {
        "xt: f32[6, L, B] = transpose(x) {perm=[2, 1, 0]}",
        "sl: f32[B, L, 5] = slice(x) {starts=[1], ends=[6], axes=[2]}", /* INT64_MAX end reads as the dim */
        "rev: f32[B, L, 6] = slice(x) {starts=[-1], ends=[(-L-1)], axes=[1], steps=[-1]}",
        "p0: f32[B, L, 2], p1: f32[B, L, 4] = split(x) {axis=2, sizes=[2, 4]}  @p0",
        "q0: f32[B, L, 3], q1: f32[B, L, 3] = split(x) {axis=2, sizes=[3, 3]}  @q0",
        "xu: f32[1, B, L, 6] = unsqueeze(x) {axes=[0]}",
        "xs: f32[B, L, 6] = squeeze(xu) {axes=[0]}",
        "gx: f32[B, L, 2, 2] = gather(x, idx) {axis=2}",
        "ge: f32[1, 2, 3] = gather_elements(x, gidx) {axis=2}",
        "tiled: f32[B, (L*L), 6] = tile(x) {repeats=[1, L, 1]}",
        "padded: f32[B, L, (L+7)] = pad(x) {pads=[0, 0, L, 0, 0, 1], mode=\"constant\", value=0.5}",
        "reflected: f32[B, (L+2), 10] = pad(x) {pads=[0, 1, 2, 0, 1, 2], mode=\"reflect\", value=0}",
        "upper: f32[L, L] = trilu(sq) {upper=1, k=0}",
        "lower: f32[L, L] = trilu(sq) {upper=0, k=-1}",
        "flat: f32[(B*L), 6] = flatten(x) {axis=2}",
        "s_tail: i64[2] = slice(s_tail/shape_of) {starts=[1], ends=[3]}",
        "r_keep: f32[B, L, 3, 2] = reshape(x) {shape=[B, L, 3, 2]}", /* 0 copies the input dim */
        "r_rest: f32[B, (L*6)] = reshape(x) {shape=[B, -1]}",
        "down: i64[(L+1)//2] = range() {start=[L], limit=[0], delta=[-2], to=i64}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) CHECK_CONTAINS(text, lines[i]);
    ir_module_free(m);

    m = ok(imp("split18", NULL), "split18"); /* opset 18: num_outputs, the last chunk smaller */
    if (m) CHECK_CONTAINS(text, "a: f32[2, 4], b: f32[2, 4], c: f32[2, 2] = split(x) {axis=1, sizes=[4, 4, 2]}");
    ir_module_free(m);

    /* torch's expand(B, -1, -1): ConstantOfShape/Mul/Equal/Where stay symbolic */
    m = ok(imp("expand_idiom", "--shapes", "x:1x3,2x3,4x3", NULL), "expand_idiom");
    if (m) {
        CHECK_CONTAINS(text, "y: f32[B, 5, 7] = expand(tok) {shape=[B, 1, 1]}");
        CHECK_CONTAINS(text, "ids: i64[B] = range() {start=[0], limit=[B], delta=[1], to=i64}");
        CHECK_CONTAINS(text, "mask: f32[B, 3] = expand(mask/constant) {shape=[B, 3]}");
        CHECK(!strstr(text, "where") && !strstr(text, "equal"));
    }
    ir_module_free(m);
}

static void test_initializers(void) {
    ir_module *m = ok(imp("initializers", NULL), "initializers");
    if (!m) return;
    struct {
        const char *name;
        const void *bytes;
        size_t n;
    } want[] = {
        {"f_raw", (const float[]){1, 2, 3}, 12},
        {"f_typed", (const float[]){1.5f, 2.5f, 3.5f}, 12},
        {"i_typed", (const int64_t[]){7, -8}, 16},
        {"i32_typed", (const int32_t[]){5, -6}, 8},
        {"d_typed", (const double[]){0.25, -0.5}, 16},
        {"h_typed", (const uint16_t[]){0x3c00, 0xc000}, 4},  /* 1.0, -2.0 */
        {"h_raw", (const uint16_t[]){0x3800, 0x4400}, 4},    /* 0.5, 4.0 */
        {"bf_typed", (const uint16_t[]){0x3f80, 0xc040}, 4}, /* 1.0, -3.0 */
        {"b_typed", (const uint8_t[]){1, 0}, 2},
        {"f_ext", (const float[]){0, 1, 2, 3, 4, 5}, 24}, /* weights.bin at offset 16 */
        {"c_floats", (const float[]){1, 2}, 8},
        {"c_int", (const int64_t[]){42}, 8},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const ir_tensor *t = tensor(m, want[i].name);
        if (!t) continue;
        CHECK_MSG(t->constant != IR_NONE, "%s is not a constant", want[i].name);
        if (t->constant == IR_NONE) continue;
        const ir_constant *cd = &m->constants[t->constant];
        CHECK_MSG(cd->size == want[i].n && !memcmp(cd->data, want[i].bytes, want[i].n), "%s bytes differ",
                  want[i].name);
    }
    CHECK_CONTAINS(text, "f_ext: f32[2, 3] = constant <24 bytes");
    CHECK_CONTAINS(text, "c_int: i64[] = constant <8 bytes");
    ir_module_free(m);

    /* from a buffer without its folder, external data cannot be found */
    char path[1024];
    snprintf(path, sizeof path, "%s/initializers.onnx", dir);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ir_module *mb = NULL;
    CHECK(fe_onnx_import_buffer(buf, n, NULL, NULL, 0, &mb, &err) == SYMC_ERR_INVALID_ARG && !mb);
    CHECK_CONTAINS(err.msg,
                   "initializer 'f_ext' is stored in the external file 'weights.bin', but the model was "
                   "given as a buffer without its folder");
    CHECK(fe_onnx_import_buffer(buf, n, dir, NULL, 0, &mb, &err) == SYMC_OK && mb);
    ir_module_free(mb);
    mb = NULL;
    const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK(fe_onnx_import_buffer(junk, sizeof junk, NULL, NULL, 0, &mb, &err) == SYMC_ERR_FORMAT && !mb);
    CHECK_CONTAINS(err.msg, "not an ONNX model");
    /* every truncation is refused cleanly (or is a smaller valid model) */
    for (size_t k = 0; k < n; k += 97) {
        symc_status st = fe_onnx_import_buffer(buf, k, dir, NULL, 0, &mb, &err);
        CHECK((st == SYMC_OK) == (mb != NULL));
        ir_module_free(mb);
        mb = NULL;
    }
}

/* ---- symbols, ranges and declared shapes ------------------------------------------------- */

static void test_inputs(void) {
    ir_module *m = ok(imp("unnamed_dims", "--shapes", "x:1x4,2x4,3x4", NULL), "unnamed_dims");
    if (m) {
        CHECK_CONTAINS(text, "x_dim0 in [1, 3] opt 2  # input 'x' dim 0");
        CHECK_CONTAINS(text, "y: f32[x_dim0, 4] = relu(x)");
    }
    ir_module_free(m);
    m = ok(imp("unnamed_dims", "--shapes", "x:5x4", NULL), "unnamed_dims fixed");
    if (m) CHECK_CONTAINS(text, "symbols: none\ninputs:\n  x: f32[5, 4]\n");
    ir_module_free(m);
    m = ok(imp("shared_symbol", "--shapes", "b:1x4,2x4,4x4", NULL), "shared_symbol");
    if (m) CHECK_CONTAINS(text, "  a: f32[batch, 4]\n  b: f32[batch, 4]\n");
    ir_module_free(m);
    m = ok(imp("shared_symbol", "--shapes", "a:1x4,2x4,4x4", "--shapes", "b:1x4,2x4,4x4", NULL), "shared both");
    ir_module_free(m);

    EXPECT_ERR(SYMC_ERR_INVALID_ARG,
               "vit_patch.onnx: input 'x' dim 0 (B) is dynamic: add --shapes x:MINx196x768,OPTx196x768,MAXx196x768",
               "vit_patch");
    EXPECT_ERR(SYMC_ERR_INVALID_ARG, "input 'x' dim 0 (x_dim0) is dynamic: add --shapes x:MINx4,OPTx4,MAXx4",
               "unnamed_dims");
    EXPECT_ERR(
        SYMC_ERR_INVALID_ARG,
        "symbol 'batch' gets two ranges: [1, 3] opt 2 from input 'a' dim 0, and [1, 4] opt 2 from input 'b' dim 0",
        "shared_symbol", "--shapes", "a:1x4,2x4,3x4", "--shapes", "b:1x4,2x4,4x4");
    EXPECT_ERR(SYMC_ERR_INVALID_ARG,
               "input 'x' dim 1 is 196 in the model, but the declared shapes give min 196, opt 200, max 200",
               "vit_patch", "--shapes", "x:1x196x768,2x200x768,4x200x768");
    EXPECT_ERR(SYMC_ERR_INVALID_ARG, "shapes are declared for 'y', but there is no input named 'y' (inputs: 'x')",
               "vit_patch", "--shapes", "x:1x196x768,2x196x768,4x196x768", "--shapes", "y:1x2");
    EXPECT_ERR(SYMC_ERR_INVALID_ARG, "input 'x' has rank 3 in the model, but its declared shapes have 2 dims",
               "vit_patch", "--shapes", "x:1x196,2x196,4x196");

    /* the API also checks shapes that did not come through the parser */
    fe_input_shape s = {"x", 2, {4, 4}, {2, 4}, {8, 4}, {0}};
    char path[1024];
    snprintf(path, sizeof path, "%s/unnamed_dims.onnx", dir);
    CHECK(fe_onnx_import_file(path, &s, 1, &m, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 'x' dim 0: declared min 4, opt 2, max 8 must satisfy 0 <= min <= opt <= max");
    fe_input_shape two[2] = {{"x", 2, {1, 4}, {2, 4}, {3, 4}, {0}}, {"x", 2, {1, 4}, {2, 4}, {3, 4}, {0}}};
    CHECK(fe_onnx_import_file(path, two, 2, &m, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "shapes for input 'x' are declared twice");
    snprintf(path, sizeof path, "%s/no_such_model.onnx", dir);
    CHECK(fe_onnx_import_file(path, NULL, 0, &m, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "cannot open");
}

/* Imports dir/NAME.onnx as regions with one --shapes spec; the number of regions, or -1 (err). */
static int regions(const char *name, const char *spec, fe_onnx_regions *r) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.onnx", dir, name);
    fe_shape_list l;
    fe_shape_list_init(&l);
    symc_error_clear(&err);
    symc_status st = fe_parse_shapes(&l, FE_SHAPES, spec, &err);
    if (!st) st = fe_shape_list_check(&l, &err);
    if (!st) st = fe_onnx_import_file_regions(path, l.items, l.n, r, &err);
    fe_shape_list_free(&l);
    return st ? -1 : (int)r->n;
}

/* The range of symbol `name` in module m, as "lo..hi". */
static const char *range_of(ir_module *m, const char *name) {
    static char buf[64];
    sym_id id;
    sym_symbol_info info;
    if (!sym_symbol_find(m->syms, name, &id) || !sym_symbol_get(m->syms, id, &info)) return "none";
    snprintf(buf, sizeof buf, "%lld..%lld", (long long)info.min, (long long)info.max);
    return buf;
}

/* If nodes on input sizes: proven ones take their branch; open ones make a region per side, a
 * one-symbol condition narrowing the ranges, any other one a condition text. */
static void test_if_regions(void) {
    fe_onnx_regions r;
    /* S open across 64: two regions, the then side first, each with S narrowed */
    CHECK_MSG(regions("if_size", "x:1x1,4x100,8x128", &r) == 2, "%s", err.msg);
    if (r.n == 2) {
        CHECK_MSG(!strcmp(range_of(r.items[0].module, "S"), "65..128"), "region 0: S %s",
                  range_of(r.items[0].module, "S"));
        CHECK_MSG(!strcmp(range_of(r.items[1].module, "S"), "1..64"), "region 1: S %s",
                  range_of(r.items[1].module, "S"));
        CHECK(!r.items[0].condition && !r.items[1].condition);
        CHECK(!strcmp(range_of(r.items[1].module, "B"), "1..8"));
        /* the then side sliced (a slice node), the else side negated (no slice) */
        char *t0 = ir_print_to_string(r.items[0].module), *t1 = ir_print_to_string(r.items[1].module);
        CHECK(t0 && strstr(t0, "slice") && !strstr(t0, "neg"));
        CHECK(t1 && strstr(t1, "neg") && !strstr(t1, "slice"));
        free(t0);
        free(t1);
    }
    fe_onnx_regions_free(&r);
    /* S never above 64: proven, one region, the module plain import makes */
    CHECK_MSG(regions("if_size", "x:1x1,4x32,8x64", &r) == 1 && !r.items[0].condition, "%s", err.msg);
    fe_onnx_regions_free(&r);
    ir_module *m = imp("if_size", "--shapes", "x:1x1,4x32,8x64", NULL);
    CHECK_MSG(m && strstr(text, "neg"), "%s", err.msg);
    ir_module_free(m);
    /* the one-module import refuses an open condition, pointing at regions */
    m = imp("if_size", "--shapes", "x:1x1,4x100,8x128", NULL);
    CHECK(!m && strstr(err.msg, "64 < S") && strstr(err.msg, "regions"));
    ir_module_free(m);
    /* nested ifs and a two-symbol condition: S > 128 | 64 < S <= 128 | S <= 64, each split by S <= T */
    CHECK_MSG(regions("if_nested", "x:1x1,2x100,4x200,m:1x1,2x100,4x200", &r) == 6, "%s (%u regions)", err.msg, r.n);
    int texts = 0;
    for (uint32_t i = 0; i < r.n; i++)
        texts += r.items[i].condition &&
            (!strcmp(r.items[i].condition, "S <= T") || !strcmp(r.items[i].condition, "T < S"));
    CHECK_MSG(texts == 6, "conditions: %s | %s", r.n ? r.items[0].condition : "", r.n > 1 ? r.items[1].condition : "");
    if (r.n == 6) {
        CHECK(!strcmp(range_of(r.items[0].module, "S"), "129..200"));
        CHECK(!strcmp(range_of(r.items[2].module, "S"), "65..128"));
        CHECK(!strcmp(range_of(r.items[4].module, "S"), "1..64"));
    }
    fe_onnx_regions_free(&r);
}

/* NonZero, Compress, Unique and NonMaxSuppression: one producing IR op each,
 * whose size is an unbacked symbol u<i> with the bound the op derives. */
static void test_data_sized(void) {
    ir_module *m = ok(imp("data_sized", "--shapes", "x:1x2,2x8,4x32", "--shapes", "boxes:1x1x4,1x10x4,2x100x4",
                          "--shapes", "scores:1x1x1,1x2x10,2x3x100", NULL),
                      "data_sized");
    if (!m) return;
    static const char *const lines[] = {
        "u0 in [0, 128] opt 16  # the count of non-zero elements of node 'nz' (nonzero), known only at run time",
        "u5 in [0, 128] opt 16  # the count of distinct values of node 'u_idx' (unique), known only at run time",
        "u8 in [0, 600] opt 20  # the count of boxes selected of node 'sel' (nms), known only at run time",
        "nz: i64[2, u0] = nonzero(x)",
        /* Compress along an axis: the positions of the true entries, gathered */
        "c_axis/nonzero: i64[1, u1] = nonzero(cond)",
        "c_axis/squeeze: i64[u1] = squeeze(c_axis/nonzero) {axes=[0]}",
        "c_axis: f32[B, u1] = gather(x, c_axis/squeeze) {axis=1}",
        /* without one: x flattened; a condition that may be longer than the axis is cut to it */
        "c_flat/reshape: f32[(B*L)] = reshape(x) {shape=[(B*L)]}",
        "c_flat/slice: bool[min(3, (B*L))] = slice(c3) {starts=[0], ends=[min(3, (B*L))]}",
        "c_flat: f32[u2] = gather(c_flat/reshape, c_flat/squeeze) {axis=0}",
        "c_short: f32[u3, L] = gather(x, c_short/squeeze) {axis=0}",
        "c_long/slice: bool[L] = slice(c40) {starts=[0], ends=[L]}",
        "c_long: f32[B, u4] = gather(x, c_long/squeeze) {axis=1}",
        /* Unique: indices, inverse and counts from the op, the values gathered */
        "u_idx: i64[u5], u_inv: i64[(B*L)], u_cnt: i64[u5] = unique(x) {sorted=1}",
        "u_y: f32[u5] = gather(u_y/reshape, u_idx) {axis=0}",
        "ua_idx: i64[u6], ua_inv: i64[L], ua_cnt: i64[u6] = unique(x) {sorted=0, axis=1}",
        "ua_y: f32[B, u6] = gather(x, ua_idx) {axis=1}",
        "uy_only: f32[u7] = gather(uy_only/reshape, uy_only/unique) {axis=0}",
        /* NonMaxSuppression: the optional inputs stay graph inputs; one left out before a given one is its
         * default, 0 boxes */
        "sel: i64[u8, 3] = nms(boxes, scores, mo, iou, thr) {center_point_box=1}",
        "sel_gap: i64[u9, 3] = nms(boxes, scores, sel_gap/constant, iou) {center_point_box=0}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) CHECK_CONTAINS(text, lines[i]);
    sym_id u;
    CHECK(sym_symbol_find(m->syms, "u3", &u));
    char b[64] = "";
    sym_print(m->syms, sym_symbol_bound(m->syms, u), b, sizeof b);
    CHECK_MSG(!strcmp(b, "min(3, B)"), "bound of u3: %s", b);
    CHECK(sym_symbol_find(m->syms, "u9", &u));
    sym_print(m->syms, sym_symbol_bound(m->syms, u), b, sizeof b);
    CHECK_MSG(!strcmp(b, "(C*N*NB)"), "bound of u9: %s", b); /* B*C*N */
    ir_module_free(m);
}

static void test_errors(void) {
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'bern_1' (Bernoulli, opset 17): ONNX op 'Bernoulli' is not supported by symc's importer: it draws "
               "random numbers, which a compiled engine cannot reproduce",
               "err_unsupported");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'ein' (Einsum, opset 17): the diagonal of index 'i' in the term 'bii' needs equal constant "
               "sizes, has K and K",
               "err_einsum_diagonal", "--shapes", "x:1x3x3,2x4x4,4x5x5");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED, "node 'ein3' (Einsum, opset 17): Einsum of 3 operands (one or two are supported)",
               "err_einsum_three");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'ein_sz' (Einsum, opset 17): index 'i' has sizes K and L, which are not provably equal",
               "err_einsum_sizes", "--shapes", "x:1x2,2x4,4x8", "--shapes", "z:1x2,2x4,4x8");
    EXPECT_ERR(SYMC_ERR_VERIFY, "k must not exceed dim 1 of 'x': 5 <= 4 never holds", "err_topk_k", "--shapes",
               "x:1x4,2x4,3x4");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'se' (ScatterElements, opset 18): reduction = 'mean' (none, add, mul, max and min are "
               "supported)",
               "err_scatter_reduction");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED, "the last dim of indices 'i' is M; it must be a constant",
               "err_gathernd_symbolic_m", "--shapes", "i:2x1,2x2,2x2");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'fg' (FusedGemm, opset 17): op 'FusedGemm' of domain 'com.microsoft' is not "
               "supported",
               "err_domain");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED, "the model uses ONNX opset 11; symc imports opsets 13 to 21", "err_opset");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'rs' (Reshape, opset 17): input 1 's' (the target shape) is not known at "
               "build time: it is the graph input 's', whose elements are only known at run time",
               "err_reshape_input", "--shapes", "x:1x4,2x4,3x4");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'sl' (Slice, opset 17): input 4 'stp' (the steps) is not known at build time", "err_slice_steps",
               "--shapes", "x:1x4,2x4,3x4");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'c3d' (Conv, opset 17): only 1-D to 3-D convolution (a 3-D to 5-D input) is supported; "
               "input 'x' has rank 6",
               "err_conv3d");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'ap' (AveragePool, opset 17): auto_pad SAME with stride > 1 needs padding "
               "that depends on the input size (H x W)",
               "err_avgpool_same", "--shapes", "x:1x2x4x4,1x2x8x8,1x2x9x9");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'mpi' (MaxPool, opset 17): attribute 'storage_order' = 1 is not supported here (0, or 1 for "
               "1-D and 2-D)",
               "err_maxpool_indices");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'rnn_s' (RNN, opset 17): the sequence length of 'x' is the symbol S; symc unrolls RNN over a "
               "constant sequence length only",
               "err_rnn_symbolic_seq", "--shapes", "x:1x2x3,4x2x3,8x2x3");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'lstm_l' (LSTM, opset 17): sequence_lens[1] = 2 is shorter than the sequence (4)",
               "err_lstm_seq_lens");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED, "node 'gsm' (GridSample, opset 20): attribute 'mode' = 'area' is not supported",
               "err_gridsample_mode");
    EXPECT_ERR(SYMC_ERR_FORMAT,
               "node 'late' (Relu, opset 17): input 0 't' is not a graph input, an initializer or the "
               "output of an earlier node",
               "err_order");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'addq' (Add, opset 17): initializer 'q' has ONNX type COMPLEX64, which symc "
               "does not support",
               "err_complex");
    EXPECT_ERR(SYMC_ERR_FORMAT, "node 'pr' (PRelu, opset 17): slope 's' does not broadcast to the shape of x 'x'",
               "err_prelu_slope");
    EXPECT_ERR(SYMC_ERR_FORMAT, "node 'bs' (BitShift, opset 17): input 'x' is i8; BitShift takes unsigned integers",
               "err_bitshift_signed");
    EXPECT_ERR(SYMC_ERR_FORMAT, "node 'bsd' (BitShift, opset 17): direction = 'UP' (expected LEFT or RIGHT)",
               "err_bitshift_dir");
    EXPECT_ERR(SYMC_ERR_FORMAT, "node 'mi' (Mean, opset 17): input 'x' is i64; Mean takes floats", "err_mean_int");
    EXPECT_ERR(SYMC_ERR_FORMAT, "node 'cb' (Clip, opset 17): input 1 'lo' (min) must be a scalar", "err_clip_bound");
    EXPECT_ERR(SYMC_ERR_INVALID_ARG,
               "initializer 'w': external data location '/etc/passwd' is an absolute path; it "
               "must be relative to the model's folder",
               "err_ext_abs");
    EXPECT_ERR(SYMC_ERR_INVALID_ARG,
               "initializer 'w': external data location 'sub/../../w.bin' leaves the model's "
               "folder ('..' is not allowed)",
               "err_ext_dotdot");
    EXPECT_ERR(SYMC_ERR_IO, "initializer 'w': cannot open external data file", "err_ext_missing");
    /* issue 13: once accepted */
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "the model uses ONNX opset 99; symc imports opsets 13 to 21: convert it with "
               "onnx.version_converter.convert_version(model, 21)",
               "err_opset_new");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED, "the model uses ONNX opset 22; symc imports opsets 13 to 21", "err_opset_22");
    EXPECT_ERR(SYMC_ERR_FORMAT,
               "err_dim_minus1.onnx: input 'x' dim 0 has dim_value -1: a size must be >= 0 (a dynamic "
               "dim is a dim_param, or a dim with no value)",
               "err_dim_minus1", "--shapes", "x:1x4,2x4,3x4");
    EXPECT_ERR(SYMC_ERR_FORMAT, "input 'x' dim 1 has dim_value -5: a size must be >= 0", "err_dim_minus5");
    EXPECT_ERR(SYMC_ERR_FORMAT,
               "node 'rsum' (ReduceSum, opset 13): ReduceSum has no 'axes' attribute at opset 13 (the "
               "axes are its input 1 since opset 13), so the given one would be ignored: pass the axes as input 1",
               "err_reduce_axes_attr");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'drop_train' (Dropout, opset 17): training_mode is true with ratio 0.5: random dropout cannot "
               "be reproduced (symc compiles for inference; only ratio 0 is supported in training mode)",
               "err_dropout_train");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'drop_train' (Dropout, opset 17): input 2 'tm' (training_mode) must be a constant: it is the "
               "graph input 'tm', whose elements are only known at run time",
               "err_dropout_train_input");
    /* issue 15: losses, quantization, windows */
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'nll' (NegativeLogLikelihoodLoss, opset 17): attribute 'reduction' = 'max' (expected none, sum "
               "or mean)",
               "err_nll_reduction");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'ql' (QuantizeLinear, opset 21): quantizing to i32 is not supported (uint8, int8, uint16, "
               "int16 are)",
               "err_quant_int32");
    EXPECT_ERR(SYMC_ERR_FORMAT,
               "node 'dql' (DequantizeLinear, opset 17): attribute 'axis' = 5 is out of range for the input's rank 2",
               "err_dequant_axis");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'qmm' (QLinearMatMul, opset 17): only per-tensor zero points are supported for a and b",
               "err_qlinear_zp");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'hw' (HannWindow, opset 17): attribute 'output_datatype' = 7 (INT64): only float output types "
               "are supported",
               "err_window_dtype");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'hmw' (HammingWindow, opset 17): input 0 'n' (the window size) is not known at build time: it "
               "is the graph input 'n', whose elements are only known at run time",
               "err_window_size");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'if_rt' (If, opset 17): input 0 'cond' (the condition) must be a constant: it is the graph input "
               "'cond', whose elements are only known at run time",
               "err_if_runtime");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'scan_s' (Scan, opset 17): the scan length S of input 'xs' must be a constant (the scan is "
               "unrolled)",
               "err_scan_symbolic", "--shapes", "xs:1x3,4x3,8x3");
    EXPECT_ERR(SYMC_ERR_UNSUPPORTED,
               "node 'loop_c' (Loop, opset 17): the Loop body's condition 'c_out' is not known at build time in "
               "iteration 0 (the loop is unrolled)",
               "err_loop_cond");
    ir_module *m = ok(imp("relu21", NULL), "relu21");
    ir_module_free(m);
    /* a constant false training_mode is the identity; a 0 dim is a static size */
    m = ok(imp("dropout_modes", "--shapes", "x:1x8,2x8,4x8", NULL), "dropout_modes");
    if (m) {
        CHECK_CONTAINS(text, "y: f32[B, 8] = identity(x)  # drop_off");
        CHECK_CONTAINS(text, "zr: f32[0, 3] = relu(z)");
    }
    ir_module_free(m);
    /* a directory given as the model */
    char path[1024];
    snprintf(path, sizeof path, "%s/dir_model.onnx", dir);
    mkdir(path, 0755);
    CHECK(fe_onnx_import_file(path, NULL, 0, &m, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "dir_model.onnx' is a directory, not an ONNX model file");
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_onnx_import MODELS_DIR (written by gen_models.py)\n");
        return 2;
    }
    dir = argv[1];
    test_vit();
    test_conv_pool();
    test_attention();
    test_elementwise();
    test_reductions();
    test_reduce_empty_axes();
    test_movement();
    test_initializers();
    test_inputs();
    test_if_regions();
    test_data_sized();
    test_errors();
    free(text);
    return check_report("test_onnx_import");
}
