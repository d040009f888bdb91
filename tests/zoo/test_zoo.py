"""The model zoo (ctest label `python`): models people bring, built from their libraries with random weights
(torchvision, timm, Hugging Face transformers configs; nothing is downloaded), each compiled for dynamic
ranges through both frontends and run on the reference backend against eager PyTorch in fp32:

  torch  symc.compile (torch.export, the tracer's ATen lowerings)
  onnx   torch.onnx.export(dynamo=False) (the legacy TorchScript exporter), then `symc compile`
  dynamo torch.onnx.export(dynamo=True), then `symc compile` (where onnxscript is installed)

at min, opt, max and an off-opt point of every range (relative error < 1e-4, same shape). Batch ranges
start at 1 with opt 1 (batch-1 serving), so the torch path's trace-at-2 is covered. Every text model runs
again as users call it (the `+mask` entries, torch path): input_ids and a padding attention_mask declared by
one symc.Input, opt batch 8.

Configs are small (few layers, small hidden sizes, small images) so the CPU run fits CI; SYMC_ZOO_FULL=1
builds the libraries' default sizes (for a GPU machine). SYMC_ZOO_ONLY=name,name runs a subset (a model's full
name selects it alone, any other text every model whose name holds it).

SYMC_ZOO_GPU=1 (a CUDA machine; scripts/device_zoo.sh) runs the same checks on the CUDA backend: engines are
compiled with GPU code (symc.compile(gpu=True); `symc compile` without --no-gpu), fed torch CUDA tensors, and
compared with eager fp32 on the GPU with TF32 off (torch.backends.cuda.matmul.allow_tf32 and
torch.backends.cudnn.allow_tf32 False). Models in NO_CUDA (an IR op the CUDA target has no kernel for yet)
keep reference-backend engines and CPU eager, and the log says so. The GPU tolerance is the CPU's, 1e-4: an
fp32 engine computes in true fp32 on the GPU (runtime/cuda/cuda_gemm.c asks cuBLASLt for CUBLAS_COMPUTE_32F,
runtime/cuda/cuda_conv.c sets CUDNN_FMA_MATH, the fused attention splits every TF32 product 3xTF32, about
fp32's accuracy; TF32 only with `--tf32`), so engine and eager differ by fp32 summation order alone (about
1e-6 on these models), and TF32 anywhere (~1e-3) would fail it. Combine with SYMC_ZOO_FULL=1 for full sizes.

A model whose path fails today for a reason another part of symc owns (an IR op not there yet) is listed in
EXPECTED: the test asserts that path fails with the clear error naming the op, so it fails loudly when the
path starts working (flip the entry then) or fails differently. A wrong number is never expected.
docs/MODELS.md holds the coverage table this test checks.

Its exports and engines (about 1 GB) go to a temporary folder removed at exit; SYMC_ZOO_KEEP=1 keeps it.

usage: test_zoo.py [path/to/libsymc.so [path/to/symc]]
"""
import atexit
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "torch"))
from torch_test_common import failures, finish, log, setup  # noqa: E402

symc = setup("timm", "torchvision", "transformers")
import timm  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402
import transformers  # noqa: E402
from symc.runtime import EngineModule  # noqa: E402

FULL = os.environ.get("SYMC_ZOO_FULL") == "1"
GPU = os.environ.get("SYMC_ZOO_GPU") == "1"
if GPU:
    if not torch.cuda.is_available():
        print("FAIL: SYMC_ZOO_GPU=1 but torch.cuda is not available")
        sys.exit(1)
    torch.backends.cuda.matmul.allow_tf32 = False  # eager in true fp32, as symc's fp32 engines compute
    torch.backends.cudnn.allow_tf32 = False
ONLY = [s for s in os.environ.get("SYMC_ZOO_ONLY", "").split(",") if s]
SYMC = sys.argv[2] if len(sys.argv) > 2 else None
try:
    import onnxscript  # noqa: F401 - torch.onnx.export(dynamo=True) needs it
    HAVE_DYNAMO_ONNX = True
except Exception:  # noqa: BLE001
    HAVE_DYNAMO_ONNX = False
