"""aotrun in a process that also uses libtorch (issue 15, isolation): torch
is imported and used on CUDA first, then aotrun (the Python binding, which
loads libaotrun_host.so through ctypes) loads and runs an exported program;
torch and aotrun are used alternately, every aotrun output compared with
eager. Two processes (this script runs itself once per mode):
  plain   torch imported as usual (libtorch RTLD_LOCAL);
  global  libtorch reopened RTLD_GLOBAL right after `import torch` (as
          TORCH_USE_RTLD_GLOBAL=1 or an extension would do), before aotrun:
          its aoti_torch_* come first in the global scope, so the load
          report must show the model's imports re-pointed to aotrun's shim
          (`shim_rebound` > 0), and the outputs must still match.
See docs/loading.md, "Isolation from libtorch".

  python3 testing/gpu/test_torch_coexist.py [--lib .gpu/lib] [--work DIR]

--lib holds libaotrun_host.so, libaotrun_cuda.so and libaotrun_shim.so
(testing/gpu/build_gpu_bundle.sh); LD_LIBRARY_PATH needs --lib and the CUDA
libraries (run_gpu_check.sh sets it; part "coexist"). Needs torch (CUDA).
Prints one line per check and ends with "N passed, N failed"; exits 1 on
any failure.
"""

import argparse
import ctypes
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))            # aotrun
sys.path.insert(0, os.path.join(ROOT, "backend_cuda", "export"))

import torch  # noqa: E402  (first, on purpose)
from torch import nn  # noqa: E402

RESULTS = []  # (name, ok, detail)


def check(name, fn):
    t0 = time.time()
    try:
        detail = fn() or ""
        RESULTS.append((name, True, detail))
        print("PASS %-44s %5.1fs %s" % (name, time.time() - t0, detail),
              flush=True)
    except Exception as e:  # report and keep going
        RESULTS.append((name, False, "%s: %s" % (type(e).__name__, e)))
        print("FAIL %-44s %s: %s" % (name, type(e).__name__, e), flush=True)
        traceback.print_exc(limit=4)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x))) * 2 + 1


def use_torch(tag):
    """Eager CUDA work (a matmul checked on the CPU, a cuBLAS and a
    reduction kernel), so a torch broken by aotrun shows here."""
    a = torch.randn(64, 64, device="cuda")
    b = torch.randn(64, 64, device="cuda")
    c = (a @ b).relu().sum(dim=1)
    torch.cuda.synchronize()
    want = (a.cpu() @ b.cpu()).relu().sum(dim=1)
    torch.testing.assert_close(c.cpu(), want, atol=1e-3, rtol=1e-3)
    return "torch ok (%s)" % tag


def aotrun_run(prog, module, calls=2):
    for _ in range(calls):
        x = torch.randn(5, 16, device="cuda")
        with torch.no_grad():
            want = module(x)
        got = prog.run("forward", x)
        g = torch.from_dlpack(got[0])
        torch.testing.assert_close(g, want, atol=1e-4, rtol=1e-4)


def load_report(prog):
    return json.loads(prog.method().get_option("load_report"))


class DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def global_provider(name="aoti_torch_empty_strided"):
    """The file of the object the global scope resolves `name` to, or None
    (what a library dlopened now would bind its import to)."""
    try:
        fn = getattr(ctypes.CDLL(None), name)
    except AttributeError:
        return None
    libdl = ctypes.CDLL(None)
    info = DlInfo()
    addr = ctypes.cast(fn, ctypes.c_void_p)
    if libdl.dladdr(addr, ctypes.byref(info)) == 0 or not info.dli_fname:
        return "?"
    return os.path.basename(info.dli_fname.decode())


