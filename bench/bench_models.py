#!/usr/bin/env python3
"""Real models (ResNet-50, ConvNeXt-T, EfficientNet-B0, MobileNetV3-Large, ViT-S,
BERT-base, GPT-2; by name also Swin-T, a Llama config, T5's encoder): symc against eager PyTorch and torch.compile in one process, same
precision on both sides, at min, opt, max and off-opt points of each model's range;
optionally against symc's own static build for each exact shape (the static oracle),
with host times per enqueue and build times cold and from the cache.

Per model (random weights, nothing downloaded; torchvision, timm and transformers
configs; EfficientNet's and MobileNet's BatchNorm statistics from one seeded batch, as
their random-init ones shrink the activations to zero in fp16: _bn_calibrated):
  1. the fp32 torch module is exported to ONNX with the legacy exporter
     (dynamo=False, opset 17, traced at opt) with its dynamic axes as dim_param (an
     export already in --work is reused when its inputs and weights are the same), and
     compiled ONCE by `symc compile` for the model's ranges (min/opt/max below) with
     SYMC_CACHE_DIR a fresh folder under --work (a cold build; --cache-build compiles it
     a second time into a new file from that cache: the warm build); precision fp16/bf16
     adds --fp16/--bf16 (half storage decided by symc's precision pass), or, with
     --half-via onnx, the ONNX model itself is converted to f16 storage as model.half()
     would export it (tests/gpu/half_models.py) and compiled as it is;
  2. correctness at the --check points (default min, max and the first off-opt point):
     `symc run --backend cuda` on seeded inputs against the fp32 eager module in
     float64 on the GPU, ||out - ref|| / ||ref|| < 1e-4 for fp32, < 1e-2 for fp16,
     < 2e-2 for bf16, with the module's own error in the precision's dtype on the same
     inputs next to it;
  3. symc timing: `symc bench ENGINE --point ... --graphs --json` (one process for every
     point, on the bench's own stream; CUDA events around each enqueue, median; per
     point also host_us, the median host time of one symrt_enqueue (each called with at
     most one run in flight, so a full launch queue does not make it wait), first_us, the first
     enqueue at the new shape, shape_us, setting the shapes and evaluating them, and the
     CUDA-graph counters); if that process fails, each point runs alone, so one bad
     point costs only itself; --host adds a pass on the legacy default stream
     (`--stream default`, --host-iters) for its host times;
  4. peers on the same points: eager (the module in the precision's dtype) and
     torch.compile (default mode, dynamic=True, compiled once at opt; the first call at
     every other point, recompiles included, is recorded; --no-compile skips it), CUDA
     events per call, median of --iters after --warmup;
  5. --static: the static oracle, per --static-points point a `symc compile` for
     exactly that shape (min = opt = max, the same cache folder) timed by `symc bench`
     with the same settings; dyn / static = symc's dynamic engine over the static one.
Points per model: min, opt and max of every symbol together, and off-opt points at odd
sizes (CNNs B=5 and 13; with --dynamic-hw 5x3x161x317 and 13x3x289x145; ViT-S B=5 and 13;
BERT, GPT-2, Llama and T5 3x77 and 13x300). gpt2_6l (named with --models, not in "all"): GPT-2 with 6 layers
at B 1..8, S 16..1024, opt 8x1024 (issue 34's long-sequence point), off 4x700 and 8x333.
swin_t (named with --models, not in "all"): torchvision's Swin-T at 224x224, B 1..32, off B=5 and 13.
llama and t5_encoder (named with --models, not in "all"): a Llama config (8 layers, hidden 1024,
GQA 8/2 heads of 128, SwiGLU, an all-ones attention mask made inside as GPT-2's) and t5-small's
encoder, at B 1..32, S 16..512 as BERT.
--dynamic-hw makes H and W of the CNNs symbols too (128/224/320).
Output: markdown tables (per point: symc ms, eager ms, compile ms, best peer / symc,
static ms and dyn / static, host us; host and build tables, the build table with each
engine's fp32 islands by reason from `symc inspect`; summary lines against the
targets) printed last and written to OUT/models.md, every number in OUT/models.json;
both are rewritten after every step, so a run cut short leaves what it measured.
One model's failure is recorded and the run goes on; --budget-s stops starting new
models (and static builds) when the time runs out.

usage (device, repo root, build/bin and build/lib carried):
  python3 bench/bench_models.py --out $OUT --precision fp16            # all models
  python3 bench/bench_models.py --out $OUT --precision fp32 --models resnet50,bert
  python3 bench/bench_models.py --out $OUT --precision fp16 --half-via onnx --dynamic-hw --static \\
      --static-points off --host --cache-build --budget-s 450 --iters 30 --warmup 5 \\
      --work build/models-work --models resnet50,convnext_t,efficientnet_b0
      (the full-range run of docs/BENCHMARKS-SUITE.md: three models a 10-minute call)
  python3 bench/bench_models.py --out /tmp/o --dry-run --dynamic-hw --models efficientnet_b0,bert
      (no GPU: exports, compiles with heuristics, checks the min and a small odd point on
      the reference backend against the fp32 module on the CPU, prints the planned
      commands and points)
  python3 bench/bench_models.py --out $OUT --table-from A/models.json B/models.json
      (one table from the rows of several runs, e.g. of one suite split over calls)
options: --symc PATH --iters 50 --warmup 10 --no-compile --half-via pass|onnx --work DIR
  --profile --models LIST|all --points all|min,opt,max,off[N] --check all|none|TAGS
  --dynamic-hw --static --static-points all|TAGS --host --host-iters 50 --cache-build
  --budget-s S --dry-run --table-from FILE... --bench-backend cuda|ref (ref: to test this
  script without a GPU)
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "tests", "gpu"))
import bench_seed as seed  # noqa: E402

TOL = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 2e-2}
# per point, what `symc bench --json` reports that the tables use (keys a symc build
# does not write are left out)
BENCH_KEYS = ("p50_ms", "p90_ms", "min_ms", "host_us", "host_p90_us", "first_us", "shape_us", "graph_replays",
              "graph_captures", "graph_updates", "graph_plain", "graph_failed", "sets", "nan_out")
HOST_KNOWN_US, HOST_NEW_US = 15.0, 50.0  # the targets: per enqueue at a known shape, at a new shape


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- models --
# Each: build() -> fp32 eval module taking the inputs in order and returning one
# tensor; inputs: [(name, dims, kind)], dims a symbol name or an int, kind
# "float" or "ids"; ranges: symbol -> (min, opt, max); off: the off-opt points
# [{symbol: value}]; cnn: images whose H and W --dynamic-hw makes symbols.

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


def _bn_calibrated(model):
    """model with every BatchNorm's running statistics taken from one seeded batch.
    Random-init statistics (mean 0, var 1) leave EfficientNet's and MobileNet's
    activations to shrink some 50x a stage (logits near 1e-14, zero in fp16); set from a
    batch (train mode, cumulative average, dropout and stochastic depth off), every
    BatchNorm normalizes its input as a trained model's does (activations O(1) to the
    logits, at 128 to 320 pixels alike)"""
    import torch
    import torchvision
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    for m in model.modules():
        if isinstance(m, (torch.nn.Dropout, torchvision.ops.StochasticDepth)):
            m.eval()
    with torch.no_grad():
        model(torch.rand(8, 3, 224, 224, generator=torch.Generator().manual_seed(1)) * 2 - 1)
    for m in bns:
        m.momentum = 0.1
    return model.eval()


def _efficientnet_b0():
    import torchvision
    return _bn_calibrated(torchvision.models.efficientnet_b0(weights=None))


def _mobilenet_v3_large():
    import torchvision
    return _bn_calibrated(torchvision.models.mobilenet_v3_large(weights=None))


def _vit_s():
    import timm
    try:
        timm.layers.set_fused_attn(False)  # the plain matmul/softmax attention exports everywhere
    except Exception:
        pass
    return timm.create_model("vit_small_patch16_224", pretrained=False)


def _swin_t():
    import torchvision
    return torchvision.models.swin_t(weights=None)


def _bert():
    from transformers import BertConfig, BertModel
    return _hidden(BertModel(BertConfig(attn_implementation="eager"), add_pooling_layer=False))


def _gpt2():
    from transformers import GPT2Config, GPT2Model
    return _hidden(GPT2Model(GPT2Config(use_cache=False, attn_implementation="eager")), mask=True)


def _gpt2_6l():
    from transformers import GPT2Config, GPT2Model
    return _hidden(GPT2Model(GPT2Config(n_layer=6, use_cache=False, attn_implementation="eager")), mask=True)


def _llama():
    """a Llama config: 8 layers, hidden 1024, 8 heads of 128 over 2 key/value heads (grouped-query
    attention, the head dim of Llama 2/3), SwiGLU 2816, rotary positions, causal"""
    from transformers import LlamaConfig, LlamaModel
    return _hidden(LlamaModel(LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=8,
                                          num_attention_heads=8, num_key_value_heads=2, head_dim=128,
                                          vocab_size=32000, max_position_embeddings=2048, use_cache=False,
                                          attn_implementation="eager")), mask=True)


def _t5_encoder():
    """t5-small's encoder (6 layers, d_model 512, 8 heads of 64, relative position buckets)"""
    from transformers import T5Config, T5EncoderModel
    return _hidden(T5EncoderModel(T5Config(use_cache=False, attn_implementation="eager")))


