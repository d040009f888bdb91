"""Lowerings of indexing: embedding, index_select, gather, and advanced indexing (aten.index,
aten.index_put) with integer index tensors or a boolean mask; nonzero and masked_select.

Approach: one index tensor is a gather on its dim; several are broadcast together and read (gather_nd)
or written (scatter_nd) with the indexed dims moved first (_index_layout), then moved back into torch's
layout. What a mask selects is a size known only at run time: symc's nonzero op produces it (its shape
rule declares an unbacked symbol bounded by the mask's element count, docs/PLAN-data-dependent.md), and
torch's own unbacked symbol for that size (u0) is mapped to symc's (_produced), so every later shape that
mentions it is symbolic in the same size. x[mask] is a gather_nd at the mask's non-zero coordinates;
masked_select the same on the broadcast, flattened pair; torch.where(cond) decomposes to nonzero.
Writing through a mask (index_put) needs no data-dependent size where the values are the same for every
selected element (a where); values per selected element are refused.
"""
import torch

from .. import _lib
from ..values import _T, _int_bound
from .helpers import _arg_dtype, _cast, _dt, _norm, _static
from .registry import _op, _reg


@_reg(_op("embedding"))
def _embedding(tr, n, a, k):
    return tr.node("gather", [tr.tensor(a[0]), tr.tensor(a[1])], [("axis", "int", 0)])


@_reg(_op("index_select"))
def _index_select(tr, n, a, k):
    rank = tr.rank(n.args[0])
    return tr.node("gather", [tr.tensor(a[0]), tr.tensor(a[2])], [("axis", "int", _norm(tr, a[1], max(rank, 1)))])


@_reg(_op("gather"))
def _gather(tr, n, a, k):
    rank = tr.rank(n.args[0])
    if tr.shape(n.args[2]) != tr.shape(n.args[0]):
        # torch allows a smaller index in the other dims; gather_elements reads the data with its own strides,
        # so only the same-shape case is certain to agree
        for d, (si, sx) in enumerate(zip(tr.shape(n.args[2]), tr.shape(n.args[0]))):
            if d != _norm(tr, a[1], rank) and str(si) != str(sx):
                tr.fail(f"gather with an index of shape {tr.shape(n.args[2])} smaller than the input "
                        f"{tr.shape(n.args[0])} outside dim {a[1]} is not supported")
    return tr.node("gather_elements", [tr.tensor(a[0]), tr.tensor(a[2])], [("axis", "int", _norm(tr, a[1], rank))])


def _index_tensors(tr, n, a, what):
    """The index tensors of aten.index / aten.index_put (argument 1: one entry per leading dim, None for a dim
    taken whole, dims past the list taken whole too) as [(dim, value)], each an integer tensor. A boolean
    mask (or uint8, torch's old mask) is refused: the number of elements it selects, and so the result's
    shape, depends on the data."""
    rank = tr.rank(n.args[0])
    idx = list(a[1])
    if len(idx) > rank:
        tr.fail(f"{what} with {len(idx)} indices on a rank-{rank} tensor")
    used = []
    for d, t in enumerate(idx):
        if t is None:
            continue
        dt = _arg_dtype(tr, n.args[1][d], t)
        if dt in (torch.bool, torch.uint8):
            tr.fail(f"{what} with a boolean mask together with other index tensors is not supported (one mask, "
                    f"with None for the dims before it, is)")
        if dt not in (torch.int64, torch.int32):
            tr.fail(f"{what} with an index tensor of dtype {dt} is not supported (int64 and int32 are)")
        used.append((d, t, dt))
    if not used:
        tr.fail(f"{what} without an index tensor")
    return used


def _broadcast_sizes(shapes):
    """torch's broadcast of several shapes (sizes: ints or SymInts): per dim, aligned at the end, the size that
    is not 1, a static one first (torch.export has already proved the others equal to it or 1)."""
    r = max(len(s) for s in shapes)
    out = []
    for i in range(r):
        sizes = [_static(s[i - (r - len(s))]) for s in shapes if i - (r - len(s)) >= 0]
        static = [v for v in sizes if isinstance(v, int) and v != 1]
        dynamic = [v for v in sizes if not isinstance(v, int)]
        out.append(static[0] if static else dynamic[0] if dynamic else 1)
    return out


