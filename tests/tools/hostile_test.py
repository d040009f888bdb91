#!/usr/bin/env python3
"""Hostile and sloppy inputs through the symc driver (issue 30): files whose contents lie about
themselves must give a clear error or the right answer, never a silently wrong one.

ONNX attribute types (item 3). onnx.helper.make_node takes an attribute's type from the Python
value, so `alpha=2` is an INT and `axis=1.0` a FLOAT; symc once read every attribute from the field
of the type the op expects, so Gemm with alpha=2 gave all zeros and Softmax with a FLOAT axis used
axis 0. Now: an INT where a FLOAT is taken converts exactly (Gemm, LeakyRelu, Elu, Constant's
value_float and value_floats give numpy's result); any other mismatch (a FLOAT or STRING axis, a
FLOATS axis, a FLOAT value_int, a FLOAT Cast 'to') is refused naming the node, the attribute, its type
and the type taken; an attribute whose type field is UNDEFINED (IR version 1 files) is typed by the
field that holds its value.

FIFOs (items 1, 2): a FIFO at a build-cache entry's path is a cache miss, and a forged entry (a
valid key and digest over garbage) is compiled again and rewritten; and a FIFO as an ONNX
file's external data is refused naming it, instead of blocking the build forever. External data
reached through a symlink out of the model's folder (item 11) is refused; one inside it is read.

Where the user pointed (item 8): `-o`, `bench --csv/--json/--plot` replace a regular file through a
temporary created exclusively beside it (a symlink planted at "<path>.tmp" is never followed, its
target untouched); a symlink, device or FIFO at the path is written through, never replaced.

symc inspect sums storage with checked arithmetic (item 7: B up to 2^58 printed a negative size).
The CLI's silent adjustments: a second --input or --output for one name, --seed -1, an empty
--fp32-layers are refused; --iters -1 names the flag; a --multiple of 19 digits says it is too
large; a --multiple that narrows the declared range says so.

usage: hostile_test.py SYMC TMPDIR
"""
import shutil
import stat
import threading
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto as T
from onnx import helper as h

symc, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def path(name):
    return os.path.join(tmp, name)


def symc_run(*args, env=None, timeout=120):
    """(rc, output); a run past the timeout (a hang) is rc -9 and says so"""
    try:
        p = subprocess.run([symc, *args], capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -9, f"symc {' '.join(args)}: no answer in {timeout} s (it hangs)"
    return p.returncode, p.stdout + p.stderr


def model(name, nodes, inputs, inits=()):
    """inputs: [(name, shape)] float32; one output y"""
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], list(inits))
    f = path(name + ".onnx")
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), f)
    return f


def compile_run(f, feeds):
    """builds f for the reference backend at the feeds' shapes and runs it; (rc, message, y)"""
    eng = f[:-5] + ".symx"
    shapes = []
    for n, x in feeds.items():
        shapes += ["--shapes", f"{n}:{'x'.join(map(str, x.shape))}"]
    rc, out = symc_run("compile", f, "-o", eng, "--no-gpu", "-q", *shapes)
    if rc:
        return rc, out, None
    args = ["run", eng, "--backend", "ref", "--output", f"y={path('y.npy')}"]
    for n, x in feeds.items():
        np.save(path(n + ".npy"), x)
        args += ["--input", f"{n}={path(n + '.npy')}"]
    if os.path.exists(path("y.npy")):
        os.remove(path("y.npy"))
    rc, out = symc_run(*args)
    return rc, out, np.load(path("y.npy")) if rc == 0 else None


rng = np.random.default_rng(30)
a = rng.standard_normal((2, 3)).astype(np.float32)
b = rng.standard_normal((3, 4)).astype(np.float32)
c = rng.standard_normal((4,)).astype(np.float32)
x = rng.standard_normal((2, 5)).astype(np.float32)

