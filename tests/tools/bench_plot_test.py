#!/usr/bin/env python3
"""`symc bench --sweep --plot FILE.svg --csv FILE.csv` (issue 18): the performance envelope across the
declared range. A model written here (y = relu(x @ w), x[B, 64], B in [1, 64] opt 8) is compiled for the
reference backend and swept; the SVG must be well-formed XML (xml.etree) with one latency marker and one
memory marker per sweep point, two polylines through them, x positions in the order of the sizes, and
labelled axes; the CSV must have one row per point with the swept symbol's values (min, opt, opt+1, a
prime, max of the range) and the memory the formula gives, checked against an independent count:
weights (64*128*4 bytes) plus the one intermediate tensor (B*128*4 bytes). The refusals are checked too.

usage: bench_plot_test.py SYMC TMPDIR
"""
import csv
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

symc, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
failures = []
SVG = "{http://www.w3.org/2000/svg}"


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*args, want=0):
    p = subprocess.run([symc, *args], capture_output=True, text=True)
    check(p.returncode == want, f"symc {' '.join(args)}: exit {p.returncode}, wanted {want}: {p.stdout}{p.stderr}")
    return p.stdout, p.stderr


def path(name):
    return os.path.join(tmp, name)


w = np.random.default_rng(0).standard_normal((64, 128)).astype(np.float32)
g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["mm"]), h.make_node("Relu", ["mm"], ["y"])], "mlp",
                 [h.make_tensor_value_info("x", T.FLOAT, ["B", 64])], [h.make_tensor_value_info("y", T.FLOAT, None)],
                 [nh.from_array(w, "w")])
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), path("mlp.onnx"))
engine = path("mlp.symx")
run("compile", path("mlp.onnx"), "--shapes", "x:1x64,8x64,64x64", "--no-gpu", "-o", engine)

for f in ("s.svg", "s.csv"):
    if os.path.exists(path(f)):
        os.remove(path(f))
out, _ = run("bench", engine, "--sweep", "--shapes", "x:Bx64", "--backend", "ref", "--iters", "2", "--warmup", "0",
             "--plot", path("s.svg"), "--csv=" + path("s.csv"))
rows_printed = [ln.split()[0] for ln in out.splitlines() if ln and not ln.startswith(("#", "point"))]
want_b = [1, 8, 9, 31, 64]  # min, opt, opt+1, the prime below the middle of (opt, max], max
check(rows_printed == ["min", "opt", "opt+1", "prime", "max"], f"the sweep's points: {out}")

# ---- the SVG ----
try:
    root = ET.parse(path("s.svg")).getroot()
except (ET.ParseError, OSError) as e:
    root = None
    check(False, f"the SVG is not well-formed XML: {e}")
if root is not None:
    check(root.tag == SVG + "svg", f"root element {root.tag}")
    circles = [c for c in root.iter(SVG + "circle") if c.get("class") == "s1"]
    squares = [r for r in root.iter(SVG + "rect") if r.get("class") == "s2"]
    check(len(circles) == len(rows_printed) == len(squares),
          f"one latency and one memory marker per sweep point: {len(circles)}, {len(squares)}, {len(rows_printed)}")
    cx = [float(c.get("cx")) for c in circles]
    check(cx == sorted(cx) and len(set(cx)) == len(cx), f"the markers' x follow the sizes: {cx}")
    # x is linear in B: equal steps of B give equal steps of pixels
    if len(cx) == 5:
        per = (cx[4] - cx[0]) / (want_b[4] - want_b[0])
        check(all(abs((cx[i] - cx[0]) - per * (want_b[i] - want_b[0])) < 0.05 for i in range(5)),
              f"x is not linear in B: {cx}")
    lines = [p for p in root.iter(SVG + "polyline")]
    check(len(lines) == 2 and all(len(p.get("points").split()) == len(rows_printed) for p in lines),
          f"two polylines through every point: {[p.get('points') for p in lines]}")
    texts = {t.get("class"): "".join(t.itertext()) for t in root.iter(SVG + "text") if t.get("class")}
    check("B" in texts.get("xlabel", ""), f"x axis label names the symbol: {texts}")
    check("latency" in texts.get("y1label", "") and "memory" in texts.get("y2label", ""), f"axis labels: {texts}")
    titles = ["".join(t.itertext()) for c in circles for t in c.iter(SVG + "title")]
    check(len(titles) == 5 and titles[0].startswith("min (x:1x64)") and titles[-1].startswith("max (x:64x64)"),
          f"tooltips name the points: {titles}")
    xticks = [float(t.text) for grp in root.iter(SVG + "g") if grp.get("class") == "xlabels" for t in grp]
    check(len(xticks) >= 3 and xticks[0] <= 1 and xticks[-1] >= 64, f"x ticks span the range: {xticks}")

# ---- the CSV ----
with open(path("s.csv")) as f:
    rows = list(csv.DictReader(f))
check([r["label"] for r in rows] == rows_printed, f"CSV rows: {rows}")
check([int(r["B"]) for r in rows] == want_b, f"CSV B column: {[r.get('B') for r in rows]}")
check([r["shapes"] for r in rows] == [f"x:{b}x64" for b in want_b], "CSV shapes column")
check(all(r["memory_source"] == "formula" for r in rows), "the reference backend's memory is the formula")
check([int(r["memory_bytes"]) for r in rows] == [64 * 128 * 4 + b * 128 * 4 for b in want_b],
      f"memory = weights + the intermediate: {[r.get('memory_bytes') for r in rows]}")
check(all(float(r["p50_ms"]) > 0 and float(r["min_ms"]) <= float(r["p50_ms"]) <= float(r["p99_ms"]) for r in rows),
      "latencies")
printed_p50 = [float(ln.split()[2]) for ln in out.splitlines() if ln and not ln.startswith(("#", "point"))]
check(all(abs(float(r["p50_ms"]) - p) <= 5e-5 + 1e-3 * p for r, p in zip(rows, printed_p50)),
      "the CSV's p50 is the table's")

# --csv without --sweep: the points in order, x = the point's index
run("bench", engine, "--point", "x:3x64", "--point", "x:5x64", "--backend", "ref", "--iters", "1", "--csv",
    path("p.csv"), "--quiet")
with open(path("p.csv")) as f:
    rows = list(csv.DictReader(f))
check([(r["label"], r["point"], r["shapes"]) for r in rows] == [("p0", "0", "x:3x64"), ("p1", "1", "x:5x64")],
      f"--csv of --point runs: {rows}")

# ---- refusals ----
_, err = run("bench", engine, "--shapes", "x:4x64", "--backend", "ref", "--plot", path("n.svg"), want=2)
check("--plot draws latency and memory across a sweep: it needs --sweep" in err and not os.path.exists(path("n.svg")),
      f"--plot without --sweep: {err}")
_, err = run("bench", engine, "--sweep", "--shapes", "x:Bx64", "--backend", "ref", "--plot", want=2)
check("--plot needs a value" in err, f"--plot without a file: {err}")
_, err = run("bench", engine, "--sweep", "--shapes", "x:Bx64", "--backend", "ref", "--iters", "1", "--plot",
             os.path.join(tmp, "no", "such", "dir", "s.svg"), want=1)
check(re.search(r"cannot write .*s\.svg", err) is not None, f"an unwritable --plot path: {err}")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("ok: bench --sweep --plot and --csv")
