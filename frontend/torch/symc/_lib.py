"""ctypes bindings for libsymc.so (include/symc/symc.h, symrt.h, status.h).

Approach: one module-level loader finds the shared library (SYMC_LIB, a copy
bundled in the package, or <repo>/build/lib/libsymc.so next to the package
source), declares argtypes/restype for every function the package uses, and
exposes `check(status, err, what)` which turns a non-OK symc_status into a
SymcError carrying the library's one-line message. Nothing here knows torch.

The C constants are not copied here: `constants()` reads the library's table
(symc_constants) once, and the module attributes F32, ATTR_DIMS, BACKEND_CUDA,
DIM_NONE, PRECISION_FP16, ... are its rows with the SYMC_ / SYMRT_ prefix
dropped, looked up on first use (so importing the package needs no library).
The ctypes structs below are the one layout written by hand;
tests/torch/test_enums.py checks them, and the table against the public
headers, so neither can drift.
"""
import ctypes
import os
import pathlib

__all__ = ["lib", "SymcError", "Error", "Attr", "CompileOptions", "Region", "IoInfo", "SymbolInfo",
           "check", "find_library", "constants", "status_name", "DIM_NONE", "ATTR_INT", "ATTR_FLOAT",
           "ATTR_INTS", "ATTR_FLOATS", "ATTR_STR", "ATTR_DIMS", "ATTR_DTYPE", "BACKEND_REF", "BACKEND_CUDA",
           "F32", "F16", "BF16", "F64", "I64", "I32", "BOOL"]


class SymcError(RuntimeError):
    """An error reported by libsymc/symrt (code = the symc_status name) or by the frontend."""

    def __init__(self, msg, code=None):
        super().__init__(msg)
        self.code = code


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("msg", ctypes.c_char * 512)]


class Attr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int), ("n", ctypes.c_uint32),
                ("i", ctypes.c_int64), ("f", ctypes.c_double),
                ("ints", ctypes.POINTER(ctypes.c_int64)), ("floats", ctypes.POINTER(ctypes.c_double)),
                ("dims", ctypes.POINTER(ctypes.c_uint32)), ("s", ctypes.c_char_p)]


class CompileOptions(ctypes.Structure):
    """symc_compile_options, field for field (symc.h appends, never reorders)."""
    _fields_ = [("gpu", ctypes.c_int), ("arch", ctypes.c_char_p), ("precision", ctypes.c_int),
                ("tune", ctypes.c_int),
                ("progress", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)),
                ("dump_after", ctypes.c_char_p),
                ("dump", ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)),
                ("ctx", ctypes.c_void_p),
                ("fp32_layers", ctypes.c_char_p), ("calibrate", ctypes.c_int)]


class Region(ctypes.Structure):
    """symc_region: one region's module (a symc_module handle) and its condition text (NULL: the box alone)."""
    _fields_ = [("module", ctypes.c_void_p), ("condition", ctypes.c_char_p)]


class IoInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32)]


class SymbolInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("min", ctypes.c_int64), ("opt", ctypes.c_int64),
                ("max", ctypes.c_int64), ("multiple_of", ctypes.c_int64)]


class _Constant(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("value", ctypes.c_int64)]


def _candidates():
    env = os.environ.get("SYMC_LIB")
    if env:
        return [("SYMC_LIB", pathlib.Path(env))]
    here = pathlib.Path(__file__).resolve().parent
    out = [("bundled", here / "libsymc.so")]
    # <repo>/frontend/torch/symc/_lib.py -> <repo>/build/lib/libsymc.so
    repo = here.parent.parent.parent
    out.append(("repo build", repo / "build" / "lib" / "libsymc.so"))
    return out


def find_library():
    tried = []
    for how, p in _candidates():
        if p.is_file():
            return str(p)
        tried.append(f"{p} ({how})")
    raise SymcError("libsymc.so not found; tried " + ", ".join(tried) +
                    ". Build it (bash scripts/build.sh build) and set SYMC_LIB=/path/to/libsymc.so",
                    code="io")


_lib = None


