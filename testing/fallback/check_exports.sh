#!/bin/bash
# Checks that the fallback ops' objects (the alwayslink archive of
# //shim_lib/fallback:fallback_ops) define with default visibility exactly
# the aoti_torch_* functions listed in testing/shim/fallback_exports.txt, and
# that the list is sorted: internal aotrun_fb_* helpers and kernels stay
# hidden in libaotrun_shim.so.
#   check_exports.sh EXPORTS_TXT LIBRARY_OUTPUTS...
set -uo pipefail
list=$1
shift
archive=""
for f in "$@"; do
  case "$f" in *.lo | *.a) archive=$f ;; esac
done
if [ -z "$archive" ]; then
  echo "FAIL: no archive among the library outputs: $*"
  exit 1
fi
# readelf -s columns: Num Value Size Type Bind Vis Ndx Name.
actual=$(readelf -sW "$archive" |
  awk '($5 == "GLOBAL" || $5 == "WEAK") && $6 == "DEFAULT" && $7 != "UND" {print $8}' |
  LC_ALL=C sort -u)
expected=$(LC_ALL=C sort -u "$list")
if [ -z "$actual" ] || [ "$actual" != "$expected" ]; then
  echo "FAIL: default-visibility symbols of $archive differ from $list"
  diff <(echo "$expected") <(echo "$actual")
  exit 1
fi
if [ "$(LC_ALL=C sort "$list")" != "$(cat "$list")" ]; then
  echo "FAIL: $list is not sorted"
  exit 1
fi
echo "PASS: $(echo "$actual" | wc -l) exports match $list"
