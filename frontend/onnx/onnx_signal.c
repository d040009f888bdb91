/* ONNX signal ops: the window functions (HannWindow, HammingWindow, BlackmanWindow) and
 * MelWeightMatrix, whose inputs must be known at build time, become constants computed here in
 * double precision as the ONNX reference computes them; DFT is the IR op dft, and STFT frames
 * gathered from the signal, windowed, then a DFT. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/onnx/onnx_ops.h"

/* ---- window functions ------------------------------------------------------------------------------- */

/* HannWindow, HammingWindow, BlackmanWindow: the size must be known at build
 * time, so the window is a constant computed here in double precision (as
 * the ONNX reference computes it) and rounded once to output_datatype:
 * w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size when
 * periodic (the default), size - 1 when symmetric. */
enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN };
static symc_status window_fn(fe_ctx *c, int kind) {
    symc_status st = fe_need_inputs(c, 1, 1);
    sym_expr se;
    int64_t size;
    if (!st) st = fe_scalar_value(c, 0, "the window size", &se);
    if (st) return st;
    if (!sym_is_const(c->t, se, &size))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the window size %s must be a constant", fe_txt(c, se));
    if (size < 0 || size > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "window size %" PRId64 " is outside [0, 2^24]", size);
    int64_t odt = fe_attr_i(c, "output_datatype", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    symc_dtype dt;
    if (!fe_dtype((int32_t)odt, &dt) || !ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'output_datatype' = %" PRId64 " (%s): only float output types are supported", odt,
                       fe_onnx_type_name((int32_t)odt));
    int64_t periodic = fe_attr_i(c, "periodic", 1);
    double n_div = (double)(periodic ? size : size - 1), a0, a1, a2 = 0;
    if (kind == WIN_HANN) a0 = 0.5, a1 = 0.5;
    else if (kind == WIN_HAMMING) a0 = 25.0 / 46.0, a1 = 1.0 - 25.0 / 46.0;
    else a0 = 0.42, a1 = 0.5, a2 = 0.08;
    uint8_t *buf = malloc((size_t)(size ? size : 1) * symc_dtype_size(dt));
    if (!buf) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t n = 0; n < size; n++) {
        double x = 2.0 * 3.14159265358979323846 * (double)n / n_div, w; /* M_PI is not C11 */
        if (kind == WIN_HANN) w = sin(x / 2) * sin(x / 2); /* = 0.5 - 0.5 cos(x), as the reference writes it */
        else w = a0 - a1 * cos(x) + a2 * cos(2 * x);
        symc_dtype_store(buf, dt, (size_t)n, w);
    }
    uint32_t out;
    st = fe_const(c, dt, 1, &size, buf, 0, &out);
    free(buf);
    return st;
}
static symc_status h_hann_window(fe_ctx *c) { return window_fn(c, WIN_HANN); }
static symc_status h_hamming_window(fe_ctx *c) { return window_fn(c, WIN_HAMMING); }
static symc_status h_blackman_window(fe_ctx *c) { return window_fn(c, WIN_BLACKMAN); }

/* Python's float floor division (numpy's npy_divmod), which the ONNX
 * reference of MelWeightMatrix uses on its bin edges. */
static double py_floordiv(double a, double b) {
    double mod = fmod(a, b), div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
    if (div == 0) return copysign(0.0, a / b);
    double fl = floor(div);
    return div - fl > 0.5 ? fl + 1.0 : fl;
}

/* MelWeightMatrix: every input must be known at build time, so the matrix
 * [dft_length / 2 + 1, num_mel_bins] is a constant computed here step by step
 * as the ONNX reference computes it (float32 inputs: the mel edges through
 * float32 log1p, the rest in double), its triangular filters between the
 * floored bin edges. */
