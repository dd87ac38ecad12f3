"""Runs an exported suite (export_suite.py's OUT_DIR) through aotrun on the
GPU and compares every call with eager PyTorch; times aotrun against eager.

  python3 testing/gpu/run_suite.py SUITE_DIR WORK_DIR --bin .gpu/bin
        --lib .gpu/lib [--calls 6] [--results results.json]

Per case and method, four modes through `aotrun run --calls K` (--modes
picks some):
  nograph       plain execute, inputs and outputs in host memory
  graph         --option enable_cuda_graph_for_method=<every method>
  device        plain execute with --device-io (inputs and outputs in
                device memory: outputs written in place from the third
                call, aot_loader/output_placement.h)
  graph_device  graphs with --device-io, input and output copy nodes
                (the defaults cuda_graph_input_nodes, _output_nodes)
  graph_kernels (not in the default) graph_device with the copy nodes as
                kernel nodes (cuda_graph_copy_kernels=true)
  graph_flag    (not in the default) graph_device with each replay awaited
                on its done counter (cuda_graph_done_flag=true)
and, through aotrun_gpu_check, the CUDA graph contract: replay (mlp), a
same-byte-count reshape refused (dyn4d), capture failure retried without a
graph (mask_index, item); and, through aotrun_gpu_unload_check, the CUDA
backend loaded, run and unloaded 100 times (mlp). Benchmarks: aotrun bench with and without graphs
versus eager PyTorch (inputs and outputs in host memory for both, so the
copies are counted on both sides) and eager on device tensors.
Prints a table last; writes everything to --results.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import compare  # noqa: E402
import distribution  # noqa: E402
import st_io  # noqa: E402
import timed_run  # noqa: E402


def sh(cmd, log, timeout=300, env=None):
    t0 = time.time()
    rc, out, err = timed_run.run(cmd, timeout, env=env)
    out += err
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{out}\n[rc {rc}, {time.time() - t0:.1f}s]\n")
    return rc, out


def input_args(prog, minfo):
    """`--input FILE` for each of a method's saved inputs, in order."""
    args = []
    for p in minfo["inputs"]:
        args += ["--input", os.path.join(prog, p)]
    return args


def _actual(call_dir, j, st):
    """Output j of one call: out<j>.npy, or (st) the j-th tensor of
    outputs.safetensors (keyed by output name, in output order)."""
    if not st:
        p = os.path.join(call_dir, f"out{j}.npy")
        return np.load(p) if os.path.exists(p) else None
    p = os.path.join(call_dir, "outputs.safetensors")
    if not os.path.exists(p):
        return None
    tensors = list(st_io.load(p).values())
    return tensors[j][1] if j < len(tensors) else None


def compare_calls(suite, case, method, minfo, actual_dir, calls, atol, rtol,
                  st=False):
    """Max errors over every output of every call; None when all match."""
    worst = {"max_abs": 0.0, "max_rel": 0.0, "ok": True, "problems": []}
    for k, outs in enumerate(minfo["expected"][:calls]):
        call_dir = os.path.join(actual_dir, f"call{k}") if calls > 1 else actual_dir
        for j, rel in enumerate(outs):
            exp = os.path.join(suite, case, rel)
            g_arr = _actual(call_dir, j, st)
            if g_arr is None:
                worst["ok"] = False
                worst["problems"].append(f"call {k} out {j} missing")
                continue
            e_arr = np.load(exp)
            r = compare.errors(e_arr, g_arr, atol, rtol)
            worst["max_abs"] = max(worst["max_abs"], r.get("max_abs", 0.0))
            worst["max_rel"] = max(worst["max_rel"], r.get("max_rel", 0.0))
            if not r["ok"]:
                worst["ok"] = False
                worst["problems"].append(
                    f"call {k} out {j}: {r.get('problem', 'values differ')} "
                    f"(max abs {r.get('max_abs', '-')}; expected "
                    f"{e_arr.ravel()[:4].tolist()} got {g_arr.ravel()[:4].tolist()})")
    return worst


