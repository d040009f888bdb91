"""Lowerings of tensor creation: full/zeros/ones/empty (and their _like and new_ forms), scalar_tensor and
arange.

Approach: a static shape gives a torch constant (folded further by the tracer); a symbolic one a 0-d
constant expanded to the shape, and arange with symbolic bounds symc's range op.
"""
import torch

from ..values import _T, _symc_dtype, aten
from .helpers import _cast, _dt, _static
from .registry import _op, _reg


def _filled(tr, n, value):
    """A tensor of n's shape and dtype holding value: a constant when the shape is static, else a 0-d
    constant expanded to the symbolic shape."""
    v = tr.val(n)
    dt = v.dtype
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, (torch.SymInt, torch.SymFloat)) and _symc_dtype(dt) is not None:
        # a size as the fill value (torch.full((n,), x.size(0))): the scalar computed at run time, expanded
        return tr.node("expand", [tr.tensor(value, dt)], [("shape", "dims", [tr.dim(s) for s in v.shape])])
    if isinstance(value, (torch.SymInt, torch.SymFloat, _T)):
        tr.fail(f"a fill value that is computed at run time ({value}) is not supported")
    shape = [_static(s) for s in v.shape]
    if all(isinstance(s, int) for s in shape):
        return torch.full(shape, value, dtype=dt)
    if _symc_dtype(dt) is None:
        tr.fail(f"a {dt} fill is not supported")
    scalar = torch.tensor(value, dtype=dt)
    return tr.node("expand", [tr.tensor(scalar)], [("shape", "dims", [tr.dim(s) for s in shape])])


@_reg(_op("full"), _op("new_full"), _op("full_like"))
def _full(tr, n, a, k):
    pk = n.target._overloadpacket
    value = k.get("fill_value", a[1] if pk is aten.full else a[2] if pk is aten.new_full else a[1])
    return _filled(tr, n, value)


@_reg(_op("zeros"), _op("new_zeros"), _op("zeros_like"), _op("empty"), _op("new_empty"), _op("empty_like"),
      _op("empty_strided"), _op("new_empty_strided"))
def _zeros(tr, n, a, k):
    return _filled(tr, n, 0)  # empty: any value is right; zeros keep results deterministic


@_reg(_op("ones"), _op("new_ones"), _op("ones_like"))
def _ones(tr, n, a, k):
    return _filled(tr, n, 1)


@_reg(_op("scalar_tensor"))
def _scalar_tensor(tr, n, a, k):
    return _filled(tr, n, a[0])


@_reg(_op("arange"))
def _arange(tr, n, a, k):
    """arange(end) / arange(start, end[, step]) with int (or symbolic int) bounds: a range op."""
    vals = list(a)
    start, end, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) > 2 else 1)
    start, end, step = k.get("start", start), k.get("end", end), k.get("step", step)
    dt = _dt(tr, n)
    for what, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, float) and v != int(v):
            tr.fail(f"arange with a non-integer {what} ({v}) is not supported")
        if isinstance(v, (_T, torch.Tensor)):
            tr.fail(f"arange with a tensor {what} is not supported")
    start, end, step = [_static(int(v) if isinstance(v, float) else v) for v in (start, end, step)]
    if all(isinstance(v, int) for v in (start, end, step)):
        return torch.arange(start, end, step, dtype=dt)
    if not isinstance(step, int) or step == 0:
        tr.fail(f"arange with a symbolic or zero step ({step}) is not supported")
    it = dt if dt in (torch.int64, torch.int32) else torch.int64
    r = tr.node("range", [], [("start", "dims", [tr.dim(start)]), ("limit", "dims", [tr.dim(end)]),
                              ("delta", "dims", [tr.m.const(step)]), ("to", "dtype", _symc_dtype(it))])
    return r if it == dt else _cast(tr, r, it, dt)
