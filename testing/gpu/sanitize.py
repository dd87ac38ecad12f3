#!/usr/bin/env python3
"""The GPU suite under NVIDIA's compute-sanitizer (issue 13; results in
docs/reliability.md, "GPU memory checker").

For each exported suite case (testing/gpu/export_suite.py) and each tool
(memcheck with leak checking, racecheck, initcheck, synccheck), runs
`aotrun run` on the case's forward inputs, without and with CUDA graphs,
under compute-sanitizer, then compares the outputs with eager (the case's
expected arrays): a run is clean when the sanitizer reports 0 errors, aotrun
exits 0 and every output matches.

usage: sanitize.py SUITE WORK --bin B --lib L [--cases a,b|all] [--tools t,u]
                   [--results R.json] [--deadline SECONDS]
       sanitize.py SUITE WORK --bin B --lib L --eager CASE [--eager-tool T]
                   (the case's eager PyTorch forward under tool T, for
                   telling a vendor kernel's report from aotrun's)
--cases all: every case the export produced. --deadline: start no run after
that many seconds (a device call has 10 minutes); the runs left out are
printed as SKIP and counted as neither passed nor failed. The results file is
rewritten after every run, so a killed call still returns what ran.
Prints one line per run and "N passed, N failed" last; exit 1 on a failure,
77 when compute-sanitizer is missing.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_suite  # noqa: E402  (compare_calls: the e2e comparison)

TOOLS = {
    "memcheck": ["--tool", "memcheck", "--leak-check", "full"],
    "racecheck": ["--tool", "racecheck"],
    "initcheck": ["--tool", "initcheck"],
    "synccheck": ["--tool", "synccheck"],
}


def sanitizer():
    for p in (shutil.which("compute-sanitizer"),
              "/usr/local/cuda/bin/compute-sanitizer",
              "/usr/local/cuda/compute-sanitizer/compute-sanitizer"):
        if p and os.path.exists(p):
            return p
    return None


def run_one(a, cs, tool, case, mode, log):
    prog = os.path.join(a.suite, case)
    info = json.load(open(os.path.join(prog, "case.json")))
    # forward where the case has it, else its first method.
    method = "forward" if "forward" in info["methods"] else next(iter(info["methods"]))
    minfo = info["methods"][method]
    out = os.path.join(a.work, "sanitize", tool, mode, case)
    os.makedirs(out, exist_ok=True)
    calls = 2 if mode == "nograph" else 5  # graphs: warm-up, capture, replay
    cmd = [cs] + TOOLS[tool] + ["--error-exitcode", "99",
                                "--print-limit", "20",
                                os.path.join(a.bin, "aotrun"), "run", prog,
                                "--plugin", os.path.join(a.lib, "libaotrun_cuda.so"),
                                "--method", method,
                                "--calls", str(calls), "--output-dir", out]
    for p in minfo["inputs"]:
        cmd += ["--input", os.path.join(prog, p)]
    if info.get("output_format") == "safetensors":
        cmd += ["--output-format", "safetensors"]
    if mode == "graph":
        cmd += ["--option", f"enable_cuda_graph_for_method={method}"]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=a.timeout)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, text = 124, f"timeout after {a.timeout}s"
    secs = time.time() - t0
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{text}\n[rc {rc}, {secs:.1f}s]\n")
    errors, warnings = error_count(text)
    row = {"case": case, "tool": tool, "mode": mode, "rc": rc,
           "errors": errors, "seconds": round(secs, 1), "problems": []}
    if warnings is not None:
        row["warnings"] = warnings
    if errors is None:
        row["problems"].append("no ERROR or RACECHECK SUMMARY line (rc %d): %s" %
                               (rc, text.strip().splitlines()[-1][:200]
                                if text.strip() else ""))
    elif errors:
        first = [l for l in text.splitlines() if l.startswith("=========")
                 and ("Invalid" in l or "Race" in l or "Uninitialized" in l
                      or "barrier" in l.lower() or "Leaked" in l
                      or "Error" in l)]
        row["problems"].append("%d errors: %s" % (errors, "; ".join(first[:3])[:300]))
        row["kernels"] = race_kernels(text)
    if rc != 0 and errors == 0:
        row["problems"].append(f"aotrun exited {rc}")
    if rc == 0 and info.get("compare", {}).get("compare") != "distribution":
        tol = info.get("tolerance") or {}
        cmp = run_suite.compare_calls(
            a.suite, case, method, minfo, out, calls,
            tol.get("atol", 1e-4), tol.get("rtol", 1e-3),
            st=info.get("output_format") == "safetensors")
        if not cmp["ok"]:
            row["problems"] += cmp["problems"][:3]
    row["ok"] = not row["problems"]
    return row


def error_count(text):
    """(errors, racecheck warnings or None) from a sanitizer's output; errors
    None when it printed no summary. racecheck ends with "RACECHECK SUMMARY:
    N hazards displayed (E errors, W warnings)" instead of the other tools'
    "ERROR SUMMARY: N errors"; its warnings (hazards it cannot prove
    harmful) are reported, errors fail."""
    m = re.findall(r"ERROR SUMMARY: (\d+) error", text)
    race = re.findall(r"RACECHECK SUMMARY: \d+ hazards? displayed "
                      r"\((\d+) errors?, (\d+) warnings?\)", text)
    if m:
        return int(m[-1]), None
    if race:
        return int(race[-1][0]), int(race[-1][1])
    return None, None


def race_kernels(text):
    """The kernel names in a sanitizer report's error lines."""
    names = re.findall(r"(?:access|Access) at (?:0x[0-9a-f]+ in )?([A-Za-z_][\w:<>,]*)\+0x", text)
    return sorted(set(names))


