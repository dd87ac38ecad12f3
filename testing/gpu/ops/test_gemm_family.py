"""GEMM family fallback ops (baddbmm_out, mm_dtype_out, addmv,
_addmm_activation, and mm/addmm/bmm over every dtype) through ctypes,
against eager PyTorch on the same inputs: dtypes, transposed and strided
operands, broadcast biases, alpha/beta, beta == 0 with NaN in self, and a
CUDA graph capture replayed with new inputs.

float32 is compared with TF32 off in torch (the shim never uses TF32).
"""

import pytest


DTYPES = ["float32", "float16", "bfloat16", "float64"]
# (rtol, atol) per dtype; inputs are scaled so results are O(1).
TOL = {"float64": (1e-10, 1e-10), "float32": (2e-5, 2e-5),
       "float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2)}


@pytest.fixture(autouse=True)
def _no_tf32(torch):
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


class Handles:
    """Handles over torch tensors, deleted at the end of the test."""

    def __init__(self, shim):
        self.shim, self.hs = shim, []

    def __call__(self, t):
        h = self.shim.handle(t)
        self.hs.append(h)
        return h

    def close(self):
        for h in self.hs:
            self.shim.delete(h)


@pytest.fixture
def H(shim):
    h = Handles(shim)
    yield h
    h.close()


def dt(torch, name):
    return getattr(torch, name)


def rnd(torch, shape, dtype, k=1):
    """randn scaled by 1/sqrt(k) (k: the reduction length)."""
    return (torch.randn(tuple(shape), device="cuda", dtype=torch.float64) / k ** 0.5).to(dtype)


def close(got, want, dtype, what):
    rtol, atol = TOL[dtype]
    import torch
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=lambda m: f"{what}: {m}")


def operand(torch, shape, dtype, k, layout):
    """A matrix (or batch) of the given logical shape: contiguous, transposed
    (column-major, no copy needed) or strided (a slice: copied)."""
    if layout == "contig":
        return rnd(torch, shape, dtype, k)
    if layout == "t":
        s = list(shape)
        s[-1], s[-2] = s[-2], s[-1]
        return rnd(torch, s, dtype, k).transpose(-1, -2)
    s = list(shape)
    s[-1] *= 2
    return rnd(torch, s, dtype, k)[..., ::2]


# ---------------------------------------------------------------- baddbmm

GEMM_PATHS = {
    # the default: a row bias with beta 1 in cuBLASLt's BIAS epilogue, the
    # rest copied into out before cublasGemmEx
    "epilogue": {"AOTRUN_BADDBMM_BIAS": None, "AOTRUN_GEMM_LT": None},
    # ATen's way: every bias copied into out, then cublasGemmEx
    "copy": {"AOTRUN_BADDBMM_BIAS": "copy", "AOTRUN_GEMM_LT": None},
    # plain GEMMs through cuBLASLt too
    "gemm_lt": {"AOTRUN_BADDBMM_BIAS": None, "AOTRUN_GEMM_LT": "1"},
}


