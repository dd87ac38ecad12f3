"""Pass (on by default in the exporter; `export_program(small_gemm=False)`
or `--no-small-gemm` leave it out): small matrix products become a broadcast multiply and a sum, which Inductor
compiles into its own Triton reduction, fused with the bias, activation or
cast around it.

Guarantee: in every graph of the program, each

* `aten.mm(a, b)`            a [M, K], b [K, N]
* `aten.addmm(c, a, b, beta=, alpha=)`
* `aten.bmm(a, b)`           a [B, M, K], b [B, K, N]
* `aten.linear(x, w, bias)`  x [..., K], w [N, K]; M the rows of x
* `aten.matmul(a, b)`        as mm (both 2-D) or bmm (both 3-D, one batch)

whose sizes are static or symbolic with a finite upper bound in the
program's range constraints (`torch.export.Dim(..., max=...)`), whose
operands share one dtype of float32, float16 or bfloat16, with M or N at
most MAX_SKINNY and B*M*N*K at most MAX_MACS at those upper bounds (so at
every size the program accepts), is rewritten to sum_k a[.., m, k] * b[.., k, n] computed in
float32 and cast back to the dtype (addmm: alpha * that + beta * c in
float32, c left out when beta is 0, as ATen does). The products are
those of the GEMM; the float32 sum runs in another order than cuBLAS's
accumulation, so results agree to rounding, not bit for bit. Anything else
(unbounded dynamic sizes, float64, integer or mixed dtypes, larger
products) stays a GEMM on cuBLAS.

Why: each cuBLAS call costs the host 4 to 6 us (`cublasGemmEx`,
`cublasLtMatmul`), about twice a kernel launch, and on a small MLP or a
decode step (M = 1) that is most of a call without a CUDA graph. Such
products are memory bound: a reduction kernel reads the same bytes, and
Inductor fuses it with its neighbours, so the program also launches fewer
kernels. Inductor makes the same rewrite itself for M == 1 or N == 1 when
`coordinate_descent_tuning` is on (torch/_inductor/decomposition.py, `mm`).
"""

from typing import List, Optional

from .graph_utils import finish, graph_modules, insert_before, meta_val, \
    retarget

MAX_SKINNY = 16        # rows (M) or columns (N) of the product
MAX_MACS = 1 << 23     # B*M*N*K multiply-adds


def _aten():
    import torch
    return torch.ops.aten


def static_upper(size) -> Optional[int]:
    """A static size itself; None for a symbolic one."""
    return size if isinstance(size, int) else None


def range_upper(ep):
    """A size's largest value: a static size itself, a symbolic one's upper
    bound under the program's range constraints; None where unbounded or
    not known (a serving batch exported without max=)."""
    from torch.utils._sympy.value_ranges import bound_sympy
    from ..dim_ranges import finite_bound
    ranges = dict(getattr(ep, "range_constraints", {}) or {})

    def upper(size):
        if isinstance(size, int):
            return size
        try:
            return finite_bound(bound_sympy(size.node.expr, ranges).upper)
        except Exception:  # noqa: BLE001  (no expression, no bound: unknown)
            return None
    return upper


def _upper_sizes(t, upper) -> Optional[List[int]]:
    try:
        sizes = [upper(s) for s in t.shape]
    except TypeError:
        return None
    return None if any(s is None for s in sizes) else sizes


def _operands(node):
    """(kind, a, b, c, beta, alpha) of a supported product node, else None;
    for linear, b is the weight [N, K]."""
    aten = _aten()
    if node.op != "call_function":
        return None
    if node.target in (aten.mm.default, aten.bmm.default) and \
            len(node.args) == 2 and not node.kwargs:
        kind = "mm" if node.target is aten.mm.default else "bmm"
        return kind, node.args[0], node.args[1], None, 1, 1
    if node.target is aten.addmm.default and len(node.args) == 3 and \
            not set(node.kwargs) - {"beta", "alpha"}:
        return ("addmm", node.args[1], node.args[2], node.args[0],
                node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1))
    if node.target is aten.matmul.default and len(node.args) == 2 and \
            not node.kwargs:
        va, vb = meta_val(node.args[0]), meta_val(node.args[1])
        dims = (getattr(va, "ndim", 0), getattr(vb, "ndim", 0))
        if dims == (2, 2):
            return "mm", node.args[0], node.args[1], None, 1, 1
        if dims == (3, 3) and va.shape[0] == vb.shape[0]:
            return "bmm", node.args[0], node.args[1], None, 1, 1
        return None
    if node.target is aten.linear.default and 2 <= len(node.args) <= 3 and \
            not node.kwargs:
        bias = node.args[2] if len(node.args) == 3 else None
        return "linear", node.args[0], node.args[1], bias, 1, 1
    return None


