"""Per-call overhead of aotrun against torch and against the GPU floor
(issue 12), side by side, in one device call.

  bash testing/gpu/unpack_bundle.sh .gpu
  python3 testing/gpu/bench_overhead.py --bundle .gpu --out $OUT

Models (float32, fixed seeds): mlp (Linear 64->128, ReLU, Linear 128->16 at
batch 4), transformer (one block, d=512, 8 heads, T=128, causal, batch 1),
cnn (3 conv+ReLU, 2 max-pools, global average pool, Linear, 3x64x64, batch
1), decoder (one token attending to a KV cache of 128 positions, d=512, 8
heads; the cache is an input, the new K/V are outputs: stateless),
mobilenet (MobileNetV3-Small at 3x64x64, batch 1: for export time).

Steps, under one time budget (--budget, default 540 s):
 1. Exports, in parallel worker processes (--jobs): each model with aotrun's
    exporter (backend_cuda/export, --shim-exports .gpu/lib/libaotrun_shim.so,
    keep_packages=True: its .pt2 stays) and, for the runner comparison,
    with torch's default torch.export + aoti_compile_and_package ("torch
    default export time"). Each export's wall time is recorded (they run
    --jobs at a time, so under that load).
 2. Kernels per call N: counted in the wrapper source of aotrun's .pt2
    (call_triton_* launches + aoti_torch_cuda_* / aoti_torch_copy_ extern
    calls in run_impl), counted by CUPTI in one call of aotrun's program
    (count_kernels.py: a shim may launch more than one kernel) and, for
    reference, torch.profiler's kernel count of one eager call. The floor
    is taken at the counted N (else the wrapper's, else the eager count;
    the table says which).
 3. Rounds (--rounds): every model, every variant, the same inputs; the order
    is reversed every other round so drift hits all alike. Variants (median
    host wall time per call of --iters calls after --warmup, each call
    synchronised):
      eager                 torch eager on device tensors + synchronize
      cuda_graph            torch.cuda.graphs: copy of the inputs into the
                            static buffers + replay + synchronize
      aoti_aotrun_pkg       torch._inductor.aoti_load_package of aotrun's .pt2
                            (built without libtorch: may not load; the
                            reason is recorded)
      aoti_torch_default    the same runner on torch's default package
      aotrun_{nograph,graph}_{device,host}
                            .gpu/bin/aotrun bench --json --no-gpu-time, with
                            --device-io or host I/O, and with
                            --option enable_cuda_graph_for_method=forward
      aotrun_triton_{nograph,graph}_device
                            with --triton-gemm only: the same bench of a
                            third export, aotrun's with GEMMs as autotuned
                            Triton kernels (no cuBLAS call per GEMM: issue
                            12's no-graph gap is cuBLAS's host time)
      aotrun_cublas_{nograph,graph}_device
                            with --cublas-gemm only: the same for an export
                            with every GEMM on cuBLAS (--no-small-gemm: the
                            small_gemm pass, passes/small_gemm.py, left out)
      floor                 .gpu/bin/launch_floor (one launch + sync, N plain
                            launches + sync, a graph of N kernels + sync,
                            256-byte copies + sync)
    The reported figure is the median over rounds of each round's median.
    Round 0 also gives aotrun's init and first-call times (bench --json), its
    GPU busy time per call (a run with GPU timing) and its peak device
    memory (nvidia-smi per process, CUDA context included; torch's column is
    torch.cuda.max_memory_allocated of the model: tensors only).
Writes OUT/bench_overhead.json (everything, errors included) and
OUT/bench_overhead.md (a docs/benchmarks.md section); both are rewritten
after each phase, so a run cut short still leaves its results. Every model
and measurement is in try/except: a failure is recorded, the rest runs.

  python3 testing/gpu/bench_overhead.py --from-json OUT/bench_overhead.json
      re-renders the markdown (to stdout) from a results file.
"""

import argparse
import datetime
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import bench_overhead_report  # noqa: E402  (the markdown section)
import timed_run  # noqa: E402

# aotrun's exports: kind -> (program folder, export_program options).
AOTRUN_EXPORTS = {
    "aotrun": ("program", {}),
    "aotrun_triton": ("program_triton", {"triton_gemm": True}),
    "aotrun_cublas": ("program_cublas", {"small_gemm": False}),
}


def export_kind_of(variant):
    """The aotrun export a bench variant runs: the kind its name starts
    with (aotrun_triton_graph_device), else aotrun's default export."""
    for kind in AOTRUN_EXPORTS:
        if kind != "aotrun" and variant.startswith(kind + "_"):
            return kind
    return "aotrun"


