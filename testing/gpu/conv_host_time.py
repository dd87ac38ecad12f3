"""Host time of one aoti_torch_cuda_convolution call, for two or more shim
libraries side by side (issue 12: the no-graph path of convolution models
is host-bound). Each library runs in its own process, in alternating order
over the rounds; each process times back-to-back calls of the benchmark
CNN's convolutions (bench_models.py "cnn": 3x3, fp32, NCHW, bias) and a
MobileNet-like depthwise one, as a compiled model makes them (result
allocated, convolution, result freed), with no synchronisation inside the
loop. Python's ctypes cost is measured in the same process by a call of
aoti_torch_get_dim and reported apart, so the columns compare libraries,
not Python.

  python3 testing/gpu/conv_host_time.py LIB_A LIB_B [--rounds 3] [--calls 3000]
      [--json OUT.json]

The GPU time of the loop (CUDA events) is printed too: a case whose GPU
time per call is near its host time is GPU-bound and says little of the
host path.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, input shape, weight shape, padding, groups)
CASES = [
    ("cnn c1 1x3x64x64 -> 16", (1, 3, 64, 64), (16, 3, 3, 3), 1, 1),
    ("cnn c2 1x16x32x32 -> 32", (1, 16, 32, 32), (32, 16, 3, 3), 1, 1),
    ("cnn c3 1x32x16x16 -> 64", (1, 32, 16, 16), (64, 32, 3, 3), 1, 1),
    ("depthwise 1x64x16x16", (1, 64, 16, 16), (64, 1, 3, 3), 1, 64),
]


def child(lib, calls):
    sys.path.insert(0, HERE)
    import ctypes

    import torch

    from shim_ctypes import Shim

    torch.manual_seed(0)
    shim = Shim(lib)
    out = {"lib": lib, "cases": {}}
    with shim.stream():
        x0 = torch.randn(2, 3, device="cuda")
        h0 = shim.handle(x0)
        nd = ctypes.c_int64()
        get_dim = shim.fn("aoti_torch_get_dim")
        t = time.perf_counter()
        for _ in range(calls):
            get_dim(h0, ctypes.byref(nd))
        out["ctypes_us"] = (time.perf_counter() - t) / calls * 1e6
        shim.delete(h0)
        for name, xs, ws, pad, groups in CASES:
            x = torch.randn(*xs, device="cuda")
            w = torch.randn(*ws, device="cuda") * 0.1
            b = torch.randn(ws[0], device="cuda")
            hx, hw, hb = shim.handle(x), shim.handle(w), shim.handle(b)
            ob = shim.opt(hb)
            st, pd, dl, op = (shim.ints(v) for v in ((1, 1), (pad, pad), (1, 1), (0, 0)))
            conv = shim.fn("aoti_torch_cuda_convolution")
            delete = shim.fn("aoti_torch_delete_tensor_object")
            r = shim.new_handle()

            def run():
                rc = conv(hx, hw, ob, st[0], st[1], pd[0], pd[1], dl[0], dl[1], 0,
                          op[0], op[1], groups, r)
                if rc != 0:
                    raise RuntimeError(shim.last_error())
                delete(r.contents)

            for _ in range(20):  # the plan's choice and warm-up
                run()
            ref = torch.nn.functional.conv2d(x, w, b, padding=pad, groups=groups)
            rr = shim.new_handle()
            conv(hx, hw, ob, st[0], st[1], pd[0], pd[1], dl[0], dl[1], 0, op[0],
                 op[1], groups, rr)
            got = shim.take(rr)
            torch.cuda.synchronize()
            err = (got - ref).abs().max().item()
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            t = time.perf_counter()
            for _ in range(calls):
                run()
            host = time.perf_counter() - t
            e1.record()
            torch.cuda.synchronize()
            out["cases"][name] = {"host_us": host / calls * 1e6,
                                  "gpu_us": e0.elapsed_time(e1) * 1e3 / calls,
                                  "max_abs_err": err}
            for h in (hx, hw, hb):
                shim.delete(h)
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("libs", nargs="+")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=3000)
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.libs[0], a.calls)
        return 0
    runs = {lib: [] for lib in a.libs}
    for rnd in range(a.rounds):
        order = a.libs if rnd % 2 == 0 else list(reversed(a.libs))
        for lib in order:
            p = subprocess.run([sys.executable, os.path.abspath(__file__), lib,
                                "--child", "--calls", str(a.calls)],
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                print(f"{lib}: rc={p.returncode}\n{p.stderr[-2000:]}")
                return 1
            runs[lib].append(json.loads(p.stdout.strip().splitlines()[-1]))
    print(f"host us per call (median of {a.rounds} processes x {a.calls} calls), "
          "ctypes' own cost subtracted; GPU us per call of the same loop; max |err| vs eager")
    head = "| case | " + " | ".join(f"{os.path.dirname(lib) or '.'} host / GPU"
                                    for lib in a.libs) + " |"
    print(head)
    print("| --- |" + " --- |" * len(a.libs))
    summary = {}
    for name, *_ in CASES:
        cells = []
        for lib in a.libs:
            host = statistics.median(r["cases"][name]["host_us"] - r["ctypes_us"]
                                     for r in runs[lib])
            gpu = statistics.median(r["cases"][name]["gpu_us"] for r in runs[lib])
            err = max(r["cases"][name]["max_abs_err"] for r in runs[lib])
            summary.setdefault(name, {})[lib] = {"host_us": host, "gpu_us": gpu,
                                                 "max_abs_err": err}
            cells.append(f"{host:.2f} / {gpu:.2f} (err {err:.1e})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    ct = {lib: statistics.median(r["ctypes_us"] for r in runs[lib]) for lib in a.libs}
    print("ctypes call us: " + ", ".join(f"{lib} {v:.2f}" for lib, v in ct.items()))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"summary": summary, "runs": runs}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
