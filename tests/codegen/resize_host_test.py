#!/usr/bin/env python3
"""The CUDA resize kernels' arithmetic without a GPU (codegen/cuda_emit_resize.c): a model of 128 Resize
nodes over a constant-shape f32 input (every coordinate transformation with each nearest rounding rule,
linear and cubic at scales up, down and odd, sizes given instead of scales, exclude_outside with
cubic_coeff_a, antialias, tf_crop_and_resize with an extrapolation value) is compiled with GPU code, and
the generated kernels are taken from `symc inspect --source`, compiled for the host by the C++ compiler
with a few stand-ins for the CUDA built-ins (SC_LOOP as a plain loop, __dmul_rn/__dadd_rn as rounded
double operations, sc_report), and run on the input. Every output must match the reference backend's
(`symc run --output`, the kernel the CUDA one mirrors) to 1e-5. The GPU itself is the device test's
(tests/gpu, model resize_modes); this checks the index, tap and weight logic everywhere CI runs.

usage: resize_host_test.py SYMC TMPDIR
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

symc, tmp = sys.argv[1], sys.argv[2]
os.makedirs(tmp, exist_ok=True)
cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
if not cxx:
    print("SKIP: no C++ compiler")
    sys.exit(0)


def path(name):
    return os.path.join(tmp, name)


def run(*args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"FAIL: {' '.join(args)}: exit {p.returncode}: {p.stderr[-3000:]}")
    return p.stdout


XSHAPE = (1, 2, 7, 9)
nodes, outs, inits = [], [], []
for name, v in (("up", [1, 1, 2, 1.5]), ("down", [1, 1, 0.5, 0.4]), ("odd", [1, 1, 1.7, 0.75]),
                ("roi", [0, 0, 0.2, -0.1, 1, 1, 0.9, 1.13])):
    inits.append(nh.from_array(np.array(v, np.float32), name))
for name, v in (("sz", [1, 2, 11, 5]), ("sz2", [1, 2, 3, 4])):
    inits.append(nh.from_array(np.array(v, np.int64), name))


def resize(ins, **kw):
    name = f"r{len(outs)}"
    nodes.append(h.make_node("Resize", ins, [name], name=name, **kw))
    outs.append(name)


for c in ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
          "tf_crop_and_resize"):
    roi = "roi" if c == "tf_crop_and_resize" else ""
    ex = {"extrapolation_value": -1.5} if roi else {}
    for rule in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"):
        resize(["x", roi, "up"], mode="nearest", coordinate_transformation_mode=c, nearest_mode=rule, **ex)
        resize(["x", roi, "", "sz"], mode="nearest", coordinate_transformation_mode=c, nearest_mode=rule, **ex)
    for mode in ("linear", "cubic"):
        for sc in ("up", "down", "odd"):
            resize(["x", roi, sc], mode=mode, coordinate_transformation_mode=c, **ex)
        resize(["x", roi, "", "sz"], mode=mode, coordinate_transformation_mode=c, **ex)
        resize(["x", roi, "", "sz2"], mode=mode, coordinate_transformation_mode=c, exclude_outside=1,
               cubic_coeff_a=-0.5, **ex)
        if not roi:
            resize(["x", "", "down"], mode=mode, coordinate_transformation_mode=c, antialias=1)
            resize(["x", "", "", "sz2"], mode=mode, coordinate_transformation_mode=c, antialias=1, exclude_outside=1)

x = np.random.default_rng(1).standard_normal(XSHAPE).astype(np.float32)
np.save(path("x.npy"), x)
source = ""
for part in range(0, len(outs), 64):  # an engine has at most 64 outputs in `symc run`
    sub = outs[part:part + 64]
    g = h.make_graph([n for n in nodes if n.output[0] in sub], "rs", [h.make_tensor_value_info("x", T.FLOAT, XSHAPE)],
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in sub], inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 19)]), path(f"rs{part}.onnx"))
    run(symc, "compile", path(f"rs{part}.onnx"), "--no-tune", "-o", path(f"rs{part}.symx"))
    args = [a for o in sub for a in ("--output", f"{o}={path('ref_' + o + '.npy')}")]
    run(symc, "run", path(f"rs{part}.symx"), "--input", f"x={path('x.npy')}", *args)
    source += run(symc, "inspect", path(f"rs{part}.symx"), "--source")

kernels = re.findall(r'/\* resize: (r\d+), [^\n]*\*/\nextern "C" __global__ void __launch_bounds__\(\d+\) (\w+)'
                     r'\(([^)]*)\) \{\n(.*?)\n\}\n', source, re.S)
if sorted(k[0] for k in kernels) != sorted(outs):
    sys.exit(f"FAIL: {len(kernels)} resize kernels in the generated source for {len(outs)} nodes")
prog = ['#include <cmath>', '#include <cstdio>', '#include <cstring>',
        'using std::fabs; using std::floor; using std::fmin; using std::fmax;',
        '#define SC_LOOP(i, n) for (long long i = 0; i < (n); i++)',
        'static double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }',
        'static double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }',
        'static int reported = 0;',
        'static void sc_report(unsigned, unsigned) { reported = 1; }']
for name, fn, params, body in kernels:
    if not re.fullmatch(r"const float\* __restrict__ t\d+, float\* t\d+", params):
        sys.exit(f"FAIL: kernel {fn} of {name} takes ({params}); a constant-shape resize takes (x, y) alone")
    prog.append(f"static void {fn}({params}) {{\n{body}\n}}")
n_x = int(np.prod(XSHAPE))
prog.append(f"static float x[{n_x}], y[1 << 16];")
prog.append("int main(int argc, char** argv) {")
prog.append(f'    FILE* f = fopen(argv[1], "rb"); if (!f || fread(x, 4, {n_x}, f) != {n_x}) return 2; fclose(f);')
for name, fn, _, _ in kernels:
    prog.append(f'    memset(y, 0xff, sizeof y); {fn}(x, y);')
    prog.append(f'    {{ char p[4096]; snprintf(p, sizeof p, "%s/emu_{name}.bin", argv[2]); FILE* g = fopen(p, "wb");'
                f' if (!g) return 3; fwrite(y, 4, 1 << 16, g); fclose(g); }}')
prog.append('    return reported ? 4 : 0;\n}')
with open(path("emu.cpp"), "w") as f:
    f.write("\n".join(prog) + "\n")
x.tofile(path("x.bin"))
run(cxx, "-std=c++17", "-O1", "-w", "-o", path("emu"), path("emu.cpp"))
run(path("emu"), path("x.bin"), tmp)

bad = []
for name in outs:
    ref = np.load(path(f"ref_{name}.npy"))
    emu = np.fromfile(path(f"emu_{name}.bin"), np.float32)[:ref.size].reshape(ref.shape)
    err = float(np.max(np.abs(emu.astype(np.float64) - ref))) if ref.size else 0.0
    if not err <= 1e-5 * max(1.0, float(np.max(np.abs(ref)))):
        node = next(n for n in nodes if n.output[0] == name)
        bad.append(f"{name} ({', '.join(f'{a.name}={h.get_attribute_value(a)}' for a in node.attribute)}, "
                   f"inputs {list(node.input)}): max error {err:g}")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
if bad:
    sys.exit(f"{len(bad)} of {len(outs)} resize kernels differ from the reference backend")
print(f"ok: {len(outs)} generated resize kernels, run on the host, match the reference backend")
