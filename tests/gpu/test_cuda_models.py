"""CUDA backend vs the reference backend on every test model (ctest -L gpu).

Each model is compiled ONCE by `symc compile` (GPU code for the GPU present,
library choices tuned at opt and at bucket representatives of the ranges) and that one engine serves the whole sweep —
min, opt, opt+1, a prime off-opt size and max of every declared range — in
one process (sweep_check: one CUDA context, no recompilation). Inputs are
fresh random data each run (the seed is printed, so a failure can be
replayed with SYMC_GPU_SEED). fp32 must match the reference to a relative
error < 1e-4; the --tf32/--fp16/--bf16 builds of the matrix-heavy models
< 1e-2 (METHOD.md: tf32 ~3e-4, bf16 up to 1e-2).

Models: S1 (the ViT seed, C builder API), the 13 op-family ONNX models,
docs/BENCHMARKS-SUITE.md's S2, S3, M1, an M3-like CNN and M5's pattern at small widths, and
three attention patterns the CUDA target fuses (tests/e2e). The mask models
(mask_pad, mask_causal_pad, mask_bool_where: transformers' exported padding
masks from a runtime attention_mask input; mask_fill_1e9: masked_fill(-1e9)) run every point with each mask
form: no padding, padded rows of random lengths, a fully masked row, and
padding first (left padding).

usage: test_cuda_models.py SYMC SWEEP_CHECK VIT_SEED GEN_MODELS TMPDIR [MODEL...]
environment: SYMC_GPU_PART=k/n runs the k-th of n interleaved parts of the builds (one process a GPU);
SYMC_GPU_POINTS=min,max (a subset of min,opt,opt+1,prime,max);
SYMC_GPU_WRAP="compute-sanitizer --tool memcheck --error-exitcode 9" runs
sweep_check under a wrapper; SYMC_GPU_PRECISIONS=0 skips the tf32/fp16/bf16
builds (SYMC_GPU_PRECISION_FLAGS=--fp16 keeps only that one); SYMC_GPU_HALF=0 skips the models converted to f16 storage
(half_models.py).
"""
import json
import os
import subprocess
import sys
import time

import numpy as np
import onnx

symc, sweep_check, vit_seed, gen_models, tmp = sys.argv[1:6]
only = set(sys.argv[6:])
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "e2e"))
sys.path.insert(0, here)
from models import DEFAULT, FP32_ONLY, MODELS, NO_CUDA, POINTS, RANGES  # noqa: E402

os.makedirs(tmp, exist_ok=True)
subprocess.run([sys.executable, gen_models, tmp], check=True, capture_output=True)
subprocess.run([sys.executable, os.path.join(here, "..", "e2e", "gen_bench_models.py"), tmp], check=True,
               capture_output=True)
seed = int(os.environ.get("SYMC_GPU_SEED", time.time_ns() % 2**32))
print(f"test_cuda_models: seed {seed} (replay with SYMC_GPU_SEED={seed})", flush=True)
rng = np.random.default_rng(seed)
NP = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32,
      onnx.TensorProto.BOOL: np.bool_, onnx.TensorProto.DOUBLE: np.float64, onnx.TensorProto.FLOAT16: np.float16,
      onnx.TensorProto.INT8: np.int8, onnx.TensorProto.UINT8: np.uint8, onnx.TensorProto.INT16: np.int16,
      onnx.TensorProto.UINT16: np.uint16, onnx.TensorProto.UINT32: np.uint32, onnx.TensorProto.UINT64: np.uint64}
failures = 0
summary = []


def fail(what):
    global failures
    failures += 1
    print("FAIL:", what, flush=True)


def random_input(shape, dt):
    if dt in (np.float32, np.float64, np.float16):
        return rng.standard_normal(shape).astype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(np.bool_)
    return rng.integers(1, 5, shape).astype(dt)  # valid indices and no zero divisors in the test models


def attention_mask(shape, form):
    """An attention_mask input [batch, seq] (1 = token, 0 = padding) in one of the forms real batches
    have: "ones" (no padding), "pad" (each row a random length in [1, seq], zeros after it), "full"
    (row 0 fully masked, the others padded: a sequence with no token at all), "left" (each row's
    padding first, as generation batches pad: with a causal mask the query rows before a row's first
    token see no token at all, and the rows after it do)."""
    m = np.ones(shape, np.int64)
    if form == "ones" or len(shape) != 2:
        return m
    for b in range(shape[0]):
        if form == "left":
            m[b, :int(rng.integers(0, shape[1]))] = 0
        else:
            m[b, int(rng.integers(1, shape[1] + 1)):] = 0
    if form == "full":
        m[0, :] = 0
    return m


