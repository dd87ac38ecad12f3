#!/usr/bin/env bash
# Installs what aotrun needs on a fresh Debian 12 machine (idempotent).
# Needs root (or sudo). Python packages for the exporter tests go into
# ./.venv-export when the test runner asks for them.
set -euo pipefail
# clang + libclang-rt-14-dev (libFuzzer, -fsanitize=fuzzer): testing/fuzz/.
pkgs=(bazel-bootstrap libcmocka-dev libdlpack-dev libcjson-dev python3 python3-venv valgrind gcc g++
      python3-numpy python3-pytest python3-setuptools python3-pip  # the Python binding's tests (python/)
      pkg-config  # the install test builds the C example with it
      patchelf    # //:install drops Bazel's build-tree RUNPATHs
      clang libclang-rt-14-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: the CUDA 13 toolkit is expected at /usr/local/cuda (nvcc not found)" >&2
  exit 1
fi
