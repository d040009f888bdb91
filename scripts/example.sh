#!/usr/bin/env bash
# The main job on a fresh machine: install, build, then run the bundled example.
# Until the compiler lands, the example is the seed ViT pattern (BENCH.md S1)
# built with the C builder API, saved as .symir, and inspected.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/build.sh build
build/bin/vit_seed build/vit_seed.symir
build/bin/symc inspect build/vit_seed.symir
