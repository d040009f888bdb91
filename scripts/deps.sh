#!/usr/bin/env bash
# Installs what symc needs to build and test on a fresh Debian 12 machine
# (README.md, "Two commands on a fresh machine"). Idempotent: installs only what is missing.
# The CUDA 13 toolkit (NVRTC, cuBLAS/cuBLASLt, cuDNN) comes with the base image.
set -euo pipefail
pkgs=(cmake make gcc g++ git python3
      flatbuffers-compiler libflatbuffers-dev
      protobuf-c-compiler libprotobuf-c-dev libonnx-dev
      clang libclang-rt-14-dev pkg-config
      graphviz)  # graphviz: tests/tools/dot_test.py renders `symc dot` output with dot -Tsvg
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Python packages for the tests and the Python frontend (PyPI)
py=(numpy onnx onnxruntime flatbuffers)
if ! python3 -c 'import numpy, onnx, onnxruntime, flatbuffers' 2>/dev/null; then
  echo "deps: pip installing ${py[*]}"
  python3 -m pip install --quiet --disable-pip-version-check "${py[@]}"
fi
# the pinned clang-format of .clang-format (test style.format, scripts/format.sh)
if ! python3 -c 'import clang_format' 2>/dev/null; then
  echo "deps: pip installing clang-format==18.1.8"
  python3 -m pip install --quiet --disable-pip-version-check clang-format==18.1.8
fi
# torch for the PyTorch frontend's tests (ctest label python), asked for by
# scripts/test.sh with SYMC_DEPS_TORCH=1 (the main job does not need it):
# from PyPI, about 1.5 minutes; where it cannot be installed those tests print
# SKIP and pass.
if [ "${SYMC_DEPS_TORCH:-0}" = 1 ] && ! python3 -c 'import torch' 2>/dev/null; then
  echo "deps: pip installing torch==2.11.0 (for the PyTorch frontend tests)"
  timeout 1200 python3 -m pip install --quiet --disable-pip-version-check torch==2.11.0 ||
    echo "deps: torch could not be installed; the PyTorch frontend tests will SKIP"
fi
# real models for the torch-path tests (random weights, nothing downloaded): timm and torchvision
if [ "${SYMC_DEPS_TORCH:-0}" = 1 ] && python3 -c 'import torch' 2>/dev/null &&
   ! python3 -c 'import timm, torchvision' 2>/dev/null; then
  echo "deps: pip installing torchvision==0.26.0 timm"
  timeout 900 python3 -m pip install --quiet --disable-pip-version-check torchvision==0.26.0 timm ||
    echo "deps: timm/torchvision could not be installed; the real-model torch tests will SKIP"
fi
# Hugging Face model configs (random weights, nothing downloaded) for the KV-cache decoding test
# and the model zoo (tests/zoo), and onnxscript for torch.onnx.export(dynamo=True)
if [ "${SYMC_DEPS_TORCH:-0}" = 1 ] && python3 -c 'import torch' 2>/dev/null &&
   ! python3 -c 'import transformers, onnxscript' 2>/dev/null; then
  echo "deps: pip installing transformers==5.23.0 onnxscript==0.7.2"
  timeout 900 python3 -m pip install --quiet --disable-pip-version-check transformers==5.23.0 onnxscript==0.7.2 ||
    echo "deps: transformers/onnxscript could not be installed; the transformers tests will fail"
fi
# the Triton Inference Server test (tests/triton, ctest triton.serve), asked for by scripts/test.sh with
# SYMC_DEPS_TORCH=1 like the other test-only packages: tritonserver 2.51 as the nvidia-pytriton wheel
# ships it (the binary and its libraries; --no-deps: the test runs only the binary, and the wheel's own
# Python needs, numpy<2 among them, are not wanted), and the clients. Pinned exactly and installed last:
# tritonclient 2.51 downgrades numpy and protobuf and breaks onnx; 2.73 with numpy>=2 and protobuf>=6.31.1
# keeps onnx importable (checked below). Where they cannot be installed, triton.serve prints SKIP.
triton_ok() {
  python3 - <<'EOF' 2>/dev/null
import importlib.metadata as m, importlib.util as u, sys
ok = m.version("nvidia-pytriton") == "0.7.0" and m.version("tritonclient") == "2.73.0" and u.find_spec("pytriton")
import tritonclient.grpc, tritonclient.http  # noqa: E401,F401
sys.exit(0 if ok else 1)
EOF
}
if [ "${SYMC_DEPS_TORCH:-0}" = 1 ] && ! triton_ok; then
  echo "deps: pip installing nvidia-pytriton==0.7.0 (tritonserver) tritonclient[http,grpc]==2.73.0"
  { timeout 900 python3 -m pip install --quiet --disable-pip-version-check --no-deps nvidia-pytriton==0.7.0 &&
    timeout 900 python3 -m pip install --quiet --disable-pip-version-check 'tritonclient[http,grpc]==2.73.0' \
      'numpy>=2' 'protobuf>=6.31.1'; } ||
    echo "deps: nvidia-pytriton/tritonclient could not be installed; the Triton test will SKIP"
  python3 -c 'import onnx, numpy' || { echo "deps: onnx or numpy no longer imports after the Triton clients"; exit 1; }
fi
echo "deps: ok"
