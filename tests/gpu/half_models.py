"""ONNX models converted to half storage, as `model.half()` exports them.

to_half(src, dst, elem) rewrites every float32 tensor of an ONNX model to
`elem` (onnx.TensorProto.FLOAT16 or BFLOAT16): graph inputs and outputs,
value_info, initializers and Constant / ConstantOfShape values (the data
rounded by numpy for fp16, by round-to-nearest-even on the top 16 bits for
bf16), and Cast / CastLike targets of FLOAT. Integer and bool tensors are
left alone. The GPU test compiles such models and compares the CUDA backend
with the reference backend running the same half engine (storage rounded to
half after every op, math in double), which tests the CUDA half kernels and
library calls op by op.
"""
import numpy as np
import onnx
from onnx import numpy_helper

F32 = onnx.TensorProto.FLOAT


def _bf16_bits(a):
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    r = (u + 0x7FFF + ((u >> 16) & 1)) >> 16  # round to nearest even
    nan = np.isnan(a)
    r = np.where(nan, 0x7FC0, r)
    return r.astype(np.uint16)


def _tensor(t, elem):
    if t.data_type != F32:
        return t
    a = numpy_helper.to_array(t)
    if elem == onnx.TensorProto.FLOAT16:
        with np.errstate(over="ignore"):  # beyond 65504 becomes inf, as model.half() makes it
            out = numpy_helper.from_array(a.astype(np.float16), t.name)
    else:
        out = onnx.TensorProto()
        out.name = t.name
        out.data_type = onnx.TensorProto.BFLOAT16
        out.dims.extend(a.shape)
        out.raw_data = _bf16_bits(a).tobytes()
    return out


def _init(name, a, elem):
    """an initializer from float values: f32 when elem is FLOAT, else rounded to elem (f16, bf16)"""
    t = numpy_helper.from_array(np.asarray(a, np.float32), name)
    return t if elem == F32 else _tensor(t, elem)


def _value_infos(g, elem):
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        tt = vi.type.tensor_type
        if tt.elem_type == F32:
            tt.elem_type = elem


def _graph_to_half(g, elem):
    """g's f32 values, initializers, constants and casts to f32 in elem, and so its
    subgraphs' (If branches, Loop and Scan bodies)"""
    _value_infos(g, elem)
    for i, t in enumerate(g.initializer):
        g.initializer[i].CopyFrom(_tensor(t, elem))
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(_tensor(a.t, elem))
            if a.type == onnx.AttributeProto.GRAPH:
                _graph_to_half(a.g, elem)
            if a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    _graph_to_half(sg, elem)
            if n.op_type == "Cast" and a.name == "to" and a.i == F32:
                a.i = elem


def to_half(src, dst, elem=onnx.TensorProto.FLOAT16):
    m = onnx.load(src)
    _graph_to_half(m.graph, elem)
    onnx.save(m, dst)
    return dst


