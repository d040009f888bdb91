/* The CUDA target (placeholder until the emitters land). */
#include "codegen/target.h"

static symc_status emit(cg_builder *b) {
    b->sm = 90;
    return SYMC_OK;
}
static symc_status compile(cg_builder *b) {
    (void)b;
    return SYMC_OK;
}
const cg_target cg_target_cuda = {"cuda", emit, compile};
