"""Benchmark cases of the fused attention ops against ATen through torch;
loaded by testing/gpu/bench_fallbacks.py (--only attention).

Target (issue 10): bfloat16, B=1, 8 heads, D=64, L=S=4096, causal: within
1.5x of torch's flash kernel (102.3 us on the H200 => <= 153 us). Also
non-causal, D=128, and the efficient op with a broadcast bias.

The "aotrun" column is the default kernel: for float16/bfloat16 the wide
tensor-core kernel (128 queries per block, 32 rows per warp, head dims
<= 128); each such case also times the older 64-query kernel (variant "tc
narrow", AOTRUN_ATTN_TC=narrow).

float32 (causal and not) times both float32 kernels the same way: "aotrun
us" on the default register-tiled kernel (64 queries x 64 keys per step,
4x4 scores per thread) and the variant "f32 simt" on the SIMT kernel
(AOTRUN_ATTN_F32=simt).
"""

import ctypes

FLASH = "aoti_torch_cuda__scaled_dot_product_flash_attention"
EFF = "aoti_torch_cuda__scaled_dot_product_efficient_attention"


def _op_flash(shim, q, k, v, causal):
    """A callable that runs the flash op and deletes its results."""
    hs = [shim.handle(t) for t in (q, k, v)]
    r = [shim.new_handle() for _ in range(7)]
    m4, m5 = ctypes.c_int64(), ctypes.c_int64()
    f = shim.fn(FLASH)
    args = (hs[0], hs[1], hs[2], 0.0, int(causal), 0, None, r[0], r[1], r[2],
            r[3], ctypes.byref(m4), ctypes.byref(m5), r[4], r[5], r[6])

    def run():
        if f(*args) != 0:
            raise RuntimeError(shim.last_error())
        for x in r:
            shim.delete(x.contents)
    run.keep = (q, k, v, hs, args)
    return run


def _op_eff(shim, q, k, v, bias, causal):
    hs = [shim.handle(t) for t in (q, k, v)]
    hb = shim.handle(bias) if bias is not None else None
    r = [shim.new_handle() for _ in range(4)]
    f = shim.fn(EFF)
    args = (hs[0], hs[1], hs[2], shim.opt(hb), 1, 0.0, int(causal), None,
            r[0], r[1], r[2], r[3])

    def run():
        if f(*args) != 0:
            raise RuntimeError(shim.last_error())
        for x in r:
            shim.delete(x.contents)
    run.keep = (q, k, v, bias, hs, hb, args)
    return run


def _aten_flash(torch, q, k, v, causal):
    return lambda: torch.ops.aten._scaled_dot_product_flash_attention(
        q, k, v, 0.0, causal, False)


def _aten_eff(torch, q, k, v, bias, causal):
    return lambda: torch.ops.aten._scaled_dot_product_efficient_attention(
        q, k, v, bias, True, 0.0, causal)


def _tc(case):
    """The case on the default (wide) tensor-core kernel, with the 64-query
    kernel as variant "tc narrow"."""
    case["env"] = {"AOTRUN_ATTN_TC": None}
    case["variants"] = [{"label": "tc narrow", "fn": case["aotrun"],
                         "env": {"AOTRUN_ATTN_TC": "narrow"}}]
    return case


def _f32(case):
    """The case on the default (tiled) float32 kernel, with the SIMT one as
    variant "f32 simt"."""
    case["env"] = {"AOTRUN_ATTN_F32": None}
    case["variants"] = [{"label": "f32 simt", "fn": case["aotrun"],
                         "env": {"AOTRUN_ATTN_F32": "simt"}}]
    return case


def cases(shim, torch):
    g = torch.Generator(device="cuda").manual_seed(0)

    def qkv(B, H, L, D, dt=torch.bfloat16):
        return [torch.randn(B, H, L, D, device="cuda", generator=g).to(dt)
                for _ in range(3)]

    def flops(B, H, L, S, D, causal):
        f = 4.0 * B * H * L * S * D
        return f / 2 if causal else f

    for D, causal, target in ((64, True, 153), (64, False, None),
                              (128, True, None), (128, False, None)):
        q, k, v = qkv(1, 8, 4096, D)
        tf = flops(1, 8, 4096, 4096, D, causal)
        yield _tc({"op": "sdpa flash", "case": f"bf16 1x8x4096x{D} "
                                               f"{'causal' if causal else 'full'}",
                   "aotrun": _op_flash(shim, q, k, v, causal),
                   "aten": _aten_flash(torch, q, k, v, causal),
                   "bytes": 4 * q.numel() * 2,
                   **({"target_us": target} if target else {}),
                   "note": f"{tf / 1e9:.1f} GFLOP; mma.sync m16n8k16, 64 "
                           "queries x 64 keys per step, cp.async double "
                           "buffering (wide: 128 queries, 32 rows per warp)"})
    q, k, v = qkv(4, 8, 1024, 64, torch.float16)
    yield _tc({"op": "sdpa flash", "case": "f16 4x8x1024x64 causal",
               "aotrun": _op_flash(shim, q, k, v, True),
               "aten": _aten_flash(torch, q, k, v, True),
               "bytes": 4 * q.numel() * 2})
    q, k, v = qkv(1, 8, 4096, 64)
    bias = torch.zeros(1, 1, 4096, 4096, device="cuda", dtype=torch.bfloat16)
    bias[..., 3000:] = float("-inf")
    bias = bias.expand(1, 8, 4096, 4096)
    yield _tc({"op": "sdpa efficient", "case": "bf16 1x8x4096x64 bias [1,1,L,S]",
               "aotrun": _op_eff(shim, q, k, v, bias, False),
               "aten": _aten_eff(torch, q, k, v, bias, False),
               "bytes": 4 * q.numel() * 2 + bias[0, 0].numel() * 2,
               "note": "additive bias read per score (stride 0 over heads; "
                       "wide: bias tiles staged in shared memory)"})
    q, k, v = qkv(1, 8, 2048, 64, torch.float32)
    for causal in (True, False):
        yield _f32({"op": "sdpa efficient",
                    "case": f"f32 1x8x2048x64 {'causal' if causal else 'full'}",
                    "aotrun": _op_eff(shim, q, k, v, None, causal),
                    "aten": _aten_eff(torch, q, k, v, None, causal),
                    "bytes": 4 * q.numel() * 4,
                    "note": f"{flops(1, 8, 2048, 2048, 64, causal) / 1e9:.1f} "
                            "GFLOP; float math: default SIMT (32x32 tiles, a "
                            "lane per key); tiled: 64x64, 4x4 per thread"})
