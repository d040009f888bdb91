/* stub */
#include "codegen/cuda_emit.h"
symc_status cg_emit_pool(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
symc_status cg_emit_conv_direct(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
symc_status cg_emit_matmul_generic(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
