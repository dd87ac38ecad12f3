#!/bin/bash
# test_plugin_author_doc.sh AOTRUN PLUGIN_AUTHOR_MD MINIMAL_PLUGIN_C
#   AOTRUN_PLUGIN_H PLUGIN_LDS SCALE_PROGRAM/manifest.json
# docs/plugin-author.md cannot rot: the build block marked
# "<!-- plugin-build" is run as written (in a copy of the files it names,
# at their repository paths), the plugin it builds exports only the entry
# symbol, the CLI loads it and runs the scale program with it, and the
# functions the guide points at exist in minimal_plugin.c.
set -u
AOTRUN=$(realpath "$1") DOC=$2 SRC=$3 HDR=$4 LDS=$5 PROG=$(dirname "$6")
TMP=$(mktemp -d "${TEST_TMPDIR:-/tmp}/plugdoc.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0 checks=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { checks=$((checks + 1)); "$@" || fail "$*"; }

mkdir -p "$TMP/testing/plugins" "$TMP/plugin_api"
cp "$SRC" "$TMP/testing/plugins/minimal_plugin.c"
cp "$HDR" "$TMP/plugin_api/aotrun_plugin.h"
cp "$LDS" "$TMP/plugin_api/plugin.lds"
cp -rL "$PROG" "$TMP/scale_program"

# The first ```sh block after the marker.
block=$(awk '/<!-- plugin-build/ {m=1; next} m && /^```sh/ {b=1; next}
             b && /^```/ {exit} b {print}' "$DOC")
checks=$((checks + 1))
[[ -n "$block" ]] || fail "no build block after '<!-- plugin-build' in $DOC"
out=$(cd "$TMP" && bash -euo pipefail -c "$block" 2>&1); rc=$?
checks=$((checks + 1))
[[ $rc -eq 0 ]] || { fail "the guide's build block (rc $rc):"; echo "$block"; echo "$out"; }

# Exactly one exported function.
exports=$(nm -D --defined-only "$TMP/libaotrun_scale.so" 2>&1 | awk '$2 ~ /^[TtWw]$/ {print $3}')
checks=$((checks + 1))
[[ "$exports" == aotrun_plugin_get_api ]] || fail "exports: '$exports'"

out=$("$AOTRUN" plugins --plugin "$TMP/libaotrun_scale.so" 2>&1); rc=$?
checks=$((checks + 1))
[[ $rc -eq 0 && "$out" == *$'minimal\tABI 1.'*$'\tavailable'* ]] || fail "aotrun plugins (rc $rc): $out"

# The guide's run: x = [1, 2, 3, 4], factor 3, offset 10 -> 13 16 19 22.
h="{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
printf '\x93NUMPY\x01\x00\x76\x00%-117s\n' "$h" > "$TMP/x.npy"
printf '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40' >> "$TMP/x.npy"
out=$("$AOTRUN" run "$TMP/scale_program" --plugin "$TMP/libaotrun_scale.so" \
      --input "$TMP/x.npy" --option offset=10 --output-dir "$TMP/out" 2>&1); rc=$?
values=$(od -A n -t f4 -j 128 "$TMP/out/out0.npy" 2>/dev/null | tr -s ' ')
checks=$((checks + 1))
[[ $rc -eq 0 && "$out" == *"output 0: float32 [4]"* && "$values" == " 13 16 19 22" ]] ||
  fail "aotrun run with the guide's plugin (rc $rc): $out / values '$values'"

# Every function the guide's table names is defined in the file.
for fn in get_name is_available init parse_factor factor_from_host execute \
          is_host_f32_vector get_num_io get_io_info set_option get_option \
          last_error destroy; do
  checks=$((checks + 1))
  grep -Eq "^static [a-z0-9_ *]+\b$fn\(" "$SRC" || fail "minimal_plugin.c has no function $fn (named in the guide)"
  grep -q "\`$fn\`" "$DOC" || fail "the guide does not name $fn"
done
check grep -q "kTable" "$SRC"
check grep -q "AOTRUN_DECLARE_PLUGIN_ENTRY" "$SRC"

echo "$((checks - failures)) of $checks plugin-author guide checks passed"
echo "RESULT: $((checks - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
