"""Lowerings of shape and data movement: view/reshape/flatten/expand, permute/transpose, slice, select,
split/chunk/unbind, squeeze/unsqueeze, cat/stack, flip, roll, repeat, as_strided (as a reshape) and the pads.

Approach: target shapes come from the node's torch sizes (tr.dim of each, symbolic where torch's is), so
a lowering never recomputes torch's shape rule; where torch.export and eager PyTorch disagree at some size
in range (squeeze of a dim that may be 1) the lowering refuses the range by name.
"""
import numpy as np
import torch

from .. import _lib
from ..values import _BIG, _T, _int_bound
from .helpers import _norm, _static
from .registry import _LOWER, _op, _reg


@_reg(_op("cat"), _op("concat"))
def _cat(tr, n, a, k):
    ts = list(a[0])
    d = k.get("dim", a[1] if len(a) > 1 else 0)
    rank = tr.rank(n)
    if rank > 1:  # torch skips legacy empty 1-D [0] inputs (an empty cache, say), whatever the rank
        keep = [t for t, na in zip(ts, n.args[0])
                if not (isinstance(na, torch.fx.Node) and [str(x) for x in tr.shape(na)] == ["0"]) and
                not (isinstance(t, torch.Tensor) and t.dim() == 1 and t.numel() == 0)]
        ts = keep or ts
    if len(ts) == 1:
        return ts[0]
    return tr.node("concat", [tr.tensor(t) for t in ts], [("axis", "int", _norm(tr, d, rank))])


def _dims_arg(tr, sizes, keep_neg1=True):
    out = []
    for s in sizes:
        if isinstance(s, int) and s == -1 and keep_neg1:
            out.append(_lib.DIM_NONE)
        else:
            out.append(tr.dim(s))
    return out


@_reg(_op("view"), _op("reshape"), _op("_unsafe_view"), _op("view_copy"), _op("_reshape_copy"))
def _reshape(tr, n, a, k):
    sizes = a[1] if len(a) > 1 else k.get("size", k.get("shape"))
    if isinstance(sizes, torch.dtype):
        tr.fail("view(dtype) is not supported")
    return tr.node("reshape", [tr.tensor(a[0])], [("shape", "dims", _dims_arg(tr, sizes))])


@_reg(_op("flatten"))
def _flatten(tr, n, a, k):
    return tr.node("reshape", [tr.tensor(a[0])], [("shape", "dims", _dims_arg(tr, tr.shape(n)))])


@_reg(_op("expand"), _op("expand_copy"))
def _expand(tr, n, a, k):
    return tr.node("expand", [tr.tensor(a[0])], [("shape", "dims", [tr.dim(s) for s in tr.shape(n)])])


@_reg(_op("permute"), _op("permute_copy"))
def _permute(tr, n, a, k):
    rank = tr.rank(n)
    return tr.node("transpose", [tr.tensor(a[0])], [("perm", "ints", [_norm(tr, d, rank) for d in a[1]])])


@_reg(_op("transpose"), _op("transpose_copy"))
def _transpose(tr, n, a, k):
    rank = tr.rank(n)
    d0, d1 = _norm(tr, a[1], rank), _norm(tr, a[2], rank)
    perm = list(range(rank))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return tr.node("transpose", [tr.tensor(a[0])], [("perm", "ints", perm)])


@_reg(_op("t"), _op("numpy_T"))
def _t(tr, n, a, k):
    rank = tr.rank(n)
    if rank < 2:
        return a[0]
    return tr.node("transpose", [tr.tensor(a[0])], [("perm", "ints", [1, 0])])


