#!/usr/bin/env python3
"""Hardware proximity (docs/BENCHMARKS-SUITE.md, "Targets": near the hardware, host side, build): how close
symc gets to cuBLAS alone and to the device's copy bandwidth, how long a build takes,
and what one symrt_enqueue costs on the host. One process, four sections:

  gemm   single-op ONNX models at the suite's large GEMM shapes (M1: 4096x1024x4096,
         4096x4096x1024; M2 at B*S = 16384: FFN 16384x768x3072, 16384x3072x768, QKV
         16384x768x2304; written MxKxN), MatMul [M,K]x[K,N] with M dynamic (range
         1..M, opt = M, so the engine is tuned at the measured shape), a bias+GELU
         and a bias epilogue variant, and a batched [B,S,K]x[K,N] one. Each is compiled
         per precision (`symc compile`, plus --tf32 for tf32; for fp16/bf16 the ONNX
         model itself converted to f16/bf16 storage, as cuBLAS alone runs it) and timed by `symc bench --json
         --graphs`. cuBLAS alone = torch at the same shape doing the same work
         (mm; addmm for bias; torch._addmm_activation(use_gelu=True), cuBLASLt's
         bias+GELU epilogue, for bias+GELU; matmul for the batched one), in the
         matching mode (fp32 TF32 off; tf32: allow_tf32; fp16/bf16: half/bfloat16
         inputs, fp32 accumulation: the reduced-precision-reduction flags off).
         Reported: TFLOP/s of both (2*M*N*K / p50) and symc as % of cuBLAS
         (target >= 90%); "GEMM only" is torch.mm alone for the epilogue cases.
  bw     the device copy bandwidth (torch y.copy_(x) on 1 and 2 GiB, bytes read +
         written / p50; the reference is the higher of the two), then symc's fused
         memory-bound kernels at large sizes: relu(x*a+b) on [65536, 8192],
         LayerNorm(x + r), softmax and M5's GELU(softmax(LayerNorm(x + r))) on
         [65536, 4096] and [16384, 8192]. Bytes = each tensor the fused kernel must
         read or write, once; achieved bytes/s as % of the copy bandwidth (target
         >= 80%). Eager PyTorch's time for the same op is shown for context.
  build  `symc compile` wall time per suite model (bench/suite_models.py, the
         suite's ranges) with tuning (default; target <= 10 s) and --no-tune
         (target <= 3 s).
  host   `symc bench --json` per suite model at three points (opt first, then two
         other sweep points), with --graphs and without: host_us = median host time
         of one symrt_enqueue at a shape already seen (captured, with graphs; target
         <= 15 us), first_us = the first call at a new shape (the 2nd and 3rd points;
         the 1st point's first call also pays the context's one-off setup, reported
         apart; target <= 50 us).

Correctness: every symc output that is timed is checked against torch in float64 on
the GPU at the same shape (the engine run in-process through the symc Python module,
zero-copy; `symc run` on .npy files where the module cannot load): ||out - ref|| /
||ref|| < 1e-4 for fp32, < 1e-2 for tf32/fp16/bf16. A failure anywhere (compile,
bench, check, peer) is recorded in the tables and the JSON, and the run goes on.
Timing: CUDA events per call, median of --iters (>= 100) after --warmup; input sets
rotated as `symc bench` rotated them (1 set for tensors past 128 MiB).

Output: progress lines, then the markdown tables (target and PASS/FAIL next to every
ratio) printed LAST; with --out DIR also DIR/hw.md and DIR/hw.json (rewritten after
each section, so a cut-off run keeps what it finished).

usage (device, repo root, build/bin and build/lib carried):
  python3 bench/bench_hw.py --symc build/bin/symc --out $OUT            # ~2.5 min on an H100
  python3 bench/bench_hw.py --symc build/bin/symc --out $OUT --quick    # ~1 min
  python3 bench/bench_hw.py --symc build/bin/symc --out /tmp/hw --dry   # no GPU: builds every
      ONNX model, compiles it (--no-gpu for fp32; the precision variants with their flag,
      GPU code without tuning), checks each engine at a small shape on the reference
      backend against torch fp64 on the CPU (when torch is importable) and runs
      `symc bench --backend ref` there; no timing targets
options: --sections gemm,bw,build,host  --precisions fp32,tf32,fp16,bf16  --iters 100
         --warmup 20  --work DIR  --check-via auto|module|run
"""
import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "gpu"))  # half_models.to_half
try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    print(f"bench_hw.py: needs the onnx package ({e})", flush=True)
    sys.exit(1)
import bench_seed as seed  # noqa: E402  (run, last_line, point_arg, compile_shapes, fmt, geomean)
import suite_models  # noqa: E402

T_START = time.perf_counter()
TOL = {"fp32": 1e-4, "tf32": 1e-2, "fp16": 1e-2, "bf16": 1e-2}
TARGET = {"gemm_pct": 90.0, "bw_pct": 80.0, "build_tuned_s": 10.0, "build_notune_s": 3.0, "host_us": 15.0,
          "first_us": 50.0}
PREC_FLAG = {"fp32": [], "tf32": ["--tf32"], "fp16": ["--fp16"], "bf16": ["--bf16"]}
N = helper.make_node


def log(*a):
    print(f"[hw {time.perf_counter() - T_START:6.1f}s]", *a, flush=True)


def short(ex):
    text = str(ex).strip()
    return f"{type(ex).__name__}: {text.splitlines()[0][:240] if text else ''}"


def pf(ok):
    return "-" if ok is None else ("PASS" if ok else "**FAIL**")


def f32(a):
    return np.asarray(a, dtype=np.float32)


# ------------------------------------------------------------------ models --

GEMM_CASES = [
    dict(id="M1.fc1", M=4096, K=1024, N=4096, epi="none"),
    dict(id="M1.fc2", M=4096, K=4096, N=1024, epi="none"),
    dict(id="M2.ffn1", M=16384, K=768, N=3072, epi="none"),
    dict(id="M2.ffn2", M=16384, K=3072, N=768, epi="none"),
    dict(id="M2.qkv", M=16384, K=768, N=2304, epi="none"),
    dict(id="M1.fc1+bias+gelu", M=4096, K=1024, N=4096, epi="bias_gelu"),
    dict(id="M2.ffn1+bias+gelu", M=16384, K=768, N=3072, epi="bias_gelu"),
    dict(id="M2.qkv+bias", M=16384, K=768, N=2304, epi="bias"),
    dict(id="M2.ffn1 batched", B=32, S=512, K=768, N=3072, epi="none"),
]
GEMM_QUICK = ["M1.fc1", "M2.ffn1+bias+gelu"]

