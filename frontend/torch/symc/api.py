"""symc.compile and symc.Input: the first two approaches of the Torch-TensorRT
dynamic-shape tutorial, the engine build shared with the dynamo backend, and
symc.load.

Approach: (1) an nn.Module with symc.Input specs is exported with
torch.export, one Dim(min, max) per dim whose min and max differ, with example
inputs at opt_shape; (2) an ExportedProgram is taken as it is, its
range_constraints giving the ranges. Either way the program is lowered by
tracer.Tracer and compiled with symc_module_compile (GPU code when torch.cuda
is available); where the nn.Module's program holds on part of the declared
ranges only (a size branch), parts.py traces each part and the engine gets a
region per part (builder.compile_regions). The engine goes into the engine
cache (cache_dir(): SYMC_CACHE_DIR, else ~/.cache/symc/engines), under a key
hashed from the saved modules (graph, weights, symbols with their ranges; each
region's condition), the options, the GPU architecture and the
library, so compiling the same model for the same ranges again reuses the
engine; the least recently used engines go when the cache passes
SYMC_CACHE_MAX_MB (2048). The engine is wrapped in runtime.EngineModule, which
rebuilds the program's output pytree. torch_tensorrt.compile's spellings (ir=,
arg_inputs=, kwarg_inputs=, enabled_precisions=, one Input not in a list) map
onto the same path; its other options are refused by name.
"""
import contextlib
import hashlib
import inspect
import itertools
import os
import re
import stat
import tempfile
import warnings

import torch
import torch.utils._pytree as pytree

from . import _lib
from ._lib import SymcError
from .torch_module import EngineModule
from .shape_env import (code_guard_every_symbol, drop_small_size_branches, forcing_small, guard_state,
                        record_guard_sources, set_guard_state, shape_env_of, small_size_branches, source_names)
from .tracer import Tracer
from .parts import finish_parts, trace_parts

_counter = itertools.count()


class Input:
    """One model input: a static `shape`, or min_shape/opt_shape/max_shape (opt defaults to min).
    dim_names optionally names the dynamic dims ({0: "B"}); the name shows in range errors.
    multiple_of declares dynamic dims that take only multiples ({1: 8}: dim 1 is a multiple of 8), for a
    reshape or split that needs it; the range's ends round to multiples."""

    def __init__(self, min_shape=None, opt_shape=None, max_shape=None, dtype=torch.float32, shape=None,
                 dim_names=None, name=None, multiple_of=None):
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
        self.multiple_of = {}
        for d, m in dict(multiple_of or {}).items():
            if not isinstance(d, int) or not 0 <= d < len(self.min_shape):
                raise SymcError(f"symc.Input: multiple_of key {d!r} is not a dim of shape {self.min_shape} "
                                f"(0 to {len(self.min_shape) - 1})", code="invalid_arg")
            if isinstance(m, bool) or not isinstance(m, int) or m < 1:
                raise SymcError(f"symc.Input: multiple_of={{{d}: {m!r}}}: the multiple must be an int >= 1",
                                code="invalid_arg")
            if self.min_shape[d] == self.max_shape[d]:
                raise SymcError(f"symc.Input: multiple_of={{{d}: {m}}}: dim {d} is static ({self.min_shape[d]}); "
                                f"multiple_of is for a dynamic dim (min_shape < max_shape)", code="invalid_arg")
            self.multiple_of[d] = m

    @classmethod
    def from_tensor(cls, t, **kw):
        """A static Input of t's shape and dtype (torch_tensorrt.Input.from_tensor)."""
        return cls(shape=tuple(t.shape), dtype=t.dtype, **kw)

    def __repr__(self):
        extra = f", multiple_of={self.multiple_of}" if self.multiple_of else ""
        return f"symc.Input(min_shape={self.min_shape}, opt_shape={self.opt_shape}, max_shape={self.max_shape}, " \
               f"dtype={self.dtype}{extra})"

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


_warned = set()


def _warn_once(what, text):
    if what not in _warned:
        _warned.add(what)
        warnings.warn(text, stacklevel=3)


def cache_dir():
    """Where compiled engines go: SYMC_CACHE_DIR, else $XDG_CACHE_HOME/symc/engines (~/.cache/symc/engines);
    None when SYMC_CACHE_DIR is "off" or empty (the C side's rule too) or the folder cannot be made (then a build
    goes to a temporary folder, said once)."""
    d = os.environ.get("SYMC_CACHE_DIR")
    if d is not None and d in ("", "off"):
        return None
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "symc", "engines")
    if os.path.exists(d) and not os.path.isdir(d):
        raise SymcError(f"the engine cache SYMC_CACHE_DIR={d!r} is a file, not a folder: point SYMC_CACHE_DIR at a "
                        f"folder, or set it to off", code="io")
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)  # a new folder is the user's alone (only the last part)
    except OSError as e:
        _warn_once(("mkdir", d), f"symc: the engine cache {d!r} cannot be created ({e.strerror}); building without "
                                 f"the cache (set SYMC_CACHE_DIR to a writable folder, or to off)")
        return None
    return d


