/* The symrt API at its limits, on the reference backend: sizes that
 * overflow int64 bytes (one input, an intermediate, the workspace) refused
 * with the tensor and its dims, before anything is allocated; a constant
 * output copied only into a bound buffer big enough for it; a wrong fixed
 * dim refused when the input shape is set; engine bytes at
 * an odd address, and an int64 vector crafted to sit at 4 mod 8, loaded
 * (the ASan+UBSan build fails on any misaligned load); engine files that
 * are not regular files, or larger than an engine can be, refused without
 * reading them. Engines are built with the C builder API, as
 * reference-only engines (no NVRTC). */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "runtime/engine.h"
#include "symc/symrt.h"
#include "tests/check.h"

static uint8_t *compile(symc_module *m, size_t *size) {
    symc_error err;
    uint8_t *bytes = NULL;
    *size = 0;
    CHECK_MSG(symc_module_infer_shapes(m, &err) == SYMC_OK, "%s", err.msg);
    cg_options o = cg_default_options();
    o.gpu = 0;
    CHECK_MSG(cg_build_engine(m, &o, &bytes, size, &err) == SYMC_OK, "%s", err.msg);
    symc_module_destroy(m);
    return bytes;
}

static symrt_engine *load(uint8_t *bytes, size_t size) {
    symc_error err;
    symrt_engine *e = NULL;
    CHECK_MSG(bytes && symrt_engine_load(bytes, size, &e, &err) == SYMC_OK, "%s", err.msg);
    free(bytes);
    return e;
}

/* x [B, 1024] -> y = relu(x); t1 = relu(x), t2 = neg(t1), z = t1 + t2:
 * B in [1, 2^62], so x overflows int64 bytes at B = 2^55 */
static symrt_engine *huge_engine(void) {
    symc_error err;
    symc_module *m = symc_module_create("huge", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, (int64_t)1 << 62, 1, &B, &err);
    symc_tensor x, y;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 1024)}, &x, &err);
    symc_add_node(m, "relu", "y", &x, 1, NULL, 0, &y, 1, &err);
    symc_mark_output(m, y, &err);
    size_t size;
    uint8_t *bytes = compile(m, &size);
    return load(bytes, size);
}

/* a [B, 1] + w [1, C] -> s [B, C] (an intermediate) -> out = relu(s): each
 * input fits, s overflows at B = C = 2^31 */
static symrt_engine *broadcast_engine(void) {
    symc_error err;
    symc_module *m = symc_module_create("outer", &err);
    symc_dim B, C, one;
    symc_declare_symbol(m, "B", 1, 4, (int64_t)1 << 40, 1, &B, &err);
    symc_declare_symbol(m, "C", 1, 4, (int64_t)1 << 40, 1, &C, &err);
    one = symc_dim_const(m, 1);
    symc_tensor a, w, s, out;
    symc_add_input(m, "a", SYMC_F32, 2, (symc_dim[]){B, one}, &a, &err);
    symc_add_input(m, "w", SYMC_F32, 2, (symc_dim[]){one, C}, &w, &err);
    symc_add_node(m, "add", "s", (symc_tensor[]){a, w}, 2, NULL, 0, &s, 1, &err);
    symc_add_node(m, "relu", "out", &s, 1, NULL, 0, &out, 1, &err);
    symc_mark_output(m, out, &err);
    size_t size;
    uint8_t *bytes = compile(m, &size);
    return load(bytes, size);
}

/* x [B, 4] -> t1 = relu(x), t2 = neg(t1), z = t1 + t2: at B = 2^58 every
 * tensor is 2^62 bytes, but t1 and t2 live together: 2^63 of workspace */
static symrt_engine *workspace_engine(void) {
    symc_error err;
    symc_module *m = symc_module_create("chain", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 4, (int64_t)1 << 62, 1, &B, &err);
    symc_tensor x, t1, t2, z;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 4)}, &x, &err);
    symc_add_node(m, "relu", "t1", &x, 1, NULL, 0, &t1, 1, &err);
    symc_add_node(m, "neg", "t2", &t1, 1, NULL, 0, &t2, 1, &err);
    symc_add_node(m, "add", "z", (symc_tensor[]){t1, t2}, 2, NULL, 0, &z, 1, &err);
    symc_mark_output(m, z, &err);
    size_t size;
    uint8_t *bytes = compile(m, &size);
    return load(bytes, size);
}

