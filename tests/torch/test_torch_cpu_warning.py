"""The reference backend says so, once (issue 18): CPU tensors run on the exact but slow reference
backend, and the first run of a CPU engine in a process warns with symc.ReferenceBackendWarning, naming
the backend and the way to the fast path; a second run, a second module and a symc.Session run in the
same process do not warn again, even with the "always" filter. Outputs are checked against eager.

usage: test_torch_cpu_warning.py [path/to/libsymc.so]
"""
import os
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_test_common as common  # noqa: E402

symc = common.setup("numpy")
import torch  # noqa: E402

os.environ["SYMC_CACHE_DIR"] = tempfile.mkdtemp(prefix="symc_cpu_warning_")
fail, log = common.fail, common.log


class Small(torch.nn.Module):
    def __init__(self, k):
        super().__init__()
        self.lin = torch.nn.Linear(8, k)

    def forward(self, x):
        return torch.relu(self.lin(x))


def ref_warnings(caught):
    return [w for w in caught if issubclass(w.category, symc.ReferenceBackendWarning)]


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    m1, m2 = Small(4).eval(), Small(6).eval()
    inp = [symc.Input(min_shape=(1, 8), opt_shape=(4, 8), max_shape=(16, 8))]
    c1 = symc.compile(m1, inputs=inp, gpu=False)
    c2 = symc.compile(m2, inputs=inp, gpu=False)
    check_after_compile = len(ref_warnings(caught))
    x = torch.randn(5, 8)
    y1 = c1(x)
    after_first = len(ref_warnings(caught))
    y1b = c1(torch.randn(3, 8))
    y2 = c2(x)
    path = os.path.join(os.environ["SYMC_CACHE_DIR"], "m1.symx")
    c1.save(path)
    (s_out,) = symc.Session(path).run(None, {c1.engine.inputs[0][0]: x.numpy()})
    total = ref_warnings(caught)

if check_after_compile:
    fail(f"compiling warned already ({check_after_compile}); only a run on the reference backend should")
if after_first != 1:
    fail(f"the first CPU run gave {after_first} ReferenceBackendWarning(s), wanted 1")
if len(total) != 1:
    fail(f"{len(total)} ReferenceBackendWarnings in the process, wanted exactly 1: {[str(w.message) for w in total]}")
else:
    msg = str(total[0].message)
    for words in ("reference backend", "slower than eager PyTorch", "CUDA tensors", "OMP_NUM_THREADS", "once"):
        if words not in msg:
            fail(f"the warning does not say '{words}': {msg}")
    if total[0].filename == symc.runtime.__file__:
        fail(f"the warning points into symc's own code ({total[0].filename}), not at the caller")
with torch.no_grad():
    for name, got, want in (("m1", y1, m1(x)), ("m2", y2, m2(x)), ("session", torch.from_numpy(s_out), m1(x))):
        if not torch.allclose(got, want, rtol=1e-5, atol=1e-6):
            fail(f"{name}: output differs from eager by {(got - want).abs().max().item()}")
if tuple(y1b.shape) != (3, 4):
    fail(f"second run shape {tuple(y1b.shape)}")
log(f"warning: {str(total[0].message) if total else None}")
common.finish("CPU-warning checks")
