#!/usr/bin/env python3
"""Every GEMM step of an engine against the roofline (issue 34 item 2: "measure every GEMM step of
BERT-base and GPT-2 against cuBLASLt's best and the roofline").

Reads `symc bench --profile --json` output (or runs it: ENGINE and --point as symc bench takes
them) and, per point, gives each cuBLASLt step (symc inspect's "cuBLASLt <dtype> ... m= n= k=
batch=" detail) its FLOPs (2 m n k batch), the bytes it must move at least (A, B and D once each;
a 1x1 convolution's weight once for the whole batch), its measured time, its TFLOP/s and share
of the dense peak, and the roofline: the larger of FLOPs / peak and bytes / bandwidth. "Lost" is
measured minus roofline; the steps that lose the most come first. A step in f16/bf16 is held to
the half tensor-core peak, an f32 one to --f32-peak (fp32 math by default; an engine built
--tf32 is held to the TF32 peak with --f32-peak 494.7).

usage:
  python3 bench/gemm_roofline.py --json BENCH.json [--json ...] [--gpu h100|h200] [--out FILE.md]
  python3 bench/gemm_roofline.py --symc build/bin/symc --engine E.symx --point x:8x128 [--point ...]
the peaks: --peak-tflops (half, dense), --f32-peak, --bw-tbs override --gpu's (H100 and H200 SXM:
989.4 TFLOP/s half dense, 66.9 fp32; 3.35 and 4.8 TB/s).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

GPUS = {"h100": (989.4, 66.9, 3.35), "h200": (989.4, 66.9, 4.8)}
ESIZE = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}
DETAIL = re.compile(r"cuBLASLt (?P<dt>f16|bf16|f32|f64)\b(?P<form>.*?) m=(?P<m>\d+) n=(?P<n>\d+) k=(?P<k>\d+) "
                    r"batch=(?P<b>\d+)")


def gemm_of(detail):
    """(dtype, m, n, k, batch, conv) from a GEMM step's detail, or None"""
    g = DETAIL.search(detail or "")
    if not g:
        return None
    return g["dt"], int(g["m"]), int(g["n"]), int(g["k"]), int(g["b"]), "1x1 conv" in g["form"]


def step_roofline(dt, m, n, k, batch, conv, peak_half, peak_f32, bw_tbs):
    """(flops, bytes, roofline ms) of one GEMM"""
    flops = 2.0 * m * n * k * batch
    es = ESIZE[dt]
    a = m * k if conv else m * k * batch  # a 1x1 convolution's weight (our a) is read once
    nbytes = es * (a + (k * n + m * n) * batch)
    peak = peak_half if dt in ("f16", "bf16") else peak_f32
    ms = max(flops / (peak * 1e12), nbytes / (bw_tbs * 1e12)) * 1e3
    return flops, nbytes, ms


def analyse(points, peak_half, peak_f32, bw_tbs):
    """points: symc bench JSON points with "profile"; returns per point (label, rows, totals) where a
    row is (step, node, shape, ms, tflops, pct_peak, roof_ms)"""
    out = []
    for p in points:
        rows = []
        for s in p.get("profile") or []:
            g = gemm_of(s.get("detail"))
            if not g or s.get("kind") != "gemm":
                continue
            dt, m, n, k, b, conv = g
            flops, _, roof = step_roofline(dt, m, n, k, b, conv, peak_half, peak_f32, bw_tbs)
            ms = float(s["ms"])
            tf = flops / (ms * 1e-3) / 1e12 if ms > 0 else 0.0
            peak = peak_half if dt in ("f16", "bf16") else peak_f32
            rows.append((s["step"], s.get("node", ""), f"{dt} {m}x{n}x{k}" + (f" x{b}" if b > 1 else ""), ms, tf,
                         100.0 * tf / peak, roof))
        total = sum(r[3] for r in rows)
        roof = sum(r[6] for r in rows)
        out.append((p.get("label", "?"), rows, (total, roof, float(p.get("profile_sum_ms") or 0.0))))
    return out


def report(results, top):
    lines = []
    for label, rows, (total, roof, all_ms) in results:
        lines.append(f"\n### {label}\n")
        lines.append(f"{len(rows)} GEMM steps: {total:.4f} ms measured, {roof:.4f} ms at the roofline "
                     f"({100 * roof / total if total else 0:.0f}% of it reached)"
                     + (f"; {100 * total / all_ms:.0f}% of the profiled run's {all_ms:.4f} ms" if all_ms else ""))
        lines.append("")
        lines.append("| step | node | GEMM | ms | TFLOP/s | % of peak | roofline ms | lost ms |")
        lines.append("|---:|---|---|---:|---:|---:|---:|---:|")
        for st, node, shape, ms, tf, pct, rf in sorted(rows, key=lambda r: r[6] - r[3])[:top]:
            lines.append(f"| {st} | {node[:40]} | {shape} | {ms:.4f} | {tf:.0f} | {pct:.0f} | {rf:.4f} | "
                         f"{ms - rf:.4f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", action="append", default=[], help="symc bench --profile --json output")
    ap.add_argument("--symc", default="build/bin/symc")
    ap.add_argument("--engine")
    ap.add_argument("--point", action="append", default=[])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--gpu", default="h100", choices=sorted(GPUS))
    ap.add_argument("--peak-tflops", type=float)
    ap.add_argument("--f32-peak", type=float)
    ap.add_argument("--bw-tbs", type=float)
    ap.add_argument("--top", type=int, default=15, help="rows a point (the steps that lose the most)")
    ap.add_argument("--out")
    a = ap.parse_args()
    half, f32, bw = GPUS[a.gpu]
    half, f32, bw = a.peak_tflops or half, a.f32_peak or f32, a.bw_tbs or bw
    points = []
    for f in a.json:
        with open(f) as fh:
            points += json.load(fh)["points"]
    if a.engine:
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "bench.json")
            cmd = [a.symc, "bench", a.engine, "--profile", "--iters", str(a.iters), "--json", js, "--quiet"]
            for p in a.point:
                cmd += ["--point", p]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode:
                sys.exit("symc bench: " + (r.stderr or r.stdout)[-2000:])
            with open(js) as fh:
                points += json.load(fh)["points"]
    if not points:
        sys.exit("nothing to read: give --json files or --engine with --point")
    if not any(p.get("profile") for p in points):
        sys.exit("the points have no profile: symc bench needs --profile")
    text = (f"peaks: {half} TFLOP/s half, {f32} TFLOP/s f32, {bw} TB/s\n"
            + report(analyse(points, half, f32, bw), a.top))
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
