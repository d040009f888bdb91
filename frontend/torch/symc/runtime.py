"""Engine and context wrappers, and symc.Session: running an engine needs only numpy and the C
library; torch is optional (symc/torch_module.py holds the torch.nn.Module, EngineModule).

Approach: `Engine` owns a symrt_engine loaded from a .symx file and lists its
inputs, outputs and symbols. `Context` runs it on one backend: per call it sets
every input shape (symrt checks the declared ranges and reports e.g. "input 'x'
dim 0 = 33: symbol B must be in [1, 32]", raised here as SymcError), asks symrt
for the output shapes, allocates the outputs like the inputs (numpy arrays for
numpy inputs, torch tensors on the inputs' device for torch tensors) and
enqueues. `Session` is onnxruntime's shape of it: numpy in, numpy out, on the
reference backend, or on the GPU through torch when torch sees one.
The first run on the reference backend in a process warns, once, that it takes
the exact but slow path (ReferenceBackendWarning).
"""
import ctypes
import os
import threading
import warnings

import numpy as np

from . import _lib
from ._lib import SymcError, check

# numpy dtypes by their symc_dtype's name (bf16 has none in numpy: see _NP_CARRY)
_NP_DTYPES = {"F32": "float32", "F16": "float16", "F64": "float64", "I64": "int64", "I32": "int32", "BOOL": "bool"}
# what a numpy buffer of each dtype holds: bf16 travels as its uint16 bits (an ml_dtypes bfloat16 array is
# taken as input; Session gives bf16 outputs back as float32, exactly)
_NP_CARRY = dict(_NP_DTYPES, BF16="uint16")
# onnxruntime's type strings
_ORT_TYPES = {"F32": "tensor(float)", "F16": "tensor(float16)", "BF16": "tensor(bfloat16)", "F64": "tensor(double)",
              "I64": "tensor(int64)", "I32": "tensor(int32)", "BOOL": "tensor(bool)"}


def _dtype_name(dt):
    for name in _NP_CARRY:
        if getattr(_lib, name) == dt:
            return name
    return None


