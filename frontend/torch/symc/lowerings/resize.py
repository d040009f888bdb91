"""Lowerings of upsampling (nearest, nearest-exact, linear, bilinear, bicubic, trilinear) as symc's resize.

Approach: the upsampling ops are kept whole by the tracer's decomposition table (_UPSAMPLE_KEPT) and
mapped onto resize's coordinate and rounding modes in torch's conventions (see _upsample); a scale
factor on a symbolic size must be a binary fraction, so the output size is exact.
"""
import math

from .helpers import _float_in, _schema_args, _static
from .registry import _LOWER, _op


# upsampling ops run_decompositions would turn into index arithmetic (bicubic, nearest-exact): kept whole, as
# the others are left, for _upsample's resize
_UPSAMPLE_KEPT = ["upsample_bicubic2d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d",
                  "_upsample_nearest_exact3d", "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
                  "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"]


def _binary_fraction(s):
    """A float scale as (num, den) with den a power of 2: exact, since a double is one."""
    num, den = float(s), 1
    while num != math.floor(num) and den < (1 << 40):
        num, den = num * 2, den * 2
    return (int(num), den) if num == math.floor(num) and num <= (1 << 31) else None


def _upsample(mode, nearest_mode=None, antialias=0):
    """upsample_{nearest,linear,bilinear,bicubic,trilinear}{1,2,3}d (.vec and .default), _upsample_nearest_exact*
    and the antialiased _upsample_*_aa as symc's resize, in torch's conventions:
    nearest: src = min(floor(dst * in / out), in - 1) = ONNX asymmetric + floor; nearest-exact:
    floor((dst + 0.5) * in / out) = half_pixel + round_prefer_ceil; linear/cubic: align_corners, else half_pixel
    (src = (dst + 0.5) * in / out - 0.5; linear clamps at 0, which reading the edge twice equals; cubic reads
    clamped indices, as torch's). A scale factor the caller gave is the one torch maps coordinates by (1 /
    scale), so it is passed as the resize's scale (not for align_corners, which uses the lengths); the output
    size is torch's floor(in * scale), exact for a binary-fraction scale on a symbolic size."""
    def f(tr, n, a, k):
        if antialias:  # torch's filter support and normalization differ from ONNX's antialias resize
            tr.fail("antialias=True is not supported (symc's antialiased resize is ONNX's, whose filter differs "
                    "from torch's); interpolate without antialias")
        g = _schema_args(n, a, k)
        xs, ys = tr.shape(n.args[0]), tr.shape(n)
        rank, nsp = len(xs), len(xs) - 2
        if nsp < 1 or len(ys) != rank:
            tr.fail(f"upsampling a rank-{rank} input is not supported")
        _float_in(tr, n)
        align = bool(g.get("align_corners", False)) if mode != "nearest" else False
        if "scale_factors" in g:
            sf = g.get("scale_factors")
            scales = [None] * nsp if sf is None else [float(v) for v in sf]
            if len(scales) == 1:
                scales = scales * nsp
        else:
            scales = [g.get(nm) for nm in (("scales",) if nsp == 1 else ("scales_d", "scales_h", "scales_w")[3 - nsp:])]
        if len(scales) != nsp:
            tr.fail(f"{len(scales)} scale factors for {nsp} spatial dims")
        sizes = [tr.dim(s) for s in xs[:2]]
        for i in range(nsp):
            sz, s = _static(ys[2 + i]), scales[i]
            if isinstance(sz, int) or s is None:
                sizes.append(tr.dim(sz))
                continue
            frac, src = _binary_fraction(s), _static(xs[2 + i])
            if frac is None:
                tr.fail(f"scale factor {s!r} of a symbolic size is not a binary fraction symc can multiply exactly")
            sizes.append(tr.m.floordiv(tr.m.mul(tr.dim(src), tr.m.const(frac[0])), tr.m.const(frac[1])))
        attrs = [("sizes", "dims", sizes)]
        if not align and any(s is not None for s in scales):
            full = [1.0, 1.0]
            for i, s in enumerate(scales):
                if s is None:  # torch maps this axis by in / out: the resize's run-time scale, if static
                    src, dst = _static(xs[2 + i]), _static(ys[2 + i])
                    if not (isinstance(src, int) and isinstance(dst, int)):
                        tr.fail(f"a scale factor for some spatial dims but not dim {2 + i}, whose size is symbolic, "
                                f"is not supported")
                    s = dst / src
                elif not s > 0:
                    tr.fail(f"scale factor {s!r} must be positive")
                full.append(float(s))
            attrs.append(("scales", "floats", full))
        coord = "align_corners" if align else "asymmetric" if mode == "nearest" and nearest_mode == "floor" \
            else "half_pixel"
        attrs += [("mode", "str", "linear" if mode == "linear" else mode), ("coord_mode", "str", coord)]
        if mode == "nearest":
            attrs.append(("nearest_mode", "str", nearest_mode))
        if mode == "cubic":
            attrs += [("cubic_coeff_a", "float", -0.75), ("exclude_outside", "int", 0)]
        return tr.node("resize", [tr.tensor(a[0])], attrs)
    return f


for _d in ("1d", "2d", "3d"):
    for _name, _fn in ((f"upsample_nearest{_d}", _upsample("nearest", "floor")),
                       (f"_upsample_nearest_exact{_d}", _upsample("nearest", "round_prefer_ceil"))):
        _o = _op(_name)
        if _o is not None:
            _LOWER[_o] = _fn


for _name, _fn in (("upsample_linear1d", _upsample("linear")), ("upsample_bilinear2d", _upsample("linear")),
                   ("upsample_trilinear3d", _upsample("linear")), ("upsample_bicubic2d", _upsample("cubic")),
                   ("_upsample_bilinear2d_aa", _upsample("linear", antialias=1)),
                   ("_upsample_bicubic2d_aa", _upsample("cubic", antialias=1))):
    _o = _op(_name)
    if _o is not None:
        _LOWER[_o] = _fn
