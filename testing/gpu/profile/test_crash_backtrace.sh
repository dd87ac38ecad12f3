#!/bin/bash
# test_crash_backtrace.sh: crash_backtrace.c preloaded into a program that
# dies of SIGSEGV prints the signal, the fault address and the native
# frames with the functions named, then the process still dies of the
# signal; a program that does not crash prints nothing of it.
# probe_torch_runner.py's native_frames gets the same report.
# usage: test_crash_backtrace.sh LIBCRASH_BACKTRACE.so CRASH_PROBE PROBE_TORCH_RUNNER.py
set -u
LIB=$(realpath "$1") PROBE=$2 PROBE_RUNNER=$3
source "$(dirname "$0")/../../host/cli_checks.sh"

# The sanitizers' own SEGV handlers stay out of the way (the preload is
# meant for plain processes); ASan also accepts a preload before it.
probe() {
  env LD_PRELOAD="$LIB" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:handle_segv=0" \
    TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}handle_segv=0" \
    "$PROBE" "$@"
}

# 128 + SIGSEGV (11): still killed by the signal.
expect 139 "crash_backtrace: signal 11 (SEGV), fault address 0x10" probe
expect 139 "(crash_probe_inner+0x" probe
expect 139 "(crash_probe_outer+0x" probe
expect 139 "crash_backtrace: end" probe
expect 0 "probe ok" probe ok
refute "crash_backtrace:" probe ok

# probe_torch_runner.py's rerun of a loader that died, with the reporter.
frames() {
  ASAN_OPTIONS=verify_asan_link_order=0:handle_segv=0 TSAN_OPTIONS=handle_segv=0 \
  UBSAN_OPTIONS=handle_segv=0 /usr/bin/python3 -c '
import os, sys
sys.path.insert(0, sys.argv[1])
import probe_torch_runner as p
for line in p.native_frames([sys.argv[2]] + sys.argv[4:], dict(os.environ), sys.argv[3]):
    print(line)' "$(dirname "$PROBE_RUNNER")" "$PROBE" "$LIB" "$@"
}
expect 0 "(crash_probe_outer+0x" frames
expect 0 "^crash_backtrace: end" frames
expect 0 "no report (rc 0)" frames ok
finish "crash backtrace"
