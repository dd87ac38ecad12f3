"""End to end on the CPU: torch.export + AOTInductor (device cpu) + the
program writer. Slow (an AOTInductor compile per method, ~20-40 s on 2
cores): marked `slow`; deselect with -m "not slow"."""

import json
import os
import struct

import pytest

from conftest import read_safetensors

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from aotrun_export import export_program
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.l1 = nn.Linear(4, 16)
            self.l2 = nn.Linear(16, 3)
            self.register_buffer("n", torch.zeros(1))
            self.register_buffer("table", torch.arange(40, dtype=torch.float64)
                                 .reshape(8, 5)[2:6, 1:4])

        def forward(self, x):
            self.n.add_(1)
            return self.l2(self.l1(x).relu()) + self.n, self.table.sum() * 2

        def decode(self, x):
            return self.l2(self.l1(x))

    net = Net()
    x = torch.randn(2, 4)
    out = tmp_path_factory.mktemp("e2e") / "prog"
    logs = []
    manifest = export_program(
        {"forward": (net.forward, (x,)), "decode": (net.decode, (x,))},
        str(out), log=logs.append)
    return torch, net, manifest, str(out), logs


def test_program_directory(program):
    torch, net, manifest, out, logs = program
    assert sorted(os.listdir(out)) == ["decode.so", "forward.so",
                                       "manifest.json", "weights.safetensors"]
    on_disk = json.load(open(os.path.join(out, "manifest.json")))
    assert on_disk == manifest
    assert manifest["format"] == "aotrun-program"
    assert manifest["format_version"] == 1
    assert manifest["weights"] == "weights.safetensors"
    assert "torch 2.11" in manifest["producer"]
    fw, dec = manifest["methods"]["forward"], manifest["methods"]["decode"]
    assert fw["library"] == "forward.so" and dec["library"] == "decode.so"
    assert fw["inputs"] == [{"name": "x", "dtype": "float32", "shape": [2, 4]}]
    assert dec["inputs"][0]["name"] == "x"
    assert fw["outputs"][1] == {"name": "out1", "dtype": "float64", "shape": []}
    assert any("joint-graph constant folding off" in n for n in fw["notes"])
    assert any("joint-graph constant folding off" in n for n in logs)
    assert "aoti_torch_empty_strided" in fw["aoti_torch_imports"]
    # forward adds to buffer n, decode writes nothing (option warm_up_run).
    assert fw["writes_buffers"] is True and dec["writes_buffers"] is False


def test_constants_and_weights(program):
    torch, net, manifest, out, _ = program
    fw = {c["fqn"]: c for c in manifest["methods"]["forward"]["constants"]}
    dec = {c["fqn"]: c for c in manifest["methods"]["decode"]["constants"]}
    assert {"l1.weight", "l2.weight", "n", "table"} <= set(fw)
    assert fw["n"]["type"] == "buffer" and fw["l1.weight"]["type"] == "parameter"
    assert fw["l1.weight"]["device"] == "cpu"
    # Shared FQNs across the two methods name one entry.
    assert dec["l1.weight"]["name"] == fw["l1.weight"]["name"] == "l1_weight"
    header, _, data = read_safetensors(os.path.join(out, "weights.safetensors"))
    assert set(header) == set(fw) | set(dec)
    for fqn, c in list(fw.items()) + list(dec.items()):
        assert len(data[fqn]) == c["nbytes"]
    # CPU constants are padded to 64 bytes by AOTInductor: the weight entry
    # is that whole record, flat, starting with the tensor's bytes.
    w = net.l1.weight.detach().contiguous().numpy().tobytes()
    assert data["l1.weight"][:len(w)] == w
    assert header["l1.weight"]["shape"] == [16, 4]      # 256 bytes: no pad
    assert fw["n"]["nbytes"] == 64 and header["n"]["shape"] == [16]
    assert data["n"] == b"\0" * 64
    t = fw["table"]
    assert t["dtype"] == "float64" and t["sizes"] == [4, 3]
    vals = struct.unpack(f"<{t['nbytes'] // 8}d", data["table"])
    got = [vals[t["storage_offset"] + i * t["strides"][0] + j * t["strides"][1]]
           for i in range(4) for j in range(3)]
    assert got == net.table.reshape(-1).tolist()


def test_missing_shim_function_fails_and_leaves_nothing(program, tmp_path):
    torch, net, manifest, _, _ = program
    from aotrun_export import export_program
    from aotrun_export.shim_check import MissingShimFunctions
    names = set(manifest["methods"]["decode"]["aoti_torch_imports"])
    names.discard("aoti_torch_empty_strided")
    out = tmp_path / "prog"
    with pytest.raises(MissingShimFunctions) as e:
        export_program({"decode": (net.decode, (torch.randn(2, 4),))},
                       str(out), shim_exports=names, log=lambda s: None)
    assert e.value.missing == ["aoti_torch_empty_strided"]
    assert "method 'decode'" in str(e.value)
    assert list(tmp_path.iterdir()) == []


