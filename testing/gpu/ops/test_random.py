"""The random ops of libaotrun_shim.so (rand, randn, randint*, randperm,
uniform, normal_functional, bernoulli_) on the GPU, called through ctypes.

aotrun draws from its own Philox generator, so values are never compared
with torch's bit for bit; distributions are: mean and variance within
6-sigma bounds at n = 2^20, one-sample Kolmogorov-Smirnov against the exact
CDF (float32/float64) and two-sample KS against torch's own draws of the
same dtype (float16/bfloat16 quantise the same way as ATen's kernels do),
ranges (min >= low, max < high, every value of a small range hit, counts
uniform), permutations, Bernoulli frequencies. Process-level behaviour runs
in fresh processes (random_child.py): two processes started together draw
different numbers, AOTRUN_SEED reproduces, the seeding-failure seam fails
one call with the logged message and the next call succeeds. A CUDA graph
that captured random ops draws new numbers on every replay.

Independence: torch's reference draws come from a local, seeded
torch.Generator (the `gen` fixture), never from torch's default CUDA
generator, so a default generator left "capturing" by a failed
torch.cuda.graph elsewhere in the session cannot fail these tests. The graph
test captures through the driver API (DriverGraph), not torch.cuda.graph, so
it never touches torch's generators, and it always ends its capture, also
when the captured code raises.

    AOTRUN_SHIM_LIB=.gpu/lib/libaotrun_shim.so python3 -m pytest testing/gpu/ops/test_random.py
"""

import ctypes
import json
import math
import os
import subprocess
import sys
from contextlib import contextmanager

import pytest

from conftest import _lib_path
from shim_ctypes import DTYPES, ShimError

HERE = os.path.dirname(os.path.abspath(__file__))
N = 1 << 20
FLOATS = ["float32", "float64", "float16", "bfloat16"]
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
# Kolmogorov-Smirnov bounds (false failure probability ~1e-7 and below).
KS1 = 3.0 / math.sqrt(N)
KS2 = 3.5 * math.sqrt(2.0 / N)


@pytest.fixture
def gen(torch):
    """A fresh, seeded CUDA generator for torch's reference draws."""
    g = torch.Generator(device="cuda")
    g.manual_seed(20240611)
    return g


# ------------------------------------------------------------- calling

def _i32(v):
    return None if v is None else ctypes.pointer(ctypes.c_int32(v))


def _code(torch, dtype):
    if dtype is None:
        return None
    if isinstance(dtype, str):
        dtype = getattr(torch, dtype)
    return DTYPES[dtype]


def _size(shape):
    return (ctypes.c_int64 * max(len(shape), 1))(*shape), len(shape)


def factory(torch, shim, name, shape, *, dtype=None, lead=(), gen=False,
            generator=None, layout=None, device=None, device_index=-1,
            pin=None, take=True):
    """Calls a factory op (rand, randn, randint*, their _generator
    variants); returns the result as a torch tensor (or the raw slot)."""
    size, n = _size(shape)
    r = shim.new_handle()
    args = list(lead) + [size, n]
    if gen:
        args.append(generator)
    args += [_i32(_code(torch, dtype)), _i32(layout), _i32(device),
             device_index, _i32(pin), r]
    shim.call(name, *args)
    return shim.take(r) if take else r


def rand(torch, shim, shape, dtype=None):
    return factory(torch, shim, "aoti_torch_cuda_rand", shape, dtype=dtype)


def randn(torch, shim, shape, dtype=None):
    return factory(torch, shim, "aoti_torch_cuda_randn", shape, dtype=dtype)


def randint_low(torch, shim, low, high, shape, dtype=None):
    return factory(torch, shim, "aoti_torch_cuda_randint_low", shape,
                   dtype=dtype, lead=(low, high))


def randint_low_out(shim, out, low, high, shape=None):
    shape = list(out.shape) if shape is None else shape
    size, n = _size(shape)
    h = shim.handle(out)
    try:
        shim.call("aoti_torch_cuda_randint_low_out", h, low, high, size, n)
    finally:
        shim.delete(h)


def randperm(torch, shim, n, dtype=None, take=True):
    r = shim.new_handle()
    shim.call("aoti_torch_cuda_randperm", n, _i32(_code(torch, dtype)), None,
              None, -1, None, r)
    return shim.take(r) if take else r


def like_op(shim, name, x, a, b, generator=None, take=True):
    h = shim.handle(x)
    r = shim.new_handle()
    try:
        shim.call(name, h, a, b, generator, r)
    finally:
        shim.delete(h)
    return shim.take(r) if take else r


