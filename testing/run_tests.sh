#!/usr/bin/env bash
# The project's test command (README, CI): installs what is missing, then runs
# these steps and prints one closing line "N passed, N failed, N skipped"
# summed over all of them. Exit status is non-zero on any failure.
#   plain   every Bazel test (CMocka, sh_test)
#   pytest  the exporter's pytest suite
#   fuzz    every libFuzzer target of testing/fuzz/ for AOTRUN_FUZZ_SECONDS
#           (default 15) each; one target = one test
#   asan    every Bazel test under --config=asan (ASan + LeakSanitizer)
#   ubsan   every Bazel test under --config=ubsan
#   valgrind  the loader's and host library's CMocka tests under valgrind
#           (--config=valgrind: memcheck, definite leaks fail), except those
#           tagged no_valgrind (they load cuBLAS: minutes under valgrind)
#   tsan    the Bazel tests tagged "concurrency" under --config=tsan
# Usage:
#   testing/run_tests.sh               all steps (what CI runs)
#   testing/run_tests.sh --quick       plain and pytest only (local runs)
#   testing/run_tests.sh STEP...       the named steps, e.g. "plain asan"
#   AOTRUN_BAZEL_CONFIG=asan testing/run_tests.sh   one Bazel config only
#                                      (asan, ubsan, valgrind or tsan)
#   AOTRUN_BAZEL_FLAGS="--disk_cache=DIR"  extra flags for every bazel build
set -uo pipefail
cd "$(dirname "$0")/.."
./tools/setup.sh || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }

mkdir -p .bazel-links   # .bazelrc: --symlink_prefix=.bazel-links/ (ignored by //...)
read -r -a bazel_flags <<<"${AOTRUN_BAZEL_FLAGS:-}"
fuzz_seconds=${AOTRUN_FUZZ_SECONDS:-15}
# Step logs of this run (private: other runs on the machine keep theirs).
logs=$(mktemp -d "${TMPDIR:-/tmp}/aotrun-tests.XXXXXX")

# valgrind right after plain: it runs plain's binaries (no rebuild), which
# the sanitizer steps replace in the shared output directory.
all_steps=(plain valgrind pytest fuzz asan ubsan tsan)
# The valgrind step's tests (see the loader's BUILD for no_valgrind).
valgrind_query='kind("cc_test", //testing/loader/... + //testing/host/...) - attr(tags, "no_valgrind", //testing/...)'
steps=("${all_steps[@]}")
if [ "${1:-}" = --quick ]; then
  steps=(plain pytest)
