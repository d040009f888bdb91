#!/usr/bin/env bash
# Checks that tests/arch/check_includes.sh can fail: on a copy of the source
# folders it passes as is, and fails on each kind of violation.
#
#   bash tests/arch/selftest.sh [ROOT] [TMPDIR]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
if [ -n "${2:-}" ]; then work=$2; else work=$(mktemp -d); trap 'rm -rf "$work"' EXIT; fi
check=$root/tests/arch/check_includes.sh
fails=0

fresh() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree"
  cp -r "$root/runtime" "$root/common" "$root/symshape" "$root/ir" "$root/passes" "$root/triton" "$work/tree/"
}
# expect_fail NAME PATTERN: the check must fail and print PATTERN
expect_fail() {
  local out
  if out=$(bash "$check" "$work/tree" 2>&1); then
    echo "FAIL [$1]: the check passed"; fails=$((fails + 1)); return
  fi
  if ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL [$1]: the check failed without naming '$2':"; echo "$out"; fails=$((fails + 1)); return
  fi
  echo "ok [$1]"
}
add_line() { # file line: inserted after the first line
  sed -i "1a $2" "$work/tree/$1"
}

fresh
if bash "$check" "$work/tree" >/dev/null; then echo "ok [unchanged copy passes]"; else
  echo "FAIL [unchanged copy passes]"; bash "$check" "$work/tree" || true; fails=$((fails + 1)); fi

fresh; add_line runtime/plan.c '#include "codegen/codegen.h"'
expect_fail "runtime includes codegen" "runtime/plan.c -> codegen/codegen.h"
fresh; add_line runtime/engine.h '#include "ir/ir.h"'
expect_fail "runtime includes ir" "runtime/engine.h -> ir/ir.h"
fresh; add_line runtime/ref/ref_kernels.c '#include "common/ops.def"'
bash "$check" "$work/tree" >/dev/null && echo "ok [runtime includes common]" ||
  { echo "FAIL [runtime includes common]: refused"; fails=$((fails + 1)); }
fresh; add_line runtime/cuda/tuned_pick.h '#include <passes/passes.h>'
expect_fail "runtime includes passes with <>" "runtime/cuda/tuned_pick.h -> passes/passes.h"
fresh; add_line runtime/ref/ref_kernels.h '#include "frontend/onnx.h"'
expect_fail "runtime includes frontend" "runtime/ref/ref_kernels.h -> frontend/onnx.h"
fresh; add_line runtime/context.c '#include "symc/symc.h"'
expect_fail "runtime includes the builder header" "runtime/context.c -> symc/symc.h"
fresh; add_line runtime/sizes.c '#include "ir.h"'
expect_fail "runtime includes an unknown bare header" "runtime/sizes.c -> ir.h"
fresh; add_line runtime/context.c '#include "runtime/ref/ref_kernels.h"'
expect_fail "the runtime core includes a backend" "runtime/context.c -> runtime/ref/ref_kernels.h"
fresh; add_line runtime/cuda/cuda_gemm.c '#include "runtime/ref/ref_kernels.h"'
expect_fail "a backend includes another backend" "runtime/cuda/cuda_gemm.c -> runtime/ref/ref_kernels.h"
fresh; add_line common/ops.h '#include "ir/ir.h"'
expect_fail "common includes ir" "common/ops.h -> ir/ir.h"
fresh; add_line common/symir_fb.h '#include "symc/symc.h"'
expect_fail "common includes the builder header" "common/symir_fb.h -> symc/symc.h"
fresh; add_line symshape/expr.c '#include "ir/ir.h"'
expect_fail "symshape includes ir" "symshape/expr.c -> ir/ir.h"
fresh; add_line ir/verify.c '#include "passes/passes.h"'
expect_fail "ir includes passes" "ir/verify.c -> passes/passes.h"
fresh; add_line ir/print.c '#include "runtime/engine.h"'
expect_fail "ir includes runtime" "ir/print.c -> runtime/engine.h"
fresh; add_line passes/fold.c '#include "codegen/codegen.h"'
expect_fail "passes includes codegen" "passes/fold.c -> codegen/codegen.h"
fresh; add_line passes/infer_shapes.c '#include "frontend/onnx.h"'
expect_fail "passes includes frontend" "passes/infer_shapes.c -> frontend/onnx.h"
fresh; add_line triton/tb_backend.c '#include "runtime/engine.h"'
expect_fail "triton includes the runtime's internals" "triton/tb_backend.c -> runtime/engine.h"
fresh; add_line triton/tb_json.c '#include "symc/symc.h"'
expect_fail "triton includes the builder header" "triton/tb_json.c -> symc/symc.h"

rm -rf "$work/tree"
[ $fails = 0 ] && echo "check_includes self-test: all cases behave" || echo "check_includes self-test: $fails case(s) wrong"
exit $((fails > 0))
