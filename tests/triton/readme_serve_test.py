#!/usr/bin/env python3
"""README.md's "Serving with Triton" commands, run as written (issue 33: the section must work on
a fresh machine).

The section's first ```sh block runs as one bash script (`set -e`) in TMPDIR, where build/bin and
build/lib are the build under test (links) and build/example/vit_seed.symx is made as the main job
makes it (scripts/example.sh: the vit_seed example writes the module, `symc compile` the engine).
A line of the block that starts with '{' is output, not a command: the script runs without it,
and its stdout must have a line starting with it (the response of the curl before it). The server
the block starts in the background is stopped with its process group at the end; the whole block
has 240 s. Ports are the README's (8000), so ctest runs this alone (RESOURCE_LOCK).

usage: readme_serve_test.py SYMC BINDIR LIBDIR README.md TMPDIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

symc, bindir, libdir, readme, tmp = (os.path.abspath(a) for a in sys.argv[1:6])
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


text = open(readme).read()
section = text[text.index("### Serving with Triton"):]
section = section[:section.index("\n#", 5)]
blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
if not blocks:
    print("FAIL: the section has no sh block")
    sys.exit(1)
lines = blocks[0].splitlines()
expected = [ln for ln in lines if ln.startswith("{")]
script = "\n".join(ln for ln in lines if not ln.startswith("{"))
if not expected:
    fail("the block shows no response line (starting with '{') to check")

shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(os.path.join(tmp, "build", "example"))
os.symlink(bindir, os.path.join(tmp, "build", "bin"))
os.symlink(libdir, os.path.join(tmp, "build", "lib"))
for cmd in (["build/bin/vit_seed", "build/example/vit_seed.symir"],
            [symc, "compile", "build/example/vit_seed.symir", "-o", "build/example/vit_seed.symx"]):
    p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=600)
    if p.returncode:
        print(f"FAIL: {' '.join(cmd)}: {p.stderr.strip()[-2000:]}")
        sys.exit(1)


def group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


# stdout to a file: the background server inherits it, so a pipe would stay open while it runs
log_path = os.path.join(tmp, "block.log")
with open(log_path, "w") as log:
    p = subprocess.Popen(["bash", "-c", "set -e\n" + script], cwd=tmp, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        if p.wait(timeout=240):
            fail(f"the block exited with {p.returncode}")
    except subprocess.TimeoutExpired:
        fail("the block ran past 240 s")
# the server the block started in the background (its process group): SIGTERM, then SIGKILL after 30 s
if group_alive(p.pid):
    os.killpg(p.pid, signal.SIGTERM)
    for _ in range(300):
        if not group_alive(p.pid):
            break
        time.sleep(0.1)
    else:
        os.killpg(p.pid, signal.SIGKILL)
with open(log_path, errors="replace") as f:
    out = f.read()
for want in expected:
    if not any(ln.startswith(want) for ln in out.splitlines()):
        fail(f"no output line starts with the README's {want[:60]!r}...")
if failures:
    print("---- the block's output (last 3000 characters) ----\n" + out[-3000:])
print(f"readme_serve: {len(expected) + 1 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
