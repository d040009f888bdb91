"""Real models through the torch path (ctest label `python`): timm's ViT family and torchvision CNNs,
random weights (nothing is downloaded), compiled with symc.compile over a batch range (CNNs also H and W)
and run on the reference backend at min, opt, max and off-opt sizes against eager PyTorch: same shape,
relative error < 1e-4.

Why: symc.compile(timm vit_tiny_patch16_224) returned [B, 1, 1000] for eager's [B, 1000] (issue 13: the
class-token select x[:, 0] became a gather whose 0-d index numpy had turned 1-D). The ViT family covers
the pooling forms timm has: the class token (x[:, 0]), distillation's two tokens averaged, register
tokens skipped by a slice, and average pooling over the patch tokens.
Then transformers' text models as users call them (issue 32, stage 7 of docs/PLAN-regions.md): GPT-2, Llama and
the T5 encoder (tiny configs, random weights) with input_ids and a padding attention_mask, B and S from 1, opt
B 8: one engine each (Llama's grouped-query attention takes another program at S = 1 with transformers 5.23: a
region of its own), against eager at B = 1, 5 and max.
Then a detection model with its post-processing (issue 32 item 5): torchvision's SSDlite320-MobileNetV3 over
image sizes 240x240 .. 480x640 and batches of 1 and 2 called as users do (`list(x)`, a region per
batch size), the same detections as eager.
Prints SKIP where torch, timm or torchvision is not installed (the text models: where transformers is not).

usage: test_torch_models.py [path/to/libsymc.so]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from torch_test_common import fail, failures, finish, log, setup  # noqa: E402

symc = setup("timm", "torchvision")
import timm  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402


def check_model(name, model, lo, opt, hi, sizes, device="cpu"):
    """device "cuda": the CUDA backend on CUDA tensors (fp32, tf32 off), against eager on the GPU."""
    model = model.eval().to(device)
    try:
        cm = symc.compile(model, inputs=[symc.Input(min_shape=lo, opt_shape=opt, max_shape=hi)],
                          gpu=device == "cuda")
    except Exception as e:  # noqa: BLE001
        failures.append(f"{name}: compile failed: {e}")
        log(f"FAIL {name}: compile failed: {e}")
        return
    for s in sizes:
        x = torch.randn(s, device=device)
        with torch.no_grad():
            ref, got = model(x), cm(x)
        if tuple(got.shape) != tuple(ref.shape):
            failures.append(f"{name} at {s}: shape {tuple(got.shape)}, eager {tuple(ref.shape)}")
            log(f"FAIL {name} at {s}: shape {tuple(got.shape)}, eager {tuple(ref.shape)}")
            continue
        err = ((got.double() - ref.double()).norm() / ref.double().norm()).item()
        ok = err < 1e-4
        if not ok:
            failures.append(f"{name} at {s}: relative error {err:.3g}")
        log(f"{'ok  ' if ok else 'FAIL'} {name} at {list(s)}: relative error {err:.2g}")


CPU = os.environ.get("SYMC_TEST_CUDA_ONLY") != "1"  # the device sets it: the reference part ran in CI
# the model the issue reported, as it is: batch 1..4, opt 2, at min, off-opt and max
if CPU:
    check_model("timm vit_tiny_patch16_224", timm.create_model("vit_tiny_patch16_224", pretrained=False),
                (1, 3, 224, 224), (2, 3, 224, 224), (4, 3, 224, 224), [(1, 3, 224, 224), (3, 3, 224, 224)])
    # the family's pooling forms at a smaller image (the same code paths, a fraction of the reference's time)
    for name, kw in [("vit_small_patch16_224", {"depth": 4}),
                     ("deit_tiny_distilled_patch16_224", {"depth": 4}),
                     ("vit_small_patch16_224", {"depth": 4, "global_pool": "avg", "class_token": False}),
                     ("vit_small_patch16_224", {"depth": 4, "reg_tokens": 4}),
                     ("vit_base_patch16_224", {"depth": 2})]:
        m = timm.create_model(name, pretrained=False, img_size=64, **kw)
        tag = f"timm {name} img 64" + "".join(f" {k}={v}" for k, v in kw.items())
        check_model(tag, m, (1, 3, 64, 64), (2, 3, 64, 64), (5, 3, 64, 64),
                    [(1, 3, 64, 64), (2, 3, 64, 64), (3, 3, 64, 64), (5, 3, 64, 64)])
    # torchvision CNNs with batch, H and W dynamic
    check_model("torchvision resnet18 B,H,W", torchvision.models.resnet18(),
                (1, 3, 64, 64), (2, 3, 96, 96), (3, 3, 128, 144), [(1, 3, 64, 64), (2, 3, 97, 131), (3, 3, 128, 144)])
    check_model("torchvision mobilenet_v3_small B,H,W", torchvision.models.mobilenet_v3_small(),
                (1, 3, 64, 64), (2, 3, 96, 96), (3, 3, 128, 144), [(1, 3, 64, 64), (2, 3, 97, 131), (3, 3, 128, 144)])

class TextModel(torch.nn.Module):
    """A Hugging Face model called with input_ids and attention_mask, its first output."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, ids, mask):
        return self.m(input_ids=ids, attention_mask=mask)[0]