def aotrun_run(a, env, case, method, minfo, methods, mode, out, log,
               calls=None):
    prog = os.path.join(a.suite, case)
    os.makedirs(out, exist_ok=True)
    cmd = [os.path.join(a.bin, "aotrun"), "run", prog, "--method", method,
           "--plugin", os.path.join(a.lib, "libaotrun_cuda.so"),
           "--calls", str(calls or a.calls), "--output-dir", out]
    cmd += input_args(prog, minfo)
    cinfo = json.load(open(os.path.join(prog, "case.json")))
    st = cinfo.get("output_format") == "safetensors"
    if st:
        cmd += ["--output-format", "safetensors"]
    if mode in ("graph", "graph_device", "graph_kernels", "graph_flag"):
        cmd += ["--option", "enable_cuda_graph_for_method=" + ",".join(methods)]
    if mode in ("device", "graph_device", "graph_kernels", "graph_flag"):
        cmd.append("--device-io")
    if mode == "graph_kernels":
        cmd += ["--option", "cuda_graph_copy_kernels=true"]
    if mode == "graph_flag":  # replays awaited on their done counter
        cmd += ["--option", "cuda_graph_done_flag=true"]
    return sh(cmd, log, env=env)


def run_method(a, env, case, method, minfo, methods, mode, log):
    prog = os.path.join(a.suite, case)
    out = os.path.join(a.work, "actual", mode, case, method)
    rc, text = aotrun_run(a, env, case, method, minfo, methods, mode, out, log)
    row = {"case": case, "method": method, "mode": mode, "rc": rc}
    if rc != 0:
        row.update(ok=False, problems=[text.strip().splitlines()[-1][:300]
                                       if text.strip() else f"rc {rc}"])
        return row
    info = json.load(open(os.path.join(prog, "case.json")))
    spec = info.get("compare") or {}
    if spec.get("compare") == "distribution":
        row.update(distribution.compare(a.suite, case, minfo, out, a.calls,
                                        spec))
        seeded = distribution.seed_check(
            lambda o, seed, calls: aotrun_run(
                a, dict(env, AOTRUN_SEED=str(seed)), case, method, minfo,
                methods, mode, o, log, calls),
            os.path.join(a.work, "seeded", mode, case, method))
        row["seed"] = seeded
        if not seeded["ok"]:
            row["ok"] = False
            row["problems"] = row.get("problems", []) + seeded["problems"]
    else:
        tol = info.get("tolerance") or {}   # a case's own (e.g. float16)
        row.update(compare_calls(a.suite, case, method, minfo, out, a.calls,
                                 tol.get("atol", a.atol),
                                 tol.get("rtol", a.rtol),
                                 st=info.get("output_format") == "safetensors"))
    row["retried"] = "capture failed" in text.lower() or "retry" in text.lower()
    return row


def gpu_check(a, env, mode, case, extra, log, binary="aotrun_gpu_check"):
    prog = os.path.join(a.suite, case)
    info = json.load(open(os.path.join(prog, "case.json")))["methods"]["forward"]
    cmd = [os.path.join(a.bin, binary),
           os.path.join(a.lib, "libaotrun_cuda.so"), prog, mode]
    cmd += input_args(prog, info)
    for p in info["expected"][0]:
        cmd += ["--expected", os.path.join(prog, p)]
    rc, text = sh(cmd + extra, log, env=env)
    lines = [l for l in text.splitlines()
             if l.startswith(("PASS", "FAIL", "BENCH", "INFO: weight",
                                "INFO: batch", "INFO: cuda_graph",
                                "INFO: unload"))]
    return {"check": mode, "case": case, "args": extra, "rc": rc,
            "ok": rc == 0, "lines": lines[-12:]}


