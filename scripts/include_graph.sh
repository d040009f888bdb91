#!/usr/bin/env bash
# Prints which folder includes which folder's headers, from the #include lines
# of the C/C++ sources (the module dependency picture of docs/ARCHITECTURE.md).
#
#   bash scripts/include_graph.sh [ROOT]          # one line per folder: FOLDER -> TARGET(include lines), ...
#   bash scripts/include_graph.sh --files [ROOT]  # every cross-folder include, file -> header
#
# An include "X/..." (or <X/...>) whose X is a folder of the repository counts
# for that folder; "symc/..." is include/symc/ (the public headers); a name
# with no folder that is no file of the including folder is a header generated
# at build time (flatc, protoc-c, CMake) and shows as (generated). System
# headers (<stdio.h>, <cuda.h>, ...) are left out. Python (frontend/torch/)
# has no #include lines and is not in the picture.
set -euo pipefail

files_mode=0
if [ "${1:-}" = "--files" ]; then files_mode=1; shift; fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

folders="common symshape ir passes frontend codegen runtime tools lib triton examples bench tests include"

for src in $folders; do
  [ -d "$src" ] || continue
  find "$src" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.def' \) | sort
done | while read -r f; do
  # "path" or <path>, on lines that are #include directives
  sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*(["<])([^">]+)[">].*/\1 \2/p' "$f" |
  while read -r kind inc; do
    top=${inc%%/*}
    from=${f%%/*}
    [ "$from" = include ] && from=include/symc
    if [ "$inc" != "$top" ]; then
      case "$top" in
        symc) to=include/symc ;;
        symshape|common|ir|passes|frontend|codegen|runtime|tools|lib|triton|examples|bench|tests) to=$top ;;
        onnx) to='(generated)' ;;   # onnx/onnx.pb-c.h, protoc-c output
        *) continue ;;              # system headers with a folder (sys/stat.h, flatbuffers/...)
      esac
    else
      [ "$kind" = '"' ] || continue  # <stdio.h> and the like
      if [ -e "$(dirname "$f")/$inc" ]; then to=$from; else to='(generated)'; fi
    fi
    printf '%s\t%s\t%s\t%s\n' "$from" "$to" "$f" "$inc"
  done
done | if [ $files_mode = 1 ]; then
  awk -F'\t' '$1 != $2 { printf "%s -> %s\n", $3, $4 }'
else
  awk -F'\t' '
    { key = $1 SUBSEP $2; n[key]++; if (!($1 in seen)) { order[++k] = $1; seen[$1] = 1 } }
    END {
      for (i = 1; i <= k; i++) {
        f = order[i]; line = ""
        for (key in n) {
          split(key, p, SUBSEP)
          if (p[1] == f && p[2] != f) line = line sprintf("%s(%d) ", p[2], n[key])
        }
        # sort the targets for a stable output
        m = split(line, parts, " "); asorted = ""
        for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (parts[b] < parts[a]) { t = parts[a]; parts[a] = parts[b]; parts[b] = t }
        for (a = 1; a <= m; a++) if (parts[a] != "") asorted = asorted (asorted == "" ? "" : ", ") parts[a]
        printf "%-13s -> %s\n", f, asorted == "" ? "(nothing outside itself)" : asorted
      }
    }'
fi
