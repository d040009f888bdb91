#!/usr/bin/env python3
"""The real-model GPU differential sweep (issue 29): real models as users bring them, through symc's
engines on the CUDA backend, against eager PyTorch on the same GPU, at min, opt, max and random
in-range points, in fp32 and --fp16, through the ONNX frontend and the torch frontend.

Why it exists: every GPU check of the project once passed while BERT with a runtime padding mask was
1-9% wrong in fp32 and NaN in fp16 on the GPU. The GPU suite compared small synthetic models with
the reference backend; no check ran a real encoder with a runtime mask at sizes between the ends of
its range against eager PyTorch. This one does.

Per model (random weights, seeded; nothing downloaded; the libraries' full-size configs):
  1. the fp32 module is exported with torch.onnx.export(dynamo=False, opset 17) with every dynamic
     axis a dim_param (traced at opt, with a padded attention mask where the model takes one, so no
     data-dependent branch is traced on an all-ones mask), and compiled by `symc compile` for the
     model's ranges, once in fp32 and once with --fp16 (the precision pass on the fp32 export, as
     trtexec users build);
  2. the torch path: symc.compile(model, inputs=[symc.Input(min, opt, max)], gpu=True) in the same
     two precisions; a refusal is recorded with its message (it is not a wrong number) and the
     summary lists it;
  3. points: min, opt and max of every symbol together, and --random points (default 3), each
     symbol drawn uniformly in its range from --seed (the log prints it: replay with --seed);
     attention masks at each point: "pad" (rows of random lengths, zeros after) at opt and max,
     "ones" at min, and the random points cycle "left" (padding first, as generation batches pad:
     with a causal mask the rows before a row's first token see no token), pad and "full" (row 0
     has no token at all);
  4. checks: the engine's output (one process per model: the engine is loaded once and run at
     every point with torch CUDA tensors) against the fp64 module on the GPU (the reference), next
     to eager fp32 (TF32 off) and eager half (model.half()) on the same inputs:
       fp32: ||symc - eager32|| / ||eager32|| < 1e-4;
       fp16: finite wherever the reference is, and ||symc - ref|| / ||ref|| <= max(2 * eager
             half's own error, 2 * its median over the model's points, k * the median over the
             model's points of eager half's root-mean-square error / this point's root mean
             square of ref, 1e-3), k = 4 where the output has fewer than 256 numbers and 2
             otherwise (1e-3: about one f16 rounding of the output; eager half's own error on
             these models is 5e-4 to 6e-3; the medians keep a point where eager half is luckier
             than usual from setting a bound below the model's typical half error; the RMS term
             is for a point whose output happens to be small: half's error does not shrink with
             it. A classifier's 2 logits are the case:
             over 900 GPU points of bert_cls, eager half's own absolute error reached 3.1x its
             median, its relative error 47x, and symc's --fp16 engines had the same distributions,
             BENCHMARKS.md's "bert_cls --fp16"), or 1e-2 where eager half itself gives NaN or Inf
             (docs/BENCHMARKS-SUITE.md's half-precision target);
     errors are taken over the elements where the model itself (fp64 and eager fp32) is finite
     (transformers' Llama gives NaN for a row with no token at all: its causal and padding masks
     add up to -inf); the log counts the others. An output of the wrong shape, or NaN or Inf
     where the model is finite, fails.

Output: one line per check; a table last (model, frontend, precision, points, worst error, that
point's bound, result) printed and written to OUT/real_models.md, every number in OUT/real_models.json
(rewritten after each model, so a run cut short keeps what it measured). Exit 1 on any wrong
result or build failure; refusals of the torch path are listed, not failures (the torch path's
known limits are docs/MODELS.md's).

--prepare only exports and writes two points' inputs per model (scripts/device_real_builds.sh times
the builds on an idle machine and runs compute-sanitizer on the engines with them).

usage (the GPU machine, repo root, build/bin and build/lib carried; about 1-3 minutes a model):
  python3 tests/gpu/real_models.py --out $OUT --models bert,gpt2 [--modes fp32,fp16]
      [--frontends onnx,torch] [--seed N] [--random 3] [--budget-s 480] [--work DIR]
  CUDA_VISIBLE_DEVICES=k picks a GPU: scripts/device_real_models.sh runs the models in parts, one per
  GPU, side by side.
Models: bert (BERT-base, input_ids + attention_mask), gpt2 (GPT-2 124M, + attention_mask), llama (a
Llama config: 4 layers, hidden 512, GQA 8/2 heads, + attention_mask), t5_encoder (t5-small's
encoder, + attention_mask), vit_s, resnet50 (B, H and W dynamic), convnext_t, efficientnet_b0,
mobilenet_v3_large, swin_t, densenet121.
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import time
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "frontend", "torch"))


def log(*a):
    print(*a, flush=True)


# ---------------------------------------------------------------- models --
# build() -> fp32 eval module; inputs: [(name, dims, kind)], dims symbol names or ints, kind
# "float", "ids" or "mask"; ranges: symbol -> (min, opt, max)

def _text(model):
    """A transformers model as a module (input_ids, attention_mask) -> its first output."""
    import torch

    class Text(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask)[0]

    return Text()


def _bert():
    from transformers import BertConfig, BertModel
    return _text(BertModel(BertConfig(attn_implementation="eager"), add_pooling_layer=False))


def _bert_cls():
    """BERT-base with its sequence-classification head (pooler and a 2-label classifier), the form a
    text classifier is served in: logits [B, 2]"""
    from transformers import BertConfig, BertForSequenceClassification
    return _text(BertForSequenceClassification(BertConfig(attn_implementation="eager", num_labels=2)))


def _gpt2():
    from transformers import GPT2Config, GPT2Model
    return _text(GPT2Model(GPT2Config(use_cache=False, attn_implementation="eager")))


def _llama():
    from transformers import LlamaConfig, LlamaModel
    return _text(LlamaModel(LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                                       num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                                       max_position_embeddings=2048, use_cache=False, attn_implementation="eager")))


def _llama_hd128():
    """a Llama with the head dim of Llama 2/3 (128) and grouped-query attention: 8 heads of 128 over
    2 key/value heads, 2 layers (the half kernels pick the Hopper attention kernel at this head dim)"""
    from transformers import LlamaConfig, LlamaModel
    return _text(LlamaModel(LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=2,
                                       num_attention_heads=8, num_key_value_heads=2, head_dim=128, vocab_size=32000,
                                       max_position_embeddings=2048, use_cache=False, attn_implementation="eager")))


def _t5_encoder():
    from transformers import T5Config, T5EncoderModel
    return _text(T5EncoderModel(T5Config(use_cache=False, attn_implementation="eager")))


def _vision(name):
    def build():
        sys.path.insert(0, os.path.join(REPO, "bench"))
        import bench_models
        return getattr(bench_models, "_" + name)()
    return build


def _swin_t():
    import torchvision
    return torchvision.models.swin_t(weights=None)


def _densenet121():
    import torchvision
    sys.path.insert(0, os.path.join(REPO, "bench"))
    import bench_models  # BatchNorm statistics from a seeded batch, as for EfficientNet
    return bench_models._bn_calibrated(torchvision.models.densenet121(weights=None))


TEXT_IN = [("input_ids", ["B", "S"], "ids"), ("attention_mask", ["B", "S"], "mask")]
IMG_IN = [("x", ["B", 3, 224, 224], "float")]
B_RANGE = (1, 8, 32)
MODELS = {
    "bert": dict(build=_bert, inputs=TEXT_IN, ranges={"B": B_RANGE, "S": (1, 128, 512)}, vocab=30522),
    "bert_cls": dict(build=_bert_cls, inputs=TEXT_IN, ranges={"B": B_RANGE, "S": (1, 128, 512)}, vocab=30522),
    "gpt2": dict(build=_gpt2, inputs=TEXT_IN, ranges={"B": B_RANGE, "S": (1, 128, 1024)}, vocab=50257),
    "llama": dict(build=_llama, inputs=TEXT_IN, ranges={"B": (1, 8, 16), "S": (1, 128, 512)}, vocab=32000),
    "llama_hd128": dict(build=_llama_hd128, inputs=TEXT_IN, ranges={"B": (1, 8, 16), "S": (1, 128, 512)},
                        vocab=32000),
    "t5_encoder": dict(build=_t5_encoder, inputs=TEXT_IN, ranges={"B": B_RANGE, "S": (1, 128, 512)}, vocab=32128),
    "vit_s": dict(build=_vision("vit_s"), inputs=IMG_IN, ranges={"B": B_RANGE}),
    "resnet50": dict(build=_vision("resnet50"), inputs=[("x", ["B", 3, "H", "W"], "float")],
                     ranges={"B": B_RANGE, "H": (128, 224, 320), "W": (128, 224, 320)}),
    "convnext_t": dict(build=_vision("convnext_t"), inputs=IMG_IN, ranges={"B": B_RANGE}),
    "efficientnet_b0": dict(build=_vision("efficientnet_b0"), inputs=IMG_IN, ranges={"B": B_RANGE}),
    "mobilenet_v3_large": dict(build=_vision("mobilenet_v3_large"), inputs=IMG_IN, ranges={"B": B_RANGE}),
    "swin_t": dict(build=_swin_t, inputs=IMG_IN, ranges={"B": B_RANGE}),
    "densenet121": dict(build=_densenet121, inputs=IMG_IN, ranges={"B": B_RANGE}),
}
FP32_TOL = 1e-4
HALF_FLOOR = 1e-3
HALF_BROKEN = 1e-2  # the half bound where eager half itself is not finite (docs/BENCHMARKS-SUITE.md's half-precision target)


def points(m, rng, n_random):
    """[(tag, {symbol: value}, mask form)]"""
    r = m["ranges"]
    out = [("min", {s: v[0] for s, v in r.items()}, "ones"), ("opt", {s: v[1] for s, v in r.items()}, "pad"),
           ("max", {s: v[2] for s, v in r.items()}, "pad")]
    forms = ("left", "pad", "full")  # "ones" is min's
    for i in range(n_random):
        out.append((f"rand{i + 1}", {s: int(rng.integers(v[0], v[2] + 1)) for s, v in r.items()}, forms[i % 3]))
    return out


def make_inputs(m, point, form, rng):
    """numpy inputs at point: ids uniform in the vocabulary, floats uniform in [-1, 1], masks of the form"""
    xs = []
    for _, dims, kind in m["inputs"]:
        shape = [point[d] if isinstance(d, str) else d for d in dims]
        if kind == "ids":
            xs.append(rng.integers(0, m["vocab"], shape).astype(np.int64))
        elif kind == "mask":
            a = np.ones(shape, np.int64)
            if form == "left":  # padding first, as generation batches pad
                for b in range(shape[0]):
                    a[b, :int(rng.integers(0, shape[1]))] = 0
            if form in ("pad", "full"):
                for b in range(shape[0]):
                    a[b, int(rng.integers(1, shape[1] + 1)):] = 0
            if form == "full":
                a[0, :] = 0
            xs.append(a)
        else:
            xs.append(rng.uniform(-1, 1, shape).astype(np.float32))
    return xs


def rel(a, b, where=None):
    """||a - b|| / ||b|| over the elements `where` (a bool mask; default all)"""
    a, b = a.double(), b.double()
    if where is not None:
        a, b = a[where], b[where]
    return float((a - b).norm() / max(float(b.norm()), 1e-30))


def rms(t):
    """the root mean square of a tensor's elements (0 for none)"""
    return float(t.double().norm()) / max(t.numel(), 1) ** 0.5


