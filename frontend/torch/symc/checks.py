"""The tracer's checks of its own work: TracerChecks, which Tracer extends (the methods read its symbols,
ranges and module).

Approach: nothing the trace assumed is dropped silently. A declared range wider than the one torch.export
traced for is refused (_check_traced_range), and so is a runtime assert from Python code that branched on a
size unless it holds over the whole declared range (check_assert), and a declared size of 1 (or 0) where
Python code branched on it with no guard, torch assuming sizes are never 0 or 1, and the other branch
changes the program (shape_env.small_guarded, api._small_branches). After lowering, symc's own shape
inference runs and every lowered node's dtype and shape must equal torch's at every size in range
(check_lowering: by handle, proof, or evaluation at min/opt/max, mixed and random bindings); a difference is
a lowering bug that would return wrong values, so it fails the build instead of running.
"""
import numpy as np
import torch

from . import _lib
from ._lib import SymcError
from .shape_env import code_guarded, guard_source
from .values import _T, _dtype_text, _int_bound, _symc_dtype


class RangeNarrowed(SymcError):
    """The traced program is valid only on part of a declared range (code "range", the message as before).
    sym_name: the symbol's name; inputs: every (user input index, dim) bound to it; declared: its (lo, hi) in
    the traced part; holds: [(lo, hi)] intervals of the declared range where the traced program is valid (None:
    not known as intervals); why: the reason in words. A condition over several symbols (check_assert) is
    carried as relation (sympy, over parts.dim_symbol(i, d) placeholders, one per input dim) and condition (the
    text over the symc names): the program holds where it does. parts.py splits on it."""

    def __init__(self, msg, sym_name=None, inputs=(), declared=None, holds=None, why="", relation=None,
                 condition=None):
        super().__init__(msg, code="range")
        self.sym_name, self.inputs, self.declared, self.holds, self.why = sym_name, list(inputs), declared, holds, why
        self.relation, self.condition = relation, condition


def dim_symbol(i, d):
    """The placeholder of user input i's dim d in a part's conditions (parts.py): conditions are kept over
    input dims, because each export names its symbols anew."""
    import sympy
    return sympy.Symbol(f"_in{i}_{d}", integer=True)


def _grid(bounds):
    """Points of the box (per symbol (lo, hi)) as one array per symbol: all of them where there are at most 2
    million, else corners and 200k random ones."""
    total = 1
    for lo, hi in bounds:
        total *= hi - lo + 1
    if total <= 2_000_000:
        grids = np.meshgrid(*[np.arange(lo, hi + 1, dtype=np.int64) for lo, hi in bounds], indexing="ij")
        return [g.ravel() for g in grids]
    import itertools
    rng = np.random.default_rng(7)
    corners = np.array(list(itertools.product(*[(lo, hi) for lo, hi in bounds])), dtype=np.int64).T
    return [np.concatenate([corners[i], rng.integers(lo, hi + 1, 200_000)]) for i, (lo, hi) in enumerate(bounds)]


def _holds(sympy, syms, expr, pts):
    """expr (over syms) at the points pts, as a bool array."""
    f = sympy.lambdify(syms, expr, modules=[{"floor": np.floor, "Mod": np.mod, "FloorDiv": np.floor_divide,
                                              "PythonMod": np.mod}, "numpy"])
    try:
        return np.array(np.broadcast_to(np.asarray(f(*pts), dtype=bool), pts[0].shape))
    except Exception:  # noqa: BLE001 - a function lambdify cannot map: try each point with sympy
        n = min(len(pts[0]), 20000)
        return np.array([bool(expr.xreplace({s: sympy.Integer(int(p[i])) for s, p in zip(syms, pts)}))
                         for i in range(n)] + [True] * (len(pts[0]) - n))


def _intervals(vals, ok):
    """[(lo, hi)] runs of consecutive vals where ok holds."""
    out = []
    for v, k in zip(vals.tolist(), ok.tolist()):
        if k and out and out[-1][1] == v - 1:
            out[-1] = (out[-1][0], v)
        elif k:
            out.append((v, v))
    return out


