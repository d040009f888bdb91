#!/bin/bash
# Packs the tritonserver that the nvidia-pytriton wheel ships (scripts/deps.sh installs it) into one
# .tar.xz for a machine without pip (the GPU machine): bin/tritonserver, the wheel's libraries it and
# the Python backend load (lib/), and the Python backend with its stub for one Python version
# (backends/python/), and the gRPC client packages for that Python (client/, for bench/triton_serve.py
# --protocol grpc), under a top folder tritonserver/. bench/triton_serve.py unpacks and runs it.
# The stub is built with a pybind11 older than 2.12 (pytriton pins numpy<2): under numpy 2, which the GPU
# machine has, its numpy exchange is wrong (as_numpy() reads zeros, pb_utils.Tensor(name, ndarray) sends 0
# bytes), so a model.py run by it passes tensors through DLPack (bench/triton_serve.py's peer does). Its
# interpreter is isolated: it ignores PYTHONPATH and takes site-packages from the `python3` on PATH.
#   bash scripts/triton_pack.sh [OUT.tar.xz (default build/triton_server.tar.xz)] [PYTHON_VERSION (default 3.12)]
set -euo pipefail
out=${1:-build/triton_server.tar.xz}
pyver=${2:-3.12}
pkg=$(python3 -c 'import importlib.util as u; s = u.find_spec("pytriton"); print(s.submodule_search_locations[0])') || {
  echo "triton_pack: the nvidia-pytriton wheel is not installed (SYMC_DEPS_TORCH=1 bash scripts/deps.sh)" >&2
  exit 1
}
libs=$(dirname "$pkg")/nvidia_pytriton.libs
srv=$pkg/tritonserver
stub=$srv/python_backend_stubs/$pyver/triton_python_backend_stub
for f in "$srv/bin/tritonserver" "$srv/backends/python/libtriton_python.so" "$stub"; do
  [ -f "$f" ] || { echo "triton_pack: $f is missing from the wheel" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
top=$tmp/tritonserver
mkdir -p "$top/bin" "$top/lib" "$top/backends/python"
cp "$srv/bin/tritonserver" "$top/bin/"
cp "$srv/backends/python/libtriton_python.so" "$srv/backends/python/triton_python_backend_utils.py" "$top/backends/python/"
cp "$stub" "$top/backends/python/triton_python_backend_stub"
# the wheel's libraries in the load closure of the three (the system's own stay out)
for f in "$top/bin/tritonserver" "$top/backends/python/libtriton_python.so" "$top/backends/python/triton_python_backend_stub"; do
  LD_LIBRARY_PATH=$libs ldd "$f" | awk '{print $3}' | grep -F "$libs" || true
done | sort -u | while read -r lib; do cp "$lib" "$top/lib/"; done
# the gRPC client of bench/triton_serve.py --protocol grpc, for a machine without pip: tritonclient and the
# packages with binaries it needs, for this Python version, unzipped under client/ (the versions installed
# here, which the bench's --dry run checks); without PyPI the pack goes without it, saying so
client="no gRPC client"
pins=$(python3 - <<'PY'
import importlib.metadata as m
for p in ("tritonclient", "grpcio", "protobuf", "python-rapidjson"):
    try:
        print(f"{p}=={m.version(p)}")
    except m.PackageNotFoundError:
        print(p)
PY
)
mkdir -p "$tmp/wheels"
# shellcheck disable=SC2086 # one requirement a word
if python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any -d "$tmp/wheels" $pins; then
  mkdir -p "$top/client"
  for w in "$tmp"/wheels/*.whl; do python3 -m zipfile -e "$w" "$top/client"; done
  client="gRPC client: $(echo $pins | tr '\n' ' ')"
else
  echo "triton_pack: could not download the gRPC client's wheels; packing the server without them" >&2
fi
mkdir -p "$(dirname "$out")"
tar -C "$tmp" -cJf "$out.part" tritonserver
mv "$out.part" "$out"
echo "triton_pack: $out ($(du -h "$out" | cut -f1); $(ls "$top/lib" | wc -l) libraries, Python $pyver stub; $client)"