static void test_overflow(void) {
    symc_error err;
    int64_t dims[8];
    int32_t rank;
    symrt_context *c = NULL;

    symrt_engine *e = huge_engine();
    if (e && symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK) {
        /* the input itself: refused when its shape is set */
        CHECK(symrt_set_input_shape(c, "x", (int64_t[]){(int64_t)1 << 55, 1024}, 2, &err) == SYMC_ERR_OVERFLOW);
        CHECK_CONTAINS(err.msg,
                       "input 'x' of shape [36028797018963968, 1024] (f32) is too large: its size in bytes "
                       "does not fit in 64 bits");
        /* nothing was accepted: the context has no shape for x */
        CHECK(symrt_get_tensor_shape(c, "y", dims, &rank, &err) == SYMC_ERR_INVALID_ARG);
        CHECK_CONTAINS(err.msg, "input 'x' has no shape yet");
        /* the largest that fits runs the checks through */
        CHECK_MSG(symrt_set_input_shape(c, "x", (int64_t[]){(int64_t)1 << 50, 1024}, 2, &err) == SYMC_OK, "%s",
                  err.msg);
        CHECK_MSG(symrt_get_tensor_shape(c, "y", dims, &rank, &err) == SYMC_OK, "%s", err.msg);
        CHECK(rank == 2 && dims[0] == (int64_t)1 << 50 && dims[1] == 1024);
        /* a small shape still runs */
        float x[8 * 1024], y[8 * 1024];
        for (int i = 0; i < 8 * 1024; i++) x[i] = (float)(i % 7) - 3.0f;
        CHECK(symrt_set_input_shape(c, "x", (int64_t[]){8, 1024}, 2, &err) == SYMC_OK);
        symrt_set_tensor_address(c, "x", x, sizeof x, &err);
        symrt_set_tensor_address(c, "y", y, sizeof y, &err);
        CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
        CHECK(y[0] == 0.0f && y[4] == 1.0f);
    }
    symrt_context_destroy(c);
    c = NULL;
    symrt_engine_destroy(e);

    /* an intermediate: refused once every input has a shape, naming it */
    e = broadcast_engine();
    if (e && symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK) {
        int64_t big = (int64_t)1 << 31;
        CHECK(symrt_set_input_shape(c, "a", (int64_t[]){big, 1}, 2, &err) == SYMC_OK);
        CHECK(symrt_set_input_shape(c, "w", (int64_t[]){1, big}, 2, &err) == SYMC_OK);
        CHECK(symrt_get_tensor_shape(c, "out", dims, &rank, &err) == SYMC_ERR_OVERFLOW);
        CHECK_CONTAINS(err.msg, "tensor 's' of shape [2147483648, 2147483648] (f32) is too large");
        float a[1] = {0}, w[1] = {0}, out[1];
        symrt_set_tensor_address(c, "a", a, sizeof a, &err);
        symrt_set_tensor_address(c, "w", w, sizeof w, &err);
        symrt_set_tensor_address(c, "out", out, sizeof out, &err);
        CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_OVERFLOW); /* the same refusal, nothing run */
        CHECK_CONTAINS(err.msg, "tensor 's' of shape [2147483648, 2147483648] (f32) is too large");
        /* one row fits again */
        CHECK(symrt_set_input_shape(c, "a", (int64_t[]){1, 1}, 2, &err) == SYMC_OK);
        CHECK(symrt_set_input_shape(c, "w", (int64_t[]){1, 1}, 2, &err) == SYMC_OK);
        CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    }
    symrt_context_destroy(c);
    c = NULL;
    symrt_engine_destroy(e);

    /* the workspace: every tensor fits, the two alive together do not */
    e = workspace_engine();
    if (e && symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK) {
        CHECK(symrt_set_input_shape(c, "x", (int64_t[]){(int64_t)1 << 58, 4}, 2, &err) == SYMC_OK);
        CHECK(symrt_get_tensor_shape(c, "z", dims, &rank, &err) == SYMC_ERR_OVERFLOW);
        CHECK_CONTAINS(err.msg,
                       "the activation workspace for these shapes is too large: its size in bytes does not "
                       "fit in 64 bits");
        CHECK_CONTAINS(err.msg, "the largest is 't1' of shape [288230376151711744, 4]");
        CHECK(symrt_set_input_shape(c, "x", (int64_t[]){(int64_t)1 << 57, 4}, 2, &err) == SYMC_OK);
        CHECK_MSG(symrt_get_tensor_shape(c, "z", dims, &rank, &err) == SYMC_OK, "%s", err.msg);
    }
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
}