@_reg(_op("slice"), _op("slice_copy"))
def _slice(tr, n, a, k):
    x = a[0]
    shape = tr.shape(n.args[0])
    rank = len(shape)
    d = _norm(tr, k.get("dim", a[1] if len(a) > 1 else 0), rank)
    start = _static(k.get("start", a[2] if len(a) > 2 else None))
    end = _static(k.get("end", a[3] if len(a) > 3 else None))
    step = _static(k.get("step", a[4] if len(a) > 4 else 1))
    size = _static(shape[d])
    if not isinstance(step, int) or step < 1:
        tr.fail(f"slice step {step} is not supported (a positive int is)")
    if start is None:
        start = 0
    if end is None or (isinstance(end, int) and end >= _BIG):
        end = size
    if isinstance(size, int):
        if isinstance(end, int) and end > size:
            end = size
        if isinstance(start, int) and start > size:
            start = size
    if isinstance(start, int) and start == 0 and step == 1 and (end is size or (isinstance(end, int) and
                                                                              isinstance(size, int) and end == size)):
        return x
    return tr.node("slice", [tr.tensor(x)], [("starts", "dims", [tr.dim(start)]), ("ends", "dims", [tr.dim(end)]),
                                             ("axes", "ints", [d]), ("steps", "ints", [step])])


@_reg(_op("select"), _op("select_copy"))
def _select(tr, n, a, k):
    rank = tr.rank(n.args[0])
    d = _norm(tr, a[1], rank)
    idx = _static(a[2])
    if isinstance(idx, int):
        ix = tr.m.constant(tr.const_name("index"), np.array(idx, dtype=np.int64))
        return tr.node("gather", [tr.tensor(a[0]), _T(ix)], [("axis", "int", d)])
    s = tr.node("slice", [tr.tensor(a[0])], [("starts", "dims", [tr.dim(idx)]),
                                             ("ends", "dims", [tr.m.add(tr.dim(idx), tr.m.const(1))]),
                                             ("axes", "ints", [d])])
    return tr.node("squeeze", [s], [("axes", "ints", [d])])


@_reg(_op("split_with_sizes"), _op("split_with_sizes_copy"), _op("split"), _op("split_copy"))
def _split(tr, n, a, k):
    """Slices along one dim; the pieces' sizes are read from torch's result, so split(size) with a
    ragged last piece and split_with_sizes take one path."""
    shape = tr.shape(n.args[0])
    rank = len(shape)
    d = _norm(tr, k.get("dim", a[2] if len(a) > 2 else 0), rank)
    outs = tr.val(n)
    if not isinstance(outs, (list, tuple)):
        tr.fail("split without a list of results")
    pieces, start = [], tr.m.const(0)
    for o in outs:
        size = tr.dim(o.shape[d])
        end = tr.m.add(start, size)
        pieces.append(tr.node("slice", [tr.tensor(a[0])], [("starts", "dims", [start]), ("ends", "dims", [end]),
                                                          ("axes", "ints", [d]), ("steps", "ints", [1])]))
        start = end
    if tr.m.dim_equal(start, tr.dim(shape[d])) != 1:
        tr.fail(f"split pieces add up to {tr.m.dim_str(start)}, not the size {tr.m.dim_str(tr.dim(shape[d]))} "
                f"of dim {d} at every size in range")
    return tuple(pieces)


@_reg(_op("unsqueeze"), _op("unsqueeze_copy"))
def _unsqueeze(tr, n, a, k):
    rank = tr.rank(n)
    return tr.node("unsqueeze", [tr.tensor(a[0])], [("axes", "ints", [_norm(tr, a[1], rank)])])


@_reg(_op("squeeze"), _op("squeeze_copy"))
def _squeeze(tr, n, a, k):
    shape = tr.shape(n.args[0])
    rank = len(shape)
    dims = a[1] if len(a) > 1 else k.get("dim", None)
    if dims is None:
        dims = list(range(rank))
    elif isinstance(dims, int):
        dims = [dims]
    axes = []
    for d in sorted({_norm(tr, d, rank) for d in dims}):
        sz = _static(shape[d])
        if not isinstance(sz, int) and tr.point_value(sz) is not None:
            sz = tr.point_value(sz)  # a part of the declared range that fixes the size
        if isinstance(sz, int):
            if sz == 1:
                axes.append(d)
            continue
        # a symbolic size: torch.export treats it as never 1 and keeps the dim, eager PyTorch drops it
        # when it is 1; only a range that excludes 1 makes the two agree
        lo = _int_bound(tr.ranges.get(sz.node.expr, (None, None))[0]) if sz.node.expr.is_Symbol else None
        if lo is None or lo <= 1:
            name = tr.sym_names.get(sz.node.expr, str(sz)) if sz.node.expr.is_Symbol else str(sz)
            tr.fail(f"squeeze of dim {d}, whose size {name} may be 1 in the declared range: eager PyTorch drops "
                    f"that dim at size 1 and the exported program never does. Squeeze only the dims that are "
                    f"always 1 (x.squeeze({', '.join(str(i) for i in range(rank) if _static(shape[i]) == 1) or 'd'}"
                    f")), or declare {name} >= 2", code="range")
    if not axes:
        return a[0]
    return tr.node("squeeze", [tr.tensor(a[0])], [("axes", "ints", axes)])


