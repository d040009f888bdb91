#!/bin/bash
# compute-sanitizer over the CUDA backend (through sweep_check, so outputs are also checked against
# the reference), at min and max, on the device from the repo root with build/bin carried:
#   bash scripts/device_sanitize.sh [memcheck|racecheck] [MODEL...]
# Default models: the seed models S1, S2, S3, the attention models (flash attention on tensor cores
# and SIMT, causal and padding masks from a runtime attention_mask: mask_pad, mask_causal_pad,
# mask_bool_where), M1, M3 and M5's pattern (row-kernel chains, the BN-folded convs), each also
# built with --fp16 where test_cuda_models.py builds one. The log goes to $OUT/sanitize_TOOL.log;
# the summary lines (ERROR SUMMARY per run) are printed.
set -u
B=build/bin
tool=${1:-memcheck}
[ $# -gt 0 ] && shift
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(s1_vit s2_scores s3_conv attention m1_mlp m5_long m5_fusion m2_attn m4_causal attn3d
                                   m3_cnn mask_pad mask_causal_pad mask_bool_where)
extra=()
[ "$tool" = memcheck ] && extra=(--leak-check full)
SYMC_GPU_WRAP="compute-sanitizer --tool $tool ${extra[*]} --error-exitcode 9" SYMC_GPU_POINTS=min,max \
SYMC_GPU_HALF=0 SYMC_GPU_PRECISION_FLAGS=--fp16 PYTHONUNBUFFERED=1 python3 tests/gpu/test_cuda_models.py $B/symc $B/sweep_check $B/vit_seed \
  tests/frontend/gen_models.py /tmp/gpu_sanitize_$tool "${models[@]}" 2>&1 | tee "${OUT:-/tmp}/sanitize_$tool.log" |
  grep -E 'ERROR SUMMARY|LEAK SUMMARY|FAIL|test_cuda_models'
