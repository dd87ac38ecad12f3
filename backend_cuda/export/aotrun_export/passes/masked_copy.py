"""Pass: a masked copy `out[mask] = src[mask]` becomes `torch.where`.

Guarantee: in every graph of the program (top level and subgraphs such as
torch.cond branches), a functional `aten.index_put(dst, [mask], values)`
without accumulate, whose values are `aten.index(src, [mask2])` where

* mask and mask2 are the same bool mask: the same node, or nodes computed
  by structurally equal subgraphs of deterministic ops from the same
  inputs (compared with a work list, so masks built from thousands of ops
  are fine),
* src has the shape and dtype of dst, and the mask's shape is dst's shape
  or a leading part of it (mask of shape dst.shape[:k] selects whole
  trailing slices; it is unsqueezed to broadcast),

is rewritten to `aten.where(mask, src, dst)`: the same elements in the same
places, bit for bit, with no host sync and no data-dependent shape. The
index itself (`src[mask]`, which reads the number of selected elements back
to the host) is removed when nothing else reads it except host checks on
its count (`_assert_scalar`) that hold for every possible mask, i.e. for
every count from 0 to the mask's element count (the range torch.export
attaches by itself, e.g. `u0 >= 0`, `u0 <= 320`). A check that could fail
for some mask (a user's `torch._check(x[mask].shape[0] >= 1)`, or one that
ties the count to another size) keeps the index and that check; the copy is
still a `where`.

Not rewritten (left to the index_put fallback): accumulate=True, several
index tensors or None entries (`out[:, mask]`), integer indices, values not
picked by the same mask, masks compared through random, uninitialised or
atomics-based ops (those give different results for the same inputs).

Why: each `x[mask]` / `out[mask] = v` is a fallback kernel
(`aoti_torch_cuda_index_Tensor`, `aoti_torch_index_put_out`) that copies the
mask's count to the host on every call, so the method cannot be captured
in a CUDA graph and stalls the stream; the `where` is one fused kernel.
"""

import math
from typing import List, Optional, Tuple

from .graph_utils import (erase_dead, finish, graph_modules, insert_before,
                          is_call, is_scalar_op, meta_val, retarget)

# Ops whose results can differ between two calls with the same inputs
# (random, uninitialised memory, atomic accumulation order on the GPU):
# a mask computed through one of them equals only itself.
_NONDETERMINISTIC = {"empty", "empty_like", "empty_strided", "new_empty",
                     "new_empty_strided", "index_add", "scatter_add",
                     "scatter_reduce", "index_reduce", "put",
                     "embedding_bag", "_embedding_bag", "histc",
                     "_index_put_impl"}


def _aten():
    import torch
    return torch.ops.aten


def _deterministic(node) -> bool:
    import torch
    t = node.target
    if isinstance(t, torch._ops.HigherOrderOperator):
        return False
    if isinstance(t, torch._ops.OpOverload):
        if torch.Tag.nondeterministic_seeded in t.tags:
            return False
        if t._schema.is_mutable:
            return False
        name = t._schema.name.split("::", 1)[-1]
        if name in _NONDETERMINISTIC:
            return False
        if name == "index_put" and _accumulates(node):
            return False
    return True


def _accumulates(node) -> bool:
    if len(node.args) > 3:
        return bool(node.args[3])
    return bool(node.kwargs.get("accumulate", False))


