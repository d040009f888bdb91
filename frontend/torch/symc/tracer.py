"""torch.export.ExportedProgram -> a symc module, built through the C API.

Approach: decompose the program to core ATen (run_decompositions), then walk
its FX graph once in order, keeping for each node one of
  - an int symc tensor handle (a `_T`),
  - a real torch.Tensor (weights, buffers, lifted constants and anything folded
    from them: permute of a weight, etc.), materialized as a symc f32 constant
    only when a symc node needs it,
  - an int or torch.SymInt (sym_size, shape arithmetic: read from the node's
    meta['val'], so any shape expression torch derived is taken as is),
  - a tuple of those (native_layer_norm, max_pool2d_with_indices, ...).
Every sympy symbol met in a shape becomes one symc symbol, declared on first
use with its range from range_constraints (or the ShapeEnv's var_to_range),
opt from the caller or the example input's size, and a readable name (the
first input dim it appears as). Sympy expressions (Add, Mul, FloorDiv) become
symc dim expressions, so derived dims like 2*d stay symbolic. ATen ops are
lowered by a table; an op that is missing, or an argument the lowering does
not handle, raises SymcError naming the ATen op, the node and the source line
from node.meta['stack_trace'].

Nothing the trace assumed is dropped silently. A declared range wider than
the one torch.export traced for is refused (_check_traced_range), and so is a
runtime assert from Python code that branched on a size unless it holds over
the whole declared range (check_assert), and a declared size of 1 (or 0) where
Python code branched on it with no guard, torch assuming sizes are never 0 or 1,
and the other branch changes the program (SMALL_GUARDED, api._small_branches).
After lowering, symc's own shape
inference runs and every lowered node's dtype and shape must equal torch's at
every size in range (check_lowering: by handle, proof, or evaluation at
min/opt/max, mixed and random bindings); a difference is a lowering bug that
would return wrong values, so it fails the build instead of running.
"""
import math
import operator
import os
import re

import numpy as np
import torch

from . import _lib
from ._lib import SymcError
from .builder import Module

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


# Where each of torch's deferred runtime asserts came from, by the text of its condition: "dispatch" when
# torch raised it while computing an op's metadata (an op's C++ shape function, or a meta function,
# reference or decomposition under FakeTensor dispatch: strides, memory format, a size-1 special case),
# "code" when Python code branched on a size or turned one into an int (the model's, timm's,
# torch.nn.functional's).
GUARD_SOURCES = {}
# The symbols (by name) some Python code branched on through a plain guard (evaluate_expr), e.g.
# `if x.shape[0] > 1:`: for them a narrowed range is never taken for torch's 0/1 assumption.
CODE_GUARDED = set()
# [(condition, ShapeEnv, symbols, size)]: a branch of Python code that torch decided statically (no guard, no
# runtime assert) by its assumption that a dynamic size is never 0 or 1 (`if x.shape[0] > 1:` with a Dim of
# min 1), and that goes the other way with those symbols at `size` (1 or 0): where that branch changes the
# program, the traced program holds from size + 1 on, whatever range torch.export reports (small_guarded()
# reads it; api.export_ranges drops the branches that do not change the program).
SMALL_GUARDED = []
# {input size's source name ("L['x'].size()[0]"): size}: while set, record_guard_sources answers the
# conditions SMALL_GUARDED would record as at that size (api.export_ranges' second trace)
FORCE_SMALL = {}


def guard_state():
    """A copy of what record_guard_sources recorded (GUARD_SOURCES, CODE_GUARDED, SMALL_GUARDED)."""
    return dict(GUARD_SOURCES), set(CODE_GUARDED), list(SMALL_GUARDED)


def set_guard_state(state=None):
    """Puts back a guard_state() (None: clears the three)."""
    GUARD_SOURCES.clear()
    CODE_GUARDED.clear()
    SMALL_GUARDED.clear()
    if state is not None:
        GUARD_SOURCES.update(state[0])
        CODE_GUARDED.update(state[1])
        SMALL_GUARDED.extend(state[2])


def _shape_env(ep):
    """The ShapeEnv of an exported program's symbolic input sizes, None for a static program."""
    for n in ep.graph.nodes:
        v = n.meta.get("val") if n.op == "placeholder" else None
        for sz in (v.shape if isinstance(v, torch.Tensor) else ()):
            if isinstance(sz, torch.SymInt):
                return sz.node.shape_env
    return None


def small_guarded(ep):
    """[(condition, size, {symbol names})] of the SMALL_GUARDED entries of ep's export, with the replacements
    torch made after the branch (a symbol found equal to another, s77 -> s17) applied: the program's names.
    The branch goes the other way with all those symbols at `size`."""
    out = []
    penv = _shape_env(ep)
    for expr, env, moved, size in SMALL_GUARDED:
        if env is not penv:
            continue
        try:
            e, syms = env.replace(expr), set().union(*(env.replace(x).free_symbols for x in moved))
        except Exception:  # noqa: BLE001 - the names as recorded
            e, syms = expr, set(moved)
        out.append((e, size, frozenset(str(x) for x in syms)))
    return out


def source_names(env, sym):
    """The names of the input sizes torch took a symbol from ("L['x'].size()[0]")."""
    out = set()
    for src in (getattr(env, "var_to_sources", None) or {}).get(sym, []):
        try:
            out.add(src.name() if callable(src.name) else src.name)
        except Exception:  # noqa: BLE001 - a source without a name
            pass
    return out


def _hints(env, expr):
    vals = getattr(env, "backed_var_to_val", None) or env.var_to_val
    out = {}
    for x in expr.free_symbols:
        v = vals.get(x)
        if v is None:
            return None
        out[x] = int(v)
    return out


def _note_small_size_branch(env, expr, result):
    """Records in SMALL_GUARDED a condition torch decided statically (result) whose answer changes with one of
    its symbols, or all, at 1 or 0 and the others as traced. A condition torch could not decide statically
    became a guard, which Tracer.check_assert checks over the declared ranges; one decided statically under
    torch's 0/1 assumption leaves no trace in the program."""
    import sympy
    hints = _hints(env, expr) if result in (sympy.true, sympy.false) else None
    if not hints:
        return
    big = [x for x, v in hints.items() if v >= 2]
    for size in (1, 0):
        for moved in [[x] for x in big] + [big]:
            alt = expr.xreplace({x: sympy.Integer(size if x in moved else v) for x, v in hints.items()})
            if alt in (sympy.true, sympy.false) and alt != result:
                SMALL_GUARDED.append((expr, env, moved, size))
                return


def _forced(env, expr):
    """A condition's answer with the sizes FORCE_SMALL names at their size (the others as traced), None where
    it names none of them."""
    import sympy
    hints = _hints(env, expr)
    if not hints:
        return None
    sub, hit = {}, False
    for x, v in hints.items():
        size = next((FORCE_SMALL[nm] for nm in source_names(env, x) if nm in FORCE_SMALL), None)
        hit = hit or size is not None
        sub[x] = sympy.Integer(v if size is None else size)
    alt = expr.xreplace(sub) if hit else None
    return alt if alt in (sympy.true, sympy.false) else None


