"""Pass: functional ATen IR plus the decompositions aotrun needs.

Guarantee: the program comes back functionalized (in-place ops and
aliasing resolved into values, buffer and input mutations listed in the
graph signature; what AOTInductor would produce itself before lowering),
which the other passes rely on: two structurally equal nodes hold equal
values. While retracing, these ops are decomposed:

* `aten._reshape_copy(x, size)` -> `aten.view(aten.clone(x,
  memory_format=contiguous), size)`: a contiguous copy, then a view, the
  same values and shape as eager (Inductor has no lowering for it, so the
  library would call a fallback the shim does not have);
* `torch.nn.attention.varlen.varlen_attn` (`torch_attn._varlen_attn`) and
  the varlen mode of `aten._flash_attention_forward`: see
  varlen_attention.py;
* `aten.linalg_solve_triangular` with a static size up to 64: see
  triangular_solve.py;
* `aten.index_add` -> torch's own decomposition (an `index_put` with
  accumulate): once functionalized, `index_add_` becomes `index_add`, which
  AOTInductor 2.11 lowers only for some dtypes and otherwise calls through
  libtorch's proxy executor (measured: a bfloat16 MoE layer), which aotrun
  does not have; `index_put` is lowered, or served by the shim.

Errors raised by a decomposition (a window the Flash versions disagree on,
seqused_k, paged KV, ...) come out as PassError with the decomposition's
message.
"""

from typing import Optional, Tuple

from .graph_utils import PassError, count_targets
from .triangular_solve import decompose_solve_triangular
from .varlen_attention import (decompose_flash_attention_forward,
                               decompose_varlen_attn)


def decompose_reshape_copy(x, size):
    import torch
    aten = torch.ops.aten
    return aten.view.default(
        aten.clone.default(x, memory_format=torch.contiguous_format), size)


def decomposition_table():
    import torch
    aten = torch.ops.aten
    table = {
        aten._reshape_copy.default: decompose_reshape_copy,
        aten._flash_attention_forward.default:
            decompose_flash_attention_forward,
        aten.linalg_solve_triangular.default: decompose_solve_triangular,
    }
    table.update(torch._decomp.get_decompositions([aten.index_add]))
    varlen = _varlen_op()
    if varlen is not None:
        table[varlen] = decompose_varlen_attn
    return table


def _varlen_op():
    """torch_attn._varlen_attn, registered when torch.nn.attention.varlen
    is imported (torch 2.10+); None on an older torch."""
    import torch
    try:
        import torch.nn.attention.varlen  # noqa: F401  (registers the op)
        return torch.ops.torch_attn._varlen_attn.default
    except (ImportError, AttributeError):
        return None


def _find_pass_error(e: BaseException) -> Optional[PassError]:
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, PassError):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


def functionalize_and_decompose(ep) -> Tuple[object, Optional[str]]:
    """(new program, summary or None when nothing was decomposed)."""
    table = decomposition_table()
    before = count_targets(ep, set(table))
    try:
        out = ep.run_decompositions(table)
    except Exception as e:  # noqa: BLE001  (surface our own message)
        ours = _find_pass_error(e)
        if ours is not None:
            raise PassError(str(ours)) from e
        raise
    after = count_targets(out, set(table))
    done = {k: v - after.get(k, 0) for k, v in before.items()
            if v - after.get(k, 0) > 0}
    if not done:
        return out, None
    parts = ", ".join(f"{v} {k}" for k, v in sorted(done.items()))
    return out, f"decomposed {parts}"
