#!/usr/bin/env bash
# On the GPU machine: unpacks .cupy/cupy-site.tar.xz (testing/gpu/pack_cupy.sh)
# into .cupy/site, which run_gpu_check.sh puts on PYTHONPATH, then checks
# that CuPy imports and sees the GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f .cupy/cupy-site.tar.xz ] || { echo "no .cupy/cupy-site.tar.xz: run testing/gpu/pack_cupy.sh here first"; exit 2; }
rm -rf .cupy/site && mkdir -p .cupy/site
xz -dc .cupy/cupy-site.tar.xz | tar -C .cupy/site -xf -
PYTHONPATH=$PWD/.cupy/site${PYTHONPATH:+:$PYTHONPATH} python3 -c \
  'import cupy; print("cupy", cupy.__version__, "devices:", cupy.cuda.runtime.getDeviceCount())'
