"""Runs every GPU job of jobs.py once per session, in parallel processes
(each an AOTInductor compile; a device assert in one cannot poison
another's CUDA context), and hands the results to the tests."""

import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def _cuda_reason():
    try:
        import torch
    except ImportError as e:
        return f"no torch: {e}"
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    return None


@pytest.fixture(scope="session")
def gpu_jobs():
    # AOTRUN_PASS_JOBS_DEVICE=cpu runs the jobs on the CPU: a check of this
    # runner only (the facts the tests assert are GPU behaviour).
    device = os.environ.get("AOTRUN_PASS_JOBS_DEVICE", "cuda")
    reason = _cuda_reason() if device == "cuda" else None
    if reason:
        print(f"SKIP testing/gpu/export_passes: {reason}")
        pytest.skip(reason)
    from jobs import JOBS
    workers = int(os.environ.get("AOTRUN_PASS_JOBS", min(len(JOBS),
                                                         os.cpu_count() or 4)))
    out_dir = tempfile.mkdtemp(prefix="aotrun-pass-jobs-")
    pending = sorted(JOBS)
    running, results = {}, {}
    t0 = time.time()
    while pending or running:
        while pending and len(running) < workers:
            job = pending.pop(0)
            out = os.path.join(out_dir, f"{job}.json")
            log = open(os.path.join(out_dir, f"{job}.log"), "w")
            p = subprocess.Popen([sys.executable, os.path.join(HERE, "jobs.py"),
                                  job, out, "--device", device], stdout=log,
                                 stderr=subprocess.STDOUT)
            running[job] = (p, out, log)
        for job, (p, out, log) in list(running.items()):
            if p.poll() is None and time.time() - t0 < 900:
                continue
            if p.poll() is None:
                p.kill()
                p.wait()
            log.close()
            results[job] = _result(p.returncode, out, log.name)
            del running[job]
        time.sleep(0.5)
    print(f"export_passes jobs: {time.time() - t0:.0f} s, logs in {out_dir}")
    return results


def _result(rc, out, log_path):
    if os.path.exists(out):
        with open(out) as f:
            return json.load(f)
    with open(log_path, errors="replace") as f:
        tail = f.read()[-4000:]
    return {"ok": False, "crashed": True, "returncode": rc, "error": tail}
