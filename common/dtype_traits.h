/* common/dtype_traits.h: the element types' one table (internal to symc; the
 * public face is include/symc/dtype.h). One row a symc_dtype, and one more
 * for a value that is none: its name and size, its kind (float, integer or
 * bool), and the functions
 * that read and write element i of a buffer of it, in the two domains
 * symc computes in:
 *   f64 (load_f64 / store_f64): loading a float or an integer is exact up to
 *     2^53 (a 64-bit integer beyond it rounds to nearest even); storing
 *     rounds once to nearest even (floats overflow to infinity and keep NaN),
 *     truncates toward zero and saturates to an integer type (NaN: 0), and
 *     gives v != 0 for bool. These are symc_dtype_load and symc_dtype_store.
 *   int64 (load_i64 / store_i64 / store_u64): an integer loads exactly (u64
 *     as its bit pattern), bool as 0 or 1, a float truncated and saturated;
 *     storing wraps to a narrower integer type like a two's-complement cast,
 *     rounds once to a float type (a value too wide for f64 goes through a
 *     sticky bit, so f16/bf16 never round twice) and gives v != 0 for bool.
 *     store_u64 takes an unsigned value: rounded once to a float type, else
 *     stored as its bit pattern. The reference kernels' rt_ld_i, rt_st_i and
 *     rt_st_u (runtime/ref/) are these.
 * The none row (an out-of-range dtype) has name "?", size 0, loads NaN or 0
 * and stores nothing. Every pointer reads and writes through memcpy, so no
 * alignment is needed. The table is common/dtype.c's; the names have the
 * prefix cm_ (internal, so libsymc.so does not export them). */
#ifndef SYMC_COMMON_DTYPE_TRAITS_H
#define SYMC_COMMON_DTYPE_TRAITS_H

#include <stddef.h>
#include <stdint.h>

#include "symc/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cm_dtype_kind { CM_DT_NONE, CM_DT_FLOAT, CM_DT_INT, CM_DT_BOOL } cm_dtype_kind;

typedef struct cm_dtype_traits {
    const char *name; /* "f32", ... (symc_dtype_name) */
    size_t size;      /* bytes an element (symc_dtype_size) */
    cm_dtype_kind kind;
    double (*load_f64)(const void *data, size_t i);
    void (*store_f64)(void *data, size_t i, double v);
    int64_t (*load_i64)(const void *data, size_t i);
    void (*store_i64)(void *data, size_t i, int64_t v);
    void (*store_u64)(void *data, size_t i, uint64_t v);
} cm_dtype_traits;

/* rows [0, SYMC_DTYPE_COUNT) by symc_dtype, then the none row */
extern const cm_dtype_traits cm_dtype_table[SYMC_DTYPE_COUNT + 1];

/* dt's row; the none row when dt is not a symc_dtype */
static inline const cm_dtype_traits *cm_dtype_traits_of(symc_dtype dt) {
    return &cm_dtype_table[(unsigned)dt < SYMC_DTYPE_COUNT ? (unsigned)dt : (unsigned)SYMC_DTYPE_COUNT];
}

/* n floats (f32, any alignment) at src narrowed to half at dst: each as symc_f32_to_bf16 rounds
 * it for half == SYMC_BF16, as symc_f32_to_f16 does otherwise (the same code, inlined: this runs
 * once per weight of a model). dst may be src: the conversion in place, the halves then the
 * block's first 2n bytes. */
void cm_f32_to_half(void *dst, const void *src, size_t n, symc_dtype half);

#ifdef __cplusplus
}
#endif
#endif
