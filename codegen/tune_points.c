/* Where to tune (codegen/tune.h): the points of the symbol ranges a build
 * times library calls at, and whether a point breaks a run-time guard.
 *
 * Points: one path through the symbol ranges, min -> opt -> max, with every
 * symbol moving together, sampled at its ends, at opt and at the geometric
 * midpoints between them (sizes matter to GEMM and convolution algorithms by
 * ratio, not difference). A grid over the symbols would multiply the count
 * by itself per symbol for little gain: the library problems of a model are
 * mostly products of its symbols (m = B*S), which the path covers from the
 * smallest to the largest. Points are taken in order of importance (opt, the
 * ends, the midpoints) so a smaller cap keeps the ones that matter most.
 * Plain functions of their arguments, tested on the CPU
 * (tests/codegen/test_tune.c). */
#include <math.h>
#include <string.h>

#include "codegen/tune.h"

const char *cg_tune_point_name(cg_tune_point_kind k) {
    switch (k) {
    case CG_POINT_OPT: return "opt";
    case CG_POINT_MIN: return "min";
    case CG_POINT_MAX: return "max";
    case CG_POINT_LOW: return "min..opt";
    case CG_POINT_HIGH: return "opt..max";
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

uint32_t cg_tune_points(const rt_symbol *syms, uint32_t n, uint32_t cap, int64_t *values, uint8_t *kinds) {
    if (cap > CG_TUNE_MAX_POINTS) cap = CG_TUNE_MAX_POINTS;
    uint32_t count = 0;
    for (int k = CG_POINT_OPT; k <= CG_POINT_HIGH && count < cap; k++) {
        int64_t *p = values + (size_t)count * n;
        int wanted = k <= CG_POINT_MAX; /* a midpoint only where some symbol spans more than 4x */
        for (uint32_t s = 0; s < n; s++) {
            const rt_symbol *y = &syms[s];
            int64_t v = y->opt;
            switch ((cg_tune_point_kind)k) {
            case CG_POINT_OPT: v = y->opt; break;
            case CG_POINT_MIN: v = y->min; break;
            case CG_POINT_MAX: v = y->max; break;
            case CG_POINT_LOW:
                v = geo_mid(y->min, y->opt);
                wanted |= far_apart(y->min, y->opt);
                break;
            case CG_POINT_HIGH:
                v = geo_mid(y->opt, y->max);
                wanted |= far_apart(y->opt, y->max);
                break;
            }
            p[s] = snap(y, v);
        }
        if (!wanted) continue;
        int dup = 0;
        for (uint32_t q = 0; q < count && !dup; q++) dup = n == 0 || !memcmp(values + (size_t)q * n, p, n * sizeof *p);
        if (dup) continue;
        if (kinds) kinds[count] = (uint8_t)k;
        count++;
    }
    return count;
}

uint32_t cg_tune_guard_broken(const rt_engine *e, const int64_t *slots) {
    for (uint32_t g = 0; g < e->n_guards; g++)
        if (!sym_rel_holds(e->guards[g].rel, slots[e->guards[g].lhs], slots[e->guards[g].rhs])) return g;
    return RT_NONE;
}
