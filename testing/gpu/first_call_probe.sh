#!/usr/bin/env bash
# Issue 12: where a program's first call goes. On the GPU machine, after
# the suite is exported (part export or e2e):
#   bash testing/gpu/first_call_probe.sh SUITE_DIR BUNDLE OUT_FILE [CASE]
# For CASE (default mlp) and each batch in $AOTRUN_PROBE_BATCHES (default
# 1,4,64; the first dim of input 0), `aotrun bench --warmup 0 --device-io
# --json` with the backend's debug log, the default module loading and
# CUDA_MODULE_LOADING=EAGER: first call and the next calls. A first call
# that is slow only at batches the init's warm-up run did not use, and fast
# with eager loading, is a kernel loaded lazily at that call (cuBLAS picks
# kernels by shape).
set -uo pipefail
SUITE=$1; B=$2; OUTF=$3; CASE=${4:-mlp}
BATCHES=${AOTRUN_PROBE_BATCHES:-1,4,64}
P=$SUITE/$CASE
bash "$(dirname "$0")/unpack_bundle.sh" "$B"
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
[ -f "$P/inputs/in0.npy" ] || { echo "no $P/inputs/in0.npy" | tee "$OUTF"; exit 2; }
{
  echo "# first call probe: $CASE ($(date -u +%FT%TZ))"
  for b in ${BATCHES//,/ }; do
    python3 - "$P/inputs/in0.npy" "$T/in_$b.npy" "$b" <<'PY'
import sys, numpy as np
x = np.load(sys.argv[1]); b = int(sys.argv[3])
reps = -(-b // x.shape[0])
np.save(sys.argv[2], np.concatenate([x] * reps)[:b])
PY
    for loading in default EAGER; do
      echo "## batch $b, module loading $loading"
      extra=(); [ "$loading" = EAGER ] && extra=(CUDA_MODULE_LOADING=EAGER)
      env "${extra[@]}" AOTRUN_LOG_LEVEL=debug "$B/bin/aotrun" bench "$P" \
        --plugin "$B/lib/libaotrun_cuda.so" --input "$T/in_$b.npy" \
        --device-io --warmup 0 --iterations 20 --json \
        > "$T/bench.json" 2> "$T/bench.err"
      echo "exit $?"
      cat "$T/bench.err"
      python3 - "$T/bench.json" <<'PY'
import sys, json
try:
    j = json.load(open(sys.argv[1]))
except ValueError as e:
    print("no JSON:", e); sys.exit(0)
nxt = ", ".join(f"{v:.1f}" for v in j.get("next_calls_us") or [])
print(f"init {j.get('init_us', 0) / 1e3:.1f} ms, first call "
      f"{j.get('first_call_us', 0):.1f} us (GPU {j.get('gpu_first_call_us')}), "
      f"next [{nxt}], p50 {j['latency_us']['median'] if 'median' in j.get('latency_us', {}) else j.get('latency_us')}")
PY
    done
  done
} > "$OUTF" 2>&1
cat "$OUTF"
