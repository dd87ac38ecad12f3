"""Helpers for the exporter pass tests: export on the CPU, list the ops of
every graph, compare outputs bit for bit."""


def export(torch, module, args, dynamic_shapes=None, functional=True):
    """torch.export on the CPU; functionalized like the exporter does
    before its graph passes."""
    from aotrun_export.passes.distribution_checks import \
        distribution_checks_as_asserts
    with distribution_checks_as_asserts():
        ep = torch.export.export(module, args, dynamic_shapes=dynamic_shapes)
    return ep.run_decompositions({}) if functional else ep


def op_names(ep):
    """'aten.index.Tensor', ... for every call in every graph."""
    from aotrun_export.passes.graph_utils import graph_modules, op_name
    return [op_name(n.target) for gm in graph_modules(ep)
            for n in gm.graph.nodes if n.op == "call_function"]


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def bits_equal(torch, a, b) -> bool:
    """Same dtype, shape and bits (NaN payloads and -0.0 included)."""
    if not isinstance(a, torch.Tensor):
        return a == b
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    a, b = a.detach().contiguous(), b.detach().contiguous()
    if a.dtype == torch.bool:
        return torch.equal(a, b)
    return torch.equal(a.view(-1).view(torch.uint8),
                       b.view(-1).view(torch.uint8))


def assert_same_outputs(torch, eager, program, *args):
    e, p = flat(eager(*args)), flat(program(*args))
    assert len(e) == len(p)
    for i, (x, y) in enumerate(zip(e, p)):
        assert bits_equal(torch, x, y), (i, x, y)
