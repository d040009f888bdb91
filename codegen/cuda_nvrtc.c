/* NVRTC: each part of the generated source compiled once, for the target
 * SM, giving both the cubin (what the runtime loads when the GPU's SM
 * matches) and the PTX NVRTC made on the way (for compute_<sm>: what the
 * driver JIT-compiles on a newer GPU). NVRTC needs no GPU. Options keep
 * true fp32 math (no fast math, spelled out: denormals kept, IEEE division
 * and square root; the kernels are compared with a reference at 1e-4) and
 * C++17 for the prelude's templates; -default-device makes plain helpers
 * device code. A failed compile returns NVRTC's log in the error, cut to
 * fit.
 *
 * cg_nvrtc_compile_modules compiles the parts the target split the source
 * into (codegen/cuda_target.c): first every part is looked up in the build
 * cache (codegen/cache.h) under the SHA-256 of a format tag, NVRTC's
 * version, the options and the source; the misses are then compiled by
 * worker threads (NVRTC programs are independent; as many threads as CPUs
 * are online, at most one a part) while the calling thread says each part's
 * completion through the progress callback (library code never prints, and
 * the callback is only ever called from the caller's thread). Each compiled
 * part is put in the cache; a cache that cannot be written is said once and
 * the build goes on. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvrtc.h>

#include "codegen/build.h"
#include "codegen/cache.h"
#include "codegen/cuda_emit.h"
#include "common/clock.h"

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

#define N_OPTS 6

/* the options after --gpu-architecture (opts[0]): sm_90a for a source with a kernel that needs it */
static void options(const char *opts[N_OPTS], char *arch, size_t cap, uint32_t sm, const char *source) {
    snprintf(arch, cap, "--gpu-architecture=sm_%u%s", sm, sm == 90 && strstr(source, CG_SM90A_MARK) ? "a" : "");
    opts[0] = arch;
    opts[1] = "--std=c++17";
    opts[2] = "-default-device";
    opts[3] = "--ftz=false";
    opts[4] = "--prec-div=true";
    opts[5] = "--prec-sqrt=true";
}

/* one NVRTC output (the cubin or the PTX) into *out, malloc'd */
static symc_status output(nvrtcProgram prog, int cubin, char **out, size_t *size, symc_error *err) {
    size_t n = 0;
    nvrtcResult r = cubin ? nvrtcGetCUBINSize(prog, &n) : nvrtcGetPTXSize(prog, &n);
    if (r != NVRTC_SUCCESS) return symc_error_setf(err, SYMC_ERR_INTERNAL, "NVRTC: %s", nvrtcGetErrorString(r));
    char *buf = malloc(n + 1);
    if (!buf) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading NVRTC's output");
    if ((r = cubin ? nvrtcGetCUBIN(prog, buf) : nvrtcGetPTX(prog, buf)) != NVRTC_SUCCESS) {
        free(buf);
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "NVRTC: %s", nvrtcGetErrorString(r));
    }
    buf[n] = '\0'; /* the PTX's size counts its NUL already; one more costs nothing */
    *out = buf;
    *size = n;
    return SYMC_OK;
}

symc_status cg_nvrtc_compile(const char *source, uint32_t sm, uint32_t n_kernels, uint8_t **cubin, size_t *cubin_size,
                             char **ptx, symc_error *err) {
    *cubin = NULL;
    *ptx = NULL;
    *cubin_size = 0;
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, source, "symc_kernels.cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return symc_error_setf(err, SYMC_ERR_INTERNAL, "nvrtcCreateProgram failed: %s", nvrtcGetErrorString(r));
    const char *opts[N_OPTS];
    char arch[48];
    options(opts, arch, sizeof arch, sm, source);
    r = nvrtcCompileProgram(prog, N_OPTS, opts);
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
    char *bin = NULL, *text = NULL;
    size_t bin_size = 0, text_size = 0;
    st = output(prog, 1, &bin, &bin_size, err);
    if (!st) st = output(prog, 0, &text, &text_size, err);
    nvrtcDestroyProgram(&prog);
    if (st) {
        free(bin);
        return st;
    }
    *cubin = (uint8_t *)bin;
    *cubin_size = bin_size;
    *ptx = text; /* NUL-terminated */
    return SYMC_OK;
}

uint32_t cg_nvrtc_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 1024 ? 1024 : (uint32_t)n;
}

