"""One engine where torch.export narrows a declared range (issue 32, docs/PLAN-regions.md §4, stage 6), ctest
label `python`, on the reference backend against eager PyTorch.

Models that branch on a size: `if x.shape[0] > 1` (torch decides it by assuming sizes are never 1: B = 1 is a
part of its own, exported static), `if x.shape[1] > 64` (a guard torch narrows the range with: [2, 64] and
[65, 128]), a 3-way branch, a branch in a loop (more parts than the cap: refused with the parts named), and a
relation between two inputs' dims (a runtime assert over two symbols: the relation and its negation as the
regions' conditions). First the split itself (parts.trace_parts: which parts, which conditions, no engine), then
symc.compile end to end: one engine with a region per part, its region count, right at sizes on both sides of
every split and at its edges, and the engine cache reusing it. A model with no split still builds today's
single-graph engine. The end-to-end half needs the library's symc_compile_regions (prints SKIP for it where the
library has none yet).

usage: test_torch_regions.py [path/to/libsymc.so]
"""
import ctypes
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_test_common as common  # noqa: E402

symc = common.setup()
import torch  # noqa: E402

from symc import api, parts  # noqa: E402

log, fail = common.log, common.fail
os.environ["SYMC_CACHE_DIR"] = tempfile.mkdtemp(prefix="symc_regions_")


def check(name, cond, detail=""):
    if not cond:
        fail(f"{name}: {detail}")


class BatchOne(torch.nn.Module):
    """A different program at B = 1, decided by torch's assumption that B is never 1."""

    def forward(self, x):
        return x * 2 + x.sum(0) if x.shape[0] > 1 else x - 1


class Long(torch.nn.Module):
    def forward(self, x):
        return x * 2 if x.shape[1] > 64 else x + 1


class Three(torch.nn.Module):
    def forward(self, x):
        s = x.shape[1]
        if s > 64:
            return x * 2
        if s > 16:
            return x - 1
        return x + 1


class Fourth(torch.nn.Module):
    """A branch on S % 4: intervals would be 32 parts; the condition and its negation are two."""

    def forward(self, x):
        return x * 2 if x.shape[1] % 4 == 0 else x + 1


class Many(torch.nn.Module):
    """One branch every 12 sizes: 11 programs over [2, 128], more than an engine's parts."""

    def forward(self, x):
        for t in range(8, 128, 12):
            if x.shape[1] > t:
                x = x + 1
        return x


class KeyMask(torch.nn.Module):
    """A mask shorter than the input is padded: a branch on S_x <= S_mask, over two inputs' dims (as
    test_torch_first_hour.py's: transformers' masking code for a decoder)."""

    def forward(self, x, mask):
        s = x.shape[1]
        if mask.shape[1] < s:
            mask = torch.nn.functional.pad(mask, (0, s - mask.shape[1]))
        keep = mask.bool()[torch.arange(x.shape[0])[:, None, None], torch.arange(s)[None, None, :]]  # [B, 1, S]
        return (x @ x.transpose(1, 2)).masked_fill(~keep, -1e9).softmax(-1) @ x


class Plain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 8)

    def forward(self, x):
        return self.lin(x).relu() * x.shape[0]


def declared(inputs):
    """api._Declared as symc.compile makes it for inputs (symc.Input per forward argument x0, x1, ...)."""
    opts, names, ranges = {}, {}, {}
    for i, s in enumerate(inputs):
        for d, (lo, o, hi) in enumerate(zip(s.min_shape, s.opt_shape, s.max_shape)):
            opts[(i, d)] = o
            if lo != hi:
                names[(i, d)] = s.dim_names.get(d, f"x{i}_dim{d}")
                ranges[(i, d)] = (lo, hi)
    return api._Declared(list(inputs), opts, names, ranges, {}, torch.device("cpu"))


def split(model, inputs):
    """[(part text, condition text)] of the model's parts, and the traced parts' modules closed."""
    decl = declared(inputs)
    done = parts.trace_parts(model.eval(), decl, type(model).__name__, api.export_ranges, lambda e: e)
    texts = parts.describe_parts(done, decl)
    out = []
    for t, (m, cond) in zip(texts, parts.finish_parts(done)):
        out.append((t, cond))
        m.close()
    return out


def spec(lo, opt, hi, **kw):
    return symc.Input(min_shape=lo, opt_shape=opt, max_shape=hi, **kw)


def key_mask_inputs():
    """x [B, S_x, 4] and mask [B, S_mask], S_x and S_mask declared apart."""
    return [spec((1, 2, 4), (4, 8, 4), (4, 16, 4), dim_names={0: "B"}),
            spec((1, 2), (4, 8), (4, 16), dtype=torch.int64, dim_names={0: "B"})]


