"""PyTorch frontend tests (ctest label `python`): the symc package against eager PyTorch.

Approach: import symc from frontend/torch (SYMC_LIB, or argv[1], names
libsymc.so), build each model once per approach and run it at several sizes
inside its ranges, comparing with eager PyTorch in fp32 (allclose rtol 1e-4,
and an atol of 1e-4 relative to the output's scale). Models: the seed
ExpandReshapeModel (all three approaches, batch 1, 4, 13, 32, agreeing with
each other and with eager), the seed MatMul with seq_len Dim(1..10), a
BERT-style encoder layer (dynamic batch and sequence), a small CNN (conv + BN +
relu + maxpool), F.scaled_dot_product_attention (plain, is_causal, bool and float
masks) at several sequence lengths, the backend-specific SDPA ops (efficient,
flash, cudnn, flash_for_cpu, math: what torch.export on CUDA can leave) called
directly, and an M3-like ResNet CNN with H, W in [128, 512] (a range torch's own
guards would narrow) at odd and even sizes; sizes known only at run time (x[x > 0], nonzero,
masked_select, torch.where(cond), a mask over dim 1) at counts 0, 1, some and all, and
torchvision.ops.nms at N = 1 .. 64, and k.item() as a size (topk, a slice, arange). Then the errors: an out-of-range input raises with symrt's
message; an unsupported op names the op and the source line. On CPU it runs the
reference backend; where torch.cuda is available the models also run with CUDA
tensors (zero-copy on the current stream). Without torch it prints SKIP and
exits 0.

usage: test_torch_frontend.py [path/to/libsymc.so]
"""
import os
import pathlib
import sys
import time

try:
    import torch
    import torch.nn as nn
except Exception as e:  # noqa: BLE001
    print(f"SKIP: torch not installed ({e})")
    sys.exit(0)

if len(sys.argv) > 1 and sys.argv[1]:
    os.environ["SYMC_LIB"] = os.path.abspath(sys.argv[1])
REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "frontend" / "torch"))
import symc  # noqa: E402

torch.manual_seed(0)
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
CUDA = torch.cuda.is_available()
DEVICES = ["cpu"] + (["cuda"] if CUDA else [])
failures = []
T0 = time.time()


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def close(name, got, ref, rtol=1e-4):
    got, ref = got.detach().float().cpu(), ref.detach().float().cpu()
    if got.shape != ref.shape:
        failures.append(f"{name}: shape {tuple(got.shape)} != {tuple(ref.shape)}")
        log(f"FAIL {name}: shape {tuple(got.shape)} != {tuple(ref.shape)}")
        return
    atol = 1e-4 * max(ref.abs().max().item(), 1e-6)
    ok = torch.allclose(got, ref, rtol=rtol, atol=atol)
    err = (got - ref).abs().max().item()
    if not ok:
        failures.append(f"{name}: max abs err {err:.3g} (atol {atol:.3g}, rtol {rtol})")
    log(f"{'ok  ' if ok else 'FAIL'} {name}: shape {tuple(got.shape)} max abs err {err:.3g}")


