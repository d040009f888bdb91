#!/usr/bin/env python3
"""ONNX operator conformance: the ONNX backend node tests on symc's reference backend.

The node tests (one model per operator case, with input and expected output tensors)
ship inside the onnx 1.22.0 wheel (onnx 1.23 dropped them). The wheel is fetched once
with `pip download onnx==1.22.0 --no-deps` into a cache (SYMC_ONNX_TESTDATA_CACHE,
default ~/.cache/symc/onnx-1.22.0) and its onnx/backend/test/data/node/ tree extracted
there.

In scope: every test whose model imports the default domain at opset 13..21, plus the
older ones that onnx.version_converter converts up to opset 13 and the newer ones it
converts down to opset 21 (the data was generated at the then-latest opset, 22-27,
for most operators). Out of scope (counted and
printed by reason): other domains (ai.onnx.ml, training, preview), non-tensor inputs or
outputs (sequences, optionals, maps), and element types no deep-learning model feeds a
compiler (string, complex, float8, 4-bit). Each in-scope test is compiled by
`symc compile` (static shapes from the test's inputs) and run by `symc run --backend
ref` on the test's inputs; outputs are compared with the expected ones (rtol 1e-3,
atol 1e-7 like onnx's backend runner, looser for the few tests in ATOL; NaN where
NaN is expected; integers and booleans exactly; shapes and dtypes must match). An input symc needs at build time (Reshape's
shape, a Reduce's axes: the compile error names it as a graph input known
only at run time) is made an initializer holding the test's value and the test
compiled again, as onnx-mlir's backend tests do (CONSTANT_INPUT); the op is then
checked at that value. Every test ends as
  pass     the outputs match;
  refused  symc exited with a clear error (a message on stderr, exit status 1), at
           compile or at run time: what is not supported is refused, not guessed;
  WRONG    symc ran and produced a different output (value, shape or dtype);
  CRASH    a signal, a sanitizer report, a timeout, or an error exit without a message.
The test fails on any WRONG or CRASH and when fewer tests pass than FLOOR below.

usage: onnx_node_tests.py SYMC [--jobs N] [--every K] [--table FILE] [--only SUBSTR] [--no-floor]
  --every K   run every K-th in-scope test (the sanitizer build: still no WRONG/CRASH
              allowed; the floor is not checked)
  --table F   write the per-op support table (markdown) to F (docs/ONNX_SUPPORT.md)
"""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
import onnx
from onnx import numpy_helper

FLOOR = 1337  # passing tests; raise it as ops land (never lower it to make a change pass)
OPSETS = range(13, 22)
ONNX_WHEEL = "onnx==1.22.0"

NP_OK = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
         onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT16, onnx.TensorProto.UINT16,
         onnx.TensorProto.INT32, onnx.TensorProto.UINT32, onnx.TensorProto.INT64, onnx.TensorProto.UINT64,
         onnx.TensorProto.BOOL}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def data_dir():
    cache = os.environ.get("SYMC_ONNX_TESTDATA_CACHE", os.path.expanduser("~/.cache/symc/onnx-1.22.0"))
    node = os.path.join(cache, "node")
    if os.path.isdir(node) and os.listdir(node):
        return node
    os.makedirs(cache, exist_ok=True)
    wheels = glob.glob(os.path.join(cache, "onnx-1.22.0-*.whl"))
    if not wheels:
        log(f"onnx_node_tests: downloading {ONNX_WHEEL} (the node-test data) into {cache}")
        r = subprocess.run([sys.executable, "-m", "pip", "download", ONNX_WHEEL, "--no-deps", "--only-binary",
                            ":all:", "-d", cache, "--quiet", "--disable-pip-version-check"], capture_output=True,
                           text=True, timeout=900)
        if r.returncode:
            sys.exit(f"onnx_node_tests: pip download {ONNX_WHEEL} failed: {r.stderr.strip()[-600:]}")
        wheels = glob.glob(os.path.join(cache, "onnx-1.22.0-*.whl"))
    tmp = tempfile.mkdtemp(dir=cache)
    prefix = "onnx/backend/test/data/node/"
    with zipfile.ZipFile(wheels[0]) as z:
        for n in z.namelist():
            if n.startswith(prefix) and not n.endswith("/"):
                dst = os.path.join(tmp, "node", n[len(prefix):])
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                with z.open(n) as f, open(dst, "wb") as g:
                    g.write(f.read())
    os.replace(os.path.join(tmp, "node"), node)  # atomic: a cut-off extraction is never reused
    os.rmdir(tmp)
    return node


