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
lowered by the table of the lowerings package (one module per op family); an
op that is missing, or an argument the lowering does not handle, raises
SymcError naming the ATen op, the node and the source line from
node.meta['stack_trace'].

Nothing the trace assumed is dropped silently: the checks (a declared range
wider than the traced one, runtime asserts of size branches, every lowered
node's dtype and shape against torch's) are in checks.py, which Tracer
extends, over what shape_env.py recorded of torch's guards.
"""
import math
import operator

import numpy as np
import torch

from . import _lib
from ._lib import SymcError
from .builder import Module
from .checks import RangeNarrowed, TracerChecks
from .lowerings import _ASSERTS, _IGNORED, _LOWER, _NO_FOLD, _SDPA_OPS, _SYM_OPS, _UPSAMPLE_KEPT, _op
from .shape_env import record_guard_sources, small_guarded
from .values import _SYMC_DTYPES, _T, _Unsupported, _int_bound, _op_name, _sanitize, _symc_dtype, source_line


def _sympy_int(v):
    import sympy
    return sympy.Integer(int(v))


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


class Tracer(TracerChecks):
    """Lowers one ExportedProgram. sym_info: {sympy symbol: dict(name=, min=, opt=, max=)} overrides;
    input_opts: {(user input index, dim): opt}; dim_names: {(user input index, dim): name}; part_conds: the
    conditions of the part of the declared box this program is for (parts.py; sympy, over checks.dim_symbol
    placeholders), which the checks of runtime asserts take as given; unify_names: input dims that dim_names
    names alike are one symbol, whatever symbols the export gave them; decomposed: ep as another Tracer
    decomposed it (its .ep), to lower without decomposing again."""

    def __init__(self, ep, name="model", input_opts=None, dim_names=None, ranges=None, decompose=True,
                 input_ranges=None, multiples=None, multiple_hints=False, part_conds=None, unify_names=False,
                 decomposed=None):
        # [(condition, size, {symbol names})]: branches the export decided by torch's 0/1 assumption
        self.small = small_guarded(ep)
        self.count_graph = ep.graph  # as exported: checked by run() once the symbols are known (check_counts)
        self.lows = {}
        if decomposed is not None:  # ep decomposed already (by a Tracer of another part of the same export)
            ep = decomposed
        elif decompose:
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
        self.sym_inputs = {}  # {sympy symbol: [(input index, dim)]}: every input dim showing it bare
        self.dim_exprs = {}  # {(input index, dim): its size, a sympy expression (an Integer where static)}
        self.part_conds = list(part_conds or [])
        # dims declared under one name are one symbol (sym_alias: {symbol: the one it stands for})
        self.unify_names, self.sym_alias = unify_names, {}
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
    def fail(self, msg, code="unsupported", narrowed=None):
        """Raises SymcError with msg after where it happened; RangeNarrowed(**narrowed) when given."""
        n = self.cur
        where = f"{_op_name(n.target)} (node '{n.name}') at {source_line(n)}" if n is not None else "graph"
        if narrowed is not None:
            raise RangeNarrowed(f"{where}: {msg}", **narrowed)
        raise SymcError(f"{where}: {msg}", code=code)

    # ---- symbols and dims ----
    def _hint(self, sym):
        return self.sym_opts.get(sym)

    def symbol(self, sym):
        d = self.symbols.get(sym)
        if d is not None:
            return d
        if sym in self.sym_alias:
            d = self.symbols[sym] = self.symbol(self.sym_alias[sym])
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

    def point_value(self, v):
        """v (SymInt or sympy expr) as an int where every symbol in it has a range of one size (a part of the
        declared range fixing B = 2 in a program torch.export kept symbolic in B); else None."""
        if isinstance(v, torch.SymInt):
            v = v.node.expr
        if isinstance(v, int):
            return v
        sub = {}
        for sym in v.free_symbols:
            lo, hi = self.ranges.get(sym, (None, None))
            lo, hi = _int_bound(lo), _int_bound(hi)
            if lo is None or lo != hi:
                return None
            sub[sym] = lo
        v = v.xreplace(sub)
        return int(v) if v.is_Integer else None

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
        elif type(v).__name__ in ("Min", "Max"):  # sympy's or torch's: min(300, u0), a top-k over a count
            args = [self.dim(a) for a in v.args]
            d = args[0]
            for a in args[1:]:
                d = self.m.min(d, a) if type(v).__name__ == "Min" else self.m.max(d, a)
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
    def run(self, finish=True):
        """The module: the program lowered, then (finish) its outputs marked and the lowering checked. Without
        finish, call finish() later (parts.py: the outputs' names are known once every part is traced)."""
        ep = self.ep
        sig = ep.graph_signature
        from torch.export.graph_signature import InputKind
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
                self.dim_exprs[(i, d)] = s.node.expr if isinstance(s, torch.SymInt) else _sympy_int(s)
                if isinstance(s, torch.SymInt) and s.node.expr.is_Symbol:
                    sym = s.node.expr
                    self.sym_inputs.setdefault(sym, []).append((i, d))
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
        if self.unify_names:
            # dims the caller declared under one name (symc.Input dim_names) are one dim, also where this export
            # gave them symbols of their own (Dim.AUTO keeps no names): one symc symbol, read from each
            first = {}
            for sym, nm in self.sym_names.items():
                if any(self.dim_names.get(k) == nm for k in self.sym_inputs.get(sym, ())):
                    if first.setdefault(nm, sym) is not sym:
                        self.sym_alias[sym] = first[nm]
        used = set(self.sym_names.values())
        if len(used) != len(set(self.sym_names) - set(self.sym_alias)):  # a duplicate: fall back to sympy names
            self.sym_alias = {}
            for sym in self.sym_names:
                self.sym_names[sym] = _sanitize(str(sym))
        self._derived_inputs(users)
        self.check_counts(self.count_graph)
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
        self._env, self._out_node = env, n
        return self.finish() if finish else self.m

    def finish(self, output_names=None):
        """Marks the program's outputs and checks the lowering (check_lowering); returns the module.
        output_names: each output as an identity node of that name (the regions of one engine have the same
        outputs by name), instead of the names the program gives them."""
        from torch.export.graph_signature import OutputKind
        env, out_node, sig = self._env, self._out_node, self.ep.graph_signature
        self.cur = out_node
        flat = out_node.args[0]
        outs = []
        marked = set()
        for k, (spec, a) in enumerate(zip(sig.output_specs, flat)):
            if spec.kind != OutputKind.USER_OUTPUT:
                self.fail(f"output of kind {spec.kind} (e.g. a buffer mutated in forward) is not supported")
            v = env[a.name] if isinstance(a, torch.fx.Node) else a
            if isinstance(v, (int, torch.SymInt, float)) or v is None:
                self.fail(f"output '{getattr(a, 'name', a)}' is not a tensor; symc outputs must be tensors")
            h = self.tensor(v)
            # an output must be a tensor of its own: a graph input (x.squeeze(d) of a dim that is not 1, a
            # clone, a no-op slice, ...) or a constant gets a copy, and so does a second output of one tensor
            if output_names is not None:
                h = self._named_output(h, output_names[k])
            elif h in marked or int(h) in self.input_handles or isinstance(v, torch.Tensor) or \
                    isinstance(a, torch.fx.Node) and a.op == "placeholder":
                self.cur = out_node
                h = self.node("identity", [h])
            marked.add(h)
            self.m.output(int(h))
            outs.append(h)
        self.cur = None
        self.check_lowering(env)
        self._env = None
        return self.m

    def _named_output(self, h, name):
        """h copied by an identity node called name (a name no node of this module has)."""
        if name in self.name_count:
            self.fail(f"output name {name} is taken by a node of the program", code="internal")
        self.name_count[name] = 1
        try:
            return _T(self.m.node("identity", [int(h)], [], name=name))
        except SymcError as e:
            self.fail(f"symc op 'identity': {e}", code=e.code)

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
            # on the CPU: a model moved to the GPU mixes its CUDA weights with the constants the
            # trace makes (position ids, masks), and the result is a constant of the module anyway
            with torch.no_grad():
                try:
                    return t(*_on_cpu(args), **_on_cpu(kwargs))
                except Exception as e:
                    self.fail(f"folding on constants failed: {e}")
        fn = _LOWER.get(t)
        if fn is None and isinstance(t, torch._ops.OpOverload):
            fn = _LOWER.get(t._overloadpacket)
        if fn is None and isinstance(t, torch._ops.OpOverload):
            fn = _LOWER.get(t.name())  # an op of a library that registers it when imported (torchvision::nms)
        if fn is None:
            self.fail(f"unsupported ATen op {_op_name(t)}; symc has no lowering for it")
        out = fn(self, n, args, kwargs)
        self._map_unbacked(n, out)
        return out

    def _map_unbacked(self, n, out):
        """torch gives some results of a data-dependent size a fresh unbacked symbol of their own (nms's keep
        sliced to [:300]: u91 <= u90) where symc's shape rule computes that size from the producer's symbol
        (min(300, u0)): the fresh symbol stands for symc's size, so that later shapes mentioning it are symc's.
        (Producers map their own symbol: indexing._produced.)"""
        v = n.meta.get("val")
        if not isinstance(v, torch.Tensor) or not isinstance(out, _T):
            return
        fresh = [(d, s.node.expr) for d, s in enumerate(v.shape) if isinstance(s, torch.SymInt) and
                 s.node.expr.is_Symbol and str(s.node.expr).startswith("u") and s.node.expr not in self.symbols]
        if not fresh:
            return
        self.m.infer_shapes()
        _, dims = self.m.tensor_info(int(out))
        for d, e in fresh:
            self.symbols[e] = dims[d]


def _on_cpu(a):
    """Arguments of a fold with every tensor and device on the CPU."""
    if isinstance(a, torch.Tensor):
        return a.cpu()
    if isinstance(a, torch.device):
        return torch.device("cpu")
    if isinstance(a, dict):
        return {k: _on_cpu(v) for k, v in a.items()}
    if isinstance(a, (list, tuple)):
        return type(a)(_on_cpu(x) for x in a)
    return a


def lower(ep, name="model", **kw):
    """ExportedProgram -> (builder.Module, input names)."""
    tr = Tracer(ep, name, **kw)
    m = tr.run()
    return m, tr
