/* The CUDA backend in a build without the CUDA toolkit (SYMC_WITH_CUDA=OFF):
 * every entry point says so in one line, so programs and the reference
 * backend work unchanged. */
#include "runtime/cuda_backend.h"

#define NOT_BUILT "CUDA backend: this symc was built without CUDA (SYMC_WITH_CUDA=OFF); use the reference backend"

const rt_cuda_driver_api *rt_cuda_driver(symc_error *err) {
    symc_error_setf(err, SYMC_ERR_DEVICE, NOT_BUILT);
    return NULL;
}

symc_status rt_cuda_device_sm(uint32_t *sm, symc_error *err) {
    if (sm) *sm = 0;
    return symc_error_setf(err, SYMC_ERR_DEVICE, NOT_BUILT);
}

symc_status rt_cuda_create(const rt_engine *e, const symrt_allocator *dev_alloc, rt_cuda **out, symc_error *err) {
    (void)e;
    (void)dev_alloc;
    if (out) *out = NULL;
    return symc_error_setf(err, SYMC_ERR_DEVICE, NOT_BUILT);
}

void rt_cuda_destroy(rt_cuda *c) { (void)c; }

symc_status rt_cuda_enqueue(rt_cuda *c, const int64_t *slots, int shape_changed, void *const *addr,
                            const size_t *size, void *stream, symc_error *err) {
    (void)c, (void)slots, (void)shape_changed, (void)addr, (void)size, (void)stream;
    return symc_error_setf(err, SYMC_ERR_DEVICE, NOT_BUILT);
}

symc_status rt_cuda_check_buffer(rt_cuda *c, const char *what, const char *name, const void *ptr, size_t need,
                                 symc_error *err) {
    (void)c, (void)what, (void)name, (void)ptr, (void)need;
    return symc_error_setf(err, SYMC_ERR_DEVICE, NOT_BUILT);
}

symc_status rt_cuda_tune(const uint8_t *bytes, size_t size, uint8_t **out, size_t *out_size,
                         void (*progress)(void *ctx, const char *msg), void *progress_ctx, symc_error *err) {
    (void)bytes, (void)size, (void)progress, (void)progress_ctx;
    if (out) *out = NULL;
    if (out_size) *out_size = 0;
    return symc_error_setf(err, SYMC_ERR_DEVICE, NOT_BUILT);
}
