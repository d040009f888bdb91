#!/bin/bash
# docs/ARCHITECTURE.md's module dependency picture is what scripts/include_graph.sh prints today:
# the first ``` block after "The module dependency picture" must equal its output.
#   usage: check_include_graph.sh SOURCE_DIR [--fix]   (--fix writes the script's output there)
set -euo pipefail
root=${1:?usage: check_include_graph.sh SOURCE_DIR [--fix]}
doc="$root/docs/ARCHITECTURE.md"
want=$(bash "$root/scripts/include_graph.sh" "$root")
have=$(awk '/The module dependency picture/ {f = 1} f && /^```/ {if (in_b) exit; in_b = 1; next} in_b' "$doc")
[ -n "$have" ] || { echo "$doc: no picture block after 'The module dependency picture'"; exit 1; }
if [ "$have" = "$want" ]; then
  echo "the dependency picture in docs/ARCHITECTURE.md matches scripts/include_graph.sh"
  exit 0
fi
if [ "${2:-}" = --fix ]; then
  WANT="$want" awk '/The module dependency picture/ {f = 1}
    f == 1 && /^```/ && !in_b {print; print ENVIRON["WANT"]; in_b = 1; next}
    in_b == 1 && /^```/ {in_b = 2; f = 2}
    in_b != 1 {print}' "$doc" > "$doc.new" && mv "$doc.new" "$doc"
  echo "rewrote the picture in $doc"
  exit 0
fi
echo "docs/ARCHITECTURE.md's dependency picture differs from scripts/include_graph.sh:"
diff <(printf '%s\n' "$have") <(printf '%s\n' "$want") || true
echo "update it: bash tests/arch/check_include_graph.sh . --fix (and say in the text what changed)"
exit 1
