"""aoti_torch_cuda_convolution (cuDNN 9, opened at the first call) through
ctypes, against eager torch.ops.aten.convolution on the same inputs:
dtypes, 1-D / 2-D / 3-D, stride / padding / dilation, groups (depthwise
too), transposed with output_padding, bias or none, channels-last inputs
and weights (the result's strides must match torch's), arbitrary strides
(copied), an empty batch, and CUDA graph capture: replay after a warm-up,
and a shape first seen inside the capture (heuristic algorithm).

float32 is compared with TF32 off in torch and in the shim
(AOTRUN_CONV_TF32=0); test_float32_tf32_by_default compares the shim's
default (TF32 allowed, as torch's) with torch's default.
The shim loads libcudnn.so.9 from the process (torch has loaded it) or
from the library path; AOTRUN_CUDNN_LIBRARY names another one.

Every test runs twice: on cuDNN's backend graph API (the default; ids
[graph_api-...], selected by -k graph_api) and on its legacy API
(AOTRUN_CONV_API=legacy; ids [legacy_api-...]); the shim re-reads its choice
at each switch (Shim.kernel_options), and each path has its own plan cache, so
"first seen in a capture" holds for both. test_graph_path_engines checks
that the graph path found engines (no fallback to the legacy API) for the
benchmark's problems.
"""

import pytest

DTYPES = ["float32", "float16", "bfloat16", "float64"]
TOL = {"float64": (1e-10, 1e-10), "float32": (1e-4, 1e-4),
       "float16": (1e-2, 1e-2), "bfloat16": (4e-2, 4e-2)}


@pytest.fixture(autouse=True, params=["legacy", "graph"], ids=["legacy_api", "graph_api"])
def conv_api(request, shim):
    """AOTRUN_CONV_API for the test: both implementations are compared with
    eager (graph, the default: the variable unset)."""
    with shim.kernel_options({"AOTRUN_CONV_API":
                              "legacy" if request.param == "legacy" else None,
                              "AOTRUN_CONV_TF32": "0"}):
        yield request.param


@pytest.fixture(autouse=True)
def _no_tf32(torch):
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def rnd(torch, shape, dtype, fan_in=1):
    return (torch.randn(tuple(shape), device="cuda", dtype=torch.float64) / fan_in ** 0.5).to(dtype)


def shim_conv(shim, x, w, b=None, stride=(1,), padding=(0,), dilation=(1,),
              transposed=False, output_padding=(0,), groups=1, raw=False):
    """Calls the op; returns the result as a torch tensor with the handle's
    sizes and strides (or the raw handle slot with raw=True)."""
    hs = [shim.handle(x), shim.handle(w)]
    hb = None
    if b is not None:
        hs.append(shim.handle(b))
        hb = shim.opt(hs[-1])
    st, pd, dl, op = (shim.ints(v) for v in (stride, padding, dilation, output_padding))
    r = shim.new_handle()
    try:
        shim.call("aoti_torch_cuda_convolution", hs[0], hs[1], hb, st[0], st[1],
                  pd[0], pd[1], dl[0], dl[1], int(transposed), op[0], op[1], groups, r)
        return r if raw else shim.take(r)
    finally:
        for h in hs:
            shim.delete(h)


def ref(torch, x, w, b=None, stride=(1,), padding=(0,), dilation=(1,),
        transposed=False, output_padding=(0,), groups=1):
    nd = x.dim() - 2

    def full(v):
        return list(v) * nd if len(v) == 1 else list(v)
    return torch.ops.aten.convolution(x, w, b, full(stride), full(padding),
                                      full(dilation), transposed,
                                      full(output_padding), groups)


def check(torch, got, want, dtype, what, strides=True):
    rtol, atol = TOL[dtype]
    assert got.shape == want.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want.shape)}"
    if strides:
        assert got.stride() == want.stride(), f"{what}: strides {got.stride()} != {want.stride()}"
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, msg=lambda m: f"{what}: {m}")