def test_two_threads_exporting_at_once(tmp_path):
    """Two user threads call export_program at the same moment, then exit.
    torch 2.11 cannot trace or compile in two threads at once, nor trace in
    a thread after another tracing thread exited (SIGSEGV): the exporter
    runs them in turn on its one worker thread. Both programs are whole,
    linked --as-needed (no libgomp), and the link patch is gone after."""
    import threading
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from torch._inductor.cpp_builder import CppBuilder
    from aotrun_export import export_program
    from aotrun_export.elf_symbols import read_dynamic
    from aotrun_export.passes import linking
    original = CppBuilder.__dict__["get_command_line"]

    class Scale(torch.nn.Module):
        def forward(self, x):
            return (x * 2).sum(1)

    models = {"lin": (torch.nn.Linear(4, 8), torch.randn(2, 4)),
              "scale": (Scale(), torch.randn(3, 5))}
    start = threading.Barrier(len(models))
    done, errors = {}, {}

    def work(name):
        m, x = models[name]
        start.wait()
        try:
            done[name] = export_program({"forward": (m, (x,))},
                                        str(tmp_path / name),
                                        log=lambda s: None)
        except Exception as e:  # noqa: BLE001  (reported below)
            errors[name] = e
    threads = [threading.Thread(target=work, args=(n,)) for n in models]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for name, (m, x) in models.items():
        out = tmp_path / name
        files = ["forward.so", "manifest.json"] + (
            ["weights.safetensors"] if list(m.parameters()) else [])
        assert sorted(os.listdir(out)) == files
        fw = done[name]["methods"]["forward"]
        assert fw["inputs"][0]["shape"] == list(x.shape)
        needed = read_dynamic(str(out / "forward.so")).needed
        assert not [n for n in needed if "gomp" in n], (name, needed)
    assert linking._PATCH.users == 0
    assert CppBuilder.__dict__["get_command_line"] is original
    # A third export from yet another thread, after both exited.
    models["again"] = (Scale(), torch.randn(2, 7))
    start = threading.Barrier(1)
    t = threading.Thread(target=work, args=("again",))
    t.start()
    t.join()
    assert not errors and "again" in done, errors


def test_attention_math_holds_through_the_compile(tmp_path):
    """attention_math=True: Inductor lowers SDPA to the math decomposition
    (no fused-attention shim import); the backend flags must still hold
    when AOTInductor lowers, not only while torch.export traces."""
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from aotrun_export import export_program

    class Attn(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)

    q = torch.randn(1, 2, 8, 16)
    m = export_program({"forward": (Attn(), (q, q.clone(), q.clone()))},
                       str(tmp_path / "prog"), attention_math=True,
                       log=lambda s: None)
    imports = m["methods"]["forward"]["aoti_torch_imports"]
    assert not [n for n in imports if "scaled_dot_product" in n], imports


def test_deterministic_holds_through_trace_and_compile(tmp_path, monkeypatch):
    """deterministic=True: torch.use_deterministic_algorithms is on while
    torch.export traces and while AOTInductor lowers (its lowerings read
    the flag to keep atomic-accumulating ops as fallbacks), off again
    afterwards, and the export notes say so."""
    torch = pytest.importorskip("torch", exc_type=ImportError)
    import torch._inductor
    from aotrun_export import export_program

    seen = []
    real_compile = torch._inductor.aoti_compile_and_package

    def spy(*a, **k):
        seen.append(("compile", torch.are_deterministic_algorithms_enabled()))
        return real_compile(*a, **k)

    monkeypatch.setattr(torch._inductor, "aoti_compile_and_package", spy)

    class Acc(torch.nn.Module):
        def forward(self, x, i):
            seen.append(("trace", torch.are_deterministic_algorithms_enabled()))
            return torch.zeros(4, 3).index_add(0, i, x)

    logs = []
    args = (torch.randn(6, 3), torch.tensor([0, 1, 1, 3, 0, 2]))
    export_program({"forward": (Acc(), args)}, str(tmp_path / "det"),
                   deterministic=True, log=logs.append)
    assert ("trace", True) in seen and ("compile", True) in seen, seen
    assert not torch.are_deterministic_algorithms_enabled()
    assert any("deterministic algorithms" in l for l in logs), logs

    seen.clear()
    export_program({"forward": (Acc(), args)}, str(tmp_path / "plain"),
                   log=lambda s: None)
    assert ("compile", False) in seen and ("trace", True) not in seen, seen


def test_cli_deterministic_flag_reaches_export(monkeypatch):
    """`--deterministic` on the command line becomes deterministic=True."""
    from aotrun_export import __main__ as cli
    got = {}

    def fake_export(methods, out, **kw):
        got.update(kw)
        return {"methods": {}}

    import aotrun_export.exporter as exporter
    monkeypatch.setattr(exporter, "export_program", fake_export)
    monkeypatch.setattr(cli, "load_source", lambda s, m: ({"forward": None}, {}))
    assert cli.main(["m:f", "/tmp/unused-out", "--deterministic"]) == 0
    assert got.get("deterministic") is True


def test_dynamic_dim_ranges_in_the_manifest(tmp_path):
    """One small dynamic model compiled: the manifest records the batch
    symbol's range and y's relation to it (2*b), as the loader reads them
    (docs/program-format.md, "Dynamic-dim ranges")."""
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from aotrun_export import export_program

    class Pair(torch.nn.Module):
        def forward(self, x, y):
            return x * 2.0, y + 1.0

    b = torch.export.Dim("b", min=1, max=64)
    manifest = export_program(
        {"forward": (Pair(), (torch.randn(4, 3), torch.randn(8, 3)))},
        str(tmp_path / "prog"),
        dynamic_shapes={"forward": {"x": {0: b}, "y": {0: 2 * b}}},
        log=lambda s: None)
    fw = manifest["methods"]["forward"]
    (sym,) = fw["symbols"]
    assert fw["symbols"][sym] == {"min": 1, "max": 64, "hint": 4}
    assert fw["inputs"][0]["dims"] == [
        {"symbol": sym, "scale": 1, "offset": 0}, None]
    assert fw["inputs"][1]["dims"] == [
        {"symbol": sym, "scale": 2, "offset": 0}, None]
    on_disk = json.load(open(tmp_path / "prog" / "manifest.json"))
    assert on_disk["methods"]["forward"]["symbols"] == fw["symbols"]
