#!/bin/bash
# Sourced by the device scripts (device_gpu.sh, device_zoo.sh, device_real_models.sh,
# device_real_builds.sh): the GPU machine's environment for symc, in one place.
# - NVRTC: where the system has no libnvrtc.so.13, the one pip's nvidia-cuda-nvrtc ships.
# - timm (ViT-S) is not on the GPU machine's image: carried as a wheel in .whl (device_zoo.sh says
#   how) and installed into /tmp/site; a failed install returns 1.
if ! ldconfig -p | grep -q libnvrtc.so.13 && [ ! -e /usr/local/cuda/lib64/libnvrtc.so.13 ]; then
  nv=$(python3 -c 'import nvidia.cuda_nvrtc, os; print(os.path.dirname(nvidia.cuda_nvrtc.__file__) + "/lib")' 2>/dev/null)
  export LD_LIBRARY_PATH=${nv}:${LD_LIBRARY_PATH:-}
fi
if ! python3 -c 'import timm' 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl ||
    return 1
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
