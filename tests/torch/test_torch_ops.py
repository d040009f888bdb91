"""Differential test of the torch path's ATen lowerings (ctest label `python`).

Approach: one tiny module per lowering and per way of calling it (select at 0,
at -1 and on the batch dim, slices with negative, stepped and symbolic bounds,
squeeze of a static 1 and of a dim that is not 1, expand of a parameter to the
batch, 0-d constants and 0-d outputs, int dtypes, every elementwise, reduction,
normalization, pooling, convolution and matmul form symc lowers). Each is
compiled with symc.compile over declared ranges and run on the reference
backend at several in-range sizes (min, opt, max, opt + 1, a prime), B > 1
included, and with non-contiguous inputs (a transposed view handed to the
compiled module), against eager PyTorch on the same inputs: same shape, same
dtype, max relative error < 1e-4. The cases that symc cannot lower exactly
(a general as_strided, boolean-mask indexing, uneven adaptive pooling, ...) must raise SymcError at
compile time naming the ATen op, never run. A case that compiles but differs
from eager is a failure, as is one expected to be refused that compiles.

Advanced indexing (issue 29): x[i, j, ...] with 1 to 3 index tensors broadcast together (adjacent and
not, None dims between, negative and int32 indices, dynamic index shapes, transformers' padding-mask
read), index_put (broadcast values, accumulate with repeated indices, a static KV cache's writes and
index_copy_, boolean masks with one value for all selected elements) against eager, and the mask write
with a value per element refused.

This test exists because of a silent wrong result (issue 13): x[:, 0] lowered
to a gather with a 0-d index that numpy had made 1-D, so timm ViTs returned
[B, 1, 1000] for [B, 1000]. The tracer now also checks every lowered node's
dtype and shape against torch's (Tracer.check_lowering); this test drives both.

usage: test_torch_ops.py [path/to/libsymc.so]
"""
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from torch_test_common import failures, finish, log, setup  # noqa: E402

symc = setup()
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Fn(nn.Module):
    """A function of the inputs as a module (parameters optional)."""

    def __init__(self, fn, **params):
        super().__init__()
        self.fn = fn
        for k, v in params.items():
            if isinstance(v, nn.Module):
                setattr(self, k, v)
            else:
                self.register_parameter(k, nn.Parameter(v, requires_grad=False))



class Fn1(Fn):
    def forward(self, x):  # torch.export needs the arity spelled out, not *xs
        return self.fn(self, x)


class Fn2(Fn):
    def forward(self, x, y):
        return self.fn(self, x, y)


class Fn3(Fn):
    def forward(self, x, y, z):
        return self.fn(self, x, y, z)


def rel_err(got, ref):
    got, ref = got.detach().double(), ref.detach().double()
    if ref.numel() == 0:
        return 0.0
    return ((got - ref).norm() / max(ref.norm().item(), 1e-30)).item()


