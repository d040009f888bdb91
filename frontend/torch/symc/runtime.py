"""Engine and context wrappers, and the torch.nn.Module that runs an engine.

Approach: `Engine` owns a symrt_engine loaded from a .symx file and lists its
inputs, outputs and symbols. `EngineModule` is the callable that symc.compile
returns: per call it picks the backend from where the inputs live (all CUDA
tensors -> the CUDA backend on torch's current stream, zero-copy via
data_ptr(); otherwise the CPU reference backend on CPU tensors), sets every
input shape (symrt checks the declared ranges and reports e.g. "input 'x' dim
0 = 33: symbol B must be in [1, 32]", raised here as SymcError), asks symrt for
the output shapes, allocates outputs with torch.empty and enqueues. One
context per backend per module, created lazily and guarded by a lock.
"""
import ctypes
import functools
import os
import threading

import torch

from . import _lib
from ._lib import SymcError, check

# torch dtypes by their symc_dtype's name (the values come from the library: _lib)
_TORCH_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": torch.float64,
                 "I64": torch.int64, "I32": torch.int32, "BOOL": torch.bool}


@functools.cache
def _torch_dtypes():
    """symc_dtype value -> torch dtype."""
    return {getattr(_lib, name): t for name, t in _TORCH_DTYPES.items()}


class Engine:
    """A loaded .symx engine."""

    def __init__(self, path):
        L = _lib.lib()
        self.path = str(path)
        err = _lib.Error()
        h = ctypes.c_void_p()
        check(L.symrt_engine_load_file(self.path.encode(), ctypes.byref(h), ctypes.byref(err)), err,
              f"loading engine {self.path}")
        self._h = h
        self._L = L
        self.inputs = self._io(L.symrt_engine_num_inputs, L.symrt_engine_input)
        self.outputs = self._io(L.symrt_engine_num_outputs, L.symrt_engine_output)
        self.symbols = []
        for i in range(L.symrt_engine_num_symbols(h)):
            s = _lib.SymbolInfo()
            check(L.symrt_engine_symbol(h, i, ctypes.byref(s), ctypes.byref(err)), err)
            self.symbols.append((s.name.decode(), s.min, s.opt, s.max, s.multiple_of))

    def _io(self, count, get):
        err = _lib.Error()
        out = []
        for i in range(count(self._h)):
            info = _lib.IoInfo()
            check(get(self._h, i, ctypes.byref(info), ctypes.byref(err)), err)
            out.append((info.name.decode(), info.dtype, info.rank))
        return out

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            self._L.symrt_engine_destroy(h)
            self._h = None


class Context:
    """A symrt context on one backend."""

    def __init__(self, engine, backend):
        self.engine = engine
        self._L = engine._L
        err = _lib.Error()
        h = ctypes.c_void_p()
        name = "CUDA" if backend == _lib.BACKEND_CUDA else "reference"
        check(self._L.symrt_context_create(engine._h, backend, None, ctypes.byref(h), ctypes.byref(err)),
              err, f"creating a {name} context for {engine.path}")
        self._h = h
        # CUDA graphs per shape key (issue 7: on in the Python module; SYMC_CUDA_GRAPHS=0 turns them
        # off). They apply on a non-default stream; torch's caching allocator tends to hand the same
        # addresses back for the same shapes, so steady-state loops replay one graph per shape.
        if backend == _lib.BACKEND_CUDA and os.environ.get("SYMC_CUDA_GRAPHS", "1") != "0":
            check(self._L.symrt_context_set_cuda_graphs(h, 1, ctypes.byref(err)), err)

    def run(self, tensors, stream=None):
        L, err = self._L, _lib.Error()
        eng = self.engine
        for (name, _, _), t in zip(eng.inputs, tensors):
            dims = (ctypes.c_int64 * max(t.dim(), 1))(*t.shape)
            check(L.symrt_set_input_shape(self._h, name.encode(), dims, t.dim(), ctypes.byref(err)), err)
        outs = []
        dev = tensors[0].device if tensors else torch.device("cpu")
        for name, dt, _ in eng.outputs:
            dims = (ctypes.c_int64 * 8)()
            rank = ctypes.c_int32()
            check(L.symrt_get_tensor_shape(self._h, name.encode(), dims, ctypes.byref(rank), ctypes.byref(err)),
                  err)
            outs.append(torch.empty([dims[i] for i in range(rank.value)], dtype=_torch_dtypes()[dt], device=dev))
        for (name, _, _), t in list(zip(eng.inputs, tensors)) + list(zip(eng.outputs, outs)):
            nbytes = t.numel() * t.element_size()
            # a zero-size tensor may have a null data_ptr; hand symrt a valid pointer anyway
            check(L.symrt_set_tensor_address(self._h, name.encode(), ctypes.c_void_p(t.data_ptr()), nbytes,
                                             ctypes.byref(err)), err)
        check(L.symrt_enqueue(self._h, ctypes.c_void_p(stream) if stream else None, ctypes.byref(err)), err)
        return outs

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            self._L.symrt_context_destroy(h)
            self._h = None


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

    def extra_repr(self):
        syms = ", ".join(f"{n} in [{lo}, {hi}] opt {o}" for n, lo, o, hi, _ in self.engine.symbols)
        return f"engine={self.engine_path!r}, symbols: {syms or 'none'}"

    def _context(self, backend):
        c = self._ctx.get(backend)
        if c is None:
            c = Context(self.engine, backend)
            self._ctx[backend] = c
        return c

    def forward(self, *args):
        ins = self.engine.inputs
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if len(tensors) != len(ins):
            raise SymcError(f"the engine takes {len(ins)} tensor input(s) ({', '.join(n for n, _, _ in ins)}), "
                            f"got {len(tensors)}", code="invalid_arg")
        prepared = []
        for (name, dt, rank), t in zip(ins, tensors):
            want = _torch_dtypes()[dt]
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
                outs = self._context(_lib.BACKEND_CUDA).run(prepared, stream)
        elif any(on_cuda):
            raise SymcError("inputs mix CUDA and CPU tensors", code="invalid_arg")
        else:
            with self._lock:
                outs = self._context(_lib.BACKEND_REF).run(prepared)
        if self._out_unflatten is not None:
            return self._out_unflatten(outs)
        return outs[0] if len(outs) == 1 else tuple(outs)
