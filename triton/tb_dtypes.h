/* tb_dtypes.h: symc's element types as Triton names them, the one list that the backend (which
 * reads config.pbtxt and Triton's requests) and `symc triton` (which writes config.pbtxt) share.
 * TB_DTYPES(X) calls X(symc_dtype, NAME) for each type Triton has: the C API's enum is
 * TRITONSERVER_TYPE_<NAME>, clients write "NAME" ("FP32"), config.pbtxt "TYPE_<NAME>". */
#ifndef SYMC_TRITON_TB_DTYPES_H
#define SYMC_TRITON_TB_DTYPES_H

#include "symc/dtype.h"

#define TB_DTYPES(X)    \
    X(SYMC_F32, FP32)   \
    X(SYMC_F16, FP16)   \
    X(SYMC_BF16, BF16)  \
    X(SYMC_F64, FP64)   \
    X(SYMC_I64, INT64)  \
    X(SYMC_I32, INT32)  \
    X(SYMC_BOOL, BOOL)  \
    X(SYMC_I8, INT8)    \
    X(SYMC_U8, UINT8)   \
    X(SYMC_I16, INT16)  \
    X(SYMC_U16, UINT16) \
    X(SYMC_U32, UINT32) \
    X(SYMC_U64, UINT64)

#endif
