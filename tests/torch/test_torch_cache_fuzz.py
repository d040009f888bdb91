"""The Python engine cache's fuzzer (issue 30): random hostile states of the cache folder, each
followed by symc.compile, with the same invariants every time.

A case draws from one seeded generator (printed; SYMC_FUZZ_SEED replays it) what to plant at a
model's cache entry (NAME_KEY.symx), its key file (.key), its sidecar (.json) and the temporary names
the cache would use next: FIFOs, folders, dangling, looping and outward symlinks, another model's
engine or key, truncated or bit-flipped engines, garbage or lying key files; plus files of the user's
own in the folder (some named like entries) and a random SYMC_CACHE_MAX_MB, so trimming runs. Then:
  - symc.compile answers within 60 s (a hang is a finding) and never fails for the cache's sake;
  - its results are the model's own (eager), never another model's;
  - nothing outside the cache changes (canaries behind planted symlinks keep their bytes), no file
    of the user's in the folder goes, and no temporary is left;
  - a second compile of the same model is right too.
Last, several processes compile two models into one cache at once, with trimming: every one right.
usage: test_torch_cache_fuzz.py [path/to/libsymc.so]   (SYMC_FUZZ_BUDGET_S, default 45)
"""
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_test_common as common  # noqa: E402

symc = common.setup()
import numpy as np  # noqa: E402
import torch  # noqa: E402
from symc import api  # noqa: E402

fail, log = common.fail, common.log
seed = int(os.environ.get("SYMC_FUZZ_SEED", time.time_ns() % 2**31))
budget = float(os.environ.get("SYMC_FUZZ_BUDGET_S", "45"))
log(f"cache fuzz: seed {seed} (replay with SYMC_FUZZ_SEED={seed}), budget {budget:.0f} s")
rng = np.random.default_rng(seed)
ROOT = tempfile.mkdtemp(prefix="symc_cache_fuzz_")
CACHE = os.path.join(ROOT, "cache")
OUTSIDE = os.path.join(ROOT, "outside")
os.makedirs(CACHE)
os.makedirs(OUTSIDE)
os.environ["SYMC_CACHE_DIR"] = CACHE
warnings.simplefilter("ignore")  # a damaged cache may warn; the checks are on results and files


