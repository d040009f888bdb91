/* consumer: a program built against an installed symc, outside this source
 * tree (tests/install/install_test.sh builds it with find_package(symc) and
 * with pkg-config). Only the installed public header is used.
 *
 *   consumer ENGINE.symx NAME:AxBxC [NAME:AxBxC ...]
 *
 * It loads the engine, creates a reference-backend context, sets the input
 * shapes, sizes every tensor from the runtime, runs once with host buffers
 * (inputs a fixed ramp) and prints each output's shape and whether all its
 * values are finite; exit 0 only when the run succeeded and they are. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <symc/symrt.h>

static int fail(const char *what, const symc_error *err) {
    fprintf(stderr, "consumer: %s: %s\n", what, err->msg);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: consumer ENGINE.symx NAME:AxBxC [NAME:AxBxC ...]\n");
        return 2;
    }
    symc_error err;
    symrt_engine *engine;
    if (symrt_engine_load_file(argv[1], &engine, &err) != SYMC_OK) return fail("load", &err);
    symrt_context *ctx;
    if (symrt_context_create(engine, SYMRT_BACKEND_REF, NULL, &ctx, &err) != SYMC_OK) return fail("context", &err);
    for (int a = 2; a < argc; a++) {
        char name[128];
        const char *colon = strchr(argv[a], ':');
        if (!colon || (size_t)(colon - argv[a]) >= sizeof name) return 2;
        memcpy(name, argv[a], (size_t)(colon - argv[a]));
        name[colon - argv[a]] = '\0';
        int64_t dims[8];
        int32_t rank = 0;
        for (const char *p = colon + 1; *p && rank < 8;) {
            char *end;
            dims[rank++] = strtoll(p, &end, 10);
            p = *end == 'x' ? end + 1 : end;
            if (end == p && *p) return 2;
        }
        if (symrt_set_input_shape(ctx, name, dims, rank, &err) != SYMC_OK) return fail("input shape", &err);
    }
    uint32_t ni = symrt_engine_num_inputs(engine), no = symrt_engine_num_outputs(engine);
    void **buf = calloc(ni + no, sizeof *buf);
    size_t *count = calloc(ni + no, sizeof *count);
    int bad = 0;
    for (uint32_t i = 0; i < ni + no; i++) {
        symrt_io_info info;
        if ((i < ni ? symrt_engine_input(engine, i, &info, &err) : symrt_engine_output(engine, i - ni, &info, &err)) !=
            SYMC_OK)
            return fail("io info", &err);
        int64_t dims[8];
        int32_t rank;
        if (symrt_get_tensor_shape(ctx, info.name, dims, &rank, &err) != SYMC_OK) return fail("shape", &err);
        size_t n = 1;
        for (int32_t d = 0; d < rank; d++) n *= (size_t)dims[d];
        count[i] = info.dtype == SYMC_F32 ? n : 0;
        size_t bytes = n * symc_dtype_size(info.dtype);
        buf[i] = calloc(bytes ? bytes : 1, 1);
        for (size_t k = 0; i < ni && k < count[i]; k++) ((float *)buf[i])[k] = (float)((double)(k % 89) / 89.0 - 0.5);
        if (symrt_set_tensor_address(ctx, info.name, buf[i], bytes, &err) != SYMC_OK) return fail("address", &err);
        if (i >= ni) {
            printf("output %s: [", info.name);
            for (int32_t d = 0; d < rank; d++) printf("%s%" PRId64, d ? ", " : "", dims[d]);
            printf("]\n");
        }
    }
    if (symrt_enqueue(ctx, NULL, &err) != SYMC_OK) return fail("enqueue", &err);
    for (uint32_t o = ni; o < ni + no; o++)
        for (size_t k = 0; k < count[o]; k++)
            if (!isfinite(((float *)buf[o])[k])) bad = 1;
    printf("consumer: ran on the reference backend, outputs %s\n", bad ? "NOT finite" : "finite");
    for (uint32_t i = 0; i < ni + no; i++) free(buf[i]);
    free(buf);
    free(count);
    symrt_context_destroy(ctx);
    symrt_engine_destroy(engine);
    return bad;
}
