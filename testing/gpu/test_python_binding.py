"""The Python binding (python/, `import aotrun`) on a GPU, against eager
PyTorch. Self-contained: exports its own small programs with aotrun_export
(backend_cuda/export), then runs them through aotrun.Program on the CUDA
plugin with torch tensors on the device and in host memory, with and without
CUDA graphs, and compares every output with eager.

  python3 testing/gpu/test_python_binding.py [--lib .gpu/lib] [--work DIR]
        [--suite SUITE_DIR] [--only NAME,...]

--lib holds libaotrun_host.so, libaotrun_cuda.so and libaotrun_shim.so
(testing/gpu/build_gpu_bundle.sh); LD_LIBRARY_PATH needs --lib and the CUDA
libraries (run_gpu_check.sh sets it; part "python"). --suite additionally
runs call 0 of forward of every case that export_suite.py exported there.
Needs torch (2.11, CUDA) and NumPy. Prints one line per check and ends with
"N passed, N failed"; exits 1 on any failure.
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

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import aotrun  # noqa: E402

RESULTS = []  # (name, ok, detail)


def check(name, fn):
    t0 = time.time()
    try:
        detail = fn() or ""
        RESULTS.append((name, True, detail))
        print("PASS %-52s %5.1fs %s" % (name, time.time() - t0, detail),
              flush=True)
    except Exception as e:  # report and keep going
        RESULTS.append((name, False, "%s: %s" % (type(e).__name__, e)))
        print("FAIL %-52s %s: %s" % (name, type(e).__name__, e), flush=True)
        traceback.print_exc(limit=4)


TOL = {torch.float32: (1e-4, 1e-4), torch.float64: (1e-10, 1e-10),
       torch.float16: (1e-2, 1e-2), torch.bfloat16: (3e-2, 3e-2)}


def compare(got, want, what):
    """got: aotrun.Tensor; want: eager tensor. Raises on a mismatch."""
    g = torch.from_dlpack(got)
    if g.dtype != want.dtype:
        raise AssertionError("%s: dtype %s, eager %s" % (what, g.dtype,
                                                         want.dtype))
    if tuple(g.shape) != tuple(want.shape):
        raise AssertionError("%s: shape %s, eager %s" % (
            what, list(g.shape), list(want.shape)))
    w = want.to(g.device)
    if g.dtype.is_floating_point:
        atol, rtol = TOL.get(g.dtype, (1e-4, 1e-4))
        torch.testing.assert_close(g, w, atol=atol, rtol=rtol,
                                   msg=lambda m: "%s: %s" % (what, m))
    elif not torch.equal(g, w):
        raise AssertionError("%s: values differ from eager" % what)


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


# ---- models: every dtype the example and suite programs use -----------------

class MLP(nn.Module):            # float32, dynamic batch
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


class Float64(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8, dtype=torch.float64))

    def forward(self, x):
        return torch.tanh(x @ self.w) + 1.0


class Half(nn.Module):           # float16 in and out
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(16, 16)

    def forward(self, x):
        return torch.relu(self.l(x)) * 0.5


class BF16(nn.Module):           # bfloat16 in and out (and a float32 out)
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(32, 16)

    def forward(self, x):
        y = torch.relu(self.l(x))
        return y, y.float().sum(-1)


class Mixed(nn.Module):          # int64 input; bool, int64, float32 outputs
    def forward(self, x, idx):
        return x.index_select(0, idx) * 2.0, x > 0, x.argmax(dim=1)


class SmallInts(nn.Module):      # int8 / int16 / int32 / uint8 in and out
    def forward(self, a, b, c, d):
        return a * 2, b + 1, c * 3, d + 1, a.to(torch.int32) + c


def _small_ints(dev):
    g = lambda lo, hi, dt: torch.randint(lo, hi, (3, 5), device=dev).to(dt)
    return (g(-20, 20, torch.int8), g(-300, 300, torch.int16),
            g(-5000, 5000, torch.int32), g(0, 100, torch.uint8))


class MaskIndex(nn.Module):      # a data-dependent output size
    def forward(self, x):
        return x[x > 0] * 2


class EncodeDecode(nn.Module):   # two methods
    def __init__(self):
        super().__init__()
        self.enc, self.dec = nn.Linear(8, 16), nn.Linear(16, 8)

    def forward(self, x):
        return self.enc(x)

    def decode(self, h):
        return self.dec(h)


def _seed():
    torch.manual_seed(0)


def build_cases(dev):
    _seed()
    cases = {}
    batch = torch.export.Dim("batch", min=1, max=1024)
    m = MLP().to(dev)
    cases["mlp"] = (m, {"forward": (m, (torch.randn(4, 16, device=dev),))},
                    {"forward": {"x": {0: batch}}},
                    lambda: (torch.randn(5, 16, device=dev),))
    m = Float64().to(dev)
    cases["float64"] = (m, {"forward": (m, (torch.randn(
        3, 8, dtype=torch.float64, device=dev),))}, None,
        lambda: (torch.randn(3, 8, dtype=torch.float64, device=dev),))
    m = Half().to(dev).half()
    cases["float16"] = (m, {"forward": (m, (torch.randn(
        4, 16, device=dev).half(),))}, None,
        lambda: (torch.randn(4, 16, device=dev).half(),))
    m = BF16().to(dev).to(torch.bfloat16)
    cases["bfloat16"] = (m, {"forward": (m, (torch.randn(
        4, 32, device=dev).bfloat16(),))}, None,
        lambda: (torch.randn(4, 32, device=dev).bfloat16(),))
    m = Mixed().to(dev)
    cases["mixed_int_bool"] = (m, {"forward": (m, (
        torch.randn(6, 5, device=dev),
        torch.tensor([4, 0, 2], device=dev)))}, None,
        lambda: (torch.randn(6, 5, device=dev),
                 torch.tensor([5, 1, 1], device=dev)))
    m = SmallInts().to(dev)
    cases["small_ints"] = (m, {"forward": (m, _small_ints(dev))}, None,
                           lambda: _small_ints(dev))
    m = MaskIndex().to(dev)
    cases["mask_index"] = (m, {"forward": (m, (torch.randn(64, device=dev),))},
                           None, lambda: (torch.randn(64, device=dev),))
    m = EncodeDecode().to(dev)
    cases["two_methods"] = (m, {
        "forward": (m.forward, (torch.randn(3, 8, device=dev),)),
        "decode": (m.decode, (torch.randn(3, 16, device=dev),))}, None,
        lambda: (torch.randn(3, 8, device=dev),))
    return cases


def export_all(cases, work, shim, log):
    from aotrun_export import export_program
    done = {}
    for name, (module, methods, dyn, _) in cases.items():
        out = os.path.join(work, name)

        def run(out=out, methods=methods, dyn=dyn):
            export_program(methods, out, dynamic_shapes=dyn,
                           shim_exports=[shim] if shim else None, log=log)
            done[name] = out
        check("export %s" % name, run)
    return done


# ---- checks -------------------------------------------------------------------

def run_and_compare(prog, module, method, inputs, what, calls=1, out=None,
                    device=None):
    fn = getattr(module, method) if method != "forward" else module
    for k in range(calls):
        with torch.no_grad():
            want = flat(fn(*[x.to(next(iter_devices(module))) for x in inputs]))
        got = prog.run(method, *inputs, out=out, device=device)
        if len(got) != len(want):
            raise AssertionError("%s: %d outputs, eager %d" % (
                what, len(got), len(want)))
        for j, (g, w) in enumerate(zip(got, want)):
            compare(g, w, "%s call %d out %d" % (what, k, j))
    return got


def iter_devices(module):
    for p in list(module.parameters()) + list(module.buffers()):
        yield p.device
    yield torch.device("cuda")


def case_checks(name, path, module, methods, sample, plugin):
    inputs = sample()
    dev_names = [n for n in methods]

    def device_io():
        with aotrun.Program(path, plugin=plugin) as prog:
            assert prog.backend == "cuda"
            assert prog.method_names == dev_names, prog.method_names
            got = run_and_compare(prog, module, "forward", inputs,
                                  "device io", calls=2)
            for g in got:
                assert g.device == "cuda:0", g.device
                # (array None: allocated by the backend, ABI 1.1)
                assert g.array is None or g.array.is_cuda
            info = prog.method().inputs
            return "inputs %s" % ", ".join(
                "%s %s %s" % (i.name, i.dtype, list(i.shape)) for i in info)

    def host_io():
        host = [x.cpu() for x in inputs]
        with aotrun.Program(path, plugin=plugin) as prog:
            got = run_and_compare(prog, module, "forward", host, "host io")
            for g in got:
                assert g.device == "cpu", g.device

    def device_inputs_host_outputs():
        with aotrun.Program(path, plugin=plugin) as prog:
            run_and_compare(prog, module, "forward", inputs, "to host",
                            device="cpu")

    def graphs():
        with aotrun.Program(path, plugin=plugin) as prog:
            m = prog.method()
            m.set_option("enable_cuda_graph_for_method", "forward")
            run_and_compare(prog, module, "forward", inputs, "graph", calls=6)
            phase = m.get_option("cuda_graph_phase")
            if name == "mlp" and phase != "Replay":
                raise AssertionError("phase %s after 6 calls" % phase)
            return "phase %s" % phase

    def graph_fresh_tensors(nodes):
        """Graph replay over changing caller tensors, with option
        cuda_graph_input_nodes on (the default: the graph's input copies are
        nodes pointed at each call's tensors) or off (copies on the stream).
        Fresh device tensors every call (new addresses), one changed in
        place, host tensors in between (nodes off for that call, stream
        copies), each compared with eager."""
        with aotrun.Program(path, plugin=plugin) as prog:
            m = prog.method()
            if m.get_option("cuda_graph_input_nodes") is not True:
                raise AssertionError("cuda_graph_input_nodes is not on by "
                                     "default")
            m.set_option("cuda_graph_input_nodes", nodes)
            m.set_option("enable_cuda_graph_for_method", "forward")
            run_and_compare(prog, module, "forward", inputs, "capture", calls=4)
            if name == "mlp" and m.get_option("cuda_graph_phase") != "Replay":
                raise AssertionError("phase %s after 4 calls"
                                     % m.get_option("cuda_graph_phase"))
            held = []  # kept alive: the caching allocator would hand
            # a freed block's address to the next sample
            for k in range(6):
                fresh = sample()
                if k == 3:
                    fresh = [x.cpu() for x in fresh]
                held.append(fresh)
                run_and_compare(prog, module, "forward", fresh,
                                "input nodes call %d" % k)
            # and back to an earlier call's tensors
            run_and_compare(prog, module, "forward", held[1], "earlier")
            kept = sample()
            run_and_compare(prog, module, "forward", kept, "kept")
            for x in kept:
                if x.dtype.is_floating_point:
                    x.mul_(-1.5)
            run_and_compare(prog, module, "forward", kept, "changed in place")
            return "phase %s" % m.get_option("cuda_graph_phase")

    check("%s: device tensors" % name, device_io)
    check("%s: host tensors" % name, host_io)
    check("%s: device in, host out" % name, device_inputs_host_outputs)
    check("%s: CUDA graphs" % name, graphs)
    check("%s: CUDA graphs, input nodes" % name,
          lambda: graph_fresh_tensors(True))
    check("%s: CUDA graphs, input copies on the stream" % name,
          lambda: graph_fresh_tensors(False))


def extra_checks(paths, cases, plugin):
    if "mlp" in paths:
        path, (module, _, _, _) = paths["mlp"], cases["mlp"]

        def dynamic_batch():
            with aotrun.Program(path, plugin=plugin) as prog:
                for n in (1, 7, 64, 1024):
                    run_and_compare(prog, module, "forward",
                                    (torch.randn(n, 16, device="cuda"),),
                                    "batch %d" % n)
                x = prog.method().inputs[0]
                assert isinstance(x.shape[0], str), x.shape

        def out_tensors():
            with aotrun.Program(path, plugin=plugin) as prog:
                x = torch.randn(6, 16, device="cuda")
                y = torch.full((6, 8), float("nan"), device="cuda")
                got, = prog.run("forward", x, out=[y])
                assert got.array is y
                with torch.no_grad():
                    torch.testing.assert_close(y, module(x), atol=1e-4,
                                               rtol=1e-4)
                ptr = y.data_ptr()
                got, = prog.run("forward", x, out=[y])
                assert torch.from_dlpack(got).data_ptr() == ptr

        def graph_output_nodes():
            """Option cuda_graph_output_nodes (on by default): the graph copies its
            output into the caller's out= tensor with a node of its own.
            Fresh out= tensors and inputs every call, one reused, a host
            out= in between (nodes off for that call), then device again;
            each compared with eager, and an earlier out= tensor checked
            untouched by later calls."""
            with aotrun.Program(path, plugin=plugin) as prog:
                m = prog.method()
                if m.get_option("cuda_graph_output_nodes") is not True:
                    raise AssertionError("cuda_graph_output_nodes is off by "
                                         "default")
                m.set_option("enable_cuda_graph_for_method", "forward")
                outs = []
                for k in range(10):
                    x = torch.randn(6, 16, device="cuda")
                    host = k == 6
                    y = torch.full((6, 8), float("nan"),
                                   device="cpu" if host else "cuda")
                    if k == 8:
                        y = outs[5]  # an earlier call's out= again
                    prog.run("forward", x, out=[y])
                    with torch.no_grad():
                        torch.testing.assert_close(y.cuda(), module(x),
                                                   atol=1e-4, rtol=1e-4)
                    outs.append(y)
                    if k == 4:
                        kept, kept_val = y, y.clone()
                torch.testing.assert_close(kept, kept_val)  # not written again
                phase = m.get_option("cuda_graph_phase")
                if phase != "Replay":
                    raise AssertionError("phase %s after 10 calls" % phase)
                return "phase %s" % phase

        def errors():
            with aotrun.Program(path, plugin=plugin) as prog:
                try:
                    prog.run("forward", torch.randn(2, 15, device="cuda"))
                except aotrun.InvalidArgumentError as e:
                    assert "input 0" in str(e) and "15" in str(e), str(e)
                else:
                    raise AssertionError("no error for a wrong dim")
                try:
                    prog.run("forward", torch.randn(2, 16, device="cuda",
                                                    dtype=torch.float64))
                except aotrun.InvalidArgumentError as e:
                    assert "float64" in str(e), str(e)
                else:
                    raise AssertionError("no error for a wrong dtype")
                try:
                    prog.method().set_option("no_such_option", 1)
                except aotrun.NotFoundError:
                    pass
                else:
                    raise AssertionError("unknown option accepted")
            try:
                prog.run("forward", torch.randn(2, 16, device="cuda"))
            except aotrun.ClosedError:
                return "messages ok"
            raise AssertionError("closed program ran")

        def backend_wide_graphs_and_bench():
            opts = {"enable_cuda_graph_for_method": "forward"}
            try:
                with aotrun.Program(path, plugin=plugin, options=opts) as prog:
                    assert prog.get_option(
                        "enable_cuda_graph_for_method") == "forward"
                    x = torch.randn(32, 16, device="cuda")
                    g = prog.bench("forward", x, iterations=200, warmup=10)
                    phase = prog.method().get_option("cuda_graph_phase")
                    run_and_compare(prog, module, "forward", (x,), "after")
            finally:
                with aotrun.Program(path, plugin=plugin, methods=[]) as p:
                    p.set_option("enable_cuda_graph_for_method", "")
            with aotrun.Program(path, plugin=plugin) as prog:
                n = prog.bench("forward", x, iterations=200, warmup=10)
            if phase != "Replay":
                raise AssertionError("phase %s" % phase)
            return "median %.1f us graph, %.1f us no graph" % (
                g.median_us, n.median_us)

        def other_stream():
            with aotrun.Program(path, plugin=plugin) as prog:
                s = torch.cuda.Stream()
                with torch.cuda.stream(s):
                    a = torch.randn(2048, 2048, device="cuda")
                    for _ in range(20):        # keep the stream busy
                        b = a @ a              # (values not fed back: the
                    # old a = a @ a / a.norm() shrank to 1e-22 and could
                    # reach 0/0; an all-NaN mismatch on 2026-12-07, H100)
                    x = torch.randn(64, 16, device="cuda") + b[:64, :16] * 0
                    got, = prog.run("forward", x)
                torch.cuda.synchronize()
                if not bool(torch.isfinite(x).all()):
                    raise AssertionError("the test's input is not finite")
                with torch.no_grad():
                    torch.testing.assert_close(torch.from_dlpack(got),
                                               module(x), atol=1e-4,
                                               rtol=1e-4)

        def no_leaks():
            x = torch.randn(4, 16, device="cuda")
            fds = len(os.listdir("/proc/self/fd"))
            for _ in range(20):
                p = aotrun.Program(path, plugin=plugin)
                p.run("forward", x)
                p.close()
                p.close()
            import gc
            gc.collect()
            now = len(os.listdir("/proc/self/fd"))
            if now > fds + 2:
                raise AssertionError("fds %d -> %d" % (fds, now))
            if aotrun.live_exports():
                raise AssertionError("%d exports alive" % aotrun.live_exports())

        def caller_stream():
            """ABI 1.1: the call runs on the caller's torch stream (as the
            object and as its int handle), ordered after the work queued
            there, with no device-wide sync by the binding."""
            with aotrun.Program(path, plugin=plugin) as prog:
                s = torch.cuda.Stream()
                for handle in (s, s.cuda_stream):
                    with torch.cuda.stream(s):
                        a = torch.randn(2048, 2048, device="cuda")
                        for _ in range(20):        # keep the stream busy
                            a = torch.tanh(a @ a)  # stays finite
                        x = a[:64, :16].contiguous()
                        try:
                            got, = prog.run("forward", x, stream=handle)
                        except aotrun.NotSupportedError as e:
                            return "SKIPPED: backend takes no stream: %s" % e
                        y = torch.from_dlpack(got) * 1  # queued on s too
                    s.synchronize()
                    with torch.no_grad():
                        torch.testing.assert_close(y, module(x), atol=1e-4,
                                                   rtol=1e-4)
            return "on stream 0x%x" % s.cuda_stream

        check("mlp: dynamic batch 1..1024", dynamic_batch)
        check("mlp: run on the caller's torch stream", caller_stream)
        check("mlp: out= device tensors (no copy)", out_tensors)
        check("mlp: CUDA graphs, output nodes into out= tensors",
              graph_output_nodes)
        check("mlp: errors carry the C message", errors)
        check("mlp: backend-wide graphs + bench", backend_wide_graphs_and_bench)
        check("mlp: input on another torch stream", other_stream)
        check("mlp: open/run/close x20 leaks nothing", no_leaks)
        import importlib.util
        if importlib.util.find_spec("cupy") is None:
            print("SKIP mlp: CuPy tensors (CuPy is not installed)")
        else:
            def cupy_io():
                import cupy as cp
                with aotrun.Program(path, plugin=plugin) as prog:
                    x = cp.random.standard_normal((3, 16), dtype=cp.float32)
                    got, = prog.run("forward", x)
                    y = cp.from_dlpack(got)
                    with torch.no_grad():
                        want = module(torch.from_dlpack(x))
                    torch.testing.assert_close(torch.from_dlpack(y), want,
                                               atol=1e-4, rtol=1e-4)
            check("mlp: CuPy tensors", cupy_io)
    if "mask_index" in paths:
        path, (module, _, _, _) = paths["mask_index"], cases["mask_index"]

        def backend_allocated():
            """x[x > 0] * 2: a data-dependent size. A backend with
            execute_ex (ABI 1.1) allocates it: no capacity guess, the exact
            size, a DLPack tensor whose deleter frees device memory."""
            import gc
            with aotrun.Program(path, plugin=plugin) as prog:
                x = torch.randn(64, device="cuda")   # the case's shape
                got, = prog.run("forward", x)
                with torch.no_grad():
                    want = module(x)
                compare(got, want, "mask_index")
                if got.array is not None:
                    return "SKIPPED: the backend has no execute_ex " \
                           "(capacity path, %d of 64)" % got.shape[0]
                assert got.shape == tuple(want.shape), got.shape
                assert got.device == "cuda:0", got.device
                base = aotrun._execute.live_managed()
                for _ in range(50):
                    t = torch.from_dlpack(prog.run("forward", x)[0])
                    del t
                gc.collect()
                assert aotrun._execute.live_managed() == base
                host, = prog.run("forward", x.cpu())   # outputs on the host
                assert host.device == "cpu", host.device
                torch.testing.assert_close(torch.from_dlpack(host),
                                           want.cpu())
            return "exact size %d, deleters ran" % got.shape[0]
        check("mask_index: backend-allocated output", backend_allocated)
    if "two_methods" in paths:
        path, (module, _, _, _) = paths["two_methods"], cases["two_methods"]

        def decode():
            with aotrun.Program(path, plugin=plugin) as prog:
                assert sorted(prog.method_names) == ["decode", "forward"]
                run_and_compare(prog, module, "decode",
                                (torch.randn(3, 16, device="cuda"),),
                                "decode")
        check("two_methods: decode", decode)
    if "bfloat16" in paths:
        path, (module, _, _, _) = paths["bfloat16"], cases["bfloat16"]

        def bf16_host_outputs():
            with aotrun.Program(path, plugin=plugin) as prog:
                x = torch.randn(4, 32).bfloat16()
                y, s = prog.run("forward", x)
                assert y.dtype == "bfloat16" and y.device == "cpu"
                t = torch.from_dlpack(y)
                assert t.dtype == torch.bfloat16
                with torch.no_grad():
                    want = module(x.cuda())[0].cpu()
                torch.testing.assert_close(t, want, atol=3e-2, rtol=3e-2)
        check("bfloat16: host bfloat16 outputs via torch", bf16_host_outputs)


def suite_checks(suite, plugin):
    import json
    summary = json.load(open(os.path.join(suite, "summary.json")))
    for name, r in sorted(summary["cases"].items()):
        if r.get("status") != "ok" or r["case"].get("stateful"):
            continue
        m = r["case"]["methods"].get("forward")
        if not m:
            continue
        tol = r["case"].get("tolerance", {"atol": 1e-4, "rtol": 1e-4})

        def run(name=name, m=m, tol=tol):
            ins = [torch.from_numpy(np.load(os.path.join(suite, name, p)))
                   .cuda() for p in m["inputs"]]
            with aotrun.Program(os.path.join(suite, name),
                                plugin=plugin) as prog:
                got = prog.run("forward", *ins)
            for j, rel in enumerate(m["expected"][0]):
                want = torch.from_numpy(np.load(os.path.join(suite, name,
                                                             rel)))
                g = torch.from_dlpack(got[j]).cpu()
                if g.dtype.is_floating_point:
                    torch.testing.assert_close(g, want.to(g.dtype),
                                               atol=tol["atol"],
                                               rtol=tol["rtol"])
                elif not torch.equal(g, want):
                    raise AssertionError("out %d differs" % j)
            return "dtypes in %s" % sorted({str(i.dtype) for i in ins})
        check("suite %s: forward on device" % name, run)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, ".gpu", "lib"))
    ap.add_argument("--work", default="/tmp/aotrun-python-gpu")
    ap.add_argument("--suite", help="export_suite.py's OUT_DIR (optional)")
    ap.add_argument("--only", help="comma-separated case names")
    a = ap.parse_args(argv)
    os.environ.setdefault("AOTRUN_HOST_LIBRARY",
                          os.path.join(a.lib, "libaotrun_host.so"))
    plugin = os.path.join(a.lib, "libaotrun_cuda.so")
    shim = os.path.join(a.lib, "libaotrun_shim.so")
    print("torch %s (CUDA %s), numpy %s, aotrun %s, host library %s" % (
        torch.__version__, torch.version.cuda, np.__version__,
        aotrun.__version__, aotrun.host_library()), flush=True)
    if not torch.cuda.is_available():
        print("no CUDA device\n0 passed, 1 failed")
        return 1
    os.makedirs(a.work, exist_ok=True)
    cases = build_cases("cuda")
    if a.only:
        keep = set(a.only.split(","))
        cases = {k: v for k, v in cases.items() if k in keep}
    paths = export_all(cases, a.work, shim if os.path.exists(shim) else None,
                       log=lambda s: None)
    for name, path in paths.items():
        module, methods, _, sample = cases[name]
        case_checks(name, path, module, methods, sample, plugin)
    extra_checks(paths, cases, plugin)
    if a.suite:
        suite_checks(a.suite, plugin)
    passed = sum(1 for r in RESULTS if r[1])
    failed = len(RESULTS) - passed
    for name, ok, detail in RESULTS:
        if not ok:
            print("FAILED: %s: %s" % (name, detail[:300]))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
