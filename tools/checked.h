/* Checks the driver makes on what a user hands it, before anything is read or
 * allocated: that a path is a regular file, that a tensor's element count and
 * byte size computed from its dims fit, and the engine's input names for a
 * message refusing an unknown one (tools/checked.c). */
#ifndef SYMC_TOOLS_CHECKED_H
#define SYMC_TOOLS_CHECKED_H

#include <stddef.h>
#include <stdint.h>

#include "symc/dtype.h"
#include "symc/status.h"
#include "symc/symrt.h"

/* SYMC_OK when path names a regular file (following links); otherwise an
 * error naming it and saying what it is instead (a directory, a device or
 * FIFO, missing). `what` says what the file was for ("model", "engine"). */
symc_status tool_check_regular_file(const char *path, const char *what, symc_error *err);

/* Elements and bytes of a tensor of `rank` dims of `dtype`. The byte size
 * must fit in int64 (no allocation can be larger); a negative dim or a
 * product that does not fit is SYMC_ERR_RANGE naming `what` (e.g. "input
 * 'x'") and the shape. elems or bytes may be NULL. */
symc_status tool_tensor_size(const char *what, symc_dtype dtype, int32_t rank, const int64_t *dims, size_t *elems,
                             size_t *bytes, symc_error *err);

/* "'x', 'mask'": the engine's input names for a message that refuses a name
 * ("none" for an engine without inputs); snprintf semantics. */
void tool_input_names(const symrt_engine *e, char *buf, size_t cap);
/* The same for its outputs. */
void tool_output_names(const symrt_engine *e, char *buf, size_t cap);

/* "[2, 3, 4]" into buf (snprintf semantics, always terminated). */
void tool_shape_text(int32_t rank, const int64_t *dims, char *buf, size_t cap);

#endif
