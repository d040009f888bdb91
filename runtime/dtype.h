/* dtype.h: element types as the runtime sizes and names them (the table is
 * in runtime/sizes.c). Part of the core; the backends, the tools and the
 * tests use it too. */
#ifndef SYMC_RUNTIME_DTYPE_H
#define SYMC_RUNTIME_DTYPE_H

#include <stddef.h>

#include "symc/dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

size_t rt_dtype_size(symc_dtype dt);      /* bytes an element, 0 if invalid */
const char *rt_dtype_name(symc_dtype dt); /* "f32", ..., "?" if invalid */

#ifdef __cplusplus
}
#endif
#endif
