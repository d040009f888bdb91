#!/usr/bin/env python3
"""`symc dot MODEL|ENGINE` (issue 18): the graph for Graphviz, with symbolic shapes on the edges in the
user's symbol names and the fuse pass's groups as clusters. Run on the bundled example (the module,
and its engine, whose groups come from the GPU steps) and on an ONNX model written here with named
dims B and S (a matmul with bias and ReLU that the CUDA target fuses into one cuBLASLt call, and a
concat whose output has 2*S rows), and, given REGIONS_ENGINE (tests/tools/regions_engine), on an
engine with 2 regions (each graph in a cluster of its own, ids prefixed r<k>_). Every output is parsed by a structural DOT reader below (statements,
balanced braces, unique node ids, edges between declared nodes, clusters of two or more nodes) and,
where Graphviz is installed (scripts/deps.sh installs it), rendered by `dot -Tsvg` and read back as
XML. The expected symbols, shapes, clusters and roles are checked, and so are the refusals.

usage: dot_test.py SYMC VIT_SEED TMPDIR [REGIONS_ENGINE]
"""
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
import numpy as np

symc, vit_seed, tmp = sys.argv[1], sys.argv[2], sys.argv[3]
regions_engine = sys.argv[4] if len(sys.argv) > 4 else None
os.makedirs(tmp, exist_ok=True)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*args, want=0):
    p = subprocess.run([symc, *args], capture_output=True, text=True)
    check(p.returncode == want, f"symc {' '.join(args)}: exit {p.returncode}, wanted {want}: {p.stderr[-2000:]}")
    return p.stdout, p.stderr


STR = r'"(?:[^"\\]|\\.)*"'
ATTRS = rf'\[(?:\s*\w+={STR}|\s*\w+=[\w.#]+|,)*\s*\]'
NODE = re.compile(rf'^({STR}) {ATTRS};$')
EDGE = re.compile(rf'^({STR}) -> ({STR}) {ATTRS};$')
DEFAULTS = re.compile(rf'^(graph|node|edge) {ATTRS};$')
SUB_OPEN = re.compile(rf'^subgraph ({STR}) {{$')
ASSIGN = re.compile(rf'^\w+=(?:{STR}|[\w.#]+);(?: \w+=(?:{STR}|[\w.#]+);)*$')


def unq(s):
    return s[1:-1].replace('\\"', '"')


def parse_dot(text, what):
    """A structural reading of the DOT this tool writes: returns (graph label, nodes {id: label},
    edges [(from, to, label)], clusters {id: (label, [node ids])}); each problem is a failure. Clusters
    nest only inside a region's ("cluster_region_<k>"), whose node list holds its nested clusters' too."""
    lines = [ln.strip() for ln in text.strip().splitlines()]
    check(bool(lines) and re.match(rf'^digraph {STR} {{$', lines[0]) and lines[-1] == "}",
          f"{what}: not one digraph {{ ... }}")
    nodes, edges, clusters, stack, glabel = {}, [], {}, [], None
    for ln in lines[1:-1]:
        cur = stack[-1] if stack else None
        if m := SUB_OPEN.match(ln):
            check(cur is None or cur.startswith("cluster_region_"), f"{what}: nested subgraph: {ln}")
            name = unq(m.group(1))
            check(name.startswith("cluster_") and name not in clusters, f"{what}: bad cluster name {name}")
            clusters[name] = [None, []]
            stack.append(name)
        elif ln == "}":
            check(cur is not None, f"{what}: unbalanced '}}'")
            stack = stack[:-1]
        elif m := EDGE.match(ln):
            edges.append((unq(m.group(1)), unq(m.group(2)), re.search(rf'label=({STR})', ln).group(1)))
        elif m := NODE.match(ln):
            nid = unq(m.group(1))
            check(nid not in nodes, f"{what}: node {nid} declared twice")
            nodes[nid] = unq(re.search(rf'label=({STR})', ln).group(1))
            for c in stack:
                clusters[c][1].append(nid)
        elif m := DEFAULTS.match(ln):
            if m.group(1) == "graph":
                glabel = unq(re.search(rf'label=({STR})', ln).group(1))
        elif cur is not None and ASSIGN.match(ln):
            if lm := re.match(rf'^label=({STR});$', ln):
                clusters[cur][0] = unq(lm.group(1))
        else:
            check(False, f"{what}: not a DOT statement this tool writes: {ln}")
    check(not stack, f"{what}: unbalanced braces")
    for a, b, _ in edges:
        check(a in nodes and b in nodes, f"{what}: edge {a} -> {b} between undeclared nodes")
    for c, (label, members) in clusters.items():
        check(label and len(members) >= 2, f"{what}: cluster {c} has label {label!r} and {len(members)} nodes")
    return glabel, nodes, edges, {c: (lab, mem) for c, (lab, mem) in clusters.items()}


