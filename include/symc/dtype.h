/* Element types, shared by the build API (symc.h) and the runtime (symrt.h),
 * with the one definition of what an element is: its size and name, the
 * 16-bit float conversions and reading element i of a buffer as a double
 * (implemented in common/dtype.c over the element types' one table,
 * common/dtype_traits.h, in the base library every module links). */
#ifndef SYMC_DTYPE_H
#define SYMC_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum symc_dtype {
    SYMC_F32 = 0,
    SYMC_F16 = 1,
    SYMC_BF16 = 2,
    SYMC_F64 = 3,
    SYMC_I64 = 4,
    SYMC_I32 = 5,
    SYMC_BOOL = 6,
    SYMC_I8 = 7,
    SYMC_U8 = 8,
    SYMC_I16 = 9,
    SYMC_U16 = 10,
    SYMC_U32 = 11,
    SYMC_U64 = 12,
    SYMC_DTYPE_COUNT
} symc_dtype;

size_t symc_dtype_size(symc_dtype dt); /* bytes an element; 0 if dt is not a symc_dtype */
/* "f32", "f16", "bf16", "f64", "i64", "i32", "bool", "i8", "u8", "i16", "u16", "u32", "u64"; "?" if invalid */
const char *symc_dtype_name(symc_dtype dt);

/* Element i of a buffer of dtype dt as a double (bool: 0 or 1; NaN for an
 * invalid dtype; a 64-bit integer beyond 2^53 rounded to nearest even).
 * Reads through memcpy, so the buffer needs no alignment. */
double symc_dtype_load(const void *data, symc_dtype dt, size_t i);
/* Stores v as element i of a buffer of dtype dt, rounded once: floats to
 * nearest even (overflow to infinity, NaN kept), integers truncated toward
 * zero and saturated (NaN: 0), bool v != 0. Writes through memcpy. Nothing
 * is written for an invalid dtype. */
void symc_dtype_store(void *data, symc_dtype dt, size_t i, double v);
/* Seeded test inputs, as `symc run`, `symc bench` and the fp16 calibration
 * make them: n elements, floats uniform in [-1, 1) (rounded once to dt),
 * integers in [0, 4), booleans; *state (an LCG) advances. */
void symc_dtype_fill_random(void *data, symc_dtype dt, size_t n, uint64_t *state);

/* IEEE binary16 and bfloat16 conversions. Widening is exact; narrowing rounds
 * once to nearest, ties to even, overflows to infinity and keeps NaN a NaN
 * (quiet) with its sign. Narrowing from f64 rounds directly from the f64
 * value, never through f32 (no double rounding). */
double symc_f16_to_f64(uint16_t h);
double symc_bf16_to_f64(uint16_t h);
uint16_t symc_f64_to_f16(double x);
uint16_t symc_f64_to_bf16(double x);
float symc_f16_to_f32(uint16_t h);
float symc_bf16_to_f32(uint16_t h);
uint16_t symc_f32_to_f16(float x);
uint16_t symc_f32_to_bf16(float x);
/* The smallest magnitude that rounds to infinity in dt: 65520 for f16,
 * (2 - 2^-8) * 2^127 for bf16, INFINITY for every other dtype. A finite value
 * x stays finite in dt exactly when |x| is below it. */
double symc_dtype_overflow(symc_dtype dt);

#ifdef __cplusplus
}
#endif
#endif