def make(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    return torch.randint(-50, 50, shape, dtype=dtype)


def sizes_of(spec, extra):
    """Concrete shapes to run: min, opt, max, opt + 1 (clamped) and the case's extra sizes."""
    lo, opt, hi = spec
    out = [lo, opt, hi, tuple(min(o + 1, h) if l != h else o for l, o, h in zip(lo, opt, hi))]
    out += extra
    uniq = []
    for s in out:
        if tuple(s) not in uniq:
            uniq.append(tuple(s))
    return uniq


def case(name, fn, specs, extra=(), expect="ok", dtype=torch.float32, noncontig=False, params=None, rtol=1e-4):
    """specs: one (min, opt, max) shape triple per input; extra: further shape tuples per input (lists,
    one entry per run). noncontig: also run with each input given as a transposed view of a
    contiguous tensor of the transposed shape (the last two dims swapped)."""
    m = (Fn1, Fn2, Fn3)[len(specs) - 1](fn, **(params or {})).eval()
    inputs = [symc.Input(min_shape=s[0], opt_shape=s[1], max_shape=s[2], dtype=dtype) for s in specs]
    try:
        cm = symc.compile(m, inputs=inputs, gpu=False, name=name)  # any text: symc makes a file name of it
    except symc.SymcError as e:
        if expect == "refuse":
            log(f"ok   {name}: refused ({str(e).splitlines()[0][:140]})")
            return
        failures.append(f"{name}: compile failed: {e}")
        log(f"FAIL {name}: compile failed: {e}")
        return
    except Exception as e:  # noqa: BLE001 - torch.export itself may refuse a case
        failures.append(f"{name}: {type(e).__name__}: {e}")
        log(f"FAIL {name}: {type(e).__name__}: {str(e)[:300]}")
        return
    if expect == "refuse":
        failures.append(f"{name}: compiled, but symc cannot lower it exactly and must refuse it")
        log(f"FAIL {name}: compiled; expected a SymcError")
        return
    # the shapes to run: per input, the sizes of sizes_of; extra entries are tuples of per-input shapes
    per_input = [sizes_of(s, []) for s in specs]
    runs = [tuple(p[min(i, len(p) - 1)] for p in per_input) for i in range(max(len(p) for p in per_input))]
    runs += [tuple(e) for e in extra]
    worst = 0.0
    for shapes in runs:
        for nc in ([False, True] if noncontig else [False]):
            xs = []
            for s in shapes:
                if nc and len(s) >= 2:
                    t = make(tuple(s[:-2]) + (s[-1], s[-2]), dtype).transpose(-1, -2)
                    assert not t.is_contiguous() or s[-1] == 1 or s[-2] == 1
                else:
                    t = make(s, dtype)
                xs.append(t)
            with torch.no_grad():
                ref = m(*xs)
                try:
                    got = cm(*xs)
                except Exception as e:  # noqa: BLE001
                    failures.append(f"{name} at {shapes}{' (non-contiguous)' if nc else ''}: run failed: {e}")
                    log(f"FAIL {name} at {shapes}: run failed: {e}")
                    return
            refs = ref if isinstance(ref, (tuple, list)) else [ref]
            gots = got if isinstance(got, (tuple, list)) else [got]
            for r, g in zip(refs, gots):
                what = f"{name} at {list(shapes)}{' non-contiguous' if nc else ''}"
                if tuple(g.shape) != tuple(r.shape) or g.dtype != r.dtype:
                    failures.append(f"{what}: got {g.dtype}{list(g.shape)}, eager {r.dtype}{list(r.shape)}")
                    log(f"FAIL {what}: got {g.dtype}{list(g.shape)}, eager {r.dtype}{list(r.shape)}")
                    return
                if r.dtype.is_floating_point:
                    e = rel_err(g, r)
                    if not e < rtol:  # NaN fails too
                        failures.append(f"{what}: relative error {e:.3g}")
                        log(f"FAIL {what}: relative error {e:.3g}")
                        return
                    worst = max(worst, e)
                elif not torch.equal(g, r):
                    failures.append(f"{what}: integer values differ")
                    log(f"FAIL {what}: integer values differ")
                    return
    log(f"ok   {name}: {len(runs)} sizes{' (+ non-contiguous)' if noncontig else ''}, worst rel err {worst:.2g}")


B3 = ((1, 5, 6), (2, 5, 6), (4, 5, 6))           # batch dynamic
BS3 = ((1, 2, 6), (2, 7, 6), (4, 11, 6))         # batch and sequence dynamic
B4 = ((1, 3, 8, 8), (2, 3, 8, 8), (3, 3, 8, 8))  # NCHW, batch dynamic
HW4 = ((1, 3, 5, 6), (2, 3, 12, 12), (3, 3, 17, 19))  # NCHW, batch, H and W dynamic

# ---- select / slice / squeeze / unsqueeze / expand: the view ops of the ViT bug and its siblings ----------
case("select x[:, 0] (ViT class token)", lambda s, x: x[:, 0], [B3], noncontig=True)
case("select x[:, -1] (last token)", lambda s, x: x[:, -1], [BS3], noncontig=True)
case("select x[0] on the dynamic batch dim", lambda s, x: x[0] * 1.0, [B3])
case("select x[:, :, 3]", lambda s, x: x[:, :, 3], [BS3])
case("select x.select(2, -2)", lambda s, x: x.select(2, -2), [BS3], noncontig=True)
case("select at a symbolic index x[:, x.size(1) - 1]", lambda s, x: x[:, x.size(1) - 1], [BS3])
case("select twice x[:, 0, 1]", lambda s, x: x[:, 0, 1], [BS3])
case("slice x[:, 1:]", lambda s, x: x[:, 1:], [BS3], noncontig=True)
case("slice x[:, :-1]", lambda s, x: x[:, :-1], [BS3])
case("slice x[:, -2:]", lambda s, x: x[:, -2:], [BS3])
case("slice x[:, ::2] (step)", lambda s, x: x[:, ::2], [BS3])
# torch narrows the range (or keeps a runtime assert) where the code branches on a size: one engine with a region
# per part of the declared range (issue 32), right on both sides of each branch
case("slice x[:, 1:6:2] clamped end, range torch narrowed", lambda s, x: x[:, 1:6:2], [BS3],
     extra=[((2, s, 6),) for s in (2, 3, 5, 6, 7, 10)])
case("slice x[:, 1:6:2] clamped end, range within torch's", lambda s, x: x[:, 1:6:2],
     [((1, 6, 6), (2, 7, 6), (4, 11, 6))])
case("a branch on a size (torch narrows the range)", lambda s, x: x * 2 if x.shape[1] > 5 else x + 1, [BS3],
     extra=[((3, s, 6),) for s in (2, 5, 6, 9)])
case("a branch on a size's parity (a runtime assert)", lambda s, x: x * 2 if x.shape[1] % 2 == 0 else x + 1,
     [BS3], extra=[((3, s, 6),) for s in (3, 4, 8, 9)])
case("a branch on batch > 1 (torch's Dim.AUTO path, min 1 narrowed to 2)",
     lambda s, x, y: (x + y) * 2 if x.shape[0] > 1 else (x + y) + 1,
     [((1, 6), (2, 6), (4, 6)), ((1, 6), (2, 6), (4, 6))], extra=[((1, 6), (1, 6)), ((3, 6), (3, 6))])
case("no branch on the Dim.AUTO path (min 1 kept)", lambda s, x, y: x + y,
     [((1, 6), (2, 6), (4, 6)), ((1, 6), (2, 6), (4, 6))], extra=[((1, 6), (1, 6)), ((3, 6), (3, 6))])
case("a branch on a size that holds over the range", lambda s, x: x * 2 if x.shape[1] < 20 else x + 1, [BS3])
case("slice x[..., :3]", lambda s, x: x[..., :3], [BS3], noncontig=True)
case("slice x[..., 2:5]", lambda s, x: x[..., 2:5], [B3])
case("slice to a symbolic end x[:, : x.size(1) - 1]", lambda s, x: x[:, : x.size(1) - 1], [BS3])
case("slice the batch x[1:]", lambda s, x: x[1:] * 2.0, [((2, 5, 6), (3, 5, 6), (4, 5, 6))])
case("narrow x.narrow(2, 1, 3)", lambda s, x: x.narrow(2, 1, 3), [BS3])
case("squeeze a static 1 x.squeeze(1)", lambda s, x: x.squeeze(1), [((1, 1, 6), (2, 1, 6), (4, 1, 6))])
case("squeeze a dim that is not 1 (no-op)", lambda s, x: x.squeeze(2), [B3])
case("squeeze() with a batch that may be 1", lambda s, x: x.squeeze(), [((1, 1, 6, 1), (2, 1, 6, 1), (4, 1, 6, 1))],
     expect="refuse")
case("squeeze(0) of a batch that may be 1", lambda s, x: x.squeeze(0), [B3], expect="refuse")
case("squeeze() with a batch >= 2", lambda s, x: x.squeeze(), [((2, 1, 6, 1), (2, 1, 6, 1), (4, 1, 6, 1))])
case("squeeze(1, 3) of static ones", lambda s, x: x.squeeze((1, 3)), [((1, 1, 6, 1), (2, 1, 6, 1), (4, 1, 6, 1))])
case("an input returned as it is (no-op squeeze)", lambda s, x: x.squeeze(2), [B3])
case("squeeze(-1) after a keepdim sum", lambda s, x: x.sum(-1, keepdim=True).squeeze(-1), [BS3])
case("unsqueeze x[:, None]", lambda s, x: x[:, None], [B3])
case("unsqueeze(-1)", lambda s, x: x.unsqueeze(-1), [BS3])
case("unsqueeze(0) then select", lambda s, x: x.unsqueeze(0)[0, :, 1], [BS3])
case("expand a parameter to the batch (class token)",
     lambda s, x: torch.cat([s.cls.expand(x.shape[0], -1, -1), x], dim=1),
     [BS3], params={"cls": torch.randn(1, 1, 6)})
case("expand x.expand(-1, 4, -1)", lambda s, x: x.expand(-1, 4, -1) + 0.0, [((1, 1, 6), (2, 1, 6), (4, 1, 6))])
case("expand_as / broadcast add of [B,1,C] and [1,S,C]", lambda s, x, y: x + y,
     [((1, 1, 6), (2, 1, 6), (4, 1, 6)), ((1, 2, 6), (1, 7, 6), (1, 11, 6))],
     extra=[((3, 1, 6), (1, 5, 6))])
case("permute(2, 0, 1)", lambda s, x: x.permute(2, 0, 1), [BS3], noncontig=True)
case("transpose(1, 2)", lambda s, x: x.transpose(1, 2), [BS3], noncontig=True)
case("t() of a 2-D input", lambda s, x: x.t(), [((1, 6), (3, 6), (5, 6))])
case("reshape(B, -1)", lambda s, x: x.reshape(x.shape[0], -1), [BS3], noncontig=True)
case("view(-1)", lambda s, x: x.reshape(-1), [BS3])
case("view to heads (B, S, 2, 3)", lambda s, x: x.view(x.shape[0], x.shape[1], 2, 3).transpose(1, 2), [BS3])
case("flatten(1)", lambda s, x: torch.flatten(x, 1), [B4], noncontig=True)
case("cat on the dynamic dim", lambda s, x, y: torch.cat([x, y], 1),
     [BS3, ((1, 2, 6), (2, 3, 6), (4, 5, 6))], extra=[((3, 4, 6), (3, 2, 6))])
case("cat with a constant", lambda s, x: torch.cat([x, s.c.expand(x.shape[0], 1, 6)], 1), [BS3],
     params={"c": torch.randn(1, 1, 6)})
case("chunk / split into equal parts", lambda s, x: torch.chunk(x, 2, dim=2)[1] * 1.0, [BS3])
case("split with sizes", lambda s, x: torch.split(x, [2, 4], dim=2)[1] * 1.0, [BS3])
case("unbind(1) of a static dim", lambda s, x: x.unbind(1)[2] + 0.0, [B3])
case("contiguous/clone of a transposed view", lambda s, x: x.transpose(1, 2).contiguous().clone(), [BS3])

# ---- elementwise: scalars as 0-d constants, broadcasting, dtypes ------------------------------------------
case("add 0-d tensor constant", lambda s, x: x + s.c, [BS3], params={"c": torch.tensor(1.5)})
case("mul 0-d constant into a 0-d result", lambda s, x: x.sum() * s.c, [BS3], params={"c": torch.tensor(2.0)})
case("sum to a 0-d output", lambda s, x: x.sum(), [BS3])
case("mean to a 0-d output", lambda s, x: x.mean(), [BS3])
case("add with alpha", lambda s, x, y: torch.add(x, y, alpha=0.5), [BS3, BS3])
case("sub / rsub with scalars", lambda s, x: (2.0 - x) - (x - 1.0), [BS3])
case("div and reciprocal", lambda s, x: x / 3.0 + 1.0 / (x.abs() + 1.0), [BS3])
case("pow scalar exponent", lambda s, x: x.abs().pow(1.5) + x.pow(2), [BS3])
case("maximum / minimum", lambda s, x, y: torch.maximum(x, y) - torch.minimum(x, y), [BS3, BS3])
case("clamp min only / max only / both", lambda s, x: x.clamp(min=-0.5) + x.clamp(max=0.3) + x.clamp(-1, 1), [BS3])
case("activations", lambda s, x: F.relu(x) + F.silu(x) + torch.sigmoid(x) + torch.tanh(x) + F.gelu(x) +
     F.gelu(x, approximate="tanh") + F.leaky_relu(x, 0.2) + F.hardtanh(x) + F.hardswish(x) + F.relu6(x), [BS3])
case("unary math", lambda s, x: torch.exp(-x.abs()) + torch.log(x.abs() + 1) + torch.sqrt(x.abs()) +
     torch.rsqrt(x.abs() + 1) + torch.erf(x) + torch.floor(x) + torch.ceil(x) + torch.sign(x) + (-x), [BS3])
case("broadcast a per-feature vector", lambda s, x: x * s.w + s.b, [BS3],
     params={"w": torch.randn(6), "b": torch.randn(6)}, noncontig=True)
case("int64 add and mul", lambda s, x: x * 3 + x, [BS3], dtype=torch.int64)
case("int64 true division (in float, as torch)", lambda s, x: x / 2 + x / x.abs().add(1), [BS3], dtype=torch.int64)
case("int32 sum promotes to int64", lambda s, x: x.sum(1), [BS3], dtype=torch.int32, expect="refuse")

# ---- reductions, normalizations, softmax -------------------------------------------------------------------
case("sum(-1) / mean(1) / amax(keepdim)", lambda s, x: (x.sum(-1), x.mean(1), x.amax(2, keepdim=True)), [BS3],
     noncontig=True)
case("sum over [0, 2]", lambda s, x: x.sum([0, 2]), [BS3])
case("mean over the dynamic dims (1, 2)", lambda s, x: x.mean((2, 3)), [HW4])
case("softmax / log_softmax", lambda s, x: (torch.softmax(x, -1), torch.log_softmax(x, 1)), [BS3], noncontig=True)
case("layer_norm", lambda s, x: s.ln(x), [BS3], params={"ln": nn.LayerNorm(6)}, noncontig=True)
case("layer_norm over two dims", lambda s, x: F.layer_norm(x, (5, 6)), [B3])
case("batch_norm (eval) 2-D and 4-D", lambda s, x: s.bn(x), [B4], params={"bn": nn.BatchNorm2d(3)})
case("batch_norm1d on [B, C]", lambda s, x: s.bn(x), [((1, 6), (2, 6), (5, 6))], params={"bn": nn.BatchNorm1d(6)})
case("dropout in eval", lambda s, x: F.dropout(x, 0.5, training=False) + s.d(x), [BS3],
     params={"d": nn.Dropout(0.3)})

# ---- matmul family -------------------------------------------------------------------------------------------
case("linear with bias (3-D input)", lambda s, x: s.fc(x), [BS3], params={"fc": nn.Linear(6, 4)}, noncontig=True)
case("linear without bias (2-D input)", lambda s, x: s.fc(x), [((1, 6), (3, 6), (7, 6))],
     params={"fc": nn.Linear(6, 4, bias=False)})
case("matmul batched, broadcast weight", lambda s, x: x @ s.w, [BS3], params={"w": torch.randn(6, 3)})
case("bmm of two inputs", lambda s, x, y: torch.bmm(x, y.transpose(1, 2)), [BS3, BS3], noncontig=True)
case("addmm with beta/alpha", lambda s, x: torch.addmm(s.b, x, s.w, beta=0.5, alpha=2.0),
     [((1, 6), (3, 6), (7, 6))], params={"b": torch.randn(4), "w": torch.randn(6, 4)})
case("matmul vector", lambda s, x: x @ s.v, [BS3], params={"v": torch.randn(6)})
case("scaled_dot_product_attention causal",
     lambda s, x: F.scaled_dot_product_attention(x, x * 0.5, x + 1.0, is_causal=True),
     [((1, 2, 1, 4), (2, 2, 5, 4), (3, 2, 9, 4))])
case("scaled_dot_product_attention with a float mask input",
     lambda s, x, m: F.scaled_dot_product_attention(x, x * 0.5, x + 1.0, attn_mask=m),
     [((1, 2, 1, 4), (2, 2, 5, 4), (3, 2, 9, 4)), ((1, 1, 1, 1), (1, 1, 5, 5), (1, 1, 9, 9))],
     )  # torch.export finds the mask's dims equal to the sequence's

# ---- convolution and pooling ------------------------------------------------------------------------------------
case("conv2d stride 2 pad 1", lambda s, x: s.c(x), [HW4], params={"c": nn.Conv2d(3, 4, 3, 2, 1)}, noncontig=True)
case("conv2d groups, dilation, no bias", lambda s, x: s.c(x), [HW4],
     params={"c": nn.Conv2d(3, 6, 3, 1, 2, dilation=2, groups=3, bias=False)})
case("conv2d 1x1 + batch_norm + relu", lambda s, x: torch.relu(s.bn(s.c(x))), [HW4],
     params={"c": nn.Conv2d(3, 5, 1), "bn": nn.BatchNorm2d(5)})
case("max_pool2d ceil_mode", lambda s, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), [HW4])
case("max_pool2d 2x2", lambda s, x: F.max_pool2d(x, 2), [HW4])
case("avg_pool2d count_include_pad=False", lambda s, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [HW4])
case("avg_pool2d ceil_mode", lambda s, x: F.avg_pool2d(x, 2, ceil_mode=True), [HW4])
case("adaptive_avg_pool2d (1, 1)", lambda s, x: F.adaptive_avg_pool2d(x, 1).flatten(1), [HW4])

