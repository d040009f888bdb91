#!/usr/bin/env python3
"""The first call at a new shape with and without a warm-up, and builds cold and from the cache
(issue 34 items 4 and 5), on the GPU.

Per model (--models, default resnet50,bert: tests/gpu/real_models.py's builders, random weights,
seeded; ResNet-50 with B, H and W dynamic, BERT-base with B and S and a padding mask):
  1. the fp32 module exported to ONNX (real_models.export_onnx) and compiled with `symc compile
     --fp16` into a fresh SYMC_CACHE_DIR (cold), then again into another file from that cache
     (cached): both timed, each build's tuning summary kept, and whether the two engines are the
     same bytes (a rebuild tunes at as many points as the first build did, so it should be);
  2. `symc bench ENGINE --point ... --json` in a fresh process per mode, once as is ("cold") and
     once with --warm (symrt_context_warm before the first point): per point first_us, the host
     time of the first enqueue at that shape, and the warm-up's own time;
  3. correctness at every timed point: a fresh context (symc.runtime.Context, CUDA, warmed up)
     runs each point's seeded inputs (padding masks of random lengths for text) and its output is
     compared with the fp32 module's on the same inputs, ||y - ref|| / ||ref|| <= 1e-2 (fp16);
     a wrong point fails the run (exit 1).
The points, in this order in each process (the first pays the process's first library calls):
opt, max, off1, off2, min.
Output: OUT/first_call.md (tables) and OUT/first_call.json.

With --profile a third process (warmed, `symc bench --profile`) gives each point's first-call
breakdown (host time per kind of step), printed after the table; the timings above it are not profiled. The "no
graph" column is `symc bench --no-graphs` at each point once warmed: the host time of an enqueue
that launches every step itself, i.e. the floor of a first call once its setups exist. The setups column: cuBLASLt setups made at that first call
and those taken from another step making the same call (runtime/cuda/setup_pool.h).

usage (device, repo root, build/bin and build/lib carried):
  python3 bench/first_call.py --out $OUT [--models resnet50,bert] [--work /tmp/fc] [--profile]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "gpu"))
sys.path.insert(0, os.path.join(REPO, "frontend", "torch"))

POINTS = {  # tag -> symbol values
    "resnet50": [("opt", {"B": 8, "H": 224, "W": 224}), ("max", {"B": 32, "H": 320, "W": 320}),
                 ("off1", {"B": 5, "H": 161, "W": 317}), ("off2", {"B": 3, "H": 256, "W": 192}),
                 ("min", {"B": 1, "H": 128, "W": 128})],
    "bert": [("opt", {"B": 8, "S": 128}), ("max", {"B": 32, "S": 512}), ("off1", {"B": 3, "S": 77}),
             ("off2", {"B": 13, "S": 300}), ("min", {"B": 1, "S": 1})],
}
TOL = 1e-2


def log(*a):
    print(f"[{time.monotonic() - T0:7.1f}s]", *a, flush=True)


def point_flag(m, values):
    """symc bench --point: every input at these symbol values"""
    return ",".join(f"{n}:" + "x".join(str(values[d] if isinstance(d, str) else d) for d in dims)
                    for n, dims, _ in m["inputs"])


def compile_once(a, onnx_path, engine, m, rm, cache):
    env = dict(os.environ, SYMC_CACHE_DIR=cache)
    t = time.monotonic()
    p = subprocess.run([a.symc, "compile", onnx_path, "-o", engine, "--fp16"] + rm.shapes_flags(m),
                       capture_output=True, text=True, env=env)
    secs = time.monotonic() - t
    if p.returncode:
        raise RuntimeError("symc compile: " + p.stderr[-2000:])
    tuned = [ln for ln in p.stderr.splitlines() if "tuned " in ln or "stopping after" in ln]
    return secs, tuned


def bench(a, engine, m, warm, out_json, profile=False, plain=False):
    """first_us per point, cuBLASLt setups (made, shared) per point, the warm-up (points, ms) and, with
    --profile on the warmed run, each point's "first call at this shape (profiled)" line"""
    cmd = [a.symc, "bench", engine, "--json", out_json, "--iters", "5", "--warmup", "1"]
    for _, values in POINTS[a.cur]:
        cmd += ["--point", point_flag(m, values)]
    if warm:
        cmd.append("--warm")
    if profile:
        cmd.append("--profile")
    if plain:  # every enqueue step by step: host_us is then what a known shape costs without a graph
        cmd += ["--no-graphs", "--iters", "20"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("symc bench: " + (p.stderr or p.stdout)[-2000:])
    w = re.search(r"warm-up: (\d+) points? in ([0-9.]+) ms", p.stdout)
    with open(out_json) as f:
        pts = json.load(f)["points"]
    prof = [ln.strip() for ln in p.stdout.splitlines() if "first call at this shape (profiled)" in ln]
    return ([x["first_us"] for x in pts], [(x.get("setups_made"), x.get("setups_shared")) for x in pts],
            (int(w.group(1)), float(w.group(2))) if w else None, prof, [x.get("host_us") for x in pts])


def check(a, engine, m, module, rm, torch):
    """the engine after a warm-up against the fp32 module at every point"""
    from symc import _lib
    from symc import runtime as rt
    ctx = rt.Context(rt.Engine(engine), _lib.BACKEND_CUDA)
    n = ctx.warm()
    rng = np.random.default_rng(7)
    errs = []
    with torch.no_grad():
        for tag, values in POINTS[a.cur]:
            xs = rm.make_inputs(m, values, "pad" if tag != "min" else "ones", rng)
            ts = [torch.from_numpy(x).cuda() for x in xs]
            y = ctx.run(ts)[0].double()
            ref = module(*ts).double()
            errs.append(float((y - ref).norm() / max(float(ref.norm()), 1e-30)))
    return n, errs


def main():
    global T0
    T0 = time.monotonic()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="resnet50,bert")
    ap.add_argument("--symc", default="build/bin/symc")
    ap.add_argument("--lib", default="build/lib/libsymc.so")
    ap.add_argument("--work", default="/tmp/first_call")
    ap.add_argument("--profile", action="store_true",
                    help="the warmed run with symc bench --profile: where each first call's host time goes")
    a = ap.parse_args()
    a.symc = os.path.abspath(a.symc)
    os.environ.setdefault("SYMC_LIB", os.path.abspath(a.lib))
    import real_models as rm
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.makedirs(a.out, exist_ok=True)
    results, failed = {}, 0
    for name in a.models.split(","):
        if name not in POINTS:
            sys.exit(f"--models: {name} has no points here (models: {', '.join(POINTS)})")
        a.cur = name
        m = dict(rm.MODELS[name])
        if name == "resnet50":
            m["ranges"] = {"B": (1, 8, 32), "H": (128, 224, 320), "W": (128, 224, 320)}
        d = os.path.join(a.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        torch.manual_seed(0)
        module = m["build"]().eval()
        onnx_path = os.path.join(d, "model.onnx")
        rm.export_onnx(torch, module, m, onnx_path)
        module = module.cuda()
        cache = os.path.join(d, "cache")
        e1, e2 = os.path.join(d, "cold.symx"), os.path.join(d, "cached.symx")
        cold_s, cold_t = compile_once(a, onnx_path, e1, m, rm, cache)
        cached_s, cached_t = compile_once(a, onnx_path, e2, m, rm, cache)
        same = open(e1, "rb").read() == open(e2, "rb").read()
        log(f"{name}: built cold in {cold_s:.1f} s, from the cache in {cached_s:.1f} s, "
            f"{'the same engine' if same else 'DIFFERENT engines'}")
        first_cold = bench(a, e1, m, False, os.path.join(d, "b_cold.json"))[0]
        first_warm, setups, warm, _, _ = bench(a, e1, m, True, os.path.join(d, "b_warm.json"))
        plain_us = bench(a, e1, m, True, os.path.join(d, "b_plain.json"), plain=True)[4]
        prof = bench(a, e1, m, True, os.path.join(d, "b_prof.json"), True)[3] if a.profile else []
        n_warm, errs = check(a, e1, m, module, rm, torch)
        bad = [t for (t, _), e in zip(POINTS[name], errs) if not e <= TOL]
        failed += len(bad)
        results[name] = {"cold_s": cold_s, "cached_s": cached_s, "same_engine": same, "tuning_cold": cold_t,
                         "tuning_cached": cached_t, "points": [t for t, _ in POINTS[name]],
                         "shapes": [point_flag(m, v) for _, v in POINTS[name]], "first_us_cold": first_cold,
                         "first_us_warm": first_warm, "warm_points": warm[0] if warm else None,
                         "warm_ms": warm[1] if warm else None, "check_warm_points": n_warm, "rel_err": errs,
                         "setups_warm": setups, "profile_warm": prof, "plain_host_us": plain_us}
        log(f"{name}: first call us cold {[round(x) for x in first_cold]}, warmed {[round(x) for x in first_warm]}"
            f" (warm-up {warm}); errors {['%.1e' % e for e in errs]}{'; WRONG at ' + ','.join(bad) if bad else ''}")
        with open(os.path.join(a.out, "first_call.json"), "w") as f:
            json.dump(results, f, indent=1)
    lines = []
    for name, r in results.items():
        lines.append(f"\n### {name}\n\nbuilt cold {r['cold_s']:.1f} s, from the cache {r['cached_s']:.1f} s, "
                     f"{'the same engine' if r['same_engine'] else 'different engines'}; tuning: "
                     f"{' / '.join(r['tuning_cold'][-1:] + r['tuning_cached'][-1:])}; warm-up "
                     f"{r['warm_points']} points in {r['warm_ms']} ms\n")
        lines.append("| point | shapes | first call us, cold | first call us, warmed | cuBLASLt setups made / "
                     "shared (warmed) | known shape, no graph: host us an enqueue | rel err (warmed) |")
        lines.append("|---|---|---:|---:|---:|---:|---:|")
        for i, t in enumerate(r["points"]):
            made, shared = r["setups_warm"][i]
            plain = r["plain_host_us"][i]
            lines.append(f"| {t} | {r['shapes'][i]} | {r['first_us_cold'][i]:.0f} | {r['first_us_warm'][i]:.0f} | "
                         f"{made} / {shared} | {plain if plain is None else round(plain)} | {r['rel_err'][i]:.1e} |")
        for ln in r["profile_warm"]:
            lines.append(f"\n    {ln}")
    with open(os.path.join(a.out, "first_call.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    log(f"done: {failed} wrong point(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
