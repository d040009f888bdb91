/* Sizes known only after a run on the CUDA backend against the reference
 * backend, through the public API (docs/PLAN-data-dependent.md stage 6):
 * engines built with GPU code from C builder models,
 *   idx = nonzero(x > 0); z = gather_nd(x, transpose(idx)) * 2
 *   sel = nms(boxes, scores, max_out, iou, thr)   (well separated boxes, distinct scores)
 *   indices, inverse, counts = unique(x)          (sorted, no axis)
 *   idx = topk(x, k = item(kin)); vals = gather_elements(x, idx)  (k read at run time;
 *     k above the axis dim and negative k fail naming the item node)
 * each run on both backends at counts 0, 1, some and all (nonzero also at
 * 1023, 1024, 1025 and 2^20 + 3 elements), twice in a row with different
 * counts and then at another input shape, on the same contexts: the max
 * shapes agree, the real shapes after symrt_context_sync_shapes agree, and
 * every element of every output at its real shape is equal (gather and a
 * multiplication by 2 are exact). Outputs are poisoned before each run. The
 * runs are plain (no CUDA graph: a sync point per producer).
 *
 * Needs the format-7 engine writer with GPU code (the count cells in
 * rt_produced.count_tensor, codegen/build_engine.c): it fails at the build
 * before that. Without a GPU it passes saying so. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/cuda_backend.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"

static const rt_cuda_driver_api *drv;
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)(rng >> 11);
}

static symrt_engine *compile(symc_module *m, const char *name) {
    char path[256];
    snprintf(path, sizeof path, "%s.symx", name);
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = 1;
    o.tune = 0;
    symc_error err;
    symc_status st = symc_module_compile(m, &o, path, &err);
    CHECK_MSG(st == SYMC_OK, "%s: %s", name, err.msg);
    symrt_engine *e = NULL;
    if (!st) CHECK_MSG(symrt_engine_load_file(path, &e, &err) == SYMC_OK, "%s: %s", name, err.msg);
    symc_module_destroy(m);
    return e;
}

static size_t nbytes(symc_dtype dt, int32_t rank, const int64_t *dims) {
    size_t n = symc_dtype_size(dt);
    for (int32_t d = 0; d < rank; d++) n *= (size_t)dims[d];
    return n;
}

/* One run on both contexts: inputs (host data, shapes) in the engine's input order; every output compared. */
typedef struct input {
    const void *data;
    int32_t rank;
    int64_t dims[4];
} input;

