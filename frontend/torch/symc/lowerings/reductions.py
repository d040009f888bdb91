"""Lowerings of reductions: sum/mean/amax/amin/prod, any/all, var/std (and _mean), softmax and
log_softmax, cumsum, argmax/argmin, topk and max/min along a dim.

Approach: one factory per kind (_reduce, _reduce_cast, _any_all, _arg, _max_min_dim), registered per op;
dims are normalized and sorted, dtype= casts the input first as torch does, and what symc lacks is composed
(amin as -amax(-x), any as a sum of 0/1 values > 0, var as mean((x - mean)^2) corrected).
"""
from .. import _lib
from ..values import aten
from .helpers import _as_bool, _cast, _dt, _in_dtype, _norm, _schema_args, _static
from .registry import _LOWER, _op, _reg


@_reg(_op("_softmax"), _op("softmax"), _op("_safe_softmax"))
def _softmax(tr, n, a, k):
    rank = tr.rank(n)
    return tr.node("softmax", [tr.tensor(a[0])], [("axis", "int", _norm(tr, a[1], rank))])


@_reg(_op("_log_softmax"), _op("log_softmax"))
def _log_softmax(tr, n, a, k):
    rank = tr.rank(n)
    return tr.node("log_softmax", [tr.tensor(a[0])], [("axis", "int", _norm(tr, a[1], rank))])


def _reduce(op):
    def f(tr, n, a, k):
        rank = tr.rank(n.args[0])
        dims = k.get("dim", a[1] if len(a) > 1 else None)
        keep = k.get("keepdim", a[2] if len(a) > 2 else False)
        if k.get("dtype") is not None and k["dtype"] != _in_dtype(tr, n):
            tr.fail("a reduction with a dtype conversion is not supported")
        if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
            dims = list(range(rank))
        elif isinstance(dims, int):
            dims = [dims]
        axes = sorted({_norm(tr, d, rank) for d in dims})
        return tr.node(op, [tr.tensor(a[0])], [("axes", "ints", axes), ("keepdims", "int", int(bool(keep)))])
    return f


def _reduce_cast(op):
    """mean/sum/amax with dims, keepdim and dtype= (the input cast first, as torch does); amin is
    -amax(-x)."""
    base = _reduce(op)

    def f(tr, n, a, k):
        dt = k.get("dtype")
        if dt is not None and dt != _in_dtype(tr, n):
            a = [_cast(tr, a[0], _in_dtype(tr, n), dt)] + list(a[1:])
            k = {kk: v for kk, v in k.items() if kk != "dtype"}
        return base(tr, n, a, k)
    return f


_LOWER[aten.mean] = _reduce_cast("reduce_mean")
_LOWER[aten.sum] = _reduce_cast("reduce_sum")
_LOWER[aten.amax] = _reduce("reduce_max")


# torch.max(x) / torch.min(x) over every element (a 0-d result); over no elements torch raises, symc gives the
# identity (-inf / +inf for floats: torchvision's batched_nms over no boxes then keeps none, as it should)
_LOWER[_op("max.default")] = _reduce("reduce_max")


@_reg(_op("amin"), _op("min.default"))
def _amin(tr, n, a, k):
    neg = tr.node("neg", [tr.tensor(a[0])])
    return tr.node("neg", [_reduce("reduce_max")(tr, n, [neg] + list(a[1:]), k)])


def _any_all(is_all):
    """any: sum of the 0/1 values > 0 (exact below 2**24 elements); all: not any(not x)."""
    def f(tr, n, a, k):
        x = _as_bool(tr, n, a, 0)
        if is_all:
            x = tr.node("not", [x])
        xf = tr.node("cast", [x], [("to", "dtype", _lib.F32)])
        s = _reduce("reduce_sum")(tr, n, [xf] + list(a[1:]), k)
        r = tr.node("greater", [s, tr.tensor(0.0)])
        return tr.node("not", [r]) if is_all else r
    return f


_LOWER[aten.any] = _any_all(False)
_LOWER[aten.all] = _any_all(True)


@_reg(_op("var"), _op("std"), _op("var_mean"), _op("std_mean"))
def _var(tr, n, a, k):
    """mean((x - mean)^2) * N / (N - correction); N must be static when correction != 0."""
    g = _schema_args(n, a, k)
    dims = g.get("dim")
    shape = tr.shape(n.args[0])
    rank = len(shape)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        dims = list(range(rank))
    elif isinstance(dims, int):
        dims = [dims]
    axes = sorted({_norm(tr, d, rank) for d in dims})
    corr = g.get("correction")
    if corr is None:
        corr = 1 if g.get("unbiased", True) else 0
    corr = float(corr)
    keep = bool(g.get("keepdim") or False)
    x = tr.tensor(a[0])
    mean = tr.node("reduce_mean", [x], [("axes", "ints", axes), ("keepdims", "int", 1)])
    dlt = tr.node("sub", [x, mean])
    var = tr.node("reduce_mean", [tr.node("mul", [dlt, dlt])], [("axes", "ints", axes), ("keepdims", "int", int(keep))])
    if corr != 0:
        cnt = 1
        for d in axes:
            s = _static(shape[d])
            if not isinstance(s, int):
                tr.fail(f"var/std with correction={corr} over a symbolic dim ({s}) is not supported")
            cnt *= s
        var = tr.node("mul", [var, tr.tensor(cnt / (cnt - corr) if cnt != corr else float("inf"))])
    pk = n.target._overloadpacket
    out = tr.node("sqrt", [var]) if pk in (aten.std, aten.std_mean) else var
    if pk in (aten.var_mean, aten.std_mean):
        m = mean if keep else tr.node("squeeze", [mean], [("axes", "ints", axes)])
        return (out, m)
    return out


