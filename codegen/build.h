/* build.h: what the parts of one engine build share (internal to codegen/):
 * the arena that owns the build's memory (common/arena.h), and its progress
 * lines.
 *
 * cg_build_engine (build_engine.c) assembles an rt_engine from arrays it
 * allocates as it goes, the tuner (tuner.c) adds the tuned entries, and the
 * engine is encoded once at the end: every one of those arrays lives in one
 * cm_arena and is freed with it, so no part of the build frees anything
 * itself. */
#ifndef SYMC_CODEGEN_BUILD_H
#define SYMC_CODEGEN_BUILD_H

#include "codegen/codegen.h"
#include "common/arena.h" /* cm_arena: the build's memory */

/* One progress line through o->progress (nothing when it is NULL), cut at
 * 511 characters. */
void cg_progress(const cg_options *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
