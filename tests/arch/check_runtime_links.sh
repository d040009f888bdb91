#!/usr/bin/env bash
# The runtime library links without the compiler: every symbol that
# libsymc_runtime's objects need from outside themselves is defined neither
# in ir/, passes/, frontend/ nor codegen/ (their static libraries); what
# remains comes from symshape (the shape-program evaluator), common (the base
# library: symc_error_*, the element types' table) or the system (libc, libm,
# libdl, pthread, libstdc++). The include rule
# (check_includes.sh) keeps the compiler's headers out; this keeps its
# objects out, inline code in shared headers included.
#
#   bash tests/arch/check_runtime_links.sh NM RUNTIME_LIB SYMSHAPE_LIB COMMON_LIB COMPILER_LIB...
set -euo pipefail
nm=$1 runtime=$2 symshape=$3 common=$4
shift 4
symbols() { # $1 U|D, archives...: undefined or defined global symbols, one a line
  local which=$1; shift
  "$nm" -P -g "$@" | awk -v w="$which" 'NF >= 2 && $1 !~ /:$/ { if ((w == "U") == ($2 == "U")) print $1 }' | sort -u
}
needed=$(comm -23 <(symbols U "$runtime") <(symbols D "$runtime" "$symshape" "$common"))
[ -n "$needed" ] || { echo "check_runtime_links: nm found no undefined symbol in $runtime" >&2; exit 2; }
from_compiler=$(comm -12 <(printf '%s\n' "$needed") <(symbols D "$@"))
if [ -n "$from_compiler" ]; then
  echo "FAIL: the runtime library needs symbols the compiler's libraries define:"
  printf '%s\n' "$from_compiler" | sed 's/^/  /'
  exit 1
fi
echo "runtime links: OK ($(printf '%s\n' "$needed" | wc -l) outside symbols, none from ir/passes/frontend/codegen)"