def text_batch(b, s, vocab=100, device="cpu"):
    """ids [b, s] and a padding mask: row i holds s - i ones (at least 1), then zeros."""
    mask = torch.ones(b, s, dtype=torch.int64)
    for i in range(b):
        mask[i, max(1, s - i):] = 0
    return torch.randint(0, vocab, (b, s)).to(device), mask.to(device)


def num_regions(cm):
    """The engine's region count (symrt_engine_num_regions; 0: one graph)."""
    import ctypes
    fn = cm.engine._L.symrt_engine_num_regions
    fn.restype, fn.argtypes = ctypes.c_uint32, [ctypes.c_void_p]
    return int(fn(cm.engine._h))


def check_text_model(name, model, sizes, hi=(12, 24), device="cpu", regions=(0,)):
    """One engine for B in [1, hi[0]] (opt 8) and S in [1, hi[1]], both inputs declared with the same dims, of
    one of `regions` regions (0: one graph)."""
    model = TextModel(model).eval().to(device)
    spec = symc.Input(min_shape=(1, 1), opt_shape=(8, 16), max_shape=hi, dtype=torch.int64,
                      dim_names={0: "B", 1: "S"})
    try:
        cm = symc.compile(model, inputs=[spec, spec], gpu=device == "cuda")
    except Exception as e:  # noqa: BLE001
        failures.append(f"{name}: compile failed: {e}")
        log(f"FAIL {name}: compile failed: {e}")
        return
    n = num_regions(cm)
    if n not in regions:
        failures.append(f"{name}: {n} regions, expected {' or '.join(map(str, regions))}")
    log(f"{'ok  ' if n in regions else 'FAIL'} {name}: one engine of {n} regions")
    for b, s in sizes:
        ids, mask = text_batch(b, s, device=device)
        with torch.no_grad():
            ref, got = model(ids, mask), cm(ids, mask)
        err = ((got.double() - ref.double()).norm() / ref.double().norm()).item() \
            if got.shape == ref.shape else float("inf")
        ok = err < 1e-4
        if not ok:
            failures.append(f"{name} at B={b} S={s}: shape {tuple(got.shape)} vs {tuple(ref.shape)}, "
                            f"relative error {err:.3g}")
        log(f"{'ok  ' if ok else 'FAIL'} {name} at B={b} S={s}: relative error {err:.2g}")


def text_models():
    """GPT-2, Llama and the T5 encoder, tiny and random, as (name, model, region counts allowed): the decoders'
    sdpa integration may take another program at S = 1, a region of its own, depending on the transformers
    version and the device (Llama's grouped-query attention with 5.23 on the CPU; GPT-2 and Llama with 5.17
    on CUDA, seen on an H200); 1 graph or 2 regions, each one engine right at every point. The region
    logic itself is tested exactly by test_torch_regions.py."""
    import transformers as tf
    torch.manual_seed(0)
    yield "hf gpt2", tf.GPT2LMHeadModel(tf.GPT2Config(n_embd=32, n_layer=1, n_head=4, vocab_size=100,
                                                      n_positions=64)), (0, 2)
    yield "hf llama", tf.LlamaForCausalLM(tf.LlamaConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                                                         num_key_value_heads=2, intermediate_size=64, vocab_size=100,
                                                         max_position_embeddings=64)), (0, 2)
    yield "hf t5_encoder", tf.T5EncoderModel(tf.T5Config(d_model=32, num_layers=1, num_heads=4, d_ff=64, d_kv=8,
                                                         vocab_size=100)), (0,)


try:
    import transformers  # noqa: F401
    HAVE_TF = True
except Exception as e:  # noqa: BLE001
    HAVE_TF = False
    log(f"SKIP text models: transformers not installed ({e})")
if CPU and HAVE_TF:
    for name, model, regions in text_models():
        check_text_model(name, model, [(1, 1), (1, 7), (5, 9), (12, 24)], regions=regions)

class Detector(torch.nn.Module):
    """A torchvision detection model called as users do (a list of images), on a batch of one: its boxes,
    scores and labels."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        d = self.m([x[0]])[0]
        return d["boxes"], d["scores"], d["labels"]


class BatchDetector(torch.nn.Module):
    """The detection model on a batch of images as users call it (`list(x)`): every image's detections
    concatenated, with the index of the image each came from. The per-image loop fixes the batch in a traced
    program, so symc traces one region per batch size."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        out = self.m(list(x))
        return (torch.cat([d["boxes"] for d in out]), torch.cat([d["scores"] for d in out]),
                torch.cat([d["labels"] for d in out]),
                torch.cat([torch.full_like(d["labels"], i) for i, d in enumerate(out)]))


