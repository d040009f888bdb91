/* NVRTC: the whole generated source compiled twice, once to a cubin for the
 * target SM (what the runtime loads when the GPU's SM matches) and once to
 * PTX for the matching virtual architecture (what the driver JIT-compiles
 * on a newer GPU). NVRTC needs no GPU. Options keep true fp32 math (no fast
 * math, spelled out: denormals kept, IEEE division and square root; the kernels are compared with a reference at 1e-4) and C++17 for
 * the prelude's templates; -default-device makes plain helpers device code.
 * A failed compile returns NVRTC's log in the error, cut to fit. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "codegen/cuda_emit.h"

void cg_nvrtc_version(char *buf, size_t cap) {
    int major = 0, minor = 0;
    if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) major = minor = 0;
    snprintf(buf, cap, "%d.%d", major, minor);
}

symc_status cg_nvrtc_parse_arch(const char *arch, uint32_t *sm, symc_error *err) {
    const char *p = arch;
    if (!strncmp(p, "sm_", 3)) p += 3;
    else if (!strncmp(p, "compute_", 8)) p += 8;
    unsigned long v = 0;
    int digits = 0;
    while (isdigit((unsigned char)*p) && digits < 6) v = v * 10 + (unsigned long)(*p++ - '0'), digits++;
    if (*p == 'a' || *p == 'f') p++; /* arch-specific variants: the kernels need only the base SM */
    int n = 0;
    int *archs = NULL;
    char list[400] = "";
    if (nvrtcGetNumSupportedArchs(&n) == NVRTC_SUCCESS && n > 0 && (archs = malloc((size_t)n * sizeof *archs)) &&
        nvrtcGetSupportedArchs(archs) == NVRTC_SUCCESS) {
        size_t len = 0;
        for (int i = 0; i < n && len < sizeof list; i++) {
            int w = snprintf(list + len, sizeof list - len, "%ssm_%d", i ? ", " : "", archs[i]);
            if (w < 0) break;
            len += (size_t)w;
        }
    } else {
        free(archs);
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "NVRTC could not list its supported architectures");
    }
    char version[32];
    cg_nvrtc_version(version, sizeof version);
    int supported = 0;
    for (int i = 0; i < n; i++) supported |= digits && *p == '\0' && (unsigned long)archs[i] == v;
    free(archs);
    if (!supported)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "--arch '%s' is not an architecture NVRTC %s can compile for; supported: %s", arch,
                               version, list);
    *sm = (uint32_t)v;
    return SYMC_OK;
}

/* one NVRTC run; *out (malloc'd) is the cubin or the PTX */
static symc_status run(const char *source, const char *arch_opt, int want_cubin, uint32_t sm, uint32_t n_kernels,
                       void **out, size_t *size, symc_error *err) {
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, "symc_kernels.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "nvrtcCreateProgram failed: %s", nvrtcGetErrorString(r));
    const char *opts[] = {arch_opt,      "--std=c++17",     "-default-device",
                          "--ftz=false", "--prec-div=true", "--prec-sqrt=true"};
    r = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]), opts);
    symc_status st = SYMC_OK;
    if (r != NVRTC_SUCCESS) {
        size_t log_size = 0;
        char *log = NULL;
        if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size && (log = malloc(log_size + 1)) &&
            nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
            log[log_size] = '\0';
        else if (log) log[0] = '\0';
        /* errors are one line: the log's newlines become spaces */
        for (char *q = log; q && *q; q++)
            if (*q == '\n' || *q == '\r') *q = ' ';
        st = symc_error_setf(err, SYMC_ERR_INTERNAL, "NVRTC failed compiling %u kernels for sm_%u: %.1500s", n_kernels,
                             sm, log && log[0] ? log : nvrtcGetErrorString(r));
        free(log);
        nvrtcDestroyProgram(&prog);
        return st;
    }
    size_t n = 0;
    r = want_cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n);
    char *buf = r == NVRTC_SUCCESS ? malloc(n ? n : 1) : NULL;
    if (r != NVRTC_SUCCESS) st = symc_error_setf(err, SYMC_ERR_INTERNAL, "NVRTC: %s", nvrtcGetErrorString(r));
    else if (!buf) st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading NVRTC's output");
    else if ((r = want_cubin ? nvrtcGetCUBIN(prog, buf) : nvrtcGetPTX(prog, buf)) != NVRTC_SUCCESS)
        st = symc_error_setf(err, SYMC_ERR_INTERNAL, "NVRTC: %s", nvrtcGetErrorString(r));
    nvrtcDestroyProgram(&prog);
    if (st) {
        free(buf);
        return st;
    }
    *out = buf;
    *size = n;
    return SYMC_OK;
}

symc_status cg_nvrtc_compile(const char *source, uint32_t sm, uint32_t n_kernels, uint8_t **cubin, size_t *cubin_size,
                             char **ptx, symc_error *err) {
    char arch[48];
    void *bin = NULL, *text = NULL;
    size_t bin_size = 0, text_size = 0;
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%u", sm);
    symc_status st = run(source, arch, 1, sm, n_kernels, &bin, &bin_size, err);
    if (st) return st;
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%u", sm);
    if ((st = run(source, arch, 0, sm, n_kernels, &text, &text_size, err))) {
        free(bin);
        return st;
    }
    *cubin = bin;
    *cubin_size = bin_size;
    *ptx = text; /* NUL-terminated by NVRTC (the size counts it) */
    return SYMC_OK;
}
