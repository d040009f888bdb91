/* dft: ONNX DFT (opsets 17-20) along one axis, computed directly (the
 * O(n^2) sum, no FFT) in f64 with the twiddles from cos/sin of
 * 2 pi (j k mod n) / n, so long sums stay accurate.
 *
 * x is [..., 1] (real) or [..., 2] (complex, real and imaginary parts); the
 * transform runs along `axis` (never the last) with `length` points: the
 * input is cut or zero-padded to it. Forward: X[k] = sum_j x[j] e^(-2 pi i j
 * k / n), the first n / 2 + 1 bins with onesided. Inverse: x[t] = 1/n sum_k
 * X[k] e^(2 pi i k t / n); inverse with onesided is numpy's irfft: the input
 * holds bins 0 .. n / 2 of a Hermitian spectrum (the imaginary parts of bin
 * 0 and, for even n, bin n / 2 are ignored) and the output is real,
 * [..., 1]. */
#include <math.h>

#include "runtime/ref/ref_kernels_internal.h"

#define DFT_PI 3.14159265358979323846 /* M_PI is not C11 */

symc_status rt_ref_k_dft(rt_ctx *c) {
    const rt_ref_tensor *x = &c->in[0];
    int64_t axis, n, inverse, onesided;
    symc_status s;
    if ((s = rt_ref_attr_int(c, "axis", 1, 0, &axis)) || (s = rt_ref_attr_int(c, "length", 1, 0, &n)) ||
        (s = rt_ref_attr_int(c, "inverse", 0, 0, &inverse)) || (s = rt_ref_attr_int(c, "onesided", 0, 0, &onesided)))
        return s;
    int32_t r = x->rank;
    char t[160];
    if (r < 2 || axis < 0 || axis >= r - 1 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG,
                           "input 0 %s must end in a dim of 1 or 2 and axis %lld must be one of "
                           "the dims before it",
                           rt_ref_shape_str(t, sizeof t, r, x->dims), (long long)axis);
    if (n < 1 || n > ((int64_t)1 << 24))
        return rt_ref_fail(c, SYMC_ERR_INVALID_ARG, "length %lld must be in [1, 2^24]", (long long)n);
    int irfft = inverse && onesided;
    int64_t nout = irfft ? n : onesided ? n / 2 + 1 : n, cin = x->dims[r - 1], cout = irfft ? 1 : 2;
    int64_t od[RT_REF_MAX_RANK];
    for (int32_t d = 0; d < r; d++) od[d] = x->dims[d];
    od[axis] = nout, od[r - 1] = cout;
    if ((s = rt_ref_check_out(c, 0, x->dtype, r, od))) return s;
    int64_t lin = x->dims[axis], outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= x->dims[d];
    for (int32_t d = (int32_t)axis + 1; d < r - 1; d++) inner *= x->dims[d];
    /* irfft reads bins 0 .. n / 2; the others use min(lin, n) points */
    int64_t used = irfft ? (n / 2 + 1 < lin ? n / 2 + 1 : lin) : (n < lin ? n : lin);
    double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / (double)n : 1.0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t q = 0; q < inner; q++) {
            int64_t ib = o * lin * inner + q, ob = o * nout * inner + q;
            for (int64_t k = 0; k < nout; k++) {
                double re = 0.0, im = 0.0;
                for (int64_t j = 0; j < used; j++) {
                    int64_t e = j * k % n; /* j, k < 2^24: no overflow */
                    double th = 2.0 * DFT_PI * (double)e / (double)n, cs = cos(th), sn = sign * sin(th);
                    double a = rt_ld_f(x, (ib + j * inner) * cin),
                           b = cin == 2 ? rt_ld_f(x, (ib + j * inner) * cin + 1) : 0.0;
                    if (irfft) {
                        /* bin j and (0 < j, 2 j != n) its mirror n - j, conj(X[j]) */
                        int mirrored = j > 0 && 2 * j != n;
                        if (!mirrored) b = 0.0;
                        re += (mirrored ? 2.0 : 1.0) * (a * cs - b * sn);
                        continue;
                    }
                    re += a * cs - b * sn;
                    im += a * sn + b * cs;
                }
                int64_t oi = (ob + k * inner) * cout;
                rt_st_f(&c->out[0], oi, re * scale);
                if (cout == 2) rt_st_f(&c->out[0], oi + 1, im * scale);
            }
        }
    return SYMC_OK;
}
