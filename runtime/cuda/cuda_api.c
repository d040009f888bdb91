/* Loading the CUDA driver, cuBLASLt and cuDNN at run time.
 *
 * Each library is opened with dlopen on first use, inside pthread_once, and
 * every entry point is resolved by its real exported name (cuda.h renames
 * many to _v2 versions through macros; the tables name the exported symbol
 * explicitly). A load either fills a whole table or records one message
 * saying what is missing; that outcome is kept for the process, so a machine
 * without a driver answers every later call with the same line, cheaply.
 * The driver load also initializes CUDA and counts the visible GPUs; the
 * first use of device k (rt_cuda_cu_enter) reads its name and SM and retains
 * its primary context for the life of the process (the runtime shares it
 * with CUDA runtime users in the same process, as cudart does). The tables
 * and the per-device records are the module's only globals: a table never
 * changes after its load, a device record after its first use (made under a
 * mutex, published with a release store).
 *
 * The error helpers turn a library status into one line: the call as
 * written, the status name and string, and file:line. */
#include "runtime/cuda/cuda_api.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cuda/cuda_backend.h"

rt_cu_table rt_cuda_cu;
rt_lt_table rt_cuda_lt;
rt_dnn_table rt_cuda_dnn;

typedef struct lib_state {
    pthread_once_t once;
    symc_status status;
    char msg[SYMC_ERROR_MSG_CAP];
} lib_state;

static lib_state cu_state = {PTHREAD_ONCE_INIT, SYMC_OK, ""};
static lib_state lt_state = {PTHREAD_ONCE_INIT, SYMC_OK, ""};
static lib_state dnn_state = {PTHREAD_ONCE_INIT, SYMC_OK, ""};
static int cu_count;                               /* visible GPUs, set by cu_load */
static rt_cu_device cu_devices[RT_CU_MAX_DEVICES]; /* filled on each one's first use */
static _Atomic int cu_ready[RT_CU_MAX_DEVICES];    /* 1 once cu_devices[k] is filled */
static pthread_mutex_t cu_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_cuda_driver_api driver_api;

static void state_fail(lib_state *s, symc_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void state_fail(lib_state *s, symc_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    s->status = code;
    vsnprintf(s->msg, sizeof s->msg, fmt, ap);
    va_end(ap);
}

/* Resolves every symbol of a table; names the first one missing. */
typedef struct sym_entry {
    void *slot; /* address of the table member */
    const char *name;
} sym_entry;

static const char *resolve(void *lib, const sym_entry *list, size_t n) {
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(lib, list[i].name);
        if (!p) return list[i].name;
        /* object pointer -> function pointer: memcpy keeps it defined C */
        memcpy(list[i].slot, &p, sizeof p);
    }
    return NULL;
}

#define RT_SYM_ENTRY(member, symbol, decl) {(void *)&TABLE.member, symbol},

static void file_line(const char *file, char *buf, size_t cap) {
    const char *r = strstr(file, "runtime/");
    snprintf(buf, cap, "%s", r ? r : file);
}

/* A call text cut short enough to leave room for the status in the message. */
static void call_text(const char *call, char *buf, size_t cap) {
    size_t n = strlen(call);
    if (n < cap) {
        memcpy(buf, call, n + 1);
        return;
    }
    snprintf(buf, cap, "%.*s...)", (int)(cap - 6), call);
}

symc_status rt_cuda_cu_fail(CUresult r, const char *call, const char *file, int line, symc_error *err) {
    const char *name = NULL, *str = NULL;
    if (rt_cuda_cu.GetErrorName) rt_cuda_cu.GetErrorName(r, &name);
    if (rt_cuda_cu.GetErrorString) rt_cuda_cu.GetErrorString(r, &str);
    char c[200], f[128];
    call_text(call, c, sizeof c);
    file_line(file, f, sizeof f);
    symc_status code = r == CUDA_ERROR_OUT_OF_MEMORY ? SYMC_ERR_NOMEM : SYMC_ERR_DEVICE;
    return symc_error_setf(err, code, "%s failed: %s (%s) at %s:%d", c, name ? name : "CUDA_ERROR_?",
                           str ? str : "unknown error", f, line);
}

symc_status rt_cuda_lt_fail(cublasStatus_t r, const char *call, const char *file, int line, symc_error *err) {
    const char *name = rt_cuda_lt.GetStatusName ? rt_cuda_lt.GetStatusName(r) : NULL;
    const char *str = rt_cuda_lt.GetStatusString ? rt_cuda_lt.GetStatusString(r) : NULL;
    char c[200], f[128];
    call_text(call, c, sizeof c);
    file_line(file, f, sizeof f);
    symc_status code = r == CUBLAS_STATUS_ALLOC_FAILED ? SYMC_ERR_NOMEM : SYMC_ERR_DEVICE;
    return symc_error_setf(err, code, "%s failed: %s (%s) at %s:%d", c, name ? name : "CUBLAS_STATUS_?",
                           str ? str : "unknown error", f, line);
}

