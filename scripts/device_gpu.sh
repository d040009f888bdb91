#!/bin/bash
# The GPU checks of issue 5, in one call on a lent GPU machine (the `device`
# tool), from the repo root with build/bin carried from a build made here:
#   bash scripts/device_gpu.sh [--gpus N] [models...]
# (--gpus N: the model builds split over N GPUs, one process each, logs cuda_models_K.log)
# Runs: the CUDA backend's bad-input test, the runtime's CUDA unit test, the region engines'
# GPU tests (gpu.cuda_regions, gpu.cuda_compile_regions), the produced sizes' GPU tests
# (gpu.cuda_select_kernels, gpu.cuda_produced), contexts on every visible GPU with host I/O (gpu.cuda_devices), and
# every test model's sweep on the CUDA backend against the reference backend
# (tests/gpu/test_cuda_models.py), and LLM decoding with a KV cache on CUDA (gpu.kv_decode,
# tests/llm/test_kv_decode.py --cuda, in the background on the last GPU from the start): what
# `ctest -L gpu` runs. Logs go to $OUT.
set -u
ngpu=1
if [ "${1:-}" = --gpus ]; then ngpu=$2; shift 2; fi
B=build/bin
root=$PWD
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
source "$(dirname "$0")/device_env.sh" || exit 1 # NVRTC and the carried timm wheel
rc=0
# the KV-cache decoder (GPT-2, Llama: export, build, 64 greedy steps against eager transformers) runs
# beside the rest; mostly CPU work
CUDA_VISIBLE_DEVICES=$((ngpu - 1)) PYTHONUNBUFFERED=1 python3 tests/llm/test_kv_decode.py $B/symc \
  build/lib/libsymc.so /tmp/gpu_kv_decode --cuda > "$OUT/kv_decode.log" 2>&1 &
kv=$!
echo "== gpu.cuda_errors"
$B/test_cuda_errors 2>&1 | tee "$OUT/cuda_errors.log" || rc=1
if [ -x $B/runtime_test_cuda_backend ]; then
  echo "== runtime.cuda_backend"
  $B/runtime_test_cuda_backend 2>&1 | tail -20 || rc=1
fi
# engines with regions (issue 32); the kernels of produced sizes by hand, then through the engine (produced sizes)
for t in test_cuda_devices test_cuda_regions test_cuda_compile_regions test_cuda_select_kernels test_cuda_produced; do
  if [ -x $B/$t ]; then
    echo "== $t"
    mkdir -p "/tmp/$t" && (cd "/tmp/$t" && "$root/$B/$t") > "$OUT/$t.log" 2>&1 || { rc=1; echo "FAILED: $t"; }
    tail -5 "$OUT/$t.log"
  fi
done
echo "== gpu.cuda_models ($ngpu GPUs)"
pids=()
for ((k = 0; k < ngpu; k++)); do # part k on GPU k; each part writes its log as it goes
  log="$OUT/cuda_models.log"; [ "$ngpu" -gt 1 ] && log="$OUT/cuda_models_$k.log"
  CUDA_VISIBLE_DEVICES=$k SYMC_GPU_PART=$k/$ngpu PYTHONUNBUFFERED=1 python3 tests/gpu/test_cuda_models.py $B/symc \
    $B/sweep_check $B/vit_seed tests/frontend/gen_models.py /tmp/gpu_models_$k "$@" > "$log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || rc=1; done
grep -hv '^PASS' "$OUT"/cuda_models*.log
echo "== gpu.kv_decode"
wait "$kv" || { rc=1; echo "FAILED: gpu.kv_decode"; }
tail -n 5 "$OUT/kv_decode.log"
exit $rc