def ssdlite():
    """torchvision's SSDlite320-MobileNetV3 in eval mode with random weights, its BatchNorm statistics taken
    from random images (untrained, the features would vanish and every score tie at 1/91), and a score
    threshold of 0.8: the detections are then few and well apart, as NMS, a discontinuous function, needs for
    two implementations to agree."""
    torch.manual_seed(0)
    m = torchvision.models.detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    for mm in m.modules():
        if isinstance(mm, torch.nn.BatchNorm2d):
            mm.momentum = 1.0
            mm.train()
    with torch.no_grad():
        m.head(list(m.backbone(torch.rand(4, 3, 320, 320)).values()))
    m.eval()
    m.score_thresh = 0.8
    return Detector(m).eval()


def check_detector(name, det, lo, opt, hi, sizes, device="cpu"):
    """Compiled once over the image-size range (the model resizes to 320 x 320 and scales its boxes back):
    at each size the same number of detections as eager, the same labels (and images, batched) in the same
    order, scores to 1e-3 and boxes to 1e-4 of the image size. (The resize alone differs from eager's by fp32 rounding, 1e-5, as
    torch's own f32 and f64 resizes do; the network carries that to about 1e-4 in the scores.)"""
    t0 = time.time()
    try:
        cm = symc.compile(det, inputs=[symc.Input(min_shape=lo, opt_shape=opt, max_shape=hi)],
                          gpu=device == "cuda")
    except Exception as e:  # noqa: BLE001
        fail(f"{name}: compile: {type(e).__name__}: {e}")
        return
    log(f"{name}: built in {time.time() - t0:.0f} s")
    g = torch.Generator().manual_seed(11)
    for shape in sizes:
        x = torch.rand(*shape, generator=g).to(device)
        with torch.no_grad():
            want = [t.cpu() for t in det.to(device)(x)]
        got = [t.cpu() for t in cm(x)]
        n, wn = len(got[1]), len(want[1])
        scale = max(shape[2:])
        ok = n == wn and all(torch.equal(g, w) for g, w in zip(got[2:], want[2:])) and \
            (n == 0 or ((got[1] - want[1]).abs().max().item() < 1e-3 and
                        (got[0] - want[0]).abs().max().item() < 1e-4 * scale))
        msg = (f"{name} at {shape}: {n} detections (eager {wn}), labels {'equal' if n == wn and torch.equal(got[2], want[2]) else 'differ'}"
               + (f", max score err {(got[1] - want[1]).abs().max().item():.2g}, max box err "
                  f"{(got[0] - want[0]).abs().max().item():.2g} px" if n == wn and n else ""))
        log(("ok   " if ok else "FAIL ") + msg)
        if not ok:
            fail(msg)


if CPU:
    # batches of 1 and 2 images (a region each) over the image sizes
    check_detector("torchvision ssdlite320_mobilenet_v3_large, batched (post-processing: NMS, top-k)",
                   BatchDetector(ssdlite().m).eval(), (1, 3, 240, 240), (2, 3, 320, 320), (2, 3, 480, 640),
                   [(1, 3, 320, 320), (2, 3, 300, 417)])

# on a GPU machine (the device; CI has none): the vit_small, whose torch-path engine had relative
# error 2.7 on an H100, on the CUDA backend at min, off-opt and max
if torch.cuda.is_available():
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    check_model("CUDA timm vit_small_patch16_224", timm.create_model("vit_small_patch16_224", pretrained=False),
                (1, 3, 224, 224), (4, 3, 224, 224), (8, 3, 224, 224),
                [(1, 3, 224, 224), (3, 3, 224, 224), (8, 3, 224, 224)], device="cuda")
    check_model("CUDA torchvision resnet18 B,H,W", torchvision.models.resnet18(),
                (1, 3, 64, 64), (4, 3, 160, 160), (8, 3, 256, 256),
                [(1, 3, 64, 64), (3, 3, 97, 131), (8, 3, 256, 256)], device="cuda")
    if HAVE_TF:
        for name, model, regions in text_models():
            check_text_model("CUDA " + name, model, [(1, 1), (1, 7), (5, 9), (12, 24)], device="cuda",
                             regions=regions)
    check_detector("CUDA torchvision ssdlite320_mobilenet_v3_large", ssdlite(), (1, 3, 240, 240), (1, 3, 320, 320),
                   (1, 3, 480, 640), [(1, 3, 320, 320), (1, 3, 300, 417), (1, 3, 480, 640), (1, 3, 240, 251)],
                   device="cuda")
    check_detector("CUDA torchvision ssdlite320_mobilenet_v3_large, batched", BatchDetector(ssdlite().m).eval(),
                   (1, 3, 240, 240), (2, 3, 320, 320), (2, 3, 480, 640),
                   [(1, 3, 320, 320), (2, 3, 300, 417), (2, 3, 480, 640), (1, 3, 240, 251), (2, 3, 240, 240)],
                   device="cuda")
else:
    log("no CUDA device: the CUDA-backend models run on the device only")

finish("models")