MASK_FORMS = ("ones", "pad", "full", "left")
WRAP = os.environ.get("SYMC_GPU_WRAP", "").split()
WANT_POINTS = os.environ.get("SYMC_GPU_POINTS", "").split(",") if os.environ.get("SYMC_GPU_POINTS") else None


def run_sweep(label, engine, inputs, tol):
    """inputs: [(name, dtype, [(min, opt, max)] per dim)]"""
    dirs = []
    # a model with an attention_mask input runs every point with each mask form
    forms = MASK_FORMS if any(name == "attention_mask" for name, _, _ in inputs) else (None,)
    for plabel, pick in POINTS:
        if WANT_POINTS and plabel not in WANT_POINTS:
            continue
        for form in forms:
            d = os.path.join(tmp, f"{label}.{plabel}" + (f".{form}" if form else ""))
            os.makedirs(d, exist_ok=True)
            for name, dt, triples in inputs:
                shape = [pick(t) for t in triples]
                x = attention_mask(shape, form) if form and name == "attention_mask" else random_input(shape, dt)
                np.save(os.path.join(d, name + ".npy"), x)
            dirs.append(d)
    t0 = time.time()
    r = subprocess.run(WRAP + [sweep_check, engine, str(tol)] + dirs, capture_output=True, text=True)
    out = (r.stdout + r.stderr).strip()
    print(out, flush=True)
    if r.returncode:
        fail(f"{label}: sweep_check exit {r.returncode}")
    worst = max([float(x.split("rel err ")[1].split(",")[0]) for x in out.splitlines() if "rel err " in x] or [0])
    summary.append((label, len(dirs), "PASS" if r.returncode == 0 else "FAIL", worst, time.time() - t0))


def check_setups(label, engine):
    """mask_pad's two layers make 4 GEMMs, two calls (q, k and v merged by the merge-projections
    pass: x W of n = 3E; o: x W + C): at each new shape the first call makes each cuBLASLt setup
    once and the other layer's step takes it (the setup pool, runtime/cuda/setup_pool.h), so
    made + shared = 4 a point and shared >= 2"""
    js = os.path.join(tmp, label + ".setups.json")
    r = subprocess.run([symc, "bench", engine, "--point", "x:3x77x64,attention_mask:3x77", "--point",
                        "x:5x200x64,attention_mask:5x200", "--iters", "3", "--warmup", "1", "--json", js],
                       capture_output=True, text=True)
    if r.returncode:
        fail(f"{label}: symc bench: {r.stderr.strip()}")
        return
    for pt in json.load(open(js))["points"]:
        made, shared = pt["setups_made"], pt["setups_shared"]
        print(f"{label}: {pt.get('label', '')} cuBLASLt setups made {made}, shared {shared}", flush=True)
        if made + shared != 4 or shared < 2:
            fail(f"{label}: at a new shape the 4 GEMM steps made {made} setups and shared {shared} "
                 "(want made + shared = 4, shared >= 2)")


# SYMC_GPU_PART=k/n: only every n-th build from the k-th (0-based, in this file's fixed order), so n
# processes, one a GPU, run the suite between them (scripts/device_gpu.sh --gpus n)
part_k, part_n = (int(v) for v in os.environ.get("SYMC_GPU_PART", "0/1").split("/"))
builds_seen = 0


def compile_model(label, src, flags):
    global builds_seen
    builds_seen += 1
    if (builds_seen - 1) % part_n != part_k:
        return None
    engine = os.path.join(tmp, label + ".symx")
    t0 = time.time()
    r = subprocess.run([symc, "compile", src, "-o", engine] + flags, capture_output=True, text=True)
    if r.returncode:
        fail(f"{label}: compile: {r.stderr.strip()}")
        return None
    print(f"{label}: compiled in {time.time() - t0:.2f} s", flush=True)
    return engine


def onnx_inputs(path):
    m = onnx.load(path)
    inits = {i.name for i in m.graph.initializer}
    out, flags = [], []
    for inp in m.graph.input:
        if inp.name in inits:
            continue
        triples = []
        for d in inp.type.tensor_type.shape.dim:
            v = d.dim_value if d.HasField("dim_value") else None
            triples.append((v, v, v) if v is not None else RANGES.get(d.dim_param, DEFAULT))
        flags += ["--shapes", inp.name + ":" + ",".join("x".join(str(t[i]) for t in triples) for i in range(3))]
        out.append((inp.name, NP[inp.type.tensor_type.elem_type], triples))
    return out, flags