def bernoulli_(shim, self_, p, generator=None):
    hs = shim.handle(self_)
    try:
        if isinstance(p, float):
            shim.call("aoti_torch_cuda_bernoulli__float", hs, p, generator)
        else:
            hp = shim.handle(p)
            try:
                shim.call("aoti_torch_cuda_bernoulli__Tensor", hs, hp,
                          generator)
            finally:
                shim.delete(hp)
    finally:
        shim.delete(hs)


# ------------------------------------------------------------ statistics

def ks_one(torch, x, cdf):
    """sup |F_n - F| of x against the continuous CDF `cdf` (a function of a
    float64 tensor)."""
    x, _ = x.double().flatten().sort()
    n = x.numel()
    f = cdf(x)
    i = torch.arange(n, device=x.device, dtype=torch.float64)
    return torch.maximum((i + 1) / n - f, f - i / n).max().item()


def ks_two(torch, a, b):
    """sup |F_a - F_b| of two samples (valid for discrete values too)."""
    a, _ = a.double().flatten().sort()
    b, _ = b.double().flatten().sort()
    v = torch.cat([a, b]).unique()
    fa = torch.searchsorted(a, v, right=True).double() / a.numel()
    fb = torch.searchsorted(b, v, right=True).double() / b.numel()
    return (fa - fb).abs().max().item()


def check_close(what, got, want, sigma, k=6.0):
    assert abs(got - want) <= k * sigma, (
        f"{what}: {got} differs from {want} by more than {k} sigma "
        f"({k * sigma})")


# ------------------------------------------------------------ rand / randn

@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_distribution(torch, shim, gen, dtype):
    dt = getattr(torch, dtype)
    x = rand(torch, shim, [1024, 1024], dtype)
    assert x.dtype == dt and x.shape == (1024, 1024) and x.is_contiguous()
    d = x.double()
    assert d.min().item() >= 0.0 and d.max().item() < 1.0, (
        f"{dtype}: values outside [0, 1): min {d.min().item()} max "
        f"{d.max().item()}")
    ref = torch.rand(N, device="cuda", dtype=dt, generator=gen).double()
    sd = math.sqrt(1 / 12 / N)
    check_close(f"{dtype} mean vs torch's", d.mean().item(),
                ref.mean().item(), math.sqrt(2) * sd)
    check_close(f"{dtype} variance", d.var().item(), ref.var().item(),
                math.sqrt(2 * (1 / 80 - 1 / 144) / N))
    assert ks_two(torch, d, ref) < KS2, f"{dtype}: two-sample KS vs torch.rand"
    if dtype in ("float32", "float64"):
        check_close(f"{dtype} mean", d.mean().item(), 0.5, sd)
        check_close(f"{dtype} variance", d.var().item(), 1 / 12,
                    math.sqrt((1 / 80 - 1 / 144) / N))
        assert ks_one(torch, d, lambda t: t) < KS1, f"{dtype}: KS vs U(0, 1)"


@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_distribution(torch, shim, gen, dtype):
    dt = getattr(torch, dtype)
    x = randn(torch, shim, [N], dtype)
    assert x.dtype == dt and x.shape == (N,)
    d = x.double()
    assert bool(d.isfinite().all())
    check_close(f"{dtype} mean", d.mean().item(), 0.0, 1 / math.sqrt(N))
    check_close(f"{dtype} variance", d.var().item(), 1.0, math.sqrt(2 / N))
    ref = torch.randn(N, device="cuda", dtype=dt, generator=gen).double()
    assert ks_two(torch, d, ref) < KS2, f"{dtype}: two-sample KS vs torch.randn"
    if dtype in ("float32", "float64"):
        assert ks_one(torch, d, torch.special.ndtr) < KS1, (
            f"{dtype}: KS vs N(0, 1)")


def test_default_dtypes_and_shapes(torch, shim):
    assert rand(torch, shim, [2, 3, 4]).dtype == torch.float32
    assert randn(torch, shim, [5]).dtype == torch.float32
    x = randint_low(torch, shim, 0, 5, [7])
    assert x.dtype == torch.int64
    r = factory(torch, shim, "aoti_torch_cuda_randint", [100], lead=(5,))
    assert r.dtype == torch.int64 and r.min() >= 0 and r.max() < 5
    assert randperm(torch, shim, 10).dtype == torch.int64
    # 0-d and empty shapes (no launch)
    z = rand(torch, shim, [])
    assert z.shape == () and 0 <= z.item() < 1
    assert rand(torch, shim, [0, 5]).shape == (0, 5)
    assert randn(torch, shim, [3, 0], "float16").shape == (3, 0)
    assert randint_low(torch, shim, 0, 3, [0]).shape == (0,)
    assert randperm(torch, shim, 0).shape == (0,)
    e = torch.empty(0, 4, dtype=torch.int64, device="cuda")
    randint_low_out(shim, e, 0, 3)
    bernoulli_(shim, torch.empty(0, device="cuda"), 0.5)


