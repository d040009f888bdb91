"""Lowerings of normalization: layer_norm, batch_norm in eval mode (running statistics), group_norm,
instance_norm and batch norm over the input's own statistics.

Approach: layer_norm and batch_norm are symc's ops; group and instance norm are a reshape and a
layer_norm over the grouped dims, viewed back, then the per-channel weight and bias (_channel_affine).
Training-mode batch norm and its saved statistics are refused (model.eval()).
"""
import torch

from .. import _lib
from ..values import _Unsupported, aten
from .helpers import _dt, _float_in, _schema_args, _static
from .registry import _op, _reg


def _ln(tr, n, x, ns, w, b, eps):
    rank = tr.rank(n.args[0])
    ins = [tr.tensor(x)]
    if w is None and b is not None:
        w = torch.ones(list(ns), dtype=torch.float32)
    if w is not None:
        ins.append(tr.tensor(w))
    if b is not None:
        ins.append(tr.tensor(b))
    return tr.node("layer_norm", ins, [("axis", "int", rank - len(ns)), ("epsilon", "float", eps)])


@_reg(_op("layer_norm"))
def _layer_norm(tr, n, a, k):
    g = lambda i, name, dflt: k.get(name, a[i] if len(a) > i else dflt)
    return _ln(tr, n, a[0], g(1, "normalized_shape", None), g(2, "weight", None), g(3, "bias", None),
               g(4, "eps", 1e-5))


@_reg(_op("native_layer_norm"))
def _native_layer_norm(tr, n, a, k):
    y = _ln(tr, n, a[0], a[1], a[2], a[3], a[4])
    return (y, _Unsupported("native_layer_norm's mean"), _Unsupported("native_layer_norm's rstd"))


def _bn(tr, n, x, w, b, mean, var, eps):
    c = tr.shape(n.args[0])[1]
    c = _static(c)
    if not isinstance(c, int):
        tr.fail("batch_norm over a symbolic channel count is not supported")
    if w is None:
        w = torch.ones(c)
    if b is None:
        b = torch.zeros(c)
    if mean is None or var is None:
        tr.fail("batch_norm without running statistics (training mode) is not supported; call model.eval()")
    return tr.node("batch_norm", [tr.tensor(x), tr.tensor(w), tr.tensor(b), tr.tensor(mean), tr.tensor(var)],
                   [("epsilon", "float", eps)])


@_reg(_op("_native_batch_norm_legit_no_training"))
def _bn_no_training(tr, n, a, k):
    y = _bn(tr, n, a[0], a[1], a[2], a[3], a[4], a[6] if len(a) > 6 else k.get("eps", 1e-5))
    return (y, _Unsupported("batch_norm's saved mean"), _Unsupported("batch_norm's saved invstd"))


@_reg(_op("batch_norm"))
def _batch_norm(tr, n, a, k):
    if a[5]:
        tr.fail("batch_norm in training mode is not supported; call model.eval()")
    return _bn(tr, n, a[0], a[1], a[2], a[3], a[4], a[7])


@_reg(_op("_native_batch_norm_legit_functional"), _op("_native_batch_norm_legit"), _op("native_batch_norm"))
def _bn_training(tr, n, a, k):
    training = a[5] if len(a) > 5 else True
    if n.target._overloadpacket is aten.native_batch_norm and not training:
        return (_bn(tr, n, a[0], a[1], a[2], a[3], a[4], a[7]), _Unsupported("saved mean"),
                _Unsupported("saved invstd"))
    tr.fail("batch_norm in training mode is not supported; call model.eval() before exporting")


def _channel_affine(tr, n, y, w, b, rank):
    """y * w + b with w, b of shape [C] viewed as [C, 1, ..] against a rank-`rank` y whose channels are dim 1."""
    view = lambda t: t.reshape([-1] + [1] * (rank - 2)) if isinstance(t, torch.Tensor) else \
        tr.node("reshape", [tr.tensor(t)], [("shape", "dims", [_lib.DIM_NONE] + [tr.m.const(1)] * (rank - 2))])
    if w is not None:
        y = tr.node("mul", [y, tr.tensor(view(w))])
    if b is not None:
        y = tr.node("add", [y, tr.tensor(view(b))])
    return y