symc_status rt_cuda_dnn_fail(cudnnStatus_t r, const char *call, const char *file, int line, symc_error *err) {
    const char *str = rt_cuda_dnn.GetErrorString ? rt_cuda_dnn.GetErrorString(r) : NULL;
    char c[200], f[128];
    call_text(call, c, sizeof c);
    file_line(file, f, sizeof f);
    symc_status code = r == CUDNN_STATUS_ALLOC_FAILED ? SYMC_ERR_NOMEM : SYMC_ERR_DEVICE;
    return symc_error_setf(err, code, "%s failed: %s (code %d) at %s:%d", c, str ? str : "CUDNN_STATUS_?", (int)r, f,
                           line);
}

/* ---- the driver ------------------------------------------------------------ */

static void cu_load(void) {
    lib_state *s = &cu_state;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        state_fail(s, SYMC_ERR_DEVICE,
                   "CUDA backend: cannot load libcuda.so.1 (no NVIDIA driver on this machine?): %s; use the "
                   "reference backend",
                   why ? why : "not found");
        return;
    }
#define TABLE rt_cuda_cu
    const sym_entry list[] = {RT_CU_FUNCS(RT_SYM_ENTRY)};
#undef TABLE
    const char *missing = resolve(lib, list, sizeof list / sizeof list[0]);
    if (missing) {
        memset(&rt_cuda_cu, 0, sizeof rt_cuda_cu);
        state_fail(s, SYMC_ERR_DEVICE,
                   "CUDA backend: libcuda.so.1 has no '%s' (the NVIDIA driver is too old for CUDA 13?)", missing);
        return;
    }
    symc_error e = {0};
    int count = 0;
    symc_status st = RT_CU(&e, Init, (0));
    if (!st) st = RT_CU(&e, DeviceGetCount, (&count));
    if (st) {
        state_fail(s, st, "CUDA backend: cannot initialize the driver: %s", e.msg);
        return;
    }
    if (count < 1) {
        state_fail(s, SYMC_ERR_DEVICE, "CUDA backend: the driver sees no GPU; use the reference backend");
        return;
    }
    cu_count = count < RT_CU_MAX_DEVICES ? count : RT_CU_MAX_DEVICES;
    /* the library stays loaded for the process: the tables point into it */
}

