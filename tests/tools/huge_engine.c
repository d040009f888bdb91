/* huge_engine OUT.symir OUT.symx: y = relu(x), x: f32[B, 128] with B declared
 * in [1, 2^62], so at B = 2^55 the byte size of x (2^64) does not fit in 64
 * bits. The module is written as it is (`symc compile` must refuse it); the
 * engine is written by the code generator directly, skipping the pass
 * pipeline and so its size check, as an engine from an older symc or another
 * program could be: `symc run` and `symc bench` must refuse the size instead
 * of wrapping it. */
#include <stdio.h>

#include "codegen/codegen.h"
#include "symc/symc.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: huge_engine OUT.symir OUT.symx\n");
        return 2;
    }
    symc_error err;
    symc_module *m = symc_module_create("huge", &err);
    symc_dim B;
    symc_tensor x, y;
    cg_options o = cg_default_options();
    o.gpu = 0;
    if (!m || symc_declare_symbol(m, "B", 1, 4, (int64_t)1 << 62, 1, &B, &err) ||
        symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 128)}, &x, &err) ||
        symc_add_node(m, "relu", "act", &x, 1, NULL, 0, &y, 1, &err) || symc_mark_output(m, y, &err) ||
        symc_module_infer_shapes(m, &err) || symc_module_save(m, argv[1], &err) ||
        cg_write_engine(m, &o, argv[2], &err)) {
        fprintf(stderr, "huge_engine: %s\n", m ? err.msg : "out of memory");
        symc_module_destroy(m);
        return 1;
    }
    symc_module_destroy(m);
    return 0;
}
