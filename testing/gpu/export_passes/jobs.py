"""GPU jobs for the exporter pass tests, one AOTInductor compile each, run
in their own processes (in parallel, and so that a device assert, which
poisons the CUDA context, cannot reach another job). Programs are exported
with aotrun's exporter and run through the aotrun CLI of the GPU bundle
(.gpu/ or $AOTRUN_GPU_BUNDLE), each run its own process too.

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


def bundle():
    """(aotrun CLI, CUDA plugin) of the GPU bundle (.gpu/, or
    $AOTRUN_GPU_BUNDLE)."""
    b = os.environ.get("AOTRUN_GPU_BUNDLE", os.path.join(ROOT, ".gpu"))
    return (os.path.join(b, "bin", "aotrun"),
            os.path.join(b, "lib", "libaotrun_cuda.so"))


def export_dir(module, args, work, skip=()):
    """aotrun's exporter (its compile options, the .pt2 kept for its
    wrapper source) into work/prog; returns (program dir, manifest)."""
    from aotrun_export import export_program
    out = os.path.join(work, "prog")
    t0 = time.time()
    manifest = export_program({"forward": (module, args)}, out,
                              log=lambda s: None, keep_packages=True,
                              skip_passes=skip)
    return out, manifest, time.time() - t0


def run_aotrun(prog, args, work, calls=1, graph=False):
    """Runs the program's forward through the aotrun CLI on args (host
    copies as .npy); returns ([outputs of each call as torch tensors],
    the CLI's output text). Raises RuntimeError with that text on failure."""
    import subprocess
    import numpy as np
    aotrun, plugin = bundle()
    run_dir = tempfile.mkdtemp(dir=work)
    cmd = [aotrun, "run", prog, "--plugin", plugin, "--calls", str(calls),
           "--output-dir", os.path.join(run_dir, "out")]
    for i, a in enumerate(args):
        path = os.path.join(run_dir, f"in{i}.npy")
        np.save(path, a.detach().cpu().numpy())
        cmd += ["--input", path]
    if graph:
        cmd += ["--option", "enable_cuda_graph_for_method=forward"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, AOTRUN_LOG_LEVEL="info"))
    text = p.stdout + p.stderr
    if p.returncode != 0:
        raise RuntimeError(f"aotrun run exited {p.returncode}: {text[-2500:]}")
    outs = []
    for k in range(calls):
        d = os.path.join(run_dir, "out", f"call{k}") if calls > 1 else \
            os.path.join(run_dir, "out")
        n = len([f for f in os.listdir(d) if f.startswith("out")])
        outs.append([torch.from_numpy(np.load(os.path.join(d, f"out{j}.npy")))
                     for j in range(n)])
    return outs, text


def package_wrapper(prog):
    pt2 = [f for f in os.listdir(prog) if f.endswith(".pt2")]
    return wrapper_source(os.path.join(prog, pt2[0]))


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
    """Exported by aotrun's exporter, run through the aotrun CLI."""
    m = FloatItem().to(device)
    prog, manifest, secs = export_dir(
        m, float_item_args(device, 1.5), work,
        skip=() if with_pass else ("float_item",))
    errors = {}
    with torch.no_grad():
        for v in VALUES:
            a = float_item_args(device, v)
            outs, _ = run_aotrun(prog, a, work)
            errors[str(v)] = max_err(outs[0], [o.cpu() for o in m(*a)])
    src = package_wrapper(prog)
    return {"errors": errors,
            "notes": manifest["methods"]["forward"].get("notes", []),
            "compile_seconds": secs,
            "item_reads": src.count("aoti_torch_item_"),
            "int64_launcher_args": [line.strip() for line in src.splitlines()
                                    if line.strip().startswith("int64_t ks")]}


