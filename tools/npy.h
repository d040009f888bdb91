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
    void *data;  /* malloc'd, C order, little endian */
    size_t size; /* bytes */
} npy_array;

symc_status npy_read(const char *path, npy_array *out, symc_error *err);
symc_status npy_write(const char *path, symc_dtype dtype, int32_t rank, const int64_t *dims, const void *data,
                      symc_error *err);

#endif
