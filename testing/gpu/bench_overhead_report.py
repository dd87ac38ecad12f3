#!/usr/bin/env python3
"""The markdown section bench_overhead.py writes into docs/benchmarks.md
(issue 12): the side-by-side table with ratios, the busy floor, export and
start-up, the floor itself, replay's own cost, and wall over GPU time.
Pure functions of the results dict; no torch, no GPU."""

def _graph_runs(res, pairs):
    """(model, kernels per call, variant, floor key, the variant's results)
    for each model and each (graph variant, floor replay key) pair."""
    for name, m in res.get("models", {}).items():
        v = m.get("variants", {})
        for var, fkey in pairs:
            yield name, m.get("kernels_n"), var, fkey, v.get(var) or {}


def replay_cost_table(res, floor):
    """Issue 16: what a replay adds on the host beyond the launch and the
    copies. For aotrun: wall minus GPU time of the run with gpu_timing on
    (both medians); for the floor: the same for launch_floor's replay of N
    empty kernels with re-pointed memcpy nodes (aotrun's default,
    cuda_graph_input_nodes) or the copies on the stream (the variant with
    the option off), N = the program's kernel count."""
    rows = []
    pairs = (("aotrun_graph_device", "replay_memcpy_nodes_sync"),
             ("aotrun_graph_copies_device", "replay_copies_sync"),
             ("aotrun_graph_outcopies_device", "replay_memcpy_nodes_sync"),
             ("aotrun_graph_kernels_device", "replay_kernel_nodes_sync"))
    for name, n, var, fkey, vr in _graph_runs(res, pairs):
        wall, gpu = vr.get("latency_with_gpu_timing_us"), vr.get("gpu_time_us")
        fl = (floor.get(fkey + "_host_side") or {}).get(str(n)) if n else None
        if wall is None or gpu is None:
            continue
        own = wall - gpu
        rows.append(f"| {name} | {var.replace('_', ' ')} | {_f(wall)} | {_f(gpu)} | "
                    f"{_f(own)} | {_f(fl)} | "
                    f"{_f(own - fl) if fl is not None else '-'} |")
    if not rows:
        return []
    return ["Replay's own cost (issue 16): host wall time minus GPU time per "
            "call, aotrun's replay against launch_floor's replay of the same "
            "number of empty kernels (the launch, the copies, the "
            "synchronisation and nothing else), median us:", "",
            "| model | variant | wall (gpu_timing on) | GPU time | wall - GPU "
            "| floor: wall - device | difference |",
            "| --- | --- | --- | --- | --- | --- | --- |"] + rows + [""]


def wall_over_gpu_table(res, floor):
    """Issue 12's "transformer block with graphs: wall time <= its GPU
    time + 3 us", read without events in the timed run: aotrun's median
    wall (gpu_timing off) minus its GPU time (the separate run with
    events); the floor: launch_floor's replay wall (no events) minus its
    device time (events), same N and copy method. Events around the call
    add their own host time (the replay table above has it in both
    columns); the target is about the call alone, so it is read here."""
    rows = []
    pairs = (("aotrun_graph_device", "replay_memcpy_nodes_sync"),
             ("aotrun_graph_kernels_device", "replay_kernel_nodes_sync"),
             ("aotrun_graph_flag_device", "replay_memcpy_nodes_sync"),
             ("aotrun_graph_kernels_flag_device", "replay_kernel_nodes_sync"))
    for name, n, var, fkey, vr in _graph_runs(res, pairs):
        wall, gpu = vr.get("median_us"), vr.get("gpu_time_us")
        if wall is None or gpu is None or not n:
            continue
        fw = (floor.get(fkey) or {}).get(str(n))
        fd = (floor.get(fkey + "_device") or {}).get(str(n))
        fo = fw - fd if fw is not None and fd is not None else None
        own = wall - gpu
        rows.append(f"| {name} | {var.replace('_', ' ')} | {_f(wall)} | {_f(gpu)} | "
                    f"{_f(own)} | {_f(fw)} | {_f(fd)} | {_f(fo)} | "
                    f"{_f(own - fo) if fo is not None else '-'} |")
    if not rows:
        return []
    return ["Wall over GPU time without events in the timed run (issue 12's "
            "\"wall <= GPU time + 3 us\"): aotrun's median wall (gpu_timing "
            "off) minus its GPU time; the floor: launch_floor's replay of N "
            "empty kernels, wall without events minus its device time with "
            "them, median us:", "",
            "| model | variant | wall | GPU time | wall - GPU | floor wall "
            "| floor device | floor: wall - device | aotrun over the floor |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"] + rows + [""]


