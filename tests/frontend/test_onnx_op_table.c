/* The ONNX op table (frontend/onnx/onnx_op_table.c over the families' tables): every family's
 * table sorted by name with no name twice (fe_onnx_find_op bisects each), no name in two
 * families, every op found by fe_onnx_find_op to its own handler, a name symc does not take (an
 * unknown one, a refused one, a prefix, a different case) not found, and the count of ops. */
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"
#include "tests/check.h"

#define FAMILY(k) {#k, fe_onnx_ops_##k, &fe_onnx_n_ops_##k}
static const struct {
    const char *name;
    const fe_op *ops;
    const uint32_t *n;
} fams[] = {FAMILY(elementwise), FAMILY(norm),      FAMILY(reduce),   FAMILY(index),   FAMILY(einsum),
            FAMILY(conv),        FAMILY(movement),  FAMILY(resize),   FAMILY(quant),   FAMILY(signal),
            FAMILY(loss),        FAMILY(recurrent), FAMILY(sequence), FAMILY(sources), FAMILY(control)};

int main(void) {
    uint32_t total = 0;
    for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
        CHECK_MSG(*fams[f].n > 0, "family %s has no ops", fams[f].name);
        for (uint32_t i = 0; i < *fams[f].n; i++) {
            const fe_op *op = &fams[f].ops[i];
            total++;
            CHECK_MSG(op->name && op->fn, "family %s entry %u is empty", fams[f].name, i);
            if (i)
                CHECK_MSG(strcmp(fams[f].ops[i - 1].name, op->name) < 0,
                          "family %s: '%s' before '%s' (unsorted or twice)", fams[f].name, fams[f].ops[i - 1].name,
                          op->name);
            CHECK_MSG(fe_onnx_find_op(op->name) == op, "'%s' (family %s) not found to its own entry", op->name,
                      fams[f].name);
            for (size_t g = 0; g < f; g++)
                for (uint32_t j = 0; j < *fams[g].n; j++)
                    CHECK_MSG(strcmp(fams[g].ops[j].name, op->name), "'%s' in both %s and %s", op->name, fams[g].name,
                              fams[f].name);
        }
    }
    CHECK_MSG(total == 165, "%u ops in the tables (165 when this test was written: update it with the op list)", total);
    static const char *const absent[] = {"",    "Relu6", "Bernoulli", "RandomNormal", "relu",
                                         "Rel", "Reluu", "Zzz",       "Aaa"};
    for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++)
        CHECK_MSG(fe_onnx_find_op(absent[i]) == NULL, "'%s' found", absent[i]);
    CHECK(fe_onnx_find_op("Relu") && fe_onnx_find_op("Where") && fe_onnx_find_op("Abs") && fe_onnx_find_op("Xor"));
    return check_report("frontend.onnx_op_table");
}