B_RANGE = (1, 8, 32)
HW_RANGE = (128, 224, 320)
IMG = [("x", ["B", 3, 224, 224], "float")]
IDS = [("ids", ["B", "S"], "ids")]
TEXT = dict(inputs=IDS, ranges={"B": B_RANGE, "S": (16, 128, 512)}, off=[{"B": 3, "S": 77}, {"B": 13, "S": 300}])
# the CNNs' inputs, ranges and off-opt points without and with --dynamic-hw
CNN = dict(inputs=IMG, ranges={"B": B_RANGE}, off=[{"B": 5}, {"B": 13}])
CNN_HW = dict(inputs=[("x", ["B", 3, "H", "W"], "float")], ranges={"B": B_RANGE, "H": HW_RANGE, "W": HW_RANGE},
              off=[{"B": 5, "H": 161, "W": 317}, {"B": 13, "H": 289, "W": 145}])
MODELS = {
    "resnet50": dict(build=_resnet50, cnn=True),
    "convnext_t": dict(build=_convnext_t, cnn=True),
    "efficientnet_b0": dict(build=_efficientnet_b0, cnn=True),
    "mobilenet_v3_large": dict(build=_mobilenet_v3_large, cnn=True),
    "vit_s": dict(build=_vit_s, inputs=IMG, ranges={"B": B_RANGE}, off=[{"B": 5}, {"B": 13}]),
    # torchvision's Swin-T (windows of 7, shifted; not in "all": named with --models)
    "swin_t": dict(build=_swin_t, extra=True, inputs=IMG, ranges={"B": B_RANGE}, off=[{"B": 5}, {"B": 13}]),
    "bert": dict(build=_bert, **TEXT),
    "gpt2": dict(build=_gpt2, **TEXT),
    # a Llama config and t5-small's encoder (not in "all": named with --models)
    "llama": dict(build=_llama, extra=True, **TEXT),
    "t5_encoder": dict(build=_t5_encoder, extra=True, **TEXT),
    # issue 34's long-sequence point: 6 layers at 8x1024 (opt), where attention is most of the time
    # (not in "all": named with --models)
    "gpt2_6l": dict(build=_gpt2_6l, extra=True, inputs=IDS, ranges={"B": (1, 8, 8), "S": (16, 1024, 1024)},
                    off=[{"B": 4, "S": 700}, {"B": 8, "S": 333}]),
}
LEVELS = ("min", "opt", "max")


