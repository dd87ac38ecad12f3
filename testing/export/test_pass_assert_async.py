"""Device asserts: torch.distributions with validate_args=True exports
(passes/distribution_checks.py) and the assert_async pass removes every
`aten._assert_async` and the math that only fed it, in every graph, keeping
host size checks (`_assert_scalar`).

Checked to fail without the pass / the tracing aid: with
remove_device_asserts replaced by a no-op 7 of the 10 tests fail: the
graphs keep their `_assert_async.msg` nodes, which torch 2.11 compiles
into device asserts (on the GPU autotuning then dies with "device-side
assert triggered", see testing/gpu/export_passes). Without
distribution_checks_as_asserts the export itself fails
(test_validate_args_needs_the_tracing_aid shows torch 2.11's
GuardOnDataDependentSymNode). The thread test checks the aid's own
patching; test_no_asserts_no_change is a negative case."""

import threading

import pytest

from pass_helpers import export, op_names

ASSERTS = ("aten._assert_async.msg", "aten._assert_async.default",
           "aten._functional_assert_async.msg")


def _head(torch, hidden, manual=False, actions=14):
    from torch.distributions import MultivariateNormal

    class GaussianPolicyHead(torch.nn.Module):
        """A policy head: mean, log-prob of a given action, entropy."""

        def __init__(self):
            super().__init__()
            torch.manual_seed(hidden)
            self.body = torch.nn.Linear(hidden, hidden)
            self.mu = torch.nn.Linear(hidden, actions)
            self.tril = torch.nn.Parameter(torch.randn(actions, actions) / 10)
            self.log_diag = torch.nn.Parameter(torch.randn(actions) / 10)

        def forward(self, x, action):
            mean = self.mu(torch.tanh(self.body(x)))
            scale = torch.tril(self.tril, -1) + torch.diag_embed(
                self.log_diag.exp())
            scale = scale.expand(mean.shape[0], -1, -1)
            if manual:
                torch._assert_async(
                    (scale.diagonal(dim1=-2, dim2=-1) > 0).all(),
                    "scale_tril needs a positive diagonal")
            d = MultivariateNormal(mean, scale_tril=scale,
                                   validate_args=not manual)
            return mean, d.log_prob(action), d.entropy()
    return GaussianPolicyHead()


def test_validate_args_needs_the_tracing_aid(torch):
    """torch 2.11 alone cannot export it (a data-dependent guard in the
    constraint check), also with deferred runtime asserts."""
    from torch.fx.experimental.symbolic_shapes import \
        GuardOnDataDependentSymNode
    m = _head(torch, 16)
    args = (torch.randn(4, 16), torch.randn(4, 14))
    with pytest.raises(GuardOnDataDependentSymNode):
        torch.export.export(m, args)
    with pytest.raises(GuardOnDataDependentSymNode):
        torch.export.export(m, args,
                            prefer_deferred_runtime_asserts_over_guards=True)


@pytest.mark.parametrize("hidden", [16, 64, 256])
@pytest.mark.parametrize("manual", [False, True],
                         ids=["validate_args", "manual_assert"])
def test_policy_head_exports_without_device_asserts(torch, hidden, manual):
    from aotrun_export.passes import run_passes
    m = _head(torch, hidden, manual)
    args = (torch.randn(4, hidden), torch.randn(4, 14))
    ep = export(torch, m, args, functional=False)
    expected = 1 if manual else 3   # loc, scale_tril, the log_prob value
    assert sum(n in ASSERTS for n in op_names(ep)) == expected
    ep, notes = run_passes(ep)
    assert not set(op_names(ep)) & set(ASSERTS)
    assert any(f"removed {expected} device assert" in n for n in notes)
    # No triangular solve left for the proxy executor (MultivariateNormal.
    # log_prob solves with scale_tril): decomposed.
    assert "aten.linalg_solve_triangular.default" not in op_names(ep)
    for _ in range(3):
        a = (torch.randn(4, hidden), torch.randn(4, 14))
        (em, elp, eh), (pm, plp, ph) = m(*a), ep.module()(*a)
        assert torch.equal(em, pm) and torch.equal(eh, ph)
        torch.testing.assert_close(plp, elp, rtol=1e-5, atol=1e-4)


def test_asserts_in_cond_branches_removed_scalar_checks_kept(torch):
    from aotrun_export.passes.assert_async import remove_device_asserts

    class M(torch.nn.Module):
        def forward(self, x, flag):
            def checked(x):
                torch._assert_async((x > -100).all(), "x too small")
                return x.sin() + 1
            torch._check(x.shape[0] <= 64)
            y = torch.cond(flag, checked, lambda x: x.cos(), (x,))
            n = (y > 1).sum().item()
            torch._check(n >= 0)
            return y * n
    m = M()
    b = torch.export.Dim("b", max=64)
    args = (torch.randn(8), torch.tensor(True))
    ep = export(torch, m, args, dynamic_shapes=({0: b}, None))
    scalar_checks = op_names(ep).count("aten._assert_scalar.default")
    assert "aten._assert_async.msg" in op_names(ep)
    summary = remove_device_asserts(ep)
    assert summary and "removed 1 device assert" in summary
    assert not set(op_names(ep)) & set(ASSERTS)
    assert op_names(ep).count("aten._assert_scalar.default") == scalar_checks
    branch = ep.graph_module.true_graph_0.graph
    assert not [n for n in branch.nodes if n.op == "call_function" and
                "all" in str(n.target)], "the math feeding it is gone too"
    ep.validate()
    for f in (True, False):
        a = (torch.randn(5), torch.tensor(f))
        torch.testing.assert_close(ep.module()(*a), m(*a), rtol=0, atol=0)


def test_no_asserts_no_change(torch):
    from aotrun_export.passes.assert_async import remove_device_asserts

    class M(torch.nn.Module):
        def forward(self, x):
            return x * 2
    ep = export(torch, M(), (torch.randn(3),))
    assert remove_device_asserts(ep) is None


def test_tracing_aid_nests_across_threads_and_restores(torch):
    import torch.distributions.distribution as dist_module
    from aotrun_export.passes.distribution_checks import \
        distribution_checks_as_asserts
    original = dist_module.torch
    inside = threading.Barrier(2)
    leave_first = threading.Event()
    seen = []

    def worker(first):
        with distribution_checks_as_asserts():
            inside.wait()
            if not first:
                leave_first.wait()
                # the other thread has left: still patched for this one
                seen.append(dist_module.torch is not original)
        if first:
            leave_first.set()
    threads = [threading.Thread(target=worker, args=(f,)) for f in (1, 0)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [True]
    assert dist_module.torch is original
    # Eager validation outside the context still raises ValueError.
    from torch.distributions import Normal
    with pytest.raises(ValueError):
        Normal(torch.zeros(2), -torch.ones(2), validate_args=True)