# ---- what symc cannot lower: a clear SymcError at compile time, never a run ---------------------------------
case("as_strided", lambda s, x: torch.as_strided(x, (x.shape[0], 2, 2), (30, 6, 1)) * 1.0, [B3], expect="refuse")
case("adaptive_avg_pool2d (2, 2) of a symbolic H, W", lambda s, x: F.adaptive_avg_pool2d(x, 2), [HW4],
     expect="refuse")
case("adaptive_avg_pool2d (3, 3) of 8x8 (uneven windows)", lambda s, x: F.adaptive_avg_pool2d(x, 3), [B4],
     expect="refuse")
case("integer division with rounding_mode", lambda s, x: torch.div(x, 2.0, rounding_mode="floor"), [BS3],
     expect="refuse")

# ---- sizes known only at run time (docs/PLAN-data-dependent.md): the count a mask selects -------------------
case("index with a boolean mask", lambda s, x: x[x > 0] * 2, [BS3])
case("index with a boolean mask over dim 1", lambda s, x: x[:, x[0] > 0] + 1, [BS3])
case("nonzero", lambda s, x: torch.nonzero(x > 0.3), [BS3], dtype=torch.float32)
case("masked_select broadcast", lambda s, x: torch.masked_select(x, x[:1] > 0), [BS3])
case("where(cond) (nonzero)", lambda s, x: torch.where(x > 0)[1] * 3, [BS3])