def selected(sel, tag):
    """sel: "all", "none" or a list of tags; "off" stands for every off-opt point"""
    if sel in ("all", "none"):
        return sel == "all"
    return tag in sel or ("off" in sel and tag.startswith("off"))


def model_spec(name, a):
    """MODELS[name] with its inputs, ranges and points for these options: all_points
    [(tag, point)] for tags min, opt, max, off1, off2, ...; points and tags the ones
    --points selects"""
    m = dict(MODELS[name])
    if m.get("cnn"):
        m.update(CNN_HW if a.dynamic_hw else CNN)
    r = m["ranges"]
    m["all_points"] = [(t, {s: v[i] for s, v in r.items()}) for i, t in enumerate(LEVELS)]
    m["all_points"] += [(f"off{i + 1}", p) for i, p in enumerate(m["off"])]
    m["opt"] = {s: v[1] for s, v in r.items()}
    chosen = [(t, p) for t, p in m["all_points"] if selected(a.points, t)]
    m["tags"] = [t for t, _ in chosen]
    m["points"] = [p for _, p in chosen]
    return m


def spec_of(m):
    return {"inputs": [(n, d) for n, d, _ in m["inputs"]], "ranges": m["ranges"]}


def static_spec(m, point):
    """the spec of a build for exactly this point (min = opt = max)"""
    return {"inputs": [(n, d) for n, d, _ in m["inputs"]], "ranges": {s: (v, v, v) for s, v in point.items()}}


def label(m, tag, point):
    return f"{seed.point_label(spec_of(m), point)} ({tag})"


def np_inputs(m, point, rs):
    out = []
    for _, dims, kind in m["inputs"]:
        shape = seed.dims_at(dims, point)
        out.append(rs.integers(0, 4, shape).astype(np.int64) if kind == "ids"
                   else rs.uniform(-1, 1, shape).astype(np.float32))
    return out


def export_key(torch, module, m):
    """what an export depends on: the inputs, the trace point and the weights (the sum of
    every float tensor), so an export in --work is reused only for the same module"""
    with torch.no_grad():
        w = sum(float(t.double().sum()) for t in module.state_dict().values() if t.is_floating_point())
    return json.dumps({"inputs": m["inputs"], "opt": m["opt"], "weights": f"{w:.17g}", "torch": torch.__version__})


def export(torch, module, m, path):
    """traced at opt; written under a temporary name first, so a run cut short never
    leaves a partial file that a later run would reuse"""
    args = tuple(torch.from_numpy(x) for x in np_inputs(m, m["opt"], np.random.default_rng(0)))
    axes = {n: {i: d for i, d in enumerate(dims) if isinstance(d, str)} for n, dims, _ in m["inputs"]}
    axes["y"] = {}
    tmp = path + ".part"
    torch.onnx.export(module, args, tmp, dynamo=False, opset_version=17, input_names=[n for n, _, _ in m["inputs"]],
                      output_names=["y"], dynamic_axes=axes)
    os.replace(tmp, path)


# ----------------------------------------------------------------- steps --

def cmd_text(cmd, env=None):
    return " ".join(([f"{k}={v}" for k, v in env.items()] if env else []) + list(cmd))


def step(a, row, cmd, timeout, env=None):
    """runs one symc command, noting it in the row (and printing it in a dry run)"""
    row.setdefault("commands", []).append(cmd_text(cmd, env))
    if a.dry_run:
        log("  $ " + cmd_text(cmd, env))
    return seed.run(cmd, a.timeout(timeout), dict(os.environ, **env) if env else None)


def symc_source(a, onnx_path):
    """the ONNX file symc compiles and the precision flags of its builds"""
    if a.precision in ("fp16", "bf16"):
        if a.half_via == "onnx":
            import onnx
            from half_models import to_half
            elem = onnx.TensorProto.FLOAT16 if a.precision == "fp16" else onnx.TensorProto.BFLOAT16
            return to_half(onnx_path, onnx_path.replace(".onnx", f".{a.precision}.onnx"), elem), []
        return onnx_path, ["--" + a.precision]
    return onnx_path, []


def symc_compile(a, row, src, flags, spec, engine, cache):
    """one build with SYMC_CACHE_DIR=cache; returns its wall seconds"""
    cmd = [a.symc, "compile", src, "-o", engine] + seed.compile_shapes(spec) + flags
    rc, out, err, secs = step(a, row, cmd, 1200, {"SYMC_CACHE_DIR": cache})
    if rc:
        raise RuntimeError(f"symc compile: {seed.last_line(err or out)}")
    return secs


def npy_dtype(a):
    return np.float16 if a.precision == "fp16" and a.half_via == "onnx" else None


