"""Ops AOTInductor can only call through libtorch's proxy executor (no C
shim, no lowering) make the export fail with their names when the shim is
checked, since aotrun has no proxy executor; the package's extern-node
list (wrapper.json) names them."""

import json
import zipfile

import pytest

from aotrun_export.pt2_package import PackageError, read_package
from aotrun_export.shim_check import (PROXY_EXECUTOR, ProxyExecutorCalls,
                                      check_proxy_executor)


def _package(path, nodes=None, json_text=None):
    base = "m/data/aotinductor/model/abc"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(base + ".wrapper.so", b"\x7fELF")
        z.writestr(base + ".wrapper.cpp", "// cpp")
        if nodes is not None or json_text is not None:
            z.writestr(base + ".wrapper.json", json_text if json_text
                       is not None else json.dumps({"nodes": nodes}))
    return str(path)


def test_extern_ops_read_from_the_package(tmp_path):
    nodes = [{"name": "buf0",
              "node": {"target": "aten::linalg_solve_triangular"}},
             {"name": "buf3", "node": {"target": "my_ns::my_op"}}]
    pkg = read_package(_package(tmp_path / "a.pt2", nodes))
    assert pkg.proxy_executor_ops == ("aten::linalg_solve_triangular",
                                      "my_ns::my_op")
    assert read_package(_package(tmp_path / "b.pt2")).proxy_executor_ops \
        == ()
    with pytest.raises(PackageError, match="wrapper.json is not JSON"):
        read_package(_package(tmp_path / "c.pt2", json_text="{oops"))


def test_proxy_executor_import_is_an_error_naming_the_ops():
    imports = ["aoti_torch_empty_strided", PROXY_EXECUTOR]
    with pytest.raises(ProxyExecutorCalls) as e:
        check_proxy_executor(imports, ["aten::linalg_solve_triangular"],
                             "/tmp/forward.so", "forward")
    msg = str(e.value)
    assert "method 'forward' (/tmp/forward.so) calls 1 op(s)" in msg
    assert "aten::linalg_solve_triangular" in msg
    check_proxy_executor(["aoti_torch_empty_strided"], [], "x.so")
