#!/usr/bin/env bash
# The test suite on a fresh machine (what CI runs): install, then
#   1. a normal build: every test but the gpu ones and the long fuzzers; then the Python package's
#      core (import symc, builder, Session) in a virtual environment without torch;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build: the same tests;
#   3. with clang, the libFuzzer targets for a bounded time;
#   4. the build matrix: Release and Debug with gcc and clang, warnings as
#      errors (what users and packagers build), unit tests at -O3;
#   5. a ThreadSanitizer build of only what the thread tests need, and those
#      tests (label `threads`): any data race fails them.
#
# bash scripts/test.sh --quick: the local loop: no installs, the normal build and its unit tests
# only (label unit, without the fuzzers and the long end-to-end ones), in a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --quick ]; then
  bash scripts/build.sh build
  ctest --test-dir build -L unit -LE 'gpu|fuzz|e2e|python|conformance' --output-on-failure -j"$(nproc)"
  exit 0
fi
SYMC_DEPS_TORCH=1 bash scripts/deps.sh
skip='gpu|fuzz-long'

echo "== normal build"
bash scripts/build.sh build
ctest --test-dir build -LE "$skip" --output-on-failure -j"$(nproc)"

echo "== the Python core without torch (a virtual environment with numpy only)"
rm -rf build/venv-notorch
python3 -m venv build/venv-notorch
build/venv-notorch/bin/pip install -q numpy
build/venv-notorch/bin/python tests/torch/test_core_without_torch.py build/lib/libsymc.so

echo "== ASan + UBSan build"
bash scripts/build.sh build-asan -DSYMC_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan -LE "$skip" --output-on-failure -j"$(nproc)"

if command -v clang >/dev/null && command -v clang++ >/dev/null; then
  echo "== libFuzzer targets (clang)"
  bash scripts/build.sh build-fuzz -DSYMC_FUZZ=ON -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++
  ctest --test-dir build-fuzz -L '^fuzz$' --output-on-failure
fi

echo "== build matrix"
bash scripts/build_matrix.sh build-matrix

echo "== ThreadSanitizer: the thread tests"
cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSYMC_TSAN=ON >/dev/null
cmake --build build-tsan -j"$(nproc)" --target runtime_test_threads runtime_test_regions
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --test-dir build-tsan -L '^threads$' --output-on-failure
