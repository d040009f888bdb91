/* Activation memory planning (runtime/plan.c) on random graphs: for both
 * schedules and many shapes, brute force checks that no two tensors alive at
 * the same time share a byte, that every planned tensor fits inside the
 * workspace, that the workspace is no larger than the no-reuse sum, and that
 * a chain really reuses (two buffers, not n). The numbers computed in a
 * shared workspace are checked end to end by the e2e tests (reference
 * backend vs onnxruntime) and the GPU tests (CUDA vs reference).
 *
 * The workspace formula (tools/memory_formula.c) is checked the same way, on
 * the random graphs and on two models with richer shape expressions (an
 * attention block over B and S: products and squares; a strided conv and a
 * ceil-mode pool over H and W: floor divisions, sizes that are not multiples
 * of the alignment): at random shapes in range, every slot expression
 * decoded from the shape program evaluates to the program's value, the
 * formula evaluates to exactly the fixed-order plan's total, the layout
 * rt_plan_layout returns is no larger, and at opt the fixed order is no worse
 * than first fit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/engine.h"
#include "runtime/plan.h"
#include "runtime/ref/ref_kernels.h"
#include "symc/symrt.h"
#include "tests/check.h"
#include "tools/memory.h"
#include "tests/test_node.h"

static unsigned rng = 12345u;
static unsigned next(void) {
    rng = rng * 1103515245u + 12345u;
    return rng >> 16;
}

/* a random DAG of n unary/binary elementwise nodes over x: f32[B, 16] */
static rt_engine *build(int n, int chain) {
    symc_error err;
    symc_module *m = symc_module_create("plan", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 8, 64, 1, &B, &err);
    symc_tensor t[64];
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 16)}, &t[0], &err);
    static const char *un[] = {"neg", "abs", "tanh", "sigmoid"}, *bin[] = {"add", "mul", "sub", "max"};
    for (int i = 1; i <= n; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        if (chain || next() % 2) {
            symc_tensor a = t[chain ? (unsigned)(i - 1) : next() % (unsigned)i];
            CHECK(symc_add_node(m, un[next() % 4], name, &a, 1, NULL, 0, &t[i], 1, &err) == SYMC_OK);
        } else {
            symc_tensor ab[2] = {t[next() % (unsigned)i], t[next() % (unsigned)i]};
            CHECK(symc_add_node(m, bin[next() % 4], name, ab, 2, NULL, 0, &t[i], 1, &err) == SYMC_OK);
        }
    }
    symc_mark_output(m, t[n], &err);
    if (!chain) symc_mark_output(m, t[n / 2], &err);
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.gpu = 1;
    o.tune = 0;
    uint8_t *bytes;
    size_t size;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    rt_engine *e = NULL;
    CHECK_MSG(rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    free(bytes);
    return e;
}

static size_t bytes_at(const rt_engine *e, uint32_t t, const int64_t *slots) {
    size_t n = symc_dtype_size(e->tensors[t].dtype);
    for (int d = 0; d < e->tensors[t].rank; d++) n *= (size_t)slots[e->tensors[t].dims[d]];
    return n;
}

