#!/usr/bin/env bash
# The main job on a fresh machine: install, build, compile the bundled example
# (BENCH.md seed S1, built with the C builder API: batch B in [1, 32], opt 4)
# into one engine, and run that engine across shapes on the CPU reference
# backend (no GPU needed). The last run shows the refusal of an out-of-range size.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build
mkdir -p build/example
build/bin/vit_seed build/example/vit_seed.symir
build/bin/symc inspect build/example/vit_seed.symir
build/bin/symc compile build/example/vit_seed.symir -o build/example/vit_seed.symx
for B in 1 4 13 32; do
  echo "== B=$B"
  build/bin/symc run build/example/vit_seed.symx --shapes "x:${B}x196x768" --backend ref
done
echo "== B=33 (outside the declared range; refused)"
if build/bin/symc run build/example/vit_seed.symx --shapes x:33x196x768; then
  echo "example: B=33 should have been refused" >&2
  exit 1
fi
echo "example: ok"
