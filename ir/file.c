/* Writing a whole file safely: the bytes go to "<path>.tmp", which is
 * renamed over the target only after every write and the close succeeded, so
 * a failed or interrupted write never leaves a truncated .symir or .symx under
 * the real name. Shared by the module saver and the engine writer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"

symc_status ir_write_file(const char *path, const uint8_t *bytes, size_t size, symc_error *err) {
    size_t n = strlen(path) + 5;
    char *tmp = malloc(n);
    if (!tmp) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory writing '%s'", path);
    snprintf(tmp, n, "%s.tmp", path);
    symc_status st = SYMC_OK;
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        st = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    } else {
        size_t wrote = fwrite(bytes, 1, size, f);
        int close_failed = fclose(f);
        if (wrote != size || close_failed || rename(tmp, path) != 0) {
            st = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
            remove(tmp);
        }
    }
    free(tmp);
    return st;
}
