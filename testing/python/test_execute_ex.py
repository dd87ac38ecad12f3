"""CPU tests of the Python binding's ABI 1.1 execute_ex path: the ctypes
mirrors against the C layout, backend-allocated outputs (cpu_ref on the
example program with a data-dependent output; echo), their deleters, the
too-small report and retry, and stream handles (refused on the CPU).

Needs what test_binding.py needs, plus //testing/plugins:libaotrun_echo.so
and //testing/python:abi_layout_dump (run_pytest.sh builds them).
"""

import ctypes
import gc
import json
import os
import shutil
import subprocess

import numpy as np
import pytest

import aotrun
from aotrun import _dlpack, _execute, _lib

from test_binding import (bazel_bin, cpu_ref, minimal, program_dir,  # noqa
                          rand_x, reference)


@pytest.fixture(scope="session")
def echo(bazel_bin):  # noqa: F811
    return os.path.join(bazel_bin, "testing", "plugins", "libaotrun_echo.so")


# ---- the ctypes mirrors -------------------------------------------------------


def test_ctypes_layout_matches_c(bazel_bin):  # noqa: F811
    """Every mirrored struct has the C size and member offsets
    (abi_layout_dump prints what the C compiler makes of the header)."""
    dump = os.path.join(bazel_bin, "testing", "python", "abi_layout_dump")
    c = json.loads(subprocess.run([dump], check=True, capture_output=True,
                                  text=True).stdout)
    assert c["abi_version_minor"] == _lib.ABI_VERSION_MINOR
    mirrors = {"ExecuteArgs": _lib.ExecuteArgs, "BackendApi": _lib.BackendApi,
               "HostApi": _lib.HostApi, "IoInfo": _lib.IoInfo,
               "Option": _lib.Option, "DLTensor": _dlpack.DLTensor,
               "DLManagedTensor": _dlpack.DLManagedTensor}
    for name, cls in mirrors.items():
        want = c[name]
        assert ctypes.sizeof(cls) == want["size"], name
        fields = [f[0] for f in cls._fields_]
        assert fields == list(want["offsets"]), name
        for member, offset in want["offsets"].items():
            assert getattr(cls, member).offset == offset, (name, member)


def test_declares_abi_1_1():
    assert aotrun.ABI_VERSION == (1 << 16) | 1


# ---- backend-allocated outputs -------------------------------------------------


@pytest.fixture
def dd_program(program_dir, tmp_path):  # noqa: F811
    """The example program with y's rows declared by a symbol no input binds
    ("u0"): a data-dependent size to the host."""
    d = tmp_path / "dd_program"
    shutil.copytree(program_dir, d)
    path = d / "manifest.json"
    os.chmod(path, 0o644)
    manifest = json.loads(path.read_text())
    y = manifest["methods"]["forward"]["outputs"][0]
    assert y["shape"][0] == "s0"
    y["shape"][0] = "u0"
    path.write_text(json.dumps(manifest))
    return str(d)


def test_managed_output_values_and_deleter(dd_program, cpu_ref):  # noqa
    before = _execute.live_managed()
    with aotrun.Program(dd_program, plugin=cpu_ref) as prog:
        x = rand_x(5, seed=3)
        y, calls = prog.run("forward", x)
        assert y.shape == (5, 3) and y.dtype == "float32"
        assert y.device == "cpu"
        assert y.array is None  # the backend's memory, not an array's
        assert isinstance(calls.array, np.ndarray)  # the binding's
        assert _execute.live_managed() == before + 1
        arr = np.from_dlpack(y)
        np.testing.assert_allclose(arr, reference(x), rtol=1e-6, atol=1e-5)
        # The consumer keeps the backend's tensor alive...
        del y
        gc.collect()
        assert _execute.live_managed() == before + 1
        np.testing.assert_allclose(arr, reference(x), rtol=1e-6, atol=1e-5)
        # ...and its deleter runs once nothing uses it (after the method is
        # closed, too: the ABI allows it).
    del arr
    gc.collect()
    assert _execute.live_managed() == before
    assert _dlpack.live_exports() == 0


def test_managed_output_bench_frees_each_call(dd_program, cpu_ref):  # noqa
    before = _execute.live_managed()
    with aotrun.Program(dd_program, plugin=cpu_ref) as prog:
        r = prog.bench("forward", rand_x(2), iterations=3, warmup=1)
        assert r.iterations == 3
    assert _execute.live_managed() == before


def test_without_execute_ex_capacity_is_used(program_dir, minimal,  # noqa
                                             tmp_path):
    """A backend without execute_ex (minimal) gets today's capacity path."""
    d = tmp_path / "scale"
    d.mkdir()
    (d / "factor.txt").write_text("2")
    (d / "manifest.json").write_text(json.dumps({
        "format": "aotrun-program", "format_version": 1,
        "methods": {"forward": {
            "library": "factor.txt", "constants": [],
            "inputs": [{"name": "x", "dtype": "float32", "shape": ["n"]}],
            "outputs": [{"name": "y", "dtype": "float32",
                         "shape": ["u0"]}]}}}))
    try:
        prog = aotrun.Program(str(d), plugin=minimal, backend="minimal")
    except aotrun.Error as e:
        pytest.skip("the minimal plugin does not take this program: %s" % e)
    with prog:
        (y,) = prog.run("forward", np.array([1, 2, 3], np.float32))
        assert y.array is not None
        np.testing.assert_array_equal(np.from_dlpack(y), [2, 4, 6])


# ---- too small -----------------------------------------------------------------


