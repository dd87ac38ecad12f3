"""The command line: python3 -m aotrun_export SOURCE OUT_DIR, SOURCE being
MODULE:FACTORY or a saved torch.export program (.pt2), with clear errors
for bad input. The plumbing runs in-process (no compile); one slow test
runs the real command on a saved program with a dynamic dimension."""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

from conftest import ROOT

FACTORIES = textwrap.dedent('''
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x):
            return self.lin(x).relu()

        def decode(self, h):
            return h * 2

    def module_and_inputs():
        return Net(), (torch.randn(2, 4),)

    def methods():
        n = Net()
        return {"forward": (n, (torch.randn(2, 4),)),
                "decode": (n.decode, (torch.randn(2, 3),))}

    def with_options():
        n = Net()
        return {"methods": {"forward": (n, (torch.randn(2, 4),))},
                "dynamic_shapes": {"forward": {"x": {0: torch.export.Dim("b")}}},
                "strict": False}

    def program():
        return torch.export.export(Net(), (torch.randn(2, 4),))

    def wrong_list():
        return [Net()]

    def wrong_method():
        return {"forward": Net()}

    def bad_key():
        return {"methods": {"forward": (Net(), (torch.randn(2, 4),))},
                "dynamc_shapes": {}}

    def raises():
        raise ValueError("no weights here")

    NOT_CALLABLE = 3
''')


@pytest.fixture
def factories(tmp_path, monkeypatch, torch):
    (tmp_path / "cli_factories.py").write_text(FACTORIES)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("cli_factories", None)
    return "cli_factories"


def _main(argv, capsys):
    from aotrun_export.__main__ import main
    rc = main(argv)
    return rc, capsys.readouterr().err


def test_factory_forms(factories):
    from aotrun_export.__main__ import load_source
    import torch
    methods, kw = load_source(f"{factories}:module_and_inputs")
    assert list(methods) == ["forward"] and kw == {}
    assert isinstance(methods["forward"][0], torch.nn.Module)
    methods, kw = load_source(f"{factories}:methods")
    assert list(methods) == ["forward", "decode"]
    methods, kw = load_source(f"{factories}:with_options")
    assert set(kw) == {"dynamic_shapes", "strict"}
    methods, kw = load_source(f"{factories}:program")
    assert isinstance(methods["forward"], torch.export.ExportedProgram)


@pytest.mark.parametrize("spec,message", [
    ("no_such_module_xyz:make",
     "cannot import module 'no_such_module_xyz' (from "
     "'no_such_module_xyz:make'): No module named 'no_such_module_xyz'"),
    ("{m}:missing", "module '{m}' has no attribute 'missing'"),
    ("{m}:NOT_CALLABLE", "'{m}:NOT_CALLABLE' is a int, not a callable"),
    ("{m}:raises", "factory '{m}:raises' raised ValueError: no weights here"),
    ("{m}:wrong_list", "factory '{m}:wrong_list' returned a list of 1; "
     "expected (module, example_inputs)"),
    ("{m}:wrong_method", "method 'forward' is a Net; expected (callable, "
     "example_inputs[, example_kwargs]) or an ExportedProgram"),
    ("{m}:bad_key", "returned unknown keys ['dynamc_shapes']"),
    ("just_a_name", "expected MODULE:FACTORY or FILE.pt2, got 'just_a_name'"),
])
def test_bad_factories_exit_2_with_a_message(factories, tmp_path, capsys,
                                             spec, message):
    spec, message = spec.format(m=factories), message.format(m=factories)
    rc, err = _main([spec, str(tmp_path / "out")], capsys)
    assert rc == 2
    assert message in err, err
    assert not (tmp_path / "out").exists()


def test_bad_pt2_files(torch, tmp_path, capsys):
    rc, err = _main([str(tmp_path / "none.pt2"), str(tmp_path / "o")], capsys)
    assert rc == 2 and f"no such file '{tmp_path / 'none.pt2'}'" in err
    junk = tmp_path / "junk.pt2"
    junk.write_bytes(b"not a zip at all")
    rc, err = _main([str(junk), str(tmp_path / "o")], capsys)
    assert rc == 2 and f"cannot load '{junk}' as a saved torch.export " \
        "program" in err
    other = tmp_path / "other.pt2"          # a zip, but not a program
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("something/else.txt", "hello")
    rc, err = _main([str(other), str(tmp_path / "o")], capsys)
    assert rc == 2 and "cannot load" in err
    rc, err = _main([f"a={junk},{junk}", str(tmp_path / "o")], capsys)
    assert rc == 2 and "several programs need NAME=FILE.pt2 each" in err


def test_saved_programs_by_name(torch, tmp_path):
    from aotrun_export.__main__ import load_source

    class M(torch.nn.Module):
        def forward(self, x):
            return x + 1
    p = tmp_path / "m.pt2"
    torch.export.save(torch.export.export(M(), (torch.randn(2),)), str(p))
    methods, kw = load_source(f"enc={p},dec={p}")
    assert list(methods) == ["enc", "dec"] and kw == {}
    methods, _ = load_source(str(p), method="step")
    assert list(methods) == ["step"]


def test_old_flag_form_still_parses(factories, tmp_path, capsys):
    rc, err = _main(["--model", f"{factories}:wrong_list", "--out",
                     str(tmp_path / "o")], capsys)
    assert rc == 2 and "returned a list" in err
    with pytest.raises(SystemExit):
        _main(["--model", "a:b"], capsys)      # no output directory


@pytest.mark.slow
def test_cli_exports_a_saved_program_with_a_dynamic_dim(torch, tmp_path):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x, s):
            return self.lin(x) * s.item()
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(Net(), (torch.randn(2, 4), torch.tensor(1.5)),
                             dynamic_shapes=({0: batch}, None))
    saved = tmp_path / "net.pt2"
    torch.export.save(ep, str(saved))
    out = tmp_path / "prog"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "backend_cuda",
                                                   "export"))
    r = subprocess.run([sys.executable, "-m", "aotrun_export", str(saved),
                        str(out)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert list(json.loads(r.stdout.strip().splitlines()[-1])) == ["forward"]
    manifest = json.load(open(out / "manifest.json"))
    fw = manifest["methods"]["forward"]
    assert isinstance(fw["inputs"][0]["shape"][0], str)   # the dynamic dim
    assert fw["inputs"][0]["shape"][1] == 4
    assert any(n.startswith("pass float_item") for n in fw["notes"])
    assert "pass float_item" in r.stderr
    assert sorted(os.listdir(out)) == ["forward.so", "manifest.json",
                                       "weights.safetensors"]


def test_no_small_gemm_flag_reaches_export_program(factories, tmp_path,
                                                   monkeypatch, capsys):
    """The small_gemm pass is on by default; --no-small-gemm passes
    small_gemm=False (everything on cuBLAS), and a factory may say so too."""
    import inspect

    from aotrun_export import exporter
    assert inspect.signature(
        exporter.export_program).parameters["small_gemm"].default is True
    seen = []

    def fake_export(methods, out, **kw):
        seen.append(kw)
        return {"methods": {}}
    monkeypatch.setattr(exporter, "export_program", fake_export)
    for extra in ([], ["--no-small-gemm"]):
        rc, _ = _main([f"{factories}:module_and_inputs",
                       str(tmp_path / "p")] + extra, capsys)
        assert rc == 0
    assert "small_gemm" not in seen[0]
    assert seen[1]["small_gemm"] is False