/* out = k (a constant [4] f32, marked as an output) and y = relu(x) */
static symrt_engine *constant_output_engine(void) {
    symc_error err;
    symc_module *m = symc_module_create("konst", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_tensor x, y, k;
    symc_add_input(m, "x", SYMC_F32, 2, (symc_dim[]){B, symc_dim_const(m, 4)}, &x, &err);
    symc_add_node(m, "relu", "y", &x, 1, NULL, 0, &y, 1, &err);
    static const float kv[4] = {1, 2, 3, 4};
    symc_add_constant(m, "k", SYMC_F32, 1, (int64_t[]){4}, kv, sizeof kv, &k, &err);
    symc_mark_output(m, y, &err);
    CHECK_MSG(symc_mark_output(m, k, &err) == SYMC_OK, "%s", err.msg);
    size_t size;
    uint8_t *bytes = compile(m, &size);
    return load(bytes, size);
}

static void test_constant_output(void) {
    symc_error err;
    symrt_engine *e = constant_output_engine();
    symrt_context *c = NULL;
    if (!e || symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) != SYMC_OK) {
        CHECK(0);
        symrt_engine_destroy(e);
        return;
    }
    float x[8], y[8];
    float k[8] = {0, 0, 0, 0, 0, 0, 0, 0}; /* room for 8; bound as 4 bytes or 16 */
    memset(x, 0, sizeof x);
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 4}, 2, &err) == SYMC_OK);
    symrt_set_tensor_address(c, "x", x, sizeof x, &err);
    symrt_set_tensor_address(c, "y", y, sizeof y, &err);
    CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG); /* like any output: an address is needed */
    CHECK_CONTAINS(err.msg, "output 'k' has no address");
    symrt_set_tensor_address(c, "k", k, 4, &err);
    CHECK(symrt_enqueue(c, NULL, &err) == SYMC_ERR_INVALID_ARG);
    CHECK_CONTAINS(err.msg, "output 'k' buffer holds 4 bytes, the tensor needs 16");
    CHECK(k[1] == 0.0f); /* nothing written past the 4 bytes given */
    symrt_set_tensor_address(c, "k", k, 16, &err);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s", err.msg);
    CHECK(k[0] == 1.0f && k[3] == 4.0f && k[4] == 0.0f);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
}

/* y = transpose(x, perm [3, 1, 2, 0]), x [B, 2, 3, 5]: the perm is an int64
 * vector in the engine */
static uint8_t *transpose_engine(size_t *size) {
    symc_error err;
    symc_module *m = symc_module_create("perm", &err);
    symc_dim B;
    symc_declare_symbol(m, "B", 1, 2, 4, 1, &B, &err);
    symc_tensor x, y;
    symc_add_input(m, "x", SYMC_F32, 4,
                   (symc_dim[]){B, symc_dim_const(m, 2), symc_dim_const(m, 3), symc_dim_const(m, 5)}, &x, &err);
    symc_attr perm = symc_attr_ints("perm", (const int64_t[]){3, 1, 2, 0}, 4);
    symc_add_node(m, "transpose", "y", &x, 1, &perm, 1, &y, 1, &err);
    symc_mark_output(m, y, &err);
    return compile(m, size);
}

