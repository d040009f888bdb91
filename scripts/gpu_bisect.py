#!/usr/bin/env python3
"""Finds the first node whose CUDA result differs from the reference backend.

usage: scripts/gpu_bisect.py SYMC SWEEP_CHECK MODEL.onnx WORKDIR TOL NAME:AxB[,NAME:...] [--half]
The model is compiled whole and checked with sweep_check at the given shapes (one
point, seeded inputs: floats normal, ints in [0, 4)); when it fails, the prefix of
the graph ending at a node's output (onnx.utils.extract_model) is checked for a
binary search over the nodes in graph order, and the first failing node is
printed with its inputs. --half converts the model to f16 storage first
(tests/gpu/half_models.py). Each step compiles with --no-tune.
"""
import os
import subprocess
import sys

import numpy as np
import onnx

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "gpu"))

symc, sweep, path, work, tol, point = sys.argv[1:7]
half = "--half" in sys.argv[7:]
os.makedirs(work, exist_ok=True)
if half:
    from half_models import to_half
    path = to_half(path, os.path.join(work, "model.f16.onnx"))
m = onnx.shape_inference.infer_shapes(onnx.load(path))
shapes = {kv.split(":")[0]: [int(x) for x in kv.split(":")[1].split("x")] for kv in point.split(",")}
NP = {1: np.float32, 7: np.int64, 6: np.int32, 9: np.bool_, 10: np.float16, 11: np.float64}
pdir = os.path.join(work, "pt")
os.makedirs(pdir, exist_ok=True)
rng = np.random.default_rng(3)
inits = {i.name for i in m.graph.initializer}
for inp in m.graph.input:
    if inp.name in inits:
        continue
    dt = NP[inp.type.tensor_type.elem_type]
    shp = shapes[inp.name]
    x = rng.standard_normal(shp).astype(dt) if dt in (np.float32, np.float16, np.float64) else \
        rng.integers(0, 4, shp).astype(dt)
    np.save(os.path.join(pdir, inp.name + ".npy"), x)
flags = []
for n, s in shapes.items():
    d = "x".join(map(str, s))
    flags += ["--shapes", f"{n}:{d},{d},{d}"]


def check(p, label):
    e = os.path.join(work, label + ".symx")
    r = subprocess.run([symc, "compile", p, "-o", e, "--no-tune"] + flags, capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()[-300:]
    r = subprocess.run([sweep, e, tol, pdir], capture_output=True, text=True)
    return r.returncode == 0, (r.stdout + r.stderr).strip()[-400:]


ok, out = check(path, "whole")
print("whole model:", "PASS" if ok else "FAIL", out, flush=True)
if ok:
    sys.exit(0)
vi = {v.name: v for v in list(m.graph.value_info) + list(m.graph.output)}
cands = []
for i, n in enumerate(m.graph.node):
    for o in n.output:
        if o in vi and vi[o].type.tensor_type.elem_type in (1, 10, 16):
            cands.append((i, o))
ins = [i.name for i in m.graph.input if i.name not in inits]
lo, hi = 0, len(cands) - 1  # invariant: first failing candidate in [lo, hi]
while lo < hi:
    mid = (lo + hi) // 2
    i, o = cands[mid]
    sub = os.path.join(work, "sub.onnx")
    try:
        onnx.utils.extract_model(path, sub, ins, [o])
    except Exception as e:
        print("extract failed at", o, e)
        lo = mid + 1
        continue
    res, out = check(sub, "sub")
    print(f"node {i} ({m.graph.node[i].op_type}) output {o}: {'PASS' if res else 'FAIL'}", flush=True)
    if res:
        lo = mid + 1
    else:
        hi = mid
i, o = cands[lo]
n = m.graph.node[i]
print("FIRST FAILING:", i, n.op_type, n.name, "inputs", list(n.input), "output", o)
for k in range(max(0, i - 4), i + 1):
    nk = m.graph.node[k]
    print("  ", k, nk.op_type, nk.name, list(nk.input), "->", list(nk.output),
          [(a.name, onnx.helper.get_attribute_value(a)) for a in nk.attribute if a.type != onnx.AttributeProto.TENSOR])
onnx.utils.extract_model(path, os.path.join(work, "first.onnx"), ins, [o])
r = subprocess.run([symc, "compile", os.path.join(work, "first.onnx"), "-o", os.path.join(work, "first.symx"),
                    "--no-tune"] + flags, capture_output=True, text=True)
src = subprocess.run([symc, "inspect", "--source", os.path.join(work, "first.symx")], capture_output=True, text=True)
print(src.stdout[-6000:])
