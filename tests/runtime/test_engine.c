/* The engine and the symrt API on the reference backend: a model built with
 * the builder, compiled to engine bytes, loaded and run at min, max and
 * in-between sizes against plain C loops; broadcasting of dims that may be 1
 * resolved at run time (no specialization); every API refusal with its
 * message; and corrupt engines (every truncation, bit flips, wrong identifier,
 * a .symir given as an engine) refused without crashing; library steps with
 * several tuned entries round-tripped, their bit flips refused, and engines
 * of another format version refused with a message. Format 7 (sizes known only after a node
 * runs): a literal engine round-tripped byte for byte and field for field, every loader check of
 * its produced sizes, capacity program and guard order refused on a mutated copy, the codec's
 * table of producing ops checked against ir_produced_dim on every op, regions with produced sizes
 * refused, the CUDA backend's refusal at context creation, and a format-5 engine unchanged. The
 * batch-row verdict: read back through symrt_engine_batch_rows, UNKNOWN for an engine without the
 * field (as built before it), round-tripped, and its malformed forms refused. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir.h"
#include "passes/passes.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "tests/check.h"

/* y = relu(x + b) reshaped to (B, 2, 2); z = x + w where w is [C, 4] */
static uint8_t *build(size_t *size) {
    symc_error err;
    symc_module *m = symc_module_create("small", &err);
    symc_dim B, C;
    symc_declare_symbol(m, "B", 1, 3, 8, 1, &B, &err);
    symc_declare_symbol(m, "C", 1, 3, 8, 1, &C, &err);
    symc_dim four = symc_dim_const(m, 4), two = symc_dim_const(m, 2);
    symc_tensor x, w, b, s, y, z, r;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, four}, &x, &err);
    symc_add_input(m, "w", SYMC_F32, 2, (symc_dim[]){C, four}, &w, &err);
    float bias[4] = {0.5f, -0.5f, 1.0f, -1.0f};
    symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){4}, bias, sizeof bias, &b, &err);
    symc_add_node(m, "add", "s", (symc_tensor[]){x, b}, 2, NULL, 0, &s, 1, &err);
    symc_add_node(m, "relu", "y", &s, 1, NULL, 0, &y, 1, &err);
    symc_attr ra = symc_attr_dims("shape", (symc_dim[]){B, two, SYMC_DIM_NONE}, 3);
    symc_add_node(m, "reshape", "r", &y, 1, &ra, 1, &r, 1, &err);
    symc_add_node(m, "add", "z", (symc_tensor[]){x, w}, 2, NULL, 0, &z, 1, &err);
    symc_mark_output(m, r, &err);
    symc_mark_output(m, z, &err);
    uint8_t *bytes = NULL;
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(cg_build_engine(m, NULL, &bytes, size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    return bytes;
}

static void fill(float *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (float)((seed >> 16) % 2001) / 1000.0f - 1.0f;
    }
}

/* One run at (Bv, Cv), checked against loops. Returns the enqueue status. */
static symc_status run_at(symrt_engine *e, int64_t Bv, int64_t Cv, symc_error *err) {
    symrt_context *c;
    CHECK(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, err) == SYMC_OK);
    float x[8 * 4], w[8 * 4], r[8 * 4], z[8 * 4];
    fill(x, (size_t)Bv * 4, 1);
    fill(w, (size_t)Cv * 4, 2);
    memset(r, 0xff, sizeof r); /* poison */
    memset(z, 0xff, sizeof z);
    symc_status st = symrt_set_input_shape(c, "x", (int64_t[]){Bv, 4}, 2, err);
    if (!st) st = symrt_set_input_shape(c, "w", (int64_t[]){Cv, 4}, 2, err);
    int64_t dims[8];
    int32_t rank;
    if (!st) st = symrt_get_tensor_shape(c, "z", dims, &rank, err);
    if (!st) {
        int64_t rows = Bv > Cv ? Bv : Cv;
        CHECK(rank == 2 && dims[0] == rows && dims[1] == 4);
        symrt_set_tensor_address(c, "x", x, (size_t)Bv * 16, err);
        symrt_set_tensor_address(c, "w", w, (size_t)Cv * 16, err);
        symrt_set_tensor_address(c, "r", r, sizeof r, err);
        symrt_set_tensor_address(c, "z", z, sizeof z, err);
        st = symrt_enqueue(c, NULL, err);
        if (!st) {
            static const float bias[4] = {0.5f, -0.5f, 1.0f, -1.0f};
            for (int64_t i = 0; i < Bv * 4; i++) {
                float want = x[i] + bias[i % 4] > 0 ? x[i] + bias[i % 4] : 0;
                CHECK_MSG(r[i] == want, "r[%lld] = %g, want %g at B=%lld", (long long)i, r[i], want, (long long)Bv);
            }
            for (int64_t i = 0; i < rows; i++)
                for (int j = 0; j < 4; j++) {
                    float want = x[(Bv == 1 ? 0 : i) * 4 + j] + w[(Cv == 1 ? 0 : i) * 4 + j];
                    CHECK_MSG(z[i * 4 + j] == want, "z at B=%lld C=%lld", (long long)Bv, (long long)Cv);
                }
            CHECK(symrt_get_tensor_shape(c, "r", dims, &rank, err) == SYMC_OK && rank == 3 && dims[0] == Bv &&
                  dims[1] == 2 && dims[2] == 2);
        }
    }
    symrt_context_destroy(c);
    return st;
}

/* A kernel step with a TMA tensor map (format 8): encoded as format 8 and decoded with every
 * field back, the same bytes again; refused when the file says format 7, when a map is out of
 * range, when an argument names a map the step lacks, and when the map's tensor is no argument
 * of the step. */
