#!/usr/bin/env python3
"""The eager references of testing/gpu/sanitize.py (--eager, --eager-gemm):
PyTorch alone, nothing of aotrun's in the process, under the same
compute-sanitizer tool, for telling a vendor kernel's report or the
tool's blind spot from aotrun's doing (docs/reliability.md)."""
import json
import os
import sys
import time

from sanitize import TOOLS, error_count, race_kernels, run_tool


GEMM_DTYPES = ("bfloat16", "float16", "float32")


def parse_gemm(text):
    """--eager-gemm M,K,N,DTYPE[,zeroed] as a dict; ValueError naming the
    argument and the part that is wrong."""
    parts = text.split(",")
    if len(parts) not in (4, 5):
        raise ValueError("--eager-gemm takes M,K,N,DTYPE[,zeroed], got %r" % text)
    try:
        m, k, n = (int(p) for p in parts[:3])
    except ValueError:
        raise ValueError("--eager-gemm %r: M, K and N must be integers" % text)
    if min(m, k, n) < 1:
        raise ValueError("--eager-gemm %r: M, K and N must be at least 1" % text)
    if parts[3] not in GEMM_DTYPES:
        raise ValueError("--eager-gemm %r: DTYPE must be one of %s, got %r"
                         % (text, ", ".join(GEMM_DTYPES), parts[3]))
    if len(parts) == 5 and parts[4] != "zeroed":
        raise ValueError("--eager-gemm %r: the fifth part can only be "
                         "'zeroed', got %r" % (text, parts[4]))
    return {"m": m, "k": k, "n": n, "dtype": parts[3], "zeroed": len(parts) == 5}


def gemm_probe_code(g):
    """The probe's program: one linear with bias (cuBLASLt's bias epilogue,
    as aotrun's addmm), then an elementwise kernel reading its output. The
    check against a CPU linear runs on host copies, so the tool sees no
    other device reads. With "zeroed" the output is filled first (a write
    the tool tracks) and the GEMM writes into it: reports that vanish then
    are reads of bytes only the GEMM wrote."""
    return "\n".join([
        "import torch",
        "torch.manual_seed(0)",
        "dt = torch.%s" % g["dtype"],
        "x = torch.randn(%d, %d, device='cuda', dtype=dt)" % (g["m"], g["k"]),
        "w = torch.randn(%d, %d, device='cuda', dtype=dt)" % (g["n"], g["k"]),
        "b = torch.randn(%d, device='cuda', dtype=dt)" % g["n"],
        ("y = torch.zeros(%d, %d, device='cuda', dtype=dt); "
         "torch.addmm(b, x, w.t(), out=y)" % (g["m"], g["n"])) if g["zeroed"]
        else "y = torch.nn.functional.linear(x, w, b)",
        "z = (y * 2).cpu()",
        "ref = torch.nn.functional.linear(x.cpu().float(), w.cpu().float(), b.cpu().float())",
        "print('PROBE max abs diff %g of max %g' % ((z.float() / 2 - ref).abs().max().item(), "
        "ref.abs().max().item()))",
    ])


def eager_reference(a, cs):
    """Runs the case's eager PyTorch forward under the same tool: where a
    report names a vendor kernel (cuBLAS's nvjet_*, cuDNN), eager running
    the same kernels shows whether the report is the vendor kernel's own
    (the sanitizer's model of its synchronisation) or aotrun's doing."""
    if a.eager_gemm:
        code, what = gemm_probe_code(parse_gemm(a.eager_gemm)), "gemm " + a.eager_gemm
    else:
        what = a.eager
        code = ("import sys, torch; sys.path.insert(0, %r); import models; "
                "c = models.BY_NAME[%r]; m, meths = c.build('cuda'); fn, args = meths['forward']; "
                "torch.no_grad().__enter__(); fn(*args); torch.cuda.synchronize()"
                % (os.path.dirname(os.path.abspath(__file__)), a.eager))
    cmd = [cs] + TOOLS[a.eager_tool] + ["--print-limit", "50", sys.executable, "-c", code]
    t0 = time.time()
    rc, text = run_tool(cmd, a.timeout)
    errors, _ = error_count(text)
    # The first reports themselves (what is read, by which kernel), the
    # probe's check, then the summary line last, where a tail sees it.
    for line in [l for l in text.splitlines() if l.startswith("=========")][:12]:
        print("  " + line[:200])
    for line in [l for l in text.splitlines() if l.startswith("PROBE")]:
        print("  " + line)
    print(f"EAGER {a.eager_tool} {what}: rc {rc}, errors {errors}, "
          f"{time.time() - t0:.1f}s; kernels named: {', '.join(race_kernels(text)) or '-'}")
    log = (os.path.splitext(a.results)[0] + ".log" if a.results
           else os.path.join(a.work, "sanitize_eager.log"))
    with open(log, "a") as f:
        f.write(f"$ {' '.join(cmd[:-1])} CODE\n{text}\n")
    if a.results:
        with open(a.results, "w") as f:
            json.dump({"case": what, "tool": a.eager_tool, "rc": rc,
                       "errors": errors, "kernels": race_kernels(text)}, f, indent=1)
    return 0