# ------------------------------------------------------------ uniform / normal

@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform(torch, shim, gen, dtype):
    dt = getattr(torch, dtype)
    # a dense transposed self: the result keeps its strides (empty_like)
    self_ = torch.empty(2048, 512, device="cuda", dtype=dt).t()
    y = like_op(shim, "aoti_torch_cuda_uniform", self_, -2.0, 3.0)
    assert y.dtype == dt and y.shape == self_.shape
    assert y.stride() == torch.empty_like(self_).stride()
    d = y.double()
    assert d.min().item() >= -2.0 and d.max().item() < 3.0
    ref = torch.empty(N, device="cuda", dtype=dt).uniform_(
        -2.0, 3.0, generator=gen).double()
    check_close(f"{dtype} mean vs torch's", d.mean().item(), ref.mean().item(),
                math.sqrt(2 * 25 / 12 / N))
    assert ks_two(torch, d, ref) < KS2
    # a non-dense self: dense strides in self's order
    g = torch.empty(300, 200, device="cuda", dtype=dt)[:, ::2]
    y2 = like_op(shim, "aoti_torch_cuda_uniform", g, 0.0, 1.0)
    assert y2.stride() == torch.empty_like(g).stride()


@pytest.mark.parametrize("dtype,nxt", [("bfloat16", 1.0078125),
                                       ("float16", 1.0009765625),
                                       ("float32", 1.0000001192092896)])
def test_uniform_never_returns_to(torch, shim, gen, dtype, nxt):
    """[1, next representable): u * range + 1 rounds to `to` about half the
    time; ATen's rule turns those into `from`, so every value is 1."""
    dt = getattr(torch, dtype)
    x = torch.empty(N, device="cuda", dtype=dt)
    y = like_op(shim, "aoti_torch_cuda_uniform", x, 1.0, nxt)
    assert bool((y == 1).all()), f"{dtype}: values other than from: {y.unique()}"
    # torch does the same
    assert bool((x.uniform_(1.0, nxt, generator=gen) == 1).all())
    z = like_op(shim, "aoti_torch_cuda_uniform", x, 0.0, 1.0)
    assert z.double().max().item() < 1.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_functional(torch, shim, gen, dtype):
    dt = getattr(torch, dtype)
    self_ = torch.empty(1024, 1024, device="cuda", dtype=dt)
    y = like_op(shim, "aoti_torch_cuda_normal_functional", self_, 3.0, 2.0)
    assert y.dtype == dt and y.shape == self_.shape
    d = y.double()
    check_close(f"{dtype} mean", d.mean().item(), 3.0, 2 / math.sqrt(N))
    check_close(f"{dtype} std", d.std().item(), 2.0, 2 * math.sqrt(0.5 / N))
    ref = torch.empty(N, device="cuda", dtype=dt).normal_(
        3.0, 2.0, generator=gen).double()
    assert ks_two(torch, d, ref) < KS2
    c = like_op(shim, "aoti_torch_cuda_normal_functional", self_, -1.5, 0.0)
    assert bool((c == -1.5).all())


# ------------------------------------------------------------ randint

INT_CASES = [("int8", -3, 7), ("int16", -3, 7), ("int32", -3, 7),
             ("int64", -3, 7), ("uint8", 250, 256), ("bool", 0, 2),
             ("float32", -3, 7), ("float64", -3, 7), ("float16", -3, 7),
             ("bfloat16", -3, 7)]


@pytest.mark.parametrize("dtype,low,high", INT_CASES)
def test_randint_small_range(torch, shim, dtype, low, high):
    dt = getattr(torch, dtype)
    x = randint_low(torch, shim, low, high, [N], dtype)
    assert x.dtype == dt
    v = x.double() if dtype != "bool" else x.double()
    assert v.min().item() == low and v.max().item() == high - 1
    k = high - low
    counts = torch.bincount((v - low).long(), minlength=k)
    assert counts.numel() == k and bool((counts > 0).all())
    sigma = math.sqrt(N / k * (1 - 1 / k))
    for i, c in enumerate(counts.tolist()):
        check_close(f"{dtype} count of {low + i}", c, N / k, sigma)


def test_randint_full_int64_range(torch, shim):
    """inductor_seeds: randint_low_out(INT64_MIN, INT64_MAX)."""
    out = torch.empty(N, dtype=torch.int64, device="cuda")
    randint_low_out(shim, out, INT64_MIN, INT64_MAX)
    assert out.unique().numel() >= N - 1
    f = (out.double() / 2.0 ** 63)
    check_close("mean of x / 2^63", f.mean().item(), 0.0,
                math.sqrt(1 / 3 / N))
    for bit in (0, 1, 31, 32, 62, 63):
        frac = ((out >> bit) & 1).double().mean().item()
        check_close(f"bit {bit} frequency", frac, 0.5, 0.5 / math.sqrt(N))