def counted_kernel_lines(res):
    """For each model whose counted kernels differ from the wrapper's
    count: what its call launched (CUPTI), by kernel name, shortest
    names first cut at 60 characters."""
    rows = []
    for name, m in res.get("models", {}).items():
        n = m.get("kernels_aotrun_profiler")
        k = ((m.get("export") or {}).get("aotrun") or {}).get("kernels") or {}
        if not n or n == k.get("total"):
            continue
        names = sorted((m.get("kernels_aotrun_names") or {}).items())
        shown = ", ".join(f"{c} x {kn[:60]}" for kn, c in names)
        rows.append(f"- {name}: one call launched {n} kernels, the wrapper "
                    f"names {k.get('total', '-')} launches: {shown}")
    return rows + [""] if rows else []


def torch_runner_load(probe):
    """Torch's load and first call of its own default package: through
    aoti_load_package, else through the container runner on its .so."""
    for variant, how in (("aoti_torch_default", "aoti_load_package"),
                         ("aoti_torch_so", "AOTIModelContainerRunnerCuda on the .so")):
        p = probe.get(variant) or {}
        if p.get("ok"):
            return (f"{_f(p['load_s'] * 1e3)}, {_f(p['first_call_s'] * 1e3)} "
                    f"({how})")
    errs = [(probe.get(v) or {}).get("error") for v in ("aoti_torch_default", "aoti_torch_so")]
    errs = [e.replace("|", "/")[:80] for e in errs if e]
    return "does not load: " + "; ".join(errs) if errs else "-"


def _calls(values):
    return ", ".join(_f(v) for v in (values or [])[:4])


def _run_text(run):
    """One extra bench run's init, first calls and median."""
    return (f"init {_f((run.get('init_us') or 0) / 1e3)} ms, first call "
            f"{_f(run.get('first_call_us'))} us, next {_calls(run.get('next_calls_us'))}, "
            f"median {_f(run.get('median_us'))} us")


def capture_line(name, gd):
    """The graph variant's first calls with the graph captured at init
    against a capture at a caller's fourth call. Since the capture at init
    became the default the variant has it and its extra run
    (`lazy_capture`) has it off; records before that hold the opposite
    (`capture_at_init`). None where neither ran."""
    cap, lazy = gd.get("capture_at_init"), gd.get("lazy_capture")
    first = (gd.get("next_calls_us") or [[]])[0] or []
    if cap or gd.get("capture_at_init_error"):
        head = f"- {name}, graph captured at init (cuda_graph_capture_at_init=true): "
        if not cap:
            return head + "failed: " + gd["capture_at_init_error"].replace("|", "/")[:200]
        return (head + _run_text(cap) + "; without it: first call "
                f"{_f(gd.get('first_call_us_median'))} us, next {_calls(first)}")
    if lazy or gd.get("lazy_capture_error"):
        head = (f"- {name}, graph captured at init (the default): init "
                f"{_f((gd.get('init_us_median') or 0) / 1e3)} ms, first call "
                f"{_f(gd.get('first_call_us_median'))} us, next {_calls(first)}; "
                "captured at the fourth call (cuda_graph_capture_at_init=false): ")
        if not lazy:
            return head + "failed: " + gd["lazy_capture_error"].replace("|", "/")[:200]
        return head + _run_text(lazy)
    return None


def first_call_lines(res):
    """The first calls (device I/O): with the graph captured at init
    against without (graph variant, round 1); without a graph, the first
    call's minor page faults and those of the next calls, and in the run
    with gpu_timing its GPU time against the steady call's: whether the
    host or the GPU makes it slow. Nothing for a run that measured none."""
    rows = []
    for name, m in res.get("models", {}).items():
        gd = (m.get("variants") or {}).get("aotrun_graph_device") or {}
        line = capture_line(name, gd)
        if line:
            rows.append(line)
        nd = (m.get("variants") or {}).get("aotrun_nograph_device") or {}
        faults = [f for f in nd.get("first_call_minor_faults") or [] if f is not None]
        nxt = next((n for n in nd.get("next_calls_minor_faults") or [] if n), None)
        if not faults and nd.get("gpu_first_call_us") is None:
            continue
        parts = []
        if faults:
            parts.append(f"{faults[0]} minor page faults"
                         + (f" (next calls: {', '.join(map(str, nxt))})" if nxt else ""))
        if nd.get("gpu_first_call_us") is not None:
            parts.append(f"with gpu_timing {_f(nd.get('first_call_with_gpu_timing_us'))} us "
                         f"wall, GPU {_f(nd['gpu_first_call_us'])} us against "
                         f"{_f(nd.get('gpu_time_us'))} us steady")
        rows.append(f"- {name}: " + "; ".join(parts))
    if not rows:
        return []
    return ["First calls, device I/O:", ""] + rows + [""]


