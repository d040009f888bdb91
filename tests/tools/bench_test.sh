#!/usr/bin/env bash
# Checks of `symc bench` (tools/bench.c) on the S1 seed engine: exit codes and
# one-line errors for bad usage (2) and bad engines or shapes (1), one table
# row per point and valid JSON on the CPU reference backend, and the CUDA
# backend either timing (a GPU is present) or failing in one line (none).
# usage: bench_test.sh SYMC VIT_SEED TMPDIR HUGE_ENGINE
set -u
symc=$1 vit=$2 tmp=$3 huge=$4
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
expect 0 "compile" -- "$symc" compile "$tmp/vit.symir" -o "$tmp/vit.symx"
e=$tmp/vit.symx

expect 0 "--help" -- "$symc" bench --help; has help "usage: symc bench"; has help "--sweep"
# usage errors: exit 2, one line, "symc: bench: "
expect 2 "no args" -- "$symc" bench;                                   one_line "no args"; has "no args" "symc: bench: missing ENGINE"
expect 2 "unknown flag" -- "$symc" bench "$e" --frobnicate;            one_line "unknown flag"; has "unknown flag" "'--frobnicate'"
expect 2 "no shapes" -- "$symc" bench "$e";                            one_line "no shapes"; has "no shapes" "--shapes or --point"
expect 2 "bad backend" -- "$symc" bench "$e" --shapes x:1x196x768 --backend tpu; one_line "bad backend"; has "bad backend" "'tpu'"
expect 2 "iters 0" -- "$symc" bench "$e" --shapes x:1x196x768 --iters 0; one_line "iters 0"
expect 2 "iters text" -- "$symc" bench "$e" --shapes x:1x196x768 --iters ten; one_line "iters text"
expect 2 "bad shape" -- "$symc" bench "$e" --shapes x1x196; one_line "bad shape"; has "bad shape" "NAME:AxBxC"
expect 2 "point and sweep" -- "$symc" bench "$e" --point x:1x196x768 --sweep; one_line "point and sweep"
expect 2 "missing value" -- "$symc" bench "$e" --shapes; one_line "missing value"; has "missing value" "--shapes needs a value"
expect 2 "two engines" -- "$symc" bench "$e" "$e" --shapes x:1x196x768; one_line "two engines"
expect 2 "profile on ref" -- "$symc" bench "$e" --shapes x:1x196x768 --backend ref --profile; one_line "profile on ref"
has "profile on ref" "need --backend cuda"
expect 2 "trace without file" -- "$symc" bench "$e" --shapes x:1x196x768 --trace; one_line "trace without file"
# other failures: exit 1, one line
expect 1 "missing engine" -- "$symc" bench "$tmp/nope.symx" --shapes x:1x196x768 --backend ref; one_line "missing engine"; has "missing engine" "nope.symx"
expect 1 "unknown symbol" -- "$symc" bench "$e" --sweep --shapes x:Qx196x768 --backend ref; one_line "unknown symbol"; has "unknown symbol" "'Q' is not a symbol"
expect 1 "out of range" -- "$symc" bench "$e" --shapes x:33x196x768 --backend ref; one_line "out of range"; has "out of range" "symc: bench: "
expect 1 "unknown input" -- "$symc" bench "$e" --point x:1x196x768,y:3 --backend ref; one_line "unknown input"; has "unknown input" "no input named 'y' (inputs: 'x')"
expect 1 "unknown --shapes input" -- "$symc" bench "$e" --shapes x:1x196x768 --shapes y:3 --backend ref
one_line "unknown --shapes input"; has "unknown --shapes input" "no input named 'y' (inputs: 'x')"
mkdir -p "$tmp/dir.symx"
expect 1 "engine is a directory" -- "$symc" bench "$tmp/dir.symx" --shapes x:1x196x768 --backend ref
one_line "engine is a directory"; has "engine is a directory" "symc: bench: engine '$tmp/dir.symx' is a directory, not a file"
# a range that allows 2^64-byte inputs (huge_engine.c): refused before timing, never wrapped
expect 0 "huge_engine" -- "$huge" "$tmp/huge.symir" "$tmp/huge.symx"
expect 1 "2^64-byte input" -- "$symc" bench "$tmp/huge.symx" --shapes x:36028797018963968x128 --backend ref
one_line "2^64-byte input"
has "2^64-byte input" "input 'x' of shape [36028797018963968, 128] (f32) is too large: its size in bytes does not fit in 64 bits"

