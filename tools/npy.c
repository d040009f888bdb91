/* .npy reading and writing: the magic, a version byte pair, a little-endian
 * header length, then a Python dict literal with 'descr', 'fortran_order'
 * and 'shape', padded so the data starts 64-byte aligned.
 *
 * Dtypes: every symc dtype has a descr, a byte-order character then a type
 * code (b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8). bf16 has no NumPy type of its
 * own: an ml_dtypes.bfloat16 array saves as 'V2' with a byte order ('<V2' on
 * a little-endian machine, the raw 16-bit patterns), and that is read as
 * bf16. A plain 2-byte void, '|V2' (what NumPy saves after loading such a
 * file without ml_dtypes), records no byte order and nothing says its bytes
 * are bf16, so it is refused. bf16 is written widened (exactly) to f32, which
 * every NumPy reads without ml_dtypes. Anything else (other types, structured
 * descrs) is refused with the file name and what was found.
 *
 * Byte order: '<' and '>' are both read, swapped to this machine's order
 * when they differ (swapping is exact, and `astype('>i4')` or a big-endian
 * writer is all it takes to meet one). '|' and '=' (no order, or the
 * writer's own, which the file does not record) are taken only for one-byte
 * types, whose order does not matter; a multi-byte type without '<' or '>'
 * is refused rather than guessed. Fortran order (what np.save writes for a
 * transposed or np.asfortranarray array) is reordered into C order. A bool
 * byte other than 0 is read as 1: the CUDA kernels load booleans as C's
 * bool, which must hold 0 or 1.
 *
 * Which file dtype may feed which input is the caller's rule (symc run, in
 * symc_main.c, also rounds an f32 file for an f16/bf16 input and takes '<u2' bit
 * patterns for a bf16 one).
 *
 * Sizes: the header's shape is believed only once its byte size fits in 64
 * bits (tools/checked.h) and the file holds that many bytes after the header,
 * so a crafted header cannot make the reader allocate more than the file's
 * own size (twice that for Fortran order, reordered into a second buffer). */
#include "tools/npy.h"

#include "tools/checked.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
    const char *code; /* the descr after its byte-order character */
    symc_dtype dtype;
} kinds[] = {{"b1", SYMC_BOOL}, {"i1", SYMC_I8},  {"u1", SYMC_U8},  {"i2", SYMC_I16}, {"u2", SYMC_U16},
             {"i4", SYMC_I32},  {"u4", SYMC_U32}, {"i8", SYMC_I64}, {"u8", SYMC_U64}, {"f2", SYMC_F16},
             {"f4", SYMC_F32},  {"f8", SYMC_F64}, {"V2", SYMC_BF16}};

#define NPY_DESCRS                                                                                                    \
    "|b1 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 <f2 <f4 <f8, <V2 (bfloat16 as ml_dtypes saves it), or a multi-byte one big-" \
    "endian ('>')"

/* '<' or '>': this machine's byte order, the order of npy_array's data */
static char host_order(void) {
    const uint16_t one = 1;
    unsigned char low;
    memcpy(&low, &one, 1);
    return low ? '<' : '>';
}

const char *npy_numpy_name(symc_dtype dtype) {
    switch (dtype) {
    case SYMC_F32: return "numpy.float32";
    case SYMC_F16: return "numpy.float16";
    case SYMC_BF16: return "ml_dtypes.bfloat16";
    case SYMC_F64: return "numpy.float64";
    case SYMC_I64: return "numpy.int64";
    case SYMC_I32: return "numpy.int32";
    case SYMC_BOOL: return "numpy.bool_";
    case SYMC_I8: return "numpy.int8";
    case SYMC_U8: return "numpy.uint8";
    case SYMC_I16: return "numpy.int16";
    case SYMC_U16: return "numpy.uint16";
    case SYMC_U32: return "numpy.uint32";
    case SYMC_U64: return "numpy.uint64";
    default: return "?";
    }
}

/* The dtype of a descr, and whether its data must be byte-swapped. */
static symc_status parse_descr(const char *path, const char *descr, symc_dtype *dtype, int *swap, symc_error *err) {
    /* NumPy always writes the order character; without one the order is the writer's own, like '=' */
    char order = descr[0] && strchr("<>|=", descr[0]) ? descr[0] : '=';
    const char *code = descr + (order == descr[0]);
    size_t k = 0, n = sizeof kinds / sizeof kinds[0];
    while (k < n && strcmp(code, kinds[k].code)) k++;
    if (k == n)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "'%s': dtype '%s' is not one of " NPY_DESCRS, path, descr);
    *dtype = kinds[k].dtype;
    *swap = 0;
    if (symc_dtype_size(*dtype) == 1) return SYMC_OK; /* one byte: no order to get wrong */
    if (order == '<' || order == '>') {
        *swap = order != host_order();
        return SYMC_OK;
    }
    if (*dtype == SYMC_BF16)
        return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                               "'%s': dtype '%s' is two raw bytes with no byte order (NumPy's void, e.g. an "
                               "ml_dtypes.bfloat16 file loaded and saved again without ml_dtypes), not bfloat16: save "
                               "the array with ml_dtypes imported ('<V2') or as float32",
                               path, descr);
    return symc_error_setf(err, SYMC_ERR_UNSUPPORTED,
                           "'%s': dtype '%s' does not say its byte order ('<' little-endian or '>' big-endian)", path,
                           descr);
}