TMP = tempfile.mkdtemp(prefix="symc_zoo_")  # exports and engines, about 1 GB: removed at exit
if os.environ.get("SYMC_ZOO_KEEP") != "1":
    atexit.register(shutil.rmtree, TMP, ignore_errors=True)
RTOL = 1e-4  # the reference backend, and the CUDA backend's true-fp32 engines (the file-top paragraph says why)

# (model, frontend) -> a piece of the error the path raises today (the op another helper's IR op will
# serve). Flip an entry (delete it) once the path passes.
EXPECTED = {
    # torch's legacy exporter has no conversion for scaled_dot_product_attention(enable_gqa=True)
    ("hf qwen2", "onnx"): "scaled_dot_product_attention not implemented if enable_gqa is True",
    ("hf mistral", "onnx"): "scaled_dot_product_attention not implemented if enable_gqa is True",
}
# the whole refusal of an EXPECTED entry that names the remedy, checked too
EXPECTED_ALSO = {}
# entries whose refusal comes from the torch/transformers versions installed, not from symc: with other
# versions the exporter does not emit the op (transformers 5.17 with torch 2.11 on the device exports
# Qwen2 through the legacy exporter), and the path must then pass like any other
VERSION_DEPENDENT = {("hf qwen2", "onnx"), ("hf mistral", "onnx")}


# models whose IR holds an op the CUDA target has no kernel for yet (it refuses the op by name): their ONNX
# paths build reference-backend engines (symc compile --no-gpu), which is what the CPU mode runs anyway; in GPU
# mode every path of these models stays on the reference backend (and says so)
NO_CUDA = {}


class Out0(torch.nn.Module):
    """A Hugging Face model returning one tensor (its first output: logits or last_hidden_state)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        out = self.m(input_ids=input_ids)
        return out[0]


class OutMask(torch.nn.Module):
    """A Hugging Face text model called as users call it: input_ids and an attention_mask (1 for a token, 0 for
    padding), returning its first output."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask)[0]


def with_mask(build):
    """The model of an Out0 builder, called with input_ids and attention_mask (OutMask)."""
    def b():
        model, vocab = build()
        return OutMask(model.m), vocab
    return b


def hf(cls_name, cfg_name, **cfg):
    def build():
        cfg_cls = getattr(transformers, cfg_name)
        c = cfg_cls() if FULL else cfg_cls(**cfg)
        m = getattr(transformers, cls_name)(c)
        return Out0(m), c.vocab_size
    return build


SMALL_TXT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                 vocab_size=100, max_position_embeddings=64)

