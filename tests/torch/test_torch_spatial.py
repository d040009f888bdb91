"""Differential test of the torch path's spatial, normalization and bit lowerings of issue 15 (ctest label
`python`): upsampling (nearest, nearest-exact, linear, bilinear, bicubic, trilinear; align_corners both ways;
scale factors, fixed and symbolic output sizes) to symc's resize, group_norm / instance_norm / batch norm
with the input's statistics, conv1d, conv_transpose1d/2d (groups, output_padding, dilation), the pads,
PReLU, bitwise and/or/xor/not on integers, logical_xor, and expm1 / log1p (the exact ops celu, softplus and
mish decompose to).

Approach: each case is a tiny module compiled with symc.compile over declared ranges and run on the reference
backend at min, opt, max, an off-opt size and the case's extra sizes, against eager PyTorch on the same
inputs: same shape and dtype, every element within 1e-4 relative of eager's largest magnitude (floats), equal
(integers). expm1 / log1p at 1e-6 scale check each element relatively, where exp(x) - 1 would lose the digits.
Refusals must raise SymcError at compile time with a message naming the ATen op and the value refused.

usage: test_torch_spatial.py [path/to/libsymc.so]
"""
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from torch_test_common import failures, finish, log, setup  # noqa: E402

symc = setup()
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Fn1(nn.Module):
    def __init__(self, fn, mods):
        super().__init__()
        self.fn = fn
        for k, v in (mods or {}).items():
            setattr(self, k, v)

    def forward(self, x):
        return self.fn(self, x)


def compile_case(name, fn, spec, mods):
    m = Fn1(fn, mods).eval()
    cm = symc.compile(m, inputs=[symc.Input(min_shape=spec[0], opt_shape=spec[1], max_shape=spec[2],
                                            dtype=torch.float32)], gpu=False, name=name)
    return m, cm


def case(name, fn, spec, extra=(), mods=None, elementwise_rel=None):
    """Compiled vs eager at min, opt, max, opt + 1 and extra sizes. elementwise_rel: also each element's own
    relative error below it (for values far below the tensor's largest)."""
    try:
        m, cm = compile_case(name, fn, spec, mods)
    except Exception as e:  # noqa: BLE001
        failures.append(f"{name}: compile failed: {e}")
        log(f"FAIL {name}: compile failed: {str(e)[:300]}")
        return
    lo, opt, hi = spec
    sizes = [lo, opt, hi, tuple(min(o + 1, h) for o, h in zip(opt, hi))] + list(extra)
    worst = 0.0
    for s in sizes:
        x = torch.randn(s)
        with torch.no_grad():
            ref = m(x)
            try:
                got = cm(x)
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name} at {s}: run failed: {e}")
                log(f"FAIL {name} at {s}: run failed: {e}")
                return
        if tuple(got.shape) != tuple(ref.shape) or got.dtype != ref.dtype:
            failures.append(f"{name} at {s}: got {got.dtype}{list(got.shape)}, eager {ref.dtype}{list(ref.shape)}")
            log(f"FAIL {name} at {s}: shape or dtype differs")
            return
        if not ref.dtype.is_floating_point:
            if not torch.equal(got, ref):
                failures.append(f"{name} at {s}: integer values differ")
                log(f"FAIL {name} at {s}: integer values differ")
                return
            continue
        scale = max(ref.abs().max().item(), 1e-30)
        err = ((got.double() - ref.double()).abs().max().item()) / scale
        if elementwise_rel is not None:
            rel = ((got.double() - ref.double()).abs() / ref.double().abs().clamp_min(1e-30)).max().item()
            if not rel < elementwise_rel:
                failures.append(f"{name} at {s}: an element's relative error is {rel:.3g}")
                log(f"FAIL {name} at {s}: an element's relative error is {rel:.3g}")
                return
        if not err < 1e-4:  # NaN fails too
            failures.append(f"{name} at {s}: max error {err:.3g} of the largest magnitude")
            log(f"FAIL {name} at {s}: max error {err:.3g}")
            return
        worst = max(worst, err)
    log(f"ok   {name}: {len(sizes)} sizes, worst {worst:.2g}")


def refuse(name, fn, spec, want, mods=None):
    """Must raise SymcError at compile time whose message holds every piece of `want`."""
    try:
        compile_case(name, fn, spec, mods)
    except symc.SymcError as e:
        msg = str(e)
        missing = [w for w in want if w not in msg]
        if missing:
            failures.append(f"{name}: refused, but the message lacks {missing}: {msg}")
            log(f"FAIL {name}: message lacks {missing}: {msg[:300]}")
        else:
            log(f"ok   {name}: refused ({msg.splitlines()[0][:160]})")
        return
    except Exception as e:  # noqa: BLE001
        failures.append(f"{name}: {type(e).__name__} instead of SymcError: {e}")
        log(f"FAIL {name}: {type(e).__name__}: {str(e)[:300]}")
        return
    failures.append(f"{name}: compiled; expected a SymcError naming {want}")
    log(f"FAIL {name}: compiled; expected a refusal")


