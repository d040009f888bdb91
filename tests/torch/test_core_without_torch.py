"""The Python package's core without PyTorch (issue 31): `import symc`, building a model with
symc.builder, compiling it, and running the engine with symc.Session on the reference backend, with
numpy alone. A product that only runs engines does not need torch.

Run either where torch is absent (scripts/test.sh makes a virtual environment with numpy only), or with
--block-torch, which makes `import torch` fail in this process (ctest's python.core_without_torch).
Checks: no torch module is loaded at the end; the results equal numpy's at several in-range shapes,
float32 and int64 inputs, one output or several; a shape out of range and a wrong dtype give SymcError
naming the input; the torch layer's names (symc.compile, symc.Input, ...) raise SymcError saying torch
is needed and what runs without it; CUDAExecutionProvider without torch warns and runs on the reference
backend; symc.runtime.Engine lists the engine's inputs and outputs.
usage: test_core_without_torch.py [--block-torch] path/to/libsymc.so
"""
import os
import pathlib
import sys
import tempfile
import warnings

args = sys.argv[1:]
if "--block-torch" in args:
    args.remove("--block-torch")
    sys.modules["torch"] = None  # `import torch` now raises ImportError, as where it is not installed
if args:
    os.environ["SYMC_LIB"] = os.path.abspath(args[0])
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "frontend" / "torch"))

import numpy as np  # noqa: E402

failures = []


def check(what, ok, detail=""):
    if not ok:
        failures.append(f"{what}: {detail}")
        print(f"FAIL {what}: {detail}", flush=True)


def raises(what, fn, *wants):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        check(what, type(e).__name__ == "SymcError" and all(w in str(e) for w in wants),
              f"wanted SymcError with {wants}, got {type(e).__name__}: {e}")
        return
    check(what, False, "nothing raised")


import symc  # noqa: E402
from symc import _lib, builder  # noqa: E402

# y = relu(x @ w + b) * 2 over x: [B, 4] (B in [1, 16], opt 4); k = idx + 3 over idx: [B] int64
rng = np.random.default_rng(31)
w = rng.standard_normal((4, 3)).astype(np.float32)
b = rng.standard_normal((3,)).astype(np.float32)
m = builder.Module("core")
B = m.symbol("B", 1, 4, 16)
x = m.input("x", _lib.F32, [B, m.const(4)])
idx = m.input("idx", _lib.I64, [B])
h = m.node("matmul", [x, m.constant("w", w)])
h = m.node("add", [h, m.constant("b", b)])
h = m.node("relu", [h])
m.output(m.node("mul", [h, m.constant("two", np.array(2, np.float32))], name="y"))
m.output(m.node("add", [idx, m.constant("three", np.array(3, np.int64))], name="k"))
d = tempfile.mkdtemp(prefix="symc_core_")
eng = os.path.join(d, "core.symx")
m.compile(eng, gpu=False)
m.close()

e = symc.Engine(eng)
check("Engine lists the inputs", [n for n, _, _ in e.inputs] == ["x", "idx"], e.inputs)
sess = symc.Session(eng)
check("Session inputs", [(i.name, i.shape, i.type) for i in sess.get_inputs()] ==
      [("x", ["B", 4], "tensor(float)"), ("idx", ["B"], "tensor(int64)")],
      [(i.name, i.shape, i.type) for i in sess.get_inputs()])