static symc_status h_mel_weight_matrix(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 5, 5);
    static const char *const role[5] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                        "upper_edge_hertz"};
    double v[5];
    uint32_t t;
    for (uint32_t k = 0; k < 5 && !st; k++)
        if (!(st = fe_in(c, k, &t))) st = fe_const_scalar(c, t, k, role[k], &v[k]);
    if (st) return st;
    symc_dtype fd = T(c, t)->dtype;
    if (fd != SYMC_F32 && fd != SYMC_F64)
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the edge frequencies are %s; float32 and float64 are supported",
                       symc_dtype_name(fd));
    for (int k = 0; k < 3; k++)
        if (v[k] != floor(v[k]) || v[k] < 1 || v[k] > (double)(1 << 20))
            return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%s = %g must be a whole number in [1, 2^20]", role[k], v[k]);
    int64_t n_mel = (int64_t)v[0], dft = (int64_t)v[1], n_spec = dft / 2 + 1;
    int64_t odt = fe_attr_i(c, "output_datatype", ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    symc_dtype dt;
    if (!fe_dtype((int32_t)odt, &dt) || !ir_dtype_is_float(dt))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "attribute 'output_datatype' = %" PRId64 " (%s): only float output types are supported", odt,
                       fe_onnx_type_name((int32_t)odt));
    double mel[2];
    for (int k = 0; k < 2; k++) {
        if (fd == SYMC_F32) {
            float q = (float)v[3 + k] / 700.0f, l = log1pf(q), m = 2595.0f * l;
            mel[k] = (double)m / log(10.0);
        } else {
            mel[k] = 2595.0 * log1p(v[3 + k] / 700.0) / log(10.0);
        }
    }
    double step = (mel[1] - mel[0]) / (double)(n_mel + 2);
    int64_t *bins = malloc((size_t)(n_mel + 2) * sizeof *bins);
    double *w = calloc((size_t)(n_spec * n_mel), sizeof *w);
    uint8_t *buf = malloc((size_t)(n_spec * n_mel) * symc_dtype_size(dt) + 1);
    if (!bins || !w || !buf) {
        free(bins), free(w), free(buf);
        return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < n_mel + 2 && !st; i++) {
        double f = (double)i * step + mel[0];
        f = 700.0 * expm1(f / 2595.0 * log(10.0));
        double b = py_floordiv((double)(dft + 1) * f, v[2]);
        if (!(b >= 0 && b < (double)n_spec))
            st = fe_fail(c, SYMC_ERR_UNSUPPORTED,
                         "mel band edge %" PRId64 " falls in spectrogram bin %g, outside [0, %" PRId64 ")", i, b,
                         n_spec);
        else bins[i] = (int64_t)b;
    }
    for (int64_t i = 0; i < n_mel && !st; i++) {
        int64_t lo = bins[i], ce = bins[i + 1], hi = bins[i + 2];
        if (ce == lo) w[ce * n_mel + i] = 1;
        else
            for (int64_t j = lo; j <= ce; j++) w[j * n_mel + i] = (double)(j - lo) / (double)(ce - lo);
        for (int64_t j = ce; j < hi; j++) w[j * n_mel + i] = (double)(hi - j) / (double)(hi - ce);
    }
    for (int64_t i = 0; i < n_spec * n_mel && !st; i++) symc_dtype_store(buf, dt, (size_t)i, w[i]);
    uint32_t out;
    int64_t dims[2] = {n_spec, n_mel};
    if (!st) st = fe_const(c, dt, 2, dims, buf, 0, &out);
    free(bins), free(w), free(buf);
    return st;
}

/* ---- spectral ------------------------------------------------------------------------------------------ */

/* A one-element integer input known at build time, or dflt when absent. */
static symc_status opt_int_in(fe_ctx *c, uint32_t k, const char *role, int64_t dflt, int *given, int64_t *v) {
    uint32_t t, n;
    *given = 0;
    *v = dflt;
    if (!fe_has_in(c, k)) return SYMC_OK;
    symc_status st = fe_in(c, k, &t);
    if (!st) st = fe_const_ints(c, t, k, role, v, 1, &n);
    if (!st && n != 1) st = fe_fail(c, SYMC_ERR_FORMAT, "input %u (%s) must hold one element, has %u", k, role, n);
    *given = !st;
    return st;
}

/* The IR op dft on x along axis (normalized, before the last dim) with n
 * points; out_k as fe_emit1. */
static symc_status emit_dft(fe_ctx *c, uint32_t x, int64_t axis, int64_t n, int64_t inverse, int64_t onesided,
                            int out_k, uint32_t *out) {
    ir_attr a[4] = {symc_attr_int("axis", axis), symc_attr_int("length", n), symc_attr_int("inverse", inverse),
                    symc_attr_int("onesided", onesided)};
    return fe_emit1(c, IR_OP_DFT, &x, 1, a, 4, out_k, out);
}

/* DFT (opsets 17-20; axis an attribute before 20, an input from 20):
 * dft_length and axis must be known at build time, and the transformed dim
 * constant when dft_length is absent. */
static symc_status h_dft(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 1, 3);
    uint32_t x, out;
    int given;
    int64_t axis = c->opset >= 20 ? -2 : fe_attr_i(c, "axis", 1), n, last;
    int64_t inverse = fe_attr_i(c, "inverse", 0), onesided = fe_attr_i(c, "onesided", 0);
    if (!st) st = fe_in(c, 0, &x);
    if (!st && c->opset >= 20) st = opt_int_in(c, 2, "the axis", axis, &given, &axis);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    int32_t r = xt->rank;
    if (r < 2 || !sym_is_const(c->t, xt->dims[r - 1], &last) || (last != 1 && last != 2))
        return fe_fail(c, SYMC_ERR_FORMAT, "input '%s' must end in a dim of 1 (real) or 2 (complex)", xt->name);
    int64_t ax;
    if (!ir_axis_norm(axis, r, &ax)) return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is out of range", axis);
    axis = ax;
    if (axis == r - 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "axis %" PRId64 " is the last dim of '%s' (real and imaginary parts)", axis,
                       xt->name);
    if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1))
        return fe_fail(c, SYMC_ERR_FORMAT, "inverse = %" PRId64 " and onesided = %" PRId64 " must be 0 or 1", inverse,
                       onesided);
    int64_t len;
    int have_len = sym_is_const(c->t, xt->dims[axis], &len);
    if ((st = opt_int_in(c, 1, "dft_length", 0, &given, &n))) return st;
    if (!given) {
        if (!have_len)
            return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                           "the transformed dim %" PRId64 " of '%s' is %s; without dft_length symc needs it constant",
                           axis, xt->name, fe_txt(c, xt->dims[axis]));
        n = inverse && onesided ? 2 * (len - 1) : len;
    }
    if (n < 1 || n > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "dft_length %" PRId64 " must be in [1, 2^24]", n);
    return emit_dft(c, x, axis, n, inverse, onesided, 0, &out);
}

