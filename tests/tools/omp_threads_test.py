#!/usr/bin/env python3
"""The reference backend's threads do not change its results (issue 18): the heavy kernels
(runtime/ref/ref_kernels_contract.c: matmul, gemm, conv2d, conv_transpose) split their outer loops
among OpenMP threads, but every output element stays one sum computed by one thread in the same
order, so a run with OMP_NUM_THREADS=1 and one with OMP_NUM_THREADS=2 write the same bytes. Models
(written with onnx.helper, large enough to pass the kernels' threading threshold) cover the f32
block path of matmul (batched, broadcast), the element loop (int32 matmul), the half path (--fp16
half storage), gemm with transposes and C, grouped and strided conv2d with padding, and a 2-D
conv_transpose. Each result is also checked against numpy, the independent oracle, so two equally
wrong runs fail too.

usage: omp_threads_test.py SYMC TMPDIR
"""
import os
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


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def path(name):
    return os.path.join(tmp, name)


def run(args, threads=None, want=0):
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    p = subprocess.run([symc, *args], capture_output=True, text=True, env=env)
    out = p.stdout + p.stderr
    check(p.returncode == want, f"symc {' '.join(args)} (OMP_NUM_THREADS={threads}): exit {p.returncode}: {out}")
    return out


rng = np.random.default_rng(7)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---- one float model: y1 = x1 @ w1 (batched, broadcast B), y2 = gemm(a, b^T, c) (alpha, beta),
#      y3 = conv2d(img, k, bias) grouped, strided, padded; y4 = conv_transpose(img2, kt)
w1 = f32(96, 80)
bT, c = f32(72, 64), f32(72)
k, kb = f32(12, 4, 3, 3), f32(12)
kt = f32(6, 5, 3, 3)
inits = [nh.from_array(w1, "w1"), nh.from_array(bT, "bT"), nh.from_array(c, "c"), nh.from_array(k, "k"),
         nh.from_array(kb, "kb"), nh.from_array(kt, "kt")]
nodes = [h.make_node("MatMul", ["x1", "w1"], ["y1"]),
         h.make_node("Gemm", ["a", "bT", "c"], ["y2"], transB=1, alpha=0.5, beta=2.0),
         h.make_node("Conv", ["img", "k", "kb"], ["y3"], group=2, strides=[2, 1], pads=[1, 0, 1, 2]),
         h.make_node("ConvTranspose", ["img2", "kt"], ["y4"], strides=[2, 2], pads=[1, 1, 0, 0])]
g = h.make_graph(nodes, "heavy", [h.make_tensor_value_info("x1", T.FLOAT, ["B", 48, 96]),
                                  h.make_tensor_value_info("a", T.FLOAT, [40, 64]),
                                  h.make_tensor_value_info("img", T.FLOAT, ["N", 8, 20, 18]),
                                  h.make_tensor_value_info("img2", T.FLOAT, [2, 6, 11, 9])],
                 [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("y1", "y2", "y3", "y4")], inits)
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path("heavy.onnx"))

# the int32 matmul: the element loop of rt_ref_k_matmul
wi = rng.integers(-50, 50, (64, 70)).astype(np.int32)
gi = h.make_graph([h.make_node("MatMul", ["xi", "wi"], ["yi"])], "imm",
                  [h.make_tensor_value_info("xi", T.INT32, ["M", 64])], [h.make_tensor_value_info("yi", T.INT32, None)],
                  [nh.from_array(wi, "wi")])
onnx.save(h.make_model(gi, opset_imports=[h.make_opsetid("", 17)]), path("imm.onnx"))

x1, a, img, img2 = f32(3, 48, 96), f32(40, 64), f32(2, 8, 20, 18), f32(2, 6, 11, 9)
xi = rng.integers(-50, 50, (90, 64)).astype(np.int32)
for name, arr in (("x1", x1), ("a", a), ("img", img), ("img2", img2), ("xi", xi)):
    np.save(path(name + ".npy"), arr)