def render(text, what):
    if not shutil.which("dot"):
        print(f"note: Graphviz is not installed; {what} checked structurally only")
        return
    p = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True)
    check(p.returncode == 0 and not p.stderr.strip(), f"{what}: dot -Tsvg failed: {p.stderr}")
    try:
        svg = ET.fromstring(p.stdout)
        titles = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}title")]
        check(any(t and t.startswith("cluster_") for t in titles) or "cluster" not in text,
              f"{what}: the SVG has no cluster")
    except ET.ParseError as e:
        check(False, f"{what}: dot's SVG is not XML: {e}")


def edge_labels(edges):
    return [lab for _, _, lab in edges]


# ---- the bundled example: module and engine ----
vit = os.path.join(tmp, "vit.symir")
subprocess.run([vit_seed, vit], check=True, capture_output=True)
out, _ = run("dot", vit)
glabel, nodes, edges, clusters = parse_dot(out, "vit module")
render(out, "vit module")
check("B in [1, 32] opt 4" in (glabel or ""), f"vit: the graph label lists the symbol: {glabel}")
labs = edge_labels(edges)
for shape in ("f32[B, 196, 768]", "f32[B, 197, 768]", "f32[B, 197, 2304]", "f32[B, 197, 3, 12, 64]"):
    check(any(shape in lab for lab in labs), f"vit: no edge with shape {shape}: {labs}")
lib = [c for c in clusters.values() if c[0] == "library call: qkv_mm"]
check(len(lib) == 1 and any("add (bias)" in nodes[n] for n in lib[0][1]),
      f"vit: the qkv matmul and its bias add form one library-call cluster: {clusters}")
check(not any("constant" in lab for lab in nodes.values()), "vit: weight-making nodes are not drawn")
check(any("+1 weight" in lab for lab in nodes.values()), "vit: a node counts its weights")
out_nf, _ = run("dot", vit, "--no-fuse")
check(not parse_dot(out_nf, "vit --no-fuse")[3], "vit --no-fuse: no clusters")

vit_e = os.path.join(tmp, "vit.symx")
run("compile", vit, "--no-tune", "-o", vit_e)
out, _ = run("dot", vit_e)
glabel, nodes, edges, clusters = parse_dot(out, "vit engine")
render(out, "vit engine")
check("B in [1, 32] opt 4" in (glabel or ""), f"vit engine: symbols: {glabel}")
check(any("f32[B, 197, 2304]" in lab for lab in edge_labels(edges)), "vit engine: symbolic shapes on the edges")
gemm = [c for c in clusters.values() if "gemm (cuBLASLt)" in c[0]]
check(len(gemm) == 1 and sorted(nodes[n].split("\\n")[0] for n in gemm[0][1]) == ["qkv", "qkv_mm"],
      f"vit engine: the gemm step holds qkv_mm and qkv: {clusters}")

# ---- an ONNX model with named dims ----
rng = np.random.default_rng(0)
w, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal(32).astype(np.float32)
g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["mm"], name="proj"),
                  h.make_node("Add", ["mm", "b"], ["biased"], name="bias"),
                  h.make_node("Relu", ["biased"], ["act"], name="act"),
                  h.make_node("Concat", ["act", "act"], ["y"], name="twice", axis=1)],
                 "named", [h.make_tensor_value_info("x", T.FLOAT, ["B", "S", 64])],
                 [h.make_tensor_value_info("y", T.FLOAT, None)], [nh.from_array(w, "w"), nh.from_array(b, "b")])
