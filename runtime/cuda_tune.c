/* placeholder: replaced by the tuner */
#include "runtime/cuda_internal.h"
symc_status rt_cuda_tune(const uint8_t *bytes, size_t size, uint8_t **out, size_t *out_size,
                         void (*progress)(void *ctx, const char *msg), void *progress_ctx, symc_error *err) {
    (void)bytes, (void)size, (void)progress, (void)progress_ctx;
    if (out) *out = NULL;
    if (out_size) *out_size = 0;
    return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "tuning is not implemented yet");
}
