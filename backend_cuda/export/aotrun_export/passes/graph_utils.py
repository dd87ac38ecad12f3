"""Graph editing helpers shared by the exporter passes.

The passes edit the FX graphs of an ExportedProgram in place (the top-level
graph and every subgraph, e.g. torch.cond branches). These helpers keep what
torch.export relies on intact: new nodes get a `val` (computed with the
program's fake tensor mode, so later passes and Inductor see shapes and
dtypes), nodes are only removed when nothing reads them, and unbacked
symbols that no longer exist are dropped from the range constraints (a
later retrace may mint a symbol of the same name, which must not inherit a
stale range). Every walk over nodes or graphs is a work list, never
recursion: graphs have thousands of nodes.
"""

import operator
from typing import Dict, Iterable, List, Optional

from ..options import graph_modules  # noqa: F401  (re-exported)


class PassError(RuntimeError):
    """A pass found a pattern it must not leave as is and cannot rewrite."""


def op_name(target) -> str:
    """'aten.mul.Tensor', 'operator.mul', ... for messages."""
    import torch
    if isinstance(target, (torch._ops.OpOverload,
                           torch._ops.HigherOrderOperator)):
        return str(target)
    module = getattr(target, "__module__", None) or ""
    qual = getattr(target, "__name__", None) or str(target)
    if module in ("_operator", "operator"):
        module = "operator"
    return f"{module}.{qual}" if module else qual


def packet_name(target) -> Optional[str]:
    """The ATen op name without overload ('mul' for aten.mul.Tensor), or
    None when target is not an ATen OpOverload."""
    import torch
    if not isinstance(target, torch._ops.OpOverload):
        return None
    if target.namespace != "aten":
        return None
    return target._schema.name.split("::", 1)[1]


def is_call(node, *targets) -> bool:
    return node.op == "call_function" and node.target in targets


def meta_val(node):
    return node.meta.get("val") if hasattr(node, "meta") else None


def fake_mode_of(gm):
    """The fake tensor mode of the program's example values."""
    from torch._subclasses.fake_tensor import FakeTensor
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        if isinstance(v, FakeTensor):
            return v.fake_mode
        if isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, FakeTensor):
                    return x.fake_mode
    return None


def _meta_args(x):
    """args with each Node replaced by its example value."""
    import torch.fx
    return torch.fx.node.map_arg(x, lambda n: n.meta.get("val"))


def compute_val(gm, target, args, kwargs, mode=None):
    """The example value target(*args, **kwargs) gives, or None when it
    cannot be computed (then Inductor's retrace computes it)."""
    mode = mode or fake_mode_of(gm)
    if mode is None:
        return None
    try:
        with mode:
            return target(*_meta_args(args), **_meta_args(kwargs))
    except Exception:  # noqa: BLE001  (a missing val is recoverable)
        return None


def insert_before(anchor, target, args, kwargs=None):
    """A new call_function node before `anchor`, with its example value
    and anchor's source location (for readable graphs and errors)."""
    gm = anchor.graph.owning_module
    kwargs = kwargs or {}
    with anchor.graph.inserting_before(anchor):
        node = anchor.graph.call_function(target, tuple(args), dict(kwargs))
    for key in ("stack_trace", "nn_module_stack", "source_fn_stack"):
        if key in anchor.meta:
            node.meta[key] = anchor.meta[key]
    val = compute_val(gm, target, node.args, node.kwargs)
    if val is not None:
        node.meta["val"] = val
    return node


def retarget(node, target, args, kwargs=None) -> None:
    """Makes `node` compute target(*args) in place: its name and users stay
    (the graph signature names output nodes), its example value is
    recomputed."""
    node.target = target
    node.args = tuple(args)
    node.kwargs = dict(kwargs or {})
    val = compute_val(node.graph.owning_module, target, node.args, node.kwargs)
    if val is not None:
        node.meta["val"] = val


def _inputs(node) -> List:
    out = []
    import torch.fx
    torch.fx.node.map_arg((node.args, node.kwargs), out.append)
    return out


def erase_dead(nodes: Iterable) -> int:
    """Erases each given node that nothing reads and that has no side
    effect, then the inputs that become dead that way. Returns how many
    nodes were erased."""
    todo = list(nodes)
    erased = 0
    while todo:
        n = todo.pop()
        if n._erased or n.op in ("placeholder", "output", "get_attr"):
            continue
        if n.users or _impure(n):
            continue
        ins = _inputs(n)
        n.graph.erase_node(n)
        erased += 1
        todo.extend(ins)
    return erased


def _impure(node) -> bool:
    if node.op != "call_function":
        return True
    try:
        return node.is_impure()
    except Exception:  # noqa: BLE001  (unknown: keep it)
        return True


def users_of(node) -> List:
    return list(node.users)


def unbacked_symbols_in_graphs(ep) -> set:
    from torch.fx.experimental.symbolic_shapes import free_unbacked_symbols
    present = set()
    for gm in graph_modules(ep):
        for n in gm.graph.nodes:
            v = n.meta.get("val")
            if v is None:
                continue
            try:
                present |= free_unbacked_symbols(v)
            except Exception:  # noqa: BLE001  (opaque values hold none)
                pass
    return present


def prune_range_constraints(ep) -> List[str]:
    """Drops the ranges of unbacked symbols no graph defines any more.
    Returns their names."""
    from torch.utils._sympy.symbol import SymT, symbol_is_type
    present = unbacked_symbols_in_graphs(ep)
    rc = ep.range_constraints   # the program's own dict
    gone = [k for k in rc if symbol_is_type(
        k, (SymT.UNBACKED_INT, SymT.UNBACKED_FLOAT)) and k not in present]
    for k in gone:
        del rc[k]
    return sorted(str(k) for k in gone)


def finish(ep, changed_gms: Iterable) -> None:
    """Recompiles the edited graph modules and checks the program."""
    for gm in changed_gms:
        gm.graph.lint()
        gm.recompile()
    prune_range_constraints(ep)


PY_SCALAR_OPS = {
    operator.add, operator.sub, operator.mul, operator.truediv,
    operator.floordiv, operator.mod, operator.pow, operator.neg,
    operator.pos, operator.abs, operator.lt, operator.le, operator.gt,
    operator.ge, operator.eq, operator.ne, operator.and_, operator.or_,
    operator.xor, operator.not_, operator.invert,
}


def is_scalar_op(node) -> bool:
    """A call on Python/symbolic scalars (host-side arithmetic), not an
    ATen op: operator.*, math.*, torch.sym_*."""
    import torch
    if node.op != "call_function":
        return False
    t = node.target
    if isinstance(t, (torch._ops.OpOverload, torch._ops.HigherOrderOperator,
                      torch._ops.OpOverloadPacket)):
        return False
    if t in PY_SCALAR_OPS:
        return True
    mod = getattr(t, "__module__", "") or ""
    name = getattr(t, "__name__", "") or ""
    return mod == "math" or (mod.startswith("torch") and name.startswith("sym_")) \
        or name in ("sym_float", "sym_int", "sym_not", "sym_max", "sym_min",
                    "sym_sum", "sym_ite", "sym_sqrt", "_sym_sqrt")


def count_targets(ep, targets) -> Dict[str, int]:
    """{op name: how many call nodes} over every graph of the program."""
    out: Dict[str, int] = {}
    for gm in graph_modules(ep):
        for n in gm.graph.nodes:
            if n.op == "call_function" and n.target in targets:
                out[op_name(n.target)] = out.get(op_name(n.target), 0) + 1
    return out
