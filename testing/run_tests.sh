#!/usr/bin/env bash
# The project's test command (README, CI): installs what is missing, runs every
# Bazel test (CMocka) and the exporter's pytest suite, and prints one closing
# line "N passed, N failed, N skipped". Exit status is non-zero on any failure.
#   testing/run_tests.sh            all tests
#   AOTRUN_BAZEL_CONFIG=asan testing/run_tests.sh   (or ubsan, valgrind)
set -uo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh || { echo "0 passed, 1 failed"; exit 1; }

mkdir -p .bazel-links   # .bazelrc: --symlink_prefix=.bazel-links/ (ignored by //...)
config=()
[ -n "${AOTRUN_BAZEL_CONFIG:-}" ] && config=(--config="$AOTRUN_BAZEL_CONFIG")

bazel test "${config[@]}" //... 2>&1 | tail -n 60
bazel_rc=${PIPESTATUS[0]}

# Sum CMocka's per-binary summaries (Bazel's own summary line is not read).
shopt -s globstar nullglob
p=0; f=0; s=0
# test-only configs (valgrind) are unknown to `bazel info`: fall back.
testlogs=$(bazel info "${config[@]}" bazel-testlogs 2>/dev/null) ||
  testlogs=$(bazel info bazel-testlogs 2>/dev/null)
for log in "$testlogs"/**/test.log; do
  n=$(sed -n 's/^\[  PASSED  \] \([0-9]\+\) test(s)\.$/\1/p' "$log" | tail -1)
  m=$(sed -n 's/^\[  FAILED  \] \([0-9]\+\) test(s), listed below:$/\1/p' "$log" | tail -1)
  k=$(sed -n 's/^\[  SKIPPED \] \([0-9]\+\) test(s), listed below:$/\1/p' "$log" | tail -1)
  p=$((p + ${n:-0})); f=$((f + ${m:-0})); s=$((s + ${k:-0}))
  # A binary that failed without a CMocka summary (crash, sh_test) counts once.
  if ! grep -q '^\[==========\]' "$log"; then
    r=$(sed -n 's/^RESULT: \([0-9]\+\) passed, \([0-9]\+\) failed$/\1 \2/p' "$log" | tail -1)
    if [ -n "$r" ]; then
      p=$((p + ${r% *})); f=$((f + ${r#* }))
    fi
  fi
done
[ "$bazel_rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1   # build failure or crash
if [ "$bazel_rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
  echo "run_tests: bazel passed but no CMocka summary was found under '$testlogs'"
  f=1; bazel_rc=1
fi

py_rc=0
if [ -z "${AOTRUN_BAZEL_CONFIG:-}" ]; then
  testing/export/run_pytest.sh > /tmp/aotrun-pytest.log 2>&1
  py_rc=$?
  tail -n 30 /tmp/aotrun-pytest.log
  line=$(grep -E '^=+ .*(passed|failed|skipped|error).* in [0-9.]+s' /tmp/aotrun-pytest.log | tail -1)
  pp=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
  pf=$(echo "$line" | grep -oE '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  ps=$(echo "$line" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+')
  p=$((p + ${pp:-0})); f=$((f + ${pf:-0})); s=$((s + ${ps:-0}))
  [ "$py_rc" -ne 0 ] && [ "${pf:-0}" -eq 0 ] && f=$((f + 1))
fi
# The Python binding (python/, testing/python): NumPy and pytest from Debian.
if [ -z "${AOTRUN_BAZEL_CONFIG:-}" ]; then
  testing/python/run_pytest.sh > /tmp/aotrun-pytest-python.log 2>&1; rc=$?
  tail -n 15 /tmp/aotrun-pytest-python.log
  line=$(grep -E '^=+ .*(passed|failed|skipped|error).* in [0-9.]+s' /tmp/aotrun-pytest-python.log | tail -1)
  pp=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
  pf=$(echo "$line" | grep -oE '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  ps=$(echo "$line" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+')
  p=$((p + ${pp:-0})); f=$((f + ${pf:-0})); s=$((s + ${ps:-0}))
  [ "$rc" -ne 0 ] && [ "${pf:-0}" -eq 0 ] && f=$((f + 1))
  [ "$rc" -ne 0 ] && py_rc=$rc
fi

bazel shutdown >/dev/null 2>&1
echo "${p} passed, ${f} failed, ${s} skipped"
[ "$bazel_rc" -eq 0 ] && [ "$py_rc" -eq 0 ]