# ---- an INT where a FLOAT is taken: converted, exactly ----
gemm = h.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=2, beta=1)
check(gemm.attribute[0].type == onnx.AttributeProto.INT, "make_node(alpha=2) should write an INT")
rc, out, y = compile_run(model("gemm_int_alpha", [gemm], [("a", [2, 3]), ("b", [3, 4]), ("c", [4])]),
                         {"a": a, "b": b, "c": c})
check(rc == 0 and y is not None and np.allclose(y, 2 * a @ b + c, rtol=1e-5, atol=1e-6),
      f"Gemm alpha=2 (INT): {out} {y}")
for op, alpha, want in (("LeakyRelu", 3, np.where(x > 0, x, 3 * x)),
                        ("Elu", 2, np.where(x > 0, x, 2 * (np.exp(x) - 1)))):
    rc, out, y = compile_run(model(f"{op}_int_alpha", [h.make_node(op, ["x"], ["y"], alpha=alpha)], [("x", [2, 5])]),
                             {"x": x})
    check(rc == 0 and y is not None and np.allclose(y, want, rtol=1e-5, atol=1e-6), f"{op} alpha={alpha} (INT): {out}")
# Constant's value_float given as an INT, value_floats as INTS: y = x + constant
for attr, val, want in (("value_float", 2, x + 2), ("value_floats", [1, 2, 3, 4, 5], x + np.arange(1, 6))):
    nodes = [h.make_node("Constant", [], ["k"], **{attr: val}), h.make_node("Add", ["x", "k"], ["y"])]
    rc, out, y = compile_run(model(f"constant_{attr}_int", nodes, [("x", [2, 5])]), {"x": x})
    check(rc == 0 and y is not None and np.allclose(y, want), f"Constant {attr}={val} (INT): {out}")

# ---- every other mismatch: refused, naming the attribute, its type and the type taken ----
refusals = [
    ("softmax_float_axis", [h.make_node("Softmax", ["x"], ["y"], axis=1.0)], "attribute 'axis' is a FLOAT",
     "takes an INT"),
    ("softmax_string_axis", [h.make_node("Softmax", ["x"], ["y"], axis="1")], "attribute 'axis' is a STRING",
     "takes an INT"),
    ("softmax_floats_axis", [h.make_node("Softmax", ["x"], ["y"], axis=[1.0])], "attribute 'axis' is a FLOATS",
     "takes an INT"),
    ("cast_float_to", [h.make_node("Cast", ["x"], ["y"], to=1.0)], "attribute 'to' is a FLOAT", "takes an INT"),
    ("constant_float_value_int", [h.make_node("Constant", [], ["k"], value_int=2.5),
                                  h.make_node("Add", ["x", "k"], ["y"])], "attribute 'value_int' is a FLOAT",
     "takes an INT"),
    ("reducesum_float_keepdims", [h.make_node("ReduceMax", ["x"], ["y"], axes=[1], keepdims=0.0)],
     "attribute 'keepdims' is a FLOAT", "takes an INT"),
]
for name, nodes, want1, want2 in refusals:
    rc, out, y = compile_run(model(name, nodes, [("x", [2, 5])]), {"x": x})
    check(rc != 0 and want1 in out and want2 in out and "node '" in out and y is None,
          f"{name}: wanted a refusal with '{want1}' and '{want2}', got rc {rc}: {out}")

# ---- an UNDEFINED type field (IR version 1 files): typed by the field that holds the value ----
sm = h.make_node("Softmax", ["x"], ["y"])
ax = onnx.AttributeProto()
ax.name, ax.i = "axis", 0  # type left UNDEFINED: an INT by its value
sm.attribute.append(ax)
e = np.exp(x - x.max(axis=0, keepdims=True))
rc, out, y = compile_run(model("softmax_untyped_axis", [sm], [("x", [2, 5])]), {"x": x})
check(rc == 0 and y is not None and np.allclose(y, e / e.sum(axis=0, keepdims=True), rtol=1e-5),
      f"Softmax axis=0 with an UNDEFINED type: {out}")

