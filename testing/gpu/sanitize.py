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
                   [--modes nograph,graph[,graph_device,graph_flag]]
                   [--results R.json]
                   [--deadline SECONDS] [--exclude-kernel SUBSTRING ...]
       sanitize.py SUITE WORK --bin B --lib L --eager CASE [--eager-tool T]
                   (the case's eager PyTorch forward under tool T, for
                   telling a vendor kernel's report from aotrun's)
       sanitize.py SUITE WORK --bin B --lib L --eager-gemm M,K,N,DTYPE[,zeroed]
                   [--eager-tool T]
                   (one eager linear, x[M,K] w[N,K] + bias, then y * 2, under
                   T: whether the tool sees cuBLAS's writes of y; "zeroed"
                   writes y with a fill first and the GEMM into it)
--cases all: every case the export produced. Cases run smallest program
first (the T=2048 transformers take minutes per run under racecheck), so a
deadline cuts the expensive ones. --deadline: start no run after that many
seconds (a device call has 10 minutes), and cut a run that would end past
it; the runs left out are printed as SKIP, the runs cut as CUT, both counted
as neither passed nor failed (a run that hangs on its own still fails, at
--timeout). The results file is rewritten after every run, so a killed call
still returns what ran.
Prints one line per run and "N passed, N failed" last; exit 1 on a failure,
77 when compute-sanitizer is missing.
"""
import argparse
import json
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_suite  # noqa: E402  (compare_calls: the e2e comparison)
import timed_run  # noqa: E402

TOOLS = {
    "memcheck": ["--tool", "memcheck", "--leak-check", "full"],
    "racecheck": ["--tool", "racecheck"],
    # --nvtx: the shim marks each cuBLAS result initialised through NVTX
    # (shim_lib/fallback/sanitizer_marks.h): the tool misses TMA stores.
    "initcheck": ["--tool", "initcheck", "--nvtx", "yes"],
    "synccheck": ["--tool", "synccheck"],
}


def sanitizer():
    for p in (shutil.which("compute-sanitizer"),
              "/usr/local/cuda/bin/compute-sanitizer",
              "/usr/local/cuda/compute-sanitizer/compute-sanitizer"):
        if p and os.path.exists(p):
            return p
    return None


def run_one(a, cs, tool, case, mode, log, timeout):
    prog = os.path.join(a.suite, case)
    info = json.load(open(os.path.join(prog, "case.json")))
    # forward where the case has it, else its first method.
    method = "forward" if "forward" in info["methods"] else next(iter(info["methods"]))
    minfo = info["methods"][method]
    out = os.path.join(a.work, "sanitize", tool, mode, case)
    os.makedirs(out, exist_ok=True)
    # graphs: 3 warm-up calls (AOTRUN_GRAPH_WARMUP_CALLS), capture, replay
    calls = 2 if mode == "nograph" else 5
    if a.lean and mode == "nograph":
        calls = 1
    cmd = [cs] + tool_args(tool, a.exclude_kernel) + ["--error-exitcode", "99",
                                "--print-limit", "20",
                                os.path.join(a.bin, "aotrun"), "run", prog,
                                "--plugin", os.path.join(a.lib, "libaotrun_cuda.so"),
                                "--method", method,
                                "--calls", str(calls), "--output-dir", out]
    cmd += run_suite.input_args(prog, minfo)
    if info.get("output_format") == "safetensors":
        cmd += ["--output-format", "safetensors"]
    cmd += mode_args(mode, method)
    if a.lean:  # the init's warm-up run repeats the call's kernels
        cmd += ["--option", "warm_up_run=false"]
    t0 = time.time()
    rc, text = run_tool(cmd, timeout)
    secs = time.time() - t0
    if rc == 124 and timeout < a.timeout:  # our deadline, not a hang
        row = {"case": case, "tool": tool, "mode": mode, "rc": rc,
               "errors": None, "seconds": round(secs, 1), "cut": True,
               "ok": False, "problems": [f"cut at the deadline after {secs:.0f}s"]}
        if a.exclude_kernel:
            row["not_checked"] = list(a.exclude_kernel)
        # What the reports printed before the cut name (--print-limit 20).
        if race_kernels(text):
            row["kernels"] = race_kernels(text)
        return row
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{text}\n[rc {rc}, {secs:.1f}s]\n")
    errors, warnings = error_count(text)
    row = {"case": case, "tool": tool, "mode": mode, "rc": rc,
           "errors": errors, "seconds": round(secs, 1), "problems": []}
    if a.exclude_kernel:
        row["not_checked"] = list(a.exclude_kernel)
    if warnings is not None:
        row["warnings"] = warnings
    if errors is None:
        row["problems"].append("no ERROR or RACECHECK SUMMARY line (rc %d): %s" %
                               (rc, text.strip().splitlines()[-1][:200]
                                if text.strip() else ""))
        if race_kernels(text):  # a run killed at --timeout: what it reported
            row["kernels"] = race_kernels(text)
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


def tool_args(tool, exclude=()):
    """The tool's options; each kernel name substring in `exclude` is left
    uninstrumented (--kernel-name-exclude kns=...): its accesses are not
    checked and, under initcheck, its writes not tracked. For a kernel
    whose reports are known to be the tool's (initcheck does not see the
    TMA stores of cuBLAS's Hopper kernels: a reader of their output was
    flagged on every 16-byte load, 2.4 million reports for one T=2048
    call, and the fused case's run outlasted a device call); the row
    names what was not checked."""
    args = list(TOOLS[tool])
    for name in exclude:
        args += ["--kernel-name-exclude", "kns=" + name]
    return args


def run_tool(cmd, timeout):
    """(rc, output) of a sanitizer run; on a timeout rc 124 and what it
    printed before it was killed (the first reports name their kernels),
    then the timeout."""
    rc, out, err = timed_run.run(cmd, timeout)
    return rc, out + err


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
    """The kernel names in a sanitizer report: racecheck's "... access at
    NAME+0x..." and the other tools' "=========     at NAME+0x..." lines
    under each error (0x... in NAME+0x... in older releases)."""
    names = re.findall(r"(?:(?:access|Access) at|^=+\s+at) (?:0x[0-9a-f]+ in )?"
                       r"([A-Za-z_][\w:<>,]*)\+0x", text, re.M)
    return sorted(set(names))


def cases_by_size(suite, cases):
    """The cases, smallest exported program first (stable)."""
    def size(case):
        total = 0
        for root, _, files in os.walk(os.path.join(suite, case)):
            for f in files:
                try:
                    total += os.path.getsize(os.path.join(root, f))
                except OSError:
                    pass
        return total
    return sorted(cases, key=size)


MODES = ("nograph", "graph", "graph_device", "graph_flag")
DEFAULT_MODES = ("nograph", "graph")


def parse_modes(text):
    """--modes: a comma list of MODES, in MODES order (one mode per device
    call where a run takes minutes). graph_device: graphs with --device-io
    (replay's input and output copies as graph nodes); graph_flag: that and
    cuda_graph_done_flag. Not in the default: on 2026-12-07 racecheck and
    synccheck crashed inside cuGraphLaunch (SIGSEGV in the tool's launch
    hook) on graph_device replays (docs/reliability.md)."""
    want = [m for m in text.split(",") if m]
    bad = [m for m in want if m not in MODES]
    if bad or not want:
        raise ValueError("--modes takes a comma list of %s, got %r"
                         % (", ".join(MODES), text))
    return [m for m in MODES if m in want]


def mode_args(mode, method):
    """aotrun run's arguments for a mode (nograph: none)."""
    args = []
    if mode != "nograph":
        args += ["--option", f"enable_cuda_graph_for_method={method}"]
    if mode in ("graph_device", "graph_flag"):
        args.append("--device-io")
    if mode == "graph_flag":
        args += ["--option", "cuda_graph_done_flag=true"]
    return args


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("work")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cases", default="mlp,transformer,cnn,mask_index")
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES),
                    help="comma list of " + ", ".join(MODES) +
                    " (default nograph,graph)")
    ap.add_argument("--results", default=None)
    ap.add_argument("--deadline", type=float, default=None)
    ap.add_argument("--lean", action="store_true",
                    help="for programs too big for a call's 10 minutes under "
                    "initcheck: 1 call without graphs (graphs: still 5, "
                    "the fewest that replay), no warm-up run at init")
    ap.add_argument("--eager", default=None,
                    help="instead: run this case's eager forward under --eager-tool")
    ap.add_argument("--exclude-kernel", action="append", default=[],
                    metavar="SUBSTRING",
                    help="leave kernels whose name contains this uninstrumented "
                    "(repeatable; the results name them)")
    ap.add_argument("--eager-gemm", default=None,
                    help="instead: one eager linear M,K,N,DTYPE[,zeroed] under --eager-tool")
    ap.add_argument("--eager-tool", default="racecheck")
    a = ap.parse_args()
    try:
        modes = parse_modes(a.modes)
        if a.eager_gemm:
            import sanitize_eager  # noqa: E402
            sanitize_eager.parse_gemm(a.eager_gemm)
    except ValueError as e:
        ap.error(str(e))
    start = time.time()
    cs = sanitizer()
    if cs is None:
        print("SKIP: compute-sanitizer not found")
        return 77
    os.makedirs(a.work, exist_ok=True)
    if a.eager or a.eager_gemm:
        import sanitize_eager  # noqa: E402  (it imports this module's helpers)
        return sanitize_eager.eager_reference(a, cs)
    log = os.path.join(a.work, "sanitize.log")
    summary = json.load(open(os.path.join(a.suite, "summary.json")))["cases"]
    cases = ([c for c, s in summary.items() if s.get("status") == "ok"]
             if a.cases == "all" else a.cases.split(","))
    cases = cases_by_size(a.suite, cases)
    rows = []
    skipped = 0
    # Case-major: a deadline cuts whole cases, every tool of a case runs.
    for case in cases:
        for tool in a.tools.split(","):
            if summary.get(case, {}).get("status") != "ok":
                print(f"SKIP {tool} {case}: not exported")
                continue
            for mode in modes:
                if a.deadline is not None and time.time() - start > a.deadline:
                    skipped += 1
                    print(f"SKIP {tool} {case} {mode}: past the deadline of {a.deadline:.0f}s")
                    continue
                timeout = a.timeout
                if a.deadline is not None:
                    timeout = min(timeout, max(1.0, a.deadline - (time.time() - start)))
                r = run_one(a, cs, tool, case, mode, log, timeout)
                rows.append(r)
                if a.results:
                    with open(a.results, "w") as f:
                        json.dump(rows, f, indent=1)
                verdict = "CUT" if r.get("cut") else "PASS" if r["ok"] else "FAIL"
                print(f"{verdict} {tool:9} {case:12} "
                      f"{mode:8} errors {r['errors']}"
                      f"{' warnings %d' % r['warnings'] if 'warnings' in r else ''}"
                      f" ({r['seconds']}s) "
                      f"{'; '.join(r['problems'])[:300]}"
                      f"{' [kernels named: %s]' % ', '.join(r['kernels'])[:300] if r.get('kernels') and not r['ok'] else ''}"
                      f"{' [not checked: %s]' % ', '.join(r['not_checked']) if r.get('not_checked') else ''}",
                      flush=True)
    if a.results:
        with open(a.results, "w") as f:
            json.dump(rows, f, indent=1)
    cut = sum(bool(r.get("cut")) for r in rows)
    bad = sum(not r["ok"] and not r.get("cut") for r in rows)
    if skipped or cut:
        print(f"{skipped} runs not started, {cut} cut (deadline)")
    print(f"{len(rows) - bad - cut} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
