#!/usr/bin/env python3
"""The symc driver on ONNX models, as a trtexec user meets it (issue 18): trtexec's spellings
(--onnx, --minShapes/--optShapes/--maxShapes, --saveEngine, --loadEngine, --noTF32) next to symc's,
--flag=value and --flag value alike; refusals for names the engine or model lacks (--output, --shapes)
that list what there is; one file-name prefix per message; and --multiple: a reshape that needs
S % 8 == 0 fails with a fix naming the exact flag, and following that advice builds an engine that
runs and matches numpy. Every dtype through .npy (issue 29): for each symc dtype an engine with an
input of that dtype (y = x + x, or not x for bool, and z = x) runs on numpy-written files (little-endian,
big-endian and Fortran order) and its outputs equal numpy's exactly, each written with its own descr (bf16
widened to f32); a file of another dtype is refused naming the input, the file and both dtypes, except the
documented conversions (f32 rounded for an f16/bf16 input, uint16 bit patterns for bf16). An If on a size
gives a regions engine through every command; a NonZero model (a size known only after the run) builds with
and without GPU code, lists its produced size in inspect, and runs with outputs written at their real shapes; so does a TopK whose k is a graph input (read at run
time), and a k above the axis dim or below 0 is refused; a NonZero whose count alone sizes an output keeps
its producer.

usage: cli_onnx_test.py SYMC TMPDIR
"""
import os
import re
import subprocess
import sys

import ml_dtypes  # a dependency of onnx: NumPy's bfloat16
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

symc, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*args, want=0):
    p = subprocess.run([symc, *args], capture_output=True, text=True)
    out = p.stdout + p.stderr
    check(p.returncode == want, f"symc {' '.join(args)}: exit {p.returncode}, wanted {want}: {out}")
    return out


def path(name):
    return os.path.join(tmp, name)


def save(nodes, inputs, outputs, inits, name):
    g = h.make_graph(nodes, name, inputs, outputs, inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path(name))
    return path(name)


relu = save([h.make_node("Relu", ["x"], ["y"])], [h.make_tensor_value_info("x", T.FLOAT, ["B", 4])],
            [h.make_tensor_value_info("y", T.FLOAT, None)], [], "relu.onnx")
# y = reshape(x, [0, -1, 128]) from x[B, S, 16]: needs S*16 % 128 == 0, i.e. S a multiple of 8
reshape = save([h.make_node("Reshape", ["x", "shp"], ["y"], name="to_rows")],
               [h.make_tensor_value_info("x", T.FLOAT, ["B", "S", 16])],
               [h.make_tensor_value_info("y", T.FLOAT, None)],
               [h.make_tensor("shp", T.INT64, [3], [0, -1, 128])], "reshape8.onnx")


def npy_roundtrip(engine, x, *extra):
    np.save(path("x.npy"), x)
    out = run("run", *extra, "--input", f"x={path('x.npy')}", "--output", f"y={path('y.npy')}")
    return out, np.load(path("y.npy"))


# ---- trtexec spellings, --flag=value and --flag value ----
e1 = path("relu_trt.symx")
out = run("compile", f"--onnx={relu}", "--minShapes=x:1x4", "--optShapes", "x:2x4", "--maxShapes=x:8x4",
          "--noTF32", "--no-gpu", f"--saveEngine={e1}")
check("wrote" in out, f"trtexec spellings compile: {out}")
x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
np.save(path("x.npy"), x)
for load in ([f"--loadEngine={e1}"], ["--loadEngine", e1], [e1]):
    if os.path.exists(path("y.npy")):
        os.remove(path("y.npy"))
    out = run("run", *load, "--input", f"x={path('x.npy')}", f"--output=y={path('y.npy')}")
    check(os.path.exists(path("y.npy")) and np.array_equal(np.load(path("y.npy")), np.maximum(x, 0)),
          f"run {load}: relu output differs: {out}")
