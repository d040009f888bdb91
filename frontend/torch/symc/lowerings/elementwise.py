"""Lowerings of elementwise ops: unary math and activations, arithmetic with torch's type promotion,
comparisons, logic and bit ops, casts, where/masked_fill/clamp, triu/tril, and the identities (clone,
detach, dropout in eval mode).

Approach: plain unary and binary ops are made by one factory each (_unary, _binary, _promoted_binary,
_compare, _logic) and registered in a loop over (ATen name, symc op); the others have a function each.
Operands are cast to the dtype torch computes in first, so symc's op sees one dtype.
"""
import torch

from ..values import _T, _Unsupported, _op_name, aten
from .helpers import _arg_as, _arg_dtype, _as_bool, _cast, _dt, _in_dtype
from .registry import _LOWER, _op, _reg


@_reg(_op("clone"), _op("alias"), _op("contiguous"), _op("detach"), _op("lift_fresh_copy"),
      _op("alias_copy"), _op("detach_copy"), _op("view_as"))
def _identity(tr, n, a, k):
    return a[0]


@_reg(_op("dropout"), _op("native_dropout"))
def _dropout(tr, n, a, k):
    train = k.get("train", a[2] if len(a) > 2 else False)
    p = a[1] if len(a) > 1 else k.get("p", 0.0)
    if train and p > 0:
        tr.fail("dropout in training mode is not supported; call model.eval()")
    return (a[0], _Unsupported("the dropout mask")) if n.target._overloadpacket is aten.native_dropout else a[0]


def _unary(op):
    def f(tr, n, a, k):
        return tr.node(op, [tr.tensor(a[0])])
    return f