DESCRIPTIONS = {
    "mlp": "MLP 64->128->16 (Linear, ReLU, Linear), batch 4",
    "transformer": "transformer block d=512, 8 heads, T=128, causal, batch 1",
    "cnn": "CNN 3 conv (16/32/64 ch) + ReLU, 2 max-pools, global avg pool, "
           "Linear, 3x64x64, batch 1",
    "decoder": "decoder step: 1 token, KV cache of 128 positions (input), "
               "d=512, 8 heads, batch 1",
    "mobilenet": "MobileNetV3-Small (11 inverted residual blocks, depthwise "
                 "3x3/5x5, squeeze-excite, hardswish, BatchNorm), 3x64x64, "
                 "batch 1: issue 12's export-time model",
}
VARIANTS = ["eager", "cuda_graph", "aoti_aotrun_pkg", "aoti_torch_default",
            "aotrun_nograph_device", "aotrun_graph_device",
            "aotrun_graph_copies_device", "aotrun_graph_outcopies_device",
            "aotrun_copyout_nograph_device", "aotrun_graph_kernels_device",
            "aotrun_graph_flag_device", "aotrun_graph_kernels_flag_device",
            "aotrun_nograph_host", "aotrun_graph_host"]
TORCH_VARIANTS = VARIANTS[:4]
FLOOR_NS = [1, 2, 4, 8, 16, 32, 64]


# The kernels per call (bench_kernels.py) and the models (bench_models.py).
from bench_kernels import (count_package_kernels,  # noqa: E402
                           count_program_kernels, wrapper_n)
from bench_models import MODELS, build_model  # noqa: E402


# ---- export workers (one process per export) ---------------------------------

def worker_export(a):
    """--worker: one export; writes its result JSON to --result."""
    res = {"model": a.model, "kind": a.kind}
    t_start = time.time()
    try:
        import numpy as np
        import torch
        d = os.path.join(a.work, a.model)
        os.makedirs(d, exist_ok=True)
        module, args = build_model(a.model)
        if a.kind in AOTRUN_EXPORTS:
            sys.path.insert(0, os.path.join(ROOT, "backend_cuda", "export"))
            from aotrun_export import export_program
            ins = []
            os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
            for i, x in enumerate(args):
                p = os.path.join(d, "inputs", f"in{i}.npy")
                np.save(p, x.detach().cpu().numpy())
                ins.append(p)
            res["inputs"] = ins
            folder, options = AOTRUN_EXPORTS[a.kind]
            prog = os.path.join(d, folder)
            shim = os.path.join(a.bundle, "lib", "libaotrun_shim.so")
            t0 = time.time()
            with torch.no_grad():
                export_program({"forward": (module, args)}, prog,
                               shim_exports=[shim] if os.path.exists(shim) else None,
                               keep_packages=True, **options,
                               log=lambda s: print(s, flush=True))
            res["seconds"] = time.time() - t0
            res["program"] = prog
            pt2 = os.path.join(prog, "forward.pt2")
            res["pt2"] = pt2 if os.path.exists(pt2) else None
            try:
                res["kernels"] = count_package_kernels(pt2)
            except Exception as e:
                res["kernels_error"] = f"{type(e).__name__}: {e}"[:500]
        else:
            ins = []  # the same values (same seeds) for the probe
            os.makedirs(os.path.join(d, "inputs_torch"), exist_ok=True)
            for i, x in enumerate(args):
                p = os.path.join(d, "inputs_torch", f"in{i}.npy")
                np.save(p, x.detach().cpu().numpy())
                ins.append(p)
            res["inputs"] = ins
            t0 = time.time()
            with torch.no_grad():
                ep = torch.export.export(module, args)
                t1 = time.time()
                path = torch._inductor.aoti_compile_and_package(
                    ep, package_path=os.path.join(d, "torch_default.pt2"))
            res["seconds"] = time.time() - t0
            res["export_seconds"] = t1 - t0
            res["compile_seconds"] = time.time() - t1
            res["pt2"] = path
            try:
                res["kernels"] = count_package_kernels(path)
            except Exception as e:
                res["kernels_error"] = f"{type(e).__name__}: {e}"[:500]
    except Exception as e:
        res["error"] = f"{type(e).__name__}: {e}"[:2000]
        res["traceback"] = traceback.format_exc()[-4000:]
    res["wall_seconds"] = time.time() - t_start
    with open(a.result, "w") as f:
        json.dump(res, f, indent=1)
    return 0 if "error" not in res else 1


def extract_package_so(pt2, where):
    """The model library inside a .pt2 (a zip), extracted under `where`;
    (so path, its folder) or raises."""
    import glob
    import shutil
    import zipfile
    shutil.rmtree(where, ignore_errors=True)
    with zipfile.ZipFile(pt2) as z:
        z.extractall(where)
    sos = sorted(glob.glob(os.path.join(where, "**", "*.so"), recursive=True))
    if not sos:
        raise RuntimeError(f"no .so in {pt2}")
    return sos[0], os.path.dirname(sos[0])