/* ---- the cache ------------------------------------------------------------------------ */
/* The key: everything NVRTC's output depends on. */
static void cache_key(const char *source, uint32_t sm, uint8_t key[CG_HASH_BYTES]) {
    const char *opts[N_OPTS];
    char arch[48], version[32];
    options(opts, arch, sizeof arch, sm, source);
    cg_nvrtc_version(version, sizeof version);
    cg_hash h;
    cg_hash_init(&h);
    cg_hash_str(&h, "symc nvrtc cubin+ptx 1");
    cg_hash_str(&h, version);
    for (int i = 0; i < N_OPTS; i++) cg_hash_str(&h, opts[i]);
    cg_hash_str(&h, source);
    cg_hash_final(&h, key);
}

/* An entry's bytes are checked against their key (cache.c), but whoever can write the folder can
 * write a matching key and digest over anything: an entry is also checked against what it claims
 * to be before use, else compiled again (and rewritten). The cubin is a 64-bit ELF for CUDA
 * (e_machine 190); the PTX targets this sm and defines, as .entry, every kernel the source
 * declares (extern "C" __global__ ... NAME(), and no other. */
static int entry_matches(const char *source, uint32_t sm, const rt_module *m) {
    const uint8_t *c = m->cubin;
    if (m->cubin_size < 64 ||
        memcmp(c,
               "\x7f"
               "ELF",
               4) ||
        c[4] != 2 || (c[18] | (c[19] << 8)) != 190)
        return 0;
    char target[32];
    snprintf(target, sizeof target, ".target sm_%u", sm);
    if (!m->ptx || !strstr(m->ptx, target)) return 0;
    uint32_t declared = 0, entries = 0;
    for (const char *p = m->ptx; (p = strstr(p, ".entry ")); p += 7) entries++;
    static const char decl[] = "extern \"C\" __global__ void ";
    for (const char *p = source; (p = strstr(p, decl)); declared++) {
        p += sizeof decl - 1;
        if (!strncmp(p, "__launch_bounds__(", 18)) p = strchr(p, ')') ? strchr(p, ')') + 1 : p;
        while (*p == ' ') p++;
        size_t n = 0;
        while (p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z') ||
               (p[n] >= '0' && p[n] <= '9'))
            n++;
        char want[300];
        if (!n || n > 250) return 0;
        snprintf(want, sizeof want, ".entry %.*s(", (int)n, p);
        if (!strstr(m->ptx, want)) return 0;
    }
    return declared == entries;
}

/* An entry: the cubin's size (u64, little endian), the cubin, the PTX. */
static int cache_read(const uint8_t key[CG_HASH_BYTES], const char *source, uint32_t sm, rt_module *m) {
    uint8_t *bytes;
    size_t size;
    if (!cg_cache_get("nvrtc", key, &bytes, &size)) return 0;
    uint64_t n = 0;
    for (int i = 0; i < 8 && size >= 8; i++) n |= (uint64_t)bytes[i] << (8 * i);
    uint8_t *cubin = NULL;
    char *ptx = NULL;
    int ok = size >= 8 && n <= size - 8 && (cubin = malloc(n ? n : 1)) && (ptx = malloc(size - 8 - n + 1));
    if (ok) {
        memcpy(cubin, bytes + 8, n);
        memcpy(ptx, bytes + 8 + n, size - 8 - n);
        ptx[size - 8 - n] = '\0';
        *m = (rt_module){cubin, n, ptx};
        ok = entry_matches(source, sm, m);
    }
    if (!ok) {
        free(cubin);
        free(ptx);
        *m = (rt_module){0};
    }
    free(bytes);
    return ok;
}

static int cache_write(const uint8_t key[CG_HASH_BYTES], const rt_module *m, char *why, size_t why_cap) {
    size_t ptx = strlen(m->ptx), size = 8 + m->cubin_size + ptx;
    uint8_t *bytes = malloc(size);
    if (!bytes) return 0; /* not worth failing over */
    for (int i = 0; i < 8; i++) bytes[i] = (uint8_t)((uint64_t)m->cubin_size >> (8 * i));
    memcpy(bytes + 8, m->cubin, m->cubin_size);
    memcpy(bytes + 8 + m->cubin_size, m->ptx, ptx);
    int r = cg_cache_put("nvrtc", key, bytes, size, why, why_cap);
    free(bytes);
    return r;
}

/* ---- parallel compiles ------------------------------------------------------------------ */
typedef struct part {
    const char *source;
    uint32_t n_kernels;
    uint8_t key[CG_HASH_BYTES];
    int cached, done;
    symc_status st;
    symc_error err;
} part;

