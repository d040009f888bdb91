"""symc.compile and symc.Input: the first two approaches of the Torch-TensorRT
dynamic-shape tutorial, and the engine build shared with the dynamo backend.

Approach: (1) an nn.Module with symc.Input specs is exported with
torch.export, one Dim(min, max) per dim whose min and max differ, with example
inputs at opt_shape; (2) an ExportedProgram is taken as it is, its
range_constraints giving the ranges. Either way the program is lowered by
tracer.Tracer, compiled with symc_module_compile (GPU code when torch.cuda is
available) into a cache directory (SYMC_CACHE_DIR, else a temp dir), and
wrapped in runtime.EngineModule, which rebuilds the program's output pytree.
"""
import inspect
import itertools
import os
import re
import tempfile

import torch
import torch.utils._pytree as pytree

from . import _lib
from ._lib import SymcError
from .runtime import EngineModule
from .tracer import CODE_GUARDED, GUARD_SOURCES, Tracer, record_guard_sources

_counter = itertools.count()
_cache_dir = None


class Input:
    """One model input: a static `shape`, or min_shape/opt_shape/max_shape (opt defaults to min).
    dim_names optionally names the dynamic dims ({0: "B"}); the name shows in range errors."""

    def __init__(self, min_shape=None, opt_shape=None, max_shape=None, dtype=torch.float32, shape=None,
                 dim_names=None, name=None):
        if shape is not None:
            min_shape = opt_shape = max_shape = shape
        if min_shape is None or max_shape is None:
            raise SymcError("symc.Input needs shape=, or min_shape= and max_shape= (opt_shape= optional)",
                            code="invalid_arg")
        opt_shape = min_shape if opt_shape is None else opt_shape
        self.min_shape, self.opt_shape, self.max_shape = tuple(min_shape), tuple(opt_shape), tuple(max_shape)
        if not (len(self.min_shape) == len(self.opt_shape) == len(self.max_shape)):
            raise SymcError(f"symc.Input: min/opt/max shapes {self.min_shape}/{self.opt_shape}/{self.max_shape} "
                            "differ in rank", code="invalid_arg")
        for lo, o, hi in zip(self.min_shape, self.opt_shape, self.max_shape):
            if not (0 <= lo <= o <= hi):
                raise SymcError(f"symc.Input: need min <= opt <= max per dim, got {self.min_shape}/"
                                f"{self.opt_shape}/{self.max_shape}", code="range")
        self.dtype = dtype
        self.dim_names = dict(dim_names or {})
        self.name = name

    def __repr__(self):
        return f"symc.Input(min_shape={self.min_shape}, opt_shape={self.opt_shape}, max_shape={self.max_shape}, " \
               f"dtype={self.dtype})"

    def trace_shape(self):
        """The example's shape for torch.export: opt, except that a dynamic dim whose opt is 0 or 1 is traced
        at 2 (torch.export specializes a dim it sees at 0 or 1 to that constant; the program it makes at 2
        holds for 0 and 1 too, which symc's own shape inference checks over the whole declared range)."""
        return tuple(2 if lo != hi and o <= 1 and hi >= 2 else o
                     for lo, o, hi in zip(self.min_shape, self.opt_shape, self.max_shape))

    def example(self, device):
        if self.dtype.is_floating_point:
            return torch.randn(self.trace_shape(), dtype=self.dtype, device=device)
        return torch.zeros(self.trace_shape(), dtype=self.dtype, device=device)


def cache_dir():
    global _cache_dir
    d = os.environ.get("SYMC_CACHE_DIR")
    if d:
        os.makedirs(d, exist_ok=True)
        return d
    if _cache_dir is None:
        _cache_dir = tempfile.mkdtemp(prefix="symc_")
    return _cache_dir


def gpu_available():
    try:
        return torch.cuda.is_available()
    except Exception:
        return False


