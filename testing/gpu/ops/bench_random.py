"""Benchmark cases of the random ops (rand, randn, randint_low_out,
randperm) against ATen through torch; loaded by
testing/gpu/bench_fallbacks.py (--only random).

randint_low_out of 1024 int64 seeds over the whole int64 range is what
AOTInductor calls once per forward for its Philox kernels (inductor_seeds):
one fused thread block, one launch, latency-bound.
"""

import ctypes

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def _op_factory(shim, name, shape, code=None, lead=()):
    """A callable that runs a factory op and deletes its result."""
    size = (ctypes.c_int64 * len(shape))(*shape)
    r = shim.new_handle()
    f = shim.fn(name)
    dtype = None if code is None else ctypes.pointer(ctypes.c_int32(code))
    args = tuple(lead) + (size, len(shape), dtype, None, None, -1, None, r)

    def run():
        if f(*args) != 0:
            raise RuntimeError(shim.last_error())
        shim.delete(r.contents)
    run.keep = (size, dtype, args)
    return run


def _op_randint_out(shim, out, low=INT64_MIN, high=INT64_MAX):
    h = shim.handle(out)
    size = (ctypes.c_int64 * 1)(out.numel())
    f = shim.fn("aoti_torch_cuda_randint_low_out")
    args = (h, low, high, size, 1)

    def run():
        if f(*args) != 0:
            raise RuntimeError(shim.last_error())
    run.keep = (out, h, size, args)
    return run


def _op_randperm(shim, n):
    r = shim.new_handle()
    f = shim.fn("aoti_torch_cuda_randperm")
    args = (n, None, None, None, -1, None, r)

    def run():
        if f(*args) != 0:
            raise RuntimeError(shim.last_error())
        shim.delete(r.contents)
    run.keep = args
    return run


def cases(shim, torch):
    n = 1 << 24
    yield {"op": "rand", "case": "2^24 f32",
           "aotrun": _op_factory(shim, "aoti_torch_cuda_rand", [n]),
           "aten": lambda: torch.rand(n, device="cuda"),
           "bytes": n * 4,
           "note": "Philox4x32-10, 4 floats per block, one 16-byte store per "
                   "thread; reservation kernel + grid"}
    yield {"op": "randn", "case": "2^24 f32",
           "aotrun": _op_factory(shim, "aoti_torch_cuda_randn", [n]),
           "aten": lambda: torch.randn(n, device="cuda"),
           "bytes": n * 4, "note": "Box-Muller, 4 normals per block, one 16-byte store"}
    yield {"op": "randn", "case": "2^24 bf16",
           "aotrun": _op_factory(shim, "aoti_torch_cuda_randn", [n], 15),
           "aten": lambda: torch.randn(n, device="cuda", dtype=torch.bfloat16),
           "bytes": n * 2, "note": "one 8-byte store per thread"}
    seeds = torch.empty(1024, dtype=torch.int64, device="cuda")
    yield {"op": "randint_low_out", "case": "1024 int64 seeds (full range)",
           "aotrun": _op_randint_out(shim, seeds),
           "aten": lambda: torch.randint(INT64_MIN, INT64_MAX, (1024,),
                                         device="cuda", out=seeds),
           "bytes": 1024 * 8,
           "note": "inductor_seeds: one fused block (reserve + draw)"}
    big = torch.empty(1 << 24, dtype=torch.int64, device="cuda")
    yield {"op": "randint_low_out", "case": "2^24 int64 in [0, 1000)",
           "aotrun": _op_randint_out(shim, big, 0, 1000),
           "aten": lambda: torch.randint(0, 1000, (1 << 24,), device="cuda",
                                         out=big),
           "bytes": (1 << 24) * 8,
           "note": "32-bit multiply-high, 4 values per block in two "
                   "16-byte stores (halves of out)"}
    yield {"op": "randperm", "case": "n = 1e6 int64",
           "aotrun": _op_randperm(shim, 1000000),
           "aten": lambda: torch.randperm(1000000, device="cuda"),
           "bytes": 1000000 * 8,
           "note": "60-bit random keys, CUB radix sort of (key, position)"}
