#!/usr/bin/env python3
"""docs/BENCHMARKS-SUITE.md's whole suite (S1-S3, M1-M5): symc against its static oracle,
eager PyTorch and torch.compile (dynamic and static), every system in one
process per model group, same inputs, fp32 (TF32 off for the peers).

Per model (builders in bench/suite_models.py; S1-S3 are bench_seed.py's):
  1. the model is built twice from the same numpy weights (seed 1234): ONNX
     (dynamic dims as dim_param) and a torch.nn.Module;
  2. symc dynamic: ONE engine for docs/BENCHMARKS-SUITE.md's min/opt/max (`symc compile`);
  3. correctness at every point: `symc run ENGINE --backend cuda` on seeded
     inputs against the torch module in float64 on the CPU,
     ||out - ref|| / ||ref|| < 1e-4;
  4. symc timing: `symc bench ENGINE --point ... --json` (one process, every
     point; CUDA events per enqueue, median, rotated buffer sets);
  5. eager PyTorch and torch.compile dynamic (default mode, mark_dynamic with
     docs/BENCHMARKS-SUITE.md's min/max; compiled first at opt; compile time, graphs and
     recompiles counted by wrapping inductor; a failure such as
     ConstraintViolationError is recorded, then the point is retried without
     marks on fresh tensors and its time is shown with a '*' (after two
     failures the marks are dropped for the rest of the sweep));
  6. symc static oracle: one engine per point compiled with min = opt = max
     (builds counted and timed), each timed by `symc bench`;
  7. torch.compile static (dynamic=False): one compile per shape, recompiles
     and their time counted (torch._dynamo reset first; recompile limit raised
     so dynamo never falls back to eager silently);
  8. optional: torch.compile dynamic with mode="max-autotune-no-cudagraphs"
     (--autotune), a peer like the others.
--precision (default fp32, the method above) changes the math of both sides:
  tf32: symc engines compiled with --tf32, the peers with allow_tf32 (matmul
  and cuDNN); fp16/bf16: symc engines compiled with --fp16/--bf16 (storage
  stays fp32: only the library math changes, so symc takes the same fp32
  inputs), the peers' module and inputs cast to float16/bfloat16. The symc
  Python module compiles the fp32 module with precision= and runs on fp32
  inputs. Checks then use a 1e-2 tolerance (outputs compared in fp32/fp64).
Phases 6-8 watch a time budget (--budget-s, shared by the models of the run,
unused time passes on): points they cannot reach are recorded as
"skipped (budget)" in the table and the JSON.  Peer timing: CUDA events per
call, median of --iters after --warmup, input sets rotated as symc rotated
them.  A failure in one system/point is recorded and the run goes on.

Output (OUT): suite.md (tables), suite.json (every number), suite_<model>.png
(latency per point, log scale); both files are rewritten after every model so
a cut-off run keeps what it finished.  Printed LAST: the tables, then one
summary line per model (geomeans and docs/BENCHMARKS-SUITE.md speed targets met), then totals.
Speedups are peer / symc (> 1: symc faster).  Targets per model: (1) geomean
vs torch.compile dynamic >= 1.5, (2) geomean vs eager >= 2, (3) no point
slower than the best peer (min of eager, compile dynamic, compile static and
autotune where run), (4) within 10% of the symc static oracle at every point.

usage (device, repo root; one call per group, each ~8 min or less on an H100):
  python3 bench/bench_suite.py --models S1,S2,S3,M5 --out $OUT
  python3 bench/bench_suite.py --models M1,M3 --out $OUT
  python3 bench/bench_suite.py --models M2 --out $OUT
  python3 bench/bench_suite.py --models M4 --out $OUT
  python3 bench/bench_suite.py --models all --out /tmp/o --symc-only   # no GPU, no torch needed:
      compiles every model (dynamic and one static engine), checks one small
      point on the ref backend against torch fp64 (when torch is importable)
      and runs `symc bench --backend ref` there
options: --iters 100 --warmup 20 --quick --budget-s 450 --autotune --graphs
         (symc bench --graphs) --attn sdpa|explicit --work DIR --symc PATH
         --precision fp32|tf32|fp16|bf16
"""
import argparse
import copy
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    import onnx
    from onnx import TensorProto, helper
except ImportError as e:  # pragma: no cover
    print(f"bench_suite.py: needs the onnx package ({e})", flush=True)
    sys.exit(1)
import bench_seed as seed  # noqa: E402  (helpers: run, rel_err, inputs_at, TorchTimer, ...)
import suite_models  # noqa: E402

REL_TOL = 1e-4  # fp32; 1e-2 with --precision tf32/fp16/bf16 (set in main)
# --precision: symc compile flags, and the dtype of the torch peers' module and inputs (None: float32)
PRECISION = {"name": "fp32", "flags": [], "dtype": None}
PREC_FLAGS = {"fp32": [], "tf32": ["--tf32"], "fp16": ["--fp16"], "bf16": ["--bf16"]}
T_START = time.perf_counter()


def log(*a):
    print(f"[suite {time.perf_counter() - T_START:6.1f}s]", *a, flush=True)


def now():
    return time.perf_counter()


def short(ex):
    text = str(ex).strip()
    return f"{type(ex).__name__}: {text.splitlines()[0][:200] if text else ''}"


# ------------------------------------------------------------- building --

