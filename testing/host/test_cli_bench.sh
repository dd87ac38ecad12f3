#!/bin/bash
# test_cli_bench.sh: `aotrun bench` on the CPU: the text and --json figures
# (every field, percentiles ordered), GPU time through the made-up timing
# options of minimal_plugin_gpu_timing and "not available" elsewhere,
# --device-io failing cleanly without a usable CUDA runtime, and the limits
# of --iterations / --warmup.
# usage: test_cli_bench.sh AOTRUN CPU_REF.so EXAMPLE/manifest.json \
#                          MINIMAL.so MINIMAL_TIMED.so SCALE/manifest.json
set -u
AOTRUN=$1 CPUREF=$2 EXAMPLE=$(dirname "$3") MIN=$4 TIMED=$5 SCALE=$(dirname "$6")
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/clibench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset AOTRUN_PLUGIN_PATH AOTRUN_EXAMPLE_PROGRAM AOTRUN_CUDART
# Runfiles are links out of the program directory: run real copies.
cp -rL "$EXAMPLE" "$TMP/example" && EXAMPLE=$TMP/example
cp -rL "$SCALE" "$TMP/scale" && SCALE=$TMP/scale
source "${BASH_SOURCE[0]%/*}/cli_checks.sh"

# An .npy 1.0 float32 array: write_npy FILE SHAPE VALUE...
write_npy() {
  python3 - "$@" <<'PY'
import struct, sys
path, shape, vals = sys.argv[1], sys.argv[2], [float(v) for v in sys.argv[3:]]
h = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape
h += " " * (118 - len(h)) + "\n"
with open(path, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
    f.write(struct.pack("<%df" % len(vals), *vals))
PY
}
write_npy "$TMP/x24.npy" "(2, 4)" 0 1 2 3 4 5 6 7   # example: x [s0, 4]
write_npy "$TMP/x4.npy" "(4,)" 1 2 3 4               # scale: x [n]

EX=(bench "$EXAMPLE" --plugin "$CPUREF" --input "$TMP/x24.npy")

# check_json FILE ITERATIONS IO GPU(0|1) [NOTE]: every field, ordered
# percentiles, counts; prints the problem and returns 1 otherwise.
check_json() {
  python3 - "$@" <<'PY'
import json, sys
path, iters, io, gpu = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
note = sys.argv[5] if len(sys.argv) > 5 else None
d = json.load(open(path))
problems = []
for k in ("program", "backend", "method", "io", "options", "iterations",
          "warmup", "init_us", "first_call_us", "next_calls_us", "latency_us",
          "first_call_minor_faults", "next_calls_minor_faults",
          "gpu_time_available", "gpu_time_us", "gpu_first_call_us"):
    if k not in d:
        problems.append("missing " + k)
def ordered(name, s, count):
    for k in ("median", "p90", "p99", "min", "max", "mean", "count"):
        if not isinstance(s.get(k), (int, float)):
            problems.append(f"{name}.{k} missing or not a number: {s.get(k)!r}")
            return
    if not s["min"] <= s["median"] <= s["p90"] <= s["p99"] <= s["max"]:
        problems.append(f"{name} not ordered: {s}")
    if not s["min"] <= s["mean"] <= s["max"]:
        problems.append(f"{name} mean outside [min, max]: {s}")
    if count is not None and s["count"] != count:
        problems.append(f"{name}.count {s['count']} != {count}")
if not problems:
    ordered("latency_us", d["latency_us"], iters)
    if d["latency_us"]["min"] < 0 or d["init_us"] <= 0 or d["first_call_us"] < 0:
        problems.append("negative or zero times")
    nxt = d["next_calls_us"]
    if len(nxt) != min(8, d["warmup"] + iters) or any(
            not isinstance(v, (int, float)) or v < 0 for v in nxt):
        problems.append(f"next_calls_us: {nxt} for {d['warmup']} warm-up "
                        f"and {iters} iterations")
    nf = d["next_calls_minor_faults"]
    if len(nf) != len(nxt) or any(not isinstance(v, int) or v < 0
                                  for v in nf + [d["first_call_minor_faults"]]):
        problems.append(f"minor faults: first {d['first_call_minor_faults']}, "
                        f"next {nf}")
    if d["iterations"] != iters or d["io"] != io:
        problems.append(f"iterations/io: {d['iterations']} {d['io']}")
    if d["gpu_time_available"] != gpu:
        problems.append(f"gpu_time_available is {d['gpu_time_available']}")
    if gpu:
        ordered("gpu_time_us", d["gpu_time_us"], None)
        g = d["gpu_time_us"]
        if not 0 < g["count"] <= iters or not 2.0 <= g["min"] <= g["max"] <= 2.4:
            problems.append(f"gpu_time_us off: {g}")
    elif d["gpu_time_us"] is not None or note not in d.get("gpu_time_note", ""):
        problems.append(f"gpu note {d.get('gpu_time_note')!r} lacks {note!r}")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
}

# json_case NAME ITERATIONS IO GPU NOTE CMD...: --json output checked.
json_case() {
  local name=$1 iters=$2 io=$3 gpu=$4 note=$5; shift 5
  checks=$((checks + 1))
  "$@" > "$TMP/$name.json" 2> "$TMP/$name.err"
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    fail "$name: rc $rc: $(cat "$TMP/$name.err")"; return
  fi
  python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TMP/$name.json" ||
    { fail "$name: --json output does not parse: $(head -c 300 "$TMP/$name.json")"; return; }
  check_json "$TMP/$name.json" "$iters" "$io" "$gpu" "$note" ||
    fail "$name: $(head -c 2000 "$TMP/$name.json")"
}

# ---- text output: every line, on the CPU reference backend
expect 0 "backend cpu_ref, method forward, host I/O: 50 iterations after a first call and 3 warm-up" \
  "$AOTRUN" "${EX[@]}" --iterations 50 --warmup 3
expect 0 "ms (plugin load + method init), first call " "$AOTRUN" "${EX[@]}" --iterations 5
expect 0 "wall p50 " "$AOTRUN" "${EX[@]}" --iterations 5
expect 0 "  p99 " "$AOTRUN" "${EX[@]}" --iterations 5
expect 0 "gpu  not available: the backend does not offer it: backend 'cpu_ref': set_option 'gpu_timing' failed (not found)" \
  "$AOTRUN" "${EX[@]}" --iterations 5
expect 0 "gpu  not available: not measured (--no-gpu-time)" \
  "$AOTRUN" "${EX[@]}" --iterations 5 --no-gpu-time
# run_suite.py reads "p50 X us" from the text.
out=$("$AOTRUN" "${EX[@]}" --iterations 5 2>&1)
checks=$((checks + 1))
grep -qE 'p50 [0-9.]+ us' <<<"$out" || fail "no 'p50 X us' in: $out"

# ---- --json: one object, every figure
json_case cpu_ref 200 host 0 "has no option 'gpu_timing'" \
  "$AOTRUN" "${EX[@]}" --iterations 200 --warmup 5 --json
json_case one 1 host 0 "gpu_timing" "$AOTRUN" "${EX[@]}" --iterations 1 --warmup 0 --json
json_case nogpu 10 host 0 "--no-gpu-time" "$AOTRUN" "${EX[@]}" --iterations 10 --json --no-gpu-time
json_case options 7 host 0 "unknown option gpu_timing" \
  "$AOTRUN" bench "$SCALE" --plugin "$MIN" --input "$TMP/x4.npy" --iterations 7 --option offset=1 --json
checks=$((checks + 1))
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["options"] != ["offset=1"] or d["backend"] != "minimal")' \
  "$TMP/options.json" || fail "options/backend not recorded: $(cat "$TMP/options.json")"
