/* The .npy reader and the driver's size checks (tools/npy.c, tools/checked.c)
 * on crafted files: a header claiming more data than the file holds (a
 * (2^31, 16, 16) float array is 2 TiB) is refused before anything that large
 * is allocated, a shape whose byte size does not fit in 64 bits is refused,
 * directories are named as such, and a written array reads back. Dtypes:
 * every symc dtype reads from its descr, little- and big-endian, with the
 * values the bytes mean (the files are written here byte by byte, so a
 * reader that ignored the order or the descr would read other values);
 * Fortran order is reordered into C order; descrs without a byte order,
 * NumPy's plain void '|V2' and structured or unknown types are refused naming
 * the file and the descr; every dtype is written with its own descr (bf16 as
 * '<f4') and reads back.
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

/* The same with `n` bytes of `data` after the header. */
static void write_npy_data(const char *name, const char *dict, const void *data, size_t n) {
    write_npy(name, dict, 0);
    FILE *f = fopen(path_of(name), "ab");
    if (!f || fwrite(data, 1, n, f) != n) CHECK_MSG(0, "cannot write %s", path_of(name));
    if (f) fclose(f);
}

/* Element i of a little-endian array of es-byte elements: the low es bytes
 * of v, least significant first (this test's own encoding, not the
 * reader's). */
static void put_le(unsigned char *p, size_t es, size_t i, uint64_t v) {
    for (size_t b = 0; b < es; b++) p[i * es + b] = (unsigned char)(v >> (8 * b));
}

/* Every dtype from its descr, little- and big-endian: three elements whose
 * bytes differ, read back as the values they encode. */
static void test_every_dtype(void) {
    static const struct {
        const char *code;
        symc_dtype dtype;
        uint64_t v[3]; /* the elements' bit patterns */
        double want[3];
    } cases[] = {
        {"b1", SYMC_BOOL, {0, 1, 2}, {0, 1, 1}}, /* a byte other than 0 or 1 reads as true (1) */
        {"i1", SYMC_I8, {0x80, 0x7f, 0xff}, {-128, 127, -1}},
        {"u1", SYMC_U8, {0x80, 0x7f, 0xff}, {128, 127, 255}},
        {"i2", SYMC_I16, {0x8001, 0x0102, 0xfffe}, {-32767, 258, -2}},
        {"u2", SYMC_U16, {0x8001, 0x0102, 0xfffe}, {32769, 258, 65534}},
        {"i4", SYMC_I32, {0x80000001u, 0x01020304, 0xfffffffeu}, {-2147483647.0, 16909060, -2}},
        {"u4", SYMC_U32, {0x80000001u, 0x01020304, 0xfffffffeu}, {2147483649.0, 16909060, 4294967294.0}},
        {"i8",
         SYMC_I64,
         {0x8000000000000400ull, 0x0102030405060708ull, 0xfffffffffffffffeull},
         {-9223372036854774784.0, 72623859790382856.0, -2}},
        {"u8",
         SYMC_U64,
         {0x8000000000000400ull, 0x0102030405060708ull, 0xfffffffffffffffeull},
         {9223372036854776832.0, 72623859790382856.0, 18446744073709551614.0}},
        {"f2", SYMC_F16, {0x3c00, 0xc500, 0x0001}, {1, -5, 0x1p-24}},
        {"f4", SYMC_F32, {0x3fc00000, 0xc1200000u, 0x00000001}, {1.5, -10, 0x1p-149}},
        {"f8", SYMC_F64, {0x3ff8000000000000ull, 0xc024000000000000ull, 1}, {1.5, -10, 0x1p-1074}},
        {"V2", SYMC_BF16, {0x3fc0, 0xc120, 0x0001}, {1.5, -10, 0x1p-133}}, /* bf16 as ml_dtypes saves it */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t es = symc_dtype_size(cases[c].dtype);
        for (int big = 0; big < 2; big++) {
            unsigned char bytes[24];
            for (size_t i = 0; i < 3; i++) {
                put_le(bytes, es, i, cases[c].v[i]);
                if (big)
                    for (size_t a = 0, b = es - 1; a < b; a++, b--) {
                        unsigned char t = bytes[i * es + a];
                        bytes[i * es + a] = bytes[i * es + b];
                        bytes[i * es + b] = t;
                    }
            }
            /* NumPy's spelling: '|' for one byte; '>' too must read, one byte has no order */
            char descr[8], dict[128];
            snprintf(descr, sizeof descr, "%c%s", es == 1 ? (big ? '>' : '|') : (big ? '>' : '<'), cases[c].code);
            snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }", descr);
            write_npy_data("dt.npy", dict, bytes, 3 * es);
            npy_array a;
            symc_error err = {0};
            CHECK_MSG(npy_read(path_of("dt.npy"), &a, &err) == SYMC_OK, "%s: %s", descr, err.msg);
            if (!a.data) continue;
            CHECK_MSG(a.dtype == cases[c].dtype && a.rank == 1 && a.dims[0] == 3 && a.size == 3 * es &&
                          !strcmp(a.descr, descr),
                      "%s: read as %s, %zu bytes, descr '%s'", descr, symc_dtype_name(a.dtype), a.size, a.descr);
            for (size_t i = 0; i < 3; i++) {
                double got = symc_dtype_load(a.data, a.dtype, i);
                CHECK_MSG(got == cases[c].want[i], "%s element %zu: %.17g, wanted %.17g", descr, i, got,
                          cases[c].want[i]);
            }
            free(a.data);
        }
    }
}