@_reg(_op("cumsum"))
def _cumsum(tr, n, a, k):
    """cumsum over dim; integer and bool inputs sum in int64 as torch does (the input cast to the output's
    dtype first, also for dtype=)."""
    g = _schema_args(n, a, k)
    x = _cast(tr, a[0], _in_dtype(tr, n), _dt(tr, n))
    rank = tr.rank(n.args[0])
    if rank == 0:
        return tr.node("identity", [tr.tensor(x)])
    return tr.node("cumsum", [tr.tensor(x)], [("axis", "int", _norm(tr, g["dim"], rank))])


def _arg(op):
    """argmax/argmin: the first extreme (NaN counts as the extreme), as torch; dim=None looks at the
    flattened input."""
    def f(tr, n, a, k):
        g = _schema_args(n, a, k)
        x, shape = tr.tensor(a[0]), tr.shape(n.args[0])
        dim, keep = g.get("dim"), bool(g.get("keepdim", False))
        if len(shape) == 0:  # a 0-d input: index 0
            return tr.node("reshape", [tr.node(op, [tr.node("reshape", [x], [("shape", "dims", [tr.dim(1)])])],
                                              [("axis", "int", 0), ("keepdims", "int", 0)])], [("shape", "dims", [])])
        if dim is None:
            flat = tr.node("reshape", [x], [("shape", "dims", [_lib.DIM_NONE])])
            y = tr.node(op, [flat], [("axis", "int", 0), ("keepdims", "int", 0)])
            if keep:
                y = tr.node("reshape", [y], [("shape", "dims", [tr.dim(1)] * len(shape))])
            return y
        return tr.node(op, [x], [("axis", "int", _norm(tr, dim, len(shape))), ("keepdims", "int", int(keep))])
    return f


_LOWER[aten.argmax] = _arg("argmax")
_LOWER[aten.argmin] = _arg("argmin")


@_reg(_op("topk"))
def _topk(tr, n, a, k):
    """(values, indices) of the k largest (smallest) along dim, best first; equal values in index order
    (torch leaves their order unspecified). sorted=False allows any order, so sorted output is valid."""
    g = _schema_args(n, a, k)
    x, shape = tr.tensor(a[0]), tr.shape(n.args[0])
    if len(shape) == 0:
        tr.fail("topk of a 0-d tensor is not supported")
    axis = _norm(tr, g.get("dim", -1), len(shape))
    idx = tr.node("topk", [x], [("k", "dims", [tr.dim(g["k"])]), ("axis", "int", axis),
                                ("largest", "int", int(bool(g.get("largest", True))))])
    vals = tr.node("gather_elements", [x, idx], [("axis", "int", axis)])
    return (vals, idx)


def _max_min_dim(red, arg):
    """max.dim / min.dim: (values, indices) along dim."""
    def f(tr, n, a, k):
        g = _schema_args(n, a, k)
        x, rank = tr.tensor(a[0]), tr.rank(n.args[0])
        keep = int(bool(g.get("keepdim", False)))
        axis = _norm(tr, g["dim"], rank)
        vals = tr.node(red, [x], [("axes", "ints", [axis]), ("keepdims", "int", keep)])
        idx = tr.node(arg, [x], [("axis", "int", axis), ("keepdims", "int", keep)])
        return (vals, idx)
    return f


_LOWER[_op("max.dim")] = _max_min_dim("reduce_max", "argmax")
_LOWER[_op("min.dim")] = _max_min_dim("reduce_min", "argmin")


@_reg(_op("prod"))
def _prod(tr, n, a, k):
    """prod over one dim (prod.dim_int) or all; integer inputs multiply in int64 as torch does."""
    g = _schema_args(n, a, k)
    x = _cast(tr, a[0], _in_dtype(tr, n), _dt(tr, n))
    rank = tr.rank(n.args[0])
    dim = g.get("dim")
    axes = list(range(rank)) if dim is None else [_norm(tr, dim, rank)]
    return tr.node("reduce_prod", [tr.tensor(x)], [("axes", "ints", axes),
                                                   ("keepdims", "int", int(bool(g.get("keepdim", False))))])
