#!/usr/bin/env python3
"""Why torch's AOTI runner dies on its own package on the GPU machine, and
whether a lower layer of it loads (issue 12: init against torch's runner).

One tiny MLP is exported once with torch's defaults
(aoti_compile_and_package); each way of loading it then runs in its own
process (a crash must not end the probe), with the environment of the
benchmark's torch probe (no LD_LIBRARY_PATH, no LD_PRELOAD):

  package       torch._inductor.aoti_load_package(pt2)  (what the benchmark does)
  package_1t    the same with run_single_threaded=True
  runner_so     torch._C._aoti.AOTIModelContainerRunnerCuda on the .so
                extracted from the package (the class under the package loader)
  package_cxxrt aoti_load_package with the C++ runtime of the compiler that
                built the package's wrapper in LD_PRELOAD (`g++
                -print-file-name=libstdc++.so.6`), when it is not the one
                the process maps: the wrapper dies compiling a std::regex
                (2026-12-07), and a libstdc++ older than the compiler's
                headers is the first suspect

"runtime" records the compiler (version, its libstdc++) and the libstdc++
a process that imported torch maps.

Each records load and first-call seconds, or the error / signal with the
last lines of stderr. A loader that dies is run once more for its native
frames: under gdb where the machine has it, else with --preload's crash
reporter (testing/gpu/profile/crash_backtrace.c, built into the bundle by
build_gpu_bundle.sh) in LD_PRELOAD. The results file is rewritten after
each step, so a probe cut by its caller's limit keeps what it learned;
--ways picks the loads (the crashing ones each add a rerun).
    python3 testing/gpu/probe_torch_runner.py --work /tmp/probe --out $OUT/probe_torch_runner.json \
        [--preload .gpu/lib/libcrash_backtrace.so] [--ways package_cxxrt]
"""
import argparse
import glob
import json
import os
import shutil
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import timed_run  # noqa: E402


def clean_env(cache):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    env["TORCHINDUCTOR_CACHE_DIR"] = cache
    env["PYTHONFAULTHANDLER"] = "1"
    return env


def model():
    import torch
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                            torch.nn.Linear(128, 16)).cuda().eval()
    return m, (torch.randn(4, 64, device="cuda"),)


def worker_export(a):
    import torch
    m, args = model()
    t0 = time.time()
    with torch.no_grad():
        ep = torch.export.export(m, args)
        path = torch._inductor.aoti_compile_and_package(
            ep, package_path=os.path.join(a.work, "mlp.pt2"))
    print(json.dumps({"pt2": path, "seconds": time.time() - t0}))


def mapped_libstdcxx():
    """The libstdc++ this process maps (after importing torch)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if "libstdc++" in line:
                    return line.split()[-1]
    except OSError:
        pass
    return None


def worker_runtime(a):
    import torch  # noqa: F401  (what torch's process maps)
    print(json.dumps({"process_libstdcxx": mapped_libstdcxx()}))


def compiler_facts():
    """The C++ compiler AOTInductor calls ($CXX, else g++: torch's
    config.cpp.cxx default on Linux) and its libstdc++."""
    cxx = os.environ.get("CXX") or "g++"
    facts = {}
    rc, out, err = run([cxx, "--version"], None, 30)
    facts["compiler"] = (out.splitlines() or [err.strip()])[0] if rc == 0 else err.strip()[:200]
    rc, out, _ = run([cxx, "-print-file-name=libstdc++.so.6"], None, 30)
    path = out.strip() if rc == 0 else ""
    facts["compiler_libstdcxx"] = os.path.realpath(path) if os.path.isabs(path) else None
    return facts


def worker_load(a):
    import torch
    m, args = model()
    t0 = time.time()
    if a.how in ("package", "package_1t", "package_cxxrt"):
        kw = {"run_single_threaded": True} if a.how == "package_1t" else {}
        runner = torch._inductor.aoti_load_package(a.pt2, **kw)
        t1 = time.time()
        out = runner(*args)
        out = out[0] if isinstance(out, (list, tuple)) else out
    else:
        runner = torch._C._aoti.AOTIModelContainerRunnerCuda(a.so, 1, "cuda", a.cubin_dir)
        t1 = time.time()
        out = runner.run(list(args))[0]
    torch.cuda.synchronize()
    t2 = time.time()
    with torch.no_grad():
        ref = m(*args)
    print(json.dumps({"load_s": t1 - t0, "first_call_s": t2 - t1,
                      "max_abs": float((out - ref).abs().max())}))


def run(cmd, env, timeout):
    """(rc, stdout, stderr); a run past its limit keeps what it printed."""
    return timed_run.run(cmd, timeout, env=env)


def native_frames(cmd, env, preload):
    """The crash reporter's lines from a rerun of `cmd` with it preloaded
    (the signal, the fault address, one line per frame)."""
    libs = [os.path.abspath(preload)] + ([env["LD_PRELOAD"]] if env.get("LD_PRELOAD") else [])
    rc, out, err = run(cmd, dict(env, LD_PRELOAD=" ".join(libs)), 180)
    lines = [l for l in (out + err).splitlines() if l.startswith("crash_backtrace:")]
    return lines[:80] or [f"no report (rc {rc}): {err[-300:]}"]


def last_json(text):
    for line in reversed((text or "").splitlines()):
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


def save(path, res):
    """The results so far: a run cut by its caller's limit keeps them."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, path)


