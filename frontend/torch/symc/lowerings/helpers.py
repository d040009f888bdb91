"""Argument helpers the lowering families share: dtypes, dims, schema arguments and casts.

Approach: a lowering reads torch's dtype of a node or argument from its meta (_dt, _in_dtype,
_arg_dtype), normalizes negative dims (_norm), takes a SymInt with a constant value as an int (_static),
reads arguments by schema name with defaults (_schema_args), and makes torch's type promotion explicit
with casts (_cast, _arg_as, _as_bool). Failures go through tracer.fail, naming the node.
"""
import torch

from ..values import _symc_dtype


def _dt(tr, n):
    v = tr.val(n)
    return v.dtype if isinstance(v, torch.Tensor) else torch.float32


def _norm(tr, d, rank):
    d = int(d)
    if d < -rank or d >= max(rank, 1):
        tr.fail(f"dim {d} is out of range for rank {rank}")
    return d + rank if d < 0 else d


def _in_dtype(tr, n, i=0):
    a = n.args[i]
    return _dt(tr, a) if isinstance(a, torch.fx.Node) else torch.float32


def _static(v):
    if isinstance(v, torch.SymInt) and v.node.expr.is_number:
        return int(v.node.expr)
    return v


def _schema_args(n, a, k):
    """The op's arguments by schema name (positional and keyword), defaults filled in."""
    out = {}
    for i, arg in enumerate(n.target._schema.arguments):
        if i < len(a) and not arg.kwarg_only:
            out[arg.name] = a[i]
        elif arg.name in k:
            out[arg.name] = k[arg.name]
        elif arg.has_default_value():
            out[arg.name] = arg.default_value
        else:
            out[arg.name] = None
    return out


def _arg_dtype(tr, node_arg, val):
    """The torch dtype of an op argument: its node's meta, a constant's dtype, None for a Python scalar."""
    if isinstance(node_arg, torch.fx.Node):
        return _dt(tr, node_arg)
    if isinstance(val, torch.Tensor):
        return val.dtype
    return None


def _cast(tr, h, src, dst):
    """Value h (a handle, a constant tensor or a Python scalar) of dtype src as dtype dst."""
    if isinstance(h, torch.Tensor):
        return h.to(dst)
    if isinstance(h, (bool, int, float)) or src is None or src == dst:
        return h
    sd = _symc_dtype(dst)
    if sd is None or _symc_dtype(src) is None:
        tr.fail(f"a dtype conversion {src} -> {dst} is not supported (symc has no {dst if sd is None else src})")
    return tr.node("cast", [tr.tensor(h)], [("to", "dtype", sd)])


def _arg_as(tr, n, a, i, dst):
    """Argument i of node n as a symc tensor of dtype dst (torch's type promotion made explicit)."""
    node_arg = n.args[i] if i < len(n.args) else None
    v = _cast(tr, a[i], _arg_dtype(tr, node_arg, a[i]), dst)
    return tr.tensor(v, dst)


def _as_bool(tr, n, a, i):
    return _arg_as(tr, n, a, i, torch.bool)


def _float_in(tr, n):
    d = _in_dtype(tr, n)
    if d not in (torch.float32, torch.float16, torch.bfloat16):
        tr.fail(f"the input is {d}; the normalization needs a float tensor")
