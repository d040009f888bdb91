#!/bin/bash
# The real models' build times and compute-sanitizer over their engines (issue 29), in one call on a
# lent GPU machine (the `device` tool), from the repo root with build/bin, build/lib and .whl carried:
#   bash scripts/device_real_builds.sh [--models a,b,...] [--tools memcheck,racecheck] [--seed N]
#        [--sanitize-limit-s S] [--skip-builds] [--budget-s S] [--no-baseline]
# 1. exports: tests/gpu/real_models.py --prepare, the models split over as many processes as GPUs
#    (CPU work), each model's ONNX file and two points' inputs (min with an all-ones mask, and a
#    seeded random point between min and opt with a padded mask);
# 2. builds, one at a time (so each has the machine to itself): `symc compile` of every model in
#    fp32 and --fp16, cold (a fresh build cache and timing cache each), timed, with the progress
#    lines that say where the time went (calibration, NVRTC, tuning) in $OUT/builds.log; the table
#    ($OUT/build_times.md) has the total and each stage against docs/BENCHMARKS-SUITE.md's 10 s budget;
# 3. compute-sanitizer, each tool over every engine at both points (`symc run --backend cuda` with
#    the points' inputs), the runs spread over the GPUs; every run's ERROR SUMMARY in
#    $OUT/sanitize.log, a run cut at --sanitize-limit-s (default 240 s) counted as not run.
# --skip-builds uses the engines already in $WORK (NAME.fp32.symx, NAME.fp16.symx: a sweep's, say)
# and exports only what is missing; --budget-s starts no sanitizer run after that many seconds (the
# runs not started are listed as not run). Each GPU's sanitizer lines go to $OUT/sanitize_K.log as
# they finish (a call cut short keeps them), joined into $OUT/sanitize.log at the end.
# racecheck's hazards are sorted by kernel: in symc's own kernels (the engine's kernel steps) they fail
# the run; in library kernels only (cuBLASLt's nvjet/xmma, cuDNN's) the run is counted as LIBRARY ONLY,
# the kernels named, and a baseline runs PyTorch's fp16 matmuls (the same cuBLAS) under racecheck to show
# whether the library's kernels are flagged there too (--no-baseline skips it).
# Exit 1 on a failed build or a sanitizer error.
set -u
OUT=${OUT:-/tmp/out}
W=${WORK:-/tmp/real_builds}
mkdir -p "$OUT" "$W"
models=bert,gpt2,llama,t5_encoder,vit_s,resnet50,convnext_t,efficientnet_b0,mobilenet_v3_large,swin_t,densenet121
tools=memcheck,racecheck
seed=$(( $(date +%s%N) % 2147483647 ))
slimit=240
skip_builds=0
libonly_baseline=1
budget=1000000
start=$(date +%s)
while [ $# -gt 0 ]; do
  case $1 in
    --models) models=$2; shift 2 ;;
    --tools) tools=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --sanitize-limit-s) slimit=$2; shift 2 ;;
    --skip-builds) skip_builds=1; shift ;;
    --budget-s) budget=$2; shift 2 ;;
    --no-baseline) libonly_baseline=0; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
