"""aoti_torch_cuda_sort, sort_stable and topk against eager PyTorch.

Stable sorts must equal torch.sort(stable=True) bit for bit (values) and
exactly (indices), with eager's output strides, for every dtype, row length
(block path <= 4096, DeviceRadixSort path above), dim, direction, layout,
NaN of either sign, +-0.0, +-inf, ties and integer extremes. The unstable
sort (aoti_torch_cuda_sort) of rows of > 32 elements is the same as the
stable one in ATen (radix sorts); of <= 32 elements ATen runs an unstable
bitonic sort, so there only the values are compared (NaN-aware) and the
indices checked as a permutation producing them. topk: values equal eager's
(NaN-aware; -0.0/+0.0 order among ties is unspecified), indices unique and
self.gather(dim, indices) == values bit for bit; unsorted topk compared as
sets. Both ops inside a CUDA graph capture, replayed with new inputs.
"""

import ctypes

import pytest

from conftest import assert_same
from shim_ctypes import ShimError

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int8", "int16", "int32", "int64", "uint8"]
ALL = FLOATS + INTS + ["bool"]
# Row lengths: block path tiles (32..4096) and the DeviceRadixSort path.
SIZES = [1, 7, 33, 128, 1000, 1024, 4097, 100000, 1 << 20]

# (sign bit, +NaN bits) per float dtype, as the signed int of the same width.
_BITS = {"float32": (32, 0x7FC00000), "float64": (64, 0x7FF8000000000000),
         "float16": (16, 0x7E00), "bfloat16": (16, 0x7FC0)}


def _dt(torch, name):
    return getattr(torch, name)


def _int_view(torch, x):
    return x.view({2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()])


def _set_bits(torch, x, pos, pattern):
    """x.flatten()[pos] = the element with bits `pattern` (unsigned)."""
    w = 8 * x.element_size()
    signed = pattern - (1 << w) if pattern >= 1 << (w - 1) else pattern
    _int_view(torch, x.view(-1))[pos] = signed


