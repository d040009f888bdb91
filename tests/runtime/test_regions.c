/* Engines with regions on the reference backend (docs/PLAN-regions.md,
 * stage 2): a 2-region engine assembled in memory from two compiled graphs
 * (region 0: x [1, S, 4], y = x @ w, for 'B == 1 and S <= 6'; region 1:
 * x [B, S, 4], y = x @ w + b, for '2 <= B'), sharing the root's constants.
 * Checks the region queries, the dim text where regions differ, the pick at
 * B = 1 and B >= 2 with results against a plain C computation, switching
 * back and forth with addresses kept and rebound, get_tensor_shape per
 * region, the error for a shape in no region, the hull and fixed-dim
 * refusals, two threads with a context each (label `threads`: run under
 * ThreadSanitizer too), and that a one-graph engine answers as before. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "symshape/sym.h"
#include "tests/check.h"
#include "tests/runtime/regions_two.h"

enum { D = 4, MAXB = 4, MAXS = 8, N = MAXB * MAXS * D };

static float W[D * D], BIAS[D];

/* One graph: region 0 (with_bias 0: B fixed to 1, S in [1, 6]) or region 1. */
static rt_engine *compile_graph(int with_bias) {
    symc_error err;
    symc_module *m = symc_module_create("regions", &err);
    symc_dim B = symc_dim_const(m, 1), S;
    if (with_bias) symc_declare_symbol(m, "B", 2, 2, MAXB, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 4, with_bias ? MAXS : 6, 1, &S, &err);
    symc_tensor x, wt, bt, mm, y;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, D)}, &x, &err);
    symc_add_constant(m, "w", SYMC_F32, 2, (int64_t[]){D, D}, W, sizeof W, &wt, &err);
    if (with_bias) {
        symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){D}, BIAS, sizeof BIAS, &bt, &err);
        symc_add_node(m, "matmul", "mm", (symc_tensor[]){x, wt}, 2, NULL, 0, &mm, 1, &err);
        symc_add_node(m, "add", "y", (symc_tensor[]){mm, bt}, 2, NULL, 0, &y, 1, &err);
    } else {
        symc_add_node(m, "matmul", "y", (symc_tensor[]){x, wt}, 2, NULL, 0, &y, 1, &err);
    }
    symc_mark_output(m, y, &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.gpu = 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    rt_engine *e = NULL;
    CHECK_MSG(bytes && rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    free(bytes);
    return e;
}

/* The 2-region engine (regions_two.h); region 0's w is region 1's first constant. */
typedef rt_test_two fixture;

static int make_fixture(fixture *f) {
    for (int i = 0; i < D * D; i++) W[i] = (float)((i * 37) % 23 - 11) / 16.0f;
    for (int i = 0; i < D; i++) BIAS[i] = (float)(i % 3) - 1.0f;
    if (!rt_test_two_assemble(f, compile_graph(0), compile_graph(1), MAXB, MAXS)) return 0;
    CHECK(f->g[0]->n_constants == 1 && f->g[1]->n_constants == 2);
    CHECK(f->g[0]->constants[0].size == f->g[1]->constants[0].size &&
          !memcmp(f->g[0]->constants[0].data, f->g[1]->constants[0].data, f->g[0]->constants[0].size));
    CHECK(f->g[0]->n_symbols == 1 && f->g[1]->n_symbols == 2);
    return 1;
}

static void free_fixture(fixture *f) { rt_test_two_free(f); }

static void fill(float *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 16) % 2001) / 500.0f - 2.0f;
    }
}

/* What the engine must give at (Bv, Sv): region 0's x @ w at B = 1, region 1's x @ w + b otherwise. */
static int matches(const float *x, const float *y, int64_t Bv, int64_t Sv) {
    for (int64_t r = 0; r < Bv * Sv; r++)
        for (int j = 0; j < D; j++) {
            float want = Bv >= 2 ? BIAS[j] : 0.0f;
            for (int k = 0; k < D; k++) want += x[r * D + k] * W[k * D + j];
            float got = y[r * D + j], d = got > want ? got - want : want - got;
            if (d > 1e-4f) return 0;
        }
    return 1;
}

