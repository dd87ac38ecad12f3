"""The fused attention ops (aoti_torch_cuda__scaled_dot_product_flash_attention,
_scaled_dot_product_efficient_attention, _flash_attention_forward,
_efficient_attention_forward) against a float64 reference and eager PyTorch.

Accuracy: every output is compared with attention computed in float64 from
the same (rounded) inputs; the error must stay within a floor per dtype or
twice eager's own error on the same inputs (eager: the ATen op itself, or
torch's SDPA restricted with torch.nn.attention.sdpa_kernel to the backend
of the op, where that backend takes the case). logsumexp is compared with
the reference (and with eager's where eager runs), output strides and the
other outputs' shapes/dtypes/devices with ATen's meta functions.

Cases: float16, bfloat16, float32; head dims 64 and 128 (plus 80 and 256 on
the generic path); key counts 1, 33, 80, 96, 4096 (a partial last tile);
query counts off the tile; causal (flash: bottom-right, efficient:
top-left) and not; GQA (8 query heads over 2); a kv_len of 80 expressed as
a -inf bias over 128 keys (equal to attention over the first 80 keys);
additive biases broadcast over batch / heads (stride 0) and full; rows
whose bias is all -inf (ATen: 0, lse -inf); custom scale; q/k/v strided
views of a packed qkv tensor and a non-contiguous last dim; a CUDA graph
capture replayed with new inputs.

Both tensor-core kernels: every float16/bfloat16 case runs on the default,
wide kernel (ids [tc_wide-...]) and on the 64-query one
(AOTRUN_ATTN_TC=narrow, ids [tc_narrow-...]; select with -k tc_narrow). The
tile-edge tests stress the wide kernel's 128-query blocks (32 rows per warp) and 32/64-key steps: every
(L, S) pair of 1, 33, 65, 80, 96, 127, 129, 255 under each causal alignment;
head dims 8 to 256 (each class); GQA with L != S; biases dense, padded to 8
keys, broadcast over batch / heads / rows / keys and misaligned; q/k/v rows
not 16-byte aligned and odd output strides (element loads and stores).

Both float32 kernels: every float32 case runs on the SIMT kernel
(AOTRUN_ATTN_F32=simt; ids [...float32...]) and on the default,
register-tiled one (ids [...float32_tiled...], marker f32_tiled: select with
-k float32_tiled or -m f32_tiled); the shim re-reads its choice at each
switch (Shim.kernel_options). float32 ignores AOTRUN_ATTN_TC, so its
tc_narrow copies are deselected (conftest.py). test_f32_edges and the float32
rows of the tile-edge tests stress the tiled kernel's 64-query blocks,
64-key steps (32 for head dims over 128) and 64 / 128 / 256 head-dim
paddings: counts off the tiles, head dims 1 to 256, GQA, each causal mode
with L != S and rows without keys, broadcast and misaligned biases, lse,
unaligned rows (element loads).
"""

import ctypes
import math

import pytest

FLASH = "aoti_torch_cuda__scaled_dot_product_flash_attention"
EFF = "aoti_torch_cuda__scaled_dot_product_efficient_attention"
FLASH_FWD = "aoti_torch_cuda__flash_attention_forward"
EFF_FWD = "aoti_torch_cuda__efficient_attention_forward"

F32_TILED = pytest.mark.f32_tiled


def f32_both(*rest):
    """Parameter sets ("float32", *rest) for the default float32 kernel and
    for the tiled one (marker f32_tiled, ids float32_tiled-...)."""
    tail = "".join(f"-{x}" for x in rest)
    return [pytest.param("float32", *rest),
            pytest.param("float32", *rest, id="float32_tiled" + tail,
                         marks=F32_TILED)]


F32 = f32_both()
DTYPES = ["float16", "bfloat16"] + F32
# Error floors against the float64 reference (inputs ~ N(0, 1), outputs
# averages of values: |out| < ~3). float16/bfloat16: P is rounded to the
# dtype before P @ V and the output is rounded (as in FlashAttention-2).
ATOL = {"float16": 4e-3, "bfloat16": 3e-2, "float32": 5e-5}
LSE_ATOL = {"float16": 1e-3, "bfloat16": 1e-3, "float32": 5e-5}
INF = float("inf")


@pytest.fixture(autouse=True, params=["wide", "narrow"],
                ids=["tc_wide", "tc_narrow"])
def tc_kernel(request, shim):
    """AOTRUN_ATTN_TC for the test: every float16/bfloat16 case runs on the
    default (wide) tensor-core kernel (head dims <= 128; larger ones run on
    the 64-query kernel) and on the 64-query one (AOTRUN_ATTN_TC=narrow).
    float32 uses neither, so its cases run once (tc_wide): conftest.py
    deselects their tc_narrow copies at collection. Select one kernel with
    -k tc_wide / -k tc_narrow."""
    with shim.kernel_options({"AOTRUN_ATTN_TC":
                              None if request.param == "wide" else "narrow"}):
        yield request.param