out = run("bench", f"--loadEngine={e1}", "--shapes=x:3x4", "--backend", "ref", "--iters=1", "--warmup", "0")
check("x:3x4" in out or "3x4" in out, f"bench --loadEngine: {out}")
# the same engine with symc's own spellings: the same symbols
e2 = path("relu.symx")
run("compile", relu, "--min-shapes", "x:1x4", "--opt-shapes=x:2x4", "--max-shapes", "x:8x4", "--no-gpu", "-o", e2)
i1, i2 = run("inspect", e1), run("inspect", e2)
check("B in [1, 8] opt 2" in i1 and "B in [1, 8] opt 2" in i2, f"inspect of both engines: {i1}\n{i2}")
out = run("compile", relu, "--shapes", "x:1x4,2x4,8x4", "--tf32", "--noTF32", "-o", path("t.symx"), want=2)
check("--noTF32 and --tf32 exclude each other" in out, f"--noTF32 --tf32: {out}")
out = run("run", e1, "--shapes", "x:2x4", "--fp16", want=2)
check("the precision is chosen when the engine is compiled" in out, f"run --fp16: {out}")

# ---- names the engine or model lacks: refused, listing what there is ----
if os.path.exists(path("q.npy")):
    os.remove(path("q.npy"))
out = run("run", e1, "--shapes", "x:2x4", "--output", f"q={path('q.npy')}", want=1)
check("no output named 'q' (outputs: 'y')" in out and not os.path.exists(path("q.npy")), f"--output q: {out}")
out = run("run", e1, "--shapes", "x:2x4", "--output", "y", want=2)
check("--output needs NAME=FILE.npy" in out, f"--output without '=': {out}")
out = run("run", e1, "--shapes", "z:2x4", want=1)
check("no input named 'z' (inputs: 'x')" in out, f"run --shapes z: {out}")
out = run("bench", e1, "--shapes", "z:2x4", "--backend", "ref", want=1)
check("no input named 'z' (inputs: 'x')" in out, f"bench --shapes z: {out}")
out = run("compile", relu, "--shapes", "z:1x4,2x4,8x4", "--no-gpu", "-o", path("t.symx"), want=1)
check("no input named 'z' (inputs: 'x')" in out, f"compile --shapes z: {out}")
# one prefix: the model's path once, never "model.onnx: model.onnx: ..."
check(out.count("relu.onnx") == 1 and out.count("\n") == 1, f"compile error names the file once: {out}")

# ---- --multiple: the error's own advice makes the build pass ----
shapes = "x:1x8x16,2x16x16,4x64x16"
e3 = path("reshape8.symx")
out = run("compile", reshape, "--shapes", shapes, "--no-gpu", "-o", e3, want=1)
check(out.count("reshape8.onnx") == 1, f"divisibility error names the file once: {out}")
m = re.search(r"fix: declare S as a multiple of 8: (--multiple) (\S+)$", out.strip())
check(m is not None and m.group(2) == "x:1=8", f"the fix names the exact flag: {out}")
flag = [m.group(1), m.group(2)] if m else ["--multiple", "x:1=8"]
out = run("compile", reshape, "--shapes", shapes, *flag, "--no-gpu", "-o", e3)
check("wrote" in out, f"compile following the advice: {out}")
out = run("inspect", e3)
check("S in [8, 64] opt 16 multiple of 8" in out, f"inspect shows the multiple: {out}")
for b, s in ((1, 8), (3, 24), (4, 64)):
    x = np.random.default_rng(s).standard_normal((b, s, 16)).astype(np.float32)
    np.save(path("x.npy"), x)
    out = run("run", e3, "--input", f"x={path('x.npy')}", "--output", f"y={path('y.npy')}")
    check(np.array_equal(np.load(path("y.npy")), x.reshape(b, -1, 128)), f"reshape at B={b} S={s}: {out}")
out = run("run", e3, "--shapes", "x:2x12x16", want=1)
check("multiple of 8" in out, f"S = 12 refused at run time: {out}")
# the same through trtexec's flags and --multiple=value
out = run("compile", reshape, "--minShapes=x:1x8x16", "--optShapes=x:2x16x16", "--maxShapes=x:4x64x16",
          "--multiple=x:1=8", "--no-gpu", "-o", path("r2.symx"))
check("wrote" in out, f"--multiple=value with trtexec shapes: {out}")
# what --multiple refuses: the flag's syntax (a usage error, exit 2), then what it names (exit 1)
for args, want, code in ((["--multiple", "x:1-8"], "--multiple 'x:1-8': expected '=' after the axis at column 4", 2),
                         (["--multiple", "x:1=0"], "expected a multiple (>= 1) after '='", 2),
                         (["--multiple", "x:9=8"], "expected an axis (0 to 7) after ':'", 2),
                         (["--multiple", "x:1=8", "--multiple", "x:1=4"],
                          "input 'x' dim 1 is declared a multiple twice", 2),
                         (["--multiple", "x:2=8"], "input 'x' dim 2 is fixed (16)", 1),
                         (["--multiple", "y:1=8"], "input 'y' has no declared shapes (declared: 'x')", 1)):
    out = run("compile", reshape, "--shapes", shapes, *args, "--no-gpu", "-o", path("t.symx"), want=code)
    check(want in out and out.count("\n") == 1, f"--multiple {args}: no '{want}' in one line: {out}")
