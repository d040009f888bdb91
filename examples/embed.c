/* embed: the smallest program that embeds the symc runtime in a product.
 *
 *   embed ENGINE.symx NAME:AxBxC [NAME:AxBxC ...]
 *
 * It does what an application does: load the engine once, create a context
 * on a CUDA stream, set the input shapes (checked against the declared
 * ranges), ask the runtime for the output shapes, copy inputs in, enqueue,
 * copy outputs out. It uses the CUDA runtime API (cudaMalloc, cudaMemcpy,
 * streams) as an application would, linked statically; on a machine with no
 * GPU it runs the same engine on the reference backend with host memory.
 * Only public headers are used: symc/symrt.h and cuda_runtime_api.h. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "symc/symrt.h"

#define CHECK_SYMC(call)                             \
    do {                                             \
        if ((call) != SYMC_OK) {                     \
            fprintf(stderr, "embed: %s\n", err.msg); \
            return 1;                                \
        }                                            \
    } while (0)
#define CHECK_CUDA(call)                                                               \
    do {                                                                               \
        cudaError_t rc_ = (call);                                                      \
        if (rc_ != cudaSuccess) {                                                      \
            fprintf(stderr, "embed: %s failed: %s\n", #call, cudaGetErrorString(rc_)); \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: embed ENGINE.symx NAME:AxBxC [NAME:AxBxC ...]\n");
        return 2;
    }
    symc_error err;
    int n_gpus = 0;
    int gpu = cudaGetDeviceCount(&n_gpus) == cudaSuccess && n_gpus > 0;
    printf("embed: %s\n", gpu ? "CUDA backend" : "no GPU here: reference backend on the CPU");

    symrt_engine *engine;
    CHECK_SYMC(symrt_engine_load_file(argv[1], &engine, &err));
    symrt_context *ctx;
    CHECK_SYMC(symrt_context_create(engine, gpu ? SYMRT_BACKEND_CUDA : SYMRT_BACKEND_REF, NULL, &ctx, &err));
    cudaStream_t stream = NULL;
    if (gpu) CHECK_CUDA(cudaStreamCreate(&stream));

    /* shapes: NAME:AxBxC */
    for (int a = 2; a < argc; a++) {
        char name[128];
        const char *colon = strchr(argv[a], ':');
        if (!colon || (size_t)(colon - argv[a]) >= sizeof name) {
            fprintf(stderr, "embed: expected NAME:AxBxC, got '%s'\n", argv[a]);
            return 2;
        }
        memcpy(name, argv[a], (size_t)(colon - argv[a]));
        name[colon - argv[a]] = '\0';
        int64_t dims[8];
        int32_t rank = 0;
        for (const char *p = colon + 1; *p;) {
            char *end;
            long long v = strtoll(p, &end, 10);
            if (end == p || rank == 8 || (*end && *end != 'x')) {
                fprintf(stderr, "embed: bad shape '%s' (expected NAME:AxBxC)\n", argv[a]);
                return 2;
            }
            dims[rank++] = v;
            p = *end ? end + 1 : end;
        }
        CHECK_SYMC(symrt_set_input_shape(ctx, name, dims, rank, &err));
    }

    /* buffers: inputs filled with a ramp, outputs sized from the runtime */
    uint32_t ni = symrt_engine_num_inputs(engine), no = symrt_engine_num_outputs(engine);
    void **host = calloc(ni + no, sizeof *host), **dev = calloc(ni + no, sizeof *dev);
    size_t *bytes = calloc(ni + no, sizeof *bytes);
    for (uint32_t i = 0; i < ni + no; i++) {
        symrt_io_info info;
        CHECK_SYMC(i < ni ? symrt_engine_input(engine, i, &info, &err)
                          : symrt_engine_output(engine, i - ni, &info, &err));
        int64_t dims[8];
        int32_t rank;
        CHECK_SYMC(symrt_get_tensor_shape(ctx, info.name, dims, &rank, &err));
        size_t n = 1;
        for (int d = 0; d < rank; d++) n *= (size_t)dims[d];
        bytes[i] = n * symc_dtype_size(info.dtype);
        host[i] = malloc(bytes[i] ? bytes[i] : 1);
        if (i < ni && info.dtype == SYMC_F32)
            for (size_t k = 0; k < n; k++) ((float *)host[i])[k] = (float)((k % 97) / 97.0 - 0.5);
        else if (i < ni) memset(host[i], 0, bytes[i]);
        if (gpu) {
            CHECK_CUDA(cudaMalloc(&dev[i], bytes[i] ? bytes[i] : 1));
            if (i < ni) CHECK_CUDA(cudaMemcpyAsync(dev[i], host[i], bytes[i], cudaMemcpyHostToDevice, stream));
        } else {
            dev[i] = host[i];
        }
        CHECK_SYMC(symrt_set_tensor_address(ctx, info.name, dev[i], bytes[i], &err));
        printf("  %s %s: [", i < ni ? "input " : "output", info.name);
        for (int d = 0; d < rank; d++) printf("%s%" PRId64, d ? ", " : "", dims[d]);
        printf("]\n");
    }

    CHECK_SYMC(symrt_enqueue(ctx, stream, &err));
    for (uint32_t i = ni; gpu && i < ni + no; i++)
        CHECK_CUDA(cudaMemcpyAsync(host[i], dev[i], bytes[i], cudaMemcpyDeviceToHost, stream));
    if (gpu) CHECK_CUDA(cudaStreamSynchronize(stream));

    for (uint32_t o = 0; o < no; o++) {
        symrt_io_info info;
        symrt_engine_output(engine, o, &info, NULL);
        double sum = 0;
        if (info.dtype == SYMC_F32)
            for (size_t k = 0; k < bytes[ni + o] / 4; k++) sum += ((float *)host[ni + o])[k];
        printf("  output %s: sum %.6g\n", info.name, sum);
    }
    for (uint32_t i = 0; i < ni + no; i++) {
        if (gpu) cudaFree(dev[i]);
        free(host[i]);
    }
    free(host);
    free(dev);
    free(bytes);
    if (gpu) cudaStreamDestroy(stream);
    symrt_context_destroy(ctx);
    symrt_engine_destroy(engine);
    return 0;
}