static void check_plan(const rt_engine *e, rt_schedule s, int64_t B, int expect_two) {
    symc_error err;
    int64_t sym = B, slots[4096];
    CHECK(e->num_slots < 4096);
    CHECK(sym_program_eval(e->program, e->program_size, &sym, 1, slots, e->num_slots, &err) == SYMC_OK);
    rt_lifetimes l;
    CHECK(rt_lifetimes_compute(e, s, &l, &err) == SYMC_OK);
    size_t off[256], total = 0, flat = 0;
    CHECK(e->n_tensors < 256);
    CHECK(rt_plan_layout(e, &l, slots, 64, off, &total, &err) == SYMC_OK);
    int overlaps = 0, outside = 0, planned = 0;
    for (uint32_t a = 0; a < e->n_tensors; a++) {
        if (l.first[a] == RT_NONE) {
            CHECK(off[a] == SIZE_MAX);
            continue;
        }
        planned++;
        size_t sa = bytes_at(e, a, slots);
        flat += (sa + 63) / 64 * 64;
        if (off[a] % 64 || off[a] + sa > total) outside++;
        for (uint32_t b = a + 1; b < e->n_tensors; b++) {
            if (l.first[b] == RT_NONE) continue;
            int alive = !(l.last[a] < l.first[b] || l.last[b] < l.first[a]);
            size_t sb = bytes_at(e, b, slots);
            int share = off[a] < off[b] + sb && off[b] < off[a] + sa && sa && sb;
            if (alive && share) overlaps++;
        }
    }
    CHECK_MSG(overlaps == 0, "%d pairs alive together share memory", overlaps);
    CHECK_MSG(outside == 0, "%d tensors misaligned or outside the workspace", outside);
    CHECK(total <= flat);
    /* a chain of unary ops keeps at most two buffers alive on the reference schedule */
    if (expect_two && s == RT_SCHEDULE_NODES && planned > 2)
        CHECK_MSG(total <= 2 * ((size_t)B * 16 * 4 + 63) / 64 * 64, "chain of %d: %zu bytes", planned, total);
    rt_lifetimes_free(&l);
}

static symc_tensor constant(symc_module *m, const char *name, int32_t rank, const int64_t *dims) {
    static float zeros[1 << 14];
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) n *= dims[d];
    symc_error err;
    symc_tensor t = SYMC_TENSOR_NONE;
    CHECK(n <= (int64_t)(sizeof zeros / sizeof *zeros));
    CHECK_MSG(symc_add_constant(m, name, SYMC_F32, rank, dims, zeros, (size_t)n * 4, &t, &err) == SYMC_OK, "%s",
              err.msg);
    return t;
}