typedef struct pool {
    part *parts;
    uint32_t n, sm;
    rt_module *out;
    uint32_t next, finished; /* under lock */
    pthread_mutex_t lock;
    pthread_cond_t cond;
} pool;

static void *worker(void *arg) {
    pool *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (p->next < p->n && p->parts[p->next].cached) p->next++;
        uint32_t i = p->next < p->n ? p->next++ : p->n;
        pthread_mutex_unlock(&p->lock);
        if (i == p->n) return NULL;
        part *q = &p->parts[i];
        rt_module *m = &p->out[i];
        uint8_t *cubin;
        char *ptx;
        q->st = cg_nvrtc_compile(q->source, p->sm, q->n_kernels, &cubin, &m->cubin_size, &ptx, &q->err);
        m->cubin = cubin;
        m->ptx = ptx;
        pthread_mutex_lock(&p->lock);
        q->done = 1;
        p->finished++;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
    }
}

symc_status cg_nvrtc_compile_modules(const char *const *sources, const uint32_t *n_kernels, uint32_t n, uint32_t sm,
                                     const cg_options *opt, rt_module *out, uint32_t *cached, symc_error *err) {
    *cached = 0;
    memset(out, 0, n * sizeof *out);
    part *parts = calloc(n ? n : 1, sizeof *parts);
    if (!parts) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory compiling kernels");
    double t0 = symc_now_s();
    uint32_t kernels = 0;
    for (uint32_t i = 0; i < n; i++) {
        parts[i].source = sources[i];
        parts[i].n_kernels = n_kernels[i];
        kernels += n_kernels[i];
        cache_key(sources[i], sm, parts[i].key);
        if ((parts[i].cached = cache_read(parts[i].key, sources[i], sm, &out[i]))) ++*cached;
    }
    uint32_t misses = n - *cached, threads = cg_nvrtc_cpus();
    if (threads > misses) threads = misses;
    cg_progress(opt, "NVRTC: %u kernels in %u module%s for sm_%u (%u cached)%s", kernels, n, n == 1 ? "" : "s", sm,
                *cached, misses ? ", compiling" : "");
    pool p = {.parts = parts, .n = n, .sm = sm, .out = out};
    pthread_t *tids = calloc(threads ? threads : 1, sizeof *tids);
    uint32_t started = 0;
    symc_status st = SYMC_OK;
    if (!tids || pthread_mutex_init(&p.lock, NULL))
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory compiling kernels");
    else if (pthread_cond_init(&p.cond, NULL)) {
        pthread_mutex_destroy(&p.lock);
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory compiling kernels");
    }
    if (!st) {
        for (; started < threads; started++)
            if (pthread_create(&tids[started], NULL, worker, &p)) break;
        if (!started && misses) worker(&p); /* no thread to be had: this one compiles */
        /* the caller's thread says each part as it completes */
        pthread_mutex_lock(&p.lock);
        for (uint32_t said = 0; said < misses;) {
            while (p.finished == said) pthread_cond_wait(&p.cond, &p.lock);
            said = p.finished;
            pthread_mutex_unlock(&p.lock);
            cg_progress(opt, "NVRTC %u/%u modules (%u cached)", *cached + said, n, *cached);
            pthread_mutex_lock(&p.lock);
        }
        pthread_mutex_unlock(&p.lock);
        for (uint32_t i = 0; i < started; i++) pthread_join(tids[i], NULL);
        pthread_cond_destroy(&p.cond);
        pthread_mutex_destroy(&p.lock);
    }
    free(tids);
    /* the first failing part's error, in source order */
    for (uint32_t i = 0; i < n && !st; i++)
        if (!parts[i].cached && parts[i].st) {
            st = parts[i].st;
            if (err) *err = parts[i].err;
        }
    char why[512] = "";
    for (uint32_t i = 0; i < n && !st; i++)
        if (!parts[i].cached && cache_write(parts[i].key, &out[i], why, sizeof why)) {
            cg_progress(opt, "build cache: %s; compiling without it", why);
            break;
        }
    if (st)
        for (uint32_t i = 0; i < n; i++) {
            free((void *)out[i].cubin);
            free((void *)out[i].ptx);
            out[i] = (rt_module){0};
        }
    else if (misses) cg_progress(opt, "NVRTC: %u modules in %.1f s (%u cached)", n, symc_now_s() - t0, *cached);
    free(parts);
    return st;
}
