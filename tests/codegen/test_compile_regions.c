/* The compile driver for engines of several graphs (symc_compile_regions,
 * codegen/compile.c and codegen/build_regions.c), on reference engines
 * (gpu = 0: no GPU, no NVRTC). Modules are built with the C builder API over
 * the same input x, and the engine is read back with rt_engine_decode (the
 * root's constants, symbols and regions) and run with symrt on the reference
 * backend. What it checks:
 *  - a region where x's dim 0 is the constant 1 and one where it is B in
 *    [2, 32], with the same weight w: the engine holds w once (root constant
 *    count and bytes), the root symbol B is the hull [1, 32], the regions are
 *    named "B == 1" and "2 <= B <= 32", and each region's results equal its
 *    module's own engine at B = 1, 2, 7, 32 (and back to 1);
 *  - a gap ([1, 1] and [3, 32]) is a build error naming B = 2 and the
 *    regions; a condition text that does not parse names the column; an
 *    unknown symbol names the module's symbols; a missing relation says so;
 *  - condition texts over the same S range ("S <= 64", "S > 64") build and
 *    run the right module on each side; "S <= 64" / "S > 65" leaves S = 65;
 *  - regions that overlap build, and the progress callback says so;
 *  - relations beyond a box ("S % 8 == 0", "S <= T"), symbols named
 *    differently in each module (matched by input dim), and a hull too large
 *    to enumerate where the samples still find the gap S == T;
 *  - n == 1 without a condition writes the bytes symc_module_compile writes;
 *  - with GPU code (NVRTC for sm_90, no GPU needed) each region has its own
 *    kernels and steps for the root's sm, and the weight is still once;
 *  - refusals: NULL, n == 0, a module twice, inputs or outputs differing
 *    (naming the input and both regions), multiple_of differing;
 *  - the batch-row verdict the root holds (symrt_engine_batch_rows): not
 *    proved when the regions are chosen by the batch size, independent when
 *    they are chosen by another dim and each is proved, not proved (naming the
 *    region) when one region mixes rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "symc/symc.h"
#include "symc/symrt.h"
#include "tests/check.h"

static const float W[4] = {0.5f, -2.0f, 3.0f, 0.25f};

/* y = relu(x) * w (+ 1 when plus_one) over x: [dim0, 4]; dim0 the constant 1
 * when lo == hi == 1 and fixed, else the symbol B in [lo, hi] */
static symc_module *relu_mul(const char *name, int fixed, int64_t lo, int64_t opt, int64_t hi, int plus_one) {
    symc_error err;
    symc_module *m = symc_module_create(name, &err);
    symc_dim b = SYMC_DIM_NONE;
    if (fixed) b = symc_dim_const(m, lo);
    else CHECK_MSG(symc_declare_symbol(m, "B", lo, opt, hi, 1, &b, &err) == SYMC_OK, "%s", err.msg);
    symc_dim dims[] = {b, symc_dim_const(m, 4)};
    symc_tensor x, w, r, y;
    int64_t wd[] = {4};
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "w", SYMC_F32, 1, wd, W, sizeof W, &w, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "act", &x, 1, NULL, 0, &r, 1, &err) == SYMC_OK);
    symc_tensor mi[] = {r, w};
    CHECK(symc_add_node(m, "mul", plus_one ? "scale" : "y", mi, 2, NULL, 0, &y, 1, &err) == SYMC_OK);
    if (plus_one) {
        float one = 1.0f;
        int64_t od[] = {1};
        symc_tensor o, z;
        CHECK(symc_add_constant(m, "one", SYMC_F32, 1, od, &one, sizeof one, &o, &err) == SYMC_OK);
        symc_tensor ai[] = {y, o};
        CHECK(symc_add_node(m, "add", "y", ai, 2, NULL, 0, &z, 1, &err) == SYMC_OK);
        y = z;
    }
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    return m;
}

