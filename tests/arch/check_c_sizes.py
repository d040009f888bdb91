"""The C and C++ sources stay in pieces a reader can hold (issue 31): no function over 150 lines and
no file over 1,500 lines, outside tests/ and generated code. Functions are found by their braces
(comments, strings and character literals blanked first): a top-level block whose opening line or the
three before it hold a ')' and that is not an initializer ('=' on its opening line). The sources
are read, nothing is built.

usage: check_c_sizes.py REPO_ROOT
"""
import os
import re
import subprocess
import sys

MAX_FUNCTION, MAX_FILE = 150, 1500
root = sys.argv[1]
try:
    files = subprocess.check_output(["git", "-C", root, "ls-files", "*.c", "*.cc", "*.h"], text=True).split()
except (OSError, subprocess.CalledProcessError):
    files = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
             if f.endswith((".c", ".cc", ".h")) and "/build" not in d]
files = [f for f in files if not f.startswith(("tests/", "build")) and "/gen/" not in f]


def blank(src):
    """Comments, string and char literals replaced by spaces, newlines kept."""
    keep_nl = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', keep_nl, src, flags=re.S)


bad = []
for rel in sorted(files):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
        src = fh.read()
    lines = src.split("\n")
    if len(lines) - 1 > MAX_FILE:
        bad.append(f"{rel}: {len(lines) - 1} lines (at most {MAX_FILE})")
    code = blank(src).split("\n")
    depth, start = 0, None
    for i, line in enumerate(code):
        for ch in line:
            if ch == "{":
                if depth == 0:
                    start = i
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0 and start is not None:
                    n = i - start + 1
                    head = " ".join(code[max(0, start - 3):start + 1])
                    if n > MAX_FUNCTION and ")" in head and "=" not in code[start]:
                        name = (code[start].strip() or code[start - 1].strip())[:70]
                        bad.append(f"{rel}:{start + 1}: a function of {n} lines (at most {MAX_FUNCTION}): {name}")
                    start = None
if bad:
    print("\n".join(bad))
    sys.exit(1)
print(f"{len(files)} C/C++ files: none over {MAX_FILE} lines, no function over {MAX_FUNCTION}")
