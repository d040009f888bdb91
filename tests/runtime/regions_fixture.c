/* The shared 2-region test engine (regions_fixture.h says what it holds). Each region's graph is
 * compiled on its own with the builder and cg_build_engine, as the compile driver will (one
 * compile per region module), and decoded; the fixture then does by hand what the driver's
 * region assembly does: root symbols keyed by their source (input, dim), constants deduplicated
 * by content into the root's table (the region tensors' constant indices rewritten), and the
 * conditions compiled into one region program over the root symbols with symshape. */
#include "tests/runtime/regions_fixture.h"

#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "symc/symc.h"
#include "symshape/sym.h"

const float rt_test_regions_bias[4] = {0.5f, -0.5f, 1.0f, -1.0f};

float rt_test_regions_r(uint32_t region, float s) { return region == 0 ? (s > 0 ? s : 0) : -s; }

/* The small graph: B fixed to 1 (fixed_b) or a symbol in [2, 8]; y = op(x + b). */
static symc_status compile_graph(int fixed_b, const char *op, uint8_t **bytes, size_t *size, symc_error *err) {
    symc_module *m = symc_module_create(fixed_b ? "small_b1" : "small_bn", err);
    if (!m) return err->code ? err->code : SYMC_ERR_NOMEM;
    symc_status st = SYMC_OK;
    symc_dim B = symc_dim_const(m, 1), C;
    if (!fixed_b) st = symc_declare_symbol(m, "B", 2, 3, 8, 1, &B, err);
    if (!st) st = symc_declare_symbol(m, "C", 1, 3, 8, 1, &C, err);
    symc_dim four = symc_dim_const(m, 4), two = symc_dim_const(m, 2);
    symc_tensor x, w, b, s, y, z, r;
    if (!st) st = symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, four}, &x, err);
    if (!st) st = symc_add_input(m, "w", SYMC_F32, 2, (symc_dim[]){C, four}, &w, err);
    if (!st)
        st = symc_add_constant(m, "b", SYMC_F32, 1, (int64_t[]){4}, rt_test_regions_bias, sizeof rt_test_regions_bias,
                               &b, err);
    if (!st) st = symc_add_node(m, "add", "s", (symc_tensor[]){x, b}, 2, NULL, 0, &s, 1, err);
    if (!st) st = symc_add_node(m, op, "y", &s, 1, NULL, 0, &y, 1, err);
    symc_attr ra = symc_attr_dims("shape", (symc_dim[]){B, two, SYMC_DIM_NONE}, 3);
    if (!st) st = symc_add_node(m, "reshape", "r", &y, 1, &ra, 1, &r, 1, err);
    if (!st) st = symc_add_node(m, "add", "z", (symc_tensor[]){x, w}, 2, NULL, 0, &z, 1, err);
    if (!st) st = symc_mark_output(m, r, err);
    if (!st) st = symc_mark_output(m, z, err);
    if (!st) st = symc_module_infer_shapes(m, err);
    if (!st) st = cg_build_engine(m, NULL, bytes, size, err);
    symc_module_destroy(m);
    return st;
}

/* B <= 1 and 2 <= B over the root symbols (B, C): the program's slots are {B, 1, 2}. */
static symc_status make_conditions(rt_test_regions *f, symc_error *err) {
    sym_table *t = sym_table_new();
    if (!t) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory making the region conditions");
    symc_status st = SYMC_OK;
    sym_id ids[2];
    for (int i = 0; i < 2 && !st; i++) {
        sym_symbol_info info = {f->symbols[i].name, f->symbols[i].min, f->symbols[i].opt, f->symbols[i].max, 1, ""};
        st = sym_symbol_new(t, &info, &ids[i], err);
    }
    if (!st) {
        sym_expr outs[3] = {sym_var(t, ids[0]), sym_const(t, 1), sym_const(t, 2)};
        st = sym_program_compile(t, outs, 3, &f->region_program, &f->root.region_program_size, err);
    }
    sym_table_free(t);
    if (st) return st;
    f->root.region_program = f->region_program;
    f->root.region_slots = 3;
    f->cond[0] = (rt_guard){SYM_REL_LE, 0, 1, "B <= 1", 0};
    f->cond[1] = (rt_guard){SYM_REL_LE, 2, 0, "2 <= B", 0};
    return SYMC_OK;
}

/* Region k's graph: graph[k] with its tensors' constants moved to the root's table (by
 * content: the same bytes are one root constant). */