/* y = relu(x) (+ 1) over x: [S], S in [lo, hi] multiple of mult, named sym */
static symc_module *over_named(const char *name, const char *sym, int64_t lo, int64_t hi, int64_t mult, int plus_one) {
    symc_error err;
    symc_module *m = symc_module_create(name, &err);
    symc_dim s = SYMC_DIM_NONE;
    CHECK_MSG(symc_declare_symbol(m, sym, lo, lo, hi, mult, &s, &err) == SYMC_OK, "%s", err.msg);
    symc_tensor x, y;
    CHECK(symc_add_input(m, "x", SYMC_F32, 1, &s, &x, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", plus_one ? "act" : "y", &x, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    if (plus_one) {
        float one = 1.0f;
        int64_t od[] = {1};
        symc_tensor o, z;
        CHECK(symc_add_constant(m, "one", SYMC_F32, 1, od, &one, sizeof one, &o, &err) == SYMC_OK);
        symc_tensor ai[] = {y, o};
        CHECK(symc_add_node(m, "add", "y", ai, 2, NULL, 0, &z, 1, &err) == SYMC_OK);
        y = z;
    }
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    return m;
}

static symc_module *over_s(const char *name, int64_t lo, int64_t hi, int64_t mult, int plus_one) {
    return over_named(name, "S", lo, hi, mult, plus_one);
}

/* y = relu(x) (+ 1) over x: [S, T], both in [1, max] */
static symc_module *over_st(const char *name, int64_t max, int plus_one) {
    symc_error err;
    symc_module *m = symc_module_create(name, &err);
    symc_dim d[2] = {SYMC_DIM_NONE, SYMC_DIM_NONE};
    CHECK(symc_declare_symbol(m, "S", 1, 8, max, 1, &d[0], &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "T", 1, 8, max, 1, &d[1], &err) == SYMC_OK);
    symc_tensor x, y;
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", plus_one ? "act" : "y", &x, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    if (plus_one) {
        float one = 1.0f;
        int64_t od[] = {1};
        symc_tensor o, z;
        CHECK(symc_add_constant(m, "one", SYMC_F32, 1, od, &one, sizeof one, &o, &err) == SYMC_OK);
        symc_tensor ai[] = {y, o};
        CHECK(symc_add_node(m, "add", "y", ai, 2, NULL, 0, &z, 1, &err) == SYMC_OK);
        y = z;
    }
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    return m;
}

static symc_compile_options ref_options(void) {
    symc_compile_options o;
    symc_compile_options_init(&o);
    o.gpu = 0;
    return o;
}

/* Runs engine `path` on the reference backend with x of shape dims (rank 1
 * or 2), seeded values; y gets the output (room for n floats), *region the
 * region that ran (-1 for an engine of one graph). 0 on failure (reported). */
static int run_in(const char *path, const int64_t *dims, int32_t rank, float *y, size_t n, int32_t *region) {
    symc_error err;
    symrt_engine *e = NULL;
    symrt_context *c = NULL;
    size_t nx = 1;
    for (int32_t d = 0; d < rank; d++) nx *= (size_t)dims[d];
    float *x = malloc(nx * sizeof *x);
    for (size_t i = 0; i < nx; i++) x[i] = (float)((int)(i * 7 % 11) - 5) * 0.5f;
    int ok = symrt_engine_load_file(path, &e, &err) == SYMC_OK;
    CHECK_MSG(ok, "loading %s: %s", path, err.msg);
    ok = ok && symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK;
    ok = ok && symrt_set_input_shape(c, "x", dims, rank, &err) == SYMC_OK;
    int64_t od[8];
    int32_t orank = 0;
    const char *out = NULL;
    symrt_io_info info;
    ok = ok && symrt_engine_output(e, 0, &info, &err) == SYMC_OK && (out = info.name);
    ok = ok && symrt_get_tensor_shape(c, out, od, &orank, &err) == SYMC_OK;
    ok = ok && symrt_set_tensor_address(c, "x", x, nx * sizeof *x, &err) == SYMC_OK;
    ok = ok && symrt_set_tensor_address(c, out, y, n * sizeof *y, &err) == SYMC_OK;
    ok = ok && symrt_enqueue(c, NULL, &err) == SYMC_OK;
    ok = ok && symrt_context_region(c, region, &err) == SYMC_OK;
    CHECK_MSG(ok, "running %s: %s", path, err.msg);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
    free(x);
    return ok;
}

