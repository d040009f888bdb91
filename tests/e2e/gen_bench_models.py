#!/usr/bin/env python3
"""Writes docs/BENCHMARKS-SUITE.md's seed and model patterns as ONNX, at small widths, for the
end-to-end test (test_onnx_models.py). Built with onnx.helper and seeded
random weights, so no download is needed.

  s2_scores  S2: q @ k^T on [1, 12, S, 64]
  s3_conv    S3: conv 3->16 3x3 pad 1 + ReLU on symbolic H, W
  m1_mlp     M1: Linear -> GELU -> Linear + residual + LayerNorm (64 -> 256 -> 64)
  m3_cnn     M3: 7x7/2 stem, BatchNorm, ReLU, maxpool 3/2/1, two residual 3x3
             blocks, global average pool, FC, on H, W in [128, 512]
  swin_window  torchvision's Swin shifted-window attention block at 8x8 tokens
  gqa_rope   a Llama decoder's attention half: RMS norm, rotary embeddings, grouped-query K and V
             (the rest: the comments in main)

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
    # attention patterns the CUDA target fuses into one flash-attention kernel
    # (cuda_emit_attention.c): a BERT-style layer with a broadcast padding mask
    # (D 64), a causal decoder (Range/Greater/Where -inf, D 128) on the tensor-
    # core kernel, and rank-3 operands with K given already transposed and a
    # computed bool mask (D 12, Dv 48: the SIMT kernel); sequence lengths cross
    # 64-key tiles
    def heads(x, nh, hd, pre, perm):
        return [N("Reshape", [x, f"{pre}_shape"], [pre + "_r"]), N("Transpose", [pre + "_r"], [pre + "_h"], perm=perm)]

    def qkv(dm, pre=""):
        nodes = []
        for n in ("q", "k", "v"):
            nodes += [N("MatMul", ["x", pre + "w" + n], [n + "0"]), N("Add", [n + "0", pre + "b" + n], [n + "1"])]
        inits = []
        for n in ("q", "k", "v"):
            inits += [w(pre + "w" + n, [dm, dm], 0.2), w(pre + "b" + n, [dm])]
        return nodes, inits

    dm = 128
    nodes, inits = qkv(dm)
    for n in ("q", "k", "v"):
        nodes += heads(n + "1", 2, 64, n, [0, 2, 1, 3])
    nodes += [N("Transpose", ["k_h"], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", ["q_h", "kt"], ["s0"]),
              N("Mul", ["s0", "scale"], ["s1"]), N("Add", ["s1", "mask"], ["s2"]), N("Softmax", ["s2"], ["p"], axis=-1),
              N("MatMul", ["p", "v_h"], ["c0"]), N("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]),
              N("Reshape", ["c1", "merge_shape"], ["y"])]
    inits += [numpy_helper.from_array(np.array([0, 0, 2, 64], np.int64), n + "_shape") for n in ("q", "k", "v")]
    inits += [numpy_helper.from_array(np.array([0, 0, dm], np.int64), "merge_shape"),
              numpy_helper.from_array(np.array(0.125, np.float32), "scale")]
    save(out, "m2_attn", nodes, [vi("x", F, ["Ba", "Sa", dm]), vi("mask", F, ["Ba", 1, 1, "Sa"])], ["y"], inits)

    dm = 256
    nodes, inits = qkv(dm)
    for n in ("q", "k", "v"):
        nodes += heads(n + "1", 2, 128, n, [0, 2, 1, 3])
    nodes += [N("Shape", ["x"], ["xs"]), N("Gather", ["xs", "i1"], ["S"], axis=0),
              N("Range", ["i0", "S", "i1"], ["pos"]), N("Unsqueeze", ["pos", "ax1"], ["rows"]),
              N("Unsqueeze", ["pos", "ax0"], ["cols"]), N("Greater", ["cols", "rows"], ["masked"]),
              N("Transpose", ["k_h"], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", ["q_h", "kt"], ["s0"]),
              N("Div", ["s0", "scale"], ["s1"]), N("Where", ["masked", "neginf", "s1"], ["s2"]),
              N("Softmax", ["s2"], ["p"], axis=-1), N("MatMul", ["p", "v_h"], ["c0"]),
              N("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]), N("Reshape", ["c1", "merge_shape"], ["c2"]),
              N("Add", ["c2", "x"], ["y"])]
    inits += [numpy_helper.from_array(np.array([0, 0, 2, 128], np.int64), n + "_shape") for n in ("q", "k", "v")]
    inits += [numpy_helper.from_array(np.array([0, 0, dm], np.int64), "merge_shape"),
              numpy_helper.from_array(np.array(128 ** 0.5, np.float32), "scale"),
              numpy_helper.from_array(np.array(-np.inf, np.float32), "neginf"),
              numpy_helper.from_array(np.array(0, np.int64), "i0"), numpy_helper.from_array(np.array(1, np.int64), "i1"),
              numpy_helper.from_array(np.array([0], np.int64), "ax0"),
              numpy_helper.from_array(np.array([1], np.int64), "ax1")]
    save(out, "m4_causal", nodes, [vi("x", F, ["Ba", "Sa", dm])], ["y"], inits)

    # timm's attention (ViT, Swin): one qkv projection reshaped to [B, S, 3, H, D], permuted (2, 0, 3, 1,
    # 4) and unbound (Split along axis 0, Squeeze), Q scaled before the score matmul; the compiler
    # rewrites the unbind into a split the fused attention reads in place and takes the scale into it
    dm = 128
    nodes = [N("MatMul", ["x", "wqkv"], ["qkv0"]), N("Add", ["bqkv", "qkv0"], ["qkv"]),
             N("Shape", ["x"], ["xs"]), N("Gather", ["xs", "i0"], ["B"], axis=0), N("Gather", ["xs", "i1"], ["S"], axis=0),
             N("Unsqueeze", ["B", "ax0"], ["Bu"]), N("Unsqueeze", ["S", "ax0"], ["Su"]),
             N("Concat", ["Bu", "Su", "heads5"], ["shape5"], axis=0), N("Reshape", ["qkv", "shape5"], ["qkv5"]),
             N("Transpose", ["qkv5"], ["qkvt"], perm=[2, 0, 3, 1, 4]),
             N("Split", ["qkvt", "ones3"], ["qs", "ks", "vs"], axis=0),
             N("Squeeze", ["qs", "ax0"], ["q"]), N("Squeeze", ["ks", "ax0"], ["k"]), N("Squeeze", ["vs", "ax0"], ["v"]),
             N("Mul", ["q", "scale"], ["qsc"]), N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             N("MatMul", ["qsc", "kt"], ["s0"]), N("Softmax", ["s0"], ["p"], axis=-1), N("MatMul", ["p", "v"], ["c0"]),
             N("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]), N("Reshape", ["c1", "merge_shape"], ["c2"]),
             N("MatMul", ["c2", "wo"], ["o0"]), N("Add", ["o0", "x"], ["y"])]
    inits = [w("wqkv", [dm, 3 * dm], 0.2), w("bqkv", [3 * dm]), w("wo", [dm, dm], 0.2),
             numpy_helper.from_array(np.array([3, 2, 64], np.int64), "heads5"),
             numpy_helper.from_array(np.array([1, 1, 1], np.int64), "ones3"),
             numpy_helper.from_array(np.array([0, 0, dm], np.int64), "merge_shape"),
             numpy_helper.from_array(np.array(64 ** -0.5, np.float32), "scale"),
             numpy_helper.from_array(np.array(0, np.int64), "i0"), numpy_helper.from_array(np.array(1, np.int64), "i1"),
             numpy_helper.from_array(np.array([0], np.int64), "ax0")]
    save(out, "attn_unbind", nodes, [vi("x", F, ["Ba", "Sa", dm])], ["y"], inits)

    # torchvision's Swin shifted-window attention (shifted_window_attention) at 8x8 tokens, window 4,
    # shift 2, 2 heads of 32: torch.roll as slices and concats, the window partition, the qkv unbind
    # by Gather, q * scale, the relative-position bias gathered from its table (constants: folded),
    # the scores viewed as [B, windows, heads, 16, 16] for the shifted-window mask [1, 4, 1, 16, 16]
    # (0 / -100) and viewed back, then the windows merged and rolled back, plus a residual, and the
    # patch merge. The fused attention reads the mask at window b0 mod 4.
    C, heads, ws, sh, side = 64, 2, 4, 2, 8
    nw, tok = (side // ws) ** 2, ws * ws
    mask = np.zeros((side, side), np.float32)
    cnt = 0
    for hs in ((0, -ws), (-ws, -sh), (-sh, None)):
        for wsl in ((0, -ws), (-ws, -sh), (-sh, None)):
            mask[hs[0]:hs[1], wsl[0]:wsl[1]] = cnt
            cnt += 1
    mask = mask.reshape(side // ws, ws, side // ws, ws).transpose(0, 2, 1, 3).reshape(nw, tok)
    mask = mask[:, None, :] - mask[:, :, None]
    mask = np.where(mask != 0, -100.0, 0.0).astype(np.float32).reshape(1, nw, 1, tok, tok)
    coords = np.stack(np.meshgrid(np.arange(ws), np.arange(ws), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (ws - 1)
    rel_index = (rel[:, :, 0] * (2 * ws - 1) + rel[:, :, 1]).reshape(-1).astype(np.int64)

    def i64(name, vals):
        return numpy_helper.from_array(np.array(vals, np.int64), name)

    def roll(src, dst, axis, k):  # torch.roll(src, -k) along axis of size side, as torch.export writes it
        return [N("Slice", [src, dst + "_b0", dst + "_e0", dst + "_ax"], [dst + "_hi"]),
                N("Slice", [src, dst + "_b1", dst + "_e1", dst + "_ax"], [dst + "_lo"]),
                N("Concat", [dst + "_hi", dst + "_lo"], [dst], axis=axis)]

    def roll_inits(dst, axis, k):
        return [i64(dst + "_b0", [k]), i64(dst + "_e0", [side]), i64(dst + "_b1", [0]), i64(dst + "_e1", [k]),
                i64(dst + "_ax", [axis])]

    nodes = roll("x", "r1", 1, sh) + roll("r1", "r2", 2, sh) + [
        N("Reshape", ["r2", "part6"], ["p6"]), N("Transpose", ["p6"], ["p6t"], perm=[0, 1, 3, 2, 4, 5]),
        N("Reshape", ["p6t", "win3"], ["xw"]),
        N("MatMul", ["xw", "wqkv"], ["qkv0"]), N("Add", ["qkv0", "bqkv"], ["qkv"]),
        N("Reshape", ["qkv", "heads5"], ["qkv5"]), N("Transpose", ["qkv5"], ["qkvt"], perm=[2, 0, 3, 1, 4]),
        N("Gather", ["qkvt", "g0"], ["q"], axis=0), N("Gather", ["qkvt", "g1"], ["k"], axis=0),
        N("Gather", ["qkvt", "g2"], ["v"], axis=0),
        N("Mul", ["q", "scale"], ["qs"]), N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        N("MatMul", ["qs", "kt"], ["s0"]),
        N("Gather", ["rel_table", "rel_index"], ["rb0"], axis=0), N("Reshape", ["rb0", "rb_shape"], ["rb1"]),
        N("Transpose", ["rb1"], ["rb2"], perm=[2, 0, 1]), N("Unsqueeze", ["rb2", "ax0"], ["rb"]),
        N("Add", ["s0", "rb"], ["s1"]),
        N("Reshape", ["s1", "score5"], ["s5"]), N("Add", ["s5", "win_mask"], ["s5m"]),
        N("Reshape", ["s5m", "score4"], ["s2"]),
        N("Softmax", ["s2"], ["p"], axis=-1), N("MatMul", ["p", "v"], ["c0"]),
        N("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]), N("Reshape", ["c1", "win3"], ["c2"]),
        N("MatMul", ["c2", "wo"], ["o0"]), N("Add", ["o0", "bo"], ["o1"]),
        N("Reshape", ["o1", "part6"], ["m6"]), N("Transpose", ["m6"], ["m6t"], perm=[0, 1, 3, 2, 4, 5]),
        N("Reshape", ["m6t", "img4"], ["o2"])] + roll("o2", "u1", 1, side - sh) + roll("u1", "u2", 2, side - sh) + [
        N("Add", ["u2", "x"], ["blk"])]
    # the patch merge after it: cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
    # (a space-to-depth: one transpose)
    for hname, h0 in (("he", 0), ("ho", 1)):
        nodes.append(N("Slice", ["blk", f"st{h0}", "send", "ax1", "two"], [hname]))
    for part, (hname, w0) in enumerate((("he", 0), ("ho", 0), ("he", 1), ("ho", 1))):
        nodes.append(N("Slice", [hname, f"st{w0}", "send", "ax2", "two"], [f"pm{part}"]))
    nodes.append(N("Concat", [f"pm{p}" for p in range(4)], ["y"], axis=-1))
    inits = [w("wqkv", [C, 3 * C], 0.2), w("bqkv", [3 * C]), w("wo", [C, C], 0.2), w("bo", [C]),
             w("rel_table", [(2 * ws - 1) ** 2, heads], 1.0), i64("rel_index", rel_index),
             i64("rb_shape", [tok, tok, heads]), i64("ax0", [0]),
             i64("part6", [-1, side // ws, ws, side // ws, ws, C]), i64("win3", [-1, tok, C]),
             i64("heads5", [-1, tok, 3, heads, C // heads]), i64("g0", 0), i64("g1", 1), i64("g2", 2),
             numpy_helper.from_array(np.array((C // heads) ** -0.5, np.float32), "scale"),
             i64("score5", [-1, nw, heads, tok, tok]), i64("score4", [-1, heads, tok, tok]),
             numpy_helper.from_array(mask, "win_mask"), i64("img4", [-1, side, side, C]),
             i64("st0", [0]), i64("st1", [1]), i64("send", [2 ** 63 - 1]), i64("ax1", [1]), i64("ax2", [2]),
             i64("two", [2])]
    inits += roll_inits("r1", 1, sh) + roll_inits("r2", 2, sh) + roll_inits("u1", 1, side - sh) + \
        roll_inits("u2", 2, side - sh)
    save(out, "swin_window", nodes, [vi("x", F, ["Ba", side, side, C])], ["y"], inits)

    # a Llama decoder's attention half at small widths: the RMS norm as torch.onnx writes it (Pow,
    # ReduceMean, Add, Sqrt, Div, Mul, Mul), q/k/v projections into 4 query heads over 2 kv heads of
    # 16, rotary embeddings (positions from a Range, rotate_half as two Slices, a Neg and a Concat),
    # repeat_kv (Unsqueeze, Expand, Reshape), a causal mask, the output projection and a residual.
    # The compiler folds the norm into rms_norm, rotate_half into a gather times a sign, and the
    # fused attention reads K and V before the expand (kv head b1 / 2).
    dm, hq, hk, hd = 64, 4, 2, 16

    def rope(src, dst):
        return [N("Slice", [src, "h_lo", "h_hi", "ax_last"], [dst + "_x2"]),
                N("Slice", [src, "z_lo", "h_lo", "ax_last"], [dst + "_x1"]), N("Neg", [dst + "_x2"], [dst + "_n2"]),
                N("Concat", [dst + "_n2", dst + "_x1"], [dst + "_rh"], axis=-1),
                N("Mul", [src, "cos"], [dst + "_c"]), N("Mul", [dst + "_rh", "sin"], [dst + "_s"]),
                N("Add", [dst + "_c", dst + "_s"], [dst])]

    def proj_heads(n, width, heads):
        return [N("MatMul", ["xn", "w" + n], [n + "0"]), N("Reshape", [n + "0", f"hs{heads}"], [n + "4"]),
                N("Transpose", [n + "4"], [n + "h"], perm=[0, 2, 1, 3])]

    nodes = [N("Pow", ["x", "two_f"], ["sq"]), N("ReduceMean", ["sq"], ["ms"], axes=[-1], keepdims=1),
             N("Add", ["ms", "eps"], ["mse"]), N("Sqrt", ["mse"], ["rms"]), N("Div", ["one_f", "rms"], ["inv"]),
             N("Mul", ["x", "inv"], ["xn0"]), N("Mul", ["wn", "xn0"], ["xn"])]
    nodes += proj_heads("q", hq * hd, hq) + proj_heads("k", hk * hd, hk) + proj_heads("v", hk * hd, hk)
    nodes += [N("Shape", ["x"], ["xs"]), N("Gather", ["xs", "i1"], ["S"], axis=0),
              N("Range", ["i0", "S", "i1"], ["pos_i"]), N("Cast", ["pos_i"], ["pos"], to=F),
              N("Unsqueeze", ["pos", "ax1"], ["pos2"]), N("MatMul", ["pos2", "inv_freq"], ["fr"]),
              N("Concat", ["fr", "fr"], ["emb"], axis=-1), N("Cos", ["emb"], ["cos"]), N("Sin", ["emb"], ["sin"])]
    nodes += rope("qh", "qr") + rope("kh", "kr")
    for n, src in (("kg", "kr"), ("vg", "vh")):
        nodes += [N("Unsqueeze", [src, "ax2"], [n + "5"]), N("Expand", [n + "5", "rep"], [n + "e"]),
                  N("Reshape", [n + "e", "hs_all"], [n])]
    nodes += [N("Unsqueeze", ["pos_i", "ax1"], ["rows"]), N("Unsqueeze", ["pos_i", "ax0"], ["cols"]),
              N("Greater", ["cols", "rows"], ["masked"]),
              N("Transpose", ["kg"], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", ["qr", "kt"], ["s0"]),
              N("Mul", ["s0", "scale"], ["s1"]), N("Where", ["masked", "neginf", "s1"], ["s2"]),
              N("Softmax", ["s2"], ["p"], axis=-1), N("MatMul", ["p", "vg"], ["c0"]),
              N("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]), N("Reshape", ["c1", "merge_shape"], ["c2"]),
              N("MatMul", ["c2", "wo"], ["o0"]), N("Add", ["o0", "x"], ["y"])]
    inits = [w("wq", [dm, hq * hd], 0.2), w("wk", [dm, hk * hd], 0.2), w("wv", [dm, hk * hd], 0.2),
             w("wo", [hq * hd, dm], 0.2), numpy_helper.from_array((1 + 0.1 * rng.standard_normal(dm)).astype(np.float32), "wn"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two_f"),
             numpy_helper.from_array(np.array(1e-6, np.float32), "eps"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one_f"),
             numpy_helper.from_array(np.array([0, 0, hq, hd], np.int64), f"hs{hq}"),
             numpy_helper.from_array(np.array([0, 0, hk, hd], np.int64), f"hs{hk}"),
             numpy_helper.from_array(np.array([0, hq, -1, hd], np.int64), "hs_all"),
             numpy_helper.from_array(np.array([1, 1, hq // hk, 1, 1], np.int64), "rep"),
             numpy_helper.from_array(np.array([0, 0, hq * hd], np.int64), "merge_shape"),
             numpy_helper.from_array(np.array([[10000.0 ** (-2 * i / hd) for i in range(hd // 2)]], np.float32),
                                     "inv_freq"),
             numpy_helper.from_array(np.array(hd ** -0.5, np.float32), "scale"),
             numpy_helper.from_array(np.array(-np.inf, np.float32), "neginf"),
             numpy_helper.from_array(np.array(0, np.int64), "i0"), numpy_helper.from_array(np.array(1, np.int64), "i1"),
             numpy_helper.from_array(np.array([0], np.int64), "ax0"),
             numpy_helper.from_array(np.array([1], np.int64), "ax1"),
             numpy_helper.from_array(np.array([2], np.int64), "ax2"),
             numpy_helper.from_array(np.array([-1], np.int64), "ax_last"),
             numpy_helper.from_array(np.array([0], np.int64), "z_lo"),
             numpy_helper.from_array(np.array([hd // 2], np.int64), "h_lo"),
             numpy_helper.from_array(np.array([hd], np.int64), "h_hi")]
    save(out, "gqa_rope", nodes, [vi("x", F, ["Ba", "Sa", dm])], ["y"], inits)

    save(out, "attn3d", [
        N("MatMul", ["q", "kt"], ["s0"]), N("Greater", ["m", "thr"], ["drop"]),
        N("Where", ["drop", "big_neg", "s0"], ["s1"]), N("Softmax", ["s1"], ["p"], axis=-1),
        N("MatMul", ["p", "v"], ["y"])],
        [vi("q", F, ["Ba", "Sa", 12]), vi("kt", F, ["Ba", 12, "Sa"]), vi("v", F, ["Ba", "Sa", 48]),
         vi("m", F, ["Ba", "Sa", "Sa"])], ["y"],
        [numpy_helper.from_array(np.array(0.7, np.float32), "thr"),
         numpy_helper.from_array(np.array(-1e9, np.float32), "big_neg")])
    print(f"gen_bench_models.py: wrote 12 models to {out}")


if __name__ == "__main__":
    main()
