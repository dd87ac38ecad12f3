"""GPU jobs for the exporter pass tests, one AOTInductor compile each, run
in their own processes (in parallel, and so that a device assert, which
poisons the CUDA context, cannot reach another job).

  python3 jobs.py JOB OUT.json [--device cuda]

writes {"ok": true, ...facts} or {"ok": false, "error": "...", ...}.
test_gpu_passes.py runs every job and checks the facts. The device can be
"cpu" to try the plumbing on a machine without a GPU (the facts then
differ: the int64 truncation and device asserts are GPU behaviour).
"""

import json
import os
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "backend_cuda", "export"))
sys.path.insert(0, os.path.join(ROOT, "testing", "gpu"))

import torch  # noqa: E402

VALUES = [1.5, -0.25, 1e-8, 0.1]


# ----------------------------------------------------------------- models

class FloatItem(torch.nn.Module):
    """float32 and float64 .item() values, each in several kernels (the
    reduction separates them)."""

    def forward(self, x, s, d):
        a, b = s.item(), d.item()
        y = x * a + b
        m = y.sum(0, keepdim=True)
        return y, (y - m) * a, x * b


def float_item_args(device, value):
    torch.manual_seed(0)
    return (torch.randn(64, 33, device=device),
            torch.tensor(value, device=device),
            torch.tensor(value, dtype=torch.float64, device=device) / 3)


def policy_head(device, hidden=64):
    import models  # noqa: F401  (models_passes needs models.Case first)
    import models_passes
    torch.manual_seed(1234)
    m = models_passes.PolicyHead(hidden).to(device)
    args = (torch.randn(8, hidden, device=device),
            torch.randn(8, 14, device=device))
    return m, args


def masked_copy(device):
    import models  # noqa: F401
    import models_passes
    m, methods = models_passes._masked5(device)
    return m, methods["forward"][1]


# ----------------------------------------------------------------- helpers

def export_with_passes(module, args, skip=()):
    from aotrun_export.exporter import export_method
    from aotrun_export.passes import run_passes
    ep = export_method(module, args, {}, dynamic_shapes=None, strict=False)
    return run_passes(ep, skip=skip)


def compile_for_torch(ep, work, single_threaded=False):
    """AOTInductor with torch's default options (a library that links
    libtorch), loaded with torch's own runner: what the passes change in
    the generated code, independent of aotrun's runtime. single_threaded:
    the runner without its completion-event logic (torch's advice for CUDA
    graph capture)."""
    from aotrun_export.passes import as_needed_linking, \
        constant_folding_decision
    opts = constant_folding_decision(ep)[0]
    t0 = time.time()
    with as_needed_linking():
        pkg = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(work, "m.pt2"),
            inductor_configs=opts)
    runner = torch._inductor.aoti_load_package(
        pkg, run_single_threaded=single_threaded)
    return runner, pkg, time.time() - t0


def wrapper_source(pkg):
    import zipfile
    with zipfile.ZipFile(pkg) as z:
        names = [n for n in z.namelist() if n.endswith(".wrapper.cpp")]
        return z.read(names[0]).decode("utf-8", "replace")


def max_err(a, b):
    """Largest error over the outputs, each relative to the output's
    largest magnitude (1e-8 and 1.5 alike)."""
    outs_a = a if isinstance(a, (tuple, list)) else [a]
    outs_b = b if isinstance(b, (tuple, list)) else [b]
    errs = []
    for x, y in zip(outs_a, outs_b):
        x, y = x.double(), y.double()
        scale = float(y.abs().max()) or 1.0
        errs.append(float((x - y).abs().max()) / scale)
    return max(errs)


# ----------------------------------------------------------------- jobs