# ---- the ops real models decompose to (Hugging Face text models, timm, torchvision) ---------------------------
IDS = ((1, 2), (1, 7), (3, 11))                 # [B, S] token ids, batch-1 serving: min and opt 1
case("embedding (token ids, batch opt 1)", lambda s, x: s.e(x.abs()), [IDS], dtype=torch.int64,
     params={"e": nn.Embedding(64, 6)}, extra=[((2, 5),)])
case("index_select on dim 1", lambda s, x: torch.index_select(x, 1, s.i.long()), [BS3],
     params={"i": torch.tensor([1.0, 0.0, 1.0])})
case("index with a tensor x[:, :, idx]", lambda s, x: x[:, :, s.idx.long()], [BS3],
     params={"idx": torch.tensor([0.0, 5.0, 2.0])})
case("index with a 2-D tensor x[idx] of an input", lambda s, x, i: s.w[i.abs()], [IDS, IDS], dtype=torch.int64,
     params={"w": torch.arange(64 * 3).reshape(64, 3)})
case("gather along the last dim", lambda s, x: torch.gather(x, 2, (x > 0).long() * 3), [BS3])
case("where / masked_fill with a bool mask", lambda s, x, y: torch.where(x > y, x, y * 2.0) +
     x.masked_fill(y < 0, -1e4), [BS3, BS3], noncontig=True)
