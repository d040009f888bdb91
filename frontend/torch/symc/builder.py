"""A thin Python face over the C builder API (symc_module_*).

Approach: `Module` owns one symc_module, keeps the ctypes arrays an attribute
points at alive for the duration of each call, interns symbolic dims, and turns
every failing call into a SymcError with the library's message. Attributes are
given as (name, kind, value) with kind one of "int", "float", "ints",
"floats", "str", "dims", "dtype"; a "dims" value is a list of symc_dim handles
(DIM_NONE stands for -1 where the op allows it). `compile_regions` compiles
several modules, each valid in a region of the input sizes, into one engine
(symc_compile_regions): the torch frontend hands it the parts it traced.
"""
import ctypes

import numpy as np

from . import _lib
from ._lib import SymcError, check

# numpy dtypes symc takes, by their symc_dtype's name (the values come from the library: _lib)
_NP_DTYPES = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", np.dtype(np.float64): "F64",
              np.dtype(np.int64): "I64", np.dtype(np.int32): "I32", np.dtype(np.bool_): "BOOL"}


class Module:
    def __init__(self, name):
        self.L = _lib.lib()
        err = _lib.Error()
        h = self.L.symc_module_create(name.encode(), ctypes.byref(err))
        if not h:
            check(err.code or 10, err, "symc_module_create")
        self.h = ctypes.c_void_p(h)
        self._consts = {}
        self.symbols = []  # (name, min, opt, max, multiple_of) in declaration order, as symc_dim_eval binds them

    def close(self):
        if self.h is not None:
            self.L.symc_module_destroy(self.h)
            self.h = None

    def __del__(self):
        if getattr(self, "h", None) is not None:
            self.close()

    # ---- dims ----
    def symbol(self, name, lo, opt, hi, multiple_of=1, hint=None):
        """hint: how the user declares this symbol a multiple ("{m}" = the multiple; symc_symbol_set_hint)."""
        err = _lib.Error()
        d = ctypes.c_uint32()
        check(self.L.symc_declare_symbol(self.h, name.encode(), lo, opt, hi, multiple_of, ctypes.byref(d),
                                         ctypes.byref(err)), err, f"declaring symbol {name} in [{lo}, {hi}]")
        if multiple_of > 1:  # the range the library keeps: ends rounded inward to multiples, opt to the nearest
            lo, hi = -(-lo // multiple_of) * multiple_of, hi // multiple_of * multiple_of
            opt = min(max(opt, lo), hi)
            opt = opt - opt % multiple_of if opt - opt % multiple_of >= lo else opt - opt % multiple_of + multiple_of
        self.symbols.append((name, lo, opt, hi, multiple_of))
        if hint:
            check(self.L.symc_symbol_set_hint(self.h, d.value, hint.encode(), ctypes.byref(err)), err,
                  f"the hint of symbol {name}")
        return d.value

    def const(self, v):
        return self.L.symc_dim_const(self.h, int(v))

    def add(self, a, b):
        return self.L.symc_dim_add(self.h, a, b)

    def mul(self, a, b):
        return self.L.symc_dim_mul(self.h, a, b)

    def floordiv(self, a, b):
        return self.L.symc_dim_floordiv(self.h, a, b)

    def min(self, a, b):
        return self.L.symc_dim_min(self.h, a, b)

    def max(self, a, b):
        return self.L.symc_dim_max(self.h, a, b)

    def dim_equal(self, a, b):
        """1: a == b at every size in the declared ranges; 0: at none; -1: not proven either way."""
        return self.L.symc_dim_equal(self.h, a, b)

    def dim_eval(self, d, values):
        """The value of d with the declared symbols bound to values (declaration order); None if it
        cannot be evaluated (overflow, division by zero)."""
        err = _lib.Error()
        arr = (ctypes.c_int64 * max(len(values), 1))(*values)
        out = ctypes.c_int64()
        if self.L.symc_dim_eval(self.h, d, arr, len(values), ctypes.byref(out), ctypes.byref(err)):
            return None
        return out.value

    def tensor_info(self, t):
        """(dtype code, [dims]) of tensor t; dims is None before shape inference."""
        err = _lib.Error()
        dt, rank = ctypes.c_int(), ctypes.c_int32()
        dims = (ctypes.c_uint32 * 8)()
        check(self.L.symc_tensor_info(self.h, t, ctypes.byref(dt), ctypes.byref(rank), dims, ctypes.byref(err)),
              err, "symc_tensor_info")
        return dt.value, (None if rank.value < 0 else list(dims[:rank.value]))

    def dim_str(self, d):
        buf = ctypes.create_string_buffer(256)
        self.L.symc_dim_print(self.h, d, buf, 256)
        return buf.value.decode()

    # ---- tensors ----
    def input(self, name, dtype, dims):
        err = _lib.Error()
        arr = (ctypes.c_uint32 * max(len(dims), 1))(*dims)
        t = ctypes.c_uint32()
        check(self.L.symc_add_input(self.h, name.encode(), dtype, len(dims), arr, ctypes.byref(t),
                                    ctypes.byref(err)), err, f"input '{name}'")
        return t.value

    def constant(self, name, array, dtype=None):
        """dtype: a symc dtype name ("BF16") for data numpy has no type for, given as its raw
        16-bit patterns (array of uint16/int16); None: from the array's numpy dtype."""
        a = np.asarray(array)
        # not np.ascontiguousarray: it returns at least 1-D, so a 0-d scalar (the index of x[:, 0], a
        # scalar operand) would become shape [1] and keep an axis torch drops
        a = np.ascontiguousarray(a).reshape(a.shape)
        if dtype is None and a.dtype not in _NP_DTYPES:
            raise SymcError(f"constant '{name}' has dtype {a.dtype}, which symc does not take", code="unsupported")
        if dtype is not None and a.dtype.itemsize != 2:
            raise SymcError(f"constant '{name}': raw {dtype} data must be 16-bit patterns, got {a.dtype}",
                            code="invalid_arg")
        err = _lib.Error()
        dims = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        t = ctypes.c_uint32()
        code = getattr(_lib, dtype if dtype is not None else _NP_DTYPES[a.dtype])
        check(self.L.symc_add_constant(self.h, name.encode(), code, a.ndim, dims,
                                       a.ctypes.data_as(ctypes.c_void_p), a.nbytes, ctypes.byref(t),
                                       ctypes.byref(err)), err, f"constant '{name}'")
        return t.value

    def node(self, op, inputs, attrs=(), name=None, n_out=1):
        keep = []
        arr = (_lib.Attr * max(len(attrs), 1))()
        for i, (an, kind, v) in enumerate(attrs):
            a = arr[i]
            a.name = an.encode()
            a.kind = getattr(_lib, "ATTR_" + kind.upper())  # "dims" -> SYMC_ATTR_DIMS
            if kind in ("int", "dtype"):
                a.i = int(v)
            elif kind == "float":
                a.f = float(v)
            elif kind == "ints":
                x = (ctypes.c_int64 * max(len(v), 1))(*[int(e) for e in v])
                keep.append(x)
                a.ints, a.n = ctypes.cast(x, ctypes.POINTER(ctypes.c_int64)), len(v)
            elif kind == "floats":
                x = (ctypes.c_double * max(len(v), 1))(*[float(e) for e in v])
                keep.append(x)
                a.floats, a.n = ctypes.cast(x, ctypes.POINTER(ctypes.c_double)), len(v)
            elif kind == "dims":
                x = (ctypes.c_uint32 * max(len(v), 1))(*v)
                keep.append(x)
                a.dims, a.n = ctypes.cast(x, ctypes.POINTER(ctypes.c_uint32)), len(v)
            elif kind == "str":
                s = v.encode()
                keep.append(s)
                a.s = s
        ins = (ctypes.c_uint32 * max(len(inputs), 1))(*inputs)
        outs = (ctypes.c_uint32 * n_out)()
        err = _lib.Error()
        check(self.L.symc_add_node(self.h, op.encode(), name.encode() if name else None, ins, len(inputs), arr,
                                   len(attrs), outs, n_out, ctypes.byref(err)), err)
        return outs[0] if n_out == 1 else list(outs)

    def output(self, t):
        err = _lib.Error()
        check(self.L.symc_mark_output(self.h, t, ctypes.byref(err)), err, "marking an output")

    def infer_shapes(self):
        err = _lib.Error()
        check(self.L.symc_module_infer_shapes(self.h, ctypes.byref(err)), err, "shape inference")

    def save(self, path):
        err = _lib.Error()
        check(self.L.symc_module_save(self.h, str(path).encode(), ctypes.byref(err)), err, f"saving {path}")

    def text(self):
        p = self.L.symc_module_print(self.h)
        if not p:
            return ""
        try:
            return ctypes.string_at(p).decode()
        finally:
            self.L.free(p)

    def compile(self, path, gpu=False, precision=None, fp32_layers=None):
        """precision: a symc_precision value (None: the library's default, fp32). fp32_layers: node and/or
        op names kept fp32 under fp16/bf16 (a list or a comma-separated string)."""
        err = _lib.Error()
        o = _options(self.L, gpu, precision, fp32_layers)
        check(self.L.symc_module_compile(self.h, ctypes.byref(o), str(path).encode(), ctypes.byref(err)), err,
              "symc_module_compile")


def _options(L, gpu, precision, fp32_layers):
    """symc_compile_options from the library's defaults (the struct keeps its fp32_layers bytes alive)."""
    o = _lib.CompileOptions()
    L.symc_compile_options_init(ctypes.byref(o))
    o.gpu = 1 if gpu else 0
    if precision is not None:
        o.precision = precision
    if fp32_layers:
        layers = fp32_layers if isinstance(fp32_layers, str) else ",".join(fp32_layers)
        o.fp32_layers = layers.encode()  # ctypes keeps the bytes in the struct's _objects
    return o


def compile_regions(parts, path, gpu=False, precision=None, fp32_layers=None):
    """One engine at path from several modules, each a complete graph of the same inputs and outputs and
    valid in a region of the input sizes (symc_compile_regions): parts is a list of (Module, condition),
    condition None (the module's own symbol ranges alone) or a text over the module's symbol names for what
    a box cannot say ("S1 <= S2 and S1 % 8 == 0"; relations <=, <, >=, >, ==, != joined by " and ").
    Symbols of different modules are the same when read from the same input dim. Every point of the hull
    of the regions must be in one (a gap raises SymcError naming a point); where several hold, the first
    runs. Weights equal in content are stored once. One part without a condition is Module.compile
    itself. The modules are compiled in place, as Module.compile does; gpu, precision and fp32_layers
    apply to every part."""
    parts = list(parts)
    if not parts:
        raise SymcError("compile_regions: no parts (a list of (Module, condition or None))", code="invalid_arg")
    regions = (_lib.Region * len(parts))()
    for i, part in enumerate(parts):
        if not (isinstance(part, (tuple, list)) and len(part) == 2 and isinstance(part[0], Module)
                and (part[1] is None or isinstance(part[1], str))):
            raise SymcError(f"compile_regions: part {i} is {part!r}, not (Module, condition or None)",
                            code="invalid_arg")
        m, cond = part
        if m.h is None:
            raise SymcError(f"compile_regions: part {i}'s module is closed", code="invalid_arg")
        regions[i].module = m.h.value
        regions[i].condition = cond.encode() if cond is not None else None
    L = parts[0][0].L
    err = _lib.Error()
    o = _options(L, gpu, precision, fp32_layers)
    check(L.symc_compile_regions(regions, len(parts), ctypes.byref(o), str(path).encode(), ctypes.byref(err)), err,
          "symc_compile_regions")
