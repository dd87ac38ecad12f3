"""Benchmark cases of the index family (see ../bench_fallbacks.py): mask
index and nonzero of 16M elements, index_put of 2^18 bf16 rows of 64 into
2^20 rows (accumulate and not, in place like ATen's index_put_), and the
masked copy `buf[m] = vals` a compiled model sends to aoti_torch_index_put_out.
ATen times measured on the H200 (issue 9 / probe_fallbacks.py) are the
targets."""


def cases(shim, torch):
    n = 1 << 24
    x = torch.randn(n, device="cuda")
    m = torch.randn(n, device="cuda") > 0
    count = int(m.sum())
    hx, hm = shim.handle(x), shim.handle(m)
    mask_list = shim.opt_list([hm])

    def mask_index():
        r = shim.new_handle()
        shim.call("aoti_torch_cuda_index_Tensor", hx, mask_list, 1, r)
        shim.delete(r.contents)

    yield {"op": "index_Tensor", "case": "x[m], 16M float32, half True",
           "aotrun": mask_index, "aten": lambda: x[m],
           "bytes": n + 4 * n + 4 * count, "target_us": 149.7,
           "note": "count (CUB reduce) + host read + CUB select into the result"}

    def nonzero():
        r = shim.new_handle()
        shim.call("aoti_torch_cuda_nonzero", hm, r)
        shim.delete(r.contents)

    yield {"op": "nonzero", "case": "16M bool, half True", "aotrun": nonzero,
           "aten": lambda: torch.nonzero(m), "bytes": 2 * n + 8 * count,
           "target_us": 81.5}

    rows, k, f = 1 << 20, 1 << 18, 64
    big = torch.randn(rows, f, device="cuda").to(torch.bfloat16)
    idx = torch.randint(0, rows, (k,), device="cuda")
    vals = torch.randn(k, f, device="cuda").to(torch.bfloat16)
    hb, hi, hv = shim.handle(big), shim.handle(idx), shim.handle(vals)
    put_list = shim.handle_list([hi])
    moved = 8 * k + 2 * k * f * 3  # index, values, rows read + written

    def put(acc):
        return lambda: shim.call("aoti_torch_index_put_out", hb, hb, put_list,
                                 1, hv, acc)

    yield {"op": "index_put accumulate", "case": "bf16 2^18x64 into 2^20x64, in place",
           "aotrun": put(True),
           "aten": lambda: big.index_put_((idx,), vals, accumulate=True),
           "bytes": moved, "target_us": 165.0,
           "note": "radix sort of the targets, ordered sums (ATen deterministic: 265 us)"}
    yield {"op": "index_put", "case": "bf16 2^18x64 into 2^20x64, in place",
           "aotrun": put(False), "aten": lambda: big.index_put_((idx,), vals),
           "bytes": moved,
           "note": "last write wins (sorted); ATen's default is unordered"}

    buf = torch.randn(n, device="cuda")
    src = x[m].clone()
    hbuf, hsrc = shim.handle(buf), shim.handle(src)
    copy_list = shim.handle_list([hm])
    yield {"op": "index_put_out mask", "case": "buf[m] = vals, 16M float32",
           "aotrun": lambda: shim.call("aoti_torch_index_put_out", hbuf, hbuf,
                                       copy_list, 1, hsrc, False),
           "aten": lambda: buf.index_put_((m,), src),
           "bytes": n + 4 * count * 3,
           "note": "no host sync: ranks by a CUB scan of the mask"}
