"""A graph per shape and dynamic-dim ranges on a GPU, against eager PyTorch
(issue 16). Self-contained: exports a small decoder block (causal attention
over T tokens, T dynamic in [2, 128], and a second input of T + 1 entries)
with aotrun_export, then runs it through aotrun.Program on the CUDA plugin:

  * growing and shrinking sequence lengths in buckets (8, 16, 32, 64, then
    back) with cuda_graph_shapes = 3 (fewer than the buckets: the least
    recently used graph is dropped and captured again later), every call
    compared with eager on fresh inputs; at the end cuda_graph_bytes holds
    3 graphs and the phase is Replay;
  * inputs outside the range (T = 1, T = 129) and a broken relation (w of
    T + 2 entries) refused with graphs on and off, naming input, dim, value
    and range; the cached graphs survive the refusals and the next call
    still matches eager;
  * a benchmark: replay of each bucket with all four cached, next to a
    handle holding that bucket's single graph (numbers, not a timed test).

  python3 testing/gpu/test_graph_shapes.py [--lib .gpu/lib] [--work DIR]

Prints one line per check and ends with "N passed, N failed"; exits 1 on
any failure (run_gpu_check.sh part "shapes").
"""

import argparse
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))            # aotrun
sys.path.insert(0, os.path.join(ROOT, "backend_cuda", "export"))

import torch  # noqa: E402
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import aotrun  # noqa: E402

RESULTS = []
D, HEADS, T_MIN, T_MAX = 64, 4, 2, 128
BUCKETS = (8, 16, 32, 64, 32, 16, 8, 64, 16)


def check(name, fn):
    t0 = time.time()
    try:
        detail = fn() or ""
        RESULTS.append((name, True))
        print("PASS %-56s %5.1fs %s" % (name, time.time() - t0, detail),
              flush=True)
    except Exception as e:  # report and keep going
        RESULTS.append((name, False))
        print("FAIL %-56s %s: %s" % (name, type(e).__name__, e), flush=True)
        traceback.print_exc(limit=4)


class DecoderBlock(nn.Module):
    """One pre-norm decoder block; w scales each token by w[t+1] - w[t]
    (an input of T + 1 entries: a relation between two inputs' dims)."""

    def __init__(self):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.o = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.ff = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(),
                                nn.Linear(4 * D, D))

    def forward(self, x, w):
        b, t, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(D, dim=-1)
        heads = lambda z: z.view(b, t, HEADS, D // HEADS).transpose(1, 2)
        a = F.scaled_dot_product_attention(heads(q), heads(k), heads(v),
                                           is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, D))
        x = x + self.ff(self.norm2(x))
        return x * (w[1:] - w[:-1]).unsqueeze(-1)


def sample(t):
    return (torch.randn(1, t, D, device="cuda"),
            torch.randn(t + 1, device="cuda"))


def eager(module, x, w):
    with torch.no_grad():
        return module(x, w)


def compare(got, want, what):
    g = torch.from_dlpack(got)
    if tuple(g.shape) != tuple(want.shape):
        raise AssertionError("%s: shape %s, eager %s" % (
            what, list(g.shape), list(want.shape)))
    torch.testing.assert_close(g, want, atol=2e-4, rtol=2e-4,
                               msg=lambda m: "%s: %s" % (what, m))


def graphs_held(m):
    report = m.get_option("cuda_graph_bytes")   # "N graphs, B bytes: ..."
    return int(report.split()[0]), report


def open_with_graphs(path, plugin, k):
    prog = aotrun.Program(path, plugin=plugin)
    m = prog.method()
    m.set_option("cuda_graph_shapes", k)
    m.set_option("enable_cuda_graph_for_method", "forward")
    return prog, m


def export(work, shim):
    from aotrun_export import export_program
    torch.manual_seed(0)
    module = DecoderBlock().cuda().eval()
    t = torch.export.Dim("t", min=T_MIN, max=T_MAX)
    out = os.path.join(work, "decoder_buckets")
    export_program({"forward": (module, sample(16))}, out,
                   dynamic_shapes={"forward": {"x": {1: t}, "w": {0: t + 1}}},
                   shim_exports=[shim] if shim else None, log=lambda s: None)
    return module, out


