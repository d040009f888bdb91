"""The torch.compile backend "symc" (registered when symc is imported).

Approach: dynamo hands the backend an FX GraphModule and example inputs, where
dynamic sizes arrive as SymInt placeholders and, with inlined nn modules,
parameters and buffers arrive as inputs. The backend wraps the GraphModule in a
module taking only the real activations: parameters/buffers (recognized by
their dynamo source, "._parameters[" / "._buffers[", or being nn.Parameter)
become the wrapper's buffers, so they are baked into the engine as constants,
and each SymInt placeholder is recomputed from the tensor sizes it came from.
That wrapper is exported with torch.export, one Dim per ShapeEnv symbol with
its var_to_range (the mark_dynamic min/max), and built by api.build_engine.
Inside the declared ranges dynamo's guards hold, so there is no recompilation;
the returned function drops the int and baked arguments and calls the engine.
Note: baked weights are a snapshot; recompile after changing them.
"""
import os
import re
import warnings

import torch

from ._lib import SymcError
from .api import _export, build_engine
from .shape_env import set_guard_state


def _eval(expr, env):
    """A sympy size expression over symbols in env (SymInts or Dims) -> a value."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv
    if expr.is_Integer:
        return int(expr)
    if expr.is_Symbol:
        if expr not in env:
            raise SymcError(f"symc backend: size symbol {expr} is not a dim of any tensor input", code="unsupported")
        return env[expr]
    if isinstance(expr, sympy.Add):
        v = _eval(expr.args[0], env)
        for a in expr.args[1:]:
            v = v + _eval(a, env)
        return v
    if isinstance(expr, sympy.Mul):
        v = _eval(expr.args[0], env)
        for a in expr.args[1:]:
            v = v * _eval(a, env)
        return v
    if isinstance(expr, FloorDiv):
        return _eval(expr.args[0], env) // _eval(expr.args[1], env)
    raise SymcError(f"symc backend: size expression {expr} is not supported", code="unsupported")


def _bound(v):
    """A finite int bound, or None for +-oo (sympy's or torch's int_oo)."""
    try:
        f = float(v)
    except (TypeError, ValueError, AttributeError):
        return None
    if f != f or abs(f) > 2 ** 62:
        return None
    return int(v)


def _source(node):
    ga = node.meta.get("grapharg")
    try:
        return ga.source.name if isinstance(ga.source.name, str) else ga.source.name()
    except Exception:
        return ""


def _is_weight(node, value):
    src = _source(node)
    return isinstance(value, torch.nn.Parameter) or "._parameters[" in src or "._buffers[" in src or \
        "_parameters_" in node.name or "_buffers_" in node.name


def _nice(src, fallback):
    m = re.fullmatch(r"L\['([A-Za-z_][A-Za-z0-9_]*)'\]", src or "")
    return m.group(1) if m else fallback


class _Wrapper(torch.nn.Module):
    def __init__(self, gm, slots, consts):
        super().__init__()
        self.gm = gm
        self.slots = slots
        for j, t in enumerate(consts):
            self.register_buffer(f"w{j}", t.detach(), persistent=True)

    def _forward(self, *xs):
        env = {}
        for kind, v in self.slots:
            if kind == "in":
                for d, sym in v[1]:
                    env.setdefault(sym, xs[v[0]].size(d))
        args = []
        for kind, v in self.slots:
            if kind == "in":
                args.append(xs[v[0]])
            elif kind == "w":
                args.append(getattr(self, f"w{v}"))
            else:
                args.append(_eval(v, env))
        return self.gm(*args)


builds = 0  # engines built by the backend in this process (tests check "no recompilation" with it)


def symc_backend(gm, example_inputs, **kwargs):
    global builds
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        raise SymcError(f"symc backend: {len(placeholders)} placeholders but {len(example_inputs)} example inputs",
                        code="internal")
    slots, consts, tensor_idx, examples, shape_env = [], [], [], [], None
    for n, v in zip(placeholders, example_inputs):
        ev = n.meta.get("example_value")
        if isinstance(v, torch.SymInt) or isinstance(ev, torch.SymInt) or isinstance(v, int):
            expr = (ev if isinstance(ev, torch.SymInt) else v)
            if isinstance(expr, torch.SymInt):
                shape_env = expr.node.shape_env
                slots.append(("sym", expr.node.expr))
            else:
                slots.append(("sym", __import__("sympy").Integer(int(expr))))
            continue
        if not isinstance(v, torch.Tensor):
            raise SymcError(f"symc backend: input '{n.name}' is a {type(v).__name__}; only tensors and sizes "
                            "are supported", code="unsupported")
        if _is_weight(n, v):
            slots.append(("w", len(consts)))
            consts.append(v)
            continue
        syms = []
        shape = ev.shape if isinstance(ev, torch.Tensor) else v.shape
        for d, s in enumerate(shape):
            if isinstance(s, torch.SymInt):
                shape_env = s.node.shape_env
                if s.node.expr.is_Symbol:
                    syms.append((d, s.node.expr))
        slots.append(("in", (len(tensor_idx), syms, shape, _nice(_source(n), n.name))))
        tensor_idx.append(len(slots) - 1)
        examples.append(v)
    # one Dim per symbol, with the ShapeEnv's range (mark_dynamic's min/max)
    dims, dyn, names = {}, [], {}
    for kind, v in slots:
        if kind != "in":
            continue
        i, syms, shape, base = v
        ds = {}
        for d, s in enumerate(shape):
            if not isinstance(s, torch.SymInt) or s.node.expr.is_number:
                continue
            expr = s.node.expr
            for sym in expr.free_symbols:
                if sym not in dims:
                    vr = shape_env.var_to_range.get(sym) if shape_env is not None else None
                    lo = _bound(vr.lower) if vr is not None else None
                    lo = 0 if lo is None else lo
                    hi = _bound(vr.upper) if vr is not None else None
                    if hi is None:
                        if not os.environ.get("SYMC_STRICT"):
                            warnings.warn(f"symc backend: {base} dim {d} became dynamic without an upper bound "
                                          f"(automatic dynamic shapes); running this graph with eager PyTorch. "
                                          f"Use torch._dynamo.mark_dynamic({base}, {d}, min=..., max=...) to "
                                          f"compile it with symc (SYMC_STRICT=1 makes this an error)")
                            return gm.forward
                        raise SymcError(f"symc backend: {base} dim {d} ({sym}) is dynamic without an upper bound; "
                                        f"use torch._dynamo.mark_dynamic({base}, {d}, min=..., max=...)",
                                        code="range")
                    nm = f"{base}_dim{d}" if expr.is_Symbol else str(sym)
                    dims[sym] = torch.export.Dim(nm, min=max(lo, 0), max=hi)
                    names[(i, d)] = nm
            ds[d] = _eval(expr, dims)
        dyn.append(ds or None)
    # a forward with one named parameter per activation, so the engine's inputs carry the model's names
    arg_names, seen = [], set()
    for kind, v in slots:
        if kind == "in":
            nm = re.sub(r"[^A-Za-z0-9_]", "_", v[3]).strip("_") or "x"
            nm = nm if not nm[0].isdigit() and nm not in ("self", "xs") else "in_" + nm
            while nm in seen:
                nm += "_"
            seen.add(nm)
            arg_names.append(nm)
    ns = {}
    exec(f"def forward(self, {', '.join(arg_names)}):\n    return self._forward({', '.join(arg_names)})\n", ns)
    wrapper_cls = type("SymcDynamoGraph", (_Wrapper,), {"forward": ns["forward"]})
    wrapper = wrapper_cls(gm, slots, consts).eval()
    try:
        # outside dynamo's tracing context: export must not reuse (and constrain) dynamo's ShapeEnv
        with torch._guards.tracing(None):
            set_guard_state()  # what the tracer reads of the guards is this export's alone
            ep = _export(wrapper, tuple(examples), tuple(dyn))  # guards become runtime asserts
    except Exception as e:
        raise SymcError(f"symc backend: torch.export of the dynamo graph failed: {e}", code="unsupported") from e
    mod = build_engine(ep, "dynamo", dim_names=names)
    builds += 1
    idx = list(tensor_idx)

    def run(*args):
        return mod(*[args[j] for j in idx])
    run.symc_module = mod
    return run


def _register():
    try:
        from torch._dynamo import register_backend
        from torch._dynamo.backends.registry import _BACKENDS  # noqa: F401
    except Exception:  # an old torch without dynamo: symc.compile still works
        return
    try:
        from torch._dynamo import list_backends
        if "symc" in list_backends(exclude_tags=()):
            return
    except Exception:
        pass
    try:
        register_backend(compiler_fn=symc_backend, name="symc")
    except Exception:
        pass


_register()
