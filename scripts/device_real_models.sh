#!/bin/bash
# The real-model GPU differential sweep (tests/gpu/real_models.py) in parts side by side, one part a
# GPU, in one call on a lent GPU machine (the `device` tool), from the repo root with build/bin and
# build/lib carried (built here: scripts/build.sh build):
#   bash scripts/device_real_models.sh [--seed N] [--budget-s S] [--frontends onnx,torch] PART...
# Each PART is a comma list of models (tests/gpu/real_models.py's MODELS); part k runs on GPU
# offset + k (offset + k % N with --gpus N: parts share GPUs; the work is mostly export and
# compile on the CPU), so a machine of 4 GPUs runs the parts in the time of the longest. The
# whole sweep in one 4-GPU call of about 7 minutes, GPU 0 left free for the GPU tests:
#   bash scripts/device_real_models.sh --gpu-offset 1 --gpus 3 --budget-s 330 bert,llama gpt2,t5_encoder \
#        vit_s,convnext_t swin_t,mobilenet_v3_large densenet121 resnet50,efficientnet_b0
# Every part uses the same --seed (printed; default: from the clock) and stops at --limit-s (default
# 540 s: a part cut there keeps the models it finished; pass --budget-s below it so no model starts
# too late). Logs and tables go to $OUT:
# --dir D puts the parts' folders under D instead of /tmp. Every part's log (log.txt), table (real_models.md) and numbers (real_models.json) in
# real_models.tar.gz (folders real_<k>); the tables are printed.
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
seed=$(( $(date +%s%N) % 2147483647 ))
args=()
offset=0
limit=540
ngpu=0
dir=/tmp # the parts' folders (real_K, real_work_K): another --dir lets two runs share a machine
while [ $# -gt 0 ]; do
  case $1 in
    --seed) seed=$2; shift 2 ;;
    --gpu-offset) offset=$2; shift 2 ;;
    --limit-s) limit=$2; shift 2 ;;
    --gpus) ngpu=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --budget-s|--frontends|--modes|--random) args+=("$1" "$2"); shift 2 ;;
    *) break ;;
  esac
done
source "$(dirname "$0")/device_env.sh" || exit 1 # NVRTC and the carried timm wheel
echo "== real models: seed $seed, $# parts"
pids=()
k=0
for part in "$@"; do
  gpu=$((offset + (ngpu > 0 ? k % ngpu : k)))
  mkdir -p "$dir/real_$k"
  CUDA_VISIBLE_DEVICES=$gpu PYTHONUNBUFFERED=1 timeout -k 5 "$limit" python3 tests/gpu/real_models.py --out "$dir/real_$k" \
    --work "$dir/real_work_$k" --models "$part" --seed "$seed" "${args[@]}" > "$dir/real_$k/log.txt" 2>&1 &
  pids+=($!)
  k=$((k + 1))
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
k=0
for part in "$@"; do
  echo "== part $k ($part)"
  grep -E '^\|' "$dir/real_$k/real_models.md" 2>/dev/null | grep -v -- '---' || tail -5 "$dir/real_$k/log.txt"
  grep -E '^real_models: [0-9]' "$dir/real_$k/log.txt"
  k=$((k + 1))
done
tar czf "$OUT/real_models.tar.gz" -C "$dir" $(cd "$dir" && ls -d real_[0-9]* 2>/dev/null) 2>/dev/null
exit $rc
