"""A new user's first hour with the torch package (issue 18), every check against eager PyTorch or numpy.

- Sizes as values: PyTorch's dynamic-shapes seed `x * x.size(0)` through all three approaches
  (symc.compile with symc.Input, an ExportedProgram with torch.export.Dim, torch.compile with
  mark_dynamic), and size arithmetic, torch.full with a size and torch.sym_float feeding tensor ops:
  each size becomes a scalar computed at run time, at every size in range.
- Names from the user's code: Dim("bs") / Dim("seq_len") name the engine's symbols and its errors.
- Divisibility: a reshape needing S % 8 == 0 fails with a fix naming symc.Input's multiple_of exactly;
  the test follows that advice and the build passes and matches eager; a size off the multiple is refused.
- torch_tensorrt.compile's spellings: ir=, one Input not in a list, arg_inputs/kwarg_inputs,
  enabled_precisions={torch.float16} (half storage: within fp16 error of eager, and not the fp32
  engine), refusals by name; a wrong static dim wrapped with the input, dim and declared shapes.
- Text inputs (issue 29, 32): a decoder-style padding mask whose code asserts S of the input <= S of the mask,
  declared apart (one engine of two regions, S_x <= S_mask and S_x > S_mask) and as one dim (the same
  dim_names in both Inputs), then eager's values at several sizes, batch 1 and S 1 included; a branch on
  `x.shape[0] > 1` with a declared min of 1: one engine, B = 1 a region of its own.
- m.save / symc.load (output structure kept, `symc run` reads the file), the engine cache in
  SYMC_CACHE_DIR (reused for the same model and ranges, a new entry for new ranges, trimmed to
  SYMC_CACHE_MAX_MB), and symc.Session's get_inputs() and run().

usage: test_torch_first_hour.py [path/to/libsymc.so] [path/to/symc]
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_test_common as common  # noqa: E402

symc = common.setup("numpy")
import numpy as np  # noqa: E402
import torch  # noqa: E402

log, fail = common.log, common.fail
SYMC_BIN = sys.argv[2] if len(sys.argv) > 2 else None
CACHE = tempfile.mkdtemp(prefix="symc_first_hour_")
os.environ["SYMC_CACHE_DIR"] = CACHE


def check(name, cond, detail=""):
    if not cond:
        fail(f"{name}: {detail}")


def same(name, got, want):
    if isinstance(want, torch.Tensor):
        got, want = (got,), (want,)
    for g, w in zip(got, want):
        check(name, g.dtype == w.dtype and g.shape == w.shape and torch.equal(g, w),
              f"got {g.dtype}{tuple(g.shape)} {g.flatten()[:4]}, want {w.dtype}{tuple(w.shape)} {w.flatten()[:4]}")


def raises(name, fn, *texts):
    try:
        fn()
    except symc.SymcError as e:
        msg = str(e)
        for t in texts:
            check(name, t in msg, f"no {t!r} in: {msg}")
        return msg
    except Exception as e:  # noqa: BLE001
        fail(f"{name}: {type(e).__name__} instead of SymcError: {e}")
        return ""
    fail(f"{name}: no exception")
    return ""


class SizeMul(torch.nn.Module):  # PyTorch's dynamic-shapes doc
    def forward(self, x):
        return x * x.size(0)


class SizeMath(torch.nn.Module):
    def forward(self, x):
        n = x.shape[0] * 2 + x.shape[1]
        return x + n, torch.full((x.shape[0],), x.shape[1]), x / torch.sym_float(x.shape[0]), (x > 0).long() * n


def test_sizes_as_values():
    spec = symc.Input(min_shape=(1, 3), opt_shape=(4, 3), max_shape=(16, 3))
    m1 = symc.compile(SizeMul(), inputs=[spec])
    bs = torch.export.Dim("bs", min=1, max=16)
    x4 = torch.randn(4, 3)
    m2 = symc.compile(torch.export.export(SizeMul(), (x4,), dynamic_shapes={"x": {0: bs}}), (x4,))
    torch._dynamo.reset()
    m3 = torch.compile(SizeMul(), backend="symc")
    for b in (1, 2, 5, 16):
        x = torch.randn(b, 3)
        same(f"x * x.size(0), symc.Input, B={b}", m1(x), SizeMul()(x))
        same(f"x * x.size(0), Dim, B={b}", m2(x), SizeMul()(x))
        if b > 1:  # torch.compile itself specializes a size it sees at 1 (mark_dynamic refuses it)
            xm = x.clone()
            torch._dynamo.mark_dynamic(xm, 0, min=1, max=16)
            same(f"x * x.size(0), torch.compile, B={b}", m3(xm), SizeMul()(x))
    if torch.cuda.is_available():  # the size's one-thread kernel and its cast, on the GPU
        for b in (1, 7, 16):
            x = torch.randn(b, 3, device="cuda")
            same(f"x * x.size(0) on CUDA, B={b}", m1(x).cpu(), SizeMul()(x).cpu())
    m4 = symc.compile(SizeMath(), symc.Input(min_shape=(1, 2), opt_shape=(3, 4), max_shape=(8, 16)))
    for b, c in ((1, 2), (3, 5), (8, 16), (7, 3)):
        x = torch.randn(b, c)
        same(f"size arithmetic, full, sym_float at {b}x{c}", m4(x), SizeMath()(x))
    log("sizes as values: x * x.size(0) through the three approaches, size arithmetic")


class TwoDims(torch.nn.Module):
    def forward(self, q, k):
        return torch.softmax(q @ k.transpose(-1, -2), -1)


def test_user_names():
    q, k = torch.randn(2, 5, 8), torch.randn(2, 7, 8)
    bs, sq, sk = (torch.export.Dim("bs", min=1, max=8), torch.export.Dim("seq_len", min=1, max=32),
                  torch.export.Dim("kv_len", min=1, max=64))
    ep = torch.export.export(TwoDims(), (q, k), dynamic_shapes={"q": {0: bs, 1: sq}, "k": {0: bs, 1: sk}})
    m = symc.compile(ep, (q, k))
    names = sorted(n for n, *_ in m.engine.symbols)
    check("Dim names are the engine's symbols", names == ["bs", "kv_len", "seq_len"], names)
    check("Dim names in repr", "seq_len in [1, 32]" in repr(m), repr(m))
    raises("Dim name in a range error", lambda: m(torch.randn(2, 33, 8), torch.randn(2, 7, 8)),
           "symbol seq_len must be in [1, 32]")
    if SYMC_BIN:
        out = subprocess.run([SYMC_BIN, "inspect", m.engine_path], capture_output=True, text=True).stdout
        check("Dim names in symc inspect", "seq_len in [1, 32]" in out and "kv_len in [1, 64]" in out, out)
    q, k = torch.randn(3, 9, 8), torch.randn(3, 11, 8)
    got = m(q, k)
    check("Dim-named engine runs", torch.allclose(got, TwoDims()(q, k), rtol=1e-4, atol=1e-5), "")
    log(f"user names: {names}")


class Rows(torch.nn.Module):
    def forward(self, x):
        return x.reshape(x.shape[0], -1, 128) * 2


def test_divisibility():
    lo, opt, hi = (1, 1, 16), (2, 16, 16), (4, 64, 16)
    msg = raises("reshape needing S % 8", lambda: symc.compile(Rows(), symc.Input(min_shape=lo, opt_shape=opt,
                                                                                  max_shape=hi)),
                 "declare x_dim1 as a multiple of 8: multiple_of={1: 8} in the symc.Input of 'x' (input 0)")
    # follow the advice as the message gives it
    mm = re.search(r"multiple_of=\{(\d+): (\d+)\} in the symc\.Input of '(\w+)' \(input (\d+)\)", msg)
    check("the fix is parseable", mm is not None, msg)
    if not mm:
        return
    advice = {int(mm.group(1)): int(mm.group(2))}
    m = symc.compile(Rows(), symc.Input(min_shape=lo, opt_shape=opt, max_shape=hi, multiple_of=advice))
    syms = {n: (a, o, b, mult) for n, a, o, b, mult in m.engine.symbols}
    check("the multiple is the symbol's", syms.get("x_dim1") == (8, 16, 64, 8), syms)
    for b, s in ((1, 8), (3, 24), (4, 64)):
        x = torch.randn(b, s, 16)
        same(f"reshape at B={b} S={s}", m(x), Rows()(x))
    raises("S = 12 refused", lambda: m(torch.randn(2, 12, 16)), "x_dim1", "multiple of 8")
    raises("multiple_of on a static dim", lambda: symc.Input(min_shape=lo, max_shape=hi, multiple_of={2: 8}),
           "dim 2 is static (16)")
    raises("multiple_of outside the rank", lambda: symc.Input(min_shape=lo, max_shape=hi, multiple_of={3: 8}),
           "multiple_of key 3 is not a dim")
    # an ExportedProgram: torch.export wants the multiple as a derived Dim (8 * _S), which symc takes as a
    # symbol that is a multiple of 8
    s8 = 8 * torch.export.Dim("_S", min=1, max=8)
    ep = torch.export.export(Rows(), (torch.randn(2, 16, 16),), dynamic_shapes={"x": {1: s8}})
    m = symc.compile(ep, torch.randn(2, 16, 16))
    x = torch.randn(2, 40, 16)
    same("ExportedProgram with a derived Dim 8*_S", m(x), Rows()(x))
    log("divisibility: the error's advice builds")


class Lin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 16)

    def forward(self, x):
        return torch.relu(self.fc(x))


class KwModel(torch.nn.Module):
    def forward(self, x, y=None, scale=None):
        return x + y * 2


def test_trt_compat():
    torch.manual_seed(1)
    model = Lin().eval()
    spec = symc.Input(min_shape=(1, 8), opt_shape=(4, 8), max_shape=(32, 8))
    x = torch.randn(5, 8)
    want = model(x)
    for ir in ("default", "dynamo"):
        m = symc.compile(model, ir=ir, inputs=spec)  # one Input, not in a list
        check(f"ir={ir}", torch.allclose(m(x), want, rtol=1e-4, atol=1e-5), "")
    m = symc.compile(model, arg_inputs=[spec])
    check("arg_inputs", torch.allclose(m(x), want, rtol=1e-4, atol=1e-5), "")
    torch._dynamo.reset()
    f = symc.compile(model, ir="torch_compile")
    xm = x.clone()
    torch._dynamo.mark_dynamic(xm, 0, min=1, max=32)
    check("ir=torch_compile", torch.allclose(f(xm), want, rtol=1e-4, atol=1e-5), "")
    raises("ir=torch_compile with ranges", lambda: symc.compile(model, ir="torch_compile", inputs=[spec]),
           "mark_dynamic")
    raises("ir=ts", lambda: symc.compile(model, ir="ts", inputs=[spec]), "ir='ts' is not supported")
    raises("unknown option", lambda: symc.compile(model, inputs=[spec], workspace_size=1 << 20),
           "workspace_size: not supported")
    raises("int8", lambda: symc.compile(model, inputs=[spec], enabled_precisions={torch.int8}),
           "torch.int8 is not supported")
    raises("two half types", lambda: symc.compile(model, inputs=[spec],
                                                 enabled_precisions={torch.float16, torch.bfloat16}), "not both")
    raises("inputs and arg_inputs", lambda: symc.compile(model, inputs=[spec], arg_inputs=[spec]), "not both")
    raises("too many inputs", lambda: symc.compile(model, inputs=[spec, spec]), "forward takes 1 (x)")
    # enabled_precisions={torch.float16}: the half-storage engine: within fp16 error of eager, not bit-equal
    # to the fp32 engine (so the flag reached the compiler)
    m32 = symc.compile(model, inputs=[spec])
    m16 = symc.compile(model, inputs=[spec], enabled_precisions={torch.float32, torch.float16})
    y32, y16 = m32(x), m16(x)
    check("fp16 engine close to eager", torch.allclose(y16, want, rtol=1e-2, atol=1e-2), (y16 - want).abs().max())
    check("fp16 engine differs from fp32", not torch.equal(y16, y32), "bit-equal: precision not applied")
    check("fp16 engine keeps the fp32 output dtype", y16.dtype == torch.float32, y16.dtype)
    # kwarg_inputs: placed at forward's parameters
    xs = symc.Input(min_shape=(1, 4), opt_shape=(2, 4), max_shape=(8, 4))
    m = symc.compile(KwModel(), arg_inputs=[xs], kwarg_inputs={"y": xs})
    a, b = torch.randn(3, 4), torch.randn(3, 4)
    same("kwarg_inputs", m(a, b), KwModel()(a, b))
    raises("kwarg_inputs with a gap", lambda: symc.compile(KwModel(), arg_inputs=[xs], kwarg_inputs={"scale": xs}),
           "parameter 'y' between them has no input")
    raises("kwarg_inputs unknown", lambda: symc.compile(KwModel(), arg_inputs=[xs], kwarg_inputs={"z": xs}),
           "kwarg_inputs['z']: forward has no such parameter")
    # a wrong static dim: torch.export's error with the input, the dim and the declared shapes
    raises("wrong static dim", lambda: symc.compile(model, inputs=[symc.Input(min_shape=(1, 5), opt_shape=(2, 5),
                                                                               max_shape=(8, 5))]),
           "torch.export of Lin failed with the declared inputs ('x' [1..8, 5])",
           "input 'x' (argument 0) dim 1 = 5")
    log("torch_tensorrt spellings")


class KeyMask(torch.nn.Module):
    """Attention over keys with a padding mask, as transformers' masking code builds it for a decoder: the mask
    may be longer than the input (cached keys), a shorter one is padded (a branch on the sizes), and it is read
    at [batch, key] by two index tensors (aten.index with 2 index tensors, a gather_nd)."""

    def forward(self, x, mask):
        s = x.shape[1]
        if mask.shape[1] < s:
            mask = torch.nn.functional.pad(mask, (0, s - mask.shape[1]))
        keep = mask.bool()[torch.arange(x.shape[0])[:, None, None], torch.arange(s)[None, None, :]]  # [B, 1, S]
        return (x @ x.transpose(1, 2)).masked_fill(~keep, -1e9).softmax(-1) @ x


class BatchBranch(torch.nn.Module):
    def forward(self, x, y):
        return (x + y) * 2 if x.shape[0] > 1 else (x + y) + 1


def padding_mask(b, s):
    """[b, s] int64: row i holds s - i ones (at least 1), then zeros."""
    m = torch.ones(b, s, dtype=torch.int64)
    for i in range(b):
        m[i, max(1, s - i):] = 0
    return m


def test_text_inputs():
    """Inputs declared as users declare a text model's (issue 29): two Inputs with dims of their own."""
    xs = symc.Input(min_shape=(1, 1, 4), opt_shape=(8, 16, 4), max_shape=(16, 32, 4), dim_names={0: "B"})
    ms = symc.Input(min_shape=(1, 1), opt_shape=(8, 16), max_shape=(16, 32), dtype=torch.int64, dim_names={0: "B"})
    # the code asserts S of x <= S of the mask, which independent dims break: one engine whose regions are
    # S_x <= S_mask and S_x > S_mask (issue 32; the latter split further where torch's trace of it holds from 2 on
    # only), each right against eager (a mask shorter than x is padded)
    m = symc.compile(KeyMask(), inputs=[xs, ms])
    for b, s, sm in ((1, 1, 1), (8, 16, 16), (16, 32, 32), (5, 9, 9), (3, 9, 4), (2, 30, 12), (4, 5, 20)):
        x, mask = torch.randn(b, s, 4), padding_mask(b, sm)
        want = KeyMask()(x, mask)
        check(f"two inputs' dims apart at B={b} S={s} S_mask={sm}",
              want.shape == m(x, mask).shape and torch.allclose(m(x, mask), want, rtol=1e-4, atol=1e-5), "")
    # declared as one dim, as the build's advice said before regions: one region
    names = {0: "B", 1: "S"}
    xs.dim_names, ms.dim_names = dict(names), dict(names)
    m = symc.compile(KeyMask(), inputs=[xs, ms])
    for b, s in ((1, 1), (8, 16), (16, 32), (5, 9)):
        x, mask = torch.randn(b, s, 4), padding_mask(b, s)
        want = KeyMask()(x, mask)
        check(f"padding mask at B={b} S={s}", torch.allclose(m(x, mask), want, rtol=1e-4, atol=1e-5), "")
        if b > 1:
            check(f"the padding matters at B={b} S={s}", not torch.allclose(
                KeyMask()(x, torch.ones_like(mask)), want, rtol=1e-4, atol=1e-5), "")
    # Python code branching on the batch: torch traced [2, 4] only; B = 1 is traced on its own, a region of
    # the same engine, and both agree with eager
    spec = symc.Input(min_shape=(1, 6), opt_shape=(2, 6), max_shape=(4, 6))
    m = symc.compile(BatchBranch(), inputs=[spec, spec])
    for b in (1, 2, 4, 1):
        x, y = torch.randn(b, 6), torch.randn(b, 6)
        check(f"batch branch at B={b}", torch.allclose(m(x, y), BatchBranch()(x, y)), "")
    log("text inputs: a relation between two inputs' dims and a branch on the batch, one engine each")