def is_small(kind, a, b, c=None, upper=static_upper) -> bool:
    """The product is small enough at its sizes' upper bounds (`upper`:
    static_upper, or range_upper(ep) for bounded dynamic sizes) and of one
    float dtype."""
    import torch
    va, vb = meta_val(a), meta_val(b)
    vals = [va, vb] + ([meta_val(c)] if c is not None else [])
    if any(not isinstance(v, torch.Tensor) for v in vals):
        return False
    if len({v.dtype for v in vals}) != 1 or va.dtype not in (
            torch.float32, torch.float16, torch.bfloat16):
        return False
    sizes = [_upper_sizes(v, upper) for v in vals]
    if any(s is None for s in sizes):
        return False
    sa, sb = sizes[0], sizes[1]
    if kind == "linear":
        if len(sa) < 1 or len(sb) != 2:
            return False
        batch, m, k, n = 1, 1, sa[-1], sb[0]
        for d in sa[:-1]:
            m *= d
    else:
        batch = sa[0] if kind == "bmm" else 1
        m, k, n = sa[-2], sa[-1], sb[-1]
    return min(m, n) <= MAX_SKINNY and batch * m * n * k <= MAX_MACS


def _rewrite(node, kind, a, b, c, beta, alpha) -> None:
    """The product as new nodes before `node`; `node` itself then takes over
    the last of them (its name may be a program output's)."""
    import torch
    aten = _aten()
    dtype = meta_val(node).dtype

    def call(target, *args, **kwargs):
        return insert_before(node, target, args, kwargs)

    def f32(x):
        if meta_val(x).dtype == torch.float32:
            return x
        return call(aten._to_copy.default, x, dtype=torch.float32)

    if kind == "linear":
        # [..., 1, K] * [N, K] summed over K: both read along K.
        left = call(aten.unsqueeze.default, f32(a), -2)
        out = call(aten.sum.dim_IntList, call(aten.mul.Tensor, left, f32(b)),
                   [-1])
    else:
        # [.., M, K, 1] * [.., 1, K, N] summed over K.
        batched = kind == "bmm"
        left = call(aten.unsqueeze.default, f32(a), 3 if batched else 2)
        right = call(aten.unsqueeze.default, f32(b), 1 if batched else 0)
        out = call(aten.sum.dim_IntList, call(aten.mul.Tensor, left, right),
                   [2 if batched else 1])
    if alpha != 1:
        out = call(aten.mul.Tensor, out, alpha)
    if c is not None and beta != 0:
        bias = f32(c)
        if beta != 1:
            bias = call(aten.mul.Tensor, bias, beta)
        out = call(aten.add.Tensor, out, bias)
    if dtype != torch.float32:
        out = call(aten._to_copy.default, out, dtype=dtype)
    retarget(node, out.target, out.args, out.kwargs)
    node.graph.erase_node(out)


def small_gemms_to_reductions(ep) -> Optional[str]:
    """Rewrites the small products of every graph; a summary, or None when
    none was found."""
    counts = {"linear": 0, "mm": 0, "addmm": 0, "bmm": 0}  # matmul: mm, bmm
    changed = []
    upper = range_upper(ep)
    for gm in graph_modules(ep):
        found = []
        for node in list(gm.graph.nodes):
            ops = _operands(node)
            if ops is not None and is_small(*ops[:4], upper=upper):
                found.append((node, ops))
        for node, ops in found:
            _rewrite(node, *ops)
            counts[ops[0]] += 1
        if found:
            changed.append(gm)
    if not changed:
        return None
    finish(ep, changed)
    done = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    return (f"{done} with M or N <= {MAX_SKINNY} and at most {MAX_MACS} "
            "multiply-adds became float32 multiply + sum (Triton, fused; "
            "no cuBLAS call)")
