/* Files the tools write and read, where the user pointed and nowhere else.
 *
 * Writing (ir_out_open/ir_out_close, and ir_write_file for a whole buffer):
 * over a regular file or a new name, the bytes go to a temporary created
 * exclusively in the same folder (O_CREAT | O_EXCL | O_NOFOLLOW under a name
 * with the process id and a counter: a symlink planted at any name is never
 * followed, an existing name is skipped), renamed
 * over the target only after every write and the close succeeded: a failed
 * or interrupted write never leaves a truncated .symir or .symx under the
 * real name. Anything else at the path (a symlink such as /dev/stdout, a
 * device such as /dev/null, a FIFO) is written directly, never replaced.
 *
 * Reading (ir_open_regular): opened non-blocking (so a FIFO or a device at
 * the path cannot block the open), checked with fstat on that descriptor (no
 * window between a stat and the open), then switched back to blocking; only
 * regular files are read. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ir/ir.h"

symc_status ir_out_open(ir_out *o, const char *path, symc_error *err) {
    *o = (ir_out){0};
    struct stat sb;
    if (lstat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) { /* a link, a device, a pipe: written in place */
        if (S_ISDIR(sb.st_mode)) return symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': it is a directory", path);
        o->f = fopen(path, "wb");
        if (!o->f) return symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        return SYMC_OK;
    }
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path) + 1 : 0, n = dir + strlen(slash ? slash + 1 : path) + 48;
    o->path = malloc(strlen(path) + 1);
    o->tmp = malloc(n);
    if (!o->path || !o->tmp) {
        ir_out_abort(o);
        return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory writing '%s'", path);
    }
    strcpy(o->path, path);
    /* O_CREAT | O_EXCL never follows a symlink (an existing name, link or not, is EEXIST: the next
     * name is tried); the mode is a plain create's, 0666 less the umask */
    static _Atomic unsigned counter;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(o->tmp, n, "%.*s.%s.%ld-%u.tmp", (int)dir, path, slash ? slash + 1 : path, (long)getpid(),
                 counter++ % 1000000u);
        fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) {
        symc_status st = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        ir_out_abort(o);
        return st;
    }
    o->f = fdopen(fd, "wb");
    if (!o->f) {
        symc_status st = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        close(fd);
        ir_out_abort(o);
        return st;
    }
    return SYMC_OK;
}

symc_status ir_out_close(ir_out *o, symc_error *err) {
    if (!o->f) return SYMC_OK;
    int bad = ferror(o->f);
    int closed = fclose(o->f);
    o->f = NULL;
    symc_status st = SYMC_OK;
    if (bad || closed || (o->tmp && rename(o->tmp, o->path) != 0)) {
        int e = errno;
        st = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", o->path ? o->path : "the output",
                             bad && !closed ? "write error" : strerror(e));
    } else if (o->tmp) {
        free(o->tmp); /* renamed: nothing to remove */
        o->tmp = NULL;
    }
    ir_out_abort(o);
    return st;
}

void ir_out_abort(ir_out *o) {
    if (o->f) fclose(o->f);
    if (o->tmp) remove(o->tmp);
    free(o->tmp);
    free(o->path);
    *o = (ir_out){0};
}

symc_status ir_write_file(const char *path, const uint8_t *bytes, size_t size, symc_error *err) {
    ir_out o;
    symc_status st = ir_out_open(&o, path, err);
    if (st) return st;
    if (fwrite(bytes, 1, size, o.f) != size) {
        st = symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        ir_out_abort(&o);
        return st;
    }
    return ir_out_close(&o, err);
}

FILE *ir_open_regular(const char *path, const char **what) {
    *what = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        *what = S_ISDIR(sb.st_mode)                      ? "a directory"
            : S_ISFIFO(sb.st_mode)                       ? "a FIFO (named pipe)"
            : S_ISSOCK(sb.st_mode)                       ? "a socket"
            : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
                                                         : "not a regular file";
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0) (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    FILE *f = fdopen(fd, "rb");
    if (!f) close(fd);
    return f;
}