# a multiple no size in the range has
out = run("compile", reshape, "--shapes", "x:1x9x16,2x10x16,4x15x16", "--multiple", "x:1=16", "--no-gpu", "-o",
          path("t.symx"), want=1)
check("no multiple of 16 in [9, 15]" in out, f"--multiple with no multiple in range: {out}")
out = run("compile", path("relu_trt.symx").replace(".symx", ".symir"), "--multiple", "x:0=2", "-o",
          path("t.symx"), want=2)
check("--shapes and --multiple are for ONNX models" in out, f"--multiple for a .symir: {out}")

# ---- a size as a value: Shape -> Gather -> Cast -> Mul, the batch size computed at run time ----
shape_data = save([h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "zero"], ["b"], axis=0),
                   h.make_node("Cast", ["b"], ["bf"], to=T.FLOAT), h.make_node("Mul", ["x", "bf"], ["y"])],
                  [h.make_tensor_value_info("x", T.FLOAT, ["B", 4])], [h.make_tensor_value_info("y", T.FLOAT, None)],
                  [h.make_tensor("zero", T.INT64, [], [0])], "shape_data.onnx")
e4 = path("shape_data.symx")
run("compile", shape_data, "--shapes", "x:1x4,2x4,8x4", "--no-gpu", "-o", e4)
for b in (1, 3, 8):
    x = np.random.default_rng(b).standard_normal((b, 4)).astype(np.float32)
    np.save(path("x.npy"), x)
    out = run("run", e4, "--input", f"x={path('x.npy')}", "--output", f"y={path('y.npy')}")
    check(np.array_equal(np.load(path("y.npy")), x * np.float32(b)), f"x * Shape(x)[0] at B={b}: {out}")

# ---- every dtype through .npy: read little-endian, big-endian and in Fortran order, written with its own descr ----
DTYPES = [("bool", T.BOOL, np.bool_, "|b1"), ("i8", T.INT8, np.int8, "|i1"), ("u8", T.UINT8, np.uint8, "|u1"),
          ("i16", T.INT16, np.int16, "<i2"), ("u16", T.UINT16, np.uint16, "<u2"), ("i32", T.INT32, np.int32, "<i4"),
          ("u32", T.UINT32, np.uint32, "<u4"), ("i64", T.INT64, np.int64, "<i8"), ("u64", T.UINT64, np.uint64, "<u8"),
          ("f16", T.FLOAT16, np.float16, "<f2"), ("f32", T.FLOAT, np.float32, "<f4"),
          ("f64", T.DOUBLE, np.float64, "<f8"), ("bf16", T.BFLOAT16, ml_dtypes.bfloat16, "<f4")]  # bf16 written as f32


