"""CPU tests of the Python binding (python/aotrun) with the CPU reference
plugin on the bundled example program, and the minimal plugin for options.

Needs the Bazel outputs //install:libaotrun_host.so,
//testing/plugins:libaotrun_cpu_ref.so, //testing/plugins:libminimal_plugin.so
and //testing/example_program (testing/python/run_pytest.sh builds them and
sets $AOTRUN_BAZEL_BIN), NumPy and pytest. torch is optional: its tests skip
when it is absent.
"""

import gc
import json
import os
import threading

import numpy as np
import pytest

import aotrun
from aotrun import _lib

# ---- where the built pieces are ---------------------------------------------


def _bazel_bin():
    dirs = _lib.bazel_bin_dirs()
    for d in dirs:
        if os.path.exists(os.path.join(d, "install",
                                       "libaotrun_host.so")):
            return d
    pytest.fail("no Bazel output with install/libaotrun_host.so in %s: "
                "run testing/python/run_pytest.sh (it builds them)" % dirs)


BIN = None


@pytest.fixture(scope="session")
def bazel_bin():
    global BIN
    BIN = BIN or _bazel_bin()
    return BIN


@pytest.fixture(scope="session")
def program_dir(bazel_bin):
    return os.path.join(bazel_bin, "testing", "example_program")


@pytest.fixture(scope="session")
def cpu_ref(bazel_bin):
    return os.path.join(bazel_bin, "testing", "plugins",
                        "libaotrun_cpu_ref.so")


@pytest.fixture(scope="session")
def minimal(bazel_bin):
    return os.path.join(bazel_bin, "testing", "plugins",
                        "libminimal_plugin.so")


@pytest.fixture
def prog(program_dir, cpu_ref):
    with aotrun.Program(program_dir, plugin=cpu_ref) as p:
        yield p


# The example program (testing/example_program/make_example_program.py).
WEIGHT = np.array([[(4 * i + j + 1) / 8.0 for j in range(4)]
                   for i in range(3)], np.float32)
BIAS = np.array([0.5, -1.0, 0.25], np.float32)
SCALE = 2.0


def reference(x):
    return ((x.astype(np.float64) @ WEIGHT.T.astype(np.float64) + BIAS)
            * SCALE).astype(np.float32)


def rand_x(n, seed=0):
    return np.random.default_rng(seed).standard_normal((n, 4)).astype(
        np.float32)


# ---- opening ----------------------------------------------------------------


def test_installed_package_is_used():
    """run_pytest.sh installs ./python with pip and runs from outside the
    source tree: the installed copy must be the one imported."""
    if os.environ.get("AOTRUN_EXPECT_INSTALLED") != "1":
        pytest.skip("not run through testing/python/run_pytest.sh (pip "
                    "install of ./python)")
    assert "site-packages" in aotrun.__file__, aotrun.__file__


def test_host_library_found():
    path = aotrun.host_library()
    assert path.endswith("libaotrun_host.so")
    assert os.path.exists(path)


def test_host_library_argument_and_env(monkeypatch, tmp_path):
    real = aotrun.host_library()
    bogus = str(tmp_path / "libaotrun_host.so")
    with pytest.raises(aotrun.AccessFailedError) as e:
        aotrun.host_library(bogus)
    assert bogus in str(e.value) and e.value.status == 4
    monkeypatch.setenv("AOTRUN_HOST_LIBRARY", bogus)
    with pytest.raises(aotrun.AccessFailedError) as e:
        aotrun.Program("/nonexistent")
    assert bogus in str(e.value) and "AOTRUN_HOST_LIBRARY" in str(e.value)
    monkeypatch.setenv("AOTRUN_HOST_LIBRARY", real)
    assert aotrun.host_library() == real


def test_open_by_plugin_path(program_dir, cpu_ref):
    with aotrun.Program(program_dir, plugin=cpu_ref) as p:
        assert p.backend == "cpu_ref"
        assert os.path.samefile(p.plugin_path, cpu_ref)
        assert p.method_names == ["forward"]


def test_open_by_backend_name(program_dir):
    with aotrun.Program(program_dir, backend="cpu_ref") as p:
        assert p.backend == "cpu_ref"
        assert p.plugin_path.endswith("libaotrun_cpu_ref.so")
    assert aotrun.find_plugin("cpu_ref").endswith("libaotrun_cpu_ref.so")
    assert aotrun.find_plugin("no_such_backend") is None


