#!/usr/bin/env bash
# Builds (here, on the CPU machine) everything the GPU check runs and copies
# it into .gpu/ (git-ignored; `carry` it to the GPU machine):
#   .gpu/bin    aotrun, aotrun_gpu_check, aotrun_gpu_faults,
#               aotrun_gpu_unload_check, GPU test and benchmark binaries,
#               and beside aotrun the example programs `aotrun demo` runs:
#               example_program/ (the CPU fixture model) and
#               example_program_cuda/ (the fixture built with -DFIXTURE_CUDA)
#   .gpu/lib    libaotrun_shim.so, libaotrun_cuda.so, libaotrun_cpu_ref.so,
#               libaotrun_host.so (for python/, testing/gpu/test_python_binding.py),
#               and the Debian libraries the GPU machine lacks (cmocka, cJSON)
# Then: testing/gpu/run_gpu_check.sh on the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
BAZEL=(bazel ${AOTRUN_BAZEL_STARTUP:-})
targets=(
  //plugin_api:aotrun
  //install:libaotrun_host.so
  //shim_lib:libaotrun_shim.so
  //backend_cuda:libaotrun_cuda.so
  //testing/plugins:libaotrun_cpu_ref.so
  //testing/backend:aotrun_gpu_check
  //testing/backend:aotrun_gpu_unload_check
  //testing/backend:aotrun_stream_check
  //testing/backend:aotrun_gpu_faults
  //testing/backend:aotrun_gpu_identity_check
  //testing/backend:test_staged_upload_cuda
  //testing/shim:test_shim_cuda
  //testing/shim:bench_alloc
  //testing/fallback:test_fallback_cuda
  //testing/fallback:test_attention_args
  //testing/fallback:test_conv_args
  //testing/fallback:bench_gemm
  //testing/gpu:launch_floor
  //testing/gpu:graph_copy_leaf
  //testing/example_program
  //testing/example_program:example_program_cuda
)
# --symlink_prefix=/: leave the workspace's convenience links alone.
"${BAZEL[@]}" build -c opt --dynamic_mode=off --symlink_prefix=/ "${targets[@]}"
bin=$("${BAZEL[@]}" info -c opt --dynamic_mode=off bazel-bin)
rm -rf .gpu && mkdir -p .gpu/bin .gpu/lib
copy() { cp -L "$1" "$2" && chmod u+w "$2/$(basename "$1")"; }
copy "$bin/plugin_api/aotrun" .gpu/bin
copy "$bin/testing/backend/aotrun_gpu_check" .gpu/bin
copy "$bin/testing/backend/aotrun_gpu_unload_check" .gpu/bin
copy "$bin/testing/backend/aotrun_stream_check" .gpu/bin
copy "$bin/testing/backend/aotrun_gpu_faults" .gpu/bin
copy "$bin/testing/backend/aotrun_gpu_identity_check" .gpu/bin
for t in testing/shim/test_shim_cuda testing/shim/bench_alloc \
         testing/backend/test_staged_upload_cuda \
         testing/fallback/test_fallback_cuda testing/fallback/test_attention_args \
         testing/fallback/test_conv_args \
         testing/fallback/bench_gemm testing/gpu/launch_floor \
         testing/gpu/graph_copy_leaf; do
  copy "$bin/$t" .gpu/bin
done
# The demo's example programs, where `aotrun demo` looks: beside aotrun.
mkdir -p .gpu/bin/example_program .gpu/bin/example_program_cuda
for f in manifest.json weights.safetensors forward.so; do
  copy "$bin/testing/example_program/$f" .gpu/bin/example_program
  copy "$bin/testing/example_program/example_program_cuda/$f" .gpu/bin/example_program_cuda
done
copy "$bin/shim_lib/libaotrun_shim.so" .gpu/lib
copy "$bin/install/libaotrun_host.so" .gpu/lib   # the Python binding's
copy "$bin/backend_cuda/libaotrun_cuda.so" .gpu/lib
copy "$bin/testing/plugins/libaotrun_cpu_ref.so" .gpu/lib
for l in libcmocka.so.0 libcjson.so.1; do
  cp -L "/usr/lib/x86_64-linux-gnu/$l" .gpu/lib/
done
# The CUDA binaries are mostly fatbins that xz shrinks ~10x: a carry holds
# 64 MiB at most. testing/gpu/unpack_bundle.sh restores them on the GPU.
find .gpu -type f -size +4M -print0 | xargs -0 -r -n1 -P2 xz -6 -f
du -sh .gpu
# The call profiler (testing/gpu/profile/call_profile.c), an LD_PRELOAD tool;
# it needs cuBLAS (the shim opens it through the profiler: profile_case.sh).
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I. -I/usr/local/cuda/include \
  testing/gpu/profile/call_profile.c -ldl -L/usr/local/cuda/lib64 \
  -Wl,--no-as-needed -lcublasLt -lcublas -Wl,--as-needed \
  -o .gpu/lib/libcall_profile.so
# Its cuDNN half (profile_case.sh names it as the cuDNN the shim opens).
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I. -I/usr/local/cuda/include \
  -DCALL_PROFILE_CUDNN testing/gpu/profile/call_profile.c -ldl \
  -L/usr/local/cuda/lib -L/usr/local/cuda/lib64 -Wl,--no-as-needed -l:libcudnn.so.9 \
  -Wl,--as-needed -o .gpu/lib/libcall_profile_cudnn.so
# The crash reporter (testing/gpu/profile/crash_backtrace.c): native frames
# of a process that dies where no gdb is (probe_torch_runner.py).
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC \
  testing/gpu/profile/crash_backtrace.c -ldl -o .gpu/lib/libcrash_backtrace.so
# The graph tracer (testing/gpu/profile/graph_trace.c): a process's CUDA
# graph calls in order, each graph as DOT (graph_sanitize_probe.py).
gcc -std=c11 -O2 -Wall -Wextra -Werror -shared -fPIC -I/usr/local/cuda/include \
  testing/gpu/profile/graph_trace.c -ldl -L/usr/local/cuda/lib64 -lcudart \
  -o .gpu/lib/libgraph_trace.so
