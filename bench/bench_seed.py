#!/usr/bin/env python3
"""docs/BENCHMARKS-SUITE.md's seed models S1, S2, S3: symc against eager PyTorch and
torch.compile (dynamic shapes), every sweep point in one process.

Approach. Each model is built twice from the SAME numpy weights (fixed
seed): as an ONNX graph with onnx.helper, its dynamic dims named by
dim_param, and as a torch.nn.Module. The ONNX file is compiled ONCE by
`symc compile` for the model's whole range (min/opt/max from docs/BENCHMARKS-SUITE.md);
that engine serves every sweep point. Per point, correctness first:
`symc run ENGINE --backend cuda --input ... --output ...` on seeded random
inputs, compared with the module in float64 on the CPU (numpy float64 when
torch is absent) by ||out - ref|| / ||ref|| < 1e-4. Then timing: `symc bench
ENGINE --point ... --json` (one subprocess, every point, CUDA events per
enqueue, median of >= 100 runs after warm-up, buffer sets rotated so small
inputs do not sit in L2), eager PyTorch fp32 (TF32 off) and one torch.compile
per model with mark_dynamic(min, max) on the dynamic dims, all timed the same
way (CUDA events per call, same warm-up, same iterations, same number of
rotated input sets as symc used at that point). Compilations of
torch.compile are counted by wrapping the inductor backend; its first-call
time and every recompile's time are recorded. A failure in one system or
point is recorded as text and the run goes on; a failure in one model does
not stop the others.

Output: progress lines (flushed), then per model a markdown table (point,
symc p50, eager, torch.compile(dynamic), eager/symc and compile/symc
speedups (> 1: symc faster), rel err) with geomeans, printed LAST; the same
in OUT/bench_seed.md, every number in OUT/bench_seed.json, and a latency
plot per model in OUT/bench_seed_<model>.png when matplotlib is there.

usage (device, repo root):
  python3 bench/bench_seed.py --symc build/bin/symc --out $OUT
  python3 bench/bench_seed.py --symc build/bin/symc --out /tmp/o --symc-only   # no torch, no GPU:
      builds the models, compiles them, checks one small point and runs
      `symc bench --backend ref` there
options: --models S1,S2,S3  --iters 100  --warmup 20  --work DIR (large
temporary files)  --check-backend cuda|ref
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

try:
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # pragma: no cover
    print(f"bench_seed.py: needs the onnx package ({e})", flush=True)
    sys.exit(1)

REL_TOL = 1e-4


def log(*a):
    print("[bench_seed]", *a, flush=True)


# ---------------------------------------------------------------- models --
# Each model: inputs (name, dims with symbol names), symbol ranges, the
# compile --shapes, sweep points (dict symbol -> value), weights, ONNX graph,
# torch forward and numpy float64 reference.

def s1_weights(rng):
    return {"cls": (rng.standard_normal((1, 1, 768)) * 0.02).astype(np.float32),
            "w": (rng.standard_normal((768, 2304)) / math.sqrt(768)).astype(np.float32),
            "b": (rng.standard_normal((2304,)) * 0.02).astype(np.float32)}


def s1_onnx(W):
    N = helper.make_node
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    nodes = [
        N("Shape", ["x"], ["s"]), N("Gather", ["s", "i0"], ["b"], axis=0), N("Unsqueeze", ["b", "ax0"], ["b1"]),
        N("Concat", ["b1", "one_768"], ["cls_shape"], axis=0), N("Expand", ["cls", "cls_shape"], ["cls_b"]),
        N("Concat", ["cls_b", "x"], ["tokens"], axis=1),
        N("MatMul", ["tokens", "w"], ["mm"]), N("Add", ["mm", "bias"], ["qkv"]),
        N("Shape", ["qkv"], ["s2"]), N("Gather", ["s2", "i0"], ["b2"], axis=0), N("Gather", ["s2", "i1"], ["n2"], axis=0),
        N("Unsqueeze", ["b2", "ax0"], ["b2u"]), N("Unsqueeze", ["n2", "ax0"], ["n2u"]),
        N("Concat", ["b2u", "n2u", "heads_tail"], ["qkv_shape"], axis=0), N("Reshape", ["qkv", "qkv_shape"], ["heads"]),
    ]
    inits = [i64("i0", 0), i64("i1", 1), i64("ax0", [0]), i64("one_768", [1, 768]), i64("heads_tail", [3, 12, -1]),
             numpy_helper.from_array(W["cls"], "cls"), numpy_helper.from_array(W["w"], "w"),
             numpy_helper.from_array(W["b"], "bias")]
    return nodes, inits


def s1_numpy(W, x):
    x = x.astype(np.float64)
    B = x.shape[0]
    t = np.concatenate([np.broadcast_to(W["cls"].astype(np.float64), (B, 1, 768)), x], axis=1)
    qkv = t @ W["w"].astype(np.float64) + W["b"].astype(np.float64)
    return qkv.reshape(B, t.shape[1], 3, 12, -1)


def s2_weights(rng):
    return {}


def s2_onnx(W):
    N = helper.make_node
    return [N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", ["q", "kt"], ["scores"])], []


def s2_numpy(W, q, k):
    return q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2)


def s3_weights(rng):
    return {"w": (rng.standard_normal((16, 3, 3, 3)) / math.sqrt(27)).astype(np.float32),
            "b": (rng.standard_normal((16,)) * 0.1).astype(np.float32)}


def s3_onnx(W):
    N = helper.make_node
    return ([N("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]), N("Relu", ["c"], ["y"])],
            [numpy_helper.from_array(W["w"], "w"), numpy_helper.from_array(W["b"], "b")])


def s3_numpy(W, x):
    x = x.astype(np.float64)
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, :, i:i + h, j:j + w] for i in range(3) for j in range(3)], axis=2)  # n,c,9,h,w
    cols = cols.reshape(n, c * 9, h * w)
    y = np.einsum("ok,nkp->nop", W["w"].astype(np.float64).reshape(16, 27), cols) + W["b"].astype(np.float64)[None, :, None]
    return np.maximum(y, 0).reshape(n, 16, h, w)


MODELS = {
    "S1": dict(desc="ViT seed: cls expand+concat, qkv Linear 768->2304, reshape(B,197,3,12,-1)",
               inputs=[("x", ["B", 196, 768])], outputs=["heads"], ranges={"B": (1, 4, 32)},
               sweep=[{"B": b} for b in (1, 3, 4, 13, 32)], small={"B": 1},
               weights=s1_weights, onnx=s1_onnx, numpy=s1_numpy),
    "S2": dict(desc="attention scores q @ k^T on [1,12,S,64]",
               inputs=[("q", [1, 12, "S", 64]), ("k", [1, 12, "S", 64])], outputs=["scores"],
               ranges={"S": (1, 128, 2048)}, sweep=[{"S": s} for s in (1, 7, 128, 129, 1000, 2048)], small={"S": 7},
               weights=s2_weights, onnx=s2_onnx, numpy=s2_numpy),
    "S3": dict(desc="conv 3->16 3x3 pad 1 + ReLU on [1,3,H,W]",
               inputs=[("x", [1, 3, "H", "W"])], outputs=["y"], ranges={"H": (224, 256, 384), "W": (224, 256, 384)},
               sweep=[{"H": h, "W": w} for h, w in ((224, 224), (256, 256), (256, 320), (300, 384), (383, 383),
                                                     (384, 384))], small={"H": 224, "W": 224},
               weights=s3_weights, onnx=s3_onnx, numpy=s3_numpy),
}


def torch_module(name, W):
    import torch
    import torch.nn.functional as F

    class S1(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cls = torch.nn.Parameter(torch.from_numpy(W["cls"].copy()))
            self.qkv = torch.nn.Linear(768, 2304)
            with torch.no_grad():
                self.qkv.weight.copy_(torch.from_numpy(W["w"].T.copy()))
                self.qkv.bias.copy_(torch.from_numpy(W["b"].copy()))

        def forward(self, x):
            b = x.shape[0]
            t = torch.cat([self.cls.expand(b, -1, -1), x], dim=1)
            return self.qkv(t).reshape(b, t.shape[1], 3, 12, -1)

    class S2(torch.nn.Module):
        def forward(self, q, k):
            return q @ k.transpose(-1, -2)

    class S3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
            with torch.no_grad():
                self.conv.weight.copy_(torch.from_numpy(W["w"].copy()))
                self.conv.bias.copy_(torch.from_numpy(W["b"].copy()))

        def forward(self, x):
            return F.relu(self.conv(x))

    return {"S1": S1, "S2": S2, "S3": S3}[name]().eval()


# --------------------------------------------------------------- helpers --

def dims_at(dims, point):
    return [point[d] if isinstance(d, str) else d for d in dims]


def point_label(spec, point):
    return ",".join(f"{k}={v}" for k, v in point.items())


def point_arg(spec, point):
    return ",".join(f"{n}:" + "x".join(str(v) for v in dims_at(d, point)) for n, d in spec["inputs"])


def build_onnx(name, spec, W, path):
    nodes, inits = spec["onnx"](W)
    vi = helper.make_tensor_value_info
    ins = [vi(n, TensorProto.FLOAT, d) for n, d in spec["inputs"]]
    outs = [helper.make_empty_tensor_value_info(o) for o in spec["outputs"]]
    g = helper.make_graph(nodes, name, ins, outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def compile_shapes(spec):
    args = []
    for n, d in spec["inputs"]:
        levels = [{s: r[i] for s, r in spec["ranges"].items()} for i in range(3)]
        args += ["--shapes", f"{n}:" + ",".join("x".join(str(v) for v in dims_at(d, lv)) for lv in levels)]
    return args


def run(cmd, timeout, env=None):
    """cmd's exit code, stdout, stderr and wall seconds; env: the child's environment (default ours)"""
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s: {' '.join(cmd)}", time.perf_counter() - t0
    except OSError as e:
        return 127, "", f"cannot run {cmd[0]}: {e}", time.perf_counter() - t0
    return r.returncode, r.stdout, r.stderr, time.perf_counter() - t0


def last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


def rel_err(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float("nan"), f"shape {list(a.shape)} != {list(b.shape)}"
    if not np.all(np.isfinite(a)):
        return float("nan"), "non-finite output"
    nb = np.linalg.norm(b.ravel())
    return float(np.linalg.norm((a - b).ravel()) / (nb if nb > 0 else 1.0)), ""


def inputs_at(spec, point, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(dims_at(d, point)).astype(np.float32) for n, d in spec["inputs"]]


def geomean(xs):
    xs = [x for x in xs if isinstance(x, (int, float)) and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def fmt(v, nd=4):
    if isinstance(v, str):
        return v
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:.{nd}f}"


# ---------------------------------------------------------------- timing --

class TorchTimer:
    """Per-call CUDA events, median, with the input sets rotated per call."""

    def __init__(self, torch):
        self.torch = torch

    def time(self, fn, sets, iters, warmup):
        torch = self.torch
        with torch.inference_mode():
            for i in range(warmup):
                fn(*sets[i % len(sets)])
            torch.cuda.synchronize()
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
            for i in range(iters):
                a = sets[i % len(sets)]
                starts[i].record()
                fn(*a)
                ends[i].record()
            torch.cuda.synchronize()
        ms = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
        return {"p50_ms": float(np.median(ms)), "p90_ms": float(np.percentile(ms, 90)),
                "min_ms": ms[0], "iters": iters, "sets": len(sets)}


def make_compiled(torch, module, counter):
    """torch.compile, default mode, through inductor; counts compilations."""
    try:
        from torch._inductor.compile_fx import compile_fx

        def backend(gm, example_inputs):
            counter["graphs"] += 1
            return compile_fx(gm, example_inputs)
    except Exception:  # an older or newer layout: fall back to the plain name (no count)
        counter["graphs"] = None
        backend = "inductor"
    return torch.compile(module, backend=backend, dynamic=None)


def mark(torch, spec, tensors):
    for (n, d), t in zip(spec["inputs"], tensors):
        for i, v in enumerate(d):
            if isinstance(v, str):
                lo, _, hi = spec["ranges"][v]
                torch._dynamo.mark_dynamic(t, i, min=lo, max=hi)


# ----------------------------------------------------------------- model --

def bench_model(name, spec, a, work):
    res = {"model": name, "desc": spec["desc"], "points": [], "errors": []}
    W = spec["weights"](np.random.default_rng(1234))
    mdir = os.path.join(work, name)
    os.makedirs(mdir, exist_ok=True)
    onnx_path = os.path.join(mdir, name.lower() + ".onnx")
    engine = os.path.join(mdir, name.lower() + ".symx")
    build_onnx(name, spec, W, onnx_path)
    log(f"{name}: wrote {onnx_path}")

    cmd = [a.symc, "compile", onnx_path] + compile_shapes(spec) + ["-o", engine]
    rc, out, err, dt = run(cmd, 600)
    res["symc_compile_s"] = dt
    res["symc_compile_cmd"] = " ".join(cmd)
    if rc:
        raise RuntimeError(f"symc compile failed (exit {rc}): {last_line(err)}")
    log(f"{name}: symc compile {dt:.2f} s -> {engine}")

    points = [spec["small"]] if a.symc_only else spec["sweep"]
    torch = None
    if not a.symc_only:
        import torch  # noqa: F811
    module = torch_module(name, W) if torch else None

    # correctness, one point at a time
    for pi, point in enumerate(points):
        row = {"point": point_label(spec, point), "shapes": point_arg(spec, point)}
        res["points"].append(row)
        xs = inputs_at(spec, point, 100 + pi)
        ref_np = spec["numpy"](W, *xs)
        row["set_bytes"] = int(sum(x.nbytes for x in xs) + ref_np.size * 4)
        ref = ref_np
        if module is not None:
            try:
                with torch.inference_mode():
                    ref = module.double()(*[torch.from_numpy(x).double() for x in xs]).numpy()
                module.float()
                e, why = rel_err(ref, ref_np)
                row["torch64_vs_numpy64"] = e
                if not (e < 1e-10):
                    res["errors"].append(f"{row['point']}: torch fp64 and numpy fp64 references differ: {e:.3g} {why}")
            except Exception as ex:
                module.float()
                ref = ref_np
                res["errors"].append(f"{row['point']}: torch fp64 reference failed: {ex}")
        args = []
        for (n, d), x in zip(spec["inputs"], xs):
            f = os.path.join(mdir, f"in_{n}.npy")
            np.save(f, x)
            args += ["--input", f"{n}={f}"]
        outf = os.path.join(mdir, "out.npy")
        if os.path.exists(outf):
            os.remove(outf)
        args += ["--output", f"{spec['outputs'][0]}={outf}"]
        rc, out, err, dt = run([a.symc, "run", engine, "--backend", a.check_backend] + args, 600)
        if rc and a.check_backend != "ref":
            # say so, and still check the engine itself on the reference backend
            why = last_line(err)
            rc2, _, err2, _ = run([a.symc, "run", engine, "--backend", "ref"] + args, 600)
            row["rel_err"] = None
            if rc2:
                row["check"] = f"symc run --backend {a.check_backend} failed: {why}; ref failed too: {last_line(err2)}"
            else:
                try:
                    e, _ = rel_err(np.load(outf), ref)
                except Exception as ex:
                    e = float("nan")
                row["rel_err_ref_backend"] = e
                row["check"] = f"{a.check_backend} run failed ({why}); ref backend rel err {e:.2e}"
        elif rc:
            row["rel_err"] = None
            row["check"] = f"symc run failed: {last_line(err)}"
        else:
            try:
                e, why = rel_err(np.load(outf), ref)
            except Exception as ex:
                e, why = float("nan"), f"cannot read output: {ex}"
            row["rel_err"] = e
            row["check"] = "ok" if e < REL_TOL else ("FAIL " + (why or f"rel err {e:.3g}"))
        log(f"{name} {row['point']}: check ({a.check_backend}) {row['check']}"
            + (f" rel err {row['rel_err']:.3g}" if isinstance(row.get("rel_err"), float) else ""))

    # symc bench: every point in one process
    bjson = os.path.join(mdir, "symc_bench.json")
    bcmd = [a.symc, "bench", engine, "--json", bjson]
    for point in points:
        bcmd += ["--point", point_arg(spec, point)]
    if a.symc_only:
        bcmd += ["--backend", "ref", "--iters", "1", "--warmup", "0"]
    else:
        bcmd += ["--backend", a.bench_backend, "--iters", str(a.iters), "--warmup", str(a.warmup)]
    res["symc_bench_cmd"] = " ".join(bcmd)
    rc, out, err, dt = run(bcmd, 600)
    sb = None
    if rc:
        res["errors"].append(f"symc bench failed (exit {rc}): {last_line(err)}")
        log(f"{name}: symc bench FAILED: {last_line(err)}")
    else:
        sb = json.load(open(bjson))
        res["symc_device"] = sb.get("device")
        for row, p in zip(res["points"], sb["points"]):
            row["symc"] = {k: p.get(k) for k in ("p50_ms", "p90_ms", "p99_ms", "min_ms", "host_us", "first_us",
                                                  "throughput", "sets", "iters", "nan_out")}
        log(f"{name}: symc bench done in {dt:.1f} s\n{out.rstrip()}")

    if torch is None:
        return res

    # PyTorch peers
    dev = torch.device("cuda")
    timer = TorchTimer(torch)
    module = module.float().to(dev)
    counter = {"graphs": 0}
    compiled = None
    try:
        compiled = make_compiled(torch, module, counter)
    except Exception as ex:
        res["errors"].append(f"torch.compile setup failed: {ex}")
    # compile first at opt, as symc tuned for opt
    opt = {s: r[1] for s, r in spec["ranges"].items()}
    compile_events = []
    bounded = [True]  # mark_dynamic with min/max; False after a fallback to maybe_mark_dynamic

    def first_call(lab, sets):
        """the first torch.compile call at a point: a compile or a recompile; returns ms"""
        for attempt in (0, 1):
            try:
                for s in sets:
                    if bounded[0]:
                        mark(torch, spec, s)
                    else:
                        for (n, d), t in zip(spec["inputs"], s):
                            for i, v in enumerate(d):
                                if isinstance(v, str):
                                    torch._dynamo.maybe_mark_dynamic(t, i)
                before = counter["graphs"]
                torch.cuda.synchronize()
                t0 = time.perf_counter()
                with torch.inference_mode():
                    compiled(*sets[0])
                torch.cuda.synchronize()
                ms = (time.perf_counter() - t0) * 1e3
                new = None if before is None else counter["graphs"] - before
                if new:
                    compile_events.append({"point": lab, "graphs": new, "first_call_ms": ms,
                                           "bounded_mark_dynamic": bounded[0]})
                return ms, None
            except Exception as ex:
                text = str(ex).strip()
                msg = f"{type(ex).__name__}: {text.splitlines()[0][:200] if text else ''}"
                res["errors"].append(f"torch.compile at {lab}"
                                     f"{'' if bounded[0] else ' (maybe_mark_dynamic)'}: {msg}")
                log(f"{name} {lab}: torch.compile FAILED: {msg}")
                if attempt == 0 and bounded[0]:
                    log(f"{name}: retrying torch.compile with maybe_mark_dynamic (no bounds) from here on")
                    bounded[0] = False
                    continue
                return None, msg
        return None, "unreachable"

    try:
        torch._dynamo.reset()
    except Exception:
        pass
    if compiled is not None:  # compile first at opt, the size symc tuned for
        opt_sets = [[torch.from_numpy(x).to(dev) for x in inputs_at(spec, opt, 499)]]
        ms, why = first_call(point_label(spec, opt), opt_sets)
        res["compile_first_call_s"] = None if ms is None else ms / 1e3
        res["compile_first_point"] = point_label(spec, opt)
        del opt_sets
    for point, row in zip(points, res["points"]):
        lab = row["point"]
        sets_n = ((row.get("symc") or {}).get("sets") or
                  max(1, min(8, -(-(128 << 20) // max(1, row.get("set_bytes", 1 << 30))))))
        host_sets = [inputs_at(spec, point, 500 + i) for i in range(sets_n)]
        sets = [[torch.from_numpy(x).to(dev) for x in s] for s in host_sets]
        row["torch_sets"] = sets_n
        if compiled is not None:
            ms, why = first_call(lab, sets)
            row["compile_first_call_ms"] = ms
            if why:
                row["compile"] = {"error": why}
        row["compile_mark"] = "mark_dynamic(min,max)" if bounded[0] else "maybe_mark_dynamic"
        try:
            row["eager"] = timer.time(module, sets, a.iters, a.warmup)
        except Exception as ex:
            row["eager"] = {"error": f"{type(ex).__name__}: {str(ex)[:200]}"}
        if compiled is not None and "compile" not in row:
            try:
                row["compile"] = timer.time(compiled, sets, a.iters, a.warmup)
            except Exception as ex:
                row["compile"] = {"error": f"{type(ex).__name__}: {str(ex)[:200]}"}
        # the compiled output agrees with eager (fp32) too
        try:
            if "p50_ms" not in row.get("compile", {}):
                raise RuntimeError("no compiled timing")
            with torch.inference_mode():
                e, _ = rel_err(compiled(*sets[0]).float().cpu().numpy(), module(*sets[0]).double().cpu().numpy())
            row["compile_vs_eager"] = e
        except Exception:
            pass
        log(f"{name} {lab}: eager {fmt(row['eager'].get('p50_ms'))} ms, compile "
            f"{fmt(row.get('compile', {}).get('p50_ms', row.get('compile', {}).get('error', '-')))} ms, "
            f"symc {fmt((row.get('symc') or {}).get('p50_ms'))} ms")
        del sets
    res["compile_graphs"] = counter["graphs"]
    res["compile_recompiles"] = None if counter["graphs"] is None else max(0, counter["graphs"] - 1)
    res["compile_events"] = compile_events
    return res


# ---------------------------------------------------------------- report --

def table(res, symc_only):
    L = [f"### {res['model']}: {res['desc']}", ""]
    if symc_only:
        L += ["| point | symc p50 ms (ref backend) | rel err | check |", "|---|---|---|---|"]
        for r in res["points"]:
            L.append(f"| {r['point']} | {fmt((r.get('symc') or {}).get('p50_ms'), 2)} | "
                     f"{fmt(r.get('rel_err'), 2) if r.get('rel_err') is None else format(r['rel_err'], '.2e')} | "
                     f"{r.get('check', '-')} |")
    else:
        L += ["| point | symc p50 ms | eager ms | torch.compile(dynamic) ms | eager/symc | compile/symc | rel err |",
              "|---|---|---|---|---|---|---|"]
        sp_e, sp_c = [], []
        for r in res["points"]:
            s = (r.get("symc") or {}).get("p50_ms")
            e = (r.get("eager") or {}).get("p50_ms")
            c = (r.get("compile") or {}).get("p50_ms")
            ce = (r.get("compile") or {}).get("error")
            xe = e / s if s and e else None
            xc = c / s if s and c else None
            if xe:
                sp_e.append(xe)
            if xc:
                sp_c.append(xc)
            err = r.get("rel_err")
            errs = f"{err:.2e}" if isinstance(err, float) and math.isfinite(err) else r.get("check", "-")
            if isinstance(err, float) and err >= REL_TOL:
                errs += " FAIL"
            L.append(f"| {r['point']} | {fmt(s)} | {fmt(e)} | {fmt(c) if c else 'error: ' + (ce or '-')[:80]} | "
                     f"{fmt(xe, 2) + 'x' if xe else '-'} | {fmt(xc, 2) + 'x' if xc else '-'} | {errs} |")
        L.append(f"| **geomean** | | | | **{fmt(geomean(sp_e), 2)}x** | **{fmt(geomean(sp_c), 2)}x** | |")
        res["geomean_eager_over_symc"] = geomean(sp_e)
        res["geomean_compile_over_symc"] = geomean(sp_c)
    L.append("")
    extra = [f"symc compile {fmt(res.get('symc_compile_s'), 2)} s (1 engine for the sweep)"]
    if not symc_only:
        extra.append(f"torch.compile first call {fmt(res.get('compile_first_call_s'), 2)} s at "
                     f"{res.get('compile_first_point', '-')}, graphs compiled {res.get('compile_graphs', '-')}, "
                     f"recompiles {res.get('compile_recompiles', '-')}")
    L.append("; ".join(extra))
    for e in res.get("errors", []):
        L.append(f"- note: {e}")
    L.append("")
    return "\n".join(L)


def plot(res, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return None
    xs = list(range(len(res["points"])))
    fig, ax = plt.subplots(figsize=(7, 4))
    for key, label in (("symc", "symc"), ("eager", "eager PyTorch"), ("compile", "torch.compile dynamic")):
        ys = [(r.get(key) or {}).get("p50_ms") for r in res["points"]]
        pts = [(x, y) for x, y in zip(xs, ys) if y]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xticks(xs)
    ax.set_xticklabels([r["point"] for r in res["points"]], rotation=30, ha="right", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("p50 latency, ms (log)")
    ax.set_title(f"{res['model']}: {res['desc']}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out, f"bench_seed_{res['model']}.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--symc", default="build/bin/symc")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="S1,S2,S3")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--work", default=None, help="folder for engines and .npy files (default: a temp dir)")
    ap.add_argument("--check-backend", default=None, choices=["cuda", "ref"],
                    help="backend of the correctness run (default cuda; ref with --symc-only)")
    ap.add_argument("--bench-backend", default="cuda", choices=["cuda", "ref"],
                    help="backend `symc bench` times (default cuda; ref only to test this script)")
    ap.add_argument("--symc-only", action="store_true", help="no torch, no GPU: compile + ref check + ref bench at one point")
    a = ap.parse_args()
    if a.check_backend is None:
        a.check_backend = "ref" if a.symc_only else "cuda"
    a.symc = os.path.abspath(a.symc)
    if not os.access(a.symc, os.X_OK):
        print(f"bench_seed.py: no symc executable at {a.symc} (build it, or pass --symc)", flush=True)
        return 1
    os.makedirs(a.out, exist_ok=True)
    work = a.work or tempfile.mkdtemp(prefix="symc_bench_")
    os.makedirs(work, exist_ok=True)
    models = [m.strip() for m in a.models.split(",") if m.strip()]
    bad = [m for m in models if m not in MODELS]
    if bad:
        print(f"bench_seed.py: unknown model(s) {bad}; have {list(MODELS)}", flush=True)
        return 2

    env = {"argv": sys.argv, "symc": a.symc, "numpy": np.__version__, "onnx": onnx.__version__,
           "iters": a.iters, "warmup": a.warmup, "symc_only": a.symc_only}
    rc, out, _, _ = run([a.symc, "--version"], 30)
    env["symc_version"] = out.strip()
    if not a.symc_only:
        try:
            import torch
            env["torch"] = torch.__version__
            if not torch.cuda.is_available():
                print("bench_seed.py: torch sees no CUDA device (use --symc-only without a GPU)", flush=True)
                return 1
            env["gpu"] = torch.cuda.get_device_name(0)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            torch.manual_seed(0)
        except ImportError:
            print("bench_seed.py: no torch here; run with --symc-only", flush=True)
            return 1
    log(f"env: {env}")

    t_start = time.perf_counter()
    results = []
    for m in models:
        t0 = time.perf_counter()
        try:
            r = bench_model(m, MODELS[m], a, work)
        except Exception as ex:
            log(f"{m}: FAILED: {ex}")
            traceback.print_exc()
            sys.stdout.flush()
            r = {"model": m, "desc": MODELS[m]["desc"], "points": [], "errors": [f"model failed: {ex}"]}
        r["wall_s"] = time.perf_counter() - t0
        log(f"{m}: done in {r['wall_s']:.1f} s")
        results.append(r)

    md = [f"## symc seed benchmarks ({env.get('gpu', 'CPU reference backend')}, torch {env.get('torch', '-')}, "
          f"{env.get('symc_version', '')})", "",
          "Latency: median of per-call CUDA-event times after warm-up, fp32, TF32 off; speedups > 1 mean symc is "
          "faster; rel err = ||symc - fp64 reference|| / ||ref|| (tolerance 1e-4).", "",
          f"Command: `{' '.join(sys.argv)}`", ""]
    for r in results:
        md.append(table(r, a.symc_only))
        p = plot(r, a.out) if results and r["points"] else None
        if p:
            r["plot"] = os.path.basename(p)
    md_text = "\n".join(md)
    with open(os.path.join(a.out, "bench_seed.md"), "w") as f:
        f.write(md_text)
    with open(os.path.join(a.out, "bench_seed.json"), "w") as f:
        json.dump({"env": env, "models": results, "wall_s": time.perf_counter() - t_start}, f, indent=1,
                  default=lambda o: None)
    if a.work is None:
        shutil.rmtree(work, ignore_errors=True)
    failed = sum(1 for r in results for p in r["points"]
                 if not (isinstance(p.get("rel_err"), float) and p["rel_err"] < REL_TOL))
    print("\n" + md_text, flush=True)
    print(f"total {time.perf_counter() - t_start:.1f} s; {failed} point(s) without a passing check; "
          f"files in {a.out}", flush=True)
    return 0 if failed == 0 and all(not r.get("errors") for r in results) else 3


if __name__ == "__main__":
    sys.exit(main())
