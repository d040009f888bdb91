/* .npy reading and writing: the magic, a version byte pair, a little-endian
 * header length, then a Python dict literal with 'descr', 'fortran_order'
 * and 'shape', padded so the data starts 64-byte aligned. Only what symc's
 * dtypes need is accepted (<f4 <f2 <f8 <i8 <i4 |i1 |u1 <i2 <u2 <u4 <u8 |b1, C
 * order); anything else is
 * refused with the file name and what was found. The header's shape is
 * believed only once its byte size fits in 64 bits (tools/checked.h) and the
 * file holds that many bytes after the header, so a crafted header cannot make
 * the reader allocate more than the file's own size. bf16 has no NumPy type
 * of its own: it is written as f32 (exact), and read from '<V2' (what NumPy
 * writes for an ml_dtypes.bfloat16 array: the raw 16-bit patterns); symc run
 * also takes an f32 file for a bf16 or f16 input, rounded once to nearest even,
 * and a '<u2' file for a bf16 input as its raw 16-bit patterns. */
#include "tools/npy.h"

#include "runtime/ref/ref_kernels.h"
#include "tools/checked.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
    const char *descr;
    symc_dtype dtype;
    size_t size;
} kinds[] = {{"<f4", SYMC_F32, 4}, {"<f2", SYMC_F16, 2},  {"<f8", SYMC_F64, 8},  {"<i8", SYMC_I64, 8},
             {"<i4", SYMC_I32, 4}, {"|b1", SYMC_BOOL, 1}, {"<V2", SYMC_BF16, 2}, {"|i1", SYMC_I8, 1},
             {"|u1", SYMC_U8, 1},  {"<i2", SYMC_I16, 2},  {"<u2", SYMC_U16, 2},  {"<u4", SYMC_U32, 4},
             {"<u8", SYMC_U64, 8}};

symc_status npy_read(const char *path, npy_array *out, symc_error *err) {
    memset(out, 0, sizeof *out);
    symc_status st = tool_check_regular_file(path, ".npy file", err);
    if (st) return st;
    FILE *f = fopen(path, "rb");
    if (!f) return symc_error_setf(err, SYMC_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    unsigned char pre[10];
    char *hdr = NULL;
    if (fread(pre, 1, 8, f) != 8 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        st = symc_error_setf(err, SYMC_ERR_FORMAT, "'%s' is not a .npy file", path);
        goto done;
    }
    size_t hlen;
    if (pre[6] == 1) {
        if (fread(pre + 8, 1, 2, f) != 2) goto trunc;
        hlen = pre[8] | (size_t)pre[9] << 8;
    } else if (pre[6] == 2 || pre[6] == 3) {
        unsigned char l[4];
        if (fread(l, 1, 4, f) != 4) goto trunc;
        hlen = l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
        if (hlen > (1u << 20)) goto trunc;
    } else {
        st = symc_error_setf(err, SYMC_ERR_FORMAT, "'%s': unsupported .npy version %d", path, pre[6]);
        goto done;
    }
    hdr = calloc(1, hlen + 1);
    if (!hdr || fread(hdr, 1, hlen, f) != hlen) goto trunc;
    const char *d = strstr(hdr, "'descr':"), *fo = strstr(hdr, "'fortran_order':"), *sh = strstr(hdr, "'shape':");
    if (!d || !fo || !sh) {
        st = symc_error_setf(err, SYMC_ERR_FORMAT, "'%s': .npy header lacks descr, fortran_order or shape", path);
        goto done;
    }
    /* 'descr': '<f4' -> the quoted text */
    char descr[16] = "";
    const char *q = strchr(d + 8, '\'');
    if (q) {
        size_t n = strcspn(q + 1, "'");
        if (n < sizeof descr) memcpy(descr, q + 1, n), descr[n] = '\0';
    }
    size_t es = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (!strcmp(descr, kinds[k].descr)) {
            out->dtype = kinds[k].dtype;
            es = kinds[k].size;
        }
    if (!es) {
        st = symc_error_setf(
            err, SYMC_ERR_UNSUPPORTED,
            "'%s': dtype '%s' is not one of <f4 <f2 <f8 <i8 <i4 |i1 |u1 <i2 <u2 <u4 <u8 |b1 <V2 (bf16)", path, descr);
        goto done;
    }
    if (strncmp(fo + 16 + strspn(fo + 16, " "), "False", 5) != 0) {
        st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "'%s' is in Fortran order; save it C-contiguous", path);
        goto done;
    }
    const char *p = strchr(sh, '(');
    if (!p) goto bad_shape;
    p++;
    while (*p && *p != ')') {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || v < 0 || errno == ERANGE || out->rank >= 8) goto bad_shape;
        out->dims[out->rank++] = v;
        p = end;
        while (*p == ' ' || *p == 'L') p++;
    }
    if (*p != ')') goto bad_shape;
    /* the size the header claims must fit, and the file must hold it, before
     * anything that large is allocated */
    char what[64 + 4096];
    snprintf(what, sizeof what, "'%s': the array", path);
    if ((st = tool_tensor_size(what, out->dtype, out->rank, out->dims, NULL, &out->size, err))) goto done;
    struct stat sb;
    long data_at = ftell(f);
    if (fstat(fileno(f), &sb) != 0 || data_at < 0) {
        st = symc_error_setf(err, SYMC_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
        goto done;
    }
    uint64_t held = (uint64_t)sb.st_size > (uint64_t)data_at ? (uint64_t)sb.st_size - (uint64_t)data_at : 0;
    if (held < out->size) {
        char shape[256];
        tool_shape_text(out->rank, out->dims, shape, sizeof shape);
        st = symc_error_setf(err, SYMC_ERR_FORMAT,
                             "'%s' is truncated: its header gives shape %s of %s, %zu bytes of data, but the file "
                             "holds %" PRIu64 " after the header",
                             path, shape, descr, out->size, held);
        goto done;
    }
    out->data = malloc(out->size ? out->size : 1);
    if (!out->data) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading '%s'", path);
        goto done;
    }
    if (fread(out->data, 1, out->size, f) != out->size) goto trunc;
    goto done;
