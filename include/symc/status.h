/* symc status: the one error channel for bad input, shared by every module and
 * both public headers. A call returns a symc_status; when it is not SYMC_OK and
 * the caller passed a symc_error, the error holds the same code and a one-line
 * message naming the input, node, symbol or range at fault. The message lives
 * in a fixed buffer so reporting an error never allocates (and so never fails).
 * Library code never prints and never exits: it fills one of these. */
#ifndef SYMC_STATUS_H
#define SYMC_STATUS_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum symc_status {
    SYMC_OK = 0,
    SYMC_ERR_INVALID_ARG,   /* a caller passed a bad argument (NULL, bad index, bad enum) */
    SYMC_ERR_RANGE,         /* a value outside a declared symbol range or an empty range */
    SYMC_ERR_OVERFLOW,      /* int64 overflow while folding or evaluating */
    SYMC_ERR_DIV_ZERO,      /* division or modulo by zero */
    SYMC_ERR_CONTRADICTION, /* facts that cannot all hold (e.g. equal symbols with disjoint ranges) */
    SYMC_ERR_UNBOUND,       /* a symbol needed for evaluation has no value */
    SYMC_ERR_IO,            /* a file could not be read or written */
    SYMC_ERR_FORMAT,        /* a file or buffer is truncated, corrupt or of another format/version */
    SYMC_ERR_VERIFY,        /* a module or engine breaks an invariant (types, arity, references) */
    SYMC_ERR_NOMEM,         /* an allocation failed */
    SYMC_ERR_UNSUPPORTED,   /* a valid request this build cannot serve (op, dtype, feature) */
    SYMC_ERR_INTERNAL,      /* a bug in symc: please report */
    SYMC_ERR_DEVICE         /* no usable GPU, or the driver, NVRTC, cuBLASLt or cuDNN failed a call */
} symc_status;

#define SYMC_ERROR_MSG_CAP 512

typedef struct symc_error {
    symc_status code;
    char msg[SYMC_ERROR_MSG_CAP];
} symc_error;

/* Sets err (if not NULL) to code and a printf-formatted message; returns code,
 * so a caller can write `return symc_error_setf(err, SYMC_ERR_RANGE, ...)`.
 * Messages longer than the buffer are cut, ending in "...". */
symc_status symc_error_setf(symc_error *err, symc_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
symc_status symc_error_vsetf(symc_error *err, symc_status code, const char *fmt, va_list ap);

/* Prefixes the message already in err with "context: " (for callers adding where). */
void symc_error_prefix(symc_error *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

void symc_error_clear(symc_error *err);

/* Short stable name of a status code, e.g. "range", "format". */
const char *symc_status_name(symc_status code);

#ifdef __cplusplus
}
#endif
#endif