def check(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")
    log(f"{'ok  ' if cond else 'FAIL'} {name} {detail if not cond else ''}")


# ---- models -------------------------------------------------------------------------------------------
class ExpandReshapeModel(nn.Module):
    """The seed notebook's model (Torch-TensorRT dynamic-shape tutorial)."""

    def __init__(self, embed_dim=768):
        super().__init__()
        self.cls_token = nn.Parameter(torch.randn(1, 1, embed_dim))
        self.embed_dim = embed_dim
        self.qkv_proj = nn.Linear(self.embed_dim, self.embed_dim * 3)

    def forward(self, x):
        batch_size = x.shape[0]
        cls_token = self.cls_token.expand(batch_size, -1, -1)
        x = torch.cat([cls_token, x], dim=1)
        x = self.qkv_proj(x)
        reshaped_qkv = x.reshape(batch_size, x.size(1), 3, 12, -1)
        return reshaped_qkv


class MatMul(nn.Module):
    def forward(self, query, key):
        return torch.matmul(query, key.transpose(-1, -2))


class BertLayer(nn.Module):
    def __init__(self, hidden=64, heads=4, ffn=128):
        super().__init__()
        self.h, self.d = heads, hidden // heads
        self.q, self.k, self.v = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.fc1, self.fc2 = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        b, s, hid = x.shape
        q = self.q(x).view(b, s, self.h, self.d).transpose(1, 2)
        k = self.k(x).view(b, s, self.h, self.d).transpose(1, 2)
        v = self.v(x).view(b, s, self.h, self.d).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) / (self.d ** 0.5), dim=-1)
        ctx = (att @ v).transpose(1, 2).reshape(b, s, hid)
        x = self.ln1(x + self.drop(self.o(ctx)))
        return self.ln2(x + self.fc2(nn.functional.gelu(self.fc1(x))))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = nn.functional.max_pool2d(torch.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(x.mean(dim=(2, 3)))


class Attention(nn.Module):
    """Projections + F.scaled_dot_product_attention (no mask, is_causal, or a mask given as an input)."""

    def __init__(self, hidden=32, heads=2, causal=False):
        super().__init__()
        self.h, self.d, self.causal = heads, hidden // heads, causal
        self.qkv, self.o = nn.Linear(hidden, 3 * hidden), nn.Linear(hidden, hidden)

    def forward(self, x, mask=None):
        b, s, hid = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.h, self.d).permute(2, 0, 3, 1, 4).unbind(0)
        c = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=self.causal)
        return self.o(c.transpose(1, 2).reshape(b, s, hid))


class SdpaDropout(nn.Module):
    def forward(self, q, k, v):
        return nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.1)


class SdpaVariant(nn.Module):
    """Calls one backend-specific SDPA op directly, as torch's own scaled_dot_product_attention does on a
    device (CUDA: efficient / flash / cudnn; CPU: flash_for_cpu; math), and returns output 0."""

    def __init__(self, op, causal=False, scale=None):
        super().__init__()
        self.op, self.causal, self.scale = op, causal, scale

    def forward(self, q, k, v, bias=None):
        A, c, sc = torch.ops.aten, self.causal, self.scale
        if self.op == "efficient":
            out = A._scaled_dot_product_efficient_attention(q, k, v, bias, False, 0.0, c, scale=sc)
        elif self.op == "flash":
            out = A._scaled_dot_product_flash_attention(q, k, v, 0.0, c, False, scale=sc)
        elif self.op == "cudnn":
            out = A._scaled_dot_product_cudnn_attention(q, k, v, bias, False, 0.0, c, False, scale=sc)
        elif self.op == "flash_for_cpu":
            out = A._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, c, attn_mask=bias, scale=sc)
        else:
            out = A._scaled_dot_product_attention_math(q, k, v, bias, 0.0, c, scale=sc)
        return out[0]


class SdpaLogsumexp(nn.Module):
    """uses the efficient variant's logsumexp (output 1), which symc does not lower"""

    def forward(self, q, k, v):
        out, lse, _, _ = torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, True)
        return out, lse


class ResNetish(nn.Module):
    """bench/suite_models.py M3 at a small width: 7x7/2 stem + BN + ReLU, maxpool 3/2/1, two basic
    residual blocks, global average pool, FC."""

    def __init__(self, c=8, ncls=10):
        super().__init__()
        self.stem, self.bn0 = nn.Conv2d(3, c, 7, 2, 3, bias=False), nn.BatchNorm2d(c)
        self.convs = nn.ModuleList(nn.Conv2d(c, c, 3, 1, 1, bias=False) for _ in range(4))
        self.bns = nn.ModuleList(nn.BatchNorm2d(c) for _ in range(4))
        self.fc = nn.Linear(c, ncls)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn0(self.stem(x))), 3, 2, 1)
        for i in (0, 2):
            y = torch.relu(self.bns[i](self.convs[i](x)))
            x = torch.relu(self.bns[i + 1](self.convs[i + 1](y)) + x)
        return self.fc(x.mean((2, 3)))


