#!/usr/bin/env python3
"""bench/gemm_roofline.py (issue 34 item 2's GEMMs against the roofline) on a written `symc bench
--profile --json` file, no GPU: each cuBLASLt step's roofline against a hand computation (a
compute-bound f16 GEMM, a memory-bound one, a 1x1 convolution whose weight is read once, an f32
GEMM held to the f32 peak), the non-GEMM steps left out, the steps ordered by lost time, the
totals, and the refusals (no profile, nothing to read).

usage: gemm_roofline_test.py REPO TMPDIR
"""
import json
import os
import subprocess
import sys

repo, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
script = os.path.join(repo, "bench", "gemm_roofline.py")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


steps = [
    {"step": 0, "node": "big", "op": "matmul", "kind": "gemm", "ms": 0.5,
     "detail": "cuBLASLt f16 m=4096 n=4096 k=4096 batch=1 +bias, tuned algo"},
    {"step": 1, "node": "softmax", "op": "softmax", "kind": "kernel", "ms": 0.2, "detail": "k_softmax: 8 blocks"},
    {"step": 2, "node": "thin", "op": "matmul", "kind": "gemm", "ms": 0.05,
     "detail": "cuBLASLt bf16 m=65536 n=64 k=64 batch=1, heuristic algo"},
    {"step": 3, "node": "conv", "op": "conv2d", "kind": "gemm", "ms": 0.1,
     "detail": "cuBLASLt f16 (1x1 conv, bias in a K=1 call) m=256 n=6400 k=64 batch=32 +bias per channel +relu, "
               "tuned algo"},
    {"step": 4, "node": "f32", "op": "matmul", "kind": "gemm", "ms": 1.0,
     "detail": "cuBLASLt f32 m=1024 n=1024 k=1024 batch=2, tuned algo"},
]
js = os.path.join(tmp, "bench.json")
with open(js, "w") as f:
    json.dump({"points": [{"label": "p0", "profile_sum_ms": 2.0, "profile": steps}]}, f)

r = subprocess.run([sys.executable, script, "--json", js, "--gpu", "h200", "--out", os.path.join(tmp, "r.md")],
                   capture_output=True, text=True)
check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")
out = r.stdout
rows = [ln for ln in out.splitlines() if ln.startswith("| ") and not ln.startswith("| step")]
check(len(rows) == 4, f"4 GEMM rows, got {len(rows)}:\n{out}")
check(all("softmax" not in ln for ln in rows), "the kernel step left out")

half, f32, bw = 989.4e12, 66.9e12, 4.8e12
# hand rooflines (ms): max(flops / peak, bytes / bandwidth)
want = {
    "big": max(2 * 4096 ** 3 / half, 2 * 3 * 4096 * 4096 / bw) * 1e3,
    "thin": max(2 * 65536 * 64 * 64 / half, 2 * (65536 * 64 + 64 * 64 + 65536 * 64) / bw) * 1e3,
    "conv": max(2 * 256 * 6400 * 64 * 32 / half, 2 * (256 * 64 + 32 * (64 * 6400 + 256 * 6400)) / bw) * 1e3,
    "f32": max(2 * 2 * 1024 ** 3 / f32, 4 * 2 * 3 * 1024 * 1024 / bw) * 1e3,
}
measured = {"big": 0.5, "thin": 0.05, "conv": 0.1, "f32": 1.0}
got = {}
for ln in rows:
    cells = [c.strip() for c in ln.strip("|").split("|")]
    got[cells[1]] = (float(cells[3]), float(cells[6]), float(cells[7]), float(cells[4]))
for name, roof in want.items():
    check(name in got, f"{name} has a row")
    if name in got:
        check(abs(got[name][1] - roof) <= 5e-5 + 1e-3 * roof, f"{name}: roofline {got[name][1]} ms, want {roof:.4f}")
        check(abs(got[name][2] - (measured[name] - roof)) <= 1e-4 + 1e-3 * roof, f"{name}: lost {got[name][2]}")
# TFLOP/s of the big GEMM: 2 * 4096^3 / 0.5 ms
check("big" in got and abs(got["big"][3] - 2 * 4096 ** 3 / 0.5e-3 / 1e12) < 1, f"big TFLOP/s {got.get('big')}")
# ordered by lost time, the most first
lost = [got[c.split("|")[2].strip()][2] for c in rows]
check(lost == sorted(lost, reverse=True), f"rows ordered by lost time: {lost}")
total = sum(measured.values())
check(f"4 GEMM steps: {total:.4f} ms measured" in out, f"the total {total:.4f} ms in:\n{out}")
check(os.path.exists(os.path.join(tmp, "r.md")), "--out written")

# refusals
with open(js, "w") as f:
    json.dump({"points": [{"label": "p0"}]}, f)
r = subprocess.run([sys.executable, script, "--json", js], capture_output=True, text=True)
check(r.returncode != 0 and "--profile" in r.stderr, f"no profile refused: {r.returncode} {r.stderr}")
r = subprocess.run([sys.executable, script], capture_output=True, text=True)
check(r.returncode != 0 and "nothing to read" in r.stderr, f"nothing to read refused: {r.returncode} {r.stderr}")

print(f"gemm_roofline_test: {len(failures)} failures")
sys.exit(1 if failures else 0)
