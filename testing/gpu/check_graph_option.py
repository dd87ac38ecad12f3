#!/usr/bin/env python3
"""One graph option on a few exported cases (GPU machine, after the
suite's export): each case's forward through `aotrun run` with graphs,
device I/O, output nodes and the option, every call compared with eager
(run_suite.compare_calls); then `aotrun bench` of the graph replay without
and with the option, alternating, median us per call (wall, no events).

    python3 testing/gpu/check_graph_option.py SUITE WORK --bin .gpu/bin \
        --lib .gpu/lib [--option cuda_graph_done_flag=true] \
        [--cases mlp,transformer] [--iters 2000] [--rounds 2]

--option defaults to cuda_graph_copy_kernels=true (copy nodes as kernel
nodes, its first use). Prints PASS/FAIL per case, the timings, and
"N passed, N failed".
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run_suite  # noqa: E402  (compare_calls, input_args)

GRAPH = ["--device-io", "--option", "enable_cuda_graph_for_method=forward",
         "--option", "cuda_graph_output_nodes=true"]


def check_case(a, case):
    prog = os.path.join(a.suite, case)
    info = json.load(open(os.path.join(prog, "case.json")))
    minfo = info["methods"]["forward"]
    out = os.path.join(a.work, "graph_option", case)
    os.makedirs(out, exist_ok=True)
    calls = 6
    cmd = [os.path.join(a.bin, "aotrun"), "run", prog, "--plugin", a.plugin,
           "--calls", str(calls), "--output-dir", out] + GRAPH + a.opt + \
        run_suite.input_args(prog, minfo)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return False, f"aotrun exited {p.returncode}: {(p.stdout + p.stderr).strip()[-300:]}"
    tol = info.get("tolerance") or {}
    cmp = run_suite.compare_calls(a.suite, case, "forward", minfo, out, calls,
                                  tol.get("atol", a.atol), tol.get("rtol", a.rtol))
    if not cmp["ok"]:
        return False, "; ".join(cmp["problems"][:3])
    return True, f"{calls} calls match eager (max abs {cmp['max_abs']:.3g})"


def bench(a, case, with_option):
    prog = os.path.join(a.suite, case)
    minfo = json.load(open(os.path.join(prog, "case.json")))["methods"]["forward"]
    cmd = [os.path.join(a.bin, "aotrun"), "bench", prog, "--plugin", a.plugin,
           "--iterations", str(a.iters), "--warmup", "50", "--json",
           "--no-gpu-time"] + GRAPH + (a.opt if with_option else []) + \
        run_suite.input_args(prog, minfo)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return None
    return json.loads(p.stdout)["latency_us"]["median"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("work")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--cases", default="mlp,transformer,cnn,alias_outputs,bf16_io,float64")
    ap.add_argument("--option", default="cuda_graph_copy_kernels=true",
                    help="KEY=VALUE passed as aotrun's --option")
    ap.add_argument("--iters", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-3)
    a = ap.parse_args()
    a.plugin = os.path.join(a.lib, "libaotrun_cuda.so")
    a.opt = ["--option", a.option]
    passed = failed = 0
    for case in a.cases.split(","):
        if not os.path.exists(os.path.join(a.suite, case, "case.json")):
            # Asked for by name: a missing export is a failure, not a skip.
            print(f"FAIL {case}: not exported (no {case}/case.json in "
                  f"{a.suite}; export it first: AOTRUN_GPU_PARTS=export "
                  f"AOTRUN_GPU_ONLY={case})")
            failed += 1
            continue
        ok, why = check_case(a, case)
        print(f"{'PASS' if ok else 'FAIL'} {case}: {why}")
        passed, failed = passed + ok, failed + (not ok)
        if not ok:
            continue
        without, with_ = [], []
        for r in range(a.rounds):  # alternating order
            for k in ((False, True) if r % 2 == 0 else (True, False)):
                (with_ if k else without).append(bench(a, case, k))
        fmt = lambda v: ", ".join("-" if x is None else f"{x:.1f}" for x in v)
        print(f"  replay us/call, without [{fmt(without)}], with {a.option} "
              f"[{fmt(with_)}]")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