class record_guard_sources:
    """Context manager: while torch.export or run_decompositions runs, note the source of every runtime
    assert the ShapeEnv defers (see GUARD_SOURCES; Tracer.check_assert reads it)."""

    def __enter__(self):
        import traceback
        from torch.fx.experimental import symbolic_shapes as ss
        self.cls = ss.ShapeEnv
        self.orig = orig = ss.ShapeEnv.guard_or_defer_runtime_assert
        tdir = os.path.dirname(torch.__file__)
        fake = os.path.join(tdir, "_subclasses", "fake_tensor.py")
        init = os.path.join(tdir, "__init__.py")
        nn_dir = os.path.join(tdir, "nn") + os.sep
        guard_files = (os.path.join(tdir, "fx", "experimental"), os.path.join(tdir, "_guards.py"),
                       os.path.abspath(__file__))  # and these wrappers themselves

        def source(stack):
            """"code" when Python code turned a symbolic size into a Python value (SymBool.__bool__,
            SymInt.__int__/__index__: an if, a range(), an int()) outside FakeTensor dispatch; a guard that C++
            (an op's shape function) or a meta function raised is "dispatch"."""
            if any(f.filename == fake for f in stack):
                return "dispatch"
            frames = [f for f in reversed(stack) if not f.filename.startswith(guard_files)]  # innermost first
            if not frames or frames[0].filename != init:
                return "dispatch"  # C++ (an op's shape function) asked, not Python code
            caller = frames[1] if len(frames) > 1 else None
            if caller is None:
                return "code"
            # torch's own Python checks (torch._assert re-running the program's asserts, export's range
            # checks) are not the model's branches; torch.nn's functional code is model code
            if caller.filename.startswith(tdir) and not caller.filename.startswith(nn_dir):
                return "dispatch"
            return "code"

        def wrapped(env, orig_expr, msg, fx_node=None):
            try:
                src = source(traceback.extract_stack()[:-1])
                keys = {str(orig_expr)}
                try:
                    keys.add(str(ss.canonicalize_bool_expr(orig_expr)))
                except Exception:  # noqa: BLE001
                    pass
                for k in keys:
                    if GUARD_SOURCES.get(k) != "code":  # one use from code is enough to keep it
                        GUARD_SOURCES[k] = src
            except Exception:  # noqa: BLE001 - recording must never break the export
                pass
            return orig(env, orig_expr, msg, fx_node)

        self.orig_eval = orig_eval = ss.ShapeEnv.evaluate_expr

        def wrapped_eval(env, orig_expr, *a, **kw):
            static = None
            try:
                if getattr(orig_expr, "free_symbols", None) and not orig_expr.is_number:
                    stack = traceback.extract_stack()[:-1]
                    if source(stack) == "code":
                        CODE_GUARDED.update(str(x) for x in orig_expr.free_symbols)
                        # decided without a guard (by the ranges torch assumes): nothing in the program checks it
                        static = env._maybe_evaluate_static(orig_expr)
            except Exception:  # noqa: BLE001 - recording must never break the export
                pass
            r = orig_eval(env, orig_expr, *a, **kw)
            if static is not None:
                try:
                    if FORCE_SMALL:
                        forced = _forced(env, orig_expr)
                        if forced is not None:
                            return forced
                    _note_small_size_branch(env, orig_expr, static)
                except Exception:  # noqa: BLE001 - recording must never break the export
                    pass
            return r

        ss.ShapeEnv.guard_or_defer_runtime_assert = wrapped
        ss.ShapeEnv.evaluate_expr = wrapped_eval
        # FORCE_SMALL: a size comparison of Python code answered as at the small size is a Python bool, as in
        # eager at that size (a SymBool answered False would leak out of `q_length > 1 and ...` into an op's
        # bool argument)
        self.cmps = {}

        def from_code(stack):
            """Whether the innermost caller outside these wrappers is model code (torch.nn's included)."""
            frames = [f for f in reversed(stack) if not f.filename.startswith(guard_files)]
            return bool(frames) and (not frames[0].filename.startswith(tdir) or frames[0].filename.startswith(nn_dir))
        if FORCE_SMALL:
            for op in ("gt", "ge", "lt", "le", "eq", "ne"):
                self.cmps[op] = orig_cmp = getattr(torch.SymInt, f"__{op}__")

                def cmp(a, b, orig_cmp=orig_cmp):
                    r = orig_cmp(a, b)
                    try:
                        if isinstance(r, torch.SymBool) and from_code(traceback.extract_stack()[:-1]):
                            env, e = r.node.shape_env, r.node.expr
                            if env._maybe_evaluate_static(e) is not None:
                                forced = _forced(env, e)
                                if forced is not None:
                                    return bool(forced)
                    except Exception:  # noqa: BLE001 - the comparison as torch answers it
                        pass
                    return r
                setattr(torch.SymInt, f"__{op}__", cmp)
        return self

    def __exit__(self, *exc):
        self.cls.guard_or_defer_runtime_assert = self.orig
        self.cls.evaluate_expr = self.orig_eval
        for op, f in self.cmps.items():
            setattr(torch.SymInt, f"__{op}__", f)
        return False


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


# upsampling ops run_decompositions would turn into index arithmetic (bicubic, nearest-exact): kept whole, as
# the others are left, for _upsample's resize
_UPSAMPLE_KEPT = ["upsample_bicubic2d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d",
                  "_upsample_nearest_exact3d", "upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d",
                  "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"]


def _decomp_table():
    """torch.export's default table, less scaled_dot_product_attention and its fused variants: each kept as
    one node (lowered by _sdpa) rather than decomposed to the math path's full/arange/logical_and/any/... ops."""
    try:
        t = torch.export.default_decompositions()
        # adaptive pooling decomposes to as_strided windows; _adaptive lowers the exact cases as pooling
        # (so do roll and the reflect/replicate pads, to index arithmetic on sizes): each kept as one node
        keep = list(_SDPA_OPS) + ["adaptive_avg_pool2d.default", "_adaptive_avg_pool2d.default", "roll.default"] + \
            [f"{m}_pad{d}d.default" for m in ("reflection", "replication") for d in (1, 2, 3)] + \
            [f"{u}.{o}" for u in _UPSAMPLE_KEPT for o in ("default", "vec")]  # upsampling: symc's resize
        for op in [_op(name) for name in keep]:  # and the fused variants, should a program hold them
            try:
                del t[op]
            except (KeyError, TypeError):
                pass
        return t
    except Exception:  # an older torch: its own default
        return None


def _dim_debug_names(ep):
    """{sympy symbol: the name the user gave its dim}: torch.export.Dim("bs") is kept by torch only in the
    ShapeEnv's source_name_to_debug_name ("L['x'].size()[0]" -> "bs"), found through var_to_sources."""
    for n in ep.graph.nodes:
        v = n.meta.get("val") if n.op == "placeholder" else None
        for s in (v.shape if isinstance(v, torch.Tensor) else ()):
            if not isinstance(s, torch.SymInt):
                continue
            env = s.node.shape_env
            dbg = getattr(env, "source_name_to_debug_name", None) or {}
            names = {}
            for sym, sources in (getattr(env, "var_to_sources", None) or {}).items():
                for src in sources:
                    try:
                        key = src.name() if callable(src.name) else src.name
                    except Exception:  # noqa: BLE001 - a source without a name: no user name
                        continue
                    if dbg.get(key):
                        names.setdefault(sym, dbg[key])
            return names
    return {}


