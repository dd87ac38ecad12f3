"""How scaled_dot_product_attention is exported: fused or math.

Fused (the default where it is covered): torch decomposes SDPA with the
flash and efficient backends only (cuDNN attention and the overrideable
backend have no aotrun shim), so calls become
`aten._scaled_dot_product_flash_attention` /
`_scaled_dot_product_efficient_attention`, which libaotrun_shim.so serves
with its own kernel (docs/fallback-ops.md "Attention"); a call neither
backend takes (e.g. a head dim over 256) becomes math as in eager.

Math: SDPA decomposed into bmm + softmax (`sdpa_kernel(SDPBackend.MATH)`).

attention_math=None (auto) picks fused when the program runs on CUDA and
the shim exports (when known) hold both fused functions; after tracing, a
fused call the shim would refuse (dropout, a value head dim other than the
query's, a head dim over 256, a dtype other than float16 / bfloat16 /
float32, a debug mask, varlen) sends the method back to math, with an
export note saying why. True forces math, False forces fused.
"""

import contextlib
from typing import Iterable, List, Optional, Set, Tuple

FLASH_SHIM = "aoti_torch_cuda__scaled_dot_product_flash_attention"
EFFICIENT_SHIM = "aoti_torch_cuda__scaled_dot_product_efficient_attention"
FLASH_FWD_SHIM = "aoti_torch_cuda__flash_attention_forward"
EFFICIENT_FWD_SHIM = "aoti_torch_cuda__efficient_attention_forward"
FUSED_SHIMS = (FLASH_SHIM, EFFICIENT_SHIM)
MAX_HEAD_DIM = 256

# aten op name -> (shim name, index of dropout_p, index of the debug-mask /
# varlen arguments that must be falsy)
_OPS = {
    "_scaled_dot_product_flash_attention": (FLASH_SHIM, 3, (5,)),
    "_scaled_dot_product_efficient_attention": (EFFICIENT_SHIM, 5, ()),
    "_flash_attention_forward": (FLASH_FWD_SHIM, 7, (3, 4, 9)),
    "_efficient_attention_forward": (EFFICIENT_FWD_SHIM, 8, (4, 5)),
    "_scaled_dot_product_cudnn_attention": (None, None, ()),
    "_scaled_dot_product_fused_attention_overrideable": (None, None, ()),
}


def resolve(attention_math: Optional[bool], exports: Optional[Set[str]],
            on_cuda: bool) -> Tuple[bool, Optional[str]]:
    """(export with math?, note or None)."""
    if attention_math is not None:
        return bool(attention_math), None
    if not on_cuda:
        return True, None  # CPU programs: the CPU fused ops have no shim
    if exports is not None:
        missing = [n for n in FUSED_SHIMS if n not in exports]
        if missing:
            return True, ("attention: the shim library does not export "
                          f"{', '.join(missing)}; SDPA exported with the "
                          "math decomposition (bmm + softmax)")
    return False, None


@contextlib.contextmanager
def attention_context(math: bool):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    if math:
        # bmm + softmax: no fused attention shims needed.
        with sdpa_kernel(SDPBackend.MATH):
            yield
        return
    with sdpa_kernel([SDPBackend.FLASH_ATTENTION,
                      SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        yield


def _val(a):
    return getattr(a, "meta", {}).get("val") if a is not None else None


def _op_name(target) -> Optional[str]:
    name = getattr(target, "__name__", "")  # "_scaled_dot_product_...default"
    base = name.split(".")[0]
    ns = getattr(target, "namespace", None)
    return base if base in _OPS and ns == "aten" else None


def uncovered_calls(graph_or_module,
                    exports: Optional[Set[str]] = None) -> List[str]:
    """Reasons, one per fused attention call the shim would not run (empty
    when every call is covered). Takes an fx Graph, a GraphModule or an
    ExportedProgram (its subgraphs included)."""
    g = graph_or_module
    if hasattr(g, "graph_module"):
        g = g.graph_module
    modules = list(g.modules()) if hasattr(g, "modules") else [g]
    reasons = []
    for m in modules:
        graph = getattr(m, "graph", m)
        if not hasattr(graph, "nodes"):
            continue
        for node in graph.nodes:
            if node.op != "call_function":
                continue
            base = _op_name(node.target)
            if base is None:
                continue
            r = _reason(base, node, exports)
            if r:
                reasons.append(f"{node.name} ({base}): {r}")
    return reasons


def _reason(base: str, node, exports) -> Optional[str]:
    shim, drop_i, falsy = _OPS[base]
    if shim is None:
        return "no aotrun shim"
    if exports is not None and shim not in exports:
        return f"the shim library does not export {shim}"
    args = list(node.args)
    kw = dict(node.kwargs)
    p = args[drop_i] if drop_i < len(args) else kw.get("dropout_p", 0.0)
    if not isinstance(p, (int, float)) or p != 0:
        return f"dropout_p={p} (aotrun attention has no dropout)"
    for i in falsy:
        if i < len(args) and args[i] not in (None, False, 0):
            return f"argument {i} ({args[i]}) is not supported"
    for name in ("return_debug_mask", "cum_seq_q", "cum_seq_k",
                 "cu_seqlens_q", "cu_seqlens_k", "seqlen_k", "seqused_k",
                 "alibi_slopes"):
        if kw.get(name) not in (None, False, 0):
            return f"{name} is not supported"
    q, k, v = (_val(a) for a in args[:3])
    if q is None or v is None:
        return None  # no shapes recorded: trust the shim's own checks
    import torch
    if q.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        return f"dtype {q.dtype}"
    d, dv = q.shape[-1], v.shape[-1]
    if isinstance(d, int) and d > MAX_HEAD_DIM:
        return f"head dim {d} > {MAX_HEAD_DIM}"
    if isinstance(d, int) and isinstance(dv, int) and d != dv:
        return f"value head dim {dv} != query head dim {d}"
    return None


def on_cuda(fn, args, kwargs) -> bool:
    """True when a tensor of the example inputs, or a parameter / buffer of
    the module (or the ExportedProgram's state), is on a CUDA device."""
    import torch
    from torch.utils._pytree import tree_leaves

    def cuda(t):
        return isinstance(t, torch.Tensor) and t.device.type == "cuda"
    if any(cuda(t) for t in tree_leaves((args, kwargs or {}))):
        return True
    if isinstance(fn, torch.export.ExportedProgram):
        if any(cuda(t) for t in fn.state_dict.values()):
            return True
        for n in fn.graph.nodes:
            if n.op == "placeholder" and cuda(n.meta.get("val")):
                return True
        return False
    owner = fn if isinstance(fn, torch.nn.Module) else getattr(
        fn, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        return any(cuda(t) for t in list(owner.parameters()) +
                   list(owner.buffers()))
    return False


def fused_shims_in(exports: Iterable[str]) -> List[str]:
    return [n for n in FUSED_SHIMS if n in set(exports)]
