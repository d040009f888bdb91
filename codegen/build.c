/* The progress lines of one engine build (codegen/build.h). */
#include "codegen/build.h"

#include <stdarg.h>
#include <stdio.h>

void cg_progress(const cg_options *o, const char *fmt, ...) {
    if (!o->progress) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->progress(o->progress_ctx, msg);
}
