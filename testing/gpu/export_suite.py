"""Exports the public model suite (models.py) into aotrun programs, with
inputs and eager reference outputs, on the GPU machine.

  python3 testing/gpu/export_suite.py OUT_DIR [--shim-exports FILE]...
        [--calls K] [--only NAME,...] [--triton-gemm] [--no-small-gemm] [--device cuda]

For each case NAME (continuing past failures):
  OUT_DIR/NAME/manifest.json, METHOD.so, weights.safetensors   the program
  OUT_DIR/NAME/inputs/in<i>.npy            forward's inputs
  OUT_DIR/NAME/inputs/METHOD/in<i>.npy     another method's inputs
  OUT_DIR/NAME/expected/call<k>_out<j>.npy forward's eager outputs of call k
  OUT_DIR/NAME/expected/METHOD/call<k>_out<j>.npy
  OUT_DIR/NAME/case.json                   the files above, per method
OUT_DIR/summary.json: per case "ok" or the error (and traceback).
OUT_DIR/run_aotrun.sh: runs call 0 of every method with `aotrun run`,
writing ACTUAL/NAME/METHOD/call0/out<j>.npy for compare.py.
"""

import argparse
import copy
import json
import os
import shlex
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "backend_cuda", "export"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import models  # noqa: E402
import st_io  # noqa: E402
from aotrun_export import export_program  # noqa: E402


def _np(v):
    if isinstance(v, torch.Tensor):
        return v.detach().cpu().numpy()
    return np.asarray(v)


def _is_bf16(v):
    return isinstance(v, torch.Tensor) and v.dtype == torch.bfloat16


