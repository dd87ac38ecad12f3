# cli_checks.sh: what the CLI's shell tests share, sourced by each: fail,
# expect, refute, and finish, which prints the RESULT line that
# testing/run_tests.sh counts (shell tests have no CMocka summary).
# A test may define after_expect OUT CMD... to check more of every
# expect's output (test_cli_bad_programs.sh: no temp names, no leftovers).
failures=0 checks=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE PATTERN CMD...: exit code CODE and the fixed-string PATTERN
# (a whole line when it starts with ^) in stdout+stderr.
expect() {
  local code=$1 pattern=$2; shift 2
  local out rc ok=1
  out=$("$@" 2>&1); rc=$?
  checks=$((checks + 1))
  if [[ $pattern == ^* ]]; then grep -qxF -- "${pattern#^}" <<<"$out" || ok=0
  else grep -qF -- "$pattern" <<<"$out" || ok=0; fi
  if [[ $rc -ne $code || $ok -eq 0 ]]; then
    fail "$* -> rc $rc (want $code), output:"; echo "$out"
    echo "  (wanted: $pattern)"
  fi
  if declare -F after_expect >/dev/null; then after_expect "$out" "$@"; fi
}

# refute PATTERN CMD...: PATTERN not in stdout+stderr (any exit code).
refute() {
  local pattern=$1; shift
  checks=$((checks + 1))
  if "$@" 2>&1 | grep -qF -- "$pattern"; then fail "$* printed '$pattern'"; fi
}

# finish WHAT: the closing lines; its status is the test's.
finish() {
  echo "$((checks - failures)) of $checks $1 checks passed"
  echo "RESULT: $((checks - failures)) passed, $failures failed"
  [[ $failures -eq 0 ]]
}