static rt_engine *finish(symc_module *m) {
    symc_error err;
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.gpu = 1;
    o.tune = 0;
    uint8_t *bytes = NULL;
    size_t size = 0;
    rt_engine *e = NULL;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, &size, &err) == SYMC_OK, "%s", err.msg);
    if (bytes) CHECK_MSG(rt_engine_decode(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    free(bytes);
    symc_module_destroy(m);
    return e;
}

/* x: f32[B, S, 64] -> q, k projections, softmax(q k^T) x + x, gelu */
static rt_engine *build_attention(void) {
    symc_error err;
    symc_module *m = symc_module_create("attention", &err);
    symc_dim B, S;
    symc_declare_symbol(m, "B", 1, 4, 16, 1, &B, &err);
    symc_declare_symbol(m, "S", 1, 24, 96, 1, &S, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 3, (symc_dim[]){B, S, symc_dim_const(m, 64)}, &x, &err);
    symc_tensor wq = constant(m, "wq", 2, (int64_t[]){64, 64}), wk = constant(m, "wk", 2, (int64_t[]){64, 64});
    symc_tensor q = test_node(m, "matmul", "q", (symc_tensor[]){x, wq}, 2, NULL, 0);
    symc_tensor k = test_node(m, "matmul", "k", (symc_tensor[]){x, wk}, 2, NULL, 0);
    int64_t perm[3] = {0, 2, 1};
    symc_attr pe = symc_attr_ints("perm", perm, 3);
    symc_tensor kt = test_node(m, "transpose", "kt", &k, 1, &pe, 1);
    symc_tensor sc = test_node(m, "matmul", "scores", (symc_tensor[]){q, kt}, 2, NULL, 0);
    symc_attr last = symc_attr_int("axis", -1);
    symc_tensor p = test_node(m, "softmax", "probs", &sc, 1, &last, 1);
    symc_tensor o = test_node(m, "matmul", "ctx", (symc_tensor[]){p, x}, 2, NULL, 0);
    symc_tensor r = test_node(m, "add", "res", (symc_tensor[]){o, x}, 2, NULL, 0);
    symc_tensor y = test_node(m, "gelu", "y", &r, 1, NULL, 0);
    symc_mark_output(m, y, &err);
    return finish(m);
}

/* x: f32[B, 4, H, W] -> conv stride 2 -> relu -> ceil-mode max pool -> conv -> global average pool */
static rt_engine *build_cnn(void) {
    symc_error err;
    symc_module *m = symc_module_create("cnn", &err);
    symc_dim B, H, W;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "H", 5, 32, 61, 1, &H, &err);
    symc_declare_symbol(m, "W", 5, 20, 47, 1, &W, &err);
    symc_tensor x;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){B, symc_dim_const(m, 4), H, W}, &x, &err);
    symc_tensor w1 = constant(m, "w1", 4, (int64_t[]){8, 4, 3, 3}), b1 = constant(m, "b1", 1, (int64_t[]){8});
    symc_tensor w2 = constant(m, "w2", 4, (int64_t[]){6, 8, 3, 3});
    int64_t s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1}, k3[2] = {3, 3};
    symc_attr ca[2] = {symc_attr_ints("strides", s2, 2), symc_attr_ints("pads", p1, 4)};
    symc_tensor c1 = test_node(m, "conv2d", "c1", (symc_tensor[]){x, w1, b1}, 3, ca, 2);
    symc_tensor r1 = test_node(m, "relu", "r1", &c1, 1, NULL, 0);
    symc_attr mp[3] = {symc_attr_ints("kernel", k3, 2), symc_attr_ints("strides", s2, 2),
                       symc_attr_int("ceil_mode", 1)};
    symc_tensor pl = test_node(m, "max_pool2d", "pool", &r1, 1, mp, 3);
    symc_attr pa = symc_attr_ints("pads", p1, 4);
    symc_tensor c2 = test_node(m, "conv2d", "c2", (symc_tensor[]){pl, w2}, 2, &pa, 1);
    symc_tensor t2 = test_node(m, "tanh", "t2", &c2, 1, NULL, 0);
    symc_tensor g = test_node(m, "global_avg_pool", "gap", &t2, 1, NULL, 0);
    symc_mark_output(m, g, &err);
    return finish(m);
}

static int rel_ok(sym_rel rel, int64_t a, int64_t b) {
    switch (rel) {
    case SYM_REL_EQ: return a == b;
    case SYM_REL_NE: return a != b;
    case SYM_REL_LE: return a <= b;
    case SYM_REL_LT: return a < b;
    case SYM_REL_DIVISIBLE: return b != 0 && a % b == 0;
    case SYM_REL_BROADCAST: return a == b || a == 1 || b == 1;
    }
    return 0;
}

/* A random binding in range (plus the three declared levels first); 0 when
 * the program fails or a guard rejects it (the runtime would refuse it). */
static int pick_shape(const rt_engine *e, int k, int64_t *vals, int64_t *slots) {
    for (uint32_t s = 0; s < e->n_symbols; s++) {
        const rt_symbol *y = &e->symbols[s];
        int64_t m = y->multiple_of > 1 ? y->multiple_of : 1, lo = (y->min + m - 1) / m, hi = y->max / m;
        vals[s] = k == 0 ? y->min
            : k == 1     ? y->opt
            : k == 2     ? y->max
                         : (lo + (int64_t)(next() % (unsigned)(hi - lo + 1))) * m;
    }
    if (sym_program_eval(e->program, e->program_size, vals, e->n_symbols, slots, e->num_slots, NULL)) return 0;
    for (uint32_t g = 0; g < e->n_guards; g++)
        if (!rel_ok(e->guards[g].rel, slots[e->guards[g].lhs], slots[e->guards[g].rhs])) return 0;
    return 1;
}

static int stack_used, layouts; /* how often the fixed-order layout beat first fit */