def _cache_limit():
    """The cache's size bound in bytes: SYMC_CACHE_MAX_MB (default 2048)."""
    v = os.environ.get("SYMC_CACHE_MAX_MB", "2048")
    try:
        mb = float(v)
        if not mb >= 0:
            raise ValueError
        return int(mb * (1 << 20))
    except (ValueError, OverflowError):
        raise SymcError(f"SYMC_CACHE_MAX_MB={v!r} is not a number of megabytes (a finite number >= 0, e.g. 2048)",
                        code="invalid_arg") from None


# A cache entry is NAME_KEY.symx and NAME_KEY.symx.key, the key file holding the format, the key and a
# digest binding the two: SHA-256 over the key and then the engine file's bytes, written after the
# engine. A hit is an entry whose key file names its key and whose binding holds for that key and the
# engine as it is: an engine copied or linked onto another model's name, truncated or edited, and a key
# file that names the key beside another engine's plain digest (or a key file of another model, or of an
# older format) are rebuilt, never trusted. This guards against accidents, not against a person who
# writes to the folder on purpose: such a person could as well replace the library, so the folder is
# made private (0700) when symc creates it. Only such entries are the cache's: trimming removes nothing
# else from the folder (a user's own engine kept there stays).
_ENTRY = re.compile(r"^[A-Za-z0-9_.-]+_[0-9a-f]{32}\.symx$")
_KEY_FORMAT = "symc-cache-2"


def _file_digest(path, prefix=b""):
    """SHA-256 of prefix and then the file's bytes."""
    h = hashlib.sha256(prefix)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _binding(path, key):
    """The key file's digest for key and the engine at path."""
    return _file_digest(path, f"{_KEY_FORMAT} {key}\n".encode())


