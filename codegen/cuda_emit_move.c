/* stub */
#include "codegen/cuda_emit.h"
symc_status cg_emit_move(cg_cuda *c, uint32_t node) { return cg_fail(c, node, SYMC_ERR_UNSUPPORTED, "todo"); }