outs = [o.name for o in sess.get_outputs()]
with warnings.catch_warnings():
    warnings.simplefilter("ignore", symc.ReferenceBackendWarning)
    for n in (1, 4, 7, 16):
        xa = rng.standard_normal((n, 4)).astype(np.float32)
        ia = rng.integers(-50, 50, n).astype(np.int64)
        res = dict(zip(outs, sess.run(None, {"x": xa, "idx": ia})))
        want_y = np.maximum(xa @ w + b, 0) * 2
        check(f"B={n}: y", res[outs[0]].dtype == np.float32 and np.allclose(res[outs[0]], want_y, rtol=1e-5,
                                                                             atol=1e-6), res[outs[0]])
        check(f"B={n}: k", res[outs[1]].dtype == np.int64 and np.array_equal(res[outs[1]], ia + 3), res[outs[1]])
    one = sess.run([outs[1]], {"x": np.zeros((2, 4), np.float32), "idx": np.arange(2)})
    check("one output by name", len(one) == 1 and np.array_equal(one[0], np.arange(2) + 3), one)
    raises("out of range", lambda: sess.run(None, {"x": np.zeros((17, 4), np.float32), "idx": np.zeros(17, np.int64)}),
           "symbol B must be in [1, 16]")
    raises("wrong dtype", lambda: sess.run(None, {"x": np.zeros((2, 4)), "idx": np.zeros(2, np.int64)}),
           "input 'x' is float64, the engine takes tensor(float)")
    raises("wrong rank", lambda: sess.run(None, {"x": np.zeros(4, np.float32), "idx": np.zeros(1, np.int64)}),
           "input 'x' has rank 1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = symc.Session(eng, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        r = g.run([outs[1]], {"x": np.zeros((3, 4), np.float32), "idx": np.arange(3)})
    torchless = "torch" not in sys.modules or sys.modules["torch"] is None
    check("CUDAExecutionProvider without torch: warned, ran on the reference backend",
          g.get_providers() == ["CPUExecutionProvider"] and np.array_equal(r[0], np.arange(3) + 3) and
          (not torchless or any("torch is not installed" in str(c.message) for c in caught)),
          [str(c.message) for c in caught])
# bfloat16: numpy has no such dtype; an ml_dtypes bfloat16 array goes in, outputs come back as float32 (exact),
# and a float32 or uint16 array for a bfloat16 input is refused, never reinterpreted
mb = builder.Module("bf")
Bb = mb.symbol("B", 1, 2, 8)
xb = mb.input("x", _lib.BF16, [Bb])
mb.output(mb.node("add", [xb, xb], name="y"))
engb = os.path.join(d, "bf.symx")
mb.compile(engb, gpu=False)
mb.close()
sb = symc.Session(engb)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", symc.ReferenceBackendWarning)
    for bad in (np.array([1, 2], np.uint16), np.array([1.5, 2], np.float32)):
        raises(f"a {bad.dtype} array for a bfloat16 input", lambda: sb.run(None, {"x": bad}),
               f"input 'x' is {bad.dtype}, the engine takes tensor(bfloat16)")
    try:
        import ml_dtypes
    except ImportError:
        ml_dtypes = None
    if ml_dtypes is not None:
        (yb,) = sb.run(None, {"x": np.array([1.5, -3, 2.25], ml_dtypes.bfloat16)})
        check("bfloat16 in, float32 out", yb.dtype == np.float32 and np.array_equal(yb, [3, -6, 4.5]), yb)
# a size known only after the run: nonzero(x) through the builder, Session returns arrays at their real shapes
mz = builder.Module("nz")
Bz = mz.symbol("B", 1, 2, 8)
xz = mz.input("x", _lib.F32, [Bz, mz.const(3)])
mz.output(mz.node("nonzero", [xz], name="idx"))
engz = os.path.join(d, "nz.symx")
mz.compile(engz, gpu=False)
mz.close()
sz = symc.Session(engz)
check("a produced size in the output's shape", sz.get_outputs()[0].shape == [2, "u0"], sz.get_outputs()[0].shape)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", symc.ReferenceBackendWarning)
    for xa in (np.zeros((2, 3), np.float32), np.array([[0, 1, 0], [2, 0, 3]], np.float32), np.ones((8, 3), np.float32)):
        (iz,) = sz.run(None, {"x": xa})
        check(f"nonzero of {xa.shape} with {np.count_nonzero(xa)} set", iz.dtype == np.int64 and
              np.array_equal(iz, np.array(np.nonzero(xa))), iz)
for name in ("compile", "Input", "load", "EngineModule", "symc_backend"):
    if torchless:
        raises(f"symc.{name} without torch", lambda: getattr(symc, name), "needs PyTorch", "symc.Session")
check("no torch loaded", torchless, "torch was imported by the core")
print(f"core without torch: {len(failures)} failures")
sys.exit(1 if failures else 0)