@pytest.mark.parametrize("high", [1 << 40, (1 << 32) + 1, 1 << 32, 1000003])
def test_randint_wide_ranges(torch, shim, high):
    x = randint_low(torch, shim, 0, high, [N])
    assert x.min().item() >= 0 and x.max().item() < high
    check_close(f"mean / high for high {high}", (x.double() / high).mean().item(),
                0.5, math.sqrt(1 / 12 / N))
    check_close("low bit", (x & 1).double().mean().item(), 0.5,
                0.5 / math.sqrt(N))


def test_randint_uint8_full_range(torch, shim):
    x = randint_low(torch, shim, 0, 256, [N], "uint8")
    counts = torch.bincount(x.long(), minlength=256)
    assert bool((counts > 0).all())
    check_close("uint8 mean", x.double().mean().item(), 127.5,
                math.sqrt((256 ** 2 - 1) / 12 / N))


def test_randint_low_out_strided(torch, shim):
    base = torch.full((64, 96), -99, dtype=torch.int64, device="cuda")
    view = base[:, ::3]  # not dense
    randint_low_out(shim, view, 10, 20)
    assert view.min().item() >= 10 and view.max().item() < 20
    mask = torch.zeros_like(base, dtype=torch.bool)
    mask[:, ::3] = True
    assert bool((base[~mask] == -99).all()), "elements outside 'out' written"
    t = torch.full((32, 48), -1, dtype=torch.int32, device="cuda").t()
    randint_low_out(shim, t, -5, 5)  # dense, transposed
    assert t.min().item() >= -5 and t.max().item() < 5
    assert torch.unique(t).numel() == 10
    f = torch.zeros(1000, dtype=torch.float16, device="cuda")
    randint_low_out(shim, f, 0, 100)
    assert bool((f == f.round()).all()) and f.max().item() < 100
    with pytest.raises(ShimError, match=r"'out' has size \[1000\] but 'size' is \[999\]"):
        randint_low_out(shim, f, 0, 100, [999])


def test_inductor_seeds_change_every_call(torch, shim):
    a = torch.empty(1024, dtype=torch.int64, device="cuda")
    b = torch.empty_like(a)
    randint_low_out(shim, a, INT64_MIN, INT64_MAX)
    randint_low_out(shim, b, INT64_MIN, INT64_MAX)
    assert a.unique().numel() == 1024
    assert not bool((a == b).any())


# ------------------------------------------------------------ randperm

@pytest.mark.parametrize("dtype,n", [("int64", 1), ("int64", 2), ("int64", 7),
                                     ("int64", 1000), ("int64", N),
                                     ("int32", 100000), ("float32", 5000),
                                     ("float64", 300), ("float16", 2049),
                                     ("bfloat16", 100), ("uint8", 256),
                                     ("int8", 128), ("int16", 3000)])
def test_randperm_is_a_permutation(torch, shim, dtype, n):
    dt = getattr(torch, dtype)
    p = randperm(torch, shim, n, dtype)
    assert p.dtype == dt and p.shape == (n,)
    want = torch.arange(n, device="cuda", dtype=torch.int64).to(dt)
    assert torch.equal(p.sort().values, want.sort().values)
    if n >= 1000:
        q = randperm(torch, shim, n, dtype)
        assert not torch.equal(p, q)
        # not close to the identity either
        assert (p.long() == torch.arange(n, device="cuda")).float().mean() < 0.01


def test_randperm_uniform_over_permutations(torch, shim):
    draws = 4800
    counts = {}
    for _ in range(draws):
        p = tuple(randperm(torch, shim, 4).tolist())
        counts[p] = counts.get(p, 0) + 1
    assert len(counts) == 24, f"only {len(counts)} of 24 permutations seen"
    for perm, c in counts.items():
        check_close(f"count of {perm}", c, draws / 24,
                    math.sqrt(draws / 24 * (1 - 1 / 24)))


# ------------------------------------------------------------ bernoulli

@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64",
                                   "bool", "int64", "uint8"])
def test_bernoulli_float(torch, shim, dtype):
    dt = getattr(torch, dtype)
    x = torch.full((1024, 1024), 7 if dtype != "bool" else 0, dtype=dt,
                   device="cuda")
    bernoulli_(shim, x, 0.3)
    v = x.double()
    assert bool(((v == 0) | (v == 1)).all())
    check_close(f"{dtype} frequency", v.mean().item(), 0.3,
                math.sqrt(0.21 / N))
    bernoulli_(shim, x, 0.0)
    assert not bool(x.bool().any())
    bernoulli_(shim, x, 1.0)
    assert bool(x.bool().all())