def _index_layout(tr, n, a, used, what):
    """Advanced indexing as gather_nd / scatter_nd see it. The indexed dims go first (perm: the data's
    transpose, the indexed dims in order, then the others in order) and the index tensors, broadcast
    together to B and cast to int64, are stacked on a new last dim: indices [B.., k]. Torch's result is
    [B.., rest..] when the indexed dims are not adjacent, and [before.., B.., after..] when they are (B at
    the first indexed dim): `front` is the number of dims before it (0 when B goes first).
    Returns (perm, indices handle, B, front)."""
    rank = tr.rank(n.args[0])
    dims = [d for d, _, _ in used]
    rest = [d for d in range(rank) if d not in dims]
    shapes = [tr.shape(n.args[1][d]) if isinstance(n.args[1][d], torch.fx.Node) else list(t.shape)
              for d, t, _ in used]
    bshape = _broadcast_sizes(shapes)
    if len(bshape) + 1 > 8 or len(bshape) + len(rest) > 8:
        tr.fail(f"{what}: the index tensors broadcast to rank {len(bshape)}, too many dims for symc (at most 8)")
    bdims = [tr.dim(s) for s in bshape]
    cols = []
    for (d, t, dt), shape in zip(used, shapes):
        h = tr.tensor(_cast(tr, t, dt, torch.int64), torch.int64)
        if len(shape) != len(bshape) or any(str(x) != str(y) for x, y in zip(shape, bshape)):
            h = tr.node("expand", [h], [("shape", "dims", bdims)])
        cols.append(tr.node("unsqueeze", [h], [("axes", "ints", [len(bshape)])]))
    ind = cols[0] if len(cols) == 1 else tr.node("concat", cols, [("axis", "int", len(bshape))])
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    front = dims[0] if adjacent else 0
    return dims + rest, ind, bshape, front


def _index_put_mask(tr, n, a, accumulate):
    """x[mask] = v (index_put with one boolean mask, None entries before it): the mask selects elements
    [before.., nnz, after..] and the values broadcast to that; when they are the same for every selected
    element (no dim at nnz, or a 1 there) this is where(mask, v, x) (x + v where accumulate), exactly. Values
    that differ per selected element are refused: their layout depends on how many the mask selects."""
    used = [d for d, t in enumerate(a[1]) if t is not None]
    if len(used) != 1:
        tr.fail("index_put with a boolean mask and other index tensors is not supported")
    d0 = used[0]
    mnode, mask = n.args[1][d0], a[1][d0]
    mshape = tr.shape(mnode) if isinstance(mnode, torch.fx.Node) else list(mask.shape)
    after = tr.rank(n.args[0]) - d0 - len(mshape)
    dt = _dt(tr, n)
    v = a[2]
    vshape = tr.shape(n.args[2]) if isinstance(n.args[2], torch.fx.Node) else list(getattr(v, "shape", []))
    u = tr.tensor(_cast(tr, v, _arg_dtype(tr, n.args[2], v), dt), dt)
    if len(vshape) > after:
        at = len(vshape) - after - 1  # the values' dim at the selected elements
        if _static(vshape[at]) != 1:
            tr.fail(f"index_put with a boolean mask and values of shape {vshape}, one per selected element, is "
                    f"not supported: their layout depends on how many elements the mask selects (values the same "
                    f"for every selected element, e.g. x[mask] = 0.0, are)")
        u = tr.node("reshape", [u], [("shape", "dims", [tr.dim(s) for s in vshape[:at]] +
                                      [tr.m.const(1)] * len(mshape) + [tr.dim(s) for s in vshape[at + 1:]])])
    m = _cast(tr, mask, _arg_dtype(tr, mnode, mask), torch.bool)
    m = tr.tensor(m, torch.bool)
    if after:
        m = tr.node("unsqueeze", [m], [("axes", "ints", list(range(len(mshape), len(mshape) + after)))])
    x = tr.tensor(a[0], dt)
    return tr.node("where", [m, tr.node("add", [x, u]) if accumulate else u, x])