def device_used_while(cmd, log, env, timeout=600):
    """Runs cmd while sampling the device's free memory (cudaMemGetInfo
    through torch, every 5 ms). Returns (rc, stdout, peak MiB
    the run took above the level before it started). The peak is the
    process's whole footprint: its CUDA context, weights, and the shim
    pool's high-water mark (the pool keeps what it mapped, so the level
    holds until the process exits and sampling cannot miss it)."""
    import tempfile
    import torch
    torch.cuda.init()
    free0, _ = torch.cuda.mem_get_info()
    low = free0
    t0 = time.time()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        while p.poll() is None:
            low = min(low, torch.cuda.mem_get_info()[0])
            if time.time() - t0 > timeout:
                p.kill()
            time.sleep(0.005)
        rc = p.wait()
        out.seek(0)
        err.seek(0)
        text_out, text_err = out.read(), err.read()
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd)}\n{text_out}{text_err}\n"
                f"[rc {rc}, {time.time() - t0:.1f}s, device peak "
                f"{(free0 - low) / 2**20:.1f} MiB]\n")
    return rc, text_out, (free0 - low) / 2**20


def identity_check(a, env, case, log):
    """ABI 1.1 identity, devices, can_run (also for a copy relabelled for
    another GPU architecture) and device choice: aotrun_gpu_identity_check."""
    prog = os.path.join(a.suite, case)
    info = json.load(open(os.path.join(prog, "case.json")))["methods"]["forward"]
    cmd = [os.path.join(a.bin, "aotrun_gpu_identity_check"),
           os.path.join(a.lib, "libaotrun_cuda.so"), prog]
    cmd += input_args(prog, info)
    for p in info["expected"][0]:
        cmd += ["--expected", os.path.join(prog, p)]
    rc, text = sh(cmd, log, env=env)
    lines = [l for l in text.splitlines()
             if l.startswith(("PASS", "FAIL", "SKIP"))]
    return {"check": "identity", "case": case, "rc": rc, "ok": rc == 0,
            "lines": lines[-16:]}


def gpu_faults(a, env, case, log):
    """Every fault point of a CUDA method's init, execute and destroy failed
    in turn, free device memory checked (testing/backend/gpu_faults.c)."""
    prog = os.path.join(a.suite, case)
    info = json.load(open(os.path.join(prog, "case.json")))["methods"]["forward"]
    cmd = [os.path.join(a.bin, "aotrun_gpu_faults"), prog]
    cmd += input_args(prog, info)
    for p in info["expected"][0]:
        cmd += ["--expected", os.path.join(prog, p)]
    rc, text = sh(cmd, log, env=env)
    lines = [l for l in text.splitlines() if l.startswith(("PASS", "FAIL"))]
    if rc < 0 or rc > 128:   # died: say where (the last RUN line)
        runs = [l for l in text.splitlines() if l.startswith("RUN")]
        lines.append("FAIL: died (rc %d) after: %s" %
                     (rc, runs[-1] if runs else "no RUN line"))
        lines += [l for l in text.splitlines()
                  if l.startswith("CRASH") or "aotrun_gpu_faults(" in l
                  or ".so(" in l][:40]
    return {"check": "faults", "case": case, "rc": rc, "ok": rc == 0,
            "lines": lines[-52:]}


def aotrun_bench(a, env, case, graph, log):
    """aotrun bench --json: {"p50": wall us, "gpu_p50": GPU us per call,
    "device_mib": the process's peak device memory} (None where missing)."""
    prog = os.path.join(a.suite, case)
    info = json.load(open(os.path.join(prog, "case.json")))["methods"]["forward"]
    cmd = [os.path.join(a.bin, "aotrun"), "bench", prog,
           "--plugin", os.path.join(a.lib, "libaotrun_cuda.so"),
           "--iterations", str(a.iters), "--warmup", "20", "--json"]
    cmd += input_args(prog, info)
    if graph:
        cmd += ["--option", "enable_cuda_graph_for_method=forward"]
    rc, text, peak = device_used_while(cmd, log, env)
    res = {"p50": None, "gpu_p50": None,
           "device_mib": round(peak, 1) if rc == 0 else None}
    try:
        j = json.loads(text[text.index("{"):]) if rc == 0 else {}
    except ValueError:
        j = {}
    res["p50"] = (j.get("latency_us") or {}).get("median")
    res["gpu_p50"] = (j.get("gpu_time_us") or {}).get("median")
    return res


