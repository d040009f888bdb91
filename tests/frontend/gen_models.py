#!/usr/bin/env python3
"""Writes the ONNX models the importer tests read (tests/frontend/test_onnx_import.c).

Usage: gen_models.py OUTDIR

One small model per op family, built with onnx.helper so the tests need no
downloaded weights, plus models for each error the importer must report
(unsupported op, missing ranges, bad external data paths, ...). Every model
except the deliberately broken ones passes onnx.checker. A missing `onnx`
package is a failure, not a skip: it is a declared test dependency
(scripts/deps.sh).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def out(name):
    return helper.make_empty_tensor_value_info(name)


def ints(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def floats(name, shape, seed=0):
    rng = np.random.default_rng(seed)
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


def model(nodes, inputs, outputs, inits=(), opset=17, name="g", check=True):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    if check:
        # strict inference fills in the outputs' types and catches a wrong
        # test model here rather than as a confusing importer failure
        m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
        onnx.checker.check_model(m)
    return m


N = helper.make_node


def vit_patch():
    """PyTorch-style ViT: cls token expanded to the batch, qkv projection and
    a reshape whose target shape comes from Shape -> Gather -> Concat."""
    nodes = [
        N("Shape", ["x"], ["s"], name="shape_x"),
        N("Gather", ["s", "i0"], ["b"], axis=0, name="batch"),
        N("Unsqueeze", ["b", "ax0"], ["b1"], name="unsq_b"),
        N("Concat", ["b1", "one_768"], ["cls_shape"], axis=0, name="cls_shape"),
        N("Expand", ["cls", "cls_shape"], ["cls_b"], name="expand_cls"),
        N("Concat", ["cls_b", "x"], ["tokens"], axis=1, name="cat_tokens"),
        N("MatMul", ["tokens", "w_qkv"], ["qkv"], name="qkv_proj"),
        N("Shape", ["qkv"], ["s2"], name="shape_qkv"),
        N("Gather", ["s2", "i0"], ["b2"], axis=0, name="g0"),
        N("Gather", ["s2", "i1"], ["n2"], axis=0, name="g1"),
        N("Unsqueeze", ["b2", "ax0"], ["b2u"], name="u0"),
        N("Unsqueeze", ["n2", "ax0"], ["n2u"], name="u1"),
        N("Concat", ["b2u", "n2u", "heads"], ["qkv_shape"], axis=0, name="cat_shape"),
        N("Reshape", ["qkv", "qkv_shape"], ["qkv5"], name="reshape_qkv"),
    ]
    inits = [ints("i0", 0), ints("i1", 1), ints("ax0", [0]), ints("one_768", [1, 768]),
             floats("cls", [1, 1, 768]), floats("w_qkv", [768, 2304]), ints("heads", [3, 12, -1])]
    return model(nodes, [vi("x", F, ["B", 196, 768])], [out("qkv5")], inits)


def conv_pool():
    """Conv (plain, grouped, depthwise, SAME_UPPER with stride 2), batch norm,
    pooling (ceil mode, average, global), flatten, gemm on symbolic H, W."""
    nodes = [
        N("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv1"),
        N("BatchNormalization", ["c1", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], epsilon=1e-3, name="bn1"),
        N("Relu", ["bn"], ["r1"], name="relu1"),
        N("Conv", ["r1", "wg"], ["cg"], pads=[1, 1, 1, 1], group=4, name="conv_grouped"),
        N("Conv", ["cg", "wd"], ["cd"], pads=[1, 1, 1, 1], group=16, name="conv_depthwise"),
        N("MaxPool", ["cd"], ["mp"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1, name="pool_ceil"),
        N("AveragePool", ["mp"], ["ap"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1],
          count_include_pad=1, name="avgpool"),
        N("Conv", ["ap", "ws"], ["cs"], auto_pad="SAME_UPPER", strides=[2, 2], name="conv_same"),
        N("GlobalAveragePool", ["cs"], ["gap"], name="gap"),
        N("Flatten", ["gap"], ["flat"], axis=1, name="flatten"),
        N("Gemm", ["flat", "wfc", "bfc"], ["logits"], transB=1, name="fc"),
        N("MaxPool", ["x"], ["mp_same"], kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_LOWER",
          name="pool_same"),
        N("Conv", ["x", "w1"], ["c_valid"], auto_pad="VALID", dilations=[2, 2], name="conv_valid"),
    ]
    inits = [floats("w1", [16, 3, 3, 3]), floats("b1", [16]), floats("bn_s", [16]), floats("bn_b", [16]),
             floats("bn_m", [16]), numpy_helper.from_array(np.ones(16, np.float32), "bn_v"),
             floats("wg", [16, 4, 3, 3]), floats("wd", [16, 1, 3, 3]), floats("ws", [8, 16, 3, 3]),
             floats("wfc", [10, 8]), floats("bfc", [10])]
    return model(nodes, [vi("x", F, ["N", 3, "H", "W"])],
                 [out("logits"), out("mp_same"), out("c_valid")], inits)


def attention():
    """A transformer block: dim_param batch and seq, heads split with a
    Shape-derived Reshape, causal mask from Range/Less/Where, softmax, a
    residual and LayerNormalization."""
    d, h = 64, 4
    nodes = [
        N("MatMul", ["x", "wq"], ["q"]), N("MatMul", ["x", "wk"], ["k"]), N("MatMul", ["x", "wv"], ["v"]),
        N("Shape", ["x"], ["sx"]),
        N("Gather", ["sx", "i0"], ["bs"], axis=0), N("Gather", ["sx", "i1"], ["sq"], axis=0),
        N("Unsqueeze", ["bs", "ax0"], ["bsu"]), N("Unsqueeze", ["sq", "ax0"], ["squ"]),
        N("Concat", ["bsu", "squ", "hd"], ["split_shape"], axis=0),
        N("Reshape", ["q", "split_shape"], ["q4"]), N("Reshape", ["k", "split_shape"], ["k4"]),
        N("Reshape", ["v", "split_shape"], ["v4"]),
        N("Transpose", ["q4"], ["qt"], perm=[0, 2, 1, 3]), N("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        N("Transpose", ["v4"], ["vt"], perm=[0, 2, 1, 3]),
        N("MatMul", ["qt", "kt"], ["scores"]), N("Div", ["scores", "scale"], ["scaled"]),
        N("Range", ["zero", "sq", "one"], ["pos"], name="positions"),
        N("Unsqueeze", ["pos", "ax0"], ["row"]), N("Unsqueeze", ["pos", "ax1"], ["col"]),
        N("Less", ["col", "row"], ["future"], name="causal"),
        N("Where", ["future", "neg_inf", "scaled"], ["masked"]),
        N("Softmax", ["masked"], ["probs"], axis=-1),
        N("MatMul", ["probs", "vt"], ["ctx"]), N("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        N("Concat", ["bsu", "squ", "dm"], ["merge_shape"], axis=0),
        N("Reshape", ["ctx_t", "merge_shape"], ["merged"]),
        N("MatMul", ["merged", "wo"], ["proj"]), N("Add", ["proj", "x"], ["res"]),
        N("LayerNormalization", ["res", "ln_s", "ln_b"], ["y"], axis=-1, epsilon=1e-5, name="ln"),
    ]
    inits = [floats("wq", [d, d], 1), floats("wk", [d, d], 2), floats("wv", [d, d], 3), floats("wo", [d, d], 4),
             ints("i0", 0), ints("i1", 1), ints("ax0", [0]), ints("ax1", [1]), ints("hd", [h, d // h]),
             ints("dm", [d]), ints("zero", 0), ints("one", 1),
             numpy_helper.from_array(np.array(4.0, np.float32), "scale"),
             numpy_helper.from_array(np.array(-1e9, np.float32), "neg_inf"),
             floats("ln_s", [d], 5), floats("ln_b", [d], 6)]
    return model(nodes, [vi("x", F, ["batch", "seq", d])], [out("y")], inits)


def hf_mask(form, fill=None):
    """Two attention layers sharing one padding mask built from a runtime attention_mask [batch, seq]
    (int64, 1 = token, 0 = padding) the way transformers 5's eager attention exports it
    (torch.onnx.export, dynamo=False): the mask is gathered from the flattened attention_mask by
    batch * seq + key index, and-ed with a query-side piece (query index >= 0: a greater_equal
    behind a bool cast, [1, 1, seq, 1]) and a constant true, expanded to [batch, 1, seq, seq] and
    made additive by where(mask, 0, float32 min) (form "pad"); "causal_pad" ands in key <= query
    (GPT-2 and Llama with a padding mask); "bool_where" keeps the scores where the expanded mask
    holds and puts float32 min elsewhere (masked_fill). The CUDA target's fused attention reads the
    pieces behind the where, expand and ands: once, one of them was computed inside another
    kernel and never stored, so the GPU read memory nothing wrote (issue 29). fill replaces float32
    min: -1e9 is the masked_fill of hand-written transformers, whose fully masked rows put the
    half kernel's row max near -1e9 (its probabilities then by a subtraction, h16_softmax)."""
    d, h = 64, 2
    fmin = float(np.finfo(np.float32).min) if fill is None else fill
    nodes = [
        N("Shape", ["attention_mask"], ["ms"]),
        N("Gather", ["ms", "i0"], ["bs"], axis=0), N("Gather", ["ms", "i1"], ["sq"], axis=0),
        N("Range", ["zero", "bs", "one"], ["bidx"]), N("Range", ["zero", "sq", "one"], ["pos"]),
        N("Unsqueeze", ["bidx", "ax123"], ["b4"]),  # [B, 1, 1, 1]
        N("Unsqueeze", ["pos", "ax012"], ["k4"]),  # [1, 1, 1, S] key index
        N("Unsqueeze", ["pos", "ax013"], ["q4"]),  # [1, 1, S, 1] query index
        N("Cast", ["attention_mask"], ["mb"], to=TensorProto.BOOL),
        N("Flatten", ["mb"], ["mflat"], axis=2),  # [B * S, 1]
        N("Mul", ["b4", "sq"], ["boff"]), N("Add", ["k4", "boff"], ["gidx"]),  # [B, 1, 1, S]
        N("Gather", ["mflat", "gidx"], ["g5"], axis=0),  # [B, 1, 1, S, 1]
        N("Shape", ["gidx"], ["gshape"]), N("Reshape", ["g5", "gshape"], ["pad4"]),
        N("Cast", ["pad4"], ["pad"], to=TensorProto.BOOL),
        N("GreaterOrEqual", ["q4", "zero"], ["qok"]), N("Cast", ["qok"], ["qokb"], to=TensorProto.BOOL),
        N("ConstantOfShape", ["empty"], ["true"], value=helper.make_tensor("v", TensorProto.BOOL, [1], [True])),
        N("And", ["true", "qokb"], ["q_and"]),
    ]
    if form == "causal_pad":
        nodes += [N("LessOrEqual", ["k4", "q4"], ["causal"]), N("And", ["q_and", "causal"], ["q_and2"]),
                  N("And", ["q_and2", "pad"], ["allowed"])]
    else:
        nodes.append(N("And", ["q_and", "pad"], ["allowed"]))
    nodes += [
        N("Unsqueeze", ["bs", "ax0"], ["bsu"]), N("Unsqueeze", ["sq", "ax0"], ["squ"]),
        N("Concat", ["bsu", "one1", "squ", "squ"], ["mshape"], axis=0),
        N("Expand", ["allowed", "mshape"], ["allowed4"]),
    ]
    if form != "bool_where":
        nodes.append(N("Where", ["allowed4", "fzero", "fmin"], ["addmask"]))
    x = "x"
    for layer in range(2):
        p = f"l{layer}_"
        nodes += [
            N("MatMul", [x, p + "wq"], [p + "q"]), N("MatMul", [x, p + "wk"], [p + "k"]),
            N("MatMul", [x, p + "wv"], [p + "v"]),
            N("Concat", ["bsu", "squ", "hd"], [p + "split"], axis=0),
            N("Reshape", [p + "q", p + "split"], [p + "q4"]), N("Reshape", [p + "k", p + "split"], [p + "k4"]),
            N("Reshape", [p + "v", p + "split"], [p + "v4"]),
            N("Transpose", [p + "q4"], [p + "qt"], perm=[0, 2, 1, 3]),
            N("Transpose", [p + "k4"], [p + "kt"], perm=[0, 2, 3, 1]),
            N("Transpose", [p + "v4"], [p + "vt"], perm=[0, 2, 1, 3]),
            N("MatMul", [p + "qt", p + "kt"], [p + "s"]), N("Mul", [p + "s", "scale"], [p + "ss"]),
        ]
        if form == "bool_where":
            nodes.append(N("Where", ["allowed4", p + "ss", "fmin"], [p + "sm"]))
        else:
            nodes.append(N("Add", [p + "ss", "addmask"], [p + "sm"]))
        nodes += [
            N("Softmax", [p + "sm"], [p + "pr"], axis=-1),
            N("MatMul", [p + "pr", p + "vt"], [p + "ctx"]),
            N("Transpose", [p + "ctx"], [p + "ctxt"], perm=[0, 2, 1, 3]),
            N("Concat", ["bsu", "squ", "dm"], [p + "merge"], axis=0),
            N("Reshape", [p + "ctxt", p + "merge"], [p + "mg"]),
            N("MatMul", [p + "mg", p + "wo"], [p + "o"]), N("Add", [p + "o", x], [p + "res"]),
            N("LayerNormalization", [p + "res", "ln_s", "ln_b"], [p + "y" if layer == 0 else "y"], axis=-1,
              epsilon=1e-5),
        ]
        x = p + "y"
    inits = [ints("i0", 0), ints("i1", 1), ints("zero", 0), ints("one", 1), ints("one1", [1]),
             ints("ax0", [0]), ints("ax123", [1, 2, 3]), ints("ax012", [0, 1, 2]), ints("ax013", [0, 1, 3]),
             ints("empty", np.zeros([0], np.int64)), ints("hd", [h, d // h]), ints("dm", [d]),
             numpy_helper.from_array(np.array(1 / np.sqrt(d // h), np.float32), "scale"),
             numpy_helper.from_array(np.array(0.0, np.float32), "fzero"),
             numpy_helper.from_array(np.array(fmin, np.float32), "fmin"),
             floats("ln_s", [d], 5), floats("ln_b", [d], 6)]
    for layer in range(2):
        inits += [numpy_helper.from_array((np.random.default_rng(10 * layer + k).standard_normal([d, d]) / 8)
                                          .astype(np.float32), f"l{layer}_w{w}") for k, w in enumerate("qkvo")]
    return model(nodes, [vi("x", F, ["Bk", "Sk", d]), vi("attention_mask", I64, ["Bk", "Sk"])], [out("y")],
                 inits)


def elementwise():
    """Every elementwise op on x[B, 8]; outputs are each op's result."""
    un = ["Sqrt", "Reciprocal", "Neg", "Exp", "Log", "Abs", "Erf", "Tanh", "Sigmoid", "Relu", "HardSwish",
          "Floor", "Ceil", "Sign", "Identity"]
    nodes, outs = [], []
    for op in un:
        nodes.append(N(op, ["x"], [op.lower()]))
        outs.append(op.lower())
    nodes += [
        N("LeakyRelu", ["x"], ["leaky"], alpha=0.1), N("HardSigmoid", ["x"], ["hsig"]),
        N("Dropout", ["x"], ["drop"]),
        N("Add", ["x", "y"], ["add"]), N("Sub", ["x", "y"], ["sub"]), N("Mul", ["x", "row"], ["mul"]),
        N("Div", ["x", "y"], ["div"]), N("Pow", ["x", "two"], ["pow"]),
        N("Mod", ["x", "y"], ["fmod"], fmod=1), N("Mod", ["xi", "yi"], ["imod"]),
        N("Min", ["x", "y", "row"], ["min3"]), N("Max", ["x", "y"], ["max2"]), N("Sum", ["x", "y", "x"], ["sum3"]),
        N("Clip", ["x", "lo", "hi"], ["clip"]), N("Clip", ["x", "", "hi"], ["clip_hi"]),
        N("Equal", ["x", "y"], ["eq"]), N("Less", ["x", "y"], ["lt"]), N("Greater", ["x", "y"], ["gt"]),
        N("LessOrEqual", ["x", "y"], ["le"]), N("GreaterOrEqual", ["x", "y"], ["ge"]),
        N("And", ["lt", "ge"], ["and"]), N("Or", ["lt", "gt"], ["or"]), N("Not", ["eq"], ["not"]),
        N("Where", ["lt", "x", "y"], ["where"]), N("Cast", ["x"], ["cast_i"], to=TensorProto.INT32),
        N("Cast", ["x"], ["cast_h"], to=TensorProto.FLOAT16),
    ]
    outs += ["leaky", "hsig", "drop", "add", "sub", "mul", "div", "pow", "fmod", "imod", "min3", "max2", "sum3",
             "clip", "clip_hi", "eq", "lt", "gt", "le", "ge", "and", "or", "not", "where", "cast_i", "cast_h"]
    inits = [floats("row", [8]), numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(-1.0, np.float32), "lo"),
             numpy_helper.from_array(np.array(1.5, np.float32), "hi")]
    inputs = [vi("x", F, ["B", 8]), vi("y", F, ["B", 8]), vi("xi", I64, ["B", 8]), vi("yi", I64, ["B", 8])]
    return model(nodes, inputs, [out(o) for o in outs], inits)


def gelu():
    nodes = [N("Gelu", ["x"], ["g"]), N("Gelu", ["x"], ["gt"], approximate="tanh")]
    return model(nodes, [vi("x", F, ["B", 8])], [out("g"), out("gt")], opset=20)


def rotary():
    """Llama's rotary embedding: cos/sin of positions x inverse frequencies (from a Range
    over the sequence length), applied as x * cos + rotate_half(x) * sin; plus Tan."""
    half = 8
    nodes = [N("Shape", ["x"], ["xs"]), N("Gather", ["xs", "one"], ["s"], axis=0),
             N("Range", ["zero", "s", "one"], ["pos_i"]), N("Cast", ["pos_i"], ["pos"], to=F),
             N("Unsqueeze", ["pos", "ax1"], ["pos2"]), N("MatMul", ["pos2", "inv"], ["fr"]),
             N("Concat", ["fr", "fr"], ["emb"], axis=-1), N("Cos", ["emb"], ["c"]), N("Sin", ["emb"], ["sn"]),
             N("Split", ["x", "halves"], ["x1", "x2"], axis=-1), N("Neg", ["x2"], ["nx2"]),
             N("Concat", ["nx2", "x1"], ["rh"], axis=-1), N("Mul", ["x", "c"], ["xc"]),
             N("Mul", ["rh", "sn"], ["rs"]), N("Add", ["xc", "rs"], ["y"]),
             N("Mul", ["xt", "third"], ["xt3"]), N("Tan", ["xt3"], ["t"])]
    inv = helper.make_tensor("inv", F, [1, half], [10000.0 ** (-i / half) for i in range(half)])
    inits = [helper.make_tensor("one", TensorProto.INT64, [], [1]),
             helper.make_tensor("zero", TensorProto.INT64, [], [0]), ints("ax1", [1]), ints("halves", [half, half]),
             inv, helper.make_tensor("third", F, [], [0.3])]  # tan away from its poles
    return model(nodes, [vi("x", F, ["B", "S", 2 * half]), vi("xt", F, ["B", 5])], [out("y"), out("t")], inits)


def concat_wide():
    """A concat of more operands than one CUDA kernel's parameters take (torchvision's detection models
    concatenate one tensor per class, 90): x [B, S, 40] split into 40 columns, each scaled by its own
    constant, concatenated in reverse order (the CUDA target writes it in chunks: cuda_emit_move.c)."""
    nodes = [N("Split", ["x", "ones"], [f"c{i}" for i in range(40)], axis=2)]
    nodes += [N("Mul", [f"c{i}", f"k{i}"], [f"m{i}"]) for i in range(40)]
    nodes += [N("Concat", [f"m{i}" for i in reversed(range(40))], ["y"], axis=2)]
    inits = [ints("ones", [1] * 40)] + [numpy_helper.from_array(np.array(i + 1.5, np.float32), f"k{i}")
                                        for i in range(40)]
    return model(nodes, [vi("x", F, ["B", "S", 40])], [out("y")], inits)


def twin_chains():
    """Chains that differ only in their tensors, which the CUDA target emits as one kernel each
    pair (codegen/cuda_kernel.c, cg_kw_finish): x and y through the same scale, shift, tanh and
    product with their own constants, and a layer norm of each with its own weights; a third
    chain on x with a Sub has a kernel of its own."""
    def chain(v, k, op="Add"):
        return [N("Mul", [v, "s" + k], ["m" + k]), N(op, ["m" + k, "b" + k], ["a" + k]),
                N("Tanh", ["a" + k], ["t" + k]), N("Mul", ["t" + k, v], ["o" + k])]
    nodes = chain("x", "1") + chain("y", "2") + chain("x", "3", "Sub")
    nodes += [N("LayerNormalization", ["x", "g1", "h1"], ["n1"], axis=-1),
              N("LayerNormalization", ["y", "g2", "h2"], ["n2"], axis=-1)]
    inits = [floats(n, [16], seed=i) for i, n in enumerate(["s1", "b1", "s2", "b2", "s3", "b3", "g1", "h1", "g2", "h2"])]
    return model(nodes, [vi("x", F, ["B", "S", 16]), vi("y", F, ["B", "S", 16])],
                 [out("o1"), out("o2"), out("o3"), out("n1"), out("n2")], inits)


def dw_res():
    """CNN blocks the CUDA target maps specially: depthwise convolutions (ConvNeXt's 7x7 with a
    bias, MobileNet's 3x3 stride 2, a dilated 5x5 with asymmetric pads, an odd channel count),
    which run on a generated kernel, and a ResNet bottleneck tail conv + bias + residual add +
    ReLU, one cuDNN call (the residual as z); a conv + bias + residual without a ReLU after."""
    nodes = [N("Conv", ["x", "wd7", "bd7"], ["d7"], pads=[3, 3, 3, 3], group=12, name="dw7"),
             N("Conv", ["d7", "wd3", "bd3"], ["d3"], pads=[1, 1, 1, 1], strides=[2, 2], group=12, name="dw3s2"),
             N("Conv", ["d3", "wd5"], ["d5"], pads=[4, 3, 4, 5], dilations=[2, 2], group=12, name="dw5dil"),
             N("Conv", ["d5", "w1", "b1"], ["c1"], name="pw"),
             N("Add", ["c1", "d5"], ["s1"], name="res_add"), N("Relu", ["s1"], ["r1"], name="res_relu"),
             N("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv3x3"),
             N("Add", ["r1", "c2"], ["s2"], name="res_add2"),
             N("Conv", ["x", "wodd"], ["dodd"], pads=[1, 1, 1, 1], group=12, name="dw_plain")]
    inits = [floats("wd7", [12, 1, 7, 7]), floats("bd7", [12]), floats("wd3", [12, 1, 3, 3]), floats("bd3", [12]),
             floats("wd5", [12, 1, 5, 5]), floats("w1", [12, 12, 1, 1]), floats("b1", [12]),
             floats("w2", [12, 12, 3, 3]), floats("b2", [12]), floats("wodd", [12, 1, 3, 3])]
    return model(nodes, [vi("x", F, ["N", 12, "H", "W"])], [out("s2"), out("dodd")], inits)


def convnext_blocks():
    """A ConvNeXt in miniature, for the layout pass (passes/layout.c) and the channels-last
    depthwise kernel: stem conv, channels-last LayerNorm between transposes, blocks of depthwise
    7x7 -> NHWC -> LayerNorm -> Linear -> erf GELU -> Linear -> NCHW -> layer scale (an Identity
    of a shared initializer, as the exporter dedupes them) -> residual add, a downsampling conv
    to an odd channel count (13: one channel per thread), a strided, dilated depthwise 5x5 with
    asymmetric pads in the NHWC stream (behind a transpose pair that cancels), and a pooling head."""
    def block(p, x, c, k, pads, y, scale):
        return [N("Conv", [x, p + "wd", p + "bd"], [p + "d"], pads=pads, group=c, name=p + "dw"),
                N("Transpose", [p + "d"], [p + "t"], perm=[0, 2, 3, 1], name=p + "to_nhwc"),
                N("LayerNormalization", [p + "t", p + "g", p + "b"], [p + "n"], axis=-1, epsilon=1e-6),
                N("MatMul", [p + "n", p + "w1"], [p + "m1"]), N("Add", [p + "m1", p + "b1"], [p + "a1"]),
                N("Div", [p + "a1", "sqrt2"], [p + "q"]), N("Erf", [p + "q"], [p + "e"]),
                N("Add", [p + "e", "one"], [p + "e1"]), N("Mul", [p + "a1", p + "e1"], [p + "h"]),
                N("Mul", [p + "h", "half"], [p + "h2"]),
                N("MatMul", [p + "h2", p + "w2"], [p + "m2"]), N("Add", [p + "m2", p + "b2"], [p + "a2"]),
                N("Transpose", [p + "a2"], [p + "u"], perm=[0, 3, 1, 2], name=p + "to_nchw"),
                N("Mul", [scale, p + "u"], [p + "s"]), N("Add", [p + "s", x], [y])]

    def block_inits(p, c, k, seed):
        return [floats(p + "wd", [c, 1, k, k], seed), floats(p + "bd", [c], seed + 1),
                floats(p + "g", [c], seed + 2), floats(p + "b", [c], seed + 3),
                floats(p + "w1", [c, 4 * c], seed + 4), floats(p + "b1", [4 * c], seed + 5),
                floats(p + "w2", [4 * c, c], seed + 6), floats(p + "b2", [c], seed + 7)]

    nodes = [N("Conv", ["x", "ws", "bs"], ["c0"], kernel_shape=[4, 4], strides=[4, 4], name="stem"),
             N("Transpose", ["c0"], ["c0t"], perm=[0, 2, 3, 1]),
             N("LayerNormalization", ["c0t", "g0", "b0"], ["c0n"], axis=-1, epsilon=1e-6),
             N("Transpose", ["c0n"], ["s0"], perm=[0, 3, 1, 2]),
             N("Identity", ["ls24"], ["ls24b"])]
    nodes += block("A", "s0", 24, 7, [3, 3, 3, 3], "s1", "ls24")
    nodes += block("B", "s1", 24, 7, [3, 3, 3, 3], "s2", "ls24b")
    nodes += [N("Transpose", ["s2"], ["s2t"], perm=[0, 2, 3, 1]),
              N("LayerNormalization", ["s2t", "g1", "b1n"], ["s2n"], axis=-1, epsilon=1e-6),
              N("Transpose", ["s2n"], ["s2c"], perm=[0, 3, 1, 2]),
              N("Conv", ["s2c", "wds", "bds"], ["d0"], kernel_shape=[2, 2], strides=[2, 2], name="down")]
    nodes += block("C", "d0", 13, 3, [1, 1, 1, 1], "s3", "ls13")
    nodes += [N("Transpose", ["s3"], ["s3t"], perm=[0, 2, 3, 1]), N("Transpose", ["s3t"], ["s3c"], perm=[0, 3, 1, 2]),
              N("Conv", ["s3c", "wd5"], ["e0"], pads=[4, 3, 4, 5], strides=[2, 2], dilations=[2, 2], group=13,
                name="dw5s2"),
              N("Transpose", ["e0"], ["e1"], perm=[0, 2, 3, 1]),
              N("LayerNormalization", ["e1", "g2", "b2n"], ["nhwc_out"], axis=-1, epsilon=1e-6),
              N("GlobalAveragePool", ["s3"], ["pool"]), N("Flatten", ["pool"], ["head"])]
    rng = np.random.default_rng(7)
    inits = [floats("ws", [24, 3, 4, 4], 1), floats("bs", [24], 2), floats("g0", [24], 3), floats("b0", [24], 4),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, [24, 1, 1]).astype(np.float32), "ls24"),
             numpy_helper.from_array(rng.uniform(0.5, 1.5, [13, 1, 1]).astype(np.float32), "ls13"),
             numpy_helper.from_array(np.array(2 ** 0.5, np.float32), "sqrt2"),
             numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             numpy_helper.from_array(np.array(0.5, np.float32), "half"),
             floats("g1", [24], 5), floats("b1n", [24], 6), floats("wds", [13, 24, 2, 2], 8), floats("bds", [13], 9),
             floats("wd5", [13, 1, 5, 5], 10), floats("g2", [13], 11), floats("b2n", [13], 12)]
    inits += block_inits("A", 24, 7, 20) + block_inits("B", 24, 7, 30) + block_inits("C", 13, 3, 40)
    # the linear layers' weights at 1/sqrt(fan-in) keep the activations O(1), as trained models' are
    for t in inits:
        if t.name[1:] in ("w1", "w2"):
            a = numpy_helper.to_array(t)
            t.CopyFrom(numpy_helper.from_array((a / np.sqrt(a.shape[0])).astype(np.float32), t.name))
    return model(nodes, [vi("x", F, ["N", 3, "H", "W"])], [out("nhwc_out"), out("head")], inits)


def norms():
    """The normalizations and spatial ops the importer decomposes into existing IR ops:
    LayerNormalization with its Mean/InvStdDev outputs, GroupNormalization (opset 21: per-channel
    scale), InstanceNormalization, LRN, DepthToSpace (DCR and CRD),
    SpaceToDepth, 1-D Conv/MaxPool/AveragePool (run as 2-D) and LpPool; H, W, L symbolic."""
    nodes = [N("LayerNormalization", ["x", "ls", "lb"], ["ln", "lmean", "linv"], axis=-2, epsilon=1e-3),
             N("GroupNormalization", ["x", "gs", "gb"], ["gn"], num_groups=2, epsilon=1e-4),
             N("InstanceNormalization", ["x", "gs", "gb"], ["inn"], epsilon=1e-4),
             N("LRN", ["x"], ["lrn"], size=3, alpha=1e-2, beta=0.7, bias=1.5),
             N("DepthToSpace", ["x"], ["d2s"], blocksize=2, mode="DCR"),
             N("DepthToSpace", ["x"], ["d2c"], blocksize=2, mode="CRD"),
             N("SpaceToDepth", ["d2s"], ["s2d"], blocksize=2),
             N("Conv", ["s", "w1", "b1"], ["c1"], pads=[1, 2], strides=[2], dilations=[2]),
             N("MaxPool", ["s"], ["mp1"], kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1),
             N("AveragePool", ["s"], ["ap1"], kernel_shape=[3], pads=[1, 0], count_include_pad=0),
             N("LpPool", ["x"], ["lp"], kernel_shape=[2, 3], strides=[2, 1], pads=[1, 1, 0, 1], p=3),
             N("LpPool", ["s"], ["lp1"], kernel_shape=[3], auto_pad="SAME_UPPER")]
    inits = [floats("ls", [6], 1), floats("lb", [1, 6], 2), floats("gs", [4], 3), floats("gb", [4], 4),
             floats("w1", [6, 4, 3], 5), floats("b1", [6], 6)]
    outs = ["ln", "lmean", "linv", "gn", "inn", "lrn", "d2s", "d2c", "s2d", "c1", "mp1", "ap1", "lp", "lp1"]
    return model(nodes, [vi("x", F, ["N", 4, "H", 6]), vi("s", F, ["N", 4, "L"])],
                 [vi(o, F, ["N", 4, "H", 6]) if o == "gn" else out(o) for o in outs],
                 inits, opset=21)


def resize_modes():
    """spatial_ref's Resize nodes alone, with the Shape arithmetic of their sizes: every mode of the
    reference kernel, which the CUDA target runs too (codegen/cuda_emit_resize.c), so the GPU test
    compares the two."""
    src = spatial_ref().graph
    keep = [n for n in src.node if n.op_type in ("Resize", "Shape", "Slice", "Mul", "Concat")]
    used = {i for n in keep for i in n.input}
    made = {n.output[0] for n in keep if n.op_type == "Resize"}
    return model(keep, [vi("x", F, ["N", 4, "H", "W"])], [o for o in src.output if o.name in made],
                 [t for t in src.initializer if t.name in used], opset=19)


def spatial_ref():
    """Ops the reference backend runs and the CUDA target refuses (no kernel yet): Resize
    (nearest, linear, cubic, antialias, tf_crop_and_resize; scales give floor(H * scale) over the
    symbols, sizes come from a Shape computation), ConvTranspose (2-D with groups, output_padding
    and pads; 1-D with auto_pad SAME), Pad wrap and CenterCropPad."""
    nodes = [N("Resize", ["x", "", "up"], ["rn"], mode="nearest"),
             N("Resize", ["x", "", "up"], ["ra"], mode="nearest", coordinate_transformation_mode="asymmetric",
               nearest_mode="floor"),
             N("Resize", ["x", "", "down"], ["rl"], mode="linear"),
             N("Resize", ["x", "", "odd"], ["rp"], mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
             N("Resize", ["x", "", "down"], ["raa"], mode="linear", antialias=1),
             N("Resize", ["x", "", "up"], ["rc"], mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1),
             N("Shape", ["x"], ["xs"]), N("Slice", ["xs", "two", "four"], ["hw"]), N("Mul", ["hw", "two"], ["hw2"]),
             N("Slice", ["xs", "zero", "two"], ["nc"]), N("Concat", ["nc", "hw2"], ["sz"], axis=0),
             N("Resize", ["x", "", "", "sz"], ["rs"], mode="cubic", coordinate_transformation_mode="align_corners"),
             N("Resize", ["x", "roi", "", "sz"], ["rt"], mode="linear",
               coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0),
             N("ConvTranspose", ["x", "wt", "bt"], ["ct"], strides=[2, 3], pads=[1, 0, 0, 1], output_padding=[1, 2],
               group=2, dilations=[1, 2]),
             N("ConvTranspose", ["s", "wt1"], ["ct1"], strides=[2], auto_pad="SAME_UPPER"),
             N("Pad", ["x", "pw"], ["pwr"], mode="wrap"),
             N("CenterCropPad", ["x", "ccp"], ["cc"], axes=[1, 3])]
    f = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)  # noqa: E731
    inits = [f("up", [1, 1, 2, 2]), f("down", [1, 1, 0.5, 0.5]), f("odd", [1, 1, 1.5, 0.75]),
             f("roi", [0, 0, 0.2, 0.1, 1, 1, 0.9, 1.13]), ints("two", [2]), ints("four", [4]), ints("zero", [0]),
             floats("wt", [4, 3, 3, 2], 7), floats("bt", [6], 8), floats("wt1", [4, 5, 4], 9),
             ints("pw", [0, 0, 1, 2, 0, 0, 2, 1]), ints("ccp", [6, 3])]
    outs = ["rn", "ra", "rl", "rp", "raa", "rc", "rs", "rt", "ct", "ct1", "pwr", "cc"]
    return model(nodes, [vi("x", F, ["N", 4, "H", "W"]), vi("s", F, ["N", 4, "L"])],
                 [vi(o, F, ["N", 6, "H", 3]) if o == "cc" else out(o) for o in outs],
                 inits, opset=19)


def spatial_seq():
    """Spatial and sequence ops of the reference backend (the CUDA target refuses grid_sample and dft):
    GridSample (4-D bicubic/reflection with align_corners, bilinear/zeros, nearest/border; 5-D
    bilinear), AffineGrid, 3-D MaxPool (dilations, ceil_mode) and AveragePool (count_include_pad),
    2-D AveragePool with dilations, 3-D LpPool, DFT (real onesided, complex inverse, a cut
    dft_length, irfft), STFT with a window and RoiAlign (avg; half_pixel and output_half_pixel,
    a fixed and an adaptive sampling grid) and a 3-D Conv (strides, pads, dilations, groups, bias)."""
    nodes = [N("GridSample", ["x", "g"], ["gs_c"], mode="cubic", padding_mode="reflection", align_corners=1),
             N("GridSample", ["x", "g"], ["gs_l"], mode="linear", padding_mode="zeros"),
             N("GridSample", ["x", "g"], ["gs_n"], mode="nearest", padding_mode="border"),
             N("GridSample", ["v", "g3"], ["gs_3"], mode="linear", padding_mode="border"),
             N("AffineGrid", ["theta", "size"], ["ag"], align_corners=0),
             N("MaxPool", ["v"], ["mp3"], kernel_shape=[2, 2, 3], dilations=[2, 1, 1], pads=[1, 0, 1, 1, 1, 0],
               strides=[1, 2, 2], ceil_mode=1),
             N("AveragePool", ["v"], ["ap3"], kernel_shape=[2, 3, 2], pads=[1, 1, 0, 0, 1, 1], count_include_pad=1),
             N("AveragePool", ["x"], ["apd"], kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 1, 1, 1]),
             N("LpPool", ["v"], ["lp3"], kernel_shape=[2, 2, 2], p=3),
             N("Conv", ["v", "w3", "b3"], ["cv3"], strides=[1, 2, 1], pads=[1, 0, 1, 0, 1, 1], dilations=[1, 1, 2],
               group=2),
             N("DFT", ["sr", "", "ax1"], ["dft_r"], onesided=1),
             N("DFT", ["sc", "", "ax1"], ["dft_i"], inverse=1),
             N("DFT", ["sc", "len12", "ax1"], ["dft_c"]),
             N("DFT", ["sc", "", "ax1"], ["dft_ir"], inverse=1, onesided=1),
             N("STFT", ["sr", "step", "win"], ["stft"]),
             N("RoiAlign", ["x", "rois", "bidx"], ["roi"], output_height=3, output_width=2, sampling_ratio=2,
               spatial_scale=0.5),
             N("RoiAlign", ["x", "rois", "bidx"], ["roi0"], output_height=2, output_width=3,
               coordinate_transformation_mode="output_half_pixel")]
    rng = np.random.default_rng(11)
    theta = numpy_helper.from_array((np.eye(2, 3)[None] + 0.2 * rng.standard_normal((2, 2, 3))).astype(np.float32),
                                    "theta")
    inits = [theta, ints("size", [2, 3, 5, 7]), ints("ax1", 1), ints("len12", 12), ints("step", 4),
             numpy_helper.from_array(np.hanning(8).astype(np.float32), "win"),
             numpy_helper.from_array(np.array([[1, 2, 20, 14], [0, 0, 9, 9], [5.5, 3, 30, 33]], np.float32), "rois"),
             ints("bidx", [0, 0, 0]), floats("w3", [4, 1, 2, 3, 2], 12), floats("b3", [4], 13)]
    outs = ["gs_c", "gs_l", "gs_n", "gs_3", "ag", "mp3", "ap3", "apd", "lp3", "dft_r", "dft_i", "dft_c", "dft_ir",
            "stft", "roi", "roi0", "cv3"]
    return model(nodes, [vi("x", F, ["N", 3, "H", "W"]), vi("g", F, ["N", "L", 5, 2]),
                         vi("v", F, ["N", 2, "L", 6, 7]), vi("g3", F, ["N", 2, "L", 3, 3]),
                         vi("sr", F, ["N", 16, 1]), vi("sc", F, ["N", 16, 2])],
                 [out(o) for o in outs], inits, opset=20)


def recurrent():
    """RNN, GRU and LSTM unrolled over a 5-step sequence with a symbolic batch: bidirectional RNN
    (Relu forward, Tanh reverse) from an initial state; reverse GRU with linear_before_reset and
    clip; bidirectional GRU; bidirectional LSTM with peepholes and initial states; a plain LSTM
    (zero states, no bias). onnxruntime has no batch-first (layout 1) LSTM: the node tests cover it."""
    H = 4

    def floats(name, shape, seed):  # weights at half scale: a contractive recurrence keeps bf16 rounding in bounds
        rng = np.random.default_rng(seed)
        return numpy_helper.from_array((0.5 * rng.standard_normal(shape)).astype(np.float32), name)

    nodes = [N("RNN", ["x", "rw", "rr", "rb", "", "h0"], ["rnn_y", "rnn_h"], hidden_size=H,
               direction="bidirectional", activations=["Relu", "Tanh"]),
             N("GRU", ["x", "gw1", "gr1", "gb1"], ["gru_y", "gru_h"], hidden_size=H, direction="reverse",
               linear_before_reset=1, clip=3.0),
             N("GRU", ["x", "gw", "gr", "gb", "", "h0"], ["gru2_y", "gru2_h"], hidden_size=H,
               direction="bidirectional"),
             N("LSTM", ["x", "lw", "lr", "lb", "", "h0", "c0", "lp"], ["lstm_y", "lstm_h", "lstm_c"], hidden_size=H,
               direction="bidirectional"),
             N("LSTM", ["x", "lw1", "lr1"], ["lstm1_y", "lstm1_h", "lstm1_c"], hidden_size=H)]
    inits = [floats("rw", [2, H, 3], 1), floats("rr", [2, H, H], 2), floats("rb", [2, 2 * H], 3),
             floats("gw1", [1, 3 * H, 3], 4), floats("gr1", [1, 3 * H, H], 5), floats("gb1", [1, 6 * H], 6),
             floats("gw", [2, 3 * H, 3], 7), floats("gr", [2, 3 * H, H], 8), floats("gb", [2, 6 * H], 9),
             floats("lw", [2, 4 * H, 3], 10), floats("lr", [2, 4 * H, H], 11), floats("lb", [2, 8 * H], 12),
             floats("lp", [2, 3 * H], 13), floats("lw1", [1, 4 * H, 3], 14), floats("lr1", [1, 4 * H, H], 15)]
    outs = ["rnn_y", "rnn_h", "gru_y", "gru_h", "gru2_y", "gru2_h", "lstm_y", "lstm_h", "lstm_c", "lstm1_y",
            "lstm1_h", "lstm1_c"]
    return model(nodes, [vi("x", F, [5, "batch", 3]), vi("h0", F, [2, "batch", H]), vi("c0", F, [2, "batch", H])],
                 [out(o) for o in outs], inits, opset=20)


def nan_inf():
    """IsNaN and IsInf (both signs, one sign) on x / d with d holding zeros: +-inf and NaN (0/0 where x
    rounds to 0 never happens with random inputs, so NaN comes from inf - inf)."""
    nodes = [N("Div", ["x", "d"], ["q"]), N("Sub", ["q", "q"], ["z"]), N("IsNaN", ["z"], ["n"]),
             N("IsInf", ["q"], ["i"]), N("IsInf", ["q"], ["ip"], detect_negative=0),
             N("IsInf", ["q"], ["im"], detect_positive=0)]
    d = helper.make_tensor("d", F, [6], [0.0, 1.0, 0.0, 2.0, -1.0, 0.0])
    return model(nodes, [vi("x", F, ["B", 6])], [out("n"), out("i"), out("ip"), out("im")], [d], opset=20)


INT_TYPES = [("i8", TensorProto.INT8, np.int8), ("u8", TensorProto.UINT8, np.uint8),
             ("i16", TensorProto.INT16, np.int16), ("u16", TensorProto.UINT16, np.uint16),
             ("u32", TensorProto.UINT32, np.uint32), ("u64", TensorProto.UINT64, np.uint64)]


def int_dtypes(types):
    """Elementwise arithmetic, comparisons and bit ops on some of i8, u8, i16, u16, u32, u64:
    a = x - k (k holds large and negative values, so a wraps around and takes either
    sign), then a against y (1..4 from the harness): Div truncates, Mod follows the
    divisor's sign (fmod=0) or the dividend's (fmod=1), Mul by k wraps. The ops
    onnxruntime lacks for a type (Neg of unsigned, Min/Max/Where/Clip of 16-bit,
    Where/Clip of u64, signed BitShift) are left out for it."""
    nodes, inputs, outs, inits = [], [], [], []
    for t, et, npt in [it for it in INT_TYPES if it[0] in types]:
        info = np.iinfo(npt)
        k = np.array([info.max, info.min, 3, 0, info.max // 3, 1, 7, info.min + 5 if info.min else 100], npt)
        inits.append(numpy_helper.from_array(k, "k_" + t))
        inputs += [vi("x_" + t, et, ["B", 8]), vi("y_" + t, et, ["B", 8])]
        a, y = "a_" + t, "y_" + t
        nodes.append(N("Sub", ["x_" + t, "k_" + t], [a]))
        ops = [("Add", [a, y], {}), ("Mul", [a, "k_" + t], {}), ("Div", [a, y], {}), ("Mod", [a, y], {}),
               ("Mod", [a, y], {"fmod": 1}), ("Equal", [a, y], {}), ("Less", [a, y], {}), ("Greater", [a, y], {}),
               ("LessOrEqual", [a, y], {}), ("GreaterOrEqual", [a, y], {}), ("BitwiseAnd", [a, y], {}),
               ("BitwiseOr", [a, y], {}), ("BitwiseXor", [a, y], {}), ("BitwiseNot", [a], {}), ("Abs", [a], {}),
               ("Sign", [a], {}), ("Cast", [a], {"to": F})]
        if t in ("i8", "u8", "u32"):  # onnxruntime's integer Clip is a function body of Where
            inits += [numpy_helper.from_array(np.array(2 if info.min == 0 else -3, npt), "lo_" + t),
                      numpy_helper.from_array(np.array(info.max // 2, npt), "hi_" + t)]
            ops.append(("Clip", [a, "lo_" + t, "hi_" + t], {}))
        if info.min < 0:
            ops.append(("Neg", [a], {}))
        else:
            ops += [("BitShift", [a, y], {"direction": "LEFT"}), ("BitShift", [a, y], {"direction": "RIGHT"})]
        if t not in ("i16", "u16"):
            ops += [("Min", [a, y, "k_" + t], {}), ("Max", [a, y], {})]
            if t != "u64":
                nodes.append(N("Less", [a, y], ["c_" + t]))
                ops.append(("Where", ["c_" + t, a, y], {}))
        for i, (op, ins, attrs) in enumerate(ops):
            o = f"{op.lower()}{i}_{t}"
            nodes.append(N(op, ins, [o], **attrs))
            outs.append(o)
    return model(nodes, inputs, [out(o) for o in outs], inits, opset=18)


def activations():
    """The activations and math ops of issue 15 on floats: Elu, Selu, Celu, Softplus,
    Softsign, ThresholdedRelu, Mish, Shrink, PRelu (a per-channel slope), Round on
    halves (round(4x) / 2 hits .5 often: halves go to even), the inverse and hyperbolic
    trigonometric functions inside their domains, Mean, CastLike, Xor, and Clip of an
    integer tensor by max then min."""
    nodes = [
        N("Elu", ["x"], ["elu"], alpha=0.7), N("Selu", ["x"], ["selu"]), N("Celu", ["x"], ["celu"], alpha=1.3),
        N("Softplus", ["x"], ["softplus"]), N("Softsign", ["x"], ["softsign"]),
        N("ThresholdedRelu", ["x"], ["trelu"], alpha=0.2), N("Mish", ["x"], ["mish"]),
        N("Shrink", ["x"], ["shrink"], bias=0.1, lambd=0.4), N("PRelu", ["x", "slope"], ["prelu"]),
        N("Mul", ["x", "four"], ["x4"]), N("Round", ["x4"], ["r4"]), N("Mul", ["r4", "half"], ["h"]),
        N("Round", ["h"], ["round"]), N("Tanh", ["x"], ["t"]), N("Mul", ["t", "nine"], ["u"]),
        N("Asin", ["u"], ["asin"]), N("Acos", ["u"], ["acos"]), N("Atanh", ["u"], ["atanh"]),
        N("Atan", ["x"], ["atan"]), N("Sinh", ["x"], ["sinh"]), N("Cosh", ["x"], ["cosh"]),
        N("Asinh", ["x"], ["asinh"]), N("Abs", ["x"], ["ax"]), N("Add", ["ax", "one"], ["ax1"]),
        N("Acosh", ["ax1"], ["acosh"]), N("Mean", ["x", "y", "ax"], ["mean"]), N("CastLike", ["x", "yi"], ["castlike"]),
        N("Less", ["x", "y"], ["lt"]), N("Greater", ["x", "zero"], ["pos"]), N("Xor", ["lt", "pos"], ["xor"]),
        N("Clip", ["yi", "ilo", "ihi"], ["iclip"]),
    ]
    outs = ["elu", "selu", "celu", "softplus", "softsign", "trelu", "mish", "shrink", "prelu", "round", "asin", "acos",
            "atanh", "atan", "sinh", "cosh", "asinh", "acosh", "mean", "castlike", "xor", "iclip"]
    sc = lambda name, v, dt=np.float32: numpy_helper.from_array(np.array(v, dt), name)  # noqa: E731
    inits = [floats("slope", [8], seed=3), sc("four", 4.0), sc("half", 0.5), sc("nine", 0.9), sc("one", 1.1),
             sc("zero", 0.0), sc("ilo", 2, np.int32), sc("ihi", 3, np.int32)]
    inputs = [vi("x", F, ["B", 8]), vi("y", F, ["B", 8]), vi("yi", TensorProto.INT32, ["B", 8])]
    return model(nodes, inputs, [out(o) for o in outs], inits, opset=18)


def reductions(opset):
    """ReduceMean/Max take axes as an attribute before opset 18 and as an
    input from 18; ReduceSum as an input since 13."""
    if opset < 18:
        nodes = [N("ReduceMean", ["x"], ["mean"], axes=[-1], keepdims=1),
                 N("ReduceMax", ["x"], ["max"], axes=[1], keepdims=0)]
    else:
        nodes = [N("ReduceMean", ["x", "axm1"], ["mean"], keepdims=1),
                 N("ReduceMax", ["x", "ax1"], ["max"], keepdims=0)]
    # sum_all sums every element: of |x|, not of x, as thousands of standard normals cancel to
    # near zero, where fp32 summation orders differ by 1e-3 relative (a GPU sweep saw 8e-4); |x|
    # stays in fp16's range at the e2e maximum (6 x 512 x 16 elements: about 4e4), x + 3 would not
    nodes += [N("ReduceSum", ["x", "ax1"], ["sum"], keepdims=0), N("Abs", ["x"], ["xabs"]),
              N("ReduceSum", ["xabs"], ["sum_all"], keepdims=0),
              N("ReduceSum", ["x"], ["sum_noop"], noop_with_empty_axes=1),
              N("Softmax", ["x"], ["sm"]), N("LogSoftmax", ["x"], ["lsm"], axis=1)]
    outs = ["mean", "max", "sum", "sum_all", "sum_noop", "sm", "lsm"]
    if opset >= 17:
        nodes.append(N("LayerNormalization", ["x", "ln_s"], ["ln"], axis=-1))
        outs.append("ln")
    inits = [ints("axm1", [-1]), ints("ax1", [1]), floats("ln_s", [16])]
    return model(nodes, [vi("x", F, ["B", "S", 16])], [out(o) for o in outs], inits, opset=opset)


def reduce_ops():
    """The Reduce family at opset 18 (axes as inputs), arg and top-k selection, cumulative
    sums, Hardmax, LpNormalization, Size and Einsum contractions, over symbolic B and S:
    TopK's k is the sequence length itself (a full sort along S). Products and sums of
    squares run over few elements, so half engines stay in fp16's range."""
    nodes = [N("ReduceMin", ["x", "ax1"], ["rmin"], keepdims=0),
             N("Slice", ["x", "p0", "p3", "ax2"], ["x3"]), N("ReduceProd", ["x3", "ax2"], ["rprod"]),
             N("ReduceL1", ["x", "ax1"], ["l1"]), N("ReduceL2", ["x", "axm1"], ["l2"], keepdims=0),
             N("ReduceSumSquare", ["x", "ax2"], ["ssq"], keepdims=0), N("Abs", ["x"], ["ax"]),
             N("ReduceLogSum", ["ax", "ax1"], ["ls"]), N("ReduceLogSumExp", ["x", "ax1"], ["lse"], keepdims=0),
             N("ReduceLogSumExp", ["x"], ["lse_all"]),
             N("ArgMax", ["x"], ["amax"], axis=1), N("ArgMin", ["x"], ["amin"], axis=-1, keepdims=0,
                                                       select_last_index=1),
             N("TopK", ["x", "k3"], ["tv", "ti"], axis=-1),
             N("Shape", ["x"], ["sx"]), N("Gather", ["sx", "i1"], ["sl"], axis=0), N("Unsqueeze", ["sl", "ax0"], ["kS"]),
             N("TopK", ["x", "kS"], ["sv", "si"], axis=1, largest=0),
             N("CumSum", ["x", "c1"], ["cs"]), N("CumSum", ["x", "c2"], ["csx"], exclusive=1, reverse=1),
             N("Hardmax", ["x"], ["hm"], axis=1), N("LpNormalization", ["x"], ["lp"], axis=1, p=2),
             N("Size", ["x"], ["n"]),
             N("Einsum", ["x", "x"], ["scores"], equation="bsd,btd->bst"),
             N("Einsum", ["x", "w"], ["proj"], equation="bsd,de->bse"),
             N("Einsum", ["x"], ["tr"], equation="bsd->dbs"), N("Einsum", ["x"], ["tot"], equation="bsd->b"),
             N("Einsum", ["x", "x"], ["dots"], equation="...d,...d->..."),
             N("Einsum", ["v", "x"], ["outer"], equation="e,bsd->bsde"),
             N("Einsum", ["sq"], ["diag"], equation="...ii->...i"), N("Einsum", ["sq"], ["trace"], equation="bii"),
             N("Einsum", ["sq", "v3"], ["dmul"], equation="bjj,j->bj")]
    inits = [ints("ax0", [0]), ints("ax1", [1]), ints("ax2", [2]), ints("axm1", [-1]), ints("k3", [3]),
             ints("p0", [0]), ints("p3", [3]),
             ints("i1", 1), ints("c1", 1), ints("c2", -2), floats("w", [16, 8], seed=3), floats("v", [3], seed=4),
             floats("v3", [4], seed=5)]
    outs = ["rmin", "rprod", "l1", "l2", "ssq", "ls", "lse", "lse_all", "amax", "amin", "tv", "ti", "sv", "si",
            "cs", "csx", "hm", "lp", "n", "scores", "proj", "tr", "tot", "dots", "outer", "diag", "trace", "dmul"]
    return model(nodes, [vi("x", F, ["B", "S", 16]), vi("sq", F, ["B", 4, 4])], [out(o) for o in outs], inits,
                 opset=18)


def index_ops():
    """GatherND, ScatterND, ScatterElements (with reductions) and OneHot whose indices
    come from the data (ArgMax), so their shapes are symbolic; EyeLike of a [S, S] input."""
    nodes = [N("ArgMax", ["x"], ["am"], axis=2), N("GatherND", ["x", "am"], ["gnd"], batch_dims=2),
             N("ReduceMax", ["x", "ax2"], ["mx"]),
             N("ScatterElements", ["x", "am", "mx"], ["se"], axis=2, reduction="add"),
             N("ScatterElements", ["x", "am", "mx"], ["se_none"], axis=-1),
             N("Slice", ["x", "s0", "s1", "ax0"], ["x0"]), N("Concat", ["x0", "x0"], ["upd"], axis=0),
             N("ScatterND", ["x", "nd_idx", "upd"], ["snd"], reduction="add"),
             N("ScatterND", ["x", "nd_idx2", "x0"], ["snd_max"], reduction="max"),
             N("ArgMin", ["x"], ["amn"], axis=2, keepdims=0),
             N("OneHot", ["amn", "depth", "onoff"], ["oh"], axis=-1),
             N("OneHot", ["amn", "depth", "onoff"], ["oh1"], axis=1),
             N("EyeLike", ["y"], ["eye"], k=1), N("EyeLike", ["y"], ["eye_i"], k=-2, dtype=I64)]
    inits = [ints("ax0", [0]), ints("ax2", [2]), ints("s0", [0]), ints("s1", [1]), ints("nd_idx", [[0], [-1]]),
             ints("nd_idx2", [[0]]), ints("depth", 16),
             numpy_helper.from_array(np.array([-1.0, 2.0], np.float32), "onoff")]
    outs = ["gnd", "se", "se_none", "snd", "snd_max", "oh", "oh1", "eye", "eye_i"]
    return model(nodes, [vi("x", F, ["B", "S", 16]), vi("y", F, ["S", "S"])], [out(o) for o in outs], inits,
                 opset=18)


def with_attr(node, name, vals):
    """node with an INTS attribute, possibly empty (helper.make_node cannot
    infer the type of an empty list)."""
    node.attribute.append(helper.make_attribute(name, vals, attr_type=onnx.AttributeProto.INTS))
    return node


def reduce_empty_axes():
    """Opset 13 with axes=[] as an attribute (protobuf-c leaves the empty list
    NULL): ReduceMean/ReduceMax reduce every axis, as with no axes (ONNX shape
    inference and onnxruntime agree); ReduceSum, whose axes are an input since
    13, treats the empty attribute as no axes, with noop_with_empty_axes
    honoured. A transpose of a scalar has perm=[]."""
    nodes = [with_attr(N("ReduceMean", ["x"], ["mean_all"], keepdims=0), "axes", []),
             with_attr(N("ReduceMax", ["x"], ["max_all"], keepdims=1), "axes", []),
             with_attr(N("ReduceSum", ["x"], ["sum_noop"], noop_with_empty_axes=1), "axes", []),
             with_attr(N("ReduceSum", ["x"], ["sum_all"], keepdims=0), "axes", []),
             with_attr(N("Transpose", ["s"], ["st"]), "perm", [])]
    outs = ["mean_all", "max_all", "sum_noop", "sum_all", "st"]
    # ReduceSum-13 has no axes attribute: the checker would refuse the model
    return model(nodes, [vi("x", F, ["B", "S", 16]), vi("s", F, [])], [out(o) for o in outs], opset=13,
                 check=False)


def relu_at(opset):
    """The newest supported opset (21) imports; newer ones (22, 99) are refused."""
    return model([N("Relu", ["x"], ["y"])], [vi("x", F, [4])], [out("y")], opset=opset, check=opset <= 21)


def dropout_modes():
    """Dropout with training_mode a constant false (the identity), and static
    dims including 0 (a valid size, not a dynamic dim)."""
    nodes = [N("Dropout", ["x", "ratio", "off"], ["y"], name="drop_off"), N("Relu", ["z"], ["zr"])]
    inits = [numpy_helper.from_array(np.array(0.5, np.float32), "ratio"),
             numpy_helper.from_array(np.array(False), "off")]
    return model(nodes, [vi("x", F, ["B", 8]), vi("z", F, [0, 3])], [out("y"), out("zr")], inits)


def losses():
    """SoftmaxCrossEntropyLoss (weights, ignore_index, mean, the log_prob
    output) and NegativeLogLikelihoodLoss (none, sum; ignore_index out of the
    class range) over a dynamic batch, and Dropout's all-true mask."""
    nodes = [N("SoftmaxCrossEntropyLoss", ["s", "t", "w"], ["sce", "logp"], ignore_index=2, name="sce"),
             N("NegativeLogLikelihoodLoss", ["logp", "t"], ["nll_none"], reduction="none", ignore_index=-7),
             N("NegativeLogLikelihoodLoss", ["logp", "t", "w"], ["nll_sum"], reduction="sum"),
             N("SoftmaxCrossEntropyLoss", ["s2", "t2"], ["sce_sum"], reduction="sum"),
             N("Dropout", ["s2"], ["drop", "mask"]),
             N("BatchNormalization", ["s", "w", "bb", "bm", "bv"], ["bn", "bn_mean", "bn_var"], training_mode=1,
               momentum=0.8, epsilon=1e-3)]
    w = numpy_helper.from_array(np.array([0.5, 1.0, 2.0, 0.25, 1.5], np.float32), "w")
    inits = [w, floats("bb", [5], 1), floats("bm", [5], 2),
             numpy_helper.from_array(np.array([1.0, 0.5, 2.0, 1.5, 0.75], np.float32), "bv")]
    return model(nodes, [vi("s", F, ["B", 5, 3]), vi("t", I64, ["B", 3]), vi("s2", F, ["B", 6]),
                         vi("t2", TensorProto.INT32, ["B"])],
                 [out("sce"), out("logp"), out("nll_none"), out("nll_sum"), out("sce_sum"), out("drop"), out("mask"),
                  out("bn"), out("bn_mean"), out("bn_var")], inits, opset=15)


def quant():
    """The quantized ops over a dynamic batch: QuantizeLinear per axis and
    blocked (int16), DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
    QLinearMatMul, ConvInteger, QLinearConv (per-channel weight scale, int32
    bias), and the window functions (constants of the node's size)."""
    U8 = TensorProto.UINT8
    u8 = lambda name, vals: numpy_helper.from_array(np.array(vals, np.uint8), name)  # noqa: E731
    f32 = lambda name, vals: numpy_helper.from_array(np.array(vals, np.float32), name)  # noqa: E731
    rng = np.random.default_rng(5)
    inits = [f32("qs", [0.05, 0.1, 0.02]), u8("qz", [128, 100, 7]), f32("bs", rng.uniform(0.05, 0.2, (3, 2))),
             u8("bw", rng.integers(0, 255, (4, 3))), u8("az", 3), u8("bz", [1, 2, 3]),
             f32("as_", 0.02), f32("bs_", 0.03), f32("ys", 0.05), u8("yz", 10),
             u8("cw", rng.integers(0, 255, (3, 2, 3, 3))), u8("cxz", 2), u8("cwz", [1, 0, 5]),
             f32("cws", [0.01, 0.02, 0.015]), numpy_helper.from_array(np.array([5, -40, 300], np.int32), "cb"),
             numpy_helper.from_array(np.array(8, np.int64), "wsize")]
    nodes = [N("QuantizeLinear", ["x", "qs", "qz"], ["q"], axis=1),
             N("DequantizeLinear", ["q", "qs", "qz"], ["dq"], axis=1),
             N("QuantizeLinear", ["xb", "bs"], ["qb"], axis=1, block_size=2, output_dtype=TensorProto.INT16),
             N("DynamicQuantizeLinear", ["x"], ["dy", "dys", "dyz"]),
             N("MatMulInteger", ["a", "bw", "az", "bz"], ["mmi"]),
             N("QLinearMatMul", ["a", "as_", "az", "bw", "bs_", "bz0", "ys", "yz"], ["qmm"]),
             N("ConvInteger", ["cx", "cw", "cxz", "bz0"], ["ci"], pads=[1, 1, 1, 1]),
             N("QLinearConv", ["cx", "as_", "cxz", "cw", "cws", "cwz", "ys", "yz", "cb"], ["qc"], strides=[2, 2]),
             N("HannWindow", ["wsize"], ["hann"]), N("BlackmanWindow", ["wsize"], ["black"], periodic=0),
             N("HammingWindow", ["wsize"], ["hamm"], output_datatype=TensorProto.DOUBLE)]
    inits.append(u8("bz0", 4))
    return model(nodes, [vi("x", F, ["B", 3, 4]), vi("xb", F, [3, 4]), vi("a", U8, ["B", 4]),
                         vi("cx", U8, ["B", 2, 5, 5])],
                 [out(n) for n in ["q", "dq", "qb", "dy", "dys", "dyz", "mmi", "qmm", "ci", "qc", "hann", "black",
                                   "hamm"]], inits, opset=21)


def attention_shapes():
    """The shape arithmetic of ONNX's function-expanded Attention: heads
    compared with Equal/Not, divided and Mod-ed, combined with And, picked by
    Where and concatenated into the shape of an Expand."""
    one = ints("one", [1])
    zero = ints("zero", [0])
    nodes = [N("Shape", ["q"], ["qh"], start=1, end=2), N("Shape", ["k"], ["kh"], start=1, end=2),
             N("Shape", ["k"], ["kb"], start=0, end=1), N("Shape", ["k"], ["krest"], start=2),
             N("Equal", ["qh", "kh"], ["same"]), N("Not", ["same"], ["gqa1"]),
             N("Div", ["qh", "kh"], ["rep"]), N("Mod", ["qh", "kh"], ["rem"]),
             N("Equal", ["rem", "zero"], ["gqa2"]), N("And", ["gqa1", "gqa2"], ["gqa"]),
             N("Where", ["gqa", "rep", "one"], ["inter"]),
             N("Unsqueeze", ["k", "two"], ["ku"]),
             N("Concat", ["kb", "kh", "inter", "krest"], ["eshape"], axis=0),
             N("Expand", ["ku", "eshape"], ["ke"]),
             N("Concat", ["kb", "qh", "krest"], ["rshape"], axis=0),
             N("Reshape", ["ke", "rshape"], ["kr"]),
             N("Add", ["q", "kr"], ["y"])]
    # onnx's shape inference cannot follow the Expand's computed shape: the output is declared
    return model(nodes, [vi("q", F, ["B", 4, "S", 8]), vi("k", F, ["B", 2, "S", 8])], [vi("y", F, ["B", 4, "S", 8])],
                 [one, zero, ints("two", [2])], opset=17, check=False)


def optionals():
    """OptionalHasElement and OptionalGetElement of a tensor (present) and of
    an absent input: symc's values are tensors, so these are constants and
    the identity."""
    nodes = [N("OptionalHasElement", ["x"], ["has"]), N("OptionalHasElement", [""], ["none"]),
             N("OptionalGetElement", ["x"], ["y0"]), N("Relu", ["y0"], ["y"])]
    return model(nodes, [vi("x", F, ["B", 4])], [out("has"), out("none"), out("y")], opset=18)


def if_known():
    """If whose condition is decided at build time from shapes (x's rank is
    2, a Split of a shape into dims): the then-branch's nodes, reading outer
    values, are imported in place of the If; the else-branch is never
    imported."""
    then_g = helper.make_graph([N("Split", ["sx"], ["b", "f"], num_outputs=2),
                                N("Concat", ["f", "b"], ["swapped"], axis=0),
                                N("Reshape", ["x", "swapped"], ["xt"]), N("Relu", ["xt"], ["y_then"])], "then", [],
                               [vi("y_then", F, None)])
    else_g = helper.make_graph([N("Neg", ["x"], ["y_else"])], "else", [], [vi("y_else", F, None)])
    nodes = [N("Shape", ["x"], ["sx"]), N("Size", ["sx"], ["rank"]), N("Equal", ["rank", "two"], ["is2"]),
             N("If", ["is2"], ["y"], then_branch=then_g, else_branch=else_g)]
    return model(nodes, [vi("x", F, ["B", 4])], [vi("y", F, [4, "B"])], [ints("two", 2)], opset=18, check=False)


def if_size():
    """If on a size the ranges leave open (Shape -> Gather -> Greater -> If, as exporters write
    `if x.shape[1] > 64`): the first 64 columns doubled on one side, x negated on the other. With
    S open across 64 the model imports as two regions."""
    then_g = helper.make_graph([N("Slice", ["x", "zero1", "c64", "one1"], ["xs"]), N("Add", ["xs", "xs"], ["y_then"])],
                               "then", [], [vi("y_then", F, None)])
    else_g = helper.make_graph([N("Neg", ["x"], ["y_else"])], "else", [], [vi("y_else", F, None)])
    nodes = [N("Shape", ["x"], ["sx"]), N("Gather", ["sx", "i1"], ["s"]), N("Greater", ["s", "c64s"], ["big"]),
             N("If", ["big"], ["y"], then_branch=then_g, else_branch=else_g)]
    return model(nodes, [vi("x", F, ["B", "S"])], [vi("y", F, ["B", None])],
                 [ints("zero1", [0]), ints("c64", [64]), ints("one1", [1]), ints("i1", 1), ints("c64s", 64)],
                 opset=17, check=False)


def if_nested():
    """Two size Ifs, one inside the other (S > 128, then S > 64 in the else branch): three regions,
    and a condition over two symbols (S <= T, not a box) that becomes the region's condition text."""
    inner_then = helper.make_graph([N("Relu", ["x"], ["y_it"])], "it", [], [vi("y_it", F, None)])
    inner_else = helper.make_graph([N("Neg", ["x"], ["y_ie"])], "ie", [], [vi("y_ie", F, None)])
    outer_then = helper.make_graph([N("Add", ["x", "x"], ["y_ot"])], "ot", [], [vi("y_ot", F, None)])
    outer_else = helper.make_graph([N("Greater", ["s", "c64"], ["mid"]),
                                    N("If", ["mid"], ["y_oe"], then_branch=inner_then, else_branch=inner_else)],
                                   "oe", [], [vi("y_oe", F, None)])
    st_then = helper.make_graph([N("Sigmoid", ["y0"], ["z_t"])], "stt", [], [vi("z_t", F, None)])
    st_else = helper.make_graph([N("Tanh", ["y0"], ["z_e"])], "ste", [], [vi("z_e", F, None)])
    nodes = [N("Shape", ["x"], ["sx"]), N("Gather", ["sx", "i1"], ["s"]), N("Greater", ["s", "c128"], ["big"]),
             N("If", ["big"], ["y0"], then_branch=outer_then, else_branch=outer_else),
             N("Shape", ["m"], ["sm"]), N("Gather", ["sm", "i1"], ["t"]), N("LessOrEqual", ["s", "t"], ["fits"]),
             N("If", ["fits"], ["y"], then_branch=st_then, else_branch=st_else)]
    return model(nodes, [vi("x", F, ["B", "S"]), vi("m", F, ["B", "T"])], [vi("y", F, ["B", "S"])],
                 [ints("i1", 1), ints("c64", 64), ints("c128", 128)], opset=17, check=False)


def loops():
    """Loop with a constant trip count (loop-carried value, iteration number,
    scan output) and Scan over axis 1 (a running sum as the state, a forward
    and a reversed scan input, scan outputs stacked on axes 1 and 0), both
    unrolled at import over a dynamic batch."""
    lbody = helper.make_graph([N("Identity", ["cond_in"], ["cond_out"]), N("Cast", ["i"], ["fi"], to=F),
                               N("Add", ["y_in", "fi"], ["y_out"]), N("Mul", ["y_in", "y_in"], ["sq"])], "lbody",
                              [vi("i", I64, []), vi("cond_in", TensorProto.BOOL, []), vi("y_in", F, None)],
                              [vi("cond_out", TensorProto.BOOL, []), vi("y_out", F, None), vi("sq", F, None)])
    sbody = helper.make_graph([N("Add", ["s_in", "a_t"], ["s_out"]), N("Mul", ["s_out", "b_t"], ["o1"]),
                               N("Sub", ["a_t", "b_t"], ["o2"])], "sbody",
                              [vi("s_in", F, None), vi("a_t", F, None), vi("b_t", F, None)],
                              [vi("s_out", F, None), vi("o1", F, None), vi("o2", F, None)])
    # the trip count ceil(5.0 / 2.0) = 3 and the condition are computed from float constants (folded at import)
    nodes = [N("Div", ["five", "two"], ["q"]), N("Ceil", ["q"], ["qc"]), N("Cast", ["qc"], ["trip"], to=I64),
             N("Cast", ["qc"], ["yes"], to=TensorProto.BOOL),
             N("Loop", ["trip", "yes", "y0"], ["y_fin", "y_scan"], body=lbody),
             N("Scan", ["s0", "xs", "xs"], ["s_fin", "sc1", "sc2"], body=sbody, num_scan_inputs=2,
               scan_input_axes=[1, 1], scan_input_directions=[0, 1], scan_output_axes=[1, 0])]
    inits = [numpy_helper.from_array(np.float32(5), "five"), numpy_helper.from_array(np.float32(2), "two")]
    return model(nodes, [vi("y0", F, ["B", 4]), vi("s0", F, ["B", 3]), vi("xs", F, ["B", 5, 3])],
                 [vi("y_fin", F, ["B", 4]), vi("y_scan", F, [3, "B", 4]), vi("s_fin", F, ["B", 3]),
                  vi("sc1", F, ["B", 5, 3]), vi("sc2", F, [5, "B", 3])], inits, opset=17, check=False)


def movement():
    """Data movement: transpose (default perm), slice with INT64_MAX ends and a
    negative step, split (sizes input and equal), squeeze/unsqueeze, gather,
    gather_elements, tile and pad from symbolic sizes, trilu, flatten."""
    big = np.iinfo(np.int64).max
    nodes = [
        N("Transpose", ["x"], ["xt"]),
        N("Slice", ["x", "s_start", "s_end", "s_axes"], ["sl"]),
        N("Slice", ["x", "r_start", "r_end", "r_axes", "r_steps"], ["rev"]),
        N("Split", ["x", "split_sizes"], ["p0", "p1"], axis=2),
        N("Split", ["x"], ["q0", "q1"], axis=2),
        N("Unsqueeze", ["x", "ax0"], ["xu"]), N("Squeeze", ["xu", "ax0"], ["xs"]),
        N("Gather", ["x", "idx"], ["gx"], axis=2),
        N("GatherElements", ["x", "gidx"], ["ge"], axis=2),
        N("Shape", ["x"], ["sx"]), N("Gather", ["sx", "i1"], ["L"]), N("Unsqueeze", ["L", "ax0"], ["L1"]),
        N("Concat", ["one1", "L1", "one1"], ["reps"], axis=0),
        N("Tile", ["x", "reps"], ["tiled"]),
        N("Concat", ["zeros2", "L1", "zeros2", "one1"], ["pads"], axis=0),
        N("Pad", ["x", "pads", "padv"], ["padded"]),
        N("Pad", ["x", "rpads"], ["reflected"], mode="reflect"),
        N("Trilu", ["sq"], ["upper"]), N("Trilu", ["sq", "km1"], ["lower"], upper=0),
        N("Flatten", ["x"], ["flat"], axis=2),
        N("Shape", ["x"], ["s_tail"], start=-2),
        N("Reshape", ["x", "keep2"], ["r_keep"]), N("Reshape", ["x", "keep_rest"], ["r_rest"]),
        N("Range", ["L", "zero", "m2"], ["down"]),
    ]
    inits = [ints("s_start", [1]), ints("s_end", [big]), ints("s_axes", [-1]),
             ints("r_start", [-1]), ints("r_end", [-big - 1]), ints("r_axes", [1]), ints("r_steps", [-1]),
             ints("split_sizes", [2, 4]), ints("ax0", [0]), ints("idx", [[0, 1], [2, 3]]),
             ints("gidx", np.zeros((1, 2, 3), np.int64)), ints("i1", 1), ints("one1", [1]), ints("zeros2", [0, 0]),
             numpy_helper.from_array(np.array(0.5, np.float32), "padv"), ints("rpads", [0, 1, 2, 0, 1, 2]),
             ints("km1", -1), ints("keep2", [0, 0, 3, 2]), ints("keep_rest", [0, -1]), ints("zero", 0),
             ints("m2", -2)]
    outs = ["xt", "sl", "rev", "p0", "p1", "q0", "q1", "xs", "gx", "ge", "tiled", "padded", "reflected", "upper",
            "lower", "flat", "s_tail", "r_keep", "r_rest", "down"]
    inputs = [vi("x", F, ["B", "L", 6]), vi("sq", F, ["L", "L"])]
    return model(nodes, inputs, [out(o) for o in outs], inits)


def transposes():
    """Transposes the CUDA target runs as batched 2-D tiles (codegen/cuda_emit_move.c):
    NCHW -> NHWC with 37 channels (not a tile multiple) and NHWC -> NCHW with 3, the pair
    chained through a Mul, a matrix (1, 0), a (0, 2, 1), a (0, 3, 2, 1) whose axis of size 1
    drops out, in f32, i64 (8-byte) and u8 (1-byte) elements; perms that keep the innermost
    group innermost, run as row copies of 8- or 16-byte vectors: (1, 0, 2) of rows of 70
    floats, Swin's window partition (0, 1, 3, 2, 4, 5) and patchify's patches (0, 2, 4, 1, 3, 5);
    and perms the per-element kernel keeps: (0, 3, 2, 1) on 4 real axes is no group swap."""
    U8 = TensorProto.UINT8
    nodes = [
        N("Transpose", ["a"], ["a_nhwc"], perm=[0, 2, 3, 1]),
        N("Mul", ["a_nhwc", "two"], ["a2"]), N("Transpose", ["a2"], ["a_back"], perm=[0, 3, 1, 2]),
        N("Transpose", ["b"], ["b_nchw"], perm=[0, 3, 1, 2]),
        N("Transpose", ["m"], ["mt"], perm=[1, 0]),
        N("Transpose", ["s"], ["st"], perm=[0, 2, 1]),
        N("Transpose", ["s"], ["s_keep"], perm=[1, 0, 2]),
        N("Transpose", ["u"], ["ut"], perm=[0, 3, 2, 1]),
        N("Transpose", ["a"], ["a_rev"], perm=[0, 3, 2, 1]),
        N("Transpose", ["ai"], ["ai_nhwc"], perm=[0, 2, 3, 1]),
        N("Transpose", ["bq"], ["bq_nchw"], perm=[0, 3, 1, 2]),
        N("Transpose", ["win"], ["win_part"], perm=[0, 1, 3, 2, 4, 5]),
        N("Transpose", ["pat"], ["pat_rows"], perm=[0, 2, 4, 1, 3, 5]),
    ]
    inputs = [vi("a", F, ["Bt", 37, "Ht", "Wt"]), vi("b", F, ["Bt", "Ht", "Wt", 3]), vi("m", F, ["Rt", "Kt"]),
              vi("s", F, ["Bt", "St", 70]), vi("u", F, ["Bt", "St", 1, 5]), vi("ai", I64, ["Bt", 3, "Ht", "Wt"]),
              vi("bq", U8, ["Bt", "Ht", "Wt", 67]), vi("win", F, ["Bt", 2, 7, 3, 7, 8]),
              vi("pat", F, ["Bt", 3, 4, 4, 5, 4])]
    outs = ["a_nhwc", "a_back", "b_nchw", "mt", "st", "s_keep", "ut", "a_rev", "ai_nhwc", "bq_nchw", "win_part",
            "pat_rows"]
    return model(nodes, inputs, [out(o) for o in outs], [numpy_helper.from_array(np.array(2, np.float32), "two")])


def split18():
    nodes = [N("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)]
    return model(nodes, [vi("x", F, [2, 10])], [out(o) for o in "abc"], opset=18)


def expand_idiom():
    """What torch.onnx exports for x.expand(B, -1, -1): the -1 entries are
    replaced through ConstantOfShape/Mul/Equal/Where before Expand."""
    nodes = [
        N("Shape", ["x"], ["sx"]), N("Gather", ["sx", "i0"], ["b"]), N("Unsqueeze", ["b", "ax0"], ["b1"]),
        N("Concat", ["b1", "minus2"], ["target"], axis=0),
        N("Shape", ["target"], ["tlen"]), N("ConstantOfShape", ["tlen"], ["ones"],
                                             value=numpy_helper.from_array(np.array([1], np.int64))),
        N("Mul", ["ones", "m1"], ["neg"]), N("Equal", ["target", "neg"], ["is_neg"]),
        N("Where", ["is_neg", "ones", "target"], ["fixed"]),
        N("Expand", ["tok", "fixed"], ["y"]),
        N("Range", ["zero", "b", "one"], ["ids"]),
        N("ConstantOfShape", ["sx"], ["mask"], value=numpy_helper.from_array(np.array([0], np.float32))),
    ]
    inits = [ints("i0", 0), ints("ax0", [0]), ints("minus2", [-1, -1]), ints("m1", -1), ints("zero", 0),
             ints("one", 1), floats("tok", [1, 5, 7])]
    return model(nodes, [vi("x", F, ["B", 3])], [out("y"), out("ids"), out("mask")],
                 inits)


def unnamed_dims():
    """A dynamic dim with neither dim_value nor dim_param, and a shared symbol."""
    x = vi("x", F, [None, 4])
    return model([N("Relu", ["x"], ["y"])], [x], [out("y")])


def shared_symbol():
    nodes = [N("Add", ["a", "b"], ["y"])]
    return model(nodes, [vi("a", F, ["batch", 4]), vi("b", F, ["batch", 4])], [out("y")])


def initializers(outdir):
    """Initializer encodings: raw_data, typed fields, fp16/bf16, constants,
    and external data next to the model."""
    t_raw = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "f_raw")
    t_typed = helper.make_tensor("f_typed", F, [3], [1.5, 2.5, 3.5])
    t_i64 = helper.make_tensor("i_typed", I64, [2], [7, -8])
    t_i32 = helper.make_tensor("i32_typed", TensorProto.INT32, [2], [5, -6])
    t_f64 = helper.make_tensor("d_typed", TensorProto.DOUBLE, [2], [0.25, -0.5])
    t_h = helper.make_tensor("h_typed", TensorProto.FLOAT16, [2], np.array([1.0, -2.0], np.float16))
    t_hraw = numpy_helper.from_array(np.array([0.5, 4.0], np.float16), "h_raw")
    t_bf = helper.make_tensor("bf_typed", TensorProto.BFLOAT16, [2], [1.0, -3.0])
    t_b = helper.make_tensor("b_typed", TensorProto.BOOL, [2], [True, False])
    raw = np.arange(6, dtype=np.float32).tobytes()
    with open(os.path.join(outdir, "weights.bin"), "wb") as f:
        f.write(b"\0" * 16 + raw)  # the tensor starts at offset 16
    t_ext = external("f_ext", [2, 3], "weights.bin", offset=16, length=len(raw))
    nodes = [N("Identity", [n], [n + "_out"]) for n in
             ["f_raw", "f_typed", "i_typed", "i32_typed", "d_typed", "h_typed", "h_raw", "bf_typed", "b_typed",
              "f_ext"]]
    nodes.append(N("Constant", [], ["c_floats"], value_floats=[1.0, 2.0]))
    nodes.append(N("Constant", [], ["c_int"], value_int=42))
    nodes.append(N("Add", ["x", "f_raw"], ["y"]))
    outs = [n.output[0] for n in nodes]
    m = model(nodes, [vi("x", F, [3])], [out(o) for o in outs],
              [t_raw, t_typed, t_i64, t_i32, t_f64, t_h, t_hraw, t_bf, t_b, t_ext], check=False)
    return m


def external(name, dims, location, offset=None, length=None):
    t = TensorProto()
    t.name = name
    t.data_type = F
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def bad_external(location):
    t = external("w", [2], location)
    return model([N("Add", ["x", "w"], ["y"])], [vi("x", F, [2])], [out("y")], [t], check=False)


def errors():
    m = {}
    m["err_unsupported"] = model([N("Bernoulli", ["x"], ["i"], name="bern_1")], [vi("x", F, [4])], [out("i")])
    m["err_einsum_diagonal"] = model([N("Einsum", ["x"], ["y"], equation="bii->bi", name="ein")],
                                     [vi("x", F, ["B", "K", "K"])], [out("y")])
    m["err_einsum_three"] = model([N("Einsum", ["x", "x", "x"], ["y"], equation="ij,jk,kl->il", name="ein3")],
                                  [vi("x", F, [3, 3])], [out("y")])
    m["err_einsum_sizes"] = model([N("Einsum", ["x", "z"], ["y"], equation="bi,bi->b", name="ein_sz")],
                                  [vi("x", F, ["B", "K"]), vi("z", F, ["B", "L"])], [out("y")], check=False)
    m["err_topk_k"] = model([N("TopK", ["x", "k"], ["v", "i"], name="tk")], [vi("x", F, ["B", 4])],
                            [out("v"), out("i")], [ints("k", [5])], check=False)
    m["err_scatter_reduction"] = model([N("ScatterElements", ["x", "i", "x"], ["y"], reduction="add", name="se")],
                                       [vi("x", F, [2, 2]), vi("i", I64, [2, 2])], [out("y")], opset=18)
    m["err_scatter_reduction"].graph.node[0].attribute[0].s = b"mean"
    m["err_gathernd_symbolic_m"] = model([N("GatherND", ["x", "i"], ["y"], name="gnd")],
                                         [vi("x", F, [4, 4]), vi("i", I64, [2, "M"])], [out("y")], check=False)
    m["err_domain"] = model([N("FusedGemm", ["x"], ["y"], domain="com.microsoft", name="fg")],
                            [vi("x", F, [4])], [out("y")], check=False)
    m["err_opset"] = model([N("Relu", ["x"], ["y"])], [vi("x", F, [4])], [out("y")], opset=11)
    m["err_reshape_input"] = model([N("Reshape", ["x", "s"], ["y"], name="rs")],
                                   [vi("x", F, ["B", 4]), vi("s", I64, [2])], [out("y")])
    m["err_slice_steps"] = model([N("Slice", ["x", "st", "en", "ax", "stp"], ["y"], name="sl")],
                                 [vi("x", F, ["B", 4]), vi("stp", I64, [1])], [out("y")],
                                 [ints("st", [0]), ints("en", [2]), ints("ax", [1])])
    m["err_conv3d"] = model([N("Conv", ["x", "w"], ["y"], name="c3d")], [vi("x", F, [1, 2, 4, 4, 4, 8])],
                            [out("y")], [floats("w", [4, 2, 3, 3, 3, 3])], check=False)
    m["err_avgpool_same"] = model([N("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                                     auto_pad="SAME_UPPER", name="ap")],
                                  [vi("x", F, [1, 2, "H", "W"])], [out("y")])
    m["err_maxpool_indices"] = model([N("MaxPool", ["x"], ["y", "idx"], kernel_shape=[2, 2, 2], storage_order=1,
                                       name="mpi")], [vi("x", F, [1, 2, 4, 4, 4])], [out("y"), out("idx")])
    # spatial and sequence ops: what their handlers refuse
    H = 3
    m["err_rnn_symbolic_seq"] = model([N("RNN", ["x", "w", "r"], ["y"], hidden_size=H, name="rnn_s")],
                                      [vi("x", F, ["S", 2, 3])], [out("y")],
                                      [floats("w", [1, H, 3]), floats("r", [1, H, H])])
    m["err_lstm_seq_lens"] = model([N("LSTM", ["x", "w", "r", "", "sl"], ["y"], hidden_size=H, name="lstm_l")],
                                   [vi("x", F, [4, 2, 3])], [out("y")],
                                   [floats("w", [1, 4 * H, 3]), floats("r", [1, 4 * H, H]),
                                    numpy_helper.from_array(np.array([4, 2], np.int32), "sl")])
    m["err_gridsample_mode"] = model([N("GridSample", ["x", "g"], ["y"], mode="nearest", name="gsm")],
                                     [vi("x", F, [1, 1, 4, 4]), vi("g", F, [1, 2, 2, 2])], [out("y")], opset=20)
    m["err_gridsample_mode"].graph.node[0].attribute[0].s = b"area"
    m["err_order"] = model([N("Relu", ["t"], ["y"], name="late"), N("Relu", ["x"], ["t"], name="early")],
                           [vi("x", F, [4])], [out("y")], check=False)
    # issue 15: what the new elementwise handlers refuse
    m["err_prelu_slope"] = model([N("PRelu", ["x", "s"], ["y"], name="pr")], [vi("x", F, [2, 1])], [out("y")],
                                 [floats("s", [3])], check=False)
    m["err_bitshift_signed"] = model([N("BitShift", ["x", "x"], ["y"], name="bs", direction="LEFT")],
                                     [vi("x", TensorProto.INT8, [4])], [out("y")], check=False)
    m["err_bitshift_dir"] = model([N("BitShift", ["x", "x"], ["y"], name="bsd", direction="UP")],
                                  [vi("x", TensorProto.UINT8, [4])], [out("y")], check=False)
    m["err_mean_int"] = model([N("Mean", ["x", "x"], ["y"], name="mi")], [vi("x", I64, [4])], [out("y")],
                              check=False)
    m["err_clip_bound"] = model([N("Clip", ["x", "lo"], ["y"], name="cb")], [vi("x", F, [4]), vi("lo", F, [2])],
                                [out("y")], check=False)
    m["err_complex"] = model([N("Add", ["x", "q"], ["y"], name="addq")], [vi("x", F, [2])], [out("y")],
                             [numpy_helper.from_array(np.array([1, 2], np.complex64), "q")], check=False)
    m["err_ext_abs"] = bad_external("/etc/passwd")
    m["err_ext_dotdot"] = bad_external("sub/../../w.bin")
    m["err_ext_missing"] = bad_external("no_such_file.bin")
    # issue 13: accepted before, silently wrong or undefined
    m["err_opset_new"] = relu_at(99)
    m["err_opset_22"] = relu_at(22)
    m["err_dim_minus1"] = model([N("Relu", ["x"], ["y"])], [vi("x", F, [-1, 4])], [out("y")], check=False)
    m["err_dim_minus5"] = model([N("Relu", ["x"], ["y"])], [vi("x", F, [2, -5])], [out("y")], check=False)
    m["err_reduce_axes_attr"] = model([with_attr(N("ReduceSum", ["x"], ["y"], name="rsum"), "axes", [1])],
                                      [vi("x", F, [2, 4])], [out("y")], opset=13, check=False)
    drop = [N("Dropout", ["x", "ratio", "tm"], ["y"], name="drop_train")]
    ratio = numpy_helper.from_array(np.array(0.5, np.float32), "ratio")
    m["err_dropout_train"] = model(drop, [vi("x", F, [2, 4])], [out("y")],
                                   [ratio, numpy_helper.from_array(np.array(True), "tm")])
    m["err_dropout_train_input"] = model(drop, [vi("x", F, [2, 4]), vi("tm", TensorProto.BOOL, [])], [out("y")],
                                         [ratio])
    # issue 15: what the loss, quantization, window and dropout handlers refuse
    U8 = TensorProto.UINT8
    m["err_nll_reduction"] = model([N("NegativeLogLikelihoodLoss", ["x", "t"], ["y"], reduction="max", name="nll")],
                                   [vi("x", F, [2, 3]), vi("t", I64, [2])], [out("y")], check=False)
    m["err_quant_int32"] = model([N("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TensorProto.INT32, name="ql")],
                                 [vi("x", F, [4])], [out("y")], [numpy_helper.from_array(np.float32(0.5), "s")],
                                 opset=21, check=False)
    m["err_dequant_axis"] = model([N("DequantizeLinear", ["x", "s"], ["y"], axis=5, name="dql")],
                                  [vi("x", U8, [3, 2])], [out("y")],
                                  [numpy_helper.from_array(np.ones(3, np.float32), "s")], check=False)
    m["err_qlinear_zp"] = model([N("QLinearMatMul", ["a", "s", "z", "a", "s", "z1", "s", "z1"], ["y"], name="qmm")],
                                [vi("a", U8, [2, 2])], [out("y")],
                                [numpy_helper.from_array(np.float32(0.5), "s"),
                                 numpy_helper.from_array(np.array([1, 2], np.uint8), "z"),
                                 numpy_helper.from_array(np.uint8(1), "z1")], check=False)
    m["err_window_dtype"] = model([N("HannWindow", ["n"], ["y"], output_datatype=I64, name="hw")], [], [out("y")],
                                  [ints("n", 4)], check=False)
    m["err_window_size"] = model([N("HammingWindow", ["n"], ["y"], name="hmw")], [vi("n", I64, [])], [out("y")],
                                 check=False)
    then_g = helper.make_graph([N("Relu", ["x"], ["a"])], "then", [], [vi("a", F, None)])
    else_g = helper.make_graph([N("Neg", ["x"], ["b"])], "else", [], [vi("b", F, None)])
    sbody = helper.make_graph([N("Add", ["s_in", "a_t"], ["s_out"])], "sbody",
                              [vi("s_in", F, None), vi("a_t", F, None)], [vi("s_out", F, None)])
    m["err_scan_symbolic"] = model([N("Scan", ["s0", "xs"], ["s_fin"], body=sbody, num_scan_inputs=1, name="scan_s")],
                                   [vi("s0", F, [3]), vi("xs", F, ["S", 3])], [vi("s_fin", F, [3])], check=False)
    lbody = helper.make_graph([N("ReduceSum", ["y_in"], ["tot"], keepdims=0), N("Less", ["tot", "lim"], ["c_out"]),
                               N("Add", ["y_in", "y_in"], ["y_out"])], "lbody",
                              [vi("i", I64, []), vi("c_in", TensorProto.BOOL, []), vi("y_in", F, None)],
                              [vi("c_out", TensorProto.BOOL, []), vi("y_out", F, None)])
    m["err_loop_cond"] = model([N("Loop", ["trip", "", "y0"], ["y_fin"], body=lbody, name="loop_c")],
                               [vi("y0", F, [4])], [vi("y_fin", F, [4])],
                               [ints("trip", 3), numpy_helper.from_array(np.float32(100), "lim")], check=False)
    m["err_if_runtime"] = model([N("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g, name="if_rt")],
                                [vi("x", F, [4]), vi("cond", TensorProto.BOOL, [])], [vi("y", F, [4])], check=False)
    return m


def data_sized():
    """Ops whose output size depends on the data: NonZero; Compress with an axis, without one,
    with a condition shorter than the axis (symbolic) and longer than it; Unique with all four
    outputs, with and without an axis, and with Y alone; NonMaxSuppression with its optional inputs
    as graph inputs, and with max_output_boxes_per_class left out before a given iou_threshold."""
    B = TensorProto.BOOL
    nodes = [N("NonZero", ["x"], ["nz"]),
             N("Compress", ["x", "cond"], ["c_axis"], axis=1),
             N("Compress", ["x", "c3"], ["c_flat"]),
             N("Compress", ["x", "c3"], ["c_short"], axis=-2),
             N("Compress", ["x", "c40"], ["c_long"], axis=1),
             N("Unique", ["x"], ["u_y", "u_idx", "u_inv", "u_cnt"]),
             N("Unique", ["x"], ["ua_y", "ua_idx", "ua_inv", "ua_cnt"], axis=1, sorted=0),
             N("Unique", ["x"], ["uy_only"]),
             N("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "thr"], ["sel"], center_point_box=1),
             N("NonMaxSuppression", ["boxes", "scores", "", "iou"], ["sel_gap"])]
    inputs = [vi("x", F, ["B", "L"]), vi("cond", B, ["L"]), vi("c3", B, [3]), vi("c40", B, [40]),
              vi("boxes", F, ["NB", "N", 4]), vi("scores", F, ["NB", "C", "N"]), vi("mo", I64, [1]),
              vi("iou", F, [1]), vi("thr", F, [1])]
    outs = ["nz", "c_axis", "c_flat", "c_short", "c_long", "u_y", "u_idx", "u_inv", "u_cnt", "ua_y", "ua_idx",
            "ua_inv", "ua_cnt", "uy_only", "sel", "sel_gap"]
    return model(nodes, inputs, [out(o) for o in outs])


def data_sized_e2e(with_axis=True):
    """The data-sized ops on values that make their counts vary, for the e2e run against onnxruntime
    (tests/e2e): NonZero of Relu(x) (about half zero), Compress of x by x > 0 along an axis and
    flattened, Unique of Round(2 x) (repeated values; with an axis over rows of Round(x / 2), mostly
    zero), NonMaxSuppression of random boxes (corners in either order) with constant limits.
    with_axis=False leaves out the Unique with an axis, which the CUDA target refuses (data_sized_gpu: the
    rest runs on the GPU)."""
    nodes = [N("Relu", ["x"], ["rx"]), N("NonZero", ["rx"], ["nz"]),
             N("ReduceSum", ["x", "ax0"], ["colsum"], keepdims=0), N("Greater", ["colsum", "zero"], ["pos"]),
             N("Compress", ["x", "pos"], ["c_axis"], axis=1),
             N("Greater", ["x", "zero"], ["xpos"]), N("Reshape", ["xpos", "flat"], ["xpos_flat"]),
             N("Compress", ["x", "xpos_flat"], ["c_flat"]),
             N("Mul", ["x", "two"], ["x2"]), N("Round", ["x2"], ["xr"]),
             N("Unique", ["xr"], ["u_y", "u_idx", "u_inv", "u_cnt"]),
             N("Div", ["x", "two"], ["xh"]), N("Round", ["xh"], ["xhr"]),
             N("Unique", ["xhr"], ["ua_y", "ua_idx", "ua_inv", "ua_cnt"], axis=0, sorted=0),
             N("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "thr"], ["sel"]),
             N("NonMaxSuppression", ["boxes", "scores", "mo", "iou"], ["sel_all"])]
    inits = [ints("ax0", [0]), ints("flat", [-1]), ints("mo", [2]),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
             numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array([0.3], np.float32), "iou"),
             numpy_helper.from_array(np.array([0.0], np.float32), "thr")]
    outs = ["nz", "c_axis", "c_flat", "u_y", "u_idx", "u_inv", "u_cnt", "ua_y", "ua_idx", "ua_inv", "ua_cnt", "sel",
            "sel_all"]
    if not with_axis:
        nodes = [n for n in nodes if "ua_y" not in n.output]
        outs = [o for o in outs if not o.startswith("ua_")]
    return model(nodes, [vi("x", F, ["B", "L"]), vi("boxes", F, ["Bn", "Nb", 4]), vi("scores", F, ["Bn", "Cn", "Nb"])],
                 [out(o) for o in outs], inits)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_models.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {
        "vit_patch": vit_patch(), "conv_pool": conv_pool(), "attention": attention(),
        "elementwise": elementwise(),
        "gelu": gelu(),
        "rotary": rotary(),
        "nan_inf": nan_inf(),
        "dw_res": dw_res(),
        "twin_chains": twin_chains(),
        "concat_wide": concat_wide(),
        "convnext_blocks": convnext_blocks(),
        "reduce13": reductions(13),
        "reduce18": reductions(18),
        "int8": int_dtypes(("i8", "u8")),
        "int16": int_dtypes(("i16", "u16")),
        "int32_64": int_dtypes(("u32", "u64")),
        "activations": activations(),
        "norms": norms(),
        "spatial_ref": spatial_ref(),
        "resize_modes": resize_modes(),
        "spatial_seq": spatial_seq(), "recurrent": recurrent(),
        "movement": movement(), "transposes": transposes(), "split18": split18(), "expand_idiom": expand_idiom(),
        "unnamed_dims": unnamed_dims(), "shared_symbol": shared_symbol(), "initializers": initializers(out),
        "reduce_empty_axes": reduce_empty_axes(), "dropout_modes": dropout_modes(),
        "relu21": relu_at(21), "reduce_ops": reduce_ops(), "index_ops": index_ops(),
        "losses": losses(), "quant": quant(), "attention_shapes": attention_shapes(), "optionals": optionals(),
        "if_known": if_known(), "if_size": if_size(), "if_nested": if_nested(), "loops": loops(),
        "data_sized": data_sized(), "data_sized_e2e": data_sized_e2e(),
        "data_sized_gpu": data_sized_e2e(with_axis=False),
        "mask_pad": hf_mask("pad"), "mask_causal_pad": hf_mask("causal_pad"), "mask_bool_where": hf_mask("bool_where"),
        "mask_fill_1e9": hf_mask("bool_where", -1e9),
    }
    models.update(errors())
    for name, m in models.items():
        onnx.save(m, os.path.join(out, name + ".onnx"))
    print(f"gen_models.py: wrote {len(models)} models to {out}")


if __name__ == "__main__":
    main()