def _transposed(tr, h, perm):
    return h if perm == sorted(perm) else tr.node("transpose", [h], [("perm", "ints", perm)])


@_reg(_op("index"))
def _index(tr, n, a, k):
    """x[i0, i1, ..] (aten.index.Tensor) with integer index tensors, None for a dim taken whole: torch's
    advanced indexing, exactly. One index tensor is a gather on its dim (result: the dims before, the index's,
    the dims after). Several are broadcast together to B and read with one gather_nd from the data with the
    indexed dims moved first (_index_layout): result [B.., rest..], which is torch's when the indexed dims
    are not adjacent; when they are, B moves to the first indexed dim's place. Negative indices count from
    the end, as in torch (gather and gather_nd wrap them); one out of range fails the run, naming it."""
    if any(t is not None and _arg_dtype(tr, n.args[1][d], t) in (torch.bool, torch.uint8) for d, t in
           enumerate(a[1])) and sum(t is not None for t in a[1]) == 1:
        return _index_mask(tr, n, a)
    used = _index_tensors(tr, n, a, "indexing")
    if len(used) == 1:
        d, t, _ = used[0]
        return tr.node("gather", [tr.tensor(a[0]), tr.tensor(t, torch.int64)], [("axis", "int", d)])
    perm, ind, bshape, front = _index_layout(tr, n, a, used, "indexing")
    y = tr.node("gather_nd", [_transposed(tr, tr.tensor(a[0]), perm), ind])
    nb, nrest = len(bshape), len(perm) - len(used)
    return _transposed(tr, y, list(range(nb, nb + front)) + list(range(nb)) + list(range(nb + front, nb + nrest)))


@_reg(_op("index_put"), _op("_index_put_impl"))
def _index_put(tr, n, a, k):
    """x[i0, i1, ..] = v (aten.index_put, and index_put_ as torch.export functionalizes it) with integer index
    tensors: one scatter_nd into the data with the indexed dims moved first (_index_layout), then moved back.
    The values are broadcast to torch's shape of x[i0, i1, ..] and laid out as scatter_nd reads them ([B..,
    rest..]); accumulate=True adds them (reduction add, every duplicate index counted). Without accumulate
    torch leaves a repeated index undefined; scatter_nd writes in index order, the last write wins."""
    accumulate = bool(k.get("accumulate", a[3] if len(a) > 3 else False))
    if any(t is not None and _arg_dtype(tr, n.args[1][d], t) in (torch.bool, torch.uint8) for d, t in
           enumerate(a[1])):
        return _index_put_mask(tr, n, a, accumulate)
    used = _index_tensors(tr, n, a, "index_put")
    dt = _dt(tr, n)
    xshape = tr.shape(n.args[0])
    perm, ind, bshape, front = _index_layout(tr, n, a, used, "index_put")
    rest = [xshape[d] for d in perm[len(used):]]
    # torch's shape of x[indices], which the values broadcast to
    want = rest[:front] + bshape + rest[front:]
    v = a[2]
    vdt = _arg_dtype(tr, n.args[2], v)
    vshape = tr.shape(n.args[2]) if isinstance(n.args[2], torch.fx.Node) else list(getattr(v, "shape", []))
    if len(vshape) > len(want):
        tr.fail(f"index_put values of shape {vshape} do not broadcast to the indexed shape {want}")
    u = tr.tensor(_cast(tr, v, vdt, dt), dt)
    if len(vshape) != len(want) or any(str(x) != str(y) for x, y in zip(vshape, want)):
        u = tr.node("expand", [u], [("shape", "dims", [tr.dim(s) for s in want])])
    nb = len(bshape)
    u = _transposed(tr, u, list(range(front, front + nb)) + list(range(front)) +
                    list(range(front + nb, len(want))))
    attrs = [("reduction", "str", "add")] if accumulate else []
    y = tr.node("scatter_nd", [_transposed(tr, tr.tensor(a[0], dt), perm), ind, u], attrs)
    inv = [perm.index(d) for d in range(len(perm))]
    return _transposed(tr, y, inv)