def test_open_searches_plugin_path(program_dir, cpu_ref, monkeypatch):
    monkeypatch.setenv("AOTRUN_PLUGIN_PATH", os.path.dirname(cpu_ref))
    with aotrun.Program(program_dir) as p:   # first available backend
        assert p.backend == "cpu_ref"
        assert "cpu_ref" in p.backends


def test_unknown_backend(program_dir):
    with pytest.raises(aotrun.NotFoundError) as e:
        aotrun.Program(program_dir, backend="no_such_backend")
    assert "libaotrun_no_such_backend.so" in str(e.value)
    assert isinstance(e.value, LookupError)


def test_backend_not_in_loaded_plugin(program_dir, cpu_ref):
    with pytest.raises(aotrun.NotFoundError) as e:
        aotrun.Program(program_dir, plugin=cpu_ref, backend="cuda")
    assert "cuda" in str(e.value) and "cpu_ref" in str(e.value)


def test_bad_plugin_path(program_dir, tmp_path):
    missing = str(tmp_path / "libaotrun_missing.so")
    with pytest.raises(aotrun.AccessFailedError) as e:
        aotrun.Program(program_dir, plugin=missing)
    assert missing in str(e.value)
    not_elf = tmp_path / "libaotrun_text.so"
    not_elf.write_text("not a library")
    with pytest.raises(aotrun.AccessFailedError):
        aotrun.Program(program_dir, plugin=str(not_elf))


