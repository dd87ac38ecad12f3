"""Kernels per call for the side-by-side harness (bench_overhead.py,
issue 12): counted in the wrapper source of an AOTInductor package, and in
one call of aotrun's program by CUPTI (count_kernels.py, in a process of
its own); wrapper_n picks the floor's N from what was counted. No torch
at import."""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def count_wrapper_kernels(cpp):
    """Kernel launches per call in an AOTInductor wrapper.cpp: invocations
    of call_triton_* (not their definitions) and extern kernel calls
    (aoti_torch_cuda_*, aoti_torch_copy_) inside run_impl (constant folding,
    run once, is left out). Returns {"triton", "extern", "total",
    "names": {...}, "scope"}."""
    body, scope = cpp, "whole file"
    m = re.search(r"void\s+AOTInductorModel::run_impl\s*\(", cpp)
    if m:
        end = cpp.find("// AOTInductorModel::run_impl", m.end())
        if end < 0:
            nxt = re.search(r"\n}\s*//\s*namespace", cpp[m.end():])
            end = m.end() + nxt.start() if nxt else len(cpp)
        body, scope = cpp[m.start():end], "run_impl"
    names = {}
    triton = 0
    for t in re.finditer(r"(?<![\w])(call_triton_\w+|launchKernel)\s*\(", body):
        before = body[max(0, t.start() - 40):t.start()]
        if re.search(r"\bvoid\s+$", before):
            continue  # a definition
        triton += 1
        names[t.group(1)] = names.get(t.group(1), 0) + 1
    extern = 0
    for e in re.finditer(r"(?<![\w])(aoti_torch_cuda_\w+|aoti_torch_copy_)\s*\(",
                         body):
        extern += 1
        names[e.group(1)] = names.get(e.group(1), 0) + 1
    return {"triton": triton, "extern": extern, "total": triton + extern,
            "names": names, "scope": scope}


def count_package_kernels(pt2):
    import zipfile
    with zipfile.ZipFile(pt2) as z:
        cpps = [n for n in z.namelist() if n.endswith(".wrapper.cpp")]
        if not cpps:
            raise ValueError(f"{pt2}: no *.wrapper.cpp in the package")
        return count_wrapper_kernels(z.read(cpps[0]).decode("utf-8", "replace"))


def count_program_kernels(a, env, mres):
    """The kernels aotrun's program launches in one call, counted by CUPTI
    (testing/gpu/count_kernels.py, in its own process so aotrun is not
    loaded into the bench's torch process); recorded in mres as
    kernels_aotrun_profiler (with the per-kernel names) or its error."""
    exp = mres["export"].get("aotrun", {})
    if "program" not in exp:
        return
    cmd = [sys.executable, os.path.join(HERE, "count_kernels.py"),
           exp["program"], "--lib", os.path.join(a.bundle, "lib"),
           "--plugin", os.path.join(a.bundle, "lib", "libaotrun_cuda.so")]
    for p in exp.get("inputs", []):
        cmd += ["--input", p]
    try:
        r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=120)
        res = json.loads(r.stdout.strip().splitlines()[-1])
    except Exception as e:
        res = {"error": f"{type(e).__name__}: {e}"[:300]}
    if "error" in res:
        mres["kernels_aotrun_profiler_error"] = res["error"]
    else:
        mres["kernels_aotrun_profiler"] = res["kernels"]
        mres["kernels_aotrun_names"] = res["names"]


def wrapper_n(mres):
    """The floor's N: the kernels aotrun's program launched in one call
    (CUPTI), else the wrapper's count, else torch eager's."""
    n = mres.get("kernels_aotrun_profiler")
    if n:
        return n, "aotrun profiler"
    k = mres["export"].get("aotrun", {}).get("kernels")
    if k and k.get("total"):
        return k["total"], "wrapper"
    n = mres.get("kernels_eager_profiler")
    if n:
        return n, "eager profiler"
    return None, None