def build_onnx(name, spec, W, path):
    nodes, inits = spec["onnx"](W)
    vi = helper.make_tensor_value_info
    ins = [vi(n, TensorProto.FLOAT, d) for n, d in spec["inputs"]]
    outs = [helper.make_empty_tensor_value_info(o) for o in spec["outputs"]]
    g = helper.make_graph(nodes, name, ins, outs, initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", spec.get("opset", 17))])
    m.ir_version = 9
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def static_shapes(spec, point):
    args = []
    for n, d in spec["inputs"]:
        s = "x".join(str(v) for v in seed.dims_at(d, point))
        args += ["--shapes", f"{n}:{s},{s},{s}"]
    return args


def bench_cmd(a, engine, points, spec, bjson):
    cmd = [a.symc, "bench", engine, "--json", bjson]
    for p in points:
        cmd += ["--point", seed.point_arg(spec, p)]
    if a.symc_only:
        cmd += ["--backend", "ref", "--iters", "1", "--warmup", "0"]
    else:
        cmd += ["--backend", a.bench_backend, "--iters", str(a.iters), "--warmup", str(a.warmup)]
        if a.graphs:
            cmd += ["--graphs"]
    return cmd


SYMC_KEYS = ("p50_ms", "p90_ms", "p99_ms", "min_ms", "host_us", "first_us", "sets", "iters", "nan_out")


class Budget:
    """Wall-clock budget of the run; each model gets an equal share of what is left."""

    def __init__(self, total_s, n_models):
        self.end = now() + total_s
        self.left_models = n_models
        self.model_end = self.end

    def start_model(self):
        self.model_end = now() + max(0.0, self.end - now()) / max(1, self.left_models)
        self.left_models -= 1

    def ok(self, need_s):
        return now() + need_s < self.model_end

    def timeout(self):
        return int(max(60, min(600, self.end - now() + 120)))


# ----------------------------------------------------------------- torch --

DEV = {"name": "cuda"}  # --peer-device cpu: exercise the torch side here (host clock, no CUDA)


def sync(torch):
    if DEV["name"] == "cuda":
        torch.cuda.synchronize()


class HostTimer:
    """--peer-device cpu only (testing the harness): host clock per call, median"""

    def time(self, fn, sets, iters, warmup):
        import torch
        with torch.inference_mode():
            for i in range(warmup):
                fn(*sets[i % len(sets)])
            ms = []
            for i in range(iters):
                t0 = now()
                fn(*sets[i % len(sets)])
                ms.append((now() - t0) * 1e3)
        ms.sort()
        return {"p50_ms": float(np.median(ms)), "p90_ms": float(np.percentile(ms, 90)), "min_ms": ms[0],
                "iters": iters, "host_clock": True}


def make_timer(torch):
    return seed.TorchTimer(torch) if DEV["name"] == "cuda" else HostTimer()


def counting_backend(counter, mode=None):
    """inductor with a count of compiled graphs; mode's options (torch._inductor.list_mode_options)
    passed as config patches, as torch.compile(mode=...) does"""
    from torch._inductor.compile_fx import compile_fx
    opts = None
    if mode:
        import torch._inductor
        opts = dict(torch._inductor.list_mode_options(mode))

    def backend(gm, example_inputs):
        counter["graphs"] += 1
        if opts:
            return compile_fx(gm, example_inputs, config_patches=opts)
        return compile_fx(gm, example_inputs)

    return backend


def make_compiled(torch, module, counter, dynamic, mode=None):
    try:
        be = counting_backend(counter, mode)
        return torch.compile(module, backend=be, dynamic=dynamic)
    except Exception:  # older/newer layout: plain inductor, no graph count
        counter["graphs"] = None
        return torch.compile(module, dynamic=dynamic, mode=mode)


def mark(torch, spec, tensors):
    for (n, d), t in zip(spec["inputs"], tensors):
        for i, v in enumerate(d):
            if isinstance(v, str):
                lo, _, hi = spec["ranges"][v]
                torch._dynamo.mark_dynamic(t, i, min=lo, max=hi)


def raise_recompile_limits(torch):
    cfg = torch._dynamo.config
    for k, v in (("recompile_limit", 256), ("cache_size_limit", 256), ("accumulated_recompile_limit", 4096),
                 ("accumulated_cache_size_limit", 4096)):
        if hasattr(cfg, k):
            try:
                setattr(cfg, k, v)
            except Exception:
                pass


def first_call(torch, fn, args, counter):
    """one call (compile or recompile when the guards miss); returns (ms, new graphs)"""
    before = counter["graphs"]
    sync(torch)
    t0 = now()
    with torch.inference_mode():
        fn(*args)
    sync(torch)
    ms = (now() - t0) * 1e3
    return ms, (None if before is None else counter["graphs"] - before)


class Sets:
    """the same seeded inputs for every torch system at a point (seeds 500+i)"""

    def __init__(self, torch, spec, points, rows, dtype=None):
        self.torch, self.spec, self.points, self.rows, self.dtype = torch, spec, points, rows, dtype

    def n(self, pi):
        row = self.rows[pi]
        return ((row.get("symc") or {}).get("sets") or
                max(1, min(8, -(-(128 << 20) // max(1, row.get("set_bytes", 1 << 30))))))

    def get(self, pi, dtype="peer"):
        """the sets at point pi: in the peers' dtype (--precision fp16/bf16), or in dtype (float32 for symc)"""
        dev = self.torch.device(DEV["name"])
        dt = self.dtype if dtype == "peer" else dtype
        return [[self.torch.from_numpy(x).to(dev) if dt is None else self.torch.from_numpy(x).to(dev, dt)
                 for x in seed.inputs_at(self.spec, self.points[pi], 500 + i)] for i in range(self.n(pi))]


def torch_dynamic_phase(torch, name, spec, module, points, res, a, sets, key, mode=None, budget=None):
    """eager (key == 'compile_dyn' only) and torch.compile dynamic over the sweep"""
    timer = make_timer(torch)
    counter = {"graphs": 0}
    info = res.setdefault("peers", {}).setdefault(key, {"events": [], "failures": []})
    try:
        torch._dynamo.reset()
    except Exception:
        pass
    compiled = None
    try:
        compiled = make_compiled(torch, module, counter, None, mode)
    except Exception as ex:
        info["failures"].append(f"setup: {short(ex)}")
    marks = {"on": True}

    def call_point(lab, s, point):
        """first call at a point: marked; on failure, unmarked on clones. returns (sets to time, fallback?)"""
        one = any(point.get(k) == 1 for k in spec["ranges"])
        if marks["on"]:
            try:
                for t in s:
                    mark(torch, spec, t)
                ms, new = first_call(torch, compiled, s[0], counter)
                if new:
                    info["events"].append({"point": lab, "graphs": new, "first_call_ms": ms, "marked": True})
                return s, False, None
            except Exception as ex:
                msg = short(ex)
                info["failures"].append(f"{lab}: {msg}")
                log(f"{name} {lab}: torch.compile({key}) with mark_dynamic FAILED: {msg}")
                # dynamo specializes sizes 0/1, so a range starting at 1 fails at that point only; a failure
                # at a point with no dynamic dim of size 1 narrows the range itself (M3): drop the marks
                if not one:
                    marks["on"] = False
                    log(f"{name}: {key}: mark_dynamic dropped for the rest of the sweep")
        s = [[t.clone() for t in ts] for ts in s]
        try:
            ms, new = first_call(torch, compiled, s[0], counter)
            if new:
                info["events"].append({"point": lab, "graphs": new, "first_call_ms": ms, "marked": False})
            return s, True, None
        except Exception as ex:
            msg = short(ex)
            info["failures"].append(f"{lab} (no marks): {msg}")
            log(f"{name} {lab}: torch.compile({key}) without marks FAILED too: {msg}")
            return s, True, msg

    opt = {k: r[1] for k, r in spec["ranges"].items()}
    if compiled is not None:
        s = [[torch.from_numpy(x).to(DEV["name"], PRECISION["dtype"] or torch.float32)
              for x in seed.inputs_at(spec, opt, 499)]]
        t0 = now()
        call_point("opt " + seed.point_label(spec, opt), s, opt)
        info["first_compile_s"] = now() - t0
        info["first_point"] = seed.point_label(spec, opt)
        del s
    for pi, (point, row) in enumerate(zip(points, res["points"])):
        lab = row["point"]
        if budget is not None and not budget.ok(20):
            row[key] = {"skipped": "budget"}
            continue
        s = sets.get(pi)
        row["torch_sets"] = len(s)
        if key == "compile_dyn":
            try:
                row["eager"] = timer.time(module, s, a.iters, a.warmup)
            except Exception as ex:
                row["eager"] = {"error": short(ex)}
        if compiled is None:
            row[key] = {"error": "no torch.compile"}
            continue
        s2, fallback, err = call_point(lab, s, point)
        if err:
            row[key] = {"error": err}
        else:
            try:
                row[key] = timer.time(compiled, s2, a.iters, a.warmup)
                row[key]["unmarked_fallback"] = fallback
                with torch.inference_mode():
                    e, _ = seed.rel_err(compiled(*s2[0]).double().cpu().numpy(),
                                        module(*s2[0]).double().cpu().numpy())
                row[key]["vs_eager"] = e
            except Exception as ex:
                row[key] = {"error": short(ex)}
        log(f"{name} {lab}: eager {seed.fmt((row.get('eager') or {}).get('p50_ms'))} ms, {key} "
            f"{seed.fmt(row[key].get('p50_ms', row[key].get('error', '-')))} ms"
            f"{' (unmarked fallback)' if fallback else ''}, symc {seed.fmt((row.get('symc') or {}).get('p50_ms'))} ms")
        del s, s2
    info["graphs"] = counter["graphs"]
    info["compile_s_total"] = sum(e["first_call_ms"] for e in info["events"]) / 1e3
    info["recompiles"] = max(0, len(info["events"]) - 1)
    info["mark_dynamic_dropped"] = not marks["on"]


def torch_static_phase(torch, name, spec, module, points, res, a, sets, budget):
    timer = make_timer(torch)
    counter = {"graphs": 0}
    info = res.setdefault("peers", {}).setdefault("compile_static", {"events": [], "failures": []})
    try:
        torch._dynamo.reset()
    except Exception:
        pass
    compiled = make_compiled(torch, module, counter, False)
    for pi, (point, row) in enumerate(zip(points, res["points"])):
        lab = row["point"]
        if not budget.ok(30):
            row["compile_static"] = {"skipped": "budget"}
            continue
        s = sets.get(pi)
        try:
            ms, new = first_call(torch, compiled, s[0], counter)
            info["events"].append({"point": lab, "graphs": new, "first_call_ms": ms})
            row["compile_static"] = timer.time(compiled, s, a.iters, a.warmup)
            row["compile_static"]["compile_ms"] = ms
            row["compile_static"]["graphs"] = new
        except Exception as ex:
            info["failures"].append(f"{lab}: {short(ex)}")
            row["compile_static"] = {"error": short(ex)}
        log(f"{name} {lab}: torch.compile static {seed.fmt(row['compile_static'].get('p50_ms', row['compile_static'].get('error', row['compile_static'].get('skipped'))))} ms"
            f" (compile {seed.fmt(row['compile_static'].get('compile_ms'), 0)} ms)")
        del s
    info["graphs"] = counter["graphs"]
    info["compiles"] = sum(1 for e in info["events"] if e.get("graphs") is None or e["graphs"] > 0)
    info["recompiles"] = max(0, info["compiles"] - 1)
    info["compile_s_total"] = sum(e["first_call_ms"] for e in info["events"]) / 1e3


# ----------------------------------------------------------------- symc --

def symc_pymod_phase(torch, name, spec, module, points, res, a, sets):
    """symc through its Python module (frontend/torch): symc.compile(module, inputs=[symc.Input(...)]) once
    for docs/BENCHMARKS-SUITE.md's ranges, then the returned module called on the same torch tensors as the peers"""
    info = res.setdefault("symc_py", {"failures": []})
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.join(root, "frontend", "torch") not in sys.path:
        sys.path.insert(0, os.path.join(root, "frontend", "torch"))
    lib = os.path.join(os.path.dirname(os.path.dirname(a.symc)), "lib", "libsymc.so")  # beside --symc's build
    if os.path.exists(lib):
        os.environ.setdefault("SYMC_LIB", lib)
    try:
        import symc as symc_py
        ins = []
        for n, d in spec["inputs"]:
            lv = [[spec["ranges"][v][i] if isinstance(v, str) else v for v in d] for i in range(3)]
            ins.append(symc_py.Input(min_shape=lv[0], opt_shape=lv[1], max_shape=lv[2], dtype=torch.float32,
                                     dim_names={i: v for i, v in enumerate(d) if isinstance(v, str)}, name=n))
        t0 = now()
        f = symc_py.compile(module, inputs=ins, gpu=(DEV["name"] == "cuda"), precision=PRECISION["name"])
        info["build_s"] = now() - t0
        log(f"{name}: symc Python module: symc.compile {info['build_s']:.2f} s")
    except Exception as ex:
        info["failures"].append(f"symc.compile: {short(ex)}")
        log(f"{name}: symc Python module FAILED: {short(ex)}")
        for row in res["points"]:
            row["symc_py"] = {"error": "symc.compile failed"}
        return
    timer = make_timer(torch)
    for pi, row in enumerate(res["points"]):
        s = sets.get(pi, torch.float32)  # symc's storage is fp32 at every --precision
        try:
            row["symc_py"] = timer.time(f, s, a.iters, a.warmup)
            with torch.inference_mode():
                e, _ = seed.rel_err(f(*s[0]).double().cpu().numpy(), module(*s[0]).double().cpu().numpy())
            row["symc_py"]["vs_eager"] = e
        except Exception as ex:
            info["failures"].append(f"{row['point']}: {short(ex)}")
            row["symc_py"] = {"error": short(ex)}
        log(f"{name} {row['point']}: symc (Python module) "
            f"{seed.fmt(row['symc_py'].get('p50_ms', row['symc_py'].get('error')))} ms")
        del s
    del f


def symc_static_phase(name, spec, points, res, a, mdir, budget):
    info = res.setdefault("symc_static", {"builds": 0, "build_s_total": 0.0, "failures": []})
    for pi, (point, row) in enumerate(zip(points, res["points"])):
        lab = row["point"]
        if not a.symc_only and not budget.ok(15):
            row["symc_static"] = {"skipped": "budget"}
            continue
        eng = os.path.join(mdir, f"static_{pi}.symx")
        cmd = [a.symc, "compile", res["onnx_path"]] + static_shapes(spec, point) + PRECISION["flags"] + ["-o", eng]
        rc, out, err, dt = seed.run(cmd, budget.timeout())
        if rc:
            msg = f"compile failed (exit {rc}): {seed.last_line(err)}"
            info["failures"].append(f"{lab}: {msg}")
            row["symc_static"] = {"error": msg}
            log(f"{name} {lab}: symc static {msg}")
            continue
        info["builds"] += 1
        info["build_s_total"] += dt
        bjson = os.path.join(mdir, f"static_{pi}.json")
        rc, out, err, bdt = seed.run(bench_cmd(a, eng, [point], spec, bjson), budget.timeout())
        if rc:
            msg = f"bench failed (exit {rc}): {seed.last_line(err)}"
            info["failures"].append(f"{lab}: {msg}")
            row["symc_static"] = {"error": msg, "build_s": dt}
        else:
            p = json.load(open(bjson))["points"][0]
            row["symc_static"] = {k: p.get(k) for k in SYMC_KEYS}
            row["symc_static"]["build_s"] = dt
        try:
            os.remove(eng)
        except OSError:
            pass
        log(f"{name} {lab}: symc static build {dt:.2f} s, "
            f"p50 {seed.fmt(row['symc_static'].get('p50_ms', row['symc_static'].get('error')))} ms")


def check_points(name, spec, points, res, a, mdir, torch, module):
    for pi, point in enumerate(points):
        row = res["points"][pi]
        xs = seed.inputs_at(spec, point, 100 + pi)
        ref = None
        if module is not None:
            try:
                with torch.inference_mode():
                    ref = module.to(a.ref_device)(*[torch.from_numpy(x).double().to(a.ref_device)
                                                     for x in xs]).cpu().numpy()
            except Exception as ex:
                res["errors"].append(f"{row['point']}: torch fp64 reference failed: {short(ex)}")
        row["set_bytes"] = int(sum(x.nbytes for x in xs) + (ref.size * 4 if ref is not None else 0))
        args = []
        for (n, d), x in zip(spec["inputs"], xs):
            f = os.path.join(mdir, f"in_{n}.npy")
            np.save(f, x)
            args += ["--input", f"{n}={f}"]
        outf = os.path.join(mdir, "out.npy")
        if os.path.exists(outf):
            os.remove(outf)
        args += ["--output", f"{spec['outputs'][0]}={outf}"]
        rc, out, err, dt = seed.run([a.symc, "run", res["engine"], "--backend", a.check_backend] + args, 600)
        row["rel_err"] = None
        if rc:
            row["check"] = f"symc run --backend {a.check_backend} failed: {seed.last_line(err)}"
        elif ref is None:
            row["check"] = "ran (no torch reference)"
        else:
            try:
                e, why = seed.rel_err(np.load(outf), ref)
            except Exception as ex:
                e, why = float("nan"), f"cannot read output: {ex}"
            row["rel_err"] = e
            row["check"] = "ok" if e < REL_TOL else ("FAIL " + (why or f"rel err {e:.3g}"))
        log(f"{name} {row['point']}: check ({a.check_backend}) {row['check']}"
            + (f" rel err {row['rel_err']:.3g}" if isinstance(row.get("rel_err"), float) else "") + f" ({dt:.1f} s)")
        del xs, ref


def bench_model(name, spec, a, work, budget, torch):
    res = {"model": name, "desc": spec["desc"], "notes": spec.get("notes", ""), "points": [], "errors": []}
    W = spec["weights"](np.random.default_rng(1234))
    mdir = os.path.join(work, name)
    os.makedirs(mdir, exist_ok=True)
    res["onnx_path"] = os.path.join(mdir, name.lower() + ".onnx")
    res["engine"] = os.path.join(mdir, name.lower() + ".symx")
    build_onnx(name, spec, W, res["onnx_path"])
    cmd = [a.symc, "compile", res["onnx_path"]] + seed.compile_shapes(spec) + PRECISION["flags"] + ["-o", res["engine"]]
    rc, out, err, dt = seed.run(cmd, 600)
    res["symc_compile_s"] = dt
    res["symc_compile_cmd"] = " ".join(cmd)
    if rc:
        raise RuntimeError(f"symc compile failed (exit {rc}): {seed.last_line(err)}")
    log(f"{name}: symc compile (dynamic) {dt:.2f} s")

    if a.symc_only:
        points = [spec["small"]]
    elif a.points:
        points = [spec["sweep"][int(i)] for i in a.points.split(",")]
    elif a.quick:
        points = [spec["sweep"][i] for i in suite_models.QUICK.get(name, [0, -1])]
    else:
        points = list(spec["sweep"])
    for p in points:
        res["points"].append({"point": seed.point_label(spec, p), "shapes": seed.point_arg(spec, p)})

    module = None
    if torch is not None:
        module = spec["torch"](W, a.attn).double().eval()

    # correctness first (fp64 reference on the CPU)
    check_points(name, spec, points, res, a, mdir, torch, module)

    # symc dynamic: every point in one process
    bjson = os.path.join(mdir, "symc_bench.json")
    bcmd = bench_cmd(a, res["engine"], points, spec, bjson)
    res["symc_bench_cmd"] = " ".join(bcmd)
    rc, out, err, dt = seed.run(bcmd, budget.timeout())
    if rc:
        res["errors"].append(f"symc bench failed (exit {rc}): {seed.last_line(err)}")
        log(f"{name}: symc bench FAILED: {seed.last_line(err)}")
    else:
        sb = json.load(open(bjson))
        res["symc_device"] = sb.get("device")
        for row, p in zip(res["points"], sb["points"]):
            row["symc"] = {k: p.get(k) for k in SYMC_KEYS}
        log(f"{name}: symc bench done in {dt:.1f} s")

    if a.symc_only:
        symc_static_phase(name, spec, points, res, a, mdir, budget)
        return res

    module = module.float().to(DEV["name"])
    if a.ref_device == "cuda":
        torch.cuda.empty_cache()
    sets = Sets(torch, spec, points, res["points"], PRECISION["dtype"])
    # the peers' module: float32, or a float16/bfloat16 copy (--precision fp16/bf16); symc's Python
    # module compiles the float32 one
    peer = module if PRECISION["dtype"] is None else copy.deepcopy(module).to(PRECISION["dtype"])
    # eager + torch.compile dynamic (default mode)
    try:
        torch_dynamic_phase(torch, name, spec, peer, points, res, a, sets, "compile_dyn")
    except Exception as ex:
        res["errors"].append(f"eager/compile dynamic phase failed: {short(ex)}")
        traceback.print_exc()
    if a.pymod:
        try:
            symc_pymod_phase(torch, name, spec, module, points, res, a, sets)
        except Exception as ex:
            res["errors"].append(f"symc Python module phase failed: {short(ex)}")
            traceback.print_exc()
    # the static oracle, then torch.compile static, then the optional autotune peer (budgeted)
    try:
        symc_static_phase(name, spec, points, res, a, mdir, budget)
    except Exception as ex:
        res["errors"].append(f"symc static phase failed: {short(ex)}")
        traceback.print_exc()
    try:
        torch_static_phase(torch, name, spec, peer, points, res, a, sets, budget)
    except Exception as ex:
        res["errors"].append(f"torch.compile static phase failed: {short(ex)}")
        traceback.print_exc()
    if a.autotune:
        try:
            torch_dynamic_phase(torch, name, spec, peer, points, res, a, sets, "autotune",
                                mode="max-autotune-no-cudagraphs", budget=budget)
        except Exception as ex:
            res["errors"].append(f"max-autotune phase failed: {short(ex)}")
            traceback.print_exc()
    try:
        torch._dynamo.reset()
    except Exception:
        pass
    del module, peer
    if DEV["name"] == "cuda":
        torch.cuda.empty_cache()
    return res


# --------------------------------------------------------------- report --

PEERS = ("eager", "compile_dyn", "compile_static", "autotune")


def p50(row, key):
    v = (row.get(key) or {}).get("p50_ms")
    return v if isinstance(v, (int, float)) and v > 0 else None


def cell(row, key):
    d = row.get(key)
    if d is None:
        return "-"
    if "p50_ms" in d:
        return f"{d['p50_ms']:.4f}" + ("*" if d.get("unmarked_fallback") else "")
    if "skipped" in d:
        return "skipped (" + d["skipped"] + ")"
    return "error: " + str(d.get("error", "?"))[:60]


def summarize(res):
    """fills res['summary'] (geomeans, targets) and returns it"""
    rows = res["points"]
    sp = {k: [] for k in PEERS + ("best",)}
    ratios, ok_best, ok_static = [], [], []
    for r in rows:
        s = p50(r, "symc")
        if not s:
            continue
        for k in PEERS:
            v = p50(r, k)
            if v:
                sp[k].append(v / s)
        peers = [p50(r, k) for k in PEERS if p50(r, k)]
        if peers:
            r["best_peer_ms"] = min(peers)
            sp["best"].append(min(peers) / s)
        st = p50(r, "symc_static")
        if st:
            ratios.append(s / st)
    n = len(rows)
    g = {k: seed.geomean(v) for k, v in sp.items()}
    speed_rows = [r for r in rows if p50(r, "symc")]
    best_ok = [p50(r, "symc") <= r["best_peer_ms"] for r in speed_rows if r.get("best_peer_ms")]
    stat_ok = [p50(r, "symc") <= 1.10 * p50(r, "symc_static") for r in speed_rows if p50(r, "symc_static")]
    t = {
        "geomean_vs_compile_dyn_ge_1.5": (g["compile_dyn"] >= 1.5) if sp["compile_dyn"] else None,
        "geomean_vs_eager_ge_2": (g["eager"] >= 2.0) if sp["eager"] else None,
        "no_point_slower_than_best_peer": (all(best_ok) and len(best_ok) == n) if best_ok else None,
        "within_10pct_of_static_everywhere": (all(stat_ok) and len(stat_ok) == n) if stat_ok else None,
    }
    checks = [r.get("rel_err") for r in rows]
    summ = {"geomean": g, "n_points": n, "symc_over_static": ratios,
            "max_symc_over_static": max(ratios) if ratios else None,
            "points_slower_than_best_peer": sum(1 for x in best_ok if not x),
            "points_over_static_10pct": sum(1 for x in stat_ok if not x),
            "targets": t, "targets_met": sum(1 for v in t.values() if v), "targets_measured": sum(1 for v in t.values() if v is not None),
            "correct_points": sum(1 for e in checks if isinstance(e, float) and e < REL_TOL),
            "compile_dyn_failures": len(((res.get("peers") or {}).get("compile_dyn") or {}).get("failures", []))}
    res["summary"] = summ
    return summ


def xs(v):
    return f"{v:.2f}x" if isinstance(v, (int, float)) and v > 0 and math.isfinite(v) else "-"


def table(res, symc_only):
    L = [f"### {res['model']}: {res['desc']}", ""]
    if res.get("notes"):
        L += [f"ONNX construction: {res['notes']}.", ""]
    if symc_only:
        L += ["| point | symc ms (ref backend) | symc static ms (ref) | rel err vs torch fp64 | check |",
              "|---|---|---|---|---|"]
        for r in res["points"]:
            e = r.get("rel_err")
            L.append(f"| {r['point']} | {cell(r, 'symc')} | {cell(r, 'symc_static')} | "
                     f"{format(e, '.2e') if isinstance(e, float) else '-'} | {r.get('check', '-')} |")
        L.append("")
        L.append(f"symc compile {seed.fmt(res.get('symc_compile_s'), 2)} s")
    else:
        summ = summarize(res)
        auto = any(r.get("autotune") for r in res["points"])
        pym = any(r.get("symc_py") for r in res["points"])
        head = "| point | symc ms |" + (" symc py ms |" if pym else "") + \
            " symc static ms | eager ms | compile dyn ms | compile static ms |"
        sep = "|---|---|---|---|---|---|" + ("---|" if pym else "")
        if auto:
            head += " max-autotune ms |"
            sep += "---|"
        head += " symc/static | vs eager | vs compile dyn | vs best peer | rel err |"
        sep += "---|---|---|---|---|"
        L += [head, sep]
        for r in res["points"]:
            s = p50(r, "symc")
            st, e, c, b = p50(r, "symc_static"), p50(r, "eager"), p50(r, "compile_dyn"), r.get("best_peer_ms")
            err = r.get("rel_err")
            errs = f"{err:.2e}" if isinstance(err, float) and math.isfinite(err) else r.get("check", "-")
            if isinstance(err, float) and not err < REL_TOL:
                errs += " FAIL"
            line = (f"| {r['point']} | {cell(r, 'symc')} |" + (f" {cell(r, 'symc_py')} |" if pym else "") +
                    f" {cell(r, 'symc_static')} | {cell(r, 'eager')} | "
                    f"{cell(r, 'compile_dyn')} | {cell(r, 'compile_static')} |")
            if auto:
                line += f" {cell(r, 'autotune')} |"
            ratio = f"{s / st:.2f}" if s and st else "-"
            if s and st and s > 1.10 * st:
                ratio += " (>1.10)"
            line += (f" {ratio} | {xs(e / s if s and e else None)} | {xs(c / s if s and c else None)} | "
                     f"{xs(b / s if s and b else None)}{' SLOWER' if s and b and s > b else ''} | {errs} |")
            L.append(line)
        g = summ["geomean"]
        L.append(f"| **geomean** | | | | | |{' |' if auto else ''}{' |' if pym else ''} "
                 f"{seed.fmt(seed.geomean(summ['symc_over_static']), 2)} | **{xs(g['eager'] if summ['geomean'] else None)}** | "
                 f"**{xs(g['compile_dyn'])}** | **{xs(g['best'])}** | |")
        L.append("")
        pe = res.get("peers", {})
        cd, cs = pe.get("compile_dyn", {}), pe.get("compile_static", {})
        ss = res.get("symc_static", {})
        L.append(f"symc: 1 build, {seed.fmt(res.get('symc_compile_s'), 2)} s; symc static oracle: "
                 f"{ss.get('builds', 0)} builds, {seed.fmt(ss.get('build_s_total'), 1)} s total; "
                 f"torch.compile dynamic: first compile {seed.fmt(cd.get('first_compile_s'), 2)} s at "
                 f"{cd.get('first_point', '-')}, {cd.get('graphs', '-')} graphs, {cd.get('recompiles', '-')} recompiles "
                 f"({seed.fmt(cd.get('compile_s_total'), 1)} s in compiling calls), {len(cd.get('failures', []))} failures"
                 f"{' (mark_dynamic dropped after a failure at a point with no dim of size 1)' if cd.get('mark_dynamic_dropped') else ''}; "
                 f"torch.compile static: {cs.get('compiles', '-')} compiles ({cs.get('recompiles', '-')} recompiles), "
                 f"{seed.fmt(cs.get('compile_s_total'), 1)} s total.")
        if res.get("symc_py"):
            sp = res["symc_py"]
            L.append(f"symc Python module (symc.compile on the torch module, timed like the peers): build "
                     f"{seed.fmt(sp.get('build_s'), 2)} s, {len(sp.get('failures', []))} failures"
                     + "".join(f"; {x}" for x in sp.get("failures", [])[:3]) + ".")
        if "autotune" in pe:
            au = pe["autotune"]
            L.append(f"max-autotune-no-cudagraphs (dynamic): first compile {seed.fmt(au.get('first_compile_s'), 1)} s, "
                     f"{au.get('recompiles', '-')} recompiles, {len(au.get('failures', []))} failures.")
        L.append("'*': torch.compile with mark_dynamic failed at that point; the time is of the same compiled "
                 "module called without marks (a recompile).")
        for f in cd.get("failures", []):
            L.append(f"- torch.compile dynamic failure: {f}")
        for k, lab in (("compile_static", "torch.compile static"), ("autotune", "max-autotune")):
            for f in pe.get(k, {}).get("failures", []):
                L.append(f"- {lab} failure: {f}")
        for f in ss.get("failures", []):
            L.append(f"- symc static failure: {f}")
    for e in res.get("errors", []):
        L.append(f"- note: {e}")
    L.append("")
    return "\n".join(L)


def summary_lines(results):
    L = ["## Summary (docs/BENCHMARKS-SUITE.md speed targets; speedups = peer / symc)", "",
         "| model | points correct | geomean vs eager | vs compile dyn | vs best peer | max symc/static | "
         "points slower than best peer | points >10% over static | targets met |",
         "|---|---|---|---|---|---|---|---|---|"]
    allsp = {"eager": [], "compile_dyn": [], "best": []}
    met = measured = 0
    for r in results:
        s = r.get("summary")
        if not s:
            L.append(f"| {r['model']} | - | - | - | - | - | - | - | failed: {'; '.join(r.get('errors', []))[:80]} |")
            continue
        g = s["geomean"]
        for row in r["points"]:
            sy = p50(row, "symc")
            if sy:
                for k, kk in (("eager", "eager"), ("compile_dyn", "compile_dyn")):
                    if p50(row, kk):
                        allsp[k].append(p50(row, kk) / sy)
                if row.get("best_peer_ms"):
                    allsp["best"].append(row["best_peer_ms"] / sy)
        met += s["targets_met"]
        measured += s["targets_measured"]
        missed = [k for k, v in s["targets"].items() if v is False]
        L.append(f"| {r['model']} | {s['correct_points']}/{s['n_points']} | {xs(g['eager'])} | {xs(g['compile_dyn'])} | "
                 f"{xs(g['best'])} | {seed.fmt(s['max_symc_over_static'], 2)} | {s['points_slower_than_best_peer']} | "
                 f"{s['points_over_static_10pct']} | {s['targets_met']}/{s['targets_measured']}"
                 f"{' (missed: ' + ', '.join(missed) + ')' if missed else ''} |")
    L.append("")
    L.append(f"All points of this run: geomean vs eager {xs(seed.geomean(allsp['eager']))}, vs torch.compile dynamic "
             f"{xs(seed.geomean(allsp['compile_dyn']))}, vs best peer {xs(seed.geomean(allsp['best']))}; "
             f"targets met {met}/{measured} (4 per model: geomean >= 1.5x compile dyn, >= 2x eager, "
             f"no point slower than the best peer, within 10% of symc static everywhere).")
    return L


def plot(res, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return None
    rows = res["points"]
    x = list(range(len(rows)))
    fig, ax = plt.subplots(figsize=(max(7, 0.45 * len(rows) + 3), 4.5))
    for key, label, style in (("symc", "symc (dynamic engine)", "o-"), ("symc_static", "symc static oracle", "s--"),
                              ("eager", "eager PyTorch", "^-"), ("compile_dyn", "torch.compile dynamic", "v-"),
                              ("compile_static", "torch.compile static", "d--"),
                              ("autotune", "torch.compile max-autotune", "x:")):
        pts = [(i, p50(r, key)) for i, r in zip(x, rows) if p50(r, key)]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label, markersize=4)
    ax.set_xticks(x)
    ax.set_xticklabels([r["point"] for r in rows], rotation=45, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("p50 latency, ms (log)")
    ax.set_title(f"{res['model']}: {res['desc']}", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = os.path.join(out, f"suite_{res['model']}.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def write_outputs(a, env, results, final):
    if PRECISION["name"] == "fp32":
        prec_text, tol_text = "fp32, TF32 off for the peers", "1e-4"
    else:
        prec_text = {"tf32": "TF32 math (symc compile --tf32; the peers with allow_tf32, matmul and cuDNN)",
                     "fp16": "fp16 math (symc compile --fp16, fp32 storage; the peers' module and inputs in "
                             "float16)",
                     "bf16": "bf16 math (symc compile --bf16, fp32 storage; the peers' module and inputs in "
                             "bfloat16)"}[PRECISION["name"]]
        tol_text = f"{REL_TOL:g}"
    md = [f"## symc suite benchmarks ({env.get('gpu', 'CPU reference backend')}, torch {env.get('torch', '-')}, "
          f"{env.get('symc_version', '')})", "",
          f"Latency: median of per-call CUDA-event times after warm-up (symc: `symc bench`, per enqueue), {prec_text}"
          "; speedups are peer / symc (> 1: symc faster); best peer = fastest of eager, "
          "torch.compile dynamic and static (and max-autotune when run); rel err = ||symc(cuda) - torch fp64 CPU|| / "
          f"||ref|| (tolerance {tol_text}).", "",
          f"Command: `{' '.join(sys.argv)}`", ""]
    for r in results:
        md.append(table(r, a.symc_only))
    if not a.symc_only:
        md += summary_lines(results)
    text = "\n".join(md)
    with open(os.path.join(a.out, "suite.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, "suite.json"), "w") as f:
        json.dump({"env": env, "models": results, "wall_s": now() - T_START, "complete": final}, f, indent=1,
                  default=lambda o: None)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--symc", default="build/bin/symc")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="all", help="comma list of " + ",".join(suite_models.MODELS) + " or all")
    ap.add_argument("--iters", type=int, default=None, help="timed runs per point (100; 20 with --quick)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed runs first (20; 5 with --quick)")
    ap.add_argument("--quick", action="store_true", help="2-3 points per model, fewer iterations (smoke run)")
    ap.add_argument("--symc-only", action="store_true",
                    help="no GPU: compile every model, ref-backend check and bench at one small point")
    ap.add_argument("--autotune", action="store_true", help='add torch.compile mode="max-autotune-no-cudagraphs"')
    ap.add_argument("--graphs", action="store_true", help="symc bench --graphs (CUDA graphs per shape)")
    ap.add_argument("--no-pymod", dest="pymod", action="store_false",
                    help="skip symc through its Python module (symc.compile on the torch module)")
    ap.add_argument("--attn", default="sdpa", choices=["sdpa", "explicit"],
                    help="torch modules of M2/M4: F.scaled_dot_product_attention (default) or matmul-softmax-matmul")
    ap.add_argument("--budget-s", type=float, default=450,
                    help="wall budget of the run; the static oracle, compile static and autotune skip points past it")
    ap.add_argument("--ref-device", default="cpu", choices=["cpu", "cuda"],
                    help="device of the float64 reference (cpu: docs/BENCHMARKS-SUITE.md's method; cuda: faster for M3's largest point)")
    ap.add_argument("--points", default=None,
                    help="indices into each selected model's sweep, e.g. 0,3,6 (to split a long sweep over calls)")
    ap.add_argument("--check-backend", default=None, choices=["cuda", "ref"])
    ap.add_argument("--bench-backend", default="cuda", choices=["cuda", "ref"],
                    help="backend `symc bench` times (ref: only to test this script without a GPU)")
    ap.add_argument("--peer-device", default="cuda", choices=["cuda", "cpu"],
                    help="device of the torch peers (cpu: only to test this script; host-clock timing)")
    ap.add_argument("--work", default=None, help="folder for engines and .npy files (default: a temp dir)")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "fp16", "bf16"],
                    help="math of both sides: symc compile --tf32/--fp16/--bf16 (fp32 storage), the peers with "
                         "allow_tf32 or in float16/bfloat16; checks at 1e-2 instead of 1e-4 (default fp32)")
    a = ap.parse_args()
    a.iters = a.iters or (20 if a.quick else 100)
    a.warmup = a.warmup or (5 if a.quick else 20)
    if a.check_backend is None:
        a.check_backend = "ref" if a.symc_only else "cuda"
    a.symc = os.path.abspath(a.symc)
    if not os.access(a.symc, os.X_OK):
        print(f"bench_suite.py: no symc executable at {a.symc} (build it, or pass --symc)", flush=True)
        return 1
    models = list(suite_models.MODELS) if a.models == "all" else [m.strip() for m in a.models.split(",") if m.strip()]
    bad = [m for m in models if m not in suite_models.MODELS]
    if bad:
        print(f"bench_suite.py: unknown model(s) {bad}; have {list(suite_models.MODELS)}", flush=True)
        return 2
    os.makedirs(a.out, exist_ok=True)
    work = a.work or tempfile.mkdtemp(prefix="symc_suite_")
    os.makedirs(work, exist_ok=True)

    global REL_TOL
    PRECISION["name"], PRECISION["flags"] = a.precision, PREC_FLAGS[a.precision]
    if a.precision != "fp32":
        REL_TOL = 1e-2
    env = {"argv": sys.argv, "symc": a.symc, "numpy": np.__version__, "onnx": onnx.__version__, "iters": a.iters,
           "warmup": a.warmup, "quick": a.quick, "symc_only": a.symc_only, "attn": a.attn, "graphs": a.graphs,
           "autotune": a.autotune, "budget_s": a.budget_s, "ref_device": a.ref_device, "pymod": a.pymod, "cpu_count": os.cpu_count()}
    if a.precision != "fp32":
        env["precision"], env["rel_tol"] = a.precision, REL_TOL
    rc, out, _, _ = seed.run([a.symc, "--version"], 30)
    env["symc_version"] = out.strip()
    # a fresh inductor cache per run (compile times are cold, not from an earlier run); the FX graph cache
    # off, so torch.compile static does not reuse a graph the dynamic phase compiled at the same shape
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.join(work, "inductor_cache"))
    env["inductor_cache_dir"] = os.environ["TORCHINDUCTOR_CACHE_DIR"]
    torch = None
    try:
        import torch  # noqa: F811
        try:
            import torch._inductor.config as icfg
            icfg.fx_graph_cache = False
            env["fx_graph_cache"] = False
        except Exception:
            pass
        env["torch"] = torch.__version__
        torch.set_num_threads(os.cpu_count() or 1)
        PRECISION["dtype"] = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(a.precision)
    except ImportError:
        if not a.symc_only:
            print("bench_suite.py: no torch here; run with --symc-only", flush=True)
            return 1
    DEV["name"] = a.peer_device
    env["peer_device"] = a.peer_device
    env["bench_backend"] = a.bench_backend
    if not a.symc_only:
        if a.peer_device == "cuda":
            if not torch.cuda.is_available():
                print("bench_suite.py: torch sees no CUDA device (use --symc-only without a GPU)", flush=True)
                return 1
            env["gpu"] = torch.cuda.get_device_name(0)
        tf32 = a.precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
        torch.manual_seed(0)
        raise_recompile_limits(torch)
    log(f"env: {env}")

    budget = Budget(a.budget_s, len(models))
    results = []
    for m in models:
        budget.start_model()
        t0 = now()
        try:
            r = bench_model(m, suite_models.MODELS[m], a, work, budget, torch)
        except Exception as ex:
            log(f"{m}: FAILED: {short(ex)}")
            traceback.print_exc()
            sys.stdout.flush()
            r = {"model": m, "desc": suite_models.MODELS[m]["desc"], "points": [], "errors": [f"model failed: {short(ex)}"]}
        r["wall_s"] = now() - t0
        log(f"{m}: done in {r['wall_s']:.1f} s")
        results.append(r)
        if r["points"]:
            try:
                p = plot(r, a.out)
                if p:
                    r["plot"] = os.path.basename(p)
            except Exception as ex:
                r["errors"].append(f"plot failed: {short(ex)}")
        write_outputs(a, env, results, final=False)

    text = write_outputs(a, env, results, final=True)
    if a.work is None:
        shutil.rmtree(work, ignore_errors=True)
    bad_pts = sum(1 for r in results for p in r["points"] if p.get("check") not in ("ok", "ran (no torch reference)"))
    bad_pts += sum(1 for r in results if not r["points"])
    print("\n" + text, flush=True)
    print(f"\ntotal {now() - T_START:.1f} s; {bad_pts} point(s) without a passing check; files in {a.out}", flush=True)
    return 0 if bad_pts == 0 else 3


if __name__ == "__main__":
    sys.exit(main())
