#!/bin/bash
# Tuning A/B on a GPU machine (BENCHMARKS.md, session 11): ResNet-50 exported with B, H and W
# dynamic, converted to f16 storage, built three ways and timed at six points (opt, the ends,
# a batch-32 square, an odd size and an odd aspect ratio) with `symc bench` (CUDA graphs):
#   base    build_base/bin/symc: an older symc to compare with (carry it next to build/bin)
#   new     build/bin/symc with tuning (cold timing cache)
#   notune  build/bin/symc --no-tune (the libraries' heuristics per shape at run time)
# then the per-step profile at batch 1 of new and notune. Prints the build times, one step's
# tuned entries and buckets, and the p50 table; JSON and profiles go to $OUT.
# usage (repo root, build/bin, build/lib and build_base/bin carried): bash bench/tuning_ab.sh
set -u
OUT=${OUT:-/tmp/out}; mkdir -p $OUT /tmp/p
export SYMC_LIB=$PWD/build/lib/libsymc.so
NEW=build/bin/symc; BASE=build_base/bin/symc
python3 - <<'PY'
import sys, torch, torchvision, onnx
sys.path.insert(0, 'tests/gpu')
from half_models import to_half
m = torchvision.models.resnet50(weights=None).eval()
torch.onnx.export(m, (torch.randn(1, 3, 224, 224),), '/tmp/p/r50.onnx', dynamo=False, opset_version=17,
                  input_names=['x'], output_names=['y'], dynamic_axes={'x': {0: 'B', 2: 'H', 3: 'W'}, 'y': {0: 'B'}})
to_half('/tmp/p/r50.onnx', '/tmp/p/r50h.onnx', onnx.TensorProto.FLOAT16)
PY
SH="--shapes x:1x3x128x128,8x3x224x224,32x3x320x320"
PTS="--point x:1x3x224x224 --point x:8x3x224x224 --point x:32x3x224x224 --point x:5x3x161x317 --point x:1x3x128x320 --point x:32x3x320x320"
export SYMC_CACHE_DIR=/tmp/p/cache_base
/usr/bin/time -f "base compile %e s" $BASE compile /tmp/p/r50h.onnx -o /tmp/p/base.symx $SH 2>&1 | tail -2
export SYMC_CACHE_DIR=/tmp/p/cache_new
/usr/bin/time -f "new compile cold %e s" $NEW compile /tmp/p/r50h.onnx -o /tmp/p/new.symx $SH 2>&1 | grep -i "tun\|NVRTC\|compile" | tail -6
/usr/bin/time -f "new compile warm %e s" $NEW compile /tmp/p/r50h.onnx -o /tmp/p/new2.symx $SH 2>&1 | grep -i "tuned\|compile" | tail -3
$NEW compile /tmp/p/r50h.onnx -o /tmp/p/notune.symx $SH --no-tune -q
$NEW inspect /tmp/p/new.symx | grep -A20 "  3 conv" | head -22
for rep in 1; do
for v in base new notune; do
  S=$NEW; [ $v = base ] && S=$BASE
  $S bench /tmp/p/$v.symx $PTS --iters 40 --warmup 20 --graphs --json $OUT/${v}_$rep.json > /dev/null || echo "bench $v failed"
done
done
python3 - <<'PY'
import json, os
out = os.environ.get('OUT', '/tmp/out')
rows = {}
for v in ('base', 'new', 'notune'):
    for rep in (1,):
        d = json.load(open(os.path.join(out, f'{v}_{rep}.json')))
        for p in d['points']:
            rows.setdefault(p['point'], {}).setdefault(v, []).append(p['p50_ms'])
print('point | base | new | notune   (p50 ms, two rounds)')
for k, r in rows.items():
    print(k, ' | '.join(f"{v}: " + '/'.join(f'{x:.3f}' for x in r[v]) for v in ('base', 'new', 'notune')))
PY
for v in new notune; do
  $NEW bench /tmp/p/$v.symx --point x:1x3x224x224 --iters 20 --warmup 5 --profile > $OUT/prof_$v.txt 2>&1
done