def extract(pt2, work):
    d = os.path.join(work, "extracted")
    shutil.rmtree(d, ignore_errors=True)
    with zipfile.ZipFile(pt2) as z:
        z.extractall(d)
    sos = sorted(glob.glob(os.path.join(d, "**", "*.so"), recursive=True))
    return sos, d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/probe_torch_runner")
    ap.add_argument("--out", required=True)
    ap.add_argument("--worker", choices=["export", "load", "runtime"])
    ap.add_argument("--how", default="package")
    ap.add_argument("--pt2")
    ap.add_argument("--so")
    ap.add_argument("--cubin-dir", default="")
    ap.add_argument("--preload", default=None,
                    help="libcrash_backtrace.so: native frames of a loader that dies")
    ap.add_argument("--ways", default="",
                    help="comma list of the loads to try (package, package_1t, "
                         "runner_so, package_cxxrt); default all")
    a = ap.parse_args()
    if a.worker == "export":
        return worker_export(a)
    if a.worker == "load":
        return worker_load(a)
    if a.worker == "runtime":
        return worker_runtime(a)
    os.makedirs(a.work, exist_ok=True)
    env = clean_env(os.path.join(a.work, "inductor_cache"))
    me = [sys.executable, os.path.abspath(__file__), "--work", a.work, "--out", a.out]
    res = {"gdb": shutil.which("gdb")}
    runtime = compiler_facts()
    rc, out, err = run(me + ["--worker", "runtime"], env, 120)
    runtime.update(last_json(out) or {"process_libstdcxx_error": err[-300:]})
    res["runtime"] = runtime
    save(a.out, res)
    rc, out, err = run(me + ["--worker", "export"], env, 300)
    res["export"] = last_json(out) or {"rc": rc, "stderr": err[-3000:]}
    save(a.out, res)
    pt2 = (res["export"] or {}).get("pt2")
    if pt2:
        sos, d = extract(pt2, a.work)
        res["package_files"] = [os.path.relpath(p, d) for p in
                                sorted(glob.glob(os.path.join(d, "**", "*"), recursive=True))
                                if os.path.isfile(p)][:40]
        ways = [("package", ["--pt2", pt2]), ("package_1t", ["--pt2", pt2])]
        for so in sos:
            ways.append(("runner_so", ["--so", so, "--cubin-dir", os.path.dirname(so)]))
        cxxrt = runtime.get("compiler_libstdcxx")
        mapped = runtime.get("process_libstdcxx")
        if cxxrt and (not mapped or os.path.realpath(mapped) != cxxrt):
            ways.append(("package_cxxrt", ["--pt2", pt2]))
        chosen = set(filter(None, a.ways.split(",")))
        for how, extra in ways:
            if chosen and how not in chosen:
                continue
            cmd = me + ["--worker", "load", "--how", how] + extra
            how_env = dict(env, LD_PRELOAD=cxxrt) if how == "package_cxxrt" else env
            rc, out, err = run(cmd, how_env, 180)
            r = last_json(out) or {}
            r.update({"rc": rc, "stderr_tail": err[-2500:]})
            if rc < 0 and res["gdb"]:
                g = run(["gdb", "-batch", "-ex", "run", "-ex", "bt 40", "--args"] + cmd,
                        env, 300)
                r["gdb_tail"] = (g[1] + g[2])[-6000:]
            elif rc < 0 and a.preload:
                r["native_frames"] = native_frames(cmd, how_env, a.preload)
            res.setdefault("load", []).append({"how": how, "args": extra, **r})
            save(a.out, res)
            print(how, rc, {k: r.get(k) for k in ("load_s", "first_call_s", "max_abs")},
                  flush=True)
    save(a.out, res)
    print(json.dumps(res, indent=1)[-8000:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