def make(torch, dtype, shape, kind, seed=0):
    """A tensor of `shape`: kind "rand" (spread values), "ties" (0..3) or
    "special" (rand plus NaN of both signs, +-0.0, +-inf or int extremes at
    several positions)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = _dt(torch, dtype)
    n = 1
    for s in shape:
        n *= s
    if dtype == "bool":
        return torch.randint(0, 2, shape, device="cuda", generator=g).bool()
    if kind == "ties":
        return torch.randint(0, 4, shape, device="cuda", generator=g).to(dt)
    if dt.is_floating_point:
        x = (torch.randn(shape, device="cuda", generator=g) * 100).to(dt)
    else:
        info = torch.iinfo(dt)
        lo, hi = max(info.min, -(1 << 40)), min(info.max, 1 << 40)
        x = torch.randint(lo, hi, shape, device="cuda", generator=g,
                          dtype=torch.int64).to(dt)
    if kind != "special" or n == 0:
        return x
    flat = x.view(-1) if x.is_contiguous() else None
    assert flat is not None
    picks = torch.randperm(n, device="cuda", generator=g)[:min(n, 12)].tolist()
    if dt.is_floating_point:
        w, nan = _BITS[dtype]
        sign = 1 << (w - 1)
        specials = [("bits", nan), ("bits", nan | sign), (None, float("inf")),
                    (None, float("-inf")), ("bits", 0), ("bits", sign),
                    ("bits", nan), ("bits", sign), ("bits", nan | sign),
                    ("bits", 0), (None, 1.0), (None, -1.0)]
        for p, (how, v) in zip(picks, specials):
            if how == "bits":
                _set_bits(torch, x, p, v)
            else:
                flat[p] = v
    else:
        info = torch.iinfo(dt)
        vals = [info.min, info.max, 0, info.min, info.max, -1 if info.min else 1]
        for p, v in zip(picks, vals):
            flat[p] = v
    return x


def _i32p(v):
    return None if v is None else ctypes.pointer(ctypes.c_int32(int(v)))


def shim_sort(shim, x, dim=-1, descending=False, stable=True, fn=None):
    """fn None: sort_stable(stable); "sort": aoti_torch_cuda_sort."""
    h = shim.handle(x)
    r0, r1 = shim.new_handle(), shim.new_handle()
    try:
        if fn == "sort":
            shim.call("aoti_torch_cuda_sort", h, dim, int(descending), r0, r1)
        else:
            shim.call("aoti_torch_cuda_sort_stable", h, _i32p(stable), dim,
                      int(descending), r0, r1)
        return shim.take(r0), shim.take(r1)
    finally:
        shim.delete(h)


def shim_topk(shim, x, k, dim=-1, largest=True, sorted_=True):
    h = shim.handle(x)
    r0, r1 = shim.new_handle(), shim.new_handle()
    try:
        shim.call("aoti_torch_cuda_topk", h, k, dim, int(largest),
                  int(sorted_), r0, r1)
        return shim.take(r0), shim.take(r1)
    finally:
        shim.delete(h)


def check_sort(torch, x, dim, descending, got, what):
    v, i = got
    wv, wi = torch.sort(x, dim=dim, descending=descending, stable=True)
    assert_same(v, wv, f"{what} values", bits=True)
    assert torch.equal(i, wi), f"{what}: indices differ"
    assert v.stride() == wv.stride(), f"{what}: values strides {v.stride()} != {wv.stride()}"
    assert i.stride() == wi.stride(), f"{what}: indices strides {i.stride()} != {wi.stride()}"


def check_permutation(torch, x, dim, v, i, what):
    """i is a permutation along dim and gathering x with it gives v (bits)."""
    if x.dim() == 0:
        assert int(i) == 0
        return
    assert torch.equal(i.sort(dim=dim).values,
                       torch.arange(x.shape[dim], device="cuda").view(
                           [-1 if d == dim % x.dim() else 1 for d in range(x.dim())]
                       ).expand_as(i)), f"{what}: indices are not a permutation"
    assert_same(x.gather(dim, i), v, f"{what}: gather(self, indices)", bits=True)


# ---- sort: one row of each length, every dtype ----

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", SIZES)
def test_sort_rows_match_eager(torch, shim, dtype, n):
    kinds = ["special", "ties"] if n <= 4097 else ["special"]
    for kind in kinds:
        x = make(torch, dtype, (n,), kind, seed=n)
        for desc in (False, True):
            what = f"sort {dtype} n={n} {kind} desc={desc}"
            check_sort(torch, x, -1, desc, shim_sort(shim, x, 0, desc), what)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool"])
@pytest.mark.parametrize("n", [5, 32, 33, 2000, 5000])
@pytest.mark.parametrize("entry", ["sort", "stable_none", "stable_false"])
def test_unstable_entry_points(torch, shim, dtype, n, entry):
    x = make(torch, dtype, (3, n), "special" if n > 5 else "ties", seed=7)
    for desc in (False, True):
        fn = "sort" if entry == "sort" else None
        stable = None if entry == "stable_none" else False
        v, i = shim_sort(shim, x, 1, desc, stable=stable, fn=fn)
        what = f"{entry} {dtype} n={n} desc={desc}"
        wv, _ = torch.sort(x, dim=1, descending=desc)
        if n > 32:  # ATen's radix sorts: stable, same as stable=True
            check_sort(torch, x, 1, desc, (v, i), what)
        else:       # ATen's bitonic sort: NaNs last (first when descending)
            assert_same(v, wv, f"{what} values")
            check_permutation(torch, x, 1, v, i, what)


def test_sort_nan_zero_order_of_the_probe(torch, shim):
    """The order measured on the H200 (brief): -NaN smallest, +NaN largest,
    -0.0 == +0.0 kept in input order, both directions."""
    x = torch.tensor([1.0, float("nan"), -0.0, 0.0, 0.0, float("-inf"), 2.0],
                     device="cuda")
    _set_bits(torch, x, 4, 0xFFC00000)  # -NaN at index 4
    x[3] = 0.0
    v, i = shim_sort(shim, x, 0, False)
    assert i.tolist() == [4, 5, 2, 3, 0, 6, 1]
    v, i = shim_sort(shim, x, 0, True)
    assert i.tolist() == [1, 6, 0, 2, 3, 5, 4]
    check_sort(torch, x, 0, True, (v, i), "probe order")


# ---- sort: dims, layouts, ranks ----

def _layouts(torch, x):
    """(name, tensor) views of a contiguous x with various strides."""
    yield "contiguous", x
    if x.dim() >= 2:
        yield "transposed", x.transpose(0, -1).contiguous().transpose(0, -1)
        yield "sliced", x[..., ::2] if x.shape[-1] > 1 else x
        yield "expanded", x[..., :1].expand(x.shape)
    if x.dim() >= 3:  # dim 0 innermost, the others in order
        yield "permuted", x.movedim(0, -1).contiguous().movedim(-1, 0)


SHAPES = [(5, 33), (3, 4, 130), (2, 3, 4, 5), (4, 5000), (3, 4097), (2, 3, 70000)]


@pytest.mark.parametrize("dtype", ["float32", "int64", "bfloat16"])
@pytest.mark.parametrize("shape", SHAPES)
def test_sort_dims_and_layouts(torch, shim, dtype, shape):
    base = make(torch, dtype, shape, "special", seed=len(shape))
    for name, x in _layouts(torch, base):
        for dim in range(-x.dim(), x.dim()):
            for desc in (False, True):
                what = f"sort {dtype} {shape} {name} dim={dim} desc={desc}"
                check_sort(torch, x, dim, desc,
                           shim_sort(shim, x, dim, desc), what)


def test_sort_transposed_strides_measured(torch, shim):
    """(10, 6).t() sorted on dim -1: outputs with strides (1, 6)."""
    x = torch.randn(10, 6, device="cuda").t()
    v, i = shim_sort(shim, x, -1, False)
    assert v.stride() == (1, 6) and i.stride() == (1, 6)
    check_sort(torch, x, -1, False, (v, i), "transposed")


@pytest.mark.parametrize("dtype", ["float32", "int8", "bool"])
def test_sort_zero_dim(torch, shim, dtype):
    x = make(torch, dtype, (), "rand")
    for dim in (0, -1):
        v, i = shim_sort(shim, x, dim, True)
        assert v.shape == () and i.shape == () and i.dtype == torch.int64
        assert_same(v, x, "0-d values", bits=True)
        assert int(i) == 0


@pytest.mark.parametrize("shape,dim", [((0, 5), 0), ((0, 5), 1), ((5, 0), 1),
                                       ((5, 0), 0), ((0,), 0), ((2, 0, 3), 2)])
def test_sort_empty(torch, shim, shape, dim):
    x = torch.empty(shape, device="cuda")
    check_sort(torch, x, dim, False, shim_sort(shim, x, dim, False), f"empty {shape}")


def test_sort_uint_dtypes_if_eager_has_them(torch, shim):
    for name in ("uint16", "uint32", "uint64"):
        dt = getattr(torch, name, None)
        if dt is None:
            continue
        x = torch.randint(0, 1 << 15, (4, 300), device="cuda").to(dt)
        try:
            torch.sort(x, stable=True)
        except (RuntimeError, NotImplementedError):
            continue  # eager cannot sort it either
        for desc in (False, True):
            check_sort(torch, x, -1, desc, shim_sort(shim, x, -1, desc), name)


def test_sort_errors(torch, shim):
    x = torch.randn(3, 4, device="cuda")
    with pytest.raises(ShimError, match="dim 2 is out of range for 'self' with 2 dims"):
        shim_sort(shim, x, 2)
    c = torch.randn(4, device="cuda", dtype=torch.complex64)
    with pytest.raises(ShimError, match="complex64, which cannot be sorted"):
        shim_sort(shim, c, 0)
    with pytest.raises(ShimError, match="expected a CUDA tensor"):
        shim_sort(shim, torch.randn(4), 0)


# ---- topk ----

def check_topk(torch, x, k, dim, largest, sorted_, got, what):
    v, i = got
    wv, wi = torch.topk(x, k, dim=dim, largest=largest, sorted=sorted_)
    assert v.shape == wv.shape and i.shape == wi.shape, f"{what}: shapes"
    assert v.is_contiguous() and i.is_contiguous(), f"{what}: outputs not contiguous"
    assert v.stride() == wv.stride(), f"{what}: strides {v.stride()} != {wv.stride()}"
    if x.dim() > 0 and k > 0:
        assert_same(x.gather(dim, i), v, f"{what}: gather(self, indices)", bits=True)
        if k > 1:
            steps = i.sort(dim=dim).values.diff(dim=dim)
            assert bool((steps > 0).all()), f"{what}: repeated indices"
    if sorted_:
        assert_same(v, wv, f"{what} values")
    else:  # any order: compare as multisets (NaN-aware)
        assert_same(v.sort(dim=dim).values, wv.sort(dim=dim).values,
                    f"{what} value sets")


TOPK_SIZES = [1, 7, 33, 128, 1000, 1024, 4097, 20000, 100000]


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("n", TOPK_SIZES)
def test_topk_rows_match_eager(torch, shim, dtype, n):
    rows = 3 if n <= 100000 else 1
    for kind in ("special", "ties"):
        x = make(torch, dtype, (rows, n), kind, seed=n + 1)
        ks = sorted({0, 1, min(8, n), min(40, n), n if n <= 4097 else 1025})
        for k in ks:
            for largest in (True, False):
                for sorted_ in (True, False):
                    what = (f"topk {dtype} n={n} {kind} k={k} "
                            f"largest={largest} sorted={sorted_}")
                    check_topk(torch, x, k, -1, largest, sorted_,
                               shim_topk(shim, x, k, -1, largest, sorted_), what)


def test_topk_few_long_rows_keep_the_topk_order(torch, shim):
    """Few long rows take the same radix-selection order as any other
    (every NaN largest): ATen's CUDA topk sorts only on ROCm (measured on
    the H200: the smallest of a row holding -NaN and -inf is -inf)."""
    x = make(torch, "float32", (2, 100000), "special", seed=3)
    for largest in (True, False):
        for k in (1, 50):
            check_topk(torch, x, k, -1, largest, True,
                       shim_topk(shim, x, k, -1, largest, True),
                       f"few long rows k={k} largest={largest}")


def test_topk_nan_counts_largest(torch, shim):
    x = torch.tensor([1.0, float("nan"), -0.0, 0.0, 0.0, float("-inf"), 2.0],
                     device="cuda")
    _set_bits(torch, x, 4, 0xFFC00000)
    v, i = shim_topk(shim, x, 3, 0, True, True)
    assert sorted(i.tolist()[:2]) == [1, 4] and i.tolist()[2] == 6
    assert v[:2].isnan().all() and v[2].item() == 2.0
    check_topk(torch, x, 3, 0, True, True, (v, i), "nan largest")


@pytest.mark.parametrize("shape,dim,k", [((4, 50, 3), 1, 7), ((4, 50, 3), 0, 2),
                                         ((6, 10), 0, 3), ((5, 6000, 2), 1, 40),
                                         ((2, 3, 4, 5), -1, 5)])
def test_topk_dims_and_layouts(torch, shim, shape, dim, k):
    base = make(torch, "float32", shape, "special", seed=11)
    for name, x in _layouts(torch, base):
        kk = min(k, x.shape[dim])
        for largest in (True, False):
            what = f"topk {shape} {name} dim={dim} k={kk} largest={largest}"
            check_topk(torch, x, kk, dim, largest, True,
                       shim_topk(shim, x, kk, dim, largest, True), what)


def test_topk_bool_and_zero_dim(torch, shim):
    x = make(torch, "bool", (4, 50), "rand")
    v, i = shim_topk(shim, x, 5, -1, True, True)
    wv, _ = torch.topk(x.to(torch.uint8), 5, dim=-1)
    assert torch.equal(v.to(torch.uint8), wv)
    assert torch.equal(x.gather(-1, i), v)
    z = torch.tensor(3.5, device="cuda")
    for k in (0, 1):
        v, i = shim_topk(shim, z, k, 0, True, True)
        assert v.shape == () and float(v) == 3.5 and int(i) == 0


def test_topk_errors(torch, shim):
    x = torch.randn(3, 4, device="cuda")
    with pytest.raises(ShimError, match=r"k = 5 is out of range for dim 1 of 'self' with size 4"):
        shim_topk(shim, x, 5, 1)
    with pytest.raises(ShimError, match="k = -1"):
        shim_topk(shim, x, -1, 0)
    with pytest.raises(ShimError, match="dim 2 is out of range"):
        shim_topk(shim, x, 1, 2)


# ---- CUDA graphs ----

def test_sort_and_topk_inside_cuda_graph(torch, shim):
    """Both ops capture (no host synchronisation, scratch from the stream-
    ordered allocator) and replay correctly with new inputs, on the block
    path and on the DeviceRadixSort path."""
    short = torch.randn(64, 1000, device="cuda")
    long_ = torch.randn(2, 70000, device="cuda")
    outs = {
        "sort_short": (torch.empty_like(short), torch.empty(short.shape, dtype=torch.int64, device="cuda")),
        "sort_long": (torch.empty_like(long_), torch.empty(long_.shape, dtype=torch.int64, device="cuda")),
        "topk_short": (torch.empty(64, 40, device="cuda"), torch.empty(64, 40, dtype=torch.int64, device="cuda")),
        "topk_long": (torch.empty(2, 8, device="cuda"), torch.empty(2, 8, dtype=torch.int64, device="cuda")),
    }
    hs, hl = shim.handle(short), shim.handle(long_)
    hout = {name: (shim.handle(a), shim.handle(b)) for name, (a, b) in outs.items()}
    one = ctypes.pointer(ctypes.c_int32(1))

    def body():
        for name, h, kind in (("sort_short", hs, "sort"), ("sort_long", hl, "sort"),
                              ("topk_short", hs, 40), ("topk_long", hl, 8)):
            r0, r1 = shim.new_handle(), shim.new_handle()
            if kind == "sort":
                shim.call("aoti_torch_cuda_sort_stable", h, one, -1, 1, r0, r1)
            else:
                shim.call("aoti_torch_cuda_topk", h, kind, -1, 1, 1, r0, r1)
            shim.call("aoti_torch_copy_", hout[name][0], r0.contents, 0)
            shim.call("aoti_torch_copy_", hout[name][1], r1.contents, 0)
            shim.delete(r0.contents)
            shim.delete(r1.contents)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with shim.stream(side):  # warm-up outside the capture
        body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            # the shim's guard points at the capture stream
            with shim.stream(torch.cuda.current_stream()):
                body()
        for trial in range(2):
            short.copy_(torch.randn_like(short))
            long_.copy_(torch.randn_like(long_))
            short[trial, 3] = float("nan")
            g.replay()
            torch.cuda.synchronize()
            for name, x, k in (("sort_short", short, None), ("sort_long", long_, None),
                               ("topk_short", short, 40), ("topk_long", long_, 8)):
                v, i = outs[name]
                if k is None:
                    wv, wi = torch.sort(x, dim=-1, descending=True, stable=True)
                    assert_same(v, wv, f"replay {trial} {name}", bits=True)
                    assert torch.equal(i, wi), f"replay {trial} {name} indices"
                else:
                    wv, _ = torch.topk(x, k, dim=-1)
                    assert_same(v, wv, f"replay {trial} {name}")
                    assert_same(x.gather(-1, i), v, f"replay {trial} {name} gather", bits=True)
    finally:
        del g
        for a, b in hout.values():
            shim.delete(a)
            shim.delete(b)
        shim.delete(hs)
        shim.delete(hl)