def _leaf_equal(a, b) -> bool:
    """Equality of non-node arguments; floats by bits (0.0 vs -0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001  (incomparable: not equal)
        return False


def same_value(a, b) -> bool:
    """True when nodes a and b of one graph are known to hold the same
    value: the same node, or the same deterministic op applied to
    arguments that are pairwise the same. A work list, not recursion."""
    todo: List[Tuple] = [(a, b)]
    seen = set()
    while todo:
        x, y = todo.pop()
        x_node, y_node = hasattr(x, "op"), hasattr(y, "op")
        if x_node or y_node:
            if x is y:
                continue
            if not (x_node and y_node):
                return False
            if (x, y) in seen:
                continue
            seen.add((x, y))
            if x.op != "call_function" or y.op != "call_function":
                return False   # placeholders, attributes: only themselves
            if x.target != y.target or not _deterministic(x):
                return False
            if len(x.args) != len(y.args) or set(x.kwargs) != set(y.kwargs):
                return False
            todo.extend(zip(x.args, y.args))
            todo.extend((x.kwargs[k], y.kwargs[k]) for k in x.kwargs)
        elif isinstance(x, (list, tuple)) or isinstance(y, (list, tuple)):
            if type(x) is not type(y) or len(x) != len(y):
                return False
            todo.extend(zip(x, y))
        elif isinstance(x, dict) or isinstance(y, dict):
            if type(x) is not type(y) or set(x) != set(y):
                return False
            todo.extend((x[k], y[k]) for k in x)
        elif not _leaf_equal(x, y):
            return False
    return True


def _expr(d):
    """A size as a sympy expression (ints as sympy Integers)."""
    import sympy
    node = getattr(d, "node", None)
    return node.expr if node is not None else sympy.Integer(int(d))


def _same_size(a, b) -> bool:
    import sympy
    return sympy.simplify(_expr(a) - _expr(b)) == 0


def _same_shape(a, b) -> bool:
    return len(a) == len(b) and all(_same_size(x, y) for x, y in zip(a, b))


def _match(put) -> Optional[Tuple]:
    """(mask, src, dst, index node) when index_put node `put` is a masked
    copy this pass rewrites, else None."""
    import torch
    aten = _aten()
    if not is_call(put, aten.index_put.default) or _accumulates(put):
        return None
    dst, indices, values = put.args[:3]
    if not isinstance(indices, (list, tuple)) or len(indices) != 1:
        return None
    mask = indices[0]
    if not hasattr(mask, "op") or not is_call(values, aten.index.Tensor):
        return None
    src, vidx = values.args[:2]
    if not isinstance(vidx, (list, tuple)) or len(vidx) != 1 or \
            not hasattr(vidx[0], "op"):
        return None
    mval, dval, sval = meta_val(mask), meta_val(dst), meta_val(src)
    if any(v is None for v in (mval, dval, sval)):
        return None
    if mval.dtype != torch.bool or sval.dtype != dval.dtype:
        return None
    if not _same_shape(sval.shape, dval.shape):
        return None
    k = mval.dim()
    if k == 0 or k > dval.dim() or not _same_shape(mval.shape,
                                                   dval.shape[:k]):
        return None
    if not same_value(mask, vidx[0]):
        return None
    return mask, src, dst, values


def _rewrite(put, mask, src, dst) -> None:
    aten = _aten()
    extra = meta_val(dst).dim() - meta_val(mask).dim()
    m = mask
    for _ in range(extra):   # a leading-dims mask selects whole slices
        m = insert_before(put, aten.unsqueeze.default, (m, -1))
    retarget(put, aten.where.self, (m, src, dst))


# ----------------------------------------------------- count checks

def _count_checks(index) -> Optional[List]:
    """The host checks on index's count when they are all that reads it
    (through sym_size and scalar arithmetic), else None."""
    aten = _aten()
    checks, todo, seen = [], list(index.users), set()
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if is_call(n, aten.sym_size.int) and n.args[0] is index and \
                n.args[1] == 0:
            todo.extend(n.users)
        elif is_scalar_op(n):
            todo.extend(n.users)
        elif is_call(n, aten._assert_scalar.default,
                     aten.sym_constrain_range_for_size.default,
                     aten.sym_constrain_range.default):
            checks.append(n)
        else:
            return None
    return checks


def _numel_expr(shape):
    import sympy
    out = sympy.Integer(1)
    for d in shape:
        out = out * _expr(d)
    return out


def _always(rel_kind: str, expr, shape_env) -> bool:
    """expr (an integer expression) compares to 0 as rel_kind for every
    value of its symbols in their known ranges."""
    import sympy
    expr = sympy.expand(expr)
    if expr.is_number:
        lo = hi = expr
    else:
        if shape_env is None:
            return False
        r = shape_env.bound_sympy(expr)
        lo, hi = r.lower, r.upper
    try:
        return bool({">=": lo >= 0, ">": lo > 0, "<=": hi <= 0,
                     "<": hi < 0}[rel_kind])
    except TypeError:   # an unbounded end that sympy cannot order
        return False


_REL = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


def _check_expr(cond, index, count):
    """The sympy expression a host check computes, rebuilt from the graph
    with the picks' count as the symbol `count` (not from the example
    values: torch.export may already have replaced the count there by what
    the check asserts). None when it uses something else of the index or
    an operation this does not model."""
    import operator

    import sympy
    ops = {operator.add: lambda a, b: a + b, operator.sub: lambda a, b: a - b,
           operator.mul: lambda a, b: a * b, operator.neg: lambda a: -a,
           operator.ge: sympy.Ge, operator.gt: sympy.Gt, operator.le: sympy.Le,
           operator.lt: sympy.Lt, operator.eq: sympy.Eq, operator.ne: sympy.Ne,
           operator.and_: sympy.And, operator.or_: sympy.Or,
           operator.not_: sympy.Not}
    aten = _aten()
    done = {}
    todo = [cond]
    while todo:  # post-order over the (small) scalar expression
        n = todo[-1]
        if not hasattr(n, "op"):
            done[n] = sympy.sympify(n)
            todo.pop()
            continue
        if n in done:
            todo.pop()
            continue
        if is_call(n, aten.sym_size.int) and n.args[0] is index:
            if n.args[1] != 0:
                return None
            done[n] = count
            todo.pop()
            continue
        if n.op == "call_function" and n.target in ops:
            pending = [a for a in n.args if a not in done]
            if pending:
                todo.extend(pending)
                continue
            done[n] = ops[n.target](*[done[a] for a in n.args])
            todo.pop()
            continue
        if n.op == "call_function" and getattr(n.target, "__name__", "") \
                == "sym_not":
            pending = [a for a in n.args if a not in done]
            if pending:
                todo.extend(pending)
                continue
            done[n] = sympy.Not(done[n.args[0]])
            todo.pop()
            continue
        val = meta_val(n)   # a size that does not come from the index
        node_expr = getattr(getattr(val, "node", None), "expr", None)
        if node_expr is None and not isinstance(val, (int, bool)):
            return None
        done[n] = node_expr if node_expr is not None else sympy.sympify(val)
        todo.pop()
    return done[cond]


def _holds(expr, count, numel, shape_env) -> bool:
    """expr holds for every count in [0, numel] (and every value of the
    other symbols in their ranges)."""
    import sympy
    if expr is sympy.true or expr is True:
        return True
    if isinstance(expr, sympy.And):
        return all(_holds(a, count, numel, shape_env) for a in expr.args)
    rel = {sympy.GreaterThan: ">=", sympy.StrictGreaterThan: ">",
           sympy.LessThan: "<=", sympy.StrictLessThan: "<"}.get(type(expr))
    if rel is None:
        return False   # Eq, Ne, Or, ...: can fail for some count
    diff = sympy.expand(expr.lhs - expr.rhs)
    if count not in diff.free_symbols:
        return False   # not about the count: not ours to drop
    try:
        if sympy.Poly(diff, count).degree() > 1:
            return False
    except sympy.PolynomialError:
        return False
    # Linear in the count: true at both ends of [0, numel] means true on
    # the whole range, for every value of the other symbols.
    return all(_always(rel, diff.subs(count, end), shape_env)
               for end in (sympy.Integer(0), numel))


def _holds_for_any_count(check, index, numel, shape_env) -> bool:
    """True when host check `check` on index's count holds whatever the
    count is in [0, numel] (every mask of that many elements)."""
    import sympy
    count = sympy.Symbol("picked_count", integer=True, nonnegative=True)
    aten = _aten()
    arg = check.args[0] if check.args else None
    if not is_call(check, aten._assert_scalar.default):
        # sym_constrain_range[_for_size](count, min=, max=)
        if _check_expr(arg, index, count) != count:
            return False
        lo = check.kwargs.get("min", check.args[1] if len(check.args) > 1
                              else None)
        hi = check.kwargs.get("max", check.args[2] if len(check.args) > 2
                              else None)
        return (lo is None or lo <= 0) and (hi is None or _always(
            ">=", sympy.Integer(hi) - numel, shape_env))
    expr = _check_expr(arg, index, count)
    return expr is not None and _holds(expr, count, numel, shape_env)


def _shape_env(*nodes):
    for n in nodes:
        val = meta_val(n)
        for d in list(getattr(val, "shape", ())):
            env = getattr(getattr(d, "node", None), "shape_env", None)
            if env is not None:
                return env
        mode = getattr(val, "fake_mode", None)
        if getattr(mode, "shape_env", None) is not None:
            return mode.shape_env
    return None


def _drop_index(index, mask) -> int:
    """Removes `index` and its count checks when each check holds for any
    mask. Returns the number of nodes removed (0: kept)."""
    checks = _count_checks(index)
    if checks is None:
        return 0
    shape_env = _shape_env(index, mask)
    numel = _numel_expr(meta_val(mask).shape)
    if not all(_holds_for_any_count(c, index, numel, shape_env)
               for c in checks):
        return 0
    inputs = []
    for c in checks:
        inputs.extend(a for a in c.args if hasattr(a, "op"))
        c.graph.erase_node(c)
    return len(checks) + erase_dead(inputs + [index])


def masked_copy_to_where(ep) -> Optional[str]:
    """Rewrites the program in place. Returns a summary, or None when no
    masked copy matched."""
    rewritten, dropped, kept, changed = 0, 0, 0, []
    for gm in graph_modules(ep):
        puts = [n for n in gm.graph.nodes
                if is_call(n, _aten().index_put.default)]
        indexes = {}     # index node -> its mask
        for put in puts:
            m = _match(put)
            if m is None:
                continue
            mask, src, dst, index = m
            _rewrite(put, mask, src, dst)
            rewritten += 1
            indexes.setdefault(index, mask)
        for index, mask in indexes.items():
            if index._erased:
                continue
            n = _drop_index(index, mask)
            if n:
                dropped += 1
            elif not index._erased and index.users:
                kept += 1
            else:
                erase_dead([index])
        if indexes:
            changed.append(gm)
    if not rewritten:
        return None
    finish(ep, changed)
    msg = (f"masked copy: {rewritten} out[mask] = src[mask] became "
           f"torch.where; {dropped} mask index(es) and their count checks "
           "removed")
    if kept:
        msg += (f"; {kept} index(es) kept (their count is read or checked "
                "by something that can fail for some mask)")
    return msg