def eager_times(suite, case, iters):
    """Median us per call of eager PyTorch: host in/out (like aotrun run)
    and device tensors only."""
    import torch
    import models
    module, methods = models.BY_NAME[case].build("cuda")
    fn, args = methods["forward"]
    host_args = [x.cpu() for x in args]

    def host_call():
        outs = fn(*[x.cuda(non_blocking=False) for x in host_args])
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        return [o.cpu() if isinstance(o, torch.Tensor) else o for o in outs]

    def dev_call():
        fn(*args)
        torch.cuda.synchronize()

    calls = [("eager_host_io", host_call), ("eager_device", dev_call)]
    pt2 = [p for p in os.listdir(os.path.join(suite, case)) if p.endswith(".pt2")]
    aoti_error = None
    try:  # torch's own AOTInductor runner on the same compiled model
        runner = torch._inductor.aoti_load_package(
            os.path.join(suite, case, sorted(pt2)[0])) if pt2 else None
    except Exception as e:  # a link_libtorch=False library may not load
        runner, aoti_error = None, f"{type(e).__name__}: {e}"[:200]
    if runner is not None:
        def aoti_call():
            runner(*args)
            torch.cuda.synchronize()
        calls.append(("torch_aoti_device", aoti_call))
    res = {}
    with torch.no_grad(), models.eager_sdpa(models.BY_NAME[case]):
        for name, f in calls:
            for _ in range(20):
                f()
            ts = []
            for _ in range(iters):
                t0 = time.perf_counter()
                f()
                ts.append((time.perf_counter() - t0) * 1e6)
            res[name] = statistics.median(ts)
        # Peak of one device call above what the inputs and weights hold:
        # the caching allocator's bytes (allocated) and what it mapped
        # (reserved; no CUDA context in either).
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        dev_call()
        res["eager_peak_alloc_mib"] = round(
            (torch.cuda.max_memory_allocated() - base) / 2**20, 1)
        res["eager_peak_reserved_mib"] = round(
            torch.cuda.max_memory_reserved() / 2**20, 1)
    if aoti_error:
        res["torch_aoti_error"] = aoti_error
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("suite")
    ap.add_argument("work")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--calls", type=int, default=6)
    ap.add_argument("--iters", type=int, default=500)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--rtol", type=float, default=1e-3)
    ap.add_argument("--results", default="results.json")
    ap.add_argument("--modes", default="nograph,graph,device,graph_device",
                    help="comma-separated e2e modes (see the top)")
    ap.add_argument("--bench", default="mlp,transformer,cnn,float64,counter,"
                    "transformer_t2048_fused,transformer_t2048_math")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    log = os.path.join(a.work, "run_suite.log")
    env = dict(os.environ, AOTRUN_LOG_LEVEL="info")
    summary = json.load(open(os.path.join(a.suite, "summary.json")))["cases"]
    results = {"e2e": [], "checks": [], "bench": [], "export": {},
               "fallbacks": {}, "complete": False}

    def save():
        """After each case and check: a run cut short by its budget still
        leaves every comparison made so far ("complete": false)."""
        tmp = a.results + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1)
        os.replace(tmp, a.results)
    for case, r in summary.items():
        results["export"][case] = r["status"] if r["status"] == "ok" else r["error"][:300]
        if r["status"] != "ok":
            continue
        results["fallbacks"][case] = sorted({
            n for names in r["case"].get("imports", {}).values() for n in names
            if re.match(r"aoti_torch_(cuda_|index_put|scatter)", n)})
        methods = list(r["case"]["methods"])
        for method, minfo in r["case"]["methods"].items():
            for mode in a.modes.split(","):
                row = run_method(a, env, case, method, minfo, methods, mode,
                                 log)
                results["e2e"].append(row)
                print(f"{case:20} {method:8} {mode:12} "
                      f"{'ok' if row['ok'] else 'FAIL'} "
                      f"abs {row.get('max_abs', '-')} {row.get('problems', '')}",
                      flush=True)
        save()
    # The lazy path (capture at call 4, as a dynamic graph still takes)
    # and --capture-at-init 1 (the backend's default): Replay from init on.
    checks = [("replay", "mlp", ["--calls", "8"]),
              ("replay", "mlp", ["--calls", "8", "--capture-at-init", "1"]),
              ("shape", "dyn4d", ["--reshape", "0:2,4,3,4"]),
              ("recapture", "dyn4d", ["--reshape", "0:2,4,3,4"]),
              ("shapes", "mlp", ["--batches", "1,2,4,2,1", "--graphs", "3",
                                 "--calls", "30", "--iters", "500"]),
              ("share", "two_methods", ["--method2", "decode"]),
              ("retry", "mask_index", ["--calls", "6"]),
              ("retry", "item", ["--calls", "6"]),
              ("unload", "mlp", ["--rounds", "100"]),
              ("bench", "mlp", ["--iters", str(a.iters * 4)])]
    # execute_ex (ABI 1.1): caller streams, async, managed outputs
    # (aotrun_stream_check; issues 16 and 17).
    checks += [("streams", "mlp", ["--calls", "10"]),
               ("managed", "mask_index", ["--calls", "6"])]
    # The load-time free-memory check with the device filled (issue 15);
    # last, so a filled device cannot disturb the others.
    checks += [("fullmem", "transformer_t2048_fused", [])]
    for mode, case, extra in checks:
        if summary.get(case, {}).get("status") == "ok":
            binary = ("aotrun_stream_check" if mode in ("streams", "managed")
                      else "aotrun_gpu_unload_check" if mode == "unload"
                      else "aotrun_gpu_check")
            c = gpu_check(a, env, mode, case, extra, log, binary)
            results["checks"].append(c)
            save()
            print(f"gpu_check {mode} {case}: {'ok' if c['ok'] else 'FAIL'} "
                  f"{c['lines'][-3:]}", flush=True)
    if summary.get("mlp", {}).get("status") == "ok":
        c = identity_check(a, env, "mlp", log)
        results["checks"].append(c)
        print(f"identity mlp: {'ok' if c['ok'] else 'FAIL'} {c['lines'][-3:]}",
              flush=True)
        c = gpu_faults(a, env, "mlp", log)
        results["checks"].append(c)
        print(f"gpu_faults mlp: {'ok' if c['ok'] else 'FAIL'} {c['lines'][-4:]}",
              flush=True)
    for case in a.bench.split(","):
        if summary.get(case, {}).get("status") != "ok":
            continue
        row = {"case": case}
        for mode, graph in (("nograph", False), ("graph", True)):
            r = aotrun_bench(a, env, case, graph, log)
            row[f"aotrun_{mode}"] = r["p50"]
            row[f"aotrun_{mode}_gpu_us"] = r["gpu_p50"]
            row[f"aotrun_{mode}_device_mib"] = r["device_mib"]
        try:
            row.update(eager_times(a.suite, case, a.iters))
        except Exception as e:  # report, keep going
            row["eager_error"] = f"{type(e).__name__}: {e}"[:300]
        results["bench"].append(row)
        print("bench", row, flush=True)
    results["complete"] = True
    save()
    bad = sum(not r["ok"] for r in results["e2e"]) + \
        sum(not c["ok"] for c in results["checks"])
    total = len(results["e2e"]) + len(results["checks"])
    print(f"{total - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
