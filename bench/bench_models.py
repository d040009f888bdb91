#!/usr/bin/env python3
"""Real models (ResNet-50, ConvNeXt-T, ViT-S, BERT-base, GPT-2): symc against eager
PyTorch and torch.compile in one process, same precision on both sides.

Per model (random weights, nothing downloaded; torchvision, timm and transformers
configs):
  1. the fp32 torch module is exported to ONNX with the legacy exporter
     (dynamo=False, opset 17) with its dynamic axes as dim_param, and compiled ONCE
     by `symc compile` for the model's ranges (min/opt/max below); precision
     fp16/bf16 adds --fp16/--bf16 (half storage decided by symc's precision pass),
     or, with --half-via onnx, the ONNX model itself is converted to f16 storage as
     model.half() would export it (tests/gpu/half_models.py) and compiled as it is;
  2. correctness at the first and last point: `symc run --backend cuda` on seeded
     inputs against the fp32 eager module in float64 on the GPU,
     ||out - ref|| / ||ref|| < 1e-4 for fp32, < 1e-2 for fp16, < 2e-2 for bf16;
  3. symc timing: `symc bench ENGINE --point ... --graphs --json` (one process for
     every point; CUDA events around each enqueue, median);
  4. peers on the same points: eager (the module in the precision's dtype) and
     torch.compile (default mode, dynamic=True, compiled once at the first point;
     --no-compile skips it), CUDA events per call, median of --iters after --warmup.
Output: one markdown table (ms per point, peer / symc ratios, geomeans) printed last
and written to OUT/models.md, every number in OUT/models.json.

usage (device, repo root, build/bin and build/lib carried):
  python3 bench/bench_models.py --out $OUT --precision fp16            # all models
  python3 bench/bench_models.py --out $OUT --precision fp32 --models resnet50,bert
options: --symc PATH --iters 50 --warmup 10 --no-compile --half-via pass|onnx --work DIR --profile
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "tests", "gpu"))
import bench_seed as seed  # noqa: E402

TOL = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 2e-2}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- models --
# Each: build() -> fp32 eval module taking the inputs in order and returning one
# tensor; inputs: [(name, dims, kind)], dims a symbol name or an int, kind
# "float" or "ids"; ranges: symbol -> (min, opt, max); points: [{symbol: value}].

def _hidden(model, mask=False):
    """a transformers model as a module: input_ids -> last_hidden_state; mask: an all-ones
    attention mask made inside (GPT-2 without one looks for packed sequences with
    aten::diff, which no ONNX exporter lowers)"""
    import torch

    class Hidden(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, ids):
            am = torch.ones_like(ids) if mask else None
            return self.m(input_ids=ids, attention_mask=am).last_hidden_state

    return Hidden()


def _resnet50():
    import torchvision
    return torchvision.models.resnet50(weights=None)


def _convnext_t():
    import torchvision
    return torchvision.models.convnext_tiny(weights=None)


def _vit_s():
    import timm
    try:
        timm.layers.set_fused_attn(False)  # the plain matmul/softmax attention exports everywhere
    except Exception:
        pass
    return timm.create_model("vit_small_patch16_224", pretrained=False)


def _bert():
    from transformers import BertConfig, BertModel
    return _hidden(BertModel(BertConfig(attn_implementation="eager"), add_pooling_layer=False))


def _gpt2():
    from transformers import GPT2Config, GPT2Model
    return _hidden(GPT2Model(GPT2Config(use_cache=False, attn_implementation="eager")), mask=True)


IMG = [("x", ["B", 3, 224, 224], "float")]
MODELS = {
    "resnet50": dict(build=_resnet50, inputs=IMG, ranges={"B": (1, 8, 32)},
                     points=[{"B": 1}, {"B": 8}, {"B": 32}]),
    "convnext_t": dict(build=_convnext_t, inputs=IMG, ranges={"B": (1, 8, 32)},
                       points=[{"B": 1}, {"B": 8}, {"B": 32}]),
    "vit_s": dict(build=_vit_s, inputs=IMG, ranges={"B": (1, 8, 32)},
                  points=[{"B": 1}, {"B": 8}, {"B": 32}]),
    "bert": dict(build=_bert, inputs=[("ids", ["B", "S"], "ids")], ranges={"B": (1, 8, 32), "S": (16, 128, 512)},
                 points=[{"B": 1, "S": 128}, {"B": 8, "S": 128}, {"B": 32, "S": 512}]),
    "gpt2": dict(build=_gpt2, inputs=[("ids", ["B", "S"], "ids")], ranges={"B": (1, 8, 32), "S": (16, 128, 512)},
                 points=[{"B": 1, "S": 128}, {"B": 8, "S": 128}, {"B": 8, "S": 512}]),
}


def spec_of(m):
    return {"inputs": [(n, d) for n, d, _ in m["inputs"]], "ranges": m["ranges"]}


def np_inputs(m, point, rs):
    out = []
    for _, dims, kind in m["inputs"]:
        shape = seed.dims_at(dims, point)
        out.append(rs.integers(0, 4, shape).astype(np.int64) if kind == "ids"
                   else rs.uniform(-1, 1, shape).astype(np.float32))
    return out


def export(torch, module, m, path):
    args = tuple(torch.from_numpy(x) for x in np_inputs(m, m["points"][0], np.random.default_rng(0)))
    axes = {n: {i: d for i, d in enumerate(dims) if isinstance(d, str)} for n, dims, _ in m["inputs"]}
    axes["y"] = {}
    torch.onnx.export(module, args, path, dynamo=False, opset_version=17, input_names=[n for n, _, _ in m["inputs"]],
                      output_names=["y"], dynamic_axes=axes)


# ----------------------------------------------------------------- steps --

def symc_build(a, name, m, onnx_path):
    src, flags = onnx_path, []
    if a.precision in ("fp16", "bf16"):
        if a.half_via == "onnx":
            import onnx
            from half_models import to_half
            elem = onnx.TensorProto.FLOAT16 if a.precision == "fp16" else onnx.TensorProto.BFLOAT16
            src = to_half(onnx_path, onnx_path.replace(".onnx", f".{a.precision}.onnx"), elem)
        else:
            flags = ["--" + a.precision]
    engine = os.path.join(a.work, f"{name}.{a.precision}.symx")
    rc, out, err, secs = seed.run([a.symc, "compile", src, "-o", engine] + seed.compile_shapes(spec_of(m)) + flags,
                                  1200)
    if rc:
        raise RuntimeError(f"symc compile: {seed.last_line(err or out)}")
    return engine, secs, src


def npy_dtype(a):
    return np.float16 if a.precision == "fp16" and a.half_via == "onnx" else None


def symc_check(a, torch, module, m, engine, point):
    xs = np_inputs(m, point, np.random.default_rng(7))
    args = []
    for (n, _, kind), x in zip(m["inputs"], xs):
        f = os.path.join(a.work, f"in_{n}.npy")
        dt = npy_dtype(a)
        np.save(f, x.astype(dt) if dt is not None and kind == "float" else x)
        args += ["--input", f"{n}={f}"]
    fo = os.path.join(a.work, "out_y.npy")
    rc, out, err, _ = seed.run([a.symc, "run", engine, "--backend", "cuda"] + args + ["--output", f"y={fo}"], 600)
    if rc:
        return float("nan"), seed.last_line(err or out)
    with torch.inference_mode():
        ref = module.double()(*[torch.from_numpy(x).cuda() if x.dtype == np.int64 else
                                torch.from_numpy(x).double().cuda() for x in xs])
        module.float()
    return seed.rel_err(np.load(fo).astype(np.float64), ref.cpu().numpy())


def symc_time(a, m, engine):
    bjson = os.path.join(a.work, "bench.json")
    cmd = [a.symc, "bench", engine, "--json", bjson, "--backend", "cuda", "--graphs", "--iters", str(a.iters),
           "--warmup", str(a.warmup)]
    for p in m["points"]:
        cmd += ["--point", seed.point_arg(spec_of(m), p)]
    if a.profile:
        cmd += ["--profile"]
    rc, out, err, _ = seed.run(cmd, 1200)
    if rc:
        raise RuntimeError(f"symc bench: {seed.last_line(err or out)}")
    if a.profile:
        with open(os.path.join(a.out, os.path.basename(engine).replace(".symx", f".{a.half_via}.profile.txt")), "w") as f:
            f.write(out)
    return [p["p50_ms"] for p in json.load(open(bjson))["points"]]


def peer_sets(torch, m, point, dtype):
    sets = []
    for i in range(2):
        xs = np_inputs(m, point, np.random.default_rng(500 + i))
        sets.append([torch.from_numpy(x).cuda() if x.dtype == np.int64 else torch.from_numpy(x).cuda().to(dtype)
                     for x in xs])
    return sets


def bench_model(a, torch, name, m):
    row = {"model": name, "points": [seed.point_label(spec_of(m), p) for p in m["points"]]}
    torch.manual_seed(0)
    module = m["build"]().eval().cuda()
    onnx_path = os.path.join(a.work, f"{name}.onnx")
    t0 = time.perf_counter()
    export(torch, module.cpu(), m, onnx_path)
    module.cuda()
    row["export_s"] = time.perf_counter() - t0
    log(f"{name}: exported in {row['export_s']:.1f} s")
    try:
        engine, row["build_s"], _ = symc_build(a, name, m, onnx_path)
        log(f"{name}: symc compile {row['build_s']:.1f} s")
        row["check"] = []
        for p in (m["points"][0], m["points"][-1]):
            err, why = symc_check(a, torch, module, m, engine, p)
            ok = math.isfinite(err) and err < TOL[a.precision]
            row["check"].append({"point": seed.point_label(spec_of(m), p), "rel_err": err, "ok": ok, "why": why})
            log(f"{name}: check {seed.point_label(spec_of(m), p)}: rel err {err:.2e} {'PASS' if ok else 'FAIL ' + why}")
        row["symc"] = symc_time(a, m, engine)
        log(f"{name}: symc {row['symc']}")
    except RuntimeError as e:
        row["symc_error"] = str(e)[:400]
        log(f"{name}: {row['symc_error']}")
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.precision]
    peer = module.to(dtype)
    timer = seed.TorchTimer(torch)
    row["eager"] = [timer.time(peer, peer_sets(torch, m, p, dtype), a.iters, a.warmup)["p50_ms"] for p in m["points"]]
    log(f"{name}: eager {row['eager']}")
    if a.compile:
        try:
            t0 = time.perf_counter()
            fn = torch.compile(peer, dynamic=True)
            with torch.inference_mode():
                fn(*peer_sets(torch, m, m["points"][0], dtype)[0])
            row["compile_s"] = time.perf_counter() - t0
            row["compile_dyn"] = [timer.time(fn, peer_sets(torch, m, p, dtype), a.iters, a.warmup)["p50_ms"]
                                  for p in m["points"]]
            log(f"{name}: torch.compile {row['compile_dyn']}")
        except Exception as e:  # recorded, the run goes on
            row["compile_error"] = f"{type(e).__name__}: {str(e)[:300]}"
    del module, peer
    torch.cuda.empty_cache()
    return row


def table(rows, a):
    peers = ["eager"] + (["compile_dyn"] if a.compile else [])
    lines = [f"precision {a.precision}" + (f" (half storage via {a.half_via})" if a.precision != "fp32" else ""),
             "", "| model | point | symc ms | eager ms | eager / symc |" +
             (" compile ms | compile / symc |" if a.compile else ""),
             "|---|---|---|---|---|" + ("---|---|" if a.compile else "")]
    ratios = {p: [] for p in peers}
    for r in rows:
        for i, pt in enumerate(r["points"]):
            s = (r.get("symc") or [None] * len(r["points"]))[i]
            cells = [r["model"], pt, seed.fmt(s, 3) if s else r.get("symc_error", "-")[:60]]
            for p in peers:
                v = (r.get(p) or [None] * len(r["points"]))[i]
                cells.append(seed.fmt(v, 3) if v else r.get("compile_error", "-")[:40])
                if s and v:
                    ratios[p].append(v / s)
                    cells.append(f"{v / s:.2f}")
                else:
                    cells.append("-")
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for p in peers:
        lines.append(f"geomean {p} / symc: {seed.geomean(ratios[p]):.2f} over {len(ratios[p])} points; "
                     f"points where symc is slower: {sum(1 for x in ratios[p] if x < 1)}")
    fails = [f"{r['model']} {c['point']}: {c['rel_err']:.2e} {c['why']}" for r in rows for c in r.get("check", [])
             if not c["ok"]]
    lines.append("correctness: " + ("all checks pass" if not fails else "FAIL " + "; ".join(fails)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--symc", default="build/bin/symc")
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="all", help="comma list of " + ",".join(MODELS) + " or all")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "bf16"])
    ap.add_argument("--half-via", default="pass", choices=["pass", "onnx"])
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--no-compile", dest="compile", action="store_false")
    ap.add_argument("--profile", action="store_true",
                    help="also write symc bench --profile's per-step table to OUT/MODEL.PRECISION.profile.txt")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if a.precision != "fp32":  # fp32 accumulation on the peers too
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    os.makedirs(a.out, exist_ok=True)
    a.work = a.work or tempfile.mkdtemp(prefix="symc-models-")
    names = list(MODELS) if a.models == "all" else a.models.split(",")
    rows = []
    for n in names:
        if n not in MODELS:
            sys.exit(f"unknown model '{n}' (models: {', '.join(MODELS)})")
        rows.append(bench_model(a, torch, n, MODELS[n]))
        json.dump({"precision": a.precision, "half_via": a.half_via, "gpu": torch.cuda.get_device_name(),
                   "torch": torch.__version__, "rows": rows}, open(os.path.join(a.out, "models.json"), "w"), indent=1)
    t = table(rows, a)
    open(os.path.join(a.out, "models.md"), "w").write(t + "\n")
    print(t)


if __name__ == "__main__":
    main()