model = os.path.join(tmp, "named.onnx")
onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), model)
shapes = ["--shapes", "x:1x4x64,2x16x64,8x128x64"]
out, _ = run("dot", model, *shapes)
glabel, nodes, edges, clusters = parse_dot(out, "onnx model")
render(out, "onnx model")
check("B in [1, 8] opt 2" in (glabel or "") and "S in [4, 128] opt 16" in (glabel or ""),
      f"onnx: the graph label names B and S with their ranges: {glabel}")
labs = edge_labels(edges)
check(any("f32[B, S, 64]" in lab for lab in labs) and any("f32[B, S, 32]" in lab for lab in labs),
      f"onnx: edges in the model's symbol names: {labs}")
check(any(re.search(r"f32\[B, \(?(2\*S|S\*2)\)?, 32\]", lab) for lab in labs), f"onnx: the concat's 2*S rows: {labs}")
lib = [c for c in clusters.values() if c[0].startswith("library call")]
roles = sorted(nodes[n].split("\\n")[1] for n in lib[0][1]) if len(lib) == 1 else []
check(roles == ["add (bias)", "matmul", "relu (activation)"], f"onnx: one library call, bias and activation: {clusters}")
out2, _ = run("dot", f"--onnx={model}", "--minShapes=x:1x4x64", "--optShapes=x:2x16x64", "--maxShapes=x:8x128x64")
check(out2 == out, "onnx: trtexec's shape spellings give the same graph")

# ---- refusals ----
_, err = run("dot", want=2)
check("missing MODEL or ENGINE" in err, f"no file: {err}")
_, err = run("dot", os.path.join(tmp, "g.txt"), want=2)
check("neither .onnx, .symir nor .symx" in err, f"a .txt: {err}")
_, err = run("dot", vit, *shapes, want=2)
check("--shapes and --multiple are for ONNX models" in err, f"--shapes on a .symir: {err}")
_, err = run("dot", vit_e, "--no-fuse", want=2)
check("--no-fuse is for models" in err, f"--no-fuse on an engine: {err}")
_, err = run("dot", model, want=1)
check(err.count("named.onnx") == 1 and err.count("\n") == 1 and "B" in err, f"no shapes for B, S: {err}")
_, err = run("dot", os.path.join(tmp, "missing.symx"), want=1)
check(err.startswith("symc: dot: ") and "missing.symx" in err, f"a missing engine: {err}")

if failures:
    print(f"{len(failures)} failure(s)", file=sys.stderr)
    sys.exit(1)
# ---- an engine with 2 regions: one cluster per region graph, ids prefixed r<k>_ ----
if regions_engine:
    rg = os.path.join(tmp, "regions.symx")
    subprocess.run([regions_engine, rg], check=True, capture_output=True)
    out, _ = run("dot", rg)
    glabel, nodes, edges, clusters = parse_dot(out, "regions engine")
    render(out, "regions engine")
    check("B in [1, 8] opt 3" in (glabel or "") and "C in [1, 8] opt 3" in (glabel or ""),
          f"regions: the graph label lists the root's symbols: {glabel}")
    regs = {c: v for c, v in clusters.items() if c.startswith("cluster_region_")}
    check(sorted(regs) == ["cluster_region_0", "cluster_region_1"], f"regions: 2 region clusters: {sorted(clusters)}")
    for k, cond, op in ((0, "B <= 1", "relu"), (1, "2 <= B", "neg")):
        label, members = regs.get(f"cluster_region_{k}", ("", []))
        check(label.startswith(f"region {k}: {cond}"), f"regions: region {k}'s label: {label!r}")
        check(members and all(n.startswith(f"r{k}_") for n in members), f"regions: region {k}'s ids: {members}")
        check(any(nodes[n] == f"y\\n{op}" for n in members), f"regions: region {k} draws y = {op}: {members}")
    check(all(n.startswith(("r0_", "r1_")) for n in nodes), f"regions: every id is a region's: {list(nodes)}")
    check(any("f32[B, 2, 2]" in lab for lab in edge_labels(edges)) and
          any("f32[1, 2, 2]" in lab for lab in edge_labels(edges)), "regions: each region's own shapes on its edges")

print("ok: symc dot on the example's module and engine, on an ONNX model and on an engine with regions")