# ---- sizes known only at run time -------------------------------------------------------------

def _produced(tr, n, h, out_dim, size):
    """Maps torch's size `size` (a SymInt of node n's value: an unbacked symbol such as u0) to the symbol
    symc's shape rule declared for dim out_dim of h, so that later shapes mentioning it are symc's. Shape
    inference runs over the module so far to learn it (a few producers a model: cheap)."""
    tr.m.infer_shapes()
    _, dims = tr.m.tensor_info(int(h))
    u = dims[out_dim]
    e = size.node.expr if isinstance(size, torch.SymInt) else None
    if e is None or not e.is_Symbol:
        tr.fail(f"the size torch gives this data-dependent output ({size}) is not a fresh symbol", code="internal")
    if e in tr.symbols and tr.symbols[e] != u:
        tr.fail(f"torch's size {e} stands for two sizes symc computes apart", code="internal")
    tr.symbols[e] = u
    return u


@_reg(_op("item"), _op("_local_scalar_dense"))
def _item(tr, n, a, k):
    """x.item() of an integer tensor used as a size (torch.arange(n), x[:n], x.topk(n)): symc's item op reads it
    at run time as a size bounded by torch's range for it (torch._check(n <= N) gives one); the run fails
    where the value is negative or above the bound. The value itself is torch's unbacked symbol, mapped to
    symc's."""
    v = tr.val(n)
    e = v.node.expr if isinstance(v, torch.SymInt) else None
    if e is None or not e.is_Symbol:
        tr.fail(f".item() gives {type(v).__name__} {v}; symc reads only integers used as sizes")
    hi = _int_bound(tr.ranges.get(e, (None, None))[1])
    if hi is None:
        tr.fail(f".item() gives {e}, a size with no upper bound: declare one with torch._check({e} <= N) (symc "
                f"plans memory for the bound and checks it at run time)", code="range")
    h = tr.node("item", [tr.tensor(a[0])], [("bound", "dims", [tr.m.const(hi)])])
    _produced(tr, n, h, 0, v)
    return v


def _nonzero_rows(tr, n, mask_h, size):
    """The coordinates of mask's non-zero elements, one row each, [u, rank] (torch's layout): symc's nonzero
    ([rank, u], ONNX's) transposed; u mapped to torch's size. One nonzero per mask: indexing several tensors
    with one mask (torchvision's score[keep], box[keep]) gives torch one size, and symc one symbol too."""
    cache = tr.__dict__.setdefault("_nonzero_rows", {})
    hit = cache.get(int(mask_h))
    if hit is None:
        nz = tr.node("nonzero", [mask_h])
        u = _produced(tr, n, nz, 1, size)
        hit = cache[int(mask_h)] = (tr.node("transpose", [nz], [("perm", "ints", [1, 0])]), u)
    else:  # torch's size for this selection is the same symbol (or a new name for it)
        u = hit[1]
        e = size.node.expr if isinstance(size, torch.SymInt) else None
        if e is None or not e.is_Symbol or tr.symbols.setdefault(e, u) != u:
            tr.fail(f"torch's size {size} of a selection by a mask already selected from is not its count",
                    code="internal")
    return hit[0]


@_reg(_op("nonzero"), _op("argwhere"))
def _nonzero(tr, n, a, k):
    """torch.nonzero(x) / argwhere: [u, rank] int64, row-major order, u known only at run time (<= numel)."""
    return _nonzero_rows(tr, n, tr.tensor(a[0]), tr.val(n).shape[0])


