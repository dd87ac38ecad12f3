"""The scatter family of libaotrun_shim.so against eager PyTorch:
aoti_torch_cuda_scatter_src_out / scatter_value_out / scatter_reduce_two_out
and the generic aoti_torch_scatter_out / aoti_torch_scatter_reduce_out.

What is compared how:
- scatter src: bit for bit with torch's CPU scatter (sequential, so the last
  write in index order wins; CUDA eager's winner among repeats is random).
- scatter value, amax/amin, integer and bool sum/prod/mean, float64
  sum/prod/mean on values whose result is exact in any order: bit for bit
  with CUDA eager (NaN inputs use torch's one NaN payload; amax/amin inputs
  avoid +-0.0 ties, whose winner is order-dependent in ATen).
- float32/float16/bfloat16 sum/prod/mean: ATen's atomics round in a random
  order (and round float16/bfloat16 sums every step, where ours add in
  float and round once), so a tolerance against a float64 reference, plus
  bit-identical results across two runs of ours.

Run on the GPU machine:
    AOTRUN_SHIM_LIB=.gpu/lib/libaotrun_shim.so python3 -m pytest -q testing/gpu/ops/test_scatter.py
"""

import pytest

from conftest import assert_same

SRC = "aoti_torch_cuda_scatter_src_out"
VALUE = "aoti_torch_cuda_scatter_value_out"
REDUCE = "aoti_torch_cuda_scatter_reduce_two_out"
GENERIC_SRC = "aoti_torch_scatter_out"
GENERIC_REDUCE = "aoti_torch_scatter_reduce_out"

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]


def _dt(torch, name):
    return getattr(torch, name)


def call(shim, name, out, self_, dim, index, *rest, same=False):
    """Calls a scatter op on torch tensors; same=True passes self's handle
    as out (what AOTInductor emits for an in-place update)."""
    import torch
    made = []

    def h(t):
        made.append(shim.handle(t))
        return made[-1]

    try:
        hself = h(self_)
        hout = hself if same else h(out)
        args = [hout, hself, dim, h(index)]
        for r in rest:
            if isinstance(r, torch.Tensor):
                args.append(h(r))
            elif isinstance(r, str):
                args.append(r.encode())
            else:
                args.append(r)
        shim.call(name, *args)
    finally:
        for x in made:
            shim.delete(x)


def ours_reduce(shim, self_, dim, index, src, reduce, include_self=True,
                out=None, same=False):
    if same:
        call(shim, REDUCE, None, self_, dim, index, src, reduce,
             int(include_self), same=True)
        return self_
    out = out if out is not None else torch_empty_like(self_)
    call(shim, REDUCE, out, self_, dim, index, src, reduce, int(include_self))
    return out


def torch_empty_like(t):
    import torch
    out = torch.empty_like(t)
    if out.dtype.is_floating_point:
        out.fill_(float("nan"))  # stale values must not survive
    elif out.dtype != torch.bool:
        out.fill_(77)
    return out


def values(torch, shape, dtype, lo=-50, hi=50):
    """Random values of dtype; floats are continuous (no exact zeros)."""
    if dtype == torch.bool:
        return torch.rand(shape, device="cuda") < 0.3
    if dtype.is_floating_point:
        return (torch.randn(shape, device="cuda", dtype=torch.float64) * 3
                ).to(dtype)
    if dtype == torch.uint8:
        return torch.randint(0, 255, shape, device="cuda", dtype=dtype)
    return torch.randint(lo, hi, shape, device="cuda", dtype=dtype)


# Layouts: (self shape, index shape, src shape, dim); index values repeat.
LAYOUTS = [
    ((16, 50), (16, 30), (16, 40), 1),      # dim fastest: per-line winners
    ((20, 16), (60, 16), (64, 17), 0),      # dim outer: sort engine
    ((5, 6, 7), (5, 6, 9), (6, 6, 9), -1),
    ((5, 6, 7), (4, 11, 7), (5, 12, 7), 1),
    ((3, 4, 5, 6), (2, 4, 5, 9), (3, 4, 5, 9), 3),
    ((3, 4, 5, 6), (6, 3, 2, 6), (6, 4, 5, 6), -4),
    ((40,), (100,), (120,), 0),
    ((), (), (), 0),
    ((), (1,), (1,), -1),
]


def make_index(torch, shape, dim_size, dim, dtype=None):
    dtype = dtype or torch.int64
    if dim_size == 0:
        return torch.zeros(shape, device="cuda", dtype=dtype)
    return torch.randint(0, dim_size, shape, device="cuda", dtype=dtype)


def dim_size_of(shape, dim):
    return 1 if len(shape) == 0 else shape[dim]


