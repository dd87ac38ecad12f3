"""The decompositions pass (passes/decompositions.py, varlen_attention.py,
triangular_solve.py) on programs exported on the CPU.

Checked to fail without the pass: with decomposition_table() returning {}
14 of the 16 tests fail: the ops stay in the graph and ep.module() cannot
run varlen attention on the CPU at all (torch 2.11 has only a CUDA Flash
kernel for it). The other two call the decomposition functions directly
(refusals) or are the negative case (a dynamic size is kept)."""

import math

import pytest

from pass_helpers import bits_equal, op_names


def _decompose(torch, module, args, dynamic_shapes=None):
    from aotrun_export.passes.decompositions import \
        functionalize_and_decompose
    ep = torch.export.export(module, args, dynamic_shapes=dynamic_shapes)
    return functionalize_and_decompose(ep)


# ------------------------------------------------------------ _reshape_copy

def test_reshape_copy_is_contiguous_copy_then_view(torch):
    class M(torch.nn.Module):
        def forward(self, x):
            y = torch.ops.aten._reshape_copy(x.transpose(0, 1), [-1, 2])
            z = torch.ops.aten._reshape_copy(x, [4, 3])
            return y * 2, z
    m = M()
    x = torch.randn(3, 4)
    ep, summary = _decompose(torch, m, (x,))
    assert summary == "decomposed 2 aten._reshape_copy.default"
    names = op_names(ep)
    assert "aten._reshape_copy.default" not in names
    assert "aten.clone.default" in names and "aten.view.default" in names
    x = torch.randn(3, 4)
    for e, p in zip(m(x), ep.module()(x)):
        assert bits_equal(torch, e, p) and p.is_contiguous()
    assert ep.module()(x)[1].data_ptr() != x.data_ptr()   # a copy


# ------------------------------------------------------------ varlen

