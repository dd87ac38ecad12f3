#!/usr/bin/env python3
"""Issue 12: whose state makes a first call slow, the host's or the GPU's.

After init's warm-up run the first call of a small program still takes
about 3x a steady one (mlp: 55 against 17 us on an H200, 2026-12-07), with
no page fault in it, and its GPU time (events) about doubles too. This
probe times the first calls of one static MLP (64->128->16, batch 4, the
benchmark's) through the Python binding, each condition in a fresh
process, device inputs and outputs:

  plain     open the program, make the tensors, the first call
  busy      the same, with the GPU kept busy for --busy-ms (torch's
            spin kernel) and synchronised right before the first call:
            a first call then as fast as a steady one points at the GPU's
            clocks or power state after idling
  gap       the host sleeps --gap-ms before the first call: slower than
            plain points at a state that decays while idle
  second    a first program runs 50 calls and is closed, then a second
            one's first call: what stays warm in the process (host code,
            the driver) against what is per program
  gpu_time  plain with the method option gpu_timing: the first call's GPU
            time (events) against the steady calls'

Each records the first call, the next 8 and the median of 300 steady
calls (us, host wall, perf_counter around a synchronous run). Writes one
JSON file and prints one line per condition.

  python3 testing/gpu/first_call_state.py --lib .gpu/lib --work /tmp/fcs --out $OUT/first_call_state.json
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONDITIONS = ["plain", "busy", "gap", "second", "gpu_time"]
NEXT = 8
STEADY = 300


def summarize(cond, first, nxt, steady, gpu=None):
    """One condition's record (us) and its line."""
    med = statistics.median(steady)
    rec = {"condition": cond, "first_us": first, "next_us": nxt,
           "steady_median_us": med, "first_over_steady": first / med}
    if gpu is not None:
        rec["gpu_first_us"], rec["gpu_steady_median_us"] = gpu
    line = "%-8s first %.1f us (%.1fx steady %.1f), next %s" % (
        cond, first, first / med, med, ", ".join("%.1f" % v for v in nxt))
    if gpu is not None:
        line += "; GPU first %.1f us, steady %.1f" % gpu
    return rec, line


def export(work, shim):
    import torch
    from torch import nn
    sys.path.insert(0, os.path.join(ROOT, "backend_cuda", "export"))
    from aotrun_export import export_program
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 16))
    m = m.cuda().eval()
    path = os.path.join(work, "mlp")
    export_program({"forward": (m, (torch.randn(4, 64, device="cuda"),))},
                   path, shim_exports=[shim], log=lambda s: None)
    return path


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e6


def worker(a):
    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import aotrun
    plugin = os.path.join(a.lib, "libaotrun_cuda.so")
    x = torch.randn(4, 64, device="cuda")
    out = torch.empty(4, 16, device="cuda")
    torch.cuda.synchronize()
    if a.condition == "second":
        with aotrun.Program(a.program, plugin=plugin) as p:
            m = p.method("forward")
            for _ in range(50):
                m.run(x, out=[out])
    with aotrun.Program(a.program, plugin=plugin) as p:
        m = p.method("forward")
        if a.condition == "gpu_time":
            m.set_option("gpu_timing", True)
        if a.condition == "busy":
            # about --busy-ms of spinning at ~1.8 GHz, then idle-free
            torch.cuda._sleep(int(a.busy_ms * 1.8e6))
            torch.cuda.synchronize()
        if a.condition == "gap":
            time.sleep(a.gap_ms / 1e3)
        run = lambda: m.run(x, out=[out])  # noqa: E731
        first = timed(run)
        gpu_first = m.get_option("last_gpu_time_ns") / 1e3 \
            if a.condition == "gpu_time" else None
        nxt = [timed(run) for _ in range(NEXT)]
        steady, gpu = [], []
        for _ in range(STEADY):
            steady.append(timed(run))
            if a.condition == "gpu_time":
                gpu.append(m.get_option("last_gpu_time_ns") / 1e3)
    rec, _ = summarize(a.condition, first, nxt, steady,
                       (gpu_first, statistics.median(gpu))
                       if a.condition == "gpu_time" else None)
    print(json.dumps(rec))
    return 0


def worker_command(a, cond, program):
    """The command line of one condition's fresh process."""
    return [sys.executable, os.path.abspath(__file__), "--worker",
            "--condition", cond, "--program", program, "--lib", a.lib,
            "--busy-ms", str(a.busy_ms), "--gap-ms", str(a.gap_ms)]


def parse_args(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(ROOT, ".gpu", "lib"))
    ap.add_argument("--work", default="/tmp/aotrun-first-call-state")
    ap.add_argument("--out", help="results file (not for --worker)")
    ap.add_argument("--busy-ms", type=float, default=20.0)
    ap.add_argument("--gap-ms", type=float, default=200.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--condition", choices=CONDITIONS)
    ap.add_argument("--program")
    a = ap.parse_args(argv)
    if not a.worker and not a.out:
        ap.error("--out is required (a worker prints its record instead)")
    if a.worker and not (a.condition and a.program):
        ap.error("--worker needs --condition and --program")
    return a


def main():
    a = parse_args()
    os.environ.setdefault("AOTRUN_HOST_LIBRARY",
                          os.path.join(a.lib, "libaotrun_host.so"))
    if a.worker:
        return worker(a)
    os.makedirs(a.work, exist_ok=True)
    program = export(a.work, os.path.join(a.lib, "libaotrun_shim.so"))
    results, failed = [], 0
    for r in range(a.rounds):
        for cond in CONDITIONS if r % 2 == 0 else CONDITIONS[::-1]:
            cmd = worker_command(a, cond, program)
            p = subprocess.run(cmd, capture_output=True, text=True,
                               timeout=180)
            try:
                rec = json.loads(p.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                failed += 1
                rec = {"condition": cond, "error": "rc %d: %s" % (
                    p.returncode, (p.stderr or p.stdout)[-600:])}
                print("FAIL %s: %s" % (cond, rec["error"]), flush=True)
            else:
                print("round %d %s" % (r, summarize(
                    cond, rec["first_us"], rec["next_us"], [rec[
                        "steady_median_us"]], (rec["gpu_first_us"],
                                               rec["gpu_steady_median_us"])
                    if "gpu_first_us" in rec else None)[1]), flush=True)
            rec["round"] = r
            results.append(rec)
    with open(a.out, "w") as f:
        json.dump({"busy_ms": a.busy_ms, "gap_ms": a.gap_ms,
                   "results": results}, f, indent=1)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
