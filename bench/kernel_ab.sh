#!/bin/bash
# A/B of library builds on the GPU machine, one after another on one GPU, every timed point checked:
# for each variant NAME=DIR (DIR holds symc and lib/libsymc.so; "main" is build/bin and build/lib)
#   1. bench/bench_attention.py on CONFIGS (default all: head dims 64 and 128, causal and not);
#   2. bench/bench_models.py --precision fp16 on MODELS (default bert) at opt and max with
#      --profile, and from the profile the masked attention step's time (the slowest step whose
#      kernel runs 384 threads a block: the wgmma attention) and the time by op;
#   3. with --check, the attention and mask models of tests/gpu/test_cuda_models.py at --fp16 and
#      --bf16 against the reference backend (a variant's numbers before its times count).
# The first variant runs again at the end, so drift between the first and last runs shows. Each
# command runs under `timeout` (KERNEL_AB_TIMEOUT seconds, default 240): a kernel that hangs (a
# barrier that never completes) costs that much and is reported, and the other variants still run.
# The checks are the longest part (over 150 s a variant on an H200, with bench_attention and BERT
# about 100 s more): with --check give a 600 s device call two variants, or split the variants
# over the GPUs of one machine (CUDA_VISIBLE_DEVICES, KERNEL_AB_DIR and SYMC_CACHE_DIR apiece).
# Variants are built here and carried (scripts/build.sh into a worktree, then strip symc,
# sweep_check and libsymc.so into build/var/NAME/: about 3 MB a variant). The checks run the
# variant's sweep_check where it has one (its runtime: a variant may change the engine format),
# else build/bin's.
# usage: bash bench/kernel_ab.sh [--configs 0,2] [--models bert,gpt2] [--check] NAME=DIR ...
#   e.g. bash bench/kernel_ab.sh --check main=build tma=build/var/att-tma bits=build/var/att-maskbits
set -u
configs=""
models=bert
check=0
while [ $# -gt 0 ]; do
  case $1 in
    --configs) configs=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --check) check=1; shift ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { echo "usage: bash bench/kernel_ab.sh [--configs L] [--models L] [--check] NAME=DIR ..." >&2; exit 2; }
source "$(dirname "$0")/../scripts/device_env.sh" || exit 1
export SYMC_CACHE_DIR=${SYMC_CACHE_DIR:-/tmp/kernel_ab_cache}
W=${KERNEL_AB_DIR:-/tmp/kernel_ab}
T=${KERNEL_AB_TIMEOUT:-240}
exec 3>&1 # the script's stdout: a timeout is reported there, past the pipes that filter a command's output
limit() { timeout "$T" "$@"; local rc=$?; [ $rc = 124 ] && echo "TIMEOUT after $T s: $*" | cut -c1-160 >&3; return $rc; }
mkdir -p "$W"
bin_of() { if [ "$1" = build ]; then echo build/bin/symc; else echo "$1/symc"; fi; }
check_of() { if [ -x "$1/sweep_check" ]; then echo "$1/sweep_check"; else echo build/bin/sweep_check; fi; }
lib_of() { echo "$1/lib/libsymc.so"; }
for v in "$@"; do
  d=${v#*=}
  [ -x "$(bin_of "$d")" ] && [ -f "$(lib_of "$d")" ] || { echo "variant $v: no $(bin_of "$d") or $(lib_of "$d")" >&2; exit 2; }
done
run_variant() { # NAME DIR TAG
  local d=$2 tag=$3 s l
  s=$(bin_of "$d"); l=$(lib_of "$d")
  limit python3 bench/bench_attention.py --symc "$s" --lib "$l" --out "$W/att_$tag" --iters 50 ${configs:+--configs $configs} 2>&1 |
    grep -E "^ok|^FAIL|rror" | sed "s/, rel err.*//; s/^/[$tag] /"
  SYMC_LIB=$l limit python3 bench/bench_models.py --symc "$s" --precision fp16 --points opt,max --check all --iters 30 \
    --warmup 5 --no-compile --profile --out "$W/models_$tag" --work "$W/work_$tag" --models "$models" 2>/dev/null |
    grep -E "^\| [a-z0-9_]+ \| B|all pass|FAIL" | sed "s/^/[$tag] /"
  for f in "$W/models_$tag"/*.profile.txt; do
    [ -f "$f" ] || continue
    echo "[$tag] $(basename "$f" .profile.txt): slowest attention step $(grep 'of 384' "$f" | grep -v '[0-9] us ' | sort -rn | head -1 | awk '{print $1}') ms"
    grep "by op" "$f" | cut -c1-160 | sed "s/^ */[$tag] /"
  done
  if [ $check = 1 ]; then
    SYMC_LIB=$l SYMC_GPU_PRECISION_FLAGS=--fp16,--bf16 limit python3 tests/gpu/test_cuda_models.py "$s" "$(check_of "$d")" \
      build/bin/vit_seed tests/frontend/gen_models.py "$W/gm_$tag" attention m2_attn m4_causal attn3d attention_shapes \
      mask_pad mask_causal_pad mask_bool_where mask_fill_1e9 2>&1 | grep -E "FAIL|sweeps" | sed "s/^/[$tag] /"
  fi
}
for v in "$@"; do run_variant "${v%%=*}" "${v#*=}" "${v%%=*}"; done
first=$1
run_variant "${first%%=*}" "${first#*=}" "${first%%=*}.again"