static void run_both(const symrt_engine *e, symrt_context *gpu, symrt_context *ref, const input *in, const char *what) {
    symc_error err;
    uint32_t ni = symrt_engine_num_inputs(e), no = symrt_engine_num_outputs(e);
    uint64_t dev[16] = {0};
    void *host[16] = {0};
    for (uint32_t i = 0; i < ni; i++) {
        symrt_io_info info;
        CHECK(symrt_engine_input(e, i, &info, &err) == SYMC_OK);
        size_t b = nbytes(info.dtype, in[i].rank, in[i].dims);
        CHECK(drv->mem_alloc(&dev[i], b ? b : 256) == 0);
        if (b) CHECK(drv->memcpy_htod(dev[i], in[i].data, b) == 0);
        CHECK_MSG(symrt_set_input_shape(gpu, info.name, in[i].dims, in[i].rank, &err) == SYMC_OK, "%s: %s", what,
                  err.msg);
        CHECK_MSG(symrt_set_input_shape(ref, info.name, in[i].dims, in[i].rank, &err) == SYMC_OK, "%s: %s", what,
                  err.msg);
        CHECK(symrt_set_tensor_address(gpu, info.name, (void *)(uintptr_t)dev[i], b, &err) == SYMC_OK);
        CHECK(symrt_set_tensor_address(ref, info.name, (void *)in[i].data, b, &err) == SYMC_OK);
    }
    size_t cap[16];
    for (uint32_t k = 0; k < no; k++) {
        symrt_io_info info;
        int64_t gd[8], rd[8];
        int32_t gr = 0, rr = 0;
        CHECK(symrt_engine_output(e, k, &info, &err) == SYMC_OK);
        CHECK_MSG(symrt_get_tensor_max_shape(gpu, info.name, gd, &gr, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(symrt_get_tensor_max_shape(ref, info.name, rd, &rr, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(gr == rr && !memcmp(gd, rd, (size_t)gr * 8), "%s: output %s: the max shapes differ", what, info.name);
        cap[k] = nbytes(info.dtype, rr, rd);
        uint32_t j = ni + k;
        CHECK(drv->mem_alloc(&dev[j], cap[k] ? cap[k] : 256) == 0);
        CHECK(drv->memset_d8(dev[j], 0xa5, cap[k] ? cap[k] : 256) == 0); /* poison */
        host[j] = malloc(cap[k] ? cap[k] : 1);
        memset(host[j], 0x5a, cap[k] ? cap[k] : 1);
        CHECK(symrt_set_tensor_address(gpu, info.name, (void *)(uintptr_t)dev[j], cap[k], &err) == SYMC_OK);
        CHECK(symrt_set_tensor_address(ref, info.name, host[j], cap[k], &err) == SYMC_OK);
    }
    CHECK_MSG(symrt_enqueue(gpu, NULL, &err) == SYMC_OK, "%s: CUDA: %s", what, err.msg);
    CHECK_MSG(symrt_context_sync_shapes(gpu, &err) == SYMC_OK, "%s: CUDA: %s", what, err.msg);
    CHECK_MSG(symrt_context_check(gpu, &err) == SYMC_OK, "%s: CUDA: %s", what, err.msg);
    CHECK_MSG(symrt_enqueue(ref, NULL, &err) == SYMC_OK, "%s: reference: %s", what, err.msg);
    CHECK_MSG(symrt_context_sync_shapes(ref, &err) == SYMC_OK, "%s: reference: %s", what, err.msg);
    for (uint32_t k = 0; k < no; k++) {
        symrt_io_info info;
        int64_t gd[8], rd[8];
        int32_t gr = -1, rr = -2;
        CHECK(symrt_engine_output(e, k, &info, &err) == SYMC_OK);
        CHECK_MSG(symrt_get_output_shape(gpu, info.name, gd, &gr, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(symrt_get_output_shape(ref, info.name, rd, &rr, &err) == SYMC_OK, "%s", err.msg);
        int same = gr == rr && !memcmp(gd, rd, (size_t)(gr > 0 ? gr : 0) * 8);
        CHECK_MSG(same, "%s: output %s: real shapes differ", what, info.name);
        if (!same) continue;
        size_t b = nbytes(info.dtype, rr, rd);
        void *got = malloc(b ? b : 1);
        if (b) CHECK(drv->memcpy_dtoh(got, dev[ni + k], b) == 0);
        CHECK_MSG(!memcmp(got, host[ni + k], b), "%s: output %s (%zu bytes) differs from the reference", what,
                  info.name, b);
        free(got);
    }
    for (uint32_t j = 0; j < ni + no; j++) {
        if (dev[j]) drv->mem_free(dev[j]);
        free(host[j]);
    }
}

/* ---- nonzero(x > 0) -> transpose -> gather_nd -> * 2 ------------------------------------ */
static symc_module *nonzero_model(void) {
    symc_error err;
    symc_module *m = symc_module_create("gpu_nonzero", &err);
    symc_dim B, N;
    symc_declare_symbol(m, "B", 1, 1, 4, 1, &B, &err);
    symc_declare_symbol(m, "N", 0, 64, (1 << 20) + 8, 1, &N, &err);
    symc_dim dims[] = {B, N};
    symc_tensor x, zero, two, mask, idx, t, y, z;
    float f0 = 0.0f, f2 = 2.0f;
    symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err);
    symc_add_constant(m, "zero", SYMC_F32, 0, NULL, &f0, sizeof f0, &zero, &err);
    symc_add_constant(m, "two", SYMC_F32, 0, NULL, &f2, sizeof f2, &two, &err);
    symc_tensor gt_in[] = {x, zero};
    symc_add_node(m, "greater", "gt", gt_in, 2, NULL, 0, &mask, 1, &err);
    symc_add_node(m, "nonzero", "idx", &mask, 1, NULL, 0, &idx, 1, &err);
    int64_t perm[] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    symc_add_node(m, "transpose", "tr", &idx, 1, &pa, 1, &t, 1, &err);
    symc_tensor g_in[] = {x, t};
    symc_add_node(m, "gather_nd", "pick", g_in, 2, NULL, 0, &y, 1, &err);
    symc_tensor m_in[] = {y, two};
    symc_add_node(m, "mul", "z", m_in, 2, NULL, 0, &z, 1, &err);
    symc_mark_output(m, idx, &err);
    symc_mark_output(m, z, &err);
    return m;
}

static void test_nonzero(void) {
    symrt_engine *e = compile(nonzero_model(), "gpu_nonzero");
    if (!e) return;
    symc_error err;
    symrt_context *gpu = NULL, *ref = NULL;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &gpu, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &ref, &err) == SYMC_OK, "%s", err.msg);
    static const int64_t shapes[][2] = {{1, 1}, {3, 5}, {1, 1023}, {1, 1024}, {1, 1025}, {2, 1000}, {1, (1 << 20) + 3},
                                        {1, 0}, {3, 5}};
    size_t maxn = (1 << 20) + 8;
    float *x = malloc(maxn * sizeof *x);
    symrt_graph_stats s0 = {0}, s1 = {0};
    CHECK(symrt_context_graph_stats(gpu, &s0, &err) == SYMC_OK);
    int runs = 0;
    for (size_t s = 0; gpu && ref && s < sizeof shapes / sizeof *shapes; s++)
        for (int which = 0; which < 4; which++) { /* none, one, some, all positive: two runs in a row differ */
            int64_t n = shapes[s][0] * shapes[s][1];
            for (int64_t i = 0; i < n; i++) {
                int pos = which == 0 ? 0 : which == 1 ? i == n / 2 : which == 2 ? rnd() % 3 == 0 : 1;
                x[i] = pos ? 0.25f + (float)(i % 97) : -1.0f - (float)(i % 5);
            }
            input in = {x, 2, {shapes[s][0], shapes[s][1]}};
            char what[96];
            snprintf(what, sizeof what, "nonzero [%lld, %lld] case %d", (long long)shapes[s][0],
                     (long long)shapes[s][1], which);
            run_both(e, gpu, ref, &in, what);
            runs++;
        }
    CHECK(symrt_context_graph_stats(gpu, &s1, &err) == SYMC_OK);
    CHECK_MSG(s1.replays == s0.replays && s1.plain == s0.plain + (uint64_t)runs,
              "graphs are off with produced sizes: %llu replays, %llu plain runs of %d",
              (unsigned long long)(s1.replays - s0.replays), (unsigned long long)(s1.plain - s0.plain), runs);
    free(x);
    symrt_context_destroy(gpu);
    symrt_context_destroy(ref);
    symrt_engine_destroy(e);
}

/* ---- nms ---------------------------------------------------------------------------------- */
static void test_nms(void) {
    symc_error err;
    symc_module *m = symc_module_create("gpu_nms", &err);
    symc_dim B, C, N;
    symc_declare_symbol(m, "B", 1, 1, 2, 1, &B, &err);
    symc_declare_symbol(m, "C", 1, 2, 4, 1, &C, &err);
    symc_declare_symbol(m, "N", 1, 40, 100, 1, &N, &err);
    symc_dim bd[3] = {B, N, symc_dim_const(m, 4)}, sd[3] = {B, C, N}, one[1] = {symc_dim_const(m, 1)};
    symc_tensor in[5], y;
    symc_add_input(m, "boxes", SYMC_F32, 3, bd, &in[0], &err);
    symc_add_input(m, "scores", SYMC_F32, 3, sd, &in[1], &err);
    symc_add_input(m, "max_out", SYMC_I64, 1, one, &in[2], &err);
    symc_add_input(m, "iou", SYMC_F32, 1, one, &in[3], &err);
    symc_add_input(m, "thr", SYMC_F32, 1, one, &in[4], &err);
    symc_add_node(m, "nms", "sel", in, 5, NULL, 0, &y, 1, &err);
    symc_mark_output(m, y, &err);
    symrt_engine *e = compile(m, "gpu_nms");
    if (!e) return;
    symrt_context *gpu = NULL, *ref = NULL;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &gpu, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &ref, &err) == SYMC_OK, "%s", err.msg);
    static float boxes[2 * 100 * 4], scores[2 * 4 * 100];
    /* score thresholds giving none, one, some and all boxes; then another shape */
    static const struct {
        int64_t B, C, N, max_out;
        float thr;
    } cases[] = {{2, 3, 40, 100, 2.0f},   {2, 3, 40, 100, 0.0f}, {2, 3, 40, 5, 0.5f},
                 {2, 3, 40, 100, 0.999f}, {1, 4, 100, 3, 0.2f},  {2, 2, 7, 100, 0.0f}};
    for (size_t k = 0; gpu && ref && k < sizeof cases / sizeof *cases; k++) {
        int64_t Bv = cases[k].B, Cv = cases[k].C, Nv = cases[k].N;
        for (int64_t i = 0; i < Bv * Nv; i++) { /* a grid of separated boxes, overlapping pairs every third */
            float x0 = (float)(i % 10) * 10.0f + (i % 3 == 1 ? 0.5f : 0.0f), y0 = (float)(i / 10) * 10.0f;
            boxes[i * 4] = y0, boxes[i * 4 + 1] = x0, boxes[i * 4 + 2] = y0 + 6.0f, boxes[i * 4 + 3] = x0 + 6.0f;
        }
        for (int64_t i = 0; i < Bv * Cv * Nv; i++) scores[i] = (float)((i * 7919) % 1000) / 1000.0f; /* distinct */
        if (k == 3) scores[5] = 0.9995f; /* exactly one above 0.999 */
        float iou = 0.5f;
        input in[5] = {{boxes, 3, {Bv, Nv, 4}},
                       {scores, 3, {Bv, Cv, Nv}},
                       {&cases[k].max_out, 1, {1}},
                       {&iou, 1, {1}},
                       {&cases[k].thr, 1, {1}}};
        char what[64];
        snprintf(what, sizeof what, "nms case %zu", k);
        run_both(e, gpu, ref, in, what);
    }
    symrt_context_destroy(gpu);
    symrt_context_destroy(ref);
    symrt_engine_destroy(e);
}

/* ---- unique ------------------------------------------------------------------------------- */
static void test_unique(void) {
    symc_error err;
    symc_module *m = symc_module_create("gpu_unique", &err);
    symc_dim N;
    symc_declare_symbol(m, "N", 0, 64, 2048, 1, &N, &err);
    symc_tensor x, outs[3];
    symc_add_input(m, "x", SYMC_F32, 1, &N, &x, &err);
    symc_add_node(m, "unique", "uq", &x, 1, NULL, 0, outs, 3, &err);
    for (int i = 0; i < 3; i++) symc_mark_output(m, outs[i], &err);
    symrt_engine *e = compile(m, "gpu_unique");
    if (!e) return;
    symrt_context *gpu = NULL, *ref = NULL;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &gpu, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &ref, &err) == SYMC_OK, "%s", err.msg);
    static float xv[2048];
    static const int64_t sizes[] = {0, 1, 50, 50, 2048, 7};
    for (size_t s = 0; gpu && ref && s < sizeof sizes / sizeof *sizes; s++) {
        int64_t n = sizes[s], spread = s == 2 ? 1 : s == 3 ? 10000 : 17; /* one value, all distinct, some */
        for (int64_t i = 0; i < n; i++) xv[i] = (float)((int64_t)(rnd() % (uint32_t)spread) - spread / 2);
        if (n > 20 && spread == 17) xv[3] = xv[11] = NAN;
        input in = {xv, 1, {n}};
        char what[64];
        snprintf(what, sizeof what, "unique n %lld", (long long)n);
        run_both(e, gpu, ref, &in, what);
    }
    symrt_context_destroy(gpu);
    symrt_context_destroy(ref);
    symrt_engine_destroy(e);
}

