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
The first run on the reference backend in a process warns, once, that CPU
tensors take the exact but slow path (ReferenceBackendWarning).
"""
import ctypes
import functools
import os
import threading
import warnings

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


class ReferenceBackendWarning(UserWarning):
    """CPU tensors run on the reference backend: exact, but far slower than eager PyTorch (issued once
    per process; silence it with warnings.filterwarnings("ignore", category=symc.ReferenceBackendWarning))."""


_ref_warned = False
_ref_warned_lock = threading.Lock()


def _warn_reference_backend():
    """The once-per-process warning of the first run on the reference backend."""
    global _ref_warned
    with _ref_warned_lock:
        if _ref_warned:
            return
        _ref_warned = True
    threads = os.environ.get("OMP_NUM_THREADS") or f"all {os.cpu_count() or 1}"
    warnings.warn("symc: CPU tensors run on the reference backend, the exact oracle that checks the GPU "
                  "kernels: it is 60-650x slower than eager PyTorch on CNNs (it uses " + threads + " cores; "
                  "set OMP_NUM_THREADS to change that). Pass CUDA tensors to run the compiled GPU engine. "
                  "This warning is shown once per process.", ReferenceBackendWarning, stacklevel=4)


class Context:
    """A symrt context on one backend."""

    def __init__(self, engine, backend):
        self.engine = engine
        self.backend = backend
        self._L = engine._L
        err = _lib.Error()
        h = ctypes.c_void_p()
        name = "CUDA" if backend == _lib.BACKEND_CUDA else "reference"
        check(self._L.symrt_context_create(engine._h, backend, None, ctypes.byref(h), ctypes.byref(err)),
              err, f"creating a {name} context for {engine.path}")
        self._h = h
        # CUDA graphs per shape key are on in every CUDA context, on any stream (torch's default
        # stream included); SYMC_CUDA_GRAPHS=0 turns them off here. torch's caching allocator tends
        # to hand the same addresses back for the same shapes, so steady-state loops replay one
        # graph per shape, and a moved buffer is captured at once.
        if backend == _lib.BACKEND_CUDA and os.environ.get("SYMC_CUDA_GRAPHS", "1") == "0":
            check(self._L.symrt_context_set_cuda_graphs(h, 0, ctypes.byref(err)), err)

    def run(self, tensors, stream=None):
        if self.backend == _lib.BACKEND_REF:
            _warn_reference_backend()
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


# numpy dtypes by their symc_dtype's name (bf16 has none in numpy)
_NP_DTYPES = {"F32": "float32", "F16": "float16", "F64": "float64", "I64": "int64", "I32": "int32", "BOOL": "bool"}
# onnxruntime's type strings
_ORT_TYPES = {"F32": "tensor(float)", "F16": "tensor(float16)", "BF16": "tensor(bfloat16)", "F64": "tensor(double)",
              "I64": "tensor(int64)", "I32": "tensor(int32)", "BOOL": "tensor(bool)"}


def _dtype_name(dt):
    for name in _TORCH_DTYPES:
        if getattr(_lib, name) == dt:
            return name
    return None


class NodeArg:
    """An input or output of a Session, as onnxruntime describes it: name, shape (ints for fixed dims,
    symbol names or expressions as strings for dynamic ones), type ("tensor(float)"), plus dtype (numpy),
    torch_dtype, and ranges {symbol: (min, opt, max)} of the symbols in its shape."""

    def __init__(self, name, shape, dt, ranges):
        self.name, self.shape = name, shape
        n = _dtype_name(dt)
        self.type = _ORT_TYPES.get(n, str(dt))
        import numpy as np
        self.dtype = np.dtype(_NP_DTYPES[n]) if n in _NP_DTYPES else None
        self.torch_dtype = _torch_dtypes().get(dt)
        self.ranges = ranges

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape})"


class Session:
    """onnxruntime-style: symc.Session("m.symx").run(output_names, {name: ndarray}) -> [ndarray].

    providers: ["CUDAExecutionProvider", ...] runs on the GPU (inputs copied there and outputs back) when
    torch.cuda is available; otherwise, and by default, the CPU reference backend runs (exact, and much
    slower than a GPU)."""

    def __init__(self, path, providers=None):
        self.engine = Engine(path)
        self.path = str(path)
        names = [p[0] if isinstance(p, (tuple, list)) else p for p in (providers or [])]
        for p in names:
            if p not in ("CUDAExecutionProvider", "CPUExecutionProvider"):
                raise SymcError(f"provider {p!r} is not one symc runs: it takes CUDAExecutionProvider (the CUDA "
                                f"backend) and CPUExecutionProvider (the reference backend)", code="unsupported")
        want_cuda = "CUDAExecutionProvider" in names
        self.cuda = bool(want_cuda and torch.cuda.is_available())
        if want_cuda and not self.cuda:
            import warnings
            warnings.warn("symc.Session: CUDAExecutionProvider asked for, but torch sees no CUDA device: running "
                          "on the reference backend (CPUExecutionProvider)", stacklevel=2)
        self._ctx = None
        self._lock = threading.Lock()
        syms = {n: (lo, o, hi) for n, lo, o, hi, _ in self.engine.symbols}
        L, err = self.engine._L, _lib.Error()
        def node_args(ios, dim_fn):
            """NodeArgs with onnxruntime's shapes: an int for a fixed dim, the symbolic text otherwise"""
            args = []
            for i, (name, dt, rank) in enumerate(ios):
                shape = []
                for d in range(rank):
                    buf = ctypes.create_string_buffer(256)
                    check(dim_fn(self.engine._h, i, d, buf, 256, ctypes.byref(err)), err)
                    text = buf.value.decode()
                    shape.append(int(text) if text.lstrip("-").isdigit() else text)
                used = {n: r for n, r in syms.items() if any(isinstance(s, str) and n in s for s in shape)}
                args.append(NodeArg(name, shape, dt, used))
            return args
        self._inputs = node_args(self.engine.inputs, L.symrt_engine_input_dim)
        self._outputs = node_args(self.engine.outputs, L.symrt_engine_output_dim)

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return ["CUDAExecutionProvider", "CPUExecutionProvider"] if self.cuda else ["CPUExecutionProvider"]

    def run(self, output_names, input_feed, run_options=None):
        """output_names: a list of names, or None for every output; input_feed: {name: numpy array}."""
        import numpy as np
        names = [n for n, _, _ in self.engine.inputs]
        outs = [n for n, _, _ in self.engine.outputs]
        if not isinstance(input_feed, dict):
            raise SymcError(f"input_feed is a {type(input_feed).__name__}; give a dict {{name: ndarray}}",
                            code="invalid_arg")
        extra = [k for k in input_feed if k not in names]
        missing = [n for n in names if n not in input_feed]
        if extra or missing:
            raise SymcError(("; ".join(x for x in (
                f"no input named {', '.join(repr(k) for k in extra)}" if extra else "",
                f"missing input {', '.join(repr(k) for k in missing)}" if missing else "") if x)) +
                f" (inputs: {', '.join(names)})", code="invalid_arg")
        wanted = outs if output_names is None else list(output_names)
        for n in wanted:
            if n not in outs:
                raise SymcError(f"no output named {n!r} (outputs: {', '.join(outs)})", code="invalid_arg")
        tensors = []
        for (name, dt, rank), arg in zip(self.engine.inputs, self._inputs):
            a = input_feed[name]
            want = _torch_dtypes()[dt]
            t = torch.as_tensor(np.ascontiguousarray(a)) if not isinstance(a, torch.Tensor) else a
            if t.dtype != want:
                raise SymcError(f"input '{name}' is {t.dtype}, the engine takes {arg.type}", code="invalid_arg")
            if t.dim() != rank:
                raise SymcError(f"input '{name}' has rank {t.dim()} (shape {tuple(t.shape)}); the engine takes "
                                f"rank {rank} ({arg.shape})", code="invalid_arg")
            tensors.append(t.contiguous().cuda() if self.cuda else t.contiguous().cpu())
        with self._lock:
            if self._ctx is None:
                self._ctx = Context(self.engine, _lib.BACKEND_CUDA if self.cuda else _lib.BACKEND_REF)
            if self.cuda:
                stream = torch.cuda.current_stream().cuda_stream
                res = self._ctx.run(tensors, stream)
                torch.cuda.current_stream().synchronize()
            else:
                res = self._ctx.run(tensors)
        by_name = dict(zip(outs, res))
        result = []
        for n in wanted:
            t = by_name[n].cpu()
            result.append(t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())
        return result
