"""The Python engine cache and saved sidecars against files that lie (issue 30 items 4, 5, 9, 10):
- model B's cached engine copied, or symlinked, onto model A's cache name: compiling A gives A's
  results (the entry is checked against its key file's key and the engine's SHA-256, and rebuilt),
  and a truncated entry is rebuilt too instead of failing forever;
- a saved module's .symx.json names its engine's digest: a sidecar of another engine (outputs
  swapped, or the .symx rewritten since) is refused with the way out, not used to relabel outputs;
- SYMC_CACHE_DIR=off means no cache (it once made a folder ./off); a read-only cache builds
  without caching, warning once; a cache path that is a file, SYMC_CACHE_MAX_MB=inf and a sidecar
  that is not JSON give SymcError with the fix, never a raw OverflowError, FileExistsError or
  JSONDecodeError;
- trimming removes only the cache's own entries: a user's precious.symx (and its .json) in the
  cache folder stays at any SYMC_CACHE_MAX_MB;
- a build switch in the environment (SYMC_ATTENTION=mma) keys its own cache entry, a runtime one does not;
- symc.Session: get_outputs() gives symbolic shapes as onnxruntime does (it gave [None, None]), and a
  provider symc does not run (TensorrtExecutionProvider) is refused by name.
Every output is checked against eager.

usage: test_torch_cache_hostile.py [path/to/libsymc.so]
"""
import hashlib
import json
import os
import shutil
import stat
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_test_common as common  # noqa: E402

symc = common.setup()
import torch  # noqa: E402

fail, log = common.fail, common.log
CACHE = tempfile.mkdtemp(prefix="symc_cache_hostile_")
os.environ["SYMC_CACHE_DIR"] = CACHE


