/* codegen: turns a compiled module into an engine (prefix cg_).
 *
 * Today the engine carries the IR for the CPU reference backend: every
 * symbolic size becomes a slot of one shape program. GPU kernels and library
 * plans (issue 5) join the same engine later. */
#ifndef SYMC_CODEGEN_CODEGEN_H
#define SYMC_CODEGEN_CODEGEN_H

#include "ir/ir.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Encodes a module whose shapes are inferred as engine bytes (malloc'd).
 * Errors: a tensor without a shape, a symbol that no input dim equals (it
 * could not be bound at run time). */
symc_status cg_build_engine(ir_module *m, uint8_t **bytes, size_t *size, symc_error *err);
/* The same, written to a file (through a temporary file and rename). */
symc_status cg_write_engine(ir_module *m, const char *path, symc_error *err);

#ifdef __cplusplus
}
#endif
#endif