def test_bernoulli_float_strided_self(torch, shim):
    base = torch.full((256, 300), 7.0, device="cuda")
    view = base[::2, 1::3]
    bernoulli_(shim, view, 0.5)
    assert bool(((view == 0) | (view == 1)).all())
    mask = torch.zeros_like(base, dtype=torch.bool)
    mask[::2, 1::3] = True
    assert bool((base[~mask] == 7).all()), "elements outside 'self' written"
    check_close("frequency", view.mean().item(), 0.5,
                0.5 / math.sqrt(view.numel()))


@pytest.mark.parametrize("pdtype", FLOATS)
@pytest.mark.parametrize("sdtype", ["float32", "bool", "int64"])
def test_bernoulli_tensor_broadcast(torch, shim, pdtype, sdtype):
    rows, cols = 4096, 256
    p = torch.linspace(0, 1, cols, device="cuda").to(getattr(torch, pdtype))
    x = torch.zeros(rows, cols, device="cuda", dtype=getattr(torch, sdtype))
    bernoulli_(shim, x, p)
    freq = x.double().mean(0)
    pd = p.double()
    # 7 sigma per column: 256 columns, the rarest with ~16 expected hits
    # (binomial tails; ~1e-8 false failures per test)
    tol = 7 * torch.sqrt(pd * (1 - pd) / rows) + 1e-12
    bad = (freq - pd).abs() > tol
    assert not bool(bad.any()), (
        f"column frequencies off: {freq[bad][:5].tolist()} vs p "
        f"{pd[bad][:5].tolist()}")
    assert not bool(x[:, 0].bool().any()) and bool(x[:, -1].bool().all())


def test_bernoulli_tensor_layouts(torch, shim, gen):
    # p with self's shape but transposed storage; self strided
    p = torch.rand(300, 200, device="cuda", generator=gen).t()  # (200, 300)
    base = torch.full((200, 600), 5.0, device="cuda")
    self_ = base[:, ::2]
    bernoulli_(shim, self_, p)
    assert bool(((self_ == 0) | (self_ == 1)).all())
    assert bool((base[:, 1::2] == 5).all())
    check_close("mean vs p", self_.mean().item(), p.mean().item(),
                0.5 / math.sqrt(self_.numel()))
    # 0-d p broadcasts
    x = torch.empty(N, device="cuda")
    bernoulli_(shim, x, torch.tensor(0.25, device="cuda"))
    check_close("0-d p", x.mean().item(), 0.25, math.sqrt(0.1875 / N))


def test_bernoulli_tensor_p_out_of_range(torch, shim):
    p = torch.tensor([0.5, 1.5, 0.5, -1.0], device="cuda")
    x = torch.full((1000, 4), 9.0, device="cuda")
    bernoulli_(shim, x, p)
    msg = shim.take_device_error()
    assert msg is not None and "aoti_torch_cuda_bernoulli__Tensor: 'p' holds" \
        " the probability" in msg and "outside [0, 1]" in msg, msg
    assert not bool(x[:, 1].bool().any()) and not bool(x[:, 3].bool().any())
    assert bool(((x == 0) | (x == 1)).all())


# ------------------------------------------------------------ generator, args

def test_generator_refused_and_none_accepted(torch, shim):
    fake = ctypes.pointer(ctypes.c_void_p(0x1234))
    none = ctypes.pointer(ctypes.c_void_p(None))
    for name in ("aoti_torch_cuda_rand_generator",
                 "aoti_torch_cuda_randn_generator"):
        with pytest.raises(ShimError, match=f"{name}: 'generator' is a torch "
                           "Generator"):
            factory(torch, shim, name, [4], gen=True, generator=fake)
        assert factory(torch, shim, name, [4], gen=True,
                       generator=none).shape == (4,)
        assert factory(torch, shim, name, [4], gen=True,
                       generator=None).shape == (4,)
    with pytest.raises(ShimError, match="randint_generator: 'generator' is a"):
        factory(torch, shim, "aoti_torch_cuda_randint_generator", [4],
                lead=(5,), gen=True, generator=fake)
    r = factory(torch, shim, "aoti_torch_cuda_randint_generator", [100],
                lead=(5,), gen=True, generator=none)
    assert r.min() >= 0 and r.max() < 5
    x = torch.empty(8, device="cuda")
    with pytest.raises(ShimError, match="uniform: 'generator' is a torch"):
        like_op(shim, "aoti_torch_cuda_uniform", x, 0.0, 1.0, generator=fake)
    with pytest.raises(ShimError, match="bernoulli__float: 'generator' is a"):
        bernoulli_(shim, x, 0.5, generator=fake)