# name -> (builder, kind); kind "image" (B, 3, H, W) or "text" (B, S) int64 ids
# dynamic H, W from IMG (at 32 a stride-32 CNN ends at 1x1, a size torch.export specializes: refused)
IMG = 40 if not FULL else 224
FIX = 64 if not FULL else 224  # the fixed-resolution models
MODELS = {
    "torchvision resnet18": (lambda: torchvision.models.resnet18(num_classes=10), "image"),
    "torchvision mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(num_classes=10), "image"),
    "torchvision densenet121": (lambda: torchvision.models.densenet121(num_classes=10) if FULL else
                                torchvision.models.DenseNet(growth_rate=8, block_config=(2, 2, 2, 2),
                                                            num_init_features=16, num_classes=10), "image64"),
    "torchvision regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(num_classes=10), "image"),
    "torchvision swin_t": (lambda: torchvision.models.swin_t(num_classes=10) if FULL else
                           torchvision.models.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[1, 1],
                                                              num_heads=[2, 2], window_size=[4, 4],
                                                              num_classes=10), "swin"),
    "timm convnext_atto": (lambda: timm.create_model("convnext_atto", pretrained=False, num_classes=10,
                                                     **({} if FULL else {"depths": (1, 1, 1, 1)})), "image64"),
    "timm mixer_s16_224": (lambda: timm.create_model("mixer_s16_224", pretrained=False, num_classes=10) if FULL
                           else timm.models.mlp_mixer.MlpMixer(num_classes=10, img_size=64, patch_size=16,
                                                               num_blocks=2, embed_dim=64), "mixer"),
    "timm levit_128s": (lambda: timm.create_model("levit_128s", pretrained=False, num_classes=10,
                                                  **({} if FULL else {"img_size": 64})), "levit"),
    "hf distilbert": (hf("DistilBertModel", "DistilBertConfig", dim=32, n_layers=2, n_heads=4, hidden_dim=64,
                         vocab_size=100, max_position_embeddings=64), "text"),
    "hf bert": (hf("BertModel", "BertConfig", **SMALL_TXT), "text"),
    "hf roberta": (hf("RobertaModel", "RobertaConfig", **SMALL_TXT), "text"),
    "hf albert": (hf("AlbertModel", "AlbertConfig", embedding_size=16, **SMALL_TXT), "text"),
    "hf electra": (hf("ElectraModel", "ElectraConfig", embedding_size=16, **SMALL_TXT), "text"),
    "hf gpt2": (hf("GPT2LMHeadModel", "GPT2Config", n_embd=32, n_layer=2, n_head=4, vocab_size=100,
                   n_positions=64), "text"),
    "hf gpt_neox": (hf("GPTNeoXForCausalLM", "GPTNeoXConfig", **SMALL_TXT), "text"),
    "hf qwen2": (hf("Qwen2ForCausalLM", "Qwen2Config", num_key_value_heads=2, **SMALL_TXT), "text"),
    "hf mistral": (hf("MistralForCausalLM", "MistralConfig", num_key_value_heads=2, **SMALL_TXT), "text"),
    "hf clip_text": (hf("CLIPTextModel", "CLIPTextConfig", hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=64, vocab_size=100,
                        max_position_embeddings=64), "text"),
}


class Main(torch.nn.Module):
    """A model returning a dict or a tuple, reduced to one tensor: the output named `key` (torchvision's
    segmentation "out"), else the first."""

    def __init__(self, m, key=None):
        super().__init__()
        self.m, self.key = m, key

    def forward(self, x):
        out = self.m(x)
        return out[self.key] if self.key is not None else out[0]


def hf_cfg(cls_name, cfg_name, part=None, **cfg):
    """A Hugging Face model from its config class (default sizes with SYMC_ZOO_FULL), optionally one part of it
    (Whisper's encoder), returning its first output."""
    def build():
        c = getattr(transformers, cfg_name)() if FULL else getattr(transformers, cfg_name)(**cfg)
        m = getattr(transformers, cls_name)(c)
        return Main(getattr(m, part) if part else m)
    return build


class Fpn(torch.nn.Module):
    """A detection backbone: ResNet-18's four stages into torchvision.ops.FeaturePyramidNetwork (top-down nearest
    upsampling and lateral 1x1 convs: what resnet_fpn_backbone builds, less its extra max-pool level), every level
    flattened and concatenated."""

    def __init__(self):
        super().__init__()
        from torchvision.models._utils import IntermediateLayerGetter
        self.body = IntermediateLayerGetter(torchvision.models.resnet18(),
                                            {f"layer{i}": str(i - 1) for i in range(1, 5)})
        self.fpn = torchvision.ops.FeaturePyramidNetwork([64, 128, 256, 512], 256 if FULL else 32)

    def forward(self, x):
        return torch.cat([v.flatten(1) for v in self.fpn(self.body(x)).values()], 1)


def fpn():
    return Fpn()