def worker_probe(a):
    """--worker --kind probe: loads a .pt2 with torch's AOTI runner and calls
    it once, in its own process (a package that crashes the loader must not
    take the benchmark down). --how so loads the package's .so with the
    container runner under the package loader instead
    (torch._C._aoti.AOTIModelContainerRunnerCuda). Writes {"ok": true,
    "load_s", "first_call_s"} or the error to --result."""
    import faulthandler
    faulthandler.enable()  # a crash prints where it happened, on stderr
    res = {"pt2": a.model, "how": a.how}
    try:
        import numpy as np
        import torch
        ins = [p for p in (a.inputs or "").split(",") if p]
        args = [torch.from_numpy(np.load(p)).cuda() for p in ins]
        torch.cuda.synchronize()
        if a.how == "so":
            so, cubins = extract_package_so(a.model, os.path.join(
                a.work, os.path.basename(a.result) + ".extracted"))
            res["so"] = so
            t0 = time.time()
            runner = torch._C._aoti.AOTIModelContainerRunnerCuda(so, 1, "cuda", cubins)
            t1 = time.time()
            runner.run(args)
        else:
            t0 = time.time()
            runner = torch._inductor.aoti_load_package(a.model)
            t1 = time.time()
            runner(*args)
        torch.cuda.synchronize()
        res.update(ok=True, load_s=t1 - t0, first_call_s=time.time() - t1)
    except Exception as e:
        res["error"] = f"{type(e).__name__}: {e}"[:1000]
    with open(a.result, "w") as f:
        json.dump(res, f)
    return 0


def probe_packages(a, budget, results, save):
    """Probes every package for the AOTI runner columns in subprocesses;
    a package that fails or crashes there is not loaded in this process."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = []
    for model in a.models:
        e = results["models"][model]["export"]
        for kind, variant in (("aotrun", "aoti_aotrun_pkg"),
                              ("torch_default", "aoti_torch_default"),
                              ("torch_default", "aoti_torch_so")):
            pt2 = e.get(kind, {}).get("pt2")
            ins = e.get(kind, {}).get("inputs") or []
            if pt2 and os.path.exists(pt2) and ins:
                jobs.append((model, variant, pt2, ins))
    env = subprocess_env(a.bundle)

    def one(job):
        model, variant, pt2, ins = job
        rpath = os.path.join(a.work, f"{model}.{variant}.probe.json")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--kind",
               "probe", "--model", pt2, "--inputs", ",".join(ins),
               "--work", a.work, "--result", rpath,
               "--how", "so" if variant == "aoti_torch_so" else "package"]
        # torch's own package needs none of the bundle's libraries, and
        # LD_LIBRARY_PATH entries win over the RUNPATH of torch's wheels
        # (/usr/local/cuda/lib64's cuBLAS instead of the wheel's): its
        # process gets no LD_LIBRARY_PATH at all.
        torch_own = variant in ("aoti_torch_default", "aoti_torch_so")
        penv = clean_env() if torch_own else env
        rc, out, err = sh(cmd, min(120, max(5, budget.left() - a.reserve)), env=penv)
        try:
            with open(rpath) as f:
                res = json.load(f)
        except (OSError, ValueError):
            res = {"error": f"the loader process died (rc {rc}): "
                            f"{crash_report(err or out or '')}"}
        res["library_path"] = "none (LD_LIBRARY_PATH unset)" if torch_own else "bundle"
        return model, variant, res

    with ThreadPoolExecutor(4) as ex:
        for model, variant, res in ex.map(one, jobs):
            results["models"][model].setdefault("probe", {})[variant] = res
            print(f"probe {model} {variant}: {res.get('error', 'ok')[:200]}",
                  flush=True)
    save()


# ---- the driver ---------------------------------------------------------------

class Recorded(Exception):
    """A failure whose message is already complete (recorded as is)."""


def describe(e):
    return str(e) if isinstance(e, Recorded) else f"{type(e).__name__}: {e}"


class Budget:
    def __init__(self, seconds):
        self.end = time.time() + seconds
        self.seconds = seconds

    def left(self):
        return self.end - time.time()


def sh(cmd, timeout, env=None):
    """(rc, stdout, stderr); rc 124 on timeout (with what it printed), 127
    when not runnable."""
    return timed_run.run(cmd, timeout, env=env)


def last_line(text):
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1][:500] if lines else ""


def gpu_info():
    info = {}
    rc, out, err = sh(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                       "--format=csv,noheader"], 30)
    if rc == 0 and out.strip():
        parts = [p.strip() for p in out.strip().splitlines()[0].split(",")]
        info.update(zip(["name", "driver", "memory"], parts))
    else:
        info["nvidia_smi_error"] = last_line(err) or f"rc {rc}"
    try:
        import torch
        info["torch"] = torch.__version__
        info["torch_cuda"] = torch.version.cuda
        if torch.cuda.is_available():
            info.setdefault("name", torch.cuda.get_device_name(0))
    except Exception as e:
        info["torch_error"] = f"{type(e).__name__}: {e}"[:300]
    return info


def clean_env():
    """This process's environment without LD_LIBRARY_PATH / LD_PRELOAD."""
    return {k: v for k, v in os.environ.items()
            if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}


def crash_report(text, limit=1200):
    """What a crashed Python process said that matters: faulthandler's
    report from its "Fatal Python error" line (the stack, innermost first),
    without the list of extension modules it ends with; else the tail."""
    i = text.find("Fatal Python error")
    if i < 0:
        return " / ".join(l.strip() for l in text.splitlines() if l.strip())[-600:]
    body = text[i:].split("\nExtension modules:")[0]
    return " / ".join(l.strip() for l in body.splitlines() if l.strip())[:limit]