def busy_floor_table(res, floor):
    """Issue 12's no-graph and graph targets against a floor that has the
    program's kernel count and GPU time (launch_floor --busy): N kernels
    spinning for the program's GPU time in all, launched plainly or as one
    graph, + sync. The empty-kernel floor cannot be met by a program whose
    kernels take longer than their launches; this one can."""
    busy = floor.get("busy") or {}
    rows = []
    for name, m in res.get("models", {}).items():
        b = busy.get(name)
        if not b:
            continue
        v = m.get("variants", {})
        nd = (v.get("aotrun_nograph_device") or {}).get("median_us")
        gd = (v.get("aotrun_graph_device") or {}).get("median_us")
        gc = (v.get("aotrun_graph_copies_device") or {}).get("median_us")
        rows.append(f"| {name} | {b.get('n')} | {_f(b.get('busy_us'))} | "
                    f"{_f(b.get('graph_device_us'))} | "
                    f"{_f(b.get('launches_sync'))} | {_f(nd)} | "
                    f"{_ratio(nd, b.get('launches_sync'))} | "
                    f"{_f(b.get('graph_launch_sync'))} | {_f(gd)} | "
                    f"{_ratio(gd, b.get('graph_launch_sync'))} | {_f(gc)} | "
                    f"{_ratio(gc, b.get('graph_launch_sync'))} |")
    if not rows:
        return []
    return ["Against a floor with the program's GPU time (`launch_floor "
            "--busy N:US`: N kernels that spin for US us of device time in "
            "all, US = aotrun's GPU time per call, with graphs where "
            "measured; launched plainly or as one graph, + sync; no copies), "
            "median us:", "",
            "| model | N | GPU us/call (aotrun) | floor's device us (graph) | "
            "floor: N busy launches + sync | aotrun, device I/O | x | "
            "floor: graph of N busy + sync | aotrun + graph, device I/O | x | "
            "aotrun + graph, input copies on the stream | x |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
            ] + rows + [""]


def _f(v, fmt="%.1f"):
    return fmt % v if isinstance(v, (int, float)) else "-"


