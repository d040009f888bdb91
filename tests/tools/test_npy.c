/* The .npy reader and the driver's size checks (tools/npy.c, tools/checked.c)
 * on crafted files: a header claiming more data than the file holds (a
 * (2^31, 16, 16) float array is 2 TiB) is refused before anything that large
 * is allocated, a shape whose byte size does not fit in 64 bits is refused,
 * directories are named as such, and a written array reads back.
 * usage: test_npy TMPDIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/check.h"
#include "tools/checked.h"
#include "tools/npy.h"

static const char *tmp;

static const char *path_of(const char *name) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", tmp, name);
    return buf;
}

/* A version 1.0 .npy file: the header dict padded to 64 bytes, then `data` bytes. */
static void write_npy(const char *name, const char *dict, size_t data) {
    char hdr[256];
    int n = snprintf(hdr, sizeof hdr, "%s", dict);
    while ((10 + n + 1) % 64) hdr[n++] = ' ';
    hdr[n++] = '\n';
    FILE *f = fopen(path_of(name), "wb");
    if (!f) {
        CHECK_MSG(0, "cannot write %s", path_of(name));
        return;
    }
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 0xff), (unsigned char)(n >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(hdr, 1, (size_t)n, f);
    for (size_t i = 0; i < data; i++) fputc(0, f);
    fclose(f);
}

static void test_header_larger_than_file(void) {
    npy_array a;
    symc_error err = {0};
    write_npy("huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 16, 16), }", 64);
    CHECK(npy_read(path_of("huge.npy"), &a, &err) == SYMC_ERR_FORMAT && a.data == NULL);
    CHECK_CONTAINS(err.msg,
                   "huge.npy' is truncated: its header gives shape [2147483648, 16, 16] of <f4, "
                   "2199023255552 bytes of data, but the file holds 64 after the header");
    /* one byte short */
    write_npy("short.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3, 2), }", 47);
    CHECK(npy_read(path_of("short.npy"), &a, &err) == SYMC_ERR_FORMAT && a.data == NULL);
    CHECK_CONTAINS(err.msg, "gives shape [3, 2] of <i8, 48 bytes of data, but the file holds 47");
}

static void test_shape_overflow(void) {
    npy_array a;
    symc_error err = {0};
    write_npy("wrap.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 0);
    CHECK(npy_read(path_of("wrap.npy"), &a, &err) == SYMC_ERR_RANGE && a.data == NULL);
    CHECK_CONTAINS(err.msg,
                   "wrap.npy': the array of shape [4611686018427387904, 4] (f32) is too large: its size "
                   "in bytes does not fit in 64 bits");
    /* a dim beyond int64 */
    write_npy("big_dim.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", 0);
    CHECK(npy_read(path_of("big_dim.npy"), &a, &err) == SYMC_ERR_FORMAT);
    CHECK_CONTAINS(err.msg, "cannot read the shape");
    /* a zero dim makes the array empty whatever the others are */
    write_npy("empty.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }", 0);
    CHECK_MSG(npy_read(path_of("empty.npy"), &a, &err) == SYMC_OK, "%s", err.msg);
    CHECK(a.size == 0 && a.rank == 3);
    free(a.data);
}

static void test_not_a_file(void) {
    npy_array a;
    symc_error err = {0};
    mkdir(path_of("dir.npy"), 0755);
    CHECK(npy_read(path_of("dir.npy"), &a, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "dir.npy' is a directory, not a file");
    CHECK(npy_read(path_of("missing.npy"), &a, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "missing.npy");
}

static void test_round_trip(void) {
    npy_array a;
    symc_error err = {0};
    const float v[6] = {1, 2, 3, 4, 5, 6};
    CHECK_MSG(npy_write(path_of("rt.npy"), SYMC_F32, 2, (const int64_t[]){2, 3}, v, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(npy_read(path_of("rt.npy"), &a, &err) == SYMC_OK, "%s", err.msg);
    CHECK(a.dtype == SYMC_F32 && a.rank == 2 && a.dims[0] == 2 && a.dims[1] == 3 && a.size == sizeof v);
    CHECK(a.data && !memcmp(a.data, v, sizeof v));
    free(a.data);
    /* writing refuses a shape whose size does not fit */
    CHECK(npy_write(path_of("no.npy"), SYMC_F32, 2, (const int64_t[]){(int64_t)1 << 62, 4}, v, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "is too large");
}

static void test_tensor_size(void) {
    symc_error err = {0};
    size_t n = 7, b = 7;
    CHECK(tool_tensor_size("input 'x'", SYMC_F32, 2, (const int64_t[]){(int64_t)1 << 55, 128}, &n, &b, &err) ==
          SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'x' of shape [36028797018963968, 128] (f32) is too large");
    /* the largest that fits: INT64_MAX // 4 elements of f32 */
    int64_t most = INT64_MAX / 4;
    CHECK(tool_tensor_size("t", SYMC_F32, 1, &most, &n, &b, &err) == SYMC_OK && n == (size_t)most &&
          b == (size_t)most * 4);
    most++;
    CHECK(tool_tensor_size("t", SYMC_F32, 1, &most, &n, &b, &err) == SYMC_ERR_RANGE);
    CHECK(tool_tensor_size("t", SYMC_F32, 2, (const int64_t[]){3, -1}, &n, &b, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "t has shape [3, -1]: dim 1 is negative");
    CHECK(tool_tensor_size("t", SYMC_I64, 0, NULL, &n, &b, &err) == SYMC_OK && n == 1 && b == 8);
}

int main(int argc, char **argv) {
    tmp = argc > 1 ? argv[1] : ".";
    mkdir(tmp, 0755);
    test_header_larger_than_file();
    test_shape_overflow();
    test_not_a_file();
    test_round_trip();
    test_tensor_size();
    return check_report("test_npy");
}