/* ---- topk with k read at run time (item, whose output nothing reads: kept for its size) ---- */
static void test_item_topk(void) {
    symc_error err;
    symc_module *m = symc_module_create("gpu_item", &err);
    symc_dim B, N;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "N", 1, 64, 3000, 1, &N, &err);
    symc_dim dims[] = {B, N}, one[1] = {symc_dim_const(m, 1)};
    symc_tensor x, k, u, idx, vals;
    symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err);
    symc_add_input(m, "k", SYMC_I64, 1, one, &k, &err);
    symc_attr ba = symc_attr_dims("bound", &N, 1);
    symc_add_node(m, "item", "kval", &k, 1, &ba, 1, &u, 1, &err);
    symc_dim kd = 0, ud[8];
    symc_dtype udt;
    int32_t ur = 0;
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_tensor_info(m, u, &udt, &ur, ud, &err) == SYMC_OK && ur == 1, "%s", err.msg);
    kd = ud[0];
    symc_attr ta[2] = {symc_attr_dims("k", &kd, 1), symc_attr_int("axis", 1)};
    symc_add_node(m, "topk", "top", &x, 1, ta, 2, &idx, 1, &err);
    symc_tensor g_in[] = {x, idx};
    symc_attr ga = symc_attr_int("axis", 1);
    symc_add_node(m, "gather_elements", "vals", g_in, 2, &ga, 1, &vals, 1, &err);
    symc_mark_output(m, idx, &err);
    symc_mark_output(m, vals, &err);
    symrt_engine *e = compile(m, "gpu_item");
    if (!e) return;
    symrt_context *gpu = NULL, *ref = NULL;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &gpu, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &ref, &err) == SYMC_OK, "%s", err.msg);
    static float xv[8 * 3000];
    static const int64_t cases[][3] = {{2, 64, 5}, {1, 1, 0}, {1, 1, 1}, {8, 3000, 3000}, {3, 100, 17}, {2, 64, 64}};
    for (size_t c = 0; gpu && ref && c < sizeof cases / sizeof *cases; c++) {
        int64_t n = cases[c][0] * cases[c][1];
        for (int64_t i = 0; i < n; i++) xv[i] = (float)(rnd() % 100000) * 0.01f; /* ties too: lower index first */
        input in[2] = {{xv, 2, {cases[c][0], cases[c][1]}}, {&cases[c][2], 1, {1}}};
        char what[64];
        snprintf(what, sizeof what, "topk [%lld, %lld] k %lld", (long long)cases[c][0], (long long)cases[c][1],
                 (long long)cases[c][2]);
        run_both(e, gpu, ref, in, what);
    }
    /* k above the axis dim, and negative: the run fails naming the node, on both backends */
    static const int64_t bad[] = {65, -2};
    for (size_t c = 0; gpu && ref && c < 2; c++) {
        int64_t d[2] = {2, 64}, kd1 = 1;
        uint64_t dx = 0, dk = 0;
        CHECK(drv->mem_alloc(&dx, 2 * 64 * 4) == 0 && drv->mem_alloc(&dk, 8) == 0);
        CHECK(drv->memcpy_htod(dk, &bad[c], 8) == 0);
        symrt_context *ctx[2] = {gpu, ref};
        for (int w = 0; w < 2; w++) {
            CHECK(symrt_set_input_shape(ctx[w], "x", d, 2, &err) == SYMC_OK);
            CHECK(symrt_set_input_shape(ctx[w], "k", &kd1, 1, &err) == SYMC_OK);
            CHECK(symrt_set_tensor_address(ctx[w], "x", w ? (void *)xv : (void *)(uintptr_t)dx, 2 * 64 * 4, &err) ==
                  SYMC_OK);
            CHECK(symrt_set_tensor_address(ctx[w], "k", w ? (void *)&bad[c] : (void *)(uintptr_t)dk, 8, &err) ==
                  SYMC_OK);
            symc_status st = symrt_enqueue(ctx[w], NULL, &err);
            if (!st) st = symrt_context_sync_shapes(ctx[w], &err);
            CHECK_MSG(st == SYMC_ERR_RANGE && strstr(err.msg, "kval"), "%s k = %lld: status %d: %s",
                      w ? "reference" : "CUDA", (long long)bad[c], (int)st, err.msg);
        }
        drv->mem_free(dx), drv->mem_free(dk);
    }
    symrt_context_destroy(gpu);
    symrt_context_destroy(ref);
    symrt_engine_destroy(e);
}

int main(void) {
    symc_error err;
    uint32_t sm;
    if (rt_cuda_device_sm(&sm, &err) != SYMC_OK) {
        printf("no GPU (%s): skipped\n", err.msg);
        return 0;
    }
    if (!(drv = rt_cuda_driver(&err))) {
        CHECK_MSG(0, "%s", err.msg);
        return check_report("gpu.cuda_produced");
    }
    test_nonzero();
    test_nms();
    test_unique();
    test_item_topk();
    return check_report("gpu.cuda_produced");
}