def _ratio(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b > 0:
        return "%.2f" % (a / b)
    return "-"


def _floor_at(floor, key, n):
    if not floor or n is None:
        return None
    return (floor.get(key) or {}).get(str(n))


EXTRA_EXPORTS = {
    "aotrun_triton": "aotrun's export with `--triton-gemm` (GEMMs as "
                     "autotuned Triton kernels, max_autotune; its own "
                     "inductor cache)",
    "aotrun_cublas": "aotrun's export with `--no-small-gemm` (every GEMM on "
                     "cuBLAS; its own inductor cache)",
    # runs of 2026-12-07 12:01, before small GEMMs became the default
    "aotrun_small": "aotrun's export with `--small-gemm` (GEMMs with M or N "
                    "<= 16 as fused Triton reductions; its own inductor "
                    "cache)",
}


def extra_export_lines(res):
    """Each extra export of aotrun's (--triton-gemm, --cublas-gemm): per
    model its time and kernels per call, or why it failed."""
    lines = []
    for kind in EXTRA_EXPORTS:
        lines += _extra_export_lines(res, kind)
    return lines


def _extra_export_lines(res, kind):
    parts = []
    for name, m in res.get("models", {}).items():
        t = m.get("export", {}).get(kind)
        if not t:
            continue
        if "seconds" in t:
            k = t.get("kernels") or {}
            kern = (f", {k.get('total')} kernels ({k.get('triton')} Triton + "
                    f"{k.get('extern')} extern)" if k else "")
            parts.append(f"{name} {_f(t['seconds'])} s{kern}")
        else:
            parts.append(f"{name} failed: " +
                         t.get("error", "not run").replace("|", "/")[:100])
    if not parts:
        return []
    return [EXTRA_EXPORTS[kind] + ": " + "; ".join(parts) + ".", ""]


def _floor_row(what, series, ns):
    """One row of the floor table: `what`, then series[n] for each N."""
    return f"| {what} | " + " | ".join(
        _f((series or {}).get(n), "%.2f") for n in ns) + " |"


def render_markdown(res, variants):
    """The section; `variants`: the standard ones in table order
    (bench_overhead.py's list); the optional ones follow where measured."""
    gpu = res.get("gpu", {})
    floor = res.get("floor", {}).get("median") or {}
    L = []
    L.append("## Per-call overhead: aotrun against torch and the GPU floor (issue 12)")
    L.append("")
    L.append(f"Run of {res.get('date', '?')} on {gpu.get('name', '?')} (driver "
             f"{gpu.get('driver', '?')}), torch {gpu.get('torch', '?')} (CUDA "
             f"{gpu.get('torch_cuda', '?')}); {res.get('rounds_done', 0)} round(s) "
             f"of {res.get('iters', '?')} calls after {res.get('warmup', '?')} "
             "warm-up per figure, the order reversed every other round; each "
             "figure is the median over rounds of the round's median host wall "
             "time per call, every call synchronised.")
    L.append("")
    L.append("Reproduce (builds here, runs there):")
    L.append("")
    L.append("```sh")
    L.append("testing/gpu/build_gpu_bundle.sh")
    L.append("# on the GPU machine, with .gpu carried along:")
    L.append("bash testing/gpu/unpack_bundle.sh .gpu")
    L.append(res.get("command", "python3 testing/gpu/bench_overhead.py --bundle .gpu --out $OUT"))
    L.append("```")
    L.append("")
    L.append("Columns: torch eager and torch CUDA-graph replay (input copied "
             "into the static buffer) on device tensors; torch's AOTI runner "
             "(`aoti_load_package`) on aotrun's package and on torch's default "
             "one (aotrun's package is exported without linking libtorch, its "
             "`aoti_torch_*` imports bound to aotrun's shim, so torch's runner "
             "is expected to refuse it: undefined symbol; docs/loading.md); aotrun bench without and with CUDA graphs "
             "(`enable_cuda_graph_for_method`), inputs and outputs in device "
             "memory (`--device-io`) or host memory (copies counted). "
             "Floor: `launch_floor`, N empty kernels launched + synchronised "
             "(plain launches for the no-graph columns, one CUDA graph of N "
             "for the graph columns), N = the program's kernels per call: "
             "counted by CUPTI in one call of aotrun's program, else (marked) "
             "the wrapper's count or torch eager's.")
    L.append("")
    L += counted_kernel_lines(res)
    L.append("| model | N kernels | variant | us/call | x floor | x torch eager | x torch graph |")
    L.append("| --- | --- | --- | --- | --- | --- | --- |")
    for name, m in res.get("models", {}).items():
        n = m.get("kernels_n")
        nsrc = {"wrapper": " (wrapper)", "eager profiler": " (eager)"}.get(
            m.get("kernels_n_source"), "")
        v = m.get("variants", {})
        eager = (v.get("eager") or {}).get("median_us")
        graph = (v.get("cuda_graph") or {}).get("median_us")
        rows = [("floor: N launches + sync", _floor_at(floor, "launches_sync", n), None),
                ("floor: graph of N + sync", _floor_at(floor, "graph_launch_sync", n), None)]
        labels = {"eager": "torch eager", "cuda_graph": "torch CUDA graph",
                  "aoti_aotrun_pkg": "torch AOTI runner, aotrun's .pt2",
                  "aoti_torch_default": "torch AOTI runner, default .pt2",
                  "aotrun_nograph_device": "aotrun, device I/O",
                  "aotrun_graph_device": "aotrun + graph, device I/O",
                  "aotrun_graph_copies_device": "aotrun + graph, device I/O, every copy on the stream (cuda_graph_input_nodes=false, cuda_graph_output_nodes=false)",
                  "aotrun_graph_outcopies_device": "aotrun + graph, device I/O, output copies on the stream (cuda_graph_output_nodes=false)",
                  "aotrun_copyout_nograph_device": "aotrun, device I/O, outputs copied, none written in place (AOTRUN_OUTPUT_PLACEMENT=0)",
                  "aotrun_graph_kernels_device": "aotrun + graph, device I/O, input and output copies as kernel nodes (cuda_graph_copy_kernels=true)",
                  "aotrun_graph_flag_device": "aotrun + graph, device I/O, the replay's end awaited on its done counter in mapped host memory (cuda_graph_done_flag=true)",
                  "aotrun_graph_kernels_flag_device": "aotrun + graph, device I/O, copy kernel nodes and the done counter (cuda_graph_copy_kernels=true, cuda_graph_done_flag=true)",
                  "aotrun_nograph_host": "aotrun, host I/O",
                  "aotrun_graph_host": "aotrun + graph, host I/O",
                  "aotrun_lt_nograph_device": "aotrun, device I/O, AOTRUN_GEMM_LT=1",
                  "aotrun_lt_graph_device": "aotrun + graph, device I/O, AOTRUN_GEMM_LT=1",
                  "aotrun_triton_nograph_device": "aotrun, device I/O, GEMMs as Triton kernels (exported with --triton-gemm)",
                  "aotrun_triton_graph_device": "aotrun + graph, device I/O, GEMMs as Triton kernels (exported with --triton-gemm)",
                  "aotrun_cublas_nograph_device": "aotrun, device I/O, every GEMM on cuBLAS (exported with --no-small-gemm)",
                  "aotrun_cublas_graph_device": "aotrun + graph, device I/O, every GEMM on cuBLAS (exported with --no-small-gemm)",
                  # runs of 2026-12-07 12:01, before small GEMMs became the default
                  "aotrun_small_nograph_device": "aotrun, device I/O, small GEMMs as Triton reductions (exported with --small-gemm)",
                  "aotrun_small_graph_device": "aotrun + graph, device I/O, small GEMMs as Triton reductions (exported with --small-gemm)"}
        # The optional variants a run measured follow the standard ones.
        measured = [k for k in labels if k in v and k not in variants]
        for var in list(variants) + measured:
            vr = v.get(var) or {}
            if vr.get("median_us") is None and vr.get("error"):
                rows.append((labels[var], None, "does not run: " +
                             vr["error"].replace("|", "/")[:160]))
            else:
                rows.append((labels[var], vr.get("median_us"), None))
        first = True
        for label, us, err in rows:
            is_graph = "graph" in label
            fl = _floor_at(floor, "graph_launch_sync" if is_graph else "launches_sync", n)
            cells = [name if first else "", (f"{n}{nsrc}" if n else "-") if first else "",
                     label]
            if err:
                cells += [err, "-", "-", "-"]
            else:
                cells += [_f(us), "-" if label.startswith("floor") else _ratio(us, fl),
                          _ratio(us, eager), _ratio(us, graph)]
            L.append("| " + " | ".join(cells) + " |")
            first = False
    L.append("")
    L += busy_floor_table(res, floor)
    L.append("Export, start-up and memory:")
    L.append("")
    L.append("| model | aotrun export s | torch default export s | aotrun init ms | "
             "aotrun first call us (no graph / graph) | "
             "without warm_up_run: init ms, first call us (no graph) | GPU busy us/call (no graph / graph) | "
             "kernels: wrapper (triton + extern) / aotrun's call (CUPTI) / eager profiler | aotrun peak device MiB | torch peak allocated MiB | "
             "torch's runner on its default package: load ms, first call ms |")
    L.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, m in res.get("models", {}).items():
        e = m.get("export", {})
        ae, te = e.get("aotrun", {}), e.get("torch_default", {})
        v = m.get("variants", {})
        nd, gd = v.get("aotrun_nograph_device") or {}, v.get("aotrun_graph_device") or {}
        k = ae.get("kernels") or {}
        kern = (f"{k.get('total')} ({k.get('triton')} + {k.get('extern')})"
                if k else "-") + (f" / {m.get('kernels_aotrun_profiler', '-')}"
                                  f" / {m.get('kernels_eager_profiler', '-')}")
        L.append("| " + " | ".join([
            name,
            _f(ae.get("seconds")) if "seconds" in ae else "failed: " + ae.get("error", "not run").replace("|", "/")[:100],
            _f(te.get("seconds")) if "seconds" in te else ("failed: " + te["error"].replace("|", "/")[:100] if te.get("error") else "-"),
            _f((nd.get("init_us_median") or 0) / 1e3 if nd.get("init_us_median") else None),
            f"{_f(nd.get('first_call_us_median'))} / {_f(gd.get('first_call_us_median'))}",
            (f"{_f((nd.get('init_no_warm_up_run_us') or 0) / 1e3 if nd.get('init_no_warm_up_run_us') else None)}, "
             f"{_f(nd.get('first_call_no_warm_up_run_us'))}"),
            f"{_f(nd.get('gpu_time_us'))} / {_f(gd.get('gpu_time_us'))}",
            kern,
            _f(m.get("aotrun_peak_device_mib"), "%.0f"),
            _f(m.get("torch_peak_allocated_mib"), "%.1f"),
            torch_runner_load(m.get("probe", {})),
        ]) + " |")
    L.append("")
    L.append(f"Exports ran {res.get('export_jobs', '?')} at a time (wall time of "
             "each, under that load; aotrun's and torch's each with an "
             "inductor cache of their own, empty at the start); torch default = torch.export + "
             "aoti_compile_and_package with default options. aotrun peak: "
             "nvidia-smi per process (its CUDA context included); torch: "
             "max_memory_allocated of the model (tensors only). GPU busy: "
             "`last_gpu_time_ns` (CUDA events around execute) in a separate "
             "run; '-' where the backend does not report it.")
    L.append("")
    L += first_call_lines(res)
    L += extra_export_lines(res)
    if floor:
        L.append("Floor (launch_floor, median us, host wall time + "
                 "cudaStreamSynchronize):")
        L.append("")
        ns = list((floor.get("launches_sync") or {}).keys())
        L.append("| what | " + " | ".join(f"N={n}" for n in ns) + " |")
        L.append("| --- |" + " --- |" * len(ns))
        L.append(_floor_row("N empty launches + sync",
                            floor.get("launches_sync"), ns))
        L.append(_floor_row("graph of N empty kernels + sync",
                            floor.get("graph_launch_sync"), ns))
        said = set()  # an error shared by several rows is said once
        for key, what, error_key in (
                ("graph_launch_event_spin", "graph of N, its end awaited by "
                 "spinning on cudaEventQuery", "graph_launch_spin_error"),
                ("graph_launch_flag_spin", "graph of N + a kernel bumping a "
                 "mapped host counter, awaited by spinning on it",
                 "graph_launch_spin_error"),
                ("replay_copies_sync", "replay, device I/O: copy in + graph + "
                 "copy out on the stream + sync", "replay_copies_sync_error"),
                ("replay_memcpy_nodes_sync", "replay, device I/O: memcpy nodes "
                 "re-pointed (ExecMemcpyNodeSetParams) + graph + sync",
                 "replay_memcpy_nodes_sync_error"),
                ("replay_kernel_nodes_sync", "replay, device I/O: copy-kernel "
                 "nodes re-pointed (ExecKernelNodeSetParams) + graph + sync",
                 "replay_kernel_nodes_sync_error")):
            if floor.get(key):
                L.append(_floor_row(what, floor[key], ns))
            elif floor.get(error_key) and error_key not in said:
                said.add(error_key)
                shared = error_key == "graph_launch_spin_error"
                L.append(f"| {'graph of N, spin waits' if shared else what} | "
                         f"does not run: "
                         f"{floor[error_key].replace('|', '/')[:160]} |" +
                         " |" * (len(ns) - 1))
            for part, label in (("_device", "device time (events)"),
                                ("_host_side", "wall - device time")):
                if floor.get(key + part):
                    L.append(_floor_row(f"... {label}", floor[key + part], ns))
        L.append("")
        L += replay_cost_table(res, floor)
        L += wall_over_gpu_table(res, floor)
        L.append(f"Idle sync {_f(floor.get('sync_idle'), '%.2f')} us, one launch + sync "
                 f"{_f(floor.get('one_launch_sync'), '%.2f')} us, 256-byte copy + sync: "
                 f"device to device {_f(floor.get('memcpy_d2d_sync'), '%.2f')}, host to "
                 f"device {_f(floor.get('memcpy_h2d_sync'), '%.2f')}, device to host "
                 f"{_f(floor.get('memcpy_d2h_sync'), '%.2f')} us.")
        L.append("")
    elif res.get("floor", {}).get("error"):
        L.append(f"Floor: not measured: {res['floor']['error']}")
        L.append("")
    notes = list(res.get("notes", []))
    for name, m in res.get("models", {}).items():
        for key in ("torch_error", "kernels_eager_profiler_error",
                    "kernels_aotrun_profiler_error"):
            if m.get(key):
                notes.append(f"{name}: {key}: {m[key][:300]}")
        for kind, e in m.get("export", {}).items():
            if e.get("kernels_error"):
                notes.append(f"{name}: {kind} kernel count: {e['kernels_error'][:200]}")
        for var, vr in m.get("variants", {}).items():
            if vr.get("gpu_time_error"):
                notes.append(f"{name} {var}: GPU time: {vr['gpu_time_error'][:200]}")
    if notes:
        L.append("Notes: " + "; ".join(n.replace("\n", " ") for n in notes))
        L.append("")
    return "\n".join(L)