def __getattr__(name):
    """EngineModule lives in symc.torch_module (it needs torch); symc.runtime.EngineModule still finds it."""
    if name == "EngineModule":
        from .torch_module import EngineModule
        return EngineModule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
        # sizes known only after a run (NonZero's count): outputs are cut to their real shapes then
        self.data_dependent = L.symrt_engine_num_produced(h) > 0
        # the build's batch-row proof (symrt_engine_batch_rows): batch_rows is (state, why), state one of
        # "independent" (requests may run joined along dim 0), "batched" (not proved), "none" (no batch
        # axis), "unknown" (an engine built before symc stored it); batch_symbol the batch symbol's name
        state, sym, why = ctypes.c_int(), ctypes.c_uint32(), ctypes.create_string_buffer(512)
        check(L.symrt_engine_batch_rows(h, ctypes.byref(state), ctypes.byref(sym), why, len(why), ctypes.byref(err)),
              err)
        states = {v: k[len("SYMRT_BATCH_ROWS_"):].lower() for k, v in _lib.constants().items()
                  if k.startswith("SYMRT_BATCH_ROWS_")}
        self.batch_rows = (states.get(state.value, "unknown"), why.value.decode("utf-8", "replace"))
        self.batch_symbol = self.symbols[sym.value][0] if sym.value < len(self.symbols) else None

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
    """A symrt context on one backend; device: the GPU (an ordinal among the visible ones, torch's
    numbering) for the CUDA backend, 0 for the reference backend."""

    def __init__(self, engine, backend, device=0):
        self.engine = engine
        self.backend = backend
        self.device = int(device)
        self._L = engine._L
        err = _lib.Error()
        h = ctypes.c_void_p()
        name = f"CUDA (GPU {self.device})" if backend == _lib.BACKEND_CUDA else "reference"
        check(self._L.symrt_context_create_on(engine._h, backend, self.device, None, ctypes.byref(h),
                                              ctypes.byref(err)),
              err, f"creating a {name} context for {engine.path}")
        self._h = h
        # CUDA graphs per shape key are on in every CUDA context, on any stream (torch's default
        # stream included); SYMC_CUDA_GRAPHS=0 turns them off here. torch's caching allocator tends
        # to hand the same addresses back for the same shapes, so steady-state loops replay one
        # graph per shape, and a moved buffer is captured at once.
        if backend == _lib.BACKEND_CUDA and os.environ.get("SYMC_CUDA_GRAPHS", "1") == "0":
            check(self._L.symrt_context_set_cuda_graphs(h, 0, ctypes.byref(err)), err)

    def warm(self):
        """Runs the engine once at each point its build tuned at (symrt_context_warm), so a first call at
        a new shape pays no library module loading; returns how many points ran (0 on the reference
        backend, which has nothing to load)."""
        err, n = _lib.Error(), ctypes.c_uint32(0)
        check(self._L.symrt_context_warm(self._h, ctypes.byref(n), ctypes.byref(err)), err,
              f"warming up a context of {self.engine.path}")
        return n.value

    def run(self, tensors, stream=None):
        """Runs the engine on tensors (the inputs in order: all numpy arrays, or all torch tensors, C
        contiguous, of the engine's dtypes); returns the outputs, allocated the same way (torch tensors
        on the inputs' device)."""
        if self.backend == _lib.BACKEND_REF:
            _warn_reference_backend()
        L, err = self._L, _lib.Error()
        eng = self.engine
        is_torch = bool(tensors) and hasattr(tensors[0], "data_ptr")
        if is_torch:  # once per call, not per output
            import torch

            from .torch_module import torch_dtypes
        for (name, _, _), t in zip(eng.inputs, tensors):
            dims = (ctypes.c_int64 * max(len(t.shape), 1))(*t.shape)
            check(L.symrt_set_input_shape(self._h, name.encode(), dims, len(t.shape), ctypes.byref(err)), err)
        outs = []
        for name, dt, _ in eng.outputs:
            # at the most the output can hold: its size may depend on the data (NonZero), known after the run
            shape = self._shape(L.symrt_get_tensor_max_shape, name)
            if is_torch:
                outs.append(torch.empty(shape, dtype=torch_dtypes()[dt], device=tensors[0].device))
            else:
                outs.append(np.empty(shape, dtype=_NP_CARRY[_dtype_name(dt)]))
        for (name, _, _), t in list(zip(eng.inputs, tensors)) + list(zip(eng.outputs, outs)):
            if hasattr(t, "data_ptr"):
                ptr, nbytes = t.data_ptr(), t.numel() * t.element_size()
            else:
                ptr, nbytes = t.ctypes.data, t.nbytes
            # a zero-size tensor may have a null data pointer; hand symrt a valid pointer anyway
            check(L.symrt_set_tensor_address(self._h, name.encode(), ctypes.c_void_p(ptr), nbytes,
                                             ctypes.byref(err)), err)
        check(L.symrt_enqueue(self._h, ctypes.c_void_p(stream) if stream else None, ctypes.byref(err)), err)
        if not eng.data_dependent:
            return outs
        # sizes known only after the run: wait for it, then cut each output to its real shape (a view of
        # the buffer allocated at the most it can hold: the data lie at its start, contiguous)
        check(L.symrt_context_sync_shapes(self._h, ctypes.byref(err)), err)
        real = []
        for (name, _, _), t in zip(eng.outputs, outs):
            shape = self._shape(L.symrt_get_output_shape, name)
            n = 1
            for d in shape:
                n *= d
            real.append(t.reshape(-1)[:n].reshape(shape))
        return real

    def _shape(self, fn, name):
        dims = (ctypes.c_int64 * 8)()
        rank = ctypes.c_int32()
        err = _lib.Error()
        check(fn(self._h, name.encode(), dims, ctypes.byref(rank), ctypes.byref(err)), err)
        return [dims[i] for i in range(rank.value)]

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            self._L.symrt_context_destroy(h)
            self._h = None


class NodeArg:
    """An input or output of a Session, as onnxruntime describes it: name, shape (ints for fixed dims,
    symbol names or expressions as strings for dynamic ones), type ("tensor(float)"), plus dtype (numpy),
    torch_dtype, and ranges {symbol: (min, opt, max)} of the symbols in its shape."""

    def __init__(self, name, shape, dt, ranges):
        self.name, self.shape = name, shape
        n = _dtype_name(dt)
        self.type = _ORT_TYPES.get(n, str(dt))
        self.dtype = np.dtype(_NP_DTYPES[n]) if n in _NP_DTYPES else None
        self._dt = dt
        self.ranges = ranges

    @property
    def torch_dtype(self):
        """the torch dtype (imports torch)"""
        from .torch_module import torch_dtypes
        return torch_dtypes().get(self._dt)

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape})"