def dtype_values(nt):
    """A [4, 3] array of dtype nt with its edges: integers' min and max (x + x wraps, in numpy as in symc),
    floats' max (x + x overflows), the smallest subnormal, -0, infinities and NaN."""
    if nt is np.bool_:
        return np.array([[True, False, True], [False, False, True], [True, True, False], [False, True, True]])
    if np.issubdtype(np.dtype(nt), np.integer):
        i = np.iinfo(nt)
        v = [i.min, i.max, 0, 1, i.max // 2, i.max // 2 + 1, i.max - 1, i.min + 1, 7, 100, i.max // 3, 2]
        if i.min < 0:
            v[8] = -1
        return np.array(v, dtype=nt).reshape(4, 3)
    f = ml_dtypes.finfo(nt)
    v = [0.0, -0.0, 1.5, -2.25, float(f.max), -float(f.max), float(f.smallest_subnormal), np.inf, -np.inf, np.nan,
         3.14159, -1e-3]
    return np.array(v, dtype=np.float64).astype(nt).reshape(4, 3)


def same(got, want):
    """Exactly equal: dtype, shape, every value; NaN where NaN, and the sign of a zero."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind != "f":
        return np.array_equal(got, want)
    nan = np.isnan(want)
    return (np.array_equal(np.isnan(got), nan) and np.array_equal(got[~nan], want[~nan]) and
            np.array_equal(np.signbit(got[~nan]), np.signbit(want[~nan])))


def header(f):
    with open(f, "rb") as fh:
        return fh.read(128).decode("latin-1")


def run_io(engine, x_file):
    """symc run with x from x_file -> (output text, exit status, y, z) (y, z None where not written)"""
    for o in ("y.npy", "z.npy"):
        if os.path.exists(path(o)):
            os.remove(path(o))
    p = subprocess.run([symc, "run", engine, "--backend", "ref", "--input", f"x={x_file}", "--output",
                        f"y={path('y.npy')}", "--output", f"z={path('z.npy')}"], capture_output=True, text=True)
    y = np.load(path("y.npy")) if os.path.exists(path("y.npy")) else None
    z = np.load(path("z.npy")) if os.path.exists(path("z.npy")) else None
    return p.stdout + p.stderr, p.returncode, y, z


engines = {}
for name, et, nt, out_descr in DTYPES:
    node = h.make_node("Not", ["x"], ["y"]) if nt is np.bool_ else h.make_node("Add", ["x", "x"], ["y"])
    model = save([node, h.make_node("Identity", ["x"], ["z"])], [h.make_tensor_value_info("x", et, ["N", 3])],
                 [h.make_tensor_value_info("y", et, None), h.make_tensor_value_info("z", et, None)], [],
                 f"dt_{name}.onnx")
    engines[name] = path(f"dt_{name}.symx")
    run("compile", model, "--shapes", "x:1x3,4x3,8x3", "--no-gpu", "-o", engines[name])
    x = dtype_values(nt)
    with np.errstate(over="ignore", invalid="ignore"):
        want_y = ~x if nt is np.bool_ else x + x
    want_z = x
    if nt is ml_dtypes.bfloat16:  # written widened (exactly) to f32
        want_y, want_z = want_y.astype(np.float32), want_z.astype(np.float32)
    files = {"little-endian": path(f"x_{name}.npy"), "big-endian": path(f"x_{name}_be.npy"),
             "Fortran order": path(f"x_{name}_fo.npy")}
    np.save(files["little-endian"], x)
    np.save(files["big-endian"], x.astype(x.dtype.newbyteorder(">")))
    np.save(files["Fortran order"], np.asfortranarray(x))
    # the files are what the test means them to be (np.save chose these descrs and this order)
    check(x.dtype.itemsize == 1 or "'descr': '>" in header(files["big-endian"]),
          f"{name}: big-endian file: {header(files['big-endian'])}")
    check("'fortran_order': True" in header(files["Fortran order"]),
          f"{name}: Fortran-order file: {header(files['Fortran order'])}")
    for kind, f in files.items():
        out, rc, y, z = run_io(engines[name], f)
        check(rc == 0 and y is not None and z is not None, f"{name} {kind}: exit {rc}: {out}")
        if y is None or z is None:
            continue
        check(same(y, want_y), f"{name} {kind}: y = {y.dtype} {y.tolist()}, numpy gives {want_y.tolist()}")
        check(same(z, want_z), f"{name} {kind}: z = {z.dtype} {z.tolist()}, numpy gives {want_z.tolist()}")
        check(f"'descr': '{out_descr}'" in header(path("y.npy")), f"{name}: y written as {header(path('y.npy'))}")

# a file of another dtype is refused naming the input, the file and both dtypes; nothing is converted silently
for eng, f, held, want in (("i64", "x_i32.npy", "i32 ('<i4')", "input 'x' is i64"),
                           ("i8", "x_u8.npy", "u8 ('|u1')", "input 'x' is i8"),
                           ("u8", "x_i8.npy", "i8 ('|i1')", "input 'x' is u8"),
                           ("f32", "x_f64.npy", "f64 ('<f8')", "input 'x' is f32"),
                           ("f64", "x_f32.npy", "f32 ('<f4')", "input 'x' is f64"),
                           ("u16", "x_bf16.npy", "bf16 ('<V2')", "input 'x' is u16"),
                           ("bf16", "x_f16.npy", "f16 ('<f2')", "input 'x' is bf16")):
    out, rc, y, _ = run_io(engines[eng], path(f))
    check(rc == 1 and f"'{path(f)}' holds {held}, {want}; symc run does not convert" in out and y is None and
          out.count("\n") == 1, f"{f} into the {eng} engine: exit {rc}: {out}")
out, rc, _, _ = run_io(engines["i64"], path("x_i32.npy"))
check("save the array as numpy.int64" in out, f"the mismatch says how to save the array: {out}")
# NumPy's plain 2-byte void (an ml_dtypes file loaded and saved again without ml_dtypes) is not taken as bf16
np.save(path("x_void.npy"), dtype_values(ml_dtypes.bfloat16).view(np.dtype("V2")))
out, rc, y, _ = run_io(engines["bf16"], path("x_void.npy"))
check(rc == 1 and "x_void.npy': dtype '|V2' is two raw bytes with no byte order" in out and y is None,
      f"'|V2' into the bf16 engine: exit {rc}: {out}")

# the documented conversions: an f32 file for an f16 or bf16 input, rounded once to nearest even (as numpy's and
# ml_dtypes' astype), and uint16 bit patterns for a bf16 input (what the ONNX test data holds)
x32 = np.random.default_rng(29).standard_normal((4, 3)).astype(np.float32) * np.float32(1000)
np.save(path("x_f32r.npy"), x32)
for eng, nt in (("f16", np.float16), ("bf16", ml_dtypes.bfloat16)):
    out, rc, y, z = run_io(engines[eng], path("x_f32r.npy"))
    xr = x32.astype(nt)
    wy, wz = (xr + xr, xr) if nt is np.float16 else ((xr + xr).astype(np.float32), xr.astype(np.float32))
    check(rc == 0 and y is not None and same(y, wy) and same(z, wz),
          f"f32 file into the {eng} engine: exit {rc}: {out}\n{None if z is None else z.tolist()}\n{wz.tolist()}")
xb = dtype_values(ml_dtypes.bfloat16)
np.save(path("x_bits.npy"), xb.view(np.uint16))
out, rc, y, z = run_io(engines["bf16"], path("x_bits.npy"))
check(rc == 0 and z is not None and same(z, xb.astype(np.float32)), f"uint16 bits into the bf16 engine: {out}")

# ---- an If on a size (issue 32): one engine, a region per side, through every command ----
then_g = h.make_graph([h.make_node("Slice", ["x", "z1", "c64", "o1"], ["xs"]), h.make_node("Add", ["xs", "xs"], ["yt"])],
                      "then", [], [h.make_tensor_value_info("yt", T.FLOAT, None)])
else_g = h.make_graph([h.make_node("Neg", ["x"], ["ye"])], "else", [], [h.make_tensor_value_info("ye", T.FLOAT, None)])
branch = save([h.make_node("Shape", ["x"], ["sx"]), h.make_node("Gather", ["sx", "i1"], ["s"]),
               h.make_node("Greater", ["s", "c64s"], ["big"]),
               h.make_node("If", ["big"], ["y"], then_branch=then_g, else_branch=else_g, name="pick")],
              [h.make_tensor_value_info("x", T.FLOAT, ["B", "S"])], [h.make_tensor_value_info("y", T.FLOAT, None)],
              [h.make_tensor("z1", T.INT64, [1], [0]), h.make_tensor("c64", T.INT64, [1], [64]),
               h.make_tensor("o1", T.INT64, [1], [1]), h.make_tensor("i1", T.INT64, [], [1]),
               h.make_tensor("c64s", T.INT64, [], [64])], "branch.onnx")
out = run("compile", branch, "--shapes", "x:1x1,2x100,4x200", "-o", path("branch.symx"), "--verbose")
check("region 0 of 2: 65 <= S <= 200" in out and "region 1 of 2: 1 <= S <= 64" in out, f"regions said: {out}")
out = run("inspect", path("branch.symx"))
check("regions: 2" in out and "region 0 '65 <= S <= 200'" in out, f"inspect shows the regions: {out}")
out = run("dot", path("branch.symx"))
check(out.count("subgraph \"cluster_region_") == 2, f"dot draws a cluster per region: {out[:300]}")
for s_ in (1, 64, 65, 200):
    x = np.random.default_rng(s_).standard_normal((3, s_)).astype(np.float32)
    np.save(path("xb.npy"), x)
    out = run("run", path("branch.symx"), "--input", f"x={path('xb.npy')}", "--output", f"y={path('yb.npy')}")
    want = x[:, :64] * 2 if s_ > 64 else -x
    got = np.load(path("yb.npy")) if os.path.exists(path("yb.npy")) else None
    check(got is not None and got.shape == want.shape and np.array_equal(got, want), f"branch at S = {s_}: {out}")
    os.remove(path("yb.npy")) if os.path.exists(path("yb.npy")) else None
out = run("run", path("branch.symx"), "--shapes", "x:2x201", want=1)
check("S must be in [1, 200]" in out, f"a size outside the hull: {out}")
out = run("bench", path("branch.symx"), "--backend", "ref", "--sweep", "--shapes", "x:BxS", "--iters", "1",
          "--plot", path("branch.svg"))
check(os.path.exists(path("branch.svg")) and "max" in out, f"bench sweeps across the regions and plots: {out}")
# the plain import refuses what only regions can take, naming the way
out = run("dot", branch, "--shapes", "x:1x1,2x100,4x200", want=1)
check("64 < S" in out and "regions" in out, f"a one-graph command on the open If: {out}")

# ---- sizes known only after the run (NonZero): --no-gpu for now, outputs written at their real shapes ----
nzm = save([h.make_node("NonZero", ["x"], ["idx"]), h.make_node("Transpose", ["idx"], ["rows"], perm=[1, 0]),
            h.make_node("GatherND", ["x", "rows"], ["vals"])],
           [h.make_tensor_value_info("x", T.FLOAT, ["B", 5])],
           [h.make_tensor_value_info("idx", T.INT64, None), h.make_tensor_value_info("vals", T.FLOAT, None)], [],
           "nz.onnx")
run("compile", nzm, "--shapes", "x:1x5,2x5,8x5", "-o", path("nz_gpu.symx"))  # GPU code too (NVRTC)
run("compile", nzm, "--shapes", "x:1x5,2x5,8x5", "-o", path("nz.symx"), "--no-gpu")
out = run("inspect", path("nz.symx"))
check("produced sizes" in out and "u0" in out and "(B*5)" in out, f"inspect lists the produced size: {out}")
for b in (1, 3, 8):
    x = np.random.default_rng(b).standard_normal((b, 5)).astype(np.float32)
    x[x < 0.2] = 0
    np.save(path("xn.npy"), x)
    out = run("run", path("nz.symx"), "--input", f"x={path('xn.npy')}", "--output", f"idx={path('idx.npy')}",
              "--output", f"vals={path('vals.npy')}")
    want_idx = np.array(np.nonzero(x), dtype=np.int64)
    got_idx, got_vals = np.load(path("idx.npy")), np.load(path("vals.npy"))
    check(np.array_equal(got_idx, want_idx) and np.array_equal(got_vals, x[x != 0]),
          f"NonZero at B = {b}: idx {got_idx.shape} vals {got_vals.shape}, want {want_idx.shape}: {out}")
    check(f"idx: i64[2, {want_idx.shape[1]}]" in out, f"run prints the real shape: {out}")
out = run("bench", path("nz.symx"), "--backend", "ref", "--shapes", "x:4x5", "--iters", "2")
check("NaN" not in out, f"bench counts no poison outside the real shapes: {out}")

# ---- TopK with k a graph input: an item node reads k at run time as a size bounded by the axis dim ----
tkm = save([h.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)],
           [h.make_tensor_value_info("x", T.FLOAT, ["B", "N"]), h.make_tensor_value_info("k", T.INT64, [1])],
           [h.make_tensor_value_info("v", T.FLOAT, None), h.make_tensor_value_info("i", T.INT64, None)], [],
           "topk_k.onnx")
run("compile", tkm, "--shapes", "x:1x4,2x16,4x32", "-o", path("tk_gpu.symx"))  # GPU code too (NVRTC)
run("compile", tkm, "--shapes", "x:1x4,2x16,4x32", "-o", path("tk.symx"), "--no-gpu")
out = run("inspect", path("tk.symx"))
check("the value of 'k'" in out and "u0 <= N" in out, f"inspect lists k as a produced size bounded by N: {out}")
rng = np.random.default_rng(5)
for b, n, k in ((1, 4, 0), (2, 16, 5), (4, 32, 32), (3, 9, 9), (2, 7, 1)):
    x = rng.permutation(b * n).reshape(b, n).astype(np.float32)  # distinct values: one right order
    np.save(path("xt.npy"), x)
    np.save(path("kt.npy"), np.array([k], dtype=np.int64))
    out = run("run", path("tk.symx"), "--input", f"x={path('xt.npy')}", "--input", f"k={path('kt.npy')}",
              "--output", f"v={path('v.npy')}", "--output", f"i={path('i.npy')}")
    want_i = np.argsort(-x, axis=1, kind="stable")[:, :k]
    got_v, got_i = np.load(path("v.npy")), np.load(path("i.npy"))
    check(np.array_equal(got_i, want_i) and np.array_equal(got_v, np.take_along_axis(x, want_i, 1)),
          f"TopK at {b}x{n}, k = {k}: {got_i.shape}, want {want_i.shape}: {out}")
for k, why in ((17, "above its bound 16"), (-1, "negative")):
    np.save(path("xt.npy"), np.zeros((2, 16), np.float32))
    np.save(path("kt.npy"), np.array([k], dtype=np.int64))
    out = run("run", path("tk.symx"), "--input", f"x={path('xt.npy')}", "--input", f"k={path('kt.npy')}", want=1)
    check(why in out and "item" in out, f"TopK with k = {k} is refused naming the node and why: {out}")

# ---- a NonZero whose result nothing reads but whose count sizes an output: the producer stays (it was dropped
# as dead, then refused as "no node produces it") ----
cnt = save([h.make_node("NonZero", ["x"], ["nz"]), h.make_node("Shape", ["nz"], ["s"]),
            h.make_node("Slice", ["s", "one", "two"], ["u"]),
            h.make_node("ConstantOfShape", ["u"], ["y"],
                        value=onnx.numpy_helper.from_array(np.array([7.0], np.float32)))],
           [h.make_tensor_value_info("x", T.FLOAT, ["B", 5])], [h.make_tensor_value_info("y", T.FLOAT, None)],
           [onnx.numpy_helper.from_array(np.array([1], np.int64), "one"),
            onnx.numpy_helper.from_array(np.array([2], np.int64), "two")], "nz_count.onnx")
run("compile", cnt, "--shapes", "x:1x5,2x5,4x5", "-o", path("nz_count.symx"), "--no-gpu")
for b in (1, 2, 4):
    x = np.random.default_rng(30 + b).standard_normal((b, 5)).astype(np.float32)
    x[x < 0.3] = 0
    np.save(path("xc.npy"), x)
    out = run("run", path("nz_count.symx"), "--input", f"x={path('xc.npy')}", "--output", f"y={path('yc.npy')}")
    got = np.load(path("yc.npy"))
    check(np.array_equal(got, np.full(np.count_nonzero(x), 7.0, np.float32)),
          f"the count of a NonZero nothing else reads, at B = {b}: {got.shape}, want {np.count_nonzero(x)}: {out}")

# ---- compile -o FILE.symir: the imported module, not an engine; inspect says whether its batch rows are independent
# (ir_batch_rows): a per-row model yes, one that adds the mean over the batch no, naming the node ----
run("compile", relu, "--shapes", "x:1x4,2x4,8x4", "-o", path("relu.symir"), "-q")
with open(path("relu.symir"), "rb") as f:
    check(f.read(8)[4:8] == b"SYMI", "compile -o relu.symir writes a module (identifier SYMI)")
out = run("inspect", path("relu.symir"))
check("batch rows: independent over B" in out, f"inspect relu.symir: {out}")
run("compile", path("relu.symir"), "-o", path("relu_from_symir.symx"), "--no-gpu", "-q")  # and it compiles on
mix = save([h.make_node("ReduceMean", ["x"], ["m"], axes=[0], keepdims=1, name="batch_mean"),
            h.make_node("Add", ["x", "m"], ["y"])],
           [h.make_tensor_value_info("x", T.FLOAT, ["B", 4])], [h.make_tensor_value_info("y", T.FLOAT, None)],
           [], "batch_mean.onnx")
run("compile", mix, "--shapes", "x:1x4,2x4,8x4", "-o", path("batch_mean.symir"), "-q")
out = run("inspect", path("batch_mean.symir"))
check("batch rows: not proved independent: output 'y' depends on node 'm' (reduce_mean, from 'batch_mean'): a "
      "reduction over the batch axis" in out, f"inspect batch_mean.symir: {out}")
# an engine ends with the verdict its build stored, the same line as its module's
out = run("inspect", path("relu_from_symir.symx"))
check(out.rstrip("\n").splitlines()[-1].startswith("batch rows: independent over B (each output row b"),
      f"inspect relu_from_symir.symx ends with the verdict: {out}")
run("compile", path("batch_mean.symir"), "-o", path("batch_mean.symx"), "--no-gpu", "-q")
out = run("inspect", path("batch_mean.symx"))
check(out.rstrip("\n").splitlines()[-1] == "batch rows: not proved independent: output 'y' depends on node 'm' "
      "(reduce_mean, from 'batch_mean'): a reduction over the batch axis", f"inspect batch_mean.symx: {out}")

# ---- an f16 attention for sm_90 (built here, not run): the wgmma kernel's step caps its grid at the blocks the GPU
# holds at once (rt_step.resident), which inspect shows on the kernel's line ----
att = save([h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), h.make_node("MatMul", ["q", "kt"], ["s"]),
            h.make_node("Mul", ["s", "c"], ["sc"]), h.make_node("Softmax", ["sc"], ["p"], axis=-1),
            h.make_node("MatMul", ["p", "v"], ["y"])],
           [h.make_tensor_value_info(n, T.FLOAT16, ["B", 4, "S", 64]) for n in "qkv"],
           [h.make_tensor_value_info("y", T.FLOAT16, None)], [h.make_tensor("c", T.FLOAT16, [], [0.125])],
           "attn16.onnx")
qkv_shapes = [a for n in "qkv" for a in ("--shapes", f"{n}:1x4x16x64,2x4x128x64,4x4x512x64")]
run("compile", att, *qkv_shapes, "--arch", "sm_90", "-o", path("attn16.symx"), "-q")
out = run("inspect", path("attn16.symx"))
check(re.search(r"kernel .* 384 threads/block, .*, grid at most 1 x the blocks the GPU holds at once$", out, re.M),
      f"inspect shows the wgmma attention's grid cap: {out}")
# and the tensor maps its producer stages K and V with (TMA)
check(re.search(r"^ +TMA tensor map 0: k, rank 4, box 64x128x1x1, 128-byte swizzle$", out, re.M) and
      re.search(r"^ +TMA tensor map 1: v, rank 4, box 64x128x1x1, 128-byte swizzle$", out, re.M) and
      re.search(r"^ +TMA tensor map 2: q, rank 4, box 64x128x1x1, 128-byte swizzle$", out, re.M),
      f"inspect shows the wgmma attention's TMA tensor maps: {out}")

# under a causal mask the capped grid deals the row blocks in a snake, most work first
causal = save([h.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), h.make_node("MatMul", ["q", "kt"], ["s"]),
               h.make_node("Mul", ["s", "c"], ["sc"]), h.make_node("Shape", ["q"], ["sh"]),
               h.make_node("Gather", ["sh", "i2"], ["sq"], axis=0), h.make_node("Range", ["zero", "sq", "one"], ["pos"]),
               h.make_node("Unsqueeze", ["pos", "ax0"], ["col"]), h.make_node("Unsqueeze", ["pos", "ax1"], ["row"]),
               h.make_node("Greater", ["col", "row"], ["fut"]), h.make_node("Where", ["fut", "ninf", "sc"], ["ms"]),
               h.make_node("Softmax", ["ms"], ["p"], axis=-1), h.make_node("MatMul", ["p", "v"], ["y"])],
              [h.make_tensor_value_info(n, T.FLOAT16, ["B", 4, "S", 64]) for n in "qkv"],
              [h.make_tensor_value_info("y", T.FLOAT16, None)],
              [h.make_tensor("c", T.FLOAT16, [], [0.125]), h.make_tensor("ninf", T.FLOAT16, [], [float("-inf")]),
               h.make_tensor("i2", T.INT64, [], [2]), h.make_tensor("zero", T.INT64, [], [0]),
               h.make_tensor("one", T.INT64, [], [1]), h.make_tensor("ax0", T.INT64, [1], [0]),
               h.make_tensor("ax1", T.INT64, [1], [1])], "causal16.onnx")
run("compile", causal, *qkv_shapes, "--arch", "sm_90", "-o", path("causal16.symx"), "-q")
out = run("inspect", path("causal16.symx"), "--source")
check(re.search(r"kernel .* 384 threads/block, .*, grid at most 1 x the blocks the GPU holds at once$", out, re.M)
      and "(rr & 1) ? gridDim.x - 1 - blockIdx.x : blockIdx.x" in out and "qt = nq - 1 - blk / nb" in out,
      f"inspect shows the causal wgmma attention's grid cap and its snake: {out[-3000:]}")

print(f"cli_onnx_test: {len(failures)} failed")
sys.exit(1 if failures else 0)