/* Fortran order (np.save of a transposed array): the file holds the first
 * index fastest; the reader hands back C order. Big-endian too, both at once. */
static void test_fortran_order(void) {
    enum { D0 = 2, D1 = 3, D2 = 4 };
    unsigned char le[D0 * D1 * D2 * 2], be[sizeof le];
    for (int i = 0; i < D0; i++)
        for (int j = 0; j < D1; j++)
            for (int k = 0; k < D2; k++) {
                size_t at = (size_t)(i + D0 * (j + D1 * k)); /* Fortran position of (i, j, k) */
                uint16_t v = (uint16_t)(100 * i + 10 * j + k);
                put_le(le, 2, at, v);
                be[2 * at] = (unsigned char)(v >> 8), be[2 * at + 1] = (unsigned char)v;
            }
    for (int big = 0; big < 2; big++) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%ci2', 'fortran_order': True, 'shape': (2, 3, 4), }", big ? '>' : '<');
        write_npy_data("fo.npy", dict, big ? be : le, sizeof le);
        npy_array a;
        symc_error err = {0};
        CHECK_MSG(npy_read(path_of("fo.npy"), &a, &err) == SYMC_OK, "%s", err.msg);
        if (!a.data) continue;
        CHECK(a.dtype == SYMC_I16 && a.rank == 3 && a.dims[0] == D0 && a.dims[1] == D1 && a.dims[2] == D2);
        int bad = 0;
        for (int i = 0; i < D0; i++)
            for (int j = 0; j < D1; j++)
                for (int k = 0; k < D2; k++)
                    bad += symc_dtype_load(a.data, SYMC_I16, (size_t)((i * D1 + j) * D2 + k)) != 100 * i + 10 * j + k;
        CHECK_MSG(bad == 0, "%s Fortran order: %d elements out of place", big ? "big-endian" : "little-endian", bad);
        free(a.data);
    }
    /* one dim or an empty array: nothing to reorder */
    write_npy_data("fo1.npy", "{'descr': '<i2', 'fortran_order': True, 'shape': (3,), }", le, 6);
    npy_array a;
    symc_error err = {0};
    CHECK_MSG(npy_read(path_of("fo1.npy"), &a, &err) == SYMC_OK && a.data && !memcmp(a.data, le, 6), "%s", err.msg);
    free(a.data);
    write_npy_data("fo0.npy", "{'descr': '<i2', 'fortran_order': True, 'shape': (3, 0), }", le, 0);
    CHECK_MSG(npy_read(path_of("fo0.npy"), &a, &err) == SYMC_OK && a.size == 0, "%s", err.msg);
    free(a.data);
    write_npy("fo_bad.npy", "{'descr': '<i2', 'fortran_order': maybe, 'shape': (3,), }", 6);
    CHECK(npy_read(path_of("fo_bad.npy"), &a, &err) == SYMC_ERR_FORMAT && a.data == NULL);
    CHECK_CONTAINS(err.msg, "fo_bad.npy': cannot read fortran_order");
}

/* What has no meaning for symc, or no known byte order, is refused with the
 * file and the descr, never read as something else. */
