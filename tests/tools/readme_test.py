#!/usr/bin/env python3
"""README.md's "What works today" commands, run as written (issue 30: its commands once used
ViT shapes on a ResNet export and an output name the export did not have).

The section's first ```python block runs (it exports the model and writes x.npy), then every line
of its first two ```sh blocks: `build/bin/symc` becomes the symc under test, a trailing `\\`
joins lines, comments go, and each `symc: ...` line is output that the command before it must
print (which may exit non-zero; every other command must exit 0). Everything runs in TMPDIR.

usage: readme_test.py SYMC README.md TMPDIR
"""
import os
import re
import shlex
import subprocess
import sys

symc, readme, tmp = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
os.makedirs(tmp, exist_ok=True)
text = open(readme).read()
section = text[text.index("## What works today"):]
section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
blocks = re.findall(r"```(\w+)\n(.*?)```", section, re.S)
py = [b for kind, b in blocks if kind == "python"]
sh = [b for kind, b in blocks if kind == "sh"][:2]
failures = []
if not py or len(sh) < 2:
    print(f"FAIL: the section has {len(py)} python and {len(sh)} sh blocks; the test needs 1 and 2")
    sys.exit(1)
p = subprocess.run([sys.executable, "-c", py[0]], cwd=tmp, capture_output=True, text=True, timeout=600)
if p.returncode:
    print(f"FAIL: the README's Python block: {p.stderr[-2000:]}")
    sys.exit(1)

commands = []  # [command, [expected lines]]
for block in sh:
    joined = re.sub(r"\\\n\s*", " ", block)
    for line in joined.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("symc: "):
            if not commands:
                failures.append(f"expected output before any command: {line}")
            else:
                commands[-1][1].append(line)
            continue
        commands.append([line.split("  #")[0].split(" # ")[0].strip(), []])
for cmd, expected in commands:
    args = shlex.split(cmd)
    if args[0] == "build/bin/symc":
        args[0] = symc
    p = subprocess.run(args, cwd=tmp, capture_output=True, text=True, timeout=900)
    out = p.stdout + p.stderr
    if expected:
        for e in expected:
            if e not in out:
                failures.append(f"{cmd}: wanted the README's line '{e}', got (exit {p.returncode}): {out[-600:]}")
    elif p.returncode:
        failures.append(f"{cmd}: exit {p.returncode}: {out[-600:]}")
    print(f"{'ok  ' if not failures else 'FAIL'} {cmd}", flush=True)
for f in failures:
    print("FAIL:", f)
print(f"readme_test: {len(commands)} commands, {len(failures)} failures")
sys.exit(1 if failures else 0)