/* Reverses the bytes of each of n elements of es bytes. */
static void swap_bytes(unsigned char *p, size_t n, size_t es) {
    for (size_t i = 0; i < n; i++, p += es)
        for (size_t a = 0, b = es - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

/* Fortran order into C order. In the file, element (i0, ..., ir-1) sits at
 * i0 + d0 * (i1 + d1 * (i2 + ...)) elements (the first index fastest). The
 * walk goes in C order (the last index fastest), moving the file offset by
 * the stride of the index that advances and rewinding the ones that wrap. */
static symc_status from_fortran(const char *path, npy_array *a, symc_error *err) {
    size_t es = symc_dtype_size(a->dtype), n = a->size / es;
    if (a->rank < 2 || n == 0) return SYMC_OK; /* the same bytes in either order */
    unsigned char *c = malloc(a->size);
    if (!c) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading '%s'", path);
    const unsigned char *f = a->data;
    /* each stride is at most the array's byte size (no dim is 0 here), which fits */
    size_t stride[8], idx[8] = {0}, off = 0;
    stride[0] = es;
    for (int32_t k = 1; k < a->rank; k++) stride[k] = stride[k - 1] * (size_t)a->dims[k - 1];
    for (size_t i = 0; i < n; i++) {
        memcpy(c + i * es, f + off, es);
        for (int32_t k = a->rank - 1; k >= 0; k--) {
            if (++idx[k] < (size_t)a->dims[k]) {
                off += stride[k];
                break;
            }
            idx[k] = 0;
            off -= stride[k] * ((size_t)a->dims[k] - 1);
        }
    }
    free(a->data);
    a->data = c;
    return SYMC_OK;
}

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
    /* 'descr': '<f4' -> the quoted text; a list (a structured dtype) is named by its start */
    const char *q = d + 8 + strspn(d + 8, " ");
    if (*q != '\'') {
        st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "'%s': dtype %.40s is not one of " NPY_DESCRS, path, q);
        goto done;
    }
    size_t dn = strcspn(q + 1, "'");
    if (dn >= sizeof out->descr) {
        st = symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "'%s': dtype '%.*s' is not one of " NPY_DESCRS, path,
                             (int)(dn < 40 ? dn : 40), q + 1);
        goto done;
    }
    memcpy(out->descr, q + 1, dn);
    out->descr[dn] = '\0';
    int swap = 0;
    if ((st = parse_descr(path, out->descr, &out->dtype, &swap, err))) goto done;
    const char *fv = fo + 16 + strspn(fo + 16, " ");
    int fortran = !strncmp(fv, "True", 4);
    if (!fortran && strncmp(fv, "False", 5) != 0) {
        st = symc_error_setf(err, SYMC_ERR_FORMAT, "'%s': cannot read fortran_order in the .npy header", path);
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
                             path, shape, out->descr, out->size, held);
        goto done;
    }
    out->data = malloc(out->size ? out->size : 1);
    if (!out->data) {
        st = symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory reading '%s'", path);
        goto done;
    }
    if (fread(out->data, 1, out->size, f) != out->size) goto trunc;
    size_t es = symc_dtype_size(out->dtype), n = out->size / es;
    if (swap) swap_bytes(out->data, n, es);
    if (out->dtype == SYMC_BOOL)
        for (size_t i = 0; i < n; i++) ((unsigned char *)out->data)[i] = ((unsigned char *)out->data)[i] != 0;
    if (fortran) st = from_fortran(path, out, err);
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
    if (dtype == SYMC_BF16) { /* '<V2' means nothing to NumPy without ml_dtypes: widen (exactly) to f32 */
        float *wide = malloc(count ? count * sizeof *wide : 1);
        if (!wide) return symc_error_setf(err, SYMC_ERR_NOMEM, "out of memory writing '%s'", path);
        for (size_t i = 0; i < count; i++) { /* the bits shifted: every pattern kept, NaN payloads included */
            uint32_t bits = (uint32_t)((const uint16_t *)data)[i] << 16;
            memcpy(&wide[i], &bits, sizeof bits);
        }
        st = npy_write(path, SYMC_F32, rank, dims, wide, err);
        free(wide);
        return st;
    }
    const char *code = NULL;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (kinds[k].dtype == dtype) code = kinds[k].code;
    if (!code) return symc_error_setf(err, SYMC_ERR_UNSUPPORTED, "'%s': dtype has no .npy equivalent", path);
    size_t es = symc_dtype_size(dtype);
    char shape[256] = "";
    size_t used = 0;
    for (int i = 0; i < rank; i++)
        used += (size_t)snprintf(shape + used, sizeof shape - used, "%" PRId64 "%s", dims[i],
                                 rank == 1 ? "," : (i + 1 < rank ? ", " : ""));
    char hdr[512];
    int n = snprintf(hdr, sizeof hdr, "{'descr': '%c%s', 'fortran_order': False, 'shape': (%s), }",
                     es == 1 ? '|' : host_order(), code, shape);
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
