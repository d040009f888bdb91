/* Constant folding through the compile driver (passes/fold_const.c, pass_fold_constants, with
 * codegen/compile.c's evaluator on the reference backend). A builder module with x [B, 6, 6],
 * z [B, 600, 600] and w [B, 600] (B in [1, 4]) and three tables built from sizes alone, as
 * torchvision's Swin builds its shifted-window mask:
 *   mask   zeros [6, 6] (expand of a scalar), rows range(0, 6)[1:3] set to 5 by scatter_nd,
 *          then where(sc - scᵀ == 0, 0, -100): y = x + mask
 *   big    expand(1) to [600, 600] (1.44 MB, more than a folded constant may hold): y2 = z + big,
 *          the expand stays computed
 *   row    big[0:1] ([1, 600], 2400 bytes, computed through the 1.44 MB interior): y3 = w * row
 * Checked: after fold-constants (the dump hook) the mask's range, slice, scatter_nd, transpose,
 * equal and where are gone and it is one constant of 144 bytes, the row one of 2400 bytes, the big
 * expand is still there; SYMC_FOLD_CONSTANTS=0 keeps them all; on the reference backend at B = 1
 * and 4 both engines give bit-identical outputs, and y equals x + the mask computed here (rows
 * and columns 1, 2 against the rest: -100 where exactly one of i, j is in {1, 2}); an sm_90
 * build (NVRTC, no GPU needed) has no scatter kernel left. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"
#include "tests/test_node.h"

typedef struct dumped {
    char *text;
} dumped;

static void on_dump(void *ctx, const char *pass, const char *text) {
    (void)pass;
    dumped *d = ctx;
    free(d->text);
    d->text = strdup(text);
}

static symc_tensor scalar(symc_module *m, const char *name, float v) {
    symc_error err;
    symc_tensor t = SYMC_TENSOR_NONE;
    CHECK_MSG(symc_add_constant(m, name, SYMC_F32, 0, NULL, &v, sizeof v, &t, &err) == SYMC_OK, "%s: %s", name,
              err.msg);
    return t;
}

static symc_module *build(void) {
    symc_error err;
    symc_module *m = symc_module_create("fold", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_dim c1 = symc_dim_const(m, 1), c2 = symc_dim_const(m, 2), c6 = symc_dim_const(m, 6),
             c600 = symc_dim_const(m, 600), c0 = symc_dim_const(m, 0), c3 = symc_dim_const(m, 3);
    symc_tensor x, z, w;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, c6, c6}, &x, &err);
    symc_add_input(m, "z", SYMC_F32, 3, (symc_dim[]){B, c600, c600}, &z, &err);
    symc_add_input(m, "w", SYMC_F32, 2, (symc_dim[]){B, c600}, &w, &err);
    symc_tensor zero = scalar(m, "zero", 0.0f), five = scalar(m, "five", 5.0f), neg = scalar(m, "neg", -100.0f),
                one = scalar(m, "one", 1.0f);
    /* the mask */
    symc_attr ra[4] = {symc_attr_dims("start", &c0, 1), symc_attr_dims("limit", &c6, 1),
                       symc_attr_dims("delta", &c1, 1), symc_attr_dtype("to", SYMC_I64)};
    symc_tensor r = test_node(m, "range", "rows", NULL, 0, ra, 4);
    int64_t ax0 = 0, st1 = 1;
    symc_attr sa[4] = {symc_attr_dims("starts", &c1, 1), symc_attr_dims("ends", &c3, 1),
                       symc_attr_ints("axes", &ax0, 1), symc_attr_ints("steps", &st1, 1)};
    symc_tensor rs = test_node(m, "slice", "rows12", &r, 1, sa, 4);
    symc_attr sh21 = symc_attr_dims("shape", (symc_dim[]){c2, c1}, 2);
    symc_tensor idx = test_node(m, "reshape", "idx", &rs, 1, &sh21, 1);
    symc_attr e66 = symc_attr_dims("shape", (symc_dim[]){c6, c6}, 2),
              e26 = symc_attr_dims("shape", (symc_dim[]){c2, c6}, 2);
    symc_tensor zeros = test_node(m, "expand", "zeros", &zero, 1, &e66, 1);
    symc_tensor upd = test_node(m, "expand", "fives", &five, 1, &e26, 1);
    symc_attr red = symc_attr_str("reduction", "none");
    symc_tensor sc = test_node(m, "scatter_nd", "set_rows", (symc_tensor[]){zeros, idx, upd}, 3, &red, 1);
    int64_t p10[2] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", p10, 2);
    symc_tensor tr = test_node(m, "transpose", "set_cols", &sc, 1, &pa, 1);
    symc_tensor d = test_node(m, "sub", "diff", (symc_tensor[]){sc, tr}, 2, NULL, 0);
    symc_tensor eq = test_node(m, "equal", "same", (symc_tensor[]){d, zero}, 2, NULL, 0);
    symc_tensor mask = test_node(m, "where", "mask", (symc_tensor[]){eq, zero, neg}, 3, NULL, 0);
    symc_mark_output(m, test_node(m, "add", "y", (symc_tensor[]){x, mask}, 2, NULL, 0), &err);
    /* big: stays computed; row: folded through it */
    symc_attr e600 = symc_attr_dims("shape", (symc_dim[]){c600, c600}, 2);
    symc_tensor big = test_node(m, "expand", "big", &one, 1, &e600, 1);
    symc_mark_output(m, test_node(m, "add", "y2", (symc_tensor[]){z, big}, 2, NULL, 0), &err);
    symc_attr ba[4] = {symc_attr_dims("starts", &c0, 1), symc_attr_dims("ends", &c1, 1),
                       symc_attr_ints("axes", &ax0, 1), symc_attr_ints("steps", &st1, 1)};
    symc_tensor row = test_node(m, "slice", "row", &big, 1, ba, 4);
    symc_attr sh600 = symc_attr_dims("shape", &c600, 1);
    symc_tensor row1 = test_node(m, "reshape", "row1", &row, 1, &sh600, 1);
    symc_mark_output(m, test_node(m, "mul", "y3", (symc_tensor[]){w, row1}, 2, NULL, 0), &err);
    return m;
}