def _flat(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r.extend(_flat(o))
        return r
    return [out]


def _dirs(method):
    return ("inputs", "expected") if method == "forward" else (
        f"inputs/{method}", f"expected/{method}")


def write_reference(case_dir, module, methods, calls, stateful):
    """Saves inputs and `calls` consecutive eager outputs per method (on a
    copy of the module, so the exported state is the initial one)."""
    info = {}
    ref = copy.deepcopy(module)
    for name, (fn, args) in methods.items():
        bound = getattr(ref, fn.__name__) if not isinstance(fn, torch.nn.Module) else ref
        in_dir, exp_dir = _dirs(name)
        os.makedirs(os.path.join(case_dir, in_dir), exist_ok=True)
        os.makedirs(os.path.join(case_dir, exp_dir), exist_ok=True)
        ins = []
        for i, a in enumerate(args):
            # .npy has no bfloat16: such inputs go through the CLI's
            # .safetensors input (keyed by the input's index).
            if _is_bf16(a):
                p = f"{in_dir}/in{i}.safetensors"
                st_io.save(os.path.join(case_dir, p), {str(i): a})
            else:
                p = f"{in_dir}/in{i}.npy"
                np.save(os.path.join(case_dir, p), _np(a))
            ins.append(p)
        per_call = []
        with torch.no_grad():
            for k in range(calls):
                outs = []
                for j, o in enumerate(_flat(bound(*args))):
                    p = f"{exp_dir}/call{k}_out{j}.npy"
                    # bfloat16 expected values widened to float32 (exact).
                    np.save(os.path.join(case_dir, p),
                            _np(o.float() if _is_bf16(o) else o))
                    outs.append(p)
                    if _is_bf16(o):
                        info.setdefault("_bf16_outputs", True)
                per_call.append(outs)
        info[name] = {"inputs": ins, "expected": per_call}
    # Any bfloat16 output: aotrun writes outputs.safetensors (run_suite.py).
    st_out = bool(info.pop("_bf16_outputs", False))
    return {"stateful": stateful, "calls": calls, "methods": info,
            "output_format": "safetensors" if st_out else "npy"}


def run_case(case, out_dir, args, log):
    case_dir = os.path.join(out_dir, case.name)
    module, methods = case.build(args.device)
    # A deterministic case is exported with deterministic=True and its
    # reference computed in eager deterministic mode (one defined result
    # for repeated scatter targets, accumulation in index order).
    det = bool(case.extra.get("deterministic"))
    was = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(det or was)
    try:
        with models.eager_sdpa(case):
            ref = write_reference(case_dir, module, methods, args.calls,
                                  case.stateful)
    finally:
        torch.use_deterministic_algorithms(was)
    dyn = case.dynamic_shapes() if case.dynamic_shapes else None
    t0 = time.time()
    manifest = export_program(methods, case_dir, dynamic_shapes=dyn,
                              triton_gemm=args.triton_gemm,
                              small_gemm=not args.no_small_gemm,
                              shim_exports=args.shim_exports,
                              keep_packages=args.keep_packages,
                              deterministic=det,
                              attention_math=case.extra.get("attention_math"),
                              inductor_configs=case.extra.get(
                                  "inductor_configs"),
                              log=log)
    ref["export_seconds"] = round(time.time() - t0, 1)
    ref["notes"] = {m: e.get("notes", []) for m, e in manifest["methods"].items()}
    ref["imports"] = {m: e.get("aoti_torch_imports", [])
                      for m, e in manifest["methods"].items()}
    if "tolerance" in case.extra:   # {"atol": .., "rtol": ..} for run_suite
        ref["tolerance"] = case.extra["tolerance"]
    if case.extra.get("compare") == "distribution":   # run_suite's comparator
        ref["compare"] = {k: case.extra[k] for k in
                          ("compare", "tv_max", "mean_atol", "std_rtol")}
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(ref, f, indent=1)
    return ref


def export_one(name, args):
    print(f"== {name}", flush=True)
    try:
        ref = run_case(models.BY_NAME[name], args.out_dir, args,
                       log=lambda s: print("   " + s, flush=True))
        print(f"   ok ({ref['export_seconds']} s)", flush=True)
        return {"status": "ok", "case": ref}
    except Exception as e:  # keep going: record and report every case
        print(f"   FAILED: {type(e).__name__}: {str(e)[:2000]}", flush=True)
        return {"status": "error", "error": f"{type(e).__name__}: {e}",
                "traceback": traceback.format_exc()}


def export_parallel(names, args):
    """Each case in its own process (compiles are CPU-bound and torch keeps
    global state), `args.jobs` at a time; their logs are printed in order."""
    import subprocess
    import tempfile
    from concurrent.futures import ThreadPoolExecutor
    tmp = tempfile.mkdtemp(prefix="export-suite-")

    def work(name):
        res_path = os.path.join(tmp, name + ".json")
        cmd = [sys.executable, os.path.abspath(__file__), args.out_dir,
               "--only", name, "--calls", str(args.calls),
               "--device", args.device, "--one-result", res_path]
        if args.shim_exports:
            cmd += ["--shim-exports", *args.shim_exports]
        if args.triton_gemm:
            cmd.append("--triton-gemm")
        if args.no_small_gemm:
            cmd.append("--no-small-gemm")
        if args.keep_packages:
            cmd.append("--keep-packages")
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        try:
            with open(res_path) as f:
                res = json.load(f)
        except (OSError, ValueError):
            res = {"status": "error",
                   "error": f"export worker exited {p.returncode}: "
                            f"{(p.stderr or '')[-1500:]}"}
        return name, res, p.stdout + p.stderr

    results = {}
    with ThreadPoolExecutor(args.jobs) as ex:
        for name, res, out in ex.map(work, names):
            print(out.rstrip(), flush=True)
            results[name] = res
    return results


def write_runner(out_dir, results):
    lines = ["#!/usr/bin/env bash",
             "# Runs call 0 of every exported method with aotrun.",
             "#   AOTRUN=path/to/aotrun ACTUAL=dir bash run_aotrun.sh",
             'set -u; here="$(cd "$(dirname "$0")" && pwd)"',
             'AOTRUN=${AOTRUN:-aotrun}; ACTUAL=${ACTUAL:-$here/actual}; rc=0']
    for name, r in results.items():
        if r.get("status") != "ok":
            continue
        for method, m in r["case"]["methods"].items():
            od = f"$ACTUAL/{name}/{method}/call0"
            ins = " ".join(f"--input \"$here/{name}/{p}\"" for p in m["inputs"])
            lines.append(f'mkdir -p "{od}"; "$AOTRUN" run "$here/{name}" '
                         f'--method {shlex.quote(method)} {ins} '
                         f'--output-dir "{od}" || {{ echo "FAILED: {name} '
                         f'{method}"; rc=1; }}')
    lines.append("exit $rc")
    p = os.path.join(out_dir, "run_aotrun.sh")
    with open(p, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(p, 0o755)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--shim-exports", nargs="+", default=None, metavar="FILE",
                    help="libaotrun_shim.so and/or exports .txt files")
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--only", default="", help="comma-separated case names")
    ap.add_argument("--triton-gemm", action="store_true")
    ap.add_argument("--no-small-gemm", action="store_true",
                    help="every GEMM on cuBLAS (the exporter's small_gemm "
                    "pass left out)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--keep-packages", action="store_true",
                    help="keep the .pt2 packages (to time torch's own runner)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="export this many cases at once (one process each)")
    ap.add_argument("--one-result", default="", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or [c.name for c in models.CASES]
    unknown = [n for n in names if n not in models.BY_NAME]
    if unknown:
        ap.error(f"unknown cases {unknown}; known: {list(models.BY_NAME)}")
    os.makedirs(args.out_dir, exist_ok=True)
    if args.one_result:   # a worker of --jobs: one case, result to a file
        res = export_one(names[0], args)
        with open(args.one_result, "w") as f:
            json.dump(res, f)
        return 0
    results = {}
    if args.jobs > 1 and len(names) > 1:
        results = export_parallel(names, args)
    else:
        for n in names:
            results[n] = export_one(n, args)
    with open(os.path.join(args.out_dir, "summary.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": results}, f, indent=1)
    write_runner(args.out_dir, results)
    ok = sum(r["status"] == "ok" for r in results.values())
    print(f"{ok} exported, {len(results) - ok} failed")
    return 0 if ok == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
