#!/bin/bash
# No two C/C++ files in different folders share a base name (docs/ARCHITECTURE.md, "Modules and
# prefixes"): a name says its layer, so codegen's engine builder is build_engine.c and not a second
# engine.c beside runtime/engine.h. A .c and its .h in one folder are one name; so are a public
# header include/symc/X.h and the file implementing it, common/X.c. Tests follow the same rule.
#   usage: check_file_names.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: check_file_names.sh SOURCE_DIR}"
list=$(git ls-files '*.c' '*.h' '*.cc' 2>/dev/null || find . -name '*.[ch]' -o -name '*.cc' | sed 's|^\./||')
bad=$(printf '%s\n' "$list" | grep -v '/gen/' | awk -F/ '{
    n = $NF; sub(/\.[^.]*$/, "", n); d = $0; sub(/\/[^\/]*$/, "", d)
    if (d == "include/symc" && system("test -f common/" n ".c") == 0) d = "common"
    key = n SUBSEP d
    if (!(key in seen)) { seen[key] = 1; dirs[n] = dirs[n] " " d; count[n]++ }
  } END { for (n in count) if (count[n] > 1) print n ":" dirs[n] }' | sort)
if [ -n "$bad" ]; then
  echo "base names in more than one folder (rename one so the name says its layer):"
  printf '%s\n' "$bad" | sed 's/^/  /'
  exit 1
fi
echo "$(printf '%s\n' "$list" | wc -l) C/C++ files, no base name in two folders"
