"""Written buffers (passes/written_buffers.py): a program that writes a
buffer compiles with joint-graph constant folding off, and only such a
program.

Checked to fail without the decision: test_counter_folding_on_cpu compiles
the counter twice with torch's own AOTInductor runner; with folding on
(the default, i.e. without this decision) calls 2 and 3 return x + 1
instead of x + 2 and x + 3, which the test asserts to show the bug is real
on the CPU too; the decision's options give eager's values."""

import pytest


def _counter(torch):
    class Counter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)
            self.register_buffer("n", torch.zeros(1))

        def forward(self, x):
            self.n.add_(1)
            return self.lin(x) + self.n
    torch.manual_seed(0)
    return Counter()


def _kv_cache(torch):
    class Cache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("k", torch.zeros(8, 4))

        def forward(self, pos, x):
            self.k.index_copy_(0, pos, x)
            return self.k.sum(0)
    return Cache()


def test_decision_only_for_programs_that_write_buffers(torch):
    from aotrun_export.passes.written_buffers import (
        OPTION, constant_folding_decision, written_buffers)
    ep = torch.export.export(_counter(torch), (torch.randn(2, 4),))
    opts, note = constant_folding_decision(ep)
    assert opts == {OPTION: False}
    assert "buffer(s) n" in note and "constant folding off" in note
    kv = torch.export.export(_kv_cache(torch), (torch.tensor([3]),
                                                torch.randn(1, 4)))
    assert written_buffers(kv) == ["k"]
    bn = torch.nn.BatchNorm1d(4).train()
    stats = torch.export.export(bn, (torch.randn(3, 4),))
    assert written_buffers(stats) == ["num_batches_tracked", "running_mean",
                                      "running_var"]
    mlp = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    assert constant_folding_decision(
        torch.export.export(mlp, (torch.randn(2, 4),))) == ({}, None)
    assert constant_folding_decision(
        torch.export.export(bn.eval(), (torch.randn(3, 4),))) == ({}, None)


@pytest.mark.slow
def test_counter_folding_on_cpu(torch, tmp_path):
    from aotrun_export.passes.written_buffers import (
        OPTION, constant_folding_decision)
    x = torch.randn(2, 4)
    results = {}
    for mode in ("folding_on", "decision"):
        m = _counter(torch)
        ep = torch.export.export(m, (x,))
        opts = ({OPTION: True} if mode == "folding_on"
                else constant_folding_decision(ep)[0])
        pkg = torch._inductor.aoti_compile_and_package(
            ep, package_path=str(tmp_path / f"{mode}.pt2"),
            inductor_configs=opts)
        runner = torch._inductor.aoti_load_package(pkg)
        eager = _counter(torch)
        with torch.no_grad():
            results[mode] = [round(float((runner(x) - eager(x)).abs().max()),
                                   4) for _ in range(3)]
    assert results["decision"] == [0.0, 0.0, 0.0]
    # torch 2.11 folds the counter's update into a constant: every call
    # returns x + 1.
    assert results["folding_on"] == [0.0, 1.0, 2.0]
