"""Where a suite program's GPU time goes: the kernels aotrun runs for one
call next to the kernels eager PyTorch runs for the same model, in one
process, from torch.profiler (CUPTI sees every kernel of the process, the
ones the model library and aotrun's shim launch included).

Made for transformer_t2048_fused, whose GPU time per call is 3.8x eager's
although the attention kernel alone is within 1.2x of torch's (docs/
benchmarks.md): the table says which kernels take the difference.

  python3 testing/gpu/profile_kernels.py SUITE_DIR CASE[,CASE...] \
      --lib .gpu/lib --out DIR [--calls 20]

SUITE_DIR is export_suite.py's output (run_gpu_check.sh part "export" or
"e2e" writes it); each case is rebuilt from models.py (seeded: the weights
and inputs the program was exported from). Graphs off, device tensors.
Writes DIR/kernels_CASE.md and .json; prints the tables and the outputs'
max abs difference. Ends with "N passed, N failed" (a case fails when it
cannot run or its outputs differ beyond the case's tolerance).
"""

import argparse
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import models  # noqa: E402


def kernel_table(prof, calls):
    """{kernel name: (launches per call, GPU us per call)} of CUDA events."""
    table = {}
    for e in prof.key_averages():
        if getattr(e, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        us = getattr(e, "device_time_total", None)
        if us is None:
            us = getattr(e, "cuda_time_total", 0.0)
        n, t = table.get(e.key, (0, 0.0))
        table[e.key] = (n + e.count, t + us)
    return {k: (n / calls, t / calls) for k, (n, t) in table.items()}


def profiled(fn, calls):
    from torch.profiler import ProfilerActivity, profile
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU,
                             ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    return kernel_table(prof, calls)


def short(name, width=90):
    return name if len(name) <= width else name[:width - 3] + "..."


def markdown(case, rows_a, rows_e, top=20):
    tot_a = sum(t for _, t in rows_a.values())
    tot_e = sum(t for _, t in rows_e.values())
    lines = ["## %s: GPU time per call by kernel (graphs off)" % case, "",
             "aotrun %.1f us in %d launches; eager %.1f us in %d launches." % (
                 tot_a, round(sum(n for n, _ in rows_a.values())),
                 tot_e, round(sum(n for n, _ in rows_e.values()))), ""]
    for who, rows, tot in (("aotrun", rows_a, tot_a),
                           ("eager", rows_e, tot_e)):
        lines += ["### %s" % who, "",
                  "| kernel | launches/call | us/call | share |",
                  "| --- | --- | --- | --- |"]
        for k, (n, t) in sorted(rows.items(), key=lambda kv: -kv[1][1])[:top]:
            lines.append("| `%s` | %.1f | %.1f | %.0f%% |" % (
                short(k), n, t, 100.0 * t / tot if tot else 0.0))
        lines.append("")
    return "\n".join(lines)


def run_case(name, suite, plugin, calls, out_dir):
    import aotrun
    case = models.BY_NAME[name]
    module, methods = case.build("cuda")
    fn, args = methods["forward"]
    tol = case.extra.get("tolerance", {"atol": 1e-4, "rtol": 1e-4})
    with torch.no_grad(), models.eager_sdpa(case):
        expect = fn(*args)
        rows_e = profiled(lambda: fn(*args), calls)
    with aotrun.Program(os.path.join(suite, name), plugin=plugin) as prog:
        m = prog.method("forward")

        def call():
            return [torch.from_dlpack(o) for o in m(*args)]
        got = call()
        rows_a = profiled(call, calls)
    expect = expect if isinstance(expect, (tuple, list)) else [expect]
    diff = max(float((g.float() - e.float()).abs().max())
               for g, e in zip(got, expect))
    ok = all(torch.allclose(g.float(), e.float(), **tol)
             for g, e in zip(got, expect))
    text = markdown(name, rows_a, rows_e)
    with open(os.path.join(out_dir, "kernels_%s.md" % name), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out_dir, "kernels_%s.json" % name), "w") as f:
        json.dump({"case": name, "calls": calls, "max_abs_diff": diff,
                   "aotrun": rows_a, "eager": rows_e}, f, indent=1)
    print(text)
    print("%s: outputs max abs diff %.3g (%s)" % (
        name, diff, "ok" if ok else "beyond tolerance %s" % tol))
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("cases")
    ap.add_argument("--lib", default=os.path.join(ROOT, ".gpu", "lib"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--calls", type=int, default=20)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    os.environ.setdefault("AOTRUN_HOST_LIBRARY",
                          os.path.join(a.lib, "libaotrun_host.so"))
    plugin = os.path.join(a.lib, "libaotrun_cuda.so")
    passed = failed = 0
    for name in [c for c in a.cases.split(",") if c]:
        try:
            ok = run_case(name, a.suite, plugin, a.calls, a.out)
        except Exception as e:  # report and go on with the next case
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e))
            traceback.print_exc(limit=6)
            ok = False
        passed += ok
        failed += not ok
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