def job_policy(device, work, with_pass):
    """Exported by aotrun's exporter, run through the aotrun CLI (each run
    its own process: a device assert poisons only that one)."""
    m, args = policy_head(device)
    skip = () if with_pass else ("assert_async",)
    ep, _ = export_with_passes(m, args, skip=skip)
    result = {"asserts_in_graph": sum("assert_async" in str(n.target)
                                      for n in ep.graph.nodes)}
    try:
        prog, manifest, secs = export_dir(m, args, work, skip=skip)
        result["notes"] = manifest["methods"]["forward"].get("notes", [])
        result["compile_seconds"] = secs
        src = package_wrapper(prog)   # Triton kernels are embedded in it
        result["assert_messages_in_code"] = [
            msg for msg in ("argument validation failed",
                            "positive diagonal", "finite action")
            if msg in src]
        errs = []
        with torch.no_grad():
            for _ in range(3):
                a = (torch.randn_like(args[0]), torch.randn_like(args[1]))
                outs, _ = run_aotrun(prog, a, work)
                want = m(*a)
                want = want if isinstance(want, (tuple, list)) else [want]
                errs.append(max_err(outs[0], [w.cpu() for w in want]))
        result["errors"] = errs
    except Exception as e:  # noqa: BLE001  (the failure is the fact)
        result["failure"] = f"{type(e).__name__}: {e}"[-3000:]
    return result


def eager_unchecked(m, x, action):
    """PolicyHead.forward without the distribution's checks: what the
    program computes once the pass removed them (eager with validate_args
    raises on a NaN action instead)."""
    from torch.distributions import MultivariateNormal
    mean = m.mu(torch.tanh(m.body(x)))
    d = MultivariateNormal(mean, scale_tril=m._scale(mean.shape[0]),
                           validate_args=False)
    return mean, d.log_prob(action), d.entropy()


def nan_aware_err(got, want):
    """(NaN positions equal, largest error over the finite values relative
    to each output's largest finite magnitude)."""
    same_nan, errs = True, []
    for x, y in zip(got, want):
        x, y = x.double(), y.double()
        same_nan &= bool(torch.equal(torch.isnan(x), torch.isnan(y)))
        ok = ~torch.isnan(y)
        scale = float(y[ok].abs().max()) if ok.any() else 1.0
        errs.append(float((x[ok] - y[ok]).abs().max()) / (scale or 1.0)
                    if ok.any() else 0.0)
    return same_nan, max(errs)


def job_policy_invalid(device, work, with_pass):
    """A NaN action (outside the distribution's support) run through
    aotrun. Without the pass the compiled check is a device assert: the
    run fails with "device-side assert triggered" (and that process's CUDA
    context is gone). With the pass the run succeeds and gives what eager
    gives without the checks: NaN log-probs in the rows with the NaN."""
    m, args = policy_head(device)
    skip = () if with_pass else ("assert_async",)
    prog, manifest, secs = export_dir(m, args, work, skip=skip)
    x, action = torch.randn_like(args[0]), torch.randn_like(args[1])
    action[2, 5] = float("nan")
    result = {"compile_seconds": secs}
    try:
        outs, _ = run_aotrun(prog, (x, action), work)
    except RuntimeError as e:
        result["failure"] = str(e)[-3000:]
        return result
    with torch.no_grad():
        want = [w.cpu() for w in eager_unchecked(m, x, action)]
    result["same_nan"], result["error"] = nan_aware_err(outs[0], want)
    result["nan_rows"] = torch.isnan(outs[0][1]).nonzero().flatten().tolist()
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
    """The program run through aotrun with CUDA graphs on: calls 1-3 warm
    up, call 4 captures, 5-6 replay. Possible only when no count is read
    back; a refused capture says "CUDA graph capture failed" in the log."""
    m, args = masked_copy(device)
    prog, manifest, secs = export_dir(m, args, work)
    outs, text = run_aotrun(prog, args, work, calls=6, graph=True)
    with torch.no_grad():
        want = m(*args)
    want = want if isinstance(want, (tuple, list)) else [want]
    errs = [max_err(o, [w.cpu() for w in want]) for o in outs]
    return {"replay_errors": errs,
            "capture_failed": "capture failed" in text.lower(),
            "notes": manifest["methods"]["forward"].get("notes", []),
            "compile_seconds": secs}


JOBS = {
    "float_item_without_pass": lambda d, w: job_float_item(d, w, False),
    "float_item_with_pass": lambda d, w: job_float_item(d, w, True),
    "policy_without_pass": lambda d, w: job_policy(d, w, False),
    "policy_with_pass": lambda d, w: job_policy(d, w, True),
    "policy_invalid_without_pass": lambda d, w: job_policy_invalid(d, w, False),
    "policy_invalid_with_pass": lambda d, w: job_policy_invalid(d, w, True),
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
