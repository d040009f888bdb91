/* Element types, shared by the build API (symc.h) and the runtime (symrt.h). */
#ifndef SYMC_DTYPE_H
#define SYMC_DTYPE_H

typedef enum symc_dtype {
    SYMC_F32 = 0,
    SYMC_F16 = 1,
    SYMC_BF16 = 2,
    SYMC_F64 = 3,
    SYMC_I64 = 4,
    SYMC_I32 = 5,
    SYMC_BOOL = 6,
    SYMC_DTYPE_COUNT
} symc_dtype;

#endif