BW_CASES = [
    dict(id="relu(x*a+b)", kind="ew", R=65536, H=8192),
    dict(id="LayerNorm(x+r)", kind="ln", R=65536, H=4096),
    dict(id="LayerNorm(x+r)", kind="ln", R=16384, H=8192),
    dict(id="softmax", kind="softmax", R=65536, H=4096),
    dict(id="softmax", kind="softmax", R=16384, H=8192),
    dict(id="M5 gelu(softmax(LN(x+r)))", kind="m5", R=65536, H=4096),
    dict(id="M5 gelu(softmax(LN(x+r)))", kind="m5", R=16384, H=8192),
]
BW_QUICK = [0, 1, 4]
COPY_GIB = (1, 2)

BUILD_QUICK = ["S1", "M1", "M2", "M5"]


def gemm_spec(c, dry):
    """spec dict in bench_seed's layout (inputs, ranges, point) for one GEMM case"""
    K, Nn = c["K"], c["N"]
    if "B" in c:
        B, S = c["B"], c["S"]
        spec = dict(inputs=[("x", ["B", "S", K])], ranges={"B": (1, B, B), "S": (1, S, S)},
                    point={"B": B, "S": S}, small={"B": 2, "S": 3})
        c["M"] = B * S
    else:
        spec = dict(inputs=[("x", ["M", K])], ranges={"M": (1, c["M"], c["M"])}, point={"M": c["M"]},
                    small={"M": 8})
    if dry:
        spec["point"] = spec["small"]
    spec["outputs"] = ["y"]
    return spec


def gemm_weights(c):
    rng = np.random.default_rng(4321)
    K, Nn = c["K"], c["N"]
    W = {"w": f32(rng.standard_normal((K, Nn)) / math.sqrt(K))}
    if c["epi"] != "none":
        W["b"] = f32(rng.standard_normal((Nn,)) * 0.1)
    return W


def gemm_onnx(c, W):
    nodes = [N("MatMul", ["x", "w"], ["mm" if c["epi"] != "none" else "y"])]
    if c["epi"] == "bias":
        nodes.append(N("Add", ["mm", "b"], ["y"]))
    elif c["epi"] == "bias_gelu":
        nodes += [N("Add", ["mm", "b"], ["h"]), N("Gelu", ["h"], ["y"])]
    return nodes, [numpy_helper.from_array(v, k) for k, v in W.items()]


def bw_spec(c, dry):
    R, H = c["R"], c["H"]
    if c["kind"] in ("ew", "softmax"):
        ins = [("x", ["R", "H"])]
    else:
        ins = [("x", ["R", "H"]), ("r", ["R", "H"]), ("g", ["H"]), ("b", ["H"])]
    spec = dict(inputs=ins, outputs=["y"], ranges={"R": (1, R, 65536), "H": (64, H, 8192)},
                point={"R": R, "H": H}, small={"R": 5, "H": 67})
    if dry:
        spec["point"] = spec["small"]
    return spec


def bw_onnx(c):
    k = c["kind"]
    if k == "ew":
        return ([N("Mul", ["x", "a"], ["t"]), N("Add", ["t", "c"], ["u"]), N("Relu", ["u"], ["y"])],
                [numpy_helper.from_array(np.array(1.5, np.float32), "a"),
                 numpy_helper.from_array(np.array(-0.25, np.float32), "c")])
    if k == "softmax":
        return [N("Softmax", ["x"], ["y"], axis=-1)], []
    nodes = [N("Add", ["x", "r"], ["s"]),
             N("LayerNormalization", ["s", "g", "b"], ["n" if k == "m5" else "y"], axis=-1, epsilon=1e-5)]
    if k == "m5":
        nodes += [N("Softmax", ["n"], ["p"], axis=-1), N("Gelu", ["p"], ["y"])]
    return nodes, []


def bw_bytes(c, point):
    R, H = point["R"], point["H"]
    big = {"ew": 2, "softmax": 2, "ln": 3, "m5": 3}[c["kind"]]
    return 4 * (big * R * H + (2 * H if c["kind"] in ("ln", "m5") else 0))


