"""Pass: float and bool `.item()` values reach kernels as tensors, exactly.

Guarantee: after this pass no ATen op of any graph (top level and
subgraphs) takes a float or bool scalar read with `.item()` (an unbacked
SymFloat/SymBool, `aten.item` / `aten._local_scalar_dense` of a floating
or bool tensor), directly or through host arithmetic on it (`v * 2.0 + 1`,
`-v`, `v > 0.5`, ...). Each such use reads the 0-d tensor itself instead,
with the result of eager PyTorch bit for bit:

* arithmetic (add, sub, rsub, mul, div, clamp, clamp_min, clamp_max):
  computed in the op's math type as eager does with a Python scalar
  (float32 for float16/bfloat16 results, else the result dtype), the
  scalar rounded once from its tensor's dtype, then the result cast to
  the op's result dtype;
* comparisons (eq, ne, lt, le, gt, ge): in the math type of the dtype
  eager promotes the tensor and a Python scalar to;
* selection and fills (where, masked_fill, full, fill, scalar_tensor): the
  scalar rounded once to the result dtype;
* host arithmetic on the scalar (operator +, -, *, /, unary -, abs,
  comparisons, and/or/not, sym_float): in float64 (Python's double),
  int64 or bool 0-d tensors.

A use the pass cannot rewrite exactly (pow, remainder, floor division,
...) is an error naming the node, not a silent wrong result. Host-only uses
stay: `_assert_scalar` checks (from `torch._check`), a torch.cond predicate
computed from the scalar, returning the scalar; integer `.item()` is not
touched (int64 kernel arguments are right).
When nothing reads the scalar on the host any more the `.item()` itself is
removed, so the method no longer copies the value to the host (one sync
less; it can be captured in a CUDA graph).

Why here (the graph before lowering) and not in the generated code: torch
2.11's AOTInductor declares every symbolic kernel argument of its Triton
launcher `int64_t` (cpp_wrapper_gpu.py, the deferred kernel-call wrapper:
`issubclass(arg_type, (SymbolicCallArg, sympy.Expr, int))` ->
`int64_t {name}`), so an unbacked float symbol `zuf0` passed to a kernel
whose Triton signature says fp64 arrives truncated: `x * s.item()` with
s = 1.5 computes `x * 1` (measured on the H200). Patching the generated
C++ would depend on Inductor's private codegen details of one release; a
graph that never hands a float symbol to a kernel is right for any
release and also removes the host sync. On the CPU, torch 2.11's C++
kernels take the symbol as `const float ks0` and are right (measured), so
the bug does not reproduce there; the rewrite is the same on every device.
"""

from typing import Dict, List, Optional, Tuple

from .graph_utils import (PassError, erase_dead, finish, graph_modules,
                          insert_before, is_call, is_scalar_op, meta_val,
                          op_name, packet_name, retarget)

ARITH = {"add", "sub", "rsub", "mul", "div", "clamp", "clamp_min",
         "clamp_max"}
COMPARE = {"eq", "ne", "lt", "le", "gt", "ge"}
SELECT = {"where", "masked_fill", "full", "fill", "scalar_tensor"}


def _aten():
    import torch
    return torch.ops.aten


def _item_targets():
    aten = _aten()
    return (aten.item.default, aten._local_scalar_dense.default)


def _host_checks():
    aten = _aten()
    return (aten._assert_scalar.default, aten.sym_constrain_range.default,
            aten.sym_constrain_range_for_size.default)


def _scalar_kind(val) -> Optional[str]:
    import torch
    if isinstance(val, (torch.SymBool, bool)):
        return "bool"
    if isinstance(val, (torch.SymFloat, float)):
        return "float"
    if isinstance(val, (torch.SymInt, int)):
        return "int"
    return None


def _item_kind(item) -> Optional[str]:
    """'float' or 'bool' for an .item() this pass rewrites, else None."""
    src = meta_val(item.args[0]) if item.args else None
    if src is None or not hasattr(src, "dtype"):
        return None
    if src.dtype.is_floating_point:
        return "float"
    import torch
    if src.dtype == torch.bool:
        return "bool"
    return None


def _opmath(dtype):
    """The type eager PyTorch computes in for a result dtype."""
    import torch
    return {torch.float16: torch.float32,
            torch.bfloat16: torch.float32}.get(dtype, dtype)


def _promote_with_scalar(dtype, kind: str):
    """Result dtype of a tensor of `dtype` with a Python scalar of `kind`."""
    import torch
    if kind == "float":
        if dtype.is_floating_point or dtype.is_complex:
            return dtype
        return torch.get_default_dtype()
    if kind == "int" and dtype == torch.bool:
        return torch.int64
    return dtype


