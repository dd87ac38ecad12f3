"""pytest setup of the GPU op tests: each op of libaotrun_shim.so called
through ctypes (../shim_ctypes.py) on torch-owned CUDA tensors and compared
with eager PyTorch. Run on the GPU machine:

    AOTRUN_SHIM_LIB=.gpu/lib/libaotrun_shim.so python3 -m pytest testing/gpu/ops

Every test skips, printing the reason, where torch has no CUDA device or the
library is missing.
"""

import os
import sys
from contextlib import contextmanager

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.dirname(HERE))


def _lib_path():
    return os.environ.get("AOTRUN_SHIM_LIB",
                          os.path.join(ROOT, ".gpu", "lib", "libaotrun_shim.so"))


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "f32_tiled: float32 attention on the register-tiled "
        "kernel (AOTRUN_ATTN_F32=tiled; test_attention.py)")


def pytest_collection_modifyitems(config, items):
    """test_attention.py runs every case on both tensor-core kernels (its
    tc_kernel fixture); float32 uses neither, so a float32 case's tc_narrow
    copy would repeat its tc_wide run: deselected, not skipped."""
    keep, drop = [], []
    for item in items:
        cs = getattr(item, "callspec", None)
        params = cs.params if cs else {}
        if params.get("tc_kernel") == "narrow" and params.get("dtype") == "float32":
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture(scope="session")
def torch():
    t = pytest.importorskip("torch", exc_type=ImportError)
    if not t.cuda.is_available():
        pytest.skip("no usable GPU: torch.cuda.is_available() is False")
    return t


@pytest.fixture(scope="session")
def shim(torch):
    from shim_ctypes import Shim
    path = _lib_path()
    if not os.path.isfile(path):
        pytest.skip(f"no shim library at {path} (set AOTRUN_SHIM_LIB)")
    s = Shim(path)
    # One stream for the session, current for torch and for the shim, so
    # torch's reference work and aotrun's ops are ordered on it.
    ctx = s.stream()
    ctx.__enter__()
    yield s
    ctx.__exit__(None, None, None)


@pytest.fixture(autouse=True)
def _no_stale_device_error(request):
    """A test must leave no device error report behind (an out-of-range
    index the test did not expect)."""
    yield
    if "shim" in request.fixturenames:
        s = request.getfixturevalue("shim")
        left = s.take_device_error()
        assert left is None, f"unexpected device error report: {left}"


def same(a, b, *, bits=False):
    """True when a and b have the same shape and dtype and equal values
    (NaN equal to NaN); bits=True also requires identical bit patterns."""
    import torch as t
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if bits and a.dtype.is_floating_point:
        w = {2: t.int16, 4: t.int32, 8: t.int64}[a.element_size()]
        return t.equal(a.contiguous().view(w), b.contiguous().view(w))
    if a.dtype.is_floating_point:
        both_nan = a.isnan() & b.isnan()
        return bool(((a == b) | both_nan).all())
    return t.equal(a, b)


def assert_same(got, want, what="", *, bits=False):
    import torch as t
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if not same(got, want, bits=bits):
        g, w = got.flatten(), want.flatten()
        if bits and g.dtype.is_floating_point:
            iw = {2: t.int16, 4: t.int32, 8: t.int64}[g.element_size()]
            bad = g.contiguous().view(iw) != w.contiguous().view(iw)
        elif g.dtype.is_floating_point:
            bad = ~((g == w) | (g.isnan() & w.isnan()))
        else:
            bad = g != w
        idx = bad.nonzero().flatten()
        i = int(idx[0])
        raise AssertionError(
            f"{what}: {idx.numel()} of {g.numel()} values differ; first at "
            f"flat {i}: got {g[i].item()!r} want {w[i].item()!r}"
            + (f" (bits {hex(int(g.view(iw)[i]))} vs {hex(int(w.view(iw)[i]))})"
               if bits and g.dtype.is_floating_point else ""))


def _rearm_torch_rng(torch):
    """A capture whose end fails (capture invalidated, e.g. by a forbidden
    call inside it) makes torch.cuda.CUDAGraph.capture_end raise before it
    runs the default CUDA generator's capture epilogue: the generator stays
    "capturing" and every later torch.randn raises "Offset increment
    outside graph capture encountered unexpectedly". One successful capture
    (prologue + epilogue) resets it."""
    try:
        torch.cuda.synchronize()
    except Exception:  # noqa: BLE001 - best effort, the test fails anyway
        pass
    try:
        x = torch.zeros(1, device="cuda")
        s = torch.cuda.Stream()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            x.add_(1)
        torch.cuda.synchronize()
        del g
    except Exception:  # noqa: BLE001
        pass


@contextmanager
def graph_capture(torch, g, stream):
    """torch.cuda.graph(g, stream=stream) that never leaves torch in capture
    state: when the body or the end of the capture fails, the capture is
    closed (torch.cuda.graph's __exit__ ends it) and torch's CUDA RNG is
    re-armed before the error propagates, so one failing capture cannot
    make later tests fail."""
    ok = False
    try:
        with torch.cuda.graph(g, stream=stream):
            yield
        ok = True
    finally:
        if not ok:
            _rearm_torch_rng(torch)