def test_out_too_small_reports_needed_shape(program_dir, cpu_ref):  # noqa
    with aotrun.Program(program_dir, plugin=cpu_ref) as prog:
        x = rand_x(4)
        y = np.zeros((2, 3), np.float32)
        calls = np.zeros(1, np.float32)
        with pytest.raises(aotrun.OutputTooSmallError) as e:
            prog.run("forward", x, out=[y, calls])
        assert e.value.output == 0
        assert e.value.needed_shape == (4, 3)
        assert e.value.status == 8
        assert "output 0 (y) needs shape [4, 3]" in str(e.value)
        assert not y.any()  # nothing written
        # Sized as asked, it runs.
        y = np.zeros(e.value.needed_shape, np.float32)
        prog.run("forward", x, out=[y, calls])
        np.testing.assert_allclose(y, reference(x), rtol=1e-6, atol=1e-5)


def test_too_small_binding_output_is_retried(echo, tmp_path):  # noqa
    """echo's "grow": output a is declared with b's length; a longer a does
    not fit, so the binding reallocates it and runs once more."""
    d = tmp_path / "echo"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({
        "format": "aotrun-program", "format_version": 1,
        "methods": {"grow": {
            "library": "f.so", "constants": [],
            "inputs": [{"name": "a", "dtype": "float32", "shape": ["n"]},
                       {"name": "b", "dtype": "float32", "shape": ["m"]}],
            "outputs": [{"name": "a", "dtype": "float32", "shape": ["m"]},
                        {"name": "b", "dtype": "float32", "shape": ["m"]}]},
            "dd": {
            "library": "f.so", "constants": [],
            "inputs": [{"name": "x", "dtype": "int64", "shape": ["n"]}],
            "outputs": [{"name": "y", "dtype": "int64", "shape": ["u0"]}]}}}))
    with aotrun.Program(str(d), plugin=echo, backend="echo") as prog:
        a = np.arange(6, dtype=np.float32)
        b = np.arange(2, dtype=np.float32) + 10
        # A stream forces execute_ex on the echo backend, which refuses it.
        with pytest.raises(aotrun.NotSupportedError, match="no stream"):
            prog.run("grow", a, b, stream=5)
        ra, rb = prog.method("grow").run(a, b)
        np.testing.assert_array_equal(np.from_dlpack(ra), a)
        np.testing.assert_array_equal(np.from_dlpack(rb), b)
        (y,) = prog.run("dd", np.arange(9, dtype=np.int64))
        assert y.array is None and y.shape == (9,)
        np.testing.assert_array_equal(y.numpy(), np.arange(9))


# ---- streams -------------------------------------------------------------------


class _TorchLikeStream:
    cuda_stream = 0x1234


class _ProtocolStream:
    def __cuda_stream__(self):
        return (0, 0x5678)


def test_stream_handles():
    assert _execute.stream_handle(None) is None
    assert _execute.stream_handle(7) == 7
    assert _execute.stream_handle(_TorchLikeStream()) == 0x1234
    assert _execute.stream_handle(_ProtocolStream()) == 0x5678
    with pytest.raises(TypeError):
        _execute.stream_handle("cuda")
    with pytest.raises(TypeError):
        _execute.stream_handle(True)


def test_stream_refused_on_cpu(program_dir, cpu_ref):  # noqa
    with aotrun.Program(program_dir, plugin=cpu_ref) as prog:
        with pytest.raises(aotrun.NotSupportedError,
                           match="takes no device stream"):
            prog.run("forward", rand_x(2), stream=_TorchLikeStream())
        # The method still works afterwards.
        y, _ = prog.run("forward", rand_x(2))
        assert y.shape == (2, 3)


def test_stream_on_plugin_without_execute_ex(program_dir, minimal,  # noqa
                                             tmp_path):
    d = tmp_path / "scale"
    d.mkdir()
    (d / "factor.txt").write_text("2")
    (d / "manifest.json").write_text(json.dumps({
        "format": "aotrun-program", "format_version": 1,
        "methods": {"forward": {
            "library": "factor.txt", "constants": [],
            "inputs": [{"name": "x", "dtype": "float32", "shape": ["n"]}],
            "outputs": [{"name": "y", "dtype": "float32",
                         "shape": ["n"]}]}}}))
    try:
        prog = aotrun.Program(str(d), plugin=minimal, backend="minimal")
    except aotrun.Error as e:
        pytest.skip("the minimal plugin does not take this program: %s" % e)
    with prog:
        with pytest.raises(aotrun.NotSupportedError,
                           match="has no execute_ex: it cannot take a "
                                 "caller stream"):
            prog.run("forward", np.ones(3, np.float32), stream=1)


def test_managed_output_outlives_program(echo, tmp_path):  # noqa
    """The deleter is plugin code: closing the Program while a
    backend-allocated output lives defers unloading the plugin until the
    output is freed (echo is unloaded on dlclose; a crash otherwise)."""
    d = tmp_path / "echo_dd"
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({
        "format": "aotrun-program", "format_version": 1,
        "methods": {"dd": {
            "library": "f.so", "constants": [],
            "inputs": [{"name": "x", "dtype": "float32", "shape": ["n"]}],
            "outputs": [{"name": "y", "dtype": "float32",
                         "shape": ["u0"]}]}}}))
    before = _execute.live_managed()
    prog = aotrun.Program(str(d), plugin=echo, backend="echo")
    (y,) = prog.run("dd", np.arange(4, dtype=np.float32))
    prog.close()
    assert prog.closed
    np.testing.assert_array_equal(np.from_dlpack(y), [0, 1, 2, 3])
    del y
    gc.collect()
    assert _execute.live_managed() == before
