/* The build's dataflow check (cg_check_dataflow, codegen/build_engine.c) on hand-made
 * step lists: a kernel that reads a tensor no earlier step wrote (the fused
 * attention once read a mask piece that another kernel computed in registers
 * and never stored: garbage on the GPU, right on the reference backend) is an
 * internal error naming the step, its node and the tensor; graph inputs and
 * constants are ready from the start; a write through one alias makes every
 * tensor sharing that storage ready; a library step's operands are read and
 * its result written in the slots runtime/engine.h gives; a step reading its
 * own result before writing it (in place) is fine, reading a later step's is
 * not. No GPU and no NVRTC: the steps are never compiled. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/target.h"
#include "ir/ir.h"
#include "runtime/engine.h"
#include "tests/check.h"

/* x (input) -> a = relu(x) -> b = neg(a) -> c = reshape(b) (a view) -> y = abs(c) (output); w a constant */
static symc_module *chain(uint32_t t[6]) {
    symc_error err;
    symc_module *m = symc_module_create("flow", &err);
    symc_dim B = SYMC_DIM_NONE;
    CHECK(m && symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err) == SYMC_OK);
    symc_dim dims[] = {B, symc_dim_const(m, 4)};
    symc_tensor x, a, b, c, y, w;
    float wv[4] = {1, 2, 3, 4};
    int64_t wd[] = {4};
    CHECK(symc_add_input(m, "x", SYMC_F32, 2, dims, &x, &err) == SYMC_OK);
    CHECK(symc_add_constant(m, "w", SYMC_F32, 1, wd, wv, sizeof wv, &w, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "relu", "a", &x, 1, NULL, 0, &a, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "neg", "b", &a, 1, NULL, 0, &b, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "identity", "c", &b, 1, NULL, 0, &c, 1, &err) == SYMC_OK);
    CHECK(symc_add_node(m, "abs", "y", &c, 1, NULL, 0, &y, 1, &err) == SYMC_OK);
    CHECK(symc_mark_output(m, y, &err) == SYMC_OK);
    t[0] = x, t[1] = a, t[2] = b, t[3] = c, t[4] = y, t[5] = w;
    return m;
}

typedef struct steps {
    cg_builder b;
    symc_error err;
    rt_arg args[8][4];
} steps;

/* an empty step list over m; the check names a step's kernel, k_a for step 0, k_b for step 1, ... */
static void begin(steps *s, symc_module *m) {
    static char *names[] = {"k_a", "k_b", "k_y", "k_3", "k_4"};
    memset(s, 0, sizeof *s);
    s->b.m = m;
    s->b.err = &s->err;
    s->b.kernel_names = names;
    s->b.n_kernels = 5;
}

/* a library step of `kind` for node `node` with tensors t (runtime/engine.h's slots) */
static void library(steps *s, uint8_t kind, uint32_t node, const uint32_t t[RT_STEP_MAX_TENSORS]) {
    rt_step st;
    memset(&st, 0, sizeof st);
    st.kind = kind;
    st.node = node;
    memcpy(st.tensors, t, sizeof st.tensors);
    CHECK(cg_add_step(&s->b, &st) == SYMC_OK);
}

/* a kernel step of node `node` reading r[0..nr) and writing wt[0..nw) */
static void kernel(steps *s, uint32_t node, const uint32_t *r, uint32_t nr, const uint32_t *wt, uint32_t nw) {
    rt_step st;
    memset(&st, 0, sizeof st);
    st.kind = RT_STEP_KERNEL;
    st.node = node;
    st.kernel = s->b.n_steps;
    uint8_t out[4];
    rt_arg *a = s->args[s->b.n_steps];
    for (uint32_t i = 0; i < nr + nw; i++) {
        a[i] = (rt_arg){RT_ARG_TENSOR, i < nr ? r[i] : wt[i - nr]};
        out[i] = i >= nr;
    }
    st.args = a;
    st.n_args = nr + nw;
    for (uint32_t i = 0; i < RT_STEP_MAX_TENSORS; i++) st.tensors[i] = RT_NONE;
    CHECK(cg_add_kernel_step(&s->b, &st, out) == SYMC_OK);
}

/* the node named `name` */
static uint32_t node_of(symc_module *m, const char *name) {
    for (uint32_t i = 0; i < m->n_nodes; i++)
        if (!strcmp(m->nodes[i].name, name)) return i;
    CHECK_MSG(0, "no node '%s'", name);
    return 0;
}