@pytest.fixture(params=list(GEMM_PATHS), ids=list(GEMM_PATHS))
def gemm_lt(request, shim):
    """Each baddbmm case on each path of gemm_run.c (GEMM_PATHS)."""
    with shim.kernel_options(GEMM_PATHS[request.param]):
        yield request.param


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contig", "t", "strided"])
@pytest.mark.parametrize("bias_shape", ["full", "row", "col1", "scalar", "expanded"])
def test_baddbmm(torch, shim, H, gemm_lt, dtype, layout, bias_shape):
    d = dt(torch, dtype)
    b, m, k, n = 3, 37, 29, 21
    a1 = operand(torch, (b, m, k), d, k, layout)
    a2 = operand(torch, (b, k, n), d, k, "t" if layout == "contig" else "contig")
    bias = {"full": lambda: rnd(torch, (b, m, n), d),
            "row": lambda: rnd(torch, (n,), d),
            "col1": lambda: rnd(torch, (1, m, 1), d),
            "scalar": lambda: rnd(torch, (), d),
            "expanded": lambda: rnd(torch, (1, 1, n), d).expand(b, m, n)}[bias_shape]()
    out = torch.full((b, m, n), float("nan"), device="cuda", dtype=d)
    for alpha, beta in ((1.0, 1.0), (0.5, -2.0)):
        shim.call("aoti_torch_cuda_baddbmm_out", H(out), H(bias), H(a1), H(a2), beta, alpha)
        close(out, torch.baddbmm(bias, a1, a2, beta=beta, alpha=alpha), dtype,
              f"baddbmm {dtype} {layout} bias {bias_shape} alpha {alpha} beta {beta}")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_baddbmm_beta0_ignores_nan_and_strided_out(torch, shim, H, gemm_lt,
                                                   dtype):
    d = dt(torch, dtype)
    b, m, k, n = 2, 16, 8, 12
    a1, a2 = rnd(torch, (b, m, k), d, k), rnd(torch, (b, k, n), d, k)
    bias = torch.full((b, m, n), float("nan"), device="cuda", dtype=d)
    # out: a transposed view (column-major), then a strided slice.
    for out in (torch.empty(b, n, m, device="cuda", dtype=d).transpose(1, 2),
                torch.empty(b, m, 2 * n, device="cuda", dtype=d)[..., ::2]):
        shim.call("aoti_torch_cuda_baddbmm_out", H(out), H(bias), H(a1), H(a2), 0.0, 1.5)
        assert not out.isnan().any()
        close(out, torch.baddbmm(bias, a1, a2, beta=0.0, alpha=1.5), dtype, "beta 0")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_baddbmm_row_bias_broadcast_operand(torch, shim, H, gemm_lt, dtype):
    """A row bias with beta 1 (the epilogue's case by default)
    and batch1 expanded over the batch (stride 0): the copy path."""
    d = dt(torch, dtype)
    b, m, k, n = 4, 24, 16, 40
    a1 = rnd(torch, (1, m, k), d, k).expand(b, m, k)
    a2 = rnd(torch, (b, k, n), d, k)
    row = rnd(torch, (n,), d)
    out = torch.full((b, m, n), float("nan"), device="cuda", dtype=d)
    shim.call("aoti_torch_cuda_baddbmm_out", H(out), H(row), H(a1), H(a2), 1.0, 0.75)
    close(out, torch.baddbmm(row, a1, a2, beta=1.0, alpha=0.75), dtype,
          "row bias, batch1 broadcast")


def test_baddbmm_k0(torch, shim, H, gemm_lt):
    bias = torch.randn(2, 3, 4, device="cuda")
    a1, a2 = torch.empty(2, 3, 0, device="cuda"), torch.empty(2, 0, 4, device="cuda")
    out = torch.empty(2, 3, 4, device="cuda")
    shim.call("aoti_torch_cuda_baddbmm_out", H(out), H(bias), H(a1), H(a2), 0.5, 2.0)
    close(out, torch.baddbmm(bias, a1, a2, beta=0.5, alpha=2.0), "float32", "k=0")
    row = torch.randn(4, device="cuda")  # beta 1: the epilogue's case
    shim.call("aoti_torch_cuda_baddbmm_out", H(out), H(row), H(a1), H(a2), 1.0, 2.0)
    close(out, torch.baddbmm(row, a1, a2, beta=1.0, alpha=2.0), "float32",
          "k=0, row bias")


# ------------------------------------------------- mm / addmm / bmm dtypes

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contig", "t", "strided"])
def test_mm_addmm_bmm_all_dtypes(torch, shim, H, dtype, layout):
    d = dt(torch, dtype)
    m, k, n = 45, 33, 27
    a = operand(torch, (m, k), d, k, layout)
    b = operand(torch, (k, n), d, k, "contig")
    out = torch.empty(m, n, device="cuda", dtype=d)
    shim.call("aoti_torch_cuda_mm_out", H(out), H(a), H(b))
    close(out, a @ b, dtype, f"mm {dtype} {layout}")
    bias = rnd(torch, (n,), d)
    shim.call("aoti_torch_cuda_addmm_out", H(out), H(bias), H(a), H(b), 0.5, 2.0)
    close(out, torch.addmm(bias, a, b, beta=0.5, alpha=2.0), dtype, f"addmm {dtype} {layout}")
    a3 = operand(torch, (4, m, k), d, k, layout)
    b3 = operand(torch, (4, k, n), d, k, "t")
    out3 = torch.empty(4, m, n, device="cuda", dtype=d)
    shim.call("aoti_torch_cuda_bmm_out", H(out3), H(a3), H(b3))
    close(out3, torch.bmm(a3, b3), dtype, f"bmm {dtype} {layout}")


