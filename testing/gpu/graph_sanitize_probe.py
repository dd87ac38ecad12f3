"""Issue 13's open question, narrowed on aotrun's own graph: synccheck dies
(SIGSEGV in cuGraphLaunch's tool hook) at the second replay of a device-I/O
graph that holds memcpy nodes, and a plain-CUDA graph of the same shape
does not (docs/reliability.md). This runs one exported suite program
(default: mlp) under synccheck with one thing changed per variant, each a
few times, and traces the graph calls (testing/gpu/profile/graph_trace.c)
with and without the tool, so what the crash needs is read from one call:

    python3 testing/gpu/graph_sanitize_probe.py --suite DIR --out $OUT

Variants: the default (input and output memcpy nodes); no kernel
instrumented (`--kernel-name-exclude kr=.*`: the crash is then the launch
hook's, not a kernel's); API memory checks off; modules loaded eagerly;
init's warm-up run off; the copies as kernel nodes (the clean control);
the graph captured at init (the default since 2026-12-08; the others
capture in call 4, as when the crash was found).
Writes graph_sanitize_probe.json (per variant: rc of each run, the call it
died at) and the traces under --out.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_suite  # noqa: E402
import sanitize  # noqa: E402

VARIANTS = [
    ("default", [], {}, []),
    ("no_kernel_instrumented", ["--kernel-name-exclude", "regex=."], {}, []),
    ("api_memory_checks_off", ["--check-api-memory-access", "no"], {}, []),
    ("modules_eager", [], {"CUDA_MODULE_LOADING": "EAGER"}, []),
    ("warm_up_run_off", [], {}, ["--option", "warm_up_run=false"]),
    ("copy_kernels", [], {}, ["--option", "cuda_graph_copy_kernels=true"]),
    ("captured_at_init", [], {}, ["--option", "cuda_graph_capture_at_init=true"]),
]


def last_call(text):
    """The last `call N` line aotrun run printed (-1: none)."""
    calls = [int(m) for m in re.findall(r"method \S+, call (\d+)", text)]
    return calls[-1] if calls else -1


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           errors="replace", timeout=timeout)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        return 124, out


def aotrun_cmd(a, prog, method, minfo, calls, extra):
    cmd = [os.path.join(a.bundle, "bin", "aotrun"), "run", prog,
           "--plugin", os.path.join(a.bundle, "lib", "libaotrun_cuda.so"),
           "--method", method, "--calls", str(calls)]
    cmd += run_suite.input_args(prog, minfo)
    # The capture in call 4, as when the crash was found (a later option
    # wins: variant captured_at_init sets it back on).
    cmd += sanitize.mode_args("graph_device", method) + [
        "--option", "cuda_graph_capture_at_init=false"] + extra
    return cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", required=True, help="export_suite.py's folder")
    ap.add_argument("--case", default="mlp")
    ap.add_argument("--tool", default="synccheck",
                    help="compute-sanitizer tool (racecheck crashed the cnn)")
    ap.add_argument("--bundle", default=os.path.join(HERE, "..", "..", ".gpu"))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--calls", type=int, default=6)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--variants", default="",
                    help="comma list of variant names (default: all)")
    ap.add_argument("--budget", type=float, default=240,
                    help="seconds: no run starts after them")
    a = ap.parse_args()
    deadline = time.time() + a.budget
    cs = sanitize.sanitizer()
    if cs is None:
        print("SKIP: compute-sanitizer not found")
        return 77
    prog = os.path.join(a.suite, a.case)
    info = json.load(open(os.path.join(prog, "case.json")))
    method = "forward" if "forward" in info["methods"] else next(iter(info["methods"]))
    minfo = info["methods"][method]
    env0 = dict(os.environ)
    results = {"case": a.case, "tool": a.tool, "calls": a.calls,
               "variants": {}}
    helptext = run([cs, "--help"], env0, 30)[1]
    with open(os.path.join(a.out, "compute_sanitizer_help.txt"), "w") as f:
        f.write(helptext)
    wanted = [v for v in a.variants.split(",") if v]
    unknown = set(wanted) - {v[0] for v in VARIANTS}
    if unknown:
        ap.error("unknown variants %s; known: %s" % (
            ", ".join(sorted(unknown)), ", ".join(v[0] for v in VARIANTS)))
    for name, tool_args, env_add, run_args in VARIANTS:
        if wanted and name not in wanted:
            continue
        rows = []
        for _ in range(a.runs):
            if time.time() > deadline:
                break
            env = dict(env0, **env_add)
            cmd = [cs, "--tool", a.tool] + tool_args + \
                aotrun_cmd(a, prog, method, minfo, a.calls, run_args)
            rc, text = run(cmd, env, a.timeout)
            rows.append({"rc": rc, "last_call": last_call(text),
                         "tail": text.strip().splitlines()[-3:]})
        results["variants"][name] = rows
        print(name, [(r["rc"], r["last_call"]) for r in rows], flush=True)
    trace = os.path.join(a.bundle, "lib", "libgraph_trace.so")
    for label, under_tool in (("plain", False), (a.tool, True)):
        if time.time() > deadline:
            break
        d = os.path.join(a.out, "trace_" + label)
        os.makedirs(d, exist_ok=True)
        env = dict(env0, LD_PRELOAD=trace, AOTRUN_GRAPH_TRACE_DIR=d)
        cmd = aotrun_cmd(a, prog, method, minfo, a.calls, [])
        if under_tool:
            cmd = [cs, "--tool", a.tool] + cmd
        rc, text = run(cmd, env, a.timeout)
        with open(os.path.join(d, "trace.txt"), "w") as f:
            f.write(text)
        results["trace_" + label] = {"rc": rc, "last_call": last_call(text)}
        print("trace", label, rc, last_call(text), flush=True)
    with open(os.path.join(a.out, "graph_sanitize_probe.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
