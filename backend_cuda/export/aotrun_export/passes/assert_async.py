"""Pass: remove device-side value checks (`aten._assert_async`).

Guarantee: after this pass no graph of the program (the top-level graph and
every subgraph, e.g. torch.cond branches) calls `aten._assert_async.msg`,
`aten._assert_async.default` or `aten._functional_assert_async.msg`, and
every node that only computed their condition is gone too (the comparisons
and reductions of a `validate_args` check cost kernels and memory). Host-side
size checks (`aten._assert_scalar`, `sym_constrain_range*`) are kept: they
read no device data and guard the shapes the compiled code relies on.

Why: Inductor lowers `_assert_async` to a device assert inside a generated
kernel. Autotuning runs those kernels on made-up inputs (zeros for bools),
so a check such as "the scale is positive" fails while compiling and the
export dies with "device-side assert triggered"; at run time a failed
device assert poisons the CUDA context for the whole process, which a
serving runtime must never allow. The program therefore does not check
these values: a model exported with `validate_args=True` computes with
invalid arguments instead of raising (NaN or inf results), like
`validate_args=False` in eager mode.
"""

from typing import Optional

from .graph_utils import erase_dead, finish, graph_modules, op_name


def _targets():
    import torch
    aten = torch.ops.aten
    return (aten._assert_async.msg, aten._assert_async.default,
            aten._functional_assert_async.msg)


def remove_device_asserts(ep) -> Optional[str]:
    """Removes the checks in place. Returns a summary, or None when the
    program had none."""
    import torch
    functional = torch.ops.aten._functional_assert_async.msg
    targets = _targets()
    removed, fed, changed = 0, 0, []
    for gm in graph_modules(ep):
        asserts = [n for n in gm.graph.nodes
                   if n.op == "call_function" and n.target in targets]
        if not asserts:
            continue
        for n in asserts:
            cond = n.args[0] if n.args else None
            if n.target is functional:
                # Returns a new dependency token: readers get the old one.
                n.replace_all_uses_with(n.args[2])
            elif n.users:
                raise AssertionError(f"{op_name(n.target)} node '{n.name}' "
                                     "has users")
            gm.graph.erase_node(n)
            removed += 1
            if cond is not None and hasattr(cond, "op"):
                fed += erase_dead([cond])
        changed.append(gm)
    if not removed:
        return None
    finish(ep, changed)
    return (f"removed {removed} device assert(s) (aten._assert_async) and "
            f"{fed} node(s) that only computed their conditions")
