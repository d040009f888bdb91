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
"""
from ._lib import SymcError, find_library
from .api import Input, compile, build_engine, load
from .runtime import Engine, EngineModule, ReferenceBackendWarning, Session
from .backend import symc_backend

__all__ = ["Input", "compile", "load", "Session", "SymcError", "Engine", "EngineModule", "symc_backend",
           "find_library", "ReferenceBackendWarning", "__version__"]
__version__ = "0.1.0"
