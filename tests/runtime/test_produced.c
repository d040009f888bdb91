/* Sizes known only after a run, end to end on the reference backend
 * (docs/PLAN-data-dependent.md stages 2-3): a model built with the C API,
 *   idx = nonzero(x > 0)                 [2, u0], u0 <= B*N
 *   z   = gather_nd(x, transpose(idx)) * 2   [u0]
 * compiled without GPU code, saved and loaded as a .symx, then run through
 * the public symrt API at counts 0, 1, some and all, at several input
 * shapes and back: the max shapes are the bound's, dims that depend on u0
 * are -1 until the run is synced, the real shapes and every element equal
 * a plain loop over x (the oracle), and asking for the real shape before a
 * sync is a clear error. A second model reshapes z to [-1, 2], a condition
 * (u0 even) that only the data decide: a run with an odd count fails
 * naming the condition, an even one passes. The .symir round trip keeps the
 * unbacked symbol and its bound. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"

#define MAXN 24 /* B*N at most: 4*6 */

/* with_pairs: z reshaped to [-1, 2] as a third output */
static symc_module *build(int with_pairs) {
    symc_error err;
    symc_module *m = symc_module_create(with_pairs ? "nonzero_pairs" : "nonzero", &err);
    symc_dim B = SYMC_DIM_NONE, N = SYMC_DIM_NONE;
    CHECK(m && symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "N", 1, 3, 6, 1, &N, &err) == SYMC_OK);
    symc_dim dims[] = {B, N};
    symc_tensor x, zero, two, mask, idx, t, y, z, pairs;
    float f0 = 0.0f, f2 = 2.0f;
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "zero", SYMC_F32, 0, NULL, &f0, sizeof f0, &zero, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "two", SYMC_F32, 0, NULL, &f2, sizeof f2, &two, &err) == SYMC_OK);
    symc_tensor gt_in[] = {x, zero};
    CHECK(symc_add_node(m, "greater", "gt", gt_in, 2, NULL, 0, &mask, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "nonzero", "idx", &mask, 1, NULL, 0, &idx, 1, &err) == SYMC_OK);
    int64_t perm[] = {1, 0};
    symc_attr pa = symc_attr_ints("perm", perm, 2);
    CHECK(symc_add_node(m, "transpose", "tr", &idx, 1, &pa, 1, &t, 1, &err) == SYMC_OK);
    symc_tensor g_in[] = {x, t};
    CHECK(symc_add_node(m, "gather_nd", "pick", g_in, 2, NULL, 0, &y, 1, &err) == SYMC_OK);
    symc_tensor m_in[] = {y, two};
    CHECK(symc_add_node(m, "mul", "z", m_in, 2, NULL, 0, &z, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, idx, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, z, &err) == SYMC_OK);
    if (with_pairs) {
        symc_dim shape[] = {SYMC_DIM_NONE, symc_dim_const(m, 2)};
        symc_attr sa = symc_attr_dims("shape", shape, 2);
        CHECK(symc_add_node(m, "reshape", "pairs", &z, 1, &sa, 1, &pairs, 1, &err) == SYMC_OK);
        CHECK(symc_mark_output(m, pairs, &err) == SYMC_OK);
    }
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    return m;
}

static symrt_engine *compile(symc_module *m, const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.symx", dir, name);
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = 0;
    symc_error err;
    CHECK_MSG(symc_module_compile(m, &o, path, &err) == SYMC_OK, "%s", err.msg);
    symrt_engine *e = NULL;
    CHECK_MSG(symrt_engine_load_file(path, &e, &err) == SYMC_OK, "%s", err.msg);
    return e;
}

/* x[0..n) with none (which 0), one (1), some (2) or all (3) of its elements positive */
static void fill(float *x, int64_t n, int which) {
    for (int64_t i = 0; i < n; i++) {
        int pos = which == 0 ? 0 : which == 1 ? i == n / 2 : which == 2 ? (i * 7 + 3) % 3 == 0 : 1;
        x[i] = pos ? 0.5f + (float)i : -1.0f - (float)i;
    }
}