def test_argument_errors(torch, shim):
    with pytest.raises(ShimError, match=r"'low' = 5 must be less than 'high' = 5"):
        randint_low(torch, shim, 5, 5, [3])
    with pytest.raises(ShimError, match="'dtype' is int64"):
        rand(torch, shim, [3], "int64")
    with pytest.raises(ShimError, match=r"'layout' is 2"):
        factory(torch, shim, "aoti_torch_cuda_rand", [3], layout=2)
    with pytest.raises(ShimError, match=r"'device' is device type 0 \(cpu\)"):
        factory(torch, shim, "aoti_torch_cuda_randn", [3], device=0)
    with pytest.raises(ShimError, match="'pin_memory' is true"):
        factory(torch, shim, "aoti_torch_cuda_rand", [3], pin=1)
    with pytest.raises(ShimError, match=r"but got p = 1\.5"):
        bernoulli_(shim, torch.empty(3, device="cuda"), 1.5)
    with pytest.raises(ShimError, match="'high' - 1 = 256 is out of range for dtype uint8"):
        randint_low(torch, shim, 0, 257, [3], "uint8")
    # an explicit cuda device and index
    y = factory(torch, shim, "aoti_torch_cuda_rand", [3], device=1,
                device_index=torch.cuda.current_device())
    assert y.shape == (3,)


# ------------------------------------------------------------ CUDA graphs

class DriverGraph:
    """A CUDA graph captured from a stream and replayed through the driver
    API (libcuda.so.1). torch.cuda.graph registers torch's default CUDA
    generator with every capture, and a capture that fails to end leaves
    that generator "capturing" for the rest of the process (every later
    torch.rand raises "Offset increment outside graph capture"); aotrun's
    random ops use no torch generator, so this capture leaves torch alone.

        g = DriverGraph(torch)
        with g.capture(stream):   # always ends the capture
            ...                   # no torch RNG, no synchronisation
        g.replay(stream)
        g.close()
    """

    CAPTURE_THREAD_LOCAL = 1  # CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
    AUTO_FREE_ON_LAUNCH = 1   # CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH

    def __init__(self, torch):
        torch.cuda.synchronize()  # the runtime's context is current here
        vp = ctypes.c_void_p
        cu = ctypes.CDLL("libcuda.so.1")
        for name, args in (
                ("cuStreamBeginCapture_v2", [vp, ctypes.c_int]),
                ("cuStreamEndCapture", [vp, ctypes.POINTER(vp)]),
                ("cuGraphInstantiateWithFlags", [ctypes.POINTER(vp), vp,
                                                 ctypes.c_ulonglong]),
                ("cuGraphLaunch", [vp, vp]),
                ("cuGraphExecDestroy", [vp]),
                ("cuGraphDestroy", [vp]),
                ("cuGetErrorName", [ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_char_p)])):
            f = getattr(cu, name)
            f.argtypes, f.restype = args, ctypes.c_int
        self.cu = cu
        self.graph, self.exec = vp(), vp()

    def _check(self, what, rc):
        if rc != 0:
            name = ctypes.c_char_p()
            self.cu.cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError(f"{what} failed: CUresult {rc} "
                               f"({(name.value or b'?').decode()})")

    @contextmanager
    def capture(self, stream):
        h = ctypes.c_void_p(stream.cuda_stream)
        self._check("cuStreamBeginCapture",
                    self.cu.cuStreamBeginCapture_v2(h, self.CAPTURE_THREAD_LOCAL))
        ended = False
        try:
            yield
            ended = True
            self._check("cuStreamEndCapture (the capture was invalidated)",
                        self.cu.cuStreamEndCapture(h, ctypes.byref(self.graph)))
        finally:
            if not ended:  # the captured code raised: end it, keep its error
                g = ctypes.c_void_p()
                self.cu.cuStreamEndCapture(h, ctypes.byref(g))
                if g.value:
                    self.cu.cuGraphDestroy(g)
        self._check("cuGraphInstantiateWithFlags",
                    self.cu.cuGraphInstantiateWithFlags(
                        ctypes.byref(self.exec), self.graph,
                        self.AUTO_FREE_ON_LAUNCH))

    def replay(self, stream):
        self._check("cuGraphLaunch", self.cu.cuGraphLaunch(
            self.exec, ctypes.c_void_p(stream.cuda_stream)))

    def close(self):
        if self.exec.value:
            self.cu.cuGraphExecDestroy(self.exec)
            self.exec = ctypes.c_void_p()
        if self.graph.value:
            self.cu.cuGraphDestroy(self.graph)
            self.graph = ctypes.c_void_p()


