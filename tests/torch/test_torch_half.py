"""Half precision through the torch path on the CPU reference backend, against fp32 eager.

- symc.compile(model, precision="fp16"/"bf16") of fp32 models (an MLP block with a residual and a
  layer norm, a small attention block, torchvision resnet18 and timm vit_tiny at a reduced depth):
  fp32 tensors in and out, half storage inside; relative error (max |got - want| / max |want|)
  <= 1e-2 for fp16 and <= 2e-2 for bf16 at min, opt, an off-opt size and max, no inf/NaN.
- symc.compile(model.half()) and symc.compile(model.to(torch.bfloat16)) compile as they are: the
  engine takes and returns float16/bfloat16 tensors; the oracle is the fp32 eager model with the
  same (half-rounded) weights on the same (half) inputs widened to fp32.
- fp32_layers=[...] keeps the named op fp32 (the engine still matches).
Random weights; nothing is downloaded. SKIP without torch/torchvision/timm.
"""
import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_test_common import failures, finish, log, setup  # noqa: E402

symc = setup("torchvision", "timm")
import timm  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

LIMIT = {"fp16": 1e-2, "bf16": 2e-2}
HALF = {"fp16": torch.float16, "bf16": torch.bfloat16}


def rel(got, want):
    got, want = got.double(), want.double()
    return ((got - want).abs().max() / want.abs().max().clamp_min(1e-30)).item()


def check(name, cm, oracle, sizes, in_dtype, out_dtype, limit):
    for s in sizes:
        x = torch.randn(s).to(in_dtype)
        with torch.no_grad():
            want = oracle(x.float())
            got = cm(x)
        if got.dtype != out_dtype or tuple(got.shape) != tuple(want.shape):
            failures.append(f"{name} at {list(s)}: {got.dtype}{list(got.shape)}, want {out_dtype}{list(want.shape)}")
            log(f"FAIL {failures[-1]}")
            continue
        err = rel(got, want)
        finite = bool(torch.isfinite(got.float()).all())
        ok = err <= limit and finite
        if not ok:
            failures.append(f"{name} at {list(s)}: relative error {err:.3g}, finite {finite}")
        log(f"{'ok  ' if ok else 'FAIL'} {name} at {list(s)}: relative error {err:.2e} (limit {limit})")


class Block(torch.nn.Module):
    """MLP with a residual and a layer norm, then a small self-attention."""

    def __init__(self, d=64):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)
        self.ln = torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)

    def forward(self, x):
        x = self.ln(x + self.fc2(torch.nn.functional.gelu(self.fc1(x))))
        b, s, d = x.shape
        q, k, v = self.qkv(x).reshape(b, s, 3, 4, d // 4).permute(2, 0, 3, 1, 4)
        a = torch.softmax(q @ k.transpose(-1, -2) / (d // 4) ** 0.5, dim=-1) @ v
        return x + self.proj(a.transpose(1, 2).reshape(b, s, d))


def models():
    torch.manual_seed(0)
    yield "block", Block().eval(), (1, 1, 64), (2, 16, 64), (4, 40, 64), [(1, 1, 64), (2, 16, 64), (3, 23, 64),
                                                                          (4, 40, 64)]
    yield "resnet18", torchvision.models.resnet18(num_classes=10).eval(), (1, 3, 40, 40), (2, 3, 48, 48), \
        (2, 3, 64, 64), [(1, 3, 40, 40), (2, 3, 48, 48), (1, 3, 53, 61), (2, 3, 64, 64)]
    yield "vit_tiny depth 2", timm.create_model("vit_tiny_patch16_224", pretrained=False, depth=2).eval(), \
        (1, 3, 224, 224), (2, 3, 224, 224), (3, 3, 224, 224), [(1, 3, 224, 224), (3, 3, 224, 224)]


for name, model, lo, opt, hi, sizes in models():
    spec = [symc.Input(min_shape=lo, opt_shape=opt, max_shape=hi)]
    for prec in ("fp16", "bf16"):
        try:
            cm = symc.compile(model, inputs=spec, precision=prec, gpu=False)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name} {prec}: compile failed: {e}")
            log(f"FAIL {failures[-1]}")
            continue
        check(f"{name} precision={prec}", cm, model, sizes, torch.float32, torch.float32, LIMIT[prec])
    # the model itself in half: half tensors in and out
    for prec in ("fp16", "bf16"):
        dt = HALF[prec]
        mh = copy.deepcopy(model).to(dt)
        oracle = copy.deepcopy(mh).float()  # the same rounded weights, in fp32
        try:
            cm = symc.compile(mh, inputs=[symc.Input(min_shape=lo, opt_shape=opt, max_shape=hi, dtype=dt)],
                              gpu=False)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{name} .to({dt}): compile failed: {e}")
            log(f"FAIL {failures[-1]}")
            continue
        check(f"{name} .to({dt})", cm, oracle, sizes[:2] + sizes[-1:], dt, dt, LIMIT[prec])
    if name == "block":
        cm = symc.compile(model, inputs=spec, precision="fp16", gpu=False, fp32_layers=["layer_norm", "gelu"])
        check(f"{name} fp16 fp32_layers", cm, model, sizes[:2], torch.float32, torch.float32, LIMIT["fp16"])

finish("half-precision torch checks")