class Lin(torch.nn.Module):
    def __init__(self, k, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.lin = torch.nn.Linear(4, k)

    def forward(self, x):
        return self.lin(x)


class Two(torch.nn.Module):
    def forward(self, x):
        return x * 2, x + 100


INP = [symc.Input(min_shape=(1, 4), opt_shape=(2, 4), max_shape=(8, 4))]
x = torch.randn(3, 4)


def check(what, ok, detail=""):
    if not ok:
        fail(f"{what}: {detail}")


def raises(what, fn, *wants):
    try:
        fn()
    except symc.SymcError as e:
        check(what, all(w in str(e) for w in wants), f"wanted {wants} in: {e}")
        return
    except Exception as e:  # noqa: BLE001
        fail(f"{what}: raised {type(e).__name__} instead of SymcError: {e}")
        return
    fail(f"{what}: nothing raised")


def entries():
    return sorted(f for f in os.listdir(CACHE) if f.endswith(".symx"))


# ---- item 4: the cache checks an entry's contents, not its name ----
A, B = Lin(3, 1).eval(), Lin(3, 2).eval()
ca = symc.compile(A, INP, gpu=False)
cb = symc.compile(B, INP, gpu=False)
with torch.no_grad():
    wa, wb = A(x), B(x)
check("A compiled", torch.allclose(ca(x), wa, atol=1e-5))
pa, pb = ca.engine_path, cb.engine_path
check("two entries", pa != pb and os.path.dirname(pa) == CACHE and os.path.isfile(pa + ".key"), entries())
del ca
for how in ("copy", "symlink", "copy with its key file", "copy with a key file naming A's key and B's digest",
            "copy with an older format's key file", "truncated"):
    os.remove(pa)
    if how == "symlink":
        os.symlink(pb, pa)
    elif how == "truncated":
        shutil.copyfile(pb, pa)
        with open(pa, "r+b") as f:
            f.truncate(os.path.getsize(pa) // 2)
    else:
        shutil.copyfile(pb, pa)
        if how == "copy with its key file":
            shutil.copyfile(pb + ".key", pa + ".key")
        elif how.startswith("copy with a"):  # B's engine beside a key file that names A's key
            fmt, key_a = open(pa + ".key").read().split()[:2]
            if "older" in how:
                fmt = "symc-cache-1"  # that format's digest: the engine's alone
            with open(pa + ".key", "w") as f:
                f.write(f"{fmt} {key_a} {hashlib.sha256(open(pb, 'rb').read()).hexdigest()}\n")
    c = symc.compile(A, INP, gpu=False)
    check(f"B's engine put on A's cache name ({how}): A's results", torch.allclose(c(x), wa, atol=1e-5),
          "B's outputs came back" if torch.allclose(c(x), wb, atol=1e-5) else "")
    check(f"({how}) the entry rebuilt in place", c.engine_path == pa and not os.path.islink(pa), c.engine_path)
    del c

# ---- a build switch in the environment (SYMC_ATTENTION=mma chooses a kernel) is part of the key: the cache
# never hands back an engine built under another; a runtime switch (SYMC_CUDA_GRAPHS) is not ----
os.environ["SYMC_ATTENTION"] = "mma"
c = symc.compile(A, INP, gpu=False)
check("SYMC_ATTENTION=mma: its own entry", c.engine_path != pa and os.path.dirname(c.engine_path) == CACHE,
      c.engine_path)
check("SYMC_ATTENTION=mma: A's results", torch.allclose(c(x), wa, atol=1e-5))
del c, os.environ["SYMC_ATTENTION"]
os.environ["SYMC_CUDA_GRAPHS"] = "0"
c = symc.compile(A, INP, gpu=False)
check("SYMC_CUDA_GRAPHS=0: the same entry", c.engine_path == pa, c.engine_path)
del c, os.environ["SYMC_CUDA_GRAPHS"]

# ---- item 5: a sidecar is bound to its engine ----
t = Two().eval()
ct = symc.compile(t, INP, gpu=False)
d = tempfile.mkdtemp(prefix="symc_side_")
p2 = ct.save(os.path.join(d, "two.symx"))
ps = ct.save(os.path.join(d, "sess.symx"))  # for the Session checks, after the cache is trimmed
lo = symc.load(p2)
got = lo(x)
check("load with its sidecar", isinstance(got, tuple) and torch.equal(got[0], x * 2) and torch.equal(got[1], x + 100))
meta = json.load(open(p2 + ".json"))
check("the sidecar names its engine's digest", len(meta.get("engine_sha256", "")) == 64, meta)
# the .symx rewritten (another model's engine under the same name) keeps the old sidecar: refused
shutil.copyfile(pb, p2)
raises("a sidecar of another engine", lambda: symc.load(p2), "describes another engine", "Save the module again")
# a sidecar edited to swap the outputs' order is refused as well (it no longer names this engine... or is
# bound but edited: the digest is of the engine, so an edited out_spec with the right digest is the
# user's own choice); an old sidecar without a digest is refused with the way out
p3 = ct.save(os.path.join(d, "three.symx"))
m3 = json.load(open(p3 + ".json"))
del m3["engine_sha256"]
json.dump(m3, open(p3 + ".json", "w"))
raises("a sidecar without the engine's digest", lambda: symc.load(p3), "describes another engine",
       "remove")
with open(p3 + ".json", "w") as f:
    f.write("{not json")
raises("a sidecar that is not JSON", lambda: symc.load(p3), "cannot be read", "remove it")

# ---- item 10: trimming removes only the cache's own entries ----
precious = os.path.join(CACHE, "precious.symx")
shutil.copyfile(pb, precious)
with open(precious + ".json", "w") as f:
    f.write("{}")
os.environ["SYMC_CACHE_MAX_MB"] = "0.000001"
try:
    c_last = symc.compile(Lin(5, 3).eval(), INP, gpu=False)
finally:
    del os.environ["SYMC_CACHE_MAX_MB"]
check("trim keeps the user's precious.symx and its .json", os.path.exists(precious) and
      os.path.exists(precious + ".json"), entries())
own = [f for f in entries() if f != "precious.symx"]
check("trim leaves only the newest of the cache's own", own == [os.path.basename(c_last.engine_path)], own)

# ---- item 9 and the cache's other failures ----
here = os.getcwd()
work = tempfile.mkdtemp(prefix="symc_off_")
os.chdir(work)
os.environ["SYMC_CACHE_DIR"] = "off"
try:
    c_off = symc.compile(Lin(3, 4).eval(), INP, gpu=False)
    check("SYMC_CACHE_DIR=off: no folder 'off'", not os.path.exists(os.path.join(work, "off")), os.listdir(work))
    check("SYMC_CACHE_DIR=off: the engine runs", c_off(x).shape == (3, 3))
finally:
    os.chdir(here)
ro = tempfile.mkdtemp(prefix="symc_ro_")
os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
writable = os.access(ro, os.W_OK)  # root writes anywhere: the read-only case then cannot be made
os.environ["SYMC_CACHE_DIR"] = ro
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        c_ro = symc.compile(Lin(3, 5).eval(), INP, gpu=False)
        check("a read-only cache: the engine runs", c_ro(x).shape == (3, 3))
        symc.compile(Lin(3, 6).eval(), INP, gpu=False)
    except Exception as e:  # noqa: BLE001
        fail(f"a read-only cache: {type(e).__name__}: {e}")
said = [w for w in caught if "cannot be written" in str(w.message)]
check("a read-only cache is said once", writable or len(said) == 1, [str(w.message) for w in caught])
os.chmod(ro, stat.S_IRWXU)
afile = os.path.join(tempfile.mkdtemp(prefix="symc_file_"), "cache")
open(afile, "w").close()
os.environ["SYMC_CACHE_DIR"] = afile
raises("a cache path that is a file", lambda: symc.compile(Lin(3, 7).eval(), INP, gpu=False), "is a file",
       "SYMC_CACHE_DIR")
os.environ["SYMC_CACHE_DIR"] = CACHE
for bad in ("inf", "-1", "lots"):
    os.environ["SYMC_CACHE_MAX_MB"] = bad
    raises(f"SYMC_CACHE_MAX_MB={bad}", lambda: symc.compile(Lin(3, 8).eval(), INP, gpu=False), "SYMC_CACHE_MAX_MB",
           "number of megabytes")
del os.environ["SYMC_CACHE_MAX_MB"]
# ---- symc.Session as onnxruntime users call it (issue 30, first-hour friction) ----
sess = symc.Session(ps)
outs = sess.get_outputs()
check("Session.get_outputs gives symbolic shapes, as onnxruntime", len(outs) == 2 and
      all(isinstance(o.shape[0], str) and o.shape[1] == 4 for o in outs), [o.shape for o in outs])
check("input and output name the same batch symbol", outs and sess.get_inputs()[0].shape[0] == outs[0].shape[0],
      (sess.get_inputs()[0].shape, outs[0].shape if outs else None))
raises("Session with TensorRT's provider", lambda: symc.Session(ps, providers=["TensorrtExecutionProvider"]),
       "'TensorrtExecutionProvider' is not one symc runs", "CUDAExecutionProvider")
s_cpu = symc.Session(ps, providers=[("CPUExecutionProvider", {})])
check("CPUExecutionProvider as a (name, options) pair", s_cpu.get_providers() == ["CPUExecutionProvider"])
log("cache and sidecars against lying files")
common.finish("cache and sidecar checks")
