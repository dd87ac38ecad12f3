"""Benchmark cases of the sort family (aoti_torch_cuda_sort, sort_stable,
topk) against ATen through torch; loaded by testing/gpu/bench_fallbacks.py.

Targets (issue 9): sort 4096x1024 float32 within 1.1x of ATen (ATen 157 us
on the H200 => <= 173 us); topk no slower than ATen (160 us for k = 8 of
4096x1024).
"""

import ctypes


def _op_sort(shim, x, stable, dim=-1, descending=False):
    """A callable that runs sort(_stable) and deletes its two results."""
    h = shim.handle(x)
    r0, r1 = shim.new_handle(), shim.new_handle()
    if stable is None:
        f = shim.fn("aoti_torch_cuda_sort")
        args = (h, dim, int(descending), r0, r1)
    else:
        f = shim.fn("aoti_torch_cuda_sort_stable")
        flag = ctypes.pointer(ctypes.c_int32(int(stable)))
        args = (h, flag, dim, int(descending), r0, r1)

    def run():
        if f(*args) != 0:
            raise RuntimeError(shim.last_error())
        shim.delete(r0.contents)
        shim.delete(r1.contents)
    run.keep = (x, h, args)
    return run


def _op_topk(shim, x, k, dim=-1, largest=True, sorted_=True):
    h = shim.handle(x)
    r0, r1 = shim.new_handle(), shim.new_handle()
    f = shim.fn("aoti_torch_cuda_topk")
    args = (h, k, dim, int(largest), int(sorted_), r0, r1)

    def run():
        if f(*args) != 0:
            raise RuntimeError(shim.last_error())
        shim.delete(r0.contents)
        shim.delete(r1.contents)
    run.keep = (x, h, args)
    return run


def cases(shim, torch):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(4096, 1024, device="cuda", generator=g)
    # read 4 B, write 4 B of values and 8 B of indices per element
    sort_bytes = x.numel() * 16
    yield {"op": "sort", "case": "4096x1024 f32 dim -1",
           "aotrun": _op_sort(shim, x, None),
           "aten": lambda: torch.sort(x, dim=-1),
           "bytes": sort_bytes, "target_us": 173,
           "note": "block radix sort per row (128 threads x 8 keys)"}
    yield {"op": "sort stable", "case": "4096x1024 f32 dim -1",
           "aotrun": _op_sort(shim, x, True),
           "aten": lambda: torch.sort(x, dim=-1, stable=True),
           "bytes": sort_bytes, "target_us": 173}
    y = torch.randn(1 << 24, device="cuda", generator=g)
    yield {"op": "sort", "case": "one row of 2^24 f32",
           "aotrun": _op_sort(shim, y, None),
           "aten": lambda: torch.sort(y),
           "bytes": y.numel() * 16,
           "note": "cub::DeviceRadixSort of (key, position) pairs"}
    yield {"op": "topk", "case": "k=8 of 4096x1024 f32 dim -1",
           "aotrun": _op_topk(shim, x, 8),
           "aten": lambda: torch.topk(x, 8, dim=-1),
           "bytes": x.numel() * 4 + 4096 * 8 * 12, "target_us": 160,
           "note": "block radix selection per row (4 histogram passes), "
                   "then a block sort of the 8 kept"}
    z = torch.randn(64, 50000, device="cuda", generator=g)
    yield {"op": "topk", "case": "k=64 of 64x50000 f32 dim -1",
           "aotrun": _op_topk(shim, z, 64),
           "aten": lambda: torch.topk(z, 64, dim=-1),
           "bytes": z.numel() * 4 + 64 * 64 * 12,
           "note": "radix selection of 64 per 4096-element piece (832 "
                   "candidates), again (64), then sorted; float k > 32 "
                   "re-sorted in ATen's radix order"}
