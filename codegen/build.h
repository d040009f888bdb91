/* build.h: what the parts of one engine build share (internal to codegen/):
 * the arena that owns the build's memory (common/arena.h), and its progress
 * lines.
 *
 * cg_build_engine (build_engine.c) assembles an rt_engine (cg_assemble) from
 * arrays it allocates as it goes, the tuner (tuner.c) adds the tuned entries, and the
 * engine is encoded once at the end: every one of those arrays lives in one
 * cm_arena and is freed with it, so no part of the build frees anything
 * itself. An engine of several regions (build_regions.c) keeps one build a
 * region alive until its one encode. */
#ifndef SYMC_CODEGEN_BUILD_H
#define SYMC_CODEGEN_BUILD_H

#include "codegen/codegen.h"
#include "codegen/target.h" /* cg_builder */
#include "common/arena.h"   /* cm_arena: the build's memory */
#include "runtime/engine.h"

/* One build: the module, the builder the target fills, the engine being
 * assembled from it, and the arena that owns every array of the engine
 * until its one encode. It points into itself (b.opt is &opt): it stays
 * where cg_assemble filled it until cg_build_release. */
typedef struct cg_build {
    ir_module *m;
    cg_options opt;
    cg_builder b;
    cm_arena arena;
    rt_engine e;
    uint8_t *program;  /* the shape program (sym_program_compile's, malloc'd) */
    uint8_t *capacity; /* the capacity program of the produced sizes (likewise; NULL without them) */
    symc_error *err;
} cg_build;

/* Fills x->e from m (shapes inferred): symbols, GPU code, guards, tensors,
 * nodes, constants, the shape program, and with a GPU present the tuned
 * entries; everything but the encode. x is filled even on failure: release
 * it either way. */
symc_status cg_assemble(cg_build *x, ir_module *m, const cg_options *opt, symc_error *err);
/* Frees what cg_assemble made (the engine's arrays with it); m stays. */
void cg_build_release(cg_build *x);

/* Encodes e straight into the file at path (rt_engine_encode_to; through ir_out: a temporary
 * renamed over path once every byte is written, removed on a failure). */
symc_status cg_write_encoded(const rt_engine *e, const char *path, symc_error *err);

/* One progress line through o->progress (nothing when it is NULL), cut at
 * 511 characters. */
void cg_progress(const cg_options *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
