"""ONNX models end to end against onnxruntime.

Every valid model of tests/frontend/gen_models.py (one per op family: the
ViT patch with its Shape->Gather->Concat->Reshape sub-graph, a CNN with
symbolic H and W, a causal attention block with dim_param batch and seq,
elementwise, reductions, data movement, ...) is compiled once by
`symc compile` with declared ranges, then run by `symc run` on the CPU
reference backend at min, opt, opt+1, a prime off-opt size and max, on the
same random inputs given to onnxruntime. fp32 outputs must agree to a
relative error < 1e-5 (issue 4);
integer and boolean outputs exactly.

With PRECISION fp16 or bf16 the engines are half engines (`--fp16`/`--bf16`:
the precision pass stores weights and activations in half, fp32 islands per
its rules), built twice: for the reference backend alone (`--no-gpu`: every
op on half storage) and with the CUDA target's rules (GPU code compiled by
NVRTC, half only where the CUDA target has half kernels), both run on the
reference backend against fp32 onnxruntime: relative error <= 1e-2 (fp16)
or <= 2e-2 (bf16) at every point, and infinities and NaNs exactly where
onnxruntime's fp32 has them.

usage: test_onnx_models.py SYMC GEN_MODELS TMPDIR [fp16|bf16]
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort

symc, gen_models, tmp = sys.argv[1:4]
precision = sys.argv[4] if len(sys.argv) > 4 else "fp32"
TOL = {"fp32": 1e-5, "fp16": 1e-2, "bf16": 2e-2}[precision]
BUILDS = [("", [])] if precision == "fp32" else [(".ref", ["--" + precision, "--no-gpu"]),
                                                  (".cuda", ["--" + precision])]
os.makedirs(tmp, exist_ok=True)
subprocess.run([sys.executable, gen_models, tmp], check=True, capture_output=True)
gen_bench = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_bench_models.py")
subprocess.run([sys.executable, gen_bench, tmp], check=True, capture_output=True)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from models import DEFAULT, FP32_ONLY, MODELS, NO_CUDA, POINTS, RANGES  # noqa: E402

NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
      onnx.TensorProto.BOOL: np.bool_, onnx.TensorProto.DOUBLE: np.float64, onnx.TensorProto.INT8: np.int8,
      onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.INT16: np.int16, onnx.TensorProto.UINT16: np.uint16,
      onnx.TensorProto.UINT32: np.uint32, onnx.TensorProto.UINT64: np.uint64}

failures = checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def dims_of(value_info):
    """[(name or None, value or None)] per dim."""
    out = []
    for d in value_info.type.tensor_type.shape.dim:
        out.append((d.dim_param or None, d.dim_value if d.HasField("dim_value") else None))
    return out


def run_model(name, path, m, inputs, flags, sizes_of, suffix, extra):
    engine = os.path.join(tmp, name + suffix + ".symx")
    r = subprocess.run([symc, "compile", path, "-o", engine] + flags + extra, capture_output=True, text=True)
    check(r.returncode == 0, f"{name}{suffix}: compile: {r.stderr.strip()}")
    if r.returncode:
        return
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(11)
    for label, pick in POINTS:
        feeds, args = {}, []
        for inp in inputs:
            shape = [pick(t) for t in sizes_of[inp.name]]
            dt = NP[inp.type.tensor_type.elem_type]
            if inp.name == "attention_mask" and len(shape) == 2:  # padded rows; row 0 fully masked past min
                a = np.ones(shape, dt)
                for b in range(shape[0]):
                    a[b, rng.integers(1, shape[1] + 1):] = 0
                if label != "min":
                    a[0, :] = 0
            elif dt == np.float32 or dt == np.float64:
                a = rng.standard_normal(shape).astype(dt)
            elif dt == np.bool_:
                a = rng.integers(0, 2, shape).astype(np.bool_)
            else:
                a = rng.integers(1, 5, shape).astype(dt)  # no zero divisors
            feeds[inp.name] = a
            f = os.path.join(tmp, f"{name}.{inp.name}.npy")
            np.save(f, a)
            args += ["--input", f"{inp.name}={f}"]
        # onnxruntime cannot hand bf16 outputs to numpy: those have no oracle here
        outs = [o.name for o in sess.get_outputs() if o.type != "tensor(bfloat16)"]
        if label == "min" and len(outs) < len(m.graph.output):
            print(f"{name}: {len(m.graph.output) - len(outs)} bf16 output(s) not compared (no onnxruntime numpy type)")
        for o in outs:
            args += ["--output", f"{o}={os.path.join(tmp, name + '.' + o + '.out.npy')}"]
        r = subprocess.run([symc, "run", engine] + args, capture_output=True, text=True)
        check(r.returncode == 0, f"{name}{suffix} at {label}: run: {r.stderr.strip()}")
        if r.returncode:
            continue
        want = sess.run(outs, feeds)
        worst = 0.0
        for o, w in zip(outs, want):
            got = np.load(os.path.join(tmp, name + "." + o + ".out.npy"))
            w = np.asarray(w)
            check(got.shape == w.shape, f"{name} at {label}: output {o} shape {got.shape}, onnxruntime {w.shape}")
            if got.shape != w.shape:
                continue
            if np.issubdtype(w.dtype, np.floating):
                nan_ok = np.array_equal(np.isnan(got), np.isnan(w))
                check(nan_ok, f"{name} at {label}: output {o}: NaNs differ")
                fin = np.isfinite(w) & np.isfinite(got)
                scale = max(np.max(np.abs(w[fin])), 1e-30) if fin.any() else 1.0
                rel = float(np.max(np.abs(got[fin].astype(np.float64) - w[fin])) / scale) if fin.any() else 0.0
                check(np.array_equal(np.isinf(got), np.isinf(w)), f"{name} at {label}: output {o}: infinities differ")
                check(rel <= TOL, f"{name}{suffix} at {label}: output {o}: relative error {rel:.3g} (limit {TOL})")
                worst = max(worst, rel)
            else:
                check(np.array_equal(got, w), f"{name} at {label}: output {o}: values differ")
        print(f"{name}{suffix} at {label}: {len(outs)} outputs, worst relative error {worst:.2e}")


only = os.environ.get("SYMC_E2E_ONLY", "")  # comma-separated model names, for a focused run by hand
for name in MODELS:
    if only and name not in only.split(","):
        continue
    if precision != "fp32" and name in FP32_ONLY:
        continue
    path = os.path.join(tmp, name + ".onnx")
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    flags, sizes_of = [], {}
    for inp in inputs:
        triple = []
        for k, (sym, val) in enumerate(dims_of(inp)):
            triple.append((val, val, val) if val is not None else RANGES.get(sym, DEFAULT))
        flags += ["--shapes", inp.name + ":" + ",".join("x".join(str(t[i]) for t in triple) for i in range(3))]
        sizes_of[inp.name] = triple
    for suffix, extra in BUILDS:
        if name in NO_CUDA and "--no-gpu" not in extra:  # the CUDA target refuses it: reference only
            extra = extra + ["--no-gpu"]
        run_model(name, path, m, inputs, flags, sizes_of, suffix, extra)

print(f"test_onnx_models: {checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