def _index_mask(tr, n, a):
    """x[mask] (aten.index with one boolean mask at dim d, None before it): the mask's k dims are x's dims
    d..d+k-1; torch's result is [x[:d].., u, x[d+k:]..] with u the selected count. gather_nd reads x with those
    dims moved first at the mask's non-zero coordinates ([u, k]), giving [u, x[:d].., x[d+k:]..], and u moves
    back to dim d."""
    d = next(i for i, t in enumerate(a[1]) if t is not None)
    mnode, mask = n.args[1][d], a[1][d]
    kdims = len(tr.shape(mnode) if isinstance(mnode, torch.fx.Node) else list(mask.shape))
    rank = tr.rank(n.args[0])
    if kdims == 0 or d + kdims > rank:
        tr.fail(f"indexing a rank-{rank} tensor with a rank-{kdims} boolean mask at dim {d} is not supported")
    m = tr.tensor(mask)
    rows = _nonzero_rows(tr, n, m, tr.val(n).shape[d])
    perm = list(range(d, d + kdims)) + list(range(d)) + list(range(d + kdims, rank))
    y = tr.node("gather_nd", [_transposed(tr, tr.tensor(a[0]), perm), rows])
    out_rank = rank - kdims + 1
    return _transposed(tr, y, list(range(1, d + 1)) + [0] + list(range(d + 1, out_rank)))


@_reg(_op("masked_select"))
def _masked_select(tr, n, a, k):
    """torch.masked_select(x, mask): x and mask broadcast together, the elements where mask is set, in
    row-major order, as [u]."""
    xs = tr.shape(n.args[0]) if isinstance(n.args[0], torch.fx.Node) else list(a[0].shape)
    ms = tr.shape(n.args[1]) if isinstance(n.args[1], torch.fx.Node) else list(a[1].shape)
    b = _broadcast_sizes([xs, ms])
    bdims = [tr.dim(s) for s in b]
    x, m = tr.tensor(a[0]), tr.tensor(a[1])
    if len(xs) != len(b) or any(str(p) != str(q) for p, q in zip(xs, b)):
        x = tr.node("expand", [x], [("shape", "dims", bdims)])
    if len(ms) != len(b) or any(str(p) != str(q) for p, q in zip(ms, b)):
        m = tr.node("expand", [m], [("shape", "dims", bdims)])
    one = [("shape", "dims", [_lib.DIM_NONE])]  # flattened: [-1]
    xf = tr.node("reshape", [x], one)
    mf = tr.node("reshape", [m], one)
    rows = _nonzero_rows(tr, n, mf, tr.val(n).shape[0])
    return tr.node("gather_nd", [xf, rows])



@_reg("torchvision::nms")
def _torchvision_nms(tr, n, a, k):
    """torchvision.ops.nms(boxes [N, 4] as (x1, y1, x2, y2), scores [N], iou_threshold): the indices kept, by
    score descending, [u] with u known only at run time. symc's nms (ONNX NonMaxSuppression: one batch, one
    class, every box may be kept, no score threshold) suppresses a box whose IoU with a kept one is above the
    threshold, as torchvision does (equal scores: the lower index first; torchvision's order there is its
    sort's), and column 2 of its [u, 3] rows is the box. torchvision's fake kernel declares u >= 2, an assert
    eager torch does not keep (0 or 1 boxes are kept without error): symc does not check it."""
    import numpy as np
    boxes, scores, iou = a[0], a[1], a[2]
    for what, v, node in (("boxes", boxes, n.args[0]), ("scores", scores, n.args[1])):
        if _arg_dtype(tr, node, v) != torch.float32:
            tr.fail(f"torchvision nms with {what} of dtype {_arg_dtype(tr, node, v)} is not supported (float32 is)")
    b = tr.node("unsqueeze", [tr.tensor(boxes)], [("axes", "ints", [0])])
    s = tr.node("unsqueeze", [tr.tensor(scores)], [("axes", "ints", [0, 1])])
    most = _T(tr.m.constant(tr.const_name("most"), np.array([1 << 62], dtype=np.int64)))  # every box may be kept
    thr = _T(tr.m.constant(tr.const_name("iou"), np.array([float(iou)], dtype=np.float32)))
    sel = tr.node("nms", [b, s, most, thr])
    _produced(tr, n, sel, 0, tr.val(n).shape[0])
    col = _T(tr.m.constant(tr.const_name("index"), np.array(2, dtype=np.int64)))
    return tr.node("gather", [sel, col], [("axis", "int", 1)])
