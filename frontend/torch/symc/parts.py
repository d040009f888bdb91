"""One engine for declared ranges over which the model traces to several programs: a region per part.

Approach: torch.export traces one program, valid only where the sizes take the branches the trace took. When
the tracer finds the program valid on part of a declared range only (checks.RangeNarrowed: torch narrowed a
symbol's range, Python code branched on a size torch assumed never 0 or 1, or a runtime assert of a size branch
fails somewhere in the ranges), the declared box is split instead of refused. A part is {(input, dim): (lo, hi)}
over every declared dynamic dim, plus conditions (sympy relations over checks.dim_symbol placeholders, one per
input dim: each export names its symbols anew) for what a box cannot say (S_ids <= S_mask). A worklist starts
with the declared box. Each part is exported once, at an example inside it (per dim clamp(opt, lo, hi), not 0 or
1 where the part reaches 2, as Input.trace_shape; a dim the part fixes to one size is exported static, which is
how B = 1 is traced; a search over a few values per dim where conditions must hold), and traced. On
RangeNarrowed the part splits: where the program holds, traced again from the same export with the narrowed
ranges (no new export), and the rest pushed to the worklist, each piece exported at an example of its own. A
condition over several symbols splits into the condition and its negation. Each accepted part was checked as a
whole engine is (check_assert over its ranges and conditions, check_lowering). At most MAX_PARTS parts; past
that, or where a part cannot be split or its export fails, the first narrowing's message says which parts were
traced and which failed. Nothing is narrowed silently: the parts cover the declared box, which the compile
driver checks again (symc_compile_regions). One part is today's single-graph engine, byte for byte; several
become one engine with a region each (builder.compile_regions), each region's outputs named alike.
"""
import itertools

import torch

from ._lib import SymcError
from .checks import RangeNarrowed, dim_symbol
from .shape_env import guard_state, set_guard_state
from .tracer import Tracer

MAX_PARTS = 8


class Part:
    """box: {(input, dim): (lo, hi)} for every declared dynamic dim; conds: sympy relations over
    checks.dim_symbol placeholders that hold in the part (besides the box)."""

    def __init__(self, box, conds=()):
        self.box, self.conds = dict(box), tuple(conds)

    def narrowed(self, dims, lo, hi):
        box = dict(self.box)
        for k in dims:
            if k in box:
                box[k] = (max(box[k][0], lo), min(box[k][1], hi))
        return Part(box, self.conds)

    def with_cond(self, c):
        return Part(self.box, self.conds + (c,))

    def empty(self):
        return any(lo > hi for lo, hi in self.box.values())

    def describe(self, decl):
        """"x_dim0 = 1", "S in [2, 64] and x_dim1 <= mask_dim1": the dims the part narrows (each symbol once),
        and its conditions, in the declared names."""
        out, seen = [], set()
        for k, (lo, hi) in sorted(self.box.items()):
            nm = decl.names.get(k, f"input {k[0]} dim {k[1]}")
            if (lo, hi) == decl.ranges.get(k) or nm in seen:
                continue
            seen.add(nm)
            out.append(f"{nm} = {lo}" if lo == hi else f"{nm} in [{lo}, {hi}]")
        for c in self.conds:
            try:
                out.append(cond_text(c, {dim_symbol(*k): nm for k, nm in decl.names.items()}))
            except SymcError:
                out.append(str(c))
        return " and ".join(out) or "the declared ranges"