for _aten, _sym in (("relu", "relu"), ("silu", "silu"), ("sigmoid", "sigmoid"), ("tanh", "tanh"),
                    ("neg", "neg"), ("exp", "exp"), ("log", "log"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"),
                    ("erf", "erf"), ("abs", "abs"), ("reciprocal", "reciprocal"), ("floor", "floor"),
                    ("ceil", "ceil"), ("sign", "sign"), ("hardswish", "hard_swish"), ("sin", "sin"),
                    ("cos", "cos"), ("tan", "tan"), ("asin", "asin"), ("acos", "acos"), ("atan", "atan"),
                    ("sinh", "sinh"), ("cosh", "cosh"), ("asinh", "asinh"), ("acosh", "acosh"), ("atanh", "atanh"),
                    ("selu", "selu")):
    _o = _op(_aten)
    if _o is not None:
        _LOWER[_o] = _unary(_sym)


@_reg(_op("gelu"))
def _gelu(tr, n, a, k):
    approx = k.get("approximate", a[1] if len(a) > 1 else "none")
    if approx not in ("none", "tanh"):
        tr.fail(f"gelu approximate={approx!r} is not supported")
    return tr.node("gelu", [tr.tensor(a[0])], [("approximate", "str", approx)])


@_reg(_op("round"))
def _round(tr, n, a, k):
    if k.get("decimals", a[1] if len(a) > 1 else 0) != 0:
        tr.fail("round with decimals != 0 is not supported")
    return tr.node("round", [tr.tensor(a[0])])  # halves to even, as torch


@_reg(_op("elu"))
def _elu(tr, n, a, k):
    alpha, scale, in_scale = (k.get(nm, a[i] if len(a) > i else 1.0)
                              for i, nm in ((1, "alpha"), (2, "scale"), (3, "input_scale")))
    if in_scale != 1:
        tr.fail(f"elu with input_scale={in_scale} other than 1 is not supported")
    if scale != 1:  # scale * elu(x): selu's form (F.selu is decomposed to it)
        return tr.node("selu", [tr.tensor(a[0])], [("alpha", "float", alpha), ("gamma", "float", scale)])
    return tr.node("elu", [tr.tensor(a[0])], [("alpha", "float", alpha)])


@_reg(_op("hardshrink"), _op("softshrink"))
def _shrink(tr, n, a, k):
    lambd = k.get("lambd", a[1] if len(a) > 1 else 0.5)
    soft = n.target._overloadpacket is aten.softshrink
    return tr.node("shrink", [tr.tensor(a[0])], [("bias", "float", lambd if soft else 0.0), ("lambd", "float", lambd)])


@_reg(_op("leaky_relu"))
def _leaky(tr, n, a, k):
    return tr.node("leaky_relu", [tr.tensor(a[0])], [("alpha", "float", a[1] if len(a) > 1 else 0.01)])


@_reg(_op("hardtanh"), _op("clamp"))
def _clip(tr, n, a, k):
    lo = k.get("min", a[1] if len(a) > 1 else (-1.0 if n.target._overloadpacket is aten.hardtanh else None))
    hi = k.get("max", a[2] if len(a) > 2 else (1.0 if n.target._overloadpacket is aten.hardtanh else None))
    if isinstance(lo, (_T, torch.Tensor)) or isinstance(hi, (_T, torch.Tensor)):  # clamp.Tensor: max then min
        dt = _dt(tr, n)
        y = _arg_as(tr, n, a, 0, dt)
        for i, b, op in ((1, lo, "max"), (2, hi, "min")):
            if b is not None:
                bn = n.args[i] if i < len(n.args) else None
                y = tr.node(op, [y, tr.tensor(_cast(tr, b, _arg_dtype(tr, bn, b), dt), dt)])
        return y
    attrs = []
    if lo is not None:
        attrs.append(("min", "float", lo))
    if hi is not None:
        attrs.append(("max", "float", hi))
    return tr.node("clip", [tr.tensor(a[0])], attrs)


def _binary(op):
    def f(tr, n, a, k):
        x, y = a[0], a[1]
        if k.get("rounding_mode") is not None:
            tr.fail(f"division with rounding_mode={k['rounding_mode']!r} is not supported")
        alpha = k.get("alpha", a[2] if len(a) > 2 and op in ("add", "sub") else 1)
        dt = _dt(tr, n)
        if alpha != 1:
            if isinstance(y, (int, float)):
                y = y * alpha
            else:
                y = tr.node("mul", [tr.tensor(y, dt), tr.tensor(alpha, dt)])
        return tr.node(op, [tr.tensor(x, dt), tr.tensor(y, dt)])
    return f


@_reg(_op("rsub"))
def _rsub(tr, n, a, k):
    alpha = k.get("alpha", a[2] if len(a) > 2 else 1)
    return _binary("sub")(tr, n, [a[1], a[0] if alpha == 1 else None], {}) if alpha == 1 else \
        tr.fail("rsub with alpha != 1 is not supported")


@_reg(_op("copy"))
def _copy(tr, n, a, k):
    """aten.copy(self, src) (a functionalized self.copy_(src), e.g. torchvision's batch_images writing an image
    into a slice of the batch): src in self's dtype, broadcast to self's shape; self's values are not read."""
    src_dt = _arg_dtype(tr, n.args[1], a[1])
    dst = _dt(tr, n)
    h = tr.tensor(_cast(tr, a[1], src_dt, dst) if src_dt != dst else a[1], dst)
    want, have = tr.shape(n), (tr.shape(n.args[1]) if isinstance(n.args[1], torch.fx.Node) else list(a[1].shape))
    if len(want) != len(have) or any(str(p) != str(q) for p, q in zip(want, have)):
        h = tr.node("expand", [h], [("shape", "dims", [tr.dim(d) for d in want])])
    return h


@_reg(_op("_to_copy"), _op("to"), _op("_to_dim_order_copy"), _op("type_as"))
def _to(tr, n, a, k):
    src, dst = _in_dtype(tr, n), _dt(tr, n)
    if src == dst:
        return a[0]
    return _cast(tr, a[0], src, dst)


def _promoted_binary(op):
    """An arithmetic binary op whose inputs torch may promote (int * float, f32 + 0-d f64): each input cast
    to the result's dtype first, as torch computes it."""
    base = _binary(op)

    def f(tr, n, a, k):
        dt = _dt(tr, n)
        a = list(a)
        for i in (0, 1):
            a[i] = _cast(tr, a[i], _arg_dtype(tr, n.args[i] if i < len(n.args) else None, a[i]), dt)
        return base(tr, n, a, k)
    return f


for _aten, _sym in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("div", "div"), ("maximum", "max"),
                    ("minimum", "min")):
    _o = _op(_aten)
    if _o is not None:
        _LOWER[_o] = _promoted_binary(_sym)


@_reg(_op("pow"))
def _pow(tr, n, a, k):
    dt = _dt(tr, n)
    x = _cast(tr, a[0], _arg_dtype(tr, n.args[0], a[0]), dt)
    y = _cast(tr, a[1], _arg_dtype(tr, n.args[1], a[1]), dt)
    if isinstance(y, (int, float)) and not isinstance(y, bool):
        if y == 1:
            return tr.tensor(x, dt)
        if y == 2:  # exactly x * x, as eager computes it
            xt = tr.tensor(x, dt)
            return tr.node("mul", [xt, xt])
        if y == 0.5:
            return tr.node("sqrt", [tr.tensor(x, dt)])
    return tr.node("pow", [tr.tensor(x, dt), tr.tensor(y, dt)])


def _compare(op, negate=False):
    """eq/ne/lt/le/gt/ge: both sides in torch's promoted dtype, a BOOL result."""
    def f(tr, n, a, k):
        d0 = _arg_dtype(tr, n.args[0], a[0])
        d1 = _arg_dtype(tr, n.args[1], a[1]) if len(n.args) > 1 else None
        dt = torch.promote_types(d0, d1) if d0 is not None and d1 is not None else (d0 or d1 or torch.float32)
        if d1 is None and isinstance(a[1], float) and not dt.is_floating_point:
            dt = torch.float32
        x = tr.tensor(_cast(tr, a[0], d0, dt), dt)
        y = tr.tensor(_cast(tr, a[1], d1, dt), dt)
        r = tr.node(op, [x, y])
        return tr.node("not", [r]) if negate else r
    return f


