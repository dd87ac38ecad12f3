"""CPU checks of testing/gpu/timed_run.py: the one subprocess-with-a-limit
helper of the GPU scripts keeps what a killed run printed."""

import os
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "testing", "gpu"))
import timed_run  # noqa: E402


def test_finished_run_gives_rc_and_both_streams():
    assert timed_run.run(["sh", "-c", "echo out; echo err >&2; exit 3"], 5) == \
        (3, "out\n", "err\n")


def test_killed_run_keeps_its_output_and_says_so_last():
    t0 = time.time()
    rc, out, err = timed_run.run(
        ["sh", "-c", "echo first; echo partial >&2; exec sleep 30"], 1)
    assert time.time() - t0 < 20
    assert rc == timed_run.TIMEOUT_RC == 124
    assert out == "first\n"
    assert err.splitlines() == ["partial", "timeout after 1s"]


def test_limit_is_at_least_one_second():
    rc, out, err = timed_run.run(["sh", "-c", "echo quick"], 0)
    assert (rc, out, err) == (0, "quick\n", "")


def test_program_that_cannot_start_names_itself():
    rc, out, err = timed_run.run(["/nonexistent/aotrun-tool"], 5)
    assert rc == timed_run.NOT_RUNNABLE_RC == 127
    assert out == ""
    assert err.startswith("cannot run /nonexistent/aotrun-tool:")


def test_environment_is_passed():
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "AOTRUN_X": "42"}
    assert timed_run.run(["sh", "-c", "echo $AOTRUN_X"], 5, env=env)[1] == "42\n"
