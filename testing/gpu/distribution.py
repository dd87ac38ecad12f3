"""The "distribution" comparator of run_suite.py, for suite cases whose
outputs are random draws (models.py's _DIST): aotrun's draws cannot equal
eager's (different generators), so each output is compared by what it is
drawn from, over every call:

- an integer or bool output: the histogram of its values; the total
  variation distance 0.5 * sum |p_aotrun - p_eager| must be <= tv_max;
- a float output: |mean_aotrun - mean_eager| <= mean_atol * std_eager and
  |std_aotrun / std_eager - 1| <= std_rtol, all values finite;
- every output must change from one call to the next (new draws per call,
  graph replays included).

By value, aotrun against itself (seed_check): two runs with AOTRUN_SEED
1234 give identical outputs, a run with 4321 different ones.
"""

import os

import numpy as np

SEED_A, SEED_B = 1234, 4321


def _is_int(arr):
    return arr.dtype == bool or np.issubdtype(arr.dtype, np.integer)


def compare_samples(expected, actual, spec):
    """expected, actual: lists (one per call) of arrays of one output.
    Returns {"ok", "problems", "stats"}."""
    problems, stats = [], {}
    shapes = {a.shape for a in actual} | {e.shape for e in expected}
    if len(shapes) != 1 or {a.dtype for a in actual} != {expected[0].dtype}:
        return {"ok": False, "stats": {},
                "problems": [f"shapes {sorted(map(str, shapes))} / dtypes "
                             f"{sorted({str(a.dtype) for a in actual})} vs "
                             f"eager {expected[0].dtype}"]}
    e = np.concatenate([x.ravel() for x in expected])
    a = np.concatenate([x.ravel() for x in actual])
    if _is_int(e):
        values = np.union1d(e, a)
        pe = np.array([np.mean(e == v) for v in values])
        pa = np.array([np.mean(a == v) for v in values])
        tv = float(0.5 * np.abs(pe - pa).sum())
        stats["tv"] = tv
        if tv > spec.get("tv_max", 0.05):
            problems.append(f"histogram differs from eager's: total variation "
                            f"{tv:.4f} > {spec.get('tv_max', 0.05)}")
    else:
        e64, a64 = e.astype(np.float64), a.astype(np.float64)
        if not np.all(np.isfinite(a64)):
            problems.append(f"{int(np.sum(~np.isfinite(a64)))} non-finite "
                            "values")
            a64 = a64[np.isfinite(a64)]
        me, se = float(e64.mean()), float(e64.std())
        ma = float(a64.mean()) if a64.size else float("nan")
        sa = float(a64.std()) if a64.size else float("nan")
        stats.update(mean=ma, std=sa, eager_mean=me, eager_std=se)
        scale = se if se > 0 else 1.0
        if not abs(ma - me) <= spec.get("mean_atol", 0.05) * scale:
            problems.append(f"mean {ma:.5g} vs eager {me:.5g} (allowed "
                            f"{spec.get('mean_atol', 0.05)} x std {scale:.4g})")
        if se > 0 and not abs(sa / se - 1.0) <= spec.get("std_rtol", 0.05):
            problems.append(f"std {sa:.5g} vs eager {se:.5g} (allowed "
                            f"{spec.get('std_rtol', 0.05)} relative)")
        elif se == 0 and sa != 0:
            problems.append(f"std {sa:.5g}, eager's is 0")
    for k in range(1, len(actual)):
        if np.array_equal(actual[k], actual[k - 1]):
            problems.append(f"call {k} drew the same values as call {k - 1}")
    return {"ok": not problems, "problems": problems, "stats": stats}


def _outputs(call_dir):
    names = sorted((f for f in os.listdir(call_dir)
                    if f.startswith("out") and f.endswith(".npy")),
                   key=lambda f: int(f[3:-4]))
    return [np.load(os.path.join(call_dir, f)) for f in names]


def _call_dir(out_dir, k, calls):
    return os.path.join(out_dir, f"call{k}") if calls > 1 else out_dir


def compare(suite, case, minfo, out_dir, calls, spec):
    """Every output of aotrun's `calls` calls (OUT_DIR/call<k>/out<j>.npy)
    against the eager draws of the case (minfo["expected"])."""
    row = {"ok": True, "problems": [], "distribution": []}
    expected = [[np.load(os.path.join(suite, case, p)) for p in outs]
                for outs in minfo["expected"][:calls]]
    try:
        actual = [_outputs(_call_dir(out_dir, k, calls))
                  for k in range(len(expected))]
    except OSError as e:
        return {"ok": False, "problems": [f"outputs missing: {e}"]}
    for j in range(len(expected[0])):
        if any(len(a) <= j for a in actual):
            row["ok"] = False
            row["problems"].append(f"out {j} missing")
            continue
        r = compare_samples([e[j] for e in expected], [a[j] for a in actual],
                            spec)
        row["distribution"].append(r["stats"])
        if not r["ok"]:
            row["ok"] = False
            row["problems"] += [f"out {j}: {p}" for p in r["problems"]]
    return row


def seed_check(run, work):
    """run(out_dir, seed, calls) -> (rc, text) runs aotrun with AOTRUN_SEED.
    Two runs with one seed must agree bit for bit, another seed differ."""
    res = {"ok": True, "problems": []}
    dirs = {}
    for tag, seed in (("a1", SEED_A), ("a2", SEED_A), ("b", SEED_B)):
        dirs[tag] = os.path.join(work, tag)
        rc, text = run(dirs[tag], seed, 2)
        if rc != 0:
            tail = text.strip().splitlines()[-1][:200] if text.strip() else ""
            return {"ok": False,
                    "problems": [f"AOTRUN_SEED={seed} run: rc {rc} {tail}"]}
    outs = {t: [_outputs(_call_dir(d, k, 2)) for k in range(2)]
            for t, d in dirs.items()}
    same = all(np.array_equal(x, y) for ca, cb in zip(outs["a1"], outs["a2"])
               for x, y in zip(ca, cb))
    differ = all(not np.array_equal(x, y)
                 for ca, cb in zip(outs["a1"], outs["b"])
                 for x, y in zip(ca, cb))
    res.update(same_seed_identical=same, other_seed_differs=differ)
    if not same:
        res["ok"] = False
        res["problems"].append(f"two runs with AOTRUN_SEED={SEED_A} differ")
    if not differ:
        res["ok"] = False
        res["problems"].append(f"AOTRUN_SEED={SEED_B} gave an output equal "
                               f"to AOTRUN_SEED={SEED_A}'s")
    return res
