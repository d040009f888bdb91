#!/bin/bash
# The GPU checks of issue 5, in one call on a lent GPU machine (the `device`
# tool), from the repo root with build/bin carried from a build made here:
#   bash scripts/device_gpu.sh [models...]
# Runs: the CUDA backend's bad-input test, the runtime's CUDA unit test, and
# every test model's sweep on the CUDA backend against the reference backend
# (tests/gpu/test_cuda_models.py, what `ctest -L gpu` runs). Logs go to $OUT.
set -u
B=build/bin
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
source "$(dirname "$0")/device_env.sh" || exit 1 # NVRTC and the carried timm wheel
rc=0
echo "== gpu.cuda_errors"
$B/test_cuda_errors 2>&1 | tee "$OUT/cuda_errors.log" || rc=1
if [ -x $B/runtime_test_cuda_backend ]; then
  echo "== runtime.cuda_backend"
  $B/runtime_test_cuda_backend 2>&1 | tail -20 || rc=1
fi
echo "== gpu.cuda_models"
PYTHONUNBUFFERED=1 python3 tests/gpu/test_cuda_models.py $B/symc $B/sweep_check $B/vit_seed \
  tests/frontend/gen_models.py /tmp/gpu_models "$@" > "$OUT/cuda_models.log" 2>&1 || rc=1
grep -v '^PASS' "$OUT/cuda_models.log"
exit $rc