class Tracer:
    """Lowers one ExportedProgram. sym_info: {sympy symbol: dict(name=, min=, opt=, max=)} overrides;
    input_opts: {(user input index, dim): opt}; dim_names: {(user input index, dim): name}."""

    def __init__(self, ep, name="model", input_opts=None, dim_names=None, ranges=None, decompose=True,
                 input_ranges=None, multiples=None, multiple_hints=False):
        # [(condition, size, {symbol names})]: branches the export decided by torch's 0/1 assumption
        self.small = small_guarded(ep)
        self.lows = {}
        if decompose:
            try:
                with record_guard_sources():
                    ep = ep.run_decompositions(_decomp_table())
            except Exception as e:  # keep the program as it is; the op table also takes higher-level ops
                import warnings
                warnings.warn(f"symc: run_decompositions failed ({e}); lowering the program as exported")
        self.ep = ep
        try:
            self.user_names = _dim_debug_names(ep)  # torch.export.Dim names, by symbol
        except Exception:  # noqa: BLE001 - names are for messages; never fail the build on them
            self.user_names = {}
        self.m = Module(_sanitize(name))
        self.input_opts = input_opts or {}
        self.dim_names = dim_names or {}
        self.ranges = dict(ranges or {})
        # {(user input index, dim): (lo, hi)}: the caller's declared ranges; they replace torch's for the
        # symbols those dims show bare (torch's may be narrowed by its guards, e.g. 0/1 specialization)
        self.input_ranges = dict(input_ranges or {})
        # {(user input index, dim): m}: symc.Input(multiple_of=): the dim's symbol takes multiples of m only
        self.multiples = dict(multiples or {})
        # whether a symbol's "declare it a multiple" fix names symc.Input's multiple_of (symc.compile's paths)
        self.multiple_hints = multiple_hints
        self.sym_mults = {}
        self.sym_hints = {}
        for sym, vr in ep.range_constraints.items():
            self.ranges.setdefault(sym, (vr.lower, vr.upper))
        self.sym_names = {}
        self.sym_dims = {}  # {sympy symbol: (input index, input name, dim)}: the first input dim showing it bare
        self.sym_opts = {}
        self.symbols = {}
        self.dim_cache = {}
        self.const_cache = {}
        self.name_count = {}
        self.cur = None
        self.input_names = []
        self.input_handles = set()
        self.output_names = []

    # ---- errors ----
    def fail(self, msg, code="unsupported"):
        n = self.cur
        where = f"{_op_name(n.target)} (node '{n.name}') at {source_line(n)}" if n is not None else "graph"
        raise SymcError(f"{where}: {msg}", code=code)

    def _check_traced_range(self, sym, lo, hi):
        """torch.export narrows a symbol's range when the model's code (or an op's shape rule) branched on
        it: the traced program is then known to be right only inside torch's range. Running it outside
        (at a declared size torch never traced) could take the branch the trace did not, with right shapes
        and wrong values, so a declared range wider than torch's is refused, with both ranges. A branch torch
        decided by assuming sizes are never 0 or 1 (self.small: `if x.shape[0] > 1:`, torch's range still
        [1, max]) that changes the program narrows it the same way."""
        vr = self.ep.range_constraints.get(sym)
        tlo, thi = (None, None) if vr is None else (_int_bound(vr.lower), _int_bound(vr.upper))
        if tlo == 2 and lo == 1 and str(sym) not in CODE_GUARDED and "*" not in CODE_GUARDED:
            # torch's 0/1 specialization (Dim.AUTO, or a size-oblivious meta function) assumes sizes are not 1
            # without any guard; symc broadcasts a size that may be 1 at run time, and the lowerings that
            # would differ at 1 (squeeze of a symbolic dim) refuse it themselves. Not when Python code
            # branched on the symbol (CODE_GUARDED): then min 2 may be the branch's, e.g. `if B > 1:`
            tlo = 1
        name = self.sym_names.get(sym, str(sym))
        # a branch that goes the other way with this symbol and its companions at `size`, all declared down to it
        cond, size = next(((c, z) for c, z, names in self.small if str(sym) in names and lo <= z and
                           all(self.lows.get(x, 0) <= z for x in names)), (None, None))
        why = f"the model's code (or an op's shape rule, e.g. a slice end clamped to the size) depends on {name} there"
        if cond is not None and (tlo is None or tlo <= size):
            # a branch torch decided by its 0/1 assumption (`if x.shape[0] > 1:`) that changes the program
            # (api._small_branches traced the other side): torch.export reports the declared range, but the
            # program holds from size + 1 on
            tlo = size + 1
            why = f"the model's code branches on {self.sym_text(cond)}, which torch.export decided by assuming " \
                  f"{name} is never 0 or 1; at {name} = {size} the model takes the other branch, a different program"
        if (tlo is None or lo >= tlo) and (thi is None or hi <= thi):
            return
        t_lo, t_hi = tlo if tlo is not None else lo, thi if thi is not None else hi
        rest = " and ".join(f"[{a}, {b}]" for a, b in ((lo, min(hi, t_lo - 1)), (max(lo, t_hi + 1), hi)) if a <= b)
        raise SymcError(
            f"symbol {name}: declared range [{lo}, {hi}], but torch.export traced the model only for "
            f"[{tlo if tlo is not None else '-inf'}, {thi if thi is not None else 'inf'}]: {why}. Outside that "
            f"range the traced program may compute something else. An engine holds one traced program; one "
            f"engine for the whole range where the model branches (several graphs behind shape guards) is planned "
            f"for a later symc. For now declare {name} within [{t_lo}, {t_hi}], and compile another engine for "
            f"{rest} if you need those sizes", code="range")

    # ---- symbols and dims ----
    def _hint(self, sym):
        return self.sym_opts.get(sym)

    def symbol(self, sym):
        d = self.symbols.get(sym)
        if d is not None:
            return d
        lo, hi = self.ranges.get(sym, (None, None))
        lo_i, hi_i = _int_bound(lo), _int_bound(hi)
        name = self.sym_names.get(sym, _sanitize(str(sym)))
        if lo_i is None:
            lo_i = 0
        if hi_i is None:
            self.fail(f"symbol {sym} ({name}) has no upper bound (range {lo}..{hi}); give it one, e.g. "
                      f"torch.export.Dim('{name}', min=1, max=N), symc.Input(max_shape=...) or "
                      f"torch._dynamo.mark_dynamic(x, dim, min=, max=)", code="range")
        opt = self.sym_opts.get(sym)
        if opt is None:
            opt = lo_i
        opt = min(max(int(opt), lo_i), hi_i)
        d = self.m.symbol(name, lo_i, opt, hi_i, self.sym_mults.get(sym, 1), hint=self.sym_hints.get(sym))
        self.symbols[sym] = d
        return d

    def dim(self, v):
        """int | SymInt | sympy expr -> symc_dim."""
        if isinstance(v, torch.SymInt):
            v = v.node.expr
        if isinstance(v, (bool, np.integer)):
            v = int(v)
        if isinstance(v, int):
            return self.m.const(v)
        key = v
        d = self.dim_cache.get(key)
        if d is not None:
            return d
        import sympy
        from torch.utils._sympy.functions import FloorDiv
        if v.is_Integer:
            d = self.m.const(int(v))
        elif v.is_Symbol:
            d = self.symbol(v)
        elif isinstance(v, sympy.Add):
            args = [self.dim(a) for a in v.args]
            d = args[0]
            for a in args[1:]:
                d = self.m.add(d, a)
        elif isinstance(v, sympy.Mul):
            args = [self.dim(a) for a in v.args]
            d = args[0]
            for a in args[1:]:
                d = self.m.mul(d, a)
        elif isinstance(v, FloorDiv):
            d = self.m.floordiv(self.dim(v.args[0]), self.dim(v.args[1]))
        else:
            self.fail(f"shape expression {v} ({type(v).__name__}) has no symc equivalent")
        if d == _lib.DIM_NONE:
            self.fail(f"shape expression {v} could not be built (overflow or division by zero)", code="range")
        self.dim_cache[key] = d
        return d

    def _derived_inputs(self, users):
        """An input dim a*s + b over a symbol s that no input shows bare (a derived Dim such as 4*h)
        becomes a symbol of its own, declared in [a*lo + b, a*hi + b] and a multiple of a, and s is
        taken as (dim - b) // a; symc binds symbols from input dims only."""
        import sympy
        bare = set(self.sym_names)
        for i, n in enumerate(users):
            v = self.val(n)
            if not isinstance(v, torch.Tensor):
                continue
            for d, sz in enumerate(v.shape):
                if not isinstance(sz, torch.SymInt):
                    continue
                e = sz.node.expr
                if e.is_number or e.is_Symbol or e in self.dim_cache:
                    continue
                free = list(e.free_symbols)
                if len(free) != 1 or free[0] in bare:
                    continue
                sym = free[0]
                try:
                    p = sympy.Poly(e, sym)
                except sympy.PolynomialError:
                    p = None
                if p is None or p.degree() != 1:
                    continue
                a, b = (int(c) for c in p.all_coeffs())
                if a <= 0 or b % a != 0:
                    self.cur = n
                    self.fail(f"input '{n.name}' dim {d} = {e}: only derived dims a*s + b with b a multiple of a "
                              f"are supported")
                lo, hi = self.ranges.get(sym, (None, None))
                lo_i, hi_i = _int_bound(lo), _int_bound(hi)
                if lo_i is None or hi_i is None:
                    self.cur = n
                    self.fail(f"input '{n.name}' dim {d} = {e}: {sym} needs a finite range, got {lo}..{hi}",
                              code="range")
                hint = sz.node.hint if hasattr(sz.node, "hint") else None
                opt = (int(hint) - b) // a if hint is not None else lo_i
                opt = self.input_opts.get((i, d), a * opt + b)
                name = _sanitize(self.dim_names.get((i, d), f"{n.name}_dim{d}"))
                h = self.m.symbol(name, a * lo_i + b, min(max(opt, a * lo_i + b), a * hi_i + b), a * hi_i + b, a)
                self.dim_cache[e] = h
                self.symbols[sym] = self.m.floordiv(self.m.add(h, self.m.const(-b)), self.m.const(a)) \
                    if b else self.m.floordiv(h, self.m.const(a))
                bare.add(sym)

    # ---- values ----
    def val(self, node):
        v = node.meta.get("val")
        if v is None:
            v = node.meta.get("example_value")
        return v

    def shape(self, x_node_or_val):
        v = x_node_or_val
        if isinstance(v, torch.fx.Node):
            v = self.val(v)
        return list(v.shape)

    def tensor(self, v, like_dtype=torch.float32):
        """A value as a symc tensor handle (materializing constants and scalars)."""
        if isinstance(v, _T):
            return v
        if isinstance(v, torch.Tensor):
            key = id(v)
            h = self.const_cache.get(key)
            if h is None:
                t = v.detach().cpu()
                if t.dtype == torch.float64:
                    t = t.float()
                if t.dtype not in (torch.float32, torch.int64, torch.int32, torch.bool, torch.float16,
                                   torch.bfloat16):
                    self.fail(f"a constant of dtype {t.dtype} is not supported")
                if t.dtype == torch.bfloat16:  # numpy has no bfloat16: its bit patterns
                    h = _T(self.m.constant(self.const_name("w"), t.contiguous().view(torch.int16).numpy(), "BF16"))
                else:
                    h = _T(self.m.constant(self.const_name("w"),
                                           t.contiguous().numpy()))
                self.const_cache[key] = h
                self._keep = getattr(self, "_keep", []) + [v]
            return h
        if isinstance(v, torch.SymInt):
            if v.node.expr.is_number:
                v = int(v.node.expr)
            else:
                return self.size_value(v.node.expr, like_dtype)
        if isinstance(v, torch.SymFloat):
            e = v.node.expr
            if e.is_number:
                v = float(e)
            else:
                # torch.sym_float(n) of a size: ToFloat(n); any other float arithmetic has no exact form here
                fn = getattr(e, "func", None)
                if getattr(fn, "__name__", "") == "ToFloat" and len(e.args) == 1:
                    return self.size_value(e.args[0], like_dtype if like_dtype.is_floating_point else torch.float32)
                self.fail(f"a float computed from sizes ({self.sym_text(e)}) used as a tensor value is not "
                          f"supported (sizes and integer arithmetic on them are)")
        if isinstance(v, (bool, int, float)):
            if like_dtype == torch.float16:  # a scalar operand of a half tensor: the tensor's dtype
                arr = np.array(v, dtype=np.float16)
            elif like_dtype == torch.bfloat16:  # numpy has no bfloat16: its bit patterns
                bits = torch.tensor(v, dtype=torch.bfloat16).view(torch.int16).numpy()
                return _T(self.m.constant(self.const_name("scalar"), bits, "BF16"))
            elif like_dtype.is_floating_point:
                arr = np.array(v, dtype=np.float32)
            elif like_dtype == torch.bool:
                arr = np.array(v, dtype=np.bool_)
            else:
                arr = np.array(v, dtype=np.int64 if like_dtype == torch.int64 else np.int32)
            return _T(self.m.constant(self.const_name("scalar"), arr))
        if isinstance(v, _Unsupported):
            self.fail(f"uses {v.what}, which symc does not produce")
        self.fail(f"cannot use {type(v).__name__} value {v!r} as a tensor")

    def sym_text(self, e):
        """A sympy expression with the symbols under the names symc gives them (the user's Dim names)."""
        try:
            return str(e.xreplace({x: __import__("sympy").Symbol(self.sym_names[x]) for x in e.free_symbols
                                   if x in self.sym_names}))
        except Exception:  # noqa: BLE001 - a message, never a failure of its own
            return str(e)

    def size_value(self, expr, like_dtype=torch.int64):
        """A size expression (a sympy expression over the declared symbols: x.size(0), 2*s0 + 1, ...) as a
        0-d tensor computed at run time: range(start=e, limit=e+1, delta=1) of int64, one element whose
        value the shape program evaluates, viewed as a scalar and cast to like_dtype (torch's promotion:
        the tensor operand's dtype)."""
        if not isinstance(like_dtype, torch.dtype) or _symc_dtype(like_dtype) is None:
            like_dtype = torch.int64
        key = ("size_value", expr, like_dtype)
        h = self.const_cache.get(key)
        if h is not None:
            return h
        e = self.dim(expr)
        one = self.m.const(1)
        r = self.node("range", [], [("start", "dims", [e]), ("limit", "dims", [self.m.add(e, one)]),
                                    ("delta", "dims", [one]), ("to", "dtype", _lib.I64)])
        h = self.node("reshape", [r], [("shape", "dims", [])])
        if like_dtype != torch.int64:
            h = self.node("cast", [h], [("to", "dtype", _symc_dtype(like_dtype))])
        self.const_cache[key] = h
        return h

    def const_name(self, kind):
        self.n_consts = getattr(self, "n_consts", 0) + 1
        return f"{kind}{self.n_consts}_{self.cur.name if self.cur is not None else ''}"

    def node(self, op, inputs, attrs=(), n_out=1):
        base = self.cur.name if self.cur is not None else op
        name, k = base, 0
        while name in self.name_count:
            k += 1
            name = f"{base}.{k}"
        self.name_count[name] = 1
        try:
            h = self.m.node(op, [int(i) for i in inputs], attrs, name=name, n_out=n_out)
        except SymcError as e:
            self.fail(f"symc op '{op}': {e}", code=e.code)
        return _T(h) if n_out == 1 else [_T(x) for x in h]

    def rank(self, node_arg):
        return len(self.shape(node_arg))

    # ---- the walk ----
    def run(self):
        ep = self.ep
        sig = ep.graph_signature
        from torch.export.graph_signature import InputKind, OutputKind
        consts = {}
        for spec in sig.input_specs:
            if spec.kind == InputKind.PARAMETER:
                consts[spec.arg.name] = ep.state_dict[spec.target]
            elif spec.kind == InputKind.BUFFER:
                consts[spec.arg.name] = ep.state_dict[spec.target] if spec.target in ep.state_dict \
                    else ep.constants[spec.target]
            elif spec.kind in (InputKind.CONSTANT_TENSOR, getattr(InputKind, "CUSTOM_OBJ", None)):
                consts[spec.arg.name] = ep.constants[spec.target]
            elif spec.kind == InputKind.USER_INPUT:
                pass
            else:
                raise SymcError(f"input '{spec.arg.name}' of kind {spec.kind} is not supported", code="unsupported")
        placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
        users = [n for n in placeholders if n.name not in consts]
        # names and opts of symbols, from the user inputs that show them bare
        declared = {}
        for i, n in enumerate(users):
            v = self.val(n)
            if not isinstance(v, torch.Tensor):
                continue
            for d, s in enumerate(v.shape):
                if isinstance(s, torch.SymInt) and s.node.expr.is_Symbol:
                    sym = s.node.expr
                    if (i, d) in self.input_ranges:
                        lo, hi = self.input_ranges[(i, d)]
                        if sym in declared:  # one symbol for several dims: the intersection
                            lo, hi = max(lo, declared[sym][0]), min(hi, declared[sym][1])
                        declared[sym] = (lo, hi)
                    self.sym_dims.setdefault(sym, (i, n.name, d))
                    if sym not in self.sym_names:
                        # the caller's name (symc.Input dim_names), the Dim's name, else "<input>_dim<d>"
                        self.sym_names[sym] = _sanitize(self.dim_names.get((i, d)) or self.user_names.get(sym) or
                                                        f"{n.name}_dim{d}")
                    if (i, d) in self.multiples:  # one symbol for several dims: the least common multiple
                        self.sym_mults[sym] = math.lcm(self.sym_mults.get(sym, 1), int(self.multiples[(i, d)]))
                    if self.multiple_hints and sym not in self.sym_hints:
                        self.sym_hints[sym] = f"multiple_of={{{d}: {{m}}}} in the symc.Input of '{n.name}' (input {i})"
                    if (i, d) in self.input_opts:
                        self.sym_opts.setdefault(sym, self.input_opts[(i, d)])
                    else:
                        hint = s.node.hint if hasattr(s.node, "hint") else None
                        if hint is not None:
                            self.sym_opts.setdefault(sym, int(hint))
        # {symbol name: its least size}: declared, else torch's (for the branches of self.small)
        self.lows = {str(k): _int_bound(v[0]) for k, v in self.ranges.items() if _int_bound(v[0]) is not None}
        self.lows.update({str(k): lo for k, (lo, hi) in declared.items()})
        for sym, (lo, hi) in declared.items():
            if lo > hi:
                raise SymcError(f"the declared ranges of the input dims that torch.export found equal ({sym}) do "
                                f"not overlap", code="range")
            self._check_traced_range(sym, lo, hi)
            self.ranges[sym] = (lo, hi)
        used = set(self.sym_names.values())
        if len(used) != len(set(self.sym_names)):  # a duplicate name: fall back to the sympy names
            for sym in self.sym_names:
                self.sym_names[sym] = _sanitize(str(sym))
        self._derived_inputs(users)
        env = {}
        for n in placeholders:
            self.cur = n
            if n.name in consts:
                env[n.name] = consts[n.name]
                continue
            v = self.val(n)
            if isinstance(v, (int, torch.SymInt)):
                env[n.name] = v
                continue
            if not isinstance(v, torch.Tensor):
                self.fail(f"input '{n.name}' is a {type(v).__name__}; only tensors are supported")
            if v.dtype not in _SYMC_DTYPES:
                self.fail(f"input '{n.name}' has dtype {v.dtype}, which symc does not take")
            dims = [self.dim(s) for s in v.shape]
            env[n.name] = _T(self.m.input(n.name, _symc_dtype(v.dtype), dims))
            self.input_handles.add(int(env[n.name]))
            self.name_count[n.name] = 1
            self.input_names.append(n.name)
        self.cur = None
        for n in ep.graph.nodes:
            if n.op in ("placeholder",):
                continue
            self.cur = n
            if n.op == "output":
                break
            if n.op == "get_attr":
                env[n.name] = getattr(ep.graph_module, n.target)
                continue
            if n.op != "call_function":
                self.fail(f"FX op kind '{n.op}' is not supported")
            env[n.name] = self.lower(n, env)
        out_node = n
        self.cur = out_node
        flat = out_node.args[0]
        outs = []
        marked = set()
        for spec, a in zip(sig.output_specs, flat):
            if spec.kind != OutputKind.USER_OUTPUT:
                self.fail(f"output of kind {spec.kind} (e.g. a buffer mutated in forward) is not supported")
            v = env[a.name] if isinstance(a, torch.fx.Node) else a
            if isinstance(v, (int, torch.SymInt, float)) or v is None:
                self.fail(f"output '{getattr(a, 'name', a)}' is not a tensor; symc outputs must be tensors")
            h = self.tensor(v)
            # an output must be a tensor of its own: a graph input (x.squeeze(d) of a dim that is not 1, a
            # clone, a no-op slice, ...) or a constant gets a copy, and so does a second output of one tensor
            if h in marked or int(h) in self.input_handles or isinstance(v, torch.Tensor) or \
                    isinstance(a, torch.fx.Node) and a.op == "placeholder":
                self.cur = out_node
                h = self.node("identity", [h])
            marked.add(h)
            self.m.output(int(h))
            outs.append(h)
        self.cur = None
        self.check_lowering(env)
        return self.m

    def check_assert(self, n, args):
        """A runtime assert torch.export left for a guard (prefer_deferred_runtime_asserts_over_guards).
        Raised inside an op's metadata computation (GUARD_SOURCES says "dispatch": a stride, memory-format
        or size-1 decision of a meta function) it is dropped: symc infers every shape itself and
        Tracer.check_lowering compares them with torch's. Raised by Python code that branched on a size
        (the model's, a library's; or of unknown source), the traced program holds only where the
        condition does: it must hold at every
        size in the declared ranges (all of them tried where there are at most 2 million, else corners and
        200k random ones), or the build fails with the condition, a size that breaks it and the source line."""
        import sympy
        cond = args[0] if args else None
        if isinstance(cond, (bool, np.bool_)):
            if not cond:
                self.fail(f"the traced program asserts false ({args[1] if len(args) > 1 else ''})", code="range")
            return
        if not isinstance(cond, torch.SymBool):
            return
        expr = cond.node.expr
        # where the condition was computed (the assert node itself carries the stack of the pass that
        # inserted it)
        src = n.args[0] if n.args and isinstance(n.args[0], torch.fx.Node) else n
        if GUARD_SOURCES.get(str(expr)) == "dispatch":
            return
        syms = sorted(expr.free_symbols, key=str)
        bounds = []
        for sym in syms:
            lo, hi = self.ranges.get(sym, (None, None))
            lo, hi = _int_bound(lo), _int_bound(hi)
            if lo is None or hi is None or sym not in self.sym_names:
                return  # a symbol that is not a declared input size: nothing the caller declared to check
            bounds.append((lo, hi))
        if not syms:
            if not bool(expr):
                self.fail(f"the traced program asserts {expr}, which is false", code="range")
            return
        f = sympy.lambdify(syms, expr, modules=[{"floor": np.floor, "Mod": np.mod, "FloorDiv": np.floor_divide,
                                                  "PythonMod": np.mod}, "numpy"])
        total = 1
        for lo, hi in bounds:
            total *= hi - lo + 1
        rng = np.random.default_rng(7)
        if total <= 2_000_000:
            grids = np.meshgrid(*[np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in bounds], indexing="ij")
            pts = [g.ravel() for g in grids]
        else:
            import itertools
            corners = np.array(list(itertools.product(*[(lo, hi) for lo, hi in bounds])), dtype=np.int64).T
            pts = [np.concatenate([corners[i], rng.integers(lo, hi + 1, 200_000)]) for i, (lo, hi) in
                   enumerate(bounds)]
        try:
            ok = np.broadcast_to(np.asarray(f(*pts), dtype=bool), pts[0].shape)
        except Exception:  # noqa: BLE001 - a function lambdify cannot map: try each point with sympy
            ok = np.array([bool(expr.xreplace({s: sympy.Integer(int(p[i])) for s, p in zip(syms, pts)}))
                           for i in range(min(len(pts[0]), 20000))])
        bad = np.flatnonzero(~ok)
        if bad.size:
            i = int(bad[0])
            at = ", ".join(f"{self.sym_names[s]}={int(p[i])}" for s, p in zip(syms, pts))
            names = {s: sympy.Symbol(self.sym_names[s]) for s in syms}
            rng_txt = ", ".join(f"{self.sym_names[s]} in [{lo}, {hi}]" for s, (lo, hi) in zip(syms, bounds))
            self.cur = src
            fix = "Narrow the declared range to sizes where it holds, or make the code size-independent"
            if len(syms) == 2 and all(s in self.sym_dims for s in syms) and \
                    bool(sympy.simplify(expr.xreplace({syms[1]: syms[0]}))) is True:
                # a relation between two input dims that equal sizes satisfy (input_ids' S <= attention_mask's S)
                (_, n0, d0), (_, n1, d1) = self.sym_dims[syms[0]], self.sym_dims[syms[1]]
                names_txt = f"dim_names={{{d0}: 'S'}} in both" if d0 == d1 else \
                    f"dim_names={{{d0}: 'S'}} and dim_names={{{d1}: 'S'}}"
                fix = (f"If '{n0}' dim {d0} and '{n1}' dim {d1} always have the same size, declare them as one dim: "
                       f"the same name in both symc.Inputs ({names_txt}) or one torch.export.Dim; else n" + fix[1:])
            self.fail(f"the model's code branched on a size: torch.export traced it assuming "
                      f"{expr.xreplace(names)}, which does not hold at {at} (declared {rng_txt}); at such sizes "
                      f"the traced program may compute something else than the model. {fix}", code="range")

    # ---- the lowering checked against torch ----
    def _bindings(self):
        """A few bindings of the declared symbols (declaration order): all at min, opt and max, and some
        mixed and random in-range values (multiples respected), the sizes a mistaken lowering differs at."""
        syms = self.m.symbols
        if not syms:
            return [[]]
        rng = np.random.default_rng(1234)

        def pick(lo, hi, mult):
            v = int(rng.integers(lo, hi + 1))
            v -= v % mult
            return v if v >= lo else v + mult

        out = [[s[1] for s in syms], [s[2] for s in syms], [s[3] for s in syms],
               [s[1] if i % 2 else s[3] for i, s in enumerate(syms)],
               [s[3] if i % 2 else s[1] for i, s in enumerate(syms)]]
        out += [[pick(s[1], s[3], s[4]) for s in syms] for _ in range(3)]
        # opt + 1 style neighbours where the range allows (the B > 1 of a batch declared [1, 4] opt 1)
        out.append([min(s[2] + s[4], s[3]) for s in syms])
        seen, uniq = set(), []
        for b in out:
            if tuple(b) not in seen:
                seen.add(tuple(b))
                uniq.append(b)
        return uniq

    def _size_text(self, sz):
        """A torch size in the symc symbols' names where it converts (torch's own s77 otherwise)."""
        if isinstance(sz, torch.SymInt) and not sz.node.expr.is_number:
            try:
                return self.m.dim_str(self.dim(sz))
            except SymcError:
                return str(sz)
        return str(sz)

    def check_lowering(self, env):
        """Every lowered node's symc dtype and shape must be torch's (node.meta['val']) at every size in
        range. symc's shape inference runs here; each dim is compared by handle, then by proof, then by
        evaluation at a few bindings (min, opt, max, mixed, random). A difference is a lowering bug that
        would run and return wrong values or shapes, so it is refused here, never run."""
        import sympy
        self.m.infer_shapes()
        binds = self._bindings()
        sym_vals = None  # [{sympy symbol: int}] per binding, built on first need
        cache = {}

        def torch_vals(expr):
            nonlocal sym_vals
            if sym_vals is None:
                sym_vals = []
                for b in binds:
                    d = {}
                    for sym, h in self.symbols.items():
                        v = self.m.dim_eval(h, b)
                        if v is not None:
                            d[sym] = sympy.Integer(v)
                    sym_vals.append(d)
            out = []
            for d in sym_vals:
                if not expr.free_symbols <= set(d):
                    return None
                try:
                    out.append(int(expr.xreplace(d)))
                except (TypeError, ValueError):
                    return None
            return out

        def same_dim(h, sz):
            if isinstance(sz, torch.SymInt):
                sz = sz.node.expr
                if sz.is_number:
                    sz = int(sz)
            if isinstance(sz, int):
                want = self.m.const(sz)
            else:
                key = ("dim", sz)
                if key not in cache:
                    try:
                        cache[key] = self.dim(sz)
                    except SymcError:
                        cache[key] = None
                want = cache[key]
            if want is not None and want != _lib.DIM_NONE:
                eq = self.m.dim_equal(h, want)
                if eq >= 0:
                    return eq == 1, None
            vals = [sz] * len(binds) if isinstance(sz, int) else torch_vals(sz)
            if vals is None:
                return True, None  # torch's size is over symbols symc has no values for: nothing to compare
            for b, v in zip(binds, vals):
                got = self.m.dim_eval(h, b)
                if got != v:
                    return False, (b, got, v)
            return True, None

        def text(dt, dims):
            return f"{dt}[{', '.join(dims)}]"

        for n in self.ep.graph.nodes:
            if n.op != "call_function" or n.name not in env:
                continue
            v, meta = env[n.name], self.val(n)
            pairs = []
            if isinstance(v, _T) and isinstance(meta, torch.Tensor):
                pairs = [(v, meta, "")]
            elif isinstance(v, (tuple, list)) and isinstance(meta, (tuple, list)):
                pairs = [(x, mv, f" output {i}") for i, (x, mv) in enumerate(zip(v, meta))
                         if isinstance(x, _T) and isinstance(mv, torch.Tensor)]
            for h, mv, which in pairs:
                self.cur = n
                dt, dims = self.m.tensor_info(int(h))
                want_dt = _symc_dtype(mv.dtype)
                tshape = list(mv.shape)
                got_txt = lambda: text(_dtype_text(dt), [self.m.dim_str(d) for d in dims or []])
                want_txt = lambda: text(str(mv.dtype).replace("torch.", ""), [self._size_text(s) for s in tshape])
                if dims is None:
                    continue  # not part of the graph that reaches an output: never run
                if want_dt is not None and dt != want_dt:
                    self.fail(f"internal lowering error{which}: symc computes {got_txt()} where torch computes "
                              f"{want_txt()} (dtype differs); refusing to compile a model that would run wrong. "
                              f"This is a symc bug: please report it", code="internal")
                if len(dims) != len(tshape):
                    self.fail(f"internal lowering error{which}: symc computes {got_txt()} where torch computes "
                              f"{want_txt()} (rank differs); refusing to compile a model that would run wrong. "
                              f"This is a symc bug: please report it", code="internal")
                for i, (hd, sz) in enumerate(zip(dims, tshape)):
                    ok, why = same_dim(hd, sz)
                    if not ok:
                        at = ""
                        if why is not None:
                            b, got, want = why
                            at = " (at " + ", ".join(f"{s[0]}={x}" for s, x in zip(self.m.symbols, b)) + \
                                 f": {got} vs {want})"
                        self.fail(f"internal lowering error{which}: symc computes {got_txt()} where torch computes "
                                  f"{want_txt()} (dim {i} differs{at}); refusing to compile a model that would "
                                  f"run wrong. This is a symc bug: please report it", code="internal")
        self.cur = None

    def lower(self, n, env):
        def sub(a):
            if isinstance(a, torch.fx.Node):
                return env[a.name]
            if isinstance(a, (list, tuple)):
                return type(a)(sub(x) for x in a)
            return a
        args = [sub(a) for a in n.args]
        kwargs = {k: sub(v) for k, v in n.kwargs.items()}
        t = n.target
        meta = self.val(n)
        # shape arithmetic: torch already worked out the value, as an int or a SymInt
        if isinstance(meta, (int, torch.SymInt)) and not isinstance(meta, bool) and (
                not isinstance(t, torch._ops.OpOverload) or t in _SYM_OPS):
            return meta
        # the conditions of runtime asserts (sym_not, eq, mod on sizes): only _assert_scalar uses them
        if isinstance(meta, (bool, torch.SymBool, float, torch.SymFloat)) and \
                not isinstance(t, torch._ops.OpOverload):
            return meta
        if t is operator.getitem:
            v = args[0][args[1]]
            if isinstance(v, _Unsupported):
                return v
            return v
        if t in _ASSERTS:
            self.check_assert(n, args)
            return None
        if t in _IGNORED:
            return None
        # fold ops on constants with torch itself
        def has_sym(a):
            if isinstance(a, (_T, torch.SymInt, _Unsupported)):
                return True
            if isinstance(a, (list, tuple)):
                return any(has_sym(x) for x in a)
            return False
        leaves = list(args) + list(kwargs.values())
        if isinstance(t, torch._ops.OpOverload) and not has_sym(leaves) and \
                any(isinstance(a, torch.Tensor) for a in leaves) and t not in _NO_FOLD:
            with torch.no_grad():
                try:
                    return t(*args, **kwargs)
                except Exception as e:
                    self.fail(f"folding on constants failed: {e}")
        fn = _LOWER.get(t)
        if fn is None and isinstance(t, torch._ops.OpOverload):
            fn = _LOWER.get(t._overloadpacket)
        if fn is None:
            self.fail(f"unsupported ATen op {_op_name(t)}; symc has no lowering for it")
        return fn(self, n, args, kwargs)