def default_opset(m):
    v = None
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            v = o.version
        else:
            return None, f"domain {o.domain}"
    return v, None


def io_ok(m):
    for vi in list(m.graph.input) + list(m.graph.output):
        t = vi.type
        if not t.HasField("tensor_type"):
            return f"{t.WhichOneof('value')} input or output"
        if t.tensor_type.elem_type not in NP_OK:
            return f"element type {onnx.TensorProto.DataType.Name(t.tensor_type.elem_type)}"
    return None


def op_label(name, m):
    ops = [n.op_type for n in m.graph.node if n.op_type != "Constant"]
    base = name[len("test_"):]
    if "_expanded" in name or len(ops) != 1:
        return (ops[0] if len(set(ops)) == 1 else "(composite: " + base.split("_")[0] + ")") \
            if ops else "(constant)"
    return ops[0]


def select(node_dir, only):
    """[(name, model_path, label, note)], {reason: count}"""
    tests, excluded = [], {}
    for d in sorted(os.listdir(node_dir)):
        if only and only not in d:
            continue
        p = os.path.join(node_dir, d, "model.onnx")
        if not os.path.exists(p):
            continue
        m = onnx.load(p)
        v, why = default_opset(m)
        why = why or io_ok(m)
        if not why and v not in OPSETS:
            to = 13 if v is not None and v < 13 else 21
            try:  # older tests up to 13, newer ones down to 21 (where the converter can)
                m2 = onnx.version_converter.convert_version(m, to)
                onnx.checker.check_model(m2)
                m = m2
            except Exception:
                why = f"opset {v}: onnx.version_converter cannot bring it to {to}"
        if why:
            key = "not convertible to opsets 13-21" if why.startswith("opset") else why
            excluded[key] = excluded.get(key, 0) + 1
            continue
        tests.append((d, m, op_label(d, m)))
    return tests, excluded


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def bf16_to_f32(a):
    return (a.astype(np.uint32) << 16).view(np.float32)


# Tests whose expected data carries round-off of a single-precision computation
# beyond atol at exactly-zero elements, with the absolute tolerance that covers it
# (as onnxruntime's backend runner keeps per-test atol overrides). test_dft_inverse:
# the inverse DFT of a real ramp (0..90) has imaginary parts exactly 0; the expected
# data (a float32 FFT) holds up to 1.9e-7 there, while symc's f64 sum gives ~1e-15.
ATOL = {"test_dft_inverse": 1e-6, "test_dft_inverse_opset19": 1e-6}


def compare(got, want, atol=1e-7):
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "f" or want.dtype == np.float16:
        if got.dtype.kind not in "fV" and got.dtype != np.float16:
            return f"dtype {got.dtype}, expected {want.dtype}"
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan = np.isnan(w)
        if not np.array_equal(np.isnan(g), nan):
            return "NaN pattern differs"
        g, w = g[~nan], w[~nan]
        inf = np.isinf(w)
        if not np.array_equal(g[inf], w[inf]):
            return "Inf values differ"
        bad = np.abs(g[~inf] - w[~inf]) > atol + 1e-3 * np.abs(w[~inf])
        if bad.any():
            i = int(np.argmax(bad))
            return f"{int(bad.sum())} of {w.size} elements differ (e.g. {g[~inf][i]!r} vs {w[~inf][i]!r})"
        return None
    if got.dtype != want.dtype and not (got.dtype == np.uint8 and want.dtype == np.bool_):
        return f"dtype {got.dtype}, expected {want.dtype}"
    if not np.array_equal(got.astype(want.dtype), want):
        return f"{int(np.sum(got.astype(want.dtype) != want))} of {want.size} elements differ"
    return None