/* STFT (opset 17) as frames gathered from the signal (constant indices
 * [frames, frame_length]), weighted by the window, then a dft along the
 * frame: frame_step, frame_length and the signal length must be known at
 * build time. */
static symc_status h_stft(fe_ctx *c) {
    symc_status st = fe_need_inputs(c, 2, 4);
    uint32_t x, win = 0, out;
    int given;
    int64_t step, fl, len, last, onesided = fe_attr_i(c, "onesided", 1);
    if (!st) st = fe_in(c, 0, &x);
    if (!st) st = opt_int_in(c, 1, "frame_step", 0, &given, &step);
    if (!st && fe_has_in(c, 2)) st = fe_in(c, 2, &win);
    if (st) return st;
    const ir_tensor *xt = T(c, x);
    if (xt->rank != 3 || !sym_is_const(c->t, xt->dims[2], &last) || (last != 1 && last != 2))
        return fe_fail(c, SYMC_ERR_FORMAT, "signal '%s' must be [batch, length, 1 or 2]", xt->name);
    if (!sym_is_const(c->t, xt->dims[1], &len))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "the signal length %s is symbolic; symc needs it constant for STFT",
                       fe_txt(c, xt->dims[1]));
    symc_dtype dt = xt->dtype;
    int64_t wl = -1;
    if (fe_has_in(c, 2)) {
        const ir_tensor *wt = T(c, win);
        if (wt->rank != 1 || !sym_is_const(c->t, wt->dims[0], &wl))
            return fe_fail(c, SYMC_ERR_FORMAT, "window '%s' must be 1-D of a constant length", wt->name);
    }
    if ((st = opt_int_in(c, 3, "frame_length", wl >= 0 ? wl : len, &given, &fl))) return st;
    if (wl >= 0 && wl != fl)
        return fe_fail(
            c, SYMC_ERR_UNSUPPORTED,
            "a window of %" PRId64 " entries with frame_length %" PRId64 " is not supported (they must match)", wl, fl);
    if (onesided != 0 && onesided != 1)
        return fe_fail(c, SYMC_ERR_FORMAT, "onesided = %" PRId64 " must be 0 or 1", onesided);
    if (step < 1 || fl < 1 || fl > len || fl > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED,
                       "frame_step %" PRId64 " and frame_length %" PRId64 " must be >= 1, the frame at most the signal "
                       "length %" PRId64,
                       step, fl, len);
    int64_t frames = 1 + (len - fl) / step;
    if (frames * fl > ((int64_t)1 << 24))
        return fe_fail(c, SYMC_ERR_UNSUPPORTED, "%" PRId64 " frames of %" PRId64 " are too many", frames, fl);
    int64_t *idx = malloc((size_t)(frames * fl) * sizeof *idx);
    if (!idx) return fe_fail(c, SYMC_ERR_NOMEM, "out of memory");
    for (int64_t f = 0; f < frames; f++)
        for (int64_t j = 0; j < fl; j++) idx[f * fl + j] = f * step + j;
    int64_t idims[2] = {frames, fl};
    uint32_t it, g;
    st = fe_const(c, SYMC_I64, 2, idims, idx, -1, &it);
    free(idx);
    int64_t ax = 1;
    ir_attr ga = symc_attr_int("axis", ax);
    uint32_t gin[2] = {x, it};
    if (st || (st = fe_emit1(c, IR_OP_GATHER, gin, 2, &ga, 1, -1, &g))) return st; /* [batch, frames, fl, c] */
    if (fe_has_in(c, 2)) {
        sym_expr wd[2] = {sym_const(c->t, fl), sym_const(c->t, 1)};
        uint32_t w2;
        if ((st = fe_emit_cast(c, win, dt, -1, &w2)) || (st = fe_emit_reshape(c, w2, wd, 2, -1, &w2)) ||
            (st = fe_emit_bin(c, IR_OP_MUL, g, w2, -1, &g)))
            return st;
    }
    return emit_dft(c, g, 2, fl, 0, onesided, 0, &out);
}

/* this family's ops, sorted by name (fe_translate_node searches it by bisection) */
const fe_op fe_onnx_ops_signal[] = {
    {"BlackmanWindow", h_blackman_window},    {"DFT", h_dft},
    {"HammingWindow", h_hamming_window},      {"HannWindow", h_hann_window},
    {"MelWeightMatrix", h_mel_weight_matrix}, {"STFT", h_stft},
};
const uint32_t fe_onnx_n_ops_signal = sizeof fe_onnx_ops_signal / sizeof fe_onnx_ops_signal[0];