@pytest.fixture(autouse=True)
def attn_f32_kernel(request, shim):
    """AOTRUN_ATTN_F32 for the test: unset (the default, tiled float32
    kernel) for the float32_tiled cases (marker f32_tiled), "simt" (the
    SIMT kernel) for the other float32 cases."""
    tiled = request.node.get_closest_marker("f32_tiled") is not None
    with shim.kernel_options({"AOTRUN_ATTN_F32": None if tiled else "simt"}):
        yield "tiled" if tiled else "simt"


def _dt(torch, name):
    return getattr(torch, name)


def _randn(torch, shape, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, device="cuda", generator=g).to(dtype)


def reference(torch, q, k, v, *, bias=None, causal=None, scale=None):
    """float64 attention over [B, H, L, D] inputs; causal None, "ul"
    (key j <= query i) or "br" (j <= i + S - L). Returns (out, lse, empty)
    with rows that see no key at 0 (empty marks them; lse -inf there)."""
    B, Hq, L, D = q.shape
    Hkv, S = k.shape[1], k.shape[2]
    qd, kd, vd = q.double(), k.double(), v.double()
    if Hq != Hkv:
        kd = kd.repeat_interleave(Hq // Hkv, dim=1)
        vd = vd.repeat_interleave(Hq // Hkv, dim=1)
    sc = 1.0 / math.sqrt(D) if scale is None else scale
    s = (qd @ kd.transpose(-1, -2)) * sc
    if bias is not None:
        s = s + bias.double()
    if causal:
        off = 0 if causal == "ul" else S - L
        keep = torch.ones(L, S, dtype=torch.bool, device=q.device).tril(off)
        s = s.masked_fill(~keep, -INF)
    lse = torch.logsumexp(s, dim=-1)
    empty = torch.isneginf(s).all(dim=-1, keepdim=True)
    p = torch.softmax(s, dim=-1).masked_fill(empty, 0.0)
    return p @ vd, lse, empty.squeeze(-1)


def _try(fn):
    """fn() or None where eager refuses the case."""
    try:
        return fn()
    except RuntimeError:
        return None


def check_close(torch, got, want64, dtype, what, eager=None):
    assert got.shape == want64.shape, f"{what}: shape {tuple(got.shape)} != {tuple(want64.shape)}"
    assert not got.isnan().any(), f"{what}: NaN in the output"
    err = (got.double() - want64).abs().max().item() if got.numel() else 0.0
    tol = ATOL[dtype]
    if eager is not None and eager.numel():
        # eager must agree with the reference's semantics (mask alignment,
        # all -inf rows at 0) before it widens the tolerance
        e_err = (eager.double() - want64).abs().max().item()
        assert e_err <= 4 * ATOL[dtype], (
            f"{what}: eager differs from the float64 reference by {e_err:.3g} "
            "(the semantics the reference encodes do not match eager's)")
        tol = max(tol, 2.0 * e_err)
    assert err <= tol, f"{what}: max error {err:.3g} > {tol:.3g}"


def check_lse(torch, got, want, dtype, what):
    """got/want float; equal infinities, finite values within LSE_ATOL."""
    assert got.shape == want.shape, f"{what}: lse shape {tuple(got.shape)} != {tuple(want.shape)}"
    gi, wi = torch.isinf(got), torch.isinf(want)
    assert torch.equal(gi, wi), f"{what}: lse infinities differ"
    assert torch.equal(got[gi], want[wi].to(got.dtype)), f"{what}: lse inf signs differ"
    if (~gi).any():
        err = (got[~gi].double() - want[~wi].double()).abs().max().item()
        assert err <= LSE_ATOL[dtype], f"{what}: lse error {err:.3g}"


# ---- calling the ops ----

def _sc(scale):
    return None if scale is None else ctypes.pointer(ctypes.c_double(scale))


def call_flash(shim, q, k, v, causal=False, scale=None):
    """Returns (out, lse, (max_q, max_k), descriptions of rng_state, unused,
    debug mask) and checks cum_seq_q/k are (undefined) handles."""
    hs = [shim.handle(t) for t in (q, k, v)]
    r = [shim.new_handle() for _ in range(7)]
    m4, m5 = ctypes.c_int64(-1), ctypes.c_int64(-1)
    try:
        shim.call(FLASH, hs[0], hs[1], hs[2], 0.0, int(causal), 0, _sc(scale),
                  r[0], r[1], r[2], r[3], ctypes.byref(m4), ctypes.byref(m5),
                  r[4], r[5], r[6])
        assert r[2].contents.value and r[3].contents.value, "cum_seq handles"
        extra = [shim.describe(r[i].contents) for i in (4, 5, 6)]
        for i in (2, 3, 4, 5, 6):
            shim.delete(r[i].contents)
        out, lse = shim.take(r[0]), shim.take(r[1])
    finally:
        for h in hs:
            shim.delete(h)
    return out, lse, (m4.value, m5.value), extra


def call_eff(shim, q, k, v, bias=None, lse=True, causal=False, scale=None):
    hs = [shim.handle(t) for t in (q, k, v)]
    hb = shim.handle(bias) if bias is not None else None
    r = [shim.new_handle() for _ in range(4)]
    try:
        shim.call(EFF, hs[0], hs[1], hs[2], shim.opt(hb), int(lse), 0.0,
                  int(causal), _sc(scale), r[0], r[1], r[2], r[3])
        extra = [shim.describe(r[i].contents) for i in (2, 3)]
        for i in (2, 3):
            shim.delete(r[i].contents)
        out, l = shim.take(r[0]), shim.take(r[1])
    finally:
        for h in hs + ([hb] if hb else []):
            shim.delete(h)
    return out, l, extra


def eager_flash(torch, q, k, v, causal=False, scale=None):
    """ATen's flash op (float16/bfloat16 only), or None."""
    if q.dtype == torch.float32:
        return None
    r = _try(lambda: torch.ops.aten._scaled_dot_product_flash_attention(
        q, k, v, 0.0, causal, False, scale=scale))
    return None if r is None else (r[0], r[1])


def eager_eff(torch, q, k, v, bias=None, causal=False, scale=None):
    """torch SDPA on the efficient backend (out) and, where the ATen op
    accepts the inputs, its logsumexp; None where it refuses."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if q.shape[1] != k.shape[1]:
        return None
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):
        out = _try(lambda: torch.nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=bias, is_causal=causal, scale=scale))
    r = _try(lambda: torch.ops.aten._scaled_dot_product_efficient_attention(
        q, k, v, bias, True, 0.0, causal, scale=scale))
    if out is None and r is None:
        return None
    return (out if out is not None else r[0]), (None if r is None else r[1])


def _flash_case(torch, shim, dtype, B, Hq, Hkv, L, S, D, causal, scale=None,
                seed=0, q=None, k=None, v=None, with_eager=True):
    dt = _dt(torch, dtype)
    q = q if q is not None else _randn(torch, (B, Hq, L, D), dt, seed)
    k = k if k is not None else _randn(torch, (B, Hkv, S, D), dt, seed + 1)
    v = v if v is not None else _randn(torch, (B, Hkv, S, D), dt, seed + 2)
    what = f"flash {dtype} B={B} Hq={Hq} Hkv={Hkv} L={L} S={S} D={D} causal={causal}"
    out, lse, maxes, extra = call_flash(shim, q, k, v, causal, scale)
    want, wlse, empty = reference(torch, q, k, v, causal="br" if causal else None,
                                  scale=scale)
    eager = eager_flash(torch, q, k, v, causal, scale) if with_eager else None
    check_close(torch, out, want, dtype, what, eager[0] if eager else None)
    assert out.dtype == dt
    assert out.stride() == torch.empty_like(q).stride(), f"{what}: strides {out.stride()}"
    if eager:
        assert out.stride() == eager[0].stride(), f"{what}: strides vs eager"
    # flash: a row without keys has lse +inf
    check_lse(torch, lse, torch.where(empty, INF, wlse).float(), dtype, what)
    if eager:
        check_lse(torch, lse, eager[1], dtype, what + " (vs eager lse)")
    assert maxes == (L, S)
    assert extra[0][0] == [2] and extra[0][2] == torch.uint64
    assert extra[1][0] == [] and extra[1][2] == torch.uint64
    assert extra[2][0] == [0] and extra[2][2] == dt


# ---- flash ----

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("S", [1, 33, 80, 96, 4096])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_key_counts(torch, shim, dtype, D, S, causal):
    B, H = (1, 2) if S == 4096 else (2, 3)
    _flash_case(torch, shim, dtype, B, H, H, S, S, D, causal)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("L,S", [(1, 96), (17, 80), (65, 33), (130, 96), (33, 1)])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_query_counts(torch, shim, dtype, L, S, causal):
    """L != S: causal aligns bottom-right as ATen's flash kernel does (rows
    before L - S see no key: 0 and lse +inf)."""
    _flash_case(torch, shim, dtype, 2, 2, 2, L, S, 64, causal)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("D", [8, 40, 80, 96, 256])
def test_flash_generic_head_dims(torch, shim, dtype, D):
    _flash_case(torch, shim, dtype, 1, 2, 2, 100, 77, D, True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True])
def test_flash_gqa(torch, shim, dtype, causal):
    _flash_case(torch, shim, dtype, 2, 8, 2, 96, 96, 64, causal)
    _flash_case(torch, shim, dtype, 1, 8, 2, 200, 200, 128, causal, scale=0.3)


def test_flash_matches_sdpa(torch, shim):
    """The op against torch SDPA on the flash backend (square causal)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    q = _randn(torch, (2, 4, 257, 64), torch.bfloat16, 7)
    k = _randn(torch, (2, 4, 257, 64), torch.bfloat16, 8)
    v = _randn(torch, (2, 4, 257, 64), torch.bfloat16, 9)
    out, _, _, _ = call_flash(shim, q, k, v, True)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        e = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    want, _, _ = reference(torch, q, k, v, causal="ul")
    check_close(torch, out, want, "bfloat16", "flash vs sdpa", e)
    assert (out.float() - e.float()).abs().max().item() <= 2e-2


@pytest.mark.parametrize("dtype", DTYPES)
def test_flash_strided_inputs(torch, shim, dtype):
    """q/k/v views of a packed [B, L, 3, H, D] tensor (row stride 3*H*D):
    the output keeps q's stride order ([B, L, H, D] storage)."""
    dt = _dt(torch, dtype)
    qkv = _randn(torch, (2, 150, 3, 4, 64), dt, 3)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    out, lse, _, _ = call_flash(shim, q, k, v, True)
    want, wlse, _ = reference(torch, q, k, v, causal="br")
    eager = eager_flash(torch, q, k, v, True)
    check_close(torch, out, want, dtype, "flash packed qkv", eager[0] if eager else None)
    assert out.stride() == torch.empty_like(q).stride() == (150 * 4 * 64, 64, 4 * 64, 1)
    check_lse(torch, lse, wlse.float(), dtype, "flash packed qkv")
    # A last dim that is not contiguous (copied first).
    qt = _randn(torch, (1, 2, 64, 70), dt, 4).transpose(-1, -2)
    out, lse, _, _ = call_flash(shim, qt, k[:1, :2], v[:1, :2], False)
    want, wlse, _ = reference(torch, qt, k[:1, :2], v[:1, :2])
    check_close(torch, out, want, dtype, "flash strided last dim")
    assert out.stride() == torch.empty_like(qt).stride()


def test_flash_forward_op(torch, shim):
    """_flash_attention_forward on [B, L, H, D] inputs (GQA, causal)."""
    q = _randn(torch, (2, 90, 8, 64), torch.float16, 11)
    k = _randn(torch, (2, 90, 2, 64), torch.float16, 12)
    v = _randn(torch, (2, 90, 2, 64), torch.float16, 13)
    hs = [shim.handle(t) for t in (q, k, v)]
    r = [shim.new_handle() for _ in range(5)]
    shim.call(FLASH_FWD, hs[0], hs[1], hs[2], None, None, 90, 90, 0.0, 1, 0,
              None, None, None, None, None, r[0], r[1], r[2], r[3], r[4])
    for i in (2, 3, 4):
        shim.delete(r[i].contents)
    out, lse = shim.take(r[0]), shim.take(r[1])
    for h in hs:
        shim.delete(h)
    want, wlse, _ = reference(torch, q.transpose(1, 2), k.transpose(1, 2),
                              v.transpose(1, 2), causal="br")
    assert out.shape == q.shape and out.stride() == q.stride()
    check_close(torch, out.transpose(1, 2), want, "float16", "flash forward op")
    check_lse(torch, lse, wlse.float(), "float16", "flash forward op")


# ---- efficient ----

def _eff_case(torch, shim, dtype, B, H, L, S, D, *, causal=False, bias=None,
              lse=True, scale=None, seed=0, Hkv=None, q=None, k=None, v=None,
              with_eager=True):
    dt = _dt(torch, dtype)
    Hkv = Hkv or H
    q = q if q is not None else _randn(torch, (B, H, L, D), dt, seed)
    k = k if k is not None else _randn(torch, (B, Hkv, S, D), dt, seed + 1)
    v = v if v is not None else _randn(torch, (B, Hkv, S, D), dt, seed + 2)
    what = (f"efficient {dtype} B={B} H={H}/{Hkv} L={L} S={S} D={D} "
            f"causal={causal} bias={None if bias is None else tuple(bias.shape)}")
    out, l, extra = call_eff(shim, q, k, v, bias, lse, causal, scale)
    want, wlse, empty = reference(torch, q, k, v, bias=bias,
                                  causal="ul" if causal else None, scale=scale)
    eager = eager_eff(torch, q, k, v, bias, causal, scale) if with_eager else None
    check_close(torch, out, want, dtype, what, eager[0] if eager else None)
    assert out.dtype == dt
    exp_stride = torch.empty(B, L, H, D).transpose(1, 2).stride()
    assert out.stride() == exp_stride, f"{what}: strides {out.stride()} != {exp_stride}"
    pad = (L + 31) // 32 * 32 if lse else 0
    assert tuple(l.shape) == (B, H, pad) and l.dtype == torch.float32
    if lse:
        full = torch.full((B, H, pad), INF, device="cuda")
        full[..., :L] = wlse.float()  # rows without keys: -inf (ATen's)
        check_lse(torch, l, full, dtype, what)
        if eager and eager[1] is not None:
            check_lse(torch, l, eager[1], dtype, what + " (vs eager lse)")
    for d in extra:  # philox seed / offset: int64 [] on the CPU
        assert d[0] == [] and d[2] == torch.int64 and d[3] == 0
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("D", [64, 128])
@pytest.mark.parametrize("S", [1, 33, 80, 96, 4096])
@pytest.mark.parametrize("causal", [False, True])
def test_efficient_key_counts(torch, shim, dtype, D, S, causal):
    B, H = (1, 2) if S == 4096 else (2, 3)
    _eff_case(torch, shim, dtype, B, H, S, S, D, causal=causal)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("L,S", [(1, 96), (17, 80), (65, 33), (130, 96)])
@pytest.mark.parametrize("causal", [False, True])
def test_efficient_query_counts(torch, shim, dtype, L, S, causal):
    """L != S: causal aligns top-left (torch SDPA's is_causal)."""
    _eff_case(torch, shim, dtype, 2, 2, L, S, 64, causal=causal, lse=L != 17)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("D", [64, 128])
def test_efficient_kv_len_bias(torch, shim, dtype, D):
    """kv_len 80 of 128 keys: keys past 80 get a -inf bias and no other
    mask; equals attention over the first 80 keys."""
    dt = _dt(torch, dtype)
    B, H, L, S = 2, 4, 96, 128
    bias = torch.zeros(B, 1, L, S, device="cuda", dtype=dt)
    bias[..., 80:] = -INF
    bias = bias.expand(B, H, L, S)  # stride 0 over heads
    q = _randn(torch, (B, H, L, D), dt, 21)
    k = _randn(torch, (B, H, S, D), dt, 22)
    v = _randn(torch, (B, H, S, D), dt, 23)
    out = _eff_case(torch, shim, dtype, B, H, L, S, D, bias=bias, q=q, k=k, v=v)
    want, _, _ = reference(torch, q, k[:, :, :80], v[:, :, :80])
    check_close(torch, out, want, dtype, "kv_len 80 vs 80 keys")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ["full", "batch1", "head1", "2d", "rows"])