# ---- FIFOs: never opened blocking ----
relu = model("relu", [h.make_node("Relu", ["x"], ["y"])], [("x", ["B", 5])])
cache = path("cache")
shutil.rmtree(cache, ignore_errors=True)
env = dict(os.environ, SYMC_CACHE_DIR=cache)
rc, out = symc_run("compile", relu, "-o", path("relu_gpu.symx"), "-q", "--shapes", "x:1x5,2x5,4x5", env=env)
entries = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs]
check(rc == 0 and entries, f"a GPU build fills the build cache: rc {rc}, {len(entries)} entries: {out}")
for e in entries:
    os.remove(e)
    os.mkfifo(e)
rc, out = symc_run("compile", relu, "-o", path("relu_gpu2.symx"), "-q", "--shapes", "x:1x5,2x5,4x5", env=env,
                   timeout=90)
check(rc == 0 and os.path.isfile(path("relu_gpu2.symx")), f"FIFOs at the cache entries' paths: rc {rc}: {out}")

# a forged build-cache entry (valid header, key and digest over garbage) is compiled again, not used
import hashlib  # noqa: E402
forged = {}
for e in entries:
    os.remove(e)
rc, out = symc_run("compile", relu, "-o", path("relu_gpu3.symx"), "-q", "--shapes", "x:1x5,2x5,4x5", env=env)
entries = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs]
for e in entries:
    head = open(e, "rb").read()[:48]
    cubin = b"\x7fELF" + bytes(range(256)) * 8  # the entry's own framing (cubin size, cubin, PTX) kept
    garbage = len(cubin).to_bytes(8, "little") + cubin + b"// not PTX\n"
    forged[e] = head + len(garbage).to_bytes(8, "little") + hashlib.sha256(garbage).digest() + garbage
    with open(e, "wb") as f:
        f.write(forged[e])
rc, out = symc_run("compile", relu, "-o", path("relu_gpu4.symx"), "--verbose", "--shapes", "x:1x5,2x5,4x5", env=env)
check(rc == 0 and entries and "(0 cached)" in out and all(open(e, "rb").read() != forged[e] for e in entries),
      f"a forged cache entry is compiled again and rewritten: rc {rc}: {out}")

w = rng.standard_normal((5,)).astype(np.float32)
def make_ext():  # saving as external data changes the proto: a fresh one per save
    return h.make_model(h.make_graph([h.make_node("Add", ["x", "w"], ["y"])], "ext",
                                     [h.make_tensor_value_info("x", T.FLOAT, ["B", 5])],
                                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                                     [onnx.numpy_helper.from_array(w, "w")]), opset_imports=[h.make_opsetid("", 17)])


