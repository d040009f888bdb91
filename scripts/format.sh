#!/usr/bin/env bash
# Formats the C/C++ sources with the repository's .clang-format, using the
# pinned clang-format (18.1.8, from PyPI; other versions disagree on a few
# constructs). Generated files and third-party code are not in the tree.
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  list files that are not formatted; exit 1 if any
set -euo pipefail
cd "$(dirname "$0")/.."
want=18.1.8
cf=${CLANG_FORMAT:-clang-format}
if ! "$cf" --version 2>/dev/null | grep -q "version $want"; then
  # the PyPI wheel's binary, when the one on PATH is another version
  cf=$(python3 -c 'import clang_format, os; print(os.path.join(os.path.dirname(clang_format.__file__), "data", "bin", "clang-format"))' 2>/dev/null || true)
fi
if [ -z "$cf" ] || ! "$cf" --version 2>/dev/null | grep -q "version $want"; then
  echo "format.sh: needs clang-format $want (pip install clang-format==$want, or set CLANG_FORMAT)" >&2
  exit 2
fi
# tracked files and new ones not ignored (a file about to be added is formatted before its commit)
files=$(git ls-files --cached --others --exclude-standard '*.c' '*.h' '*.cc')
if [ "${1:-}" = "--check" ]; then
  # one clang-format run over every file; its warnings name the files
  if out=$(echo "$files" | xargs "$cf" --dry-run -Werror 2>&1); then
    echo "format.sh: all $(echo "$files" | wc -l) files formatted"
    exit 0
  fi
  echo "$out" | sed -nE 's/^([^:]+):[0-9]+:[0-9]+: error: code should be clang-formatted.*/not formatted: \1/p' | sort -u
  echo "format.sh: run scripts/format.sh to format them"
  exit 1
fi
echo "$files" | xargs "$cf" -i