/* compiles build() (reference engine unless arch) into path; the IR after fold-constants into d */
static int compile(const char *path, const char *arch, int fold, dumped *d) {
    symc_error err;
    symc_module *m = build();
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = arch != NULL;
    o.arch = arch;
    o.tune = 0;
    o.dump_after = "fold-constants";
    o.dump = on_dump;
    o.ctx = d;
    if (!fold) setenv("SYMC_FOLD_CONSTANTS", "0", 1);
    symc_status st = symc_module_compile(m, &o, path, &err);
    unsetenv("SYMC_FOLD_CONSTANTS");
    CHECK_MSG(st == SYMC_OK, "%s: %s", path, err.msg);
    symc_module_destroy(m);
    return st == SYMC_OK;
}

/* runs engine path on the reference backend at batch b; outputs into y (36b), y2 (360000b), y3 (600b) */
static int run(const char *path, int64_t b, const float *x, const float *z, const float *w, float *y, float *y2,
               float *y3) {
    symc_error err;
    symrt_engine *e = NULL;
    symrt_context *c = NULL;
    int ok = symrt_engine_load_file(path, &e, &err) == SYMC_OK &&
        symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK;
    int64_t xd[3] = {b, 6, 6}, zd[3] = {b, 600, 600}, wd[2] = {b, 600};
    ok = ok && symrt_set_input_shape(c, "x", xd, 3, &err) == SYMC_OK &&
        symrt_set_input_shape(c, "z", zd, 3, &err) == SYMC_OK && symrt_set_input_shape(c, "w", wd, 2, &err) == SYMC_OK;
    ok = ok && symrt_set_tensor_address(c, "x", (void *)x, (size_t)b * 36 * 4, &err) == SYMC_OK &&
        symrt_set_tensor_address(c, "z", (void *)z, (size_t)b * 360000 * 4, &err) == SYMC_OK &&
        symrt_set_tensor_address(c, "w", (void *)w, (size_t)b * 600 * 4, &err) == SYMC_OK &&
        symrt_set_tensor_address(c, "y", y, (size_t)b * 36 * 4, &err) == SYMC_OK &&
        symrt_set_tensor_address(c, "y2", y2, (size_t)b * 360000 * 4, &err) == SYMC_OK &&
        symrt_set_tensor_address(c, "y3", y3, (size_t)b * 600 * 4, &err) == SYMC_OK;
    ok = ok && symrt_enqueue(c, NULL, &err) == SYMC_OK;
    CHECK_MSG(ok, "running %s at B=%lld: %s", path, (long long)b, err.msg);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
    return ok;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    char on[4096], off[4096], gpu[4096];
    snprintf(on, sizeof on, "%s/test_fold_on.symx", dir);
    snprintf(off, sizeof off, "%s/test_fold_off.symx", dir);
    snprintf(gpu, sizeof gpu, "%s/test_fold_sm90.symx", dir);
    dumped d_on = {0}, d_off = {0}, d_gpu = {0};
    if (compile(on, NULL, 1, &d_on) && compile(off, NULL, 0, &d_off)) {
        const char *t = d_on.text ? d_on.text : "";
        const char *gone[] = {"= range(", "= slice(", "= scatter_nd(", "= transpose(", "= equal(", "= where("};
        for (int i = 0; i < 6; i++) {
            CHECK_MSG(!strstr(t, gone[i]), "folded: '%s' left in\n%s", gone[i], t);
            CHECK_MSG(d_off.text && strstr(d_off.text, gone[i]), "not folded: no '%s' in\n%s", gone[i],
                      d_off.text ? d_off.text : "");
        }
        CHECK_MSG(strstr(t, "= constant <144 bytes"), "no 144-byte mask constant in\n%s", t);
        CHECK_MSG(strstr(t, "= constant <2400 bytes"), "no 2400-byte row constant in\n%s", t);
        CHECK_MSG(strstr(t, "= expand(") && strstr(t, "f32[600, 600]"), "the 1.44 MB expand was folded:\n%s", t);
        for (int64_t b = 1; b <= 4; b *= 4) {
            float *x = malloc((size_t)b * 36 * 4), *z = malloc((size_t)b * 360000 * 4),
                  *w = malloc((size_t)b * 600 * 4);
            float *y[2], *y2[2], *y3[2];
            for (int k = 0; k < 2; k++)
                y[k] = malloc((size_t)b * 36 * 4), y2[k] = malloc((size_t)b * 360000 * 4),
                y3[k] = malloc((size_t)b * 600 * 4);
            for (int64_t i = 0; i < b * 36; i++) x[i] = (float)(i % 13) * 0.25f - 1.0f;
            for (int64_t i = 0; i < b * 360000; i++) z[i] = (float)(i % 7) - 3.0f;
            for (int64_t i = 0; i < b * 600; i++) w[i] = (float)(i % 5) * 0.5f;
            if (run(on, b, x, z, w, y[0], y2[0], y3[0]) && run(off, b, x, z, w, y[1], y2[1], y3[1])) {
                CHECK_MSG(!memcmp(y[0], y[1], (size_t)b * 36 * 4) && !memcmp(y2[0], y2[1], (size_t)b * 360000 * 4) &&
                              !memcmp(y3[0], y3[1], (size_t)b * 600 * 4),
                          "B=%lld: folded and unfolded engines differ", (long long)b);
                int bad = 0;
                for (int64_t i = 0; i < b * 36; i++) {
                    int r = (int)(i / 6 % 6), c = (int)(i % 6);
                    int in_r = r == 1 || r == 2, in_c = c == 1 || c == 2;
                    float want = x[i] + (in_r != in_c ? -100.0f : 0.0f);
                    bad += y[0][i] != want;
                }
                CHECK_MSG(!bad, "B=%lld: %d of y's values are not x + the mask", (long long)b, bad);
                for (int64_t i = 0; i < b * 600; i++) bad += y3[0][i] != w[i];
                CHECK_MSG(!bad, "B=%lld: y3 is not w * 1", (long long)b);
            }
            for (int k = 0; k < 2; k++) free(y[k]), free(y2[k]), free(y3[k]);
            free(x), free(z), free(w);
        }
    }
    /* sm_90: the mask is a constant the add reads; no scatter kernel */
    if (compile(gpu, "sm_90", 1, &d_gpu)) {
        symc_error err;
        rt_engine *e = NULL;
        FILE *f = fopen(gpu, "rb");
        uint8_t *bytes = NULL;
        long size = 0;
        if (f && !fseek(f, 0, SEEK_END) && (size = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) &&
            (bytes = malloc((size_t)size)) && fread(bytes, 1, (size_t)size, f) == (size_t)size)
            CHECK_MSG(rt_engine_decode(bytes, (size_t)size, &e, &err) == SYMC_OK, "%s", err.msg);
        if (f) fclose(f);
        free(bytes);
        CHECK_MSG(e && e->cuda_source && !strstr(e->cuda_source, "/* scatter_nd") &&
                      !strstr(e->cuda_source, "/* range") && strstr(e->cuda_source, "/* elementwise"),
                  "sm_90: a scatter or range kernel is left");
        rt_engine_free(e);
    }
    free(d_on.text);
    free(d_off.text);
    free(d_gpu.text);
    return check_report("test_fold_const");
}
