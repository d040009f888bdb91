/* The shared error channel (include/symc/status.h). It lives in common/,
 * the base library (symc_common) at the bottom of the dependency chain that
 * every other library links; the functions carry the public symc_ prefix
 * because both public headers expose them. Messages are formatted into the
 * caller's fixed buffer and cut with "..." when too long, so reporting never
 * allocates. */
#include "symc/status.h"

#include <stdio.h>
#include <string.h>

symc_status symc_error_vsetf(symc_error *err, symc_status code, const char *fmt, va_list ap) {
    if (!err) return code;
    err->code = code;
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (n >= (int)sizeof err->msg) memcpy(err->msg + sizeof err->msg - 4, "...", 4);
    return code;
}

symc_status symc_error_setf(symc_error *err, symc_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    symc_error_vsetf(err, code, fmt, ap);
    va_end(ap);
    return code;
}

void symc_error_prefix(symc_error *err, const char *fmt, ...) {
    if (!err) return;
    char old[SYMC_ERROR_MSG_CAP];
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n < sizeof err->msg) {
        int m = snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", old);
        if (m >= 0 && (size_t)n + (size_t)m >= sizeof err->msg) memcpy(err->msg + sizeof err->msg - 4, "...", 4);
    } else {
        memcpy(err->msg + sizeof err->msg - 4, "...", 4);
    }
}

void symc_error_clear(symc_error *err) {
    if (!err) return;
    err->code = SYMC_OK;
    err->msg[0] = '\0';
}

const char *symc_status_name(symc_status code) {
    switch (code) {
    case SYMC_OK: return "ok";
    case SYMC_ERR_INVALID_ARG: return "invalid argument";
    case SYMC_ERR_RANGE: return "range";
    case SYMC_ERR_OVERFLOW: return "overflow";
    case SYMC_ERR_DIV_ZERO: return "division by zero";
    case SYMC_ERR_CONTRADICTION: return "contradiction";
    case SYMC_ERR_UNBOUND: return "unbound symbol";
    case SYMC_ERR_IO: return "i/o";
    case SYMC_ERR_FORMAT: return "format";
    case SYMC_ERR_VERIFY: return "verify";
    case SYMC_ERR_NOMEM: return "out of memory";
    case SYMC_ERR_UNSUPPORTED: return "unsupported";
    case SYMC_ERR_INTERNAL: return "internal";
    case SYMC_ERR_DEVICE: return "device";
    }
    return "unknown";
}
