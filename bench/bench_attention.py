#!/usr/bin/env python3
"""Fused attention alone: symc's flash-attention kernel against PyTorch's
F.scaled_dot_product_attention (FlashAttention-2 / cuDNN / efficient, whatever
torch picks) in the same precision, on the device.

Per configuration (heads H, head dim D, causal or not) one ONNX model
softmax(Q·Kᵀ·scale [+ causal mask]) · V with Q, K, V [B, H, S, D] in the
storage type (f16 or bf16; batch B and sequence S dynamic), compiled once by
`symc compile`; then at each (B, S) point:
  1. correctness: the symc engine (Python runtime, torch CUDA tensors) against
     the same attention in fp32 math from the same half inputs,
     ||out - ref|| / ||ref|| <= 1e-2;
  2. symc's time: `symc bench ENGINE --point ... --json` (CUDA events around
     each enqueue, median);
  3. torch's time: F.scaled_dot_product_attention on the same shapes, CUDA
     events per call, median of --iters after --warmup.
The table gives both medians, the ratio and the achieved TFLOP/s (4·B·H·S²·D
multiply-adds x2 ... counted as 4·B·H·S²·D flops, halved when causal).

usage: bench_attention.py --symc build/bin/symc --lib build/lib/libsymc.so --out DIR [--dtype f16|bf16]
       [--sweep]   (issue 34's table: S = 128 ... 8192 at 16K tokens, D 64 and 128, causal and not)
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

# --sweep: issue 34's table, S = 128 ... 8192 at 16K tokens (B = 16384 / S), causal and not, head dims 64
# and 128; one engine per point (so no box spans B 128 and S 8192 at once)
SWEEP_S = (128, 256, 512, 1024, 2048, 4096, 8192)
SWEEP = [(h, d, causal, [(max(1, 16384 // s), s)]) for h, d in ((12, 64), (16, 128)) for causal in (False, True)
         for s in SWEEP_S]
CONFIGS = [  # (H, D, causal, points [(B, S)])
    (12, 64, False, [(32, 512), (8, 1024), (1, 4096)]),
    (16, 64, True, [(8, 1024), (2, 4096)]),
    (16, 128, False, [(8, 1024), (2, 4096)]),
    (32, 128, True, [(4, 2048)]),
]


def model(h, d, causal, dt, merged=False):
    """merged: Q, K, V and the output as a transformer's projections hold them, [B, S, H*D], split
    into heads by Reshape + Transpose (the kernel reads them through strides)"""
    et = TensorProto.FLOAT16 if dt == torch.float16 else TensorProto.BFLOAT16
    npdt = np.float16
    N = helper.make_node
    if merged:
        io = [helper.make_tensor_value_info(n + "m", et, ["B", "S", h * d]) for n in ("q", "k", "v")]
        out = helper.make_tensor_value_info("om", et, ["B", "S", h * d])
        pre = []
        for n in ("q", "k", "v"):
            pre += [N("Reshape", [n + "m", "split"], [n + "4"]), N("Transpose", [n + "4"], [n], perm=[0, 2, 1, 3])]
        post = [N("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]), N("Reshape", ["ot", "merge"], ["om"])]
        shp = [numpy_helper.from_array(np.array([0, 0, h, d], np.int64), "split"),
               numpy_helper.from_array(np.array([0, 0, h * d], np.int64), "merge")]
    else:
        io = [helper.make_tensor_value_info(n, et, ["B", h, "S", d]) for n in ("q", "k", "v")]
        out = helper.make_tensor_value_info("o", et, ["B", h, "S", d])
        pre, post, shp = [], [], []
    nodes = pre + [N("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), N("MatMul", ["q", "kt"], ["s"]),
                   N("Mul", ["s", "scale"], ["ss"])]
    scale = numpy_helper.from_array(np.array(1.0 / d ** 0.5, npdt), "scale")
    if et == TensorProto.BFLOAT16:
        scale = helper.make_tensor("scale", et, [], [1.0 / d ** 0.5])
    inits = [scale]
    last = "ss"
    if causal:
        nodes += [N("Shape", ["q"], ["sh"]), N("Gather", ["sh", "i2"], ["sq"], axis=0),
                  N("Range", ["zero", "sq", "one"], ["pos"]), N("Unsqueeze", ["pos", "ax0"], ["col"]),
                  N("Unsqueeze", ["pos", "ax1"], ["row"]), N("Greater", ["col", "row"], ["fut"]),
                  N("Where", ["fut", "ninf", "ss"], ["ms"])]
        ninf = helper.make_tensor("ninf", et, [], [float("-inf")])
        inits += [numpy_helper.from_array(np.array(2, np.int64), "i2"),
                  numpy_helper.from_array(np.array(0, np.int64), "zero"),
                  numpy_helper.from_array(np.array(1, np.int64), "one"),
                  numpy_helper.from_array(np.array([0], np.int64), "ax0"),
                  numpy_helper.from_array(np.array([1], np.int64), "ax1"), ninf]
        last = "ms"
    nodes += [N("Softmax", [last], ["p"], axis=-1), N("MatMul", ["p", "v"], ["o"])] + post
    g = helper.make_graph(nodes, "attn", io, [out], inits + shp)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def sweep_table(rows):
    """--sweep's rows as issue 34's table: a line per S, a column per head dim and mask, each cell
    'symc / SDPA TFLOP/s (symc / SDPA)'; a failed point is marked FAIL"""
    cols, cells = [], {}
    for n, b, s, sy, th, sp, ts, tt, err, ok in rows:
        col = n.split("_f16")[0].split("_bf16")[0].split("_", 2)[-1].replace("_", " ")  # "d64", "d64 causal"
        if col not in cols:
            cols.append(col)
        cells[(s, col)] = f"{ts:.0f} / {tt:.0f} ({ts / tt:.2f}x){'' if ok else ' FAIL'}"
    lines = ["| S | " + " | ".join(f"{c}: symc / SDPA TFLOP/s" for c in cols) + " |",
             "|---|" + "---|" * len(cols)]
    for s in sorted({k[0] for k in cells}):
        lines.append(f"| {s} | " + " | ".join(cells.get((s, c), "-") for c in cols) + " |")
    return "\n".join(lines)


def median_ms(fn, iters, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    return float(np.median(ts))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symc", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", default="f16", choices=["f16", "bf16"])
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="symc bench --profile at each point")
    ap.add_argument("--merged", action="store_true",
                    help="Q, K, V, O as [B, S, H*D] split into heads by Reshape/Transpose (a transformer's layout)")
    ap.add_argument("--configs", default=None, help="indices into CONFIGS, comma separated (default all)")
    ap.add_argument("--sweep", action="store_true",
                    help="instead of CONFIGS: S = 128 ... 8192 at 16K tokens, causal and not, D 64 and 128; "
                         "also writes OUT/attention_sweep.md, a line per S (issue 34's table)")
    a = ap.parse_args()
    os.environ["SYMC_LIB"] = os.path.abspath(a.lib)
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "frontend", "torch"))
    from symc.runtime import EngineModule
    dt = torch.float16 if a.dtype == "f16" else torch.bfloat16
    os.makedirs(a.out, exist_ok=True)
    rows, fails = [], 0
    configs = SWEEP if a.sweep else CONFIGS
    pick = [int(i) for i in a.configs.split(",")] if a.configs else range(len(configs))
    for h, d, causal, points in (configs[i] for i in pick):
        name = f"attn_h{h}_d{d}{'_causal' if causal else ''}{'_merged' if a.merged else ''}_{a.dtype}"
        if a.sweep:
            name += f"_s{points[0][1]}"
        path, eng = os.path.join(a.out, name + ".onnx"), os.path.join(a.out, name + ".symx")
        onnx.save(model(h, d, causal, dt, a.merged), path)
        bmax = max(b for b, _ in points)
        smax = max(s for _, s in points)
        ob, os_ = points[0]
        names = ("qm", "km", "vm") if a.merged else ("q", "k", "v")
        shp = (lambda bb, ss: f"{bb}x{ss}x{h * d}") if a.merged else (lambda bb, ss: f"{bb}x{h}x{ss}x{d}")
        spec = ",".join(f"{n}:{shp(1, 1)},{shp(ob, os_)},{shp(bmax, smax)}" for n in names[:1])
        r = subprocess.run([a.symc, "compile", path, "-o", eng, "--shapes", spec], capture_output=True, text=True)
        if r.returncode:
            print(f"FAIL {name}: compile: {r.stderr.strip()}")
            fails += 1
            continue
        src = subprocess.run([a.symc, "inspect", eng], capture_output=True, text=True).stdout
        kind = next((ln.strip() for ln in src.splitlines() if " kernel " in ln and "node o," in ln), "no kernel for o")
        m = EngineModule(eng, input_names=list(names), gpu=True)
        for b, s in points:
            g = torch.Generator(device="cuda").manual_seed(1)
            q, k, v = (torch.randn(b, h, s, d, device="cuda", generator=g).to(dt) for _ in range(3))
            if a.merged:  # the same values in [B, S, H*D]; the output merged back to [B, H, S, D]
                got = m(*(x.transpose(1, 2).reshape(b, s, h * d).contiguous() for x in (q, k, v)))
                got = got.float().reshape(b, s, h, d).transpose(1, 2)
            else:
                got = m(q, k, v).float()
            ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), is_causal=causal)
            err = ((got - ref).norm() / ref.norm()).item()
            ok = err <= 1e-2 and bool(torch.isfinite(got).all())
            fails += not ok
            pt = ",".join(f"{n}:{shp(b, s)}" for n in names)
            js = os.path.join(a.out, f"{name}_{b}x{s}.json")
            cmd = [a.symc, "bench", eng, "--point", pt, "--iters", str(a.iters), "--warmup", str(a.warmup),
                   "--json", js, "--quiet"] + (["--profile"] if a.profile else [])
            r = subprocess.run(cmd, capture_output=True, text=True)
            if a.profile:
                print(r.stdout)
            try:
                sy = json.load(open(js))["points"][0]["p50_ms"]
            except Exception as e:  # noqa: BLE001
                print(f"FAIL {name} {b}x{s}: symc bench: {e}: {r.stderr.strip()[-400:]}")
                fails += 1
                continue
            with torch.no_grad():
                th = median_ms(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), a.iters, a.warmup)
            fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
            rows.append((name, b, s, sy, th, th / sy, fl / sy / 1e9, fl / th / 1e9, err, ok))
            print(f"{'ok  ' if ok else 'FAIL'} {name} B={b} S={s}: symc {sy:.3f} ms ({fl / sy / 1e9:.0f} TFLOP/s), "
                  f"torch sdpa {th:.3f} ms ({fl / th / 1e9:.0f} TFLOP/s), rel err {err:.2e}", flush=True)
        print(f"   {name}: {kind}")
    print(f"\n{torch.cuda.get_device_name()} torch {torch.__version__}, {a.dtype}\n")
    print("| model | B | S | symc ms | torch sdpa ms | speedup | symc TFLOP/s | torch TFLOP/s | rel err |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, b, s, sy, th, sp, ts, tt, err, ok in rows:
        print(f"| {n} | {b} | {s} | {sy:.3f} | {th:.3f} | {sp:.2f}x | {ts:.0f} | {tt:.0f} | {err:.1e}{'' if ok else ' FAIL'} |")
    if a.sweep:
        table = sweep_table(rows)
        print("\n" + table)
        with open(os.path.join(a.out, "attention_sweep.md"), "w") as f:
            f.write(f"{torch.cuda.get_device_name()} torch {torch.__version__}, {a.dtype}, {a.iters} iterations\n\n"
                    + table + "\n")
    json.dump([dict(zip(("model", "B", "S", "symc_ms", "torch_ms", "speedup", "symc_tflops", "torch_tflops",
                         "rel_err", "ok"), r)) for r in rows], open(os.path.join(a.out, "attention.json"), "w"),
              indent=1)
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