def _read_regular(path, limit):
    """The bytes of the regular file at path (not through a symlink; a FIFO or device is never
    opened for real: O_NONBLOCK, then a type check), at most limit of them; None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_size > limit:  # a folder, FIFO or device: never read
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as f:
        return f.read(limit + 1)


def _entry_valid(path, key):
    """The entry at path is the cache's, for key when given (any key when None): its key file and its
    engine both regular files, not symlinks, the key file naming key and the binding of key and engine."""
    text = _read_regular(path + ".key", 4096)
    try:
        fmt, k, digest = text.decode().split()
        return fmt == _KEY_FORMAT and (key is None or k == key) and os.path.isfile(path) and \
            not os.path.islink(path) and _binding(path, k) == digest
    except (AttributeError, OSError, UnicodeDecodeError, ValueError):
        return False


def _create_exclusive(stem):
    """A new file stem.PID.N.tmp, created here (O_EXCL: a name already taken, by a planted symlink or
    FIFO say, is skipped, never followed or opened); (path, fd)."""
    for _ in range(1000):
        tmp = f"{stem}.{os.getpid()}.{next(_counter)}.tmp"
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            continue
    raise OSError(f"no free temporary name beside {stem!r} after 1000 tries")


def _entry_remove(path):
    for q in (path, path + ".key", path + ".json"):
        try:
            os.remove(q)
        except OSError:
            pass


def _cache_trim(d, keep):
    """Removes the least recently used engines of the cache's own until it fits its bound; never `keep`,
    never a file the cache did not write."""
    limit = _cache_limit()
    files = []
    for f in os.listdir(d):
        p = os.path.join(d, f)
        if not _ENTRY.match(f) or not os.path.isfile(p + ".key"):
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue  # another process removed it
        files.append((st.st_mtime, st.st_size, p))
    total = sum(sz for _, sz, _ in files)
    for _, sz, p in sorted(files):
        if total <= limit:
            break
        if os.path.abspath(p) == os.path.abspath(keep):
            continue
        if _entry_valid(p, None):
            _entry_remove(p)
        total -= sz


# SYMC_* environment variables that do not change what a build writes (the cache, the library's path, the
# runtime's switches), so not part of an engine's cache key
_ENV_NOT_IN_KEY = {"SYMC_CACHE_DIR", "SYMC_CACHE_MAX_MB", "SYMC_LIB", "SYMC_SAVE_SYMIR", "SYMC_STRICT",
                   "SYMC_CUDA_GRAPHS"}


def _cache_key(parts, gpu, precision, fp32_layers):
    """sha256 of what decides the engine: each region's module as saved (its graph, weights, symbols and their
    ranges) and its condition (one module with no condition: the module alone, as before regions), the compile
    options, the GPU's architecture, the library (version, size, mtime) and the build's switches in the
    environment (SYMC_ATTENTION=mma and the like)."""
    h = hashlib.sha256()
    with tempfile.TemporaryDirectory(prefix="symc_key_") as t:
        for k, (m, cond) in enumerate(parts):
            if len(parts) > 1 or cond:
                h.update(f"region {k} of {len(parts)}: {cond or ''}\n".encode())
            p = os.path.join(t, f"m{k}.symir")
            m.save(p)
            with open(p, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
    arch = ""
    if gpu:
        try:
            arch = "sm_%d%d" % torch.cuda.get_device_capability()
        except Exception:  # noqa: BLE001
            arch = "?"
    lib = _lib.find_library()
    try:
        st = os.stat(lib)
        libid = f"{st.st_size}:{st.st_mtime_ns}"
    except (OSError, TypeError):
        libid = str(lib)
    # the build's switches in the environment (SYMC_ATTENTION=mma and the like choose kernels): every SYMC_*
    # variable but those that cannot change the engine's bytes
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("SYMC_") and k not in _ENV_NOT_IN_KEY)
    h.update(repr((gpu, precision, fp32_layers, arch, libid, env)).encode())
    return h.hexdigest()[:32]


def _compile_parts_to(parts, out, gpu, precision, fp32_layers):
    """One module and no condition: Module.compile (today's single-graph engine, byte for byte); else one
    engine with a region per (module, condition) (builder.compile_regions)."""
    if len(parts) == 1 and not parts[0][1]:
        parts[0][0].compile(out, gpu=gpu, precision=precision, fp32_layers=fp32_layers)
        return
    from . import builder
    compile_regions = getattr(builder, "compile_regions", None)
    if compile_regions is None:
        raise SymcError(f"this symc cannot build an engine of {len(parts)} regions (symc.builder has no "
                        f"compile_regions): the model traces to {len(parts)} programs over the declared ranges",
                        code="unsupported")
    compile_regions(list(parts), out, gpu=gpu, precision=precision, fp32_layers=fp32_layers)


def _compile_into(m, d, path, gpu, precision, fp32_layers):
    """Compiles m (a list of (module, condition)) to the cache entry path (the engine, then its key file), or
    where the cache is off or cannot be written, into a temporary folder of its own (said once); returns the engine's path."""
    if path:
        made = []
        try:
            # the folder takes files (compile reports a read-only one as SymcError); every temporary is
            # created exclusively, so nothing planted at a predictable name is followed
            tmp, fd = _create_exclusive(path)
            made.append(tmp)
            os.close(fd)
            _compile_parts_to(m, tmp, gpu, precision, fp32_layers)
            key = os.path.basename(path)[-37:-5]
            digest = _binding(tmp, key)
            ktmp, fd = _create_exclusive(path)
            made.append(ktmp)
            with os.fdopen(fd, "w") as f:
                f.write(f"{_KEY_FORMAT} {key} {digest}\n")
            os.replace(tmp, path)  # atomic: another process never reads half an engine
            os.replace(ktmp, path + ".key")
            return path
        except OSError as e:
            _warn_once(("write", d), f"symc: the engine cache {d!r} cannot be written ({e.strerror or e}); "
                                     f"building without the cache")
        finally:
            for t in made:
                if os.path.lexists(t):
                    os.remove(t)
    out = os.path.join(tempfile.mkdtemp(prefix="symc_engine_"), "model.symx")
    _compile_parts_to(m, out, gpu, precision, fp32_layers)
    return out


def gpu_available():
    try:
        return torch.cuda.is_available()
    except Exception:
        return False


def build_engine(ep, name="model", gpu=None, input_opts=None, dim_names=None, ranges=None, precision=None,
                 input_ranges=None, fp32_layers=None, multiples=None, multiple_hints=False):
    """Lower an ExportedProgram and compile it; returns an EngineModule. The engine lands in the cache
    (cache_dir()) under a key of the module and options, and a second build of the same module for the
    same ranges and options reuses it instead of compiling again."""
    tr = Tracer(ep, name, input_opts=input_opts, dim_names=dim_names, ranges=ranges, input_ranges=input_ranges,
                multiples=multiples, multiple_hints=multiple_hints)
    return engine_module([(tr.run(), None)], tr, name, gpu, precision, fp32_layers)


def engine_module(parts, tr, name, gpu=None, precision=None, fp32_layers=None):
    """The engine of parts ([(module, condition text or None)]: one region each; one module with no condition
    is today's single-graph engine) from the cache or compiled into it, as an EngineModule with tr's (a
    Tracer of one of them) input names and output structure. Closes the modules."""
    if gpu is None:
        gpu = gpu_available()
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:80]  # a file name, whatever the model's name holds
    d = cache_dir()
    try:
        limit = _cache_limit() if d else None  # a bad SYMC_CACHE_MAX_MB is said before the build
        key = _cache_key(parts, gpu, precision, fp32_layers)
        path = os.path.join(d, f"{safe}_{key}.symx") if d else None
        if path and os.environ.get("SYMC_SAVE_SYMIR"):
            for k, (m, _) in enumerate(parts):
                m.save(path[:-5] + (f".{k}" if len(parts) > 1 else "") + ".symir")
        if path and _entry_valid(path, key):
            os.utime(path)  # recently used: the last the trim removes
        else:
            if path and (os.path.lexists(path) or os.path.lexists(path + ".key")):
                _entry_remove(path)  # not this model's engine, or damaged: rebuilt
            path = _compile_into(parts, d, path, gpu, precision, fp32_layers)
    finally:
        for m, _ in parts:
            m.close()
    if d and limit is not None and os.path.dirname(path) == d:
        _cache_trim(d, path)
    spec = tr.ep.call_spec.out_spec

    def unflatten(outs):
        return pytree.tree_unflatten(list(outs), spec) if spec is not None else \
            (outs[0] if len(outs) == 1 else tuple(outs))
    mod = EngineModule(path, tr.input_names, unflatten, gpu=gpu, source=name)
    mod.input_names = tr.input_names
    mod.out_spec = spec
    return mod


