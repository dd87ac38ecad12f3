"""Per-kernel time of the fallback benchmark cases (torch.profiler over the
aotrun callable of each case in testing/gpu/ops/bench_*.py): where an op's
time goes, to tune it.

  AOTRUN_SHIM_LIB=.gpu/lib/libaotrun_shim.so \\
      python3 testing/gpu/profile_fallbacks.py OUT.txt [--only scatter] \\
          [--match "scatter_reduce sum,index_put"]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from bench_fallbacks import load_modules  # noqa: E402
from shim_ctypes import Shim  # noqa: E402


def kernel_table(fn, reps=20):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            n = e.name[:110]
            t, c = rows.get(n, (0.0, 0))
            rows[n] = (t + e.device_time, c + 1)
    total = sum(t for t, _ in rows.values()) / reps
    lines = [f"  total {total:.1f} us/call (device time, gaps excluded)"]
    for n, (t, c) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"  {t / reps:8.1f} us  x{c / reps:.0f}  {n}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--only", default="")
    ap.add_argument("--match", default="")
    a = ap.parse_args()
    only = {s for s in a.only.split(",") if s}
    match = [s for s in a.match.split(",") if s]
    shim = Shim(os.environ.get("AOTRUN_SHIM_LIB",
                               os.path.join(HERE, "..", "..", ".gpu", "lib",
                                            "libaotrun_shim.so")))
    out = []
    with shim.stream():
        for fam, m in load_modules(only):
            for c in m.cases(shim, torch):
                title = f"{c['op']} | {c['case']}"
                if match and not any(s in title for s in match):
                    continue
                out.append(title)
                for side in ("aotrun", "aten"):
                    out.append(f" {side}:")
                    try:
                        out += kernel_table(c[side])
                    except Exception as e:  # noqa: BLE001
                        out.append(f"  error {type(e).__name__}: {e}")
                print("\n".join(out[-30:]), flush=True)
    with open(a.out, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