HW = ((1, 4, 5, 6), (2, 4, 12, 12), (3, 4, 17, 19))  # NCHW: batch, H and W dynamic
HW_X = [(2, 4, 13, 7), (1, 4, 11, 16), (2, 4, 7, 6)]
L = ((1, 4, 5), (2, 4, 12), (3, 4, 30))  # NCL: batch and length dynamic
L_X = [(2, 4, 17), (1, 4, 29)]
D5 = ((1, 2, 3, 4, 5), (2, 2, 4, 5, 6), (2, 2, 6, 7, 8))

# ---- upsampling: torch's coordinate conventions through resize -----------------------------------------------
for mode in ("nearest", "nearest-exact", "bilinear", "bicubic"):
    for ac in ((None,) if mode.startswith("nearest") else (False, True)):
        tag = f"{mode}{'' if ac is None else f' align_corners={ac}'}"
        for sf in ((2, 1.5, 0.75) if ac is not True else (1.5,)):
            case(f"interpolate {tag} scale_factor={sf}",
                 lambda s, x, sf=sf, mode=mode, ac=ac: F.interpolate(x, scale_factor=sf, mode=mode, align_corners=ac),
                 HW, HW_X)
        case(f"interpolate {tag} size=(7, 9)",
             lambda s, x, mode=mode, ac=ac: F.interpolate(x, size=(7, 9), mode=mode, align_corners=ac), HW, HW_X)
        case(f"interpolate {tag} symbolic size (2H + 1, W - 1)",
             lambda s, x, mode=mode, ac=ac: F.interpolate(x, size=(x.shape[2] * 2 + 1, x.shape[3] - 1), mode=mode,
                                                          align_corners=ac), HW, HW_X)
        if mode != "nearest-exact":
            case(f"interpolate {tag} to 1x3", lambda s, x, mode=mode, ac=ac: F.interpolate(
                x, size=(1, 3), mode=mode, align_corners=ac), HW, HW_X)
case("interpolate scale_factor=(2, 0.5) per dim", lambda s, x: F.interpolate(x, scale_factor=(2, 0.5)), HW, HW_X)
case("nn.Upsample(scale_factor=2, bilinear) then conv", lambda s, x: s.c(s.up(x)), HW, HW_X,
     mods={"up": nn.Upsample(scale_factor=2, mode="bilinear"), "c": nn.Conv2d(4, 3, 3, padding=1)})
for mode in ("nearest", "linear", "nearest-exact"):
    case(f"interpolate 1-D {mode} scale_factor=2.5", lambda s, x, mode=mode: F.interpolate(
        x, scale_factor=2.5, mode=mode), L, L_X)
case("interpolate 1-D linear align_corners size=9", lambda s, x: F.interpolate(
    x, size=9, mode="linear", align_corners=True), L, L_X)
case("interpolate 3-D trilinear scale_factor=2", lambda s, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
     D5)
case("interpolate 3-D nearest size=(3, 5, 7)", lambda s, x: F.interpolate(x, size=(3, 5, 7)), D5)
refuse("interpolate bilinear antialias=True", lambda s, x: F.interpolate(x, scale_factor=0.5, mode="bilinear",
                                                                          antialias=True),
       HW, ["_upsample_bilinear2d_aa", "antialias=True"])
refuse("interpolate scale_factor=0.3 of a symbolic size", lambda s, x: F.interpolate(x, scale_factor=0.3), HW,
       ["upsample_nearest2d", "0.3", "binary fraction"])

# ---- normalizations with the input's statistics -----------------------------------------------------------
case("group_norm 2 groups", lambda s, x: s.n(x), HW, HW_X, mods={"n": nn.GroupNorm(2, 4)})
case("group_norm no affine, one channel a group", lambda s, x: s.n(x), HW, HW_X,
     mods={"n": nn.GroupNorm(4, 4, affine=False, eps=1e-3)})
case("group_norm 1-D (wav2vec2's feature extractor)", lambda s, x: s.n(x), L, L_X, mods={"n": nn.GroupNorm(4, 4)})
case("F.group_norm with weight only", lambda s, x: F.group_norm(x, 2, weight=torch.linspace(0.5, 2, 4)), HW, HW_X)
case("instance_norm2d affine", lambda s, x: s.n(x), HW, HW_X, mods={"n": nn.InstanceNorm2d(4, affine=True)})
case("instance_norm2d", lambda s, x: s.n(x), HW, HW_X, mods={"n": nn.InstanceNorm2d(4)})
case("instance_norm1d affine", lambda s, x: s.n(x), L, L_X, mods={"n": nn.InstanceNorm1d(4, affine=True)})
case("batch_norm without running stats (batch statistics)", lambda s, x: s.n(x), HW, HW_X,
     mods={"n": nn.BatchNorm2d(4, track_running_stats=False)})