# the reference backend: a row per point and JSON with every number
rm -f "$tmp/b.json"
expect 0 "ref bench" -- "$symc" bench "$e" --backend ref --shapes x:Bx196x768 --iters 2 --warmup 0 --json "$tmp/b.json"
has "ref bench" "p50 ms"; has "ref bench" "x:4x196x768"
expect 0 "ref json" -- python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
p = d["points"]
assert d["backend"] == "ref" and len(p) == 1, d
q = p[0]
assert q["shapes"] == {"x": [4, 196, 768]} and q["outputs"] == {"heads": [4, 197, 3, 12, 64]}, q
assert q["p50_ms"] > 0 and q["p90_ms"] >= q["p50_ms"] and q["p99_ms"] >= q["p90_ms"], q
assert q["host_us"] > 0 and q["throughput"] > 0 and q["iters"] == 2 and q["batch"] == 4 and q["nan_out"] == 0, q
assert not any(k.startswith("mem_") for k in q), q  # device memory: CUDA only
' "$tmp/b.json"
expect 0 "ref points" -- "$symc" bench "$e" --backend ref --point x:1x196x768 --point "x:2x196x768" --iters 1 --warmup 0
has "ref points" "x:1x196x768"; has "ref points" "x:2x196x768"
if [ "$(printf '%s\n' "$out" | grep -c '^p[01] ')" = 2 ]; then ok; else bad "ref points: want 2 rows: $out"; fi

# the CUDA backend (the default): times on a GPU machine, else one line and exit 1
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  expect 0 "cuda bench" -- "$symc" bench "$e" --shapes x:4x196x768 --iters 20; has "cuda bench" "x:4x196x768"
  # device memory per point: measured (cuMemGetInfo) against the formula of `symc inspect`
  rm -f "$tmp/c.json"
  expect 0 "cuda bench memory" -- "$symc" bench "$e" --sweep --shapes x:Bx196x768 --iters 5 --warmup 1 --json "$tmp/c.json"
  has "cuda bench memory" "mem MiB"
  expect 0 "cuda memory json" -- python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["points"]
MiB = 1 << 20
for q in p:
    m, f, h, w = q["mem_measured_bytes"], q["mem_formula_bytes"], q["mem_formula_held_bytes"], q["mem_weights_bytes"]
    assert m > 0 and w > 0 and f <= h and q["mem_library_bytes"] == 32 * MiB, q
    # what running added (the workspaces) stays within the formula minus the weights, up to
    # the driver rounding each of the two allocations (activations, cuBLASLt) to 2 MiB pages
    grown = m - q["mem_context_bytes"]
    assert grown <= h - w + 4 * MiB, (q["label"], grown, h - w)
    print("%s: measured %.1f MiB, formula %.1f MiB" % (q["label"], m / MiB, h / MiB))
' "$tmp/c.json"
  # --profile: per-step GPU times in the table and the JSON; --trace: a Chrome trace
  rm -f "$tmp/p.json" "$tmp/t.json"
  expect 0 "cuda profile" -- "$symc" bench "$e" --sweep --shapes x:Bx196x768 --iters 5 --warmup 1 --profile \
    --json "$tmp/p.json" --trace "$tmp/t.json"
  has "cuda profile" "profile: "; has "cuda profile" "by kind:"
  expect 0 "cuda profile json" -- python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))["points"]
t = json.load(open(sys.argv[2]))["traceEvents"]
for q in p:
    steps = q["profile"]
    assert steps and all(s["ms"] >= 0 and s["kind"] in ("kernel", "gemm", "conv", "copy") and s["detail"] for s in steps), q
    assert abs(sum(s["ms"] for s in steps) - q["profile_sum_ms"]) < 1e-3 * len(steps), q
    # the steps of a run add up to about a plain run (events add a little; timing noise)
    assert 0.5 * q["p50_ms"] < q["profile_sum_ms"] < 3 * q["p50_ms"] + 0.05, (q["p50_ms"], q["profile_sum_ms"])
xs = [e for e in t if e["ph"] == "X"]
assert len(xs) == sum(len(q["profile"]) for q in p), (len(xs), [len(q["profile"]) for q in p])
assert len({e["pid"] for e in xs}) == len(p) and all(e["dur"] >= 0 for e in xs)
print("profile: %d points, %d steps each" % (len(p), len(p[0]["profile"])))
' "$tmp/p.json" "$tmp/t.json"
else
  expect 1 "cuda without a GPU" -- "$symc" bench "$e" --shapes x:4x196x768 --backend cuda; one_line "cuda without a GPU"
  has "cuda without a GPU" "symc: bench: "
  # without --backend: the reference backend, as symc run, said once (issue 30)
  expect 0 "no GPU, no --backend" -- "$symc" bench "$e" --shapes x:4x196x768 --iters 1 --warmup 0
  has "no GPU, no --backend" "timing on the reference backend"
  has "no GPU, no --backend" "on cpu (reference backend)"
fi

echo "bench_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