static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void wr32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The engine with its perm vector moved to the end of the FlatBuffer, with
 * its elements at 4 mod 8 (the verifier checks only the length's 4-byte
 * alignment), the size prefix and checksum trailer redone. NULL if the
 * vector or the offset to it is not found. */
static uint8_t *misalign_perm(const uint8_t *bytes, size_t size, size_t *out_size) {
    static const uint8_t pattern[36] = {4, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
                                        0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    size_t fb = size - 12, vec = SIZE_MAX, field = SIZE_MAX;
    for (size_t p = 0; p + sizeof pattern <= fb; p += 4)
        if (!memcmp(bytes + p, pattern, sizeof pattern)) {
            CHECK_MSG(vec == SIZE_MAX, "the perm vector appears twice");
            vec = p;
        }
    if (vec == SIZE_MAX) return NULL;
    CHECK_MSG((vec + 4) % 8 == 0, "the builder aligned the perm's elements at %zu", vec + 4);
    for (size_t p = 4; p < vec; p += 4)
        if (rd32(bytes + p) == vec - p) field = p;
    if (field == SIZE_MAX) return NULL;
    size_t at = (fb + 7) / 8 * 8; /* the new length at 0 mod 8: elements at 4 mod 8 */
    size_t n = at + sizeof pattern + 4 + 12;
    uint8_t *b = calloc(1, n);
    memcpy(b, bytes, fb);
    memcpy(b + at, pattern, sizeof pattern);
    wr32(b + field, (uint32_t)(at - field));
    size_t nfb = at + sizeof pattern + 4; /* keep the FlatBuffer a multiple of 4 */
    wr32(b, (uint32_t)(nfb - 4));
    memcpy(b + nfb, "SXCK", 4);
    uint64_t h = rt_engine_checksum(b, nfb);
    for (int i = 0; i < 8; i++) b[nfb + 4 + i] = (uint8_t)(h >> (8 * i));
    *out_size = nfb + 12;
    return b;
}

/* Runs y = transpose(x) at B = 3 and compares with the loops. */
static void run_transpose(symrt_engine *e, const char *what) {
    symc_error err;
    symrt_context *c = NULL;
    CHECK_MSG(symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) == SYMC_OK, "%s", err.msg);
    if (!c) return;
    float x[3 * 2 * 3 * 5], y[5 * 2 * 3 * 3];
    for (int i = 0; i < 90; i++) x[i] = (float)i;
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){3, 2, 3, 5}, 4, &err) == SYMC_OK);
    symrt_set_tensor_address(c, "x", x, sizeof x, &err);
    symrt_set_tensor_address(c, "y", y, sizeof y, &err);
    CHECK_MSG(symrt_enqueue(c, NULL, &err) == SYMC_OK, "%s: %s", what, err.msg);
    int bad = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 2; b++)
            for (int k = 0; k < 3; k++)
                for (int d = 0; d < 5; d++) bad += y[((d * 2 + b) * 3 + k) * 3 + a] != x[((a * 2 + b) * 3 + k) * 5 + d];
    CHECK_MSG(bad == 0, "%s: %d elements wrong", what, bad);
    symrt_context_destroy(c);
}

/* Engine bytes at any address load (FlatBuffers reads typed scalars: the
 * ASan+UBSan build fails on a misaligned one), and an 8-byte vector at
 * 4 mod 8 inside the buffer reads right. */
