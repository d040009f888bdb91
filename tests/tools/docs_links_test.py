#!/usr/bin/env python3
"""Every document the README and the docs link to is inside the repository (issue 18): each Markdown
link `[text](target)` in README.md, BENCHMARKS.md, docs/*.md and frontend/torch/README.md that is not a
web address or an anchor must name a file or folder that exists under the repository root once resolved
from the linking file's folder (no absolute paths, no `../` out of the repository, no notes kept
elsewhere, outside the repository).

usage: docs_links_test.py REPO_ROOT
"""
import glob
import os
import re
import sys

root = os.path.realpath(sys.argv[1])
files = ["README.md", "BENCHMARKS.md", "frontend/torch/README.md"] + sorted(
    os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
link = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
failures, checked = [], 0
for rel in files:
    path = os.path.join(root, rel)
    if not os.path.exists(path):
        continue
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    for m in link.finditer(text):
        target = m.group(1)
        if re.match(r"^[a-z]+://", target) or target.startswith(("#", "mailto:")):
            continue
        checked += 1
        dest = os.path.realpath(os.path.join(os.path.dirname(path), target.split("#")[0]))
        if target.startswith("/") or os.path.commonpath([root, dest]) != root:
            failures.append(f"{rel}: link '{target}' points outside the repository")
        elif not os.path.exists(dest):
            failures.append(f"{rel}: link '{target}' names no file in the repository")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
if failures or not checked:
    print(f"{len(failures)} failure(s), {checked} links checked", file=sys.stderr)
    sys.exit(1)
print(f"ok: {checked} links in {len(files)} documents, all inside the repository")
