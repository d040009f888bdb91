/* The math precision of matrix products and convolutions, shared by the
 * build API (symc.h: symc_compile_options), the compiler (codegen's
 * cg_options) and the runtime, which reads it from the engine file and
 * picks the cuBLASLt compute type / cuDNN math mode from it. One definition,
 * in a header of its own so the runtime can include it without the builder
 * header symc.h. The values are stored in .symx files: never renumber. */
#ifndef SYMC_PRECISION_H
#define SYMC_PRECISION_H

typedef enum symc_precision {
    SYMC_PRECISION_FP32 = 0, /* true fp32 */
    SYMC_PRECISION_TF32 = 1, /* matrix products and convolutions in TF32 */
    SYMC_PRECISION_FP16 = 2, /* ... with fp16 operands, fp32 accumulation */
    SYMC_PRECISION_BF16 = 3  /* ... with bf16 operands, fp32 accumulation */
} symc_precision;

#endif