def half_err(eh, ref):
    """eager half's own error against the reference over the elements where the reference is finite,
    (relative, root mean square of eh - ref); None when eager half is not finite there (the model itself
    fails in half at that point)"""
    fin = torch_isfinite(ref)
    if not bool(torch_isfinite(eh)[fin].all()):
        return None
    return rel(eh, ref, fin), rms(eh.double()[fin] - ref.double()[fin])


def torch_isfinite(t):
    import torch
    return torch.isfinite(t)


# ----------------------------------------------------------------- builds --
def export_onnx(torch, module, m, path):
    opt = {s: v[1] for s, v in m["ranges"].items()}
    ex = [torch.from_numpy(x) for x in make_inputs(m, opt, "pad", np.random.default_rng(0))]
    axes = {n: {i: d for i, d in enumerate(dims) if isinstance(d, str)} for n, dims, _ in m["inputs"]}
    tmp = path + ".part"
    with torch.no_grad():
        torch.onnx.export(module, tuple(ex), tmp, dynamo=False, opset_version=17,
                          input_names=[n for n, _, _ in m["inputs"]], output_names=["y"], dynamic_axes=axes)
    os.replace(tmp, path)


def shapes_flags(m):
    flags = []
    r = m["ranges"]
    for n, dims, _ in m["inputs"]:
        lv = ["x".join(str(r[d][i] if isinstance(d, str) else d) for d in dims) for i in range(3)]
        flags += ["--shapes", f"{n}:{','.join(lv)}"]
    return flags


