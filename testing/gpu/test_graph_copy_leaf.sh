#!/bin/bash
# test_graph_copy_leaf.sh: graph_copy_leaf's command line; without a GPU its
# clean CUDA error (exit 2, "error: ... failed:"), with one every step ok.
# usage: test_graph_copy_leaf.sh GRAPH_COPY_LEAF
set -u
G=$1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
source "$(dirname "$0")/../host/cli_checks.sh"  # fail, expect, finish
expect 0 "usage: graph_copy_leaf" "$G" --help
expect 1 "error: unknown option '--frob'" "$G" --frob
expect 1 "error: --replays needs an integer in [1, 16777216], got '0'" "$G" --replays 0
expect 1 "error: --n needs an integer in [1, 16777216], got 'x'" "$G" --n x
out=$("$G" --input-node --kernel-leaf --replays 2 --n 300 2>&1); rc=$?
checks=$((checks + 1))
if [[ $rc -eq 2 ]]; then
  grep -qE "^error: .+ failed: " <<<"$out" || fail "no-GPU message: $out"
  echo "no GPU here: $(head -n 1 <<<"$out")"
elif [[ $rc -ne 0 ]] || ! grep -qx "all ok" <<<"$out" ||
     [[ $(grep -c "^ok " <<<"$out") -ne 4 ]]; then
  fail "GPU run (rc $rc): $out"
fi
# --realloc: the caller's buffers freed and allocated before each replay;
# --pool: the graph's buffers from cudaMallocAsync.
out=$("$G" --input-node --realloc --repoint-always --pool --replays 2 2>&1); rc=$?
checks=$((checks + 1))
if [[ $rc -eq 2 ]]; then
  grep -qE "^error: .+ failed: " <<<"$out" || fail "no-GPU message: $out"
elif [[ $rc -ne 0 ]] || ! grep -qx "all ok" <<<"$out" ||
     [[ $(grep -c "^realloc: " <<<"$out") -ne 2 ]]; then
  fail "GPU run with --realloc (rc $rc): $out"
fi
# --alloc-in-capture: the kernel's output allocated inside the capture.
out=$("$G" --input-node --alloc-in-capture --replays 2 2>&1); rc=$?
checks=$((checks + 1))
if [[ $rc -eq 2 ]]; then
  grep -qE "^error: .+ failed: " <<<"$out" || fail "no-GPU message: $out"
elif [[ $rc -ne 0 ]] || ! grep -qx "all ok" <<<"$out" ||
     ! grep -q "its output allocated in the capture" <<<"$out"; then
  fail "GPU run with --alloc-in-capture (rc $rc): $out"
fi
finish "graph_copy_leaf"