/* Device k's record and primary context, on its first use. */
static symc_status device_open(int k, symc_error *err) {
    pthread_mutex_lock(&cu_dev_lock);
    symc_status st = SYMC_OK;
    if (!atomic_load_explicit(&cu_ready[k], memory_order_relaxed)) {
        rt_cu_device *d = &cu_devices[k];
        int major = 0, minor = 0;
        st = RT_CU(err, DeviceGet, (&d->dev, k));
        if (!st) st = RT_CU(err, DeviceGetName, (d->name, (int)sizeof d->name, d->dev));
        if (!st) st = RT_CU(err, DeviceGetAttribute, (&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev));
        if (!st) st = RT_CU(err, DeviceGetAttribute, (&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev));
        if (!st) st = RT_CU(err, DeviceGetAttribute, (&d->sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev));
        if (!st) st = RT_CU(err, DriverGetVersion, (&d->driver_version));
        if (!st) st = RT_CU(err, DevicePrimaryCtxRetain, (&d->ctx, d->dev));
        if (st) symc_error_prefix(err, "CUDA backend: cannot initialize GPU %d", k);
        else {
            d->name[sizeof d->name - 1] = '\0';
            d->sm = (uint32_t)(major * 10 + minor);
            d->ordinal = k;
            atomic_store_explicit(&cu_ready[k], 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&cu_dev_lock);
    return st;
}

symc_status rt_cuda_device_count(int *count, symc_error *err) {
    *count = 0;
    pthread_once(&cu_state.once, cu_load);
    if (cu_state.status) return symc_error_setf(err, cu_state.status, "%s", cu_state.msg);
    *count = cu_count;
    return SYMC_OK;
}

symc_status rt_cuda_cu_enter(int device, const rt_cu_device **dev, symc_error *err) {
    pthread_once(&cu_state.once, cu_load);
    if (cu_state.status) return symc_error_setf(err, cu_state.status, "%s", cu_state.msg);
    if (device < 0 || device >= cu_count)
        return symc_error_setf(err, SYMC_ERR_INVALID_ARG,
                               "CUDA backend: no GPU %d: this process sees %d (0..%d; CUDA_VISIBLE_DEVICES chooses "
                               "which)",
                               device, cu_count, cu_count - 1);
    symc_status st;
    if (!atomic_load_explicit(&cu_ready[device], memory_order_acquire) && (st = device_open(device, err))) return st;
    const rt_cu_device *d = &cu_devices[device];
    if ((st = RT_CU(err, CtxSetCurrent, (d->ctx)))) return st;
    if (dev) *dev = d;
    return SYMC_OK;
}

symc_status rt_cuda_cu_use(const rt_cu_device *d, symc_error *err) { return RT_CU(err, CtxSetCurrent, (d->ctx)); }

/* ---- cuBLASLt and cuDNN ---------------------------------------------------- */

/* The loader's search path first; then where the CUDA toolkit and the
 * distribution packages put them, for machines where nobody ran ldconfig.
 * *why keeps the first dlerror, the one that explains the failure. */
static void *open_lib(const char *name, char *why, size_t cap) {
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
    const char *e = dlerror();
    snprintf(why, cap, "%s", e ? e : "not found");
    static const char *const dirs[] = {"/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/",
                                       "/usr/lib/x86_64-linux-gnu/"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s%s", dirs[i], name);
        if ((lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return lib;
    }
    return NULL;
}

static void lt_load(void) {
    char why[256];
    void *lib = open_lib("libcublasLt.so.13", why, sizeof why);
    if (!lib) {
        state_fail(&lt_state, SYMC_ERR_DEVICE,
                   "CUDA backend: cannot load libcublasLt.so.13 (cuBLAS 13 is not installed or not on the library "
                   "path): %s",
                   why);
        return;
    }
#define TABLE rt_cuda_lt
    const sym_entry list[] = {RT_LT_FUNCS(RT_SYM_ENTRY)};
#undef TABLE
    const char *missing = resolve(lib, list, sizeof list / sizeof list[0]);
    if (missing) {
        memset(&rt_cuda_lt, 0, sizeof rt_cuda_lt);
        state_fail(&lt_state, SYMC_ERR_DEVICE, "CUDA backend: libcublasLt.so.13 has no '%s'", missing);
    }
}

static void dnn_load(void) {
    char why[256];
    void *lib = open_lib("libcudnn.so.9", why, sizeof why);
    if (!lib) {
        state_fail(&dnn_state, SYMC_ERR_DEVICE,
                   "CUDA backend: cannot load libcudnn.so.9 (cuDNN 9 is not installed or not on the library path): "
                   "%s",
                   why);
        return;
    }
#define TABLE rt_cuda_dnn
    const sym_entry list[] = {RT_DNN_FUNCS(RT_SYM_ENTRY)};
#undef TABLE
    const char *missing = resolve(lib, list, sizeof list / sizeof list[0]);
    if (missing) {
        memset(&rt_cuda_dnn, 0, sizeof rt_cuda_dnn);
        state_fail(&dnn_state, SYMC_ERR_DEVICE, "CUDA backend: libcudnn.so.9 has no '%s'", missing);
        return;
    }
    /* the legacy convolution API this backend uses is stable across 9.x;
     * refuse an older major version loudly rather than misbehave */
    size_t v = rt_cuda_dnn.GetVersion();
    if (v < 90000) {
        memset(&rt_cuda_dnn, 0, sizeof rt_cuda_dnn);
        state_fail(&dnn_state, SYMC_ERR_DEVICE, "CUDA backend: libcudnn.so.9 reports version %zu, need 9.x", v);
    }
}

symc_status rt_cuda_lt_load(symc_error *err) {
    pthread_once(&lt_state.once, lt_load);
    if (lt_state.status) return symc_error_setf(err, lt_state.status, "%s", lt_state.msg);
    return SYMC_OK;
}

symc_status rt_cuda_dnn_load(symc_error *err) {
    pthread_once(&dnn_state.once, dnn_load);
    if (dnn_state.status) return symc_error_setf(err, dnn_state.status, "%s", dnn_state.msg);
    return SYMC_OK;
}

/* cublasLt: major*10000 + minor*100 + patch; cuDNN 9: major*10000 + minor*100 + patch */
static void version_string(size_t v, char *buf, size_t cap) {
    snprintf(buf, cap, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
}
void rt_cuda_lt_version(char *buf, size_t cap) {
    if (rt_cuda_lt_load(NULL) == SYMC_OK) version_string(rt_cuda_lt.GetVersion(), buf, cap);
    else snprintf(buf, cap, "none");
}
void rt_cuda_dnn_version(char *buf, size_t cap) {
    if (rt_cuda_dnn_load(NULL) == SYMC_OK) version_string(rt_cuda_dnn.GetVersion(), buf, cap);
    else snprintf(buf, cap, "none");
}

/* ---- the tools' view: rt_cuda_driver_api -------------------------------------
 * Wrappers rather than the raw pointers: the declared signatures use
 * uint64_t/void* (no cuda.h for the tools), and each wrapper makes the
 * primary context current so the tools may call from any thread. */

static int enter_quiet(void) { return (int)rt_cuda_cu.CtxSetCurrent(cu_devices[0].ctx); }
#define ENTER()                 \
    do {                        \
        int r_ = enter_quiet(); \
        if (r_) return r_;      \
    } while (0)

static int w_mem_alloc(uint64_t *dptr, size_t bytes) {
    ENTER();
    CUdeviceptr p = 0;
    int r = (int)rt_cuda_cu.MemAlloc(&p, bytes);
    *dptr = (uint64_t)p;
    return r;
}
static int w_mem_free(uint64_t dptr) {
    ENTER();
    return (int)rt_cuda_cu.MemFree((CUdeviceptr)dptr);
}
static int w_memcpy_htod(uint64_t dst, const void *src, size_t bytes) {
    ENTER();
    return (int)rt_cuda_cu.MemcpyHtoD((CUdeviceptr)dst, src, bytes);
}
static int w_memcpy_dtoh(void *dst, uint64_t src, size_t bytes) {
    ENTER();
    return (int)rt_cuda_cu.MemcpyDtoH(dst, (CUdeviceptr)src, bytes);
}
static int w_memset_d8(uint64_t dst, unsigned char v, size_t bytes) {
    ENTER();
    return (int)rt_cuda_cu.MemsetD8((CUdeviceptr)dst, v, bytes);
}
static int w_stream_create(void **stream, unsigned flags) {
    ENTER();
    CUstream s = NULL;
    int r = (int)rt_cuda_cu.StreamCreate(&s, flags);
    *stream = s;
    return r;
}
static int w_stream_destroy(void *stream) {
    ENTER();
    return (int)rt_cuda_cu.StreamDestroy((CUstream)stream);
}
static int w_stream_synchronize(void *stream) {
    ENTER();
    return (int)rt_cuda_cu.StreamSynchronize((CUstream)stream);
}
static int w_event_create(void **event, unsigned flags) {
    ENTER();
    CUevent ev = NULL;
    int r = (int)rt_cuda_cu.EventCreate(&ev, flags);
    *event = ev;
    return r;
}
static int w_event_destroy(void *event) {
    ENTER();
    return (int)rt_cuda_cu.EventDestroy((CUevent)event);
}
static int w_event_record(void *event, void *stream) {
    ENTER();
    return (int)rt_cuda_cu.EventRecord((CUevent)event, (CUstream)stream);
}
static int w_event_synchronize(void *event) {
    ENTER();
    return (int)rt_cuda_cu.EventSynchronize((CUevent)event);
}
static int w_event_elapsed_time(float *ms, void *start, void *end) {
    ENTER();
    return (int)rt_cuda_cu.EventElapsedTime(ms, (CUevent)start, (CUevent)end);
}
static int w_ctx_synchronize(void) {
    ENTER();
    return (int)rt_cuda_cu.CtxSynchronize();
}
static int w_mem_get_info(size_t *free_bytes, size_t *total_bytes) {
    ENTER();
    return (int)rt_cuda_cu.MemGetInfo(free_bytes, total_bytes);
}

static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static void api_fill(void) {
    rt_cuda_driver_api *a = &driver_api;
    a->mem_alloc = w_mem_alloc;
    a->mem_free = w_mem_free;
    a->memcpy_htod = w_memcpy_htod;
    a->memcpy_dtoh = w_memcpy_dtoh;
    a->memset_d8 = w_memset_d8;
    a->stream_create = w_stream_create;
    a->stream_destroy = w_stream_destroy;
    a->stream_synchronize = w_stream_synchronize;
    a->event_create = w_event_create;
    a->event_destroy = w_event_destroy;
    a->event_record = w_event_record;
    a->event_synchronize = w_event_synchronize;
    a->event_elapsed_time = w_event_elapsed_time;
    a->ctx_synchronize = w_ctx_synchronize;
    a->mem_get_info = w_mem_get_info;
    snprintf(a->device_name, sizeof a->device_name, "%s", cu_devices[0].name);
    a->sm = cu_devices[0].sm;
    a->driver_version = cu_devices[0].driver_version;
}

const rt_cuda_driver_api *rt_cuda_driver(symc_error *err) {
    if (rt_cuda_cu_enter(0, NULL, err)) return NULL;
    pthread_once(&api_once, api_fill);
    return &driver_api;
}

symc_status rt_cuda_device_sm(uint32_t *sm, symc_error *err) {
    if (!sm) return symc_error_setf(err, SYMC_ERR_INVALID_ARG, "rt_cuda_device_sm: NULL argument");
    *sm = 0;
    const rt_cu_device *d;
    symc_status st = rt_cuda_cu_enter(0, &d, err);
    if (st) return st;
    *sm = d->sm;
    return SYMC_OK;
}