def subprocess_env(bundle):
    env = dict(os.environ)
    paths = [os.path.join(bundle, "lib"), "/usr/local/cuda/lib64"]
    try:
        import nvidia.cudnn  # torch's wheel: the shim dlopens libcudnn.so.9
        paths.append(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))
    except Exception:
        pass
    if env.get("LD_LIBRARY_PATH"):
        paths.append(env["LD_LIBRARY_PATH"])
    env["LD_LIBRARY_PATH"] = ":".join(paths)
    env.setdefault("AOTRUN_LOG_LEVEL", "warning")
    return env


def export_kinds(a):
    """aotrun's export, torch's default one unless skipped, aotrun's with
    GEMMs as Triton kernels with --triton-gemm, and with every GEMM on
    cuBLAS with --cublas-gemm."""
    kinds = ["aotrun"]
    if not a.skip_torch_default:
        kinds.append("torch_default")
    if getattr(a, "triton_gemm", False):
        kinds.append("aotrun_triton")
    if getattr(a, "cublas_gemm", False):
        kinds.append("aotrun_cublas")
    return kinds


def run_exports(a, budget, results, save):
    """Every export in its own process, --jobs at a time."""
    from concurrent.futures import ThreadPoolExecutor
    jobs = [(m, k) for m in a.models for k in export_kinds(a)]
    limit = budget.left() * a.export_share
    t_end = time.time() + limit

    def one(job):
        model, kind = job
        rpath = os.path.join(a.work, f"{model}.{kind}.export.json")
        cmd = [sys.executable, os.path.abspath(__file__), "--worker",
               "--model", model, "--kind",
               "torch" if kind == "torch_default" else kind,
               "--work", a.work, "--bundle", a.bundle, "--result", rpath]
        # Each kind its own inductor cache: no compiled artifact of aotrun's
        # exports (linked without libtorch) can be reused by torch's, and
        # neither times the other's cached work.
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(
            a.work, f"inductor-cache-{kind}"))
        rc, out, err = sh(cmd, t_end - time.time(), env=env)
        with open(os.path.join(a.work, f"{model}.{kind}.export.log"), "w") as f:
            f.write(out + "\n" + err)
        try:
            with open(rpath) as f:
                res = json.load(f)
        except (OSError, ValueError):
            res = {"error": f"export worker rc {rc}: {last_line(err) or last_line(out)}"}
        return model, kind, res

    results["export_jobs"] = a.jobs
    with ThreadPoolExecutor(a.jobs) as ex:
        for model, kind, res in ex.map(one, jobs):
            e = results["models"][model]["export"]
            e[kind] = res
            status = "ok %.1f s" % res["seconds"] if "seconds" in res else res.get("error", "?")[:200]
            print(f"export {model} {kind}: {status}", flush=True)
    save()


class TorchModel:
    """In-process torch variants of one model."""

    def __init__(self, name, mres, a):
        import numpy as np
        import torch
        self.name = name
        self.torch = torch
        self.module, args = build_model(name)
        ins = mres["export"].get("aotrun", {}).get("inputs")
        if ins and all(os.path.exists(p) for p in ins):  # aotrun's inputs
            args = tuple(torch.from_numpy(np.load(p)).cuda() for p in ins)
        self.args = args
        self.calls = {}
        self.errors = {}
        with torch.no_grad():
            self.module(*args)
            torch.cuda.synchronize()
            try:  # the model's own tensors: a fresh copy, one call
                base = torch.cuda.memory_allocated()
                torch.cuda.reset_peak_memory_stats()
                m2, a2 = build_model(name)
                m2(*a2)
                torch.cuda.synchronize()
                mres["torch_peak_allocated_mib"] = (
                    torch.cuda.max_memory_allocated() - base) / 2**20
                del m2, a2
            except Exception as e:
                mres["torch_memory_error"] = describe(e)[:300]
        self.calls["eager"] = lambda: self.module(*self.args)
        probe = mres.get("probe", {})
        for variant, make in (("cuda_graph", self._graph),
                              ("aoti_aotrun_pkg", lambda: self._aoti(
                                  mres["export"].get("aotrun", {}).get("pt2"),
                                  probe.get("aoti_aotrun_pkg", {}))),
                              ("aoti_torch_default", lambda: self._aoti(
                                  mres["export"].get("torch_default", {}).get("pt2"),
                                  probe.get("aoti_torch_default", {})))):
            try:
                self.calls[variant] = make()
            except Exception as e:
                self.errors[variant] = describe(e)[:500]
        try:
            mres["kernels_eager_profiler"] = self._profile_kernels()
        except Exception as e:
            mres["kernels_eager_profiler_error"] = f"{type(e).__name__}: {e}"[:300]

    def _graph(self):
        torch = self.torch
        static = [x.clone() for x in self.args]
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.no_grad(), torch.cuda.stream(s):
            for _ in range(3):
                self.module(*static)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(g):
            self.static_out = self.module(*static)
        self.graph = g

        def call():
            for dst, src in zip(static, self.args):
                dst.copy_(src)
            g.replay()
        return call

    def _aoti(self, pt2, probe=None):
        if not pt2 or not os.path.exists(pt2):
            raise Recorded("no package (its export failed or was skipped)")
        if probe is not None and not probe.get("ok"):
            raise Recorded("does not load: " + probe.get("error", "probe not run"))
        runner = self.torch._inductor.aoti_load_package(pt2)
        runner(*self.args)
        self.torch.cuda.synchronize()
        return lambda: runner(*self.args)

    def _profile_kernels(self):
        torch = self.torch
        from torch.profiler import ProfilerActivity, profile
        with torch.no_grad():
            self.module(*self.args)
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                self.module(*self.args)
                torch.cuda.synchronize()
        n = 0
        for e in prof.events():
            dev = str(getattr(e, "device_type", "")).lower()
            if "cuda" in dev and not e.name.startswith(("Memcpy", "Memset")):
                n += 1
        return n

    def measure(self, variant, iters, warmup):
        torch = self.torch
        if variant in self.errors:
            raise Recorded(self.errors[variant])
        fn = self.calls[variant]
        ts = []
        with torch.no_grad():
            for i in range(warmup + iters):
                t0 = time.perf_counter()
                fn()
                torch.cuda.synchronize()
                if i >= warmup:
                    ts.append((time.perf_counter() - t0) * 1e6)
        return statistics.median(ts)


