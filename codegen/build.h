/* build.h: what the parts of one engine build share (internal to codegen/):
 * the arena that owns the build's memory, and its progress lines.
 *
 * cg_build_engine (engine.c) assembles an rt_engine from arrays it
 * allocates as it goes, the tuner (tune.c) adds the tuned entries, and the
 * engine is encoded once at the end: every one of those arrays lives in one
 * cg_arena and is freed with it, so no part of the build frees anything
 * itself. */
#ifndef SYMC_CODEGEN_BUILD_H
#define SYMC_CODEGEN_BUILD_H

#include <stddef.h>

#include "codegen/codegen.h"

/* A bump arena of chunks that never move (as the IR module's, ir/module.c):
 * pointers stay valid until cg_arena_free. Zero-initialized {NULL} is an
 * empty arena. */
typedef struct cg_arena {
    struct cg_chunk *head;
} cg_arena;

/* n zeroed elements of `size` bytes, 16-byte aligned (never NULL for n = 0
 * unless out of memory); NULL when out of memory or n * size overflows. */
void *cg_arena_calloc(cg_arena *a, size_t n, size_t size);
/* Frees every chunk; the arena is empty again. */
void cg_arena_free(cg_arena *a);

/* One progress line through o->progress (nothing when it is NULL), cut at
 * 511 characters. */
void cg_progress(const cg_options *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
