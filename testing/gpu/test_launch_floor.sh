#!/bin/bash
# test_launch_floor.sh: launch_floor's command line, and its JSON on any
# machine: the figures with a GPU, {"error": ...} and exit 2 without one.
# usage: test_launch_floor.sh LAUNCH_FLOOR
set -u
LF=$1
# Under --config=asan: LeakSanitizer's tracer dies (SIGSEGV) in a process
# with the CUDA runtime loaded and no driver; launch_floor is a benchmark
# tool, not library code, so its leak check is off.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
source "$(dirname "$0")/../host/cli_checks.sh"  # fail, expect, finish
expect 0 "usage: launch_floor" "$LF" --help
expect 1 "--reps needs an integer in [1, 10000000], got '0'" "$LF" --reps 0
expect 1 "--ns needs an integer in [1, 4096], got '0'" "$LF" --ns 1,0
expect 1 "unknown option '--frob'" "$LF" --frob 1
expect 1 "--busy takes at most 32 pairs N:US, got '9'" "$LF" --busy 9
expect 1 "--busy needs an integer in [1, 4096], got '0'" "$LF" --busy 0:5
expect 1 "--busy needs microseconds in [0, 1e6] after N:, got 'x'" "$LF" --busy 3:x
expect 1 "--busy needs microseconds in [0, 1e6] after N:, got '-1'" "$LF" --busy 3:-1
out=$("$LF" --reps 20 --warmup 2 --ns 1,3 --busy 3:40,1:0 2>/dev/null); rc=$?
checks=$((checks + 1))
python3 - "$rc" "$out" <<'PY' || fail "JSON (rc $rc): $out"
import json, sys
rc, d = int(sys.argv[1]), json.loads(sys.argv[2])
if rc == 2:
    assert "error" in d and d["error"], d
else:
    assert rc == 0, rc
    for k in ("sync_idle", "one_launch_sync", "memcpy_d2d_sync",
              "memcpy_h2d_sync", "memcpy_d2h_sync"):
        assert 0 <= d[k]["min"] <= d[k]["median"] <= d[k]["p90"], (k, d[k])
    assert "graph_launch_spin_error" not in d, d["graph_launch_spin_error"]
    for k in ("launches_sync", "graph_launch_sync", "graph_launch_event_spin",
              "graph_launch_flag_spin", "replay_copies_sync",
              "replay_memcpy_nodes_sync", "replay_kernel_nodes_sync"):
        assert sorted(d[k]) == ["1", "3"], d[k]
    b = d["busy"]
    assert [(x["n"], x["busy_us"]) for x in b] == [(3, 40.0), (1, 0.0)], b
    # the spin reaches the asked device time (within the timer's grain)
    assert 0.8 * 40 <= b[0]["graph_device_us"] <= 1.5 * 40 + 10, b[0]
    assert b[0]["launches_sync"]["median"] >= b[0]["graph_device_us"] * 0.8, b[0]
    assert b[1]["spin_ns"] == 0, b[1]
PY
finish "launch_floor"