def symc_check(a, row, torch, module, m, engine, point, backend, device):
    """symc run on backend against the fp32 module in float64 on device; returns (rel err,
    why it failed, the rel err of the module itself in the precision's dtype on the same
    inputs, which says how much of a half-precision error is the model's own)"""
    xs = np_inputs(m, point, np.random.default_rng(7))
    args = []
    for (n, _, kind), x in zip(m["inputs"], xs):
        f = os.path.join(a.work, f"in_{n}.npy")
        dt = npy_dtype(a)
        np.save(f, x.astype(dt) if dt is not None and kind == "float" else x)
        args += ["--input", f"{n}={f}"]
    fo = os.path.join(a.work, "out_y.npy")
    if os.path.exists(fo):
        os.remove(fo)
    rc, out, err, _ = step(a, row, [a.symc, "run", engine, "--backend", backend] + args + ["--output", f"y={fo}"], 600)
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.precision]
    with torch.inference_mode():
        ref = module.double()(*[torch.from_numpy(x).to(device) if x.dtype == np.int64 else
                                torch.from_numpy(x).double().to(device) for x in xs]).cpu().numpy()
        try:
            own = module.to(dtype)(*[torch.from_numpy(x).to(device) if x.dtype == np.int64 else
                                     torch.from_numpy(x).to(device).to(dtype) for x in xs]).double().cpu().numpy()
            peer_err = seed.rel_err(own, ref)[0]
        except Exception:  # the CPU lacks some half kernels: the dry run goes on without
            peer_err = None
        module.float()
    if rc:
        return float("nan"), seed.last_line(err or out), peer_err
    return seed.rel_err(np.load(fo).astype(np.float64), ref) + (peer_err,)


def symc_bench(a, row, m, engine, points, extra, iters, warmup, what):
    """`symc bench` at points in one process: per point a dict of BENCH_KEYS, or
    {"error": ...}; when that process fails, every point alone (one bad point costs only
    itself); returns (results, stdout of the last run)"""
    bjson = os.path.join(a.work, f"bench.{what}.json")

    def once(pts):
        if os.path.exists(bjson):
            os.remove(bjson)
        cmd = [a.symc, "bench", engine, "--json", bjson, "--backend", a.bench_backend, "--graphs", "--iters",
               str(iters), "--warmup", str(warmup)] + extra
        for p in pts:
            cmd += ["--point", seed.point_arg(spec_of(m), p)]
        rc, out, err, _ = step(a, row, cmd, 1200)
        if rc:
            return None, seed.last_line(err or out), out
        got = json.load(open(bjson))["points"]
        return [{k: q[k] for k in BENCH_KEYS if k in q} for q in got], "", out

    res, why, out = once(points)
    if res is not None:
        return res, out
    log(f"{row['model']}: symc bench ({what}) failed: {why}")
    if len(points) == 1:
        return [{"error": why}], out
    res = []
    for p in points:
        r, why, out = once([p])
        res.append(r[0] if r else {"error": why})
    return res, out


def peer_sets(torch, m, point, dtype):
    sets = []
    for i in range(2):
        xs = np_inputs(m, point, np.random.default_rng(500 + i))
        sets.append([torch.from_numpy(x).cuda() if x.dtype == np.int64 else torch.from_numpy(x).cuda().to(dtype)
                     for x in xs])
    return sets


def dynamo_graphs(torch):
    """graphs dynamo compiled so far (None where this torch keeps no such counter)"""
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:
        return None


def time_peers(a, torch, row, m, module, save):
    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[a.precision]
    peer = module.to(dtype)
    timer = seed.TorchTimer(torch)
    row["eager"] = []
    for lab, p in zip(row["points"], m["points"]):
        try:
            row["eager"].append(timer.time(peer, peer_sets(torch, m, p, dtype), a.iters, a.warmup)["p50_ms"])
        except Exception as e:  # recorded, the run goes on
            row["eager"].append(None)
            row.setdefault("errors", []).append(f"eager at {lab}: {type(e).__name__}: {str(e)[:200]}")
    log(f"{row['model']}: eager {row['eager']}")
    save()
    if not a.compile:
        return
    if a.left() <= 0:
        row["compile_error"] = "not run, --budget-s spent"
        return
    row["compile_dyn"], row["compile_first_ms"] = [], []
    try:
        torch._dynamo.reset()  # no guards or cache entries of the model before
        g0 = dynamo_graphs(torch)
        t0 = time.perf_counter()
        fn = torch.compile(peer, dynamic=True)
        with torch.inference_mode():  # compiled first at opt, the size symc tunes for
            fn(*peer_sets(torch, m, m["opt"], dtype)[0])
        torch.cuda.synchronize()
        row["compile_s"] = time.perf_counter() - t0
    except Exception as e:
        row["compile_error"] = f"{type(e).__name__}: {str(e)[:300]}"
        return
    for lab, p in zip(row["points"], m["points"]):
        if a.left() <= 0:
            row["compile_dyn"].append(None)
            row["compile_first_ms"].append(None)
            row.setdefault("errors", []).append(f"torch.compile at {lab}: not run, --budget-s spent")
            continue
        try:
            sets = peer_sets(torch, m, p, dtype)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            with torch.inference_mode():  # the first call at this point: a recompile when guards fail
                fn(*sets[0])
            torch.cuda.synchronize()
            row["compile_first_ms"].append((time.perf_counter() - t0) * 1e3)
            row["compile_dyn"].append(timer.time(fn, sets, a.iters, a.warmup)["p50_ms"])
        except Exception as e:
            row["compile_dyn"].append(None)
            row["compile_first_ms"].append(None)
            row.setdefault("errors", []).append(f"torch.compile at {lab}: {type(e).__name__}: {str(e)[:200]}")
        save()
    g1 = dynamo_graphs(torch)
    row["compile_graphs"] = None if g0 is None or g1 is None else g1 - g0
    log(f"{row['model']}: torch.compile {row['compile_dyn']} (first calls ms {row['compile_first_ms']}, "
        f"graphs {row['compile_graphs']})")


