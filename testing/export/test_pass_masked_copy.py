"""The masked_copy pass (passes/masked_copy.py): `out[mask] = src[mask]`
becomes `torch.where(mask, src, out)`, bit for bit, in every graph; the
index and its count checks go when each check holds for any mask.

Checked to fail without the pass: with masked_copy_to_where replaced by a
no-op, 11 of the 14 tests fail (no aten.index.Tensor / aten.index_put left,
the summary); the outputs still match (the pass changes how, not what).
The other three are negative cases (different masks, accumulate) and the
work-list comparison itself (it fails for a recursive comparison)."""

import pytest

from pass_helpers import assert_same_outputs, export, op_names

INDEX_OPS = ("aten.index.Tensor", "aten.index_put.default",
             "aten.index_put_.default")


def _five(torch):
    class FiveCopies(torch.nn.Module):
        def forward(self, out, src, x):
            out = out.clone()
            for i in range(5):
                out[x > i * 0.25] = src[x > i * 0.25] * 1.0 if i == 4 \
                    else src[x > i * 0.25]
            return out
    return FiveCopies()


def _five_plain(torch):
    class FiveCopies(torch.nn.Module):
        def forward(self, out, src, x):
            out = out.clone()
            for i in range(5):
                mask = x > i * 0.25
                out[mask] = (src + i)[mask]
            return out
    return FiveCopies()


def _inputs(torch, rows=4, cols=5):
    out, src, x = torch.randn(rows, cols), torch.randn(rows, cols), \
        torch.randn(rows, cols)
    out[0, 0], src[1, 1] = float("nan"), float("-0.0")
    return out, src, x


def _rewrite(torch, module, args, dynamic_shapes=None):
    from aotrun_export.passes.masked_copy import masked_copy_to_where
    ep = export(torch, module, args, dynamic_shapes)
    assert "aten.index_put.default" in op_names(ep)
    summary = masked_copy_to_where(ep)
    ep.validate()
    return ep, summary


def test_five_masked_copies_leave_no_index_and_no_count(torch):
    m = _five_plain(torch)
    args = _inputs(torch)
    ep, summary = _rewrite(torch, m, args)
    assert summary.startswith("masked copy: 5 out[mask] = src[mask]")
    assert "5 mask index(es) and their count checks removed" in summary
    names = op_names(ep)
    assert not set(names) & set(INDEX_OPS)
    assert names.count("aten.where.self") == 5
    # no host checks on a count and no unbacked symbols left
    assert "aten._assert_scalar.default" not in names
    assert not [k for k in ep.range_constraints if str(k).startswith("u")]
    for _ in range(3):
        assert_same_outputs(torch, m, ep.module(), *_inputs(torch))


def test_values_computed_from_a_different_tensor_are_not_rewritten(torch):
    """src[mask] * 1.0 is not a pick from a tensor shaped like out."""
    m = _five(torch)
    ep, summary = _rewrite(torch, m, _inputs(torch))
    assert "4 out[mask] = src[mask]" in summary
    assert op_names(ep).count("aten.index_put.default") == 1
    assert_same_outputs(torch, m, ep.module(), *_inputs(torch))


@pytest.mark.parametrize("bounded", [True, False],
                         ids=["bounded_dim", "unbounded_dim"])
def test_dynamic_mask_dims(torch, bounded):
    m = _five_plain(torch)
    d = torch.export.Dim("rows", min=2, max=64) if bounded else \
        torch.export.Dim("rows")
    ep, summary = _rewrite(torch, m, _inputs(torch),
                           dynamic_shapes=({0: d}, {0: d}, {0: d}))
    assert "5 mask index(es) and their count checks removed" in summary
    assert not set(op_names(ep)) & set(INDEX_OPS)
    for rows in (2, 7, 64):
        assert_same_outputs(torch, m, ep.module(), *_inputs(torch, rows))


def test_inside_cond_branch(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x, flag):
            def copy(out, src, x):
                out = out.clone()
                mask = x > 0
                out[mask] = src[mask]
                return out
            return torch.cond(flag, copy, lambda o, s, x: o * 2,
                              (out, src, x))
    m = M()
    args = _inputs(torch) + (torch.tensor(True),)
    ep, summary = _rewrite(torch, m, args)
    assert summary and "1 mask index(es)" in summary
    branch = [n.target for n in ep.graph_module.true_graph_0.graph.nodes]
    assert torch.ops.aten.where.self in branch
    assert not set(op_names(ep)) & set(INDEX_OPS)
    for f in (True, False):
        assert_same_outputs(torch, m, ep.module(),
                            *(_inputs(torch) + (torch.tensor(f),)))


def test_user_check_on_the_count_keeps_the_index(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x):
            mask = x > 0
            picked = src[mask]
            torch._check(picked.shape[0] >= 1)
            out = out.clone()
            out[mask] = picked
            return out
    m = M()
    ep, summary = _rewrite(torch, m, _inputs(torch))
    assert "1 index(es) kept" in summary
    names = op_names(ep)
    assert "aten.index.Tensor" in names and "aten.index_put.default" \
        not in names
    checks = [n for n in ep.graph.nodes if n.op == "call_function" and
              n.target == torch.ops.aten._assert_scalar.default]
    assert any(">= 1" in str(n.args[1]) for n in checks)
    assert_same_outputs(torch, m, ep.module(), *_inputs(torch))
    x = -torch.ones(4, 5)       # an empty mask still fails the user check
    with pytest.raises(Exception):
        ep.module()(torch.zeros(4, 5), torch.zeros(4, 5), x)