# ---------------------------------------------------------------- scatter src

@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool", "complex64",
                                                   "complex128"])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_scatter_src_matches_sequential_scatter(torch, shim, dtype,
                                                index_dtype, layout):
    s_shape, i_shape, src_shape, dim = LAYOUTS[layout]
    dt = _dt(torch, dtype)
    if dt.is_complex:
        self_ = torch.randn(s_shape, device="cuda", dtype=dt)
        src = torch.randn(src_shape, device="cuda", dtype=dt)
    else:
        self_ = values(torch, s_shape, dt)
        src = values(torch, src_shape, dt)
    index = make_index(torch, i_shape, dim_size_of(s_shape, dim), dim,
                       _dt(torch, index_dtype))
    out = torch_empty_like(self_) if not dt.is_complex else torch.empty_like(self_)
    call(shim, SRC, out, self_, dim, index, src)
    want = torch.scatter(self_.cpu(), dim, index.cpu().long(), src.cpu()).cuda()
    assert_same(out, want, f"scatter src {dtype} layout {layout}", bits=True)


def test_scatter_src_strided_operands(torch, shim):
    base = torch.randn(50, 16, device="cuda")
    self_ = base.t()                                  # [16, 50] transposed
    src = torch.randn(40, 16, device="cuda").t()       # [16, 40] transposed
    index = torch.randint(0, 50, (16, 60), device="cuda")[:, ::2]  # sliced
    out = torch.empty(50, 16, device="cuda").t()
    call(shim, SRC, out, self_, 1, index, src)
    want = torch.scatter(self_.cpu(), 1, index.cpu(), src.cpu()).cuda()
    assert_same(out, want, "strided scatter src", bits=True)
    # dim 0 of a transposed index: still index's fastest dim
    index2 = torch.randint(0, 16, (50, 30), device="cuda").t()  # [30, 50]
    src2 = torch.randn(30, 50, device="cuda")
    out2 = torch.empty(16, 50, device="cuda")
    call(shim, SRC, out2, self_, 0, index2, src2)
    want2 = torch.scatter(self_.cpu(), 0, index2.cpu(), src2.cpu()).cuda()
    assert_same(out2, want2, "scatter src along an outer dim", bits=True)


def test_scatter_src_in_place_same_handle(torch, shim):
    x = torch.randn(64, 300, device="cuda", dtype=torch.bfloat16)
    ref = x.clone()
    index = torch.randint(0, 300, (64, 500), device="cuda")
    src = torch.randn(64, 500, device="cuda", dtype=torch.bfloat16)
    call(shim, SRC, None, x, -1, index, src, same=True)
    want = torch.scatter(ref.cpu(), -1, index.cpu(), src.cpu()).cuda()
    assert_same(x, want, "in-place scatter src", bits=True)


def test_scatter_src_expanded_index_and_long_lines(torch, shim):
    # index constant along dim 1 (stride 0): the sort engine's row mode
    dst = torch.randint(0, 30, (200,), device="cuda")
    index = dst[:, None].expand(200, 24)
    src = torch.randn(200, 24, device="cuda")
    self_ = torch.randn(30, 24, device="cuda")
    out = torch_empty_like(self_)
    call(shim, SRC, out, self_, 0, index, src)
    want = torch.scatter(self_.cpu(), 0, index.cpu(), src.cpu()).cuda()
    assert_same(out, want, "expanded index", bits=True)
    # a single long line with heavy repeats, and a target row too long for
    # shared memory: both take the sort engine
    for n_self in (7, 20000):
        self_ = torch.randn(n_self, device="cuda", dtype=torch.float64)
        index = torch.randint(0, n_self, (300000,), device="cuda")
        src = torch.randn(300000, device="cuda", dtype=torch.float64)
        out = torch_empty_like(self_)
        call(shim, SRC, out, self_, 0, index, src)
        want = torch.scatter(self_.cpu(), 0, index.cpu(), src.cpu()).cuda()
        assert_same(out, want, f"long line into {n_self}", bits=True)


def test_generic_scatter_out(torch, shim):
    from shim_ctypes import ShimError
    self_ = torch.randn(8, 9, device="cuda")
    index = torch.randint(0, 9, (8, 12), device="cuda")
    src = torch.randn(8, 12, device="cuda")
    out = torch_empty_like(self_)
    call(shim, GENERIC_SRC, out, self_, 1, index, src)
    want = torch.scatter(self_.cpu(), 1, index.cpu(), src.cpu()).cuda()
    assert_same(out, want, "aoti_torch_scatter_out", bits=True)
    with pytest.raises(ShimError, match="expected a CUDA tensor"):
        call(shim, GENERIC_SRC, out.cpu(), self_.cpu(), 1, index.cpu(),
             src.cpu())


