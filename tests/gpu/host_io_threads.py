#!/usr/bin/env python3
"""A real engine as the Triton backend's GPU instances run it: symc.runtime.Context on the CUDA backend in
host I/O mode (symrt_context_set_host_io: numpy in, numpy out), every batch size of its range, then several
contexts of one engine on one GPU from their own threads at once, at random batch sizes; every output row
against the same row of a batch-1 run in device mode (the rows are independent: they must agree to the
precision's rounding). Reports the first failure with its stage, batch and thread.

usage: host_io_threads.py ENGINE.symx LIBSYMC.so [--threads 2] [--iters 200] [--seed 1]
  the engine takes x [B, ...] float32 inputs (or input_ids/attention_mask int64 [B, S]); B from its range
"""
import argparse
import ctypes
import os
import sys
import threading
import time

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("engine")
ap.add_argument("lib")
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--iters", type=int, default=200)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--tol", type=float, default=2e-2)
a = ap.parse_args()
os.environ["SYMC_LIB"] = os.path.abspath(a.lib)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "frontend", "torch"))
import torch  # noqa: E402
from symc import _lib  # noqa: E402
from symc import runtime as rt  # noqa: E402

T0 = time.monotonic()


def log(*m):
    print(f"[{time.monotonic() - T0:6.1f}s]", *m, flush=True)


eng = rt.Engine(a.engine)
names = [n for n, _, _ in eng.inputs]
bsym = [s for s in eng.symbols if s[0] == "B"]
lo, hi = (bsym[0][1], bsym[0][3]) if bsym else (1, 1)
rng = np.random.default_rng(a.seed)


def sample_row(i):
    r = np.random.default_rng(1000 + i)
    row = []
    for n, dt, rank in eng.inputs:
        shape = [1] + [int(d) for d in rt_shape_tail[n]]
        if "mask" in n:
            m = np.ones(shape, np.int64)
            m[0, int(r.integers(1, shape[1] + 1)):] = 0
            row.append(m)
        elif dt == _lib.I64:
            row.append(r.integers(0, 1000, shape).astype(np.int64))
        else:
            row.append(r.uniform(-1, 1, shape).astype(np.float32))
    return row


# the fixed dims past the batch: from the engine's symbols at opt
opt = {s[0]: s[2] for s in eng.symbols}
rt_shape_tail = {}
L = eng._L
for k, (n, dt, rank) in enumerate(eng.inputs):
    dims = []
    for d in range(1, rank):
        buf = ctypes.create_string_buffer(128)
        err = _lib.Error()
        _lib.check(L.symrt_engine_input_dim(eng._h, k, d, buf, 128, ctypes.byref(err)), err)
        text = buf.value.decode()
        dims.append(int(text) if text.lstrip("-").isdigit() else opt[text.split()[0]])
    rt_shape_tail[n] = dims

POOL = 16
rows = [sample_row(i) for i in range(POOL)]
dev = rt.Context(eng, _lib.BACKEND_CUDA)
ref = []
for i in range(POOL):
    y = dev.run([torch.from_numpy(x).cuda() for x in rows[i]])[0]
    torch.cuda.synchronize()
    ref.append(y.float().cpu().numpy())
log(f"engine {a.engine}: inputs {names}, B in [{lo}, {hi}], batch-1 references of {POOL} rows")


def host_ctx():
    c = rt.Context(eng, _lib.BACKEND_CUDA)
    err = _lib.Error()
    _lib.check(L.symrt_context_set_host_io(c._h, 1, ctypes.byref(err)), err)
    return c


def check_batch(c, idx, where):
    xs = [np.ascontiguousarray(np.concatenate([rows[i][k] for i in idx])) for k in range(len(names))]
    y = c.run(xs)[0]
    y = np.asarray(y, dtype=np.float32)
    for j, i in enumerate(idx):
        e = float(np.linalg.norm(y[j] - ref[i][0]) / max(np.linalg.norm(ref[i][0]), 1e-30))
        if not e <= a.tol:
            raise RuntimeError(f"{where}: batch {len(idx)} row {j} (sample {i}): error {e:.3g}")


fails = []
c = host_ctx()
try:
    for b in range(lo, hi + 1):
        check_batch(c, [int(i) for i in rng.integers(0, POOL, b)], "one host I/O context, every batch")
    log(f"one host I/O context: batches {lo}..{hi} agree with the batch-1 rows")
except Exception as e:  # noqa: BLE001
    fails.append(str(e))
    log(f"FAIL {e}")


def worker(t, out):
    try:
        cc = host_ctx()
        r = np.random.default_rng(a.seed * 100 + t)
        for it in range(a.iters):
            b = int(r.integers(lo, hi + 1))
            check_batch(cc, [int(i) for i in r.integers(0, POOL, b)], f"thread {t} iteration {it}")
    except Exception as e:  # noqa: BLE001
        out.append(str(e))


if not fails:
    out = []
    ths = [threading.Thread(target=worker, args=(t, out)) for t in range(a.threads)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    fails += out
    log(f"{a.threads} host I/O contexts on their own threads, {a.iters} random batches each: "
        f"{'ok' if not out else 'FAIL ' + out[0]}")
print(f"host_io_threads: {len(fails)} failure(s)")
sys.exit(1 if fails else 0)
