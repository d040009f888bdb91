/* Node attributes, shared by the build API (symc.h), which takes them, and
 * the runtime, whose engines store them in this same layout (with each
 * SYMC_ATTR_DIMS entry a shape-program slot instead of a symc_dim). Kept out
 * of symc.h so the runtime sees the layout without the builder API. */
#ifndef SYMC_ATTR_H
#define SYMC_ATTR_H

#include <stdint.h>
#include <string.h>

#include "symc/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t symc_dim;                    /* a symbolic dimension expression */
#define SYMC_DIM_NONE ((symc_dim)0xffffffffu) /* also: -1 (inferred) in a reshape shape */

typedef enum symc_attr_kind {
    SYMC_ATTR_INT,
    SYMC_ATTR_FLOAT,
    SYMC_ATTR_INTS,
    SYMC_ATTR_FLOATS,
    SYMC_ATTR_STR,
    SYMC_ATTR_DIMS, /* symbolic dims; SYMC_DIM_NONE stands for -1 where the op allows it */
    SYMC_ATTR_DTYPE
} symc_attr_kind;

typedef struct symc_attr {
    const char *name;
    symc_attr_kind kind;
    uint32_t n; /* element count for INTS, FLOATS, DIMS */
    int64_t i;  /* INT, or DTYPE as a symc_dtype */
    double f;
    const int64_t *ints;
    const double *floats;
    const symc_dim *dims;
    const char *s;
} symc_attr;

static inline symc_attr symc_attr_int(const char *name, int64_t v) {
    symc_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = SYMC_ATTR_INT;
    a.i = v;
    return a;
}
static inline symc_attr symc_attr_float(const char *name, double v) {
    symc_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = SYMC_ATTR_FLOAT;
    a.f = v;
    return a;
}
static inline symc_attr symc_attr_ints(const char *name, const int64_t *v, uint32_t n) {
    symc_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = SYMC_ATTR_INTS;
    a.ints = v;
    a.n = n;
    return a;
}
static inline symc_attr symc_attr_floats(const char *name, const double *v, uint32_t n) {
    symc_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = SYMC_ATTR_FLOATS;
    a.floats = v;
    a.n = n;
    return a;
}
static inline symc_attr symc_attr_str(const char *name, const char *s) {
    symc_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = SYMC_ATTR_STR;
    a.s = s;
    return a;
}
static inline symc_attr symc_attr_dims(const char *name, const symc_dim *d, uint32_t n) {
    symc_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = SYMC_ATTR_DIMS;
    a.dims = d;
    a.n = n;
    return a;
}
static inline symc_attr symc_attr_dtype(const char *name, symc_dtype t) {
    symc_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.kind = SYMC_ATTR_DTYPE;
    a.i = (int64_t)t;
    return a;
}

#ifdef __cplusplus
}
#endif
#endif