/* Shapes and addresses at (Bv, Sv), then one run; 0 or the status. */
static symc_status run(symrt_context *c, int64_t Bv, int64_t Sv, const float *x, float *y, symc_error *err) {
    size_t bytes = (size_t)(Bv * Sv * D) * sizeof(float);
    symc_status st = symrt_set_input_shape(c, "x", (int64_t[]){Bv, Sv, D}, 3, err);
    if (!st) st = symrt_set_tensor_address(c, "x", (void *)x, bytes, err);
    if (!st) st = symrt_set_tensor_address(c, "y", y, bytes, err);
    if (!st) st = symrt_enqueue(c, NULL, err);
    return st;
}

static void test_queries(symrt_engine *h) {
    symc_error err;
    CHECK(symrt_engine_num_regions(h) == 2);
    CHECK(symrt_engine_num_inputs(h) == 1 && symrt_engine_num_outputs(h) == 1 && symrt_engine_num_symbols(h) == 2);
    symrt_region_info ri;
    CHECK(symrt_engine_region(h, 0, &ri, &err) == SYMC_OK && !strcmp(ri.name, "B == 1 and S <= 6") && ri.nodes >= 1);
    CHECK(symrt_engine_region(h, 1, &ri, &err) == SYMC_OK && !strcmp(ri.name, "2 <= B") && ri.steps == 0);
    CHECK(symrt_engine_region(h, 2, &ri, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "region 2 does not exist (the engine has 2)");
    symrt_io_info io;
    CHECK(symrt_engine_input(h, 0, &io, &err) == SYMC_OK && !strcmp(io.name, "x") && io.rank == 3);
    CHECK(symrt_engine_output(h, 0, &io, &err) == SYMC_OK && !strcmp(io.name, "y") && io.rank == 3);
    char buf[128];
    CHECK(symrt_engine_input_dim(h, 0, 0, buf, sizeof buf, &err) == SYMC_OK);
    CHECK_MSG(!strcmp(buf, "B"), "'%s'", buf); /* 1 in region 0, which takes only B == 1 (x [1, 4]) */
    CHECK(symrt_engine_input_dim(h, 0, 1, buf, sizeof buf, &err) == SYMC_OK);
    CHECK_MSG(!strcmp(buf, "S"), "'%s'", buf);
    CHECK(symrt_engine_input_dim(h, 0, 2, buf, sizeof buf, &err) == SYMC_OK);
    CHECK_MSG(!strcmp(buf, "4"), "'%s'", buf);
    CHECK(symrt_engine_output_dim(h, 0, 0, buf, sizeof buf, &err) == SYMC_OK);
    CHECK_MSG(!strcmp(buf, "B"), "'%s'", buf); /* y [1, 2, 2] in region 0 is B there */
}

static float X[N], Y[N], Y2[N], X2[N];

static void test_pick(symrt_engine *h) {
    symc_error err;
    symrt_context *c = NULL;
    CHECK_MSG(symrt_context_create(h, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    if (!c) return;
    int32_t r = 7;
    CHECK(symrt_context_region(c, &r, &err) == SYMC_ERR_INVALID_ARG); /* no shape yet */
    CHECK_CONTAINS(err.msg, "input 'x' has no shape yet");
    fill(X, N, 1);
    fill(X2, N, 2);
    /* B = 1: region 0; B = 2: region 1; then back, with the same and with new buffers */
    struct {
        int64_t b, s;
        int second; /* X2/Y2 instead of X/Y */
    } seq[] = {{1, 3, 0}, {2, 5, 0}, {1, 3, 0}, {1, 6, 1}, {4, 8, 1}, {3, 2, 0}, {1, 1, 1}};
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++) {
        const float *x = seq[i].second ? X2 : X;
        float *y = seq[i].second ? Y2 : Y;
        memset(y, 0, sizeof Y);
        CHECK_MSG(run(c, seq[i].b, seq[i].s, x, y, &err) == SYMC_OK, "step %zu: %s", i, err.msg);
        CHECK_MSG(matches(x, y, seq[i].b, seq[i].s), "step %zu (B=%lld, S=%lld)", i, (long long)seq[i].b,
                  (long long)seq[i].s);
        CHECK(symrt_context_region(c, &r, &err) == SYMC_OK && r == (seq[i].b == 1 ? 0 : 1));
        int64_t dims[8];
        int32_t rank = 0;
        CHECK(symrt_get_tensor_shape(c, "y", dims, &rank, &err) == SYMC_OK && rank == 3 && dims[0] == seq[i].b &&
              dims[1] == seq[i].s && dims[2] == D);
    }
    /* a switch of region keeps the addresses given before it: only the shape changes */
    CHECK(symrt_set_tensor_address(c, "x", X2, sizeof X2, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "y", Y2, sizeof Y2, &err) == SYMC_OK);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 2, D}, 3, &err) == SYMC_OK);
    memset(Y2, 0, sizeof Y2);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK(matches(X2, Y2, 2, 2));
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){1, 2, D}, 3, &err) == SYMC_OK);
    memset(Y2, 0, sizeof Y2);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK(matches(X2, Y2, 1, 2));
    /* get_tensor_shape alone picks the region */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){3, 7, D}, 3, &err) == SYMC_OK);
    int64_t dims[8];
    int32_t rank = 0;
    CHECK(symrt_get_tensor_shape(c, "y", dims, &rank, &err) == SYMC_OK && dims[0] == 3 && dims[1] == 7);
    CHECK(symrt_context_region(c, &r, &err) == SYMC_OK && r == 1);
    symrt_context_destroy(c);
}

