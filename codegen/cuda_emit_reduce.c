/* stub */
#include "codegen/cuda_emit.h"
symc_status cg_emit_reduce(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
symc_status cg_emit_softmax(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
symc_status cg_emit_norm(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
symc_status cg_emit_global_avg_pool(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