class TracerChecks:
    """Tracer's checks: of the declared ranges against the traced program (_check_traced_range,
    check_assert) and of the lowering against torch (check_lowering)."""

    # ---- the declared ranges against the traced ones ----
    def _check_traced_range(self, sym, lo, hi):
        """torch.export narrows a symbol's range when the model's code (or an op's shape rule) branched on
        it: the traced program is then known to be right only inside torch's range. Running it outside
        (at a declared size torch never traced) could take the branch the trace did not, with right shapes
        and wrong values, so a declared range wider than torch's is refused, with both ranges. A branch torch
        decided by assuming sizes are never 0 or 1 (self.small: `if x.shape[0] > 1:`, torch's range still
        [1, max]) that changes the program narrows it the same way."""
        vr = self.ep.range_constraints.get(sym)
        tlo, thi = (None, None) if vr is None else (_int_bound(vr.lower), _int_bound(vr.upper))
        if tlo == 2 and lo == 1 and not code_guarded(str(sym)):
            # torch's 0/1 specialization (Dim.AUTO, or a size-oblivious meta function) assumes sizes are not 1
            # without any guard; symc broadcasts a size that may be 1 at run time, and the lowerings that
            # would differ at 1 (squeeze of a symbolic dim) refuse it themselves. Not when Python code
            # branched on the symbol (shape_env.code_guarded): then min 2 may be the branch's, e.g. `if B > 1:`
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
        holds = [(max(lo, t_lo), min(hi, t_hi))] if max(lo, t_lo) <= min(hi, t_hi) else []
        raise RangeNarrowed(
            f"symbol {name}: declared range [{lo}, {hi}], but torch.export traced the model only for "
            f"[{tlo if tlo is not None else '-inf'}, {thi if thi is not None else 'inf'}]: {why}. Outside that "
            f"range the traced program may compute something else. An engine holds one traced program; one "
            f"engine for the whole range where the model branches (several graphs behind shape guards) is planned "
            f"for a later symc. For now declare {name} within [{t_lo}, {t_hi}], and compile another engine for "
            f"{rest} if you need those sizes", sym_name=name, inputs=self.sym_inputs.get(sym, ()), declared=(lo, hi),
            holds=holds, why=why)

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
        expr = cond.node.expr.xreplace(self.sym_alias)  # dims declared as one (Tracer unify_names)
        # where the condition was computed (the assert node itself carries the stack of the pass that
        # inserted it)
        src = n.args[0] if n.args and isinstance(n.args[0], torch.fx.Node) else n
        if guard_source(cond.node.expr) == "dispatch":
            return
        self._check_condition(sympy, expr, src, "the model's code branched on a size: torch.export traced it "
                                                "assuming")

    def check_counts(self, graph):
        """An op whose number of results is a size (unbind, which `list(x)` and `for t in x` become) fixes
        that size in the traced program: torch.export keeps the dim symbolic but the program returns as many
        results as the example had, with no guard. Run before decomposition (which turns unbind into pieces
        no longer showing the count); the size must equal the count at every declared size, else parts.py
        traces the other sizes (one region each)."""
        import sympy
        for n in graph.nodes:
            if n.op != "call_function" or str(n.target).split(".")[:2] not in (["aten", "unbind"],
                                                                              ["aten", "unbind_copy"]):
                continue
            v, src = n.meta.get("val"), n.args[0] if n.args else None
            sv = src.meta.get("val") if isinstance(src, torch.fx.Node) else None
            if not isinstance(v, (list, tuple)) or not isinstance(sv, torch.Tensor):
                continue
            d = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
            size = sv.shape[d % sv.dim()]
            if isinstance(size, torch.SymInt):
                self.cur = n
                self._check_condition(sympy, sympy.Eq(size.node.expr.xreplace(self.sym_alias), len(v)), n,
                                      f"the model takes {len(v)} results of an unbind over a dim of size "
                                      f"{self.sym_text(size.node.expr)} (`list(x)`, `for t in x`, x.unbind()): "
                                      f"torch.export traced it for")
        self.cur = None

    def _check_condition(self, sympy, expr, src, what):
        """expr (a sympy condition over the program's symbols) must hold at every declared size: else the
        build fails naming it, a size that breaks it and src's source line, with what parts.py splits on."""
        # the part's conditions (parts.py: a region of the declared box, e.g. S_ids <= S_mask) bound to this
        # program's symbols: points outside the part are not the traced program's to answer for
        conds = [c for c in self.part_conditions() if c is not True]
        if any(c is False for c in conds):
            return
        syms = sorted(expr.free_symbols.union(*(c.free_symbols for c in conds)), key=str)
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
        pts = _grid(bounds)
        ok = _holds(sympy, syms, expr, pts)
        for c in conds:
            ok |= ~_holds(sympy, syms, c, pts)
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
            self.fail(f"{what} {expr.xreplace(names)}, which does not hold at {at} (declared {rng_txt}); at such sizes "
                      f"the traced program may compute something else than the model. {fix}", code="range",
                      narrowed=self._assert_split(sympy, expr, syms, bounds))

    def part_conditions(self):
        """The part's conditions (self.part_conds, over parts' input-dim placeholders) over this program's
        symbols: True/False where one is decided by the sizes this program fixes."""
        out = []
        for c in self.part_conds:
            sub = {dim_symbol(i, d): e for (i, d), e in self.dim_exprs.items()}
            c = c.xreplace(sub)
            out.append(True if c == True else False if c == False else c)  # noqa: E712 - sympy's booleans
        return out

    def _assert_split(self, sympy, expr, syms, bounds):
        """What parts.py splits a failed assert's part on: for a condition over one symbol, the intervals of
        its range where it holds; and the condition itself over input-dim placeholders (for several symbols, or
        one whose intervals are many: x % 4 == 0)."""
        free = sorted(expr.free_symbols, key=str)
        sym = free[0]
        lo, hi = bounds[syms.index(sym)]
        info = dict(sym_name=self.sym_names[sym], inputs=self.sym_inputs.get(sym, ()), declared=(lo, hi),
                    why=f"the model's code branches on {self.sym_text(expr)}")
        if len(free) == 1 and hi - lo < 2_000_000:
            vals = np.arange(lo, hi + 1, dtype=np.int64)
            info["holds"] = _intervals(vals, _holds(sympy, [sym], expr, [vals]))
        if all(self.sym_inputs.get(s) for s in free):
            rel = expr.xreplace({s: dim_symbol(*self.sym_inputs[s][0]) for s in free})
            info.update(relation=rel, condition=self.sym_text(expr),
                        sym_name=", ".join(self.sym_names[s] for s in free))
        return info

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