source "$(dirname "$0")/device_env.sh" || exit 1 # NVRTC and the carried timm wheel
# the GPUs: CUDA_VISIBLE_DEVICES's list when set (the parts then use those), else every GPU
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then IFS=, read -r -a gpus <<< "$CUDA_VISIBLE_DEVICES"
else mapfile -t gpus < <(seq 0 $(( ${NGPU:-$(nvidia-smi -L 2>/dev/null | wc -l)} - 1 ))); fi
ngpu=${#gpus[@]}
[ "$ngpu" -ge 1 ] || { echo "no GPU"; exit 1; }
IFS=, read -r -a ms <<< "$models"
IFS=, read -r -a ts <<< "$tools"
rc=0
echo "== exports: ${#ms[@]} models in $ngpu parts, seed $seed"
t0=$(date +%s)
for ((g = 0; g < ngpu; g++)); do
  part=()
  for ((i = g; i < ${#ms[@]}; i += ngpu)); do part+=("${ms[i]}"); done
  [ ${#part[@]} -gt 0 ] || continue
  list=$(IFS=,; echo "${part[*]}")
  CUDA_VISIBLE_DEVICES=${gpus[g]} PYTHONUNBUFFERED=1 python3 tests/gpu/real_models.py --prepare --work "$W" --seed "$seed" \
    --models "$list" > "$W/prepare_$g.log" 2>&1 &
done
wait
grep -h '^prepared\|Error\|error' "$W"/prepare_*.log | grep -v Warning
echo "exports took $(( $(date +%s) - t0 )) s"

echo "== builds, one at a time, cold"
{
  echo "| model | precision | build s | import s | precision pass s (calibration) | NVRTC s | tuning s | within 10 s |"
  echo "|---|---|---|---|---|---|---|---|"
} > "$OUT/build_times.md"
: > "$OUT/builds.log"
for m in "${ms[@]}"; do
  [ $skip_builds -eq 1 ] && break
  [ -f "$W/$m.plan" ] || { echo "| $m | - | no export | | | | | |" >> "$OUT/build_times.md"; rc=1; continue; }
  read -r -a shapes <<< "$(sed -n 's/^shapes //p' "$W/$m.plan")"
  for prec in fp32 fp16; do
    flag=(); [ $prec = fp16 ] && flag=(--fp16)
    rm -rf "$W/cache"
    s=$(date +%s.%N)
    CUDA_VISIBLE_DEVICES=${gpus[0]} SYMC_CACHE_DIR=$W/cache build/bin/symc compile "$W/$m.onnx" -o "$W/$m.$prec.symx" "${shapes[@]}" "${flag[@]}" \
      > "$W/$m.$prec.build.log" 2>&1
    brc=$?
    e=$(date +%s.%N)
    { echo "## $m $prec (rc $brc)"; cat "$W/$m.$prec.build.log"; } >> "$OUT/builds.log"
    if [ $brc -ne 0 ]; then
      echo "| $m | $prec | FAILED: $(tail -1 "$W/$m.$prec.build.log" | cut -c1-150) | | | | | |" >> "$OUT/build_times.md"
      rc=1
      continue
    fi
    python3 - "$W/$m.$prec.build.log" "$m" "$prec" "$s" "$e" >> "$OUT/build_times.md" <<'EOF'
import re, sys
log, m, prec, s, e = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
at = {}
for ln in open(log):
    g = re.match(r"symc: \[\s*([0-9.]+) s\] (.*)", ln)
    if g:
        at.setdefault(g.group(2).split(":")[0].split(" ")[0], float(g.group(1)))
total = e - s
def span(a, b):
    return f"{at[b] - at[a]:.1f}" if a in at and b in at else "-"
nv = next((float(x) for x in re.findall(r"NVRTC: \d+ modules in ([0-9.]+) s", open(log).read())), None)
tu = next((float(x) for x in re.findall(r"tuned .* in ([0-9.]+) s", open(log).read())), None)
print(f"| {m} | {prec} | {total:.1f} | {span('importing', 'verify')} | {span('precision', 'fuse')} | "
      f"{'-' if nv is None else f'{nv:.1f}'} | {'-' if tu is None else f'{tu:.1f}'} | {'yes' if total <= 10 else 'NO'} |")
EOF
  done
done
[ $skip_builds -eq 1 ] && rm -f "$OUT/build_times.md" "$OUT/builds.log" || cat "$OUT/build_times.md"

echo "== compute-sanitizer: ${ts[*]} over the engines at two points, on $ngpu GPUs (limit ${slimit} s a run)"
jobs=()
for m in "${ms[@]}"; do # model-major: a budget that runs out leaves whole models, not a whole tool, unrun
  for prec in fp32 fp16; do
    [ -f "$W/$m.$prec.symx" ] || continue
    while read -r _ tag rest; do
      for t in "${ts[@]}"; do jobs+=("$t|$m|$prec|$tag|$rest"); done
    done < <(grep '^point ' "$W/$m.plan")
  done
done
for ((g = 0; g < ngpu; g++)); do
  (
    for ((i = g; i < ${#jobs[@]}; i += ngpu)); do
      IFS='|' read -r t m prec tag rest <<< "${jobs[i]}"
      if [ $(( $(date +%s) - start )) -gt "$budget" ]; then echo "$t $m $prec $tag: NOT RUN: the budget ran out"; continue; fi
      extra=(); [ "$t" = memcheck ] && extra=(--leak-check full)
      read -r -a args <<< "$rest"
      log="$W/san.$t.$m.$prec.$tag.log"
      s=$(date +%s)
      CUDA_VISIBLE_DEVICES=${gpus[g]} timeout -k 5 "$slimit" compute-sanitizer --tool "$t" "${extra[@]}" --error-exitcode 9 \
        build/bin/symc run "$W/$m.$prec.symx" --backend cuda "${args[@]}" > "$log" 2>&1
      r=$?
      summary=$(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log" | tail -1)
      [ $r -eq 124 ] || [ $r -eq 137 ] && summary="NOT RUN: cut at ${slimit} s"
      if [ "$t" = racecheck ] && [ $r -eq 9 ]; then
        # whose kernels: symc's (the engine's kernel steps, by name) or the libraries' (cuBLASLt's
        # nvjet/xmma, cuDNN's); a hazard in a library kernel alone is counted apart (see --library-baseline)
        build/bin/symc inspect "$W/$m.$prec.symx" | awk '$2 == "kernel" {print $3}' | sort -u > "$log.own"
        grep -oE '(Race reported between|and) (Read|Write) access at [A-Za-z_0-9]+' "$log" | awk '{print $NF}' |
          sort -u > "$log.hit"
        own=$(comm -12 "$log.own" "$log.hit" | tr '\n' ' ')
        lib=$(comm -13 "$log.own" "$log.hit" | tr '\n' ' ')
        summary="$summary; hazards in symc's kernels: ${own:-none}; in library kernels only: ${lib:-none}"
        [ -z "$own" ] && r=0 && summary="LIBRARY ONLY, $summary"
      fi
      echo "$t $m $prec $tag: rc $r, $(( $(date +%s) - s )) s: ${summary:-$(tail -1 "$log")}"
      if { [ $r -ne 0 ] && [ $r -ne 124 ] && [ $r -ne 137 ]; } || [[ $summary == LIBRARY* ]]; then # what and where: the first reports, kernels named
        grep -m4 -A3 'Race reported\|hazard detected\|Invalid\|Error:\|Barrier error' "$log" | cut -c1-400 |
          sed "s/^/    $t $m $prec $tag | /"
      fi
    done
  ) > "$OUT/sanitize_$g.log" 2>&1 &
done
wait
cat "$OUT"/sanitize_*.log > "$OUT/sanitize.log" && rm -f "$OUT"/sanitize_*.log
cat "$OUT/sanitize.log"
if [[ ",$tools," == *,racecheck,* ]] && [ "$libonly_baseline" = 1 ] && grep -q 'LIBRARY ONLY' "$OUT/sanitize.log"; then
  # the same libraries as PyTorch calls them: fp16 GEMMs of BERT's shapes through torch (cuBLAS),
  # under racecheck; the kernels it flags there are the libraries' own, not how symc calls them
  echo "== racecheck baseline: PyTorch fp16 matmuls (cuBLAS) at BERT's shapes"
  CUDA_VISIBLE_DEVICES=${gpus[0]} timeout -k 5 "$slimit" compute-sanitizer --tool racecheck --error-exitcode 9 python3 -c "
import torch
for m, k, n in ((312, 768, 768), (312, 768, 3072), (312, 3072, 768), (8, 768, 768), (8, 768, 3072)):
    a = torch.randn(m, k, device='cuda', dtype=torch.half)
    w = torch.randn(n, k, device='cuda', dtype=torch.half)
    torch.nn.functional.linear(a, w, torch.randn(n, device='cuda', dtype=torch.half))
torch.cuda.synchronize()
" > "$W/san.racecheck.torch_baseline.log" 2>&1
  echo "torch baseline: rc $?: $(grep -h 'RACECHECK SUMMARY' "$W/san.racecheck.torch_baseline.log" | tail -1)"
  grep -oE '(Race reported between|and) (Read|Write) access at [A-Za-z_0-9]+' "$W/san.racecheck.torch_baseline.log" |
    awk '{print "  flagged under PyTorch too: " $NF}' | sort -u | head -20
fi | tee -a "$OUT/sanitize.log"
n=$(grep -c '^[a-z]* [a-z0-9_]* fp[0-9]* [a-z]*: ' "$OUT/sanitize.log")
clean=$(grep -cE 'rc 0, .*(SUMMARY: 0 (errors|hazards)|LIBRARY ONLY)' "$OUT/sanitize.log")
libonly=$(grep -c 'LIBRARY ONLY' "$OUT/sanitize.log")
cut=$(grep -c 'NOT RUN' "$OUT/sanitize.log")
echo "sanitizer: $n runs, $clean clean ($libonly with racecheck hazards inside library kernels only), $cut not run (cut at the limit or past the budget), $((n - clean - cut)) with errors or failures"
[ $((n - clean - cut)) -eq 0 ] || rc=1
exit $rc