case("where with scalars", lambda s, x: torch.where(x > 0, 1.0, -2.0), [BS3])
case("full / zeros / ones / arange with symbolic sizes",
     lambda s, x: x + torch.zeros(x.shape[0], x.shape[1], 6) + torch.ones(x.shape[1], 1) * 2 +
     torch.full((x.shape[1], 6), 0.5) + torch.arange(x.shape[1]).float()[:, None] +
     torch.ones_like(x) + x.new_ones(x.shape) * 3 + torch.zeros_like(x), [BS3])
case("arange(1, S + 1, 2) as int64", lambda s, x: torch.arange(1, x.shape[1] + 1, 2) * 3,
     [((1, 3, 6), (2, 7, 6), (4, 11, 6))])
case("causal mask from ones, triu and tril", lambda s, x: (lambda sc: sc.masked_fill(
     torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1), -1e4) + torch.tril(sc, -1) + torch.triu(sc, 2))(
     x @ x.transpose(1, 2)), [BS3])
case("pow / rsqrt / sqrt / exp / log", lambda s, x: x.pow(2) + x.abs().pow(0.5) + torch.pow(2.0, x) +
     x.abs().add(1).rsqrt() + x.abs().sqrt() + x.exp() + x.abs().add(1).log(), [BS3])