static void test_alignment(void) {
    symc_error err;
    size_t size = 0;
    uint8_t *bytes = transpose_engine(&size);
    if (!bytes) return;
    uint8_t *shifted = malloc(size + 8);
    for (size_t off = 1; off < 8; off++) {
        memcpy(shifted + off, bytes, size);
        symrt_engine *e = NULL;
        CHECK_MSG(symrt_engine_load(shifted + off, size, &e, &err) == SYMC_OK, "at +%zu: %s", off, err.msg);
        char what[32];
        snprintf(what, sizeof what, "engine at +%zu", off);
        if (e) run_transpose(e, what);
        symrt_engine_destroy(e);
    }
    free(shifted);
    size_t crafted_size = 0;
    uint8_t *crafted = misalign_perm(bytes, size, &crafted_size);
    CHECK_MSG(crafted != NULL, "the perm vector or its offset was not found in the engine");
    if (crafted) {
        rt_engine *d = NULL;
        CHECK_MSG(rt_engine_decode(crafted, crafted_size, &d, &err) == SYMC_OK, "%s", err.msg);
        int found = 0;
        for (uint32_t i = 0; d && i < d->n_nodes; i++)
            for (uint32_t a = 0; a < d->nodes[i].n_attrs; a++) {
                const symc_attr *at = &d->nodes[i].attrs[a];
                if (strcmp(at->name, "perm")) continue;
                found = 1;
                CHECK(at->n == 4 && at->ints[0] == 3 && at->ints[1] == 1 && at->ints[2] == 2 && at->ints[3] == 0);
            }
        CHECK(found);
        rt_engine_free(d);
        symrt_engine *e = NULL;
        CHECK_MSG(symrt_engine_load(crafted, crafted_size, &e, &err) == SYMC_OK, "%s", err.msg);
        if (e) run_transpose(e, "perm at 4 mod 8");
        symrt_engine_destroy(e);
        free(crafted);
    }
    free(bytes);
}

/* Engine files: anything but a regular file is refused with what it is,
 * before a byte is read (/dev/zero used to be read until malloc failed, a
 * FIFO blocked in open); a file larger than any engine is refused from its
 * size alone; so are engine bytes beyond a FlatBuffer's 2 GiB. */