def test_missing_program(cpu_ref, tmp_path):
    with pytest.raises(aotrun.NotFoundError) as e:
        aotrun.Program(str(tmp_path / "nope"), plugin=cpu_ref)
    assert str(tmp_path / "nope") in str(e.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(aotrun.NotFoundError) as e:
        aotrun.Program(str(tmp_path / "empty"), plugin=cpu_ref)
    assert "manifest.json" in str(e.value)


def test_unknown_method(prog):
    with pytest.raises(aotrun.NotFoundError) as e:
        prog.method("nope")
    assert "method 'nope' not found" in str(e.value)
    assert "forward" in str(e.value)


# ---- introspection ----------------------------------------------------------


def test_method_info(prog):
    m = prog.method("forward")
    assert m is prog["forward"] is prog.methods["forward"]
    assert m.name == "forward" and m.backend == "cpu_ref"
    assert [i.name for i in m.inputs] == ["x"]
    assert [o.name for o in m.outputs] == ["y", "calls"]
    x, = m.inputs
    assert x.dtype == "float32" and x.shape == ("s0", 4) and x.is_dynamic
    y, calls = m.outputs
    assert y.dtype == "float32" and y.shape == ("s0", 3)
    assert calls.shape == (1,) and not calls.is_dynamic
    assert prog.inputs() == m.inputs and prog.outputs("forward") == m.outputs
    assert "s0" in repr(m)


# ---- running ----------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_run_matches_numpy(prog, n):
    x = rand_x(n, seed=n)
    y, calls = prog.run("forward", x)
    assert isinstance(y, aotrun.Tensor)
    assert y.shape == (n, 3) and y.dtype == "float32" and y.device == "cpu"
    np.testing.assert_allclose(np.from_dlpack(y), reference(x), rtol=1e-6,
                               atol=1e-5)
    assert np.asarray(calls).shape == (1,)


def test_output_plans_follow_input_shapes(prog):
    """The output shapes planned for one set of input shapes are kept for
    the next call with the same shapes, never reused for other shapes,
    and at most a bounded number are kept."""
    m = prog.method()
    for n in [2, 5, 2, 9, 5, 1]:
        x = rand_x(n, seed=n)
        y, _ = m(x)
        assert y.shape == (n, 3)
        np.testing.assert_allclose(np.from_dlpack(y), reference(x),
                                   rtol=1e-6, atol=1e-5)
    for n in range(1, 2 * m._PLANS_KEPT):
        assert m(rand_x(n))[0].shape == (n, 3)
    assert 0 < len(m._plans) <= m._PLANS_KEPT
    # A wrong input count after good calls still gets the backend's
    # message (the plan of one input is not reused for two).
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        m(rand_x(2), rand_x(2))
    assert "execute got 2 inputs, the method takes 1" in str(e.value)
    # What the backend can do is asked again after a swap.
    assert m._has_ex is True
    m.swap_backend("cpu_ref")
    assert m._has_ex is None
    assert m(rand_x(3))[0].shape == (3, 3) and m._has_ex is True


def test_stateful_counter(prog):
    m = prog.method()
    x = rand_x(3)
    counts = [float(np.asarray(m(x)[1])[0]) for _ in range(4)]
    assert counts == [counts[0] + k for k in range(4)]


def test_outputs_are_numpy_without_copy(prog):
    y, _ = prog.run("forward", rand_x(5))
    arr = np.from_dlpack(y)
    assert isinstance(y.array, np.ndarray)
    assert np.shares_memory(arr, y.array)
    assert y.numpy() is y.array
    assert y.__dlpack_device__() == (1, 0)
    assert y.nbytes == 5 * 3 * 4 and len(y) == 5 and y.ndim == 2


def test_input_through_dlpack_only(prog):
    """Any object with __dlpack__ is accepted, and its memory is read in
    place: writing the array between calls changes the result."""
    x = rand_x(4)

    class OnlyDLPack:
        def __init__(self, a):
            self.a, self.calls = a, 0

        def __dlpack__(self, stream=None):
            self.calls += 1
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    src = OnlyDLPack(x)
    y, _ = prog.run("forward", src)
    assert src.calls == 1
    np.testing.assert_allclose(np.asarray(y), reference(x), rtol=1e-6,
                               atol=1e-5)


def test_non_contiguous_input_not_copied(prog):
    """Strides go through as they are: the backend refuses a strided view
    (a binding that copied would hide this)."""
    big = rand_x(8).repeat(2, axis=1)   # [8, 8]
    with pytest.raises(aotrun.NotSupportedError) as e:
        prog.run("forward", big[:, ::2])
    assert "input 0 (x) is not contiguous" in str(e.value)


def test_read_only_input(prog):
    x = rand_x(3)
    x.flags.writeable = False
    y, _ = prog.run("forward", x)
    np.testing.assert_allclose(np.asarray(y), reference(x), rtol=1e-6,
                               atol=1e-5)


def test_out_arrays(prog):
    x = rand_x(6)
    y = np.full((6, 3), np.nan, np.float32)
    c = np.zeros(1, np.float32)
    ry, rc = prog.run("forward", x, out=[y, c])
    np.testing.assert_allclose(y, reference(x), rtol=1e-6, atol=1e-5)
    assert ry.array is y and rc.array is c
    assert c[0] >= 1


def test_out_larger_than_needed(prog):
    """A dynamic dim: the backend writes the real size, the result is a
    view of the leading elements."""
    x = rand_x(2)
    y = np.zeros((5, 3), np.float32)
    ry, _ = prog.run("forward", x, out=[y, np.zeros(1, np.float32)])
    assert ry.shape == (2, 3)
    np.testing.assert_allclose(np.asarray(ry), reference(x), rtol=1e-6,
                               atol=1e-5)
    assert np.shares_memory(np.asarray(ry), y)


def test_out_errors(prog):
    x = rand_x(2)
    c = np.zeros(1, np.float32)
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", x, out=[np.zeros((2, 3), np.float64), c])
    assert str(e.value).endswith(
        "output 0 (y) has dtype float32, the caller's tensor has float64")
    with pytest.raises(aotrun.OutputTooSmallError) as e:
        prog.run("forward", x, out=[np.zeros((1, 3), np.float32), c])
    assert isinstance(e.value, aotrun.InvalidArgumentError)
    assert "output 0 (y) needs shape [2, 3], more than the caller's buffer " \
           "holds" in str(e.value)
    assert e.value.output == 0 and e.value.needed_shape == (2, 3)
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", x, out=[np.zeros((2, 3), np.float32)])
    assert "has 2 output(s), out= has 1" in str(e.value)
    ro = np.zeros((2, 3), np.float32)
    ro.flags.writeable = False
    with pytest.raises(aotrun.InvalidArgumentError):
        prog.run("forward", x, out=[ro, c])


# ---- errors carry the C message ---------------------------------------------


def test_dtype_error(prog):
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", rand_x(2).astype(np.float64))
    err = e.value
    assert isinstance(err, aotrun.Error) and isinstance(err, ValueError)
    assert err.status == 1 and err.status_name == "invalid argument"
    assert err.message == ("backend 'cpu_ref': execute_ex failed (invalid "
                           "argument): input 0 (x) has dtype float64, "
                           "expected float32")
    assert str(err) == err.message


def test_shape_errors(prog):
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", np.ones((2, 5), np.float32))
    assert "input 0 (x) has size 5 in dim 1, expected 4" in str(e.value)
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", np.ones((2, 4, 1), np.float32))
    assert "input 0 (x) has rank 3, the method declares 2" in str(e.value)


def test_input_count_errors(prog):
    x = rand_x(2)
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", x, x)
    assert "execute got 2 inputs, the method takes 1" in str(e.value)
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward")
    assert "execute got 0 inputs, the method takes 1" in str(e.value)


def test_error_classes():
    from aotrun import errors
    for status, cls in [(1, aotrun.InvalidArgumentError),
                        (2, aotrun.NotFoundError),
                        (3, aotrun.NotSupportedError),
                        (4, aotrun.AccessFailedError),
                        (5, aotrun.OutOfMemoryError),
                        (6, aotrun.InternalError),
                        (7, aotrun.VersionMismatchError)]:
        e = errors.error_for(status, "msg %d" % status)
        assert type(e) is cls and e.status == status
        assert str(e) == "msg %d" % status
    unknown = errors.error_for(99, "future code")
    assert type(unknown) is aotrun.InternalError and unknown.status == 99


# ---- closing and leaks ------------------------------------------------------


def test_closed_program_raises(program_dir, cpu_ref):
    p = aotrun.Program(program_dir, plugin=cpu_ref)
    m = p.method()
    p.close()
    p.close()   # twice is fine
    assert p.closed and m.closed
    with pytest.raises(aotrun.ClosedError):
        p.run("forward", rand_x(2))
    with pytest.raises(aotrun.ClosedError):
        m.run(rand_x(2))
    with pytest.raises(aotrun.ClosedError):
        p.method("forward")
    with pytest.raises(aotrun.ClosedError):
        p.set_option("x", 1)
    with pytest.raises(aotrun.ClosedError):
        _ = p.backend
    assert "closed" in repr(p)
    m.close()


def test_context_manager_closes(program_dir, cpu_ref):
    with aotrun.Program(program_dir, plugin=cpu_ref) as p:
        m = p.method()
    assert p.closed and m.closed


def test_method_close_then_reopen(prog):
    m = prog.method()
    m.close()
    m.close()
    with pytest.raises(aotrun.ClosedError):
        m.run(rand_x(1))


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _maps():
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def test_no_handle_leaks(program_dir, cpu_ref):
    """Opening, running and closing many programs leaves no file
    descriptors, mappings, mapped named data or exported capsules behind."""
    def cycle():
        p = aotrun.Program(program_dir, plugin=cpu_ref)
        y, _ = p.run("forward", rand_x(3))
        np.from_dlpack(y)
        p.close()
        p.close()
    cycle()
    gc.collect()
    fds, maps = _fds(), _maps()
    for _ in range(30):
        cycle()
    gc.collect()
    assert _fds() == fds
    assert _maps() <= maps + 2
    assert aotrun.live_exports() == 0


def test_num_mapped_released(program_dir, cpu_ref):
    with aotrun.Program(program_dir, plugin=cpu_ref) as p:
        p.run("forward", rand_x(2))
        assert p.num_mapped >= 0
        p.method().close()
        assert p.num_mapped == 0


def test_failed_open_closes_everything(cpu_ref, tmp_path):
    fds = _fds()
    for _ in range(10):
        with pytest.raises(aotrun.Error):
            aotrun.Program(str(tmp_path / "missing"), plugin=cpu_ref)
    assert _fds() == fds


# ---- bench, threads ---------------------------------------------------------


def test_bench(prog):
    r = prog.bench("forward", rand_x(8), iterations=20, warmup=3)
    assert isinstance(r, aotrun.BenchResult)
    assert r.iterations == 20 and len(r.times) == 20 and r.warmup == 3
    assert 0 < r.min <= r.median <= r.max and r.p90 <= r.max
    assert r.mean_us > 0 and "forward" in repr(r)
    with pytest.raises(aotrun.InvalidArgumentError):
        prog.bench("forward", rand_x(8), iterations=0)
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.bench("forward", rand_x(8).astype(np.float64), iterations=2)
    assert "has dtype float64" in str(e.value)


def test_threads_share_a_method(prog):
    m = prog.method()
    errors_seen = []

    def work(seed):
        try:
            for k in range(20):
                x = rand_x(1 + (seed + k) % 9, seed=seed * 100 + k)
                y, _ = m(x)
                np.testing.assert_allclose(np.asarray(y), reference(x),
                                           rtol=1e-6, atol=1e-5)
        except Exception as e:  # reported below
            errors_seen.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors_seen == []


# ---- options (the minimal plugin has "offset" INT and "label" STRING) -------


@pytest.fixture
def scale_program(tmp_path):
    """A program directory for the minimal plugin: it reads factor.txt."""
    d = tmp_path / "scale"
    d.mkdir()
    (d / "factor.txt").write_text("2.5")
    (d / "manifest.json").write_text(json.dumps({"methods": {"forward": {
        "inputs": [{"name": "x", "dtype": "float32", "shape": ["n"]}],
        "outputs": [{"name": "y", "dtype": "float32", "shape": ["n"]}]}}}))
    return str(d)


def test_options(scale_program, minimal):
    with aotrun.Program(scale_program, plugin=minimal) as p:
        assert p.backend == "minimal"
        m = p.method()
        assert m.inputs[0].shape == ("n",)
        x = np.arange(4, dtype=np.float32)
        np.testing.assert_allclose(np.asarray(m(x)[0]), x * 2.5)
        assert m.get_option("offset") == 0
        m.set_option("offset", 3)
        assert m.get_option("offset") == 3
        np.testing.assert_allclose(np.asarray(m(x)[0]), x * 2.5 + 3)
        m.set_option("label", "hello")
        assert m.get_option("label") == "hello"
        with pytest.raises(aotrun.InvalidArgumentError) as e:
            m.set_option("offset", "three")
        assert "option 'offset' is INT" in str(e.value)
        with pytest.raises(aotrun.NotFoundError) as e:
            m.get_option("nope")
        assert "unknown option nope" in str(e.value)
        with pytest.raises(TypeError):
            m.set_option("offset", 1.5)


def test_backend_wide_options(scale_program, minimal):
    p = aotrun.Program(scale_program, plugin=minimal,
                       options={"offset": 10}, methods=[])
    try:
        assert p.get_option("offset") == 10
        x = np.ones(3, np.float32)
        np.testing.assert_allclose(np.asarray(p.run("forward", x)[0]),
                                   x * 2.5 + 10)
        with pytest.raises(aotrun.NotFoundError):
            p.set_option("nope", True)
    finally:
        p.set_option("offset", 0)   # backend-wide state lives in the plugin
        p.close()


def test_cpu_ref_has_no_options(prog):
    with pytest.raises(aotrun.NotFoundError) as e:
        prog.method().set_option("enable_cuda_graph_for_method", "forward")
    assert "has no option" in str(e.value)
    with pytest.raises(aotrun.NotFoundError):
        prog.get_option("anything")


def test_log_level(program_dir, cpu_ref):
    with aotrun.Program(program_dir, plugin=cpu_ref, log_level="error") as p:
        assert p.run("forward", rand_x(1))[0].shape == (1, 3)
    with pytest.raises(aotrun.InvalidArgumentError):
        aotrun.Program(program_dir, plugin=cpu_ref, log_level="loud")


# ---- raw memory exports (bfloat16 without torch, no NumPy) ------------------


def test_raw_tensor_export_roundtrip():
    from aotrun import _tensor
    raw = _tensor._Raw(12)
    t = aotrun.Tensor(None, "float32", [3], (1, 0), raw=raw, data=raw.data)
    a = np.from_dlpack(t)
    assert a.shape == (3,) and aotrun.live_exports() == 1
    del a
    gc.collect()
    assert aotrun.live_exports() == 0
    cap = t.__dlpack__()        # never consumed: released by its destructor
    assert aotrun.live_exports() == 1
    del cap
    assert aotrun.live_exports() == 0
    bf = aotrun.Tensor(None, "bfloat16", [2], (1, 0), raw=raw, data=raw.data)
    cap = bf.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    del cap
    assert aotrun.live_exports() == 0


# ---- torch (optional) -------------------------------------------------------


def _torch():
    try:
        import torch
        return torch
    except Exception as e:  # ImportError, or a broken install
        pytest.skip("torch is not importable here (%s: %s); the torch path "
                    "is covered by testing/gpu/test_python_binding.py"
                    % (type(e).__name__, str(e)[:80]))


def test_torch_cpu_tensors(prog):
    torch = _torch()
    x = torch.randn(5, 4)
    y, calls = prog.run("forward", x)
    ty = torch.from_dlpack(y)
    torch.testing.assert_close(ty, torch.from_numpy(reference(x.numpy())),
                               rtol=1e-6, atol=1e-5)
    out = torch.empty(5, 3)
    ry, _ = prog.run("forward", x, out=[out, torch.empty(1)])
    assert ry.array is out
    torch.testing.assert_close(out, ty)


def test_torch_bfloat16_error(prog):
    torch = _torch()
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", torch.ones(2, 4, dtype=torch.bfloat16))
    assert "input 0 (x) has dtype bfloat16, expected float32" in str(e.value)
    with pytest.raises(aotrun.InvalidArgumentError) as e:
        prog.run("forward", torch.ones(2, 4, requires_grad=True))
    assert "cannot be passed through DLPack" in str(e.value)
