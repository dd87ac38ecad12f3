"""CPU checks of testing/gpu/first_call_state.py (issue 12: whose state
makes a first call slow): its record and line per condition, and that
every condition is documented (no GPU, no torch)."""

import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "testing", "gpu"))
import first_call_state as fcs  # noqa: E402


def test_summarize_record_and_line():
    rec, line = fcs.summarize("busy", 30.0, [12.0, 11.0], [10.0, 9.0, 11.0])
    assert rec == {"condition": "busy", "first_us": 30.0,
                   "next_us": [12.0, 11.0], "steady_median_us": 10.0,
                   "first_over_steady": 3.0}
    assert line == "busy     first 30.0 us (3.0x steady 10.0), next 12.0, 11.0"


def test_summarize_with_gpu_time():
    rec, line = fcs.summarize("gpu_time", 40.0, [], [20.0], (16.0, 8.0))
    assert rec["gpu_first_us"] == 16.0 and rec["gpu_steady_median_us"] == 8.0
    assert line.endswith("; GPU first 16.0 us, steady 8.0")


def test_every_condition_is_documented():
    for cond in fcs.CONDITIONS:
        assert "\n  %s " % cond in fcs.__doc__, cond


def test_worker_command_parses_as_a_worker():
    # The GPU run of 2026-12-07 16:07 failed every condition: the worker's
    # command line lacked --out, which the parser required of everyone.
    a = fcs.parse_args(["--out", "/tmp/x.json", "--lib", "/l"])
    for cond in fcs.CONDITIONS:
        cmd = fcs.worker_command(a, cond, "/p")
        w = fcs.parse_args(cmd[2:])
        assert w.worker and w.condition == cond and w.program == "/p"
        assert w.lib == "/l" and w.busy_ms == a.busy_ms


def test_out_required_outside_the_worker():
    import pytest
    with pytest.raises(SystemExit):
        fcs.parse_args([])
    with pytest.raises(SystemExit):
        fcs.parse_args(["--worker"])