static void check_tmap_roundtrip(const uint8_t *bytes, size_t size) {
    symc_error err;
    rt_engine *e = NULL;
    CHECK_MSG(rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    if (!e) return;
    uint32_t ks = RT_NONE, tensor = RT_NONE;
    for (uint32_t i = 0; i < e->n_steps && ks == RT_NONE; i++)
        for (uint32_t a = 0; e->steps[i].kind == RT_STEP_KERNEL && a < e->steps[i].n_args && ks == RT_NONE; a++)
            if (e->steps[i].args[a].kind == RT_ARG_TENSOR) ks = i, tensor = e->steps[i].args[a].value;
    CHECK(ks != RT_NONE);
    if (ks == RT_NONE) {
        rt_engine_free(e);
        return;
    }
    rt_step *steps = calloc(e->n_steps, sizeof *steps);
    memcpy(steps, e->steps, e->n_steps * sizeof *steps);
    rt_step *s = &steps[ks];
    const uint32_t n = s->n_args, w = s->work;
    rt_arg *args = calloc(n + 1, sizeof *args);
    uint8_t *writes = calloc(n + 1, 1);
    memcpy(args, s->args, n * sizeof *args);
    if (s->arg_writes) memcpy(writes, s->arg_writes, n);
    args[n] = (rt_arg){RT_ARG_TMAP, 0};
    rt_tmap map = {.tensor = tensor,
                   .offset = w,
                   .rank = 3,
                   .dims = {w, w, w},
                   .strides = {RT_NONE, w, w},
                   .box = {64, 128, 1},
                   .swizzle = 3};
    s->args = args;
    s->arg_writes = writes;
    s->n_args = n + 1;
    s->tmaps = &map;
    s->n_tmaps = 1;
    rt_engine copy = *e;
    copy.steps = steps;
    copy.owned = NULL;
    copy.format_version = 0;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t s1 = 0, s2 = 0;
    rt_engine *d = NULL;
    CHECK_MSG(rt_engine_encode(&copy, &b1, &s1, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(b1 && rt_engine_decode(b1, s1, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) {
        const rt_step *ds = &d->steps[ks];
        CHECK(d->format_version == 8 && ds->n_tmaps == 1 && ds->n_args == n + 1 && ds->args[n].kind == RT_ARG_TMAP);
        CHECK(ds->n_tmaps == 1 && !memcmp(&ds->tmaps[0], &map, sizeof map));
        for (uint32_t i = 0; i < d->n_steps; i++) CHECK(i == ks || d->steps[i].n_tmaps == 0);
        CHECK_MSG(rt_engine_encode(d, &b2, &s2, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(b2 && s2 == s1 && !memcmp(b1, b2, s1), "re-encoding changed the engine (%zu -> %zu bytes)", s1, s2);
        rt_engine_free(d);
    }
    free(b1);
    free(b2);
    /* each corruption refused with its message */
    int ran = 0;
    for (int c = 0; c < 4; c++) {
        rt_tmap bad_map = map;
        copy.format_version = c == 0 ? 7 : 0;
        if (c == 1) bad_map.box[1] = 300;
        if (c == 2) args[n].value = 1;
        if (c == 3) bad_map.tensor = tensor == 0 ? 1 : 0;
        s->tmaps = &bad_map;
        int other_arg = 0; /* case 3: the other tensor must not be an argument */
        for (uint32_t a = 0; c == 3 && a < n; a++)
            other_arg |= args[a].kind == RT_ARG_TENSOR && args[a].value == bad_map.tensor;
        if (other_arg) continue;
        ran++;
        b1 = NULL;
        d = NULL;
        CHECK_MSG(rt_engine_encode(&copy, &b1, &s1, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(b1 && rt_engine_decode(b1, s1, &d, &err) == SYMC_ERR_FORMAT && d == NULL, "case %d loaded", c);
        static const char *want[4] = {"has kernel steps with TMA tensor maps; those are format 8",
                                      "tensor map 0 is malformed: a box dim is not 1..256", "is out of range",
                                      "tensor map 0 is malformed: its tensor is not an argument of the step"};
        CHECK_CONTAINS(err.msg, want[c]);
        free(b1);
        args[n].value = 0;
    }
    CHECK_MSG(ran >= 3, "%d of the refusals ran", ran);
    free(args);
    free(writes);
    free(steps);
    rt_engine_free(e);
}

/* Library steps with several tuned entries each (what a build on a GPU
 * writes), added to the engine: encoded, decoded with every field back,
 * encoded again to the same bytes; every flipped bit refused; engines of
 * another format version refused with a message saying to rebuild. */
static void check_tuned_roundtrip(const uint8_t *bytes, size_t size) {
    symc_error err;
    rt_engine *e = NULL;
    CHECK_MSG(rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    if (!e) return;
    CHECK(e->format_version == RT_ENGINE_FORMAT_MIN && e->n_tensors >= 3 && e->sm); /* one graph: format 5 */
    for (uint32_t i = 0; i < e->n_steps; i++) CHECK(e->steps[i].n_tuned == 0 && e->steps[i].tuned == NULL);
    uint32_t n0 = e->n_steps;
    rt_step *steps = calloc(n0 + 2, sizeof *steps);
    if (n0) memcpy(steps, e->steps, n0 * sizeof *steps);
    uint8_t algos[3][RT_GEMM_ALGO_SIZE];
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < RT_GEMM_ALGO_SIZE; i++) algos[a][i] = (uint8_t)(a * 37 + i * 11 + 1);
    int32_t ids[2] = {1, 6};
    const rt_tuned gemm_t[3] = {{{1, 4096, 1024, 1}, 0.0125f, RT_GEMM_ALGO_SIZE, algos[0]},
                                {{256, 4096, 1024, 1}, 0.25f, RT_GEMM_ALGO_SIZE, algos[1]},
                                {{4096, 4096, 1024, 12}, 2.5f, RT_GEMM_ALGO_SIZE, algos[2]}};
    const rt_tuned conv_t[2] = {{{1, 224, 224, 0}, 0.0f, RT_CONV_ALGO_SIZE, (const uint8_t *)&ids[0]},
                                {{32, 512, 512, 0}, 7.0f, RT_CONV_ALGO_SIZE, (const uint8_t *)&ids[1]}};
    /* and a kernel step's grid cap (rt_step.resident), which no version number marks */
    uint32_t kstep = RT_NONE;
    for (uint32_t i = 0; i < n0 && kstep == RT_NONE; i++)
        if (steps[i].kind == RT_STEP_KERNEL) kstep = i;
    CHECK(kstep != RT_NONE);
    if (kstep != RT_NONE) steps[kstep].resident = 3;
    rt_step *g = &steps[n0], *c = &steps[n0 + 1];
    g->kind = RT_STEP_GEMM;
    g->n_tensors = 5;
    const uint32_t gt[5] = {0, 1, RT_NONE, RT_NONE, 2}, ct[5] = {0, 1, RT_NONE, 2, RT_NONE};
    memcpy(g->tensors, gt, sizeof gt);
    g->alpha = 1.0f;
    g->n_tuned = 3;
    g->tuned = gemm_t;
    c->kind = RT_STEP_CONV;
    c->n_tensors = 4;
    memcpy(c->tensors, ct, sizeof ct);
    c->epilogue = RT_EPI_RELU;
    c->n_tuned = 2;
    c->tuned = conv_t;
    rt_engine copy = *e;
    copy.steps = steps;
    copy.n_steps = n0 + 2;
    copy.owned = NULL;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t s1 = 0, s2 = 0;
    rt_engine *d = NULL;
    CHECK_MSG(rt_engine_encode(&copy, &b1, &s1, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(b1 && rt_engine_decode(b1, s1, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) {
        CHECK(d->n_steps == n0 + 2);
        const rt_step *dg = &d->steps[n0], *dc = &d->steps[n0 + 1];
        CHECK(dg->kind == RT_STEP_GEMM && dg->n_tuned == 3 && dc->kind == RT_STEP_CONV && dc->n_tuned == 2);
        for (uint32_t k = 0; k < 3 && dg->n_tuned == 3; k++) {
            CHECK(!memcmp(dg->tuned[k].at, gemm_t[k].at, sizeof gemm_t[k].at));
            CHECK(dg->tuned[k].ms == gemm_t[k].ms && dg->tuned[k].algo_size == RT_GEMM_ALGO_SIZE);
            CHECK(!memcmp(dg->tuned[k].algo, gemm_t[k].algo, RT_GEMM_ALGO_SIZE));
        }
        for (uint32_t k = 0; k < 2 && dc->n_tuned == 2; k++) {
            CHECK(!memcmp(dc->tuned[k].at, conv_t[k].at, sizeof conv_t[k].at));
            CHECK(dc->tuned[k].ms == conv_t[k].ms && dc->tuned[k].algo_size == RT_CONV_ALGO_SIZE);
            CHECK(!memcmp(dc->tuned[k].algo, conv_t[k].algo, RT_CONV_ALGO_SIZE));
        }
        for (uint32_t i = 0; i < n0; i++)
            CHECK(d->steps[i].n_tuned == 0 && d->steps[i].resident == (i == kstep ? 3u : 0u));
        CHECK(d->format_version == RT_ENGINE_FORMAT_MIN);
        CHECK_MSG(rt_engine_encode(d, &b2, &s2, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(b2 && s2 == s1 && !memcmp(b1, b2, s1), "re-encoding changed the engine (%zu -> %zu bytes)", s1, s2);
        rt_engine_free(d);
    }
    /* every flipped bit of the multi-entry engine is refused */
    int accepted = 0;
    uint8_t *flip = malloc(s1 ? s1 : 1);
    for (size_t i = 0; b1 && i < s1; i++) {
        memcpy(flip, b1, s1);
        flip[i] ^= (uint8_t)(1u << (i % 8));
        rt_engine *t = NULL;
        if (rt_engine_decode(flip, s1, &t, &err) == SYMC_OK) accepted++;
        else CHECK(t == NULL && err.msg[0]);
        rt_engine_free(t);
    }
    CHECK_MSG(accepted == 0, "%d multi-entry engines with a flipped bit loaded", accepted);
    free(flip);
    /* more entries than a step may hold: the encoder refuses */
    rt_tuned many[RT_TUNED_MAX + 1];
    for (int k = 0; k <= RT_TUNED_MAX; k++) many[k] = gemm_t[k % 3];
    g->n_tuned = RT_TUNED_MAX + 1;
    g->tuned = many;
    uint8_t *b3 = NULL;
    size_t s3 = 0;
    CHECK(rt_engine_encode(&copy, &b3, &s3, &err) == SYMC_ERR_INVALID_ARG && b3 == NULL);
    CHECK_CONTAINS(err.msg, "tuned entries");
    g->n_tuned = RT_TUNED_MAX; /* the most it may hold loads */
    CHECK_MSG(rt_engine_encode(&copy, &b3, &s3, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(b3 && rt_engine_decode(b3, s3, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) CHECK(d->steps[n0].n_tuned == RT_TUNED_MAX);
    rt_engine_free(d);
    free(b3);
    /* a grid cap past RT_RESIDENT_MAX is refused, naming the step */
    if (kstep != RT_NONE) {
        steps[kstep].resident = RT_RESIDENT_MAX + 1;
        b3 = NULL;
        d = NULL;
        CHECK_MSG(rt_engine_encode(&copy, &b3, &s3, &err) == SYMC_OK, "%s", err.msg);
        CHECK(b3 && rt_engine_decode(b3, s3, &d, &err) == SYMC_ERR_FORMAT && d == NULL);
        CHECK_CONTAINS(err.msg, "asks for a grid of 65 x the resident blocks; at most 64");
        rt_engine_free(d);
        free(b3);
        steps[kstep].resident = 0;
    }
    /* other format versions (format 2 held one choice per step): refused by number */
    static const uint32_t versions[2] = {2, RT_ENGINE_FORMAT_VERSION + 1};
    for (int v = 0; v < 2; v++) {
        copy.format_version = versions[v];
        g->n_tuned = 0;
        c->n_tuned = 0;
        b3 = NULL;
        CHECK_MSG(rt_engine_encode(&copy, &b3, &s3, &err) == SYMC_OK, "%s", err.msg);
        d = NULL;
        CHECK(b3 && rt_engine_decode(b3, s3, &d, &err) == SYMC_ERR_FORMAT && d == NULL);
        char want[64];
        snprintf(want, sizeof want, "engine format version %u", versions[v]);
        CHECK_CONTAINS(err.msg, want);
        CHECK_CONTAINS(err.msg, "rebuild the engine");
        free(b3);
    }
    free(b1);
    free(b2);
    free(steps);
    rt_engine_free(e);
}

static void refused(const rt_engine *e, const char *want, const char *what);

/* The tuned points (rt_engine.tuned_points, what symrt_context_warm runs): an engine without them
 * encodes to the bytes it had; with three points of (B, C) every value comes back and re-encodes to
 * the same bytes; a value outside its symbol's range is refused naming the point and the symbol. */
static void check_tuned_points(const uint8_t *bytes, size_t size) {
    symc_error err;
    rt_engine *e = NULL;
    CHECK_MSG(rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    if (!e) return;
    CHECK(e->n_tuned_points == 0 && e->tuned_points == NULL && e->n_symbols == 2);
    uint8_t *b0 = NULL, *b1 = NULL, *b2 = NULL;
    size_t s0 = 0, s1 = 0, s2 = 0;
    CHECK_MSG(rt_engine_encode(e, &b0, &s0, &err) == SYMC_OK, "%s", err.msg);
    CHECK(b0 && s0 == size && !memcmp(b0, bytes, size)); /* none: the bytes it had */
    int64_t pts[6] = {4, 4, 8, 1, 1, 8};
    rt_engine copy = *e;
    copy.owned = NULL;
    copy.tuned_points = pts;
    copy.n_tuned_points = 3;
    rt_engine *d = NULL;
    CHECK_MSG(rt_engine_encode(&copy, &b1, &s1, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(b1 && rt_engine_decode(b1, s1, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) {
        CHECK(d->n_tuned_points == 3 && d->tuned_points && !memcmp(d->tuned_points, pts, sizeof pts));
        CHECK_MSG(rt_engine_encode(d, &b2, &s2, &err) == SYMC_OK, "%s", err.msg);
        CHECK(b2 && s2 == s1 && !memcmp(b1, b2, s1));
        rt_engine_free(d);
    }
    pts[2] = 9; /* point 1: B = 9, above B's max 8 */
    refused(&copy, "tuned point 1 has B = 9, outside its range [1, 8]", "a tuned point out of range");
    free(b0);
    free(b1);
    free(b2);
    rt_engine_free(e);
}

/* Engines edited and re-checksummed (issue 30 item 6): the checksum is the writer's, so the
 * loader checks the node program's dataflow itself. Nodes reversed, a cycle, a node writing an
 * engine input, a tensor written twice, an output nothing writes: each refused naming the node and
 * the tensor; the unedited engine, re-encoded the same way, loads. */
static void check_dataflow_refusals(const uint8_t *bytes, size_t size) {
    symc_error err;
    rt_engine *e = NULL;
    CHECK_MSG(rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    if (!e || e->n_nodes < 4) {
        rt_engine_free(e);
        return;
    }
    uint32_t nn = e->n_nodes;
    rt_node *nodes = malloc(nn * sizeof *nodes);
    uint32_t outs[64][4];
    static const char *const wants[] = {NULL,
                                        "reads tensor",
                                        "reads tensor",
                                        "which is an engine input",
                                        "already written by node",
                                        "is written by no node"};
    for (int kase = 0; kase < 6; kase++) {
        memcpy(nodes, e->nodes, nn * sizeof *nodes);
        for (uint32_t i = 0; i < nn && i < 64; i++) {
            for (uint32_t k = 0; k < nodes[i].n_out && k < 4; k++) outs[i][k] = nodes[i].out[k];
            nodes[i].out = outs[i];
        }
        rt_engine copy = *e;
        copy.nodes = nodes;
        copy.owned = NULL;
        if (kase == 1) /* nodes reversed */
            for (uint32_t i = 0; i < nn / 2; i++) {
                rt_node t = nodes[i];
                nodes[i] = nodes[nn - 1 - i];
                nodes[nn - 1 - i] = t;
            }
        if (kase == 2) { /* a cycle: a node (not a constant's) and a later one reading its output swap places */
            uint32_t a = 0, b2 = 0;
            for (uint32_t j = 1; j < nn && !b2; j++)
                for (uint32_t i = 0; i < j && !b2; i++)
                    for (uint32_t k = 0; k < nodes[j].n_in; k++)
                        if (e->nodes[i].op != IR_OP_CONSTANT && nodes[j].in[k] == e->nodes[i].out[0]) a = i, b2 = j;
            CHECK(b2 > a);

            rt_node t = nodes[a];
            nodes[a] = nodes[b2];
            nodes[b2] = t;
        }
        if (kase == 3) outs[0][0] = e->inputs[0];       /* a node writes an engine input */
        if (kase == 4) outs[1][0] = e->nodes[0].out[0]; /* a tensor written twice */
        if (kase == 5) copy.n_nodes = nn - 1; /* the last node dropped: its output (an engine output) unwritten */
        uint8_t *b = NULL;
        size_t n = 0;
        CHECK_MSG(rt_engine_encode(&copy, &b, &n, &err) == SYMC_OK, "%s", err.msg);
        symrt_engine *loaded = NULL;
        symc_status st = b ? symrt_engine_load(b, n, &loaded, &err) : SYMC_ERR_NOMEM;
        if (!wants[kase]) CHECK_MSG(st == SYMC_OK, "the unedited engine, re-encoded: %s", err.msg);
        else {
            CHECK_MSG(st == SYMC_ERR_FORMAT && !loaded, "case %d loaded", kase);
            CHECK_CONTAINS(err.msg, wants[kase]);
            CHECK_CONTAINS(err.msg, "node");
        }
        symrt_engine_destroy(loaded);
        free(b);
    }
    free(nodes);
    rt_engine_free(e);
}

/* ---- format 7: sizes known only after a node runs (rt_produced) -----------------------------
 * A literal engine: symbols B [1, 8], u0 and u1 (each the count of a nonzero of x [B, 4], bounded by
 * 4*B); nodes nz0 (x -> y0 [2, u0]) and nz1 (x -> y1 [2, u1]); guards checked at set-input-shape
 * time (after 0), after u0 (1) and after u1 (2); a capacity program {4*B, 4*B}. Node nz0 may be
 * given 3 outputs (y0, ya, yb) for ops with several. Every field plain and mutable. */
typedef struct lit7 {
    rt_engine e;
    rt_symbol symbols[3];
    rt_source sources[1];
    rt_produced produced[2];
    rt_guard guards[3];
    rt_tensor tensors[5];
    rt_node nodes[2];
    uint32_t inputs[1], outputs[2], in0[1], out0[3], in1[1], out1[1];
    uint8_t *program, *capacity;
    size_t program_size, capacity_size;
} lit7;

/* slots: B, 4, 2, u0, u1, 4*B, u0 + u1, 8 */
static void lit7_make(lit7 *l) {
    memset(l, 0, sizeof *l);
    sym_table *t = sym_table_new();
    sym_id B = 0, u0 = 1, u1 = 2;
    symc_error err;
    sym_symbol_info bi = {"B", 1, 3, 8, 1, "input 'x' dim 0"}, ui = {"u0", 0, 12, 32, 1, "nz0"},
                    vi = {"u1", 0, 12, 32, 1, "nz1"};
    CHECK(sym_symbol_new(t, &bi, &B, &err) == SYMC_OK && sym_symbol_new(t, &ui, &u0, &err) == SYMC_OK &&
          sym_symbol_new(t, &vi, &u1, &err) == SYMC_OK);
    sym_expr b = sym_var(t, B), x0 = sym_var(t, u0), x1 = sym_var(t, u1), four_b = sym_scale(t, b, 4);
    sym_expr slots[8] = {b, sym_const(t, 4), sym_const(t, 2), x0, x1, four_b, sym_add(t, x0, x1), sym_const(t, 8)};
    CHECK(sym_program_compile(t, slots, 8, &l->program, &l->program_size, &err) == SYMC_OK);
    sym_expr caps[2] = {four_b, four_b};
    CHECK(sym_program_compile(t, caps, 2, &l->capacity, &l->capacity_size, &err) == SYMC_OK);
    sym_table_free(t);
    l->symbols[0] = (rt_symbol){"B", 1, 3, 8, 1};
    l->symbols[1] = (rt_symbol){"u0", 0, 12, 32, 1};
    l->symbols[2] = (rt_symbol){"u1", 0, 12, 32, 1};
    l->sources[0] = (rt_source){0, 0, 0};
    l->produced[0] = (rt_produced){1, 0, 0, 1, 5, "the count of non-zero elements of node 'nz0' (nonzero)", RT_NONE};
    l->produced[1] = (rt_produced){2, 1, 0, 1, 5, "the count of non-zero elements of node 'nz1' (nonzero)", RT_NONE};
    l->guards[0] = (rt_guard){SYM_REL_LE, 0, 7, "B <= 8", 0};
    l->guards[1] = (rt_guard){SYM_REL_LE, 3, 5, "u0 <= 4*B", 1};
    l->guards[2] = (rt_guard){SYM_REL_LE, 6, 6, "u0 + u1 <= u0 + u1", 2};
    l->tensors[0] = (rt_tensor){"x", SYMC_F32, 2, {0, 1}, RT_NONE};
    l->tensors[1] = (rt_tensor){"y0", SYMC_I64, 2, {2, 3}, RT_NONE};
    l->tensors[2] = (rt_tensor){"y1", SYMC_I64, 2, {2, 4}, RT_NONE};
    l->tensors[3] = (rt_tensor){"ya", SYMC_I64, 2, {2, 3}, RT_NONE};
    l->tensors[4] = (rt_tensor){"yb", SYMC_I64, 2, {2, 3}, RT_NONE};
    l->in0[0] = l->in1[0] = 0;
    l->out0[0] = 1, l->out0[1] = 3, l->out0[2] = 4;
    l->out1[0] = 2;
    l->nodes[0] = (rt_node){IR_OP_NONZERO, "nz0", "", 1, 1, 0, l->in0, l->out0, NULL};
    l->nodes[1] = (rt_node){IR_OP_NONZERO, "nz1", "", 1, 1, 0, l->in1, l->out1, NULL};
    l->inputs[0] = 0;
    l->outputs[0] = 1, l->outputs[1] = 2;
    l->e = (rt_engine){.symc_version = "0.0.0-lit7",
                       .cuda_version = "",
                       .cublas_version = "",
                       .cudnn_version = "",
                       .name = "lit7",
                       .symbols = l->symbols,
                       .n_symbols = 3,
                       .sources = l->sources,
                       .n_sources = 1,
                       .program = l->program,
                       .program_size = l->program_size,
                       .num_slots = 8,
                       .guards = l->guards,
                       .n_guards = 3,
                       .tensors = l->tensors,
                       .n_tensors = 5,
                       .nodes = l->nodes,
                       .n_nodes = 2,
                       .inputs = l->inputs,
                       .n_inputs = 1,
                       .outputs = l->outputs,
                       .n_outputs = 2,
                       .cuda_source = "",
                       .produced = l->produced,
                       .n_produced = 2,
                       .capacity_program = l->capacity,
                       .capacity_program_size = l->capacity_size};
}

static void lit7_free(lit7 *l) {
    free(l->program);
    free(l->capacity);
}

/* Encodes e and decodes it: the status of the decode, its message in err. */
static symc_status encode_decode(const rt_engine *e, rt_engine **out, symc_error *err) {
    uint8_t *b = NULL;
    size_t n = 0;
    *out = NULL;
    symc_status st = rt_engine_encode(e, &b, &n, err);
    CHECK_MSG(st == SYMC_OK, "encode: %s", err->msg);
    if (!st) st = rt_engine_decode(b, n, out, err);
    free(b);
    return st;
}

/* One refusal: e encodes, and its decode is SYMC_ERR_FORMAT with a message holding want. */
static void refused(const rt_engine *e, const char *want, const char *what) {
    symc_error err = {0};
    rt_engine *d = NULL;
    symc_status st = encode_decode(e, &d, &err);
    CHECK_MSG(st == SYMC_ERR_FORMAT && d == NULL, "%s: decoded (status %d)", what, (int)st);
    CHECK_MSG(strstr(err.msg, want) != NULL, "%s: message '%s' lacks '%s'", what, err.msg, want);
    rt_engine_free(d);
}

/* A format-7 engine: encoded as format 7, decoded with every field back, encoded again to the
 * same bytes. */
static void check_format7_roundtrip(void) {
    lit7 l;
    lit7_make(&l);
    symc_error err;
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t s1 = 0, s2 = 0;
    rt_engine *d = NULL;
    CHECK_MSG(rt_engine_encode(&l.e, &b1, &s1, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(b1 && rt_engine_decode(b1, s1, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) {
        CHECK(d->format_version == 7 && d->n_symbols == 3 && d->n_sources == 1 && d->sources[0].symbol == 0);
        CHECK(d->n_produced == 2);
        for (uint32_t k = 0; k < 2 && d->n_produced == 2; k++) {
            const rt_produced *p = &d->produced[k], *q = &l.produced[k];
            CHECK_MSG(p->symbol == q->symbol && p->node == q->node && p->output == q->output && p->dim == q->dim &&
                          p->bound == q->bound && !strcmp(p->what, q->what),
                      "produced %u differs", k);
        }
        CHECK(d->capacity_program_size == l.capacity_size && !memcmp(d->capacity_program, l.capacity, l.capacity_size));
        CHECK(d->program_size == l.program_size && !memcmp(d->program, l.program, l.program_size));
        CHECK(d->n_guards == 3);
        for (uint32_t g = 0; g < 3 && d->n_guards == 3; g++)
            CHECK_MSG(d->guards[g].after == l.guards[g].after && d->guards[g].lhs == l.guards[g].lhs &&
                          !strcmp(d->guards[g].message, l.guards[g].message),
                      "guard %u differs", g);
        /* the capacity program reads B only: 4*B whatever u0 and u1 hold */
        int64_t vals[3] = {5, 777, -3}, caps[2] = {0};
        CHECK(sym_program_eval(d->capacity_program, d->capacity_program_size, vals, 3, caps, 2, &err) == SYMC_OK);
        CHECK(caps[0] == 20 && caps[1] == 20);
        CHECK_MSG(rt_engine_encode(d, &b2, &s2, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(b2 && s2 == s1 && !memcmp(b1, b2, s1), "re-encoding a format-7 engine changed it (%zu -> %zu)", s1,
                  s2);
    }
    rt_engine_free(d);
    /* guards all checked at set-input-shape time: no guard_after written, still format 7 */
    for (int g = 0; g < 3; g++) l.guards[g].after = 0;
    d = NULL;
    CHECK_MSG(encode_decode(&l.e, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) CHECK(d->format_version == 7 && d->guards[1].after == 0 && d->guards[2].after == 0);
    rt_engine_free(d);
    l.guards[1].after = 1, l.guards[2].after = 2;
    free(b1);
    free(b2);
    lit7_free(&l);
}

/* Each loader check of the produced sizes, by mutating the good literal engine (and a format-5
 * one, bytes5, for what only format 7 may hold). */
static void check_format7_refusals(const uint8_t *bytes5, size_t size5) {
    lit7 l;
    lit7_make(&l);
    symc_error err;
    rt_engine *d = NULL;
    CHECK_MSG(encode_decode(&l.e, &d, &err) == SYMC_OK, "the good engine: %s", err.msg);
    rt_engine_free(d);
    rt_engine e;
    rt_produced p[3];
#define MUTATE(stmt, want)                        \
    do {                                          \
        e = l.e;                                  \
        memcpy(p, l.produced, sizeof l.produced); \
        e.produced = p;                           \
        stmt;                                     \
        refused(&e, want, #stmt);                 \
    } while (0)
    MUTATE(e.format_version = 6, "engine format version 6 holds 2 sizes known only at run time");
    MUTATE(p[0].symbol = 3, "produced size 0 is symbol 3; the engine has 3 symbols");
    MUTATE(p[0].symbol = 0, "symbol 'B' is produced (produced size 0) and also read from an input dim");
    MUTATE(p[1].symbol = 1, "symbol 'u0' is produced (produced size 1) and also produced by an earlier entry");
    MUTATE((e.n_produced = 1, e.capacity_program_size = 0),
           "symbol 'u1' has no input dim to be bound from and no node produces it");
    MUTATE(p[0].node = 2, "produced size 0 (u0) names node 2; the engine has 2");
    MUTATE(p[0].output = 1,
           "produced size 0 (u0) is output 1 dim 1 of node 'nz0' (nonzero); that op produces output 0 "
           "dim 1");
    MUTATE(p[1].dim = 0, "produced size 1 (u1) is output 0 dim 0 of node 'nz1' (nonzero)");
    MUTATE(p[0].bound = 8, "produced size 0 (u0) has its bound in slot 8 of 8");
    MUTATE((p[0] = l.produced[1], p[1] = l.produced[0]),
           "produced size 1 (u0) is produced by node 0 ('nz0'), not after");
    /* with GPU code each produced size names the tensor its kernels write the count into */
    MUTATE(e.sm = 90, "produced size 0 (u0) has count tensor 4294967295");
    MUTATE(e.capacity_program_size = 7, "engine capacity program");
    MUTATE((e.capacity_program = l.program, e.capacity_program_size = l.program_size),
           "the capacity program expects 3 symbols and 8 outputs; the engine has 3 symbols and 2 produced sizes");
    rt_guard g[3];
    memcpy(g, l.guards, sizeof g);
    MUTATE((e.guards = g, g[2].after = 3),
           "guard 2 ('u0 + u1 <= u0 + u1') is checked after produced size 3; the engine has 2 produced sizes");
    /* a node of an op that produces nothing, and a produced dim its output lacks */
    rt_node nodes[2];
    rt_tensor ts[5];
    memcpy(nodes, l.nodes, sizeof nodes);
    MUTATE((e.nodes = nodes, nodes[1].op = IR_OP_RELU),
           "produced size 1 (u1) names node 'nz1' (relu), an op that produces no size");
    memcpy(nodes, l.nodes, sizeof nodes);
    memcpy(ts, l.tensors, sizeof ts);
    MUTATE((e.tensors = ts, ts[2].rank = 1),
           "produced size 1 (u1) is dim 1 of tensor 'y1' (node 'nz1'), which has "
           "rank 1");
    /* every op: the codec's table of who produces what is ir_produced_dim's (its output must exist:
     * node nz0 gets three) */
    uint32_t agree = 0;
    for (int op = 0; op < IR_OP_COUNT; op++) {
        memcpy(nodes, l.nodes, sizeof nodes);
        nodes[0].op = (ir_op)op;
        nodes[0].n_out = 3;
        unsigned o = 0;
        int dd = 1;
        int produces = ir_produced_dim((ir_op)op, &o, &dd);
        e = l.e;
        memcpy(p, l.produced, sizeof l.produced);
        e.produced = p;
        e.nodes = nodes;
        p[0].output = o;
        p[0].dim = (uint32_t)dd;
        d = NULL;
        symc_status st = encode_decode(&e, &d, &err);
        rt_engine_free(d);
        CHECK_MSG((st == SYMC_OK) == (produces != 0), "op %s: ir_produced_dim says %d, the loader %s (%s)",
                  ir_op_name((ir_op)op), produces, st ? "refuses" : "accepts", st ? err.msg : "");
        if (!produces) continue;
        p[0].dim ^= 1; /* another dim of that output: refused */
        d = NULL;
        st = encode_decode(&e, &d, &err);
        rt_engine_free(d);
        CHECK_MSG(st == SYMC_ERR_FORMAT, "op %s: dim %u accepted", ir_op_name((ir_op)op), p[0].dim);
        agree++;
    }
    CHECK_MSG(agree >= 3, "only %u ops produce sizes", agree);
    /* regions: no produced sizes in the root nor in a region's graph */
    {
        sym_table *t = sym_table_new();
        sym_id B;
        sym_symbol_info bi = {"B", 1, 3, 8, 1, "input 'x' dim 0"};
        uint8_t *rp = NULL;
        size_t rn = 0;
        CHECK(sym_symbol_new(t, &bi, &B, &err) == SYMC_OK);
        sym_expr one = sym_var(t, B);
        CHECK(sym_program_compile(t, &one, 1, &rp, &rn, &err) == SYMC_OK);
        sym_table_free(t);
        uint32_t map[3] = {0, 1, 2};
        rt_region reg = {"always", NULL, 0, map, 3, l.e};
        reg.graph.guards = NULL, reg.graph.n_guards = 0; /* a region graph's guards: fine, but keep it small */
        rt_engine root = {.symc_version = "0.0.0-lit7",
                          .cuda_version = "",
                          .cublas_version = "",
                          .cudnn_version = "",
                          .name = "lit7r",
                          .symbols = l.symbols,
                          .n_symbols = 1,
                          .sources = l.sources,
                          .n_sources = 1,
                          .cuda_source = "",
                          .region_program = rp,
                          .region_program_size = rn,
                          .region_slots = 1,
                          .regions = &reg,
                          .n_regions = 1};
        /* a size the region graph produces is its own: mapped to a root symbol, refused */
        refused(&root, "graph symbol 1 ('u0') is a size the graph produces at run time but maps to a root symbol",
                "a region graph's produced size mapped to a root symbol");
        root.produced = l.produced, root.n_produced = 2;
        root.capacity_program = l.capacity, root.capacity_program_size = l.capacity_size;
        refused(&root, "an engine with regions has 2 sizes known only at run time", "a regions root with produced");
        free(rp);
    }
#undef MUTATE
    /* what only format 7 holds, in a format-5 engine (re-encoded after an edit) */
    CHECK_MSG(rt_engine_decode(bytes5, size5, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) {
        CHECK(d->format_version == 5 && d->n_produced == 0 && d->capacity_program_size == 0);
        for (uint32_t k = 0; k < d->n_guards; k++) CHECK(d->guards[k].after == 0);
        uint8_t *b = NULL;
        size_t n = 0;
        CHECK_MSG(rt_engine_encode(d, &b, &n, &err) == SYMC_OK && n == size5 && !memcmp(b, bytes5, n),
                  "a format-5 engine re-encoded differs");
        free(b);
        rt_engine e5 = *d;
        e5.owned = NULL;
        e5.capacity_program = l.capacity, e5.capacity_program_size = l.capacity_size;
        refused(&e5, "engine format version 5 holds 0 sizes known only at run time", "a capacity program in format 5");
        e5.capacity_program = NULL, e5.capacity_program_size = 0;
        if (d->n_guards) {
            rt_guard *gs = malloc(d->n_guards * sizeof *gs);
            memcpy(gs, d->guards, d->n_guards * sizeof *gs);
            gs[0].after = 1;
            e5.guards = gs;
            refused(&e5, "engine format version 5 holds 0 sizes", "a guard's after in format 5");
            free(gs);
        }
    }
    rt_engine_free(d);
    lit7_free(&l);
}

/* The batch-row verdict (symrt_engine_batch_rows): build()'s engine has two batch symbols (x's B,
 * w's C), so no batch axis; the same engine without the field (as every engine built before it
 * was: the verdict cleared and re-encoded) loads and says UNKNOWN, never independent; a batched
 * verdict round-trips byte for byte; the loader's refusals of a malformed one; the API's. */
static void check_batch_rows(const uint8_t *bytes, size_t size) {
    symc_error err;
    symrt_engine *e = NULL;
    symrt_batch_rows state = SYMRT_BATCH_ROWS_INDEPENDENT;
    uint32_t sym = 0;
    char why[256];
    CHECK_MSG(symrt_engine_load(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    CHECK(symrt_engine_batch_rows(e, &state, &sym, why, sizeof why, &err) == SYMC_OK);
    CHECK_MSG(state == SYMRT_BATCH_ROWS_NONE && sym == UINT32_MAX &&
                  !strcmp(why, "inputs 'x' and 'w' have different symbols at dim 0"),
              "build(): state %d, symbol %u, '%s'", (int)state, sym, why);
    /* snprintf semantics; batch_symbol and why optional; NULL refused */
    char small[8];
    CHECK(symrt_engine_batch_rows(e, &state, NULL, small, sizeof small, &err) == SYMC_OK && !strcmp(small, "inputs "));
    CHECK(symrt_engine_batch_rows(e, &state, NULL, NULL, 0, &err) == SYMC_OK && state == SYMRT_BATCH_ROWS_NONE);
    CHECK(symrt_engine_batch_rows(NULL, &state, &sym, why, sizeof why, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "symrt_engine_batch_rows: NULL engine");
    CHECK(symrt_engine_batch_rows(e, NULL, &sym, why, sizeof why, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(symrt_engine_batch_rows(e, &state, &sym, NULL, 4, &err) == SYMC_ERR_INVALID_ARG);
    symrt_engine_destroy(e);

    rt_engine *d = NULL;
    CHECK_MSG(rt_engine_decode(bytes, size, &d, &err) == SYMC_OK, "%s", err.msg);
    if (!d) return;
    CHECK(d->batch_rows.state == RT_BATCH_ROWS_NONE && d->batch_rows.symbol == RT_NONE);
    rt_engine x = *d;
    x.owned = NULL;
    /* an engine built before the verdict: no field at all (fewer bytes), format unchanged */
    x.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_UNKNOWN, RT_NONE, NULL};
    uint8_t *old = NULL;
    size_t n_old = 0;
    CHECK_MSG(rt_engine_encode(&x, &old, &n_old, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(n_old < size, "without the verdict the engine is %zu bytes, with it %zu", n_old, size);
    e = NULL;
    CHECK_MSG(old && symrt_engine_load(old, n_old, &e, &err) == SYMC_OK, "an engine without the verdict: %s", err.msg);
    state = SYMRT_BATCH_ROWS_INDEPENDENT;
    sym = 0;
    snprintf(why, sizeof why, "stale");
    if (e) CHECK(symrt_engine_batch_rows(e, &state, &sym, why, sizeof why, &err) == SYMC_OK);
    CHECK_MSG(state == SYMRT_BATCH_ROWS_UNKNOWN && sym == UINT32_MAX && !strcmp(why, ""),
              "an engine without the verdict: state %d, symbol %u, '%s'", (int)state, sym, why);
    CHECK(e && rt_engine_of(e)->format_version == RT_ENGINE_FORMAT_MIN);
    symrt_engine_destroy(e);
    free(old);
    /* batched over B (symbol 0, input 0 dim 0), with a reason: round-trips, re-encodes to its bytes */
    x.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_BATCHED, 0, "output 'r' depends on node 'q': \"quoted\""};
    uint8_t *b1 = NULL, *b2 = NULL;
    size_t n1 = 0, n2 = 0;
    rt_engine *d1 = NULL;
    CHECK(rt_engine_encode(&x, &b1, &n1, &err) == SYMC_OK && rt_engine_decode(b1, n1, &d1, &err) == SYMC_OK);
    if (d1) {
        CHECK(d1->batch_rows.state == RT_BATCH_ROWS_BATCHED && d1->batch_rows.symbol == 0 &&
              !strcmp(d1->batch_rows.why, x.batch_rows.why));
        CHECK(rt_engine_encode(d1, &b2, &n2, &err) == SYMC_OK && n2 == n1 && !memcmp(b1, b2, n1));
    }
    rt_engine_free(d1);
    free(b1);
    free(b2);
    x.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_INDEPENDENT, 0, NULL};
    CHECK(encode_decode(&x, &d1, &err) == SYMC_OK && d1 && d1->batch_rows.state == RT_BATCH_ROWS_INDEPENDENT &&
          !strcmp(d1->batch_rows.why, ""));
    rt_engine_free(d1);
    /* malformed verdicts */
    x.batch_rows = (rt_batch_rows){4, RT_NONE, NULL};
    refused(&x, "batch-row state 4 is unknown", "a batch-row state past 3");
    x.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_INDEPENDENT, 2, NULL};
    refused(&x, "the batch symbol is 2; the engine has 2 symbols", "a batch symbol out of range");
    x.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_INDEPENDENT, 1, NULL};
    refused(&x, "the batch symbol 'C' is not bound from input 0 dim 0", "a batch symbol read from input 1");
    rt_engine_free(d);
}

int main(void) {
    size_t size = 0;
    uint8_t *bytes = build(&size);
    symc_error err;
    symrt_engine *e = NULL;
    CHECK_MSG(bytes && symrt_engine_load(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    if (!e) return check_report("test_engine");
    check_dataflow_refusals(bytes, size);
    check_batch_rows(bytes, size);
    check_tuned_points(bytes, size);
    /* a warm-up on the reference backend has nothing to load: no point runs, and it is no error */
    symrt_context *wc = NULL;
    uint32_t warmed = 99;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &wc, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(wc && symrt_context_warm(wc, &warmed, &err) == SYMC_OK && warmed == 0, "%s", err.msg);
    CHECK(symrt_context_warm(NULL, &warmed, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "NULL context");
    symrt_context_destroy(wc);

    CHECK(symrt_engine_num_inputs(e) == 2 && symrt_engine_num_outputs(e) == 2 && symrt_engine_num_symbols(e) == 2);
    symrt_symbol_info si;
    CHECK(symrt_engine_symbol(e, 0, &si, &err) == SYMC_OK && !strcmp(si.name, "B") && si.min == 1 && si.max == 8);

    /* every size in range where broadcasting is defined, incl. dims of 1 on either side */
    for (int64_t Bv = 1; Bv <= 8; Bv++)
        for (int64_t Cv = 1; Cv <= 8; Cv++) {
            symc_status st = run_at(e, Bv, Cv, &err);
            int ok = Bv == Cv || Bv == 1 || Cv == 1;
            if (ok) CHECK_MSG(st == SYMC_OK, "B=%lld C=%lld: %s", (long long)Bv, (long long)Cv, err.msg);
            else {
                CHECK_MSG(st == SYMC_ERR_RANGE, "B=%lld C=%lld should be refused", (long long)Bv, (long long)Cv);
                CHECK_CONTAINS(err.msg, "these input shapes break a condition of the model");
                CHECK_CONTAINS(err.msg, "node 'z' (add)");
            }
        }

    /* API refusals */
    symrt_context *c;
    /* (the CUDA backend's refusals: tests/runtime/test_cuda_backend.c, tests/gpu/test_cuda_errors.c) */
    CHECK(symrt_context_create(e, (symrt_backend)7, NULL, &c, &err) == SYMC_ERR_INVALID_ARG && c == NULL);
    CHECK_CONTAINS(err.msg, "unknown backend 7");
    CHECK(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK);
    int64_t dims[8];
    int32_t rank;
    CHECK(symrt_get_tensor_shape(c, "r", dims, &rank, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 'x' has no shape yet");
    CHECK(symrt_set_input_shape(c, "q", (int64_t[]){1, 4}, 2, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "no input named 'q' (inputs: x, w)");
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){4}, 1, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 'x' has rank 2, got a shape of rank 1");
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){9, 4}, 2, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'x' dim 0 = 9: symbol B must be in [1, 8]");
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){0, 4}, 2, &err) == SYMC_ERR_RANGE);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 5}, 2, &err) == SYMC_ERR_RANGE); /* a fixed dim: at once */
    CHECK_CONTAINS(err.msg, "input 'x' dim 1 = 5 but the model needs 4");
    CHECK(symrt_set_input_shape(c, "w", (int64_t[]){2, 4}, 2, &err) == SYMC_OK);
    CHECK(symrt_get_tensor_shape(c, "z", dims, &rank, &err) == SYMC_ERR_INVALID_ARG); /* x was not taken */
    CHECK_CONTAINS(err.msg, "input 'x' has no shape yet");
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 4}, 2, &err) == SYMC_OK);
    CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "input 'x' has no address");
    float buf[64];
    symrt_set_tensor_address(c, "x", buf, 32, &err);
    symrt_set_tensor_address(c, "w", buf, 32, &err);
    symrt_set_tensor_address(c, "r", buf + 16, 32, &err);
    symrt_set_tensor_address(c, "z", buf + 32, 16, &err);
    CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "output 'z' buffer holds 16 bytes, the tensor needs 32");
    CHECK(symrt_set_tensor_address(c, "nope", buf, 4, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "no input or output named 'nope'");
    /* the shape an input already has is taken at once; a refused shape
     * changes nothing; a buffer grown in place is checked again */
    symrt_set_tensor_address(c, "z", buf + 32, 32, &err);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 4}, 2, &err) == SYMC_OK);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){9, 4}, 2, &err) == SYMC_ERR_RANGE);
    CHECK(symrt_get_tensor_shape(c, "z", dims, &rank, &err) == SYMC_OK && rank == 2 && dims[0] == 2);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){1, 4}, 2, &err) == SYMC_OK);
    CHECK(symrt_get_tensor_shape(c, "z", dims, &rank, &err) == SYMC_OK && rank == 2 && dims[0] == 2); /* broadcast */
    CHECK(symrt_set_tensor_address(c, "z", buf + 32, 16, &err) == SYMC_OK);
    CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "output 'z' buffer holds 16 bytes, the tensor needs 32");
    symrt_set_tensor_address(c, "z", buf + 32, 32, &err);
    /* graph counters: all zero on the reference backend */
    symrt_graph_stats gs;
    memset(&gs, 0xff, sizeof gs);
    CHECK(symrt_context_graph_stats(c, &gs, &err) == SYMC_OK && !gs.replays && !gs.captures && !gs.plain);
    CHECK(symrt_context_graph_stats(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(symrt_context_graph_stats(NULL, &gs, &err) == SYMC_ERR_INVALID_ARG);
    /* per-step timing is the CUDA backend's */
    uint32_t n_steps = 7;
    symrt_step_profile prof[4];
    CHECK(symrt_context_profile(c, NULL, prof, 4, &n_steps, &err) == SYMC_ERR_UNSUPPORTED && n_steps == 0);
    CHECK_CONTAINS(err.msg, "the reference backend does not time steps");
    CHECK(symrt_context_profile(c, NULL, prof, 4, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(symrt_context_profile(c, NULL, NULL, 4, &n_steps, &err) == SYMC_ERR_INVALID_ARG);
    CHECK(symrt_context_profile(NULL, NULL, prof, 4, &n_steps, &err) == SYMC_ERR_INVALID_ARG);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);

    /* corrupt engines: refused, never a crash */
    int accepted = 0;
    for (size_t n = 0; n < size; n += n < 2048 ? 1 : 61) {
        symrt_engine *t = NULL;
        if (symrt_engine_load(bytes, n, &t, &err) == SYMC_OK) accepted++;
        symrt_engine_destroy(t);
    }
    CHECK_MSG(accepted == 0, "%d truncated engines loaded", accepted);
    uint8_t *copy = malloc(size);
    /* the checksum trailer refuses every flipped byte, data included */
    int flipped_accepted = 0;
    for (size_t i = 0; i < size; i++) {
        memcpy(copy, bytes, size);
        copy[i] ^= (uint8_t)(1u << (i % 8));
        symrt_engine *t = NULL;
        if (symrt_engine_load(copy, size, &t, &err) == SYMC_OK) flipped_accepted++;
        else CHECK(t == NULL && err.msg[0]);
        symrt_engine_destroy(t);
    }
    CHECK_MSG(flipped_accepted == 0, "%d engines with a flipped bit loaded", flipped_accepted);
    memcpy(copy, bytes, size);
    copy[size / 2] ^= 0x10;
    CHECK(symrt_engine_load(copy, size, &e, &err) == SYMC_ERR_FORMAT);
    CHECK_CONTAINS(err.msg, "checksum does not match");
    memcpy(copy, bytes, size);
    memcpy(copy + 4, "SYMI", 4);
    CHECK(symrt_engine_load(copy, size, &e, &err) == SYMC_ERR_FORMAT);
    CHECK_CONTAINS(err.msg, "this is a .symir module: compile it with 'symc compile'");
    free(copy);
    check_tuned_roundtrip(bytes, size);
    check_tmap_roundtrip(bytes, size);
    check_format7_roundtrip();
    check_format7_refusals(bytes, size);
    CHECK(symrt_engine_load_file("/nonexistent/m.symx", &e, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "/nonexistent/m.symx");
    free(bytes);
    return check_report("test_engine");
}
