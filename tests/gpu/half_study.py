#!/usr/bin/env python3
"""How a --fp16 engine's error compares with eager half's, over many points of one real model: the
question a single failing point of the real-model sweep (tests/gpu/real_models.py) leaves open,
whether the engine is less exact than eager half in general or the point is an outlier (the 2
logits of a classifier make a relative error of few numbers).

Per point (N of them, drawn from --seed: B and S uniform in the given ranges, a padded mask of
random length where the model takes one) it prints the engine's relative error against the fp64
module, eager half's on the same inputs, and their ratio; then the median and the worst ratio and
the points past 2x, and the two error distributions (relative and absolute: median, p90, max). The
engine is the model's ONNX export compiled with --fp16 (real_models.py's export and flags), or with
--frontend torch the engine symc.compile builds from the module (torch.export; GPU only), run on the
CUDA backend where a GPU is present, else on the reference backend (the oracles then run on the
CPU: eager half there is torch's CPU half kernels, not the GPU's).

usage: python3 tests/gpu/half_study.py --model bert_cls --n 20 [--b 1,1] [--s 200,512] [--seed 7]
       [--frontend onnx|torch] [--work DIR] [--symc build/bin/symc] [--lib build/lib/libsymc.so]
"""
import argparse
import copy
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_models as R  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="one of " + ",".join(R.MODELS))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--b", default=None, help="lo,hi (default the model's range)")
    ap.add_argument("--s", default=None, help="lo,hi (default the model's range)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--frontend", default="onnx", choices=("onnx", "torch"),
                    help="torch: the engine symc.compile builds from the module (torch.export; GPU only)")
    ap.add_argument("--work", default="/tmp/half_study")
    ap.add_argument("--symc", default=os.path.join(R.REPO, "build", "bin", "symc"))
    ap.add_argument("--lib", default=os.path.join(R.REPO, "build", "lib", "libsymc.so"))
    a = ap.parse_args()
    import torch
    m = dict(R.MODELS[a.model])
    os.makedirs(a.work, exist_ok=True)
    gpu = torch.cuda.is_available()
    dev = torch.device("cuda" if gpu else "cpu")
    torch.manual_seed(0)
    module = m["build"]().eval()
    if a.frontend == "torch" and not gpu:
        sys.exit("half_study: --frontend torch needs a GPU (symc.compile builds for the CUDA backend)")
    onnx_path = os.path.join(a.work, a.model + ".onnx")
    if a.frontend == "onnx" and not os.path.exists(onnx_path):
        R.export_onnx(torch, module, m, onnx_path)
    engine = os.path.join(a.work, a.model + ".fp16.symx")
    if a.frontend == "onnx" and not os.path.exists(engine):
        a.build_timeout = 600
        R.symc_compile(a, m, onnx_path, engine, "fp16")
    m64 = copy.deepcopy(module).to(dev, torch.float64)
    m16 = copy.deepcopy(module).to(dev, torch.float16)
    run = None
    if a.frontend == "torch":
        os.environ["SYMC_LIB"] = os.path.abspath(a.lib)
        import symc
        run, _ = R.torch_compile(symc, torch, module, m, "fp16")
    elif gpu:
        os.environ["SYMC_LIB"] = os.path.abspath(a.lib)
        sys.path.insert(0, os.path.join(R.REPO, "frontend", "torch"))
        from symc.runtime import EngineModule
        run = EngineModule(engine, [n for n, _, _ in m["inputs"]], lambda outs: outs[0], gpu=True)
    rng = np.random.default_rng(a.seed)
    ranges = dict(m["ranges"])
    for sym, arg in (("B", a.b), ("S", a.s)):
        if arg and sym in ranges:
            lo, hi = map(int, arg.split(","))
            ranges[sym] = (lo, lo, hi)
    rows, a_eh, a_sy = [], [], []
    for i in range(a.n):
        p = {s: int(rng.integers(v[0], v[2] + 1)) for s, v in ranges.items()}
        xs = R.make_inputs(m, p, "pad", rng)
        tx = [torch.from_numpy(x).to(dev) for x in xs]
        with torch.inference_mode():
            ref = m64(*[t.double() if t.is_floating_point() else t for t in tx]).double().cpu()
            eh = m16(*[t.half() if t.is_floating_point() else t for t in tx]).double().cpu()
            if run is not None:
                y = run(*tx).double().cpu()
            else:
                args = []
                for (n, _, _), x in zip(m["inputs"], xs):
                    f = os.path.join(a.work, f"in.{n}.npy")
                    np.save(f, x)
                    args += ["--shapes", f"{n}:{'x'.join(map(str, x.shape))}", "--input", f"{n}={f}"]
                out = os.path.join(a.work, "out.npy")
                subprocess.run([a.symc, "run", engine, "--backend", "ref", "--output", f"y={out}"] + args,
                               check=True, capture_output=True)
                y = torch.from_numpy(np.load(out)).double()
        e_sy, e_eh = R.rel(y, ref), R.rel(eh, ref)
        rows.append((p, float(ref.norm()), e_eh, e_sy))
        a_eh.append(float((eh - ref).norm()))
        a_sy.append(float((y - ref).norm()))
        print(f"{p} |ref| {float(ref.norm()):.3g}: eager half {e_eh:.2e}, symc {e_sy:.2e}, "
              f"ratio {e_sy / max(e_eh, 1e-30):.2f}", flush=True)
    ratios = np.array([r[3] / max(r[2], 1e-30) for r in rows])
    print(f"\n{a.model} --fp16 on {'the GPU' if gpu else 'the reference backend (CPU)'}, {a.n} points: symc / eager "
          f"half error ratio median {np.median(ratios):.2f}, worst {ratios.max():.2f}; past 2x: "
          f"{[rows[i][0] for i in np.flatnonzero(ratios > 2)]}")
    # the two error distributions side by side (a point's ratio is noisy where the output is a few
    # numbers; the distributions say whether the engine is less exact than eager half in general)
    for what, e, s in (("relative", [r[2] for r in rows], [r[3] for r in rows]), ("absolute", a_eh, a_sy)):
        q = lambda v: "median %.2e, p90 %.2e, max %.2e" % (np.median(v), np.percentile(v, 90), np.max(v))
        print(f"{what} error: eager half {q(e)}; symc {q(s)}")


if __name__ == "__main__":
    main()