static int run(const char *path, const int64_t *dims, int32_t rank, float *y, size_t n) {
    int32_t region;
    return run_in(path, dims, rank, y, n, &region);
}

static rt_engine *decode(const char *path) {
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f, "no engine at %s", path);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)size + 1);
    size_t got = fread(bytes, 1, (size_t)size, f);
    fclose(f);
    rt_engine *e = NULL;
    symc_error err;
    CHECK_MSG(got == (size_t)size && rt_engine_decode(bytes, got, &e, &err) == SYMC_OK, "decoding %s: %s", path,
              err.msg);
    free(bytes);
    return e;
}

static void test_weight_once_and_results(const char *dir) {
    char path[4096], pa[4096], pb[4096];
    snprintf(path, sizeof path, "%s/regions_ab.symx", dir);
    snprintf(pa, sizeof pa, "%s/regions_a.symx", dir);
    snprintf(pb, sizeof pb, "%s/regions_b.symx", dir);
    symc_error err;
    symc_compile_options o = ref_options();
    symc_module *a = relu_mul("a", 1, 1, 1, 1, 0), *b = relu_mul("b", 0, 2, 8, 32, 1);
    symc_region r[] = {{a, NULL}, {b, ""}};
    remove(path);
    CHECK_MSG(symc_compile_regions(r, 2, &o, path, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(a);
    symc_module_destroy(b);
    a = relu_mul("a", 1, 1, 1, 1, 0);
    b = relu_mul("b", 0, 2, 8, 32, 1);
    CHECK_MSG(symc_module_compile(a, &o, pa, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_module_compile(b, &o, pb, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(a);
    symc_module_destroy(b);

    rt_engine *e = decode(path);
    if (e) {
        CHECK_MSG(e->n_regions == 2, "%u regions", e->n_regions);
        /* w (16 bytes) once, "one" (4 bytes) once; each graph has a constant node a constant */
        size_t bytes = 0;
        for (uint32_t i = 0; i < e->n_constants; i++) bytes += e->constants[i].size;
        CHECK_MSG(e->n_constants == 2 && bytes == 20, "%u constants, %zu bytes", e->n_constants, bytes);
        CHECK_MSG(e->n_symbols == 1 && !strcmp(e->symbols[0].name, "B") && e->symbols[0].min == 1 &&
                      e->symbols[0].max == 32 && e->symbols[0].opt == 8,
                  "root symbols %u", e->n_symbols);
        CHECK(e->n_sources == 1 && e->sources[0].input == 0 && e->sources[0].dim == 0);
        CHECK(e->n_tensors == 0 && e->n_nodes == 0 && e->n_steps == 0);
        if (e->n_regions == 2) {
            CHECK_MSG(!strcmp(e->regions[0].name, "B == 1"), "'%s'", e->regions[0].name);
            CHECK_MSG(!strcmp(e->regions[1].name, "2 <= B <= 32"), "'%s'", e->regions[1].name);
            CHECK(e->regions[0].n_symbols == 0 && e->regions[1].n_symbols == 1 && e->regions[1].symbols[0] == 0);
            CHECK_MSG(e->regions[0].graph.n_nodes == 3 && e->regions[1].graph.n_nodes == 5, "%u and %u nodes",
                      e->regions[0].graph.n_nodes, e->regions[1].graph.n_nodes);
            for (uint32_t g = 0; g < 2; g++) { /* every graph's w is the root's one copy */
                const rt_engine *gr = &e->regions[g].graph;
                for (uint32_t t = 0; t < gr->n_tensors; t++)
                    if (!strcmp(gr->tensors[t].name, "w")) CHECK(gr->tensors[t].constant < e->n_constants);
            }
        }
        rt_engine_free(e);
    }
    /* each region runs its module: relu(x)*w at B == 1, relu(x)*w + 1 elsewhere */
    int64_t bs[] = {1, 2, 7, 32, 1};
    for (size_t k = 0; k < sizeof bs / sizeof *bs; k++) {
        int64_t dims[] = {bs[k], 4};
        size_t n = (size_t)bs[k] * 4;
        float *got = calloc(n, sizeof *got), *want = calloc(n, sizeof *want);
        int32_t region = -2;
        if (run_in(path, dims, 2, got, n, &region) && run(bs[k] == 1 ? pa : pb, dims, 2, want, n)) {
            CHECK_MSG(!memcmp(got, want, n * sizeof *got), "B = %lld: results differ from the module's own engine",
                      (long long)bs[k]);
            CHECK_MSG(region == (bs[k] == 1 ? 0 : 1), "B = %lld ran in region %d", (long long)bs[k], (int)region);
        }
        free(got);
        free(want);
    }
}

static void test_gap_and_parse_errors(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/regions_bad.symx", dir);
    symc_error err;
    symc_compile_options o = ref_options();
    /* [1, 1] and [3, 32]: B = 2 is in none */
    symc_module *a = relu_mul("a", 1, 1, 1, 1, 0), *c = relu_mul("c", 0, 3, 8, 32, 1);
    symc_region r[] = {{a, NULL}, {c, NULL}};
    remove(path);
    CHECK(symc_compile_regions(r, 2, &o, path, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "B = 2 is in no region");
    CHECK_CONTAINS(err.msg, "region 0 'B == 1'");
    CHECK_CONTAINS(err.msg, "region 1 '3 <= B <= 32'");
    FILE *f = fopen(path, "rb");
    CHECK(!f);
    if (f) fclose(f);
    symc_module_destroy(a);
    symc_module_destroy(c);

    /* a condition that does not parse: the column in the whole text */
    const struct {
        const char *cond, *want, *want2;
        symc_status st;
    } bad[] = {
        {"S <= 6#4", "column 7", "unexpected text", SYMC_ERR_FORMAT},
        {"S >= 1 and T <= 64", "column 12", "unknown symbol", SYMC_ERR_INVALID_ARG},
        {"S >= 1 and T <= 64", "symbols: S", "module 'p'", SYMC_ERR_INVALID_ARG},
        {"S 64", "column 1", "expected a relation", SYMC_ERR_FORMAT},
        {"S <= ", "column 6", "unexpected end", SYMC_ERR_FORMAT},
        {"S <= 64 and", "column 9", "unexpected text", SYMC_ERR_FORMAT},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        symc_module *p = over_s("p", 1, 128, 1, 0), *q = over_s("q", 1, 128, 1, 1);
        symc_region rr[] = {{p, bad[k].cond}, {q, NULL}};
        symc_status st = symc_compile_regions(rr, 2, &o, path, &err);
        CHECK_MSG(st == bad[k].st, "'%s': status %d: %s", bad[k].cond, (int)st, err.msg);
        CHECK_CONTAINS(err.msg, bad[k].want);
        CHECK_CONTAINS(err.msg, bad[k].want2);
        CHECK_CONTAINS(err.msg, "region 0");
        symc_module_destroy(p);
        symc_module_destroy(q);
    }
}

typedef struct said {
    char text[4096];
} said;

static void on_progress(void *ctx, const char *msg) {
    said *s = ctx;
    size_t n = strlen(s->text);
    snprintf(s->text + n, sizeof s->text - n, "%s;", msg);
}

static void test_condition_text(const char *dir) {
    char path[4096], pp[4096], pq[4096];
    snprintf(path, sizeof path, "%s/regions_pq.symx", dir);
    snprintf(pp, sizeof pp, "%s/regions_p.symx", dir);
    snprintf(pq, sizeof pq, "%s/regions_q.symx", dir);
    symc_error err;
    symc_compile_options o = ref_options();
    symc_module *p = over_s("p", 1, 128, 1, 0), *q = over_s("q", 1, 128, 1, 1);
    symc_region r[] = {{p, "S <= 64"}, {q, "S > 64"}};
    remove(path);
    CHECK_MSG(symc_compile_regions(r, 2, &o, path, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(p);
    symc_module_destroy(q);
    p = over_s("p", 1, 128, 1, 0);
    q = over_s("q", 1, 128, 1, 1);
    CHECK_MSG(symc_module_compile(p, &o, pp, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symc_module_compile(q, &o, pq, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(p);
    symc_module_destroy(q);
    rt_engine *e = decode(path);
    if (e) {
        CHECK(e->n_regions == 2);
        if (e->n_regions == 2) {
            CHECK_MSG(!strcmp(e->regions[0].name, "S <= 64"), "'%s'", e->regions[0].name);
            CHECK_MSG(!strcmp(e->regions[1].name, "S > 64"), "'%s'", e->regions[1].name);
            CHECK(e->regions[0].n_cond == 1 && e->regions[1].n_cond == 1);
        }
        rt_engine_free(e);
    }
    int64_t ss[] = {1, 64, 65, 128, 10};
    for (size_t k = 0; k < sizeof ss / sizeof *ss; k++) {
        size_t n = (size_t)ss[k];
        float *got = calloc(n, sizeof *got), *want = calloc(n, sizeof *want);
        int32_t region = -2;
        if (run_in(path, &ss[k], 1, got, n, &region) && run(ss[k] <= 64 ? pp : pq, &ss[k], 1, want, n)) {
            CHECK_MSG(!memcmp(got, want, n * sizeof *got), "S = %lld: results differ from the module's own engine",
                      (long long)ss[k]);
            CHECK_MSG(region == (ss[k] <= 64 ? 0 : 1), "S = %lld ran in region %d", (long long)ss[k], (int)region);
        }
        free(got);
        free(want);
    }

    /* S = 65 in neither */
    p = over_s("p", 1, 128, 1, 0);
    q = over_s("q", 1, 128, 1, 1);
    symc_region g[] = {{p, "S <= 64"}, {q, "S > 65"}};
    CHECK(symc_compile_regions(g, 2, &o, path, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "S = 65 is in no region");
    CHECK_CONTAINS(err.msg, "region 1 'S > 65'");
    symc_module_destroy(p);
    symc_module_destroy(q);

    /* overlapping regions build; the progress says which points run the first */
    said s = {{0}};
    o.progress = on_progress;
    o.ctx = &s;
    p = over_s("p", 1, 128, 1, 0);
    q = over_s("q", 1, 128, 1, 1);
    symc_region ov[] = {{p, "S <= 100"}, {q, "S >= 50"}};
    CHECK_MSG(symc_compile_regions(ov, 2, &o, path, &err) == SYMC_OK, "%s", err.msg);
    CHECK_CONTAINS(s.text, "51 of 128 points");
    CHECK_CONTAINS(s.text, "more than one region");
    CHECK_CONTAINS(s.text, "S = 50: regions 0 and 1");
    symc_module_destroy(p);
    symc_module_destroy(q);
}

/* Relations beyond a box: symbols named differently in each module (matched
 * by input dim), "%", and two symbols whose hull (1024 x 1024) is too large
 * to enumerate, where the samples (corners, ends, opt) find the gap S == T. */
static void test_relations(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/regions_rel.symx", dir);
    symc_error err;
    symc_compile_options o = ref_options();
    const struct {
        int two;             /* over [S, T] rather than [S] */
        const char *c0, *c1; /* conditions of region 0 and 1 */
        int64_t at[2];       /* a point */
        int32_t region;      /* that runs in this region */
        const char *name1;   /* region 1's name (as sym_print writes it) */
        const char *gap;     /* or: the build fails naming this point */
    } cases[] = {
        {0, "S % 8 == 0", "seq % 8 != 0", {16, 0}, 0, "S%8 != 0", NULL},
        {0, "S % 8 == 0", "seq % 8 != 0", {17, 0}, 1, "S%8 != 0", NULL},
        {0, "S >= 100", "seq < 100", {99, 0}, 1, "S < 100", NULL},
        {1, "S <= T", "S > T", {3, 5}, 0, "S > T", NULL},
        {1, "S <= T", "S > T", {7, 2}, 1, "S > T", NULL},
        {1, "S < T", "S > T", {0, 0}, 0, NULL, "S = 1, T = 1 is in no region"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        symc_module *p = cases[k].two ? over_st("p", 1024, 0) : over_s("p", 1, 128, 1, 0);
        symc_module *q = cases[k].two ? over_st("q", 1024, 1) : over_named("q", "seq", 1, 128, 1, 1);
        symc_region r[] = {{p, cases[k].c0}, {q, cases[k].c1}};
        remove(path);
        symc_status st = symc_compile_regions(r, 2, &o, path, &err);
        symc_module_destroy(p);
        symc_module_destroy(q);
        if (cases[k].gap) {
            CHECK_MSG(st == SYMC_ERR_RANGE, "'%s' / '%s': %s", cases[k].c0, cases[k].c1, err.msg);
            CHECK_CONTAINS(err.msg, cases[k].gap);
            continue;
        }
        CHECK_MSG(st == SYMC_OK, "'%s' / '%s': %s", cases[k].c0, cases[k].c1, err.msg);
        rt_engine *e = decode(path);
        if (e && e->n_regions == 2) CHECK_MSG(!strcmp(e->regions[1].name, cases[k].name1), "'%s'", e->regions[1].name);
        if (e) rt_engine_free(e);
        size_t n = (size_t)cases[k].at[0] * (size_t)(cases[k].two ? cases[k].at[1] : 1);
        float *y = calloc(n, sizeof *y);
        int32_t region = -2;
        if (run_in(path, cases[k].at, cases[k].two ? 2 : 1, y, n, &region))
            CHECK_MSG(region == cases[k].region, "'%s' / '%s' at %lld: region %d", cases[k].c0, cases[k].c1,
                      (long long)cases[k].at[0], (int)region);
        free(y);
    }
}

static int same_file(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static void test_one_region(const char *dir) {
    char p1[4096], p2[4096];
    snprintf(p1, sizeof p1, "%s/one_module.symx", dir);
    snprintf(p2, sizeof p2, "%s/one_region.symx", dir);
    symc_error err;
    symc_compile_options o = ref_options();
    const char *conds[] = {NULL, ""};
    for (int k = 0; k < 2; k++) {
        symc_module *m = relu_mul("b", 0, 2, 8, 32, 1), *n = relu_mul("b", 0, 2, 8, 32, 1);
        remove(p1);
        remove(p2);
        CHECK_MSG(symc_module_compile(m, &o, p1, &err) == SYMC_OK, "%s", err.msg);
        symc_region r = {n, conds[k]};
        CHECK_MSG(symc_compile_regions(&r, 1, &o, p2, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(same_file(p1, p2), "n == 1 (condition %s): not the bytes of symc_module_compile",
                  conds[k] ? "\"\"" : "NULL");
        symc_module_destroy(m);
        symc_module_destroy(n);
    }
}

static void test_refusals(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/regions_refused.symx", dir);
    symc_error err;
    symc_compile_options o = ref_options();
    symc_module *a = relu_mul("a", 1, 1, 1, 1, 0), *b = relu_mul("b", 0, 2, 8, 32, 1);
    symc_region r[] = {{a, NULL}, {b, NULL}};
    CHECK(symc_compile_regions(NULL, 2, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(symc_compile_regions(r, 0, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "no region");
    CHECK(symc_compile_regions(r, 2, &o, NULL, &err) == SYMC_ERR_INVALID_ARG);
    symc_region nul[] = {{a, NULL}, {NULL, NULL}};
    CHECK(symc_compile_regions(nul, 2, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "region 1");
    symc_region twice[] = {{b, NULL}, {b, "B > 3"}};
    CHECK(symc_compile_regions(twice, 2, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "region 1 uses the module of region 0");
    symc_module_destroy(a);
    symc_module_destroy(b);

    /* inputs differing: x over [S] against x over [B, 4] */
    a = relu_mul("a", 1, 1, 1, 1, 0);
    symc_module *p = over_s("p", 1, 128, 1, 0);
    symc_region io[] = {{a, NULL}, {p, NULL}};
    CHECK(symc_compile_regions(io, 2, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 0 'x'");
    CHECK_CONTAINS(err.msg, "region 1 (module 'p')");
    CHECK_CONTAINS(err.msg, "region 0 (module 'a')");
    CHECK_CONTAINS(err.msg, "rank");
    symc_module_destroy(a);
    symc_module_destroy(p);

    /* multiple_of differing for the same input dim */
    p = over_s("p", 2, 64, 2, 0);
    symc_module *q = over_s("q", 65, 128, 1, 1);
    symc_region mu[] = {{p, NULL}, {q, NULL}};
    CHECK(symc_compile_regions(mu, 2, &o, path, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "multiple");
    CHECK_CONTAINS(err.msg, "input 'x' dim 0");
    symc_module_destroy(p);
    symc_module_destroy(q);
}

/* With GPU code (NVRTC, no GPU needed): each region its own kernels and
 * steps for the same sm, the weight still once; the loader's checks pass. */
static void test_gpu_code(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/regions_gpu.symx", dir);
    symc_error err;
    symc_compile_options o = ref_options();
    o.gpu = 1;
    o.arch = "sm_90";
    symc_module *a = relu_mul("a", 1, 1, 1, 1, 0), *b = relu_mul("b", 0, 2, 8, 32, 1);
    symc_region r[] = {{a, NULL}, {b, NULL}};
    CHECK_MSG(symc_compile_regions(r, 2, &o, path, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(a);
    symc_module_destroy(b);
    rt_engine *e = decode(path);
    if (!e) return;
    CHECK_MSG(e->sm == 90 && e->n_regions == 2 && e->n_constants == 2, "sm %u, %u regions, %u constants", e->sm,
              e->n_regions, e->n_constants);
    for (uint32_t g = 0; g < e->n_regions; g++) {
        const rt_engine *gr = &e->regions[g].graph;
        CHECK_MSG(gr->sm == 90 && gr->n_steps >= 1 && gr->n_kernels >= 1 && gr->n_modules >= 1,
                  "region %u: sm %u, %u steps, %u kernels", g, gr->sm, gr->n_steps, gr->n_kernels);
    }
    rt_engine_free(e);
}

/* The engine's batch-row verdict (symrt_engine_batch_rows) and, when want_sym, its batch symbol's name. */
static void verdict_is(const char *path, symrt_batch_rows want, const char *want_sym, const char *why_has,
                       const char *what) {
    symc_error err;
    symrt_engine *e = NULL;
    symrt_batch_rows state = SYMRT_BATCH_ROWS_UNKNOWN;
    uint32_t sym = 0;
    char why[512] = "";
    symrt_symbol_info si = {0};
    CHECK_MSG(symrt_engine_load_file(path, &e, &err) == SYMC_OK &&
                  symrt_engine_batch_rows(e, &state, &sym, why, sizeof why, &err) == SYMC_OK,
              "%s: %s", what, err.msg);
    if (sym != UINT32_MAX) symrt_engine_symbol(e, sym, &si, &err);
    CHECK_MSG(state == want && (want_sym ? si.name && !strcmp(si.name, want_sym) : sym == UINT32_MAX) &&
                  strstr(why, why_has) != NULL,
              "%s: state %d (want %d), symbol %s (want %s), '%s' (want '%s' in it)", what, (int)state, (int)want,
              si.name ? si.name : "none", want_sym ? want_sym : "none", why, why_has);
    symrt_engine_destroy(e);
}

/* y = relu(x), or a softmax of x over S (the batch axis: it mixes rows), over x: [S, T] in [1, 64] */
static symc_module *st_rows(const char *name, int mix) {
    if (!mix) return over_st(name, 64, 0);
    symc_error err;
    symc_module *m = symc_module_create(name, &err);
    symc_dim d[2] = {SYMC_DIM_NONE, SYMC_DIM_NONE};
    CHECK(symc_declare_symbol(m, "S", 1, 8, 64, 1, &d[0], &err) == SYMC_OK);
    CHECK(symc_declare_symbol(m, "T", 1, 8, 64, 1, &d[1], &err) == SYMC_OK);
    symc_tensor x, y;
    symc_attr axis = symc_attr_int("axis", 0);
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, d, &x, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "softmax", "y", &x, 1, &axis, 1, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    return m;
}

/* The root's verdict over every region: regions chosen by the batch size (B == 1 and 2 <= B <= 32)
 * are not proved even though each graph is (a joined batch may run the other graph), and each
 * one-graph engine carries its own (B fixed to 1: no batch axis); regions chosen by T alone, each
 * proved over S, are independent over S; one region that mixes rows (softmax over S) makes the
 * root not proved, naming that region and its node. */
static void test_batch_rows(const char *dir) {
    char path[4096], pa[4096], pb[4096];
    snprintf(path, sizeof path, "%s/regions_ab.symx", dir);
    snprintf(pa, sizeof pa, "%s/regions_a.symx", dir);
    snprintf(pb, sizeof pb, "%s/regions_b.symx", dir);
    verdict_is(path, SYMRT_BATCH_ROWS_BATCHED, "B",
               "the engine's regions are chosen by the batch size B (region 0 'B == 1'): a batch joined from "
               "requests may run another region's graph than each request alone",
               "regions on B");
    verdict_is(pa, SYMRT_BATCH_ROWS_NONE, NULL, "input 'x' has no symbol at dim 0", "B fixed to 1");
    verdict_is(pb, SYMRT_BATCH_ROWS_INDEPENDENT, "B", "", "B in [2, 32]");
    symc_error err;
    symc_compile_options o = ref_options();
    snprintf(path, sizeof path, "%s/regions_rows.symx", dir);
    for (int mix = 0; mix < 2; mix++) {
        symc_module *p = st_rows("p", 0), *q = st_rows("q", mix);
        symc_region r[] = {{p, "T <= 8"}, {q, "T > 8"}};
        remove(path);
        CHECK_MSG(symc_compile_regions(r, 2, &o, path, &err) == SYMC_OK, "%s", err.msg);
        symc_module_destroy(p);
        symc_module_destroy(q);
        if (!mix) verdict_is(path, SYMRT_BATCH_ROWS_INDEPENDENT, "S", "", "regions on T");
        else
            verdict_is(path, SYMRT_BATCH_ROWS_BATCHED, "S",
                       "region 1 ('T > 8'): output 'y' depends on node 'y' (softmax", "a region mixing rows");
    }
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    test_refusals(dir);
    test_gap_and_parse_errors(dir);
    test_one_region(dir);
    test_condition_text(dir);
    test_relations(dir);
    test_weight_once_and_results(dir);
    test_batch_rows(dir); /* on test_weight_once_and_results' engines */
    test_gpu_code(dir);
    return check_report("test_compile_regions");
}