/* The decoded slot expressions and the formula against the numeric plans at
 * `samples` shapes, for both schedules and both backends' alignments. */
static size_t naive_first_fit(const rt_engine *e, const rt_lifetimes *l);

static void check_formula(const rt_engine *e, const char *what, int samples, int chain) {
    symc_error err;
    sym_table *t = NULL;
    sym_expr *sx = NULL;
    CHECK_MSG(rt_engine_sym_table(e, &t, &sx, &err) == SYMC_OK, "%s: %s", what, err.msg);
    if (!t) return;
    static const size_t aligns[2] = {64, 256};
    rt_lifetimes l[2];
    sym_expr f[2][2];
    int nsched = e->n_steps ? 2 : 1;
    for (int s = 0; s < nsched; s++) {
        CHECK(rt_lifetimes_compute(e, (rt_schedule)s, &l[s], &err) == SYMC_OK);
        for (int a = 0; a < 2; a++) {
            f[s][a] = SYM_NONE;
            CHECK_MSG(tool_memory_formula(e, &l[s], t, sx, aligns[a], &f[s][a], &err) == SYMC_OK, "%s: %s", what,
                      err.msg);
            if (getenv("SYMC_TEST_PRINT_FORMULA")) {
                char buf[4096];
                sym_print(t, f[s][a], buf, sizeof buf);
                printf("%s %s align %zu: %s\n", what, s ? "steps" : "nodes", aligns[a], buf);
            }
        }
    }
    int64_t vals[16], *slots = malloc(((size_t)e->num_slots + 1) * sizeof *slots);
    size_t *off = malloc(((size_t)e->n_tensors + 1) * sizeof *off);
    CHECK(e->n_symbols <= 16 && slots && off);
    int tried = 0;
    for (int k = 0; k < samples; k++) {
        if (!pick_shape(e, k, vals, slots)) continue;
        tried++;
        int bad = 0;
        for (uint32_t i = 0; i < e->num_slots; i++) {
            int64_t v = 0;
            if (sym_eval(t, sx[i], vals, e->n_symbols, &v, &err) || v != slots[i]) bad++;
        }
        CHECK_MSG(bad == 0, "%s: %d slot expressions disagree with the program", what, bad);
        for (int s = 0; s < nsched; s++)
            for (int a = 0; a < 2; a++) {
                size_t total = 0, flat = 0;
                int64_t fv = -1;
                if (f[s][a] == SYM_NONE) continue;
                CHECK(rt_plan_layout(e, &l[s], slots, aligns[a], off, &total, &err) == SYMC_OK);
                size_t naive = naive_first_fit(e, &l[s]);
                CHECK_MSG(naive == l[s].fit_total, "%s: first fit %zu, the naive first fit %zu", what, l[s].fit_total,
                          naive);
                CHECK_MSG(sym_eval(t, f[s][a], vals, e->n_symbols, &fv, &err) == SYMC_OK, "%s", err.msg);
                CHECK_MSG(fv >= 0 && (size_t)fv == l[s].stack_total, "%s: formula %lld, fixed-order plan %zu", what,
                          (long long)fv, l[s].stack_total);
                CHECK_MSG(total <= (size_t)fv &&
                              total == (l[s].fit_total < l[s].stack_total ? l[s].fit_total : l[s].stack_total),
                          "%s: layout %zu, formula %lld", what, total, (long long)fv);
                stack_used += l[s].stack_total < l[s].fit_total;
                layouts++;
                if (k == 1 && aligns[a] == 256)
                    CHECK_MSG(l[s].stack_total <= l[s].fit_total, "%s at opt: fixed order %zu > first fit %zu", what,
                              l[s].stack_total, l[s].fit_total);
                /* the layout used: no overlap between tensors alive together */
                int overlaps = 0, outside = 0;
                for (uint32_t x = 0; x < e->n_tensors; x++) {
                    if (l[s].first[x] == RT_NONE) continue;
                    size_t sa = bytes_at(e, x, slots);
                    flat += (sa + aligns[a] - 1) / aligns[a] * aligns[a];
                    if (off[x] % aligns[a] || off[x] + sa > total) outside++;
                    for (uint32_t y = x + 1; y < e->n_tensors; y++) {
                        if (l[s].first[y] == RT_NONE) continue;
                        int alive = !(l[s].last[x] < l[s].first[y] || l[s].last[y] < l[s].first[x]);
                        size_t sb = bytes_at(e, y, slots);
                        if (alive && sa && sb && off[x] < off[y] + sb && off[y] < off[x] + sa) overlaps++;
                    }
                }
                CHECK_MSG(overlaps == 0 && outside == 0, "%s: %d overlapping pairs, %d outside", what, overlaps,
                          outside);
                CHECK(total <= flat);
                /* a chain's fixed order reuses too: two buffers on the reference schedule */
                if (chain && s == RT_SCHEDULE_NODES) {
                    size_t one = ((size_t)vals[0] * 16 * 4 + aligns[a] - 1) / aligns[a] * aligns[a];
                    CHECK_MSG((size_t)fv <= 2 * one, "%s: chain formula %lld at B=%lld", what, (long long)fv,
                              (long long)vals[0]);
                }
            }
    }
    CHECK_MSG(tried >= 3, "%s: only %d shapes passed the guards", what, tried);
    for (int s = 0; s < nsched; s++) rt_lifetimes_free(&l[s]);
    free(slots);
    free(off);
    free(sx);
    sym_table_free(t);
}

