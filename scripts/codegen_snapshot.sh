#!/usr/bin/env bash
# Writes what codegen produces for the bench models into OUTDIR, one text
# file per engine: `symc inspect --source` (steps, library calls, aliases,
# memory formula and the generated CUDA C). Used to show that a refactor left
# the generated code unchanged: run it before and after, then `diff -r`.
# No GPU needed (NVRTC compiles for sm_90; tuning is skipped without a GPU, so
# the output does not depend on timings). Models: docs/BENCHMARKS-SUITE.md's suite (S1-S3,
# M1-M5, written by bench/bench_suite.py --symc-only) and the end-to-end test
# models (build/tests/e2e/onnx/*.symx, compiled by the e2e tests).
#
# usage: scripts/codegen_snapshot.sh OUTDIR [BUILD_DIR]
set -euo pipefail
out=${1:?usage: codegen_snapshot.sh OUTDIR [BUILD_DIR]}
build=${2:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
symc=$(cd "$build" && pwd)/bin/symc
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "codegen_snapshot: compiling the bench suite (S1-S3, M1-M5) into $work"
python3 "$root/bench/bench_suite.py" --models all --out "$work/o" --work "$work/w" --symc-only --symc "$symc" \
    > "$work/suite.log" 2>&1 || { tail -20 "$work/suite.log"; exit 1; }
n=0
while IFS= read -r eng; do
    name=$(echo "${eng#$work/w/}" | tr '/' '_')
    # engine paths inside the printed text differ between runs: strip the work dir
    "$symc" inspect "$eng" --source | sed "s#$work#WORK#g" > "$out/${name%.symx}.txt"
    n=$((n + 1))
done < <(find "$work/w" -name '*.symx' | sort)
if [ -d "$build/tests/e2e/onnx" ]; then
    for eng in "$build"/tests/e2e/onnx/*.symx; do
        [ -e "$eng" ] || continue
        "$symc" inspect "$eng" --source > "$out/e2e_$(basename "${eng%.symx}").txt"
        n=$((n + 1))
    done
fi
echo "codegen_snapshot: $n engines in $out"
