#!/usr/bin/env bash
# The main job on a fresh machine: install, build, compile the bundled example
# (docs/BENCHMARKS-SUITE.md seed S1, built with the C builder API: batch B in [1, 32], opt 4)
# into one engine (CUDA kernels compiled by NVRTC inside it), and run that
# engine across shapes on the CPU reference backend (no GPU needed), and also
# on the CUDA backend when a GPU is present. The embedding example runs it
# from C. The last run shows the refusal of an out-of-range size.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build
mkdir -p build/example
build/bin/vit_seed build/example/vit_seed.symir
build/bin/symc inspect build/example/vit_seed.symir
build/bin/symc compile build/example/vit_seed.symir -o build/example/vit_seed.symx
backends=ref
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then backends="ref cuda"; fi
for B in 1 4 13 32; do
  for be in $backends; do
    echo "== B=$B ($be backend)"
    build/bin/symc run build/example/vit_seed.symx --shapes "x:${B}x196x768" --backend $be
  done
done
echo "== the runtime embedded in C (examples/embed.c)"
build/bin/embed build/example/vit_seed.symx x:13x196x768
echo "== B=33 (outside the declared range; refused)"
if build/bin/symc run build/example/vit_seed.symx --shapes x:33x196x768; then
  echo "example: B=33 should have been refused" >&2
  exit 1
fi
echo "example: ok"