# S1: the ViT seed (x: f32[B, 196, 768], B in [1, 32], opt 4)
if not only or "s1_vit" in only:
    s1 = os.path.join(tmp, "s1_vit.symir")
    r = subprocess.run([vit_seed, s1], capture_output=True, text=True)
    if r.returncode:
        fail("vit_seed: " + r.stderr)
    else:
        engine = compile_model("s1_vit", s1, [])
        if engine:
            run_sweep("s1_vit", engine, [("x", np.float32, [(1, 4, 32), (196, 196, 196), (768, 768, 768)])], 1e-4)

for name in MODELS:
    if only and name not in only:
        continue
    path = os.path.join(tmp, name + ".onnx")
    inputs, flags = onnx_inputs(path)
    if name in NO_CUDA:  # the CUDA target must refuse it, naming the op it has no kernel for
        r = subprocess.run([symc, "compile", path, "-o", os.path.join(tmp, name + ".symx")] + flags,
                           capture_output=True, text=True)
        refused = "CUDA target" in r.stderr or "has no CUDA kernel" in r.stderr
        if r.returncode != 1 or NO_CUDA[name] not in r.stderr or not refused:
            fail(f"{name}: expected the CUDA target's refusal of {NO_CUDA[name]}, got exit {r.returncode}: "
                 f"{r.stderr.strip()}")
        continue
    engine = compile_model(name, path, flags)
    if engine:
        run_sweep(name, engine, inputs, 1e-4)
        if name == "mask_pad":
            check_setups(name, engine)

# reduced-precision library math on the matrix-heavy models; with --fp16/--bf16 the precision pass
# also stores the elementwise ops' tensors in half (casts fused into kernels): m5_fusion and m2_attn
# exercise those half elementwise kernels against the reference backend's half engine; m2_attn and
# m4_causal (--fp16: small calibrated logits) run the half tensor-core attention on Q and K the
# pass stored in half, read behind its widening casts; m5_fusion's softmax stores its epilogue's
# cast to the f32 output itself
for name in ("s2_scores", "s3_conv", "m1_mlp", "m3_cnn", "m5_fusion", "m2_attn", "m4_causal", "attn_unbind", "swin_window", "gqa_rope", "mask_pad",
             "mask_causal_pad", "mask_bool_where", "mask_fill_1e9") if os.environ.get("SYMC_GPU_PRECISIONS", "1") != "0" else ():
    if only and name not in only:
        continue
    path = os.path.join(tmp, name + ".onnx")
    inputs, flags = onnx_inputs(path)
    for prec in os.environ.get("SYMC_GPU_PRECISION_FLAGS", "--tf32,--fp16,--bf16").split(","):
        label = f"{name}{prec.replace('--', '.')}"
        engine = compile_model(label, path, flags + [prec])
        if engine:
            run_sweep(label, engine, inputs, 1e-2)

# the mma.sync half attention at 64 query rows a block (one m-tile a warp: codegen's cg_att_h16_mt
# takes it where S is at most 64 over its range, as in swin_window) forced at every S with
# SYMC_ATTENTION_MT=1: several row blocks a head, the causal skip and tail, every mask form
for name in ("m2_attn", "m4_causal", "gqa_rope", "mask_pad", "mask_causal_pad", "mask_fill_1e9") \
        if os.environ.get("SYMC_GPU_PRECISIONS", "1") != "0" else ():
    label = f"{name}.fp16.mt1"
    if only and name not in only and label not in only:
        continue
    path = os.path.join(tmp, name + ".onnx")
    inputs, flags = onnx_inputs(path)
    os.environ["SYMC_ATTENTION_MT"], os.environ["SYMC_ATTENTION"] = "1", "mma"
    engine = compile_model(label, path, flags + ["--fp16"])
    del os.environ["SYMC_ATTENTION_MT"], os.environ["SYMC_ATTENTION"]
    if engine:
        src = subprocess.run([symc, "inspect", engine, "--source"], capture_output=True, text=True).stdout
        half = "f16 tensor cores" in src
        if half != (", 64 query rows a block" in src) or (name in ("m2_attn", "m4_causal") and not half):
            fail(f"{label}: expected the half attention kernel at 64 query rows a block")
        run_sweep(label, engine, inputs, 1e-2)