class Cummax(nn.Module):
    def forward(self, x):
        return torch.cummax(x, dim=1)[0] + 1.0


class Masks(nn.Module):
    """Sizes known only at run time: a boolean mask's selection, nonzero, masked_select, torch.where(cond)
    (which export decomposes into nonzero), a mask over dim 1."""

    def forward(self, x):
        w = torch.where(x > 0.25)
        return (x[x > 0] * 2, torch.nonzero(x > 0.5), torch.masked_select(x, x < -0.5) + 1, w[0] + w[1],
                x[:, x[0] > 0])


def randomize_bn(m):
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm2d, nn.BatchNorm1d)):
            with torch.no_grad():
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
                mod.weight.uniform_(0.5, 1.5)
                mod.bias.uniform_(-0.5, 0.5)
    return m


# ---- tests ---------------------------------------------------------------------------------------------
def test_seed(dev):
    model = ExpandReshapeModel().eval().to(dev)
    batches = (1, 4, 13, 32)
    xs = {b: torch.randn(b, 196, 768, device=dev) for b in batches}
    with torch.no_grad():
        ref = {b: model(x) for b, x in xs.items()}
    outs = {}
    # 1. symc.compile(model, inputs=[symc.Input(...)])
    m1 = symc.compile(model, inputs=[symc.Input(min_shape=(1, 196, 768), opt_shape=(4, 196, 768),
                                                max_shape=(32, 196, 768), dtype=torch.float32, dim_names={0: "B"})])
    log(f"seed/{dev}: approach 1 built: {m1.extra_repr()}")
    # 2. symc.compile(exported_program, example_inputs)
    B = torch.export.Dim("batch", min=1, max=32)
    ep = torch.export.export(model, (xs[4],), dynamic_shapes=({0: B},))
    m2 = symc.compile(ep, (xs[4],))
    log(f"seed/{dev}: approach 2 built: {m2.extra_repr()}")
    # 3. torch.compile(model, backend="symc") with mark_dynamic(min=2, max=32)
    torch._dynamo.reset()
    builds0 = symc.backend.builds
    m3 = torch.compile(model, backend="symc", dynamic=None)
    x0 = xs[4].clone()
    torch._dynamo.mark_dynamic(x0, 0, min=2, max=32)
    with torch.no_grad():
        out3_warm = m3(x0)
    close(f"seed/{dev}/torch.compile warm-up b=4", out3_warm, ref[4])
    for b in batches:
        with torch.no_grad():
            o1, o2, o3 = m1(xs[b]), m2(xs[b]), m3(xs[b])
        close(f"seed/{dev}/symc.compile(Input) b={b}", o1, ref[b])
        close(f"seed/{dev}/symc.compile(ExportedProgram) b={b}", o2, ref[b])
        close(f"seed/{dev}/torch.compile(backend=symc) b={b}", o3, ref[b])
        close(f"seed/{dev}/approach 1 vs 2 b={b}", o1, o2)
        close(f"seed/{dev}/approach 1 vs 3 b={b}", o1, o3)
        outs[b] = o1
    built = symc.backend.builds - builds0
    # [2, 32] is mark_dynamic's range: one engine for 2..32; batch 1 lies outside it, so dynamo
    # specializes it (a second, static build). No other recompilation is allowed.
    check(f"seed/{dev}/torch.compile builds (range [2, 32] + static b=1)", built <= 2, f"{built} builds")
    # out of range: symrt's message
    try:
        m1(torch.randn(33, 196, 768, device=dev))
        check(f"seed/{dev}/out of range raises", False, "no exception for batch 33")
    except symc.SymcError as e:
        log(f"seed/{dev}: batch 33 -> {e}")
        check(f"seed/{dev}/out of range message", "dim 0 = 33" in str(e) and "[1, 32]" in str(e) and "B" in str(e),
              str(e))
    try:
        m2(torch.randn(4, 195, 768, device=dev))
        check(f"seed/{dev}/static dim mismatch raises", False, "no exception")
    except symc.SymcError as e:
        check(f"seed/{dev}/static dim mismatch raises", "195" in str(e), str(e))


