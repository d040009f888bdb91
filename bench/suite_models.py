"""docs/BENCHMARKS-SUITE.md's suite models for bench/bench_suite.py.

Each model is built twice from the SAME numpy weights (rng seeded by the
harness): an ONNX graph made with onnx.helper (dynamic dims as dim_param) and
a torch.nn.Module.  A spec is a dict:
  desc, inputs [(name, dims: ints or symbol names)], outputs [name],
  ranges {symbol: (min, opt, max)}, sweep [point dict], small (one small
  point for --symc-only), quick [indices of sweep points for --quick],
  opset, weights(rng) -> W, onnx(W) -> (nodes, initializers),
  torch(W, attn) -> nn.Module (attn: "sdpa" or "explicit" for M2/M4),
  notes: how the ONNX graph was shaped for symc's importer.
S1-S3 reuse bench_seed.py's builders unchanged.
"""
import math
import os
import sys

import numpy as np
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_seed  # noqa: E402

N = helper.make_node


def f32(a):
    return np.asarray(a, dtype=np.float32)


def t_init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def i64(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.int64), name)


def fl(name, v):
    return numpy_helper.from_array(np.array(v, dtype=np.float32), name)


def lin_w(rng, k, n):
    return f32(rng.standard_normal((k, n)) / math.sqrt(k))


def bias(rng, n, s=0.02):
    return f32(rng.standard_normal((n,)) * s)


def _torch():
    import torch
    import torch.nn.functional as F
    return torch, F


def _buf(module, W, names):
    torch, _ = _torch()
    for n in names:
        module.register_buffer(n, torch.from_numpy(np.ascontiguousarray(W[n]).copy()))


# ---------------------------------------------------------------- M1 --
# MLP 1024 -> 4096 -> GELU -> 1024, then LayerNorm(1024)

def m1_weights(rng):
    return {"w1": lin_w(rng, 1024, 4096), "b1": bias(rng, 4096), "w2": lin_w(rng, 4096, 1024), "b2": bias(rng, 1024),
            "g": f32(1 + 0.1 * rng.standard_normal(1024)), "beta": bias(rng, 1024, 0.1)}


def m1_onnx(W):
    nodes = [N("MatMul", ["x", "w1"], ["h0"]), N("Add", ["h0", "b1"], ["h1"]), N("Gelu", ["h1"], ["h2"]),
             N("MatMul", ["h2", "w2"], ["h3"]), N("Add", ["h3", "b2"], ["h4"]),
             N("LayerNormalization", ["h4", "g", "beta"], ["y"], axis=-1, epsilon=1e-5)]
    return nodes, [t_init(k, W[k]) for k in ("w1", "b1", "w2", "b2", "g", "beta")]


def m1_torch(W, attn="sdpa"):
    torch, F = _torch()

    class M1(torch.nn.Module):
        def __init__(self):
            super().__init__()
            _buf(self, W, ("w1", "b1", "w2", "b2", "g", "beta"))

        def forward(self, x):
            h = F.gelu(x @ self.w1 + self.b1)
            h = h @ self.w2 + self.b2
            return F.layer_norm(h, (1024,), self.g, self.beta, 1e-5)

    return M1()


# ---------------------------------------------------------------- M2 --
# BERT-base encoder layer, post-LN: d 768, 12 heads of 64, FFN 3072, GELU.

D2, H2, F2 = 768, 12, 3072


def m2_weights(rng):
    W = {}
    for n in ("q", "k", "v", "o"):
        W["w" + n] = lin_w(rng, D2, D2)
        W["b" + n] = bias(rng, D2)
    W["w1"], W["b1"], W["w2"], W["b2"] = lin_w(rng, D2, F2), bias(rng, F2), lin_w(rng, F2, D2), bias(rng, D2)
    for n in ("1", "2"):
        W["g" + n] = f32(1 + 0.1 * rng.standard_normal(D2))
        W["be" + n] = bias(rng, D2, 0.1)
    return W


def _heads_onnx(prefix, x, nh, hd, nodes):
    """x [B,S,nh*hd] -> [B,nh,S,hd] with Reshape [0,0,nh,hd] (no Shape op)"""
    nodes += [N("Reshape", [x, "heads_shape"], [prefix + "_r"]),
              N("Transpose", [prefix + "_r"], [prefix + "_h"], perm=[0, 2, 1, 3])]
    return prefix + "_h"


