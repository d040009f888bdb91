#!/bin/bash
# The model zoo on the CUDA backend (issue 15's "GPU sweep over the zoo"), in one
# call on a lent GPU machine (the `device` tool), from the repo root:
#   bash scripts/device_zoo.sh            # parts A and B below, about 7 minutes at most
#   bash scripts/device_zoo.sh all        # every zoo model at small sizes (limit 480 s)
#   bash scripts/device_zoo.sh NAME...    # those zoo models (SYMC_ZOO_ONLY) at small sizes (limit 480 s)
# tests/zoo/test_zoo.py with SYMC_ZOO_GPU=1: each model built with random
# weights, compiled with GPU code through symc.compile and both ONNX exporters,
# run with torch CUDA tensors and compared with eager fp32 on the GPU with TF32
# off (relative error < 1e-4 at min, opt, max and an off-opt size; models in
# NO_CUDA stay on the reference backend and the log says so).
#
# Time: the zoo's cost is Python (building the models, torch.export, the two
# ONNX exporters) and symc's compile (NVRTC), not the GPU run, about 10-25 s a
# model for its three paths on an idle host, so the default is a subset that
# covers each family of ops the zoo has, under a time limit a part:
#   A  small sizes (limit 300 s): ResNet-18 (convs), MobileNetV2 (depthwise),
#      Swin-T (windows, shifted masks, pads), ConvNeXt-atto (7x7 depthwise,
#      layer norm), LeViT (attention biases), BERT (encoder attention), GPT-2
#      (causal), Qwen2 (rotary, GQA, RMSNorm, SwiGLU), the Whisper encoder
#      (conv1d), wav2vec2 (strided conv1d, group norm), CLIP vision
#   B  full sizes (SYMC_ZOO_FULL=1: the libraries' default configs, images
#      224..272): torchvision ResNet-18 and HF DistilBERT (limit 120 s)
# The other zoo models: `all`, or by name, in a second call. A part that runs
# out of time prints "TIMEOUT" (and fails); each path's log line gives its build
# and check seconds. Logs go to $OUT (zoo_A.log, ...).
#
# Needs: torch, torchvision, transformers, onnxscript (KINDS.md lists them on
# the image) and timm. Where timm is missing, carry it as a wheel: here,
#   python3 -m pip download --no-deps timm==1.0.31 -d .whl   (pure Python)
# and name .whl in carry; this script installs .whl/*.whl into /tmp/site.
# symc itself: build/bin/symc and build/lib/libsymc.so when carried and they
# run there, else a build on the device into build-device (cmake, ~1-2 min).
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
source "$(dirname "$0")/device_env.sh" || exit 1 # NVRTC and the carried timm wheel
missing=$(python3 -c '
import importlib
for m in ("torch", "torchvision", "transformers", "timm", "onnxscript"):
    try:
        importlib.import_module(m)
    except Exception:
        print(m, end=" ")')
if [ -n "$missing" ]; then
  echo "FAIL: python packages missing on the device: $missing(the zoo would SKIP); carry them as wheels (see the header)"
  exit 1
fi
B=build
if ! { [ -x $B/bin/symc ] && [ -e $B/lib/libsymc.so ] && $B/bin/symc --help >/dev/null 2>&1; }; then
  echo "== build (no runnable build/bin/symc and build/lib/libsymc.so carried)"
  B=build-device
  if ! { cmake -S . -B $B -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build $B -j"$(nproc)" --target symc symc_shared; } \
    > "$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"
    exit 1
  fi
fi
python3 -c 'import torch; print("torch", torch.__version__, "on", torch.cuda.get_device_name(0))'

rc=0
part() { # part NAME LIMIT_S [ENV=VALUE...]: one zoo run under a time limit
  local name=$1 limit=$2
  shift 2
  echo "== zoo $name (limit ${limit} s)"
  env SYMC_ZOO_GPU=1 PYTHONUNBUFFERED=1 "$@" timeout -k 10 "$limit" \
    python3 tests/zoo/test_zoo.py $B/lib/libsymc.so $B/bin/symc > "$OUT/zoo_$name.log" 2>&1
  local r=$?
  grep -E '^\[|^\||FAIL|passed in|note ' "$OUT/zoo_$name.log"
  if [ $r = 124 ] || [ $r = 137 ]; then
    echo "TIMEOUT: zoo $name ran past ${limit} s"
  elif [ $r != 0 ]; then
    tail -15 "$OUT/zoo_$name.log"
  fi
  [ $r = 0 ] || rc=1
}
SUBSET="torchvision resnet18,torchvision mobilenet_v2,torchvision swin_t,timm convnext_atto,timm levit_128s"
SUBSET="$SUBSET,hf bert,hf gpt2,hf qwen2,hf whisper_encoder,hf wav2vec2,hf clip_vision"
if [ "${1:-}" = all ]; then
  part all 480
elif [ $# -gt 0 ]; then
  part only 480 SYMC_ZOO_ONLY="$(IFS=,; echo "$*")"
else
  part A 300 SYMC_ZOO_ONLY="$SUBSET"
  part B 120 SYMC_ZOO_FULL=1 SYMC_ZOO_ONLY="torchvision resnet18,hf distilbert"
fi
exit $rc
