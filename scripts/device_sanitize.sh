#!/bin/bash
# compute-sanitizer memcheck on the seed models S1, S2, S3 (and the attention
# models, M1, M3 and M5's pattern, which exercise the fused kernels: flash
# attention on tensor cores and SIMT, row-kernel chains, the BN-folded
# convs) at min and max, on
# the CUDA backend (through sweep_check, so outputs are also checked against
# the reference). Run on the device from the repo root with build/bin carried.
set -u
B=build/bin
SYMC_GPU_WRAP="compute-sanitizer --tool memcheck --leak-check full --error-exitcode 9" SYMC_GPU_POINTS=min,max \
SYMC_GPU_PRECISIONS=0 PYTHONUNBUFFERED=1 python3 tests/gpu/test_cuda_models.py $B/symc $B/sweep_check $B/vit_seed \
  tests/frontend/gen_models.py /tmp/gpu_sanitize s1_vit s2_scores s3_conv attention m1_mlp m5_long m5_fusion \
  m2_attn m4_causal attn3d m3_cnn 2>&1 | tee "${OUT:-/tmp}/sanitize.log" |
  grep -E 'ERROR SUMMARY|LEAK SUMMARY|sweep_check|FAIL|test_cuda_models'