def static_oracle(a, row, name, m, src, flags, cache, save):
    """per --static-points point: a build for exactly that shape, timed as the dynamic
    engine was; skipped when the time left is below the dynamic build's time"""
    n = len(m["points"])
    row["static"], row["static_build_s"], row["static_detail"] = [None] * n, [None] * n, [None] * n
    for i, (tag, p) in enumerate(zip(m["tags"], m["points"])):
        if not selected(a.static_points, tag):
            continue
        lab = row["points"][i]
        if a.left() < row.get("build_s", 0) + 5:
            row.setdefault("errors", []).append(f"static build at {lab}: not started, --budget-s left "
                                                f"{max(0, a.left()):.0f} s")
            continue
        engine = os.path.join(a.work, f"{name}.{a.precision}.static.{tag}.symx")
        try:
            row["static_build_s"][i] = symc_compile(a, row, src, flags, static_spec(m, p), engine, cache)
            if a.dry_run:
                log(f"{name}: static build at {lab} {row['static_build_s'][i]:.1f} s (the other static builds "
                    f"and benches are planned only)")
                plan_static(a, row, m, src, flags, cache, i + 1)
                return
            res, _ = symc_bench(a, row, m, engine, [p], [], a.iters, a.warmup, f"{name}.static")
            row["static_detail"][i] = res[0]
            row["static"][i] = res[0].get("p50_ms")
            if res[0].get("error"):
                row.setdefault("errors", []).append(f"static bench at {lab}: {res[0]['error']}")
            log(f"{name}: static {lab}: build {row['static_build_s'][i]:.1f} s, {row['static'][i]} ms "
                f"(dynamic {(row.get('symc') or [None] * n)[i]} ms)")
        except RuntimeError as e:
            row.setdefault("errors", []).append(f"static at {lab}: {str(e)[:300]}")
        finally:
            if os.path.exists(engine):
                os.remove(engine)  # static engines are large and used once
        save()


def plan_static(a, row, m, src, flags, cache, start):
    """a dry run's remaining static builds and benches, listed without running them"""
    for tag, p in list(zip(m["tags"], m["points"]))[start:]:
        if selected(a.static_points, tag):
            eng = os.path.join(a.work, f"{row['model']}.{a.precision}.static.{tag}.symx")
            plan(a, row, [a.symc, "compile", src, "-o", eng] + seed.compile_shapes(static_spec(m, p)) + flags,
                 {"SYMC_CACHE_DIR": cache})
            plan(a, row, [a.symc, "bench", eng, "--json", "...", "--backend", "cuda", "--graphs", "--iters",
                          str(a.iters), "--warmup", str(a.warmup), "--point", seed.point_arg(spec_of(m), p)])


def plan(a, row, cmd, env=None):
    row.setdefault("planned", []).append(cmd_text(cmd, env))
    log("  (planned) $ " + cmd_text(cmd, env))


def bench_model(a, torch, name, m, row, save):
    """fills row step by step, calling save() after each"""
    row.update({"points": [label(m, t, p) for t, p in zip(m["tags"], m["points"])], "tags": m["tags"],
                "ranges": {s: list(r) for s, r in m["ranges"].items()}})
    device = "cpu" if a.dry_run else "cuda"
    torch.manual_seed(0)
    module = m["build"]().eval()
    onnx_path = os.path.join(a.work, f"{name}{'.hw' if m.get('cnn') and a.dynamic_hw else ''}.onnx")
    t0 = time.perf_counter()
    key = export_key(torch, module, m)
    if os.path.exists(onnx_path) and os.path.exists(onnx_path + ".key") and open(onnx_path + ".key").read() == key:
        row["export_reused"] = True
    else:
        export(torch, module, m, onnx_path)
        open(onnx_path + ".key", "w").write(key)
    row["export_s"] = time.perf_counter() - t0
    module.to(device)
    log(f"{name}: {'export reused' if row.get('export_reused') else 'exported'} in {row['export_s']:.1f} s; "
        f"points {', '.join(row['points'])}")
    cache = os.path.join(a.work, f"cache.{name}.{a.precision}")
    shutil.rmtree(cache, ignore_errors=True)  # the first build is cold
    src, flags = symc_source(a, onnx_path)
    try:
        engine = os.path.join(a.work, f"{name}.{a.precision}.symx")
        row["build_s"] = symc_compile(a, row, src, flags, spec_of(m), engine, cache)
        log(f"{name}: symc compile {row['build_s']:.1f} s")
        # the precision pass's fp32 islands by reason (symc inspect's line; none in fp32 engines)
        ins = subprocess.run([a.symc, "inspect", engine], capture_output=True, text=True)
        isl = [ln for ln in ins.stdout.splitlines() if ln.startswith("fp32 islands")]
        row["islands"] = isl[0].split(": ", 1)[1].replace(" (--islands lists each)", "") if isl else "none"
        log(f"{name}: fp32 islands {row['islands']}")
        if a.cache_build:
            warm = os.path.join(a.work, f"{name}.{a.precision}.warm.symx")
            row["build_warm_s"] = symc_compile(a, row, src, flags, spec_of(m), warm, cache)
            os.remove(warm)
            log(f"{name}: symc compile from the cache {row['build_warm_s']:.1f} s")
        save()
        backend = "ref" if a.dry_run else a.bench_backend
        checks = [(t, p) for t, p in zip(m["tags"], m["points"]) if selected(a.check, t)]
        if a.dry_run and a.check != "none":  # the reference backend on the CPU: the min point and a small odd one
            odd = {**m["all_points"][3][1], "B": 1}
            checks = [("min", m["all_points"][0][1])] + ([("odd", odd)] if odd != m["all_points"][0][1] else [])
        row["check"] = []
        for t, p in checks:
            err, why, peer_err = symc_check(a, row, torch, module, m, engine, p, backend, device)
            ok = math.isfinite(err) and err < TOL[a.precision]
            row["check"].append({"point": label(m, t, p), "backend": backend, "rel_err": err, "ok": ok, "why": why,
                                 "eager_rel_err": peer_err})
            log(f"{name}: check ({backend}) {label(m, t, p)}: rel err {err:.2e} {'PASS' if ok else 'FAIL ' + why}"
                f" (eager {a.precision}: {seed.fmt(peer_err, 6) if peer_err is None else format(peer_err, '.2e')})")
            save()
        if a.dry_run:
            plan(a, row, [a.symc, "bench", engine, "--json", "...", "--backend", "cuda", "--graphs", "--iters",
                          str(a.iters), "--warmup", str(a.warmup)] + [x for p in m["points"] for x in
                                                                       ("--point", seed.point_arg(spec_of(m), p))])
            if a.host:
                plan(a, row, [a.symc, "bench", engine, "--json", "...", "--backend", "cuda", "--graphs", "--stream",
                              "default", "--iters", str(a.host_iters), "--warmup", "5"] +
                     [x for p in m["points"] for x in ("--point", seed.point_arg(spec_of(m), p))])
        else:
            extra = ["--profile"] if a.profile else []
            res, out = symc_bench(a, row, m, engine, m["points"], extra, a.iters, a.warmup, name)
            row["symc_detail"] = res
            row["symc"] = [r.get("p50_ms") for r in res]
            for lab, r in zip(row["points"], res):
                if r.get("error"):
                    row.setdefault("errors", []).append(f"symc bench at {lab}: {r['error']}")
            if a.profile:
                with open(os.path.join(a.out, f"{name}.{a.precision}.{a.half_via}.profile.txt"), "w") as f:
                    f.write(out)
            log(f"{name}: symc {row['symc']}")
            save()
            if a.host:
                res, _ = symc_bench(a, row, m, engine, m["points"], ["--stream", "default"], a.host_iters, 5,
                                    name + ".host")
                row["host_default"] = res
                for lab, r in zip(row["points"], res):
                    if r.get("error"):
                        row.setdefault("errors", []).append(f"symc bench --stream default at {lab}: {r['error']}")
                save()
        if a.static and a.dry_run:
            static_oracle(a, row, name, m, src, flags, cache, save)
        if not a.dry_run and os.path.exists(engine):
            os.remove(engine)  # timed already; the static builds and the next model need the disk more
    except RuntimeError as e:
        row["symc_error"] = str(e)[:400]
        log(f"{name}: {row['symc_error']}")
    save()
    if a.dry_run:
        return
    time_peers(a, torch, row, m, module, save)
    del module
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    if a.static and "symc_error" not in row:
        static_oracle(a, row, name, m, src, flags, cache, save)


