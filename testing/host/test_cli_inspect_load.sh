#!/bin/bash
# test_cli_inspect_load.sh: `aotrun inspect --load` on the CPU: the cpu_ref
# backend loads the example program and prints its load report (image,
# phases, bytes), nothing is left in $TMPDIR, a backend without the option
# says so, and the options that need --load are refused without it.
# usage: test_cli_inspect_load.sh AOTRUN CPU_REF.so EXAMPLE/manifest.json \
#                                 MINIMAL.so SCALE/manifest.json
set -u
AOTRUN=$1 CPUREF=$2 EXAMPLE=$(dirname "$3") MIN=$4 SCALE=$(dirname "$5")
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cliload.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset AOTRUN_PLUGIN_PATH AOTRUN_EXAMPLE_PROGRAM
# Runfiles are links out of the program directory: run real copies.
cp -rL "$EXAMPLE" "$TMP/example" && EXAMPLE=$TMP/example
cp -rL "$SCALE" "$TMP/scale" && SCALE=$TMP/scale
mkdir "$TMP/t" && export TMPDIR=$TMP/t
source "${BASH_SOURCE[0]%/*}/cli_checks.sh"

LOAD=("$AOTRUN" inspect "$EXAMPLE" --load --plugin "$CPUREF")
expect 0 "load (backend cpu_ref, method forward)" "${LOAD[@]}"
expect 0 "    library_image memfd" "${LOAD[@]}"
expect 0 "    library forward.so" "${LOAD[@]}"
expect 0 "    weights_path user_managed" "${LOAD[@]}"
expect 0 "    kernels none" "${LOAD[@]}"
expect 0 "    first_run -" "${LOAD[@]}"
expect 0 "    device_bytes 0" "${LOAD[@]}"
# Every phase that happened is a time in milliseconds ("N.NNN ms"; its
# value is not checked: no timed tests).
out=$("${LOAD[@]}" 2>&1)
for phase in library_write dlopen container weight_read weight_upload total; do
  checks=$((checks + 1))
  if ! grep -qE "^    $phase [0-9]+\.[0-9]{3} ms$" <<<"$out"; then
    echo "FAIL: phase $phase is not a time in ms:"; echo "$out"
    failures=$((failures + 1))
  fi
done
# The manifest summary comes first, as without --load.
expect 0 "    constants 4" "${LOAD[@]}"
checks=$((checks + 1))
if [[ -n $(ls -A "$TMPDIR") ]]; then
  echo "FAIL: inspect --load left files in \$TMPDIR: $(ls -A "$TMPDIR")"
  failures=$((failures + 1))
fi
# cpu_ref has no library_temp_file option (the cuda backend has).
expect 1 "has no option 'library_temp_file'" \
  "${LOAD[@]}" --option library_temp_file=true
expect 3 "has no method 'nope'" "${LOAD[@]}" --method nope
# A backend without load_report.
expect 0 "load (backend minimal): no load report" \
  "$AOTRUN" inspect "$SCALE" --load --plugin "$MIN"
# Options of the load need --load.
expect 1 "inspect: --plugin, --backend, --method and --option need --load" \
  "$AOTRUN" inspect "$EXAMPLE" --plugin "$CPUREF"
expect 1 "need --load" "$AOTRUN" inspect "$EXAMPLE" --method forward2
expect 1 "inspect: unknown option '--iterations'" \
  "$AOTRUN" inspect "$EXAMPLE" --load --iterations 3

finish "inspect --load"