# ---- convolutions ---------------------------------------------------------------------------------------------
case("conv1d stride 2 pad 1", lambda s, x: s.c(x), L, L_X, mods={"c": nn.Conv1d(4, 6, 3, stride=2, padding=1)})
case("conv1d dilation 2 groups 2 no bias", lambda s, x: s.c(x), L, L_X,
     mods={"c": nn.Conv1d(4, 8, 3, padding=2, dilation=2, groups=2, bias=False)})
case("conv1d depthwise padding='same'", lambda s, x: s.c(x), L, L_X,
     mods={"c": nn.Conv1d(4, 4, 5, padding="same", groups=4)})
case("conv_transpose1d stride 2 output_padding 1", lambda s, x: s.c(x), L, L_X,
     mods={"c": nn.ConvTranspose1d(4, 6, 3, stride=2, padding=1, output_padding=1)})
case("conv_transpose2d stride (2, 3), output_padding (1, 2), dilation (1, 2)", lambda s, x: s.c(x), HW, HW_X,
     mods={"c": nn.ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2),
                                   dilation=(1, 2))})
case("conv_transpose2d groups 2", lambda s, x: s.c(x), HW, HW_X,
     mods={"c": nn.ConvTranspose2d(4, 6, 4, stride=2, padding=1, groups=2)})
case("F.conv_transpose2d no bias", lambda s, x: F.conv_transpose2d(x, torch.linspace(-1, 1, 4 * 2 * 4).reshape(
    4, 2, 2, 2), stride=2), HW, HW_X)
refuse("conv3d", lambda s, x: s.c(x), D5, ["aten.convolution", "3-D convolution", "rank-5"],
       mods={"c": nn.Conv3d(2, 2, 1)})
refuse("conv_transpose3d", lambda s, x: s.c(x), D5, ["aten.convolution", "3-D transposed convolution"],
       mods={"c": nn.ConvTranspose3d(2, 2, 1)})

# ---- pads, prelu, activations -----------------------------------------------------------------------------------
case("constant / reflect / replicate pads 2-D", lambda s, x: F.pad(x, (1, 2, 3, 0), value=0.5)[:, :, :, :-3] +
     F.pad(x, (1, 2, 3, 0), mode="reflect")[:, :, :, 3:] + F.pad(x, (0, 0, 3, 0), mode="replicate"),
     HW, HW_X)
case("reflect / replicate pads 1-D", lambda s, x: F.pad(x, (2, 3), mode="reflect") + F.pad(x, (2, 3),
                                                                                          mode="replicate"), L, L_X)
case("prelu per channel and shared", lambda s, x: s.p(x) + s.q(x), HW, HW_X,
     mods={"p": nn.PReLU(4, init=0.1), "q": nn.PReLU(init=0.3)})
case("celu / softplus / mish / hardtanh / silu / elu", lambda s, x: F.celu(x, 0.7) + F.softplus(x) +
     F.softplus(x, beta=2.0, threshold=3.0) + F.mish(x) + F.hardtanh(x, -0.5, 0.3) + F.silu(x) + F.elu(x), HW, HW_X)
case("expm1 near 0 (each element relative)", lambda s, x: torch.expm1(x * 1e-6) * 1e6, HW, HW_X,
     elementwise_rel=1e-5)
case("log1p near 0 (each element relative)", lambda s, x: torch.log1p(x * 1e-6) * 1e6, HW, HW_X,
     elementwise_rel=1e-5)
case("celu near 0 (each element relative)", lambda s, x: F.celu(-x.abs() * 1e-6) * 1e6, HW, HW_X,
     elementwise_rel=1e-5)
case("softplus far below 0 (each element relative)", lambda s, x: F.softplus(x - 30) * 1e13, HW, HW_X,
     elementwise_rel=1e-5)

# ---- bit and logical ops -----------------------------------------------------------------------------------------
case("bitwise and / or / xor / not on int64", lambda s, x: (((x * 10).long() & 6) + ((x * 10).long() | 3) +
     ((x * 10).long() ^ -5) + (~(x * 10).long()) + torch.bitwise_xor((x * 7).long(), (x * 3).long())), HW, HW_X)
case("bitwise on int32", lambda s, x: ((x * 10).int() & (x * 5).int()) ^ ~(x * 3).int(), HW, HW_X)
case("logical_xor and ^ on bools", lambda s, x: torch.logical_xor(x > 0, x < 0.5).float() +
     ((x > 0) ^ (x > 1)).float() + torch.logical_xor(x, x - 1).float(), HW, HW_X)

finish("spatial cases")
