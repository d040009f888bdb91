"""Lowerings of convolution and pooling: 1-D and 2-D convolutions (transposed too), max_pool2d, avg_pool2d
and adaptive_avg_pool2d where it is plain pooling.

Approach: 2-D is symc's conv2d, 1-D a conv2d over a unit axis, transposed ones symc's conv_transpose in
torch's weight layout; pooling attributes are read in torch's argument order (_pool_attrs). 3-D and
adaptive pooling with uneven windows are refused by name.
"""
import torch

from ..values import _Unsupported, aten
from .helpers import _static
from .registry import _op, _reg


def _pair(v, name, tr):
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) == 1:
        return [v[0], v[0]]
    if len(v) != 2:
        tr.fail(f"{name} {v} is not 2-D")
    return [int(e) for e in v]


def _ntuple(v, nd, name, tr):
    v = [v] if isinstance(v, int) else list(v)
    if len(v) == 1:
        v = v * nd
    if len(v) != nd:
        tr.fail(f"{name} {v} does not match a {nd}-D convolution")
    return [int(e) for e in v]


@_reg(_op("convolution"), _op("conv2d"), _op("conv1d"), _op("_convolution"), _op("conv_transpose1d"),
      _op("conv_transpose2d"))
def _conv(tr, n, a, k):
    """convolution: 2-D is symc's conv2d; 1-D is a conv2d over [N, C, 1, L] (a unit axis added to the input
    and the weight, then removed); transposed 1-D and 2-D are symc's conv_transpose (weight [C, O/group, k..],
    torch's layout, pads begins = ends = padding, output_padding as given). 3-D is refused by name."""
    pk = n.target._overloadpacket
    rank = tr.rank(n.args[0])
    g = lambda i, name, dflt: k.get(name, a[i] if len(a) > i else dflt)
    x, w, b = a[0], a[1], g(2, "bias", None)
    transposed = pk in (aten.conv_transpose1d, aten.conv_transpose2d)
    out_pad = 0
    if pk in (aten.conv2d, aten.conv1d):
        stride, pad, dil, groups = g(3, "stride", 1), g(4, "padding", 0), g(5, "dilation", 1), g(6, "groups", 1)
    elif transposed:  # (input, weight, bias, stride, padding, output_padding, groups, dilation)
        stride, pad, out_pad = g(3, "stride", 1), g(4, "padding", 0), g(5, "output_padding", 0)
        groups, dil = g(6, "groups", 1), g(7, "dilation", 1)
    else:
        stride, pad, dil = g(3, "stride", 1), g(4, "padding", 0), g(5, "dilation", 1)
        transposed = bool(g(6, "transposed", False))
        out_pad, groups = g(7, "output_padding", 0), g(8, "groups", 1)
    nd = rank - 2
    if nd not in (1, 2):
        tr.fail(f"{nd}-D {'transposed ' if transposed else ''}convolution (a rank-{rank} input) is not supported; "
                f"symc has 1-D and 2-D convolutions (rank-3 and rank-4 inputs)")
    if isinstance(pad, str):
        if pad == "valid":
            pad = 0
        else:
            tr.fail(f"padding={pad!r} is not supported; give the pads as ints")
    stride, p, dil = (_ntuple(v, nd, nm, tr) for v, nm in ((stride, "stride"), (pad, "padding"),
                                                           (dil, "dilation")))
    bias = [tr.tensor(b)] if b is not None else []
    if transposed:
        op = _ntuple(out_pad, nd, "output_padding", tr)
        return tr.node("conv_transpose", [tr.tensor(x), tr.tensor(w)] + bias,
                       [("strides", "ints", stride), ("pads", "ints", p + p), ("dilations", "ints", dil),
                        ("group", "int", int(groups)), ("output_padding", "ints", op)])
    if nd == 1:  # [N, C, L] as [N, C, 1, L]
        xs = tr.node("unsqueeze", [tr.tensor(x)], [("axes", "ints", [2])])
        ws = w.unsqueeze(2) if isinstance(w, torch.Tensor) else tr.node("unsqueeze", [tr.tensor(w)],
                                                                         [("axes", "ints", [2])])
        y = tr.node("conv2d", [xs, tr.tensor(ws)] + bias,
                    [("strides", "ints", [1] + stride), ("pads", "ints", [0, p[0], 0, p[0]]),
                     ("dilations", "ints", [1] + dil), ("group", "int", int(groups))])
        return tr.node("squeeze", [y], [("axes", "ints", [2])])
    return tr.node("conv2d", [tr.tensor(x), tr.tensor(w)] + bias,
                   [("strides", "ints", stride), ("pads", "ints", [p[0], p[1], p[0], p[1]]),
                    ("dilations", "ints", dil), ("group", "int", int(groups))])