bad_shape:
    st = symc_error_setf(err, SYMC_ERR_FORMAT, "'%s': cannot read the shape in the .npy header", path);
    goto done;
trunc:
    st = symc_error_setf(err, SYMC_ERR_FORMAT, "'%s' is truncated or corrupt", path);
done:
    free(hdr);
    fclose(f);
    if (st) {
        free(out->data);
        out->data = NULL;
    }
    return st;
}

symc_status npy_write(const char *path, symc_dtype dtype, int32_t rank, const int64_t *dims, const void *data,
                      symc_error *err) {
    size_t count;
    char what[64 + 4096];
    snprintf(what, sizeof what, "'%s': the array", path);
    symc_status st = tool_tensor_size(what, dtype == SYMC_BF16 ? SYMC_F32 : dtype, rank, dims, &count, NULL, err);
    if (st) return st;
    if (dtype == SYMC_BF16) { /* no NumPy type: widen (exactly) to f32 */
        float *wide = malloc(count ? count * sizeof *wide : 1);
        if (!wide) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory writing '%s'", path);
        for (size_t i = 0; i < count; i++) {
            uint32_t bits = (uint32_t)((const uint16_t *)data)[i] << 16;
            memcpy(&wide[i], &bits, sizeof bits);
        }
        st = npy_write(path, SYMC_F32, rank, dims, wide, err);
        free(wide);
        return st;
    }
    const char *descr = NULL;
    size_t es = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (kinds[k].dtype == dtype) descr = kinds[k].descr, es = kinds[k].size;
    if (!descr) return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "'%s': dtype has no .npy equivalent", path);
    char shape[256] = "";
    size_t used = 0;
    for (int i = 0; i < rank; i++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%" PRId64 "%s", dims[i],
                                 rank == 1 ? "," : (i + 1 < rank ? ", " : ""));
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    size_t total = 10 + (size_t)n + 1;
    size_t pad = (64 - total % 64) % 64;
    memset(hdr + n, ' ', pad);
    hdr[n + pad] = '\n';
    size_t hlen = (size_t)n + pad + 1;
    FILE *f = fopen(path, "wb");
    if (!f) return symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    unsigned char pre[10] = {
        0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    int ok = fwrite(pre, 1, 10, f) == 10 && fwrite(hdr, 1, hlen, f) == hlen &&
        fwrite(data, 1, count * es, f) == count * es;
    if (fclose(f) != 0) ok = 0;
    if (!ok) return symc_error_setf(err, SYMC_ERR_IO, "cannot write '%s'", path);
    return SYMC_OK;
}