def build_engine(ep, name="model", gpu=None, input_opts=None, dim_names=None, ranges=None, precision=None,
                 input_ranges=None, fp32_layers=None):
    """Lower an ExportedProgram and compile it; returns an EngineModule."""
    if gpu is None:
        gpu = gpu_available()
    tr = Tracer(ep, name, input_opts=input_opts, dim_names=dim_names, ranges=ranges, input_ranges=input_ranges)
    m = tr.run()
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]  # a file name, whatever the model's name holds
    path = os.path.join(cache_dir(), f"{tr.m.h.value:x}_{os.getpid()}_{next(_counter)}_{safe}.symx")
    if os.environ.get("SYMC_SAVE_SYMIR"):
        m.save(path[:-5] + ".symir")
    m.compile(path, gpu=gpu, precision=precision, fp32_layers=fp32_layers)
    m.close()
    spec = tr.ep.call_spec.out_spec

    def unflatten(outs):
        return pytree.tree_unflatten(list(outs), spec) if spec is not None else \
            (outs[0] if len(outs) == 1 else tuple(outs))
    mod = EngineModule(path, tr.input_names, unflatten, gpu=gpu, source=name)
    mod.input_names = tr.input_names
    return mod


def _arg_names(model, n):
    try:
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params][:n]
    except (TypeError, ValueError):
        names = []
    return names + [f"input{i}" for i in range(len(names), n)]


def compile(model, inputs=None, example_inputs=None, *, gpu=None, precision="fp32", name=None, fp32_layers=None):
    """Compile for dimension ranges; returns a torch.nn.Module running the symc engine.

    precision "fp16"/"bf16": weights and activations stored in half (the precision pass; inputs and
    outputs keep the model's dtypes), fp32 islands per the target, fp32_layers (node/op names) and,
    for fp16, the range calibration. A model.half() or model.to(torch.bfloat16) compiles as it is.

    symc.compile(model, inputs=[symc.Input(min_shape=, opt_shape=, max_shape=, dtype=)])
    symc.compile(exported_program, example_inputs)   # honours the program's range_constraints
    """
    # "fp16" -> SYMC_PRECISION_FP16, from the library's table
    table = sorted(_lib.constants().items(), key=lambda kv: kv[1])
    precisions = {k[len("SYMC_PRECISION_"):].lower(): v for k, v in table if k.startswith("SYMC_PRECISION_")}
    prec = precisions.get(precision) if isinstance(precision, str) else None
    if prec is None:
        names = [f"'{p}'" for p in precisions]
        raise SymcError(f"precision {precision!r}: use {', '.join(names[:-1])} or {names[-1]}", code="invalid_arg")
    if isinstance(model, torch.export.ExportedProgram):
        ep = model
        ex = example_inputs if example_inputs is not None else inputs
        opts = {}
        if ex is not None and all(isinstance(t, torch.Tensor) for t in pytree.tree_leaves(ex)):
            for i, t in enumerate(pytree.tree_leaves(ex)):
                for d, s in enumerate(t.shape):
                    opts[(i, d)] = int(s)
        elif ex is not None:
            for i, t in enumerate(ex):
                if isinstance(t, Input):
                    for d, s in enumerate(t.opt_shape):
                        opts[(i, d)] = s
        return build_engine(ep, name or "exported", gpu, input_opts=opts, precision=prec, fp32_layers=fp32_layers)
    if not isinstance(model, torch.nn.Module):
        raise SymcError(f"symc.compile takes an nn.Module or a torch.export.ExportedProgram, not "
                        f"{type(model).__name__}", code="invalid_arg")
    if inputs is None:
        raise SymcError("symc.compile(model, inputs=[symc.Input(...)]): inputs are required for an nn.Module "
                        "(or export it yourself and pass the ExportedProgram)", code="invalid_arg")
    inputs = list(inputs)
    device = next(itertools.chain((p.device for p in model.parameters()), (b.device for b in model.buffers()),
                                  [torch.device("cpu")]))
    examples, dyn, opts, names, ranges = [], [], {}, {}, {}
    arg_names = _arg_names(model, len(inputs))
    for i, spec in enumerate(inputs):
        if isinstance(spec, torch.Tensor):
            spec = Input(shape=tuple(spec.shape), dtype=spec.dtype)
        if not isinstance(spec, Input):
            raise SymcError(f"inputs[{i}] is a {type(spec).__name__}; give symc.Input or a tensor", code="invalid_arg")
        examples.append(spec.example(device))
        ds = {}
        base = spec.name or arg_names[i]
        for d, (lo, o, hi) in enumerate(zip(spec.min_shape, spec.opt_shape, spec.max_shape)):
            opts[(i, d)] = o
            if lo != hi:
                nm = spec.dim_names.get(d, f"{base}_dim{d}")
                names[(i, d)] = nm
                ds[d] = (nm, lo, hi)
                ranges[(i, d)] = (lo, hi)
        dyn.append(ds or None)
    was_training = model.training
    model.eval()
    try:
        ep = export_ranges(model, tuple(examples), dyn)
    finally:
        model.train(was_training)
    return build_engine(ep, name or type(model).__name__, gpu, input_opts=opts, dim_names=names, precision=prec,
                        input_ranges=ranges, fp32_layers=fp32_layers)


