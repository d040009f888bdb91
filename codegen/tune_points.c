/* Where to tune (codegen/tuner.h): the points of the symbol ranges a build
 * times library calls at, and whether a point breaks a run-time guard.
 *
 * Points cover the box the ranges declare, not only the diagonal: opt, the
 * two ends (max first: most of the work is there), the other corners, each
 * symbol's axis through opt, then the geometric midpoints of the diagonal
 * (sizes matter to GEMM and convolution algorithms by ratio, not
 * difference). An image model with B, H and W dynamic thus gets batch 1 at
 * a wide and at a tall image, not only small-square and large-square ones.
 * A full grid would multiply the count per symbol for little gain: the
 * corners and axes bound every shape in the box in each size, and the
 * run-time pick takes the nearest tuned point. Points are taken in order of
 * importance so a smaller cap (or the build's time budget) keeps the ones
 * that matter most. Plain functions of their arguments, tested on the CPU
 * (tests/codegen/test_tuner.c). */
#include <math.h>
#include <string.h>

#include "codegen/tuner.h"

/* symbols a point is assembled for on the stack; more are written in place */
#define STACK_SYMBOLS 64

const char *cg_tune_point_name(cg_tune_point_kind k) {
    switch (k) {
    case CG_POINT_OPT: return "opt";
    case CG_POINT_MIN: return "min";
    case CG_POINT_MAX: return "max";
    case CG_POINT_LOW: return "min..opt";
    case CG_POINT_HIGH: return "opt..max";
    case CG_POINT_CORNER: return "corner";
    case CG_POINT_AXIS: return "axis";
    }
    return "?";
}

/* v moved into [min, max] and onto a multiple of multiple_of (the nearest
 * one inside the range; v itself if the range holds none). */
static int64_t snap(const rt_symbol *s, int64_t v) {
    if (v < s->min) v = s->min;
    if (v > s->max) v = s->max;
    int64_t m = s->multiple_of;
    if (m <= 1 || v % m == 0) return v;
    int64_t r = v % m;
    if (r < 0) r += m;
    int64_t down = v - r; /* >= v - m + 1: no overflow */
    int up_ok = v <= s->max - (m - r), down_ok = down >= s->min;
    int64_t up = up_ok ? v + (m - r) : v;
    if (down_ok && up_ok) return v - down <= up - v ? down : up;
    if (down_ok) return down;
    if (up_ok) return up;
    return v;
}

static int64_t geo_mid(int64_t a, int64_t b) {
    double x = (double)(a > 1 ? a : 1), y = (double)(b > 1 ? b : 1);
    double m = floor(sqrt(x) * sqrt(y) + 0.5);
    int64_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (m <= (double)lo) return lo;
    if (m >= (double)hi) return hi;
    return (int64_t)m;
}

/* the two ends are more than 4x apart (sizes below 1 count as 1) */
static int far_apart(int64_t a, int64_t b) {
    if (a < 1) a = 1;
    if (b < 1) b = 1;
    int64_t lo = a < b ? a : b, hi = a < b ? b : a;
    return hi / 4 > lo || (hi / 4 == lo && hi % 4);
}

/* Appends point p (n values) unless an earlier point equals it. */
static uint32_t add_point(int64_t *values, uint8_t *kinds, uint32_t count, uint32_t n, const int64_t *p,
                          cg_tune_point_kind k) {
    for (uint32_t q = 0; q < count; q++)
        if (n == 0 || !memcmp(values + (size_t)q * n, p, n * sizeof *p)) return count;
    if (p != values + (size_t)count * n) memcpy(values + (size_t)count * n, p, n * sizeof *p);
    if (kinds) kinds[count] = (uint8_t)k;
    return count + 1;
}

uint32_t cg_tune_points(const rt_symbol *syms, uint32_t n, uint32_t cap, int64_t *values, uint8_t *kinds) {
    if (cap > CG_TUNE_MAX_POINTS) cap = CG_TUNE_MAX_POINTS;
    if (cap == 0) return 0;
    uint32_t count = 0, varying[CG_TUNE_CORNER_SYMBOLS], nv = 0, all_varying = 0;
    int64_t p[STACK_SYMBOLS];
    int64_t *pt = n <= STACK_SYMBOLS ? p : NULL;
    for (uint32_t s = 0; s < n; s++)
        if (syms[s].min != syms[s].max) {
            if (nv < CG_TUNE_CORNER_SYMBOLS) varying[nv++] = s;
            all_varying++;
        }
    /* opt, max, min */
    static const cg_tune_point_kind ends[3] = {CG_POINT_OPT, CG_POINT_MAX, CG_POINT_MIN};
    for (int k = 0; k < 3 && count < cap; k++) {
        int64_t *q = pt ? pt : values + (size_t)count * n;
        for (uint32_t s = 0; s < n; s++) {
            const rt_symbol *y = &syms[s];
            q[s] = snap(y, ends[k] == CG_POINT_OPT ? y->opt : ends[k] == CG_POINT_MAX ? y->max : y->min);
        }
        count = add_point(values, kinds, count, n, q, ends[k]);
    }
    /* the other corners: bit j of mask puts varying symbol j at max */
    for (uint32_t mask = 1; all_varying >= 2 && mask + 1 < (1u << nv) && count < cap; mask++) {
        int64_t *q = pt ? pt : values + (size_t)count * n;
        for (uint32_t s = 0; s < n; s++) q[s] = snap(&syms[s], syms[s].opt);
        for (uint32_t j = 0; j < nv; j++) {
            const rt_symbol *y = &syms[varying[j]];
            q[varying[j]] = snap(y, mask >> j & 1 ? y->max : y->min);
        }
        count = add_point(values, kinds, count, n, q, CG_POINT_CORNER);
    }
    /* each symbol's axis through opt */
    for (uint32_t s = 0; all_varying >= 2 && s < n && count < cap; s++) {
        if (syms[s].min == syms[s].max) continue;
        for (int end = 0; end < 2 && count < cap; end++) {
            int64_t *q = pt ? pt : values + (size_t)count * n;
            for (uint32_t t = 0; t < n; t++) q[t] = snap(&syms[t], syms[t].opt);
            q[s] = snap(&syms[s], end ? syms[s].max : syms[s].min);
            count = add_point(values, kinds, count, n, q, CG_POINT_AXIS);
        }
    }
    /* the diagonal's midpoints, where some symbol spans more than 4x */
    for (int k = CG_POINT_LOW; k <= CG_POINT_HIGH && count < cap; k++) {
        int64_t *q = pt ? pt : values + (size_t)count * n;
        int wanted = 0;
        for (uint32_t s = 0; s < n; s++) {
            const rt_symbol *y = &syms[s];
            int64_t v = k == CG_POINT_LOW ? geo_mid(y->min, y->opt) : geo_mid(y->opt, y->max);
            wanted |= k == CG_POINT_LOW ? far_apart(y->min, y->opt) : far_apart(y->opt, y->max);
            q[s] = snap(y, v);
        }
        if (wanted) count = add_point(values, kinds, count, n, q, (cg_tune_point_kind)k);
    }
    return count;
}

uint32_t cg_tune_guard_broken(const rt_engine *e, const int64_t *slots) {
    for (uint32_t g = 0; g < e->n_guards; g++)
        if (!sym_rel_holds(e->guards[g].rel, slots[e->guards[g].lhs], slots[e->guards[g].rhs])) return g;
    return RT_NONE;
}
