"""The one table of lowerings, and how a family registers into it.

Approach: _LOWER maps an ATen op overload or packet to fn(tracer, node, args, kwargs) -> value; the
tracer looks the overload up first, then its packet. A family registers a lowering with
@_reg(_op("name"), ...) (an op this torch lacks is None and skipped), or, for ops one factory lowers
(_unary("relu"), ...), by writing the table in a loop. Beside the table: the ops the tracer drops
(_IGNORED: metadata asserts), checks itself (_ASSERTS: runtime asserts of size branches), takes from
torch's own shape arithmetic (_SYM_OPS) and never folds on constants (_NO_FOLD).
"""
from ..values import aten


_LOWER = {}
_IGNORED = set()
_ASSERTS = {o for o in (getattr(getattr(aten, "_assert_scalar", None), "default", None),) if o is not None}
_SYM_OPS = {o for o in (getattr(aten.sym_size, "int", None), getattr(aten.sym_numel, "default", None),
                        getattr(aten.sym_stride, "int", None), getattr(aten.sym_storage_offset, "default", None))
            if o is not None}
_NO_FOLD = set()


def _reg(*targets):
    """Registers fn for each target: an op overload or packet, or a "namespace::name" string for an op a
    library registers when it is imported (torchvision::nms), matched by the overload's name()."""
    def deco(fn):
        for t in targets:
            if t is not None:
                _LOWER[t] = fn
        return fn
    return deco


def _op(name):
    """aten op packet or overload by dotted name, None if this torch lacks it."""
    parts = name.split(".")
    o = getattr(aten, parts[0], None)
    if o is not None and len(parts) > 1:
        o = getattr(o, parts[1], None)
    return o


for _n in ("_assert_tensor_metadata", "_assert_scalar", "sym_constrain_range_for_size", "sym_constrain_range",
           "_assert_async", "sym_is_contiguous"):
    _o = _op(_n)
    if _o is not None:
        for _ov in _o.overloads():
            _IGNORED.add(getattr(_o, _ov))