# half storage: every model as model.half() would export it (f16 tensors,
# weights and constants). The CUDA half kernels and cuBLASLt/cuDNN half calls
# against the reference running the same engine (storage rounded to f16 after
# every op, math in double); both round each stored value, so they differ by
# about an f16 ulp per op: 2e-2 on the relative L2 error.
if os.environ.get("SYMC_GPU_HALF", "1") != "0":
    from half_models import extra_models, to_half  # noqa: E402
    for name in MODELS:
        if only and name not in only and name + ".f16" not in only or name in NO_CUDA or name in FP32_ONLY:
            continue
        path = to_half(os.path.join(tmp, name + ".onnx"), os.path.join(tmp, name + ".f16.onnx"))
        inputs, flags = onnx_inputs(path)
        engine = compile_model(name + ".f16", path, flags)
        if engine:
            run_sweep(name + ".f16", engine, inputs, 2e-2)
    for name in extra_models(tmp) + extra_models(tmp, onnx.TensorProto.FLOAT):
        if only and name not in only:
            continue
        inputs, flags = onnx_inputs(os.path.join(tmp, name + ".onnx"))
        engine = compile_model(name, os.path.join(tmp, name + ".onnx"), flags)
        if engine:
            run_sweep(name, engine, inputs, 2e-2)

    # 1x1 convolutions as cuBLASLt GEMMs (bias per channel, residual, ReLU): the f32 model at fp32 math
    # against the reference to 1e-4, and built with --fp16 / --bf16 (half storage by the precision pass),
    # the f16 model as it is, to 2e-2
    from half_models import conv1x1_models  # noqa: E402
    for name in conv1x1_models(tmp):
        for prec in (("", "--fp16", "--bf16") if name.endswith("_f") else ("",)):
            label = name + prec.replace("--", ".")
            if only and label not in only and "conv1x1" not in only:
                continue
            inputs, flags = onnx_inputs(os.path.join(tmp, name + ".onnx"))
            engine = compile_model(label, os.path.join(tmp, name + ".onnx"), flags + ([prec] if prec else []))
            if engine:
                r = subprocess.run([symc, "inspect", engine], capture_output=True, text=True)
                if r.stdout.count("cuBLASLt 1x1 conv") != 4 or r.stdout.count(" conv   ") != 1:
                    fail(f"{label}: expected four 1x1 convolutions as cuBLASLt GEMMs and one cuDNN convolution:\n"
                         f"{r.stdout}{r.stderr}")
                run_sweep(label, engine, inputs, 2e-2 if prec or name.endswith("_h") else 1e-4)

    # GEMMs with an elementwise epilogue (half_models.gemm_epilogue_models): symc's GEMM kernel
    # (SYMC_GEMM_EPILOGUE=kernel, the source must have one kernel per GEMM), and cuBLASLt then the
    # group's own kernel (=library), both against the reference to 2e-2
    from half_models import gemm_epilogue_models  # noqa: E402
    for name in gemm_epilogue_models(tmp):
        for prec in (("--fp16", "--bf16") if name.endswith("_f") else ("",)):
            for route in ("kernel", "library"):
                label = f"{name}{prec.replace('--', '.')}.{route}"
                if only and label not in only and "gemm_epilogue" not in only:
                    continue
                inputs, flags = onnx_inputs(os.path.join(tmp, name + ".onnx"))
                os.environ["SYMC_GEMM_EPILOGUE"] = route
                engine = compile_model(label, os.path.join(tmp, name + ".onnx"), flags + ([prec] if prec else []))
                del os.environ["SYMC_GEMM_EPILOGUE"]
                if engine:
                    r = subprocess.run([symc, "inspect", engine, "--source"], capture_output=True, text=True)
                    # the f32 models' last GEMM also stores the cast to the f32 output as its epilogue
                    want = {"gemm_gelu_f": 2, "gemm_gelu_h": 1, "gemm_silu_f": 2, "gemm_silu_h": 1, "gemm_relu_f": 1,
                            "gemm_relu_h": 1}[name] if route == "kernel" else 0
                    got = r.stdout.count(") with its epilogue: ")
                    if got != want:
                        fail(f"{label}: {got} GEMM kernels with an epilogue, expected {want}")
                    run_sweep(label, engine, inputs, 2e-2)

print("\n| model | points | result | worst rel err | seconds |\n|---|---|---|---|---|")
for label, n, res, worst, secs in summary:
    print(f"| {label} | {n} | {res} | {worst:.2e} | {secs:.1f} |")
print(f"test_cuda_models: {len(summary)} sweeps, {failures} failures")
sys.exit(1 if failures else 0)