# ---------------------------------------------------------------- report --

def _at(r, key, i):
    v = r.get(key)
    return v[i] if isinstance(v, list) and i < len(v) else None


def _met(ok):
    return "met" if ok else "MISSED"


def table(rows, meta):
    """the markdown report of rows (models.json's rows, of one run or several)"""
    compile_on = any(r.get("compile_dyn") for r in rows) or meta.get("compile", False)
    has_static = any(any(v for v in (r.get("static") or [])) for r in rows)
    prec = meta.get("precision", "?")
    L = [f"precision {prec}" + (f" (half storage via {meta.get('half_via')})" if prec != "fp32" else "") +
         f"; {meta.get('gpu', '-')}; torch {meta.get('torch', '-')}", ""]
    hdr = ["model", "point", "symc ms", "eager ms"] + (["compile ms"] if compile_on else []) + ["best peer / symc"]
    hdr += (["static ms", "dyn / static"] if has_static else []) + ["host us"]
    L += ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    eager_r, comp_r, best_r, slower, slower_e, slower_c, dyn_st, host = [], [], [], [], [], [], [], []
    for r in rows:
        if r.get("skipped"):
            continue
        for i, pt in enumerate(r.get("points", [])):
            where = f"{r['model']} {pt}"
            s = _at(r, "symc", i)
            e, c = _at(r, "eager", i), _at(r, "compile_dyn", i)
            cells = [r["model"], pt, seed.fmt(s, 3) if s else (r.get("symc_error") or "-")[:60], seed.fmt(e, 3)]
            if compile_on:
                cells.append(seed.fmt(c, 3) if c else (r.get("compile_error") or "-")[:40])
            best = min([v for v in (e, c) if v] or [0]) or None
            if s and e:
                eager_r.append(e / s)
                if e < s:
                    slower_e.append(f"{where} {e / s:.2f}")
            if s and c:
                comp_r.append(c / s)
                if c < s:
                    slower_c.append(f"{where} {c / s:.2f}")
            if s and best:
                best_r.append(best / s)
                if best < s:
                    slower.append(f"{where} {best / s:.2f}")
            cells.append(f"{best / s:.2f}" if s and best else "-")
            if has_static:
                st = _at(r, "static", i)
                cells += [seed.fmt(st, 3) if st else "-", f"{s / st:.2f}" if s and st else "-"]
                if s and st:
                    dyn_st.append((s / st, where))
            h = (_at(r, "symc_detail", i) or {}).get("host_us")
            cells.append(seed.fmt(h, 1) if h else "-")
            L.append("| " + " | ".join(cells) + " |")
    L.append("")
    if not best_r:
        L.append("no point timed on both sides" + (" (dry run)" if meta.get("dry_run") else ""))
    else:
        L.append(f"geomean eager / symc: {seed.geomean(eager_r):.2f} over {len(eager_r)} points; slower than eager: "
                 f"{len(slower_e)}" + (f" ({'; '.join(slower_e)})" if slower_e else ""))
        if compile_on and comp_r:
            g = seed.geomean(comp_r)
            L.append(f"geomean torch.compile / symc: {g:.2f} over {len(comp_r)} points (target >= 1.5: "
                     f"{_met(g >= 1.5)}); slower than torch.compile: {len(slower_c)}" +
                     (f" ({'; '.join(slower_c)})" if slower_c else ""))
        L.append(f"geomean best peer / symc: {seed.geomean(best_r):.2f} over {len(best_r)} points; points slower "
                 f"than the best peer: {len(slower)} (target 0: {_met(not slower)})" +
                 (f": {'; '.join(slower)}" if slower else ""))
    if has_static:
        dyn_st.sort(reverse=True)
        over = sum(1 for x, _ in dyn_st if x > 1.10)
        L.append(f"dyn / static (static oracle, {len(dyn_st)} points): worst five " +
                 "; ".join(f"{w} {x:.2f}" for x, w in dyn_st[:5]) +
                 f"; over 1.10: {over} (target 0: {_met(not over)})")
    L += host_lines(rows)
    L += build_lines(rows, meta.get("dry_run"))
    checks = [(r["model"], c) for r in rows for c in r.get("check", [])]
    fails = [f"{n} {c['point']}: {c['rel_err']:.2e} {c['why']}" +
             (f" (eager in {prec}: {c['eager_rel_err']:.2e})" if c.get("eager_rel_err") is not None else "")
             for n, c in checks if not c["ok"]]
    worst = max(checks, key=lambda x: x[1]["rel_err"] if math.isfinite(x[1]["rel_err"]) else math.inf, default=None)
    L.append("")
    L.append(f"correctness ({len(checks)} checks, rel err against the fp32 module in float64 < {TOL.get(prec)}): " +
             ("none run" if not checks else "all pass" if not fails else "FAIL " + "; ".join(fails)) +
             (f"; largest {worst[1]['rel_err']:.2e} at {worst[0]} {worst[1]['point']}" if worst else ""))
    peer = [c["eager_rel_err"] for _, c in checks if c.get("eager_rel_err") is not None]
    if peer:
        L.append(f"eager in {prec} on the same inputs: rel err up to {max(peer):.2e}")
    for r in rows:
        for e in ([f"model failed: {r['model_error']}"] if r.get("model_error") else []) + \
                 ([f"symc: {r['symc_error']}"] if r.get("symc_error") else []) + r.get("errors", []):
            L.append(f"- {r['model']}: {e}")
    skipped = [r["model"] for r in rows if r.get("skipped")]
    if skipped:
        L.append(f"- not run (--budget-s spent): {','.join(skipped)}; rerun with --models {','.join(skipped)}")
    return "\n".join(L)