def _pool_attrs(tr, a, k):
    g = lambda i, name, dflt: k.get(name, a[i] if len(a) > i else dflt)
    kernel = _pair(g(1, "kernel_size", None), "kernel_size", tr)
    stride = g(2, "stride", None)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _pair(stride, "stride", tr)
    p = _pair(g(3, "padding", 0), "padding", tr)
    return g, [("kernel", "ints", kernel), ("strides", "ints", stride), ("pads", "ints", [p[0], p[1], p[0], p[1]])]


@_reg(_op("max_pool2d_with_indices"), _op("max_pool2d"))
def _max_pool(tr, n, a, k):
    if tr.rank(n.args[0]) != 4:
        tr.fail("only NCHW (rank-4) max_pool2d is supported")
    g, attrs = _pool_attrs(tr, a, k)
    attrs += [("dilations", "ints", _pair(g(4, "dilation", 1), "dilation", tr)),
              ("ceil_mode", "int", int(bool(g(5, "ceil_mode", False))))]
    y = tr.node("max_pool2d", [tr.tensor(a[0])], attrs)
    if n.target._overloadpacket is aten.max_pool2d_with_indices:
        return (y, _Unsupported("max_pool2d's indices"))
    return y


@_reg(_op("avg_pool2d"))
def _avg_pool(tr, n, a, k):
    if tr.rank(n.args[0]) != 4:
        tr.fail("only NCHW (rank-4) avg_pool2d is supported")
    g, attrs = _pool_attrs(tr, a, k)
    if g(6, "divisor_override", None) is not None:
        tr.fail("avg_pool2d divisor_override is not supported")
    attrs += [("ceil_mode", "int", int(bool(g(4, "ceil_mode", False)))),
              ("count_include_pad", "int", int(bool(g(5, "count_include_pad", True))))]
    return tr.node("avg_pool2d", [tr.tensor(a[0])], attrs)


@_reg(_op("_adaptive_avg_pool2d"), _op("adaptive_avg_pool2d"))
def _adaptive(tr, n, a, k):
    """To (1, 1): global_avg_pool. To a size dividing the (static) input: avg_pool2d with kernel = stride =
    input / output, the same windows. Anything else (uneven windows, symbolic sizes) is refused."""
    out = [int(v) for v in a[1]]
    shape = tr.shape(n.args[0])
    if tr.rank(n.args[0]) != 4:
        tr.fail(f"adaptive_avg_pool2d of a rank-{tr.rank(n.args[0])} input is not supported (NCHW is)")
    if out == [1, 1]:
        return tr.node("global_avg_pool", [tr.tensor(a[0])])
    hw = [_static(s) for s in shape[2:]]
    if not all(isinstance(s, int) for s in hw):
        tr.fail(f"adaptive_avg_pool2d to {out} of a symbolic spatial size {shape[2:]} is not supported (to (1, 1) "
                f"is, and to a size that divides a static input)")
    if hw == out:
        return a[0]
    if any(o == 0 or s % o for s, o in zip(hw, out)):
        tr.fail(f"adaptive_avg_pool2d from {hw} to {out} is not supported: the output does not divide the input, "
                f"so the windows differ in size")
    kern = [s // o for s, o in zip(hw, out)]
    return tr.node("avg_pool2d", [tr.tensor(a[0])], [("kernel", "ints", kern), ("strides", "ints", kern),
                                                     ("pads", "ints", [0, 0, 0, 0])])
