#!/bin/bash
# Every global symbol a module's library defines carries its module's prefix (docs/ARCHITECTURE.md,
# "Modules and prefixes"), or is public API: a symc_/symrt_ name declared in include/symc/*.h.
# Reads the libraries with nm, so it sees what the linker sees (file-local helpers must be static);
# C++ symbols (mangled _Z..., in namespaces), weak ones (inline and template copies) and the
# implementation's reserved __ names (e.g. gcc ASan's __odr_asan.<global>) are not the module's C names.
#   usage: check_prefixes.sh NM INCLUDE_DIR FILE[,FILE...]=PREFIX[,PREFIX...] ...
# e.g. check_prefixes.sh nm include build/ir/libsymc_ir.a=ir_ build/codegen/libsymc_codegen.a=cg_
# (a FILE list: a library's objects, e.g. one backend folder's, which take that backend's prefix)
set -euo pipefail
nm=${1:?usage: check_prefixes.sh NM INCLUDE_DIR LIB=PREFIXES...}
inc=${2:?usage: check_prefixes.sh NM INCLUDE_DIR LIB=PREFIXES...}
shift 2
public=$(grep -ohE '\b(symc|symrt)_[A-Za-z0-9_]+' "$inc"/symc/*.h | sort -u)
bad=0
checked=0
for arg in "$@"; do
  libs=${arg%%=*}
  prefixes=${arg#*=}
  re="^(${prefixes//,/|})"
  [ -n "$libs" ] || { echo "no files given for the prefixes $prefixes"; exit 1; }
  IFS=, read -r -a files <<<"$libs"
  for lib in "${files[@]}"; do
  while read -r sym; do
    checked=$((checked + 1))
    [[ $sym =~ $re ]] && continue
    if [[ $sym =~ ^(symc|symrt)_ ]] && grep -qxF "$sym" <<<"$public"; then continue; fi
    echo "$(basename "$lib"): '$sym' has none of the prefixes ${prefixes//,/ } and is not public API (include/symc)"
    bad=$((bad + 1))
  done < <("$nm" -g --defined-only "$lib" | awk 'NF == 3 && $2 ~ /^[TDBRCGS]$/ && $3 !~ /^(_Z|__)/ {print $3}')
  done
done
[ "$checked" -gt 0 ] || { echo "no symbols read: wrong libraries?"; exit 1; }
[ "$bad" -eq 0 ] || { echo "$bad symbols without their module's prefix"; exit 1; }
echo "$checked exported symbols carry their module's prefix"
