#!/usr/bin/env bash
# Builds symc in every build type users choose, with -Wall -Wextra -Werror on
# (CMakeLists.txt): Release, Debug and RelWithDebInfo with gcc, Release and
# Debug with clang where it is installed. Release (-O3) and Debug see different
# warnings (gcc's maybe-uninitialized and format-truncation need the
# optimizer), so a build type CI never compiled can fail for users.
# The Release build also runs the unit tests: -O3 is where undefined behaviour
# changes results. Usage: scripts/build_matrix.sh [DIR-PREFIX] (default build-matrix)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=${1:-build-matrix}
build() { # NAME CC CXX TYPE
  echo "== build matrix: $1 ($4, $2)"
  cmake -S . -B "$prefix-$1" -DCMAKE_BUILD_TYPE="$4" -DCMAKE_C_COMPILER="$2" -DCMAKE_CXX_COMPILER="$3" >/dev/null
  cmake --build "$prefix-$1" -j"$(nproc)" >"$prefix-$1.log" 2>&1 || { tail -40 "$prefix-$1.log"; exit 1; }
}
build gcc-release gcc g++ Release
ctest --test-dir "$prefix-gcc-release" -L unit --output-on-failure -j"$(nproc)"
build gcc-debug gcc g++ Debug
if command -v clang >/dev/null && command -v clang++ >/dev/null; then
  build clang-release clang clang++ Release
  build clang-debug clang clang++ Debug
fi
echo "== build matrix: ok"