def nvidia_smi_peak(pid, stop, box):
    """Polls nvidia-smi for the used memory (MiB) of process pid."""
    while not stop.is_set():
        rc, out, _ = sh(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                         "--format=csv,noheader,nounits"], 5)
        if rc != 0:
            box["error"] = "nvidia-smi --query-compute-apps failed"
            return
        for line in out.splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) == 2 and parts[0] == str(pid) and parts[1].isdigit():
                box["peak"] = max(box.get("peak", 0), int(parts[1]))
        stop.wait(0.1)


def aotrun_bench(a, env, mres, variant, timeout, gpu_time=False, memory=False,
                 options=()):
    """Runs aotrun bench --json (with --option for each of `options`);
    returns its parsed JSON (raises on error)."""
    kind = export_kind_of(variant)
    exp = mres["export"].get(kind, {})
    if "program" not in exp:
        raise Recorded("no aotrun program (export failed: "
                       f"{exp.get('error', 'not run')[:200]})")
    cmd = [os.path.join(a.bundle, "bin", "aotrun"), "bench", exp["program"],
           "--plugin", os.path.join(a.bundle, "lib", "libaotrun_cuda.so"),
           "--iterations", str(a.iters), "--warmup", str(a.warmup), "--json"]
    for p in exp.get("inputs", []):
        cmd += ["--input", p]
    if variant.endswith("_device"):
        cmd.append("--device-io")
    if "_lt_" in variant:  # plain GEMMs through cuBLASLt (docs/cuda-backend.md)
        env = dict(env, AOTRUN_GEMM_LT="1")
    if "_graph_" in variant:
        cmd += ["--option", "enable_cuda_graph_for_method=forward"]
    if "_copies_" in variant:  # every copy on the stream, no copy nodes
        cmd += ["--option", "cuda_graph_input_nodes=false",
                "--option", "cuda_graph_output_nodes=false"]
    if "_outcopies_" in variant:  # output copies on the stream, not nodes
        cmd += ["--option", "cuda_graph_output_nodes=false"]
    if "_kernels_" in variant:  # copy nodes as kernel nodes (opt-in)
        cmd += ["--option", "cuda_graph_copy_kernels=true"]
    if "_flag_" in variant:  # the replay's end seen by its done counter
        cmd += ["--option", "cuda_graph_done_flag=true"]
    # Placement off: each output copied after the call (writing outputs in
    # place is the default since 2026-12-07).
    if "_copyout_" in variant:
        env = dict(env, AOTRUN_OUTPUT_PLACEMENT="0")
    if not gpu_time:
        cmd.append("--no-gpu-time")
    for o in options:
        cmd += ["--option", o]
    box, stop = {}, threading.Event()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=env)
    except OSError as e:
        raise Recorded(f"cannot run {cmd[0]}: {e}")
    poll = None
    if memory:
        poll = threading.Thread(target=nvidia_smi_peak, args=(p.pid, stop, box),
                                daemon=True)
        poll.start()
    try:
        out, err = p.communicate(timeout=max(1, timeout))
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise Recorded(f"aotrun bench timed out after {timeout:.0f} s")
    finally:
        stop.set()
        if poll:
            poll.join(10)
    if p.returncode != 0:
        raise Recorded(f"aotrun bench rc {p.returncode}: "
                           f"{last_line(err) or last_line(out)} "
                           f"[{' '.join(shlex.quote(c) for c in cmd)}]")
    res = json.loads(out)
    if memory:
        res["peak_device_mib"] = box.get("peak")
        if "error" in box:
            res["peak_device_error"] = box["error"]
    return res