def is_crash(r, out):
    return (r.returncode < 0 or r.returncode > 1 or "AddressSanitizer" in out or "runtime error:" in out or
            "LeakSanitizer" in out or not out.strip())


BUILD_TIME = re.compile(r"the graph input '([^']+)', whose elements are only known at run time")  # needed at build time


def freeze(m, name, a):
    """m with graph input `name` turned into an initializer holding `a`."""
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    keep = [vi for vi in m2.graph.input if vi.name != name]
    del m2.graph.input[:]
    m2.graph.input.extend(keep)
    bf16 = any(vi.name == name and vi.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16 for vi in m.graph.input)
    if bf16:  # the feed holds bf16 bits as uint16 (see run_test): the initializer keeps the input's type
        t = onnx.TensorProto(name=name, data_type=onnx.TensorProto.BFLOAT16, dims=list(a.shape))
        t.raw_data = np.ascontiguousarray(a, dtype=np.uint16).tobytes()
        m2.graph.initializer.append(t)
    else:
        m2.graph.initializer.append(numpy_helper.from_array(a, name))
    return m2


def compile_model(symc, d, m, feeds, frozen):
    path = os.path.join(d, "model.onnx")
    onnx.save(m, path)
    shapes = []
    for n, (npy, a) in feeds.items():
        if n not in frozen and a.ndim:
            shapes += ["--shapes", f"{n}:" + "x".join(str(s) for s in a.shape)]
    cmd = [symc, "compile", path, "-o", os.path.join(d, "e.symx"), "--no-gpu"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode == 1 and "needs a shape" in r.stderr + r.stdout and shapes:
        r = subprocess.run(cmd + shapes, capture_output=True, text=True, timeout=120)
    return r


def run_test(symc, work, name, m, node_dir):
    """-> (status, detail)"""
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    ds = os.path.join(node_dir, name, "test_data_set_0")
    inits = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    feeds = {}  # input name -> (npy path, array)
    for k, vi in enumerate(ins):
        f = os.path.join(ds, f"input_{k}.pb")
        if not os.path.exists(f):  # an optional input left out
            continue
        a = read_pb(f)
        if vi.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16 and a.dtype != np.uint16:
            a = a.view(np.uint16) if a.dtype.itemsize == 2 else a
        npy = os.path.join(d, f"in{k}.npy")
        np.save(npy, a)
        feeds[vi.name] = (npy, a)
    # An input symc needs at build time (Reshape's shape, a Reduce's axes)
    # is refused as "the graph input 'X', whose elements are only known at run
    # time"; the test is then compiled again with X an initializer holding the
    # test's value (what onnx-mlir's backend tests call CONSTANT_INPUT): the op
    # is checked at that value against the same expected outputs.
    frozen = set()
    try:
        while True:
            r = compile_model(symc, d, m, feeds, frozen)
            hit = BUILD_TIME.search(r.stdout + r.stderr) if r.returncode == 1 else None
            if not hit or hit.group(1) not in feeds or hit.group(1) in frozen:
                break
            frozen.add(hit.group(1))
            m = freeze(m, hit.group(1), feeds[hit.group(1)][1])
    except subprocess.TimeoutExpired:
        return "CRASH", "compile timed out (120 s)"
    args = []
    for n, (npy, a) in feeds.items():
        if n not in frozen:
            args += ["--input", f"{n}={npy}"]
    out = r.stdout + r.stderr
    if r.returncode:
        return ("CRASH", f"compile exit {r.returncode}: {out.strip()[-300:]}") if is_crash(r, out) else \
            ("refused", "compile: " + out.strip().splitlines()[-1][:300])
    outs = []
    for k, vi in enumerate(m.graph.output):
        o = os.path.join(d, f"out{k}.npy")
        outs.append((vi, o, os.path.join(ds, f"output_{k}.pb")))
        args += ["--output", f"{vi.name}={o}"]
    try:
        r = subprocess.run([symc, "run", os.path.join(d, "e.symx"), "--backend", "ref"] + args, capture_output=True,
                           text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "CRASH", "run timed out (120 s)"
    out = r.stdout + r.stderr
    if r.returncode:
        return ("CRASH", f"run exit {r.returncode}: {out.strip()[-300:]}") if is_crash(r, out) else \
            ("refused", "run: " + out.strip().splitlines()[-1][:300])
    for vi, o, want_pb in outs:
        if not os.path.exists(want_pb):
            continue
        want = read_pb(want_pb)
        if not os.path.exists(o):
            return "WRONG", f"output '{vi.name}' was not written"
        got = np.load(o)
        if vi.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16:
            # symc run writes bf16 widened (exactly) to f32, or as raw 2-byte values
            if got.dtype.itemsize == 2:
                got = bf16_to_f32(got.view(np.uint16))
            want = want.astype(np.float32)
        why = compare(got, want, ATOL.get(name, 1e-7))
        if why:
            return "WRONG", f"output '{vi.name}': {why}"
    return "pass", ""


def table(results, excluded, n_scope):
    by_op = {}
    for name, label, st, _ in results:
        row = by_op.setdefault(label, {"tests": 0, "pass": 0, "refused": 0, "WRONG": 0, "CRASH": 0, "why": {}})
        row["tests"] += 1
        row[st] += 1
    counts = {k: sum(1 for r in results if r[2] == k) for k in ("pass", "refused", "WRONG", "CRASH")}
    lines = ["# ONNX operator support (backend node tests, reference backend)", "",
             "Generated by `python3 tests/conformance/onnx_node_tests.py build/bin/symc --table docs/ONNX_SUPPORT.md`"
             " (the ctest `conformance.onnx_node`) from the ONNX backend node tests of onnx 1.22.0, opsets 13-21 "
             "(older tests converted up to 13, newer ones down to 21). A refused test is one symc declines with an error naming "
             "the node and what it does not support; WRONG and CRASH must stay at zero.", "",
             f"In scope: {n_scope} tests: **{counts['pass']} pass**, {counts['refused']} refused, "
             f"{counts['WRONG']} wrong, {counts['CRASH']} crash.", "",
             "Out of scope: " + ", ".join(f"{k} ({v})" for k, v in sorted(excluded.items())) + ".", "",
             "| op | tests | pass | refused | wrong | crash |", "|---|---|---|---|---|---|"]
    for op in sorted(by_op, key=lambda o: o.lower()):
        r = by_op[op]
        lines.append(f"| {op} | {r['tests']} | {r['pass']} | {r['refused']} | {r['WRONG']} | {r['CRASH']} |")
    return "\n".join(lines) + "\n", counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("symc")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--table", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--no-floor", action="store_true")
    a = ap.parse_args()
    t0 = time.time()
    node_dir = data_dir()
    tests, excluded = select(node_dir, a.only)
    n_scope = len(tests)
    tests = tests[::a.every]
    log(f"onnx_node_tests: {n_scope} in scope, running {len(tests)} ({a.jobs} jobs); out of scope: "
        + ", ".join(f"{k} ({v})" for k, v in sorted(excluded.items())))
    results = []
    with tempfile.TemporaryDirectory(prefix="symc-node-") as work:
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            futs = {ex.submit(run_test, a.symc, work, n, m, node_dir): (n, lab) for n, m, lab in tests}
            for f in concurrent.futures.as_completed(futs):
                n, lab = futs[f]
                try:
                    st, why = f.result()
                except Exception as e:  # the harness itself: counted as a crash, never dropped
                    st, why = "CRASH", f"harness: {type(e).__name__}: {e}"
                results.append((n, lab, st, why))
    results.sort()
    md, counts = table(results, excluded, len(results))
    if a.table:
        open(a.table, "w").write(md)
    for n, lab, st, why in results:
        if st in ("WRONG", "CRASH"):
            print(f"{st}: {n} ({lab}): {why}")
    print(f"onnx_node_tests: {len(results)} run: {counts['pass']} pass, {counts['refused']} refused, "
          f"{counts['WRONG']} wrong, {counts['CRASH']} crash ({time.time() - t0:.0f} s)")
    bad = counts["WRONG"] + counts["CRASH"]
    if not a.no_floor and a.every == 1 and not a.only and counts["pass"] < FLOOR:
        print(f"FAIL: {counts['pass']} pass, below the floor of {FLOOR}")
        bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