def host_lines(rows):
    """the host table (own stream from the timed pass, default stream from --host) and its
    summary against the targets"""
    L, known, new = [], [], []
    body = []
    for r in rows:
        for i, pt in enumerate(r.get("points", [])):
            own = _at(r, "symc_detail", i) or {}
            dft = _at(r, "host_default", i) or {}
            if not own.get("host_us") and not dft.get("host_us"):
                continue
            for d, what in ((own, "own"), (dft, "default")):
                if d.get("host_us"):
                    known.append((d["host_us"], f"{r['model']} {pt} {what}"))
                if d.get("first_us") is not None and d.get("shape_us") is not None:
                    new.append((d["first_us"] + d["shape_us"], f"{r['model']} {pt} {what}"))
            g = "/".join(str(own.get(k, "-")) for k in ("graph_replays", "graph_captures", "graph_updates",
                                                         "graph_plain", "graph_failed"))
            us = [seed.fmt(d.get(k), 1) for d, k in ((own, "host_us"), (dft, "host_us"), (own, "shape_us"),
                                                     (own, "first_us"), (dft, "first_us"))]
            body.append(f"| {r['model']} | {pt} | " + " | ".join(us) + f" | {g} |")
    if not body:
        return L
    L += ["", "| model | point | host us (own stream) | host us (default stream) | shape us | first us (own) | "
              "first us (default) | graphs replays/captures/updates/plain/failed |", "|" + "---|" * 8]
    L += body
    L.append("")
    if known:
        k = max(known)
        L.append(f"host per enqueue at a known shape: max {k[0]:.1f} us at {k[1]} (target <= {HOST_KNOWN_US:.0f}: "
                 f"{_met(k[0] <= HOST_KNOWN_US)})")
    if new:
        k = max(new)
        L.append(f"host at a new shape (shape_us + first_us, no run-time tuning): max {k[0]:.1f} us at {k[1]} "
                 f"(target <= {HOST_NEW_US:.0f}: {_met(k[0] <= HOST_NEW_US)})")
    return L


def build_lines(rows, dry_run):
    L = ["", "| model | export s | build s (cold) | build s (from the cache) | static builds (n, mean s) | "
             "torch.compile first s | torch.compile graphs | model wall s | fp32 islands |", "|" + "---|" * 9]
    any_row = False
    for r in rows:
        if r.get("skipped") or "export_s" not in r:
            continue
        any_row = True
        st = [x for x in (r.get("static_build_s") or []) if x]
        cells = [seed.fmt(r.get(k), 1) for k in ("export_s", "build_s", "build_warm_s")]
        cells += [f"{len(st)}, {sum(st) / len(st):.1f}" if st else "-", seed.fmt(r.get("compile_s"), 1),
                  str(r.get("compile_graphs", "-")), seed.fmt(r.get("wall_s"), 0), r.get("islands", "-")]
        L.append(f"| {r['model']} | " + " | ".join(cells) + " |")
    if not any_row:
        return []
    cold = [r["build_s"] for r in rows if r.get("build_s")]
    warm = [r["build_warm_s"] for r in rows if r.get("build_warm_s")]
    L.append("")
    if cold and dry_run:
        L.append(f"build: max {max(cold):.1f} s cold (dry run: on the CPU, heuristics, no tuning)")
    elif cold:
        L.append(f"build: max {max(cold):.1f} s cold (target <= 10: {_met(max(cold) <= 10)})" +
                 (f", max {max(warm):.1f} s from the cache (target <= 2: {_met(max(warm) <= 2)})" if warm else ""))
    return L


# ------------------------------------------------------------------ main --