static void test_errors(symrt_engine *h) {
    symc_error err;
    symrt_context *c = NULL;
    CHECK_MSG(symrt_context_create(h, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    if (!c) return;
    const char *want = "input shapes B=1, S=7 are in no region of engine 'regions': region 0 'B == 1 and S <= 6' fails "
                       "at S <= 6 (7 > 6); region 1 '2 <= B' fails at 2 <= B (2 > 1)";
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){1, 7, D}, 3, &err) == SYMC_OK);
    int32_t r = 7;
    CHECK(symrt_context_region(c, &r, &err) == SYMC_ERR_RANGE);
    CHECK_MSG(!strcmp(err.msg, want), "'%s'", err.msg);
    CHECK(run(c, 1, 7, X, Y, &err) == SYMC_ERR_RANGE);
    CHECK_MSG(!strcmp(err.msg, want), "'%s'", err.msg);
    int64_t dims[8];
    int32_t rank;
    CHECK(symrt_get_tensor_shape(c, "y", dims, &rank, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "in no region");
    /* after the refusal a good shape runs */
    CHECK_MSG(run(c, 1, 6, X, Y, &err) == SYMC_OK, "%s", err.msg);
    CHECK(matches(X, Y, 1, 6));
    /* the declared hull and the dims every region fixes are checked at once */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){5, 2, D}, 3, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "symbol B must be in [1, 4]");
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 2, D + 1}, 3, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'x' dim 2 = 5 but the model needs 4 (a fixed size)");
    CHECK(symrt_set_input_shape(c, "z", (int64_t[]){2, 2, D}, 3, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "no input named 'z' (inputs: x)");
    CHECK(symrt_set_tensor_address(c, "q", Y, sizeof Y, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "(inputs: x; outputs: y)");
    /* a too-small buffer is checked against the picked region's shape */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 3, D}, 3, &err) == SYMC_OK);
    CHECK(symrt_set_tensor_address(c, "y", Y, 2 * 3 * D * sizeof(float) - 1, &err) == SYMC_OK);
    CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "output 'y' buffer holds 95 bytes, the tensor needs 96 at this shape");
    /* profile is the CUDA backend's; graphs and stats are no-ops here, over every region */
    uint32_t n = 0;
    CHECK(symrt_context_profile(c, NULL, NULL, 0, &n, &err) == SYMC_ERR_UNSUPPORTED);
    CHECK(symrt_context_set_cuda_graphs(c, 0, &err) == SYMC_OK);
    symrt_graph_stats gs;
    CHECK(symrt_context_graph_stats(c, &gs, &err) == SYMC_OK && gs.plain == 0 && gs.replays == 0);
    CHECK(symrt_context_check(c, &err) == SYMC_OK);
    symrt_context_destroy(c);
}

