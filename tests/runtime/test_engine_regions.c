/* Engines with several graphs (regions, format 6; docs/PLAN-regions.md stage 1), through the
 * codec: the shared 2-region fixture (regions_fixture.h) encodes and decodes to itself field by
 * field (region names, conditions, symbol maps, every graph's contents) and re-encodes to the
 * same bytes; its constants are stored once; an engine without regions is still written as
 * format 5, byte for byte as before regions existed (a golden checksum of a literal engine that
 * fills every field, taken from the format-5 encoder); and every load check of regions refuses a
 * crafted engine with its own message, each made by editing one field of the fixture. The batch-row
 * verdict is the root's alone (check_batch_rows). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/engine.h"
#include "tests/check.h"
#include "tests/runtime/regions_fixture.h"

static int same_str(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }
static int same_mem(const void *a, const void *b, size_t n) { return n == 0 || (a && b && !memcmp(a, b, n)); }

static void same_attr(const symc_attr *a, const symc_attr *b, const char *where) {
    CHECK_MSG(same_str(a->name, b->name) && a->kind == b->kind && a->n == b->n, "%s: attribute '%s'", where, a->name);
    if (a->kind != b->kind || a->n != b->n) return;
    if (a->kind == SYMC_ATTR_INT || a->kind == SYMC_ATTR_DTYPE) CHECK_MSG(a->i == b->i, "%s", where);
    if (a->kind == SYMC_ATTR_FLOAT) CHECK_MSG(a->f == b->f, "%s", where);
    if (a->kind == SYMC_ATTR_INTS) CHECK_MSG(same_mem(a->ints, b->ints, a->n * sizeof *a->ints), "%s", where);
    if (a->kind == SYMC_ATTR_FLOATS) CHECK_MSG(same_mem(a->floats, b->floats, a->n * sizeof *a->floats), "%s", where);
    if (a->kind == SYMC_ATTR_DIMS) CHECK_MSG(same_mem(a->dims, b->dims, a->n * sizeof *a->dims), "%s", where);
    if (a->kind == SYMC_ATTR_STR) CHECK_MSG(same_str(a->s, b->s), "%s", where);
}

static void same_step(const rt_step *a, const rt_step *b, const char *where) {
    CHECK_MSG(a->kind == b->kind && a->node == b->node && a->kernel == b->kernel && a->work == b->work &&
                  a->per_block == b->per_block && a->block == b->block && a->shared == b->shared &&
                  a->n_args == b->n_args && a->n_tensors == b->n_tensors && a->trans_a == b->trans_a &&
                  a->trans_b == b->trans_b && a->epilogue == b->epilogue && a->precision == b->precision &&
                  a->alpha == b->alpha && a->beta == b->beta && a->n_tuned == b->n_tuned,
              "%s", where);
    if (a->n_args != b->n_args || a->n_tuned != b->n_tuned) return;
    for (uint32_t k = 0; k < a->n_args; k++)
        CHECK_MSG(a->args[k].kind == b->args[k].kind && a->args[k].value == b->args[k].value, "%s arg %u", where, k);
    CHECK_MSG(!a->arg_writes == !b->arg_writes, "%s", where);
    if (a->arg_writes && b->arg_writes) CHECK_MSG(same_mem(a->arg_writes, b->arg_writes, a->n_args), "%s", where);
    for (uint32_t k = 0; k < a->n_tensors && k < RT_STEP_MAX_TENSORS; k++)
        CHECK_MSG(a->tensors[k] == b->tensors[k], "%s tensor %u", where, k);
    for (uint32_t k = 0; k < a->n_tuned; k++)
        CHECK_MSG(same_mem(a->tuned[k].at, b->tuned[k].at, sizeof a->tuned[k].at) && a->tuned[k].ms == b->tuned[k].ms &&
                      a->tuned[k].algo_size == b->tuned[k].algo_size &&
                      same_mem(a->tuned[k].algo, b->tuned[k].algo, a->tuned[k].algo_size),
                  "%s tuned %u", where, k);
}

/* Every field of one graph (not its regions, not its format version), a = what was encoded. */
static void same_graph(const rt_engine *a, const rt_engine *b, const char *what) {
    char where[128];
    CHECK_MSG(same_str(a->name, b->name) && same_str(a->symc_version, b->symc_version) &&
                  same_str(a->cuda_version, b->cuda_version) && same_str(a->cublas_version, b->cublas_version) &&
                  same_str(a->cudnn_version, b->cudnn_version) && a->sm == b->sm && a->precision == b->precision,
              "%s: names or versions", what);
    CHECK_MSG(a->n_symbols == b->n_symbols && a->n_sources == b->n_sources && a->n_guards == b->n_guards &&
                  a->n_tensors == b->n_tensors && a->n_nodes == b->n_nodes && a->n_inputs == b->n_inputs &&
                  a->n_outputs == b->n_outputs && a->n_constants == b->n_constants && a->n_modules == b->n_modules &&
                  a->n_kernels == b->n_kernels && a->n_steps == b->n_steps && a->n_aliases == b->n_aliases &&
                  a->num_slots == b->num_slots && a->program_size == b->program_size,
              "%s: counts", what);
    if (a->n_symbols != b->n_symbols || a->n_sources != b->n_sources || a->n_guards != b->n_guards ||
        a->n_tensors != b->n_tensors || a->n_nodes != b->n_nodes || a->n_inputs != b->n_inputs ||
        a->n_outputs != b->n_outputs || a->n_constants != b->n_constants || a->n_modules != b->n_modules ||
        a->n_kernels != b->n_kernels || a->n_steps != b->n_steps || a->n_aliases != b->n_aliases)
        return;
    for (uint32_t i = 0; i < a->n_symbols; i++)
        CHECK_MSG(same_str(a->symbols[i].name, b->symbols[i].name) && a->symbols[i].min == b->symbols[i].min &&
                      a->symbols[i].opt == b->symbols[i].opt && a->symbols[i].max == b->symbols[i].max &&
                      a->symbols[i].multiple_of == b->symbols[i].multiple_of,
                  "%s: symbol %u", what, i);
    CHECK_MSG(same_mem(a->sources, b->sources, a->n_sources * sizeof *a->sources), "%s: sources", what);
    CHECK_MSG(same_mem(a->program, b->program, a->program_size), "%s: program", what);
    for (uint32_t i = 0; i < a->n_guards; i++)
        CHECK_MSG(a->guards[i].rel == b->guards[i].rel && a->guards[i].lhs == b->guards[i].lhs &&
                      a->guards[i].rhs == b->guards[i].rhs && same_str(a->guards[i].message, b->guards[i].message),
                  "%s: guard %u", what, i);
    for (uint32_t i = 0; i < a->n_tensors; i++) {
        const rt_tensor *s = &a->tensors[i], *t = &b->tensors[i];
        CHECK_MSG(same_str(s->name, t->name) && s->dtype == t->dtype && s->rank == t->rank &&
                      s->constant == t->constant && same_mem(s->dims, t->dims, (size_t)s->rank * sizeof *s->dims),
                  "%s: tensor %u", what, i);
    }
    for (uint32_t i = 0; i < a->n_nodes; i++) {
        const rt_node *s = &a->nodes[i], *t = &b->nodes[i];
        snprintf(where, sizeof where, "%s: node %u", what, i);
        CHECK_MSG(s->op == t->op && same_str(s->name, t->name) && same_str(s->source, t->source) &&
                      s->n_in == t->n_in && s->n_out == t->n_out && s->n_attrs == t->n_attrs &&
                      same_mem(s->in, t->in, s->n_in * sizeof *s->in) &&
                      same_mem(s->out, t->out, s->n_out * sizeof *s->out),
                  "%s", where);
        for (uint32_t k = 0; k < s->n_attrs && s->n_attrs == t->n_attrs; k++)
            same_attr(&s->attrs[k], &t->attrs[k], where);
    }
    CHECK_MSG(same_mem(a->inputs, b->inputs, a->n_inputs * sizeof *a->inputs) &&
                  same_mem(a->outputs, b->outputs, a->n_outputs * sizeof *a->outputs),
              "%s: inputs, outputs", what);
    for (uint32_t i = 0; i < a->n_constants; i++)
        CHECK_MSG(a->constants[i].size == b->constants[i].size &&
                      same_mem(a->constants[i].data, b->constants[i].data, a->constants[i].size),
                  "%s: constant %u", what, i);
    CHECK_MSG(same_str(a->cuda_source, b->cuda_source), "%s: cuda source", what);
    for (uint32_t i = 0; i < a->n_modules; i++)
        CHECK_MSG(a->modules[i].cubin_size == b->modules[i].cubin_size &&
                      same_mem(a->modules[i].cubin, b->modules[i].cubin, a->modules[i].cubin_size) &&
                      same_str(a->modules[i].ptx, b->modules[i].ptx),
                  "%s: module %u", what, i);
    for (uint32_t i = 0; i < a->n_kernels; i++)
        CHECK_MSG(same_str(a->kernel_names[i], b->kernel_names[i]) && a->kernel_module[i] == b->kernel_module[i],
                  "%s: kernel %u", what, i);
    for (uint32_t i = 0; i < a->n_steps; i++) {
        snprintf(where, sizeof where, "%s: step %u", what, i);
        same_step(&a->steps[i], &b->steps[i], where);
    }
    CHECK_MSG(same_mem(a->aliases, b->aliases, a->n_aliases * sizeof *a->aliases), "%s: aliases", what);
}

