"""testing/gpu/distribution.py: the suite's comparator for sampled outputs
(numpy only; the GPU run is run_suite.py)."""

import os
import sys

import pytest

np = pytest.importorskip("numpy")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "gpu"))
import distribution  # noqa: E402

SPEC = {"tv_max": 0.05, "mean_atol": 0.05, "std_rtol": 0.05}


def test_same_distribution_passes():
    ra, re = np.random.default_rng(1), np.random.default_rng(2)
    p = [0.1, 0.2, 0.3, 0.4]
    e = [re.choice(4, 4096, p=p).astype(np.int64) for _ in range(4)]
    a = [ra.choice(4, 4096, p=p).astype(np.int64) for _ in range(4)]
    r = distribution.compare_samples(e, a, SPEC)
    assert r["ok"], r
    ef = [(re.standard_normal((512, 8)) * 2 + 1).astype(np.float32) for _ in range(4)]
    af = [(ra.standard_normal((512, 8)) * 2 + 1).astype(np.float32) for _ in range(4)]
    r = distribution.compare_samples(ef, af, SPEC)
    assert r["ok"], r
    assert abs(r["stats"]["mean"] - 1) < 0.05 and abs(r["stats"]["std"] - 2) < 0.05


def test_other_distribution_fails():
    ra, re = np.random.default_rng(1), np.random.default_rng(2)
    e = [re.choice(4, 4096, p=[0.1, 0.2, 0.3, 0.4]) for _ in range(4)]
    a = [ra.choice(4, 4096, p=[0.25] * 4) for _ in range(4)]
    r = distribution.compare_samples(e, a, SPEC)
    assert not r["ok"] and "total variation" in r["problems"][0]
    # Uniform [0, 1) instead of a standard normal: mean and std both off.
    ef = [re.standard_normal(4096).astype(np.float32) for _ in range(3)]
    af = [ra.random(4096).astype(np.float32) for _ in range(3)]
    r = distribution.compare_samples(ef, af, SPEC)
    assert not r["ok"] and len(r["problems"]) == 2
    # The right distribution with the std scaled by 1.1.
    af = [(ra.standard_normal(4096) * 1.1).astype(np.float32) for _ in range(3)]
    r = distribution.compare_samples(ef, af, SPEC)
    assert not r["ok"] and r["problems"][0].startswith("std")


def test_repeated_draws_and_bad_values_fail():
    re = np.random.default_rng(2)
    e = [re.standard_normal(1000).astype(np.float32) for _ in range(3)]
    same = e[0].copy()
    r = distribution.compare_samples(e, [same, same.copy(), e[2]], SPEC)
    assert r["problems"] == ["call 1 drew the same values as call 0"]
    bad = [x.copy() for x in e]
    bad[1][5] = np.nan
    r = distribution.compare_samples(e, bad, SPEC)
    assert not r["ok"] and "1 non-finite values" in r["problems"]
    r = distribution.compare_samples(e, [x.astype(np.float64) for x in e], SPEC)
    assert not r["ok"] and "dtypes" in r["problems"][0]


def _write(d, outs_per_call):
    for k, outs in enumerate(outs_per_call):
        cd = os.path.join(d, f"call{k}")
        os.makedirs(cd, exist_ok=True)
        for j, o in enumerate(outs):
            np.save(os.path.join(cd, f"out{j}.npy"), o)