ext = make_ext()
shutil.rmtree(path("ext"), ignore_errors=True)  # a FIFO left by an earlier run
os.makedirs(path("ext"))
onnx.save_model(ext, path("ext/m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                location="w.bin", size_threshold=0)
rc, out, y = compile_run(path("ext/m.onnx"), {"x": x})
check(rc == 0 and y is not None and np.allclose(y, x + w), f"external data as a file: {out}")
os.remove(path("ext/w.bin"))
os.mkfifo(path("ext/w.bin"))
rc, out = symc_run("compile", path("ext/m.onnx"), "-o", path("ext.symx"), "--no-gpu", "-q", "--shapes", "x:2x5",
                   timeout=60)
check(rc != 0 and "is a FIFO" in out and "w.bin" in out, f"a FIFO as external data: rc {rc}: {out}")

# external data through a symlink out of the model's folder (item 11): refused, as onnxruntime does
outside = path("outside")
shutil.rmtree(outside, ignore_errors=True)
os.makedirs(outside)
w.tofile(os.path.join(outside, "secret.bin"))
shutil.rmtree(path("ext2"), ignore_errors=True)
os.makedirs(path("ext2"))
onnx.save_model(make_ext(), path("ext2/m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                location="w.bin", size_threshold=0)
os.remove(path("ext2/w.bin"))
os.symlink(os.path.join(outside, "secret.bin"), path("ext2/w.bin"))
rc, out = symc_run("compile", path("ext2/m.onnx"), "-o", path("ext2.symx"), "--no-gpu", "-q", "--shapes", "x:2x5")
check(rc != 0 and "outside the model's folder" in out and "secret.bin" in out,
      f"external data through a symlink out of the folder: rc {rc}: {out}")
os.remove(path("ext2/w.bin"))
os.symlink("w_real.bin", path("ext2/w.bin"))  # a symlink that stays inside the folder is fine
w.tofile(path("ext2/w_real.bin"))
rc, out, y = compile_run(path("ext2/m.onnx"), {"x": x})
check(rc == 0 and y is not None and np.allclose(y, x + w), f"external data through a symlink inside: {out}")

# ---- outputs: a regular file replaced whole, anything else written through ----
shapes = ["--shapes", "x:1x5,2x5,4x5", "--no-gpu", "-q"]
victim = path("victim.txt")
with open(victim, "w") as f:
    f.write("precious")
target = path("planted.symx")
for p in (target, target + ".tmp"):
    if os.path.lexists(p):
        os.remove(p)
os.symlink(victim, target + ".tmp")  # a symlink planted where a predictable temporary would go
rc, out = symc_run("compile", relu, "-o", target, *shapes)
check(rc == 0 and open(victim, "rb").read() == b"precious" and os.path.isfile(target) and not os.path.islink(target),
      f"-o with a symlink planted at <path>.tmp: rc {rc}, victim {open(victim, 'rb').read()[:16]!r}: {out}")
real, link = path("real.symx"), path("link.symx")
for p in (real, link):
    if os.path.lexists(p):
        os.remove(p)
open(real, "w").close()
os.symlink(real, link)
rc, out = symc_run("compile", relu, "-o", link, *shapes)
rc2, out2 = symc_run("run", link, "--backend", "ref", "--shapes", "x:3x5")
check(rc == 0 and os.path.islink(link) and os.path.getsize(real) > 0 and rc2 == 0,
      f"-o through a symlink: the link stays, its target gets the engine: {out} {out2}")
null_link = path("null_link")
if os.path.lexists(null_link):
    os.remove(null_link)
os.symlink("/dev/null", null_link)
rc, out = symc_run("compile", relu, "-o", null_link, *shapes)
check(rc == 0 and os.path.islink(null_link) and stat.S_ISCHR(os.stat("/dev/null").st_mode),
      f"-o to a symlink to /dev/null: written through, the link kept: {out}")
fifo = path("out.fifo")
if os.path.lexists(fifo):
    os.remove(fifo)
os.mkfifo(fifo)
got = []
reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
reader.start()
rc, out = symc_run("compile", relu, "-o", fifo, *shapes, timeout=60)
reader.join(timeout=60)
check(rc == 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode) and got and len(got[0]) > 100,
      f"-o to a FIFO: written into it, the FIFO kept: rc {rc}: {out}")
eng = path("relu_ref.symx")
rc, out = symc_run("compile", relu, "-o", eng, *shapes)
for flag, name in (("--csv", "b.csv"), ("--json", "b.json"), ("--plot", "b.svg")):
    real, link = path("real_" + name), path("link_" + name)
    for p in (real, link, link + ".tmp"):
        if os.path.lexists(p):
            os.remove(p)
    open(real, "w").close()
    os.symlink(real, link)
    os.symlink(victim, link + ".tmp")
    rc, out = symc_run("bench", eng, "--backend", "ref", "--iters", "2", "--warmup", "0", "--sweep", "--shapes",
                       "x:Bx5", flag, link)
    check(rc == 0 and os.path.islink(link) and os.path.getsize(real) > 0 and open(victim, "rb").read() == b"precious",
          f"bench {flag} through a symlink, a symlink planted at .tmp: rc {rc}: {out}")

# ---- the CLI: no silent adjustment, messages that say the flag (issue 30, "Also") ----
np.save(path("xa.npy"), x)
cli = [
    (["run", eng, "--backend", "ref", "--input", f"x={path('xa.npy')}", "--input", f"x={path('xa.npy')}"], 2,
     "--input names 'x' twice"),
    (["run", eng, "--backend", "ref", "--shapes", "x:2x5", "--output", "y=/tmp/a.npy", "--output", "y=/tmp/b.npy"], 2,
     "--output names 'y' twice"),
    (["run", eng, "--backend", "ref", "--shapes", "x:2x5", "--seed", "-1"], 2, "--seed takes a whole number"),
    (["run", eng, "--backend", "ref", "--shapes", "x:2x5", "--seed", "12abc"], 2, "--seed takes a whole number"),
    (["compile", relu, "-o", path("q.symx"), "--fp16", "--fp32-layers", "", "--shapes", "x:1x5,2x5,4x5"], 2,
     "--fp32-layers needs node names or op types"),
    (["bench", eng, "--backend", "ref", "--iters", "-1", "--shapes", "x:2x5"], 2,
     "--iters takes a whole number from 0 to 10000000, got '-1'"),
    (["bench", eng, "--backend", "ref", "--warmup=-3", "--shapes", "x:2x5"], 2,
     "--warmup takes a whole number from 0 to 10000000, got '-3'"),
    (["compile", relu, "-o", path("q.symx"), "--no-gpu", "--shapes", "x:1x5,2x5,4x5", "--multiple",
      "x:0=1234567890123456789"], 2, "the multiple is too large"),
]
cli += [
    (["bench", eng, "--backend", "ref", "--shapes", "x:2x5", "--iterations=10"], 2, "symc bench takes --iters N"),
    (["bench", eng, "--backend", "ref", "--shapes", "x:2x5", "--warmUp", "200"], 2, "symc bench takes --warmup N"),
    (["bench", eng, "--backend", "ref", "--shapes", "x:2x5", "--duration=3"], 2, "--iters N"),
    (["bench", eng, "--backend", "ref", "--shapes", "x:2x5", "--dumpProfile"], 2, "takes --profile"),
    (["run", eng, "--backend", "ref", "--shapes", "x:2x5", "--exportOutput=o.json"], 2, "--output NAME=FILE.npy"),
]
for args, want_rc, want in cli:
    rc, out = symc_run(*args)
    check(rc == want_rc and want in out, f"symc {' '.join(args)}: wanted rc {want_rc} and '{want}', got rc {rc}: {out}")
rc, out = symc_run("compile", relu, "-o", path("verbose.symx"), "--no-gpu", "--shapes", "x:1x5,2x5,4x5", "--verbose")
check(rc == 0 and "] importing" in out and "] infer-shapes" in out, f"compile --verbose prints every progress line: {out}")
rows = model("rows", [h.make_node("Relu", ["x"], ["y"])], [("x", ["B", "S"])])
rc, out = symc_run("compile", rows, "-o", path("rows.symx"), "--no-gpu", "--shapes", "x:1x8,2x24,4x64", "--multiple",
                   "x:1=24")
check(rc == 0 and "narrows input 'x' dim 1 from [8, 64] to [24, 48]" in out, f"--multiple narrowing said: {out}")

# symc inspect on a legal engine whose opt sizes pass 2^63 bytes in sum (item 7): said, never wrapped
B = 1 << 58
rc, out = symc_run("compile", relu, "-o", path("big.symx"), "--no-gpu", "-q", "--shapes", f"x:1x5,{B}x5,{B}x5")
rc2, out2 = symc_run("inspect", path("big.symx"))
check(rc == 0 and rc2 == 0 and "(over 9223372036854775807)" in out2 and "(-" not in out2,
      f"inspect of an engine with B up to 2^58: {out} {out2}")

print(f"hostile_test: {len(failures)} failures")
sys.exit(1 if failures else 0)