def test_matmul(dev):
    model = MatMul().eval()
    inputs = [torch.randn(1, 12, 7, 64, device=dev), torch.randn(1, 12, 7, 64, device=dev)]
    seq_len = torch.export.Dim("seq_len", min=1, max=10)
    ep = torch.export.export(model, tuple(inputs), dynamic_shapes=({2: seq_len}, {2: seq_len}))
    m = symc.compile(ep, inputs)
    log(f"matmul/{dev}: built: {m.extra_repr()}")
    for s in (1, 3, 7, 10):
        q, k = torch.randn(1, 12, s, 64, device=dev), torch.randn(1, 12, s, 64, device=dev)
        close(f"matmul/{dev} seq_len={s}", m(q, k), model(q, k))
    try:
        m(torch.randn(1, 12, 11, 64, device=dev), torch.randn(1, 12, 11, 64, device=dev))
        check(f"matmul/{dev}/seq_len 11 raises", False, "no exception")
    except symc.SymcError as e:
        check(f"matmul/{dev}/seq_len 11 raises", "11" in str(e) and "[1, 10]" in str(e), str(e))


def test_bert(dev):
    model = BertLayer().eval().to(dev)
    m = symc.compile(model, inputs=[symc.Input(min_shape=(1, 1, 64), opt_shape=(2, 16, 64), max_shape=(8, 64, 64),
                                               dim_names={0: "batch", 1: "seq"})])
    log(f"bert/{dev}: built: {m.extra_repr()}")
    for b, s in ((1, 1), (2, 16), (3, 37), (8, 64)):
        x = torch.randn(b, s, 64, device=dev)
        with torch.no_grad():
            close(f"bert/{dev} batch={b} seq={s}", m(x), model(x))
    torch._dynamo.reset()
    mc = torch.compile(model, backend="symc")
    x = torch.randn(2, 16, 64, device=dev)
    torch._dynamo.mark_dynamic(x, 0, min=2, max=8)
    torch._dynamo.mark_dynamic(x, 1, min=2, max=64)
    b0 = symc.backend.builds
    with torch.no_grad():
        close(f"bert/{dev}/torch.compile batch=2 seq=16", mc(x), model(x))
        for b, s in ((3, 37), (8, 64), (5, 2)):
            y = torch.randn(b, s, 64, device=dev)
            close(f"bert/{dev}/torch.compile batch={b} seq={s}", mc(y), model(y))
    check(f"bert/{dev}/torch.compile one build", symc.backend.builds - b0 == 1, f"{symc.backend.builds - b0} builds")


