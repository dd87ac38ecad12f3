"""Per-call cost of the Python binding (Method.run) against the backend's
own time (Method.bench: the execute alone, inputs imported and outputs
allocated once), on the example program and the CPU reference backend by
default. The difference is what the binding adds to each call: importing
the inputs through DLPack, planning and allocating the outputs, wrapping
the results.

  python3 testing/python/bench_binding.py [--program DIR --plugin LIB]
      [--calls N] [--batch B] [--rounds R] [--torch]

--torch (on a GPU machine, with the CUDA backend): the inputs are torch
CUDA tensors, and the rows add what torch's side of a call costs: the
binding's wait on torch's current stream (stream=None), a call on torch's
stream instead (stream=, then that stream's synchronize), the DLPack
export of one input, and the stream's synchronize alone.

(testing/python/run_pytest.sh builds the default program and plugin, and
installs the package into .venv-python; with PYTHONPATH=python the
checkout's copy is used instead.)
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


def bazel_bin():
    out = subprocess.run(["bazel", "info", "-c", "fastbuild", "bazel-bin"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def per_call_us(fn, calls):
    t = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t) / calls * 1e6


def profile_run(fn, calls, top=20):
    """cProfile of `calls` calls of fn: the top functions by own time."""
    import cProfile
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    print("cProfile of %d run() calls (times include the profiler's own "
          "cost), top %d by own time:" % (calls, top))
    pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(top)


def torch_case(x, outs, m):
    """x and outs as torch CUDA tensors, and the torch-side rows."""
    import torch
    x = torch.from_numpy(x).cuda()
    outs = [torch.from_numpy(o).cuda() for o in outs]
    s = torch.cuda.current_stream()

    def on_stream():
        m.run(x, stream=s)
        s.synchronize()
    torch.cuda.synchronize()
    return x, outs, {
        "run(stream=torch's) + sync": on_stream,
        "x.__dlpack__() alone": lambda: x.__dlpack__(),
        "stream synchronize alone": s.synchronize,
        "torch.empty of the output": lambda: torch.empty(
            outs[0].shape, dtype=outs[0].dtype, device="cuda"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program")
    ap.add_argument("--plugin")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--torch", action="store_true",
                    help="torch CUDA tensors in and out (GPU machine)")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="also cProfile N run() calls: the top functions "
                         "by own time (where the binding's time goes)")
    a = ap.parse_args()
    import numpy as np

    import aotrun

    if a.program is None or a.plugin is None:
        b = bazel_bin()
        a.program = a.program or os.path.join(b, "testing", "example_program")
        a.plugin = a.plugin or os.path.join(b, "testing", "plugins",
                                            "libaotrun_cpu_ref.so")
    with aotrun.Program(a.program, plugin=a.plugin) as p:
        m = p.method()
        shape = [a.batch if not isinstance(s, int) else s
                 for s in m.inputs[0].shape]
        x = np.random.default_rng(0).standard_normal(shape).astype(
            m.inputs[0].dtype)
        outs = [np.empty([a.batch if not isinstance(s, int) else s
                          for s in o.shape], o.dtype) for o in m.outputs]
        extra = {}
        if a.torch:
            x, outs, extra = torch_case(x, outs, m)
        for _ in range(200):
            m.run(x)
        rows = {"run()": [], "run(out=...)": [], "bench (execute alone)": []}
        rows.update({k: [] for k in extra})
        for _ in range(a.rounds):
            rows["run()"].append(per_call_us(lambda: m.run(x), a.calls))
            rows["run(out=...)"].append(
                per_call_us(lambda: m.run(x, out=outs), a.calls))
            rows["bench (execute alone)"].append(
                m.bench(x, iterations=a.calls, warmup=100).median_us)
            for k, fn in extra.items():
                rows[k].append(per_call_us(fn, a.calls))
        if a.profile:
            profile_run(lambda: m.run(x), a.profile)
    print("aotrun at %s, %s on %s, input %s; median of %d rounds of %d calls"
          % (os.path.dirname(aotrun.__file__), os.path.basename(a.plugin),
             os.path.basename(a.program), shape, a.rounds, a.calls))
    for name, v in rows.items():
        print("%-24s %8.2f us per call" % (name, statistics.median(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
