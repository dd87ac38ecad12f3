"""testing/gpu/compare.py's error metrics and suite walk (numpy only)."""

import json
import os
import sys

import pytest

np = pytest.importorskip("numpy")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))
import compare  # noqa: E402


def test_errors_metrics():
    e = np.array([1.0, 2.0, -4.0], dtype=np.float32)
    r = compare.errors(e, e + np.float32(0.5), atol=1e-4, rtol=1e-3)
    assert r["max_abs"] == 0.5 and r["max_rel"] == 0.5 and r["ok"] is False
    r = compare.errors(e, e.copy(), atol=0, rtol=0)
    assert r == {"shape": [3], "dtype": "float32", "max_abs": 0.0,
                 "max_rel": 0.0, "ok": True}
    r = compare.errors(e, e[:2], 1e-4, 1e-3)
    assert not r["ok"] and r["problem"] == "shape [2] != [3]"
    r = compare.errors(e, e.astype(np.float64), 1e-4, 1e-3)
    assert not r["ok"] and "dtype float64 != float32" in r["problem"]
    n = np.array([np.nan, np.inf])
    assert compare.errors(n, n.copy(), 0, 0)["ok"]
    assert not compare.errors(n, np.array([np.nan, 1.0]), 0, 0)["ok"]


def test_suite_walk(tmp_path, capsys):
    s, a = tmp_path / "suite", tmp_path / "actual"
    (s / "m" / "expected").mkdir(parents=True)
    np.save(s / "m" / "expected" / "call0_out0.npy", np.arange(4.0))
    case = {"methods": {"forward": {"inputs": [],
                                    "expected": [["expected/call0_out0.npy"]]}}}
    (s / "summary.json").write_text(json.dumps({"cases": {
        "m": {"status": "ok", "case": case},
        "bad": {"status": "error", "error": "ExportError: boom"}}}))
    (a / "m" / "forward" / "call0").mkdir(parents=True)
    np.save(a / "m" / "forward" / "call0" / "out0.npy", np.arange(4.0) + 1e-6)
    out = tmp_path / "r.json"
    rc = compare.main([str(s), str(a), "--json", str(out)])
    assert rc == 1                       # 'bad' was not exported
    rows = json.loads(out.read_text())["rows"]
    assert rows[0]["case"] == "m" and rows[0]["ok"]
    assert abs(rows[0]["max_abs"] - 1e-6) < 1e-9
    assert rows[1]["case"] == "bad" and "boom" in rows[1]["problem"]
    assert "1 passed, 1 failed" in capsys.readouterr().out


def test_errors_zero_dim_outputs():
    # A 0-d output (e.g. a scalar sum) compares like a 1-element array.
    r = compare.errors(np.array(1.0, dtype=np.float32),
                       np.array(1.5, dtype=np.float32), atol=1e-4, rtol=1e-3)
    assert r["max_abs"] == 0.5 and not r["ok"]
    assert compare.errors(np.array(True), np.array(True), 0, 0)["ok"]
