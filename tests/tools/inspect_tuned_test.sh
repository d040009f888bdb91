#!/usr/bin/env bash
# `symc inspect` of an engine whose library steps carry several tuned entries
# (made on the CPU by add_tuned at the tuning points of S1, B in [1, 32] opt
# 4: B = 4, 1, 32, 11, so the qkv GEMM has m = 197*B): every entry with its
# sizes and choice, the buckets, and the entry picked at min, opt and max.
# usage: inspect_tuned_test.sh SYMC VIT_SEED ADD_TUNED TMPDIR
set -u
symc=$1 vit=$2 add_tuned=$3 tmp=$4
mkdir -p "$tmp"
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
has() { if printf '%s' "$out" | grep -qF -- "$1"; then :; else bad "no '$1' in: $out"; fi; }
"$vit" "$tmp/vit.symir" >/dev/null || bad "vit_seed"
"$symc" compile "$tmp/vit.symir" --no-tune -o "$tmp/vit.symx" >/dev/null 2>&1 || bad "compile"
out=$("$symc" inspect "$tmp/vit.symx" 2>&1) || bad "inspect untuned: $out"
has "not tuned (heuristic once per shape at run time)"
"$add_tuned" "$tmp/vit.symx" "$tmp/vit_tuned.symx" || bad "add_tuned"
out=$("$symc" inspect "$tmp/vit_tuned.symx" 2>&1) || bad "inspect tuned: $out"
has "4 tuned entries, picked at min | opt | max: #1 | #2 | #4"
has "#1 at m=197 n=2304 k=768: cuBLASLt algo"
has "#2 at m=788 n=2304 k=768: "
has "#3 at m=2167 n=2304 k=768: "
has "#4 at m=6304 n=2304 k=768: "
has "(0.002 ms)"
# the buckets: B = 4 and 1 chose one placeholder, 32 and 11 the other; the
# boundary is the geometric midpoint of m = 788 and 2167
has "buckets by m: [..1306] #1 #2, [1307..] #3 #4"
# the engine still loads and runs on the reference backend
out=$("$symc" run "$tmp/vit_tuned.symx" --shapes x:2x196x768 2>&1) || bad "run tuned: $out"
if [ "$fail" = 0 ]; then echo "inspect_tuned: ok"; fi
exit "$fail"
