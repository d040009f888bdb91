#!/usr/bin/env bash
# Seed corpus of the engine fuzzer (fuzz_engine.c): engines without their
# 12-byte checksum trailer, which the harness re-seals.
#   engine_corpus.sh SYMC ADD_TUNED PYTHON SOURCE_DIR CORPUS_DIR [REGIONS_ENGINE]
# A small attention block with GPU code (kernels, cuBLASLt steps, cubin, PTX),
# the same with tuned entries on its library steps (tests/tools/add_tuned),
# reference-only engines of a convolution/pooling model, elementwise ops,
# data movement and reductions, so the fuzzed runs reach those kernels, and
# (given tests/tools/regions_engine) an engine with 2 regions (format 6), so
# mutations reach the region checks.
set -euo pipefail
symc=$1 add_tuned=$2 python=$3 src=$4 corpus=$5 regions=${6:-}
models=$corpus/../engine_models
mkdir -p "$corpus" "$models"
"$python" "$src/tests/frontend/gen_models.py" "$models" >/dev/null
compile() { # symc compile ARGS..., quiet unless it fails
  "$symc" compile "$@" 2>"$models/compile.log" || { cat "$models/compile.log" >&2; exit 1; }
}
seal_off() { # ENGINE NAME: the engine minus its trailer into the corpus
  local s
  s=$(stat -c %s "$1")
  head -c $((s - 12)) "$1" >"$corpus/$2.fb"
}
compile "$models/attention.onnx" --shapes x:1x1x64,2x8x64,4x16x64 --no-tune -o "$models/a.symx"
seal_off "$models/a.symx" attention
"$add_tuned" "$models/a.symx" "$models/t.symx"
seal_off "$models/t.symx" attention_tuned
compile "$models/conv_pool.onnx" --shapes x:1x3x17x17,2x3x32x30,4x3x40x40 --no-gpu -o "$models/cp.symx"
seal_off "$models/cp.symx" conv_pool
compile "$models/elementwise.onnx" --shapes x:1x8,4x8,8x8 --shapes y:1x8,4x8,8x8 --shapes xi:1x8,4x8,8x8 \
  --shapes yi:1x8,4x8,8x8 --no-gpu -o "$models/ew.symx"
seal_off "$models/ew.symx" elementwise
compile "$models/movement.onnx" --shapes x:1x2x6,4x3x6,8x6x6 --shapes sq:2x2,3x3,6x6 --no-gpu \
  -o "$models/mv.symx"
seal_off "$models/mv.symx" movement
compile "$models/reduce13.onnx" --shapes x:1x1x16,4x8x16,8x16x16 --no-gpu -o "$models/r13.symx"
seal_off "$models/r13.symx" reduce13
if [ -n "$regions" ]; then
  "$regions" "$models/rg.symx"
  seal_off "$models/rg.symx" regions
fi
