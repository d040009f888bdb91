#!/usr/bin/env python3
"""`symc triton ENGINE.symx REPO` (tools/triton_repo.c): a Triton Inference Server model-repository
entry, REPO/NAME/config.pbtxt and REPO/NAME/1/model.symx. Small ONNX models written here with
onnx.helper are compiled with --no-gpu, and each config is read back by a parser of protobuf's text
format below (strings with their escapes, messages, lists) and compared with what `symc inspect`
says of the same engine (each symbol's range and opt, each tensor's dtype and dims as min|opt|max):

  - a model that batches (x: [B, S, 4], ids: [B] -> y: [B, S, 10] and an output whose name needs
    escapes, [B]): max_batch_size is B's max, the dims leave dim 0 out with -1 for S, a tensor left
    with no dims is `dims: [ 1 ] reshape: { shape: [ ] }`, dynamic batching prefers [opt, max],
    --instances and --max-queue-delay-us land where they should, and the engine is copied byte for
    byte;
  - models that do not batch, each with its reason on a `no batching:` line: different leading
    symbols, a fixed leading dim, B at another dim too, an output whose dim 0 is an expression of B,
    B starting at 2; max_batch_size 0 with full dims and no dynamic_batching;
  - with dynamic batching, a line with the engine's batch-row verdict (symc inspect's) and what the symc
    backend does with a batch (joins the requests into one run when proved independent, else runs each
    separately), and a `symc_batch_rows` parameter in the config: "independent" for the batching
    model, "not proved: ..." naming the node for a model whose softmax over the batch mixes rows, and
    "unknown" for the same engine with the verdict cut out (as built before symc stored it);
  - --no-batching on the batching model;
  - refusals (a bad --name or a file name that makes none, a bad --instances, --max-queue-delay-us or
    --kind, a missing engine, a file that is no engine, a directory): a non-zero exit, one message,
    and nothing under REPO;
  - links planted at REPO/NAME/config.pbtxt and REPO/NAME/1/model.symx pointing outside are replaced,
    their targets unchanged; a link planted as the model's folder is refused, nothing written through
    it; writing again over an entry leaves no temporary behind;
  - given REGIONS_ENGINE (tests/tools/regions_engine: 2 regions, each with GPU steps), the instance
    kind is KIND_CPU unless --kind gpu; a dim whose form differs by region is symbolic (-1), and two
    batch symbols (B, C) no batch axis;
  - an engine whose regions are chosen by the batch size (an ONNX If on Shape(x)[0]: B == 1 in one
    region) batches over B's whole range, each request of a batch run alone;
  - --pad-mask: accepted for a padding-invariant model (x [B, S, 4] and an int64 mask m [B, S]; y = (x w)
    * m per position and pooled = the masked sum over S): the padding check's line with its worst
    difference (0: zeros add nothing), the line saying requests of different lengths are padded, the
    config parameter symc_pad_mask and allow_ragged_batch on every input; refused, each with its message,
    a non-zero exit and nothing written, for an unknown input name, a mask of rank 3, an engine whose
    batch rows are not proved independent (a softmax over the batch), an input without S at dim 1, an
    output with S at dim 2, --no-batching, and a model that is not padding-invariant (a mean over S that
    divides by S rather than by the mask's count: the check names the output and the difference).

usage: triton_repo_test.py SYMC TMPDIR [REGIONS_ENGINE]
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

symc, tmp = sys.argv[1], sys.argv[2]
regions_engine = sys.argv[3] if len(sys.argv) > 3 else None
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(tmp)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def path(*parts):
    return os.path.join(tmp, *parts)


def run(*args, want=0):
    p = subprocess.run([symc, *args], capture_output=True, text=True)
    ok = p.returncode == want if want == 0 else p.returncode != 0
    check(ok, f"symc {' '.join(args)}: exit {p.returncode}, wanted {'0' if want == 0 else 'non-zero'}: "
          f"{p.stdout[-1000:]}{p.stderr[-1000:]}")
    return p.stdout, p.stderr


# ---- protobuf text format: a small reader ----
TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\\n]|\\.)*"|[\[\]{}:,]|[-\w.]+')


def unescape(s):
    out, i = bytearray(), 1
    while i < len(s) - 1:
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n in "01234567":
            j = i + 1
            while j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8))
            i = j
            continue
        out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "\\": b"\\", "'": b"'"}[n]
        i += 2
    return out.decode()


def parse_pbtxt(text):
    """{field: [values]} with messages as nested dicts; a list `f: [ a, b ]` or `f [ {..}, {..} ]`
    adds each item to f. Raises ValueError on anything else."""
    toks, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"bad text at {pos}: {text[pos:pos + 20]!r}")
        pos = m.end()
        t = m.group(0)
        if not t.isspace() and not t.startswith("#"):
            toks.append(t)
    toks.append(None)
    i = 0

    def value():
        nonlocal i
        t = toks[i]
        i += 1
        if t == "{":
            return message("}")
        if t is None or t in "[]{}:,":
            raise ValueError(f"a value expected, got {t!r}")
        return unescape(t) if t.startswith('"') else int(t) if re.fullmatch(r"-?\d+", t) else t

    def message(end):
        nonlocal i
        msg = {}
        while toks[i] != end:
            name = toks[i]
            if name is None or not re.fullmatch(r"\w+", name):
                raise ValueError(f"a field name expected, got {name!r}")
            i += 1
            if toks[i] == ":":
                i += 1
            vals = msg.setdefault(name, [])
            if toks[i] == "[":
                i += 1
                while toks[i] != "]":
                    vals.append(value())
                    if toks[i] == ",":
                        i += 1
                    elif toks[i] != "]":
                        raise ValueError(f"',' or ']' expected, got {toks[i]!r}")
                i += 1
            else:
                vals.append(value())
        i += 1
        return msg

    msg = message(None)
    return msg


def one(msg, field):
    v = msg.get(field, [])
    check(len(v) == 1, f"field {field} once: {v}")
    return v[0] if v else None


# ---- the engine as `symc inspect` describes it ----
DTYPES = {"f32": "TYPE_FP32", "f16": "TYPE_FP16", "bf16": "TYPE_BF16", "f64": "TYPE_FP64", "i64": "TYPE_INT64",
          "i32": "TYPE_INT32", "bool": "TYPE_BOOL", "i8": "TYPE_INT8", "u8": "TYPE_UINT8", "i16": "TYPE_INT16",
          "u16": "TYPE_UINT16", "u32": "TYPE_UINT32", "u64": "TYPE_UINT64"}


def inspect(engine):
    """(symbols {name: (min, opt, max)}, tensors [(kind, name, dtype, [dim texts min|opt|max])])"""
    out, _ = run("inspect", engine)
    syms = {m.group(1): (int(m.group(2)), int(m.group(4)), int(m.group(3)))
            for m in re.finditer(r"^  (\w+) in \[(\d+), (\d+)\] opt (\d+)", out, re.M)}
    io = [(m.group(1), m.group(2), m.group(3), [d for d in m.group(4).split(", ") if d])
          for m in re.finditer(r"^  (input|output) +(.*): (\w+)\[(.*)\]$", out, re.M)]
    return syms, io


def expected_dims(dims, batching):
    """Triton's dims from inspect's min|opt|max texts: a fixed dim its number, any other -1"""
    d = [int(x) if "|" not in x else -1 for x in (dims[1:] if batching else dims)]
    return (d, False) if d else ([1], True)  # no dims left: dims [ 1 ] with reshape [ ]


def check_config(cfg_path, engine, name, batch_sym=None, instances=1, delay=100, kind="KIND_CPU", gpus=None):
    """The config at cfg_path against inspect's account of engine; batch_sym: the batch symbol, or
    None for max_batch_size 0. Returns the parsed config."""
    text = open(cfg_path, encoding="utf-8").read()
    try:
        cfg = parse_pbtxt(text)
    except (ValueError, KeyError, IndexError) as e:
        check(False, f"{cfg_path}: not protobuf text format: {e}\n{text}")
        return {}
    syms, io = inspect(engine)
    first = text.splitlines()[0]
    check(first.startswith("# written by symc triton from ") and os.path.basename(engine) in first,
          f"{name}: the comment names the engine: {first}")
    for s, (lo, opt, hi) in syms.items():
        check(f"{s} in [{lo}, {hi}] opt {opt}" in first, f"{name}: the comment gives {s}'s range: {first}")
    check(one(cfg, "name") == name, f"{name}: name {cfg.get('name')}")
    check(one(cfg, "backend") == "symc", f"{name}: backend {cfg.get('backend')}")
    want_max = syms[batch_sym][2] if batch_sym else 0
    check(one(cfg, "max_batch_size") == want_max,
          f"{name}: max_batch_size {cfg.get('max_batch_size')}, want {want_max}")
    for kind_io in ("input", "output"):
        want = [t for t in io if t[0] == kind_io]
        got = cfg.get(kind_io, [])
        check([g.get("name", [None])[0] for g in got] == [t[1] for t in want],
              f"{name}: {kind_io} names {[g.get('name') for g in got]}, want {[t[1] for t in want]}")
        for g, (_, tname, dtype, dims) in zip(got, want):
            check(g.get("data_type") == [DTYPES[dtype]], f"{name}: {tname} data_type {g.get('data_type')}")
            if batch_sym:
                check(dims and dims[0].split("|") == [str(x) for x in (syms[batch_sym][0], syms[batch_sym][1],
                                                                       syms[batch_sym][2])],
                      f"{name}: {tname} dim 0 runs over {batch_sym}: {dims}")
            d, reshape = expected_dims(dims, batch_sym is not None)
            check(g.get("dims") == d, f"{name}: {tname} dims {g.get('dims')}, want {d}")
            check(g.get("reshape") == ([{"shape": []}] if reshape else None),
                  f"{name}: {tname} reshape {g.get('reshape')}")
    if batch_sym:
        db = one(cfg, "dynamic_batching") or {}
        lo, opt, hi = syms[batch_sym]
        check(db.get("preferred_batch_size") == sorted({opt, hi}),
              f"{name}: preferred_batch_size {db.get('preferred_batch_size')}, want {sorted({opt, hi})}")
        check(db.get("max_queue_delay_microseconds") == [delay], f"{name}: max_queue_delay {db}")
    else:
        check("dynamic_batching" not in cfg, f"{name}: no dynamic_batching without a batch axis")
    group = {"count": [instances], "kind": [kind], **({"gpus": gpus} if gpus else {})}
    check(cfg.get("instance_group") == [group],
          f"{name}: instance_group {cfg.get('instance_group')}")
    return cfg


def entry_files(repo):
    return sorted(os.path.relpath(os.path.join(d, f), repo) for d, _, fs in os.walk(repo) for f in fs)


def model(name, nodes, inputs, outputs, inits=()):
    p = path(name + ".onnx")
    g = h.make_graph(nodes, name, inputs, [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs], list(inits))
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), p)
    return p


def compile_engine(onnx_path, *shapes):
    e = onnx_path[:-5] + ".symx"
    args = ["compile", onnx_path, "--no-gpu", "-q", "-o", e]
    for s in shapes:
        args += ["--shapes", s]
    run(*args)
    return e


F = lambda n, dims: h.make_tensor_value_info(n, T.FLOAT, dims)
w = nh.from_array(np.arange(40, dtype=np.float32).reshape(4, 10), "w")

# ---- (1) a model that batches ----
odd = 'out/z:0"q\\'  # ONNX names carry '/', ':', and here a quote and a backslash too
bat = compile_engine(model("bat", [h.make_node("MatMul", ["x", "w"], ["y"]), h.make_node("Cast", ["ids"], [odd], to=1)],
                           [F("x", ["B", "S", 4]), h.make_tensor_value_info("ids", T.INT64, ["B"])], ["y", odd], [w]),
                     "x:1x2x4,4x16x4,8x64x4", "ids:1,4,8")
repo = path("repo")
out, err = run("triton", bat, repo, "--instances", "3", "--max-queue-delay-us=250")
cfg_path = os.path.join(repo, "bat", "config.pbtxt")
JOINED = ("batch rows: independent over B (each output row b is computed from input rows b alone: requests may run "
          "joined along dim 0); the symc backend joins the requests of a batch whose other dims agree into one run "
          "(config parameter symc_join \"off\" stops it)")
check(out.splitlines() == [JOINED, f"wrote {repo}/bat/config.pbtxt (max_batch_size 8, dynamic batching preferred "
                           f"[4, 8], 3 instances KIND_CPU)", f"wrote {repo}/bat/1/model.symx"] and not err,
      f"batching: the lines said: {out!r} {err!r}")
cfg = check_config(cfg_path, bat, "bat", batch_sym="B", instances=3, delay=250)
check(cfg.get("parameters") == [{"key": ["symc_batch_rows"], "value": [{"string_value": ["independent"]}]}],
      f"batching: the symc_batch_rows parameter: {cfg.get('parameters')}")
check(cfg.get("input", [{}])[0].get("dims") == [-1, 4], f"batching: x dims [-1, 4]: {cfg.get('input')}")
check(open(bat, "rb").read() == open(os.path.join(repo, "bat", "1", "model.symx"), "rb").read(),
      "batching: the engine copied byte for byte")
check(entry_files(repo) == ["bat/1/model.symx", "bat/config.pbtxt"],
      f"batching: the entry's files: {entry_files(repo)}")
run("triton", bat, repo, "--name", "b-2.v1", "--kind", "gpu")
check_config(os.path.join(repo, "b-2.v1", "config.pbtxt"), bat, "b-2.v1", batch_sym="B", kind="KIND_GPU")
out, _ = run("triton", bat, repo, "--name", "b-gpus", "--kind", "gpu", "--instances", "2", "--gpus", "1,0,7")
check("2 instances KIND_GPU on each of GPUs 1, 0, 7)" in out, f"--gpus: the line said: {out!r}")
check_config(os.path.join(repo, "b-gpus", "config.pbtxt"), bat, "b-gpus", batch_sym="B", instances=2,
             kind="KIND_GPU", gpus=[1, 0, 7])

# opt == max: one preferred size
flat = compile_engine(model("flat", [h.make_node("Relu", ["x"], ["y"])], [F("x", ["N", 5])], ["y"]), "x:1x5,4x5,4x5")
out, _ = run("triton", flat, repo, "--max-queue-delay-us", "0")
check("(max_batch_size 4, dynamic batching preferred [4], 1 instance KIND_CPU)" in out, f"opt == max: {out!r}")
check_config(os.path.join(repo, "flat", "config.pbtxt"), flat, "flat", batch_sym="N", delay=0)

# rows the model mixes (a softmax over the batch): it batches, but each request runs separately
mixes = compile_engine(model("mixes", [h.make_node("Softmax", ["x"], ["y"], axis=0, name="over_batch")],
                             [F("x", ["B", 4])], ["y"]), "x:1x4,2x4,8x4")
out, err = run("triton", mixes, repo)
why = "output 'y' depends on node 'y' (softmax, from 'over_batch'): an operation along the batch axis"
check(out.splitlines()[0] == f"batch rows: not proved independent: {why}; the symc backend runs each request of a "
      "batch separately" and "(max_batch_size 8, dynamic batching preferred [2, 8]" in out and not err,
      f"mixes: the lines said: {out!r} {err!r}")
cfg = check_config(os.path.join(repo, "mixes", "config.pbtxt"), mixes, "mixes", batch_sym="B")
check(cfg.get("parameters") == [{"key": ["symc_batch_rows"], "value": [{"string_value": [f"not proved: {why}"]}]}],
      f"mixes: the symc_batch_rows parameter: {cfg.get('parameters')}")

# regions chosen by the batch size (an ONNX If on Shape(x)[0] > 1): B is 1 in one region's graph and a symbol in the
# other's, B all the same (the region of B == 1 takes only x [1, 4]), so the model batches over B's whole range; its
# rows are not called independent (a joined batch may run the other region's graph), so each request runs alone
branch = lambda op, o: h.make_graph([h.make_node(op, ["x"], [o])], op, [], [h.make_tensor_value_info(o, T.FLOAT, None)])
ifb = compile_engine(model("ifb", [h.make_node("Shape", ["x"], ["sh"]), h.make_node("Gather", ["sh", "zero"], ["b"]),
                                   h.make_node("Greater", ["b", "one"], ["c"]),
                                   h.make_node("If", ["c"], ["y0"], then_branch=branch("Relu", "t"),
                                               else_branch=branch("Neg", "e")),
                                   h.make_node("Add", ["y0", "v"], ["y"])],
                           [F("x", ["B", 4]), F("v", ["B", 4])], ["y"],
                           [nh.from_array(np.array(0, np.int64), "zero"), nh.from_array(np.array(1, np.int64), "one")]),
                     "x:1x4,3x4,8x4", "v:1x4,3x4,8x4")
out, err = run("inspect", ifb)
check("regions: 2" in out and "B in [1, 1]" in out, f"ifb: an engine with a region of B == 1: {out}")
out, err = run("triton", ifb, repo)
lines = out.splitlines()
check(len(lines) == 3 and lines[0].startswith("batch rows: not proved independent: the engine's regions are chosen "
                                              "by the batch size B") and
      lines[0].endswith("the symc backend runs each request of a batch separately") and
      "(max_batch_size 8, dynamic batching preferred [3, 8], 1 instance KIND_CPU)" in lines[1] and not err,
      f"ifb: the lines said: {out!r} {err!r}")
cfg = parse_pbtxt(open(os.path.join(repo, "ifb", "config.pbtxt")).read())
got = {io: [(g["name"][0], g["dims"]) for g in cfg.get(io, [])] for io in ("input", "output")}
check(got == {"input": [("x", [4]), ("v", [4])], "output": [("y", [4])]} and cfg.get("max_batch_size") == [8],
      f"ifb: batching over B, dims past it: {got} {cfg.get('max_batch_size')}")


def without_verdict(engine, dest):
    """engine with its batch_rows table cut out, as every engine built before it: the FlatBuffer through
    flatc --json and back (engine.fbs), resealed with the checksum trailer (runtime/engine_fb.cc's
    rt_engine_checksum: eight interleaved FNV-1a lanes, folded, xor the length)"""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    schema, include = os.path.join(root, "runtime", "engine.fbs"), os.path.join(root, "ir")
    data = open(engine, "rb").read()
    fb = os.path.join(tmp, "strip.bin")
    open(fb, "wb").write(data[:-12])
    subprocess.run(["flatc", "--json", "--raw-binary", "--size-prefixed", "--strict-json", "--defaults-json",
                    "-I", include, "-o", tmp, schema, "--", fb], check=True)
    j = json.load(open(os.path.join(tmp, "strip.json")))
    check("batch_rows" in j, f"{engine}: flatc shows a batch_rows table")
    j.pop("batch_rows", None)
    json.dump(j, open(os.path.join(tmp, "strip.json"), "w"))
    subprocess.run(["flatc", "--binary", "--size-prefixed", "-I", include, "-o", tmp, schema,
                    os.path.join(tmp, "strip.json")], check=True)
    body = open(os.path.join(tmp, "strip.symx"), "rb").read()  # the schema's file_extension
    lanes = [1469598103934665603 ^ i for i in range(8)]
    M = (1 << 64) - 1
    n8 = len(body) // 8 * 8
    for i in range(0, n8, 8):
        for k in range(8):
            lanes[k] = ((lanes[k] ^ body[i + k]) * 1099511628211) & M
    for i in range(n8, len(body)):
        lanes[0] = ((lanes[0] ^ body[i]) * 1099511628211) & M
    hsh = 1469598103934665603
    for k in range(8):
        for b in range(8):
            hsh = ((hsh ^ ((lanes[k] >> (8 * b)) & 0xff)) * 1099511628211) & M
    open(dest, "wb").write(body + b"SXCK" + ((hsh ^ len(body)) & M).to_bytes(8, "little"))


if shutil.which("flatc"):
    old = path("old.symx")
    without_verdict(bat, old)
    out, err = run("inspect", old)
    check("batch rows: unknown (the engine was built before symc stored the batch-row proof" in out,
          f"old engine: inspect says {out[-300:]!r} {err!r}")
    out, err = run("triton", old, repo)
    check(out.splitlines()[0].startswith("batch rows: unknown (") and
          out.splitlines()[0].endswith("; the symc backend runs each request of a batch separately") and not err,
          f"old engine: the lines said: {out!r} {err!r}")
    cfg = check_config(os.path.join(repo, "old", "config.pbtxt"), old, "old", batch_sym="B")
    check(cfg.get("parameters") == [{"key": ["symc_batch_rows"], "value": [{"string_value": ["unknown"]}]}],
          f"old engine: the symc_batch_rows parameter: {cfg.get('parameters')}")
else:
    check(False, "flatc not installed")

# ---- (3) --no-batching ----
out, _ = run("triton", bat, repo, "--name", "nobatch", "--no-batching")
check_config(os.path.join(repo, "nobatch", "config.pbtxt"), bat, "nobatch")
check("no batching" not in out and "max_batch_size 0" in out and "batch rows" not in out,
      f"--no-batching: said {out!r}")
check("parameters" not in parse_pbtxt(open(os.path.join(repo, "nobatch", "config.pbtxt")).read()),
      "--no-batching: no symc_batch_rows parameter")

# ---- (2) models that do not batch, and why ----
two = compile_engine(model("two", [h.make_node("MatMul", ["x", "w"], ["y"]), h.make_node("MatMul", ["m", "w"], ["z"])],
                           [F("x", ["B", 4]), F("m", ["C", 4])], ["y", "z"], [w]), "x:1x4,2x4,8x4", "m:1x4,3x4,5x4")
fixed = compile_engine(model("fixed", [h.make_node("MatMul", ["x", "w"], ["y"])], [F("x", [3, "S", 4])], ["y"], [w]),
                       "x:3x1x4,3x8x4,3x32x4")
again = compile_engine(model("again", [h.make_node("MatMul", ["m", "x"], ["y"])],
                             [F("m", ["B", "B"]), F("x", ["B", 4])], ["y"]), "m:1x1,4x4,8x8", "x:1x4,4x4,8x4")
twice = compile_engine(model("twice", [h.make_node("Concat", ["x", "x"], ["y"], axis=0)], [F("x", ["B", 4])], ["y"]),
                       "x:1x4,2x4,8x4")
from2 = compile_engine(model("from2", [h.make_node("Relu", ["x"], ["y"])], [F("x", ["B", 4])], ["y"]), "x:2x4,4x4,8x4")
scalar = compile_engine(model("scalar", [h.make_node("ReduceSum", ["x"], ["y"], keepdims=0)], [F("x", ["B", 4])],
                              ["y"]), "x:1x4,2x4,8x4")
for engine, reason in [
    (two, re.escape("no batching: input 'm' dim 0 is 'C', input 'x' dim 0 is 'B'")),
    (fixed, re.escape("no batching: input 'x' dim 0 is 3, not a symbol")),
    (again, re.escape("no batching: 'B' also appears at input 'm' dim 1")),
    (twice, r"no batching: output 'y' dim 0 is '[^']*B[^']*', not a bare symbol"),
    (from2, re.escape("no batching: 'B' starts at 2, not 1: Triton sends batches of any size from 1")),
    (scalar, re.escape("no batching: output 'y' has rank 0 (no dim 0)")),
]:
    name = os.path.basename(engine)[:-5]
    out, err = run("triton", engine, repo)
    check(re.fullmatch(reason, out.splitlines()[0] if out else "") is not None and not err,
          f"{name}: the reason: {out!r} {err!r}, want {reason!r}")
    check(f"max_batch_size 0, 1 instance KIND_CPU)" in out, f"{name}: the summary: {out!r}")
    check_config(os.path.join(repo, name, "config.pbtxt"), engine, name)
cfg = parse_pbtxt(open(os.path.join(repo, "scalar", "config.pbtxt")).read())
check(cfg.get("output") == [{"name": ["y"], "data_type": ["TYPE_FP32"], "dims": [1], "reshape": [{"shape": []}]}],
      f"scalar: a rank-0 output is dims [1] reshape [] : {cfg.get('output')}")

# ---- (4) refusals: a message, a non-zero exit, nothing under REPO ----
bad_repo = path("bad_repo")
os.makedirs(bad_repo)
text_file = path("text.symx")
open(text_file, "w").write("not an engine\n")
shutil.copy(bat, path("bad name.symx"))
for args, msg in [
    (["--name", "a/b"], "not a valid Triton model name"),
    (["--name", ".hidden"], "not a valid Triton model name"),
    (["--name="], "not a valid Triton model name"),
    (["--instances", "0"], "--instances takes a count from 1 to 64"),
    (["--instances", "65"], "--instances takes a count from 1 to 64"),
    (["--instances", "two"], "--instances takes a count"),
    (["--instances"], "--instances needs a value"),
    (["--max-queue-delay-us", "-1"], "--max-queue-delay-us takes microseconds"),
    (["--max-queue-delay-us", "10000001"], "--max-queue-delay-us takes microseconds"),
    (["--kind", "tpu"], "--kind takes cpu or gpu"),
    (["--gpus", "0"], "--gpus places KIND_GPU instances: add --kind gpu"),
    (["--kind", "gpu", "--gpus", "0,0"], "--gpus takes distinct GPU ids"),
    (["--kind", "gpu", "--gpus", "0,,1"], "--gpus takes distinct GPU ids"),
    (["--kind", "gpu", "--gpus", "1,"], "--gpus takes distinct GPU ids"),
    (["--kind", "gpu", "--gpus", "-1"], "--gpus takes distinct GPU ids"),
    (["--kind", "gpu", "--gpus", "1024"], "--gpus takes distinct GPU ids"),
    (["--kind", "gpu", "--gpus", ",".join(str(g) for g in range(17))], "--gpus takes distinct GPU ids"),
    (["--kind", "gpu", "--gpus"], "--gpus needs a value"),
    (["--batch"], "unknown flag '--batch'"),
]:
    _, err = run("triton", bat, bad_repo, *args, want=1)
    check(err.startswith("symc: triton: ") and msg in err and err.count("\n") == 1, f"{args}: the message: {err!r}")
for engine, msg in [(path("missing.symx"), "missing.symx"), (text_file, "text.symx"), (tmp, "is a directory"),
                    (path("bad name.symx"), "give one with --name")]:
    _, err = run("triton", engine, bad_repo, want=1)
    check(err.startswith("symc: triton: ") and msg in err and err.count("\n") == 1, f"{engine}: the message: {err!r}")
_, err = run("triton", bat, want=1)
check("missing REPO" in err, f"no REPO: {err!r}")
check(os.listdir(bad_repo) == [], f"refusals leave nothing under REPO: {os.listdir(bad_repo)}")
# a folder at a destination name is refused before anything is written
os.makedirs(os.path.join(bad_repo, "bat", "config.pbtxt"))
_, err = run("triton", bat, bad_repo, want=1)
check("is a folder, not a file" in err and entry_files(bad_repo) == [] and
      sorted(os.listdir(os.path.join(bad_repo, "bat"))) == ["config.pbtxt"], f"a folder at config.pbtxt: {err!r}")
_, err = run("triton", text_file, path("new_repo"), want=1)
check(not os.path.exists(path("new_repo")), "a refused engine creates no REPO")
out, _ = run("triton", "--help")
check(out.startswith("usage: symc triton ENGINE.symx REPO") and
      all(f in out for f in ("--name", "--instances", "--kind", "--max-queue-delay-us", "--no-batching",
                             "--pad-mask", "[0, 50)")),
      f"--help: {out}")
out, _ = run("--help")
check(re.search(r"^  triton +\S", out, re.M) is not None, f"symc --help lists triton: {out}")

# ---- (4b) --pad-mask: padding to the longest of a batch, checked on the reference backend ----
def masked(name, nodes, inputs, outputs, opset=17):
    """a model over x [B, S, 4] and the int64 mask m [B, S] (mu: the mask as float [B, S, 1])"""
    p = path(name + ".onnx")
    pre = [h.make_node("Cast", ["m"], ["mf"], to=1), h.make_node("Unsqueeze", ["mf", "ax2"], ["mu"])]
    g = h.make_graph(pre + nodes, name, [F("x", ["B", "S", 4]), h.make_tensor_value_info("m", T.INT64, ["B", "S"])] +
                     inputs, [h.make_tensor_value_info(o, T.FLOAT, None) for o in outputs],
                     [nh.from_array(np.array([2], np.int64), "ax2"), nh.from_array(np.array([1], np.int64), "ax1"),
                      nh.from_array(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), "w4")])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", opset)]), p)
    return p


SEQ_SHAPES = ("x:1x1x4,2x8x4,4x16x4", "m:1x1,2x8,4x16")
padok = compile_engine(masked("padok", [h.make_node("MatMul", ["x", "w4"], ["xw"]), h.make_node("Mul", ["xw", "mu"], ["y"]),
                                        h.make_node("ReduceSum", ["y", "ax1"], ["pooled"], keepdims=0)], [],
                              ["y", "pooled"]), *SEQ_SHAPES)
pad_repo = path("pad_repo")
out, err = run("triton", padok, pad_repo, "--pad-mask", "m")
lines = out.splitlines()
check(len(lines) == 5 and lines[0] == JOINED and
      re.fullmatch(r"padding check under mask 'm' on the reference backend: 4 seeded requests of batch 1\.\.2 at "
                   r"S = 1, \d+, 1, \d+, each padded to 16, 16, \d+, \d+, agree with themselves unpadded at their real "
                   r"positions: worst relative difference 0 \(output '(y|pooled)'; at most 1e-5 allowed\)", lines[1])
      is not None and
      lines[2] == "requests of different lengths are padded to the longest of a batch and run joined, while the padded "
      "positions stay at most half of a run (config parameter symc_pad_mask \"m\")" and
      lines[3].startswith(f"wrote {pad_repo}/padok/config.pbtxt (max_batch_size 4") and not err,
      f"--pad-mask m: the lines said: {out!r} {err!r}")
cfg = check_config(os.path.join(pad_repo, "padok", "config.pbtxt"), padok, "padok", batch_sym="B")
check(cfg.get("parameters") == [{"key": ["symc_batch_rows"], "value": [{"string_value": ["independent"]}]},
                                {"key": ["symc_pad_mask"], "value": [{"string_value": ["m"]}]}],
      f"--pad-mask m: the parameters: {cfg.get('parameters')}")
check([g.get("allow_ragged_batch") for g in cfg.get("input", [])] == [["true"], ["true"]] and
      all("allow_ragged_batch" not in g for g in cfg.get("output", [])),
      f"--pad-mask m: allow_ragged_batch on every input, on no output: {cfg.get('input')} {cfg.get('output')}")
out, _ = run("triton", padok, pad_repo, "--name", "plain")
check("allow_ragged_batch" not in open(os.path.join(pad_repo, "plain", "config.pbtxt")).read() and
      "padding" not in out, f"without --pad-mask: no allow_ragged_batch, no padding line: {out!r}")

# refusals: one message each, nothing written
pad_bad = path("pad_bad")
rank3 = path("rank3.onnx")
onnx.save(h.make_model(h.make_graph([h.make_node("Mul", ["x", "m3"], ["y"])], "rank3",
                                    [F("x", ["B", "S", 4]), F("m3", ["B", "S", 1])], [F("y", None)]),
                       opset_imports=[h.make_opsetid("", 17)]), rank3)
rank3 = compile_engine(rank3, "x:1x1x4,2x8x4,4x16x4", "m3:1x1x1,2x8x1,4x16x1")
over_b = compile_engine(masked("over_b", [h.make_node("Mul", ["x", "mu"], ["xm"]),
                                          h.make_node("Softmax", ["xm"], ["y"], axis=0, name="over_batch")], [], ["y"]),
                        *SEQ_SHAPES)
no_s = compile_engine(masked("no_s", [h.make_node("Mul", ["x", "mu"], ["y"]), h.make_node("MatMul", ["v", "w4"], ["z"])],
                             [F("v", ["B", 4])], ["y", "z"]), *SEQ_SHAPES, "v:1x4,2x4,4x4")
s_late = compile_engine(masked("s_late", [h.make_node("Mul", ["x", "mu"], ["xm"]),
                                          h.make_node("Transpose", ["xm"], ["t"], perm=[0, 2, 1])], [], ["t"]),
                        *SEQ_SHAPES)
mean_s = compile_engine(masked("mean_s", [h.make_node("Mul", ["x", "mu"], ["xm"]),
                                          h.make_node("ReduceMean", ["xm"], ["y"], axes=[1], keepdims=0)], [], ["y"]),
                        *SEQ_SHAPES)
for engine, args, msg in [
    (padok, ["--pad-mask", "mask"], "--pad-mask 'mask' is not an input of the engine (its inputs: 'x', 'm')"),
    (rank3, ["--pad-mask", "m3"], "--pad-mask 'm3': the input has rank 3; a padding mask is [B, S] (rank 2"),
    (over_b, ["--pad-mask", "m"], "--pad-mask 'm' needs joined runs, but the engine's batch rows are not proved "
     "independent: output 'y' depends on node 'y' (softmax, from 'over_batch'): an operation along the batch axis"),
    (no_s, ["--pad-mask", "m"], "--pad-mask 'm': every input needs the length 'S' at dim 1 and nowhere else "
     "(padding extends dim 1 of every input): input 'v' has '4' at dim 1"),
    (s_late, ["--pad-mask", "m"], "--pad-mask 'm': an output may have the length 'S' at dim 1 (each request gets its "
     "own positions) or not at all (split by rows), else a padded run changes its shape: output 't' has 'S' at dim 2"),
    (padok, ["--pad-mask", "m", "--no-batching"], "--pad-mask 'm' pads the requests of a batch, and --no-batching "
     "makes no batches"),
    (mean_s, ["--pad-mask", "m"], "padding changes output 'y' by "),
    (padok, ["--pad-mask"], "--pad-mask needs a value"),
]:
    _, err = run("triton", engine, pad_bad, *args, want=1)
    check(err.startswith("symc: triton: ") and msg in err and err.count("\n") == 1,
          f"{os.path.basename(engine)} {args}: the message: {err!r}, want {msg!r}")
    if engine == mean_s:
        m = re.search(r"padding changes output 'y' by ([0-9.e+-]+) \(\|\|padded - alone\|\| / \|\|alone\|\|, a request "
                      r"of batch [12] at length \d+ padded to \d+; at most 1e-5 allowed\): the model is not "
                      r"padding-invariant under mask 'm'", err)
        check(m is not None and float(m.group(1)) > 1e-5, f"mean over S: the difference named: {err!r}")
check(not os.path.exists(pad_bad), "--pad-mask refusals create no REPO")

# ---- (5) links planted at the destinations are replaced, never followed ----
outside = path("outside")
os.makedirs(outside)
cfg_target, eng_target = os.path.join(outside, "config.pbtxt"), os.path.join(outside, "model.symx")
open(cfg_target, "w").write("keep me\n")
open(eng_target, "w").write("keep me too\n")
link_repo = path("link_repo")
os.makedirs(os.path.join(link_repo, "bat", "1"))
os.symlink(cfg_target, os.path.join(link_repo, "bat", "config.pbtxt"))
os.symlink(eng_target, os.path.join(link_repo, "bat", "1", "model.symx"))
run("triton", bat, link_repo)
for p in (os.path.join(link_repo, "bat", "config.pbtxt"), os.path.join(link_repo, "bat", "1", "model.symx")):
    check(not os.path.islink(p) and os.path.isfile(p), f"{p}: a regular file in place of the link")
check(open(cfg_target).read() == "keep me\n" and open(eng_target).read() == "keep me too\n",
      "the links' targets are unchanged")
check_config(os.path.join(link_repo, "bat", "config.pbtxt"), bat, "bat", batch_sym="B")
# writing again over the entry (another engine) replaces both files and leaves no temporary
run("triton", two, link_repo, "--name", "bat")
check_config(os.path.join(link_repo, "bat", "config.pbtxt"), two, "bat")
check(open(two, "rb").read() == open(os.path.join(link_repo, "bat", "1", "model.symx"), "rb").read(),
      "the second engine replaced the first")
check(entry_files(link_repo) == ["bat/1/model.symx", "bat/config.pbtxt"], f"no temporaries: {entry_files(link_repo)}")
# a link planted as the model's folder is refused, nothing written through it
os.symlink(outside, os.path.join(link_repo, "linked"))
_, err = run("triton", bat, link_repo, "--name", "linked", want=1)
check("symbolic link" in err and sorted(os.listdir(outside)) == ["config.pbtxt", "model.symx"] and
      open(cfg_target).read() == "keep me\n", f"a linked model folder: {err!r} {os.listdir(outside)}")

# ---- an engine with regions (GPU steps): KIND_CPU unless --kind gpu ----
# (`symc inspect` lists each region's shapes apart, so the config is checked against the fixture's
# known dims: x [B, 4] with B == 1 in region 0, w [C, 4], r [B, 2, 2], z [C, 4]; x's dim 0 is B in
# every region, as region 0 takes only B == 1, so the batch axis is refused for w's C alone)
if regions_engine:
    rg = path("regions.symx")
    subprocess.run([regions_engine, rg], check=True, capture_output=True)
    for args, kind in [([], "KIND_CPU"), (["--kind", "gpu", "--name", "regions_gpu"], "KIND_GPU")]:
        out, _ = run("triton", rg, repo, *args)
        check(out.startswith("no batching: input 'w' dim 0 is 'C', input 'x' dim 0 is 'B'\n") and
              f"max_batch_size 0, 1 instance {kind})" in out, f"regions {args}: {out!r}")
        name = args[-1] if args else "regions"
        cfg = parse_pbtxt(open(os.path.join(repo, name, "config.pbtxt")).read())
        got = {io: [(g["name"][0], g["dims"]) for g in cfg.get(io, [])] for io in ("input", "output")}
        check(got == {"input": [("x", [-1, 4]), ("w", [-1, 4])], "output": [("r", [-1, 2, 2]), ("z", [-1, 4])]},
              f"regions {args}: the dims: {got}")
        check(cfg.get("max_batch_size") == [0] and cfg.get("instance_group") == [{"count": [1], "kind": [kind]}],
              f"regions {args}: {cfg}")
        check(open(rg, "rb").read() == open(os.path.join(repo, name, "1", "model.symx"), "rb").read(),
              f"regions {args}: the engine copied")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
print("triton_repo: all checks passed")
