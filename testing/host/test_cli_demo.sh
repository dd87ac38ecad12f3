#!/bin/bash
# test_cli_demo.sh: `aotrun demo` and the CUDA example program on a machine
# without a GPU: the CPU part's output, the one "not run" line (the cuda
# backend's is_available reason, how to run it on a GPU), the CUDA example's
# manifest and weights (inspect), the cuda backend refusing it cleanly, and
# the CUDA part's output format through a made-up "cuda" plugin
# (minimal_plugin_fake_cuda*) over a host-memory CUDA runtime
# (fake_cudart).
# usage: test_cli_demo.sh AOTRUN CPU_REF.so CUDA.so SHIM.so \
#          EXAMPLE/manifest.json EXAMPLE_CUDA/manifest.json MINIMAL.so \
#          SCALE_PROGRAM/manifest.json FAKE_CUDA.so FAKE_CUDA_WRONG.so \
#          FAKE_CUDA_NO_REPLAY.so FAKE_CUDART.so LOGGED.so
# (LOGGED: minimal_plugin_log_level, for $AOTRUN_LOG_LEVEL reaching a
# backend's own option log_level.)
set -u
AOTRUN=$1 CPU_REF=$2 CUDA=$3 SHIM=$4 EX=$(dirname "$5") EXC=$(dirname "$6")
MIN=$7 SCALE=$(dirname "$8") FAKE=$9 FAKE_WRONG=${10} FAKE_NO_REPLAY=${11}
FAKE_RT=${12} LOGGED=${13}
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cli_demo.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset AOTRUN_PLUGIN_PATH AOTRUN_EXAMPLE_PROGRAM AOTRUN_EXAMPLE_PROGRAM_CUDA \
  AOTRUN_CUDART AOTRUN_SHIM_LIB
# Runfiles are symbolic links into the source tree, and program files that
# resolve outside their program directory are refused: run real copies.
cp -rL "$EX" "$TMP/ex" && EX=$TMP/ex
cp -rL "$EXC" "$TMP/exc" && EXC=$TMP/exc
cp -rL "$SCALE" "$TMP/scale" && SCALE=$TMP/scale
failures=0 checks=0 skipped=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE CMD...: runs CMD, keeps its stdout+stderr in $out, checks rc.
expect() {
  local code=$1; shift
  out=$("$@" 2>&1); local rc=$?
  checks=$((checks + 1))
  [[ $rc -eq $code ]] || fail "$* -> rc $rc (want $code): $out"
}
# has TEXT: $out holds the line fragment TEXT.
has() {
  checks=$((checks + 1))
  grep -qF -- "$1" <<<"$out" || fail "wanted '$1' in: $out"
}

cuda_available=0
"$AOTRUN" plugins --plugin "$CUDA" 2>&1 | grep -q "^cuda	ABI [0-9.]*	available	" \
  && cuda_available=1

# ---- the CUDA example's manifest and weights validate without a GPU
expect 0 env AOTRUN_SHIM_LIB="$SHIM" "$AOTRUN" inspect "$EXC"
has "producer testing/example_program/make_example_program.py --cuda"
has "output 0 y: float32 [s0, 3]"
has "constant lin.weight: float32 [3, 4] cuda, 48 bytes"
has "constant lin.bias: float32 [3] cuda, 12 bytes"
has "aoti_torch_cuda_addmm_out"
has "all in the shim"
checks=$((checks + 1))
grep -q "output 1\|cpu," <<<"$out" && fail "the CUDA example has a second output or a cpu constant: $out"
# The CPU backend refuses its cuda constants by name.
expect 4 "$AOTRUN" run "$EXC" --plugin "$CPU_REF"
has "constant 'weight' is on cuda"

# ---- the cuda backend without a GPU: refused with its reason
if [[ $cuda_available -eq 1 ]]; then
  echo "SKIP: the cuda backend is available here (a GPU machine): the no-GPU checks"
  skipped=$((skipped + 1))