def m2_onnx(W):
    nodes = []
    for n in ("q", "k", "v"):
        nodes += [N("MatMul", ["x", "w" + n], [n + "0"]), N("Add", [n + "0", "b" + n], [n + "1"])]
    q = _heads_onnx("q", "q1", H2, 64, nodes)
    k = _heads_onnx("k", "k1", H2, 64, nodes)
    v = _heads_onnx("v", "v1", H2, 64, nodes)
    nodes += [N("Transpose", [k], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", [q, "kt"], ["s0"]),
              N("Mul", ["s0", "scale"], ["s1"]), N("Softmax", ["s1"], ["p"], axis=-1),
              N("MatMul", ["p", v], ["c0"]), N("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]),
              N("Reshape", ["c1", "merge_shape"], ["c2"]),
              N("MatMul", ["c2", "wo"], ["o0"]), N("Add", ["o0", "bo"], ["o1"]), N("Add", ["x", "o1"], ["r1"]),
              N("LayerNormalization", ["r1", "g1", "be1"], ["h1"], axis=-1, epsilon=1e-12),
              N("MatMul", ["h1", "w1"], ["f0"]), N("Add", ["f0", "b1"], ["f1"]), N("Gelu", ["f1"], ["f2"]),
              N("MatMul", ["f2", "w2"], ["f3"]), N("Add", ["f3", "b2"], ["f4"]), N("Add", ["h1", "f4"], ["r2"]),
              N("LayerNormalization", ["r2", "g2", "be2"], ["y"], axis=-1, epsilon=1e-12)]
    inits = [t_init(k, v) for k, v in W.items()]
    inits += [i64("heads_shape", [0, 0, H2, 64]), i64("merge_shape", [0, 0, D2]), fl("scale", 1.0 / 8.0)]
    return nodes, inits


def m2_torch(W, attn="sdpa"):
    torch, F = _torch()

    class M2(torch.nn.Module):
        def __init__(self):
            super().__init__()
            _buf(self, W, tuple(W))

        def forward(self, x):
            b, s = x.shape[0], x.shape[1]
            q = (x @ self.wq + self.bq).view(b, s, H2, 64).transpose(1, 2)
            k = (x @ self.wk + self.bk).view(b, s, H2, 64).transpose(1, 2)
            v = (x @ self.wv + self.bv).view(b, s, H2, 64).transpose(1, 2)
            if attn == "sdpa":
                c = F.scaled_dot_product_attention(q, k, v)
            else:
                c = torch.softmax((q @ k.transpose(-1, -2)) * 0.125, dim=-1) @ v
            c = c.transpose(1, 2).reshape(b, s, D2)
            h = F.layer_norm(x + (c @ self.wo + self.bo), (D2,), self.g1, self.be1, 1e-12)
            f = F.gelu(h @ self.w1 + self.b1) @ self.w2 + self.b2
            return F.layer_norm(h + f, (D2,), self.g2, self.be2, 1e-12)

    return M2()


# ---------------------------------------------------------------- M3 --
# ResNet-style CNN: conv 7x7/2 (3->64) + BN + ReLU, maxpool 3/2/1, two basic
# residual blocks (conv3x3-BN-ReLU-conv3x3-BN + identity, ReLU), GAP, FC 64->1000.

C3, NCLS = 64, 1000
CONVS3 = ("stem", "b1c1", "b1c2", "b2c1", "b2c2")


def m3_weights(rng):
    W = {}
    for n in CONVS3:
        cin, k = (3, 7) if n == "stem" else (C3, 3)
        W[n + "_w"] = f32(rng.standard_normal((C3, cin, k, k)) * math.sqrt(2.0 / (cin * k * k)))
        W[n + "_g"] = f32(1 + 0.1 * rng.standard_normal(C3))
        W[n + "_b"] = bias(rng, C3, 0.1)
        W[n + "_m"] = bias(rng, C3, 0.1)
        W[n + "_v"] = f32(0.5 + rng.random(C3))
    W["fc_w"] = lin_w(rng, C3, NCLS)
    W["fc_b"] = bias(rng, NCLS)
    return W


def m3_onnx(W):
    nodes = []

    def cbn(n, x, out, stride, pad, k, relu):
        nodes.append(N("Conv", [x, n + "_w"], [n + "_c"], kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4))
        nodes.append(N("BatchNormalization", [n + "_c", n + "_g", n + "_b", n + "_m", n + "_v"],
                       [n + "_bn" if relu else out], epsilon=1e-5))
        if relu:
            nodes.append(N("Relu", [n + "_bn"], [out]))

    cbn("stem", "x", "s0", 2, 3, 7, True)
    nodes.append(N("MaxPool", ["s0"], ["p0"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x = "p0"
    for blk in ("b1", "b2"):
        cbn(blk + "c1", x, blk + "_a", 1, 1, 3, True)
        cbn(blk + "c2", blk + "_a", blk + "_bno", 1, 1, 3, False)
        nodes += [N("Add", [blk + "_bno", x], [blk + "_sum"]), N("Relu", [blk + "_sum"], [blk + "_out"])]
        x = blk + "_out"
    nodes += [N("GlobalAveragePool", [x], ["gap"]), N("Flatten", ["gap"], ["flat"], axis=1),
              N("Gemm", ["flat", "fc_w", "fc_b"], ["y"])]
    return nodes, [t_init(k, v) for k, v in W.items()]


def m3_torch(W, attn="sdpa"):
    torch, F = _torch()

    class M3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = torch.nn.ModuleDict()
            self.bns = torch.nn.ModuleDict()
            for n in CONVS3:
                cin, k = (3, 7) if n == "stem" else (C3, 3)
                conv = torch.nn.Conv2d(cin, C3, k, stride=2 if n == "stem" else 1, padding=3 if n == "stem" else 1,
                                       bias=False)
                bn = torch.nn.BatchNorm2d(C3, eps=1e-5)
                with torch.no_grad():
                    conv.weight.copy_(torch.from_numpy(W[n + "_w"]))
                    bn.weight.copy_(torch.from_numpy(W[n + "_g"]))
                    bn.bias.copy_(torch.from_numpy(W[n + "_b"]))
                    bn.running_mean.copy_(torch.from_numpy(W[n + "_m"]))
                    bn.running_var.copy_(torch.from_numpy(W[n + "_v"]))
                self.convs[n], self.bns[n] = conv, bn
            self.fc = torch.nn.Linear(C3, NCLS)
            with torch.no_grad():
                self.fc.weight.copy_(torch.from_numpy(W["fc_w"].T.copy()))
                self.fc.bias.copy_(torch.from_numpy(W["fc_b"]))

        def cbn(self, n, x):
            return self.bns[n](self.convs[n](x))

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.cbn("stem", x)), 3, 2, 1)
            for blk in ("b1", "b2"):
                x = F.relu(self.cbn(blk + "c2", F.relu(self.cbn(blk + "c1", x))) + x)
            return self.fc(x.mean((2, 3)))

    return M3().eval()


# ---------------------------------------------------------------- M4 --
# Decoder block (pre-norm, Llama style without rotary): x + Attn(RMSNorm(x)),
# then + SwiGLU(RMSNorm(.)); d 1024, 16 heads of 64, FFN 2816, causal mask
# built in the graph from the sequence length (Shape -> Range -> Greater -> Where).

D4, H4, F4, EPS4 = 1024, 16, 2816, 1e-6


def m4_weights(rng):
    return {"wq": lin_w(rng, D4, D4), "wk": lin_w(rng, D4, D4), "wv": lin_w(rng, D4, D4), "wo": lin_w(rng, D4, D4),
            "wg": lin_w(rng, D4, F4), "wu": lin_w(rng, D4, F4), "wd": lin_w(rng, F4, D4),
            "g1": f32(1 + 0.1 * rng.standard_normal(D4)), "g2": f32(1 + 0.1 * rng.standard_normal(D4))}


def m4_onnx(W):
    nodes = []

    def rms(x, g, out):
        nodes.extend([N("Mul", [x, x], [out + "_sq"]),
                      N("ReduceMean", [out + "_sq", "ax_last"], [out + "_ms"], keepdims=1),
                      N("Add", [out + "_ms", "eps"], [out + "_mse"]), N("Sqrt", [out + "_mse"], [out + "_rms"]),
                      N("Div", [x, out + "_rms"], [out + "_n"]), N("Mul", [out + "_n", g], [out])])

    rms("x", "g1", "h")
    for n in ("q", "k", "v"):
        nodes.append(N("MatMul", ["h", "w" + n], [n + "0"]))
    q = _heads_onnx("q", "q0", H4, 64, nodes)
    k = _heads_onnx("k", "k0", H4, 64, nodes)
    v = _heads_onnx("v", "v0", H4, 64, nodes)
    # causal mask from the sequence length: col > row is masked
    nodes += [N("Shape", ["x"], ["xs"]), N("Gather", ["xs", "i1"], ["S"], axis=0),
              N("Range", ["i0", "S", "i1"], ["pos"]),
              N("Unsqueeze", ["pos", "ax1"], ["rows"]), N("Unsqueeze", ["pos", "ax0"], ["cols"]),
              N("Greater", ["cols", "rows"], ["masked"]),
              N("Transpose", [k], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", [q, "kt"], ["s0"]),
              N("Mul", ["s0", "scale"], ["s1"]), N("Where", ["masked", "neginf", "s1"], ["s2"]),
              N("Softmax", ["s2"], ["p"], axis=-1), N("MatMul", ["p", v], ["c0"]),
              N("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]), N("Reshape", ["c1", "merge_shape"], ["c2"]),
              N("MatMul", ["c2", "wo"], ["o0"]), N("Add", ["x", "o0"], ["r1"])]
    rms("r1", "g2", "h2")
    nodes += [N("MatMul", ["h2", "wg"], ["gt"]), N("Sigmoid", ["gt"], ["gs"]), N("Mul", ["gt", "gs"], ["silu"]),
              N("MatMul", ["h2", "wu"], ["up"]), N("Mul", ["silu", "up"], ["a"]),
              N("MatMul", ["a", "wd"], ["dn"]), N("Add", ["r1", "dn"], ["y"])]
    inits = [t_init(k, v) for k, v in W.items()]
    inits += [i64("heads_shape", [0, 0, H4, 64]), i64("merge_shape", [0, 0, D4]), i64("ax_last", [-1]),
              i64("ax0", [0]), i64("ax1", [1]), i64("i0", 0), i64("i1", 1), fl("eps", EPS4),
              fl("scale", 1.0 / 8.0), fl("neginf", -np.inf)]
    return nodes, inits


def m4_torch(W, attn="sdpa"):
    torch, F = _torch()

    class M4(torch.nn.Module):
        def __init__(self):
            super().__init__()
            _buf(self, W, tuple(W))

        def rms(self, x, g):
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + EPS4) * g

        def forward(self, x):
            b, s = x.shape[0], x.shape[1]
            h = self.rms(x, self.g1)
            q = (h @ self.wq).view(b, s, H4, 64).transpose(1, 2)
            k = (h @ self.wk).view(b, s, H4, 64).transpose(1, 2)
            v = (h @ self.wv).view(b, s, H4, 64).transpose(1, 2)
            if attn == "sdpa":
                c = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                pos = torch.arange(s, device=x.device)
                sc = (q @ k.transpose(-1, -2)) * 0.125
                sc = torch.where(pos[None, :] > pos[:, None], float("-inf"), sc)
                c = torch.softmax(sc, dim=-1) @ v
            r1 = x + c.transpose(1, 2).reshape(b, s, D4) @ self.wo
            h2 = self.rms(r1, self.g2)
            return r1 + (F.silu(h2 @ self.wg) * (h2 @ self.wu)) @ self.wd

    return M4()


# ---------------------------------------------------------------- M5 --
# fusion micro-benchmark: y = GELU(softmax(LayerNorm(x + r), -1)); the LN
# scale and shift have the dynamic hidden size, so they are inputs (g, b).

def m5_weights(rng):
    return {}


def m5_onnx(W):
    return [N("Add", ["x", "r"], ["s"]),
            N("LayerNormalization", ["s", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
            N("Softmax", ["n"], ["p"], axis=-1), N("Gelu", ["p"], ["y"])], []


def m5_torch(W, attn="sdpa"):
    torch, F = _torch()

    class M5(torch.nn.Module):
        def forward(self, x, r, g, b):
            return F.gelu(torch.softmax(F.layer_norm(x + r, (x.shape[-1],), g, b, 1e-5), dim=-1))

    return M5()


# ------------------------------------------------------------- specs --

def _seed_spec(name):
    s = dict(bench_seed.MODELS[name])
    s["opset"] = 17
    s["torch"] = lambda W, attn="sdpa", _n=name: bench_seed.torch_module(_n, W)
    s["notes"] = "bench_seed.py's builder, unchanged"
    return s


def _cross(outer, inner):
    return [dict(**{outer[0]: o}, **{inner[0]: i}) for o in outer[1] for i in inner[1]]


MODELS = {
    "S1": _seed_spec("S1"),
    "S2": _seed_spec("S2"),
    "S3": _seed_spec("S3"),
    "M1": dict(desc="MLP 1024->4096->GELU->1024 + LayerNorm on [B,1024]",
               inputs=[("x", ["B", 1024])], outputs=["y"], ranges={"B": (1, 256, 4096)},
               sweep=[{"B": b} for b in (1, 7, 64, 255, 256, 257, 1000, 4096)], small={"B": 7},
               opset=20, weights=m1_weights, onnx=m1_onnx, torch=m1_torch,
               notes="Gelu op (opset 20), LayerNormalization (opset 17+)"),
    "M2": dict(desc="BERT-base encoder layer, post-LN (d 768, 12 heads, FFN 3072) on [B,S,768]",
               inputs=[("x", ["B", "S", 768])], outputs=["y"], ranges={"B": (1, 8, 64), "S": (16, 128, 512)},
               sweep=_cross(("B", (1, 8, 32)), ("S", (16, 17, 100, 128, 129, 384, 512))), small={"B": 1, "S": 17},
               opset=20, weights=m2_weights, onnx=m2_onnx, torch=m2_torch,
               notes="head split/merge as Reshape [0,0,12,64] / [0,0,768] (no Shape op); no attention mask"),
    "M3": dict(desc="ResNet-style CNN: 7x7/2 stem+BN+ReLU, maxpool 3/2/1, 2 residual 3x3 blocks (64 ch), GAP, FC 1000",
               inputs=[("x", ["B", 3, "H", "W"])], outputs=["y"],
               ranges={"B": (1, 8, 32), "H": (128, 224, 512), "W": (128, 224, 512)},
               sweep=[{"B": b, "H": h, "W": h} for b, h in ((1, 224), (8, 224), (4, 320), (8, 225), (32, 512))],
               small={"B": 1, "H": 129, "W": 129},
               opset=20, weights=m3_weights, onnx=m3_onnx, torch=m3_torch,
               notes="H and W are separate symbols (the engine does not assume H = W)"),
    "M4": dict(desc="decoder block: RMSNorm, QKV, causal attention (mask from S), SwiGLU (d 1024, 16 heads, FFN 2816)",
               inputs=[("x", ["B", "S", 1024])], outputs=["y"], ranges={"B": (1, 4, 16), "S": (1, 512, 2048)},
               sweep=_cross(("B", (1, 4)), ("S", (1, 17, 128, 512, 2048))), small={"B": 1, "S": 17},
               opset=20, weights=m4_weights, onnx=m4_onnx, torch=m4_torch,
               notes="RMSNorm as Mul/ReduceMean/Add/Sqrt/Div/Mul (RMSNormalization is opset 23); causal mask as "
                     "Shape->Gather->Range->Unsqueeze->Greater->Where(-inf); heads via Reshape [0,0,16,64]"),
    "M5": dict(desc="fusion micro-benchmark: GELU(softmax(LayerNorm(x + r))) on [rows, hidden]",
               inputs=[("x", ["R", "H"]), ("r", ["R", "H"]), ("g", ["H"]), ("b", ["H"])], outputs=["y"],
               ranges={"R": (1, 4096, 65536), "H": (64, 768, 8192)},
               sweep=[{"R": 4096, "H": h} for h in (64, 767, 768, 1000, 4096, 8192)], small={"R": 5, "H": 67},
               opset=20, weights=m5_weights, onnx=m5_onnx, torch=m5_torch,
               notes="LN scale/shift are inputs g, b of shape [H] (an initializer cannot have a dynamic size); "
                     "sweep at rows = 4096 (opt) since docs/BENCHMARKS-SUITE.md sweeps hidden only"),
}

# --quick: a few points per model
QUICK = {"S1": [0, 4], "S2": [0, 5], "S3": [0, 5], "M1": [0, 4, 7], "M2": [0, 11, 20], "M3": [0, 4],
         "M4": [1, 8], "M5": [0, 5]}