def _declare(L):
    P, I32, U32, I64, SZ = ctypes.c_void_p, ctypes.c_int32, ctypes.c_uint32, ctypes.c_int64, ctypes.c_size_t
    E = ctypes.POINTER(Error)
    S = ctypes.c_int
    sig = {
        "symc_version": (ctypes.c_char_p, []),
        "symc_module_create": (P, [ctypes.c_char_p, E]),
        "symc_module_destroy": (None, [P]),
        "symc_declare_symbol": (S, [P, ctypes.c_char_p, I64, I64, I64, I64, ctypes.POINTER(U32), E]),
        "symc_symbol_set_hint": (S, [P, U32, ctypes.c_char_p, E]),
        "symc_dim_const": (U32, [P, I64]),
        "symc_dim_add": (U32, [P, U32, U32]),
        "symc_dim_mul": (U32, [P, U32, U32]),
        "symc_dim_floordiv": (U32, [P, U32, U32]),
        "symc_dim_min": (U32, [P, U32, U32]),
        "symc_dim_max": (U32, [P, U32, U32]),
        "symc_dim_print": (SZ, [P, U32, ctypes.c_char_p, SZ]),
        "symc_dim_equal": (ctypes.c_int, [P, U32, U32]),
        "symc_dim_eval": (S, [P, U32, ctypes.POINTER(I64), U32, ctypes.POINTER(I64), E]),
        "symc_tensor_info": (S, [P, U32, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(I32), ctypes.POINTER(U32),
                                 E]),
        "symc_add_input": (S, [P, ctypes.c_char_p, ctypes.c_int, I32, ctypes.POINTER(U32),
                               ctypes.POINTER(U32), E]),
        "symc_add_constant": (S, [P, ctypes.c_char_p, ctypes.c_int, I32, ctypes.POINTER(I64), P, SZ,
                                  ctypes.POINTER(U32), E]),
        "symc_add_node": (S, [P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(U32), U32,
                              ctypes.POINTER(Attr), U32, ctypes.POINTER(U32), U32, E]),
        "symc_mark_output": (S, [P, U32, E]),
        "symc_module_verify": (S, [P, E]),
        "symc_module_infer_shapes": (S, [P, E]),
        "symc_module_save": (S, [P, ctypes.c_char_p, E]),
        "symc_module_print": (P, [P]),
        "symc_constants": (ctypes.POINTER(_Constant), [ctypes.POINTER(U32)]),
        "symc_compile_options_init": (None, [ctypes.POINTER(CompileOptions)]),
        "symc_module_compile": (S, [P, ctypes.POINTER(CompileOptions), ctypes.c_char_p, E]),
        "symc_compile_regions": (S, [ctypes.POINTER(Region), U32, ctypes.POINTER(CompileOptions), ctypes.c_char_p,
                                     E]),
        "symrt_engine_load_file": (S, [ctypes.c_char_p, ctypes.POINTER(P), E]),
        "symrt_engine_destroy": (None, [P]),
        "symrt_engine_num_inputs": (U32, [P]),
        "symrt_engine_num_outputs": (U32, [P]),
        "symrt_engine_input": (S, [P, U32, ctypes.POINTER(IoInfo), E]),
        "symrt_engine_output": (S, [P, U32, ctypes.POINTER(IoInfo), E]),
        "symrt_engine_num_symbols": (U32, [P]),
        "symrt_engine_num_produced": (U32, [P]),
        "symrt_engine_symbol": (S, [P, U32, ctypes.POINTER(SymbolInfo), E]),
        "symrt_engine_input_dim": (S, [P, U32, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t, E]),
        "symrt_engine_output_dim": (S, [P, U32, ctypes.c_int32, ctypes.c_char_p, ctypes.c_size_t, E]),
        "symrt_engine_batch_rows": (S, [P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(U32), ctypes.c_char_p, SZ, E]),
        "symrt_context_create": (S, [P, ctypes.c_int, P, ctypes.POINTER(P), E]),
        "symrt_context_destroy": (None, [P]),
        "symrt_set_input_shape": (S, [P, ctypes.c_char_p, ctypes.POINTER(I64), I32, E]),
        "symrt_get_tensor_shape": (S, [P, ctypes.c_char_p, ctypes.POINTER(I64), ctypes.POINTER(I32), E]),
        "symrt_get_tensor_max_shape": (S, [P, ctypes.c_char_p, ctypes.POINTER(I64), ctypes.POINTER(I32), E]),
        "symrt_get_output_shape": (S, [P, ctypes.c_char_p, ctypes.POINTER(I64), ctypes.POINTER(I32), E]),
        "symrt_context_sync_shapes": (S, [P, E]),
        "symrt_set_tensor_address": (S, [P, ctypes.c_char_p, P, SZ, E]),
        "symrt_enqueue": (S, [P, P, E]),
        "symrt_context_set_cuda_graphs": (S, [P, ctypes.c_int, E]),
        "symrt_context_create_on": (S, [P, ctypes.c_int, I32, P, ctypes.POINTER(P), E]),
        "symrt_context_set_host_io": (S, [P, ctypes.c_int, E]),
        "symrt_context_warm": (S, [P, ctypes.POINTER(ctypes.c_uint32), E]),
        "symrt_device_count": (S, [ctypes.c_int, ctypes.POINTER(I32), E]),
    }
    for name, (res, args) in sig.items():
        try:
            f = getattr(L, name)
        except AttributeError as e:
            raise SymcError(f"{L._name} does not export {name}: an old or foreign libsymc.so?") from e
        f.restype = res
        f.argtypes = args
    libc = ctypes.CDLL(None)
    L.free = libc.free
    L.free.argtypes = [P]
    L.free.restype = None


def lib():
    """The loaded library (loaded and declared once)."""
    global _lib
    if _lib is None:
        path = find_library()
        try:
            L = ctypes.CDLL(path)
        except OSError as e:
            raise SymcError(f"cannot load {path}: {e}. Set SYMC_LIB to a working libsymc.so", code="io")
        _declare(L)
        _lib = L
    return _lib


_constants = None
_status_names = None


def constants():
    """{C name: value} of every public constant and struct layout, as libsymc has them."""
    global _constants, _status_names
    if _constants is None:
        n = ctypes.c_uint32()
        rows = lib().symc_constants(ctypes.byref(n))
        table = {rows[i].name.decode(): rows[i].value for i in range(n.value)}
        # SymcError.code: "ok", "invalid_arg", "div_zero", ... (the enumerator, lower case)
        _status_names = {v: k[len("SYMC_ERR_"):].lower() for k, v in table.items() if k.startswith("SYMC_ERR_")}
        _status_names[table["SYMC_OK"]] = "ok"
        _constants = table
    return _constants


def status_name(code):
    """The short name of a symc_status, as SymcError.code carries it."""
    constants()
    return _status_names.get(code, str(code))


def __getattr__(name):
    """F32, ATTR_DIMS, BACKEND_CUDA, DIM_NONE, ...: the C constant without its SYMC_/SYMRT_ prefix."""
    if name.isupper():
        table = constants()
        for prefix in ("SYMC_", "SYMRT_"):
            if prefix + name in table:
                globals()[name] = table[prefix + name]
                return table[prefix + name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check(status, err, what=""):
    if status != 0:
        name = status_name(status)
        msg = err.msg.decode("utf-8", "replace") or f"symc status {name}"
        raise SymcError(f"{what}: {msg}" if what else msg, code=name)