def _flat_nodes(args) -> List:
    out = []
    import torch.fx
    torch.fx.node.map_arg(args, out.append)
    return out


def _describe(item) -> str:
    src = item.args[0]
    return (f"the .item() at node '{item.name}' ({op_name(item.target)} of "
            f"'{getattr(src, 'name', src)}')")


class _ItemRewrite:
    """Rewrites the kernel uses of one float/bool .item() node."""

    def __init__(self, gm, item):
        self.gm = gm
        self.item = item
        self.ours = {item}          # the scalar and host values derived
        self.lifted: Dict = {}      # scalar node -> 0-d tensor node
        self.casts: Dict[Tuple, object] = {}

    # ---------------------------------------------------------- discovery
    def kernel_users(self) -> List:
        import torch
        todo, users = [self.item], []
        while todo:  # a work list: host arithmetic chains can be long
            n = todo.pop()
            for u in n.users:
                if u.op == "output" or is_call(u, *_host_checks()):
                    continue
                if is_scalar_op(u):
                    if u not in self.ours:
                        self.ours.add(u)
                        todo.append(u)
                    continue
                if u.op == "call_function" and isinstance(
                        u.target, torch._ops.OpOverload):
                    if u not in users:
                        users.append(u)
                    continue
                if is_call(u, torch.ops.higher_order.cond) and \
                        u.args[0] is n and n not in _flat_nodes(u.args[1:]):
                    continue   # a torch.cond predicate is read on the host
                raise PassError(
                    f"{_describe(self.item)} feeds node '{u.name}' "
                    f"({op_name(u.target) if u.op == 'call_function' else u.op}"
                    "), which the float_item pass cannot rewrite; pass the "
                    "0-d tensor instead of its .item()")
        return users

    def _carries_float_or_bool(self, a) -> bool:
        return (hasattr(a, "op") and a in self.ours and
                _scalar_kind(meta_val(a)) in ("float", "bool"))

    # ---------------------------------------------------------- tensors
    # Placement: the tensor form of a host value is inserted right after
    # that value's node (so every later reader, kernel use or host
    # arithmetic, sees it); casts for one kernel use go right before it.

    def _item_tensor(self, item, anchor):
        """The 0-d tensor an .item() read (in its own dtype: casting from
        it rounds once, as the scalar path does)."""
        src = item.args[0]
        val = meta_val(src)
        if val is not None and val.dim() == 0:
            return src
        return insert_before(anchor, _aten().view.default, (src, []))

    def _const_tensor(self, c, anchor):
        import torch
        dtype = (torch.bool if isinstance(c, bool) else
                 torch.int64 if isinstance(c, int) else torch.float64)
        return insert_before(anchor, _aten().scalar_tensor.default, (c,),
                             {"dtype": dtype})

    def lift(self, v):
        """A node holding scalar `v` as a 0-d tensor."""
        import torch
        if not hasattr(v, "op"):
            return self._const_tensor(v, self.anchor)
        todo = [v]
        while todo:  # post-order over the host arithmetic, no recursion
            n = todo[-1]
            if n in self.lifted:
                todo.pop()
                continue
            anchor = n.next
            if is_call(n, *_item_targets()):
                self.lifted[n] = self._item_tensor(n, anchor)
                todo.pop()
                continue
            if not is_scalar_op(n):
                kind = _scalar_kind(meta_val(n))
                if kind != "int":
                    raise PassError(
                        f"{_describe(self.item)}: host value '{n.name}' "
                        f"({kind or 'unknown'}) cannot be turned into a "
                        "tensor exactly")
                self.lifted[n] = insert_before(
                    anchor, _aten().scalar_tensor.default, (n,),
                    {"dtype": torch.int64})
                todo.pop()
                continue
            deps = [a for a in n.args if hasattr(a, "op")
                    and a not in self.lifted]
            if deps:
                todo.extend(deps)
                continue
            self.lifted[n] = self._lift_op(n, anchor)
            todo.pop()
        return self.lifted[v]

    def _lift_op(self, n, anchor):
        """Host scalar arithmetic as 0-d tensor ops with Python's
        semantics: float math in float64, bools are ints in arithmetic."""
        import operator

        import torch
        aten = _aten()
        ops = [self.lifted[a] if hasattr(a, "op")
               else self._const_tensor(a, anchor) for a in n.args]
        t = n.target
        binary = {operator.add: aten.add.Tensor, operator.sub: aten.sub.Tensor,
                  operator.mul: aten.mul.Tensor}
        compare = {operator.lt: aten.lt.Tensor, operator.le: aten.le.Tensor,
                   operator.gt: aten.gt.Tensor, operator.ge: aten.ge.Tensor,
                   operator.eq: aten.eq.Tensor, operator.ne: aten.ne.Tensor}
        logical = {operator.and_: aten.logical_and.default,
                   operator.or_: aten.logical_or.default}
        name = getattr(t, "__name__", "")

        def cast(o, dtype):
            return self._cast(o, dtype, anchor=anchor)
        # Python computes with doubles: a float32/float16 value widens
        # exactly, so v * v or v + w round like Python's float math.
        ops = [cast(o, torch.float64) if self._dtype(o).is_floating_point
               else o for o in ops]
        if t in binary or t in (operator.neg, operator.abs, abs):
            ops = [cast(o, torch.int64) if self._dtype(o) == torch.bool
                   else o for o in ops]
            if t in binary:
                return insert_before(anchor, binary[t], ops)
            fn = aten.neg.default if t is operator.neg else aten.abs.default
            return insert_before(anchor, fn, ops)
        if t is operator.truediv:
            ops = [cast(o, torch.float64) for o in ops]
            return insert_before(anchor, aten.div.Tensor, ops)
        if t in compare:
            return insert_before(anchor, compare[t], ops)
        if t in logical and all(self._dtype(o) == torch.bool for o in ops):
            return insert_before(anchor, logical[t], ops)
        if name == "sym_not":
            return insert_before(anchor, aten.logical_not.default, ops)
        if name == "sym_float":
            return cast(ops[0], torch.float64)
        raise PassError(
            f"{_describe(self.item)} flows through '{n.name}' "
            f"({op_name(t)}), which the float_item pass cannot compute "
            "exactly on the device; compute it with tensor ops on the 0-d "
            "tensor instead of its .item()")

    def _dtype(self, node):
        return meta_val(node).dtype

    def _cast(self, node, dtype, device=None, anchor=None):
        anchor = anchor or self.anchor
        val = meta_val(node)
        if val.dtype == dtype and (device is None or val.device == device):
            return node
        key = (node, dtype, device, anchor)
        if key not in self.casts:
            kw = {"dtype": dtype}
            if device is not None and val.device != device:
                kw["device"] = device
            self.casts[key] = insert_before(anchor, _aten()._to_copy.default,
                                            (node,), kw)
        return self.casts[key]

    def tensor(self, v, dtype, device=None):
        return self._cast(self.lift(v), dtype, device)

    # ---------------------------------------------------------- rewrites
    def rewrite(self, u) -> bool:
        """Rewrites kernel user u; False when it takes no float/bool
        scalar of ours (an int derived from it is passed right)."""
        args = list(u.args) + list(u.kwargs.values())
        if not any(self._carries_float_or_bool(a) for a in args):
            return False
        self.anchor = u
        name = packet_name(u.target)
        out = meta_val(u)
        if name is None or out is None or not hasattr(out, "dtype"):
            self._unsupported(u)
        if name in ARITH:
            self._arith(u, name, out)
        elif name in COMPARE:
            self._compare(u, name)
        elif name in SELECT:
            self._select(u, name, out)
        else:
            self._unsupported(u)
        return True

    def _unsupported(self, u):
        raise PassError(
            f"{_describe(self.item)} is an argument of node '{u.name}' "
            f"({op_name(u.target)}); the float_item pass rewrites only "
            f"{sorted(ARITH | COMPARE | SELECT)} exactly. torch 2.11 "
            "AOTInductor would pass the value to a GPU kernel as int64; "
            "use the 0-d tensor instead of its .item() there")

    def _arg(self, a, dtype):
        """An operand in the compute dtype: our scalars and tensors as
        tensors, other values unchanged."""
        if self._carries_float_or_bool(a):
            return self.tensor(a, dtype)
        if hasattr(a, "op") and hasattr(meta_val(a), "dtype"):
            return self._cast(a, dtype)
        if hasattr(a, "op") and a in self.ours:
            return self.tensor(a, dtype)   # an int derived from the scalar
        return a

    def _arith(self, u, name, out):
        aten = _aten()
        if name == "div" and u.kwargs.get("rounding_mode") is not None:
            self._unsupported(u)
        alpha = u.kwargs.get("alpha")
        if alpha is not None and hasattr(alpha, "op") and alpha in self.ours:
            self._unsupported(u)
        compute = _opmath(out.dtype)
        tensor_overload = {
            "add": aten.add.Tensor, "sub": aten.sub.Tensor,
            "mul": aten.mul.Tensor, "div": aten.div.Tensor,
            "rsub": aten.rsub.Tensor, "clamp": aten.clamp.Tensor,
            "clamp_min": aten.clamp_min.Tensor,
            "clamp_max": aten.clamp_max.Tensor}[name]
        sig = u.target._schema.arguments
        bound = dict(zip([a.name for a in sig], u.args))
        bound.update(u.kwargs)
        x = self._arg(bound["self"], compute)
        if name in ("clamp",):
            lo = self._bound(bound.get("min"), compute)
            hi = self._bound(bound.get("max"), compute)
            args, kwargs = (x, lo, hi), {}
        else:
            other_key = "other" if "other" in bound else (
                "min" if name == "clamp_min" else "max")
            other = bound[other_key]
            if not hasattr(other, "op"):
                other = self._const_tensor(other, u)
            args = (x, self._arg(other, compute))
            kwargs = {"alpha": alpha} if alpha is not None else {}
        if compute == out.dtype:
            retarget(u, tensor_overload, args, kwargs)
        else:
            inner = insert_before(u, tensor_overload, args, kwargs)
            retarget(u, aten._to_copy.default, (inner,),
                     {"dtype": out.dtype})

    def _bound(self, b, dtype):
        if b is None:
            return None
        if not hasattr(b, "op"):
            return self._cast(self._const_tensor(b, self.anchor), dtype)
        return self._arg(b, dtype)

    def _compare(self, u, name):
        aten = _aten()
        x, other = u.args[0], u.args[1]
        xval = meta_val(x)
        kind = _scalar_kind(meta_val(other)) if hasattr(other, "op") else \
            _scalar_kind(other)
        if hasattr(meta_val(other), "dtype") or kind is None:
            self._unsupported(u)
        compute = _opmath(_promote_with_scalar(xval.dtype, kind))
        target = getattr(aten, name).Tensor
        retarget(u, target, (self._cast(x, compute),
                             self._arg(other, compute)))

    def _select(self, u, name, out):
        aten = _aten()
        dtype, device = out.dtype, out.device
        if name == "where":
            c, a, b = u.args[:3]
            a2 = self._sel(a, dtype)
            b2 = self._sel(b, dtype)
            if hasattr(a2, "op") and hasattr(b2, "op"):
                retarget(u, aten.where.self, (c, a2, b2))
            elif hasattr(a2, "op"):
                retarget(u, aten.where.ScalarOther, (c, a2, b2))
            else:
                retarget(u, aten.where.ScalarSelf, (c, a2, b2))
        elif name == "masked_fill":
            x, m, v = u.args[:3]
            retarget(u, aten.where.self, (m, self.tensor(v, dtype, device), x))
        elif name == "fill":
            x, v = u.args[:2]
            retarget(u, aten.fill.Tensor, (x, self.tensor(v, dtype, device)))
        elif name == "full":
            size, v = u.args[:2]
            t = self.tensor(v, dtype, device)
            e = insert_before(u, aten.expand.default, (t, size))
            import torch
            retarget(u, aten.clone.default, (e,),
                     {"memory_format": torch.contiguous_format})
        else:  # scalar_tensor
            t = self.lift(u.args[0])
            kw = {"dtype": dtype}
            if meta_val(t).device != device:
                kw["device"] = device
            retarget(u, aten._to_copy.default, (t,), kw)

    def _sel(self, a, dtype):
        if self._carries_float_or_bool(a):
            return self.tensor(a, dtype)
        if hasattr(a, "op") and hasattr(meta_val(a), "dtype"):
            return self._cast(a, dtype)
        return a

    def run(self) -> int:
        order = {n: i for i, n in enumerate(self.gm.graph.nodes)}
        users = sorted(self.kernel_users(), key=order.__getitem__)
        done = 0
        for u in users:
            self.anchor = u
            if self.rewrite(u):
                done += 1
        return done


def float_item_to_tensor(ep) -> Optional[str]:
    """Rewrites the program in place. Returns a summary, or None when no
    float/bool .item() reached a kernel."""
    items, uses, changed = 0, 0, []
    for gm in graph_modules(ep):
        touched = False
        nodes = [n for n in gm.graph.nodes if is_call(n, *_item_targets())]
        for item in nodes:
            if _item_kind(item) is None:
                continue
            rw = _ItemRewrite(gm, item)
            k = rw.run()
            if k:
                items += 1
                uses += k
                touched = True
                erase_dead(list(rw.ours))
        if touched:
            changed.append(gm)
    if not uses:
        return None
    finish(ep, changed)
    return (f"float/bool .item(): {uses} kernel use(s) of {items} value(s) "
            "now read the 0-d tensor (exact value, no int64 kernel argument)")