# ---------------------------------------------------------------------------------------------
# lowerings: fn(tracer, node, args, kwargs) -> value

_LOWER = {}
_IGNORED = set()
_ASSERTS = {o for o in (getattr(getattr(aten, "_assert_scalar", None), "default", None),) if o is not None}
_SYM_OPS = {o for o in (getattr(aten.sym_size, "int", None), getattr(aten.sym_numel, "default", None),
                        getattr(aten.sym_stride, "int", None), getattr(aten.sym_storage_offset, "default", None))
            if o is not None}
_NO_FOLD = set()


def _reg(*targets):
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
for _n in ("empty", "full", "zeros", "ones", "randn", "rand", "scalar_tensor", "arange"):
    pass


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


def _static(v):
    if isinstance(v, torch.SymInt) and v.node.expr.is_number:
        return int(v.node.expr)
    return v


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


@_reg(_op("_softmax"), _op("softmax"), _op("_safe_softmax"))
def _softmax(tr, n, a, k):
    rank = tr.rank(n)
    return tr.node("softmax", [tr.tensor(a[0])], [("axis", "int", _norm(tr, a[1], rank))])


@_reg(_op("_log_softmax"), _op("log_softmax"))
def _log_softmax(tr, n, a, k):
    rank = tr.rank(n)
    return tr.node("log_softmax", [tr.tensor(a[0])], [("axis", "int", _norm(tr, a[1], rank))])


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