def _arg_names(model, n):
    try:
        params = [p for p in inspect.signature(model.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params][:n]
    except (TypeError, ValueError):
        names = []
    return names + [f"input{i}" for i in range(len(names), n)]


# torch_tensorrt.compile's ir= values symc takes: the first two export with torch.export (symc's own path)
_IRS = ("default", "dynamo", "torch_compile")
_PRECISION_DTYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}


def _precision(precision, enabled_precisions):
    """The precision name from symc's precision= and/or torch_tensorrt's enabled_precisions= (a set of
    dtypes: {torch.float16} -> "fp16", {torch.float32, torch.bfloat16} -> "bf16")."""
    if enabled_precisions is None:
        return precision or "fp32"
    ep = enabled_precisions
    if isinstance(ep, (torch.dtype, str)):
        ep = {ep}
    names = set()
    for p in ep:
        if isinstance(p, str) and p in ("fp32", "fp16", "bf16"):
            names.add(p)
        elif p in _PRECISION_DTYPES:
            names.add(_PRECISION_DTYPES[p])
        else:
            raise SymcError(f"enabled_precisions: {p} is not supported (symc takes torch.float32, torch.float16 "
                            f"and torch.bfloat16; int8 and fp8 are not implemented)", code="unsupported")
    half = names - {"fp32"}
    if len(half) > 1:
        raise SymcError(f"enabled_precisions {sorted(names)}: symc stores one half type per engine; give "
                        f"torch.float16 or torch.bfloat16, not both", code="unsupported")
    chosen = half.pop() if half else "fp32"
    if precision is not None and precision != chosen:
        raise SymcError(f"precision={precision!r} and enabled_precisions={set(ep)} disagree; give one",
                        code="invalid_arg")
    return chosen


def _as_list(x, what):
    if x is None:
        return None
    if isinstance(x, (Input, torch.Tensor)):
        return [x]  # one input, not in a list (torch_tensorrt accepts that)
    if isinstance(x, dict):
        raise SymcError(f"{what} is a dict; give keyword inputs as kwarg_inputs={{name: symc.Input(...)}}",
                        code="invalid_arg")
    try:
        return list(x)
    except TypeError:
        raise SymcError(f"{what} is a {type(x).__name__}; give a symc.Input, a tensor, or a list of them",
                        code="invalid_arg") from None


