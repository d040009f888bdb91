#!/usr/bin/env python3
"""Writes BENCH.md's seed and model patterns as ONNX, at small widths, for the
end-to-end test (test_onnx_models.py). Built with onnx.helper and seeded
random weights, so no download is needed.

  s2_scores  S2: q @ k^T on [1, 12, S, 64]
  s3_conv    S3: conv 3->16 3x3 pad 1 + ReLU on symbolic H, W
  m1_mlp     M1: Linear -> GELU -> Linear + residual + LayerNorm (64 -> 256 -> 64)
  m3_cnn     M3: 7x7/2 stem, BatchNorm, ReLU, maxpool 3/2/1, two residual 3x3
             blocks, global average pool, FC, on H, W in [128, 512]

usage: gen_bench_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
N = helper.make_node
rng = np.random.default_rng(3)


def w(name, shape, scale=0.2):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def save(outdir, name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, [helper.make_empty_tensor_value_info(o) for o in outputs],
                          initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(outdir, name + ".onnx"))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    vi = helper.make_tensor_value_info

    save(out, "s2_scores", [N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", ["q", "kt"], ["scores"])],
         [vi("q", F, [1, 12, "S", 64]), vi("k", F, [1, 12, "S", 64])], ["scores"], [])

    save(out, "s3_conv", [N("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["y"])],
         [vi("x", F, [1, 3, "H3", "W3"])], ["y"], [w("w", [16, 3, 3, 3]), w("b", [16])])

    d, h = 64, 256
    save(out, "m1_mlp", [
        # GELU as PyTorch exports it before opset 20: 0.5 * x * (1 + erf(x / sqrt(2)))
        N("MatMul", ["x", "w1"], ["a"]), N("Add", ["a", "b1"], ["ab"]), N("Div", ["ab", "sqrt2"], ["as"]),
        N("Erf", ["as"], ["e"]), N("Add", ["e", "one"], ["e1"]), N("Mul", ["ab", "e1"], ["ge"]),
        N("Mul", ["ge", "half"], ["g"]),
        N("MatMul", ["g", "w2"], ["o"]), N("Add", ["o", "b2"], ["ob"]), N("Add", ["ob", "x"], ["r"]),
        N("LayerNormalization", ["r", "ls", "lb"], ["y"], axis=-1, epsilon=1e-5)],
        [vi("x", F, ["Bm", d])], ["y"],
        [w("w1", [d, h], 0.1), w("b1", [h]), w("w2", [h, d], 0.1), w("b2", [d]), w("ls", [d]), w("lb", [d]),
         numpy_helper.from_array(np.array(2 ** 0.5, np.float32), "sqrt2"),
         numpy_helper.from_array(np.array(1.0, np.float32), "one"),
         numpy_helper.from_array(np.array(0.5, np.float32), "half")])

    c = 8
    nodes = [
        N("Conv", ["x", "w0"], ["c0"], strides=[2, 2], pads=[3, 3, 3, 3]),
        N("BatchNormalization", ["c0", "bs", "bb", "bm", "bv"], ["n0"]), N("Relu", ["n0"], ["r0"]),
        N("MaxPool", ["r0"], ["p0"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    prev = "p0"
    for k in range(2):
        nodes += [N("Conv", [prev, f"wa{k}", f"ba{k}"], [f"ca{k}"], pads=[1, 1, 1, 1]), N("Relu", [f"ca{k}"], [f"ra{k}"]),
                  N("Conv", [f"ra{k}", f"wb{k}", f"bb{k}"], [f"cb{k}"], pads=[1, 1, 1, 1]),
                  N("Add", [f"cb{k}", prev], [f"s{k}"]), N("Relu", [f"s{k}"], [f"o{k}"])]
        prev = f"o{k}"
    nodes += [N("GlobalAveragePool", [prev], ["gap"]), N("Flatten", ["gap"], ["flat"]),
              N("Gemm", ["flat", "fw", "fb"], ["logits"], transB=1)]
    inits = [w("w0", [c, 3, 7, 7], 0.1), w("bs", [c]), w("bb", [c]), w("bm", [c]),
             numpy_helper.from_array(np.abs(rng.standard_normal(c)).astype(np.float32) + 0.5, "bv")]
    for k in range(2):
        inits += [w(f"wa{k}", [c, c, 3, 3]), w(f"ba{k}", [c]), w(f"wb{k}", [c, c, 3, 3]), w(f"bb{k}", [c])]
    inits += [w("fw", [10, c]), w("fb", [10])]
    save(out, "m3_cnn", nodes, [vi("x", F, ["Bc", 3, "Hc", "Wc"])], ["logits"], inits)

    # M5's pattern, GELU(softmax(LayerNorm(x + r))), at two row-length ranges:
    # opt <= 1024 (warp-per-row launch, long rows in its fallback branch) and
    # opt > 1024 (block-per-row launch); odd and multiple-of-4 lengths both
    for name, rows, hid in (("m5_fusion", "R5", "H5"), ("m5_long", "R6", "H6")):
        save(out, name, [
            N("Add", ["x", "r"], ["s"]),
            N("LayerNormalization", ["s", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
            N("Softmax", ["n"], ["p"], axis=-1),
            N("Div", ["p", "sqrt2"], ["ps"]), N("Erf", ["ps"], ["e"]), N("Add", ["e", "one"], ["e1"]),
            N("Mul", ["p", "e1"], ["pe"]), N("Mul", ["pe", "half"], ["y"])],
            [vi("x", F, [rows, hid]), vi("r", F, [rows, hid]), vi("g", F, [hid]), vi("b", F, [hid])], ["y"],
            [numpy_helper.from_array(np.array(2 ** 0.5, np.float32), "sqrt2"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    print(f"gen_bench_models.py: wrote 6 models to {out}")


if __name__ == "__main__":
    main()