static void test_refused_descrs(void) {
    static const struct {
        const char *dict, *want;
    } cases[] = {
        {"{'descr': '|V2', 'fortran_order': False, 'shape': (3,), }",
         "r.npy': dtype '|V2' is two raw bytes with no byte order"},
        {"{'descr': '=f4', 'fortran_order': False, 'shape': (3,), }",
         "r.npy': dtype '=f4' does not say its byte order ('<' little-endian or '>' big-endian)"},
        {"{'descr': '|i2', 'fortran_order': False, 'shape': (3,), }",
         "r.npy': dtype '|i2' does not say its byte order"},
        {"{'descr': 'u8', 'fortran_order': False, 'shape': (3,), }", "r.npy': dtype 'u8' does not say its byte order"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (3,), }", "r.npy': dtype '<c8' is not one of |b1 |i1"},
        {"{'descr': '<V1', 'fortran_order': False, 'shape': (3,), }", "r.npy': dtype '<V1' is not one of"},
        {"{'descr': '<U10', 'fortran_order': False, 'shape': (3,), }", "r.npy': dtype '<U10' is not one of"},
        {"{'descr': '<f4ffffffffffffffffffffffff', 'fortran_order': False, 'shape': (3,), }",
         "r.npy': dtype '<f4ffffffffffffffffffffffff' is not one of"},
        {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }",
         "r.npy': dtype [('a', '<f4')], 'fortran_order'"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        write_npy("r.npy", cases[c].dict, 64);
        npy_array a;
        symc_error err = {0};
        CHECK_MSG(npy_read(path_of("r.npy"), &a, &err) == SYMC_ERR_UNSUPPORTED && a.data == NULL, "%s: %s",
                  cases[c].dict, err.msg);
        CHECK_CONTAINS(err.msg, cases[c].want);
    }
}

/* Every dtype written reads back with its own descr; bf16 as '<f4'. (A
 * little-endian machine's descrs: the ones every machine symc runs on has.) */
static void test_write_every_dtype(void) {
    static const char *const descr_of[SYMC_DTYPE_COUNT] = {
        [SYMC_F32] = "<f4", [SYMC_F16] = "<f2",  [SYMC_BF16] = "<f4", [SYMC_F64] = "<f8", [SYMC_I64] = "<i8",
        [SYMC_I32] = "<i4", [SYMC_BOOL] = "|b1", [SYMC_I8] = "|i1",   [SYMC_U8] = "|u1",  [SYMC_I16] = "<i2",
        [SYMC_U16] = "<u2", [SYMC_U32] = "<u4",  [SYMC_U64] = "<u8"};
    unsigned char data[6 * 8];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 37 + 1);
    for (int dt = 0; dt < SYMC_DTYPE_COUNT; dt++) {
        size_t es = symc_dtype_size((symc_dtype)dt);
        if (dt == SYMC_BOOL)
            for (size_t i = 0; i < 6; i++) data[i] = i & 1;
        symc_error err = {0};
        CHECK_MSG(npy_write(path_of("w.npy"), (symc_dtype)dt, 2, (const int64_t[]){2, 3}, data, &err) == SYMC_OK,
                  "%s: %s", symc_dtype_name((symc_dtype)dt), err.msg);
        npy_array a;
        CHECK_MSG(npy_read(path_of("w.npy"), &a, &err) == SYMC_OK, "%s: %s", symc_dtype_name((symc_dtype)dt), err.msg);
        if (!a.data) continue;
        CHECK(a.rank == 2 && a.dims[0] == 2 && a.dims[1] == 3);
        if (dt == SYMC_BF16) {
            CHECK_MSG(a.dtype == SYMC_F32 && !strcmp(a.descr, "<f4"), "bf16 written as %s", a.descr);
            for (size_t i = 0; i < 6 && a.dtype == SYMC_F32; i++) {
                uint16_t h;
                uint32_t w;
                memcpy(&h, data + 2 * i, 2);
                memcpy(&w, (const char *)a.data + 4 * i, 4);
                CHECK_MSG(w == (uint32_t)h << 16, "bf16 element %zu: 0x%04x written as 0x%08x", i, h, w);
            }
        } else {
            CHECK_MSG((int)a.dtype == dt && !strcmp(a.descr, descr_of[dt]) && a.size == 6 * es &&
                          !memcmp(a.data, data, 6 * es),
                      "%s: read back as %s ('%s')", symc_dtype_name((symc_dtype)dt), symc_dtype_name(a.dtype), a.descr);
        }
        free(a.data);
    }
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
    test_every_dtype();
    test_fortran_order();
    test_refused_descrs();
    test_write_every_dtype();
    return check_report("test_npy");
}
