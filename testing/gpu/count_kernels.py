#!/usr/bin/env python3
"""Kernels an aotrun program really launches per call, counted by CUPTI
(torch.profiler) around one call through the Python binding, device I/O.

The side-by-side's floor is taken "for the program's kernel count"
(issue 12). The wrapper source counts one kernel per extern call, but a
shim may launch more than one (a cuBLAS GEMM with a split-K reduction, an
attention fallback's passes, a fill before a scatter); this counts what
the GPU ran. CUPTI records the activity of every CUDA context in the
process, so aotrun's kernels are seen though torch did not launch them.

  python3 testing/gpu/count_kernels.py PROGRAM --plugin LIB --lib DIR \
      [--input in0.npy ...] [--calls 3] [--out FILE]

Prints (and writes to --out) JSON: {"kernels": N, "memcpy": N,
"memset": N, "names": {kernel: count}} for the last call; with an
"error" key instead when it could not count. Needs torch (CUDA) and the
bundle's libaotrun_host.so (--lib). CPU test: the event classification
(testing/export/test_count_kernels.py).
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def classify(events):
    """(name, device type) pairs of profiler events -> the count dict.
    Only device events count; memcpy and memset are told apart from
    kernels, since the floor's N is kernels alone."""
    out = {"kernels": 0, "memcpy": 0, "memset": 0, "names": {}}
    for name, dev in events:
        if "cuda" not in str(dev).lower():
            continue
        if name.startswith("Memcpy"):
            out["memcpy"] += 1
        elif name.startswith("Memset"):
            out["memset"] += 1
        else:
            out["kernels"] += 1
            out["names"][name] = out["names"].get(name, 0) + 1
    return out


def count(a):
    import numpy as np
    import torch
    from torch.profiler import ProfilerActivity, profile
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import aotrun
    ins = [torch.from_numpy(np.load(p)).cuda() for p in a.input]
    host = os.path.join(a.lib, "libaotrun_host.so")
    with aotrun.Program(a.program, plugin=a.plugin,
                        host_library=host) as prog:
        for _ in range(max(a.calls - 1, 0)):  # warm: first-call work out
            prog.run(a.method, *ins)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            prog.run(a.method, *ins)
            torch.cuda.synchronize()
    return classify((e.name, getattr(e, "device_type", ""))
                    for e in prof.events())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("program")
    p.add_argument("--plugin", required=True)
    p.add_argument("--lib", required=True)
    p.add_argument("--input", action="append", default=[])
    p.add_argument("--method", default="forward")
    p.add_argument("--calls", type=int, default=3)
    p.add_argument("--out")
    a = p.parse_args(argv)
    try:
        res = count(a)
    except Exception as e:  # recorded, not raised: the bench goes on
        res = {"error": f"{type(e).__name__}: {e}"[:500]}
    text = json.dumps(res, sort_keys=True)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0 if "error" not in res else 1


if __name__ == "__main__":
    sys.exit(main())
