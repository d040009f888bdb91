"""The ATen lowerings of the tracer, one module per op family, registered into one table.

Approach: a lowering is fn(tracer, node, args, kwargs) -> value, registered in registry._LOWER by ATen op
(registry.py says how). Importing this package imports every family, each registering its lowerings, so
the table is complete; the tracer reads it and the sets of ops it handles itself from here. No family
imports the tracer: what they share is in helpers.py (arguments, dtypes, casts) and ../values.py (the
values the tracer keeps). The families: elementwise, matmul, attention, movement (shapes, slices, pads),
indexing, creation, reductions, norm, conv (and pooling), resize (upsampling). A new op goes in its
family's module with @_reg(_op("name")).
"""
# the families, imported for their registrations into the table
from . import attention, conv, creation, elementwise, indexing, matmul, movement, norm, reductions, resize
from .attention import _SDPA_OPS
from .registry import _ASSERTS, _IGNORED, _LOWER, _NO_FOLD, _SYM_OPS, _op, _reg
from .resize import _UPSAMPLE_KEPT

__all__ = ["attention", "conv", "creation", "elementwise", "indexing", "matmul", "movement", "norm", "reductions",
           "resize", "_ASSERTS", "_IGNORED", "_LOWER", "_NO_FOLD", "_SDPA_OPS", "_SYM_OPS", "_UPSAMPLE_KEPT", "_op",
           "_reg"]
