#!/usr/bin/env python3
"""The fold-scale pass through the CLI: ConvNeXt's block tail as an ONNX model,

    y = x + gamma * (relu(x @ W1 + b1) @ W2 + b2)      x [B, H, W, 16], NHWC

written with onnx.helper in f32 and in f16 (f16 inputs and initializers, as a
model exported in half), and the f32 model compiled with --fp16. `symc compile` (CUDA target, NVRTC; no GPU needed)
then `symc inspect` must show two cuBLASLt steps and nothing else (besides
--fp16's casts at the model's boundary): the second
GEMM with c=x (the residual add, beta 1) and bias=b2, the layer scale folded
into w2 and b2. `symc run --backend ref` at an off-grid shape must match numpy
in float64 (f32: 1e-5, f16: 1e-2 of the summed magnitudes). With gamma a graph
input instead of a constant the mul cannot be folded: the GEMM keeps c=- and a
kernel computes the mul and the residual add, still matching numpy.

usage: fold_scale_cli_test.py SYMC TMPDIR
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

symc, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
failures = []
C = 16
SHAPES = "x:1x4x4x16,2x7x7x16,4x8x8x16"
RUN = (3, 5, 6, C)


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def run(*args):
    p = subprocess.run([symc, *args], capture_output=True, text=True)
    out = p.stdout + p.stderr
    check(p.returncode == 0, f"symc {' '.join(args)}: exit {p.returncode}: {out}")
    return out


def path(name):
    return os.path.join(tmp, name)


def model(dtype, gamma_input):
    rng = np.random.default_rng(7)
    w = {
        "w1": rng.standard_normal((C, 4 * C)) * 0.2,
        "b1": rng.standard_normal(4 * C) * 0.1,
        "w2": rng.standard_normal((4 * C, C)) * 0.1,
        "b2": rng.standard_normal(C) * 0.1,
        "gamma": rng.standard_normal(C) * 0.5,
    }
    w = {k: v.astype(dtype) for k, v in w.items()}
    et = T.FLOAT if dtype == np.float32 else T.FLOAT16
    nodes = [
        h.make_node("MatMul", ["x", "w1"], ["m1"], name="fc1"),
        h.make_node("Add", ["m1", "b1"], ["a1"], name="fc1_bias"),
        h.make_node("Relu", ["a1"], ["r"], name="act"),
        h.make_node("MatMul", ["r", "w2"], ["m2"], name="fc2"),
        h.make_node("Add", ["b2", "m2"], ["a2"], name="fc2_bias"),
        h.make_node("Mul", ["gamma", "a2"], ["s"], name="layer_scale"),
        h.make_node("Add", ["x", "s"], ["y"], name="residual"),
    ]
    inputs = [h.make_tensor_value_info("x", et, ["B", "H", "W", C])]
    if gamma_input:
        inputs.append(h.make_tensor_value_info("gamma", et, [C]))
    inits = [nh.from_array(v, k) for k, v in w.items() if not (gamma_input and k == "gamma")]
    g = h.make_graph(nodes, "convnext_tail", inputs, [h.make_tensor_value_info("y", et, None)], inits)
    name = f"tail_{np.dtype(dtype).name}{'_gin' if gamma_input else ''}"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path(name + ".onnx"))
    return name, w


def oracle(x, w):
    d = {k: v.astype(np.float64) for k, v in w.items()}
    x = x.astype(np.float64)
    r = np.maximum(x @ d["w1"] + d["b1"], 0)
    y = x + d["gamma"] * (r @ d["w2"] + d["b2"])
    # the scale of each output: its terms' magnitudes summed (rounding errors follow them, not y)
    mag = np.abs(x) + np.abs(d["gamma"]) * (np.abs(r) @ np.abs(d["w2"]) + np.abs(d["b2"]))
    return y, mag


# (dtype of the model, --fp16 or not, tolerance): the f32 model with --fp16 folds in f32 before the
# precision pass stores the weights in f16
for dtype, fp16, tol in ((np.float32, False, 1e-5), (np.float16, False, 1e-2), (np.float32, True, 1e-2)):
    for gamma_input in (False, True):
        name, w = model(dtype, gamma_input)
        what = name + (" --fp16" if fp16 else "")
        engine = path(name + ("_fp16" if fp16 else "") + ".symx")
        run("compile", path(name + ".onnx"), "--shapes", SHAPES, "-o", engine, *(["--fp16"] if fp16 else []))
        text = run("inspect", engine)
        steps = re.findall(r"^\s+\d+ (gemm|kernel|conv|copy|alias)\s+(\S+)\s+(.*)$", text, re.M)
        # --fp16: the casts at the model's boundary are steps of their own, x and y have f16 copies
        steps = [s for s in steps if not s[2].startswith("node precision.cast.")]
        gemm2 = [s for s in steps if s[0] == "gemm" and " b=w2" in s[2]]
        if check(len(gemm2) == 1, f"{what}: one gemm reads w2: {steps}"):
            line = gemm2[0][2]
            if gamma_input:
                check(" c=- " in line, f"{what}: the gemm has no residual: {line}")
                check(sum(s[0] == "kernel" for s in steps) == 1, f"{what}: a kernel for the mul and add: {steps}")
            else:
                check(re.search(r"d=y(:f16)? .* c=x(:f16)? bias=b2 .*beta=1\b", line),
                      f"{what}: the residual is the gemm's C: {line}")
                check(len(steps) == 2 and all(s[0] == "gemm" for s in steps), f"{what}: two gemms only: {steps}")
        x = np.random.default_rng(11).uniform(-1, 1, RUN).astype(dtype)
        np.save(path("x.npy"), x)
        args = ["run", engine, "--backend", "ref", "--shapes", "x:" + "x".join(map(str, RUN)),
                "--input", f"x={path('x.npy')}", "--output", f"y={path('y.npy')}"]
        if gamma_input:
            np.save(path("gamma.npy"), w["gamma"])
            args[-4:-4] = ["--shapes", f"gamma:{C}", "--input", f"gamma={path('gamma.npy')}"]
        run(*args)
        if check(os.path.exists(path("y.npy")), f"{what}: no output"):
            y = np.load(path("y.npy"))
            want, mag = oracle(x, w)
            err = np.abs(y.astype(np.float64) - want) / np.maximum(mag, 1.0)
            check(y.dtype == dtype and y.shape == RUN, f"{what}: y {y.dtype} {y.shape}")
            check(err.max() <= tol, f"{what}: max error {err.max():.3g} > {tol}")
            os.remove(path("y.npy"))

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("fold_scale_cli_test: ok")