# scaled_dot_product_attention and the fused variants run_decompositions may leave (by device and table):
# op name -> the name of its mask argument (None: none). Only output 0 is lowered.
_SDPA_OPS = {"scaled_dot_product_attention.default": "attn_mask",
             "_scaled_dot_product_attention_math.default": "attn_mask",
             "_scaled_dot_product_flash_attention.default": None,
             "_scaled_dot_product_flash_attention_for_cpu.default": "attn_mask",
             "_scaled_dot_product_efficient_attention.default": "attn_bias",
             "_scaled_dot_product_cudnn_attention.default": "attn_bias",
             "_scaled_dot_product_fused_attention_overrideable.default": "attn_bias"}


def _sdpa(tr, n, a, k):
    """softmax(q @ k^T * scale + mask [+ causal mask]) @ v, in core symc ops. Shapes: q [..., L, E],
    k [..., S, E], v [..., S, Ev]; the mask broadcasts to [..., L, S] (bool: True takes part)."""
    g = _schema_args(n, a, k)
    mask_name = _SDPA_OPS[f"{n.target._overloadpacket.__name__}.{n.target._overloadname}"]
    q, key, v = g["query"], g["key"], g["value"]
    p = g.get("dropout_p") or 0.0
    if not isinstance(p, (int, float)) or p != 0.0:
        tr.fail(f"dropout_p={p} is not supported (symc runs inference: pass dropout_p=0.0, e.g. "
                f"dropout_p=self.p if self.training else 0.0, and call model.eval())")
    if g.get("dropout_mask") is not None:
        tr.fail("an explicit dropout_mask is not supported")
    qs, ks = tr.shape(n.args[0]), tr.shape(n.args[1])
    rk = len(ks)
    if len(qs) < 2 or rk < 2:
        tr.fail(f"query and key need rank >= 2, got {len(qs)} and {rk}")
    dt = _in_dtype(tr, n)
    if g.get("enable_gqa"):  # grouped-query attention: each key/value head serves Hq / Hkv query heads in a row
        if len(qs) < 3 or rk < 3:
            tr.fail(f"enable_gqa=True needs a heads dim (rank >= 3), got ranks {len(qs)} and {rk}")
        hq, hk = _static(qs[-3]), _static(ks[-3])
        if not isinstance(hq, int) or not isinstance(hk, int) or hk == 0 or hq % hk:
            tr.fail(f"enable_gqa=True with {hq} query heads and {hk} key/value heads is not supported (static "
                    f"counts, the query's a multiple of the key's, are)")
        if hq != hk:
            rep = []
            for t, tn in ((key, n.args[1]), (v, n.args[2])):
                sh = tr.shape(tn)
                u = tr.node("unsqueeze", [tr.tensor(t)], [("axes", "ints", [len(sh) - 2])])
                big = [tr.dim(x) for x in sh[:-3]] + [tr.m.const(hk), tr.m.const(hq // hk)] + \
                    [tr.dim(x) for x in sh[-2:]]
                e = tr.node("expand", [u], [("shape", "dims", big)])
                rep.append(tr.node("reshape", [e], [("shape", "dims", [tr.dim(x) for x in sh[:-3]] +
                                                    [tr.m.const(hq)] + [tr.dim(x) for x in sh[-2:]])]))
            key, v = rep
    scale = g.get("scale")
    if scale is None:
        e = _static(qs[-1])
        if not isinstance(e, int):
            tr.fail(f"the head size {qs[-1]} is symbolic; pass scale= explicitly")
        scale = 1.0 / math.sqrt(e)
    perm = list(range(rk))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    kt = tr.node("transpose", [tr.tensor(key)], [("perm", "ints", perm)])
    s = tr.node("matmul", [tr.tensor(q), kt])
    if scale != 1.0:
        s = tr.node("mul", [s, tr.tensor(float(scale), dt)])
    mask = g.get(mask_name) if mask_name else None
    if mask is not None:
        mnode = _schema_args(n, n.args, n.kwargs).get(mask_name)
        mv = mask if isinstance(mask, torch.Tensor) else (tr.val(mnode) if isinstance(mnode, torch.fx.Node) else None)
        mdt = mv.dtype if isinstance(mv, torch.Tensor) else dt
        if mdt == torch.bool:  # True takes part: where(mask, s, -inf)
            s = tr.node("where", [tr.tensor(mask, torch.bool), s, tr.tensor(float("-inf"), dt)])
        else:
            s = tr.node("add", [s, tr.tensor(mask, dt)])
    if g.get("is_causal"):
        # top-left aligned, as torch: query i sees keys j <= i, from the symbolic L and S
        L, S = tr.dim(qs[-2]), tr.dim(ks[-2])
        zero, one = tr.m.const(0), tr.m.const(1)
        rows = tr.node("range", [], [("start", "dims", [zero]), ("limit", "dims", [L]), ("delta", "dims", [one]),
                                     ("to", "dtype", _lib.I64)])
        cols = tr.node("range", [], [("start", "dims", [zero]), ("limit", "dims", [S]), ("delta", "dims", [one]),
                                     ("to", "dtype", _lib.I64)])
        rows = tr.node("unsqueeze", [rows], [("axes", "ints", [1])])
        cols = tr.node("unsqueeze", [cols], [("axes", "ints", [0])])
        masked = tr.node("greater", [cols, rows])  # [L, S]
        s = tr.node("where", [masked, tr.tensor(float("-inf"), dt), s])
    # torch's attention gives zeros, not NaN, for a query row whose keys are all masked (-inf): the safe
    # softmax (scaled_dot_product_attention since torch 2.5, every backend)
    pr = tr.node("softmax", [s], [("axis", "int", rk - 1), ("zero_masked_rows", "int", 1)])
    y = tr.node("matmul", [pr, tr.tensor(v)])
    rets = n.target._schema.returns
    if len(rets) == 1:
        return y
    # the fused variants also return logsumexp, philox seeds, debug masks, ...: fine while unused
    return (y,) + tuple(_Unsupported(f"output {i}{f' ({r.name})' if r.name else ''} of {_op_name(n.target)} "
                                     f"(symc lowers only output 0, the attention output)")
                        for i, r in enumerate(rets) if i > 0)


for _name in _SDPA_OPS:
    _o = _op(_name)
    if _o is not None:
        _LOWER[_o] = _sdpa


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


def _pair(v, name, tr):
    if isinstance(v, int):
        return [v, v]
    v = list(v)
    if len(v) == 1:
        return [v[0], v[0]]
    if len(v) != 2:
        tr.fail(f"{name} {v} is not 2-D")
    return [int(e) for e in v]


def _ntuple(v, nd, name, tr):
    v = [v] if isinstance(v, int) else list(v)
    if len(v) == 1:
        v = v * nd
    if len(v) != nd:
        tr.fail(f"{name} {v} does not match a {nd}-D convolution")
    return [int(e) for e in v]


@_reg(_op("convolution"), _op("conv2d"), _op("conv1d"), _op("_convolution"), _op("conv_transpose1d"),
      _op("conv_transpose2d"))
def _conv(tr, n, a, k):
    """convolution: 2-D is symc's conv2d; 1-D is a conv2d over [N, C, 1, L] (a unit axis added to the input
    and the weight, then removed); transposed 1-D and 2-D are symc's conv_transpose (weight [C, O/group, k..],
    torch's layout, pads begins = ends = padding, output_padding as given). 3-D is refused by name."""
    pk = n.target._overloadpacket
    rank = tr.rank(n.args[0])
    g = lambda i, name, dflt: k.get(name, a[i] if len(a) > i else dflt)
    x, w, b = a[0], a[1], g(2, "bias", None)
    transposed = pk in (aten.conv_transpose1d, aten.conv_transpose2d)
    out_pad = 0
    if pk in (aten.conv2d, aten.conv1d):
        stride, pad, dil, groups = g(3, "stride", 1), g(4, "padding", 0), g(5, "dilation", 1), g(6, "groups", 1)
    elif transposed:  # (input, weight, bias, stride, padding, output_padding, groups, dilation)
        stride, pad, out_pad = g(3, "stride", 1), g(4, "padding", 0), g(5, "output_padding", 0)
        groups, dil = g(6, "groups", 1), g(7, "dilation", 1)
    else:
        stride, pad, dil = g(3, "stride", 1), g(4, "padding", 0), g(5, "dilation", 1)
        transposed = bool(g(6, "transposed", False))
        out_pad, groups = g(7, "output_padding", 0), g(8, "groups", 1)
    nd = rank - 2
    if nd not in (1, 2):
        tr.fail(f"{nd}-D {'transposed ' if transposed else ''}convolution (a rank-{rank} input) is not supported; "
                f"symc has 1-D and 2-D convolutions (rank-3 and rank-4 inputs)")
    if isinstance(pad, str):
        if pad == "valid":
            pad = 0
        else:
            tr.fail(f"padding={pad!r} is not supported; give the pads as ints")
    stride, p, dil = (_ntuple(v, nd, nm, tr) for v, nm in ((stride, "stride"), (pad, "padding"),
                                                           (dil, "dilation")))
    bias = [tr.tensor(b)] if b is not None else []
    if transposed:
        op = _ntuple(out_pad, nd, "output_padding", tr)
        return tr.node("conv_transpose", [tr.tensor(x), tr.tensor(w)] + bias,
                       [("strides", "ints", stride), ("pads", "ints", p + p), ("dilations", "ints", dil),
                        ("group", "int", int(groups)), ("output_padding", "ints", op)])
    if nd == 1:  # [N, C, L] as [N, C, 1, L]
        xs = tr.node("unsqueeze", [tr.tensor(x)], [("axes", "ints", [2])])
        ws = w.unsqueeze(2) if isinstance(w, torch.Tensor) else tr.node("unsqueeze", [tr.tensor(w)],
                                                                         [("axes", "ints", [2])])
        y = tr.node("conv2d", [xs, tr.tensor(ws)] + bias,
                    [("strides", "ints", [1] + stride), ("pads", "ints", [0, p[0], 0, p[0]]),
                     ("dilations", "ints", [1] + dil), ("group", "int", int(groups))])
        return tr.node("squeeze", [y], [("axes", "ints", [2])])
    return tr.node("conv2d", [tr.tensor(x), tr.tensor(w)] + bias,
                   [("strides", "ints", stride), ("pads", "ints", [p[0], p[1], p[0], p[1]]),
                    ("dilations", "ints", dil), ("group", "int", int(groups))])


def _pool_attrs(tr, a, k):
    g = lambda i, name, dflt: k.get(name, a[i] if len(a) > i else dflt)
    kernel = _pair(g(1, "kernel_size", None), "kernel_size", tr)
    stride = g(2, "stride", None)
    stride = kernel if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _pair(stride, "stride", tr)
    p = _pair(g(3, "padding", 0), "padding", tr)
    return g, [("kernel", "ints", kernel), ("strides", "ints", stride), ("pads", "ints", [p[0], p[1], p[0], p[1]])]


@_reg(_op("max_pool2d_with_indices"), _op("max_pool2d"))
def _max_pool(tr, n, a, k):
    if tr.rank(n.args[0]) != 4:
        tr.fail("only NCHW (rank-4) max_pool2d is supported")
    g, attrs = _pool_attrs(tr, a, k)
    attrs += [("dilations", "ints", _pair(g(4, "dilation", 1), "dilation", tr)),
              ("ceil_mode", "int", int(bool(g(5, "ceil_mode", False))))]
    y = tr.node("max_pool2d", [tr.tensor(a[0])], attrs)
    if n.target._overloadpacket is aten.max_pool2d_with_indices:
        return (y, _Unsupported("max_pool2d's indices"))
    return y


@_reg(_op("avg_pool2d"))
def _avg_pool(tr, n, a, k):
    if tr.rank(n.args[0]) != 4:
        tr.fail("only NCHW (rank-4) avg_pool2d is supported")
    g, attrs = _pool_attrs(tr, a, k)
    if g(6, "divisor_override", None) is not None:
        tr.fail("avg_pool2d divisor_override is not supported")
    attrs += [("ceil_mode", "int", int(bool(g(4, "ceil_mode", False)))),
              ("count_include_pad", "int", int(bool(g(5, "count_include_pad", True))))]
    return tr.node("avg_pool2d", [tr.tensor(a[0])], attrs)


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


# ---- ops real models decompose to (Hugging Face text models, timm, torchvision), on core symc ops ----

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


def _as_bool(tr, n, a, i):
    return _arg_as(tr, n, a, i, torch.bool)


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


def _filled(tr, n, value):
    """A tensor of n's shape and dtype holding value: a constant when the shape is static, else a 0-d
    constant expanded to the symbolic shape."""
    v = tr.val(n)
    dt = v.dtype
    if isinstance(value, torch.Tensor):
        value = value.item()
    if isinstance(value, (torch.SymInt, torch.SymFloat)) and _symc_dtype(dt) is not None:
        # a size as the fill value (torch.full((n,), x.size(0))): the scalar computed at run time, expanded
        return tr.node("expand", [tr.tensor(value, dt)], [("shape", "dims", [tr.dim(s) for s in v.shape])])
    if isinstance(value, (torch.SymInt, torch.SymFloat, _T)):
        tr.fail(f"a fill value that is computed at run time ({value}) is not supported")
    shape = [_static(s) for s in v.shape]
    if all(isinstance(s, int) for s in shape):
        return torch.full(shape, value, dtype=dt)
    if _symc_dtype(dt) is None:
        tr.fail(f"a {dt} fill is not supported")
    scalar = torch.tensor(value, dtype=dt)
    return tr.node("expand", [tr.tensor(scalar)], [("shape", "dims", [tr.dim(s) for s in shape])])


@_reg(_op("full"), _op("new_full"), _op("full_like"))
def _full(tr, n, a, k):
    pk = n.target._overloadpacket
    value = k.get("fill_value", a[1] if pk is aten.full else a[2] if pk is aten.new_full else a[1])
    return _filled(tr, n, value)


@_reg(_op("zeros"), _op("new_zeros"), _op("zeros_like"), _op("empty"), _op("new_empty"), _op("empty_like"),
      _op("empty_strided"), _op("new_empty_strided"))
def _zeros(tr, n, a, k):
    return _filled(tr, n, 0)  # empty: any value is right; zeros keep results deterministic


@_reg(_op("ones"), _op("new_ones"), _op("ones_like"))
def _ones(tr, n, a, k):
    return _filled(tr, n, 1)


@_reg(_op("scalar_tensor"))
def _scalar_tensor(tr, n, a, k):
    return _filled(tr, n, a[0])


@_reg(_op("arange"))
def _arange(tr, n, a, k):
    """arange(end) / arange(start, end[, step]) with int (or symbolic int) bounds: a range op."""
    vals = list(a)
    start, end, step = (0, vals[0], 1) if len(vals) == 1 else (vals[0], vals[1], vals[2] if len(vals) > 2 else 1)
    start, end, step = k.get("start", start), k.get("end", end), k.get("step", step)
    dt = _dt(tr, n)
    for what, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, float) and v != int(v):
            tr.fail(f"arange with a non-integer {what} ({v}) is not supported")
        if isinstance(v, (_T, torch.Tensor)):
            tr.fail(f"arange with a tensor {what} is not supported")
    start, end, step = [_static(int(v) if isinstance(v, float) else v) for v in (start, end, step)]
    if all(isinstance(v, int) for v in (start, end, step)):
        return torch.arange(start, end, step, dtype=dt)
    if not isinstance(step, int) or step == 0:
        tr.fail(f"arange with a symbolic or zero step ({step}) is not supported")
    it = dt if dt in (torch.int64, torch.int32) else torch.int64
    r = tr.node("range", [], [("start", "dims", [tr.dim(start)]), ("limit", "dims", [tr.dim(end)]),
                              ("delta", "dims", [tr.m.const(step)]), ("to", "dtype", _symc_dtype(it))])
    return r if it == dt else _cast(tr, r, it, dt)


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
            tr.fail(f"{what} with a boolean mask is not supported: the number of elements it selects depends on "
                    f"the data")
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


@_reg(_op("_adaptive_avg_pool2d"), _op("adaptive_avg_pool2d"))
def _adaptive(tr, n, a, k):
    """To (1, 1): global_avg_pool. To a size dividing the (static) input: avg_pool2d with kernel = stride =
    input / output, the same windows. Anything else (uneven windows, symbolic sizes) is refused."""
    out = [int(v) for v in a[1]]
    shape = tr.shape(n.args[0])
    if tr.rank(n.args[0]) != 4:
        tr.fail(f"adaptive_avg_pool2d of a rank-{tr.rank(n.args[0])} input is not supported (NCHW is)")
    if out == [1, 1]:
        return tr.node("global_avg_pool", [tr.tensor(a[0])])
    hw = [_static(s) for s in shape[2:]]
    if not all(isinstance(s, int) for s in hw):
        tr.fail(f"adaptive_avg_pool2d to {out} of a symbolic spatial size {shape[2:]} is not supported (to (1, 1) "
                f"is, and to a size that divides a static input)")
    if hw == out:
        return a[0]
    if any(o == 0 or s % o for s, o in zip(hw, out)):
        tr.fail(f"adaptive_avg_pool2d from {hw} to {out} is not supported: the output does not divide the input, "
                f"so the windows differ in size")
    kern = [s // o for s, o in zip(hw, out)]
    return tr.node("avg_pool2d", [tr.tensor(a[0])], [("kernel", "ints", kern), ("strides", "ints", kern),
                                                     ("pads", "ints", [0, 0, 0, 0])])


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


@_reg(_op("amin"))
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


def lower(ep, name="model", **kw):
    """ExportedProgram -> (builder.Module, input names)."""
    tr = Tracer(ep, name, **kw)
    m = tr.run()
    return m, tr


# ---- added for ONNX conformance (issue 15): cumulative sums, arg/top-k selection, min/prod ----

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


# ---- expm1, log1p: symc's exact ops (torch's celu, elu, softplus and mish decompose to them) ----
for _aten in ("expm1", "log1p"):
    _o = _op(_aten)
    if _o is not None:
        _LOWER[_o] = _unary(_aten)


# ---- group, instance and batch-statistics normalization ----

def _channel_affine(tr, n, y, w, b, rank):
    """y * w + b with w, b of shape [C] viewed as [C, 1, ..] against a rank-`rank` y whose channels are dim 1."""
    view = lambda t: t.reshape([-1] + [1] * (rank - 2)) if isinstance(t, torch.Tensor) else \
        tr.node("reshape", [tr.tensor(t)], [("shape", "dims", [_lib.DIM_NONE] + [tr.m.const(1)] * (rank - 2))])
    if w is not None:
        y = tr.node("mul", [y, tr.tensor(view(w))])
    if b is not None:
        y = tr.node("add", [y, tr.tensor(view(b))])
    return y


def _float_in(tr, n):
    d = _in_dtype(tr, n)
    if d not in (torch.float32, torch.float16, torch.bfloat16):
        tr.fail(f"the input is {d}; the normalization needs a float tensor")


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


# ---- upsampling: symc's resize ----

def _binary_fraction(s):
    """A float scale as (num, den) with den a power of 2: exact, since a double is one."""
    num, den = float(s), 1
    while num != math.floor(num) and den < (1 << 40):
        num, den = num * 2, den * 2
    return (int(num), den) if num == math.floor(num) and num <= (1 << 31) else None


def _upsample(mode, nearest_mode=None, antialias=0):
    """upsample_{nearest,linear,bilinear,bicubic,trilinear}{1,2,3}d (.vec and .default), _upsample_nearest_exact*
    and the antialiased _upsample_*_aa as symc's resize, in torch's conventions:
    nearest: src = min(floor(dst * in / out), in - 1) = ONNX asymmetric + floor; nearest-exact:
    floor((dst + 0.5) * in / out) = half_pixel + round_prefer_ceil; linear/cubic: align_corners, else half_pixel
    (src = (dst + 0.5) * in / out - 0.5; linear clamps at 0, which reading the edge twice equals; cubic reads
    clamped indices, as torch's). A scale factor the caller gave is the one torch maps coordinates by (1 /
    scale), so it is passed as the resize's scale (not for align_corners, which uses the lengths); the output
    size is torch's floor(in * scale), exact for a binary-fraction scale on a symbolic size."""
    def f(tr, n, a, k):
        if antialias:  # torch's filter support and normalization differ from ONNX's antialias resize
            tr.fail("antialias=True is not supported (symc's antialiased resize is ONNX's, whose filter differs "
                    "from torch's); interpolate without antialias")
        g = _schema_args(n, a, k)
        xs, ys = tr.shape(n.args[0]), tr.shape(n)
        rank, nsp = len(xs), len(xs) - 2
        if nsp < 1 or len(ys) != rank:
            tr.fail(f"upsampling a rank-{rank} input is not supported")
        _float_in(tr, n)
        align = bool(g.get("align_corners", False)) if mode != "nearest" else False
        if "scale_factors" in g:
            sf = g.get("scale_factors")
            scales = [None] * nsp if sf is None else [float(v) for v in sf]
            if len(scales) == 1:
                scales = scales * nsp
        else:
            scales = [g.get(nm) for nm in (("scales",) if nsp == 1 else ("scales_d", "scales_h", "scales_w")[3 - nsp:])]
        if len(scales) != nsp:
            tr.fail(f"{len(scales)} scale factors for {nsp} spatial dims")
        sizes = [tr.dim(s) for s in xs[:2]]
        for i in range(nsp):
            sz, s = _static(ys[2 + i]), scales[i]
            if isinstance(sz, int) or s is None:
                sizes.append(tr.dim(sz))
                continue
            frac, src = _binary_fraction(s), _static(xs[2 + i])
            if frac is None:
                tr.fail(f"scale factor {s!r} of a symbolic size is not a binary fraction symc can multiply exactly")
            sizes.append(tr.m.floordiv(tr.m.mul(tr.dim(src), tr.m.const(frac[0])), tr.m.const(frac[1])))
        attrs = [("sizes", "dims", sizes)]
        if not align and any(s is not None for s in scales):
            full = [1.0, 1.0]
            for i, s in enumerate(scales):
                if s is None:  # torch maps this axis by in / out: the resize's run-time scale, if static
                    src, dst = _static(xs[2 + i]), _static(ys[2 + i])
                    if not (isinstance(src, int) and isinstance(dst, int)):
                        tr.fail(f"a scale factor for some spatial dims but not dim {2 + i}, whose size is symbolic, "
                                f"is not supported")
                    s = dst / src
                elif not s > 0:
                    tr.fail(f"scale factor {s!r} must be positive")
                full.append(float(s))
            attrs.append(("scales", "floats", full))
        coord = "align_corners" if align else "asymmetric" if mode == "nearest" and nearest_mode == "floor" \
            else "half_pixel"
        attrs += [("mode", "str", "linear" if mode == "linear" else mode), ("coord_mode", "str", coord)]
        if mode == "nearest":
            attrs.append(("nearest_mode", "str", nearest_mode))
        if mode == "cubic":
            attrs += [("cubic_coeff_a", "float", -0.75), ("exclude_outside", "int", 0)]
        return tr.node("resize", [tr.tensor(a[0])], attrs)
    return f


for _d in ("1d", "2d", "3d"):
    for _name, _fn in ((f"upsample_nearest{_d}", _upsample("nearest", "floor")),
                       (f"_upsample_nearest_exact{_d}", _upsample("nearest", "round_prefer_ceil"))):
        _o = _op(_name)
        if _o is not None:
            _LOWER[_o] = _fn
for _name, _fn in (("upsample_linear1d", _upsample("linear")), ("upsample_bilinear2d", _upsample("linear")),
                   ("upsample_trilinear3d", _upsample("linear")), ("upsample_bicubic2d", _upsample("cubic")),
                   ("_upsample_bilinear2d_aa", _upsample("linear", antialias=1)),
                   ("_upsample_bicubic2d_aa", _upsample("cubic", antialias=1))):
    _o = _op(_name)
    if _o is not None:
        _LOWER[_o] = _fn