/* First fit by its definition, for comparison with rt_plan_layout's: the
 * workspace tensors largest first (ties by index), each at the lowest of 0
 * and the ends of the placed tensors alive with it where it overlaps none of
 * them; the sizes are the ones the last rt_plan_layout left in l->size.
 * Cubic, for small engines. Returns the total. */
static size_t naive_first_fit(const rt_engine *e, const rt_lifetimes *l) {
    uint32_t n = 0, *o = malloc((e->n_tensors + 1) * sizeof *o);
    size_t *at = malloc((e->n_tensors + 1) * sizeof *at), total = 0;
    char *placed = calloc(e->n_tensors + 1, 1);
    if (!o || !at || !placed) {
        free(o), free(at), free(placed);
        return SIZE_MAX;
    }
    for (uint32_t i = 0; i < e->n_tensors; i++)
        if (l->first[i] != RT_NONE) o[n++] = i;
    for (uint32_t a = 0; a < n; a++) /* selection sort: size descending, index ascending */
        for (uint32_t b = a + 1; b < n; b++)
            if (l->size[o[b]] > l->size[o[a]] || (l->size[o[b]] == l->size[o[a]] && o[b] < o[a])) {
                uint32_t x = o[a];
                o[a] = o[b], o[b] = x;
            }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t t = o[k];
        size_t best = SIZE_MAX;
        for (uint32_t c = 0; c <= n; c++) { /* candidates: 0, then each placed tensor's end */
            size_t cand = 0;
            if (c < n) {
                if (!placed[o[c]]) continue;
                cand = at[o[c]] + l->size[o[c]];
            }
            if (cand >= best) continue;
            int ok = 1;
            for (uint32_t d = 0; d < n && ok; d++) {
                uint32_t u = o[d];
                if (!placed[u] || l->last[u] < l->first[t] || l->last[t] < l->first[u]) continue;
                ok = !(cand < at[u] + l->size[u] && at[u] < cand + l->size[t]);
            }
            if (ok) best = cand;
        }
        at[t] = best;
        placed[t] = 1;
        if (best + l->size[t] > total) total = best + l->size[t];
    }
    free(o), free(at), free(placed);
    return total;
}

/* A hand-made engine: N bool tensors of rank 1 with random sizes (constants,
 * B + c, c*B) and random lifetimes over N nodes, one symbol B; no compiler
 * needed, so hundreds of them are cheap. */
