/* Activation memory planning (runtime/plan.c) on random graphs: for both
 * schedules and many shapes, brute force checks that no two tensors alive at
 * the same time share a byte, that every planned tensor fits inside the
 * workspace, that the workspace is no larger than the no-reuse sum, and that
 * a chain really reuses (two buffers, not n). The numbers computed in a
 * shared workspace are checked end to end by the e2e tests (reference
 * backend vs onnxruntime) and the GPU tests (CUDA vs reference). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "runtime/engine.h"
#include "runtime/plan.h"
#include "runtime/ref_kernels.h"
#include "symc/symrt.h"
#include "tests/check.h"

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
    size_t n = rt_ref_dtype_size(e->tensors[t].dtype);
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

int main(void) {
    for (int g = 0; g < 16; g++) { /* each graph is one NVRTC compile */
        int chain = g % 3 == 0, n = 2 + (int)(next() % 40);
        rt_engine *e = build(n, chain);
        if (!e) continue;
        for (int64_t B = 1; B <= 64; B = B * 3 + 1) {
            check_plan(e, RT_SCHEDULE_NODES, B, chain);
            check_plan(e, RT_SCHEDULE_STEPS, B, 0);
        }
        rt_engine_free(e);
    }
    return check_report("test_plan");
}