static symc_status make_region(rt_test_regions *f, uint32_t k, rt_constant *consts, uint32_t *nconst, symc_error *err) {
    const rt_engine *g = f->graph[k];
    f->tensors[k] = calloc(g->n_tensors ? g->n_tensors : 1, sizeof(rt_tensor));
    if (!f->tensors[k]) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory making region %u", k);
    for (uint32_t i = 0; i < g->n_tensors; i++) {
        f->tensors[k][i] = g->tensors[i];
        uint32_t c = g->tensors[i].constant;
        if (c == RT_NONE) continue;
        uint32_t j = 0;
        while (
            j < *nconst &&
            !(consts[j].size == g->constants[c].size && !memcmp(consts[j].data, g->constants[c].data, consts[j].size)))
            j++;
        if (j == *nconst) {
            if (*nconst == 8) return symc_error_setf(err, SYMC_ERR_INTERNAL, "the fixture holds 8 constants at most");
            consts[(*nconst)++] = g->constants[c];
        }
        f->tensors[k][i].constant = j;
    }
    rt_region *r = &f->region[k];
    r->graph = *g;
    r->graph.owned = NULL;
    r->graph.tensors = f->tensors[k];
    r->name = f->cond[k].message;
    r->cond = &f->cond[k];
    r->n_cond = 1;
    r->symbols = f->map[k];
    r->n_symbols = g->n_symbols;
    return SYMC_OK;
}

static symc_status make(rt_test_regions *f, symc_error *err) {
    for (uint32_t k = 0; k < 2; k++) {
        symc_status st = compile_graph(k == 0, k == 0 ? "relu" : "neg", &f->one_bytes[k], &f->one_size[k], err);
        if (!st) st = rt_engine_decode(f->one_bytes[k], f->one_size[k], &f->graph[k], err);
        if (st) {
            symc_error_prefix(err, "regions fixture, region %u", k);
            return st;
        }
    }
    if (f->graph[0]->n_symbols != 1 || f->graph[1]->n_symbols != 2)
        return symc_error_setf(err, SYMC_ERR_INTERNAL,
                               "regions fixture: the graphs have %u and %u symbols, not 1 and 2",
                               f->graph[0]->n_symbols, f->graph[1]->n_symbols);
    f->symbols[0] = (rt_symbol){"B", 1, 3, 8, 1};
    f->symbols[1] = (rt_symbol){"C", 1, 3, 8, 1};
    f->sources[0] = (rt_source){0, 0, 0};
    f->sources[1] = (rt_source){1, 1, 0};
    f->map[0][0] = 1; /* region 0: C */
    f->map[1][0] = 0; /* region 1: B, C */
    f->map[1][1] = 1;
    /* the root's constant table; the data stays graph[0]'s / graph[1]'s */
    rt_constant *mine = calloc(8, sizeof *mine);
    if (!mine) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory making the regions fixture");
    f->constants = mine;
    f->root.constants = mine;
    symc_status st = make_conditions(f, err);
    uint32_t nconst = 0;
    for (uint32_t k = 0; k < 2 && !st; k++) st = make_region(f, k, mine, &nconst, err);
    if (st) return st;
    const rt_engine *g = f->graph[0];
    rt_engine *root = &f->root;
    root->name = "small_regions";
    root->symc_version = g->symc_version;
    root->cuda_version = g->cuda_version;
    root->cublas_version = g->cublas_version;
    root->cudnn_version = g->cudnn_version;
    root->sm = g->sm;
    root->precision = g->precision;
    root->symbols = f->symbols;
    root->n_symbols = 2;
    root->sources = f->sources;
    root->n_sources = 2;
    root->n_constants = nconst;
    root->regions = f->region;
    root->n_regions = 2;
    for (uint32_t k = 0; k < 2; k++) {
        f->region[k].graph.constants = mine;
        f->region[k].graph.n_constants = nconst;
    }
    return SYMC_OK;
}

symc_status rt_test_regions_make(rt_test_regions *f, symc_error *err) {
    memset(f, 0, sizeof *f);
    symc_status st = make(f, err);
    if (st) rt_test_regions_free(f);
    return st;
}

void rt_test_regions_free(rt_test_regions *f) {
    if (!f) return;
    for (int k = 0; k < 2; k++) {
        rt_engine_free(f->graph[k]);
        free(f->one_bytes[k]);
        free(f->tensors[k]);
    }
    free(f->constants);
    free(f->region_program);
    memset(f, 0, sizeof *f);
}