class Lin(torch.nn.Module):
    def __init__(self, k, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.lin = torch.nn.Linear(4, k)

    def forward(self, x):
        return self.lin(x)


INP = [symc.Input(min_shape=(1, 4), opt_shape=(2, 4), max_shape=(8, 4))]
x = torch.randn(3, 4)
models = {"a": Lin(3, 1).eval(), "b": Lin(3, 2).eval(), "c": Lin(5, 3).eval()}
with torch.no_grad():
    want = {k: m(x) for k, m in models.items()}
findings = []


def finding(case, what):
    findings.append(f"case {case}: {what}")
    fail(f"case {case}: {what}")


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


signal.signal(signal.SIGALRM, _alarm)


def compile_checked(case, name, what):
    """compiles models[name] within 60 s; the compiled module, or None after a finding"""
    signal.alarm(60)
    try:
        c = symc.compile(models[name], INP, gpu=False)
        signal.alarm(0)
    except Hang:
        finding(case, f"{what}: symc.compile hangs")
        return None
    except Exception as e:  # noqa: BLE001 - the cache must never fail a build
        signal.alarm(0)
        finding(case, f"{what}: symc.compile raised {type(e).__name__}: {e}")
        return None
    got = c(x)
    if not torch.allclose(got, want[name], atol=1e-5):
        other = [k for k in models if k != name and want[k].shape == got.shape and torch.allclose(got, want[k],
                                                                                                   atol=1e-5)]
        finding(case, f"{what}: wrong results" + (f" (model {other[0]}'s)" if other else ""))
    return c


def digest(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


def clear(p):
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        os.remove(p)


# each model's entry path, from a clean compile
entry = {}
for k in models:
    c = symc.compile(models[k], INP, gpu=False)
    entry[k] = c.engine_path
    del c
if len(set(entry.values())) != 3 or not all(os.path.dirname(p) == CACHE for p in entry.values()):
    fail(f"the clean compiles did not fill the cache: {entry}")
    common.finish("cache fuzz")
pristine = {k: (open(p, "rb").read(), open(p + ".key", "rb").read()) for k, p in entry.items()}

t0 = time.time()
case = 0
while time.time() - t0 < budget:
    name = str(rng.choice(["a", "b"]))
    other = "b" if name == "a" else "a"
    p = entry[name]
    canary = os.path.join(OUTSIDE, f"canary{case}")
    with open(canary, "wb") as f:
        f.write(rng.bytes(int(rng.integers(1, 300))))
    cans = [(canary, digest(canary))]
    # the user's own files in the folder, one named like an entry (no key file: never the cache's)
    mine = [os.path.join(CACHE, "precious.symx"), os.path.join(CACHE, "mine_" + "0" * 32 + ".symx")]
    for q in mine:
        if not os.path.exists(q):
            with open(q, "wb") as f:
                f.write(rng.bytes(64))
    mine = [(q, digest(q)) for q in mine]
    plants = []
    for target in (p, p + ".key", p + ".json", "tmp"):
        if rng.random() >= 0.45:
            continue
        kind = str(rng.choice(["fifo", "dir", "dangling", "loop", "outward", "other", "truncated", "flipped",
                               "garbage", "lying", "empty"]))
        if target == "tmp":  # the temporary names the cache would use next (this process, next counters)
            nxt = int(re.search(r"\d+", repr(api._counter)).group())
            for n in range(nxt, nxt + 3):
                t = f"{p}.{os.getpid()}.{n}.tmp"
                clear(t)
                os.symlink(canary, t) if kind != "fifo" else os.mkfifo(t)
            plants.append(f"{kind} at the next temporaries")
            continue
        clear(target)
        src_engine, src_key = pristine[other]
        own_engine, own_key = pristine[name]
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "dir":
            os.makedirs(target)
        elif kind == "dangling":
            os.symlink(target + ".nowhere", target)
        elif kind == "loop":
            os.symlink(os.path.basename(target), target)
        elif kind == "outward":
            os.symlink(canary, target)
        else:
            if kind == "other":
                data = src_key if target.endswith(".key") else src_engine
            elif kind == "truncated":
                data = (own_key if target.endswith(".key") else own_engine)
                data = data[:int(rng.integers(0, len(data)))]
            elif kind == "flipped":
                b = bytearray(own_key if target.endswith(".key") else own_engine)
                i = int(rng.integers(0, len(b)))
                b[i] ^= 1 << int(rng.integers(0, 8))
                data = bytes(b)
            elif kind == "lying":  # a key file naming this key and the other model's engine's plain digest
                # (a forger who computes the cache's binding of key and engine is out of scope: api.py)
                data = own_key.split()[0] + b" " + own_key.split()[1] + b" " + \
                    hashlib.sha256(src_engine).hexdigest().encode() + b"\n"
            elif kind == "empty":
                data = b""
            else:
                data = rng.bytes(int(rng.integers(1, 200)))
            with open(target, "wb") as f:
                f.write(data)
        plants.append(f"{kind} at {os.path.basename(target)[-10:]}")
    limit = rng.choice([None, "0", "0.000001", "0.01", "1"])
    if limit is None:
        os.environ.pop("SYMC_CACHE_MAX_MB", None)
    else:
        os.environ["SYMC_CACHE_MAX_MB"] = str(limit)
    what = f"model {name}, {', '.join(plants) or 'nothing planted'}, SYMC_CACHE_MAX_MB={limit}"
    for n in range(2):
        c = compile_checked(case, name, f"{what} (compile {n + 1})")
        del c
    os.environ.pop("SYMC_CACHE_MAX_MB", None)
    for q, d in cans + mine:
        if not os.path.isfile(q) or digest(q) != d:
            finding(case, f"{what}: {os.path.basename(q)} changed or went")
    left = [f for f in os.listdir(CACHE) if f.endswith(".tmp") and os.path.isfile(os.path.join(CACHE, f))
            and not os.path.islink(os.path.join(CACHE, f))]
    if left:
        finding(case, f"{what}: temporaries left in the cache: {left}")
    for f in os.listdir(CACHE):  # the planted temporaries go before the next case
        if f.endswith(".tmp"):
            clear(os.path.join(CACHE, f))
    case += 1
log(f"cache fuzz: {case} cases in {time.time() - t0:.0f} s, {len(findings)} findings")

# several processes at once into one cache, trimming as they go
script = r"""
import os, sys, torch
sys.path.insert(0, %r)
import torch_test_common as common
symc = common.setup()
class Lin(torch.nn.Module):
    def __init__(self, k, seed):
        super().__init__(); torch.manual_seed(seed); self.lin = torch.nn.Linear(4, k)
    def forward(self, x): return self.lin(x)
INP = [symc.Input(min_shape=(1, 4), opt_shape=(2, 4), max_shape=(8, 4))]
x = torch.randn(3, 4)
for i in range(4):
    k, s = ((3, 1), (3, 2), (5, 3))[(i + int(sys.argv[2])) %% 3]
    m = Lin(k, s).eval()
    c = symc.compile(m, INP, gpu=False)
    with torch.no_grad():
        assert torch.allclose(c(x), m(x), atol=1e-5), "wrong results"
print("ok")
""" % os.path.dirname(os.path.abspath(__file__))
env = dict(os.environ, SYMC_CACHE_MAX_MB="0.01")
shutil.rmtree(CACHE)
os.makedirs(CACHE)
procs = [subprocess.Popen([sys.executable, "-c", script, os.environ["SYMC_LIB"], str(i)], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True) for i in range(3)]
for i, pr in enumerate(procs):
    try:
        out, _ = pr.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        pr.kill()
        out = "no answer in 300 s"
    if pr.returncode != 0 or "ok" not in out:
        finding("writers", f"process {i} of 3 compiling into one cache at once: exit {pr.returncode}: {out[-600:]}")
left = [f for f in os.listdir(CACHE) if f.endswith(".tmp")]
if left:
    finding("writers", f"temporaries left after the concurrent writers: {left}")
log("cache fuzz: 3 concurrent writers done")
shutil.rmtree(ROOT, ignore_errors=True)
common.finish("cache fuzz")
