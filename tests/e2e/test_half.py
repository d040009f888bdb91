"""Half precision end to end on the CPU reference backend, against fp32 oracles.

1. An fp16 ONNX model written with onnx.helper (fp16 input, weights and
   output) compiles as it is, for the reference backend alone and with the
   CUDA target's rules (which upcast the ops it has no half kernel for), and
   runs on f16 .npy files; the oracle is onnxruntime on the same graph in fp32.
2. A model whose fp32 activations pass fp16's 65504 (x * 3e4 * 4) compiled
   with --fp16: the range calibration keeps those tensors fp32 (checked in
   --dump-after=precision), the result has no inf and matches fp32; with
   --no-calibrate the same engine overflows (so the island is what saves it).
3. The memory formula: an MLP compiled with --fp16/--bf16 (--no-gpu) has half
   the weights and half the activation workspace of its fp32 engine in
   `symc inspect`, whose tensor list shows the storage types.
4. A torch model exported by torch.onnx.export from model.half() compiles as
   it is and matches the fp32 eager model (SKIP of that part without torch).
5. Attention (a BERT-style block: Q/K/V projections, padding
   mask, softmax, output projection, residual, layer norm) with --fp16 and
   --bf16: with small logits Q and K (and their projections) are stored in
   half while the logits and the softmax stay f32 (`symc inspect --tensors`),
   the CUDA build's fused attention is the half tensor-core kernel and the
   output cast runs inside the last layer norm's kernel (no step of its
   own); with large logits the island keeps Q and K f32. Both against fp32
   onnxruntime, for the reference-only and the CUDA-rules builds.
`symc inspect --islands` (2 and 5) lists every node kept fp32 with its reason, read back from
the engine file: the calibrated tensors with their max |value|, the softmax island's nodes; an
fp32 engine has no islands line.

Relative error = max |got - want| / max |want| over the output; limits 1e-2
for fp16 and 2e-2 for bf16, at min, opt, an off-opt size and max.

usage: test_half.py SYMC TMPDIR
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

symc, tmp = sys.argv[1:3]
os.makedirs(tmp, exist_ok=True)
failures = checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)


def run(*args):
    return subprocess.run([symc] + list(args), capture_output=True, text=True)


def rel_err(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def compile_ok(path, engine, *flags):
    r = run("compile", path, "-o", engine, *flags)
    check(r.returncode == 0, f"compile {os.path.basename(path)} {' '.join(flags)}: {r.stderr.strip()}")
    return r.returncode == 0


def run_engine(engine, feeds, outs):
    args = []
    for k, a in feeds.items():
        f = os.path.join(tmp, f"in.{k}.npy")
        np.save(f, a)
        args += ["--input", f"{k}={f}"]
    for o in outs:
        args += ["--output", f"{o}={os.path.join(tmp, 'out.' + o + '.npy')}"]
    r = run("run", engine, *args)
    check(r.returncode == 0, f"run {engine}: {r.stderr.strip()}")
    return [np.load(os.path.join(tmp, "out." + o + ".npy")) for o in outs] if r.returncode == 0 else None


# ---- 1. an fp16 ONNX model as it is -----------------------------------------------------------
def mlp_graph(elem, np_dtype, name, softmax=True):
    rng = np.random.default_rng(3)
    w1 = (rng.standard_normal((32, 64)) / 6).astype(np_dtype)
    b1 = (rng.standard_normal(64) / 4).astype(np_dtype)
    w2 = (rng.standard_normal((64, 32)) / 8).astype(np_dtype)
    g = (1 + rng.standard_normal(32) / 4).astype(np_dtype)
    be = (rng.standard_normal(32) / 4).astype(np_dtype)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]), helper.make_node("MatMul", ["r", "w2"], ["o"]),
             helper.make_node("Add", ["o", "x"], ["res"]),
             helper.make_node("LayerNormalization", ["res", "g", "be"], ["ln" if softmax else "y"], axis=-1,
                              epsilon=1e-5)]
    if softmax:  # the softmax island keeps the layer norm making its logits fp32
        nodes.append(helper.make_node("Softmax", ["ln"], ["y"], axis=-1))
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", elem, ["B", "S", 32])],
        [helper.make_tensor_value_info("y", elem, ["B", "S", 32])],
        [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"), (g, "g"), (be, "be"))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


m16 = mlp_graph(TensorProto.FLOAT16, np.float16, "mlp16")
# the oracle: the same graph with the fp16 weights widened exactly to fp32
m32 = onnx.load_from_string(m16.SerializeToString())
for init in m32.graph.initializer:
    a = numpy_helper.to_array(init).astype(np.float32)
    init.CopyFrom(numpy_helper.from_array(a, init.name))
for vi in list(m32.graph.input) + list(m32.graph.output):
    vi.type.tensor_type.elem_type = TensorProto.FLOAT
p16 = os.path.join(tmp, "mlp16.onnx")
onnx.save(m16, p16)
oracle = ort.InferenceSession(m32.SerializeToString(), providers=["CPUExecutionProvider"])
SH = "x:1x1x32,2x8x32,4x16x32"
POINTS = [("min", (1, 1)), ("opt", (2, 8)), ("off-opt", (3, 11)), ("max", (4, 16))]
rng = np.random.default_rng(5)
for suffix, flags in ((".ref", ["--no-gpu"]), (".cuda", [])):
    engine = os.path.join(tmp, "mlp16" + suffix + ".symx")
    if not compile_ok(p16, engine, "--shapes", SH, *flags):
        continue
    r = run("inspect", engine)
    check("input  x: f16[" in r.stdout and "output y: f16[" in r.stdout, f"mlp16{suffix}: inspect: {r.stdout}")
    for label, (b, s) in POINTS:
        x = rng.standard_normal((b, s, 32)).astype(np.float16)
        got = run_engine(engine, {"x": x}, ["y"])
        if got is None:
            continue
        check(got[0].dtype == np.float16, f"mlp16{suffix}: output dtype {got[0].dtype}")
        want = oracle.run(["y"], {"x": x.astype(np.float32)})[0]
        e = rel_err(got[0], want)
        check(np.isfinite(got[0]).all() and e <= 1e-2, f"mlp16{suffix} at {label}: relative error {e:.3g}")
        print(f"fp16 ONNX model{suffix} at {label}: relative error {e:.2e}")


def islands(engine):
    """node -> (kind, why) from `symc inspect --islands`, and its summary line (None without one)"""
    out = run("inspect", engine, "--islands").stdout
    summary = next((ln for ln in out.splitlines() if ln.startswith("fp32 islands")), None)
    got = {m.group(1): (m.group(3), m.group(4)) for m in
           re.finditer(r"\n  (\S+) \((\w+)\): ([^:]+): ([^\n]+)", out.split("fp32 islands", 1)[-1].split("\nrun-time")[0])}
    return got, summary


# ---- 2. activations past 65504 ----------------------------------------------------------------
def scalar(name, v):
    return numpy_helper.from_array(np.array(v, np.float32), name)


big_nodes = [helper.make_node("Mul", ["x", "k1"], ["a"]), helper.make_node("Mul", ["a", "k2"], ["big"]),
             helper.make_node("Div", ["big", "k3"], ["small"]), helper.make_node("Tanh", ["small"], ["t"]),
             helper.make_node("Add", ["t", "x"], ["y"])]
big = helper.make_model(helper.make_graph(
    big_nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 64])],
    [scalar("k1", 3e4), scalar("k2", 4.0), scalar("k3", 1e5)]), opset_imports=[helper.make_opsetid("", 17)])
big.ir_version = 8
pbig = os.path.join(tmp, "big.onnx")
onnx.save(big, pbig)
sess = ort.InferenceSession(pbig, providers=["CPUExecutionProvider"])
SHB = "x:1x64,4x64,9x64"
ebig = os.path.join(tmp, "big.symx")
r = run("compile", pbig, "-o", ebig, "--shapes", SHB, "--fp16", "--no-gpu", "--dump-after=precision")
check(r.returncode == 0, f"big --fp16: {r.stderr.strip()}")
# a and big (|x| * 1.2e5) stay f32; small (|x| * 1.2) and t are f16
check(re.search(r"\n  big: f32\[", r.stdout) is not None and re.search(r"\n  a: f32\[", r.stdout) is not None,
      f"big: the over-range tensors are not f32:\n{r.stdout}")
check(re.search(r"\n  t: f16\[", r.stdout) is not None, f"big: tanh is not half:\n{r.stdout}")
isl, summary = islands(ebig)
check(summary == "fp32 islands (nodes kept fp32 in this half engine): 3: calibrated range 3" and
      sorted(isl) == ["a", "big", "small"] and all(k == "calibrated range" for k, _ in isl.values()),
      f"big: the islands {summary!r} {isl}")
check("tensor 'big' reached max |value| 1.1" in isl.get("big", ("", ""))[1] and
      "tensor 'a' reached max |value| 2.9" in isl.get("a", ("", ""))[1], f"big: the islands' reasons {isl}")
ebig32 = os.path.join(tmp, "big32.symx")
if compile_ok(pbig, ebig32, "--shapes", SHB, "--no-gpu"):
    check(islands(ebig32) == ({}, None), f"big fp32: an islands line: {islands(ebig32)}")
ebig_nc = os.path.join(tmp, "big_nocal.symx")
compile_ok(pbig, ebig_nc, "--shapes", SHB, "--fp16", "--no-gpu", "--no-calibrate")
for label, b in (("min", 1), ("opt", 4), ("off-opt", 7), ("max", 9)):
    x = rng.uniform(-1, 1, (b, 64)).astype(np.float32)
    want = sess.run(["y"], {"x": x})[0]
    got = run_engine(ebig, {"x": x}, ["y"])
    if got is not None:
        e = rel_err(got[0], want)
        check(np.isfinite(got[0]).all(), f"big at {label}: inf/NaN with the calibrated island")
        check(e <= 1e-2, f"big at {label}: relative error {e:.3g}")
        print(f"large activations --fp16 at {label}: relative error {e:.2e}, finite")
    got = run_engine(ebig_nc, {"x": x}, ["y"])
    if got is not None:  # the overflow: inf that tanh turns into a finite but wrong 1.0, or inf/NaN
        bad = not np.isfinite(got[0]).all() or rel_err(got[0], want) > 1e-2
        check(bad, f"big --no-calibrate at {label}: expected the fp16 overflow to show (inf/NaN or a wrong result)")

# ---- 3. the memory formula ---------------------------------------------------------------------
m32f = mlp_graph(TensorProto.FLOAT, np.float32, "mlp32", softmax=False)
p32 = os.path.join(tmp, "mlp32.onnx")
onnx.save(m32f, p32)


def memory(engine):
    out = run("inspect", engine).stdout
    w = re.search(r"weights (\d+)", out)
    ws = re.search(r"activation workspace (\d+) \| (\d+) \| (\d+) bytes", out)
    return (int(w.group(1)) if w else None), (tuple(int(v) for v in ws.groups()) if ws else None), out


e32 = os.path.join(tmp, "mlp32.symx")
if compile_ok(p32, e32, "--shapes", "x:1x1x32,2x8x32,4x64x32", "--no-gpu"):
    w32, ws32, _ = memory(e32)
    for prec in ("fp16", "bf16"):
        eh = os.path.join(tmp, f"mlp32.{prec}.symx")
        if not compile_ok(p32, eh, "--shapes", "x:1x1x32,2x8x32,4x64x32", "--no-gpu", "--" + prec):
            continue
        wh, wsh, text = memory(eh)
        check(wh is not None and w32 is not None and wh * 2 == w32, f"{prec}: weights {wh} vs fp32 {w32}")
        # the boundary casts add the f32 input and output copies' half twins; the rest halves
        check(wsh is not None and ws32 is not None and wsh[2] <= ws32[2] * 0.5 + 64 * 64 * 4 * 2 and wsh[2] < ws32[2],
              f"{prec}: workspace {wsh} vs fp32 {ws32}")
        print(f"memory {prec}: weights {wh} (fp32 {w32}), workspace at max {wsh[2] if wsh else None} "
              f"(fp32 {ws32[2] if ws32 else None})")
        hname = "f16" if prec == "fp16" else "bf16"
        check(f"activations {hname} " in text and f"weights {hname} " in text, f"{prec}: inspect shows no storage types:\n{text}")

# ---- 4. torch.onnx.export of model.half() -------------------------------------------------------
try:
    import torch
except Exception as ex:  # noqa: BLE001
    print(f"SKIP torch part: {ex}")
    torch = None
if torch is not None:
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32),
                              torch.nn.LayerNorm(32)).eval()
    ref = {k: v.clone() for k, v in net.state_dict().items()}
    half = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32),
                               torch.nn.LayerNorm(32)).eval()
    half.load_state_dict(ref)
    half = half.half()
    pt = os.path.join(tmp, "torch_half.onnx")
    try:
        torch.onnx.export(half, (torch.zeros(2, 8, 32, dtype=torch.float16),), pt, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "B", 1: "S"}, "y": {0: "B", 1: "S"}},
                          opset_version=17, dynamo=False)
        exported = True
    except Exception as ex:  # noqa: BLE001
        check(False, f"torch.onnx.export of model.half(): {ex}")
        exported = False
    et = os.path.join(tmp, "torch_half.symx")
    if exported and compile_ok(pt, et, "--shapes", SH, "--no-gpu"):
        # the fp32 oracle: the fp16 weights widened exactly
        net32 = half.float()
        for label, (b, s) in POINTS:
            x = torch.randn(b, s, 32).half()
            got = run_engine(et, {"x": x.numpy()}, ["y"])
            if got is None:
                continue
            with torch.no_grad():
                want = net32(x.float()).numpy()
            e = rel_err(got[0], want)
            check(e <= 1e-2, f"torch model.half() export at {label}: relative error {e:.3g}")
            print(f"torch model.half() ONNX at {label}: relative error {e:.2e}")


# ---- 5. attention: Q and K in half when the logits are small ------------------------------------
def attention_block(name, qk_scale):
    """x -> Q, K, V projections (4 heads of 16) -> softmax(Q·Kᵀ/4 + padding mask)·V -> output
    projection + x -> LayerNorm -> y, all fp32; qk_scale sets the logits' size"""
    rng = np.random.default_rng(9)
    d, h = 64, 4

    def w(shape, scale):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    inits = {"wq": w([d, d], qk_scale), "bq": w([d], 0.1),
             "wk": w([d, d], qk_scale), "bk": w([d], 0.1), "wv": w([d, d], 0.2), "bv": w([d], 0.1),
             "wo": w([d, d], 0.2), "bo": w([d], 0.1), "g1": 1 + w([d], 0.1), "b1": w([d], 0.1),
             "heads": np.array([0, 0, h, d // h], np.int64), "merge": np.array([0, 0, d], np.int64),
             "scale": np.array(0.25, np.float32), "one": np.array(1.0, np.float32),
             "neg": np.array(-10000.0, np.float32), "ax12": np.array([1, 2], np.int64)}
    N = helper.make_node
    nodes = []
    for t in "qkv":
        nodes += [N("MatMul", ["x", "w" + t], [t + "0"]), N("Add", [t + "0", "b" + t], [t + "1"]),
                  N("Reshape", [t + "1", "heads"], [t + "4"])]
    nodes += [N("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]), N("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
              N("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]), N("MatMul", ["qh", "kh"], ["logits"]),
              N("Mul", ["logits", "scale"], ["s1"]), N("Sub", ["one", "mask"], ["pad"]),
              N("Mul", ["pad", "neg"], ["madd"]), N("Unsqueeze", ["madd", "ax12"], ["m4"]),
              N("Add", ["s1", "m4"], ["s2"]), N("Softmax", ["s2"], ["p"], axis=-1),
              N("MatMul", ["p", "vh"], ["c"]), N("Transpose", ["c"], ["ct"], perm=[0, 2, 1, 3]),
              N("Reshape", ["ct", "merge"], ["cm"]), N("MatMul", ["cm", "wo"], ["o0"]),
              N("Add", ["o0", "bo"], ["o1"]), N("Add", ["o1", "x"], ["r"]),
              N("LayerNormalization", ["r", "g1", "b1"], ["y"], axis=-1, epsilon=1e-5)]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "S", d]),
                                            helper.make_tensor_value_info("mask", TensorProto.FLOAT, ["B", "S"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "S", d])],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def tensor_types(engine):
    """name -> storage type from `symc inspect --tensors`"""
    out = run("inspect", engine, "--tensors").stdout
    return {m.group(1): m.group(2) for m in re.finditer(r"\n\s+(\S+): (f32|f16|bf16|i64|bool)\[", out)}


SHA = ["--shapes", "x:1x4x64,2x16x64,3x40x64", "--shapes", "mask:1x4,2x16,3x40"]
APOINTS = [("min", (1, 4)), ("opt", (2, 16)), ("off-opt", (3, 23)), ("max", (3, 40))]
# small logits (Q, K weights 0.05: max |logit| about 1): Q and K half, the logits fp32; large
# (weights 0.5: logits in the tens, where half Q and K moved the e2e models' outputs by 1.4e-2
# to 4e-2): the softmax island keeps Q, K and their projections fp32, reading x as it is
for kind, qk_scale in (("small", 0.05), ("large", 0.5)):
    am = attention_block("attn_" + kind, qk_scale)
    pa = os.path.join(tmp, f"attn_{kind}.onnx")
    onnx.save(am, pa)
    sess = ort.InferenceSession(pa, providers=["CPUExecutionProvider"])
    for prec, tol in (("fp16", 1e-2), ("bf16", 2e-2)):
        hname = "f16" if prec == "fp16" else "bf16"
        for suffix, flags in ((".ref", ["--no-gpu"]), (".cuda", [])):
            engine = os.path.join(tmp, f"attn_{kind}.{prec}{suffix}.symx")
            if not compile_ok(pa, engine, *SHA, "--" + prec, *flags):
                continue
            types = tensor_types(engine)
            qk = hname if kind == "small" else "f32"
            for t in ("q1", "k1", "qh", "kh"):
                check(types.get(t) == qk, f"attn_{kind} {prec}{suffix}: {t} is {types.get(t)}, want {qk}")
            for t, want in (("v1", hname), ("logits", "f32"), ("s2", "f32"), ("p", "f32"), ("c", hname),
                            ("o1", hname), ("x", "f32"), ("y", "f32")):
                check(types.get(t) == want, f"attn_{kind} {prec}{suffix}: {t} is {types.get(t)}, want {want}")
            # the islands: the logits and the softmax, and with large logits the Q and K projections too
            isl, _ = islands(engine)
            for t in ("logits",) + (("q1", "k1") if kind == "large" else ()):
                check(isl.get(t, ("",))[0] == "softmax logits", f"attn_{kind} {prec}{suffix}: island {t}: {isl.get(t)}")
            # the softmax reads the masked logits (the mask adds -1e4: past fp16's safe range) in fp32
            want_p = "calibrated range" if prec == "fp16" else "softmax logits"
            check(isl.get("p", ("",))[0] == want_p, f"attn_{kind} {prec}{suffix}: island p: {isl.get('p')}")
            for t in ("v1", "c", "o1") + (("q1", "k1") if kind == "small" else ()):
                check(t not in isl, f"attn_{kind} {prec}{suffix}: {t} is an island: {isl.get(t)}")
            if suffix == ".cuda":
                # the fused attention kernel: half tensor cores on half Q, K and V, reading Q and K
                # behind the widening casts; the output cast runs in the last layer norm's kernel
                src = run("inspect", engine, "--source").stdout
                att = re.search(r"/\* fused attention \(flash, ([^,]+),", src)
                want = f"{hname} tensor cores" if kind == "small" else "TF32 tensor cores"
                check(att is not None and att.group(1) == want,
                      f"attn_{kind} {prec}: attention kernel {att.group(1) if att else None}, want {want}")
                steps = run("inspect", engine).stdout
                check("precision_cast_y" not in steps and "kernel y_" in steps,
                      f"attn_{kind} {prec}: the output cast is a step of its own:\n{steps}")
            for label, (b, s_) in APOINTS:
                x = rng.standard_normal((b, s_, 64)).astype(np.float32)
                mask = np.ones((b, s_), np.float32)
                mask[:, (s_ + 1) // 2 + 1:] = 0  # padding: keys past the middle (and one) masked
                want_y = sess.run(["y"], {"x": x, "mask": mask})[0]
                got = run_engine(engine, {"x": x, "mask": mask}, ["y"])
                if got is None:
                    continue
                e = rel_err(got[0], want_y)
                check(np.isfinite(got[0]).all() and e <= tol,
                      f"attn_{kind} {prec}{suffix} at {label}: relative error {e:.3g} (limit {tol})")
                print(f"attention ({kind} logits) {prec}{suffix} at {label}: relative error {e:.2e}")

print(f"test_half: {checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