def busy_pairs(results, models):
    """(model, N, GPU us) for each model whose kernel count and GPU time
    are known: the busy floor's kernels. GPU time of the graph run where
    measured (no host gaps between kernels), else the no-graph run's."""
    pairs = []
    for m in models:
        mres = results["models"][m]
        n = mres.get("kernels_n")
        v = mres.get("variants", {})
        us = (v.get("aotrun_graph_device") or {}).get("gpu_time_us") or \
            (v.get("aotrun_nograph_device") or {}).get("gpu_time_us")
        if n and 0 < n <= 4096 and isinstance(us, (int, float)) and 0 <= us <= 1e6:
            pairs.append((m, n, us))
    return pairs


def run_floor(a, env, ns, timeout, busy=()):
    cmd = [os.path.join(a.bundle, "bin", "launch_floor"), "--reps",
           str(a.floor_reps), "--warmup", "200",
           "--ns", ",".join(str(n) for n in sorted(set(ns)))]
    if busy:
        cmd += ["--busy", ",".join("%d:%.3f" % (n, us) for _, n, us in busy)]
    rc, out, err = sh(cmd, timeout, env=env)
    try:
        d = json.loads(out)
    except ValueError:
        d = None
    if rc != 0 or d is None or "error" in (d or {}):
        raise Recorded(f"launch_floor rc {rc}: "
                           f"{(d or {}).get('error') or last_line(err) or last_line(out)}")
    # launch_floor answers the pairs in order: keyed by model here.
    d["busy_by_model"] = {m: b for (m, _, _), b in zip(busy, d.pop("busy", []))}
    return d


def floor_median(rounds):
    """Median over rounds of each floor figure's median."""
    def med(vals):
        vals = [v for v in vals if isinstance(v, (int, float)) and v >= 0]
        return statistics.median(vals) if vals else None
    out = {}
    for key in ("sync_idle", "one_launch_sync", "memcpy_d2d_sync",
                "memcpy_h2d_sync", "memcpy_d2h_sync"):
        out[key] = med([r.get(key, {}).get("median") for r in rounds])
    replays = ("replay_copies_sync", "replay_memcpy_nodes_sync",
               "replay_kernel_nodes_sync")
    waits = ("graph_launch_event_spin", "graph_launch_flag_spin")
    for key in ("launches_sync", "graph_launch_sync") + waits + replays + tuple(
            r + part for r in replays for part in ("_device", "_host_side")):
        ns = sorted({n for r in rounds for n in r.get(key, {})}, key=int)
        out[key] = {n: med([r.get(key, {}).get(n, {}).get("median")
                            for r in rounds]) for n in ns}
        # launch_floor reports a replay variant that failed as KEY_error.
        errors = [r[key + "_error"] for r in rounds if r.get(key + "_error")]
        if errors:
            out[key + "_error"] = errors[0]
    spin_errors = [r["graph_launch_spin_error"] for r in rounds
                   if r.get("graph_launch_spin_error")]
    if spin_errors:
        out["graph_launch_spin_error"] = spin_errors[0]
    busy = {}
    for m in sorted({m for r in rounds for m in r.get("busy_by_model", {})}):
        runs = [r["busy_by_model"][m] for r in rounds
                if m in r.get("busy_by_model", {})]
        busy[m] = {"n": runs[0].get("n"),
                   "busy_us": med([b.get("busy_us") for b in runs]),
                   "launches_sync": med([(b.get("launches_sync") or {}).get("median")
                                         for b in runs]),
                   "graph_launch_sync": med([(b.get("graph_launch_sync") or {}).get("median")
                                             for b in runs]),
                   "graph_device_us": med([b.get("graph_device_us") for b in runs])}
    if busy:
        out["busy"] = busy
    return out