else
  expect 2 "$AOTRUN" run "$EXC" --plugin "$CUDA" --backend cuda
  has "aotrun: backend 'cuda' is not available: "
  reason=$(sed -n "s/^aotrun: backend 'cuda' is not available: //p" <<<"$out")
  checks=$((checks + 1))
  [[ -n "$reason" ]] || fail "no reason after 'not available': $out"
  # demo: the CPU part, then one line saying what is missing and how.
  expect 0 env AOTRUN_EXAMPLE_PROGRAM="$EX" "$AOTRUN" demo --plugin "$CPU_REF" --plugin "$CUDA"
  has "example program $EX"
  has "backend cpu_ref, method forward"
  has "input 0: float32 [2, 4] = -1 -0.75 -0.5 -0.25 0 0.25 0.5 0.75"
  has "output 0: float32 [2, 3] = -0.25 -5.75 -5.75 2.25 0.75 4.75"
  has "output 1: float32 [1] = 1"
  has "cuda example: not run: backend 'cuda' is not available: $reason; to run it on a GPU: on a machine with an NVIDIA GPU"
  has "run tools/demo.sh"
  checks=$((checks + 1))
  [[ $(grep -c "cuda example" <<<"$out") -eq 1 ]] || fail "not one 'cuda example' line: $out"
  checks=$((checks + 1))
  grep -q "latency" <<<"$out" && fail "latency without a GPU: $out"
fi
# No cuda plugin at all: the line says which plugin is missing.
expect 0 env AOTRUN_EXAMPLE_PROGRAM="$EX" "$AOTRUN" demo --plugin "$CPU_REF"
has "cuda example: not run: no backend 'cuda' is loaded (add --plugin PATH/libaotrun_cuda.so); to run it on a GPU"

# ---- the CUDA part's output through the made-up cuda plugin: the scale
# program on both backends, device I/O over host memory.
fake_demo() {
  local plugin=$1; shift
  expect "$@" env AOTRUN_CUDART="$FAKE_RT" AOTRUN_EXAMPLE_PROGRAM="$SCALE" \
    AOTRUN_EXAMPLE_PROGRAM_CUDA="$SCALE" "$AOTRUN" demo --plugin "$MIN" --plugin "$plugin"
}
fake_demo "$FAKE" 0
has "backend minimal, method forward"
has "cuda example program $SCALE"
has "backend cuda, method forward"
has "output 0 matches the host reference (max difference 0)"
has "latency without CUDA graphs: median "
has " us) over 1000 calls, inputs and outputs in device memory"
has "latency with CUDA graphs: median "
has "over 1000 calls, speed-up "
has "output 0 after the graph calls matches the host reference (max difference 0)"
# In this order, after the CPU part.
order=$(grep -n "^backend minimal\|^cuda example program\|matches the host reference (max\|^latency without\|^latency with CUDA" <<<"$out" | cut -d: -f2- | cut -c1-20 | tr '\n' '|')
checks=$((checks + 1))
[[ "$order" == "backend minimal, met|cuda example program|output 0 matches the|latency without CUDA|latency with CUDA gr|output 0 after the g|" ]] \
  || fail "demo lines out of order: $order"
fake_demo "$FAKE_WRONG" 4
has "output 0 differs from the host reference: max difference 0.5 at element 0"
has "aotrun: the cuda example's output 0 differs from the host reference by 0.5 (tolerance 0.001)"
checks=$((checks + 1))
grep -q "^latency" <<<"$out" && fail "latency after a mismatch: $out"
fake_demo "$FAKE_NO_REPLAY" 4
has "aotrun: cuda example: CUDA graphs did not engage: cuda_graph_phase is Warmup after 1100 calls"
checks=$((checks + 1))
grep -q "^latency with CUDA graphs" <<<"$out" && fail "graph latency without Replay: $out"
# The cuda backend is there but the CUDA example is not.
expect 3 env AOTRUN_CUDART="$FAKE_RT" AOTRUN_EXAMPLE_PROGRAM="$SCALE" \
  "$AOTRUN" demo --plugin "$MIN" --plugin "$FAKE"
