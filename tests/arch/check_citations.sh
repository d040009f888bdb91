#!/usr/bin/env bash
# Comments and docs cite only files in the repository (issue 31): the project's design notes and
# benchmark suite have their public form in docs/ARCHITECTURE.md and docs/BENCHMARKS-SUITE.md, so no
# file names DESIGN.md or BENCH.md, which a reader of the repository cannot open. The results folders
# (bench/results/, raw logs) are records and are not checked.
# usage: check_citations.sh REPO_ROOT
set -u
cd "$1" || exit 1
if ! git rev-parse --git-dir >/dev/null 2>&1; then echo "check_citations: $1 is not a git checkout"; exit 1; fi
hits=$(git grep -nE '(^|[^A-Za-z0-9_/-])(DESIGN|BENCH)\.md' -- ':!bench/results' ':!tests/arch/check_citations.sh')
if [ -n "$hits" ]; then
  echo "$hits"
  echo "check_citations: cite docs/ARCHITECTURE.md or docs/BENCHMARKS-SUITE.md instead (the files above name notes outside the repository)"
  exit 1
fi
echo "check_citations: no citation of a file outside the repository"