def eager_reference(a, cs):
    """Runs the case's eager PyTorch forward under the same tool: where a
    report names a vendor kernel (cuBLAS's nvjet_*, cuDNN), eager running
    the same kernels shows whether the report is the vendor kernel's own
    (the sanitizer's model of its synchronisation) or aotrun's doing."""
    code = ("import sys, torch; sys.path.insert(0, %r); import models; "
            "c = models.BY_NAME[%r]; m, meths = c.build('cuda'); fn, args = meths['forward']; "
            "torch.no_grad().__enter__(); fn(*args); torch.cuda.synchronize()"
            % (os.path.dirname(os.path.abspath(__file__)), a.eager))
    cmd = [cs] + TOOLS[a.eager_tool] + ["--print-limit", "50", sys.executable, "-c", code]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
        rc, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        rc, text = 124, f"timeout after {a.timeout}s"
    errors, _ = error_count(text)
    print(f"EAGER {a.eager_tool} {a.eager}: rc {rc}, errors {errors}, "
          f"{time.time() - t0:.1f}s; kernels named: {', '.join(race_kernels(text)) or '-'}")
    with open(os.path.join(a.work, "sanitize_eager.log"), "a") as f:
        f.write(f"$ {' '.join(cmd[:-1])} CODE\n{text}\n")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("work")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cases", default="mlp,transformer,cnn,mask_index")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--results", default=None)
    ap.add_argument("--deadline", type=float, default=None)
    ap.add_argument("--eager", default=None,
                    help="instead: run this case's eager forward under --eager-tool")
    ap.add_argument("--eager-tool", default="racecheck")
    a = ap.parse_args()
    start = time.time()
    cs = sanitizer()
    if cs is None:
        print("SKIP: compute-sanitizer not found")
        return 77
    os.makedirs(a.work, exist_ok=True)
    if a.eager:
        return eager_reference(a, cs)
    log = os.path.join(a.work, "sanitize.log")
    summary = json.load(open(os.path.join(a.suite, "summary.json")))["cases"]
    cases = ([c for c, s in summary.items() if s.get("status") == "ok"]
             if a.cases == "all" else a.cases.split(","))
    rows = []
    skipped = 0
    # Case-major: a deadline cuts whole cases, every tool of a case runs.
    for case in cases:
        for tool in a.tools.split(","):
            if summary.get(case, {}).get("status") != "ok":
                print(f"SKIP {tool} {case}: not exported")
                continue
            for mode in ("nograph", "graph"):
                if a.deadline is not None and time.time() - start > a.deadline:
                    skipped += 1
                    print(f"SKIP {tool} {case} {mode}: past the deadline of {a.deadline:.0f}s")
                    continue
                r = run_one(a, cs, tool, case, mode, log)
                rows.append(r)
                if a.results:
                    with open(a.results, "w") as f:
                        json.dump(rows, f, indent=1)
                print(f"{'PASS' if r['ok'] else 'FAIL'} {tool:9} {case:12} "
                      f"{mode:8} errors {r['errors']}"
                      f"{' warnings %d' % r['warnings'] if 'warnings' in r else ''}"
                      f" ({r['seconds']}s) "
                      f"{'; '.join(r['problems'])[:300]}", flush=True)
    if a.results:
        with open(a.results, "w") as f:
            json.dump(rows, f, indent=1)
    bad = sum(not r["ok"] for r in rows)
    if skipped:
        print(f"{skipped} runs not started (deadline)")
    print(f"{len(rows) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
