#!/bin/bash
# test_cli_backend_choice.sh: `aotrun plugins` prints each backend's info
# and devices; `aotrun run` without --backend takes the first backend whose
# can_run accepts the program (and says why the others were skipped, at
# info level); with --backend NAME there is no fallback.
# usage: test_cli_backend_choice.sh AOTRUN PAIR.so MINIMAL.so CPU_REF.so \
#                                   SCALE_PROGRAM/manifest.json
set -u
AOTRUN=$1 PAIR=$2 MIN=$3 CPUREF=$4 PROGRAM=$(dirname "$5")
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/choice.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset AOTRUN_PLUGIN_PATH AOTRUN_EXAMPLE_PROGRAM AOTRUN_LOG_LEVEL
cp -rL "$PROGRAM" "$TMP/prog" && PROGRAM=$TMP/prog
source "${BASH_SOURCE[0]%/*}/cli_checks.sh"

# A float32 vector [1, 2, 3, 4] as .npy 1.0 (128-byte header).
h="{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "$h" > "$TMP/x.npy"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40' >> "$TMP/x.npy"

# ---- aotrun plugins: both backends of the pair library, info, devices
expect 0 $'pair_a\tABI 1.1\tavailable' "$AOTRUN" plugins --plugin "$PAIR"
expect 0 $'pair_b\tABI 1.1\tavailable' "$AOTRUN" plugins --plugin "$PAIR"
expect 0 "  version 1.1.0, vendor aotrun tests, build pair plugin, y = 3x + offset" \
  "$AOTRUN" plugins --plugin "$PAIR"
expect 0 "  device 0: pair_b device, 0.0 GiB (free 0.0 GiB)" \
  "$AOTRUN" plugins --plugin "$PAIR"
expect 0 "  device 0: host CPU (" "$AOTRUN" plugins --plugin "$CPUREF"
expect 0 "  version 0.1, vendor aotrun, build CPU reference backend" \
  "$AOTRUN" plugins --plugin "$CPUREF"
# A backend without the members says so.
expect 0 "  info: backend 'minimal' has no get_info (its table is ABI 1.1, the member is NULL)" \
  "$AOTRUN" plugins --plugin "$MIN"
expect 0 "  devices: backend 'minimal' has no get_device_count" \
  "$AOTRUN" plugins --plugin "$MIN"

# ---- aotrun run: the first backend whose can_run accepts the program
export AOTRUN_LOG_LEVEL=info
run_all() {
  "$AOTRUN" run "$PROGRAM" --plugin "$PAIR" --plugin "$CPUREF" --plugin "$MIN" \
    --input "$TMP/x.npy" "$@"
}
expect 0 "backend minimal, method forward" run_all
expect 0 "backend pair_a skipped: backend pair_a runs only \"pair\" programs" run_all
expect 0 "backend pair_b skipped: backend pair_b runs only \"pair\" programs" run_all
expect 0 "backend cpu_ref skipped: model library forward.so of method forward: the host's named data gave not found" run_all
expect 0 "[aotrun INFO] using backend minimal for $PROGRAM method forward (the first in load order that can run it)" run_all
# Info messages only at info level.
AOTRUN_LOG_LEVEL=warning refute "skipped" run_all
# --backend NAME: that one, no fallback.
expect 4 "backend 'pair_b': init failed (not supported): backend pair_b runs only \"pair\" programs" \
  run_all --backend pair_b
refute "skipped" run_all --backend pair_b
# No backend can run it: every reason.
expect 2 "no backend can run $PROGRAM method forward:" \
  "$AOTRUN" run "$PROGRAM" --plugin "$PAIR" --plugin "$CPUREF" --input "$TMP/x.npy"
expect 2 "  cpu_ref (" \
  "$AOTRUN" run "$PROGRAM" --plugin "$PAIR" --plugin "$CPUREF" --input "$TMP/x.npy"

# --device N: the compile spec "device" (backends that do not use it
# ignore it); not a count: refused.
expect 0 "backend minimal, method forward" run_all --device 0
expect 1 "--device needs an integer >= 0, got 'x'" run_all --device x
expect 0 "backend pair_a skipped: backend pair_a has only device 0 (compile spec device \"1\")" \
  run_all --device 1
expect 1 "bench: unknown option '--device'" \
  "$AOTRUN" bench "$PROGRAM" --plugin "$MIN" --device 0

finish "backend-choice"
