"""What the tracer keeps for a node, and the small helpers the tracer, its checks and the lowerings share.

Approach: a lowered node's value is a `_T` (a symc tensor handle, deliberately not an int), a real
torch.Tensor (a weight or anything folded from one), an int or torch.SymInt (shape arithmetic), an
`_Unsupported` (a result symc does not produce, such as a dropout mask: an error only where it is used), or
a tuple of those. Also here: torch's dtypes as symc's (_symc_dtype, _dtype_text), the names an error
gives an op and its source line (_op_name, source_line), symbol names (_sanitize) and a range's bound as an
int (_int_bound). No module here imports the tracer, so the lowerings can import this one.
"""
import math
import os
import re

import torch

from . import _lib


aten = torch.ops.aten
_BIG = 1 << 62
# torch dtypes symc takes, by their symc_dtype's name (the values come from the library: _lib)
_SYMC_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.float64: "F64",
                torch.int64: "I64", torch.int32: "I32", torch.bool: "BOOL"}


def _symc_dtype(t):
    """The symc_dtype value of a torch dtype, None if symc has none."""
    name = _SYMC_DTYPES.get(t)
    return None if name is None else getattr(_lib, name)


def _dtype_text(dt):
    """A symc_dtype value as the C library prints it ("f32", "bool")."""
    for name in _SYMC_DTYPES.values():
        if getattr(_lib, name) == dt:
            return name.lower()
    return dt


class _T:
    """A symc tensor handle (deliberately not an int, so it never passes for a scalar or a size)."""
    __slots__ = ("h",)

    def __init__(self, h):
        self.h = int(h)

    def __int__(self):
        return self.h

    def __eq__(self, o):
        return isinstance(o, _T) and o.h == self.h

    def __hash__(self):
        return hash(("T", self.h))


class _Unsupported:
    def __init__(self, what):
        self.what = what


def source_line(node):
    st = node.meta.get("stack_trace") if node is not None else None
    if not st:
        return "unknown source line (no stack_trace in node metadata)"
    lines = [l for l in st.strip().splitlines() if l.strip()]
    frames = []
    for i, l in enumerate(lines):
        m = re.match(r'\s*File "(.*)", line (\d+), in (.*)', l)
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) and not lines[i + 1].lstrip().startswith("File ") \
                else ""
            frames.append((m.group(1), m.group(2), m.group(3), code))
    if not frames:
        return lines[-1].strip()
    tdir = os.path.dirname(torch.__file__)
    user = [f for f in frames if not os.path.abspath(f[0]).startswith(tdir)]
    f = (user or frames)[-1]
    return f"{f[0]}:{f[1]} in {f[2]}: {f[3]}"


def _op_name(target):
    if isinstance(target, torch._ops.OpOverload):
        return f"aten.{target._overloadpacket.__name__}.{target._overloadname}" \
            if target.namespace == "aten" else str(target)
    return getattr(target, "__name__", str(target))


def _sanitize(name):
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return s if s and not s[0].isdigit() else "s_" + s


def _int_bound(v):
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    if math.isinf(f) or abs(f) > 1 << 62:
        return None
    return int(v)
