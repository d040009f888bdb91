/* placeholder: replaced by the cuDNN implementation */
#include "runtime/cuda_internal.h"
symc_status rt_conv_create(rt_cuda *c, symc_error *err) { (void)c; return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "CONV steps are not supported yet"); }
void rt_conv_destroy(rt_cuda *c) { (void)c; }
symc_status rt_conv_run(rt_cuda *c, uint32_t step, const int64_t *slots, CUstream stream, symc_error *err) { (void)c; (void)step; (void)slots; (void)stream; return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "CONV"); }
