"""Benchmark cases of the GEMM family (see ../bench_fallbacks.py) against
ATen on the same inputs: baddbmm bf16, _addmm_activation (cuBLASLt GELU /
RELU bias epilogues), mm_dtype bf16 -> float32, addmv. TF32 off for
float32 on both sides. Target: within 1.1x of ATen."""


def cases(shim, torch):
    torch.backends.cuda.matmul.allow_tf32 = False
    bf = torch.bfloat16

    def H(t):
        return shim.handle(t)

    b, n = 4, 4096
    a1 = torch.randn(b, n, n, device="cuda", dtype=bf)
    a2 = torch.randn(b, n, n, device="cuda", dtype=bf)
    bias = torch.randn(n, device="cuda", dtype=bf)
    out = torch.empty(b, n, n, device="cuda", dtype=bf)
    ho, hb, h1, h2 = H(out), H(bias), H(a1), H(a2)
    yield {"op": "baddbmm_out", "case": f"bf16 {b}x{n}^3, bias [n], beta 1 alpha 0.5",
           "aotrun": lambda: shim.call("aoti_torch_cuda_baddbmm_out", ho, hb, h1, h2, 1.0, 0.5),
           "aten": lambda: torch.baddbmm(bias, a1, a2, alpha=0.5, out=out),
           "bytes": 4 * b * n * n * 2,
           "env": {"AOTRUN_BADDBMM_BIAS": None},
           "variants": [{"label": "copy (AOTRUN_BADDBMM_BIAS=copy)",
                         "fn": lambda: shim.call("aoti_torch_cuda_baddbmm_out",
                                                 ho, hb, h1, h2, 1.0, 0.5),
                         "env": {"AOTRUN_BADDBMM_BIAS": "copy"}}],
           "note": "the bias in cuBLASLt's BIAS epilogue, one strided-batched "
                   "GEMM; AOTRUN_BADDBMM_BIAS=copy: bias broadcast into out first, as ATen"}

    m, k, nn = 8192, 4096, 4096
    x = torch.randn(m, k, device="cuda", dtype=bf)
    w = torch.randn(k, nn, device="cuda", dtype=bf)
    wt = torch.randn(nn, k, device="cuda", dtype=bf).t()  # nn.Linear's weight.t()
    bb = torch.randn(nn, device="cuda", dtype=bf)
    hx, hw, hwt, hbb = H(x), H(w), H(wt), H(bb)

    def act(hmat2, gelu):
        def run():
            r = shim.new_handle()
            shim.call("aoti_torch_cuda__addmm_activation", hbb, hx, hmat2, 1.0, 1.0,
                      gelu, r)
            shim.delete(r.contents)
        return run

    for gelu, name in ((1, "gelu"), (0, "relu")):
        yield {"op": "_addmm_activation", "case": f"{name} bf16 {m}x{k}x{nn}, bias [n], mat2 = W.t()",
               "aotrun": act(hwt, gelu),
               "aten": (lambda g: lambda: torch.ops.aten._addmm_activation(
                   bb, x, wt, use_gelu=bool(g)))(gelu),
               "bytes": (m * k + k * nn + m * nn) * 2,
               "note": "cuBLASLt bias + activation epilogue"}

    o32 = torch.empty(m, nn, device="cuda", dtype=torch.float32)
    ho32 = H(o32)
    try:
        torch.mm(x, w, out_dtype=torch.float32)
        aten_mm_dtype = lambda: torch.mm(x, w, out_dtype=torch.float32)  # noqa: E731
        note = ""
    except TypeError:
        aten_mm_dtype = lambda: torch.mm(x.float(), w.float())  # noqa: E731
        note = "ATen reference is a float32 mm (no out_dtype in this torch)"
    yield {"op": "mm_dtype_out", "case": f"bf16 -> f32 {m}x{k}x{nn}",
           "aotrun": lambda: shim.call("aoti_torch_cuda_mm_dtype_out", ho32, hx, hw, 6),
           "aten": aten_mm_dtype, "bytes": (m * k + k * nn) * 2 + m * nn * 4,
           "note": note}

    mv, kv = 16384, 8192
    mat = torch.randn(mv, kv, device="cuda")
    vec = torch.randn(kv, device="cuda")
    bv = torch.randn(mv, device="cuda")
    hm, hv, hbv = H(mat), H(vec), H(bv)

    def addmv():
        r = shim.new_handle()
        shim.call("aoti_torch_cuda_addmv", hbv, hm, hv, 1.0, 1.0, r)
        shim.delete(r.contents)

    yield {"op": "addmv", "case": f"f32 {mv}x{kv}", "aotrun": addmv,
           "aten": lambda: torch.addmv(bv, mat, vec), "bytes": mv * kv * 4,
           "note": "memory bound: GEMM with n = 1"}
