/* Checks on user input for the driver (checked.h).
 *
 * Sizes: an engine's declared ranges may allow dims whose product does not
 * fit in 64 bits (an engine built before `symc compile` refused such ranges,
 * or written by another program), and an .npy header can claim any shape. A
 * size computed with plain size_t arithmetic then wraps to something small,
 * the buffer is allocated at that size and filled for the real element
 * count. So every size from dims goes through tool_tensor_size: a zero dim
 * makes the tensor empty whatever the others are, otherwise the byte
 * count goes through the runtime's checked product (rt_checked_product, the
 * same limit the runtime refuses at).
 *
 * Files: fopen succeeds on a directory and reading it fails later with a
 * confusing message (a size of INT64_MAX bytes, "not a .npy file"), and a
 * FIFO or device has no size, so paths are stat'ed first. */
#include "tools/checked.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/engine.h"

symc_status tool_check_regular_file(const char *path, const char *what, symc_error *err) {
    struct stat sb;
    if (stat(path, &sb) != 0)
        return symc_error_setf(err, SYMC_ERR_IO, "cannot open %s '%s': %s", what, path, strerror(errno));
    if (S_ISDIR(sb.st_mode)) return symc_error_setf(err, SYMC_ERR_IO, "%s '%s' is a directory, not a file", what, path);
    if (!S_ISREG(sb.st_mode))
        return symc_error_setf(err, SYMC_ERR_IO, "%s '%s' is not a regular file (a device, FIFO or socket)", what,
                               path);
    return SYMC_OK;
}

void tool_input_names(const symrt_engine *e, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < symrt_engine_num_inputs(e) && n < cap; i++) {
        symrt_io_info info;
        if (!symrt_engine_input(e, i, &info, NULL))
            n += (size_t)snprintf(buf + n, cap - n, "%s'%s'", n ? ", " : "", info.name);
    }
    if (!buf[0]) snprintf(buf, cap, "none");
}

void tool_output_names(const symrt_engine *e, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < symrt_engine_num_outputs(e) && n < cap; i++) {
        symrt_io_info info;
        if (!symrt_engine_output(e, i, &info, NULL))
            n += (size_t)snprintf(buf + n, cap - n, "%s'%s'", n ? ", " : "", info.name);
    }
    if (!buf[0]) snprintf(buf, cap, "none");
}

void tool_shape_text(int32_t rank, const int64_t *dims, char *buf, size_t cap) { rt_format_dims(dims, rank, buf, cap); }

symc_status tool_tensor_size(const char *what, symc_dtype dtype, int32_t rank, const int64_t *dims, size_t *elems,
                             size_t *bytes, symc_error *err) {
    char shape[256];
    int64_t es = (int64_t)symc_dtype_size(dtype), n = 0;
    int empty = 0;
    if (rank < 0 || rank > 8) {
        return symc_error_setf(err, SYMC_ERR_RANGE, "%s has rank %d, outside [0, 8]", what, (int)rank);
    }
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0) {
            tool_shape_text(rank, dims, shape, sizeof shape);
            return symc_error_setf(err, SYMC_ERR_RANGE, "%s has shape %s: dim %d is negative", what, shape, (int)d);
        }
        empty |= dims[d] == 0;
    }
    /* the runtime's checked product, of the elements and of the bytes */
    int64_t count = 0;
    if (!empty && (!rt_checked_product(dims, rank, 1, &count) || !rt_checked_product(dims, rank, es, &n))) {
        tool_shape_text(rank, dims, shape, sizeof shape);
        return symc_error_setf(err, SYMC_ERR_RANGE,
                               "%s of shape %s (%s) is too large: its size in bytes does not fit in "
                               "64 bits (at most %" PRId64 " bytes)",
                               what, shape, symc_dtype_name(dtype), (int64_t)RT_MAX_BYTES);
    }
    if (elems) *elems = (size_t)count;
    if (bytes) *bytes = (size_t)n;
    return SYMC_OK;
}