def job_float_item(device, work, with_pass):
    m = FloatItem().to(device)
    ep, notes = export_with_passes(
        m, float_item_args(device, 1.5),
        skip=() if with_pass else ("float_item",))
    runner, pkg, secs = compile_for_torch(ep, work)
    errors = {}
    with torch.no_grad():
        for v in VALUES:
            a = float_item_args(device, v)
            errors[str(v)] = max_err(runner(*a), m(*a))
    src = wrapper_source(pkg)
    return {"errors": errors, "notes": notes, "compile_seconds": secs,
            "item_reads": src.count("aoti_torch_item_"),
            "int64_launcher_args": [line.strip() for line in src.splitlines()
                                    if line.strip().startswith("int64_t ks")]}


def job_policy(device, work, with_pass):
    m, args = policy_head(device)
    ep, notes = export_with_passes(
        m, args, skip=() if with_pass else ("assert_async",))
    result = {"notes": notes,
              "asserts_in_graph": sum("assert_async" in str(n.target)
                                      for n in ep.graph.nodes)}
    try:
        runner, pkg, secs = compile_for_torch(ep, work)
        result["compile_seconds"] = secs
        with torch.no_grad():
            errs = []
            for _ in range(3):
                a = (torch.randn_like(args[0]), torch.randn_like(args[1]))
                got = runner(*a)
                if device == "cuda":
                    torch.cuda.synchronize()
                errs.append(max_err(got, m(*a)))
        result["errors"] = errs
        src = wrapper_source(pkg)   # Triton kernels are embedded in it
        result["assert_messages_in_code"] = [
            msg for msg in ("argument validation failed",
                            "positive diagonal", "finite action")
            if msg in src]
    except Exception as e:  # noqa: BLE001  (the failure is the fact)
        result["failure"] = f"{type(e).__name__}: {e}"[-3000:]
    return result


def job_masked_program(device, work, with_pass):
    """aotrun's own exporter (BASE_OPTIONS): the library's imports and
    DT_NEEDED."""
    from aotrun_export import export_program
    from aotrun_export.elf_symbols import read_dynamic
    m, args = masked_copy(device)
    out = os.path.join(work, "prog")
    manifest = export_program(
        {"forward": (m, args)}, out, log=lambda s: None,
        skip_passes=() if with_pass else ("masked_copy",))
    entry = manifest["methods"]["forward"]
    return {"imports": entry["aoti_torch_imports"],
            "notes": entry.get("notes", []),
            "needed": list(read_dynamic(os.path.join(out, "forward.so"))
                           .needed)}


def job_masked_graph(device, work, with_pass=True):
    """torch's runner captured into a CUDA graph and replayed on new
    inputs: possible only when no count is read back."""
    m, args = masked_copy(device)
    ep, notes = export_with_passes(m, args)
    runner, pkg, secs = compile_for_torch(ep, work, single_threaded=True)
    static = [a.clone() for a in args]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        for _ in range(3):
            runner(*static)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph), torch.no_grad():
        out = runner(*static)
    errs = []
    for _ in range(3):
        new = [torch.randn_like(a) for a in args]
        for s, n in zip(static, new):
            s.copy_(n)
        graph.replay()
        torch.cuda.synchronize()
        with torch.no_grad():
            errs.append(max_err(out, m(*new)))
    return {"replay_errors": errs, "notes": notes, "compile_seconds": secs}


JOBS = {
    "float_item_without_pass": lambda d, w: job_float_item(d, w, False),
    "float_item_with_pass": lambda d, w: job_float_item(d, w, True),
    "policy_without_pass": lambda d, w: job_policy(d, w, False),
    "policy_with_pass": lambda d, w: job_policy(d, w, True),
    "masked_without_pass": lambda d, w: job_masked_program(d, w, False),
    "masked_with_pass": lambda d, w: job_masked_program(d, w, True),
    "masked_graph_capture": job_masked_graph,
}


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("job", choices=sorted(JOBS))
    ap.add_argument("out")
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args(argv)
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix=f"aotrun-{a.job}-") as work:
        try:
            result = {"ok": True, **JOBS[a.job](a.device, work)}
        except Exception as e:  # noqa: BLE001  (reported to the test)
            result = {"ok": False, "error": f"{type(e).__name__}: {e}",
                      "traceback": traceback.format_exc()[-4000:]}
    result["seconds"] = round(time.time() - t0, 1)
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
