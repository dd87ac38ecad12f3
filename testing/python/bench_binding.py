"""Per-call cost of the Python binding (Method.run) against the backend's
own time (Method.bench: the execute alone, inputs imported and outputs
allocated once), on the example program and the CPU reference backend by
default. The difference is what the binding adds to each call: importing
the inputs through DLPack, planning and allocating the outputs, wrapping
the results.

  python3 testing/python/bench_binding.py [--program DIR --plugin LIB]
      [--calls N] [--batch B] [--rounds R]

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--program")
    ap.add_argument("--plugin")
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
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
        for _ in range(200):
            m.run(x)
        rows = {"run()": [], "run(out=...)": [], "bench (execute alone)": []}
        for _ in range(a.rounds):
            rows["run()"].append(per_call_us(lambda: m.run(x), a.calls))
            rows["run(out=...)"].append(
                per_call_us(lambda: m.run(x, out=outs), a.calls))
            rows["bench (execute alone)"].append(
                m.bench(x, iterations=a.calls, warmup=100).median_us)
    print("aotrun at %s, %s on %s, input %s; median of %d rounds of %d calls"
          % (os.path.dirname(aotrun.__file__), os.path.basename(a.plugin),
             os.path.basename(a.program), shape, a.rounds, a.calls))
    for name, v in rows.items():
        print("%-24s %8.2f us per call" % (name, statistics.median(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