# -------------------------------------------------------------- scatter value

@pytest.mark.parametrize("dtype,value", [
    ("float32", -1.5), ("float64", 2.25), ("float16", 0.1), ("bfloat16", 3e5),
    ("int8", -7.0), ("int16", 300.0), ("int32", -2e9), ("int64", 5.0),
    ("uint8", 200.0), ("bool", 1.0), ("bool", 0.0), ("complex64", 4.0),
])
@pytest.mark.parametrize("layout", [0, 1, 3, 6, 7])
def test_scatter_value(torch, shim, dtype, value, layout):
    s_shape, i_shape, _, dim = LAYOUTS[layout]
    dt = _dt(torch, dtype)
    self_ = (torch.randn(s_shape, device="cuda", dtype=dt) if dt.is_complex
             else values(torch, s_shape, dt))
    index = make_index(torch, i_shape, dim_size_of(s_shape, dim), dim)
    out = torch.empty_like(self_)
    call(shim, VALUE, out, self_, dim, index, value)
    want = torch.scatter(self_, dim, index, value)
    assert_same(out, want, f"scatter value {dtype}", bits=True)


def test_scatter_value_overflow_is_an_error(torch, shim):
    from shim_ctypes import ShimError
    self_ = torch.zeros(4, device="cuda", dtype=torch.int8)
    index = torch.zeros(2, device="cuda", dtype=torch.int64)
    with pytest.raises(ShimError, match="without overflow"):
        call(shim, VALUE, torch.empty_like(self_), self_, 0, index, 300.0)


# ---------------------------------------------------- scatter_reduce, exact

def reduce_inputs(torch, dtype, reduce, layout, nan=False, index_dtype=None):
    s_shape, i_shape, src_shape, dim = LAYOUTS[layout]
    dt = _dt(torch, dtype)
    self_ = values(torch, s_shape, dt)
    src = values(torch, src_shape, dt)
    if dt == torch.float64 and reduce in ("sum", "mean"):
        self_ = torch.randint(-1000, 1000, s_shape, device="cuda").to(dt)
        src = torch.randint(-1000, 1000, src_shape, device="cuda").to(dt)
    if dt == torch.float64 and reduce == "prod":  # powers of two: exact
        self_ = torch.randint(-3, 4, s_shape, device="cuda").to(dt).exp2()
        src = torch.randint(-3, 4, src_shape, device="cuda").to(dt).exp2()
        src = torch.where(torch.rand(src_shape, device="cuda") < 0.5, src, -src)
    if dt.is_floating_point and nan and src.numel() > 4:
        src.view(-1)[::7] = float("nan")
        self_.view(-1)[::5] = float("nan")
    index = make_index(torch, i_shape, dim_size_of(s_shape, dim), dim,
                       index_dtype)
    return self_, index, src, dim


EXACT_CASES = (
    [(r, d) for r in ("amax", "amin") for d in FLOATS + INTS]
    + [(r, d) for r in ("sum", "prod", "mean") for d in INTS + ["float64"]]
    + [("sum", "bool")]
)


@pytest.mark.parametrize("reduce,dtype", EXACT_CASES)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("layout", [0, 1, 2, 4, 6, 7])
def test_scatter_reduce_exact(torch, shim, reduce, dtype, include_self,
                              layout):
    self_, index, src, dim = reduce_inputs(
        torch, dtype, reduce, layout, nan=reduce in ("amax", "amin"))
    got = ours_reduce(shim, self_, dim, index, src, reduce, include_self)
    want = torch.scatter_reduce(self_, dim, index, src, reduce,
                                include_self=include_self)
    assert_same(got, want, f"{reduce} {dtype} include_self={include_self}",
                bits=True)


@pytest.mark.parametrize("reduce", ["amax", "sum", "mean", "prod"])
def test_scatter_reduce_int32_index_and_negative_dim(torch, shim, reduce):
    self_, index, src, dim = reduce_inputs(torch, "int32", reduce, 4,
                                           index_dtype=torch.int32)
    got = ours_reduce(shim, self_, dim - 4, index, src, reduce, False)
    want = torch.scatter_reduce(self_, dim, index.long(), src, reduce,
                                include_self=False)
    assert_same(got, want, f"{reduce} int32 index", bits=True)


# ------------------------------------------------ scatter_reduce, tolerance