# --------------------------------------------------------------- mm_dtype

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("layout", ["contig", "t", "strided"])
def test_mm_dtype_to_float32(torch, shim, H, dtype, layout):
    d = dt(torch, dtype)
    m, k, n = 64, 96, 40
    a = operand(torch, (m, k), d, k, layout)
    b = operand(torch, (k, n), d, k, "t")
    out = torch.empty(m, n, device="cuda", dtype=torch.float32)
    shim.call("aoti_torch_cuda_mm_dtype_out", H(out), H(a), H(b), 6)
    try:
        want = torch.mm(a, b, out_dtype=torch.float32)
    except TypeError:  # older spelling: fp32 accumulation of exact products
        want = a.float() @ b.float()
    # One rounding of an fp32 accumulation: close to the fp32 product.
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(out, a.double() @ b.double(), rtol=1e-3, atol=1e-3,
                               check_dtype=False)


def test_mm_dtype_same_dtype(torch, shim, H):
    a, b = rnd(torch, (20, 30), torch.bfloat16, 30), rnd(torch, (30, 10), torch.bfloat16, 30)
    out = torch.empty(20, 10, device="cuda", dtype=torch.bfloat16)
    shim.call("aoti_torch_cuda_mm_dtype_out", H(out), H(a), H(b), 15)
    close(out, a @ b, "bfloat16", "mm_dtype bf16 -> bf16")


# ------------------------------------------------------------------ addmv

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mat_layout", ["contig", "t"])
@pytest.mark.parametrize("bias_shape", ["full", "one", "scalar"])
def test_addmv(torch, shim, H, dtype, mat_layout, bias_shape):
    d = dt(torch, dtype)
    m, k = 70, 50
    mat = operand(torch, (m, k), d, k, mat_layout)
    vec = rnd(torch, (2 * k,), d)[::2]          # stride 2
    bias = {"full": (m,), "one": (1,), "scalar": ()}[bias_shape]
    bias = rnd(torch, bias, d)
    r = shim.new_handle()
    for alpha, beta in ((1.0, 1.0), (-0.5, 3.0)):
        shim.call("aoti_torch_cuda_addmv", H(bias), H(mat), H(vec), beta, alpha, r)
        got = shim.take(r)
        want = torch.addmv(bias, mat, vec, beta=beta, alpha=alpha)
        assert got.stride() == want.stride()
        close(got, want, dtype, f"addmv {dtype} {mat_layout} {bias_shape}")


def test_addmv_beta0_nan(torch, shim, H):
    mat, vec = torch.randn(9, 4, device="cuda"), torch.randn(4, device="cuda")
    bias = torch.full((9,), float("nan"), device="cuda")
    r = shim.new_handle()
    shim.call("aoti_torch_cuda_addmv", H(bias), H(mat), H(vec), 0.0, 1.0, r)
    close(shim.take(r), mat @ vec, "float32", "addmv beta 0")


# ------------------------------------------------------ _addmm_activation

def _act_ref(torch, bias, a, b, beta, alpha, gelu):
    return torch.ops.aten._addmm_activation(bias, a, b, beta=beta, alpha=alpha,
                                            use_gelu=gelu)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("gelu", [False, True])
@pytest.mark.parametrize("case", ["row_bias", "full_bias", "beta_alpha", "t_operands",
                                  "scalar_bias"])
def test_addmm_activation(torch, shim, H, dtype, gelu, case):
    """row_bias, full_bias, t_operands: ATen fuses the activation into
    cuBLASLt (beta 1); beta_alpha and scalar_bias: ATen runs a GEMM and then
    relu_ / gelu_(x, "tanh") (its elementwise kernel rounds differently from
    the cuBLASLt GELU epilogue, visible in float64)."""
    d = dt(torch, dtype)
    m, k, n = 64, 48, 80
    a = operand(torch, (m, k), d, k, "t" if case == "t_operands" else "contig")
    b = operand(torch, (k, n), d, k, "t" if case == "t_operands" else "contig")
    bias = rnd(torch, {"full_bias": (m, n), "scalar_bias": ()}.get(case, (n,)), d)
    beta, alpha = (0.5, 2.0) if case == "beta_alpha" else (1.0, 1.0)
    r = shim.new_handle()
    shim.call("aoti_torch_cuda__addmm_activation", H(bias), H(a), H(b), beta, alpha,
              int(gelu), r)
    got = shim.take(r)
    want = _act_ref(torch, bias, a, b, beta, alpha, gelu)
    assert got.stride() == want.stride() == (n, 1)
    if not gelu:
        assert (got >= 0).all()
    close(got, want, dtype, f"_addmm_activation {dtype} gelu={gelu} {case}")