def test_split():
    got = split(BatchOne(), [spec((1, 4), (8, 4), (32, 4))])
    check("B = 1 split", got == [("x0_dim0 in [2, 32]", None), ("x0_dim0 = 1", None)], got)
    got = split(Long(), [spec((2, 2), (2, 32), (2, 128))])
    check("S > 64 split", got == [("x0_dim1 in [2, 64]", None), ("x0_dim1 in [65, 128]", None)], got)
    got = split(Three(), [spec((2, 2), (2, 32), (2, 128))])
    check("3-way split", sorted(got) == [("x0_dim1 in [17, 64]", None), ("x0_dim1 in [2, 16]", None),
                                         ("x0_dim1 in [65, 128]", None)], got)
    got = split(Fourth(), [spec((2, 2), (2, 32), (2, 128))])
    check("S % 4 split", got == [("x0_dim1 in [4, 128] and (x0_dim1 % 4) == 0", "(x0_dim1 % 4) == 0"),
                                 ("x0_dim1 in [2, 127] and (x0_dim1 % 4) != 0", "(x0_dim1 % 4) != 0")], got)
    got = split(Plain(), [spec((1, 3, 4), (8, 3, 4), (32, 3, 4))])
    check("no split: one part, no condition", got == [("the declared ranges", None)], got)
    try:
        split(Many(), [spec((2, 2), (2, 32), (2, 128))])
        fail("past the cap: no exception")
    except symc.SymcError as e:
        msg = str(e)
        for t in ("declared range [2, 128], but torch.export traced the model only for [21, 32]",
                  "compiled parts: x0_dim1 in [21, 32]; ", "failing part: x0_dim1 in [",
                  f"more than {parts.MAX_PARTS} parts"):
            check("past the cap: the message", t in msg, f"no {t!r} in {msg}")
        check("past the cap: code range", e.code == "range", e.code)
    log("the split: parts and conditions")


class RegionInfo(ctypes.Structure):  # symrt_region_info
    _fields_ = [("name", ctypes.c_char_p), ("steps", ctypes.c_uint32), ("nodes", ctypes.c_uint32)]


def num_regions(m):
    L = m.engine._L
    fn = getattr(L, "symrt_engine_num_regions", None)
    if fn is None:
        return None
    fn.restype, fn.argtypes = ctypes.c_uint32, [ctypes.c_void_p]
    return int(fn(m.engine._h))


def region_names(m):
    """Each region's name: its condition as text (symrt_engine_region)."""
    L, out = m.engine._L, []
    fn = L.symrt_engine_region
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(RegionInfo), ctypes.c_void_p]
    for r in range(num_regions(m) or 0):
        info, err = RegionInfo(), symc._lib.Error()
        fn(m.engine._h, r, ctypes.byref(info), ctypes.byref(err))
        out.append(info.name.decode() if info.name else "")
    return out


def close(name, got, want):
    ok = got.shape == want.shape and torch.allclose(got, want, rtol=1e-4, atol=1e-5)
    check(name, ok, f"shape {tuple(got.shape)} vs {tuple(want.shape)}, max err "
                    f"{(got - want).abs().max().item() if got.shape == want.shape else '-'}")


def compiled(name, model, inputs, regions, sizes, make):
    """symc.compile of model; regions expected; the engine against eager at each size (make(size) -> inputs)."""
    m = symc.compile(model, inputs=inputs)
    n = num_regions(m)
    check(f"{name}: {regions or 'several'} regions", n is None or n == regions or regions is None and n >= 2,
          f"{n} regions")
    for s in sizes:
        xs = make(s)
        with torch.no_grad():
            close(f"{name} at {s}", m(*xs), model(*xs))
    log(f"{name}: one engine, {n if n is not None else '?'} regions, right at {sizes}")
    return m


def test_engines():
    ins = [spec((1, 4), (8, 4), (32, 4))]
    m = compiled("B = 1", BatchOne(), ins, 2, [1, 5, 32, 1, 2], lambda b: (torch.randn(b, 4),))
    again = symc.compile(BatchOne(), inputs=ins)
    check("the cache reuses the engine", again.engine_path == m.engine_path, f"{again.engine_path} vs {m.engine_path}")
    compiled("S > 64", Long(), [spec((2, 2), (2, 32), (2, 128))], 2, [2, 30, 64, 65, 128],
             lambda s: (torch.randn(2, s),))
    compiled("3-way", Three(), [spec((2, 2), (2, 32), (2, 128))], 3, [2, 16, 17, 40, 64, 65, 128],
             lambda s: (torch.randn(2, s),))

    compiled("S % 4", Fourth(), [spec((2, 2), (2, 32), (2, 128))], 2, [2, 3, 4, 5, 8, 127, 128],
             lambda s: (torch.randn(2, s),))

    def km(s):
        sx, sm = s
        mask = torch.ones(3, sm, dtype=torch.int64)
        mask[1, sm // 2:] = 0
        return torch.randn(3, sx, 4), mask
    m = compiled("S_x <= S_mask", KeyMask(), key_mask_inputs(), None,
                 [(8, 8), (4, 12), (12, 4), (16, 2), (2, 16)], km)
    names = region_names(m)
    check("S_x <= S_mask: the relation, then its negation, as the regions' conditions", len(names) >= 2 and
          "x_dim1 <= mask_dim1" in names[0] and all("x_dim1 > mask_dim1" in n for n in names[1:]), names)
    log(f"S_x <= S_mask: regions {names}")
    # no split: the engine of one graph, as before regions
    m = compiled("no split", Plain(), [spec((1, 3, 4), (8, 3, 4), (32, 3, 4))], 0, [1, 7, 32],
                 lambda b: (torch.randn(b, 3, 4),))


def main():
    test_split()
    lib = symc._lib.lib()
    if not hasattr(lib, "symc_compile_regions") or not hasattr(symc.builder, "compile_regions"):
        log("SKIP engines: this libsymc has no symc_compile_regions (or symc.builder no compile_regions) yet")
    else:
        test_engines()
    common.finish("region checks")


if __name__ == "__main__":
    main()
