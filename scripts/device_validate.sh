#!/bin/bash
# What every change to codegen/, runtime/ or passes/ runs on the GPU machine before it lands, as one
# device call: the GPU suite (scripts/device_gpu.sh) and the real-model sweep through both frontends
# (scripts/device_real_models.sh: torch.export's six text models, ONNX's thirteen models; fp32 and
# --fp16, padding masks, random in-range points), side by side, each under its own time limit.
#   bash scripts/device_validate.sh [--gpus 1|2] [--seed N] [--suite-s S] [--sweep-s S] [--parts L]
# --gpus 2 (default when two GPUs are visible): the suite's model builds split over both GPUs, the
# two sweeps on GPU 1 (their parts share it: the work is mostly export and compile on the CPU).
# --gpus 1: everything on GPU 0 (the suite then needs about 480 s beside the sweeps).
# --suite-s: the suite's limit (default 480 s); --sweep-s: each sweep's limit (default 420 s; no model
# starts after 80% of it). A part cut by its limit keeps what it finished and says so.
# --parts: which of suite, torch, onnx run (default all three, comma separated). On one GPU the three
# need more than one 600 s device call: e.g. --parts suite,torch in one call, --parts onnx in the next.
# Every log is written into $OUT as it goes (a call cut by the device's limit still returns them):
# gpu.log and g/ (the suite), torch.log and t/, onnx.log and o/; the summary is printed at the end:
# each suite's counts, every FAIL line, each part's exit status and seconds. rc: 0 when all passed.
# At the end g/ is packed into g.tar.gz (the device returns at most 8 files from $OUT: six then).
# From the repo root, with build/bin and build/lib built here (scripts/build.sh build) and carried.
set -u
OUT=${OUT:-/tmp/out}
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$ngpu" -ge 2 ] && ngpu=2 || ngpu=1
seed=$(($(date +%s) % 100000))
suite_s=480
sweep_s=420
parts=suite,torch,onnx
usage="usage: bash scripts/device_validate.sh [--gpus 1|2] [--seed N] [--suite-s S] [--sweep-s S] [--parts suite,torch,onnx]"
while [ $# -gt 0 ]; do
  case $1 in
    --gpus) ngpu=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --suite-s) suite_s=$2; shift 2 ;;
    --sweep-s) sweep_s=$2; shift 2 ;;
    --parts) parts=$2; shift 2 ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
done
case $ngpu in 1 | 2) ;; *) echo "device_validate: --gpus must be 1 or 2" >&2; exit 2 ;; esac
for p in ${parts//,/ }; do
  case $p in suite | torch | onnx) ;; *) echo "device_validate: --parts: no part '$p' (suite, torch, onnx)" >&2; exit 2 ;; esac
done
has() { case ",$parts," in *",$1,"*) return 0 ;; esac; return 1; }
mkdir -p "$OUT"
source "$(dirname "$0")/device_env.sh" || exit 1
export SYMC_CACHE_DIR=${SYMC_CACHE_DIR:-/tmp/validate_cache}
sweep_gpu=$((ngpu - 1))
budget=$((sweep_s * 4 / 5))
t0=$(date +%s)
stamp() { echo "$1 rc $2 after $(($(date +%s) - t0)) s"; }
echo "device_validate: $ngpu GPU(s), parts $parts, seed $seed (torch), $((seed + 1)) (ONNX); suite limit $suite_s s, sweeps $sweep_s s"
has suite && (OUT=$OUT/g timeout "$suite_s" bash scripts/device_gpu.sh --gpus "$ngpu" > "$OUT/gpu.log" 2>&1
 stamp suite $? >> "$OUT/gpu.log") &
has torch && (OUT=$OUT/t bash scripts/device_real_models.sh --seed "$seed" --dir /tmp/validate_t --gpu-offset "$sweep_gpu" --gpus 1 \
   --budget-s "$budget" --limit-s "$sweep_s" --frontends torch llama_hd128,bert bert_cls,t5_encoder gpt2,llama \
   > "$OUT/torch.log" 2>&1
 stamp torch-sweep $? >> "$OUT/torch.log") &
has onnx && (OUT=$OUT/o bash scripts/device_real_models.sh --seed $((seed + 1)) --dir /tmp/validate_o --gpu-offset "$sweep_gpu" \
   --gpus 1 --budget-s "$budget" --limit-s "$sweep_s" --frontends onnx bert,llama_hd128 bert_cls,llama gpt2,t5_encoder \
   vit_s,convnext_t swin_t,mobilenet_v3_large densenet121,resnet50,efficientnet_b0 > "$OUT/onnx.log" 2>&1
 stamp onnx-sweep $? >> "$OUT/onnx.log") &
wait
rc=0
if has suite; then
  echo "== the GPU suite"
  grep -hE "checks, [0-9]+ failed|sweeps, [0-9]+ failures|test_kv_decode: |FAIL" "$OUT/gpu.log" "$OUT"/g/cuda_models*.log \
    2>/dev/null | sort -u | cut -c1-220
  grep -h "^suite rc" "$OUT/gpu.log"
  grep -q "^suite rc 0 " "$OUT/gpu.log" || rc=1
fi
for f in torch onnx; do
  has $f || continue
  echo "== the real-model sweep, $f"
  grep -hE "^real_models: [0-9]|FAIL" "$OUT/$f.log" | cut -c1-220
  grep -h "sweep rc" "$OUT/$f.log"
  grep -q "sweep rc 0 " "$OUT/$f.log" || rc=1
done
# the device returns at most 8 files from $OUT: the suite's logs go back as one archive
[ -d "$OUT/g" ] && tar czf "$OUT/g.tar.gz" -C "$OUT" g && rm -rf "$OUT/g"
echo "device_validate: rc $rc after $(($(date +%s) - t0)) s"
exit $rc
