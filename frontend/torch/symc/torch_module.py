"""EngineModule: the torch.nn.Module that symc.compile returns, running an engine on torch tensors.

Approach: per call it picks the backend from where the inputs live (all CUDA tensors -> the CUDA
backend on torch's current stream, zero-copy via data_ptr(); otherwise the CPU reference backend on
CPU tensors) and runs a runtime.Context on them, which allocates the outputs with torch.empty. One
context per backend per module, created lazily and guarded by a lock. This is the only runtime file
that needs torch: symc.Session and runtime.Engine/Context need numpy alone.
"""
import functools
import os
import threading

import torch

from . import _lib
from ._lib import SymcError
from .runtime import Context, Engine

# torch dtypes by their symc_dtype's name (the values come from the library: _lib)
_TORCH_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
                 "I64": torch.int64, "I32": torch.int32, "BOOL": torch.bool}


@functools.cache
def torch_dtypes():
    """symc_dtype value -> torch dtype."""
    return {getattr(_lib, name): t for name, t in _TORCH_DTYPES.items()}


class EngineModule(torch.nn.Module):
    """Runs a compiled engine. Call it with the model's tensor inputs, in order.

    out_unflatten, if given, rebuilds the model's output structure from the flat
    list of outputs (e.g. a pytree spec's unflatten)."""

    def __init__(self, engine_path, input_names=None, out_unflatten=None, gpu=False, source=None):
        super().__init__()
        self.engine = Engine(engine_path)
        self.engine_path = str(engine_path)
        self.gpu = gpu
        self.source = source
        self._out_unflatten = out_unflatten
        self._ctx = {}
        self._lock = threading.Lock()

    def save(self, path):
        """Writes the engine to path (a .symx that `symc run` and symc.load read) and, next to it,
        path + ".json" with what the Python side adds: the input names and the output structure."""
        import json
        import shutil
        import torch.utils._pytree as pytree
        if not os.path.exists(self.engine_path):
            raise SymcError(f"the engine file {self.engine_path} is gone (removed from the cache?); compile the "
                            f"model again to save it", code="io")
        path = str(path)
        if os.path.abspath(path) != os.path.abspath(self.engine_path):
            shutil.copyfile(self.engine_path, path)
        spec = getattr(self, "out_spec", None)
        import hashlib
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        meta = {"format": "symc-torch-2", "engine_sha256": h.hexdigest(), "source": self.source, "gpu": bool(self.gpu),
                "input_names": list(getattr(self, "input_names", None) or [n for n, _, _ in self.engine.inputs]),
                "out_spec": pytree.treespec_dumps(spec) if spec is not None else None}
        with open(path + ".json", "w") as f:
            json.dump(meta, f)
        return path

    def extra_repr(self):
        syms = ", ".join(f"{n} in [{lo}, {hi}] opt {o}" for n, lo, o, hi, _ in self.engine.symbols)
        return f"engine={self.engine_path!r}, symbols: {syms or 'none'}"

    def _context(self, backend, device=0):
        """one context per backend and GPU (inputs on cuda:k run on GPU k)"""
        c = self._ctx.get((backend, device))
        if c is None:
            c = Context(self.engine, backend, device)
            self._ctx[(backend, device)] = c
        return c

    def forward(self, *args):
        ins = self.engine.inputs
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if len(tensors) != len(ins):
            raise SymcError(f"the engine takes {len(ins)} tensor input(s) ({', '.join(n for n, _, _ in ins)}), "
                            f"got {len(tensors)}", code="invalid_arg")
        prepared = []
        for (name, dt, rank), t in zip(ins, tensors):
            want = torch_dtypes()[dt]
            if t.dtype != want:
                raise SymcError(f"input '{name}' has dtype {t.dtype}; the engine takes {want}", code="invalid_arg")
            if t.dim() != rank:
                raise SymcError(f"input '{name}' has rank {t.dim()} (shape {tuple(t.shape)}); the engine takes "
                                f"rank {rank}", code="invalid_arg")
            prepared.append(t.contiguous())
        on_cuda = [t.is_cuda for t in prepared]
        if prepared and all(on_cuda):
            if not self.gpu:
                raise SymcError("inputs are CUDA tensors but this engine was compiled without GPU code "
                                "(torch.cuda was not available at compile time); pass CPU tensors", code="device")
            dev = prepared[0].device
            if any(t.device != dev for t in prepared):
                raise SymcError("inputs are on different CUDA devices", code="invalid_arg")
            with torch.cuda.device(dev), self._lock:
                stream = torch.cuda.current_stream(dev).cuda_stream
                outs = self._context(_lib.BACKEND_CUDA, dev.index or 0).run(prepared, stream)
        elif any(on_cuda):
            raise SymcError("inputs mix CUDA and CPU tensors", code="invalid_arg")
        else:
            with self._lock:
                outs = self._context(_lib.BACKEND_REF).run(prepared)
        if self._out_unflatten is not None:
            return self._out_unflatten(outs)
        return outs[0] if len(outs) == 1 else tuple(outs)