def _model(name, nodes, inputs, inits, elem):
    from onnx import helper
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, elem, d) for n, d in inputs],
                          [helper.make_tensor_value_info("y", elem, None)], initializer=inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def extra_models(tmp, elem=onnx.TensorProto.FLOAT16):
    """Patterns written in half directly: a row kernel (softmax, layer norm) whose
    result an elementwise epilogue reads in registers (the fusion plan's epilogue;
    GPT-2's softmax -> Cast(f16) is one), and the Cast between two halves.
    elem FLOAT writes the same patterns in f32 (names end in _f, _h for half).
    Returns the file names (without .onnx) written to tmp."""
    from onnx import helper
    rng = np.random.default_rng(5)
    sfx = "h" if elem != F32 else "f"

    def init(name, a):
        return _init(name, a, elem)

    out = []
    nodes = [helper.make_node("Softmax", ["x"], ["p"], axis=-1),
             helper.make_node("Cast", ["p"], ["pc"], to=elem),
             helper.make_node("Mul", ["pc", "two"], ["y"])]
    m = _model("softmax_epilogue", nodes, [("x", ["B", "S", "S"])], [init("two", np.array(2.0))], elem)
    onnx.save(m, f"{tmp}/softmax_epilogue_{sfx}.onnx")
    out.append(f"softmax_epilogue_{sfx}")
    nodes = [helper.make_node("Add", ["x", "r"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
             helper.make_node("Sigmoid", ["n"], ["sg"]),
             helper.make_node("Mul", ["n", "sg"], ["y"])]
    m = _model("layernorm_silu", nodes, [("x", ["B", "S", 96]), ("r", ["B", "S", 96])],
               [init("g", rng.standard_normal(96)), init("b", rng.standard_normal(96))], elem)
    onnx.save(m, f"{tmp}/layernorm_silu_{sfx}.onnx")
    out.append(f"layernorm_silu_{sfx}")
    # attention whose probabilities pass a cast to their own dtype before P.V
    # (transformers' softmax(...).type(value.dtype)): fused all the same
    d = 64
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["ss"]),
             helper.make_node("Add", ["ss", "mask"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
             helper.make_node("Cast", ["p"], ["pc"], to=elem),
             helper.make_node("MatMul", ["pc", "v"], ["y"])]
    qkv = [(n, ["B", 2, "S", d]) for n in ("q", "k", "v")]
    m = _model("attention_cast", nodes, qkv + [("mask", ["B", 1, "S", "S"])],
               [init("scale", np.array(d ** -0.5))], elem)
    onnx.save(m, f"{tmp}/attention_cast_{sfx}.onnx")
    out.append(f"attention_cast_{sfx}")
    # padding masks shared by every query row ([B, 1, 1, S]: BERT's additive mask, and a bool
    # key mask through Where with a finite fill): the half kernel reads them once per key tile
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Div", ["s", "eight"], ["ss"]),
             helper.make_node("Add", ["ss", "mask"], ["sm"]),
             helper.make_node("Greater", ["keep", "zero"], ["kb"]),
             helper.make_node("Where", ["kb", "sm", "fill"], ["sw"]),
             helper.make_node("Softmax", ["sw"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    m = _model("attention_padmask", nodes, qkv + [("mask", ["B", 1, 1, "S"]), ("keep", ["B", 1, 1, "S"])],
               [init("eight", np.array(8.0)), init("zero", np.array(-0.5)), init("fill", np.array(-1e4))], elem)
    onnx.save(m, f"{tmp}/attention_padmask_{sfx}.onnx")
    out.append(f"attention_padmask_{sfx}")
    # transformers 5's masks: a condition made [B, 1, 1, S] (padding) or [B, 1, S, 1] (per query row),
    # expanded to the score's shape, then where(cond, 0, fill) added, or a where over the scores; and a
    # per-row additive bias expanded: the kernel reads each through the expand (and the where) once per
    # key tile or once per row instead of per score
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["ss"]),
             helper.make_node("Shape", ["ss"], ["shp"]),
             helper.make_node("Greater", ["keep", "zero"], ["kb"]),
             helper.make_node("Expand", ["kb", "shp"], ["kbe"]),
             helper.make_node("Where", ["kbe", "nil", "fill"], ["am"]),
             helper.make_node("Add", ["ss", "am"], ["s2"]),
             helper.make_node("Expand", ["rowbias", "shp"], ["rbe"]),
             helper.make_node("Add", ["s2", "rbe"], ["s3"]),
             helper.make_node("Greater", ["rowkeep", "zero"], ["rk"]),
             helper.make_node("Expand", ["rk", "shp"], ["rke"]),
             helper.make_node("Where", ["rke", "s3", "fill"], ["sw"]),
             helper.make_node("Softmax", ["sw"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    m = _model("attention_hfmask", nodes,
               qkv + [("keep", ["B", 1, 1, "S"]), ("rowbias", ["B", 1, "S", 1]), ("rowkeep", ["B", 1, "S", 1])],
               [init("scale", np.array(d ** -0.5)), init("zero", np.array(-0.5)), init("nil", np.array(0.0)),
                init("fill", np.array(-1e4))], elem)
    onnx.save(m, f"{tmp}/attention_hfmask_{sfx}.onnx")
    out.append(f"attention_hfmask_{sfx}")
    # GPT-2's mask in transformers 5: and(kv_idx <= q_idx (two ranges), padding), expanded, where(., 0,
    # fill): the kernel compares positions and reads the padding once per key tile (no tile is skipped:
    # a row whose keys are all padded takes the fill everywhere, future keys included, as here)
    i64 = onnx.TensorProto.INT64
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["ss"]),
             helper.make_node("Shape", ["ss"], ["shp"]),
             helper.make_node("Gather", ["shp", "two"], ["slen"], axis=0),
             helper.make_node("Range", ["z64", "slen", "o64"], ["rk"]),
             helper.make_node("Range", ["z64", "slen", "o64"], ["rq"]),
             helper.make_node("Unsqueeze", ["rk", "ak"], ["kvidx"]),
             helper.make_node("Unsqueeze", ["rq", "aq"], ["qidx"]),
             helper.make_node("LessOrEqual", ["kvidx", "qidx"], ["le"]),
             helper.make_node("Greater", ["keep", "zero"], ["kb"]),
             helper.make_node("And", ["le", "kb"], ["both"]),
             helper.make_node("Expand", ["both", "shp"], ["be"]),
             helper.make_node("Where", ["be", "nil", "fill"], ["am"]),
             helper.make_node("Add", ["ss", "am"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    ints = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
            (("two", 2), ("z64", 0), ("o64", 1), ("ak", [0, 1, 2]), ("aq", [0, 1, 3]))]
    # the fill is -inf, as transformers' min of the f16 cast makes it: a finite fill added to f16 scores
    # rounds each sum to f16 in the graph (8 units at 1e4) while the kernel keeps scores in fp32, which
    # differ wherever a row's keys are all masked; with -inf such rows are NaN on both sides
    m = _model("attention_hfcausal", nodes, qkv + [("keep", ["B", 1, 1, "S"])],
               [init("scale", np.array(d ** -0.5)), init("zero", np.array(-0.5)), init("nil", np.array(0.0)),
                init("fill", np.array(-np.inf))] + ints, elem)
    onnx.save(m, f"{tmp}/attention_hfcausal_{sfx}.onnx")
    out.append(f"attention_hfcausal_{sfx}")
    return out


def conv1x1_models(tmp):
    """1x1 convolutions (stride 1, no pads, one group), which the CUDA target runs as cuBLASLt GEMMs
    (one per image, the per-channel bias, the residual as C, ReLU; codegen/cuda_target.c), at odd
    H, W (7 x 9: no vector-aligned rows) and the B sweep (1, 4, 5, 7, 8): bias + ReLU, bias + residual
    + ReLU, no bias, bias + residual without an activation; and a stride-2 1x1 convolution (a
    ResNet downsample), which stays on cuDNN, beside them. Written in f32 (_f) and f16 (_h; bf16 is
    the f32 model built with --bf16, as numpy has no bf16 inputs); returns the file names (without
    .onnx) written to tmp."""
    from onnx import helper
    out = []
    for elem, sfx in ((F32, "f"), (onnx.TensorProto.FLOAT16, "h")):
        rng = np.random.default_rng(11)

        def init(name, a, elem=elem):
            return _init(name, a, elem)

        def weight(name, o, i):
            return init(name, rng.standard_normal((o, i, 1, 1)) / np.sqrt(i))

        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"]),  # bias + relu
                 helper.make_node("Relu", ["c1"], ["r1"]),
                 helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),  # bias + residual + relu
                 helper.make_node("Add", ["c2", "x"], ["s2"]),
                 helper.make_node("Relu", ["s2"], ["r2"]),
                 helper.make_node("Conv", ["r2", "w3"], ["c3"]),  # no bias
                 helper.make_node("Conv", ["r2", "w4", "b4"], ["c4"]),  # bias, then c3 as its residual
                 helper.make_node("Add", ["c4", "c3"], ["s4"]),
                 helper.make_node("Conv", ["s4", "w5", "b5"], ["y"], strides=[2, 2])]  # downsample: cuDNN
        inits = [weight("w1", 32, 16), init("b1", rng.standard_normal(32)),
                 weight("w2", 16, 32), init("b2", rng.standard_normal(16)),
                 weight("w3", 16, 16), weight("w4", 16, 16), init("b4", rng.standard_normal(16)),
                 weight("w5", 24, 16), init("b5", rng.standard_normal(24))]
        m = _model("conv1x1", nodes, [("x", ["B", 16, 7, 9])], inits, elem)
        onnx.save(m, f"{tmp}/conv1x1_{sfx}.onnx")
        out.append(f"conv1x1_{sfx}")
    return out


def gemm_epilogue_models(tmp):
    """GEMMs whose result an elementwise group reads, which the CUDA target runs as one kernel of
    its own in half precision (codegen/cuda_emit_gemm.c): a ConvNeXt/BERT MLP (bias, then the erf
    GELU as ONNX exports write it, x * (1 + erf(x / sqrt 2)) * 0.5, reading x twice; K 96 N 384 with
    tiles 128 wide, then K 384 N 96 with tiles 32 wide, a layer scale and the residual), a Llama
    gate (gate and up projections, silu(gate) * up; N 192: tiles 64 wide) and a Gemm with B as
    [N, K] (transB), its C as the bias, a ReLU (the library-style activation) and then a group
    (x * 2 - 1). M = B * S takes every size of the sweep (rows past M on the tile edge). Written in
    f32 (_f: built with --fp16 and --bf16) and f16 (_h); returns the file names written to tmp."""
    from onnx import helper
    out = []
    for elem, sfx in ((F32, "f"), (onnx.TensorProto.FLOAT16, "h")):
        rng = np.random.default_rng(13)

        def init(name, a, elem=elem):
            return _init(name, a, elem)

        nodes = [helper.make_node("MatMul", ["x", "w1"], ["m1"]),
                 helper.make_node("Add", ["m1", "b1"], ["a1"]),
                 helper.make_node("Div", ["a1", "sqrt2"], ["d"]),
                 helper.make_node("Erf", ["d"], ["e"]),
                 helper.make_node("Add", ["e", "one"], ["e1"]),
                 helper.make_node("Mul", ["a1", "e1"], ["p"]),
                 helper.make_node("Mul", ["p", "half"], ["gl"]),
                 helper.make_node("MatMul", ["gl", "w2"], ["m2"]),
                 helper.make_node("Add", ["m2", "b2"], ["a2"]),
                 helper.make_node("Mul", ["a2", "gamma"], ["sc"]),
                 helper.make_node("Add", ["sc", "x"], ["y"])]
        inits = [init("w1", rng.standard_normal((96, 384)) / np.sqrt(96)), init("b1", rng.standard_normal(384)),
                 init("w2", rng.standard_normal((384, 96)) / np.sqrt(384)), init("b2", rng.standard_normal(96)),
                 init("gamma", rng.standard_normal(96)), init("sqrt2", np.array(np.sqrt(2.0))),
                 init("one", np.array(1.0)), init("half", np.array(0.5))]
        onnx.save(_model("gemm_gelu", nodes, [("x", ["B", "S", 96])], inits, elem), f"{tmp}/gemm_gelu_{sfx}.onnx")
        nodes = [helper.make_node("MatMul", ["x", "wu"], ["up"]),
                 helper.make_node("MatMul", ["x", "wg"], ["gate"]),
                 helper.make_node("Sigmoid", ["gate"], ["sg"]),
                 helper.make_node("Mul", ["gate", "sg"], ["silu"]),
                 helper.make_node("Mul", ["silu", "up"], ["h"]),
                 helper.make_node("MatMul", ["h", "wd"], ["y"])]
        inits = [init("wu", rng.standard_normal((64, 192)) / 8), init("wg", rng.standard_normal((64, 192)) / 8),
                 init("wd", rng.standard_normal((192, 64)) / np.sqrt(192))]
        onnx.save(_model("gemm_silu", nodes, [("x", ["B", "S", 64])], inits, elem), f"{tmp}/gemm_silu_{sfx}.onnx")
        nodes = [helper.make_node("Gemm", ["x", "w", "c"], ["g"], transB=1),
                 helper.make_node("Relu", ["g"], ["r"]),
                 helper.make_node("Mul", ["r", "two"], ["r2"]),
                 helper.make_node("Sub", ["r2", "one"], ["y"])]
        inits = [init("w", rng.standard_normal((128, 64)) / 8), init("c", rng.standard_normal(128)),
                 init("two", np.array(2.0)), init("one", np.array(1.0))]
        onnx.save(_model("gemm_relu", nodes, [("x", ["S", 64])], inits, elem), f"{tmp}/gemm_relu_{sfx}.onnx")
        out += [f"gemm_gelu_{sfx}", f"gemm_silu_{sfx}", f"gemm_relu_{sfx}"]
    return out