shapes = ["--shapes", "x1:1x48x96,2x48x96,4x48x96", "--shapes", "img:1x8x20x18,2x8x20x18,2x8x20x18"]
engines = {"f32": path("heavy.symx"), "fp16": path("heavy16.symx")}
run(["compile", path("heavy.onnx"), *shapes, "--no-gpu", "-o", engines["f32"]])
run(["compile", path("heavy.onnx"), *shapes, "--no-gpu", "--fp16", "--no-calibrate", "-o", engines["fp16"]])
run(["compile", path("imm.onnx"), "--shapes", "xi:1x64,64x64,128x64", "--no-gpu", "-o", path("imm.symx")])

inputs = [f"{n}={path(n + '.npy')}" for n in ("x1", "a", "img", "img2")]
outs = ("y1", "y2", "y3", "y4")


def run_model(engine, threads, names, ins, tag):
    args = ["run", engine]
    for i in ins:
        args += ["--input", i]
    for n in names:
        args += ["--output", f"{n}={path(f'{n}_{tag}_{threads}.npy')}"]
    run(args, threads)
    return {n: open(path(f"{n}_{tag}_{threads}.npy"), "rb").read() for n in names}


for kind, engine in engines.items():
    r1 = run_model(engine, 1, outs, inputs, kind)
    r2 = run_model(engine, 2, outs, inputs, kind)
    for n in outs:
        check(len(r1[n]) > 128 and r1[n] == r2[n], f"{kind} {n}: the bytes differ between 1 and 2 threads")
ri1 = run_model(path("imm.symx"), 1, ["yi"], [f"xi={path('xi.npy')}"], "i32")
ri2 = run_model(path("imm.symx"), 2, ["yi"], [f"xi={path('xi.npy')}"], "i32")
check(ri1["yi"] == ri2["yi"], "int32 matmul: the bytes differ between 1 and 2 threads")
check(np.array_equal(np.load(path("yi_i32_2.npy")), xi.astype(np.int64) @ wi.astype(np.int64)), "int32 matmul vs numpy")


# ---- numpy: the oracle (f32 engine, two-thread outputs)
def conv2d(x, w, b, group, stride, pads):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    n, ci, hh, ww = x.shape
    co, cg, kh, kw = w.shape
    ho, wo = (hh - kh) // stride[0] + 1, (ww - kw) // stride[1] + 1
    y = np.zeros((n, co, ho, wo))
    for o in range(co):
        g0 = (o // (co // group)) * cg
        for r in range(kh):
            for t in range(kw):
                patch = x[:, g0:g0 + cg, r:r + stride[0] * ho:stride[0], t:t + stride[1] * wo:stride[1]]
                y[:, o] += np.einsum("nchw,c->nhw", patch, w[o, :, r, t])
        y[:, o] += b[o]
    return y


def conv_transpose(x, w, stride, pads):
    n, ci, hh, ww = x.shape
    _, co, kh, kw = w.shape
    full = np.zeros((n, co, (hh - 1) * stride[0] + kh, (ww - 1) * stride[1] + kw))
    for i in range(hh):
        for j in range(ww):
            full[:, :, i * stride[0]:i * stride[0] + kh, j * stride[1]:j * stride[1] + kw] += np.einsum(
                "nc,cokl->nokl", x[:, :, i, j].astype(np.float64), w)
    return full[:, :, pads[0]:full.shape[2] - pads[2], pads[1]:full.shape[3] - pads[3]]


want = {"y1": x1.astype(np.float64) @ w1, "y2": 0.5 * (a.astype(np.float64) @ bT.T) + 2.0 * c,
        "y3": conv2d(img, k, kb, 2, (2, 1), (1, 0, 1, 2)), "y4": conv_transpose(img2, kt, (2, 2), (1, 1, 0, 0))}
for n in outs:
    got = np.load(path(f"{n}_f32_2.npy"))
    check(got.shape == want[n].shape and np.allclose(got, want[n], rtol=1e-5, atol=1e-4),
          f"{n} vs numpy: shapes {got.shape} {want[n].shape}")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("ok: the reference kernels write the same bytes with 1 and 2 threads, and match numpy")
