/* dtype.h: element types as the runtime sizes and names them (the table is
 * in runtime/sizes.c) and converts the 16-bit floats (runtime/dtype.c). Part of the core; the backends, the tools and the
 * tests use it too. */
#ifndef SYMC_RUNTIME_DTYPE_H
#define SYMC_RUNTIME_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "symc/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

size_t rt_dtype_size(symc_dtype dt);      /* bytes an element, 0 if invalid */
const char *rt_dtype_name(symc_dtype dt); /* "f32", ..., "?" if invalid */

/* IEEE binary16 and bfloat16 conversions. Widening is exact; narrowing rounds
 * once to nearest, ties to even, overflows to infinity and keeps NaN a NaN
 * (quiet) with its sign. Narrowing from f64 rounds directly from the f64
 * value, never through f32 (no double rounding). */
double rt_f16_to_f64(uint16_t h);
double rt_bf16_to_f64(uint16_t h);
uint16_t rt_f64_to_f16(double x);
uint16_t rt_f64_to_bf16(double x);
float rt_f16_to_f32(uint16_t h);
float rt_bf16_to_f32(uint16_t h);
uint16_t rt_f32_to_f16(float x);
uint16_t rt_f32_to_bf16(float x);

#ifdef __cplusplus
}
#endif
#endif
