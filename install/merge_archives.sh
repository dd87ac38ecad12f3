#!/usr/bin/env bash
# merge_archives.sh AR OUT.a FILE...: merges the static archives among FILE
# (Bazel's cc_library outputs: .a, or .lo when alwayslink; .so files are
# skipped) into one archive OUT.a. Per input, a PIC archive (.pic.a,
# .pic.lo) is preferred when both kinds are given. Members keep their
# names; ar -M appends, so equal names in two inputs both survive.
set -euo pipefail
ar=$1 out=$2; shift 2
declare -A chosen=()
order=()
for f in "$@"; do
  case "$f" in
    *.pic.a|*.pic.lo) key=${f%.pic.*} ;;
    *.a|*.lo) key=${f%.*}
              [[ -n "${chosen[$key]:-}" ]] && continue ;;
    *) continue ;;
  esac
  [[ -z "${chosen[$key]:-}" ]] && order+=("$key")
  chosen[$key]=$f
done
if [[ ${#order[@]} -eq 0 ]]; then
  echo "merge_archives: no archive among: $*" >&2
  exit 1
fi
rm -f "$out"
{
  echo "CREATE $out"
  for k in "${order[@]}"; do echo "ADDLIB ${chosen[$k]}"; done
  echo "SAVE"
  echo "END"
} | "$ar" -M