def symc_compile(a, m, src, engine, prec):
    """Builds with progress on: its lines (seconds since the start, per stage) are kept in the
    JSON and logged, so a slow build says where its time went."""
    cmd = [a.symc, "compile", src, "-o", engine] + shapes_flags(m) + (["--fp16"] if prec == "fp16" else [])
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.build_timeout)
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("symc: [")]
    if p.returncode:
        raise RuntimeError("symc compile: " + (p.stderr.strip().splitlines() or ["?"])[-1])
    return time.time() - t0, " ".join(cmd), lines


def torch_compile(symc, torch, module, m, prec):
    r = m["ranges"]
    specs = []
    for _, dims, kind in m["inputs"]:
        lv = [[r[d][i] if isinstance(d, str) else d for d in dims] for i in range(3)]
        # dims named by their symbol: ids and mask share B and S (transformers' decoders assert the
        # mask is as long as the ids, which two independent Inputs would not promise)
        names = {i: d for i, d in enumerate(dims) if isinstance(d, str)}
        specs.append(symc.Input(min_shape=lv[0], opt_shape=lv[1], max_shape=lv[2],
                                dtype=torch.float32 if kind == "float" else torch.int64, dim_names=names))
    t0 = time.time()
    cm = symc.compile(module, inputs=specs, gpu=True, precision=prec)
    return cm, time.time() - t0