def test_cuda_graph_replays_draw_new_numbers(torch, shim):
    """randint_low_out (the seeds of Inductor's Philox kernels; one fused
    thread block), rand of 2^20 (the reservation kernel and a ticket),
    randn, bernoulli_ and randperm captured in one graph: each replay
    reserves new Philox blocks on the device, so draws differ between
    replays and from the warm-up run. Captured on a fresh stream after a
    warm-up run on it (which seeds the generator); nothing torch-random."""
    seeds = torch.empty(1024, dtype=torch.int64, device="cuda")
    big = torch.empty(N, device="cuda")
    small = torch.empty(64, device="cuda")
    bern = torch.empty(4096, device="cuda")
    perm = torch.empty(1000, dtype=torch.int64, device="cuda")
    outs = (seeds, big, small, bern, perm)
    handles = []

    def run():
        size, n = _size([1024])
        shim.call("aoti_torch_cuda_randint_low_out", h_seeds, INT64_MIN,
                  INT64_MAX, size, n)
        for name, h, shape in (("aoti_torch_cuda_rand", h_big, [N]),
                               ("aoti_torch_cuda_randn", h_small, [64])):
            r = factory(torch, shim, name, shape, take=False)
            try:
                shim.call("aoti_torch_copy_", h, r.contents, 0)
            finally:
                shim.delete(r.contents)
        shim.call("aoti_torch_cuda_bernoulli__float", h_bern, 0.5, None)
        r = randperm(torch, shim, 1000, take=False)
        try:
            shim.call("aoti_torch_copy_", h_perm, r.contents, 0)
        finally:
            shim.delete(r.contents)

    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    g = DriverGraph(torch)
    try:
        for t in outs:
            handles.append(shim.handle(t))
        h_seeds, h_big, h_small, h_bern, h_perm = handles
        with shim.stream(s):
            run()  # warm-up on the capture stream (seeds the generator)
            torch.cuda.synchronize()
            warm = [t.clone() for t in outs]
            torch.cuda.synchronize()
            with g.capture(s):
                run()
            got = []
            for _ in range(2):
                g.replay(s)
                torch.cuda.synchronize()
                got.append([t.clone() for t in outs])
            torch.cuda.synchronize()
    finally:
        g.close()
        for h in handles:
            shim.delete(h)
    names = ("seeds", "rand", "randn", "bernoulli", "randperm")
    for i, name in enumerate(names):
        for a, b, what in ((warm[i], got[0][i], "warm-up and replay 1"),
                           (got[0][i], got[1][i], "replay 1 and replay 2")):
            assert not torch.equal(a, b), f"{name}: {what} drew the same numbers"
    r1 = got[1]
    assert r1[0].unique().numel() == 1024
    assert r1[1].min().item() >= 0 and r1[1].max().item() < 1
    check_close("replayed rand mean", r1[1].double().mean().item(), 0.5,
                math.sqrt(1 / 12 / N))
    assert torch.equal(r1[4].sort().values, torch.arange(1000, device="cuda"))
    # seeds of the two replays share no value (2^-54 chance per pair)
    assert not bool(torch.isin(got[0][0], got[1][0]).any())


# ------------------------------------------------------------ processes

def _child(mode, *args, env_extra=None, start_only=False):
    env = dict(os.environ)
    env.pop("AOTRUN_SEED", None)
    env.update(env_extra or {})
    cmd = [sys.executable, os.path.join(HERE, "random_child.py"),
           os.path.abspath(_lib_path()), mode] + [str(a) for a in args]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, text=True)
    return p if start_only else _finish(p)


def _finish(p):
    try:
        out, err = p.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        p.kill()  # leave no child behind
        p.communicate()
        raise
    assert p.returncode == 0, f"child failed ({p.returncode}): {err[-3000:]}"
    return json.loads(out.strip().splitlines()[-1]), err


def test_two_processes_draw_different_numbers(torch, shim):
    procs = [_child("draw", 64, start_only=True) for _ in range(2)]
    (a, _), (b, _) = [_finish(p) for p in procs]
    assert "error" not in a and "error" not in b, (a, b)
    assert a["rand"] != b["rand"], "two processes drew the same numbers"
    assert not set(a["seeds"]) & set(b["seeds"])


def test_fixed_seed_reproduces(torch, shim):
    a, _ = _child("draw", 64, env_extra={"AOTRUN_SEED": "12345"})
    b, _ = _child("draw", 64, env_extra={"AOTRUN_SEED": "12345"})
    c, _ = _child("draw", 64, env_extra={"AOTRUN_SEED": "0x3039"})  # 12345
    d, _ = _child("draw", 64, env_extra={"AOTRUN_SEED": "12346"})
    assert a == b == c, "AOTRUN_SEED=12345 did not reproduce the draws"
    assert a["rand"] != d["rand"]


