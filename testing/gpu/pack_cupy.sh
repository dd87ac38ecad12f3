#!/usr/bin/env bash
# Packs CuPy for the GPU machine, which has torch but no CuPy and no
# network (issue 14: the Python binding's CuPy case). Here (network):
# downloads the cupy-cuda13x and fastrlock wheels for the GPU machine's
# Python 3.12 and writes their unpacked files as one .cupy/cupy-site.tar.xz
# (about 50 MiB: too big to carry with .gpu in one call, so it travels
# alone):
#   testing/gpu/pack_cupy.sh
#   device call 1 (carry [".cupy"]):  bash testing/gpu/unpack_cupy.sh
#   device call 2 (carry [".gpu"], same warm machine: the unpacked
#   .cupy/site stays there):  AOTRUN_GPU_PARTS=python bash testing/gpu/run_gpu_check.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pip download --no-deps --only-binary=:all: --python-version 3.12 \
  --platform manylinux2014_x86_64 -d "$tmp/wheels" cupy-cuda13x fastrlock
mkdir -p "$tmp/site"
for w in "$tmp"/wheels/*.whl; do
  python3 -m zipfile -e "$w" "$tmp/site"
done
mkdir -p .cupy
tar -C "$tmp/site" -cf - . | xz -T0 -9 > .cupy/cupy-site.tar.xz
ls -l .cupy/cupy-site.tar.xz