class DictOut(torch.nn.Module):
    def forward(self, x):
        return {"double": x * 2, "rows": x.sum(1)}


def test_save_load_cache_session():
    spec = symc.Input(min_shape=(1, 3), opt_shape=(4, 3), max_shape=(16, 3))
    before = sorted(f for f in os.listdir(CACHE) if f.endswith(".symx"))
    m = symc.compile(DictOut(), [spec])
    m_again = symc.compile(DictOut(), [spec])
    check("cache: the same model and ranges reuse the engine", m.engine_path == m_again.engine_path,
          f"{m.engine_path} vs {m_again.engine_path}")
    m_other = symc.compile(DictOut(), [symc.Input(min_shape=(1, 3), opt_shape=(4, 3), max_shape=(8, 3))])
    check("cache: other ranges, another engine", m_other.engine_path != m.engine_path, m.engine_path)
    after = sorted(f for f in os.listdir(CACHE) if f.endswith(".symx"))
    check("cache: two new engines, in SYMC_CACHE_DIR", len(after) == len(before) + 2 and
          os.path.dirname(m.engine_path) == CACHE, f"{before} -> {after}")
    d = tempfile.mkdtemp(prefix="symc_save_")
    path = m.save(os.path.join(d, "m.symx"))
    loaded = symc.load(path)
    x = torch.randn(5, 3)
    got, want = loaded(x), DictOut()(x)
    check("load keeps the output structure", isinstance(got, dict) and set(got) == {"double", "rows"}, type(got))
    if isinstance(got, dict):
        same("loaded output double", got["double"], want["double"])
        # a sum: the reference backend accumulates in double, torch in float
        check("loaded output rows", torch.allclose(got["rows"], want["rows"], rtol=1e-5, atol=1e-6), got["rows"])
    if SYMC_BIN:
        r = subprocess.run([SYMC_BIN, "run", path, "--shapes", "x:5x3"], capture_output=True, text=True)
        check("symc run reads a saved engine", r.returncode == 0 and "[5, 3]" in r.stdout, r.stdout + r.stderr)
    # Session: onnxruntime's way
    sess = symc.Session(path)
    ins = sess.get_inputs()
    check("Session inputs", [i.name for i in ins] == ["x"] and ins[0].shape == ["x_dim0", 3] and
          ins[0].type == "tensor(float)" and ins[0].dtype == np.float32 and
          ins[0].ranges == {"x_dim0": (1, 4, 16)}, [(i.name, i.shape, i.type, i.dtype, i.ranges) for i in ins])
    outs = [o.name for o in sess.get_outputs()]
    if torch.cuda.is_available():
        gs = symc.Session(path, providers=["CUDAExecutionProvider"])
        a7 = np.random.default_rng(1).standard_normal((7, 3)).astype(np.float32)
        r = {o.shape: o for o in gs.run(None, {"x": a7})}
        check("Session on CUDA", gs.get_providers()[0] == "CUDAExecutionProvider" and
              np.array_equal(r.get((7, 3)), a7 * 2) and np.allclose(r.get((7,)), a7.sum(1), rtol=1e-5), r.keys())
    a = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    res = sess.run(None, {"x": a})
    by_shape = {r.shape: r for r in res}
    check("Session.run", len(res) == 2 and all(isinstance(r, np.ndarray) for r in res) and
          np.array_equal(by_shape.get((6, 3)), a * 2) and np.allclose(by_shape.get((6,)), a.sum(1), rtol=1e-5),
          [r.shape for r in res])
    one = sess.run([outs[1]], {"x": a})
    check("Session.run one output", len(one) == 1 and np.array_equal(one[0], res[1]), outs)
    raises("Session unknown output", lambda: sess.run(["nope"], {"x": a}), "no output named 'nope' (outputs: ")
    raises("Session missing input", lambda: sess.run(None, {}), "missing input 'x' (inputs: x)")
    raises("Session wrong dtype", lambda: sess.run(None, {"x": a.astype(np.float64)}),
           "input 'x' is float64, the engine takes tensor(float)")
    raises("Session out of range", lambda: sess.run(None, {"x": np.zeros((17, 3), np.float32)}),
           "symbol x_dim0 must be in [1, 16]")
    # the cache's bound: at a tiny SYMC_CACHE_MAX_MB only the newest engine stays
    os.environ["SYMC_CACHE_MAX_MB"] = "0.000001"
    try:
        m_last = symc.compile(DictOut(), [symc.Input(min_shape=(2, 3), opt_shape=(4, 3), max_shape=(8, 3))])
    finally:
        del os.environ["SYMC_CACHE_MAX_MB"]
    left = sorted(f for f in os.listdir(CACHE) if f.endswith(".symx"))
    check("cache trimmed to its bound", left == [os.path.basename(m_last.engine_path)], left)
    same("the newest engine still runs", m_last(x)["double"], want["double"])
    log("save/load, cache, Session")


def main():
    test_sizes_as_values()
    test_user_names()
    test_divisibility()
    test_trt_compat()
    test_save_load_cache_session()
    test_text_inputs()
    common.finish("first-hour checks")


if __name__ == "__main__":
    main()