def test_cnn(dev):
    model = randomize_bn(SmallCNN()).eval().to(dev)
    m = symc.compile(model, inputs=[symc.Input(min_shape=(1, 3, 32, 32), opt_shape=(4, 3, 32, 32),
                                               max_shape=(16, 3, 32, 32), dim_names={0: "N"})])
    log(f"cnn/{dev}: built: {m.extra_repr()}")
    for n in (1, 4, 7, 16):
        x = torch.randn(n, 3, 32, 32, device=dev)
        with torch.no_grad():
            close(f"cnn/{dev} n={n}", m(x), model(x))
    # H and W as derived dims 4*h, 4*w (torch's guards for two 2x2 pools ask for multiples of 4)
    N, h, w = torch.export.Dim("N", min=1, max=8), torch.export.Dim("h", min=2, max=8), \
        torch.export.Dim("w", min=2, max=8)
    x = torch.randn(2, 3, 16, 24, device=dev)
    ep = torch.export.export(model, (x,), dynamic_shapes=({0: N, 2: 4 * h, 3: 4 * w},))
    m2 = symc.compile(ep, (x,))
    log(f"cnn/{dev}: derived dims built: {m2.extra_repr()}")
    for n, hh, ww in ((1, 8, 8), (2, 16, 24), (5, 20, 32), (8, 32, 12)):
        x = torch.randn(n, 3, hh, ww, device=dev)
        with torch.no_grad():
            close(f"cnn/{dev} derived n={n} h={hh} w={ww}", m2(x), model(x))
    try:
        m2(torch.randn(2, 3, 18, 24, device=dev))
        check(f"cnn/{dev}/H=18 (not 4*h) raises", False, "no exception")
    except symc.SymcError as e:
        check(f"cnn/{dev}/H=18 (not 4*h) raises", "18" in str(e), str(e))


