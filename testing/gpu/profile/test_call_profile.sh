#!/bin/bash
# test_call_profile.sh: the call profiler (call_profile.c) preloaded into a
# program of three cudaGetDevice calls: its table counts them, and
# AOTRUN_PROFILE_SLOW_US prints each call at least that slow, numbered,
# and none above the threshold.
# usage: test_call_profile.sh LIBCALL_PROFILE.so CALL_PROFILE_PROBE
set -u
PROFILER=$(realpath "$1") PROBE=$2
source "$(dirname "$0")/../../host/cli_checks.sh"

# Under --config=asan the preloaded profiler comes before ASan's runtime,
# which ASan refuses unless told the order is meant.
probe() {
  env LD_PRELOAD="$PROFILER" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    "$@" "$PROBE"
}

expect 0 "probe done" probe
expect 0 "call_profile: cudaGetDevice                                 3" probe
expect 0 "call_profile: slow: cudaGetDevice call 3 (wrapped call 3, at " \
  probe AOTRUN_PROFILE_SLOW_US=0
refute "call_profile: slow:" probe
refute "call_profile: slow:" probe AOTRUN_PROFILE_SLOW_US=1000000000
refute "call_profile: slow:" probe AOTRUN_PROFILE_SLOW_US=
expect 0 "calls/x" probe AOTRUN_PROFILE_CALLS=3
finish "call profile"
