"""symc for PyTorch: compile models for dimension ranges into symc engines.

Three ways in, as in the Torch-TensorRT dynamic-shape tutorial:
  symc.compile(model, inputs=[symc.Input(min_shape=, opt_shape=, max_shape=)])
  symc.compile(torch.export.export(model, args, dynamic_shapes=...), args)
  torch.compile(model, backend="symc")   # registered when symc is imported
Each returns a callable that runs the engine on CUDA tensors (zero-copy, on
the current stream) or on CPU tensors with the reference backend; m.save(path)
writes it and symc.load(path) reads it back. symc.Session("m.symx") is an
onnxruntime-style entry: get_inputs(), run(output_names, {name: ndarray}).
Compiled engines are cached in SYMC_CACHE_DIR (else ~/.cache/symc/engines).
The C library is found through SYMC_LIB, a bundled copy, or <repo>/build/lib.

Two layers: the core (the library's bindings, symc.builder, Engine and
Session) needs only numpy, so a product can run engines without PyTorch; the
torch layer (compile, load, Input, EngineModule, the torch.compile backend)
is imported with it when torch is installed, and names torch when it is not.
"""
from ._lib import SymcError, find_library
from .runtime import Engine, ReferenceBackendWarning, Session

_TORCH_NAMES = ("Input", "compile", "build_engine", "load", "EngineModule", "symc_backend")
try:
    import torch as _torch  # noqa: F401  (the torch layer below needs it; without it the core still works)
except ImportError as _e:
    _torch_missing = _e
else:
    _torch_missing = None
    from .api import Input, compile, build_engine, load
    from .torch_module import EngineModule
    from .backend import symc_backend


def __getattr__(name):
    """The torch layer's names without torch: a clear error instead of an AttributeError."""
    if name in _TORCH_NAMES and _torch_missing is not None:
        raise SymcError(f"symc.{name} needs PyTorch, which is not installed here ({_torch_missing}); install "
                        f"torch, or run a compiled engine with symc.Session (numpy only)", code="unsupported")
    raise AttributeError(f"module 'symc' has no attribute {name!r}")


__all__ = ["Session", "SymcError", "Engine", "find_library", "ReferenceBackendWarning", "__version__"] + \
    ([] if _torch_missing else ["Input", "compile", "load", "EngineModule", "symc_backend"])
__version__ = "0.1.0"