static void run_case(symrt_context *c, int64_t B, int64_t N, int which) {
    symc_error err;
    float x[MAXN];
    int64_t n = B * N;
    fill(x, n, which);
    /* the oracle */
    int64_t want_idx[2 * MAXN], count = 0;
    float want_z[MAXN];
    for (int64_t i = 0; i < n; i++)
        if (x[i] > 0) want_z[count++] = 2 * x[i];
    for (int64_t i = 0, j = 0; i < n; i++)
        if (x[i] > 0) want_idx[j] = i / N, want_idx[count + j] = i % N, j++;

    int64_t shape[2] = {B, N}, dims[8];
    int32_t rank = 0;
    CHECK_MSG(symrt_set_input_shape(c, "x", shape, 2, &err) == SYMC_OK, "%s", err.msg);
    /* outputs are named after their nodes (idx, z, pairs) */
    CHECK_MSG(symrt_get_tensor_max_shape(c, "idx", dims, &rank, &err) == SYMC_OK, "%s", err.msg);
    CHECK(rank == 2 && dims[0] == 2 && dims[1] == n);
    if (which == 0) { /* a new shape (the cases of one shape follow each other): the last run's shapes are gone */
        CHECK_MSG(symrt_get_tensor_shape(c, "idx", dims, &rank, &err) == SYMC_OK, "%s", err.msg);
        CHECK(rank == 2 && dims[0] == 2 && dims[1] == -1); /* known after the run */
        CHECK_MSG(symrt_get_output_shape(c, "idx", dims, &rank, &err) == SYMC_ERR_INVALID_ARG &&
                      strstr(err.msg, "symrt_context_sync_shapes"),
                  "%s", err.msg);
    }
    int64_t idx[2 * MAXN];
    float z[MAXN];
    memset(idx, 0xff, sizeof idx);
    memset(z, 0xff, sizeof z);
    CHECK(symrt_set_tensor_address(c, "x", x, (size_t)n * sizeof *x, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "idx", idx, (size_t)(2 * n) * sizeof *idx, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "z", z, (size_t)n * sizeof *z, &err) == SYMC_OK);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_context_sync_shapes(c, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_get_output_shape(c, "idx", dims, &rank, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(rank == 2 && dims[0] == 2 && dims[1] == count, "B=%lld N=%lld case %d: [%lld, %lld], want count %lld",
              (long long)B, (long long)N, which, (long long)dims[0], (long long)dims[1], (long long)count);
    CHECK(symrt_get_tensor_shape(c, "z", dims, &rank, &err) == SYMC_OK && rank == 1 && dims[0] == count);
    CHECK(symrt_get_output_shape(c, "z", dims, &rank, &err) == SYMC_OK && rank == 1 && dims[0] == count);
    CHECK_MSG(!memcmp(idx, want_idx, (size_t)(2 * count) * sizeof *idx), "B=%lld N=%lld case %d: indices differ",
              (long long)B, (long long)N, which);
    CHECK_MSG(!memcmp(z, want_z, (size_t)count * sizeof *z), "B=%lld N=%lld case %d: values differ", (long long)B,
              (long long)N, which);
}

static void test_nonzero(const char *dir) {
    symc_module *m = build(0);
    symrt_engine *e = m ? compile(m, dir, "produced") : NULL;
    if (!e) {
        symc_module_destroy(m);
        return;
    }
    CHECK(symrt_engine_num_produced(e) == 1);
    symc_error err;
    symrt_context *c = NULL;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    /* sync before any run: refused */
    CHECK(symrt_context_sync_shapes(c, &err) == SYMC_ERR_INVALID_ARG && strstr(err.msg, "symrt_enqueue"));
    static const int64_t shapes[][2] = {{1, 1}, {3, 5}, {4, 6}, {2, 3}, {4, 6}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
        for (int which = 0; which < 4; which++) run_case(c, shapes[s][0], shapes[s][1], which);
    /* the CUDA backend refuses such an engine (no GPU code) with a message, never a crash */
    symrt_context *cu = NULL;
    CHECK(symrt_context_create(e, SYMRT_BACKEND_CUDA, NULL, &cu, &err) != SYMC_OK && !cu);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);

    /* .symir round trip: the unbacked symbol comes back with its bound */
    char path[4096];
    snprintf(path, sizeof path, "%s/produced.symir", dir);
    CHECK_MSG(symc_module_save(m, path, &err) == SYMC_OK, "%s", err.msg);
    symc_module *back = NULL;
    CHECK_MSG(symc_module_load(path, &back, &err) == SYMC_OK, "%s", err.msg);
    if (back) {
        CHECK_MSG(symc_module_infer_shapes(back, &err) == SYMC_OK, "%s", err.msg);
        symrt_engine *e2 = compile(back, dir, "produced_back");
        symrt_context *c2 = NULL;
        if (e2 && symrt_context_create(e2, SYMRT_BACKEND_REF, NULL, &c2, &err) == SYMC_OK) {
            run_case(c2, 3, 4, 2);
            run_case(c2, 2, 2, 0);
        }
        symrt_context_destroy(c2);
        symrt_engine_destroy(e2);
        symc_module_destroy(back);
    }
    symc_module_destroy(m);
}

static void test_condition_after(const char *dir) {
    symc_module *m = build(1);
    symrt_engine *e = m ? compile(m, dir, "produced_pairs") : NULL;
    symc_module_destroy(m);
    if (!e) return;
    symc_error err;
    symrt_context *c = NULL;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    for (int count = 2; count <= 3; count++) {
        float x[6] = {-1, -1, -1, -1, -1, -1};
        for (int i = 0; i < count; i++) x[i] = 1.0f + (float)i;
        int64_t shape[2] = {2, 3}, idx[12];
        float z[6], pairs[6];
        CHECK(symrt_set_input_shape(c, "x", shape, 2, &err) == SYMC_OK);
        CHECK(symrt_set_tensor_address(c, "x", x, sizeof x, &err) == SYMC_OK);
        CHECK(symrt_set_tensor_address(c, "idx", idx, sizeof idx, &err) == SYMC_OK);
        CHECK(symrt_set_tensor_address(c, "z", z, sizeof z, &err) == SYMC_OK);
        CHECK(symrt_set_tensor_address(c, "pairs", pairs, sizeof pairs, &err) == SYMC_OK);
        symc_status st = symrt_enqueue(c, NULL, &err);
        if (count == 2) {
            CHECK_MSG(st == SYMC_OK, "%s", err.msg);
            int64_t dims[8];
            int32_t rank;
            CHECK(symrt_context_sync_shapes(c, &err) == SYMC_OK);
            CHECK(symrt_get_output_shape(c, "pairs", dims, &rank, &err) == SYMC_OK && rank == 2 && dims[0] == 1 &&
                  dims[1] == 2);
            CHECK(pairs[0] == 2.0f && pairs[1] == 4.0f);
        } else {
            CHECK_MSG(st == SYMC_ERR_RANGE && strstr(err.msg, "u0 = 3") && strstr(err.msg, "pairs"), "%d: %s", st,
                      err.msg);
            CHECK(symrt_context_sync_shapes(c, &err) == SYMC_ERR_INVALID_ARG); /* that run did not finish */
        }
    }
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    test_nonzero(dir);
    test_condition_after(dir);
    return check_report("test_produced");
}
