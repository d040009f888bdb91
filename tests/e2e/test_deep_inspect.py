"""A deep CNN with dynamic batch, height and width: compile, inspect, run (issue 13).

`symc inspect` of MobileNetV3-Large exported with dynamic B, H, W ran for
minutes: the workspace formula (tools/memory_formula.c) folds long offset
chains into max expressions that later offsets share, so the formula is a DAG
whose tree is exponential, and evaluating or printing it as a tree never
finished. This test compiles such a network with the issue's shapes and
requires `symc inspect` to finish in well under a second of CPU, with its
formula text bounded, then runs the engine at an off-grid shape.

Two models:
  default  a MobileNetV3-Large-like network written with onnx.helper (the
           same block structure and stride-2 stages at 1/16 of the channels,
           and the TorchScript exporter's Identity nodes on the weights at the
           top of the graph, which keep constant-size tensors alive and the
           offset chains long). Needs only onnx; never skips. The engine's
           output at images 5x3x161x317 is checked against onnxruntime.
  --torch  torchvision's mobilenet_v3_large (random weights, eval mode)
           exported at opset 17 with dynamic_axes B, H, W, as in the issue.
           Prints SKIP and passes when torchvision is not importable.

usage: test_deep_inspect.py SYMC TMPDIR [--torch]
"""
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

SHAPES = "images:1x3x128x128,8x3x224x224,32x3x320x320"
RUN_SHAPE = (5, 3, 161, 317)
INSPECT_CPU_S = 1.0  # the hang was minutes; the fixed inspect takes ~0.1 s

failures = checks = 0


def check(cond, what):
    global failures, checks
    checks += 1
    if not cond:
        failures += 1
        print("FAIL:", what, file=sys.stderr)
    return cond