case("clamp_min / clamp_max with scalars and tensors", lambda s, x, y: x.clamp_min(0.1) + x.clamp_max(-0.2) +
     torch.clamp(x, min=y) + torch.clamp(x, max=y), [BS3, BS3])
case("scaled_dot_product_attention bool mask and scale",
     lambda s, x, m: F.scaled_dot_product_attention(x, x * 0.5, x + 1.0, attn_mask=m > 0, scale=0.3),
     [((1, 2, 2, 4), (2, 2, 5, 4), (3, 2, 9, 4)), ((1, 1, 2, 2), (1, 1, 5, 5), (1, 1, 9, 9))])
case("scaled_dot_product_attention enable_gqa (4 query heads, 2 key/value heads), causal",
     lambda s, x, y: F.scaled_dot_product_attention(x, y, y * 0.5, is_causal=True, enable_gqa=True),
     [((1, 4, 2, 8), (2, 4, 5, 8), (3, 4, 9, 8)), ((1, 2, 2, 8), (2, 2, 5, 8), (3, 2, 9, 8))])
case("constant_pad_nd / reflection / replication pads", lambda s, x: F.pad(x, (1, 2, 0, 3), value=0.5) +
     F.pad(x, (1, 2, 2, 1), mode="reflect")[:, :, :1, :1].sum() +
     F.pad(x, (2, 1, 1, 2), mode="replicate").mean(), [HW4])
case("split_with_sizes / chunk / unbind / stack", lambda s, x: torch.stack(
     list(torch.split(x, [2, 2, 2], 2)) + list(torch.chunk(x, 3, 2)) + [x.unbind(2)[0][..., None].expand(-1, -1, 2)],
     1), [BS3])
case("stack on the last dim of inputs", lambda s, x, y: torch.stack([x, y, x * y], -1), [BS3, BS3])
case("flip / roll on a dynamic and a static dim", lambda s, x: torch.flip(x, [1, 2]) + torch.roll(x, 2, 2) +
     torch.roll(x, -3, 1) + torch.roll(x, 1, 1), [BS3])
case("repeat / expand / cat of many", lambda s, x: torch.cat([x.repeat(1, 2, 1), x, x * 2, x.expand(-1, -1, -1)],
     1).repeat(2, 1, 1, 1), [BS3])
case("type conversions float <-> int / bool / half", lambda s, x: (x * 10).long().float() + (x > 0).float() +
     x.half().float() + (x * 3).int().to(torch.float32) + x.to(torch.float64).float(), [BS3])
case("bitwise_not / logical ops on masks", lambda s, x, y: ((~(x > 0)) | (y > 0.5)) & torch.logical_not(x < y) ^
     (x > 1), [BS3, BS3])  # xor of bools: not(equal)