static void test_files(void) {
    symc_error err;
    symrt_engine *e = NULL;
    const char *tmp = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/symc_limits_XXXXXX", tmp);
    if (!mkdtemp(dir)) {
        CHECK_MSG(0, "mkdtemp in %s failed", tmp);
        return;
    }
    CHECK(symrt_engine_load_file(dir, &e, &err) == SYMC_ERR_IO && e == NULL);
    CHECK_CONTAINS(err.msg, "is a directory, not an engine file");
    CHECK(symrt_engine_load_file("/dev/null", &e, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "'/dev/null' is a character device, not an engine file");
    CHECK(symrt_engine_load_file("/dev/zero", &e, &err) == SYMC_ERR_IO);
    CHECK_CONTAINS(err.msg, "'/dev/zero' is a character device");
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(symrt_engine_load_file(path, &e, &err) == SYMC_ERR_IO); /* no writer: must not wait for one */
    CHECK_CONTAINS(err.msg, "is a FIFO (named pipe), not an engine file");
    unlink(path);
    /* a regular file still loads */
    size_t size = 0;
    uint8_t *bytes = transpose_engine(&size);
    snprintf(path, sizeof path, "%s/m.symx", dir);
    FILE *f = fopen(path, "wb");
    CHECK(f && bytes && fwrite(bytes, 1, size, f) == size);
    if (f) fclose(f);
    CHECK_MSG(symrt_engine_load_file(path, &e, &err) == SYMC_OK, "%s", err.msg);
    if (e) run_transpose(e, "engine from a file");
    symrt_engine_destroy(e);
    e = NULL;
    /* 2 GiB + 17 bytes (sparse: no disk used): refused from fstat alone */
    snprintf(path, sizeof path, "%s/huge.symx", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    off_t huge = ((off_t)1 << 31) + 17;
    CHECK(fd >= 0 && ftruncate(fd, huge) == 0);
    CHECK(symrt_engine_load_file(path, &e, &err) == SYMC_ERR_FORMAT && e == NULL);
    CHECK_CONTAINS(err.msg, "holds 2147483665 bytes; an engine file holds at most 2147483664");
    /* the same bytes in memory, with an engine's header declaring that size:
     * refused before the verifier, which takes at most 2 GiB */
    uint8_t *map = fd >= 0 ? mmap(NULL, (size_t)huge, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    CHECK(map != MAP_FAILED);
    if (map != MAP_FAILED && bytes) {
        memcpy(map, bytes, 64);
        wr32(map, (uint32_t)(huge - 16));
        CHECK(symrt_engine_load(map, (size_t)huge, &e, &err) == SYMC_ERR_FORMAT && e == NULL);
        CHECK_CONTAINS(err.msg, "is more than an engine holds");
        munmap(map, (size_t)huge);
    }
    if (fd >= 0) close(fd);
    unlink(path);
    snprintf(path, sizeof path, "%s/m.symx", dir);
    unlink(path);
    rmdir(dir);
    free(bytes);
}

/* x [B, 3, H, W] with H = W in [8, 16], y [B, 2*H] (a dim computed from
 * another input's symbol): out = relu(x) */
static symrt_engine *image_engine(void) {
    symc_error err;
    symc_module *m = symc_module_create("image", &err);
    symc_dim B, H;
    symc_declare_symbol(m, "B", 1, 2, 8, 1, &B, &err);
    symc_declare_symbol(m, "H", 8, 8, 16, 1, &H, &err);
    symc_tensor x, y, out, out2;
    symc_add_input(m, "x", SYMC_F32, 4, (symc_dim[]){B, symc_dim_const(m, 3), H, H}, &x, &err);
    symc_add_input(m, "y", SYMC_F32, 2, (symc_dim[]){B, symc_dim_mul(m, symc_dim_const(m, 2), H)}, &y, &err);
    symc_add_node(m, "relu", "out", &x, 1, NULL, 0, &out, 1, &err);
    symc_add_node(m, "relu", "out2", &y, 1, NULL, 0, &out2, 1, &err);
    symc_mark_output(m, out, &err);
    symc_mark_output(m, out2, &err);
    size_t size;
    uint8_t *bytes = compile(m, &size);
    return load(bytes, size);
}

/* A dim the model fixes is refused when the input's shape is set (symrt.h
 * says so), naming the input, the dim, what was given and what is needed;
 * the context keeps its earlier shape. Dims that depend on another input
 * are compared once every input has a shape. */
static void test_fixed_dims(void) {
    symc_error err;
    int64_t dims[8];
    int32_t rank;
    symrt_engine *e = image_engine();
    symrt_context *c = NULL;
    if (!e || symrt_context_create(e, SYMRT_BACKEND_REF, NULL, &c, &err) != SYMC_OK) {
        CHECK(0);
        symrt_engine_destroy(e);
        return;
    }
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 4, 8, 8}, 4, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'x' dim 1 = 4 but the model needs 3");
    CHECK_MSG(symrt_set_input_shape(c, "x", (int64_t[]){2, 3, 8, 8}, 4, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_set_input_shape(c, "y", (int64_t[]){2, 16}, 2, &err) == SYMC_OK, "%s", err.msg);
    CHECK_MSG(symrt_get_tensor_shape(c, "out", dims, &rank, &err) == SYMC_OK, "%s", err.msg);
    /* refused: the earlier shape stays */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 1, 8, 8}, 4, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'x' dim 1 = 1 but the model needs 3");
    CHECK(symrt_get_tensor_shape(c, "out", dims, &rank, &err) == SYMC_OK && rank == 4 && dims[1] == 3 && dims[3] == 8);
    /* H's other use in x, and 2*H in y: compared when the shapes are evaluated */
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 3, 8, 9}, 4, &err) == SYMC_OK);
    CHECK(symrt_get_tensor_shape(c, "out", dims, &rank, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'x' dim 3 = 9 but the model needs 8");
    CHECK(symrt_set_input_shape(c, "x", (int64_t[]){2, 3, 9, 9}, 4, &err) == SYMC_OK);
    CHECK(symrt_get_tensor_shape(c, "out2", dims, &rank, &err) == SYMC_ERR_RANGE);
    CHECK_CONTAINS(err.msg, "input 'y' dim 1 = 16 but the model needs 18");
    CHECK(symrt_set_input_shape(c, "y", (int64_t[]){2, 18}, 2, &err) == SYMC_OK);
    CHECK_MSG(symrt_get_tensor_shape(c, "out2", dims, &rank, &err) == SYMC_OK, "%s", err.msg);
    symrt_context_destroy(c);
    symrt_engine_destroy(e);
}

int main(void) {
    test_overflow();
    test_constant_output();
    test_alignment();
    test_files();
    test_fixed_dims();
    return check_report("runtime_test_limits");
}