elif [ $# -gt 0 ]; then
  steps=("$@")
elif [ -n "${AOTRUN_BAZEL_CONFIG:-}" ]; then
  steps=("${AOTRUN_BAZEL_CONFIG}")
fi

P=0 F=0 S=0   # the closing line's sums
# step_done NAME PASSED FAILED SKIPPED SECONDS: adds to the sums, one line.
step_done() {
  P=$((P + $2)); F=$((F + $3)); S=$((S + $4))
  echo "run_tests: step $1: $2 passed, $3 failed, $4 skipped (${5}s)"
}

# Sums CMocka's per-binary summaries in the test.log of each test label
# given on stdin (Bazel's own summary line is not read) into "p f s".
sum_test_logs() {
  local testlogs=$1 p=0 f=0 s=0 label log n m k r
  while read -r label; do
    label=${label#//}
    log="$testlogs/${label/://}/test.log"
    [ -f "$log" ] || continue
    n=$(sed -n 's/^\[  PASSED  \] \([0-9]\+\) test(s)\.$/\1/p' "$log" | tail -1)
    m=$(sed -n 's/^\[  FAILED  \] \([0-9]\+\) test(s), listed below:$/\1/p' "$log" | tail -1)
    k=$(sed -n 's/^\[  SKIPPED \] \([0-9]\+\) test(s), listed below:$/\1/p' "$log" | tail -1)
    p=$((p + ${n:-0})); f=$((f + ${m:-0})); s=$((s + ${k:-0}))
    # A binary without a CMocka summary (sh_test, crash) reports itself.
    if ! grep -q '^\[==========\]' "$log"; then
      r=$(sed -n 's/^RESULT: \([0-9]\+\) passed, \([0-9]\+\) failed$/\1 \2/p' "$log" | tail -1)
      if [ -n "$r" ]; then
        p=$((p + ${r% *})); f=$((f + ${r#* }))
      fi
    fi
  done
  echo "$p $f $s"
}

# reported_tests OUT ran|other: of the test labels on stdin, those Bazel's
# output OUT reports as run (PASSED, FAILED, FLAKY, TIMEOUT, cached or not),
# or the others (FAILED TO BUILD, NO STATUS, never reported).
reported_tests() {
  local out=$1 want=$2 label status
  while read -r label; do
    status=$(grep -E "^${label//./\\.}[[:space:]]" "$out" | tail -1 |
      sed -E 's/^[^[:space:]]+[[:space:]]+(\(cached\) )?//')
    case "$status" in
      PASSED*|FAILED\ in*|FLAKY*|TIMEOUT*) [ "$want" = ran ] && echo "$label" ;;
      *) [ "$want" = other ] && echo "$label" ;;
    esac
  done
}

# bazel_step NAME CONFIG QUERY [bazel test args...]: runs `bazel test` with
# --config=CONFIG (none when empty) and the args, and sums the logs of the
# tests QUERY selects.
bazel_step() {
  local name=$1 start=$SECONDS rc testlogs config=()
  [ -n "$2" ] && config=(--config="$2")
  local query=$3
  shift 3
  local out=$logs/bazel-$name.log
  echo "run_tests: step $name: bazel test ${config[*]} $*"
  bazel test "${bazel_flags[@]}" "${config[@]}" "$@" >"$out" 2>&1
  rc=$?
  tail -n 60 "$out"
  # test-only configs (valgrind) are unknown to `bazel info`: fall back.
  testlogs=$(bazel info "${bazel_flags[@]}" "${config[@]}" bazel-testlogs 2>/dev/null) ||
    testlogs=$(bazel info bazel-testlogs 2>/dev/null)
  # Only the logs of tests this run reports as run (cached included): a
  # test that failed to build keeps an older run's test.log, which must not
  # count as passed.
  read -r p f s < <(bazel query "$query" 2>/dev/null |
    reported_tests "$out" ran | sum_test_logs "$testlogs")
  local not_run
  not_run=$(bazel query "$query" 2>/dev/null | reported_tests "$out" other)
  if [ -n "$not_run" ]; then
    echo "run_tests: $(echo "$not_run" | wc -l) test(s) not run (failed to build or no status), counted failed:" \
      $(echo "$not_run" | head -10)
    f=$((f + $(echo "$not_run" | wc -l)))
  fi
  [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1   # build failure or crash
  if [ "$rc" -eq 0 ] && [ $((p + f + s)) -eq 0 ]; then
    echo "run_tests: bazel passed but no CMocka summary was found under '$testlogs'"
    f=1
  fi
  step_done "$name" "$p" "$f" "$s" $((SECONDS - start))
}

# pytest_suite NAME SCRIPT: one pytest suite's counts as a step.
pytest_suite() {
  local name=$1 script=$2 start=$SECONDS rc line pp pf ps log=$logs/$1.log
  "$script" > "$log" 2>&1
  rc=$?
  tail -n 30 "$log"
  line=$(grep -E '^=+ .*(passed|failed|skipped|error).* in [0-9.]+s' "$log" | tail -1)
  pp=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
  pf=$(echo "$line" | grep -oE '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  ps=$(echo "$line" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+')
  [ "$rc" -ne 0 ] && [ "${pf:-0}" -eq 0 ] && pf=1
  if [ -z "$line" ] && [ "$rc" -eq 0 ] && ! grep -q 'no tests ran' "$log"; then
    echo "run_tests: $name printed no summary line"; pf=1
  fi
  step_done "$name" "${pp:-0}" "${pf:-0}" "${ps:-0}" $((SECONDS - start))
}

# The exporter's suite (torch on the CPU) and the Python binding's
# (python/, testing/python: NumPy and pytest from Debian).
pytest_step() {
  pytest_suite pytest testing/export/run_pytest.sh
  pytest_suite pytest-python testing/python/run_pytest.sh
}

# Each fuzz target is one test: it passes when run_fuzz.sh finds nothing.
fuzz_step() {
  local start=$SECONDS p=0 f=0 t log
  for t in $(testing/fuzz/run_fuzz.sh list); do
    log=$logs/fuzz-$t.log
    if AOTRUN_BAZEL_FLAGS="${AOTRUN_BAZEL_FLAGS:-}" \
        testing/fuzz/run_fuzz.sh "$t" "$fuzz_seconds" >"$log" 2>&1; then
      p=$((p + 1))
      echo "run_tests: fuzz $t: $(grep -h 'stat::number_of_executed_units' "$log" | awk '{print $2}') executions, no findings"
    else
      f=$((f + 1))
      tail -n 40 "$log"
      echo "run_tests: fuzz $t FAILED (full log: $log)"
    fi
  done
  step_done fuzz "$p" "$f" 0 $((SECONDS - start))
}

for step in "${steps[@]}"; do
  case "$step" in
    plain) bazel_step plain "" 'tests(//...)' //... ;;
    pytest) pytest_step ;;
    fuzz) fuzz_step ;;
    asan|ubsan) bazel_step "$step" "$step" 'tests(//...)' //... ;;
    valgrind)
      # shellcheck disable=SC2046
      bazel_step valgrind valgrind "$valgrind_query" --build_tests_only \
        $(bazel query "$valgrind_query" 2>/dev/null) ;;
    tsan)
      bazel_step tsan tsan 'attr(tags, "concurrency", tests(//...))' \
        --build_tests_only --test_tag_filters=concurrency //... ;;
    *) echo "run_tests: unknown step '$step' (one of: ${all_steps[*]})"
       F=$((F + 1)) ;;
  esac
done

bazel shutdown >/dev/null 2>&1
[ "$F" -eq 0 ] && rm -rf "$logs"   # kept for reading when something failed
echo "${P} passed, ${F} failed, ${S} skipped"
[ "$F" -eq 0 ]
