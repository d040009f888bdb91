/* tuner.h: build-time tuning of an engine's library steps (internal to
 * codegen/, its tests and the test tools; prefix cg_tune_).
 *
 * With a GPU of the engine's SM present, cg_tune_engine times the cuBLASLt
 * and cuDNN choices of every GEMM/CONV step at a few points of the symbol
 * ranges (tuner.c, through the CUDA backend's narrow runtime/cuda/cuda_tuning.h)
 * and stores the winners in the in-memory engine before it is encoded. The
 * points are chosen by cg_tune_points, a plain function tested on the CPU
 * (tune_points.c, tests/codegen/test_tuner.c); the run-time pick among the
 * entries is the runtime's (rt_cuda_tune_pick, runtime/cuda/tuned_pick.h). */
#ifndef SYMC_CODEGEN_TUNER_H
#define SYMC_CODEGEN_TUNER_H

#include <stdint.h>

#include "codegen/build.h"
#include "runtime/engine.h"

/* At most this many points. The build's tuning budget (codegen/tuner.c)
 * usually stops earlier on large models; problems repeated across steps
 * and points are timed once, and the timing cache serves later builds. */
#define CG_TUNE_MAX_POINTS 16

typedef enum cg_tune_point_kind {
    CG_POINT_OPT = 0,    /* every symbol at opt */
    CG_POINT_MIN = 1,    /* every symbol at min */
    CG_POINT_MAX = 2,    /* every symbol at max */
    CG_POINT_LOW = 3,    /* geometric midpoint of min and opt */
    CG_POINT_HIGH = 4,   /* geometric midpoint of opt and max */
    CG_POINT_CORNER = 5, /* each symbol at its min or max, not all at one end */
    CG_POINT_AXIS = 6    /* one symbol at its min or max, the others at opt */
} cg_tune_point_kind;

/* "opt", "min", ... */
const char *cg_tune_point_name(cg_tune_point_kind k);

/* The tuning points for these symbols, most important first: opt, max,
 * min (every symbol at that level), then, when two or more symbols vary,
 * the other corners of the box (symbols at their min or max in every mix,
 * for up to CG_TUNE_CORNER_SYMBOLS varying symbols) and the points on each
 * symbol's axis through opt (that symbol at min or max, the others at opt),
 * then the geometric midpoints min..opt and opt..max of the diagonal. The
 * box is covered at its ends and along each axis, so a shape anywhere in it
 * has a tuned point near it in every size: odd aspect ratios included. Each
 * value is snapped to the symbol's multiple_of inside [min, max]. A point
 * equal to one already chosen is dropped, and so is a midpoint whose two
 * ends are within 4x of each other in every symbol. Writes at most `cap`
 * (<= CG_TUNE_MAX_POINTS) points: values[p * n + s] is symbol s at point p;
 * kinds (may be NULL) gets each point's kind. Returns the number of points
 * (>= 1 when cap >= 1). */
#define CG_TUNE_CORNER_SYMBOLS 3
uint32_t cg_tune_points(const rt_symbol *syms, uint32_t n, uint32_t cap, int64_t *values, uint8_t *kinds);

/* Index of the first run-time guard that these slots break, or RT_NONE (a
 * point that breaks one is not tuned at). */
uint32_t cg_tune_guard_broken(const rt_engine *e, const int64_t *slots);

/* Tunes e's GEMM and CONV steps when a GPU of e->sm is present (nothing
 * happens without one or without such steps; a GPU of another SM gets a
 * progress line): e->steps becomes a copy whose library steps carry their
 * tuned entries (rt_step.tuned, sorted by size), and e->cublas_version /
 * e->cudnn_version the versions that timed them. The copy, the entries and
 * the strings live in `arena`. Progress lines go to opt->progress. Errors
 * are prefixed "tuning library calls". */
symc_status cg_tune_engine(rt_engine *e, cm_arena *arena, const cg_options *opt, symc_error *err);

#endif
