"""The Python package's wheel (issue 30): with libsymc.so bundled it holds native code and is tagged
for the platform (py3-none-linux_x86_64 here), never py3-none-any, so pip does not install it on
another platform; without the library it is pure Python (py3-none-any) and finds the library at run
time. Builds both with `pip wheel` (pip's isolated build environment).

usage: test_wheel.py path/to/libsymc.so OUTDIR
"""
import os
import subprocess
import sys
import sysconfig
import zipfile

lib, out = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
pkg = os.path.join(here, "..", "..", "frontend", "torch")
failures = []


def build(symc_lib, sub):
    d = os.path.join(out, sub)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", d, pkg],
                       env=dict(os.environ, SYMC_LIB=symc_lib), capture_output=True, text=True, timeout=600)
    wheels = [f for f in os.listdir(d) if f.endswith(".whl")]
    if p.returncode or len(wheels) != 1:
        failures.append(f"pip wheel (SYMC_LIB={symc_lib}): rc {p.returncode}, {wheels}: {p.stdout}{p.stderr}")
        return None, []
    with zipfile.ZipFile(os.path.join(d, wheels[0])) as z:
        return wheels[0], z.namelist()


plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
name, files = build(os.path.abspath(lib), "native")
if name and not (name.endswith(f"-py3-none-{plat}.whl") and "symc/libsymc.so" in files):
    failures.append(f"with the library: {name} (wanted -py3-none-{plat}.whl holding symc/libsymc.so)")
# every module of the package, subpackages (symc.lowerings) included: one left out of pyproject.toml's
# packages would install a symc that fails at import
src = [os.path.relpath(os.path.join(r, f), pkg).replace(os.sep, "/") for r, _, fs in os.walk(os.path.join(pkg, "symc"))
       for f in fs if f.endswith(".py")]
missing = sorted(f for f in src if name and f not in files)
if missing:
    failures.append(f"the wheel lacks {', '.join(missing)} (a subpackage missing from pyproject.toml's packages?)")
name, files = build(os.path.join(out, "no_such_libsymc.so"), "pure")
if name and not (name.endswith("-py3-none-any.whl") and "symc/libsymc.so" not in files):
    failures.append(f"without the library: {name} (wanted -py3-none-any.whl without symc/libsymc.so)")
for f in failures:
    print("FAIL:", f)
print(f"test_wheel: {len(failures)} failures")
sys.exit(1 if failures else 0)
