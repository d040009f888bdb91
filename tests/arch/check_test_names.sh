#!/bin/bash
# Every registered test is named <module>.<what> (docs/ARCHITECTURE.md, "Tests"): the module a
# lower-case word from the list below (a folder of the tree, or python/gpu/e2e/install/
# conformance/style for the suites that cross modules), the rest lower-case words and digits joined
# by '_', usually the test file's name without test_. Reads `ctest -N` of the build folder given.
#   usage: check_test_names.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: check_test_names.sh BUILD_DIR}
modules='arch|style|symshape|ir|passes|frontend|codegen|runtime|tools|e2e|gpu|python|conformance|install|triton'
names=$(ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: //p')
[ -n "$names" ] || { echo "no tests listed in $build"; exit 1; }
bad=$(printf '%s\n' "$names" | grep -Ev "^($modules)\.[a-z0-9]+(_[a-z0-9]+)*$" || true)
if [ -n "$bad" ]; then
  echo "tests not named <module>.<what> (module one of: ${modules//|/ }):"
  printf '  %s\n' $bad
  exit 1
fi
echo "$(printf '%s\n' "$names" | wc -l) test names follow <module>.<what>"