def test_count_tied_to_another_size_keeps_the_index(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x, y):
            mask = x > 0
            picked = src[mask]
            torch._check(picked.shape[0] == y.shape[0])
            out = out.clone()
            out[mask] = picked
            return out, y * 2
    m = M()
    x = torch.randn(4, 5)
    args = (torch.randn(4, 5), torch.randn(4, 5), x,
            torch.randn(int((x > 0).sum())))
    ep, summary = _rewrite(torch, m, args)
    assert "1 index(es) kept" in summary
    assert "aten.index.Tensor" in op_names(ep)


def test_other_readers_of_the_picks_keep_the_index(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x):
            mask = x > 0
            picked = src[mask]
            out = out.clone()
            out[mask] = picked
            return out, picked.sum()
    m = M()
    ep, summary = _rewrite(torch, m, _inputs(torch))
    assert "aten.index.Tensor" in op_names(ep)
    assert "aten.index_put.default" not in op_names(ep)
    assert_same_outputs(torch, m, ep.module(), *_inputs(torch))


def test_leading_dims_mask_selects_rows(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x):
            out = out.clone()
            rows = x.sum(1) > 0
            out[rows] = src[rows]
            return out
    m = M()
    ep, summary = _rewrite(torch, m, _inputs(torch))
    assert not set(op_names(ep)) & set(INDEX_OPS)
    assert "aten.unsqueeze.default" in op_names(ep)
    for _ in range(3):
        assert_same_outputs(torch, m, ep.module(), *_inputs(torch))


def test_copy_into_an_input_keeps_the_mutation(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x):
            out[x > 0] = src[x > 0]
            return out * 1
    m = M()
    ep, summary = _rewrite(torch, m, _inputs(torch))
    assert not set(op_names(ep)) & set(INDEX_OPS)
    a, b = _inputs(torch), None
    b = tuple(t.clone() for t in a)
    e, p = m(*a), ep.module()(*b)
    assert torch.equal(e.nan_to_num(7), p.nan_to_num(7))
    assert torch.equal(a[0].nan_to_num(7), b[0].nan_to_num(7)), \
        "the input is written as in eager mode"


def test_different_masks_are_not_merged(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x):
            out = out.clone()
            out[x > 0] = src[-x < 0]          # same values, other ops
            return out
    ep, summary = _rewrite(torch, M(), _inputs(torch))
    assert summary is None
    assert "aten.index_put.default" in op_names(ep)


def test_accumulate_is_not_rewritten(torch):
    class M(torch.nn.Module):
        def forward(self, out, src, x):
            mask = x > 0
            return out.index_put((mask,), src[mask], accumulate=True)
    ep, summary = _rewrite(torch, M(), _inputs(torch))
    assert summary is None


class _RecursionLimit:
    """Python's default limit while comparing (torch raises it to 2000
    in some processes): a recursive comparison of a 1200-op chain fails."""

    def __enter__(self):
        import sys
        self.old = sys.getrecursionlimit()
        sys.setrecursionlimit(1000)

    def __exit__(self, *exc):
        import sys
        sys.setrecursionlimit(self.old)


def test_same_value_structure_randomness_and_depth(torch):
    """Masks compare by structure with a work list: two 1200-op chains
    (deeper than Python's default recursion limit of 1000: a recursive
    comparison raises RecursionError) compare equal; random ops equal only
    themselves; a different chain is different."""
    from aotrun_export.passes.masked_copy import same_value

    class Deep(torch.nn.Module):
        def forward(self, x):
            def chain(t):
                for i in range(600):
                    t = t * 1.0001 + 0.001 if i % 2 else t.abs() - 0.5
                return t > 0
            noise = (torch.rand_like(x) > 0.5, torch.rand_like(x) > 0.5)
            return chain(x), chain(x), noise[0], noise[1], chain(x + 1)
    ep = export(torch, Deep(), (torch.randn(8),), functional=False)
    out = next(n for n in ep.graph.nodes if n.op == "output").args[0]
    assert len(ep.graph.nodes) > 3 * 1200
    with _RecursionLimit():
        assert same_value(out[0], out[1])
        assert not same_value(out[2], out[3])
        assert not same_value(out[0], out[4])


def test_deep_mask_end_to_end(torch):
    from aotrun_export.passes.masked_copy import masked_copy_to_where

    class DeepCopy(torch.nn.Module):
        def forward(self, out, src, x):
            def mask(t):
                for _ in range(1050):
                    t = t + 0.001
                return t > 0.5
            out = out.clone()
            out[mask(x)] = src[mask(x)]
            return out
    m = DeepCopy()
    ep = export(torch, m, _inputs(torch))
    with _RecursionLimit():
        summary = masked_copy_to_where(ep)
    assert summary and not set(op_names(ep)) & set(INDEX_OPS)
    assert_same_outputs(torch, m, ep.module(), *_inputs(torch))