def measure_rounds(a, budget, results, save):
    import torch
    env = subprocess_env(a.bundle)
    torch_models = {}
    for name in a.models:
        mres = results["models"][name]
        try:
            torch_models[name] = TorchModel(name, mres, a)
            for v, e in torch_models[name].errors.items():
                mres["variants"].setdefault(v, {})["error"] = e
        except Exception as e:
            mres["torch_error"] = f"{type(e).__name__}: {e}"[:1000]
            mres["torch_traceback"] = traceback.format_exc()[-3000:]
        count_program_kernels(a, env, mres)
        n, src = wrapper_n(mres)
        mres["kernels_n"], mres["kernels_n_source"] = n, src
    ns = FLOOR_NS + [results["models"][m]["kernels_n"] for m in a.models
                     if results["models"][m].get("kernels_n")]
    ns += [results["models"][m].get("kernels_eager_profiler") or 0
           for m in a.models]
    ns = [n for n in ns if n and 0 < n <= 4096]
    save()
    order = [(m, v) for m in a.models for v in VARIANTS] + [(None, "floor")]
    for r in range(a.rounds):
        if r > 0 and budget.left() < a.reserve + 20:
            results["notes"].append(f"stopped after {r} round(s): time budget")
            break
        seq = order if r % 2 == 0 else list(reversed(order))
        for model, variant in seq:
            if budget.left() < a.reserve:
                results["notes"].append(f"round {r}: skipped {model or ''} "
                                        f"{variant}: time budget")
                continue
            timeout = min(120, budget.left() - a.reserve)
            try:
                if variant == "floor":
                    d = run_floor(a, env, ns, timeout,
                                  busy_pairs(results, a.models))
                    results["floor"]["rounds"].append(d)
                    continue
                mres = results["models"][model]
                vres = mres["variants"].setdefault(variant, {})
                if variant in TORCH_VARIANTS:
                    tm = torch_models.get(model)
                    if tm is None:
                        raise Recorded(mres.get("torch_error", "torch model not built"))
                    us = tm.measure(variant, a.iters, a.warmup)
                else:
                    first = r == 0
                    res = aotrun_bench(a, env, mres, variant, timeout,
                                       memory=first and variant == "aotrun_graph_device")
                    us = res["latency_us"]["median"]
                    vres.setdefault("init_us", []).append(res.get("init_us"))
                    vres.setdefault("first_call_us", []).append(res.get("first_call_us"))
                    vres.setdefault("next_calls_us", []).append(res.get("next_calls_us"))
                    # Page faults of those calls (aotrun bench --json).
                    for k in ("first_call_minor_faults", "next_calls_minor_faults"):
                        vres.setdefault(k, []).append(res.get(k))
                    vres.setdefault("p99_us", []).append(res["latency_us"].get("p99"))
                    if res.get("peak_device_mib") is not None:
                        mres["aotrun_peak_device_mib"] = res["peak_device_mib"]
                    if first and variant.endswith("_device") and budget.left() > a.reserve + 10:
                        try:  # GPU busy time per call (gpu_timing on)
                            g = aotrun_bench(a, env, mres, variant,
                                             min(60, budget.left() - a.reserve),
                                             gpu_time=True)
                            vres["gpu_time_us"] = (g.get("gpu_time_us") or {}).get("median")
                            # The first call's own GPU time (events): does
                            # the GPU or the host make it slow?
                            vres["gpu_first_call_us"] = g.get("gpu_first_call_us")
                            vres["first_call_with_gpu_timing_us"] = g.get("first_call_us")
                            vres["gpu_time_note"] = g.get("gpu_time_note")
                            vres["latency_with_gpu_timing_us"] = g["latency_us"]["median"]
                        except Exception as e:
                            vres["gpu_time_error"] = describe(e)[:500]
                    if first and variant == "aotrun_graph_device" and \
                            budget.left() > a.reserve + 10:
                        try:  # the graph captured at a caller's fourth
                            # call (the default captures it at init)
                            c = aotrun_bench(a, env, mres, variant,
                                             min(60, budget.left() - a.reserve),
                                             options=["cuda_graph_capture_at_init=false"])
                            vres["lazy_capture"] = {
                                k: c.get(k) for k in ("init_us", "first_call_us",
                                                      "next_calls_us")}
                            vres["lazy_capture"]["median_us"] = \
                                c["latency_us"]["median"]
                        except Exception as e:
                            vres["lazy_capture_error"] = describe(e)[:500]
                    if first and variant == "aotrun_nograph_device" and \
                            budget.left() > a.reserve + 10:
                        try:  # the first call without init's warm-up run
                            w = aotrun_bench(a, env, mres, variant,
                                             min(60, budget.left() - a.reserve),
                                             options=["warm_up_run=false"])
                            vres["first_call_no_warm_up_run_us"] = w.get("first_call_us")
                            vres["init_no_warm_up_run_us"] = w.get("init_us")
                        except Exception as e:
                            vres["no_warm_up_run_error"] = describe(e)[:500]
                vres.setdefault("rounds_us", []).append(us)
                vres.pop("error", None)
            except Exception as e:
                msg = describe(e)[:800]
                if variant == "floor":
                    results["floor"]["error"] = msg
                else:
                    results["models"][model]["variants"].setdefault(variant, {})["error"] = msg
            print(f"round {r} {model or ''} {variant}: done", flush=True)
        results["rounds_done"] = r + 1
        finish(results)
        save()


def finish(results):
    """Medians over rounds."""
    for mres in results["models"].values():
        for vres in mres["variants"].values():
            vals = [v for v in vres.get("rounds_us", []) if v is not None]
            vres["median_us"] = statistics.median(vals) if vals else None
            for k in ("init_us", "first_call_us", "p99_us"):
                vals = [v for v in vres.get(k, []) if v is not None] \
                    if isinstance(vres.get(k), list) else []
                if vals:
                    vres[k + "_median"] = statistics.median(vals)
    if results["floor"]["rounds"]:
        results["floor"]["median"] = floor_median(results["floor"]["rounds"])


