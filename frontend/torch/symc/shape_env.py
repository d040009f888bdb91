"""torch's ShapeEnv watched while torch.export or run_decompositions runs: where each guard came from.

Approach: record_guard_sources patches ShapeEnv.guard_or_defer_runtime_assert and ShapeEnv.evaluate_expr
(and, while sizes are forced, SymInt's comparisons) for the length of a with block, and notes by the text
of each condition whether Python code branched on a size ("code") or an op's metadata computation did
("dispatch"), which symbols Python code branched on, and the branches torch decided statically by
assuming sizes are never 0 or 1. That record is module state, kept here: api.py and backend.py save,
clear and restore it (guard_state, set_guard_state), force sizes for a second trace (forcing_small) and
drop the branches that do not change the program (drop_small_size_branches); the tracer's checks read it
(guard_source, code_guarded, small_guarded). Nothing else touches the state itself.
"""
import contextlib
import os

import torch


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


def guard_source(expr):
    """Where the runtime assert of condition expr came from: "dispatch", "code", or None where none was
    recorded (GUARD_SOURCES)."""
    return GUARD_SOURCES.get(str(expr))


def code_guarded(name=None):
    """Whether Python code branched on the symbol called name through a plain guard (CODE_GUARDED; "*"
    counts for every symbol); with no name, whether it branched on any."""
    if name is None:
        return bool(CODE_GUARDED)
    return name in CODE_GUARDED or "*" in CODE_GUARDED


def code_guard_every_symbol():
    """Where Python code branched on any size so far, counts every symbol as branched on (an export under
    other symbol names, which the recorded ones do not name)."""
    if CODE_GUARDED:
        CODE_GUARDED.add("*")


def small_size_branches():
    """A copy of SMALL_GUARDED: [(condition, ShapeEnv, symbols, size)] as recorded."""
    return list(SMALL_GUARDED)


def drop_small_size_branches(pred):
    """Removes from SMALL_GUARDED the entries for which pred(entry) holds."""
    SMALL_GUARDED[:] = [t for t in SMALL_GUARDED if not pred(t)]


@contextlib.contextmanager
def forcing_small(sizes):
    """While in the block, record_guard_sources answers the conditions over the input sizes named in sizes
    ({source name: size}) as at that size (FORCE_SMALL); cleared on the way out."""
    FORCE_SMALL.update(sizes)
    try:
        yield
    finally:
        FORCE_SMALL.clear()


def shape_env_of(ep):
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
    penv = shape_env_of(ep)
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
