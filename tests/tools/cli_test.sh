#!/usr/bin/env bash
# End-to-end checks of the symc driver and the bundled example: the main job's
# path (build a module with the builder API, save, inspect), exit codes and
# one-line errors for bad usage and bad files, and an independent reader
# (flatc --json with ir/symir.fbs) decoding the file we wrote; given
# REGIONS_ENGINE (tests/tools/regions_engine), `symc inspect` of an engine with
# 2 regions, and flatc with runtime/engine.fbs reading its regions.
# usage: cli_test.sh SYMC VIT_SEED SCHEMA TMPDIR HUGE_ENGINE [REGIONS_ENGINE]
set -u
symc=$1 vit=$2 schema=$3 tmp=$4 huge=$5 regions=${6:-}
mkdir -p "$tmp"
pass=0 fail=0
ok()   { pass=$((pass + 1)); }
bad()  { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# expect CODE DESCRIPTION -- CMD...: runs CMD, checks the exit code, keeps output in $out
expect() {
  local want=$1 what=$2; shift 3
  out=$("$@" 2>&1); local got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$what: exit $got, wanted $want; output: $out"; fi
}
has() { if printf '%s' "$out" | grep -qF -- "$2"; then ok; else bad "$1: no '$2' in: $out"; fi; }
one_line() { if [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; then ok; else bad "$1: not one line: $out"; fi; }

expect 0 "vit_seed" -- "$vit" "$tmp/vit.symir"
expect 0 "inspect" -- "$symc" inspect "$tmp/vit.symir"
has inspect "B in [1, 32] opt 4"
has inspect "x: f32[B, 196, 768]"
has inspect "heads: f32[B, 197, 3, 12, 64] = reshape(qkv) {shape=[B, 197, 3, 12, -1]}"
has inspect "tokens: f32[B, 197, 768] = concat(cls_expand, x) {axis=1}"
# the -1 is solved to 64 and 197 is proven for every B: no guards at all
if printf '%s' "$out" | grep -q '^guards:'; then bad "inspect: S1 needs no guards: $out"; else ok; fi
expect 0 "--help" -- "$symc" --help;        has help "inspect"
expect 0 "--version" -- "$symc" --version;  has version "symc 0."
expect 0 "inspect --help" -- "$symc" inspect --help; has "inspect --help" "usage: symc inspect"

expect 2 "unknown flag" -- "$symc" --frobnicate;            one_line "unknown flag"; has "unknown flag" "unknown flag '--frobnicate'"
expect 2 "unknown command" -- "$symc" frobnicate;           one_line "unknown command"
expect 2 "inspect unknown flag" -- "$symc" inspect --bogus x; one_line "inspect flag"; has "inspect flag" "'--bogus'"
expect 2 "inspect no file" -- "$symc" inspect;             one_line "inspect no file"
expect 1 "missing file" -- "$symc" inspect "$tmp/nope.symir"; one_line "missing file"; has "missing file" "nope.symir"
head -c 100 "$tmp/vit.symir" > "$tmp/trunc.symir"
expect 1 "truncated file" -- "$symc" inspect "$tmp/trunc.symir"; one_line "truncated"; has truncated "corrupt or truncated"
printf 'not a model at all, just some text\n' > "$tmp/text.symir"
expect 1 "wrong identifier" -- "$symc" inspect "$tmp/text.symir"; one_line "identifier"; has identifier "expected 'SYMI'"

# the engine: GPU steps and library calls shown; S1's reshape to the output
# costs nothing (the GEMM writes straight into the caller's buffer)
expect 0 "compile S1" -- "$symc" compile "$tmp/vit.symir" -o "$tmp/vit.symx"
expect 0 "inspect engine" -- "$symc" inspect "$tmp/vit.symx"
has "inspect engine" "gpu: sm_"
has "inspect engine" "input  x: f32[1|4|32, 196, 768]"
has "inspect engine" "gemm   qkv_mm"
has "inspect engine" "bias=qkv.bias"
# memory: both backends' plans with the workspace as a formula in B, and totals
has "inspect engine" "reference backend (nodes, 64-byte offsets): activation workspace"
has "inspect engine" "CUDA backend (GPU steps, 256-byte offsets): activation workspace"
has "inspect engine" "    workspace <= B*"
has "inspect engine" "(cuBLASLt workspace) + workspace = "
if printf '%s' "$out" | grep -q ' copy '; then bad "inspect engine: S1 should need no copy: $out"; else ok; fi
# the engine's last line is the batch-row verdict its build stored, the line inspect prints for the module
rows_line="batch rows: independent over B (each output row b is computed from input rows b alone: requests may run joined along dim 0)"
if [ "$(printf '%s\n' "$out" | tail -n 1)" = "$rows_line" ]; then ok; else bad "inspect engine: last line not '$rows_line': $out"; fi
expect 0 "inspect module rows" -- "$symc" inspect "$tmp/vit.symir"
if [ "$(printf '%s\n' "$out" | tail -n 1)" = "$rows_line" ]; then ok; else bad "inspect module: last line not '$rows_line': $out"; fi
expect 0 "inspect --source" -- "$symc" inspect "$tmp/vit.symx" --source
has "inspect --source" 'extern "C" __global__'
expect 2 "--source on a module" -- "$symc" inspect "$tmp/vit.symir" --source; one_line "--source on a module"
expect 0 "compile --no-gpu" -- "$symc" compile "$tmp/vit.symir" --no-gpu -o "$tmp/vit_ref.symx"
# the compile driver's hooks: --dump-after prints the IR after that pass; an unknown pass is refused
expect 0 "dump-after" -- "$symc" compile "$tmp/vit.symir" --no-gpu --dump-after=infer-shapes -o "$tmp/dump.symx"
has "dump-after" "; IR after infer-shapes"; has "dump-after" "x: f32[B, 196, 768]"; has "dump-after" "symc: wrote"
expect 1 "dump-after unknown" -- "$symc" compile "$tmp/vit.symir" --no-gpu --dump-after=nope -o "$tmp/dump.symx"
one_line "dump-after unknown"; has "dump-after unknown" "unknown pass 'nope' for --dump-after (passes: verify, infer-shapes"
expect 0 "inspect ref engine" -- "$symc" inspect "$tmp/vit_ref.symx"; has "inspect ref engine" "gpu: none"
has "inspect ref engine" "    workspace <= B*"
if printf '%s' "$out" | grep -q 'CUDA backend (GPU steps'; then bad "inspect ref engine: no GPU plan expected: $out"; else ok; fi
# --dump-after=fuse: the module with the fused groups the CUDA target will run;
# none without GPU code; the pass names come from the pipeline's table
expect 0 "dump after fuse" -- "$symc" compile "$tmp/vit.symir" --no-tune --dump-after=fuse -o "$tmp/vit_d.symx"
has "dump after fuse" "; IR after fuse"
has "dump after fuse" "fused groups (cuda):"
has "dump after fuse" "  qkv_mm (matmul): library call with qkv (bias)"
expect 0 "dump after fuse --no-gpu" -- "$symc" compile "$tmp/vit.symir" --no-gpu --dump-after=fuse -o "$tmp/vit_d.symx"
if printf '%s' "$out" | grep -q 'fused groups'; then bad "dump after fuse --no-gpu: no plan expected: $out"; else ok; fi
expect 0 "compile --help" -- "$symc" compile --help
has "compile --help" "verify, infer-shapes, check-sizes, fold-constants, drop-identities, roll-gather, space-to-depth, compose-moves, fold-batch-norm, patchify, layout, fold-scale, fold-gelu, fold-rms-norm, dce, precision, merge-projections, unbind-heads, fuse"
has "compile --help" "SYMC_CACHE_DIR"
# -q: errors only; a build from a fresh cache folder, then one from the cache, is the same engine
expect 0 "compile -q" -- env SYMC_CACHE_DIR="$tmp/cache" "$symc" compile "$tmp/vit.symir" -q -o "$tmp/vit_q.symx"
if [ -z "$out" ]; then ok; else bad "compile -q printed: $out"; fi
if [ -n "$(ls "$tmp/cache/nvrtc" 2>/dev/null)" ]; then ok; else bad "compile -q: nothing in the build cache"; fi
expect 0 "compile from the cache" -- env SYMC_CACHE_DIR="$tmp/cache" "$symc" compile "$tmp/vit.symir" -q -o "$tmp/vit_c.symx"
if cmp -s "$tmp/vit_q.symx" "$tmp/vit_c.symx"; then ok; else bad "the engine built from the cache differs"; fi
expect 1 "unknown pass" -- "$symc" compile "$tmp/vit.symir" --dump-after=fusion -o "$tmp/vit_d.symx"
one_line "unknown pass"; has "unknown pass" "(passes: verify, infer-shapes, check-sizes, fold-constants, drop-identities, roll-gather, space-to-depth, compose-moves, fold-batch-norm, patchify, layout, fold-scale, fold-gelu, fold-rms-norm, dce, precision, merge-projections, unbind-heads, fuse)"
expect 2 "two precisions" -- "$symc" compile "$tmp/vit.symir" --fp16 --bf16 -o "$tmp/x.symx"; one_line "two precisions"
expect 1 "bad arch" -- "$symc" compile "$tmp/vit.symir" --arch sm_12345 -o "$tmp/x.symx"; one_line "bad arch"
has "bad arch" "sm_12345"
out=$("$symc" run "$tmp/vit.symx" --shapes x:2x196x768 --backend cuda 2>&1); rc=$?
if [ "$rc" = 0 ] || { [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; }; then ok; else bad "run --backend cuda: exit $rc: $out"; fi

# sizes from dims that do not fit in 64 bits (issue 13): an engine whose range
# allows B = 2^55 with x: f32[B, 128] (2^64 bytes), written without the
# compile-time check; run refuses the size in one line instead of wrapping it
# to a small buffer and filling 2^62 floats into it
expect 0 "huge_engine" -- "$huge" "$tmp/huge.symir" "$tmp/huge.symx"
expect 1 "run: 2^64-byte input" -- "$symc" run "$tmp/huge.symx" --shapes x:36028797018963968x128
one_line "run: 2^64-byte input"
has "run: 2^64-byte input" "symc: input 'x' of shape [36028797018963968, 128] (f32) is too large: its size in bytes does not fit in 64 bits"
expect 0 "run: huge engine in range" -- "$symc" run "$tmp/huge.symx" --shapes x:3x128; has "run: huge engine in range" "act: f32[3, 128]"
# ... and `symc compile` refuses such a range: the tensor, its node, the symbol and its range, the fix
expect 1 "compile: 2^64-byte tensor" -- "$symc" compile "$tmp/huge.symir" --no-gpu -o "$tmp/huge2.symx"
one_line "compile: 2^64-byte tensor"
has "compile: 2^64-byte tensor" "input 'x' (f32[B, 128], a graph input) takes (B*512) bytes, which does not fit in int64 at the largest declared sizes"
has "compile: 2^64-byte tensor" "B in [1, 4611686018427387904]"
has "compile: 2^64-byte tensor" "lower the max of B to at most 18014398509481983"
# a .npy header claiming 2 TiB in a small file: refused before allocating
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 16, 16), }" > "$tmp/huge.npy"
expect 1 "run: .npy header larger than the file" -- "$symc" run "$tmp/vit.symx" --input x="$tmp/huge.npy"
one_line "run: .npy header larger than the file"
has "run: .npy header larger than the file" "huge.npy' is truncated: its header gives shape [2147483648, 16, 16] of <f4, 2199023255552 bytes of data, but the file holds 0 after the header"

# --shapes for an input the engine does not have: refused with the engine's inputs
expect 1 "run: unknown --shapes input" -- "$symc" run "$tmp/vit.symx" --shapes x:2x196x768 --shapes y:3x4
one_line "run: unknown --shapes input"
has "run: unknown --shapes input" "run: --shapes y:...: no input named 'y' (inputs: 'x')"
expect 1 "run: unknown --input" -- "$symc" run "$tmp/vit.symx" --shapes x:2x196x768 --input y=a.npy
has "run: unknown --input" "run: --input y=a.npy: no input named 'y' (inputs: 'x')"

# a directory or a FIFO where a file is expected: said so, not a size or a hang
mkdir -p "$tmp/dir.onnx" "$tmp/dir.symir" "$tmp/dir.symx" "$tmp/dir.npy"
expect 1 "compile a directory" -- "$symc" compile "$tmp/dir.onnx" --shapes x:1x4,2x4,3x4 -o "$tmp/d.symx"
one_line "compile a directory"; has "compile a directory" "model '$tmp/dir.onnx' is a directory, not a file"
expect 1 "compile a .symir directory" -- "$symc" compile "$tmp/dir.symir" -o "$tmp/d.symx"
has "compile a .symir directory" "is a directory, not a file"
expect 1 "inspect a directory" -- "$symc" inspect "$tmp/dir.symir"; has "inspect a directory" "module '$tmp/dir.symir' is a directory"
expect 1 "inspect an engine directory" -- "$symc" inspect "$tmp/dir.symx"; has "inspect an engine directory" "engine '$tmp/dir.symx' is a directory"
expect 1 "run a directory" -- "$symc" run "$tmp/dir.symx" --shapes x:2x196x768; one_line "run a directory"
has "run a directory" "engine '$tmp/dir.symx' is a directory, not a file"
expect 1 "--input a directory" -- "$symc" run "$tmp/vit.symx" --input x="$tmp/dir.npy"; has "--input a directory" "dir.npy' is a directory, not a file"
rm -f "$tmp/fifo.onnx"
if mkfifo "$tmp/fifo.onnx" 2>/dev/null; then
  expect 1 "compile a FIFO" -- timeout 20 "$symc" compile "$tmp/fifo.onnx" --shapes x:1x4,2x4,3x4 -o "$tmp/d.symx"
  has "compile a FIFO" "model '$tmp/fifo.onnx' is not a regular file"
fi

# inputs the fuzzers once crashed on: loaded or refused in one line, never a crash
for f in "$(dirname "$0")"/../fuzz/regressions/symir-*; do
  [ -e "$f" ] || continue
  out=$("$symc" inspect "$f" 2>&1); rc=$?
  if [ "$rc" = 0 ] || { [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; }; then ok; else bad "regression $f: exit $rc: $out"; fi
done

for f in "$(dirname "$0")"/../fuzz/regressions/onnx-*; do
  [ -e "$f" ] || continue
  out=$("$symc" compile "$f" --shapes x:1x196x768,4x196x768,32x196x768 -o "$tmp/regression.symx" 2>&1); rc=$?
  if [ "$rc" = 0 ] || { [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; }; then ok; else bad "regression $f: exit $rc: $out"; fi
done

# an engine with 2 regions (format 6): the regions section (conditions, each region's symbol
# ranges), the declared hull, then every graph's sections with its own ranges
if [ -n "$regions" ]; then
  expect 0 "regions_engine" -- "$regions" "$tmp/regions.symx"
  expect 0 "inspect regions" -- "$symc" inspect "$tmp/regions.symx"
  for want in "engine small_regions (format 6," "regions: 2 (the first whose condition holds runs)" \
      "region 0 'B <= 1': condition B <= 1; symbols C in [1, 8] opt 3" \
      "region 1 '2 <= B': condition 2 <= B; symbols B in [2, 8] opt 3, C in [1, 8] opt 3" \
      "symbols (the declared hull):" "region 0 'B <= 1':" "region 1 '2 <= B':" "input  x: f32[1, 4]" \
      "input  x: f32[2|3|8, 4]" "output r: f32[2|3|8, 2, 2]"; do
    has "inspect regions" "$want"
  done
  # the fixture is assembled without a batch-row verdict, as every engine built before it: unknown
  has "inspect regions" "batch rows: unknown (the engine was built before symc stored the batch-row proof"
  if command -v flatc >/dev/null; then
    rm -f "$tmp/regions.json"
    expect 0 "flatc --json regions" -- flatc --json --raw-binary --size-prefixed --strict-json -I "$(dirname "$schema")" \
      -o "$tmp" "$(dirname "$schema")/../runtime/engine.fbs" -- "$tmp/regions.symx"
    for want in '"format_version": 6' '"name": "B <= 1"' '"name": "2 <= B"' '"region_slots": 3'; do
      if grep -qF -- "$want" "$tmp/regions.json"; then ok; else bad "flatc: no '$want' in $tmp/regions.json"; fi
    done
    if grep -qF '"batch_rows"' "$tmp/regions.json"; then bad "flatc: a batch_rows table in the fixture"; else ok; fi
  fi
fi

# an independent FlatBuffers reader agrees with ours
if command -v flatc >/dev/null; then
  rm -f "$tmp/vit.json"
  expect 0 "flatc --json" -- flatc --json --raw-binary --strict-json -o "$tmp" "$schema" -- "$tmp/vit.symir"
  for want in '"name": "B"' '"op": "reshape"' '"producer": "symc 0.' '"min": 1' '"max": 32' '"opt": 4'; do
    if grep -qF -- "$want" "$tmp/vit.json"; then ok; else bad "flatc: no '$want' in $tmp/vit.json"; fi
  done
  # the engine's batch-row verdict as the schema reads it: state 3 (independent) over symbol 0 (B)
  rm -f "$tmp/vit_ref.json"
  expect 0 "flatc --json engine" -- flatc --json --raw-binary --size-prefixed --strict-json -I "$(dirname "$schema")" \
    -o "$tmp" "$(dirname "$schema")/../runtime/engine.fbs" -- "$tmp/vit_ref.symx"
  if tr -d ' \n' <"$tmp/vit_ref.json" | grep -qF '"batch_rows":{"state":3,"symbol":0}'; then ok
  else bad "flatc: no batch_rows state 3 over symbol 0 in $tmp/vit_ref.json"; fi
else
  bad "flatc not installed"
fi

echo "cli_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