# issue 15's models: segmentation (bilinear upsampling), a detection backbone with an FPN (nearest upsampling),
# speech (conv1d, group norm, Whisper's encoder), CLIP's vision tower
MODELS.update({
    "torchvision lraspp_mobilenet_v3": (lambda: Main(torchvision.models.segmentation.lraspp_mobilenet_v3_large(
        weights=None, weights_backbone=None, num_classes=3), key="out"), "image64"),
    "torchvision resnet18_fpn": (fpn, "image64"),
    "hf whisper_encoder": (hf_cfg("WhisperModel", "WhisperConfig", part="encoder", d_model=32, encoder_layers=2,
                                  encoder_attention_heads=4, encoder_ffn_dim=64, decoder_layers=1,
                                  decoder_attention_heads=4, decoder_ffn_dim=64, num_mel_bins=16,
                                  max_source_positions=32, vocab_size=100, pad_token_id=0, bos_token_id=1,
                                  eos_token_id=2, decoder_start_token_id=1), "mel"),
    "hf wav2vec2": (hf_cfg("Wav2Vec2Model", "Wav2Vec2Config", hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=64, conv_dim=(16, 16, 16),
                           conv_kernel=(10, 3, 3), conv_stride=(5, 2, 2), feat_extract_norm="group",
                           num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4), "wave"),
    "timm coatnet_nano_rw": (lambda: timm.create_model("coatnet_nano_rw_224", pretrained=False, num_classes=10,
                                                      **({} if FULL else {"img_size": FIX})), "fixed"),
    "timm maxvit_nano_rw": (lambda: timm.create_model("maxvit_nano_rw_256", pretrained=False, num_classes=10,
                                                     img_size=FIX), "fixed"),
    "hf clip_vision": (hf_cfg("CLIPVisionModel", "CLIPVisionConfig", hidden_size=32, intermediate_size=64,
                              num_hidden_layers=2, num_attention_heads=4, image_size=FIX, patch_size=16), "fixed"),
})
# issue 29: every text model as users call it, with input_ids and a padding attention_mask (rows of different
# lengths, zeros at the end), opt batch 8 (torch path only), and T5's encoder; BERT, GPT-2 and Qwen2 with S from 1
# too (the others from 2: S = 1 costs one more trace where the model's code branches on it, see api.py's
# _small_branches)
S_FROM_1 = {"hf bert", "hf gpt2", "hf qwen2"}
MODELS.update({f"{name} +mask": (with_mask(build), "textmask1" if name in S_FROM_1 else "textmask")
               for name, (build, kind) in list(MODELS.items()) if kind == "text"})
MODELS["hf t5_encoder +mask"] = (with_mask(hf("T5EncoderModel", "T5Config", d_model=32, num_layers=2, num_heads=4,
                                              d_ff=64, d_kv=8, vocab_size=100)), "textmask")
# The mask models get one symc.Input for both inputs (`inputs=[spec] * 2`, as users write it), except the
# decoders below: their masking code takes a mask longer than the ids (for cached keys) and asserts S of the ids
# <= S of the mask, which two independent dims break (symc refuses that, tests/torch/test_torch_first_hour.py
# checks the message); as the message says, they declare the dims as one, the same dim_names in both Inputs
SAME_DIMS = {"hf gpt2 +mask", "hf gpt_neox +mask", "hf qwen2 +mask", "hf mistral +mask"}


