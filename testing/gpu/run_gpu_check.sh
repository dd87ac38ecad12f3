#!/usr/bin/env bash
# The whole GPU check in one call, on the GPU machine (torch 2.11 + CUDA 13):
#   1. exports the public suite with torch (testing/gpu/export_suite.py),
#   2. runs the GPU unit tests and micro-benchmarks (shim, fallback ops),
#   3. runs every exported method through aotrun (no graph and CUDA graphs)
#      and compares each call with eager PyTorch (testing/gpu/run_suite.py),
#   4. checks the CUDA graph contract (replay, shape refusal, retry) and
#      execute_ex (caller streams, async, managed outputs),
#      the fault sweep (aotrun_gpu_faults on mlp: every fault point failed,
#      free device memory before/after; docs/reliability.md),
#   5. times aotrun against eager PyTorch.
# Binaries come from testing/gpu/build_gpu_bundle.sh (built on the CPU
# machine, carried as .gpu/). Results: $OUT/results.md, $OUT/results.json,
# $OUT/logs.tgz.
#   device run: bash testing/gpu/run_gpu_check.sh      (carry: [".gpu"])
# AOTRUN_GPU_PARTS picks parts (default all: unit,demo,ops,passes,bench,e2e),
# to split the check over calls of at most 10 minutes each
# (AOTRUN_GPU_MODES: the e2e modes, default nograph,graph,device,graph_device;
# run_suite.py --modes). Part "demo"
# runs `aotrun demo` from the bundle (testing/gpu/check_demo.sh: the CUDA
# example matches the CPU run, latency without and with CUDA graphs),
# counted with the unit tests. Part "python" (not
# in the default) runs the Python binding against eager PyTorch
# (testing/gpu/test_python_binding.py), counted with the unit tests; part
# "coexist" (not in the default either) runs aotrun and torch in one process
# (testing/gpu/test_torch_coexist.py, issue 15), counted likewise. Part
# "export" exports the suite without part e2e's comparison (for "sanitize").
# AOTRUN_GPU_NO_SMALL_GEMM=1: the suite exported without the exporter's
# small_gemm pass (every GEMM on cuBLAS), so e2e compares that path.
# Part "shapes" (not in the default) runs a graph per shape over a
# decoder's sequence-length buckets (testing/gpu/test_graph_shapes.py).
# Part "gemm_lt" (with e2e) compares the suite a second time with
# AOTRUN_GEMM_LT=1 (plain GEMMs through cuBLASLt).
# Part "warmup" (opt-in) runs testing/gpu/test_warm_up_run.py; part
# "kernels" (opt-in, with "export" or "e2e") tables each kernel's GPU time
# for aotrun and eager (testing/gpu/profile_kernels.py).
# Part "ops" runs the convolution and attention tests on both kernels of
# each (kernel_options.h: the defaults and AOTRUN_CONV_API=legacy,
# AOTRUN_ATTN_TC=narrow, AOTRUN_ATTN_F32=simt).
# Part "conv_bench" (not in the default) runs test_conv_args (the graph
# path's operation graphs finalized by the real cuDNN with a handle) and
# times the graph API (default), the legacy API and torch side by side
# ($OUT/bench_conv.md).
# Part "attn_bench" (not in the default) times the default attention
# kernels, the older ones and torch side by side ($OUT/bench_attention.md);
# part "gemm_bench" likewise the GEMM family, baddbmm also with
# AOTRUN_GEMM_LT=1 ($OUT/bench_gemm_family.md).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-/tmp/aotrun-gpu-out}; mkdir -p "$OUT"
W=${AOTRUN_GPU_WORK:-/tmp/aotrun-gpu}; rm -rf "$W"; mkdir -p "$W/logs"
B=$ROOT/.gpu
bash testing/gpu/unpack_bundle.sh "$B"
[ -x "$B/bin/aotrun" ] || { echo "no .gpu bundle: run testing/gpu/build_gpu_bundle.sh first"; exit 2; }
# cuDNN (convolutions; the shim dlopens libcudnn.so.9 at the first one):
# torch's wheel brings it.
CUDNN_LIB=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null || true)
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64${CUDNN_LIB:+:$CUDNN_LIB}:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
ONLY=${AOTRUN_GPU_ONLY:-}
PARTS=",${AOTRUN_GPU_PARTS:-unit,demo,ops,passes,bench,e2e},"
part() { case "$PARTS" in *",$1,"*) return 0 ;; esac; return 1; }
# Counts of the parts run, summed into one closing line.
unit_pass=0; unit_fail=0
# add_summary LOG [PREFIX]: adds LOG's last "PREFIXN passed, N failed" line
# (none: one failure); leaves the pair in $r.
add_summary() {
  r=$(sed -n "s/^${2:-}\([0-9]\+\) passed, \([0-9]\+\) failed\$/\1 \2/p" "$1" | tail -1)
  if [ -n "$r" ]; then
    unit_pass=$((unit_pass + ${r% *})); unit_fail=$((unit_fail + ${r#* }))
  else
    unit_fail=$((unit_fail + 1))
  fi
}
# add_pytest LOG: adds the counts of pytest's closing line (none: one
# failure); leaves the line in $line.
add_pytest() {
  line=$(grep -E '^=*.*(passed|failed|error).* in [0-9.]+s' "$1" | tail -1)
  local n m
  n=$(echo "$line" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
  m=$(echo "$line" | grep -oE '[0-9]+ (failed|errors?)' | awk '{s+=$1} END {print s+0}')
  unit_pass=$((unit_pass + ${n:-0})); unit_fail=$((unit_fail + ${m:-0}))
  [ -n "$line" ] || unit_fail=$((unit_fail + 1))
}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$W/logs/gpu.txt"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' | tee -a "$W/logs/gpu.txt"

# 1. Export in the background (CPU-bound compiles) while unit tests run.
export_pid=
{ part e2e || part export; } && { ( python3 testing/gpu/export_suite.py "$W/suite" --calls 6 --keep-packages --jobs 8 \
    --shim-exports "$B/lib/libaotrun_shim.so" ${ONLY:+--only "$ONLY"} \
    ${AOTRUN_GPU_NO_SMALL_GEMM:+--no-small-gemm} > "$W/logs/export.log" 2>&1; echo $? > "$W/logs/export.rc" ) &
export_pid=$!; }

# 2. GPU unit tests (CMocka) and micro-benchmarks.
# unit_run LOG_NAME BINARY [VAR=VALUE...]: one CMocka binary, summed.
unit_run() {
  local name=$1 t=$2; shift 2
  timeout 300 env "$@" "$B/bin/$t" > "$W/logs/$name.log" 2>&1; local rc=$?
  local n m
  n=$(sed -n 's/^\[  PASSED  \] \([0-9]\+\) test(s)\.$/\1/p' "$W/logs/$name.log" | tail -1)
  m=$(sed -n 's/^\[  FAILED  \] \([0-9]\+\) test(s), listed below:$/\1/p' "$W/logs/$name.log" | tail -1)
  unit_pass=$((unit_pass + ${n:-0})); unit_fail=$((unit_fail + ${m:-0}))
  [ "$rc" -ne 0 ] && [ -z "$m" ] && unit_fail=$((unit_fail + 1))
  echo "$name: rc $rc, passed ${n:-0}, failed ${m:-0}"
}
if part unit; then
  for t in test_shim_cuda test_fallback_cuda test_attention_args \
           test_staged_upload_cuda; do
    unit_run "$t" "$t"
  done
  # The GEMM family again with plain GEMMs through cuBLASLt (issue 12).
  unit_run test_fallback_cuda_gemm_lt test_fallback_cuda AOTRUN_GEMM_LT=1
fi
# 2a. `aotrun demo` with the bundle's example programs (seconds).
if part demo; then
timeout 120 bash testing/gpu/check_demo.sh "$B" "$W/logs/demo.log" > "$W/logs/demo.out" 2>&1
add_summary "$W/logs/demo.out" "demo: "
grep -E '^(cuda example|output 0 |latency|FAIL|aotrun:)' "$W/logs/demo.out"
echo "demo: ${r:-no summary line} (passed failed)"
fi
# 2b. Fallback ops against eager PyTorch (ctypes harness, testing/gpu/ops).
# (pytest-timeout: a hung kernel fails its test instead of the whole run.)
if part ops; then
AOTRUN_SHIM_LIB=$B/lib/libaotrun_shim.so timeout 420 python3 -m pytest -q -rs \
  -p no:cacheprovider --timeout 120 testing/gpu/ops ${AOTRUN_GPU_OPS_ARGS:-} \
  > "$W/logs/ops_vs_torch.log" 2>&1
add_pytest "$W/logs/ops_vs_torch.log"
echo "ops vs torch: ${line:-no pytest summary}"
grep -E '^(FAILED|ERROR)' "$W/logs/ops_vs_torch.log" | head -n 30
fi
# bench_family NAME ROW_PREFIX: bench_fallbacks.py --only NAME into
# $OUT/bench_NAME.{json,md}, then prints the table's rows for ROW_PREFIX.
bench_family() {
  AOTRUN_SHIM_LIB=$B/lib/libaotrun_shim.so timeout 150 python3 testing/gpu/bench_fallbacks.py \
    --only "$1" "$OUT/bench_$1.json" "$OUT/bench_$1.md" > "$W/logs/bench_$1.log" 2>&1 ||
    echo "bench $1 failed: $(tail -n 3 "$W/logs/bench_$1.log")"
  grep -E "^\\| ${2:-}" "$OUT/bench_$1.md"
}
# 2b'. Convolution on both cuDNN paths (opt-in: AOTRUN_GPU_PARTS=conv_bench):
# bench_fallbacks.py --only conv: aotrun graph (default), aotrun legacy and
# torch per case in one process. AOTRUN_CONV_LOG=1 logs each plan chosen
# (engine, workspace, benchmarked or heuristic) into the logs.
if part conv_bench; then
# test_conv_args with a GPU and the real cuDNN: the graph path's operation
# graphs must finalize with a handle (without a GPU only the descriptors can).
unit_run test_conv_args test_conv_args
grep -E 'finalized|skipped' "$W/logs/test_conv_args.log"
AOTRUN_CONV_LOG=1 bench_family conv convolution
fi
# 2b''. The attention kernels side by side (AOTRUN_GPU_PARTS=attn_bench):
# bench_fallbacks.py --only attention: aotrun's defaults, the variants "tc
# narrow" and "f32 simt", and torch per case in one process
# ($OUT/bench_attention.md).
part attn_bench && bench_family attention sdpa
part gemm_bench && bench_family gemm_family
# 2c. Exporter passes on the GPU (compiles in parallel processes).
if part passes; then
timeout 400 python3 -m pytest -q -rs -p no:cacheprovider testing/gpu/export_passes \
  > "$W/logs/export_passes.log" 2>&1
add_pytest "$W/logs/export_passes.log"
echo "export passes: ${line:-no pytest summary}"
grep -E '^(FAILED|ERROR)' "$W/logs/export_passes.log" | head -n 20
fi
# 2d. The Python binding (python/) on the GPU; opt-in: AOTRUN_GPU_PARTS=python.
if part python; then
# CuPy, where testing/gpu/unpack_cupy.sh put it (the machine has none).
cupy_site=$ROOT/.cupy/site
[ -d "$cupy_site" ] && export PYTHONPATH=$cupy_site${PYTHONPATH:+:$PYTHONPATH}
timeout 540 python3 testing/gpu/test_python_binding.py --lib "$B/lib" --work "$W/python" \
  > "$W/logs/python_binding.log" 2>&1
add_summary "$W/logs/python_binding.log"
echo "python binding: ${r:-no summary line} (passed failed)"
grep -E '^(FAIL|SKIP) ' "$W/logs/python_binding.log" | head -n 30
fi
# 2d'. A graph per shape over a decoder's sequence-length buckets and the
# dim-range refusals, against eager (testing/gpu/test_graph_shapes.py,
# issue 16); opt-in: AOTRUN_GPU_PARTS=shapes.
if part shapes; then
timeout 400 python3 testing/gpu/test_graph_shapes.py --lib "$B/lib" --work "$W/shapes" \
  > "$W/logs/graph_shapes.log" 2>&1
add_summary "$W/logs/graph_shapes.log"
echo "graph per shape: ${r:-no summary line} (passed failed)"
grep -E '^(PASS|FAIL|SKIP) ' "$W/logs/graph_shapes.log" | head -n 30
fi
# 2d''. Option warm_up_run (issue 12: the first call's cost moved into
# init; the refusal for buffer-writing methods; figures off/on);
# opt-in: AOTRUN_GPU_PARTS=warmup.
if part warmup; then
timeout 400 python3 testing/gpu/test_warm_up_run.py --lib "$B/lib" --bin "$B/bin" --work "$W/warmup" \
  > "$W/logs/warm_up_run.log" 2>&1
add_summary "$W/logs/warm_up_run.log"
echo "warm_up_run: ${r:-no summary line} (passed failed)"
grep -E '^(PASS|FAIL|SKIP) ' "$W/logs/warm_up_run.log" | head -n 30
fi
# 2e. aotrun and torch in one process (libtorch local, then global);
# opt-in: AOTRUN_GPU_PARTS=coexist.
if part coexist; then
timeout 540 python3 testing/gpu/test_torch_coexist.py --lib "$B/lib" --work "$W/coexist" \
  > "$W/logs/torch_coexist.log" 2>&1
add_summary "$W/logs/torch_coexist.log"
echo "torch coexistence: ${r:-no summary line} (passed failed)"
grep -E '^(FAIL|SKIP) ' "$W/logs/torch_coexist.log" | head -n 30
fi
[ -n "$export_pid" ] && wait "$export_pid"
if part bench; then
"$B/bin/bench_alloc" 20000 > "$W/logs/bench_alloc.log" 2>&1
"$B/bin/bench_gemm" 100 > "$W/logs/bench_gemm.log" 2>&1
# Fallback ops against ATen in one process (docs/benchmarks.md).
AOTRUN_SHIM_LIB=$B/lib/libaotrun_shim.so timeout 300 python3 testing/gpu/bench_fallbacks.py \
  "$OUT/bench_fallbacks.json" "$OUT/bench_fallbacks.md" > "$W/logs/bench_fallbacks.log" 2>&1 ||
  echo "bench_fallbacks failed: $(tail -n 3 "$W/logs/bench_fallbacks.log")"
fi
if ! part e2e && ! part export; then
  echo "GPU unit tests: $unit_pass passed, $unit_fail failed (parts:$PARTS)"
  tar czf "$OUT/logs.tgz" -C "$W" logs 2>/dev/null
  [ "$unit_fail" -eq 0 ]; exit $?
fi
echo "export: rc $(cat "$W/logs/export.rc")"; tail -n 15 "$W/logs/export.log"

# 3-5. End to end, graph contract, benchmarks (part "export" without
# "e2e": the suite is exported for the parts below, not compared).
suite_rc=0
# Bounded by AOTRUN_GPU_BUDGET too: a suite cut short still leaves its log.
e2e_left=$(( ${AOTRUN_GPU_BUDGET:-560} - SECONDS ))
part e2e && timeout $((e2e_left > 60 ? e2e_left : 60)) python3 testing/gpu/run_suite.py "$W/suite" "$W" --bin "$B/bin" --lib "$B/lib" \
  --calls 6 --results "$OUT/results.json" \
  --modes "${AOTRUN_GPU_MODES-nograph,graph,device,graph_device}" \
  --bench "${AOTRUN_GPU_BENCH-mlp,transformer,cnn,float64,counter,transformer_t2048_fused,transformer_t2048_math}" \
  > "$W/logs/run_suite.out" 2>&1 || suite_rc=$?
cp "$W/run_suite.log" "$W/logs/" 2>/dev/null
# The comparisons one per line, back in $OUT whatever happened after (a
# suite cut by its budget still has them; results.json says complete).
cp "$W/logs/run_suite.out" "$OUT/" 2>/dev/null
if part e2e; then
  echo "e2e lines: $(grep -cE ' ok abs ' "$W/logs/run_suite.out") ok, $(grep -c 'FAIL' "$W/logs/run_suite.out") FAIL"
  grep 'FAIL' "$W/logs/run_suite.out" | head -n 30
fi
# 3b. The suite again with plain GEMMs through cuBLASLt (AOTRUN_GEMM_LT=1,
# docs/cuda-backend.md "GEMMs"); opt-in: AOTRUN_GPU_PARTS=...,e2e,gemm_lt.
# Its comparisons count like the first run's; bench AOTRUN_GPU_BENCH_LT.
if part e2e && part gemm_lt; then
  lt_left=$(( ${AOTRUN_GPU_BUDGET:-560} - SECONDS ))
  AOTRUN_GEMM_LT=1 timeout $((lt_left > 30 ? lt_left : 30)) python3 testing/gpu/run_suite.py \
    "$W/suite" "$W/gemm_lt" --bin "$B/bin" --lib "$B/lib" --calls 6 \
    --results "$OUT/results_gemm_lt.json" --bench "${AOTRUN_GPU_BENCH_LT-mlp,transformer}" \
    > "$W/logs/run_suite_gemm_lt.out" 2>&1 || suite_rc=$?
  grep -E 'FAIL|^bench' "$W/logs/run_suite_gemm_lt.out" | head -n 30
  echo "AOTRUN_GEMM_LT=1 suite: $(tail -n 1 "$W/logs/run_suite_gemm_lt.out")"
fi
# 3c. Kernel by kernel: aotrun's GPU time per call next to eager's for the
# same model (torch.profiler, one process; testing/gpu/profile_kernels.py);
# opt-in: AOTRUN_GPU_PARTS=export,kernels (AOTRUN_GPU_KERNELS picks the
# cases, default transformer_t2048_fused). Counted with the unit tests.
if part kernels; then
[ -n "$export_pid" ] && wait "$export_pid"
timeout 300 python3 testing/gpu/profile_kernels.py "$W/suite" \
  "${AOTRUN_GPU_KERNELS:-transformer_t2048_fused}" --lib "$B/lib" --out "$OUT" \
  > "$W/logs/profile_kernels.log" 2>&1
add_summary "$W/logs/profile_kernels.log"
echo "kernel profile: ${r:-no summary line} (passed failed); tables in \$OUT/kernels_*.md"
grep -E '^(FAIL|aotrun [0-9]|.*max abs diff)' "$W/logs/profile_kernels.log" | head -n 20
fi
# 3a. The suite under compute-sanitizer (memcheck, racecheck, initcheck,
# synccheck); opt-in: AOTRUN_GPU_PARTS=...,sanitize (AOTRUN_GPU_SANITIZE
# picks the cases; "@small_gemm": those whose export notes say the
# small_gemm pass rewrote them; AOTRUN_GPU_SANITIZE_TOOLS the tools, e.g. initcheck,
# AOTRUN_GPU_SANITIZE_TIMEOUT one run's limit in seconds, default 240,
# AOTRUN_GPU_SANITIZE_MODES a comma list of nograph, graph (the default),
# graph_device, graph_flag (sanitize.py parse_modes);
# AOTRUN_GPU_SANITIZE_LEAN=1: sanitize.py --lean, the fewest calls that
# run every path, for the T=2048 programs; AOTRUN_GPU_SANITIZE_EXCLUDE, a
# comma list of kernel name substrings left uninstrumented, named in the
# results: for a kernel whose reports are the tool's own, docs/reliability.md).
# Counted with the unit tests.
if part sanitize; then
# AOTRUN_GPU_BUDGET (default 560 s from the script's start) bounds it: runs
# past it are left out and listed as SKIP.
left=$(( ${AOTRUN_GPU_BUDGET:-560} - SECONDS ))
cases=${AOTRUN_GPU_SANITIZE:-}
if [ "$cases" = "@small_gemm" ]; then
  cases=$(python3 -c 'import glob, json, sys
print(",".join(sorted(p.split("/")[-2] for p in glob.glob(sys.argv[1] + "/*/case.json")
      if any(n.startswith("pass small_gemm") for ns in json.load(open(p)).get("notes", {}).values() for n in ns))))' "$W/suite")
  echo "sanitize: the cases the small_gemm pass rewrote: ${cases:-none}"
fi
exclude=()
IFS=, read -ra names <<< "${AOTRUN_GPU_SANITIZE_EXCLUDE:-}"
for n in "${names[@]}"; do [ -n "$n" ] && exclude+=(--exclude-kernel "$n"); done
timeout $((left > 30 ? left + 30 : 60)) python3 testing/gpu/sanitize.py "$W/suite" "$W" --bin "$B/bin" --lib "$B/lib" \
  ${cases:+--cases "$cases"} --results "$OUT/sanitize.json" \
  ${AOTRUN_GPU_SANITIZE_TOOLS:+--tools "$AOTRUN_GPU_SANITIZE_TOOLS"} \
  ${AOTRUN_GPU_SANITIZE_TIMEOUT:+--timeout "$AOTRUN_GPU_SANITIZE_TIMEOUT"} \
  ${AOTRUN_GPU_SANITIZE_MODES:+--modes "$AOTRUN_GPU_SANITIZE_MODES"} \
  ${AOTRUN_GPU_SANITIZE_LEAN:+--lean} "${exclude[@]}" \
  --deadline $((left > 30 ? left - 20 : 10)) \
  > "$W/logs/sanitize.out" 2>&1
cp "$W/sanitize.log" "$W/logs/" 2>/dev/null
add_summary "$W/logs/sanitize.out"
grep -E '^(PASS|FAIL|SKIP|CUT)' "$W/logs/sanitize.out" | head -n 60
echo "compute-sanitizer: ${r:-no summary line} (passed failed)"
fi
if ! part e2e; then  # exported for sanitize only: no e2e results to write up
  echo "GPU unit tests: $unit_pass passed, $unit_fail failed (parts:$PARTS)"
  tar czf "$OUT/logs.tgz" -C "$W" logs 2>/dev/null
  [ "$unit_fail" -eq 0 ]; exit $?
fi

python3 - "$OUT/results.json" "$W" "$unit_pass" "$unit_fail" > "$OUT/results.md" <<'PY'
import json, sys
try:
    res = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:  # the suite died before its first case
    res = {"e2e": [], "checks": [], "bench": [], "export": {}, "complete": False,
           "error": str(e)}
w = sys.argv[2]
print("# aotrun GPU check\n")
print(open(w + "/logs/gpu.txt").read().strip().replace("\n", "  \n"), "\n")
if not res.get("complete", True):
    print("**The suite was cut short (AOTRUN_GPU_BUDGET or a crash): the "
          "tables hold what ran before.** " + res.get("error", "") + "\n")
print(f"GPU unit tests: {sys.argv[3]} passed, {sys.argv[4]} failed\n")
print("## Export\n\n| case | status |\n| --- | --- |")
for c, s in res["export"].items():
    print(f"| {c} | {s} |")
print("\n## Fallback ops each case imports\n")
for c, names in res.get("fallbacks", {}).items():
    if names:
        print(f"- {c}: {', '.join(names)}")
print("\n## End to end vs eager PyTorch (every call, max over outputs)\n")
print("| case | method | mode | result | max abs err | max rel err | notes |\n| --- | --- | --- | --- | --- | --- | --- |")
for r in res["e2e"]:
    ma = r.get("max_abs"); mr = r.get("max_rel")
    print(f"| {r['case']} | {r['method']} | {r['mode']} | {'ok' if r['ok'] else 'FAIL'} | "
          f"{'%.3g' % ma if ma is not None else '-'} | {'%.3g' % mr if mr is not None else '-'} | "
          f"{'; '.join(r.get('problems', []))[:200]} |")
dist = [r for r in res["e2e"] if "distribution" in r or "seed" in r]
if dist:
    print("\n## Sampled outputs (distribution vs eager; AOTRUN_SEED reruns)\n")
    print("| case | mode | result | per output: tv or mean/std (eager) | same seed identical | other seed differs |\n| --- | --- | --- | --- | --- | --- |")
    for r in dist:
        st = "; ".join(f"tv {d['tv']:.4f}" if "tv" in d else
                       f"{d['mean']:.4g}/{d['std']:.4g} ({d['eager_mean']:.4g}/{d['eager_std']:.4g})"
                       for d in r.get("distribution", []))
        sd = r.get("seed", {})
        print(f"| {r['case']} | {r['mode']} | {'ok' if r['ok'] else 'FAIL'} | {st} | "
              f"{sd.get('same_seed_identical', '-')} | {sd.get('other_seed_differs', '-')} |")
print("\n## CUDA graph contract (aotrun_gpu_check) and execute_ex streams / managed outputs (aotrun_stream_check)\n")
for c in res["checks"]:
    args = " ".join(c.get("args", []))
    print(f"- {c['check']} on {c['case']}{' (' + args + ')' if args else ''}: {'ok' if c['ok'] else 'FAIL'}  ")
    for l in c["lines"]:
        print(f"  `{l}`  ")
print("\n## Latency, median us per call (500 calls)\n")
print("aotrun and eager (host io) take host inputs and return host outputs (copies counted); eager (device) and torch AOTI (device) keep tensors on the GPU.\n")
print("| case | aotrun no graph | aotrun graph | eager (host io) | eager (device) | torch AOTI runner (device) |\n| --- | --- | --- | --- | --- | --- |")
f = lambda v: "%.1f" % v if isinstance(v, (int, float)) else "-"
for b in res["bench"]:
    print(f"| {b['case']} | {f(b.get('aotrun_nograph'))} | {f(b.get('aotrun_graph'))} | "
          f"{f(b.get('eager_host_io'))} | {f(b.get('eager_device'))} | {f(b.get('torch_aoti_device'))} |")
print("\n## GPU time and device memory\n")
print("aotrun: GPU time per call (CUDA events, p50) and the process's peak device use (cudaMemGetInfo sampled while `aotrun bench` runs: CUDA context + weights + the shim pool's high-water mark). eager: the caching allocator's peak over one device call above inputs and weights, and its peak reserved bytes (no CUDA context).\n")
print("| case | aotrun GPU us (no graph) | aotrun GPU us (graph) | aotrun MiB (no graph) | aotrun MiB (graph) | eager peak alloc MiB | eager peak reserved MiB |\n| --- | --- | --- | --- | --- | --- | --- |")
for b in res["bench"]:
    print(f"| {b['case']} | {f(b.get('aotrun_nograph_gpu_us'))} | {f(b.get('aotrun_graph_gpu_us'))} | "
          f"{f(b.get('aotrun_nograph_device_mib'))} | {f(b.get('aotrun_graph_device_mib'))} | "
          f"{f(b.get('eager_peak_alloc_mib'))} | {f(b.get('eager_peak_reserved_mib'))} |")
PY
tail -n 40 "$W/logs/run_suite.out"
# The generated wrapper sources (how each model calls the shims), for review.
mkdir -p "$W/logs/wrappers"
python3 - "$W/suite" "$W/logs/wrappers" <<'PY'
import glob, os, sys, zipfile
for pt2 in glob.glob(os.path.join(sys.argv[1], "*", "*.pt2")):
    case = os.path.basename(os.path.dirname(pt2))
    with zipfile.ZipFile(pt2) as z:
        for n in z.namelist():
            if n.endswith(".wrapper.cpp"):
                open(os.path.join(sys.argv[2], f"{case}-{os.path.basename(pt2)}.cpp"), "wb").write(z.read(n))
PY
# Three archives, each well under the 16 MiB a returned file may have.
tar czf "$OUT/logs.tgz" -C "$W" --exclude=logs/wrappers logs 2>/dev/null
tar czf "$OUT/wrappers.tgz" -C "$W/logs" wrappers 2>/dev/null
tar czf "$OUT/actual.tgz" -C "$W" actual 2>/dev/null
[ "$(stat -c %s "$OUT/actual.tgz" 2>/dev/null || echo 0)" -gt 15000000 ] && rm -f "$OUT/actual.tgz"
cp "$W/logs/bench_alloc.log" "$W/logs/bench_gemm.log" "$OUT/" 2>/dev/null
cat "$OUT/results.md" | tail -n 45
[ "$suite_rc" -eq 0 ] && [ "$unit_fail" -eq 0 ]