TOL = {"float32": (1e-5, 1e-5), "float16": (2e-2, 2e-2),
       "bfloat16": (6e-2, 6e-2)}


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("layout", [0, 1, 3, 6])
def test_scatter_reduce_float(torch, shim, reduce, dtype, include_self,
                              layout):
    s_shape, i_shape, src_shape, dim = LAYOUTS[layout]
    dt = _dt(torch, dtype)
    if reduce == "prod":  # near 1: no overflow, small rounding drift
        self_ = (1 + 0.1 * torch.randn(s_shape, device="cuda")).to(dt)
        src = (1 + 0.1 * torch.randn(src_shape, device="cuda")).to(dt)
    else:
        self_ = values(torch, s_shape, dt)
        src = values(torch, src_shape, dt)
    index = make_index(torch, i_shape, dim_size_of(s_shape, dim), dim)
    got = ours_reduce(shim, self_, dim, index, src, reduce, include_self)
    again = ours_reduce(shim, self_, dim, index, src, reduce, include_self)
    assert_same(again, got, "two runs", bits=True)
    want = torch.scatter_reduce(self_.double(), dim, index, src.double(),
                                reduce, include_self=include_self)
    rtol, atol = TOL[dtype]
    scale = 1 if reduce == "prod" else 3 * 8  # sums of ~8 values of ~3
    torch.testing.assert_close(got.double(), want, rtol=rtol,
                               atol=atol * scale)


def test_float32_sum_is_deterministic_on_a_big_case(torch, shim):
    self_ = torch.randn(512, 1024, device="cuda")
    index = torch.randint(0, 512, (4096, 1024), device="cuda")
    src = torch.randn(4096, 1024, device="cuda")
    a = ours_reduce(shim, self_, 0, index, src, "sum")
    b = ours_reduce(shim, self_, 0, index, src, "sum")
    assert_same(a, b, "two runs", bits=True)
    want = torch.scatter_reduce(self_.double(), 0, index, src.double(), "sum")
    torch.testing.assert_close(a.double(), want, rtol=1e-5, atol=1e-4)


# ------------------------------------------- sum/prod/mean, the tile engine
# Shapes whose whole lines fit one block (scatter_tile_kernels.cu): the
# tile engine sorts each block's items in shared memory instead of the
# global sort. (self shape, index shape, dim).
TILE_SHAPES = [
    ((512, 64), (4096, 64), 0),      # dim 0, lines of 4096: 2 per block
    ((3, 700, 5), (3, 1000, 5), 1),  # dim in the middle, 8 lines per block
    ((40, 300), (40, 2000), 1),      # along the last dim
]


def tile_inputs(torch, shape, dtype, reduce, transposed_src=False):
    s_shape, i_shape, dim = TILE_SHAPES[shape]
    dt = _dt(torch, dtype)
    if dt.is_floating_point and reduce == "prod":
        self_ = (1 + 0.01 * torch.randn(s_shape, device="cuda")).to(dt)
        src = (1 + 0.01 * torch.randn(i_shape, device="cuda")).to(dt)
    elif dt.is_floating_point:
        self_, src = values(torch, s_shape, dt), values(torch, i_shape, dt)
    else:
        self_ = values(torch, s_shape, dt, -5, 5)
        src = values(torch, i_shape, dt, -5, 5)
    if transposed_src:  # same values, transposed storage
        src = src.transpose(0, -1).contiguous().transpose(0, -1)
    index = make_index(torch, i_shape, s_shape[dim], dim)
    return self_, index, src, dim


@pytest.mark.parametrize("shape", range(len(TILE_SHAPES)))
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean"])
@pytest.mark.parametrize("dtype", ["int32", "int16", "uint8"])
@pytest.mark.parametrize("include_self", [True, False])
def test_tile_engine_integers_exact(torch, shim, shape, reduce, dtype,
                                    include_self):
    """Integers wrap alike in any order: bit for bit with CUDA eager."""
    self_, index, src, dim = tile_inputs(torch, shape, dtype, reduce)
    got = ours_reduce(shim, self_, dim, index, src, reduce, include_self)
    want = torch.scatter_reduce(self_, dim, index, src, reduce,
                                include_self=include_self)
    assert_same(got, want, f"tile {reduce} {dtype} shape {shape}", bits=True)