case("logical and / or / not", lambda s, x, y: torch.logical_or(~(x > 0), y > 0.5) & torch.logical_not(x < y),
     [BS3, BS3])
case("comparisons eq / ne / lt / le / gt / ge (int64)", lambda s, x, y: torch.stack(
     [x == y, x != 3, x < y, x <= 0, x > y, x >= 1]), [BS3, BS3], dtype=torch.int64)
case("mean / sum / amax / amin with dims and dtype", lambda s, x: (x.mean((1, 2), keepdim=True), x.sum(-1),
     x.amax(1), x.amin((0, 2)), x.long().sum(1, dtype=torch.float32)), [BS3])
case("var / std (biased, unbiased over a static dim, biased over a dynamic one)",
     lambda s, x: (x.var(-1), x.std(-1, unbiased=False), x.var(1, correction=0, keepdim=True),
                   torch.var_mean(x, -1)[1]), [BS3])
case("var unbiased over a dynamic dim", lambda s, x: x.var(1), [BS3], expect="refuse")
case("any / all with dims", lambda s, x: (torch.any(x > 1, 1), torch.all(x > -1, -1), (x > 2).any(),
     (x != 0).all()), [BS3])
case("adaptive_avg_pool2d (2, 2) of a static 8x8", lambda s, x: F.adaptive_avg_pool2d(x, 2), [B4])
case("adaptive_avg_pool2d to the same size", lambda s, x: F.adaptive_avg_pool2d(x, (8, 8)) * 1.0, [B4])
case("batch 1 serving: min and opt 1", lambda s, x: s.fc(x).softmax(-1), [((1, 6), (1, 6), (9, 6))],
     params={"fc": nn.Linear(6, 5)}, extra=[((4, 6),)])
case("batch and sequence opt 1", lambda s, x: x.sum(1, keepdim=True) * x, [((1, 1, 6), (1, 1, 6), (3, 8, 6))],
     extra=[((2, 5, 6),)])

# issue 15 (appended: the seeded inputs of the cases above stay as they were)
case("activations of issue 15", lambda s, x: F.elu(x, 0.7) + F.selu(x) +
     F.hardshrink(x, 0.3) + F.softshrink(x, 0.4) + torch.round(x * 4) / 2, [BS3])
case("inverse and hyperbolic trigonometry", lambda s, x: torch.asin(torch.tanh(x) * 0.9) + torch.acos(torch.tanh(x) * 0.9)
     + torch.atan(x) + torch.sinh(x) + torch.cosh(x) + torch.asinh(x) + torch.acosh(x.abs() + 1.1)
     + torch.atanh(torch.tanh(x) * 0.9), [BS3])

# ---- added for ONNX conformance (issue 15): cumsum, argmax/argmin, topk, max/min with dim, prod (at the end,
# so the cases above keep their random inputs)
case("cumsum along the sequence and the last dim, int input in int64",
     lambda s, x: (torch.cumsum(x, 1), x.cumsum(-1), (x > 0).int().cumsum(1), x.long().cumsum(0)), [BS3])
case("argmax / argmin with dim, keepdim, negative dim and none",
     lambda s, x: (x.argmax(1), x.argmin(-1, keepdim=True), x.argmax(), x.argmin(dim=None, keepdim=True)), [BS3])
case("topk of 3 along the last dim and of the sequence length along dim 1, smallest",
     lambda s, x: (*torch.topk(x, 3), torch.topk(x, x.shape[1], dim=1, largest=False)[1], x.topk(1, 0)[0]), [BS3])
case("max / min with dim: values and indices", lambda s, x: (*torch.max(x, 1), *x.min(-1, keepdim=True)), [BS3])
case("prod over a dim and over all", lambda s, x: (x.prod(1), x.prod(-1, keepdim=True), x[:, :2, :3].prod()), [BS3])

# ---- advanced indexing (issue 29): several index tensors broadcast together (one gather_nd), index_put (at the
# end, so the cases above keep their random inputs). Index values come from float inputs clamped to a dim's
# range (negative ones included) or from constants and aranges; every run has B > 1 and several sizes.
def ix(t, size):
    """Float values as int64 indices into a dim of `size`, negative ones included (randn: mostly -2..1)."""
    return t.clamp(-size, size - 1).long()


P3 = ((1, 3), (2, 3), (4, 3))  # an index tensor [P, 3], P dynamic
XS = ((4, 5, 2), (4, 5, 7), (4, 5, 11))  # data [4, 5, S], S dynamic
case("x[i, j]: two index tensors on adjacent leading dims, [P, 3] broadcast with [3]",
     lambda s, x, i, j: x[ix(i, 4), ix(j, 5)], [XS, P3, ((3,), (3,), (3,))])
