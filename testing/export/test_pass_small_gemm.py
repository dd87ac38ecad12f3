"""The small_gemm pass (passes/small_gemm.py): small matrix products,
static or bounded dynamic, become a float32 multiply + sum; the rest stay
GEMMs.

Checked to fail without the pass: with small_gemms_to_reductions replaced
by a no-op, 11 of the 13 tests fail (op lists, summaries); the two
negative cases (large, float64 and int products; an unbounded dynamic
batch) pass either way by design, and the bounded-dynamic ones also fail
with the sizes judged as static only. The values match either way: the
pass changes how, not what."""

import pytest

from pass_helpers import export, op_names

GEMMS = ("aten.mm.default", "aten.addmm.default", "aten.bmm.default",
         "aten.linear.default", "aten.matmul.default")


def _gemms(ep):
    return [n for n in op_names(ep) if n in GEMMS]


def _rewrite(torch, module, args, dynamic_shapes=None):
    from aotrun_export.passes.small_gemm import small_gemms_to_reductions
    ep = export(torch, module, args, dynamic_shapes)
    before = _gemms(ep)
    summary = small_gemms_to_reductions(ep)
    ep.validate()
    return ep, before, summary


def _close(torch, eager, program, args, tol):
    e, p = eager(*args), program(*args)
    e = e if isinstance(e, (tuple, list)) else (e,)
    p = p if isinstance(p, (tuple, list)) else (p,)
    assert len(e) == len(p)
    for x, y in zip(e, p):
        assert x.dtype == y.dtype and x.shape == y.shape
        torch.testing.assert_close(y.float(), x.float(), rtol=tol, atol=tol)


def _mlp(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(),
                               torch.nn.Linear(128, 16)).eval()


def test_small_mlp_has_no_gemm_left_and_matches(torch):
    m = _mlp(torch)
    x = torch.randn(4, 64)
    ep, before, summary = _rewrite(torch, m, (x,))
    assert before == ["aten.linear.default"] * 2
    assert _gemms(ep) == []
    assert "aten.sum.dim_IntList" in op_names(ep)
    assert summary.startswith("2 linear with M or N <= 16")
    _close(torch, m, ep.module(), (x,), 1e-5)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_types_sum_in_float32_and_cast_back(torch, dtype):
    dt = getattr(torch, dtype)
    m = _mlp(torch).to(dt)
    x = torch.randn(2, 64).to(dt)
    ep, _, summary = _rewrite(torch, m, (x,))
    assert summary and _gemms(ep) == []
    names = op_names(ep)
    assert names.count("aten._to_copy.default") >= 4  # operands up, result down
    out = ep.module()(x)
    assert out.dtype == dt
    # Against a float32 reference: the float32 sum is at least as close as
    # eager's own half-precision result.
    ref = _mlp(torch)(x.float())
    err_pass = (out.float() - ref).abs().max().item()
    err_eager = (m(x).float() - ref).abs().max().item()
    assert err_pass <= err_eager * 1.5 + 1e-3


def test_decode_step_gemv_and_addmm_beta_alpha(torch):
    class Step(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(512, 1536))
            self.c = torch.nn.Parameter(torch.randn(1536))

        def forward(self, x, y):
            a = torch.addmm(self.c, x, self.w, beta=0.5, alpha=2.0)
            b = torch.addmm(self.c, x, self.w, beta=0.0)   # bias ignored
            return a, b, torch.mm(y, x.t())                # N = 1

    s = Step().eval()
    x, y = torch.randn(1, 512), torch.randn(8, 512)
    ep, before, summary = _rewrite(torch, s, (x, y))
    assert sorted(before) == ["aten.addmm.default", "aten.addmm.default",
                              "aten.mm.default"]
    assert _gemms(ep) == []
    assert "2 addmm" in summary and "1 mm" in summary
    _close(torch, s, ep.module(), (x, y), 1e-4)
    # beta 0 with a NaN bias: ATen ignores it, so does the rewrite.
    s.c.data[0] = float("nan")
    out = ep.module()(x, y)[1]
    assert not torch.isnan(out).any()


def test_batched_small_bmm(torch):
    class B(torch.nn.Module):
        def forward(self, q, k):
            return torch.bmm(q, k)

    q, k = torch.randn(8, 1, 64), torch.randn(8, 64, 128)
    ep, before, summary = _rewrite(torch, B(), (q, k))
    assert before == ["aten.bmm.default"] and _gemms(ep) == []
    assert summary.startswith("1 bmm")
    _close(torch, B(), ep.module(), (q, k), 1e-5)


def test_large_dynamic_float64_and_int_products_stay_gemms(torch):
    class Four(torch.nn.Module):
        def forward(self, big_a, big_b, d_a, d_b, i_a, i_b):
            return (big_a @ big_b, d_a @ d_b, i_a @ i_b)

    args = (torch.randn(128, 512), torch.randn(512, 1536),   # M, N > 16
            torch.randn(4, 8, dtype=torch.float64),
            torch.randn(8, 4, dtype=torch.float64),
            torch.randint(0, 5, (4, 8)), torch.randint(0, 5, (8, 4)))
    ep, before, summary = _rewrite(torch, Four(), args)
    assert summary is None
    assert _gemms(ep) == before and len(before) == 3


