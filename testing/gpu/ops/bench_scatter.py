"""Benchmark cases of the scatter family for testing/gpu/bench_fallbacks.py
(issue 9's targets). Inputs and handles are made once; every aotrun call
writes a preallocated `out` (or self, for the in-place rows).

Expected results (reasoned, not yet measured):
- amax / amin (compare-and-swap under a total order, a plain read first):
  one pass over index + src, well under ATen's CAS loops, onto 4 rows too.
- sum / prod / mean (sort engine: key kernel, 3-pass radix sort of 4M
  (u32, u32) pairs, chunked fold): roughly 100-130 us, so under the
  deterministic-sum target (150) and prod's (169) but close to mean's
  (140.9); it cannot beat ATen's non-deterministic atomic sum (65 us), which
  needs no sort. A miss on mean would come from the radix sort's three
  passes over 32 MB of pairs.
- MoE bf16 scatter (per-line winners in shared memory): one read of index
  and src plus the copy of self when out of place.
- GNN row mode: amax by compare-and-swap; mean sorts only the 100k edges
  and reduces whole rows.
"""

SRC = "aoti_torch_cuda_scatter_src_out"
REDUCE = "aoti_torch_cuda_scatter_reduce_two_out"


def cases(shim, torch):
    yield from _reductions(shim, torch)
    yield from _four_rows(shim, torch)
    yield from _moe(shim, torch)
    yield from _gnn(shim, torch)


def _reduce_call(shim, hout, hself, dim, hindex, hsrc, reduce, include_self):
    r = reduce.encode()
    inc = int(include_self)
    return lambda: shim.call(REDUCE, hout, hself, dim, hindex, hsrc, r, inc)


def _reductions(shim, torch):
    self_ = torch.randn(512, 1024, device="cuda")
    index = torch.randint(0, 512, (4096, 1024), device="cuda")
    src = torch.randn(4096, 1024, device="cuda")
    prod_src = 1 + 0.01 * torch.randn(4096, 1024, device="cuda")
    out = torch.empty_like(self_)
    h = {k: shim.handle(v) for k, v in dict(self=self_, index=index, src=src,
                                             prod_src=prod_src, out=out).items()}
    moved = index.numel() * 8 + src.numel() * 4 + 2 * self_.numel() * 4
    case = "512x1024 <- 4096x1024 f32, dim 0"
    targets = {"sum": 150.0, "prod": 169.0, "mean": 140.9, "amax": 139.5,
               "amin": 139.1}
    for reduce, target in targets.items():
        s = prod_src if reduce == "prod" else src
        hs = h["prod_src"] if reduce == "prod" else h["src"]
        note = ("deterministic; ATen's atomic sum is not (65 us)"
                if reduce == "sum" else "")
        yield {"op": f"scatter_reduce {reduce}", "case": case,
               "aotrun": _reduce_call(shim, h["out"], h["self"], 0,
                                      h["index"], hs, reduce, True),
               "aten": (lambda r=reduce, s=s: torch.scatter_reduce(
                   self_, 0, index, s, r)),
               "bytes": moved, "target_us": target, "note": note}

    def aten_deterministic():
        torch.use_deterministic_algorithms(True)
        try:
            torch.scatter_reduce(self_, 0, index, src, "sum")
        finally:
            torch.use_deterministic_algorithms(False)

    yield {"op": "scatter_reduce sum vs ATen deterministic", "case": case,
           "aotrun": _reduce_call(shim, h["out"], h["self"], 0, h["index"],
                                  h["src"], "sum", True),
           "aten": aten_deterministic, "bytes": moved, "target_us": 150.0,
           "note": "ATen column: torch.use_deterministic_algorithms(True)"}


def _four_rows(shim, torch):
    self_ = torch.randn(4, 1024, device="cuda")
    index = torch.randint(0, 4, (4096, 1024), device="cuda")
    src = torch.randn(4096, 1024, device="cuda")
    out = torch.empty_like(self_)
    hs = [shim.handle(t) for t in (out, self_, index, src)]
    yield {"op": "scatter_reduce amax", "case": "onto 4 rows: 4x1024 <- "
           "4096x1024 f32, dim 0",
           "aotrun": _reduce_call(shim, hs[0], hs[1], 0, hs[2], hs[3],
                                  "amax", True),
           "aten": lambda: torch.scatter_reduce(self_, 0, index, src, "amax"),
           "bytes": index.numel() * 8 + src.numel() * 4, "target_us": 150.0,
           "note": "runs of ~1000 per target"}


def _moe(shim, torch):
    self_ = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
    index = torch.randint(0, 4096, (8192, 1024), device="cuda")
    src = torch.randn(8192, 1024, device="cuda", dtype=torch.bfloat16)
    out = torch.empty_like(self_)
    inplace = self_.clone()
    ho, hs, hi, hsrc, hin = (shim.handle(t) for t in
                             (out, self_, index, src, inplace))
    base = index.numel() * 8 + src.numel() * 2
    yield {"op": "scatter src", "case": "MoE bf16 8192x1024 into 8192x4096, "
           "dim 1, out of place",
           "aotrun": lambda: shim.call(SRC, ho, hs, 1, hi, hsrc),
           "aten": lambda: torch.scatter(self_, 1, index, src),
           "bytes": base + 2 * self_.numel() * 2, "target_us": 237.4,
           "note": "last write wins (ATen: any write)"}
    yield {"op": "scatter src", "case": "MoE bf16 8192x1024 into 8192x4096, "
           "dim 1, in place",
           "aotrun": lambda: shim.call(SRC, hin, hin, 1, hi, hsrc),
           "aten": lambda: inplace.scatter_(1, index, src),
           "bytes": base + src.numel() * 2, "target_us": 204.7, "note": ""}


def _gnn(shim, torch):
    n_nodes, e, f = 20000, 100000, 64
    dst = torch.randint(0, n_nodes, (e,), device="cuda")
    index = dst[:, None].expand(e, f)  # what AOTInductor passes: strides (1, 0)
    msg = torch.randn(e, f, device="cuda")
    buf = torch.randn(n_nodes, f, device="cuda")
    hb, hi, hm = (shim.handle(t) for t in (buf, index, msg))
    moved = e * 8 + msg.numel() * 4 + 2 * buf.numel() * 4
    for reduce in ("amax", "mean"):
        yield {"op": f"scatter_reduce {reduce}",
               "case": "GNN row mode: 100k edges x 64 into 20k nodes, "
                       "out is self",
               "aotrun": _reduce_call(shim, hb, hb, 0, hi, hm, reduce, False),
               "aten": (lambda r=reduce: buf.scatter_reduce_(
                   0, index, msg, r, include_self=False)),
               "bytes": moved, "note": "index expanded with stride 0"}
