"""CPU checks of testing/gpu/bench_overhead.py (issue 12): it imports
without torch, --help documents the usage, the wrapper kernel count, and the
markdown section rendered from a made-up results file (no GPU, fast)."""

import importlib.util
import json
import os
import subprocess
import sys
import types

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "testing", "gpu", "bench_overhead.py")


@pytest.fixture(scope="module")
def bo():
    spec = importlib.util.spec_from_file_location("bench_overhead", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_import_needs_no_torch(bo):
    assert "torch" not in bo.__dict__
    assert bo.MODELS == ["mlp", "transformer", "cnn", "decoder", "mobilenet"]


def test_help_documents_usage():
    p = subprocess.run([sys.executable, SCRIPT, "--help"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    for text in ("--bundle", "--out", "--budget", "--from-json",
                 "unpack_bundle.sh .gpu", "launch_floor", "aoti_load_package",
                 "enable_cuda_graph_for_method", "--device-io"):
        assert text in p.stdout, text


def test_unknown_model_is_a_usage_error(tmp_path):
    p = subprocess.run([sys.executable, SCRIPT, "--models", "mlp,resnet",
                        "--out", str(tmp_path)], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2
    assert "unknown models ['resnet']" in p.stderr


WRAPPER = r'''
namespace torch::aot_inductor {
void AOTInductorModel::_const_run_impl(std::vector<AtenTensorHandle>& output_handles) {
    call_triton_poi_fused_fold_9(buf0, 16, this->device_idx_, stream, kernels, this->cubin_dir_);
}
} // namespace torch::aot_inductor
template <typename in_ptr0_type_, typename kernels_type_>
static inline void call_triton_poi_fused_relu_0(
    const in_ptr0_type_& in_ptr0, int64_t xnumel, int32_t device_idx_,
    cudaStream_t stream_, kernels_type_& kernels_) {
    launchKernel(kernels_.triton_poi_fused_relu_0, 1, 1, 1, 4, 0, kernel_args_, stream_);
}
namespace torch::aot_inductor {
void AOTInductorModel::run_impl(
    AtenTensorHandle* input_handles, AtenTensorHandle* output_handles,
    DeviceStreamType stream, AOTIProxyExecutorHandle proxy_executor) {
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_addmm_out(buf1, arg2_1, arg0_1, buf0, 1L, 1L));
    call_triton_poi_fused_relu_0(buf1, 512L, this->device_idx_, stream, kernels, this->cubin_dir_);
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_cuda_mm_out(buf2, buf1, arg3_1));
    call_triton_poi_fused_add_1(buf2, 64L, this->device_idx_, stream, kernels, this->cubin_dir_);
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_0, int_array_1, &h));
    output_handles[0] = buf2.release();
} // AOTInductorModel::run_impl
} // namespace torch::aot_inductor
'''


def test_wrapper_kernel_count(bo):
    import bench_kernels  # next to bench_overhead, on its path once loaded
    k = bench_kernels.count_wrapper_kernels(WRAPPER)
    assert k["scope"] == "run_impl"
    # Two Triton launches and two extern kernels in run_impl; not the
    # definition, not launchKernel inside it, not constant folding, not
    # the allocation.
    assert (k["triton"], k["extern"], k["total"]) == (2, 2, 4)
    assert k["names"] == {"call_triton_poi_fused_relu_0": 1,
                          "call_triton_poi_fused_add_1": 1,
                          "aoti_torch_cuda_addmm_out": 1,
                          "aoti_torch_cuda_mm_out": 1}


def test_package_kernel_count(bo, tmp_path):
    import zipfile
    pt2 = tmp_path / "forward.pt2"
    with zipfile.ZipFile(pt2, "w") as z:
        z.writestr("forward/data/aotinductor/model/abc.wrapper.cpp", WRAPPER)
    assert bo.count_package_kernels(str(pt2))["total"] == 4


def fake_results():
    floor_round = {
        "sync_idle": {"median": 2.0}, "one_launch_sync": {"median": 5.0},
        "memcpy_d2d_sync": {"median": 6.0}, "memcpy_h2d_sync": {"median": 7.0},
        "memcpy_d2h_sync": {"median": 8.0},
        "launches_sync": {"1": {"median": 5.0}, "4": {"median": 10.0}},
        "graph_launch_sync": {"1": {"median": 6.0}, "4": {"median": 8.0}},
        "replay_copies_sync": {"4": {"median": 14.0}},
        "replay_copies_sync_device": {"4": {"median": 6.5}},
        "replay_copies_sync_host_side": {"4": {"median": 7.5}},
        "replay_memcpy_nodes_sync": {"4": {"median": 12.0}},
        "replay_memcpy_nodes_sync_device": {"4": {"median": 9.5}},
        "replay_memcpy_nodes_sync_host_side": {"4": {"median": 7.0}},
        "busy_by_model": {"mlp": {
            "n": 4, "busy_us": 11.5, "spin_ns": 1500,
            "launches_sync": {"median": 19.0}, "graph_launch_sync": {"median": 14.0},
            "graph_device_us": 11.6}},
    }
    v = {"eager": {"rounds_us": [30.0, 31.0, 29.0]},
         "cuda_graph": {"rounds_us": [16.0]},
         "aoti_aotrun_pkg": {"error": "RuntimeError: undefined symbol: "
                                      "aoti_torch_cuda_mm_out | x"},
         "aoti_torch_default": {"rounds_us": [25.0]},
         "aotrun_nograph_device": {"rounds_us": [20.0, 22.0],
                                   "init_us": [300000.0], "first_call_us": [900.0],
                                   "gpu_time_us": 3.5,
                                   "init_no_warm_up_run_us": 250000.0,
                                   "first_call_no_warm_up_run_us": 5000.0},
         "aotrun_graph_device": {"rounds_us": [12.0], "init_us": [310000.0],
                                 "first_call_us": [4000.0],
                                 "latency_with_gpu_timing_us": 20.0,
                                 "gpu_time_us": 11.5},
         "aotrun_nograph_host": {"rounds_us": [40.0]},
         "aotrun_graph_host": {"error": "RuntimeError: aotrun bench rc 4"}}
    return {
        "date": "2026-12-03 12:00 UTC",
        "command": "python3 testing/gpu/bench_overhead.py --bundle .gpu --out /o",
        "gpu": {"name": "NVIDIA H200", "driver": "580.00", "torch": "2.11.0+cu130",
                "torch_cuda": "13.0"},
        "rounds": 3, "rounds_done": 3, "iters": 300, "warmup": 30,
        "export_jobs": 8, "notes": ["a note"],
        "models": {"mlp": {
            "description": "MLP", "kernels_n": 4, "kernels_n_source": "wrapper",
            "kernels_eager_profiler": 3,
            "export": {"aotrun": {"seconds": 30.5, "kernels": {
                "triton": 2, "extern": 2, "total": 4}},
                "torch_default": {"error": "BackendCompilerFailed: boom"}},
            "variants": v, "aotrun_peak_device_mib": 612,
            "torch_peak_allocated_mib": 0.25}},
        "floor": {"rounds": [floor_round, floor_round]},
    }


def test_markdown_table(bo):
    res = fake_results()
    bo.finish(res)
    m = res["models"]["mlp"]["variants"]
    assert m["eager"]["median_us"] == 30.0
    assert m["aotrun_nograph_device"]["median_us"] == 21.0
    assert res["floor"]["median"]["launches_sync"]["4"] == 10.0
    md = bo.render_markdown(res)
    assert md.startswith("## Per-call overhead")
    for text in ("2026-12-03 12:00 UTC", "NVIDIA H200", "driver 580.00",
                 "torch 2.11.0+cu130", res["command"], "a note"):
        assert text in md, text
    rows = {line.split(" | ")[2]: line for line in md.splitlines()
            if line.startswith("| ") and line.count(" | ") == 6}
    # aotrun no graph, device I/O: 21 us; floor of 4 plain launches 10 us,
    # eager 30, torch graph 16.
    assert rows["aotrun, device I/O"].endswith("| 21.0 | 2.10 | 0.70 | 1.31 |")
    # graph variants are compared with the graph floor (8 us for N=4).
    assert rows["aotrun + graph, device I/O"].endswith("| 12.0 | 1.50 | 0.40 | 0.75 |")
    assert "| mlp | 4 (wrapper) | floor: N launches + sync | 10.0 |" in md
    assert "does not run: RuntimeError: undefined symbol" in md
    assert "undefined symbol: aoti_torch_cuda_mm_out / x" in md  # no '|'
    assert "| mlp | 30.5 | failed: BackendCompilerFailed: boom | 300.0 | " \
           "900.0 / 4000.0 | 250.0, 5000.0 | 3.5 / 11.5 | 4 (2 + 2) / - / 3 | 612 | " \
           "0.2 |" in md
    assert "| N empty launches + sync | 5.00 | 10.00 |" in md
    assert "| graph of N empty kernels + sync | 6.00 | 8.00 |" in md
    # Issue 16: aotrun's replay (input nodes, the default) adds 8.5 us on
    # the host beyond its GPU time, the floor's replay of 4 empty kernels
    # through re-pointed memcpy nodes 7.0: 1.5 us of aotrun's own.
    assert "| ... device time (events) | - | 6.50 |" in md
    assert "| mlp | aotrun graph device | 20.0 | 11.5 | 8.5 | 7.0 | 1.5 |" in md
    # Issue 12's wall over GPU time without events: aotrun 12.0 wall
    # against 11.5 GPU, +0.5; the floor's replay 12.0 wall against 9.5
    # device, +2.5; aotrun 2.0 under it. No copy-kernel run: no row.
    assert "| mlp | aotrun graph device | 12.0 | 11.5 | 0.5 | 12.0 | 9.5 | 2.5 | -2.0 |" in md
    assert "aotrun graph kernels device" not in md
    # Against the floor with the program's GPU time: no graph 21 / 19,
    # graph 12 / 14; no input-node run: '-'.
    assert "| mlp | 4 | 11.5 | 11.6 | 19.0 | 21.0 | 1.11 | 14.0 | 12.0 | 0.86 " \
           "| - | - |" in md


def test_floor_spin_waits(bo):
    """The floor's other ways to await a replay's end (event spin, a mapped
    host flag): rows when measured, the error when launch_floor could not."""
    res = fake_results()
    rnd = res["floor"]["rounds"][0]
    rnd["graph_launch_event_spin"] = {"1": {"median": 5.5}, "4": {"median": 7.25}}
    rnd["graph_launch_flag_spin"] = {"1": {"median": 4.0}, "4": {"median": 6.0}}
    bo.finish(res)
    md = bo.render_markdown(res)
    assert ("| graph of N, its end awaited by spinning on cudaEventQuery | "
            "5.50 | 7.25 |") in md
    assert ("| graph of N + a kernel bumping a mapped host counter, awaited "
            "by spinning on it | 4.00 | 6.00 |") in md
    res = fake_results()
    res["floor"]["rounds"][0]["graph_launch_spin_error"] = "cudaHostAlloc | no"
    bo.finish(res)
    assert "| graph of N, spin waits | does not run: cudaHostAlloc / no |" in \
        bo.render_markdown(res)


def test_optional_variants_render_where_measured(bo):
    """A results file with optional variants (--gemm-lt, --cublas-gemm)
    renders their rows after the standard ones, as --from-json must: the
    variant list of the process rendering it has only the standard ones."""
    res = fake_results()
    v = res["models"]["mlp"]["variants"]
    v["aotrun_lt_nograph_device"] = {"rounds_us": [19.0]}
    v["aotrun_cublas_graph_device"] = {"rounds_us": [15.0]}
    bo.finish(res)
    md = bo.render_markdown(res)
    lt = md.index("| aotrun, device I/O, AOTRUN_GEMM_LT=1 | 19.0 |")
    cub = md.index("| aotrun + graph, device I/O, every GEMM on cuBLAS "
                   "(exported with --no-small-gemm) | 15.0 |")
    assert md.index("| aotrun + graph, host I/O |") < lt < cub


def test_busy_pairs_take_the_graph_gpu_time(bo):
    res = fake_results()
    assert bo.busy_pairs(res, ["mlp"]) == [("mlp", 4, 11.5)]
    v = res["models"]["mlp"]["variants"]
    del v["aotrun_graph_device"]["gpu_time_us"]
    assert bo.busy_pairs(res, ["mlp"]) == [("mlp", 4, 3.5)]  # no-graph's
    del v["aotrun_nograph_device"]["gpu_time_us"]
    assert bo.busy_pairs(res, ["mlp"]) == []


def test_from_json_renders(tmp_path):
    res = fake_results()
    path = tmp_path / "bench_overhead.json"
    path.write_text(json.dumps(res))
    p = subprocess.run([sys.executable, SCRIPT, "--from-json", str(path)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "| model | N kernels | variant |" in p.stdout


def test_empty_results_render(bo):
    """A run cut short early (no rounds, no floor) still renders."""
    res = {"models": {"cnn": {"export": {}, "variants": {}}},
           "floor": {"rounds": [], "error": "launch_floor rc 2: no device"}}
    bo.finish(res)
    md = bo.render_markdown(res)
    assert "Floor: not measured: launch_floor rc 2: no device" in md
    assert "| cnn | - | floor: N launches + sync | - |" in md


def test_models_run_eagerly_on_cpu(bo):
    """The models are well-formed (shapes of the issue's set, and the
    MobileNetV3-Small for export time); the decoder step also traces with
    torch.export (cat + SDPA over the cache)."""
    torch = pytest.importorskip("torch")
    shapes = {"mlp": [(4, 16)], "transformer": [(1, 128, 512)], "cnn": [(1, 10)],
              "decoder": [(1, 1, 512), (1, 8, 1, 64), (1, 8, 1, 64)],
              "mobilenet": [(1, 1000)]}
    with torch.no_grad():
        for name in bo.MODELS:
            module, args = bo.build_model(name, "cpu")
            out = module(*args)
            out = out if isinstance(out, tuple) else (out,)
            assert [tuple(o.shape) for o in out] == shapes[name], name
        module, args = bo.build_model("decoder", "cpu")
        ep = torch.export.export(module, args)
        assert len(ep.graph_signature.user_inputs) == 3


def test_cublas_gemm_variants(bo, monkeypatch):
    """--cublas-gemm: another export kind, aotrun's with every GEMM on
    cuBLAS (export_program(small_gemm=False)); its variants bench that
    program; its export line is in the report."""
    a = types.SimpleNamespace(skip_torch_default=True, cublas_gemm=True)
    assert bo.export_kinds(a) == ["aotrun", "aotrun_cublas"]
    assert bo.AOTRUN_EXPORTS["aotrun_cublas"] == ("program_cublas",
                                                  {"small_gemm": False})
    assert bo.AOTRUN_EXPORTS["aotrun"] == ("program", {})
    assert bo.export_kind_of("aotrun_cublas_graph_device") == "aotrun_cublas"
    assert bo.export_kind_of("aotrun_lt_nograph_device") == "aotrun"
    seen, _ = bench_export_kind(bo, monkeypatch, "aotrun_cublas", "/s")
    assert seen[0][2] == "/s" and "enable_cuda_graph_for_method=forward" not in seen[0]
    assert seen[1][2] == "/s" and "enable_cuda_graph_for_method=forward" in seen[1]
    res = fake_results()
    assert "--no-small-gemm" not in bo.render_markdown(res)
    res["models"]["mlp"]["export"]["aotrun_cublas"] = {
        "seconds": 20.5, "kernels": {"total": 3, "triton": 1, "extern": 2}}
    assert ("aotrun's export with `--no-small-gemm` (every GEMM on cuBLAS; "
            "its own inductor cache): mlp 20.5 s, 3 kernels (1 Triton + 2 "
            "extern).") in bo.render_markdown(res)


def bench_export_kind(bo, monkeypatch, kind, program, also=()):
    """The fake bench of an extra export kind's two variants (no graph,
    graph; then `also`): the commands seen, and (args, results) for more."""
    calls = fake_bench(bo, monkeypatch)
    a = types.SimpleNamespace(bundle="/b", iters=10, warmup=2)
    mres = {"export": {"aotrun": {"program": "/p", "inputs": ["/p/x.npy"]},
                       kind: {"program": program, "inputs": ["/p/x.npy"]}}}
    for variant in (f"{kind}_nograph_device", f"{kind}_graph_device") + also:
        bo.aotrun_bench(a, {}, mres, variant, 10)
    return [cmd for cmd, _ in calls], (a, mres)


def fake_bench(bo, monkeypatch):
    """aotrun bench replaced by a fake that records (command, env) and
    answers a median of 1 us; returns the record."""
    seen = []

    class FakePopen:
        def __init__(self, cmd, env=None, **kw):
            seen.append((cmd, env))
            self.returncode = 0
            self.pid = 0

        def communicate(self, timeout=None):
            return '{"latency_us": {"median": 1.0}}', ""

    monkeypatch.setattr(bo.subprocess, "Popen", FakePopen)
    return seen


def test_variant_command_lines(bo, monkeypatch):
    """Each aotrun variant's `aotrun bench` command line: device I/O,
    graphs, input copies on the stream (the option's default is nodes),
    cuBLASLt through the environment."""
    seen = fake_bench(bo, monkeypatch)
    a = types.SimpleNamespace(bundle="/b", iters=10, warmup=2)
    mres = {"export": {"aotrun": {"program": "/p", "inputs": ["/p/x.npy"]}}}
    for variant in ("aotrun_nograph_host", "aotrun_graph_device",
                    "aotrun_graph_copies_device", "aotrun_lt_nograph_device",
                    "aotrun_graph_outcopies_device",
                    "aotrun_copyout_nograph_device",
                    "aotrun_graph_kernels_device", "aotrun_graph_flag_device",
                    "aotrun_graph_kernels_flag_device"):
        bo.aotrun_bench(a, {}, mres, variant, 10)
    cmds = [" ".join(c) for c, _ in seen]
    assert "--device-io" not in cmds[0] and "enable_cuda_graph" not in cmds[0]
    assert "--device-io" in cmds[1]
    assert "--option enable_cuda_graph_for_method=forward" in cmds[1]
    assert "cuda_graph_input_nodes" not in cmds[1]  # the default: nodes
    assert "--option cuda_graph_input_nodes=false" in cmds[2]
    assert "--option cuda_graph_output_nodes=false" in cmds[2]
    assert seen[3][1].get("AOTRUN_GEMM_LT") == "1"
    assert "--option cuda_graph_output_nodes=false" in cmds[4]
    assert "cuda_graph_input_nodes" not in cmds[4]
    assert "--option enable_cuda_graph_for_method=forward" in cmds[4]
    assert "cuda_graph_output_nodes" not in " ".join(cmds[:2] + [cmds[3]])
    assert seen[5][1].get("AOTRUN_OUTPUT_PLACEMENT") == "0"
    assert "enable_cuda_graph" not in cmds[5] and "--device-io" in cmds[5]
    assert "AOTRUN_OUTPUT_PLACEMENT" not in seen[0][1]
    assert "--option cuda_graph_copy_kernels=true" in cmds[6]
    assert "--option enable_cuda_graph_for_method=forward" in cmds[6]
    assert "--device-io" in cmds[6]
    assert "cuda_graph_copy_kernels" not in " ".join(cmds[:6])
    assert "--option cuda_graph_done_flag=true" in cmds[7]
    assert "--option enable_cuda_graph_for_method=forward" in cmds[7]
    assert "--device-io" in cmds[7]
    assert "cuda_graph_done_flag" not in " ".join(cmds[:7])
    assert "--option cuda_graph_done_flag=true" in cmds[8]
    assert "--option cuda_graph_copy_kernels=true" in cmds[8]
    assert "--option enable_cuda_graph_for_method=forward" in cmds[8]
    assert all("--input /p/x.npy" in c and "--no-gpu-time" in c for c in cmds)


def test_torch_runner_load_column(bo):
    """Torch's load of its own package: aoti_load_package where it loads,
    else the container runner on the package's .so, else both errors."""
    res = fake_results()
    probe = res["models"]["mlp"].setdefault("probe", {})
    probe["aoti_torch_default"] = {"error": "the loader process died (rc -11)"}
    probe["aoti_torch_so"] = {"ok": True, "load_s": 0.125, "first_call_s": 0.0025}
    bo.finish(res)
    md = bo.render_markdown(res)
    assert "| 612 | 0.2 | 125.0, 2.5 (AOTIModelContainerRunnerCuda on the .so) |" in md
    probe["aoti_torch_default"] = {"ok": True, "load_s": 0.5, "first_call_s": 0.01}
    assert "| 0.2 | 500.0, 10.0 (aoti_load_package) |" in bo.render_markdown(res)
    probe["aoti_torch_default"] = {"error": "died | here"}
    probe["aoti_torch_so"] = {"error": "TypeError: bad args"}
    assert "| 0.2 | does not load: died / here; TypeError: bad args |" in \
        bo.render_markdown(res)


def test_triton_gemm_variants(bo, monkeypatch):
    """--triton-gemm: a third export kind, aotrun's with GEMMs as Triton
    kernels; its variants bench that program; its export time and kernel
    count are in the report, or why it failed."""
    a = types.SimpleNamespace(skip_torch_default=False, triton_gemm=True)
    assert bo.export_kinds(a) == ["aotrun", "torch_default", "aotrun_triton"]
    a = types.SimpleNamespace(skip_torch_default=True)
    assert bo.export_kinds(a) == ["aotrun"]
    seen, (a, mres) = bench_export_kind(bo, monkeypatch, "aotrun_triton", "/t",
                                        also=("aotrun_nograph_device",))
    assert seen[0][2] == "/t" and "--device-io" in seen[0]
    assert "enable_cuda_graph_for_method=forward" not in seen[0]
    assert seen[1][2] == "/t" and "enable_cuda_graph_for_method=forward" in seen[1]
    assert seen[2][2] == "/p"
    del mres["export"]["aotrun_triton"]
    with pytest.raises(bo.Recorded, match="no aotrun program"):
        bo.aotrun_bench(a, {}, mres, "aotrun_triton_nograph_device", 10)
    res = fake_results()
    assert "--triton-gemm" not in bo.render_markdown(res)
    res["models"]["mlp"]["export"]["aotrun_triton"] = {
        "seconds": 51.25, "kernels": {"total": 3, "triton": 3, "extern": 0}}
    md = bo.render_markdown(res)
    assert ("aotrun's export with `--triton-gemm` (GEMMs as autotuned Triton "
            "kernels, max_autotune; its own inductor cache): mlp 51.2 s, 3 "
            "kernels (3 Triton + 0 extern).") in md
    res["models"]["mlp"]["export"]["aotrun_triton"] = {"error": "boom | x"}
    assert "mlp failed: boom / x." in bo.render_markdown(res)


def test_first_call_lines(bo):
    """The first call's page faults and its GPU time with events, where a
    run measured them; nothing for a results file without them."""
    res = fake_results()
    bo.finish(res)
    assert "First calls, device I/O" not in bo.render_markdown(res)
    nd = res["models"]["mlp"]["variants"]["aotrun_nograph_device"]
    nd["first_call_minor_faults"] = [0]
    nd["next_calls_minor_faults"] = [[1, 0]]
    nd["gpu_first_call_us"] = 40.0
    nd["first_call_with_gpu_timing_us"] = 52.5
    md = bo.render_markdown(res)
    assert ("- mlp: 0 minor page faults (next calls: 1, 0); with gpu_timing "
            "52.5 us wall, GPU 40.0 us against 3.5 us steady") in md


def test_capture_at_init_line(bo):
    """The graph variant's extra run with cuda_graph_capture_at_init: its
    first calls beside those of the same variant without it."""
    res = fake_results()
    gd = res["models"]["mlp"]["variants"]["aotrun_graph_device"]
    gd["next_calls_us"] = [[21.0, 18.5, 600.0, 12.5, 12.0]]
    gd["first_call_us"] = [44.0]
    gd["capture_at_init"] = {"init_us": 250000.0, "first_call_us": 20.0,
                             "next_calls_us": [13.0, 12.5, 12.0, 12.0, 12.0],
                             "median_us": 12.0}
    bo.finish(res)
    md = bo.render_markdown(res)
    assert ("- mlp, graph captured at init (cuda_graph_capture_at_init=true):"
            " init 250.0 ms, first call 20.0 us, next 13.0, 12.5, 12.0, 12.0,"
            " median 12.0 us; without it: first call 44.0 us, next 21.0, 18.5,"
            " 600.0, 12.5") in md
    del gd["capture_at_init"]
    gd["capture_at_init_error"] = "aotrun bench rc 1: no | way"
    md = bo.render_markdown(res)
    assert ("- mlp, graph captured at init (cuda_graph_capture_at_init=true):"
            " failed: aotrun bench rc 1: no / way") in md


def test_lazy_capture_line(bo):
    """Since the capture at init is the default, the graph variant has it
    and the extra run has it off: the line says which is which."""
    res = fake_results()
    gd = res["models"]["mlp"]["variants"]["aotrun_graph_device"]
    gd["next_calls_us"] = [[13.0, 12.5, 12.0, 12.0, 12.0]]
    gd["first_call_us"] = [20.0]
    gd["init_us"] = [250000.0]
    gd["lazy_capture"] = {"init_us": 200000.0, "first_call_us": 44.0,
                          "next_calls_us": [21.0, 18.5, 600.0, 12.5, 12.0],
                          "median_us": 12.1}
    bo.finish(res)
    md = bo.render_markdown(res)
    assert ("- mlp, graph captured at init (the default): init 250.0 ms, "
            "first call 20.0 us, next 13.0, 12.5, 12.0, 12.0; captured at "
            "the fourth call (cuda_graph_capture_at_init=false): init 200.0 "
            "ms, first call 44.0 us, next 21.0, 18.5, 600.0, 12.5, median "
            "12.1 us") in md
    del gd["lazy_capture"]
    gd["lazy_capture_error"] = "aotrun bench rc 1: no | way"
    md = bo.render_markdown(res)
    assert ("captured at the fourth call (cuda_graph_capture_at_init=false): "
            "failed: aotrun bench rc 1: no / way") in md


def test_floor_n_prefers_the_counted_kernels(bo):
    """The floor's N: the kernels aotrun's call launched (CUPTI) where
    counted, else the wrapper's count, else torch eager's; the table
    marks the fallbacks and lists what the call launched where the
    counts differ."""
    mres = {"export": {"aotrun": {"kernels": {"total": 9, "triton": 4,
                                              "extern": 5}}},
            "kernels_eager_profiler": 14}
    assert bo.wrapper_n(mres) == (9, "wrapper")
    mres["kernels_aotrun_profiler"] = 11
    assert bo.wrapper_n(mres) == (11, "aotrun profiler")
    assert bo.wrapper_n({"export": {}, "kernels_eager_profiler": 3}) == (
        3, "eager profiler")
    res = fake_results()
    m = res["models"]["mlp"]
    m["kernels_aotrun_profiler"], m["kernels_n"] = 5, 5
    m["kernels_n_source"] = "aotrun profiler"
    m["kernels_aotrun_names"] = {"gemm_kernel": 2, "triton_poi_0": 3}
    bo.finish(res)
    md = bo.render_markdown(res)
    assert "| mlp | 5 | floor: N launches + sync |" in md
    assert ("- mlp: one call launched 5 kernels, the wrapper names 4 "
            "launches: 2 x gemm_kernel, 3 x triton_poi_0") in md
    assert "4 (2 + 2) / 5 / 3" in md


def test_count_program_kernels_records_the_error(bo, monkeypatch):
    """count_kernels.py run in its own process: its JSON recorded, or
    its error, and the bench goes on either way."""
    outs = iter(['{"kernels": 7, "memcpy": 0, "memset": 1, '
                 '"names": {"k": 7}}\n', '{"error": "ImportError: no"}\n'])

    def fake_run(cmd, **kw):
        assert cmd[2] == "/p" and "--input" in cmd and "/p/x.npy" in cmd
        return types.SimpleNamespace(stdout=next(outs), returncode=0)
    monkeypatch.setattr(bo.subprocess, "run", fake_run)
    a = types.SimpleNamespace(bundle="/b")
    mres = {"export": {"aotrun": {"program": "/p", "inputs": ["/p/x.npy"]}}}
    bo.count_program_kernels(a, {}, mres)
    assert mres["kernels_aotrun_profiler"] == 7
    assert mres["kernels_aotrun_names"] == {"k": 7}
    mres2 = {"export": {"aotrun": {"program": "/p", "inputs": ["/p/x.npy"]}}}
    bo.count_program_kernels(a, {}, mres2)
    assert mres2["kernels_aotrun_profiler_error"] == "ImportError: no"
    bo.count_program_kernels(a, {}, {"export": {}})  # no program: nothing


def test_count_kernels_classify():
    """count_kernels.classify: device events only; memcpy and memset apart
    from kernels."""
    spec = importlib.util.spec_from_file_location(
        "count_kernels", os.path.join(ROOT, "testing", "gpu", "count_kernels.py"))
    ck = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ck)
    got = ck.classify([("gemm", "DeviceType.CUDA"), ("gemm", "DeviceType.CUDA"),
                       ("Memcpy DtoD (Device -> Device)", "DeviceType.CUDA"),
                       ("Memset (Device)", "DeviceType.CUDA"),
                       ("cudaLaunchKernel", "DeviceType.CPU")])
    assert got == {"kernels": 2, "memcpy": 1, "memset": 1,
                   "names": {"gemm": 2}}
