"""One subprocess with a time limit, for the GPU scripts (sanitize.py,
run_suite.py, bench_overhead.py, probe_torch_runner.py): what a killed run
printed before its limit is kept, since its first lines (a sanitizer's
first reports, a loader's last step) are what explains it."""
import subprocess

TIMEOUT_RC = 124      # as coreutils' timeout(1)
NOT_RUNNABLE_RC = 127  # as a shell's "command not found"


def _text(b):
    if isinstance(b, bytes):
        return b.decode("utf-8", "replace")
    return b or ""


def run(cmd, timeout, env=None):
    """(rc, stdout, stderr) of cmd. Past `timeout` seconds (at least 1) the
    process is killed: rc 124, its output so far, and stderr ends with
    "timeout after Ns". A program that cannot be started: rc 127 and why."""
    limit = max(1, timeout)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=limit, env=env)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        err = _text(e.stderr)
        sep = "\n" if err and not err.endswith("\n") else ""
        return (TIMEOUT_RC, _text(e.stdout),
                f"{err}{sep}timeout after {limit:.0f}s")
    except OSError as e:
        return NOT_RUNNABLE_RC, "", f"cannot run {cmd[0]}: {e}"