@pytest.mark.parametrize("shape", range(len(TILE_SHAPES)))
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("include_self", [True, False])
def test_tile_engine_floats(torch, shim, shape, reduce, dtype, include_self):
    """Deterministic (two runs bit for bit); within rounding of a float64
    reference; the same bits as the sort engine would give for a run folded
    in index order from self: checked against a float32 sequential fold."""
    self_, index, src, dim = tile_inputs(torch, shape, dtype, reduce,
                                         transposed_src=shape == 1)
    got = ours_reduce(shim, self_, dim, index, src, reduce, include_self)
    again = ours_reduce(shim, self_, dim, index, src, reduce, include_self)
    assert_same(again, got, "two runs", bits=True)
    want = torch.scatter_reduce(self_.double(), dim, index, src.double(),
                                reduce, include_self=include_self)
    rtol, atol = TOL[dtype]
    per_target = index.shape[dim] / self_.shape[dim]
    scale = 1 if reduce == "prod" else 3 * (per_target ** 0.5 + 1)
    torch.testing.assert_close(got.double(), want, rtol=rtol,
                               atol=atol * scale)


def test_tile_engine_sum_in_index_order(torch, shim):
    """float32 sum folds each target's values in index order from self:
    the same bits as a sequential loop (here: on the CPU, in float32)."""
    self_ = torch.randn(64, 8, device="cuda")
    index = torch.randint(0, 64, (4096, 8), device="cuda")
    src = torch.randn(4096, 8, device="cuda")
    got = ours_reduce(shim, self_, 0, index, src, "sum")
    want = self_.cpu().numpy().copy()
    ic, sc = index.cpu().numpy(), src.cpu().numpy()
    for i in range(4096):  # float32 adds one by one, in index order
        for j in range(8):
            want[ic[i, j], j] = want[ic[i, j], j] + sc[i, j]
    want = torch.from_numpy(want)
    assert_same(got.cpu(), want, "sequential order", bits=True)


def test_tile_engine_bad_index_is_reported(torch, shim):
    self_ = torch.zeros(512, 64, device="cuda")
    index = torch.randint(0, 512, (4096, 64), device="cuda")
    index[100, 7] = 512
    src = torch.ones(4096, 64, device="cuda")
    got = ours_reduce(shim, self_, 0, index, src, "sum")
    msg = shim.take_device_error()
    assert msg is not None and "index 512" in msg and "size 512" in msg, msg
    want = torch.zeros(512, 64, device="cuda")
    good = torch.ones(4096, 64, device="cuda")
    good[100, 7] = 0
    want.scatter_add_(0, index.clamp(max=511), good)
    assert_same(got, want, "the other items still add", bits=True)


# ---------------------------------------------------- semantics of ATen

def test_integer_mean_floors_and_counts_in_dtype(torch, shim):
    self_ = torch.zeros(2, device="cuda", dtype=torch.int64)
    index = torch.tensor([0, 0, 0, 1, 1], device="cuda")
    src = torch.tensor([-1, -2, -2, 1, 2], device="cuda")
    got = ours_reduce(shim, self_, 0, index, src, "mean", False)
    assert got.tolist() == [-2, 1]
    for n, want in ((128, 1), (256, 0)):
        s8 = torch.zeros(1, device="cuda", dtype=torch.int8)
        ones = torch.ones(n, device="cuda", dtype=torch.int8)
        idx = torch.zeros(n, device="cuda", dtype=torch.int64)
        got = ours_reduce(shim, s8, 0, idx, ones, "mean", False)
        ref = torch.scatter_reduce(s8, 0, idx, ones, "mean", include_self=False)
        assert got.item() == want == ref.item(), (n, got.item(), ref.item())


def test_half_prod_rounds_every_step(torch, shim):
    self_ = torch.ones(1, device="cuda", dtype=torch.float16)
    src = torch.tensor([300, 300, 0.001], device="cuda", dtype=torch.float16)
    index = torch.zeros(3, device="cuda", dtype=torch.int64)
    got = ours_reduce(shim, self_, 0, index, src, "prod")
    assert got.isinf().all()


def test_nan_propagates_in_amax_amin(torch, shim):
    nan = float("nan")
    self_ = torch.tensor([1.0, nan, 3.0, 4.0], device="cuda")
    src = torch.tensor([nan, 5.0, 2.0, 9.0, -1.0], device="cuda")
    index = torch.tensor([0, 1, 2, 2, 3], device="cuda")
    for reduce in ("amax", "amin"):
        for inc in (True, False):
            got = ours_reduce(shim, self_, 0, index, src, reduce, inc)
            want = torch.scatter_reduce(self_, 0, index, src, reduce,
                                        include_self=inc)
            assert_same(got, want, f"{reduce} {inc}", bits=True)


def test_include_self_false_keeps_unnamed_targets(torch, shim):
    self_ = torch.arange(10, device="cuda", dtype=torch.float32) + 100
    index = torch.tensor([1, 1, 5], device="cuda")
    src = torch.tensor([2.0, 3.0, 4.0], device="cuda")
    for reduce, named in (("sum", [5.0, 4.0]), ("prod", [6.0, 4.0]),
                          ("mean", [2.5, 4.0]), ("amax", [3.0, 4.0]),
                          ("amin", [2.0, 4.0])):
        got = ours_reduce(shim, self_, 0, index, src, reduce, False)
        want = self_.clone()
        want[1], want[5] = named
        assert_same(got, want, reduce, bits=True)