/* ---- two threads, a context each, switching regions ------------------------- */

typedef struct worker {
    symrt_engine *h;
    int id, bad;
    char msg[SYMC_ERROR_MSG_CAP];
    float x[N], y[N];
} worker;

static void *work(void *arg) {
    worker *w = arg;
    symc_error err;
    symrt_context *c = NULL;
    if (symrt_context_create(w->h, SYMRT_BACKEND_REF, NULL, &c, &err)) {
        w->bad++;
        snprintf(w->msg, sizeof w->msg, "%s", err.msg);
        return NULL;
    }
    fill(w->x, N, 10u + (unsigned)w->id);
    for (int round = 0; round < 20; round++) {
        int64_t b = (round + w->id) % 2 ? 1 : 1 + (round % MAXB), s = 1 + (round * 5 + w->id) % 6;
        if (run(c, b, s, w->x, w->y, &err) || !matches(w->x, w->y, b, s)) {
            w->bad++;
            snprintf(w->msg, sizeof w->msg, "round %d B=%lld S=%lld: %.400s", round, (long long)b, (long long)s,
                     err.msg);
        }
    }
    symrt_context_destroy(c);
    return NULL;
}

static void test_threads(symrt_engine *h) {
    static worker w[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (worker){.h = h, .id = i};
        CHECK(pthread_create(&th[i], NULL, work, &w[i]) == 0);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        CHECK_MSG(w[i].bad == 0, "thread %d: %s", i, w[i].msg);
    }
}

/* ---- one graph: as before ----------------------------------------------------- */

static void test_one_graph(const fixture *f) {
    symc_error err;
    symrt_engine *h = NULL;
    CHECK(rt_engine_handle(f->g[1], &h, &err) == SYMC_OK);
    if (!h) return;
    CHECK(symrt_engine_num_regions(h) == 0);
    symrt_region_info ri;
    CHECK(symrt_engine_region(h, 0, &ri, &err) == SYMC_ERR_INVALID_ARG);
    char buf[64];
    CHECK(symrt_engine_input_dim(h, 0, 0, buf, sizeof buf, &err) == SYMC_OK && !strcmp(buf, "B"));
    symrt_context *c = NULL;
    CHECK(symrt_context_create(h, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK);
    int32_t r = 7;
    CHECK(symrt_context_region(c, &r, &err) == SYMC_OK && r == -1); /* no shape needed */
    CHECK_MSG(run(c, 3, 5, X, Y, &err) == SYMC_OK, "%s", err.msg);
    CHECK(matches(X, Y, 3, 5));
    CHECK(symrt_context_region(c, &r, &err) == SYMC_OK && r == -1);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){1, 2, D}, 3, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "symbol B must be in [2, 4]");
    symrt_context_destroy(c);
    symrt_engine_destroy(h);
}

int main(void) {
    fixture f;
    if (!make_fixture(&f)) {
        free_fixture(&f);
        return check_report("runtime.regions");
    }
    symc_error err;
    symrt_engine *h = NULL;
    CHECK_MSG(rt_engine_handle(&f.root, &h, &err) == SYMC_OK, "%s", err.msg);
    if (h) {
        test_queries(h);
        test_pick(h);
        test_errors(h);
        test_threads(h);
        symrt_engine_destroy(h);
    }
    /* the dim text where no input pins B in region 0: read from nowhere, B is not known to be 1 there, and each
     * region's form is listed */
    uint32_t n_sources = f.root.n_sources;
    f.root.n_sources = 0;
    h = NULL;
    CHECK_MSG(rt_engine_handle(&f.root, &h, &err) == SYMC_OK, "%s", err.msg);
    if (h) {
        char buf[128];
        CHECK(symrt_engine_input_dim(h, 0, 0, buf, sizeof buf, &err) == SYMC_OK);
        CHECK_MSG(!strcmp(buf, "1 in region 0, B in region 1"), "'%s'", buf);
        symrt_engine_destroy(h);
    }
    f.root.n_sources = n_sources;
    test_one_graph(&f);
    free_fixture(&f);
    return check_report("runtime.regions");
}
