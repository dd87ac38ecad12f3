#!/usr/bin/env python3
"""CPU test of testing/gpu/sanitize.py's reading of compute-sanitizer
reports (the GPU check depends on it: a parser that finds no kernel names
printed "kernels named: -" on the H200 and hid which kernel initcheck
blamed) and of its case order. Report lines are in the formats
compute-sanitizer 2025.x prints (CUDA 13). Also: the kernels left
uninstrumented, a run killed at its timeout, and the eager GEMM probe's
arguments and program (sanitize_eager.py)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sanitize  # noqa: E402
import sanitize_eager  # noqa: E402

INITCHECK = """\
========= COMPUTE-SANITIZER
========= Uninitialized __global__ memory read of size 2 bytes
=========     at triton_poi_fused_add_relu_0+0x1b0 in /tmp/t/cq.py:20
=========     by thread (1,0,0) in block (0,0,0)
=========     Address 0x7f0000000200
========= ERROR SUMMARY: 474 errors
"""
RACECHECK = """\
========= Error: Race reported between Read access at nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT+0x9b0
=========     and Write access at nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT+0x43c0 [16 hazards]
========= RACECHECK SUMMARY: 12 hazards displayed (12 errors, 0 warnings)
"""
OLD_FORMAT = "========= Error: Race reported between Write access at 0x1230 in mykernel+0x1230\n"
CLEAN = "========= ERROR SUMMARY: 0 errors\n"

failures = []
checks = 0


def check(what, got, want):
    global checks
    checks += 1
    if got != want:
        failures.append(f"{what}: got {got!r}, want {want!r}")


check("initcheck count", sanitize.error_count(INITCHECK), (474, None))
check("initcheck kernels", sanitize.race_kernels(INITCHECK), ["triton_poi_fused_add_relu_0"])
check("racecheck count", sanitize.error_count(RACECHECK), (12, 0))
check("racecheck kernels", sanitize.race_kernels(RACECHECK),
      ["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"])
check("older 'at 0x.. in' lines", sanitize.race_kernels(OLD_FORMAT), ["mykernel"])
check("clean run", sanitize.error_count(CLEAN), (0, None))
check("no summary", sanitize.error_count("killed\n"), (None, None))

check("both modes by default order", sanitize.parse_modes("graph,nograph"),
      ["nograph", "graph"])
check("one mode", sanitize.parse_modes("graph"), ["graph"])
check("device modes in order", sanitize.parse_modes("graph_flag,graph_device"),
      ["graph_device", "graph_flag"])
check("nograph args", sanitize.mode_args("nograph", "forward"), [])
check("graph args", sanitize.mode_args("graph", "forward"),
      ["--option", "enable_cuda_graph_for_method=forward"])
check("graph_device args", sanitize.mode_args("graph_device", "forward"),
      ["--option", "enable_cuda_graph_for_method=forward", "--device-io"])
check("graph_flag args", sanitize.mode_args("graph_flag", "decode"),
      ["--option", "enable_cuda_graph_for_method=decode", "--device-io",
       "--option", "cuda_graph_done_flag=true"])
for bad in ("", "graphs", "nograph,cuda"):
    try:
        sanitize.parse_modes(bad)
        check("refused %r" % bad, "accepted", "ValueError")
    except ValueError as e:
        check("refusal names the argument %r" % bad, repr(bad) in str(e), True)

check("gemm probe", sanitize_eager.parse_gemm("4096,512,1536,bfloat16"),
      {"m": 4096, "k": 512, "n": 1536, "dtype": "bfloat16", "zeroed": False})
check("gemm probe zeroed", sanitize_eager.parse_gemm("8,4,2,float32,zeroed")["zeroed"], True)
for bad, part in (("4096,512,1536", "M,K,N,DTYPE"), ("a,512,1536,bfloat16", "integers"),
                  ("0,512,1536,bfloat16", "at least 1"), ("8,4,2,int8", "'int8'"),
                  ("8,4,2,float32,zero", "'zero'")):
    try:
        sanitize_eager.parse_gemm(bad)
        check("refused %r" % bad, "accepted", "ValueError")
    except ValueError as e:
        check("refusal of %r names %s" % (bad, part), part in str(e) and bad in str(e), True)
plain = sanitize_eager.gemm_probe_code(sanitize_eager.parse_gemm("8,4,2,bfloat16"))
zeroed = sanitize_eager.gemm_probe_code(sanitize_eager.parse_gemm("8,4,2,bfloat16,zeroed"))
check("probe code compiles", [compile(c, "probe", "exec") is not None for c in (plain, zeroed)],
      [True, True])
check("plain probe: linear, no fill", ("functional.linear(x, w, b)" in plain, "zeros" in plain),
      (True, False))
check("zeroed probe: fill, then the GEMM into it",
      ("torch.zeros(8, 2" in zeroed, "out=y" in zeroed), (True, True))

check("no exclusion; NVTX on for the shim's marks", sanitize.tool_args("initcheck"),
      ["--tool", "initcheck", "--nvtx", "yes"])
check("excluded kernels uninstrumented",
      sanitize.tool_args("initcheck", ["split_transpose_view_1", "nvjet"]),
      ["--tool", "initcheck", "--nvtx", "yes",
       "--kernel-name-exclude", "kns=split_transpose_view_1",
       "--kernel-name-exclude", "kns=nvjet"])
check("memcheck keeps its leak check", sanitize.tool_args("memcheck", ["k"])[:4],
      ["--tool", "memcheck", "--leak-check", "full"])
rc, text = sanitize.run_tool(["sh", "-c", "echo '" + INITCHECK.splitlines()[2] +
                              "'; exec sleep 5"], 1)
check("a killed run: rc 124", rc, 124)
check("a killed run keeps what it printed", sanitize.race_kernels(text),
      ["triton_poi_fused_add_relu_0"])
check("a killed run says so last", text.splitlines()[-1], "timeout after 1s")
check("a finished run", sanitize.run_tool(["sh", "-c", "echo out; echo err >&2; exit 3"], 5),
      (3, "out\nerr\n"))

with tempfile.TemporaryDirectory() as d:
    for case, n in (("t2048", 5000), ("mlp", 10), ("cnn", 500)):
        os.makedirs(os.path.join(d, case, "forward"))
        with open(os.path.join(d, case, "forward", "lib.so"), "wb") as f:
            f.write(b"x" * n)
    check("smallest first", sanitize.cases_by_size(d, ["t2048", "cnn", "mlp"]),
          ["mlp", "cnn", "t2048"])

for f in failures:
    print("FAIL", f)
print(f"{checks - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