def test_bool_sum_is_or_and_other_bool_reductions_fail(torch, shim):
    from shim_ctypes import ShimError
    self_ = torch.tensor([False, True, False, False], device="cuda")
    src = torch.tensor([True, False, False, True, False], device="cuda")
    index = torch.tensor([0, 1, 2, 2, 3], device="cuda")
    for inc in (True, False):
        got = ours_reduce(shim, self_, 0, index, src, "sum", inc)
        want = torch.scatter_reduce(self_, 0, index, src, "sum",
                                    include_self=inc)
        assert_same(got, want, f"bool sum {inc}")
    for reduce in ("prod", "mean", "amax", "amin"):
        with pytest.raises(ShimError, match="does not support dtype bool"):
            ours_reduce(shim, self_, 0, index, src, reduce)


def test_unknown_reduce_is_named(torch, shim):
    from shim_ctypes import ShimError
    x = torch.zeros(4, device="cuda")
    i = torch.zeros(2, device="cuda", dtype=torch.int64)
    with pytest.raises(ShimError, match="got 'median'"):
        ours_reduce(shim, x, 0, i, torch.ones(2, device="cuda"), "median")


def test_generic_scatter_reduce_out(torch, shim):
    self_, index, src, dim = reduce_inputs(torch, "float32", "amax", 1)
    out = torch_empty_like(self_)
    call(shim, GENERIC_REDUCE, out, self_, dim, index, src, "amax", 1)
    want = torch.scatter_reduce(self_, dim, index, src, "amax")
    assert_same(out, want, "aoti_torch_scatter_reduce_out", bits=True)


# ------------------------------------------------------ layouts and sizes

@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "prod"])
def test_scatter_reduce_strided_out_and_operands(torch, shim, reduce):
    self_ = torch.randint(-9, 9, (24, 40), device="cuda").double().t()  # [40, 24]
    src = torch.randint(-9, 9, (70, 24 * 2), device="cuda").double()[:, ::2]
    if reduce == "prod":
        self_, src = self_.clamp(-2, 2).exp2(), src.clamp(-2, 2).exp2()
    index = torch.randint(0, 40, (24, 60), device="cuda").t()  # [60, 24]
    out = torch.empty(24, 40, device="cuda", dtype=torch.float64).t()
    got = ours_reduce(shim, self_, 0, index, src, reduce, out=out)
    want = torch.scatter_reduce(self_, 0, index, src, reduce)
    assert_same(got, want, f"strided {reduce}", bits=True)


def test_empty_index_and_empty_tensors(torch, shim):
    self_ = torch.randn(5, 6, device="cuda")
    src = torch.randn(5, 6, device="cuda")
    empty = torch.empty(0, 6, device="cuda", dtype=torch.int64)
    for reduce in ("sum", "amax"):
        got = ours_reduce(shim, self_, 0, empty, src, reduce)
        assert_same(got, self_, f"empty index {reduce}", bits=True)
    out = torch_empty_like(self_)
    call(shim, SRC, out, self_, 1, empty, src)
    assert_same(out, self_, "empty index src", bits=True)
    # an empty float index is accepted, like ATen (no dtype check)
    call(shim, VALUE, out, self_, 1, torch.empty(0, 6, device="cuda"), 1.0)
    assert_same(out, self_, "empty float index", bits=True)
    z = torch.empty(0, 3, device="cuda")
    zi = torch.empty(0, 3, device="cuda", dtype=torch.int64)
    got = ours_reduce(shim, z, 1, zi, z, "mean")
    assert got.shape == (0, 3)


def test_zero_dim_tensors(torch, shim):
    self_ = torch.tensor(2.0, device="cuda")
    src = torch.tensor(5.0, device="cuda")
    index = torch.tensor(0, device="cuda")
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        got = ours_reduce(shim, self_, 0, index, src, reduce)
        want = torch.scatter_reduce(self_, 0, index, src, reduce)
        assert_same(got, want, f"0-d {reduce}", bits=True)
    out = torch.empty_like(self_)
    call(shim, SRC, out, self_, -1, index, src)
    assert out.item() == 5.0