def write_onnx(name, spec, nodes, inits, path, opset=20):
    vi = helper.make_tensor_value_info
    ins = [vi(n, TensorProto.FLOAT, d) for n, d in spec["inputs"]]
    outs = [helper.make_empty_tensor_value_info(o) for o in spec["outputs"]]
    g = helper.make_graph(nodes, name, ins, outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 9
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    onnx.save(m, path)


# --------------------------------------------------------- torch references --

def ref_fn(torch, kind, W):
    """float64 reference on any device: f(list of float64 tensors) -> float64 tensor"""
    F = torch.nn.functional

    def const(name, like):
        return torch.from_numpy(W[name]).to(device=like.device, dtype=torch.float64)

    if kind in ("none", "bias", "bias_gelu"):
        def f(ts):
            x = ts[0]
            y = x @ const("w", x)
            if kind != "none":
                y = y + const("b", x)
            if kind == "bias_gelu":
                y = F.gelu(y)
            return y
        return f
    if kind == "ew":
        return lambda ts: torch.relu(ts[0] * 1.5 - 0.25)
    if kind == "softmax":
        return lambda ts: torch.softmax(ts[0], dim=-1)

    def ln(ts):
        x, r, g, b = ts
        y = F.layer_norm(x + r, (x.shape[-1],), g, b, 1e-5)
        return F.gelu(torch.softmax(y, dim=-1)) if kind == "m5" else y
    return ln


def rel_err_t(torch, out, ref):
    out = out.detach()
    if tuple(out.shape) != tuple(ref.shape):
        return float("nan"), f"shape {list(out.shape)} != {list(ref.shape)}"
    if not bool(torch.isfinite(out).all()):
        return float("nan"), "non-finite output"
    d = torch.linalg.vector_norm((out.to(ref.device, torch.float64) - ref).reshape(-1)).item()
    n = torch.linalg.vector_norm(ref.reshape(-1)).item()
    return d / (n if n > 0 else 1.0), ""


def make_inputs(torch, spec, point, dev, seed_):
    """seeded float32 inputs (LayerNorm's g around 1, b small) on dev"""
    g = torch.Generator(device=dev)  # generated where they are used (GiB-sized inputs on the GPU)
    g.manual_seed(seed_)
    out = []
    for n, d in spec["inputs"]:
        shape = seed.dims_at(d, point)
        t = torch.randn(shape, generator=g, dtype=torch.float32, device=dev)
        if n == "g":
            t = 1 + 0.1 * t
        elif n == "b" and len(shape) == 1 and "r" in [i[0] for i in spec["inputs"]]:
            t = 0.1 * t
        out.append(t)
    return out


# ----------------------------------------------------------------- runner --

class Ctx:
    """what every section needs: args, torch (or None), the work dir, the symc module (or None)"""

    def __init__(self, a, torch, work):
        self.a, self.torch, self.work = a, torch, work
        self.symc_py = None
        self.symc_py_err = None
        self.cuda = torch is not None and not a.dry and torch.cuda.is_available()

    def load_symc_py(self):
        if self.symc_py is not None or self.symc_py_err is not None or self.torch is None:
            return self.symc_py
        try:
            root = os.path.dirname(HERE)
            if os.path.join(root, "frontend", "torch") not in sys.path:
                sys.path.insert(0, os.path.join(root, "frontend", "torch"))
            lib = os.path.join(os.path.dirname(os.path.dirname(self.a.symc)), "lib", "libsymc.so")
            if os.path.exists(lib):
                os.environ.setdefault("SYMC_LIB", lib)
            import symc as symc_py
            symc_py.find_library()
            self.symc_py = symc_py
        except Exception as ex:  # noqa: BLE001
            self.symc_py_err = short(ex)
            log(f"symc Python module unavailable ({self.symc_py_err}); checks go through `symc run`")
        return self.symc_py


def compile_engine(cx, onnx_path, spec, engine, extra, timeout=600):
    flags = list(extra)
    if cx.a.dry and not any(f in flags for f in ("--tf32", "--fp16", "--bf16")):
        flags.append("--no-gpu")  # a precision flag needs GPU code (compiled without tuning where no GPU is)
    cmd = [cx.a.symc, "compile", onnx_path] + seed.compile_shapes(spec) + flags + ["-o", engine]
    rc, out, err, dt = seed.run(cmd, timeout)
    return (None if rc == 0 else f"symc compile failed (exit {rc}): {seed.last_line(err)}"), dt, " ".join(cmd)


def symc_bench(cx, engine, spec, points, graphs=True, iters=None, warmup=None, tag="b"):
    """`symc bench --json` at points; returns (list of per-point dicts, error)"""
    bjson = os.path.join(cx.work, f"{os.path.basename(engine)}.{tag}.json")
    cmd = [cx.a.symc, "bench", engine, "--json", bjson]
    for p in points:
        cmd += ["--point", seed.point_arg(spec, p)]
    if cx.a.dry:
        cmd += ["--backend", "ref", "--iters", "1", "--warmup", "0"]
    else:
        cmd += ["--backend", "cuda", "--iters", str(iters or cx.a.iters), "--warmup", str(warmup or cx.a.warmup)]
        if graphs:
            cmd += ["--graphs"]
    rc, out, err, dt = seed.run(cmd, 600)
    if rc:
        return None, f"symc bench failed (exit {rc}): {seed.last_line(err)}"
    try:
        return json.load(open(bjson))["points"], None
    except Exception as ex:  # noqa: BLE001
        return None, f"cannot read {bjson}: {short(ex)}"


def engine_steps(cx, engine):
    """`symc inspect`'s step list in short: 'gemm(cuBLASLt,bias) + kernel', or None"""
    rc, out, err, dt = seed.run([cx.a.symc, "inspect", engine], 120)
    if rc:
        return None
    lines = out.splitlines()
    try:
        i = next(k for k, l in enumerate(lines) if l.startswith("steps ("))
    except StopIteration:
        return None
    parts = []
    for l in lines[i + 1:]:
        w = l.split()
        if len(w) < 3 or not w[0].isdigit():
            break
        kind = w[1]
        if kind == "gemm" and len(w) > 3:
            lib = w[3]
            extra = [t.split("=")[0] for t in w if "=" in t and t.split("=")[0] in ("bias", "epilogue", "act")
                     and not t.endswith("=-")]
            parts.append(f"{kind}({','.join([lib] + extra)})")
        else:
            parts.append(kind)
    return " + ".join(parts) if parts else None


def check_engine(cx, engine, spec, point, ref, tol, seed_=7, inputs=None, dtype=None):
    """runs the engine at point on inputs (seeded) and compares with ref(float64 inputs).
    dtype: the engine's input dtype when not fp32 (a half-storage engine: its inputs are the
    rounded values, and so are the reference's). Returns dict(rel_err, check, via)."""
    torch = cx.torch
    if torch is None:
        return {"rel_err": None, "check": "skipped (no torch for the reference)"}
    dev = "cuda" if cx.cuda else "cpu"
    xs = inputs if inputs is not None else make_inputs(torch, spec, point, dev, seed_)
    if dtype is not None:
        xs = [x.to(dtype) for x in xs]
        ref_in = [x.double() for x in xs]
        ref = (lambda _ts, _r=ref, _in=ref_in: _r(_in)) if inputs is None else ref
    via = cx.a.check_via
    if via == "auto":
        via = "module" if (cx.cuda and cx.load_symc_py() is not None) else "run"
    out = None
    try:
        if via == "module":
            mod = cx.load_symc_py().EngineModule(engine, gpu=cx.cuda)
            with torch.inference_mode():
                out = mod(*xs)
            if cx.cuda:
                torch.cuda.synchronize()
            del mod
        else:
            args = []
            for (n, _), x in zip(spec["inputs"], xs):
                f = os.path.join(cx.work, f"chk_in_{n}.npy")
                np.save(f, x.cpu().numpy())
                args += ["--input", f"{n}={f}"]
            outf = os.path.join(cx.work, "chk_out.npy")
            if os.path.exists(outf):
                os.remove(outf)
            backend = "cuda" if cx.cuda else "ref"
            rc, o, err, dt = seed.run([cx.a.symc, "run", engine, "--backend", backend] + args +
                                      ["--output", f"{spec['outputs'][0]}={outf}"], 600)
            if rc:
                return {"rel_err": None, "check": f"FAIL: symc run failed: {seed.last_line(err)}", "via": via}
            out = torch.from_numpy(np.load(outf)).to(dev)
        with torch.inference_mode():
            r = ref([x.double() for x in xs])
            e, why = rel_err_t(torch, out, r)
        del r
    except Exception as ex:  # noqa: BLE001
        return {"rel_err": None, "check": f"FAIL: {short(ex)}", "via": via}
    finally:
        del out
        if cx.cuda:
            torch.cuda.empty_cache()
    ok = e < tol
    return {"rel_err": e, "tol": tol, "via": via,
            "check": "ok" if ok else f"FAIL: {why or f'rel err {e:.3g} >= {tol:g}'}"}


Timer = seed.TorchTimer  # CUDA events per call, median after warm-up, input sets rotated


def set_precision(torch, prec):
    m = torch.backends.cuda.matmul
    m.allow_tf32 = prec == "tf32"
    torch.backends.cudnn.allow_tf32 = prec == "tf32"
    for k in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
        if hasattr(m, k):
            try:
                setattr(m, k, False)  # fp32 accumulation everywhere, as symc's --fp16/--bf16
            except Exception:  # noqa: BLE001
                pass


# ------------------------------------------------------------------- gemm --

def gemm_torch_ops(torch, c):
    """[(key, label, fn(x, w, b))]: the first is the cuBLAS reference doing the same work"""
    F = torch.nn.functional
    K = c["K"]
    if "B" in c:
        return [("cublas", "torch.matmul [B,S,K]x[K,N]", lambda x, w, b: torch.matmul(x, w))]
    if c["epi"] == "none":
        return [("cublas", "torch.mm", lambda x, w, b: torch.mm(x, w))]
    mm = ("gemm_only", "torch.mm (GEMM only)", lambda x, w, b: torch.mm(x.reshape(-1, K), w))
    if c["epi"] == "bias":
        return [("cublas", "torch.addmm (cuBLASLt bias epilogue)", lambda x, w, b: torch.addmm(b, x, w)), mm]
    ops = [("eager", "torch.addmm + F.gelu (eager)", lambda x, w, b: F.gelu(torch.addmm(b, x, w))), mm]
    if hasattr(torch, "_addmm_activation"):
        ops.insert(0, ("cublas", "torch._addmm_activation(use_gelu) (cuBLASLt bias+GELU epilogue, tanh GELU)",
                       lambda x, w, b: torch._addmm_activation(b, x, w, use_gelu=True)))
    return ops


def section_gemm(cx, res):
    a, torch = cx.a, cx.torch
    cases = [c for c in GEMM_CASES if not a.quick or c["id"] in GEMM_QUICK]
    precs = [p.strip() for p in a.precisions.split(",") if p.strip()]
    out = res.setdefault("gemm", {"rows": [], "errors": []})
    for ci, c in enumerate(cases):
        c = dict(c)
        spec = gemm_spec(c, a.dry)
        W = gemm_weights(c)
        point = spec["point"]
        M = c["M"] if not a.dry else (point.get("M") or point["B"] * point["S"])
        flops = 2.0 * M * c["K"] * c["N"]
        shape = (f"[{c['B']},{c['S']},{c['K']}]x[{c['K']},{c['N']}]" if "B" in c else
                 f"{c['M']}x{c['K']}x{c['N']}")
        path = os.path.join(cx.work, f"gemm_{ci}.onnx")
        try:
            write_onnx("gemm", spec, *gemm_onnx(c, W), path)
        except Exception as ex:  # noqa: BLE001
            out["errors"].append(f"{c['id']}: ONNX build failed: {short(ex)}")
            continue
        ref = ref_fn(torch, c["epi"], W) if torch is not None else None
        inputs = None
        if cx.cuda:  # the check inputs and the fp64 reference are shared by the precisions
            inputs = make_inputs(torch, spec, point, "cuda", 11)
            with torch.inference_mode():
                r64 = ref([x.double() for x in inputs])
            ref_cached = (lambda _ts, _r=r64: _r)
        else:
            ref_cached = ref
        for prec in precs:
            row = {"case": c["id"], "shape": shape, "epilogue": c["epi"], "precision": prec, "flops": flops,
                   "point": seed.point_arg(spec, point)}
            out["rows"].append(row)
            eng = path[:-5] + f"_{prec}.symx"
            src, flags, half = path, PREC_FLAG[prec], None
            if prec in ("fp16", "bf16"):
                # half storage end to end, as cuBLAS alone runs it: the model itself in f16/bf16
                # (inputs, weights, output), compiled as it is; --fp16/--bf16 on the fp32 model
                # would add the casts of its fp32 inputs and output to the timing
                import onnx
                from half_models import to_half
                elem = onnx.TensorProto.FLOAT16 if prec == "fp16" else onnx.TensorProto.BFLOAT16
                src, flags = to_half(path, path[:-5] + f".{prec}.onnx", elem), []
                half = None if torch is None else torch.float16 if prec == "fp16" else torch.bfloat16
                row["storage"] = prec + " (the ONNX model in " + prec + ")"
            err, dt, cmd = compile_engine(cx, src, spec, eng, flags)
            row["compile_s"] = dt
            if err:
                row["error"] = err
                log(f"gemm {c['id']} {prec}: {err}")
                continue
            row["steps"] = engine_steps(cx, eng)
            pts, err = symc_bench(cx, eng, spec, [point], graphs=True)
            if err:
                row["error"] = err
            else:
                p = pts[0]
                row["symc"] = {k: p.get(k) for k in ("p50_ms", "p90_ms", "min_ms", "host_us", "first_us", "sets")}
                if p.get("p50_ms"):
                    row["symc_tflops"] = flops / (p["p50_ms"] * 1e-3) / 1e12
            if ref is not None:
                if half is not None and inputs is not None:
                    hin = [x.to(half) for x in inputs]
                    with torch.inference_mode():
                        rh = ref([x.double() for x in hin])
                    row.update(check_engine(cx, eng, spec, point, (lambda _ts, _r=rh: _r), TOL[prec], inputs=hin))
                    del rh
                else:
                    row.update(check_engine(cx, eng, spec, point, ref_cached, TOL[prec], inputs=inputs, dtype=half))
            if cx.cuda:
                try:
                    time_gemm_peers(cx, c, W, spec, point, prec, row, flops)
                except Exception as ex:  # noqa: BLE001
                    row["peer_error"] = short(ex)
                    traceback.print_exc()
            try:
                os.remove(eng)
            except OSError:
                pass
            log(f"gemm {c['id']} {shape} {prec}: symc {seed.fmt((row.get('symc') or {}).get('p50_ms'))} ms "
                f"({seed.fmt(row.get('symc_tflops'), 1)} TFLOP/s), cuBLAS "
                f"{seed.fmt((row.get('cublas') or {}).get('p50_ms'))} ms "
                f"({seed.fmt(row.get('cublas_tflops'), 1)} TFLOP/s) -> {seed.fmt(row.get('pct_of_cublas'), 1)}%, "
                f"check {row.get('check')} {seed.fmt(row.get('rel_err'), 8) if row.get('rel_err') is not None else ''}")
        del inputs
        if cx.cuda:
            torch.cuda.empty_cache()


def time_gemm_peers(cx, c, W, spec, point, prec, row, flops):
    torch, a = cx.torch, cx.a
    set_precision(torch, prec)
    dt = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[prec]
    w = torch.from_numpy(W["w"]).to("cuda", dt)
    b = torch.from_numpy(W["b"]).to("cuda", dt) if "b" in W else None
    n_sets = int((row.get("symc") or {}).get("sets") or 1)
    sets = [[x.to(dt) for x in make_inputs(torch, spec, point, "cuda", 20 + i)] + [w, b] for i in range(n_sets)]
    timer = Timer(torch)
    for key, label, fn in gemm_torch_ops(torch, c):
        try:
            t = timer.time(fn, sets, a.iters, a.warmup)
            t["op"] = label
            row[key] = t
        except Exception as ex:  # noqa: BLE001
            row[key] = {"error": short(ex), "op": label}
    # the reference: the fastest torch call doing the same work (for +bias+GELU: cuBLASLt's fused epilogue,
    # or addmm + gelu should that fail or be slower)
    same = [row[k] for k in ("cublas", "eager") if (row.get(k) or {}).get("p50_ms")]
    if same:
        best = min(same, key=lambda t: t["p50_ms"])
        row["ref"] = best
        row["cublas_tflops"] = flops / (best["p50_ms"] * 1e-3) / 1e12
    s, cb = (row.get("symc") or {}).get("p50_ms"), (row.get("ref") or {}).get("p50_ms")
    if s and cb:
        row["pct_of_cublas"] = 100.0 * cb / s
        row["target_met"] = row["pct_of_cublas"] >= TARGET["gemm_pct"] and str(row.get("check")) == "ok"
    set_precision(torch, "fp32")
    del sets, w, b


# --------------------------------------------------------------------- bw --

def section_bw(cx, res):
    a, torch = cx.a, cx.torch
    out = res.setdefault("bw", {"copy": [], "rows": [], "errors": []})
    timer = Timer(torch) if cx.cuda else None
    if cx.cuda:
        for gib in (COPY_GIB[:1] if a.quick else COPY_GIB):
            try:
                n = (gib << 30) // 4
                x = torch.randn(n, device="cuda")
                y = torch.empty_like(x)
                t = timer.time(lambda: y.copy_(x), [[]], a.iters, a.warmup)
                t["gib"] = gib
                t["bytes"] = 2 * n * 4
                t["tb_s"] = t["bytes"] / (t["p50_ms"] * 1e-3) / 1e12
                out["copy"].append(t)
                log(f"bw: copy {gib} GiB: {t['p50_ms']:.3f} ms, {t['tb_s']:.3f} TB/s (read + write)")
                del x, y
                torch.cuda.empty_cache()
            except Exception as ex:  # noqa: BLE001
                out["errors"].append(f"copy {gib} GiB: {short(ex)}")
    copy_bw = max((t["tb_s"] for t in out["copy"]), default=None)
    out["copy_tb_s"] = copy_bw
    cases = [c for i, c in enumerate(BW_CASES) if not a.quick or i in BW_QUICK]
    for i, c in enumerate(cases):
        spec = bw_spec(c, a.dry)
        point = spec["point"]
        nbytes = bw_bytes(c, point)
        row = {"case": c["id"], "kind": c["kind"], "shape": f"[{point['R']}, {point['H']}]", "bytes": nbytes,
               "point": seed.point_arg(spec, point)}
        out["rows"].append(row)
        path = os.path.join(cx.work, f"bw_{i}.onnx")
        eng = path[:-5] + ".symx"
        try:
            write_onnx("bw", spec, *bw_onnx(c), path)
        except Exception as ex:  # noqa: BLE001
            row["error"] = f"ONNX build failed: {short(ex)}"
            continue
        err, dt, cmd = compile_engine(cx, path, spec, eng, [])
        row["compile_s"] = dt
        if err:
            row["error"] = err
            log(f"bw {c['id']} {row['shape']}: {err}")
            continue
        row["steps"] = engine_steps(cx, eng)
        pts, err = symc_bench(cx, eng, spec, [point], graphs=True)
        if err:
            row["error"] = err
        else:
            p = pts[0]
            row["symc"] = {k: p.get(k) for k in ("p50_ms", "p90_ms", "min_ms", "host_us", "sets")}
            if p.get("p50_ms"):
                row["symc_tb_s"] = nbytes / (p["p50_ms"] * 1e-3) / 1e12
        if torch is not None:
            row.update(check_engine(cx, eng, spec, point, ref_fn(torch, c["kind"], {}), TOL["fp32"]))
        if cx.cuda:
            try:
                n_sets = int((row.get("symc") or {}).get("sets") or 1)
                sets = [make_inputs(torch, spec, point, "cuda", 30 + k) for k in range(n_sets)]
                f = ref_fn(torch, c["kind"], {})
                t = timer.time(lambda *ts: f(list(ts)), sets, a.iters, a.warmup)
                t["tb_s"] = nbytes / (t["p50_ms"] * 1e-3) / 1e12
                row["eager"] = t
                del sets
                torch.cuda.empty_cache()
            except Exception as ex:  # noqa: BLE001
                row["eager"] = {"error": short(ex)}
        if copy_bw and row.get("symc_tb_s"):
            row["pct_of_copy"] = 100.0 * row["symc_tb_s"] / copy_bw
            row["target_met"] = row["pct_of_copy"] >= TARGET["bw_pct"] and row.get("check") == "ok"
        try:
            os.remove(eng)
        except OSError:
            pass
        log(f"bw {c['id']} {row['shape']}: symc {seed.fmt((row.get('symc') or {}).get('p50_ms'))} ms, "
            f"{seed.fmt(row.get('symc_tb_s'), 3)} TB/s = {seed.fmt(row.get('pct_of_copy'), 1)}% of copy; eager "
            f"{seed.fmt((row.get('eager') or {}).get('p50_ms'))} ms; check {row.get('check')}")


# ------------------------------------------------------------ build, host --

def suite_engines(cx, res):
    """build section: compiles each suite model with and without tuning; returns {model: engine path}"""
    import bench_suite
    a = cx.a
    models = [m for m in suite_models.MODELS if not a.quick or m in BUILD_QUICK]
    if a.models:
        models = [m.strip() for m in a.models.split(",") if m.strip()]
    out = res.setdefault("build", {"rows": [], "errors": []})
    engines = {}
    for name in models:
        spec = suite_models.MODELS[name]
        row = {"model": name}
        out["rows"].append(row)
        try:
            W = spec["weights"](np.random.default_rng(1234))
            path = os.path.join(cx.work, f"suite_{name}.onnx")
            bench_suite.build_onnx(name, spec, W, path)
        except Exception as ex:  # noqa: BLE001
            row["error"] = f"ONNX build failed: {short(ex)}"
            continue
        for key, flags in (("tuned", []), ("no_tune", ["--no-tune"])):
            eng = path[:-5] + f"_{key}.symx"
            err, dt, cmd = compile_engine(cx, path, spec, eng, flags)
            row[key + "_s"] = dt
            if err:
                row[key + "_error"] = err
            elif key == "tuned":
                engines[name] = eng
        if not a.dry:
            t, n = row.get("tuned_s"), row.get("no_tune_s")
            row["tuned_ok"] = (t <= TARGET["build_tuned_s"]) if t is not None and "tuned_error" not in row else None
            row["no_tune_ok"] = (n <= TARGET["build_notune_s"]) if n is not None and "no_tune_error" not in row \
                else None
        log(f"build {name}: tuned {seed.fmt(row.get('tuned_s'), 2)} s, --no-tune {seed.fmt(row.get('no_tune_s'), 2)} s"
            + "".join(f"; {row[k]}" for k in ("tuned_error", "no_tune_error") if k in row))
    return engines


def host_points(spec, dry):
    if dry:
        return [spec["small"]]
    opt = {k: r[1] for k, r in spec["ranges"].items()}
    pts = [opt]
    for p in spec["sweep"]:
        if len(pts) == 3:
            break
        if all(p != q for q in pts):
            pts.append(p)
    return pts


def section_host(cx, res, engines):
    a = cx.a
    out = res.setdefault("host", {"rows": [], "errors": []})
    for name, eng in engines.items():
        spec = suite_models.MODELS[name]
        pts = host_points(spec, a.dry)
        row = {"model": name, "points": [seed.point_label(spec, p) for p in pts]}
        out["rows"].append(row)
        for key, graphs in (("graphs", True), ("no_graphs", False)):
            if a.dry and graphs:
                continue
            r, err = symc_bench(cx, eng, spec, pts, graphs=graphs, iters=a.iters, warmup=10, tag=key)
            if err:
                row[key] = {"error": err}
                continue
            d = {"host_us": [p.get("host_us") for p in r], "host_p90_us": [p.get("host_p90_us") for p in r],
                 "first_us": [p.get("first_us") for p in r], "p50_ms": [p.get("p50_ms") for p in r]}
            hs = [v for v in d["host_us"] if isinstance(v, (int, float))]
            fs = [v for v in d["first_us"][1:] if isinstance(v, (int, float))]
            d["host_us_max"] = max(hs) if hs else None
            d["first_us_new_max"] = max(fs) if fs else None
            d["first_us_first_point"] = d["first_us"][0] if d["first_us"] else None
            if not a.dry:
                d["host_ok"] = d["host_us_max"] <= TARGET["host_us"] if d["host_us_max"] is not None else None
                d["first_ok"] = d["first_us_new_max"] <= TARGET["first_us"] if d["first_us_new_max"] is not None \
                    else None
            row[key] = d
        log(f"host {name}: " + "; ".join(
            f"{k}: host {seed.fmt((row.get(k) or {}).get('host_us_max'), 1)} us, first at a new shape "
            f"{seed.fmt((row.get(k) or {}).get('first_us_new_max'), 1)} us" for k in ("graphs", "no_graphs")
            if k in row))
        try:
            os.remove(eng)
        except OSError:
            pass


# ----------------------------------------------------------------- report --

def fnum(v, nd=2):
    return seed.fmt(v, nd) if v is not None else "-"


def md_gemm(res, dry):
    g = res.get("gemm")
    if not g:
        return []
    L = ["### GEMM: symc vs cuBLAS alone at the same shape", "",
         f"Target: symc >= {TARGET['gemm_pct']:.0f}% of cuBLAS throughput (TFLOP/s = 2*M*N*K / p50). "
         "cuBLAS = the fastest torch call doing the same work (mm; addmm for +bias; for +bias+GELU "
         "_addmm_activation(use_gelu), cuBLASLt's bias+GELU epilogue (tanh GELU; symc computes erf GELU), or "
         "addmm + gelu (eager) if faster); 'GEMM only' = torch.mm without the epilogue. symc: `symc bench "
         "--graphs`, engine tuned at the measured M. fp16/bf16: torch and symc both on half/bfloat16 tensors "
         "(the ONNX model in half storage), fp32 accumulation. rel err vs torch fp64 (tol 1e-4 fp32, 1e-2 tf32/fp16/bf16).", "",
         "| case | MxKxN | prec | symc ms | symc TFLOP/s | cuBLAS ms | cuBLAS TFLOP/s | symc % of cuBLAS | "
         "target | GEMM only ms | eager ms | rel err | check | symc steps |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in g["rows"]:
        if r.get("skipped"):
            L.append(f"| {r['case']} | {r['shape']} | {r['precision']} | skipped: {r['skipped']} |" + " |" * 10)
            continue
        s = r.get("symc") or {}
        cb = r.get("ref") or {}
        err = r.get("rel_err")
        chk = r.get("check", "-")
        if r.get("error"):
            chk = f"{chk}; {r['error'][:120]}" if chk != "-" else r["error"][:160]
        if (r.get("cublas") or {}).get("error"):
            chk += f"; {r['cublas'].get('op')}: {r['cublas']['error'][:100]}"
        if r.get("peer_error"):
            chk += f"; torch: {r['peer_error'][:100]}"
        pct = r.get("pct_of_cublas")
        L.append(f"| {r['case']} | {r['shape']} | {r['precision']} | {fnum(s.get('p50_ms'), 4)} | "
                 f"{fnum(r.get('symc_tflops'), 1)} | {fnum(cb.get('p50_ms'), 4)} | {fnum(r.get('cublas_tflops'), 1)} | "
                 f"{fnum(pct, 1)}{'%' if pct is not None else ''} | "
                 f"{'-' if dry else pf(r.get('target_met')) if pct is not None else '-'} | "
                 f"{fnum((r.get('gemm_only') or {}).get('p50_ms'), 4)} | {fnum((r.get('eager') or {}).get('p50_ms'), 4)} | "
                 f"{format(err, '.2e') if isinstance(err, float) else '-'} | {chk} | {r.get('steps') or '-'} |")
    for e in g.get("errors", []):
        L.append(f"- error: {e}")
    L.append("")
    return L


def md_bw(res, dry):
    b = res.get("bw")
    if not b:
        return []
    cb = b.get("copy_tb_s")
    L = ["### Memory-bound fused kernels vs device copy bandwidth", ""]
    for t in b.get("copy", []):
        L.append(f"- device copy (torch `y.copy_(x)`, {t['gib']} GiB each way): p50 {t['p50_ms']:.3f} ms, "
                 f"**{t['tb_s']:.3f} TB/s** read + write")
    L += ["", f"Target: fused kernel bytes/s >= {TARGET['bw_pct']:.0f}% of the copy bandwidth "
          f"({fnum(cb, 3)} TB/s, the best copy above). Bytes = every tensor the fused kernel must read or "
          "write, counted once.", "",
          "| kernel | [rows, hidden] | MB moved | symc ms | symc TB/s | % of copy | target | eager ms | eager TB/s | "
          "rel err | check | symc steps |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in b["rows"]:
        s = r.get("symc") or {}
        e = r.get("eager") or {}
        err = r.get("rel_err")
        chk = r.get("check", "-")
        if r.get("error"):
            chk = f"{chk}; {r['error'][:140]}" if chk != "-" else r["error"][:160]
        pct = r.get("pct_of_copy")
        L.append(f"| {r['case']} | {r['shape']} | {r['bytes'] / 1e6:.0f} | {fnum(s.get('p50_ms'), 4)} | "
                 f"{fnum(r.get('symc_tb_s'), 3)} | {fnum(pct, 1)}{'%' if pct is not None else ''} | "
                 f"{'-' if dry or pct is None else pf(r.get('target_met'))} | {fnum(e.get('p50_ms'), 4)} | "
                 f"{fnum(e.get('tb_s'), 3)} | {format(err, '.2e') if isinstance(err, float) else '-'} | {chk} | "
                 f"{r.get('steps') or '-'} |")
    for e in b.get("errors", []):
        L.append(f"- error: {e}")
    L.append("")
    return L


def md_build(res, dry):
    b = res.get("build")
    if not b:
        return []
    L = ["### Build time per suite model (`symc compile`, wall clock, suite ranges)", "",
         f"Targets: <= {TARGET['build_tuned_s']:.0f} s with tuning (default), <= {TARGET['build_notune_s']:.0f} s "
         f"with --no-tune.{' Dry run: --no-gpu engines (no tuning either way).' if dry else ''}", "",
         "| model | tuned s | target | --no-tune s | target | notes |", "|---|---|---|---|---|---|"]
    for r in b["rows"]:
        notes = "; ".join(r[k] for k in ("error", "tuned_error", "no_tune_error") if k in r)
        L.append(f"| {r['model']} | {fnum(r.get('tuned_s'))} | {pf(r.get('tuned_ok'))} | {fnum(r.get('no_tune_s'))} | "
                 f"{pf(r.get('no_tune_ok'))} | {notes or '-'} |")
    L.append("")
    return L


def md_host(res, dry):
    h = res.get("host")
    if not h:
        return []
    L = ["### Host time per symrt_enqueue (`symc bench`, suite engines)", "",
         f"Targets: <= {TARGET['host_us']:.0f} us per enqueue at a captured shape (median host time of a call at "
         f"each point; the max decides), <= {TARGET['first_us']:.0f} us for the first call at a new shape (points 2 "
         "and 3; point 1's first call also pays the context's one-off setup). Per point values are listed as "
         "p1 / p2 / p3. Without graphs, a point whose GPU time exceeds its launch time fills the launch queue, and "
         "the host time then includes waiting for the GPU.", "",
         "| model | points | graphs: host us | target | graphs: first us | target | "
         "no graphs: host us | target | no graphs: first us | target |",
         "|---|---|---|---|---|---|---|---|---|---|"]

    def per(d, k):
        v = d.get(k)
        return " / ".join(fnum(x, 1) for x in v) if isinstance(v, list) and v else "-"
    for r in h["rows"]:
        g, n = r.get("graphs") or {}, r.get("no_graphs") or {}
        errs = "; ".join(d["error"] for d in (g, n) if d.get("error"))
        L.append(f"| {r['model']} | {' / '.join(r['points'])} | {per(g, 'host_us')} | {pf(g.get('host_ok'))} | "
                 f"{per(g, 'first_us')} | {pf(g.get('first_ok'))} | {per(n, 'host_us')} | {pf(n.get('host_ok'))} | "
                 f"{per(n, 'first_us')} | {pf(n.get('first_ok'))} |{' ' + errs if errs else ''}")
    L.append("")
    return L


def summary(res, dry):
    """one line per section: targets met / measured; correctness failures"""
    L = ["### Summary", ""]
    g = res.get("gemm", {}).get("rows", [])
    gm = [r for r in g if r.get("pct_of_cublas") is not None]
    if g:
        pcts = [r["pct_of_cublas"] for r in gm]
        L.append(f"- GEMM: {sum(1 for r in gm if r.get('target_met'))}/{len(gm)} at >= {TARGET['gemm_pct']:.0f}% of "
                 f"cuBLAS; geomean {fnum(seed.geomean(pcts), 1)}%, min {fnum(min(pcts) if pcts else None, 1)}%")
    b = res.get("bw", {}).get("rows", [])
    bm = [r for r in b if r.get("pct_of_copy") is not None]
    if b:
        L.append(f"- bandwidth: copy {fnum(res['bw'].get('copy_tb_s'), 3)} TB/s; "
                 f"{sum(1 for r in bm if r.get('target_met'))}/{len(bm)} fused kernels at >= {TARGET['bw_pct']:.0f}%"
                 f"; min {fnum(min((r['pct_of_copy'] for r in bm), default=None), 1)}%")
    bu = res.get("build", {}).get("rows", [])
    if bu and not dry:
        L.append(f"- build: {sum(1 for r in bu if r.get('tuned_ok'))}/{len(bu)} <= {TARGET['build_tuned_s']:.0f} s "
                 f"tuned, {sum(1 for r in bu if r.get('no_tune_ok'))}/{len(bu)} <= {TARGET['build_notune_s']:.0f} s "
                 f"without; max {fnum(max((r.get('tuned_s') or 0 for r in bu), default=None))} s / "
                 f"{fnum(max((r.get('no_tune_s') or 0 for r in bu), default=None))} s")
    ho = res.get("host", {}).get("rows", [])
    if ho and not dry:
        for k, lab in (("graphs", "with CUDA graphs"), ("no_graphs", "without graphs")):
            ds = [r.get(k) or {} for r in ho]
            L.append(f"- host {lab}: {sum(1 for d in ds if d.get('host_ok'))}/{len(ds)} models <= "
                     f"{TARGET['host_us']:.0f} us per enqueue (max "
                     f"{fnum(max((d.get('host_us_max') or 0 for d in ds), default=None), 1)} us), "
                     f"{sum(1 for d in ds if d.get('first_ok'))}/{len(ds)} <= {TARGET['first_us']:.0f} us at a new "
                     f"shape (max {fnum(max((d.get('first_us_new_max') or 0 for d in ds), default=None), 1)} us)")
    bad = correctness_failures(res)
    L.append(f"- correctness: {len(bad)} failure(s)" + ("" if not bad else ": " + "; ".join(bad[:12])))
    L.append("")
    return L


def correctness_failures(res):
    bad = []
    for sec in ("gemm", "bw"):
        for r in res.get(sec, {}).get("rows", []):
            if r.get("skipped"):
                continue
            c = r.get("check")
            if r.get("error") or (c is not None and c != "ok" and not str(c).startswith("skipped")):
                bad.append(f"{sec} {r['case']} {r.get('shape')} {r.get('precision', '')}: "
                           f"{r.get('error') or c}"[:200])
    for r in res.get("build", {}).get("rows", []):
        for k in ("error", "tuned_error", "no_tune_error"):
            if k in r:
                bad.append(f"build {r['model']}: {r[k]}"[:200])
    for r in res.get("host", {}).get("rows", []):
        for k in ("graphs", "no_graphs"):
            if (r.get(k) or {}).get("error"):
                bad.append(f"host {r['model']} {k}: {r[k]['error']}"[:200])
    return bad


def render(res, env, a):
    dry = a.dry
    L = [f"## symc hardware proximity ({env.get('gpu', 'dry run, no GPU')}, torch {env.get('torch', '-')}, "
         f"{env.get('symc_version', '')})", "", f"Command: `{' '.join(sys.argv)}`", ""]
    L += md_gemm(res, dry) + md_bw(res, dry) + md_build(res, dry) + md_host(res, dry) + summary(res, dry)
    return "\n".join(L)


def write_out(a, env, res, final):
    text = render(res, env, a)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "hw.md"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(a.out, "hw.json"), "w") as f:
            json.dump({"env": env, "targets": TARGET, "results": res, "complete": final,
                       "wall_s": time.perf_counter() - T_START}, f, indent=1, default=lambda o: None)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--symc", default="build/bin/symc")
    ap.add_argument("--out", default=None, help="writes hw.md and hw.json there")
    ap.add_argument("--quick", action="store_true",
                    help="2 GEMM cases in fp32/fp16, 3 bandwidth cases, 4 suite models, fewer iterations")
    ap.add_argument("--dry", action="store_true",
                    help="no GPU: build and compile every model (--no-gpu for fp32), check at small shapes on "
                         "the reference backend, no timing targets")
    ap.add_argument("--sections", default="gemm,bw,build,host")
    ap.add_argument("--precisions", default=None, help="GEMM precisions (fp32,tf32,fp16,bf16; quick: fp32,fp16)")
    ap.add_argument("--models", default=None, help="suite models for build/host (default all; quick: S1,M1,M2,M5)")
    ap.add_argument("--iters", type=int, default=None, help="timed runs per point (100; docs/BENCHMARKS-SUITE.md: >= 100)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed runs first (20; 10 with --quick)")
    ap.add_argument("--check-via", default="auto", choices=["auto", "module", "run"],
                    help="run engines for the checks in-process via the symc Python module, or `symc run`")
    ap.add_argument("--work", default=None, help="folder for ONNX files and engines (default: a temp dir)")
    a = ap.parse_args()
    a.iters = a.iters or 100
    a.warmup = a.warmup or (10 if a.quick else 20)
    a.precisions = a.precisions or ("fp32,fp16" if a.quick else "fp32,tf32,fp16,bf16")
    bad = [p for p in a.precisions.split(",") if p.strip() and p.strip() not in TOL]
    if bad:
        print(f"bench_hw.py: unknown precision(s) {bad}", flush=True)
        return 2
    if a.models:
        unknown = [m for m in a.models.split(",") if m.strip() and m.strip() not in suite_models.MODELS]
        if unknown:
            print(f"bench_hw.py: unknown model(s) {unknown}", flush=True)
            return 2
    a.symc = os.path.abspath(a.symc)
    if not os.access(a.symc, os.X_OK):
        print(f"bench_hw.py: no symc executable at {a.symc} (build it, or pass --symc)", flush=True)
        return 1
    sections = [s.strip() for s in a.sections.split(",") if s.strip()]
    work = a.work or tempfile.mkdtemp(prefix="symc_hw_")
    os.makedirs(work, exist_ok=True)
    env = {"argv": sys.argv, "symc": a.symc, "dry": a.dry, "quick": a.quick, "iters": a.iters, "warmup": a.warmup,
           "precisions": a.precisions, "numpy": np.__version__, "onnx": onnx.__version__}
    rc, out, _, _ = seed.run([a.symc, "--version"], 30)
    env["symc_version"] = out.strip()
    torch = None
    try:
        import torch  # noqa: F811
        env["torch"] = torch.__version__
    except ImportError:
        if not a.dry:
            print("bench_hw.py: no torch here; run with --dry", flush=True)
            return 1
    if not a.dry:
        if not torch.cuda.is_available():
            print("bench_hw.py: torch sees no CUDA device (use --dry without a GPU)", flush=True)
            return 1
        env["gpu"] = torch.cuda.get_device_name(0)
        env["cuda"] = torch.version.cuda
        set_precision(torch, "fp32")
        torch.set_float32_matmul_precision("highest")
        env["fp16_bf16_reduced_precision_reduction"] = False
    log(f"env: {env}")
    cx = Ctx(a, torch, work)
    res = {}
    engines = {}
    for sec in ("gemm", "bw", "build", "host"):
        if sec not in sections:
            continue
        t0 = time.perf_counter()
        try:
            if sec == "gemm":
                section_gemm(cx, res)
            elif sec == "bw":
                section_bw(cx, res)
            elif sec == "build":
                engines = suite_engines(cx, res)
            elif sec == "host":
                if "build" not in sections:
                    engines = suite_engines(cx, {})
                section_host(cx, res, engines)
        except Exception as ex:  # noqa: BLE001
            log(f"section {sec} FAILED: {short(ex)}")
            traceback.print_exc()
            res.setdefault(sec, {"rows": []}).setdefault("errors", []).append(f"section failed: {short(ex)}")
        res.setdefault(sec, {})["wall_s"] = time.perf_counter() - t0
        log(f"section {sec} done in {time.perf_counter() - t0:.1f} s")
        write_out(a, env, res, final=False)
    text = write_out(a, env, res, final=True)
    if a.work is None:
        shutil.rmtree(work, ignore_errors=True)
    bad = correctness_failures(res)
    print("\n" + text, flush=True)
    print(f"\ntotal {time.perf_counter() - T_START:.1f} s; {len(bad)} correctness/run failure(s)"
          + (f"; files in {a.out}" if a.out else ""), flush=True)
    return 0 if not bad else 3


if __name__ == "__main__":
    sys.exit(main())
