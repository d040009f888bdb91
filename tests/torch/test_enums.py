"""The Python package's C constants and struct layouts cannot drift from the C library.

Approach: the package copies no constant (frontend/torch/symc/_lib.py reads them
from libsymc's table, symc_constants); what could still drift is
  1. the table (lib/libsymc.c) against the public headers: every enumerator and
     integer macro of include/symc/*.h must be a row with the header's value,
     and every row must still be in a header;
  2. the ctypes structs written by hand in _lib.py against the C structs: the
     size and every field's offset must be the library's;
  3. the package's public names (F32, ATTR_DIMS, BACKEND_CUDA, DIM_NONE...) and
     SymcError codes ("invalid_arg") must resolve from the table.
The headers are read with regular expressions (typedef enum blocks, #define
NAME integer), enough for the plain style of include/symc/. _lib.py is loaded
on its own, without torch. Exit 0 when all hold, 1 with one line per drift.

usage: test_enums.py LIBSYMC [REPO_ROOT]
"""
import ctypes
import importlib.util
import os
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else pathlib.Path(__file__).resolve().parents[2])
os.environ["SYMC_LIB"] = os.path.abspath(sys.argv[1])
spec = importlib.util.spec_from_file_location("symc_lib", root / "frontend/torch/symc/_lib.py")
L = importlib.util.module_from_spec(spec)
spec.loader.exec_module(L)

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def strip_comments(text):
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def header_constants():
    """{name: (value, header)} for every enumerator and integer macro of include/symc/*.h."""
    out = {}
    for h in sorted((root / "include/symc").glob("*.h")):
        text = strip_comments(h.read_text())
        for body in re.findall(r"typedef\s+enum\s+\w*\s*\{(.*?)\}", text, flags=re.S):
            value = -1
            for item in filter(None, (x.strip() for x in body.split(","))):
                m = re.fullmatch(r"(\w+)\s*(?:=\s*(.+))?", item, flags=re.S)
                if not m:
                    fail(f"{h.name}: cannot read enumerator '{item}'")
                    continue
                value = int(m.group(2), 0) if m.group(2) else value + 1
                out[m.group(1)] = (value, h.name)
        for name, body in re.findall(r"^#define\s+((?:SYMC|SYMRT)_\w+)[ \t]+(.+)$", text, flags=re.M):
            if '"' in body:
                continue  # SYMC_VERSION_STRING
            lit = re.search(r"\b(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\b", body)
            if lit:
                out[name] = (int(lit.group(1), 0), h.name)
    return out


table = L.constants()
headers = header_constants()
if len(headers) < 40:
    fail(f"read only {len(headers)} constants from {root}/include/symc: the header reader is broken")

# 1. the table against the headers
for name, (value, h) in sorted(headers.items()):
    if name not in table:
        fail(f"{name} ({h}) is not in libsymc's table: add K({name}) to lib/libsymc.c")
    elif table[name] != value:
        fail(f"{name} is {value} in {h} but {table[name]} in libsymc's table")
for name in sorted(table):
    if "(" not in name and name not in headers:
        fail(f"libsymc's table has {name}, which no public header defines")

# 2. the ctypes structs against the C ones
structs = {L.Error: "symc_error", L.Attr: "symc_attr", L.CompileOptions: "symc_compile_options",
           L.Region: "symc_region", L.IoInfo: "symrt_io_info", L.SymbolInfo: "symrt_symbol_info"}
for cls, cname in structs.items():
    size = table.get(f"sizeof({cname})")
    if size is None:
        fail(f"libsymc's table has no sizeof({cname}): add SIZE({cname}) to lib/libsymc.c")
        continue
    if ctypes.sizeof(cls) != size:
        fail(f"_lib.{cls.__name__} is {ctypes.sizeof(cls)} bytes, {cname} is {size}")
    fields = [f[0] for f in cls._fields_]
    c_fields = [k[len(f"offsetof({cname}, "):-1] for k in table if k.startswith(f"offsetof({cname}, ")]
    if fields != c_fields:
        fail(f"_lib.{cls.__name__} has fields {fields}, libsymc's table {cname} {c_fields}")
    for f in fields:
        off = table.get(f"offsetof({cname}, {f})")
        if off is not None and getattr(cls, f).offset != off:
            fail(f"_lib.{cls.__name__}.{f} is at offset {getattr(cls, f).offset}, in C at {off}")

# 3. the package's names
for name in L.__all__:
    if name.isupper():
        c = next((p + name for p in ("SYMC_", "SYMRT_") if p + name in table), None)
        if c is None:
            fail(f"_lib.{name} has no SYMC_{name} / SYMRT_{name} in libsymc's table")
        elif getattr(L, name) != table[c]:
            fail(f"_lib.{name} is {getattr(L, name)}, {c} is {table[c]}")
codes = {n: v for n, v in table.items() if n == "SYMC_OK" or n.startswith("SYMC_ERR_")}
names = {L.status_name(v) for v in codes.values()}
if len(names) != len(codes) or L.status_name(table["SYMC_ERR_INVALID_ARG"]) != "invalid_arg" or \
        L.status_name(table["SYMC_OK"]) != "ok":
    fail(f"status names {sorted(names)} are not one per symc_status")

print(f"test_enums: {len(headers)} header constants, {len(structs)} structs checked, {len(failures)} failures")
sys.exit(1 if failures else 0)