# ------------------------------------------------------------------ model --
def sweep_model(a, torch, symc, name, row, save):
    m = dict(MODELS[name])
    torch.manual_seed(0)
    module = m["build"]().eval()
    rng = np.random.default_rng(a.seed + sum(map(ord, name)))
    pts = points(m, rng, a.random)
    row["points"] = [f"{t} {p} {f if any(k == 'mask' for _, _, k in m['inputs']) else ''}".strip()
                     for t, p, f in pts]
    inputs = [make_inputs(m, p, f, rng) for _, p, f in pts]
    # the oracles on the GPU, per point: fp64 reference, eager fp32 (TF32 off), eager half (copies:
    # the fp32 module on the CPU stays as it is for the exporters)
    dev = torch.device("cuda")
    refs = []
    with torch.inference_mode():
        for dt in (torch.float64, torch.float32, torch.float16):
            g = copy.deepcopy(module).to(dev, dt)
            for i, xs in enumerate(inputs):
                tx = [torch.from_numpy(x).to(dev) for x in xs]
                y = g(*[t.to(dt) if t.is_floating_point() else t for t in tx]).float().cpu()
                if dt == torch.float64:
                    refs.append([y])
                elif dt == torch.float32:
                    refs[i].append(y)
                else:
                    refs[i].append(half_err(y, refs[i][0]))
            del g
            torch.cuda.empty_cache()
    row["eager_half_err"] = [h and h[0] for _, _, h in refs]
    row["eager32_err"] = [rel(e, r) for r, e, _ in refs]
    results = row.setdefault("results", {})
    onnx_path = os.path.join(a.work, name + ".onnx")
    for fe in a.frontends:
        if fe == "onnx":
            try:
                if not os.path.exists(onnx_path):
                    t0 = time.time()
                    export_onnx(torch, module, m, onnx_path)
                    row["export_s"] = round(time.time() - t0, 1)
            except Exception as e:  # noqa: BLE001
                for prec in a.modes:
                    results[f"onnx {prec}"] = {"status": "FAIL", "why": f"export: {str(e).splitlines()[0][:300]}"}
                save()
                continue
        for prec in a.modes:
            key = f"{fe} {prec}"
            res = results[key] = {"status": "running"}
            try:
                if fe == "onnx":
                    engine = os.path.join(a.work, f"{name}.{prec}.symx")
                    secs, cmd, progress = symc_compile(a, m, onnx_path, engine, prec)
                    res["progress"] = progress
                    log(f"{name} [{key}] build {secs:.1f} s:\n  " + "\n  ".join(progress))
                    from symc.runtime import EngineModule
                    run = EngineModule(engine, [n for n, _, _ in m["inputs"]], lambda outs: outs[0], gpu=True)
                    res["command"] = cmd
                else:
                    run, secs = torch_compile(symc, torch, module, m, prec)
                res["build_s"] = round(secs, 1)
            except Exception as e:  # noqa: BLE001
                msg = " ".join(str(e).split())[:400] or type(e).__name__
                res.update(status="REFUSED" if fe == "torch" else "FAIL", why=msg)
                log(f"{'note' if fe == 'torch' else 'FAIL'} {name} [{key}]: build: {msg}")
                save()
                continue
            errs, bounds, bad = [], [], []
            # eager half's typical error on this model: a point where eager half happens to be far
            # more accurate than usual (a classifier's few logits) must not set symc a bound below it
            ehs = sorted(eh[0] for _, _, eh in refs if eh is not None)
            eh_med = ehs[len(ehs) // 2] if ehs else None
            ehs_rms = sorted(eh[1] for _, _, eh in refs if eh is not None)
            eh_rms_med = ehs_rms[len(ehs_rms) // 2] if ehs_rms else None
            with torch.inference_mode():
                for (tag, p, form), xs, (ref, e32, eh_pair) in zip(pts, inputs, refs):
                    eh = eh_pair and eh_pair[0]
                    tx = [torch.from_numpy(x).to(dev) for x in xs]
                    try:
                        got = run(*tx).float().cpu()
                    except Exception as e:  # noqa: BLE001
                        bad.append(f"{tag}: run: {' '.join(str(e).split())[:200]}")
                        continue
                    if tuple(got.shape) != tuple(ref.shape):
                        bad.append(f"{tag}: shape {tuple(got.shape)}, eager {tuple(ref.shape)}")
                        continue
                    # where the model itself is not finite (transformers' Llama on a row with no token:
                    # its causal and padding masks add to -inf, 0/0 in eager too) nothing is compared
                    fin = torch.isfinite(ref) & torch.isfinite(e32)
                    n_nf = int((~fin).sum())
                    if not bool(torch.isfinite(got)[fin].all()):
                        bad.append(f"{tag}: NaN/Inf where the reference is finite")
                        errs.append(float("nan"))
                        bounds.append(None)
                        continue
                    if prec == "fp32":
                        err, bound = rel(got, e32, fin), FP32_TOL
                    else:
                        k_rms = 4 if int(fin.sum()) < 256 else 2
                        ref_rms = max(rms(ref.double()[fin]), 1e-30)
                        err, bound = rel(got, ref, fin), (max(2 * eh, 2 * eh_med, k_rms * eh_rms_med / ref_rms,
                                                              HALF_FLOOR) if eh is not None else HALF_BROKEN)
                    errs.append(err)
                    bounds.append(bound)
                    ok = err <= bound
                    log(f"{'ok  ' if ok else 'FAIL'} {name} [{key}] {tag} {p} mask={form}: rel err {err:.2e} "
                        f"(bound {bound:.1e}; eager half {'not finite' if eh is None else f'{eh:.1e}'}"
                        f"{f'; {n_nf} elements not finite in the model itself' if n_nf else ''})")
                    if not ok:
                        bad.append(f"{tag}: rel err {err:.3g} > {bound:.3g}")
            # the worst point's error beside its own bound (bounds differ per point)
            wi = max(range(len(errs)), key=lambda i: (errs[i] != errs[i], errs[i])) if errs else None
            res.update(status="FAIL" if bad else "PASS", worst=errs[wi] if errs else None,
                       bound=bounds[wi] if errs else None, n=len(pts), failures=bad)
            del run
            torch.cuda.empty_cache()
            save()


def table(rows, meta):
    lines = [f"real-model GPU sweep: {meta}", "",
             "| model | frontend | precision | points | worst rel err | bound | result | build s |",
             "|---|---|---|---|---|---|---|---|"]
    n_fail = n_ref = n_pass = 0
    for name, row in rows.items():
        for key, r in row.get("results", {}).items():
            fe, prec = key.split()
            st = r.get("status", "?")
            n_fail += st in ("FAIL", "running")
            n_ref += st == "REFUSED"
            n_pass += st == "PASS"
            w = r.get("worst")
            what = st if st == "PASS" else f"{st}: {r.get('why') or '; '.join(r.get('failures', []))[:160]}"
            lines.append(f"| {name} | {fe} | {prec} | {r.get('n', '-')} | "
                         f"{'-' if w is None else f'{w:.2e}'} | "
                         f"{'-' if r.get('bound') is None else '%.1e' % r['bound']} | {what} | "
                         f"{r.get('build_s', '-')} |")
        if row.get("error"):
            n_fail += 1
            lines.append(f"| {name} | - | - | - | - | - | FAIL: {row['error'][:160]} | - |")
    fes = sorted({k.split()[0] for row in rows.values() for k in row.get("results", {})})
    lines += ["", f"real_models: {n_pass} passed, {n_fail} failed, {n_ref} refused by the torch path "
                  f"({', '.join(fes) or 'no results'})"]
    return "\n".join(lines), n_fail


def prepare(a, torch):
    """--prepare: per model, the ONNX export (kept when there) and NAME.plan for builds and runs
    outside this script (scripts/device_real_builds.sh): a "shapes" line (symc compile's --shapes
    flags) and one "point" line per point (symc run's --shapes and --input flags; the inputs as .npy
    beside it): min (all-ones mask) and one random point between min and opt (padded mask), drawn
    from --seed."""
    for name in a.names:
        m = MODELS[name]
        onnx_path = os.path.join(a.work, name + ".onnx")
        t0 = time.time()
        if not os.path.exists(onnx_path):
            torch.manual_seed(0)
            export_onnx(torch, m["build"]().eval(), m, onnx_path)
        rng = np.random.default_rng(a.seed + sum(map(ord, name)))
        r = m["ranges"]
        pts = [("min", {s: v[0] for s, v in r.items()}, "ones"),
               ("low", {s: int(rng.integers(v[0], v[1] + 1)) for s, v in r.items()}, "pad")]
        lines = ["shapes " + " ".join(shapes_flags(m))]
        for tag, p, form in pts:
            args = []
            for (n, dims, _), x in zip(m["inputs"], make_inputs(m, p, form, rng)):
                f = os.path.join(a.work, f"{name}.{tag}.{n}.npy")
                np.save(f, x)
                args += ["--shapes", f"{n}:{'x'.join(map(str, x.shape))}", "--input", f"{n}={f}"]
            lines.append(f"point {tag} " + " ".join(args))
        with open(os.path.join(a.work, name + ".plan"), "w") as f:
            f.write("\n".join(lines) + "\n")
        log(f"prepared {name} in {time.time() - t0:.1f} s: " + "; ".join(f"{t} {p}" for t, p, _ in pts))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None, help="required unless --prepare")
    ap.add_argument("--prepare", action="store_true",
                    help="only export each model and write NAME.plan with two points' inputs into --work")
    ap.add_argument("--models", default="all")
    ap.add_argument("--modes", default="fp32,fp16")
    ap.add_argument("--frontends", default="onnx,torch")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--random", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=1e9, help="start no new model after this many seconds")
    ap.add_argument("--build-timeout", type=float, default=420)
    ap.add_argument("--work", default=None)
    ap.add_argument("--symc", default=os.path.join(REPO, "build", "bin", "symc"))
    ap.add_argument("--lib", default=os.path.join(REPO, "build", "lib", "libsymc.so"))
    a = ap.parse_args()
    a.modes = [x for x in a.modes.split(",") if x]
    a.frontends = [x for x in a.frontends.split(",") if x]
    names = list(MODELS) if a.models == "all" else [n for n in a.models.split(",") if n]
    bad = [n for n in names if n not in MODELS]
    if bad or any(x not in ("fp32", "fp16") for x in a.modes) or any(x not in ("onnx", "torch") for x in a.frontends):
        sys.exit(f"unknown model, mode or frontend (models: {', '.join(MODELS)}; modes fp32,fp16; "
                 f"frontends onnx,torch)")
    a.seed = a.seed if a.seed is not None else time.time_ns() % 2**31
    a.work = a.work or os.path.join("/tmp", "symc_real_models")
    os.makedirs(a.work, exist_ok=True)
    if a.prepare:
        import torch
        log(f"real_models --prepare: seed {a.seed}")
        a.names = names
        prepare(a, torch)
        return
    if not a.out:
        sys.exit("--out is required")
    os.makedirs(a.out, exist_ok=True)
    os.environ["SYMC_LIB"] = os.path.abspath(a.lib)
    os.environ.setdefault("SYMC_CACHE_DIR", os.path.join(a.work, "cache"))
    import torch
    import symc
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    import transformers
    meta = (f"seed {a.seed} (replay with --seed {a.seed}), {a.random} random points, torch {torch.__version__}, "
            f"transformers {transformers.__version__}, {torch.cuda.get_device_name(0)}")
    log(f"real_models: {meta}")
    rows = {}

    def save():
        text, _ = table(rows, meta)
        with open(os.path.join(a.out, "real_models.md.part"), "w") as f:
            f.write(text + "\n")
        os.replace(os.path.join(a.out, "real_models.md.part"), os.path.join(a.out, "real_models.md"))
        with open(os.path.join(a.out, "real_models.json.part"), "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1, default=str)
        os.replace(os.path.join(a.out, "real_models.json.part"), os.path.join(a.out, "real_models.json"))

    t0 = time.time()
    for name in names:
        if time.time() - t0 > a.budget_s:
            rows[name] = {"error": f"not started: the budget of {a.budget_s:.0f} s ran out"}
            save()
            continue
        rows[name] = {}
        ts = time.time()
        log(f"== {name}")
        try:
            sweep_model(a, torch, symc, name, rows[name], save)
        except Exception as e:  # noqa: BLE001
            rows[name]["error"] = " ".join(str(e).split())[:400] or type(e).__name__
            log(f"FAIL {name}: {rows[name]['error']}")
            traceback.print_exc()
        rows[name]["seconds"] = round(time.time() - ts, 1)
        save()
    text, n_fail = table(rows, meta)
    print("\n" + text, flush=True)
    sys.exit(1 if n_fail else 0)


if __name__ == "__main__":
    main()