def test_bad_env_seed_fails_the_call(torch, shim):
    r, err = _child("draw", 8, env_extra={"AOTRUN_SEED": "12x"})
    assert "AOTRUN_SEED='12x' is not an unsigned 64-bit integer" in r["error"]
    assert "aotrun error: seeding the random generator of cuda:0 failed" in err


@pytest.mark.parametrize("step,text", [
    (1, "the seed source failed: injected by aotrun_shim_random_fail_next_seed"),
    (2, "copying the random generator state to cuda:0 failed: injected by "
        "aotrun_shim_random_fail_next_seed")])
def test_seeding_failure_seam(torch, shim, step, text):
    r, err = _child("seam", step)
    assert r["arm"] == 0
    assert not r["first"]["ok"] and text in r["first"]["error"], r
    assert ("aotrun error: seeding the random generator of cuda:0 failed (the "
            "next random op tries again): aoti_torch_cuda_rand:") in err, err
    assert text in err
    assert r["second"]["ok"], f"the retry failed: {r['second']}"
    check_close("retry's mean", r["second"]["mean"], 0.5,
                math.sqrt(1 / 12 / 1000))


def test_set_seed_in_process(torch, shim):
    """Last: fixes this process's seed (and resets the offset)."""
    set_seed = shim.fn("aotrun_shim_random_set_seed")
    assert set_seed(77) == 0
    a = rand(torch, shim, [1000])
    sa = randint_low(torch, shim, INT64_MIN, INT64_MAX, [16])
    assert set_seed(77) == 0
    b = rand(torch, shim, [1000])
    sb = randint_low(torch, shim, INT64_MIN, INT64_MAX, [16])
    assert torch.equal(a, b) and torch.equal(sa, sb)
    assert set_seed(78) == 0
    c = rand(torch, shim, [1000])
    assert not torch.equal(a, c)


@pytest.mark.parametrize("dtype,low,high", [
    ("int64", -50, 50), ("int64", INT64_MIN, INT64_MAX), ("uint8", 0, 200),
    ("int32", -7, 1 << 20), ("float64", 0, 1000), ("float32", -3, 3),
    ("int16", 0, 100), ("bool", 0, 2), ("bfloat16", 0, 256)])
def test_every_layout_draws_the_same_values(torch, shim, dtype, low, high):
    """After the seed tests (fixes the seed): a dense out (vector stores), a
    misaligned dense out (element stores) and a strided out (stride walk)
    get the same values for the same seed and size, whole chunks and tails,
    one fused block and the reservation kernel (n > 8192), 4-byte and
    8-byte values (these are spread over two halves of the output)."""
    set_seed = shim.fn("aotrun_shim_random_set_seed")
    dt = getattr(torch, dtype)
    for n in (1, 2, 3, 5, 130, 8191, 8195, 100003):
        assert set_seed(4242) == 0
        dense = torch.zeros(n, dtype=dt, device="cuda")
        randint_low_out(shim, dense, low, high)
        assert set_seed(4242) == 0
        mis = torch.zeros(n + 1, dtype=dt, device="cuda")[1:]
        randint_low_out(shim, mis, low, high)
        assert set_seed(4242) == 0
        base = torch.zeros(n, 3, dtype=dt, device="cuda")
        randint_low_out(shim, base[:, 1], low, high)
        for got, what in ((mis, "misaligned"), (base[:, 1], "strided")):
            assert torch.equal(got, dense), f"{dtype} n={n}: {what} differs"
        assert not bool(base[:, 0].bool().any() | base[:, 2].bool().any())
        # compared in the dtype (int64 values near 2^63 round up in double)
        assert dense.min().item() >= low and dense.max().item() <= high - 1
        if n >= 8191 and high - low >= 100:
            assert dense.unique().numel() >= 90, f"{dtype} n={n}: few values"
        # bernoulli_ (scalar p) into the same layouts
        assert set_seed(99) == 0
        bernoulli_(shim, dense, 0.5)
        assert set_seed(99) == 0
        bernoulli_(shim, mis, 0.5)
        assert set_seed(99) == 0
        bernoulli_(shim, base[:, 1], 0.5)
        for got, what in ((mis, "misaligned"), (base[:, 1], "strided")):
            assert torch.equal(got, dense), f"bernoulli {dtype} n={n}: {what}"
        if n >= 8191:
            check_close(f"bernoulli {dtype} n={n}", dense.double().mean().item(),
                        0.5, 0.5 / math.sqrt(n))