def test_addmm_activation_gelu_is_tanh_approximation(torch, shim, H):
    # Large-ish values where erf and tanh gelu differ by more than fp64 noise.
    a = torch.linspace(-4, 4, 64, device="cuda", dtype=torch.float64).reshape(64, 1)
    b = torch.ones(1, 8, device="cuda", dtype=torch.float64)
    bias = torch.zeros(8, device="cuda", dtype=torch.float64)
    r = shim.new_handle()
    shim.call("aoti_torch_cuda__addmm_activation", H(bias), H(a), H(b), 1.0, 1.0, 1, r)
    got = shim.take(r)
    x = a @ b
    tanh = torch.nn.functional.gelu(x, approximate="tanh")
    erf = torch.nn.functional.gelu(x)
    torch.testing.assert_close(got, tanh, rtol=1e-6, atol=1e-6)
    assert (got - erf).abs().max() > 1e-5


# ------------------------------------------------------------- CUDA graph

def _graph_case(torch, shim, H, warm_stream):
    """baddbmm_out, _addmm_activation (gelu, fused: beta 1, row bias) and
    mm_dtype_out captured in one graph on a side stream that is current for
    torch and the shim, then replayed twice with new inputs.
    warm_stream: the ops ran once on the capture stream before the capture
    (handles and the stream's cuBLAS workspace exist); otherwise the capture
    stream is new (its GEMMs run without a workspace: nothing may be
    allocated inside a capture) and only the thread's handles exist."""
    from conftest import graph_capture
    d = torch.bfloat16
    a1, a2 = rnd(torch, (4, 64, 32), d, 32), rnd(torch, (4, 32, 48), d, 32)
    bias = rnd(torch, (48,), d)
    m1, m2 = rnd(torch, (64, 32), d, 32), rnd(torch, (32, 48), d, 32)
    out_b = torch.empty(4, 64, 48, device="cuda", dtype=d)
    out_a = torch.empty(64, 48, device="cuda", dtype=d)
    out_d = torch.empty(64, 48, device="cuda", dtype=torch.float32)
    hs = [H(t) for t in (a1, a2, bias, m1, m2, out_b, out_a, out_d)]
    ha1, ha2, hb, hm1, hm2, hob, hoa, hod = hs

    def body():
        shim.call("aoti_torch_cuda_baddbmm_out", hob, hb, ha1, ha2, 1.0, 0.5)
        r = shim.new_handle()
        shim.call("aoti_torch_cuda__addmm_activation", hb, hm1, hm2, 1.0, 1.0, 1, r)
        shim.call("aoti_torch_copy_", hoa, r.contents, 0)
        shim.delete(r.contents)
        shim.call("aoti_torch_cuda_mm_dtype_out", hod, hm1, hm2, 6)

    body()  # the thread's cuBLAS / cuBLASLt handles (session stream)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with shim.stream(s):
        if warm_stream:
            body()  # warm-up on the capture stream: its workspace
            s.synchronize()
        with graph_capture(torch, g, s):
            body()
    torch.cuda.synchronize()
    for _ in range(2):
        for t in (a1, a2, bias, m1, m2):
            t.copy_(torch.randn_like(t, dtype=torch.float32).to(d) * 0.2)
        g.replay()
        torch.cuda.synchronize()
        close(out_b, torch.baddbmm(bias, a1, a2, alpha=0.5), "bfloat16", "replayed baddbmm")
        close(out_a, _act_ref(torch, bias, m1, m2, 1.0, 1.0, True), "bfloat16",
              "replayed _addmm_activation")
        torch.testing.assert_close(out_d, m1.float() @ m2.float(), rtol=1e-4, atol=1e-4)
    del g


def test_gemm_family_in_a_cuda_graph(torch, shim, H):
    _graph_case(torch, shim, H, warm_stream=True)


def test_gemm_family_in_a_cuda_graph_new_stream(torch, shim, H):
    _graph_case(torch, shim, H, warm_stream=False)


def test_gemm_errors_name_the_op(torch, shim, H):
    from shim_ctypes import ShimError
    a, b = torch.randn(3, 4, device="cuda"), torch.randn(5, 6, device="cuda")
    r = shim.new_handle()
    with pytest.raises(ShimError, match="aoti_torch_cuda__addmm_activation: 'mat1' has size 4"):
        shim.call("aoti_torch_cuda__addmm_activation", H(torch.zeros(6, device="cuda")),
                  H(a), H(b), 1.0, 1.0, 0, r)
