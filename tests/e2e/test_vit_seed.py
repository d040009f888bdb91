"""End to end on the bundled example (docs/BENCHMARKS-SUITE.md seed S1, B in [1, 32], opt 4).

vit_seed -> .symir -> `symc compile` -> one engine, run by `symc run` on the
CPU reference backend at min, opt, opt+1, a prime and max, each against an
independent numpy oracle. The oracle reads the model's weights through the
Python code that `flatc --python` generates from ir/symir.fbs, not through
symc. Out-of-range sizes must be refused with the documented message.

usage: test_vit_seed.py SYMC VIT_SEED SCHEMA TMPDIR
"""
import os
import subprocess
import sys

import numpy as np

symc, vit_seed, schema, tmp = sys.argv[1:5]
os.makedirs(tmp, exist_ok=True)
failures = 0
checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


model, engine = os.path.join(tmp, "vit.symir"), os.path.join(tmp, "vit.symx")
r = run(vit_seed, model)
check(r.returncode == 0, "vit_seed: " + r.stderr)
r = run(symc, "compile", model, "-o", engine)
check(r.returncode == 0, "compile: " + r.stderr)

# weights through an independent reader
subprocess.run(["flatc", "--python", "-o", os.path.join(tmp, "py"), schema], check=True)
sys.path.insert(0, os.path.join(tmp, "py"))
from symc.fb.Module import Module  # noqa: E402  (generated above)

with open(model, "rb") as f:
    buf = f.read()
mod = Module.GetRootAs(buf, 0)
pool = [mod.Exprs(i) for i in range(mod.ExprsLength())]


def constant(name):
    for i in range(mod.TensorsLength()):
        t = mod.Tensors(i)
        if t.Name().decode() == name:
            dims = [pool[t.Dims(d)].Value() for d in range(t.DimsLength())]
            data = mod.Constants(t.Constant()).DataAsNumpy()
            return np.frombuffer(data.tobytes(), dtype=np.float32).reshape(dims)
    raise KeyError(name)


cls, w, b = constant("cls_token"), constant("qkv.weight"), constant("qkv.bias")
check(cls.shape == (1, 1, 768) and w.shape == (768, 2304) and b.shape == (2304,), "weight shapes")

rng = np.random.default_rng(7)
for B in (1, 4, 5, 13, 32):  # min, opt, opt+1, prime, max
    x = rng.standard_normal((B, 196, 768), dtype=np.float32)
    xin, hout = os.path.join(tmp, f"x{B}.npy"), os.path.join(tmp, f"h{B}.npy")
    np.save(xin, x)
    r = run(symc, "run", engine, "--input", f"x={xin}", "--output", f"heads={hout}")
    check(r.returncode == 0, f"run B={B}: {r.stderr}")
    if r.returncode != 0:
        continue
    got = np.load(hout)
    tokens = np.concatenate([np.broadcast_to(cls, (B, 1, 768)), x], axis=1).astype(np.float64)
    want = (tokens @ w.astype(np.float64) + b).reshape(B, 197, 3, 12, 64)
    check(got.shape == want.shape, f"B={B}: shape {got.shape}, want {want.shape}")
    if got.shape == want.shape:
        rel = np.max(np.abs(got - want)) / np.max(np.abs(want))
        check(rel < 1e-4, f"B={B}: relative error {rel:.3g}")
        print(f"B={B}: {got.shape} relative error {rel:.2e}")

for B, why in ((0, "must be in [1, 32]"), (33, "must be in [1, 32]")):
    r = run(symc, "run", engine, "--shapes", f"x:{B}x196x768")
    check(r.returncode == 1 and f"input 'x' dim 0 = {B}: symbol B {why}" in r.stderr, f"B={B} refused: {r.stderr}")
r = run(symc, "run", engine, "--shapes", "x:4x197x768")
check(r.returncode == 1 and "input 'x' dim 1 = 197 but the model needs 196" in r.stderr, "dim 1 refused: " + r.stderr)

print(f"test_vit_seed: {checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
