"""The Python package stays in pieces a reader can hold (issue 31): no function over 150 lines and no
file over 1,500 lines under frontend/torch/symc (subpackages included). Reads the sources with ast,
imports nothing of them.

usage: check_python_sizes.py REPO_ROOT
"""
import ast
import os
import sys

MAX_FUNCTION, MAX_FILE = 150, 1500
root = os.path.join(sys.argv[1], "frontend", "torch", "symc")
bad, n_files = [], 0
for d, _, files in os.walk(root):
    for f in sorted(files):
        if not f.endswith(".py"):
            continue
        path = os.path.join(d, f)
        rel = os.path.relpath(path, sys.argv[1])
        with open(path, encoding="utf-8") as fh:
            src = fh.read()
        n_files += 1
        lines = len(src.splitlines())
        if lines > MAX_FILE:
            bad.append(f"{rel}: {lines} lines (at most {MAX_FILE})")
        for node in ast.walk(ast.parse(src, rel)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION:
                    bad.append(f"{rel}:{node.lineno}: function {node.name} is {n} lines (at most {MAX_FUNCTION})")
for b in bad:
    print(b)
print(f"check_python_sizes: {n_files} files, {len(bad)} too long")
sys.exit(1 if bad or not n_files else 0)
