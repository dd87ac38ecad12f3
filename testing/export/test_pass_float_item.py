"""The float_item pass (passes/float_item.py) on programs exported on the
CPU: float/bool .item() values feeding ATen ops become 0-d tensor math,
bit for bit equal to eager PyTorch.

Checked to fail without the pass: with float_item_to_tensor replaced by a
no-op (`lambda ep: None`) 6 of the 7 tests fail (the "no aten.item left"
and summary assertions); test_integer_item_is_left_alone is the negative
case and passes either way; the outputs still match on the CPU because torch
2.11's CPU kernels take the float argument as `float` (the int64 truncation
is in the GPU launcher: testing/gpu/export_passes/test_gpu_passes.py shows
it there)."""

import pytest

from pass_helpers import assert_same_outputs, bits_equal, export, op_names

VALUES = [1.5, -0.25, 1e-8, 0.1, 3.3, -7.0]


def _model(torch):
    class Scale(torch.nn.Module):
        """One float read, used by many kernels and ops of every kind the
        pass rewrites, in float32, float16, bfloat16 and integers."""

        def forward(self, x, s, c):
            v = s.item()
            return (x * v, x + v, v - x, x / v, torch.clamp(x, max=v),
                    torch.where(c, x, v), torch.full((3,), v),
                    x.masked_fill(c, v), x > v, x <= v,
                    x.half() * v, x.bfloat16() + v, x.half() > v,
                    torch.arange(4, dtype=torch.int32) * v,
                    torch.clamp(x.half(), min=v, max=v + 1),
                    (x * 2).relu() * v)
    return Scale()


def _args(torch, v, dtype):
    torch.manual_seed(0)
    x = torch.randn(4) * 3
    return x, torch.tensor(v, dtype=dtype), torch.tensor([True, False] * 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_item_becomes_tensor_math_bit_exact(torch, dtype):
    from aotrun_export.passes.float_item import float_item_to_tensor
    dt = getattr(torch, dtype)
    m = _model(torch)
    ep = export(torch, m, _args(torch, 1.5, dt))
    assert "aten.item.default" in op_names(ep)
    summary = float_item_to_tensor(ep)
    assert summary and "16 kernel use(s) of 1 value(s)" in summary
    ep.validate()
    names = op_names(ep)
    # The scalar is gone: no host read, no float symbol for a kernel.
    assert "aten.item.default" not in names
    assert "aten._local_scalar_dense.default" not in names
    for v in VALUES:   # one program, every value (an input, not a constant)
        assert_same_outputs(torch, m, ep.module(), *_args(torch, v, dt))


def test_host_arithmetic_bool_item_and_scalar_output(torch):
    from aotrun_export.passes.float_item import float_item_to_tensor

    class M(torch.nn.Module):
        def forward(self, x, s, h, b):
            v, w = s.item(), h.item()
            return (x * (v * v), x * (v * 2.0 + 1), x * -v, x * (w / 3),
                    x * (v > 0.5), x * b.item(), x + abs(v), v)
    m = M()
    args = (torch.randn(5), torch.tensor([0.3]),
            torch.tensor(0.7, dtype=torch.float16), torch.tensor(True))
    ep = export(torch, m, args)
    assert float_item_to_tensor(ep)
    ep.validate()
    # The returned scalar still needs its read; no kernel takes it.
    items = [n for n in ep.graph.nodes if n.op == "call_function" and
             "item" in str(n.target)]
    assert len(items) == 1 and all(u.op == "output" for u in items[0].users)
    for s in (0.3, -1.25, 1e-8):
        for b in (True, False):
            a = (args[0], torch.tensor([s]), args[2], torch.tensor(b))
            e, p = m(*a), ep.module()(*a)
            for x, y in zip(e[:-1], p[:-1]):
                assert bits_equal(torch, x, y)
            assert e[-1] == p[-1]


def test_inside_cond_branch(torch):
    from aotrun_export.passes.float_item import float_item_to_tensor

    class M(torch.nn.Module):
        def forward(self, x, s, flag):
            return torch.cond(flag, lambda x, s: x * s.item(),
                              lambda x, s: x - s.item(), (x, s))
    m = M()
    args = (torch.randn(4), torch.tensor(1.5), torch.tensor(True))
    ep = export(torch, m, args)
    assert float_item_to_tensor(ep)
    assert not [n for n in op_names(ep) if n.startswith("aten.item")]
    for f in (True, False):
        a = (args[0], torch.tensor(-0.25), torch.tensor(f))
        assert_same_outputs(torch, m, ep.module(), *a)


def test_integer_item_is_left_alone(torch):
    """The suite's `item` case: an int64 .item() is passed right."""
    from aotrun_export.passes.float_item import float_item_to_tensor

    class M(torch.nn.Module):
        def forward(self, x):
            return x * (x > 0).sum().item()
    ep = export(torch, M(), (torch.randn(5),))
    before = op_names(ep)
    assert float_item_to_tensor(ep) is None
    assert op_names(ep) == before


def test_unsupported_use_is_an_error_naming_the_node(torch):
    from aotrun_export.passes.float_item import float_item_to_tensor
    from aotrun_export.passes.graph_utils import PassError

    class M(torch.nn.Module):
        def forward(self, x, s):
            return torch.remainder(x, s.item())
    ep = export(torch, M(), (torch.randn(4), torch.tensor(2.5)))
    with pytest.raises(PassError) as e:
        float_item_to_tensor(ep)
    msg = str(e.value)
    assert "node 'remainder'" in msg and "aten.remainder" in msg
    assert "int64" in msg


def test_cond_predicate_from_a_float_item_stays_on_the_host(torch):
    """A torch.cond on `s.item() > 0` reads the value on the host (no
    kernel takes it): allowed; the branches' uses are rewritten."""
    from aotrun_export.passes.float_item import float_item_to_tensor

    class M(torch.nn.Module):
        def forward(self, x, s):
            v = s.item()
            return torch.cond(v > 0, lambda x: x * 2, lambda x: x - 1,
                              (x,)) * v
    m = M()
    args = (torch.randn(4), torch.tensor(0.5))
    ep = export(torch, m, args)
    assert float_item_to_tensor(ep)
    for v in (0.5, -1.5):
        a = (args[0], torch.tensor(v))
        assert_same_outputs(torch, m, ep.module(), *a)

