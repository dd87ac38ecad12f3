"""The exporter with its passes, end to end on the CPU (two AOTInductor
compiles): each pass's note is in the manifest, the compiled library
imports no mask-index fallback, no proxy executor, and it was linked with
-Wl,--as-needed (DT_NEEDED without libgomp); an op only the proxy executor
can run fails the export with its name.

Note on libgomp: Debian 12's and Ubuntu's gcc already pass --as-needed to
the linker by default (`gcc -dumpspecs`), so on this machine DT_NEEDED has
no libgomp even without the patch; what fails without it is the link
command check (the flag is ours, so the library does not depend on the
toolchain's default)."""

import json
import os
import zipfile

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from aotrun_export import export_program

    class Combined(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.lin = torch.nn.Linear(5, 5)

        def forward(self, out, src, x, s):
            out = out.clone()
            for i in range(5):
                mask = x > i * 0.25
                out[mask] = src[mask]
            torch._assert_async((x > -1e9).all(), "x must be finite")
            y = torch.ops.aten._reshape_copy(self.lin(out).t(), [-1])
            return y * s.item()

    args = (torch.randn(4, 5), torch.randn(4, 5), torch.randn(4, 5),
            torch.tensor(1.5))
    out = tmp_path_factory.mktemp("passes") / "prog"
    logs = []
    manifest = export_program({"forward": (Combined(), args)}, str(out),
                              keep_packages=True, log=logs.append)
    return manifest, str(out), logs


def test_every_pass_noted(exported):
    manifest, out, logs = exported
    notes = manifest["methods"]["forward"]["notes"]
    assert json.load(open(os.path.join(out, "manifest.json"))) == manifest
    for name in ("decompositions", "assert_async", "float_item",
                 "masked_copy"):
        assert any(n.startswith(f"pass {name}: ") for n in notes), notes
        assert any(f"pass {name}: " in line for line in logs)
    assert any("decomposed 1 aten._reshape_copy.default" in n for n in notes)
    assert any("5 out[mask] = src[mask] became torch.where" in n
               for n in notes)


def test_library_imports_no_index_fallback(exported):
    manifest, _, _ = exported
    imports = manifest["methods"]["forward"]["aoti_torch_imports"]
    bad = [n for n in imports if "index_Tensor" in n or "index_put" in n
           or "_item_" in n or "proxy_executor" in n or "reshape_copy" in n]
    assert not bad, bad


def test_linked_as_needed_without_libgomp(exported):
    from aotrun_export.elf_symbols import read_dynamic
    _, out, _ = exported
    needed = read_dynamic(os.path.join(out, "forward.so")).needed
    assert not [n for n in needed if "gomp" in n], needed
    with zipfile.ZipFile(os.path.join(out, "forward.pt2")) as z:
        cpp = [n for n in z.namelist() if n.endswith(".wrapper.cpp")]
        text = z.read(cpp[0]).decode()
    link = text.split("// Link cmd\n// ", 1)[1].splitlines()[0]
    assert " -Wl,--as-needed " in link, link


def _every_c_shim_name(torch):
    """Every aoti_torch_* function torch's C shim headers declare: a shim
    library that has them all (only the proxy-executor check can fail)."""
    import glob
    import re
    inc = os.path.join(os.path.dirname(torch.__file__), "include", "torch",
                       "csrc", "inductor", "aoti_torch")
    names = set()
    for h in glob.glob(os.path.join(inc, "**", "*.h"), recursive=True):
        names |= set(re.findall(r"\b(aoti_torch_\w+)\s*\(", open(h).read()))
    return names


def test_proxy_executor_op_fails_the_export_with_its_name(tmp_path):
    """A triangular solve of dynamic size is not decomposed: AOTInductor
    calls it through the proxy executor, which aotrun lacks."""
    torch = pytest.importorskip("torch", exc_type=ImportError)
    from aotrun_export import export_program
    from aotrun_export.shim_check import ProxyExecutorCalls

    class Solve(torch.nn.Module):
        def forward(self, a, b):
            return torch.linalg.solve_triangular(a, b, upper=False)
    n = torch.export.Dim("n", min=2, max=32)
    out = tmp_path / "prog"
    with pytest.raises(ProxyExecutorCalls) as e:
        export_program({"forward": (Solve(), (torch.eye(5),
                                              torch.randn(5, 2)))},
                       str(out), dynamic_shapes={"forward": ({0: n, 1: n},
                                                             {0: n})},
                       shim_exports=_every_c_shim_name(torch),
                       log=lambda s: None)
    assert e.value.ops == ["aten::linalg_solve_triangular"]
    assert "method 'forward'" in str(e.value)
    assert list(tmp_path.iterdir()) == []