@pytest.mark.parametrize("causal", [False, True])
def test_efficient_bias(torch, shim, dtype, shape, causal):
    dt = _dt(torch, dtype)
    B, H, L, S, D = 2, 3, 70, 90, 64
    full = _randn(torch, (B, H, L, S), torch.float32, 31).to(dt)
    bias = {"full": full, "batch1": full[:1], "head1": full[:, :1],
            "2d": full[0, 0], "rows": full[:, :, :, :1].expand(B, H, L, S)}[shape]
    if shape == "full":  # a few -inf and one row all -inf (ATen: 0, lse -inf)
        bias = bias.clone()
        bias[0, 1, 5, ::3] = -INF
        bias[1, 2, 7, :] = -INF
    _eff_case(torch, shim, dtype, B, H, L, S, D, causal=causal, bias=bias)


@pytest.mark.parametrize("dtype", DTYPES)
def test_efficient_gqa_and_scale(torch, shim, dtype):
    _eff_case(torch, shim, dtype, 2, 8, 96, 96, 64, Hkv=2, causal=True)
    _eff_case(torch, shim, dtype, 1, 8, 50, 130, 128, Hkv=2, scale=0.25,
              lse=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_efficient_strided(torch, shim, dtype):
    dt = _dt(torch, dtype)
    qkv = _randn(torch, (2, 77, 3, 4, 64), dt, 41)
    q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
    bias = _randn(torch, (2, 4, 80, 77), dt, 42)[:, :, :77]  # row stride 77
    _eff_case(torch, shim, dtype, 2, 4, 77, 77, 64, causal=True, bias=bias,
              q=q, k=k, v=v)


def test_efficient_forward_op(torch, shim):
    """_efficient_attention_forward: [B, L, H, D] inputs, bias [B, H, L, S],
    custom_mask_type 2 (bottom-right), contiguous [B, L, H, D] output."""
    q = _randn(torch, (2, 40, 4, 64), torch.bfloat16, 51)
    k = _randn(torch, (2, 70, 4, 64), torch.bfloat16, 52)
    v = _randn(torch, (2, 70, 4, 64), torch.bfloat16, 53)
    bias = _randn(torch, (2, 4, 40, 70), torch.bfloat16, 54)
    hs = [shim.handle(t) for t in (q, k, v, bias)]
    r = [shim.new_handle() for _ in range(4)]
    m4, m5 = ctypes.c_int64(-1), ctypes.c_int64(-1)
    shim.call(EFF_FWD, hs[0], hs[1], hs[2], shim.opt(hs[3]), None, None,
              None, None, 0.0, 2, 1, None, None, None, r[0], r[1], r[2], r[3],
              ctypes.byref(m4), ctypes.byref(m5))
    shim.delete(r[2].contents)
    shim.delete(r[3].contents)
    out, lse = shim.take(r[0]), shim.take(r[1])
    for h in hs:
        shim.delete(h)
    assert (m4.value, m5.value) == (40, 70)
    assert out.shape == (2, 40, 4, 64) and out.is_contiguous()
    want, wlse, _ = reference(torch, q.transpose(1, 2), k.transpose(1, 2),
                              v.transpose(1, 2), bias=bias, causal="br")
    check_close(torch, out.transpose(1, 2), want, "bfloat16", "efficient forward op")
    assert tuple(lse.shape) == (2, 4, 64)
    check_lse(torch, lse[..., :40], wlse.float(), "bfloat16", "efficient forward op")
    assert torch.isinf(lse[..., 40:]).all() and (lse[..., 40:] > 0).all()


def test_dropout_refused(torch, shim):
    q = _randn(torch, (1, 2, 8, 64), torch.bfloat16, 0)
    h = shim.handle(q)
    r = [shim.new_handle() for _ in range(4)]
    from shim_ctypes import ShimError
    with pytest.raises(ShimError, match="dropout_p=0.1 is not supported"):
        shim.call(EFF, h, h, h, None, 1, 0.1, 0, None, r[0], r[1], r[2], r[3])
    shim.delete(h)


# ---- tile edges: the cases the 128-query tiles of the wide kernel (and the
# 64-query tiles of the default one) must get right, on both kernels ----

TC_DTYPES = ["bfloat16", "float16"]
# Around the 32-row warp slices, 64/128-row blocks and 32/64-key steps.
EDGE_LENS = [1, 33, 65, 80, 96, 127, 129, 255]
# none / bottom-right causal on the flash op, none / top-left on the
# efficient op (with its lse padded to 32 rows, +inf past L).
MODES = ["none_flash", "br_flash", "none_eff", "ul_eff"]


def _mode_case(torch, shim, dtype, mode, B, H, L, S, D, *, Hkv=None, seed=0,
               q=None, k=None, v=None, with_eager=True):
    causal = mode in ("br_flash", "ul_eff")
    if mode.endswith("_flash"):
        _flash_case(torch, shim, dtype, B, H, Hkv or H, L, S, D, causal,
                    seed=seed, q=q, k=k, v=v, with_eager=with_eager)
    else:
        _eff_case(torch, shim, dtype, B, H, L, S, D, causal=causal, Hkv=Hkv,
                  seed=seed, q=q, k=k, v=v, with_eager=with_eager)


@pytest.mark.parametrize("L", EDGE_LENS)
@pytest.mark.parametrize("S", EDGE_LENS)
@pytest.mark.parametrize("mode", MODES)
def test_tile_edges_lengths(torch, shim, L, S, mode):
    """Every query/key count pair around the tile sizes, each causal
    alignment with L != S (rows that see no key: 0, lse +inf or -inf);
    bfloat16 here, float16 in the tests below (same index math)."""
    _mode_case(torch, shim, "bfloat16", mode, 1, 2, L, S, 64,
               seed=L * 1000 + S)


@pytest.mark.parametrize("dtype", TC_DTYPES)
@pytest.mark.parametrize("D", [8, 40, 64, 80, 96, 128, 160, 256])
@pytest.mark.parametrize("L,S", [(127, 255), (129, 33), (255, 129)])
@pytest.mark.parametrize("mode", ["br_flash", "ul_eff"])
def test_tile_edges_head_dims(torch, shim, dtype, D, L, S, mode):
    """Head dims of each class (<= 64, <= 128, <= 256; zero padding past D):
    D > 128 runs on the 64-query kernel under either choice."""
    _mode_case(torch, shim, dtype, mode, 2, 2, L, S, D, seed=D)


@pytest.mark.parametrize("dtype", TC_DTYPES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("L,S,D", [(129, 255, 128), (255, 129, 64),
                                   (80, 96, 96), (33, 1, 40)])
def test_tile_edges_gqa(torch, shim, dtype, mode, L, S, D):
    """8 query heads over 2 key/value heads."""
    _mode_case(torch, shim, dtype, mode, 2, 8, L, S, D, Hkv=2, seed=S)


def _edge_bias(torch, kind, B, H, L, S, dt, seed):
    """Biases of every layout the kernels read differently: dense rows of
    odd length (element loads), rows padded to 8 keys (16-byte loads, the
    last chunk cut at S), broadcast over batch / heads / rows (stride 0),
    over keys (key stride 0: element loads), and a base 2 bytes off 16."""
    S8 = (S + 7) // 8 * 8
    padded = _randn(torch, (B, H, L, S8), torch.float32, seed).to(dt)[..., :S]
    if kind == "full":
        b = _randn(torch, (B, H, L, S), torch.float32, seed).to(dt)
        b[0, 1, 5, ::3] = -INF
        b[1, 2, min(7, L - 1), :] = -INF  # a row without keys
        return b
    if kind == "padded":
        return padded
    if kind == "batch1":
        return padded[:1]
    if kind == "head1":
        return padded[:, :1]
    if kind == "2d":
        return padded[0, 0]
    if kind == "keypad":  # [B, 1, 1, S]: a key padding mask
        m = torch.zeros(B, 1, 1, S8, device="cuda", dtype=dt)[..., :S]
        m[..., S - S // 3:] = -INF
        return m.expand(B, H, L, S)
    if kind == "rows":  # one value per row (key stride 0)
        return padded[..., :1].expand(B, H, L, S)
    if kind == "misaligned":
        flat = _randn(torch, (B * H * L * S8 + 1,), torch.float32, seed).to(dt)
        return flat[1:].view(B, H, L, S8)[..., :S]
    raise ValueError(kind)


@pytest.mark.parametrize("dtype,D", [("bfloat16", 64), ("float16", 128)]
                         + f32_both(33) + f32_both(200))
@pytest.mark.parametrize("kind", ["full", "padded", "batch1", "head1", "2d",
                                  "keypad", "rows", "misaligned"])
@pytest.mark.parametrize("L,S", [(129, 255), (255, 129)])
@pytest.mark.parametrize("causal", [False, True])
def test_tile_edges_bias(torch, shim, dtype, D, kind, L, S, causal):
    """Additive biases over several query blocks and key steps, lse
    requested (the wide kernel stages the bias tile in shared memory: 64
    keys per step for D <= 64, 32 for D <= 128)."""
    B, H = 2, 3
    bias = _edge_bias(torch, kind, B, H, L, S, _dt(torch, dtype), L + S)
    # A misaligned bias is checked against the float64 reference only:
    # eager's kernels need 16-byte aligned operands.
    _eff_case(torch, shim, dtype, B, H, L, S, D, causal=causal, bias=bias,
              seed=7, with_eager=kind != "misaligned")


def _unaligned(torch, shape, dt, seed, how):
    """A tensor of `shape` whose rows are not 16-byte aligned: `odd` rows of
    D + 1 elements, `offset` a base one element past a 16-byte boundary."""
    *lead, D = shape
    if how == "odd":
        return _randn(torch, (*lead, D + 1), dt, seed)[..., :D]
    n = math.prod(shape)
    return _randn(torch, (n + 1,), dt, seed)[1:].view(*shape)


@pytest.mark.parametrize("dtype,D", [("bfloat16", 33), ("float16", 40),
                                     ("float16", 64), ("bfloat16", 128)]
                         + f32_both(7) + f32_both(64))
@pytest.mark.parametrize("how", ["odd", "offset"])
@pytest.mark.parametrize("L,S", [(129, 80), (65, 255)])
@pytest.mark.parametrize("mode", MODES)
def test_tile_edges_unaligned(torch, shim, dtype, D, how, L, S, mode):
    """q/k/v rows that are not 16-byte aligned (element loads) and, for odd
    D, odd output strides (element stores); against the float64 reference
    only (eager's kernels need 16-byte aligned rows: such inputs could
    fault there)."""
    dt = _dt(torch, dtype)
    B, H = 1, 3
    q = _unaligned(torch, (B, H, L, D), dt, 1, how)
    k = _unaligned(torch, (B, H, S, D), dt, 2, how)
    v = _unaligned(torch, (B, H, S, D), dt, 3, how)
    _mode_case(torch, shim, dtype, mode, B, H, L, S, D, q=q, k=k, v=v,
               with_eager=False)


# ---- CUDA graphs ----

def test_attention_inside_cuda_graph(torch, shim):
    """Both ops capture (no host synchronisation) and replay with new
    inputs."""
    B, H, L, D = 2, 4, 300, 64
    q = _randn(torch, (B, H, L, D), torch.bfloat16, 61)
    k = _randn(torch, (B, H, L, D), torch.bfloat16, 62)
    v = _randn(torch, (B, H, L, D), torch.bfloat16, 63)
    bias = torch.zeros(B, 1, L, L, device="cuda", dtype=torch.bfloat16)
    bias[..., 250:] = -INF
    out_f = torch.empty_like(q)
    out_e = torch.empty_like(q)
    hq, hk, hv, hb = (shim.handle(t) for t in (q, k, v, bias))
    hf, he = shim.handle(out_f), shim.handle(out_e)

    def body():
        r = [shim.new_handle() for _ in range(7)]
        m4, m5 = ctypes.c_int64(), ctypes.c_int64()
        shim.call(FLASH, hq, hk, hv, 0.0, 1, 0, None, r[0], r[1], r[2], r[3],
                  ctypes.byref(m4), ctypes.byref(m5), r[4], r[5], r[6])
        shim.call("aoti_torch_copy_", hf, r[0].contents, 0)
        for x in r:
            shim.delete(x.contents)
        r = [shim.new_handle() for _ in range(4)]
        shim.call(EFF, hq, hk, hv, shim.opt(hb), 1, 0.0, 0, None, r[0], r[1],
                  r[2], r[3])
        shim.call("aoti_torch_copy_", he, r[0].contents, 0)
        for x in r:
            shim.delete(x.contents)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with shim.stream(side):  # warm-up outside the capture
        body()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(g):
            with shim.stream(torch.cuda.current_stream()):
                body()
        for trial in range(2):
            for t in (q, k, v):
                t.copy_(torch.randn_like(t))
            g.replay()
            torch.cuda.synchronize()
            want, _, _ = reference(torch, q, k, v, causal="br")
            check_close(torch, out_f, want, "bfloat16", f"graph replay {trial} flash")
            want, _, _ = reference(torch, q, k, v, bias=bias)
            check_close(torch, out_e, want, "bfloat16", f"graph replay {trial} efficient")
    finally:
        del g
        for h in (hq, hk, hv, hb, hf, he):
            shim.delete(h)


# ---- float32 kernels' edges (both kernels through F32) ----

@pytest.mark.parametrize("dtype", F32)
@pytest.mark.parametrize("D", [1, 7, 33, 64, 80, 128, 256])
@pytest.mark.parametrize("L,S", [(1, 80), (96, 33), (65, 127), (127, 65)])
@pytest.mark.parametrize("mode", MODES)
def test_f32_edges(torch, shim, dtype, D, L, S, mode):
    """GQA (4 query heads over 2), counts off the 64-row tiles and 64 / 32
    key steps, head dims off the 64 / 128 / 256 paddings (D % 4 != 0:
    element loads), each causal alignment with L != S (bottom-right with
    L > S: the first L - S rows see no key)."""
    _mode_case(torch, shim, dtype, mode, 2, 4, L, S, D, Hkv=2, seed=D)


@pytest.mark.parametrize("dtype", F32)
@pytest.mark.parametrize("D", [33, 128])
def test_f32_efficient_forward_bottom_right(torch, shim, dtype, D):
    """_efficient_attention_forward, custom_mask_type 2 (bottom-right) with
    L > S and a bias broadcast over batch and heads: rows before L - S see
    no key (0, lse -inf), lse rows past L +inf."""
    B, L, S, H = 2, 100, 40, 3
    q = _randn(torch, (B, L, H, D), torch.float32, 71)
    k = _randn(torch, (B, S, H, D), torch.float32, 72)
    v = _randn(torch, (B, S, H, D), torch.float32, 73)
    bias = _randn(torch, (1, 1, L, S), torch.float32, 74).expand(B, H, L, S)
    hs = [shim.handle(t) for t in (q, k, v, bias)]
    r = [shim.new_handle() for _ in range(4)]
    m4, m5 = ctypes.c_int64(-1), ctypes.c_int64(-1)
    try:
        shim.call(EFF_FWD, hs[0], hs[1], hs[2], shim.opt(hs[3]), None, None,
                  None, None, 0.0, 2, 1, None, None, None, r[0], r[1], r[2],
                  r[3], ctypes.byref(m4), ctypes.byref(m5))
        shim.delete(r[2].contents)
        shim.delete(r[3].contents)
        out, lse = shim.take(r[0]), shim.take(r[1])
    finally:
        for h in hs:
            shim.delete(h)
    want, wlse, empty = reference(torch, q.transpose(1, 2), k.transpose(1, 2),
                                  v.transpose(1, 2), bias=bias, causal="br")
    assert bool(empty[..., :L - S].all()) and not bool(empty[..., L - S:].any())
    assert out.shape == (B, L, H, D) and out.is_contiguous()
    what = f"efficient forward float32 D={D} bottom-right"
    check_close(torch, out.transpose(1, 2), want, "float32", what)
    pad = (L + 31) // 32 * 32
    assert tuple(lse.shape) == (B, H, pad)
    check_lse(torch, lse[..., :L], wlse.float(), "float32", what)
    assert torch.isinf(lse[..., L:]).all() and (lse[..., L:] > 0).all()