def timed(cmd, timeout):
    """Runs cmd; returns (CompletedProcess or None on timeout, wall s, child CPU s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        r = None
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r, wall, cpu


# MobileNetV3-Large's bottlenecks: in, kernel, expanded, out, squeeze-excite, hardswish, stride
BNECK = [(16, 3, 16, 16, 0, 0, 1), (16, 3, 64, 24, 0, 0, 2), (24, 3, 72, 24, 0, 0, 1), (24, 5, 72, 40, 1, 0, 2),
         (40, 5, 120, 40, 1, 0, 1), (40, 5, 120, 40, 1, 0, 1), (40, 3, 240, 80, 0, 1, 2), (80, 3, 200, 80, 0, 1, 1),
         (80, 3, 184, 80, 0, 1, 1), (80, 3, 184, 80, 0, 1, 1), (80, 3, 480, 112, 1, 1, 1), (112, 3, 672, 112, 1, 1, 1),
         (112, 5, 672, 160, 1, 1, 2), (160, 5, 960, 160, 1, 1, 1), (160, 5, 960, 160, 1, 1, 1)]


def write_onnx_model(path, div=16):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(13)
    nodes, inits, count = [], [], [0]

    def conv(x, ci, co, k, stride=1, group=1, act=None):
        count[0] += 1
        n = count[0]
        w = (rng.standard_normal([co, ci // group, k, k]) * (1.0 / np.sqrt(ci // group * k * k))).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{n}"))
        inits.append(numpy_helper.from_array((rng.standard_normal([co]) * 0.1).astype(np.float32), f"b{n}"))
        nodes.append(helper.make_node("Conv", [x, f"w{n}", f"b{n}"], [f"c{n}"], kernel_shape=[k, k],
                                      strides=[stride, stride], pads=[k // 2] * 4, group=group))
        y = f"c{n}"
        if act:
            nodes.append(helper.make_node(act, [y], [y + "a"]))
            y += "a"
        return y

    def ch(c):
        return max(4, c // div)

    x = conv("images", 3, ch(16), 3, 2, act="HardSwish")
    for ci, k, e, co, se, hs, s in BNECK:
        ci, e, co = ch(ci), ch(e), ch(co)
        act = "HardSwish" if hs else "Relu"
        h = x if e == ci else conv(x, ci, e, 1, act=act)
        h = conv(h, e, e, k, s, group=e, act=act)
        if se:  # squeeze-excite: h stays alive across the pooled branch
            count[0] += 1
            p = f"p{count[0]}"
            nodes.append(helper.make_node("GlobalAveragePool", [h], [p]))
            q = conv(p, e, ch(e // 4), 1, act="Relu")
            q = conv(q, ch(e // 4), e, 1, act="HardSigmoid")
            nodes.append(helper.make_node("Mul", [h, q], [p + "m"]))
            h = p + "m"
        h = conv(h, e, co, 1)
        if s == 1 and ci == co:
            nodes.append(helper.make_node("Add", [x, h], [h + "r"]))
            h += "r"
        x = h
    x = conv(x, ch(160), ch(960), 1, act="HardSwish")
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["gap"]))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"]))
    inits.append(numpy_helper.from_array((rng.standard_normal([ch(960), 10]) * 0.3).astype(np.float32), "fc"))
    nodes.append(helper.make_node("MatMul", ["flat", "fc"], ["logits"]))
    # The TorchScript exporter routes weights through Identity nodes at the top
    # of the graph; without them the plan's offset chains stay short and the
    # formula small, and the original hang does not reproduce.
    ids = []
    for n in nodes:
        if n.op_type == "Conv":
            ids.append(helper.make_node("Identity", [n.input[1]], [n.input[1] + "_id"]))
            n.input[1] += "_id"
    g = helper.make_graph(ids + nodes, "deep_cnn",
                          [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["B", 3, "H", "W"])],
                          [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["B", 10])], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def export_mobilenet(path):
    import torch
    import torchvision

    m = torchvision.models.mobilenet_v3_large().eval()
    with warnings.catch_warnings():  # the TorchScript exporter's deprecation notice: the issue used it
        warnings.simplefilter("ignore")
        torch.onnx.export(m, torch.randn(1, 3, 224, 224), path, opset_version=17, dynamo=False,
                          input_names=["images"], output_names=["logits"],
                          dynamic_axes={"images": {0: "B", 2: "H", 3: "W"}})


def compile_and_inspect(symc, model, engine, name):
    r, wall, cpu = timed([symc, "compile", model, "--shapes", SHAPES, "-o", engine], 300)
    if not check(r is not None and r.returncode == 0, f"{name}: compile: {r.stderr.strip() if r else 'timed out'}"):
        return False
    print(f"{name}: compile {wall:.1f} s")
    r, wall, cpu = timed([symc, "inspect", engine], 60)
    if not check(r is not None, f"{name}: inspect did not finish in 60 s (the issue 13 hang)"):
        return False
    check(r.returncode == 0, f"{name}: inspect: {r.stderr.strip()}")
    check(cpu < INSPECT_CPU_S, f"{name}: inspect took {cpu:.2f} s of CPU (limit {INSPECT_CPU_S} s)")
    out = r.stdout
    check("workspace <= " in out, f"{name}: inspect shows no workspace formula")
    check("H in [128, 320] opt 224" in out and "W in [128, 320] opt 224" in out, f"{name}: symbols missing")
    # the pointwise (1x1, stride 1, unpadded, one group) convolutions run as cuBLASLt GEMMs, one step each
    import onnx
    ones = 0
    for n in onnx.load(model).graph.node:
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        ones += (n.op_type == "Conv" and list(a.get("kernel_shape", [])) == [1, 1] and
                 all(v == 1 for v in a.get("strides", [1, 1])) and all(v == 0 for v in a.get("pads", [0] * 4)) and
                 a.get("group", 1) == 1)
    check(ones > 0 and out.count("cuBLASLt 1x1 conv") == ones,
          f"{name}: {out.count('cuBLASLt 1x1 conv')} 1x1 convolutions as cuBLASLt GEMMs, the model has {ones}")
    longest = max(len(line) for line in out.splitlines())
    # the formula text is bounded: terms past ~4 KB are counted, a long term cut
    check(longest < 16384, f"{name}: an inspect line of {longest} characters")
    print(f"{name}: inspect {wall:.2f} s wall, {cpu:.2f} s CPU, {len(out)} bytes, longest line {longest}")
    return True


def main():
    symc, tmp = sys.argv[1], sys.argv[2]
    use_torch = "--torch" in sys.argv[3:]
    os.makedirs(tmp, exist_ok=True)
    if use_torch:
        try:
            import torchvision  # noqa: F401
        except Exception as e:  # ImportError, or a broken install
            print(f"SKIP: torchvision is not importable ({e})")
            return 0
        model, name = os.path.join(tmp, "mobilenet_v3_large.onnx"), "mobilenet_v3_large"
        t0 = time.monotonic()
        export_mobilenet(model)
        print(f"{name}: export {time.monotonic() - t0:.1f} s")
    else:
        model, name = os.path.join(tmp, "deep_cnn.onnx"), "deep_cnn"
        write_onnx_model(model)
    engine = os.path.join(tmp, name + ".symx")
    if compile_and_inspect(symc, model, engine, name) and not use_torch:
        # run at a shape off the declared grid against onnxruntime: the shape
        # program must be right (and quick) there too
        import onnxruntime as ort

        x = np.random.default_rng(5).standard_normal(RUN_SHAPE).astype(np.float32)
        xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        np.save(xin, x)
        shape = "x".join(map(str, RUN_SHAPE))
        r, wall, cpu = timed([symc, "run", engine, "--shapes", f"images:{shape}", "--input", f"images={xin}",
                              "--output", f"logits={yout}", "--backend", "ref"], 120)
        if check(r is not None and r.returncode == 0, f"{name}: run: {r.stderr.strip() if r else 'timed out'}"):
            got = np.load(yout)
            want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"images": x})[0]
            if check(got.shape == want.shape == (5, 10), f"{name}: run output shape {got.shape}, want {want.shape}"):
                rel = float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))
                check(rel < 1e-4, f"{name}: run: relative error {rel:.3g} against onnxruntime")
                print(f"{name}: run at {shape}: {wall:.2f} s, relative error {rel:.2e}")
    print(f"test_deep_inspect: {checks - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
