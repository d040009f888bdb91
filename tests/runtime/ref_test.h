/* Helpers for the reference-kernel tests: build small tensors from literal
 * values, run one op, compare outputs with literal expectations.
 *
 *   rt_ref_tensor x = tf(SYMC_F32, SH(2, 3), V(1, 2, 3, 4, 5, 6));
 *   rt_ref_tensor y = tz(SYMC_F32, SH(2, 3));
 *   RUN_OK(IR_OP_RELU, NULL, 0, &x, 1, &y, 1);
 *   EXPECT(y, 0, 1, 2, 3, 4, 5, 6);
 *
 * Test tensors are written and read back with the tests' own converters for
 * f32/f64/ints/bool; f16 and bf16 go through the public rt_ref_ conversions,
 * which test_ref_convert checks bit for bit against hand-written patterns
 * and exhaustively against the round-to-nearest-even definition. Memory is
 * released in one sweep (tfree_all) so leak checking stays meaningful. */
#ifndef SYMC_TESTS_RUNTIME_REF_TEST_H
#define SYMC_TESTS_RUNTIME_REF_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "runtime/ref/ref_kernels.h"

#define D(...) ((const int64_t[]){__VA_ARGS__})
#define V(...) ((const double[]){__VA_ARGS__})
#define I(...) ((const int64_t[]){__VA_ARGS__})
/* rank and dims in one argument pair */
#define SH(...) (int32_t)(sizeof(D(__VA_ARGS__)) / sizeof(int64_t)), D(__VA_ARGS__)
#define NV(...) (sizeof(V(__VA_ARGS__)) / sizeof(double))

static void *tpool[8192];
static int tpool_n;
static symc_error terr;

static inline void *talloc(size_t n) {
    void *p = calloc(n ? n : 1, 1);
    if (!p || tpool_n >= (int)(sizeof tpool / sizeof tpool[0])) {
        fprintf(stderr, "test out of memory\n");
        exit(101);
    }
    tpool[tpool_n++] = p;
    return p;
}

static inline void tfree_all(void) {
    while (tpool_n) free(tpool[--tpool_n]);
}

static inline int64_t tnumel(const rt_ref_tensor *t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) n *= t->dims[d];
    return n;
}

/* a zeroed tensor */
static inline rt_ref_tensor tz(symc_dtype dt, int32_t rank, const int64_t *dims) {
    rt_ref_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = rank;
    for (int32_t d = 0; d < rank; d++) t.dims[d] = dims[d];
    t.data = talloc((size_t)tnumel(&t) * symc_dtype_size(dt));
    return t;
}

static inline void tset(rt_ref_tensor *t, int64_t i, double v) { symc_dtype_store(t->data, t->dtype, (size_t)i, v); }

static inline void tseti(rt_ref_tensor *t, int64_t i, int64_t v) {
    char *p = (char *)t->data;
    if (t->dtype == SYMC_I64) memcpy(p + 8 * i, &v, 8);
    else if (t->dtype == SYMC_I32) {
        int32_t x = (int32_t)v;
        memcpy(p + 4 * i, &x, 4);
    } else tset(t, i, (double)v);
}

static inline double tget(const rt_ref_tensor *t, int64_t i) { return symc_dtype_load(t->data, t->dtype, (size_t)i); }

static inline int64_t tgeti(const rt_ref_tensor *t, int64_t i) {
    const char *p = (const char *)t->data;
    if (t->dtype == SYMC_I64) {
        int64_t x;
        memcpy(&x, p + 8 * i, 8);
        return x;
    }
    if (t->dtype == SYMC_I32) {
        int32_t x;
        memcpy(&x, p + 4 * i, 4);
        return x;
    }
    return (int64_t)tget(t, i);
}

static inline uint16_t tbits16(const rt_ref_tensor *t, int64_t i) {
    uint16_t h;
    memcpy(&h, (const char *)t->data + 2 * i, 2);
    return h;
}

/* a tensor from literal values (converted to dt) */
static inline rt_ref_tensor tf(symc_dtype dt, int32_t rank, const int64_t *dims, const double *v) {
    rt_ref_tensor t = tz(dt, rank, dims);
    for (int64_t i = 0; i < tnumel(&t); i++) tset(&t, i, v[i]);
    return t;
}

/* a tensor from literal integers (exact for i64) */
static inline rt_ref_tensor ti(symc_dtype dt, int32_t rank, const int64_t *dims, const int64_t *v) {
    rt_ref_tensor t = tz(dt, rank, dims);
    for (int64_t i = 0; i < tnumel(&t); i++) tseti(&t, i, v[i]);
    return t;
}

/* deterministic pseudo-random values in [-1, 1) (xorshift) */
static uint64_t trng_state = 0x9e3779b97f4a7c15ull;
static inline double trand(void) {
    trng_state ^= trng_state << 13;
    trng_state ^= trng_state >> 7;
    trng_state ^= trng_state << 17;
    return (double)(trng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}
static inline rt_ref_tensor trandom(symc_dtype dt, int32_t rank, const int64_t *dims) {
    rt_ref_tensor t = tz(dt, rank, dims);
    for (int64_t i = 0; i < tnumel(&t); i++) tset(&t, i, trand());
    return t;
}

static inline symc_status trun(ir_op op, const symc_attr *attrs, uint32_t n_attrs, const rt_ref_tensor *in,
                               uint32_t n_in, rt_ref_tensor *out, uint32_t n_out) {
    symc_error_clear(&terr);
    return rt_ref_run(op, "n1", attrs, n_attrs, in, n_in, out, n_out, &terr);
}

#define RUN_OK(...)                                                     \
    do {                                                                \
        symc_status st_ = trun(__VA_ARGS__);                            \
        CHECK_MSG(st_ == SYMC_OK, "status %d: %s", (int)st_, terr.msg); \
    } while (0)

/* run expecting a failure with status `code` and a message containing `text` */
#define RUN_FAILS(code, text, ...)                                                              \
    do {                                                                                        \
        symc_status st_ = trun(__VA_ARGS__);                                                    \
        CHECK_MSG(st_ == (code), "status %d, wanted %d (%s)", (int)st_, (int)(code), terr.msg); \
        CHECK_CONTAINS(terr.msg, text);                                                         \
        CHECK_CONTAINS(terr.msg, "node 'n1'");                                                  \
    } while (0)

static inline int tclose(double got, double want, double tol) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs(got - want) <= tol * (1.0 + fabs(want));
}

static inline void texpect(const char *file, int line, const rt_ref_tensor *t, double tol, const double *want,
                           size_t n) {
    check_count++;
    if ((int64_t)n != tnumel(t)) {
        check_failures++;
        fprintf(stderr, "%s:%d: %zu expected values for %lld elements\n", file, line, n, (long long)tnumel(t));
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!tclose(tget(t, (int64_t)i), want[i], tol)) {
            check_failures++;
            fprintf(stderr, "%s:%d: element %zu is %.17g, expected %.17g\n", file, line, i, tget(t, (int64_t)i),
                    want[i]);
            return;
        }
}

/* EXPECT(tensor, tolerance, values...): relative+absolute tolerance, NaN == NaN */
#define EXPECT(t, tol, ...) texpect(__FILE__, __LINE__, &(t), (tol), V(__VA_ARGS__), NV(__VA_ARGS__))

#endif
