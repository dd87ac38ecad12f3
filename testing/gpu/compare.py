"""Compares actual outputs with the suite's expected ones.

  python3 testing/gpu/compare.py SUITE_DIR ACTUAL_DIR [--json OUT.json]
        [--atol A] [--rtol R] [--calls K]
      SUITE_DIR is export_suite.py's OUT_DIR; actual outputs are read from
      ACTUAL_DIR/NAME/METHOD/call<k>/out<j>.npy (what run_aotrun.sh writes;
      by default only the calls present are compared).
  python3 testing/gpu/compare.py --pair EXPECTED.npy|DIR ACTUAL.npy|DIR ...
      compares files directly (DIRs: every out<j>.npy / call<k>_out<j>.npy).

Prints one row per output: max abs error, max rel error, shape/dtype
mismatches, verdict (allclose with atol/rtol). Exits 1 on any failure.
"""

import argparse
import json
import os
import sys

import numpy as np


def errors(expected, actual, atol, rtol):
    row = {"shape": list(expected.shape), "dtype": str(expected.dtype)}
    if actual.shape != expected.shape:
        row.update(ok=False, problem=f"shape {list(actual.shape)} != "
                   f"{list(expected.shape)}")
        return row
    if actual.dtype != expected.dtype:
        row["problem"] = f"dtype {actual.dtype} != {expected.dtype}"
    # atleast_1d: 0-d outputs (a scalar result) compare like 1-element ones.
    e = np.atleast_1d(expected.astype(np.float64) if expected.dtype != bool else expected.astype(np.int8))
    a = np.atleast_1d(actual.astype(np.float64) if actual.dtype != bool else actual.astype(np.int8))
    if e.size == 0:
        row.update(max_abs=0.0, max_rel=0.0, ok="problem" not in row)
        return row
    finite = np.isfinite(e) & np.isfinite(a)
    same_nonfinite = bool(np.all((np.isnan(e) & np.isnan(a)) | (e == a) | finite))
    d = np.abs(a - e)
    d[~finite] = 0.0
    rel = d / np.maximum(np.abs(e), np.finfo(np.float64).tiny)
    row["max_abs"] = float(d.max())
    row["max_rel"] = float(rel[d > 0].max()) if np.any(d > 0) else 0.0
    close = np.allclose(a, e, atol=atol, rtol=rtol, equal_nan=True)
    row["ok"] = bool(close and same_nonfinite and "problem" not in row)
    return row


def _load(path):
    return np.load(path, allow_pickle=False)


def suite_pairs(suite, actual, calls):
    summary = json.load(open(os.path.join(suite, "summary.json")))
    for name, r in summary["cases"].items():
        if r.get("status") != "ok":
            yield name, "-", -1, -1, None, None, f"not exported: {r.get('error', '')[:80]}"
            continue
        for method, m in r["case"]["methods"].items():
            for k, outs in enumerate(m["expected"]):
                if calls is not None and k >= calls:
                    break
                call_dir = os.path.join(actual, name, method, f"call{k}")
                if not os.path.isdir(call_dir):
                    if k == 0:
                        yield name, method, k, -1, None, None, "no actual outputs"
                    continue
                for j, rel in enumerate(outs):
                    got = os.path.join(call_dir, f"out{j}.npy")
                    yield (name, method, k, j, os.path.join(suite, name, rel),
                           got, None if os.path.exists(got) else "missing")


def _dir_files(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".npy"))


def pair_list(items):
    if len(items) % 2:
        raise SystemExit("--pair takes EXPECTED ACTUAL pairs")
    for e, a in zip(items[::2], items[1::2]):
        if os.path.isdir(e):
            for f in _dir_files(e):
                short = f.split("_")[-1]  # call0_out1.npy -> out1.npy
                cand = os.path.join(a, f) if os.path.exists(os.path.join(a, f)) \
                    else os.path.join(a, short)
                yield (os.path.basename(e.rstrip("/")), "-", -1, f, os.path.join(e, f),
                       cand, None if os.path.exists(cand) else "missing")
        else:
            yield os.path.basename(e), "-", -1, 0, e, a, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--pair", action="store_true")
    ap.add_argument("--json", default=None)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--calls", type=int, default=None)
    a = ap.parse_args(argv)
    if a.pair:
        pairs = pair_list(a.paths)
    else:
        if len(a.paths) != 2:
            ap.error("expected SUITE_DIR ACTUAL_DIR")
        pairs = suite_pairs(a.paths[0], a.paths[1], a.calls)
    rows = []
    for name, method, k, j, exp, got, problem in pairs:
        row = {"case": name, "method": method, "call": k, "output": j,
               "expected": exp, "actual": got}
        if problem:
            row.update(ok=False, problem=problem)
        else:
            try:
                row.update(errors(_load(exp), _load(got), a.atol, a.rtol))
            except (OSError, ValueError) as e:
                row.update(ok=False, problem=f"unreadable: {e}")
        rows.append(row)
    fmt = "{:<20} {:<8} {:>4} {:>6} {:>12} {:>12}  {}"
    print(fmt.format("case", "method", "call", "output", "max_abs", "max_rel", "verdict"))
    for r in rows:
        print(fmt.format(r["case"][:20], str(r["method"])[:8], r["call"], str(r["output"]),
                         "%.3g" % r["max_abs"] if "max_abs" in r else "-",
                         "%.3g" % r["max_rel"] if "max_rel" in r else "-",
                         ("ok" if r["ok"] else "FAIL") +
                         (f" ({r['problem']})" if r.get("problem") else "")))
    bad = sum(not r["ok"] for r in rows)
    print(f"{len(rows) - bad} passed, {bad} failed")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"atol": a.atol, "rtol": a.rtol, "rows": rows}, f, indent=1)
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