def _forward_params(model):
    try:
        return [p for p in inspect.signature(model.forward).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return []


def _merge_kwarg_inputs(model, args, kwarg_inputs):
    """kwarg_inputs placed at their forward parameters' positions after the positional inputs: symc
    engines take positional inputs. A gap (a parameter between them with no input) is an error."""
    if not kwarg_inputs:
        return args
    params = _forward_params(model)
    names = [p.name for p in params]
    slots = list(args)
    placed = {}
    for k, v in kwarg_inputs.items():
        if k not in names:
            raise SymcError(f"kwarg_inputs['{k}']: forward has no such parameter (its parameters: "
                            f"{', '.join(names) or 'none'})", code="invalid_arg")
        i = names.index(k)
        if i < len(args):
            raise SymcError(f"kwarg_inputs['{k}'] is parameter {i} of forward, which an arg_inputs entry gives "
                            f"already", code="invalid_arg")
        placed[i] = v
    for i in range(len(args), len(args) + len(placed)):
        if i not in placed:
            missing = names[i] if i < len(names) else f"#{i}"
            raise SymcError(f"kwarg_inputs give {', '.join(repr(names[j]) for j in sorted(placed))}, but forward's "
                            f"parameter '{missing}' between them has no input: give it too (symc engines take "
                            f"every input up to the last one given)", code="unsupported")
        v = placed[i]
        if isinstance(v, Input) and v.name is None:
            v.name = names[i]
        slots.append(v)
    return slots


def _export_error(model, specs, names, e):
    """torch.export's error with symc's context: every input's declared shape, and the static dims whose
    size the message quotes (the likely wrong one)."""
    msg = str(e).strip()
    first = msg.splitlines()[0] if msg else type(e).__name__
    nums = set(int(x) for x in re.findall(r"(?<![\w.])(\d+)(?![\w.])", msg))
    decl, suspects = [], []
    for i, (spec, nm) in enumerate(zip(specs, names)):
        shape = ", ".join(str(lo) if lo == hi else f"{lo}..{hi}" for lo, hi in zip(spec.min_shape, spec.max_shape))
        decl.append(f"'{nm}' [{shape}]")
        for d, (lo, hi) in enumerate(zip(spec.min_shape, spec.max_shape)):
            if lo == hi and lo in nums and lo > 1:
                suspects.append(f"input '{nm}' (argument {i}) dim {d} = {lo}")
    hint = f"; the message names the static size of {', '.join(suspects)}: check it against the model" \
        if suspects else "; check each input's static dims against what the model expects"
    return SymcError(f"torch.export of {type(model).__name__} failed with the declared inputs "
                     f"({', '.join(decl)}): {type(e).__name__}: {first}{hint}", code="invalid_arg")


def compile(model, inputs=None, example_inputs=None, *, ir="default", arg_inputs=None, kwarg_inputs=None,
            enabled_precisions=None, gpu=None, precision=None, name=None, fp32_layers=None, **options):
    """Compile for dimension ranges; returns a torch.nn.Module running the symc engine.

    symc.compile(model, inputs=[symc.Input(min_shape=, opt_shape=, max_shape=, dtype=)])
    symc.compile(model, symc.Input(...))                # one input, as torch_tensorrt takes it
    symc.compile(exported_program, example_inputs)   # honours the program's range_constraints

    torch_tensorrt.compile's spellings: ir="default"/"dynamo" (torch.export, as above) or "torch_compile"
    (torch.compile(model, backend="symc"), dims from mark_dynamic), arg_inputs= (= inputs),
    kwarg_inputs={name: Input} (placed at forward's parameters), enabled_precisions={torch.float16}
    (= precision="fp16"). Other torch_tensorrt options are refused by name.

    precision "fp16"/"bf16": weights and activations stored in half (the precision pass; inputs and
    outputs keep the model's dtypes), fp32 islands per the target, fp32_layers (node/op names) and,
    for fp16, the range calibration. A model.half() or model.to(torch.bfloat16) compiles as it is.
    """
    if options:
        raise SymcError(f"symc.compile: {', '.join(sorted(options))}: not supported (symc takes ir, inputs, "
                        f"arg_inputs, kwarg_inputs and enabled_precisions of torch_tensorrt.compile, and its own "
                        f"precision, fp32_layers, gpu and name)", code="unsupported")
    if not isinstance(ir, str) or ir not in _IRS:
        raise SymcError(f"ir={ir!r} is not supported: symc compiles through torch.export (ir='dynamo' or "
                        f"'default') or torch.compile (ir='torch_compile')", code="unsupported")
    if arg_inputs is not None and inputs is not None:
        raise SymcError("give inputs= or arg_inputs=, not both (they are the same)", code="invalid_arg")
    inputs = _as_list(arg_inputs if arg_inputs is not None else inputs, "inputs")
    if kwarg_inputs is not None and not isinstance(kwarg_inputs, dict):
        raise SymcError(f"kwarg_inputs is a {type(kwarg_inputs).__name__}; give a dict {{name: symc.Input(...)}}",
                        code="invalid_arg")
    precision = _precision(precision, enabled_precisions)
    # "fp16" -> SYMC_PRECISION_FP16, from the library's table
    table = sorted(_lib.constants().items(), key=lambda kv: kv[1])
    precisions = {k[len("SYMC_PRECISION_"):].lower(): v for k, v in table if k.startswith("SYMC_PRECISION_")}
    prec = precisions.get(precision) if isinstance(precision, str) else None
    if prec is None:
        names = [f"'{p}'" for p in precisions]
        raise SymcError(f"precision {precision!r}: use {', '.join(names[:-1])} or {names[-1]}", code="invalid_arg")
    if ir == "torch_compile":
        if isinstance(model, torch.export.ExportedProgram):
            raise SymcError("ir='torch_compile' takes an nn.Module, not an ExportedProgram", code="invalid_arg")
        specs = [s for s in (inputs or []) + list((kwarg_inputs or {}).values()) if isinstance(s, Input)]
        if any(s.min_shape != s.max_shape for s in specs) or prec != precisions["fp32"] or fp32_layers:
            raise SymcError("ir='torch_compile' takes its dynamic dims from torch._dynamo.mark_dynamic(x, dim, "
                            "min=, max=) on the tensors it is called with, and compiles in fp32: for declared "
                            "ranges or half precision use ir='dynamo'", code="unsupported")
        return torch.compile(model, backend="symc")
    if isinstance(model, torch.export.ExportedProgram):
        ep = model
        ex = example_inputs if example_inputs is not None else inputs
        if isinstance(ex, (torch.Tensor, Input)):
            ex = [ex]
        opts, mults = {}, {}
        if ex is not None and all(isinstance(t, torch.Tensor) for t in pytree.tree_leaves(ex)):
            for i, t in enumerate(pytree.tree_leaves(ex)):
                for d, s in enumerate(t.shape):
                    opts[(i, d)] = int(s)
        elif ex is not None:
            for i, t in enumerate(ex):
                if isinstance(t, Input):
                    for d, s in enumerate(t.opt_shape):
                        opts[(i, d)] = s
                    for d, m in t.multiple_of.items():
                        mults[(i, d)] = m
        return build_engine(ep, name or "exported", gpu, input_opts=opts, precision=prec, fp32_layers=fp32_layers,
                            multiples=mults, multiple_hints=True)
    if not isinstance(model, torch.nn.Module):
        raise SymcError(f"symc.compile takes an nn.Module or a torch.export.ExportedProgram, not "
                        f"{type(model).__name__}", code="invalid_arg")
    if inputs is None and not kwarg_inputs:
        raise SymcError("symc.compile(model, inputs=[symc.Input(...)]): inputs are required for an nn.Module "
                        "(or export it yourself and pass the ExportedProgram)", code="invalid_arg")
    inputs = _merge_kwarg_inputs(model, inputs or [], kwarg_inputs)
    device = next(itertools.chain((p.device for p in model.parameters()), (b.device for b in model.buffers()),
                                  [torch.device("cpu")]))
    params = _forward_params(model)
    if params and len(inputs) > len(params) and not any(
            p.kind == p.VAR_POSITIONAL for p in inspect.signature(model.forward).parameters.values()):
        raise SymcError(f"{len(inputs)} inputs given, but {type(model).__name__}.forward takes "
                        f"{len(params)} ({', '.join(p.name for p in params)})", code="invalid_arg")
    opts, names, ranges, mults = {}, {}, {}, {}
    arg_names = _arg_names(model, len(inputs))
    specs = []
    for i, spec in enumerate(inputs):
        if isinstance(spec, torch.Tensor):
            spec = Input(shape=tuple(spec.shape), dtype=spec.dtype)
        if not isinstance(spec, Input):
            raise SymcError(f"inputs[{i}] is a {type(spec).__name__}; give symc.Input or a tensor", code="invalid_arg")
        specs.append(spec)
        base = spec.name or arg_names[i]
        for d, (lo, o, hi) in enumerate(zip(spec.min_shape, spec.opt_shape, spec.max_shape)):
            opts[(i, d)] = o
            if lo != hi:
                nm = spec.dim_names.get(d, f"{base}_dim{d}")
                names[(i, d)] = nm
                ranges[(i, d)] = (lo, hi)
        for d, m in spec.multiple_of.items():
            mults[(i, d)] = m
    decl = _Declared(specs, opts, names, ranges, mults, device)
    name = name or type(model).__name__
    # traced in eval mode; afterwards every submodule gets its own mode back (model.train(flag) would set the
    # wrapper's flag on all of them: a detector in eval mode inside a wrapper never put in eval would train)
    modes = [(mm, mm.training) for mm in model.modules()]
    model.eval()
    try:  # torch.export's own errors, with which input and shape
        done = trace_parts(model, decl, name, export_ranges, lambda e: _export_error(
            model, specs, [s.name or arg_names[i] for i, s in enumerate(specs)], e))
    finally:
        for mm, flag in modes:
            mm.training = flag
    return engine_module(finish_parts(done), done[0][1], name, gpu, prec, fp32_layers)


class _Declared:
    """What symc.compile was given for an nn.Module, as parts.py reads it: specs (symc.Input per input),
    opts/names/ranges/mults keyed by (input, dim) (ranges and names: the dynamic dims), device."""

    def __init__(self, specs, opts, names, ranges, mults, device):
        self.specs, self.opts, self.names, self.ranges, self.mults = specs, opts, names, ranges, mults
        self.device = device


def load(path, gpu=None):
    """An engine saved by EngineModule.save (or written by `symc compile`) as a module to call like the
    compiled one: the output structure comes from the .json saved next to it, when there is one."""
    import json
    meta = {}
    side = str(path) + ".json"
    if os.path.exists(side):
        try:
            with open(side) as f:
                meta = json.load(f)
            if not isinstance(meta, dict):
                raise ValueError("not an object")
        except (OSError, ValueError) as e:
            raise SymcError(f"{side} (the output structure saved with {path}) cannot be read ({e}); remove it to "
                            f"load the engine with flat outputs, or save the module again", code="format") from None
        digest = meta.get("engine_sha256")
        if digest is None or not os.path.exists(str(path)) or _file_digest(str(path)) != digest:
            raise SymcError(f"{side} describes another engine than {path} ("
                            f"{'written before sidecars named their engine' if digest is None else 'the engine changed since it was saved'}"
                            f"): its input names and output structure could relabel this engine's outputs. Save the "
                            f"module again, or remove {side} to load the engine with flat outputs",
                            code="format")
    spec = None
    if meta.get("out_spec"):
        spec = pytree.treespec_loads(meta["out_spec"])

    def unflatten(outs):
        return pytree.tree_unflatten(list(outs), spec) if spec is not None else \
            (outs[0] if len(outs) == 1 else tuple(outs))
    if gpu is None:
        gpu = bool(meta.get("gpu", True))  # an engine without GPU code is refused by the runtime in one line
    mod = EngineModule(path, meta.get("input_names"), unflatten, gpu=gpu, source=meta.get("source"))
    mod.input_names = meta.get("input_names") or [n for n, _, _ in mod.engine.inputs]
    mod.out_spec = spec
    return mod


def _batched_nms_traced(boxes, scores, idxs, iou_threshold):
    """torchvision.ops.batched_nms as torchvision computes it for up to 4000 boxes (its coordinate trick: each
    class's boxes moved apart by class * (max coordinate + 1), one nms), without the two Python branches on the
    number of boxes, which is known only at run time: above 4000 torchvision loops over the classes instead (the
    same boxes kept: its own equivalence), and with no boxes it returns an empty result, which the trick gives
    too (nms of no boxes). Only while symc exports a model (_export_patches)."""
    import torchvision
    max_coordinate = boxes.max()
    offsets = idxs.to(boxes) * (max_coordinate + torch.tensor(1).to(boxes))
    return torchvision.ops.nms(boxes + offsets[:, None], scores, iou_threshold)


@contextlib.contextmanager
def _export_patches():
    """What torch.export cannot trace as a library wrote it, replaced by an equivalent while symc exports:
    torchvision's batched_nms branches on a size known only at run time (_batched_nms_traced). Restored after."""
    saved = []
    try:
        import torchvision.ops
        import torchvision.ops.boxes
        for mod in (torchvision.ops.boxes, torchvision.ops):
            if getattr(mod, "batched_nms", None) is not None:
                saved.append((mod, mod.batched_nms))
                mod.batched_nms = _batched_nms_traced
    except Exception:  # noqa: BLE001 - no torchvision: nothing to replace
        pass
    try:
        yield
    finally:
        for mod, fn in saved:
            mod.batched_nms = fn


def _export(model, args, dynamic_shapes):
    """torch.export.export with torch's shape guards turned into runtime asserts (which the tracer drops)
    instead of narrowing the declared ranges, and torchvision's batched_nms traceable (_export_patches)."""
    try:
        with record_guard_sources(), _export_patches():
            return torch.export.export(model, args, dynamic_shapes=dynamic_shapes,
                                       prefer_deferred_runtime_asserts_over_guards=True)
    except TypeError as e:  # a torch without the flag
        if "prefer_deferred_runtime_asserts_over_guards" not in str(e):
            raise
        with _export_patches():
            return torch.export.export(model, args, dynamic_shapes=dynamic_shapes)


def export_ranges(model, args, dims):
    """torch.export for declared ranges, without letting torch's guards narrow them.

    dims: per positional arg, None or {dim: (name, lo, hi)}. First one named Dim(min, max) per dim, with
    guards turned into runtime asserts (symc ignores those: it infers every shape itself over the whole
    declared range, and its compile fails with a clear error where a declared size is really invalid).
    Where torch raises a constraint violation because it finds declared dims equal (input_ids' and
    attention_mask's [B, S]) and suggests "b1 = b0", export again with one named Dim for each group of equal
    dims (twice at most). Where torch still raises, export with Dim.AUTO(min, max), which takes torch's
    relations as they come but assumes sizes 0 and 1 away (min 2); the caller hands the declared ranges to
    the tracer (input_ranges), which puts them back on the program's symbols where that is sound."""
    named = tuple(None if ds is None else {d: torch.export.Dim(nm, min=lo, max=hi) for d, (nm, lo, hi) in ds.items()}
                  for ds in dims)
    # guard sources are per model: torch reuses symbol names (s77) from one export to the next
    set_guard_state()
    try:
        return _small_branches(model, args, named, _export(model, args, named), dims)
    except Exception as e:  # noqa: BLE001
        first = e
        if "onstraint" not in str(e) and "specialized" not in str(e) and "must always be equal" not in str(e):
            raise
    # torch found declared dims equal (input_ids' and attention_mask's [B, S]) and suggests "b1 = b0": one
    # named Dim for each such group keeps the declared ranges (Dim.AUTO below would assume sizes 0 and 1
    # away); twice at most, then Dim.AUTO
    state = guard_state()
    err, groups = first, {}
    for _ in range(2):
        shared = _suggested_equal(dims, str(err), groups)
        if shared is None:
            break
        set_guard_state()
        try:
            ep = _export(model, args, shared)
        except Exception as e:  # noqa: BLE001
            err = e
            continue
        return _small_branches(model, args, shared, ep, dims)
    set_guard_state(state)
    auto = getattr(torch.export.Dim, "AUTO", None)
    if auto is None:
        raise first
    loose = tuple(None if ds is None else {d: auto(min=lo, max=hi) for d, (nm, lo, hi) in ds.items()} for ds in dims)
    # where the first trace saw Python code branch on sizes, under symbol names the retry does not share:
    # no 0/1 narrowing of the retry can be taken for torch's assumption alone (Tracer._check_traced_range)
    code_guard_every_symbol()
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


def _suggested_equal(dims, msg, groups):
    """dynamic_shapes with torch's suggested fixes of the form "a = b" between declared dims applied (one named
    Dim for the dims found equal, over the intersection of their declared ranges), added to `groups` ({name:
    representative name}, updated); None where the message suggests no new such fix."""
    names = {nm: (lo, hi) for ds in dims for nm, lo, hi in (ds or {}).values()}
    fixes = re.findall(r"^\s*(\w+) = (\w+)\s*$", msg.split("Suggested fixes:", 1)[1], re.M) \
        if "Suggested fixes:" in msg else []

    def root(nm):
        while groups.get(nm, nm) != nm:
            nm = groups[nm]
        return nm
    new = False
    for a, b in fixes:
        if a in names and b in names and root(a) != root(b):
            groups[root(a)] = root(b)
            new = True
    if not new:
        return None
    rng = {}
    for nm, (lo, hi) in names.items():
        r = rng.setdefault(root(nm), [lo, hi])
        r[0], r[1] = max(r[0], lo), min(r[1], hi)
    if any(lo > hi for lo, hi in rng.values()):
        return None
    dim = {r: torch.export.Dim(r, min=lo, max=hi) for r, (lo, hi) in rng.items()}
    return tuple(None if ds is None else {d: dim[root(nm)] for d, (nm, lo, hi) in ds.items()} for ds in dims)


def _small_branches(model, args, dynamic_shapes, ep, dims):
    """ep, with the branches of shape_env.SMALL_GUARDED that do not change the program dropped.

    torch decides a condition like `q_length > 1` with no guard at all by assuming dynamic sizes are never 0
    or 1, and the tracer refuses a declared range holding the size where such a branch goes the other way
    (the program holds only above it). Most of them change nothing (transformers' `is_causal = q_length > 1
    and attention_mask is None and is_causal`), so the model is exported once more per symbol concerned
    (and once with all of them), those conditions answered as at that size (shape_env.forcing_small): where the
    program's code is the same, the branch did not change it, and its entries go."""
    env = shape_env_of(ep)
    branches = small_size_branches()
    if env is None or not branches:
        return ep
    # {symbol: its declared min}, over the user inputs' dims (several dims of one symbol: the largest, as the
    # tracer intersects their ranges); a symbol with none may be anything
    user = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in ep.graph_signature.user_inputs]
    lows = {}
    for ds, ph in zip(dims, user):
        v = ph.meta.get("val")
        for d, (nm, lo, hi) in (ds or {}).items():
            sz = v.shape[d] if isinstance(v, torch.Tensor) else None
            if isinstance(sz, torch.SymInt) and sz.node.expr.is_Symbol:
                lows[sz.node.expr] = max(lo, lows.get(sz.node.expr, lo))

    def syms(t):
        return {env.replace(x) for x in t[2]}

    def relevant(t):  # every symbol the branch flips with may take the size in its declared range
        return t[1] is env and all(lows.get(x, 0) <= t[3] for x in syms(t))
    concerned = {}  # symbol -> the size its relevant branches flip at (the largest)
    for t in branches:
        for x in (syms(t) if relevant(t) else ()):
            concerned[x] = max(t[3], concerned.get(x, t[3]))
    if not concerned:
        return ep
    # every source torch took a concerned symbol from, also those it later replaced by it (s77 -> s17)
    sources = {x: set() for x in concerned}
    for sym in list(getattr(env, "var_to_sources", {}) or {}):
        r = env.replace(sym)
        if r in sources:
            sources[r] |= source_names(env, sym)
    variants = [{x} for x in concerned] + ([set(concerned)] if len(concerned) > 1 else [])
    code, results = ep.graph_module.code, []
    state = guard_state()
    for vs in variants:
        with forcing_small({nm: concerned[x] for x in vs for nm in sources[x]}):
            set_guard_state()
            try:  # a symbol with no input size to answer it by cannot be tried: it matters
                same = all(sources[x] for x in vs) and _export(model, args, dynamic_shapes).graph_module.code == code
            except Exception:  # noqa: BLE001 - the other branch does not even trace: it matters
                same = False
        results.append((vs, same))
    set_guard_state(state)

    def benign(t):  # every trace that answered it as at its size gave the same program
        s = syms(t)
        tried = [same for vs, same in results if s <= vs]
        return relevant(t) and all(concerned[x] == t[3] for x in s) and tried and all(tried)
    drop_small_size_branches(benign)
    return ep
