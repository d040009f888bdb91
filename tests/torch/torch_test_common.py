"""What the torch-path tests share: skip without torch (or another module they need), load symc from the
source tree with the libsymc.so given on the command line, a timed log and the failure list whose length
is the exit status (finish())."""
import importlib
import os
import pathlib
import sys
import time

T0 = time.time()
failures = []


def setup(*modules):
    """Import torch and the named modules (print SKIP and exit 0 when one is missing), then symc from
    frontend/torch with SYMC_LIB = argv[1] when given. Returns the symc module."""
    for name in ("torch",) + modules:
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001
            print(f"SKIP: {name} not installed ({e})")
            sys.exit(0)
    if len(sys.argv) > 1 and sys.argv[1]:
        os.environ["SYMC_LIB"] = os.path.abspath(sys.argv[1])
    repo = pathlib.Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(repo / "frontend" / "torch"))
    import torch
    torch.manual_seed(0)
    return importlib.import_module("symc")


def log(msg):
    print(f"[{time.time() - T0:6.1f}s] {msg}", flush=True)


def fail(msg):
    failures.append(msg)
    log(f"FAIL {msg}")


def finish(what):
    print()
    if failures:
        print(f"{len(failures)} FAILED:")
        for f in failures:
            print("  " + f)
        sys.exit(1)
    print(f"all {what} passed in {time.time() - T0:.0f} s")
