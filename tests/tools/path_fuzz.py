#!/usr/bin/env python3
"""The cache and path fuzzer (issue 30): random hostile file-system states around what symc reads and
writes, each followed by the command that meets it, with the same invariants every time.

Each case draws, from one seeded generator (the seed is printed; --seed replays it), a scenario:
  cache     the NVRTC build cache (SYMC_CACHE_DIR) with things planted at entry paths, the kind
            folder or the cache root: FIFOs, dangling, looping and outward symlinks, folders, empty,
            truncated, bit-flipped, swapped, padded and sparse 3 GiB entries; then `symc compile`;
  writers   2-4 compiles at once into one cache (some of it planted), two models;
  output    `compile -o`, `run --output` and `bench --json/--csv` at a path holding nothing, a file,
            a symlink (to a file, dangling, to /dev/null), a folder, a FIFO with a reader, with
            symlinks planted at temporary-looking names beside it;
  external  an ONNX file's external data replaced by a FIFO, a folder, a symlink out of the
            model's folder, /dev/zero, a loop, a short or long file, or its location / offset /
            length rewritten (absolute, `..`, past the end, negative).
Invariants, every case:
  - an answer within the time limit (a hang is a finding), no signal, exit 0, 1 or 2;
  - a refusal says why on one line starting "symc:";
  - nothing outside where the command was pointed changes: canary files (outside the cache, beside
    the outputs, behind planted symlinks) keep their bytes, and no temporary is left behind;
  - the build cache never fails a build nor changes its result: the engine is byte-identical to a
    clean build's, and a second build from the same cache is too;
  - an output written is whole and right (the engine runs and matches; .npy and JSON parse);
  - external data is used only when it is exactly the weights, else refused.
usage: path_fuzz.py SYMC TMPDIR [--seed N] [--budget-s S] [--cases N]
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto as T
from onnx import helper as h

symc, tmp = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
args = sys.argv[3:]
opt = {a.lstrip("-"): v for a, v in zip(args[::2], args[1::2])}
seed = int(opt.get("seed", time.time_ns() % 2**31))
budget = float(opt.get("budget-s", 60))
max_cases = int(opt.get("cases", 100000))
print(f"path_fuzz: seed {seed} (replay with --seed {seed}), budget {budget:.0f} s", flush=True)
rng = np.random.default_rng(seed)
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(tmp)
findings = []
SHAPES = ["--shapes", "x:1x5,2x5,4x5"]


def run(cmd, env=None, timeout=60):
    """(rc, output); a hang is rc None"""
    try:
        p = subprocess.run([symc, *cmd], capture_output=True, text=True, env=env, timeout=timeout, cwd=tmp)
    except subprocess.TimeoutExpired:
        return None, f"no answer in {timeout} s"
    return p.returncode, p.stdout + p.stderr


def finding(case, what):
    findings.append(f"case {case}: {what}")
    print(f"FINDING case {case}: {what}", file=sys.stderr, flush=True)


def sane(case, rc, out, what):
    """the answer invariants; True when the command succeeded"""
    if rc is None:
        finding(case, f"{what}: hangs ({out})")
    elif rc < 0:
        finding(case, f"{what}: killed by signal {-rc}: {out[-400:]}")
    elif rc not in (0, 1, 2):
        finding(case, f"{what}: exit {rc}: {out[-400:]}")
    elif rc and not any(line.startswith("symc:") for line in out.splitlines()):
        finding(case, f"{what}: exit {rc} without a 'symc:' line: {out[-400:]}")
    return rc == 0


def digest(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


def model(name, nodes, inits=()):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info("x", T.FLOAT, ["B", 5])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


base = os.path.join(tmp, "base")
os.makedirs(base)
models = {"relu": os.path.join(base, "relu.onnx"), "mix": os.path.join(base, "mix.onnx")}
onnx.save(model("relu", [h.make_node("Relu", ["x"], ["r"]), h.make_node("Sigmoid", ["r"], ["y"])]), models["relu"])
onnx.save(model("mix", [h.make_node("Tanh", ["x"], ["t"]), h.make_node("Mul", ["t", "x"], ["y"])]), models["mix"])
x = rng.standard_normal((3, 5)).astype(np.float32)
np.save(os.path.join(base, "x.npy"), x)
want = {"relu": 1 / (1 + np.exp(-np.maximum(x, 0))), "mix": np.tanh(x) * x}

# clean builds: the engines every cached build must equal, and the cache entries to plant around
clean_cache = os.path.join(base, "cache")
ref = {}
for name, f in models.items():
    eng = os.path.join(base, name + ".symx")
    rc, out = run(["compile", f, "-o", eng, "-q", *SHAPES], env=dict(os.environ, SYMC_CACHE_DIR=clean_cache))
    if rc != 0:
        print(f"FAIL: the clean build of {name}: {out}")
        sys.exit(1)
    ref[name] = open(eng, "rb").read()
entries = sorted(os.path.relpath(os.path.join(d, f), clean_cache) for d, _, fs in os.walk(clean_cache) for f in fs)
if len(entries) < 2:
    print(f"FAIL: the clean builds left {len(entries)} cache entries; the fuzzer needs the GPU build's NVRTC entries")
    sys.exit(1)
# the weights model for external data
w = rng.standard_normal((5,)).astype(np.float32)


def canary(d, name="canary.bin"):
    """a file whose bytes must never change; (path, digest)"""
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(rng.bytes(int(rng.integers(1, 200))))
    return p, digest(p)


def canaries_intact(case, cans, what):
    for p, d in cans:
        if not os.path.isfile(p) or digest(p) != d:
            finding(case, f"{what}: {p} changed or went (it is outside where the command was pointed)")


def plant(p, kind, outside, data=None):
    """puts `kind` at path p (whatever was there goes); `outside` is a canary file beyond the folder"""
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        os.remove(p)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dir":
        os.makedirs(p)
    elif kind == "dangling":
        os.symlink(p + ".nowhere", p)
    elif kind == "loop":
        os.symlink(os.path.basename(p), p)
    elif kind == "outward":
        os.symlink(outside, p)
    elif kind == "devnull":
        os.symlink("/dev/null", p)
    elif kind == "devzero":
        os.symlink("/dev/zero", p)
    elif kind == "empty":
        open(p, "wb").close()
    elif kind == "sparse":
        with open(p, "wb") as f:
            f.truncate(3 << 30)
    else:
        with open(p, "wb") as f:
            f.write(data if data is not None else rng.bytes(int(rng.integers(1, 4096))))


def mutate_entry(raw, others):
    """a damaged copy of a valid cache entry"""
    how = rng.choice(["truncate", "flip", "pad", "swap", "header"])
    b = bytearray(raw)
    if how == "truncate":
        return how, bytes(b[:int(rng.integers(0, len(b)))])
    if how == "flip":
        for _ in range(int(rng.integers(1, 8))):
            i = int(rng.integers(0, len(b)))
            b[i] ^= 1 << int(rng.integers(0, 8))
        return how, bytes(b)
    if how == "pad":
        return how, bytes(b) + rng.bytes(int(rng.integers(1, 64)))
    if how == "swap":
        return how, others
    b[:8] = rng.bytes(8)
    return how, bytes(b)


def build_twice(case, env, what, cans):
    """a build from the cache, then another: both byte-identical to the clean build"""
    for n in range(2):
        name = "relu" if rng.random() < 0.7 else "mix"
        eng = os.path.join(tmp, f"c{case}_{n}.symx")
        rc, out = run(["compile", models[name], "-o", eng, "-q", *SHAPES], env=env)
        if sane(case, rc, out, f"{what}, build {n + 1}"):
            if open(eng, "rb").read() != ref[name]:
                finding(case, f"{what}, build {n + 1}: the engine differs from the clean build's")
        elif rc is not None:
            finding(case, f"{what}, build {n + 1}: the build cache failed the build (exit {rc}): {out[-300:]}")
        if os.path.exists(eng):
            os.remove(eng)
    canaries_intact(case, cans, what)


def case_cache(case):
    d = os.path.join(tmp, f"cache{case}")
    shutil.copytree(clean_cache, d, symlinks=True) if rng.random() < 0.8 else os.makedirs(d)
    outside, dg = canary(os.path.join(tmp, f"out{case}"))
    env = dict(os.environ, SYMC_CACHE_DIR=d)
    where = rng.choice(["entry", "entry", "entry", "kind", "root"])
    kinds = ["fifo", "dir", "dangling", "loop", "outward", "empty", "garbage", "damaged", "sparse", "devnull"]
    kind = str(rng.choice(kinds))
    if where == "entry":
        for e in rng.choice(entries, size=int(rng.integers(1, len(entries) + 1)), replace=False):
            p = os.path.join(d, e)
            if kind == "damaged":
                how, data = mutate_entry(open(os.path.join(clean_cache, e), "rb").read(),
                                         open(os.path.join(clean_cache, str(rng.choice(entries))), "rb").read())
                plant(p, "bytes", outside, data)
                kind = f"damaged ({how})"
            else:
                plant(p, kind, outside)
    elif where == "kind":
        kind = str(rng.choice(["fifo", "dangling", "loop", "empty", "garbage", "devnull"]))
        plant(os.path.join(d, os.path.dirname(entries[0])), kind, outside)
    else:
        kind = str(rng.choice(["fifo", "dangling", "loop", "empty", "garbage", "devnull", "long", "off", "blank"]))
        if kind == "long":
            env["SYMC_CACHE_DIR"] = os.path.join(d, *(["x" * 200] * 30))
        elif kind in ("off", "blank"):
            env["SYMC_CACHE_DIR"] = "off" if kind == "off" else ""
        else:
            shutil.rmtree(d)
            plant(d, kind, outside)
    build_twice(case, env, f"cache: {kind} at the {where}", [(outside, dg)])
    if os.path.lexists(os.path.join(tmp, "off")):
        finding(case, "SYMC_CACHE_DIR=off created a folder named 'off' where symc ran")


def case_writers(case):
    d = os.path.join(tmp, f"cache{case}")
    if rng.random() < 0.5:
        shutil.copytree(clean_cache, d)
        for e in rng.choice(entries, size=int(rng.integers(1, len(entries) + 1)), replace=False):
            os.remove(os.path.join(d, e))  # some hits, some misses written by several at once
    env = dict(os.environ, SYMC_CACHE_DIR=d)
    n = int(rng.integers(2, 5))
    names = [str(rng.choice(list(models))) for _ in range(n)]
    procs = [subprocess.Popen([symc, "compile", models[m], "-o", os.path.join(tmp, f"w{case}_{i}.symx"), "-q", *SHAPES],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i, m in enumerate(names)]
    for i, (p, m) in enumerate(zip(procs, names)):
        try:
            out, _ = p.communicate(timeout=90)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            p.kill()
            rc, out = None, "no answer in 90 s"
        eng = os.path.join(tmp, f"w{case}_{i}.symx")
        if sane(case, rc, out, f"writers: {n} at once, #{i} ({m})") and open(eng, "rb").read() != ref[m]:
            finding(case, f"writers: {n} at once, #{i} ({m}): the engine differs from the clean build's")
    leftovers = [f for _, _, fs in os.walk(d) for f in fs if f.startswith(".tmp-")]
    if leftovers:
        finding(case, f"writers: temporaries left in the cache: {leftovers}")
    # every entry written is whole: the next build of each model takes all its modules from the cache
    for m in set(names):
        rc, out = run(["compile", models[m], "-o", os.path.join(tmp, f"w{case}_again.symx"), "--verbose", *SHAPES],
                      env=env)
        if sane(case, rc, out, f"writers: the build after, {m}") and "(0 cached)" in out.split("modules in")[-1]:
            finding(case, f"writers: after {n} writers the cache had no entry for {m}: {out[-300:]}")


def case_output(case):
    d = os.path.join(tmp, f"o{case}")
    os.makedirs(d)
    can_out, dg_out = canary(os.path.join(tmp, f"oc{case}"))  # outside the output's folder
    cmd_kind = str(rng.choice(["compile", "run", "bench-json", "bench-csv"]))
    name = {"compile": "e.symx", "run": "y.npy", "bench-json": "b.json", "bench-csv": "b.csv"}[cmd_kind]
    target = os.path.join(d, name)
    link_target = os.path.join(d, "real_" + name)
    kind = str(rng.choice(["none", "file", "link", "dangling", "devnull", "dir", "fifo"]))
    cans = [(can_out, dg_out)]
    if kind == "file":
        plant(target, "garbage", None)
    elif kind == "link":
        plant(link_target, "garbage", None)
        os.symlink(link_target, target)
    elif kind == "dangling":
        os.symlink(link_target, target)  # the user's link: writing through it creates its target
    elif kind in ("devnull", "dir", "fifo"):
        plant(target, kind, None)
    # symlinks where a predictable temporary would go, to the outside canary
    for t in (target + ".tmp", os.path.join(d, f".{name}.tmp"), os.path.join(d, f".{name}.1.tmp")):
        if rng.random() < 0.5:
            os.symlink(can_out, t)
    got = []
    reader = None
    if kind == "fifo":
        reader = threading.Thread(target=lambda: got.append(open(target, "rb").read()), daemon=True)
        reader.start()
    eng = os.path.join(base, "relu.symx")
    if cmd_kind == "compile":
        cmd = ["compile", models["relu"], "-o", target, "--no-gpu", "-q", *SHAPES]
    elif cmd_kind == "run":
        cmd = ["run", eng, "--backend", "ref", "--input", f"x={os.path.join(base, 'x.npy')}", "--output", f"y={target}"]
    else:
        flag = "--json" if cmd_kind == "bench-json" else "--csv"
        cmd = ["bench", eng, "--backend", "ref", "--iters", "1", "--warmup", "0", "--shapes", "x:2x5", "--quiet",
               flag, target]
    rc, out = run(cmd, timeout=60)
    if reader:
        reader.join(timeout=30)
        if reader.is_alive():  # the command never opened the FIFO: unblock the reader
            with open(target, "wb"):
                pass
    what = f"output: {cmd_kind} to a path holding {kind}"
    ok = sane(case, rc, out, what)
    canaries_intact(case, cans, what)
    if kind == "dir" and ok:
        finding(case, f"{what}: exit 0 writing to a folder")
    if kind in ("none", "file", "link", "dangling") and not ok and rc is not None:
        finding(case, f"{what}: refused (exit {rc}): {out[-300:]}")
    if ok and kind in ("none", "file", "link", "dangling"):
        real = os.path.realpath(target)
        if kind in ("link", "dangling") and not os.path.islink(target):
            finding(case, f"{what}: the symlink was replaced instead of written through")
        try:
            if cmd_kind == "compile":
                r2, o2 = run(["run", real, "--backend", "ref", "--input", f"x={os.path.join(base, 'x.npy')}",
                              "--output", f"y={os.path.join(d, 'check.npy')}"])
                if r2 != 0 or not np.allclose(np.load(os.path.join(d, "check.npy")), want["relu"], rtol=1e-5):
                    finding(case, f"{what}: the engine written does not run right: {o2[-300:]}")
            elif cmd_kind == "run":
                if not np.allclose(np.load(real), want["relu"], rtol=1e-5):
                    finding(case, f"{what}: the .npy written is wrong")
            elif cmd_kind == "bench-json":
                json.load(open(real))
            elif "," not in open(real).read():
                finding(case, f"{what}: the CSV written is not CSV")
        except Exception as e:  # noqa: BLE001 - any failure to read it back is the finding
            finding(case, f"{what}: the output does not read back: {e!r}")
    if ok and kind == "fifo" and (not got or not got[0]):
        finding(case, f"{what}: nothing came through the FIFO")
    if kind == "fifo" and not stat.S_ISFIFO(os.lstat(target).st_mode):
        finding(case, f"{what}: the FIFO was replaced")
    if kind == "devnull" and not (os.path.islink(target) and stat.S_ISCHR(os.stat("/dev/null").st_mode)):
        finding(case, f"{what}: the symlink to /dev/null was replaced, or /dev/null was")
    left = [f for f in os.listdir(d) if f.endswith(".tmp") and not os.path.islink(os.path.join(d, f))]
    if left:
        finding(case, f"{what}: temporaries left beside the output: {left}")


def case_external(case):
    d = os.path.join(tmp, f"x{case}")
    os.makedirs(d)
    outside, dg = canary(os.path.join(tmp, f"xc{case}"), "w.bin")
    m = model("ext", [h.make_node("Add", ["x", "w"], ["y"])], [onnx.numpy_helper.from_array(w, "w")])
    onnx.save_model(m, os.path.join(d, "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="w.bin", size_threshold=0)
    data = os.path.join(d, "w.bin")
    exact = True  # the data is the weights, byte for byte (None: either a refusal or the right result)
    kind = str(rng.choice(["fifo", "dir", "outward", "devzero", "loop", "dangling", "short", "long", "inside",
                           "location", "offset"]))
    if kind in ("fifo", "dir", "outward", "devzero", "loop", "dangling"):
        plant(data, kind, outside)
        exact = False
    elif kind == "short":
        plant(data, "bytes", None, w.tobytes()[:int(rng.integers(0, 20))])
        exact = False
    elif kind == "long":
        plant(data, "bytes", None, w.tobytes() + rng.bytes(int(rng.integers(1, 64))))
        exact = None  # no length: onnxruntime takes the tensor's bytes from the start, so may symc
    elif kind == "inside":
        os.makedirs(os.path.join(d, "sub"))
        os.replace(data, os.path.join(d, "sub", "real.bin"))
        os.symlink(os.path.join("sub", "real.bin"), data)
    else:
        mp = onnx.load(os.path.join(d, "m.onnx"), load_external_data=False)
        t = mp.graph.initializer[0]
        fields = {e.key: e for e in t.external_data}
        if kind == "location":
            fields["location"].value = str(rng.choice(["../w.bin", "/etc/hostname", "a/../../w.bin", "", ".",
                                                       "sub/../w.bin", "w.bin/", "//w.bin"]))
            exact = None if fields["location"].value == "sub/../w.bin" else False  # `..` inside: may be refused
            os.makedirs(os.path.join(d, "sub"))
        else:
            for key, val in (("offset", int(rng.choice([-1, 4, 20, 1 << 40, (1 << 63) - 1]))),
                             ("length", int(rng.choice([-5, 0, 4, 19, 21, 1 << 62])))):
                if key == "offset" or rng.random() < 0.5:
                    if key in fields:
                        fields[key].value = str(val)
                    else:
                        t.external_data.add(key=key, value=str(val))
            exact = False
        onnx.save_model(mp, os.path.join(d, "m.onnx"))
    eng = os.path.join(d, "m.symx")
    rc, out = run(["compile", os.path.join(d, "m.onnx"), "-o", eng, "--no-gpu", "-q", "--shapes", "x:3x5"], timeout=60)
    what = f"external data: {kind}"
    ok = sane(case, rc, out, what)
    canaries_intact(case, [(outside, dg)], what)
    if ok and exact is not True:
        r2, o2 = run(["run", eng, "--backend", "ref", "--input", f"x={os.path.join(base, 'x.npy')}", "--output",
                      f"y={os.path.join(d, 'y.npy')}"])
        if r2 == 0 and not np.allclose(np.load(os.path.join(d, "y.npy")), x + w):
            finding(case, f"{what}: built from data that is not the weights, and the result is wrong")
        elif r2 == 0 and exact is False:
            finding(case, f"{what}: exit 0 although the data is not exactly the weights")
    if exact is True and not ok and rc is not None:
        finding(case, f"{what}: the exact weights were refused: {out[-300:]}")


scenarios = [case_cache, case_cache, case_writers, case_output, case_output, case_external]
t0 = time.time()
counts = {}
case = 0
while case < max_cases and time.time() - t0 < budget:
    s = scenarios[int(rng.integers(0, len(scenarios)))]
    s(case)
    counts[s.__name__] = counts.get(s.__name__, 0) + 1
    case += 1
    for name in os.listdir(tmp):  # keep the disk small: each case's folders go
        if name != "base" and not name.startswith(("oc", "xc", "out")):
            p = os.path.join(tmp, name)
            if os.path.isdir(p) and not os.path.islink(p):
                shutil.rmtree(p, ignore_errors=True)
            elif os.path.lexists(p):
                os.remove(p)
print(f"path_fuzz: {case} cases in {time.time() - t0:.0f} s ({', '.join(f'{k[5:]} {v}' for k, v in counts.items())}),"
      f" {len(findings)} findings", flush=True)
for f in findings:
    print("FINDING:", f)
sys.exit(1 if findings else 0)