@_reg(_op("native_group_norm"), _op("group_norm"))
def _group_norm(tr, n, a, k):
    """group_norm: x [N, C, ...] viewed as [N, G, C/G * rest], layer_norm over the last dim, viewed back, then
    the per-channel weight and bias (the ONNX importer's GroupNormalization composition)."""
    g = _schema_args(n, a, k)
    groups = g.get("group", g.get("num_groups"))
    eps = g.get("eps", 1e-5)
    _float_in(tr, n)
    xs = tr.shape(n.args[0])
    rank = len(xs)
    if rank < 2:
        tr.fail(f"group_norm of a rank-{rank} input is not supported (rank >= 2 is)")
    c = _static(xs[1])
    if not isinstance(c, int):
        tr.fail("group_norm over a symbolic channel count is not supported")
    if not isinstance(groups, int) or groups < 1 or c % groups:
        tr.fail(f"group_norm with {groups} groups of {c} channels is not supported")
    dims = [tr.dim(s) for s in xs]
    v = tr.node("reshape", [tr.tensor(a[0])], [("shape", "dims", [dims[0], tr.m.const(groups), _lib.DIM_NONE])])
    y = tr.node("layer_norm", [v], [("axis", "int", 2), ("epsilon", "float", float(eps))])
    y = tr.node("reshape", [y], [("shape", "dims", dims)])
    y = _channel_affine(tr, n, y, g.get("weight"), g.get("bias"), rank)
    if n.target._overloadpacket is aten.native_group_norm:
        return (y, _Unsupported("native_group_norm's mean"), _Unsupported("native_group_norm's rstd"))
    return y


def _batch_stats_norm(tr, n, x, w, b, eps):
    """Batch norm with the input's own statistics (instance norm's [1, N*C, ...] view, BatchNorm without running
    stats): every channel normalized over all dims but 1, biased variance, 1 / sqrt(var + eps). With a batch dim
    of a constant 1 this is one layer_norm over dims [2, rank); otherwise mean and variance are composed."""
    _float_in(tr, n)
    xs = tr.shape(n.args[0])
    rank = len(xs)
    if rank < 3:
        tr.fail(f"batch statistics of a rank-{rank} input are not supported (rank >= 3 is)")
    xh = tr.tensor(x)
    if _static(xs[0]) == 1:
        y = tr.node("layer_norm", [xh], [("axis", "int", 2), ("epsilon", "float", float(eps))])
    else:
        axes = [0] + list(range(2, rank))
        mean = tr.node("reduce_mean", [xh], [("axes", "ints", axes), ("keepdims", "int", 1)])
        dev = tr.node("sub", [xh, mean])
        var = tr.node("reduce_mean", [tr.node("mul", [dev, dev])], [("axes", "ints", axes), ("keepdims", "int", 1)])
        y = tr.node("mul", [dev, tr.node("rsqrt", [tr.node("add", [var, tr.tensor(float(eps), _dt(tr, n))])])])
    return _channel_affine(tr, n, y, w, b, rank)


@_reg(_op("_native_batch_norm_legit.no_stats"))
def _bn_no_stats(tr, n, a, k):
    g = _schema_args(n, a, k)
    if not g.get("training", True):
        tr.fail("batch_norm without running statistics outside training mode has no statistics to use")
    y = _batch_stats_norm(tr, n, a[0], g.get("weight"), g.get("bias"), g.get("eps", 1e-5))
    return (y, _Unsupported("batch_norm's saved mean"), _Unsupported("batch_norm's saved invstd"))


@_reg(_op("instance_norm"))
def _instance_norm(tr, n, a, k):
    g = _schema_args(n, a, k)
    if not g.get("use_input_stats", True):
        return _bn(tr, n, a[0], g.get("weight"), g.get("bias"), g.get("running_mean"), g.get("running_var"),
                   g.get("eps", 1e-5))
    xs = tr.shape(n.args[0])
    dims = [tr.dim(s) for s in xs]
    if len(dims) < 3:
        tr.fail(f"instance_norm of a rank-{len(dims)} input is not supported (rank >= 3 is)")
    y = tr.node("layer_norm", [tr.tensor(a[0])], [("axis", "int", 2), ("epsilon", "float", float(g.get("eps", 1e-5)))])
    return _channel_affine(tr, n, y, g.get("weight"), g.get("bias"), len(dims))