class Session:
    """onnxruntime-style: symc.Session("m.symx").run(output_names, {name: ndarray}) -> [ndarray].

    providers: ["CUDAExecutionProvider", ...] runs on the GPU (inputs copied there and outputs back) when
    torch is installed and torch.cuda is available; otherwise, and by default, the CPU reference backend
    runs (exact, and much slower than a GPU), with numpy alone."""

    def __init__(self, path, providers=None):
        self.engine = Engine(path)
        self.path = str(path)
        names = [p[0] if isinstance(p, (tuple, list)) else p for p in (providers or [])]
        for p in names:
            if p not in ("CUDAExecutionProvider", "CPUExecutionProvider"):
                raise SymcError(f"provider {p!r} is not one symc runs: it takes CUDAExecutionProvider (the CUDA "
                                f"backend) and CPUExecutionProvider (the reference backend)", code="unsupported")
        want_cuda = "CUDAExecutionProvider" in names
        self.cuda = bool(want_cuda and _torch_cuda())
        if want_cuda and not self.cuda:
            warnings.warn("symc.Session: CUDAExecutionProvider asked for, but " +
                          ("torch sees no CUDA device" if _torch_cuda() is not None else "torch is not installed "
                           "(the GPU path copies through it)") +
                          ": running on the reference backend (CPUExecutionProvider)", stacklevel=2)
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
        if self.cuda:
            return self._run_cuda(wanted, input_feed)
        arrays = []
        for (name, dt, rank), arg in zip(self.engine.inputs, self._inputs):
            a = input_feed[name]
            bits = False  # a bf16 torch tensor's bits, as uint16
            if hasattr(a, "detach"):  # a torch tensor
                a = a.detach().cpu()
                bits = str(a.dtype) == "torch.bfloat16"
                a = a.view(_torch().int16).numpy().view(np.uint16) if bits else a.numpy()
            a = np.ascontiguousarray(a)
            got = "bfloat16" if bits else a.dtype.name
            if dt == _lib.BF16 and got == "bfloat16":  # ml_dtypes' bfloat16, or a torch tensor's bits
                a = a.view(np.uint16)
            elif got != _NP_DTYPES.get(_dtype_name(dt)):
                raise SymcError(f"input '{name}' is {got}, the engine takes {arg.type}", code="invalid_arg")
            if a.ndim != rank:
                raise SymcError(f"input '{name}' has rank {a.ndim} (shape {a.shape}); the engine takes "
                                f"rank {rank} ({arg.shape})", code="invalid_arg")
            arrays.append(a)
        with self._lock:
            if self._ctx is None:
                self._ctx = Context(self.engine, _lib.BACKEND_REF)
            res = self._ctx.run(arrays)
        by_name = {n: (r, dt) for (n, dt, _), r in zip(self.engine.outputs, res)}
        result = []
        for n in wanted:
            r, dt = by_name[n]
            # bf16 bits widened to float32 exactly (a bf16 value is an f32 value with the low 16 bits zero)
            result.append((r.astype(np.uint32) << 16).view(np.float32) if dt == _lib.BF16 else r)
        return result

    def _run_cuda(self, wanted, input_feed):
        """the GPU path: inputs copied to torch's current device, run on its current stream, outputs back"""
        torch = _torch()
        from .torch_module import torch_dtypes
        outs = [n for n, _, _ in self.engine.outputs]
        tensors = []
        for (name, dt, rank), arg in zip(self.engine.inputs, self._inputs):
            a = input_feed[name]
            want = torch_dtypes()[dt]
            t = torch.as_tensor(np.ascontiguousarray(a)) if not isinstance(a, torch.Tensor) else a
            if t.dtype != want:
                raise SymcError(f"input '{name}' is {str(t.dtype).replace('torch.', '')}, the engine takes "
                                f"{arg.type}", code="invalid_arg")
            if t.dim() != rank:
                raise SymcError(f"input '{name}' has rank {t.dim()} (shape {tuple(t.shape)}); the engine takes "
                                f"rank {rank} ({arg.shape})", code="invalid_arg")
            tensors.append(t.contiguous().cuda())
        with self._lock:
            dev = torch.cuda.current_device()  # the context runs on the GPU torch copied the inputs to
            if self._ctx is None or self._ctx.backend != _lib.BACKEND_CUDA or self._ctx.device != dev:
                self._ctx = Context(self.engine, _lib.BACKEND_CUDA, dev)
            stream = torch.cuda.current_stream().cuda_stream
            res = self._ctx.run(tensors, stream)
            torch.cuda.current_stream().synchronize()
        by_name = dict(zip(outs, res))
        result = []
        for n in wanted:
            t = by_name[n].cpu()
            result.append(t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())
        return result


def _torch():
    import torch
    return torch


def _torch_cuda():
    """True/False: whether torch sees a CUDA device; None without torch"""
    try:
        torch = _torch()
    except ImportError:
        return None
    try:
        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False