case("x[:, i, j]: adjacent dims after a full one, [P, 1] with [1, Q] (the result's B at the first indexed dim)",
     lambda s, x, i, j: x[:, ix(i, 4), ix(j, 5)],
     [((1, 4, 5), (2, 4, 5), (3, 4, 5)), ((1, 1), (2, 1), (5, 1)), ((1, 1), (1, 3), (1, 6))], noncontig=True)
case("x[i, :, j]: a full dim between (not adjacent: B goes first)",
     lambda s, x, i, j: x[ix(i, 4), :, ix(j, 5)], [((4, 2, 5), (4, 7, 5), (4, 11, 5)), ((1, 1), (2, 1), (4, 1)),
                                                   ((3,), (3,), (3,))])
case("x[i, k, :, arange(S)]: three index tensors (an input, a negative constant, an arange of a dynamic size)",
     lambda s, x: x[ix(x[:, 0, 0, 0] * 3, 4)[:, None], s.k.long(), :, torch.arange(x.shape[3])],
     [((4, 3, 5, 2), (4, 3, 5, 6), (4, 3, 5, 9))], params={"k": torch.tensor([-2.0])})
case("x[i, j] with negative constant indices ([1, 4] with [3, 1])",
     lambda s, x: x[s.i.long(), s.j.long()], [XS],
     params={"i": torch.tensor([[-1.0, 0.0, 2.0, -4.0]]), "j": torch.tensor([[1.0], [-2.0], [0.0]])})
case("mask[arange(B)[:, None, None, None], arange(S)] (transformers' padding mask, bool and float)",
     lambda s, m: (lambda b, k: ((m > 0)[b, k], m[b, k] * 2.0))(torch.arange(m.shape[0])[:, None, None, None],
                                                               torch.arange(m.shape[1])[None, None, None, :]),
     [((1, 1), (8, 16), (9, 17))])
case("x[i, j] of int64 data", lambda s, x, i, j: x[i.clamp(-3, 2), j.clamp(-4, 3)],
     [((3, 4, 2), (3, 4, 5), (3, 4, 8)), ((1, 2), (3, 2), (4, 2)), ((1, 2), (3, 2), (4, 2))], dtype=torch.int64)
case("x[i, j] with int32 index tensors", lambda s, x, i: x[ix(i, 4).int(), ix(i * 2.0, 5).int()], [XS, P3])


def set_at(x, idx, v):
    """A copy of x with x[idx] = v (torch.export makes the write an index_put)."""
    y = x.clone()
    y[idx] = v
    return y


def kv_update(s, c, t):
    """A static KV cache's two ways to write S new positions: cache[:, :, pos] = k and index_copy_ (k [B, 2, S, 4]
    from the cache's batch and t's S)."""
    k = c[:, :, :1] * 0.5 + t
    y, z = c.clone(), c.clone()
    y[:, :, torch.arange(k.shape[2]) + 2] = k
    z.index_copy_(2, torch.arange(k.shape[2]) + 1, k * 2.0)
    return y + z


def masked_writes(s, x):
    """Writes through boolean masks of values the same for every selected element: a where."""
    y, z = x.clone(), x.clone()
    y[y > 0] = 0.5
    z[:, z[0, :, 0] > 0] = z[:, :1] * 2.0 + 1.0  # [B, 1, 6]: one value a batch and channel
    return y * z + torch.index_put(x, (x < 0,), x[0, 0, 0] - 1.0, accumulate=True)


case("x[i, :, j] = v (index_put, distinct constant indices, values broadcast from [3, 1])",
     lambda s, x, v: set_at(x, (s.i.long(), slice(None), s.j.long()), v),
     [((4, 2, 5), (4, 7, 5), (4, 11, 5)), ((3, 1), (3, 1), (3, 1))],
     params={"i": torch.tensor([0.0, -1.0, 2.0]), "j": torch.tensor([1.0, 3.0, -5.0])})
case("index_put accumulate=True with repeated indices ([P, 1] with [3]), values [S] broadcast",
     lambda s, x, i: torch.index_put(x, (ix(i, 4), s.j.long()), x[0, 0] * 2.0, accumulate=True),
     [XS, ((1, 1), (3, 1), (6, 1))], params={"j": torch.tensor([1.0, -4.0, 1.0])})
case("cache[:, :, arange(S) + 2] = k and index_copy_ (a static KV cache's update)", kv_update,
     [((1, 2, 8, 4), (2, 2, 8, 4), (3, 2, 8, 4)), ((1, 1, 1, 1), (1, 1, 3, 1), (1, 1, 6, 1))])
case("x[x > 0] = 0.5, x[:, m] = v [B, 1, 6], index_put((mask,), accumulate) (one value for all selected)",
     masked_writes, [BS3])
case("x[x > 0] = v with one value per selected element (a layout that depends on the data)",
     lambda s, x: set_at(x, x > 0, s.v), [B3], params={"v": torch.randn(3)}, expect="refuse")

finish("cases")