def test_long_runs_split_across_chunks(torch, shim):
    # 300k items into 3 targets (runs of ~100k): the level walk
    n = 300000
    self_ = torch.randint(-5, 5, (3,), device="cuda", dtype=torch.int64)
    index = torch.randint(0, 3, (n,), device="cuda")
    src = torch.randint(-1000, 1000, (n,), device="cuda", dtype=torch.int64)
    for reduce in ("sum", "mean", "prod"):
        got = ours_reduce(shim, self_, 0, index, src, reduce)
        want = torch.scatter_reduce(self_, 0, index, src, reduce)
        assert_same(got, want, f"long runs {reduce}", bits=True)
    d = torch.randint(-1000, 1000, (n,), device="cuda").double()
    got = ours_reduce(shim, self_.double(), 0, index, d, "sum")
    want = torch.scatter_reduce(self_.double(), 0, index, d, "sum")
    assert_same(got, want, "long float64 runs", bits=True)
    # one target, everything: the deepest walk
    one = torch.zeros(1, device="cuda", dtype=torch.int64)
    got = ours_reduce(shim, one, 0, torch.zeros_like(index), src, "sum")
    assert got.item() == int(src.sum().item())


# ------------------------------------------------------------- GNN row mode

@pytest.mark.parametrize("reduce", ["amax", "amin", "mean", "sum", "prod"])
@pytest.mark.parametrize("include_self", [False, True])
def test_gnn_row_mode_in_place(torch, shim, reduce, include_self):
    """What AOTInductor emits for a message-passing layer:
    scatter_reduce_two_out(buf, buf, 0, dst[:, None].expand(E, F), msg, ...)
    with out and self the same handle."""
    n_nodes, e, f = 300, 5000, 48
    dst = torch.randint(0, n_nodes, (e,), device="cuda")
    dst[:1500] = 7  # a hub: a run spanning many chunks
    index = dst[:, None].expand(e, f)
    dt = torch.float64 if reduce in ("sum", "mean", "prod") else torch.float32
    msg = torch.randint(-8, 8, (e, f), device="cuda").to(dt)
    buf = torch.randint(-8, 8, (n_nodes, f), device="cuda").to(dt)
    if reduce == "prod":  # exact: powers of two, the hub gets +-1
        msg = msg.clamp(-1, 1).exp2() * torch.sign(torch.randn(e, f, device="cuda", dtype=dt))
        msg[:1500] = torch.sign(msg[:1500])
        buf = buf.clamp(-1, 1).exp2()
    if reduce in ("amax", "amin"):
        msg = torch.randn(e, f, device="cuda")
        buf = torch.randn(n_nodes, f, device="cuda")
    want = torch.scatter_reduce(buf, 0, index, msg, reduce,
                                include_self=include_self)
    ours_reduce(shim, buf, 0, index, msg, reduce, include_self, same=True)
    assert_same(buf, want, f"row mode {reduce}", bits=True)


def test_row_mode_along_dim_1(torch, shim):
    b, e, n = 6, 700, 90
    dst = torch.randint(0, n, (e,), device="cuda")
    index = dst[None, :].expand(b, e)
    src = torch.randint(-50, 50, (b, e), device="cuda", dtype=torch.int32)
    self_ = torch.randint(-50, 50, (b, n), device="cuda", dtype=torch.int32)
    for reduce in ("mean", "sum"):
        got = ours_reduce(shim, self_, 1, index, src, reduce)
        want = torch.scatter_reduce(self_, 1, index, src, reduce)
        assert_same(got, want, f"row mode dim 1 {reduce}", bits=True)