def _export(model, args, dynamic_shapes):
    """torch.export.export with torch's shape guards turned into runtime asserts (which the tracer drops)
    instead of narrowing the declared ranges."""
    try:
        with record_guard_sources():
            return torch.export.export(model, args, dynamic_shapes=dynamic_shapes,
                                       prefer_deferred_runtime_asserts_over_guards=True)
    except TypeError as e:  # a torch without the flag
        if "prefer_deferred_runtime_asserts_over_guards" not in str(e):
            raise
        return torch.export.export(model, args, dynamic_shapes=dynamic_shapes)


def export_ranges(model, args, dims):
    """torch.export for declared ranges, without letting torch's guards narrow them.

    dims: per positional arg, None or {dim: (name, lo, hi)}. First one named Dim(min, max) per dim, with
    guards turned into runtime asserts (symc ignores those: it infers every shape itself over the whole
    declared range, and its compile fails with a clear error where a declared size is really invalid).
    Where torch still raises a constraint violation (dims it finds equal, say), export again with
    Dim.AUTO(min, max), which takes torch's relations as they come; the caller hands the declared ranges
    to the tracer (input_ranges), which puts them back on the program's symbols."""
    named = tuple(None if ds is None else {d: torch.export.Dim(nm, min=lo, max=hi) for d, (nm, lo, hi) in ds.items()}
                  for ds in dims)
    # guard sources are per model: torch reuses symbol names (s77) from one export to the next
    GUARD_SOURCES.clear()
    CODE_GUARDED.clear()
    try:
        return _export(model, args, named)
    except Exception as e:  # noqa: BLE001
        first = e
        if "onstraint" not in str(e) and "specialized" not in str(e) and "must always be equal" not in str(e):
            raise
    auto = getattr(torch.export.Dim, "AUTO", None)
    if auto is None:
        raise first
    loose = tuple(None if ds is None else {d: auto(min=lo, max=hi) for d, (nm, lo, hi) in ds.items()} for ds in dims)
    if CODE_GUARDED:
        # the first trace saw Python code branch on sizes, under symbol names the retry does not share:
        # no 0/1 narrowing of the retry can be taken for torch's assumption alone (Tracer._check_traced_range)
        CODE_GUARDED.add("*")
    try:
        ep = _export(model, args, loose)
    except Exception as e:  # noqa: BLE001
        raise first from e
    # a declared dynamic dim that torch specialized to a constant would make a static engine
    user = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in ep.graph_signature.user_inputs]
    for i, (ds, ph) in enumerate(zip(dims, user)):
        v = ph.meta.get("val")
        for d, (nm, lo, hi) in (ds or {}).items():
            if isinstance(v, torch.Tensor) and not isinstance(v.shape[d], torch.SymInt):
                raise SymcError(f"torch.export specialized input {i} dim {d} ({nm}) to {v.shape[d]}, but it is "
                                f"declared dynamic in [{lo}, {hi}]: the model's code fixes that size (first "
                                f"error: {first})", code="range") from first
    return ep