def test_unbounded_dynamic_rows_stay_gemm(torch):
    # A batch without max=: no size bound, so no product is known small.
    m = _mlp(torch)
    batch = torch.export.Dim("batch", min=1)
    ep, before, summary = _rewrite(torch, m, (torch.randn(4, 64),),
                                   dynamic_shapes=({0: batch},))
    assert summary is None and _gemms(ep) == before


def test_bounded_dynamic_rows_judged_at_their_upper_bound(torch):
    # batch in [1, 64]: the second linear (N = 16, 64 * 16 * 128 MACs at
    # most) is small at every batch; the first (N = 128, M up to 64) is not.
    m = _mlp(torch)
    batch = torch.export.Dim("batch", min=1, max=64)
    ep, before, summary = _rewrite(torch, m, (torch.randn(4, 64),),
                                   dynamic_shapes=({0: batch},))
    assert before == ["aten.linear.default"] * 2
    assert _gemms(ep) == ["aten.linear.default"]
    assert summary.startswith("1 linear with M or N <= 16")
    for rows in (1, 7, 64):   # one program, every batch it accepts
        _close(torch, m, ep.module(), (torch.randn(rows, 64),), 1e-5)


def test_bounded_dynamic_products_too_large_at_the_bound_stay(torch):
    # M and N both dynamic up to 32: skinny at small sizes, not at the bound.
    class MM(torch.nn.Module):
        def forward(self, a, b):
            return a @ b

    m_dim = torch.export.Dim("m", min=2, max=32)
    n_dim = torch.export.Dim("n", min=2, max=32)
    args = (torch.randn(4, 8), torch.randn(8, 4))
    ep, before, summary = _rewrite(torch, MM(), args,
                                   dynamic_shapes=({0: m_dim}, {1: n_dim}))
    assert summary is None and _gemms(ep) == before
    n_dim = torch.export.Dim("n", min=2, max=16)
    ep, _, summary = _rewrite(torch, MM(), args,
                              dynamic_shapes=({0: m_dim}, {1: n_dim}))
    assert summary is not None and _gemms(ep) == []
    for m, n in ((2, 16), (32, 3)):
        a, b = torch.randn(m, 8), torch.randn(8, n)
        _close(torch, MM(), ep.module(), (a, b), 1e-5)


def test_too_many_multiply_adds_stays_gemm(torch):
    from aotrun_export.passes import small_gemm
    k = small_gemm.MAX_MACS // (16 * 16) + 1    # M = N = 16: one over
    a, b = torch.randn(16, k), torch.randn(k, 16)

    class MM(torch.nn.Module):
        def forward(self, a, b):
            return a @ b

    _, _, summary = _rewrite(torch, MM(), (a, b))
    assert summary is None
    _, _, summary = _rewrite(torch, MM(), (a[:, :k - 1], b[:k - 1]))
    assert summary is not None


def test_run_passes_runs_it_only_when_enabled(torch):
    from aotrun_export.passes import run_passes
    m = _mlp(torch)
    x = torch.randn(4, 64)
    ep = torch.export.export(m, (x,))
    _, notes = run_passes(ep)
    assert not any("small_gemm" in n for n in notes)
    ep = torch.export.export(m, (x,))
    ep, notes = run_passes(ep, enable=("small_gemm",))
    assert any(n.startswith("pass small_gemm: 2 linear") for n in notes)
    with pytest.raises(ValueError, match="unknown opt-in passes"):
        run_passes(torch.export.export(m, (x,)), enable=("small_gem",))


def test_linear_on_a_token_and_matmul_of_3d(torch):
    class Tok(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(512, 1536)
            self.out = torch.nn.Linear(1536, 512, bias=False)

        def forward(self, x, q, k):
            return self.out(torch.relu(self.qkv(x))), q @ k

    torch.manual_seed(0)
    m = Tok().eval()
    args = (torch.randn(1, 1, 512), torch.randn(8, 1, 64),
            torch.randn(8, 64, 129))
    ep, before, summary = _rewrite(torch, m, args)
    assert sorted(before) == ["aten.linear.default"] * 2 + \
        ["aten.matmul.default"]
    assert _gemms(ep) == []
    assert summary.startswith("2 linear, 1 bmm")
    _close(torch, m, ep.module(), args, 1e-4)


def test_inside_cond_branches(torch):
    class Branches(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(8, 4)
            self.b = torch.nn.Linear(8, 4)

        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda x: self.a(x),
                              lambda x: self.b(x).relu(), (x,))

    torch.manual_seed(0)
    m = Branches().eval()
    x = torch.randn(2, 8)
    ep, before, summary = _rewrite(torch, m, (x,))
    assert before == ["aten.linear.default"] * 2    # one in each branch
    assert _gemms(ep) == [] and summary.startswith("2 linear")
    for sign in (1, -1):
        _close(torch, m, ep.module(), (sign * x.abs(),), 1e-5)
