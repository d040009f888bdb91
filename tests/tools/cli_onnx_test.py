#!/usr/bin/env python3
"""The symc driver on ONNX models, as a trtexec user meets it (issue 18): trtexec's spellings
(--onnx, --minShapes/--optShapes/--maxShapes, --saveEngine, --loadEngine, --noTF32) next to symc's,
--flag=value and --flag value alike; refusals for names the engine or model lacks (--output, --shapes)
that list what there is; one file-name prefix per message; and --multiple: a reshape that needs
S % 8 == 0 fails with a fix naming the exact flag, and following that advice builds an engine that
runs and matches numpy.

usage: cli_onnx_test.py SYMC TMPDIR
"""
import os
import re
import subprocess
import sys

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

print(f"cli_onnx_test: {len(failures)} failed")
sys.exit(1 if failures else 0)