CASES_2D = [
    # name, N, C, H, W, K, kernel, stride, padding, dilation, groups, bias
    ("3x3", 2, 8, 17, 15, 16, (3, 3), (1,), (1,), (1,), 1, True),
    ("stride2_pad0", 2, 8, 16, 16, 12, (3, 3), (2,), (0,), (1,), 1, False),
    ("dilation", 1, 6, 20, 18, 6, (3, 3), (1,), (2, 1), (2, 3), 1, True),
    ("groups", 2, 12, 14, 14, 18, (3, 3), (1, 2), (1,), (1,), 3, True),
    ("depthwise", 2, 16, 13, 13, 16, (5, 5), (1,), (2,), (1,), 16, True),
    ("1x1", 4, 32, 8, 8, 64, (1, 1), (1,), (0,), (1,), 1, False),
    ("rect_kernel", 1, 4, 11, 23, 5, (1, 7), (1, 3), (0, 3), (1,), 1, True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES_2D, ids=[c[0] for c in CASES_2D])
@pytest.mark.parametrize("layout", ["contig", "channels_last"])
def test_conv2d(torch, shim, dtype, case, layout):
    _, n, c, h, w_, k, ks, st, pd, dl, g, has_b = case
    d = getattr(torch, dtype)
    fan = c // g * ks[0] * ks[1]
    x = rnd(torch, (n, c, h, w_), d)
    w = rnd(torch, (k, c // g) + ks, d, fan)
    b = rnd(torch, (k,), d) if has_b else None
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    got = shim_conv(shim, x, w, b, st, pd, dl, groups=g)
    want = ref(torch, x, w, b, st, pd, dl, groups=g)
    # torch may pick a non-cuDNN kernel (depthwise, float64) whose output is
    # contiguous: compare strides where torch goes through cuDNN's rule.
    strict = case[0] not in ("depthwise",) and dtype != "float64"
    check(torch, got, want, dtype, f"conv2d {case[0]} {dtype} {layout}", strides=strict)
    if layout == "channels_last" and dtype != "float64":
        assert got.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv1d(torch, shim, dtype):
    d = getattr(torch, dtype)
    x = rnd(torch, (3, 6, 40), d)
    for st, pd, dl, g in (((1,), (0,), (1,), 1), ((2,), (3,), (2,), 2), ((3,), (1,), (1,), 6)):
        w = rnd(torch, (12, 6 // g, 5), d, 6 // g * 5)
        b = rnd(torch, (12,), d)
        got = shim_conv(shim, x, w, b, st, pd, dl, groups=g)
        check(torch, got, ref(torch, x, w, b, st, pd, dl, groups=g), dtype,
              f"conv1d {dtype} stride {st} groups {g}", strides=dtype != "float64")
    # A permuted (N, L, C) input: torch makes it contiguous, so do we.
    xp = rnd(torch, (3, 40, 6), d).transpose(1, 2)
    w = rnd(torch, (4, 6, 3), d, 18)
    check(torch, shim_conv(shim, xp, w), ref(torch, xp, w), dtype, "conv1d permuted input",
          strides=dtype != "float64")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["contig", "channels_last_3d"])
def test_conv3d(torch, shim, dtype, layout):
    d = getattr(torch, dtype)
    x = rnd(torch, (2, 4, 7, 9, 8), d)
    w = rnd(torch, (6, 2, 3, 3, 3), d, 54)
    b = rnd(torch, (6,), d)
    if layout != "contig":
        x = x.contiguous(memory_format=torch.channels_last_3d)
    got = shim_conv(shim, x, w, b, (1, 2, 1), (1,), (1, 1, 2), groups=2)
    want = ref(torch, x, w, b, (1, 2, 1), (1,), (1, 1, 2), groups=2)
    check(torch, got, want, dtype, f"conv3d {dtype} {layout}", strides=dtype != "float64")


TRANSPOSED = [
    # name, nd, N, C, spatial, Cout/g, kernel, stride, padding, dilation, out_pad, groups
    ("2d_s2_op1", 2, 2, 8, (7, 9), 6, (3, 3), (2,), (1,), (1,), (1,), 1),
    ("2d_groups", 2, 1, 8, (6, 6), 3, (4, 4), (2,), (1,), (1,), (0,), 2),
    ("2d_dilation_op", 2, 2, 4, (5, 5), 4, (3, 3), (1,), (0,), (2,), (1,), 1),
    ("1d", 1, 2, 6, (11,), 5, (4,), (3,), (1,), (1,), (2,), 1),
    ("3d", 3, 1, 4, (3, 4, 5), 2, (2, 3, 3), (2, 1, 2), (0, 1, 1), (1,), (1, 0, 1), 2),
    # output_padding >= stride (allowed below the dilation): cuDNN cannot
    # take the shape (ATen leaves cuDNN then); the shim runs the full dx
    # and takes its window (conv_transposed.c).
    ("2d_dil_op_pad", 2, 2, 4, (5, 6), 3, (3, 3), (1,), (2, 1), (3, 2), (2, 1), 1),
    ("2d_dil_op_mixed", 2, 1, 6, (4, 5), 2, (3, 2), (2, 1), (1, 2), (2, 4), (1, 3), 3),
    ("1d_dil_op", 1, 2, 4, (6,), 3, (3,), (1,), (1,), (3,), (2,), 1),
    ("3d_dil_op", 3, 1, 4, (3, 4, 3), 2, (2, 2, 3), (1, 2, 1), (0, 1, 1), (2,), (1, 1, 1), 2),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", TRANSPOSED, ids=[c[0] for c in TRANSPOSED])
@pytest.mark.parametrize("with_bias", [False, True])
def test_conv_transposed(torch, shim, dtype, case, with_bias):
    _, nd, n, c, sp, cog, ks, st, pd, dl, op, g = case
    d = getattr(torch, dtype)
    x = rnd(torch, (n, c) + sp, d)
    w = rnd(torch, (c, cog) + ks, d, c // g)
    b = rnd(torch, (cog * g,), d) if with_bias else None
    got = shim_conv(shim, x, w, b, st, pd, dl, True, op, g)
    want = ref(torch, x, w, b, st, pd, dl, True, op, g)
    check(torch, got, want, dtype, f"transposed {case[0]} {dtype}", strides=dtype != "float64")


def test_conv_transposed_channels_last(torch, shim):
    d = torch.float16
    x = rnd(torch, (2, 16, 9, 9), d).contiguous(memory_format=torch.channels_last)
    w = rnd(torch, (16, 8, 3, 3), d, 16)
    got = shim_conv(shim, x, w, None, (2,), (1,), (1,), True, (1,), 1)
    want = ref(torch, x, w, None, (2,), (1,), (1,), True, (1,), 1)
    check(torch, got, want, "float16", "transposed channels-last")


def test_conv_transposed_window_channels_last(torch, shim):
    """output_padding 1 >= stride 1 (dilation 2) with channels-last input:
    the window copy keeps the result's NHWC strides."""
    d = torch.float16
    x = rnd(torch, (2, 8, 5, 5), d).contiguous(memory_format=torch.channels_last)
    w = rnd(torch, (8, 4, 3, 3), d, 8)
    b = rnd(torch, (8,), d)
    got = shim_conv(shim, x, w, b, (1,), (1,), (2,), True, (1,), 2)
    want = ref(torch, x, w, b, (1,), (1,), (2,), True, (1,), 2)
    check(torch, got, want, "float16", "transposed window channels-last", strides=False)
    assert got.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv_arbitrary_strides(torch, shim, dtype):
    d = getattr(torch, dtype)
    # Sliced input (every other row / column), a weight slice, a strided bias.
    x = rnd(torch, (2, 6, 20, 22), d)[:, :, ::2, 1::2]
    w = rnd(torch, (8, 12, 3, 3), d, 27)[:, ::2]
    b = rnd(torch, (16,), d)[::2]
    check(torch, shim_conv(shim, x, w, b, (1,), (1,)), ref(torch, x, w, b, (1,), (1,)),
          dtype, "strided operands")
    # A channels-last weight alone makes the result channels-last.
    xc = rnd(torch, (2, 6, 10, 10), d)
    wc = rnd(torch, (8, 6, 3, 3), d, 54).contiguous(memory_format=torch.channels_last)
    got = shim_conv(shim, xc, wc)
    check(torch, got, ref(torch, xc, wc), dtype, "channels-last weight")
    assert got.is_contiguous(memory_format=torch.channels_last)


def test_conv_empty_batch(torch, shim):
    x = torch.empty(0, 4, 8, 8, device="cuda")
    w = torch.randn(6, 4, 3, 3, device="cuda")
    got = shim_conv(shim, x, w, None, (1,), (1,))
    assert got.shape == (0, 6, 8, 8)


def test_conv_errors_name_the_op(torch, shim):
    from shim_ctypes import ShimError
    x = torch.randn(1, 4, 8, 8, device="cuda")
    w = torch.randn(6, 3, 3, 3, device="cuda")
    with pytest.raises(ShimError, match="aoti_torch_cuda_convolution: weight has 3 input "
                                        r"channels per group, input has 4 \(groups 2"):
        shim_conv(shim, x, w, groups=2)


# ------------------------------------------------------------- CUDA graphs

def _capture(torch, shim, body, warm=True):
    """Captures body on a side stream that is current for torch and the
    shim (warm: body ran on it once before). A failing capture is closed
    and torch's RNG re-armed (conftest.graph_capture), so it cannot make
    later tests fail."""
    from conftest import graph_capture
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    with shim.stream(s):
        if warm:
            body()
            s.synchronize()
        with graph_capture(torch, g, s):
            body()
    torch.cuda.synchronize()
    return g


@pytest.mark.parametrize("warm", [True, False], ids=["warmed_up", "first_seen_in_capture"])
def test_conv_in_a_cuda_graph(torch, shim, warm):
    """warmed_up: the algorithm was benchmarked before the capture (cache
    hit inside it). first_seen_in_capture: a new shape inside the capture
    takes the heuristic algorithm (no kernels run while capturing). A
    thread's cuDNN handle must exist before a capture: one small conv runs
    first in both cases."""
    d = torch.float16
    shim_conv(shim, rnd(torch, (1, 2, 4, 4), d), rnd(torch, (2, 2, 1, 1), d))
    c = 24 if warm else 40  # a shape no other test uses when not warmed up
    x = rnd(torch, (4, c, 28, 28), d).contiguous(memory_format=torch.channels_last)
    w = rnd(torch, (32, c, 3, 3), d, c * 9)
    b = rnd(torch, (32,), d)
    out = torch.empty(4, 32, 28, 28, device="cuda", dtype=d).contiguous(
        memory_format=torch.channels_last)
    hx, hw, hb, ho = (shim.handle(t) for t in (x, w, b, out))
    st, pd, dl, op = (shim.ints(v) for v in ((1,), (1,), (1,), (0,)))

    def body():
        r = shim.new_handle()
        shim.call("aoti_torch_cuda_convolution", hx, hw, shim.opt(hb), st[0], st[1],
                  pd[0], pd[1], dl[0], dl[1], 0, op[0], op[1], 1, r)
        shim.call("aoti_torch_copy_", ho, r.contents, 0)
        shim.delete(r.contents)

    try:
        g = _capture(torch, shim, body, warm)
        for _ in range(2):
            x.copy_(rnd(torch, x.shape, d))
            w.copy_(rnd(torch, w.shape, d, c * 9))
            g.replay()
            torch.cuda.synchronize()
            check(torch, out, ref(torch, x, w, b, (1,), (1,)), "float16", "replayed conv",
                  strides=False)
        del g
        # After the capture, the heuristic choice is benchmarked again and
        # the op still gives the same result.
        check(torch, shim_conv(shim, x, w, b, (1,), (1,)), ref(torch, x, w, b, (1,), (1,)),
              "float16", "after capture")
    finally:
        for h in (hx, hw, hb, ho):
            shim.delete(h)


# ------------------------------------------------ the graph path's engines

GRAPH_FALLBACK_LINE = "the cuDNN graph API has no plan for this convolution"


def test_graph_path_engines(torch, shim, conv_api, capfd):
    """The benchmark's problem kinds (smaller shapes no other test uses) on
    the graph path: each gets a plan (the shim prints a line, once per key,
    when it falls back to the legacy API) and matches eager. With the
    legacy API the test only compares the results."""
    h, bf = torch.float16, torch.bfloat16
    cl = torch.channels_last
    cases = [
        # name, x, w, b, stride, padding, transposed, groups, dtype name
        ("3x3 fp16 NHWC bias", rnd(torch, (3, 24, 20, 20), h).contiguous(memory_format=cl),
         rnd(torch, (24, 24, 3, 3), h, 216).contiguous(memory_format=cl),
         rnd(torch, (24,), h), (1,), (1,), False, 1, "float16"),
        ("1x1 fp16 NHWC", rnd(torch, (3, 72, 20, 20), h).contiguous(memory_format=cl),
         rnd(torch, (24, 72, 1, 1), h, 72).contiguous(memory_format=cl),
         None, (1,), (0,), False, 1, "float16"),
        ("depthwise bf16 NHWC", rnd(torch, (3, 40, 20, 20), bf).contiguous(memory_format=cl),
         rnd(torch, (40, 1, 3, 3), bf, 9).contiguous(memory_format=cl),
         None, (1,), (1,), False, 40, "bfloat16"),
        ("transposed 4x4 s2 fp16 NHWC", rnd(torch, (3, 24, 10, 10), h).contiguous(memory_format=cl),
         rnd(torch, (24, 12, 4, 4), h, 24).contiguous(memory_format=cl),
         None, (2,), (1,), True, 1, "float16"),
        ("3x3 fp32 NCHW", rnd(torch, (3, 24, 20, 20), torch.float32),
         rnd(torch, (24, 24, 3, 3), torch.float32, 216), None, (1,), (1,), False, 1,
         "float32"),
    ]
    capfd.readouterr()
    for name, x, w, b, st, pd, tr, g, dt in cases:
        got = shim_conv(shim, x, w, b, st, pd, (1,), tr, (0,), g)
        want = ref(torch, x, w, b, st, pd, (1,), tr, (0,), g)
        check(torch, got, want, dt, f"{name} ({conv_api})", strides=False)
        err = capfd.readouterr().err
        if conv_api == "graph":
            assert GRAPH_FALLBACK_LINE not in err, f"{name}: {err}"


# ------------------------------------------------ TF32, the default

def test_float32_tf32_by_default(torch, shim, conv_api):
    """float32 with the shim's default (TF32 allowed, AOTRUN_CONV_TF32
    unset) against torch's default (torch.backends.cudnn.allow_tf32 True):
    within TF32's error of both torch's result and a float64 reference."""
    x = rnd(torch, (8, 64, 28, 28), torch.float32)
    w = rnd(torch, (64, 64, 3, 3), torch.float32, 576)
    b = rnd(torch, (64,), torch.float32)
    old = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = True
    try:
        with shim.kernel_options({"AOTRUN_CONV_TF32": None}):
            got = shim_conv(shim, x, w, b, (1,), (1,))
        want = ref(torch, x, w, b, (1,), (1,))
    finally:
        torch.backends.cudnn.allow_tf32 = old
    exact = ref(torch, x.double(), w.double(), b.double(), (1,), (1,))
    what = f"conv2d float32 with TF32 ({conv_api})"
    torch.testing.assert_close(got, want, rtol=1e-2, atol=1e-2,
                               msg=lambda m: f"{what} vs torch: {m}")
    torch.testing.assert_close(got.double(), exact, rtol=1e-2, atol=1e-2,
                               msg=lambda m: f"{what} vs float64: {m}")