@_reg(_op("stack"))
def _stack(tr, n, a, k):
    rank = tr.rank(n)
    d = _norm(tr, k.get("dim", a[1] if len(a) > 1 else 0), rank)
    parts = [tr.node("unsqueeze", [tr.tensor(t)], [("axes", "ints", [d])]) for t in a[0]]
    return parts[0] if len(parts) == 1 else tr.node("concat", parts, [("axis", "int", d)])


@_reg(_op("unbind"), _op("unbind_copy"))
def _unbind(tr, n, a, k):
    rank = tr.rank(n.args[0])
    d = _norm(tr, k.get("dim", a[1] if len(a) > 1 else 0), rank)
    size = _static(tr.shape(n.args[0])[d])
    if not isinstance(size, int):
        tr.fail(f"unbind over a symbolic dim ({size}) is not supported: the number of results would vary")
    outs = []
    for i in range(size):
        ix = _T(tr.m.constant(tr.const_name("index"), np.array(i, dtype=np.int64)))
        outs.append(tr.node("gather", [tr.tensor(a[0]), ix], [("axis", "int", d)]))
    return tuple(outs)


@_reg(_op("chunk"))
def _chunk(tr, n, a, k):
    return _split(tr, n, [a[0], None, k.get("dim", a[2] if len(a) > 2 else 0)], {})


@_reg(_op("flip"))
def _flip(tr, n, a, k):
    shape = tr.shape(n.args[0])
    rank = len(shape)
    x = tr.tensor(a[0])
    for d in sorted({_norm(tr, d, rank) for d in a[1]}):
        size = tr.dim(shape[d])
        idx = tr.node("range", [], [("start", "dims", [tr.m.add(size, tr.m.const(-1))]),
                                    ("limit", "dims", [tr.m.const(-1)]), ("delta", "dims", [tr.m.const(-1)]),
                                    ("to", "dtype", _lib.I64)])
        x = tr.node("gather", [x, idx], [("axis", "int", d)])
    return x


@_reg(_op("roll"))
def _roll(tr, n, a, k):
    shape = tr.shape(n.args[0])
    rank = len(shape)
    shifts = a[1] if isinstance(a[1], (list, tuple)) else [a[1]]
    dims = k.get("dims", a[2] if len(a) > 2 else [])
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    if len(dims) == 0 or len(dims) != len(shifts):
        tr.fail(f"roll with shifts {list(shifts)} and dims {list(dims)} is not supported (one dim a shift is)")
    x = tr.tensor(a[0])
    for s, d in zip(shifts, dims):
        d = _norm(tr, d, rank)
        size = _static(shape[d])
        s = _static(s)
        if not isinstance(s, int):
            tr.fail(f"roll by a symbolic shift ({s}) is not supported")
        if isinstance(size, int):
            if size == 0:
                continue
            s %= size
            if s == 0:
                continue
            cut = tr.m.const(size - s)
        else:  # size - (s mod size), s mod size = s - floor(s / size) * size, in symc's exact integers
            sz = tr.dim(size)
            mod = tr.m.add(tr.m.const(s), tr.m.mul(tr.m.const(-1), tr.m.mul(tr.m.floordiv(tr.m.const(s), sz), sz)))
            cut = tr.m.add(sz, tr.m.mul(tr.m.const(-1), mod))
        end = tr.dim(shape[d])
        tail = tr.node("slice", [x], [("starts", "dims", [cut]), ("ends", "dims", [end]), ("axes", "ints", [d]),
                                      ("steps", "ints", [1])])
        head = tr.node("slice", [x], [("starts", "dims", [tr.m.const(0)]), ("ends", "dims", [cut]),
                                      ("axes", "ints", [d]), ("steps", "ints", [1])])
        x = tr.node("concat", [tail, head], [("axis", "int", d)])
    return x


