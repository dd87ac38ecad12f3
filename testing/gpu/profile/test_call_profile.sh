#!/bin/bash
# test_call_profile.sh: the call profiler (call_profile.c) preloaded into a
# program of three cudaGetDevice calls: its table counts them, and
# AOTRUN_PROFILE_SLOW_US prints each call at least that slow, numbered,
# and none above the threshold.
# usage: test_call_profile.sh LIBCALL_PROFILE.so CALL_PROFILE_PROBE
#          LIBCALL_PROFILE_CUDNN.so
set -u
PROFILER=$(realpath "$1") PROBE=$2 PROFILER_CUDNN=$(realpath "$3")
source "$(dirname "$0")/../../host/cli_checks.sh"

# Under --config=asan the preloaded profiler comes before ASan's runtime,
# which ASan refuses unless told the order is meant.
probe() {
  env LD_PRELOAD="$PROFILER" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    "$@" "$PROBE"
}

# A function's table row: "NAME inside: " and its last column(s).
inside() {
  probe 2>&1 | awk -v f="$1" '$1 == "call_profile:" && $2 == f && NF >= 9 {
    s = ""; for (i = 9; i <= NF; i++) s = s (i > 9 ? " " : "") $i
    print f " inside: " s }'
}
# The guard's row: us/x (column 6) >= self us/x (column 8), both printed
# to 0.001 us, with AOTRUN_PROFILE_CALLS=1, the default.
self_check() {
  probe 2>&1 | awk '$2 == "aoti_torch_create_cuda_stream_guard" && NF >= 9 {
    print ($6 + 0 >= $8 + 0 ? "self ok" : "self above total: " $0) }'
}

expect 0 "probe done" probe
# Three calls of its own, one inside the shim's stream guard.
expect 0 "call_profile: cudaGetDevice                                 4" probe
expect 0 "call_profile: slow: cudaGetDevice call 3 (wrapped call 3, at " \
  probe AOTRUN_PROFILE_SLOW_US=0
# The call made inside another is counted and its caller named; the
# caller's own row has none inside, and its self time is at most its
# total (the nested call taken out).
expect 0 "^cudaGetDevice inside: 1, in aoti_torch_create_cuda_stream_guard" inside cudaGetDevice
expect 0 "^aoti_torch_create_cuda_stream_guard inside: -" inside aoti_torch_create_cuda_stream_guard
expect 0 "^self ok" self_check
refute "call_profile: slow:" probe
refute "call_profile: slow:" probe AOTRUN_PROFILE_SLOW_US=1000000000
refute "call_profile: slow:" probe AOTRUN_PROFILE_SLOW_US=
expect 0 "calls/x" probe AOTRUN_PROFILE_CALLS=3
# Named as the cuBLAS to open (profile_case.sh), the profiler gives its
# wrapper of a function it wraps and cuBLAS's own of the others.
expect 0 "probe: cublasLtMatmul from libcall_profile.so" \
  probe AOTRUN_CUBLASLT_LIBRARY="$PROFILER"
expect 0 "probe: cublasCreate_v2 from libcublas.so.13" \
  probe AOTRUN_CUBLASLT_LIBRARY="$PROFILER"
expect 0 "probe: cublasLtMatmulDescInit_internal from libcublasLt.so.13" \
  probe AOTRUN_CUBLASLT_LIBRARY="$PROFILER"
# Named as the cuDNN to open, the cuDNN profiler (linked here to the fake
# cuDNN) gives its wrapper of cudnnBackendExecute, the library's own of
# the rest, and counts the call in its own table.
expect 0 "probe: cudnnBackendExecute from libcall_profile_cudnn.so" \
  probe AOTRUN_CUDNN_LIBRARY="$PROFILER_CUDNN"
expect 0 "probe: cudnnGetVersion from libfake_cudnn.so" \
  probe AOTRUN_CUDNN_LIBRARY="$PROFILER_CUDNN"
expect 0 "call_profile_cudnn: cudnnBackendExecute                           1 " \
  probe AOTRUN_CUDNN_LIBRARY="$PROFILER_CUDNN"
finish "call profile"
