#!/usr/bin/env python3
"""Hostile and sloppy inputs through the symc driver (issue 30): files whose contents lie about
themselves must give a clear error or the right answer, never a silently wrong one.

ONNX attribute types (item 3). onnx.helper.make_node takes an attribute's type from the Python
value, so `alpha=2` is an INT and `axis=1.0` a FLOAT; symc once read every attribute from the field
of the type the op expects, so Gemm with alpha=2 gave all zeros and Softmax with a FLOAT axis used
axis 0. Now: an INT where a FLOAT is taken converts exactly (Gemm, LeakyRelu, Elu, Constant's
value_float and value_floats give numpy's result); any other mismatch (a FLOAT or STRING axis, a
FLOATS axis, a FLOAT value_int, a FLOAT Cast 'to') is refused naming the node, the attribute, its type
and the type taken; an attribute whose type field is UNDEFINED (IR version 1 files) is typed by the
field that holds its value.

usage: hostile_test.py SYMC TMPDIR
"""
import os
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


def path(name):
    return os.path.join(tmp, name)


def symc_run(*args):
    p = subprocess.run([symc, *args], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def model(name, nodes, inputs, inits=()):
    """inputs: [(name, shape)] float32; one output y"""
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], list(inits))
    f = path(name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), f)
    return f


def compile_run(f, feeds):
    """builds f for the reference backend at the feeds' shapes and runs it; (rc, message, y)"""
    eng = f[:-5] + ".symx"
    shapes = []
    for n, x in feeds.items():
        shapes += ["--shapes", f"{n}:{'x'.join(map(str, x.shape))}"]
    rc, out = symc_run("compile", f, "-o", eng, "--no-gpu", "-q", *shapes)
    if rc:
        return rc, out, None
    args = ["run", eng, "--backend", "ref", "--output", f"y={path('y.npy')}"]
    for n, x in feeds.items():
        np.save(path(n + ".npy"), x)
        args += ["--input", f"{n}={path(n + '.npy')}"]
    if os.path.exists(path("y.npy")):
        os.remove(path("y.npy"))
    rc, out = symc_run(*args)
    return rc, out, np.load(path("y.npy")) if rc == 0 else None


rng = np.random.default_rng(30)
a = rng.standard_normal((2, 3)).astype(np.float32)
b = rng.standard_normal((3, 4)).astype(np.float32)
c = rng.standard_normal((4,)).astype(np.float32)
x = rng.standard_normal((2, 5)).astype(np.float32)

# ---- an INT where a FLOAT is taken: converted, exactly ----
gemm = h.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=2, beta=1)
check(gemm.attribute[0].type == onnx.AttributeProto.INT, "make_node(alpha=2) should write an INT")
rc, out, y = compile_run(model("gemm_int_alpha", [gemm], [("a", [2, 3]), ("b", [3, 4]), ("c", [4])]),
                         {"a": a, "b": b, "c": c})
check(rc == 0 and y is not None and np.allclose(y, 2 * a @ b + c, rtol=1e-5, atol=1e-6),
      f"Gemm alpha=2 (INT): {out} {y}")
for op, alpha, want in (("LeakyRelu", 3, np.where(x > 0, x, 3 * x)),
                        ("Elu", 2, np.where(x > 0, x, 2 * (np.exp(x) - 1)))):
    rc, out, y = compile_run(model(f"{op}_int_alpha", [h.make_node(op, ["x"], ["y"], alpha=alpha)], [("x", [2, 5])]),
                             {"x": x})
    check(rc == 0 and y is not None and np.allclose(y, want, rtol=1e-5, atol=1e-6), f"{op} alpha={alpha} (INT): {out}")
# Constant's value_float given as an INT, value_floats as INTS: y = x + constant
for attr, val, want in (("value_float", 2, x + 2), ("value_floats", [1, 2, 3, 4, 5], x + np.arange(1, 6))):
    nodes = [h.make_node("Constant", [], ["k"], **{attr: val}), h.make_node("Add", ["x", "k"], ["y"])]
    rc, out, y = compile_run(model(f"constant_{attr}_int", nodes, [("x", [2, 5])]), {"x": x})
    check(rc == 0 and y is not None and np.allclose(y, want), f"Constant {attr}={val} (INT): {out}")

# ---- every other mismatch: refused, naming the attribute, its type and the type taken ----
refusals = [
    ("softmax_float_axis", [h.make_node("Softmax", ["x"], ["y"], axis=1.0)], "attribute 'axis' is a FLOAT",
     "takes an INT"),
    ("softmax_string_axis", [h.make_node("Softmax", ["x"], ["y"], axis="1")], "attribute 'axis' is a STRING",
     "takes an INT"),
    ("softmax_floats_axis", [h.make_node("Softmax", ["x"], ["y"], axis=[1.0])], "attribute 'axis' is a FLOATS",
     "takes an INT"),
    ("cast_float_to", [h.make_node("Cast", ["x"], ["y"], to=1.0)], "attribute 'to' is a FLOAT", "takes an INT"),
    ("constant_float_value_int", [h.make_node("Constant", [], ["k"], value_int=2.5),
                                  h.make_node("Add", ["x", "k"], ["y"])], "attribute 'value_int' is a FLOAT",
     "takes an INT"),
    ("reducesum_float_keepdims", [h.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=0.0)],
     "attribute 'keepdims' is a FLOAT", "takes an INT"),
]
for name, nodes, want1, want2 in refusals:
    rc, out, y = compile_run(model(name, nodes, [("x", [2, 5])]), {"x": x})
    check(rc != 0 and want1 in out and want2 in out and "node '" in out and y is None,
          f"{name}: wanted a refusal with '{want1}' and '{want2}', got rc {rc}: {out}")

# ---- an UNDEFINED type field (IR version 1 files): typed by the field that holds the value ----
sm = h.make_node("Softmax", ["x"], ["y"])
ax = onnx.AttributeProto()
ax.name, ax.i = "axis", 0  # type left UNDEFINED: an INT by its value
sm.attribute.append(ax)
e = np.exp(x - x.max(axis=0, keepdims=True))
rc, out, y = compile_run(model("softmax_untyped_axis", [sm], [("x", [2, 5])]), {"x": x})
check(rc == 0 and y is not None and np.allclose(y, e / e.sum(axis=0, keepdims=True), rtol=1e-5),
      f"Softmax axis=0 with an UNDEFINED type: {out}")

print(f"hostile_test: {len(failures)} failures")
sys.exit(1 if failures else 0)