static void end(steps *s) {
    for (uint32_t i = 0; i < s->b.n_steps; i++) free((void *)s->b.steps[i].args), free(s->b.arg_out[i]);
    free(s->b.steps);
    free(s->b.arg_out);
    free(s->b.aliases);
}

int main(void) {
    uint32_t t[6];
    symc_module *m = chain(t);
    const uint32_t X = t[0], A = t[1], B = t[2], C = t[3], Y = t[4], W = t[5];
    const uint32_t NA = node_of(m, "a"), NB = node_of(m, "b"), NY = node_of(m, "y");
    steps s;

    /* in order: every read made by an earlier step, an input or a constant */
    begin(&s, m);
    kernel(&s, NA, (uint32_t[]){X, W}, 2, (uint32_t[]){A}, 1);
    kernel(&s, NB, (uint32_t[]){A}, 1, (uint32_t[]){B}, 1);
    CHECK(cg_alias(&s.b, C, B) == SYMC_OK); /* c is a view of b */
    kernel(&s, NY, (uint32_t[]){C}, 1, (uint32_t[]){Y}, 1);
    CHECK(cg_check_dataflow(&s.b) == SYMC_OK);
    end(&s);

    /* b computed inside y's kernel (never stored), but y's kernel reads it from memory */
    begin(&s, m);
    kernel(&s, NA, (uint32_t[]){X}, 1, (uint32_t[]){A}, 1);
    kernel(&s, NY, (uint32_t[]){A, B}, 2, (uint32_t[]){Y}, 1);
    CHECK(cg_check_dataflow(&s.b) == SYMC_ERR_INTERNAL);
    CHECK_CONTAINS(s.err.msg, "step 1 (k_b of node 'y') reads tensor 'b', which no earlier step writes");
    CHECK_CONTAINS(s.err.msg, "its node 'b'");
    end(&s);

    /* a read of a tensor a later step writes */
    begin(&s, m);
    kernel(&s, NB, (uint32_t[]){A}, 1, (uint32_t[]){B}, 1);
    kernel(&s, NA, (uint32_t[]){X}, 1, (uint32_t[]){A}, 1);
    CHECK(cg_check_dataflow(&s.b) == SYMC_ERR_INTERNAL);
    CHECK_CONTAINS(s.err.msg, "reads tensor 'a'");
    end(&s);

    /* the view read before anything wrote its storage; then in place (read and written by one step) */
    begin(&s, m);
    CHECK(cg_alias(&s.b, C, B) == SYMC_OK);
    kernel(&s, NA, (uint32_t[]){C}, 1, (uint32_t[]){Y}, 1);
    CHECK(cg_check_dataflow(&s.b) == SYMC_ERR_INTERNAL);
    CHECK_CONTAINS(s.err.msg, "reads tensor 'c'");
    end(&s);
    begin(&s, m);
    kernel(&s, NA, (uint32_t[]){X}, 1, (uint32_t[]){A}, 1);
    kernel(&s, NB, (uint32_t[]){A}, 1, (uint32_t[]){A}, 1);
    CHECK(cg_check_dataflow(&s.b) == SYMC_OK);
    end(&s);

    /* library steps: a GEMM reads {a, b, c, bias} and writes d; a copy reads src and writes dst */
    begin(&s, m);
    library(&s, RT_STEP_GEMM, NB, (uint32_t[RT_STEP_MAX_TENSORS]){X, W, RT_NONE, RT_NONE, B});
    library(&s, RT_STEP_COPY, NY, (uint32_t[RT_STEP_MAX_TENSORS]){B, Y, RT_NONE, RT_NONE, RT_NONE});
    CHECK(cg_check_dataflow(&s.b) == SYMC_OK);
    end(&s);
    begin(&s, m); /* b operand a: nothing wrote it */
    library(&s, RT_STEP_GEMM, NB, (uint32_t[RT_STEP_MAX_TENSORS]){X, A, RT_NONE, RT_NONE, B});
    CHECK(cg_check_dataflow(&s.b) == SYMC_ERR_INTERNAL);
    CHECK_CONTAINS(s.err.msg, "step 0 (a library call of node 'b') reads tensor 'a'");
    end(&s);

    symc_module_destroy(m);
    return check_report("codegen dataflow");
}