/* decode(encode(fixture)) is the fixture, field by field, and encodes to the same bytes. */
static void check_roundtrip(const rt_test_regions *f) {
    symc_error err;
    uint8_t *bytes = NULL, *again = NULL;
    size_t size = 0, size2 = 0;
    rt_engine *d = NULL;
    CHECK_MSG(rt_engine_encode(&f->root, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(bytes && rt_engine_decode(bytes, size, &d, &err) == SYMC_OK, "%s", err.msg);
    if (!d) {
        free(bytes);
        return;
    }
    CHECK(d->format_version == 6); /* a regions engine without produced symbols stays format 6 */
    same_graph(&f->root, d, "root");
    CHECK(d->n_regions == 2 && rt_engine_n_graphs(d) == 2 && rt_engine_io(d) == &d->regions[0].graph);
    CHECK(d->region_program_size == f->root.region_program_size && d->region_slots == 3 &&
          same_mem(d->region_program, f->root.region_program, d->region_program_size));
    for (uint32_t k = 0; k < 2 && d->n_regions == 2; k++) {
        const rt_region *a = &f->region[k], *b = &d->regions[k];
        CHECK(rt_engine_graph(d, k) == &b->graph);
        CHECK_MSG(same_str(a->name, b->name) && a->n_cond == b->n_cond && a->n_symbols == b->n_symbols &&
                      same_mem(a->symbols, b->symbols, a->n_symbols * sizeof *a->symbols),
                  "region %u: name, map", k);
        for (uint32_t i = 0; i < a->n_cond && a->n_cond == b->n_cond; i++)
            CHECK_MSG(a->cond[i].rel == b->cond[i].rel && a->cond[i].lhs == b->cond[i].lhs &&
                          a->cond[i].rhs == b->cond[i].rhs && same_str(a->cond[i].message, b->cond[i].message),
                      "region %u condition %u", k, i);
        char what[32];
        snprintf(what, sizeof what, "region %u graph", k);
        same_graph(&a->graph, &b->graph, what);
        /* the graph's constants are the root's table, not a copy */
        CHECK(b->graph.constants == d->constants && b->graph.n_constants == d->n_constants);
        CHECK(b->graph.n_regions == 0 && b->graph.regions == NULL && b->graph.owned == NULL);
        CHECK(b->graph.format_version == d->format_version);
    }
    CHECK_MSG(rt_engine_encode(d, &again, &size2, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(again && size2 == size && !memcmp(bytes, again, size),
              "re-encoding changed the engine (%zu -> %zu bytes)", size, size2);
    rt_engine_free(d);
    free(bytes);
    free(again);
}

/* The constants are stored once: with a 256 KiB weight in place of b, the 2-region engine is
 * smaller than the two one-graph engines by about that weight. */
static void check_constants_once(rt_test_regions *f) {
    enum { kBig = 256 * 1024 };
    uint8_t *big = calloc(1, kBig);
    for (size_t i = 0; big && i < kBig; i++) big[i] = (uint8_t)(i * 7 + 3);
    rt_constant saved = f->constants[0];
    f->constants[0] = (rt_constant){big, kBig};
    symc_error err;
    size_t one[2] = {0, 0}, both = 0;
    uint8_t *bytes = NULL;
    for (int k = 0; k < 2; k++) {
        rt_engine g = f->region[k].graph; /* a one-graph engine with the root's constants */
        CHECK_MSG(rt_engine_encode(&g, &bytes, &one[k], &err) == SYMC_OK, "%s", err.msg);
        free(bytes);
        bytes = NULL;
    }
    CHECK_MSG(rt_engine_encode(&f->root, &bytes, &both, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(both > kBig && both + kBig - 4096 < one[0] + one[1],
              "2 regions: %zu bytes, one graph each: %zu + %zu (a constant of %d bytes)", both, one[0], one[1], kBig);
    rt_engine *d = NULL;
    CHECK_MSG(bytes && rt_engine_decode(bytes, both, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) CHECK(d->n_constants == 1 && d->constants[0].size == kBig && !memcmp(d->constants[0].data, big, kBig));
    rt_engine_free(d);
    free(bytes);
    f->constants[0] = saved;
    free(big);
}

/* A literal engine that fills every field the format has, for the golden bytes, encoded. */
static void literal_encode(uint32_t version, uint8_t **bytes, size_t *size) {
    static const rt_symbol syms[2] = {{"B", 1, 4, 32, 1}, {"N", 8, 64, 512, 8}};
    static const rt_source srcs[2] = {{0, 0, 0}, {1, 0, 1}};
    static const uint8_t program[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22};
    static const rt_guard guards[1] = {{SYM_REL_BROADCAST, 0, 1, "node 'add' (add): dims broadcast", 0}};
    static const rt_tensor tensors[4] = {{"x", SYMC_F32, 2, {0, 1}, RT_NONE},
                                         {"w", SYMC_F16, 1, {1}, 0},
                                         {"y", SYMC_F32, 2, {0, 1}, RT_NONE},
                                         {"s", SYMC_I64, 0, {0}, 1}};
    static const int64_t ints[3] = {-1, 0, 1 << 30};
    static const double floats[2] = {0.25, -3.5};
    static const symc_dim dims[2] = {1, SYMC_DIM_NONE};
    static const symc_attr attrs[6] = {{"axis", SYMC_ATTR_INT, 0, -1, 0, NULL, NULL, NULL, NULL},
                                       {"alpha", SYMC_ATTR_FLOAT, 0, 0, 0.125, NULL, NULL, NULL, NULL},
                                       {"perm", SYMC_ATTR_INTS, 3, 0, 0, ints, NULL, NULL, NULL},
                                       {"scales", SYMC_ATTR_FLOATS, 2, 0, 0, NULL, floats, NULL, NULL},
                                       {"mode", SYMC_ATTR_STR, 0, 0, 0, NULL, NULL, NULL, "nearest"},
                                       {"shape", SYMC_ATTR_DIMS, 2, 0, 0, NULL, NULL, dims, NULL}};
    static const uint32_t in[2] = {0, 1}, out[1] = {2}, io_in[1] = {0}, io_out[1] = {2};
    static const rt_node nodes[1] = {{IR_OP_ADD, "add", "model.py:3", 2, 1, 6, in, out, attrs}};
    static const uint8_t w_data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    static const uint8_t s_data[8] = {42};
    static const rt_constant consts[2] = {{w_data, 16}, {s_data, 8}};
    static const uint8_t cubin[40] = {0x7f, 'E', 'L', 'F'};
    static const rt_module modules[2] = {{cubin, 40, "// ptx 0"}, {NULL, 0, "// ptx 1"}};
    static const char *const knames[2] = {"k_add", "k_relu"};
    static const uint32_t kmod[2] = {0, 1};
    static const rt_arg args[3] = {{RT_ARG_TENSOR, 0}, {RT_ARG_TENSOR, 2}, {RT_ARG_SLOT, 1}};
    static const uint8_t writes[3] = {0, 1, 0};
    static const uint8_t algo[RT_GEMM_ALGO_SIZE] = {9, 8, 7};
    static const rt_tuned tuned[1] = {{{1, 64, 64, 1}, 0.5f, RT_GEMM_ALGO_SIZE, algo}};
    static const uint32_t aliases[4] = {RT_NONE, RT_NONE, RT_NONE, RT_NONE};
    rt_step steps[2];
    memset(steps, 0, sizeof steps);
    steps[0] = (rt_step){.kind = RT_STEP_KERNEL,
                         .node = 0,
                         .kernel = 1,
                         .work = 2,
                         .per_block = 256,
                         .block = 128,
                         .shared = 64,
                         .n_args = 3,
                         .args = args,
                         .arg_writes = writes,
                         .n_tensors = 0,
                         .tensors = {RT_NONE, RT_NONE, RT_NONE, RT_NONE, RT_NONE},
                         .alpha = 1.0f,
                         .beta = 0.0f};
    steps[1] = (rt_step){.kind = RT_STEP_GEMM,
                         .node = 0,
                         .per_block = 1,
                         .block = 1,
                         .n_tensors = 5,
                         .tensors = {0, 1, RT_NONE, RT_NONE, 2},
                         .trans_a = 1,
                         .epilogue = RT_EPI_GELU,
                         .precision = RT_PREC_TF32,
                         .alpha = 0.5f,
                         .beta = 1.0f,
                         .n_tuned = 1,
                         .tuned = tuned};
    rt_engine e;
    memset(&e, 0, sizeof e);
    e.format_version = version;
    e.symc_version = "0.0.0-golden";
    e.cuda_version = "12.4";
    e.cublas_version = "12.4.5";
    e.cudnn_version = "9.1.0";
    e.name = "golden";
    e.sm = 90;
    e.symbols = syms;
    e.n_symbols = 2;
    e.sources = srcs;
    e.n_sources = 2;
    e.program = program;
    e.program_size = sizeof program;
    e.num_slots = 3;
    e.guards = guards;
    e.n_guards = 1;
    e.tensors = tensors;
    e.n_tensors = 4;
    e.nodes = nodes;
    e.n_nodes = 1;
    e.inputs = io_in;
    e.n_inputs = 1;
    e.outputs = io_out;
    e.n_outputs = 1;
    e.constants = consts;
    e.n_constants = 2;
    e.precision = RT_PREC_FP16;
    e.cuda_source = "extern \"C\" __global__ void k_add() {}";
    e.modules = modules;
    e.n_modules = 2;
    e.kernel_names = knames;
    e.kernel_module = kmod;
    e.n_kernels = 2;
    e.steps = steps;
    e.n_steps = 2;
    e.aliases = aliases;
    e.n_aliases = 4;
    symc_error err;
    *bytes = NULL;
    *size = 0;
    CHECK_MSG(rt_engine_encode(&e, bytes, size, &err) == SYMC_OK, "%s", err.msg);
}

static uint64_t literal_checksum(uint32_t version, uint8_t *first_bytes, size_t *first_size) {
    uint8_t *bytes = NULL;
    size_t size = 0;
    literal_encode(version, &bytes, &size);
    uint64_t h = bytes ? rt_engine_checksum(bytes, size) : 0;
    if (first_bytes && bytes) memcpy(first_bytes, bytes, size < 16 ? size : 16);
    if (first_size) *first_size = size;
    free(bytes);
    return h;
}

/* One-graph engines are format 5, byte for byte as the format-5 encoder wrote them: the
 * literal engine's bytes against their checksum taken from main at d62d6c9 (before regions),
 * whatever version the rt_engine says (0, 5 or RT_ENGINE_FORMAT_VERSION); the compiler's
 * engines (format 5) re-encode to their own bytes. */
static void check_one_graph_format(const rt_test_regions *f) {
    /* The bytes depend on the C++ compiler that built engine_fb.cc: the encoder creates several
     * strings and vectors inside one call's arguments, whose order of evaluation gcc and clang
     * choose differently (either compiler at -O0 and -O2 gives its own bytes). This test is
     * built by the C compiler of the same toolchain. */
#if defined(__clang__)
    const uint64_t kGolden = 0xf95af8aef8358432ull;
    const size_t kGoldenSize = 1948;
#else
    const uint64_t kGolden = 0x1f4b46a69997d209ull;
    const size_t kGoldenSize = 1932;
#endif
    size_t size = 0;
    uint64_t h = literal_checksum(0, NULL, &size);
    CHECK_MSG(h == kGolden && size == kGoldenSize, "the one-graph engine's bytes changed: %zu bytes, 0x%016llx", size,
              (unsigned long long)h);
    CHECK(literal_checksum(5, NULL, NULL) == h);
    CHECK(literal_checksum(RT_ENGINE_FORMAT_VERSION, NULL, NULL) == h);
    symc_error err;
    for (int k = 0; k < 2; k++) {
        CHECK(f->graph[k]->format_version == 5 && f->graph[k]->n_regions == 0);
        uint8_t *bytes = NULL;
        size_t n = 0;
        CHECK_MSG(rt_engine_encode(f->graph[k], &bytes, &n, &err) == SYMC_OK, "%s", err.msg);
        CHECK_MSG(bytes && n == f->one_size[k] && !memcmp(bytes, f->one_bytes[k], n), "graph %d re-encoded differs", k);
        free(bytes);
    }
}

/* Encodes the fixture as edited and checks the load refuses it with `want`. */
static void refused(const rt_test_regions *f, const char *what, const char *want) {
    symc_error err;
    uint8_t *bytes = NULL;
    size_t size = 0;
    rt_engine *d = NULL;
    CHECK_MSG(rt_engine_encode(&f->root, &bytes, &size, &err) == SYMC_OK, "%s: %s", what, err.msg);
    symc_status st = bytes ? rt_engine_decode(bytes, size, &d, &err) : SYMC_ERR_NOMEM;
    CHECK_MSG(st == SYMC_ERR_FORMAT && d == NULL, "%s: loaded (status %d)", what, (int)st);
    if (st == SYMC_ERR_FORMAT) CHECK_MSG(strstr(err.msg, want) != NULL, "%s: '%s' lacks '%s'", what, err.msg, want);
    rt_engine_free(d);
    free(bytes);
}

/* Each load check of regions, one edit of the fixture each (undone after). */
static void check_refusals(rt_test_regions *f) {
    rt_engine *g1 = &f->region[1].graph;
    /* a region graph with constants of its own (a table that is not the root's) */
    rt_constant own[1] = {f->constants[0]};
    g1->constants = own;
    refused(f, "graph constants", "region 1 ('2 <= B'): the region graph holds 1 constants of its own");
    g1->constants = f->constants;
    /* nested regions */
    g1->regions = &f->region[0];
    g1->n_regions = 1;
    refused(f, "nested", "region 1 ('2 <= B'): the region graph has 1 regions of its own; regions do not nest");
    g1->regions = NULL;
    g1->n_regions = 0;
    /* the symbol map: out of range, not injective, of the wrong length */
    f->map[1][1] = 5;
    refused(f, "map range", "region 1 ('2 <= B'): graph symbol 1 ('C') is root symbol 5; the root has 2");
    f->map[1][1] = 0;
    refused(f, "map injective", "region 1 ('2 <= B'): graph symbols 0 ('B') and 1 ('C') are both root symbol 0 ('B')");
    f->map[1][1] = 1;
    f->region[1].n_symbols = 1;
    refused(f, "map length", "region 1 ('2 <= B'): the symbol map has 1 entries for the graph's 2 symbols");
    f->region[1].n_symbols = 2;
    /* a graph symbol's range outside its root symbol's */
    rt_symbol syms[2] = {g1->symbols[0], g1->symbols[1]};
    const rt_symbol *saved_syms = g1->symbols;
    g1->symbols = syms;
    syms[0].max = 9;
    refused(f, "range", "region 1 ('2 <= B'): symbol 'B' in [2, 9] is not within the root's 'B' in [1, 8]");
    g1->symbols = saved_syms;
    /* a source that binds another (input, dim) than the root's */
    rt_source srcs[2] = {g1->sources[0], g1->sources[1]};
    const rt_source *saved_srcs = g1->sources;
    for (int i = 0; i < 2; i++)
        if (srcs[i].symbol == 1) srcs[i].input = 0, srcs[i].dim = 1;
    g1->sources = srcs;
    refused(f, "source",
            "region 1 ('2 <= B'): symbol 'C' is bound from input 0 dim 1; the root's 'C' from input 1 dim 0");
    g1->sources = saved_srcs;
    /* the I/O interface differs: an input renamed */
    uint32_t w = g1->inputs[1];
    const char *saved_name = f->tensors[1][w].name;
    f->tensors[1][w].name = "w2";
    refused(f, "io names", "region 1 ('2 <= B'): input 1 is 'w2' (f32, rank 2); region 0's is 'w' (f32, rank 2)");
    f->tensors[1][w].name = saved_name;
    /* a condition that reads a slot the region program lacks */
    f->cond[1].rhs = 3;
    refused(f, "cond slot",
            "region 1 ('2 <= B'): condition 0 ('2 <= B') is malformed (relation 2, slots 2 and 3 of 3)");
    f->cond[1].rhs = 0;
    /* the region program's outputs */
    f->root.region_slots = 4;
    refused(f, "region slots", "the region program expects 2 symbols and 3 outputs, the engine has 2 and 4");
    f->root.region_slots = 3;
    /* a region graph for another GPU */
    uint32_t sm = g1->sm;
    g1->sm = sm + 1;
    if (sm) refused(f, "sm", "region 1 ('2 <= B'): the region graph targets sm");
    g1->sm = sm;
    /* steps out of order in region 1: today's step check, named by region. The fixture's two steps
     * are independent (s = x + b fused with y and r; z = x + w), so step 1 is made to read what
     * step 0 writes instead of an input: loads in order, refused reversed */
    if (g1->n_steps == 2 && g1->steps[0].arg_writes && g1->steps[1].arg_writes) {
        rt_step steps[2] = {g1->steps[0], g1->steps[1]};
        rt_arg args[16];
        uint32_t written = RT_NONE, n = steps[1].n_args < 16 ? steps[1].n_args : 16;
        for (uint32_t k = 0; k < steps[0].n_args; k++)
            if (steps[0].arg_writes[k] && steps[0].args[k].kind == RT_ARG_TENSOR) written = steps[0].args[k].value;
        if (written != RT_NONE && g1->n_aliases && g1->aliases[written] != RT_NONE) written = g1->aliases[written];
        memcpy(args, steps[1].args, n * sizeof *args);
        int edited = 0;
        for (uint32_t k = 0; k < n && !edited; k++)
            if (args[k].kind == RT_ARG_TENSOR && !steps[1].arg_writes[k] && args[k].value == g1->inputs[0])
                args[k].value = written, edited = 1;
        CHECK(edited && written != RT_NONE);
        steps[1].args = args;
        const rt_step *saved = g1->steps;
        g1->steps = steps;
        check_roundtrip(f); /* in order: loads */
        rt_step t = steps[0];
        steps[0] = steps[1];
        steps[1] = t;
        char want[160];
        snprintf(want, sizeof want, "region 1 ('2 <= B'): step 0 of 2 (%s of node 'z') reads tensor '%s'",
                 g1->kernel_names[steps[0].kernel], written < g1->n_tensors ? g1->tensors[written].name : "?");
        refused(f, "steps", want);
        g1->steps = saved;
    } else CHECK_MSG(0, "region 1 has %u steps; the fixture should have 2 with their writes", g1->n_steps);
    /* a multi-region root with a graph of its own */
    f->root.tensors = f->region[0].graph.tensors;
    f->root.n_tensors = f->region[0].graph.n_tensors;
    refused(f, "root graph", "an engine with regions has no tensors, nodes, steps, guards or shape program of its own");
    f->root.tensors = NULL;
    f->root.n_tensors = 0;
    /* a format-5 file carrying regions; a version after this runtime's */
    f->root.format_version = 5;
    refused(f, "format 5", "engine format version 5 holds 2 regions; regions are format 6");
    f->root.format_version = RT_ENGINE_FORMAT_VERSION + 1;
    refused(f, "format 7", "rebuild the engine");
    f->root.format_version = 0;
    check_roundtrip(f); /* every edit undone */
}

/* The batch-row verdict of an engine with regions is the root's: the fixture, described without
 * one, reads UNKNOWN; a root verdict round-trips while the region graphs' own (each compile's,
 * NONE here) are not written; a root verdict over C, which input 1 binds, is refused. */
static void check_batch_rows(rt_test_regions *f) {
    symc_error err;
    rt_engine *d = NULL;
    uint8_t *bytes = NULL;
    size_t size = 0;
    CHECK(f->root.batch_rows.state == RT_BATCH_ROWS_UNKNOWN &&
          f->region[0].graph.batch_rows.state == RT_BATCH_ROWS_NONE);
    f->root.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_BATCHED, 0, "regions chosen by B"};
    CHECK_MSG(rt_engine_encode(&f->root, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(bytes && rt_engine_decode(bytes, size, &d, &err) == SYMC_OK, "%s", err.msg);
    if (d) {
        CHECK(d->batch_rows.state == RT_BATCH_ROWS_BATCHED && d->batch_rows.symbol == 0 &&
              !strcmp(d->batch_rows.why, "regions chosen by B"));
        for (uint32_t k = 0; k < d->n_regions; k++)
            CHECK(d->regions[k].graph.batch_rows.state == RT_BATCH_ROWS_UNKNOWN);
    }
    rt_engine_free(d);
    free(bytes);
    f->root.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_INDEPENDENT, 1, NULL};
    refused(f, "batch over C", "the batch symbol 'C' is not bound from input 0 dim 0");
    f->root.batch_rows = (rt_batch_rows){RT_BATCH_ROWS_UNKNOWN, RT_NONE, NULL};
    check_roundtrip(f);
}

int main(void) {
    rt_test_regions f;
    symc_error err;
    CHECK_MSG(rt_test_regions_make(&f, &err) == SYMC_OK, "%s", err.msg);
    if (!f.root.n_regions) return check_report("test_engine_regions");
    CHECK(f.region[0].graph.n_symbols == 1 && f.region[1].graph.n_symbols == 2 && f.root.n_constants == 1);
    check_one_graph_format(&f);
    check_roundtrip(&f);
    check_constants_once(&f);
    check_refusals(&f);
    check_batch_rows(&f);
    rt_test_regions_free(&f);
    return check_report("test_engine_regions");
}