def ranges(kind):
    """[(min, opt, max)] per input dim, and the four check points (min, opt, max, off-opt) as shapes."""
    if kind == "text":
        r = [(1, 1, 3), (2, 8, 16)]
    elif kind == "textmask":  # input_ids and attention_mask, both [B, S]: B opt 8
        r = [(1, 8, 8), (2, 8, 16)]
    elif kind == "textmask1":  # the same with S from 1
        r = [(1, 8, 8), (1, 8, 16)]
    elif kind == "image":  # B, H and W dynamic
        r = [(1, 1, 3), (3, 3, 3), (IMG, IMG + 16, IMG + 32), (IMG, IMG + 16, IMG + 48)]
    elif kind == "image64":  # stride 32 and a trace at 80: never the 1x1 end torch.export would specialize
        r = [(1, 1, 3), (3, 3, 3), (64, 80, 96), (64, 80, 96)]
    elif kind == "mel":  # Whisper's encoder: B dynamic; its positions fix T at 2 * max_source_positions
        r = [(1, 1, 3), (16, 16, 16), (64, 64, 64)] if not FULL else [(1, 1, 3), (80, 80, 80), (3000, 3000, 3000)]
    elif kind == "wave":  # raw audio [B, T]: B and T dynamic
        r = [(1, 1, 3), (400, 600, 800)]
    else:  # fixed-resolution models (swin's windows, the mixer's token MLP, levit's attention biases): B
        r = [(1, 1, 3), (3, 3, 3), (FIX, FIX, FIX), (FIX, FIX, FIX)]
    pts = [tuple(t[0] for t in r), tuple(t[1] for t in r), tuple(t[2] for t in r),
           tuple(min(t[2], t[0] + (t[2] - t[0]) // 2 + 1) if t[0] != t[2] else t[0] for t in r)]
    return r, pts


def make_input(kind, shape, vocab):
    """The model's inputs at one shape, as a tuple."""
    if kind == "text":
        return (torch.randint(0, vocab, shape, dtype=torch.int64),)
    if kind.startswith("textmask"):  # row b holds S - b tokens (at least 1), then padding
        mask = torch.ones(shape, dtype=torch.int64)
        for b in range(shape[0]):
            mask[b, max(1, shape[1] - b):] = 0
        return torch.randint(0, vocab, shape, dtype=torch.int64), mask
    return (torch.randn(shape),)


def on_gpu(name):
    """Whether this model's paths run on the CUDA backend (GPU mode, and not in NO_CUDA)."""
    return GPU and name not in NO_CUDA


def compare(name, fe, run, model, kind, pts, vocab):
    """Worst relative error of run against eager over the points (inputs made on the CPU from the seed, then
    moved to the GPU in GPU mode), or a message at the first point that differs."""
    dev = "cuda" if on_gpu(name) else "cpu"
    worst = 0.0
    padded = False  # whether the padding changed eager's output somewhere (else a dropped mask would pass)
    for s in pts:
        xs = tuple(t.to(dev) for t in make_input(kind, s, vocab))
        with torch.no_grad():
            ref = model(*xs)
            got = run(*xs)
            if kind.startswith("textmask") and not padded and not bool(xs[1].all()):
                padded = not torch.equal(model(xs[0], torch.ones_like(xs[1])), ref)
        if got.device != ref.device:
            return f"at {s}: the engine returned a tensor on {got.device}, eager on {ref.device}"
        ref, got = ref.cpu(), got.cpu()
        if tuple(got.shape) != tuple(ref.shape):
            return f"at {s}: shape {tuple(got.shape)}, eager {tuple(ref.shape)}"
        err = ((got.double() - ref.double()).norm() / max(ref.double().norm().item(), 1e-30)).item()
        worst = max(worst, err)
        if not err < RTOL:
            return f"at {s}: relative error {err:.3g}"
    if kind.startswith("textmask") and not padded:
        return "the padding changes no eager output at the checked points: the mask is not tested"
    return worst


def torch_path(name, model, kind, r, dtype):
    spec = symc.Input(min_shape=[t[0] for t in r], opt_shape=[t[1] for t in r], max_shape=[t[2] for t in r],
                      dtype=dtype, dim_names={0: "B", 1: "S"} if name in SAME_DIMS else None)
    # textmask: one Input for input_ids and attention_mask, as users write it (issue 29)
    cm = symc.compile(model, inputs=[spec] * (2 if kind.startswith("textmask") else 1), gpu=on_gpu(name))
    return cm


def onnx_path(name, model, kind, r, dtype, dynamo):
    tag = name.replace(" ", "_") + ("_dynamo" if dynamo else "_legacy")
    path = os.path.join(TMP, tag + ".onnx")
    ex = make_input(kind, [t[1] if t[1] > 1 or t[0] == t[2] else 2 for t in r], 100)[0]
    dyn = {d: f"d{d}" for d, t in enumerate(r) if t[0] != t[2]}
    with torch.no_grad():
        if dynamo:
            prog = torch.onnx.export(model, (ex,), dynamo=True, input_names=["x"], output_names=["y"],
                                     dynamic_shapes=({d: torch.export.Dim(f"d{d}", min=t[0], max=t[2])
                                                      for d, t in enumerate(r) if t[0] != t[2]},), verbose=False)
            prog.save(path)
        else:
            torch.onnx.export(model, (ex,), path, dynamo=False, opset_version=17, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": dyn})
    engine = os.path.join(TMP, tag + ".symx")
    shapes = "x:" + ",".join("x".join(str(t[i]) for t in r) for i in range(3))
    cpu = ["--no-gpu"] if name in NO_CUDA else []
    p = subprocess.run([SYMC, "compile", path, "--shapes", shapes, "-o", engine] + cpu, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"symc compile: {p.stderr.strip()}")
    return EngineModule(engine, ["x"], lambda outs: outs[0], gpu=on_gpu(name), source=tag)


def frontends(kind):
    fes = [("torch", None)]
    if SYMC and not kind.startswith("textmask"):  # the ONNX paths take one input
        fes.append(("onnx", False))
        if HAVE_DYNAMO_ONNX:
            fes.append(("dynamo", True))
    return fes


RESULTS = {}
for name, (build, kind) in MODELS.items():
    if ONLY and not any(o == name or (o not in MODELS and o in name) for o in ONLY):  # a full name: that one
        continue
    torch.manual_seed(0)
    built = build()
    model, vocab = built if isinstance(built, tuple) else (built, 100)
    model = model.eval()
    with torch.no_grad():  # zero-initialized heads (timm's mixer) would make every output 0 and prove nothing
        for prm in model.parameters():
            if prm.numel() and prm.abs().max() == 0:
                prm.normal_(0, 0.02)
    r, pts = ranges(kind)
    dtype = torch.int64 if kind in ("text", "textmask", "textmask1") else torch.float32
    # eager runs where the engine runs; the model itself stays on the CPU for torch.export and the exporters
    eager = copy.deepcopy(model).cuda() if on_gpu(name) else model
    if GPU and not on_gpu(name):
        log(f"note {name}: in NO_CUDA (the CUDA target has no {NO_CUDA[name]} kernel yet): reference backend and "
            f"CPU eager")
    for fe, dynamo in frontends(kind):
        exp = EXPECTED.get((name, fe))
        t0 = time.time()
        try:
            run = torch_path(name, model, kind, r, dtype) if fe == "torch" else \
                onnx_path(name, model, kind, r, dtype, dynamo)
            t1 = time.time()
            res = compare(name, fe, run, eager, kind, pts, vocab)
            took = f" (build {t1 - t0:.0f} s, check {time.time() - t1:.0f} s)"
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()
            full = " ".join(msg) if msg else type(e).__name__
            msg = full[:400]
            if exp is not None and exp in full and EXPECTED_ALSO.get((name, fe), "") in full:
                RESULTS[(name, fe)] = f"refused (expected): {exp}"
                log(f"ok   {name} [{fe}]: expected refusal: {msg[:200]}")
            else:
                RESULTS[(name, fe)] = f"FAIL: {msg[:200]}"
                failures.append(f"{name} [{fe}]: {msg}" + (f" (expected a refusal naming {exp!r})" if exp else ""))
                log(f"FAIL {name} [{fe}]: {msg}")
            continue
        if isinstance(res, str):
            RESULTS[(name, fe)] = f"WRONG: {res}"
            failures.append(f"{name} [{fe}]: {res}")
            log(f"FAIL {name} [{fe}]: {res}")
        elif exp is not None and (name, fe) in VERSION_DEPENDENT:
            RESULTS[(name, fe)] = f"pass ({res:.1g}; this torch/transformers exports it)"
            log(f"ok   {name} [{fe}]: worst relative error {res:.2g} at {len(pts)} points{took} (the expected "
                f"exporter refusal does not happen with torch {torch.__version__}, transformers "
                f"{transformers.__version__})")
        elif exp is not None:
            RESULTS[(name, fe)] = "pass (flip EXPECTED)"
            failures.append(f"{name} [{fe}]: passes (worst relative error {res:.2g}) but EXPECTED says it is "
                            f"refused ({exp!r}): delete the entry and update docs/MODELS.md")
            log(f"FAIL {name} [{fe}]: now passes; flip its EXPECTED entry")
        else:
            RESULTS[(name, fe)] = f"pass ({res:.1g})"
            log(f"ok   {name} [{fe}]: worst relative error {res:.2g} at {len(pts)} points{took}")

print()
for (name, fe), v in RESULTS.items():
    print(f"| {name} | {fe} | {v} |")
finish("zoo models")