def test_suite_files_and_seed_check(tmp_path):
    re, ra = np.random.default_rng(5), np.random.default_rng(6)
    suite = tmp_path / "suite"
    (suite / "c" / "expected").mkdir(parents=True)
    expected = []
    for k in range(3):
        outs = []
        for j, arr in enumerate((re.integers(0, 8, 4096),
                                 re.standard_normal(4096).astype(np.float32))):
            p = f"expected/call{k}_out{j}.npy"
            np.save(suite / "c" / p, arr)
            outs.append(p)
        expected.append(outs)
    act = tmp_path / "actual"
    _write(str(act), [(ra.integers(0, 8, 4096), ra.standard_normal(4096).astype(np.float32))
                      for _ in range(3)])
    r = distribution.compare(str(suite), "c", {"expected": expected}, str(act), 3, SPEC)
    assert r["ok"] and len(r["distribution"]) == 2, r

    def run(out, seed, calls):   # a seeded fake aotrun
        g = np.random.default_rng(seed)
        _write(out, [(g.integers(0, 8, 64),) for _ in range(calls)])
        return 0, ""
    s = distribution.seed_check(run, str(tmp_path / "seeded"))
    assert s["ok"] and s["same_seed_identical"] and s["other_seed_differs"]

    def unseeded(out, seed, calls):   # ignores the seed: runs differ
        return run(out, int.from_bytes(os.urandom(4), "little"), calls)
    s = distribution.seed_check(unseeded, str(tmp_path / "unseeded"))
    assert not s["ok"] and "differ" in s["problems"][0]

    def fails(out, seed, calls):
        return 3, "aotrun: execute failed: boom\n"
    s = distribution.seed_check(fails, str(tmp_path / "failing"))
    assert not s["ok"] and "boom" in s["problems"][0]


FAKE_AOTRUN = r'''#!/usr/bin/env python3
# A stand-in for `aotrun run` that draws with AOTRUN_SEED (or the OS).
import os, sys
import numpy as np
a = sys.argv
out, calls = a[a.index("--output-dir") + 1], int(a[a.index("--calls") + 1])
seed = os.environ.get("AOTRUN_SEED")
g = np.random.default_rng(int(seed) if seed else None)
for k in range(calls):
    d = os.path.join(out, f"call{k}") if calls > 1 else out
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "out0.npy"), g.integers(0, 8, 4096))
    np.save(os.path.join(d, "out1.npy"), g.standard_normal(4096).astype(np.float32))
'''


def test_run_suite_routes_distribution_cases(tmp_path):
    """run_suite.run_method on a case whose case.json asks for the
    distribution comparator: aotrun's calls against eager's draws, then
    the AOTRUN_SEED reruns (a fake aotrun that honours the seed)."""
    import json
    import run_suite
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "aotrun").write_text(FAKE_AOTRUN.replace(
        "#!/usr/bin/env python3", "#!" + sys.executable))
    (bin_dir / "aotrun").chmod(0o755)
    suite = tmp_path / "suite"
    (suite / "c" / "expected").mkdir(parents=True)
    g = np.random.default_rng(9)
    expected = []
    for k in range(3):
        outs = []
        for j, arr in enumerate((g.integers(0, 8, 4096),
                                 g.standard_normal(4096).astype(np.float32))):
            p = f"expected/call{k}_out{j}.npy"
            np.save(suite / "c" / p, arr)
            outs.append(p)
        expected.append(outs)
    minfo = {"inputs": [], "expected": expected}
    case = {"compare": {"compare": "distribution", **SPEC}, "methods": {"forward": minfo}}
    (suite / "c" / "case.json").write_text(json.dumps(case))
    a = type("A", (), {"suite": str(suite), "work": str(tmp_path / "work"),
                       "bin": str(bin_dir), "lib": str(tmp_path), "calls": 3,
                       "atol": 1e-4, "rtol": 1e-3})
    log = str(tmp_path / "log")
    for mode in ("nograph", "graph"):
        row = run_suite.run_method(a, dict(os.environ), "c", "forward", minfo,
                                   ["forward"], mode, log)
        assert row["ok"], row
        assert len(row["distribution"]) == 2 and "tv" in row["distribution"][0]
        assert row["seed"]["same_seed_identical"] and row["seed"]["other_seed_differs"]
    # Eager drew from another distribution: the row fails, naming out 1.
    for k in range(3):
        np.save(suite / "c" / f"expected/call{k}_out1.npy",
                (g.standard_normal(4096) * 3).astype(np.float32))
    row = run_suite.run_method(a, dict(os.environ), "c", "forward", minfo,
                               ["forward"], "nograph", log)
    assert not row["ok"] and any(p.startswith("out 1: std") for p in row["problems"])