for _aten, _sym, _neg in (("eq", "equal", False), ("ne", "equal", True), ("lt", "less", False),
                          ("le", "less_equal", False), ("gt", "greater", False), ("ge", "greater_equal", False)):
    _o = _op(_aten)
    if _o is not None:
        _LOWER[_o] = _compare(_sym, _neg)


_INT_DTYPES = (torch.int64, torch.int32)


@_reg(_op("logical_not"), _op("bitwise_not"))
def _not(tr, n, a, k):
    """logical_not and bitwise_not of bool: symc's not; bitwise_not of an integer tensor: x ^ -1 (two's
    complement: every bit flipped)."""
    d = _in_dtype(tr, n)
    if n.target._overloadpacket is aten.bitwise_not and d != torch.bool:
        if d not in _INT_DTYPES:
            tr.fail(f"bitwise_not of a {d} tensor is not supported (of bool, int32 and int64 tensors it is)")
        return tr.node("bitwise_xor", [tr.tensor(a[0]), tr.tensor(-1, d)])
    return tr.node("not", [_as_bool(tr, n, a, 0)])


def _logic(op):
    """logical_and/or/xor: on bools (operands cast to bool, as torch reads nonzero as true); bitwise_and/or/xor:
    on two bool operands the same, on integer ones symc's bitwise ops in the result's dtype. xor of bools is
    not(equal)."""
    def f(tr, n, a, k):
        pk = n.target._overloadpacket
        if pk in (aten.bitwise_and, aten.bitwise_or, aten.bitwise_xor, aten.__and__, aten.__or__, aten.__xor__):
            out = _dt(tr, n)
            if out in _INT_DTYPES:
                ins = [tr.tensor(_cast(tr, a[i], _arg_dtype(tr, n.args[i], a[i]) or out, out), out) for i in (0, 1)]
                return tr.node("bitwise_" + op, ins)
            if out != torch.bool:
                tr.fail(f"{_op_name(n.target)} on {out} operands is not supported "
                        f"(on bool, int32 and int64 ones it is)")
        x, y = _as_bool(tr, n, a, 0), _as_bool(tr, n, a, 1)
        if op == "xor":
            return tr.node("not", [tr.node("equal", [x, y])])
        return tr.node(op, [x, y])
    return f


for _aten, _sym in (("logical_and", "and"), ("logical_or", "or"), ("bitwise_and", "and"), ("bitwise_or", "or"),
                    ("__and__", "and"), ("__or__", "or"), ("logical_xor", "xor"), ("bitwise_xor", "xor"),
                    ("__xor__", "xor")):
    _o = _op(_aten)
    if _o is not None:
        _LOWER[_o] = _logic(_sym)


@_reg(_op("where"))
def _where(tr, n, a, k):
    if len(a) < 3:
        tr.fail("where(condition) (the nonzero form) is not supported: its output size depends on the data")
    dt = _dt(tr, n)
    return tr.node("where", [_as_bool(tr, n, a, 0), _arg_as(tr, n, a, 1, dt), _arg_as(tr, n, a, 2, dt)])


@_reg(_op("masked_fill"))
def _masked_fill(tr, n, a, k):
    dt = _dt(tr, n)
    v = a[2]
    if isinstance(v, torch.Tensor) and v.dim() == 0:
        v = v.item()
    return tr.node("where", [_as_bool(tr, n, a, 1), tr.tensor(_cast(tr, v, _arg_dtype(tr, n.args[2], v), dt), dt),
                             _arg_as(tr, n, a, 0, dt)])


@_reg(_op("clamp_min"), _op("clamp_max"))
def _clamp_side(tr, n, a, k):
    b = a[1]
    if isinstance(b, (int, float)) and _dt(tr, n).is_floating_point:
        name = "min" if n.target._overloadpacket is aten.clamp_min else "max"
        return tr.node("clip", [tr.tensor(a[0])], [(name, "float", float(b))])
    dt = _dt(tr, n)
    op = "max" if n.target._overloadpacket is aten.clamp_min else "min"
    return tr.node(op, [_arg_as(tr, n, a, 0, dt), _arg_as(tr, n, a, 1, dt)])


@_reg(_op("triu"), _op("tril"))
def _trilu(tr, n, a, k):
    diag = k.get("diagonal", a[1] if len(a) > 1 else 0)
    return tr.node("trilu", [tr.tensor(a[0])], [("upper", "int", int(n.target._overloadpacket is aten.triu)),
                                                ("k", "int", int(diag))])


# expm1, log1p: symc's exact ops (torch's celu, elu, softplus and mish decompose to them)
for _aten in ("expm1", "log1p"):
    _o = _op(_aten)
    if _o is not None:
        _LOWER[_o] = _unary(_aten)