def table_from(a):
    """one report from the rows of several models.json files (meta of the first)"""
    by, order, meta = {}, [], None
    for f in a.table_from:  # a model's last row that ran wins over its rows skipped for the budget
        d = json.load(open(f))
        meta = meta or d
        if (d.get("precision"), d.get("half_via")) != (meta.get("precision"), meta.get("half_via")):
            log(f"note: {f} is {d.get('precision')}/{d.get('half_via')}, the first file "
                f"{meta.get('precision')}/{meta.get('half_via')}")
        for r in d["rows"]:
            if r["model"] not in by:
                order.append(r["model"])
            if r["model"] not in by or not r.get("skipped"):
                by[r["model"]] = r
    rows = [by[m] for m in order]
    t = table(rows, meta)
    open(os.path.join(a.out, "models.md"), "w").write(t + "\n")
    json.dump(dict(meta, rows=rows, merged_from=a.table_from), open(os.path.join(a.out, "models.json"), "w"), indent=1)
    print(t)


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
    ap.add_argument("--work", default=None, help="engines, exports (reused when there) and caches; default a temp dir")
    ap.add_argument("--points", default="all", help="all or a comma list of min,opt,max,off (every off-opt point) "
                    "or off1,off2")
    ap.add_argument("--check", default="min,max,off1",
                    help="points checked against the fp32 module: all, none or a comma list of tags")
    ap.add_argument("--dynamic-hw", action="store_true", help="CNNs: H and W symbols too, 128/224/320")
    ap.add_argument("--static", action="store_true", help="the static oracle: a build per point for its exact shape")
    ap.add_argument("--static-points", default="all", help="with --static: all or a comma list of tags")
    ap.add_argument("--host", action="store_true", help="one more symc bench pass with --stream default (host times)")
    ap.add_argument("--host-iters", type=int, default=50)
    ap.add_argument("--cache-build", action="store_true",
                    help="a second symc compile of each model from the first one's SYMC_CACHE_DIR")
    ap.add_argument("--budget-s", type=float, default=None,
                    help="no model starts when the time left is below the quickest model so far took, no static "
                    "build when it is below the model's build time, and no command runs past it by more than 60 s")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: export, compile with heuristics, check on the reference backend, print the plan")
    ap.add_argument("--bench-backend", default="cuda", choices=["cuda", "ref"],
                    help="backend of symc bench and the checks' symc run (default cuda; ref only to test this script)")
    ap.add_argument("--table-from", nargs="+", default=None, metavar="JSON",
                    help="no run: one report from these models.json files")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.table_from:
        return table_from(a)
    for opt in ("points", "check", "static_points"):
        v = getattr(a, opt)
        setattr(a, opt, v if v in ("all", "none") else [t.strip() for t in v.split(",") if t.strip()])
    if a.models == "all":
        names = [n for n in MODELS if not MODELS[n].get("extra")]
    else:
        names = [n.strip() for n in a.models.split(",") if n.strip()]
    bad = [n for n in names if n not in MODELS]
    if bad:
        sys.exit(f"unknown model(s) {', '.join(bad)} (models: {', '.join(MODELS)})")
    t_start = time.perf_counter()
    a.left = lambda: math.inf if a.budget_s is None else a.budget_s - (time.perf_counter() - t_start)
    a.timeout = lambda s: s if a.budget_s is None else int(max(30, min(s, a.left() + 60)))
    import torch
    meta = {"precision": a.precision, "half_via": a.half_via, "compile": a.compile, "argv": sys.argv,
            "torch": torch.__version__, "dynamic_hw": a.dynamic_hw, "dry_run": a.dry_run}
    rc, out, _, _ = seed.run([a.symc, "--version"], 30)
    meta["symc_version"] = out.strip()
    if not a.dry_run:
        meta["gpu"] = torch.cuda.get_device_name()
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        if a.precision != "fp32":  # fp32 accumulation on the peers too
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    a.work = a.work or tempfile.mkdtemp(prefix="symc-models-")
    os.makedirs(a.work, exist_ok=True)
    rows, walls = [], []

    def save():
        """models.json, then models.md; a report that cannot be written is said, never fatal"""
        try:
            with open(os.path.join(a.out, "models.json.part"), "w") as f:
                json.dump(dict(meta, rows=rows, wall_s=time.perf_counter() - t_start), f, indent=1,
                          default=lambda o: None)
            os.replace(os.path.join(a.out, "models.json.part"), os.path.join(a.out, "models.json"))
            with open(os.path.join(a.out, "models.md"), "w") as f:
                f.write(table(rows, meta) + "\n")
        except Exception as e:
            log(f"cannot write the report: {type(e).__name__}: {e}")

    for n in names:
        row = {"model": n}
        rows.append(row)
        if a.left() <= 0 or (walls and a.left() < min(walls)):
            row["skipped"] = f"--budget-s: {max(0, a.left()):.0f} s left"
            log(f"{n}: skipped, {row['skipped']}")
            save()
            continue
        t0 = time.perf_counter()
        try:
            bench_model(a, torch, n, model_spec(n, a), row, save)
        except Exception as e:  # recorded, the run goes on
            row["model_error"] = f"{type(e).__name__}: {str(e)[:400]}"
            log(f"{n}: FAILED: {row['model_error']}")
            traceback.print_exc()
            try:
                torch.cuda.empty_cache()
            except Exception:
                pass
        row["wall_s"] = time.perf_counter() - t0
        walls.append(row["wall_s"])
        log(f"{n}: done in {row['wall_s']:.1f} s (total {time.perf_counter() - t_start:.0f} s)")
        save()
    t = table(rows, meta)
    print(t)
    if a.dry_run:
        print("\nplanned device commands (dry run):")
        for r in rows:
            for c in r.get("planned", []):
                print(f"  {r['model']}: {c}")


if __name__ == "__main__":
    main()