has "aotrun: no CUDA example program: set AOTRUN_EXAMPLE_PROGRAM_CUDA or put example_program_cuda/ next to the aotrun binary"
# No usable CUDA runtime for the device I/O: the bench message, exit 2.
expect 2 env AOTRUN_CUDART="$TMP/no/libcudart.so" AOTRUN_EXAMPLE_PROGRAM="$SCALE" \
  AOTRUN_EXAMPLE_PROGRAM_CUDA="$SCALE" "$AOTRUN" demo --plugin "$MIN" --plugin "$FAKE"
has "aotrun: --device-io: cannot load the CUDA runtime ($TMP/no/libcudart.so"

# ---- each log line printed once, at the most verbose level: a line the
# CLI, the host library or a plugin logs must not come out twice (issue 14:
# a fallback's Info line was printed twice), nor once per call.
# once WHAT: no "[aotrun ...]" line of $out repeats.
once() {
  checks=$((checks + 1))
  local dup
  dup=$(grep '^\[aotrun ' <<<"$out" | sort | uniq -d)
  [[ -z "$dup" ]] || fail "$1: log lines printed more than once: $dup"
}
printf '\x93NUMPY\x01\x00\x76\x00{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (2, 4), }%*s\n' 58 '' > "$TMP/x.npy"
head -c 32 /dev/zero >> "$TMP/x.npy"
expect 0 env AOTRUN_LOG_LEVEL=debug "$AOTRUN" run "$EX" --plugin "$CPU_REF" \
  --plugin "$CUDA" --input "$TMP/x.npy" --calls 3
once "run --calls 3"
checks=$((checks + 1))
[[ $(grep -c '^\[aotrun INFO\] using backend cpu_ref for ' <<<"$out") -eq 1 ]] \
  || fail "run --calls 3: not one 'using backend' line: $out"
expect 0 env AOTRUN_LOG_LEVEL=debug "$AOTRUN" bench "$EX" --plugin "$CPU_REF" \
  --input "$TMP/x.npy" --iterations 20 --warmup 2
once "bench"
expect 0 env AOTRUN_LOG_LEVEL=debug AOTRUN_EXAMPLE_PROGRAM="$EX" "$AOTRUN" demo \
  --plugin "$CPU_REF" --plugin "$CUDA"
once "demo"
fake_demo "$FAKE" 0
out=$(AOTRUN_LOG_LEVEL=debug AOTRUN_CUDART="$FAKE_RT" AOTRUN_EXAMPLE_PROGRAM="$SCALE" \
  AOTRUN_EXAMPLE_PROGRAM_CUDA="$SCALE" "$AOTRUN" demo --plugin "$MIN" --plugin "$FAKE" 2>&1)
once "demo with the made-up cuda plugin (1,100 calls per part)"

# ---- $AOTRUN_LOG_LEVEL reaches the backend's option log_level (its own
# debug lines, e.g. the CUDA backend's first-call line, show); --option
# log_level=... still wins.
printf '\x93NUMPY\x01\x00\x76\x00{'"'"'descr'"'"': '"'"'<f4'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (2,), }%*s\n' 60 '' > "$TMP/v.npy"
head -c 8 /dev/zero >> "$TMP/v.npy"
expect 0 env AOTRUN_LOG_LEVEL=debug "$AOTRUN" run "$SCALE" --plugin "$LOGGED" \
  --input "$TMP/v.npy"
has "[aotrun DEBUG] minimal: init, log level debug"
once "run with the backend at debug level"
expect 0 env AOTRUN_LOG_LEVEL=info "$AOTRUN" run "$SCALE" --plugin "$LOGGED" \
  --input "$TMP/v.npy"
checks=$((checks + 1))
grep -q "minimal: init" <<<"$out" && fail "AOTRUN_LOG_LEVEL=info: a debug line: $out"
expect 0 env AOTRUN_LOG_LEVEL=debug "$AOTRUN" run "$SCALE" --plugin "$LOGGED" \
  --input "$TMP/v.npy" --option log_level=info
checks=$((checks + 1))
grep -q "minimal: init" <<<"$out" && fail "--option log_level=info lost: $out"

echo "RESULT: $((checks - failures)) passed, $failures failed, $skipped skipped"
[[ $failures -eq 0 ]]
