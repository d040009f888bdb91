#!/usr/bin/env bash
# End-to-end checks of the symc driver and the bundled example: the main job's
# path (build a module with the builder API, save, inspect), exit codes and
# one-line errors for bad usage and bad files, and an independent reader
# (flatc --json with ir/symir.fbs) decoding the file we wrote.
# usage: cli_test.sh SYMC VIT_SEED SCHEMA TMPDIR
set -u
symc=$1 vit=$2 schema=$3 tmp=$4
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
expect 0 "inspect --source" -- "$symc" inspect "$tmp/vit.symx" --source
has "inspect --source" 'extern "C" __global__'
expect 2 "--source on a module" -- "$symc" inspect "$tmp/vit.symir" --source; one_line "--source on a module"
expect 0 "compile --no-gpu" -- "$symc" compile "$tmp/vit.symir" --no-gpu -o "$tmp/vit_ref.symx"
expect 0 "inspect ref engine" -- "$symc" inspect "$tmp/vit_ref.symx"; has "inspect ref engine" "gpu: none"
has "inspect ref engine" "    workspace <= B*"
if printf '%s' "$out" | grep -q 'CUDA backend (GPU steps'; then bad "inspect ref engine: no GPU plan expected: $out"; else ok; fi
expect 2 "two precisions" -- "$symc" compile "$tmp/vit.symir" --fp16 --bf16 -o "$tmp/x.symx"; one_line "two precisions"
expect 1 "bad arch" -- "$symc" compile "$tmp/vit.symir" --arch sm_12345 -o "$tmp/x.symx"; one_line "bad arch"
has "bad arch" "sm_12345"
out=$("$symc" run "$tmp/vit.symx" --shapes x:2x196x768 --backend cuda 2>&1); rc=$?
if [ "$rc" = 0 ] || { [ "$rc" = 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]; }; then ok; else bad "run --backend cuda: exit $rc: $out"; fi

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

# an independent FlatBuffers reader agrees with ours
if command -v flatc >/dev/null; then
  rm -f "$tmp/vit.json"
  expect 0 "flatc --json" -- flatc --json --raw-binary --strict-json -o "$tmp" "$schema" -- "$tmp/vit.symir"
  for want in '"name": "B"' '"op": "reshape"' '"producer": "symc 0.' '"min": 1' '"max": 32' '"opt": 4'; do
    if grep -qF -- "$want" "$tmp/vit.json"; then ok; else bad "flatc: no '$want' in $tmp/vit.json"; fi
  done
else
  bad "flatc not installed"
fi

echo "cli_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
