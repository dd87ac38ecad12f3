#!/usr/bin/env bash
# check_demo.sh BUNDLE [LOG]: `aotrun demo` from the GPU bundle (built by
# testing/gpu/build_gpu_bundle.sh: BUNDLE/bin/aotrun with example_program/
# and example_program_cuda/ beside it, the plugins in BUNDLE/lib), on the GPU
# machine. Checks that the CUDA part ran: the CUDA example's outputs match
# the CPU run, one latency line without and one with CUDA graphs, no log
# line (AOTRUN_LOG_LEVEL=info) printed twice. Prints the
# demo's output (also to LOG), then "demo: N passed, M failed"; exit 1 on a
# failure. Called by run_gpu_check.sh (part "demo").
set -uo pipefail
B=${1:?usage: check_demo.sh BUNDLE [LOG]}
LOG=${2:-/dev/null}
# At info level: each log line must come out once (issue 14: a fallback's
# Info line was printed twice).
out=$(AOTRUN_LOG_LEVEL=info "$B/bin/aotrun" demo --plugin "$B/lib/libaotrun_cpu_ref.so" \
  --plugin "$B/lib/libaotrun_cuda.so" --backend cpu_ref 2>&1)
rc=$?
printf '%s\n' "$out" | tee "$LOG"
pass=0 fail=0
check() {  # check WHAT CONDITION...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: demo: $what"; fi
}
has() { grep -qE -- "$1" <<<"$out"; }
check "exit code $rc (want 0)" test "$rc" -eq 0
check "the CPU part ran on cpu_ref" has '^backend cpu_ref, method forward$'
check "the CUDA part ran on cuda" has '^backend cuda, method forward$'
check "no 'not run' line" eval '! has "^cuda example: not run"'
check "outputs match the host reference" \
  has '^output 0 matches the host reference \(max difference [0-9.e+-]+\)$'
check "latency line without CUDA graphs" \
  has '^latency without CUDA graphs: median [0-9.]+ us \(p90 [0-9.]+ us\) over 1000 calls'
check "latency line with CUDA graphs" \
  has '^latency with CUDA graphs: median [0-9.]+ us \(p90 [0-9.]+ us\) over 1000 calls, speed-up [0-9.]+x'
check "outputs after the graph calls match" \
  has '^output 0 after the graph calls matches the host reference'
dups=$(grep '^\[aotrun ' <<<"$out" | sort | uniq -d)
check "each log line printed once (repeated: ${dups:-none})" test -z "$dups"
echo "demo: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