def test_row_mode_float32_mean_tolerance_and_repeatable(torch, shim):
    n_nodes, e, f = 2000, 40000, 64
    dst = torch.randint(0, n_nodes, (e,), device="cuda")
    index = dst[:, None].expand(e, f)
    msg = torch.randn(e, f, device="cuda")
    base = torch.randn(n_nodes, f, device="cuda")
    a, b = base.clone(), base.clone()
    ours_reduce(shim, a, 0, index, msg, "mean", False, same=True)
    ours_reduce(shim, b, 0, index, msg, "mean", False, same=True)
    assert_same(a, b, "two runs", bits=True)
    want = torch.scatter_reduce(base.double(), 0, index, msg.double(), "mean",
                                include_self=False)
    torch.testing.assert_close(a.double(), want, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------- bad indices

BAD_CASES = [
    (SRC, "float32", (6, 8), (6, 5), 1),     # per-line winners
    (SRC, "float32", (6, 8), (9, 8), 0),     # sort engine
    (VALUE, "float32", (6, 8), (6, 5), 1),
    (REDUCE, "float32", (6, 8), (9, 8), 0),  # sum: sort engine
    (REDUCE, "int32", (6, 8), (9, 8), 0),    # amax: compare-and-swap
]


@pytest.mark.parametrize("case", range(len(BAD_CASES)))
@pytest.mark.parametrize("bad", [-1, "size"])
def test_out_of_range_index_is_reported(torch, shim, case, bad):
    name, dtype, s_shape, i_shape, dim = BAD_CASES[case]
    dt = _dt(torch, dtype)
    self_ = torch.ones(s_shape, device="cuda", dtype=dt)
    index = torch.randint(0, s_shape[dim], i_shape, device="cuda")
    value = -1 if bad == -1 else s_shape[dim]
    index[2, 3] = value
    src = torch.ones(i_shape, device="cuda", dtype=dt)
    out = torch.empty_like(self_)
    if name == SRC:
        call(shim, SRC, out, self_, dim, index, src)
    elif name == VALUE:
        call(shim, VALUE, out, self_, dim, index, 2.0)
    else:
        reduce = "amax" if dtype == "int32" else "sum"
        call(shim, REDUCE, out, self_, dim, index, src, reduce, 1)
    msg = shim.take_device_error()
    assert msg is not None, "no device error report"
    for part in ("out of bounds", name, f"index {value}", f"dim {dim}",
                 f"size {s_shape[dim]}"):
        assert part in msg, (part, msg)


def test_row_mode_bad_index_is_reported(torch, shim):
    dst = torch.randint(0, 10, (50,), device="cuda")
    dst[17] = 10
    index = dst[:, None].expand(50, 8)
    buf = torch.zeros(10, 8, device="cuda")
    ours_reduce(shim, buf, 0, index, torch.ones(50, 8, device="cuda"), "mean",
                same=True)
    msg = shim.take_device_error()
    assert msg is not None and "index 10" in msg and "size 10" in msg, msg


# ------------------------------------------------------------ CUDA graphs

def _captured(torch, shim, run, refresh, expect):
    """Warms up on a side stream, captures run() with torch.cuda.graph on
    that stream (the shim's guard points at the same stream), then replays
    with new inputs written by refresh() and checks expect()."""
    s = torch.cuda.Stream()
    with shim.stream(s):
        run()  # warm-up: the device error slot and allocator state exist
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=s):
            run()
        for _ in range(2):
            refresh()
            g.replay()
            torch.cuda.synchronize()
            expect()
    torch.cuda.synchronize()


@pytest.mark.parametrize("reduce", ["sum", "amax", "mean", "prod"])
def test_scatter_reduce_in_a_cuda_graph(torch, shim, reduce):
    self_ = torch.randint(-9, 9, (64, 96), device="cuda").double()
    index = torch.randint(0, 64, (300, 96), device="cuda")
    src = torch.randint(-9, 9, (300, 96), device="cuda").double()
    if reduce == "prod":
        self_, src = self_.clamp(-1, 1).exp2(), src.clamp(-1, 1).exp2()
    out = torch.empty_like(self_)

    def run():
        ours_reduce(shim, self_, 0, index, src, reduce, False, out=out)

    def refresh():
        src.copy_(src.flip(0) if reduce != "prod" else src.flip(1))
        index.copy_(torch.randint(0, 64, index.shape, device="cuda"))

    def expect():
        want = torch.scatter_reduce(self_, 0, index, src, reduce,
                                    include_self=False)
        assert_same(out, want, f"replayed {reduce}", bits=True)

    _captured(torch, shim, run, refresh, expect)


def test_scatter_src_and_row_mode_in_a_cuda_graph(torch, shim):
    self_ = torch.randn(32, 200, device="cuda")
    index = torch.randint(0, 200, (32, 150), device="cuda")
    src = torch.randn(32, 150, device="cuda")
    out = torch.empty_like(self_)
    dst = torch.randint(0, 40, (500,), device="cuda")
    eidx = dst[:, None].expand(500, 16)
    msg = torch.randn(500, 16, device="cuda")
    buf0 = torch.randn(40, 16, device="cuda")
    buf = buf0.clone()

    def run():
        call(shim, SRC, out, self_, 1, index, src)
        buf.copy_(buf0)
        ours_reduce(shim, buf, 0, eidx, msg, "amax", True, same=True)

    def refresh():
        src.normal_()
        msg.normal_()
        dst.copy_(torch.randint(0, 40, (500,), device="cuda"))

    def expect():
        want = torch.scatter(self_.cpu(), 1, index.cpu(), src.cpu()).cuda()
        assert_same(out, want, "replayed scatter src", bits=True)
        want = torch.scatter_reduce(buf0, 0, eidx, msg, "amax")
        assert_same(buf, want, "replayed row-mode amax", bits=True)

    _captured(torch, shim, run, refresh, expect)
