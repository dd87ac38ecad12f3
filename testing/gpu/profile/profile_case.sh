#!/usr/bin/env bash
# Host-side call profile of one exported suite case (issue 12), on the GPU
# machine: `aotrun bench --device-io --no-gpu-time` under the call profiler
# (testing/gpu/profile/call_profile.c, LD_PRELOAD), without and with CUDA
# graphs; prints the profiler's per-call table after each bench's p50.
# Then the first call (issue 12): a bench of 5 calls without warm-up, each
# wrapped call of at least $AOTRUN_PROFILE_SLOW_US (default 10) us printed
# as it happens (init's included; the bench's "init" line tells them apart).
#   bash testing/gpu/profile/profile_case.sh BUNDLE SUITE CASE [ITERATIONS]
# (BUNDLE: the unpacked .gpu; SUITE: testing/gpu/export_suite.py's output.)
# A model of bench_overhead.py: SUITE its --work folder's model (e.g.
# /tmp/aotrun-bench-overhead/decoder), CASE `program`; its inputs are the
# model folder's inputs/in0.npy, in1.npy, ...
set -uo pipefail
B=$1; S=$2; C=$3; N=${4:-3000}
# The shim opens cuBLAS and cuDNN with dlopen: through the profilers, which
# link them and wrap some of their functions (call_profile.c). cuDNN comes
# from torch's wheel.
export AOTRUN_CUBLAS_LIBRARY=$B/lib/libcall_profile.so AOTRUN_CUBLASLT_LIBRARY=$B/lib/libcall_profile.so
export AOTRUN_CUDNN_LIBRARY=$B/lib/libcall_profile_cudnn.so
CUDNN_LIB=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64${CUDNN_LIB:+:$CUDNN_LIB}
prog=$S/$C
if [ -f "$prog/case.json" ]; then
  inputs=$(python3 -c 'import json,sys; print(" ".join("--input " + sys.argv[1] + "/" + p for p in json.load(open(sys.argv[1] + "/case.json"))["methods"]["forward"]["inputs"]))' "$prog")
elif [ -f "$S/inputs/in0.npy" ]; then
  inputs=""; i=0
  while [ -f "$S/inputs/in$i.npy" ]; do inputs="$inputs --input $S/inputs/in$i.npy"; i=$((i + 1)); done
else
  echo "profile_case: neither $prog/case.json nor $S/inputs/in0.npy" >&2; exit 2
fi
for mode in nograph graph; do
  opt=(); [ "$mode" = graph ] && opt=(--option enable_cuda_graph_for_method=forward)
  echo "== $C $mode: aotrun bench --device-io --no-gpu-time, $N iterations"
  # shellcheck disable=SC2086
  LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
  AOTRUN_PROFILE_CALLS=$((N + 11)) LD_PRELOAD=$B/lib/libcall_profile.so \
    "$B/bin/aotrun" bench "$prog" --plugin "$B/lib/libaotrun_cuda.so" $inputs \
    --iterations "$N" --warmup 10 --no-gpu-time --device-io "${opt[@]}" 2>&1 | grep -v '^\s*$'
done
echo "== $C first call: aotrun bench --device-io --warmup 0 --iterations 5, calls of ${AOTRUN_PROFILE_SLOW_US:-10} us or more"
# shellcheck disable=SC2086
LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
AOTRUN_PROFILE_SLOW_US=${AOTRUN_PROFILE_SLOW_US:-10} AOTRUN_PROFILE_CALLS=6 \
AOTRUN_LOG_LEVEL=debug LD_PRELOAD=$B/lib/libcall_profile.so \
  "$B/bin/aotrun" bench "$prog" --plugin "$B/lib/libaotrun_cuda.so" $inputs \
  --iterations 5 --warmup 0 --no-gpu-time --device-io 2>&1 | grep -v '^\s*$'