def promote_libtorch():
    """Reopens torch's libraries RTLD_GLOBAL: their aoti_torch_* now come
    first in the global scope for every later dlopen."""
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    names = []
    for name in ("libtorch_cpu.so", "libtorch_cuda.so", "libtorch.so"):
        path = os.path.join(lib, name)
        if os.path.exists(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            names.append(name)
    return names


def summary():
    passed = sum(1 for r in RESULTS if r[1])
    failed = len(RESULTS) - passed
    for name, ok, detail in RESULTS:
        if not ok:
            print("FAILED: %s: %s" % (name, detail[:300]))
    print("%d passed, %d failed" % (passed, failed), flush=True)
    return 0 if failed == 0 else 1


def both_modes(a):
    """Runs each mode in its own process (the global scope cannot be
    undone) and adds up their summaries."""
    import re
    import subprocess
    total = [0, 0]
    for mode in ("plain", "global"):
        print("== mode %s" % mode, flush=True)
        p = subprocess.run([sys.executable, os.path.abspath(__file__),
                            "--lib", a.lib, "--work", a.work, "--mode", mode],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=600)
        sys.stdout.write(p.stdout)
        m = re.findall(r"^(\d+) passed, (\d+) failed$", p.stdout, re.M)
        if m:
            total[0] += int(m[-1][0])
            total[1] += int(m[-1][1])
        else:
            print("FAIL mode %s: no summary line (exit %d)" % (mode,
                                                              p.returncode))
            total[1] += 1
    print("%d passed, %d failed" % tuple(total))
    return 0 if total[1] == 0 else 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", default=os.path.join(ROOT, ".gpu", "lib"))
    ap.add_argument("--work", default="/tmp/aotrun-torch-coexist")
    ap.add_argument("--mode", choices=("plain", "global"),
                    help="one mode in this process (default: both, each in "
                         "a child process)")
    a = ap.parse_args(argv)
    if a.mode is None:
        return both_modes(a)
    os.environ.setdefault("AOTRUN_HOST_LIBRARY",
                          os.path.join(a.lib, "libaotrun_host.so"))
    plugin = os.path.join(a.lib, "libaotrun_cuda.so")
    shim = os.path.join(a.lib, "libaotrun_shim.so")
    print("torch %s (CUDA %s), mode %s" % (torch.__version__,
                                            torch.version.cuda, a.mode),
          flush=True)
    if not torch.cuda.is_available():
        print("SKIP no CUDA device\n0 passed, 1 failed")
        return 1
    if a.mode == "global":
        def promote():
            names = promote_libtorch()
            who = global_provider()
            if who is None or not who.startswith("libtorch"):
                raise AssertionError("after reopening %s RTLD_GLOBAL, "
                                     "aoti_torch_empty_strided resolves to %s"
                                     % (names, who))
            return "%s global; aoti_torch_empty_strided -> %s" % (
                ", ".join(names), who)
        check("libtorch in the global scope first", promote)
    check("torch before aotrun", lambda: use_torch("before"))
    import aotrun  # noqa: E402  (after torch was imported and used)
    from aotrun_export import export_program
    torch.manual_seed(0)
    module = MLP().cuda().eval()
    path = os.path.join(a.work, "mlp_" + a.mode)
    os.makedirs(a.work, exist_ok=True)
    batch = torch.export.Dim("batch", min=1, max=1024)

    def export():
        export_program({"forward": (module, (torch.randn(4, 16,
                                                          device="cuda"),))},
                       path, dynamic_shapes={"forward": {"x": {0: batch}}},
                       shim_exports=[shim] if os.path.exists(shim) else None,
                       log=lambda s: None)
    check("export", export)
    if not os.path.exists(path):
        print("0 passed, 1 failed")
        return 1

    def interleaved():
        with aotrun.Program(path, plugin=plugin) as prog:
            r = load_report(prog)
            if r["shim_imports"] <= 0:
                raise AssertionError("shim_imports %s" % r["shim_imports"])
            if a.mode == "global" and r["shim_rebound"] <= 0:
                raise AssertionError(
                    "libtorch comes first in the global scope but no import "
                    "was re-pointed to the shim: %s" % json.dumps(r))
            aotrun_run(prog, module)
            use_torch("between")
            aotrun_run(prog, module)
            use_torch("between 2")
            return "shim_imports %d shim_rebound %d, global provider %s" % (
                r["shim_imports"], r["shim_rebound"], global_provider())
    check("aotrun, torch, aotrun", interleaved)
    check("torch after aotrun", lambda: use_torch("after"))
    check("aotrun again (second load)", interleaved)

    check("torch after all", lambda: use_torch("end"))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
