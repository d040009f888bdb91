/* The 16-bit float conversions of the runtime's core (runtime/dtype.h),
 * shared by the backends, the tools and the tests: IEEE binary16 (5 exponent
 * bits, 10 mantissa bits) and bfloat16 (8, 7) through one pair of routines,
 * narrow and widen, parameterized by the field widths. Widening is exact;
 * narrowing computes the nearest representable value in double precision
 * (frexp/ldexp, so no bit tricks depend on the host's float format) and rounds
 * once, ties to even. */
#include <math.h>
#include <stdint.h>

#include "runtime/dtype.h"

static double round_half_even(double v) {
    double f = floor(v), d = v - f;
    if (d > 0.5) return f + 1.0;
    if (d < 0.5) return f;
    return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

/* A 16-bit float with one sign bit, ebits exponent bits and mbits mantissa bits. */
static uint16_t narrow(double x, int ebits, int mbits) {
    const int bias = (1 << (ebits - 1)) - 1;
    const uint32_t inf = ((1u << ebits) - 1u) << mbits;
    const uint16_t sign = signbit(x) ? 0x8000u : 0u;
    if (isnan(x)) return (uint16_t)(sign | inf | (1u << (mbits - 1)));
    double a = fabs(x);
    /* halfway between the largest finite value and 2^(bias+1) rounds to even: up */
    if (a >= ldexp(2.0 - ldexp(1.0, -(mbits + 1)), bias)) return (uint16_t)(sign | inf);
    if (a == 0.0) return sign;
    int k;
    frexp(a, &k);
    int e = k - 1;                                               /* 2^e <= a < 2^(e+1) */
    if (e < 1 - bias) e = 1 - bias;                              /* subnormal: the quantum of the smallest normal */
    uint32_t m = (uint32_t)round_half_even(ldexp(a, mbits - e)); /* <= 2^(mbits+1) */
    /* m carries the implicit bit (normal) or not (subnormal, e = 1 - bias);
     * adding it onto exponent field e + bias - 1 gives both encodings and lets
     * a rounding carry (m == 2^(mbits+1)) step into the next binade */
    return (uint16_t)(sign | (((uint32_t)(e + bias - 1) << mbits) + m));
}

static double widen(uint16_t h, int ebits, int mbits) {
    const int bias = (1 << (ebits - 1)) - 1;
    uint32_t ef = (h >> mbits) & ((1u << ebits) - 1u), mf = h & ((1u << mbits) - 1u);
    double v;
    if (ef == (1u << ebits) - 1u) v = mf ? NAN : INFINITY;
    else if (ef == 0) v = ldexp((double)mf, 1 - bias - mbits);
    else v = ldexp((double)(mf | (1u << mbits)), (int)ef - bias - mbits);
    return (h & 0x8000u) ? -v : v;
}

double rt_f16_to_f64(uint16_t h) { return widen(h, 5, 10); }
double rt_bf16_to_f64(uint16_t h) { return widen(h, 8, 7); }
uint16_t rt_f64_to_f16(double x) { return narrow(x, 5, 10); }
uint16_t rt_f64_to_bf16(double x) { return narrow(x, 8, 7); }
float rt_f16_to_f32(uint16_t h) { return (float)widen(h, 5, 10); }
float rt_bf16_to_f32(uint16_t h) { return (float)widen(h, 8, 7); }
/* float -> double is exact, so these round exactly once */
uint16_t rt_f32_to_f16(float x) { return narrow((double)x, 5, 10); }
uint16_t rt_f32_to_bf16(float x) { return narrow((double)x, 8, 7); }
