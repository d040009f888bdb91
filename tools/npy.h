/* .npy files (NumPy format 1.0/2.0/3.0) for `symc run --input/--output`. */
#ifndef SYMC_TOOLS_NPY_H
#define SYMC_TOOLS_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "symc/dtype.h"
#include "symc/status.h"

typedef struct npy_array {
    symc_dtype dtype;
    int32_t rank;
    int64_t dims[8];
    void *data;     /* malloc'd, C order, this machine's byte order */
    size_t size;    /* bytes */
    char descr[16]; /* the file's descr ("<f4", ">i2", "<V2"), for messages */
} npy_array;

/* Reads any symc dtype (npy.c says which descrs), converting big-endian data
 * and Fortran order; anything else is refused with the file name and what it
 * holds. */
symc_status npy_read(const char *path, npy_array *out, symc_error *err);
/* Writes every symc dtype with its own descr, except bf16: widened (exactly)
 * to '<f4'. */
symc_status npy_write(const char *path, symc_dtype dtype, int32_t rank, const int64_t *dims, const void *data,
                      symc_error *err);
/* The NumPy spelling of a dtype for a message that tells how to save an
 * array ("numpy.uint8", "ml_dtypes.bfloat16"); "?" if invalid. */
const char *npy_numpy_name(symc_dtype dtype);

#endif
