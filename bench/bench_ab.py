#!/usr/bin/env python3
"""A/B of two symc builds on docs/BENCHMARKS-SUITE.md's models: what one change bought.

Each model of the suite (suite_models.py) is built as ONNX once, compiled
by both `symc` binaries with the suite's ranges (tuning at opt on the GPU
present), and each engine is timed by `symc bench --graphs` over the whole
sweep in one process (CUDA events, median of --iters after warm-up). With
--check N, the new engine's CUDA output is compared with the reference
backend at the first N sweep points (random inputs, rel. err. < 1e-4).
Prints one table per model, old ms / new ms / old÷new, and the geomean.

usage: bench_ab.py --old OLD_SYMC --new NEW_SYMC --models M2,M4 [--out DIR] [--check 2]
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import bench_seed as seed  # noqa: E402
import bench_suite as suite  # noqa: E402
import suite_models as sm  # noqa: E402


def run(cmd, timeout=900):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd[:3])}...: {(r.stderr or r.stdout).strip()[-600:]}")
    return time.perf_counter() - t


def bench(symc, engine, spec, points, a, tag):
    bjson = os.path.join(a.work, f"{tag}.json")
    cmd = [symc, "bench", engine, "--json", bjson, "--backend", "cuda", "--iters", str(a.iters), "--warmup", "20",
           "--graphs"]
    for p in points:
        cmd += ["--point", seed.point_arg(spec, p)]
    run(cmd)
    return [p["p50_ms"] for p in json.load(open(bjson))["points"]]


def check(symc, engine, spec, point, a, rng):
    """CUDA vs reference backend on the same random inputs"""
    args, outs = [], {}
    for n, d in spec["inputs"]:
        x = rng.standard_normal(seed.dims_at(d, point)).astype(np.float32)
        f = os.path.join(a.work, f"in_{n}.npy")
        np.save(f, x)
        args += ["--input", f"{n}={f}"]
    for be in ("cuda", "ref"):
        o = spec["outputs"][0]
        f = os.path.join(a.work, f"out_{be}.npy")
        run([symc, "run", engine, "--backend", be] + args + ["--output", f"{o}={f}"])
        outs[be] = np.load(f).astype(np.float64)
    return float(np.linalg.norm(outs["cuda"] - outs["ref"]) / max(np.linalg.norm(outs["ref"]), 1e-30))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--models", default="M2,M4")
    ap.add_argument("--iters", type=int, default=100)
    ap.add_argument("--check", type=int, default=2, help="sweep points checked against the reference backend")
    ap.add_argument("--work", default="/tmp/symc_ab")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rng = np.random.default_rng(0)
    lines, results = [], {}
    for name in a.models.split(","):
        spec = sm.MODELS[name]
        W = spec["weights"](np.random.default_rng(0))
        onnx_path = os.path.join(a.work, f"{name}.onnx")
        suite.build_onnx(name, spec, W, onnx_path)
        points = spec["sweep"]
        times = {}
        for tag, symc in (("old", a.old), ("new", a.new)):
            eng = os.path.join(a.work, f"{name}_{tag}.symx")
            build_s = run([symc, "compile", onnx_path] + seed.compile_shapes(spec) + ["-o", eng])
            times[tag] = bench(symc, eng, spec, points, a, f"{name}_{tag}")
            times[tag + "_build_s"] = build_s
        errs = [check(a.new, os.path.join(a.work, f"{name}_new.symx"), spec, p, a, rng) for p in points[:a.check]]
        lines.append(f"\n### {name}: old {times['old_build_s']:.2f} s build, new {times['new_build_s']:.2f} s build; "
                     f"new CUDA vs reference rel. err. at the first {len(errs)} points: "
                     + ", ".join(f"{e:.2e}" for e in errs) + (" (FAIL)" if any(e > 1e-4 for e in errs) else ""))
        lines.append("\n| point | old ms | new ms | old/new |\n|---|---|---|---|")
        ratios = []
        for p, o, n in zip(points, times["old"], times["new"]):
            ratios.append(o / n)
            lines.append(f"| {seed.point_label(spec, p)} | {o:.4f} | {n:.4f} | {o / n:.2f}x |")
        g = math.exp(sum(map(math.log, ratios)) / len(ratios))
        lines.append(f"| **geomean** | | | **{g:.2f}x** |")
        results[name] = {"points": [seed.point_label(spec, p) for p in points], **times, "rel_err": errs,
                         "geomean": g}
        print("\n".join(lines[-len(points) - 4:]), flush=True)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "ab.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(os.path.join(a.out, "ab.json"), "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