static void check_random_lifetimes(int trial) {
    enum { N = 24 };
    symc_error err;
    sym_table *t = sym_table_new();
    sym_id B;
    sym_symbol_info info = {"B", 1, 7, 50, 1, ""};
    CHECK(sym_symbol_new(t, &info, &B, &err) == SYMC_OK);
    sym_expr size_expr[N], b = sym_var(t, B);
    for (int i = 0; i < N; i++) {
        unsigned kind = next() % 4, c = 1 + next() % 300;
        size_expr[i] = kind == 0 ? sym_const(t, c) : kind == 1 ? sym_add_const(t, b, c) : sym_scale(t, b, c);
    }
    uint8_t *code = NULL;
    size_t code_size = 0;
    CHECK(sym_program_compile(t, size_expr, N, &code, &code_size, &err) == SYMC_OK);
    rt_symbol sym = {"B", 1, 7, 50, 1};
    rt_tensor tensors[N];
    rt_node nodes[N];
    uint32_t born[N], dies[N], out_list[N], in_list[N], oa = 0, ia = 0;
    memset(nodes, 0, sizeof nodes);
    for (uint32_t i = 0; i < N; i++) {
        tensors[i] = (rt_tensor){"t", SYMC_BOOL, 1, {i}, RT_NONE};
        born[i] = next() % N; /* written by node born[i], last read by node dies[i] */
        dies[i] = born[i] + next() % (N / 3);
        if (dies[i] >= N) dies[i] = N - 1;
    }
    for (uint32_t nd = 0; nd < N; nd++) {
        nodes[nd] = (rt_node){
            .op = IR_OP_IDENTITY, .name = "n", .source = "", .out = out_list + oa, .in = in_list + ia};
        for (uint32_t i = 0; i < N; i++) {
            if (born[i] == nd) out_list[oa + nodes[nd].n_out++] = i;
            if (dies[i] == nd) in_list[ia + nodes[nd].n_in++] = i;
        }
        oa += nodes[nd].n_out;
        ia += nodes[nd].n_in;
    }
    rt_engine e;
    memset(&e, 0, sizeof e);
    e.symbols = &sym;
    e.n_symbols = 1;
    e.program = code;
    e.program_size = code_size;
    e.num_slots = N;
    e.tensors = tensors;
    e.n_tensors = N;
    e.nodes = nodes;
    e.n_nodes = N;
    char what[32];
    snprintf(what, sizeof what, "random lifetimes %d", trial);
    check_formula(&e, what, 24, 0);
    free(code);
    sym_table_free(t);
}

int main(void) {
    for (int g = 0; g < 16; g++) { /* each graph is one NVRTC compile */
        int chain = g % 3 == 0, n = 2 + (int)(next() % 40);
        rt_engine *e = build(n, chain);
        if (!e) continue;
        for (int64_t B = 1; B <= 64; B = B * 3 + 1) {
            check_plan(e, RT_SCHEDULE_NODES, B, chain);
            check_plan(e, RT_SCHEDULE_STEPS, B, 0);
        }
        char what[32];
        snprintf(what, sizeof what, "random graph %d", g);
        check_formula(e, what, 40, chain);
        rt_engine_free(e);
    }
    rt_engine *e = build_attention();
    if (e) check_formula(e, "attention", 200, 0);
    rt_engine_free(e);
    e = build_cnn();
    if (e) check_formula(e, "cnn", 200, 0);
    rt_engine_free(e);
    for (int k = 0; k < 200; k++) check_random_lifetimes(k);
    /* both layouts must have been in use, so the overlap checks covered both */
    CHECK_MSG(stack_used > 0 && stack_used < layouts, "fixed order used in %d of %d layouts", stack_used, layouts);
    printf("fixed-order layout smaller than first fit in %d of %d layouts\n", stack_used, layouts);
    return check_report("test_plan");
}
