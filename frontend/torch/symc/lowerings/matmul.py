"""Lowerings of matrix products: mm, bmm, matmul, addmm and linear, as symc's matmul (with mul and add for
addmm's alpha and beta and linear's bias; a constant weight is transposed once, at build time).
"""
import torch

from .registry import _op, _reg


@_reg(_op("mm"), _op("bmm"), _op("matmul"))
def _matmul(tr, n, a, k):
    return tr.node("matmul", [tr.tensor(a[0]), tr.tensor(a[1])])


@_reg(_op("addmm"))
def _addmm(tr, n, a, k):
    bias, m1, m2 = a[0], a[1], a[2]
    beta = k.get("beta", a[3] if len(a) > 3 else 1)
    alpha = k.get("alpha", a[4] if len(a) > 4 else 1)
    y = tr.node("matmul", [tr.tensor(m1), tr.tensor(m2)])
    if alpha != 1:
        y = tr.node("mul", [y, tr.tensor(alpha)])
    if beta == 0:
        return y
    if beta != 1:
        bias = bias * beta if isinstance(bias, torch.Tensor) else tr.node("mul", [tr.tensor(bias), tr.tensor(beta)])
    return tr.node("add", [y, tr.tensor(bias)])


@_reg(_op("linear"))
def _linear(tr, n, a, k):
    x, w = a[0], a[1]
    b = k.get("bias", a[2] if len(a) > 2 else None)
    wt = w.t().contiguous() if isinstance(w, torch.Tensor) else tr.node("transpose", [w], [("perm", "ints", [1, 0])])
    y = tr.node("matmul", [tr.tensor(x), tr.tensor(wt)])
    return y if b is None else tr.node("add", [y, tr.tensor(b)])