@_reg(_op("repeat"))
def _repeat(tr, n, a, k):
    reps = list(a[1])
    rank = tr.rank(n.args[0])
    x = tr.tensor(a[0])
    if len(reps) > rank:
        x = tr.node("unsqueeze", [x], [("axes", "ints", list(range(len(reps) - rank)))])
    return tr.node("tile", [x], [("repeats", "dims", [tr.dim(r) for r in reps])])


@_reg(_op("as_strided"), _op("as_strided_copy"))
def _as_strided(tr, n, a, k):
    """Only the view that is a reshape: a contiguous input read from offset 0 with the contiguous strides
    of the new size. Other strides (overlapping windows, gaps) are refused."""
    size, stride = list(a[1]), list(a[2])
    off = _static(k.get("storage_offset", a[3] if len(a) > 3 else 0) or 0)
    xv = tr.val(n.args[0])
    want, acc = [], 1
    for s in reversed(size):
        want.insert(0, acc)
        acc = acc * s
    same = all(str(_static(x)) == str(_static(y)) for x, y in zip(stride, want)) and len(stride) == len(want)
    if not (isinstance(off, int) and off == 0 and same and isinstance(xv, torch.Tensor) and
            str(xv.numel()) == str(acc) and xv.is_contiguous()):
        tr.fail(f"as_strided(size={size}, stride={stride}, storage_offset={off}) is not a reshape of a contiguous "
                f"input; symc lowers only that view (a model's adaptive pooling to a size that does not divide "
                f"the input decomposes to such an as_strided)")
    return tr.node("reshape", [tr.tensor(a[0])], [("shape", "dims", [tr.dim(s) for s in size])])


def _pad_pairs(tr, n, pad):
    """torch's pad list (last dim first, (before, after) pairs) as symc's [begins..., ends...]."""
    rank = tr.rank(n.args[0])
    pad = list(pad)
    if len(pad) % 2 or len(pad) // 2 > rank:
        tr.fail(f"pad {pad} does not fit a rank-{rank} input")
    begins, ends = [tr.m.const(0)] * rank, [tr.m.const(0)] * rank
    for i in range(len(pad) // 2):
        d = rank - 1 - i
        for j, p in ((0, pad[2 * i]), (1, pad[2 * i + 1])):
            p = _static(p)
            if isinstance(p, int) and p < 0:
                tr.fail(f"a negative pad ({p} on dim {d}) is not supported")
            (begins if j == 0 else ends)[d] = tr.dim(p)
    return begins + ends


@_reg(_op("constant_pad_nd"))
def _constant_pad(tr, n, a, k):
    value = k.get("value", a[2] if len(a) > 2 else 0)
    return tr.node("pad", [tr.tensor(a[0])], [("pads", "dims", _pad_pairs(tr, n, a[1])), ("mode", "str", "constant"),
                                              ("value", "float", float(value))])


def _mode_pad(mode):
    def f(tr, n, a, k):
        return tr.node("pad", [tr.tensor(a[0])], [("pads", "dims", _pad_pairs(tr, n, a[1])), ("mode", "str", mode)])
    return f


for _aten, _mode in (("reflection_pad1d", "reflect"), ("reflection_pad2d", "reflect"),
                     ("reflection_pad3d", "reflect"), ("replication_pad1d", "edge"), ("replication_pad2d", "edge"),
                     ("replication_pad3d", "edge")):
    _o = _op(_aten)
    if _o is not None:
        _LOWER[_o] = _mode_pad(_mode)


@_reg(_op("pad"))
def _pad(tr, n, a, k):
    mode = k.get("mode", a[2] if len(a) > 2 else "constant")
    value = k.get("value", a[3] if len(a) > 3 else None)
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        tr.fail(f"pad mode={mode!r} is not supported (constant, reflect and replicate are)")
    attrs = [("pads", "dims", _pad_pairs(tr, n, a[1])), ("mode", "str", modes[mode])]
    if mode == "constant":
        attrs.append(("value", "float", float(value or 0.0)))
    return tr.node("pad", [tr.tensor(a[0])], attrs)