def reference(torch, q, k, v, cu_q, cu_k, left=-1, right=-1, scale=None):
    """Per sequence, per query, per head in float64; FA2's bottom-right
    aligned windows; a query with no key gets zeros."""
    tq, h, d = q.shape
    g = h // k.shape[1]
    scale = scale if scale is not None else 1 / math.sqrt(d)
    out = torch.zeros(tq, h, v.shape[2], dtype=torch.float64)
    for b in range(len(cu_q) - 1):
        q0, q1, k0, k1 = (int(cu_q[b]), int(cu_q[b + 1]), int(cu_k[b]),
                          int(cu_k[b + 1]))
        lq, lk = q1 - q0, k1 - k0
        for i in range(lq):
            lo = i + lk - lq - left if left >= 0 else 0
            hi = i + lk - lq + right if right >= 0 else lk - 1
            keys = [j for j in range(lk) if lo <= j <= hi]
            if not keys:
                continue
            for hh in range(h):
                qi = q[q0 + i, hh].double()
                ks = torch.stack([k[k0 + j, hh // g].double() for j in keys])
                vs = torch.stack([v[k0 + j, hh // g].double() for j in keys])
                p = torch.softmax(ks @ qi * scale, 0)
                out[q0 + i, hh] = p @ vs
    return out


def _varlen_module(torch, max_q, max_k, window=(-1, -1), lse=False):
    from torch.nn.attention.varlen import AuxRequest, varlen_attn

    class Packed(torch.nn.Module):
        def forward(self, q, k, v, cu_q, cu_k):
            return varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k,
                               window_size=window,
                               return_aux=AuxRequest(lse=True) if lse
                               else None)
    return Packed()


def _packed(torch, lens_q, lens_k, heads=4, kv_heads=2, dim=8, pad=2,
            dtype=None):
    """Packed q/k/v with `pad` NaN tokens after the last sequence."""
    torch.manual_seed(len(lens_q) * 7 + sum(lens_k))
    tq, tk = sum(lens_q) + pad, sum(lens_k) + pad
    q = torch.randn(tq, heads, dim)
    k = torch.randn(tk, kv_heads, dim)
    v = torch.randn(tk, kv_heads, dim)
    for t in (q, k, v):
        t[t.shape[0] - pad:] = float("nan")
    cu_q = torch.tensor([0] + list(itertools_accumulate(lens_q)),
                        dtype=torch.int32)
    cu_k = torch.tensor([0] + list(itertools_accumulate(lens_k)),
                        dtype=torch.int32)
    return q, k, v, cu_q, cu_k


def itertools_accumulate(xs):
    import itertools
    return itertools.accumulate(xs)


CASES = {
    "full": ((-1, -1), [3, 5, 2], [4, 6, 2]),
    "causal": ((-1, 0), [3, 5, 2], [4, 6, 2]),
    "sliding_causal": ((2, 0), [3, 5, 4], [3, 7, 4]),
    "window_both_sides": ((1, 2), [4, 5], [6, 5]),
    "more_queries_than_keys": ((-1, 0), [5, 2], [3, 2]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_varlen_attention_matches_the_reference(torch, name):
    window, lens_q, lens_k = CASES[name]
    max_q, max_k = max(lens_q), max(lens_k)
    m = _varlen_module(torch, max_q, max_k, window)
    args = _packed(torch, lens_q, lens_k)
    ep, summary = _decompose(torch, m, args)
    assert summary == "decomposed 1 torch_attn._varlen_attn.default"
    assert not [n for n in op_names(ep) if "varlen" in n or "flash" in n]
    out = ep.module()(*args)
    assert out.shape == args[0].shape and out.is_contiguous()
    assert out.dtype == args[0].dtype
    ref = reference(torch, *args, left=window[0], right=window[1])
    n = int(args[3][-1])
    torch.testing.assert_close(out[:n].double(), ref[:n], rtol=1e-5,
                               atol=1e-5)
    # NaN padding tokens change nothing; padding queries give zeros.
    assert torch.isfinite(out[:n]).all()
    assert (out[n:] == 0).all()


def test_padding_values_do_not_leak(torch):
    m = _varlen_module(torch, 5, 6, (-1, 0))
    q, k, v, cu_q, cu_k = _packed(torch, [3, 5], [4, 6], pad=3)
    ep, _ = _decompose(torch, m, (q, k, v, cu_q, cu_k))
    a = ep.module()(q, k, v, cu_q, cu_k)
    for t in (q, k, v):
        t[-3:] = torch.tensor(float("inf"))
    b = ep.module()(q, k, v, cu_q, cu_k)
    assert torch.equal(a, b)


def test_lse_output(torch):
    m = _varlen_module(torch, 5, 6, (-1, -1), lse=True)
    args = _packed(torch, [3, 5], [4, 6], heads=2, kv_heads=2, pad=0)
    ep, _ = _decompose(torch, m, args)
    out, lse = ep.module()(*args)
    q, k, v, cu_q, cu_k = args
    assert lse.shape == (2, q.shape[0]) and lse.dtype == torch.float32
    # sequence 0, query 0, head 0 over its 4 keys
    s = (k[0:4, 0] @ q[0, 0]) / math.sqrt(q.shape[2])
    torch.testing.assert_close(lse[0, 0], torch.logsumexp(s, 0))


def test_right_window_beyond_max_k_is_refused_unless_safe(torch):
    from aotrun_export.passes.graph_utils import PassError
    args = _packed(torch, [6, 2], [3, 2], pad=0)
    m = _varlen_module(torch, 6, 3, (-1, 4))
    with pytest.raises(PassError) as e:
        _decompose(torch, m, args)
    assert "right=4 with max_k=3, max_q=6" in str(e.value)
    # max_q <= max_k + 1: every version agrees, decomposed
    args = _packed(torch, [4, 2], [3, 2], pad=0)
    ep, summary = _decompose(torch, _varlen_module(torch, 4, 3, (-1, 4)),
                             args)
    assert summary
    ref = reference(torch, *args, left=-1, right=4)
    torch.testing.assert_close(ep.module()(*args).double(), ref,
                               rtol=1e-5, atol=1e-5)


def test_flash_varlen_seqused_k_and_paged_kv_are_refused(torch):
    from aotrun_export.passes.graph_utils import PassError
    from aotrun_export.passes.varlen_attention import (
        decompose_flash_attention_forward, varlen_attention)
    q, k, v, cu_q, cu_k = _packed(torch, [3, 5], [4, 6], pad=0)
    with pytest.raises(PassError, match="seqused_k is not supported"):
        decompose_flash_attention_forward(
            q, k, v, cu_q, cu_k, 5, 6, 0.0, False, False,
            seqused_k=torch.tensor([4, 6], dtype=torch.int32))
    with pytest.raises(PassError, match="paged KV"):
        varlen_attention(q, k.view(2, 5, 2, 8), v.view(2, 5, 2, 8), cu_q,
                         cu_k, 5, 6)
    # The varlen mode of the aten op decomposes like varlen_attn does.
    out = decompose_flash_attention_forward(q, k, v, cu_q, cu_k, 5, 6, 0.0,
                                            True, False)[0]
    ref = reference(torch, q, k, v, cu_q, cu_k, right=0)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-5)
    # Its dense 4-D mode is not ours.
    assert decompose_flash_attention_forward(
        q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0), None, None, 10, 10,
        0.0, False, False) is NotImplemented


def test_varlen_in_half_precision(torch):
    m = _varlen_module(torch, 5, 6, (-1, 0))
    args = list(_packed(torch, [3, 5], [4, 6], pad=1))
    ref = reference(torch, *args, right=0)
    args[:3] = [t.to(torch.bfloat16) for t in args[:3]]
    ep, _ = _decompose(torch, m, tuple(args))
    out = ep.module()(*args)
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out[:8].double(), ref[:8], rtol=0.05,
                               atol=0.05)


# ------------------------------------------------------------ solve_triangular

@pytest.mark.parametrize("upper,left,unit", [(False, True, False),
                                              (True, True, False),
                                              (False, False, False),
                                              (True, True, True)])
def test_solve_triangular_decomposition(torch, upper, left, unit):
    class M(torch.nn.Module):
        def forward(self, a, b):
            return torch.linalg.solve_triangular(
                a, b, upper=upper, left=left, unitriangular=unit)
    torch.manual_seed(3)
    a = torch.randn(2, 14, 14) + 4 * torch.eye(14)
    a = a.triu() if upper else a.tril()
    b = torch.randn(2, 14, 5) if left else torch.randn(2, 5, 14)
    m = M()
    ep, summary = _decompose(torch, m, (a, b))
    assert summary == "decomposed 1 aten.linalg_solve_triangular.default"
    torch.testing.assert_close(ep.module()(a, b), m(a, b), rtol=1e-5,
                               atol=1e-5)


def test_solve_triangular_with_a_dynamic_size_is_kept(torch):
    class M(torch.nn.Module):
        def forward(self, a, b):
            return torch.linalg.solve_triangular(a, b, upper=False)
    n = torch.export.Dim("n", min=2, max=32)
    ep, summary = _decompose(torch, M(), (torch.eye(5), torch.randn(5, 2)),
                             dynamic_shapes=({0: n, 1: n}, {0: n}))
    assert summary is None
    assert "aten.linalg_solve_triangular.default" in op_names(ep)
