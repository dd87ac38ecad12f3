"""Fallback-op benchmark: each aotrun op against ATen (through torch) on the
same inputs, in one process on the GPU machine, with the device-to-device
copy bandwidth measured in the same run.

  AOTRUN_SHIM_LIB=.gpu/lib/libaotrun_shim.so \\
      python3 testing/gpu/bench_fallbacks.py OUT.json [OUT.md] [--only attention,scatter,sort,random]

Cases come from testing/gpu/ops/bench_*.py: each module defines
`cases(shim, torch)` yielding dicts

  {"op": "scatter_reduce amax", "case": "512x1024 <- 4096x1024 f32",
   "aotrun": callable, "aten": callable, "bytes": minimum bytes moved,
   "target_us": optional number, "note": optional text}

Both callables queue work on the current stream (the harness's stream) and
are timed with CUDA events: median of many calls after warm-up, inputs
reused (sizes are chosen to exceed the 60 MB L2 where it matters).

Optional keys: "env", environment variables set while "aotrun" is timed
(Shim.kernel_options: the shim re-reads its kernel choice);
"variants", a list of {"label", "fn", "env"}: other aotrun configurations
of the same call, timed the same way (their warm-up calls include any
first-call work), reported in the JSON as "variants_us" and in the table's
last column as "label us (x ATen)". bench_conv.py uses them to time the
legacy and the graph cuDNN paths side by side (AOTRUN_CONV_API).
"""

import argparse
import glob
import importlib.util
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "ops"))

import torch  # noqa: E402

from shim_ctypes import Shim  # noqa: E402


def time_us(fn, warmup=10, reps=50):
    """Median microseconds per call of fn, timed with CUDA events on the
    current stream, one event pair per call."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    return statistics.median(times)


def copy_bandwidth():
    x = torch.empty(1 << 26, device="cuda")
    y = torch.empty_like(x)
    us = time_us(lambda: y.copy_(x))
    return 2 * x.numel() * 4 / (us * 1e-6) / 1e9


def load_modules(only):
    mods = []
    for p in sorted(glob.glob(os.path.join(HERE, "ops", "bench_*.py"))):
        name = os.path.basename(p)[6:-3]
        if only and name not in only:
            continue
        spec = importlib.util.spec_from_file_location(f"bench_{name}", p)
        m = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(m)
        mods.append((name, m))
    return mods


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_json")
    ap.add_argument("out_md", nargs="?")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    only = {s for s in a.only.split(",") if s}
    shim = Shim(os.environ.get("AOTRUN_SHIM_LIB",
                               os.path.join(HERE, "..", "..", ".gpu", "lib",
                                            "libaotrun_shim.so")))
    rows = []
    with shim.stream():
        gbps = copy_bandwidth()
        for fam, m in load_modules(only):
            try:
                for c in m.cases(shim, torch):
                    r = {k: v for k, v in c.items()
                         if k not in ("aotrun", "aten", "variants", "env")}
                    r["family"] = fam
                    try:
                        with shim.kernel_options(c.get("env", {})):
                            r["aotrun_us"] = round(time_us(c["aotrun"]), 1)
                        r["aten_us"] = round(time_us(c["aten"]), 1)
                        for v in c.get("variants", ()):
                            with shim.kernel_options(v.get("env", {})):
                                r.setdefault("variants_us", {})[v["label"]] = round(
                                    time_us(v["fn"]), 1)
                        if c.get("bytes"):
                            r["aotrun_GBps"] = round(
                                c["bytes"] / (r["aotrun_us"] * 1e-6) / 1e9, 1)
                    except Exception as e:  # one case failing keeps the rest
                        r["error"] = f"{type(e).__name__}: {e}"[:500]
                    left = shim.take_device_error()
                    if left:
                        r["error"] = f"device error report: {left}"
                    rows.append(r)
                    print(json.dumps(r), flush=True)
            except Exception as e:
                rows.append({"family": fam, "error": f"{type(e).__name__}: {e}"[:500]})
                print(rows[-1], flush=True)
    res = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "copy_GBps": round(gbps, 1), "rows": rows}
    with open(a.out_json, "w") as f:
        json.dump(res, f, indent=1)
    lines = [f"GPU {res['gpu']}, torch {res['torch']}; device copy "
             f"{res['copy_GBps']} GB/s (read + write) in the same run.\n",
             "| op | case | aotrun us | ATen us | aotrun/ATen | aotrun GB/s | "
             "% of copy | target us | note |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        if "aotrun_us" not in r:
            lines.append(f"| {r.get('op', r['family'])} | {r.get('case', '')} | "
                         f"error | | | | | | {r.get('error', '')[:120]} |")
            continue
        ratio = r["aotrun_us"] / r["aten_us"] if r["aten_us"] else float("nan")
        bw = r.get("aotrun_GBps")
        note = r.get("note", "")
        for label, us in r.get("variants_us", {}).items():
            vr = us / r["aten_us"] if r["aten_us"] else float("nan")
            note = f"{note}; " if note else ""
            note += f"{label} {us} us ({vr:.2f}x ATen)"
        lines.append(
            f"| {r['op']} | {r['case']} | {r['aotrun_us']} | {r['aten_us']} | "
            f"{ratio:.2f} | {bw if bw else '-'} | "
            f"{round(100 * bw / res['copy_GBps']) if bw else '-'} | "
            f"{r.get('target_us', '-')} | {note} |")
    md = "\n".join(lines) + "\n"
    if a.out_md:
        with open(a.out_md, "w") as f:
            f.write(md)
    print(md)


if __name__ == "__main__":
    main()