def cond_text(expr, names):
    """A relation (or an And of them) as symc_compile_regions reads it: "A <= B and A % 8 == 0", the sides in
    sym_parse's syntax, symbols by names ({sympy symbol: name})."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv
    ops = {sympy.Le: "<=", sympy.Lt: "<", sympy.Ge: ">=", sympy.Gt: ">", sympy.Eq: "==", sympy.Ne: "!="}

    def side(e):
        if e in names:
            return names[e]
        if e.is_Integer:
            return str(int(e))
        fn = getattr(e.func, "__name__", "")
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(side(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            return "(" + "*".join(side(a) for a in e.args) + ")"
        if isinstance(e, FloorDiv):
            return f"({side(e.args[0])} // {side(e.args[1])})"
        if isinstance(e, sympy.Mod) or fn in ("PythonMod", "Mod"):
            return f"({side(e.args[0])} % {side(e.args[1])})"
        if fn in ("Max", "Min"):
            out = side(e.args[0])
            for a in e.args[1:]:
                out = f"{fn.lower()}({out}, {side(a)})"
            return out
        raise SymcError(f"the size condition {e} has no symc form", code="unsupported")
    if isinstance(expr, sympy.And):
        return " and ".join(cond_text(a, names) for a in expr.args)
    op = next((t for cls, t in ops.items() if isinstance(expr, cls)), None)
    if op is None:
        raise SymcError(f"the size condition {expr} is not a relation symc can guard on", code="unsupported")
    return f"{side(expr.lhs)} {op} {side(expr.rhs)}"


def _negate(rel):
    """The negation of a relation as a relation (Le -> Gt), None where it is none (an And becomes an Or)."""
    import sympy
    n = sympy.Not(rel)
    return n if isinstance(n, sympy.core.relational.Relational) else None


def _satisfied(conds, vals):
    sub = {dim_symbol(*k): v for k, v in vals.items()}
    return all(bool(c.xreplace(sub)) for c in conds)


class _Empty(Exception):
    """No size of the part satisfies its conditions (checked exhaustively): the part holds no point."""


def _example_sizes(decl, part):
    """{(input, dim): size} for the part's example: clamp(opt, lo, hi), 2 for a 0/1 where the part reaches 2
    (Input.trace_shape's rule; torch.export specializes a dim it sees at 0 or 1). Where the part's conditions
    must hold, the nearest such sizes (dims of one name kept equal): all of the conditions' dims tried where
    there are at most 200k points (none: _Empty), else a few sizes per dim (none: None)."""
    import numpy as np
    import sympy
    vals = {}
    for k, (lo, hi) in part.box.items():
        v = min(max(decl.opts[k], lo), hi)
        vals[k] = 2 if lo != hi and v <= 1 and hi >= 2 else v
    if not part.conds or _satisfied(part.conds, vals):
        return vals
    used = set().union(*(c.free_symbols for c in part.conds))
    groups = {}
    for k in part.box:
        if dim_symbol(*k) in used:
            groups.setdefault(decl.names.get(k, k), []).append(k)
    keys = list(groups.values())
    total = 1
    for g in keys:
        total *= part.box[g[0]][1] - part.box[g[0]][0] + 1
    if total <= 200_000:
        grids = np.meshgrid(*[np.arange(part.box[g[0]][0], part.box[g[0]][1] + 1) for g in keys], indexing="ij")
        pts = [x.ravel() for x in grids]
        ok = np.ones(pts[0].shape, dtype=bool)
        for c in part.conds:
            c = c.xreplace({dim_symbol(*k): sympy.Symbol(f"_g{j}") for j, g in enumerate(keys) for k in g})
            f = sympy.lambdify([sympy.Symbol(f"_g{j}") for j in range(len(keys))], c, "numpy")
            ok &= np.broadcast_to(np.asarray(f(*pts), dtype=bool), ok.shape)
        if not ok.any():
            raise _Empty()
        cost = sum(np.abs(p - vals[g[0]]) + 1_000_000 * ((p <= 1) & (part.box[g[0]][1] >= 2) &
                                                         (part.box[g[0]][0] != part.box[g[0]][1]))
                   for p, g in zip(pts, keys))
        j = int(np.argmin(np.where(ok, cost, np.iinfo(np.int64).max)))
        return {**vals, **{k: int(p[j]) for p, g in zip(pts, keys) for k in g}}

    def candidates(k):
        lo, hi = part.box[k]
        o = vals[k]
        cs = sorted({o, lo, hi, lo + 1, hi - 1, (lo + hi) // 2, o - 1, o + 1}, key=lambda v: (abs(v - o), v))
        return [v for v in cs if lo <= v <= hi and (lo == hi or v >= 2 or hi < 2)]
    for combo in itertools.product(*[candidates(g[0]) for g in keys]):
        trial = {**vals, **{k: v for g, v in zip(keys, combo) for k in g}}
        if _satisfied(part.conds, trial):
            return trial
    return None


def _tightened(decl, part):
    """The part with each dim its conditions name narrowed to the sizes where they hold (all points tried where
    there are at most 200k), so that a dim they fix is exported static (x_dim1 = 2 where x_dim1 > mask_dim1
    and x_dim1 <= 2); _Empty where no point satisfies them."""
    import numpy as np
    import sympy
    used = set().union(*(c.free_symbols for c in part.conds)) if part.conds else set()
    groups = {}
    for k in sorted(part.box):
        if dim_symbol(*k) in used:
            groups.setdefault(decl.names.get(k, k), []).append(k)
    keys = list(groups.values())
    total = 1
    for g in keys:
        total *= part.box[g[0]][1] - part.box[g[0]][0] + 1
    if not keys or total > 200_000:
        return part
    grids = np.meshgrid(*[np.arange(part.box[g[0]][0], part.box[g[0]][1] + 1) for g in keys], indexing="ij")
    pts = [x.ravel() for x in grids]
    gs = [sympy.Symbol(f"_g{j}") for j in range(len(keys))]
    ok = np.ones(pts[0].shape, dtype=bool)
    for c in part.conds:
        c = c.xreplace({dim_symbol(*k): gs[j] for j, g in enumerate(keys) for k in g})
        if c.free_symbols - set(gs):
            return part  # over a dim the box has no range for
        ok &= np.broadcast_to(np.asarray(sympy.lambdify(gs, c, "numpy")(*pts), dtype=bool), ok.shape)
    if not ok.any():
        raise _Empty()
    box = dict(part.box)
    for p, g in zip(pts, keys):
        for k in g:
            box[k] = (int(p[ok].min()), int(p[ok].max()))
    return Part(box, part.conds)


def _nonempty(decl, parts_):
    """The parts that hold a point (a part whose conditions no size satisfies is dropped: it covers nothing),
    tightened to their conditions (_tightened)."""
    out = []
    for p in parts_:
        if p.empty():
            continue
        try:
            out.append(_tightened(decl, p))
        except _Empty:
            continue
    return out


def _export_part(model, decl, part, export_ranges):
    """(ExportedProgram, guard state after its export) of the part: static where it fixes a dim's size."""
    try:
        sizes = _example_sizes(decl, part)
    except _Empty:
        sizes = None
    if sizes is None:
        raise SymcError("no example size found inside the part", code="range")
    examples, dyn = [], []
    for i, spec in enumerate(decl.specs):
        shape = tuple(sizes.get((i, d), o) for d, o in enumerate(spec.opt_shape))
        if spec.dtype.is_floating_point:
            examples.append(torch.randn(shape, dtype=spec.dtype, device=decl.device))
        else:
            examples.append(torch.zeros(shape, dtype=spec.dtype, device=decl.device))
        ds = {d: (decl.names[(i, d)], lo, hi) for d in range(len(shape)) if (i, d) in part.box
              for lo, hi in [part.box[(i, d)]] if lo != hi}
        dyn.append(ds or None)
    ep = export_ranges(model, tuple(examples), dyn)
    return ep, guard_state()


def _split(decl, part, e):
    """(pieces the traced program holds on, the rest) of part by e (a RangeNarrowed); None where e cannot split
    it (no intervals or relation, or no progress). The dims narrowed are the symbol's and every dim declared
    under the same name (one dim, even where an export gave them symbols of their own)."""
    if e.relation is not None and (e.holds is None or len(e.holds) > 2):
        # a relation between dims, or a condition on one that intervals would cut into many parts (x % 4 == 0):
        # the condition and its negation
        neg = _negate(e.relation)
        if neg is None:
            return None
        return [part.with_cond(e.relation)], [part.with_cond(neg)]
    if e.holds is None or e.declared is None or not e.inputs:
        return None
    same = {decl.names[k] for k in e.inputs if k in decl.names}
    dims = set(e.inputs) | {k for k, nm in decl.names.items() if nm in same}
    lo, hi = e.declared
    holds = [(max(a, lo), min(b, hi)) for a, b in e.holds if max(a, lo) <= min(b, hi)]
    rest, at = [], lo
    for a, b in holds:
        if at < a:
            rest.append((at, a - 1))
        at = b + 1
    if at <= hi:
        rest.append((at, hi))
    if not holds or (len(holds) == 1 and holds[0] == (lo, hi)):
        return None
    return [part.narrowed(dims, a, b) for a, b in holds], [part.narrowed(dims, a, b) for a, b in rest]


def _failure(first, done, decl, failing, reason):
    traced = "; ".join(p.describe(decl) for p, _ in done) or "none"
    return SymcError(f"{first} (symc traces each part of the declared ranges where the model's program differs "
                     f"and builds one engine with a region per part, at most {MAX_PARTS}: compiled parts: "
                     f"{traced}; failing part: {failing.describe(decl)}: {reason})", code="range")


def trace_parts(model, decl, name, export_ranges, export_error):
    """[(Part, Tracer run without finish)] covering the declared box (decl: api._declared). export_ranges is
    api.export_ranges; export_error(e) the SymcError of a failed first export."""
    work, done, first = [Part(decl.ranges)], [], None
    while work:
        part = work.pop(0)
        try:
            ep, state = _export_part(model, decl, part, export_ranges)
        except Exception as e:  # noqa: BLE001 - torch.export's own errors
            if first is None:
                if isinstance(e, SymcError):
                    raise
                raise export_error(e) from e
            raise _failure(first, done, decl, part, f"torch.export failed there: {type(e).__name__}: "
                                                    f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}") \
                from e
        pending, dep = [part], None
        while pending:
            p = pending.pop(0)
            set_guard_state(state)
            # the pieces of one export share its decomposition (and the guards it recorded)
            tr = Tracer(ep, name, input_opts=decl.opts, dim_names=decl.names, input_ranges=p.box,
                        multiples=decl.mults, multiple_hints=True, part_conds=p.conds, unify_names=True,
                        decomposed=dep)
            if dep is None:
                dep, state = tr.ep, guard_state()
            try:
                tr.run(finish=False)
            except RangeNarrowed as e:
                first = first or e
                pieces = _split(decl, p, e)
                if pieces is None:
                    if len(done) + len(work) == 0 and p is part and first is e:
                        raise  # nothing to split: today's refusal as it was
                    raise _failure(first, done, decl, p, f"{e}") from e
                holds, rest = pieces
                pending[:0] = _nonempty(decl, holds)
                work.extend(_nonempty(decl, rest))
                if len(done) + len(pending) + len(work) > MAX_PARTS:
                    raise _failure(first, done, decl, (pending + work)[0],
                                   f"more than {MAX_PARTS} parts (the model branches on sizes too often for one "
                                   f"engine: declare smaller ranges)") from e
                continue
            done.append((p, tr))
    return done


def _symbol_names(tr):
    """{placeholder: the program's symbol name or its fixed size} for tr's input dims."""
    import sympy
    out = {}
    for k, e in tr.dim_exprs.items():
        if e.is_Integer:
            out[dim_symbol(*k)] = sympy.Integer(e)
        elif e in tr.sym_names:
            out[dim_symbol(*k)] = sympy.Symbol(tr.sym_names[e])
    return out


def finish_parts(done):
    """[(module, condition text or None)] of traced parts, each module's outputs named alike where there are
    several (the regions of one engine have the same outputs)."""
    if len(done) == 1:
        return [(done[0][1].finish(), None)]
    n_out = len(done[0][1].ep.graph_signature.output_specs)
    names, k = [], 0
    while len(names) < n_out:
        nm = f"output_{k}"
        k += 1
        if not any(nm in tr.name_count for _, tr in done):
            names.append(nm)
    out = []
    for p, tr in done:
        m = tr.finish(names)
        texts = []
        sub = _symbol_names(tr)
        for c in p.conds:
            c = c.xreplace(sub)
            if c == True:  # noqa: E712 - sympy's true: fixed sizes decide it here
                continue
            texts.append(cond_text(c, {s: str(s) for s in c.free_symbols}))
        out.append((m, " and ".join(texts) or None))
    return out


def describe_parts(done, decl):
    return [p.describe(decl) for p, _ in done]