def bucket_calls(path, plugin, module):
    with aotrun.Program(path, plugin=plugin) as prog:
        x = prog.method().inputs[0]
        if not isinstance(x.shape[1], str):
            raise AssertionError("dim 1 of x is static: %s" % (x.shape,))
    prog, m = open_with_graphs(path, plugin, 3)
    with prog:
        # Each bucket's warm-up and capture, then replays, over two rounds.
        for rnd in range(2):
            for t in BUCKETS:
                for k in range(4):
                    x, w = sample(t)
                    got, = prog.run("forward", x, w)
                    compare(got, eager(module, x, w),
                            "round %d T=%d call %d" % (rnd, t, k))
        held, report = graphs_held(m)
        phase = m.get_option("cuda_graph_phase")
        if held != 3 or phase != "Replay":
            raise AssertionError("%d graphs held, phase %s (expected 3, "
                                 "Replay): %s" % (held, phase, report))
        return report


def expect_refused(prog, t_x, t_w, words):
    x = torch.randn(1, t_x, D, device="cuda")
    w = torch.randn(t_w, device="cuda")
    try:
        prog.run("forward", x, w)
    except aotrun.InvalidArgumentError as e:
        missing = [s for s in words if s not in str(e)]
        if missing:
            raise AssertionError("message lacks %s: %s" % (missing, e))
        return str(e)
    raise AssertionError("T=%d, w of %d accepted" % (t_x, t_w))


REFUSALS = (
    (T_MAX + 1, T_MAX + 2, ["input 0 (x)", "size 129", "dim 1",
                            "[2, 128]"]),
    (1, 2, ["input 0 (x)", "size 1", "dim 1", "[2, 128]"]),
    (16, 18, ["input 1 (w)", "size 18", "dim 0", "expected 17"]),
)


def refusals(path, plugin, module, graphs):
    if graphs:
        prog, m = open_with_graphs(path, plugin, 3)
    else:
        prog = aotrun.Program(path, plugin=plugin)
        m = prog.method()
    with prog:
        for t in (16, 32):                      # capture two graphs
            for _ in range(5):
                x, w = sample(t)
                prog.run("forward", x, w)
        before = graphs_held(m)[0] if graphs else 0
        said = [expect_refused(prog, *r) for r in REFUSALS]
        x, w = sample(16)
        got, = prog.run("forward", x, w)
        compare(got, eager(module, x, w), "after the refusals")
        if graphs:
            held = graphs_held(m)[0]
            phase = m.get_option("cuda_graph_phase")
            if held != before or phase != "Replay":
                raise AssertionError("after the refusals: %d graphs (was "
                                     "%d), phase %s" % (held, before, phase))
        return said[0]


def bench(path, plugin):
    lines = []
    prog, m = open_with_graphs(path, plugin, 4)
    with prog:
        inputs = {t: sample(t) for t in (8, 16, 32, 64)}
        for t, (x, w) in inputs.items():        # capture all four
            for _ in range(5):
                prog.run("forward", x, w)
        many = {t: prog.bench("forward", *inputs[t], iterations=500,
                              warmup=20).median_us for t in inputs}
        held = graphs_held(m)[0]
    for t, (x, w) in inputs.items():
        prog, m = open_with_graphs(path, plugin, 0)
        with prog:
            one = prog.bench("forward", x, w, iterations=500,
                             warmup=20).median_us
        lines.append("T=%d %.1f us (4 cached) vs %.1f us (one graph)"
                     % (t, many[t], one))
    if held != 4:
        raise AssertionError("%d graphs held, expected 4" % held)
    return "; ".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", default=os.path.join(ROOT, ".gpu", "lib"))
    ap.add_argument("--work", default="/tmp/aotrun-graph-shapes")
    a = ap.parse_args()
    os.environ.setdefault("AOTRUN_HOST_LIBRARY",
                          os.path.join(a.lib, "libaotrun_host.so"))
    if not torch.cuda.is_available():
        print("no CUDA device\n0 passed, 1 failed")
        return 1
    os.makedirs(a.work, exist_ok=True)
    plugin = os.path.join(a.lib, "libaotrun_cuda.so")
    shim = os.path.join(a.lib, "libaotrun_shim.so")
    got = {}

    def do_export():
        got["module"], got["path"] = export(a.work, shim)
    check("export decoder block (T in [2, 128], w of T + 1)", do_export)
    if "path" in got:
        p, mod = got["path"], got["module"]
        check("buckets 8..64 and back, 3 graphs, eager every call",
              lambda: bucket_calls(p, plugin, mod))
        check("range and relation refused, graphs on",
              lambda: refusals(p, plugin, mod, True))
        check("range and relation refused, graphs off",
              lambda: refusals(p, plugin, mod, False))
        check("bench: replay per bucket, 4 cached vs one graph",
              lambda: bench(p, plugin))
    ok = sum(1 for _, g in RESULTS if g)
    print("%d passed, %d failed" % (ok, len(RESULTS) - ok))
    return 0 if ok == len(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