def render_markdown(res):
    """docs/benchmarks.md's section for a results dict
    (bench_overhead_report.py)."""
    return bench_overhead_report.render_markdown(res, VARIANTS)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundle", default=os.path.join(ROOT, ".gpu"),
                    help="the GPU bundle (build_gpu_bundle.sh; default .gpu)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."),
                    help="where bench_overhead.json/.md go (default $OUT)")
    ap.add_argument("--work", default="/tmp/aotrun-bench-overhead",
                    help="exported programs and packages (default %(default)s)")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--budget", type=float, default=540,
                    help="seconds for everything (default %(default)s)")
    ap.add_argument("--export-share", type=float, default=0.6,
                    help="at most this share of the budget for exports")
    ap.add_argument("--reserve", type=float, default=25,
                    help="seconds kept for writing the results")
    ap.add_argument("--jobs", type=int, default=8, help="exports at once")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gemm-lt", action="store_true",
                    help="also aotrun with AOTRUN_GEMM_LT=1 (plain GEMMs "
                         "through cuBLASLt), device I/O, without and with graphs")
    ap.add_argument("--triton-gemm", action="store_true",
                    help="also export each model with the exporter's "
                         "--triton-gemm (GEMMs as autotuned Triton kernels, "
                         "no cuBLAS call per GEMM) and run it, device I/O, "
                         "without and with graphs")
    ap.add_argument("--cublas-gemm", action="store_true",
                    help="also export each model with the exporter's "
                         "--no-small-gemm (every GEMM on cuBLAS, as before "
                         "2026-12-07) and run it, device I/O, without and "
                         "with graphs")
    ap.add_argument("--iters", type=int, default=300, help="timed calls per figure")
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--floor-reps", type=int, default=2000)
    ap.add_argument("--skip-torch-default", action="store_true",
                    help="no second export with torch's default options")
    ap.add_argument("--from-json", metavar="FILE",
                    help="print the markdown of an existing results file")
    # one export (internal: the parallel workers)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--kind", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--inputs", help=argparse.SUPPRESS)
    ap.add_argument("--how", default="package", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.worker:
        return worker_probe(a) if a.kind == "probe" else worker_export(a)
    if a.from_json:
        with open(a.from_json) as f:
            print(render_markdown(json.load(f)))
        return 0
    if a.gemm_lt:
        VARIANTS.extend(["aotrun_lt_nograph_device", "aotrun_lt_graph_device"])
    if a.triton_gemm:
        VARIANTS.extend(["aotrun_triton_nograph_device",
                         "aotrun_triton_graph_device"])
    if a.cublas_gemm:
        VARIANTS.extend(["aotrun_cublas_nograph_device",
                         "aotrun_cublas_graph_device"])
    a.models = [m for m in a.models.split(",") if m]
    bad = [m for m in a.models if m not in MODELS]
    if bad:
        ap.error(f"unknown models {bad}; known: {MODELS}")
    a.bundle = os.path.abspath(a.bundle)
    a.work = os.path.abspath(a.work)
    budget = Budget(a.budget)
    os.makedirs(a.out, exist_ok=True)
    os.makedirs(a.work, exist_ok=True)
    for kind in ["torch_default", *AOTRUN_EXPORTS]:  # export times from an empty cache
        shutil.rmtree(os.path.join(a.work, f"inductor-cache-{kind}"),
                      ignore_errors=True)
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python3 " + " ".join(shlex.quote(x) for x in
                                         [os.path.relpath(os.path.abspath(__file__), os.getcwd())]
                                         + list(sys.argv[1:] if argv is None else argv)),
        "budget_s": a.budget, "rounds": a.rounds, "iters": a.iters,
        "warmup": a.warmup, "rounds_done": 0, "notes": [],
        "models": {m: {"description": DESCRIPTIONS[m], "export": {}, "variants": {}}
                   for m in a.models},
        "floor": {"rounds": []},
    }
    t0 = time.time()

    def save():
        results["elapsed_s"] = round(time.time() - t0, 1)
        try:
            with open(os.path.join(a.out, "bench_overhead.json"), "w") as f:
                json.dump(results, f, indent=1, default=str)
            with open(os.path.join(a.out, "bench_overhead.md"), "w") as f:
                f.write(render_markdown(results) + "\n")
        except Exception as e:  # never lose the run over a report problem
            print(f"bench_overhead: writing the results failed: {e}", flush=True)

    for tool in ("bin/aotrun", "bin/launch_floor", "lib/libaotrun_cuda.so",
                 "lib/libaotrun_shim.so"):
        if not os.path.exists(os.path.join(a.bundle, tool)):
            results["notes"].append(
                f"{a.bundle}/{tool} is missing (run testing/gpu/build_gpu_bundle.sh, "
                "then testing/gpu/unpack_bundle.sh on the GPU machine)")
    try:
        results["gpu"] = gpu_info()
        save()
        run_exports(a, budget, results, save)
        probe_packages(a, budget, results, save)
        measure_rounds(a, budget, results, save)
    except Exception as e:
        results["error"] = f"{type(e).__name__}: {e}"
        results["traceback"] = traceback.format_exc()[-4000:]
        print(results["traceback"], flush=True)
    finish(results)
    save()
    print(render_markdown(results))
    print(f"bench_overhead: {time.time() - t0:.0f} s; wrote "
          f"{os.path.join(a.out, 'bench_overhead.json')} and .md", flush=True)
    return 0 if "error" not in results else 1


if __name__ == "__main__":
    sys.exit(main())
