#!/usr/bin/env bash
# The main job on the bundled example program: installs what is missing,
# builds aotrun, its plugins and the example programs, lists the plugins
# (the CUDA one says why it is unavailable on a machine without a GPU), then
# inspects and runs the example through the aotrun CLI.
#
# The example (testing/example_program) is the C-written fixture model
# (testing/fixtures/fixture_model.c): a container-ABI library that calls the
# real shims like AOTInductor code does, with FQN weights in safetensors. It
# is a CPU model, so it runs on the cpu_ref backend. Where a GPU is present,
# `aotrun demo` then runs the CUDA example (the same model built with
# -DFIXTURE_CUDA: weights on the GPU, cuBLAS through the shim) on the cuda
# backend: outputs compared with the CPU run, latency without and with CUDA
# graphs. Without one it says what is missing. Real torch-exported models
# run on the cuda backend too (see docs/gpu-results.md).
set -euo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh
mkdir -p .bazel-links
bazel build //plugin_api:aotrun //backend_cuda:libaotrun_cuda.so \
  //testing/plugins:libaotrun_cpu_ref.so //testing/example_program \
  //testing/example_program:example_program_cuda
bin=.bazel-links/bin
aotrun=$bin/plugin_api/aotrun
plugins=(--plugin "$bin/testing/plugins/libaotrun_cpu_ref.so"
         --plugin "$bin/backend_cuda/libaotrun_cuda.so")
echo "== aotrun plugins"
"$aotrun" plugins "${plugins[@]}"
echo "== aotrun inspect $bin/testing/example_program"
"$aotrun" inspect "$bin/testing/example_program"
echo "== aotrun demo (example program on cpu_ref; the CUDA example on cuda where a GPU is present)"
AOTRUN_EXAMPLE_PROGRAM=$bin/testing/example_program \
AOTRUN_EXAMPLE_PROGRAM_CUDA=$bin/testing/example_program/example_program_cuda \
  "$aotrun" demo "${plugins[@]}" --backend cpu_ref