def test_sdpa(dev):
    """F.scaled_dot_product_attention lowered to matmul/softmax/matmul: no mask, is_causal (mask from the
    symbolic sequence length), a bool mask and a float mask given as inputs; one build each, several S.
    The masks fully mask one query row, which torch's attention answers with zeros (not NaN)."""
    for kind in ("plain", "causal", "bool mask", "float mask"):
        model = Attention(causal=kind == "causal").eval().to(dev)
        ins = [symc.Input(min_shape=(1, 1, 32), opt_shape=(2, 16, 32), max_shape=(4, 48, 32),
                          dim_names={0: "B", 1: "S"})]
        if "mask" in kind:
            ins.append(symc.Input(min_shape=(1, 1), opt_shape=(16, 16), max_shape=(48, 48), dim_names={0: "S", 1: "S"},
                                  dtype=torch.bool if kind == "bool mask" else torch.float32))
        m = symc.compile(model, inputs=ins)
        log(f"sdpa/{dev}/{kind}: built: {m.extra_repr()}")
        for b, s in ((1, 1), (2, 7), (3, 16), (4, 48)):
            args = [torch.randn(b, s, 32, device=dev)]
            if kind == "bool mask":
                mask = torch.rand(s, s, device=dev) > 0.5
                mask[s // 2, :] = False  # a fully masked query row: torch gives zeros there, a plain softmax NaN
                args.append(mask)
            elif kind == "float mask":
                mask = torch.randn(s, s, device=dev)
                mask[s // 2, :] = float("-inf")  # the same with a float mask
                args.append(mask)
            with torch.no_grad():
                close(f"sdpa/{dev}/{kind} batch={b} seq={s}", m(*args), model(*args))
    try:
        symc.compile(SdpaDropout(), inputs=[symc.Input(shape=(1, 2, 4, 8))] * 3)
        check("sdpa dropout_p=0.1 raises", False, "no exception")
    except symc.SymcError as e:
        msg = str(e)
        check("sdpa dropout_p=0.1 names the op and source line", "scaled_dot_product_attention" in msg and
              "dropout_p" in msg and "test_torch_frontend.py" in msg, msg)


SDPA_VARIANTS = {"efficient": True, "flash": False, "cudnn": True, "flash_for_cpu": True, "math": True}  # op: bias?


def test_sdpa_variants(dev):
    """The backend-specific SDPA ops (what torch.export on CUDA tensors can leave instead of
    aten.scaled_dot_product_attention) lowered like it: each called directly in a module and exported
    with S dynamic in [2, 40]; the CUDA-only ops are exported on the meta device (their meta kernels
    give the shapes), so the graph is the same on any machine. Plain, is_causal with a scale, and with
    a float bias [S, S] where the op takes one; output 0 against F.scaled_dot_product_attention on dev.
    Then an op whose logsumexp (output 1) is used raises, naming the op and the output."""
    F = nn.functional
    for op, has_bias in SDPA_VARIANTS.items():
        xdev = "cpu" if op in ("flash_for_cpu", "math") else "meta"
        for kind in ("plain", "causal", "bias") if has_bias else ("plain", "causal"):
            causal, scale = kind == "causal", (0.3 if kind == "causal" else None)
            q, k, v = (torch.randn(2, 3, 16, 8, device=xdev) for _ in range(3))
            S = torch.export.Dim("S", min=2, max=40)
            args, ds = (q, k, v), ({2: S}, {2: S}, {2: S})
            if kind == "bias":
                args, ds = args + (torch.randn(16, 16, device=xdev),), ds + ({0: S, 1: S},)
            name = f"sdpa variant/{dev}/{op}/{kind}"
            try:
                ep = torch.export.export(SdpaVariant(op, causal, scale), args, dynamic_shapes=ds)
                ops = [str(n.target) for n in ep.graph.nodes if "scaled_dot_product" in str(n.target)]
                want = {"flash_for_cpu": "flash_attention_for_cpu", "math": "attention_math"}.get(op, op + "_attention")
                check(f"{name}: the export holds the op", any(want in o for o in ops), str(ops))
                m = symc.compile(ep, args, gpu=dev == "cuda")
            except Exception as e:  # noqa: BLE001
                failures.append(f"{name}: {type(e).__name__}: {e}")
                log(f"FAIL {name}: {type(e).__name__}: {e}")
                continue
            log(f"{name}: exported as {ops}; built")
            for s in (2, 7, 40):
                qq, kk, vv = (torch.randn(2, 3, s, 8, device=dev) for _ in range(3))
                bb = torch.randn(s, s, device=dev) if kind == "bias" else None
                with torch.no_grad():
                    ref = F.scaled_dot_product_attention(qq, kk, vv, attn_mask=bb, is_causal=causal, scale=scale)
                    close(f"{name} seq={s}", m(*((qq, kk, vv) + ((bb,) if kind == "bias" else ()))), ref)
    q, k, v = (torch.randn(2, 3, 16, 8, device="meta") for _ in range(3))
    try:
        symc.compile(torch.export.export(SdpaLogsumexp(), (q, k, v)), (q, k, v), gpu=dev == "cuda")
        check(f"sdpa variant/{dev}/used logsumexp raises", False, "no exception")
    except symc.SymcError as e:
        msg = str(e)
        log(f"sdpa variant/{dev}: used logsumexp -> {msg}")
        check(f"sdpa variant/{dev}/used logsumexp names the op and the output",
              "_scaled_dot_product_efficient_attention" in msg and "output 1" in msg and "log_sumexp" in msg, msg)


def test_resnetish(dev):
    """M3's shape: H and W in [128, 512] from one build, although torch's max_pool guard
    ((H-1)//2) % 2 != 0 would narrow the range; odd and even H/W against eager."""
    model = randomize_bn(ResNetish()).eval().to(dev)
    m = symc.compile(model, inputs=[symc.Input(min_shape=(1, 3, 128, 128), opt_shape=(8, 3, 224, 224),
                                               max_shape=(32, 3, 512, 512))])
    log(f"resnetish/{dev}: built: {m.extra_repr()}")
    for n, h, w in ((1, 128, 128), (2, 225, 509), (1, 509, 130), (1, 512, 512), (3, 131, 224)):
        x = torch.randn(n, 3, h, w, device=dev)
        with torch.no_grad():
            close(f"resnetish/{dev} n={n} h={h} w={w}", m(x), model(x))


def test_masks():
    """Masks on the reference backend against eager, at counts 0, 1, some and all, at several batches from one
    engine; the outputs come back at their real sizes. With a GPU, the GPU engine on CUDA tensors likewise."""
    model = Masks().eval()
    m = symc.compile(model, inputs=[symc.Input(min_shape=(1, 6), opt_shape=(2, 6), max_shape=(8, 6))], gpu=False)
    log(f"masks: built: {m.extra_repr()}")
    g = torch.Generator().manual_seed(3)
    for b in (1, 2, 5, 8):
        base = torch.randn(b, 6, generator=g)
        cases = {"none": -base.abs() - 0.01, "one": -base.abs() - 0.01, "some": base, "all": base.abs() + 0.6}
        cases["one"][b // 2, 3] = 0.75
        for what, x in cases.items():
            got, want = m(x), model(x)
            for i, (p, q) in enumerate(zip(got, want)):
                if p.dtype != q.dtype:
                    failures.append(f"masks b={b} {what} output {i}: dtype {p.dtype} != {q.dtype}")
                if q.numel() == 0:  # nothing selected: the shape is all there is to compare
                    check(f"masks b={b} {what} output {i} empty", tuple(p.shape) == tuple(q.shape),
                          f"shape {tuple(p.shape)} != {tuple(q.shape)}")
                else:
                    close(f"masks b={b} {what} output {i}", p, q)
    if CUDA:  # the GPU engine on CUDA tensors: the same selections, in the same order
        mg = symc.compile(model, inputs=[symc.Input(min_shape=(1, 6), opt_shape=(2, 6), max_shape=(8, 6))], gpu=True)
        for b in (1, 3, 8):
            x = torch.randn(b, 6, generator=g).cuda()
            for i, (p, q) in enumerate(zip(mg(x), model(x))):
                if q.numel() == 0:
                    check(f"masks/cuda b={b} output {i} empty", tuple(p.shape) == tuple(q.shape),
                          f"shape {tuple(p.shape)} != {tuple(q.shape)}")
                else:
                    close(f"masks/cuda b={b} output {i}", p, q)


class Nms(nn.Module):
    def forward(self, boxes, scores):
        import torchvision
        keep = torchvision.ops.nms(boxes, scores, 0.5)
        return keep, boxes[keep] * 2, scores[keep] + 1


def test_nms():
    """torchvision.ops.nms on the reference backend against eager: the same boxes kept, in the same order, at
    N = 1 .. 64 from one engine (distinct scores: NMS is discontinuous at ties)."""
    try:
        import torchvision  # noqa: F401
    except Exception as e:  # noqa: BLE001
        log(f"SKIP nms: torchvision not installed ({e})")
        return
    model = Nms().eval()
    m = symc.compile(model, inputs=[symc.Input(min_shape=(1, 4), opt_shape=(16, 4), max_shape=(64, 4)),
                                    symc.Input(min_shape=(1,), opt_shape=(16,), max_shape=(64,))], gpu=False)
    g = torch.Generator().manual_seed(5)
    for n in (1, 2, 7, 16, 40, 64):
        for trial in range(3):
            xy = torch.rand(n, 2, generator=g) * 20
            wh = torch.rand(n, 2, generator=g) * 8 + 0.5
            b = torch.cat([xy, xy + wh], 1)
            s = torch.randperm(n * 10, generator=g)[:n].float() / (n * 10)
            for i, (p, q) in enumerate(zip(m(b, s), model(b, s))):
                check(f"nms n={n} trial {trial} output {i}", p.shape == q.shape and torch.equal(p, q),
                      f"{p.tolist()} != {q.tolist()}")
            if CUDA:  # the GPU engine: the same boxes kept, in the same order (IoU in the reference's arithmetic)
                mg = mg if "mg" in locals() else symc.compile(
                    model, inputs=[symc.Input(min_shape=(1, 4), opt_shape=(16, 4), max_shape=(64, 4)),
                                   symc.Input(min_shape=(1,), opt_shape=(16,), max_shape=(64,))], gpu=True)
                for i, (p, q) in enumerate(zip(mg(b.cuda(), s.cuda()), model(b, s))):
                    check(f"nms/cuda n={n} trial {trial} output {i}",
                          p.shape == q.shape and torch.equal(p.cpu(), q), f"{p.tolist()} != {q.tolist()}")


class Item(nn.Module):
    def forward(self, x, k):
        n = k.item()
        torch._check(n >= 0)
        torch._check(n <= 10)
        return x.topk(n, dim=1).values, x[:, :n] * 2, torch.arange(n) * 3


def test_item():
    """k.item() used as a size (topk, a slice, arange), its bound from torch._check: read at run time, the
    outputs at its real value against eager at k = 0, 1, some and the bound; k above the bound raises."""
    model = Item().eval()
    ins = [symc.Input(min_shape=(1, 10), opt_shape=(3, 10), max_shape=(8, 10)), torch.tensor(4)]
    engines = [("ref", symc.compile(model, inputs=ins, gpu=False), "cpu")]
    if CUDA:
        engines.append(("cuda", symc.compile(model, inputs=ins, gpu=True), "cuda"))
    g = torch.Generator().manual_seed(9)
    for what, m, dev in engines:
        for b, kk in ((1, 0), (3, 4), (8, 10), (5, 1), (2, 7)):
            x = torch.randn(b, 10, generator=g)
            got = [t.cpu() for t in m(x.to(dev), torch.tensor(kk).to(dev))]
            for i, (p, q) in enumerate(zip(got, model(x, torch.tensor(kk)))):
                check(f"item/{what} b={b} k={kk} output {i}", p.shape == q.shape and torch.equal(p, q),
                      f"{tuple(p.shape)} {p.tolist()} != {tuple(q.shape)} {q.tolist()}")
        try:
            m(torch.randn(2, 10).to(dev), torch.tensor(11).to(dev))
            check(f"item/{what} k above the bound raises", False, "no exception")
        except symc.SymcError as e:
            check(f"item/{what} k above the bound names it", "bound" in str(e) and "10" in str(e), str(e))


def test_modes():
    """symc.compile traces in eval mode and gives every submodule its own mode back: a model in eval mode inside a
    wrapper left in training mode stays in eval mode (it once came back training, and eager then diverged)."""
    class Wrap(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(4).eval()
            self.drop = nn.Dropout(0.5)

        def forward(self, x):
            return self.drop(self.bn(x))
    w = Wrap()
    symc.compile(w, inputs=[symc.Input(min_shape=(1, 4), opt_shape=(2, 4), max_shape=(4, 4))], gpu=False)
    check("compile keeps each submodule's mode", (w.training, w.bn.training, w.drop.training) == (True, False, True),
          f"wrapper {w.training}, bn {w.bn.training}, dropout {w.drop.training}")


def test_unsupported():
    try:
        symc.compile(Cummax(), inputs=[symc.Input(min_shape=(1, 8), opt_shape=(2, 8), max_shape=(4, 8))])
        check("unsupported op raises", False, "no exception")
    except symc.SymcError as e:
        log(f"cummax -> {e}")
        msg = str(e)
        check("unsupported op names the op", "cummax" in msg, msg)
        check("unsupported op names the source line", "test_torch_frontend.py" in msg and "torch.cummax" in msg, msg)


def main():
    log(f"torch {torch.__version__}, CUDA {'yes: ' + torch.cuda.get_device_name(0) if CUDA else 'no'}, "
        f"libsymc {symc.find_library()}")
    test_unsupported()
    test_masks()
    test_nms()
    test_item()
    test_modes()
    for dev in DEVICES:
        test_matmul(dev)
        test_sdpa(dev)
        test_sdpa_variants(dev)
        test_resnetish(dev)
        test_cnn(dev)
        test_bert(dev)
        test_seed(dev)
    if failures:
        print(f"\n{len(failures)} FAILED:")
        for f in failures:
            print("  " + f)
        return 1
    log("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