# GPU time from a backend with the options (made-up times, every 4th -1).
json_case timed 40 host 1 "" \
  "$AOTRUN" bench "$SCALE" --plugin "$TIMED" --input "$TMP/x4.npy" --iterations 40 --json
checks=$((checks + 1))
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["gpu_time_us"]["count"] != 30)' \
  "$TMP/timed.json" || fail "-1 (unknown) GPU times were counted: $(cat "$TMP/timed.json")"
expect 0 "gpu  p50 2." "$AOTRUN" bench "$SCALE" --plugin "$TIMED" --input "$TMP/x4.npy" --iterations 40
expect 0 "(30 of 40 calls)" "$AOTRUN" bench "$SCALE" --plugin "$TIMED" --input "$TMP/x4.npy" --iterations 40

# ---- --device-io without a usable CUDA runtime: a clean error, exit 2
AOTRUN_CUDART=$TMP/no/libcudart.so expect 2 \
  "aotrun: --device-io: cannot load the CUDA runtime ($TMP/no/libcudart.so: cannot open shared object file" \
  "$AOTRUN" "${EX[@]}" --device-io
AOTRUN_CUDART=$MIN expect 2 "--device-io: the CUDA runtime $MIN has no cudaMalloc" \
  "$AOTRUN" "${EX[@]}" --device-io
# The system's runtime, if any: no GPU here (no driver) or, on a GPU
# machine, the CPU backend refusing device tensors; never a crash or rc 0.
out=$("$AOTRUN" "${EX[@]}" --device-io --iterations 3 2>&1); rc=$?
checks=$((checks + 1))
if [[ $rc -lt 2 || $rc -gt 4 ]] || ! grep -q "^aotrun: " <<<"$out"; then
  fail "--device-io with the system runtime: rc $rc: $out"
fi
# run takes --device-io too (each call's inputs and outputs in device memory)
AOTRUN_CUDART=$TMP/no/libcudart.so expect 2 \
  "aotrun: --device-io: cannot load the CUDA runtime ($TMP/no/libcudart.so: cannot open shared object file" \
  "$AOTRUN" run "$EXAMPLE" --plugin "$CPUREF" --input "$TMP/x24.npy" --device-io
expect 1 "run: unknown option '--json'" "$AOTRUN" run "$EXAMPLE" --json

# ---- bad --iterations / --warmup: usage errors naming value and limit
expect 1 "--iterations needs an integer >= 1, got '0'" "$AOTRUN" "${EX[@]}" --iterations 0
expect 1 "--iterations needs an integer >= 1, got '-5'" "$AOTRUN" "${EX[@]}" --iterations -5
expect 1 "--iterations needs an integer >= 1, got 'ten'" "$AOTRUN" "${EX[@]}" --iterations ten
expect 1 "--iterations 1000001 is above the limit of 1000000" "$AOTRUN" "${EX[@]}" --iterations 1000001
expect 1 "--warmup needs an integer >= 0, got '-1'" "$AOTRUN" "${EX[@]}" --warmup -1
expect 1 "--warmup 100001 is above the limit of 100000" "$AOTRUN" "${EX[@]}" --warmup 100001
expect 1 "bench: option --warmup needs a value" "$AOTRUN" "${EX[@]}" --warmup
expect 3 "method 'forward' takes 1 input(s), got 0" "$AOTRUN" bench "$EXAMPLE" --plugin "$CPUREF" --json

finish "bench"
